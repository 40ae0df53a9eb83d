"""ExistingCluster: a provider from the stack's kubeconfig (kept secret) or a context; nothing cloud-side."""

from __future__ import annotations

from components.existing import ExistingCluster
from components.models import ExistingClusterSpec
from tests.support.pulumi_mocks import RecordingMonitor, resolved, run

KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n"


def test_a_kubeconfig_from_config_stays_secret(pulumi_mocks: RecordingMonitor) -> None:
    spec = ExistingClusterSpec(provider="existing", name="lab", kubeconfig=KUBECONFIG)
    cluster = run(lambda: ExistingCluster("lab", spec))
    value, secret = resolved(cluster.kubeconfig)
    assert (value, secret) == (KUBECONFIG, True)
    (provider,) = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    assert provider.parent == pulumi_mocks.named("lab").urn
    assert provider.inputs["enableServerSideApply"] == "true"
    assert [r.type for r in pulumi_mocks.registrations] == [
        "gpu-training:index:ExistingCluster",
        "pulumi:providers:kubernetes",
    ]


def test_a_context_of_the_ambient_kubeconfig(pulumi_mocks: RecordingMonitor) -> None:
    spec = ExistingClusterSpec(provider="existing", name="lab", context="lab-admin")
    cluster = run(lambda: ExistingCluster("lab", spec))
    (provider,) = pulumi_mocks.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["context"] == "lab-admin" and "kubeconfig" not in provider.inputs
    assert cluster.node_pools == {}
