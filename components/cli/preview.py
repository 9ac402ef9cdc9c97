"""``mixed-os-racks preview``: the rack's preview on a machine with no cloud; with ``--state``, the plan against
the stack's exported state and the lane verdicts over it; with ``--soaked-in``, the soak gate against the
environment before's state."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

from ..offline import costs as lane_costs
from ..offline import require_sdk
from ..offline.catalog import Catalog
from ..offline.policyconfig import read_config_file
from ..offline.preview import render, to_json
from ..offline.records import ProgramRun
from ..offline.stackexport import StackState, read_stack_export
from ..offline.stackfile import read_project
from ..spec.base import shown
from .common import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_VIOLATION,
    UsageError,
    allow_argument,
    allowed_lanes,
    check_output,
    error_lines,
    print_text,
    program_of,
    project_dir,
    stack_of,
    unused_allowances,
    write_json,
)
from .evidence import soak_days
from .packs import pack_summary, packs_to_run
from .stackrun import read_stack, read_state, run_stack

if TYPE_CHECKING:
    from .common import Commands


def add_parser(sub: Commands) -> None:
    p = sub.add_parser("preview", help="preview a stack offline, like `pulumi preview`")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--stack", help="read Pulumi.STACK.yaml from the project directory")
    which.add_argument("--config", type=Path, help="any stack config file")
    p.add_argument("--cwd", type=Path, default=Path("."), help="the project directory (default: .)")
    p.add_argument(
        "--amis",
        type=Path,
        metavar="FILE",
        help="AMI catalog file, added to the default catalog (the "
        "example stacks' images): an entry of FILE replaces the default's of the same id or key",
    )
    p.add_argument("--json", type=Path, dest="json_out", help="also write resources and violations as JSON")
    p.add_argument(
        "--policy-pack",
        type=Path,
        action="append",
        dest="policy_packs",
        metavar="DIR",
        help="run this CrossGuard policy pack (repeatable; default: the nearest policies/ at or above --cwd, else the "
        "pack installed with this package)",
    )
    p.add_argument(
        "--policy-pack-config",
        type=Path,
        action="append",
        dest="policy_pack_configs",
        metavar="FILE",
        help="the pack's config, in the Pulumi CLI's format (repeatable: one per --policy-pack, in order)",
    )
    p.add_argument("--no-policy", action="store_true", help="run no policy pack")
    p.add_argument(
        "--state",
        type=Path,
        metavar="FILE",
        help="compare with the stack's state (`pulumi stack export` JSON): print the plan, judge lane changes",
    )
    allow_argument(p)
    p.add_argument(
        "--soaked-in",
        type=Path,
        metavar="FILE",
        help="the state of the environment before (`pulumi stack export` JSON, or a checkpoint): ami-soaked "
        "refuses an AMI a lane would newly run that has not run there on a lane of the same name",
    )
    p.add_argument(
        "--soak-days",
        type=soak_days,
        metavar="N",
        help="with --soaked-in: the days it must have run there "
        "(default: soakDays of ami-soaked in the pack config, else 7)",
    )


def command(args: argparse.Namespace) -> int:
    """``mixed-os-racks preview --stack STACK``: the stack's program run offline, judged by the packs."""
    require_sdk()  # the one command that runs a program: it needs the SDK release the engine was tested on
    cwd = project_dir(args.cwd)
    project_file = read_project(cwd)
    project, program = project_file.name, program_of(cwd, project_file.runtime)
    stack, stack_file = stack_of(args, cwd)
    if args.no_policy and (args.policy_packs or args.policy_pack_configs):
        raise UsageError("--no-policy runs no pack: drop --policy-pack and --policy-pack-config")
    packs, source = packs_to_run(args, cwd)
    for pack in packs:
        if not (pack / "PulumiPolicy.yaml").is_file():
            raise UsageError(f"no policy pack at {pack} (no PulumiPolicy.yaml): pass --policy-pack DIR, or --no-policy")
    allow = allowed_lanes(args)
    if allow and args.state is None:
        raise UsageError(
            "--allow-lane-removal needs --state FILE: without the stack's state there is nothing to remove"
        )
    if args.soaked_in is not None and args.no_policy:
        raise UsageError("--soaked-in is judged by the policy ami-soaked, in the policy pack: drop --no-policy")
    if args.soak_days is not None and args.soaked_in is None:
        raise UsageError("--soak-days needs --soaked-in FILE (the state of the environment before)")
    if args.json_out:
        inputs = [stack_file, cwd / "Pulumi.yaml", *program, *(args.policy_pack_configs or [])]
        inputs += [args.state] if args.state else []
        inputs += [args.soaked_in] if args.soaked_in else []
        inputs += [args.amis] if args.amis else []
        inputs += [pack / name for pack in packs for name in ("PulumiPolicy.yaml", "__main__.py")]
        check_output(args.json_out, inputs)
    config_lines = read_stack(stack_file, project)
    state = read_state(args.state, project, stack)
    overrides = _soaked_in(args, project, stack, state)
    catalog = Catalog.with_default(args.amis)
    ran = run_stack(
        cwd, project_file, stack, stack_file, config_lines, catalog, packs, args.policy_pack_configs or [], overrides
    )
    run, violations, names, worst = ran.run, ran.violations, ran.names, ran.worst
    gate = _soak_gate(run, args.policy_pack_configs or [], overrides, violations) if packs else ""
    if state is None:
        print_text(
            render(run, violations, lane_costs.lines(worst))
            + (pack_summary(packs, names, source, violations) if packs else "")
            + gate
        )
        if args.json_out:
            write_json(args.json_out, {**to_json(run, violations), "costs": lane_costs.as_json(worst)})
    else:  # the plan's modules load only when asked for: the plain preview stays as fast as it was
        from ..offline.laneguard import guard_steps, judge
        from ..offline.plan import make_plan, plan_json, render_plan

        plan = make_plan(run, state)
        steps = guard_steps(plan.steps)
        violations = violations + judge(steps, allow)
        unused_allowances(allow, steps)
        if state.encrypted:
            sys.stderr.write(
                f"warning: {args.state}: {state.encrypted} secret value(s) are ciphertext, which the offline "
                "preview cannot read: they are compared as unknown, never as changed\n"
            )
        print_text(
            render_plan(plan, violations, lane_costs.lines(worst))
            + (pack_summary(packs, names, source, violations) if packs else "")
            + gate
        )
        if args.json_out:
            doc = {**to_json(run, violations), "costs": lane_costs.as_json(worst)}
            doc["resources"] = plan_json(plan)
            doc["summary"] = plan.summary()
            doc["errors"] = list(plan.errors)
            write_json(args.json_out, doc)
        if plan.errors:  # what makes the real preview fail: the plan is shown, and the command fails as it would
            error_lines(plan.errors)
            return EXIT_ERROR
    return EXIT_VIOLATION if any(v["level"] == "mandatory" for v in violations) else EXIT_OK


