"""Read what ``pulumi preview --json`` writes, into the steps ``laneguard`` judges.

The shape, from pulumi's engine display (``pkg/display/json.go``, ``pkg/backend/display/json.go``):
``{"config"?, "steps": [...], "diagnostics"?, "duration"?, "changeSummary": {op: count}}``; each step
has ``op``, ``urn``, ``provider``?, ``oldState``/``newState`` (resource states as a stack export has
them, secrets shown as ``"[secret]"``), ``diffReasons`` (changed top-level keys), ``replaceReasons``
(the keys forcing replacement) and ``detailedDiff`` (``null``, or property path -> ``{kind, inputDiff}``).

``same`` steps appear only with ``--show-sames`` (the root stack's always); a replacement is one
logical ``replace`` step, plus ``create-replacement`` and ``delete-replaced`` with
``--show-replacement-steps``: those are folded into the logical step here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..spec.base import shown
from .laneguard import Step
from .stackexport import StateFileError, check_state_fields, cycle_words, listed, load_json, mapped, parent_cycle, urn_parts

STEP_OPS = frozenset({
    "same", "create", "update", "delete", "replace", "create-replacement", "delete-replaced", "read",
    "read-replacement", "refresh", "discard", "discard-replaced", "remove-pending-replace", "import",
    "import-replacement",
})
"""The step ops of pulumi's ``pkg/resource/deploy/step.go`` that a preview can show."""
REPLACEMENT_PARTS = {"create-replacement": "replace", "delete-replaced": "replace", "read-replacement": "read",
                     "import-replacement": "import", "discard-replaced": "discard"}
PREVIEW = "`pulumi preview --json` output"


def _diff(step: dict[str, Any], where: str) -> list[str]:
    detailed = step.get("detailedDiff")
    if detailed is not None and not isinstance(detailed, dict):
        raise StateFileError(f"{where}.detailedDiff: must be null or an object of property paths")
    if detailed:
        return sorted(detailed)
    return [str(r) for r in listed(step.get("diffReasons"), f"{where}.diffReasons")]


def read_preview_json(path: Path) -> tuple[list[Step], dict[str, int]]:
    """The steps of the preview at ``path`` and its ``changeSummary``; ``StateFileError`` says what is wrong."""
    doc = load_json(path, PREVIEW)
    if not isinstance(doc, dict):
        raise StateFileError(f"{path}: a JSON {type(doc).__name__}, not {PREVIEW} (an object with steps)")
    if "deployment" in doc and "steps" not in doc:
        raise StateFileError(f"{path}: this is a `pulumi stack export` file, not {PREVIEW}; pass it to `preview --state`")
    if "steps" not in doc:
        raise StateFileError(f"{path}: no steps, so not {PREVIEW} (write one with `pulumi preview --json > FILE`)")
    items = listed(doc["steps"], f"{path}: steps")
    failed = [d for d in listed(doc.get("diagnostics"), f"{path}: diagnostics") if isinstance(d, dict) and d.get("severity") == "error"]
    if failed:  # pulumi writes the steps it had when the preview failed: not the whole plan
        said = " ".join(str(failed[0].get("message") or "").split())[:200]
        raise StateFileError(f"{path}: the preview failed ({said or 'an error diagnostic'}), so its steps are not the "
                             f"whole plan: fix the error and preview again")
    summary = mapped(doc.get("changeSummary"), f"{path}: changeSummary")
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63 for v in summary.values()):
        raise StateFileError(f"{path}: changeSummary must map ops to counts")
    steps: list[Step] = []
    logical: dict[str, Step] = {}
    stacks: set[tuple[str, str]] = set()
    for n, item in enumerate(items):
        where = f"{path}: steps[{n}]"
        if not isinstance(item, dict):
            raise StateFileError(f"{where}: not an object")
        op = item.get("op")
        urn: Any = item.get("urn")
        if not isinstance(op, str) or op not in STEP_OPS:
            raise StateFileError(f"{where}: op {shown(repr(op))[:80]} is not a step op pulumi writes ({', '.join(sorted(STEP_OPS))})")
        try:
            stack, project, qualified, _ = urn_parts(urn)
        except ValueError:
            raise StateFileError(f"{where}: urn {urn!r} is not a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)") from None
        stacks.add((stack, project))
        if len(stacks) > 1:
            (a, b), (c, d) = sorted(stacks)[:2]
            raise StateFileError(f"{where}: {urn} mixes stacks: stack {a!r} of project {b!r} and stack {c!r} of project {d!r}")
        old, new = item.get("oldState"), item.get("newState")
        for key, state in (("oldState", old), ("newState", new)):
            if state is not None and not isinstance(state, dict):
                raise StateFileError(f"{where}.{key}: must be a resource state object")
            if isinstance(state, dict):
                check_state_fields(state, f"{where}.{key}")
        step = Step(REPLACEMENT_PARTS.get(op, op), urn, qualified.rsplit("$", 1)[-1], old, new, _diff(item, where))
        known = logical.get(urn)
        if known is not None and known.op == step.op:  # --show-replacement-steps: one logical step per resource
            if op in REPLACEMENT_PARTS:
                known.old, known.new, known.diff = known.old or old, known.new or new, known.diff or step.diff
            else:
                known.old, known.new, known.diff = old or known.old, new or known.new, step.diff or known.diff
            continue
        logical[urn] = step
        steps.append(step)
    cycle = parent_cycle({step.urn: str(step.state().get("parent") or "") for step in steps})
    if cycle:
        raise StateFileError(f"{path}: {cycle[0]}: {cycle_words(cycle)}")
    return steps, {str(k): v for k, v in summary.items()}
