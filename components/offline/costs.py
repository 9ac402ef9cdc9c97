"""The preview's worst case per hour of every lane: the pack's own reading (``pack.cost``) of the run's resources.

The resources are read as ``AnalyzeStack`` gets them (a custom resource's inputs, a component's
registered outputs), in the region the pack would use (the stack's ``aws:region`` from the same
environment), with the offline catalog's ``prices:`` over the table: the figures printed beside the
lanes are those ``lane-cost-ceiling`` judges.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .. import clock
from ..facts.prices import for_region, usd
from ..pack import checks, cost, reserved
from ..pack.reservation import CapacityReservation, as_config
from .records import ProgramRun

KINDS = ("pool", "node group")


def of_run(
    run: ProgramRun,
    environ: Mapping[str, str],
    prices: Mapping[str, float],
    reservations: Optional[Mapping[str, CapacityReservation]] = None,
    figure: str = cost.STEADY,
    reserved_counts: str = cost.INCLUDE,
) -> cost.Costs:
    """``reservations``: the offline account's (the catalog's), for each lane's reserved part; ``figure`` and
    ``reserved_counts``: which worst case the budgets hold and how they count reserved parts (``lane-cost-ceiling``'s
    ``figure`` and ``reserved`` in the pack config)."""
    resources = [
        checks.StackResource(
            r.type,
            r.name,
            r.urn,
            r.inputs if r.custom else run.component_outputs.get(r.urn, {}),
            r.property_dependencies,
            r.parent,
        )
        for r in run.resources
    ]
    account = reserved.Knowledge(
        {"reservations": {i: as_config(r) for i, r in (reservations or {}).items()}}, policy=cost.CEILING
    )
    return cost.survey(
        checks.Stack(resources),
        {"figure": figure, "reserved": reserved_counts},
        for_region(cost.stack_region(environ), prices),
        knowledge=account,
        now=clock.now(),
    )


def _ordered(costs: cost.Costs) -> list[cost.LaneCost]:
    return sorted(costs.lanes, key=lambda lane: (KINDS.index(lane.kind), lane.name))


def lines(costs: cost.Costs) -> list[str]:
    """``Worst case per hour (...)``: a line per lane, then each rack's sum (or, for lanes outside one rack, the
    total)."""
    if not costs.lanes and not costs.unknown:
        return []
    rows = [
        (
            lane.subject,
            lane.worst.figure,
            lane.worst.detail + _paid(lane) + _rollout(lane) + _budget(lane.budgets, costs.figure, costs.reserved),
        )
        for lane in _ordered(costs)
    ]
    rows += [(subject, "not known", "its values are not known until apply") for _, subject in costs.unknown]
    for rack in costs.racks:
        budget = _budget((rack.budget,) if rack.budget else (), costs.figure, costs.reserved)
        plane = (
            f" and its EKS control plane at {usd(rack.control_plane)} ({rack.control_plane_price})"
            if rack.control_plane
            else ""
        )
        rollout = f"; during a rollout {usd(rack.rollout_usd)}" if rack.rollout_usd is not None else ""
        rows.append(
            (
                f"rack '{rack.name}'",
                _sum(rack.lanes, rack.usd),
                f"the sum of its {len(rack.lanes)} lanes{plane}{rollout}{budget}",
            )
        )
    in_racks = {lane.urn for rack in costs.racks for lane in rack.lanes}
    if len(costs.lanes) + len(costs.unknown) > 1 and (
        len(costs.racks) != 1 or costs.unknown or any(lane.urn not in in_racks for lane in costs.lanes)
    ):
        figure = "not known" if costs.unknown else _sum(costs.lanes, costs.usd)
        rows.append(("every lane", figure, f"the sum of the stack's {len(costs.lanes) + len(costs.unknown)} lanes"))
    subject_width = max(len(r[0]) for r in rows) + 2
    figure_width = max(len(r[1]) for r in rows) + 2
    return ["", f"Worst case per hour ({costs.prices.words}):"] + [
        f"    {subject:<{subject_width}}{figure:<{figure_width}}{detail}" for subject, figure, detail in rows
    ]


def _sum(lanes: tuple[cost.LaneCost, ...] | list[cost.LaneCost], amount: float | None) -> str:
    return "not known" if any(lane.worst.unknown for lane in lanes) else usd(amount)


def _rollout(lane: cost.LaneCost) -> str:
    """``; during a rollout $9.744 (4 nodes + 1 drift replacement of g5.4xlarge at $1.624, ...)``."""
    if lane.worst.usd is None:
        return ""
    return f"; during a rollout {lane.rollout.figure} ({lane.rollout.detail})"


def _paid(lane: cost.LaneCost) -> str:
    """``; reserved: 2 nodes, $110.08 an hour already paid (2 x p5.48xlarge at $55.04, Capacity Block cr-...)``."""
    return f"; {lane.paid.detail}" if lane.paid is not None else ""


def _budget(budgets: tuple[cost.Budget, ...], figure: str = cost.STEADY, reserved_counts: str = cost.INCLUDE) -> str:
    held = figure + (", reserved excluded" if reserved_counts == cost.EXCLUDE else "")
    return "".join(f"; budget {usd(b.usd)} ({b.where}, {held})" for b in budgets)


def as_json(costs: cost.Costs) -> dict[str, Any]:
    """The same, for ``--json``: figures in US dollars an hour (null: unbounded or not known)."""
    return {
        "prices": costs.prices.words,
        "region": costs.prices.region,
        "pricesOf": costs.prices.table_region,
        "lanes": [
            {
                "name": lane.name,
                "kind": lane.kind,
                "urn": lane.urn,
                "worstCaseHourlyUsd": lane.worst.usd,
                "worstCaseRolloutHourlyUsd": lane.rollout.usd,
                "rollout": lane.rollout.detail,
                **({"canaryOf": lane.canary_of} if lane.canary_of else {}),
                "exact": lane.worst.exact,
                "unbounded": lane.worst.unbounded,
                "detail": lane.worst.detail,
                "fill": [{"instanceType": name, "nodes": n, "hourlyUsd": price} for name, n, price in lane.worst.fill],
                "budgets": [{"maxHourlyUsd": b.usd, "from": b.where} for b in lane.budgets],
                "reserved": None
                if lane.paid is None
                else {
                    "capacityReservationIds": list(lane.paid.ids),
                    "nodes": lane.paid.nodes,
                    "alreadyPaidHourlyUsd": lane.paid.usd,
                    "notCounted": list(lane.paid.unknown),
                },
            }
            for lane in _ordered(costs)
        ],
        "racks": [
            {
                "name": rack.name,
                "urn": rack.urn,
                "worstCaseHourlyUsd": rack.usd,
                "worstCaseRolloutHourlyUsd": rack.rollout_usd,
                "controlPlaneHourlyUsd": rack.control_plane,
                "controlPlanePrice": rack.control_plane_price,
                "maxHourlyUsd": rack.budget.usd if rack.budget else None,
            }
            for rack in costs.racks
        ],
        "budgetsHold": costs.figure,
        "budgetsCountReserved": costs.reserved,
        "totalHourlyUsd": costs.usd,
    }
