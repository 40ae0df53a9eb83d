"""Where the stack's images come from: a registry mirror for all of them, and the images no other key names."""

from __future__ import annotations

from pydantic import Field, field_validator

from components import images
from components.models.base import ImageRef, Spec


class ImagesSpec(Spec):
    """The images every pod the stack runs pulls: through a registry mirror, and the kubectl image of its checks."""

    registry_mirror: str | dict[str, str] | None = None
    """Pull every image through a mirror (air-gapped clusters, pull-through caches, Docker Hub's rate limits). A
    prefix (`mirror.example.com`, `harbor.example.com/proxy`) takes every registry's images with their host kept
    in the path: `nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04` becomes
    `mirror.example.com/nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04`. A map from upstream registry to
    prefix (an ECR pull-through cache's or Harbor's proxy project per upstream, an Artifact Registry remote
    repository per upstream) replaces the host: `{docker.io: 123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub}`
    makes `alpine/k8s:1.34.1` `123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub/alpine/k8s:1.34.1` (Docker
    Hub's official images get their `library/`); the key `*` takes every other registry, its host kept. A
    registry the map does not name keeps its images. It applies to the stack's own pods, the jobs' images, every
    per-image override, and the Helm charts' images through each chart's values (docs/addons.md, Images and mirrors).
    Default: none, every image from its upstream registry."""
    kubectl: ImageRef | None = Field(default=None, min_length=1)
    """The kubectl image (with a POSIX shell) of the node check's verdict and the fabric check's scale-up
    watcher; the mirror applies to it too. Default: `docker.io/alpine/k8s:1.34.1`."""

    @field_validator("registry_mirror")
    @classmethod
    def _mirror(cls, value: str | dict[str, str] | None) -> str | dict[str, str] | None:
        if value is None:
            return None
        if isinstance(value, str):
            return images.normalize_prefix(value)
        if not value:
            raise ValueError("an empty map mirrors nothing: name registries, or drop registryMirror")
        out: dict[str, str] = {}
        for registry, prefix in value.items():
            key = images.normalize_registry(registry)
            if key != images.ANY_REGISTRY and not images.is_host(key):
                raise ValueError(f"{registry!r} is no registry host (e.g. docker.io, nvcr.io, or * for any other)")
            if key in out:
                raise ValueError(f"{registry!r} is named twice (Docker Hub's aliases are one registry)")
            out[key] = images.normalize_prefix(prefix)
        return out

    @property
    def mirror(self) -> dict[str, str]:
        """The mirror as a map, a single prefix under `*`; empty when there is none."""
        value = self.registry_mirror
        if value is None:
            return {}
        return {images.ANY_REGISTRY: value} if isinstance(value, str) else dict(value)
