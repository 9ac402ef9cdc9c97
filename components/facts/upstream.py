"""Upstream facts, once: what EC2, EKS, Karpenter, pulumi-eks and the charts do, that the components
and the pack both rely on.

Standard library only and no sibling imports, so the specs, the components and the pack
(``mixed_os_racks.facts.upstream``) share it.
Each fact says where it was read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

# ---- devices and disks ---------------------------------------------------------------------------------

# Each OS family's devices and Karpenter's default sizes for them: ``osfamily``.
KARPENTER_DEFAULT_MAPPINGS_ENCRYPTED = True
KARPENTER_VOLUME_MAX_GIB = 59000
"""The EC2NodeClass CRD's pattern for ``blockDeviceMappings[].ebs.volumeSize`` stops at 59000Gi (v1.14.1)."""
"""Karpenter's default block device mappings set ``encrypted: true``."""
PULUMI_EKS_DEFAULT_DISK_GIB = 20.0
"""pulumi-eks's default ``diskSize``/``nodeRootVolumeSize``."""
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


def minor_number(version: str) -> int:
    """A Kubernetes minor's number (``1.37`` -> 37)."""
    return int(version.split(".")[1])


@dataclass(frozen=True)
class Chart:
    name: str
    version: str
    repo: str


@dataclass(frozen=True)
class KarpenterRelease:
    """A Karpenter release the rack can install: its charts, IAM and values were read upstream."""

    version: str
    published: str
    """When the release was tagged (UTC date), or where that could not be read, what was."""
    source: str
    """Where its charts and notes were read (repository, path, commit)."""

    @property
    def line(self) -> str:
        """Its minor line (``1.15.0`` -> ``1.15``)."""
        return ".".join(self.version.split(".")[:2])


KARPENTER_RELEASES: dict[str, KarpenterRelease] = {
    release.version: release
    for release in (
        KarpenterRelease(
            "1.14.0",
            "2026-07-11",
            "aws/karpenter-provider-aws release commit 692ccdd0 (chart 1.14.0; its "
            "values and v1.14 CloudFormation reference differ from 1.14.1's only in "
            "the image tag and a CEL feature gate the rack does not set)",
        ),
        KarpenterRelease(
            "1.14.1",
            "2026-08-20",
            "aws/karpenter-provider-aws tag v1.14.1 (commit bde00654; its docs release, 1d927085, 2026-08-21)",
        ),
        KarpenterRelease(
            "1.15.0",
            "its tag was not read; its docs and charts were (commit d77d1a3a)",
            "aws/karpenter-provider-aws commit d77d1a3a: charts/karpenter/Chart.yaml and values.yaml "
            "(version 1.15.0), website/content/en/v1.15 (compatibility.md, reference/cloudformation.md)",
        ),
    )
}
"""The Karpenter releases the rack installs (``karpenter_version``). A release whose charts and notes could not
be read is not listed, so it is refused rather than guessed: the repositories' tags and docs read here stop at
v1.14.1 on the 1.14 line (no 1.14.2 or 1.14.3 tag, chart or docs release was found) and at 1.15.0 on the 1.15
line, whose upgrade guide (``website/content/en/v1.15/upgrading/upgrade-guide.md``) could not be read either:
its values and IAM are taken from the 1.15.0 chart's ``values.yaml`` and the v1.15 CloudFormation reference. The
EC2NodeClass fields the rack writes (``amiFamily``, ``amiSelectorTerms`` ``id``/``alias``, ``role``, the subnet and
security-group selector terms, ``metadataOptions``, ``blockDeviceMappings`` ``deviceName``/``ebs``, ``tags``) are all
in the v1.15 EC2NodeClass reference's example (``website/content/en/v1.15/concepts/nodeclasses.md``, commit 6d1426c4,
a test fixture); the 1.15 CRD files themselves could not be read here, and the NodePool fields (``karpenter.sh/v1``)
are taken as unchanged."""
KARPENTER_LINES = ("1.14", "1.15")
"""The minor lines the rack installs: what it writes (charts, IAM, values, CRD fields) was read for both."""
KARPENTER_LTS_LINE = "1.14"
"""Karpenter 1.14 is a long-term-support line, July 2026 to July 2027 (karpenter-provider-aws ``SUPPORT.md``,
"LTS versions table", 2026-07-29): the rack's default stays on it."""
KARPENTER_REBOOT_FROM = "1.15"
"""From Karpenter 1.15 the controller policy's ``AllowScopedDeletion`` statement also allows ``ec2:RebootInstances``
on the instances it launched, for node repair's in-place reboot behind the ``rebootForRepair`` AWS feature gate
(karpenter-provider-aws ``website/content/en/v1.15/reference/cloudformation.md``, commit d77d1a3a; the 1.15.0
chart's ``settings.awsFeatureGates.rebootForRepair``: "Requires the ec2:RebootInstances permission"). The v1.14
reference (commit 1d927085) has only ``ec2:TerminateInstances`` and ``ec2:DeleteLaunchTemplate`` there."""


