"""Policy configuration, in the shape `pulumi preview --policy-pack-config` takes, read into Settings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components import quantity
from components.errors import ConfigError
from components.rules.rule import DEFAULT_MIN_SHM, PRIVILEGED_NAMESPACES, Settings

LEVELS = ("mandatory", "advisory", "disabled")
# Which rule's config carries each setting (the pack declares them in that policy's config schema).
ALLOWED_REGISTRIES = ("pinned-images", "allowedRegistries")
REQUIRE_PINNED = ("pinned-images", "requirePinned")
MIN_SHM = ("shared-memory", "minShmSize")
ALLOW_HOST_NETWORK = ("host-namespaces", "allowHostNetwork")
PRIVILEGED_EXEMPT = ("privileged-containers", "exemptNamespaces")
PRODUCTION = ("nccl-debug-production", "production")


def settings(config: Mapping[str, Any] | None = None, **known: Any) -> Settings:
    """Settings from policy config ({rule: {enforcementLevel, ...}}) and what is known about the stack."""
    from components.rules import RULES

    config = dict(config or {})
    ids = {r.id for r in RULES}
    enforcement: dict[str, Any] = {}
    for rule, value in config.items():
        if rule not in ids and rule != "all":
            raise ConfigError(f"unknown policy '{rule}'; policies: {', '.join(sorted(ids))}", path="policy config")
        level = value if isinstance(value, str) else (value or {}).get("enforcementLevel")
        if level is None:
            continue
        if level not in LEVELS:
            raise ConfigError(f"{rule}: enforcementLevel must be one of {', '.join(LEVELS)}", path="policy config")
        for target in ids if rule == "all" else [rule]:
            enforcement.setdefault(target, level) if rule == "all" else enforcement.__setitem__(target, level)

    def option(where: tuple[str, str], default: Any) -> Any:
        section = config.get(where[0])
        return section.get(where[1], default) if isinstance(section, Mapping) else default

    values: dict[str, Any] = {
        "allowed_registries": tuple(option(ALLOWED_REGISTRIES, ())),
        "require_pinned_images": bool(option(REQUIRE_PINNED, False)),
        "min_shm": str(option(MIN_SHM, DEFAULT_MIN_SHM)),
        "allow_host_network": bool(option(ALLOW_HOST_NETWORK, False)),
        "privileged_namespaces": _namespaces(option(PRIVILEGED_EXEMPT, PRIVILEGED_NAMESPACES)),
        "production": bool(option(PRODUCTION, False)),
        "enforcement": enforcement,
    }
    values.update({k: v for k, v in known.items() if v is not None})
    try:
        quantity.parse(values["min_shm"])
    except ValueError as exc:
        raise ConfigError(str(exc), path=f"{MIN_SHM[0]}.{MIN_SHM[1]}") from None
    return Settings(**values)


def _namespaces(value: Any) -> tuple[str, ...]:
    """The exempt namespaces of the policy config: a list of names (it replaces the default list)."""
    if not isinstance(value, list | tuple) or not all(isinstance(n, str) and n for n in value):
        raise ConfigError(
            f"must be a list of namespace names, such as {list(PRIVILEGED_NAMESPACES)}",
            path=f"{PRIVILEGED_EXEMPT[0]}.{PRIVILEGED_EXEMPT[1]}",
        )
    return tuple(value)
