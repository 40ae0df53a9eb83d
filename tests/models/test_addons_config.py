"""The addons key: whether the stack installs its add-ons, as a stack file states it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import load_stack_file, parse_stack
from components.errors import ConfigError
from components.models import AddonsSpec, StackConfig

CLUSTER = {"provider": "existing", "name": "train-dev"}


def test_the_stack_installs_its_add_ons_unless_told_otherwise() -> None:
    assert AddonsSpec().install is True
    assert parse_stack({"cluster": CLUSTER}).addons == AddonsSpec(install=True)
    assert AddonsSpec().to_config() == {"install": True}


def test_install_false_is_read_from_the_stack_config() -> None:
    config = parse_stack({"cluster": CLUSTER, "addons": {"install": False}})
    assert config.addons.install is False
    assert "addons" in StackConfig.config_keys()


def write(tmp_path: Path, addons: Any) -> Path:
    path = tmp_path / "Pulumi.dev.yaml"
    config = {"gpu-training:cluster": CLUSTER, "gpu-training:addons": addons}
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("addons", "path", "message"),
    [
        ({"install": "maybe"}, "addons.install", "must be a valid boolean"),
        ({"install": None}, "addons.install", "must be a valid boolean (got null)"),
        ({"install": [True]}, "addons.install", "must be a valid boolean"),
        ({"instal": False}, "addons.instal", "unknown key 'instal'; did you mean 'install'?"),
        (False, "addons", "must be a valid dictionary"),
    ],
)
def test_a_bad_value_names_its_key_and_line(tmp_path: Path, addons: Any, path: str, message: str) -> None:
    file = write(tmp_path, addons)
    with pytest.raises(ConfigError) as caught:
        load_stack_file(file)
    (issue,) = caught.value.issues
    assert (issue.path, issue.source) == (path, str(file))
    assert message in issue.message
    assert issue.line is not None and path.rsplit(".", 1)[-1] in file.read_text().splitlines()[issue.line - 1]
    assert str(caught.value).startswith(f"{file}:{issue.line}: {path}: ")
