"""``mixed-os-racks fleet``: every stack of the project previewed in one run, as one matrix (``fleet.py``), with
the order promotion needs and (with ``--states DIR``) the upgrade gate.

Each stack is previewed as ``preview`` does (``stackrun.run_stack``: the same engine, catalog and packs; with
``--states DIR``, planned against ``DIR/<stack>.json`` as ``preview --state`` is). One stack's error fails that
column, and the others still run.

Exit codes as ``preview``: 0 every stack passes, 1 a stack or the order fails (the matrix is still printed),
2 an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

from ..config.params import parse_rack_params
from ..config.stackconfig import parse_stack_config, rack_values
from ..errors import ConfigError
from ..fleet import (
    StackColumn,
    as_json,
    default_order,
    karpenter_release,
    lane_cells,
    new_amis,
    order_problems,
    render_markdown,
    render_text,
    upgrade_problems,
)
from ..offline.catalog import Catalog
from ..offline.stackfile import located, read_project, stack_name_problem
from ..pack import rules
from ..spec.base import shown
from .common import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION, UsageError, check_output, print_text, program_of, project_dir
from .packs import pack_verdict, packs_to_run
from .stackrun import read_stack, read_state, run_stack

if TYPE_CHECKING:
    from .common import Commands


RACK = "rack"
"""The name the project's program gives its ``Rack`` (``__main__.py``): node groups are named after it."""


def add_parser(sub: Commands) -> None:
    f = sub.add_parser(
        "fleet",
        help="preview every stack of the project in one run: one matrix, the order "
        "promotion needs, and with --states the upgrade gate",
    )
    f.add_argument(
        "--stacks", metavar="A,B,...", help="preview these stacks (default: every Pulumi.<stack>.yaml in --cwd)"
    )
    f.add_argument("--cwd", type=Path, default=Path("."), help="the project directory (default: .)")
    f.add_argument(
        "--amis",
        type=Path,
        metavar="FILE",
        help="AMI catalog file, added to the default catalog (the "
        "example stacks' images): an entry of FILE replaces the default's of the same id or key",
    )
    f.add_argument("--no-policy", action="store_true", help="run no policy pack")
    f.add_argument(
        "--order",
        metavar="A,B,...",
        help="the order environments promote in, earliest first (default: "
        "dev, test, staging, prod by their usual names)",
    )
    f.add_argument(
        "--states",
        type=Path,
        metavar="DIR",
        help="each stack's state, DIR/<stack>.json (`pulumi stack "
        "export`): plan against it, and refuse an upgrade EKS or Karpenter cannot take",
    )
    f.add_argument("--markdown", type=Path, metavar="FILE", help="also write the matrix as a Markdown table")
    f.add_argument("--json", type=Path, dest="json_out", metavar="FILE", help="also write the matrix as JSON")
    f.set_defaults(policy_packs=None, policy_pack_configs=None)


def command(args: argparse.Namespace) -> int:
    """``mixed-os-racks fleet``: the stacks previewed, the matrix printed (and written), the order and the gate
    judged."""
    cwd = project_dir(args.cwd)
    project_file = read_project(cwd)
    program = program_of(cwd, project_file.runtime)
    every = project_stacks(cwd)
    stacks = _names(args.stacks, "--stacks") if args.stacks is not None else every
    missing = [s for s in stacks if s not in every]
    if missing:
        raise UsageError(
            f"--stacks {args.stacks}: no Pulumi.{missing[0]}.yaml in {cwd} (its stacks: {', '.join(every) or 'none'})"
        )
    if not stacks:
        raise UsageError(f"--cwd {cwd}: no Pulumi.<stack>.yaml there, so there is no stack to preview")
    if args.order is not None:
        order = _names(args.order, "--order")
        unknown = [s for s in order if s not in stacks]
        if unknown:
            raise UsageError(
                f"--order {args.order}: {unknown[0]!r} is not a stack this run previews ({', '.join(stacks)})"
            )
    else:
        order = default_order(stacks)
    if args.states is not None and not args.states.is_dir():
        raise UsageError(f"--states {args.states}: not a directory (give the folder of <stack>.json exports)")
    packs, _ = packs_to_run(args, cwd)
    for pack in packs:
        if not (pack / "PulumiPolicy.yaml").is_file():
            raise UsageError(f"no policy pack at {pack} (no PulumiPolicy.yaml): pass --no-policy")
    inputs = [cwd / "Pulumi.yaml", *program, *(cwd / f"Pulumi.{s}.yaml" for s in stacks)]
    inputs += [args.amis] if args.amis else []
    for flag, path in (("--markdown", args.markdown), ("--json", args.json_out)):
        if path is not None:
            check_output(path, inputs, flag)
    catalog = Catalog.with_default(args.amis)
    columns: dict[str, StackColumn] = {}
    for n, stack in enumerate(stacks, 1):
        sys.stderr.write(f"fleet: previewing stack {stack} ({n}/{len(stacks)})\n")
        columns[stack] = _preview_stack(cwd, project_file, stack, catalog, packs, args.states)
    order_failures = order_problems(order, columns)
    marked = new_amis(order, columns)
    doc = as_json(stacks, order, columns, order_failures, marked)
    print_text(render_text(doc))
    if args.markdown is not None:
        _write(args.markdown, render_markdown(doc), "--markdown")
    if args.json_out is not None:
        _write(args.json_out, json.dumps(doc, indent=2) + "\n", "--json")
    errors = [f"stack {c.stack}: {e}" for c in columns.values() for e in c.errors]
    if errors:
        sys.stderr.writelines(f"error: {shown(line)}\n" for line in errors)
        return EXIT_ERROR
    failed = order_failures or any(c.problems or c.mandatory for c in columns.values())
    return EXIT_VIOLATION if failed else EXIT_OK


