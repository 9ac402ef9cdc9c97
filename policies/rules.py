"""The rack's rules, as pure functions.

This module is the single home of every rule the rack enforces. It imports nothing but the
standard library so that the policy pack (run as ``python policies``) and the components
(``from policies import rules``) share it unchanged. Each check returns ``None`` when the
subject is fine, or the message to show, worded like the seeds' CLI:
``karpenter nodepool 'gpu': invalid ami_id 'ami-XYZ' (must look like ami-0123456789abcdef0)``.

The pack reads resources with ``facts`` and applies these rules in ``checks``; this module
imports none of its siblings, so ``policies.rules`` and the pack's top-level ``rules`` are the same.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional

AMI_ID_RE = re.compile(r"^ami-(?:[0-9a-f]{8}|[0-9a-f]{17})$")
AMI_ID_EXAMPLE = "ami-0123456789abcdef0"

# Labels and taints of the seeds' contract.
NODEPOOL_LABEL = "convox.io/nodepool"
NODEGROUP_LABEL = "convox.io/label"
GPU_VENDOR_LABEL = "convox.io/gpu-vendor"
GPU_VENDOR_NVIDIA = "nvidia"
GPU_TAINT_KEY = "nvidia.com/gpu"
DEDICATED_TAINT_KEY = "dedicated-node"

# Where our components record an AMI's root snapshot size for the policy pack.
ROOT_SNAPSHOT_ANNOTATION = "mixed-os-racks/ami-root-snapshot-gib"
ROOT_SNAPSHOT_TAG = ROOT_SNAPSHOT_ANNOTATION

# EC2 instance families with NVIDIA GPUs (g4ad is AMD, so not here), and those that are Graviton.
_NVIDIA_FAMILY_RE = re.compile(r"^(?:p\d+[a-z]*(?:-[a-z0-9]+)?|gr?\d+[a-z]*)$")
_NON_NVIDIA_G_FAMILIES = frozenset({"g4ad"})
_ARM_GPU_FAMILIES = frozenset({"g5g"})
_NEURON_FAMILY_RE = re.compile(r"^(?:inf|trn)\d+[a-z]*$")
# Graviton: the generation digit is followed by a 'g' (m7g, c6gn, r8gd, t4g, x2gd, im4gn, is4gen).
_GRAVITON_FAMILY_RE = re.compile(r"^(?:[a-z]+\d+g[a-z]*|a1|is4gen|im4gn)$")

EC2_ARCH = {"amd64": "x86_64", "arm64": "arm64"}


def instance_family(instance_type: str) -> str:
    """``g5.xlarge`` -> ``g5``; a bare family is returned unchanged."""
    return instance_type.split(".", 1)[0].strip().lower()


def is_nvidia_gpu_family(family: str) -> bool:
    family = instance_family(family)
    return family not in _NON_NVIDIA_G_FAMILIES and bool(_NVIDIA_FAMILY_RE.match(family))


def is_neuron_family(family: str) -> bool:
    return bool(_NEURON_FAMILY_RE.match(instance_family(family)))


def is_arm_family(family: str) -> bool:
    family = instance_family(family)
    return family in _ARM_GPU_FAMILIES or bool(_GRAVITON_FAMILY_RE.match(family))


def is_gpu_lane(families: Iterable[str]) -> bool:
    """A lane is a GPU lane when it has families and every one of them is an NVIDIA GPU family."""
    families = list(families)
    return bool(families) and all(is_nvidia_gpu_family(f) for f in families)


def gpu_families(families: Iterable[str]) -> list[str]:
    """The NVIDIA GPU families among ``families`` (instance types are reduced to their family)."""
    return [instance_family(f) for f in families if is_nvidia_gpu_family(f)]


def instance_arch(instance_type: str) -> str:
    """The EC2 architecture (``x86_64`` or ``arm64``) of an instance type or family."""
    return "arm64" if is_arm_family(instance_type) else "x86_64"


def gib(value: float) -> str:
    """Whole numbers print without a decimal point: 20.0 -> '20'."""
    return f"{value:g}"


# ---- the rules ---------------------------------------------------------------------------------


def invalid_ami_id(subject: str, ami_id: object) -> Optional[str]:
    """Rule ``ami-id-format``: ``ami-`` followed by 8 or 17 lowercase hex digits."""
    if isinstance(ami_id, str) and AMI_ID_RE.match(ami_id):
        return None
    return f"{subject}: invalid ami_id '{ami_id}' (must look like {AMI_ID_EXAMPLE})"


def disk_below_snapshot(subject: str, disk_gib: float, ami_id: str, snapshot_gib: float) -> Optional[str]:
    """Rule ``disk-fits-ami-snapshot``: EC2 refuses a root volume smaller than its snapshot."""
    if disk_gib >= snapshot_gib:
        return None
    return (
        f"{subject}: disk {gib(disk_gib)} GiB is smaller than the root snapshot of {ami_id} "
        f"({gib(snapshot_gib)} GiB)"
    )


def arch_mismatch(subject: str, arches: Iterable[str], ami_id: str, ami_arch: str) -> Optional[str]:
    """Rule ``arch-matches-ami``: every architecture the lane may launch must be the AMI's.

    ``arches`` are Kubernetes (``amd64``/``arm64``) or EC2 (``x86_64``/``arm64``) names.
    """
    wanted = sorted({EC2_ARCH.get(a, a) for a in arches})
    wrong = [a for a in wanted if a != ami_arch]
    if not wrong:
        return None
    return (
        f"{subject}: arch {','.join(wanted)} does not match {ami_id}, which is {ami_arch} "
        f"(pin an {ami_arch} AMI or set the lane's arch to match)"
    )


def gpu_lane_on_bottlerocket(subject: str, os_name: str, why: str) -> Optional[str]:
    """Rule ``gpu-lane-os``: GPU lanes run Amazon Linux 2023, never Bottlerocket.

    ``why`` says what makes the lane a GPU lane, e.g. ``instance families g5,g6``.
    """
    if os_name.lower() != "bottlerocket":
        return None
    return (
        f"{subject}: {why} make this a GPU lane, and GPU lanes must run Amazon Linux 2023, "
        f"not Bottlerocket (move them to an AL2023 pool or node group)"
    )


# ---- subjects: how a message names a lane -------------------------------------------------------


def pool_subject(name: str) -> str:
    """A Karpenter pool, named by its EC2NodeClass/NodePool ``metadata.name`` (the seeds' wording)."""
    return "karpenter workload nodepool" if name == "workload" else f"karpenter nodepool '{name}'"


def node_group_subject(name: str) -> str:
    return f"node group '{name}'"


def launch_template_subject(name: str) -> str:
    return f"launch template '{name}'"


# ---- what an AMI's own words say ------------------------------------------------------------------

_OS_WORDS = (
    ("al2023", re.compile(r"al2023|amazon linux 2023|amzn-2023|amzn2023", re.I)),
    ("bottlerocket", re.compile(r"bottlerocket", re.I)),
    ("ubuntu", re.compile(r"ubuntu", re.I)),
    ("windows", re.compile(r"windows", re.I)),
    ("al2", re.compile(r"amzn2|amazon linux 2\b|\bal2\b|amazon-eks-(?:gpu-|arm64-)?node-1\.\d+", re.I)),
)
_K8S_MINOR_RE = re.compile(r"^v?(1\.\d{1,2})(?:\.\d+)?$")


def os_of_ami(name: str, description: str = "") -> Optional[str]:
    """The OS an AMI's name (or else its description) names: al2023, bottlerocket, al2, ubuntu, windows."""
    for text in (name, description):
        for os_name, pattern in _OS_WORDS:
            if text and pattern.search(text):
                return os_name
    return None


def k8s_minor(version: object) -> Optional[str]:
    """``1.33``, ``v1.33.2`` -> ``1.33``; anything else -> None."""
    match = _K8S_MINOR_RE.match(str(version).strip()) if version is not None else None
    return match.group(1) if match else None


def k8s_minor_of_ami(name: str) -> Optional[str]:
    """The one Kubernetes minor an AMI name names (``amazon-eks-node-al2023-x86_64-standard-1.33-v2026...``)."""
    minors = {m.group(1) for token in re.split(r"[-_\s,()]+", name) if (m := re.match(r"^(1\.\d{1,2})$", token))}
    return minors.pop() if len(minors) == 1 else None


# ---- more rules -------------------------------------------------------------------------------------


def pinned_ami_not_al2023(subject: str, os_name: str, lane: str = "pool", fix: str = "") -> Optional[str]:
    """Rule ``al2023-family``: a lane pinned to a custom AMI declares Amazon Linux 2023.

    ``os_name`` is what the lane declares (``al2023``, ``bottlerocket``, ``custom``, ... or empty).
    """
    if os_name.lower() == "al2023":
        return None
    suffix = f"; {fix}" if fix else ""
    return f"{subject}: a pinned ami_id needs an AL2023 {lane} (got {os_name.lower() or 'no OS'}){suffix}"


def ami_names_other_os(subject: str, ami_id: str, ami_name: str, os_name: str) -> Optional[str]:
    """Rule ``al2023-family``, from the AMI's facts: its name or description names another OS."""
    if os_name == "al2023":
        return None
    return (
        f"{subject}: pinned AMI {ami_id} ('{ami_name}') is {os_name}, not Amazon Linux 2023 "
        f"(pin an AL2023 AMI, e.g. one built with awslabs/amazon-eks-ami)"
    )


def disk_unverified(subject: str, disk_gib: float, ami: str, reason: str = "") -> str:
    """Rule ``disk-fits-ami-snapshot`` when the snapshot size is nowhere to be found (advisory)."""
    why = f"{reason}; " if reason else ""
    return (
        f"{subject}: cannot verify disk {gib(disk_gib)} GiB against the root snapshot of {ami}: its size is unknown "
        f"({why}set amiRootSnapshotGiB {{\"<ami id>\": <GiB>}} in the policy config, or lookup: true)"
    )


def ami_too_old(subject: str, ami_id: str, created: str, age_days: int, max_days: float) -> Optional[str]:
    """Rule ``pinned-ami-age`` (advisory): a pinned AMI gets no OS patches; re-pin regularly."""
    if age_days <= max_days:
        return None
    return (
        f"{subject}: pinned AMI {ami_id} is {age_days} days old (created {created[:10]}), more than "
        f"maxAgeDays {gib(max_days)}: it gets no OS patches (pin a newer build)"
    )


def ami_for_other_k8s(subject: str, ami_id: str, ami_name: str, ami_minor: str, cluster_minor: str) -> Optional[str]:
    """Rule ``ami-k8s-version`` (advisory): the AMI's kubelet should match the cluster's minor."""
    if ami_minor == cluster_minor:
        return None
    return (
        f"{subject}: pinned AMI {ami_id} ('{ami_name}') is built for Kubernetes {ami_minor}, but the cluster "
        f"runs {cluster_minor} (pin an AMI built for {cluster_minor})"
    )
