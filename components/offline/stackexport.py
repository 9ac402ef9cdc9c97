"""The JSON ``pulumi stack export`` writes: read one (what ``preview --state`` compares a run with), and
write one from an offline run (``export_run``: the state a first ``pulumi up`` of that run would leave).

The shape, as pulumi's ``apitype`` package defines it (``sdk/go/common/apitype/core.go``,
``pkg/resource/stack/deployment.go``): ``{"version": 3|4, "features"?: [...], "deployment":
{"manifest", "secrets_providers"?, "resources": [...], "pending_operations"?}}``. The CLI writes
version 3 unless the deployment uses a newer feature (hooks, views, taint, ...), then 4 with the
feature names; the ``deployment`` object has the same shape in both. Each resource has ``urn``,
``custom``, ``type`` and, when set, ``id``, ``inputs``, ``outputs``, ``parent``, ``protect``,
``external``, ``provider``, ``dependencies``, ``propertyDependencies``, ``ignoreChanges``, ...

A secret is ``{"4dabf1...": "1b4706...", "ciphertext": "..."}`` (or ``"plaintext": "<JSON text>"`` with
``--show-secrets``). Ciphertext needs the stack's secrets provider, which the offline preview does not
have: such a value is *unknown* (``UNREADABLE``), never a change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..inputs import nesting_depth, not_a_file
from ..spec.base import rendered
from . import sdk
from .records import STACK_TYPE, ProgramRun, Resource

CURRENT_VERSION = 3
LATEST_VERSION = 4
FEATURES = frozenset({"refreshBeforeUpdate", "views", "hooks", "taint", "replaceWith", "snippets-prototype",
                      "extensionParameterization", "byteString"})
"""The deployment features the Pulumi CLI knows (``pkg/resource/stack/deployment.go``); a version-4
export names those it uses, and the CLI refuses one naming a feature it does not know."""

URN_PREFIX = "urn:pulumi:"


class StateFileError(Exception):
    """A state or preview file the offline preview cannot use: the CLI exits 2 with this message."""


class _Unreadable:
    """A secret's ciphertext: its value is not known offline."""

    def __repr__(self) -> str:
        return "UNREADABLE"


UNREADABLE = _Unreadable()


@dataclass
class StateResource:
    """One resource of a stack export, its secrets decoded (plaintext) or ``UNREADABLE`` (ciphertext)."""

    urn: str
    type: str
    custom: bool
    inputs: dict[str, Any]
    outputs: dict[str, Any] = field(default_factory=dict)
    parent: str = ""
    protect: bool = False
    external: bool = False
    id: str = ""
    ignore_changes: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    retain_on_delete: bool = False
    """``retainOnDelete``: deleting it from the program leaves the object running (the engine skips the
    provider's delete)."""

    @property
    def name(self) -> str:
        return urn_parts(self.urn)[3]


@dataclass
class StackState:
    path: Path
    version: int
    resources: list[StateResource]
    encrypted: int = 0
    """How many secret values are ciphertext (unknown offline)."""
    pending: int = 0
    """Operations a previous update left pending (``pending_operations``)."""


def urn_parts(urn: str) -> tuple[str, str, str, str]:
    """(stack, project, qualified type, name) of a URN; the name may itself contain ``::``."""
    if not isinstance(urn, str) or not urn.startswith(URN_PREFIX) or urn.count("::") < 3:
        raise ValueError(urn)
    stack, project, qualified, name = urn[len(URN_PREFIX):].split("::", 3)
    return stack, project, qualified, name


def parent_cycle(parents: Mapping[str, str]) -> list[str]:
    """A cycle of ``urn -> parent`` links (``[a, b, a]``), or []: Pulumi never writes one, and every walk
    up a resource's parents would go round it for ever."""
    done: set[str] = set()
    for start in parents:
        path: list[str] = []
        on_path: set[str] = set()
        urn = start
        while urn and urn not in done:
            if urn in on_path:
                return path[path.index(urn):] + [urn]
            on_path.add(urn)
            path.append(urn)
            urn = parents.get(urn, "")
        done |= on_path
    return []


