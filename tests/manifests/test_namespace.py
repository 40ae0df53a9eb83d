"""Tests for Namespaces and their GPU ResourceQuotas."""

from __future__ import annotations

import pytest

from components.manifests.namespace import gpu_quota, namespace
from tests.support.schemas import assert_valid


def test_namespace() -> None:
    obj = namespace("training")
    assert (obj["apiVersion"], obj["kind"], obj["metadata"]["name"]) == ("v1", "Namespace", "training")
    assert "namespace" not in obj["metadata"]
    assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpu-training"
    assert_valid(obj)


def test_gpu_quota_caps_gpu_requests_in_its_namespace() -> None:
    obj = gpu_quota("research", 16)
    assert (obj["apiVersion"], obj["kind"]) == ("v1", "ResourceQuota")
    assert obj["metadata"]["namespace"] == "research"
    assert obj["spec"]["hard"] == {"requests.nvidia.com/gpu": "16"}


@pytest.mark.parametrize("gpus", [0, 1, 64])
def test_gpu_quota_validates(gpus: int) -> None:
    obj = gpu_quota("training", gpus)
    assert obj["spec"]["hard"]["requests.nvidia.com/gpu"] == str(gpus)
    assert_valid(obj)
