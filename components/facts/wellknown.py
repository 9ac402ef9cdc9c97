"""What a Karpenter NodePool's requirements let it launch, read against the instance-family table.

Karpenter (v1.14.1) fills well-known labels for every instance type (karpenter-provider-aws
``pkg/apis/v1/labels.go``, values from ``pkg/providers/instancetype/types.go``): family, category
and generation from the type's name, the architecture, and the GPU and accelerator labels
(manufacturer, name, count, memory). A label an instance type cannot fill does not exist on it, so
``instance-gpu-count Exists`` selects GPU types and ``DoesNotExist`` excludes them, and a numeric
operator (``Gt``, ``Lt``, ``Gte``, ``Lte``) on a label the type lacks is never satisfied. EKS Auto Mode
pools use the same labels under ``eks.amazonaws.com/``. A requirement is satisfied by a type when
its operator holds for that type's label (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``,
``Lt``, ``Gte``, ``Lte``; core ``pkg/scheduling/requirement.go``).

This module evaluates the requirements per *family* from ``instances`` (the table): the families a
pool can launch (its candidates), their architectures, and whether the pool *selects* NVIDIA GPUs
(a requirement asks for GPUs: a GPU family or type, category ``g``/``p``, a GPU manufacturer, name,
count or memory; and NVIDIA families remain among the candidates). Labels the table cannot answer per
family (the GPU's exact name and count, CPU, memory, size) never exclude a family that has the label.

Standard library and ``instances`` only.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from . import instances

KARPENTER_PREFIX = "karpenter.k8s.aws/"
AUTO_MODE_PREFIX = "eks.amazonaws.com/"
ARCH_KEY = "kubernetes.io/arch"
TYPE_KEY = "node.kubernetes.io/instance-type"
FAMILY_KEY = KARPENTER_PREFIX + "instance-family"
OS_KEY = "kubernetes.io/os"
K8S_ARCH = {instances.X86: "amd64", instances.ARM: "arm64"}
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")

_PRESENT = object()
"""A label the family has, whose value the table cannot give (the exact GPU name, count, memory)."""
_GPU_LABELS = ("instance-gpu-manufacturer", "instance-gpu-name", "instance-gpu-count", "instance-gpu-memory")
_ACCELERATOR_LABELS = ("instance-accelerator-manufacturer", "instance-accelerator-name", "instance-accelerator-count")
MODELLED = frozenset(
    {"instance-family", "arch", "instance-category", "instance-generation", *_GPU_LABELS, *_ACCELERATOR_LABELS}
)
"""The labels the table answers per family; any other label (cpu, memory, size, zone, custom) excludes nothing."""
_CATEGORY_RE = re.compile(r"([a-z]+)(?:-[0-9]+tb)?([0-9]+)")
OTHER_X86 = "<any other x86_64 family>"
"""The families the table leaves out (it lists every accelerated and Graviton family): x86_64, no
accelerator, any category and generation. A requirement naming families never selects it."""


@dataclass(frozen=True)
class Requirement:
    key: str
    """The label as written (``karpenter.k8s.aws/instance-family``)."""
    operator: str
    values: tuple[str, ...]

    @property
    def label(self) -> str:
        """The label without its domain: ``instance-family``, ``instance-type``, ``arch``; any other key as it is,
        marked so that a custom label of the same name (``instance-type: trn1-32xl``) is never taken for one."""
        for prefix in (KARPENTER_PREFIX, AUTO_MODE_PREFIX):
            if self.key.startswith(prefix):
                return self.key[len(prefix) :]
        return {TYPE_KEY: "instance-type", ARCH_KEY: "arch"}.get(self.key, f"custom {self.key}")

    def __str__(self) -> str:
        values = f" [{', '.join(self.values)}]" if self.operator not in ("Exists", "DoesNotExist") else ""
        return f"{self.key} {self.operator}{values}"


def read(requirements: Any) -> list[Requirement]:
    """A NodePool's ``spec.template.spec.requirements`` (dicts or the policy SDK's proxies)."""
    found = []
    for item in requirements if isinstance(requirements, Sequence) and not isinstance(requirements, str) else ():
        if not isinstance(item, Mapping):
            continue
        key, operator = item.get("key"), item.get("operator")
        values = item.get("values")
        values = values if isinstance(values, Sequence) and not isinstance(values, str) else ()
        if isinstance(key, str) and operator in OPERATORS:
            found.append(Requirement(key, str(operator), tuple(str(v) for v in values)))
    return found


# ---- a family's labels ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def family_labels(family: str) -> dict[str, Any]:
    """The well-known labels an instance of ``family`` gets (``_PRESENT`` where only presence is known)."""
    if family == OTHER_X86:
        return {
            "instance-family": _PRESENT,
            "arch": "amd64",
            "instance-category": _PRESENT,
            "instance-generation": _PRESENT,
        }
    facts = instances.facts(family)
    match = _CATEGORY_RE.match(facts.name)
    labels: dict[str, Any] = {
        "instance-family": facts.name,
        "arch": K8S_ARCH.get(facts.arch, facts.arch),
    }
    if match:
        labels["instance-category"] = match.group(1)
        labels["instance-generation"] = match.group(2)
    if facts.gpu:
        labels.update(
            {
                "instance-gpu-manufacturer": facts.gpu,
                "instance-gpu-name": _PRESENT,
                "instance-gpu-count": _PRESENT,
                "instance-gpu-memory": _PRESENT,
            }
        )
    if facts.neuron or facts.accelerator == "Qualcomm AI 100":
        labels.update(
            {
                "instance-accelerator-manufacturer": "aws" if facts.neuron else "qualcomm",
                "instance-accelerator-name": _PRESENT,
                "instance-accelerator-count": _PRESENT,
            }
        )
    return labels


def _number(text: str) -> Optional[int]:
    return int(text) if text.isdigit() else None


def satisfies(requirement: Requirement, family: str, labels: Mapping[str, Any]) -> bool:
    """Whether some instance type of ``family`` (with ``labels``) can satisfy ``requirement``."""
    label, op, values = requirement.label, requirement.operator, requirement.values
    if family == OTHER_X86 and label in ("instance-family", "instance-type") and op == "In":
        return False  # named families are candidates of their own
    if label == "instance-type":
        if op == "In":
            return any(instances.family_of(v) == family for v in values)
        if op == "DoesNotExist":
            return False
        return True  # NotIn a few sizes, Exists: the family keeps other sizes
    if label not in MODELLED:
        return True
    value = labels.get(label)
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if value is None:
        return op == "NotIn"
    if value is _PRESENT:
        if label == "instance-gpu-count" and op in ("Lt", "Lte") and values:
            bound = _number(values[0])
            return bound is None or bound > (1 if op == "Lt" else 0)
        if label == "instance-gpu-count" and op == "In":
            return any(v != "0" for v in values)
        return True  # the exact value is unknown: the family may have a size that fits
    if op == "In":
        return value in values
    if op == "NotIn":
        return value not in values
    have, bound = _number(str(value)), _number(values[0]) if values else None
    if have is None or bound is None:
        return True
    return {"Gt": have > bound, "Lt": have < bound, "Gte": have >= bound, "Lte": have <= bound}[op]


def candidates(requirements: Sequence[Requirement]) -> list[str]:
    """The families the requirements let a pool launch: the table's, any the pool names, and ``OTHER_X86``."""
    return list(_candidates(tuple(requirements)))


