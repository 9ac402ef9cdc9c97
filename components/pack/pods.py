"""Reading workloads: the pod of each kind that carries one (Deployments, Jobs, DaemonSets, bare Pods ...), its
selection, tolerations, GPUs (extended resources and DRA claims) and effective requests."""

from __future__ import annotations


import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from .. import contract
from . import checks, facts, fit, scheduling
from .scheduling import Selection, Toleration
from .lanemodel import GPU_RESOURCES, Unknown

# ---- workloads ---------------------------------------------------------------------------------------

POD_SPEC = {
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
    "Rollout": ("spec", "template", "spec"),
    "LeaderWorkerSet": ("spec", "leaderWorkerTemplate", "workerTemplate", "spec"),
}
"""Where each workload kind keeps its pod spec (Argo Rollouts' ``Rollout`` as a Deployment does; a
``LeaderWorkerSet``'s workers, its leader template defaulting to theirs)."""
GROUPS = {
    "Deployment": ("apps", "extensions"), "StatefulSet": ("apps",), "DaemonSet": ("apps", "extensions"),
    "ReplicaSet": ("apps", "extensions"), "ReplicationController": ("core",), "Job": ("batch",),
    "CronJob": ("batch",), "Pod": ("core",), "Rollout": ("argoproj.io",), "LeaderWorkerSet": ("leaderworkerset.x-k8s.io",),
}
"""The API groups each kind comes in, any version (``kubernetes:apps/v1:Deployment``,
``kubernetes:batch/v1beta1:CronJob``)."""
_TYPE_RE = re.compile(r"kubernetes:(?P<group>[a-z0-9.-]+)/(?P<version>[a-z0-9]+):(?P<kind>[A-Za-z]+)")


def workload_kind(type_: str) -> Optional[str]:
    match = _TYPE_RE.fullmatch(type_)
    if match and match["group"] in GROUPS.get(match["kind"], ()):
        return match["kind"]
    return None


@dataclass(frozen=True)
class Workload:
    """One pod template's scheduling, as read from its resource."""

    subject: str
    """``service "web"`` (made by the ``Service`` component), else ``deployment "api"``, ``cronjob "nightly"``."""
    kind: str
    urn: str
    selection: Selection
    tolerations: tuple[Toleration, ...]
    gpus: Mapping[str, float]
    """GPU resources the pod asks for: its effective requests (``fit.pod_requests``: an init container's
    GPUs are handed on to the containers after it, so they are not added to theirs)."""
    requests: Mapping[str, float] = field(default_factory=dict)
    """The pod's effective requests (``fit.pod_requests``): cores, bytes, counts."""
    claims: tuple[str, ...] = ()
    """Its DRA claims of GPU device classes (``resourceClaims`` names)."""
    claimed_gpus: float = 0
    """Whole GPUs those claims ask for on one node."""
    images: tuple[str, ...] = ()
    slices: tuple[str, ...] = ()
    """NVIDIA resources other than whole GPUs it requests (``nvidia.com/mig-1g.10gb``, ``nvidia.com/gpu.shared``):
    only an NVIDIA GPU node advertises them, in numbers its device plugin's config decides."""
    refused: tuple[str, ...] = ()
    """What the API server refuses in its resource requirements (``fit.refusals``): its pods are never created."""

    @property
    def nvidia_gpus(self) -> float:
        return self.gpus.get(contract.NVIDIA_GPU, 0) + self.claimed_gpus

    @property
    def wants_gpu(self) -> bool:
        """It asks for NVIDIA GPUs, through the device plugin's resources or a DRA claim."""
        return self.nvidia_gpus > 0 or bool(self.claims) or bool(self.slices)

    def asks(self) -> dict[str, float]:
        """What one node must have room for: cpu, memory, ephemeral storage and GPUs (claims as ``nvidia.com/gpu``)."""
        found = {k: self.requests[k] for k in fit.SIZED if k in self.requests}
        for resource in GPU_RESOURCES:
            count = self.gpus.get(resource, 0) + (self.claimed_gpus if resource == contract.NVIDIA_GPU else 0)
            if count:
                found[resource] = count
        return found


