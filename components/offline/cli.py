"""``python -m components.offline preview``: the rack's preview on a machine with no cloud."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import yaml

from ..errors import ConfigError
from .analyzer import PolicyPackError, PolicyPacks
from .catalog import Catalog, CatalogError
from .engine import run_program
from .preview import render, to_json

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mixed_os_racks.offline")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("preview", help="preview a stack offline, like `pulumi preview`")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--stack", help="read Pulumi.STACK.yaml from the project directory")
    which.add_argument("--config", type=Path, help="any stack config file")
    p.add_argument("--cwd", type=Path, default=Path("."), help="the project directory (default: .)")
    p.add_argument("--amis", type=Path, help="AMI catalog file (default: the catalog for the example stacks)")
    p.add_argument("--json", type=Path, dest="json_out", help="also write resources and violations as JSON")
    p.add_argument(
        "--policy-pack", type=Path, action="append", dest="policy_packs", metavar="DIR",
        help="run this CrossGuard policy pack (repeatable; default: the nearest policies/ at or above --cwd)",
    )
    p.add_argument(
        "--policy-pack-config", type=Path, action="append", dest="policy_pack_configs", metavar="FILE",
        help="the pack's config, in the Pulumi CLI's format (repeatable: one per --policy-pack, in order)",
    )
    p.add_argument("--no-policy", action="store_true", help="run no policy pack")
    return parser


def read_stack_file(path: Path) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise UsageError(f"cannot read stack config {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"stack config {path} is not valid YAML: {exc}") from None
    config = doc.get("config", {}) if isinstance(doc, dict) else None
    if not isinstance(config, dict):
        raise UsageError(f"stack config {path}: expected a 'config:' mapping")
    return config


def project_name(cwd: Path) -> str:
    try:
        doc = yaml.safe_load((cwd / "Pulumi.yaml").read_text()) or {}
        return str(doc.get("name") or "project")
    except (OSError, yaml.YAMLError):
        return "project"


def default_pack(cwd: Path) -> Path:
    """The project's ``policies/``: the nearest one at or above the project directory."""
    for folder in [cwd.resolve(), *cwd.resolve().parents]:
        if (folder / "policies" / "PulumiPolicy.yaml").is_file():
            return folder / "policies"
    return cwd / "policies"


def preview(args: argparse.Namespace) -> int:
    cwd: Path = args.cwd
    stack_file = args.config or cwd / f"Pulumi.{args.stack}.yaml"
    stack = args.stack or stack_file.name.removeprefix("Pulumi.").removesuffix(".yaml")
    config = read_stack_file(stack_file)
    catalog = Catalog.load(args.amis)
    packs = [] if args.no_policy else (args.policy_packs or [default_pack(cwd)])
    if args.no_policy and (args.policy_packs or args.policy_pack_configs):
        raise UsageError("--no-policy runs no pack: drop --policy-pack and --policy-pack-config")
    for pack in packs:
        if not (pack / "PulumiPolicy.yaml").is_file():
            raise UsageError(f"no policy pack at {pack} (no PulumiPolicy.yaml): pass --policy-pack DIR, or --no-policy")
    project = project_name(cwd)
    with PolicyPacks(packs, args.policy_pack_configs or [], project, stack, config) as policy:  # start while the program runs
        run = run_program(cwd, config, catalog, project=project, stack=stack)
        violations = policy.analyze(run)
        sys.stderr.writelines(f"warning: {line}\n" for line in policy.warnings)
    sys.stdout.write(render(run, violations))
    if args.json_out:
        args.json_out.write_text(json.dumps(to_json(run, violations), indent=2) + "\n")
    return EXIT_VIOLATION if any(v["level"] == "mandatory" for v in violations) else EXIT_OK


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return preview(args)
    except ConfigError as exc:  # one line per broken key
        sys.stderr.writelines(f"error: {line}\n" for line in str(exc).splitlines())
    except (UsageError, CatalogError, PolicyPackError) as exc:
        sys.stderr.write(f"error: {exc}\n")
    except Exception as exc:  # a program error: report it like the CLI does, without a traceback
        sys.stderr.write(f"error: the program failed: {type(exc).__name__}: {exc}\n")
    return EXIT_ERROR
