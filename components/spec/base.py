"""What every spec shares: the base model, its error, and how errors name their fields.

A spec (``PoolSpec``, ``NodeGroupSpec``, ...) is a frozen pydantic model that checks every rule of
its value once, when it is built. A broken rule raises ``SpecError``, one line per problem, each
``<Spec>.<field>: <problem>``, all problems together. ``FieldProblem`` is how a rule that reads
several fields says which one is wrong; the stack-config layer (``config/``) reads the same errors
and names its own keys instead.
"""

import inspect
import json
import re
import unicodedata
from contextvars import ContextVar
from typing import Annotated, Any, Callable, Mapping, Optional, Sequence, get_args

import pulumi
from pulumi.output import Unknown
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ..errors import ConfigError
from ..inputs import closest
from .. import syntax


class FieldProblem(ValueError):
    """A rule broken by one field; an error's key path ends with that field (and ``index``, the item of a list
    field that broke it). ``keyed``: the path names the field's key even in a list item whose problems the
    seeds name at the item (``additional_node_groups_config[0].type``, for a rule the seeds never had)."""

    def __init__(self, field: str, message: str, index: Optional[int] = None, keyed: bool = False) -> None:
        super().__init__(message)
        self.field = field
        self.index = index
        self.keyed = keyed

    @property
    def at(self) -> str:
        """The field, and the list item in it: ``instance_types[1]``."""
        return self.field + (f"[{self.index}]" if self.index is not None else "")


class FieldProblems(ValueError):
    """Rules broken by several fields of one spec, each a ``FieldProblem``: a spec reports every problem at once."""

    def __init__(self, problems: Sequence[FieldProblem]) -> None:
        super().__init__("; ".join(map(str, problems)))
        self.problems = list(problems)


class Problems:
    """What a spec's rules find, field by field: a rule whose field (or a field it reads) already broke one
    is not judged (``ok``), every other one is; ``raise_found`` raises them together."""

    def __init__(self) -> None:
        self.found: list[FieldProblem] = []

    def add(self, field: str, message: str, keyed: bool = False) -> None:
        self.found.append(FieldProblem(field, message, keyed=keyed))

    def ok(self, *fields: str) -> bool:
        """Whether none of ``fields`` broke a rule yet."""
        return not any(p.field in fields for p in self.found)

    def run(self, rules: "Callable[[], None]", after: Sequence[str] = ()) -> None:
        """Judge ``rules`` (which raise a ``FieldProblem`` at their first), unless one of ``after`` broke a rule."""
        if not self.ok(*after):
            return
        try:
            rules()
        except FieldProblem as problem:
            self.found.append(problem)

    def raise_found(self) -> None:
        if len(self.found) == 1:
            raise self.found[0]
        if self.found:
            raise FieldProblems(self.found)