def _gpus(requests: Mapping[str, float]) -> dict[str, float]:
    return {resource: requests[resource] for resource in (contract.NVIDIA_GPU, contract.AMD_GPU) if requests.get(resource)}


GPU_DEVICE_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com")
"""NVIDIA's DRA driver's device classes for GPUs and MIG slices (NVIDIA/k8s-dra-driver-gpu
``deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml``); a DeviceClass of the stack
whose selectors name the driver ``gpu.nvidia.com`` counts too."""
CLAIM_KINDS = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}
"""``resource.k8s.io`` kinds and where their ``devices`` are (a template wraps a claim spec)."""


def gpu_classes(resources: Sequence[checks.StackResource]) -> frozenset[str]:
    found = set(GPU_DEVICE_CLASSES)
    for res in resources:
        if res.type.startswith("kubernetes:resource.k8s.io/") and res.type.endswith(":DeviceClass"):
            selectors = facts.as_list(facts.dig(res.props, "spec", "selectors"))
            if any("gpu.nvidia.com" in facts.text(facts.dig(sel, "cel", "expression")) for sel in selectors):
                found.add(facts.text(facts.dig(res.props, "metadata", "name")) or res.name)
    return frozenset(found)


def claimed(resources: Sequence[checks.StackResource]) -> dict[tuple[str, str], float]:
    """GPU claims of the stack: ``(kind, name) -> whole GPUs`` for claims and templates asking for devices
    of a GPU class (``count`` with ``ExactCount``, 1 for ``All``; the fewest of ``firstAvailable``).
    A request says what it asks for in ``exactly`` (``resource.k8s.io/v1``) or on itself (``v1beta1``)."""
    classes = gpu_classes(resources)
    found: dict[tuple[str, str], float] = {}
    for res in resources:
        kind = res.type.rsplit(":", 1)[-1]
        if not res.type.startswith("kubernetes:resource.k8s.io/") or kind not in CLAIM_KINDS:
            continue
        total, any_gpu = 0.0, False
        for request in facts.as_list(facts.dig(res.props, *CLAIM_KINDS[kind], "devices", "requests")):
            request = facts.as_map(request)
            if "exactly" in request:
                options = [facts.as_map(request.get("exactly"))]
            elif "firstAvailable" in request:
                options = [facts.as_map(o) for o in facts.as_list(request.get("firstAvailable"))]
            else:  # resource.k8s.io/v1beta1: the request names its device class itself
                options = [request]
            counts = [_device_count(o) for o in options if facts.text(o.get("deviceClassName")) in classes]
            if counts and len(counts) == len(options):
                any_gpu = True
                total += min(counts)
        if any_gpu:
            found[(kind, facts.text(facts.dig(res.props, "metadata", "name")) or res.name)] = total
    return found


def _device_count(request: Mapping[str, Any]) -> float:
    """Whole GPUs one device request takes: MIG slices take none whole (but need a GPU node)."""
    if facts.text(request.get("deviceClassName")).startswith("mig."):
        return 0
    if request.get("allocationMode") == "All":
        return 1
    return facts.number(request.get("count")) or 1


def _claims(pod: Any, gpu_claims: Mapping[tuple[str, str], float]) -> tuple[tuple[str, ...], float]:
    names, total = [], 0.0
    for claim in facts.as_list(pod.get("resourceClaims")):
        claim = facts.as_map(claim)
        ref = (("ResourceClaimTemplate", facts.text(claim.get("resourceClaimTemplateName"))) if claim.get("resourceClaimTemplateName")
               else ("ResourceClaim", facts.text(claim.get("resourceClaimName"))))
        if ref in gpu_claims:
            names.append(facts.text(claim.get("name")) or ref[1])
            total += gpu_claims[ref]
    return tuple(names), total


NVIDIA_SLICES = ("nvidia.com/mig-", "nvidia.com/gpu.")
"""Resources NVIDIA's device plugin advertises for parts of a GPU: MIG slices (``nvidia.com/mig-1g.10gb``)
and renamed shared GPUs (``nvidia.com/gpu.shared``). Other ``nvidia.com/`` resources (the Network Operator's
``nvidia.com/hostdev``) are not GPUs."""


