"""EC2 instance-family facts: architecture, GPUs (NVIDIA or AMD), Neuron and other accelerators.

One table, read by the components (AMI type, GPU label and taint, the default lane's instance
choice) and by the pack (GPU-lane and architecture detection). It covers every accelerated family
and every Graviton family EC2 lists (see ``SOURCE``, as of ``AS_OF``); a family it does not know is
judged by EC2's naming convention: a ``g`` right after the generation digit (``m7g``, ``c8gn``,
``r8gd``) is a Graviton (arm64) family, ``inf``/``trn`` families are Neuron, anything else x86_64
with no accelerator.

Standard library only and no sibling imports (the pack and the components share it).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterable, Optional

SOURCE = (
    "botocore 1.44.8's EC2 InstanceType enum (2026-11-20); Karpenter's generated instance-type reference "
    "(v1.14.0, 2026-07-11) and eksctl's instance table (2026-08-12), both from DescribeInstanceTypes in "
    "us-east-1, us-east-2 and us-west-2; awslabs/amazon-eks-ami (releases to v20260917) for which EKS AMI drives what"
)
AS_OF = "2026-12-02"

X86, ARM = "x86_64", "arm64"
NVIDIA, AMD = "nvidia", "amd"


@dataclass(frozen=True)
class Family:
    name: str
    arch: str = X86
    gpu: str = ""
    """GPU manufacturer: ``nvidia``, ``amd``, or '' for none."""
    gpu_model: str = ""
    neuron: bool = False
    """AWS Inferentia or Trainium (Neuron devices, ``aws.amazon.com/neuron``)."""
    accelerator: str = ""
    """Any other accelerator: Gaudi, Qualcomm AI 100, FPGA, video transcoding."""
    eks_nvidia_ami: bool = True
    """For NVIDIA families: some EKS-optimized AL2023 NVIDIA AMI drives it (which releases: ``stock_ami_problem``).
    P2 needs driver 470 or older, which no EKS AL2023 AMI ships; G7 is driven from release v20260917, which picks
    its driver per instance type."""

    @property
    def accelerated(self) -> bool:
        return bool(self.gpu or self.neuron or self.accelerator)


def _nvidia(name: str, model: str, arch: str = X86, eks_ami: bool = True) -> Family:
    return Family(name, arch, gpu=NVIDIA, gpu_model=model, eks_nvidia_ami=eks_ami)


_ACCELERATED = (
    # NVIDIA on x86_64 hosts (p2, p3, g2, g3, g3s, cg1: previous generation, kept so old configs are judged right)
    _nvidia("p2", "K80", eks_ami=False),
    _nvidia("p3", "V100"),
    _nvidia("p3dn", "V100"),
    _nvidia("p4d", "A100 40GB"),
    _nvidia("p4de", "A100 80GB"),
    _nvidia("p5", "H100 80GB"),
    _nvidia("p5e", "H200 141GB"),
    _nvidia("p5en", "H200 141GB"),
    _nvidia("p6-b200", "B200"),
    _nvidia("p6-b300", "B300"),
    _nvidia("cg1", "Tesla"),
    _nvidia("g2", "K520"),
    _nvidia("g3", "M60"),
    _nvidia("g3s", "M60"),
    _nvidia("g4dn", "T4"),
    _nvidia("g5", "A10G"),
    _nvidia("g6", "L4"),
    _nvidia("g6e", "L40S"),
    _nvidia("g6f", "L4 (fractional)"),
    _nvidia("gr6", "L4"),
    _nvidia("gr6f", "L4 (fractional)"),
    _nvidia("g7", "RTX PRO 4500 Blackwell"),
    _nvidia("g7e", "RTX PRO 6000 Blackwell Server"),
    # NVIDIA on arm64 hosts: Graviton2 (g5g) and NVIDIA Grace (GB200, GB300)
    _nvidia("g5g", "T4G", ARM),
    _nvidia("p6e-gb200", "GB200", ARM),
    _nvidia("p6e-gb300", "GB300", ARM),
    # AMD GPUs
    Family("g4ad", X86, gpu=AMD, gpu_model="Radeon Pro V520"),
    # AWS Neuron: Inferentia and Trainium
    Family("inf1", neuron=True),
    Family("inf2", neuron=True),
    Family("trn1", neuron=True),
    Family("trn1n", neuron=True),
    Family("trn2", neuron=True),
    Family("trn2u", neuron=True),
    # other accelerators
    Family("dl1", accelerator="Habana Gaudi"),
    Family("dl2q", accelerator="Qualcomm AI 100"),
    Family("f1", accelerator="FPGA"),
    Family("f2", accelerator="FPGA"),
    Family("vt1", accelerator="video transcoding"),
)

_GRAVITON = (
    "a1",
    "t4g",
    "c6g",
    "c6gd",
    "c6gn",
    "c7g",
    "c7gd",
    "c7gn",
    "c8g",
    "c8gb",
    "c8gd",
    "c8gn",
    "c9g",
    "c9gd",
    "m6g",
    "m6gd",
    "m7g",
    "m7gd",
    "m8g",
    "m8gb",
    "m8gd",
    "m8gn",
    "m9g",
    "m9gd",
    "r6g",
    "r6gd",
    "r7g",
    "r7gd",
    "r8g",
    "r8gb",
    "r8gd",
    "r8gn",
    "r9g",
    "r9gd",
    "x2gd",
    "x8g",
    "hpc7g",
    "im4gn",
    "is4gen",
    "i4g",
    "i8g",
    "i8ge",
)
# Apple silicon Macs (EC2 reports arm64_mac); mac1 is an Intel Mac
_APPLE_SILICON = ("mac2", "mac2-m1ultra", "mac2-m2", "mac2-m2pro", "mac-m4", "mac-m4pro", "mac-m4max", "mac-m3ultra")

FAMILIES: dict[str, Family] = {f.name: f for f in _ACCELERATED}
FAMILIES.update({name: Family(name, ARM) for name in _GRAVITON + _APPLE_SILICON})

# EC2's naming for families the table does not know yet: a 'g' right after the generation digit is a
# Graviton family (m10g, c10gn, ...); Inferentia and Trainium keep their names (trn3, inf3).
_GRAVITON_NAME_RE = re.compile(r"[a-z]+[0-9]+g[a-z]*")
_NEURON_NAME_RE = re.compile(r"(inf|trn)[0-9]+[a-z]*")


def family_of(instance_type: str) -> str:
    """``g5.xlarge`` -> ``g5``; a bare family is returned unchanged (lowercased)."""
    return instance_type.split(".", 1)[0].strip().lower()


@functools.lru_cache(maxsize=4096)
def facts(instance_type: str) -> Family:
    """The facts of an instance type's (or a family's) family (remembered: the fit check asks per type)."""
    name = family_of(instance_type)
    known: Optional[Family] = FAMILIES.get(name)
    if known is not None:
        return known
    return Family(name, ARM if _GRAVITON_NAME_RE.fullmatch(name) else X86, neuron=bool(_NEURON_NAME_RE.fullmatch(name)))


# ---- MIG: which GPUs partition, and into which profiles ------------------------------------------------------

MIG_SOURCE = (
    "NVIDIA's Multi-Instance GPU User Guide (Supported GPUs; Supported MIG Profiles; r590-r620, 2026): MIG runs on "
    "A30, A100, H100, H20, H200, GH200, B200, GB200, B300, GB300 and the RTX PRO 6000, 5000 and 4500 Blackwell, "
    "not on A10G, L4, L40S, T4 or V100; the profiles per GPU as NVIDIA/gpu-operator's default mig-parted config "
    "lists them per device (assets/state-mig-manager/0400_configmap.yaml, commit a22dbf67). The GPU of each EC2 "
    "family: the EC2 User Guide's accelerated computing instance specifications (p4d: A100 40 GB, p4de: A100 80 GB, "
    "p5: H100 80 GB, p5e/p5en: H200 141 GB, p6-b200: B200, p6-b300: B300, p6e-gb200: GB200, p6e-gb300: GB300, "
    "g7e: RTX PRO 6000 Blackwell Server Edition, g7: RTX PRO 4500 Blackwell)"
)
MIG_PROFILES: dict[str, tuple[str, ...]] = {
    "A100 40GB": ("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"),
    "A100 80GB": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
    "H100 80GB": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
    "H200 141GB": ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
    "B200": ("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"),
    "GB200": ("1g.23gb", "1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb"),
    "B300": ("1g.34gb", "1g.67gb", "2g.67gb", "3g.135gb", "4g.135gb", "7g.269gb"),
    "GB300": ("1g.35gb", "1g.70gb", "2g.70gb", "3g.139gb", "4g.139gb", "7g.278gb"),
    "RTX PRO 6000 Blackwell Server": ("1g.24gb", "2g.48gb", "4g.96gb"),
    "RTX PRO 4500 Blackwell": ("1g.16gb", "2g.32gb"),
}
"""GPU model (``Family.gpu_model``) -> its MIG profiles, without their attribute suffixes (``+me``, ``+gfx``: the
same slice with media or graphics engines). A model that is not here has no MIG."""
_MIG_PROFILE_RE = re.compile(r"([0-9]+)g\.([0-9]+)gb(?:[+.-][a-z.+-]*)?")


def mig_profile(text: str) -> Optional[str]:
    """A MIG profile as NVIDIA writes it, without its attributes: ``1g.10gb+me`` and the device plugin's resource
    spelling ``1g.10gb.me`` (``nvidia.com/mig-1g.10gb.me``: it writes ``+`` as ``.``) -> ``1g.10gb``; None for no
    profile."""
    match = _MIG_PROFILE_RE.fullmatch(text.strip().lower())
    return f"{match.group(1)}g.{match.group(2)}gb" if match else None


def mig_profiles(instance_type: str) -> tuple[str, ...]:
    """The MIG profiles the GPUs of an instance type (or family) can be partitioned into; () for no MIG."""
    return MIG_PROFILES.get(facts(instance_type).gpu_model, ())


def is_nvidia_gpu_family(instance_type: str) -> bool:
    return facts(instance_type).gpu == NVIDIA


def is_gpu_family(instance_type: str) -> bool:
    """Any GPU, NVIDIA or AMD."""
    return bool(facts(instance_type).gpu)


def is_neuron_family(instance_type: str) -> bool:
    return facts(instance_type).neuron


def is_accelerated_family(instance_type: str) -> bool:
    return facts(instance_type).accelerated


def is_arm_family(instance_type: str) -> bool:
    return facts(instance_type).arch == ARM


def instance_arch(instance_type: str) -> str:
    """The EC2 architecture (``x86_64`` or ``arm64``) of an instance type or family."""
    return facts(instance_type).arch


def nvidia_families(families: Iterable[str]) -> list[str]:
    """The NVIDIA GPU families among ``families`` (instance types are reduced to their family)."""
    return [family_of(f) for f in families if is_nvidia_gpu_family(f)]


def is_nvidia_lane(families: Iterable[str]) -> bool:
    """A lane is an NVIDIA GPU lane when it has families and every one of them is an NVIDIA GPU family."""
    families = list(families)
    return bool(families) and all(is_nvidia_gpu_family(f) for f in families)


# ---- sizes: what one instance of a type has ---------------------------------------------------------------

SIZES_SOURCE = (
    "Karpenter's generated instance-type reference (aws/karpenter-provider-aws "
    "website/content/en/preview/reference/instance-types.md at SIZES_COMMIT, read by sizegen): per type its "
    "karpenter.k8s.aws/instance-cpu, instance-memory (MiB), GPUs (nvidia.com/gpu or amd.com/gpu) and the pods "
    "resource (ENI-limited max pods, no reserved ENIs); p3 from the v1.0 reference, before it was dropped"
)


@dataclass(frozen=True)
class InstanceType:
    name: str
    vcpus: int
    memory_mib: int
    """What EC2 reports (DescribeInstanceTypes MemoryInfo.SizeInMiB), before any overhead."""
    gpus: int
    """Whole GPUs the device plugin advertises (nvidia.com/gpu or amd.com/gpu); 0 for fractional ones (g6f)."""
    max_pods: int
    """ENI-limited: max ENIs x (IPv4 addresses per ENI - 1) + 2, as nodeadm and Karpenter compute it."""

    @functools.cached_property
    def family(self) -> str:
        return family_of(self.name)

    @property
    def size(self) -> str:
        return self.name.split(".", 1)[1]

    @functools.cached_property
    def arch(self) -> str:
        return instance_arch(self.name)


# ---- generated by sizegen (python -m mixed_os_racks.facts.sizegen): do not edit by hand -------------------
SIZES_COMMIT = "1d927085dd81a9df9301e613f371dac5b4d16bfe"
SIZES_DATE = "2026-08-21"
"""The upstream commit the reference was read at, and its day."""
SIZES_KEPT = ("p3",)
"""Families the reference no longer lists, kept from the table as it was."""
# family -> "size:vCPUs:MiB:GPUs:maxPods ..." (generated from SIZES_SOURCE)
_SIZES: dict[str, str] = {
    "a1": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 metal:16:32768:0:234"
    ),
    "c1": "medium:2:1740:0:12 xlarge:8:7168:0:58",
    "c3": ("large:2:3840:0:29 xlarge:4:7680:0:58 2xlarge:8:15360:0:58 4xlarge:16:30720:0:234 8xlarge:32:61440:0:234"),
    "c4": ("large:2:3840:0:29 xlarge:4:7680:0:58 2xlarge:8:15360:0:58 4xlarge:16:30720:0:234 8xlarge:36:61440:0:234"),
    "c5": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "9xlarge:36:73728:0:234 12xlarge:48:98304:0:234 18xlarge:72:147456:0:737 24xlarge:96:196608:0:737"
        " metal:96:196608:0:737"
    ),
    "c5a": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 24xlarge:96:196608:0:737"
    ),
    "c5ad": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 24xlarge:96:196608:0:737"
    ),
    "c5d": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "9xlarge:36:73728:0:234 12xlarge:48:98304:0:234 18xlarge:72:147456:0:737 24xlarge:96:196608:0:737"
        " metal:96:196608:0:737"
    ),
    "c5n": (
        "large:2:5376:0:29 xlarge:4:10752:0:58 2xlarge:8:21504:0:58 4xlarge:16:43008:0:234 "
        "9xlarge:36:98304:0:234 18xlarge:72:196608:0:737 metal:72:196608:0:737"
    ),
    "c6a": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 24xlarge:96:196608:0:737"
        " 32xlarge:128:262144:0:737 48xlarge:192:393216:0:737 metal:192:393216:0:737"
    ),
    "c6g": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 "
        "metal:64:131072:0:737"
    ),
    "c6gd": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 "
        "metal:64:131072:0:737"
    ),
    "c6gn": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737"
    ),
    "c6i": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 24xlarge:96:196608:0:737"
        " 32xlarge:128:262144:0:737 metal:128:262144:0:737"
    ),
    "c6id": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 24xlarge:96:196608:0:737"
        " 32xlarge:128:262144:0:737 metal:128:262144:0:737"
    ),
    "c6in": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 24xlarge:96:196608:0:737"
        " 32xlarge:128:262144:0:394 metal:128:262144:0:394"
    ),
    "c7a": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 "
        "24xlarge:96:196608:0:737 32xlarge:128:262144:0:737 48xlarge:192:393216:0:737 "
        "metal-48xl:192:393216:0:737"
    ),
    "c7g": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 "
        "metal:64:131072:0:737"
    ),
    "c7gd": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 "
        "metal:64:131072:0:737"
    ),
    "c7gn": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 "
        "metal:64:131072:0:737"
    ),
    "c7i": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 24xlarge:96:196608:0:737"
        " metal-24xl:96:196608:0:737 48xlarge:192:393216:0:737 metal-48xl:192:393216:0:737"
    ),
    "c7i-flex": (
        "large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 4xlarge:16:32768:0:234 "
        "8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737"
    ),
    "c8a": (
        "medium:1:2048:0:8 large:2:4096:0:59 xlarge:4:8192:0:78 2xlarge:8:16384:0:158 "
        "4xlarge:16:32768:0:314 8xlarge:32:65536:0:392 12xlarge:48:98304:0:758 16xlarge:64:131072:0:1010 "
        "24xlarge:96:196608:0:1010 metal-24xl:96:196608:0:1010 48xlarge:192:393216:0:1514 "
        "metal-48xl:192:393216:0:1514"
    ),
    "c8g": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 "
        "24xlarge:96:196608:0:737 metal-24xl:96:196608:0:737 48xlarge:192:393216:0:737 "
        "metal-48xl:192:393216:0:737"
    ),
    "c8gb": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:292 12xlarge:48:98304:0:350 16xlarge:64:131072:0:786 "
        "24xlarge:96:196608:0:1178 metal-24xl:96:196608:0:1178 48xlarge:192:393216:0:590 "
        "metal-48xl:192:393216:0:590"
    ),
    "c8gd": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:234 12xlarge:48:98304:0:234 16xlarge:64:131072:0:737 "
        "24xlarge:96:196608:0:737 metal-24xl:96:196608:0:737 48xlarge:192:393216:0:737 "
        "metal-48xl:192:393216:0:737"
    ),
    "c8gn": (
        "medium:1:2048:0:8 large:2:4096:0:29 xlarge:4:8192:0:58 2xlarge:8:16384:0:58 "
        "4xlarge:16:32768:0:234 8xlarge:32:65536:0:292 12xlarge:48:98304:0:350 16xlarge:64:131072:0:786 "
        "24xlarge:96:196608:0:1178 metal-24xl:96:196608:0:1178 48xlarge:192:393216:0:590 "
        "metal-48xl:192:393216:0:590"
    ),
    "c8i": (
        "large:2:4096:0:59 xlarge:4:8192:0:118 2xlarge:8:16384:0:118 4xlarge:16:32768:0:394 "
        "8xlarge:32:65536:0:492 12xlarge:48:98304:0:590 16xlarge:64:131072:0:1010 "
        "24xlarge:96:196608:0:1010 32xlarge:128:262144:0:1514 48xlarge:192:393216:0:1514 "
        "metal-48xl:192:393216:0:1514 96xlarge:384:786432:0:1514 metal-96xl:384:786432:0:1514"
    ),
    "c8i-flex": (
        "large:2:4096:0:59 xlarge:4:8192:0:118 2xlarge:8:16384:0:118 4xlarge:16:32768:0:394 "
        "8xlarge:32:65536:0:492 12xlarge:48:98304:0:590 16xlarge:64:131072:0:1010"
    ),
    "c8ib": (
        "large:2:4096:0:78 xlarge:4:8192:0:118 2xlarge:8:16384:0:118 4xlarge:16:32768:0:394 "
        "8xlarge:32:65536:0:394 12xlarge:48:98304:0:590 16xlarge:64:131072:0:1010 "
        "24xlarge:96:196608:0:1010 32xlarge:128:262144:0:1010 48xlarge:192:393216:0:1514 "
        "metal-48xl:192:393216:0:1514 96xlarge:384:786432:0:758 metal-96xl:384:786432:0:758"
    ),
    "c8id": (
        "large:2:4096:0:59 xlarge:4:8192:0:118 2xlarge:8:16384:0:118 4xlarge:16:32768:0:394 "
        "8xlarge:32:65536:0:492 12xlarge:48:98304:0:590 16xlarge:64:131072:0:1010 "
        "24xlarge:96:196608:0:1010 32xlarge:128:262144:0:1514 48xlarge:192:393216:0:1514 "
        "metal-48xl:192:393216:0:1514 96xlarge:384:786432:0:1514 metal-96xl:384:786432:0:1514"
    ),
    "c8in": (
        "large:2:4096:0:78 xlarge:4:8192:0:118 2xlarge:8:16384:0:118 4xlarge:16:32768:0:394 "
        "8xlarge:32:65536:0:394 12xlarge:48:98304:0:590 16xlarge:64:131072:0:1010 "
        "24xlarge:96:196608:0:1010 32xlarge:128:262144:0:1010 48xlarge:192:393216:0:1514 "
        "metal-48xl:192:393216:0:1514 96xlarge:384:786432:0:758 metal-96xl:384:786432:0:758"
    ),
    "c8ine": (
        "large:2:4096:0:78 xlarge:4:8192:0:118 2xlarge:8:16384:0:118 4xlarge:16:32768:0:394 "
        "8xlarge:32:65536:0:394 12xlarge:48:98304:0:590"
    ),
    "c9g": (
        "medium:1:2048:0:40 large:2:4096:0:59 xlarge:4:8192:0:118 2xlarge:8:16384:0:118 "
        "4xlarge:16:32768:0:394 8xlarge:32:65536:0:492 12xlarge:48:98304:0:590 16xlarge:64:131072:0:1010 "
        "24xlarge:96:196608:0:1514 48xlarge:192:393216:0:1514 metal-48xl:192:393216:0:1514"
    ),
    "c9gd": (
        "medium:1:2048:0:40 large:2:4096:0:59 xlarge:4:8192:0:118 2xlarge:8:16384:0:118 "
        "4xlarge:16:32768:0:394 8xlarge:32:65536:0:492 12xlarge:48:98304:0:590 16xlarge:64:131072:0:1010 "
        "24xlarge:96:196608:0:1514 48xlarge:192:393216:0:1514 metal-48xl:192:393216:0:1514"
    ),
    "d2": "xlarge:4:31232:0:58 2xlarge:8:62464:0:58 4xlarge:16:124928:0:234 8xlarge:36:249856:0:234",
    "d3": "xlarge:4:32768:0:10 2xlarge:8:65536:0:18 4xlarge:16:131072:0:38 8xlarge:32:262144:0:59",
    "d3en": (
        "xlarge:4:16384:0:10 2xlarge:8:32768:0:18 4xlarge:16:65536:0:38 6xlarge:24:98304:0:58 "
        "8xlarge:32:131072:0:78 12xlarge:48:196608:0:89"
    ),
    "dl2q": "24xlarge:96:786432:0:737",
    "f2": "6xlarge:24:262144:0:234 12xlarge:48:524288:0:234 48xlarge:192:2097152:0:737",
    "g4ad": (
        "xlarge:4:16384:1:8 2xlarge:8:32768:1:8 4xlarge:16:65536:1:29 8xlarge:32:131072:2:58 16xlarge:64:262144:4:234"
    ),
    "g4dn": (
        "xlarge:4:16384:1:29 2xlarge:8:32768:1:29 4xlarge:16:65536:1:29 8xlarge:32:131072:1:58 "
        "12xlarge:48:196608:4:234 16xlarge:64:262144:1:58 metal:96:393216:8:737"
    ),
    "g5": (
        "xlarge:4:16384:1:58 2xlarge:8:32768:1:58 4xlarge:16:65536:1:234 8xlarge:32:131072:1:234 "
        "12xlarge:48:196608:4:737 16xlarge:64:262144:1:234 24xlarge:96:393216:4:737 "
        "48xlarge:192:786432:8:345"
    ),
    "g5g": (
        "xlarge:4:8192:1:58 2xlarge:8:16384:1:58 4xlarge:16:32768:1:234 8xlarge:32:65536:1:234 "
        "16xlarge:64:131072:2:737 metal:64:131072:2:737"
    ),
    "g6": (
        "xlarge:4:16384:1:58 2xlarge:8:32768:1:58 4xlarge:16:65536:1:234 8xlarge:32:131072:1:234 "
        "12xlarge:48:196608:4:234 16xlarge:64:262144:1:737 24xlarge:96:393216:4:737 "
        "48xlarge:192:786432:8:737"
    ),
    "g6e": (
        "xlarge:4:32768:1:58 2xlarge:8:65536:1:58 4xlarge:16:131072:1:234 8xlarge:32:262144:1:234 "
        "12xlarge:48:393216:4:292 16xlarge:64:524288:1:737 24xlarge:96:786432:4:492 "
        "48xlarge:192:1572864:8:492"
    ),
    "g6f": "large:2:8192:0:20 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234",
    "g7": (
        "2xlarge:8:32768:1:254 4xlarge:16:65536:1:506 8xlarge:32:131072:1:632 12xlarge:48:196608:2:758 "
        "24xlarge:96:393216:4:1514 48xlarge:192:786432:8:758"
    ),
    "g7e": (
        "2xlarge:8:65536:1:254 4xlarge:16:131072:1:506 8xlarge:32:262144:1:506 12xlarge:48:524288:2:632 "
        "24xlarge:96:1048576:4:632 48xlarge:192:2097152:8:632"
    ),
    "gr6": "4xlarge:16:131072:1:234 8xlarge:32:262144:1:234",
    "gr6f": "4xlarge:16:131072:0:234",
    "h1": "2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 8xlarge:32:131072:0:234 16xlarge:64:262144:0:394",
    "hpc6a": "48xlarge:96:393216:0:100",
    "hpc6id": "32xlarge:64:1048576:0:51",
    "hpc7a": ("12xlarge:24:786432:0:100 24xlarge:48:786432:0:100 48xlarge:96:786432:0:100 96xlarge:192:786432:0:100"),
    "hpc7g": "4xlarge:16:131072:0:198 8xlarge:32:131072:0:198 16xlarge:64:131072:0:198",
    "hpc8a": "96xlarge:192:786432:0:100",
    "i2": "xlarge:4:31232:0:58 2xlarge:8:62464:0:58 4xlarge:16:124928:0:234 8xlarge:32:249856:0:234",
    "i3": (
        "large:2:15616:0:29 xlarge:4:31232:0:58 2xlarge:8:62464:0:58 4xlarge:16:124928:0:234 "
        "8xlarge:32:249856:0:234 16xlarge:64:499712:0:737"
    ),
    "i3en": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 3xlarge:12:98304:0:58 "
        "6xlarge:24:196608:0:234 12xlarge:48:393216:0:234 24xlarge:96:786432:0:737 metal:96:786432:0:737"
    ),
    "i4g": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 16xlarge:64:524288:0:737"
    ),
    "i4i": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:437 32xlarge:128:1048576:0:737 metal:128:1048576:0:737"
    ),
    "i7i": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 metal-24xl:96:786432:0:737 48xlarge:192:1572864:0:737 "
        "metal-48xl:192:1572864:0:737"
    ),
    "i7ie": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 3xlarge:12:98304:0:58 "
        "6xlarge:24:196608:0:234 12xlarge:48:393216:0:394 18xlarge:72:589824:0:737 "
        "24xlarge:96:786432:0:737 metal-24xl:96:786432:0:737 48xlarge:192:1572864:0:737 "
        "metal-48xl:192:1572864:0:737"
    ),
    "i8g": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 metal-24xl:96:786432:0:737 48xlarge:192:1572864:0:737 "
        "metal-48xl:192:1572864:0:737"
    ),
    "i8ge": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 3xlarge:12:98304:0:176 "
        "6xlarge:24:196608:0:292 12xlarge:48:393216:0:350 18xlarge:72:589824:0:786 "
        "24xlarge:96:786432:0:786 metal-24xl:96:786432:0:786 48xlarge:192:1572864:0:1178 "
        "metal-48xl:192:1572864:0:1178"
    ),
    "im4gn": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 16xlarge:64:262144:0:737"
    ),
    "inf1": "xlarge:4:8192:0:38 2xlarge:8:16384:0:38 6xlarge:24:49152:0:234 24xlarge:96:196608:0:321",
    "inf2": "xlarge:4:16384:0:58 8xlarge:32:131072:0:234 24xlarge:96:393216:0:737 48xlarge:192:786432:0:737",
    "is4gen": (
        "medium:1:6144:0:8 large:2:12288:0:29 xlarge:4:24576:0:58 2xlarge:8:49152:0:58 "
        "4xlarge:16:98304:0:234 8xlarge:32:196608:0:234"
    ),
    "m1": "small:1:1740:0:8 medium:1:3788:0:12 large:2:7680:0:29 xlarge:4:15360:0:58",
    "m2": "xlarge:2:17510:0:58 2xlarge:4:35020:0:118 4xlarge:8:70041:0:234",
    "m3": "medium:1:3840:0:12 large:2:7680:0:29 xlarge:4:15360:0:58 2xlarge:8:30720:0:118",
    "m4": (
        "large:2:8192:0:20 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "10xlarge:40:163840:0:234 16xlarge:64:262144:0:234"
    ),
    "m5": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 metal:96:393216:0:737"
    ),
    "m5a": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737"
    ),
    "m5ad": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737"
    ),
    "m5d": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 metal:96:393216:0:737"
    ),
    "m5dn": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 metal:96:393216:0:737"
    ),
    "m5n": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 metal:96:393216:0:737"
    ),
    "m5zn": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 3xlarge:12:49152:0:234 "
        "6xlarge:24:98304:0:234 12xlarge:48:196608:0:737 metal:48:196608:0:737"
    ),
    "m6a": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 32xlarge:128:524288:0:737 48xlarge:192:786432:0:737 "
        "metal:192:786432:0:737"
    ),
    "m6g": (
        "medium:1:4096:0:8 large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 "
        "4xlarge:16:65536:0:234 8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737"
        " metal:64:262144:0:737"
    ),
    "m6gd": (
        "medium:1:4096:0:8 large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 "
        "4xlarge:16:65536:0:234 8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737"
        " metal:64:262144:0:737"
    ),
    "m6i": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 32xlarge:128:524288:0:737 metal:128:524288:0:737"
    ),
    "m6id": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 32xlarge:128:524288:0:737 metal:128:524288:0:737"
    ),
    "m6idn": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 32xlarge:128:524288:0:394 metal:128:524288:0:394"
    ),
    "m6in": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 32xlarge:128:524288:0:394 metal:128:524288:0:394"
    ),
    "m7a": (
        "medium:1:4096:0:8 large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 "
        "4xlarge:16:65536:0:234 8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737"
        " 24xlarge:96:393216:0:737 32xlarge:128:524288:0:737 48xlarge:192:786432:0:737 "
        "metal-48xl:192:786432:0:737"
    ),
    "m7g": (
        "medium:1:4096:0:8 large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 "
        "4xlarge:16:65536:0:234 8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737"
        " metal:64:262144:0:737"
    ),
    "m7gd": (
        "medium:1:4096:0:8 large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 "
        "4xlarge:16:65536:0:234 8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737"
        " metal:64:262144:0:737"
    ),
    "m7i": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737 "
        "24xlarge:96:393216:0:737 metal-24xl:96:393216:0:737 48xlarge:192:786432:0:737 "
        "metal-48xl:192:786432:0:737"
    ),
    "m7i-flex": (
        "large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 4xlarge:16:65536:0:234 "
        "8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737"
    ),
    "m8a": (
        "medium:1:4096:0:8 large:2:8192:0:59 xlarge:4:16384:0:78 2xlarge:8:32768:0:158 "
        "4xlarge:16:65536:0:314 8xlarge:32:131072:0:392 12xlarge:48:196608:0:758 "
        "16xlarge:64:262144:0:1010 24xlarge:96:393216:0:1010 metal-24xl:96:393216:0:1010 "
        "48xlarge:192:786432:0:1514 metal-48xl:192:786432:0:1514"
    ),
    "m8azn": (
        "medium:1:4096:0:11 large:2:8192:0:78 xlarge:4:16384:0:78 3xlarge:12:49152:0:314 "
        "6xlarge:24:98304:0:314 12xlarge:48:196608:0:1010 metal-12xl:48:196608:0:1010 "
        "24xlarge:96:393216:0:1010 metal-24xl:96:393216:0:1010"
    ),
    "m8g": (
        "medium:1:4096:0:8 large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 "
        "4xlarge:16:65536:0:234 8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737"
        " 24xlarge:96:393216:0:737 metal-24xl:96:393216:0:737 48xlarge:192:786432:0:737 "
        "metal-48xl:192:786432:0:737"
    ),
    "m8gb": (
        "medium:1:4096:0:8 large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 "
        "4xlarge:16:65536:0:234 8xlarge:32:131072:0:292 12xlarge:48:196608:0:350 16xlarge:64:262144:0:786"
        " 24xlarge:96:393216:0:1178 metal-24xl:96:393216:0:1178 48xlarge:192:786432:0:590 "
        "metal-48xl:192:786432:0:590"
    ),
    "m8gd": (
        "medium:1:4096:0:8 large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 "
        "4xlarge:16:65536:0:234 8xlarge:32:131072:0:234 12xlarge:48:196608:0:234 16xlarge:64:262144:0:737"
        " 24xlarge:96:393216:0:737 metal-24xl:96:393216:0:737 48xlarge:192:786432:0:737 "
        "metal-48xl:192:786432:0:737"
    ),
    "m8gn": (
        "medium:1:4096:0:8 large:2:8192:0:29 xlarge:4:16384:0:58 2xlarge:8:32768:0:58 "
        "4xlarge:16:65536:0:234 8xlarge:32:131072:0:292 12xlarge:48:196608:0:350 16xlarge:64:262144:0:786"
        " 24xlarge:96:393216:0:1178 metal-24xl:96:393216:0:1178 48xlarge:192:786432:0:590 "
        "metal-48xl:192:786432:0:590"
    ),
    "m8i": (
        "large:2:8192:0:59 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 4xlarge:16:65536:0:394 "
        "8xlarge:32:131072:0:492 12xlarge:48:196608:0:590 16xlarge:64:262144:0:1010 "
        "24xlarge:96:393216:0:1010 32xlarge:128:524288:0:1514 48xlarge:192:786432:0:1514 "
        "metal-48xl:192:786432:0:1514 96xlarge:384:1572864:0:1514 metal-96xl:384:1572864:0:1514"
    ),
    "m8i-flex": (
        "large:2:8192:0:59 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 4xlarge:16:65536:0:394 "
        "8xlarge:32:131072:0:492 12xlarge:48:196608:0:590 16xlarge:64:262144:0:1010"
    ),
    "m8ib": (
        "large:2:8192:0:78 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 4xlarge:16:65536:0:394 "
        "8xlarge:32:131072:0:394 12xlarge:48:196608:0:590 16xlarge:64:262144:0:1010 "
        "24xlarge:96:393216:0:1010 32xlarge:128:524288:0:1010 48xlarge:192:786432:0:1514 "
        "metal-48xl:192:786432:0:1514 96xlarge:384:1572864:0:758 metal-96xl:384:1572864:0:758"
    ),
    "m8id": (
        "large:2:8192:0:59 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 4xlarge:16:65536:0:394 "
        "8xlarge:32:131072:0:492 12xlarge:48:196608:0:590 16xlarge:64:262144:0:1010 "
        "24xlarge:96:393216:0:1010 32xlarge:128:524288:0:1514 48xlarge:192:786432:0:1514 "
        "metal-48xl:192:786432:0:1514 96xlarge:384:1572864:0:1514 metal-96xl:384:1572864:0:1514"
    ),
    "m8idb": (
        "large:2:8192:0:78 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 4xlarge:16:65536:0:394 "
        "8xlarge:32:131072:0:394 12xlarge:48:196608:0:590 16xlarge:64:262144:0:1010 "
        "24xlarge:96:393216:0:1010 32xlarge:128:524288:0:1010 48xlarge:192:786432:0:1514 "
        "metal-48xl:192:786432:0:1514 96xlarge:384:1572864:0:758 metal-96xl:384:1572864:0:758"
    ),
    "m8idn": (
        "large:2:8192:0:78 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 4xlarge:16:65536:0:394 "
        "8xlarge:32:131072:0:394 12xlarge:48:196608:0:590 16xlarge:64:262144:0:1010 "
        "24xlarge:96:393216:0:1010 32xlarge:128:524288:0:1010 48xlarge:192:786432:0:1514 "
        "metal-48xl:192:786432:0:1514 96xlarge:384:1572864:0:758 metal-96xl:384:1572864:0:758"
    ),
    "m8in": (
        "large:2:8192:0:78 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 4xlarge:16:65536:0:394 "
        "8xlarge:32:131072:0:394 12xlarge:48:196608:0:590 16xlarge:64:262144:0:1010 "
        "24xlarge:96:393216:0:1010 32xlarge:128:524288:0:1010 48xlarge:192:786432:0:1514 "
        "metal-48xl:192:786432:0:1514 96xlarge:384:1572864:0:758 metal-96xl:384:1572864:0:758"
    ),
    "m8ine": (
        "large:2:8192:0:78 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 4xlarge:16:65536:0:394 "
        "8xlarge:32:131072:0:394 12xlarge:48:196608:0:590"
    ),
    "m9g": (
        "medium:1:4096:0:40 large:2:8192:0:59 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 "
        "4xlarge:16:65536:0:394 8xlarge:32:131072:0:492 12xlarge:48:196608:0:590 "
        "16xlarge:64:262144:0:1010 24xlarge:96:393216:0:1514 48xlarge:192:786432:0:1514 "
        "metal-48xl:192:786432:0:1514"
    ),
    "m9gd": (
        "medium:1:4096:0:40 large:2:8192:0:59 xlarge:4:16384:0:118 2xlarge:8:32768:0:118 "
        "4xlarge:16:65536:0:394 8xlarge:32:131072:0:492 12xlarge:48:196608:0:590 "
        "16xlarge:64:262144:0:1010 24xlarge:96:393216:0:1514 48xlarge:192:786432:0:1514 "
        "metal-48xl:192:786432:0:1514"
    ),
    "p3": "2xlarge:8:62464:1:58 8xlarge:32:249856:4:234 16xlarge:64:499712:8:234",
    "p3dn": "24xlarge:96:786432:8:737",
    "p4d": "24xlarge:96:1179648:8:737",
    "p4de": "24xlarge:96:1179648:8:737",
    "p5": "4xlarge:16:262144:1:118 48xlarge:192:2097152:8:100",
    "p5e": "48xlarge:192:2097152:8:100",
    "p5en": "48xlarge:192:2097152:8:198",
    "p6-b200": "48xlarge:192:2097152:8:198",
    "p6-b300": "48xlarge:192:4194304:8:198",
    "r3": (
        "large:2:15360:0:29 xlarge:4:31232:0:58 2xlarge:8:62464:0:58 4xlarge:16:124928:0:234 8xlarge:32:249856:0:234"
    ),
    "r4": (
        "large:2:15616:0:29 xlarge:4:31232:0:58 2xlarge:8:62464:0:58 4xlarge:16:124928:0:234 "
        "8xlarge:32:249856:0:234 16xlarge:64:499712:0:737"
    ),
    "r5": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 metal:96:786432:0:737"
    ),
    "r5a": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737"
    ),
    "r5ad": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737"
    ),
    "r5b": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 metal:96:786432:0:737"
    ),
    "r5d": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 metal:96:786432:0:737"
    ),
    "r5dn": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 metal:96:786432:0:737"
    ),
    "r5n": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 metal:96:786432:0:737"
    ),
    "r6a": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 32xlarge:128:1048576:0:737 48xlarge:192:1572864:0:737 "
        "metal:192:1572864:0:737"
    ),
    "r6g": (
        "medium:1:8192:0:8 large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 "
        "4xlarge:16:131072:0:234 8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 "
        "16xlarge:64:524288:0:737 metal:64:524288:0:737"
    ),
    "r6gd": (
        "medium:1:8192:0:8 large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 "
        "4xlarge:16:131072:0:234 8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 "
        "16xlarge:64:524288:0:737 metal:64:524288:0:737"
    ),
    "r6i": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 32xlarge:128:1048576:0:737 metal:128:1048576:0:737"
    ),
    "r6id": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 32xlarge:128:1048576:0:737 metal:128:1048576:0:737"
    ),
    "r6idn": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 32xlarge:128:1048576:0:394 metal:128:1048576:0:394"
    ),
    "r6in": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 32xlarge:128:1048576:0:394 metal:128:1048576:0:394"
    ),
    "r7a": (
        "medium:1:8192:0:8 large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 "
        "4xlarge:16:131072:0:234 8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 "
        "16xlarge:64:524288:0:737 24xlarge:96:786432:0:737 32xlarge:128:1048576:0:737 "
        "48xlarge:192:1572864:0:737 metal-48xl:192:1572864:0:737"
    ),
    "r7g": (
        "medium:1:8192:0:8 large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 "
        "4xlarge:16:131072:0:234 8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 "
        "16xlarge:64:524288:0:737 metal:64:524288:0:737"
    ),
    "r7gd": (
        "medium:1:8192:0:8 large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 "
        "4xlarge:16:131072:0:234 8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 "
        "16xlarge:64:524288:0:737 metal:64:524288:0:737"
    ),
    "r7i": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "24xlarge:96:786432:0:737 metal-24xl:96:786432:0:737 48xlarge:192:1572864:0:737 "
        "metal-48xl:192:1572864:0:737"
    ),
    "r7iz": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 4xlarge:16:131072:0:234 "
        "8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 16xlarge:64:524288:0:737 "
        "metal-16xl:64:524288:0:737 32xlarge:128:1048576:0:737 metal-32xl:128:1048576:0:737"
    ),
    "r8a": (
        "medium:1:8192:0:8 large:2:16384:0:59 xlarge:4:32768:0:78 2xlarge:8:65536:0:158 "
        "4xlarge:16:131072:0:314 8xlarge:32:262144:0:392 12xlarge:48:393216:0:758 "
        "16xlarge:64:524288:0:1010 24xlarge:96:786432:0:1010 metal-24xl:96:786432:0:1010 "
        "48xlarge:192:1572864:0:1514 metal-48xl:192:1572864:0:1514"
    ),
    "r8g": (
        "medium:1:8192:0:8 large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 "
        "4xlarge:16:131072:0:234 8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 "
        "16xlarge:64:524288:0:737 24xlarge:96:786432:0:737 metal-24xl:96:786432:0:737 "
        "48xlarge:192:1572864:0:737 metal-48xl:192:1572864:0:737"
    ),
    "r8gb": (
        "medium:1:8192:0:8 large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 "
        "4xlarge:16:131072:0:234 8xlarge:32:262144:0:292 12xlarge:48:393216:0:350 "
        "16xlarge:64:524288:0:786 24xlarge:96:786432:0:1178 metal-24xl:96:786432:0:1178 "
        "48xlarge:192:1572864:0:590 metal-48xl:192:1572864:0:590"
    ),
    "r8gd": (
        "medium:1:8192:0:8 large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 "
        "4xlarge:16:131072:0:234 8xlarge:32:262144:0:234 12xlarge:48:393216:0:234 "
        "16xlarge:64:524288:0:737 24xlarge:96:786432:0:737 metal-24xl:96:786432:0:737 "
        "48xlarge:192:1572864:0:737 metal-48xl:192:1572864:0:737"
    ),
    "r8gn": (
        "medium:1:8192:0:8 large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 "
        "4xlarge:16:131072:0:234 8xlarge:32:262144:0:292 12xlarge:48:393216:0:350 "
        "16xlarge:64:524288:0:786 24xlarge:96:786432:0:1178 metal-24xl:96:786432:0:1178 "
        "48xlarge:192:1572864:0:590 metal-48xl:192:1572864:0:590"
    ),
    "r8i": (
        "large:2:16384:0:59 xlarge:4:32768:0:118 2xlarge:8:65536:0:118 4xlarge:16:131072:0:394 "
        "8xlarge:32:262144:0:492 12xlarge:48:393216:0:590 16xlarge:64:524288:0:1010 "
        "24xlarge:96:786432:0:1010 32xlarge:128:1048576:0:1514 48xlarge:192:1572864:0:1514 "
        "metal-48xl:192:1572864:0:1514 96xlarge:384:3145728:0:1514 metal-96xl:384:3145728:0:1514"
    ),
    "r8i-flex": (
        "large:2:16384:0:59 xlarge:4:32768:0:118 2xlarge:8:65536:0:118 4xlarge:16:131072:0:394 "
        "8xlarge:32:262144:0:492 12xlarge:48:393216:0:590 16xlarge:64:524288:0:1010"
    ),
    "r8ib": (
        "large:2:16384:0:78 xlarge:4:32768:0:118 2xlarge:8:65536:0:118 4xlarge:16:131072:0:394 "
        "8xlarge:32:262144:0:394 12xlarge:48:393216:0:590 16xlarge:64:524288:0:1010 "
        "24xlarge:96:786432:0:1010 32xlarge:128:1048576:0:1010 48xlarge:192:1572864:0:1514 "
        "metal-48xl:192:1572864:0:1514 96xlarge:384:3145728:0:758 metal-96xl:384:3145728:0:758"
    ),
    "r8id": (
        "large:2:16384:0:59 xlarge:4:32768:0:118 2xlarge:8:65536:0:118 4xlarge:16:131072:0:394 "
        "8xlarge:32:262144:0:492 12xlarge:48:393216:0:590 16xlarge:64:524288:0:1010 "
        "24xlarge:96:786432:0:1010 32xlarge:128:1048576:0:1514 48xlarge:192:1572864:0:1514 "
        "metal-48xl:192:1572864:0:1514 96xlarge:384:3145728:0:1514 metal-96xl:384:3145728:0:1514"
    ),
    "r8idb": (
        "large:2:16384:0:78 xlarge:4:32768:0:118 2xlarge:8:65536:0:118 4xlarge:16:131072:0:394 "
        "8xlarge:32:262144:0:394 12xlarge:48:393216:0:590 16xlarge:64:524288:0:1010 "
        "24xlarge:96:786432:0:1010 32xlarge:128:1048576:0:1010 48xlarge:192:1572864:0:1514 "
        "metal-48xl:192:1572864:0:1514 96xlarge:384:3145728:0:758 metal-96xl:384:3145728:0:758"
    ),
    "r8idn": (
        "large:2:16384:0:78 xlarge:4:32768:0:118 2xlarge:8:65536:0:118 4xlarge:16:131072:0:394 "
        "8xlarge:32:262144:0:394 12xlarge:48:393216:0:590 16xlarge:64:524288:0:1010 "
        "24xlarge:96:786432:0:1010 32xlarge:128:1048576:0:1010 48xlarge:192:1572864:0:1514 "
        "metal-48xl:192:1572864:0:1514 96xlarge:384:3145728:0:758 metal-96xl:384:3145728:0:758"
    ),
    "r8in": (
        "large:2:16384:0:78 xlarge:4:32768:0:118 2xlarge:8:65536:0:118 4xlarge:16:131072:0:394 "
        "8xlarge:32:262144:0:394 12xlarge:48:393216:0:590 16xlarge:64:524288:0:1010 "
        "24xlarge:96:786432:0:1010 32xlarge:128:1048576:0:1010 48xlarge:192:1572864:0:1514 "
        "metal-48xl:192:1572864:0:1514 96xlarge:384:3145728:0:758 metal-96xl:384:3145728:0:758"
    ),
    "t1": "micro:1:627:0:4",
    "t2": (
        "nano:1:512:0:4 micro:1:1024:0:4 small:1:2048:0:11 medium:2:4096:0:17 large:2:8192:0:35 "
        "xlarge:4:16384:0:44 2xlarge:8:32768:0:44"
    ),
    "t3": (
        "nano:2:512:0:4 micro:2:1024:0:4 small:2:2048:0:11 medium:2:4096:0:17 large:2:8192:0:35 "
        "xlarge:4:16384:0:58 2xlarge:8:32768:0:58"
    ),
    "t3a": (
        "nano:2:512:0:4 micro:2:1024:0:4 small:2:2048:0:8 medium:2:4096:0:17 large:2:8192:0:35 "
        "xlarge:4:16384:0:58 2xlarge:8:32768:0:58"
    ),
    "t4g": (
        "nano:2:512:0:4 micro:2:1024:0:4 small:2:2048:0:11 medium:2:4096:0:17 large:2:8192:0:35 "
        "xlarge:4:16384:0:58 2xlarge:8:32768:0:58"
    ),
    "trn1": "2xlarge:8:32768:0:58 32xlarge:128:524288:0:247",
    "trn1n": "32xlarge:128:524288:0:247",
    "trn2": "48xlarge:192:2097152:0:100",
    "u-3tb1": "56xlarge:224:3145728:0:234",
    "u-6tb1": "56xlarge:224:6291456:0:737 112xlarge:448:6291456:0:737",
    "u7i-12tb": "224xlarge:896:12582912:0:737",
    "u7i-6tb": "112xlarge:448:6291456:0:737",
    "u7i-8tb": "112xlarge:448:8388608:0:737",
    "u7in-16tb": "224xlarge:896:16777216:0:394",
    "u7in-24tb": "224xlarge:896:25165824:0:394",
    "u7in-32tb": "224xlarge:896:33554432:0:394",
    "vt1": "3xlarge:12:24576:0:58 6xlarge:24:49152:0:234 24xlarge:96:196608:0:737",
    "x1": "16xlarge:64:999424:0:234 32xlarge:128:1998848:0:234",
    "x1e": (
        "xlarge:4:124928:0:29 2xlarge:8:249856:0:58 4xlarge:16:499712:0:58 8xlarge:32:999424:0:58 "
        "16xlarge:64:1998848:0:234 32xlarge:128:3997696:0:234"
    ),
    "x2gd": (
        "medium:1:16384:0:8 large:2:32768:0:29 xlarge:4:65536:0:58 2xlarge:8:131072:0:58 "
        "4xlarge:16:262144:0:234 8xlarge:32:524288:0:234 12xlarge:48:786432:0:234 "
        "16xlarge:64:1048576:0:737 metal:64:1048576:0:737"
    ),
    "x2idn": ("16xlarge:64:1048576:0:737 24xlarge:96:1572864:0:737 32xlarge:128:2097152:0:737 metal:128:2097152:0:737"),
    "x2iedn": (
        "xlarge:4:131072:0:58 2xlarge:8:262144:0:58 4xlarge:16:524288:0:234 8xlarge:32:1048576:0:234 "
        "16xlarge:64:2097152:0:737 24xlarge:96:3145728:0:737 32xlarge:128:4194304:0:737 "
        "metal:128:4194304:0:737"
    ),
    "x2iezn": (
        "2xlarge:8:262144:0:58 4xlarge:16:524288:0:234 6xlarge:24:786432:0:234 8xlarge:32:1048576:0:234 "
        "12xlarge:48:1572864:0:737 metal:48:1572864:0:737"
    ),
    "x8aedz": (
        "large:2:65536:0:78 xlarge:4:131072:0:78 3xlarge:12:393216:0:314 6xlarge:24:786432:0:314 "
        "12xlarge:48:1572864:0:1010 metal-12xl:48:1572864:0:1010 24xlarge:96:3145728:0:1010 "
        "metal-24xl:96:3145728:0:1010"
    ),
    "x8g": (
        "medium:1:16384:0:8 large:2:32768:0:29 xlarge:4:65536:0:58 2xlarge:8:131072:0:58 "
        "4xlarge:16:262144:0:234 8xlarge:32:524288:0:234 12xlarge:48:786432:0:234 "
        "16xlarge:64:1048576:0:737 24xlarge:96:1572864:0:737 metal-24xl:96:1572864:0:737 "
        "48xlarge:192:3145728:0:737 metal-48xl:192:3145728:0:737"
    ),
    "x8i": (
        "large:2:32768:0:59 xlarge:4:65536:0:118 2xlarge:8:131072:0:118 4xlarge:16:262144:0:394 "
        "8xlarge:32:524288:0:492 12xlarge:48:786432:0:590 16xlarge:64:1048576:0:1010 "
        "24xlarge:96:1572864:0:1010 32xlarge:128:2097152:0:1514 48xlarge:192:3145728:0:1514 "
        "metal-48xl:192:3145728:0:1514 64xlarge:256:4194304:0:1514 96xlarge:384:6291456:0:1514 "
        "metal-96xl:384:6291456:0:1514"
    ),
    "z1d": (
        "large:2:16384:0:29 xlarge:4:32768:0:58 2xlarge:8:65536:0:58 3xlarge:12:98304:0:234 "
        "6xlarge:24:196608:0:234 12xlarge:48:393216:0:737 metal:48:393216:0:737"
    ),
}
# ---- end of sizegen's output -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def sizes(family: str) -> tuple[InstanceType, ...]:
    """Every size of ``family`` the table knows, smallest first; () for a family it does not size."""
    found = []
    for entry in _SIZES.get(family_of(family), "").split():
        size, cpus, mib, gpus, pods = entry.split(":")
        found.append(InstanceType(f"{family}.{size}", int(cpus), int(mib), int(gpus), int(pods)))
    return tuple(sorted(found, key=lambda t: (t.vcpus, t.memory_mib, t.gpus)))


def sized_families() -> list[str]:
    return sorted(_SIZES)


def instance_type(name: str) -> Optional[InstanceType]:
    """One type's size facts, or None when the table does not know it."""
    name = name.strip().lower()
    return next((t for t in sizes(family_of(name)) if t.name == name), None)


