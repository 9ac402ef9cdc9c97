"""The OS families a node boots, one record each: what Karpenter, EKS and pulumi-eks do with each family.

A record says how the family is named (the rack's and the pack's lowercase name, which ``lane.NodeOs`` values are;
the ``amiFamily``/``operatingSystem`` spelling), the EC2NodeClass alias that follows its releases, its block
devices (the OS volume it boots from and the data volume images and pods write to) with Karpenter's default sizes,
its EKS AMI types and what an AMI's name says when it is one of its images, and what the rack lets a lane of it do
(run the NVIDIA device plugin on GPU lanes, pin an AMI of one's own). Read it where code would branch on an OS.

Read from upstream, in the shape upstream gives it:

- aws/karpenter-provider-aws at 1d927085 (v1.14.0-68), ``pkg/providers/amifamily/``: the ``AMIFamily`` interface
  (``resolver.go``) gives each family its default block device mappings and its ``EphemeralBlockDevice`` (the
  volume the kubelet and the container runtime use). ``DefaultEBS`` is 20Gi of encrypted gp3; AL2023 and AL2 map it
  on ``/dev/xvda`` (``al2023.go``, ``al2.go``); Bottlerocket maps a 4Gi copy on ``/dev/xvda`` and ``DefaultEBS`` on
  ``/dev/xvdb``, its ephemeral device (``bottlerocket.go``). The alias families and the ``amiFamily`` enum are the
  EC2NodeClass CRD's (``pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml``).
- pulumi/pulumi-eks at 7bf0c1b1, ``nodejs/eks/nodes/ami.ts`` ``amiTypeMetadata``: each EKS AMI type with its OS
  (``AL2``, ``AL2023``, ``Bottlerocket``), GPU support and architecture; ``nodejs/eks/nodes/nodegroup.ts`` puts a
  managed node group's ``diskSize`` on ``/dev/xvda`` for AL2 and AL2023 and on ``/dev/xvdb`` for Bottlerocket.
  EKS's ``CreateNodegroup`` takes more AMI types than pulumi-eks lists (``AL2023_ARM_64_NVIDIA``,
  ``AL2023_x86_64_NEURON``).
  ``nodejs/eks/nodes/userdata.ts`` writes a node's user data in the family's format: nodeadm ``NodeConfig``
  documents in a MIME multipart for AL2023, a ``bootstrap.sh`` shell script in a MIME multipart for AL2, TOML
  settings for Bottlerocket.
- The EC2NodeClass CRD of Karpenter v1.14.1 (``amiSelectorTerms[].alias``): ``family@version``, the version
  ``latest`` or a release in the family's own form (``al2023@v20240625``, ``bottlerocket@v1.10.0``);
  Bottlerocket's ``DescribeImageQuery`` (karpenter-provider-aws 1d927085, ``pkg/providers/amifamily/bottlerocket.go``)
  trims the ``v``, as Bottlerocket's SSM paths name a release without it, so ``bottlerocket@1.10.0`` selects it too.

Windows is not a record: the rack never runs it and the pack only names it (``kubernetes.io/os=windows``).
Standard library only, like every module of ``facts``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional

STANDARD = ""
"""An AMI type's accelerator: none."""
NVIDIA = "nvidia"
"""An AMI type's accelerator: NVIDIA GPUs (driver and container toolkit in the image)."""
NEURON = "neuron"
"""An AMI type's accelerator: AWS Inferentia and Trainium (the Neuron driver in the image)."""
NODEADM = "nodeadm"
"""A node's user data: nodeadm ``NodeConfig`` documents in a MIME multipart."""
BOOTSTRAP_SH = "bootstrap.sh"
"""A node's user data: a shell script that runs ``/etc/eks/bootstrap.sh``, in a MIME multipart."""
BOTTLEROCKET_TOML = "toml"
"""A node's user data: Bottlerocket's TOML settings."""


