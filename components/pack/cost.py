"""Each lane's worst case per hour, and the budgets that hold it (``lane-cost-ceiling``, ``lane-cost-unbounded``).

A worst case is what a lane can cost an hour at on-demand prices (``prices``), at most:

* a Karpenter NodePool launches a node only when the node's capacity fits what is left of each of its
  ``limits`` (kubernetes-sigs/karpenter ``pkg/controllers/provisioning/scheduling/scheduler.go``,
  ``filterByRemainingResources``; ``limits.nodes`` counts one per node, ``pkg/utils/resources``), so its
  worst case is the dearest set of whole nodes, of the instance types its requirements let it launch
  (``wellknown``), that fits every limit it sets on ``cpu``, ``memory`` (capacity as Karpenter estimates it
  before a launch, ``fit.memory_capacity_mib``), ``nvidia.com/gpu``, ``amd.com/gpu`` and ``nodes``. When one
  limit binds, that is the limit filled with the types that cost the most per unit of it. A pool
  without such limits, or whose limits leave a type it can launch unbounded (a GPU limit and types
  without GPUs), is unbounded, as is one held only by a limit past any number of nodes (``cpu: "1e400"``).
  Limits are read as the API server takes them and Karpenter decodes them (``facts.node_pool_limits``, as the
  fit policies read them): a pool with a limit either refuses launches nothing. A static pool (``replicas``)
  runs ``replicas`` nodes (at most ``limits.nodes``) of its dearest type (``pkg/controllers/static/provisioning/controller.go``).
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
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from .. import contract, syntax
from . import checks, facts, fit, instances, lookup, overlays, rules, wellknown
from .lanemodel import ANY_INSTANCE
from .lanesource import group_requirements
from .prices import Prices, usd

CEILING, UNBOUNDED = "lane-cost-ceiling", "lane-cost-unbounded"
CPU, MEMORY, NODES = fit.CPU, fit.MEMORY, fit.NODES
COUNTED = fit.LIMITED
"""The limits a worst case counts: what the instance table gives per type (one node counts one ``nodes``), as
the fit policies count them (``fit.within_limits``)."""
BUDGET_OUTPUT, WORST_OUTPUT = "maxHourlyUsd", "worstCaseHourlyUsd"
"""What our components register: a lane's or a rack's budget, and a lane's worst case."""
SEARCH_STEPS = 5_000
EPSILON = 1e-9


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
    table = [[items[j][1][i] for j in range(cols)] + [1.0 if k == i else 0.0 for k in range(rows)] + [limits[i]]
             for i in range(rows)]
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
        if not any(items[k][0] >= items[j][0] and all(items[k][1][d] <= items[j][1][d] for d in range(dims)) for k in kept):
            kept.append(j)
    order = [j for j in order if j in set(kept)]
    suffix = [[0.0] * dims]
    for j in reversed(order):
        price, caps = items[j]
        suffix.insert(0, [max(s, price / caps[d]) if caps[d] > 0 and s < math.inf else math.inf
                          for d, s in enumerate(suffix[0])])

    # what is left of a limit can only be spent in steps of the capacities' common divisor (vCPUs come in twos)
    steps = [math.gcd(*(int(c[d]) for _, c in items)) if all(c[d] == int(c[d]) for _, c in items) else 0
             for d in range(dims)]

    def bound(i: int, left: tuple[float, ...]) -> float:
        return min((left[d] // steps[d] * steps[d] if steps[d] else left[d]) * suffix[i][d] if suffix[i][d] < math.inf
                   else math.inf for d in range(dims))

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
            stack.append((i + 1, tuple(left[d] - k * caps[d] for d in range(dims)), cost + k * price,
                          (order[i], k, path) if k else path))
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


def _priced(types: Sequence[instances.InstanceType], price_of: Callable[[str], Optional[float]]
            ) -> tuple[list[tuple[instances.InstanceType, float]], list[str]]:
    priced, unpriced = [], []
    for itype in types:
        price = price_of(itype.name)
        if price is None:
            unpriced.append(itype.name)
        else:
            priced.append((itype, price))
    return priced, unpriced


def pool(requirements: Sequence[wellknown.Requirement], limits: Mapping[str, float], prices: Prices,
         replicas: Optional[float] = None, written: Mapping[str, str] = {},
         overlaid: tuple[tuple[overlays.Overlay, ...], str, tuple[tuple[str, str], ...]] = ((), "", ())) -> WorstCase:
    """A NodePool's worst case, from its requirements and its ``limits`` (base units: cores, bytes; ``written``:
    how the NodePool writes them, for a limit past what a float holds); ``overlaid``: the NodeOverlays Karpenter
    applies to its types (the gate on), with the pool's name and template labels they match; the same pool is
    computed once (a rack's pools are often alike, and the pack's two policies read the same)."""
    return _pool(tuple(requirements), tuple(sorted(limits.items())), prices, replicas,
                 tuple(sorted((k, v) for k, v in written.items() if not math.isfinite(limits.get(k, 0.0)))), overlaid)


@functools.lru_cache(maxsize=4096)
def _pool(requirements: tuple[wellknown.Requirement, ...], given: tuple[tuple[str, float], ...], prices: Prices,
          replicas: Optional[float], texts: tuple[tuple[str, str], ...] = (),
          overlaid: tuple[tuple[overlays.Overlay, ...], str, tuple[tuple[str, str], ...]] = ((), "", ())) -> WorstCase:
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
    within = fit.within_limits(limits)  # the fit policies' test of a type against the limits
    fits = [(t, p) for t, p in priced if within(t)]
    if not types and not left_out:
        return WorstCase(0.0, prices, why="it can launch nothing: its requirements leave no instance type")
    if not priced:
        what = ", ".join(left_out[:3]) + (f" and {len(left_out) - 3} more" if len(left_out) > 3 else "")
        return WorstCase(None, prices, why=f"no price for what it can launch: {what}", unknown=True, left_out=left_out)
    below = fit.limits_below_zero(limits)
    if below:
        return WorstCase(0.0, prices, why=f"it can launch nothing: {_limit_text(below[0], limits[below[0]], written)} is below zero",
                         left_out=left_out)
    if not fits:
        return WorstCase(0.0, prices, why="no instance type it can launch fits its limits", left_out=left_out)
    if replicas is not None:
        nodes = min(replicas, limits.get(NODES, math.inf))
        itype, price = max(fits, key=lambda f: (f[1], f[0].name))
        bound = f"replicas {replicas:g}" + (f" and limits.nodes {nodes:g}" if nodes < replicas else "")
        return _finite(WorstCase(round(nodes * price, 6), prices, ((itype.name, int(nodes), price),) if nodes else (), bound,
                                 left_out=left_out))
    free = [t for t, _ in fits if all(c <= 0 or limit == math.inf for c, limit in zip(capacity(t), counted))]
    if free:
        has = dict(zip(COUNTED, capacity(free[0])))
        named = [r for r in COUNTED if r in limits and has[r] <= 0]
        huge = [_limit_text(r, limits[r], written) for r in COUNTED if r in limits and has[r] > 0]  # all infinite
        reasons = [f"its limits on {', '.join(named)} do not count {free[0].name}, which has none of them"] if named else []
        if huge:  # set, but to more than any number of nodes adds up to (what a float holds, and far past it)
            reasons.append(f"{' and '.join(huge)} {'is' if len(huge) == 1 else 'are'} past any number of nodes, so "
                           f"{'it bounds' if len(huge) == 1 else 'they bound'} nothing")
        why = ", and ".join(reasons) or "it has no limits on cpu, memory, GPUs or nodes"
        return WorstCase(None, prices, why=why, left_out=left_out)
    dims = [d for d, limit in enumerate(counted) if limit < math.inf]
    items = tuple((p, tuple(capacity(t)[d] for d in dims)) for t, p in fits)
    cost, counts, exact = dearest(items, tuple(counted[d] for d in dims))
    used = [(fits[j][0], k) for j, k in enumerate(counts) if k]
    fill = tuple(sorted(((t.name, k, price_of(t.name) or 0.0) for t, k in used), key=lambda f: (-f[2], f[0])))
    bound = " and ".join(_limit_text(COUNTED[d], limits[COUNTED[d]]) for d in _binding(dims, counted, used, [t for t, _ in fits]))
    return _finite(WorstCase(round(cost, 6), prices, fill, bound, exact=exact, left_out=left_out))


def _finite(worst: WorstCase) -> WorstCase:
    """``worst``, or unbounded when its figure is past what a float holds (limits or sizes of hundreds of digits)."""
    if worst.usd is None or math.isfinite(worst.usd):
        return worst
    return WorstCase(None, worst.prices, why=f"{worst.bound} at these prices is more dollars than can be counted",
                     left_out=worst.left_out)


def _binding(dims: Sequence[int], counted: Sequence[float], used: Sequence[tuple[instances.InstanceType, int]],
             types: Sequence[instances.InstanceType]) -> list[int]:
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
    return _finite(WorstCase(round(max_size * price, 6), prices, ((name, int(max_size), price),), f"max_size {max_size:g}"))


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


def pool_fix(requirements: Sequence[wellknown.Requirement], limits: Mapping[str, float], prices: Prices, budget: float,
             gpu_lane: bool, written: Mapping[str, str] = {}, fields: Mapping[str, str] = {}) -> str:
    """The one limit to lower (or set) that brings a pool's worst case within ``budget``: ``lower
    limits.nvidia.com/gpu: 64 -> 8, for a worst case of $55.04 an hour``; '' when no one limit does. A GPU
    lane's GPU limit comes first; else the limit it sets that keeps the most of itself; else a ``cpu`` limit
    to set. ``written``: the limits as the NodePool writes them; ``fields``: the spec field setting each."""
    gpus = [r for r in (contract.NVIDIA_GPU, contract.AMD_GPU) if r in limits] or [contract.NVIDIA_GPU]
    options: list[tuple[float, str, int]] = []
    for resource in [*(gpus if gpu_lane else []), NODES, CPU, MEMORY, *([] if gpu_lane else gpus)]:
        unit = fit.GIB if resource == MEMORY else 1.0
        set_now = resource in limits and math.isfinite(limits[resource])
        if not set_now and resource != (gpus[0] if gpu_lane else CPU):
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
        below = _largest(lambda v: (w := worst(v)) is not None and w < steady - EPSILON, value)
        value = 0 if below is None else below + 1  # 8 GPUs, not the 15 that still buy one 8-GPU node
        if gpu_lane and resource == gpus[0]:
            options.append((2.0, resource, value))  # a GPU lane's GPU limit, when it does
            break
        kept = value / (limits[resource] / unit) if set_now and limits[resource] > 0 else 0.0
        options.append((kept if set_now else -1.0, resource, value))
    if not options:
        return ""
    _, resource, value = max(options, key=lambda o: o[0])
    unit, suffix = (fit.GIB, "Gi") if resource == MEMORY else (1.0, "")
    after = f"for a worst case of {usd(pool(requirements, {**limits, resource: value * unit}, prices).usd)} an hour"
    field_name = f" (the pool's {fields[resource]})" if resource in fields else ""
    if resource in limits and (math.isfinite(limits[resource]) or resource in written):  # 1e400 is set, to no bound
        was = written.get(resource) or f"{limits[resource] / unit:g}{suffix}"
        return f"lower limits.{resource}: {was} -> {value}{suffix}{field_name}, {after}"
    return f"set limits.{resource}: {value}{suffix}{field_name}, {after}"


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


@dataclass(frozen=True)
class RackCost:
    name: str
    urn: str
    lanes: tuple[LaneCost, ...]
    budget: Optional[Budget]

    @property
    def usd(self) -> Optional[float]:
        return total(self.lanes)


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

    @property
    def usd(self) -> Optional[float]:
        return total(self.lanes)


def stack_region(environ: Optional[Mapping[str, str]] = None) -> str:
    """The stack's region: its ``aws:region`` (the CLI hands a pack the stack's config, ``lookup``), else
    ``AWS_REGION`` or ``AWS_DEFAULT_REGION`` (where the AWS provider looks next); '' when none says."""
    env = os.environ if environ is None else environ
    for value in (lookup.stack_aws_settings(env).get("region_name"), env.get("AWS_REGION"), env.get("AWS_DEFAULT_REGION")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _number(value: Any) -> Optional[float]:
    number = facts.number(value)
    return number if number is not None and math.isfinite(number) and number > 0 else None


def config_prices(config: Mapping[str, Any]) -> dict[str, float]:
    return {str(k): float(v) for k, v in facts.as_map(config.get("prices")).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0}


def _written_limits(props: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): (v if isinstance(v, str) else f"{v:g}") for k, v in facts.as_map(facts.dig(props, "spec", "limits")).items()
            if isinstance(v, (str, int, float)) and not isinstance(v, bool)}


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


def survey(stack: checks.Stack, config: Mapping[str, Any], prices: Prices, found: Optional[Found] = None,
           unknown: checks.Unknown = ()) -> Costs:
    """Every lane's worst case and budgets (``config``: ``lane-cost-ceiling``'s), each rack's and the stack's;
    ``found``: ``lanes_of`` the stack, when the caller has it already."""
    lanes, not_known = found if found is not None else lanes_of(stack, prices, unknown)
    default = _number(config.get("maxHourlyUsd"))
    named = {str(k): n for k, v in facts.as_map(config.get("budgets")).items() if (n := _number(v)) is not None}
    budgeted = []
    for lane in lanes:
        given = (Budget(named[lane.name], f"budgets.{lane.name} in the policy config") if lane.name in named else
                 Budget(default, "maxHourlyUsd in the policy config") if default is not None else None)
        budgeted.append(replace(lane, budgets=(*lane.budgets, given)) if given else lane)
    by_urn = {res.urn: res for res in stack.resources}
    racks = tuple(RackCost(res.name, res.urn, tuple(lane for lane in budgeted if _descends(lane.urn, res.urn, by_urn)),
                           _budget_of(res))
                  for res in stack.resources if res.type == contract.COMPONENT_RACK)
    whole = _number(config.get("totalMaxHourlyUsd"))
    any_budget = bool(default or named or whole or any(r.budget for r in racks) or any(lane.budgets for lane in budgeted))
    return Costs(prices, tuple(budgeted), racks, Budget(whole, "totalMaxHourlyUsd in the policy config") if whole else None,
                 not_known, any_budget)


def _descends(urn: str, ancestor: str, by_urn: Mapping[str, checks.StackResource]) -> bool:
    seen: set[str] = set()
    while urn and urn not in seen:
        seen.add(urn)
        res = by_urn.get(urn)
        urn = res.parent if res is not None else ""
        if urn == ancestor:
            return True
    return False


def _owner(res: checks.StackResource, by_urn: Mapping[str, checks.StackResource],
           kinds: tuple[str, ...]) -> Optional[checks.StackResource]:
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


def _budget_of(owner: Optional[checks.StackResource]) -> Optional[Budget]:
    """The budget our component registered for the lane it built (``max_hourly_usd``), if any."""
    budget = _number(facts.as_map(owner.props).get(BUDGET_OUTPUT)) if owner is not None else None
    return Budget(budget, "its max_hourly_usd") if budget else None


def _lane_cost(res: checks.StackResource, lane: facts.LaneResource, stack: checks.Stack,
               by_urn: Mapping[str, checks.StackResource], prices: Prices,
               applied: tuple[overlays.Overlay, ...] = ()) -> Optional[LaneCost]:
    """A NodePool's or an EKS managed node group's worst case, budget and fix; None for other lanes."""
    props = res.props
    if isinstance(lane, facts.NodePool):
        requirements = tuple(lane.requirements())
        limits, refused, as_written = facts.node_pool_limits(facts.dig(props, "spec", "limits"))
        replicas = facts.number(facts.dig(props, "spec", "replicas"))
        replicas = replicas if replicas is not None and math.isfinite(replicas) and replicas >= 0 else None
        labels = tuple(sorted((str(k), facts.text(v)) for k, v in
                              facts.as_map(facts.dig(props, "spec", "template", "metadata", "labels")).items()))
        worst = WorstCase(0.0, prices, why=f"it {refused}") if refused else pool(
            requirements, limits, prices, replicas, as_written, (applied, lane.subject_name, labels))
        gpu = checks.gpu_reason(lane) is not None
        owner = _owner(res, by_urn, contract.POOL_TYPES)
        budget = _budget_of(owner)
        field_names = {CPU: "cpu_limit", MEMORY: "memory_limit_gb", contract.NVIDIA_GPU: "gpu_limit",
                       contract.AMD_GPU: "gpu_limit"} if owner is not None else {}
        written = _written_limits(props)

        def fix(amount: float) -> str:
            if replicas is not None:  # a static pool: its dearest type, as many as the budget buys
                if not worst.fill:
                    return ""
                price = worst.fill[0][2]
                nodes = int((amount + EPSILON) // price) if price > 0 else int(replicas)
                return f"lower replicas: {replicas:g} -> {nodes}, for a worst case of {usd(nodes * price)} an hour"
            return pool_fix(requirements, limits, prices, amount, gpu, written, field_names)

        return LaneCost(lane.subject_name, rules.pool_subject(lane.subject_name), "pool", res.urn, worst, gpu,
                        (budget,) if budget else (), fix)
    if isinstance(lane, facts.EksNodeGroup):
        scaling = facts.as_map(props.get("scalingConfig"))
        max_size = facts.number(scaling.get("maxSize"))
        min_size = facts.number(scaling.get("minSize"))
        template = stack.launch_template(res)
        types = lane.instance_types() or (template.instance_types() if template is not None else [])
        if not types:
            defaults = group_requirements((), facts.text(props.get("amiType")))
            types = list(defaults[0].values) if defaults[0].key == wellknown.TYPE_KEY else []
        own = facts.text(props.get("region"))
        group_prices = replace(prices, region=own) if own else prices
        if max_size is None or not math.isfinite(max_size) or max_size < 0:
            worst = WorstCase(None, group_prices, why="its scalingConfig.maxSize is not known", unknown=True)
        else:
            worst = group(types, max_size, group_prices)
        gpu = checks.gpu_reason(lane) is not None
        budget = _budget_of(_owner(res, by_urn, contract.NODE_GROUP_TYPES))
        return LaneCost(lane.subject_name, rules.node_group_subject(lane.subject_name), "node group", res.urn, worst, gpu,
                        (budget,) if budget else (),
                        lambda amount: group_fix(worst, max_size or 0, min_size, amount))
    return None


# ---- the policies' findings ----------------------------------------------------------------------------------

_USD = {"type": "number", "exclusiveMinimum": 0}
CEILING_SCHEMA: dict[str, Any] = {
    "maxHourlyUsd": {**_USD, "description": "Every lane's budget, US dollars an hour, unless budgets names it."},
    "budgets": {"type": "object", "default": {}, "additionalProperties": _USD,
                "description": "Budgets by lane name (a NodePool's metadata.name, a node group's name), US dollars an hour."},
    "totalMaxHourlyUsd": {**_USD, "description": "The budget of all the stack's lanes together, US dollars an hour."},
    "prices": {"type": "object", "default": {}, "additionalProperties": {"type": "number", "minimum": 0},
               "description": "On-demand US dollars an hour by instance type, over the table's (the stack's region)."},
}
"""``lane-cost-ceiling``'s config (what the CLI checks before ``Configure``)."""


def config_problems(props: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``lane-cost-ceiling``'s properties beyond what its schema says, each naming its path: a
    price for what is no instance type (``G5.XLARGE``, ``g5.large``), which no lane's look-up would ever read."""
    return [f"prices: {problem}" for name in facts.as_map(props.get("prices"))
            if (problem := syntax.priced_type_problem(str(name)))]


def _note(prices: Prices) -> str:
    return f" ({prices.note})" if prices.note else ""


def ceiling(costs: Costs) -> Iterator[checks.Finding]:
    """``lane-cost-ceiling``: a lane, rack or stack whose worst case is over a budget."""
    if costs.budgeted:
        for urn, subject in costs.unknown:
            yield checks.Finding(f"{subject}: its worst case per hour cannot be computed before its values are known", urn,
                                 certain=False)
    for lane in costs.lanes:
        for budget in lane.budgets:
            yield from _judged(lane.subject, lane.urn, lane.worst.usd, budget, lane.worst, lane.fix,
                               lane.worst.words())
    for rack in costs.racks:
        if rack.budget is not None:
            yield from _rack_judged(f"rack '{rack.name}'", rack.urn, rack.lanes, rack.budget, costs.prices)
    if costs.stack_budget is not None:
        yield from _rack_judged("the stack", "", costs.lanes, costs.stack_budget, costs.prices)


def _judged(subject: str, urn: str, amount: Optional[float], budget: Budget, worst: WorstCase,
            fix: Callable[[float], str], words: str) -> Iterator[checks.Finding]:
    if worst.unknown:
        yield checks.Finding(f"{subject}: cannot hold it to its budget of {usd(budget.usd)} an hour ({budget.where}): its "
                             f"worst case is {words}; give the price under prices on {CEILING} in the policy config",
                             urn, certain=False)
        return
    if amount is not None and amount <= budget.usd + EPSILON:
        return
    lower = fix(budget.usd)
    action = f"; {lower}" if lower else ""
    yield checks.Finding(f"{subject}: its worst case, {words}, is over its budget of {usd(budget.usd)} an hour "
                         f"({budget.where}){action}{_note(worst.prices)}", urn)


def _rack_judged(subject: str, urn: str, lanes: Sequence[LaneCost], budget: Budget, prices: Prices) -> Iterator[checks.Finding]:
    amount = total(lanes)
    if amount is not None and amount <= budget.usd + EPSILON:
        return
    if any(lane.worst.unknown for lane in lanes):
        names = ", ".join(lane.subject for lane in lanes if lane.worst.unknown)
        yield checks.Finding(f"{subject}: cannot hold it to its budget of {usd(budget.usd)} an hour ({budget.where}): the "
                             f"worst case of {names} is not known", urn, certain=False)
        return
    dearest_first = sorted(lanes, key=lambda lane: -(lane.worst.usd if lane.worst.usd is not None else math.inf))
    parts = ", ".join(f"{lane.name} {usd(lane.worst.usd)}" for lane in dearest_first)
    action = ""
    if dearest_first:
        top = dearest_first[0]
        if amount is None:
            action = f"; bound {top.subject} first"
        else:
            room = budget.usd - (amount - (top.worst.usd or 0.0))
            lower = top.fix(room) if room > 0 else ""
            action = (f"; on {top.subject}, {lower}" if lower else
                      "; no one lane's limit brings it under: lower several, or raise the budget")
    yield checks.Finding(f"{subject}: its worst case, {usd(amount)} an hour (the sum of its lanes: {parts}), is over its "
                         f"budget of {usd(budget.usd)} an hour ({budget.where}){action}{_note(prices)}", urn)


def unbounded(costs: Costs) -> Iterator[checks.Finding]:
    """``lane-cost-unbounded``: a GPU lane whose worst case has no bound."""
    for lane in costs.lanes:
        if lane.gpu and lane.worst.unbounded:
            yield checks.Finding(f"{lane.subject}: a GPU lane with no bound on what it costs an hour ({lane.worst.why}); "
                                 f"set limits.{contract.NVIDIA_GPU} (or cpu, memory, nodes) on it", lane.urn)
