"""Reserved lanes, checked against their reservations: the two policies ``capacity-reservation-fits`` (what
keeps a lane from using a reservation it names, or leaves part of it idle) and ``capacity-reservation-ending``
(a reservation that has ended, ends within a week, or has not started).

A lane's reservations are ``LaneView.reservations`` (``lanemodel``): a Karpenter pool's come from its EC2NodeClass's
``capacityReservationSelectorTerms`` (``lanesource``), and any lane that fills the field is judged the same way.
What EC2 says of a reservation comes from the policy config (``reservations``: id -> its facts; the offline
preview gives the catalog's, and then an id it does not list is one the account does not have), else from EC2
``DescribeCapacityReservations`` with ``lookup: true`` (``lookup``); a subnet's zone from ``subnets`` (id ->
zone), else EC2 ``DescribeSubnets``.

What Karpenter v1.14.1 does with a reservation, which each check follows (karpenter-provider-aws
``pkg/providers/instancetype/offering/reserved_capacity_resolver.go``): it offers a reserved node only of the
reservation's instance type, and only in its zone, and only when one of the class's subnets is in that zone
(the instance type's zones are its subnets'), as a ``karpenter.sh/capacity-type: reserved`` offering, so a pool
launches into it only with ``reserved`` among its capacity types; it asks EC2 only for ``active`` reservations and
stops launching into a Capacity Block 40 minutes before its end (``reservation``). A reserved node is a node of
the pool like any other, so the NodePool's ``limits`` count it: limits below the reservation's instance count leave
the rest idle, billed all the same. An EKS managed node group runs at most its ``scalingConfig.maxSize`` nodes (the
Auto Scaling group's maximum): a ``maxSize`` below the reservation's instance count leaves the rest idle the same way.

Pure: the standard library and the pack's modules.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Callable, Iterator, Mapping, Optional

from ..facts import instances, wellknown
from . import bootfacts, fit
from .checks import Finding
from .lanemodel import LaneView, Lanes, Reservations
from .reservation import ENDING_SOON, CapacityReservation, decode

FITS, ENDING = "capacity-reservation-fits", "capacity-reservation-ending"
RESERVED, ON_DEMAND, CAPACITY_BLOCK, SPOT = "reserved", "on-demand", "CAPACITY_BLOCK", "SPOT"
NOT_FOUND = "not found"

Describe = Callable[[str], Optional[CapacityReservation]]
"""A reservation id -> EC2's answer, None when EC2 has no such reservation (``lookup.describe_capacity_reservation``);
raises ``LookupError`` when it cannot tell."""
SubnetZone = Callable[[str], Optional[str]]
"""A subnet id -> its Availability Zone, None when EC2 has no such subnet (``lookup.subnet_zone``); raises
``LookupError``."""

SCHEMA: dict[str, Any] = {
    "lookup": {
        "type": "boolean",
        "default": False,
        "description": "Read each reservation with EC2 DescribeCapacityReservations, and a subnet's zone with "
        "DescribeSubnets, with the ambient AWS credentials.",
    },
    "reservations": {
        "type": "object",
        "description": "The account's capacity reservations by id (given: an id the lanes use that is not listed, and "
        "that the look-up does not find, is one the account does not have): instanceType, "
        "availabilityZone, instanceCount, type (default or capacity-block), startDate, endDate, state.",
        "additionalProperties": {
            "type": "object",
            "properties": {
                "instanceType": {"type": "string"},
                "availabilityZone": {"type": "string"},
                "instanceCount": {"type": "integer", "minimum": 1},
                "type": {"type": "string", "enum": ["default", "capacity-block"]},
                "startDate": {"type": "string"},
                "endDate": {"type": "string"},
                "state": {"type": "string"},
            },
        },
    },
    "subnets": {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": 'Availability Zone by subnet id, e.g. {"subnet-0123456789abcdef0": "us-east-1a"}.',
    },
}
"""Both policies' config."""


