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

import re
from dataclasses import dataclass
from typing import Iterable, Optional

SOURCE = (
    "botocore 1.44.8's EC2 InstanceType enum (2026-11-20); Karpenter's generated instance-type reference "
    "(v1.14.0, 2026-07-11) and eksctl's instance table (2026-08-12), both from DescribeInstanceTypes in "
    "us-east-1, us-east-2 and us-west-2; awslabs/amazon-eks-ami (release v20260714) for which EKS AMI drives what"
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
    """For NVIDIA families: the EKS-optimized AL2023 NVIDIA AMI's driver (580) runs it. G7 needs driver
    595 or newer (a custom AMI, amazon-eks-ami doc/usage/g7-ami.md); P2 needs 470 or older (unsupported)."""

    @property
    def accelerated(self) -> bool:
        return bool(self.gpu or self.neuron or self.accelerator)


def _nvidia(name: str, model: str, arch: str = X86, eks_ami: bool = True) -> Family:
    return Family(name, arch, gpu=NVIDIA, gpu_model=model, eks_nvidia_ami=eks_ami)


_ACCELERATED = (
    # NVIDIA on x86_64 hosts (p2, p3, g2, g3, g3s, cg1: previous generation, kept so old configs are judged right)
    _nvidia("p2", "K80", eks_ami=False), _nvidia("p3", "V100"), _nvidia("p3dn", "V100"),
    _nvidia("p4d", "A100"), _nvidia("p4de", "A100"),
    _nvidia("p5", "H100"), _nvidia("p5e", "H200"), _nvidia("p5en", "H200"),
    _nvidia("p6-b200", "B200"), _nvidia("p6-b300", "B300"),
    _nvidia("cg1", "Tesla"), _nvidia("g2", "K520"), _nvidia("g3", "M60"), _nvidia("g3s", "M60"),
    _nvidia("g4dn", "T4"), _nvidia("g5", "A10G"), _nvidia("g6", "L4"), _nvidia("g6e", "L40S"),
    _nvidia("g6f", "L4 (fractional)"), _nvidia("gr6", "L4"), _nvidia("gr6f", "L4 (fractional)"),
    _nvidia("g7", "RTX PRO 4500 Blackwell", eks_ami=False), _nvidia("g7e", "RTX PRO 6000 Blackwell Server"),
    # NVIDIA on arm64 hosts: Graviton2 (g5g) and NVIDIA Grace (GB200, GB300)
    _nvidia("g5g", "T4G", ARM), _nvidia("p6e-gb200", "GB200", ARM), _nvidia("p6e-gb300", "GB300", ARM),
    # AMD GPUs
    Family("g4ad", X86, gpu=AMD, gpu_model="Radeon Pro V520"),
    # AWS Neuron: Inferentia and Trainium
    Family("inf1", neuron=True), Family("inf2", neuron=True),
    Family("trn1", neuron=True), Family("trn1n", neuron=True), Family("trn2", neuron=True), Family("trn2u", neuron=True),
    # other accelerators
    Family("dl1", accelerator="Habana Gaudi"), Family("dl2q", accelerator="Qualcomm AI 100"),
    Family("f1", accelerator="FPGA"), Family("f2", accelerator="FPGA"), Family("vt1", accelerator="video transcoding"),
)

_GRAVITON = (
    "a1", "t4g",
    "c6g", "c6gd", "c6gn", "c7g", "c7gd", "c7gn", "c8g", "c8gb", "c8gd", "c8gn", "c9g", "c9gd",
    "m6g", "m6gd", "m7g", "m7gd", "m8g", "m8gb", "m8gd", "m8gn", "m9g", "m9gd",
    "r6g", "r6gd", "r7g", "r7gd", "r8g", "r8gb", "r8gd", "r8gn", "r9g", "r9gd",
    "x2gd", "x8g", "hpc7g", "im4gn", "is4gen", "i4g", "i8g", "i8ge",
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


def facts(instance_type: str) -> Family:
    """The facts of an instance type's (or a family's) family."""
    name = family_of(instance_type)
    known: Optional[Family] = FAMILIES.get(name)
    if known is not None:
        return known
    return Family(name, ARM if _GRAVITON_NAME_RE.fullmatch(name) else X86, neuron=bool(_NEURON_NAME_RE.fullmatch(name)))


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


# ---- vCPUs and memory, where EC2's naming tells them ------------------------------------------------------------

_BURSTABLE = {  # size -> (vCPUs, GiB): EC2's burstable general-purpose types (T3, T3a, T4g; T2 below)
    "nano": (2, 0.5), "micro": (2, 1), "small": (2, 2), "medium": (2, 4), "large": (2, 8), "xlarge": (4, 16),
    "2xlarge": (8, 32),
}
_T2 = {**_BURSTABLE, "nano": (1, 0.5), "micro": (1, 1), "small": (1, 2)}
_GIB_PER_VCPU = {"c": 2, "m": 4, "r": 8}
"""The least memory per vCPU of EC2's compute (c), general purpose (m) and memory optimized (r) families."""
_SIZE_RE = re.compile(r"(medium|large|xlarge|([0-9]+)xlarge)")


def capacity(instance_type: str) -> Optional[tuple[int, float]]:
    """An instance type's vCPUs and memory GiB where EC2's naming tells them (never more than EC2
    gives): T2/T3/T3a/T4g by size; C, M and R families as ``medium`` 1, ``large`` 2, ``xlarge`` 4,
    ``<n>xlarge`` 4n vCPUs with their family's least GiB per vCPU (2, 4, 8). None for any other
    family or size (``metal``, storage or accelerated families, generations before the fifth): not judged."""
    family, _, size = instance_type.strip().lower().partition(".")
    if family in ("t3", "t3a", "t4g"):
        return _BURSTABLE.get(size)
    if family == "t2":
        return _T2.get(size)
    match = _SIZE_RE.fullmatch(size)
    ratio = _GIB_PER_VCPU.get(family[:1])
    # from the fifth generation on (a c4 has 1.875 GiB per vCPU, a c1.medium 2 vCPUs)
    if match is None or ratio is None or facts(family).accelerated or not re.fullmatch(r"[cmr]([5-9]|[1-9][0-9])[a-z-]*", family):
        return None
    vcpus = {"medium": 1, "large": 2, "xlarge": 4}.get(size) or 4 * int(match.group(2))
    return vcpus, float(vcpus * ratio)
