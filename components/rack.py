"""``Rack``: the whole rack, from a validated ``RackConfig``."""

from __future__ import annotations

import json
from typing import Optional, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from .ami import AmiLookup
from .config import NodeGroupConfig, RackConfig
from .gpu import GpuObservability, GpuObservabilityArgs, NvidiaDevicePlugin, NvidiaDevicePluginArgs
from .karpenter import KarpenterPool, KarpenterPoolArgs
from .nodegroup import ExistingCluster, NodeGroup, NodeGroupArgs


class RackArgs(TypedDict, total=False):
    config: RackConfig
    """The validated rack config (``load_stack_config()`` or ``parse_rack_config({...})``)."""
    k8s_provider: k8s.Provider
    """Where the rack's Kubernetes objects go. Default: a provider for ``config.cluster_name``."""


def cluster_kubeconfig(cluster_name: str) -> pulumi.Output[str]:
    """A kubeconfig for an existing EKS cluster that authenticates with ``aws eks get-token``."""
    cluster = aws.eks.get_cluster_output(name=cluster_name)

    def render(args: list[str]) -> str:
        endpoint, ca_data = args
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": cluster_name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
                "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
                "current-context": cluster_name,
                "users": [
                    {
                        "name": cluster_name,
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1beta1",
                                "command": "aws",
                                "args": ["eks", "get-token", "--cluster-name", cluster_name, "--output", "json"],
                            }
                        },
                    }
                ],
            }
        )

    return pulumi.Output.all(cluster.endpoint, cluster.certificate_authorities[0].data).apply(render)


class Rack(pulumi.ComponentResource):
    """A rack: the default workload pool, every additional Karpenter pool, and the GPU tier."""

    pools: dict[str, KarpenterPool]
    node_groups: dict[str, NodeGroup]
    """Managed node groups and build groups, by component name (``<rack>-ng-<id>``, ``<rack>-build-<id>``)."""
    device_plugin: Optional[NvidiaDevicePlugin]
    gpu_observability: Optional[GpuObservability]

    def __init__(self, name: str, args: RackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("rack:index:Rack", name, None, opts)
        config = args["config"]
        provider = args.get("k8s_provider") or k8s.Provider(
            f"{name}-k8s",
            kubeconfig=cluster_kubeconfig(config.cluster_name),
            opts=pulumi.ResourceOptions(parent=self),
        )
        child = pulumi.ResourceOptions(parent=self, providers={"kubernetes": provider})
        amis = AmiLookup(pulumi.InvokeOptions(parent=self))

        self.pools = {
            pool.name: KarpenterPool(
                f"{name}-{pool.name}",
                KarpenterPoolArgs(
                    pool=pool,
                    cluster_name=config.cluster_name,
                    node_role=config.karpenter_node_role,
                    ami_lookup=amis,
                ),
                opts=child,
            )
            for pool in config.pools()
        }

        groups: list[tuple[str, NodeGroupConfig]] = [
            (f"{name}-ng-{g.id}", g) for g in config.additional_node_groups_config
        ] + [(f"{name}-build-{g.id}", g) for g in config.additional_build_groups_config]
        self.node_groups = {}
        if groups:
            read = pulumi.ResourceOptions(parent=self)
            cluster = ExistingCluster.read(f"{name}-cluster", config.cluster_name, provider, read)
            shared_role = (
                aws.iam.Role.get(f"{name}-node-group-role", config.node_group_role_name, opts=read)
                if config.node_group_role_name
                else None
            )
            for group_name, group in groups:
                group_args = NodeGroupArgs(
                    group=group,
                    cluster=cluster,
                    default_disk=config.node_disk,
                    rack=config.cluster_name,
                    ami_lookup=amis,
                )
                if shared_role is not None:
                    group_args["node_role"] = shared_role
                self.node_groups[group_name] = NodeGroup(group_name, group_args, opts=child)

        self.device_plugin = None
        if config.nvidia_device_plugin_enable:
            self.device_plugin = NvidiaDevicePlugin(
                f"{name}-nvidia-device-plugin",
                NvidiaDevicePluginArgs(time_slicing_replicas=config.nvidia_device_time_slicing_replicas),
                opts=child,
            )
        self.gpu_observability = None
        if config.gpu_observability_enable:
            self.gpu_observability = GpuObservability(
                f"{name}-gpu-observability",
                GpuObservabilityArgs(
                    version=config.gpu_observability_chart_version,
                    service_monitor=config.gpu_observability_service_monitor,
                ),
                opts=child,
            )
        self.register_outputs({"nodePools": sorted(self.pools), "nodeGroups": sorted(self.node_groups)})