# ---- NVIDIA driver branches: which EKS AL2023 NVIDIA AMI drives which family ------------------------------

DRIVER_SOURCE = (
    "awslabs/amazon-eks-ami: templates/al2023/runtime/gpu/nvidia-open-supported-devices-<branch>.txt (the first "
    "branch whose open kernel module lists a GPU), the release tags' templates/al2023/variables-*.json "
    "(nvidia_driver_major_version by release and Kubernetes minor), doc/usage/g7-ami.md (PR #2747: 595 drops P3, "
    "P3dn and G6f), and issue #2768 / PR #2808 (2026-09-21: from release v20260917 the EKS AMI carries two driver "
    "trees and picks one per instance type at first boot, PR #2819)"
)
DRIVER_BRANCHES: dict[str, tuple[Optional[int], Optional[int]]] = {
    "p6-b200": (570, None),
    "p6e-gb200": (570, None),
    "g7e": (575, None),
    "p6-b300": (580, None),
    "p6e-gb300": (580, None),
    "g7": (595, None),
    "p3": (None, 594),
    "p3dn": (None, 594),
    "g6f": (None, 594),
}
"""Family -> (oldest, newest) NVIDIA driver branch that drives it; None: no bound known. The oldest is the
first branch whose supported-devices list (amazon-eks-ami ``templates/al2023/runtime/gpu/``) names the
family's GPU: B200 (0x2901) and GB200 (0x2941) from 570, the RTX PRO 6000 Blackwell Server Edition (0x2BB5,
G7e) from 575, B300 (0x3182) and GB300 (0x31C2) from 580, the RTX PRO 4500 Blackwell Server Edition (0x2C3A,
G7) only in 595. With an older driver the AMI loads the proprietary kernel module, which Blackwell GPUs
refuse (amazon-eks-ami #2768, #2769: "No devices were found"). The newest: 595 does not support P3, P3dn
and G6f (doc/usage/g7-ami.md)."""


