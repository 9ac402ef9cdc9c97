"""``Rack``: the whole rack, from a ``RackSpec``."""

from __future__ import annotations

from typing import NotRequired, Optional, Required, TypedDict

import pulumi
import pulumi_aws as aws

from .ami import AmiLookup
from .args import checked
from .cluster import ClusterRef
from .gpu import GpuObservability, GpuObservabilityArgs, NvidiaDevicePlugin, NvidiaDevicePluginArgs
from .karpenter import KarpenterPool, KarpenterPoolArgs
from .nodegroup import NodeGroup, NodeGroupArgs
from .specs import RackSpec


class RackArgs(TypedDict, total=False):
    spec: Required[RackSpec]
    """The rack: ``load_stack_config()`` or ``parse_rack_config({...})``."""
    cluster: NotRequired[ClusterRef]
    """The cluster. Default: the existing EKS cluster ``spec.cluster_name`` (``ClusterRef.existing``
    named after the rack: a provider ``<name>-k8s``, the cluster read as ``<name>-cluster``)."""


class Rack(pulumi.ComponentResource):
    """A rack: the default workload pool, every additional Karpenter pool, and the GPU tier."""

    cluster: ClusterRef
    pools: dict[str, KarpenterPool]
    """Karpenter pools by lane name: the pool's name (``workload``, ``gpu``), as every message names it."""
    node_groups: dict[str, NodeGroup]
    """Managed node groups and build lanes by lane name: the group's name (``<rack>-ng-<id>``,
    ``<rack>-build-<id>``), as every message names it."""
    device_plugin: Optional[NvidiaDevicePlugin]
    gpu_observability: Optional[GpuObservability]

    def __init__(self, name: str, args: RackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("rack:index:Rack", name, None, opts)
        args = checked(self, name, args, RackArgs)  # type: ignore[assignment]
        spec: RackSpec = args["spec"]
        child = pulumi.ResourceOptions(parent=self)
        self.cluster = args.get("cluster") or ClusterRef.existing(name, spec.cluster_name, opts=child)
        amis = AmiLookup(pulumi.InvokeOptions(parent=self))

        pool_args = KarpenterPoolArgs(cluster=self.cluster, ami_lookup=amis)  # type: ignore[typeddict-item]
        if spec.karpenter_node_role:  # else the pools' default, KarpenterNodeRole-<cluster_name>
            pool_args["node_role"] = aws.iam.Role.get(f"{name}-karpenter-node-role", spec.karpenter_node_role, opts=child)
        self.pools = {
            pool.name: KarpenterPool(f"{name}-{pool.name}", KarpenterPoolArgs(pool_args, pool=pool), opts=child)
            for pool in spec.pools
        }

        shared_role = (
            aws.iam.Role.get(f"{name}-node-group-role", spec.node_group_role, opts=child) if spec.node_group_role else None
        )
        self.node_groups = {}
        for group in spec.node_groups:
            lane = group.name or ""
            group_args = NodeGroupArgs(group=group, cluster=self.cluster, rack=spec.cluster_name, ami_lookup=amis)
            if shared_role is not None:
                group_args["node_role"] = shared_role
            self.node_groups[lane] = NodeGroup(lane, group_args, opts=child)

        self.device_plugin = None
        if spec.device_plugin is not None:
            self.device_plugin = NvidiaDevicePlugin(
                f"{name}-nvidia-device-plugin",
                NvidiaDevicePluginArgs(cluster=self.cluster, time_slicing_replicas=spec.device_plugin.time_slicing_replicas),
                opts=child,
            )
        self.gpu_observability = None
        if spec.gpu_observability is not None:
            self.gpu_observability = GpuObservability(
                f"{name}-gpu-observability",
                GpuObservabilityArgs(
                    cluster=self.cluster,
                    version=spec.gpu_observability.version,
                    service_monitor=spec.gpu_observability.service_monitor,
                ),
                opts=child,
            )
        self.register_outputs({"nodePools": sorted(self.pools), "nodeGroups": sorted(self.node_groups)})
