"""Judge a plan's steps for what they do to the rack's lanes: the checks ``preview --state`` and
``guard`` (over ``pulumi preview --json``) both run, on the same ``GuardStep`` list (``guard_steps``).

- ``lane-removal`` (mandatory): a step deletes or replaces a lane: a Karpenter NodePool or its
  EC2NodeClass, a managed node group (``aws:eks/nodeGroup:NodeGroup``, or the pulumi-eks /
  rack component around one), or a launch template when that replaces its group.
  ``allow`` names the lanes whose removal is intended. A canary lane (marked ``mixed-os-racks/canary-of``
  by the components: an annotation on its NodePool and EC2NodeClass, a tag on its node group) is
  removed when its candidate is dropped or promoted: that is an advisory, never refused.
- ``lane-rollout`` (advisory): an update that makes every node of a lane be replaced: Karpenter
  marks nodes drifted when their EC2NodeClass's hashed fields or AMI selection change, or their
  NodePool's template; EKS rolls a node group whose launch template version, Kubernetes version or
  release version changes.

What the lanes' owners do (read upstream):

- Karpenter (aws/karpenter-provider-aws ``docs/concepts/disruption.md``): drifted nodes are replaced
  gracefully (the replacement first, then the drain), at most as many at a time as the NodePool's
  disruption budgets allow (``spec.disruption.budgets``; without one, ``nodes: 10%``; a budget may
  be limited to some ``reasons``, ``Drifted`` among them). A NodeClaim is owned by its NodePool
  (``blockOwnerDeletion``), so deleting the pool deletes every NodeClaim at once, and each one's
  termination finalizer cordons, drains and terminates its node: budgets bound disruption, not a
  deletion. The EC2NodeClass hash covers ``userData``, ``blockDeviceMappings``, ``metadataOptions``,
  ``role``, ``instanceProfile``, ``tags``, ``kubelet``, ...; ``amiSelectorTerms`` (and ``amiFamily``
  through the alias) drift nodes whose AMI is no longer selected.
- EKS (User Guide, "Delete a managed node group"): deleting a group sets its Auto Scaling group's
  minimum, maximum and desired size to zero; each instance is drained before it is terminated, and
  forced after 5 minutes. ("Understand each phase of node updates"): a new launch template version
  or Kubernetes/AMI version replaces nodes in batches of ``updateConfig.maxUnavailable`` (or
  ``maxUnavailablePercentage``), 1 by default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Protocol

from .. import contract
from ..contract import CANARY_OF
from ..spec.base import shown
from .forcenew import in_one_order, related

PACK = "change-safety"
LANE_REMOVAL = "lane-removal"
LANE_ROLLOUT = "lane-rollout"

GROUP_COMPONENTS = (contract.MANAGED_NODE_GROUP, *contract.NODE_GROUP_TYPES)
KARPENTER_DEFAULT_BUDGET = "10%"
EKS_DEFAULT_MAX_UNAVAILABLE = 1

NODECLASS_ROLLING = (
    "spec.amiSelectorTerms",
    "spec.amiFamily",
    "spec.userData",
    "spec.blockDeviceMappings",
    "spec.metadataOptions",
    "spec.role",
    "spec.instanceProfile",
    "spec.tags",
    "spec.kubelet",
    "spec.associatePublicIPAddress",
    "spec.instanceStorePolicy",
    "spec.detailedMonitoring",
    "spec.networkInterfaces",
    "spec.cpuOptions",
    "spec.context",
    "spec.connectionTracking",
    "spec.placementGroupSelector",
)
"""What drifts every node of a class's pools: its AMI selection (``AMIDrift``) and the fields its hash covers
(karpenter-provider-aws ``pkg/apis/v1/ec2nodeclass.go``: every ``spec`` field but those tagged
``hash:"ignore"``, and the kubelet configuration; ``pkg/cloudprovider/drift.go``, ``NodeClassDrift``)."""
NODECLASS_SELECTING = {
    "spec.subnetSelectorTerms": "subnet",
    "spec.securityGroupSelectorTerms": "security groups",
    "spec.capacityReservationSelectorTerms": "capacity reservation",
}
"""Selections that drift only the nodes they no longer select (``drift.go``: ``SubnetDrift`` when a node's subnet
is not among the class's resolved subnets, ``SecurityGroupDrift`` when its groups differ from the resolved
ones, ``CapacityReservationDrift``)."""
NODEPOOL_ROLLING = (
    "spec.template.metadata",
    "spec.template.spec.taints",
    "spec.template.spec.startupTaints",
    "spec.template.spec.nodeClassRef",
    "spec.template.spec.expireAfter",
    "spec.template.spec.terminationGracePeriod",
)
"""What a NodePool's drift hash covers (karpenter ``NodePool.Hash``: its template, less the requirements)."""
NODEPOOL_REQUIREMENTS = "spec.template.spec.requirements"
"""Checked for drift on its own (``RequirementsDrifted``): the nodes whose labels the new requirements refuse."""
NODEGROUP_ROLLING = ("launchTemplate.version", "version", "releaseVersion")


