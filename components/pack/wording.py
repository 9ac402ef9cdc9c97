"""The words of the workload verdicts: a lane that is missing, a taint not tolerated, no GPU lane selected,
and the well-known labels a lane cannot meet, each with its fix."""

from __future__ import annotations


from typing import Sequence

from .. import contract
from ..inputs import closest
from ..facts import instances, wellknown
from . import rules, scheduling
from .scheduling import NodeTaint, Selection
from .lanemodel import LaneView, Lanes, OS_KEY, RESERVATION_ID_KEY, SELECTING, as_wellknown, is_well_known
from .pods import Workload

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
    hint = (
        (
            f"; NodePool '{value}' exists, but its nodes carry no {key}={value} label: add it to its "
            f"spec.template.metadata.labels"
        )
        if unlabelled
        else ""
    )
    meant = None if unlabelled else closest(value, existing)
    guess = f"did you mean '{meant}'? " if meant else ""
    return (
        f"{subject} targets {_named(key, value)}, which does not exist on this rack "
        f"({guess}existing {what}: {', '.join(existing) or 'none'}{hint})"
    )


def never_runs(pools: Sequence[LaneView]) -> str:
    """``karpenter nodepool 'gpu', which it selects, is never created: Kubernetes refuses limits.cpu 'abc', ...``:
    pools a workload selects whose nodes never run, each with why (``LaneView.never``)."""
    return "; ".join(f"{lane.subject}, which it selects, {lane.never}" for lane in pools)


def _fix(taint: NodeTaint, workload: Workload) -> str:
    if taint.key == contract.DEDICATED_TAINT_KEY:
        return (
            f"add the toleration {{key: {taint.key}, operator: Equal, value: {taint.value}, effect: {taint.effect}}}; "
            f"the Service component adds it for nodeSelectorLabels {' and '.join(contract.LANE_KEYS)}"
        )
    if taint.key in (contract.NVIDIA_GPU, contract.AMD_GPU):
        toleration = f"{{key: {taint.key}, operator: Exists, effect: {taint.effect}}}"
        if workload.gpus.get(taint.key):
            return f"add the toleration {toleration}; the Service component adds it for scale.gpu"
        if workload.claims and taint.key == contract.NVIDIA_GPU:
            return (
                f"it claims GPUs through DRA ({', '.join(workload.claims)}), which EKS's ExtendedResourceToleration "
                f"does not cover: add the toleration {toleration}"
            )
        if workload.shares and taint.key == contract.NVIDIA_GPU:
            return (
                f"a GPU share ({', '.join(workload.shares)}) requests no {taint.key}, so EKS's "
                f"ExtendedResourceToleration adds no toleration: add the toleration {toleration}"
            )
        if workload.gpu_nodes and not workload.slices and taint.key == contract.NVIDIA_GPU:
            return (
                f"it requests no {taint.key}, so EKS's ExtendedResourceToleration adds no toleration: "
                f"add the toleration {toleration}"
            )
        if workload.slices and taint.key == contract.NVIDIA_GPU:
            return (
                f"it requests {', '.join(workload.slices)}, whose taints EKS's ExtendedResourceToleration names after "
                f"them, not {taint.key}: add the toleration {toleration}"
            )
        other = [r for r in workload.gpus if r != taint.key]
        if other:
            return f"it requests {other[0]}, not {taint.key}: select a lane with {other[0]}, or request {taint.key}"
        if workload.unheld:
            return (
                f"it claims devices through DRA from {', '.join(workload.unheld)}, which this stack does not hold, and "
                f"EKS's ExtendedResourceToleration does not cover DRA claims: add the toleration {toleration}"
            )
        return f"it requests no GPU: select a lane without GPUs, or request {taint.key}"
    return "add a toleration for it: custom taints are not tolerated automatically"


def untolerated_lane(workload: Workload, lane: LaneView, taints: Sequence[NodeTaint]) -> str:
    which = "its taint" if len(taints) == 1 else "its taints"
    fixes = "; ".join(dict.fromkeys(_fix(t, workload) for t in taints))
    return (
        f"{workload.subject} selects {lane.subject} but does not tolerate {which} "
        f"{', '.join(str(t) for t in taints)} ({fixes})"
    )


