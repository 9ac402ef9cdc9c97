"""Kubernetes' scheduling by labels and taints, as pure functions over pod specs and node facts.

Pure (the standard library and the pack's own ``bootfacts`` reading helpers), shared by the pack (top-level
``scheduling``) and the package (``mixed_os_racks.pack.scheduling``). What it follows:

* A pod's ``nodeSelector`` (every pair must match) and its required node affinity (the
  ``nodeSelectorTerms`` are ORed, each term's ``matchExpressions`` ANDed, an empty term matches
  nothing; operators ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``; ``NotIn`` and
  ``DoesNotExist`` match a node without the label) must both hold
  (kubernetes/kubernetes ``staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go``,
  ``GetRequiredNodeAffinity`` and ``LazyErrorNodeSelector.Match``). A term's ``matchFields`` (a node
  by ``metadata.name``) make it a term; which node they pick is not known here, so they hold.
* A node's ``NoSchedule`` and ``NoExecute`` taints must each be tolerated; ``PreferNoSchedule`` is a
  preference (the scheduler's ``TaintToleration`` filter,
  ``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``). A toleration tolerates a
  taint when its effect is empty or equal, its key is empty or equal, and its operator is ``Exists``,
  or ``Equal`` (or empty) with an equal value, or ``Lt``/``Gt`` comparing integer values
  (``staging/src/k8s.io/api/core/v1/toleration.go``, ``ToleratesTaint``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Optional

from .. import contract, syntax
from . import bootfacts


def effect(value: Any) -> str:
    text = bootfacts.text(value)
    return contract.effect(text)


@dataclass(frozen=True)
class NodeTaint:
    """A taint on a node as the pack reads it (from a NodePool's template, a node group's ``taints``, a lane of the
    ``lanes`` config), its effect in Kubernetes' spelling: what a pod must tolerate to land on the node.

    One of three taint types, each for one side: ``mixed_os_racks.spec.pool.Taint`` is a taint a user gives a
    Karpenter pool (the component schema's ``Taint``), ``mixed_os_racks.lane.LaneTaint`` is a taint a lane's record
    says every node of the lane carries (a component's ``taints`` output, the ``lanes`` config); this one is what
    the pack reads from either, to match against pods' tolerations."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"

    @classmethod
    def read(cls, value: Any) -> "NodeTaint":
        taint = bootfacts.as_map(value)
        return cls(bootfacts.text(taint.get("key")), bootfacts.text(taint.get("value")), effect(taint.get("effect")))

    @property
    def blocking(self) -> bool:
        """Keeps pods that do not tolerate it off the node (``PreferNoSchedule`` only discourages)."""
        return self.effect in contract.BLOCKING_EFFECTS

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True)
class Toleration:
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""

    @classmethod
    def read(cls, value: Any) -> "Toleration":
        t = bootfacts.as_map(value)
        return cls(
            bootfacts.text(t.get("key")),
            bootfacts.text(t.get("operator")),
            label_text(t.get("value")),
            bootfacts.text(t.get("effect")),
        )

    def tolerates(self, taint: NodeTaint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        if self.operator == "Exists":
            return True
        if self.operator in ("Lt", "Gt"):
            mine, theirs = _integer(self.value), _integer(taint.value)
            if mine is None or theirs is None:
                return False
            return theirs < mine if self.operator == "Lt" else theirs > mine
        return False


def _integer(value: str) -> Optional[int]:
    return int(value) if re.fullmatch(r"[+-]?[0-9]+", value or "") else None


def label_text(value: Any) -> str:
    """A label or toleration value: strings as they are, numbers and booleans as YAML would write them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else ("" if value is None else str(value))


@dataclass(frozen=True)
class PodRequirement:
    """What a pod asks of a node's labels: one ``matchExpressions`` entry of its node affinity (a ``nodeSelector``
    pair is ``In`` with one value), held against a node's labels (``holds``). A NodePool's requirement, what a lane
    offers, is ``facts.wellknown.Requirement``."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    field: bool = False
    """A ``matchFields`` entry (``metadata.name``): a node's own fields, which no lane declares."""

    def holds(self, labels: Mapping[str, str]) -> bool:
        if self.field:  # which node a name picks is not known before the nodes exist
            return True
        present = self.key in labels
        value = labels.get(self.key, "")
        if self.operator == "In":
            return present and value in self.values
        if self.operator == "NotIn":
            return not present or value not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator in ("Gt", "Lt") and present and len(self.values) == 1:
            mine, theirs = _integer(self.values[0]), _integer(value)
            if mine is None or theirs is None:
                return False
            return theirs > mine if self.operator == "Gt" else theirs < mine
        return False


@dataclass(frozen=True)
class Selection:
    """Where a pod may go by labels: its ``nodeSelector`` AND any of its required affinity terms."""

    node_selector: tuple[PodRequirement, ...] = ()
    terms: Optional[tuple[tuple[PodRequirement, ...], ...]] = None
    """None: no required node affinity (every node passes it)."""

    @property
    def requirements(self) -> Iterator[PodRequirement]:
        yield from self.node_selector
        for term in self.terms or ():
            yield from term

    @property
    def empty(self) -> bool:
        return not self.node_selector and self.terms is None

    def matches(self, labels: Mapping[str, str], known: frozenset[str]) -> bool:
        """Whether a lane with ``labels`` passes; requirements on keys outside ``known`` hold."""
        return self.on(labels, known) is not None

    def on(self, labels: Mapping[str, str], known: frozenset[str]) -> Optional["Selection"]:
        """The selection as it applies to a lane with ``labels``: only the affinity terms whose label
        requirements that lane passes (None: it passes none of them, or not the ``nodeSelector``).
        The terms are ORed, so a term's other requirements bind only the nodes it selects."""

        def holds(req: PodRequirement) -> bool:
            return req.key not in known or req.holds(labels)

        if not all(holds(r) for r in self.node_selector):
            return None
        if self.terms is None:
            return self
        return self.keeping(lambda term: bool(term) and all(holds(r) for r in term))

    def keeping(self, keep: Callable[[tuple[PodRequirement, ...]], bool]) -> Optional["Selection"]:
        """This selection with only the affinity terms ``keep`` accepts (None: none is left). Without
        required affinity, the one implicit term is the ``nodeSelector`` alone."""
        terms = self.terms if self.terms is not None else ((),)
        kept = tuple(term for term in terms if keep(term))
        if not kept:
            return None
        if self.terms is None or len(kept) == len(terms):
            return self
        return Selection(self.node_selector, kept)


def _requirement(value: Any, field: bool = False) -> PodRequirement:
    req = bootfacts.as_map(value)
    return PodRequirement(
        bootfacts.text(req.get("key")),
        bootfacts.text(req.get("operator")),
        tuple(label_text(v) for v in bootfacts.as_list(req.get("values"))),
        field,
    )


def selection_of(pod: Any) -> Selection:
    """A pod spec's ``nodeSelector`` and required node affinity."""
    node_selector = tuple(
        PodRequirement(str(k), "In", (label_text(v),)) for k, v in bootfacts.as_map(pod.get("nodeSelector")).items()
    )
    required = bootfacts.dig(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    terms = None
    if isinstance(required, Mapping):
        terms = tuple(
            tuple(_requirement(r) for r in bootfacts.as_list(bootfacts.as_map(t).get("matchExpressions")))
            + tuple(_requirement(r, field=True) for r in bootfacts.as_list(bootfacts.as_map(t).get("matchFields")))
            for t in bootfacts.as_list(required.get("nodeSelectorTerms"))
        )
    return Selection(node_selector, terms)


def tolerations_of(pod: Any) -> tuple[Toleration, ...]:
    return tuple(Toleration.read(t) for t in bootfacts.as_list(pod.get("tolerations")))


# ---- what the API server refuses ------------------------------------------------------------------------------

_TOLERATION_OPERATORS = ("", "Equal", "Exists", "Lt", "Gt")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_AFFINITY = ("affinity", "nodeAffinity")


def refusals(pod: Any, at: str, where: Mapping[str, str] = {}) -> list[str]:
    """What the API server refuses in a pod spec's placement, each with its path under ``at`` (kubernetes
    ``pkg/apis/core/validation``: ``ValidateTolerations``, the pod's ``nodeSelector`` as labels, and the node
    affinity's terms as ``ValidateNodeSelector`` checks them). Such a pod is never created, so where it would land
    is not judged. Tolerations with ``Lt``/``Gt`` (newer clusters) are taken with a whole-number value.
    ``where`` names the path of a field the pod took from elsewhere (an Argo workflow's defaults)."""
    found = []
    selector_at, tolerations_at, affinity_at = (
        where.get(name, at) for name in ("nodeSelector", "tolerations", "affinity")
    )
    for key, value in bootfacts.as_map(pod.get("nodeSelector")).items():
        problem = syntax.qualified_name_problem(str(key)) or syntax.label_value_problem(label_text(value))
        if problem:
            found.append(f"{selector_at}.nodeSelector: label '{key}': '{label_text(value)}': {problem}")
    for n, toleration in enumerate(bootfacts.as_list(pod.get("tolerations"))):
        found += [
            f"{tolerations_at}.tolerations[{n}].{problem}"
            for problem in _toleration_problems(bootfacts.as_map(toleration))
        ]
    node_affinity = bootfacts.dig(pod, *_AFFINITY)
    required = bootfacts.dig(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution")
    terms_at = f"{affinity_at}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    if isinstance(required, Mapping):
        terms = bootfacts.as_list(required.get("nodeSelectorTerms"))
        if not terms:
            found.append(
                f"{terms_at}: empty, and a required node affinity must have at least one term (an empty "
                f"term list would match no node)"
            )
        for n, term in enumerate(terms):
            found += _term_problems(bootfacts.as_map(term), f"{terms_at}[{n}]")
    preferred = "preferredDuringSchedulingIgnoredDuringExecution"
    for n, term in enumerate(bootfacts.as_list(bootfacts.dig(node_affinity, preferred))):
        found += _term_problems(
            bootfacts.as_map(bootfacts.as_map(term).get("preference")),
            f"{affinity_at}.affinity.nodeAffinity.{preferred}[{n}].preference",
        )
    return found


def _toleration_problems(toleration: Mapping[str, Any]) -> list[str]:
    key, operator = bootfacts.text(toleration.get("key")), bootfacts.text(toleration.get("operator"))
    value, effect_ = label_text(toleration.get("value")), bootfacts.text(toleration.get("effect"))
    found = []
    if key and (problem := syntax.qualified_name_problem(key)):
        found.append(f"key: '{key}': {problem}")
    if not key and operator != "Exists":
        found.append(
            f"operator: '{operator}' with no key (only Exists may leave the key empty, to tolerate every taint)"
        )
    if operator not in _TOLERATION_OPERATORS:
        found.append(f"operator: '{operator}' is not Equal or Exists")
    elif operator == "Exists" and value:
        found.append(f"value: '{value}' with operator Exists, which takes no value (drop the value)")
    elif operator in ("Lt", "Gt") and _integer(value) is None:
        found.append(f"value: '{value}' with operator {operator}, which compares whole numbers")
    elif operator in ("", "Equal") and (problem := syntax.label_value_problem(value)):
        found.append(f"value: '{value}': {problem}")
    if effect_ and effect_ not in _EFFECTS:
        found.append(f"effect: '{effect_}' is not one of {', '.join(_EFFECTS)}")
    if toleration.get("tolerationSeconds") is not None and effect_ != "NoExecute":
        found.append("tolerationSeconds: only effect NoExecute takes it")
    return found


def _term_problems(term: Mapping[str, Any], at: str) -> list[str]:
    found = []
    for n, expression in enumerate(bootfacts.as_list(term.get("matchExpressions"))):
        req = _requirement(expression)
        where = f"{at}.matchExpressions[{n}]"
        if problem := syntax.qualified_name_problem(req.key):
            found.append(f"{where}.key: '{req.key}': {problem}")
        found += [f"{where}.{problem}" for problem in _operator_problems(req)]
    for n, expression in enumerate(bootfacts.as_list(term.get("matchFields"))):
        req = _requirement(expression, field=True)
        where = f"{at}.matchFields[{n}]"
        if req.key != "metadata.name":
            found.append(f"{where}.key: '{req.key}' is not a node field a term may match (only metadata.name)")
        if req.operator not in ("In", "NotIn") or len(req.values) != 1:
            found.append(f"{where}: a field is matched with In or NotIn and exactly one value")
    return found


def _operator_problems(req: PodRequirement) -> list[str]:
    values = ", ".join(f"'{v}'" for v in req.values)
    if req.operator in ("In", "NotIn") and not req.values:
        return [f"values: none, and operator {req.operator} needs at least one"]
    if req.operator in ("Exists", "DoesNotExist") and req.values:
        return [f"values: [{values}] with operator {req.operator}, which takes none"]
    if req.operator in ("Gt", "Lt") and len(req.values) != 1:
        return [f"values: [{values}] with operator {req.operator}, which takes exactly one"]
    if req.operator not in _NODE_OPERATORS:
        return [f"operator: '{req.operator}' is not one of {', '.join(_NODE_OPERATORS)}"]
    return []
