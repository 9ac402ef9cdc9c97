"""Reading workloads: the pod of each kind that carries one (Deployments, Jobs, DaemonSets, bare Pods ...), its
selection, tolerations, GPUs (extended resources and DRA claims) and effective requests."""

from __future__ import annotations


import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional, Sequence

from .. import contract
from ..facts import instances
from . import bootfacts, checks, fit, operators, scheduling
from .scheduling import Selection, Toleration
from .lanemodel import GPU_RESOURCES, Unknown, number_text

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
``LeaderWorkerSet``'s workers, whose template is its leader's too unless it has a ``leaderTemplate``:
``_leader_and_workers``)."""
GROUPS = {
    "Deployment": ("apps", "extensions"),
    "StatefulSet": ("apps",),
    "DaemonSet": ("apps", "extensions"),
    "ReplicaSet": ("apps", "extensions"),
    "ReplicationController": ("core",),
    "Job": ("batch",),
    "CronJob": ("batch",),
    "Pod": ("core",),
    "Rollout": ("argoproj.io",),
    "LeaderWorkerSet": ("leaderworkerset.x-k8s.io",),
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
    programs: tuple[str, ...] = ()
    """What each of its containers runs: its command's program, else its image's name (the image's entrypoint)."""
    slices: tuple[str, ...] = ()
    """NVIDIA resources other than whole GPUs it requests (``nvidia.com/mig-1g.10gb``, ``nvidia.com/gpu.shared``):
    only an NVIDIA GPU node advertises them, in numbers its device plugin's config decides."""
    refused: tuple[str, ...] = ()
    """What the API server refuses in its resource requirements (``fit.refusals``) or its ``overhead`` (the
    RuntimeClass admission controller): its pods are never created."""
    mig: tuple[str, ...] = ()
    """MIG slices it asks for (``nvidia.com/mig-<profile>``, DRA claims of MIG devices), each by its profile
    ('' for any profile)."""
    unheld: tuple[str, ...] = ()
    """DRA claims it names that the stack does not hold: what they ask for is not known."""
    broken_claims: tuple[str, ...] = ()
    """Its DRA claims the API server refuses, with why: its pods never start."""
    shares: tuple[str, ...] = ()
    """GPU shares a GPU-sharing scheduler gives it without a GPU resource (``gpu-fraction 0.5``): it requests no
    ``nvidia.com/gpu``, so ExtendedResourceToleration gives it no toleration."""
    gpu_nodes: tuple[str, ...] = ()
    """Its selection of labels that only NVIDIA GPU nodes carry and no lane declares (NFD's
    ``pci-10de.present``, gpu-feature-discovery's ``nvidia.com/*``): it lands on GPU nodes only."""
    host_paths: tuple[str, ...] = ()
    """The node directories it mounts (``hostPath`` volumes)."""
    env_names: tuple[str, ...] = ()
    """The environment variables its containers set."""
    injected: str = ""
    """Who adds to its node selection and tolerations on admission (Kueue's flavors of its queue), in words."""

    @property
    def nvidia_gpus(self) -> float:
        return self.gpus.get(contract.NVIDIA_GPU, 0) + self.claimed_gpus

    @property
    def wants_gpu(self) -> bool:
        """It asks for NVIDIA GPUs (the device plugin's resources, a DRA claim, a share a GPU-sharing scheduler
        gives), or selects nodes only NVIDIA GPU nodes are."""
        return (
            self.nvidia_gpus > 0 or bool(self.claims) or bool(self.slices) or bool(self.shares) or bool(self.gpu_nodes)
        )

    def asks(self) -> dict[str, float]:
        """What one node must have room for: cpu, memory, ephemeral storage and GPUs (claims as ``nvidia.com/gpu``)."""
        found = {k: self.requests[k] for k in fit.SIZED if k in self.requests}
        for resource in GPU_RESOURCES:
            count = self.gpus.get(resource, 0) + (self.claimed_gpus if resource == contract.NVIDIA_GPU else 0)
            if count:
                found[resource] = count
        return found


def _gpus(requests: Mapping[str, float]) -> dict[str, float]:
    return {
        resource: requests[resource] for resource in (contract.NVIDIA_GPU, contract.AMD_GPU) if requests.get(resource)
    }


GPU_DEVICE_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com")
"""NVIDIA's DRA driver's device classes for GPUs and MIG slices (NVIDIA/k8s-dra-driver-gpu
``deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml``); a DeviceClass of the stack
whose selectors name the driver ``gpu.nvidia.com`` counts too."""
CLAIM_KINDS = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}
"""``resource.k8s.io`` kinds and where their ``devices`` are (a template wraps a claim spec)."""


@dataclass(frozen=True)
class DeviceClass:
    """What a DRA device class gives: whole NVIDIA GPUs, or MIG slices (of one ``profile``, or any)."""

    mig: bool = False
    profile: str = ""


_CEL_PROFILE_RE = re.compile(r"""\.profile\s*==\s*['"]([^'"]+)['"]""")
_CEL_MIG_RE = re.compile(r"""\.type\s*==\s*['"]mig['"]""")