def untolerated_gpu_lane(workload: Workload, lanes: Sequence[LaneView]) -> str:
    """A GPU workload whose GPU lanes would take it but for their taints, none of which it tolerates: the fix is
    the toleration (selecting a GPU lane would not land it)."""
    taints = list(dict.fromkeys(t for lane in lanes for t in lane.untolerated(workload.tolerations)))
    fixes = "; ".join(dict.fromkeys(_fix(t, workload) for t in taints))
    named = "; ".join(
        f"{lane.subject}: {', '.join(str(t) for t in lane.untolerated(workload.tolerations))}" for lane in lanes
    )
    return (
        f"{_gpu_asks(workload)}, but does not tolerate the taints of the GPU {'lane' if len(lanes) == 1 else 'lanes'} "
        f"it can land on ({named}) ({fixes})"
    )


def _select_gpu_lane(lanes: Lanes) -> str:
    return ", or ".join(dict.fromkeys(lane.selector() for lane in lanes.gpu_lanes))


def no_gpu_lane(workload: Workload, selected: Sequence[LaneView], lanes: Lanes) -> str:
    """A GPU workload that reaches no GPU lane, with the fix that fits why."""
    asks = _gpu_asks(workload)
    if not lanes.gpu_lanes:
        return f"{asks}, but this rack has no GPU lane (add a Karpenter pool or node group with GPU instance types)"
    tainted = [lane for lane in lanes.gpu_lanes if lane.untolerated(workload.tolerations)]
    if workload.gpu_nodes and tainted:  # its NVIDIA node labels aim it at GPU nodes, whose taints keep it off
        named = "; ".join(
            f"{lane.subject}: {', '.join(str(t) for t in lane.untolerated(workload.tolerations))}" for lane in tainted
        )
        return (
            f"{asks}, but tolerates the taints of no GPU lane ({named}) (select a GPU lane: "
            f"{_select_gpu_lane(lanes)}, and tolerate its taints)"
        )
    if workload.selection.empty:
        return (
            f"{asks} but selects no lane, and the default lane has no GPUs "
            f"(select a GPU lane in nodeSelectorLabels: {_select_gpu_lane(lanes)})"
        )
    fix = f"select a GPU lane: {_select_gpu_lane(lanes)}"
    if not selected:
        return f"{asks}, but no lane of this rack matches its node selection{injected(workload)} ({fix})"
    known = lanes.known_keys
    undeclared = [
        r
        for r in workload.selection.requirements  # (NVIDIA node labels are on GPU nodes: not these)
        if r.key not in known
        and not is_well_known(r.key)
        and r.operator in SELECTING
        and not any(r.key == label.split("=", 1)[0].split(" ", 1)[0] for label in workload.gpu_nodes)
    ]
    if undeclared:
        names = ", ".join(lane.subject for lane in selected)
        return (
            f"{asks}, but it selects {'; '.join(requirement_words(r) for r in undeclared)}{injected(workload)}, which "
            f"no lane of this rack declares (were its nodes to carry it, it could land on {names}, without GPUs) "
            f"({fix})"
        )
    names = ", ".join(lane.subject for lane in selected)
    return (
        f"{asks}, but it selects {names}{injected(workload)}, which {'has' if len(selected) == 1 else 'have'} "
        f"no GPUs ({fix})"
    )


def injected(workload: Workload) -> str:
    """`` (placed by Kueue's queue 'gpu' ...)``: who adds to the selection the words name, if not the pod itself."""
    return f" ({workload.injected})" if workload.injected else ""


def _gpu_asks(workload: Workload) -> str:
    """``service "web" requests 1 nvidia.com/gpu``: what a GPU workload asks for, as it asks."""
    if workload.gpus.get(contract.NVIDIA_GPU):
        return f"{workload.subject} requests {_gpu_words(workload.nvidia_gpus)}"
    if workload.slices:
        return f"{workload.subject} requests {', '.join(workload.slices)} (NVIDIA GPU slices)"
    if workload.shares:
        return f"{workload.subject} asks for a GPU share ({', '.join(workload.shares)})"
    if workload.gpu_nodes and not workload.claims:
        return f"{workload.subject} selects NVIDIA GPU nodes ({', '.join(workload.gpu_nodes)})"
    if workload.mig and not workload.claimed_gpus:
        return (
            f"{workload.subject} claims MIG devices {_mig_words(workload.mig)} through DRA "
            f"({', '.join(workload.claims)})"
        )
    return (
        f"{workload.subject} claims {_gpu_words(workload.claimed_gpus or 1)} through DRA ({', '.join(workload.claims)})"
    )


