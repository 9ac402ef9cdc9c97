"""The rack's rules, as pure functions.

This module is the single home of every rule the rack enforces. It imports nothing but the
standard library so that the policy pack (where this is the top-level ``rules``) and the
components (``mixed_os_racks.pack.rules``) share it unchanged. Each check returns ``None`` when the
subject is fine, or the message to show, worded like the seeds' CLI:
``karpenter nodepool 'gpu': invalid ami_id 'ami-XYZ' (must look like ami-0123456789abcdef0)``.

The pack reads resources with ``bootfacts`` and applies these rules in ``checks``. Upstream facts
(devices, disks, instance families, charts) live in ``mixed_os_racks.facts``; of them, this module
reads only the OS family records (``facts.osfamily``: which family may run GPU lanes or pin an AMI,
what an AMI's name says), so the rules stay free of facts that change with AWS.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping, Optional

from ..facts import osfamily


AMI_ID_RE = re.compile(r"ami-(?:[0-9a-f]{8}|[0-9a-f]{17})")
AMI_ID_EXAMPLE = "ami-0123456789abcdef0"


EC2_ARCH = {"amd64": "x86_64", "arm64": "arm64"}
"""Kubernetes architecture names -> EC2's."""


def gib(value: float) -> str:
    """Whole numbers print without a decimal point, in full: 20.0 -> '20', 1e6 -> '1000000'."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e18 else f"{value:g}"  # not inf nor NaN


# ---- the rules ---------------------------------------------------------------------------------


def ami_id_problem(ami_id: object) -> Optional[str]:
    """Rule ``ami-id-format`` without a subject: ``ami-`` followed by 8 or 17 lowercase hex digits."""
    if isinstance(ami_id, str) and AMI_ID_RE.fullmatch(ami_id):
        return None
    return f"invalid ami_id '{ami_id}' (must look like {AMI_ID_EXAMPLE})"


def invalid_ami_id(subject: str, ami_id: object) -> Optional[str]:
    """Rule ``ami-id-format``: ``ami-`` followed by 8 or 17 lowercase hex digits."""
    problem = ami_id_problem(ami_id)
    return f"{subject}: {problem}" if problem else None


def alias_problem(
    alias: object, families: tuple[str, ...], latest_only: tuple[str, ...], max_length: int
) -> Optional[str]:
    """Rule ``ami-id-format`` for an EC2NodeClass alias, without a subject: ``family@version`` as Karpenter's
    controller parses it (exactly one ``@``, a known lowercase family, a version; ``latest`` only where the family
    cannot be pinned), within the CRD's length. The facts (``families``, ...) come from ``upstream``."""
    if not isinstance(alias, str):
        return f"invalid alias '{alias}' (must be family@version, like al2023@latest)"
    parts = alias.split("@")
    if len(parts) != 2:
        return (
            f"invalid alias '{alias}' (must be family@version with one '@': Karpenter's controller cannot parse "
            f"it and exits, which stops every NodePool)"
        )
    family, version = parts
    if family not in families:
        return f"invalid alias '{alias}' (family '{family}' must be one of {', '.join(families)})"
    if not version or "\n" in version:  # the CRD's pattern: one line
        return f"invalid alias '{alias}' (must be family@version, like {family}@latest)"
    if family in latest_only and version != "latest":
        return f"invalid alias '{alias}' ({family} takes only {family}@latest)"
    if len(alias) > max_length:
        return f"invalid alias '{alias}' (at most {max_length} characters)"
    return None


def disk_below_snapshot(subject: str, disk_gib: float, ami_id: str, snapshot_gib: float) -> Optional[str]:
    """Rule ``disk-fits-ami-snapshot``: EC2 refuses a root volume smaller than its snapshot."""
    if disk_gib >= snapshot_gib:
        return None
    return (
        f"{subject}: disk {gib(disk_gib)} GiB is smaller than the root snapshot of {ami_id} "
        f"({gib(snapshot_gib)} GiB); give it a disk of {gib(snapshot_gib)} GiB or more"
    )


