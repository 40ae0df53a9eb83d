"""node-verdict.sh, run with this machine's sh and awk on a recorded-style good node and on the faults that must
keep a node out of service: an ECC error, a fatal XID, a missing or slow NIC, a slow NVLink, a failed DCGM test."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.manifests.fabriccheck import script
from tests.support.verdict import GOOD, Verdict, run

EIGHT_GIB = 8 * 2**30

pytestmark = pytest.mark.skipif(not (shutil.which("sh") and shutil.which("awk")), reason="needs sh and awk")


def node(tmp_path: Path, **files: str | None) -> Path:
    """The good node's records with some files replaced (None removes one)."""
    results = tmp_path / "results"
    shutil.copytree(GOOD, results)
    for name, text in files.items():
        path = results / name.replace("_", ".", 1)
        if text is None:
            path.unlink()
        else:
            path.write_text(text)
    return results


def judge(tmp_path: Path, results: Path, **env: str) -> Verdict:
    """node-verdict.sh as the ConfigMap ships it, beside nccl-verdict.sh, on `results`."""
    scripts = tmp_path / "scripts"
    scripts.mkdir(exist_ok=True)
    for name in ("node-verdict.sh", "nccl-verdict.sh"):
        (scripts / name).write_text(script(name))
    settings_ = {
        "NODE_NAME": "gpu-07",
        "EXPECT_GPUS": "8",
        "RDMA_NAMES": " ".join(f"mlx5_{i}" for i in range(8)),
        "RDMA_COUNT": "0",
        "NETDEVS": "",
        "MIN_LINK_GBPS": "400",
        "FLOOR_GBS": "270",
        "MAX_BYTES": str(EIGHT_GIB),
        **env,
    }
    said = run(scripts / "node-verdict.sh", str(results), env={"PATH": os.environ["PATH"], **settings_})
    assert not said.err, said.err
    return said


def gpus_with(line: int, text: str) -> str:
    rows = (GOOD / "gpus.csv").read_text().splitlines()
    rows[line] = text
    return "\n".join(rows) + "\n"


def test_a_good_node_passes_every_part(tmp_path: Path) -> None:
    verdict = judge(tmp_path, node(tmp_path))
    assert verdict.status == 0, verdict.out
    assert verdict.line == "PASS node gpu-07: GPUs, DCGM, NICs and NVLink checked"
    for part in ("gpus: 8 GPUs", "clocks: no slowdown", "xid: none", "dcgm: 6 tests passed", "nics: every fabric NIC"):
        assert f"ok   {part}" in verdict.out, verdict.out
    assert "ok   nvlink:" in verdict.out and "434.95" in verdict.out


def test_an_uncorrected_ecc_error_fails_the_node_naming_the_gpu(tmp_path: Path) -> None:
    verdict = judge(tmp_path, node(tmp_path, gpus_csv=gpus_with(3, "3, 00000000:83:00.0, 2, No, No")))
    assert verdict.status == 1
    assert "GPU 3 (00000000:83:00.0): 2 uncorrected ECC errors" in verdict.line


def test_a_row_remap_failure_or_pending_remap_fails(tmp_path: Path) -> None:
    failed = judge(tmp_path, node(tmp_path, gpus_csv=gpus_with(5, "5, 00000000:a3:00.0, 0, No, Yes")))
    assert failed.status == 1 and "GPU 5 (00000000:a3:00.0): row remap failed (replace the GPU)" in failed.line
    pending = judge(tmp_path / "p", node(tmp_path / "p", gpus_csv=gpus_with(0, "0, 00000000:53:00.0, 0, 1, 0")))
    assert pending.status == 1 and "row remap pending (reset the GPU)" in pending.line


def test_a_gpu_missing_from_nvidia_smi_fails(tmp_path: Path) -> None:
    seven = "".join((GOOD / "gpus.csv").read_text().splitlines(keepends=True)[:7])
    verdict = judge(tmp_path, node(tmp_path, gpus_csv=seven))
    assert verdict.status == 1 and "nvidia-smi sees 7 of 8 GPUs" in verdict.line


def test_no_driver_fails(tmp_path: Path) -> None:
    verdict = judge(tmp_path, node(tmp_path, gpus_csv="", gpus_rc="9\n"))
    assert verdict.status == 1 and "nvidia-smi did not answer (status 9)" in verdict.line


def test_a_fatal_xid_fails_and_another_is_only_noted(tmp_path: Path) -> None:
    log = (
        "[  812.441] NVRM: Xid (PCI:0000:93:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"
        "[  812.442] NVRM: Xid (PCI:0000:93:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"
        "[  900.100] NVRM: Xid (PCI:0000:53:00): 13, pid=2222, Graphics Exception\n"
    )
    verdict = judge(tmp_path, node(tmp_path, xid_log=log))
    assert verdict.status == 1
    assert "xid: XID 79 on PCI:0000:93:00" in verdict.line and "13" not in verdict.line.split("xid:")[1]
    assert "note xid: XID 13 on PCI:0000:53:00" in verdict.out