@dataclass(frozen=True)
class OsFamily:
    """One OS family, as Karpenter's ``AMIFamily`` and pulumi-eks's ``amiTypeMetadata`` describe it."""

    name: str
    """The lowercase name: ``lane.NodeOs``'s value, the alias's family, what the pack calls the family."""
    family: str
    """The EC2NodeClass ``amiFamily`` and pulumi-eks ``operatingSystem`` spelling (``AL2023``, ``Bottlerocket``)."""
    alias: str
    """The EC2NodeClass ``amiSelectorTerms`` alias that follows the family's latest release."""
    alias_pattern: re.Pattern[str]
    """An alias of the family, ``latest`` or one release: group 1 is the version (``latest``, ``v20240625``)."""
    os_device: str
    """The device the family's images boot from (the AMI's root device)."""
    data_device: str
    """The device images and pods write to (Karpenter's ``EphemeralBlockDevice``, where pulumi-eks puts
    ``diskSize``)."""
    block_devices: tuple[tuple[str, int], ...]
    """Karpenter's default block device mappings for the family: (device, GiB), the OS volume first."""
    eks_root_snapshot_gib: Optional[int]
    """The root snapshot of the family's EKS-optimized AMIs (the volume awslabs/amazon-eks-ami builds them on,
    ``launch_block_device_mappings_volume_size``), which a lane's disk must hold when its data is on the root; None
    exactly where it is not (``data_is_root``: Bottlerocket's pods write to a data volume of their own)."""
    ami_type_prefix: str
    """How the family's EKS AMI types begin."""
    ami_types: Mapping[tuple[str, str], str]
    """The family's EKS AMI types: (EC2 architecture, accelerator: ``STANDARD``, ``NVIDIA``, ``NEURON``) -> type."""
    ami_name_pattern: re.Pattern[str]
    """What an AMI's name or description says when it is one of the family's images."""
    user_data: str
    """The format pulumi-eks writes a node's user data in: ``NODEADM``, ``BOOTSTRAP_SH`` or ``BOTTLEROCKET_TOML``."""
    gpu_lanes: bool
    """Whether a GPU lane may run it: the rack's NVIDIA device plugin serves its GPU nodes (Bottlerocket's NVIDIA
    variants run a device plugin of their own, so the rack refuses GPU lanes on them)."""
    pinned_ami: bool
    """Whether a lane of it may pin an AMI of its own (the rack pins only AL2023 images)."""
    alias_release: bool
    """Whether a rack pool picks the release its alias selects (``ami_alias``); else the pool follows ``alias``."""

    @property
    def data_is_root(self) -> bool:
        """Whether images and pods share the root volume, so a lane's disk must hold the image's root snapshot."""
        return self.data_device == self.os_device

    @property
    def default_root_gib(self) -> float:
        """The size Karpenter gives the OS volume of an EC2NodeClass that sets no ``blockDeviceMappings``."""
        return float(self.block_devices[0][1])


_ROOT = "/dev/xvda"
_DEFAULT_EBS_GIB = 20

AL2023 = OsFamily(
    name="al2023",
    family="AL2023",
    alias="al2023@latest",
    alias_pattern=re.compile(r"al2023@(latest|v[0-9]{8})"),
    os_device=_ROOT,
    data_device=_ROOT,
    block_devices=((_ROOT, _DEFAULT_EBS_GIB),),
    eks_root_snapshot_gib=20,
    ami_type_prefix="AL2023_",
    ami_types={
        ("x86_64", STANDARD): "AL2023_x86_64_STANDARD",
        ("arm64", STANDARD): "AL2023_ARM_64_STANDARD",
        ("x86_64", NVIDIA): "AL2023_x86_64_NVIDIA",
        ("arm64", NVIDIA): "AL2023_ARM_64_NVIDIA",
        ("x86_64", NEURON): "AL2023_x86_64_NEURON",
    },
    ami_name_pattern=re.compile(r"al2023|amazon linux 2023|amzn-2023|amzn2023", re.I),
    user_data=NODEADM,
    gpu_lanes=True,
    pinned_ami=True,
    alias_release=True,
)
"""Amazon Linux 2023: one root volume; every lane may run it; GPU lanes and pinned AMIs must."""

