"""A run compared with the state of the stack it would update (a ``pulumi stack export``): the plan
``pulumi preview --diff`` would show, one step per resource: ``create``, ``update``, ``replace``,
``delete`` or ``same``, with the changed property paths.

How it compares, as the engine does: the run's inputs against the state's inputs, by URN.

- A value unknown in the run (an output of another resource) is not a change, unless the state has
  no value there; a secret's ciphertext in the state is unknown too, never a change.
- A changed path the resource ignores (``ignoreChanges``, e.g. a node group's
  ``scalingConfig.desiredSize``) is no change.
- Keys the state lists in a bridged provider's ``__defaults`` (values the provider filled in) are not
  compared when the run leaves them out.
- Replacement comes from ``forcenew`` (the providers' rules) and the resource's ``replaceOnChanges``.
- A replaced resource gets a new id: a resource whose input is unknown because it comes from that
  resource sees that input change (a node group on a replaced launch template is replaced). A launch
  template whose content changes gets a new version: a node group on it updates
  ``launchTemplate.version`` (EKS rolls its nodes).
- Components are not diffed (their children are): they are ``same``, ``create`` or ``delete``.
- Resources the program reads (``get``) are ``read``; a read one the program no longer reads is
  ``discard``, never a deletion. The engine's default providers (``pulumi:providers:aws::default_...``)
  are in the state but not in the run: ``same``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from . import forcenew, sdk
from .forcenew import replacing
from .preview import tree_rows
from .records import STACK_TYPE, ProgramRun, Resource, shown
from .stackexport import UNREADABLE, StackState, StateResource

OPS = ("create", "update", "replace", "delete", "same", "read", "discard")
SYMBOL = {"create": "+", "update": "~", "replace": "+-", "delete": "-", "same": "", "read": ">", "discard": "-"}
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
DEFAULT_PROVIDER = ("pulumi:providers:", "default")
"""A provider the engine registers for resources that name none (``default_6_50_0``)."""
TEMPLATE_NAME_ONLY = ("name", "namePrefix", "description", "tags", "updateDefaultVersion", "defaultVersion")
"""Launch template inputs whose change does not make a new template version (the rest do)."""


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
_MISSING = object()
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def child_path(path: str, key: str) -> str:
    """Pulumi's property-path syntax: ``a.b``, or ``a["convox.io/label"]`` for a key that is not a name."""
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def normal(value: Any, renamed: Mapping[str, str] = {}) -> Any:
    """Run (wire) and state values in one form: unknowns and unreadable secrets ``UNKNOWN``, secrets
    unwrapped, resource references as their URN (a state's, under the URN its resource has now: ``renamed``,
    old URN -> new, for a resource found by an alias), whole floats as ints."""
    if value is UNREADABLE or value == sdk.UNKNOWN:
        return UNKNOWN
    if isinstance(value, dict):
        sig = value.get(sdk.SIG_KEY)
        if sig == sdk.SECRET_SIG:
            return normal(value.get("value"), renamed)
        if sig == sdk.RESOURCE_SIG:
            urn = value.get("urn")
            return ("resource", renamed.get(urn, urn) if isinstance(urn, str) else urn)
        return {k: normal(v, renamed) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v, renamed) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def changed_paths(old: Any, new: Any, path: str = "") -> list[str]:
    """The paths where ``new`` differs from ``old`` (both ``normal``); unknowns change only what was absent."""
    if new is UNKNOWN:
        return [path] if old is _MISSING else []
    if old is UNKNOWN:
        return [path] if new is _MISSING else []
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new)):
            out += changed_paths(old.get(key, _MISSING), new.get(key, _MISSING), child_path(path, key))
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for n in range(max(len(old), len(new))):
            out += changed_paths(old[n] if n < len(old) else _MISSING, new[n] if n < len(new) else _MISSING, f"{path}[{n}]")
        return out
    if old is _MISSING and new is _MISSING:
        return []
    if type(old) is not type(new) and not (isinstance(old, (int, float)) and isinstance(new, (int, float))
                                           and not isinstance(old, bool) and not isinstance(new, bool)):
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
    """The changed paths that force replacement."""
    old: Optional[StateResource] = None
    new: Optional[Resource] = None

    def old_state(self) -> Optional[dict[str, Any]]:
        if self.old is None:
            return None
        return {"urn": self.old.urn, "type": self.old.type, "parent": self.old.parent,
                "inputs": _shown_state(self.old.inputs), "outputs": _shown_state(self.old.outputs),
                "propertyDependencies": self.old.property_dependencies,
                **({"retainOnDelete": True} if self.old.retain_on_delete else {})}

    def new_state(self) -> Optional[dict[str, Any]]:
        if self.new is None:
            return None
        return {"urn": self.new.urn, "type": self.new.type, "parent": self.new.parent, "inputs": shown(self.new.wire),
                "propertyDependencies": self.new.property_dependencies}


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

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for step in self.steps:
            counts[step.op] = counts.get(step.op, 0) + 1
        return {op: counts[op] for op in OPS if op in counts}

    def by_urn(self) -> dict[str, PlanStep]:
        return {s.urn: s for s in self.steps}


