"""GkeCluster: a GKE Standard cluster, its system pool, one node pool per GPU pool, the VPCs of the GPUDirect
pools' extra NICs, and a Kubernetes provider."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_gcp import compute, container, projects

from components import gpudirect
from components.gcp import gpunetworks, nodepool, upgrades
from components.gcp.gpunetworks import NetworkRef
from components.gcp.identity import GkeWorkloadIdentities
from components.gcp.kubeconfig import kubeconfig
from components.gcp.storage import GcpStorage
from components.models import GcpClusterSpec, NodePoolSpec, VolumeSpec
from components.models.identity import ServiceAccountSpec
from components.pool import Pool

TOKEN = "gpu-training:index:GkeCluster"

# Node pool names are fixed (they become the cloud.google.com/gke-nodepool label), so a pool that must be
# replaced is deleted first; GPU capacity for a second copy is rarely there anyway. A changed initial node
# count would replace the pool ("Changing this will force recreation"), so it counts at creation only.
_POOL_OPTIONS = {"delete_before_replace": True, "ignore_changes": ["initial_node_count"]}


def addons_config(volumes: list[VolumeSpec]) -> dict[str, Any]:
    """GKE's add-ons: the Filestore CSI driver always, the Cloud Storage FUSE CSI driver when a volume is gcs, the
    Managed Lustre CSI driver when one is managed-lustre (GKE runs and upgrades them with the cluster, so they have
    no version of ours)."""
    config: dict[str, Any] = {"gcp_filestore_csi_driver_config": {"enabled": True}}
    backends = {v.backend for v in volumes}
    if "gcs" in backends:
        config["gcs_fuse_csi_driver_config"] = {"enabled": True}
    if "managed-lustre" in backends:
        # Lustre's own port (988) and multi-NIC left at GKE's defaults: the instances are made without
        # gke_support_enabled (components/gcp/storage.py).
        config["lustre_csi_driver_config"] = {"enabled": True}
    return config


class GkeCluster(pulumi.ComponentResource):
    """A GKE Standard cluster with Workload Identity and Filestore CSI (Cloud Storage FUSE CSI for gcs volumes, Managed
    Lustre CSI for managed-lustre ones), its system pool, its GPU pools and their GPUDirect networks, and the buckets
    and Managed Lustre instances of its volumes."""

    cluster: container.Cluster
    """The GKE cluster."""
    system_pool: container.NodePool
    """The untainted pool the add-ons run on."""
    node_pools: dict[str, pulumi.Resource]
    """The GPU node pools, by pool name."""
    workload_policies: dict[str, compute.ResourcePolicy]
    """The "1x72" workload policy of each rack-scale pool (A4X, A4X Max), by pool name."""
    gpu_networks: dict[str, compute.Subnetwork]
    """The subnets of the GPUDirect pools' extra NICs, by network name (vpc1, gvnic-1, rdma-0 …); empty
    when no pool has GPUDirect."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig using gke-gcloud-auth-plugin (secret)."""
    provider: k8s.Provider
    """The Kubernetes provider for in-cluster objects; it waits for the system pool."""

    def __init__(
        self,
        name: str,
        spec: GcpClusterSpec,
        pools: list[tuple[NodePoolSpec, Pool]],
        opts: pulumi.ResourceOptions | None = None,
        *,
        volumes: list[VolumeSpec] | None = None,
        monitoring: dict[str, Any] | None = None,
        service_accounts: list[ServiceAccountSpec] | None = None,
    ) -> None:
        """The cluster named in `spec`, a node pool for each (spec, resolved pool) pair, and the buckets and instances
        of the gcs and managed-lustre `volumes`; `monitoring` is its monitoring config (GKE's managed DCGM,
        components/observability/gke.py), None for GKE's default. Each of `service_accounts` that sets `gcp` is
        linked to its Google service account (`identities`: what its ServiceAccount waits for)."""
        super().__init__(TOKEN, name, {}, opts)
        volumes = list(volumes or [])
        location = spec.zone or spec.region
        gpu_pools = gpunetworks.gpudirect_pools(pool for _, pool in pools)
        # Multi-networking and Dataplane V2 are fixed when a cluster is made: the first GPUDirect pool
        # replaces the cluster that lacks them (delete_before_replace below).
        gpudirect_args = gpunetworks.cluster_args(pool for _, pool in pools)
        self.cluster = container.Cluster(
            name,
            name=spec.name,
            project=spec.project,
            location=location,
            # A minor alone becomes GKE's newest patch of it, past every GPUDirect machine's least patch
            # (components/gcp/pools.py checks an exact version against it).
            min_master_version=spec.kubernetes_version,
            release_channel={"channel": spec.release_channel},
            maintenance_policy=upgrades.maintenance_policy(spec, has_gpu_pools=bool(pools)),
            # Node pools are separate resources; GKE needs one node to create a cluster, then drops it.
            remove_default_node_pool=True,
            initial_node_count=1,
            network=spec.network,
            subnetwork=spec.subnetwork,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy={},
            workload_identity_config={"workload_pool": f"{spec.project}.svc.id.goog"},
            addons_config=addons_config(volumes),
            monitoring_config=monitoring,
            # The cluster holds no data that outlives it (checkpoints live on retained volumes), and the
            # provider's default (true) makes every `pulumi destroy` or replacement fail until it is flipped.
            deletion_protection=False,
            **gpudirect_args,
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
        )
        # The links name the cluster's workload pool, which exists once the cluster does.
        self.identities: dict[str, list[pulumi.Resource]] = {}
        if any(account.gcp is not None for account in service_accounts or []):
            self.identities = GkeWorkloadIdentities(
                f"{name}-workload-identity",
                list(service_accounts or []),
                spec,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster]),
            ).waits
        self.gpu_networks = {}
        refs = self._gpu_networks(name, spec, gpu_pools)
        # GPU pools stream their images (gcfs_config), which needs the Container File System API. It is
        # left on when the stack goes: other clusters of the project may use it.
        streaming = projects.Service(
            f"{name}-image-streaming",
            project=spec.project,
            service="containerfilesystem.googleapis.com",
            disable_on_destroy=False,
            opts=pulumi.ResourceOptions(parent=self),
        )
        pool_opts = pulumi.ResourceOptions(parent=self, **_POOL_OPTIONS)
        gpu_pool_opts = pulumi.ResourceOptions(parent=self, depends_on=[streaming], **_POOL_OPTIONS)
        self.system_pool = container.NodePool(
            f"{name}-system",
            cluster=self.cluster.name,
            project=spec.project,
            **nodepool.system_pool_args(spec.system_pool, cluster_location=location, zone=spec.zone),
            opts=pool_opts,
        )
        self.workload_policies = self._workload_policies(name, spec, [pool for _, pool in pools])
        self.node_pools = {
            pool.name: container.NodePool(
                f"{name}-{pool.name}",
                cluster=self.cluster.name,
                project=spec.project,
                **nodepool.node_pool_args(
                    pool_spec,
                    pool,
                    cluster_location=location,
                    zone=spec.zone,
                    gpu_networks=refs,
                    workload_policy=policy.name if (policy := self.workload_policies.get(pool.name)) else None,
                ),
                opts=gpu_pool_opts,
            )
            for pool_spec, pool in pools
        }
        # The context name gcloud's get-credentials writes, so the file merges cleanly with the user's own.
        context = f"gke_{spec.project}_{location}_{spec.name}"
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.cluster.endpoint, self.cluster.master_auth.cluster_ca_certificate).apply(
                lambda values: kubeconfig(context, values[0], values[1])
            )
        )
        self.provider = k8s.Provider(
            f"{name}-kubernetes",
            kubeconfig=self.kubeconfig,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_pool]),
        )
        # Filestore volumes are provisioned by GKE's CSI add-on through their StorageClass; gcs volumes need their
        # buckets, grants and (for buckets made here) PersistentVolumes; managed-lustre volumes their instances and
        # PersistentVolumes.
        self.storage: GcpStorage | None = None
        self.storage_objects: list[pulumi.Resource] = []
        if any(v.backend in ("gcs", "managed-lustre") for v in volumes):
            self.storage = GcpStorage(
                f"{name}-storage",
                volumes,
                project=spec.project,
                region=spec.region,
                cluster=spec.name,
                kubernetes=self.provider,
                network=spec.network,
                default_zone=gpunetworks.first_zone((pool for _, pool in pools), spec.zone),
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.storage_objects = list(self.storage.objects)
        self.register_outputs({"kubeconfig": self.kubeconfig, "endpoint": self.cluster.endpoint})

    def _workload_policies(
        self, name: str, spec: GcpClusterSpec, pools: list[Pool]
    ) -> dict[str, compute.ResourcePolicy]:
        """The "1x72" workload policy of each rack-scale pool with compact placement, by pool name."""
        policies: dict[str, compute.ResourcePolicy] = {}
        for pool in pools:
            args = nodepool.workload_policy_args(pool, project=spec.project, region=spec.region)
            if args is not None:
                # Its name is fixed, and a node pool names it: a replacement deletes the old one first.
                policies[pool.name] = compute.ResourcePolicy(
                    f"{name}-{pool.name}-workload-policy",
                    name=f"{spec.name}-{pool.name}-1x72",
                    **args,
                    opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
                )
        return policies

    def _gpu_networks(self, name: str, spec: GcpClusterSpec, gpu_pools: list[Pool]) -> dict[str, NetworkRef]:
        """A VPC, subnet and (but for RoCE) internal firewall rule for every extra network of the GPUDirect
        pools, made once for all of them, kept in `gpu_networks`; how a node pool names each, by network name."""
        cidr = spec.gpu_networks.cidr
        roce_zone = gpunetworks.roce_zone(gpu_pools, spec.zone)
        # Their names are fixed, so a replacement (another RoCE zone or range) must delete the old one first.
        child = pulumi.ResourceOptions(parent=self, delete_before_replace=True)
        refs: dict[str, NetworkRef] = {}
        for vpc, nets in gpunetworks.vpcs(gpudirect.cluster_networks(gpu_pools)).items():
            network = compute.Network(
                f"{name}-{vpc}",
                **gpunetworks.network_args(spec.name, spec.project, nets, roce_zone=roce_zone),
                opts=child,
            )
            firewall = gpunetworks.firewall_args(spec.name, spec.project, nets, cidr)
            if firewall is not None:
                compute.Firewall(
                    f"{name}-{vpc}-internal",
                    network=network.id,
                    **firewall,
                    opts=child,
                )
            for net in nets:
                if net.metal:
                    # The metal profile makes the VPC's one subnet itself; every RDMA NIC attaches it.
                    refs[net.name] = NetworkRef(network.name, network.name.apply(gpunetworks.metal_subnet))
                    continue
                subnet = compute.Subnetwork(
                    f"{name}-{net.name}-subnet",
                    network=network.id,
                    **gpunetworks.subnetwork_args(spec.name, spec.project, spec.region, net, cidr),
                    opts=child,
                )
                self.gpu_networks[net.name] = subnet
                # Names, as GKE's additional node network configs take them; the subnet's Output makes the
                # node pool wait for it.
                refs[net.name] = NetworkRef(network.name, subnet.name)
        return refs
