"""A run compared with the state of the stack it would update (a ``pulumi stack export``, or a file
backend's checkpoint): the plan ``pulumi preview --diff`` would show, one step per resource: ``create``,
``update``, ``replace``, ``delete``, ``same``, ``read`` or ``discard``, with the changed property paths.

How it compares, as the engine does (pulumi ``pkg/resource/deploy/step_generator.go``): the program's
inputs, as the provider's ``Check`` would return them (``providerdiff.checked``: defaults it fills at
every level, ``tagsAll``, a Kubernetes auto-name), against the state's inputs, by URN; a bridged provider's
Optional+Computed attributes against the state's outputs (``providerdiff.computed_view``: left out, or equal
to the output, is no change).

- A value unknown in the run (an output of another resource) is not a change, unless the state has
  no value there; a secret's ciphertext in the state is unknown too, never a change.
- A reference to another resource equals the id (or ARN) the state holds for it, while that resource
  keeps its id; a policy document equals the JSON text the state keeps of it (``providerdiff``).
- A changed path the resource ignores (``ignoreChanges``, e.g. a node group's
  ``scalingConfig.desiredSize``) is no change.
- Replacement comes from ``forcenew`` (the providers' rules) and the resource's ``replaceOnChanges``; a
  resource the state marks ``taint`` or ``pendingReplacement`` is replaced whatever its inputs
  (``isTargetedReplace``; ``continueStepsFromDiff``), and so is one whose ``replaceWith`` names a
  replaced resource.
- A replaced resource gets a new id: a resource whose input is unknown because it comes from that
  resource sees that input change (a node group on a replaced launch template is replaced). A launch
  template whose content changes gets a new version: a node group on it updates
  ``launchTemplate.version`` (EKS rolls its nodes).
- Components are not diffed (their children are): they are ``same``, ``create`` or ``delete``.
- Resources the program reads (``get``) are ``read``; a read one the program no longer reads is
  ``discard``, never a deletion; so is a resource deleted by a delete-before-replace whose replacement
  the program no longer registers (``remove-pending-replace``). The engine's default providers
  (``pulumi:providers:aws::default_...``) are in the state but not in the run: ``same``.
- What the engine refuses, the plan refuses (``Plan.errors``): deleting a ``protect``ed resource
  (``step.go``: "cannot be deleted because it is protected"), replacing one the program still protects.
- A view (``viewOf``) is never deleted on its own: it goes with its owner. The old copy of a replaced
  resource (``delete: true``) is deleted (``delete-replaced``).
- A resource the state holds under another URN is found by its aliases, as the engine looks them up
  (``generateAliases``: its own, and those inherited from a parent found by an alias): it is compared with
  that state, not created while the old one is deleted; the state's references to its old URN name it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from .. import contract
from . import forcenew, providerdiff, sdk
from .forcenew import replacing
from .preview import tree_rows
from ..spec.base import shown as shown_text
from .records import STACK_TYPE, ProgramRun, Resource, shown
from .laneguard import urn_name
from .stackexport import UNREADABLE, StackState, StateResource

OPS = ("create", "import", "update", "replace", "delete", "delete-replaced", "same", "read", "discard")
SYMBOL = {
    "create": "+",
    "import": "=",
    "update": "~",
    "replace": "+-",
    "delete": "-",
    "delete-replaced": "--",
    "same": "",
    "read": ">",
    "discard": "-",
}
DEFAULT_PROVIDER = ("pulumi:providers:", "default")
"""A provider the engine registers for resources that name none (``default_6_50_0``)."""
TEMPLATE_NAME_ONLY = ("name", "namePrefix", "description", "tags", "tagsAll", "updateDefaultVersion", "defaultVersion")
"""Launch template inputs whose change does not make a new template version (the rest do)."""
KEEPS_ID = ("same", "update", "read")
"""Ops after which a resource still has the id the state holds."""


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
_MISSING = object()
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Ref:
    """A resource reference: the resource's URN, and its id when the reference carries one."""

    urn: str
    id: Any = None


