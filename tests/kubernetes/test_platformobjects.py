"""PlatformObjects under Pulumi mocks: namespaces first, data kept and protected."""

from __future__ import annotations

from components.config import parse_stack
from components.kubernetes.platformobjects import PlatformObjects
from components.manifests import platform
from components.manifests.meta import key
from components.resolution import resolve
from tests.support.pulumi_mocks import RecordingMonitor, run
from tests.test_config import BASE


def test_registers_every_platform_object(pulumi_mocks: RecordingMonitor) -> None:
    stack = resolve(parse_stack(BASE))
    run(lambda: PlatformObjects("platform", stack))
    registered = {(r.inputs.get("kind"), r.inputs.get("metadata", {}).get("name")) for r in pulumi_mocks.registrations}
    for obj in platform.objects(stack):
        assert (obj["kind"], obj["metadata"]["name"]) in registered
    component = pulumi_mocks.named("platform")
    assert pulumi_mocks.outputs(component.urn) == {"objects": [key(o) for o in platform.objects(stack)]}


def test_claims_are_protected_and_kept_and_namespaced_objects_wait_for_their_namespace(
    pulumi_mocks: RecordingMonitor,
) -> None:
    stack = resolve(parse_stack(BASE))
    run(lambda: PlatformObjects("platform", stack))
    claim = pulumi_mocks.named("persistentvolumeclaim-training-training-checkpoints")
    assert claim.protect and claim.retain_on_delete
    storage_class = pulumi_mocks.named("storageclass-nfs-training-training-checkpoints")
    assert storage_class.retain_on_delete and storage_class.inputs["reclaimPolicy"] == "Retain"
    namespace = pulumi_mocks.named("namespace-training")
    assert namespace.retain_on_delete, "a namespace holding claims would delete them with it"
    assert claim.dependencies == [namespace.urn]
    nad = pulumi_mocks.named("networkattachmentdefinition-training-roce-network")
    assert nad.dependencies == [namespace.urn] and not nad.protect and not nad.retain_on_delete
