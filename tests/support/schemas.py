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

from tests.support import cel

REPO = Path(__file__).resolve().parents[2]
CRDS = Path(os.environ.get("GPU_TRAINING_CRD_SCHEMAS", REPO.parent / "shared" / "schemas" / "crds"))
KUBERNETES_VERSION = "1.31"


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
    if not CRDS.is_dir():
        pytest.skip(f"CRD schemas not found at {CRDS} (set GPU_TRAINING_CRD_SCHEMAS or clone beside ../shared)")
    if not path.is_file():
        return [f"no CRD schema for {obj['apiVersion']} {obj['kind']} at {path}"]
    found = [
        f"{obj['kind']}/{obj['metadata'].get('name')}: {'.'.join(str(p) for p in e.absolute_path)}: {e.message[:300]}"
        for e in _crd_validator(path).iter_errors(obj)
    ]
    return found + cel.violations(crd_schema(path), obj, source=str(path.relative_to(CRDS)))


def unevaluated_rules() -> list[tuple[str, str, str, str]]:
    """Every (schema file, schema location, CEL rule, reason) this process met but could not evaluate."""
    return cel.unevaluated_rules()


def assert_valid(*objects: dict[str, Any]) -> None:
    """Fail with every violation when any object does not validate against its schema."""
    found = [e for obj in objects for e in errors(obj)]
    assert not found, "\n".join(found)