def child_path(path: str, key: str) -> str:
    """Pulumi's property-path syntax: ``a.b``, or ``a["convox.io/label"]`` for a key that is not a name."""
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def normal(value: Any, renamed: Mapping[str, str] = {}) -> Any:
    """Run (wire) and state values in one form: unknowns and unreadable secrets ``UNKNOWN``, secrets
    unwrapped, resource references ``Ref`` (a state's under the URN its resource has now: ``renamed``, old URN
    -> new, for a resource found by an alias), whole floats as ints."""
    if value is UNREADABLE or value == sdk.UNKNOWN:
        return UNKNOWN
    if isinstance(value, dict):
        sig = value.get(sdk.SIG_KEY)
        if sig == sdk.SECRET_SIG:
            return normal(value.get("value"), renamed)
        if sig == sdk.RESOURCE_SIG:
            ref_id = value.get("id")
            urn = str(value.get("urn"))
            return Ref(renamed.get(urn, urn), None if ref_id in (None, "", sdk.UNKNOWN) else ref_id)
        return {k: normal(v, renamed) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v, renamed) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@dataclass
class Ids:
    """What the plan knows of the resources references name: the ids and ARNs the state holds, and which
    resources lose their id in this plan (created or replaced)."""

    state: dict[str, StateResource]
    """URN -> its state (under the URN it has now too, for a resource found by an alias)."""
    ops: dict[str, str] = field(default_factory=dict)

    def keeps_id(self, urn: str) -> bool:
        return urn in self.state and self.ops.get(urn, "same") in KEEPS_ID

    def names(self, ref: Ref, text: str) -> bool:
        """Whether ``text`` (a state value) is what the reference resolved to: the resource's id or ARN."""
        old = self.state.get(ref.urn)
        if old is None:
            return ref.id is not None and ref.id == text
        arn = old.outputs.get("arn") if isinstance(old.outputs, dict) else None
        return self.keeps_id(ref.urn) and text in {old.id, arn} - {None, ""}


def _same_ref(old: Any, new: Any, ids: Optional[Ids]) -> bool:
    if isinstance(old, Ref) and isinstance(new, Ref):
        return old.urn == new.urn and (ids is None or ids.keeps_id(new.urn) or new.urn not in ids.state)
    ref, text = (new, old) if isinstance(new, Ref) else (old, new)
    return isinstance(text, str) and ids is not None and ids.names(ref, text)


def _document(value: Any) -> Any:
    return providerdiff.json_document(value) if isinstance(value, str) else value


def _documents_differ(old: Any, new: Any, ids: Optional[Ids]) -> Optional[bool]:
    """When one side is JSON text (a policy the state keeps as text) and the other a document, or both are
    texts: whether the documents differ, as the provider reads them; None when they are not documents."""
    if not (isinstance(old, str) or isinstance(new, str)):
        if (
            isinstance(old, dict)
            and isinstance(new, dict)
            and providerdiff.is_policy(old)
            and providerdiff.is_policy(new)
        ):
            return not providerdiff.documents_equal(old, new)
        return None
    a, b = _document(old), _document(new)
    if (
        a is providerdiff.NOT_JSON
        or b is providerdiff.NOT_JSON
        or not isinstance(a, (dict, list))
        or not isinstance(b, (dict, list))
    ):
        return None
    same = providerdiff.documents_equal(a, b)
    return (not same) if same is not None else bool(changed_paths(normal(a), b, "", ids))


def _may_be_documents(old: Any, new: Any) -> bool:
    """Whether ``old`` and ``new`` could be a JSON document and its text, two texts of one, or two policies."""
    if isinstance(old, str):
        return isinstance(new, (str, dict, list))
    if isinstance(new, str):
        return isinstance(old, (dict, list))
    return isinstance(old, dict) and isinstance(new, dict) and "Statement" in old and "Statement" in new


