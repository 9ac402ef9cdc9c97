"""The ``mixed-os-racks`` command (also ``python -m mixed_os_racks.offline``): ``preview``, the rack's
preview on a machine with no cloud (with ``--state``, the plan against the stack's exported state; with
``--soaked-in``, the soak gate against the environment before's); ``guard``, the same change-safety verdicts
over ``pulumi preview --json`` output; ``pack init DIR``, a policy pack folder for another repository;
``soak`` and ``promote`` (``promote.py``), a new AMI's way from one environment to the next; and ``schema``,
the component package's schema (what the component provider in ``provider/`` serves to ``pulumi package add``).

It puts the pieces together: the stack file (read as the Pulumi CLI reads it, with the rack's
config model saying which keys hold text), the offline engine (``offline/``), and the policy packs.

Exit codes: ``0`` fine (advisories allowed), ``1`` a mandatory policy is violated (``lane-removal``
among them), ``2`` an error (one
``error:`` line per problem, naming the file, key or argument; never a traceback), ``130``
interrupted (Ctrl-C; every policy pack process is killed first).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from .. import clock
from ..config.keys import NAMESPACE, item_keys
from ..config.params import RackParams
from ..errors import ConfigError, OfflineUnavailable
from ..offline import costs as lane_costs
from ..offline.analyzer import PolicyPackError, PolicyPacks
from ..offline.policyconfig import PolicyConfig, read_config_file
from ..offline.catalog import Catalog, CatalogError
from ..offline import require_sdk
from ..offline.engine import ProgramExit, run_program, stack_config_values
from ..offline.nodejs import NodeProgramError, run_node_program
from ..offline.laneguard import urn_name
from ..offline.packprocess import pack_env
from ..offline.preview import render, to_json
from ..offline.records import ProgramRun
from ..offline.stackexport import StackState, StateFileError, read_stack_export
from ..offline.sdk import oversized_config
from ..offline.stackfile import (InputFileError, ProjectFile, located, model_shape, read_project, read_stack_file,
                                stack_name_problem)
from ..pack import checks, cost, reservation, reserved
from ..pack.scaffold import ScaffoldError
from ..spec.base import shown

if TYPE_CHECKING:
    from ..offline.laneguard import Step

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mixed-os-racks")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("preview", help="preview a stack offline, like `pulumi preview`")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--stack", help="read Pulumi.STACK.yaml from the project directory")
    which.add_argument("--config", type=Path, help="any stack config file")
    p.add_argument("--cwd", type=Path, default=Path("."), help="the project directory (default: .)")
    p.add_argument("--amis", type=Path, metavar="FILE", help="AMI catalog file, added to the default catalog (the "
                   "example stacks' images): an entry of FILE replaces the default's of the same id or key")
    p.add_argument("--json", type=Path, dest="json_out", help="also write resources and violations as JSON")
    p.add_argument(
        "--policy-pack", type=Path, action="append", dest="policy_packs", metavar="DIR",
        help="run this CrossGuard policy pack (repeatable; default: the nearest policies/ at or above --cwd, else the pack installed with this package)",
    )
    p.add_argument(
        "--policy-pack-config", type=Path, action="append", dest="policy_pack_configs", metavar="FILE",
        help="the pack's config, in the Pulumi CLI's format (repeatable: one per --policy-pack, in order)",
    )
    p.add_argument("--no-policy", action="store_true", help="run no policy pack")
    p.add_argument("--state", type=Path, metavar="FILE",
                   help="compare with the stack's state (`pulumi stack export` JSON): print the plan, judge lane changes")
    _allow_argument(p)
    p.add_argument("--soaked-in", type=Path, metavar="FILE",
                   help="the state of the environment before (`pulumi stack export` JSON, or a checkpoint): ami-soaked "
                        "refuses an AMI a lane would newly run that has not run there on a lane of the same name")
    p.add_argument("--soak-days", type=_soak_days, metavar="N", help="with --soaked-in: the days it must have run there "
                   "(default: soakDays of ami-soaked in the pack config, else 7)")
    a = sub.add_parser("analyze", help="run the policy packs over a stack's state, without running the program "
                       "(as `pulumi policy analyze --file`)")
    a.add_argument("--state", type=Path, required=True, metavar="FILE",
                   help="the stack's state: `pulumi stack export` JSON, or a file backend's checkpoint")
    a.add_argument("--cwd", type=Path, default=Path("."), help="where to look for policies/ (default: .)")
    a.add_argument("--json", type=Path, dest="json_out", help="also write the resources and violations as JSON")
    a.add_argument("--policy-pack", type=Path, action="append", dest="policy_packs", metavar="DIR",
                   help="run this CrossGuard policy pack (repeatable; default: as for preview)")
    a.add_argument("--policy-pack-config", type=Path, action="append", dest="policy_pack_configs", metavar="FILE",
                   help="the pack's config, in the Pulumi CLI's format (repeatable: one per --policy-pack, in order)")
    a.set_defaults(no_policy=False)
    g = sub.add_parser("guard", help="judge `pulumi preview --json` output for lane removals and rollouts")
    g.add_argument("preview_json", type=Path, metavar="PREVIEW.json", help="what `pulumi preview --json` wrote")
    g.add_argument("--json", type=Path, dest="json_out", help="also write the verdicts as JSON")
    _allow_argument(g)
    pack = sub.add_parser("pack", help="policy pack folders").add_subparsers(dest="pack_command", required=True)
    init = pack.add_parser("init", help="write a CrossGuard pack of the rack's policies into DIR, for "
                           "`pulumi install` there, then `pulumi preview --policy-pack DIR`")
    init.add_argument("dir", metavar="DIR")
    init.add_argument("--force", action="store_true", help="write into DIR though it is not empty (replacing the "
                      "pack's files there)")
    init.add_argument("--requirement", metavar="SPEC", help="the requirements.txt line that installs this package: "
                      "mixed-os-racks with a version range, mixed-os-racks @ URL (a git URL pinned to a tag), or the "
                      "path of its folder (default: the source pip installed it from, else mixed-os-racks==<version>)")
    schema = sub.add_parser("schema", help="print the component package's schema (what the component provider serves: "
                            "`pulumi package add provider` generates each language's SDK from it)")
    schema.add_argument("--typescript", action="store_true", help="print the TypeScript SDK generated from it instead, "
                        "one module with the names and types `pulumi package add` writes for a Node.js program")
    from ..fleet import add_parser
    from ..promote import add_parsers

    add_parsers(sub)
    add_parser(sub)
    return parser


def print_schema(typescript: bool = False) -> int:
    """The schema the provider serves (``GetSchema``), as indented JSON, or the TypeScript SDK generated from it."""
    from ..provider import provider
    from ..typings import typescript as typings

    schema = json.loads(provider().schema or "{}")
    _print(typings(schema) if typescript else json.dumps(schema, indent=2) + "\n")
    return EXIT_OK


def _soak_days(text: str) -> float:
    from ..promote import soak_days

    return soak_days(text)


def _allow_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-lane-removal", action="append", dest="allow_lanes", metavar="NAME[,NAME]", default=[],
        help="lanes (pool or node group names) this change may delete or replace (repeatable)",
    )


def allowed_lanes(args: argparse.Namespace) -> list[str]:
    names = [n.strip() for given in args.allow_lanes for n in given.split(",")]
    if any(not n for n in names):
        raise UsageError(f"--allow-lane-removal {','.join(args.allow_lanes)}: an empty lane name")
    return names


def _unused_allowances(names: list[str], steps: list[Step]) -> None:
    from ..offline.laneguard import unmatched_allowances

    for name in unmatched_allowances(steps, names):
        sys.stderr.write(f"warning: --allow-lane-removal {shown(name)}: this change removes no lane of that name\n")


BUNDLED_PACK = Path(__file__).resolve().parent.parent / "pack" / "bundled"
"""The pack installed with the package: the rack's policies, run with this interpreter (its
``PulumiPolicy.yaml`` names no virtualenv)."""


def default_pack(cwd: Path) -> Optional[Path]:
    """The project's ``policies/``: the nearest one at or above the project directory, if any."""
    for folder in [cwd.resolve(), *cwd.resolve().parents]:
        if (folder / "policies" / "PulumiPolicy.yaml").is_file():
            return folder / "policies"
    return None


