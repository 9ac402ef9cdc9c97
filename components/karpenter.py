"""``KarpenterPool``: one Karpenter v1 EC2NodeClass plus the NodePool that uses it."""

from __future__ import annotations

from typing import Any, Optional, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from policies import rules

from .ami import AmiLookup
from .config import ConfigError, PoolSpec

BOTTLEROCKET_OS_VOLUME_GIB = 4
DISCOVERY_TAG = "karpenter.sh/discovery"


class KarpenterPoolArgs(TypedDict, total=False):
    pool: PoolSpec
    """The validated pool: its name names the EC2NodeClass and the NodePool."""
    cluster_name: str
    """The EKS cluster; subnets and security groups are found by its ``karpenter.sh/discovery`` tag."""
    node_role: str
    """The IAM role (name) Karpenter's nodes get; default ``KarpenterNodeRole-<cluster_name>``."""
    ami_lookup: AmiLookup
    """Shared AMI look-up, so an AMI pinned by many pools is read once. Default: a private one."""


def _quantity_gib(size: int) -> str:
    return f"{size}Gi"


def _ebs(pool: PoolSpec, size_gib: int, volume_type: Optional[str] = None) -> dict[str, Any]:
    ebs: dict[str, Any] = {
        "volumeSize": _quantity_gib(size_gib),
        "volumeType": volume_type or pool.volume_type,
        "encrypted": True,
        "deleteOnTermination": True,
    }
    if volume_type is None:
        if pool.volume_iops is not None:
            ebs["iops"] = pool.volume_iops
        if pool.volume_throughput is not None:
            ebs["throughput"] = pool.volume_throughput
    return ebs


def node_class_spec(pool: PoolSpec, cluster_name: str, node_role: str) -> dict[str, Any]:
    """The EC2NodeClass spec of a pool (Karpenter ``karpenter.k8s.aws/v1``)."""
    discovery = [{"tags": {DISCOVERY_TAG: cluster_name}}]
    if pool.os == "bottlerocket":
        family = "Bottlerocket"
        selector = [{"alias": "bottlerocket@latest"}]
        # Mappings replace Karpenter's defaults: the OS volume and the data volume both go here.
        volumes = [
            {"deviceName": "/dev/xvda", "ebs": _ebs(pool, BOTTLEROCKET_OS_VOLUME_GIB, "gp3")},
            {"deviceName": "/dev/xvdb", "ebs": _ebs(pool, pool.disk)},
        ]
    else:
        family = "AL2023"
        selector = [{"id": pool.ami_id}] if pool.ami_id else [{"alias": pool.ami_alias}]
        volumes = [{"deviceName": "/dev/xvda", "ebs": _ebs(pool, pool.disk)}]
    return {
        "amiFamily": family,
        "amiSelectorTerms": selector,
        "role": node_role,
        "subnetSelectorTerms": discovery,
        "securityGroupSelectorTerms": discovery,
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
        "blockDeviceMappings": volumes,
        "tags": {DISCOVERY_TAG: cluster_name, rules.NODEPOOL_LABEL: pool.name},
    }


def _requirement(key: str, values: list[str]) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


def node_pool_spec(pool: PoolSpec) -> dict[str, Any]:
    """The NodePool spec of a pool (Karpenter ``karpenter.sh/v1``)."""
    requirements = [
        _requirement("kubernetes.io/os", ["linux"]),
        _requirement("kubernetes.io/arch", pool.arch),
        _requirement("karpenter.sh/capacity-type", pool.capacity_types),
    ]
    if pool.instance_families:
        requirements.append(_requirement("karpenter.k8s.aws/instance-family", pool.instance_families))
    if pool.instance_sizes:
        requirements.append(_requirement("karpenter.k8s.aws/instance-size", pool.instance_sizes))

    labels = dict(pool.labels)
    if pool.is_gpu:
        labels[rules.GPU_VENDOR_LABEL] = rules.GPU_VENDOR_NVIDIA
    labels[rules.NODEPOOL_LABEL] = pool.name  # always wins

    taints: list[dict[str, str]] = []
    if pool.dedicated:
        taints.append({"key": rules.DEDICATED_TAINT_KEY, "value": pool.name, "effect": "NoSchedule"})
    for taint in pool.taints:
        taints.append({k: v for k, v in taint.model_dump().items() if v is not None})

    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.name},
        "requirements": requirements,
        "expireAfter": pool.node_expiry,
    }
    if taints:
        template_spec["taints"] = taints
    spec: dict[str, Any] = {
        "template": {"metadata": {"labels": labels}, "spec": template_spec},
        "limits": {"cpu": str(pool.cpu_limit), "memory": f"{pool.memory_limit_gb}Gi"},
        "disruption": {
            "consolidationPolicy": pool.consolidation_policy,
            "consolidateAfter": pool.consolidate_after,
            "budgets": [{"nodes": pool.disruption_budget_nodes}],
        },
    }
    if pool.weight is not None:
        spec["weight"] = pool.weight
    return spec


class KarpenterPool(pulumi.ComponentResource):
    """A Karpenter pool: an EC2NodeClass and a NodePool, both named after the pool."""

    node_class: k8s.apiextensions.CustomResource
    node_pool: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: KarpenterPoolArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("rack:karpenter:KarpenterPool", name, None, opts)
        pool = args["pool"]
        cluster_name = args["cluster_name"]
        node_role = args.get("node_role") or f"KarpenterNodeRole-{cluster_name}"

        gpu = rules.gpu_families(pool.instance_families)
        problem = gpu and rules.gpu_lane_on_bottlerocket(pool.subject, pool.os, f"instance families {','.join(gpu)}")
        if problem:
            raise ConfigError(problem)
        if pool.ami_id:
            problem = rules.pinned_ami_not_al2023(pool.subject, pool.os) or rules.invalid_ami_id(pool.subject, pool.ami_id)
            if problem:
                raise ConfigError(problem)

        annotations: dict[str, str] = {}
        if pool.ami_id:
            lookup = args.get("ami_lookup") or AmiLookup()
            facts = lookup.check(pool.subject, pool.ami_id, pool.arch, pool.disk)
            if facts.root_snapshot_gib is not None:
                annotations[rules.ROOT_SNAPSHOT_ANNOTATION] = rules.gib(facts.root_snapshot_gib)

        child = pulumi.ResourceOptions(parent=self)
        metadata: dict[str, Any] = {"name": pool.name}
        if annotations:
            metadata["annotations"] = annotations
        self.node_class = k8s.apiextensions.CustomResource(
            f"{name}-nodeclass",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata=metadata,
            spec=node_class_spec(pool, cluster_name, node_role),
            opts=child,
        )
        self.node_pool = k8s.apiextensions.CustomResource(
            f"{name}-nodepool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": pool.name},
            spec=node_pool_spec(pool),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.node_class]),
        )
        self.register_outputs({"nodeClassName": pool.name, "nodePoolName": pool.name})
