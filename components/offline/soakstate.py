"""What one environment's state proves its lanes have run: the evidence the ``ami-soaked`` policy judges the
next environment by, and what ``mixed-os-racks promote`` promotes from.

The evidence is a state's ``modified`` times. Pulumi's ``apitype`` (pulumi/pulumi
``sdk/go/common/apitype/core.go``, ``ResourceV3.Modified``) says it is when the resource's state was last
altered, and that checkpoints from before early 2023 do not have it. Pinning an AMI alters the resource
holding it (an EC2NodeClass's ``amiSelectorTerms``, a launch template's ``imageId``), so that resource's
``modified`` is at or after the moment the lane got the AMI: any later change of the same resource (another
field, or a refresh that finds a difference) only moves it later. A soak read from it can be under-estimated,
never over-estimated; a resource without ``modified`` proves nothing.

A launch template's ``modified`` moves when its image changes even when the managed node group using it then
fails to roll onto it (EKS's ``NodeCreationFailure``): the template holds the image, the group has not run it.
So a managed node group's lane counts as running its template's image only when the group's own state
(``aws:eks/nodeGroup:NodeGroup``, its ``launchTemplate.version`` output, what EKS reported at the last update or
refresh) names the template's version that holds it (its ``latestVersion``: a symbolic ``$Latest`` or
``$Default`` proves nothing) and records no failed update (``initErrors``: pulumi-aws reports a failed rollout
with the version it was sent), and since the later of both resources' ``modified``: the engine moves a resource's
``modified`` when an update of it succeeds (or fails with the provider reporting the state it left) and when a
refresh finds it changed (pulumi/pulumi ``pkg/resource/deploy/step.go``, ``UpdateStep.Apply``,
``RefreshStep.Apply``), so the group's time is at or after the moment it reached the version. Any other holder (an
EC2NodeClass, a self-managed group's template) proves only that the lane pins the image.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Mapping, Optional, Sequence

from ..inputs import clipped
from ..pack import bootfacts, checks, soak
from .stackexport import StackState, StateResource, state_time


def _changed(res: StateResource) -> str:
    """When the state says the resource last changed: its ``modified`` time, or its ``created`` time when that is
    later (a state that contradicts itself proves the least it can); '' when it records no ``modified``."""
    modified, created = state_time(res.modified), state_time(res.created)
    return res.created if modified is not None and created is not None and created > modified else res.modified


@dataclass(frozen=True)
class Pin:
    """An AMI id a lane of a state pins, and what the state proves of it."""

    held: soak.Held
    changed: str
    """When the state last changed what holds it (RFC 3339), '' when it records no time."""
    unreached: Optional[dict[str, Optional[str]]] = None
    """A managed node group that has not reached the template version holding the image: ``group``, and the
    ``groupVersion`` and ``templateVersion`` the state records (None where it records none); None when reached or
    when no managed node group holds it."""
    proof: str = ""
    """What the state proves of the lane running it (``PROOFS``)."""


PROOFS = {
    "group": "its node group reached it: every node of the group was launched from it",
    "class": "its EC2NodeClass pins it: nodes Karpenter launched since boot it, older ones drift onto it",
    "pin": "pinned: new instances launch from it",
}
"""What a pin proves, by what holds it: a managed node group's own state, an EC2NodeClass, anything else."""


VERSION_SHOWN = 40
"""The most of a recorded version a message shows (a hostile state may hold any text there)."""