def packs_to_run(args: argparse.Namespace, cwd: Path) -> tuple[list[Path], str]:
    """The packs this preview runs, and where they came from: ``--policy-pack``, else the project's
    ``policies/``, else the bundled pack."""
    if args.no_policy:
        return [], "none (--no-policy)"
    if args.policy_packs:
        return list(args.policy_packs), "--policy-pack"
    found = default_pack(cwd)
    if found is not None:
        return [found], "the project's policies/"
    from .. import __version__

    return [BUNDLED_PACK], f"no policies/ at or above {cwd.resolve()}: ran the pack bundled with mixed-os-racks {__version__}"


def pack_summary(packs: Sequence[Path], names: Sequence[str], source: str, violations: Sequence[dict[str, Any]]) -> str:
    """Which packs ran, from where, and how each ended: the last lines of the output."""
    lines = ["", f"Policy packs ({source}):"]
    for path, name in zip(packs, names):
        lines.append(f"    {name} ({path}): {pack_verdict([v for v in violations if v['pack'] == name])}")
    return "\n".join(lines) + "\n"


def pack_verdict(violations: Sequence[dict[str, Any]]) -> str:
    """``passed``, ``passed, with 2 advisory violations`` or ``failed: 1 mandatory violation``."""
    mandatory = sum(v["level"] == "mandatory" for v in violations)
    others = len(violations) - mandatory
    counts = [f"{n} {level} violation{'s' if n > 1 else ''}" for n, level in ((mandatory, "mandatory"), (others, "advisory")) if n]
    return f"failed: {' and '.join(counts)}" if mandatory else "passed" + (f", with {counts[0]}" if counts else "")