def cycle_words(cycle: list[str]) -> str:
    return "its parents form a cycle: " + " -> ".join(cycle)


def _decode(value: Any, where: str, counter: list[int]) -> Any:
    """State values -> plain values: a plaintext secret decoded, a ciphertext one ``UNREADABLE``."""
    if isinstance(value, dict):
        if value.get(sdk.SIG_KEY) == sdk.SECRET_SIG:
            if "plaintext" in value and isinstance(value["plaintext"], str):
                try:
                    return _decode(json.loads(value["plaintext"]), where, counter)
                except json.JSONDecodeError:
                    raise StateFileError(f"{where}: a secret's plaintext is not JSON text") from None
            if "ciphertext" in value:
                counter[0] += 1
                return UNREADABLE
            raise StateFileError(f"{where}: a secret value with neither ciphertext nor plaintext")
        if value.get(sdk.SIG_KEY) == sdk.RESOURCE_SIG:
            return {sdk.SIG_KEY: sdk.RESOURCE_SIG, "urn": value.get("urn")}
        return {k: _decode(v, f"{where}.{k}", counter) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, f"{where}[{n}]", counter) for n, v in enumerate(value)]
    return value


def check_state_fields(item: dict[str, Any], where: str) -> None:
    """The fields of a resource state the plan reads have the types pulumi writes."""
    for key in ("parent", "id", "provider"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise StateFileError(f"{where}.{key}: must be a string, not {item[key]!r}")
    for key, what in (("ignoreChanges", "property paths"), ("replaceOnChanges", "property paths"), ("dependencies", "URNs")):
        value = item.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(p, str) for p in value)):
            raise StateFileError(f"{where}.{key}: must be a list of {what}")
    deps = item.get("propertyDependencies")
    if deps is not None and not (isinstance(deps, dict) and all(
            isinstance(v, list) and all(isinstance(u, str) for u in v) for v in deps.values())):
        raise StateFileError(f"{where}.propertyDependencies: must map property names to lists of URNs")
    if item.get("inputs") is not None and not isinstance(item["inputs"], dict):
        raise StateFileError(f"{where}.inputs: must be an object")


def listed(value: Any, where: str) -> list[Any]:
    """A list pulumi writes, or none (``null`` or absent): any other value is named, never read as empty."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise StateFileError(f"{where} must be a list, not {rendered(value)}"[:300])
    return value


def mapped(value: Any, where: str) -> dict[str, Any]:
    """An object pulumi writes, or none (``null`` or absent): any other value is named, never read as empty."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StateFileError(f"{where} must be an object, not {rendered(value)}"[:300])
    return value


MAX_DEPTH = 256
"""Deepest nesting of a JSON file read here: far more than any resource's values (a CRD's schema is some 30
levels), and shallow enough for every walk over the values to stay within Python's recursion limit."""


def load_json(path: Path, what: str) -> Any:
    problem = not_a_file(path)
    if problem:
        raise StateFileError(f"{path}: {problem}")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise StateFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise StateFileError(f"{path}: is a directory, not {what}") from None
    except OSError as exc:
        raise StateFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise StateFileError(f"{path}: is UTF-16 text (as PowerShell's > writes it), not UTF-8: save it as UTF-8, "
                             f"or write it with `| Out-File -Encoding utf8`")
    try:
        text = raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8")  # a byte-order mark is dropped
    except UnicodeDecodeError:
        raise StateFileError(f"{path}: not a text file, so not {what} (an encrypted file? decrypt it first)") from None
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise StateFileError(f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}), so not {what}") from None
    except RecursionError:
        raise StateFileError(f"{path}: nested deeper than any {what.removeprefix('a ')} could be") from None
    except ValueError as exc:  # NaN or Infinity, or an integer longer than Python converts
        raise StateFileError(f"{path}: not JSON as pulumi writes it ({exc}), so not {what}") from None
    if nesting_depth(doc) > MAX_DEPTH:
        raise StateFileError(f"{path}: nested deeper than any {what.removeprefix('a ')} could be (more than {MAX_DEPTH} levels)")
    return doc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


