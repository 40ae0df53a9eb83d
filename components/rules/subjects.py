"""Subjects for the rules: from Kubernetes objects, from a validated stack, and from a preview's resources."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components.manifests.meta import key
from components.pool import Pool
from components.rules.rule import Subject

# Pulumi resource types of the clouds' GPU pools and file systems, as a preview names them.
AWS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AWS_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
FILE_SYSTEMS = (
    "aws:efs/fileSystem:FileSystem",
    "aws:fsx/lustreFileSystem:LustreFileSystem",
    "gcp:filestore/instance:Instance",
)


def from_objects(objects: Iterable[Mapping[str, Any]]) -> list[Subject]:
    """A subject per Kubernetes object."""
    return [Subject(key(dict(o)), str(o.get("kind")), dict(o)) for o in objects if o.get("kind") and o.get("metadata")]


def from_pools(pools: Iterable[Pool]) -> list[Subject]:
    """A NodePool subject per resolved pool (what the cloud side builds from it)."""
    return [
        Subject(
            f"NodePool/{p.name}",
            "NodePool",
            {
                "gpus": p.gpus_per_node,
                "taints": [t.model_dump() for t in p.taints],
                "efa": p.fabric == "efa",
                "placement_group": p.placement != "none",
                "zones": 1 if p.zone else None,
            },
        )
        for p in pools
        if p.provider != "existing"
    ]


def from_resources(resources: Iterable[Any]) -> list[Subject]:
    """Subjects from a preview's resources (objects with resource_type, props, urn, name, opts)."""
    resources = list(resources)
    templates = {r.urn: r.props for r in resources if r.resource_type == AWS_LAUNCH_TEMPLATE}
    by_id = {r.props.get("id"): r.props for r in resources if r.resource_type == AWS_LAUNCH_TEMPLATE}
    out: list[Subject] = []
    for r in resources:
        props = dict(r.props)
        if r.resource_type.startswith("kubernetes:") and props.get("kind") and props.get("metadata"):
            subject = from_objects([props])[0]
            out.append(Subject(subject.key, subject.kind, subject.data, r.urn))
            if subject.kind in ("PersistentVolumeClaim", "PersistentVolume"):
                out.append(
                    Subject(subject.key, "FileSystem", {"type": subject.kind, "protected": bool(r.opts.protect)}, r.urn)
                )
        elif r.resource_type == AWS_NODE_GROUP:
            template = _launch_template(props, r, templates, by_id)
            interfaces = template.get("networkInterfaces") or []
            out.append(
                Subject(
                    f"NodeGroup/{r.name}",
                    "NodePool",
                    {
                        "gpus": 1 if str(props.get("amiType", "")).endswith("NVIDIA") else 0,
                        "taints": props.get("taints") or [],
                        "efa": any(i.get("interfaceType") in ("efa", "efa-only") for i in interfaces),
                        "placement_group": bool((template.get("placement") or {}).get("groupName")),
                        "zones": len(props.get("subnetIds") or []) or None,
                    },
                    r.urn,
                )
            )
        elif r.resource_type == GKE_NODE_POOL:
            config = props.get("nodeConfig") or {}
            out.append(
                Subject(
                    f"NodePool/{r.name}",
                    "NodePool",
                    {
                        "gpus": sum(int(a.get("count", 0)) for a in config.get("guestAccelerators") or []),
                        "taints": config.get("taints") or [],
                        "efa": False,
                        "placement_group": True,
                        "zones": 1,
                    },
                    r.urn,
                )
            )
        elif r.resource_type in FILE_SYSTEMS:
            out.append(
                Subject(
                    f"{r.resource_type.rsplit(':', 1)[-1]}/{r.name}",
                    "FileSystem",
                    {"type": r.resource_type, "protected": bool(r.opts.protect)},
                    r.urn,
                )
            )
    return out


def _launch_template(props: dict[str, Any], resource: Any, templates: dict[str, Any], by_id: dict[Any, Any]) -> Any:
    wanted = (props.get("launchTemplate") or {}).get("id")
    if wanted in by_id:
        return by_id[wanted]
    # In a preview the id is unknown: the template is the one the node group depends on.
    for dependency in getattr(resource, "dependencies", []) or []:
        if dependency.urn in templates:
            return templates[dependency.urn]
    return {}