def driver_problem(family: str, branch: int) -> Optional[str]:
    """Why driver ``branch`` cannot drive ``family`` (``g7 needs NVIDIA driver 595 or newer``), or None."""
    low, high = DRIVER_BRANCHES.get(family_of(family), (None, None))
    if low is not None and branch < low:
        return f"{family_of(family)} needs NVIDIA driver {low} or newer"
    if high is not None and branch > high:
        return f"{family_of(family)} is not supported by NVIDIA driver {high + 1} or newer"
    return None


@dataclass(frozen=True)
class Driver:
    """The NVIDIA driver an AMI runs: one branch, or (``branch`` None) the one it picks per instance type."""

    branch: Optional[int]
    where: str
    """Where it was read: ``its name``, ``its description``, the EKS release table, ``the AMI facts``."""

    @property
    def per_instance(self) -> bool:
        return self.branch is None

    def problem(self, family: str) -> Optional[str]:
        """Why it cannot drive ``family``, or None. An AMI that picks its driver per instance type picks one
        that drives the family (the EKS maintainers' statement for release v20260917 and later)."""
        return None if self.branch is None else driver_problem(family, self.branch)


EKS_NVIDIA_DRIVERS: tuple[tuple[str, int, dict[int, int]], ...] = (
    ("20240904", 555, {}),
    ("20240928", 560, {}),
    ("20250410", 570, {}),
    ("20250715", 575, {}),
    ("20250807", 570, {}),
    ("20251023", 580, {minor: 570 for minor in range(28, 34)}),
    ("20251029", 580, {minor: 570 for minor in range(28, 33)}),
    ("20251108", 580, {minor: 570 for minor in (28, 29, 30)}),
    ("20251120", 580, {28: 570}),
)
"""The official EKS AL2023 NVIDIA AMIs' driver branch by release: (first release, default branch, Kubernetes
minor -> its own branch), read from each release tag's ``templates/al2023/variables-default.json`` and
``variables-1.<minor>.json`` (``nvidia_driver_major_version``) in awslabs/amazon-eks-ami: 555 from v20240904,
560 from v20240928, 570 from v20250410, 575 from v20250715, 570 again from v20250807 (PR #2346), then 580 for
1.34 and later from v20251023, 1.33 from v20251029, 1.31-1.32 from v20251108, 1.29-1.30 from v20251120
(1.28 stays on 570). An earlier release is not in the table: its branch is unknown here."""
EKS_PER_INSTANCE_DRIVER = "20260917"
"""From this release the official AMIs carry two driver trees, a long-term-support and a production branch,
and pick one by the instance type at first boot (amazon-eks-ami PR #2819, "bake lts and pb driver trees,
resolve one at boot"; an AWS maintainer on issue #2768 and PR #2808, 2026-09-21: "The EKS AMIs now include two
NVIDIA driver versions and select the correct one based on the instance type at first boot", from release
v20260917, G7 included; a user confirmed G7 and G6f there). The choice is made at first boot by
``templates/al2023/runtime/gpu/resolve-nvidia-driver.sh`` (amazon-eks-ami, read at commit fe18b8b): it takes the
long-term-support tree's open kernel module when that branch's supported-devices list names every NVIDIA GPU
attached (by PCI device id), else the production branch's open module when its list does, else the
long-term-support branch's proprietary module; L4 vGPU slices (G6f) get the GRID flavour, and G4dn, G5 and G5g
always run the long-term-support proprietary module with GSP firmware off. So it is the GPUs the instance type
carries that choose, and a GPU either branch lists is driven. The release notes naming the two majors could not
be read here: the rack relies on the statement and the script, not on branch numbers."""
EKS_PER_INSTANCE_BRANCHES = (580, 595)
"""The two driver trees such an AMI carries: ``nvidia_driver_lts_version = "580"`` and ``nvidia_driver_pb_version =
"595"`` (awslabs/amazon-eks-ami ``templates/al2023/variables-default.pkrvars.hcl``, commit be7adc2e). Between them
every family of ``DRIVER_BRANCHES`` is driven: G7 by 595, P3, P3dn and G6f by 580."""


