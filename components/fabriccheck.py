"""A pool's fabric acceptance gate: which pools prove their fabric at deploy time, how, and against what.

The gate runs NCCL tests across `nodes` of the pool's nodes, with every GPU of each, built from the same
job plan and fabric profile as a training job on the pool. It fails below a bus bandwidth floor, and
when NCCL used another network than the fabric's (a fallback to sockets does not error by itself).

A pool that keeps that many nodes is checked at deploy time, and `pulumi up` waits for the verdict. A pool that
scales from zero (or keeps fewer) is checked on scale-up: a watcher in the cluster runs the same Job, with the
same scripts and floor, once the pool first has that many checked nodes, and records the verdict.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import Literal

from components import nvlink
from components.errors import ConfigError, Issue
from components.fabric import GIB_NCCL_ENV, min_nccl
from components.manifests.plan import JobPlan, SchedulerKind, plan
from components.models.job import JobSchedulerSpec, TrainingJobSpec
from components.models.nodepool import GPUDIRECT_FABRICS, Fabric, FabricCheckSpec, NcclSizesSpec, nccl_bytes
from components.pool import Pool

FAST_FABRICS: tuple[Fabric, ...] = ("efa", "infiniband", "roce", *GPUDIRECT_FABRICS)
"""Fabrics a pool gets a gate for by default: the ones NCCL can silently fall back from."""
DEFAULT_NAMESPACE = "training"
NAME_PREFIX = "fabric-check-"
DERIVED_SHARE = 0.5
"""The floor where no public figure exists: this share of the fabric's nominal bandwidth."""
LARGE_GPU_GIB = 40
"""GPUs with at least this much memory test up to 8G messages; smaller ones up to 1G."""
SSH_PORT = 2222
_FLOOR_TESTS = ("all_reduce_perf", "all_gather_perf", "reduce_scatter_perf")


@dataclass(frozen=True, slots=True)
class NcclTestsImage:
    """A public NCCL-tests image and how to run its tests across nodes."""

    image: str
    """The image reference, pinned."""
    tests: str
    """The directory of the nccl-tests binaries (all_reduce_perf, ...)."""
    mpirun: str = "mpirun"
    """mpirun, by path when it is not on PATH."""
    mpi_args: tuple[str, ...] = ()
    """Extra mpirun flags the image's MPI needs on this fabric."""
    setup: str = ""
    """A shell snippet the image needs before mpirun (its own environment script), if any."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment the image needs on this fabric, beside the fabric profile's."""


# Each image carries Open MPI, sshd and nccl-tests built with MPI=1; the fabric's NCCL plugin comes
# inside it (EFA, IB/RoCE) or from the node (GKE's installers put it under /home/kubernetes/bin).
# Paths are read from the Dockerfiles and upstream manifests that build and run each tag.
# MPI itself only wires the ranks up: it keeps to TCP on eth0 and off the fabric NCCL is tested on.
_MPI_ON_ETH0 = (
    "--mca",
    "btl",
    "tcp,self",
    "--mca",
    "btl_tcp_if_include",
    "eth0",
    "--mca",
    "oob_tcp_if_include",
    "eth0",
)
_HPCX = NcclTestsImage(
    # coreweave/nccl-tests @cb86553 (Dockerfile; mpi-operator/nccl-test-distributed-h100-64-mpijob.yaml):
    # CUDA 12.9.1, NCCL 2.28.3, HPC-X Open MPI (with UCX and HCOLL) in /opt/hpcx, MOFED userspace, sshd.
    image="ghcr.io/coreweave/nccl-tests:12.9.1-devel-ubuntu22.04-nccl2.28.3-1-8b67957",
    tests="/opt/nccl-tests/build",
    mpirun="/opt/hpcx/ompi/bin/mpirun",
    # UCX and HCOLL would put MPI's own traffic on the RDMA devices; ob1 over TCP keeps it on eth0.
    mpi_args=("--mca", "pml", "ob1", "--mca", "coll_hcoll_enable", "0", *_MPI_ON_ETH0),
    # The image also carries the SHARP net plugin; NCCL's own IB transport is the one configured here.
    env=(("NCCL_NET_PLUGIN", "none"),),
)
SCRIPTS_DIR = "/etc/fabric-check/scripts"
"""Where a gate pod finds its scripts (components/scripts: fabric-check.sh, nccl-verdict.sh, gib-env.sh)."""
# The rdma gate runs NCCL as the pool's workers do, with the gIB environment and tuner profile they carry
# (components/fabric.py), and gib-env.sh holds that environment to the installer on the node: it fails when
# the installer's script or the pool's tuner profile is missing there, and warns of every NCCL_* value the
# installer's set_nccl_env.sh (which upstream's tests source before mpirun: container-engine-accelerators
# @992db81 gpudirect-rdma/nccl-test-a4.yaml, cluster-toolkit v1.95.0 examples/gke-a4/nccl-jobset-example.yaml)
# sets otherwise. Sourcing it into the gate instead would measure settings the workers do not run.
_GIB_SETUP = f"/sbin/ldconfig\nsh {SCRIPTS_DIR}/gib-env.sh {GIB_NCCL_ENV} || exit 1\n"