def _cel(selectors: Any) -> str:
    return " && ".join(bootfacts.text(bootfacts.dig(sel, "cel", "expression")) for sel in bootfacts.as_list(selectors))


def gpu_classes(resources: Sequence[checks.StackResource]) -> dict[str, DeviceClass]:
    """NVIDIA's DRA device classes by name: the driver's own, and the stack's DeviceClasses whose selectors name
    the driver ``gpu.nvidia.com``, MIG ones (``type == 'mig'``, a ``profile``) too (the driver's
    ``demo/specs/extended-resources/mig-1g-12gb.yaml`` defines one per profile)."""
    found = {GPU_DEVICE_CLASSES[0]: DeviceClass(), GPU_DEVICE_CLASSES[1]: DeviceClass(mig=True)}
    for res in resources:
        if res.type.startswith("kubernetes:resource.k8s.io/") and res.type.endswith(":DeviceClass"):
            cel = _cel(bootfacts.dig(res.props, "spec", "selectors"))
            if "gpu.nvidia.com" in cel:
                profile = _CEL_PROFILE_RE.search(cel)
                found[bootfacts.text(bootfacts.dig(res.props, "metadata", "name")) or res.name] = DeviceClass(
                    bool(_CEL_MIG_RE.search(cel) or profile),
                    instances.mig_profile(profile.group(1)) or "" if profile else "",
                )
    return found


@dataclass(frozen=True)
class Claim:
    """A ResourceClaim or ResourceClaimTemplate of the stack: what it asks of one node."""

    gpus: float = 0
    """Whole NVIDIA GPUs."""
    mig: tuple[str, ...] = ()
    """MIG slices, each by its profile ('' for any profile)."""
    nvidia: bool = False
    """It asks for NVIDIA devices (GPUs or MIG slices)."""
    refused: str = ""
    """What the API server refuses in it: it is never created."""
    urn: str = ""


def claimed(resources: Sequence[checks.StackResource]) -> dict[tuple[str, str], Claim]:
    """The stack's claims and templates: ``(kind, name) -> Claim``. Each request asks for ``count`` devices of its
    class (``allocationMode`` ExactCount, the default, with ``count`` 1 by default and more than 0; ``All``: every
    matching device of the node, so at least 1, and no ``count``), the fewest of its ``firstAvailable``
    alternatives (Kubernetes API, resource.k8s.io/v1 ``ExactDeviceRequest``; ``pkg/apis/resource/validation``
    ``validateDeviceAllocationMode``). A request says what it asks for in ``exactly`` (``v1``) or on itself
    (``v1beta1``)."""
    classes = gpu_classes(resources)
    found: dict[tuple[str, str], Claim] = {}
    for res in resources:
        kind = res.type.rsplit(":", 1)[-1]
        if not res.type.startswith("kubernetes:resource.k8s.io/") or kind not in CLAIM_KINDS:
            continue
        gpus, mig, nvidia, refused = 0.0, [], False, []
        at = ".".join(CLAIM_KINDS[kind]) + ".devices.requests"
        for i, request in enumerate(
            bootfacts.as_list(bootfacts.dig(res.props, *CLAIM_KINDS[kind], "devices", "requests"))
        ):
            request = bootfacts.as_map(request)
            if "exactly" in request:
                options = [(f"{at}[{i}].exactly", bootfacts.as_map(request.get("exactly")))]
            elif "firstAvailable" in request:
                options = [
                    (f"{at}[{i}].firstAvailable[{j}]", bootfacts.as_map(o))
                    for j, o in enumerate(bootfacts.as_list(request.get("firstAvailable")))
                ]
            else:  # resource.k8s.io/v1beta1: the request names its device class itself
                options = [(f"{at}[{i}]", request)]
            asked = []
            for where, option in options:
                count, problem = _device_count(option)
                if problem:
                    refused.append(f"{where}.{problem}")
                device_class = classes.get(bootfacts.text(option.get("deviceClassName")))
                if device_class is not None:
                    profile = _CEL_PROFILE_RE.search(_cel(option.get("selectors")))
                    profile_name = (
                        (instances.mig_profile(profile.group(1)) or profile.group(1))
                        if profile
                        else device_class.profile
                    )
                    asked.append((count, device_class.mig or bool(profile), profile_name))
            if asked and len(asked) == len(options):  # every alternative is NVIDIA's
                nvidia = True
                count, is_mig, profile_name = min(asked, key=lambda a: (a[1], a[0]))
                if is_mig:
                    mig += [profile_name] * max(1, int(count))
                else:
                    gpus += count
        name = bootfacts.text(bootfacts.dig(res.props, "metadata", "name")) or res.name
        found[(kind, name)] = Claim(gpus, tuple(mig), nvidia, "; ".join(refused), res.urn)
    return found


def _device_count(request: Mapping[str, Any]) -> tuple[float, str]:
    """How many devices one request takes, and what the API server refuses in its count ('' for nothing)."""
    mode = request.get("allocationMode")
    count = request.get("count")
    if mode == "All":
        if count not in (None, 0):
            return 1, f"count {number_text(count)}: must not be specified when allocationMode is 'All'"
        return 1, ""
    if mode not in (None, "", "ExactCount"):
        return 0, f"allocationMode {number_text(mode)}: not supported (All or ExactCount)"
    if count is None:
        return 1, ""
    number = bootfacts.number(count)
    if isinstance(count, bool) or number is None or not math.isfinite(number) or number != int(number) or number <= 0:
        return 0, f"count {number_text(count)}: must be a whole number greater than zero"
    return number, ""


