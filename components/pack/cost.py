"""Each lane's worst case per hour, and the budgets that hold it (``lane-cost-ceiling``, ``lane-cost-unbounded``).

A worst case is what a lane can cost an hour at on-demand prices (``prices``), at most:

* a Karpenter NodePool launches a node only when the node's capacity fits what is left of each of its
  ``limits`` (kubernetes-sigs/karpenter ``pkg/controllers/provisioning/scheduling/scheduler.go``,
  ``filterByRemainingResources``), so its worst case is the dearest set of whole nodes, of the instance types
  its requirements let it launch (``wellknown``), that fits every limit it sets on ``cpu``, ``memory`` (capacity
  as Karpenter estimates it before a launch, ``fit.memory_capacity_mib``), ``nvidia.com/gpu`` and ``amd.com/gpu``.
  ``limits.nodes`` bounds nothing here: within a pass Karpenter subtracts each NodeClaim's largest capacity from
  the limits (``subtractMax``), and a capacity has no ``nodes`` (``BETWEEN_PASSES``). When one limit binds, that
  is the limit filled with the types that cost the most per unit of it. A pool
  without such limits, or whose limits leave a type it can launch unbounded (a GPU limit and types
  without GPUs), is unbounded, as is one held only by a limit past any number of nodes (``cpu: "1e400"``).
  Limits are read as the API server takes them and Karpenter decodes them (``bootfacts.node_pool_limits``, as the
  fit policies read them): a pool with a limit either refuses launches nothing. A static pool (``replicas``)
  runs ``replicas`` nodes (at most ``limits.nodes``) of its dearest type
  (``pkg/controllers/static/provisioning/controller.go``).
* an EKS managed node group: ``max_size`` nodes of its dearest instance type.
* a rack: the sum of its lanes.

The search for the dearest set is exact (branch and bound) up to ``SEARCH_STEPS`` steps; past them the
figure is the fractional bound (the limits filled as if nodes could be split), an upper bound, and it
says "at most". Limits are soft: Karpenter checks them while it provisions, in parallel, and can
overshoot them (kubernetes-sigs/karpenter#2657): a worst case is what the limits allow, not a promise.

Pure: the standard library and the pack's modules (the pack and the components share it).
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Callable, Final, Iterator, Mapping, Optional, Sequence

from .. import clock, contract, syntax
from ..facts import instances, wellknown
from . import bootfacts, checks, fit, lookup, overlays, reserved, rules
from .lanemodel import ANY_INSTANCE
from .lanesource import group_requirements, read_lanes
from ..facts.prices import Prices, usd

CEILING, UNBOUNDED = "lane-cost-ceiling", "lane-cost-unbounded"
CPU, MEMORY, NODES = fit.CPU, fit.MEMORY, fit.NODES
COUNTED = fit.LIMITED
"""The limits a worst case counts: what the instance table gives per type (one node counts one ``nodes``), as
the fit policies count them (``fit.within_limits``)."""
BUDGET_OUTPUT: Final = "maxHourlyUsd"
WORST_OUTPUT: Final = "worstCaseHourlyUsd"
ROLLOUT_OUTPUT: Final = "worstCaseRolloutHourlyUsd"
"""What our components register: a lane's or a rack's budget, and a lane's worst case, steady and during a rollout
(final, so a ``lane.Lane`` is keyed by them)."""
CONTROL_PLANE_OUTPUT = "controlPlaneHourlyUsd"
"""What a rack registers as its EKS control plane's price an hour (``control_plane``)."""
CONTROL_PLANE_PRICE_OUTPUT = "controlPlanePrice"
"""What a rack registers as why its control plane costs that (``control_plane``: its EKS support tier)."""
EKS_CONTROL_PLANE_USD = {"standard": 0.10, "extended": 0.60}
"""An EKS cluster's price per hour in standard and in extended support (Amazon EKS pricing); a version whose
support the calendar does not know, or has ended (EKS then upgrades the control plane itself), is counted at the
extended price: the ceiling."""


def control_plane(status: str) -> tuple[float, str]:
    """An EKS control plane's price an hour, from where its version stands (``upstream.eks_support``), and why."""
    if status == "standard":
        return EKS_CONTROL_PLANE_USD["standard"], "EKS standard support"
    if status == "extended":
        return EKS_CONTROL_PLANE_USD["extended"], "EKS extended support"
    return EKS_CONTROL_PLANE_USD["extended"], (
        "its version is past EKS extended support"
        if status == "ended"
        else "its version's support is not known: the extended support price"
    )


SEARCH_STEPS = 5_000
EPSILON = 1e-9


BETWEEN_PASSES = (
    "holds only between scheduling passes: within one, Karpenter subtracts each new node's cpu, memory "
    "and GPUs from the limits, never a node count, so one pass can launch any number of nodes"
)
"""Why ``limits.nodes`` bounds no worst case (kubernetes-sigs/karpenter v1.14.1 ``scheduler.go``, ``subtractMax``)."""

capacity = fit.limit_capacity
"""What one node of a type counts against each of ``COUNTED``."""


# ---- the dearest fill -------------------------------------------------------------------------------------

Item = tuple[float, tuple[float, ...]]
"""An instance type as the search sees it: its price and its capacity in each limited resource."""


def _ratios(items: Sequence[Item], dims: int) -> list[float]:
    """Per resource, the highest price per unit among ``items`` (infinite: an item has none of it)."""
    return [math.inf if any(c[d] <= 0 for _, c in items) else max(p / c[d] for p, c in items) for d in range(dims)]


def _simplex(items: Sequence[Item], limits: Sequence[float]) -> float:
    """The fractional bound: max price . x over x >= 0 with capacity . x <= limits (a dense simplex from
    the slack basis, Bland's rule; every capacity is non-negative and every limit positive); infinite if
    it does not settle in 200 pivots."""
    rows, cols = len(limits), len(items)
    table = [
        [items[j][1][i] for j in range(cols)] + [1.0 if k == i else 0.0 for k in range(rows)] + [limits[i]]
        for i in range(rows)
    ]
    objective = [-p for p, _ in items] + [0.0] * rows + [0.0]
    for _ in range(200):
        entering = next((j for j, v in enumerate(objective[:-1]) if v < -EPSILON), None)
        if entering is None:
            return objective[-1]
        ratios = [(table[i][-1] / table[i][entering], i) for i in range(rows) if table[i][entering] > EPSILON]
        if not ratios:
            return math.inf
        _, leaving = min(ratios)
        pivot = table[leaving][entering]
        table[leaving] = [v / pivot for v in table[leaving]]
        for row in (*(r for i, r in enumerate(table) if i != leaving), objective):
            factor = row[entering]
            if factor:
                row[:] = [a - factor * b for a, b in zip(row, table[leaving])]
    return math.inf


