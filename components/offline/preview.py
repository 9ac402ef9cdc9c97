"""Render an offline run like ``pulumi preview`` does: a tree of what ``pulumi up`` would create.

Below a resource whose inputs are not all known yet, a line names them (``unknown until apply:
launchTemplate.id, launchTemplate.version``): values that come from another resource's outputs,
which a preview cannot know (``pulumi preview --diff`` shows them as ``output<string>``).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ..spec.base import shown as shown_text
from .laneguard import urn_name
from .records import ProgramRun, Resource, shown


def _children(resources: Iterable[Resource]) -> dict[str, list[Resource]]:
    by_parent: dict[str, list[Resource]] = {}
    for res in resources:
        by_parent.setdefault(res.parent, []).append(res)
    for kids in by_parent.values():
        kids.sort(key=lambda r: (r.type, r.name))
    return by_parent


UNKNOWN_SHOWN = 4
"""At most this many unknown inputs are named on a resource's line; the rest are counted."""


def tree_lines(run: ProgramRun) -> list[tuple[str, str, str]]:
    """(operation, type column, name column) rows, depth-first, children sorted by type then name.

    The operation is ``+`` (create), ``=`` (import an existing resource: ``import_``) or ``>`` (read an existing
    resource), as ``pulumi preview`` marks them;
    a row with an empty operation, under a resource, names that resource's unknown inputs.
    """
    return [row[:3] for row in tree_rows(run)]


def tree_rows(run: ProgramRun) -> list[tuple[str, str, str, str]]:
    """``tree_lines``' rows with the URN of each row's resource as a fourth column."""
    by_parent = _children(run.resources + run.reads)
    read_urns = {r.urn for r in run.reads}
    rows: list[tuple[str, str, str, str]] = []

    # depth-first with a stack of its own, not recursion: a parent chain can be deeper than Python's
    # recursion limit (a state file's, or a program's own components)
    pending = [(top, "", True, True) for top in reversed(by_parent.get("", []))]
    while pending:
        res, prefix, last, root = pending.pop()
        branch = "" if root else ("└─ " if last else "├─ ")
        op = ">" if res.urn in read_urns else ("=" if res.import_id else "+")
        rows.append((op, prefix + branch + res.type, res.name, res.urn))
        kids = by_parent.get(res.urn, [])
        inner = prefix + ("" if root else ("   " if last else "│  "))
        unknown = [] if res.urn in read_urns else res.unknown_inputs()
        if unknown:
            shown = ", ".join(unknown[:UNKNOWN_SHOWN]) + (
                f" and {len(unknown) - UNKNOWN_SHOWN} more" if len(unknown) > UNKNOWN_SHOWN else ""
            )
            rows.append(("", inner + ("│  " if kids else "   ") + "unknown until apply: " + shown, "", res.urn))
        pending += [(kid, inner, n == len(kids) - 1, False) for n, kid in reversed(list(enumerate(kids)))]
    return rows


def render(run: ProgramRun, violations: list[dict[str, Any]] | None = None, beside_outputs: Sequence[str] = ()) -> str:
    """The preview as ``pulumi preview`` prints it; ``beside_outputs``: lines printed after the outputs
    (the lanes' worst cases per hour)."""
    rows = tree_lines(run)
    width = max([len(t) for op, t, _ in rows if op] + [4]) + 2
    out = [f"Previewing update ({run.stack}), offline:", "", f"     {'Type':<{width}}Name"]
    out += [f" {op}   {t:<{width}}{n}" if op else f"     {t}" for op, t, n in rows]
    if violations:
        out += ["", "Policies:"]
        for v in violations:
            out.append(f"    [{v['level']}]  {v['pack']}: {v['policy']}  ({shown_text(urn_name(v['urn'])) or 'stack'})")
            out.append(f"        {v['message']}")
    if run.outputs:
        out += ["", "Outputs:"]
        key_width = max(len(k) for k in run.outputs)
        out += [
            f"    {k:<{key_width}}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(shown(run.outputs_wire).items())
        ]
    out += beside_outputs
    imports = len([r for r in run.resources if r.import_id])
    out += ["", "Resources:", f"    + {len(run.resources) - imports} to create"] + (
        [f"    = {imports} to import"] if imports else []
    )
    if run.reads:
        out.append(f"    > {len(run.reads)} to read")
    return "\n".join(out) + "\n"


def to_json(run: ProgramRun, violations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The run as JSON: each resource (with its ``dependencies`` URNs, as ``pulumi preview --json``
    has them), the stack's ``outputs`` (secrets as ``[secret]``), and the policy violations. The
    resources the program reads (``Resource.get``, the tree's ``>`` rows) come after those it creates,
    marked as ``pulumi preview --json`` marks their steps (``"op": "read"``) and the engine's state
    marks them (``"external": true``), with the ``id`` read."""
    reads = [{**r.to_json(), "op": "read", "external": True, "id": r.inputs.get("id")} for r in run.reads]
    return {
        "resources": [r.to_json() for r in run.resources] + reads,
        "outputs": shown(run.outputs_wire),
        "violations": list(violations or []),
    }
