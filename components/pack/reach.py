"""Fit and reach: whether a workload lands on the lane it selects (``workloads-reach-their-lane``), fits one of
its nodes (requests within the allocatable of an instance type it can launch, less the lane's DaemonSets, within
a pool's limits; GPUs per node), and does not squat on a lane that is not its own."""

from __future__ import annotations


from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence

from .. import contract
from ..facts import instances, wellknown
from . import checks, fit, overlays, scheduling
from .scheduling import Selection
from .laneconfig import config_findings, configured_lanes
from .lanemodel import (
    Finding,
    GPU_RESOURCES,
    LaneView,
    Lanes,
    NFD_PREFIX,
    OS_KEY,
    SELECTING,
    Unknown,
    is_well_known,
    named_lanes,
)
from .lanesource import EKS_NODEGROUP_LABEL, read_lanes
from .pods import Claim, Workload, claimed, read_workload, read_workloads, related_objects, runtime_classes
from .wording import (
    injected,
    missing_lane,
    never_runs,
    no_gpu_lane,
    no_mig,
    requirement_words,
    untolerated_gpu_lane,
    untolerated_lane,
    well_known_reason,
)


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
    return [
        f"{fit.words(r, has.get(r, 0))} allocatable < {fit.words(r, asks[r]).split(' ', 1)[1]} requested"
        for r in asks
        if asks[r] > has.get(r, 0) + 1e-9
    ]


def _gpus_of(itype: instances.InstanceType, resource: str) -> int:
    vendor = instances.facts(itype.name).gpu
    return itype.gpus if contract.gpu_resource(vendor) == resource and vendor else 0


def fit_on(workload: Workload, lane: LaneView, overhead: Mapping[str, float], selection: Selection) -> Fit:
    """Whether one node of ``lane`` has room for the pod, after kube-reserved, eviction thresholds and
    the lane's DaemonSets (``overhead``), on the instance types its ``selection`` (the affinity terms
    that land it on ``lane``) allows."""
    asks = workload.asks()
    if not lane.sized:
        return Fit(True)
    if not asks:  # it needs a node, not room on one: refused only where the pool's limits leave no node to launch
        if lane.requirements and lane.limits:
            types, unsized, capped = lane.launchable(selection)
            if capped and not types and not unsized:
                return _no_type_within_limits(lane)
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
        return Fit(
            False,
            short=f"its largest node (as the policy config states it) has {', '.join(missing)}",
            rank=(len(missing),),
        )
    types, unsized, capped = lane.launchable(selection)
    best: Optional[tuple[tuple[float, ...], instances.InstanceType, list[str]]] = None
    for itype in types:
        free = fit.allocatable(itype, lane.root_gib).less(overhead)
        has = {r: float(free.get(r)) for r in fit.SIZED}
        has.update(
            {
                r: float(_gpus_of(itype, r) if lane.max_gpus is None else min(_gpus_of(itype, r), lane.max_gpus))
                for r in GPU_RESOURCES
            }
        )  # the policy config's maxGpusPerNode caps what its types have
        missing = _short_words(asks, has)
        if not missing:
            return Fit(True)
        rank: tuple[float, ...] = (len(missing), -itype.gpus, -itype.vcpus, -itype.memory_mib)
        if best is None or rank < best[0]:
            best = (rank, itype, missing)
    if unsized:
        return Fit(False, unknown=f"the instance table does not size {', '.join(unsized[:5])}")
    if best is None:
        if capped:
            return _no_type_within_limits(lane)
        # its families admit the pod, but no type of them meets its per-type labels (type, size, cpu, memory, GPUs)
        return Fit(
            False,
            short="no instance type it can launch meets the pod's node selection "
            f"({'; '.join(requirement_words(r) for r in _type_requirements(selection)) or 'its instance labels'})",
            rank=(8,),
            fix="select instance types the lane launches",
        )
    rank, itype, missing = best
    why = (
        f"the nearest instance type it can launch for this pod, {itype.name}, has {', '.join(missing)} "
        f"(after kube-reserved{',' if any(overhead.get(r) for r in fit.SIZED) else ' and'} eviction thresholds"
        f"{_overhead_words(overhead)})"
    )
    if capped:
        why += f"; its limits ({_limit_words(lane)}) rule out {', '.join(t.name for t in capped[:3])}"
    if lane.max_gpus is not None and any(r in asks and _gpus_of(itype, r) > lane.max_gpus for r in GPU_RESOURCES):
        why += f"; the policy config gives it at most {lane.max_gpus} GPUs per node (maxGpusPerNode)"
    return Fit(False, short=why, rank=rank)