@dataclass(frozen=True)
class PodClaims:
    """What a pod's ``resourceClaims`` ask for, read against the stack's claims."""

    names: tuple[str, ...] = ()
    """Its claims of NVIDIA devices (``resourceClaims`` names)."""
    gpus: float = 0
    mig: tuple[str, ...] = ()
    unheld: tuple[str, ...] = ()
    """Claims it names that the stack does not hold (``ResourceClaimTemplate 'gpu'``): what they ask is not known."""
    refused: tuple[str, ...] = ()
    """Its claims the API server refuses, with why."""


def _claims(pod: Any, claims: Mapping[tuple[str, str], Claim]) -> PodClaims:
    names: list[str] = []
    mig: list[str] = []
    unheld: list[str] = []
    refused: list[str] = []
    gpus = 0.0
    for claim in bootfacts.as_list(pod.get("resourceClaims")):
        claim = bootfacts.as_map(claim)
        ref = (
            ("ResourceClaimTemplate", bootfacts.text(claim.get("resourceClaimTemplateName")))
            if claim.get("resourceClaimTemplateName")
            else ("ResourceClaim", bootfacts.text(claim.get("resourceClaimName")))
        )
        found = claims.get(ref)
        if not ref[1]:
            continue
        if found is None:
            unheld.append(f"{ref[0]} '{ref[1]}'")
        elif found.refused:
            refused.append(
                f"its claim '{bootfacts.text(claim.get('name')) or ref[1]}' is {ref[0]} '{ref[1]}', which Kubernetes "
                f"refuses ({found.refused}), so no pod of it ever starts"
            )
        elif found.nvidia:
            names.append(bootfacts.text(claim.get("name")) or ref[1])
            gpus += found.gpus
            mig += found.mig
    return PodClaims(tuple(names), gpus, tuple(mig), tuple(unheld), tuple(refused))


MIG_RESOURCE = "nvidia.com/mig-"
"""NVIDIA's device plugin advertises each MIG profile as ``nvidia.com/mig-<profile>`` (its "mixed" strategy;
NVIDIA/k8s-device-plugin ``internal/rm/rm.go``)."""


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
                name = bootfacts.text(bootfacts.dig(res.props, "metadata", "name"))
            except unknown:
                continue
            if name:
                found.setdefault(name, bootfacts.as_map(res.props))
    return found


def _with_runtime_class(pod: Mapping[str, Any], runtime: Optional[Mapping[str, Any]]) -> Mapping[str, Any]:
    """A pod spec as the RuntimeClass admission controller leaves it: the class's ``scheduling.nodeSelector``
    merged into the pod's, its ``scheduling.tolerations`` added, its ``overhead.podFixed`` as the pod's
    ``overhead`` (kubernetes ``plugin/pkg/admission/runtimeclass``)."""
    if runtime is None:
        return pod
    scheduling_ = bootfacts.as_map(runtime.get("scheduling"))
    merged = dict(pod)
    selector = bootfacts.as_map(scheduling_.get("nodeSelector"))
    if selector:
        merged["nodeSelector"] = {**bootfacts.as_map(pod.get("nodeSelector")), **selector}
    tolerations = bootfacts.as_list(scheduling_.get("tolerations"))
    if tolerations:
        merged["tolerations"] = [*bootfacts.as_list(pod.get("tolerations")), *tolerations]
    fixed = bootfacts.as_map(bootfacts.dig(runtime, "overhead", "podFixed"))
    if fixed and "overhead" not in pod:
        merged["overhead"] = fixed
    return merged


