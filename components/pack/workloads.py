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
decides is judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union

from .. import contract
from . import checks, facts, rules, scheduling, wellknown
from .scheduling import Selection, Taint, Toleration, label_text

Finding = checks.Finding
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
    """A NodePool's requirements: with the pod's, they decide which instance families it can get."""

    def _families(self, selection: Selection) -> list[list[str]]:
        """Per alternative of the pod's required affinity, the families a pod with ``selection`` can get
        here (Karpenter intersects the pod's requirements with the pool's); [] for a lane without them."""
        if not self.requirements:
            return []
        terms = selection.terms if selection.terms is not None else ((),)
        return [wellknown.candidates(self.requirements + _wellknown(selection.node_selector + tuple(term)))
                for term in terms]

    def admits(self, selection: Selection) -> bool:
        """Whether some instance this lane can launch satisfies the pod's well-known requirements
        (``kubernetes.io/arch``, ``karpenter.k8s.aws/instance-*``); lanes without requirements do."""
        return not self.requirements or any(self._families(selection))

    def gpu_for(self, selection: Selection) -> bool:
        """Whether a pod with ``selection`` can get an NVIDIA GPU instance here."""
        if not self.requirements:
            return self.gpu
        return self.gpu and any(any(f != wellknown.OTHER_X86 and wellknown.instances.is_nvidia_gpu_family(f) for f in families)
                                for families in self._families(selection))

    @property
    def subject(self) -> str:
        if self.kind == "pool":
            return f'Karpenter node pool "{self.name}"'
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


def _wellknown(requirements: Iterable[scheduling.Requirement]) -> tuple[wellknown.Requirement, ...]:
    return tuple(wellknown.Requirement(r.key, r.operator, r.values) for r in requirements if r.operator in wellknown.OPERATORS)


RESERVED_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws", "eks.amazonaws.com")


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




def _lane_of(res: checks.StackResource, templates: Mapping[str, facts.LaneResource]) -> Optional[Lane]:
    """The lane one resource of the stack describes, or None."""
    props = res.props
    if res.type == contract.COMPONENT_POOL and "labels" in props:  # KarpenterPool's registered outputs
        name = facts.text(props.get("nodePoolName")) or res.name
        labels = {**_labels(props.get("labels")), contract.KARPENTER_POOL_LABEL: name}
        taints = _taints(props.get("taints"))
        return Lane(name, "pool", labels, taints, _gpu_taint_or_label(labels, taints))
    if res.type == contract.COMPONENT_NODE_GROUP and "labels" in props:  # NodeGroup's registered outputs
        labels, taints = _labels(props.get("labels")), _taints(props.get("taints"))
        return Lane(res.name, "node group", labels, taints, _gpu_taint_or_label(labels, taints))
    lane = facts.read(res.type, res.name, props)
    if isinstance(lane, facts.NodePool):
        name = lane.subject_name
        template = facts.dig(props, "spec", "template")
        requirements = tuple(wellknown.read(facts.as_list(facts.dig(template, "spec", "requirements"))))
        labels = {**_requirement_labels(requirements), **_labels(facts.dig(template, "metadata", "labels")),
                  contract.KARPENTER_POOL_LABEL: name}
        return Lane(name, "pool", labels, _taints(facts.dig(template, "spec", "taints")), _pool_offers_gpus(lane),
                    requirements)
    if isinstance(lane, (facts.EksNodeGroup, facts.PulumiEksNodeGroup)):
        gpu = checks.gpu_reason(lane) is not None
        for urn in res.property_dependencies.get("launchTemplate", ()):  # instance types in the launch template
            template = templates.get(urn)
            gpu = gpu or (template is not None and checks.gpu_reason(template) is not None)
        return Lane(lane.subject_name, "node group", _labels(props.get("labels")), _taints(props.get("taints")), gpu)
    return None