def _no_type_within_limits(lane: LaneView) -> Fit:
    """A pool whose limits leave no instance type it can launch (``nodes: 0``, or every type adds more than a limit
    allows): Karpenter launches no node of it, whatever a pod requests."""
    return Fit(
        False,
        short=f"its limits ({_limit_words(lane)}) leave no instance type it can launch",
        rank=(9,),
        fix="raise the pool's limits, or select another lane",
    )


def _type_requirements(selection: Selection) -> list[scheduling.PodRequirement]:
    """The pod's requirements on well-known instance labels (``node.kubernetes.io/instance-type``,
    ``karpenter.k8s.aws/instance-*``), as it wrote them."""
    terms = selection.terms if selection.terms is not None else ((),)
    found = []
    for req in selection.node_selector + tuple(r for term in terms for r in term):
        if (
            req.key == wellknown.TYPE_KEY
            or req.key.startswith((wellknown.KARPENTER_PREFIX, wellknown.AUTO_MODE_PREFIX))
        ) and req not in found:
            found.append(req)
    return found


def _overhead_words(overhead: Mapping[str, float]) -> str:
    used = [fit.words(r, overhead[r]) for r in fit.SIZED if overhead.get(r)]
    return f" and its DaemonSets' {', '.join(used)}" if used else ""


def _limit_words(lane: LaneView) -> str:
    return ", ".join(fit.words(r, v) for r, v in lane.limits)


def _fit_fix(workload: Workload) -> str:
    if workload.subject.startswith("service "):
        return "lower scale.cpu/scale.memory/scale.gpu, or select a lane with larger instances"
    return "lower the pod's requests, or select (or give the lane) larger instance types"


def reach_problems(
    workload: Workload, lanes: Lanes, overheads: Optional[Mapping[int, Mapping[str, float]]] = None
) -> list[str]:
    """What keeps ``workload`` from ever landing where it asks to (empty: it can). Fit problems that
    cannot be decided are left to ``fit_findings``. A pool of the stack whose nodes never run (``Lanes.never``)
    is judged as a pool the stack lacks; a workload that selects one is told why it never runs, and one that
    selects no other lane is refused for it."""
    problems = _reach_problems(workload, lanes)
    never = [lane for lane in lanes.never if _selects(workload, lane, lanes.known_keys)]
    if not never:
        return problems
    if problems:
        return [f"{problem}; {never_runs(never)}" for problem in problems]
    known = lanes.known_keys
    if workload.kind != "DaemonSet" and not any(
        workload.selection.on(lane.labels, known) is not None for lane in lanes.lanes
    ):
        # (a DaemonSet that selects no node runs no pod: nothing waits)
        return [
            f"{workload.subject} selects no lane that runs: {never_runs(never)} (fix the pool, or select another lane)"
        ]
    return problems


def _selects(workload: Workload, lane: LaneView, known: frozenset[str]) -> bool:
    """Whether the workload picks ``lane`` by a label the lane declares (not only by labels every lane meets)."""
    return workload.selection.on(lane.labels, known) is not None and any(
        r.operator in SELECTING and not r.field and r.key in lane.labels and r.holds(lane.labels)
        for r in workload.selection.requirements
    )


