"""The pure core imports neither Pulumi nor any cloud SDK: every module in the layers below the cloud shells
(pyproject.toml [tool.importlinter]) loads without them."""

from __future__ import annotations

import subprocess
import sys

from tests.support.layers import REPO, modules, pure

OFFLINE = ("components.cli",)
"""Above the shells, but `render` and `check` run without Pulumi installed too."""
PURE = [m for m in modules() if any(m == p or m.startswith(f"{p}.") for p in (*pure(), *OFFLINE))]


def test_the_pure_core_is_most_of_the_package() -> None:
    assert {"components.models", "components.catalog", "components.pool", "components.render"} <= set(PURE)
    assert "components.cli.check" in PURE and "components.platform" not in PURE and "components.aws.cluster" not in PURE
    assert len(PURE) > 100


def test_the_pure_core_imports_no_pulumi() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in PURE)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pulumi', 'pulumi_kubernetes', 'pulumi_aws', 'pulumi_gcp', 'boto3', 'google'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