def configured_lanes(config: Mapping[str, Any]) -> list[Lane]:
    """The policy config's ``lanes: [{name, labels, taints, gpu}]`` (a stack whose rack is elsewhere)."""
    lanes = []
    for entry in facts.as_list(config.get("lanes")):
        entry = facts.as_map(entry)
        labels, taints = _labels(entry.get("labels")), _taints(entry.get("taints"))
        lanes.append(Lane(facts.text(entry.get("name")), "lane", labels, taints, entry.get("gpu") is True))
    return lanes


EFFECT_NAMES = sorted({*contract.EKS_EFFECTS, *contract.EKS_EFFECTS.values()})
"""Taint effects in Kubernetes' spelling or EKS's."""
LANES_SCHEMA: dict[str, Any] = {
    "type": "array",
    "default": [],
    "description": "Lanes this stack's workloads may land on when the stack itself declares none (the rack is "
                   "another stack): [{name, labels, taints: [{key, value, effect}], gpu}].",
    "items": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "taints": {"type": "array", "items": {
                "type": "object", "required": ["key", "effect"],
                "properties": {"key": {"type": "string"}, "value": {"type": ["string", "null"]},
                               "effect": {"type": "string", "enum": EFFECT_NAMES}}}},
            "gpu": {"type": "boolean"},
        },
    },
}
"""The ``lanes`` property of both workload policies' config (what the CLI checks before ``Configure``)."""


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
    templates = {res.urn: lane for res in resources
                 if isinstance(lane := facts.read(res.type, res.name, res.props), facts.LaunchTemplate)}
    found: dict[tuple[Any, ...], Lane] = {}
    not_known: list[str] = []
    for res in resources:
        try:
            lane = _lane_of(res, templates)
        except unknown:
            not_known.append(f"{res.type.rsplit(':', 1)[-1]} '{res.name}'")
            continue
        if lane is not None:
            found.setdefault(lane._key(), lane)  # a component's outputs and its child are one lane
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
}
"""Where each workload kind keeps its pod spec."""
GROUPS = {
    "Deployment": ("apps", "extensions"), "StatefulSet": ("apps",), "DaemonSet": ("apps", "extensions"),
    "ReplicaSet": ("apps", "extensions"), "ReplicationController": ("core",), "Job": ("batch",),
    "CronJob": ("batch",), "Pod": ("core",),
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
    """GPU resources the pod asks for (limits, else requests), summed over its containers."""

    @property
    def nvidia_gpus(self) -> float:
        return self.gpus.get(contract.NVIDIA_GPU, 0)


def _gpus(pod: Any) -> dict[str, float]:
    total: dict[str, float] = {}
    for group in ("initContainers", "containers"):
        for container in facts.as_list(pod.get(group)):
            resources = facts.as_map(facts.as_map(container).get("resources"))
            for resource in (contract.NVIDIA_GPU, contract.AMD_GPU):
                count = facts.number(facts.as_map(resources.get("limits")).get(resource))
                if count is None:
                    count = facts.number(facts.as_map(resources.get("requests")).get(resource))
                if count:
                    total[resource] = total.get(resource, 0) + count
    return total


def read_workload(res: checks.StackResource) -> Optional[Workload]:
    kind = workload_kind(res.type)
    if kind is None:
        return None
    pod = facts.as_map(facts.dig(res.props, *POD_SPEC[kind]))
    metadata = facts.as_map(res.props.get("metadata"))
    service = facts.text(facts.as_map(metadata.get("annotations")).get(contract.SERVICE_ANNOTATION))
    name = facts.text(metadata.get("name")) or res.name
    subject = f'service "{service}"' if service else f'{kind.lower()} "{name}"'
    gpus = _gpus(pod)
    # EKS runs the ExtendedResourceToleration admission controller (EKS user guide, platform versions):
    # a pod that requests an extended resource tolerates the NoSchedule taint keyed by it
    admitted = tuple(Toleration(resource, "Exists", "", "NoSchedule") for resource in gpus)
    return Workload(subject, kind, res.urn, scheduling.selection_of(pod), scheduling.tolerations_of(pod) + admitted, gpus)


# ---- the verdicts --------------------------------------------------------------------------------------


def _gpu_words(count: float) -> str:
    return f"{rules.gib(count)} {contract.NVIDIA_GPU}"


def _named(key: str, value: str) -> str:
    return f'Karpenter node pool "{value}"' if key == contract.NODEPOOL_LABEL else f'node group label "{value}"'


def missing_lane(subject: str, key: str, value: str, existing: Sequence[str], unlabelled: bool = False) -> str:
    """The seeds' deploy check (convox/convox ``provider/k8s/karpenter.go``, ``validateNodePool``), in one
    line. Like the seeds, a pool exists for a workload by the label its nodes carry, not by its name:
    ``unlabelled`` says a NodePool of that name exists whose nodes do not carry it."""
    what = "pools" if key == contract.NODEPOOL_LABEL else "labels"
    hint = (f"; NodePool '{value}' exists, but its nodes carry no {key}={value} label: add it to its "
            f"spec.template.metadata.labels") if unlabelled else ""
    return (f"{subject} targets {_named(key, value)}, which does not exist on this rack "
            f"(existing {what}: {', '.join(existing) or 'none'}{hint})")


def _fix(taint: Taint, workload: Workload) -> str:
    if taint.key == contract.DEDICATED_TAINT_KEY:
        return (f"add the toleration {{key: {taint.key}, operator: Equal, value: {taint.value}, effect: {taint.effect}}}; "
                f"the Service component adds it for nodeSelectorLabels {' and '.join(contract.LANE_KEYS)}")
    if taint.key in (contract.NVIDIA_GPU, contract.AMD_GPU):
        if workload.gpus.get(taint.key):
            return (f"add the toleration {{key: {taint.key}, operator: Exists, effect: {taint.effect}}}; "
                    f"the Service component adds it for scale.gpu")
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
    asks = f"{workload.subject} requests {_gpu_words(workload.nvidia_gpus)}"
    if not lanes.gpu_lanes:
        return f"{asks}, but this rack has no GPU lane (add a Karpenter pool or node group with GPU instance types)"
    if workload.selection.empty:
        return (f"{asks} but selects no lane, and the default lane has no GPUs "
                f"(select a GPU lane in nodeSelectorLabels: {_select_gpu_lane(lanes)})")
    fix = f"select a GPU lane: {_select_gpu_lane(lanes)}"
    if not selected:
        return f"{asks}, but no lane of this rack matches its node selection ({fix})"
    names = ", ".join(lane.subject for lane in selected)
    return f"{asks}, but it selects {names}, which {'has' if len(selected) == 1 else 'have'} no GPUs ({fix})"


def reach_problems(workload: Workload, lanes: Lanes) -> list[str]:
    """What keeps ``workload`` from ever landing where it asks to (empty: it can)."""
    named = named_lanes(workload.selection)
    pools = {lane.name for lane in lanes.lanes if lane.kind == "pool"}
    problems = [missing_lane(workload.subject, key, value, lanes.existing(key), key == contract.NODEPOOL_LABEL and value in pools)
                for key, value in named if value not in lanes.existing(key)]
    if problems:
        return problems
    known = lanes.known_keys
    selected = [lane for lane in lanes.lanes
                if workload.selection.matches(lane.labels, known) and lane.admits(workload.selection)]
    # every lane it names (by convox.io/nodepool or convox.io/label) must take it ...
    problems = [untolerated_lane(workload, lane, taints) for lane in selected
                if any(lane.labels.get(key) == value for key, value in named)
                and (taints := lane.untolerated(workload.tolerations))]
    if problems:
        return problems
    # ... and whatever else it selects, some lane must
    reachable = [lane for lane in selected if not lane.untolerated(workload.tolerations)]
    if selected and not reachable and not workload.selection.empty:
        return [untolerated_lane(workload, lane, lane.untolerated(workload.tolerations)) for lane in selected]
    if workload.nvidia_gpus > 0 and not any(lane.gpu_for(workload.selection) for lane in reachable):
        return [no_gpu_lane(workload, [lane for lane in selected if not lane.gpu_for(workload.selection)], lanes)]
    return []


def squats(workload: Workload, lanes: Lanes) -> list[str]:
    """Advisory: a workload that requests no GPU but tolerates a GPU lane's GPU taint, and can land
    there, can take an expensive node. DaemonSets run one pod per node and take none (the device plugin)."""
    if workload.kind == "DaemonSet" or workload.gpus:
        return []
    known = lanes.known_keys
    reached = [lane for lane in lanes.gpu_lanes if lane.gpu_taints and workload.selection.matches(lane.labels, known)
               and lane.gpu_for(workload.selection) and not lane.untolerated(workload.tolerations)]
    if not reached:
        return []
    key = reached[0].gpu_taints[0].key
    return [f"{workload.subject} requests no GPU but tolerates the {key} taint of "
            f"{', '.join(lane.subject for lane in reached)}, so it can take a GPU node "
            f"(drop the toleration, or request {key})"]


def _judged(workload: Workload) -> bool:
    """Workloads the rack's lanes decide something about: they select, tolerate or ask for GPUs."""
    return not workload.selection.empty or bool(workload.tolerations) or workload.nvidia_gpus > 0


def _no_lanes(workload: Workload) -> str:
    return (f"{workload.subject}: cannot verify that it can land where it asks: this stack declares no lanes "
            f"(Karpenter NodePools, EKS node groups) and the policy config names none (set lanes: "
            f"[{{name, labels, taints, gpu}}], e.g. from the rack stack's lanes output)")


def _survey(resources: Sequence[checks.StackResource], config: Mapping[str, Any],
            unknown: Unknown) -> tuple[Lanes, list[Workload], list[Finding]]:
    lanes = read_lanes(resources, config, unknown)
    workloads: list[Workload] = []
    unsure: list[Finding] = []
    for res in resources:
        try:
            workload = read_workload(res)
        except unknown as exc:
            unsure.append(Finding(f"{res.type.rsplit(':', 1)[-1].lower()} '{res.name}': {getattr(exc, 'message', exc)}",
                                  res.urn, certain=False))
            continue
        if workload is not None and _judged(workload):
            workloads.append(workload)
    return lanes, workloads, unsure


def _findings(workload: Workload, problems: Iterable[str], lanes: Lanes) -> Iterator[Finding]:
    for problem in problems:
        if lanes.unknown:  # a lane not known yet could be the one that fits
            yield Finding(f"{problem} (not certain: {', '.join(lanes.unknown)} not known during preview)",
                          workload.urn, certain=False)
        else:
            yield Finding(problem, workload.urn)


def reach(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown = ()) -> list[Finding]:
    """Policy ``workloads-reach-their-lane``: every pod template can land on a lane it selects, and a
    GPU workload on a GPU lane. Config: ``lanes``."""
    lanes, workloads, found = _survey(resources, config, unknown)
    for workload in workloads:
        if not lanes.lanes and not lanes.unknown:
            if named_lanes(workload.selection) or workload.nvidia_gpus > 0:
                found.append(Finding(_no_lanes(workload), workload.urn, certain=False))
            continue
        found.extend(_findings(workload, reach_problems(workload, lanes), lanes))
    return found


def squatting(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown = ()) -> list[Finding]:
    """Policy ``gpu-lanes-for-gpu-workloads`` (advisory): no workload without GPUs can take a GPU node."""
    lanes, workloads, found = _survey(resources, config, unknown)
    for workload in workloads:
        found.extend(_findings(workload, squats(workload, lanes), lanes))
    return found
