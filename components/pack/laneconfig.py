"""Lanes from the policy config: the workload policies' ``lanes`` (another stack's ``Rack`` output), checked
against the lane contract (``lane.ConfiguredLane``: its JSON schema, which the CLI checks too, then the rules no
schema states: ``lanes_config_problems``) and read into the pack's view of a lane (``lane_view``), and the facts
the ``Rack`` writes into its ``lanes`` output for it (``size_facts``)."""

from __future__ import annotations


import functools
import math
import numbers
from collections import abc
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, cast

from .. import contract, syntax
from ..inputs import closest
from .. import lane as lane_contract
from ..facts import wellknown
from . import bootfacts, fit
from .scheduling import Selection
from .lanemodel import Finding, LaneView, number_text, read_labels, read_taints


def configured_lanes(config: Mapping[str, Any]) -> list[LaneView]:
    """The policy config's ``lanes`` (a stack whose rack is elsewhere), each read into the pack's view of a lane
    (``lane_view``)."""
    return [
        lane_view(cast(lane_contract.ConfiguredLane, bootfacts.as_map(entry)))
        for entry in bootfacts.as_list(config.get("lanes"))
    ]


def lane_view(entry: lane_contract.ConfiguredLane) -> LaneView:
    """A configured lane (the rack's ``lanes`` output, with its name) as the pack sees it: the one place a lane of
    the contract becomes a ``LaneView``. Its labels, taints and ``gpu``, and what sizes its nodes (``arch``,
    ``instanceTypes`` or ``instanceFamilies`` with ``instanceSizes``, ``capacityTypes``, ``maxGpusPerNode``,
    ``allocatable``). Read leniently (a value of the wrong kind is none): ``lanes_config_problems`` says what is
    wrong with a config before a policy judges by it."""
    labels, taints = read_labels(entry.get("labels")), read_taints(entry.get("taints"))
    requirements = [
        wellknown.Requirement(key, "In", values)
        for key, values in (
            (wellknown.TYPE_KEY, _names(entry.get("instanceTypes"))),
            (wellknown.KARPENTER_PREFIX + "instance-family", _names(entry.get("instanceFamilies"))),
            (wellknown.KARPENTER_PREFIX + "instance-size", _names(entry.get("instanceSizes"))),
            (wellknown.ARCH_KEY, _names(entry.get("arch"))),
        )
        if values
    ]
    capacity = _names(entry.get("capacityTypes"))
    offered = (
        (
            (wellknown.CAPACITY_TYPE_KEY, tuple(v.lower().replace("_", "-") for v in capacity)),
            (wellknown.EKS_CAPACITY_TYPE_KEY, tuple(v.upper().replace("-", "_") for v in capacity)),
        )
        if capacity
        else ()
    )
    stated = {
        lane_contract.ALLOCATABLE_ALIASES.get(k, k): v for k, v in bootfacts.as_map(entry.get("allocatable")).items()
    }
    allocatable = None
    if stated:
        amounts = {r: fit.quantity(stated.get(r)) for r in fit.SIZED}
        allocatable = fit.Allocatable(
            round((amounts[fit.CPU] or 0) * 1000) if amounts[fit.CPU] is not None else 10**9,
            *(
                int(amount / fit.MIB) if (amount := amounts[r]) is not None else 10**12
                for r in (fit.MEMORY, fit.EPHEMERAL)
            ),
        )
    most = bootfacts.number(entry.get("maxGpusPerNode"))
    most = most if most is not None and math.isfinite(most) else None
    kind = CONFIG_KINDS.get(bootfacts.text(entry.get("kind")), "lane")
    return LaneView(
        bootfacts.text(entry.get("name")),
        kind,
        labels,
        taints,
        entry.get("gpu") is True,
        tuple(requirements),
        offered,
        stated=allocatable,
        max_gpus=int(most) if most is not None else None,
    )


def _names(value: Any) -> tuple[str, ...]:
    """A configured list of names, read leniently: an item that is no text is ''."""
    return tuple(bootfacts.text(v) for v in bootfacts.as_list(value))


CONFIG_KINDS = {"nodepool": "pool", "nodegroup": "node group"}
"""The rack's ``lanes`` output's ``kind`` -> how messages name the lane."""


