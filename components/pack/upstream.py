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
DELETION_PROPAGATION_ANNOTATION = "pulumi.com/deletionPropagationPolicy"
"""pulumi-kubernetes deletes an object with foreground propagation unless this annotation says ``background``
or ``orphan`` (``provider/pkg/metadata/overrides.go``, ``DeletionPropagation``; since v4.12.0, pulumi/pulumi-kubernetes
#3011), then waits up to 10 minutes for the object to be gone (``provider/pkg/await/await.go``, ``Deletion``).
A NodeClaim names its NodePool as owner with ``blockOwnerDeletion`` (kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go``), so a foreground delete of a NodePool lasts
until every node of it has drained; with ``background`` the NodePool goes at once and the garbage collector
deletes its NodeClaims after it."""


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

# ---- EKS Kubernetes versions -------------------------------------------------------------------------------

EKS_VERSION_SUPPORT: dict[str, tuple[str, str]] = {
    "1.29": ("2025-03-23", "2026-03-23"),
    "1.30": ("2025-07-23", "2026-07-23"),
    "1.31": ("2025-11-26", "2026-11-26"),
    "1.32": ("2026-03-23", "2027-03-23"),
    "1.33": ("2026-07-29", "2027-07-29"),
    "1.34": ("2026-12-02", "2027-12-02"),
    "1.35": ("2027-03-27", "2028-03-27"),
}
"""Kubernetes minor -> (end of EKS standard support, end of EKS extended support), UTC dates: the Amazon EKS
Kubernetes release calendar (awsdocs/amazon-eks-user-guide ``latest/ug/versioning/kubernetes-versions.adoc``,
commit 0138560; the same dates on endoflife.date ``products/amazon-eks.md``). 1.35 is from endoflife.date's
Amazon EKS page (endoflife.date/amazon-eks, read when 1.35 was new: released on EKS 2026-01-28, standard
support to 2027-03-27, extended to 2028-03-27; 14 and 26 months on, as the EKS user guide's lifecycle
page says every minor gets). After the end of extended support EKS creates no cluster on the version and
upgrades existing control planes itself. A minor the table does not list (1.36: its dates were not in the
calendar read here) is not judged."""
EKS_VERSION_SOURCE = "the EKS Kubernetes release calendar"


def eks_support(version: str, today: str) -> tuple[str, Optional[str]]:
    """Where a Kubernetes minor stands on EKS on ``today`` (ISO date): ``("standard", None)``,
    ``("extended", <end of standard support>)``, ``("ended", <end of extended support>)``, or
    ``("unknown", None)`` when the calendar does not list it."""
    dates = EKS_VERSION_SUPPORT.get(version)
    if dates is None:
        return "unknown", None
    standard_end, extended_end = dates
    if today >= extended_end:
        return "ended", extended_end
    if today >= standard_end:
        return "extended", standard_end
    return "standard", None


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
"""Karpenter 1.14 is a long-term-support line, July 2026 to July 2027 (karpenter-provider-aws ``SUPPORT.md``,
"LTS versions table", 2026-07-29). 1.14.1 (2026-08-21) is its newest patch the sources here show: the
repositories' tags and release notes read here end at v1.14.1, so no later patch is pinned."""
KARPENTER_CRD_CHART = Chart("oci://public.ecr.aws/karpenter/karpenter-crd", "1.14.1", "")
"""Karpenter's charts are OCI artifacts: the chart reference is the whole ``oci://`` address."""
NVIDIA_DEVICE_PLUGIN = Chart("nvidia-device-plugin", "0.20.0", "https://nvidia.github.io/k8s-device-plugin")
DCGM_EXPORTER = Chart("dcgm-exporter", "4.8.2", "https://nvidia.github.io/dcgm-exporter/helm-charts")
CLUSTER_AUTOSCALER = Chart("cluster-autoscaler", "9.59.0", "https://kubernetes.github.io/autoscaler")
"""The Cluster Autoscaler chart (kubernetes/autoscaler, ``cluster-autoscaler/charts/cluster-autoscaler``;
tag ``cluster-autoscaler-chart-9.59.0``). Its appVersion (1.35.0) is not the binary the rack runs: the
image tag follows the cluster's minor (``CLUSTER_AUTOSCALER_RELEASES``)."""
CLUSTER_AUTOSCALER_IMAGE = "registry.k8s.io/autoscaling/cluster-autoscaler"
CLUSTER_AUTOSCALER_GPU_LABEL = "k8s.amazonaws.com/accelerator"
"""The label by which the Cluster Autoscaler's AWS provider knows a GPU node before its GPUs are advertised
(kubernetes/autoscaler ``cluster-autoscaler/cloudprovider/aws/aws_cloud_provider.go``, ``GPULabel``; the
helper that reads it, ``NodeHasGpu``, is kubernetes-sigs/cluster-autoscaler ``pkg/utils/gpu/gpu.go``: the
label, or a GPU resource already allocatable). Without it a new GPU node, whose device plugin has not
started, looks like a node without GPUs, the pending GPU pod still fits nowhere, and the autoscaler scales
out again (its AWS README warns of this). Its values name the GPU (``availableGPUTypes`` there:
``nvidia-tesla-k80``, ``-p100``, ``-v100``, ``-t4``, ``-a100``, ``nvidia-a10g``, ``nvidia-l4``,
``nvidia-l40s``); any value marks the node as a GPU node, a value outside the list only reads as
``not-listed`` in its metrics."""
CLUSTER_AUTOSCALER_GPU_TYPES = {"K80": "nvidia-tesla-k80", "V100": "nvidia-tesla-v100", "T4": "nvidia-tesla-t4",
                                "A100": "nvidia-tesla-a100", "A10G": "nvidia-a10g", "L4": "nvidia-l4",
                                "L40S": "nvidia-l40s"}