class Knowledge:
    """What one policy knows of reservations and subnets: its config, then EC2 when it sets ``lookup: true``."""

    def __init__(
        self,
        config: Mapping[str, Any],
        describe: Optional[Describe] = None,
        subnet_zone: Optional[SubnetZone] = None,
        policy: str = FITS,
    ) -> None:
        self.config = config
        looks = config.get("lookup") is True
        self.describe = describe if looks else None
        self.subnet_zone = subnet_zone if looks else None
        self.policy = policy

    def reservation(self, reservation_id: str) -> tuple[Optional[CapacityReservation], str]:
        """(its facts, ''), or (None, ``NOT_FOUND``) when the account has none, or (None, what would tell)."""
        listed = bootfacts.as_map(self.config.get("reservations"))
        entry = listed.get(reservation_id)
        if isinstance(entry, Mapping):
            return decode(reservation_id, entry), ""
        if self.describe is not None:
            try:
                found = self.describe(reservation_id)
            except LookupError as exc:
                return None, f"the look-up failed: {exc}"
            return (found, "") if found is not None else (None, NOT_FOUND)
        if "reservations" in self.config:
            return None, NOT_FOUND
        return None, (
            f"give its facts in {self.policy}'s reservations, or set lookup: true on {self.policy} "
            f"(EC2 DescribeCapacityReservations)"
        )

    def zone(self, subnet_id: str) -> Optional[str]:
        """A subnet's Availability Zone, or None when not known."""
        given = bootfacts.as_map(self.config.get("subnets")).get(subnet_id)
        if isinstance(given, str) and given:
            return given
        if self.subnet_zone is None:
            return None
        try:
            return self.subnet_zone(subnet_id)
        except LookupError:
            return None


def _when(moment: Optional[datetime]) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment is not None else "(no date)"


def _ended(found: CapacityReservation, now: datetime, launcher: str = "Karpenter") -> str:
    """How a message says that ``found`` has ended (``found.ended(now)``)."""
    if found.state not in ("", "active"):
        return f"is {found.state} (EC2)"
    if found.end is not None and found.end > now:  # a block within its last 40 minutes
        return f"ends on {_when(found.end)} and {launcher} launches no more into it from 40 minutes before"
    return f"ended on {_when(found.end)}"


def _who(lane: LaneView) -> tuple[str, str]:
    """How a message names the lane and what launches its nodes: a Karpenter pool, or an EKS managed node group
    (whose reservation its launch template targets, and which EKS scales to 0 forty minutes before a block ends)."""
    return ("group", "EKS") if lane.kind == "node group" else ("pool", "Karpenter")


def launches_reserved(lane: LaneView) -> bool:
    """Whether the lane's capacity types let it launch into a reservation (Karpenter: ``reserved``; an EKS node
    group: any but ``SPOT``); True when they are not known."""
    offered = dict(lane.capacity)
    if wellknown.CAPACITY_TYPE_KEY in offered:
        return RESERVED in offered[wellknown.CAPACITY_TYPE_KEY]
    if wellknown.EKS_CAPACITY_TYPE_KEY in offered:
        return SPOT not in offered[wellknown.EKS_CAPACITY_TYPE_KEY]
    return True


def reserved_only(lane: LaneView) -> bool:
    """Whether the lane launches into reservations and nothing else (Karpenter ``reserved`` alone, an EKS node
    group of capacity type ``CAPACITY_BLOCK``)."""
    offered = dict(lane.capacity)
    return offered.get(wellknown.CAPACITY_TYPE_KEY) == (RESERVED,) or offered.get(wellknown.EKS_CAPACITY_TYPE_KEY) == (
        CAPACITY_BLOCK,
    )


def fallback(lane: LaneView) -> str:
    """What the lane launches when its reservations take no node (for a message)."""
    offered = [v for v in dict(lane.capacity).get(wellknown.CAPACITY_TYPE_KEY, ()) if v != RESERVED]
    return " or ".join(offered) + " instances" if offered else "other instances"


def _launchable(lane: LaneView, instance_type: str) -> Optional[bool]:
    """Whether the lane's requirements let it launch ``instance_type``; None when the lane names none (not known)."""
    if not lane.requirements:
        return None
    types, unsized = wellknown.launchable(
        lane.requirements + (wellknown.Requirement(wellknown.TYPE_KEY, "In", (instance_type,)),)
    )
    return bool(types) or bool(unsized)