def _overhead_refused(pod: Mapping[str, Any], runtimes: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The RuntimeClass admission controller's check of a pod's own ``overhead`` (kubernetes
    ``plugin/pkg/admission/runtimeclass``, ``validateOverhead``): a pod may set it only to its RuntimeClass's
    ``overhead.podFixed``; without a RuntimeClass, or one that defines none, it is refused. A class the stack
    does not hold is not judged."""
    overhead = bootfacts.as_map(pod.get("overhead"))
    if not overhead:
        return []
    name = bootfacts.text(pod.get("runtimeClassName"))
    if not name:
        return [
            "spec.overhead is set without a runtimeClassName (the RuntimeClass admission controller refuses a pod "
            "overhead no RuntimeClass defines: drop overhead, and name a RuntimeClass whose overhead.podFixed gives it)"
        ]
    if name not in runtimes:
        return []
    fixed = bootfacts.as_map(bootfacts.dig(runtimes[name], "overhead", "podFixed"))
    if not fixed:
        return [
            f"spec.overhead is set, but RuntimeClass '{name}' defines no overhead (the RuntimeClass admission "
            f"controller refuses it: drop overhead, or give the RuntimeClass overhead.podFixed)"
        ]
    if {str(k): fit.quantity(v) for k, v in overhead.items()} != {str(k): fit.quantity(v) for k, v in fixed.items()}:
        return [
            f"spec.overhead is not RuntimeClass '{name}''s overhead.podFixed (the RuntimeClass admission controller "
            f"refuses a pod overhead other than its class's: drop overhead, and the class sets it)"
        ]
    return []


PodAt = tuple[str, str, Mapping[str, Any], Mapping[str, str]]
"""One pod template of a resource: its part (``worker group 'gpu'``, '' for the only one), its path, the pod
spec, and where its placement fields come from when not under that path (``nodeSelector`` -> its path)."""


def _template(owner: Any, at: str, part: str, *path: str) -> list[PodAt]:
    pod = bootfacts.dig(owner, *path)
    return [(part, ".".join((at, *path)), pod, {})] if isinstance(pod, Mapping) and pod else []


def _ray(cluster: Any, at: str) -> list[PodAt]:
    """A RayCluster spec's pods (ray-project/kuberay ``ray-operator/apis/ray/v1/raycluster_types.go``): the head
    group's ``headGroupSpec.template`` and each ``workerGroupSpecs[]`` entry's ``template``."""
    found = _template(cluster, at, "head group", "headGroupSpec", "template", "spec")
    for i, group in enumerate(bootfacts.as_list(bootfacts.dig(cluster, "workerGroupSpecs"))):
        name = bootfacts.text(bootfacts.as_map(group).get("groupName")) or str(i)
        found += _template(group, f"{at}.workerGroupSpecs[{i}]", f"worker group '{name}'", "template", "spec")
    return found


KUBEFLOW_REPLICAS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
}
"""Kubeflow's training jobs (kubeflow/trainer v1 ``pkg/apis/kubeflow.org/v1/*_types.go``; an MPIJob also as
kubeflow/mpi-operator ``v2beta1`` writes it, in the same group) and the field of each that maps a replica type
(``Master``, ``Worker``, ``PS``, ``Chief``, ``Launcher`` ...) to a replica spec whose ``template`` is a pod template."""


def _replicas(field: str) -> Callable[[Mapping[str, Any]], list[PodAt]]:
    """The pods of a Kubeflow job that keeps its replica specs under ``spec.<field>``: one per replica type."""

    def read(props: Mapping[str, Any]) -> list[PodAt]:
        return [
            pod
            for role, replicas in bootfacts.as_map(bootfacts.dig(props, "spec", field)).items()
            for pod in _template(replicas, f"spec.{field}.{role}", f"replica {role}", "template", "spec")
        ]

    return read


def _leader_and_workers(props: Any, workers: PodAt) -> list[PodAt]:
    """A LeaderWorkerSet's pods (kubernetes-sigs/lws ``api/leaderworkerset/v1/leaderworkerset_types.go``): each
    group's leader runs ``spec.leaderWorkerTemplate.leaderTemplate`` when it is set, else the worker template, so
    without one the workers' pod is the only one. With one, the group's other ``size - 1`` pods run the worker
    template; ``size`` defaults to 1, and a group of one has no workers."""
    group = bootfacts.dig(props, "spec", "leaderWorkerTemplate")
    leader = _template(group, "spec.leaderWorkerTemplate", "leader", "leaderTemplate", "spec")
    if not leader:
        return [workers]
    written = bootfacts.as_map(group).get("size")
    size = 1 if written is None else bootfacts.number(written)
    return leader + ([] if size == 1 else [("workers", *workers[1:])])


def _volcano(props: Any) -> list[PodAt]:
    """A Volcano Job (volcano-sh/apis ``pkg/apis/batch/v1alpha1/job.go``): each of ``spec.tasks[]`` has a pod
    ``template``."""
    return [
        pod
        for i, task in enumerate(bootfacts.as_list(bootfacts.dig(props, "spec", "tasks")))
        for pod in _template(
            task,
            f"spec.tasks[{i}]",
            f"task '{bootfacts.text(bootfacts.as_map(task).get('name')) or i}'",
            "template",
            "spec",
        )
    ]


def _jobset(props: Any) -> list[PodAt]:
    """A JobSet (kubernetes-sigs/jobset ``api/jobset/v1alpha2/jobset_types.go``): each ``spec.replicatedJobs[]``
    holds a Job template, whose pod template is ``template.spec.template``."""
    return [
        pod
        for i, job in enumerate(bootfacts.as_list(bootfacts.dig(props, "spec", "replicatedJobs")))
        for pod in _template(
            job,
            f"spec.replicatedJobs[{i}]",
            f"replicated job '{bootfacts.text(bootfacts.as_map(job).get('name')) or i}'",
            "template",
            "spec",
            "template",
            "spec",
        )
    ]


KSERVE_FRAMEWORKS = (
    "sklearn",
    "tensorflow",
    "xgboost",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
)
"""A KServe predictor's framework keys (kserve/kserve ``pkg/apis/serving/v1beta1/predictor.go``), in the order its
defaulting webhook looks for them (``inference_service_defaults.go``, ``setPredictorModelDefaults``): the first one
set becomes the predictor's ``model``, its container fields unchanged, in place of any ``model`` written beside it."""
KSERVE_EXPLAINERS = ("art", "alibi", "aix")
"""A KServe explainer's framework keys: ``art`` (``explainer.go``), and ``alibi`` and ``aix`` of earlier v1beta1
releases; each is a container spec."""