IMAGES: dict[Fabric, NcclTestsImage] = {
    "efa": NcclTestsImage(
        # aws-samples/awsome-distributed-training @7217859 micro-benchmarks/nccl-tests (buildspec.yaml tag
        # scheme, Dockerfile), as NVIDIA AICR v0.11.1 runs it on EKS (validators/performance/testdata/h100/eks):
        # CUDA 12.8.1, EFA installer 1.43.2, aws-ofi-nccl 1.16.3, NCCL 2.27.7, nccl-tests 2.16.9; x86 and arm64.
        image="public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9",
        tests="/opt/nccl-tests/build",
        mpirun="/opt/amazon/openmpi/bin/mpirun",
        # As ADT's nccl-tests MPIJob: no UCX on EFA, MPI over TCP (the image's OMPI_MCA_btl_tcp_if_exclude
        # stands; Open MPI refuses an include list beside it).
        mpi_args=("--mca", "pml", "^ucx", "--mca", "btl", "tcp,self", "--mca", "oob_tcp_if_include", "eth0"),
        # aws-ofi-nccl's tuner (algorithm and protocol per message size on P5, P5e, P5en and P6-B200), loaded by
        # path as ADT's nccl-tests MPIJob does (@7217859 micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml),
        # x86_64 like every EFA machine in the catalog. This image has it: aws-ofi-nccl 1.16.3 builds it into its
        # net plugin and links libnccl-ofi-tuner.so to it (aws/aws-ofi-nccl v1.16.3 src/Makefile.am). Jobs get no
        # path, as their images are unknown: from aws-ofi-nccl 1.16.0 with NCCL 2.21 or later NCCL finds the
        # tuner in the net plugin unasked, and with a path that is missing it falls back to the same
        # (NVIDIA/nccl v2.27.7-1 src/plugin/tuner.cc), so a job sets NCCL_TUNER_PLUGIN only for an older plugin.
        env=(("NCCL_TUNER_PLUGIN", "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so"),),
    ),
    "infiniband": _HPCX,
    "roce": _HPCX,
    "tcp": _HPCX,
    "tcpx": NcclTestsImage(
        # GoogleCloudPlatform/cluster-toolkit @1047080 examples/gke-a3-highgpu/nccl-test.yaml (from
        # container-engine-accelerators gpudirect-tcpx): NCCL and the TCPX plugin come from the node.
        image="us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9",
        tests="/third_party/nccl-tests-mpi/build",
        mpi_args=_MPI_ON_ETH0,
    ),
    "tcpxo": NcclTestsImage(
        # cluster-toolkit @1047080 examples/gke-a3-megagpu/nccl-test-latest.yaml; container-engine-accelerators
        # gpudirect-tcpxo/README.md (plugin v1.0.15, qualified with NCCL 2.28.7). NCCL and FasTrak come from the node.
        image="us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15",
        tests="/third_party/nccl-tests-mpi/build",
        mpi_args=_MPI_ON_ETH0,
    ),
    "rdma": NcclTestsImage(
        # container-engine-accelerators @992db81 gpudirect-rdma/nccl-test-a4.yaml (cluster-toolkit's
        # gke-a3-ultragpu and gke-a4 nccl-jobset-example.yaml run v1.1.0): gIB from the node's installer.
        image="us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-diagnostic:v1.1.1",
        tests="/third_party/nccl-tests/build",
        mpi_args=_MPI_ON_ETH0,
        setup=_GIB_SETUP,
    ),
}