def held(lane: LaneView, itype: instances.InstanceType) -> float:
    """How many nodes of ``itype`` the lane's limits hold at once (infinite: no limit bounds them)."""
    room = fit.counted_limits(dict(lane.limits))
    return min(
        (
            max(0, math.floor(left / adds))
            for adds, left in zip(fit.limit_capacity(itype), room)
            if adds > 0 and left < math.inf
        ),
        default=math.inf,
    )


def _limits_words(lane: LaneView) -> str:
    return ", ".join(f"{name} {_amount(amount)}" for name, amount in lane.limits)


def _amount(amount: float) -> str:
    if amount >= fit.GIB and amount % fit.GIB == 0:
        return f"{int(amount // fit.GIB)}Gi"
    return f"{amount:g}"


def _resolved(lane: LaneView, knowledge: Knowledge) -> Iterator[tuple[str, Optional[CapacityReservation], str]]:
    assert lane.reservations is not None
    for reservation_id in lane.reservations.ids:
        found, why = knowledge.reservation(reservation_id)
        yield reservation_id, found, why


def _zone_findings(
    lane: LaneView, where: Reservations, found: CapacityReservation, knowledge: Knowledge
) -> Iterator[Finding]:
    subject, (noun, launcher) = lane.subject, _who(lane)
    if where.zones and found.zone not in where.zones:
        yield Finding(
            f"{subject}: {found.word} is in {found.zone}, which the pool's topology.kubernetes.io/zone "
            f"requirement leaves out ({', '.join(where.zones)}): {launcher} launches nothing into it"
        )
        return
    if where.subnets:
        yield Finding(
            f"{subject}: cannot tell whether a subnet of the {noun} (selected {where.subnets}) is in {found.zone}, "
            f"where {found.word} is: select its subnets by id, and give their zones in {FITS}'s subnets "
            f"or set lookup: true (EC2 DescribeSubnets)",
            certain=False,
        )
        return
    zones = {subnet: knowledge.zone(subnet) for subnet in where.subnet_ids}
    if not zones or found.zone in zones.values():
        return
    unknown = [s for s, z in zones.items() if z is None]
    shown = ", ".join(f"{s} in {z}" for s, z in zones.items() if z is not None)
    if unknown:
        yield Finding(
            f"{subject}: cannot tell whether a subnet of the {noun} is in {found.zone}, where {found.word} "
            f"is ({', '.join(unknown)}: zone not known{'; ' + shown if shown else ''}): give their zones in "
            f"{FITS}'s subnets or set lookup: true (EC2 DescribeSubnets)",
            certain=False,
        )
        return
    yield Finding(
        f"{subject}: {found.word} is in {found.zone}, and none of the {noun}'s subnets is ({shown}): "
        f"{launcher} launches nothing into it (add a subnet in {found.zone})"
    )


