"""NVSentinel on existing clusters: pinned, quarantine and eviction on, DCGM from the GPU Operator."""

from __future__ import annotations

from components.addons import nvsentinel
from components.addons.plan import plan
from components.render import render
from components.versions import NVSENTINEL
from tests.addons.stacks import stack_file


def test_an_existing_cluster_installs_nvsentinel_after_the_gpu_operator_with_standalone_dcgm() -> None:
    stack = stack_file("dev")
    releases = {r.name: r for r in plan(stack).releases}
    release = releases["nvsentinel"]
    assert release.chart is NVSENTINEL and release.chart.version == "v1.31.0" and release.namespace == "nvsentinel"
    assert release.needs == ("gpu-operator",)
    assert releases["gpu-operator"].values["dcgm"]["enabled"] is True, "the health monitor reads standalone DCGM"
    values = release.values
    assert values["global"]["faultQuarantine"] == {"enabled": True}
    assert values["global"]["nodeDrainer"] == {"enabled": True}
    assert values["gpu-health-monitor"]["dcgm"]["service"] == {"endpoint": "nvidia-dcgm.gpu-operator.svc", "port": 5555}


def test_the_training_namespaces_are_drained_by_eviction_and_nothing_reboots_by_default() -> None:
    stack = stack_file("dev")
    values = nvsentinel.release(stack).values
    rules = values["node-drainer"]["userNamespaces"]
    assert {r["name"]: r["mode"] for r in rules[:-1]} == dict.fromkeys(stack.namespaces, "Immediate")
    assert rules[-1] == {"name": "*", "mode": "AllowCompletion"}, "other namespaces keep NVSentinel's default"
    assert values["global"]["faultRemediation"] == {"enabled": False} and "janitor" not in values


def test_reboot_is_an_opt_in_through_the_generic_janitor() -> None:
    values = nvsentinel.release(stack_file("dev", health={"repair": {"reboot": True}})).values
    assert values["global"]["faultRemediation"] == {"enabled": True} == values["global"]["janitor"]
    assert values["janitor"] == {"csp": {"provider": "generic"}}


def test_the_labeler_assumes_the_driver_only_where_the_gpu_operator_does_not_run_it() -> None:
    assert nvsentinel.release(stack_file("dev")).values["labeler"] == {"assumeDriverInstalled": False}
    hosts = stack_file("dev", gpuOperator={"driver": False})
    assert nvsentinel.release(hosts).values["labeler"] == {"assumeDriverInstalled": True}


def test_nvsentinel_can_be_chosen_on_eks_and_off_means_no_release() -> None:
    eks = stack_file("prod", health={"repair": {"agent": "nvsentinel"}})
    assert nvsentinel.release(eks).values["labeler"] == {"assumeDriverInstalled": True}, "the EKS AMI brings it"
    assert nvsentinel.release(stack_file("dev", health={"repair": {"enabled": False}})) is None
    assert nvsentinel.release(stack_file("prod")) is None


def test_another_tool_installs_it_with_addons_install_false() -> None:
    rendered = render(stack_file("dev", addons={"install": False}))
    assert "nvsentinel" in [r.name for r in rendered.addons.releases]
    assert "add-ons to install elsewhere (addons.install: false)" in rendered.summary()
    assert "nvsentinel" in rendered.summary()