"""GPU model (``instances.Family.gpu_model``) -> the autoscaler's own name for it, where it has one."""
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
              ("us-iso-", "aws-iso"), ("eu-isoe-", "aws-iso-e"), ("eusc-", "aws-eusc"))
"""Region prefix -> partition, as the AWS SDKs' partitions table matches them (botocore
``botocore/data/partitions.json``, 2026-08: ``regionRegex`` of each partition; the AWS European
Sovereign Cloud is ``aws-eusc``, its regions ``eusc-de-*``, today ``eusc-de-east-1``); every other region is ``aws``."""
DNS_SUFFIXES = {"aws-cn": "amazonaws.com.cn", "aws-eusc": "amazonaws.eu", "aws-iso": "c2s.ic.gov",
                "aws-iso-b": "sc2s.sgov.gov", "aws-iso-e": "cloud.adc-e.uk", "aws-iso-f": "csp.hci.ic.gov"}
"""A partition's DNS suffix where it is not ``amazonaws.com`` (botocore ``partitions.json``, ``outputs.dnsSuffix``)."""


def partition_of(region: str) -> str:
    """The partition a region belongs to (``us-gov-west-1`` -> ``aws-us-gov``)."""
    for prefix, partition in PARTITIONS:
        if region.startswith(prefix):
            return partition
    return "aws"


def dns_suffix(partition: str) -> str:
    return DNS_SUFFIXES.get(partition, "amazonaws.com")


def ec2_principal(partition: str) -> str:
    """The EC2 service principal in a partition's trust policies (``ec2.amazonaws.com.cn`` in China). The
    European Sovereign Cloud's own principal could not be read in the sources here (botocore lists no
    service principals): it keeps ``ec2.amazonaws.com``, as every partition but China."""
    return "ec2.amazonaws.com.cn" if partition == "aws-cn" else "ec2.amazonaws.com"


POD_IDENTITY_UNAVAILABLE = {"aws-cn": "the Amazon EKS user guide for the China Regions (docs.amazonaws.cn, "
                                      "eks/latest/userguide/pod-identities.html): \"Pod Identity is not available in "
                                      "China Regions. Use IAM roles for service accounts.\""}
"""Partitions where EKS Pod Identity is not offered, with the source. botocore's ``endpoints.json`` lists an
``eks-auth`` endpoint in cn-north-1 and cn-northwest-1, but an endpoint in the SDK's table is not the service's
availability, and the China user guide says it is not available: the guide decides. In the European Sovereign
Cloud botocore lists ``eks-auth`` and no source here says otherwise, so Pod Identity stays the default there."""
IDENTITY_MODES = ("pod_identity", "irsa")
"""How the rack's controllers (Karpenter, the Cluster Autoscaler) get AWS credentials: EKS Pod Identity (an
association per service account, through the ``eks-pod-identity-agent`` add-on) or IAM roles for service
accounts (the cluster's IAM OIDC provider, a role trusting it for one service account, the account annotated
``eks.amazonaws.com/role-arn``)."""
IRSA_AUDIENCE = "sts.amazonaws.com"
"""The audience of the tokens EKS projects for IRSA, and the OIDC provider's client id (the EKS user guide,
IAM roles for service accounts; pulumi-eks ``createOidcProvider`` uses it as ``clientIdLists``)."""
IRSA_ROLE_ANNOTATION = "eks.amazonaws.com/role-arn"
"""The service-account annotation EKS's pod identity webhook reads for IRSA."""


def default_identity(partition: str) -> str:
    """Pod Identity where EKS offers it, IRSA where it does not (``POD_IDENTITY_UNAVAILABLE``)."""
    return "irsa" if partition in POD_IDENTITY_UNAVAILABLE else "pod_identity"


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