# ---- arguments, checked before anything runs ----------------------------------------------------------


RUNTIMES = ("python", "nodejs")
"""The language hosts whose programs the offline preview runs (``Pulumi.yaml``'s ``runtime:``)."""


def project_dir(cwd: Path) -> Path:
    """``--cwd``: a directory with a ``Pulumi.yaml`` (its program is checked by ``program_of``)."""
    if not cwd.exists():
        raise UsageError(f"--cwd {cwd}: no such directory")
    if not cwd.is_dir():
        raise UsageError(f"--cwd {cwd}: not a directory (give the project directory, the one with Pulumi.yaml)")
    if not (cwd / "Pulumi.yaml").is_file():
        raise UsageError(f"--cwd {cwd}: no Pulumi.yaml there, so it is not a Pulumi project directory")
    return cwd


def program_of(cwd: Path, runtime: str) -> list[Path]:
    """The program's files the preview must never overwrite, once its runtime is one the preview runs."""
    if runtime not in RUNTIMES:
        raise UsageError(f"{cwd / 'Pulumi.yaml'}: runtime: {shown(runtime)}: the offline preview runs {' and '.join(RUNTIMES)} "
                         f"programs")
    if runtime == "nodejs":
        return [cwd / "package.json"]
    if not (cwd / "__main__.py").is_file():
        raise UsageError(f"--cwd {cwd}: no __main__.py there (the Python program to preview)")
    return [cwd / "__main__.py"]


def stack_of(args: argparse.Namespace, cwd: Path) -> tuple[str, Path]:
    """The stack's name, checked as the Pulumi CLI checks it, and its config file."""
    if args.stack is not None:
        problem = stack_name_problem(args.stack)
        if problem:
            raise UsageError(f"--stack {args.stack}: {problem}")
        return args.stack, cwd / f"Pulumi.{args.stack}.yaml"
    path: Path = args.config
    stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    problem = stack_name_problem(stack)
    if problem:
        raise UsageError(f"--config {path}: names the stack {stack!r}, and {problem}")
    return stack, path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return a.resolve() == b.resolve()


SOURCE_SUFFIXES = (".py", ".pyi", ".yaml", ".yml", ".toml", ".cfg", ".txt", ".ts", ".mts", ".cts", ".js", ".mjs", ".cjs")
"""Existing files ``--json`` never overwrites: a program's modules, stack and project files, requirements."""


def check_output(path: Path, inputs: Iterable[Path], flag: str = "--json") -> None:
    """``--json`` (or ``flag``): somewhere a file can be written that is not one of the command's inputs."""
    where = f"{flag} {path}"
    for given in inputs:
        if _same_file(path, given):
            raise UsageError(f"{where}: is {given}, an input of this preview; write the JSON to another file")
    if path.is_dir():
        raise UsageError(f"{where}: is a directory; give a file name")
    if path.suffix.lower() in SOURCE_SUFFIXES and path.exists():  # a program's module: the next run would fail on JSON
        raise UsageError(f"{where}: is an existing {path.suffix} file (source, project or stack files), which JSON "
                         f"would overwrite; write the JSON to a .json file")
    if path.is_fifo():  # opening a FIFO to write waits for a reader: one no one reads would hang the command
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            raise UsageError(f"{where}: is a named pipe no one is reading; give a file, or read the pipe first") from None
    parent = path.absolute().parent
    if not parent.is_dir():
        raise UsageError(f"{where}: cannot be written: {parent} is not a directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{where}: cannot be written: permission denied")
    if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{where}: cannot be written: no permission to create files in {parent}")


