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
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Mapping, Optional

from google.protobuf import struct_pb2

from .. import clock, contract
from ..inputs import (
    NotReadable,
    clipped,
    finite_float,
    finite_int,
    first_not_finite,
    key_path,
    nesting_depth,
    read_input,
)
from ..spec.base import rendered, shown
from . import sdk
from .records import STACK_TYPE, ProgramRun, Resource

CURRENT_VERSION = 3
LATEST_VERSION = 4
FEATURES = frozenset(
    {
        "refreshBeforeUpdate",
        "views",
        "hooks",
        "taint",
        "replaceWith",
        "snippets-prototype",
        "extensionParameterization",
        "byteString",
    }
)
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
    """One resource of a stack's state, its secrets decoded (plaintext) or ``UNREADABLE`` (ciphertext)."""

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
    taint: bool = False
    """``taint``: the engine replaces it on the next update (``pulumi state taint``)."""
    pending_replacement: bool = False
    """``pendingReplacement``: deleted by a delete-before-replace that did not create its replacement."""
    delete: bool = False
    """``delete``: the old copy of a replaced resource, left for the next update to delete."""
    view_of: str = ""
    """``viewOf``: a view its owner's provider keeps; the engine never deletes it on its own."""
    deleted_with: str = ""
    """``deletedWith``: the resource whose deletion deletes this one (its own delete is then skipped)."""
    replace_with: list[str] = field(default_factory=list)
    """``replaceWith``: resources whose replacement replaces this one."""
    replace_on_changes: list[str] = field(default_factory=list)
    provider: str = ""
    dependencies: list[str] = field(default_factory=list)
    created: str = ""
    modified: str = ""
    """``modified``: when the engine last altered this resource's state (RFC 3339), '' when not recorded."""
    init_errors: list[str] = field(default_factory=list)
    """``initErrors``: why its provider could not finish creating or updating it (a partial failure: the engine keeps
    the state the provider reported, and updates it again on the next ``up``)."""
    import_id: str = ""
    """``importID``: the id it was imported by, when that differs from its ``id``."""

    @property
    def name(self) -> str:
        return urn_parts(self.urn)[3]


@dataclass
class StackState:
    path: Path
    version: int
    resources: list[StateResource]
    project: str = ""
    stack: str = ""
    encrypted: int = 0
    """How many secret values are ciphertext (unknown offline)."""
    pending: int = 0
    """Operations a previous update left pending (``pending_operations``)."""
    kind: str = "export"
    """``export`` (``pulumi stack export``) or ``checkpoint`` (a file backend's ``.pulumi/stacks/...`` file)."""
    pending_deletes: list[StateResource] = field(default_factory=list)
    """Old copies of replaced resources (``delete: true``) the next update deletes."""


def urn_parts(urn: object) -> tuple[str, str, str, str]:
    """(stack, project, qualified type, name) of a URN; the name may itself contain ``::``."""
    if not isinstance(urn, str) or not urn.startswith(URN_PREFIX) or urn.count("::") < 3:
        raise ValueError(urn)
    stack, project, qualified, name = urn[len(URN_PREFIX) :].split("::", 3)
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
                return path[path.index(urn) :] + [urn]
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
            return {k: value[k] for k in (sdk.SIG_KEY, "urn", "id") if k in value}
        return {k: _decode(v, f"{where}.{k}", counter) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, f"{where}[{n}]", counter) for n, v in enumerate(value)]
    return value


