"""What another language's program sends to ``Construct``, checked against the schema before any component runs.

The SDK's host maps the inputs it knows and drops the rest: an input it does not declare (``amiID``, ``ami_id``)
would be ignored without a word, a string where an object belongs reads as an object with no fields, and it
stops at the first problem. Here every input is checked against the component's property definitions (the
ones the schema is generated from), every problem is named by its property path in the schema's names, and
what is sent back stays small enough for one gRPC reply (``LISTED_BYTES``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Optional

import pulumi
from pulumi.output import Unknown
from pulumi.provider.experimental.analyzer import PropertyDefinition, PropertyType, TypeDefinition
from pulumi.provider.experimental.util import camel_case

from .inputs import closest
from .spec.base import Spec, plain_value, rendered

LISTED_MAX = 20
"""The most problems one refusal lists; the rest are counted (``and 480 more``)."""
LISTED_BYTES = 1600
"""The most characters of paths and reasons one refusal lists. The list travels in the reply's trailing metadata
three times over: as the message (``grpc-message``), and as the message and per-property details of the status
(``grpc-status-details-bin``, base64), and gRPC clients refuse more than 8 KiB of metadata."""

Problem = tuple[str, str]
TypeLookup = Callable[[PropertyDefinition], Optional[TypeDefinition]]


def undeclared(key: str, declared: dict[str, PropertyDefinition], holder: str) -> str:
    """Why ``key`` is refused, with the declared property it most likely means: the schema's camelCase for a
    snake_case name (``ami_id``), the same name in other capitals (``amiID``), or a misspelling."""
    meant = next((name for name in declared if name == camel_case(key) or name.lower() == key.lower()), None)
    meant = meant or closest(key, declared)
    hint = f" (did you mean '{meant}'?)" if meant else ""
    return f"'{rendered(key)[1:-1]}' is not an input of {holder}{hint}"


def problems(inputs: Mapping[str, Any], properties: dict[str, PropertyDefinition], holder: str,
             type_of: TypeLookup) -> list[Problem]:
    """Every problem of ``inputs`` against ``properties`` (a component's inputs), by property path."""
    return list(_object(inputs, properties, "", holder, type_of, plain=False))


def _object(value: Mapping[str, Any], properties: dict[str, PropertyDefinition], path: str, holder: str,
            type_of: TypeLookup, plain: bool) -> Iterator[Problem]:
    prefix = f"{path}." if path else ""
    for key in value:
        if key not in properties and not key.startswith("__"):
            yield f"{prefix}{key}", undeclared(key, properties, holder)
    for name, prop in properties.items():
        if value.get(name) is None:
            if not prop.optional:
                yield f"{prefix}{name}", "required"
            continue
        yield from _value(value[name], prop, f"{prefix}{name}", type_of, plain)


def _value(value: Any, prop: PropertyDefinition, path: str, type_of: TypeLookup, plain: bool) -> Iterator[Problem]:
    if isinstance(value, (pulumi.Output, Unknown)):
        if plain or (prop.ref and _is_spec(type_of(prop))):
            try:
                plain_value(value)
            except ValueError as exc:
                yield path, f"an unknown or secret value is {exc}"
        return
    if isinstance(value, pulumi.Resource):
        return
    if prop.ref:
        found = type_of(prop)
        if found is None:
            return
        if found.enum:
            allowed = [v.value for v in found.enum]
            if value not in allowed:
                yield path, f"expected one of {', '.join(map(repr, allowed))} (got {rendered(value)})"
            return
        if not isinstance(value, dict):
            yield path, f"expected an object ({found.name}) (got {rendered(value)})"
            return
        yield from _object(value, found.properties, path, found.name, type_of, plain or _is_spec(found))
        return
    if prop.type == PropertyType.ARRAY:
        if not isinstance(value, list):
            yield path, f"expected a list (got {rendered(value)})"
            return
        for n, item in enumerate(value):
            if prop.items is not None and item is not None:
                yield from _value(item, prop.items, f"{path}[{n}]", type_of, plain)
        return
    if prop.type == PropertyType.OBJECT:
        if not isinstance(value, dict):
            yield path, f"expected a map (got {rendered(value)})"
            return
        for key, item in value.items():
            if prop.additional_properties is not None and item is not None:
                yield from _value(item, prop.additional_properties, f"{path}.{key}", type_of, plain)
        return
    expected = _PRIMITIVES.get(prop.type) if prop.type else None
    if expected and not expected[1](value):
        yield path, f"expected {expected[0]} (got {rendered(value)})"


def _is_spec(found: Optional[TypeDefinition]) -> bool:
    """Whether a type is one of the specs (``components/spec``), which are checked when built and so take plain
    values only: the specs' own check names an Output only where it is a whole field, not inside a list."""
    return found is not None and found.python_type.__module__.startswith(f"{Spec.__module__.rsplit('.', 1)[0]}.")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_PRIMITIVES: dict[PropertyType, tuple[str, Callable[[Any], bool]]] = {
    PropertyType.STRING: ("a string", lambda v: isinstance(v, str)),
    PropertyType.NUMBER: ("a number", _number),
    PropertyType.INTEGER: ("a whole number", lambda v: _number(v) and float(v).is_integer()),
    PropertyType.BOOLEAN: ("true or false", lambda v: isinstance(v, bool)),
}


def refusal(component: str, name: str, found: list[Problem]) -> pulumi.InputPropertiesError:
    """The error ``Construct`` answers with: at most ``LISTED_MAX`` problems (and ``LISTED_BYTES`` of them),
    each path and reason cut to a readable length, and how many more there are."""
    listed: list[Problem] = []
    size = 0
    for path, reason in found[:LISTED_MAX]:
        path, reason = _cut(path), _cut(reason)
        if listed and size + len(path) + len(reason) > LISTED_BYTES:
            break
        listed.append((path, reason))
        size += len(path) + len(reason)
    lines = [f"{component} '{_cut(name)}': {path}: {reason}" for path, reason in listed]
    if len(found) > len(listed):
        lines.append(f"{component} '{_cut(name)}': and {len(found) - len(listed)} more")
    return pulumi.InputPropertiesError("\n".join(lines), [{"property_path": p, "reason": r} for p, r in listed])


def _cut(text: str) -> str:
    return text if len(text) <= 200 else text[:197] + "..."
