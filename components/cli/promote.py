"""``mixed-os-racks promote --from STATE.json --stack prod``: writes into prod's stack file the AMI each lane of the
environment before runs, when it has soaked there (the policy's own rule, ``pack/soak.py``), and prints what it
changed; an AMI that has not soaked, that the lane cannot boot, or that the preview would refuse there is never
written (the plan is ``promote.py``'s)."""

from __future__ import annotations

import argparse
import os
import stat
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .. import clock
from ..config.keys import NAMESPACE, item_keys
from ..config.params import RackParams, parse_rack_params
from ..config.stackconfig import parse_stack_config, rack_values
from ..errors import ConfigError
from ..offline.catalog import Catalog
from ..offline.soakstate import evidence_of, lanes_run
from ..offline.stackedit import EditError, edit_item, write_text
from ..offline.stackexport import read_stack_export
from ..offline.stackfile import located, model_shape, read_project_file, read_stack_file
from ..pack import bootfacts, soak
from ..promote import PromotionStep, plan, rack_name, readable, refused_config, stack_lanes, unbootable
from .common import EXIT_OK, EXIT_VIOLATION, UsageError, file_kind, print_text, project_dir, stack_of
from .evidence import configured_soak, read_evidence, soak_days

if TYPE_CHECKING:
    from .common import Commands


def add_parser(sub: Commands) -> None:
    p = sub.add_parser("promote", help="write the AMIs that have soaked in the environment before into a stack file")
    p.add_argument(
        "--from",
        type=Path,
        required=True,
        dest="evidence",
        metavar="STATE.json",
        help="the environment before's state: `pulumi stack export` JSON, or a file backend's checkpoint",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--stack", help="write Pulumi.STACK.yaml of the project directory")
    which.add_argument("--config", type=Path, help="write this stack config file")
    p.add_argument("--cwd", type=Path, default=Path("."), help="the project directory (default: .)")
    p.add_argument(
        "--lane",
        action="append",
        dest="lanes",
        default=[],
        metavar="NAME",
        help="promote only this lane (a pool's name, or a node group's, e.g. rack-ng-1; repeatable)",
    )
    p.add_argument(
        "--canary",
        action="store_true",
        help="write the canary_ami_id of the environment before's lanes "
        "into the lanes' canary_ami_id (default: its ami_id into their ami_id)",
    )
    p.add_argument(
        "--state",
        type=Path,
        metavar="FILE",
        help="the stack's own state: an AMI it runs already (its canary's) needs no soak, as the gate never refuses it",
    )
    p.add_argument(
        "--soak-days",
        type=soak_days,
        metavar="N",
        help="days an AMI must have run there (default: soakDays of ami-soaked in --policy-pack-config, else 7)",
    )
    p.add_argument(
        "--policy-pack-config",
        type=Path,
        metavar="FILE",
        dest="config_file",
        help="the pack config the gate reads (its ami-soaked soakDays is the bar)",
    )
    p.add_argument(
        "--amis",
        type=Path,
        metavar="FILE",
        help="the AMI catalog the preview reads (default: as for "
        "preview): an AMI it names as another OS than AL2023 is never written",
    )


def command(args: argparse.Namespace) -> int:
    """``mixed-os-racks promote --from STATE.json --stack STACK``: soaked AMIs into the stack file."""
    cwd = project_dir(args.cwd)
    project = read_project_file(cwd)
    stack, stack_file = stack_of(args, cwd)
    evidence_state = read_evidence(args.evidence)
    if evidence_state.resources and evidence_state.project != project:
        sys.stderr.write(
            f"warning: --from {args.evidence}: is the state of project {evidence_state.project!r}, not of "
            f"project {project!r} (Pulumi.yaml): its lanes are matched by name\n"
        )
    if (evidence_state.project, evidence_state.stack) == (project, stack):
        raise UsageError(
            f"--from {args.evidence}: is the state of stack {stack!r} itself: give the state of the "
            f"environment before it"
        )
    shapes = {NAMESPACE: model_shape(RackParams, item_keys())}
    original = _stack_file_bytes(stack_file)
    at_line: dict[str, int] = {}
    config = readable(read_stack_file(stack_file, project, shapes, None, at_line, secrets=True))
    rack = rack_name(evidence_state)
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
            raise UsageError(
                f"--lane {unknown[0]}: {stack_file} has no lane of that name that takes an ami_id "
                f"(its pools and node groups: {names})"
            )
        lanes = [lane for lane in lanes if lane.name in args.lanes]
    configured = bootfacts.number(configured_soak(args.config_file)[1].get("soakDays"))
    days = next(d for d in (args.soak_days, configured, soak.DEFAULT_DAYS) if d is not None)
    own = read_stack_export(args.state, project, stack) if args.state is not None else None
    evidence = evidence_of(evidence_state, days, own)
    now = clock.now()
    steps, notes = plan(lanes, evidence, lanes_run(evidence_state), args.canary, now)
    lines = [f"Promoting into {stack_file} from stack {evidence.environment} ({args.evidence}); soakDays {days:g}:"]
    catalog = Catalog.with_default(args.amis)
    steps = [replace(step, problem=step.problem or unbootable(step, catalog)) for step in steps]
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
            problem = refused_config(draft, project, rack, shapes).replace(str(draft), str(stack_file))
            if problem:  # what the preview would refuse is never written: this lane is left as it was
                draft.write_bytes(kept)
                lines.append(
                    f"    not promoted: {step.lane.subject}: {_change_words(step)} would be refused: {problem}"
                )
                refused = True
                continue
            text, written = edited, written + 1
            why = (
                f"{stack}'s own state runs it"
                if step.ami in evidence.running
                else f"ran {step.soaked} days on lane '{step.lane.name}' in {evidence.environment}"
            )
            lines.append(f"    {step.lane.subject}: {_change_words(step)} ({why})")
    if text is not None:
        write_text(stack_file, text)
    lines += [f"    {note}" for note in notes]
    lines.append(f"wrote {stack_file} ({written} lane{'s' if written != 1 else ''})" if written else "nothing written")
    print_text("\n".join(lines) + "\n")
    return EXIT_VIOLATION if refused else EXIT_OK


def _change_words(step: PromotionStep) -> str:
    field = next(iter(step.changes))
    before = step.lane.canary_ami_id if field == "canary_ami_id" else step.lane.ami_id
    words = f"{step.lane.where}.{field}: {before or '(none)'} -> {step.ami}"
    removed = [f for f, v in step.changes.items() if v is None]
    return words + (f"; {', '.join(removed)} removed (its canary ran it)" if removed else "")


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
        raise UsageError(f"{path}: is not a regular file ({file_kind(mode)}); promote edits a stack file in place")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