def changed_paths(old: Any, new: Any, path: str = "", ids: Optional[Ids] = None) -> list[str]:
    """The paths where ``new`` differs from ``old`` (both ``normal``); unknowns change only what was absent."""
    if new is UNKNOWN:
        return [path] if old is _MISSING else []
    if old is UNKNOWN:
        return [path] if new is _MISSING else []
    if isinstance(old, Ref) or isinstance(new, Ref):
        return [] if _same_ref(old, new, ids) else [path]
    if old is _MISSING and new is _MISSING:
        return []
    if _may_be_documents(old, new) and old != new:
        differ = _documents_differ(old, new, ids)
        if differ is not None:
            return [path] if differ else []
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new)):
            out += changed_paths(old.get(key, _MISSING), new.get(key, _MISSING), child_path(path, key), ids)
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for n in range(max(len(old), len(new))):
            out += changed_paths(
                old[n] if n < len(old) else _MISSING, new[n] if n < len(new) else _MISSING, f"{path}[{n}]", ids
            )
        return out
    if type(old) is not type(new) and not (
        isinstance(old, (int, float))
        and isinstance(new, (int, float))
        and not isinstance(old, bool)
        and not isinstance(new, bool)
    ):
        return [path]
    return [] if old == new else [path]


def _ignored_pattern(pattern: str) -> re.Pattern[str]:
    """An ``ignoreChanges`` path (``scalingConfig.desiredSize``, ``tags["a"]``, ``rules[*].x``) as a prefix match."""
    body = re.escape(pattern).replace(r"\[\*\]", r"\[\d+\]").replace(r"\*", r"[^.\[]+")
    return re.compile(rf"^{body}(?:$|[.\[])")


def without_ignored(paths: list[str], ignore: list[str]) -> list[str]:
    if not ignore:
        return paths
    patterns = [_ignored_pattern(p) for p in ignore]
    return [p for p in paths if not any(pat.match(p) for pat in patterns)]


@dataclass
class PlanStep:
    op: str
    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    diff: list[str] = field(default_factory=list)
    """The changed input paths (after ``ignoreChanges``)."""
    replace_keys: list[str] = field(default_factory=list)
    """The changed paths that force replacement (``id`` for a tainted resource, as the engine says)."""
    old: Optional[StateResource] = None
    new: Optional[Resource] = None
    note: str = ""
    """Why the step is what it is, when its inputs do not say (``tainted``, ``deleted with ...``)."""

    def old_state(self) -> Optional[dict[str, Any]]:
        if self.old is None:
            return None
        old = self.old
        flags = {
            "retainOnDelete": old.retain_on_delete,
            "taint": old.taint,
            "pendingReplacement": old.pending_replacement,
            "delete": old.delete,
            "protect": old.protect,
            "external": old.external,
        }
        return {
            "urn": old.urn,
            "type": old.type,
            "parent": old.parent,
            "inputs": _shown_state(old.inputs),
            "outputs": _shown_state(old.outputs),
            "propertyDependencies": old.property_dependencies,
            **({"deletedWith": old.deleted_with} if old.deleted_with else {}),
            **{k: True for k, v in flags.items() if v},
        }

    def new_state(self) -> Optional[dict[str, Any]]:
        if self.new is None:
            return None
        return {
            "urn": self.new.urn,
            "type": self.new.type,
            "parent": self.new.parent,
            "inputs": shown(self.new.wire),
            "propertyDependencies": self.new.property_dependencies,
            **({"ignoreChanges": list(self.new.ignore_changes)} if self.new.ignore_changes else {}),
        }


def _shown_state(value: Any) -> Any:
    if value is UNREADABLE:
        return "[secret]"
    if isinstance(value, dict):
        if value.get(sdk.SIG_KEY) == sdk.RESOURCE_SIG:
            return value.get("urn")
        return {k: _shown_state(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown_state(v) for v in value]
    return value


@dataclass
class Plan:
    run: ProgramRun
    steps: list[PlanStep]
    errors: list[str] = field(default_factory=list)
    """What makes the real preview fail (a protected resource deleted or replaced): the plan is shown, then these."""

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for step in self.steps:
            counts[step.op] = counts.get(step.op, 0) + 1
        return {op: counts[op] for op in OPS if op in counts}

    def by_urn(self) -> dict[str, PlanStep]:
        return {s.urn: s for s in self.steps if s.op != "delete-replaced"}


def _unknown_paths(value: Any, path: str = "") -> list[str]:
    if value is UNKNOWN:
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _unknown_paths(v, child_path(path, k))]
    if isinstance(value, list):
        return [p for n, v in enumerate(value) for p in _unknown_paths(v, f"{path}[{n}]")]
    return []


