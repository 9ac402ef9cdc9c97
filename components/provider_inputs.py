"""What another language's program sends to ``Construct``, checked against the schema before any component runs.

The SDK's host maps the inputs it knows and drops the rest: an input it does not declare (``amiID``, ``ami_id``)
would be ignored without a word, a string where an object belongs reads as an object with no fields, and it
stops at the first problem. Here every input is checked against the component's property definitions (the
ones the schema is generated from), every problem is named by its property path in the schema's names, and
what is sent back stays small enough for one gRPC reply (``LISTED_BYTES``).

The check reads the request's inputs as they travel (``upgraded``), not as the SDK hands them on: the SDK's
reader (pulumi ``sdk/python/lib/pulumi/runtime/rpc.py``, 3.272) moves a secret in the older encoding up to the
top-level input that holds it, so a secret ``spec.pools[2].amiId`` would read as a secret ``spec``, a secret
``cluster.name`` as a whole secret cluster (which its host then maps as a cluster with no fields), and it knows
only the string form of the engine's unknown sentinels.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Mapping, Optional

import pulumi
from google.protobuf import struct_pb2
from pulumi.provider.experimental.analyzer import PropertyDefinition, PropertyType, TypeDefinition
from pulumi.provider.experimental.util import camel_case

from .inputs import closest
from .spec.base import PLAIN_ONLY, Spec, rendered

LISTED_MAX = 20
"""The most problems one refusal lists; the rest are counted (``and 480 more``)."""
LISTED_BYTES = 1600
"""The most characters of paths and reasons one refusal lists. The list travels in the reply's trailing metadata
three times over: as the message (``grpc-message``), and as the message and per-property details of the status
(``grpc-status-details-bin``, base64), and gRPC clients refuse more than 8 KiB of metadata."""

Problem = tuple[str, str]
TypeLookup = Callable[[PropertyDefinition], Optional[TypeDefinition]]

# The wire's special values (pulumi/pulumi ``sdk/go/common/resource/plugin/rpc.go`` and ``sdk/go/common/resource``
# ``SigKey`` and its signatures): an object with the key ``SIG`` is a value of the kind its signature names.
SIG = "4dabf18193072939515e22adb298388d"
SECRET = "1b47061264138c4ac30d75fd1eb44270"
"""The older encoding of a secret: ``{SIG: SECRET, "value": <the value>}``."""
OUTPUT = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
"""An output value: ``{SIG: OUTPUT}`` with ``value`` when it is known, ``secret``, ``dependencies`` (URNs)."""
RESOURCE = "5cf8f73096256a8f31e491e813e4eb8e"
"""A resource reference: ``urn``, and ``id`` for a custom resource (``""`` while it is unknown)."""
ASSETS = {"c44067f5952c0a294b673a41bacd8c17": "an asset", "0def7320c3a5731c473e5ecbe6d01bc7": "an archive"}
UNKNOWNS = frozenset(
    {
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
        "030794c1-ac77-496b-92df-f27374a8bd58",
        "e48ece36-62e2-4504-bad9-02848725956a",
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
    }
)
"""The engine's unknown sentinels, one per kind of value (bool, number, string, array, asset, archive, object):
each is an unknown value of any type to the engine; the Python SDK reads only the string's."""


