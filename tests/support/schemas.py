"""Validate emitted objects: core kinds with kubernetes-validate (strict), custom resources with their CRD schema.

A custom resource is checked against the JSON schema and then against the schema's CEL rules
(`x-kubernetes-validations`, see tests/support/cel.py); rules the evaluator cannot run are listed by
`unevaluated_rules()` rather than failing the object.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from components.models.cluster import DEFAULT_KUBERNETES_VERSION
from tests.support import cel

REPO = Path(__file__).resolve().parents[2]
CRDS = Path(os.environ.get("GPU_TRAINING_CRD_SCHEMAS", REPO.parent / "shared" / "schemas" / "crds"))
CRDS_MISSING = f"CRD schemas not found at {CRDS} (set GPU_TRAINING_CRD_SCHEMAS or clone beside ../shared)"
"""Why a test that needs ../shared's CRD schemas skips in a clone without them."""
KUBERNETES_VERSION = DEFAULT_KUBERNETES_VERSION
"""Core kinds validate against the minor every provider defaults to, which every stack runs."""


def crd_schema_path(obj: dict[str, Any]) -> Path | None:
    """The CRD schema file of a custom resource (kubeconform layout), or None for a core kind."""
    group, _, version = obj["apiVersion"].rpartition("/")
    if "." not in group or group in _CORE_GROUPS:
        return None
    return CRDS / group / f"{obj['kind'].lower()}_{version}.json"


_CORE_GROUPS = {
    "storage.k8s.io",
    "scheduling.k8s.io",
    "rbac.authorization.k8s.io",
    "networking.k8s.io",
    "resource.k8s.io",
}
# Kinds newer than KUBERNETES_VERSION, checked at the first version that serves them (a stack using one
# must run that version: the GKE managed-RDMA pools that need resource.k8s.io/v1 require GKE 1.34).
_FIRST_SERVED = {"resource.k8s.io/v1": "1.34"}


@functools.cache
def crd_schema(path: Path) -> dict[str, Any]:
    """The parsed JSON schema of one CRD version (read once per process)."""
    return json.loads(path.read_text())


@functools.cache
def _crd_validator(path: Path) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(crd_schema(path))


def errors(obj: dict[str, Any], version: str = KUBERNETES_VERSION) -> list[str]:
    """Every schema violation of one object (empty when it is valid)."""
    path = crd_schema_path(obj)
    if path is None:
        version = max(
            version, _FIRST_SERVED.get(obj["apiVersion"], version), key=lambda v: tuple(map(int, v.split(".")))
        )
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path)
            return [f"{obj['kind']}/{obj['metadata'].get('name')}: {where}: {exc.message}"]
        return []
    if from_module(obj):
        schema, source = module_schema(obj["apiVersion"], obj["kind"])
        validator = jsonschema.Draft202012Validator(schema)
    else:
        if not CRDS.is_dir():
            pytest.skip(CRDS_MISSING)
        if not path.is_file():
            return [f"no CRD schema for {obj['apiVersion']} {obj['kind']} at {path}"]
        schema, source, validator = crd_schema(path), str(path.relative_to(CRDS)), _crd_validator(path)
    found = [
        f"{obj['kind']}/{obj['metadata'].get('name')}: {'.'.join(str(p) for p in e.absolute_path)}: {e.message[:300]}"
        for e in validator.iter_errors(obj)
    ]
    return found + cel.violations(schema, obj, source=source)


MODULE_GROUPS = {"resource.nvidia.com", "monitoring.coreos.com"}
"""API groups whose CRDs ../shared/schemas does not hold: read from the add-on's pinned Go module at test time
(components/simulate/crds.py SOURCES), as `simulate` installs them."""
MODULE_KINDS = {
    ("kueue.x-k8s.io", "AdmissionCheck"),
    ("kueue.x-k8s.io", "ProvisioningRequestConfig"),
    ("kueue.x-k8s.io", "MultiKueueCluster"),
    ("kueue.x-k8s.io", "MultiKueueConfig"),
}
"""Kinds of groups ../shared/schemas holds whose own schemas it does not: read from the pinned module likewise."""


def from_module(obj: dict[str, Any]) -> bool:
    """Whether an object's schema comes from its add-on's pinned Go module rather than ../shared/schemas."""
    group = obj["apiVersion"].rpartition("/")[0]
    return group in MODULE_GROUPS or (group, obj["kind"]) in MODULE_KINDS


@functools.cache
def module_schema(api_version: str, kind: str) -> tuple[dict[str, Any], str]:
    """The strict JSON schema of one custom resource version, from its CRD in the pinned Go module, and where it
    came from; skips when Go or the module proxy is out of reach (a user's clone without Go)."""
    from components.simulate import crds, engines

    group, _, version = api_version.rpartition("/")
    try:
        definitions = list(crds.definitions(group))
    except (engines.BuildError, OSError) as exc:
        pytest.skip(f"the {group} CRDs come from their Go module, which could not be read: {exc}")
    for crd in definitions:
        spec = crd["spec"]
        if spec["group"] != group or spec["names"]["kind"] != kind:
            continue
        for served in spec["versions"]:
            if served["name"] == version:
                return _strict(served["schema"]["openAPIV3Schema"]), f"{crd['metadata']['name']} {version}"
    raise AssertionError(f"no CRD of {group} serves {kind} {version}")


