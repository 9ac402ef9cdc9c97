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
Pure: no Pulumi resources, only the contract the policy pack checks (``pack/workloads.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

from . import contract


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


def gpu_request(gpu: GpuInput) -> GpuRequest:
    """The seeds' ``scale.gpu`` in any of its shapes: a bare number is the count."""
    if gpu is None:
        return GpuRequest()
    if isinstance(gpu, GpuRequest):
        return gpu
    if isinstance(gpu, bool):
        raise ValueError(f"invalid gpu {gpu!r} (use a count like 1, or {{count, vendor}})")
    if isinstance(gpu, int):
        return GpuRequest(count=gpu)
    if isinstance(gpu, Mapping):
        unknown = sorted(set(gpu) - {"count", "vendor"})
        if unknown:
            raise ValueError(f"invalid gpu field '{unknown[0]}' (expected count and vendor)")
        count, vendor = gpu.get("count", 0), gpu.get("vendor") or "nvidia"
        if isinstance(count, bool) or not isinstance(count, int) or not isinstance(vendor, str):
            raise ValueError(f"invalid gpu {dict(gpu)!r} (count is a number, vendor a name like nvidia)")
        return GpuRequest(count=count, vendor=vendor)
    raise ValueError(f"invalid gpu {gpu!r} (use a count like 1, or {{count, vendor}})")


@dataclass(frozen=True)
class Placement:
    """The scheduling part of a pod spec, in Kubernetes' own field names."""

    affinity: Optional[dict[str, Any]] = None
    """``{"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ...}}``, or None."""
    tolerations: list[dict[str, str]] = field(default_factory=list)
    gpu_resources: dict[str, str] = field(default_factory=dict)
    """``{"nvidia.com/gpu": "1"}``: what the container requests, and limits, beyond CPU and memory."""

    def pod_spec(self) -> dict[str, Any]:
        """The pod spec fields this placement sets (``affinity``, ``tolerations``)."""
        spec: dict[str, Any] = {}
        if self.affinity:
            spec["affinity"] = self.affinity
        if self.tolerations:
            spec["tolerations"] = self.tolerations
        return spec

    def as_dict(self) -> dict[str, Any]:
        """Everything, for a component's outputs."""
        return {**self.pod_spec(), "gpuResources": dict(self.gpu_resources)}


def place(node_selector_labels: Optional[Mapping[str, str]] = None, gpu: GpuInput = None) -> Placement:
    """The seeds' scheduling for a workload selecting ``node_selector_labels`` and asking for ``gpu``."""
    selectors = dict(node_selector_labels or {})
    request = gpu_request(gpu)
    affinity = None
    if selectors:
        term = {"matchExpressions": [{"key": k, "operator": "In", "values": [v]} for k, v in selectors.items()]}
        affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    tolerations = [contract.dedicated_toleration(v) for k, v in selectors.items() if k in contract.LANE_KEYS]
    resources: dict[str, str] = {}
    if request.count > 0:
        tolerations.append(contract.gpu_toleration(request.resource))
        resources[request.resource] = str(request.count)
    return Placement(affinity, tolerations, resources)
