"""Which policy packs a command runs (``--policy-pack``, else the project's ``policies/``, else the pack installed
with the package) and how its output says they ended."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional, Sequence


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

    return [
        BUNDLED_PACK
    ], f"no policies/ at or above {cwd.resolve()}: ran the pack bundled with mixed-os-racks {__version__}"


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
    counts = [
        f"{n} {level} violation{'s' if n > 1 else ''}"
        for n, level in ((mandatory, "mandatory"), (others, "advisory"))
        if n
    ]
    return f"failed: {' and '.join(counts)}" if mandatory else "passed" + (f", with {counts[0]}" if counts else "")
