"""``Rack``: the whole rack, from a validated ``RackConfig``."""

from __future__ import annotations

import json
from typing import Optional, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from .ami import AmiLookup
from .config import RackConfig
from .karpenter import KarpenterPool, KarpenterPoolArgs


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
        self.register_outputs({"nodePools": sorted(self.pools)})