def _soak_gate(
    run: ProgramRun,
    pack_configs: Sequence[Path],
    overrides: dict[str, dict[str, Any]],
    violations: Sequence[dict[str, Any]],
) -> str:
    """The soak gate's line for a preview it passed (``soakstate.gate_line``): its config is the pack configs'
    ``ami-soaked`` (the last file's winning) under ``--soaked-in``'s; '' when it refused an AMI (the violations
    say which) or is off (no evidence given)."""
    from ..offline.soakstate import gate_line
    from ..pack.soak import POLICY

    if any(v["policy"] == POLICY for v in violations):
        return ""
    config: dict[str, Any] = {}
    for path in pack_configs:
        config.update(read_config_file(path).get(POLICY, ("", None))[1] or {})
    line = gate_line(run.resources, {**config, **overrides.get(POLICY, {})})
    return f"    {shown(line)}\n" if line else ""


def _soaked_in(
    args: argparse.Namespace, project: str, stack: str, state: Optional[StackState]
) -> dict[str, dict[str, Any]]:
    """``--soaked-in``: the ``ami-soaked`` policy config its state gives (AMIs in ``state``, the stack's own, are
    never refused); {} without it."""
    if args.soaked_in is None:
        return {}
    from ..offline.soakstate import soak_config
    from ..pack.soak import POLICY

    evidence = read_stack_export(args.soaked_in)
    if (evidence.project, evidence.stack) == (project, stack):
        raise UsageError(
            f"--soaked-in {args.soaked_in}: is the state of stack {stack!r} itself: give the state of the "
            f"environment before it"
        )
    if evidence.project and evidence.project != project:
        sys.stderr.write(
            f"warning: --soaked-in {args.soaked_in}: is the state of project {evidence.project!r}, not "
            f"{project!r}: its lanes are compared by name\n"
        )
    if state is None:
        sys.stderr.write(
            f"warning: --soaked-in without --state: the AMIs stack {stack} already runs are not known, so "
            f"every AMI its lanes pin must have soaked in {evidence.stack} (pass --state FILE, the stack's "
            f"own export)\n"
        )
    return {POLICY: soak_config(evidence, state, args.soak_days)}