def key_path(loc: Sequence[Any]) -> str:
    """``("pools", 0, "disk")`` -> ``pools[0].disk`` (pydantic's own validator names are dropped), shown
    as ``shown`` shows text (a key with an invisible character in it is not printed as a valid one)."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not str(part).startswith("function-") and "[" not in str(part):
            path += f".{part}" if path else str(part)
    return shown(path)


def _escaped(ch: str) -> str:
    if ch in "\r\n\t":
        return {"\r": "\\r", "\n": "\\n", "\t": "\\t"}[ch]
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}"


def shown(text: str) -> str:
    """Text as a message shows it: on one line, with every character a reader could not tell apart
    from another (a line break, a control or zero-width character, anything outside printable ASCII,
    such as a Cyrillic ``а`` that prints like a Latin ``a``) written as an escape (``\\n``,
    ``\\u200b``, ``\\u0430``). Printable ASCII is shown as it is."""
    return "".join(ch if " " <= ch <= "~" else _escaped(ch) for ch in text)


def unusual_characters(text: str) -> str:
    """Where ``text`` has characters ``shown`` escapes: ``'\\u200b' (ZERO WIDTH SPACE) at position 3``,
    each one, '' when there are none (line breaks are left out: their escape is self-explanatory)."""
    found = []
    for n, ch in enumerate(text):
        if not " " <= ch <= "~" and ch not in "\r\n\t":
            name = unicodedata.name(ch, "a control character" if unicodedata.category(ch) == "Cc" else "unnamed")
            found.append(f"'{_escaped(ch)}' ({name}) at position {n}")
    return ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")


def _strings(value: Any, most: int = 1000) -> list[str]:
    """The strings in ``value`` (keys and values, at any depth), the first ``most`` of them; walked with a
    stack of its own and each container once, so a value nested past the recursion limit, or holding
    itself, is read too."""
    found: list[str] = []
    pending, seen = [value], set()
    while pending and len(found) < most:
        item = pending.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, (Mapping, list, tuple)) and id(item) not in seen:
            seen.add(id(item))
            parts = [p for k, v in item.items() for p in (k, v)] if isinstance(item, Mapping) else list(item)
            pending += reversed(parts)
    return found


SHOWN_MAX = 200
"""The most characters of a value an error message shows."""


def rendered(value: Any) -> str:
    """A value as an error message shows it: its JSON, cut at ``SHOWN_MAX`` characters; a value nested too
    deep to write, holding itself, or a number too long to write is said to be so."""
    try:
        text = json.dumps(value, default=str)
    except RecursionError:
        return f"a {type(value).__name__} nested too deep to show"
    except ValueError as exc:
        return f"a {type(value).__name__} that holds itself" if "ircular" in str(exc) else "a number too long to show"
    return _cut(text)


def pointed(message: str, value: Any) -> str:
    """``message`` shown (``shown``), followed by where ``value`` (the value it is about, or any
    structure of them) has characters a reader cannot see or tell apart, so an id with a zero-width
    space or a Cyrillic letter does not read like a valid one."""
    notes = [
        f"'{_cut(shown(s))}' has {where[:SHOWN_MAX]}"
        for s in dict.fromkeys(_strings(value))
        if (where := unusual_characters(s))
    ]
    text = _LONG_QUOTED.sub(lambda m: f"'{_cut(m.group(1))}'", shown(message))
    return f"{text} [{'; '.join(notes[:3])}; use plain ASCII]" if notes else text


_LONG_QUOTED = re.compile(r"'([^']{%d,})'" % (SHOWN_MAX + 1))
"""A value quoted in a message and longer than ``SHOWN_MAX``: shown cut (a 100,000-character name)."""


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 3] + "..."


_CLASS_NAMES = re.compile(r" or instance of \w+| of \w+Spec\b")


def error_message(error: Mapping[str, Any]) -> str:
    """One pydantic error in the seeds' words: the rule's own message, or what was expected and got.

    One problem is one line: a value with a line break in it (``name: |`` gives ``gpu\\n``) shows the
    break escaped, so the error names the value as written and cannot split into lines of its own;
    characters a reader cannot see or tell apart are escaped and pointed at (``pointed``). pydantic's
    own wording names no class of ours: "a valid dictionary or instance of GpuSpec" reads "a mapping"."""
    kind = error["type"]
    if kind == "extra_forbidden":
        return pointed("unknown field", error["loc"][-1] if error["loc"] else None)
    if kind == "missing":
        return "required"
    if kind == "value_error":
        text = str(error["msg"]).removeprefix("Value error, ")
    elif kind in ("model_type", "model_attributes_type", "dataclass_type", "is_instance_of"):
        text = f"expected a mapping of its fields (got {rendered(error.get('input'))})"
    else:
        text = f"{_CLASS_NAMES.sub('', str(error['msg'])).lower()} (got {rendered(error.get('input'))})"
    value = error.get("input")
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, FieldProblem) and isinstance(value, Mapping):
        value = value.get(cause.field)  # a rule over the whole spec: point into the field it names
    return pointed(text, value)


def error_loc(error: Mapping[str, Any]) -> tuple[Any, ...]:
    """Where an error is: its location, ending with the field a ``FieldProblem`` names."""
    loc = tuple(error["loc"])
    cause = (error.get("ctx") or {}).get("error")
    if not isinstance(cause, FieldProblem):
        return loc
    return loc + (cause.field,) + ((cause.index,) if cause.index is not None else ())


def _model_at(model: type[BaseModel], loc: Sequence[Any]) -> Optional[type[BaseModel]]:
    """The model that holds the last part of ``loc`` (descending through nested specs and lists of them)."""
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        nested = [
            t
            for t in (field.annotation, *get_args(field.annotation))
            if isinstance(t, type) and issubclass(t, BaseModel)
        ]
        if not nested:
            return None
        model = nested[0]
    return model


def did_you_mean(model: type[BaseModel], loc: Sequence[Any]) -> str:
    """For an unknown field: the field meant, by spelling or as the stack config's key for it
    (``NodeGroupSpec(type=...)``: ``type`` is the stack-config key of ``instance_type``)."""
    holder = _model_at(model, loc) if loc else None
    if holder is None or isinstance(loc[-1], int):
        return ""
    wrong = str(loc[-1])
    from ..config.keys import TABLES  # the stack config's keys (config imports the specs, so only here)

    by_key = {
        key: field
        for table in TABLES
        if table.spec is holder
        for field, key in table.keys.items()
        if field in holder.model_fields
    }
    if wrong in by_key:
        return f" (did you mean {by_key[wrong]}? '{wrong}' is its stack-config key)"
    close = closest(wrong, holder.model_fields)
    return f" (did you mean {close}?)" if close else ""


def _flat(errors: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """pydantic's errors, with a nested spec's own errors in place of the one its ``SpecError`` made
    (pydantic calls a spec's ``__init__`` for a mapping in a field of another: ``PoolSpec.taints[1]``)."""
    found: list[Mapping[str, Any]] = []
    for error in errors:
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, SpecError):
            found += [{**inner, "loc": (*error["loc"], *inner["loc"])} for inner in cause.errors]
        elif isinstance(cause, FieldProblems):  # a rule over the whole spec, for each field it found
            found += [
                {**error, "msg": f"Value error, {problem}", "ctx": {**error["ctx"], "error": problem}}
                for problem in cause.problems
            ]
        else:
            found.append(error)
    return found