def _compare(
    res: Resource, old: StateResource, ids: Ids, renamed: Mapping[str, str]
) -> tuple[list[str], list[str], dict[str, Any]]:
    """The changed paths of ``res`` against its state, as the provider's ``Diff`` would see them after its
    ``Check``; and the checked inputs. ``renamed``: old URN -> new, of the resources found by an alias."""
    old_inputs = providerdiff.old_view(res.type, normal(old.inputs, renamed), UNKNOWN)
    new_inputs = providerdiff.checked(res.type, old_inputs, normal(res.wire), UNKNOWN, res.version)
    old_inputs, new_inputs = providerdiff.without_defaults(old_inputs), providerdiff.without_defaults(new_inputs)
    old_view, new_view = forcenew.in_set_order(res.type, old_inputs), forcenew.in_set_order(res.type, new_inputs)
    outputs = normal(old.outputs, renamed)
    if isinstance(outputs, dict):  # a bridged provider diffs Optional+Computed attributes against the old outputs
        old_view = providerdiff.computed_view(
            res.type,
            old_view,
            forcenew.in_set_order(res.type, outputs),
            new_view,
            UNKNOWN,
            lambda a, b: not changed_paths(a, b, "", ids),
        )
    paths = changed_paths(old_view, new_view, "", ids)
    # the program's ignoreChanges only, as the engine diffs (step_generator: the goal's), not the ones the state kept
    paths = without_ignored(paths, list(res.ignore_changes))
    replace = replacing(res.type, paths, res.replace_on_changes)
    replace += [p for p in forcenew.removed_forcing(res.type, old_view, new_view) if p in paths and p not in replace]
    return paths, replace, new_inputs


PROTECTED_DELETE = (
    'resource "{urn}" cannot be deleted because it is protected: to delete it, remove `protect` from it in '
    "the program and run `pulumi up`, or run `pulumi state unprotect {urn}`"
)
PROTECTED_REPLACE = (
    'unable to replace resource "{urn}" ({why}) as it is marked for protection: remove `protect` from '
    "it in the program and run `pulumi up`"
)
"""What the engine says (``step.go`` ``deleteProtectedError``; ``step_generator.go`` ``continueStepsFromDiff``)."""


def _urn(name: str, type_: str, parent: str, project: str, stack: str) -> str:
    """A URN as the engine creates one (pulumi ``resource.NewURN``): the parent's qualified type before the type,
    except the root stack's."""
    qualified = parent.split("::")[2] if parent else ""
    if qualified and qualified != STACK_TYPE:
        type_ = f"{qualified}${type_}"
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


class _Aliases:
    """The engine's aliases (pulumi ``pkg/resource/deploy/step_generator.go``, ``generateAliases``): each of the
    resource's own, made a URN (``collapseAliasToUrn``: what it leaves out is the resource's own; a parent
    found by an alias stands for itself by its old URN), then, when its parent was found by an alias, the
    same resource under the parent's old URN (``inheritedChildAlias``: a name that starts with the parent's
    name starts with the parent's old name instead), alone and with each of its own aliases."""

    def __init__(self, run: ProgramRun) -> None:
        self.project, self.stack = run.project, run.stack
        self.found: dict[str, str] = {}
        """URN -> the old URN an alias found it by."""

    def renamed(self) -> dict[str, str]:
        """Old URN -> the URN its resource has now, for each resource found by an alias."""
        return {old: new for new, old in self.found.items()}

    def _collapse(self, res: Resource, alias: Mapping[str, Any]) -> str:
        if alias.get("urn"):
            return str(alias["urn"])
        parent = alias.get("parentUrn") or res.parent
        parent = self.found.get(parent, parent)
        if alias.get("noParent") or (parent and parent.split("::")[2] == STACK_TYPE):
            parent = ""
        return _urn(
            alias.get("name") or res.name,
            alias.get("type") or res.type,
            parent,
            alias.get("project") or self.project,
            alias.get("stack") or self.stack,
        )

    def _inherited(self, type_: str, name: str, parent: str, parent_alias: str) -> str:
        parent_name = urn_name(parent)
        if name.startswith(parent_name):
            name = urn_name(parent_alias) + name[len(parent_name) :]
        return _urn(name, type_, parent_alias, self.project, self.stack)

    def of(self, res: Resource) -> list[str]:
        found = [self._collapse(res, alias) for alias in res.aliases]
        parent_alias = self.found.get(res.parent)
        if parent_alias is not None:
            found.append(self._inherited(res.type, res.name, res.parent, parent_alias))
            for urn in list(found[: len(res.aliases)]):
                found.append(
                    self._inherited(urn.split("::")[2].rsplit("$", 1)[-1], urn_name(urn), res.parent, parent_alias)
                )
        return list(dict.fromkeys(found))


