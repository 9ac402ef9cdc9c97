"""``mixed-os-racks schema``: the component package's schema, what the component provider in ``provider/`` serves
to ``pulumi package add`` (or, with ``--typescript``, the TypeScript SDK generated from it)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from .common import EXIT_OK, print_text

if TYPE_CHECKING:
    from .common import Commands


def add_parser(sub: Commands) -> None:
    schema = sub.add_parser(
        "schema",
        help="print the component package's schema (what the component provider serves: "
        "`pulumi package add provider` generates each language's SDK from it)",
    )
    schema.add_argument(
        "--typescript",
        action="store_true",
        help="print the TypeScript SDK generated from it instead, "
        "one module with the names and types `pulumi package add` writes for a Node.js program",
    )


def command(args: argparse.Namespace) -> int:
    """The schema the provider serves (``GetSchema``), as indented JSON, or the TypeScript SDK generated from it."""
    from ..provider import provider
    from ..typings import typescript as typings

    schema = json.loads(provider().schema or "{}")
    print_text(typings(schema) if args.typescript else json.dumps(schema, indent=2) + "\n")
    return EXIT_OK