@pytest.mark.parametrize("code", [143, 155, 156, 158])
def test_the_blackwell_era_reset_xids_fail(tmp_path: Path, code: int) -> None:
    log = f"[  301.002] NVRM: Xid (PCI:0000:0a:00): {code}, pid='<unknown>', name=<unknown>, details\n"
    verdict = judge(tmp_path, node(tmp_path, xid_log=log))
    assert verdict.status == 1 and f"xid: XID {code} on PCI:0000:0a:00" in verdict.line


def test_an_nvlink5_xid_is_judged_by_the_recovery_action_xid_154_reports(tmp_path: Path) -> None:
    # 144-150 are fatal or not by subcode; the driver's XID 154 says what the GPU needs, and its latest word counts.
    needs_reset = (
        "[  50.1] NVRM: Xid (PCI:0000:1b:00): 149, pid=4242, name=python, NETIR_LINK_EVT Fatal error detected\n"
        "[  50.1] NVRM: Xid (PCI:0000:1b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 "
        "(GPU Reset Required)\n"
    )
    failed = judge(tmp_path, node(tmp_path, xid_log=needs_reset))
    assert failed.status == 1
    assert "xid: XID 154 (recovery action 0x1 (GPU Reset Required)) on PCI:0000:1b:00" in failed.line
    assert "149" not in failed.line and "note xid: XID 149 on PCI:0000:1b:00" in failed.out
    recovered = needs_reset + (
        "[  90.4] NVRM: Xid (PCI:0000:1b:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to "
        "0x0 (None)\n"
    )
    passed = judge(tmp_path / "r", node(tmp_path / "r", xid_log=recovered))
    assert passed.status == 0, passed.out
    assert "XID 154 (recovery action 0x0 (None)) on PCI:0000:1b:00" in passed.out


def test_a_recovery_action_xid_without_an_action_fails(tmp_path: Path) -> None:
    log = "[  12.0] NVRM: Xid (PCI:0000:3c:00): 154, GPU recovery action changed\n"
    verdict = judge(tmp_path, node(tmp_path, xid_log=log))
    assert verdict.status == 1 and "XID 154 (recovery action unknown action) on PCI:0000:3c:00" in verdict.line


def test_a_failed_dcgm_test_fails_by_name(tmp_path: Path) -> None:
    diag = (
        (GOOD / "diag.txt")
        .read_text()
        .replace(
            "| memory                    | Pass - GPUs: 0, 1, 2, 3, 4, 5, 6, 7            |",
            "| memory                    | Fail - GPU: 6                                  |",
        )
    )
    verdict = judge(tmp_path, node(tmp_path, diag_txt=diag, diag_rc="226\n"))
    assert verdict.status == 1 and "dcgm: memory (Fail - GPU: 6)" in verdict.line


def test_a_diagnostic_that_did_not_run_fails(tmp_path: Path) -> None:
    text = "Error: Unable to complete diagnostic for group 2147483647. Return: (-30) : DCGM GPU Diagnostic error\n"
    verdict = judge(tmp_path, node(tmp_path, diag_txt=text, diag_rc="226\n"))
    assert verdict.status == 1 and "dcgmi diag did not complete (status 226): Error: Unable" in verdict.line
    missing = judge(tmp_path / "m", node(tmp_path / "m", diag_txt=None, diag_rc=None))
    assert missing.status == 1 and "dcgm: no diagnostic output" in missing.line


def test_a_missing_or_down_or_slow_rail_fails(tmp_path: Path) -> None:
    nics = (GOOD / "nics.txt").read_text()
    gone = judge(tmp_path, node(tmp_path, nics_txt=nics.replace("rdma mlx5_3 ACTIVE 400\n", "")))
    assert gone.status == 1 and "nics: mlx5_3 missing" in gone.line
    down = judge(tmp_path / "d", node(tmp_path / "d", nics_txt=nics.replace("mlx5_4 ACTIVE 400", "mlx5_4 DOWN 400")))
    assert down.status == 1 and "nics: mlx5_4 DOWN" in down.line
    slow = judge(tmp_path / "s", node(tmp_path / "s", nics_txt=nics.replace("mlx5_5 ACTIVE 400", "mlx5_5 ACTIVE 200")))
    assert slow.status == 1 and "nics: mlx5_5 at 200 Gbps" in slow.line


def test_efa_devices_are_counted_and_gpu_netdevs_must_be_up(tmp_path: Path) -> None:
    efa = "".join(f"rdma rdmap{i}s0 ACTIVE 100\n" for i in range(31))
    counted = judge(tmp_path, node(tmp_path, nics_txt=efa), RDMA_NAMES="", RDMA_COUNT="32", MIN_LINK_GBPS="0")
    assert counted.status == 1 and "nics: 31 of 32 RDMA devices ACTIVE" in counted.line
    netdevs = "net eth1 up 200000\nnet eth2 down 200000\nnet eth3 up 100000\n"
    gke = judge(
        tmp_path / "g",
        node(tmp_path / "g", nics_txt=netdevs),
        RDMA_NAMES="",
        NETDEVS="eth1 eth2 eth3 eth4",
        MIN_LINK_GBPS="200",
    )
    assert gke.status == 1
    assert "nics: eth2 down, eth3 at 100 Gbps, eth4 missing" in gke.line


