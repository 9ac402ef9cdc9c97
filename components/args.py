"""Every component's ``args``: a ``TypedDict`` checked once, against its own annotations.

A component calls ``checked(self, name, args, XArgs)`` first thing: a missing required argument, an
unknown one, or a value of the wrong type raises ``ArgumentError`` naming the component, the
argument and what it expected, never a ``KeyError`` or ``TypeError`` from deep inside. Values a
``pulumi.Input`` allows (an ``Output`` or an awaitable) pass as they are: they are checked when known.
"""

from __future__ import annotations

import ast
import collections.abc
import enum
import inspect
import sys
import types
import typing
from functools import lru_cache, partial
from typing import Any, Callable, Literal, Mapping, NotRequired, Optional, Required, TypeVar, Union, cast

import pulumi

from . import syntax
from .errors import ArgumentError, ConfigError, PropertyProblems
from .inputs import closest

_UNIONS = (Union, types.UnionType)
_SEQUENCES = (list, tuple, collections.abc.Sequence)
_MAPPINGS = (dict, collections.abc.Mapping)

ArgsT = TypeVar("ArgsT", bound=Mapping[str, Any])
"""A component's args type (a ``TypedDict``): what ``checked`` returns."""


@lru_cache(maxsize=None)
def _hints(args_type: type) -> dict[str, Any]:
    module = sys.modules[args_type.__module__].__dict__
    # ``pulumi.Input[X]`` holds the forward reference "Output[T]": resolve it in the SDK's own terms
    sdk_names = {"Output": pulumi.Output, "T": typing.TypeVar("T")}
    return typing.get_type_hints(args_type, globalns=module, localns=sdk_names, include_extras=True)


@lru_cache(maxsize=None)
def required_keys(args_type: type) -> tuple[str, ...]:
    """The keys ``args_type`` requires: ``Required[...]``, or not ``NotRequired[...]`` in a total
    TypedDict. (Read from the resolved annotations: with postponed annotations, Python 3.11's
    ``__required_keys__`` cannot see ``Required`` inside a string.)"""
    total = getattr(args_type, "__total__", True)
    required = []
    for key, tp in _hints(args_type).items():
        origin = typing.get_origin(tp)
        if origin is Required or (total and origin is not NotRequired):
            required.append(key)
    return tuple(required)


def _strip(tp: Any) -> Any:
    while typing.get_origin(tp) in (Required, NotRequired, typing.Annotated):
        tp = typing.get_args(tp)[0]
    return tp


def accepts(tp: Any, value: Any) -> bool:
    """Whether ``value`` fits the annotation ``tp`` (shallowly for generics it cannot see into)."""
    tp = _strip(tp)
    origin = typing.get_origin(tp)
    if tp is Any or isinstance(tp, typing.TypeVar):
        return True
    if tp is None or tp is type(None):
        return value is None
    if origin in _UNIONS:
        return any(accepts(arg, value) for arg in typing.get_args(tp))
    if origin is Literal:
        return any(value == arg and type(value) is type(arg) for arg in typing.get_args(tp))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):  # a member, or its value (how another language sends it)
        return isinstance(value, tp) or any(value == m.value and type(value) is type(m.value) for m in tp)
    if origin is pulumi.Output or tp is pulumi.Output:
        return isinstance(value, pulumi.Output)
    if origin is collections.abc.Awaitable:
        return inspect.isawaitable(value)
    if origin in _MAPPINGS:
        key, val = typing.get_args(tp) or (Any, Any)
        return isinstance(value, collections.abc.Mapping) and all(
            accepts(key, k) and accepts(val, v) for k, v in value.items()
        )
    if origin in _SEQUENCES:
        item = (typing.get_args(tp) or (Any,))[0]
        return isinstance(value, (list, tuple)) and all(accepts(item, v) for v in value)
    if typing.is_typeddict(tp):  # a typed mapping (a lane): its fields are the API's to check
        return isinstance(value, collections.abc.Mapping)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(tp, type):
        return isinstance(value, tp)
    return True