def make_plan(run: ProgramRun, state: StackState) -> Plan:
    old_by_urn = {r.urn: r for r in state.resources}
    ids = Ids(dict(old_by_urn))
    steps: list[PlanStep] = []
    errors: list[str] = []
    unknowns: dict[str, list[str]] = {}
    read_urns = {r.urn for r in run.reads}
    aliases = _Aliases(run)
    claimed: set[str] = set()  # old URNs a resource was found by
    for res in run.resources + run.reads:
        old = old_by_urn.get(res.urn)
        if old is None and res.urn not in read_urns:
            for urn in aliases.of(res):  # the URN first, then the aliases, as the engine looks them up
                if urn in old_by_urn and urn not in claimed:
                    old = old_by_urn[urn]
                    aliases.found[res.urn] = urn
                    ids.state[res.urn] = old  # references by its URN now name what the state holds
                    break
        if old is not None:
            claimed.add(old.urn)
        step = PlanStep("create", res.urn, res.type, res.name, res.parent, res.custom, old=old, new=res)
        if res.urn in read_urns:
            step.op = "read"
        elif old is not None and not res.custom:
            step.op = "same"
        elif (
            res.custom and res.import_id and (old is None or old.external or (old.import_id or old.id) != res.import_id)
        ):
            _import(step, res, old)
        elif old is not None and old.external:  # declared now: a new one takes the place of the one it read
            step.op, step.replace_keys = "replace", ["id"]
            step.note = "external in the state: the program now declares it, so one is created in its place"
        elif old is not None:
            step.diff, step.replace_keys, new_inputs = _compare(res, old, ids, aliases.renamed())
            unknowns[res.urn] = _unknown_paths(new_inputs)
            step.op = "replace" if step.replace_keys else ("update" if step.diff else "same")
            forced, key = _forced_replacement(res, old, ids)
            if forced:
                step.op, step.note = "replace", forced
                step.replace_keys = step.replace_keys or [key]
            elif old.init_errors:
                _init_errors(step, res)
        ids.ops[res.urn] = step.op
        steps.append(step)
    _propagate(steps, unknowns, ids)
    used, bumped = _bumped_default_providers(run, state)
    for urn in used:
        provider_type, name = urn.split("::")[2], urn_name(urn)
        if urn not in old_by_urn and provider_type.removeprefix(DEFAULT_PROVIDER[0]) in bumped:
            steps.append(
                PlanStep(
                    "create",
                    urn,
                    provider_type,
                    name,
                    "",
                    True,
                    new=Resource(urn, provider_type, name, "", True, {}),
                    note="the engine's default provider",
                )
            )
    seen = {s.urn for s in steps} | claimed
    for old in state.resources:
        if old.urn in seen or old.view_of:
            continue
        op = "discard" if old.external or old.pending_replacement else "delete"
        default = old.type.startswith(DEFAULT_PROVIDER[0]) and old.name.startswith(DEFAULT_PROVIDER[1])
        if default and (old.type.removeprefix(DEFAULT_PROVIDER[0]) not in bumped or old.urn in used):
            # the engine registers default providers, not the program: kept while resources (or invokes, which the
            # plan does not see) use them; the old one goes when every resource moved to a new version
            op = "same"
        step = PlanStep(op, old.urn, old.type, old.name, old.parent, old.custom, old=old)
        ids.ops[old.urn] = op
        steps.append(step)
    for step in steps:
        if step.op == "delete" and step.old is not None:
            step.note = _delete_note(step.old, ids)
    for old in state.resources:  # a view goes with its owner (its owner's provider deletes it)
        if old.view_of and old.urn not in seen:
            owner = ids.ops.get(aliases.renamed().get(old.view_of, old.view_of), "same")
            op = "delete" if owner in ("delete", "replace") else "same"
            steps.append(
                PlanStep(
                    op,
                    old.urn,
                    old.type,
                    old.name,
                    old.parent,
                    old.custom,
                    old=old,
                    note=f"a view of {old.view_of}" if op == "delete" else "",
                )
            )
    for old in state.pending_deletes:
        steps.append(
            PlanStep(
                "delete-replaced",
                old.urn,
                old.type,
                old.name,
                old.parent,
                old.custom,
                old=old,
                note="the old copy of a replaced resource",
            )
        )
    errors += _protection_errors(steps)
    return Plan(run, steps, errors)