ARM64_IMAGES: dict[Fabric, NcclTestsImage] = {
    # The EFA image is built for both architectures (the comment of IMAGES["efa"]); aws-ofi-nccl installs its
    # libraries under the platform's triplet, as ADT's Slurm nccl-tests scripts name it
    # (/opt/amazon/ofi-nccl/lib/$(uname -m)-linux-gnu/libnccl-ofi-tuner.so): aarch64 on Grace (p6e-gb200).
    "efa": replace(
        IMAGES["efa"], env=(("NCCL_TUNER_PLUGIN", "/opt/amazon/ofi-nccl/lib/aarch64-linux-gnu/libnccl-ofi-tuner.so"),)
    ),
    # Google Cloud, "NCCL/gIB release notes (ARM64)": nccl-plugin-gib-diagnostic-arm64 v1.1.2 (2026-05-14), the
    # pair of the arm64 installer (versions.GIB_PLUGIN_IMAGE_ARM64); cluster-toolkit v1.95.0 examples/gke-a4x runs
    # its v1.0.6 the same way (/third_party/nccl-tests/build, mpirun, gIB from the node's installer).
    "rdma": replace(
        IMAGES["rdma"], image="us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-diagnostic-arm64:v1.1.2"
    ),
}
"""The NCCL-tests image of a fabric on arm64 nodes, where IMAGES' is built for x86_64 only."""


def nccl_tests_image(pool: Pool) -> NcclTestsImage:
    """The NCCL-tests image for the pool's fabric and CPU architecture."""
    if pool.arch == "arm64" and pool.fabric in ARM64_IMAGES:
        return ARM64_IMAGES[pool.fabric]
    return IMAGES[pool.fabric]


# The names NCCL logs as "Using network <name>" (NCCL init.cc) for each fabric's transport; a trailing *
# matches a versioned name. Anything else on a fast fabric is a fallback; tcp accepts whatever NCCL picks.
# Libfabric is aws-ofi-nccl's name from 1.12 on (AWS Libfabric before, or when NCCL_NET asks for it);
# IBext is the SHARP plugin's IB transport. The GKE names come from field logs: the plugins are closed.
NETWORKS: dict[Fabric, tuple[str, ...]] = {
    "efa": ("Libfabric", "AWS Libfabric", "OFI"),
    "infiniband": ("IB", "IBext*"),
    "roce": ("IB", "IBext*"),
    "tcpx": ("GPUDirectTCPX*",),
    "tcpxo": ("FasTrak*", "GPUDirectTCPXO*"),
    "rdma": ("gIB*",),
    "tcp": (),
}