def _unknown_paths(value: Any, path: str = "") -> list[str]:
    if value is UNKNOWN:
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _unknown_paths(v, child_path(path, k))]
    if isinstance(value, list):
        return [p for n, v in enumerate(value) for p in _unknown_paths(v, f"{path}[{n}]")]
    return []


def _compare(res: Resource, old: StateResource, renamed: Mapping[str, str]) -> tuple[list[str], dict[str, Any]]:
    new_inputs = normal(res.wire)
    old_inputs = normal(old.inputs, renamed)
    defaults = old_inputs.pop("__defaults", None) or []
    new_inputs.pop("__defaults", None)
    for key in defaults if isinstance(defaults, list) else []:
        if key not in new_inputs:
            old_inputs.pop(key, None)
    paths = changed_paths(forcenew.in_set_order(res.type, old_inputs), forcenew.in_set_order(res.type, new_inputs))
    # the program's ignoreChanges only, as the engine diffs (step_generator: the goal's), not the ones the state kept
    return without_ignored(paths, list(res.ignore_changes)), new_inputs


def _urn(name: str, type_: str, parent: str, project: str, stack: str) -> str:
    """A URN as the engine creates one (pulumi ``resource.NewURN``): the parent's qualified type before the type,
    except the root stack's."""
    qualified = parent.split("::")[2] if parent else ""
    if qualified and qualified != STACK_TYPE:
        type_ = f"{qualified}${type_}"
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


def _urn_name(urn: str) -> str:
    return urn.split("::", 3)[3]


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

    def _collapse(self, res: Resource, alias: Mapping[str, Any]) -> str:
        if alias.get("urn"):
            return str(alias["urn"])
        parent = alias.get("parentUrn") or res.parent
        parent = self.found.get(parent, parent)
        if alias.get("noParent") or (parent and parent.split("::")[2] == STACK_TYPE):
            parent = ""
        return _urn(alias.get("name") or res.name, alias.get("type") or res.type, parent,
                    alias.get("project") or self.project, alias.get("stack") or self.stack)

    def _inherited(self, type_: str, name: str, parent: str, parent_alias: str) -> str:
        parent_name = _urn_name(parent)
        if name.startswith(parent_name):
            name = _urn_name(parent_alias) + name[len(parent_name):]
        return _urn(name, type_, parent_alias, self.project, self.stack)

    def of(self, res: Resource) -> list[str]:
        found = [self._collapse(res, alias) for alias in res.aliases]
        parent_alias = self.found.get(res.parent)
        if parent_alias is not None:
            found.append(self._inherited(res.type, res.name, res.parent, parent_alias))
            for urn in list(found[:len(res.aliases)]):
                found.append(self._inherited(urn.split("::")[2].rsplit("$", 1)[-1], _urn_name(urn), res.parent, parent_alias))
        return list(dict.fromkeys(found))


def make_plan(run: ProgramRun, state: StackState) -> Plan:
    old_by_urn = {r.urn: r for r in state.resources}
    steps: list[PlanStep] = []
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
                    break
        if old is not None:
            claimed.add(old.urn)
        step = PlanStep("create", res.urn, res.type, res.name, res.parent, res.custom, old=old, new=res)
        if res.urn in read_urns:
            step.op = "read"
        elif old is not None and not res.custom:
            step.op = "same"
        elif old is not None:
            step.diff, new_inputs = _compare(res, old, {v: k for k, v in aliases.found.items()})
            unknowns[res.urn] = _unknown_paths(new_inputs)
            step.replace_keys = replacing(res.type, step.diff, res.replace_on_changes)
            step.op = "replace" if step.replace_keys else ("update" if step.diff else "same")
        steps.append(step)
    _propagate(steps, unknowns)
    seen = {s.urn for s in steps} | claimed
    for old in state.resources:
        if old.urn not in seen:
            op = "discard" if old.external else "delete"
            if old.type.startswith(DEFAULT_PROVIDER[0]) and old.name.startswith(DEFAULT_PROVIDER[1]):
                op = "same"  # the engine registers default providers, not the program: kept while resources use them
            steps.append(PlanStep(op, old.urn, old.type, old.name, old.parent, old.custom, old=old))
    return Plan(run, steps)


