"""Lanes from the stack's resources: Karpenter NodePools with their EC2NodeClasses, EKS and pulumi-eks node
groups with their launch templates, and the rack's own components' registered outputs (``read_lanes``, with the
policy config's lanes beside them)."""

from __future__ import annotations

import math


from dataclasses import replace
from typing import Any, Mapping, Optional, Sequence

from .. import contract
from ..facts import instances, osfamily, wellknown
from . import bootfacts, checks, overlays, reservedlanes
from .scheduling import NodeTaint
from .laneconfig import configured_lanes
from .lanemodel import (
    ANY_INSTANCE,
    EKS_DEFAULT_INSTANCE_TYPE,
    LINUX,
    LaneView,
    Lanes,
    ON_DEMAND,
    OS_KEY,
    RESERVED_DOMAINS,
    Reservations,
    Unknown,
    kubernetes_os,
    read_labels,
    read_taints,
)

EKS_NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
"""The label EKS gives every node of a managed node group: the group's name."""


def _requirement_labels(requirements: Sequence[wellknown.Requirement]) -> dict[str, str]:
    """Labels a NodePool's requirements put on its nodes: Karpenter labels a node with every requirement
    that allows one value (Karpenter docs, NodePools: labels come from the template's labels and its
    requirements). Only custom keys: well-known ones are judged against the instance table."""

    def custom(key: str) -> bool:
        domain, slash, _ = key.partition("/")
        return not (slash and domain.endswith(RESERVED_DOMAINS))

    return {r.key: r.values[0] for r in requirements if r.operator == "In" and len(r.values) == 1 and custom(r.key)}


def _gpu_taint_or_label(labels: Mapping[str, str], taints: Sequence[NodeTaint]) -> bool:
    return contract.GPU_VENDOR_LABEL in labels or any(t.key == contract.GPU_TAINT_KEY for t in taints)


GPU_REQUIREMENTS = ("karpenter.k8s.aws/instance-gpu-manufacturer", "karpenter.k8s.aws/instance-gpu-count")


def _pool_offers_gpus(pool: bootfacts.NodePool) -> bool:
    """Its instance families/types, GPU taint or vendor label (``checks.gpu_reason``), or a Karpenter
    requirement on NVIDIA GPUs (``instance-gpu-manufacturer In [nvidia]``, ``instance-gpu-count Gt N``)."""
    if checks.gpu_reason(pool) is not None:
        return True
    for req in bootfacts.as_list(bootfacts.dig(pool.props, "spec", "template", "spec", "requirements")):
        req = bootfacts.as_map(req)
        values = [str(v) for v in bootfacts.as_list(req.get("values"))]
        if req.get("key") == GPU_REQUIREMENTS[0] and req.get("operator") == "In" and "nvidia" in values:
            return True
        if req.get("key") == GPU_REQUIREMENTS[1] and req.get("operator") in ("Gt", "Exists"):
            return True
    return False


def _launches_gpus(requirements: Sequence[wellknown.Requirement], node_class: Optional[bootfacts.NodeClass]) -> bool:
    """Whether a pool can launch NVIDIA GPU instances for a pod that asks, with an image that drives them: its
    requirements leave NVIDIA families (Karpenter picks a type the pod's requests fit, GPUs included), and its
    class selects by an alias, whose image for a GPU type is the NVIDIA variant (karpenter-provider-aws
    ``pkg/providers/amifamily/al2023.go``, ``bottlerocket.go``: an alias resolves a standard and an NVIDIA image
    per architecture, and the NVIDIA one's requirements select GPU types), or is not in the stack. A pinned
    image gets no GPU requirements from Karpenter: it is not taken to drive a GPU."""
    if node_class is not None and node_class.pins():
        return False
    return any(
        f != wellknown.OTHER_X86 and instances.is_nvidia_gpu_family(f) for f in wellknown.candidates(requirements)
    )


ZONE_KEY = "topology.kubernetes.io/zone"