def _version_text(value: Any) -> Optional[str]:
    """A launch template version as the state writes it (the template's ``latestVersion`` is a number, the group's
    ``launchTemplate.version`` text: ``1``, ``"1"``), for messages; None when the state has none (or no scalar)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return clipped(str(value).strip(), VERSION_SHOWN) or None


def _version_number(text: Optional[str]) -> Optional[int]:
    """A version EC2 numbers (1, 2, ...), None for anything else (``$Latest``, ``$Default``: symbolic, they name
    no version)."""
    return int(text) if text is not None and text.isascii() and text.isdigit() and len(text) < 20 else None


FAILURE_SHOWN = 200
"""The most of a recorded failure a message shows: its end, where the provider puts the last error."""


def _failure_text(errors: list[str]) -> Optional[str]:
    text = " ".join(" ".join(errors).split())
    return (text if len(text) <= FAILURE_SHOWN else f"...{text[-FAILURE_SHOWN:]}") or None


def _reached(group: StateResource, template: StateResource) -> Optional[dict[str, Optional[str]]]:
    """None when the group's own state names the template version that holds the image, and records no failed update
    (``initErrors``: pulumi-aws reports a failed rollout with the values it was sent, so the version alone would
    say it reached it); else what each records."""
    group_version = _version_text(bootfacts.as_map(group.outputs.get("launchTemplate")).get("version"))
    template_version = _version_text(template.outputs.get("latestVersion"))
    number = _version_number(group_version)
    failure = _failure_text(group.init_errors)
    if failure is None and number is not None and number == _version_number(template_version):
        return None
    return {"group": group.name, "groupVersion": group_version, "templateVersion": template_version, "failure": failure}


def _later(first: str, second: str) -> str:
    """The later of two recorded times, '' when either records none (a time not recorded proves nothing)."""
    one, other = state_time(first), state_time(second)
    if one is None or other is None:
        return ""
    return first if one >= other else second


def state_pins(state: StackState) -> list[Pin]:
    """Each AMI id a lane of the state pins (``soak.held``), with what the state proves of it."""
    by_urn = {res.urn: res for res in state.resources}
    stack = checks.Stack(
        [
            checks.StackResource(res.type, res.name, res.urn, res.inputs, res.property_dependencies, res.parent)
            for res in state.resources
        ]
    )
    found = []
    for res, lane in stack.items:
        changed, unreached = _changed(by_urn[res.urn]), None
        proof = "class" if isinstance(lane, bootfacts.NodeClass) else "pin"
        group = stack.user(res) if isinstance(lane, bootfacts.LaunchTemplate) else None
        if isinstance(group, bootfacts.EksNodeGroup) and group.urn in by_urn:  # a managed group: proven by the group
            changed = _later(changed, _changed(by_urn[group.urn]))
            unreached, proof = _reached(by_urn[group.urn], by_urn[res.urn]), "group"
        found += [Pin(pin, changed, unreached, proof) for pin in soak.held(stack, res, lane)]
    return found


def pins(state: StackState) -> list[tuple[soak.Held, str]]:
    """Each AMI id a lane of the state pins (``soak.held``), with the ``modified`` time of the resource holding it."""
    return [(pin.held, pin.changed) for pin in state_pins(state)]


def _at_second(when: datetime) -> str:
    """A time in UTC, rounded up to its second (so that a soak read from it is never longer than the state says)."""
    if when.microsecond:  # state_time keeps times a second inside Python's calendar, so this stays inside it
        when = when.replace(microsecond=0) + timedelta(seconds=1)
    return soak.utc_text(when)


def ran_since(state: StackState, found_pins: Optional[list[Pin]] = None) -> dict[str, dict[str, Optional[str]]]:
    """Lane -> AMI -> since when the state shows the lane running it: the earliest ``modified`` of the resources
    holding it there (each one has held it since then at least), or None when none of them records a time. An image
    a managed node group has not reached is not run (``unreached``). ``found_pins``: ``state_pins(state)``."""
    found: dict[str, dict[str, Optional[datetime]]] = {}
    every = state_pins(state) if found_pins is None else found_pins
    for pin, modified in ((p.held, p.changed) for p in every if p.unreached is None):
        when = state_time(modified)
        amis = found.setdefault(pin.lane, {})
        earlier = amis.get(pin.ami)
        amis[pin.ami] = when if earlier is None else (earlier if when is None else min(earlier, when))
    return {
        lane: {ami: (_at_second(when) if when else None) for ami, when in sorted(amis.items())}
        for lane, amis in sorted(found.items())
    }


def unreached(
    state: StackState, found_pins: Optional[list[Pin]] = None
) -> dict[str, dict[str, dict[str, Optional[str]]]]:
    """Lane -> AMI -> the managed node group holding it in a launch template version it has not reached (its name,
    and the versions the state records), for each AMI no holder on that lane proves run."""
    every = state_pins(state) if found_pins is None else found_pins
    ran = ran_since(state, every)
    found: dict[str, dict[str, dict[str, Optional[str]]]] = {}
    for pin in every:
        if pin.unreached is not None and pin.held.ami not in ran.get(pin.held.lane, {}):
            found.setdefault(pin.held.lane, {}).setdefault(pin.held.ami, pin.unreached)
    return {lane: dict(sorted(amis.items())) for lane, amis in sorted(found.items())}


def proofs(state: StackState) -> dict[tuple[str, str], str]:
    """(lane, AMI) -> what the state proves of the lane running it (``PROOFS``): the least its holders prove."""
    found: dict[tuple[str, str], str] = {}
    weakest = list(PROOFS).index
    for pin in (p for p in state_pins(state) if p.unreached is None):
        key = (pin.held.lane, pin.held.ami)
        found[key] = max(found.get(key, pin.proof), pin.proof, key=weakest)
    return {key: PROOFS[proof] for key, proof in found.items()}


def running(state: Optional[StackState]) -> list[str]:
    """Every AMI id the lanes of a stack's own state pin."""
    return sorted({pin.ami for pin, _ in pins(state)}) if state is not None else []