def write_json(path: Path, doc: Any) -> None:
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(json.dumps(doc, indent=2) + "\n")
    except OSError as exc:
        raise UsageError(f"--json {path}: cannot write: {exc.strerror or exc}") from None


def _print(text: str) -> None:
    """``text`` on standard output; a closed one (``>&-``) or one that cannot take it (a full disk, ``>/dev/full``)
    is an error naming it, and a reader that went away (``| head``) is none."""
    if sys.stdout is None:  # Python starts with no sys.stdout when descriptor 1 is closed
        raise UsageError("standard output is closed, so there is nowhere to print (redirect it to a file, or to "
                         "/dev/null)")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to say, and nothing to complain of at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError as exc:
        _drop_stdout()
        raise UsageError(f"cannot write to standard output: {exc.strerror or exc}") from None
    except ValueError:  # a stdout closed by the process itself
        raise UsageError("standard output is closed, so there is nowhere to print") from None


def _drop_stdout() -> None:
    """What standard output holds unwritten is dropped, so the process's end does not try to write it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.stdout.flush()
    except (OSError, ValueError):
        pass


# ---- the preview -----------------------------------------------------------------------------------------


def preview(args: argparse.Namespace) -> int:
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
        raise UsageError("--allow-lane-removal needs --state FILE: without the stack's state there is nothing to remove")
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
    ran = run_stack(cwd, project_file, stack, stack_file, config_lines, catalog, packs, args.policy_pack_configs or [], overrides)
    run, violations, names, worst = ran.run, ran.violations, ran.names, ran.worst
    gate = _soak_gate(run, args.policy_pack_configs or [], overrides, violations) if packs else ""
    if state is None:
        _print(render(run, violations, lane_costs.lines(worst)) + (pack_summary(packs, names, source, violations) if packs else "")
               + gate)
        if args.json_out:
            write_json(args.json_out, {**to_json(run, violations), "costs": lane_costs.as_json(worst)})
    else:  # the plan's modules load only when asked for: the plain preview stays as fast as it was
        from ..offline.laneguard import Step, judge
        from ..offline.plan import make_plan, plan_json, render_plan

        plan = make_plan(run, state)
        steps = [Step(s.op, s.urn, s.type, s.old_state(), s.new_state(), s.diff) for s in plan.steps]
        violations = violations + judge(steps, allow)
        _unused_allowances(allow, steps)
        if state.encrypted:
            sys.stderr.write(f"warning: {args.state}: {state.encrypted} secret value(s) are ciphertext, which the offline "
                             "preview cannot read: they are compared as unknown, never as changed\n")
        _print(render_plan(plan, violations, lane_costs.lines(worst)) + (pack_summary(packs, names, source, violations) if packs else "")
               + gate)
        if args.json_out:
            doc = {**to_json(run, violations), "costs": lane_costs.as_json(worst)}
            doc["resources"] = plan_json(plan)
            doc["summary"] = plan.summary()
            doc["errors"] = list(plan.errors)
            write_json(args.json_out, doc)
        if plan.errors:  # what makes the real preview fail: the plan is shown, and the command fails as it would
            _error_lines(plan.errors)
            return EXIT_ERROR
    return EXIT_VIOLATION if any(v["level"] == "mandatory" for v in violations) else EXIT_OK



@dataclass
class StackRun:
    """One stack's offline preview: the program's run, the packs' verdicts over it and its lanes' worst cases."""

    run: ProgramRun
    violations: list[dict[str, Any]]
    names: list[str]
    """The packs' names, in the order they ran."""
    worst: cost.Costs


def read_stack(stack_file: Path, project: str) -> tuple[dict[str, Any], dict[str, int]]:
    """A stack file's config, read as the Pulumi CLI reads it (its warnings on stderr), and the line of each key;
    too large a config is refused."""
    notes: list[str] = []
    lines: dict[str, int] = {}
    config = read_stack_file(stack_file, project, {NAMESPACE: model_shape(RackParams, item_keys())}, notes, lines)
    sys.stderr.writelines(f"warning: {note}\n" for note in notes)
    too_large = oversized_config(stack_config_values(config))
    if too_large:
        raise UsageError(f"{stack_file}: {too_large}")
    return config, lines