def _reservations(
    node_class: Optional[bootfacts.NodeClass],
    requirements: Sequence[wellknown.Requirement],
    unknown: Unknown,
    pool: Mapping[str, Any],
) -> Optional[Reservations]:
    """The reservations a pool's EC2NodeClass selects by id (``capacityReservationSelectorTerms``), with its
    subnets and the zones its requirements allow; None: none. Terms that select by tags or owner are not
    read (only EC2 knows what they match). Subnets not known until apply are left unknown, not the lane."""
    if node_class is None:
        return None
    try:
        terms = [
            bootfacts.as_map(t)
            for t in bootfacts.as_list(bootfacts.dig(node_class.props, "spec", "capacityReservationSelectorTerms"))
        ]
        ids = tuple(dict.fromkeys(t["id"] for t in terms if isinstance(t.get("id"), str) and t["id"]))
    except unknown:  # ids not known until apply: nothing to judge yet
        return None
    if not ids:
        return None
    zones = tuple(next((r.values for r in requirements if r.key == ZONE_KEY and r.operator == "In"), ()))
    try:
        canary_of = bootfacts.text(
            bootfacts.as_map(bootfacts.dig(pool, "metadata", "annotations")).get(contract.CANARY_OF)
        )
    except unknown:
        canary_of = ""
    try:
        subnet_terms = [
            bootfacts.as_map(t)
            for t in bootfacts.as_list(bootfacts.dig(node_class.props, "spec", "subnetSelectorTerms"))
        ]
        subnet_ids = tuple(t["id"] for t in subnet_terms if isinstance(t.get("id"), str))
        if len(subnet_ids) < len(subnet_terms):  # a term by tags: only EC2 knows its subnets
            tagged = [
                ",".join(f"{k}={v}" for k, v in sorted(bootfacts.as_map(t.get("tags")).items()))
                for t in subnet_terms
                if not isinstance(t.get("id"), str)
            ]
            return Reservations(ids, (), "by tags " + "; ".join(t for t in tagged if t), zones, canary_of)
    except unknown:
        return Reservations(ids, (), "by ids not known until apply", zones, canary_of)
    return Reservations(ids, subnet_ids, "", zones, canary_of)