def check_state_fields(item: dict[str, Any], where: str) -> None:
    """The fields of a resource state the plan reads have the types pulumi writes. Go writes an empty
    list as ``null`` (a nil slice: ``propertyDependencies`` of CLI v3.102 and older), read as none."""
    for key in ("parent", "id", "provider", "viewOf", "deletedWith", "importID"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise StateFileError(f"{where}.{key}: must be a string, not {rendered(item[key])}"[:300])
    for key, what in (
        ("ignoreChanges", "property paths"),
        ("replaceOnChanges", "property paths"),
        ("dependencies", "URNs"),
        ("replaceWith", "URNs"),
        ("initErrors", "messages"),
    ):
        value = item.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(p, str) for p in value)):
            raise StateFileError(f"{where}.{key}: must be a list of {what}")
    deps = item.get("propertyDependencies")
    if deps is not None and not (
        isinstance(deps, dict)
        and all(v is None or (isinstance(v, list) and all(isinstance(u, str) for u in v)) for v in deps.values())
    ):
        raise StateFileError(f"{where}.propertyDependencies: must map property names to lists of URNs")
    for key in ("protect", "external", "taint", "pendingReplacement", "retainOnDelete", "delete", "custom"):
        if item.get(key) is not None and not isinstance(item[key], bool):
            raise StateFileError(f"{where}.{key}: must be true or false, not {rendered(item[key])}"[:300])
    for key in ("created", "modified"):
        if item.get(key) is not None and state_time(item[key]) is None:
            raise StateFileError(
                f"{where}.{key}: must be a time as pulumi writes it (RFC 3339), not {rendered(item[key])}"[:300]
            )
    if item.get("inputs") is not None and not isinstance(item["inputs"], dict):
        raise StateFileError(f"{where}.inputs: must be an object")


_GO_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?"
    r"(?:Z|([+-])([0-9]{2}):([0-9]{2}))"
)
_EARLIEST = datetime(1, 1, 1, tzinfo=timezone.utc)
_LAST_MICROSECOND = (date.max.toordinal() * 86400 - 1) * 1_000_000
"""9999-12-31T23:59:59Z, in microseconds after ``_EARLIEST``: the latest time kept (a whole second, so that rounding
a time up to its second never passes what Python can hold)."""


def _days_in(year: int, month: int) -> int:
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)  # year 0 too, as Go counts it
    return 29 if month == 2 and leap else (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]