RUNTIME_CLASS_TYPES = ("kubernetes:node.k8s.io/v1:RuntimeClass", "kubernetes:node.k8s.io/v1beta1:RuntimeClass")


def runtime_classes(resources: Sequence[checks.StackResource], unknown: Unknown = ()) -> dict[str, Mapping[str, Any]]:
    """The stack's RuntimeClasses by the name they give (``metadata.name``; one auto-named, or named by a
    value not known at preview, cannot be named by a pod yet): their ``scheduling`` and ``overhead``."""
    found: dict[str, Mapping[str, Any]] = {}
    for res in resources:
        if res.type in RUNTIME_CLASS_TYPES:
            try:
                name = facts.text(facts.dig(res.props, "metadata", "name"))
            except unknown:
                continue
            if name:
                found.setdefault(name, facts.as_map(res.props))
    return found


def _with_runtime_class(pod: Mapping[str, Any], runtime: Optional[Mapping[str, Any]]) -> Mapping[str, Any]:
    """A pod spec as the RuntimeClass admission controller leaves it: the class's ``scheduling.nodeSelector``
    merged into the pod's, its ``scheduling.tolerations`` added, its ``overhead.podFixed`` as the pod's
    ``overhead`` (kubernetes ``plugin/pkg/admission/runtimeclass``)."""
    if runtime is None:
        return pod
    scheduling_ = facts.as_map(runtime.get("scheduling"))
    merged = dict(pod)
    selector = facts.as_map(scheduling_.get("nodeSelector"))
    if selector:
        merged["nodeSelector"] = {**facts.as_map(pod.get("nodeSelector")), **selector}
    tolerations = facts.as_list(scheduling_.get("tolerations"))
    if tolerations:
        merged["tolerations"] = [*facts.as_list(pod.get("tolerations")), *tolerations]
    fixed = facts.as_map(facts.dig(runtime, "overhead", "podFixed"))
    if fixed and "overhead" not in pod:
        merged["overhead"] = fixed
    return merged


def read_workload(res: checks.StackResource, gpu_claims: Mapping[tuple[str, str], float] = {},
                  runtimes: Mapping[str, Mapping[str, Any]] = {}) -> Optional[Workload]:
    kind = workload_kind(res.type)
    if kind is None:
        return None
    pod = facts.as_map(facts.dig(res.props, *POD_SPEC[kind]))
    if facts.text(pod.get("nodeName")):  # bound to one node by name: no scheduler, no lane, taints not checked
        return None
    pod = _with_runtime_class(pod, runtimes.get(facts.text(pod.get("runtimeClassName"))))
    metadata = facts.as_map(res.props.get("metadata"))
    service = facts.text(facts.as_map(metadata.get("annotations")).get(contract.SERVICE_ANNOTATION))
    name = facts.text(metadata.get("name")) or res.name
    subject = f'service "{service}"' if service else f'{kind.lower()} "{name}"'
    requests = fit.pod_requests(pod)
    gpus = _gpus(requests)
    # EKS runs the ExtendedResourceToleration admission controller (EKS user guide, platform versions):
    # a pod that requests an extended resource (a domain-qualified name outside kubernetes.io: GPUs,
    # aws.amazon.com/neuron, vpc.amazonaws.com/efa) tolerates the NoSchedule taint keyed by it (not DRA claims)
    admitted = tuple(Toleration(resource, "Exists", "", "NoSchedule") for resource in requests if fit.extended(resource))
    claims, claimed_gpus = _claims(pod, gpu_claims)
    images = tuple(facts.text(facts.as_map(c).get("image")) for group in ("initContainers", "containers")
                   for c in facts.as_list(pod.get(group)))
    slices = tuple(r for r, amount in requests.items() if r.startswith(NVIDIA_SLICES) and amount)
    return Workload(subject, kind, res.urn, scheduling.selection_of(pod), scheduling.tolerations_of(pod) + admitted, gpus,
                    requests, claims, claimed_gpus, images, slices, tuple(fit.refusals(pod)))