def describe(tp: Any) -> str:
    """``pulumi.Input[str]`` -> ``str (or an Output)``; ``Optional[Role]`` -> ``Role or None``."""
    tp = _strip(tp)
    origin = typing.get_origin(tp)
    if origin in _UNIONS:
        parts = [a for a in typing.get_args(tp)]
        plain = [a for a in parts if typing.get_origin(a) not in (pulumi.Output, collections.abc.Awaitable)]
        text = " or ".join(dict.fromkeys(describe(a) for a in plain))
        return f"{text} (or an Output)" if len(plain) < len(parts) else text
    if origin is Literal:
        return " or ".join(repr(a) for a in typing.get_args(tp))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return " or ".join(repr(m.value) for m in tp)
    if origin in _MAPPINGS:
        key, val = typing.get_args(tp) or (Any, Any)
        return f"a mapping of {describe(key)} to {describe(val)}"
    if origin in _SEQUENCES:
        return f"a list of {describe((typing.get_args(tp) or (Any,))[0])}"
    if tp is type(None):
        return "None"
    return getattr(tp, "__name__", str(tp))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


Rule = Callable[[Any], Optional[str]]
"""What is wrong with an argument's (known) value beyond its type, or None."""


def _tags_rule(tags: Mapping[str, str]) -> Optional[str]:
    from .spec.tags import tags_problem

    return tags_problem(tags, added=0, by="the component")


def _namespace_rule(namespace: str) -> Optional[str]:
    from .spec.service import dns1123_label_problem

    return dns1123_label_problem(namespace, "namespace")


COMMON_RULES: Mapping[str, Rule] = {
    "namespace": _namespace_rule,
    "node_selector": syntax.node_selector_problem,
    "tolerations": lambda tolerations: (
        f"invalid toleration {problem}" if (problem := syntax.tolerations_problem(list(tolerations))) else None
    ),
    "tags": _tags_rule,
    "node_role_name": lambda name: (
        f"invalid role name {name!r}: {syntax.iam_role_name_problem(name)}"
        if syntax.iam_role_name_problem(name)
        else None
    ),
    "rack": lambda rack: syntax.tag_problem("rack", rack),
}
"""Rules of arguments that mean the same in every component (a Kubernetes namespace, node selector and
tolerations; AWS tags; an IAM role name; the ``rack`` tag's value), checked on their known values as the API
that takes them would; a component's own ``rules`` come on top."""


class _Later:
    """An item of a list argument not known yet (an Output): list rules skip it."""

    def __repr__(self) -> str:
        return "<known later>"


LATER = _Later()


def is_later(value: Any) -> bool:
    """Whether a list rule was given ``LATER`` for an item: not known yet."""
    return value is LATER


def _pending(value: Any) -> bool:
    """An Output or awaitable, or a list holding one: known only later."""
    if isinstance(value, (list, tuple)):
        return any(_pending(v) for v in value)
    return isinstance(value, pulumi.Output) or inspect.isawaitable(value)


def _settled(tp: Any) -> Any:
    """What a value of ``tp`` is once known: the annotation without its ``Output``/awaitable forms
    (``Input[list[Input[str]]]`` -> ``list[str]``)."""
    tp = _strip(tp)
    origin = typing.get_origin(tp)
    if origin in _UNIONS:
        plain = [
            _settled(a)
            for a in typing.get_args(tp)
            if typing.get_origin(a) not in (pulumi.Output, collections.abc.Awaitable) and a is not pulumi.Output
        ]
        return Union[tuple(plain)] if plain else Any
    if origin in _SEQUENCES and typing.get_args(tp):
        return list[_settled(typing.get_args(tp)[0])]  # type: ignore[misc]  # a list type built at run time
    return tp


