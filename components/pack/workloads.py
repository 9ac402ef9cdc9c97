"""Workloads and the lanes they can land on: ``workloads-reach-their-lane`` and its advisory twin.

Pure (the standard library and the pack's own modules), so the pack (where this is the top-level
``workloads``) and the components (``mixed_os_racks.pack.workloads``) share it: the ``Service``
component builds its scheduling from the same contract this module checks.

The seeds' contract (``/work/shared/DESIGN.md``, decision 2): a workload names a lane with
``convox.io/nodepool=<pool>`` (Karpenter pools) or ``convox.io/label=<label>`` (node groups); a
dedicated lane is tainted ``dedicated-node=<pool|label>:NoSchedule``; a GPU lane is tainted
``nvidia.com/gpu``; the default lane (the ``workload`` pool) has no GPUs.

Where a pod may go is decided with Kubernetes' own rules (``scheduling``).

A lane's labels are what it declares (NodePool ``spec.template.metadata.labels`` plus Karpenter's
own ``karpenter.sh/nodepool``, a node group's ``labels``). Nodes carry more (architecture, zone,
instance type); a requirement on a key no lane declares is assumed to hold, so only what the rack
decides is judged. Well-known labels (architecture, capacity type, instance type, family, size) are
met against what the lane can launch (``wellknown``, the instance table), and a pod must fit one
node of a lane it reaches: GPUs per node, and its effective requests within the allocatable of an
instance type the lane can launch, less the lane's DaemonSets, within a pool's ``limits`` (``fit``;
``docs/placement.md`` says what is not checked). ``gpu-daemonsets-reach-gpu-lanes`` holds the GPU
DaemonSets to every GPU lane.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence, Union

from .. import contract, syntax
from ..inputs import closest
from . import checks, facts, fit, instances, rules, scheduling, wellknown
from .scheduling import Selection, Taint, Toleration, label_text

Finding = checks.Finding
GPU_RESOURCES = (contract.NVIDIA_GPU, contract.AMD_GPU)
Unknown = Union[type[BaseException], tuple[type[BaseException], ...]]

# ---- the seeds' placement contract (names in ``contract``) --------------------------------------------


def named_lanes(selection: Selection) -> list[tuple[str, str]]:
    """The lanes a selection names: ``(convox.io/nodepool|convox.io/label, value)`` of ``nodeSelector``
    pairs and ``In`` requirements, in order, without repeats."""
    found: list[tuple[str, str]] = []
    for req in selection.requirements:
        if req.key in contract.LANE_KEYS and req.operator == "In":
            found += [(req.key, v) for v in req.values if (req.key, v) not in found]
    return found


# ---- lanes -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lane:
    """Somewhere pods can land: its node labels and taints, and whether it offers GPUs."""

    name: str
    kind: str
    """``pool`` (Karpenter), ``node group``, or ``lane`` (named in the policy config)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    gpu: bool = False
    requirements: tuple[wellknown.Requirement, ...] = ()
    """A NodePool's requirements (a node group's: its instance types and architecture): with the pod's,
    they decide which instance families and types it can get."""
    capacity: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The capacity-type labels its nodes carry and the values they can take
    (``((karpenter.sh/capacity-type, (on-demand,)),)``); () when not known."""
    root_gib: Optional[float] = None
    """The root (Bottlerocket: data) volume, for ephemeral storage; None: the EKS AMIs' 20 GiB."""
    limits: tuple[tuple[str, float], ...] = ()
    """A NodePool's ``limits`` (cores, bytes, GPUs): no node larger than them is ever launched."""
    stated: Optional[fit.Allocatable] = None
    """Allocatable of its largest node as the policy config states it (a lane of another stack)."""
    max_gpus: Optional[int] = None
    """Most GPUs per node, as the policy config states it."""
    os: tuple[str, ...] = ()
    """The ``kubernetes.io/os`` values its nodes carry (``linux``, ``windows``); () when not known."""
    launches_gpus: bool = False
    """A pool no GPU lane by design (no GPU families, taint or label) that can still launch NVIDIA GPU
    instances for a pod that asks (it restricts no family), on an image that drives them."""

    def _alternatives(self, selection: Selection) -> list[tuple[wellknown.Requirement, ...]]:
        """Per alternative of the pod's required affinity, the lane's requirements and the pod's
        (Karpenter intersects them)."""
        terms = selection.terms if selection.terms is not None else ((),)
        return [self.requirements + _wellknown(selection.node_selector + tuple(term)) for term in terms]

    def _families(self, selection: Selection) -> list[list[str]]:
        """Per alternative of the pod's required affinity, the families a pod with ``selection`` can get
        here; [] for a lane without requirements."""
        if not self.requirements:
            return []
        return [wellknown.candidates(reqs) for reqs in self._alternatives(selection)]

    def _capacity_holds(self, requirements: Sequence[scheduling.Requirement]) -> bool:
        """Whether the pod's requirements on the capacity type and the OS hold for some node of the lane."""
        offered = dict(self.capacity)
        for req in requirements:
            if req.key == OS_KEY and self.os and not any(wellknown.holds(req.operator, req.values, v) for v in self.os):
                return False
            if req.key in (wellknown.CAPACITY_TYPE_KEY, wellknown.EKS_CAPACITY_TYPE_KEY) and self.capacity:
                values = offered.get(req.key)
                if values is None:
                    if not wellknown.holds(req.operator, req.values, None):
                        return False
                elif not any(wellknown.holds(req.operator, req.values, v) for v in values):
                    return False
        return True

    def admitted(self, selection: Selection) -> Optional[Selection]:
        """``selection`` with only the affinity terms some instance this lane can launch satisfies: the
        pod's well-known requirements (``kubernetes.io/arch``, ``karpenter.k8s.aws/instance-*``, the
        capacity type, ``kubernetes.io/os``); lanes without requirements satisfy all but the last two.
        None: no term is satisfied."""

        def holds(term: tuple[scheduling.Requirement, ...]) -> bool:
            requirements = selection.node_selector + term
            return self._capacity_holds(requirements) and (
                not self.requirements or bool(wellknown.candidates(self.requirements + _wellknown(requirements))))

        return selection.keeping(holds)

    def admits(self, selection: Selection) -> bool:
        return self.admitted(selection) is not None

    def reached_by(self, selection: Selection, known: frozenset[str]) -> Optional[Selection]:
        """``selection`` as it lands on this lane: the affinity terms that select the lane by its labels
        and that some node of it meets; None: the pod never lands here."""
        on = selection.on(self.labels, known)
        return None if on is None else self.admitted(on)

    def launchable(self, selection: Selection) -> tuple[list[instances.InstanceType], list[str], list[instances.InstanceType]]:
        """The instance types a pod with ``selection`` can get here (within the pool's limits), the
        families the table cannot size, and the types the limits rule out."""
        found: dict[str, instances.InstanceType] = {}
        unsized: list[str] = []
        for reqs in self._alternatives(selection) if self.requirements else []:
            types, families = wellknown.launchable(reqs)
            found.update((t.name, t) for t in types)
            unsized += [f for f in families if f not in unsized]
        within = self._within_limits()
        kept, capped = [], []
        for itype in found.values():
            (kept if within(itype) else capped).append(itype)
        return kept, unsized, capped

    def _within_limits(self) -> Callable[[instances.InstanceType], bool]:
        """Whether a type fits the pool's ``limits`` (read once for all the types it is asked of)."""
        limits = dict(self.limits)
        cpu, memory = limits.get(fit.CPU), limits.get(fit.MEMORY)
        gpus = max((limits.get(r, 0) for r in GPU_RESOURCES if r in limits), default=None)
        return lambda itype: ((cpu is None or itype.vcpus <= cpu)
                              and (memory is None or fit.memory_capacity_mib(itype) * fit.MIB <= memory)
                              and (gpus is None or itype.gpus <= gpus))

    def gpu_for(self, selection: Selection) -> bool:
        """Whether a pod with ``selection`` can get an NVIDIA GPU instance here."""
        if not self.requirements:
            return self.gpu
        return (self.gpu or self.launches_gpus) and any(
            any(f != wellknown.OTHER_X86 and wellknown.instances.is_nvidia_gpu_family(f) for f in families)
            for families in self._families(selection))

    def mig_for(self, selection: Selection, profiles: Sequence[str]) -> bool:
        """Whether a pod with ``selection`` can get an instance here whose GPUs have every MIG profile in
        ``profiles`` ('' is any); True for a lane of the policy config that names no instances (not known)."""
        if not self.requirements:
            return True
        wanted = {p for p in profiles if p}
        return any(any(f != wellknown.OTHER_X86 and instances.mig_profiles(f) and wanted <= set(instances.mig_profiles(f))
                       for f in families) for families in self._families(selection))

    @property
    def subject(self) -> str:
        if self.kind == "pool":
            return rules.pool_subject(self.name)  # one wording for a pool, the lanes' rules' own
        label = self.labels.get(contract.NODEGROUP_LABEL)
        word = "node group" if self.kind == "node group" else "lane"
        return f'{word} "{self.name}" ({contract.NODEGROUP_LABEL}={label})' if label else f'{word} "{self.name}"'

    @property
    def gpu_taints(self) -> list[Taint]:
        return [t for t in self.taints if t.blocking and t.key in (contract.NVIDIA_GPU, contract.AMD_GPU)]

    def selector(self) -> str:
        """How a workload selects this lane, in ``nodeSelectorLabels`` terms."""
        for key in (contract.NODEPOOL_LABEL, contract.NODEGROUP_LABEL):
            if key in self.labels:
                return f"{key}: {self.labels[key]}"
        if self.labels:
            key, value = sorted(self.labels.items())[0]
            return f"{key}: {value}"
        return self.subject

    def untolerated(self, tolerations: Sequence[Toleration]) -> list[Taint]:
        return [t for t in self.taints if t.blocking and not any(tol.tolerates(t) for tol in tolerations)]

    def _key(self) -> tuple[Any, ...]:
        return (self.kind, tuple(sorted(self.labels.items())), self.taints, self.gpu)

    @property
    def sized(self) -> bool:
        """Whether its nodes' sizes are known (instance types from requirements, or stated)."""
        return bool(self.requirements) or self.stated is not None or self.max_gpus is not None


def _wellknown(requirements: Iterable[scheduling.Requirement]) -> tuple[wellknown.Requirement, ...]:
    return tuple(wellknown.Requirement(r.key, r.operator, r.values) for r in requirements if r.operator in wellknown.OPERATORS)


RESERVED_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws", "eks.amazonaws.com")
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


def _labels(value: Any) -> dict[str, str]:
    return {str(k): label_text(v) for k, v in facts.as_map(value).items()}


def _taints(value: Any) -> tuple[Taint, ...]:
    if isinstance(value, Mapping):  # pulumi-eks NodeGroupV2: {key: {value, effect}}
        return tuple(Taint(str(k), facts.text(facts.as_map(v).get("value")),
                           scheduling.effect(facts.as_map(v).get("effect"))) for k, v in value.items())
    return tuple(Taint.read(t) for t in facts.as_list(value))


def _gpu_taint_or_label(labels: Mapping[str, str], taints: Sequence[Taint]) -> bool:
    return contract.GPU_VENDOR_LABEL in labels or any(t.key == contract.GPU_TAINT_KEY for t in taints)


GPU_REQUIREMENTS = ("karpenter.k8s.aws/instance-gpu-manufacturer", "karpenter.k8s.aws/instance-gpu-count")