class SpecError(ConfigError, ValueError):
    """A spec built with values its rules refuse: one ``<Spec>.<field>: <problem>`` line each."""

    def __init__(self, spec: str, exc: ValidationError, model: Optional[type[BaseModel]] = None) -> None:
        self.errors = _flat(exc.errors())
        """pydantic's errors, for callers that name the paths in their own terms (the stack config)."""
        lines = [
            (
                key_path(error_loc(e)),
                error_message(e) + (did_you_mean(model, e["loc"]) if model and e["type"] == "extra_forbidden" else ""),
            )
            for e in self.errors
        ]
        self.problems = lines
        """``(field path, problem)`` of each line (a component names the paths under its argument's name)."""
        super().__init__(
            "\n".join(f"{spec}.{path}: {message}" if path else f"{spec}: {message}" for path, message in lines)
        )


def cluster_name(name: str) -> str:
    """An EKS cluster name, as the EKS API takes it (a spec's field validator: the rule lives in the spec,
    not in the field's annotation, which the component provider's schema is inferred from)."""
    problem = syntax.eks_cluster_name_problem(name)
    if problem:
        raise ValueError(f"invalid cluster_name '{name}' ({problem})")
    return name


ClusterName = Annotated[str, AfterValidator(cluster_name)]
"""An EKS cluster name, for a model no component provider hosts (the stack config's ``RackParams``)."""


BOOL_TEXT = {"true": True, "True": True, "false": False, "False": False}
"""The text a boolean may be written as: what the Pulumi SDK's ``Config.get_bool`` takes, and no other."""


