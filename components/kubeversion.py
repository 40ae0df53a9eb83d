"""Kubernetes and GKE version strings as numbers that compare in order: pure, standard library only."""

from __future__ import annotations

import re


def version_numbers(version: str) -> tuple[int, ...]:
    """A Kubernetes minor ("1.35") or GKE version ("1.35.1-gke.1396000") as numbers that compare in order."""
    return tuple(int(part) for part in re.findall(r"[0-9]+", version))


def minor(version: str) -> tuple[int, ...]:
    """The major and minor of a version ("1.35.1-gke.1396000" -> (1, 35))."""
    return version_numbers(version)[:2]