def read_state(path: Optional[Path], project: str, stack: str) -> Optional[StackState]:
    """``--state``: the stack's export (None without one), with a warning for operations still pending."""
    if path is None:
        return None
    state = read_stack_export(path, project, stack)
    if state.pending:
        sys.stderr.write(f"warning: {path}: {state.pending} operation(s) of an earlier update are still pending "
                         "(`pulumi refresh` or `pulumi cancel` first); the plan ignores them\n")
    return state


def catalog_config(catalog: Catalog) -> Optional[PolicyConfig]:
    """What the offline account tells the packs, under the config's own: its prices (``lane-cost-ceiling``), its
    capacity reservations and subnets' zones (both reservation policies: an id it does not list is not the
    account's, as EC2 would say), and its AMIs' facts for every policy that judges AMIs, whatever pins them (the
    components, a plain launch template, node group or EC2NodeClass), with the account's EBS encryption default
    when the catalog states it."""
    given: PolicyConfig = {cost.CEILING: ("", {"prices": catalog.prices})} if catalog.prices else {}
    amis = catalog.policy_facts()
    given.update({policy: ("", {"amis": amis}) for policy in checks.AMI_FACTS_POLICIES})
    if "ebs_encryption_by_default" in catalog.given:
        given[checks.ENCRYPTION] = ("", {"amis": amis, "ebsEncryptionByDefault": catalog.ebs_encryption_by_default})
    account = {"reservations": {i: reservation.as_config(r) for i, r in catalog.reservations.items()},
               "subnets": dict(catalog.subnets)}
    given.update({policy: ("", account) for policy in (reserved.FITS, reserved.ENDING)})
    return given


def run_stack(cwd: Path, project_file: ProjectFile, stack: str, stack_file: Path,
              config_lines: tuple[dict[str, Any], dict[str, int]], catalog: Catalog, packs: Sequence[Path],
              pack_configs: Sequence[Path], overrides: Optional[dict[str, dict[str, Any]]] = None) -> StackRun:
    """Run the project's program for ``stack`` (its config and the line of each key, from ``read_stack``) under
    the offline engine, with the packs started while it runs."""
    project = project_file.name
    overrides = overrides or {}
    config, lines = config_lines
    with PolicyPacks(packs, pack_configs, project, stack, config, catalog_config(catalog), overrides) as policy:  # start while the program runs
        try:
            if project_file.runtime == "nodejs":
                run = run_node_program(cwd, project_file, config, catalog, stack=stack, on_resource=policy.add)
            else:
                run = run_program(cwd, config, catalog, project=project, stack=stack, on_resource=policy.add)
        except ConfigError as exc:  # a key's problem, found by the program: named with its file and line
            raise ConfigError(located(str(exc), str(stack_file), lines)) from None
        violations = policy.analyze(run)
        names = list(policy.names)
        sys.stderr.writelines(f"warning: {line}\n" for line in policy.warnings)
        missing = set(overrides) - policy.overridden
        if missing:
            raise UsageError(f"--soaked-in: no policy pack that ran has the policy {', '.join(sorted(missing))} (the rack's "
                             f"pack of this version serves it: pass --policy-pack DIR of a pack that does)")
    worst = lane_costs.of_run(run, pack_env(project, stack, config), catalog.prices, _budget_figure(pack_configs))
    return StackRun(run, violations, names, worst)


def _soak_gate(run: ProgramRun, pack_configs: Sequence[Path], overrides: dict[str, dict[str, Any]],
               violations: Sequence[dict[str, Any]]) -> str:
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


def _budget_figure(paths: Sequence[Path]) -> str:
    """Which worst case the budgets hold, as the pack configs say it (``lane-cost-ceiling``'s ``figure``, the last
    file's winning), for the printout; the pack reads the same."""
    figure = cost.STEADY
    for path in paths:
        props = read_config_file(path).get(cost.CEILING, ("", None))[1] or {}
        figure = str(props.get("figure", figure))
    return figure