@dataclass(frozen=True, slots=True)
class FabricCheck:
    """A pool's gate, resolved: the test, its nodes, the floor and where it came from, and its job plan."""

    plan: JobPlan
    """The gate's Indexed Job on the pool, planned like a training job's."""
    test: str
    """The nccl-tests binary, e.g. all_reduce_perf."""
    sizes: NcclSizesSpec
    """Message sizes, the largest resolved."""
    floor_gbs: float
    """The least bus bandwidth at the largest size, in GB/s."""
    floor_source: str
    """Where the floor comes from, in words."""
    image: NcclTestsImage
    """The image and how to run it."""
    networks: tuple[str, ...]
    """The NCCL networks that count as the fabric; empty accepts any."""
    min_nccl: str | None
    """The least NCCL version the fabric's settings need (RoCE: 2.21), which the log must show; None: any."""
    timeout_minutes: int
    """How long the gate may take."""
    nvls: bool = False
    """Rack-scale NVLink: the test runs inside one NVLink domain and must show NCCL's NVLS set up across the nodes."""
    when: Literal["deploy", "scale-up"] = "deploy"
    """deploy: `pulumi up` runs it on nodes the pool keeps and waits for it. scale-up: for a pool that keeps
    fewer nodes than the test needs, a watcher in the cluster runs it once the pool first has that many checked
    nodes, and records the verdict in a ConfigMap."""

    @property
    def pool(self) -> Pool:
        """The pool checked."""
        return self.plan.pool

    @property
    def name(self) -> str:
        """The gate's Job (and Service) name."""
        return self.plan.name

    @property
    def namespace(self) -> str:
        """Where the gate runs: where the pool's networks are."""
        return self.plan.namespace

    @property
    def nodes(self) -> int:
        """Nodes the test spans."""
        return self.plan.nodes

    @property
    def logs(self) -> str:
        """The command that shows the test's output."""
        return f"kubectl logs -n {self.namespace} job/{self.name}"

    @property
    def result_name(self) -> str:
        """scale-up: the ConfigMap the watcher records the verdict in."""
        return f"{self.name}-result"

    def summary(self) -> str:
        """E.g. "all_reduce_perf on 2 nodes x 8 GPUs, 1M-8G, floor 300 GB/s (AICR ...)"; a scale-up check says when
        it runs and where its verdict goes."""
        floor = (
            f"floor {self.floor_gbs:g} GB/s ({self.floor_source})"
            if self.floor_gbs
            else f"no floor ({self.floor_source})"
        )
        networks = f", over {' or '.join(self.networks)}" if self.networks else ""
        if self.nvls:
            networks += f", NVLS across one NVLink domain (its own ComputeDomain; the log's '{nvlink.NVLS_LINE}' line)"
        nccl = f", NCCL >= {self.min_nccl}" if self.min_nccl else ""
        test = (
            f"{self.test} on {self.nodes} nodes x {self.plan.gpus_per_node} GPUs, {self.sizes.min}-{self.sizes.max}"
            f"{networks}{nccl}, {floor}"
        )
        if self.when == "deploy":
            return test
        return (
            f"on scale-up, once the pool first has {self.nodes} checked nodes (verdict in ConfigMap "
            f"{self.namespace}/{self.result_name}; delete it to run again): {test}"
        )

    def fingerprint(self) -> str:
        """A digest of everything the verdict depends on: the pool (machine, size, fabric wiring) and the
        gate's config. It changes the pod template, so the gate runs again when one of them changes."""
        # Where images come from is no input of the verdict (a new image changes the pod template by itself), nor is
        # what a node of an uncatalogued machine advertises to the scheduler; leaving them out keeps the digest of
        # stacks made before the pool carried them, so their gates do not run again for nothing.
        pool = {k: v for k, v in self.pool.to_config().items() if k not in _NOT_VERDICT_INPUTS}
        inputs = {
            "pool": pool,
            "test": self.test,
            "sizes": self.sizes.to_config(),
            "floor": self.floor_gbs,
            "image": self.image.image,
            "nodes": self.nodes,
            "nvls": self.nvls,
        }
        return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]


_NOT_VERDICT_INPUTS = ("registryMirror", "kubectlImage", "allocatableCpu", "allocatableMemory")


def resolve(
    spec: FabricCheckSpec,
    pool: Pool,
    scheduler: SchedulerKind,
    queue: str | None,
    *,
    path: str,
) -> tuple[FabricCheck | None, str, list[Issue]]:
    """The pool's gate, or None with the reason it is off; and the config issues that stop it."""
    off = _off_reason(spec, pool)
    scale_up = off is None and pool.min_nodes < spec.nodes
    if off is not None:
        if spec.enabled is None and spec.stated:
            # Settings that would never be used are a mistake, not a preference.
            return (
                None,
                off,
                [Issue(f"{path}.fabricCheck", f"{', '.join(spec.stated)} set, but the gate is off: {off}")],
            )
        return None, off, []
    issues: list[Issue] = []
    if spec.nodes > pool.max_nodes:
        issues.append(
            Issue(
                f"{path}.fabricCheck.nodes",
                f"the check runs on {spec.nodes} nodes, and the pool has at most {pool.max_nodes} (maxNodes): raise "
                "maxNodes, lower fabricCheck.nodes, or set fabricCheck.enabled: false",
            )
        )
    floor = _floor(spec, pool)
    image = nccl_tests_image(pool)
    nvls = nvlink.needs_domain(pool, spec.nodes)
    name = f"{NAME_PREFIX}{pool.name}"
    if len(f"{name}-{spec.nodes - 1}") > 63:
        issues.append(
            Issue(
                f"{path}.name",
                f"the gate's pods are named {name}-<index>, past 63 characters: shorten the pool name, or set "
                "fabricCheck.enabled: false",
            )
        )
    if issues:
        return None, "", issues
    sizes = spec.sizes
    if sizes.max is None:
        sizes = sizes.model_copy(update={"max": _default_max(pool, sizes.min)})
    job = TrainingJobSpec(
        name=name,
        namespace=home_namespace(pool),
        launcher="indexed",
        image=spec.image or image.image,
        command=[f"{image.tests.rstrip('/')}/{spec.test}"],
        nodes=spec.nodes,
        node_pool=pool.name,
        scheduler=JobSchedulerSpec(),
        # INFO names the network NCCL picked, which is how a fallback shows; INIT and NET keep it short.
        # Open MPI 4 would shorten the hostfile's <pod>.<service> names to pod names, which do not resolve.
        env={
            "NCCL_DEBUG": "INFO",
            "NCCL_DEBUG_SUBSYS": "INIT,NET",
            "OMPI_MCA_orte_keep_fqdn_hostnames": "1",
            **(dict(image.env) if spec.image is None else {}),
        },
    )
    try:
        planned = plan(job, pool, scheduler, queue, path=f"{path}.fabricCheck")
    except ConfigError as exc:
        return None, "", exc.issues
    check = FabricCheck(
        plan=planned,
        test=spec.test,
        sizes=sizes,
        floor_gbs=floor[0],
        floor_source=floor[1],
        image=image if spec.image is None else replace(image, image=spec.image, env=()),
        networks=NETWORKS[pool.fabric],
        min_nccl=min_nccl(pool.fabric, planned.env),
        timeout_minutes=spec.timeout_minutes,
        nvls=nvls,
        when="scale-up" if scale_up else "deploy",
    )
    return check, "", []