def _pool_offers_gpus(pool: facts.NodePool) -> bool:
    """Its instance families/types, GPU taint or vendor label (``checks.gpu_reason``), or a Karpenter
    requirement on NVIDIA GPUs (``instance-gpu-manufacturer In [nvidia]``, ``instance-gpu-count Gt N``)."""
    if checks.gpu_reason(pool) is not None:
        return True
    for req in facts.as_list(facts.dig(pool.props, "spec", "template", "spec", "requirements")):
        req = facts.as_map(req)
        values = [str(v) for v in facts.as_list(req.get("values"))]
        if req.get("key") == GPU_REQUIREMENTS[0] and req.get("operator") == "In" and "nvidia" in values:
            return True
        if req.get("key") == GPU_REQUIREMENTS[1] and req.get("operator") in ("Gt", "Exists"):
            return True
    return False




def _launches_gpus(requirements: Sequence[wellknown.Requirement], node_class: Optional[facts.NodeClass]) -> bool:
    """Whether a pool can launch NVIDIA GPU instances for a pod that asks, with an image that drives them: its
    requirements leave NVIDIA families (Karpenter picks a type the pod's requests fit, GPUs included), and its
    class selects by an alias, whose image for a GPU type is the NVIDIA variant (karpenter-provider-aws
    ``pkg/providers/amifamily/al2023.go``, ``bottlerocket.go``: an alias resolves a standard and an NVIDIA image
    per architecture, and the NVIDIA one's requirements select GPU types), or is not in the stack. A pinned
    image gets no GPU requirements from Karpenter: it is not taken to drive a GPU."""
    if node_class is not None and node_class.pins():
        return False
    return any(f != wellknown.OTHER_X86 and instances.is_nvidia_gpu_family(f) for f in wellknown.candidates(requirements))


def _lane_of(res: checks.StackResource, templates: Mapping[str, facts.LaneResource],
             classes: Mapping[str, facts.NodeClass], lane: Optional[facts.LaneResource] = None) -> Optional[Lane]:
    """The lane one resource of the stack describes, or None."""
    props = res.props
    if res.type == contract.COMPONENT_POOL and "labels" in props:  # KarpenterPool's registered outputs
        name = facts.text(props.get("nodePoolName")) or res.name
        labels = {**_labels(props.get("labels")), contract.KARPENTER_POOL_LABEL: name}
        taints = _taints(props.get("taints"))
        return Lane(name, "pool", labels, taints, _gpu_taint_or_label(labels, taints), os=LINUX)
    if res.type == contract.COMPONENT_NODE_GROUP and "labels" in props:  # NodeGroup's registered outputs
        labels, taints = _labels(props.get("labels")), _taints(props.get("taints"))
        return Lane(res.name, "node group", labels, taints, _gpu_taint_or_label(labels, taints), os=LINUX)
    if isinstance(lane, facts.NodePool):
        name = lane.subject_name
        template = facts.dig(props, "spec", "template")
        requirements = tuple(lane.requirements())  # read once per pool: ``_pool_offers_gpus`` reads them too
        labels = {**_requirement_labels(requirements), **_labels(facts.dig(template, "metadata", "labels")),
                  contract.KARPENTER_POOL_LABEL: name}
        capacity = next((r.values for r in requirements if r.key == wellknown.CAPACITY_TYPE_KEY and r.operator == "In"),
                        (ON_DEMAND,))
        node_class = classes.get(lane.node_class_name) if lane.node_class_ref[:2] == facts.KARPENTER_CLASS else None
        systems = next((r.values for r in requirements if r.key == OS_KEY and r.operator == "In"), None)
        if systems is None:
            systems = () if node_class is None else _kubernetes_os(node_class.os())
        gpu = _pool_offers_gpus(lane)
        return Lane(name, "pool", labels, _taints(facts.dig(template, "spec", "taints")), gpu,
                    requirements or ANY_INSTANCE, ((wellknown.CAPACITY_TYPE_KEY, tuple(capacity)),),
                    _pool_disk(node_class), _limits(facts.dig(props, "spec", "limits")), os=tuple(systems),
                    launches_gpus=not gpu and _launches_gpus(requirements or ANY_INSTANCE, node_class))
    if isinstance(lane, (facts.EksNodeGroup, facts.PulumiEksNodeGroup)):
        gpu = checks.gpu_reason(lane) is not None
        types, disk = lane.instance_types(), None
        for urn in res.property_dependencies.get("launchTemplate", ()):  # instance types in the launch template
            template = templates.get(urn)
            gpu = gpu or (template is not None and checks.gpu_reason(template) is not None)
            if template is not None:
                types = types or template.instance_types()
                found = template.root_disk("/dev/xvda")
                disk = found.gib if found else None
        if isinstance(lane, facts.EksNodeGroup):
            disk = disk or facts.number(props.get("diskSize"))
            capacity = ((wellknown.EKS_CAPACITY_TYPE_KEY, (facts.text(props.get("capacityType")) or "ON_DEMAND",)),)
        else:
            disk, capacity = (lane.root_disk("/dev/xvda") or facts.Disk(20.0)).gib, ()
        return Lane(lane.subject_name, "node group", _labels(props.get("labels")), _taints(props.get("taints")), gpu,
                    _group_requirements(types, facts.text(props.get("amiType"))), capacity, disk, os=_kubernetes_os(lane.os()))
    return None


OS_KEY = "kubernetes.io/os"
LINUX = ("linux",)


def _kubernetes_os(os_name: str) -> tuple[str, ...]:
    """The ``kubernetes.io/os`` label of a lane's nodes: ``windows`` for a Windows AMI, else ``linux``
    (AL2023, AL2, Bottlerocket and custom AMIs of the EKS node images are all Linux)."""
    return ("windows",) if os_name == "windows" else LINUX


ON_DEMAND = "on-demand"
ANY_INSTANCE = (wellknown.Requirement(wellknown.ARCH_KEY, "Exists", ()),)
"""A pool with no requirements: any instance type."""
EKS_DEFAULT_INSTANCE_TYPE = "t3.medium"
"""What EKS launches for a node group that names no instance type (EKS API, CreateNodegroup instanceTypes)."""


def _group_requirements(types: Sequence[str], ami_type: str) -> tuple[wellknown.Requirement, ...]:
    """A node group as a pool would say it: its instance types, else its AMI type's architecture."""
    if types:
        return (wellknown.Requirement(wellknown.TYPE_KEY, "In", tuple(types)),)
    if "ARM" in ami_type.upper():
        return (wellknown.Requirement(wellknown.ARCH_KEY, "In", ("arm64",)),)
    if not ami_type or ami_type.upper() in ("AL2023_X86_64_STANDARD", "AL2_X86_64", "BOTTLEROCKET_X86_64"):
        return (wellknown.Requirement(wellknown.TYPE_KEY, "In", (EKS_DEFAULT_INSTANCE_TYPE,)),)
    return (wellknown.Requirement(wellknown.ARCH_KEY, "In", ("amd64",)),)


def _pool_disk(node_class: Optional[facts.NodeClass]) -> Optional[float]:
    """The volume a pool's pods write to: ``/dev/xvda``, or Bottlerocket's data volume ``/dev/xvdb``."""
    if node_class is None:
        return None
    if node_class.os() == "bottlerocket":
        mappings = facts.dig(node_class.props, "spec", "blockDeviceMappings")
        found = node_class.kubelet_disk("/dev/xvdb") if mappings else None
    else:
        found = node_class.kubelet_disk("/dev/xvda")
    return found.gib if found else None


def _limits(value: Any) -> tuple[tuple[str, float], ...]:
    found = []
    for name, amount in facts.as_map(value).items():
        parsed = fit.quantity(amount)
        if parsed is not None:
            found.append((str(name), parsed))
    return tuple(found)


def configured_lanes(config: Mapping[str, Any]) -> list[Lane]:
    """The policy config's ``lanes`` (a stack whose rack is elsewhere): ``[{name, labels, taints, gpu}]``
    and what sizes their nodes (``arch``, ``instanceTypes`` or ``instanceFamilies`` with ``instanceSizes``,
    ``capacityTypes``, ``maxGpusPerNode``, ``allocatable``), as the rack's ``lanes`` output gives them."""
    lanes = []
    for entry in facts.as_list(config.get("lanes")):
        entry = facts.as_map(entry)
        labels, taints = _labels(entry.get("labels")), _taints(entry.get("taints"))
        requirements: list[wellknown.Requirement] = []
        for key, field_name in ((wellknown.TYPE_KEY, "instanceTypes"), (wellknown.KARPENTER_PREFIX + "instance-family", "instanceFamilies"),
                                (wellknown.KARPENTER_PREFIX + "instance-size", "instanceSizes"), (wellknown.ARCH_KEY, "arch")):
            values = tuple(facts.text(v) for v in facts.as_list(entry.get(field_name)))
            if values:
                requirements.append(wellknown.Requirement(key, "In", values))
        capacity = tuple(facts.text(v) for v in facts.as_list(entry.get("capacityTypes")))
        offered = ((wellknown.CAPACITY_TYPE_KEY, tuple(v.lower().replace("_", "-") for v in capacity)),
                   (wellknown.EKS_CAPACITY_TYPE_KEY, tuple(v.upper().replace("-", "_") for v in capacity))) if capacity else ()
        stated = facts.as_map(entry.get("allocatable"))
        allocatable = None
        if stated:
            amounts = {r: fit.quantity(stated.get(r)) for r in fit.SIZED}
            allocatable = fit.Allocatable(round((amounts[fit.CPU] or 0) * 1000) if amounts[fit.CPU] is not None else 10**9,
                                          *(int(amounts[r] / fit.MIB) if amounts[r] is not None else 10**12
                                            for r in (fit.MEMORY, fit.EPHEMERAL)))
        most = facts.number(entry.get("maxGpusPerNode"))
        most = most if most is not None and math.isfinite(most) else None
        kind = CONFIG_KINDS.get(facts.text(entry.get("kind")), "lane")
        lanes.append(Lane(facts.text(entry.get("name")), kind, labels, taints, entry.get("gpu") is True,
                          tuple(requirements), offered, stated=allocatable, max_gpus=int(most) if most is not None else None))
    return lanes


CONFIG_KINDS = {"nodepool": "pool", "nodegroup": "node group"}
"""The rack's ``lanes`` output's ``kind`` -> how messages name the lane."""


def size_facts(requirements: Sequence[wellknown.Requirement], limits: Mapping[str, float] = {},
               root_gib: Optional[float] = None) -> dict[str, Any]:
    """What the fit check needs of a lane, for the rack's ``lanes`` output (and so the policy config):
    ``arch``, ``maxGpusPerNode`` and the ``allocatable`` of its largest instance type (``largestInstanceType``)."""
    lane = Lane("", "lane", requirements=tuple(requirements), limits=tuple(limits.items()), root_gib=root_gib)
    types, _, _ = lane.launchable(Selection())
    found: dict[str, Any] = {"arch": sorted({wellknown.K8S_ARCH[t.arch] for t in types})}
    if types:
        largest = max(types, key=lambda t: (t.vcpus, t.memory_mib, t.gpus))
        free = fit.allocatable(largest, root_gib)
        found.update(maxGpusPerNode=max(t.gpus for t in types), largestInstanceType=largest.name,
                     allocatable={fit.CPU: f"{free.cpu_m}m", fit.MEMORY: f"{free.memory_mib}Mi",
                                  fit.EPHEMERAL: f"{free.ephemeral_mib}Mi"})
    return found


def pod_problems(subject: str, pod: Mapping[str, Any], lanes: Sequence[Mapping[str, Any]]) -> list[str]:
    """A pod spec against lanes given as the policy config gives them (the rack's ``lanes``): what the
    policy would refuse, in its words (the components check their own pods with it)."""
    known = Lanes(tuple(configured_lanes({"lanes": list(lanes)})))
    workload = read_workload(checks.StackResource("kubernetes:core/v1:Pod", "pod", "", {"spec": pod}))
    assert workload is not None
    if workload.refused:
        return [_refused(subject, problem) for problem in workload.refused]
    workload = Workload(subject, workload.kind, "", workload.selection, workload.tolerations, workload.gpus,
                        workload.requests)
    problems = reach_problems(workload, known)
    if not problems:
        problems, _ = fit_problems(workload, known, {})
    return problems