def size_facts(
    requirements: Sequence[wellknown.Requirement], limits: Mapping[str, float] = {}, root_gib: Optional[float] = None
) -> lane_contract.Lane:
    """What the fit check needs of a lane, for the rack's ``lanes`` output (and so the policy config):
    ``arch``, ``maxGpusPerNode`` and the ``allocatable`` of its largest instance type (``largestInstanceType``),
    the fields of a ``lane.Lane`` that size its nodes."""
    lane = LaneView("", "lane", requirements=tuple(requirements), limits=tuple(limits.items()), root_gib=root_gib)
    types, _, _ = lane.launchable(Selection())
    found = lane_contract.Lane(
        arch=[lane_contract.Arch(a) for a in sorted({wellknown.K8S_ARCH[t.arch] for t in types})]
    )
    if types:
        largest = max(types, key=lambda t: (t.vcpus, t.memory_mib, t.gpus))
        free = fit.allocatable(largest, root_gib)
        found["maxGpusPerNode"] = max(t.gpus for t in types)
        found["largestInstanceType"] = largest.name
        found["allocatable"] = {
            "cpu": f"{free.cpu_m}m",
            "memory": f"{free.memory_mib}Mi",
            "ephemeral-storage": f"{free.ephemeral_mib}Mi",
        }
    return found


EFFECT_NAMES = sorted(effect.value for effect in lane_contract.TaintEffect)
"""Taint effects in Kubernetes' spelling or EKS's."""
LANE_FIELDS: Mapping[str, Any] = lane_contract.fields()
"""A lane's fields (``lane.ConfiguredLane``): the rack's ``lanes`` output passes as it is (``os``, ``ami``,
``largestInstanceType``, ``worstCaseHourlyUsd``, ``worstCaseRolloutHourlyUsd``, ``canaryOf``,
``capacityReservationIds`` and ``reservedNodes`` are not read)."""
LANES_SCHEMA: dict[str, Any] = lane_contract.config_schema(
    "Lanes this stack's workloads may land on when the stack itself declares none (the rack is "
    "another stack): [{name, labels, taints: [{key, value, effect}], gpu, arch, instanceTypes, "
    "instanceFamilies, instanceSizes, capacityTypes, maxGpusPerNode, allocatable}], e.g. the rack "
    "stack's lanes output."
)
"""The ``lanes`` property of both workload policies' config (what the CLI checks before ``Configure``)."""


def lanes_config_problems(lanes: Any) -> list[str]:
    """What is wrong with a ``lanes`` policy config, each naming its path (``lanes[1].taint``): what the lane
    contract's schema refuses (``LANES_SCHEMA``, closed to keys it does not name), in the words of ``_schema_words``,
    then the rules no schema states (names, label and instance-type syntax, quantities, lanes that launch nothing)."""
    if lanes is None:
        return []
    said: dict[
        tuple[Any, ...], str
    ] = {}  # where a problem is (the lane's index, then its path in the lane) -> its words
    for path, keyword, value, expected in _schema_errors(lanes):
        for where, words in _schema_words(lanes, path, keyword, value, expected):
            said.setdefault(where, words)
    if () in said:
        return [said[()]]
    seen: dict[str, int] = {}
    troubled = {where[0] for where in said}
    for i, entry in enumerate(lanes):
        if isinstance(entry, Mapping):
            for where, words in _rule_words(i, entry, seen):
                said.setdefault(where, words)
                troubled.add(i)
            if i not in troubled:
                said.update(((i, _LAUNCHES), f"lanes[{i}]: {problem}") for problem in _launches_nothing(entry))
    return [said[where] for where in sorted(said, key=lambda where: _said_order(lanes, where))]


_LIST_FIELDS = ("arch", "instanceTypes", "instanceFamilies", "instanceSizes", "capacityTypes")
"""A lane's fields that are lists of names."""
_TAINT_FIELDS = ("key", "value", "effect")
_LAUNCHES, _UNKNOWN = object(), object()
"""Where a lane that launches nothing is said, and a taint's unknown keys (no key of a config is either)."""
LENIENT = frozenset(
    {
        "gpu",
        "kind",
        "os",
        "ami",
        "largestInstanceType",
        "capacityReservationIds",
        "reservedNodes",
        "worstCaseHourlyUsd",
        "worstCaseRolloutHourlyUsd",
        "canaryOf",
    }
)
"""A lane's fields whose values the schema's errors are not said of: the pack reads ``gpu`` only when it is true and
``kind`` only when it names a kind, and the rest are the rack's output passing as it is (not read). A config file
has them checked against ``LANES_SCHEMA`` before ``Configure`` all the same: by the Pulumi CLI, which validates each
policy's config against the ``configSchema`` the policy declares (pulumi ``sdk/go/common/resource/plugin``,
``ValidatePolicyPackConfig``), and by this package's commands; a Python program's ``Service`` lanes are read the
same way."""