def _soaked_in(args: argparse.Namespace, project: str, stack: str, state: Optional[StackState]) -> dict[str, dict[str, Any]]:
    """``--soaked-in``: the ``ami-soaked`` policy config its state gives (AMIs in ``state``, the stack's own, are
    never refused); {} without it."""
    if args.soaked_in is None:
        return {}
    from ..offline.soakstate import soak_config
    from ..pack.soak import POLICY

    evidence = read_stack_export(args.soaked_in)
    if (evidence.project, evidence.stack) == (project, stack):
        raise UsageError(f"--soaked-in {args.soaked_in}: is the state of stack {stack!r} itself: give the state of the "
                         f"environment before it")
    if evidence.project and evidence.project != project:
        sys.stderr.write(f"warning: --soaked-in {args.soaked_in}: is the state of project {evidence.project!r}, not "
                         f"{project!r}: its lanes are compared by name\n")
    if state is None:
        sys.stderr.write(f"warning: --soaked-in without --state: the AMIs stack {stack} already runs are not known, so "
                         f"every AMI its lanes pin must have soaked in {evidence.stack} (pass --state FILE, the stack's "
                         f"own export)\n")
    return {POLICY: soak_config(evidence, state, args.soak_days)}


def analyze(args: argparse.Namespace) -> int:
    """``mixed-os-racks analyze --state FILE``: the packs over a stack's state, without running its program."""
    from ..offline.stackexport import as_registrations

    if not args.cwd.is_dir():
        raise UsageError(f"--cwd {args.cwd}: not a directory")
    packs, source = packs_to_run(args, args.cwd)
    for pack in packs:
        if not (pack / "PulumiPolicy.yaml").is_file():
            raise UsageError(f"no policy pack at {pack} (no PulumiPolicy.yaml): pass --policy-pack DIR")
    if args.json_out:
        check_output(args.json_out, [args.state, *(args.policy_pack_configs or [])])
    state = read_stack_export(args.state)
    if state.encrypted:
        sys.stderr.write(f"warning: {args.state}: {state.encrypted} secret value(s) are ciphertext, which cannot be "
                         f"read offline: the policies get them as {json.dumps('[secret]')}\n")
    run = ProgramRun(state.project, state.stack, as_registrations(state), {})
    from ..offline.soakstate import running
    from ..pack.soak import POLICY

    # the AMIs the analyzed state runs are running by definition: the soak gate never refuses them
    own = {POLICY: {"running": running(state)}}
    with PolicyPacks(packs, args.policy_pack_configs or [], state.project or "project", state.stack or "stack",
                     extended=own) as policy:
        violations = policy.analyze(run)
        names = policy.names
        sys.stderr.writelines(f"warning: {line}\n" for line in policy.warnings)
    lines = [f"Analyzing the state of stack {state.stack or '(empty)'} ({args.state}), offline: {len(run.resources)} "
             f"resources, no program run"]
    if violations:
        lines += ["", "Policies:"]
        for v in violations:
            lines.append(f"    [{v['level']}]  {v['pack']}: {v['policy']}  ({shown(urn_name(v['urn'])) or 'stack'})")
            lines += [f"        {shown(line)}" for line in v["message"].splitlines()]
    _print("\n".join(lines) + "\n" + pack_summary(packs, names, source, violations))
    if args.json_out:
        write_json(args.json_out, {"resources": [r.to_json() for r in run.resources], "violations": violations})
    return EXIT_VIOLATION if any(v["level"] == "mandatory" for v in violations) else EXIT_OK


def guard(args: argparse.Namespace) -> int:
    """``mixed-os-racks guard PREVIEW.json``: the lane verdicts over the real CLI's preview."""
    from ..offline.laneguard import judge, urn_name
    from ..offline.previewjson import read_preview_json

    allow = allowed_lanes(args)
    if args.json_out:
        check_output(args.json_out, [args.preview_json])
    steps, summary = read_preview_json(args.preview_json)
    verdicts = judge(steps, allow)
    _unused_allowances(allow, steps)
    lines = [f"Change safety of {args.preview_json} ({len(steps)} steps):"]
    if verdicts:
        lines += ["", "Policies:"]
        for v in verdicts:
            # names come from the preview file: shown escaped, so none can fake a line or hide a character
            lines.append(f"    [{v['level']}]  {v['pack']}: {v['policy']}  ({shown(urn_name(v['urn']))})")
            lines += [f"        {shown(line)}" for line in v["message"].splitlines()]
    else:
        lines += ["", "No lane is removed or rolled."]
    if summary:
        lines += ["", "Resources (the preview's changeSummary):"] + [f"    {op}: {n}" for op, n in sorted(summary.items())]
    _print("\n".join(lines) + "\n")
    if args.json_out:
        write_json(args.json_out, {"violations": verdicts, "changeSummary": summary})
    return EXIT_VIOLATION if any(v["level"] == "mandatory" for v in verdicts) else EXIT_OK


