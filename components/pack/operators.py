"""The pods GPU serving and batch operators make of their custom resources, read as each operator builds them:
NVIDIA NIM (``NIMService``, ``NIMCache``), NVIDIA Dynamo (``DynamoGraphDeployment``), Slinky's Slurm ``NodeSet``
and SGLang OME (``InferenceService`` of ``ome.io`` over its ``ClusterServingRuntime`` or ``ServingRuntime``); and,
for a custom resource no reader knows, the pod specs it embeds, found by their shape.

Each reader returns the resource's pods as ``(part, path, pod spec, where)`` (``pods.PodAt``); the pod spec is the
one the operator creates: the requests, limits, node selector, tolerations and affinity it writes there."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

from .. import contract
from . import bootfacts

PodAt = tuple[str, str, Mapping[str, Any], Mapping[str, str]]
Related = Mapping[tuple[str, str], Mapping[str, Any]]
"""Custom resources of the stack an operator reads beside the one it reconciles, by ``(kind, metadata.name)``:
the ``NIMCache`` a ``NIMService`` mounts, the ``ServingRuntime`` or ``ClusterServingRuntime`` an OME
``InferenceService`` runs, Kueue's queues and flavors."""
RELATED_KINDS = {
    ("apps.nvidia.com", "NIMCache"),
    ("ome.io", "ServingRuntime"),
    ("ome.io", "ClusterServingRuntime"),
    ("kueue.x-k8s.io", "LocalQueue"),
    ("kueue.x-k8s.io", "ClusterQueue"),
    ("kueue.x-k8s.io", "ResourceFlavor"),
}

_PLACEMENT = ("nodeSelector", "tolerations", "affinity", "runtimeClassName", "schedulerName")


