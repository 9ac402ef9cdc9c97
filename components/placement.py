"""Placement: where a workload lands, with the seeds' semantics, as plain data.

``place(node_selector_labels, gpu)`` builds the scheduling part of a pod spec from what a seeds'
service says (``nodeSelectorLabels`` and ``scale.gpu``), exactly as the seeds' rack renders it
(convox/convox ``provider/k8s/template/app/service.yml.tmpl``):

* one required node affinity term with an ``In`` requirement per selector label;
* for each selector keyed ``convox.io/label`` or ``convox.io/nodepool``, the toleration
  ``dedicated-node=<value>:NoSchedule`` (``operator: Equal``), so a dedicated lane takes it;
* for a GPU count above 0, the toleration ``<vendor resource>`` ``Exists``/``NoSchedule`` and the
  resource as both request and limit (Kubernetes requires an extended resource's request to equal
  its limit). The vendor maps as the seeds' ``gpuResourceKey``: ``nvidia``/``nvidia.com`` ->
  ``nvidia.com/gpu``, ``amd``/``amd.com`` -> ``amd.com/gpu``, anything else -> ``nvidia.com/gpu``.

Custom taints (anything but ``dedicated-node`` and the GPU taint) are not tolerated automatically.
Given the rack's lanes, ``place`` also refuses a pod no lane can hold, with the pack's words
(``pack/reach.py``, which judges the same pod at preview).
Pure: no Pulumi resources, only the contract the policy pack checks.
"""

import inspect
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Awaitable, Mapping, Optional, Sequence, TypedDict, Union, cast

from . import contract, syntax
from .errors import ConfigError
from .lane import ConfiguredLane, Lane

if TYPE_CHECKING:  # pulumi-kubernetes' input types, for the program that passes a placement on (no import at run time)
    from pulumi_kubernetes.core.v1 import AffinityArgsDict, TolerationArgsDict


@dataclass(frozen=True)
class GpuRequest:
    """GPUs a workload asks for: how many, of which vendor (the seeds' ``scale.gpu``)."""

    count: int = 0
    vendor: str = "nvidia"

    @property
    def resource(self) -> str:
        """The extended resource: ``nvidia.com/gpu`` or ``amd.com/gpu``."""
        return contract.gpu_resource(self.vendor)


GpuInput = Union[None, int, GpuRequest, Mapping[str, Any]]
"""``None``, a bare number (the count), a ``GpuRequest``, or ``{"count": 1, "vendor": "amd"}``."""


class PlacementError(ConfigError, ValueError):
    """``place``'s refusal: bad arguments, or a pod no lane can hold. A ``pulumi.RunError`` (``pulumi up``
    prints it without a traceback) and a ``ValueError``."""


def gpu_request(gpu: GpuInput) -> GpuRequest:
    """The seeds' ``scale.gpu`` in any of its shapes: a bare number is the count."""
    if gpu is None:
        return GpuRequest()
    if isinstance(gpu, GpuRequest):
        if (
            isinstance(gpu.count, bool)
            or not isinstance(gpu.count, int)
            or gpu.count < 0
            or not isinstance(gpu.vendor, str)
        ):
            raise PlacementError(f"invalid gpu {gpu!r} (count is a whole number, 0 or more; vendor a name like nvidia)")
        return gpu
    if isinstance(gpu, int) and not isinstance(gpu, bool) and gpu < 0:
        raise PlacementError(f"invalid gpu {gpu!r} (a count, 0 or more)")
    if isinstance(gpu, bool):
        raise PlacementError(f"invalid gpu {gpu!r} (use a count like 1, or {{count, vendor}})")
    if isinstance(gpu, int):
        return GpuRequest(count=gpu)
    if isinstance(gpu, Mapping):
        unknown = sorted(set(gpu) - {"count", "vendor"})
        if unknown:
            raise PlacementError(f"invalid gpu field '{unknown[0]}' (expected count and vendor)")
        count, vendor = gpu.get("count", 0), gpu.get("vendor") or "nvidia"
        if isinstance(count, bool) or not isinstance(count, int) or count < 0 or not isinstance(vendor, str):
            raise PlacementError(f"invalid gpu {dict(gpu)!r} (count is a number, vendor a name like nvidia)")
        return GpuRequest(count=count, vendor=vendor)
    raise PlacementError(f"invalid gpu {gpu!r} (use a count like 1, or {{count, vendor}})")


class Scheduling(TypedDict, total=False):
    """What placement gives a workload's pods, in Kubernetes' own field names."""

    affinity: dict[str, Any]
    """The pod's ``affinity``: a required node affinity on the lane's labels."""
    tolerations: list[dict[str, str]]
    """The pod's ``tolerations``: the lane's ``dedicated-node`` taint, the GPU taint."""
    gpuResources: dict[str, str]
    """What each container requests, and limits, beyond CPU and memory (``nvidia.com/gpu: "1"``)."""