def _lane_of(
    res: checks.StackResource,
    templates: Mapping[str, bootfacts.LaneResource],
    classes: Mapping[str, bootfacts.NodeClass],
    lane: Optional[bootfacts.LaneResource] = None,
    unknown: Unknown = (),
) -> Optional[LaneView]:
    """The lane one resource of the stack describes, or None."""
    props = res.props
    if res.type in contract.POOL_TYPES and "labels" in props:  # KarpenterPool's registered outputs
        name = bootfacts.text(props.get("nodePoolName")) or res.name
        labels = {**read_labels(props.get("labels")), contract.KARPENTER_POOL_LABEL: name}
        taints = read_taints(props.get("taints"))
        return LaneView(name, "pool", labels, taints, _gpu_taint_or_label(labels, taints), os=LINUX)
    if res.type in contract.NODE_GROUP_TYPES and "labels" in props:  # NodeGroup's registered outputs
        labels, taints = read_labels(props.get("labels")), read_taints(props.get("taints"))
        return LaneView(res.name, "node group", labels, taints, _gpu_taint_or_label(labels, taints), os=LINUX)
    if isinstance(lane, bootfacts.NodePool):
        name = lane.subject_name
        template = bootfacts.dig(props, "spec", "template")
        requirements = tuple(lane.requirements())  # read once per pool: ``_pool_offers_gpus`` reads them too
        labels = {
            **_requirement_labels(requirements),
            **read_labels(bootfacts.dig(template, "metadata", "labels")),
            contract.KARPENTER_POOL_LABEL: name,
        }
        capacity = next(
            (r.values for r in requirements if r.key == wellknown.CAPACITY_TYPE_KEY and r.operator == "In"),
            (ON_DEMAND,),
        )
        node_class = classes.get(lane.node_class_name) if lane.node_class_ref[:2] == bootfacts.KARPENTER_CLASS else None
        systems = next((r.values for r in requirements if r.key == OS_KEY and r.operator == "In"), None)
        if systems is None:
            systems = () if node_class is None else kubernetes_os(node_class.os())
        gpu = _pool_offers_gpus(lane)
        limits, never, _ = bootfacts.node_pool_limits(
            bootfacts.dig(props, "spec", "limits")
        )  # as the worst case reads them
        return LaneView(
            name,
            "pool",
            labels,
            read_taints(bootfacts.dig(template, "spec", "taints")),
            gpu,
            requirements or ANY_INSTANCE,
            ((wellknown.CAPACITY_TYPE_KEY, tuple(capacity)),),
            _pool_disk(node_class),
            tuple(limits.items()),
            os=tuple(systems),
            launches_gpus=not gpu and _launches_gpus(requirements or ANY_INSTANCE, node_class),
            never=never,
            reservations=_reservations(node_class, requirements, unknown, props),
        )
    if isinstance(lane, (bootfacts.EksNodeGroup, bootfacts.PulumiEksNodeGroup)):
        gpu = checks.gpu_reason(lane) is not None
        types, disk, reservations = lane.instance_types(), None, None
        data_device = (osfamily.named(lane.os()) or osfamily.AL2023).data_device  # Bottlerocket's: /dev/xvdb
        for urn in res.property_dependencies.get("launchTemplate", ()):  # instance types in the launch template
            template = templates.get(urn)
            gpu = gpu or (template is not None and checks.gpu_reason(template) is not None)
            if template is not None:
                types = types or template.instance_types()
                found = template.root_disk(data_device)
                disk = found.gib if found else None
            if isinstance(template, bootfacts.LaunchTemplate) and isinstance(lane, bootfacts.EksNodeGroup):
                reservations = _group_reservations(template, props, unknown)
        if isinstance(lane, bootfacts.EksNodeGroup):
            disk = disk or bootfacts.number(props.get("diskSize"))
            offered: tuple[tuple[str, tuple[str, ...]], ...] = (
                (wellknown.EKS_CAPACITY_TYPE_KEY, (bootfacts.text(props.get("capacityType")) or "ON_DEMAND",)),
            )
        else:
            found = lane.root_disk(osfamily.AL2023.os_device)
            disk, offered = found.gib if found else bootfacts.PULUMI_EKS_DEFAULT_DISK_GIB, ()
        return LaneView(
            lane.subject_name,
            "node group",
            read_labels(props.get("labels")),
            read_taints(props.get("taints")),
            gpu,
            group_requirements(types, bootfacts.text(props.get("amiType"))),
            offered,
            disk,
            os=kubernetes_os(lane.os()),
            reservations=reservations,
        )
    return None


def _group_reservations(
    template: bootfacts.LaunchTemplate, group: Mapping[str, Any], unknown: Unknown
) -> Optional[Reservations]:
    """The reservation an EKS managed node group launches into: the one its launch template targets
    (``capacityReservationSpecification.capacityReservationTarget.capacityReservationId``), with the group's subnets
    (``subnetIds``: EKS launches its nodes into those only); None: none, or an id not known until apply."""
    try:
        ids = reservedlanes.group_reservations(template)
    except unknown:
        return None
    if not ids:
        return None
    try:
        canary_of = bootfacts.text(bootfacts.as_map(group.get("tags")).get(contract.CANARY_OF))
    except unknown:
        canary_of = ""
    try:
        given = list(bootfacts.as_list(group.get("subnetIds")))
        subnet_ids = tuple(s for s in given if isinstance(s, str) and s)
    except unknown:
        given, subnet_ids = [None], ()
    try:  # EKS keeps the group's nodes within its maxSize: more of the reservation's instances stay idle
        most = bootfacts.number(bootfacts.dig(group, "scalingConfig", "maxSize"))
    except unknown:
        most = None
    max_nodes = int(most) if most is not None and math.isfinite(most) and most >= 0 and most == int(most) else None
    if len(subnet_ids) < len(given):
        return Reservations(ids, (), "by ids not known until apply", (), canary_of, max_nodes)
    return Reservations(ids, subnet_ids, "", (), canary_of, max_nodes)


