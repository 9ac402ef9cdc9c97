"""Lanes from the policy config: the workload policies' ``lanes`` (another stack's ``Rack`` output), read into
lanes and checked against the lane contract (``lane.ConfiguredLane``, whose JSON schema the CLI checks), and the
facts the ``Rack`` writes into its ``lanes`` output for it (``size_facts``)."""

from __future__ import annotations


import math
from typing import Any, Mapping, Optional, Sequence

from .. import contract, syntax
from ..inputs import closest
from .. import lane as lane_contract
from ..facts import wellknown
from . import bootfacts, fit
from .scheduling import Selection
from .lanemodel import Finding, Lane, number_text, read_labels, read_taints

def configured_lanes(config: Mapping[str, Any]) -> list[Lane]:
    """The policy config's ``lanes`` (a stack whose rack is elsewhere): ``[{name, labels, taints, gpu}]``
    and what sizes their nodes (``arch``, ``instanceTypes`` or ``instanceFamilies`` with ``instanceSizes``,
    ``capacityTypes``, ``maxGpusPerNode``, ``allocatable``), as the rack's ``lanes`` output gives them."""
    lanes = []
    for entry in bootfacts.as_list(config.get("lanes")):
        entry = bootfacts.as_map(entry)
        labels, taints = read_labels(entry.get("labels")), read_taints(entry.get("taints"))
        requirements: list[wellknown.Requirement] = []
        for key, field_name in ((wellknown.TYPE_KEY, "instanceTypes"), (wellknown.KARPENTER_PREFIX + "instance-family", "instanceFamilies"),
                                (wellknown.KARPENTER_PREFIX + "instance-size", "instanceSizes"), (wellknown.ARCH_KEY, "arch")):
            values = tuple(bootfacts.text(v) for v in bootfacts.as_list(entry.get(field_name)))
            if values:
                requirements.append(wellknown.Requirement(key, "In", values))
        capacity = tuple(bootfacts.text(v) for v in bootfacts.as_list(entry.get("capacityTypes")))
        offered = ((wellknown.CAPACITY_TYPE_KEY, tuple(v.lower().replace("_", "-") for v in capacity)),
                   (wellknown.EKS_CAPACITY_TYPE_KEY, tuple(v.upper().replace("-", "_") for v in capacity))) if capacity else ()
        stated = {lane_contract.ALLOCATABLE_ALIASES.get(k, k): v for k, v in bootfacts.as_map(entry.get("allocatable")).items()}
        allocatable = None
        if stated:
            amounts = {r: fit.quantity(stated.get(r)) for r in fit.SIZED}
            allocatable = fit.Allocatable(round((amounts[fit.CPU] or 0) * 1000) if amounts[fit.CPU] is not None else 10**9,
                                          *(int(amount / fit.MIB) if (amount := amounts[r]) is not None else 10**12
                                            for r in (fit.MEMORY, fit.EPHEMERAL)))
        most = bootfacts.number(entry.get("maxGpusPerNode"))
        most = most if most is not None and math.isfinite(most) else None
        kind = CONFIG_KINDS.get(bootfacts.text(entry.get("kind")), "lane")
        lanes.append(Lane(bootfacts.text(entry.get("name")), kind, labels, taints, entry.get("gpu") is True,
                          tuple(requirements), offered, stated=allocatable, max_gpus=int(most) if most is not None else None))
    return lanes


CONFIG_KINDS = {"nodepool": "pool", "nodegroup": "node group"}
"""The rack's ``lanes`` output's ``kind`` -> how messages name the lane."""