def arch_mismatch(subject: str, arches: Iterable[str], ami_id: str, ami_arch: str) -> Optional[str]:
    """Rule ``arch-matches-ami`` for one pinned AMI (see ``no_ami_for_arch``)."""
    return no_ami_for_arch(subject, arches, {ami_id: ami_arch})


def no_ami_for_arch(subject: str, arches: Iterable[str], amis: Mapping[str, str]) -> Optional[str]:
    """Rule ``arch-matches-ami``: at least one of the lane's AMIs boots an architecture the lane can launch.

    ``arches`` are what the lane can launch, in Kubernetes (``amd64``/``arm64``) or EC2 (``x86_64``/
    ``arm64``) names; ``amis`` maps each pinned AMI to its EC2 architecture. A class may pin one AMI
    per architecture: Karpenter gives each instance the AMI of its own architecture, so a lane is
    wrong only when no AMI fits any architecture it can launch.
    """
    wanted = sorted({EC2_ARCH.get(a, a) for a in arches})
    have = sorted(set(amis.values()))
    if not wanted or set(wanted) & set(have):
        return None
    if len(amis) == 1:
        ((ami_id, ami_arch),) = amis.items()
        found = f"{ami_id}, which is {ami_arch}"
    else:
        found = "any of its AMIs: " + ", ".join(f"{ami_id} is {arch}" for ami_id, arch in amis.items())
    return (
        f"{subject}: arch {','.join(wanted)} does not match {found} "
        f"(pin an {' or '.join(wanted)} AMI, or set the lane's arch to {' or '.join(have)})"
    )


def gpu_lane_on_bottlerocket(
    subject: str, os_name: str, why: str, fix: str = "move them to an AL2023 pool or node group"
) -> Optional[str]:
    """Rule ``gpu-lane-os``: GPU lanes run Amazon Linux 2023, never Bottlerocket.

    ``why`` says what makes the lane a GPU lane, e.g. ``instance families g5,g6``; ``fix`` what to change.
    """
    family = osfamily.named(os_name)
    if family is None or family.gpu_lanes:
        return None
    return f"{subject}: {why} make this a GPU lane, and GPU lanes must run Amazon Linux 2023, not Bottlerocket ({fix})"


# ---- subjects: how a message names a lane -------------------------------------------------------


def pool_subject(name: str) -> str:
    """A Karpenter pool, named by its EC2NodeClass/NodePool ``metadata.name`` (the seeds' wording)."""
    return "karpenter workload nodepool" if name == "workload" else f"karpenter nodepool '{name}'"


def node_class_subject(name: str) -> str:
    """A Karpenter ``EC2NodeClass`` written by hand (its ``metadata.name``)."""
    return f"EC2NodeClass '{name}'"


def pool_with_class_subject(pool: str, node_class: str, kind: str = "EC2NodeClass") -> str:
    """A NodePool named with the class it launches from, when that is not obvious from its own name."""
    return f"{pool_subject(pool)} ({kind} '{node_class}')"


def node_group_subject(name: str) -> str:
    return f"node group '{name}'"


def launch_template_subject(name: str) -> str:
    return f"launch template '{name}'"


# ---- what an AMI's own words say ------------------------------------------------------------------