def official_driver(minor: Optional[int], release: str, minors: Iterable[int] = ()) -> Optional[Driver]:
    """The driver of the official EKS AL2023 NVIDIA AMI of ``release`` (``YYYYMMDD``) for Kubernetes
    ``minor``, or, with ``minor`` None, for every minor of ``minors`` (every minor the table names when empty:
    known only when all had the same branch); None when the table does not say."""
    if release >= EKS_PER_INSTANCE_DRIVER:
        return Driver(None, f"the EKS AMI of release v{release}, which picks a driver per instance type")
    row = next((r for r in reversed(EKS_NVIDIA_DRIVERS) if release >= r[0]), None)
    if row is None:
        return None
    _, default, own = row
    among = [minor] if minor is not None else (list(minors) or [*own, max(own, default=0) + 1])
    branches = {own.get(m, default) for m in among}
    if len(branches) != 1:
        return None
    return Driver(
        branches.pop(), f"the EKS AMI of release v{release}" + (f" for 1.{minor}" if minor is not None else "")
    )


_BRANCH_RE = re.compile(
    r"nvidia[-_ ]?(?:driver[-_ ]?)?(?:r|v)?([0-9]{3})(?![0-9])"  # ...-nvidia-595-..., nvidia595
    r"|([0-9]{3})(?:\.[0-9]+)*[-_ ]?(?:nvidia[-_ ]?)?driver"  # NVIDIA 580 driver, 595.12 driver
    r"|driver[-_ ]?(?:version[-_ ]?|branch[-_ ]?)?([0-9]{3})(?![0-9])",  # driver 595.12.01, driver-branch-595
    re.IGNORECASE,
)
_EKS_NVIDIA_NAME_RE = re.compile(r"amazon-eks-node-al2023-(?:x86_64|arm64)-nvidia-1\.([0-9]+)-v([0-9]{8})")