@functools.lru_cache(maxsize=1024)
def _candidates(requirements: tuple[Requirement, ...]) -> tuple[str, ...]:
    named = {
        instances.family_of(v)
        for r in requirements
        if r.operator == "In" and r.label in ("instance-family", "instance-type")
        for v in r.values
    }
    universe = sorted(set(instances.FAMILIES) | named) + [OTHER_X86]
    return tuple(f for f in universe if all(satisfies(r, f, family_labels(f)) for r in requirements))


def architectures(requirements: Sequence[Requirement]) -> list[str]:
    """The EC2 architectures (``x86_64``, ``arm64``) the pool can launch."""
    return sorted({instances.X86 if f == OTHER_X86 else instances.instance_arch(f) for f in candidates(requirements)})


def _asks_for_gpus(requirement: Requirement) -> bool:
    """A requirement that selects GPU instances (an exclusion never does)."""
    label, op, values = requirement.label, requirement.operator, requirement.values
    if label in ("instance-family", "instance-type"):
        return op == "In" and any(instances.is_nvidia_gpu_family(v) for v in values)
    if label == "instance-category":
        return op == "In" and any(v in ("g", "p", "gr") for v in values)
    if label in _GPU_LABELS:
        if op in ("NotIn", "DoesNotExist"):
            return False
        if label == "instance-gpu-manufacturer" and op == "In":
            return instances.NVIDIA in values
        if label == "instance-gpu-count" and op == "In":
            return any(v != "0" for v in values)
        if op in ("Lt", "Lte") and values:
            bound = _number(values[0])
            return bound is not None and bound > (1 if op == "Lt" else 0)
        return True
    return False