@dataclass(frozen=True)
class KarpenterMatrix:
    """One Karpenter docs version's compatibility matrix (``website/content/en/<line>/upgrading/compatibility.md``):
    Kubernetes minor -> the oldest Karpenter release that supports it, or, for a cell written ``1.15.x``, only
    that minor line (``exact``)."""

    source: str
    cells: dict[str, tuple[str, bool]]

    def minors(self) -> list[str]:
        return sorted(self.cells, key=minor_number)


# ---- generated by matrixgen (python -m mixed_os_racks.facts.matrixgen): do not edit by hand ---------------
KARPENTER_MATRICES: dict[str, KarpenterMatrix] = {
    "1.14": KarpenterMatrix(
        "karpenter-provider-aws website/content/en/v1.14/upgrading/compatibility.md, commit 1d927085 (2026-08-21)",
        {
            "1.30": ("0.37", False),
            "1.31": ("1.0.5", False),
            "1.32": ("1.2", False),
            "1.33": ("1.5", False),
            "1.34": ("1.6", False),
            "1.35": ("1.9", False),
            "1.36": ("1.13", False),
        },
    ),
    "1.15": KarpenterMatrix(
        "karpenter-provider-aws website/content/en/v1.15/upgrading/compatibility.md, commit d77d1a3a",
        {
            "1.31": ("1.0.5", False),
            "1.32": ("1.2", False),
            "1.33": ("1.5", False),
            "1.34": ("1.6", False),
            "1.35": ("1.9", False),
            "1.36": ("1.13", False),
            "1.37": ("1.15", True),
        },
    ),
}
# ---- end of matrixgen's output ---------------------------------------------------------------------------
"""Each installable line's own matrix: a pair is judged by the matrix of the release's line, and a minor that
matrix does not list (1.30 in v1.15's, 1.37 in v1.14's) is not confirmed for that release, so it is refused.
``make tables`` regenerates them from a clone of karpenter-provider-aws (``matrixgen``); the two here were read at
two commits (v1.15's docs were not in the clone of 1d927085)."""
KARPENTER_MIN_K8S_MINOR = min(minor_number(m) for matrix in KARPENTER_MATRICES.values() for m in matrix.cells)
"""The oldest Kubernetes minor any release the rack installs supports (1.30, in the v1.14 matrix)."""
KARPENTER_MAX_K8S_MINOR = max(minor_number(m) for matrix in KARPENTER_MATRICES.values() for m in matrix.cells)
"""The newest Kubernetes minor any release the rack installs supports (1.37, with Karpenter 1.15.x)."""


def _release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class KarpenterVerdict:
    """What Karpenter's compatibility matrix says of a (Kubernetes minor, Karpenter release) pair."""

    supported: bool
    reason: str
    """Why not, with its source ('' when supported)."""
    serving: Optional[str] = None
    """A release the rack installs that supports the minor (the default line's first), or None."""


def karpenter_release_problem(version: str) -> Optional[str]:
    """Why the rack does not install Karpenter ``version`` (None: it does)."""
    if version in KARPENTER_RELEASES:
        return None
    known = ", ".join(KARPENTER_RELEASES)
    line = ".".join(version.split(".")[:2])
    if line in KARPENTER_LINES:
        return (
            f"Karpenter {version} is not confirmed upstream: its chart and release notes could not be read, so "
            f"its values, IAM and CRD fields are unknown (the rack installs {known})"
        )
    return f"the rack installs Karpenter {' or '.join(f'{line}.x' for line in KARPENTER_LINES)} ({known})"