def _other_reservations(seen: LaneView, lane: LaneView) -> bool:
    """Whether two lanes with one key are two lanes: both name reservations, not the same ones (a component's outputs
    name none, and its child is the same lane)."""
    return (
        seen.reservations is not None
        and lane.reservations is not None
        and seen.reservations.ids != lane.reservations.ids
    )


X86_STANDARD_AMI_TYPES = frozenset(f.ami_types[("x86_64", osfamily.STANDARD)].upper() for f in osfamily.FAMILIES)
"""The EKS AMI types of x86 nodes without accelerators, upper case: a group on one launches EKS's default type."""


def group_requirements(types: Sequence[str], ami_type: str) -> tuple[wellknown.Requirement, ...]:
    """A node group as a pool would say it: its instance types, else its AMI type's architecture."""
    if types:
        return (wellknown.Requirement(wellknown.TYPE_KEY, "In", tuple(types)),)
    if "ARM" in ami_type.upper():
        return (wellknown.Requirement(wellknown.ARCH_KEY, "In", ("arm64",)),)
    if not ami_type or ami_type.upper() in X86_STANDARD_AMI_TYPES:
        return (wellknown.Requirement(wellknown.TYPE_KEY, "In", (EKS_DEFAULT_INSTANCE_TYPE,)),)
    return (wellknown.Requirement(wellknown.ARCH_KEY, "In", ("amd64",)),)


def _pool_disk(node_class: Optional[bootfacts.NodeClass]) -> Optional[float]:
    """The volume a pool's pods write to: its family's data volume (``/dev/xvda``, Bottlerocket's ``/dev/xvdb``)."""
    if node_class is None:
        return None
    family = osfamily.named(node_class.os())
    mapped = bootfacts.dig(node_class.props, "spec", "blockDeviceMappings")
    if family is not None and not family.data_is_root and not mapped:
        return None
    # a class of no family we know (Custom, Windows) is read as one whose pods write to the root volume
    found = node_class.kubelet_disk((family or osfamily.AL2023).data_device)
    return found.gib if found else None


def read_lanes(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown = ()) -> Lanes:
    templates: dict[str, bootfacts.LaneResource] = {}
    classes: dict[str, bootfacts.NodeClass] = {}
    read_of: dict[str, Optional[bootfacts.LaneResource]] = {}
    for res in resources:
        read = read_of[res.urn] = bootfacts.read(res.type, res.name, res.props)
        if isinstance(read, bootfacts.LaunchTemplate):
            templates[res.urn] = read
        elif isinstance(read, bootfacts.NodeClass):
            try:
                classes.setdefault(read.subject_name, read)
            except unknown:
                continue
    found: dict[tuple[Any, ...], LaneView] = {}
    not_known: list[str] = []
    for res in resources:
        try:
            lane = _lane_of(res, templates, classes, read_of.get(res.urn), unknown)
        except unknown:
            not_known.append(f"{res.type.rsplit(':', 1)[-1]} '{res.name}'")
            continue
        if lane is not None:
            # a component's outputs and its child are one lane: keep the one that knows the sizes, or that
            # never runs (its NodePool is what the cluster gets)
            key = lane._key()
            seen = found.get(key)
            if seen is not None and _other_reservations(seen, lane):
                # two groups alike but for the reservations they launch into: each is judged against its own
                key = (*key, lane.reservations.ids if lane.reservations else ())
                seen = found.get(key)
            if seen is None or lane.never or (lane.sized and not seen.sized and not seen.never):
                found[key] = lane
    for lane in configured_lanes(config):
        found.setdefault(lane._key(), lane)
    given = overlays.applied(resources, unknown)
    if given:  # the NodeOverlay gate is on: the pools' instance types are what the overlays make them
        found = {
            key: replace(lane, overlays=given) if lane.kind == "pool" and lane.requirements else lane
            for key, lane in found.items()
        }
    kinds = ("pool", "node group", "lane")
    ordered = sorted(found.values(), key=lambda lane: (kinds.index(lane.kind), lane.name))  # messages in one order
    return Lanes(
        tuple(lane for lane in ordered if not lane.never),
        tuple(not_known),
        tuple(lane for lane in ordered if lane.never),
    )
