"""``mixed-os-racks soak`` and ``mixed-os-racks promote``: a new AMI's way from one environment to the next.

``soak STATE.json`` writes the ``ami-soaked`` policy config from the state of the environment before (a
``pulumi stack export`` or a file backend's checkpoint): what each of its lanes has run, and since when
(``offline/soakstate.py``). ``promote --from STATE.json --stack prod`` writes into prod's stack file the
AMI each lane of the environment before runs, when it has soaked there (the policy's own rule,
``pack/soak.py``), and prints what it changed; an AMI that has not soaked is never written.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import stat
import sys
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping, Optional

from . import clock, contract
from .cli.common import EXIT_OK, EXIT_VIOLATION, UsageError, check_output, print_text, project_dir, stack_of
from .config.keys import NAMESPACE, item_keys
from .config.params import RackParams, parse_rack_params
from .config.stackconfig import parse_stack_config, rack_values
from .offline.policyconfig import PolicyPackError, properties_problems, read_config_file, with_entry
from .offline.soakstate import evidence_of, lanes_run, proofs, soak_config
from .offline.stackedit import EditError, edit_item, write_text
from .offline.stackexport import StackState, read_stack_export
from .errors import ConfigError
from .offline.catalog import Catalog
from .offline.stackfile import (InputFileError, Secret, located, model_shape, read_project_file, read_stack_file,
                                read_utf8)
from .facts import instances
from .pack import bootfacts, rules, soak
from .spec.base import shown


def soak_days(text: str) -> float:
    """``--soak-days``: a number of days, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days (0 or more)")
    return value


def add_parsers(sub: Any) -> None:
    s = sub.add_parser("soak", help="write the ami-soaked policy config from the state of the environment before")
    s.add_argument("evidence", type=Path, metavar="STATE.json",
                   help="the environment before's state: `pulumi stack export` JSON, or a file backend's checkpoint")
    s.add_argument("--state", type=Path, metavar="FILE", help="the judged stack's own state: AMIs it runs are never refused")
    s.add_argument("--soak-days", type=soak_days, metavar="N", help="days an AMI must have run there (default: the "
                   "config's soakDays, else 7)")
    s.add_argument("--policy-pack-config", type=Path, metavar="FILE", dest="config_file",
                   help="write the ami-soaked entry into this pack config (its other entries are kept; created if "
                        "absent); default: print the config")
    p = sub.add_parser("promote", help="write the AMIs that have soaked in the environment before into a stack file")
    p.add_argument("--from", type=Path, required=True, dest="evidence", metavar="STATE.json",
                   help="the environment before's state: `pulumi stack export` JSON, or a file backend's checkpoint")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--stack", help="write Pulumi.STACK.yaml of the project directory")
    which.add_argument("--config", type=Path, help="write this stack config file")
    p.add_argument("--cwd", type=Path, default=Path("."), help="the project directory (default: .)")
    p.add_argument("--lane", action="append", dest="lanes", default=[], metavar="NAME",
                   help="promote only this lane (a pool's name, or a node group's, e.g. rack-ng-1; repeatable)")
    p.add_argument("--canary", action="store_true", help="write the canary_ami_id of the environment before's lanes "
                   "into the lanes' canary_ami_id (default: its ami_id into their ami_id)")
    p.add_argument("--state", type=Path, metavar="FILE", help="the stack's own state: an AMI it runs already (its "
                   "canary's) needs no soak, as the gate never refuses it")
    p.add_argument("--soak-days", type=soak_days, metavar="N", help="days an AMI must have run there (default: "
                   "soakDays of ami-soaked in --policy-pack-config, else 7)")
    p.add_argument("--policy-pack-config", type=Path, metavar="FILE", dest="config_file",
                   help="the pack config the gate reads (its ami-soaked soakDays is the bar)")
    p.add_argument("--amis", type=Path, metavar="FILE", help="the AMI catalog the preview reads (default: as for "
                   "preview): an AMI it names as another OS than AL2023 is never written")


def _configured(path: Optional[Path], written: bool = False) -> tuple[str, dict[str, Any]]:
    """(level, properties) of ``ami-soaked`` in a pack config file ('', {} when it has none), checked as the pack
    checks its config: its schema, then what the schema cannot state (``soak.config_problems``), so a bar the
    gate would refuse (``soakDays: -1``, ``true``) is never the bar. A file that does not exist is an error,
    unless the command is to write it (``written``)."""
    if path is None or written and not os.path.lexists(path):
        return "", {}
    if not os.path.lexists(path):
        raise UsageError(f"--policy-pack-config {path}: no such file (the pack config the gate reads; leave the flag "
                         f"out for soakDays {soak.DEFAULT_DAYS:g})")
    level, props = read_config_file(path).get(soak.POLICY, ("", None))
    props = dict(props or {})
    problems = properties_problems(soak.SCHEMA, props) + soak.config_problems(props)
    if problems:
        raise PolicyPackError(f"policy pack config {path}: invalid config for '{soak.POLICY}' (the pack refuses it):\n  "
                              + "\n  ".join(problems))
    return level, props


