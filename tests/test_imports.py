"""Each cloud SDK is imported only by its own stacks: a GKE or existing-cluster stack never loads pulumi_aws."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
STACKS = sorted(REPO.glob("Pulumi.*.yaml"))
SDKS = {"aws": "pulumi_aws", "gcp": "pulumi_gcp"}

# Runs the program of one stack file under Pulumi's mocks in a fresh interpreter, then prints
# which cloud SDKs got imported.
PROGRAM = """
import json, sys
from pathlib import Path
import pulumi, yaml
from tests.support.pulumi_mocks import RecordingMocks, RecordingMonitor, run, use_stack
mocks = RecordingMocks()
monitor = RecordingMonitor(mocks)
use_stack(monitor, Path(sys.argv[1]))
import stacks
run(lambda: stacks.run(stacks.load()))
print(json.dumps(sorted({m.split('.')[0] for m in sys.modules if m.startswith(('pulumi_aws', 'pulumi_gcp'))})))
"""


@pytest.mark.parametrize("stack_file", STACKS, ids=lambda p: p.name)
def test_a_stack_imports_only_its_own_cloud_sdk(stack_file: Path) -> None:
    provider = yaml.safe_load(stack_file.read_text())["config"]["gpu-training:cluster"]["provider"]
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(stack_file)], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    imported = set(yaml.safe_load(result.stdout.strip().splitlines()[-1]))
    assert imported == ({SDKS[provider]} if provider in SDKS else set())