def fits(lanes: Lanes, knowledge: Knowledge, now: datetime) -> list[Finding]:
    """``capacity-reservation-fits``: every reservation a lane names is the account's, of a type it can launch, in
    a zone of its subnets, within its limits (all its instances), and, for a lane of reservations only, not ended."""
    out: list[Finding] = []
    for lane in lanes.lanes:
        where = lane.reservations
        if where is None:
            continue
        subject, (noun, launcher) = lane.subject, _who(lane)
        if not launches_reserved(lane):
            out.append(
                Finding(
                    f"{subject}: its capacity types ({', '.join(v for _, vs in lane.capacity for v in vs)}) "
                    f"leave out {RESERVED}: it launches nothing into {', '.join(where.ids)}, billed all the "
                    f"same (add {RESERVED})"
                )
            )
            continue
        total: dict[str, int] = {}
        sized: dict[str, instances.InstanceType] = {}
        for reservation_id, found, why in _resolved(lane, knowledge):
            if found is None:
                if why == NOT_FOUND:
                    out.append(
                        Finding(
                            f"{subject}: capacity reservation {reservation_id} is not one the account has "
                            f"(EC2 DescribeCapacityReservations does not find it in the stack's region): "
                            f"check the id, the account and the region"
                        )
                    )
                else:
                    out.append(
                        Finding(
                            f"{subject}: capacity reservation {reservation_id} cannot be checked: {why}", certain=False
                        )
                    )
                continue
            if found.ended(now):
                if reserved_only(lane):
                    out.append(
                        Finding(
                            f"{subject}: {found.word} {_ended(found, now, launcher)}: it takes no new nodes, "
                            f"and the {noun} launches only into reservations, so it gets no node from it (remove it, "
                            f"or add {ON_DEMAND})"
                        )
                    )
                continue  # capacity-reservation-ending says it, for a lane that falls back
            if found.instance_type and _launchable(lane, found.instance_type) is False:
                what = "requirements" if noun == "pool" else "instance types"
                out.append(
                    Finding(
                        f"{subject}: {found.word} is of {found.instance_type}, which the {noun}'s "
                        f"{what} do not let it launch: {launcher} launches nothing into it"
                    )
                )
                continue
            if found.zone:
                out += _zone_findings(lane, where, found, knowledge)
            itype = instances.instance_type(found.instance_type) if found.instance_type else None
            if itype is not None and found.count is not None and not where.canary_of:  # a canary's lane holds them
                room = held(lane, itype)
                if where.max_nodes is not None and where.max_nodes < min(room, found.count):
                    out.append(
                        Finding(
                            f"{subject}: its max_size ({where.max_nodes}) holds {where.max_nodes} of the "
                            f"{found.count} {itype.name} of {found.word}: the other "
                            f"{found.count - where.max_nodes} stay idle, billed all the same (raise max_size)"
                        )
                    )
                    continue
                if room < found.count:
                    out.append(
                        Finding(
                            f"{subject}: its limits ({_limits_words(lane)}) hold {int(room)} of the "
                            f"{found.count} {itype.name} of {found.word}: the other {found.count - int(room)} "
                            f"stay idle, billed all the same (raise the limits)"
                        )
                    )
                    continue
                total[reservation_id] = found.count
                sized[reservation_id] = itype
        if len(total) > 1:
            out += _together(lane, total, sized)
    return out


def _together(
    lane: LaneView, counts: Mapping[str, int], types: Mapping[str, instances.InstanceType]
) -> Iterator[Finding]:
    """Reservations that each fit the lane's limits but not all at once."""
    room = fit.counted_limits(dict(lane.limits))
    needed = [
        sum(counts[i] * adds for i in counts for adds in [fit.limit_capacity(types[i])[n]]) for n in range(len(room))
    ]
    if all(need <= left for need, left in zip(needed, room)):
        return
    yield Finding(
        f"{lane.subject}: its limits ({_limits_words(lane)}) do not hold all the instances of "
        f"{', '.join(f'{i} ({counts[i]} {types[i].name})' for i in counts)} at once: part of them stays idle, "
        f"billed all the same (raise the limits)"
    )


def ending(lanes: Lanes, knowledge: Knowledge, now: datetime) -> list[Finding]:
    """``capacity-reservation-ending``: a reservation that has ended (the lane falls back), ends within a week, or
    has not started yet, with its date."""
    out: list[Finding] = []
    for lane in lanes.lanes:
        if lane.reservations is None or not launches_reserved(lane):
            continue
        subject, (noun, launcher) = lane.subject, _who(lane)
        for _, found, _ in _resolved(lane, knowledge):
            if found is None:
                continue  # capacity-reservation-fits says why
            stops = found.stops()
            if found.ended(now):
                if not reserved_only(lane):
                    out.append(
                        Finding(
                            f"{subject}: {found.word} {_ended(found, now, launcher)}: it takes no new nodes, "
                            f"and the {noun} launches {fallback(lane)} instead (remove it from the {noun})"
                        )
                    )
            elif found.not_started(now):
                out.append(
                    Finding(
                        f"{subject}: {found.word} starts on {_when(found.start)}: until then the {noun} "
                        f"launches none into it"
                    )
                )
            elif stops is not None and stops - now <= ENDING_SOON:
                then = (
                    f"{launcher} stops launching into it 40 minutes before, and its nodes are terminated"
                    if found.block
                    else "its nodes then run as On-Demand instances"
                )
                out.append(Finding(f"{subject}: {found.word} ends on {_when(found.end)}, within a week: {then}"))
    return out
