"""Policy ``ami-soaked``: an AMI that a lane would newly run has run, on a lane of the same name, in the
environment before (staging, for prod) for ``soakDays`` days.

Pure (the pack's ``bootfacts`` and ``checks``): the pack judges a stack's lanes with it, and the offline side
reads the environment before's state with the same ``held`` (``offline/soakstate.py``), so a lane is named
the same way on both sides:

- a Karpenter lane by its NodePool's name; an EC2NodeClass by the NodePools that launch from it (or its
  own name when none does);
- a managed node group by its Pulumi name (the name of the pulumi-eks ``ManagedNodeGroup`` or rack
  ``NodeGroup`` around it, which the components give every environment alike), its launch template by
  the group using it; a self-managed pulumi-eks group by its own name;
- a canary (``mixed-os-racks/canary-of``) by the lane it is the canary of: an AMI it ran counts as run
  on that lane, and an AMI it would run must have run on that lane.

Only AMIs pinned by id are judged: a selector by name, tags or SSM parameter names no AMI until Karpenter or
EC2 resolves it.

The config (the CLI's ``mixed-os-racks soak`` writes it; ``preview --soaked-in`` passes it):
``environment`` (the stack whose state it is), ``ranSince`` (lane -> AMI -> since when that state shows the
AMI on the lane: the ``modified`` time of the resource holding it, or null when the state has none),
``unreached`` (lane -> AMI -> a managed node group whose template holds the AMI in a version the group has not
reached: ``group``, ``groupVersion``, ``templateVersion``, ``failure``), ``running`` (AMIs the stack's own state
already runs: never refused), ``soakDays`` (default 7). Without
``ranSince`` the policy judges nothing: it is off until an environment's evidence is given.
"""

from __future__ import annotations

import calendar
import math
import re
import weakref
from dataclasses import dataclass, field as dataclass_field
from datetime import datetime, timezone
from typing import Any, Iterator, Mapping, Optional

from .. import clock, contract
from ..facts import amifacts
from . import bootfacts, checks, rules

POLICY = "ami-soaked"
DEFAULT_DAYS = 7
DAY_SECONDS = 86400
HOLDERS = (bootfacts.NodeClass, bootfacts.LaunchTemplate, bootfacts.PulumiEksNodeGroup)
"""The resources an AMI id is written in (an EC2NodeClass's terms, a launch template's image, pulumi-eks
``amiId``): whose ``modified`` time says since when the lane has it."""

TIME_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$"
SCHEMA: dict[str, Any] = {
    "soakDays": {
        "type": "number",
        "minimum": 0,
        "default": DEFAULT_DAYS,
        "description": "Days an AMI must have run on a lane of the same name in the environment before.",
    },
    "environment": {"type": "string", "description": "The stack whose state ranSince comes from (for messages)."},
    "ranSince": {
        "type": "object",
        "description": "Lane -> AMI id -> since when that environment's state shows "
        "the AMI on the lane (RFC 3339), or null when it records no time. `mixed-os-racks soak` writes it.",
        "additionalProperties": {
            "type": "object",
            "additionalProperties": {"anyOf": [{"type": "string", "pattern": TIME_PATTERN}, {"type": "null"}]},
        },
    },
    "unreached": {
        "type": "object",
        "description": "Lane -> AMI id -> the managed node group whose launch template "
        "holds the AMI in a version its own state says it has not reached (a failed or unfinished "
        "rollout): such an AMI has not run there. `mixed-os-racks soak` writes it.",
        "additionalProperties": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {
                    "group": {"type": "string"},
                    "groupVersion": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "templateVersion": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "failure": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                },
            },
        },
    },
    "running": {
        "type": "array",
        "items": {"type": "string"},
        "description": "AMI ids this stack's own state already runs: never refused.",
    },
}


@dataclass(frozen=True)
class Held:
    """An AMI id a lane pins, and the resource it is written in."""

    lane: str
    """The lane, as both environments name it (a canary's is its lane's)."""
    ami: str
    subject: str
    """How messages name the resource's lane (a canary by its own name)."""
    canary: bool = False
    """Held by the lane's canary."""


def canary_mark(lane: bootfacts.LaneResource) -> str:
    """The lane a canary belongs to (its ``mixed-os-racks/canary-of``), '' for a lane that is no canary."""
    where = (
        bootfacts.dig(lane.props, "metadata", "annotations")
        if isinstance(lane, (bootfacts.NodeClass, bootfacts.NodePool))
        else lane.props.get("tags")
    )
    return bootfacts.text(bootfacts.as_map(where).get(contract.CANARY_OF))