def _template_versioned(step: PlanStep) -> bool:
    return step.op == "update" and any(p.split(".")[0].split("[")[0] not in TEMPLATE_NAME_ONLY for p in step.diff)


def _propagate(steps: list[PlanStep], unknowns: dict[str, list[str]]) -> None:
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
                elif src.type == LAUNCH_TEMPLATE and _template_versioned(src) and key == "launchTemplate":
                    extra += [p for p in unknowns.get(step.urn, []) if p == "launchTemplate.version"]
        extra = without_ignored([p for p in dict.fromkeys(extra) if p not in step.diff], step.new.ignore_changes)
        if not extra:
            continue
        step.diff = sorted(step.diff + extra)
        step.replace_keys = replacing(step.type, step.diff, step.new.replace_on_changes)
        step.op = "replace" if step.replace_keys else "update"


# ---- printing -------------------------------------------------------------------------------------------

DIFF_SHOWN = 6
"""At most this many changed paths are named on a resource's line; the rest are counted."""


def _diff_line(step: PlanStep) -> str:
    names = [f"{p} (replaces)" if p in step.replace_keys else p for p in step.diff]
    text = ", ".join(names[:DIFF_SHOWN]) + (f" and {len(names) - DIFF_SHOWN} more" if len(names) > DIFF_SHOWN else "")
    return f"[diff: {text}]"


def render_plan(plan: Plan, violations: list[dict[str, Any]] | None = None) -> str:
    """The plan as ``pulumi preview --diff`` prints one: the tree with each resource's operation and,
    below a changed resource, its changed properties (those that force replacement marked)."""
    run = plan.run
    by_urn = plan.by_urn()
    gone = [s for s in plan.steps if s.new is None]
    stand_ins = [Resource(urn=s.urn, type=s.type, name=s.name, parent=s.parent if s.parent in by_urn else "",
                          custom=s.custom, inputs={}) for s in gone]
    view = ProgramRun(run.project, run.stack, run.resources + stand_ins, run.outputs, reads=run.reads)
    rows = []
    for op, text, name, urn in tree_rows(view):
        if op:  # not the unknown-inputs row: the plan names changed properties instead
            rows.append((SYMBOL[by_urn[urn].op], text, name, by_urn[urn]))
    width = max([len(t) for _, t, _, _ in rows] + [4]) + 2
    out = [f"Previewing update ({run.stack}), offline, against {len([s for s in plan.steps if s.old])} resources of the stack's state:",
           "", f"     {'Type':<{width}}Name"]
    for symbol, text, name, step in rows:
        out.append(f" {symbol:<3} {text:<{width}}{name}")
        if step.diff and step.op in ("update", "replace"):
            branch = text[:len(text) - len(text.lstrip("│├└─ "))]
            below = branch.replace("├─ ", "│  ").replace("└─ ", "   ")
            out.append(f"     {below}   {_diff_line(step)}")
    if violations:
        out += ["", "Policies:"]
        for v in violations:
            out.append(f"    [{v['level']}]  {v['pack']}: {v['policy']}  ({v['urn'].rsplit('::', 1)[-1] or 'stack'})")
            out += [f"        {line}" for line in v["message"].splitlines()]
    summary = plan.summary()
    out += ["", "Resources:"]
    for op, word in (("create", "to create"), ("update", "to update"), ("replace", "to replace"),
                     ("delete", "to delete"), ("read", "to read"), ("discard", "to discard")):
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
            doc = {"urn": old.urn, "type": old.type, "name": old.name, "parent": old.parent, "custom": old.custom,
                   "inputs": _shown_state(old.inputs)}
        doc["op"] = step.op
        doc["diff"] = list(step.diff)
        if step.replace_keys:
            doc["replaceReasons"] = list(step.replace_keys)
        out.append(doc)
    return out
