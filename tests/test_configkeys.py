"""Config keys render would skip though they look meant for it: refused, naming the key, its line and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.configkeys import stray
from components.errors import ConfigError
from components.validation import resolve_file

CLUSTER = "  gpu-training:cluster: {provider: existing, name: train}\n"


@pytest.mark.parametrize(
    ("key", "meant"),
    [
        ("gpu-trainig:jobs", "gpu-training:jobs"),
        ("gpu_training:jobs", "gpu-training:jobs"),
        ("jobs", "gpu-training:jobs"),
    ],
)
def test_a_misspelt_or_missing_namespace_is_refused_at_its_line(tmp_path: Path, key: str, meant: str) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(f"config:\n{CLUSTER}  {key}: []\n")
    with pytest.raises(ConfigError) as caught:
        resolve_file(path)
    assert str(caught.value).startswith(f"{path}:3: {key}: ")
    assert f"did you mean '{meant}'?" in str(caught.value)


def test_other_projects_and_providers_keys_are_left_alone() -> None:
    assert stray(["aws:region", "gcp:project", "kubernetes:context", "gpu-training:jobs", "workloads:team"]) == []
