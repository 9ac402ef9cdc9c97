"""The vocabulary the components write and the policy pack reads: labels, taints, resource types.

Each name is defined here once. The components put these labels, taints and annotations on what
they create; the pack (``pack/``) recognises lanes and workloads by them. The labels and taints
are the seeds' (Convox racks'), so workloads written for a Convox rack schedule the same way here.
Pure: standard library only.
"""

from __future__ import annotations

from typing import Optional

# ---- node labels and taints (the seeds' contract) ----------------------------------------------------

NODEPOOL_LABEL = "convox.io/nodepool"
"""On a Karpenter pool's nodes: the pool's name."""
NODEGROUP_LABEL = "convox.io/label"
"""On a managed node group's nodes: the group's ``label``."""
LANE_KEYS = (NODEPOOL_LABEL, NODEGROUP_LABEL)
"""Selector keys that name a lane; selecting one tolerates its ``dedicated-node=<value>`` taint."""
GPU_VENDOR_LABEL = "convox.io/gpu-vendor"
"""On GPU lanes' nodes; the device plugin's and dcgm-exporter's affinity selects it."""
GPU_VENDOR_NVIDIA = "nvidia"
GPU_TAINT_KEY = "nvidia.com/gpu"
"""GPU lanes are tainted ``nvidia.com/gpu=true:NoSchedule``."""
DEDICATED_TAINT_KEY = "dedicated-node"
"""``dedicated`` lanes are tainted ``dedicated-node=<pool name or group label>:NoSchedule``."""
BUILD_LABEL = "convox-build"
"""On build lanes' nodes: ``convox-build=true``."""
BUILD_TAINT_KEY = "dedicated"
BUILD_TAINT_VALUE = "build"
"""Build lanes are tainted ``dedicated=build:NoSchedule``."""
SYSTEM_NODE_LABEL = "convox.io/system-node"
"""The system lane's nodes carry it as a label and as a ``NoSchedule`` taint, both ``true``."""
SYSTEM_SELECTOR = {SYSTEM_NODE_LABEL: "true"}
SYSTEM_TOLERATION = {"key": SYSTEM_NODE_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
"""What the rack's own add-ons (Karpenter, CoreDNS, ...) run with: on the system lane, and only there."""
KARPENTER_POOL_LABEL = "karpenter.sh/nodepool"
"""Karpenter labels every node it launches with its NodePool's name."""
RESERVED_POOL_LABELS = (NODEPOOL_LABEL, NODEGROUP_LABEL, GPU_VENDOR_LABEL, SYSTEM_NODE_LABEL)
"""Labels only the rack writes: a pool's own name, a node group's label, the GPU vendor the device
plugin selects, the system lane the rack's add-ons run on. A pool's ``labels`` may not set them."""

EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}
"""The EKS API's spelling of taint effects -> Kubernetes'. Outputs show Kubernetes' spelling."""
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
"""Effects that keep a pod that does not tolerate them off a node."""


def effect(value: str) -> str:
    """A taint effect in Kubernetes' spelling, whichever spelling it came in."""
    return EKS_EFFECTS.get(value, value)


# ---- GPUs ------------------------------------------------------------------------------------------------

NVIDIA_GPU = "nvidia.com/gpu"
AMD_GPU = "amd.com/gpu"
GPU_RESOURCES = {"nvidia": NVIDIA_GPU, "nvidia.com": NVIDIA_GPU, "amd": AMD_GPU, "amd.com": AMD_GPU}
"""The seeds' ``scale.gpu.vendor`` -> the extended resource (convox/convox ``provider/k8s/helpers.go``,
``gpuResourceKey``); any other vendor, or none, is NVIDIA's."""


def gpu_resource(vendor: Optional[str]) -> str:
    """``nvidia``/``nvidia.com`` -> ``nvidia.com/gpu``, ``amd``/``amd.com`` -> ``amd.com/gpu``, else
    ``nvidia.com/gpu``."""
    return GPU_RESOURCES.get(vendor or "", NVIDIA_GPU)


def dedicated_toleration(value: str) -> dict[str, str]:
    """The toleration a workload selecting lane ``value`` gets: ``dedicated-node=<value>:NoSchedule``."""
    return {"key": DEDICATED_TAINT_KEY, "operator": "Equal", "value": value, "effect": "NoSchedule"}


def gpu_toleration(resource: str) -> dict[str, str]:
    """The toleration a workload requesting GPUs gets: the vendor resource's taint, any value."""
    return {"key": resource, "operator": "Exists", "effect": "NoSchedule"}


# ---- what the components record for the pack ----------------------------------------------------------------

SERVICE_ANNOTATION = "mixed-os-racks/service"
"""Set by the ``Service`` component on its Deployment: messages then name the service, as the seeds do."""
ROOT_SNAPSHOT_ANNOTATION = "mixed-os-racks/ami-root-snapshot-gib"
"""A pinned AMI's root snapshot GiB (a pack sees no invoke results): on EC2NodeClasses and launch templates."""
ROOT_SNAPSHOT_TAG = ROOT_SNAPSHOT_ANNOTATION
ROOT_SNAPSHOT_ENCRYPTED_TAG = "mixed-os-racks/ami-root-snapshot-encrypted"
ENCRYPTION_BY_DEFAULT_TAG = "mixed-os-racks/ebs-encryption-by-default"
CANARY_OF = "mixed-os-racks/canary-of"
"""On a canary lane, the lane it tries a candidate AMI for: an annotation on its EC2NodeClass and NodePool, a tag on
its managed node group. The lane guard lets a canary go without refusing it, and the soak gate counts an AMI a
canary ran as run on that lane."""
CANARY_SUFFIX = "-canary"
"""A canary lane is named after its lane: ``gpu`` -> ``gpu-canary``."""

# ---- resource types ------------------------------------------------------------------------------------------

NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
AUTO_MODE_NODE_CLASS = "kubernetes:eks.amazonaws.com/v1:NodeClass"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
COMPONENT_POOL = "rack:index:KarpenterPool"
"""The ``KarpenterPool`` component; its registered outputs describe its lane."""
COMPONENT_NODE_GROUP = "rack:index:NodeGroup"
"""The ``NodeGroup`` component; its registered outputs describe its lane."""
FORMER_TYPES = {
    "rack:eks:RackCluster": "rack:index:RackCluster",
    "rack:karpenter:KarpenterController": "rack:index:KarpenterController",
    "rack:karpenter:KarpenterPool": COMPONENT_POOL,
    "rack:eks:NodeGroup": COMPONENT_NODE_GROUP,
    "rack:addons:ClusterAutoscaler": "rack:index:ClusterAutoscaler",
    "rack:addons:MetricsServer": "rack:index:MetricsServer",
    "rack:gpu:NvidiaDevicePlugin": "rack:index:NvidiaDevicePlugin",
    "rack:gpu:GpuObservability": "rack:index:GpuObservability",
    "rack:workloads:Service": "rack:index:Service",
}
"""The components' type tokens before the package was hosted (every component of a component provider is in
its ``index`` module) -> today's. Each component aliases its former token, so a stack keeps its URNs; the pack
and the lane guard read either (a recorded state or preview has the former)."""
POOL_TYPES = (COMPONENT_POOL, "rack:karpenter:KarpenterPool")
NODE_GROUP_TYPES = (COMPONENT_NODE_GROUP, "rack:eks:NodeGroup")
COMPONENT_RACK = "rack:index:Rack"
"""The ``Rack`` component; its registered outputs carry the rack's budget (``maxHourlyUsd``)."""