EFFECT_NAMES = sorted({*contract.EKS_EFFECTS, *contract.EKS_EFFECTS.values()})
"""Taint effects in Kubernetes' spelling or EKS's."""
_QUANTITY = {"type": ["string", "number"]}
LANE_FIELDS: dict[str, Any] = {
    "name": {"type": "string"},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "taints": {"type": "array", "items": {
        "type": "object", "required": ["key", "effect"],
        "properties": {"key": {"type": "string"}, "value": {"type": ["string", "null"]},
                       "effect": {"type": "string", "enum": EFFECT_NAMES}}}},
    "gpu": {"type": "boolean"},
    "arch": {"type": "array", "items": {"type": "string", "enum": ["amd64", "arm64"]}},
    "instanceTypes": {"type": "array", "items": {"type": "string"}},
    "instanceFamilies": {"type": "array", "items": {"type": "string"}},
    "instanceSizes": {"type": "array", "items": {"type": "string"}},
    "capacityTypes": {"type": "array", "items": {"type": "string", "enum": ["on-demand", "spot", "reserved", "ON_DEMAND", "SPOT"]}},
    "maxGpusPerNode": {"type": "integer", "minimum": 0},
    "allocatable": {"type": "object", "properties": {r: _QUANTITY for r in fit.SIZED}},
    "largestInstanceType": {"type": "string"},
    "kind": {"type": "string"}, "os": {"type": "string"}, "ami": {},
    "worstCaseHourlyUsd": {"type": ["number", "null"]}, "canaryOf": {"type": "string"},
}
"""A lane's fields: the rack's ``lanes`` output passes as it is (``os``, ``ami``, ``largestInstanceType``,
``worstCaseHourlyUsd`` and ``canaryOf`` are not read)."""
LANES_SCHEMA: dict[str, Any] = {
    "type": "array",
    "default": [],
    "description": "Lanes this stack's workloads may land on when the stack itself declares none (the rack is "
                   "another stack): [{name, labels, taints: [{key, value, effect}], gpu, arch, instanceTypes, "
                   "instanceFamilies, instanceSizes, capacityTypes, maxGpusPerNode, allocatable}], e.g. the rack "
                   "stack's lanes output.",
    "items": {"type": "object", "required": ["name"], "properties": LANE_FIELDS},
}
"""The ``lanes`` property of both workload policies' config (what the CLI checks before ``Configure``)."""


def lanes_config_problems(lanes: Any) -> list[str]:
    """What is wrong with a ``lanes`` policy config, each naming its path (``lanes[1].taint``)."""
    if lanes is None:
        return []
    if not isinstance(lanes, Sequence) or isinstance(lanes, str):
        return [f"lanes: expected a list of lanes, got {lanes!r}"]
    problems: list[str] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(lanes):
        where = f"lanes[{i}]"
        if not isinstance(entry, Mapping):
            problems.append(f"{where}: expected a lane {{name, labels, taints, ...}}, got {entry!r}")
            continue
        for key in entry:
            if key not in LANE_FIELDS:
                close = closest(key, LANE_FIELDS, cutoff=0.6)
                hint = f" (did you mean '{close}'?)" if close else f" (expected {', '.join(LANE_FIELDS)})"
                problems.append(f"{where}.{key}: unknown key{hint}")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            problems.append(f"{where}.name: every lane needs a name")
        elif name in seen:
            problems.append(f"{where}.name: duplicate lane name '{name}' (also lanes[{seen[name]}])")
        else:
            seen[name] = i
        for key, value in facts.as_map(entry.get("labels")).items():
            problem = syntax.qualified_name_problem(str(key))
            if problem:
                problems.append(f"{where}.labels: invalid label key '{key}' ({problem})")
            elif not isinstance(value, str) or syntax.label_value_problem(value):
                problems.append(f"{where}.labels.{key}: invalid label value {value!r} "
                                f"({syntax.label_value_problem(value) if isinstance(value, str) else 'must be a string'})")
        if "labels" in entry and not isinstance(entry["labels"], Mapping):
            problems.append(f"{where}.labels: expected a mapping of label to value, got {entry['labels']!r}")
        taints = entry.get("taints")
        if taints is not None and (not isinstance(taints, Sequence) or isinstance(taints, str)):
            problems.append(f"{where}.taints: expected a list of {{key, value, effect}}, got {taints!r}")
            taints = []
        for j, taint in enumerate(taints or []):
            at = f"{where}.taints[{j}]"
            if not isinstance(taint, Mapping):
                problems.append(f"{at}: expected {{key, value, effect}}, got {taint!r}")
                continue
            key, value, effect = taint.get("key"), taint.get("value"), taint.get("effect")
            if not isinstance(key, str) or syntax.qualified_name_problem(key):
                problems.append(f"{at}.key: invalid taint key {key!r}")
            if value is not None and (not isinstance(value, str) or syntax.label_value_problem(value)):
                problems.append(f"{at}.value: invalid taint value {value!r}")
            if effect not in EFFECT_NAMES:
                problems.append(f"{at}.effect: invalid taint effect {effect!r} (expected {', '.join(contract.BLOCKING_EFFECTS)} "
                                f"or PreferNoSchedule)")
            unknown_keys = sorted(set(map(str, taint)) - {"key", "value", "effect"})
            if unknown_keys:
                problems.append(f"{at}.{unknown_keys[0]}: unknown key (expected key, value, effect)")
        for field_name in ("arch", "instanceTypes", "instanceFamilies", "instanceSizes", "capacityTypes"):
            value = entry.get(field_name)
            if value is not None and (not isinstance(value, Sequence) or isinstance(value, str)
                                      or not all(isinstance(v, str) for v in value)):
                problems.append(f"{where}.{field_name}: expected a list of names, got {value!r}")
        types = entry.get("instanceTypes")
        for t in types if isinstance(types, Sequence) and not isinstance(types, str) else []:  # text is said above
            if isinstance(t, str) and syntax.instance_type_problem(t):
                problems.append(f"{where}.instanceTypes: invalid instance type '{t}' (must look like g4dn.xlarge)")
        most = entry.get("maxGpusPerNode")
        if most is not None and (isinstance(most, bool) or not isinstance(most, (int, float)) or not math.isfinite(most)
                                 or most < 0 or most != int(most)):
            problems.append(f"{where}.maxGpusPerNode: expected a whole number of GPUs, got {most!r}")
        allocatable = entry.get("allocatable")
        if allocatable is not None:
            if not isinstance(allocatable, Mapping):
                problems.append(f"{where}.allocatable: expected {{cpu, memory, ephemeral-storage}}, got {allocatable!r}")
            else:
                for key, value in allocatable.items():
                    amount = fit.quantity(value) if not isinstance(value, bool) else None
                    if key not in fit.SIZED:
                        problems.append(f"{where}.allocatable.{key}: unknown resource (expected {', '.join(fit.SIZED)})")
                    elif amount is None or not math.isfinite(amount) or amount < 0:
                        problems.append(f"{where}.allocatable.{key}: invalid quantity {_number_text(value)} "
                                        f"(0 or more, like 3920m, 14481Mi, 17Gi)")
        if not any(p.startswith(f"{where}.") for p in problems):
            problems += [f"{where}: {problem}" for problem in _launches_nothing(entry)]
    return problems


def _number_text(value: Any) -> str:
    """A config value as the user wrote it: numbers arrive as floats (``2.0`` was ``2``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


_SHAPE_FIELDS = (("instanceTypes", wellknown.TYPE_KEY), ("instanceFamilies", wellknown.KARPENTER_PREFIX + "instance-family"),
                 ("instanceSizes", wellknown.KARPENTER_PREFIX + "instance-size"), ("arch", wellknown.ARCH_KEY))
"""A configured lane's fields that say which instances it launches, and the label each one sets."""


def _launches_nothing(entry: Mapping[str, Any]) -> list[str]:
    """A lane whose instance types, families, sizes and architecture leave no instance it could launch
    (``g4dn.xlarge`` with ``arch: [arm64]``, ``g5`` with ``nano``): the lane is wrong, not the pods aimed at it."""
    given = [(name, key, tuple(entry[name])) for name, key in _SHAPE_FIELDS if entry.get(name)]
    if len(given) < 2:
        return []
    requirements = tuple(wellknown.Requirement(key, "In", values) for _, key, values in given)
    types, unsized = wellknown.launchable(requirements)
    if types or unsized:
        return []
    said = " and ".join(f"{name} {', '.join(values)}" for name, _, values in given)
    return [f"{said} leave no instance type it could launch (they contradict each other: "
            f"{_each_alone(given)})"]


def _each_alone(given: Sequence[tuple[str, str, tuple[str, ...]]]) -> str:
    """What each field of a contradicting lane allows on its own, for the fix."""
    found = []
    for name, key, values in given:
        if name == "arch":
            continue
        types, _ = wellknown.launchable((wellknown.Requirement(key, "In", values),))
        arches = sorted({wellknown.K8S_ARCH[t.arch] for t in types})
        sizes = sorted({t.size for t in types}, key=lambda size: next(t.vcpus for t in types if t.size == size))
        if types:
            found.append(f"{name} {', '.join(values)} {'is' if len(values) == 1 else 'are'} {'/'.join(arches)}, "
                         f"sizes {', '.join(sizes[:8])}{', ...' if len(sizes) > 8 else ''}")
    return "; ".join(found) or "no instance type has them all"


def config_findings(config: Mapping[str, Any]) -> list[Finding]:
    """The policy config's problems, as findings (a config the pack cannot read judges nothing)."""
    return [Finding(f"policy config {problem}", "") for problem in lanes_config_problems(config.get("lanes"))]


@dataclass(frozen=True)
class Lanes:
    """Every lane of the stack and of the policy config, and the ones whose facts are not known yet."""

    lanes: tuple[Lane, ...]
    unknown: tuple[str, ...] = ()
    """Lanes whose labels or taints are not known at preview (named as their resources)."""

    @property
    def known_keys(self) -> frozenset[str]:
        return frozenset(k for lane in self.lanes for k in lane.labels) | frozenset(contract.LANE_KEYS)

    def existing(self, key: str) -> list[str]:
        return sorted({lane.labels[key] for lane in self.lanes if key in lane.labels})

    @property
    def gpu_lanes(self) -> list[Lane]:
        return [lane for lane in self.lanes if lane.gpu]


def read_lanes(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown = ()) -> Lanes:
    templates: dict[str, facts.LaneResource] = {}
    classes: dict[str, facts.NodeClass] = {}
    read_of: dict[str, Optional[facts.LaneResource]] = {}
    for res in resources:
        read = read_of[res.urn] = facts.read(res.type, res.name, res.props)
        if isinstance(read, facts.LaunchTemplate):
            templates[res.urn] = read
        elif isinstance(read, facts.NodeClass):
            try:
                classes.setdefault(read.subject_name, read)
            except unknown:
                continue
    found: dict[tuple[Any, ...], Lane] = {}
    not_known: list[str] = []
    for res in resources:
        try:
            lane = _lane_of(res, templates, classes, read_of.get(res.urn))
        except unknown:
            not_known.append(f"{res.type.rsplit(':', 1)[-1]} '{res.name}'")
            continue
        if lane is not None:
            # a component's outputs and its child are one lane: keep the one that knows the sizes
            seen = found.get(lane._key())
            if seen is None or (lane.sized and not seen.sized):
                found[lane._key()] = lane
    for lane in configured_lanes(config):
        found.setdefault(lane._key(), lane)
    kinds = ("pool", "node group", "lane")
    ordered = sorted(found.values(), key=lambda lane: (kinds.index(lane.kind), lane.name))  # messages in one order
    return Lanes(tuple(ordered), tuple(not_known))