def state_time(value: Any) -> Optional[datetime]:
    """A resource's ``created``/``modified`` time as the Pulumi CLI reads it from JSON (Go's ``time.Time``: RFC 3339
    with Go's leniencies), in UTC, or None when the CLI would refuse ``value``.

    What Go reads: ``YYYY-MM-DDTHH:MM:SS``, an optional fraction after a period or a comma, then ``Z`` or ``+HH:MM``/
    ``-HH:MM``; the ``T`` and ``Z`` upper-case, a year of exactly four digits (0000 too), an hour of one or two digits,
    a day that exists in its month, a second up to 59 (no leap second), an hour up to 23, but a zone up to 24:60.
    The fraction is rounded up to the microsecond Python keeps, past its ninth digit ignored as Go ignores it; a time
    whose UTC instant is before year 1 or after 9999 is held at the nearest end of Python's range (soak evidence only
    compares it with the clock, which lies inside)."""
    if not isinstance(value, str):
        return None
    found = _GO_RFC3339.fullmatch(value)
    if not found:
        return None
    year, month, day, hour, minute, second = (int(found.group(n)) for n in range(1, 7))
    fraction, sign, zone_hours, zone_minutes = found.group(7, 8, 9, 10)
    if not (1 <= month <= 12 and 1 <= day <= _days_in(year, month) and hour <= 23 and minute <= 59 and second <= 59):
        return None
    offset = 0
    if sign:
        if int(zone_hours) > 24 or int(zone_minutes) > 60:
            return None
        offset = (int(zone_hours) * 60 + int(zone_minutes)) * 60 * (1 if sign == "+" else -1)
    nanos = int((fraction or "")[:9].ljust(9, "0"))
    # days from 0001-01-01 (year 0, a leap year, counted back from it)
    days = (date(year, month, day).toordinal() if year else date(4, month, day).toordinal() - 365 - 1096) - 1
    micros = (days * 86400 + hour * 3600 + minute * 60 + second - offset) * 1_000_000 + -(-nanos // 1000)
    return _EARLIEST + timedelta(microseconds=min(max(micros, 0), _LAST_MICROSECOND))


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


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of the file at ``path`` (a byte-order mark dropped); ``StateFileError`` says why not."""
    try:
        raw = read_input(path)
    except NotReadable as exc:
        raise StateFileError(f"{path}: {exc}") from None
    except FileNotFoundError:
        raise StateFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise StateFileError(f"{path}: is a directory, not {what}") from None
    except OSError as exc:
        raise StateFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise StateFileError(
            f"{path}: is UTF-16 text (as PowerShell's > writes it), not UTF-8: save it as UTF-8, "
            f"or write it with `| Out-File -Encoding utf8`"
        )
    try:
        return raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8")  # a byte-order mark is dropped
    except UnicodeDecodeError:
        raise StateFileError(f"{path}: not a text file, so not {what} (an encrypted file? decrypt it first)") from None


def parse_json(text: str, path: Path, what: str, where: str = "") -> Any:
    """One JSON document, as pulumi writes JSON (no NaN, no number past a 64-bit float's range, no numbers Python
    cannot read, not too deep)."""
    try:
        doc = json.loads(text, parse_constant=_no_constant, parse_float=finite_float, parse_int=finite_int)
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno}, column {exc.colno}" if not where else f"{where}column {exc.colno}"
        raise StateFileError(f"{path}: not JSON ({at}: {exc.msg}), so not {what}") from None
    except RecursionError:
        raise StateFileError(f"{path}: nested deeper than any {what.removeprefix('a ')} could be") from None
    except ValueError as exc:  # NaN or Infinity, or an integer longer than Python converts
        raise StateFileError(f"{path}: not JSON as pulumi writes it ({where}{exc}), so not {what}") from None
    if nesting_depth(doc) > MAX_DEPTH:
        raise StateFileError(
            f"{path}: nested deeper than any {what.removeprefix('a ')} could be (more than {MAX_DEPTH} levels)"
        )
    overflow = first_not_finite(doc)
    if overflow:  # Python would read it as an infinity; Go's reader (the CLI's) refuses it
        key, number = overflow
        raise StateFileError(
            f"{path}: {where}{key or 'the document'}: {number[:60]} is not a finite number (it overflows "
            f"a 64-bit float), so not JSON as pulumi writes it"
        )
    return doc


def load_json(path: Path, what: str) -> Any:
    return parse_json(read_text(path, what), path, what)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


EXPORT = "a `pulumi stack export` file"
STATE = "a stack's state (a `pulumi stack export` file, or a file backend's checkpoint)"
OLDEST_VERSION = 1
"""The oldest deployment and checkpoint version the CLI still reads (``DeploymentSchemaVersionOldestSupported``);
versions 1 and 2 are migrated to 3 as the CLI migrates them (``pkg/resource/stack/migrate``)."""


def _version(doc: dict[str, Any], path: Path) -> int:
    version = doc.get("version", 0)
    if isinstance(version, bool) or not isinstance(version, int):
        raise StateFileError(
            f"{path}: version {rendered(version)[:40]} is not a deployment version (a whole number: "
            "pulumi writes 3 or 4)"
        )
    if version > LATEST_VERSION:
        raise StateFileError(
            f"{path}: deployment version {version}: versions {OLDEST_VERSION} to {LATEST_VERSION} are "
            "read (it is newer than this tool reads)"
        )
    if version >= LATEST_VERSION:
        features = listed(doc.get("features"), f"{path}: features")
        if not all(isinstance(f, str) for f in features):
            raise StateFileError(f"{path}: features must be a list of names, not {rendered(features)}"[:300])
        unknown = sorted(str(f) for f in features if f not in FEATURES)
        if unknown:
            raise StateFileError(f"{path}: uses deployment features this tool does not know: {', '.join(unknown)}")
    return version


def _deployment_of(doc: Any, path: Path) -> tuple[int, str, Optional[dict[str, Any]]]:
    """(version, kind, deployment) of a state file: an export's ``deployment``, or a checkpoint's
    ``checkpoint.latest`` (``None``: the stack was never deployed)."""
    if not isinstance(doc, dict):
        raise StateFileError(
            f"{path}: a JSON {type(doc).__name__}, not {STATE} (an object with version and deployment)"
        )
    if "deployment" not in doc and "checkpoint" not in doc and ("steps" in doc or "changeSummary" in doc):
        raise StateFileError(
            f"{path}: this is `pulumi preview --json` output, not {EXPORT}; give it to `mixed-os-racks guard`"
        )
    if "checkpoint" in doc or ("latest" in doc and "deployment" not in doc and "version" not in doc):
        # a file backend's ``.pulumi/stacks/<project>/<stack>.json`` (``apitype.VersionedCheckpoint``); one from
        # before checkpoints had versions is the checkpoint itself (``target`` and ``latest``)
        version = _version(doc, path) if "checkpoint" in doc else 1
        if "checkpoint" in doc and version < OLDEST_VERSION:
            raise StateFileError(
                f"{path}: a checkpoint with no version: versions {OLDEST_VERSION} to {LATEST_VERSION} are read"
            )
        checkpoint = doc["checkpoint"] if "checkpoint" in doc else doc
        if isinstance(checkpoint, str):
            raise StateFileError(
                f"{path}: the whole checkpoint is a string, not an object: it is encrypted or encoded as a "
                "whole, and cannot be read"
            )
        if not isinstance(checkpoint, dict):
            raise StateFileError(f"{path}: checkpoint is a JSON {type(checkpoint).__name__}, not an object")
        latest = checkpoint.get("latest")
        if latest is not None and not isinstance(latest, dict):
            raise StateFileError(
                f"{path}: checkpoint.latest must be an object (the last deployment), not {rendered(latest)}"[:300]
            )
        return version, "checkpoint", latest
    if "version" not in doc or "deployment" not in doc:
        missing = " and ".join(k for k in ("version", "deployment") if k not in doc)
        raise StateFileError(
            f"{path}: no {missing}, so not {EXPORT} (write one with `pulumi stack export --file FILE`)"
        )
    version = _version(doc, path)
    if version < OLDEST_VERSION:
        raise StateFileError(
            f"{path}: deployment version {version}: versions {OLDEST_VERSION} to {LATEST_VERSION} are read "
            "(re-export it with a current Pulumi CLI)"
        )
    deployment = doc["deployment"]
    if isinstance(deployment, str):
        raise StateFileError(
            f"{path}: the whole deployment is a string, not an object: it is encrypted or encoded as a whole, and "
            "cannot be read (only single secret values may be ciphertext; export with `pulumi stack export`)"
        )
    if not isinstance(deployment, dict):
        raise StateFileError(f"{path}: deployment is a JSON {type(deployment).__name__}, not an object")
    return version, "export", deployment


def read_stack_export(path: Path, project: Optional[str] = None, stack: Optional[str] = None) -> StackState:
    """Read and check the state at ``path`` (a ``pulumi stack export``, or a file backend's checkpoint) for
    ``stack`` of ``project`` (by default, the stack its first resource names: every other one must be of the
    same stack); ``StateFileError`` says what is wrong. What the CLI reads is read (versions 1 to 4, an empty
    list written as ``null``); what it refuses is refused."""
    version, kind, deployment = _deployment_of(load_json(path, EXPORT), path)
    items = listed((deployment or {}).get("resources"), f"{path}: deployment.resources")
    if (project is None or stack is None) and items and isinstance(items[0], dict):
        try:
            stack, project, _, _ = urn_parts(items[0].get("urn"))
        except ValueError:
            pass  # named below, where each resource is checked
    counter = [0]
    resources: list[StateResource] = []
    deletes: list[StateResource] = []
    seen: set[str] = set()
    entries: list[tuple[str, StateResource]] = []
    for n, item in enumerate(items):
        where = f"{path}: deployment.resources[{n}]"
        if not isinstance(item, dict):
            raise StateFileError(f"{where}: not an object")
        urn: Any = item.get("urn")
        type_ = item.get("type")
        try:
            urn_stack, urn_project, qualified, _ = urn_parts(urn)
        except ValueError:
            raise StateFileError(
                f"{where}: urn {rendered(urn)[:200]} is not a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)"
            ) from None
        if (urn_stack, urn_project) != (stack, project):
            raise StateFileError(
                f"{where}: {shown(urn)} belongs to stack {urn_stack!r} of project {urn_project!r}, not stack {stack!r} "
                f"of project {project!r}: export the stack you preview"
            )
        if not isinstance(type_, str) or qualified.rsplit("$", 1)[-1] != type_:
            raise StateFileError(f"{where}: type {rendered(type_)[:200]} does not match its urn {shown(urn)}")
        check_state_fields(item, where)
        if not item.get("custom") and item.get("id"):  # pulumi's DeserializeResource refuses it too
            raise StateFileError(
                f"{where}: {shown(urn)} has custom false (a component) but an id "
                f"{rendered(item['id'])[:80]}: only a custom resource has one"
            )
        inputs, outputs = mapped(item.get("inputs"), f"{where}.inputs"), mapped(item.get("outputs"), f"{where}.outputs")
        if sdk.SIG_KEY in inputs or sdk.SIG_KEY in outputs:  # pulumi stores each secret value on its own
            raise StateFileError(
                f"{where}: inputs and outputs must be objects of properties, not one secret or resource value"
            )
        dependencies = list(item.get("dependencies") or [])
        deps = item.get("propertyDependencies")
        if version < CURRENT_VERSION:  # v1 and v2 had none: the CLI's migration gives every input all of them
            deps = {key: dependencies for key in inputs}
        res = StateResource(
            urn=urn,
            type=type_,
            custom=bool(item.get("custom")),
            inputs=_decode(inputs, f"{where}.inputs", counter),
            outputs=_decode(outputs, f"{where}.outputs", counter),
            parent=item.get("parent") or "",
            protect=item.get("protect") is True,
            external=item.get("external") is True,
            id=str(item.get("id") or ""),
            ignore_changes=list(item.get("ignoreChanges") or []),
            property_dependencies={k: list(v or []) for k, v in (deps or {}).items()},
            retain_on_delete=item.get("retainOnDelete") is True,
            taint=item.get("taint") is True,
            pending_replacement=item.get("pendingReplacement") is True,
            delete=item.get("delete") is True,
            view_of=item.get("viewOf") or "",
            deleted_with=item.get("deletedWith") or "",
            replace_with=list(item.get("replaceWith") or []),
            replace_on_changes=list(item.get("replaceOnChanges") or []),
            provider=item.get("provider") or "",
            dependencies=dependencies,
            created=item.get("created") or "",
            modified=item.get("modified") or "",
            init_errors=list(item.get("initErrors") or []),
            import_id=item.get("importID") or "",
        )
        entries.append((where, res))
        if res.delete:  # the old copy of a replaced resource: the next update deletes it
            deletes.append(res)
            continue
        if urn in seen:
            raise StateFileError(f"{where}: {shown(urn)} appears twice")
        seen.add(urn)
        resources.append(res)
    cycle = parent_cycle({res.urn: res.parent for res in resources})
    if cycle:
        raise StateFileError(f"{path}: {cycle[0]}: {cycle_words(cycle)}")
    _check_references(entries)
    pending = listed((deployment or {}).get("pending_operations"), f"{path}: deployment.pending_operations")
    return StackState(
        path,
        version,
        resources,
        project or "",
        stack or "",
        encrypted=counter[0],
        pending=len(pending),
        kind=kind,
        pending_deletes=deletes,
    )


PROVIDER_TYPE_PREFIX = "pulumi:providers:"
UNKNOWN_PROVIDER_ID = sdk.UNKNOWN
"""The id the engine gives a provider resource that has none when it makes its reference (``URN::ID``): its
unknown string, ``04da6b54-80e4-46f7-96ec-b56ff0331ba9``."""
MAX_URN_SHOWN = 200
"""Most characters of a URN a message about references shows (a longer one is cut, its length said)."""
MAX_CYCLE_SHOWN = 6
"""Most links of a cycle of references a message shows."""


def _urn_shown(urn: str) -> str:
    return shown(clipped(urn, MAX_URN_SHOWN))


def _references(res: StateResource) -> list[tuple[str, str]]:
    """(key, URN) of each resource ``res`` names, as the engine checks them (an empty URN in a list is no
    reference: the engine skips it)."""
    refs = [("parent", res.parent)] if res.parent else []
    refs += [(f"dependencies[{n}]", urn) for n, urn in enumerate(res.dependencies) if urn]
    refs += [
        (key_path(["propertyDependencies", key, n]), urn)
        for key, urns in res.property_dependencies.items()
        for n, urn in enumerate(urns)
        if urn
    ]
    refs += [("deletedWith", res.deleted_with)] if res.deleted_with else []
    refs += [(f"replaceWith[{n}]", urn) for n, urn in enumerate(res.replace_with) if urn]
    return refs


def _is_provider_type(type_: str) -> bool:
    """``pulumi:providers:<package>``, as the engine tells a provider resource (its module ``pulumi:providers``)."""
    package = type_.removeprefix(PROVIDER_TYPE_PREFIX)
    return type_.startswith(PROVIDER_TYPE_PREFIX) and bool(package) and ":" not in package


def _provider_ref(res: StateResource) -> str:
    """The reference (``URN::ID``) resources use to name the provider resource ``res``."""
    return f"{res.urn}::{res.id or UNKNOWN_PROVIDER_ID}"


def _parses_as_provider_ref(ref: str) -> bool:
    """The engine reads ``ref`` as a provider reference: a provider resource's URN, ``::``, an id."""
    urn, sep, _ = ref.rpartition("::")
    try:
        qualified = urn_parts(urn)[2] if sep else ""
    except ValueError:
        return False
    return _is_provider_type(qualified.rsplit("$", 1)[-1])


def _check_references(entries: list[tuple[str, StateResource]]) -> None:
    """Every resource a resource names (its parent, dependencies, property dependencies, ``deletedWith``,
    ``replaceWith``, provider) is a resource of the state, and the resources can be put in an order the engine's
    integrity check accepts (pulumi ``pkg/resource/deploy/snapshot.go``, ``VerifyIntegrity``): each after every
    resource it names (a URN is there once any resource of that URN is, an old ``delete: true`` copy too) and after
    its provider (unless it is pending replacement). The order of the file itself is not checked: the engine writes
    one such order, and an export re-sorted by a tool reads the same; what no order can satisfy (references round a
    cycle) is refused."""
    urns = {res.urn for _, res in entries}
    providers = {_provider_ref(res) for _, res in entries if _is_provider_type(res.type)}
    needs: list[list[tuple[str, tuple[str, str]]]] = []  # per resource: (key, what it waits for)
    for where, res in entries:
        wants: list[tuple[str, tuple[str, str]]] = []
        for key, urn in _references(res):
            if urn not in urns:
                raise StateFileError(
                    f"{where}.{key}: {_urn_shown(urn)} is not a resource of the state "
                    f"({_urn_shown(res.urn)} names it; pulumi refuses such a state)"
                )
            wants.append((key, ("urn", urn)))
        if res.provider:
            # a resource left by a delete-before-replace may name a provider that is gone (the engine allows it)
            known = res.provider in providers or (res.pending_replacement and _parses_as_provider_ref(res.provider))
            if not known:
                raise StateFileError(
                    f"{where}.provider: {_urn_shown(res.provider)} is not a provider of the state (a "
                    f"provider resource's URN::ID; {_urn_shown(res.urn)} names it; pulumi refuses such "
                    f"a state)"
                )
            own = _is_provider_type(res.type) and _provider_ref(res) == res.provider
            if not res.pending_replacement and not own:
                wants.append(("provider", ("provider", res.provider)))
        needs.append(wants)
    _check_order(entries, needs)


def _check_order(entries: list[tuple[str, StateResource]], needs: list[list[tuple[str, tuple[str, str]]]]) -> None:
    """Place every resource once all it waits for is placed (linear time: each wait is counted down once); what is
    left waits round a cycle, which is named."""
    gives: list[list[tuple[str, str]]] = [
        [("urn", res.urn)] + ([("provider", _provider_ref(res))] if _is_provider_type(res.type) else [])
        for _, res in entries
    ]
    waiting: dict[tuple[str, str], list[int]] = {}
    left = [0] * len(entries)
    for n, wants in enumerate(needs):
        for item in {want for _, want in wants}:
            waiting.setdefault(item, []).append(n)
            left[n] += 1
    ready = [n for n, count in enumerate(left) if count == 0]
    there: set[tuple[str, str]] = set()
    placed = 0
    while ready:
        n = ready.pop()
        placed += 1
        for item in gives[n]:
            if item in there:
                continue
            there.add(item)
            for m in waiting.pop(item, []):
                left[m] -= 1
                if left[m] == 0:
                    ready.append(m)
    if placed == len(entries):
        return
    givers: dict[tuple[str, str], int] = {}
    for n, items in enumerate(gives):
        for item in items:
            givers.setdefault(item, n)
    # every resource left waits for something no placed resource gives, so following those waits goes round
    n = next(n for n, count in enumerate(left) if count)
    walk: list[tuple[int, str]] = []
    seen: dict[int, int] = {}
    while n not in seen:
        seen[n] = len(walk)
        key, item = next((key, item) for key, item in needs[n] if item not in there)
        walk.append((n, key))
        n = givers[item]
    cycle = walk[seen[n] :]
    hops = [f"{_urn_shown(entries[m][1].urn)} ({key})" for m, key in cycle[:MAX_CYCLE_SHOWN]]
    if len(cycle) > MAX_CYCLE_SHOWN:
        hops.append(f"... ({len(cycle) - MAX_CYCLE_SHOWN} more)")
    first = entries[cycle[0][0]]
    raise StateFileError(
        f"{first[0]}: {_urn_shown(first[1].urn)}: the resources it names form a cycle: "
        f"{' -> '.join(hops)} -> {_urn_shown(first[1].urn)} (pulumi writes each resource after those "
        f"it names, so never such a cycle)"
    )


REDACTED = "[secret]"
"""What ``pulumi policy analyze --file`` gives a policy for a secret it cannot decrypt (its blinding secrets provider).
"""


def _wire(value: Any) -> Any:
    """A decoded state value as the engine sends it to a policy pack: an unreadable secret as a secret ``[secret]``."""
    if value is UNREADABLE:
        return {sdk.SIG_KEY: sdk.SECRET_SIG, "value": REDACTED}
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


def as_registrations(state: StackState) -> list[Resource]:
    """The state's resources as the engine gives them to policy packs when it analyzes a state without running
    the program (pulumi ``pkg/resource/deploy/analyze_snapshot.go``, ``AnalyzeSnapshot``): ``Analyze`` gets each
    resource's inputs, ``AnalyzeStack`` its outputs; the old copies of replaced resources are left out."""
    out = []
    for res in state.resources:
        properties, outputs = struct_pb2.Struct(), struct_pb2.Struct()
        properties.update(_wire(res.inputs))
        outputs.update(_wire(res.outputs))
        _, _, _, name = urn_parts(res.urn)
        out.append(
            Resource(
                urn=res.urn,
                type=res.type,
                name=name,
                parent=res.parent,
                custom=res.custom,
                inputs={},
                properties=properties,
                provider=res.provider,
                dependencies=list(res.dependencies),
                protect=res.protect,
                ignore_changes=list(res.ignore_changes),
                replace_on_changes=list(res.replace_on_changes),
                property_dependencies={k: list(v) for k, v in res.property_dependencies.items()},
                registered_outputs=outputs,
                retain_on_delete=res.retain_on_delete,
                deleted_with=res.deleted_with,
                replace_with=list(res.replace_with),
            )
        )
    return out


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


FIRST_VERSION = 1
"""A new launch template's one version (EC2 ``CreateLaunchTemplate`` makes version 1, its default and latest), as
pulumi-aws records it (``latestVersion``/``defaultVersion`` 1 in pulumi/pulumi-eks's recorded states), and the
version a node group created on it reports (``launchTemplate.version`` ``"1"``)."""


def go_time(when: datetime) -> str:
    """``when`` as the Pulumi CLI writes a resource's ``created``/``modified`` (Go's ``time.Time`` in UTC, marshaled as
    RFC 3339 with nanoseconds: ``2024-09-23T19:13:53.586049Z``, the fraction's trailing zeros dropped)."""
    when = when.astimezone(timezone.utc)
    fraction = f"{when.microsecond:06d}".rstrip("0")
    return when.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"


def _first_version(res: Resource, inputs: dict[str, Any], templates: set[str]) -> dict[str, Any]:
    """A node group's ``launchTemplate.version``, unknown at preview because it is its template's ``latestVersion``,
    as the first ``up`` leaves it: the template's first version."""
    given = res.wire.get("launchTemplate")
    if res.type != contract.EKS_NODE_GROUP or not isinstance(given, dict) or given.get("version") != sdk.UNKNOWN:
        return inputs
    if not templates.intersection(res.property_dependencies.get("launchTemplate", ())):
        return inputs
    return {**inputs, "launchTemplate": {**inputs["launchTemplate"], "version": str(FIRST_VERSION)}}


def _export_resource(res: Resource, secrets: str, external: bool, when: str, templates: set[str]) -> dict[str, Any]:
    inputs = _first_version(res, _state_value(res.wire, secrets, f"{res.name}-resolved"), templates)
    if res.type.startswith("pulumi:providers:") and res.version:  # the engine keeps the plugin version there
        inputs = {**inputs, "__internal": {}, "version": res.version}
    out: dict[str, Any] = {"urn": res.urn, "custom": res.custom, "type": res.type}
    if res.custom:
        out["id"] = f"{res.name}-id"
    out["inputs"] = inputs
    out["outputs"] = {**inputs, "id": out["id"]} if res.custom else inputs
    if res.type == contract.LAUNCH_TEMPLATE and not external:  # computed by EC2 when it creates the template
        out["outputs"] = {**out["outputs"], "latestVersion": FIRST_VERSION, "defaultVersion": FIRST_VERSION}
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
    if not external:  # a CreateStep stamps both (pkg/resource/deploy/step.go); a first ReadStep neither
        out["created"] = out["modified"] = when
    return out


def export_run(run: ProgramRun, secrets: str = "ciphertext", at: Optional[datetime] = None) -> dict[str, Any]:
    """The ``pulumi stack export`` (version 3) of the state a first ``pulumi up`` of ``run`` would leave, at ``at``
    (default: the package's clock, ``clock.now``).

    Outputs are the inputs plus an id, and what the soak evidence reads of a provider's computed outputs (a
    launch template's ``latestVersion`` and ``defaultVersion``, and the version its node group reports: the
    first, 1); a value unknown at preview gets a stand-in (the offline preview never compares a known value
    with an unknown one); secrets are ``ciphertext`` (what the CLI exports by default, unreadable offline) or
    ``plaintext`` (``--show-secrets``). Every resource the program registers is ``created`` and ``modified`` at
    ``at``, written as the CLI writes them (``go_time``), as a first ``up`` leaves them; a read (``Resource.get``)
    has neither, as the engine's first read of it records none.
    """
    if secrets not in ("ciphertext", "plaintext"):
        raise ValueError(f"secrets: {secrets!r} (ciphertext or plaintext)")
    when = go_time(at if at is not None else clock.now())
    templates = {r.urn for r in run.resources if r.type == contract.LAUNCH_TEMPLATE}
    resources = [_export_resource(r, secrets, False, when, templates) for r in run.resources]
    resources += [_export_resource(r, secrets, True, when, templates) for r in run.reads]
    stack = next((r for r in resources if r["type"] == STACK_TYPE), None)
    if stack is not None:
        stack["outputs"] = _state_value(run.outputs_wire, secrets, "resolved")
    return {
        "version": CURRENT_VERSION,
        "deployment": {
            "manifest": {"time": when, "magic": "", "version": "offline"},
            "secrets_providers": {"type": "passphrase", "state": {"salt": "v1:offline"}},
            "resources": resources,
        },
    }


def write_export(run: ProgramRun, path: Path, secrets: str = "ciphertext", at: Optional[datetime] = None) -> Path:
    """``export_run`` written to ``path`` (as ``pulumi stack export --file`` writes it)."""
    path.write_text(json.dumps(export_run(run, secrets, at), indent=2) + "\n", encoding="utf-8")
    return path