def _when_known(kind: str, name: str, key: str, tp: Any, rule: Optional[Rule], value: Any) -> Any:
    """``value`` as an Output whose known value is checked as a plain one is now: a bad one fails the
    program with the component, the argument and the value, not deep inside a resource. A plain list
    holding Outputs stays a list: checked now with ``LATER`` for what is not known, each Output when known."""

    def check(known: Any) -> Any:
        if not accepts(tp, known):
            raise ArgumentError(
                kind, name, key, f"resolved to {type(known).__name__} {_shown(known)}, expected {describe(tp)}"
            )
        problem = rule(known) if rule is not None else None
        if problem:
            raise ArgumentError(kind, name, key, problem)
        return known

    if isinstance(value, (list, tuple)):  # the list now, each item it holds when that one is known
        item_type = (typing.get_args(tp) or (Any,))[0] if typing.get_origin(tp) in _SEQUENCES else Any
        later = [LATER if _pending(v) else v for v in value]
        problem = rule(later) if rule is not None else None
        if problem:
            raise ArgumentError(kind, name, key, problem)

        def check_item(n: int, known: Any) -> Any:
            if not accepts(item_type, known):
                raise ArgumentError(
                    kind,
                    name,
                    f"{key}[{n}]",
                    f"resolved to {type(known).__name__} {_shown(known)}, expected {describe(item_type)}",
                )
            problem = rule([*later[:n], known, *later[n + 1 :]]) if rule is not None else None
            if problem:
                raise ArgumentError(kind, name, key, problem)
            return known

        return [
            pulumi.Output.from_input(v).apply(partial(check_item, n)) if later[n] is LATER else v
            for n, v in enumerate(value)
        ]
    return pulumi.Output.from_input(value).apply(check)


def from_data(owner: "pulumi.ComponentResource | str", name: str, key: str, cls: type, value: Mapping[str, Any]) -> Any:
    """An argument given as data (a mapping: how a spec or the cluster reaches a component from another
    language, or from Python) as the class its annotation names: a spec built from it, a ``ClusterRef`` from
    ``ClusterRef.from_inputs``. Problems raise ``PropertyProblems`` at ``key.<field path>``."""
    from pydantic import BaseModel

    if issubclass(cls, BaseModel):
        from .spec.base import PROPERTY_NAMES, Spec

        try:
            spec = cls(**{str(k): v for k, v in value.items()})
        except ConfigError as exc:  # SpecError, ServiceError: a line per field
            raise PropertyProblems(
                [
                    (f"{key}.{path}" if path else key, problem)
                    for path, problem in getattr(exc, "problems", [("", str(exc))])
                ]
            ) from None
        if isinstance(spec, Spec) and (spell := PROPERTY_NAMES.get()) is not None:
            spec.named_at(spell(key), spell)
        return spec
    parent = owner if isinstance(owner, pulumi.Resource) else None
    return cls.from_inputs(name, key, value, pulumi.ResourceOptions(parent=parent))  # type: ignore[attr-defined]  # _data_class returns a class with from_inputs


def _data_class(tp: Any) -> Optional[type]:
    """The class an annotation names when an argument of it may be given as data (a spec, ``ClusterRef``)."""
    from pydantic import BaseModel

    tp = _strip(tp)
    if isinstance(tp, type) and (issubclass(tp, BaseModel) or hasattr(tp, "from_inputs")):
        return tp
    return None


def check_start(kind: str, name: object, opts: object) -> None:
    """A component's name and options, checked before Pulumi reads them (it would raise a bare ``TypeError``)."""
    problems = []
    if not isinstance(name, str) or not name:
        problems.append(("name", f"expected a non-empty str (it names the component's resources), got {_shown(name)}"))
    if opts is not None and not isinstance(opts, pulumi.ResourceOptions):
        problems.append(("opts", f"expected pulumi.ResourceOptions or None, got {type(opts).__name__}"))
    if problems:
        raise ArgumentError(kind, str(name)[:60], *problems[0], more=problems[1:])


