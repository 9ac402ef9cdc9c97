"""``mixed-os-racks pack init DIR``: a CrossGuard pack of the rack's policies, written into a folder of another
repository (``pack/scaffold.py``), and what to run next there."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..spec.base import shown
from .common import EXIT_OK, UsageError, print_text

if TYPE_CHECKING:
    from .common import Commands


def add_parser(sub: Commands) -> None:
    pack = sub.add_parser("pack", help="policy pack folders").add_subparsers(dest="pack_command", required=True)
    init = pack.add_parser(
        "init",
        help="write a CrossGuard pack of the rack's policies into DIR, for "
        "`pulumi install` there, then `pulumi preview --policy-pack DIR`",
    )
    init.add_argument("dir", metavar="DIR")
    init.add_argument(
        "--force", action="store_true", help="write into DIR though it is not empty (replacing the pack's files there)"
    )
    init.add_argument(
        "--requirement",
        metavar="SPEC",
        help="the requirements.txt line that installs this package: "
        "mixed-os-racks with a version range, mixed-os-racks @ URL (a git URL pinned to a tag), or the "
        "path of its folder (default: the source pip installed it from, else mixed-os-racks==<version>)",
    )


def command(args: argparse.Namespace) -> int:
    """``mixed-os-racks pack init DIR``: the pack's files written, and the commands that install and run it."""
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
        lines.append(
            f"  a path on this machine, which CI and other machines cannot install: write the pack with "
            f"--requirement {shell_word(release)} (--force to rewrite it)"
        )
    elif args.requirement is None:
        lines.append(
            "  to install it another way, rerun with --force --requirement SPEC (a PEP 508 line, such as a git "
            "URL pinned to a tag), or edit requirements.txt"
        )
    word = shell_word(folder)
    lines.append(f"next: cd {word} && pulumi install   (creates the pack's virtualenv, {shown(str(folder / 'venv'))})")
    lines.append(f"then: pulumi preview --policy-pack {word} --policy-pack-config {shell_word(folder / 'config.json')}")
    print_text("\n".join(lines) + "\n")
    return EXIT_OK