@dataclass(frozen=True)
class Placement:
    """The scheduling part of a pod spec. ``affinity`` and ``tolerations`` are pulumi-kubernetes inputs
    (``AffinityArgsDict``, ``TolerationArgsDict``: the Python field names the SDK translates), to put in a
    ``Deployment``'s pod spec as they are; ``pod_spec()`` is the same in Kubernetes' own field names, for a
    manifest."""

    affinity: Optional["AffinityArgsDict"] = None
    """``{"node_affinity": {"required_during_scheduling_ignored_during_execution": {"node_selector_terms": ...}}}``,
    or None."""
    tolerations: list["TolerationArgsDict"] = field(default_factory=list)
    """``[{"key": "dedicated-node", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, ...]``."""
    gpu_resources: dict[str, str] = field(default_factory=dict)
    """``{"nvidia.com/gpu": "1"}``: what the container requests, and limits, beyond CPU and memory."""

    def pod_spec(self) -> dict[str, Any]:
        """The pod spec fields this placement sets (``affinity``, ``tolerations``), in Kubernetes' field names
        (``nodeAffinity``, ``requiredDuringSchedulingIgnoredDuringExecution``), as a manifest has them."""
        spec: dict[str, Any] = {}
        if self.affinity:
            spec["affinity"] = _kubernetes_names(self.affinity)
        if self.tolerations:
            spec["tolerations"] = [_kubernetes_names(t) for t in self.tolerations]
        return spec

    def as_dict(self) -> Scheduling:
        """Everything, for a component's outputs."""
        # pod_spec() is a manifest's plain dict, whose keys (affinity, tolerations) are Scheduling's
        return {**self.pod_spec(), "gpuResources": dict(self.gpu_resources)}  # type: ignore[typeddict-item]


def _kubernetes_names(value: Any) -> Any:
    """An input type's Python field names as Kubernetes spells them (``node_selector_terms`` ->
    ``nodeSelectorTerms``), in every mapping of ``value`` (a placement's mappings hold fields only)."""
    if isinstance(value, Mapping):
        return {
            re.sub(r"_([a-z])", lambda m: m.group(1).upper(), str(k)): _kubernetes_names(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_kubernetes_names(v) for v in value]
    return value


Lanes = Union[str, Mapping[str, Lane], Sequence[ConfiguredLane]]
"""The rack's lanes, as the lane contract (``lane``) types them: its ``lanes`` output as it is (lane name ->
``Lane``: ``Rack.lanes``'s value, another stack's through a ``pulumi.StackReference``, or ``Rack.lane_facts``),
a list of ``ConfiguredLane`` as the policy config names them, or either as JSON text (``pulumi stack output
lanes --json``)."""

LanesInput = Union[None, Lanes, Awaitable[Lanes]]
"""``Lanes``, known now or later: a ``pulumi.Output`` (``StackReference.get_output("lanes")``) is judged when
its value is known."""


def decoded_lanes(lanes: Any) -> Any:
    """``lanes`` with JSON text read (``PlacementError`` naming ``lanes`` when it is no JSON)."""
    if not isinstance(lanes, str):
        return lanes
    from .spec.base import json_value  # the one reader of JSON text the user gives

    try:
        return json_value(lanes)
    except (ValueError, RecursionError) as exc:
        raise PlacementError(f"lanes: not the JSON of the rack's lanes ({str(exc).splitlines()[0][:200]})") from None


def lanes_problem(lanes: Any) -> Optional[str]:
    """What is wrong with ``lanes`` (``Lanes``) as the policy pack reads a lanes config, naming the lane's key
    (``lanes[1].taints``), or None."""
    try:
        lanes = decoded_lanes(lanes)
    except PlacementError as exc:
        return str(exc)
    items = list(lanes.values()) if isinstance(lanes, Mapping) else lanes
    if (
        isinstance(items, (str, bytes))
        or not isinstance(items, (list, tuple))
        or not all(isinstance(i, Mapping) for i in items)
    ):
        return (
            "lanes: expected the rack's lanes output (a mapping of lane name to its facts, or its JSON text) or a "
            "list of lanes"
        )
    from .pack.laneconfig import lanes_config_problems  # the pack's own reading of a lanes config

    problems = lanes_config_problems(lane_list(lanes))
    return "; ".join(problems) if problems else None


def lane_list(lanes: Any) -> list[dict[str, Any]]:
    lanes = decoded_lanes(lanes)
    if lanes is None:
        return []
    if isinstance(lanes, Mapping):
        return [{**dict(lane), "name": name} for name, lane in lanes.items()]
    return [dict(lane) for lane in lanes]


def later(value: Any) -> bool:
    """A value known only later: a ``pulumi.Output`` or an awaitable."""
    return inspect.isawaitable(value) or type(value).__module__ == "pulumi.output"


def fit_problems(
    placement: "Placement",
    lanes: Lanes,
    subject: str = "the workload",
    cpu: Optional[float] = None,
    memory_mib: Optional[float] = None,
) -> list[str]:
    """What the policy pack's ``workloads-reach-their-lane`` would refuse about a pod placed by ``placement``
    that requests ``cpu`` cores and ``memory_mib`` MiB, on ``lanes``, in its words ([] when it fits)."""
    from .pack.reach import pod_problems

    requests: dict[str, str] = dict(placement.gpu_resources)
    if cpu:
        requests["cpu"] = _plain(cpu)
    if memory_mib:
        requests["memory"] = f"{_plain(memory_mib)}Mi"
    container: dict[str, Any] = {
        "name": "app",
        "image": "app",
        "resources": {"requests": requests, "limits": dict(placement.gpu_resources)},
    }
    return pod_problems(subject, {"containers": [container], **placement.pod_spec()}, lane_list(lanes))


def _plain(number: float) -> str:
    """A number as a Kubernetes quantity takes it: plain digits, never an exponent (``1e-05`` is ``0.00001``)."""
    return format(Decimal(number if isinstance(number, int) else repr(number)).normalize(), "f")


def _arguments_problem(node_selector_labels: Any, lanes: Any, cpu: Any, memory_mib: Any) -> Optional[str]:
    if node_selector_labels is not None:
        if not isinstance(node_selector_labels, Mapping):
            return (
                f"node_selector_labels: expected a mapping of label to value, got {type(node_selector_labels).__name__}"
            )
        problem = syntax.node_selector_problem(node_selector_labels)
        if problem:
            return f"node_selector_labels: {problem}"
    if lanes is not None and not later(lanes):
        problem = lanes_problem(lanes)
        if problem:
            return problem
    for name, value in (("cpu", cpu), ("memory_mib", memory_mib)):
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or isinstance(value, float)
            and not math.isfinite(value)
            or value < 0
        ):
            return f"{name}: expected a number, 0 or more, got {value!r}"[:300]
    return None