def _read_evidence(path: Path) -> StackState:
    state = read_stack_export(path)
    if not state.resources:
        sys.stderr.write(f"warning: {path}: the state has no resources, so it proves no lane ran anything\n")
    return state


def _evidence_lines(config: dict[str, Any], now: datetime, proven: Mapping[tuple[str, str], str]) -> list[str]:
    lines = []
    for lane, amis in config["ranSince"].items():
        for ami, since in amis.items():
            ran = soak.parse_time(since)
            days = soak.whole_days(ran, now) if ran is not None else None
            age = ("no time recorded: its soak cannot be proven" if ran is None else
                   f"since {since}, which is in the future: it proves no soak" if days is None else
                   f"since {since} ({days} days; {proven[lane, ami]})" if (lane, ami) in proven else
                   f"since {since} ({days} days)")
            lines.append(f"    lane '{shown(lane)}': {shown(ami)} {age}")
    for lane, amis in config.get("unreached", {}).items():
        for ami, group in amis.items():
            where = (f"its last update failed: {group['failure']}" if group.get("failure") else
                     f"at launch template version {group['groupVersion'] or 'none'}, the image in version "
                     f"{group['templateVersion'] or 'none'}")
            lines.append(f"    lane '{shown(lane)}': {shown(ami)} pinned, but node group '{shown(group['group'])}' has not "
                         f"reached it ({shown(where)}): not run there")
    return lines or ["    (no lane pins an AMI by id)"]


def soak_command(args: argparse.Namespace) -> int:
    """``mixed-os-racks soak STATE.json``: the ``ami-soaked`` policy config from that state."""
    if args.config_file is not None:
        check_output(args.config_file, [args.evidence, *([args.state] if args.state else [])], "--policy-pack-config")
        if os.path.exists(args.config_file) and not stat.S_ISREG(mode := os.stat(args.config_file).st_mode):
            raise UsageError(f"--policy-pack-config {args.config_file}: is not a regular file ({_kind(mode)}); soak "
                             f"writes its entry into a file")
    evidence = _read_evidence(args.evidence)
    own = read_stack_export(args.state) if args.state is not None else None
    if own is not None and (own.project, own.stack) == (evidence.project, evidence.stack):
        raise UsageError(f"--state {args.state}: is the state of stack {evidence.stack!r}, the environment the evidence is "
                         f"from: give the judged stack's own state")
    level, props = _configured(args.config_file, written=True)
    config = {**props, **soak_config(evidence, own, args.soak_days)}
    if level:
        config = {"enforcementLevel": level, **config}
    now = clock.now()
    summary = [f"Evidence from stack {evidence.stack or '(empty)'} ({args.evidence}), as of "
               f"{now.strftime('%Y-%m-%dT%H:%M:%SZ')}; soakDays {config.get('soakDays', soak.DEFAULT_DAYS):g}:",
               *_evidence_lines(config, now, proofs(evidence))]
    if own is not None:
        summary.append(f"    never refused (stack {own.stack}'s own): {', '.join(config['running']) or 'none'}")
    if args.config_file is None:
        sys.stderr.write("\n".join(summary) + "\n")
        print_text(json.dumps({soak.POLICY: config}, indent=2) + "\n")
        return EXIT_OK
    text = ""
    if os.path.lexists(args.config_file):  # read_config_file has checked it: a regular file now (see _configured)
        text = read_utf8(args.config_file, "policy pack config")
    write_text(args.config_file, with_entry(text, soak.POLICY, config, str(args.config_file)))  # the rest kept as it was
    print_text("\n".join(summary) + f"\nwrote {args.config_file} ({soak.POLICY})\n")
    return EXIT_OK


# ---- promote ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lane:
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
class Step:
    """What promotion does to one lane: ``changes`` written, or not when there is a ``problem``."""

    lane: Lane
    ami: str
    changes: dict[str, Optional[str]]
    soaked: Optional[int]
    problem: Optional[str] = None


