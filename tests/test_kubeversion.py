"""Kubernetes and GKE versions as numbers (components/kubeversion.py)."""

from __future__ import annotations

from components.kubeversion import minor, version_numbers


def test_a_gke_version_compares_by_its_numbers_and_its_minor_is_the_first_two() -> None:
    assert version_numbers("1.35.1-gke.1396000") == (1, 35, 1, 1396000)
    assert version_numbers("v1.30.2") < version_numbers("v1.31.0")
    assert minor("1.34.1-gke.1829001") == minor("1.34") == (1, 34)