def size_facts(requirements: Sequence[wellknown.Requirement], limits: Mapping[str, float] = {},
               root_gib: Optional[float] = None) -> dict[str, Any]:
    """What the fit check needs of a lane, for the rack's ``lanes`` output (and so the policy config):
    ``arch``, ``maxGpusPerNode`` and the ``allocatable`` of its largest instance type (``largestInstanceType``)."""
    lane = Lane("", "lane", requirements=tuple(requirements), limits=tuple(limits.items()), root_gib=root_gib)
    types, _, _ = lane.launchable(Selection())
    found: dict[str, Any] = {"arch": sorted({wellknown.K8S_ARCH[t.arch] for t in types})}
    if types:
        largest = max(types, key=lambda t: (t.vcpus, t.memory_mib, t.gpus))
        free = fit.allocatable(largest, root_gib)
        found.update(maxGpusPerNode=max(t.gpus for t in types), largestInstanceType=largest.name,
                     allocatable={fit.CPU: f"{free.cpu_m}m", fit.MEMORY: f"{free.memory_mib}Mi",
                                  fit.EPHEMERAL: f"{free.ephemeral_mib}Mi"})
    return found


EFFECT_NAMES = sorted(effect.value for effect in lane_contract.TaintEffect)
"""Taint effects in Kubernetes' spelling or EKS's."""
LANE_FIELDS: Mapping[str, Any] = lane_contract.fields()
"""A lane's fields (``lane.ConfiguredLane``): the rack's ``lanes`` output passes as it is (``os``, ``ami``,
``largestInstanceType``, ``worstCaseHourlyUsd``, ``worstCaseRolloutHourlyUsd``, ``canaryOf`` and
``capacityReservationIds`` are not read)."""
LANES_SCHEMA: dict[str, Any] = lane_contract.config_schema(
    "Lanes this stack's workloads may land on when the stack itself declares none (the rack is "
    "another stack): [{name, labels, taints: [{key, value, effect}], gpu, arch, instanceTypes, "
    "instanceFamilies, instanceSizes, capacityTypes, maxGpusPerNode, allocatable}], e.g. the rack "
    "stack's lanes output.")
"""The ``lanes`` property of both workload policies' config (what the CLI checks before ``Configure``)."""