EXPORT = "a `pulumi stack export` file"


def read_stack_export(path: Path, project: str, stack: str) -> StackState:
    """Read and check the export at ``path`` for ``stack`` of ``project``; ``StateFileError`` says what is wrong."""
    doc = load_json(path, EXPORT)
    if not isinstance(doc, dict):
        raise StateFileError(f"{path}: a JSON {type(doc).__name__}, not {EXPORT} (an object with version and deployment)")
    if "steps" in doc or "changeSummary" in doc:
        raise StateFileError(f"{path}: this is `pulumi preview --json` output, not {EXPORT}; give it to `mixed-os-racks guard`")
    if "version" not in doc or "deployment" not in doc:
        missing = " and ".join(k for k in ("version", "deployment") if k not in doc)
        raise StateFileError(f"{path}: no {missing}, so not {EXPORT} (write one with `pulumi stack export --file FILE`)")
    version = doc["version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise StateFileError(f"{path}: version {version!r} is not a number")
    if version not in (CURRENT_VERSION, LATEST_VERSION):
        hint = "re-export it with a current Pulumi CLI" if version < CURRENT_VERSION else "it is newer than this tool reads"
        raise StateFileError(f"{path}: deployment version {version}: versions 3 and 4 are read ({hint})")
    if version >= LATEST_VERSION:
        features = listed(doc.get("features"), f"{path}: features")
        if not all(isinstance(f, str) for f in features):
            raise StateFileError(f"{path}: features must be a list of names, not {features!r}"[:300])
        unknown = sorted(str(f) for f in features if f not in FEATURES)
        if unknown:
            raise StateFileError(f"{path}: uses deployment features this tool does not know: {', '.join(unknown)}")
    deployment = doc["deployment"]
    if isinstance(deployment, str):
        raise StateFileError(
            f"{path}: the whole deployment is a string, not an object: it is encrypted or encoded as a whole, and "
            "cannot be read (only single secret values may be ciphertext; export with `pulumi stack export`)")
    if not isinstance(deployment, dict):
        raise StateFileError(f"{path}: deployment is a JSON {type(deployment).__name__}, not an object")
    items = listed(deployment.get("resources"), f"{path}: deployment.resources")
    counter = [0]
    resources: list[StateResource] = []
    seen: set[str] = set()
    for n, item in enumerate(items):
        where = f"{path}: deployment.resources[{n}]"
        if not isinstance(item, dict):
            raise StateFileError(f"{where}: not an object")
        urn: Any = item.get("urn")
        type_ = item.get("type")
        try:
            urn_stack, urn_project, qualified, _ = urn_parts(urn)
        except ValueError:
            raise StateFileError(f"{where}: urn {urn!r} is not a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)") from None
        if (urn_stack, urn_project) != (stack, project):
            raise StateFileError(
                f"{where}: {urn} belongs to stack {urn_stack!r} of project {urn_project!r}, not stack {stack!r} of "
                f"project {project!r}: export the stack you preview")
        if not isinstance(type_, str) or qualified.rsplit("$", 1)[-1] != type_:
            raise StateFileError(f"{where}: type {type_!r} does not match its urn {urn}")
        if item.get("delete"):  # an old copy waiting for deletion after a replacement
            continue
        if urn in seen:
            raise StateFileError(f"{where}: {urn} appears twice")
        seen.add(urn)
        inputs, outputs = mapped(item.get("inputs"), f"{where}.inputs"), mapped(item.get("outputs"), f"{where}.outputs")
        if sdk.SIG_KEY in inputs or sdk.SIG_KEY in outputs:  # pulumi stores each secret value on its own
            raise StateFileError(f"{where}: inputs and outputs must be objects of properties, not one secret or "
                                 f"resource value")
        check_state_fields(item, where)
        resources.append(StateResource(
            urn=urn, type=type_, custom=bool(item.get("custom")),
            inputs=_decode(inputs, f"{where}.inputs", counter),
            outputs=_decode(outputs, f"{where}.outputs", counter),
            parent=item.get("parent") or "", protect=bool(item.get("protect")), external=bool(item.get("external")),
            id=str(item.get("id") or ""), ignore_changes=list(item.get("ignoreChanges") or []),
            property_dependencies={k: list(v) for k, v in (item.get("propertyDependencies") or {}).items()},
            retain_on_delete=item.get("retainOnDelete") is True,
        ))
    cycle = parent_cycle({res.urn: res.parent for res in resources})
    if cycle:
        raise StateFileError(f"{path}: {cycle[0]}: {cycle_words(cycle)}")
    pending = listed(deployment.get("pending_operations"), f"{path}: deployment.pending_operations")
    return StackState(path, version, resources, encrypted=counter[0], pending=len(pending))


# ---- writing one ---------------------------------------------------------------------------------------


def _number(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _state_value(value: Any, secrets: str, resolved: str) -> Any:
    """Wire values -> state values: a secret as pulumi stores one, an unknown resolved to ``resolved``."""
    if isinstance(value, dict):
        sig = value.get(sdk.SIG_KEY)
        if sig == sdk.SECRET_SIG:
            inner = _state_value(value.get("value"), secrets, resolved)
            if secrets == "plaintext":
                return {sdk.SIG_KEY: sdk.SECRET_SIG, "plaintext": json.dumps(inner)}
            return {sdk.SIG_KEY: sdk.SECRET_SIG, "ciphertext": "v1:offline-export"}
        if sig == sdk.RESOURCE_SIG:
            return {k: v for k, v in value.items() if k in (sdk.SIG_KEY, "urn", "id", "packageVersion")}
        return {k: _state_value(v, secrets, resolved) for k, v in value.items()}
    if isinstance(value, list):
        return [_state_value(v, secrets, resolved) for v in value]
    if value == sdk.UNKNOWN:
        return resolved
    return _number(value)


def _export_resource(res: Resource, secrets: str, external: bool) -> dict[str, Any]:
    inputs = _state_value(res.wire, secrets, f"{res.name}-resolved")
    out: dict[str, Any] = {"urn": res.urn, "custom": res.custom, "type": res.type}
    if res.custom:
        out["id"] = f"{res.name}-id"
    out["inputs"] = inputs
    out["outputs"] = ({**inputs, "id": out["id"]} if res.custom else inputs)
    if res.parent:
        out["parent"] = res.parent
    if res.protect:
        out["protect"] = True
    if external:
        out["external"] = True
    if res.dependencies:
        out["dependencies"] = list(res.dependencies)
    if res.property_dependencies:
        out["propertyDependencies"] = {k: list(v) for k, v in res.property_dependencies.items()}
    if res.ignore_changes:
        out["ignoreChanges"] = list(res.ignore_changes)
    return out


def export_run(run: ProgramRun, secrets: str = "ciphertext") -> dict[str, Any]:
    """The ``pulumi stack export`` (version 3) of the state a ``pulumi up`` of ``run`` would leave.

    Outputs are the inputs plus an id; a value unknown at preview gets a stand-in (the offline
    preview never compares a known value with an unknown one); secrets are ``ciphertext`` (what the
    CLI exports by default, unreadable offline) or ``plaintext`` (``--show-secrets``).
    """
    if secrets not in ("ciphertext", "plaintext"):
        raise ValueError(f"secrets: {secrets!r} (ciphertext or plaintext)")
    resources = [_export_resource(r, secrets, False) for r in run.resources]
    resources += [_export_resource(r, secrets, True) for r in run.reads]
    stack = next((r for r in resources if r["type"] == STACK_TYPE), None)
    if stack is not None:
        stack["outputs"] = _state_value(run.outputs_wire, secrets, "resolved")
    return {
        "version": CURRENT_VERSION,
        "deployment": {
            "manifest": {"time": "1970-01-01T00:00:00Z", "magic": "", "version": "offline"},
            "secrets_providers": {"type": "passphrase", "state": {"salt": "v1:offline"}},
            "resources": resources,
        },
    }


def write_export(run: ProgramRun, path: Path, secrets: str = "ciphertext") -> Path:
    path.write_text(json.dumps(export_run(run, secrets), indent=2) + "\n", encoding="utf-8")
    return path
