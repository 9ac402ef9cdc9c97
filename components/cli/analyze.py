"""``mixed-os-racks analyze --state FILE``: the policy packs over a stack's state, without running its program
(as ``pulumi policy analyze --file``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..offline.analyzer import PolicyPacks
from ..offline.laneguard import urn_name
from ..offline.records import ProgramRun
from ..offline.stackexport import read_stack_export
from ..spec.base import shown
from .common import EXIT_OK, EXIT_VIOLATION, UsageError, check_output, print_text, write_json
from .packs import pack_summary, packs_to_run

if TYPE_CHECKING:
    from .common import Commands


def add_parser(sub: Commands) -> None:
    a = sub.add_parser(
        "analyze",
        help="run the policy packs over a stack's state, without running the program "
        "(as `pulumi policy analyze --file`)",
    )
    a.add_argument(
        "--state",
        type=Path,
        required=True,
        metavar="FILE",
        help="the stack's state: `pulumi stack export` JSON, or a file backend's checkpoint",
    )
    a.add_argument("--cwd", type=Path, default=Path("."), help="where to look for policies/ (default: .)")
    a.add_argument("--json", type=Path, dest="json_out", help="also write the resources and violations as JSON")
    a.add_argument(
        "--policy-pack",
        type=Path,
        action="append",
        dest="policy_packs",
        metavar="DIR",
        help="run this CrossGuard policy pack (repeatable; default: as for preview)",
    )
    a.add_argument(
        "--policy-pack-config",
        type=Path,
        action="append",
        dest="policy_pack_configs",
        metavar="FILE",
        help="the pack's config, in the Pulumi CLI's format (repeatable: one per --policy-pack, in order)",
    )
    a.set_defaults(no_policy=False)


def command(args: argparse.Namespace) -> int:
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
        sys.stderr.write(
            f"warning: {args.state}: {state.encrypted} secret value(s) are ciphertext, which cannot be "
            f"read offline: the policies get them as {json.dumps('[secret]')}\n"
        )
    run = ProgramRun(state.project, state.stack, as_registrations(state), {})
    from ..offline.soakstate import running
    from ..pack.soak import POLICY

    # the AMIs the analyzed state runs are running by definition: the soak gate never refuses them
    own = {POLICY: {"running": running(state)}}
    with PolicyPacks(
        packs, args.policy_pack_configs or [], state.project or "project", state.stack or "stack", extended=own
    ) as policy:
        violations = policy.analyze(run)
        names = policy.names
        sys.stderr.writelines(f"warning: {line}\n" for line in policy.warnings)
    lines = [
        f"Analyzing the state of stack {state.stack or '(empty)'} ({args.state}), offline: {len(run.resources)} "
        f"resources, no program run"
    ]
    if violations:
        lines += ["", "Policies:"]
        for v in violations:
            lines.append(f"    [{v['level']}]  {v['pack']}: {v['policy']}  ({shown(urn_name(v['urn'])) or 'stack'})")
            lines += [f"        {shown(line)}" for line in v["message"].splitlines()]
    print_text("\n".join(lines) + "\n" + pack_summary(packs, names, source, violations))
    if args.json_out:
        write_json(args.json_out, {"resources": [r.to_json() for r in run.resources], "violations": violations})
    return EXIT_VIOLATION if any(v["level"] == "mandatory" for v in violations) else EXIT_OK