def karpenter_compatibility(k8s_minor: str, karpenter_version: str) -> KarpenterVerdict:
    """Whether Karpenter ``karpenter_version`` supports a control plane on Kubernetes ``k8s_minor`` (``1.37``),
    by the compatibility matrix of the release's own line (``KARPENTER_MATRICES``), and which release the rack
    installs would serve. Pure: the rack's config, the components and a fleet view all judge the pair with it."""
    serving = next(
        (
            r
            for r in sorted(
                KARPENTER_RELEASES,
                key=lambda v: (not v.startswith(KARPENTER_LTS_LINE + "."), tuple(-n for n in _release_key(v))),
            )
            if _pair_supported(k8s_minor, r)
        ),
        None,
    )
    problem = karpenter_release_problem(karpenter_version)
    if problem:
        return KarpenterVerdict(False, problem, serving)
    if _pair_supported(k8s_minor, karpenter_version):
        return KarpenterVerdict(True, "", serving)
    matrix = KARPENTER_MATRICES[KARPENTER_RELEASES[karpenter_version].line]
    # a matrix (the release's own first, then the newest) whose cell for the minor rules the release out
    ruling = next(
        (
            m
            for m in (matrix, *reversed(KARPENTER_MATRICES.values()))
            if k8s_minor in m.cells and not _cell_allows(m.cells[k8s_minor], karpenter_version)
        ),
        None,
    )
    if ruling is not None:
        oldest, exact = ruling.cells[k8s_minor]
        needs = f"{oldest}.x" if exact else f"{oldest} or later"
        reason = f"Kubernetes {k8s_minor} needs Karpenter {needs}, not {karpenter_version} ({ruling.source})"
    else:
        listed = matrix.minors()
        reason = (
            f"Karpenter {karpenter_version} is not confirmed for Kubernetes {k8s_minor}: its compatibility "
            f"matrix lists {listed[0]} to {listed[-1]} ({matrix.source})"
        )
    return KarpenterVerdict(False, reason, serving)


def _pair_supported(k8s_minor: str, version: str) -> bool:
    """By the matrix of the release's own line: a minor it does not list is not confirmed."""
    matrix = KARPENTER_MATRICES.get(".".join(version.split(".")[:2]))
    cell = matrix.cells.get(k8s_minor) if matrix else None
    return cell is not None and _cell_allows(cell, version)


def _cell_allows(cell: tuple[str, bool], version: str) -> bool:
    oldest, exact = cell
    if exact:
        return version.startswith(oldest + ".")
    return _release_key(version) >= _release_key(oldest)


KARPENTER_ALIAS_FAMILIES = ("al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025")
"""The families an EC2NodeClass ``amiSelectorTerms[].alias`` may name, lowercase, as Karpenter's controller
matches them (karpenter-provider-aws ``pkg/apis/v1/ec2nodeclass.go`` ``amiFamilyFromAlias``, v1.14.1: it splits
the alias on ``@``, exits the process (``log.Fatalf``) unless there are exactly two parts, and exits again unless
the first is one of these). The CRD admits more than the controller parses: its pattern ``^[a-zA-Z0-9]+@.+$`` and
its family rule (``self.split('@')[0] in [...]``) let ``al2023@latest@foo`` through, and the controller then
crash-loops, which stops every NodePool of the cluster."""
KARPENTER_ALIAS_LATEST_ONLY = ("windows2019", "windows2022", "windows2025")
"""Families whose alias version must be ``latest`` (the CRD's rule: Windows AMIs cannot be pinned)."""
KARPENTER_ALIAS_MAX_LENGTH = 30
"""The CRD's ``maxLength`` for ``amiSelectorTerms[].alias``."""
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
upgrades existing control planes itself. Only dated minors are here: ``EKS_UNDATED`` lists the others."""
EKS_UNDATED: dict[str, str] = {
    "1.36": "after 1.35 on EKS; its end-of-support dates are not in the calendar versions read here",
    "1.37": "after 1.35 on EKS; its end-of-support dates are not in the calendar versions read here",
}
"""Minors after the calendar's newest whose dates the sources read here do not give (the user guide's calendar in the
versions stored here, endoflife.date's page at commit 05b554b2, the EKS user guide pages: none lists 1.36 or 1.37):
they are judged ``unknown``, never guessed from the 14- and 26-month rule, because EKS dates a minor from its
own release on EKS, which no source here gives."""
EKS_VERSION_SOURCE = "the EKS Kubernetes release calendar"
EKS_PRICE_PER_CLUSTER_HOUR = {"standard": 0.10, "extended": 0.60}
"""US dollars per cluster hour of an EKS control plane on a minor in standard and in extended support
(Amazon EKS pricing, aws.amazon.com/eks/pricing: $0.10 and $0.60)."""


def eks_calendar() -> dict[str, Optional[tuple[str, str]]]:
    """Every minor EKS lists, oldest first: its (end of standard, end of extended support) dates, or None where
    no date is published (``EKS_UNDATED``)."""
    listed: dict[str, Optional[tuple[str, str]]] = {**EKS_VERSION_SUPPORT, **dict.fromkeys(EKS_UNDATED)}
    return {minor: listed[minor] for minor in sorted(listed, key=minor_number)}


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
"""The default release: the newest patch of the LTS line (``KARPENTER_LTS_LINE``) whose chart and notes were read
(``KARPENTER_RELEASES``: no later 1.14 patch was found upstream)."""
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
CLUSTER_AUTOSCALER_GPU_TYPES = {
    "K80": "nvidia-tesla-k80",
    "V100": "nvidia-tesla-v100",
    "T4": "nvidia-tesla-t4",
    "A100": "nvidia-tesla-a100",
    "A10G": "nvidia-a10g",
    "L4": "nvidia-l4",
    "L40S": "nvidia-l40s",
}
"""GPU model (``instances.Family.gpu_model``) -> the autoscaler's own name for it, where it has one."""
CLUSTER_AUTOSCALER_RELEASES = {
    "1.32": "v1.32.7",
    "1.33": "v1.33.6",
    "1.34": "v1.34.5",
    "1.35": "v1.35.2",
    "1.36": "v1.36.1",
}
"""Kubernetes minor -> the newest Cluster Autoscaler release of that minor (git tags
``cluster-autoscaler-X.Y.Z`` of kubernetes/autoscaler; checked again at commit 55c37cd5, 2026-08-22: no later tag,
and none for 1.37). The autoscaler's minor follows Kubernetes' minor: its README's release table pairs each
Kubernetes minor with the same CA minor."""
METRICS_SERVER = Chart("metrics-server", "3.13.1", "https://kubernetes-sigs.github.io/metrics-server/")
"""metrics-server's chart (kubernetes-sigs/metrics-server ``charts/metrics-server``, tag
``metrics-server-helm-chart-3.13.1``, appVersion 0.8.1)."""