# ---- workloads ---------------------------------------------------------------------------------------

POD_SPEC = {
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
    "Rollout": ("spec", "template", "spec"),
    "LeaderWorkerSet": ("spec", "leaderWorkerTemplate", "workerTemplate", "spec"),
}
"""Where each workload kind keeps its pod spec (Argo Rollouts' ``Rollout`` as a Deployment does; a
``LeaderWorkerSet``'s workers, its leader template defaulting to theirs)."""
GROUPS = {
    "Deployment": ("apps", "extensions"), "StatefulSet": ("apps",), "DaemonSet": ("apps", "extensions"),
    "ReplicaSet": ("apps", "extensions"), "ReplicationController": ("core",), "Job": ("batch",),
    "CronJob": ("batch",), "Pod": ("core",), "Rollout": ("argoproj.io",), "LeaderWorkerSet": ("leaderworkerset.x-k8s.io",),
}
"""The API groups each kind comes in, any version (``kubernetes:apps/v1:Deployment``,
``kubernetes:batch/v1beta1:CronJob``)."""
_TYPE_RE = re.compile(r"kubernetes:(?P<group>[a-z0-9.-]+)/(?P<version>[a-z0-9]+):(?P<kind>[A-Za-z]+)")


def workload_kind(type_: str) -> Optional[str]:
    match = _TYPE_RE.fullmatch(type_)
    if match and match["group"] in GROUPS.get(match["kind"], ()):
        return match["kind"]
    return None


@dataclass(frozen=True)
class Workload:
    """One pod template's scheduling, as read from its resource."""

    subject: str
    """``service "web"`` (made by the ``Service`` component), else ``deployment "api"``, ``cronjob "nightly"``."""
    kind: str
    urn: str
    selection: Selection
    tolerations: tuple[Toleration, ...]
    gpus: Mapping[str, float]
    """GPU resources the pod asks for: its effective requests (``fit.pod_requests``: an init container's
    GPUs are handed on to the containers after it, so they are not added to theirs)."""
    requests: Mapping[str, float] = field(default_factory=dict)
    """The pod's effective requests (``fit.pod_requests``): cores, bytes, counts."""
    claims: tuple[str, ...] = ()
    """Its DRA claims of GPU device classes (``resourceClaims`` names)."""
    claimed_gpus: float = 0
    """Whole GPUs those claims ask for on one node."""
    images: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()
    """What each of its containers runs: its command's program, else its image's name (the image's entrypoint)."""
    slices: tuple[str, ...] = ()
    """NVIDIA resources other than whole GPUs it requests (``nvidia.com/mig-1g.10gb``, ``nvidia.com/gpu.shared``):
    only an NVIDIA GPU node advertises them, in numbers its device plugin's config decides."""
    refused: tuple[str, ...] = ()
    """What the API server refuses in its resource requirements (``fit.refusals``) or its ``overhead`` (the
    RuntimeClass admission controller): its pods are never created."""
    mig: tuple[str, ...] = ()
    """MIG slices it asks for (``nvidia.com/mig-<profile>``, DRA claims of MIG devices), each by its profile
    ('' for any profile)."""
    unheld: tuple[str, ...] = ()
    """DRA claims it names that the stack does not hold: what they ask for is not known."""
    broken_claims: tuple[str, ...] = ()
    """Its DRA claims the API server refuses, with why: its pods never start."""

    @property
    def nvidia_gpus(self) -> float:
        return self.gpus.get(contract.NVIDIA_GPU, 0) + self.claimed_gpus

    @property
    def wants_gpu(self) -> bool:
        """It asks for NVIDIA GPUs, through the device plugin's resources or a DRA claim."""
        return self.nvidia_gpus > 0 or bool(self.claims) or bool(self.slices)

    def asks(self) -> dict[str, float]:
        """What one node must have room for: cpu, memory, ephemeral storage and GPUs (claims as ``nvidia.com/gpu``)."""
        found = {k: self.requests[k] for k in fit.SIZED if k in self.requests}
        for resource in GPU_RESOURCES:
            count = self.gpus.get(resource, 0) + (self.claimed_gpus if resource == contract.NVIDIA_GPU else 0)
            if count:
                found[resource] = count
        return found


def _gpus(requests: Mapping[str, float]) -> dict[str, float]:
    return {resource: requests[resource] for resource in (contract.NVIDIA_GPU, contract.AMD_GPU) if requests.get(resource)}


GPU_DEVICE_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com")
"""NVIDIA's DRA driver's device classes for GPUs and MIG slices (NVIDIA/k8s-dra-driver-gpu
``deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml``); a DeviceClass of the stack
whose selectors name the driver ``gpu.nvidia.com`` counts too."""
CLAIM_KINDS = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}
"""``resource.k8s.io`` kinds and where their ``devices`` are (a template wraps a claim spec)."""


@dataclass(frozen=True)
class DeviceClass:
    """What a DRA device class gives: whole NVIDIA GPUs, or MIG slices (of one ``profile``, or any)."""

    mig: bool = False
    profile: str = ""


_CEL_PROFILE_RE = re.compile(r"""\.profile\s*==\s*['"]([^'"]+)['"]""")
_CEL_MIG_RE = re.compile(r"""\.type\s*==\s*['"]mig['"]""")


def _cel(selectors: Any) -> str:
    return " && ".join(facts.text(facts.dig(sel, "cel", "expression")) for sel in facts.as_list(selectors))


def gpu_classes(resources: Sequence[checks.StackResource]) -> dict[str, DeviceClass]:
    """NVIDIA's DRA device classes by name: the driver's own, and the stack's DeviceClasses whose selectors name
    the driver ``gpu.nvidia.com``, MIG ones (``type == 'mig'``, a ``profile``) too (the driver's
    ``demo/specs/extended-resources/mig-1g-12gb.yaml`` defines one per profile)."""
    found = {GPU_DEVICE_CLASSES[0]: DeviceClass(), GPU_DEVICE_CLASSES[1]: DeviceClass(mig=True)}
    for res in resources:
        if res.type.startswith("kubernetes:resource.k8s.io/") and res.type.endswith(":DeviceClass"):
            cel = _cel(facts.dig(res.props, "spec", "selectors"))
            if "gpu.nvidia.com" in cel:
                profile = _CEL_PROFILE_RE.search(cel)
                found[facts.text(facts.dig(res.props, "metadata", "name")) or res.name] = DeviceClass(
                    bool(_CEL_MIG_RE.search(cel) or profile), instances.mig_profile(profile.group(1)) or "" if profile else "")
    return found


@dataclass(frozen=True)
class Claim:
    """A ResourceClaim or ResourceClaimTemplate of the stack: what it asks of one node."""

    gpus: float = 0
    """Whole NVIDIA GPUs."""
    mig: tuple[str, ...] = ()
    """MIG slices, each by its profile ('' for any profile)."""
    nvidia: bool = False
    """It asks for NVIDIA devices (GPUs or MIG slices)."""
    refused: str = ""
    """What the API server refuses in it: it is never created."""
    urn: str = ""


def claimed(resources: Sequence[checks.StackResource]) -> dict[tuple[str, str], Claim]:
    """The stack's claims and templates: ``(kind, name) -> Claim``. Each request asks for ``count`` devices of its
    class (``allocationMode`` ExactCount, the default, with ``count`` 1 by default and more than 0; ``All``: every
    matching device of the node, so at least 1, and no ``count``), the fewest of its ``firstAvailable``
    alternatives (Kubernetes API, resource.k8s.io/v1 ``ExactDeviceRequest``; ``pkg/apis/resource/validation``
    ``validateDeviceAllocationMode``). A request says what it asks for in ``exactly`` (``v1``) or on itself
    (``v1beta1``)."""
    classes = gpu_classes(resources)
    found: dict[tuple[str, str], Claim] = {}
    for res in resources:
        kind = res.type.rsplit(":", 1)[-1]
        if not res.type.startswith("kubernetes:resource.k8s.io/") or kind not in CLAIM_KINDS:
            continue
        gpus, mig, nvidia, refused = 0.0, [], False, []
        at = ".".join(CLAIM_KINDS[kind]) + ".devices.requests"
        for i, request in enumerate(facts.as_list(facts.dig(res.props, *CLAIM_KINDS[kind], "devices", "requests"))):
            request = facts.as_map(request)
            if "exactly" in request:
                options = [(f"{at}[{i}].exactly", facts.as_map(request.get("exactly")))]
            elif "firstAvailable" in request:
                options = [(f"{at}[{i}].firstAvailable[{j}]", facts.as_map(o))
                           for j, o in enumerate(facts.as_list(request.get("firstAvailable")))]
            else:  # resource.k8s.io/v1beta1: the request names its device class itself
                options = [(f"{at}[{i}]", request)]
            asked = []
            for where, option in options:
                count, problem = _device_count(option)
                if problem:
                    refused.append(f"{where}.{problem}")
                device_class = classes.get(facts.text(option.get("deviceClassName")))
                if device_class is not None:
                    profile = _CEL_PROFILE_RE.search(_cel(option.get("selectors")))
                    profile_name = (instances.mig_profile(profile.group(1)) or profile.group(1)) if profile else device_class.profile
                    asked.append((count, device_class.mig or bool(profile), profile_name))
            if asked and len(asked) == len(options):  # every alternative is NVIDIA's
                nvidia = True
                count, is_mig, profile_name = min(asked, key=lambda a: (a[1], a[0]))
                if is_mig:
                    mig += [profile_name] * max(1, int(count))
                else:
                    gpus += count
        name = facts.text(facts.dig(res.props, "metadata", "name")) or res.name
        found[(kind, name)] = Claim(gpus, tuple(mig), nvidia, "; ".join(refused), res.urn)
    return found


def _device_count(request: Mapping[str, Any]) -> tuple[float, str]:
    """How many devices one request takes, and what the API server refuses in its count ('' for nothing)."""
    mode = request.get("allocationMode")
    count = request.get("count")
    if mode == "All":
        if count not in (None, 0):
            return 1, f"count {_number_text(count)}: must not be specified when allocationMode is 'All'"
        return 1, ""
    if mode not in (None, "", "ExactCount"):
        return 0, f"allocationMode {_number_text(mode)}: not supported (All or ExactCount)"
    if count is None:
        return 1, ""
    number = facts.number(count)
    if isinstance(count, bool) or number is None or not math.isfinite(number) or number != int(number) or number <= 0:
        return 0, f"count {_number_text(count)}: must be a whole number greater than zero"
    return number, ""


@dataclass(frozen=True)
class PodClaims:
    """What a pod's ``resourceClaims`` ask for, read against the stack's claims."""

    names: tuple[str, ...] = ()
    """Its claims of NVIDIA devices (``resourceClaims`` names)."""
    gpus: float = 0
    mig: tuple[str, ...] = ()
    unheld: tuple[str, ...] = ()
    """Claims it names that the stack does not hold (``ResourceClaimTemplate 'gpu'``): what they ask is not known."""
    refused: tuple[str, ...] = ()
    """Its claims the API server refuses, with why."""