def ami_driver(name: str, description: str = "") -> Optional[Driver]:
    """The NVIDIA driver an AMI's name or description states (``...-nvidia-595-...``, ``NVIDIA 580
    driver``), else the driver of an official EKS AL2023 NVIDIA AMI by its release (``official_driver``);
    None when neither says."""
    for text, where in ((name, "its name"), (description, "its description")):
        match = _BRANCH_RE.search(text or "")
        if match:
            return Driver(int(next(g for g in match.groups() if g)), where)
    official = _EKS_NVIDIA_NAME_RE.fullmatch(name or "")
    if official:
        return official_driver(int(official.group(1)), official.group(2))
    return None


def image_driver(stated: Optional[int], name: str, description: str = "") -> Optional[Driver]:
    """An image's driver: the branch its facts state (the policy config's ``nvidiaDriverBranch``), else what its
    name, description or release says (``ami_driver``)."""
    return Driver(stated, "the AMI facts") if stated is not None else ami_driver(name, description)


def stock_ami_problem(families: Iterable[str], release: Optional[str], minors: Iterable[int] = ()) -> Optional[str]:
    """Why the EKS-optimized AL2023 NVIDIA AMI cannot drive ``families``: the one of release ``release``
    (``YYYYMMDD``, a pinned alias) for the Kubernetes ``minors`` the cluster may run, or (None) the latest
    release, which picks a driver per instance type. A family no EKS AMI drives (P2: 470 or older) is named;
    a release whose driver is unknown here, or differs between those minors, is not judged."""
    nvidia = sorted(set(nvidia_families(families)))
    unserved = [f for f in nvidia if not facts(f).eks_nvidia_ami]
    if unserved:
        what = (
            f"instance family {unserved[0]} needs"
            if len(unserved) == 1
            else f"instance families {', '.join(unserved)} need"
        )
        return f"{what} an NVIDIA driver the EKS-optimized AL2023 NVIDIA AMI does not ship"
    driver = official_driver(None, release, minors) if release is not None else None
    problems = [p for f in nvidia if driver is not None and (p := driver.problem(f))]
    if not problems or driver is None:
        return None
    return (
        f"the EKS-optimized AL2023 NVIDIA AMI of release v{release} runs NVIDIA driver {driver.branch}, which "
        f"cannot drive instances the lane can launch: {'; '.join(problems)}"
    )