def cluster_autoscaler_release(version: str) -> Optional[str]:
    """The Cluster Autoscaler image tag for a Kubernetes minor (``1.34`` -> ``v1.34.5``), or None."""
    return CLUSTER_AUTOSCALER_RELEASES.get(version)


# ---- partitions ------------------------------------------------------------------------------------

PARTITIONS = (
    ("cn-", "aws-cn"),
    ("us-gov-", "aws-us-gov"),
    ("us-isob-", "aws-iso-b"),
    ("us-isof-", "aws-iso-f"),
    ("us-iso-", "aws-iso"),
    ("eu-isoe-", "aws-iso-e"),
    ("eusc-", "aws-eusc"),
)
"""Region prefix -> partition, as the AWS SDKs' partitions table matches them (botocore
``botocore/data/partitions.json``, 2026-08: ``regionRegex`` of each partition; the AWS European
Sovereign Cloud is ``aws-eusc``, its regions ``eusc-de-*``, today ``eusc-de-east-1``); every other region is ``aws``."""
DNS_SUFFIXES = {
    "aws-cn": "amazonaws.com.cn",
    "aws-eusc": "amazonaws.eu",
    "aws-iso": "c2s.ic.gov",
    "aws-iso-b": "sc2s.sgov.gov",
    "aws-iso-e": "cloud.adc-e.uk",
    "aws-iso-f": "csp.hci.ic.gov",
}
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


POD_IDENTITY_UNAVAILABLE = {
    "aws-cn": "the Amazon EKS user guide for the China Regions (docs.amazonaws.cn, "
    'eks/latest/userguide/pod-identities.html): "Pod Identity is not available in '
    'China Regions. Use IAM roles for service accounts."'
}
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
    "gp3": VolumeLimits(
        size_gib=(1, 65536),
        iops=(3000, 80000),
        iops_per_gib=500,
        baseline_iops=3000,
        throughput_mibs=(125, 2000),
        throughput_per_iops=0.25,
        baseline_throughput_mibs=125,
    ),
    "io1": VolumeLimits(size_gib=(4, 16384), iops=(100, 64000), iops_required=True, iops_per_gib=50),
    "io2": VolumeLimits(size_gib=(4, 65536), iops=(100, 256000), iops_required=True, iops_per_gib=1000),
}