def _kserve_container(component: Mapping[str, Any], keys: Sequence[str]) -> Optional[Mapping[str, Any]]:
    """The first of ``keys`` whose value is an object (``{}`` too: it is set): the component's framework container."""
    return next((component[key] for key in keys if isinstance(component.get(key), Mapping)), None)


def _kserve(props: Any) -> list[PodAt]:
    """A KServe InferenceService's pods (kserve/kserve ``pkg/apis/serving/v1beta1``): its ``predictor``,
    ``transformer`` and ``explainer``, each a component whose pod-level fields (``nodeSelector``, ``tolerations``,
    ``affinity`` ...) are inline in it. A predictor names a framework (``sklearn``, ``pytorch`` ...) or a ``model``,
    a container spec that runs as ``kserve-container`` beside the predictor's own ``containers``; without one, its
    ``containers`` are a custom predictor's pod. An explainer's framework (``art``) takes the place of its first
    container; a transformer is a pod spec."""
    spec = bootfacts.as_map(props.get("spec"))
    found: list[PodAt] = []
    for part, keys in (
        ("predictor", (*KSERVE_FRAMEWORKS, "model")),
        ("transformer", ()),
        ("explainer", KSERVE_EXPLAINERS),
    ):
        component = bootfacts.as_map(spec.get(part))
        container = _kserve_container(component, keys)
        containers = bootfacts.as_list(component.get("containers"))
        if container is not None:
            pod = {k: v for k, v in component.items() if k not in keys}
            pod["containers"] = [
                {"name": "kserve-container", **container},
                *(containers if part == "predictor" else containers[1:]),
            ]
        elif containers:
            pod = dict(component)
        else:
            continue
        found.append((part, f"spec.{part}", pod, {}))
    worker = bootfacts.dig(spec, "predictor", "workerSpec")
    if isinstance(worker, Mapping) and worker:
        found.append(("predictor worker", "spec.predictor.workerSpec", _kserve_worker(worker), {}))
    return found


KSERVE_WORKER_FIELDS = ("pipelineParallelSize", "tensorParallelSize")
"""A KServe ``WorkerSpec``'s own fields beside the pod spec it carries inline (``predictor.go``)."""


def _kserve_worker(worker: Mapping[str, Any]) -> dict[str, Any]:
    """The worker pod of a multi-node predictor (kserve/kserve ``pkg/apis/serving/v1beta1/predictor.go``
    ``WorkerSpec``; the controller's ``components/predictor.go`` and ``reconcilers/deployment``): the serving
    runtime's worker pod spec with the ``workerSpec``'s own pod-level fields over it, none taken from the predictor;
    one container, the runtime's ``worker-container`` with the first of the ``workerSpec``'s containers over it;
    and the controller always gives that container GPUs: the count it asks for, else one or more."""
    pod = {k: v for k, v in worker.items() if k not in KSERVE_WORKER_FIELDS}
    containers = bootfacts.as_list(worker.get("containers"))
    container = {**bootfacts.as_map(containers[0] if containers else None), "name": "worker-container"}
    if not any(fit.pod_requests({"containers": [container]}).get(r) for r in GPU_RESOURCES):
        resources = bootfacts.as_map(container.get("resources"))
        container["resources"] = {
            **resources,
            "limits": {**bootfacts.as_map(resources.get("limits")), contract.NVIDIA_GPU: "1"},
        }
    pod["containers"] = [container]
    return pod


_ARGO_PLACEMENT = ("nodeSelector", "tolerations", "affinity")


def _argo(workflow: Any, spec_at: str) -> list[PodAt]:
    """An Argo workflow spec (argoproj/argo-workflows ``pkg/apis/workflow/v1alpha1/workflow_types.go``
    ``WorkflowSpec``): a pod for each of its ``templates[]`` that runs a ``container`` or a ``script``; each
    placement field from the template, else the spec's ``templateDefaults``, else the spec itself (a template's
    value overrides the workflow's)."""
    spec = bootfacts.as_map(workflow)
    sources = ((spec.get("templateDefaults"), f"{spec_at}.templateDefaults"), (spec, spec_at))
    found: list[PodAt] = []
    for i, template in enumerate(bootfacts.as_list(spec.get("templates"))):
        template = bootfacts.as_map(template)
        container = template.get("container") or template.get("script")
        if not isinstance(container, Mapping):
            continue
        at = f"{spec_at}.templates[{i}]"
        pod: dict[str, Any] = {"containers": [{"name": "main", **container}]}
        where: dict[str, str] = {}
        for name in _ARGO_PLACEMENT:
            for source, source_at in ((template, at), *sources):
                if bootfacts.as_map(source).get(name):
                    pod[name] = bootfacts.as_map(source)[name]
                    where[name] = source_at
                    break
        found.append((f"template '{bootfacts.text(template.get('name')) or i}'", at, pod, where))
    return found