def _pod(spec: Mapping[str, Any], containers: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    pod: dict[str, Any] = {k: spec[k] for k in _PLACEMENT if k in spec}
    pod["containers"] = list(containers)
    return pod


# ---- NVIDIA NIM ------------------------------------------------------------------------------------------------

NFD_NVIDIA_PCI = "feature.node.kubernetes.io/pci-10de.present"
"""Node Feature Discovery's label for a node with an NVIDIA PCI device (vendor id 10de)."""


def nim_service(props: Mapping[str, Any], related: Related) -> list[PodAt]:
    """A NIMService's pod (NVIDIA/k8s-nim-operator ``api/apps/v1alpha1/nimservice_types.go``; the standalone
    controller ``internal/controller/platform/standalone/nimservice.go``): one container, ``<name>-ctr``, with
    ``spec.resources``, in a pod with ``spec.nodeSelector``, ``tolerations``, ``affinity``, ``runtimeClassName`` and
    ``schedulerName``. When the model comes from a ``NIMCache`` of an optimized NIM (an NGC source without a
    ``modelEndpoint``) and ``spec.resources`` names no ``nvidia.com/gpu`` (nor ``draResources`` are set), the
    controller gives the container the profile's tensor parallelism in GPUs, one at least (``addGPUResources``);
    a multi-node service gets ``multiNode.parallelism.tensor`` per pod."""
    spec = bootfacts.as_map(props.get("spec"))
    name = bootfacts.text(bootfacts.dig(props, "metadata", "name")) or "nimservice"
    resources = dict(bootfacts.as_map(spec.get("resources")))
    written = {str(k) for part in ("requests", "limits") for k in bootfacts.as_map(resources.get(part))}
    cache = bootfacts.text(bootfacts.dig(spec, "storage", "nimCache", "name"))
    cached = related.get(("NIMCache", cache)) if cache else None
    optimized = (
        cached is not None
        and isinstance(bootfacts.dig(cached, "spec", "source", "ngc"), Mapping)
        and bootfacts.dig(cached, "spec", "source", "ngc", "modelEndpoint") is None
    )
    if optimized and contract.NVIDIA_GPU not in written and not bootfacts.as_list(spec.get("draResources")):
        tensor = (
            bootfacts.number(bootfacts.dig(spec, "multiNode", "parallelism", "tensor"))
            if spec.get("multiNode")
            else None
        )
        count = str(int(tensor)) if tensor and math.isfinite(tensor) and tensor >= 1 and tensor == int(tensor) else "1"
        resources = {
            part: {**bootfacts.as_map(resources.get(part)), contract.NVIDIA_GPU: count}
            for part in ("requests", "limits")
        }
    container = {"name": f"{name}-ctr", "resources": resources}
    return [("", "spec", _pod(spec, [container]), {})]


def nim_cache(props: Mapping[str, Any], related: Related) -> list[PodAt]:
    """A NIMCache's caching Job pod (NVIDIA/k8s-nim-operator ``api/apps/v1alpha1/nimcache_types.go``,
    ``internal/controller/nimcache_controller.go``): ``spec.resources.cpu`` and ``memory`` as the container's
    requests and limits (no GPU), ``spec.tolerations``, and ``spec.nodeSelector``, or without one NFD's
    ``feature.node.kubernetes.io/pci-10de.present: "true"``: the Job runs on NVIDIA GPU nodes."""
    spec = bootfacts.as_map(props.get("spec"))
    sized = {
        k: v
        for k, v in bootfacts.as_map(spec.get("resources")).items()
        if k in ("cpu", "memory") and v not in (None, "")
    }
    pod = _pod(spec, [{"name": "nim-cache-ctr", "resources": {"requests": sized, "limits": sized}}])
    pod["nodeSelector"] = spec.get("nodeSelector") or {NFD_NVIDIA_PCI: "true"}
    return [("", "spec", pod, {})]


# ---- NVIDIA Dynamo ---------------------------------------------------------------------------------------------


def _dynamo_resources(resources: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A Dynamo ``Resources`` (ai-dynamo/dynamo ``deploy/operator/api/v1alpha1/common.go``: ``requests`` and
    ``limits``, each a ``ResourceItem`` of ``cpu``, ``memory``, ``gpu``, ``gpuType`` and ``custom``) as a container's:
    ``gpu: "1"`` is one ``gpuType``, ``nvidia.com/gpu`` unless it names another."""
    found: dict[str, dict[str, Any]] = {}
    for part in ("requests", "limits"):
        item = bootfacts.as_map(resources.get(part))
        amounts: dict[str, Any] = {k: item[k] for k in ("cpu", "memory") if item.get(k) not in (None, "")}
        if item.get("gpu") not in (None, ""):
            amounts[bootfacts.text(item.get("gpuType")) or contract.NVIDIA_GPU] = item["gpu"]
        amounts.update({str(k): v for k, v in bootfacts.as_map(item.get("custom")).items()})
        if amounts:
            found[part] = amounts
    return found


def dynamo_graph(props: Mapping[str, Any], related: Related) -> list[PodAt]:
    """A DynamoGraphDeployment's pods, one per service. ``nvidia.com/v1alpha1`` keeps them in ``spec.services``
    (name -> shared spec): the pod is the service's ``extraPodSpec`` (a pod spec inline), its main container
    ``extraPodSpec.mainContainer`` with the service's ``resources`` (``gpu`` shorthand read as above) over its own;
    a multi-node service runs that pod on each of its nodes. ``nvidia.com/v1beta1`` writes each of
    ``spec.components[]`` as a pod template (``podTemplate.spec``)."""
    spec = bootfacts.as_map(props.get("spec"))
    found: list[PodAt] = []
    for i, component in enumerate(bootfacts.as_list(spec.get("components"))):
        component = bootfacts.as_map(component)
        pod = bootfacts.dig(component, "podTemplate", "spec")
        if isinstance(pod, Mapping) and pod:
            found.append(
                (
                    f"component '{bootfacts.text(component.get('name')) or i}'",
                    f"spec.components[{i}].podTemplate.spec",
                    pod,
                    {},
                )
            )
    for name, service in bootfacts.as_map(spec.get("services")).items():
        service = bootfacts.as_map(service)
        extra = bootfacts.as_map(service.get("extraPodSpec"))
        main = dict(bootfacts.as_map(extra.get("mainContainer")))
        own = bootfacts.as_map(main.get("resources"))
        given = _dynamo_resources(bootfacts.as_map(service.get("resources")))
        main["resources"] = {
            part: {**bootfacts.as_map(own.get(part)), **given.get(part, {})}
            for part in ("requests", "limits")
            if own.get(part) or part in given
        }
        main.setdefault("name", "main")
        pod = {k: v for k, v in extra.items() if k != "mainContainer"}
        pod["containers"] = [main, *bootfacts.as_list(extra.get("containers"))]
        found.append((f"service '{name}'", f"spec.services.{name}.extraPodSpec", pod, {}))
    return found


# ---- Slinky's Slurm NodeSet -------------------------------------------------------------------------------------


def slurm_node_set(props: Mapping[str, Any], related: Related) -> list[PodAt]:
    """A Slinky NodeSet's slurmd pod (SlinkyProject/slurm-operator ``api/v1beta1/nodeset_types.go``,
    ``internal/builder/workerbuilder/worker_app.go``): ``spec.template.spec`` merged over the operator's base, whose
    containers are ``slurmd`` (``spec.slurmd``: its resources are the node's share for Slurm) and the ``logfile``
    sidecar (``spec.logfile``); the base tolerates only the operator's own worker taint."""
    spec = bootfacts.as_map(props.get("spec"))
    template = bootfacts.as_map(bootfacts.dig(spec, "template", "spec"))
    slurmd = {**bootfacts.as_map(spec.get("slurmd")), "name": "slurmd"}
    logfile = {**bootfacts.as_map(spec.get("logfile")), "name": "logfile", "restartPolicy": "Always"}
    pod = dict(template)
    pod["containers"] = [
        slurmd,
        *(c for c in bootfacts.as_list(template.get("containers")) if bootfacts.as_map(c).get("name") != "slurmd"),
    ]
    pod["initContainers"] = [logfile, *bootfacts.as_list(template.get("initContainers"))]
    return [("", "spec.template.spec", pod, {})]


def slurm_node_set_kind(props: Mapping[str, Any]) -> str:
    """How a NodeSet runs its pods: ``scalingMode: DaemonSet`` puts one on every node it selects, as a DaemonSet."""
    return "DaemonSet" if bootfacts.dig(props, "spec", "scalingMode") == "DaemonSet" else "NodeSet"


# ---- SGLang OME -------------------------------------------------------------------------------------------------

OME_PARTS = (("engine", "engineConfig"), ("decoder", "decoderConfig"), ("router", "routerConfig"))
"""An OME InferenceService's components and the field of its serving runtime that holds each one's defaults
(sgl-project/ome ``pkg/apis/ome/v1beta1/inference_service.go``, ``servingruntime_types.go``)."""
_RUNNER = "ome-container"


def _overlay(base: Any, over: Any) -> Any:
    """``over`` merged onto ``base`` as the strategic merge patch OME uses for a runtime's defaults: objects merge
    key by key, ``containers`` by name, other lists are replaced."""
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        merged = dict(base)
        for key, value in over.items():
            if key == "containers" and isinstance(value, Sequence) and isinstance(base.get(key), Sequence):
                merged[key] = _by_name(bootfacts.as_list(base.get(key)), bootfacts.as_list(value))
            else:
                merged[key] = _overlay(base.get(key), value) if key in base else value
        return merged
    return base if over is None else over


def _by_name(base: Sequence[Any], over: Sequence[Any]) -> list[Any]:
    named = {bootfacts.text(bootfacts.as_map(c).get("name")): c for c in over}
    merged = [_overlay(c, named.pop(bootfacts.text(bootfacts.as_map(c).get("name")), None)) for c in base]
    return merged + [c for c in over if bootfacts.text(bootfacts.as_map(c).get("name")) in named]


def _ome_runtime(props: Mapping[str, Any], related: Related) -> Optional[Mapping[str, Any]]:
    """The serving runtime an InferenceService names (``spec.runtime.name``): a ServingRuntime of that name, else a
    ClusterServingRuntime; None when it names none (OME picks one by the model's format) or the stack holds none."""
    name = bootfacts.text(bootfacts.dig(props, "spec", "runtime", "name"))
    if not name:
        return None
    found = related.get(("ServingRuntime", name)) or related.get(("ClusterServingRuntime", name))
    return bootfacts.as_map(found.get("spec")) if found is not None else None


def ome_inference_service(props: Mapping[str, Any], related: Related) -> list[PodAt]:
    """An OME InferenceService's pods (sgl-project/ome ``pkg/controller/v1beta1/inferenceservice/utils``
    ``merging.go``, ``MergeRuntimeSpecs``): each of its ``engine``, ``decoder`` and ``router`` that it writes, as the
    runtime's ``engineConfig``/``decoderConfig``/``routerConfig`` with the InferenceService's component merged
    over it (a strategic merge: the component wins). A component is a pod spec inline, whose ``runner`` is its
    main container. A multi-node component (``leader``, ``worker``) runs a leader pod and worker pods, each its own
    pod spec with its own ``runner`` (``components/engine.go``). Every pod of the engine and decoder takes the
    runtime's own ``nodeSelector`` with the InferenceService's component's over it, over the pod's own keys
    (``MergeNodeSelector``, ``UpdatePodSpecNodeSelector``)."""
    spec = bootfacts.as_map(props.get("spec"))
    runtime = _ome_runtime(props, related) or {}
    found: list[PodAt] = []
    for part, config in OME_PARTS:
        written = spec.get(part)
        if not isinstance(written, Mapping):
            continue
        component = bootfacts.as_map(_overlay(bootfacts.as_map(runtime.get(config)), written))
        # the engine's and decoder's every pod: the runtime's nodeSelector, then the InferenceService's component's,
        # over the pod's own (MergeNodeSelector, UpdatePodSpecNodeSelector)
        merged = (
            {}
            if part == "router"
            else {**bootfacts.as_map(runtime.get("nodeSelector")), **bootfacts.as_map(written.get("nodeSelector"))}
        )
        roles = [
            (role, bootfacts.as_map(component.get(role)))
            for role in ("leader", "worker")
            if isinstance(component.get(role), Mapping)
        ]
        if not roles:
            found.append((part, f"spec.{part}", _ome_pod(component, merged), {}))
        for role, pod in roles:
            if role == "worker" and bootfacts.number(pod.get("size")) == 0:
                continue
            found.append((f"{part} {role}", f"spec.{part}.{role}", _ome_pod(pod, merged), {}))
    return found


def _ome_pod(component: Mapping[str, Any], node_selector: Mapping[str, Any]) -> dict[str, Any]:
    runner = component.get("runner")
    containers = list(bootfacts.as_list(component.get("containers")))
    pod = {k: v for k, v in component.items() if k not in ("runner", "leader", "worker", "size", "containers")}
    if node_selector:
        pod["nodeSelector"] = {**bootfacts.as_map(component.get("nodeSelector")), **node_selector}
    if isinstance(runner, Mapping):
        name = bootfacts.text(runner.get("name")) or _RUNNER
        containers = [{**runner, "name": name}, *(c for c in containers if bootfacts.as_map(c).get("name") != name)]
    pod["containers"] = containers
    return pod


# ---- custom resources no reader knows ---------------------------------------------------------------------------

EMBEDDED_DEPTH = 16
"""How deep under ``spec`` pod specs are looked for (a JobSet's is 6 levels down; a hostile nesting is not
followed further)."""
_NOT_PODS = ("values", "valuesFrom", "status")
"""Keys under which a pod spec's shape is not a pod the resource runs: a Helm or Flux release's chart values, and
status."""


def embedded_pods(props: Mapping[str, Any]) -> list[PodAt]:
    """The pod specs a custom resource embeds, found by shape: under its ``spec``, each object that holds
    ``containers``, a list of containers (objects with an ``image`` or a ``name``), is a pod spec (a
    ``template.spec``, a ``podSpec``, an inline pod spec), named by its path. What an operator adds to such a pod
    is not known; what the resource writes is judged."""
    found: list[PodAt] = []

    def walk(value: Any, at: str, depth: int = 0) -> None:
        if depth > EMBEDDED_DEPTH:
            return
        if isinstance(value, Mapping):
            containers = value.get("containers")
            if (
                isinstance(containers, Sequence)
                and not isinstance(containers, str)
                and containers
                and all(isinstance(c, Mapping) and ("image" in c or "name" in c) for c in containers)
            ):
                found.append((at, at, value, {}))
                return
            for key, child in value.items():
                if str(key) not in _NOT_PODS:
                    walk(child, f"{at}.{key}", depth + 1)
        elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            for i, child in enumerate(value):
                walk(child, f"{at}[{i}]", depth + 1)

    walk(props.get("spec"), "spec")
    return found


# ---- Kueue ------------------------------------------------------------------------------------------------------

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def kueue_flavors(metadata: Sequence[Mapping[str, Any]], related: Related) -> tuple[str, list[Mapping[str, Any]]]:
    """The ResourceFlavors Kueue may admit a workload with (kubernetes-sigs/kueue ``pkg/podset/podset.go``,
    ``FromAssignment``: the assigned flavor's ``nodeLabels`` are merged into the pod's nodeSelector and its
    ``tolerations`` added): the queue named by the ``kueue.x-k8s.io/queue-name`` label of the workload (or of its pod
    template), its LocalQueue's ``spec.clusterQueue``, and that ClusterQueue's flavors (``spec.resourceGroups[].
    flavors[].name``). ('', []) unless the stack holds the queue, its ClusterQueue and every flavor."""
    queue = next(
        (
            bootfacts.text(bootfacts.dig(m, "labels", KUEUE_QUEUE_LABEL))
            for m in metadata
            if bootfacts.text(bootfacts.dig(m, "labels", KUEUE_QUEUE_LABEL))
        ),
        "",
    )
    local = related.get(("LocalQueue", queue)) if queue else None
    cluster_name = bootfacts.text(bootfacts.dig(local, "spec", "clusterQueue"))
    cluster = related.get(("ClusterQueue", cluster_name)) if cluster_name else None
    if cluster is None:
        return "", []
    names = list(
        dict.fromkeys(
            bootfacts.text(bootfacts.as_map(f).get("name"))
            for group in bootfacts.as_list(bootfacts.dig(cluster, "spec", "resourceGroups"))
            for f in bootfacts.as_list(bootfacts.as_map(group).get("flavors"))
        )
    )
    flavors = [related.get(("ResourceFlavor", name)) for name in names if name]
    if not flavors or any(f is None for f in flavors):
        return "", []
    return f"Kueue's queue '{queue}' (ClusterQueue '{cluster_name}', flavors {', '.join(names)})", [
        bootfacts.as_map(f.get("spec")) for f in flavors if f is not None
    ]


def with_flavors(pod: Mapping[str, Any], flavors: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The pod as Kueue admits it with one of ``flavors``: one flavor's ``nodeLabels`` merged into its nodeSelector;
    with several, each flavor an alternative (an affinity term with its labels, beside each of the pod's own terms);
    the flavors' tolerations added. A flavor without node labels leaves the pod where it was."""
    labels = [{str(k): v for k, v in bootfacts.as_map(f.get("nodeLabels")).items()} for f in flavors]
    merged = dict(pod)
    tolerations = [t for f in flavors for t in bootfacts.as_list(f.get("tolerations"))]
    if tolerations:
        merged["tolerations"] = [*bootfacts.as_list(pod.get("tolerations")), *tolerations]
    if not labels or not all(labels):
        return merged
    if len(labels) == 1:
        merged["nodeSelector"] = {**bootfacts.as_map(pod.get("nodeSelector")), **labels[0]}
        return merged
    required = bootfacts.dig(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    terms = (
        bootfacts.as_list(bootfacts.as_map(required).get("nodeSelectorTerms"))
        if isinstance(required, Mapping)
        else [{}]
    )
    alternatives = [
        {
            **bootfacts.as_map(term),
            "matchExpressions": [
                *bootfacts.as_list(bootfacts.as_map(term).get("matchExpressions")),
                *({"key": k, "operator": "In", "values": [v]} for k, v in flavor.items()),
            ],
        }
        for term in terms
        for flavor in labels
    ]
    affinity = dict(bootfacts.as_map(pod.get("affinity")))
    affinity["nodeAffinity"] = {
        **bootfacts.as_map(affinity.get("nodeAffinity")),
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": alternatives},
    }
    merged["affinity"] = affinity
    return merged