def _names(text: str, flag: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if any(not n for n in names):
        raise UsageError(f"{flag} {text}: an empty stack name")
    for name in names:
        problem = stack_name_problem(name)
        if problem:
            raise UsageError(f"{flag} {text}: {name!r}: {problem}")
    seen = [n for i, n in enumerate(names) if n in names[:i]]
    if seen:
        raise UsageError(f"{flag} {text}: {seen[0]!r} is named twice")
    return names


def project_stacks(cwd: Path) -> list[str]:
    """The stacks with a ``Pulumi.<stack>.yaml`` in the project directory, by name."""
    found = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in cwd.glob("Pulumi.*.yaml"))
    for name in found:
        problem = stack_name_problem(name)
        if problem:
            sys.stderr.write(f"warning: {shown(str(cwd / f'Pulumi.{name}.yaml'))}: left out: {problem}\n")
    return [name for name in found if not stack_name_problem(name)]


def _preview_stack(
    cwd: Path, project_file: Any, stack: str, catalog: Catalog, packs: Sequence[Path], states: Optional[Path]
) -> StackColumn:
    from ..offline.catalog import CatalogError
    from ..offline.engine import ProgramExit
    from ..offline.nodejs import NodeProgramError
    from ..offline.policyconfig import PolicyPackError
    from ..offline.stackexport import StateFileError
    from ..offline.stackfile import InputFileError

    column = StackColumn(stack)
    stack_file = cwd / f"Pulumi.{stack}.yaml"
    try:
        config, lines = read_stack(stack_file, project_file.name)
        state_file = states / f"{stack}.json" if states is not None else None
        if state_file is not None and not state_file.is_file():
            sys.stderr.write(
                f"warning: --states {states}: no {stack}.json there: stack {stack} is planned without a state\n"
            )
            state_file = None
        state = read_state(state_file, project_file.name, stack)
        ran = run_stack(cwd, project_file, stack, stack_file, (config, lines), catalog, packs, [])
        region = config.get("aws:region")
        try:
            parse_stack_config(config, project_file.name, RACK)
            params = parse_rack_params(rack_values(config), RACK, region if isinstance(region, str) else None)
        except ConfigError as exc:
            raise ConfigError(located(str(exc), str(stack_file), lines)) from None
        violations = ran.violations
        if state is not None:
            from ..offline.laneguard import guard_steps, judge
            from ..offline.plan import make_plan

            plan = make_plan(ran.run, state)
            steps = guard_steps(plan.steps)
            violations = violations + judge(steps, [])
            column.counts = dict(plan.summary())
            column.errors += plan.errors
        else:
            imports = len([r for r in ran.run.resources if r.import_id])
            column.counts = {"create": len(ran.run.resources) - imports, **({"import": imports} if imports else {})}
        column.verdict = pack_verdict(violations) if packs or state is not None else "not run (--no-policy)"
        column.mandatory = sum(v["level"] == "mandatory" for v in violations)
        created = (
            params.spec().cluster
        )  # None: the rack joins an existing cluster, whose version EKS (the catalog) says
        column.k8s = rules.k8s_minor(
            created.version if created is not None else catalog.cluster(params.cluster_name).version
        )
        column.karpenter = karpenter_release(ran.run.resources)
        worst = {lane.name: (lane.worst.usd, lane.worst.figure) for lane in ran.worst.lanes}
        column.lanes = {cell.key: cell for cell in lane_cells(params, catalog, worst)}
        column.problems += upgrade_problems(column, state)
    except (ConfigError, InputFileError) as exc:
        column.errors += str(exc).split("\n")
    except (UsageError, CatalogError, ProgramExit, StateFileError, NodeProgramError) as exc:
        column.errors.append(str(exc))
    except PolicyPackError:  # a pack that cannot start fails every stack alike: the command's error
        raise
    except Exception as exc:  # the program failed: named as `preview` names it, and the other stacks still run
        first = (str(exc).strip().splitlines() or [""])[0]
        column.errors.append(f"the program failed: {type(exc).__name__}" + (f": {first}" if first else ""))
    return column


def _write(path: Path, text: str, flag: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None