def _argo_spec(props: Any) -> list[PodAt]:
    """A Workflow, WorkflowTemplate or ClusterWorkflowTemplate: its ``spec`` is a workflow spec
    (``workflow_template_types.go``, ``cluster_workflow_template_types.go``); a CronWorkflow's is its
    ``spec.workflowSpec`` (``cron_workflow_types.go``)."""
    return _argo(props.get("spec"), "spec")


CUSTOM: Mapping[tuple[str, str], tuple[str, Callable[[Mapping[str, Any]], list[PodAt]]]] = {
    ("ray.io", "RayCluster"): ("raycluster", lambda props: _ray(props.get("spec"), "spec")),
    ("ray.io", "RayJob"): (
        "rayjob",
        lambda props: _ray(bootfacts.dig(props, "spec", "rayClusterSpec"), "spec.rayClusterSpec"),
    ),
    ("ray.io", "RayService"): (
        "rayservice",
        lambda props: _ray(bootfacts.dig(props, "spec", "rayClusterConfig"), "spec.rayClusterConfig"),
    ),
    **{("kubeflow.org", kind): (kind.lower(), _replicas(field)) for kind, field in KUBEFLOW_REPLICAS.items()},
    ("batch.volcano.sh", "Job"): ("volcano job", _volcano),
    ("jobset.x-k8s.io", "JobSet"): ("jobset", _jobset),
    ("serving.knative.dev", "Service"): (
        "knative service",
        lambda props: _template(props.get("spec"), "spec", "", "template", "spec"),
    ),
    ("serving.kserve.io", "InferenceService"): ("inferenceservice", _kserve),
    ("argoproj.io", "Workflow"): ("workflow", _argo_spec),
    ("argoproj.io", "WorkflowTemplate"): ("workflowtemplate", _argo_spec),
    ("argoproj.io", "ClusterWorkflowTemplate"): ("clusterworkflowtemplate", _argo_spec),
    ("argoproj.io", "CronWorkflow"): (
        "cronworkflow",
        lambda props: _argo(bootfacts.dig(props, "spec", "workflowSpec"), "spec.workflowSpec"),
    ),
}
"""Custom resources whose pods are judged as a Deployment's, by API group and kind (any version): what each
calls itself in a verdict, and its pod templates. Operators' resources are in ``OPERATORS``; another custom
resource's pod specs are found by shape (``operators.embedded_pods``)."""


OPERATORS: Mapping[tuple[str, str], tuple[str, Callable[[Mapping[str, Any], operators.Related], list[PodAt]]]] = {
    ("apps.nvidia.com", "NIMService"): ("nimservice", operators.nim_service),
    ("apps.nvidia.com", "NIMCache"): ("nimcache", operators.nim_cache),
    ("nvidia.com", "DynamoGraphDeployment"): ("dynamographdeployment", operators.dynamo_graph),
    ("slinky.slurm.net", "NodeSet"): ("nodeset", operators.slurm_node_set),
    ("ome.io", "InferenceService"): ("inferenceservice", operators.ome_inference_service),
}
"""Operators' custom resources whose pods are read as each operator builds them (``operators``), with the stack's
resources it reads beside them (``operators.Related``)."""
NO_PODS = {
    ("ome.io", "ServingRuntime"),
    ("ome.io", "ClusterServingRuntime"),
    ("serving.kserve.io", "ServingRuntime"),
    ("serving.kserve.io", "ClusterServingRuntime"),
}
"""Custom resources whose pod specs are another's defaults, judged in the pods of what uses them: OME's serving
runtimes, in each InferenceService that names one; KServe's, whose containers a predictor's are merged over (what
they add to a predictor is not read)."""
ARGO_CD = {("argoproj.io", "Application"), ("argoproj.io", "ApplicationSet"), ("argoproj.io", "AppProject")}
"""Argo CD's resources: they deploy manifests (a chart's values among them), and run no pods of their own."""
NOT_WORKLOADS = (
    "karpenter.sh",
    "karpenter.k8s.aws",
    "eks.amazonaws.com",
    "helm.toolkit.fluxcd.io",
    "source.toolkit.fluxcd.io",
    "kustomize.toolkit.fluxcd.io",
    "helm.cattle.io",
)
"""API groups whose custom resources run no pods of their own: Karpenter's and EKS Auto Mode's node resources, and
releases of charts (Flux, k3s's HelmChart), whose values are a chart's inputs; their CRDs' schemas prune any other
field, so a pod spec's shape in them is not a pod."""
BUILT_IN_SUFFIX = ".k8s.io"
"""Kubernetes' own API groups (``node.k8s.io``, ``apiextensions.k8s.io``); the SIGs' custom resources are
``*.x-k8s.io``."""


def custom_kind(type_: str) -> Optional[tuple[str, str]]:
    match = _TYPE_RE.fullmatch(type_)
    return (match["group"], match["kind"]) if match and (match["group"], match["kind"]) in CUSTOM else None