def _reach_problems(workload: Workload, lanes: Lanes) -> list[str]:
    if workload.selection.terms is not None and not any(workload.selection.terms):
        # an empty term matches no node (the scheduler's nodeaffinity helpers), so no term of it matches any
        return [
            f"{workload.subject} never schedules: every term of its required node affinity is empty, and an "
            f"empty term matches no node (give each term matchExpressions, or drop the required node affinity)"
        ]
    named = named_lanes(workload.selection)
    pools = {lane.name for lane in lanes.lanes if lane.kind == "pool"}
    known = lanes.known_keys
    # per lane, the affinity terms that select it by its labels, then those its nodes meet
    by_labels = [(lane, on) for lane in lanes.lanes if (on := workload.selection.on(lane.labels, known)) is not None]
    problems = [
        missing_lane(
            workload.subject, key, value, lanes.existing(key), key == contract.NODEPOOL_LABEL and value in pools
        )
        for key, value in named
        if value not in lanes.existing(key)
    ]
    if (
        problems and not by_labels
    ):  # a lane it names is missing, and no other it offers (terms and values are ORed) exists
        return problems
    if _names_other_node_group(workload, lanes):
        return []
    picks = [r for r in workload.selection.requirements if r.key in known and r.operator == "In" and not r.field]
    if (
        not by_labels
        and len(picks) > 1
        and workload.kind != "DaemonSet"
        and all(any(r.holds(lane.labels) for lane in lanes.lanes) for r in picks)
    ):
        # each label it picks is some lane's of this stack (not another stack's), but no lane has them all
        wanted = "; ".join(requirement_words(r) for r in picks)
        return [
            f"{workload.subject} selects no lane: no lane of this rack carries all of its node selection "
            f"({wanted}), and the node selector and affinity must all hold (select one lane)"
        ]
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
        # a GPU lane would take it but for its GPU taint, which ExtendedResourceToleration does not cover for how it
        # asks (a MIG slice, a DRA claim, a share, NVIDIA node labels): tolerating that taint is the fix
        tainted = [
            lane
            for lane, chosen in landing
            if lane.gpu_for(chosen)
            and (taints := lane.untolerated(workload.tolerations))
            and all(t.key in GPU_RESOURCES for t in taints)
        ]
        if tainted:
            return [untolerated_gpu_lane(workload, tainted)]
        return [no_gpu_lane(workload, [lane for lane, chosen in landing if not lane.gpu_for(chosen)], lanes)]
    if workload.mig:
        serving = [(lane, chosen) for lane, chosen in reachable if lane.gpu_for(chosen)]
        if serving and not any(lane.mig_for(chosen, workload.mig) for lane, chosen in serving):
            return [no_mig(workload, serving)]
    if not selected and by_labels and workload.kind != "DaemonSet":  # the labels match, the nodes' do not
        # (a DaemonSet that selects no node runs no pod: nothing waits, e.g. an arm64 or Windows agent)
        # the nearest: a lane it names, else one whose taints it tolerates (not a dedicated lane it never aimed at)
        lane, on = min(
            by_labels,
            key=lambda pair: (
                not any(pair[0].labels.get(k) == v for k, v in named),
                bool(pair[0].untolerated(workload.tolerations)),
            ),
        )
        return [
            f"{workload.subject} fits no lane: the nearest, {lane.subject}, cannot take it: "
            f"{well_known_reason(on, lane)}{injected(workload)} (select a lane that offers it, or add one)"
        ]
    return []


def _aims_at(workload: Workload, known: frozenset[str]) -> bool:
    """Whether the workload picks nodes by what the stack's lanes declare (``In``, ``Exists``, ``Gt``, ``Lt`` on a
    lane label or a well-known label their instances decide), rather than only ruling lanes out (``DoesNotExist``,
    ``NotIn``), asking for labels no lane declares, or for Linux (every lane's): such a selection, like the
    Karpenter chart's own (``karpenter.sh/nodepool DoesNotExist``), aims at nodes the stack may not hold."""
    return any(
        r.operator in SELECTING + ("Lt",)
        and not r.field
        and r.key != OS_KEY
        and (r.key in known or is_well_known(r.key))
        for r in workload.selection.requirements
    )


def _names_other_node_group(workload: Workload, lanes: Lanes) -> bool:
    """Whether it requires nodes of an EKS node group by name (EKS labels every node with its group's name)
    that is none of the stack's: its nodes come from elsewhere (``eks.amazonaws.com/nodegroup: system``)."""
    groups = {lane.name for lane in lanes.lanes if lane.kind == "node group"}
    return any(
        r.key == EKS_NODEGROUP_LABEL and r.operator == "In" and not r.field and not set(r.values) & groups
        for r in workload.selection.requirements
    )


