"""promtool, built from its pinned Go module (components/simulate/engines.py PROMTOOL), and what the tests run it on.

`expand` renders the subset of Go's text/template the pack's annotations use ({{ $labels.x }}, {{ $value }},
{{ with $labels.x }}...{{ . }}...{{ end }}), so a unit test can state the annotations an alert must carry; promtool then
checks them against what Prometheus itself renders.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from components.simulate import engines


def binary() -> Path:
    """promtool, built into the engine cache on first use; the test skips without Go (fails in CI)."""
    reason = None
    if shutil.which("go") is None:
        reason = "promtool is built from its Go module with Go >= 1.26, and no `go` is on PATH"
    else:
        try:
            return engines.build(engines.PROMTOOL)["promtool"]
        except engines.BuildError as exc:
            reason = f"could not build promtool: {exc}"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)
    raise AssertionError("unreachable")


def run(promtool: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """promtool with `args`; its output in the result."""
    return subprocess.run([str(promtool), *args], capture_output=True, text=True, check=False, timeout=300)


_WITH = re.compile(r"\{\{ with \$labels\.(\w+) \}\}(.*?)\{\{ end \}\}", re.S)
_LABEL = re.compile(r"\{\{ \$labels\.(\w+) \}\}")


def expand(template: str, labels: dict[str, str], value: float) -> str:
    """The annotation Prometheus renders from `template` for an alert with `labels` and `value`."""

    def with_block(match: re.Match[str]) -> str:
        bound = labels.get(match.group(1), "")
        return match.group(2).replace("{{ . }}", bound) if bound else ""

    text = _WITH.sub(with_block, template)
    text = _LABEL.sub(lambda m: labels.get(m.group(1), ""), text)
    return text.replace("{{ $value }}", f"{value:g}")


def alert_test(alert: dict[str, Any], labels: dict[str, str], value: float) -> dict[str, Any]:
    """promtool's `exp_alerts` entry for `alert` (a rule) firing with `labels` and `value`."""
    return {
        "exp_labels": {**labels, **alert["labels"]},
        "exp_annotations": {k: expand(v, labels, value) for k, v in alert["annotations"].items()},
    }