def _claims(pod: Any, claims: Mapping[tuple[str, str], Claim]) -> PodClaims:
    names, gpus, mig, unheld, refused = [], 0.0, [], [], []
    for claim in facts.as_list(pod.get("resourceClaims")):
        claim = facts.as_map(claim)
        ref = (("ResourceClaimTemplate", facts.text(claim.get("resourceClaimTemplateName"))) if claim.get("resourceClaimTemplateName")
               else ("ResourceClaim", facts.text(claim.get("resourceClaimName"))))
        found = claims.get(ref)
        if not ref[1]:
            continue
        if found is None:
            unheld.append(f"{ref[0]} '{ref[1]}'")
        elif found.refused:
            refused.append(f"its claim '{facts.text(claim.get('name')) or ref[1]}' is {ref[0]} '{ref[1]}', which Kubernetes "
                           f"refuses ({found.refused}), so no pod of it ever starts")
        elif found.nvidia:
            names.append(facts.text(claim.get("name")) or ref[1])
            gpus += found.gpus
            mig += found.mig
    return PodClaims(tuple(names), gpus, tuple(mig), tuple(unheld), tuple(refused))


MIG_RESOURCE = "nvidia.com/mig-"
"""NVIDIA's device plugin advertises each MIG profile as ``nvidia.com/mig-<profile>`` (its "mixed" strategy;
NVIDIA/k8s-device-plugin ``internal/rm/rm.go``)."""
NVIDIA_SLICES = ("nvidia.com/mig-", "nvidia.com/gpu.")
"""Resources NVIDIA's device plugin advertises for parts of a GPU: MIG slices (``nvidia.com/mig-1g.10gb``)
and renamed shared GPUs (``nvidia.com/gpu.shared``). Other ``nvidia.com/`` resources (the Network Operator's
``nvidia.com/hostdev``) are not GPUs."""


RUNTIME_CLASS_TYPES = ("kubernetes:node.k8s.io/v1:RuntimeClass", "kubernetes:node.k8s.io/v1beta1:RuntimeClass")


def runtime_classes(resources: Sequence[checks.StackResource], unknown: Unknown = ()) -> dict[str, Mapping[str, Any]]:
    """The stack's RuntimeClasses by the name they give (``metadata.name``; one auto-named, or named by a
    value not known at preview, cannot be named by a pod yet): their ``scheduling`` and ``overhead``."""
    found: dict[str, Mapping[str, Any]] = {}
    for res in resources:
        if res.type in RUNTIME_CLASS_TYPES:
            try:
                name = facts.text(facts.dig(res.props, "metadata", "name"))
            except unknown:
                continue
            if name:
                found.setdefault(name, facts.as_map(res.props))
    return found


def _with_runtime_class(pod: Mapping[str, Any], runtime: Optional[Mapping[str, Any]]) -> Mapping[str, Any]:
    """A pod spec as the RuntimeClass admission controller leaves it: the class's ``scheduling.nodeSelector``
    merged into the pod's, its ``scheduling.tolerations`` added, its ``overhead.podFixed`` as the pod's
    ``overhead`` (kubernetes ``plugin/pkg/admission/runtimeclass``)."""
    if runtime is None:
        return pod
    scheduling_ = facts.as_map(runtime.get("scheduling"))
    merged = dict(pod)
    selector = facts.as_map(scheduling_.get("nodeSelector"))
    if selector:
        merged["nodeSelector"] = {**facts.as_map(pod.get("nodeSelector")), **selector}
    tolerations = facts.as_list(scheduling_.get("tolerations"))
    if tolerations:
        merged["tolerations"] = [*facts.as_list(pod.get("tolerations")), *tolerations]
    fixed = facts.as_map(facts.dig(runtime, "overhead", "podFixed"))
    if fixed and "overhead" not in pod:
        merged["overhead"] = fixed
    return merged


