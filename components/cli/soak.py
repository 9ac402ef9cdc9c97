"""``mixed-os-racks soak STATE.json``: the ``ami-soaked`` policy config from the state of the environment before (a
``pulumi stack export`` or a file backend's checkpoint): what each of its lanes has run, and since when
(``offline/soakstate.py``), printed or written into a pack config."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from .. import clock
from ..offline.policyconfig import with_entry
from ..offline.soakstate import proofs, soak_config
from ..offline.stackedit import write_text
from ..offline.stackexport import read_stack_export
from ..offline.stackfile import read_utf8
from ..pack import soak
from ..spec.base import shown
from .common import EXIT_OK, UsageError, check_output, file_kind, print_text
from .evidence import configured_soak, read_evidence, soak_days

if TYPE_CHECKING:
    from .common import Commands


def add_parser(sub: Commands) -> None:
    s = sub.add_parser("soak", help="write the ami-soaked policy config from the state of the environment before")
    s.add_argument(
        "evidence",
        type=Path,
        metavar="STATE.json",
        help="the environment before's state: `pulumi stack export` JSON, or a file backend's checkpoint",
    )
    s.add_argument(
        "--state", type=Path, metavar="FILE", help="the judged stack's own state: AMIs it runs are never refused"
    )
    s.add_argument(
        "--soak-days",
        type=soak_days,
        metavar="N",
        help="days an AMI must have run there (default: the config's soakDays, else 7)",
    )
    s.add_argument(
        "--policy-pack-config",
        type=Path,
        metavar="FILE",
        dest="config_file",
        help="write the ami-soaked entry into this pack config (its other entries are kept; created if "
        "absent); default: print the config",
    )


def command(args: argparse.Namespace) -> int:
    """``mixed-os-racks soak STATE.json``: the ``ami-soaked`` policy config from that state."""
    if args.config_file is not None:
        check_output(args.config_file, [args.evidence, *([args.state] if args.state else [])], "--policy-pack-config")
        if os.path.exists(args.config_file) and not stat.S_ISREG(mode := os.stat(args.config_file).st_mode):
            raise UsageError(
                f"--policy-pack-config {args.config_file}: is not a regular file ({file_kind(mode)}); soak "
                f"writes its entry into a file"
            )
    evidence = read_evidence(args.evidence)
    own = read_stack_export(args.state) if args.state is not None else None
    if own is not None and (own.project, own.stack) == (evidence.project, evidence.stack):
        raise UsageError(
            f"--state {args.state}: is the state of stack {evidence.stack!r}, the environment the evidence is "
            f"from: give the judged stack's own state"
        )
    level, props = configured_soak(args.config_file, written=True)
    config = {**props, **soak_config(evidence, own, args.soak_days)}
    if level:
        config = {"enforcementLevel": level, **config}
    now = clock.now()
    summary = [
        f"Evidence from stack {evidence.stack or '(empty)'} ({args.evidence}), as of "
        f"{now.strftime('%Y-%m-%dT%H:%M:%SZ')}; soakDays {config.get('soakDays', soak.DEFAULT_DAYS):g}:",
        *_evidence_lines(config, now, proofs(evidence)),
    ]
    if own is not None:
        summary.append(f"    never refused (stack {own.stack}'s own): {', '.join(config['running']) or 'none'}")
    if args.config_file is None:
        sys.stderr.write("\n".join(summary) + "\n")
        print_text(json.dumps({soak.POLICY: config}, indent=2) + "\n")
        return EXIT_OK
    text = ""
    if os.path.lexists(args.config_file):  # read_config_file has checked it (configured_soak): a regular file now
        text = read_utf8(args.config_file, "policy pack config")
    write_text(
        args.config_file, with_entry(text, soak.POLICY, config, str(args.config_file))
    )  # the rest kept as it was
    print_text("\n".join(summary) + f"\nwrote {args.config_file} ({soak.POLICY})\n")
    return EXIT_OK


def _evidence_lines(config: dict[str, Any], now: datetime, proven: Mapping[tuple[str, str], str]) -> list[str]:
    lines = []
    for lane, amis in config["ranSince"].items():
        for ami, since in amis.items():
            ran = soak.parse_time(since)
            days = soak.whole_days(ran, now) if ran is not None else None
            age = (
                "no time recorded: its soak cannot be proven"
                if ran is None
                else f"since {since}, which is in the future: it proves no soak"
                if days is None
                else f"since {since} ({days} days; {proven[lane, ami]})"
                if (lane, ami) in proven
                else f"since {since} ({days} days)"
            )
            lines.append(f"    lane '{shown(lane)}': {shown(ami)} {age}")
    for lane, amis in config.get("unreached", {}).items():
        for ami, group in amis.items():
            where = (
                f"its last update failed: {group['failure']}"
                if group.get("failure")
                else f"at launch template version {group['groupVersion'] or 'none'}, the image in version "
                f"{group['templateVersion'] or 'none'}"
            )
            lines.append(
                f"    lane '{shown(lane)}': {shown(ami)} pinned, but node group '{shown(group['group'])}' has not "
                f"reached it ({shown(where)}): not run there"
            )
    return lines or ["    (no lane pins an AMI by id)"]
