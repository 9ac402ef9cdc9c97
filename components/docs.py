"""The stack-config reference, rendered from the models' own field descriptions.

``python -m mixed_os_racks.docs README.md`` rewrites every generated block of the README in place
(between ``<!-- BEGIN generated: <table> -->`` and ``<!-- END generated: <table> -->``);
``--check`` exits 1 when one is out of date (the tests run it). Each table's rows are the model's
fields, in declaration order, with the description written where the field is declared.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from pydantic import BaseModel

from .params import GROUP_FIELDS, GROUP_KEYS, POOL_KEYS, RackParams
from .specs import NodeGroupSpec, PoolSpec

BLOCK_RE = re.compile(r"(<!-- BEGIN generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- END generated: (?P=name) -->)", re.S)


def _rows(model: type[BaseModel], keys: Iterable[str], rename: Optional[dict[str, str]] = None,
          extra: Optional[dict[str, str]] = None) -> list[tuple[str, str]]:
    rename = rename or {}
    fields = {rename.get(name, name): field for name, field in model.model_fields.items()}
    rows = []
    for key in keys:
        if key in fields:
            rows.append((key, (fields[key].description or "").strip()))
        elif extra and key in extra:
            rows.append((key, extra[key]))
        else:
            raise KeyError(f"{model.__name__} documents no field {key!r}")
    return rows


def _table(rows: Sequence[tuple[str, str]]) -> str:
    lines = ["| parameter | what it does, and its default |", "|---|---|"]
    lines += [f"| `{key}` | {_cell(text)} |" for key, text in rows]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """One table cell: pipes escaped, lines joined, reST's double backticks as Markdown's single ones."""
    return " ".join(text.split()).replace("|", "\\|").replace("``", "`")


TABLES: dict[str, Callable[[], str]] = {
    "rack-params": lambda: _table(_rows(RackParams, RackParams.model_fields)),
    "pool-fields": lambda: _table(_rows(PoolSpec, POOL_KEYS)),
    "node-group-fields": lambda: _table(_rows(
        NodeGroupSpec, GROUP_KEYS, {v: k for k, v in GROUP_FIELDS.items()} | {"instance_type": "type"},
        {"id": "The group's id: its names and URNs are ``<rack>-ng-<id>`` (``<rack>-build-<id>``). Default: its position "
               "when no group has one (give every group an ``id`` if you will ever reorder the list)."},
    )),
}


def render(text: str) -> str:
    """``text`` with every generated block rewritten."""
    def fill(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in TABLES:
            raise KeyError(f"unknown generated block {name!r} (known: {', '.join(TABLES)})")
        return f"{match.group(1)}{TABLES[name]()}{match.group(4)}"

    return BLOCK_RE.sub(fill, text)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mixed_os_racks.docs", description=__doc__.splitlines()[0])
    parser.add_argument("readme", type=Path)
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated block is out of date")
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    fresh = render(text)
    if args.check:
        if fresh != text:
            sys.stderr.write(f"{args.readme}: generated tables are out of date; run python -m mixed_os_racks.docs {args.readme}\n")
            return 1
        return 0
    if fresh != text:
        args.readme.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