def place(
    node_selector_labels: Optional[Mapping[str, str]] = None,
    gpu: GpuInput = None,
    lanes: LanesInput = None,
    cpu: Optional[float] = None,
    memory_mib: Optional[float] = None,
) -> Placement:
    """The seeds' scheduling for a workload selecting ``node_selector_labels`` and asking for ``gpu``.

    With ``lanes`` (the rack's ``lanes`` output, see ``Lanes``), it refuses (``PlacementError``, a
    ``ValueError``, in the pack's words) a pod no lane can hold: a lane that does not exist, GPUs with no
    GPU lane selected, more GPUs than the lane's instances have, ``cpu`` cores or ``memory_mib`` MiB beyond
    the allocatable of its largest instance. ``lanes`` may be a ``pulumi.Output`` (another stack's, through
    a ``pulumi.StackReference``): the placement is returned at once, and the program fails with the same
    refusal when the lanes are known (``pulumi preview`` reads a stack reference's outputs). Bad arguments
    are refused the same way, naming the argument."""
    problem = _arguments_problem(node_selector_labels, lanes, cpu, memory_mib)
    if problem:
        raise PlacementError(problem)
    placement = _place(node_selector_labels, gpu)
    if lanes is not None and later(lanes):
        import pulumi  # only for lanes known later: the rest of this module reads plain values

        pulumi.Output.from_input(lanes).apply(lambda known: _refuse_misfit(placement, known, cpu, memory_mib))
    elif lanes is not None:
        _refuse_misfit(placement, lanes, cpu, memory_mib)
    return placement


def _refuse_misfit(placement: Placement, lanes: Any, cpu: Optional[float], memory_mib: Optional[float]) -> None:
    problem = lanes_problem(lanes)
    if problem:
        raise PlacementError(problem)
    problems = fit_problems(placement, lanes, cpu=cpu, memory_mib=memory_mib)
    if problems:
        raise PlacementError(problems[0])


def _place(node_selector_labels: Optional[Mapping[str, str]], gpu: GpuInput) -> Placement:
    selectors = dict(node_selector_labels or {})
    request = gpu_request(gpu)
    affinity: Optional[AffinityArgsDict] = None
    if selectors:
        term = {"match_expressions": [{"key": k, "operator": "In", "values": [v]} for k, v in selectors.items()]}
        affinity = {
            "node_affinity": {"required_during_scheduling_ignored_during_execution": {"node_selector_terms": [term]}}
        }
    tolerations = [
        cast("TolerationArgsDict", contract.dedicated_toleration(v))
        for k, v in selectors.items()
        if k in contract.LANE_KEYS
    ]
    resources: dict[str, str] = {}
    if request.count > 0:
        tolerations.append(cast("TolerationArgsDict", contract.gpu_toleration(request.resource)))
        resources[request.resource] = str(request.count)
    return Placement(affinity, tolerations, resources)
