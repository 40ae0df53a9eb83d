"""nccl-verdict.sh, run with this machine's sh and awk on recorded-style nccl-tests outputs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.fabric import ROCE_AUTO_GID_NCCL
from components.fabriccheck import NETWORKS
from components.manifests.fabriccheck import script
from tests.support.verdict import Verdict, run

LOGS = Path(__file__).resolve().parents[1] / "data" / "nccl-tests"
EIGHT_GIB = 8 * 2**30

pytestmark = pytest.mark.skipif(not (shutil.which("sh") and shutil.which("awk")), reason="needs sh and awk")


def judge(tmp_path: Path, log: Path | str, **env: str) -> Verdict:
    """Run the verdict as the ConfigMap ships it, on `log` (a file, or the text of one)."""
    verdict = tmp_path / "nccl-verdict.sh"
    verdict.write_text(script("nccl-verdict.sh"))
    if isinstance(log, str):
        path = tmp_path / "nccl-tests.log"
        path.write_text(log)
        log = path
    termination = tmp_path / "termination-log"
    settings = {
        "CHECK": "pool p5",
        "FLOOR_GBS": "123",
        "MAX_BYTES": str(EIGHT_GIB),
        "RANKS": "16",
        "NETWORKS": ",".join(NETWORKS["efa"]),
        "LOGS": "kubectl logs -n training job/fabric-check-p5",
        "TERMINATION_LOG": str(termination),
        **env,
    }
    said = run(verdict, str(log), env={"PATH": os.environ["PATH"], **settings}, timeout=30, termination=termination)
    assert not said.err, said.err
    return said


def test_a_healthy_efa_pair_passes_and_reports_every_size_and_the_average(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "efa-p5-all-reduce.log")
    assert verdict.status == 0
    assert verdict.line.startswith("PASS pool p5: 479.30 GB/s bus bandwidth at 8G (floor 123.00 GB/s)")
    assert "network Libfabric" in verdict.line
    assert verdict.termination == verdict.line, "the pod's termination message carries the verdict"
    table = verdict.out.splitlines()
    assert table[0].split() == ["size", "busbw", "out-of-place", "busbw", "in-place"]
    assert len([row for row in table if row.strip().endswith("GB/s") and row.split()[0][-1] in "KMG"]) == 14
    assert "average bus bandwidth: 249.671 GB/s" in verdict.out, "the average nccl-tests printed"


def test_the_same_run_fails_below_a_higher_floor_naming_measured_expected_and_logs(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "efa-p5-all-reduce.log", FLOOR_GBS="500")
    assert verdict.status == 1
    assert verdict.line == (
        "FAIL pool p5: 479.30 GB/s bus bandwidth at 8G is under the floor of 500.00 GB/s; "
        "logs: kubectl logs -n training job/fabric-check-p5"
    )
    assert verdict.termination == verdict.line


def test_a_fallback_to_sockets_fails_whatever_the_floor(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "roce-socket-fallback.log", NETWORKS=",".join(NETWORKS["roce"]), FLOOR_GBS="1")
    assert verdict.status == 1
    assert "NCCL used network Socket, not the fabric (IB,IBext*): it fell back" in verdict.line
    assert "largest size 8G at 10.20 GB/s" in verdict.line


def test_on_a_tcp_pool_sockets_are_the_fabric(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "roce-socket-fallback.log", NETWORKS="", FLOOR_GBS="5")
    assert verdict.status == 0, verdict.line
    assert "network Socket" in verdict.line


def test_roce_over_ib_passes(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "roce-all-reduce.log", NETWORKS=",".join(NETWORKS["roce"]), FLOOR_GBS="200")
    assert verdict.status == 0, verdict.line
    assert verdict.line.startswith("PASS pool p5: 376.20 GB/s")


ROCE = {"NETWORKS": ",".join(NETWORKS["roce"]), "FLOOR_GBS": "200", "MIN_NCCL": ROCE_AUTO_GID_NCCL}
"""A RoCE gate as rendered: NCCL_IB_GID_INDEX unset, so the image's NCCL must choose the GID itself."""


def test_roce_at_nccl_2_21_or_later_passes_and_names_the_version(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "roce-all-reduce.log", **ROCE)
    assert verdict.status == 0, verdict.line
    assert verdict.line.endswith("network IB, NCCL 2.28.3; logs: kubectl logs -n training job/fabric-check-p5")
    assert "NCCL version: 2.28.3" in verdict.out
    exactly = (LOGS / "roce-all-reduce.log").read_text().replace("2.28.3+cuda12.9", "2.21.5+cuda12.4")
    assert judge(tmp_path, exactly, **ROCE).status == 0


