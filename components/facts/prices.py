"""What an instance type costs an hour, on demand, in a region: the dated table (``pricelist``), or overrides.

The table is Karpenter's own starting list (``pricegen`` says how it is made): us-east-1 and the two
GovCloud regions. A region it does not list is priced as Karpenter prices it before it has read the
AWS Price List API, with the us-east-1 list (karpenter-provider-aws ``pkg/providers/pricing/pricing.go``,
``Reset``), and every figure made with it says so. Overrides (the policy config's ``prices``, the offline
catalog's ``prices:``) replace the table's price of the types they name. A type neither prices is left
out: Karpenter offers no on-demand capacity of a type it has no price for (``offering/base_resolver.go``,
an offering is available only with a price).

Standard library and the generated ``pricelist`` only (the pack and the components share it).
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass
from typing import Iterator, Mapping, Optional

from . import pricelist

FALLBACK = "us-east-1"
SOURCE = f"{pricelist.SOURCE} {pricelist.COMMIT[:8]} ({pricelist.COMMIT_DATE})"
"""How a figure names its prices: the upstream repository, commit and day."""


@functools.lru_cache(maxsize=None)
def _table(region: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for family, entries in pricelist.PRICES.get(region, {}).items():
        for entry in entries.split():
            size, price = entry.split(":")
            found[f"{family}.{size}"] = float(price)
    return found


def listed(region: str) -> bool:
    return region in pricelist.PRICES


@dataclass(frozen=True)
class Prices:
    """Prices for one region: the table's (or us-east-1's), with overrides on top."""

    region: str
    """The stack's region ('' when nobody said: us-east-1's prices, and the note says so)."""
    overrides: tuple[tuple[str, float], ...] = ()
    """(instance type, US dollars an hour), sorted: prices over the table's (a value, so figures can be cached)."""

    @functools.cached_property
    def _overridden(self) -> dict[str, float]:
        return dict(self.overrides)

    @property
    def listed(self) -> bool:
        """Whether the table has the region's own list (else us-east-1's stands in for it)."""
        return listed(self.region)

    @property
    def table_region(self) -> str:
        return self.region if listed(self.region) else FALLBACK

    @property
    def note(self) -> str:
        """'' for a region the table lists; else which prices stand in for it, as every figure says."""
        if listed(self.region):
            return ""
        where = f"the table has none for {self.region}" if self.region else "the stack names no aws:region"
        return f"{FALLBACK} prices: {where}"

    @property
    def words(self) -> str:
        """``on-demand prices of us-east-1, aws/karpenter-provider-aws 1d927085 (2026-08-21)`` (with the note)."""
        where = self.table_region + (f" ({self.note})" if self.note else "")
        extra = f", {len(self.overrides)} overridden" if self.overrides else ""
        return f"on-demand prices of {where}, {SOURCE}{extra}"

    def of(self, instance_type: str) -> Optional[float]:
        """USD an hour of one on-demand instance, or None when neither the overrides nor the table price it."""
        found = self._overridden.get(instance_type)
        return found if found is not None else _table(self.table_region).get(instance_type)


_OFFLINE: dict[str, float] = {}
"""Overrides every ``for_region`` applies: the offline catalog's ``prices:``, for one offline run."""


def for_region(region: Optional[str], overrides: Optional[Mapping[str, float]] = None) -> Prices:
    """The prices of ``region`` ('' or None: not known), with ``overrides`` over the offline run's, if any."""
    return Prices(region or "", tuple(sorted({**_OFFLINE, **(overrides or {})}.items())))


@contextlib.contextmanager
def offline(overrides: Mapping[str, float]) -> Iterator[None]:
    """While a program runs offline: its prices are the catalog's where it gives one (the offline cloud's)."""
    saved = dict(_OFFLINE)
    _OFFLINE.update(overrides)
    try:
        yield
    finally:
        _OFFLINE.clear()
        _OFFLINE.update(saved)


def price_problem(value: object) -> Optional[str]:
    """What is wrong with a price (a finite number, zero or more), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"expected a number of US dollars an hour, got {value!r}"
    if not math.isfinite(value) or value < 0:
        return f"expected a finite number of US dollars an hour, zero or more, got {value!r}"
    return None


def usd(amount: Optional[float]) -> str:
    """``$12.992``: cents always, up to six decimals (as the table writes prices); ``unbounded`` for None."""
    if amount is None:
        return "unbounded"
    if amount >= 1e15:  # more than any budget: not a thousand digits of it
        return f"${amount:.3g}"
    whole, _, cents = f"{amount:,.6f}".partition(".")
    return f"${whole}.{cents.rstrip('0').ljust(2, '0')}"
