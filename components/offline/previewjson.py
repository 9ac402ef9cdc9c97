"""Read what ``pulumi preview --json`` writes, into the steps ``laneguard`` judges.

Two shapes, from pulumi's engine display:

- **The digest** (the default; ``pkg/display/json.go`` ``PreviewDigest``): one JSON object
  ``{"config"?, "steps"?, "diagnostics"?, "duration"?, "changeSummary"?}``, each key left out when empty
  (Go's ``omitempty``: a preview with nothing to do has no ``steps``). Each step has ``op``, ``urn``,
  ``provider``?, ``oldState``/``newState`` (resource states as a stack export has them, secrets shown as
  ``"[secret]"``), ``diffReasons`` (changed top-level keys), ``replaceReasons`` (the keys forcing
  replacement) and ``detailedDiff`` (``null``, or property path -> ``{kind, inputDiff}``).
- **Engine events**, one JSON object a line, when ``PULUMI_ENABLE_STREAMING_JSON_PREVIEW`` is set
  (``pkg/backend/display/json.go`` ``ShowJSONEvents``; ``sdk/go/common/apitype/events.go``
  ``EngineEvent``): each step is a ``resourcePreEvent`` whose ``metadata`` has ``op``, ``urn``, ``type``,
  ``old``/``new`` (``inputs``, ``outputs``, ``parent``, ``protect``, ``taint``, ``retainOnDelete``,
  ``delete``), ``keys`` (replace keys), ``diffs`` and ``detailedDiff``; the ``summaryEvent`` has
  ``resourceChanges``; an error is a ``diagnosticEvent`` of severity ``error``.

``same`` steps appear in the digest only with ``--show-sames`` (the root stack's always); a replacement is
one logical ``replace`` step, plus ``create-replacement`` and ``delete-replaced`` with
``--show-replacement-steps``: those are folded into the logical step here. A ``delete-replaced`` step with
no replacement of its own deletes the old copy an earlier replacement left (its old state has
``delete: true``): it stays a step of its own.

A value not known until apply is written as the engine's unknown sentinel
(``04da6b54-80e4-46f7-96ec-b56ff0331ba9``); it is read as no value (``None``), never as a name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from ..spec.base import shown
from . import sdk
from .laneguard import GuardStep
from .stackexport import (
    StateFileError,
    check_state_fields,
    cycle_words,
    listed,
    mapped,
    parent_cycle,
    parse_json,
    read_text,
    urn_parts,
)

STEP_OPS = frozenset(
    {
        "same",
        "create",
        "update",
        "delete",
        "replace",
        "create-replacement",
        "delete-replaced",
        "read",
        "read-replacement",
        "refresh",
        "discard",
        "discard-replaced",
        "remove-pending-replace",
        "import",
        "import-replacement",
    }
)
"""The step ops of pulumi's ``pkg/resource/deploy/step.go`` that a preview can show."""
REPLACEMENT_PARTS = {
    "create-replacement": "replace",
    "delete-replaced": "replace",
    "read-replacement": "read",
    "import-replacement": "replace",
    "discard-replaced": "discard",
}
"""Each part's logical step (``step.go``: an import-replacement's logical step is the ``replace`` after it, which
deletes the old resource; a read-replacement's is the ``read``)."""
PREVIEW = "`pulumi preview --json` output"
DIGEST_KEYS = ("steps", "changeSummary", "diagnostics", "duration", "config", "maybeCorrupt")
"""What a preview digest may hold: a file with none of them is not one."""
EVENT_KEYS = ("sequence", "timestamp")