def fit_problems(
    workload: Workload, lanes: Lanes, overheads: Mapping[int, Mapping[str, float]]
) -> tuple[list[str], list[str]]:
    """(refusals, cannot-tell) for a workload that reaches lanes: does one node of one of them hold it?"""
    known = lanes.known_keys
    candidates = [
        (lane, chosen)
        for lane in lanes.lanes
        if (
            chosen := lane.reached_by(
                workload.selection, _overhead_keys(workload, lane, known) if workload.kind == "DaemonSet" else known
            )
        )
        is not None
        and not lane.untolerated(workload.tolerations)
        and (not workload.wants_gpu or lane.gpu_for(chosen))
    ]
    if not candidates:
        return [], []
    if workload.kind == "DaemonSet" and not workload.asks():  # its pods take no room, and launch no node
        return [], []
    verdicts = [(lane, fit_on(workload, lane, overheads.get(id(lane), {}), chosen)) for lane, chosen in candidates]
    if workload.kind == "DaemonSet":  # one pod on every node of every lane it lands on: each lane must hold it
        asks = ", ".join(fit.words(r, v) for r, v in workload.asks().items())
        return (
            [
                f"{workload.subject} runs a pod on every node of {lane.subject} and fits none: it requests {asks}; "
                f"{verdict.short} (lower its requests, or keep it off the lane with a node selector)"
                for lane, verdict in verdicts
                if not verdict.fits and not verdict.unknown
            ],
            [
                f"{workload.subject}: cannot verify that it fits {lane.subject}: {v.unknown}"
                for lane, v in verdicts
                if v.unknown
            ],
        )
    if any(v.fits for _, v in verdicts):
        return [], []
    unsure = [
        f"{workload.subject}: cannot verify that it fits {lane.subject}: {v.unknown}"
        for lane, v in verdicts
        if v.unknown
    ]
    if unsure:
        return [], unsure
    lane, verdict = min(verdicts, key=lambda pair: pair[1].rank)
    asks = ", ".join(fit.words(r, v) for r, v in workload.asks().items()) or "nothing"
    return [
        f"{workload.subject} fits no lane: it requests {asks}; the nearest, {lane.subject}: {verdict.short} "
        f"({verdict.fix or _fit_fix(workload)})"
    ], []


def lane_overheads(workloads: Sequence[Workload], lanes: Lanes) -> dict[int, dict[str, float]]:
    """Per lane (by id), what the DaemonSets that land on its nodes request on each node."""
    known = lanes.known_keys
    found: dict[int, dict[str, float]] = {}
    daemonsets = [w for w in workloads if w.kind == "DaemonSet" and w.requests]
    for lane in lanes.lanes:
        total: dict[str, float] = {}
        for ds in daemonsets:
            if lane.reached_by(ds.selection, _overhead_keys(ds, lane, known)) is not None and not lane.untolerated(
                ds.tolerations
            ):
                for r, v in ds.requests.items():
                    total[r] = total.get(r, 0) + v
        found[id(lane)] = total
    return found


def _overhead_keys(ds: Workload, lane: LaneView, known: frozenset[str]) -> frozenset[str]:
    """The label keys a DaemonSet's selection is judged on for ``lane``'s overhead. Karpenter counts a
    DaemonSet on a pool's nodes only when the pool defines every custom label it requires ("custom
    labels must intersect, but if not defined are denied", ``Requirements.Compatible``): for a pool, its
    own keys too. A node group's nodes may carry labels set after they join (NFD's), so it stays lenient."""
    return strict_keys(ds, known) if lane.kind == "pool" else known


def strict_keys(workload: Workload, known: frozenset[str]) -> frozenset[str]:
    """``known`` and the custom label keys the workload requires: judged strictly, a label no lane declares
    is not there."""
    return known | frozenset(r.key for r in workload.selection.requirements if not r.field and not is_well_known(r.key))