def _embedding_kind(type_: str) -> Optional[tuple[str, str]]:
    """A custom resource no reader knows, whose pod specs are found by shape: a group with a domain, not
    Kubernetes' own."""
    match = _TYPE_RE.fullmatch(type_)
    if match is None or "." not in match["group"] or workload_kind(type_) is not None:
        return None
    group = match["group"]
    if (
        group.endswith(BUILT_IN_SUFFIX)
        and not group.endswith(".x-k8s.io")
        or (group, match["kind"]) in NO_PODS
        or group in NOT_WORKLOADS
        or (group, match["kind"]) in ARGO_CD
    ):
        return None
    return group, match["kind"]


def related_objects(resources: Sequence[checks.StackResource]) -> dict[tuple[str, str], Mapping[str, Any]]:
    """The stack's custom resources an operator reads beside another (``operators.RELATED_KINDS``), by kind and name."""
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    for res in resources:
        match = _TYPE_RE.fullmatch(res.type)
        if match and (match["group"], match["kind"]) in operators.RELATED_KINDS:
            name = bootfacts.dig(res.props, "metadata", "name")
            found.setdefault(
                (match["kind"], name if isinstance(name, str) and name else res.name), bootfacts.as_map(res.props)
            )
    return found


def pod_templates(res: checks.StackResource, related: operators.Related = {}) -> tuple[str, list[PodAt]]:
    """What the resource calls itself (``deployment``, ``raycluster``) and its pod templates (none: it is no
    workload)."""
    kind = workload_kind(res.type)
    if kind is not None:
        pod: PodAt = ("", ".".join(POD_SPEC[kind]), bootfacts.as_map(bootfacts.dig(res.props, *POD_SPEC[kind])), {})
        return kind.lower(), _leader_and_workers(res.props, pod) if kind == "LeaderWorkerSet" else [pod]
    custom = custom_kind(res.type)
    if custom is not None:
        word, read = CUSTOM[custom]
        return word, read(bootfacts.as_map(res.props))
    embedding = _embedding_kind(res.type)
    if embedding is None:
        return "", []
    if embedding in OPERATORS:
        word, operator = OPERATORS[embedding]
        return word, operator(bootfacts.as_map(res.props), related)
    return embedding[1].lower(), operators.embedded_pods(bootfacts.as_map(res.props))


def read_workloads(
    res: checks.StackResource,
    claims: Mapping[tuple[str, str], Claim] = {},
    runtimes: Mapping[str, Mapping[str, Any]] = {},
    related: operators.Related = {},
) -> list[Workload]:
    """A resource's workloads: one for each of its pod templates (a RayCluster's head and worker groups)."""
    word, pods = pod_templates(res, related)
    kind = workload_kind(res.type) or res.type.rsplit(":", 1)[-1]
    if _embedding_kind(res.type) == ("slinky.slurm.net", "NodeSet"):
        kind = operators.slurm_node_set_kind(bootfacts.as_map(res.props))
    found = []
    for part, at, pod, where in pods:
        queued, flavors = operators.kueue_flavors(
            (bootfacts.as_map(res.props.get("metadata")), _pod_metadata(res.props, at)), related
        )
        if flavors:
            pod = operators.with_flavors(pod, flavors)
        workload = _workload(res, kind, word, part, at, pod, where, claims, runtimes)
        if workload is not None and queued:
            workload = replace(workload, injected=f"placed by {queued}")
        if workload is not None:
            found.append(workload)
    return found


def read_workload(
    res: checks.StackResource,
    claims: Mapping[tuple[str, str], Claim] = {},
    runtimes: Mapping[str, Mapping[str, Any]] = {},
) -> Optional[Workload]:
    found = read_workloads(res, claims, runtimes)
    return found[0] if found else None