def _off_reason(spec: FabricCheckSpec, pool: Pool) -> str | None:
    """Why the gate is off, or None when it runs."""
    if spec.enabled is False:
        return "fabricCheck.enabled is false"
    if spec.enabled:
        return None
    if pool.fabric not in FAST_FABRICS and not pool.nvlink_domain_nodes:
        return f"{pool.fabric} is not a fast fabric (set fabricCheck.enabled: true to measure it anyway)"
    return None


def _floor(spec: FabricCheckSpec, pool: Pool) -> tuple[float, str]:
    """The floor in GB/s and its source: stated, the catalog's for the machine on its own fabric, or half
    the fabric's nominal bandwidth. 0 when none is known: the check then proves the transport and the
    data, not the speed."""
    if spec.min_bus_bandwidth is not None:
        return spec.min_bus_bandwidth, "fabricCheck.minBusBandwidth"
    if nvlink.needs_domain(pool, spec.nodes):
        # Inside one NVLink domain NCCL goes over NVLink (NVLS), far above any network's figure.
        found, source = nvlink.floor(pool)
        if found:
            return found, f"{source}, across the NVLink domain"
    machine = pool.machine()
    # The published floors are all_reduce and all_gather figures; alltoall moves more over the network.
    if machine is not None and machine.busbw_floor_gbs and pool.fabric == machine.fabric and spec.test in _FLOOR_TESTS:
        return machine.busbw_floor_gbs, machine.busbw_floor_source
    nominal = _nominal_gbps(pool)
    if pool.fabric == "tcp" or not nominal:
        return 0, "none known: set fabricCheck.minBusBandwidth to check the speed too"
    floor = round(nominal / 8 * DERIVED_SHARE)
    return float(floor), f"half the fabric's nominal {nominal:g} Gbps; no public figure for this machine"


def _nominal_gbps(pool: Pool) -> float:
    """The fabric's nominal bandwidth per node in Gbps: its rails' line rate (RoCE / InfiniBand), or the
    machine's GPU fabric from the catalog; 0 when unknown."""
    use = pool.rail_use()
    if use is not None:
        return use.total * pool.rail_gbps if pool.rail_gbps else 0
    return pool.fabric_gbps


def _default_max(pool: Pool, smallest: str) -> str:
    """8G on large GPUs (two buffers of it fit), 1G on smaller ones; never below the smallest size."""
    machine = pool.machine()
    largest = "8G" if machine is None or machine.gpu_memory_gib >= LARGE_GPU_GIB else "1G"
    return largest if nccl_bytes(largest) >= nccl_bytes(smallest) else smallest


def home_namespace(pool: Pool) -> str:
    """Where the pool's gate (and, by default, its jobs) run: the namespace of its networks (NADs are
    namespaced), else the jobs' default."""
    return pool.networks[0].namespace if pool.networks else DEFAULT_NAMESPACE
