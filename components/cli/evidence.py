"""What ``soak``, ``promote`` and ``preview --soaked-in`` read alike: ``--soak-days``, the state of the
environment before (the evidence), and the ``ami-soaked`` entry of a pack config, checked as the pack checks it."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any, Optional

from ..offline.policyconfig import PolicyPackError, properties_problems, read_config_file
from ..offline.stackexport import StackState, read_stack_export
from ..pack import soak
from .common import UsageError


def soak_days(text: str) -> float:
    """``--soak-days``: a number of days, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days (0 or more)")
    return value


def configured_soak(path: Optional[Path], written: bool = False) -> tuple[str, dict[str, Any]]:
    """(level, properties) of ``ami-soaked`` in a pack config file ('', {} when it has none), checked as the pack
    checks its config: its schema, then what the schema cannot state (``soak.config_problems``), so a bar the
    gate would refuse (``soakDays: -1``, ``true``) is never the bar. A file that does not exist is an error,
    unless the command is to write it (``written``)."""
    if path is None or written and not os.path.lexists(path):
        return "", {}
    if not os.path.lexists(path):
        raise UsageError(
            f"--policy-pack-config {path}: no such file (the pack config the gate reads; leave the flag "
            f"out for soakDays {soak.DEFAULT_DAYS:g})"
        )
    level, props = read_config_file(path).get(soak.POLICY, ("", None))
    props = dict(props or {})
    problems = properties_problems(soak.SCHEMA, props) + soak.config_problems(props)
    if problems:
        raise PolicyPackError(
            f"policy pack config {path}: invalid config for '{soak.POLICY}' (the pack refuses it):\n  "
            + "\n  ".join(problems)
        )
    return level, props


def read_evidence(path: Path) -> StackState:
    """The environment before's state (``soak STATE.json``, ``promote --from``), with a warning when it proves
    nothing."""
    state = read_stack_export(path)
    if not state.resources:
        sys.stderr.write(f"warning: {path}: the state has no resources, so it proves no lane ran anything\n")
    return state