def test_roce_below_nccl_2_21_fails_even_at_full_speed(tmp_path: Path) -> None:
    # NCCL 2.20 prints its version bare (no "NCCL INFO"), and its GID index defaults to 0: RoCE v1.
    verdict = judge(tmp_path, LOGS / "roce-nccl-2.20.log", **ROCE)
    assert verdict.status == 1
    assert verdict.line.startswith("FAIL pool p5: NCCL 2.20.5 is older than 2.21, which this fabric needs")
    assert "use an image with NCCL 2.21 or later" in verdict.line and "376.20 GB/s" in verdict.line
    assert verdict.termination == verdict.line
    # The version is the cause even when the run also failed.
    failed = judge(tmp_path, LOGS / "roce-nccl-2.20.log", **ROCE, MPIRUN_STATUS="1")
    assert "NCCL 2.20.5 is older than 2.21" in failed.line
    # Without the requirement (InfiniBand, or a job that sets NCCL_IB_GID_INDEX), the same run passes.
    assert judge(tmp_path, LOGS / "roce-nccl-2.20.log", **{**ROCE, "MIN_NCCL": ""}).status == 0


def test_the_lowest_version_of_any_rank_counts(tmp_path: Path) -> None:
    text = (LOGS / "roce-all-reduce.log").read_text()
    mixed = text.replace("gpu-08:9008:9048 [0] NCCL INFO NCCL version 2.28.3+cuda12.9", "NCCL version 2.19.3+cuda12.2")
    assert mixed != text
    assert "NCCL 2.19.3 is older than 2.21" in judge(tmp_path, mixed, **ROCE).line


def test_without_a_version_line_the_nccl_tests_header_names_the_library(tmp_path: Path) -> None:
    text = (LOGS / "roce-all-reduce.log").read_text()
    bare = "\n".join(line for line in text.splitlines() if "NCCL version" not in line)
    assert judge(tmp_path, bare, **ROCE).status == 0, "nccl-library=22707 is 2.27.7"
    old = bare.replace("nccl-library=22707", "nccl-library=22005")
    assert "NCCL 2.20.5 is older than 2.21" in judge(tmp_path, old, **ROCE).line
    ancient = bare.replace("nccl-library=22707", "nccl-library=2708")
    assert "NCCL 2.7.8 is older than 2.21" in judge(tmp_path, ancient, **ROCE).line


def test_a_roce_log_that_states_no_nccl_version_does_not_prove_it(tmp_path: Path) -> None:
    text = (LOGS / "roce-all-reduce.log").read_text()
    silent = "\n".join(line for line in text.splitlines() if "version" not in line)
    verdict = judge(tmp_path, silent, **ROCE)
    assert verdict.status == 1
    assert "the log states no NCCL version (NCCL_DEBUG=INFO prints it): NCCL 2.21 or later" in verdict.line
    assert judge(tmp_path, silent, **{**ROCE, "MIN_NCCL": ""}).status == 0


@settings(max_examples=40, deadline=None)
@given(major=st.integers(2, 3), minor=st.integers(0, 40), patch=st.integers(0, 12))
def test_the_version_verdict_compares_numbers_not_text(tmp_path_factory, major: int, minor: int, patch: int) -> None:
    version = f"{major}.{minor}.{patch}"
    text = (LOGS / "roce-all-reduce.log").read_text().replace("2.28.3+cuda12.9", f"{version}+cuda12.9")
    verdict = judge(tmp_path_factory.mktemp("version"), text, **ROCE)
    assert verdict.status == (0 if (major, minor) >= (2, 21) else 1), verdict.line


def test_wrong_values_fail_even_at_full_speed(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "roce-wrong-values.log", NETWORKS="IB")
    assert verdict.status == 1
    assert "2048 wrong values (#wrong)" in verdict.line


def test_a_truncated_output_fails_as_cut_short(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "roce-truncated.log", NETWORKS="IB")
    assert verdict.status == 1
    assert "the output stops at 1G of 8G (cut short)" in verdict.line


def test_an_nccl_failure_fails_with_its_line(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "roce-nccl-failure.log", NETWORKS="IB", MPIRUN_STATUS="1")
    assert verdict.status == 1
    assert "the test failed: gpu-08: Test NCCL failure common.cu:1279" in verdict.line


def test_a_failed_mpirun_fails_even_when_the_output_looks_whole(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "efa-p5-all-reduce.log", MPIRUN_STATUS="137")
    assert verdict.status == 1
    assert "mpirun exited with status 137" in verdict.line