def gpu_selection(requirements: Sequence[Requirement]) -> Optional[str]:
    """What in the requirements selects NVIDIA GPUs, worded for '<reason> make this a GPU lane'; None if nothing.

    Families and types are named as the components name them (``instance families g5,g6``); other
    requirements by their label, operator and values."""
    asking = [r for r in requirements if _asks_for_gpus(r)]
    if not asking:
        return None
    nvidia = [f for f in candidates(requirements) if f != OTHER_X86 and instances.is_nvidia_gpu_family(f)]
    if not nvidia:
        return None  # the other requirements leave no NVIDIA family (AMD only, or none at all)
    for label, what in (("instance-family", "instance families"), ("instance-type", "instance types")):
        listed = [
            v
            for r in asking
            if r.label == label
            for v in r.values
            if instances.is_nvidia_gpu_family(v) and instances.family_of(v) in nvidia
        ]
        if listed:
            return f"{what} {','.join(listed)}"
    return "requirements " + " and ".join(str(r) for r in asking)


# ---- instance types: the sizes a pool can launch --------------------------------------------------------------

CAPACITY_TYPE_KEY = "karpenter.sh/capacity-type"
"""On Karpenter's nodes: ``on-demand``, ``spot`` or ``reserved``; Karpenter launches on-demand when a pool
does not say (karpenter-provider-aws, NodePools: capacity type defaults to on-demand)."""
EKS_CAPACITY_TYPE_KEY = "eks.amazonaws.com/capacityType"
"""On a managed node group's nodes: ``ON_DEMAND`` or ``SPOT``."""
_TYPE_LABELS = ("instance-type", "instance-size", "instance-cpu", "instance-memory", "instance-gpu-count")
"""Labels with a value per instance type (the table's sizes answer them)."""


def _type_label(label: str, itype: instances.InstanceType) -> Optional[str]:
    if label == "instance-type":
        return itype.name
    if label == "instance-size":
        return itype.size
    if label == "instance-cpu":
        return str(itype.vcpus)
    if label == "instance-memory":
        return str(itype.memory_mib)
    return str(itype.gpus) if instances.is_gpu_family(itype.name) else None


def holds(operator: str, values: Sequence[str], value: Optional[str]) -> bool:
    """Whether a requirement (Karpenter's operators, ``Gte``/``Lte`` included) holds for a label's value
    (None: the node does not carry the label)."""
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator == "NotIn":
        return value is None or value not in values
    if value is None:
        return False
    if operator == "In":
        return value in values
    have, bound = _number(value), _number(values[0]) if values else None
    if have is None or bound is None:
        return False
    return {"Gt": have > bound, "Lt": have < bound, "Gte": have >= bound, "Lte": have <= bound}.get(operator, False)


def type_satisfies(requirement: Requirement, itype: instances.InstanceType) -> bool:
    """Whether one instance type meets a requirement on a per-type label (others: its family decides)."""
    if requirement.label not in _TYPE_LABELS:
        return True
    return holds(requirement.operator, requirement.values, _type_label(requirement.label, itype))


@functools.lru_cache(maxsize=4096)
def launchable(requirements: tuple[Requirement, ...]) -> tuple[tuple[instances.InstanceType, ...], tuple[str, ...]]:
    """The sized instance types the requirements let a pool launch, and the candidate families the
    table cannot size (a family it does not list): ``((types...), (unsized families...))``."""
    families = [f for f in _candidates(requirements) if f != OTHER_X86]
    if OTHER_X86 in _candidates(requirements):  # the sized x86 families without an accelerator
        families += [
            f
            for f in instances.sized_families()
            if f not in instances.FAMILIES
            and f not in families
            and all(satisfies(r, f, family_labels(f)) for r in requirements)
        ]
    types: list[instances.InstanceType] = []
    unsized: list[str] = []
    for family in families:
        sized = instances.sizes(family)
        if not sized:
            unsized.append(family)
        types += [t for t in sized if all(type_satisfies(r, t) for r in requirements)]
    return tuple(types), tuple(unsized)
