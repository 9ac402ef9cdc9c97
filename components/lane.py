"""The lane: the contract between a rack's stack and the stacks whose workloads land on it.

A rack's ``lanes`` output (lane name -> ``Lane``) is what another stack passes, as a list of
``ConfiguredLane`` (the same fields and its ``name``), in the ``lanes`` config of the policy pack's
workload policies. This module is that contract's one definition: the ``Rack`` output is typed with
it (and so the component package's schema, which the SDK's component host infers from it), and the
pack's ``lanes`` config schema is derived from it (``config_schema``). Keys are the wire's own
(``capacityTypes``), as the stack output and the policy config write them.

Pure: standard library only, beside ``contract`` (which names the labels and taints a lane carries).
"""

import enum
import typing
from typing import Any, Iterable, Mapping, Optional, Required, TypedDict

from . import contract


class LaneKind(enum.StrEnum):
    """What makes the lane."""

    NODEPOOL = "nodepool"
    """A Karpenter NodePool (and its EC2NodeClass)."""
    NODEGROUP = "nodegroup"
    """An EKS managed node group."""


class NodeOs(enum.StrEnum):
    """The operating system of a lane's nodes."""

    AL2023 = "al2023"
    """Amazon Linux 2023: every lane may use it; GPU lanes and pinned AMIs must."""
    BOTTLEROCKET = "bottlerocket"
    """Bottlerocket: the hardened default lane; no GPU families, no pinned AMI."""


class Arch(enum.StrEnum):
    """A CPU architecture, as the ``kubernetes.io/arch`` label writes it."""

    AMD64 = "amd64"
    """x86-64."""
    ARM64 = "arm64"
    """64-bit Arm (Graviton)."""


class TaintEffect(enum.StrEnum):
    """A taint's effect: Kubernetes' spelling (what the rack's ``lanes`` output writes), or the EKS API's
    (what a node group's taints are written in, and a hand-written policy config may use)."""

    NO_SCHEDULE = "NoSchedule"
    """Pods that do not tolerate it are not scheduled on the node."""
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    """The scheduler avoids the node for pods that do not tolerate it."""
    NO_EXECUTE = "NoExecute"
    """Pods that do not tolerate it are not scheduled, and are evicted."""
    EKS_NO_SCHEDULE = "NO_SCHEDULE"
    """``NoSchedule`` in the EKS API's spelling."""
    EKS_PREFER_NO_SCHEDULE = "PREFER_NO_SCHEDULE"
    """``PreferNoSchedule`` in the EKS API's spelling."""
    EKS_NO_EXECUTE = "NO_EXECUTE"
    """``NoExecute`` in the EKS API's spelling."""


class CapacityType(enum.StrEnum):
    """How a lane's instances are bought: Karpenter's ``karpenter.sh/capacity-type`` values, or the EKS
    API's ``capacityType`` of a node group."""

    ON_DEMAND = "on-demand"
    """On-Demand (Karpenter's spelling)."""
    SPOT = "spot"
    """Spot (Karpenter's spelling)."""
    RESERVED = "reserved"
    """A capacity reservation (Karpenter's spelling)."""
    EKS_ON_DEMAND = "ON_DEMAND"
    """On-Demand (the EKS API's spelling, a node group's)."""
    EKS_SPOT = "SPOT"
    """Spot (the EKS API's spelling, a node group's)."""
    EKS_CAPACITY_BLOCK = "CAPACITY_BLOCK"
    """A Capacity Block for ML (the EKS API's spelling, a node group's)."""


class LaneTaint(TypedDict, total=False):
    """A taint every node of a lane carries. In Python, this is the taint of a lane's record (a component's
    ``taints`` output, the pack's ``lanes`` config), its effect in Kubernetes' spelling: what a pool's
    ``mixed_os_racks.spec.pool.Taint`` (a taint a user gives a pool) and a node group's taints become, and what
    the pack reads as ``mixed_os_racks.pack.scheduling.NodeTaint`` (a taint on a node as the pack reads it)."""

    key: Required[str]
    """The taint's key (``nvidia.com/gpu``, ``dedicated-node``)."""
    value: Optional[str]
    """The taint's value; none for a taint without one."""
    effect: Required[TaintEffect]
    """The taint's effect."""