_TYPES: dict[str, Callable[[Any], bool]] = {
    "array": lambda value: isinstance(value, abc.Sequence) and not isinstance(value, str),
    "object": lambda value: isinstance(value, abc.Mapping),
    "integer": lambda value: (
        not isinstance(value, bool) and (isinstance(value, int) or isinstance(value, float) and value.is_integer())
    ),
    "number": lambda value: not isinstance(value, bool) and isinstance(value, numbers.Number),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}
"""Which Python values are of each JSON type when the pack checks a lanes config: a list and a map any Python
sequence (not text) and mapping (a Python program's lanes), a whole number a float too; the rest as JSON Schema's
draft 7 reads them. Both the validator and ``_conforming`` read them."""


def _closed(schema: Any) -> Any:
    """``schema`` with every object closed to the keys it names."""
    if isinstance(schema, dict):
        schema = {key: _closed(value) for key, value in schema.items()}
        if "properties" in schema:
            schema["additionalProperties"] = False
    return schema


_CLOSED_SCHEMA = _closed(LANES_SCHEMA)


def _schema_errors(lanes: Any) -> Iterator[tuple[tuple[Any, ...], str, Any, Any]]:
    """What the closed lane contract's schema refuses in a config: each error's path, keyword, the value it refuses
    and the keyword's own value, in the order jsonschema finds them in the whole config (lane by lane). A lane
    ``_conforming`` passes has none; of the others, jsonschema is given the fields ``_conforming`` refuses."""
    if not _TYPES["array"](lanes):
        errors = _validators()[0].iter_errors(lanes)
        yield from ((tuple(e.absolute_path), e.validator, e.instance, e.validator_value) for e in errors)
        return
    for i, entry in enumerate(lanes):
        if _LANE_CONFORMS(entry):
            continue
        if _TYPES["object"](entry):  # the fields it refuses (and the name, which is required): the others have no error
            entry = {
                key: value
                for key, value in entry.items()
                if key == "name" or not _FIELD_CONFORMS.get(key, _never)(value)
            }
        errors = _validators()[1].iter_errors(entry)
        yield from (((i, *e.absolute_path), e.validator, e.instance, e.validator_value) for e in errors)


@functools.cache
def _validators() -> tuple[Any, Any]:
    """jsonschema validators of a whole lanes config and of one lane against the closed lane contract's schema, the
    JSON types read as ``_TYPES`` says (made once)."""
    import jsonschema  # here: the pack starts without it, and a config of sound lanes never needs it

    checker = jsonschema.Draft7Validator.TYPE_CHECKER.redefine_many(
        {name: (lambda _, value, test=test: test(value)) for name, test in _TYPES.items()}
    )
    kind = jsonschema.validators.extend(jsonschema.Draft7Validator, type_checker=checker)
    return kind(_CLOSED_SCHEMA), kind(_CLOSED_SCHEMA["items"])


_ANNOTATIONS = frozenset({"default", "description"})
"""Keywords that say nothing of whether a value is valid."""


def _conforming(schema: Any) -> Callable[[Any], bool]:
    """A quick test of a value against ``schema`` (the keywords of the lane contract's schema: ``type``, ``enum``,
    ``minimum``, ``properties``, ``additionalProperties``, ``required``, ``items``): True only when the validator
    (``_validators``) finds nothing wrong with it, False when it may. A schema with any other keyword is tested False
    throughout, so the validator judges every value then."""
    if schema is True:
        return _always
    if not isinstance(schema, dict) or set(schema) - _ANNOTATIONS - {
        "type",
        "enum",
        "minimum",
        "properties",
        "additionalProperties",
        "required",
        "items",
    }:
        return _never
    tests: list[Callable[[Any], bool]] = []
    if "type" in schema:
        kinds = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
        if any(kind not in _TYPES for kind in kinds):
            return _never
        of_type = [_TYPES[kind] for kind in kinds]
        tests.append(of_type[0] if len(of_type) == 1 else lambda value: any(test(value) for test in of_type))
    if "enum" in schema:
        if not all(isinstance(option, str) for option in schema["enum"]):
            return _never
        options = frozenset(schema["enum"])
        if schema.get("type") == "string":  # a text among the options is text
            tests.pop()
        tests.append(lambda value: isinstance(value, str) and value in options)
    if "minimum" in schema:
        least, is_number = schema["minimum"], _TYPES["number"]
        tests.append(lambda value: not is_number(value) or isinstance(value, (int, float)) and not value < least)
    if {"properties", "additionalProperties", "required"} & set(schema):
        tests.append(_object_test(schema))
    if "items" in schema:
        if not isinstance(schema["items"], dict):
            return _never
        tests.append(_items_test(_conforming(schema["items"])))
    if len(tests) == 1:
        return tests[0]

    def every(value: Any) -> bool:
        for test in tests:
            if not test(value):
                return False
        return True

    return every


