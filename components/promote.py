"""Promotion: the lanes of a stack file that pin an AMI, and what taking the AMIs the environment before runs does
to each (``plan``): its ``ami_id`` (or ``canary_ami_id``) when the AMI has soaked there (the policy's own rule,
``pack/soak.py``), and never an AMI the lane cannot boot (``unbootable``) or a config the preview would refuse
(``refused_config``). The commands ``mixed-os-racks soak`` and ``promote`` are ``cli/soak.py`` and
``cli/promote.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

from . import contract
from .config.keys import NAMESPACE
from .config.params import RackParams, parse_rack_params
from .config.stackconfig import parse_stack_config, rack_values
from .errors import ConfigError
from .facts import instances
from .offline.catalog import Catalog
from .offline.stackexport import StackState
from .offline.stackfile import InputFileError, Secret, read_stack_file
from .pack import rules, soak


@dataclass(frozen=True)
class StackLane:
    """A lane of the stack file that pins an AMI (an additional pool or a node group): where, and what it pins."""

    name: str
    subject: str
    key: str
    """Its list's stack-config key (``rack:additional_karpenter_nodepools_config``)."""
    index: int
    ami_id: Optional[str]
    canary_ami_id: Optional[str]
    canary_fields: tuple[str, ...]
    """Its canary's fields the stack file writes (``canary_ami_id``, ``canary_nodes``/``canary_size``)."""
    spec: Any = None
    """Its ``PoolSpec`` or ``NodeGroupSpec``: what an AMI it takes must boot (architecture, disk)."""

    @property
    def where(self) -> str:
        return f"{self.key}[{self.index}]"


@dataclass(frozen=True)
class PromotionStep:
    """What promotion does to one lane: ``changes`` written, or not when there is a ``problem``."""

    lane: StackLane
    ami: str
    changes: dict[str, Optional[str]]
    soaked: Optional[int]
    problem: Optional[str] = None


def stack_lanes(params: RackParams, rack: str) -> list[StackLane]:
    """The lanes of a stack config that take an ``ami_id``: its additional pools and node groups, named as the
    ``Rack`` named ``rack`` names them."""

    def written(spec: Any, fields: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(f for f in fields if f in spec.model_fields_set)

    lanes = [
        StackLane(
            p.name,
            p.subject,
            f"{NAMESPACE}:additional_karpenter_nodepools_config",
            n,
            p.ami_id,
            p.canary_ami_id,
            written(p, ("canary_ami_id", "canary_nodes")),
            p,
        )
        for n, p in enumerate(params.additional_karpenter_nodepools_config)
    ]
    for key in ("additional_node_groups_config", "additional_build_groups_config"):
        lanes += [
            StackLane(
                g.name or "",
                g.subject,
                f"{NAMESPACE}:{key}",
                n,
                g.ami_id,
                g.canary_ami_id,
                written(g, ("canary_ami_id", "canary_size")),
                g,
            )
            for n, g in enumerate(getattr(params, key))
        ]
    return lanes


def plan(
    lanes: list[StackLane], evidence: soak.Evidence, run: dict[str, dict[str, list[str]]], canary: bool, now: datetime
) -> tuple[list[PromotionStep], list[str]]:
    """(steps, notes): each lane takes what its namesake pins in the environment before, field for field: its
    ``ami_id`` (with ``canary``: its ``canary_ami_id``), when that is not what the lane has already. Notes say
    what is left as it is, and why."""
    field = "canary_ami_id" if canary else "ami_id"
    steps: list[PromotionStep] = []
    notes: list[str] = []
    for lane in lanes:
        amis = run.get(lane.name, {}).get(field, [])
        if not amis:
            notes.append(
                f"{lane.subject}: {evidence.environment} has no {field} on lane '{lane.name}': nothing to promote"
            )
            continue
        if len(amis) > 1:
            notes.append(
                f"{lane.subject}: {evidence.environment} pins {len(amis)} AMIs on lane '{lane.name}' "
                f"({', '.join(amis)}), and promote writes one: set {lane.where}.{field} by hand"
            )
            continue
        ami = amis[0]
        if ami in (lane.ami_id, lane.canary_ami_id if canary else None):
            notes.append(f"{lane.subject}: runs {ami} already, as {evidence.environment} does")
            continue
        changes: dict[str, Optional[str]] = {field: ami}
        if not canary and lane.canary_ami_id == ami:  # its canary's candidate becomes the lane's: the canary goes
            changes.update({f: None for f in lane.canary_fields})
        steps.append(
            PromotionStep(
                lane,
                ami,
                changes,
                evidence.soaked_days(lane.name, ami, now),
                evidence.problem(lane.subject, lane.name, ami, now),
            )
        )
    return steps, notes


def rack_name(state: StackState) -> str:
    """The name of the ``Rack`` in the evidence's state (node groups are named after it), else ``rack``."""
    names = {res.name for res in state.resources if res.type == contract.COMPONENT_RACK}
    return names.pop() if len(names) == 1 else "rack"


def readable(config: dict[str, Any]) -> dict[str, Any]:
    """The config without its ``secure:`` keys, which promote never reads nor writes (they stay in the file as
    written): the rest is checked as the preview checks it."""
    return {key: value for key, value in config.items() if not isinstance(value, Secret)}


def unbootable(step: PromotionStep, catalog: Catalog) -> Optional[str]:
    """Why the lane cannot boot the AMI by the catalog's facts, as the preview checks a pinned AMI (``ami.py``), or
    None: every lane that pins an AMI is AL2023, so a Bottlerocket image there is refused (``al2023-family``), and
    so are an architecture the lane does not launch (``arch-matches-ami``) and a root snapshot larger than its
    disk (``disk-fits-ami-snapshot``). An AMI the catalog does not hold is left to the preview's look-up."""
    image = catalog.get(step.ami)
    spec = step.lane.spec
    if image is None or spec is None:
        return None
    subject = step.lane.subject
    seen = rules.os_of_ami(image.name, image.description)
    arches = list(spec.arch) if hasattr(spec, "arch") else [instances.instance_arch(spec.instance_type)]
    snapshot = image.root_snapshot_gib
    return (
        (seen and rules.ami_names_other_os(subject, step.ami, image.name, seen))
        or rules.arch_mismatch(subject, arches, step.ami, image.architecture)
        or (rules.disk_below_snapshot(subject, spec.disk, step.ami, snapshot) if snapshot is not None else None)
        or None
    )


def refused_config(draft: Path, project: str, rack: str, shapes: dict[str, Any]) -> str:
    """What the preview would refuse in the edited stack file (the config model's rules: a canary beside a pool
    of weight 100, or named as another lane), as one line; '' when it takes it."""
    at_line: dict[str, int] = {}
    try:
        config = readable(read_stack_file(draft, project, shapes, None, at_line, secrets=True))
        region = config.get("aws:region")
        parse_stack_config(config, project, rack)
        parse_rack_params(rack_values(config), rack, region if isinstance(region, str) else None)
    except (ConfigError, InputFileError) as exc:
        return "; ".join(str(exc).splitlines())
    return ""
