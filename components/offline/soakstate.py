"""What one environment's state proves its lanes have run: the evidence the ``ami-soaked`` policy judges the
next environment by, and what ``mixed-os-racks promote`` promotes from.

The evidence is a state's ``modified`` times. Pulumi's ``apitype`` (pulumi/pulumi
``sdk/go/common/apitype/core.go``, ``ResourceV3.Modified``) says it is when the resource's state was last
altered, and that checkpoints from before early 2023 do not have it. Pinning an AMI alters the resource
holding it (an EC2NodeClass's ``amiSelectorTerms``, a launch template's ``imageId``), so that resource's
``modified`` is at or after the moment the lane got the AMI: any later change of the same resource (another
field, or a refresh that finds a difference) only moves it later. A soak read from it can be under-estimated,
never over-estimated; a resource without ``modified`` proves nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Optional

from ..pack import checks, soak
from .stackexport import StackState, StateResource, state_time


def _changed(res: StateResource) -> str:
    """When the state says the resource last changed: its ``modified`` time, or its ``created`` time when that is
    later (a state that contradicts itself proves the least it can); '' when it records no ``modified``."""
    modified, created = state_time(res.modified), state_time(res.created)
    return res.created if modified is not None and created is not None and created > modified else res.modified


def pins(state: StackState) -> list[tuple[soak.Held, str]]:
    """Each AMI id a lane of the state pins (``soak.held``), with the ``modified`` time of the resource holding it."""
    modified = {res.urn: _changed(res) for res in state.resources}
    stack = checks.Stack([checks.StackResource(res.type, res.name, res.urn, res.inputs, res.property_dependencies,
                                               res.parent) for res in state.resources])
    return [(pin, modified.get(res.urn, "")) for res, lane in stack.items for pin in soak.held(stack, res, lane)]


def _at_second(when: datetime) -> str:
    """A time in UTC, rounded up to its second (so that a soak read from it is never longer than the state says)."""
    if when.microsecond:  # state_time keeps times a second inside Python's calendar, so this stays inside it
        when = when.replace(microsecond=0) + timedelta(seconds=1)
    return soak.utc_text(when)


def ran_since(state: StackState) -> dict[str, dict[str, Optional[str]]]:
    """Lane -> AMI -> since when the state shows the lane running it: the earliest ``modified`` of the resources
    holding it there (each one has held it since then at least), or None when none of them records a time."""
    found: dict[str, dict[str, Optional[datetime]]] = {}
    for pin, modified in pins(state):
        when = state_time(modified)
        amis = found.setdefault(pin.lane, {})
        earlier = amis.get(pin.ami)
        amis[pin.ami] = when if earlier is None else (earlier if when is None else min(earlier, when))
    return {lane: {ami: (_at_second(when) if when else None) for ami, when in sorted(amis.items())}
            for lane, amis in sorted(found.items())}


def running(state: Optional[StackState]) -> list[str]:
    """Every AMI id the lanes of a stack's own state pin."""
    return sorted({pin.ami for pin, _ in pins(state)}) if state is not None else []


def soak_config(evidence: StackState, own: Optional[StackState] = None, days: Optional[float] = None) -> dict[str, Any]:
    """The ``ami-soaked`` policy config for a stack whose environment before left the state ``evidence`` (and
    whose own state, when given, is ``own``)."""
    config: dict[str, Any] = {"environment": evidence.stack, "ranSince": ran_since(evidence), "running": running(own)}
    if days is not None:
        config["soakDays"] = days
    return config


def evidence_of(state: StackState, days: float, own: Optional[StackState] = None) -> soak.Evidence:
    """The evidence ``state`` gives a stack whose own state is ``own``, with ``days`` the bar."""
    return soak.Evidence(state.stack or "the environment before", ran_since(state), days, frozenset(running(own)))


def lanes_run(state: StackState) -> dict[str, dict[str, list[str]]]:
    """Lane -> ``ami_id`` and ``canary_ami_id`` -> the AMIs the lane and its canary pin in the state: what
    promotion gives the same lane, and its canary, in the next environment."""
    found: dict[str, dict[str, list[str]]] = {}
    for pin, _ in pins(state):
        amis = found.setdefault(pin.lane, {"ami_id": [], "canary_ami_id": []})["canary_ami_id" if pin.canary else "ami_id"]
        if pin.ami not in amis:
            amis.append(pin.ami)
    return found
