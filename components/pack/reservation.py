"""One ``CapacityReservation`` type and one decoder of an EC2 capacity reservation, for every source that knows one.

The sources spell the same fields two ways: EC2 ``DescribeCapacityReservations`` (``CapacityReservationId``,
``InstanceType``, ``AvailabilityZone``, ``TotalInstanceCount``, ``ReservationType``, ``State``, ``StartDate``,
``EndDate``: botocore's EC2 model, shape ``CapacityReservation``; boto3 gives the dates as datetimes), used by the
pack's look-up, and the offline catalog's ``reservations:`` entries and the policy config's ``reservations``
(``instance_type``/``instanceType``, ``availability_zone``, ``instance_count``, ``type``, ``start_date``,
``end_date``). ``decode`` reads both: keys are compared without case, dashes and underscores.

What a reservation gives a lane follows Karpenter v1.14.1 (karpenter-provider-aws): it asks EC2 for a selected id
with the filter ``state=active`` only (``pkg/providers/capacityreservation/types.go``), so a reservation that is
scheduled, expired or cancelled takes no node; and it stops launching into a Capacity Block 40 minutes before the
block's end, when it marks it ``expiring`` (``pkg/apis/v1/ec2nodeclass_status.go``), and terminates the block's
nodes then.

Standard library only, and no sibling imports but ``amifacts``'s reading helpers (the pack and the catalog share it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Optional

from ..facts.amifacts import _fields, _text, parse_time

DEFAULT, CAPACITY_BLOCK = "default", "capacity-block"
"""EC2's ``ReservationType`` values: an On-Demand Capacity Reservation, a Capacity Block for ML."""
TYPES = (DEFAULT, CAPACITY_BLOCK)
ACTIVE = "active"
"""The one EC2 state Karpenter launches into."""
BLOCK_STOPS_BEFORE_END = timedelta(minutes=40)
"""Karpenter marks a Capacity Block ``expiring`` this long before its end and launches no more into it."""
ENDING_SOON = timedelta(days=7)
"""A reservation that ends within this is worth a warning with its date."""


@dataclass(frozen=True)
class CapacityReservation:
    """What the rack's checks need to know about one capacity reservation. Unknown facts are empty or None."""

    id: str
    instance_type: str = ""
    zone: str = ""
    """Its Availability Zone (``us-east-1a``)."""
    count: Optional[int] = None
    """Instances it holds (EC2's ``TotalInstanceCount``)."""
    kind: str = ""
    """``default`` (an ODCR) or ``capacity-block``; '' when not said (EC2 calls that an ODCR)."""
    state: str = ""
    """EC2's ``State`` when the source says it (a look-up does); '': follows from the dates."""
    start: Optional[datetime] = None
    end: Optional[datetime] = None
    """When it ends; None: an ODCR with no end date (EC2's ``EndDateType: unlimited``)."""

    @property
    def block(self) -> bool:
        return self.kind == CAPACITY_BLOCK

    @property
    def word(self) -> str:
        """How a message names it: ``Capacity Block cr-...`` or ``capacity reservation cr-...``."""
        return f"Capacity Block {self.id}" if self.block else f"capacity reservation {self.id}"

    def stops(self) -> Optional[datetime]:
        """When it stops taking nodes: its end, a block's 40 minutes before; None: never."""
        if self.end is None:
            return None
        return self.end - BLOCK_STOPS_BEFORE_END if self.block else self.end

    def ended(self, now: datetime) -> bool:
        """Whether it takes no more nodes for good: EC2 says it expired, was cancelled or failed, or its end has
        come."""
        if self.state in ("expired", "cancelled", "cancelling", "failed", "payment-failed", "unsupported"):
            return True
        stops = self.stops()
        return stops is not None and stops <= now

    def not_started(self, now: datetime) -> bool:
        """Whether it is bought but takes no node yet (a block before its start, a reservation EC2 says is
        ``scheduled``, ``pending``, ``payment-pending``, ``assessing`` or ``delayed``)."""
        if self.state in ("scheduled", "pending", "payment-pending", "assessing", "delayed"):
            return True
        return not self.state and self.start is not None and self.start > now


def _when(value: Any) -> Optional[datetime]:
    """A date as boto3 gives it (a datetime) or as text (ISO 8601, ``Z`` for UTC); None when unreadable."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return parse_time(value) if isinstance(value, str) and value else None


def _count(value: Any) -> Optional[int]:
    """A whole, positive instance count (numbers arrive as floats in a policy config); None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value) if value == int(value) and value > 0 else None


def decode(reservation_id: str, raw: Any) -> CapacityReservation:
    """``raw`` in EC2's spelling or the catalog's -> ``CapacityReservation``."""
    fields = _fields(raw)
    kind = _text(fields.get("reservationtype") or fields.get("type"))
    return CapacityReservation(
        id=reservation_id,
        instance_type=_text(fields.get("instancetype")),
        zone=_text(fields.get("availabilityzone")),
        count=_count(fields.get("totalinstancecount", fields.get("instancecount"))),
        kind=kind if kind in TYPES else "",
        state=_text(fields.get("state")),
        start=_when(fields.get("startdate")),
        end=_when(fields.get("enddate")),
    )


def as_config(reservation: CapacityReservation) -> dict[str, Any]:
    """A reservation as the policy config's ``reservations`` entry gives it (what the offline preview hands the
    pack)."""
    entry: dict[str, Any] = {
        "instanceType": reservation.instance_type,
        "availabilityZone": reservation.zone,
        "type": reservation.kind or DEFAULT,
    }
    if reservation.count is not None:
        entry["instanceCount"] = reservation.count
    for key, when in (("startDate", reservation.start), ("endDate", reservation.end)):
        if when is not None:
            entry[key] = when.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    if reservation.state:
        entry["state"] = reservation.state
    return entry