def wire_values(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A request's ``Struct`` as Python values, every number as the float it travels as. protobuf's JSON form
    (``json_format.MessageToDict``) has no NaN or infinity and raises on one, while a ``Struct`` carries both (a
    TypeScript program's ``NaN``, any language's ``Infinity``): they are read here, and ``problems`` names them
    at their property paths."""
    return {key: _wire(value) for key, value in struct.fields.items()}


def _wire(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return wire_values(value.struct_value)
    if kind == "list_value":
        return [_wire(item) for item in value.list_value.values]
    if kind == "number_value":
        return value.number_value
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None


def upgraded(value: Any, prop: Optional[PropertyDefinition], type_of: TypeLookup) -> Any:
    """A wire value (the JSON form of the request's ``Struct``) with every secret and unknown written as an
    output value where it is, as the engine reads a value for a provider that takes output values: a secret in
    the older encoding is a known secret output of its value, and any unknown sentinel an unknown output
    (``UnmarshalPropertyValue`` with output values kept). A known output holding a whole object of a type whose
    fields take outputs (``ClusterRef``) is written as that object with each field an output carrying its
    secrecy and dependencies, which is what it means: the SDK's host would map the whole output as an object
    with no fields. Resource references, assets, archives and malformed values are left as sent."""
    wrapped = _wrapper(value)
    if wrapped is None:
        if isinstance(value, list):
            items = prop.items if prop is not None else None
            return [upgraded(item, items, type_of) for item in value]
        if isinstance(value, dict) and SIG not in value:
            fields = _fields(prop, type_of)
            return {k: upgraded(v, fields(k), type_of) for k, v in value.items()}
        return value
    known, inner, secret, dependencies = wrapped
    if known and isinstance(inner, dict) and SIG not in inner and _fields_take_outputs(prop, type_of):
        return upgraded({k: _output(True, v, secret, dependencies) for k, v in inner.items()}, prop, type_of)
    return _output(known, upgraded(inner, prop, type_of) if known else None, secret, dependencies)


def depending(value: Any, prop: PropertyDefinition, type_of: TypeLookup, urns: list[str]) -> Any:
    """A plain input's wire value, given the resources the engine lists it as coming from (``inputDependencies``).
    The SDK's server would make the whole value one output of them, which an input the schema marks plain cannot
    take (its host maps an output of an object as an object with no fields). The value itself is what the program
    gave, so it stays as it is; where its fields take outputs (``ClusterRef``) each field carries them."""
    return _output(True, value, False, urns) if urns and _fields_take_outputs(prop, type_of) else value


def _fields_take_outputs(prop: Optional[PropertyDefinition], type_of: TypeLookup) -> bool:
    """Whether ``prop`` is an object type (not a spec) with fields that take outputs, as ``ClusterRef``'s do."""
    found = type_of(prop) if prop is not None and prop.ref else None
    return (
        found is not None
        and not found.enum
        and not _is_spec(found)
        and any(not p.plain for p in found.properties.values())
    )


def _output(known: bool, value: Any, secret: bool, dependencies: list[str]) -> dict[str, Any]:
    """An output value on the wire: its value only when known, its flags only when set."""
    return {
        SIG: OUTPUT,
        **({"value": value} if known else {}),
        **({"secret": True} if secret else {}),
        **({"dependencies": dependencies} if dependencies else {}),
    }


def _wrapper(value: Any) -> Optional[tuple[bool, Any, bool, list[str]]]:
    """``(known, value, secret, dependencies)`` of a secret, an output value or an unknown sentinel, at any
    depth of nesting (a secret holding an output value holding a secret); None for any other value, and for a
    secret or output value too malformed to read (``_malformed`` names it)."""
    if isinstance(value, str) and value in UNKNOWNS:
        return False, None, False, []
    if not isinstance(value, dict) or _malformed(value):
        return None
    if value.get(SIG) == SECRET:
        inner = _wrapper(value["value"])
        if inner is None:
            return True, value["value"], True, []
        return inner[0], inner[1], True, inner[3]
    if value.get(SIG) != OUTPUT:
        return None
    secret, dependencies = value.get("secret") is True, [str(d) for d in value.get("dependencies", [])]
    if "value" not in value:
        return False, None, secret, dependencies
    inner = _wrapper(value["value"])
    if inner is None:
        return True, value["value"], secret, dependencies
    return inner[0], inner[1], secret or inner[2], sorted(set(dependencies) | set(inner[3]))


def _malformed(value: dict[str, Any]) -> Optional[str]:
    """Why a value with the signature key is not one the engine reads (it refuses these), or None."""
    sig = value.get(SIG)
    if sig == SECRET:
        return None if "value" in value else "a secret with no value"
    if sig == OUTPUT:
        if "secret" in value and not isinstance(value["secret"], bool):
            return "an output value whose secret is not true or false"
        deps = value.get("dependencies", [])
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            return "an output value whose dependencies are not a list of URNs"
        return None
    if sig == RESOURCE:
        return None if isinstance(value.get("urn"), str) else "a resource reference with no URN"
    if sig in ASSETS or SIG not in value:
        return None
    return f"a value of an unknown kind (signature {rendered(sig)})"


def _fields(prop: Optional[PropertyDefinition], type_of: TypeLookup) -> Callable[[str], Optional[PropertyDefinition]]:
    """The property definition of each key of an object at ``prop``: its type's field, or its map's values."""
    if prop is None:
        return lambda key: None
    if prop.ref:
        found = type_of(prop)
        props = found.properties if found is not None and not found.enum else {}
        return props.get
    return lambda key: prop.additional_properties


def undeclared(key: str, declared: dict[str, PropertyDefinition], holder: str) -> str:
    """Why ``key`` is refused, with the declared property it most likely means: the schema's camelCase for a
    snake_case name (``ami_id``), the same name in other capitals (``amiID``), or a misspelling."""
    meant = next((name for name in declared if name == camel_case(key) or name.lower() == key.lower()), None)
    meant = meant or closest(key, declared)
    hint = f" (did you mean '{meant}'?)" if meant else ""
    return f"'{rendered(key)[1:-1]}' is not an input of {holder}{hint}"


def problems(
    inputs: Mapping[str, Any], properties: dict[str, PropertyDefinition], holder: str, type_of: TypeLookup
) -> list[Problem]:
    """Every problem of ``inputs`` (``upgraded`` wire values) against ``properties`` (a component's inputs), by
    property path: a secret or known output is judged by its value, at its own path."""
    found = list(_object(inputs, properties, "", holder, type_of, plain=False))
    named = {path for path, _ in found}  # and a number no JSON writes where the schema takes any value
    found += [
        (path, _NOT_FINITE.format(rendered(number)))
        for path, number in _not_finite_paths(inputs, "")
        if path not in named
    ]
    return found


_NOT_FINITE = "expected a finite number (got {}: JSON has no such number)"


def _not_finite_paths(value: Any, path: str) -> Iterator[tuple[str, float]]:
    if not_finite(value):
        yield path, value
    elif isinstance(value, dict) and value.get(SIG) in (OUTPUT, SECRET):  # a wrapper's value is at its own path
        yield from _not_finite_paths(value.get("value"), path)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _not_finite_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _not_finite_paths(item, f"{path}[{n}]")


def _object(
    value: Mapping[str, Any],
    properties: dict[str, PropertyDefinition],
    path: str,
    holder: str,
    type_of: TypeLookup,
    plain: bool,
) -> Iterator[Problem]:
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
    if not_finite(value):  # whatever the property's type: none takes one, and the SDK's reader fails on it
        yield path, _NOT_FINITE.format(rendered(value))
        return
    if isinstance(value, dict) and (problem := _malformed(value)):
        yield path, problem
        return
    found = type_of(prop) if prop.ref else None
    if isinstance(value, dict) and value.get(SIG) == OUTPUT:
        in_spec = plain or _is_spec(found)
        if in_spec or prop.plain:
            yield path, _not_plain(value, prop, in_spec)
        elif value.get("value") is not None:  # a known output: judged by its value, here (null is no value)
            yield from _value(value["value"], prop, path, type_of, plain)
        return  # an unknown value may be any value: nothing in it is missing or wrongly shaped
    if isinstance(value, dict) and value.get(SIG) in (RESOURCE, *ASSETS):
        resource = value[SIG] == RESOURCE
        if prop.ref and found is None or resource and prop.type == PropertyType.STRING:
            return  # where the schema names a resource or Any, or a string (a resource's id or URN, as the engine
            # gives it to a provider that takes no references)
        got = f"a reference to {_cut(str(value['urn']))}" if resource else ASSETS[value[SIG]]
        yield path, f"expected {_expected(prop, found)} (got {got})"
        return
    if prop.ref:
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


def _not_plain(value: Mapping[str, Any], prop: PropertyDefinition, in_spec: bool) -> str:
    """Why an output is refused where a plain value belongs, saying what the output is: unknown during a
    preview, a secret, or computed from other resources."""
    if "value" not in value:
        what = "unknown during preview (known only once the resources it comes from exist)"
    elif value.get("secret") is True:
        what = "a secret"
    else:
        what = "an output of other resources"
    if in_spec:
        return f"{what}: {PLAIN_ONLY}"
    if prop.ref:
        return f"{what}: this input takes the object itself (the schema marks it plain), with outputs in its fields"
    return f"{what}: this input takes a plain value (the schema marks it plain)"


def _expected(prop: PropertyDefinition, found: Optional[TypeDefinition]) -> str:
    if found is not None:
        return f"one of {', '.join(repr(v.value) for v in found.enum)}" if found.enum else f"an object ({found.name})"
    if prop.type == PropertyType.ARRAY:
        return "a list"
    if prop.type == PropertyType.OBJECT:
        return "a map"
    return _PRIMITIVES[prop.type][0] if prop.type in _PRIMITIVES else "a value"


def _is_spec(found: Optional[TypeDefinition]) -> bool:
    """Whether a type is one of the specs (``components/spec``), which are checked when built and so take plain
    values only: the specs' own check names an Output only where it is a whole field, not inside a list."""
    return found is not None and found.python_type.__module__.startswith(f"{Spec.__module__.rsplit('.', 1)[0]}.")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def not_finite(value: Any) -> bool:
    """A number no JSON writes (NaN, an infinity): a ``Struct`` carries one, and no input takes one."""
    return isinstance(value, float) and not math.isfinite(value)


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