def soak_config(evidence: StackState, own: Optional[StackState] = None, days: Optional[float] = None) -> dict[str, Any]:
    """The ``ami-soaked`` policy config for a stack whose environment before left the state ``evidence`` (and
    whose own state, when given, is ``own``)."""
    every = state_pins(evidence)
    config: dict[str, Any] = {
        "environment": evidence.stack,
        "ranSince": ran_since(evidence, every),
        "unreached": unreached(evidence, every),
        "running": running(own),
    }
    if days is not None:
        config["soakDays"] = days
    return config


def evidence_of(state: StackState, days: float, own: Optional[StackState] = None) -> soak.Evidence:
    """The evidence ``state`` gives a stack whose own state is ``own``, with ``days`` the bar."""
    every = state_pins(state)
    return soak.Evidence(
        state.stack or "the environment before",
        ran_since(state, every),
        days,
        frozenset(running(own)),
        unreached(state, every),
    )


def lanes_run(state: StackState) -> dict[str, dict[str, list[str]]]:
    """Lane -> ``ami_id`` and ``canary_ami_id`` -> the AMIs the lane and its canary pin in the state: what
    promotion gives the same lane, and its canary, in the next environment."""
    found: dict[str, dict[str, list[str]]] = {}
    for pin, _ in pins(state):
        amis = found.setdefault(pin.lane, {"ami_id": [], "canary_ami_id": []})[
            "canary_ami_id" if pin.canary else "ami_id"
        ]
        if pin.ami not in amis:
            amis.append(pin.ami)
    return found


GATE_SHOWN = 6
"""At most this many AMIs are named on the soak gate's line; the rest are counted."""


def gate_line(resources: Sequence[Any], config: Mapping[str, Any]) -> Optional[str]:
    """What the soak gate (``ami-soaked`` with ``config``) judged in a previewed stack's ``resources`` (the program's
    registrations: ``type``, ``name``, ``urn``, ``inputs``, ``property_dependencies``, ``parent``), for a preview it
    passed: the AMIs a lane pins that the stack's own state does not run yet, each on its lane, or that no lane
    needed it. None when the gate is off (no evidence given)."""
    evidence = soak.Evidence.of(config)
    if evidence is None:
        return None
    stack = checks.Stack(
        [checks.StackResource(r.type, r.name, r.urn, r.inputs, r.property_dependencies, r.parent) for r in resources]
    )
    judged = sorted(
        {
            (pin.ami, pin.lane)
            for res, lane in stack.items
            for pin in soak.held(stack, res, lane)
            if pin.ami not in evidence.running
        }
    )
    head = f"Soak gate ({soak.POLICY}, {evidence.needed:g} days in {evidence.environment}): "
    if not judged:
        return head + "no lane newly runs an AMI pinned by id, so none needed it"
    named = [f"{ami} on {clipped(lane, 80)}" for ami, lane in judged[:GATE_SHOWN]]
    more = f" and {len(judged) - GATE_SHOWN} more" if len(judged) > GATE_SHOWN else ""
    return head + f"{', '.join(named)}{more} soaked"