def _forced_replacement(res: Resource, old: StateResource, ids: Ids) -> tuple[str, str]:
    """Why the engine replaces ``res`` whatever its inputs say, and the key it blames; or ('', '')."""
    if old.taint:
        return "tainted in the state", "id"
    if old.pending_replacement:
        return "pending replacement (deleted by an earlier delete-before-replace)", "id"
    for urn in res.replace_with:
        if ids.ops.get(urn) == "replace":
            return f"replaced with {urn}", "replaceWith"
    if res.deleted_with and ids.ops.get(res.deleted_with) == "replace":  # its delete would delete this one
        return f"deleted with {res.deleted_with}, which is replaced", "deletedWith"
    return "", ""


INIT_ERROR_KEY = "#initerror"
"""The key the engine blames initialization errors on (``step_generator.go`` ``initErrorSpecialKey``)."""


def _init_errors(step: PlanStep, res: Resource) -> None:
    """A resource whose state holds ``initErrors`` is updated even when nothing changed, to finish initializing
    (``step_generator.go``: ``hasInitErrors``); replaced when its ``replaceOnChanges`` covers them (``*``)."""
    if step.op == "replace":
        return
    if any(p in ("*", INIT_ERROR_KEY) for p in res.replace_on_changes):
        step.op, step.replace_keys = "replace", [INIT_ERROR_KEY]
    elif step.op == "same":
        step.op = "update"
    step.note = "initialization errors in the state: the engine updates it to finish initializing"


def _import(step: PlanStep, res: Resource, old: Optional[StateResource]) -> None:
    """A resource the program imports (``import_``), as ``step_generator.go`` (``isImport``) plans it: not in the
    state, an import; in the state under another id, or read there as external, an import-replacement (the
    engine imports the new one, then deletes the one the state holds unless it was only read)."""
    if old is None:
        step.op, step.note = "import", f"imported: id {res.import_id}"
        return
    step.op, step.replace_keys = "replace", ["id"]
    gone = "the one it read is left alone" if old.external else f"the state's id {old.import_id or old.id} is deleted"
    step.note = f"import-replacement: id {res.import_id} is imported and {gone}"


_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?")


def default_provider_name(version: str) -> str:
    """The name the engine gives the default provider of a package version (``providers.ProviderRequest.DefaultName``:
    ``default_<major>_<minor>_<patch>``, then each pre-release and build part), '' when ``version`` is no version."""
    found = _SEMVER.fullmatch(version)
    if found is None:
        return ""
    major, minor, patch, pre, build = found.groups()
    parts = [major, minor, patch] + (pre.split(".") if pre else []) + (build.split(".") if build else [])
    return "default_" + "_".join(parts)


def _default_providers(run: ProgramRun) -> tuple[list[str], set[str]]:
    """The engine's default providers the run's resources use (a custom resource's, or a remote component's
    for its construction: a registration's provider reference to one, or, naming none, the default of the
    version it asks for); and the packages every resource of which says which (a read, or a registration
    asking for no version, leaves it to the engine: not known offline)."""
    used: dict[str, None] = {}
    unsure = {r.type.split(":", 1)[0] for r in run.reads}
    packages: set[str] = set()
    for res in run.resources:
        package = res.type.split(":", 1)[0]
        if not (res.custom or res.remote) or res.type.startswith(DEFAULT_PROVIDER[0]):
            continue
        packages.add(package)
        ref = res.provider.rsplit("::", 1)[0]
        name = default_provider_name(res.version)
        if res.provider:
            if urn_name(ref).startswith(DEFAULT_PROVIDER[1]):
                used[ref] = None
        elif not name:
            unsure.add(package)
        else:
            used[f"urn:pulumi:{run.stack}::{run.project}::{DEFAULT_PROVIDER[0]}{package}::{name}"] = None
    judged = packages - unsure
    return [u for u in used if u.split("::")[2].removeprefix(DEFAULT_PROVIDER[0]) in judged], judged