def strict_scalars(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    """Refuse what pydantic's lax mode would turn into another value without a word: ``true``/``false``
    for a number field (a YAML ``weight: true`` would become weight 1), and for a boolean field anything
    but a boolean or the SDK's boolean text (``1``, ``"yes"``, ``"on"`` would become true). Numbers and
    numeric strings pass."""
    field = model.model_fields.get(info.field_name or "")
    kinds = {field.annotation, *get_args(field.annotation)} if field is not None else set()
    if bool in kinds and not kinds & {int, float, str} and value is not None and not isinstance(value, bool):
        if isinstance(value, str) and value in BOOL_TEXT:
            return BOOL_TEXT[value]
        raise ValueError(f"expected true or false, got {shown(rendered(value))}")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 63:
        raise ValueError("a number too large (at most 2^63 - 1)")
    if isinstance(value, bool) and bool not in kinds and kinds & {int, float}:
        raise ValueError(f"expected a number, got {str(value).lower()}")
    return value


def json_value(text: str) -> Any:
    """JSON text as a structured value is written in stack config: a key given twice in one object, and a
    number too long for Python to read, are refused (``ValueError``) in words a user can act on; text that
    is no JSON raises ``json.JSONDecodeError``, nesting too deep to read ``RecursionError``."""
    try:
        return json.loads(text, object_pairs_hook=no_repeated_keys)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python's own limit, and its advice to raise it
            raise ValueError("invalid JSON: a number too long to read (more than 4300 digits)") from None
        raise


def no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members, refusing a key given twice (``json.loads`` would keep the last)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key '{key}' appears twice in a JSON object; keep one")
        out[key] = value
    return out


class Spec(BaseModel):
    # an enum field (``PoolSpec.os``) holds its value, the text the objects it renders are written with
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=True)
    _keys: dict[str, str] = PrivateAttr(default_factory=dict)
    """Field -> the stack-config key path that set it, when the spec came from a stack config."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise SpecError(type(self).__name__, exc, type(self)) from None

    def where(self, field: str) -> str:
        """How a problem of ``field`` found after the spec was built (a pinned AMI's facts, at preview) names
        it: the stack-config key that set it (``rack:additional_karpenter_nodepools_config[0].disk``), the
        property path of another language's program (``pool.disk``, ``named_at``), or ``<Spec>.<field>`` for a
        spec a Python program built."""
        return self._keys.get(field) or f"{type(self).__name__}.{field}"

    def named_at(self, path: str, name: Callable[[str], str]) -> None:
        """Name each field not named yet by its property path under ``path`` (``name`` spells a field as the
        program does), and so each field of the specs inside: ``spec.pools[2].disk``."""
        for field in type(self).model_fields:
            at = f"{path}.{name(field)}"
            self._keys.setdefault(field, at)
            value = getattr(self, field)
            items = value if isinstance(value, (list, tuple)) else [value]
            for n, item in enumerate(items):
                if isinstance(item, Spec):
                    item.named_at(f"{at}[{n}]" if isinstance(value, (list, tuple)) else at, name)

    @field_validator("*", mode="before")
    @classmethod
    def _numbers(cls, value: Any, info: ValidationInfo) -> Any:
        return strict_scalars(cls, plain_value(value), info)


PROPERTY_NAMES: ContextVar[Optional[Callable[[str], str]]] = ContextVar("PROPERTY_NAMES", default=None)
"""How the program that sent a spec as data spells its fields, while a component provider constructs a component
for another language's program (``camel_case``); None for a Python program. A spec built from data then names each
field by its path there (``Spec.named_at``)."""


PLAIN_ONLY = (
    "spec fields take plain values, checked when the spec is built (pass Outputs to the component "
    "arguments that take them)"
)
"""Why a spec refuses an Output, whether the Python SDK's or one another language's program sends."""


def plain_value(value: Any) -> Any:
    """Refuse what a spec field cannot hold as written: a set (it has no order, so what the spec renders
    would change from one run to the next) and a Pulumi ``Output`` or awaitable (a spec is checked when
    it is built, before any Output is known)."""
    if isinstance(value, (set, frozenset)):
        raise ValueError(
            "a set has no order, so the objects it renders would change from one run to the next (give a list)"
        )
    if isinstance(value, (pulumi.Output, Unknown)) or inspect.isawaitable(value):
        raise ValueError(f"a pulumi Output: {PLAIN_ONLY}")
    return value