def _overhead_refused(pod: Mapping[str, Any], runtimes: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The RuntimeClass admission controller's check of a pod's own ``overhead`` (kubernetes
    ``plugin/pkg/admission/runtimeclass``, ``validateOverhead``): a pod may set it only to its RuntimeClass's
    ``overhead.podFixed``; without a RuntimeClass, or one that defines none, it is refused. A class the stack
    does not hold is not judged."""
    overhead = facts.as_map(pod.get("overhead"))
    if not overhead:
        return []
    name = facts.text(pod.get("runtimeClassName"))
    if not name:
        return ["spec.overhead is set without a runtimeClassName (the RuntimeClass admission controller refuses a pod "
                "overhead no RuntimeClass defines: drop overhead, and name a RuntimeClass whose overhead.podFixed gives it)"]
    if name not in runtimes:
        return []
    fixed = facts.as_map(facts.dig(runtimes[name], "overhead", "podFixed"))
    if not fixed:
        return [f"spec.overhead is set, but RuntimeClass '{name}' defines no overhead (the RuntimeClass admission "
                f"controller refuses it: drop overhead, or give the RuntimeClass overhead.podFixed)"]
    if {str(k): fit.quantity(v) for k, v in overhead.items()} != {str(k): fit.quantity(v) for k, v in fixed.items()}:
        return [f"spec.overhead is not RuntimeClass '{name}''s overhead.podFixed (the RuntimeClass admission controller "
                f"refuses a pod overhead other than its class's: drop overhead, and the class sets it)"]
    return []


def read_workload(res: checks.StackResource, claims: Mapping[tuple[str, str], Claim] = {},
                  runtimes: Mapping[str, Mapping[str, Any]] = {}) -> Optional[Workload]:
    kind = workload_kind(res.type)
    if kind is None:
        return None
    pod = facts.as_map(facts.dig(res.props, *POD_SPEC[kind]))
    if facts.text(pod.get("nodeName")):  # bound to one node by name: no scheduler, no lane, taints not checked
        return None
    refused = _overhead_refused(pod, runtimes)
    pod = _with_runtime_class(pod, runtimes.get(facts.text(pod.get("runtimeClassName"))))
    metadata = facts.as_map(res.props.get("metadata"))
    service = facts.text(facts.as_map(metadata.get("annotations")).get(contract.SERVICE_ANNOTATION))
    name = facts.text(metadata.get("name")) or res.name
    subject = f'service "{service}"' if service else f'{kind.lower()} "{name}"'
    requests = fit.pod_requests(pod)
    gpus = _gpus(requests)
    # EKS runs the ExtendedResourceToleration admission controller (EKS user guide, platform versions):
    # a pod that requests an extended resource (a domain-qualified name outside kubernetes.io: GPUs,
    # aws.amazon.com/neuron, vpc.amazonaws.com/efa) tolerates the NoSchedule taint keyed by it (not DRA claims)
    admitted = tuple(Toleration(resource, "Exists", "", "NoSchedule") for resource in requests if fit.extended(resource))
    asked = _claims(pod, claims)
    images = tuple(facts.text(facts.as_map(c).get("image")) for group in ("initContainers", "containers")
                   for c in facts.as_list(pod.get(group)))
    slices = tuple(r for r, amount in requests.items() if r.startswith(NVIDIA_SLICES) and amount)
    # the device plugin's MIG resources (its "mixed" strategy): nvidia.com/mig-<profile>, '+' written '.'
    mig = tuple(instances.mig_profile(r.removeprefix(MIG_RESOURCE)) or "" for r in slices if r.startswith(MIG_RESOURCE))
    programs = tuple(_program(facts.as_map(c)) for c in facts.as_list(pod.get("containers")))
    return Workload(subject, kind, res.urn, scheduling.selection_of(pod), scheduling.tolerations_of(pod) + admitted, gpus,
                    requests, asked.names, asked.gpus, images, programs, slices,
                    (*fit.refusals(pod), *refused), mig + asked.mig, asked.unheld, asked.refused)


def image_name(image: str) -> str:
    """``nvcr.io/nvidia/k8s-device-plugin:v0.20.0`` -> ``k8s-device-plugin``: whatever registry, tag or digest."""
    return image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]


def _program(container: Mapping[str, Any]) -> str:
    command = facts.as_list(container.get("command"))
    first = facts.text(command[0]) if command else ""
    return first.rsplit("/", 1)[-1] if first else image_name(facts.text(container.get("image")))


# ---- the verdicts --------------------------------------------------------------------------------------


def _gpu_words(count: float) -> str:
    return f"{rules.gib(count)} {contract.NVIDIA_GPU}"


def _named(key: str, value: str) -> str:
    return rules.pool_subject(value) if key == contract.NODEPOOL_LABEL else f'node group label "{value}"'


def missing_lane(subject: str, key: str, value: str, existing: Sequence[str], unlabelled: bool = False) -> str:
    """The seeds' deploy check (convox/convox ``provider/k8s/karpenter.go``, ``validateNodePool``), in one
    line. Like the seeds, a pool exists for a workload by the label its nodes carry, not by its name:
    ``unlabelled`` says a NodePool of that name exists whose nodes do not carry it."""
    what = "pools" if key == contract.NODEPOOL_LABEL else "labels"
    hint = (f"; NodePool '{value}' exists, but its nodes carry no {key}={value} label: add it to its "
            f"spec.template.metadata.labels") if unlabelled else ""
    meant = None if unlabelled else closest(value, existing)
    guess = f"did you mean '{meant}'? " if meant else ""
    return (f"{subject} targets {_named(key, value)}, which does not exist on this rack "
            f"({guess}existing {what}: {', '.join(existing) or 'none'}{hint})")


def _fix(taint: Taint, workload: Workload) -> str:
    if taint.key == contract.DEDICATED_TAINT_KEY:
        return (f"add the toleration {{key: {taint.key}, operator: Equal, value: {taint.value}, effect: {taint.effect}}}; "
                f"the Service component adds it for nodeSelectorLabels {' and '.join(contract.LANE_KEYS)}")
    if taint.key in (contract.NVIDIA_GPU, contract.AMD_GPU):
        toleration = f"{{key: {taint.key}, operator: Exists, effect: {taint.effect}}}"
        if workload.gpus.get(taint.key):
            return f"add the toleration {toleration}; the Service component adds it for scale.gpu"
        if workload.claims and taint.key == contract.NVIDIA_GPU:
            return (f"it claims GPUs through DRA ({', '.join(workload.claims)}), which EKS's ExtendedResourceToleration "
                    f"does not cover: add the toleration {toleration}")
        if workload.slices and taint.key == contract.NVIDIA_GPU:
            return (f"it requests {', '.join(workload.slices)}, whose taints EKS's ExtendedResourceToleration names after "
                    f"them, not {taint.key}: add the toleration {toleration}")
        other = [r for r in workload.gpus if r != taint.key]
        if other:
            return f"it requests {other[0]}, not {taint.key}: select a lane with {other[0]}, or request {taint.key}"
        if workload.unheld:
            return (f"it claims devices through DRA from {', '.join(workload.unheld)}, which this stack does not hold, and "
                    f"EKS's ExtendedResourceToleration does not cover DRA claims: add the toleration {toleration}")
        return f"it requests no GPU: select a lane without GPUs, or request {taint.key}"
    return "add a toleration for it: custom taints are not tolerated automatically"


def untolerated_lane(workload: Workload, lane: Lane, taints: Sequence[Taint]) -> str:
    which = "its taint" if len(taints) == 1 else "its taints"
    fixes = "; ".join(dict.fromkeys(_fix(t, workload) for t in taints))
    return (f"{workload.subject} selects {lane.subject} but does not tolerate {which} "
            f"{', '.join(str(t) for t in taints)} ({fixes})")


def _select_gpu_lane(lanes: Lanes) -> str:
    return ", or ".join(dict.fromkeys(lane.selector() for lane in lanes.gpu_lanes))


def no_gpu_lane(workload: Workload, selected: Sequence[Lane], lanes: Lanes) -> str:
    """A GPU workload that reaches no GPU lane, with the fix that fits why."""
    asks = _gpu_asks(workload)
    if not lanes.gpu_lanes:
        return f"{asks}, but this rack has no GPU lane (add a Karpenter pool or node group with GPU instance types)"
    if workload.selection.empty:
        return (f"{asks} but selects no lane, and the default lane has no GPUs "
                f"(select a GPU lane in nodeSelectorLabels: {_select_gpu_lane(lanes)})")
    fix = f"select a GPU lane: {_select_gpu_lane(lanes)}"
    if not selected:
        return f"{asks}, but no lane of this rack matches its node selection ({fix})"
    known = lanes.known_keys
    undeclared = [r for r in workload.selection.requirements
                  if r.key not in known and not _is_well_known(r.key) and r.operator in _SELECTING]
    if undeclared:
        names = ", ".join(lane.subject for lane in selected)
        return (f"{asks}, but it selects {'; '.join(_req_words(r) for r in undeclared)}, which no lane of this rack "
                f"declares (were its nodes to carry it, it could land on {names}, without GPUs) ({fix})")
    names = ", ".join(lane.subject for lane in selected)
    return f"{asks}, but it selects {names}, which {'has' if len(selected) == 1 else 'have'} no GPUs ({fix})"


def _gpu_asks(workload: Workload) -> str:
    """``service "web" requests 1 nvidia.com/gpu``: what a GPU workload asks for, as it asks."""
    if workload.gpus.get(contract.NVIDIA_GPU):
        return f"{workload.subject} requests {_gpu_words(workload.nvidia_gpus)}"
    if workload.slices:
        return f"{workload.subject} requests {', '.join(workload.slices)} (NVIDIA GPU slices)"
    if workload.mig and not workload.claimed_gpus:
        return f"{workload.subject} claims MIG devices {_mig_words(workload.mig)} through DRA ({', '.join(workload.claims)})"
    return f"{workload.subject} claims {_gpu_words(workload.claimed_gpus or 1)} through DRA ({', '.join(workload.claims)})"


def _mig_words(profiles: Sequence[str]) -> str:
    return ", ".join(p or "of any profile" for p in dict.fromkeys(profiles))


MIG_FAMILIES = tuple(sorted({f.name for f in instances.FAMILIES.values() if instances.mig_profiles(f.name)}))
"""The EC2 families whose GPUs have MIG (``instances.MIG_PROFILES``)."""


def no_mig(workload: Workload, lanes: Sequence[tuple[Lane, Selection]]) -> str:
    """A workload asking for MIG slices whose GPU lanes launch no GPU that has them, with each lane's GPUs."""
    wanted = [p for p in dict.fromkeys(workload.mig)]
    said = []
    for lane, chosen in lanes:
        families = sorted({f for alternative in lane._families(chosen) for f in alternative
                           if f != wellknown.OTHER_X86 and instances.is_nvidia_gpu_family(f)})
        gpus = ", ".join(f"{f} ({instances.facts(f).gpu_model}: "
                         f"{'MIG ' + ', '.join(instances.mig_profiles(f)) if instances.mig_profiles(f) else 'no MIG'})"
                         for f in families[:6])
        said.append(f"{lane.subject} launches {gpus}")
    specific = [p for p in wanted if p]
    fix = (f"select a lane of a family whose GPU has {', '.join(specific)}, or ask for a profile its GPUs have"
           if specific else f"select a lane of a MIG family ({', '.join(MIG_FAMILIES)})")
    return (f"{_gpu_asks(workload)}, but no GPU the lanes it reaches launch has {'them' if len(wanted) > 1 else 'it'}: "
            f"{'; '.join(said)} (MIG exists on A100, H100, H200, B200, B300, GB200, GB300 and RTX PRO Blackwell GPUs, "
            f"each with its own profiles; {fix})")


def _well_known_reason(selection: Selection, lane: Lane) -> str:
    """Why none of a lane's nodes can meet the pod's well-known requirements (arch, capacity type, OS,
    instance labels), in the affinity terms that select the lane."""
    terms = selection.terms if selection.terms is not None else ((),)
    for term in terms:
        for req in selection.node_selector + tuple(term):
            if not lane._capacity_holds((req,)) and req.key == OS_KEY:
                return f"it needs {_req_words(req)}, and the lane's nodes run {', '.join(lane.os)}"
            if not lane._capacity_holds((req,)):
                offered = ", ".join(v for _, values in lane.capacity for v in values)
                return f"it needs {_req_words(req)}, and the lane launches capacity type {offered} only"
            if lane.requirements and not wellknown.candidates(lane.requirements + _wellknown((req,))):
                return f"it needs {_req_words(req)}, and the lane launches {_launches_words(lane)} only"
    return "no instance the lane can launch meets its node selection"


def _launches_words(lane: Lane) -> str:
    """What a lane launches, as a reader checks it against a pod's selection: its families and architectures."""
    families = [f for f in wellknown.candidates(lane.requirements) if f != wellknown.OTHER_X86]
    arches = sorted({wellknown.K8S_ARCH.get(a, a) for a in wellknown.architectures(lane.requirements)})
    if families and len(families) <= 8 and wellknown.OTHER_X86 not in wellknown.candidates(lane.requirements):
        return f"{', '.join(families)} ({'/'.join(arches)})"
    return f"{'/'.join(arches)} instances of other kinds"


def _req_words(req: scheduling.Requirement) -> str:
    if req.operator == "In" and len(req.values) == 1:
        return f"{req.key}={req.values[0]}"
    return str(wellknown.Requirement(req.key, req.operator, req.values))


@dataclass(frozen=True)
class Fit:
    """A workload against one lane's nodes: fits, cannot tell (``unknown``), or the shortfall."""

    fits: bool
    unknown: str = ""
    short: str = ""
    rank: tuple[float, ...] = ()
    """How near it comes (smaller is nearer): the number of resources short, then the shortfall."""
    fix: str = ""
    """What to do, where it is not the sizes' fix (``_fit_fix``)."""


GiB = 2**30


def _short_words(asks: Mapping[str, float], has: Mapping[str, float]) -> list[str]:
    return [f"{fit.words(r, has.get(r, 0))} allocatable < {fit.words(r, asks[r]).split(' ', 1)[1]} requested" for r in asks
            if asks[r] > has.get(r, 0) + 1e-9]


def _gpus_of(itype: instances.InstanceType, resource: str) -> int:
    vendor = instances.facts(itype.name).gpu
    return itype.gpus if contract.gpu_resource(vendor) == resource and vendor else 0


def fit_on(workload: Workload, lane: Lane, overhead: Mapping[str, float], selection: Selection) -> Fit:
    """Whether one node of ``lane`` has room for the pod, after kube-reserved, eviction thresholds and
    the lane's DaemonSets (``overhead``), on the instance types its ``selection`` (the affinity terms
    that land it on ``lane``) allows."""
    asks = workload.asks()
    if not asks or not lane.sized:
        return Fit(True)
    if not lane.requirements:  # a lane of the policy config that states its sizes
        has = {r: float(lane.stated.get(r)) for r in fit.SIZED} if lane.stated is not None else {}
        if lane.stated is not None:
            has = {r: v - overhead.get(r, 0) for r, v in has.items()}
        if lane.max_gpus is not None:
            has.update({r: float(lane.max_gpus) for r in GPU_RESOURCES})
        missing = _short_words({r: v for r, v in asks.items() if r in has}, has)
        if not missing:
            return Fit(True)
        return Fit(False, short=f"its largest node (as the policy config states it) has {', '.join(missing)}",
                   rank=(len(missing),))
    types, unsized, capped = lane.launchable(selection)
    best: Optional[tuple[tuple[float, ...], instances.InstanceType, list[str]]] = None
    for itype in types:
        free = fit.allocatable(itype, lane.root_gib).less(overhead)
        has = {r: float(free.get(r)) for r in fit.SIZED}
        has.update({r: float(_gpus_of(itype, r) if lane.max_gpus is None else min(_gpus_of(itype, r), lane.max_gpus))
                    for r in GPU_RESOURCES})  # the policy config's maxGpusPerNode caps what its types have
        missing = _short_words(asks, has)
        if not missing:
            return Fit(True)
        rank = (len(missing), -itype.gpus, -itype.vcpus, -itype.memory_mib)
        if best is None or rank < best[0]:
            best = (rank, itype, missing)
    if unsized:
        return Fit(False, unknown=f"the instance table does not size {', '.join(unsized[:5])}")
    if best is None:
        if capped:
            return Fit(False, short=f"its limits ({_limit_words(lane)}) leave no instance type it can launch", rank=(9,))
        # its families admit the pod, but no type of them meets its per-type labels (type, size, cpu, memory, GPUs)
        return Fit(False, short="no instance type it can launch meets the pod's node selection "
                                f"({'; '.join(_req_words(r) for r in _type_requirements(selection)) or 'its instance labels'})",
                   rank=(8,), fix="select instance types the lane launches")
    rank, itype, missing = best
    why = (f"the nearest instance type it can launch for this pod, {itype.name}, has {', '.join(missing)} "
           f"(after kube-reserved{',' if any(overhead.get(r) for r in fit.SIZED) else ' and'} eviction thresholds"
           f"{_overhead_words(overhead)})")
    if capped:
        why += f"; its limits ({_limit_words(lane)}) rule out {', '.join(t.name for t in capped[:3])}"
    if lane.max_gpus is not None and any(r in asks and _gpus_of(itype, r) > lane.max_gpus for r in GPU_RESOURCES):
        why += f"; the policy config gives it at most {lane.max_gpus} GPUs per node (maxGpusPerNode)"
    return Fit(False, short=why, rank=rank)


def _type_requirements(selection: Selection) -> list[scheduling.Requirement]:
    """The pod's requirements on well-known instance labels (``node.kubernetes.io/instance-type``,
    ``karpenter.k8s.aws/instance-*``), as it wrote them."""
    terms = selection.terms if selection.terms is not None else ((),)
    found = []
    for req in selection.node_selector + tuple(r for term in terms for r in term):
        if (req.key == wellknown.TYPE_KEY or req.key.startswith((wellknown.KARPENTER_PREFIX, wellknown.AUTO_MODE_PREFIX))) \
                and req not in found:
            found.append(req)
    return found


def _overhead_words(overhead: Mapping[str, float]) -> str:
    used = [fit.words(r, overhead[r]) for r in fit.SIZED if overhead.get(r)]
    return f" and its DaemonSets' {', '.join(used)}" if used else ""


def _limit_words(lane: Lane) -> str:
    return ", ".join(fit.words(r, v) for r, v in lane.limits)


def _fit_fix(workload: Workload) -> str:
    if workload.subject.startswith("service "):
        return "lower scale.cpu/scale.memory/scale.gpu, or select a lane with larger instances"
    return "lower the pod's requests, or select (or give the lane) larger instance types"


def reach_problems(workload: Workload, lanes: Lanes, overheads: Optional[Mapping[int, Mapping[str, float]]] = None) -> list[str]:
    """What keeps ``workload`` from ever landing where it asks to (empty: it can). Fit problems that
    cannot be decided are left to ``fit_findings``."""
    named = named_lanes(workload.selection)
    pools = {lane.name for lane in lanes.lanes if lane.kind == "pool"}
    known = lanes.known_keys
    # per lane, the affinity terms that select it by its labels, then those its nodes meet
    by_labels = [(lane, on) for lane in lanes.lanes if (on := workload.selection.on(lane.labels, known)) is not None]
    problems = [missing_lane(workload.subject, key, value, lanes.existing(key), key == contract.NODEPOOL_LABEL and value in pools)
                for key, value in named if value not in lanes.existing(key)]
    if problems and not by_labels:  # a lane it names is missing, and no other it offers (terms and values are ORed) exists
        return problems
    if _names_other_node_group(workload, lanes):
        return []
    picks = [r for r in workload.selection.requirements if r.key in known and r.operator == "In" and not r.field]
    if not by_labels and len(picks) > 1 and workload.kind != "DaemonSet" \
            and all(any(r.holds(lane.labels) for lane in lanes.lanes) for r in picks):
        # each label it picks is some lane's of this stack (not another stack's), but no lane has them all
        wanted = "; ".join(_req_words(r) for r in picks)
        return [f"{workload.subject} selects no lane: no lane of this rack carries all of its node selection "
                f"({wanted}), and the node selector and affinity must all hold (select one lane)"]
    landing = [(lane, chosen) for lane, on in by_labels if (chosen := lane.admitted(on)) is not None]
    selected = [lane for lane, _ in landing]
    # a lane it names (by convox.io/nodepool or convox.io/label) must take it, one of them when it names several ...
    named_here = [lane for lane in selected if any(lane.labels.get(key) == value for key, value in named)]
    if named_here and all(lane.untolerated(workload.tolerations) for lane in named_here):
        return [untolerated_lane(workload, lane, lane.untolerated(workload.tolerations)) for lane in named_here]
    # ... and of the lanes it aims at by their own labels, some lane must (a selection that only rules lanes
    # out, such as karpenter.sh/nodepool DoesNotExist, aims at nodes the stack may not hold)
    reachable = [(lane, chosen) for lane, chosen in landing if not lane.untolerated(workload.tolerations)]
    if selected and not reachable and _aims_at(workload, known):
        return [untolerated_lane(workload, lane, lane.untolerated(workload.tolerations)) for lane in selected]
    if workload.wants_gpu and not any(lane.gpu_for(chosen) for lane, chosen in reachable):
        return [no_gpu_lane(workload, [lane for lane, chosen in landing if not lane.gpu_for(chosen)], lanes)]
    if workload.mig:
        serving = [(lane, chosen) for lane, chosen in reachable if lane.gpu_for(chosen)]
        if serving and not any(lane.mig_for(chosen, workload.mig) for lane, chosen in serving):
            return [no_mig(workload, serving)]
    if not selected and by_labels and workload.kind != "DaemonSet":  # the labels match, the nodes' do not
        # (a DaemonSet that selects no node runs no pod: nothing waits, e.g. an arm64 or Windows agent)
        # the nearest: a lane it names, else one whose taints it tolerates (not a dedicated lane it never aimed at)
        lane, on = min(by_labels, key=lambda pair: (not any(pair[0].labels.get(k) == v for k, v in named),
                                                    bool(pair[0].untolerated(workload.tolerations))))
        return [f"{workload.subject} fits no lane: the nearest, {lane.subject}, cannot take it: "
                f"{_well_known_reason(on, lane)} (select a lane that offers it, or add one)"]
    return []


def _aims_at(workload: Workload, known: frozenset[str]) -> bool:
    """Whether the workload picks nodes by what the stack's lanes declare (``In``, ``Exists``, ``Gt``, ``Lt`` on a
    lane label or a well-known label their instances decide), rather than only ruling lanes out (``DoesNotExist``,
    ``NotIn``), asking for labels no lane declares, or for Linux (every lane's): such a selection, like the
    Karpenter chart's own (``karpenter.sh/nodepool DoesNotExist``), aims at nodes the stack may not hold."""
    return any(r.operator in _SELECTING + ("Lt",) and not r.field and r.key != OS_KEY
               and (r.key in known or _is_well_known(r.key)) for r in workload.selection.requirements)


def _names_other_node_group(workload: Workload, lanes: Lanes) -> bool:
    """Whether it requires nodes of an EKS node group by name (EKS labels every node with its group's name)
    that is none of the stack's: its nodes come from elsewhere (``eks.amazonaws.com/nodegroup: system``)."""
    groups = {lane.name for lane in lanes.lanes if lane.kind == "node group"}
    return any(r.key == EKS_NODEGROUP_LABEL and r.operator == "In" and not r.field and not set(r.values) & groups
               for r in workload.selection.requirements)


def fit_problems(workload: Workload, lanes: Lanes, overheads: Mapping[int, Mapping[str, float]]) -> tuple[list[str], list[str]]:
    """(refusals, cannot-tell) for a workload that reaches lanes: does one node of one of them hold it?"""
    known = lanes.known_keys
    candidates = [(lane, chosen) for lane in lanes.lanes
                  if (chosen := lane.reached_by(workload.selection, _overhead_keys(workload, lane, known)
                                                if workload.kind == "DaemonSet" else known)) is not None
                  and not lane.untolerated(workload.tolerations) and (not workload.wants_gpu or lane.gpu_for(chosen))]
    if not candidates:
        return [], []
    verdicts = [(lane, fit_on(workload, lane, overheads.get(id(lane), {}), chosen)) for lane, chosen in candidates]
    if workload.kind == "DaemonSet":  # one pod on every node of every lane it lands on: each lane must hold it
        asks = ", ".join(fit.words(r, v) for r, v in workload.asks().items())
        return ([f"{workload.subject} runs a pod on every node of {lane.subject} and fits none: it requests {asks}; "
                 f"{verdict.short} (lower its requests, or keep it off the lane with a node selector)"
                 for lane, verdict in verdicts if not verdict.fits and not verdict.unknown],
                [f"{workload.subject}: cannot verify that it fits {lane.subject}: {v.unknown}" for lane, v in verdicts if v.unknown])
    if any(v.fits for _, v in verdicts):
        return [], []
    unsure = [f"{workload.subject}: cannot verify that it fits {lane.subject}: {v.unknown}" for lane, v in verdicts if v.unknown]
    if unsure:
        return [], unsure
    lane, verdict = min(verdicts, key=lambda pair: pair[1].rank)
    asks = ", ".join(fit.words(r, v) for r, v in workload.asks().items())
    return [f"{workload.subject} fits no lane: it requests {asks}; the nearest, {lane.subject}: {verdict.short} "
            f"({verdict.fix or _fit_fix(workload)})"], []


def lane_overheads(workloads: Sequence[Workload], lanes: Lanes) -> dict[int, dict[str, float]]:
    """Per lane (by id), what the DaemonSets that land on its nodes request on each node."""
    known = lanes.known_keys
    found: dict[int, dict[str, float]] = {}
    daemonsets = [w for w in workloads if w.kind == "DaemonSet" and w.requests]
    for lane in lanes.lanes:
        total: dict[str, float] = {}
        for ds in daemonsets:
            if lane.reached_by(ds.selection, _overhead_keys(ds, lane, known)) is not None and not lane.untolerated(ds.tolerations):
                for r, v in ds.requests.items():
                    total[r] = total.get(r, 0) + v
        found[id(lane)] = total
    return found


def _overhead_keys(ds: Workload, lane: Lane, known: frozenset[str]) -> frozenset[str]:
    """The label keys a DaemonSet's selection is judged on for ``lane``'s overhead. Karpenter counts a
    DaemonSet on a pool's nodes only when the pool defines every custom label it requires ("custom
    labels must intersect, but if not defined are denied", ``Requirements.Compatible``): for a pool, its
    own keys too. A node group's nodes may carry labels set after they join (NFD's), so it stays lenient."""
    return _strict_keys(ds, known) if lane.kind == "pool" else known


def _strict_keys(workload: Workload, known: frozenset[str]) -> frozenset[str]:
    """``known`` and the custom label keys the workload requires: judged strictly, a label no lane declares
    is not there."""
    return known | frozenset(r.key for r in workload.selection.requirements if not r.field and not _is_well_known(r.key))


def squats(workload: Workload, lanes: Lanes) -> list[str]:
    """Advisory: a workload that requests no GPU but tolerates a GPU lane's GPU taint, and can land
    there, can take an expensive node. DaemonSets run one pod per node and take none (the device plugin)."""
    if workload.kind == "DaemonSet" or workload.gpus or workload.claims or workload.slices or workload.unheld:
        return []  # (a claim the stack does not hold may be a GPU's)
    known = lanes.known_keys
    reached = [lane for lane in lanes.gpu_lanes if lane.gpu_taints
               and (chosen := lane.reached_by(workload.selection, known)) is not None
               and lane.gpu_for(chosen) and not lane.untolerated(workload.tolerations)]
    if not reached:
        return []
    key = reached[0].gpu_taints[0].key
    return [f"{workload.subject} requests no GPU but tolerates the {key} taint of "
            f"{', '.join(lane.subject for lane in reached)}, so it can take a GPU node "
            f"(drop the toleration, or request {key})"]


def _judged(workload: Workload) -> bool:
    """Workloads the rack's lanes decide something about: they select, tolerate, ask for GPUs or for room."""
    return (not workload.selection.empty or bool(workload.tolerations) or workload.wants_gpu
            or any(r in workload.requests for r in fit.SIZED))


def _refused(subject: str, problem: str) -> str:
    return f"{subject}: {problem}; Kubernetes refuses such a pod, so none is ever created"


def _no_lanes(workload: Workload) -> str:
    return (f"{workload.subject}: cannot verify that it can land where it asks: this stack declares no lanes "
            f"(Karpenter NodePools, EKS node groups) and the policy config names none (set lanes: "
            f"[{{name, labels, taints, gpu}}], e.g. from the rack stack's lanes output)")


@dataclass
class Survey:
    """The stack's lanes and pod templates, read once for a request's workload policies."""

    lanes: Lanes
    workloads: list[Workload]
    """Every pod template (DaemonSets included, for what they take on each node)."""
    unsure: list[Finding]
    overheads: dict[int, dict[str, float]]
    claims: Mapping[tuple[str, str], Claim] = field(default_factory=dict)


def survey(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown) -> Survey:
    lanes = read_lanes(resources, config, unknown)
    claims, runtimes = claimed(resources), runtime_classes(resources, unknown)
    workloads: list[Workload] = []
    unsure: list[Finding] = []
    for res in resources:
        try:
            workload = read_workload(res, claims, runtimes)
        except unknown as exc:
            unsure.append(Finding(f"{res.type.rsplit(':', 1)[-1].lower()} '{res.name}': {getattr(exc, 'message', exc)}",
                                  res.urn, certain=False))
            continue
        if workload is not None:
            workloads.append(workload)
    return Survey(lanes, workloads, unsure, lane_overheads(workloads, lanes), claims)


def _survey(resources: Sequence[checks.StackResource], config: Mapping[str, Any],
            unknown: Unknown, whole: Optional[Survey] = None) -> tuple[Lanes, list[Workload], list[Finding]]:
    found = whole or survey(resources, config, unknown)
    return found.lanes, [w for w in found.workloads if _judged(w)], list(found.unsure)


def _findings(workload: Workload, problems: Iterable[str], lanes: Lanes) -> Iterator[Finding]:
    for problem in problems:
        if lanes.unknown:  # a lane not known yet could be the one that fits
            yield Finding(f"{problem} (not certain: {', '.join(lanes.unknown)} not known during preview)",
                          workload.urn, certain=False)
        else:
            yield Finding(problem, workload.urn)


def _own_overheads(workload: Workload, overheads: Mapping[int, Mapping[str, float]]) -> Mapping[int, Mapping[str, float]]:
    """A DaemonSet is judged against what the other DaemonSets leave."""
    if workload.kind != "DaemonSet":
        return overheads
    return {lane: {r: v - workload.requests.get(r, 0) for r, v in used.items()} for lane, used in overheads.items()}


def reach(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown = (),
          whole: Optional[Survey] = None) -> list[Finding]:
    """Policy ``workloads-reach-their-lane``: every pod template can land on a lane it selects, a GPU
    workload on a GPU lane, and one node of that lane has room for it. Config: ``lanes``."""
    found = config_findings(config)
    if found:
        return found
    whole = whole or survey(resources, config, unknown)
    lanes = whole.lanes
    found = list(whole.unsure)
    found += [Finding(f"{kind.lower()} '{name}': {claim.refused}; Kubernetes refuses it", claim.urn)
              for (kind, name), claim in whole.claims.items() if claim.refused]
    for workload in whole.workloads:
        if workload.refused or workload.broken_claims:  # no pod of it ever runs: where it would land is moot
            found.extend(Finding(_refused(workload.subject, problem), workload.urn) for problem in workload.refused)
            found.extend(Finding(f"{workload.subject}: {problem}", workload.urn) for problem in workload.broken_claims)
            continue
        if workload.unheld:  # what it claims is not known: judged as far as the rest of it goes
            found.append(Finding(f"{workload.subject}: cannot verify what its DRA claims ask for: {', '.join(workload.unheld)} "
                                 f"{'is' if len(workload.unheld) == 1 else 'are'} not in this stack (declare "
                                 f"{'it' if len(workload.unheld) == 1 else 'them'} in this stack to have "
                                 f"{'it' if len(workload.unheld) == 1 else 'them'} judged)", workload.urn, certain=False))
        if not _judged(workload):
            continue
        if not lanes.lanes and not lanes.unknown:
            if named_lanes(workload.selection) or workload.wants_gpu:
                found.append(Finding(_no_lanes(workload), workload.urn, certain=False))
            continue
        problems = reach_problems(workload, lanes)
        if not problems:
            problems, unsure = fit_problems(workload, lanes, _own_overheads(workload, whole.overheads))
            found.extend(Finding(message, workload.urn, certain=False) for message in unsure)
            outside = outside_the_rack(workload, lanes)
            if outside and not problems:
                found.append(Finding(outside, workload.urn, certain=False))
        found.extend(_findings(workload, problems, lanes))
    return found


def outside_the_rack(workload: Workload, lanes: Lanes) -> str:
    """A workload (not a DaemonSet) every way of landing of which requires a label no lane of the stack declares
    (``team: ml``): the rack's nodes carry only what their lanes declare (a pool's template labels, a node
    group's labels) and the well-known labels, so it lands only on nodes from elsewhere, if any. Not a refusal
    (such nodes may exist), but said. Labels node agents write (NFD's, NVIDIA's) are not counted."""
    if workload.kind == "DaemonSet" or not lanes.lanes:
        return ""
    known = lanes.known_keys

    def undeclared(requirements: Iterable[scheduling.Requirement]) -> list[scheduling.Requirement]:
        return [r for r in requirements if r.operator in _SELECTING and not r.field and r.key not in known
                and not _is_well_known(r.key) and not r.key.startswith((NFD_PREFIX, "nvidia.com/"))]

    terms = workload.selection.terms if workload.selection.terms is not None else ((),)
    per_term = [undeclared(workload.selection.node_selector) + undeclared(term) for term in terms]
    if not per_term or not all(per_term):
        return ""
    said = "; ".join(dict.fromkeys(_req_words(r) for reqs in per_term for r in reqs))
    selectors = ", ".join(list(dict.fromkeys(lane.selector() for lane in lanes.lanes))[:5])
    return (f"{workload.subject} selects {said}, which no lane of this rack declares, so it can land only on nodes from "
            f"outside the rack (name them in the policy config's lanes to have it judged, or select a lane of the rack: "
            f"{selectors})")


GPU_DAEMON_IMAGES = ("k8s-device-plugin", "dcgm-exporter")
"""Image names of NVIDIA's device plugin (``nvcr.io/nvidia/k8s-device-plugin``) and dcgm-exporter
(``nvcr.io/nvidia/k8s/dcgm-exporter``), whatever registry or tag."""
GPU_NODE_KEYS = (contract.GPU_VENDOR_LABEL, facts.GPU_PRESENT_LABEL, "feature.node.kubernetes.io/pci-10de.present",
                 "feature.node.kubernetes.io/cpu-model.vendor_id",
                 *(prefix + label for prefix in (wellknown.KARPENTER_PREFIX, wellknown.AUTO_MODE_PREFIX)
                   for label in ("instance-gpu-manufacturer", "instance-gpu-count", "instance-gpu-name")))
"""Node labels a DaemonSet selects GPU nodes by (ours, NVIDIA's and NFD's, Karpenter's and EKS Auto Mode's)."""
_SELECTING = ("In", "Exists", "Gt")


def serves_gpus(workload: Workload) -> str:
    """Why a DaemonSet serves GPUs (its image, or its selection of GPU nodes), or ''."""
    if workload.kind != "DaemonSet":
        return ""
    for image in workload.images:
        if image_name(image) in GPU_DAEMON_IMAGES:
            return f"image {image}"
    for req in workload.selection.requirements:
        if req.key in GPU_NODE_KEYS and req.operator in _SELECTING:
            return f"it selects GPU nodes ({_req_words(req)})"
    return ""


NFD_PREFIX = "feature.node.kubernetes.io/"
"""node-feature-discovery's labels: in a kubernetes.io domain, but written by NFD's worker, on the nodes it runs on."""


def _is_well_known(key: str) -> bool:
    """A label the kubelet, EKS or Karpenter give nodes (judged against the instance table, or not at all)."""
    domain, slash, _ = key.partition("/")
    return bool(slash) and domain.endswith(RESERVED_DOMAINS) and not key.startswith(NFD_PREFIX)


GPU_MODE_LABELS = ("nvidia.com/mps.", "nvidia.com/mig.", "nvidia.com/gpu.sharing-strategy", "nvidia.com/gpu.replicas",
                   "nvidia.com/gpu.deploy.", "nvidia.com/device-plugin.config")
"""Node labels that say how a GPU node is set up rather than what it has: NVIDIA's gpu-feature-discovery writes
``nvidia.com/mps.capable: true`` only on nodes set up for MPS sharing, ``nvidia.com/mig.*`` and the sharing labels
by the node's MIG and sharing config (NVIDIA/k8s-device-plugin ``internal/lm``); the GPU operator's
``nvidia.com/gpu.deploy.<component>`` turns a component on or off per node; ``nvidia.com/device-plugin.config``
picks a node's plugin config. A DaemonSet that requires one is meant for the nodes set up that way only."""
NODE_AGENTS: dict[str, tuple[str, ...]] = {
    "nfd-worker": (NFD_PREFIX,),
    "node-feature-discovery": (NFD_PREFIX,),
    "gpu-feature-discovery": ("nvidia.com/",),
    "gpu-operator": (facts.GPU_PRESENT_LABEL, "nvidia.com/gpu.deploy."),
}
"""What a workload labels nodes with, by the program it runs (its command, else its image): NFD's worker
(the ``nfd-worker`` command of image ``node-feature-discovery``), gpu-feature-discovery (the device plugin
chart runs it from the ``k8s-device-plugin`` image), the GPU operator (a Deployment labelling every node
with an NVIDIA GPU). A DaemonSet labels the nodes it runs on; ``nvidia.com/`` labels only GPU nodes."""


def node_agent_labels(workloads: Sequence[Workload], lanes: Lanes) -> dict[int, tuple[str, ...]]:
    """Per lane (by id), the label keys and prefixes node agents of the stack write on its nodes. An agent
    may select labels another one writes (gpu-feature-discovery selects NFD's), so this repeats until
    nothing more is found."""
    agents = [(w, prefixes) for w in workloads for program in w.programs if (prefixes := NODE_AGENTS.get(program))]
    found: dict[int, tuple[str, ...]] = {id(lane): () for lane in lanes.lanes}
    known = lanes.known_keys
    grew = bool(agents)
    while grew:
        grew = False
        for agent, prefixes in agents:
            for lane in lanes.lanes:
                new = tuple(p for p in prefixes if p not in found[id(lane)] and (lane.gpu or not p.startswith("nvidia.com/")))
                if not new or (agent.kind == "DaemonSet" and not _runs_on(agent, lane, known, found[id(lane)])):
                    continue
                found[id(lane)] += new
                grew = True
    return found


def _runs_on(daemonset: Workload, lane: Lane, known: frozenset[str], labelled: tuple[str, ...]) -> bool:
    on = daemonset.selection.on(lane.labels, _agent_judged_keys(daemonset, known, labelled))
    return on is not None and lane.admits(on) and not lane.untolerated(daemonset.tolerations)


def _agent_judged_keys(workload: Workload, known: frozenset[str], labelled: tuple[str, ...]) -> frozenset[str]:
    """The label keys a GPU DaemonSet's selection is judged on for one lane: ``_strict_keys``, but not labels
    that may be there: one an agent of the stack writes on the lane's nodes (``labelled``: NFD's
    ``pci-10de.present``), and a GPU mode label (``GPU_MODE_LABELS``: ``nvidia.com/mps.capable``), which narrows
    the DaemonSet to the nodes set up for that mode, by design, whoever writes it."""
    def judged(key: str) -> bool:
        return not key.startswith(labelled) and not key.startswith(GPU_MODE_LABELS)

    return frozenset(k for k in _strict_keys(workload, known) if k in known or judged(k))


def misses_gpu_lane(workload: Workload, lane: Lane, known: frozenset[str], labelled: tuple[str, ...] = ()) -> str:
    """Why a GPU DaemonSet's pods never run on ``lane``'s nodes, or ''. Its own labels are judged strictly:
    a GPU label the lane's nodes do not declare and no agent of the stack writes there (``nvidia.com/gpu.present``
    without the GPU operator) is not there (``_agent_judged_keys``)."""
    strict = _agent_judged_keys(workload, known, labelled)
    on = workload.selection.on(lane.labels, strict)
    if on is None:
        labels = ", ".join(f"{k}={v}" for k, v in sorted(lane.labels.items())) or "none"
        wanted = "; ".join(_req_words(r) for r in workload.selection.requirements)
        if lane.labels.get(contract.GPU_VENDOR_LABEL) == contract.GPU_VENDOR_NVIDIA:
            fix = f"select {contract.GPU_VENDOR_LABEL}: {contract.GPU_VENDOR_NVIDIA}, which the rack's GPU lanes carry"
        else:  # a lane from elsewhere (a pool of another program, the policy config) carries no such label
            fix = f"select a label its nodes carry ({lane.selector()}), or give the lane {contract.GPU_VENDOR_LABEL}: " \
                  f"{contract.GPU_VENDOR_NVIDIA}"
        return f"its node selection ({wanted}) does not match the lane's node labels ({labels}) ({fix})"
    if not lane.admits(on):
        return _well_known_reason(on, lane)
    taints = lane.untolerated(workload.tolerations)
    if taints:
        fixes = ", ".join(f"{{key: {t.key}, operator: Exists, effect: {t.effect}}}" for t in taints)
        return f"it does not tolerate {', '.join(str(t) for t in taints)} (add the tolerations {fixes})"
    return ""


def gpu_daemonsets(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown = (),
                   whole: Optional[Survey] = None) -> list[Finding]:
    """Policy ``gpu-daemonsets-reach-gpu-lanes``: every DaemonSet that serves GPUs runs on every GPU lane."""
    problems = config_findings(config)
    if problems:
        return problems
    whole = whole or survey(resources, config, unknown)
    lanes = whole.lanes
    found = [f for f in whole.unsure if "daemonset" in f.message]
    known = lanes.known_keys
    labelled = node_agent_labels(whole.workloads, lanes)
    for workload in whole.workloads:
        why = serves_gpus(workload)
        if not why:
            continue
        for lane in lanes.gpu_lanes:
            miss = misses_gpu_lane(workload, lane, known, labelled[id(lane)])
            if miss:
                found.extend(_findings(workload, [f"{workload.subject} serves GPUs ({why}) but never runs on "
                                                  f"{lane.subject}, a GPU lane: {miss}"], lanes))
    return found


def squatting(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown = (),
              whole: Optional[Survey] = None) -> list[Finding]:
    """Policy ``gpu-lanes-for-gpu-workloads`` (advisory): no workload without GPUs can take a GPU node."""
    problems = config_findings(config)
    if problems:
        return problems
    lanes, workloads, found = _survey(resources, config, unknown, whole)
    for workload in workloads:
        found.extend(_findings(workload, squats(workload, lanes), lanes))
    return found