def _error_lines(lines: Iterable[str]) -> None:
    """One ``error:`` line per problem, with characters a reader cannot see or tell apart escaped."""
    sys.stderr.writelines(f"error: {shown(line)}\n" for line in lines)


def entry() -> None:
    """The command, run by the process's entry (``mixed_os_racks.__main__``, which has tuned the cycle
    collector for a short-lived run). When the command is done, what is left is only memory: every
    file it wrote is closed and every pack it started is stopped. So the process ends at once, with its
    output flushed, and without the interpreter's teardown: its last collection would walk every object
    of the run (for 1,000 pools that was 2 s after the output was written), and unloading the 1,500
    modules of the Pulumi SDKs took about 30 ms of every preview. The process's end frees it all.
    """
    if sys.stderr is None:  # descriptor 2 closed: errors go nowhere, and the exit code still says how it ended
        sys.stderr = open(os.devnull, "w")
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (BrokenPipeError, ValueError):  # the reader went away, or the stream is closed: nothing to say
            pass
        except OSError:  # what was left could not be written (a full disk): the run did not say all it had to
            code = code or EXIT_ERROR
    os._exit(code)


def pack_init(args: argparse.Namespace) -> int:
    from .. import __version__
    from ..pack.scaffold import released_requirement, shell_word, write_pack

    if not args.dir.strip():
        raise UsageError("pack init: the pack's directory is empty (name one, such as policy-pack)")
    folder = Path(args.dir)
    written, requirement = write_pack(folder, __version__, force=args.force, package=args.requirement)
    lines = [f"wrote {shown(str(path))}" for path in written]
    lines.append(f"requirements.txt installs {shown(requirement.line)}: {shown(requirement.source)}")
    if not requirement.portable:
        release = released_requirement(__version__) or "mixed-os-racks @ git+<the repository's URL>@<tag>"
        lines.append(f"  a path on this machine, which CI and other machines cannot install: write the pack with "
                     f"--requirement {shell_word(release)} (--force to rewrite it)")
    elif args.requirement is None:
        lines.append("  to install it another way, rerun with --force --requirement SPEC (a PEP 508 line, such as a git "
                     "URL pinned to a tag), or edit requirements.txt")
    word = shell_word(folder)
    lines.append(f"next: cd {word} && pulumi install   (creates the pack's virtualenv, {shown(str(folder / 'venv'))})")
    lines.append(f"then: pulumi preview --policy-pack {word} --policy-pack-config {shell_word(folder / 'config.json')}")
    _print("\n".join(lines) + "\n")
    return EXIT_OK


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        clock.now()  # a MIXED_OS_RACKS_NOW the dates cannot be judged against is named before anything runs
        if args.command == "pack":
            return pack_init(args)
        if args.command == "schema":
            return print_schema(args.typescript)
        if args.command == "analyze":
            return analyze(args)
        if args.command == "fleet":
            from ..fleet import fleet_command

            return fleet_command(args)
        if args.command in ("soak", "promote"):
            from ..promote import promote_command, soak_command

            return soak_command(args) if args.command == "soak" else promote_command(args)
        return guard(args) if args.command == "guard" else preview(args)
    except KeyboardInterrupt:  # the packs are already killed: PolicyPacks closes on the way out
        sys.stderr.write("error: interrupted\n")
        return EXIT_INTERRUPTED
    except (ConfigError, InputFileError) as exc:  # one line per broken key
        _error_lines(str(exc).split("\n"))
    except (UsageError, CatalogError, PolicyPackError, ProgramExit, ScaffoldError, StateFileError, OfflineUnavailable,
            clock.ClockError, NodeProgramError) as exc:
        sys.stderr.write("error: " + "\n".join(shown(line) for line in str(exc).split("\n")) + "\n")
    except Exception as exc:  # a program error: report it like the CLI does, without a traceback
        first, *rest = str(exc).strip().splitlines() or [""]
        sys.stderr.write(f"error: the program failed: {type(exc).__name__}" + (f": {first}" if first else "") + "\n")
        sys.stderr.writelines(f"  {line}\n" for line in rest)
    return EXIT_ERROR
