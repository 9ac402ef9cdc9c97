"""The package's "now": what EKS's support dates, AMI deprecation times and AMI ages are judged against.

It is the machine's clock, unless ``MIXED_OS_RACKS_NOW`` names another moment (an ISO 8601 date, or a date
and time with a zone: ``2027-03-24``, ``2027-03-24T09:00:00Z``): to see today what a preview will say on
another day (a Kubernetes version leaving EKS support, an AMI reaching its deprecation time), or to keep a
CI job's verdicts from moving with the calendar. The policy pack reads it too (it inherits the
environment). Pure: standard library only.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone

ENV = "MIXED_OS_RACKS_NOW"


class ClockError(ValueError):
    pass


def now() -> datetime:
    """The moment dates are judged against (UTC, with its zone)."""
    given = os.environ.get(ENV, "").strip()
    if not given:
        return datetime.now(timezone.utc)
    try:
        when = datetime.fromisoformat(given)
    except ValueError:
        raise ClockError(
            f"{ENV}={given!r}: not an ISO 8601 date or time (such as 2027-03-24 or 2027-03-24T09:00:00Z)"
        ) from None
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)


def today() -> str:
    """Today's date (UTC, ISO) by ``now``."""
    return now().date().isoformat()
