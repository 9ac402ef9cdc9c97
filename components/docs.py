"""The stack-config reference, rendered from the models' own field descriptions.

``python -m mixed_os_racks.docs README.md docs/*.md`` rewrites every generated block of those files in
place (between ``<!-- BEGIN generated: <table> -->`` and ``<!-- END generated: <table> -->``);
``--check`` exits 1 when one is out of date (the tests run it). Each table's rows are the model's
fields, in declaration order, with the description written where the field is declared, and the
Python field each key sets (``keys``' tables).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import sys
import textwrap
from functools import cache
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence, cast

from pydantic import BaseModel

from .config import keys
from .config.params import RackParams

BLOCK_RE = re.compile(
    r"(<!-- BEGIN generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- END generated: (?P=name) -->)", re.S
)


@cache
def field_docs(model: type) -> dict[str, str]:
    """Each field's docstring (the string written on the line after its declaration), as
    ``inspect.cleandoc`` leaves it, read from the source of ``model`` and of the classes it inherits
    from (a subclass's own docstring wins). The models do not ask pydantic for this
    (``use_attribute_docstrings``): it reads every model's source at import, on every run."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not issubclass(cls, BaseModel) or cls is BaseModel or cls.__module__.startswith("pydantic"):
            continue
        body = cast(ast.ClassDef, ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]).body
        for declared, following in zip(body, body[1:]):
            if (
                isinstance(declared, ast.AnnAssign)
                and isinstance(declared.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                docs[declared.target.id] = inspect.cleandoc(following.value.value)
    return docs


def _rows(
    model: type[BaseModel],
    names: Iterable[str],
    table: Optional[keys.KeyTable] = None,
    extra: Optional[dict[str, str]] = None,
) -> list[tuple[str, str, str]]:
    """(key, Python field, description) per key; ``table`` says which field a key sets."""
    rows = []
    for key in names:
        field = table.field_of(key) if table else key
        if field in model.model_fields:
            rows.append((key, field, field_docs(model).get(field, "").strip()))
        elif extra and key in extra:
            rows.append((key, "", extra[key]))
        else:
            raise KeyError(f"{model.__name__} documents no field {key!r}")
    return rows


RACK_TABLES = (keys.CLUSTER, keys.RACK, keys.WORKLOAD_POOL, keys.BUILD_POOL, keys.DEVICE_PLUGIN, keys.GPU_OBSERVABILITY)
"""The tables that map ``rack:`` parameters onto the specs a ``RackSpec`` is made of."""


def _spec_fields(key: str) -> str:
    """The spec fields a ``rack:`` parameter sets, ``Spec.field`` (several for a key shared by lanes)."""
    found = [
        f"{table.spec.__name__}.{field}"
        for table in RACK_TABLES
        for field in ([f for f, k in table.keys.items() if k == key] or ([key] if table.key(key) == key else []))
        if field in table.spec.model_fields
    ]
    return ", ".join(dict.fromkeys(found))


def _table(rows: Sequence[tuple[str, str, str]], fields: bool = True, title: str = "key") -> str:
    lines = [f"| {title} | Python field | what it does, and its default |", "|---|---|---|"]
    lines += [
        f"| `{key}` | {', '.join(f'`{f}`' for f in field.split(', ')) if field else ''} | {_cell(text)} |"
        for key, field, text in rows
    ]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """One table cell: pipes escaped, lines joined, reST's double backticks as Markdown's single ones."""
    return " ".join(text.split()).replace("|", "\\|").replace("``", "`")


TABLES: dict[str, Callable[[], str]] = {
    "rack-params": lambda: _table(
        [(key, _spec_fields(key), text) for key, _, text in _rows(RackParams, RackParams.model_fields)],
        title="parameter",
    ),
    "pool-fields": lambda: _table(_rows(keys.POOL.spec, keys.POOL.item_keys, keys.POOL)),
    "node-group-fields": lambda: _table(
        _rows(
            keys.NODE_GROUP.spec,
            keys.NODE_GROUP.item_keys,
            keys.NODE_GROUP,
            {
                "id": "The group's id: its names and URNs are ``<rack>-ng-<id>`` (``<rack>-build-<id>``). Default: its "
                "position "
                "when no group has one (give every group an ``id`` if you will ever reorder the list)."
            },
        )
    ),
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
    parser.add_argument("files", type=Path, nargs="+", metavar="FILE")
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated block is out of date")
    args = parser.parse_args(argv)
    stale = 0
    for path in args.files:
        text = path.read_text(encoding="utf-8")
        fresh = render(text)
        if fresh == text:
            continue
        if args.check:
            sys.stderr.write(f"{path}: generated tables are out of date; run python -m mixed_os_racks.docs {path}\n")
            stale = 1
        else:
            path.write_text(fresh, encoding="utf-8")
    return stale


if __name__ == "__main__":
    sys.exit(main())