def lanes_config_problems(lanes: Any) -> list[str]:
    """What is wrong with a ``lanes`` policy config, each naming its path (``lanes[1].taint``)."""
    if lanes is None:
        return []
    if not isinstance(lanes, Sequence) or isinstance(lanes, str):
        return [f"lanes: expected a list of lanes, got {lanes!r}"]
    problems: list[str] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(lanes):
        where = f"lanes[{i}]"
        if not isinstance(entry, Mapping):
            problems.append(f"{where}: expected a lane {{name, labels, taints, ...}}, got {entry!r}")
            continue
        for key in entry:
            if key not in LANE_FIELDS:
                close = closest(key, LANE_FIELDS, cutoff=0.6)
                hint = f" (did you mean '{close}'?)" if close else f" (expected {', '.join(LANE_FIELDS)})"
                problems.append(f"{where}.{key}: unknown key{hint}")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            problems.append(f"{where}.name: every lane needs a name")
        elif name in seen:
            problems.append(f"{where}.name: duplicate lane name '{name}' (also lanes[{seen[name]}])")
        else:
            seen[name] = i
        for key, value in bootfacts.as_map(entry.get("labels")).items():
            problem = syntax.qualified_name_problem(str(key))
            if problem:
                problems.append(f"{where}.labels: invalid label key '{key}' ({problem})")
            elif not isinstance(value, str) or syntax.label_value_problem(value):
                problems.append(f"{where}.labels.{key}: invalid label value {value!r} "
                                f"({syntax.label_value_problem(value) if isinstance(value, str) else 'must be a string'})")
        if "labels" in entry and not isinstance(entry["labels"], Mapping):
            problems.append(f"{where}.labels: expected a mapping of label to value, got {entry['labels']!r}")
        taints = entry.get("taints")
        if taints is not None and (not isinstance(taints, Sequence) or isinstance(taints, str)):
            problems.append(f"{where}.taints: expected a list of {{key, value, effect}}, got {taints!r}")
            taints = []
        for j, taint in enumerate(taints or []):
            at = f"{where}.taints[{j}]"
            if not isinstance(taint, Mapping):
                problems.append(f"{at}: expected {{key, value, effect}}, got {taint!r}")
                continue
            key, value, effect = taint.get("key"), taint.get("value"), taint.get("effect")
            if not isinstance(key, str) or syntax.qualified_name_problem(key):
                problems.append(f"{at}.key: invalid taint key {key!r}")
            if value is not None and (not isinstance(value, str) or syntax.label_value_problem(value)):
                problems.append(f"{at}.value: invalid taint value {value!r}")
            if effect not in EFFECT_NAMES:
                problems.append(f"{at}.effect: invalid taint effect {effect!r} (expected {', '.join(contract.BLOCKING_EFFECTS)} "
                                f"or PreferNoSchedule)")
            unknown_keys = sorted(set(map(str, taint)) - {"key", "value", "effect"})
            if unknown_keys:
                problems.append(f"{at}.{unknown_keys[0]}: unknown key (expected key, value, effect)")
        for field_name in ("arch", "instanceTypes", "instanceFamilies", "instanceSizes", "capacityTypes"):
            value = entry.get(field_name)
            if value is not None and (not isinstance(value, Sequence) or isinstance(value, str)
                                      or not all(isinstance(v, str) for v in value)):
                problems.append(f"{where}.{field_name}: expected a list of names, got {value!r}")
        types = entry.get("instanceTypes")
        for t in types if isinstance(types, Sequence) and not isinstance(types, str) else []:  # text is said above
            if isinstance(t, str) and syntax.instance_type_problem(t):
                problems.append(f"{where}.instanceTypes: invalid instance type '{t}' (must look like g4dn.xlarge)")
            elif isinstance(t, str) and (unmade := syntax.unmade_instance_type(t)):
                problems.append(f"{where}.instanceTypes: {unmade}")
        most = entry.get("maxGpusPerNode")
        if most is not None and (isinstance(most, bool) or not isinstance(most, (int, float)) or not math.isfinite(most)
                                 or most < 0 or most != int(most)):
            problems.append(f"{where}.maxGpusPerNode: expected a whole number of GPUs, got {most!r}")
        allocatable = entry.get("allocatable")
        if allocatable is not None:
            if not isinstance(allocatable, Mapping):
                problems.append(f"{where}.allocatable: expected {{cpu, memory, ephemeral-storage}}, got {allocatable!r}")
            else:
                for key, value in allocatable.items():
                    # a number with no digits ("m") is a quantity Kubernetes reads as 0, but no size a config means
                    amount = (fit.quantity(value) if not isinstance(value, bool)
                              and (not isinstance(value, str) or any(c.isdigit() for c in value)) else None)
                    if lane_contract.ALLOCATABLE_ALIASES.get(key, key) not in fit.SIZED:
                        problems.append(f"{where}.allocatable.{key}: unknown resource (expected {', '.join(fit.SIZED)})")
                    elif amount is None or not math.isfinite(amount) or amount < 0:
                        problems.append(f"{where}.allocatable.{key}: invalid quantity {number_text(value)} "
                                        f"(0 or more, like 3920m, 14481Mi, 17Gi)")
        if not any(p.startswith(f"{where}.") for p in problems):
            problems += [f"{where}: {problem}" for problem in _launches_nothing(entry)]
    return problems


_SHAPE_FIELDS = (("instanceTypes", wellknown.TYPE_KEY), ("instanceFamilies", wellknown.KARPENTER_PREFIX + "instance-family"),
                 ("instanceSizes", wellknown.KARPENTER_PREFIX + "instance-size"), ("arch", wellknown.ARCH_KEY))
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
    return [f"{said} leave no instance type it could launch (they contradict each other: "
            f"{_each_alone(given)})"]


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
            found.append(f"{name} {', '.join(values)} {'is' if len(values) == 1 else 'are'} {'/'.join(arches)}, "
                         f"sizes {', '.join(sizes[:8])}{', ...' if len(sizes) > 8 else ''}")
    return "; ".join(found) or "no instance type has them all"


def config_findings(config: Mapping[str, Any]) -> list[Finding]:
    """The policy config's problems, as findings (a config the pack cannot read judges nothing)."""
    return [Finding(f"policy config {problem}", "") for problem in lanes_config_problems(config.get("lanes"))]