@dataclass
class GuardStep:
    """One step of a plan as the lane checks read it, whichever tool made the plan (the offline plan's ``PlanStep``,
    ``guard_steps``; a step of ``pulumi preview --json``, ``previewjson``): ``old``/``new`` are resource states
    (``type``, ``inputs``, ``parent``, ``propertyDependencies``), ``diff`` the changed input paths."""

    op: str
    urn: str
    type: str
    old: Optional[dict[str, Any]] = None
    new: Optional[dict[str, Any]] = None
    diff: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return shown(urn_name(self.urn))

    def state(self) -> dict[str, Any]:
        return self.new or self.old or {}

    def inputs(self, which: str = "either") -> dict[str, Any]:
        state = (
            {"old": self.old, "new": self.new}.get(which) or (self.new if which == "either" else None) or self.old or {}
        )
        inputs = state.get("inputs") if isinstance(state, dict) else None
        return inputs if isinstance(inputs, dict) else {}


class PlannedStep(Protocol):
    """A step of the offline plan (``plan.PlanStep``), as ``guard_steps`` reads it."""

    op: str
    urn: str
    type: str
    diff: list[str]

    def old_state(self) -> Optional[dict[str, Any]]: ...

    def new_state(self) -> Optional[dict[str, Any]]: ...


def guard_steps(steps: Iterable[PlannedStep]) -> list[GuardStep]:
    """The offline plan's steps (``preview --state``, ``fleet --states``) as the lane checks read them."""
    return [GuardStep(step.op, step.urn, step.type, step.old_state(), step.new_state(), step.diff) for step in steps]


def is_nodepool(type_: str) -> bool:
    return type_.startswith("kubernetes:karpenter.sh/") and type_.endswith(":NodePool")


def is_nodeclass(type_: str) -> bool:
    return type_.startswith("kubernetes:karpenter.k8s.aws/") and type_.endswith(":EC2NodeClass")