@functools.lru_cache(maxsize=4096)
def dearest(items: tuple[Item, ...], limits: tuple[float, ...]) -> tuple[float, tuple[int, ...], bool]:
    """The dearest counts of ``items`` whose capacity fits ``limits`` (every item fits them alone and has
    some of a limited resource): ``(cost, count per item, exact)``. Not exact: the cost is the fractional bound."""
    dims = len(limits)
    ratios = _ratios(items, dims)
    binding = min(range(dims), key=lambda d: limits[d] * ratios[d] if ratios[d] < math.inf else math.inf)
    # the dearest per unit of the binding limit first; an item no other is at least as dear and as small as
    order = sorted(range(len(items)), key=lambda j: (-items[j][0] / items[j][1][binding], -items[j][0], j))
    kept: list[int] = []
    for j in sorted(order, key=lambda j: -items[j][0]):
        if not any(
            items[k][0] >= items[j][0] and all(items[k][1][d] <= items[j][1][d] for d in range(dims)) for k in kept
        ):
            kept.append(j)
    order = [j for j in order if j in set(kept)]
    suffix = [[0.0] * dims]
    for j in reversed(order):
        price, caps = items[j]
        suffix.insert(
            0, [max(s, price / caps[d]) if caps[d] > 0 and s < math.inf else math.inf for d, s in enumerate(suffix[0])]
        )

    # what is left of a limit can only be spent in steps of the capacities' common divisor (vCPUs come in twos)
    steps = [
        math.gcd(*(int(c[d]) for _, c in items)) if all(c[d] == int(c[d]) for _, c in items) else 0 for d in range(dims)
    ]

    def bound(i: int, left: tuple[float, ...]) -> float:
        return min(
            (left[d] // steps[d] * steps[d] if steps[d] else left[d]) * suffix[i][d]
            if suffix[i][d] < math.inf
            else math.inf
            for d in range(dims)
        )

    def most(caps: tuple[float, ...], left: tuple[float, ...]) -> int:
        return min(int(left[d] // caps[d] + EPSILON) for d in range(dims) if caps[d] > 0)

    # the dearest one-type fill first: a tie keeps it (the plainest fill to read)
    best_j = max(order, key=lambda j: items[j][0] * most(items[j][1], limits))
    best, counts = items[best_j][0] * most(items[best_j][1], limits), {best_j: most(items[best_j][1], limits)}
    stack: list[tuple[int, tuple[float, ...], float, Any]] = [(0, limits, 0.0, None)]
    taken = 0
    while stack:
        i, left, cost, path = stack.pop()
        taken += 1
        if taken > SEARCH_STEPS:  # the fractional bound: never more than one limit filled at its dearest
            fractional = min(_simplex(items, limits), min(limits[d] * ratios[d] for d in range(dims)))
            return fractional, tuple(0 for _ in items), False
        if cost > best + EPSILON:
            best, counts, link = cost, {}, path
            while link is not None:
                j, k, link = link
                counts[j] = k
        if i == len(order) or cost + bound(i, left) <= best + EPSILON:
            continue
        price, caps = items[order[i]]
        top = most(caps, left)
        for k in range(max(0, top - 64), top + 1):  # the most of it last pushed, first tried
            stack.append(
                (
                    i + 1,
                    tuple(left[d] - k * caps[d] for d in range(dims)),
                    cost + k * price,
                    (order[i], k, path) if k else path,
                )
            )
    return best, tuple(counts.get(j, 0) for j in range(len(items))), True


# ---- a lane's worst case ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorstCase:
    usd: Optional[float]
    """US dollars an hour; None: unbounded, or not known (``unknown``)."""
    prices: Prices
    fill: tuple[tuple[str, int, float], ...] = ()
    """The dearest fill: (instance type, nodes, price of one), dearest first."""
    bound: str = ""
    """What holds it: ``limits.cpu 64``, ``max_size 3``, ``replicas 2``."""
    why: str = ""
    """Why there is no figure (unbounded, or not known)."""
    unknown: bool = False
    exact: bool = True
    left_out: tuple[str, ...] = ()
    """What it could launch that the tables neither size nor price (left out, as Karpenter leaves out a
    type it has no price for)."""
    dearest: tuple[str, float] = ("", 0.0)
    """The dearest type it can launch, and its price: what a node launched during a rollout costs at most."""

    @property
    def nodes(self) -> int:
        """How many nodes its fill has (0 for a fractional bound)."""
        return sum(n for _, n, _ in self.fill)

    @property
    def unbounded(self) -> bool:
        return self.usd is None and not self.unknown

    @property
    def figure(self) -> str:
        """``$16.096``, ``at most $328.55``, ``unbounded``, ``not known``."""
        if self.usd is None:
            return "not known" if self.unknown else "unbounded"
        return usd(self.usd) if self.exact else f"at most {usd(self.usd)}"

    @property
    def detail(self) -> str:
        """``16 x g5.xlarge at $1.006, within limits.cpu 64``; why there is no figure; how a bound was made."""
        if self.usd is None or not (self.fill or not self.exact):
            return self.why or "no node"
        if not self.exact:
            return f"{self.bound} filled as if nodes could be split"
        nodes = " + ".join(f"{n if n < 10**9 else f'{n:.3g}'} x {name} at {usd(price)}" for name, n, price in self.fill)
        return nodes + (f", within {self.bound}" if self.bound else "")

    def words(self) -> str:
        """``$16.096 an hour (16 x g5.xlarge at $1.006, within limits.cpu 64)``, ``unbounded (...)``."""
        return f"{self.figure}{' an hour' if self.usd is not None else ''} ({self.detail})"


def _limit_text(name: str, amount: float, written: Mapping[str, str] = {}) -> str:
    """``limits.memory 256Gi``, ``limits.cpu 64``: a limit as a NodePool writes it (memory in Gi); one past what
    a float holds as it is written (``limits.cpu 1e400``)."""
    if not math.isfinite(amount):
        return f"limits.{name} {written.get(name) or 'past what a float holds'}"
    if name == MEMORY:
        return f"limits.memory {amount / fit.GIB:g}Gi"
    return f"limits.{name} {amount:g}"


def _priced(
    types: Sequence[instances.InstanceType], price_of: Callable[[str], Optional[float]]
) -> tuple[list[tuple[instances.InstanceType, float]], list[str]]:
    priced, unpriced = [], []
    for itype in types:
        price = price_of(itype.name)
        if price is None:
            unpriced.append(itype.name)
        else:
            priced.append((itype, price))
    return priced, unpriced


def pool(
    requirements: Sequence[wellknown.Requirement],
    limits: Mapping[str, float],
    prices: Prices,
    replicas: Optional[float] = None,
    written: Mapping[str, str] = {},
    overlaid: tuple[tuple[overlays.Overlay, ...], str, tuple[tuple[str, str], ...]] = ((), "", ()),
) -> WorstCase:
    """A NodePool's worst case, from its requirements and its ``limits`` (base units: cores, bytes; ``written``:
    how the NodePool writes them, for a limit past what a float holds); ``overlaid``: the NodeOverlays Karpenter
    applies to its types (the gate on), with the pool's name and template labels they match; the same pool is
    computed once (a rack's pools are often alike, and the pack's two policies read the same)."""
    return _pool(
        tuple(requirements),
        tuple(sorted(limits.items())),
        prices,
        replicas,
        tuple(sorted((k, v) for k, v in written.items() if not math.isfinite(limits.get(k, 0.0)))),
        overlaid,
    )


@functools.lru_cache(maxsize=4096)
def _pool(
    requirements: tuple[wellknown.Requirement, ...],
    given: tuple[tuple[str, float], ...],
    prices: Prices,
    replicas: Optional[float],
    texts: tuple[tuple[str, str], ...] = (),
    overlaid: tuple[tuple[overlays.Overlay, ...], str, tuple[tuple[str, str], ...]] = ((), "", ()),
) -> WorstCase:
    limits, written = dict(given), dict(texts)
    types, unsized = wellknown.launchable(tuple(requirements) or ANY_INSTANCE)
    applied, name, labels = overlaid
    price_of: Callable[[str], Optional[float]] = prices.of
    if applied:  # the types' GPUs and prices as the pool's NodeOverlays make them
        types = tuple(overlays.overlaid(t, applied, name, labels) for t in types)
        price_of = lambda n: overlays.price(n, prices.of(n), applied, name, labels)  # noqa: E731
    priced, unpriced = _priced(types, price_of)
    left_out = tuple(unpriced) + tuple(f"{f} (not sized)" for f in unsized)
    counted = fit.counted_limits(limits)
    if replicas is None:  # a dynamic pool: within a scheduling pass nothing counts its nodes
        counted = (*counted[:-1], math.inf)
    within = fit.within_limits(limits)  # the fit policies' test of a type against the limits
    fits = [(t, p) for t, p in priced if within(t)]
    if not types and not left_out:
        return WorstCase(0.0, prices, why="it can launch nothing: its requirements leave no instance type")
    if not priced:
        what = ", ".join(left_out[:3]) + (f" and {len(left_out) - 3} more" if len(left_out) > 3 else "")
        return WorstCase(None, prices, why=f"no price for what it can launch: {what}", unknown=True, left_out=left_out)
    below = fit.limits_below_zero(limits)
    if below:
        return WorstCase(
            0.0,
            prices,
            why=f"it can launch nothing: {_limit_text(below[0], limits[below[0]], written)} is below zero",
            left_out=left_out,
        )
    if not fits:
        return WorstCase(0.0, prices, why="no instance type it can launch fits its limits", left_out=left_out)
    # a type it can launch that the table does not price, outside a listed region, leaves it no figure (not known);
    # but a dynamic pool with a type its limits do not count is unbounded whatever that type costs (below)
    launchable = tuple(t.name for t in types if prices.of(t.name) is None and within(t)) if not prices.listed else ()
    if launchable and replicas is not None:
        return WorstCase(None, prices, why=_no_bound(launchable, prices), unknown=True, left_out=left_out)
    if replicas is not None:
        nodes = min(replicas, limits.get(NODES, math.inf))
        itype, price = max(fits, key=lambda f: (f[1], f[0].name))
        bound = f"replicas {replicas:g}" + (f" and limits.nodes {nodes:g}" if nodes < replicas else "")
        return _finite(
            WorstCase(
                round(nodes * price, 6),
                prices,
                ((itype.name, int(nodes), price),) if nodes else (),
                bound,
                left_out=left_out,
                dearest=(itype.name, price),
            )
        )
    free = [t for t, _ in fits if all(c <= 0 or limit == math.inf for c, limit in zip(capacity(t), counted))]
    if free:
        has = dict(zip(COUNTED, capacity(free[0])))
        named = [r for r in COUNTED if r in limits and has[r] <= 0]
        huge = [
            _limit_text(r, limits[r], written)
            for r in COUNTED
            if r in limits and has[r] > 0 and r != NODES and not math.isfinite(limits[r])
        ]  # all infinite
        reasons = (
            [f"its limits on {', '.join(named)} do not count {free[0].name}, which has none of them"] if named else []
        )
        if NODES in limits:
            reasons.append(f"{_limit_text(NODES, limits[NODES], written)} {BETWEEN_PASSES}")
        if huge:  # set, but to more than any number of nodes adds up to (what a float holds, and far past it)
            reasons.append(
                f"{' and '.join(huge)} {'is' if len(huge) == 1 else 'are'} past any number of nodes, so "
                f"{'it bounds' if len(huge) == 1 else 'they bound'} nothing"
            )
        why = ", and ".join(reasons) or "it has no limits on cpu, memory, GPUs or nodes"
        return WorstCase(None, prices, why=why, left_out=left_out)
    if launchable:
        return WorstCase(None, prices, why=_no_bound(launchable, prices), unknown=True, left_out=left_out)
    dims = [d for d, limit in enumerate(counted) if limit < math.inf]
    items = tuple((p, tuple(capacity(t)[d] for d in dims)) for t, p in fits)
    cost, counts, exact = dearest(items, tuple(counted[d] for d in dims))
    used = [(fits[j][0], k) for j, k in enumerate(counts) if k]
    fill = tuple(sorted(((t.name, k, price_of(t.name) or 0.0) for t, k in used), key=lambda f: (-f[2], f[0])))
    bound = " and ".join(
        _limit_text(COUNTED[d], limits[COUNTED[d]]) for d in _binding(dims, counted, used, [t for t, _ in fits])
    )
    top = max(fits, key=lambda f: (f[1], f[0].name))
    return _finite(
        WorstCase(round(cost, 6), prices, fill, bound, exact=exact, left_out=left_out, dearest=(top[0].name, top[1]))
    )


def _no_bound(unpriced: Sequence[str], prices: Prices) -> str:
    """Why a pool that can launch a type the table does not price, in a region the table does not list, has no
    worst case: Karpenter launches it all the same, priced from the AWS Price List API (karpenter-provider-aws
    ``pkg/providers/pricing/pricing.go``)."""
    named = ", ".join(unpriced[:3]) + (f" and {len(unpriced) - 3} more" if len(unpriced) > 3 else "")
    return (
        f"it can launch {named}, which the {prices.table_region} list does not price ({prices.note}) and "
        f"Karpenter prices from the AWS Price List API: give {'its price' if len(unpriced) == 1 else 'their prices'} "
        f"under prices"
    )


def _finite(worst: WorstCase) -> WorstCase:
    """``worst``, or unbounded when its figure is past what a float holds (limits or sizes of hundreds of digits)."""
    if worst.usd is None or math.isfinite(worst.usd):
        return worst
    return WorstCase(
        None,
        worst.prices,
        why=f"{worst.bound} at these prices is more dollars than can be counted",
        left_out=worst.left_out,
    )


def _binding(
    dims: Sequence[int],
    counted: Sequence[float],
    used: Sequence[tuple[instances.InstanceType, int]],
    types: Sequence[instances.InstanceType],
) -> list[int]:
    """The limits a fill leaves too little of for one more node of any type (all of them, for no fill)."""
    spent = [sum(capacity(t)[d] * k for t, k in used) for d in range(len(COUNTED))]
    smallest = [min((capacity(t)[d] for t in types if capacity(t)[d] > 0), default=0.0) for d in range(len(COUNTED))]
    return [d for d in dims if counted[d] - spent[d] < smallest[d]] or list(dims)


def group(instance_types: Sequence[str], max_size: float, prices: Prices) -> WorstCase:
    """A managed node group's worst case: ``max_size`` nodes of its dearest instance type."""
    priced = [(t, p) for t in instance_types if (p := prices.of(t)) is not None]
    unpriced = tuple(t for t in instance_types if prices.of(t) is None)
    if unpriced:
        return WorstCase(None, prices, why=f"no price for {', '.join(unpriced)}", unknown=True, left_out=unpriced)
    if not priced:
        return WorstCase(None, prices, why="its instance types are not known", unknown=True)
    name, price = max(priced, key=lambda f: (f[1], f[0]))
    return _finite(
        WorstCase(
            round(max_size * price, 6),
            prices,
            ((name, int(max_size), price),),
            f"max_size {max_size:g}",
            dearest=(name, price),
        )
    )


# ---- during a rollout ---------------------------------------------------------------------------------------

EKS_REGION_AZS_MAX = 6
"""The most Availability Zones an AWS Region has (us-east-1 has six): a node group whose subnets are not known
spans at most that many."""
EKS_MAX_UNAVAILABLE_DEFAULT = 1
"""EKS's ``updateConfig`` default: one node unavailable at a time (the EKS API reference, NodegroupUpdateConfig)."""
KARPENTER_DEFAULT_BUDGET = "10%"
"""The NodePool CRD's default ``disruption.budgets`` (v1.14.1): ``nodes: 10%``."""


@dataclass(frozen=True)
class Rollout:
    """What a lane can cost an hour while its nodes roll onto a new AMI or version."""

    usd: Optional[float]
    """US dollars an hour; None: no figure (the steady worst case has none)."""
    detail: str

    @property
    def figure(self) -> str:
        return usd(self.usd) if self.usd is not None else "unbounded" if "unbounded" in self.detail else "not known"


def _none(worst: WorstCase) -> Rollout:
    return Rollout(None, "unbounded" if worst.unbounded else "not known")


def group_rollout(
    worst: WorstCase,
    max_size: float,
    subnets: Optional[int],
    max_unavailable: Optional[float] = None,
    max_unavailable_percentage: Optional[float] = None,
) -> Rollout:
    """A managed node group during an update: EKS raises its maximum and desired size by the larger of twice
    its Availability Zones and its ``maxUnavailable`` (the EKS user guide, Managed node update behavior, scale-up
    phase), new nodes of its dearest type. Its AZs are at most its subnets (a subnet is in one AZ), or
    ``EKS_REGION_AZS_MAX`` when they are not known."""
    if worst.usd is None or not worst.fill:
        return _none(worst)
    azs = min(subnets, EKS_REGION_AZS_MAX) if subnets else EKS_REGION_AZS_MAX
    unavailable = (
        max_unavailable
        if max_unavailable is not None
        else math.ceil(max_size * max_unavailable_percentage / 100)
        if max_unavailable_percentage is not None
        else EKS_MAX_UNAVAILABLE_DEFAULT
    )
    surge = int(max(2 * azs, unavailable))
    name, price = worst.dearest
    where = f"{azs} subnets" if subnets and subnets <= EKS_REGION_AZS_MAX else f"at most {azs} Availability Zones"
    return Rollout(
        round(worst.usd + surge * price, 6),
        f"max_size {max_size:g} + {surge} x {name} at {usd(price)}: EKS surges by the larger of twice its "
        f"Availability Zones ({where}) and maxUnavailable {unavailable:g}",
    )


def pool_rollout(worst: WorstCase, budgets: Any) -> Rollout:
    """A Karpenter pool while its nodes drift: Karpenter launches each replacement before the node it replaces
    goes, and does not count the old node against the pool's limits (kubernetes-sigs/karpenter
    ``pkg/controllers/disruption/helpers.go``), so at most as many nodes as its disruption budgets let drift at
    once (``nodes``, a count or a percentage of its nodes, rounded up; budgets with a ``schedule``, or whose
    ``reasons`` leave out ``Drifted``, hold it only at times) run twice, the new ones of its dearest type."""
    if worst.usd is None:
        return _none(worst)
    if not worst.fill:
        if worst.usd == 0:
            return Rollout(0.0, "no node")
        return Rollout(None, "not known: a fractional bound counts no nodes")
    nodes = worst.nodes
    given = (
        budgets
        if isinstance(budgets, Sequence) and not isinstance(budgets, str)
        else [{"nodes": KARPENTER_DEFAULT_BUDGET}]
    )
    allowed = nodes
    held = ""
    for budget in given:
        budget = bootfacts.as_map(budget)
        reasons = budget.get("reasons")
        if budget.get("schedule") is not None or (
            isinstance(reasons, Sequence) and not isinstance(reasons, str) and "Drifted" not in reasons
        ):
            continue
        text = str(budget.get("nodes", KARPENTER_DEFAULT_BUDGET)).strip()
        try:
            count = math.ceil(nodes * float(text[:-1]) / 100) if text.endswith("%") else int(text)
        except ValueError:
            continue
        if count < allowed:
            allowed, held = max(count, 0), f"disruption budget nodes {text}"
    name, price = worst.dearest
    return Rollout(
        round(worst.usd + allowed * price, 6),
        f"{nodes} node{'s' if nodes != 1 else ''} + {allowed} drift replacement{'s' if allowed != 1 else ''} "
        f"of {name} at {usd(price)}" + (f", within {held}" if held else ", every node at once"),
    )


# ---- lowering a limit to a budget -------------------------------------------------------------------------


def _largest(fits: Callable[[int], bool], start: int) -> Optional[int]:
    """The largest whole ``v`` in [0, start] with ``fits(v)`` (true up to some ``v``, false past it), or None
    when not even 0 fits."""
    if not fits(0):
        return None
    low, high = 0, start
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def pool_fix(
    requirements: Sequence[wellknown.Requirement],
    limits: Mapping[str, float],
    prices: Prices,
    budget: float,
    gpu_lane: bool,
    written: Mapping[str, str] = {},
    fields: Mapping[str, str] = {},
) -> str:
    """What brings a pool's worst case within ``budget`` and keeps it a lane pods land on: the one limit to lower
    (or set), ``lower limits.nvidia.com/gpu: 64 -> 8, for a worst case of $55.04 an hour``; else the sizes to
    keep; else that no node it can launch fits the budget. A GPU lane's GPU limit comes first, else the limit it
    sets that keeps the most of itself, else a ``cpu`` limit to set; never a limit that leaves the pool no node
    (``nodes`` is no option: it holds only between scheduling passes). ``written``: the limits as the NodePool
    writes them; ``fields``: the spec field setting each."""
    gpus = [r for r in (contract.NVIDIA_GPU, contract.AMD_GPU) if r in limits] or [contract.NVIDIA_GPU]
    options: list[tuple[float, str, int]] = []
    for resource in [*(gpus if gpu_lane else []), CPU, MEMORY, *([] if gpu_lane else gpus)]:
        unit = fit.GIB if resource == MEMORY else 1.0
        set_now = resource in limits and math.isfinite(limits[resource])
        if not set_now and resource not in (gpus[0] if gpu_lane else CPU, CPU):  # a cpu limit may always be set
            continue

        def worst(v: int, resource: str = resource, unit: float = unit) -> Optional[float]:
            return pool(requirements, {**limits, resource: v * unit}, prices).usd

        def within(v: int) -> bool:
            amount = worst(v)
            return amount is not None and amount <= budget + EPSILON

        top = int(limits[resource] // unit) if set_now else 1
        while not set_now and top < 2**40 and within(top):  # a limit it does not set: how far one could go
            top *= 2
        value = _largest(within, top)
        if value is None:
            continue
        steady = worst(value) or 0.0
        if steady <= EPSILON:  # at that limit the pool launches no node: a lane nothing lands on
            continue
        below = _largest(lambda v: (w := worst(v)) is not None and w < steady - EPSILON, value)
        value = 0 if below is None else below + 1  # 8 GPUs, not the 15 that still buy one 8-GPU node
        if value == 0:  # a limit of none: what the lane is for (its GPUs) never lands there
            continue
        if gpu_lane and resource == gpus[0]:
            options.append((2.0, resource, value))  # a GPU lane's GPU limit, when it does
            break
        kept = value / (limits[resource] / unit) if set_now and limits[resource] > 0 else 0.0
        options.append((kept if set_now else -1.0, resource, value))
    if not options:
        return _sizes_fix(requirements, limits, prices, budget)
    _, resource, value = max(options, key=lambda o: o[0])
    unit, suffix = (fit.GIB, "Gi") if resource == MEMORY else (1.0, "")
    after = f"for a worst case of {usd(pool(requirements, {**limits, resource: value * unit}, prices).usd)} an hour"
    field_name = f" (the pool's {fields[resource]})" if resource in fields else ""
    if resource in limits and (math.isfinite(limits[resource]) or resource in written):  # 1e400 is set, to no bound
        was = written.get(resource) or f"{limits[resource] / unit:g}{suffix}"
        return f"lower limits.{resource}: {was} -> {value}{suffix}{field_name}, {after}"
    return f"set limits.{resource}: {value}{suffix}{field_name}, {after}"


def _sizes_fix(
    requirements: Sequence[wellknown.Requirement], limits: Mapping[str, float], prices: Prices, budget: float
) -> str:
    """When no one limit brings a pool within ``budget`` and leaves it a node: the sizes whose one node fits the
    budget (the pool's ``instance_sizes``), or that no node of the pool fits it, naming the cheapest."""
    types, _ = wellknown.launchable(tuple(requirements) or ANY_INSTANCE)
    within = fit.within_limits(limits)
    priced = sorted(((p, t.name) for t, p in _priced([t for t in types if within(t)], prices.of)[0]))
    if not priced:
        return ""
    cheapest, name = priced[0]
    if cheapest > budget + EPSILON:
        return f"no node of it fits that budget: the cheapest it can launch, {name}, costs {usd(cheapest)} an hour"
    sizes = list(dict.fromkeys(_size(n) for p, n in priced if p <= budget + EPSILON and _size(n)))
    return (
        "no one limit brings it under and leaves it a node: keep only sizes one node of which fits it "
        f"({', '.join(sizes)})"
    )


def _size(instance_type: str) -> str:
    """``4xlarge`` of ``g6.4xlarge``."""
    return instance_type.partition(".")[2]


def group_fix(worst: WorstCase, max_size: float, min_size: Optional[float], budget: float) -> str:
    """``lower max_size: 3 -> 1, for a worst case of $0.526 an hour``, or why no size does."""
    if not worst.fill:
        return ""
    name, _, price = worst.fill[0]
    size = int((budget + EPSILON) // price) if price > 0 else int(max_size)
    if size < 1:
        return f"no size fits: one {name} costs {usd(price)} an hour"
    also = f" (and min_size {min_size:g} -> {size})" if min_size is not None and min_size > size else ""
    return f"lower max_size: {max_size:g} -> {size}{also}, for a worst case of {usd(size * price)} an hour"


# ---- the stack's lanes and budgets -------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    usd: float
    where: str
    """``its max_hourly_usd``, ``maxHourlyUsd in the policy config``, ``budgets.gpu in the policy config``."""


STEADY, ROLLOUT = "steady", "rollout"
"""The two figures a budget can hold: a lane at its limits, or a lane at its limits while its nodes roll."""
INCLUDE, EXCLUDE = "include", "exclude"
"""How budgets count a lane's reserved part (``reserved`` in the config): in its worst case, or left out of it."""


@dataclass(frozen=True)
class Paid:
    """A lane's reserved part: its reservations' instances, billed whether nodes run on them or not."""

    ids: tuple[str, ...]
    """The reservations the lane names, in its order."""
    nodes: int
    """Their instances that take nodes now (neither ended nor not started), whose facts are known."""
    usd: float
    """Those instances an hour, at their type's price (a Capacity Block is paid up front for its duration)."""
    parts: tuple[str, ...] = ()
    """Each counted reservation, for a message: ``2 x p5.48xlarge at $55.04 (Capacity Block cr-...)``."""
    unknown: tuple[str, ...] = ()
    """Why a reservation is not counted (its facts or price are not known), for a message."""
    unpriced: tuple[str, ...] = ()
    """The instance types of reservations that take nodes now which ``prices`` does not price."""

    @property
    def detail(self) -> str:
        """``reserved: 2 nodes, $110.08 an hour already paid (2 x p5.48xlarge at $55.04, Capacity Block cr-...)``."""
        counted = f" ({'; '.join(self.parts)})" if self.parts else ""
        missing = f"; not counted: {'; '.join(self.unknown)}" if self.unknown else ""
        return (
            f"reserved: {self.nodes} node{'' if self.nodes == 1 else 's'}, {usd(self.usd)} an hour already paid"
            f"{counted}{missing}"
        )


@dataclass(frozen=True)
class LaneCost:
    name: str
    subject: str
    kind: str
    """``pool`` or ``node group``."""
    urn: str
    worst: WorstCase
    gpu: bool = False
    budgets: tuple[Budget, ...] = ()
    fix: Callable[[float], str] = field(default=lambda budget: "", compare=False, repr=False)
    """The limit to lower to meet a budget (``pool_fix``, ``group_fix``)."""
    canary_of: str = ""
    """The lane this one is the canary of (its NodePool's annotation, its node group's tag ``contract.CANARY_OF``)."""
    rollout: Rollout = Rollout(None, "not known")
    """What it can cost an hour while its nodes roll (``pool_rollout``, ``group_rollout``)."""
    paid: Optional[Paid] = None
    """Its reserved part (``reserved_part``); None: it names no reservation."""

    def held(self, figure: str, reserved_counts: str = INCLUDE) -> Optional[float]:
        """The figure a budget holds: steady or during a rollout, less the part already paid when the budgets
        exclude it (never below $0)."""
        amount = self.rollout.usd if figure == ROLLOUT else self.worst.usd
        if amount is None or reserved_counts != EXCLUDE or self.paid is None:
            return amount
        return max(0.0, round(amount - self.paid.usd, 6))


@dataclass(frozen=True)
class RackCost:
    name: str
    urn: str
    lanes: tuple[LaneCost, ...]
    budget: Optional[Budget]
    control_plane: float = 0.0
    """Its EKS control plane an hour, as the rack registered it (``control_plane``), in its worst case."""
    control_plane_price: str = ""

    @property
    def usd(self) -> Optional[float]:
        return summed([*(lane.worst.usd for lane in self.lanes), self.control_plane])

    @property
    def rollout_usd(self) -> Optional[float]:
        return summed([*(lane.rollout.usd for lane in self.lanes), self.control_plane])


def total(lanes: Sequence[LaneCost]) -> Optional[float]:
    """The sum of the lanes' worst cases; None when one is unbounded or not known."""
    return summed([lane.worst.usd for lane in lanes])


def summed(figures: Sequence[Optional[float]]) -> Optional[float]:
    """Worst cases added up (to the table's six decimals); None when one is None."""
    if any(f is None for f in figures):
        return None
    added = round(sum(f or 0.0 for f in figures), 6)
    return added if math.isfinite(added) else None  # past what a float holds: unbounded


@dataclass(frozen=True)
class Costs:
    prices: Prices
    lanes: tuple[LaneCost, ...] = ()
    racks: tuple[RackCost, ...] = ()
    stack_budget: Optional[Budget] = None
    unknown: tuple[tuple[str, str], ...] = ()
    """(urn, subject) of lanes whose facts are not known at preview."""
    budgeted: bool = False
    """Whether any budget applies (the config's, a rack's, a lane's): only then does an unknown lane matter."""
    figure: str = STEADY
    """Which worst case the budgets hold: ``steady`` (the default) or ``rollout`` (``figure`` in the config)."""
    reserved: str = INCLUDE
    """Whether the budgets count the lanes' reserved parts (``include``, the default) or leave them out (``exclude``).
    """

    @property
    def usd(self) -> Optional[float]:
        """Every lane's worst case and every rack's control plane."""
        return summed([total(self.lanes), *(rack.control_plane for rack in self.racks)])


def stack_region(environ: Optional[Mapping[str, str]] = None) -> str:
    """The stack's region: its ``aws:region`` (the CLI hands a pack the stack's config, ``lookup``), else
    ``AWS_REGION`` or ``AWS_DEFAULT_REGION`` (where the AWS provider looks next); '' when none says."""
    env = os.environ if environ is None else environ
    for value in (
        lookup.stack_aws_settings(env).get("region_name"),
        env.get("AWS_REGION"),
        env.get("AWS_DEFAULT_REGION"),
    ):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _number(value: Any) -> Optional[float]:
    number = bootfacts.number(value)
    return number if number is not None and math.isfinite(number) and number > 0 else None


def config_prices(config: Mapping[str, Any]) -> dict[str, float]:
    return {
        str(k): float(v)
        for k, v in bootfacts.as_map(config.get("prices")).items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
    }


def _written_limits(props: Mapping[str, Any]) -> dict[str, str]:
    return {
        str(k): (v if isinstance(v, str) else f"{v:g}")
        for k, v in bootfacts.as_map(bootfacts.dig(props, "spec", "limits")).items()
        if isinstance(v, (str, int, float)) and not isinstance(v, bool)
    }


Found = tuple[tuple["LaneCost", ...], tuple[tuple[str, str], ...]]
"""Every lane's cost with the budgets our components give it, and (urn, subject) of lanes not known at preview."""


def lanes_of(stack: checks.Stack, prices: Prices, unknown: checks.Unknown = ()) -> Found:
    """Every NodePool's and managed node group's worst case, with its component's budget (``max_hourly_usd``)."""
    by_urn = {res.urn: res for res in stack.resources}
    applied = overlays.applied(stack.resources, unknown)  # the NodeOverlays Karpenter applies to every pool
    lanes: list[LaneCost] = []
    not_known: list[tuple[str, str]] = []
    for res, lane in stack.items:
        try:
            found = _lane_cost(res, lane, stack, by_urn, prices, applied)
        except unknown:
            not_known.append((res.urn, f"{res.type.rsplit(':', 1)[-1]} '{res.name}'"))
            continue
        if found is not None:
            lanes.append(found)
    return tuple(lanes), tuple(not_known)


def reserved_part(ids: Sequence[str], knowledge: reserved.Knowledge, prices: Prices, now: datetime) -> Paid:
    """What a lane's reservations bill an hour whether its nodes run or not: each one that takes nodes now (neither
    ended nor not started), its instance count at its type's price in ``prices``."""
    nodes, amount, parts, unknown, unpriced = 0, 0.0, [], [], []
    for reservation_id in ids:
        found, why = knowledge.reservation(reservation_id)
        if found is None:
            unknown.append(f"{reservation_id}, {'not one the account has' if why == reserved.NOT_FOUND else why}")
            continue
        if found.ended(now) or found.not_started(now):
            continue
        price = prices.of(found.instance_type) if found.instance_type else None
        if price is None and found.instance_type:
            unpriced.append(found.instance_type)
        if found.count is None or price is None:
            unknown.append(
                f"{found.word}, whose {'instance count' if found.count is None else 'price'} is not known"
                + ("" if found.count is None else f" ({found.instance_type or 'no instance type'})")
            )
            continue
        nodes += found.count
        amount += found.count * price
        parts.append(f"{found.count} x {found.instance_type} at {usd(price)}, {found.word}")
    return Paid(tuple(ids), nodes, round(amount, 6), tuple(parts), tuple(unknown), tuple(dict.fromkeys(unpriced)))


def _reserved_unpriced(lane: LaneCost, paid: Paid) -> LaneCost:
    """``lane`` with its reserved part; with no figure when a reservation's type has no price: Karpenter v1.14.1 offers
    a reservation's nodes even when it knows no on-demand price for the type (karpenter-provider-aws
    ``pkg/providers/instancetype/offering/reserved_capacity_resolver.go``: the offering's price is then 0), so the
    lane launches a type the worst case, which counts priced types only, leaves out."""
    if not paid.unpriced or lane.worst.usd is None:
        return replace(lane, paid=paid)
    named = ", ".join(paid.unpriced)
    why = (
        f"it launches {named} into its reservations, which the {lane.worst.prices.table_region} list does not price "
        f"({lane.worst.prices.note or 'not sold on demand there'}): give "
        f"{'its price' if len(paid.unpriced) == 1 else 'their prices'} "
        f"under prices"
    )
    worst = WorstCase(None, lane.worst.prices, why=why, unknown=True)
    return replace(lane, paid=paid, worst=worst, rollout=_none(worst))


def _with_paid(
    stack: checks.Stack,
    lanes: Sequence[LaneCost],
    knowledge: reserved.Knowledge,
    prices: Prices,
    now: datetime,
    unknown: checks.Unknown,
) -> list[LaneCost]:
    """``lanes`` with the reserved part of each that names reservations (as the reservation policies read them)."""
    try:
        model = read_lanes(stack.resources, {}, unknown)
    except unknown:
        return list(lanes)
    named = {
        (lane.kind, lane.name): lane.reservations.ids
        for lane in model.lanes
        if lane.reservations is not None and not lane.reservations.canary_of
    }  # a canary's lane holds them
    return [
        _reserved_unpriced(lane, reserved_part(named[lane.kind, lane.name], knowledge, prices, now))
        if (lane.kind, lane.name) in named
        else lane
        for lane in lanes
    ]


def survey(
    stack: checks.Stack,
    config: Mapping[str, Any],
    prices: Prices,
    found: Optional[Found] = None,
    unknown: checks.Unknown = (),
    knowledge: Optional[reserved.Knowledge] = None,
    now: Optional[datetime] = None,
) -> Costs:
    """Every lane's worst case and budgets (``config``: ``lane-cost-ceiling``'s), each rack's and the stack's;
    ``found``: ``lanes_of`` the stack, when the caller has it already; ``knowledge``: what is known of the
    reservations the lanes name (their reserved parts), at ``now``."""
    lanes, not_known = found if found is not None else lanes_of(stack, prices, unknown)
    if knowledge is not None:
        lanes = tuple(_with_paid(stack, lanes, knowledge, prices, now or clock.now(), unknown))
    default = _number(config.get("maxHourlyUsd"))
    named = {str(k): n for k, v in bootfacts.as_map(config.get("budgets")).items() if (n := _number(v)) is not None}
    budgeted = []
    for lane in lanes:
        given = (
            Budget(named[lane.name], f"budgets.{lane.name} in the policy config")
            if lane.name in named
            else Budget(default, "maxHourlyUsd in the policy config")
            if default is not None
            else None
        )
        budgeted.append(replace(lane, budgets=(*lane.budgets, given)) if given else lane)
    names = {lane.name for lane in budgeted}
    # a canary counts against its lane's budgets (its pods are the lane's), unless a budget names the canary itself
    budgeted = [
        replace(
            lane,
            budgets=(Budget(named[lane.name], f"budgets.{lane.name} in the policy config"),)
            if lane.name in named
            else (),
        )
        if lane.canary_of and lane.canary_of in names
        else lane
        for lane in budgeted
    ]
    by_urn = {res.urn: res for res in stack.resources}
    racks = tuple(
        RackCost(
            res.name,
            res.urn,
            tuple(lane for lane in budgeted if _descends(lane.urn, res.urn, by_urn)),
            _budget_of(res),
            _number(bootfacts.as_map(res.props).get(CONTROL_PLANE_OUTPUT)) or 0.0,
            bootfacts.text(bootfacts.as_map(res.props).get(CONTROL_PLANE_PRICE_OUTPUT)),
        )
        for res in stack.resources
        if res.type == contract.COMPONENT_RACK
    )
    whole = _number(config.get("totalMaxHourlyUsd"))
    any_budget = bool(
        default or named or whole or any(r.budget for r in racks) or any(lane.budgets for lane in budgeted)
    )
    figure = ROLLOUT if config.get("figure") == ROLLOUT else STEADY
    counts = EXCLUDE if config.get("reserved") == EXCLUDE else INCLUDE
    return Costs(
        prices,
        tuple(budgeted),
        racks,
        Budget(whole, "totalMaxHourlyUsd in the policy config") if whole else None,
        not_known,
        any_budget,
        figure,
        counts,
    )


def _descends(urn: str, ancestor: str, by_urn: Mapping[str, checks.StackResource]) -> bool:
    seen: set[str] = set()
    while urn and urn not in seen:
        seen.add(urn)
        res = by_urn.get(urn)
        urn = res.parent if res is not None else ""
        if urn == ancestor:
            return True
    return False


def _owner(
    res: checks.StackResource, by_urn: Mapping[str, checks.StackResource], kinds: tuple[str, ...]
) -> Optional[checks.StackResource]:
    """The nearest component of one of ``kinds`` above ``res`` (our ``KarpenterPool`` or ``NodeGroup``, by its
    type token or its former one: a state written before has that), if any."""
    parent, seen = res.parent, set()
    while parent and parent not in seen:
        seen.add(parent)
        owner = by_urn.get(parent)
        if owner is None or owner.type in kinds:
            return owner
        parent = owner.parent
    return None


def _count(items: Any) -> Optional[int]:
    """How many items a list has (each may be unknown), or None when it is not a list."""
    return len(items) if isinstance(items, Sequence) and not isinstance(items, str) and items else None


def _budget_of(owner: Optional[checks.StackResource]) -> Optional[Budget]:
    """The budget our component registered for the lane it built (``max_hourly_usd``), if any."""
    budget = _number(bootfacts.as_map(owner.props).get(BUDGET_OUTPUT)) if owner is not None else None
    return Budget(budget, "its max_hourly_usd") if budget else None


def _lane_cost(
    res: checks.StackResource,
    lane: bootfacts.LaneResource,
    stack: checks.Stack,
    by_urn: Mapping[str, checks.StackResource],
    prices: Prices,
    applied: tuple[overlays.Overlay, ...] = (),
) -> Optional[LaneCost]:
    """A NodePool's or an EKS managed node group's worst case, budget and fix; None for other lanes."""
    props = res.props
    if isinstance(lane, bootfacts.NodePool):
        requirements = tuple(lane.requirements())
        limits, refused, as_written = bootfacts.node_pool_limits(bootfacts.dig(props, "spec", "limits"))
        replicas = bootfacts.number(bootfacts.dig(props, "spec", "replicas"))
        replicas = replicas if replicas is not None and math.isfinite(replicas) and replicas >= 0 else None
        labels = tuple(
            sorted(
                (str(k), bootfacts.text(v))
                for k, v in bootfacts.as_map(bootfacts.dig(props, "spec", "template", "metadata", "labels")).items()
            )
        )
        worst = (
            WorstCase(0.0, prices, why=f"it {refused}")
            if refused
            else pool(requirements, limits, prices, replicas, as_written, (applied, lane.subject_name, labels))
        )
        gpu = checks.gpu_reason(lane) is not None
        owner = _owner(res, by_urn, contract.POOL_TYPES)
        budget = _budget_of(owner)
        field_names = (
            {
                CPU: "cpu_limit",
                MEMORY: "memory_limit_gb",
                contract.NVIDIA_GPU: "gpu_limit",
                contract.AMD_GPU: "gpu_limit",
            }
            if owner is not None
            else {}
        )
        written = _written_limits(props)

        def fix(amount: float) -> str:
            if replicas is not None:  # a static pool: its dearest type, as many as the budget buys
                if not worst.fill:
                    return ""
                price = worst.fill[0][2]
                nodes = int((amount + EPSILON) // price) if price > 0 else int(replicas)
                return f"lower replicas: {replicas:g} -> {nodes}, for a worst case of {usd(nodes * price)} an hour"
            return pool_fix(requirements, limits, prices, amount, gpu, written, field_names)

        return LaneCost(
            lane.subject_name,
            rules.pool_subject(lane.subject_name),
            "pool",
            res.urn,
            worst,
            gpu,
            (budget,) if budget else (),
            fix,
            bootfacts.text(bootfacts.dig(props, "metadata", "annotations", contract.CANARY_OF)),
            pool_rollout(worst, bootfacts.dig(props, "spec", "disruption", "budgets")),
        )
    if isinstance(lane, bootfacts.EksNodeGroup):
        scaling = bootfacts.as_map(props.get("scalingConfig"))
        max_size = bootfacts.number(scaling.get("maxSize"))
        min_size = bootfacts.number(scaling.get("minSize"))
        template = stack.launch_template(res)
        types = lane.instance_types() or (template.instance_types() if template is not None else [])
        if not types:
            defaults = group_requirements((), bootfacts.text(props.get("amiType")))
            types = list(defaults[0].values) if defaults[0].key == wellknown.TYPE_KEY else []
        own = bootfacts.text(props.get("region"))
        group_prices = replace(prices, region=own) if own else prices
        if max_size is None or not math.isfinite(max_size) or max_size < 0:
            worst = WorstCase(None, group_prices, why="its scalingConfig.maxSize is not known", unknown=True)
        else:
            worst = group(types, max_size, group_prices)
        gpu = checks.gpu_reason(lane) is not None
        budget = _budget_of(_owner(res, by_urn, contract.NODE_GROUP_TYPES))
        return LaneCost(
            lane.subject_name,
            rules.node_group_subject(lane.subject_name),
            "node group",
            res.urn,
            worst,
            gpu,
            (budget,) if budget else (),
            lambda amount: group_fix(worst, max_size or 0, min_size, amount),
            bootfacts.text(bootfacts.dig(props, "tags", contract.CANARY_OF)),
            group_rollout(
                worst,
                max_size or 0,
                _count(props.get("subnetIds")),
                bootfacts.number(bootfacts.dig(props, "updateConfig", "maxUnavailable")),
                bootfacts.number(bootfacts.dig(props, "updateConfig", "maxUnavailablePercentage")),
            ),
        )
    return None


# ---- the policies' findings ----------------------------------------------------------------------------------

_USD = {"type": "number", "exclusiveMinimum": 0}
CEILING_SCHEMA: dict[str, Any] = {
    "maxHourlyUsd": {**_USD, "description": "Every lane's budget, US dollars an hour, unless budgets names it."},
    "budgets": {
        "type": "object",
        "default": {},
        "additionalProperties": _USD,
        "description": "Budgets by lane name (a NodePool's metadata.name, a node group's name), US dollars an hour.",
    },
    "totalMaxHourlyUsd": {**_USD, "description": "The budget of all the stack's lanes together, US dollars an hour."},
    "prices": {
        "type": "object",
        "default": {},
        "additionalProperties": {"type": "number", "minimum": 0},
        "description": "On-demand US dollars an hour by instance type, over the table's (the stack's region).",
    },
    "figure": {
        "type": "string",
        "enum": ["steady", "rollout"],
        "default": "steady",
        "description": "Which worst case every budget holds: the lanes at their limits (steady), or at their "
        "limits while their nodes roll onto a new AMI or version (rollout).",
    },
    "reserved": {
        "type": "string",
        "enum": [INCLUDE, EXCLUDE],
        "default": INCLUDE,
        "description": "How budgets count a lane's reserved part (its capacity reservations' instances, billed "
        "whether used or not): in the worst case (include), or left out of it (exclude).",
    },
    "lookup": reserved.SCHEMA["lookup"],
    "reservations": reserved.SCHEMA["reservations"],
}
"""``lane-cost-ceiling``'s config (what the CLI checks before ``Configure``)."""


def config_problems(props: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``lane-cost-ceiling``'s properties beyond what its schema says, each naming its path: a
    price for what is no instance type (``G5.XLARGE``, ``g5.large``), which no lane's look-up would ever read."""
    return [
        f"prices: {problem}"
        for name in bootfacts.as_map(props.get("prices"))
        if (problem := syntax.priced_type_problem(str(name)))
    ]


def _note(prices: Prices) -> str:
    return f" ({prices.note})" if prices.note else ""


@dataclass(frozen=True)
class _Held:
    """A lane (with its canaries) as a budget judges it: the figure, in words, and the fix."""

    usd: Optional[float]
    words: str
    worst: WorstCase
    fix: Callable[[float], str]


def _held(lane: LaneCost, canaries: Sequence[LaneCost], figure: str, reserved_counts: str = INCLUDE) -> _Held:
    """``lane`` with ``canaries`` (they take its pods at once) under ``figure``: steady, or during a rollout (the
    fix then lowers the steady figure by what a rollout adds at the limits as they are), less its reserved part
    when the budgets exclude it (the fix then leaves room for it)."""
    both = (lane, *canaries)

    def amount(c: LaneCost) -> Optional[float]:
        return c.held(figure, reserved_counts)

    def said(c: LaneCost) -> str:
        if figure == ROLLOUT:
            return f"{c.rollout.figure}{' an hour' if c.rollout.usd is not None else ''} ({c.rollout.detail})"
        return c.worst.words()

    figures = summed([amount(c) for c in both])
    unknown = next((c.worst for c in both if c.worst.unknown), lane.worst)
    if not canaries:
        words = said(lane)
    else:
        words = (
            f"{usd(figures) + ' an hour' if figures is not None else 'unbounded'} with its canary ("
            + "; ".join(f"{c.name} {said(c)}" for c in both)
            + ")"
        )
    excluded = _excluded(lane, reserved_counts)
    if excluded:
        words += f", less {usd(excluded)} an hour already paid ({'; '.join(lane.paid.parts if lane.paid else ())})"
    own = amount(lane)
    # what the budget must leave beside the lane's own steady figure: what a rollout adds to it (less the part already
    # paid, when the budgets leave it out), and the canaries
    extra = own - (lane.worst.usd or 0.0) if own is not None else 0.0 if figure != ROLLOUT else None
    added = summed([extra, *(amount(c) for c in canaries)])

    def fix(room: float) -> str:
        if added is None:
            return ""
        if room - added <= EPSILON:
            if canaries:
                return f"its canary alone leaves the lane nothing ({usd(added)} an hour): lower canary_nodes"
            if added > EPSILON:  # a node group's surge does not shrink with its max_size
                return f"what a rollout adds, {usd(added)} an hour, leaves the lane nothing: raise the budget"
            return ""
        return lane.fix(room - added)

    return _Held(figures, words, unknown, fix)


def _excluded(lane: LaneCost, reserved_counts: str) -> float:
    """The part of the lane's worst case its budgets leave out: its reserved part, when they exclude it."""
    return lane.paid.usd if reserved_counts == EXCLUDE and lane.paid is not None else 0.0


def _holds(figure: str, reserved_counts: str) -> str:
    """How a message says which figure a budget holds: ``steady``, ``rollout, reserved excluded``."""
    return figure + (", reserved excluded" if reserved_counts == EXCLUDE else "")


def ceiling(costs: Costs) -> Iterator[checks.Finding]:
    """``lane-cost-ceiling``: a lane, rack or stack whose worst case (``costs.figure``) is over a budget."""
    if costs.budgeted:
        for urn, subject in costs.unknown:
            yield checks.Finding(
                f"{subject}: its worst case per hour cannot be computed before its values are known", urn, certain=False
            )
    for lane in costs.lanes:
        canaries = [c for c in costs.lanes if c.canary_of == lane.name and c is not lane]
        if lane.budgets:
            held = _held(lane, canaries, costs.figure, costs.reserved)
        for budget in lane.budgets:
            yield from _judged(
                lane.subject, lane.urn, held.usd, budget, held.worst, held.fix, held.words, costs.figure, costs.reserved
            )
    for rack in costs.racks:
        if rack.budget is not None:
            yield from _rack_judged(
                f"rack '{rack.name}'",
                rack.urn,
                rack.lanes,
                rack.budget,
                costs.prices,
                costs.figure,
                rack.control_plane,
                rack.control_plane_price,
                costs.reserved,
            )
    if costs.stack_budget is not None:
        planes = summed([rack.control_plane for rack in costs.racks]) or 0.0
        yield from _rack_judged(
            "the stack",
            "",
            costs.lanes,
            costs.stack_budget,
            costs.prices,
            costs.figure,
            planes,
            f"{len(costs.racks)} rack{'s' if len(costs.racks) != 1 else ''}" if planes else "",
            costs.reserved,
        )


def _which(figure: str) -> str:
    return " during a rollout" if figure == ROLLOUT else ""


def _judged(
    subject: str,
    urn: str,
    amount: Optional[float],
    budget: Budget,
    worst: WorstCase,
    fix: Callable[[float], str],
    words: str,
    figure: str = STEADY,
    reserved_counts: str = INCLUDE,
) -> Iterator[checks.Finding]:
    if worst.unknown:
        yield checks.Finding(
            f"{subject}: cannot hold it to its budget of {usd(budget.usd)} an hour ({budget.where}): its "
            f"worst case is {words}; give the price under prices on {CEILING} in the policy config",
            urn,
            certain=False,
        )
        return
    if amount is not None and amount <= budget.usd + EPSILON:
        return
    lower = fix(budget.usd)
    action = f"; {lower}" if lower else ""
    yield checks.Finding(
        f"{subject}: its worst case{_which(figure)}, {words}, is over its budget of {usd(budget.usd)} an "
        f"hour ({budget.where}, {_holds(figure, reserved_counts)}){action}{_note(worst.prices)}",
        urn,
    )


def _rack_judged(
    subject: str,
    urn: str,
    lanes: Sequence[LaneCost],
    budget: Budget,
    prices: Prices,
    figure: str = STEADY,
    control_plane: float = 0.0,
    plane_price: str = "",
    reserved_counts: str = INCLUDE,
) -> Iterator[checks.Finding]:
    def amount(lane: LaneCost) -> Optional[float]:
        return lane.held(figure, reserved_counts)

    whole = summed([*(amount(lane) for lane in lanes), control_plane])
    if whole is not None and whole <= budget.usd + EPSILON:
        return
    if any(lane.worst.unknown for lane in lanes):
        names = ", ".join(lane.subject for lane in lanes if lane.worst.unknown)
        yield checks.Finding(
            f"{subject}: cannot hold it to its budget of {usd(budget.usd)} an hour ({budget.where}): the "
            f"worst case of {names} is not known",
            urn,
            certain=False,
        )
        return
    dearest_first = sorted(lanes, key=lambda lane: -(f if (f := amount(lane)) is not None else math.inf))
    parts = ", ".join(f"{lane.name} {usd(amount(lane))}" for lane in dearest_first)
    if control_plane:
        parts += f", and the EKS control plane {usd(control_plane)}" + (f" ({plane_price})" if plane_price else "")
    action = ""
    if dearest_first:
        top = dearest_first[0]
        if whole is None:
            action = f"; bound {top.subject} first"
        else:
            extra = (amount(top) or 0.0) - (top.worst.usd or 0.0)
            room = budget.usd - (whole - (amount(top) or 0.0)) - extra
            lower = top.fix(room) if room > 0 else ""
            action = (
                f"; on {top.subject}, {lower}"
                if lower
                else "; no one lane's limit brings it under: lower several, or raise the budget"
            )
    yield checks.Finding(
        f"{subject}: its worst case{_which(figure)}, {usd(whole)} an hour (the sum of its lanes: {parts}), "
        f"is over its budget of {usd(budget.usd)} an hour ({budget.where}, {_holds(figure, reserved_counts)})"
        f"{action}{_note(prices)}",
        urn,
    )


def unbounded(costs: Costs) -> Iterator[checks.Finding]:
    """``lane-cost-unbounded``: a GPU lane whose worst case has no bound."""
    for lane in costs.lanes:
        if lane.gpu and lane.worst.unbounded:
            yield checks.Finding(
                f"{lane.subject}: a GPU lane with no bound on what it costs an hour ({lane.worst.why}); "
                f"set limits.{contract.NVIDIA_GPU} (or cpu, memory, nodes) on it",
                lane.urn,
            )