def _without_unknowns(value: Any) -> Any:
    """A state's values with the engine's unknown sentinel read as no value."""
    if isinstance(value, dict):
        return {k: _without_unknowns(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_unknowns(v) for v in value]
    return None if value == sdk.UNKNOWN else value


def _diff(detailed: Any, reasons: Any, where: str, reasons_key: str) -> list[str]:
    if detailed is not None and not isinstance(detailed, dict):
        raise StateFileError(f"{where}.detailedDiff: must be null or an object of property paths")
    if detailed:
        return sorted(detailed)
    return [str(r) for r in listed(reasons, f"{where}.{reasons_key}")]


def _events(text: str, path: Path) -> Optional[list[dict[str, Any]]]:
    """The engine events of a streaming preview (one JSON object a line), or None when ``text`` is not one."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    try:
        first = json.loads(lines[0][1]) if len(lines) > 1 else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(first, dict) or not any(k in first for k in EVENT_KEYS):
        return None
    events = []
    for n, line in lines:
        event = parse_json(line, path, PREVIEW + " (one engine event a line)", f"line {n}: ")
        if not isinstance(event, dict):
            raise StateFileError(f"{path}: line {n}: a JSON {type(event).__name__}, not an engine event")
        events.append(event)
    return events


def _digest_of_events(events: list[dict[str, Any]], path: Path) -> dict[str, Any]:
    """A streaming preview's events as the digest's ``steps``, ``diagnostics`` and ``changeSummary``."""
    steps, diagnostics, summary = [], [], None
    for n, event in enumerate(events, 1):
        pre = event.get("resourcePreEvent")
        if pre is not None:
            metadata = mapped(
                mapped(pre, f"{path}: line {n}: resourcePreEvent").get("metadata"),
                f"{path}: line {n}: resourcePreEvent.metadata",
            )
            steps.append(
                (
                    {
                        "op": metadata.get("op"),
                        "urn": metadata.get("urn"),
                        "oldState": metadata.get("old"),
                        "newState": metadata.get("new"),
                        "detailedDiff": metadata.get("detailedDiff"),
                        "diffReasons": metadata.get("diffs"),
                        "replaceReasons": metadata.get("keys"),
                    },
                    f"{path}: line {n}: resourcePreEvent.metadata",
                )
            )
        diagnostic = event.get("diagnosticEvent")
        if isinstance(diagnostic, dict):
            diagnostics.append(diagnostic)
        if isinstance(event.get("summaryEvent"), dict):
            summary = mapped(
                event["summaryEvent"].get("resourceChanges"), f"{path}: line {n}: summaryEvent.resourceChanges"
            )
    return {"steps": steps, "diagnostics": diagnostics, "changeSummary": summary or {}}


def read_preview_json(path: Path) -> tuple[list[GuardStep], dict[str, int]]:
    """The steps of the preview at ``path`` and its ``changeSummary``; ``StateFileError`` says what is wrong."""
    text = read_text(path, PREVIEW)
    events = None
    try:
        doc = parse_json(text, path, PREVIEW)
    except StateFileError:  # not one document: perhaps one engine event a line
        events = _events(text, path)
        if events is None:
            raise
        doc = _digest_of_events(events, path)
    if not isinstance(doc, dict):
        raise StateFileError(f"{path}: a JSON {type(doc).__name__}, not {PREVIEW} (an object with steps)")
    if ("deployment" in doc or "checkpoint" in doc) and "steps" not in doc:
        raise StateFileError(
            f"{path}: this is a `pulumi stack export` file, not {PREVIEW}; pass it to `preview --state`"
        )
    if not any(k in doc for k in DIGEST_KEYS):
        raise StateFileError(
            f"{path}: no steps and no changeSummary, so not {PREVIEW} (write one with `pulumi preview --json > FILE`)"
        )
    items = (
        doc["steps"]
        if events is not None
        else [(item, f"{path}: steps[{n}]") for n, item in enumerate(listed(doc.get("steps"), f"{path}: steps"))]
    )  # the digest leaves steps out (or null) when the preview has nothing to do
    failed = [
        d
        for d in listed(doc.get("diagnostics"), f"{path}: diagnostics")
        if isinstance(d, dict) and d.get("severity") == "error"
    ]
    if failed:  # pulumi writes the steps it had when the preview failed: not the whole plan
        said = " ".join(str(failed[0].get("message") or "").split())[:200]
        raise StateFileError(
            f"{path}: the preview failed ({shown(said) or 'an error diagnostic'}), so its steps are not the "
            f"whole plan: fix the error and preview again"
        )
    summary = mapped(doc.get("changeSummary"), f"{path}: changeSummary")
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63 for v in summary.values()):
        raise StateFileError(f"{path}: changeSummary must map ops to counts")
    return _steps(items, path), {str(k): v for k, v in summary.items()}


def _steps(items: list[tuple[Any, str]], path: Path) -> list[GuardStep]:
    read: list[tuple[str, GuardStep]] = []
    stacks: set[tuple[str, str]] = set()
    for item, where in items:
        if not isinstance(item, dict):
            raise StateFileError(f"{where}: not an object")
        op = item.get("op")
        urn: Any = item.get("urn")
        if not isinstance(op, str) or op not in STEP_OPS:
            raise StateFileError(
                f"{where}: op {shown(repr(op))[:80]} is not a step op pulumi writes ({', '.join(sorted(STEP_OPS))})"
            )
        try:
            stack, project, qualified, _ = urn_parts(urn)
        except ValueError:
            raise StateFileError(
                f"{where}: urn {shown(repr(urn))[:200]} is not a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)"
            ) from None
        stacks.add((stack, project))
        if len(stacks) > 1:
            (a, b), (c, d) = sorted(stacks)[:2]
            raise StateFileError(
                f"{where}: {shown(urn)} mixes stacks: stack {a!r} of project {b!r} and stack {c!r} of project {d!r}"
            )
        old, new = item.get("oldState"), item.get("newState")
        for key, state in (("oldState", old), ("newState", new)):
            if state is not None and not isinstance(state, dict):
                raise StateFileError(f"{where}.{key}: must be a resource state object")
            if isinstance(state, dict):
                check_state_fields(state, f"{where}.{key}")
        old, new = _without_unknowns(old), _without_unknowns(new)
        diff = _diff(item.get("detailedDiff"), item.get("diffReasons"), where, "diffReasons")
        read.append((op, GuardStep(op, urn, qualified.rsplit("$", 1)[-1], old, new, diff)))
    return _logical(read, path)


def _logical(read: list[tuple[str, GuardStep]], path: Path) -> list[GuardStep]:
    """One step per resource: ``--show-replacement-steps``' parts folded into their logical step. A
    ``delete-replaced`` of an old copy an earlier replacement left (no replacement of its own) stays one."""
    replaced = {step.urn for op, step in read if op in ("replace", "create-replacement", "import-replacement")}
    steps: list[GuardStep] = []
    logical: dict[str, GuardStep] = {}
    for op, step in read:
        if op == "delete-replaced" and step.urn not in replaced:
            steps.append(step)
            continue
        step.op = REPLACEMENT_PARTS.get(op, op)
        known = logical.get(step.urn)
        if known is not None and known.op == step.op:
            if op in REPLACEMENT_PARTS:
                known.old, known.new, known.diff = known.old or step.old, known.new or step.new, known.diff or step.diff
            else:
                known.old, known.new, known.diff = step.old or known.old, step.new or known.new, step.diff or known.diff
            continue
        logical[step.urn] = step
        steps.append(step)
    cycle = parent_cycle(
        {step.urn: str(step.state().get("parent") or "") for step in steps if step.op != "delete-replaced"}
    )
    if cycle:
        raise StateFileError(f"{path}: {cycle[0]}: {cycle_words(cycle)}")
    return steps