def test_a_slow_nvlink_fails_with_the_measured_figure(tmp_path: Path) -> None:
    log = (GOOD / "nvlink.log").read_text().replace("434.95", "141.20")
    verdict = judge(tmp_path, node(tmp_path, nvlink_log=log))
    assert verdict.status == 1
    assert "nvlink:" in verdict.line and "141.20" in verdict.line and "270" in verdict.line


def test_without_a_floor_nvlink_is_measured_not_judged(tmp_path: Path) -> None:
    log = (GOOD / "nvlink.log").read_text().replace("434.95", "41.20")
    verdict = judge(tmp_path, node(tmp_path, nvlink_log=log), FLOOR_GBS="0")
    assert verdict.status == 0, verdict.out


def test_every_failure_is_named_on_the_last_line(tmp_path: Path) -> None:
    verdict = judge(
        tmp_path,
        node(
            tmp_path,
            gpus_csv=gpus_with(1, "1, 00000000:63:00.0, 4, No, No"),
            nics_txt="",
            xid_log="NVRM: Xid (PCI:0000:63:00): 48, pid=1, DBE\n",
        ),
    )
    assert verdict.status == 1
    for part in ("gpus:", "xid: XID 48", "nics:"):
        assert part in verdict.line, verdict.line


@settings(max_examples=40, deadline=None)
@given(gpu=st.integers(0, 7), errors=st.integers(1, 10**6))
def test_any_uncorrected_ecc_count_on_any_gpu_fails(
    tmp_path_factory: pytest.TempPathFactory, gpu: int, errors: int
) -> None:
    tmp_path = tmp_path_factory.mktemp("ecc")
    bus = (GOOD / "gpus.csv").read_text().splitlines()[gpu].split(", ")[1]
    verdict = judge(tmp_path, node(tmp_path, gpus_csv=gpus_with(gpu, f"{gpu}, {bus}, {errors}, No, No")))
    assert verdict.status == 1 and f"GPU {gpu} ({bus}): {errors} uncorrected ECC errors" in verdict.line


def test_a_node_whose_own_dcgm_engine_never_answered_fails_saying_so(tmp_path: Path) -> None:
    text = "Error: the node's DCGM host engine (gpu-operator) did not answer on localhost:5555 within 600 s\n"
    verdict = judge(tmp_path, node(tmp_path, diag_txt=text, diag_rc="125\n"))
    assert verdict.status == 1
    assert "dcgm: dcgmi diag did not complete (status 125): Error: the node's DCGM host engine (gpu-operator)" in (
        verdict.line
    )


def _fabric(rows: list[str]) -> str:
    return "".join(f"{row}\n" for row in rows)


GOOD_FABRIC = [f"0000000{i}:01:00.0|Completed|Success|32766" for i in range(8)]


def test_on_a_rack_scale_pool_every_gpu_must_have_joined_its_nvlink_domain(tmp_path: Path) -> None:
    """A tray whose fabric registration failed still passes its own all_reduce, then breaks every multi-node
    NVLink job: the verdict reads each GPU's fabric state, status and clique."""
    good = judge(tmp_path, node(tmp_path, fabric_txt=_fabric(GOOD_FABRIC)), NVLINK_FABRIC="1")
    assert good.status == 0 and "ok   fabric: 8 GPUs registered, clique 32766" in good.out


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ("00000003:01:00.0|In Progress|N/A|", "GPU 00000003:01:00.0: state In Progress, status N/A, clique none"),
        ("00000003:01:00.0|Completed|Failure|32766", "status Failure"),
        ("00000003:01:00.0|Completed|Success|N/A", "clique N/A"),
    ],
)
def test_a_gpu_outside_its_nvlink_domain_fails_the_node(tmp_path: Path, row: str, said: str) -> None:
    rows = [*GOOD_FABRIC[:3], row, *GOOD_FABRIC[4:]]
    verdict = judge(tmp_path, node(tmp_path, fabric_txt=_fabric(rows)), NVLINK_FABRIC="1")
    assert verdict.status == 1 and said in verdict.line


def test_no_fabric_state_or_gpus_in_two_cliques_fail(tmp_path: Path) -> None:
    missing = judge(tmp_path, node(tmp_path), NVLINK_FABRIC="1")
    assert missing.status == 1 and "no NVLink fabric state" in missing.line
    split = [*GOOD_FABRIC[:4], *(r.replace("32766", "12") for r in GOOD_FABRIC[4:])]
    two = judge(tmp_path / "two", node(tmp_path / "two", fabric_txt=_fabric(split)), NVLINK_FABRIC="1")
    assert two.status == 1 and "2 NVLink cliques" in two.line
    fewer = judge(tmp_path / "six", node(tmp_path / "six", fabric_txt=_fabric(GOOD_FABRIC[:6])), NVLINK_FABRIC="1")
    assert fewer.status == 1 and "6 of 8 GPUs" in fewer.line


def test_off_rack_scale_pools_the_fabric_is_not_judged(tmp_path: Path) -> None:
    assert judge(tmp_path, node(tmp_path)).status == 0
