"""The pure core imports neither Pulumi nor any cloud SDK."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PURE = [
    "components.models",
    "components.catalog",
    "components.fabric",
    "components.pool",
    "components.poolrules",
    "components.podnetworks",
    "components.providers",
    "components.kubeversion",
    "components.config",
    "components.stackfile",
    "components.yamlstrict",
    "components.validation",
    "components.identity",
    "components.manifests.serviceaccount",
    "components.manifests.platform",
    "components.manifests.trainingjob",
    "components.render",
    "components.throughput",
    "components.manifests.storage",
    "components.observability.objects",
    "components.observability.gke",
    "components.cli",
    "components.aws.network",
    "components.aws.nodegroup",
    "components.aws.kubeconfig",
    "components.aws.iam",
    "components.aws.pools",
    "components.gcp.nodepool",
    "components.gcp.kubeconfig",
    "components.gcp.filesystems",
    "components.gcp.pools",
    "components.existing.pools",
]


def test_the_pure_core_imports_no_pulumi() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in PURE)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pulumi', 'pulumi_kubernetes', 'pulumi_aws', 'pulumi_gcp', 'boto3', 'google'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