def lane_taints(taints: Iterable[Mapping[str, str]]) -> list[LaneTaint]:
    """Node taints (``{key, value, effect}``, a spec's ``node_taints()``; the effect in either spelling) as a lane's,
    the effect in Kubernetes' spelling (``NoSchedule``), as pods tolerate them; a taint without a value has none."""
    return [
        LaneTaint(key=t["key"], value=t["value"], effect=TaintEffect(contract.effect(t["effect"])))
        if "value" in t
        else LaneTaint(key=t["key"], effect=TaintEffect(contract.effect(t["effect"])))
        for t in taints
    ]


Allocatable = TypedDict("Allocatable", {"cpu": str, "memory": str, "ephemeral-storage": str}, total=False)
Allocatable.__doc__ = """What one node of the lane's largest instance type offers pods: Kubernetes quantities
(``3920m``, ``14481Mi``, ``17Gi``)."""
setattr(
    Allocatable,
    "__field_docs__",
    {  # its keys are no Python names: their docstrings (the schema's descriptions)
        "cpu": "CPU for pods (``3920m``).",
        "memory": "Memory for pods (``14481Mi``).",
        "ephemeral-storage": "Ephemeral storage for pods, from the root (Bottlerocket: data) volume (``17Gi``).",
    },
)
ALLOCATABLE_ALIASES = {"ephemeralStorage": "ephemeral-storage"}
"""An ``allocatable`` key as the SDKs of other languages name it (a schema name is an identifier in every language)
-> Kubernetes' name, which the rack's own output writes: a lane another language's program exported is read the
same."""


class AmiRef(TypedDict, total=False):
    """What a lane boots: an alias or an EKS AMI type (both follow releases), or a pinned AMI (which does not)."""

    alias: str
    """The EC2NodeClass's AMI alias (``al2023@latest``, ``bottlerocket@latest``)."""
    amiType: str
    """The EKS AMI type of a node group on EKS's AMI (``AL2023_x86_64_NVIDIA``)."""
    id: str
    """A pinned AMI's id."""
    name: str
    """A pinned AMI's name."""
    created: str
    """A pinned AMI's creation date: how old the lane's image is."""