_OS_WORDS = (
    (osfamily.AL2023.name, osfamily.AL2023.ami_name_pattern),
    (osfamily.BOTTLEROCKET.name, osfamily.BOTTLEROCKET.ami_name_pattern),
    ("ubuntu", re.compile(r"ubuntu", re.I)),
    ("windows", re.compile(r"windows", re.I)),
    (osfamily.AL2.name, osfamily.AL2.ami_name_pattern),  # after AL2023's and the others': amzn2 begins amzn2023
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


def _pins(os_name: str) -> bool:
    """Whether a lane of the family ``os_name`` names (in any case) may pin an AMI of its own."""
    family = osfamily.named(os_name)
    return family is not None and family.pinned_ami


def pinned_ami_not_al2023(subject: str, os_name: str, lane: str = "pool", fix: str = "") -> Optional[str]:
    """Rule ``al2023-family``: a lane pinned to a custom AMI declares Amazon Linux 2023.

    ``os_name`` is what the lane declares (``al2023``, ``bottlerocket``, ``custom``, ... or empty).
    """
    if _pins(os_name):
        return None
    suffix = f"; {fix}" if fix else ""
    return f"{subject}: a pinned ami_id needs an AL2023 {lane} (got {os_name.lower() or 'no OS'}){suffix}"


def ami_type_beside_image(subject: str, ami_type: str, image: str) -> str:
    """Rule ``al2023-family``: EKS's CreateNodegroup takes no AMI type but ``CUSTOM`` beside a launch
    template that names an image ("don't specify amiType, or the node group deployment will fail")."""
    return (
        f"{subject}: its launch template pins {image}, and EKS refuses ami_type {ami_type} beside a launch "
        f"template image (set ami_type CUSTOM, or leave it out)"
    )


def ami_names_other_os(subject: str, ami_id: str, ami_name: str, os_name: str) -> Optional[str]:
    """Rule ``al2023-family``, from the AMI's facts: its name or description names another OS."""
    if _pins(os_name):
        return None
    return (
        f"{subject}: pinned AMI {ami_id} ('{ami_name}') is {os_name}, not Amazon Linux 2023 "
        f"(pin an AL2023 AMI, e.g. one built with awslabs/amazon-eks-ami)"
    )


def disk_unverified(subject: str, disk_gib: float, ami: str, why: str, how: str) -> str:
    """Policy ``ami-facts-unknown`` for rule ``disk-fits-ami-snapshot``: the snapshot size is not known."""
    return (
        f"{subject}: disk-fits-ami-snapshot cannot verify disk {gib(disk_gib)} GiB against the root snapshot of "
        f"{ami}: {why}; to verify it, {how}"
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


def root_volume_explicitly_unencrypted(subject: str, where: str, fix: str) -> str:
    """Rule ``root-volume-encrypted``: the root volume's mapping sets ``encrypted`` false."""
    return f"{subject}: the root volume ({where}) sets encrypted: false ({fix})"


def root_volume_unencrypted(subject: str, ami: str, fix: str) -> str:
    """Rule ``root-volume-encrypted``: nothing asks for encryption, the AMI's root snapshot is
    unencrypted and the account does not encrypt new EBS volumes by default, so EC2 makes an
    unencrypted root volume."""
    return (
        f"{subject}: {ami} has an unencrypted root snapshot and EBS encryption by default is off, "
        f"so its root volumes would be unencrypted ({fix})"
    )


def root_encryption_unverified(subject: str, ami: str, unknown: list[str], how: str) -> str:
    """Policy ``ami-facts-unknown`` for rule ``root-volume-encrypted``: the facts that decide it are not known."""
    return (
        f"{subject}: root-volume-encrypted cannot verify that the root volume from {ami} is encrypted: "
        f"{' and '.join(unknown)} {'are' if len(unknown) > 1 else 'is'} unknown; to verify it, {how}"
    )


def root_device_not_sized(subject: str, ami_id: str, device: str, sized: str) -> Optional[str]:
    """A lane that can size only ``sized`` pins an AMI whose root is another device: the disk
    would become an extra volume and the root would keep the snapshot's size."""
    if device == sized:
        return None
    return (
        f"{subject}: ami_id '{ami_id}' boots from {device}, but this lane sizes {sized} "
        f"(pin an AMI whose root device is {sized})"
    )


# ---- NVIDIA driver branches ----------------------------------------------------------------------------


def driver_cannot_drive(subject: str, ami: str, branch: int, where: str, problems: Iterable[str]) -> str:
    fix = (
        "pin an AMI whose NVIDIA driver drives them, or keep these families in a lane of their own "
        "(amazon-eks-ami doc/usage/g7-ami.md: a dedicated EC2NodeClass and NodePool per driver branch)"
    )
    return (
        f"{subject}: its AMI {ami} runs NVIDIA driver {branch} ({where}), which cannot drive instances the lane "
        f"can launch: {'; '.join(problems)} ({fix})"
    )


def driver_unverified(subject: str, ami: str, families: Iterable[str], how: str) -> str:
    return (
        f"{subject}: cannot verify that the NVIDIA driver of {ami} drives {', '.join(families)}: its driver branch "
        f"is unknown ({how})"
    )


# ---- AMI promotion: the soak gate (ami-soaked) -----------------------------------------------------------


def days(count: float) -> str:
    return f"{count:g} day{'' if count == 1 else 's'}"


def ami_not_run(subject: str, lane: str, ami: str, environment: str, needed: float, there: Iterable[str]) -> str:
    """Policy ``ami-soaked``: the environment before never ran the AMI on a lane of this name."""
    seen = list(there)
    found = (
        f"its state has {', '.join(seen)} on that lane"
        if seen
        else "its state has no AMI pinned on a lane of that name"
    )
    return (
        f"{subject}: AMI {ami} is new on lane '{lane}', and {environment} has not run it there ({found}): run it "
        f"there first, on the lane or its canary (canary_ami_id), for {days(needed)}, then promote it"
    )


def ami_not_reached(
    subject: str,
    lane: str,
    ami: str,
    environment: str,
    group: str,
    at: str,
    holding: str,
    needed: float,
    failure: str = "",
) -> str:
    """Policy ``ami-soaked``: the environment before pins the AMI in a managed node group's launch template, but the
    group's own state has not reached the template version holding it (a failed or unfinished rollout)."""
    where = (
        f"its state has the group at launch template version {at}"
        if at
        else "its state records no launch template version for the group"
    ) + (f", the image in version {holding}" if holding else ", and no latestVersion for the template")
    if failure:
        where = f"its state records the group's last update as failed: {failure}"
    return (
        f"{subject}: AMI {ami} is new on lane '{lane}', and {environment} pins it there, but its node group "
        f"'{group}' has not reached it ({where}: its rollout failed or has not finished), so it has not run there: "
        f"finish the rollout there (pulumi up, or pulumi refresh once EKS has finished it), let it run "
        f"{days(needed)}, then promote it"
    )


def ami_not_soaked(subject: str, lane: str, ami: str, environment: str, soaked: int, needed: float, since: str) -> str:
    """Policy ``ami-soaked``: the environment before has run the AMI on the lane for less than ``needed`` days."""
    return (
        f"{subject}: AMI {ami} is new on lane '{lane}', and has run there in {environment} for {soaked} of "
        f"{days(needed)} (since {since}, when its state last changed the resource holding it): promote it once "
        f"it has run there {days(needed)}"
    )


def ami_soak_future(subject: str, lane: str, ami: str, environment: str, since: str) -> str:
    """Policy ``ami-soaked``: the state says the resource holding the AMI last changed after now."""
    return (
        f"{subject}: AMI {ami} is new on lane '{lane}'; {environment} runs it there, but its state says the "
        f"resource holding it last changed at {since}, which is in the future (a wrong clock where the state was "
        f"written, or an edited state), so it proves no soak: the AMI counts as not soaked"
    )


def ami_soak_unproven(subject: str, lane: str, ami: str, environment: str) -> str:
    """Policy ``ami-soaked``: the environment before runs the AMI, but its state records no time for it."""
    return (
        f"{subject}: AMI {ami} is new on lane '{lane}'; {environment} runs it there, but its state records no "
        f"time the resource holding it last changed (no `modified`: Pulumi writes it from early 2023 on), so "
        f"its soak cannot be proven (run `pulumi up` there with a current Pulumi CLI and let it soak)"
    )