def _get(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def canary_of(step: GuardStep) -> Optional[str]:
    """The lane a canary's step belongs to, from the mark the components put on it before the change (a NodePool's
    or EC2NodeClass's annotation, a node group's tag), or None for a step of no canary."""
    inputs = step.inputs("old")
    mark = (
        _get(inputs, "metadata", "annotations", CANARY_OF)
        if (is_nodepool(step.type) or is_nodeclass(step.type))
        else _get(inputs, "tags", CANARY_OF)
    )
    return shown(mark) if isinstance(mark, str) and mark else None


def _k8s_name(step: GuardStep, which: str = "either") -> str:
    name = _get(step.inputs(which), "metadata", "name")
    return shown(name) if isinstance(name, str) and name else step.name


def _number(value: Any) -> Optional[int]:
    """A count as JSON has it, or None for anything else (a bool, text, a number past a float's range)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value)


# ---- what happens to a lane's nodes ----------------------------------------------------------------------


def budget_text(pool: Optional[GuardStep]) -> str:
    """How many of a pool's nodes Karpenter disrupts at a time for drift, from the pool's budgets."""
    budgets = _get(pool.inputs("new") if pool else {}, "spec", "disruption", "budgets")
    applicable = []
    for budget in budgets if isinstance(budgets, list) else []:
        # a budget limits every reason when it names none (``reasons`` left out), else only those it lists:
        # ``reasons: []`` limits none (karpenter ``nodepool.go``: ``budget.Reasons == nil || lo.Contains(...)``)
        reasons = budget.get("reasons") if isinstance(budget, dict) else None
        if isinstance(budget, dict) and (reasons is None or (isinstance(reasons, list) and "Drifted" in reasons)):
            applicable.append(budget)
    if isinstance(budgets, list) and pool is not None and not applicable:
        # Karpenter starts from no limit and takes the least of the budgets for the reason (nodepool.go,
        # GetAllowedDisruptionsByReason); the CRD's 10% default applies only when budgets are left out
        return (
            "all the pool's nodes at once (its disruption budgets do not cover drift: each one limits only "
            "the reasons it lists, and an empty list limits nothing)"
        )
    if not applicable:
        source = (
            "Karpenter's default budget"
            if pool is not None
            else "Karpenter's default budget: the NodePool is not among the steps, so its own budget is not known; "
            "`pulumi preview --json --show-sames` includes it"
        )
        return f"{KARPENTER_DEFAULT_BUDGET} of the pool's nodes at a time (rounded up; {source})"
    parts = []
    for budget in applicable:
        nodes = str(budget.get("nodes", KARPENTER_DEFAULT_BUDGET))
        amount = f"{nodes} of the pool's nodes" if nodes.endswith("%") else f"{nodes} node{'s' if nodes != '1' else ''}"
        if budget.get("schedule"):
            amount += f" (while its schedule {budget['schedule']!r} is active for {budget.get('duration', '?')})"
        parts.append(amount)
    text = parts[0] if len(parts) == 1 else "the smallest of " + ", ".join(parts)
    unbounded = (
        ""
        if any(not b.get("schedule") for b in applicable)
        else ("; outside its schedules, all the pool's nodes at once (an inactive budget limits nothing)")
    )
    return f"{text} at a time (the pool's disruption budget){unbounded}"


def max_unavailable_text(group: GuardStep) -> str:
    update = _get(group.inputs("new"), "updateConfig") or {}
    number = _number(_get(update, "maxUnavailable"))
    if number:
        return f"{number} node{'s' if number != 1 else ''} at a time (its updateConfig.maxUnavailable)"
    percent = _number(_get(update, "maxUnavailablePercentage"))
    if percent:
        return f"{percent}% of its nodes at a time (its updateConfig.maxUnavailablePercentage)"
    return f"{EKS_DEFAULT_MAX_UNAVAILABLE} node at a time (EKS's default maxUnavailable)"


def _named(group: GuardStep) -> bool:
    """The group's name is the user's (not auto-named by the provider: not in ``__defaults``), so a
    replacement must delete it first (pulumi-terraform-bridge's delete-before-replace rule)."""
    new = group.inputs("new")
    defaults = new.get("__defaults") or group.inputs("old").get("__defaults") or []
    return isinstance(new.get("nodeGroupName"), str) and "nodeGroupName" not in (
        defaults if isinstance(defaults, list) else []
    )


def _group_size(group: GuardStep) -> str:
    for which in ("old", "new"):
        size = _number(_get(group.inputs(which), "scalingConfig", "desiredSize"))
        if size is not None:
            return f"{size} node{'s' if size != 1 else ''}"
    return "nodes"


# ---- lanes ------------------------------------------------------------------------------------------------


@dataclass
class TouchedLane:
    """A lane a plan's step removes or rolls: what the verdict calls it, and the step that touches it."""

    kind: str
    """``Karpenter`` or ``node group``: how the verdict names the lane."""
    name: str
    aliases: set[str]
    """Every name the lane goes by (its resources', its label's, its component's): what ``allow`` may name."""
    step: GuardStep


def _class_of(pool: GuardStep, which: str) -> Optional[str]:
    name = _get(pool.inputs(which), "spec", "template", "spec", "nodeClassRef", "name")
    return name if isinstance(name, str) else None


def _pools_by_class(steps: Iterable[GuardStep]) -> dict[str, list[GuardStep]]:
    """Class name -> the NodePool steps that name it, before or after (read once: a plan may hold
    thousands of pools)."""
    found: dict[str, list[GuardStep]] = {}
    for step in steps:
        if is_nodepool(step.type):
            for name in dict.fromkeys((_class_of(step, "old"), _class_of(step, "new"))):
                if name is not None:
                    found.setdefault(name, []).append(step)
    return found


def _group_lane(step: GuardStep, ancestors: list[str]) -> TouchedLane:
    labels = _get(step.inputs(), "labels") or {}
    label = labels.get(contract.NODEGROUP_LABEL) if isinstance(labels, dict) else None
    aliases = {step.name, *ancestors}
    for key in ("nodeGroupName",):
        value = step.inputs().get(key)
        if isinstance(value, str):
            aliases.add(shown(value))
    if isinstance(label, str):
        label = shown(label)
        aliases.add(label)
    return TouchedLane(
        "node group", label if isinstance(label, str) else (ancestors[-1] if ancestors else step.name), aliases, step
    )


def urn_name(urn: str) -> str:
    """A URN's name: everything after its type (a name may hold ``::`` itself); '' for no URN."""
    parts = urn.split("::", 3)
    return parts[3] if len(parts) == 4 else ""


def _urn_type(urn: str) -> str:
    parts = urn.split("::")
    return parts[2].rsplit("$", 1)[-1] if len(parts) >= 4 else ""


def _ancestors(step: GuardStep, by_urn: dict[str, GuardStep]) -> list[str]:
    """The names of the node-group components around a group (pulumi-eks's, the rack's), outermost first."""
    names: list[str] = []
    seen: set[str] = set()
    parent = step.state().get("parent") or ""
    while parent and parent not in seen:  # the readers refuse a cycle; a plan built in memory is not read
        seen.add(parent)
        if _urn_type(parent) in GROUP_COMPONENTS:
            names.append(shown(urn_name(parent)))
        up = by_urn.get(parent)
        parent = (up.state().get("parent") or "") if up else ""
    return names[::-1]


def judge(steps: list[GuardStep], allow: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The ``lane-removal`` violations (mandatory, unless the lane is in ``allow``) and
    ``lane-rollout`` advisories of a plan's steps."""
    allowed = {a for a in allow if a}
    out = []
    for verdict in _verdicts(steps):
        aliases = verdict.pop("aliases")
        if verdict["policy"] != LANE_REMOVAL or not (aliases & allowed):
            out.append(verdict)
    return out


def unmatched_allowances(steps: list[GuardStep], allow: Iterable[str]) -> list[str]:
    """The names in ``allow`` that name no lane the steps remove (a typo would otherwise pass unnoticed)."""
    removed = {a for v in _verdicts(steps) if v["policy"] == LANE_REMOVAL for a in v["aliases"]}
    return [name for name in allow if name not in removed]


def _verdicts(steps: list[GuardStep]) -> list[dict[str, Any]]:
    by_urn = {s.urn: s for s in steps}
    removing = ("delete", "replace")
    pools_of_class = _pools_by_class(steps)
    removed_classes: dict[Optional[str], list[GuardStep]] = {}
    for c in steps:
        if is_nodeclass(c.type) and c.op in removing:
            removed_classes.setdefault(_k8s_name(c, "old"), []).append(c)
    groups_by_parent: dict[str, list[GuardStep]] = {}
    for s in steps:
        if s.type == contract.EKS_NODE_GROUP:
            for parent in _parents(s, by_urn):
                groups_by_parent.setdefault(parent, []).append(s)
    verdicts: list[dict[str, Any]] = []

    def verdict(
        policy: str, level: str, step: GuardStep, lane: str, message: str, aliases: frozenset[str] = frozenset()
    ) -> None:
        verdicts.append(
            {
                "pack": PACK,
                "policy": policy,
                "level": level,
                "urn": step.urn,
                "lane": lane,
                "message": message,
                "aliases": set(aliases) | {lane},
            }
        )

    def removal(lane: TouchedLane, what: str, happens: str) -> None:
        of = canary_of(lane.step)
        if of is not None:  # a canary goes when its candidate is dropped or promoted: said, not refused
            name = _k8s_name(lane.step, "old")
            verdict(
                LANE_REMOVAL,
                "advisory",
                lane.step,
                name,
                f"canary lane '{name}' of {lane.kind} lane '{of}': {what}. A canary's removal is not refused: its "
                f"nodes are drained and terminated together, and their pods move to '{of}' (its labels and taints "
                f"are the canary's), or wait Pending for it.",
                frozenset(lane.aliases | {name}),
            )
            return
        verdict(
            LANE_REMOVAL,
            "mandatory",
            lane.step,
            lane.name,
            f"{lane.kind} lane '{lane.name}': {what}. {happens}\n"
            f"If this is intended, pass --allow-lane-removal {lane.name}.",
            frozenset(lane.aliases),
        )

    groups_removed = set()
    for step in steps:
        if _retained(step) or _already_gone(step):
            continue  # the engine skips the provider's delete (the object keeps running), or it is gone already
        verb = "deleted" if step.op == "delete" else "replaced"
        why = f" (changed: {', '.join(step.diff)})" if step.op == "replace" and step.diff else ""
        if step.op in removing and is_nodepool(step.type):
            name = _k8s_name(step, "old")
            classes = removed_classes.get(_class_of(step, "old"), [])
            also = " together with its EC2NodeClass" if classes else ""
            removal(
                TouchedLane("Karpenter", name, {name, step.name}, step),
                f"its NodePool is {verb}{why}{also}",
                "Deleting a NodePool deletes all its NodeClaims at once: Karpenter cordons, drains and terminates "
                "every node of the pool together, not bounded by its disruption budget; its pods are evicted and "
                "wait Pending for capacity"
                + (
                    " until the new NodePool launches nodes."
                    if step.op == "replace"
                    else " on another lane that fits them."
                ),
            )
        elif step.op in removing and is_nodeclass(step.type):
            name = _k8s_name(step, "old")
            users = pools_of_class.get(name, [])
            if users and all(p.op in removing for p in users):
                continue  # the pools' own verdicts name the lane
            # a pool that moves to another class drifts onto it (lane-rollout); the old class's termination
            # finalizer holds its deletion until no NodeClaim uses it: only pools left on it lose their class
            pools = [p for p in users if p.op in removing or (_class_of(p, "new") or _class_of(p, "old")) == name]
            if users and not pools:
                continue
            names = [_k8s_name(p, "old") for p in pools] or [name]
            removal(
                TouchedLane("Karpenter", name, {name, step.name, *names}, step),
                f"its EC2NodeClass is {verb}{why} (used by NodePool {', '.join(names)})",
                f"Karpenter cannot launch or replace nodes for NodePool {', '.join(names)} without its class, and the "
                "nodes already launched from it are left without the class they were launched from.",
            )
        elif step.op in removing and step.type == contract.EKS_NODE_GROUP:
            lane = _group_lane(step, _ancestors(step, by_urn))
            groups_removed.add(step.urn)
            templates = [
                t
                for t in (_get(step.state(), "propertyDependencies", "launchTemplate") or [])
                if by_urn.get(t) is not None and by_urn[t].op in removing
            ]
            cause = (
                f" because its launch template is {by_urn[templates[0]].op}d"
                if templates and step.op == "replace"
                else ""
            )
            happens = (
                f"EKS scales its Auto Scaling group to zero and drains and terminates all its nodes "
                f"({_group_size(step)}) together (each forced after 5 minutes), not "
                "bounded by updateConfig.maxUnavailable"
            )
            if step.op == "replace" and _named(step):
                happens += (
                    "; its nodeGroupName is fixed, so Pulumi deletes it before creating the replacement: its pods "
                    "wait Pending until the new group's nodes join, unless another lane fits them."
                )
            elif step.op == "replace":
                happens += (
                    "; Pulumi creates the replacement group first, so evicted pods move to its nodes when they "
                    "fit there, else wait Pending."
                )
            else:
                happens += "; pods without another lane that fits them wait Pending."
            removal(lane, f"its managed node group is {verb}{cause}{why}", happens)
        elif (
            step.op == "update"
            and step.type == contract.EKS_NODE_GROUP
            and not _ignores_scaling(step)
            and (not step.diff or any(d.startswith("scalingConfig") for d in step.diff))
        ):
            before, after = (_number(_get(step.inputs(w), "scalingConfig", "desiredSize")) for w in ("old", "new"))
            top = _number(_get(step.inputs("new"), "scalingConfig", "maxSize"))
            if (before or 0) > 0 and (after == 0 or top == 0):
                lane = _group_lane(step, _ancestors(step, by_urn))
                removal(
                    lane,
                    f"its managed node group is scaled to zero (desiredSize {before} -> "
                    f"{after if after is not None else top})",
                    f"EKS terminates all its nodes ({before}) together, not bounded by updateConfig.maxUnavailable; "
                    "pods without another lane that fits them wait Pending.",
                )
        elif step.op in removing and step.type == CRD and _k8s_name(step, "old") in LANE_CRDS:
            crd = _k8s_name(step, "old")
            pool_names = sorted({_k8s_name(p, "old") for p in steps if is_nodepool(p.type)})
            removal(
                TouchedLane("Karpenter", crd, {crd, step.name, *pool_names}, step),
                f"the CustomResourceDefinition {crd} is {verb}",
                "Kubernetes deletes every object of a deleted CustomResourceDefinition: every "
                f"{LANE_CRDS[crd]} of the cluster{' (' + ', '.join(pool_names) + ')' if pool_names else ''}, and with "
                f"them "
                "Karpenter's NodeClaims and nodes, all at once.",
            )
    for (
        step
    ) in steps:  # a component group whose aws:eks NodeGroup is not among the steps (a real preview always has it)
        if step.op in removing and step.type in GROUP_COMPONENTS and not _retained(step) and not _already_gone(step):
            inner = groups_by_parent.get(step.urn, [])
            if not inner:
                lane = TouchedLane("node group", step.name, {step.name, *_ancestors(step, by_urn)}, step)
                removal(
                    lane,
                    f"its node group component {step.type} is {'deleted' if step.op == 'delete' else 'replaced'}",
                    "EKS drains and terminates all its nodes together, not bounded by updateConfig.maxUnavailable.",
                )
    _rollouts(steps, by_urn, pools_of_class, verdict)
    return verdicts


CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
LANE_CRDS = {
    "nodepools.karpenter.sh": "NodePool",
    "nodeclaims.karpenter.sh": "NodeClaim",
    "ec2nodeclasses.karpenter.k8s.aws": "EC2NodeClass",
}
"""Karpenter's CustomResourceDefinitions: deleting one deletes every object of its kind."""


def _ignores_scaling(step: GuardStep) -> bool:
    """The program ignores the group's desired size (its autoscaler owns it): a change there is not planned."""
    ignored = (step.new or {}).get("ignoreChanges") if isinstance(step.new, dict) else None
    return any(
        isinstance(p, str) and p.replace('["', ".").replace('"]', "").startswith("scalingConfig")
        for p in (ignored or [])
    )


def _retained(step: GuardStep) -> bool:
    """``retainOnDelete`` on the old state: pulumi's delete step skips the provider's delete (and a replace's
    delete of the old one), so the object stays."""
    return isinstance(step.old, dict) and step.old.get("retainOnDelete") is True


def _already_gone(step: GuardStep) -> bool:
    """``pendingReplacement`` on the old state: a delete-before-replace deleted it and did not create its
    replacement; the plan's replace only creates it again, and removes nothing. ``external``: the state only
    read it; a replace creates one the program owns in its place and leaves the one it read alone."""
    return isinstance(step.old, dict) and (
        step.old.get("pendingReplacement") is True or step.old.get("external") is True
    )


def _parents(step: GuardStep, by_urn: dict[str, GuardStep]) -> set[str]:
    out = set()
    parent = step.state().get("parent") or ""
    while parent and parent not in out:
        out.add(parent)
        up = by_urn.get(parent)
        parent = (up.state().get("parent") or "") if up else ""
    return out


NODEPOOL_SETS = ("spec.template.spec.taints", "spec.template.spec.startupTaints")
"""Lists Karpenter's NodePool hash reads as sets (``HashOptions{SlicesAsSets: true}``): a new order is no drift."""


def _reordered(step: GuardStep, path: str, sets: tuple[str, ...] = NODEPOOL_SETS) -> bool:
    """Whether ``path`` lies in a set-like list (one of ``sets``) whose old and new items are the same, reordered."""
    for key in sets:
        if related(path, key):
            old, new = (_get(step.inputs(w), *key.split(".")) for w in ("old", "new"))
            if isinstance(old, list) and isinstance(new, list):
                return in_one_order(old) == in_one_order(new)
    return False


def _class_lists(step: GuardStep) -> tuple[str, ...]:
    """The class's list fields: its hash reads every list as a set (``SlicesAsSets``), and its selections
    resolve to sets of subnets, groups and AMIs, so a new order drifts nothing."""
    spec = _get(step.inputs("new"), "spec")
    return tuple(f"spec.{k}" for k, v in spec.items() if isinstance(v, list)) if isinstance(spec, dict) else ()


def _touches(diff: list[str], rules: tuple[str, ...]) -> list[str]:
    return [p for p in diff if any(related(p, r) for r in rules)]


def _rollouts(
    steps: list[GuardStep], by_urn: dict[str, GuardStep], pools_of_class: dict[str, list[GuardStep]], verdict: Any
) -> None:
    for step in steps:
        if step.op != "update":
            continue
        if is_nodeclass(step.type):
            lists = _class_lists(step)
            changed = [p for p in _touches(step.diff, NODECLASS_ROLLING) if not _reordered(step, p, lists)]
            selecting = [p for p in _touches(step.diff, tuple(NODECLASS_SELECTING)) if not _reordered(step, p, lists)]
            if not changed and not selecting:
                continue
            name = _k8s_name(step)
            what = sorted({NODECLASS_SELECTING[k] for k in NODECLASS_SELECTING for p in selecting if related(p, k)})
            candidates: list[Optional[GuardStep]] = list(pools_of_class.get(name, [])) or [None]
            for pool in candidates:
                pool_name = _k8s_name(pool) if pool else name
                if changed:
                    message = (
                        f"its EC2NodeClass changes {', '.join(changed)}, so Karpenter marks every node of the pool "
                        f"drifted and replaces them (a replacement first, then the drain), {budget_text(pool)}. Set "
                        f"the new AMI deliberately with the pool's ami_id (a pinned AMI does not move by itself, an "
                        f"alias does) and bound the rollout with its disruption_budget_nodes."
                    )
                else:
                    message = (
                        f"its EC2NodeClass changes {', '.join(selecting)}, so Karpenter marks drifted every node "
                        f"whose {' or '.join(what)} the new selection no longer includes and replaces them, "
                        f"{budget_text(pool)}. Bound the rollout with the pool's disruption_budget_nodes."
                    )
                verdict(LANE_ROLLOUT, "advisory", step, pool_name, f"Karpenter lane '{pool_name}': {message}")
        elif is_nodepool(step.type):
            changed = [p for p in _touches(step.diff, NODEPOOL_ROLLING) if not _reordered(step, p)]
            if not changed and _touches(step.diff, (NODEPOOL_REQUIREMENTS,)):
                name = _k8s_name(step)
                verdict(
                    LANE_ROLLOUT,
                    "advisory",
                    step,
                    name,
                    f"Karpenter lane '{name}': its NodePool requirements change, so Karpenter marks drifted every "
                    f"node whose labels they no longer allow (a narrower family, size, capacity type or arch) and "
                    f"replaces them, {budget_text(step)}. Bound the rollout with the pool's disruption_budget_nodes.",
                )
            if changed:
                name = _k8s_name(step)
                verdict(
                    LANE_ROLLOUT,
                    "advisory",
                    step,
                    name,
                    f"Karpenter lane '{name}': its NodePool template changes {', '.join(changed)}, so Karpenter marks "
                    f"every node of the pool drifted and replaces them, {budget_text(step)}. Bound the rollout with "
                    f"the pool's disruption_budget_nodes.",
                )
        elif step.type == contract.EKS_NODE_GROUP:
            changed = _touches(step.diff, NODEGROUP_ROLLING)
            if changed:
                lane = _group_lane(step, _ancestors(step, by_urn))
                source = " (its launch template changes)" if "launchTemplate.version" in changed else ""
                verdict(
                    LANE_ROLLOUT,
                    "advisory",
                    step,
                    lane.name,
                    f"node group lane '{lane.name}': {', '.join(changed)} changes{source}, so EKS replaces all its "
                    f"nodes ({_group_size(step)}), new ones first, {max_unavailable_text(step)}. Set the new "
                    f"ami_id deliberately; the group's updateConfig (maxUnavailable) bounds the rollout.",
                )