class Lane(TypedDict, total=False):
    """A lane: where workloads land, and what fits there."""

    labels: dict[str, str]
    """The labels every node of the lane carries: what a workload's node selector names."""
    taints: list[LaneTaint]
    """The taints every node of the lane carries: what a workload must tolerate."""
    gpu: bool
    """Whether the lane offers NVIDIA GPUs (its nodes carry the GPU-vendor label and the GPU taint)."""
    arch: list[Arch]
    """The architectures its nodes can have."""
    instanceTypes: list[str]
    """Exactly the instance types it launches (a node group's one type; a pool that names them)."""
    instanceFamilies: list[str]
    """The instance families a pool may launch (``g6``); none: any."""
    instanceSizes: list[str]
    """The instance sizes a pool may launch (``2xlarge``); none: any."""
    capacityTypes: list[CapacityType]
    """How its instances are bought."""
    capacityReservationIds: list[str]
    """The EC2 capacity reservations (ODCRs, Capacity Blocks) a reserved pool launches into first, with capacity
    type ``reserved``, or the one a node group's launch template targets; none for a lane without (in the ``Rack``'s
    ``lanes`` output; not read from the policy config)."""
    reservedNodes: int
    """How many instances its capacity reservations hold, together (EC2's instance count of each, read at ``up``
    with ``DescribeCapacityReservations``): the nodes it has bought ahead, billed whether they run or not; none for
    a lane without reservations and for a canary, whose lane counts them (in the ``Rack``'s ``lanes`` output; not
    read from the policy config)."""
    maxGpusPerNode: int
    """The most GPUs one of its nodes has."""
    allocatable: Allocatable
    """What one node of its largest instance type offers pods."""
    largestInstanceType: str
    """The largest instance type it can launch (what ``allocatable`` is of)."""
    kind: LaneKind
    """What makes the lane."""
    os: NodeOs
    """The nodes' operating system."""
    ami: AmiRef
    """What it boots (in the ``Rack``'s ``lanes`` output; not read from the policy config)."""
    worstCaseHourlyUsd: Optional[float]
    """The most the lane can cost an hour on demand, in US dollars, in the stack's region (docs/cost.md): a pool's
    limits filled with the dearest types it can launch, a node group's ``max_size`` of its type; none when it is
    unbounded or not priced (in the ``Rack``'s ``lanes`` output; not read from the policy config)."""
    worstCaseRolloutHourlyUsd: Optional[float]
    """The most the lane can cost an hour while its nodes roll onto a new AMI or version (docs/cost.md): a node
    group's ``max_size`` plus EKS's update surge, a pool's limits plus the drift replacements its disruption budget
    lets run beside the nodes they replace; none when it is unbounded or not priced (in the ``Rack``'s ``lanes``
    output; not read from the policy config)."""
    canaryOf: str
    """The lane whose candidate AMI this canary lane runs (``<lane>-canary``, ``canary_ami_id``); none for a lane
    of its own (in the ``Rack``'s ``lanes`` output; not read from the policy config)."""


class ConfiguredLane(Lane, total=False):
    """A lane in the workload policies' ``lanes`` config: a ``Lane`` of the rack's ``lanes`` output, with its name."""

    name: Required[str]
    """The lane's name: the key it has in the rack's ``lanes`` output."""


def _json_schema(tp: Any) -> dict[str, Any]:
    """The JSON schema of a value of ``tp`` (this module's types: text, numbers, enums, lists, maps, TypedDicts)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Required, typing.NotRequired):
        return _json_schema(args[0])
    if origin is typing.Union:
        kinds = [a for a in args if a is not type(None)]
        schema = _json_schema(kinds[0])
        return {**schema, "type": [schema["type"], "null"]} if type(None) in args else schema
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"type": "string", "enum": [member.value for member in tp]}
    if typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        found: dict[str, Any] = {"type": "object", "properties": {k: _json_schema(v) for k, v in hints.items()}}
        if tp.__required_keys__:
            found["required"] = sorted(tp.__required_keys__)
        return found
    if origin is list:
        return {"type": "array", "items": _json_schema(args[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _json_schema(args[1])}
    return _PRIMITIVES[tp]


_PRIMITIVES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    bool: {"type": "boolean"},
    int: {"type": "integer", "minimum": 0},
    float: {"type": "number"},
}


def fields() -> Mapping[str, Any]:
    """Each field of a configured lane -> its JSON schema."""
    found = _json_schema(ConfiguredLane)["properties"]
    return {"name": found.pop("name"), **found}


QUANTITY = {"type": ["string", "number"]}
"""An allocatable amount in the policy config: a quantity, or a number (the CLI's JSON config keeps numbers)."""


def config_schema(description: str) -> dict[str, Any]:
    """The JSON schema of the workload policies' ``lanes`` config: a list of ``ConfiguredLane``. The Pulumi
    CLI checks a pack's config against it before ``Configure`` (a quantity may also be written as a number)."""
    item = _json_schema(ConfiguredLane)
    item["properties"]["allocatable"]["properties"] = {
        k: QUANTITY for k in item["properties"]["allocatable"]["properties"]
    }
    item["properties"]["ami"] = {}  # the rack's output passes as it is: not read
    return {"type": "array", "default": [], "description": description, "items": item}