def squats(workload: Workload, lanes: Lanes) -> list[str]:
    """Advisory: a workload that requests no GPU but tolerates a GPU lane's GPU taint, and can land
    there, can take an expensive node. DaemonSets run one pod per node and take none (the device plugin)."""
    if (
        workload.kind == "DaemonSet"
        or workload.gpus
        or workload.claims
        or workload.slices
        or workload.unheld
        or workload.shares
        or workload.gpu_nodes
    ):
        return []  # (a claim the stack does not hold may be a GPU's)
    if workload.refused or workload.broken_claims:  # the API server refuses it: no pod of it takes any node
        return []
    known = lanes.known_keys
    reached = [
        lane
        for lane in lanes.gpu_lanes
        if lane.gpu_taints
        and (chosen := lane.reached_by(workload.selection, known)) is not None
        and lane.gpu_for(chosen)
        and not lane.untolerated(workload.tolerations)
    ]
    if not reached:
        return []
    key = reached[0].gpu_taints[0].key
    return [
        f"{workload.subject} requests no GPU but tolerates the {key} taint of "
        f"{', '.join(lane.subject for lane in reached)}, so it can take a GPU node "
        f"(drop the toleration, or request {key})"
    ]


def _judged(workload: Workload) -> bool:
    """Workloads the rack's lanes decide something about: they select, tolerate, ask for GPUs or for room."""
    return (
        not workload.selection.empty
        or bool(workload.tolerations)
        or workload.wants_gpu
        or any(r in workload.requests for r in fit.SIZED)
    )


def _refused(subject: str, problem: str) -> str:
    return f"{subject}: {problem}; Kubernetes refuses such a pod, so none is ever created"


def _no_lanes(workload: Workload) -> str:
    return (
        f"{workload.subject}: cannot verify that it can land where it asks: this stack declares no lanes "
        f"(Karpenter NodePools, EKS node groups) and the policy config names none (set lanes: "
        f"[{{name, labels, taints, gpu}}], e.g. from the rack stack's lanes output)"
    )


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
    claims, runtimes, related = claimed(resources), runtime_classes(resources, unknown), related_objects(resources)
    workloads: list[Workload] = []
    unsure: list[Finding] = []
    for res in resources:
        try:
            found = read_workloads(res, claims, runtimes, related)
        except unknown as exc:
            unsure.append(
                Finding(
                    f"{res.type.rsplit(':', 1)[-1].lower()} '{res.name}': {getattr(exc, 'message', exc)}",
                    res.urn,
                    certain=False,
                )
            )
            continue
        workloads += found
    return Survey(lanes, workloads, unsure, lane_overheads(workloads, lanes), claims)


def judged_survey(
    resources: Sequence[checks.StackResource],
    config: Mapping[str, Any],
    unknown: Unknown,
    whole: Optional[Survey] = None,
) -> tuple[Lanes, list[Workload], list[Finding]]:
    found = whole or survey(resources, config, unknown)
    return found.lanes, [w for w in found.workloads if _judged(w)], list(found.unsure)


def findings(workload: Workload, problems: Iterable[str], lanes: Lanes) -> Iterator[Finding]:
    for problem in problems:
        if lanes.unknown:  # a lane not known yet could be the one that fits
            yield Finding(
                f"{problem} (not certain: {', '.join(lanes.unknown)} not known during preview)",
                workload.urn,
                certain=False,
            )
        else:
            yield Finding(problem, workload.urn)


def _own_overheads(
    workload: Workload, overheads: Mapping[int, Mapping[str, float]]
) -> Mapping[int, Mapping[str, float]]:
    """A DaemonSet is judged against what the other DaemonSets leave."""
    if workload.kind != "DaemonSet":
        return overheads
    return {lane: {r: v - workload.requests.get(r, 0) for r, v in used.items()} for lane, used in overheads.items()}


