"""Volcano or Kueue, PriorityClasses, and the CSI drivers behind the volumes."""

from __future__ import annotations

from components.addons import scheduler, storage
from tests.addons.stacks import everything_aws, stack_file
from tests.support.schemas import assert_valid


def test_one_scheduler_at_a_time() -> None:
    dev, gke = stack_file("dev"), stack_file("gke")
    assert scheduler.volcano(dev).chart.version == "1.15.1" and scheduler.kueue(dev) is None
    assert (
        scheduler.kueue(gke).chart.chart == "oci://registry.k8s.io/kueue/charts/kueue"
        and scheduler.volcano(gke) is None
    )


def test_priority_classes() -> None:
    (high,) = scheduler.priority_classes(everything_aws())
    assert_valid(high)
    assert (high["metadata"]["name"], high["value"], high["preemptionPolicy"]) == (
        "training-high",
        1000,
        "PreemptLowerPriority",
    )


def test_csi_drivers_follow_the_backends() -> None:
    assert storage.nfs(stack_file("dev")).chart.chart == "csi-driver-nfs"
    prod = stack_file("prod")
    assert storage.fsx(prod).values == {"node": {"tolerateAllTaints": True}}
    assert storage.nfs(prod) is None and storage.efs(prod) is None
    efs = storage.efs(everything_aws(), "arn:aws:iam::1:role/efs-csi")
    account = efs.values["controller"]["serviceAccount"]
    assert account["annotations"] == {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/efs-csi"}
    assert account["name"] == "efs-csi-controller-sa"
    assert storage.fsx(stack_file("gke")) is None, "Filestore is a GKE add-on, no chart"