def _bumped_default_providers(run: ProgramRun, state: StackState) -> tuple[list[str], set[str]]:
    """The default providers the run uses, and the packages whose default provider moves to another version: every
    resource of the package says its version, the state holds a default provider of it that none uses any more,
    and none it uses. The engine creates the new one and deletes the old (a state that holds no default provider,
    as one the offline engine exported, gets none)."""
    used, judged = _default_providers(run)
    held = [
        r.urn
        for r in state.resources
        if r.type.startswith(DEFAULT_PROVIDER[0]) and r.name.startswith(DEFAULT_PROVIDER[1])
    ]

    def package(urn: str) -> str:
        return urn.split("::")[2].removeprefix(DEFAULT_PROVIDER[0])

    old = {package(u) for u in held if u not in used}
    new = {package(u) for u in used if u not in held}
    return used, judged & old & new


def _delete_note(old: StateResource, ids: Ids) -> str:
    if old.retain_on_delete:
        return "retained: the engine skips the provider's delete (retainOnDelete)"
    if old.deleted_with and ids.ops.get(old.deleted_with) in ("delete", "replace"):
        # step.go isDeletedWith: skipped only when the resource it names is deleted too; else its provider deletes it
        return f"deleted with {old.deleted_with}"
    return ""


def _protection_errors(steps: list[PlanStep]) -> list[str]:
    errors = []
    for step in steps:
        if step.old is None or not step.old.protect:
            continue
        if step.op == "delete":
            errors.append(PROTECTED_DELETE.format(urn=step.urn))
        elif step.op == "replace" and step.new is not None and step.new.protect:
            why = step.note or "changed: " + ", ".join(step.replace_keys)
            errors.append(PROTECTED_REPLACE.format(urn=step.urn, why=why))
    return errors


def _template_versioned(step: PlanStep) -> bool:
    return step.op == "update" and any(p.split(".")[0].split("[")[0] not in TEMPLATE_NAME_ONLY for p in step.diff)


def _propagate(steps: list[PlanStep], unknowns: dict[str, list[str]], ids: Ids) -> None:
    """What a replaced resource's new id, or a launch template's new version, changes downstream
    (in the engine's order: a resource registers after what it depends on)."""
    by_urn = {s.urn: s for s in steps}
    for step in steps:
        if step.new is None or step.op not in ("update", "same", "replace"):
            continue
        extra: list[str] = []
        for key, sources in step.new.property_dependencies.items():
            for source in sources:
                src = by_urn.get(source)
                if src is None:
                    continue
                if src.op == "replace":
                    extra += [p for p in unknowns.get(step.urn, []) if p == key or p.startswith((key + ".", key + "["))]
                elif src.type == contract.LAUNCH_TEMPLATE and _template_versioned(src) and key == "launchTemplate":
                    extra += [p for p in unknowns.get(step.urn, []) if p == "launchTemplate.version"]
        extra = without_ignored([p for p in dict.fromkeys(extra) if p not in step.diff], step.new.ignore_changes)
        forced, key = _forced_replacement(step.new, step.old, ids) if step.old is not None else ("", "")
        if not extra and not (forced and step.op != "replace"):
            continue
        step.diff = sorted(step.diff + extra)
        step.replace_keys = replacing(step.type, step.diff, step.new.replace_on_changes)
        step.op = "replace" if step.replace_keys or forced else "update"
        if forced:
            step.note, step.replace_keys = forced, step.replace_keys or [key]
        elif step.op == "update" and step.old is not None and step.old.init_errors:
            _init_errors(step, step.new)
        ids.ops[step.urn] = step.op


# ---- printing -------------------------------------------------------------------------------------------

DIFF_SHOWN = 6
"""At most this many changed paths are named on a resource's line; the rest are counted."""