def _workload(
    res: checks.StackResource,
    kind: str,
    word: str,
    part: str,
    at: str,
    pod: Mapping[str, Any],
    where: Mapping[str, str],
    claims: Mapping[tuple[str, str], Claim],
    runtimes: Mapping[str, Mapping[str, Any]],
) -> Optional[Workload]:
    if bootfacts.text(pod.get("nodeName")):  # bound to one node by name: no scheduler, no lane, taints not checked
        return None
    refused = scheduling.refusals(pod, at, where)
    overhead = _overhead_refused(pod, runtimes)
    pod = _with_runtime_class(pod, runtimes.get(bootfacts.text(pod.get("runtimeClassName"))))
    metadata = bootfacts.as_map(res.props.get("metadata"))
    service = bootfacts.text(bootfacts.as_map(metadata.get("annotations")).get(contract.SERVICE_ANNOTATION))
    name = bootfacts.text(metadata.get("name")) or res.name
    subject = f'service "{service}"' if service else f'{word} "{name}"' + (f" {part}" if part else "")
    requests = fit.pod_requests(pod)
    gpus = _gpus(requests)
    # EKS runs the ExtendedResourceToleration admission controller (EKS user guide, platform versions):
    # a pod that requests an extended resource (a domain-qualified name outside kubernetes.io: GPUs,
    # aws.amazon.com/neuron, vpc.amazonaws.com/efa) tolerates the NoSchedule taint keyed by it (not DRA claims)
    admitted = tuple(
        Toleration(resource, "Exists", "", "NoSchedule") for resource in requests if fit.extended(resource)
    )
    asked = _claims(pod, claims)
    images = tuple(
        bootfacts.text(bootfacts.as_map(c).get("image"))
        for group in ("initContainers", "containers")
        for c in bootfacts.as_list(pod.get(group))
    )
    slices = tuple(r for r, amount in requests.items() if r.startswith(NVIDIA_SLICES) and amount)
    # the device plugin's MIG resources (its "mixed" strategy): nvidia.com/mig-<profile>, '+' written '.'
    mig = tuple(instances.mig_profile(r.removeprefix(MIG_RESOURCE)) or "" for r in slices if r.startswith(MIG_RESOURCE))
    programs = tuple(_program(bootfacts.as_map(c)) for c in bootfacts.as_list(pod.get("containers")))
    selection = scheduling.selection_of(pod)
    shares = () if any(requests.get(r) for r in GPU_RESOURCES) else _gpu_shares(pod, _pod_metadata(res.props, at))
    gpu_nodes = (
        ()
        if kind == "DaemonSet"
        else tuple(
            dict.fromkeys(
                f"{r.key}={r.values[0]}" if r.operator == "In" and len(r.values) == 1 else f"{r.key} {r.operator}"
                for r in selection.requirements
                if _nvidia_node_label(r)
            )
        )
    )
    host_paths = tuple(
        bootfacts.text(bootfacts.dig(v, "hostPath", "path"))
        for v in bootfacts.as_list(pod.get("volumes"))
        if bootfacts.text(bootfacts.dig(v, "hostPath", "path"))
    )
    env_names = tuple(
        bootfacts.text(bootfacts.as_map(e).get("name"))
        for group in ("initContainers", "containers")
        for c in bootfacts.as_list(pod.get(group))
        for e in bootfacts.as_list(bootfacts.as_map(c).get("env"))
    )
    return Workload(
        subject,
        kind,
        res.urn,
        selection,
        scheduling.tolerations_of(pod) + admitted,
        gpus,
        requests,
        asked.names,
        asked.gpus,
        images,
        programs,
        slices,
        (*refused, *fit.refusals(pod), *overhead),
        mig + asked.mig,
        asked.unheld,
        asked.refused,
        shares,
        gpu_nodes,
        host_paths,
        env_names,
    )


GPU_SHARE_ANNOTATIONS = ("gpu-fraction", "gpu-memory")
"""Pod annotations with which NVIDIA's KAI Scheduler (NVIDIA/KAI-Scheduler ``pkg/common/constants/constants.go``,
``docs/gpu-sharing``) gives a pod a part of a GPU (a fraction of one, or MiB of its memory): the pod requests no GPU
resource, and only a pod the KAI scheduler places (its ``schedulerName``) gets one."""
_NFD_NVIDIA_PCI_RE = re.compile(r"feature\.node\.kubernetes\.io/pci-(?:[0-9a-f]{4}_)?10de\.present")


def _gpu_shares(pod: Mapping[str, Any], metadata: Mapping[str, Any]) -> tuple[str, ...]:
    scheduler = bootfacts.text(pod.get("schedulerName"))
    if not scheduler or scheduler == "default-scheduler":
        return ()
    annotations = bootfacts.as_map(metadata.get("annotations"))
    return tuple(
        f"{key} {bootfacts.text(annotations[key]) or number_text(annotations[key])}"
        for key in GPU_SHARE_ANNOTATIONS
        if annotations.get(key) not in (None, "")
    )


def _nvidia_node_label(req: scheduling.PodRequirement) -> bool:
    """A requirement that holds only on NVIDIA GPU nodes: NFD's NVIDIA PCI label, or a label NVIDIA's agents write
    (``nvidia.com/gpu.present``, ``nvidia.com/gpu.product`` ...) required to exist or to have a value other than
    false."""
    if req.field or not (req.key.startswith("nvidia.com/") or _NFD_NVIDIA_PCI_RE.fullmatch(req.key)):
        return False
    return req.operator in ("Exists", "Gt", "Lt") or (
        req.operator == "In" and all(v.lower() != "false" for v in req.values)
    )


_PATH_STEP_RE = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _pod_metadata(props: Mapping[str, Any], at: str) -> Mapping[str, Any]:
    """The metadata beside a pod spec at ``at`` (``spec.template.spec`` -> ``spec.template.metadata``; a Pod's own)."""
    steps = [int(index) if index else key for key, index in _PATH_STEP_RE.findall(at)]
    if not steps or steps[-1] != "spec":
        return {}
    value: Any = props
    for step in steps[:-1]:
        value = (
            bootfacts.as_list(value)[step]
            if isinstance(step, int) and step < len(bootfacts.as_list(value))
            else (None if isinstance(step, int) else bootfacts.as_map(value).get(step))
        )
    return bootfacts.as_map(bootfacts.as_map(value).get("metadata"))


def image_name(image: str) -> str:
    """``nvcr.io/nvidia/k8s-device-plugin:v0.20.0`` -> ``k8s-device-plugin``: whatever registry, tag or digest."""
    return image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]


def _program(container: Mapping[str, Any]) -> str:
    command = bootfacts.as_list(container.get("command"))
    first = bootfacts.text(command[0]) if command else ""
    return first.rsplit("/", 1)[-1] if first else image_name(bootfacts.text(container.get("image")))