def checked(
    component: pulumi.ComponentResource | str,
    name: str,
    args: Any,
    args_type: type[ArgsT],
    rules: Optional[Mapping[str, Rule]] = None,
    python_only: Optional[Mapping[str, Any]] = None,
    also: Optional[Mapping[str, tuple[type, ...]]] = None,
) -> ArgsT:
    """``args`` as a plain dict of type ``args_type``, after checking it against ``args_type`` (a ``TypedDict``) and the
    ``rules`` of its values. An argument given as an Output (or an awaitable, or a list holding one) is
    returned as an Output that is checked the same way once its value is known. A spec or the cluster given
    as a mapping (as the component provider passes them) is built from it (``from_data``).

    ``python_only``: arguments a Python program may pass that are not part of the component's schema (an
    ``AmiLookup`` to share, an object no other language could send), by name -> annotation. ``also``: Python
    objects an argument takes besides its annotation's (an ``aws.iam.Role`` for a role's name or ARN)."""
    kind = component if isinstance(component, str) else type(component).__name__
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ArgumentError(kind, name, "args", f"expected {args_type.__name__} (a mapping), got {type(args).__name__}")
    hints = {**_hints(args_type), **(python_only or {})}
    problems: list[tuple[str, str]] = []
    for key in sorted(set(args) - set(hints), key=str):
        meant = closest(key, hints)
        problems.append(
            (
                str(key),
                f"unknown argument ({f'did you mean {meant}? ' if meant else ''}expected one of: {', '.join(hints)})",
            )
        )
    for key in required_keys(args_type):
        if args.get(key) is None:
            problems.append((key, f"required (expected {describe(hints[key])})"))
    missing = {key for key, _ in problems}
    rules = {**COMMON_RULES, **(rules or {})}
    result = dict(args)
    for key, value in args.items():
        if key not in hints or key in missing:
            continue
        if also and key in also and isinstance(value, also[key]):  # a Python object the schema has no type for
            if (rule := (rules or {}).get(key)) is not None and (problem := rule(value)):
                problems.append((key, problem))
            continue
        data_class = _data_class(hints[key])
        if data_class is not None and isinstance(value, Mapping):
            try:
                value = result[key] = from_data(component, name, key, data_class, value)
            except PropertyProblems as exc:
                problems += exc.problems
                continue
        if not accepts(hints[key], value):
            wider = "".join(f"{t.__name__} or " for t in (also or {}).get(key, ()))
            problems.append(
                (key, f"expected {wider}{describe(hints[key])}, got {type(value).__name__} {_shown(value)}")
            )
        elif value is not None and _pending(value):
            result[key] = _when_known(
                kind,
                name,
                key,
                Union[(*(also or {}).get(key, ()), _settled(hints[key]))],
                (rules or {}).get(key),
                value,
            )
        elif value is not None and (rule := (rules or {}).get(key)) is not None and (problem := rule(value)):
            problems.append((key, problem))
    if problems:  # every problem at once, each with its property path, as pulumi-eks reports them
        raise ArgumentError(kind, name, *problems[0], more=problems[1:])
    return cast(ArgsT, result)  # every key and value was checked against args_type above


def hosted(kind: str, opts: Optional[pulumi.ResourceOptions]) -> tuple[str, Optional[pulumi.ResourceOptions]]:
    """A component's type token (``rack:index:<kind>``: the component provider hosts every component in its
    ``index`` module) and its options, with an alias of its former token (``contract.FORMER_TYPES``) so that
    a stack made before keeps its URNs, and those of its children."""
    from .contract import FORMER_TYPES

    token = f"rack:index:{kind}"
    former = [old for old, new in FORMER_TYPES.items() if new == token]
    if not former:
        return token, opts
    return token, pulumi.ResourceOptions.merge(
        opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=t) for t in former])
    )