def stack_lanes(params: RackParams, rack: str) -> list[Lane]:
    """The lanes of a stack config that take an ``ami_id``: its additional pools and node groups, named as the
    ``Rack`` named ``rack`` names them."""
    def written(spec: Any, fields: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(f for f in fields if f in spec.model_fields_set)

    lanes = [Lane(p.name, p.subject, f"{NAMESPACE}:additional_karpenter_nodepools_config", n, p.ami_id, p.canary_ami_id,
                  written(p, ("canary_ami_id", "canary_nodes")), p)
             for n, p in enumerate(params.additional_karpenter_nodepools_config)]
    for key in ("additional_node_groups_config", "additional_build_groups_config"):
        lanes += [Lane(g.name or "", g.subject, f"{NAMESPACE}:{key}", n, g.ami_id, g.canary_ami_id,
                       written(g, ("canary_ami_id", "canary_size")), g) for n, g in enumerate(getattr(params, key))]
    return lanes


def plan(lanes: list[Lane], evidence: soak.Evidence, run: dict[str, dict[str, list[str]]], canary: bool,
         now: datetime) -> tuple[list[Step], list[str]]:
    """(steps, notes): each lane takes what its namesake pins in the environment before, field for field: its
    ``ami_id`` (with ``canary``: its ``canary_ami_id``), when that is not what the lane has already. Notes say
    what is left as it is, and why."""
    field = "canary_ami_id" if canary else "ami_id"
    steps: list[Step] = []
    notes: list[str] = []
    for lane in lanes:
        amis = run.get(lane.name, {}).get(field, [])
        if not amis:
            notes.append(f"{lane.subject}: {evidence.environment} has no {field} on lane '{lane.name}': nothing to promote")
            continue
        if len(amis) > 1:
            notes.append(f"{lane.subject}: {evidence.environment} pins {len(amis)} AMIs on lane '{lane.name}' "
                         f"({', '.join(amis)}), and promote writes one: set {lane.where}.{field} by hand")
            continue
        ami = amis[0]
        if ami in (lane.ami_id, lane.canary_ami_id if canary else None):
            notes.append(f"{lane.subject}: runs {ami} already, as {evidence.environment} does")
            continue
        changes: dict[str, Optional[str]] = {field: ami}
        if not canary and lane.canary_ami_id == ami:  # its canary's candidate becomes the lane's: the canary goes
            changes.update({f: None for f in lane.canary_fields})
        steps.append(Step(lane, ami, changes, evidence.soaked_days(lane.name, ami, now),
                          evidence.problem(lane.subject, lane.name, ami, now)))
    return steps, notes


def _rack_name(state: StackState) -> str:
    """The name of the ``Rack`` in the evidence's state (node groups are named after it), else ``rack``."""
    names = {res.name for res in state.resources if res.type == contract.COMPONENT_RACK}
    return names.pop() if len(names) == 1 else "rack"


def _change_words(step: Step) -> str:
    field = next(iter(step.changes))
    before = step.lane.canary_ami_id if field == "canary_ami_id" else step.lane.ami_id
    words = f"{step.lane.where}.{field}: {before or '(none)'} -> {step.ami}"
    removed = [f for f, v in step.changes.items() if v is None]
    return words + (f"; {', '.join(removed)} removed (its canary ran it)" if removed else "")


def promote_command(args: argparse.Namespace) -> int:
    """``mixed-os-racks promote --from STATE.json --stack STACK``: soaked AMIs into the stack file."""
    cwd = project_dir(args.cwd)
    project = read_project_file(cwd)
    stack, stack_file = stack_of(args, cwd)
    evidence_state = _read_evidence(args.evidence)
    if evidence_state.resources and evidence_state.project != project:
        sys.stderr.write(f"warning: --from {args.evidence}: is the state of project {evidence_state.project!r}, not of "
                         f"project {project!r} (Pulumi.yaml): its lanes are matched by name\n")
    if (evidence_state.project, evidence_state.stack) == (project, stack):
        raise UsageError(f"--from {args.evidence}: is the state of stack {stack!r} itself: give the state of the "
                         f"environment before it")
    shapes = {NAMESPACE: model_shape(RackParams, item_keys())}
    original = _stack_file_bytes(stack_file)
    at_line: dict[str, int] = {}
    config = _readable(read_stack_file(stack_file, project, shapes, None, at_line, secrets=True))
    rack = _rack_name(evidence_state)
    region = config.get("aws:region")
    try:  # a config with problems is named (with its file and line), and never written into
        parse_stack_config(config, project, rack)
        params = parse_rack_params(rack_values(config), rack, region if isinstance(region, str) else None)
    except ConfigError as exc:
        raise ConfigError(located(str(exc), str(stack_file), at_line)) from None
    lanes = stack_lanes(params, rack)
    if args.lanes:
        unknown = [name for name in args.lanes if name not in {lane.name for lane in lanes}]
        if unknown:
            names = ", ".join(lane.name for lane in lanes) or "none"
            raise UsageError(f"--lane {unknown[0]}: {stack_file} has no lane of that name that takes an ami_id "
                             f"(its pools and node groups: {names})")
        lanes = [lane for lane in lanes if lane.name in args.lanes]
    configured = bootfacts.number(_configured(args.config_file)[1].get("soakDays"))
    days = next(d for d in (args.soak_days, configured, soak.DEFAULT_DAYS) if d is not None)
    own = read_stack_export(args.state, project, stack) if args.state is not None else None
    evidence = evidence_of(evidence_state, days, own)
    now = clock.now()
    steps, notes = plan(lanes, evidence, lanes_run(evidence_state), args.canary, now)
    lines = [f"Promoting into {stack_file} from stack {evidence.environment} ({args.evidence}); soakDays {days:g}:"]
    catalog = Catalog.with_default(args.amis)
    steps = [replace(step, problem=step.problem or _unbootable(step, catalog)) for step in steps]
    text = None  # every change made in memory first: the file is written once, or not at all
    written = 0
    refused = False
    with tempfile.TemporaryDirectory() as folder:
        draft = Path(folder) / stack_file.name
        draft.write_bytes(original)
        for step in steps:
            if step.problem:
                lines.append(f"    not promoted: {step.problem}")
                refused = True
                continue
            try:
                edited = edit_item(draft, project, step.lane.key, step.lane.index, step.changes, shapes)
            except EditError as exc:
                raise UsageError(str(exc).replace(str(draft), str(stack_file))) from None
            kept = draft.read_bytes()
            draft.write_text(edited, encoding="utf-8", newline="")
            problem = _refused_config(draft, project, rack, shapes).replace(str(draft), str(stack_file))
            if problem:  # what the preview would refuse is never written: this lane is left as it was
                draft.write_bytes(kept)
                lines.append(f"    not promoted: {step.lane.subject}: {_change_words(step)} would be refused: {problem}")
                refused = True
                continue
            text, written = edited, written + 1
            why = (f"{stack}'s own state runs it" if step.ami in evidence.running else
                   f"ran {step.soaked} days on lane '{step.lane.name}' in {evidence.environment}")
            lines.append(f"    {step.lane.subject}: {_change_words(step)} ({why})")
    if text is not None:
        write_text(stack_file, text)
    lines += [f"    {note}" for note in notes]
    lines.append(f"wrote {stack_file} ({written} lane{'s' if written != 1 else ''})" if written else "nothing written")
    print_text("\n".join(lines) + "\n")
    return EXIT_VIOLATION if refused else EXIT_OK


def _stack_file_bytes(path: Path) -> bytes:
    """The stack file promote writes into: a regular file (a link to one is followed), never a FIFO, a device or a
    directory, which no edit can be written into and whose reading may never end."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise UsageError(f"{path}: no such stack file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{path}: is not a regular file ({_kind(mode)}); promote edits a stack file in place")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _kind(mode: int) -> str:
    return ("a directory" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "a device")


def _readable(config: dict[str, Any]) -> dict[str, Any]:
    """The config without its ``secure:`` keys, which promote never reads nor writes (they stay in the file as
    written): the rest is checked as the preview checks it."""
    return {key: value for key, value in config.items() if not isinstance(value, Secret)}


def _unbootable(step: Step, catalog: Catalog) -> Optional[str]:
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
    return ((seen and rules.ami_names_other_os(subject, step.ami, image.name, seen))
            or rules.arch_mismatch(subject, arches, step.ami, image.architecture)
            or (rules.disk_below_snapshot(subject, spec.disk, step.ami, snapshot) if snapshot is not None else None)
            or None)


def _refused_config(draft: Path, project: str, rack: str, shapes: dict[str, Any]) -> str:
    """What the preview would refuse in the edited stack file (the config model's rules: a canary beside a pool
    of weight 100, or named as another lane), as one line; '' when it takes it."""
    at_line: dict[str, int] = {}
    try:
        config = _readable(read_stack_file(draft, project, shapes, None, at_line, secrets=True))
        region = config.get("aws:region")
        parse_stack_config(config, project, rack)
        parse_rack_params(rack_values(config), rack, region if isinstance(region, str) else None)
    except (ConfigError, InputFileError) as exc:
        return "; ".join(str(exc).splitlines())
    return ""