def group_lane(group: bootfacts.LaneResource) -> str:
    """A node group's lane: its canary mark, else the name of the pulumi-eks component around it, else its own."""
    mark = canary_mark(group)
    if mark:
        return mark
    return group.parent_name if group.built_by == contract.MANAGED_NODE_GROUP and group.parent_name else group.name


_POOLS: "weakref.WeakKeyDictionary[checks.Stack, dict[str, list[bootfacts.NodePool]]]" = weakref.WeakKeyDictionary()


def _pools_of(stack: checks.Stack, node_class: str) -> list[bootfacts.NodePool]:
    """The Karpenter NodePools that launch from the class named ``node_class`` (read once per stack)."""
    found = _POOLS.get(stack)
    if found is None:
        found = {}
        for _, lane in stack.items:
            if isinstance(lane, bootfacts.NodePool) and lane.node_class_ref[:2] == bootfacts.KARPENTER_CLASS:
                found.setdefault(lane.node_class_name, []).append(lane)
        _POOLS[stack] = found
    return found.get(node_class, [])


def held(stack: checks.Stack, res: checks.StackResource, lane: bootfacts.LaneResource) -> list[Held]:
    """Each well-formed AMI id ``res`` pins, with the lane(s) it runs on."""
    if not isinstance(lane, HOLDERS):
        return []
    ids = [a.id for a in checks.well_formed(lane.amis()) if a.id]
    if not ids:
        return []
    if isinstance(lane, bootfacts.NodeClass):  # (lane, canary) of each pool launching from it, else of the class
        names = [(canary_mark(p) or p.subject_name, bool(canary_mark(p))) for p in _pools_of(stack, lane.subject_name)]
        names = names or [(canary_mark(lane) or lane.subject_name, bool(canary_mark(lane)))]
    else:
        group = stack.user(res) if isinstance(lane, bootfacts.LaunchTemplate) else lane
        names = [(group_lane(group), bool(canary_mark(group))) if group is not None else (lane.name, False)]
    subject = checks.subject(lane)
    return [Held(name, ami, subject, canary) for name, canary in dict.fromkeys(names) for ami in dict.fromkeys(ids)]


def parse_time(value: Any) -> Optional[datetime]:
    """A ``ranSince`` time (RFC 3339, with its offset) as an aware datetime, or None."""
    return amifacts.parse_time(value) if isinstance(value, str) and value else None


def time_problem(value: str) -> Optional[str]:
    """Why a ``ranSince`` text of the schema's pattern is no moment (RFC 3339 section 5.6: a month 01-12, a day
    of that month, an hour 00-23, a minute 00-59, a second 00-60, a zone offset -23:59 to +23:59), or None."""
    match = re.fullmatch(TIME_PATTERN, value)
    if match is None:
        return None  # the schema names it
    year, month, day, hour, minute, second = (
        int(value[a:b]) for a, b in ((0, 4), (5, 7), (8, 10), (11, 13), (14, 16), (17, 19))
    )
    zone = match.group(2)
    if not 1 <= month <= 12:
        return f"month {month:02d} is no month (01-12)"
    if not 1 <= day <= calendar.monthrange(max(year, 1), month)[1]:
        return f"day {day:02d} is no day of {year:04d}-{month:02d}"
    if hour > 23 or minute > 59 or second > 60:
        return f"{value[11:19]} is no time of day (00:00:00 to 23:59:60)"
    if zone != "Z" and (int(zone[1:3]) > 23 or int(zone[4:6]) > 59):
        return f"zone offset {zone} is no offset a clock has (-23:59 to +23:59)"
    if year == 0 or parse_time(value) is None:
        return "it is outside the calendar (years 0001-9999 in UTC)"
    return None


