"""Upstream facts, once: what EC2, EKS, Karpenter, pulumi-eks and the charts do, that the components
and the pack both rely on.

Standard library only and no sibling imports, so the pack (``python -m pulumi.policy``, where this
is the top-level ``upstream``) and the components (``mixed_os_racks.pack.upstream``) share it.
Each fact says where it was read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

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
KARPENTER_VOLUME_MAX_GIB = 59000
"""The EC2NodeClass CRD's pattern for ``blockDeviceMappings[].ebs.volumeSize`` stops at 59000Gi (v1.14.1)."""
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


def bounded_name(prefix: str, base: str, limit: int, suffix: str = "") -> str:
    """``prefix + base + suffix``, or, past an AWS name limit, ``base`` shortened and marked with a hash
    of the whole name, so long cluster names still give distinct, stable names."""
    whole = f"{prefix}{base}{suffix}"
    if len(whole) <= limit:
        return whole
    digest = hashlib.sha256(whole.encode()).hexdigest()[:8]
    room = limit - len(prefix) - len(suffix) - len(digest) - 1
    return f"{prefix}{base[:room]}-{digest}{suffix}"


IAM_ROLE_NAME_MAX = 64


def karpenter_node_role_name(cluster_name: str) -> str:
    """Karpenter's getting-started node role name, ``KarpenterNodeRole-<cluster>``, within IAM's 64
    characters (a longer cluster name is shortened and marked with a hash, the same name wherever the
    rack derives it: the role it creates, the role its pools name, the ARN it exports)."""
    return bounded_name(KARPENTER_NODE_ROLE_PREFIX, cluster_name, IAM_ROLE_NAME_MAX)


# ---- charts ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chart:
    name: str
    version: str
    repo: str


KARPENTER_MIN_K8S_MINOR = 29
"""Karpenter v1's compatibility matrix (karpenter.sh, Upgrading > Compatibility) starts at Kubernetes
1.29: no Karpenter 1.x release supports an older control plane."""
KARPENTER_MAX_K8S_MINOR = 36
"""The newest Kubernetes minor Karpenter 1.14.1 supports: the v1.14 compatibility matrix
(karpenter-provider-aws website/content/en/v1.14/upgrading/compatibility.md) ends at 1.36, which
needs Karpenter 1.13 or later."""
KARPENTER_SELECTOR_TERMS_MAX = 30
"""The EC2NodeClass CRD's ``maxItems`` for ``subnetSelectorTerms`` and ``securityGroupSelectorTerms`` (v1.14.1)."""

# ---- what the system lane must hold -------------------------------------------------------------------------

KARPENTER_CONTROLLER_REQUESTS = (1000, 1024)
"""CPU millicores and memory MiB each Karpenter controller replica requests: what Karpenter's v1.14
getting-started guide gives it (1 CPU, 1Gi), and the rack sets. Its chart's required pod
anti-affinity puts each replica on a node of its own."""
COREDNS_REQUESTS = (100, 70)
"""CPU millicores and memory MiB each CoreDNS replica requests (the CoreDNS add-on manifest: 100m, 70Mi)."""
COREDNS_REPLICAS = 2
"""The CoreDNS add-on's default replicas; its anti-affinity is only preferred, so both may share a node."""
SYSTEM_DAEMONSETS_MARGIN = (250, 256)
"""CPU millicores and memory MiB the rack keeps free on a system node for its DaemonSets (VPC CNI,
kube-proxy, the Pod Identity agent): a conservative margin of the rack's own, not read from their
manifests."""