def _mig_words(profiles: Sequence[str]) -> str:
    return ", ".join(p or "of any profile" for p in dict.fromkeys(profiles))


MIG_FAMILIES = tuple(sorted({f.name for f in instances.FAMILIES.values() if instances.mig_profiles(f.name)}))
"""The EC2 families whose GPUs have MIG (``instances.MIG_PROFILES``)."""


def no_mig(workload: Workload, lanes: Sequence[tuple[LaneView, Selection]]) -> str:
    """A workload asking for MIG slices whose GPU lanes launch no GPU that has them, with each lane's GPUs."""
    wanted = [p for p in dict.fromkeys(workload.mig)]
    said = []
    for lane, chosen in lanes:
        families = sorted(
            {
                f
                for alternative in lane._families(chosen)
                for f in alternative
                if f != wellknown.OTHER_X86 and instances.is_nvidia_gpu_family(f)
            }
        )
        gpus = ", ".join(
            f"{f} ({instances.facts(f).gpu_model}: "
            f"{'MIG ' + ', '.join(instances.mig_profiles(f)) if instances.mig_profiles(f) else 'no MIG'})"
            for f in families[:6]
        )
        said.append(f"{lane.subject} launches {gpus}")
    specific = [p for p in wanted if p]
    fix = (
        f"select a lane of a family whose GPU has {', '.join(specific)}, or ask for a profile its GPUs have"
        if specific
        else f"select a lane of a MIG family ({', '.join(MIG_FAMILIES)})"
    )
    return (
        f"{_gpu_asks(workload)}, but no GPU the lanes it reaches launch has {'them' if len(wanted) > 1 else 'it'}: "
        f"{'; '.join(said)} (MIG exists on A100, H100, H200, B200, B300, GB200, GB300 and RTX PRO Blackwell GPUs, "
        f"each with its own profiles; {fix})"
    )


def well_known_reason(selection: Selection, lane: LaneView) -> str:
    """Why none of a lane's nodes can meet the pod's well-known requirements (arch, capacity type, OS,
    instance labels), in the affinity terms that select the lane."""
    terms = selection.terms if selection.terms is not None else ((),)
    for term in terms:
        for req in selection.node_selector + tuple(term):
            if not lane._capacity_holds((req,)) and req.key == OS_KEY:
                return f"it needs {requirement_words(req)}, and the lane's nodes run {', '.join(lane.os)}"
            if not lane._capacity_holds((req,)) and req.key == RESERVATION_ID_KEY:
                carried = [v for v in lane.reservation_ids_carried() or [] if v is not None]
                into = f"into {', '.join(carried)} only" if carried else "into no capacity reservation"
                return f"it needs {requirement_words(req)}, and the lane launches {into}"
            if not lane._capacity_holds((req,)):
                offered = ", ".join(v for _, values in lane.capacity for v in values)
                return f"it needs {requirement_words(req)}, and the lane launches capacity type {offered} only"
            if lane.requirements and not wellknown.candidates(lane.requirements + as_wellknown((req,))):
                return f"it needs {requirement_words(req)}, and the lane launches {_launches_words(lane)} only"
    return "no instance the lane can launch meets its node selection"


def _launches_words(lane: LaneView) -> str:
    """What a lane launches, as a reader checks it against a pod's selection: its families and architectures."""
    families = [f for f in wellknown.candidates(lane.requirements) if f != wellknown.OTHER_X86]
    arches = sorted({wellknown.K8S_ARCH.get(a, a) for a in wellknown.architectures(lane.requirements)})
    if families and len(families) <= 8 and wellknown.OTHER_X86 not in wellknown.candidates(lane.requirements):
        return f"{', '.join(families)} ({'/'.join(arches)})"
    return f"{'/'.join(arches)} instances of other kinds"


def requirement_words(req: scheduling.PodRequirement) -> str:
    if req.operator == "In" and len(req.values) == 1:
        return f"{req.key}={req.values[0]}"
    return str(wellknown.Requirement(req.key, req.operator, req.values))
