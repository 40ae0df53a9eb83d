"""Image references and the stack's registry mirror: plain functions over image strings and manifests.

A reference is parsed as the distribution reference grammar does (github.com/distribution/reference): the first
path component is a registry host when it holds a '.' or a ':' or is `localhost`; otherwise the image is on Docker
Hub (`docker.io`), and a single-component name is an official image under `library/`.

A mirror maps an upstream registry to the prefix its images are pulled through: `docker.io:
123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub` turns `alpine/k8s:1.34.1` into
`123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub/alpine/k8s:1.34.1`. The key `*` stands for every other
registry and keeps the upstream host in the path (`nvcr.io/nvidia/dcgm:4` -> `<prefix>/nvcr.io/nvidia/dcgm:4`), but
for a host with a port or `localhost` (a local registry, whose host is no valid path component).
A registry the mirror does not name keeps its images unchanged, and so does an image already under a mirror's
prefix.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

DOCKER_HUB = "docker.io"
DOCKER_HUB_ALIASES = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io"})
ANY_REGISTRY = "*"
"""The mirror key that stands for every registry the mirror does not name."""
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_HOST = re.compile(rf"{_LABEL}(?:\.{_LABEL})*(?::[0-9]+)?")
POD_CONTAINER_KEYS = ("initContainers", "containers", "ephemeralContainers")

Mirror = Mapping[str, str]
"""Upstream registry (or `*`) -> the prefix its images are pulled through."""


@dataclass(frozen=True, slots=True)
class Reference:
    """An image reference split into its registry, repository path, tag and digest."""

    registry: str
    """The registry host (with its port), `docker.io` when the reference names none."""
    path: str
    """The repository path inside the registry (`library/ubuntu` for Docker Hub's official `ubuntu`)."""
    tag: str | None = None
    digest: str | None = None

    @property
    def name(self) -> str:
        """The full repository name, registry included."""
        return f"{self.registry}/{self.path}"

    def __str__(self) -> str:
        """The reference as written: name, then `:tag`, then `@digest`."""
        return self.name + (f":{self.tag}" if self.tag else "") + (f"@{self.digest}" if self.digest else "")


def is_host(component: str) -> bool:
    """Whether a reference's first path component is a registry host (the grammar's rule)."""
    return "." in component or ":" in component or component == "localhost"


def parse(image: str) -> Reference:
    """An image reference, its registry and Docker Hub's `library/` made explicit; ValueError when malformed."""
    rest, _, digest = image.partition("@")
    if "@" in image and not _DIGEST.fullmatch(digest):
        raise ValueError(f"{image!r}: malformed digest")
    name, tag = rest, None
    slash, colon = rest.rfind("/"), rest.rfind(":")
    if colon > slash:
        name, tag = rest[:colon], rest[colon + 1 :]
        if not _TAG.fullmatch(tag):
            raise ValueError(f"{image!r}: malformed tag {tag!r}")
    first, sep, remainder = name.partition("/")
    if sep and is_host(first):
        registry, path = first, remainder
        if not _HOST.fullmatch(registry):
            raise ValueError(f"{image!r}: malformed registry host {registry!r}")
    else:
        registry, path = DOCKER_HUB, name
    if registry in DOCKER_HUB_ALIASES:
        registry = DOCKER_HUB
        if "/" not in path:
            path = f"library/{path}"
    if not path or not all(_COMPONENT.fullmatch(part) for part in path.split("/")):
        raise ValueError(f"{image!r}: malformed repository path {path!r}")
    return Reference(registry, path, tag or None, digest or None)


def normalize_registry(registry: str) -> str:
    """A mirror key as the mirror compares it: Docker Hub's aliases are `docker.io`; hosts are lowercase."""
    registry = registry.strip().lower()
    return DOCKER_HUB if registry in DOCKER_HUB_ALIASES else registry


def normalize_prefix(prefix: str) -> str:
    """A mirror prefix without a scheme or trailing slash; ValueError when it is not `host[:port][/path]`."""
    bare = prefix.strip().rstrip("/")
    if "://" in bare:
        raise ValueError(f"{prefix!r}: a prefix names no scheme (drop {bare.split('://')[0]}://)")
    host, _, path = bare.partition("/")
    if not host or not _HOST.fullmatch(host) or not is_host(host):
        raise ValueError(f"{prefix!r}: a prefix starts with a registry host (a name with a '.' or a port)")
    if path and not all(_COMPONENT.fullmatch(part) for part in path.split("/")):
        raise ValueError(f"{prefix!r}: its path must be lowercase components separated by '/'")
    return bare


def prefix_for(mirror: Mirror, registry: str) -> str | None:
    """Where `registry`'s images are pulled through, or None when the mirror leaves them."""
    if registry in mirror:
        return mirror[registry]
    # A host with a port (localhost's above all) is a local registry, not an upstream, and no valid path component.
    if ANY_REGISTRY in mirror and ":" not in registry and registry != "localhost":
        return f"{mirror[ANY_REGISTRY]}/{registry}"
    return None


def mirrored(mirror: Mirror, image: str) -> bool:
    """Whether an image is already pulled through one of the mirror's prefixes."""
    return any(image.startswith(f"{prefix}/") for prefix in mirror.values())


def rewrite(mirror: Mirror, image: str) -> str:
    """The image as pulled through the mirror; unchanged when the mirror does not name its registry, when it is
    already under a mirror prefix, or when it is no image reference at all (a template placeholder)."""
    if not mirror or mirrored(mirror, image):
        return image
    try:
        ref = parse(image)
    except ValueError:
        return image
    prefix = prefix_for(mirror, ref.registry)
    if prefix is None:
        return image
    return str(Reference(prefix, ref.path, ref.tag, ref.digest))


def split(mirror: Mirror, registry: str, repository: str) -> tuple[str, str]:
    """A chart's `registry` and `repository` values pulled through the mirror (Docker Hub's official images get
    their `library/`); unchanged when the mirror leaves that registry."""
    if not mirror:
        return registry, repository
    ref = parse(f"{registry}/{repository}")
    prefix = prefix_for(mirror, ref.registry)
    return (prefix, ref.path) if prefix is not None else (registry, repository)


def pod_specs(obj: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec inside an object, at any depth (Deployments, Jobs, CronJobs, every operator's replicas,
    JobSets inside training runtimes): the mappings that hold a `containers` list."""
    if isinstance(obj, dict):
        if isinstance(obj.get("containers"), list):
            yield obj
        for value in obj.values():
            yield from pod_specs(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from pod_specs(value)


def images_of(obj: dict[str, Any]) -> list[str]:
    """Every image an object makes a node pull: its pods' containers, a TrainJob's trainer, a NicClusterPolicy's
    operands (`repository/image:version`)."""
    found = [
        c["image"]
        for spec in pod_specs(obj)
        for key in POD_CONTAINER_KEYS
        for c in spec.get(key) or []
        if isinstance(c, dict) and isinstance(c.get("image"), str)
    ]
    if obj.get("kind") == "TrainJob":
        image = (obj.get("spec", {}).get("trainer") or {}).get("image")
        if isinstance(image, str):
            found.append(image)
    if obj.get("kind") == "NicClusterPolicy":
        found += [f"{o['repository']}/{o['image']}:{o['version']}" for o in _operands(obj.get("spec", {}))]
    return found


def _operands(spec: Any) -> Iterator[dict[str, Any]]:
    """A NicClusterPolicy's operands: the mappings that name an image by repository, image and version."""
    if isinstance(spec, dict):
        if {"repository", "image", "version"} <= spec.keys():
            yield spec
        for value in spec.values():
            yield from _operands(value)


def mirror_object(mirror: Mirror, obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of the object with every image it makes a node pull rewritten through the mirror (the object
    itself when the mirror is empty)."""
    if not mirror:
        return obj
    out = copy.deepcopy(obj)
    for spec in pod_specs(out):
        for key in POD_CONTAINER_KEYS:
            for container in spec.get(key) or []:
                if isinstance(container, dict) and isinstance(container.get("image"), str):
                    container["image"] = rewrite(mirror, container["image"])
    if out.get("kind") == "TrainJob":
        trainer = out.get("spec", {}).get("trainer") or {}
        if isinstance(trainer.get("image"), str):
            trainer["image"] = rewrite(mirror, trainer["image"])
    if out.get("kind") == "NicClusterPolicy":
        for operand in _operands(out.get("spec", {})):
            rewritten = rewrite(mirror, f"{operand['repository']}/{operand['image']}")
            operand["repository"] = rewritten.rsplit("/", 1)[0]
    return out


def mirror_objects(mirror: Mirror, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every object with its images pulled through the mirror."""
    return [mirror_object(mirror, obj) for obj in objects] if mirror else objects