def _strict(schema: Any) -> Any:
    """An openAPIV3Schema as a JSON schema that refuses unknown fields, as the API server prunes them (kubeconform's
    strict layout, which ../shared/schemas uses)."""
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _strict(value) for key, value in schema.items()}
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if out.pop("nullable", False) and "type" in out:
        out["type"] = [out["type"], "null"]
    pattern = out.get("pattern")
    if isinstance(pattern, str) and pattern.startswith("^(?i)"):
        # Go's RE2 takes flags anywhere (Kueue's AdmissionCheck kind: `^(?i)[a-z]...`); Python only at the start.
        out["pattern"] = f"(?i)^{pattern[5:]}"
    return out


def unevaluated_rules() -> list[tuple[str, str, str, str]]:
    """Every (schema file, schema location, CEL rule, reason) this process met but could not evaluate."""
    return cel.unevaluated_rules()


def assert_valid(*objects: dict[str, Any]) -> None:
    """Fail with every violation when any object does not validate against its schema."""
    found = [e for obj in objects for e in errors(obj)]
    assert not found, "\n".join(found)


# --- what server-side apply types strictly -----------------------------------------------------

_QUANTITY_REF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_QUANTITY_PATTERN = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]"
"""How a CRD's schema spells a resource.Quantity (controller-gen: int-or-string with this pattern)."""
_DEFS = "#/$defs/"


@functools.cache
def _core_schema(api_version: str, kind: str, version: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A core kind's strict schema and the definitions it refers to, as kubernetes-validate bundles them."""
    from kubernetes_validate import utils

    served = [v for v in utils.all_versions() if utils.major_minor(v) <= version][-1]
    folder = f"kubernetes-json-schema/v{served}-local-strict"
    group = api_version.rpartition("/")[0].split(".")[0] if "/" in api_version else ""
    name = f"{kind.lower()}-{group + '-' if group else ''}{api_version.rpartition('/')[2]}.json"
    try:
        schema = utils.schema_contents(f"{folder}/{name}", version)
    except FileNotFoundError:
        return None
    return schema, utils.schema_contents(f"{folder}/_definitions.json", version)["$defs"]


def _is_quantity(schema: dict[str, Any]) -> bool:
    if str(schema.get("$ref", "")).endswith(_DEFS + _QUANTITY_REF):
        return True
    return bool(schema.get("x-kubernetes-int-or-string")) and str(schema.get("pattern", "")).startswith(
        _QUANTITY_PATTERN
    )


def _hazards(schema: dict[str, Any], value: Any, path: str, defs: dict[str, Any], out: set[str]) -> None:
    if _is_quantity(schema):
        if not isinstance(value, str):
            out.add(f"{path}: the quantity {value!r} is a number; write it as the string '{value}'")
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and _DEFS in ref:
        _hazards(defs[ref.rpartition(_DEFS)[2]], value, path, defs, out)
        return
    for combinator in ("allOf", "anyOf", "oneOf"):
        for alternative in schema.get(combinator) or []:
            _hazards(alternative, value, path, defs, out)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        if "protocol" in properties and {"port", "containerPort"} & properties.keys() and "protocol" not in value:
            out.add(f"{path}: a port without its protocol; state it (protocol: TCP)")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            found = properties.get(key, extra if isinstance(extra, dict) else None)
            if found is not None:
                _hazards(found, item, f"{path}.{key}", defs, out)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _hazards(schema["items"], item, f"{path}[{index}]", defs, out)


def apply_hazards(obj: dict[str, Any], version: str = KUBERNETES_VERSION) -> list[str]:
    """What server-side apply on an older API server refuses in an object, found through its schema: a resource
    quantity that is a number rather than a string, a container or Service port that leaves its protocol out."""
    where = f"{obj['kind']}/{obj['metadata'].get('name')}"
    path = crd_schema_path(obj)
    if path is None:
        version = max(
            version, _FIRST_SERVED.get(obj["apiVersion"], version), key=lambda v: tuple(map(int, v.split(".")))
        )
        found = _core_schema(obj["apiVersion"], obj["kind"], version)
        if found is None:
            return [f"{where}: no schema for {obj['apiVersion']} {obj['kind']}, so its fields cannot be judged"]
        schema, defs = found
    elif from_module(obj):
        schema, defs = module_schema(obj["apiVersion"], obj["kind"])[0], {}
    else:
        if not CRDS.is_dir():
            pytest.skip(CRDS_MISSING)
        if not path.is_file():
            return [f"{where}: no CRD schema for {obj['apiVersion']} {obj['kind']} at {path}"]
        schema, defs = crd_schema(path), {}
    out: set[str] = set()
    _hazards(schema, obj, where, defs, out)
    return sorted(out)
