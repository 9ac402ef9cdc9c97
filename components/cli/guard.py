"""``mixed-os-racks guard PREVIEW.json``: the change-safety verdicts (``lane-removal``, ``lane-rollout``) over what
the real CLI's ``pulumi preview --json`` wrote."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..spec.base import shown
from .common import (
    EXIT_OK,
    EXIT_VIOLATION,
    allow_argument,
    allowed_lanes,
    check_output,
    print_text,
    unused_allowances,
    write_json,
)

if TYPE_CHECKING:
    from .common import Commands


def add_parser(sub: Commands) -> None:
    g = sub.add_parser("guard", help="judge `pulumi preview --json` output for lane removals and rollouts")
    g.add_argument("preview_json", type=Path, metavar="PREVIEW.json", help="what `pulumi preview --json` wrote")
    g.add_argument("--json", type=Path, dest="json_out", help="also write the verdicts as JSON")
    allow_argument(g)


def command(args: argparse.Namespace) -> int:
    """``mixed-os-racks guard PREVIEW.json``: the lane verdicts over the real CLI's preview."""
    from ..offline.laneguard import judge, urn_name
    from ..offline.previewjson import read_preview_json

    allow = allowed_lanes(args)
    if args.json_out:
        check_output(args.json_out, [args.preview_json])
    steps, summary = read_preview_json(args.preview_json)
    verdicts = judge(steps, allow)
    unused_allowances(allow, steps)
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
        lines += ["", "Resources (the preview's changeSummary):"] + [
            f"    {op}: {n}" for op, n in sorted(summary.items())
        ]
    print_text("\n".join(lines) + "\n")
    if args.json_out:
        write_json(args.json_out, {"violations": verdicts, "changeSummary": summary})
    return EXIT_VIOLATION if any(v["level"] == "mandatory" for v in verdicts) else EXIT_OK