def reach(
    resources: Sequence[checks.StackResource],
    config: Mapping[str, Any],
    unknown: Unknown = (),
    whole: Optional[Survey] = None,
) -> list[Finding]:
    """Policy ``workloads-reach-their-lane``: every pod template can land on a lane it selects, a GPU
    workload on a GPU lane, and one node of that lane has room for it. Config: ``lanes``."""
    found = config_findings(config)
    if found:
        return found
    whole = whole or survey(resources, config, unknown)
    lanes = whole.lanes
    found = list(whole.unsure)
    ignored = overlays.unapplied(resources, unknown)
    if ignored:  # said once, by the policy whose fit the overlays would change
        found.append(
            Finding(ignored, next(r.urn for r in resources if overlays.OVERLAY_TYPE.fullmatch(r.type)), certain=False)
        )
    found += [
        Finding(f"{kind.lower()} '{name}': {claim.refused}; Kubernetes refuses it", claim.urn)
        for (kind, name), claim in whole.claims.items()
        if claim.refused
    ]
    for workload in whole.workloads:
        if workload.refused or workload.broken_claims:  # no pod of it ever runs: where it would land is moot
            found.extend(Finding(_refused(workload.subject, problem), workload.urn) for problem in workload.refused)
            found.extend(Finding(f"{workload.subject}: {problem}", workload.urn) for problem in workload.broken_claims)
            continue
        if workload.unheld:  # what it claims is not known: judged as far as the rest of it goes
            found.append(
                Finding(
                    f"{workload.subject}: cannot verify what its DRA claims ask for: {', '.join(workload.unheld)} "
                    f"{'is' if len(workload.unheld) == 1 else 'are'} not in this stack (declare "
                    f"{'it' if len(workload.unheld) == 1 else 'them'} in this stack to have "
                    f"{'it' if len(workload.unheld) == 1 else 'them'} judged)",
                    workload.urn,
                    certain=False,
                )
            )
        if not _judged(workload):
            continue
        if not lanes.lanes and not lanes.unknown and not lanes.never:
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
        found.extend(findings(workload, problems, lanes))
    return found


def outside_the_rack(workload: Workload, lanes: Lanes) -> str:
    """A workload (not a DaemonSet) every way of landing of which requires a label no lane of the stack declares
    (``team: ml``): the rack's nodes carry only what their lanes declare (a pool's template labels, a node
    group's labels) and the well-known labels, so it lands only on nodes from elsewhere, if any. Not a refusal
    (such nodes may exist), but said. Labels node agents write (NFD's, NVIDIA's) are not counted."""
    if workload.kind == "DaemonSet" or not lanes.lanes:
        return ""
    known = lanes.known_keys

    def undeclared(requirements: Iterable[scheduling.PodRequirement]) -> list[scheduling.PodRequirement]:
        return [
            r
            for r in requirements
            if r.operator in SELECTING
            and not r.field
            and r.key not in known
            and not is_well_known(r.key)
            and not r.key.startswith((NFD_PREFIX, "nvidia.com/"))
        ]

    terms = workload.selection.terms if workload.selection.terms is not None else ((),)
    per_term = [undeclared(workload.selection.node_selector) + undeclared(term) for term in terms]
    if not per_term or not all(per_term):
        return ""
    said = "; ".join(dict.fromkeys(requirement_words(r) for reqs in per_term for r in reqs))
    selectors = ", ".join(list(dict.fromkeys(lane.selector() for lane in lanes.lanes))[:5])
    return (
        f"{workload.subject} selects {said}{injected(workload)}, which no lane of this rack declares, so it can land "
        f"only "
        f"on nodes from "
        f"outside the rack (name them in the policy config's lanes to have it judged, or select a lane of the rack: "
        f"{selectors})"
    )


def pod_problems(subject: str, pod: Mapping[str, Any], lanes: Sequence[Mapping[str, Any]]) -> list[str]:
    """A pod spec against lanes given as the policy config gives them (the rack's ``lanes``): what the
    policy would refuse, in its words (the components check their own pods with it)."""
    known = Lanes(tuple(configured_lanes({"lanes": list(lanes)})))
    workload = read_workload(checks.StackResource("kubernetes:core/v1:Pod", "pod", "", {"spec": pod}))
    assert workload is not None
    if workload.refused:
        return [_refused(subject, problem) for problem in workload.refused]
    workload = Workload(
        subject, workload.kind, "", workload.selection, workload.tolerations, workload.gpus, workload.requests
    )
    problems = reach_problems(workload, known)
    if not problems:
        problems, _ = fit_problems(workload, known, {})
    return problems