def test_fewer_ranks_than_gpus_fails(tmp_path: Path) -> None:
    verdict = judge(tmp_path, LOGS / "efa-p5-all-reduce.log", RANKS="32")
    assert verdict.status == 1
    assert "the test ran on 16 of 32 GPUs" in verdict.line


def test_a_log_that_names_no_network_does_not_prove_the_fabric(tmp_path: Path) -> None:
    text = "\n".join(
        line for line in (LOGS / "efa-p5-all-reduce.log").read_text().splitlines() if "NCCL INFO" not in line
    )
    verdict = judge(tmp_path, text)
    assert verdict.status == 1
    assert "the log names no NCCL network (NCCL_DEBUG=INFO)" in verdict.line


def test_tagged_output_without_checks_and_a_versioned_plugin_name(tmp_path: Path) -> None:
    """mpirun --tag-output prefixes, -c 0 (#wrong is N/A), all_gather's `none` redop, GPUDirectTCPX_v7."""
    verdict = judge(
        tmp_path,
        LOGS / "tcpx-all-gather.log",
        NETWORKS=",".join(NETWORKS["tcpx"]),
        FLOOR_GBS="60",
        MAX_BYTES=str(512 * 2**20),
    )
    assert verdict.status == 0, verdict.line
    assert verdict.line.startswith("PASS pool p5: 70.90 GB/s bus bandwidth at 512M")
    assert "network GPUDirectTCPX_v7" in verdict.line


def test_no_output_at_all_fails(tmp_path: Path) -> None:
    verdict = judge(tmp_path, "")
    assert verdict.status == 1
    assert "the output has no results" in verdict.line
    missing = judge(tmp_path, tmp_path / "absent.log")
    assert missing.status == 1 and "no nccl-tests output" in missing.line


def _table(busbw: list[float], sizes: list[int]) -> str:
    lines = [
        "#  Rank  0 Group  0 Pid   4100 on  node-0 device  0 [0000:53:00] NVIDIA H100 80GB HBM3",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "node-0:1:2 [0] NCCL INFO Using network IB",
    ]
    for size, bw in zip(sizes, busbw, strict=True):
        lines.append(
            f"{size:12d}  {size // 4:12d}     float     sum      -1  1000.0  {bw:6.2f}  {bw:6.2f}      0  1000.0  {bw:6.2f}  {bw:6.2f}      0"
        )
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None)
@given(
    busbw=st.lists(
        st.floats(min_value=0, max_value=999, allow_nan=False).map(lambda v: round(v, 2)), min_size=1, max_size=12
    ),
    floor=st.integers(min_value=1, max_value=999),
)
def test_the_verdict_is_the_largest_sizes_busbw_against_the_floor(
    tmp_path_factory, busbw: list[float], floor: int
) -> None:
    sizes = [2**20 * 2**i for i in range(len(busbw))]
    tmp = tmp_path_factory.mktemp("verdict")
    verdict = judge(tmp, _table(busbw, sizes), NETWORKS="IB", RANKS="1", FLOOR_GBS=str(floor), MAX_BYTES=str(sizes[-1]))
    assert verdict.status == (0 if busbw[-1] >= floor else 1), verdict.line
    assert f"{busbw[-1]:.2f} GB/s" in verdict.line


GB200 = LOGS / "efa-gb200-nvls.log"
"""2 x p6e-gb200 in one NVLink domain: NCCL logs NVLS set up, and all_reduce reaches NVLink's bandwidth."""


def test_a_gb200_pair_over_multi_node_nvlink_passes_and_says_nvls_was_set_up(tmp_path: Path) -> None:
    verdict = judge(tmp_path, GB200, RANKS="8", FLOOR_GBS="540", NVLS="1")
    assert verdict.status == 0, verdict.out
    assert verdict.line.startswith("PASS pool p5: 821.70 GB/s bus bandwidth at 8G (floor 540.00 GB/s)")
    assert "NVLS set up" in verdict.line


def test_without_the_nvls_line_multi_node_nvlink_is_not_proven_whatever_the_speed(tmp_path: Path) -> None:
    """A pod without its IMEX channel, or a pair in two NVLink domains, runs over the network (or fails at
    init with NCCL_MNNVL_ENABLE=1): the log then has no NVLS line."""
    log = "".join(line for line in GB200.read_text().splitlines(keepends=True) if "NVLS comm" not in line)
    verdict = judge(tmp_path, log, RANKS="8", FLOOR_GBS="1", NVLS="1")
    assert verdict.status == 1, verdict.out
    assert "NCCL did not set NVLS up" in verdict.line
    assert judge(tmp_path, log, RANKS="8", FLOOR_GBS="1").status == 0, "only a rack-scale check asks for NVLS"