BOTTLEROCKET = OsFamily(
    name="bottlerocket",
    family="Bottlerocket",
    alias="bottlerocket@latest",
    alias_pattern=re.compile(r"bottlerocket@(latest|v?[0-9]+\.[0-9]+\.[0-9]+)"),
    os_device=_ROOT,
    data_device="/dev/xvdb",
    block_devices=((_ROOT, 4), ("/dev/xvdb", _DEFAULT_EBS_GIB)),
    eks_root_snapshot_gib=None,
    ami_type_prefix="BOTTLEROCKET_",
    ami_types={
        ("x86_64", STANDARD): "BOTTLEROCKET_x86_64",
        ("arm64", STANDARD): "BOTTLEROCKET_ARM_64",
        ("x86_64", NVIDIA): "BOTTLEROCKET_x86_64_NVIDIA",
        ("arm64", NVIDIA): "BOTTLEROCKET_ARM_64_NVIDIA",
    },
    ami_name_pattern=re.compile(r"bottlerocket", re.I),
    user_data=BOTTLEROCKET_TOML,
    gpu_lanes=False,
    pinned_ami=False,
    alias_release=False,
)
"""Bottlerocket: a small OS volume and a data volume; the hardened default lane, no GPU lanes, no pinned AMI."""

AL2 = OsFamily(
    name="al2",
    family="AL2",
    alias="al2@latest",
    alias_pattern=re.compile(r"al2@(latest|v[0-9]{8})"),
    os_device=_ROOT,
    data_device=_ROOT,
    block_devices=((_ROOT, _DEFAULT_EBS_GIB),),
    eks_root_snapshot_gib=4,
    ami_type_prefix="AL2_",
    ami_types={
        ("x86_64", STANDARD): "AL2_x86_64",
        ("arm64", STANDARD): "AL2_ARM_64",
        ("x86_64", NVIDIA): "AL2_x86_64_GPU",
    },
    ami_name_pattern=re.compile(r"amzn2|amazon linux 2\b|\bal2\b|amazon-eks-(?:gpu-|arm64-)?node-1\.\d+", re.I),
    user_data=BOOTSTRAP_SH,
    gpu_lanes=True,
    pinned_ami=False,
    alias_release=False,
)
"""Amazon Linux 2: the rack builds no lane on it, the pack judges lanes others built on it. Its name pattern
matches ``amzn2023`` too: read it after AL2023's."""

RACK_FAMILIES: tuple[OsFamily, ...] = (AL2023, BOTTLEROCKET)
"""The families a rack's lanes run, in ``lane.NodeOs``'s order."""
FAMILIES: tuple[OsFamily, ...] = (AL2023, BOTTLEROCKET, AL2)
"""Every family with a record."""
RACK_NAMES: tuple[str, ...] = tuple(f.name for f in RACK_FAMILIES)
"""The ``os`` a rack pool may name."""

_BY_NAME = {f.name: f for f in FAMILIES}
_BY_FAMILY = {f.family: f for f in FAMILIES}


def of(name: str) -> OsFamily:
    """The record of a family by its lowercase name (a ``lane.NodeOs``); KeyError for any other."""
    return _BY_NAME[name]


def named(name: str) -> Optional[OsFamily]:
    """The record of a family by its name in any case (``al2023``, ``Bottlerocket``); None for another family."""
    return _BY_NAME.get(name.lower())


def by_family(family: object) -> Optional[OsFamily]:
    """The record of a family by its exact ``amiFamily``/``operatingSystem`` spelling; None for anything else."""
    return _BY_FAMILY.get(family) if isinstance(family, str) else None


def of_ami_type(ami_type: str) -> Optional[OsFamily]:
    """The family of an EKS AMI type by its prefix, in any case (``AL2023_x86_64_NVIDIA`` -> AL2023)."""
    upper = ami_type.upper()
    return next((f for f in FAMILIES if upper.startswith(f.ami_type_prefix)), None)