def config_problems(props: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``ami-soaked``'s properties beyond what its schema says, each naming its path: a
    ``ranSince`` time of the schema's pattern that is no moment (``+25:00``), which would otherwise read as an
    AMI whose soak the state cannot prove."""
    problems = []
    for lane, amis in bootfacts.as_map(props.get("ranSince")).items():
        for ami, since in bootfacts.as_map(amis).items():
            problem = time_problem(since) if isinstance(since, str) else None
            if problem:
                problems.append(f"ranSince.{lane}.{ami}: {since!r} is no RFC 3339 time: {problem}")
    return problems


def utc_text(when: datetime) -> str:
    """``when`` in UTC to the second, as ``ranSince`` writes it (``2026-12-04T12:00:00Z``, a year before 1000 with
    its four digits); a time whose zone moves it past year 1 or 9999 is held at that end of the calendar."""
    try:
        when = when.astimezone(timezone.utc)
    except OverflowError:
        when = (datetime.min if when.year == 1 else datetime.max).replace(tzinfo=timezone.utc)
    return f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:{when.second:02d}Z"


def whole_days(since: datetime, now: datetime) -> Optional[int]:
    """Whole days from ``since`` to ``now``; None when ``since`` is after ``now`` (a time to come proves no soak)."""
    return None if since > now else math.floor((now - since).total_seconds() / DAY_SECONDS)


@dataclass(frozen=True)
class Evidence:
    """What the environment before's state proves its lanes have run, and the bar: the rule of ``ami-soaked``
    (the policy and ``mixed-os-racks promote`` both ask it)."""

    environment: str
    ran: Mapping[str, Mapping[str, Any]]
    """Lane -> AMI -> since when (RFC 3339 text, or None when the state records no time)."""
    needed: float = DEFAULT_DAYS
    running: frozenset[str] = frozenset()
    """AMIs the judged stack's own state runs: never refused."""
    unreached: Mapping[str, Mapping[str, Any]] = dataclass_field(default_factory=dict)
    """Lane -> AMI -> the managed node group that holds it in a template version it has not reached."""

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Optional["Evidence"]:
        """The policy config's evidence; None when it gives none (the gate is off)."""
        if config.get("ranSince") is None:
            return None
        days = bootfacts.number(config.get("soakDays"))
        return cls(
            bootfacts.text(config.get("environment")) or "the environment before",
            {lane: bootfacts.as_map(amis) for lane, amis in bootfacts.as_map(config.get("ranSince")).items()},
            DEFAULT_DAYS if days is None else days,
            frozenset(a for a in bootfacts.as_list(config.get("running")) if isinstance(a, str)),
            {lane: bootfacts.as_map(amis) for lane, amis in bootfacts.as_map(config.get("unreached")).items()},
        )

    def soaked_days(self, lane: str, ami: str, now: datetime) -> Optional[int]:
        """Whole days the lane has run the AMI, as far as the state proves it; None when it proves nothing."""
        since = parse_time(self.ran.get(lane, {}).get(ami))
        return None if since is None else whole_days(since, now)

    def problem(self, subject: str, lane: str, ami: str, now: datetime) -> Optional[str]:
        """Why ``lane`` may not newly run ``ami`` yet, or None when it may."""
        if ami in self.running:
            return None
        there = self.ran.get(lane, {})
        group = bootfacts.as_map(self.unreached.get(lane, {}).get(ami))
        if ami not in there and group:
            return rules.ami_not_reached(
                subject,
                lane,
                ami,
                self.environment,
                bootfacts.text(group.get("group")),
                bootfacts.text(group.get("groupVersion")),
                bootfacts.text(group.get("templateVersion")),
                self.needed,
                bootfacts.text(group.get("failure")),
            )
        if ami not in there:
            others = sorted(a for a in there if isinstance(a, str))
            return rules.ami_not_run(subject, lane, ami, self.environment, self.needed, others)
        since = parse_time(there[ami])
        if since is None:
            return rules.ami_soak_unproven(subject, lane, ami, self.environment)
        if since > now:  # a time to come proves nothing has run
            return rules.ami_soak_future(subject, lane, ami, self.environment, utc_text(since))
        if (now - since).total_seconds() >= self.needed * DAY_SECONDS:
            return None
        return rules.ami_not_soaked(
            subject, lane, ami, self.environment, self.soaked_days(lane, ami, now) or 0, self.needed, utc_text(since)
        )


def ami_soaked(
    stack: checks.Stack,
    res: checks.StackResource,
    lane: bootfacts.LaneResource,
    knowledge: checks.AmiKnowledge,
    now: Optional[datetime] = None,
) -> Iterator[checks.Finding]:
    """Every AMI ``res`` pins, against the environment before's evidence (none given: nothing is judged)."""
    evidence = Evidence.of(knowledge.config)
    if evidence is None:
        return
    now = now or clock.now()
    for pin in held(stack, res, lane):
        problem = evidence.problem(pin.subject, pin.lane, pin.ami, now)
        if problem:
            yield checks.Finding(problem, res.urn)