def _diff_line(step: PlanStep) -> str:
    names = [f"{p} (replaces)" if p in step.replace_keys else p for p in step.diff]
    text = ", ".join(names[:DIFF_SHOWN]) + (f" and {len(names) - DIFF_SHOWN} more" if len(names) > DIFF_SHOWN else "")
    return f"[diff: {text}]"


def render_plan(plan: Plan, violations: list[dict[str, Any]] | None = None, beside_outputs: Sequence[str] = ()) -> str:
    """The plan as ``pulumi preview --diff`` prints one: the tree with each resource's operation and,
    below a changed resource, its changed properties (those that force replacement marked). ``beside_outputs``:
    lines printed before the resources' summary, where ``render`` prints them (the lanes' worst cases per hour)."""
    run = plan.run
    by_urn = plan.by_urn()
    registered = {r.urn for r in run.resources + run.reads}
    gone = [s for s in plan.steps if s.urn not in registered and s.op != "delete-replaced"]
    stand_ins = [
        Resource(
            urn=s.urn,
            type=s.type,
            name=s.name,
            parent=s.parent if s.parent in by_urn else "",
            custom=s.custom,
            inputs={},
        )
        for s in gone
    ]
    view = ProgramRun(run.project, run.stack, run.resources + stand_ins, run.outputs, reads=run.reads)
    rows = []
    for op, text, name, urn in tree_rows(view):
        if op:  # not the unknown-inputs row: the plan names changed properties instead
            rows.append((SYMBOL[by_urn[urn].op], text, name, by_urn[urn]))
    width = max([len(t) for _, t, _, _ in rows] + [4]) + 2
    out = [
        f"Previewing update ({run.stack}), offline, against {len([s for s in plan.steps if s.old])} resources of the "
        f"stack's state:",
        "",
        f"     {'Type':<{width}}Name",
    ]
    for symbol, text, name, step in rows:
        out.append(f" {symbol:<3} {text:<{width}}{name}")
        branch = text[: len(text) - len(text.lstrip("│├└─ "))]
        below = branch.replace("├─ ", "│  ").replace("└─ ", "   ")
        if step.diff and step.op in ("update", "replace"):
            out.append(f"     {below}   {_diff_line(step)}")
        if step.note:
            out.append(f"     {below}   [{shown_text(step.note)}]")
    replaced = [s for s in plan.steps if s.op == "delete-replaced"]
    for step in replaced:
        out.append(f" {SYMBOL[step.op]:<3} {step.type:<{width}}{step.name}")
        out.append(f"         [{step.note}]")
    if violations:
        out += ["", "Policies:"]
        for v in violations:
            out.append(f"    [{v['level']}]  {v['pack']}: {v['policy']}  ({shown_text(urn_name(v['urn'])) or 'stack'})")
            out += [f"        {line}" for line in v["message"].splitlines()]
    if plan.errors:
        out += ["", "Errors (the real preview fails on these):"] + [f"    {shown_text(e)}" for e in plan.errors]
    out += beside_outputs
    summary = plan.summary()
    out += ["", "Resources:"]
    for op, word in (
        ("create", "to create"),
        ("import", "to import"),
        ("update", "to update"),
        ("replace", "to replace"),
        ("delete", "to delete"),
        ("delete-replaced", "to delete (old copies of replaced resources)"),
        ("read", "to read"),
        ("discard", "to discard"),
    ):
        if summary.get(op):
            out.append(f"    {SYMBOL[op]:<2}{summary[op]} {word}")
    out.append(f"    {summary.get('same', 0)} unchanged")
    return "\n".join(out) + "\n"


def plan_json(plan: Plan) -> list[dict[str, Any]]:
    """Each resource as ``to_json`` has it, with its ``op`` and ``diff``; deleted ones from the state."""
    out = []
    for step in plan.steps:
        if step.new is not None:
            doc = step.new.to_json()
        else:
            old = step.old
            assert old is not None
            doc = {
                "urn": old.urn,
                "type": old.type,
                "name": old.name,
                "parent": old.parent,
                "custom": old.custom,
                "inputs": _shown_state(old.inputs),
            }
        doc["op"] = step.op
        doc["diff"] = list(step.diff)
        if step.replace_keys:
            doc["replaceReasons"] = list(step.replace_keys)
        if step.note:
            doc["note"] = step.note
        out.append(doc)
    return out