def _items_test(item: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``_conforming``'s test of an array's ``items``."""
    is_array = _TYPES["array"]

    def test(value: Any) -> bool:
        if is_array(value):
            for each in value:
                if not item(each):
                    return False
        return True

    return test


def _object_test(schema: dict[str, Any]) -> Callable[[Any], bool]:
    """``_conforming``'s test of an object's ``properties``, ``additionalProperties`` and ``required``: one pass
    over the object's keys."""
    named = {key: _conforming(sub) for key, sub in schema.get("properties", {}).items()}
    others = schema.get("additionalProperties", True)
    other = None if others is False else _conforming(others)
    required, is_object = list(schema.get("required", ())), _TYPES["object"]

    def test(value: Any) -> bool:
        if not is_object(value):
            return True
        for key, item in value.items():
            check = named.get(key, other)
            if check is None or not check(item):
                return False
        return all(key in value for key in required)

    return test


def _never(value: Any) -> bool:
    return False


def _always(value: Any) -> bool:
    return True


_LANE_CONFORMS = _conforming(_CLOSED_SCHEMA["items"])
"""Whether a configured lane meets the contract's schema, quickly (``_conforming``)."""
_FIELD_CONFORMS = {key: _conforming(sub) for key, sub in _CLOSED_SCHEMA["items"]["properties"].items()}
"""Whether the value of a lane's field meets the contract's schema, quickly, by field."""


def _schema_words(
    lanes: Any, path: tuple[Any, ...], validator: str, value: Any, expected: Any
) -> Iterator[tuple[tuple[Any, ...], str]]:
    """The words of one schema error (the path of the value it refuses, the schema keyword it fails, that value, the
    keyword's own value), each with where it is said (``lanes_config_problems``); none for a value the pack reads
    leniently (``LENIENT``; a list, map or number that is null: none given)."""
    if not path:
        yield (), f"lanes: expected a list of lanes, got {value!r}"
        return
    i, field, rest = path[0], path[1] if len(path) > 1 else None, path[2:]
    where = f"lanes[{i}]"
    if field is None:
        if validator == "type":
            yield (i,), f"{where}: expected a lane {{name, labels, taints, ...}}, got {value!r}"
        elif validator == "required":
            yield (i, "name"), f"{where}.name: every lane needs a name"
        elif validator == "additionalProperties":
            for key in value:
                if key not in LANE_FIELDS:
                    close = closest(key, LANE_FIELDS, cutoff=0.6)
                    hint = f" (did you mean '{close}'?)" if close else f" (expected {', '.join(LANE_FIELDS)})"
                    yield (i, key), f"{where}.{key}: unknown key{hint}"
    elif field in LENIENT or (value is None and not rest and field not in ("name", "labels")):
        return
    elif field == "name":
        yield (i, "name"), f"{where}.name: every lane needs a name"
    elif field == "labels" and not rest:
        yield (i, "labels"), f"{where}.labels: expected a mapping of label to value, got {value!r}"
    elif field == "labels" and not syntax.qualified_name_problem(str(rest[0])):  # else its key is what is wrong
        yield (i, *path[1:]), f"{where}.labels.{rest[0]}: invalid label value {value!r} (must be a string)"
    elif field == "taints":
        yield from _taint_words(path, validator, value, expected)
    elif field in _LIST_FIELDS and validator == "type":
        yield (i, field), f"{where}.{field}: expected a list of names, got {lanes[i][field]!r}"
    elif field == "maxGpusPerNode":
        yield (i, field), f"{where}.maxGpusPerNode: expected a whole number of GPUs, got {value!r}"
    elif field == "allocatable" and not rest and validator == "additionalProperties":
        for key in value:
            if lane_contract.ALLOCATABLE_ALIASES.get(key, key) not in fit.SIZED:
                yield (
                    (i, field, key),
                    f"{where}.allocatable.{key}: unknown resource (expected {', '.join(fit.SIZED)})",
                )
    elif field == "allocatable" and not rest:
        yield (i, field), f"{where}.allocatable: expected {{cpu, memory, ephemeral-storage}}, got {value!r}"
    elif field == "allocatable":
        yield (i, *path[1:]), _invalid_quantity(where, rest[0], value)


def _taint_words(
    path: tuple[Any, ...], validator: str, value: Any, expected: Any
) -> Iterator[tuple[tuple[Any, ...], str]]:
    """The words of a schema error in a lane's ``taints`` (``_schema_words``)."""
    i, rest = path[0], path[2:]
    if not rest:
        yield (i, "taints"), f"lanes[{i}].taints: expected a list of {{key, value, effect}}, got {value!r}"
        return
    at = f"lanes[{i}].taints[{rest[0]}]"
    if len(rest) == 2:
        yield path, _taint_field_words(at, rest[1], value)
    elif validator == "type":
        yield path, f"{at}: expected {{key, value, effect}}, got {value!r}"
    elif validator == "required":
        yield from (((*path, name), _taint_field_words(at, name, None)) for name in expected if name not in value)
    elif validator == "additionalProperties":
        unknown = sorted(set(map(str, value)) - set(_TAINT_FIELDS))
        yield (*path, _UNKNOWN), f"{at}.{unknown[0]}: unknown key (expected {', '.join(_TAINT_FIELDS)})"


def _taint_field_words(at: str, name: str, value: Any) -> str:
    """What is wrong with a taint's ``key``, ``value`` or ``effect``."""
    if name == "effect":
        expected = ", ".join(contract.BLOCKING_EFFECTS)
        return f"{at}.effect: invalid taint effect {value!r} (expected {expected} or PreferNoSchedule)"
    return f"{at}.{name}: invalid taint {name} {value!r}"


def _invalid_quantity(where: str, key: Any, value: Any) -> str:
    return f"{where}.allocatable.{key}: invalid quantity {number_text(value)} (0 or more, like 3920m, 14481Mi, 17Gi)"


def _rule_words(i: int, entry: Mapping[str, Any], seen: dict[str, int]) -> Iterator[tuple[tuple[Any, ...], str]]:
    """What a lane breaks of the rules no schema states, each with where it is said (``lanes_config_problems``):
    a name given once and not empty, label keys and values, taint keys and values, instance types, quantities.
    ``seen``: the names of the lanes before, by their index."""
    where = f"lanes[{i}]"
    name = entry.get("name")
    if isinstance(name, str) and name in seen:
        yield (i, "name"), f"{where}.name: duplicate lane name '{name}' (also lanes[{seen[name]}])"
    elif isinstance(name, str) and name:
        seen[name] = i
    elif isinstance(name, str):
        yield (i, "name"), f"{where}.name: every lane needs a name"
    for key, value in bootfacts.as_map(entry.get("labels")).items():
        problem = syntax.qualified_name_problem(str(key))
        if problem:
            yield (i, "labels", key), f"{where}.labels: invalid label key '{key}' ({problem})"
        elif isinstance(value, str) and (problem := syntax.label_value_problem(value)):
            yield (i, "labels", key), f"{where}.labels.{key}: invalid label value {value!r} ({problem})"
    taints = entry.get("taints")
    for j, taint in enumerate(taints if isinstance(taints, Sequence) and not isinstance(taints, str) else ()):
        for name, check in (("key", syntax.qualified_name_problem), ("value", syntax.label_value_problem)):
            given = taint.get(name) if isinstance(taint, Mapping) else None
            if isinstance(given, str) and check(given):
                yield (i, "taints", j, name), _taint_field_words(f"{where}.taints[{j}]", name, given)
    types = entry.get("instanceTypes")
    for k, t in enumerate(types if isinstance(types, Sequence) and not isinstance(types, str) else ()):
        if isinstance(t, str) and syntax.instance_type_problem(t):
            yield (
                (i, "instanceTypes", k),
                f"{where}.instanceTypes: invalid instance type '{t}' (must look like g4dn.xlarge)",
            )
        elif isinstance(t, str) and (unmade := syntax.unmade_instance_type(t)):
            yield (i, "instanceTypes", k), f"{where}.instanceTypes: {unmade}"
    for key, value in bootfacts.as_map(entry.get("allocatable")).items():
        # a number with no digits ("m") is a quantity Kubernetes reads as 0, but no size a config means
        amount = (
            fit.quantity(value)
            if not isinstance(value, bool) and (not isinstance(value, str) or any(c.isdigit() for c in value))
            else None
        )
        if lane_contract.ALLOCATABLE_ALIASES.get(key, key) in fit.SIZED and (
            amount is None or not math.isfinite(amount) or amount < 0
        ):
            yield (i, "allocatable", key), _invalid_quantity(where, key, value)


def _said_order(lanes: Sequence[Any], where: tuple[Any, ...]) -> tuple[int, ...]:
    """Where a problem is said among a config's: by lane, then unknown keys (in the lane's order), ``name``,
    ``labels`` (by key), ``taints`` (by taint: the taint, its key, value, effect, unknown keys), the lists of names,
    each instance type, ``maxGpusPerNode``, ``allocatable`` (by key), and last a lane that launches nothing."""
    if not where:
        return ()
    i, field, rest = where[0], where[1] if len(where) > 1 else None, where[2:]
    entry = lanes[i]
    if field is None:
        return (i, -1)
    if field is _LAUNCHES:
        return (i, 9)
    if field not in LANE_FIELDS:
        return (i, 0, list(entry).index(field))
    if field in ("labels", "allocatable"):
        keys = list(bootfacts.as_map(entry.get(field)))
        return (i, 2 if field == "labels" else 8, keys.index(rest[0]) if rest else -1)
    if field == "taints":
        return (
            i,
            3,
            *((rest[0], (None, *_TAINT_FIELDS, _UNKNOWN).index(rest[1]) if len(rest) > 1 else 0) if rest else (-1,)),
        )
    if field in _LIST_FIELDS and not rest:
        return (i, 4, _LIST_FIELDS.index(field))
    return (i, {"name": 1, "instanceTypes": 5, "maxGpusPerNode": 7}[field], *rest)


_SHAPE_FIELDS = (
    ("instanceTypes", wellknown.TYPE_KEY),
    ("instanceFamilies", wellknown.KARPENTER_PREFIX + "instance-family"),
    ("instanceSizes", wellknown.KARPENTER_PREFIX + "instance-size"),
    ("arch", wellknown.ARCH_KEY),
)
"""A configured lane's fields that say which instances it launches, and the label each one sets."""


def _launches_nothing(entry: Mapping[str, Any]) -> list[str]:
    """A lane whose instance types, families, sizes and architecture leave no instance it could launch
    (``g4dn.xlarge`` with ``arch: [arm64]``, ``g5`` with ``nano``): the lane is wrong, not the pods aimed at it."""
    given = [(name, key, tuple(entry[name])) for name, key in _SHAPE_FIELDS if entry.get(name)]
    if len(given) < 2:
        return []
    requirements = tuple(wellknown.Requirement(key, "In", values) for _, key, values in given)
    types, unsized = wellknown.launchable(requirements)
    if types or unsized:
        return []
    said = " and ".join(f"{name} {', '.join(values)}" for name, _, values in given)
    return [f"{said} leave no instance type it could launch (they contradict each other: {_each_alone(given)})"]


def _each_alone(given: Sequence[tuple[str, str, tuple[str, ...]]]) -> str:
    """What each field of a contradicting lane allows on its own, for the fix."""
    found = []
    for name, key, values in given:
        if name == "arch":
            continue
        types, _ = wellknown.launchable((wellknown.Requirement(key, "In", values),))
        arches = sorted({wellknown.K8S_ARCH[t.arch] for t in types})
        sizes = sorted({t.size for t in types}, key=lambda size: next(t.vcpus for t in types if t.size == size))
        if types:
            found.append(
                f"{name} {', '.join(values)} {'is' if len(values) == 1 else 'are'} {'/'.join(arches)}, "
                f"sizes {', '.join(sizes[:8])}{', ...' if len(sizes) > 8 else ''}"
            )
    return "; ".join(found) or "no instance type has them all"


def config_findings(config: Mapping[str, Any]) -> list[Finding]:
    """The policy config's problems, as findings (a config the pack cannot read judges nothing)."""
    return [Finding(f"policy config {problem}", "") for problem in lanes_config_problems(config.get("lanes"))]
