"""Upstream facts, once: what EC2, EKS, Karpenter, pulumi-eks and the charts do, that the components
and the pack both rely on.

Standard library only and no sibling imports, so the pack (``python -m pulumi.policy``, where this
is the top-level ``upstream``) and the components (``mixed_os_racks.policies.upstream``) share it.
Each fact says where it was read.
"""

from __future__ import annotations

from dataclasses import dataclass

# ---- devices and disks ---------------------------------------------------------------------------------

AL2023_ROOT_DEVICE = "/dev/xvda"
"""The root device of the EKS-optimized AL2023 AMIs (and of those built with awslabs/amazon-eks-ami)."""
BOTTLEROCKET_OS_DEVICE = "/dev/xvda"
BOTTLEROCKET_DATA_DEVICE = "/dev/xvdb"
BOTTLEROCKET_OS_VOLUME_GIB = 4
"""Bottlerocket boots from a small OS volume and keeps images and pods on a data volume
(Karpenter's default mappings for ``amiFamily: Bottlerocket``: 4Gi on /dev/xvda, 20Gi on /dev/xvdb)."""
KARPENTER_DEFAULT_ROOT_GIB = {"al2023": 20.0, "al2": 20.0, "bottlerocket": 4.0}
"""Root volume Karpenter gives an EC2NodeClass that sets no ``blockDeviceMappings`` (encrypted gp3)."""
KARPENTER_DEFAULT_MAPPINGS_ENCRYPTED = True
"""Karpenter's default block device mappings set ``encrypted: true``."""
PULUMI_EKS_DEFAULT_DISK_GIB = 20.0
"""pulumi-eks's default ``diskSize``/``nodeRootVolumeSize``."""
EKS_AMI_ROOT_SNAPSHOT_GIB = 20
"""AMIs built with awslabs/amazon-eks-ami have a 20 GiB root snapshot unless the build changes it."""
SEEDS_NODE_DISK_GIB = 20
"""The seeds' ``node_disk`` default and minimum for managed node groups."""
PUBLIC_AMI_SNAPSHOTS_ENCRYPTED = False
"""EC2 cannot make an AMI with encrypted snapshots public, so the EKS-optimized and Bottlerocket AMIs
that aliases and ``amiType`` select have unencrypted root snapshots: their volumes are encrypted only
when the launch asks for it or the account encrypts new volumes by default."""

# ---- Karpenter --------------------------------------------------------------------------------------------

DISCOVERY_TAG = "karpenter.sh/discovery"
KARPENTER_NODE_ROLE_PREFIX = "KarpenterNodeRole-"


def karpenter_node_role_name(cluster_name: str) -> str:
    """Karpenter's getting-started node role name, ``KarpenterNodeRole-<cluster>``."""
    return f"{KARPENTER_NODE_ROLE_PREFIX}{cluster_name}"


# ---- charts ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chart:
    name: str
    version: str
    repo: str


NVIDIA_DEVICE_PLUGIN = Chart("nvidia-device-plugin", "0.20.0", "https://nvidia.github.io/k8s-device-plugin")
DCGM_EXPORTER = Chart("dcgm-exporter", "4.8.2", "https://nvidia.github.io/dcgm-exporter/helm-charts")