KARPENTER_CHART = Chart("oci://public.ecr.aws/karpenter/karpenter", "1.14.1", "")
KARPENTER_CRD_CHART = Chart("oci://public.ecr.aws/karpenter/karpenter-crd", "1.14.1", "")
"""Karpenter's charts are OCI artifacts: the chart reference is the whole ``oci://`` address."""
NVIDIA_DEVICE_PLUGIN = Chart("nvidia-device-plugin", "0.20.0", "https://nvidia.github.io/k8s-device-plugin")
DCGM_EXPORTER = Chart("dcgm-exporter", "4.8.2", "https://nvidia.github.io/dcgm-exporter/helm-charts")
CLUSTER_AUTOSCALER = Chart("cluster-autoscaler", "9.59.0", "https://kubernetes.github.io/autoscaler")
"""The Cluster Autoscaler chart (kubernetes/autoscaler, ``cluster-autoscaler/charts/cluster-autoscaler``;
tag ``cluster-autoscaler-chart-9.59.0``). Its appVersion (1.35.0) is not the binary the rack runs: the
image tag follows the cluster's minor (``CLUSTER_AUTOSCALER_RELEASES``)."""
CLUSTER_AUTOSCALER_IMAGE = "registry.k8s.io/autoscaling/cluster-autoscaler"
CLUSTER_AUTOSCALER_RELEASES = {
    "1.32": "v1.32.7",
    "1.33": "v1.33.6",
    "1.34": "v1.34.5",
    "1.35": "v1.35.2",
    "1.36": "v1.36.1",
}
"""Kubernetes minor -> the newest Cluster Autoscaler release of that minor (git tags
``cluster-autoscaler-X.Y.Z`` of kubernetes/autoscaler, 2026-07). The autoscaler's minor follows
Kubernetes' minor: its README's release table pairs each Kubernetes minor with the same CA minor."""
METRICS_SERVER = Chart("metrics-server", "3.13.1", "https://kubernetes-sigs.github.io/metrics-server/")
"""metrics-server's chart (kubernetes-sigs/metrics-server ``charts/metrics-server``, tag
``metrics-server-helm-chart-3.13.1``, appVersion 0.8.1)."""


def cluster_autoscaler_release(version: str) -> Optional[str]:
    """The Cluster Autoscaler image tag for a Kubernetes minor (``1.34`` -> ``v1.34.5``), or None."""
    return CLUSTER_AUTOSCALER_RELEASES.get(version)


# ---- partitions ------------------------------------------------------------------------------------

PARTITIONS = (("cn-", "aws-cn"), ("us-gov-", "aws-us-gov"), ("us-isob-", "aws-iso-b"), ("us-isof-", "aws-iso-f"),
              ("us-iso-", "aws-iso"), ("eu-isoe-", "aws-iso-e"))
"""Region prefix -> partition, as the AWS SDKs' partitions table (aws-sdk-go-v2
``internal/endpoints/awsrulesfn/partitions.json``) matches them; every other region is ``aws``."""


def partition_of(region: str) -> str:
    """The partition a region belongs to (``us-gov-west-1`` -> ``aws-us-gov``)."""
    for prefix, partition in PARTITIONS:
        if region.startswith(prefix):
            return partition
    return "aws"


def ec2_principal(partition: str) -> str:
    """The EC2 service principal in a partition's trust policies (``ec2.amazonaws.com.cn`` in China)."""
    return "ec2.amazonaws.com.cn" if partition == "aws-cn" else "ec2.amazonaws.com"


EKS_CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"


def access_policy_arn(partition: str, policy: str = EKS_CLUSTER_ADMIN_POLICY) -> str:
    """An EKS access policy's ARN: no region or account, owner ``aws``."""
    return f"arn:{partition}:eks::aws:cluster-access-policy/{policy}"


# ---- EBS volumes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VolumeLimits:
    """What EC2 accepts for one EBS volume type (CreateVolume / EbsBlockDevice in botocore 1.44.8's
    EC2 model, 2026-11-20; the ratios from the EBS user guide's volume-type pages)."""

    size_gib: tuple[int, int]
    iops: Optional[tuple[int, int]] = None
    """Provisioned IOPS range; None: IOPS cannot be set (gp2: 3 per GiB, fixed)."""
    iops_required: bool = False
    """io1 and io2: without ``iops`` EC2 refuses the launch (InvalidParameterCombination)."""
    iops_per_gib: Optional[int] = None
    """At most this many provisioned IOPS per GiB of volume."""
    baseline_iops: int = 0
    """IOPS every volume of the type gets whatever its size (gp3: 3,000)."""
    throughput_mibs: Optional[tuple[int, int]] = None
    """Provisioned throughput range (gp3 only)."""
    throughput_per_iops: Optional[float] = None
    """At most this many MiB/s per provisioned IOPS (gp3: 0.25)."""
    baseline_throughput_mibs: int = 0


EBS_VOLUMES = {
    "gp2": VolumeLimits(size_gib=(1, 16384)),
    "gp3": VolumeLimits(size_gib=(1, 65536), iops=(3000, 80000), iops_per_gib=500, baseline_iops=3000,
                        throughput_mibs=(125, 2000), throughput_per_iops=0.25, baseline_throughput_mibs=125),
    "io1": VolumeLimits(size_gib=(4, 16384), iops=(100, 64000), iops_required=True, iops_per_gib=50),
    "io2": VolumeLimits(size_gib=(4, 65536), iops=(100, 256000), iops_required=True, iops_per_gib=1000),
}