def inherited_depends_on(opts: Optional[pulumi.ResourceOptions]) -> list[pulumi.Resource]:
    """What a component was told to wait for (``opts.depends_on``), for its children to wait for too:
    Pulumi orders a component's children by their own dependencies, not by the component's."""
    found = opts.depends_on if opts is not None else None
    if found is None:
        return []
    return list(found) if isinstance(found, (list, tuple)) else [found]  # type: ignore[list-item]  # depends_on holds Resources when not an Output


# ---- help(): every component lists its args and outputs -------------------------------------------------


def _documented_fields(tree: ast.Module, class_name: str) -> list[tuple[str, str, str]]:
    """(name, annotation, docstring) of each annotated attribute of ``class_name`` and its bases in the module."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    node = classes.get(class_name)
    if node is None:
        return []
    found = [field for base in node.bases if isinstance(base, ast.Name) for field in _documented_fields(tree, base.id)]
    body = node.body
    for n, statement in enumerate(body):
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            after = body[n + 1] if n + 1 < len(body) else None
            doc = (
                after.value.value
                if isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
                else ""
            )
            found.append((statement.target.id, ast.unparse(statement.annotation), inspect.cleandoc(doc)))
    return found


def _section(title: str, fields: list[tuple[str, str, str]]) -> str:
    lines = [title]
    for name, annotation, doc in fields:
        lines.append(f"    {name} ({annotation}):")
        lines += [f"        {line}" for line in (doc or "(undocumented)").splitlines()]
    return "\n".join(lines)


class _RenderedDoc:
    """A class's ``__doc__`` rendered when first read: ``help()`` reads it, importing the package does not
    pay for parsing the source (``type.__doc__`` calls a descriptor it finds in the class's dict)."""

    def __init__(self, cls: type, doc: Optional[str]) -> None:
        self._cls = cls
        self._text: Optional[str] = None
        self.source_doc = doc
        """The docstring as written (the component provider's schema describes the component with it)."""

    def __get__(self, obj: Any, owner: Any = None) -> str:
        if self._text is None:
            self._text = _render_doc(self._cls, self.source_doc)
        return self._text


def _render_doc(cls: type, doc: Optional[str]) -> str:
    tree = ast.parse(inspect.getsource(sys.modules[cls.__module__]))
    args_type = f"{cls.__name__}Args"
    args = _documented_fields(tree, args_type)
    hints = _hints(getattr(sys.modules[cls.__module__], args_type)) if args else {}
    required = required_keys(getattr(sys.modules[cls.__module__], args_type)) if args else ()
    args = [
        (name, f"{annotation}{'' if name in required else ', optional'}", doc)
        for name, annotation, doc in args
        if name in hints
    ]
    outputs = [field for field in _documented_fields(tree, cls.__name__) if field[1].startswith("pulumi.Output")]
    parts = [inspect.cleandoc(doc or cls.__name__)]
    if args:
        parts.append(
            _section(f"Args (``{args_type}``, a TypedDict: ``{cls.__name__}(name, {args_type}(...), opts)``):", args)
        )
    if outputs:
        parts.append(_section("Outputs (registered as the component's outputs):", outputs))
    return "\n\n".join(parts)


def documented(cls: type) -> type:
    """A component class whose ``help()`` lists its args (its ``XArgs`` TypedDict's fields, with the
    docstrings written where they are declared), its outputs (its ``pulumi.Output`` attributes) and
    the example its own docstring gives; its ``__init__`` points there instead of inheriting the
    docstring of Pulumi's ``ComponentResource.__init__``. The text is rendered when first read."""
    cls.__doc__ = _RenderedDoc(cls, cls.__dict__.get("__doc__"))  # type: ignore[assignment]  # a descriptor: the str is rendered when read
    init = cls.__dict__.get("__init__")
    if init is not None:
        init.__doc__ = (
            f"Build a {cls.__name__}: ``name``, ``args`` ({cls.__name__}Args) and ``opts``; see the class's help."
        )
    return cls
