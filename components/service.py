"""``Service``: one of the seeds' services as a Deployment and a Service, on the lane it selects.

From a ``ServiceSpec`` (the seeds' service fields):

* a Deployment ``<name>`` whose pod lands where ``placement()`` says (required node affinity on
  ``nodeSelectorLabels``, the lane's ``dedicated-node`` toleration, the GPU toleration, request and
  limit), one container with the CPU and memory requests (memory also as the limit, GPUs as both, as
  the seeds do), the environment, readiness and liveness probes on the health path, and, for a GPU
  service, the seeds' startup probe (a TCP check allowing 30 minutes for a model to load, so liveness
  does not restart a pod that is still loading). Containers run with no privilege escalation, every
  capability dropped and the RuntimeDefault seccomp profile; ``securityContext`` adds running as
  non-root and a read-only root filesystem (with ``/tmp`` an emptyDir).
* a Service ``<name>``: ClusterIP when ``internal``, else a LoadBalancer, on the service's port.
* for a count range (``2-6``), an autoscaling/v2 HorizontalPodAutoscaler ``<name>`` on CPU
  utilization, and no ``replicas`` in the Deployment (the autoscaler owns it; Kubernetes' HPA
  documentation, "Migrating Deployments and StatefulSets to horizontal autoscaling", says to drop
  ``spec.replicas`` from a manifest an HPA scales, or every apply resets the pod count).

The Deployment carries the ``mixed-os-racks/service`` annotation, so the policy pack names it as the
seeds do (``service "web"``).
"""

from typing import Any, Mapping, NotRequired, Optional, Required, TypedDict, cast

import pulumi
import pulumi_kubernetes as k8s

from . import contract
from .args import check_start, checked, documented, hosted
from .cluster import ClusterRef
from .errors import ArgumentError
from .lane import Lane
from .placement import Lanes, Scheduling, fit_problems, lanes_problem, later
from .spec.service import ServiceSpec

NAME_LABEL = "app.kubernetes.io/name"
MANAGED_BY = {"app.kubernetes.io/managed-by": "mixed-os-racks"}
PORT_NAME = "http"

# The seeds' probe timings (convox/convox pkg/manifest/manifest.go): liveness waits 10 s and checks every
# 5 s; a GPU service gets a TCP startup probe of 300 s + 180 x 10 s before liveness starts.
LIVENESS = {
    "initialDelaySeconds": 10,
    "periodSeconds": 5,
    "timeoutSeconds": 5,
    "successThreshold": 1,
    "failureThreshold": 3,
}
GPU_STARTUP = {
    "initialDelaySeconds": 300,
    "periodSeconds": 10,
    "timeoutSeconds": 5,
    "successThreshold": 1,
    "failureThreshold": 180,
}
TIMEOUT_ANNOTATION = "pulumi.com/timeoutSeconds"
"""pulumi-kubernetes waits this many seconds for an object to be ready (instead of its 10-minute default)."""
GPU_WAIT_SECONDS = 2400
"""A GPU service's default wait: the startup probe's 35 minutes for a model to load, after a node launches."""
GPU_WAIT_MIN_SECONDS = 1200
GPU_WAIT_MAX_SECONDS = 86_400


class ServiceArgs(TypedDict, total=False):
    service: Required[ServiceSpec]
    """The service: its name names the Deployment, the Service and the autoscaler."""
    cluster: Required[ClusterRef]
    """The cluster (its Kubernetes provider applies the objects)."""
    namespace: NotRequired[str]
    """An existing namespace. Default ``default``."""
    gpu_wait_seconds: NotRequired[int]
    """How long ``pulumi up`` waits for a GPU service's Deployment and Service to be ready, in seconds,
    1200 to 86400 (a GPU node launching, a multi-GB image pulling, a model loading). Default 2400. Only
    for a service with ``scale.gpu``."""
    lanes: NotRequired[pulumi.Input[Mapping[str, Lane]]]
    """The rack's lanes: its ``lanes`` output (``Rack.lanes``, or another stack's ``lanes`` output through a stack
    reference). In Python also ``Rack.lane_facts``, a list of lanes as the policy config names them, or the output's
    JSON text. The service is then refused, with the policy pack's
    words, if no lane can hold its pod (a lane that does not exist, GPUs with no GPU lane selected, more GPUs than
    the lane's instances have, CPU or memory beyond the allocatable of its largest instance): when it is built, or
    for lanes known later when they are, before its Deployment is registered. Default: judged at preview only, by
    the pack."""


ALSO = {"lanes": (str, list, tuple)}
"""What a Python program may pass as ``lanes`` besides the output's mapping: its JSON text, or a list of lanes."""


def security_context(spec: ServiceSpec) -> dict[str, Any]:
    """The container's: nothing gained at run time, every capability dropped, RuntimeDefault seccomp."""
    context: dict[str, Any] = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    if spec.security_context.run_as_non_root:
        context["runAsNonRoot"] = True
    if spec.security_context.read_only_root_filesystem:
        context["readOnlyRootFilesystem"] = True
    return context


def resources(spec: ServiceSpec) -> dict[str, dict[str, str]]:
    """Requests (CPU, memory, GPUs) and limits (memory, GPUs), as the seeds' template sets them."""
    scale, gpus = spec.scale, spec.placement().gpu_resources
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if scale.cpu_request is not None:
        requests["cpu"] = f"{scale.cpu_request}m"
    if scale.memory_request is not None:
        requests["memory"] = limits["memory"] = f"{scale.memory_request}Mi"
    requests.update(gpus)
    limits.update(gpus)
    out = {"requests": requests}
    if limits:
        out["limits"] = limits
    return out


def container(spec: ServiceSpec) -> dict[str, Any]:
    health = spec.health
    probe = {"httpGet": {"path": health.path, "port": PORT_NAME}}
    body: dict[str, Any] = {
        "name": spec.name,
        "image": spec.image,
        "ports": [{"name": PORT_NAME, "containerPort": spec.port, "protocol": "TCP"}],
        "readinessProbe": {
            **probe,
            "initialDelaySeconds": health.initial_delay,
            "periodSeconds": health.interval,
            "timeoutSeconds": health.check_timeout,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "livenessProbe": {**probe, **LIVENESS},
        "resources": resources(spec),
        "securityContext": security_context(spec),
    }
    if spec.scale.gpu.count:
        body["startupProbe"] = {"tcpSocket": {"port": PORT_NAME}, **GPU_STARTUP}
    if spec.environment:
        body["env"] = [{"name": k, "value": v} for k, v in spec.environment.items()]
    if spec.security_context.read_only_root_filesystem:
        body["volumeMounts"] = [{"name": "tmp", "mountPath": "/tmp"}]
    return body


def pod_spec(spec: ServiceSpec) -> dict[str, Any]:
    """The Deployment's pod spec: one container, placed by ``spec.placement()``."""
    pod: dict[str, Any] = {"containers": [container(spec)], **spec.placement().pod_spec()}
    if spec.security_context.read_only_root_filesystem:
        pod["volumes"] = [{"name": "tmp", "emptyDir": {}}]
    return pod


@documented
class Service(pulumi.ComponentResource):
    """A service as a Convox app declares one: a Deployment, a Service, and an autoscaler for a count range.

    Example::

        Service("web", ServiceArgs(service=ServiceSpec(name="web", image="nginx:1.27", port=80),
                                   cluster=ClusterRef.existing("prod", "prod-rack")))
    """

    deployment_name: pulumi.Output[str]
    """The Deployment's ``metadata.name``."""
    service_name: pulumi.Output[str]
    """The Service's ``metadata.name``: in-cluster DNS ``<name>.<namespace>.svc``."""
    namespace: pulumi.Output[str]
    """The namespace of the Deployment and the Service."""
    service_type: pulumi.Output[str]
    """``ClusterIP`` (internal) or ``LoadBalancer``."""
    autoscaler_name: pulumi.Output[Optional[str]]
    """The HorizontalPodAutoscaler's name, or None for a fixed count."""
    scheduling: pulumi.Output[Scheduling]
    """What placement gave the pods: ``affinity``, ``tolerations``, ``gpuResources``."""

    def __init__(self, name: str, args: ServiceArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("Service", name, opts)
        token, opts = hosted("Service", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, ServiceArgs, {"lanes": lanes_problem}, also=ALSO)
        spec: ServiceSpec = args["service"]
        cluster: ClusterRef = args["cluster"]
        namespace = args.get("namespace", "default")  # checked as a namespace (args.COMMON_RULES)
        cluster.claim(
            "Service",
            name,
            {f"Deployment {namespace}/{spec.name}": "give the service another name, or another namespace"},
        )

        def fits(lanes: Lanes) -> None:
            cpu, memory = spec.scale.cpu_request, spec.scale.memory_request
            problems = fit_problems(
                spec.placement(), lanes, f'service "{spec.name}"', cpu=cpu / 1000 if cpu else None, memory_mib=memory
            )
            if problems:
                raise ArgumentError("Service", name, "service", problems[0])

        lanes = args.get("lanes")
        # lanes known later (another stack's): the Deployment waits for them, and is never registered for a pod
        # no lane can hold
        judged = pulumi.Output.from_input(lanes).apply(fits) if lanes is not None and later(lanes) else None
        if lanes is not None and judged is None:
            fits(
                cast(Lanes, lanes)
            )  # known now: the mapping, or (a Python program's, ``ALSO``) its JSON text or a list

        wait = args.get("gpu_wait_seconds", GPU_WAIT_SECONDS)
        if "gpu_wait_seconds" in args and not spec.scale.gpu.count:
            raise ArgumentError(
                "Service",
                name,
                "gpu_wait_seconds",
                "is for a GPU service, and this one requests no GPU (scale.gpu); remove it",
            )
        if not GPU_WAIT_MIN_SECONDS <= wait <= GPU_WAIT_MAX_SECONDS:  # its type is checked with the other arguments
            raise ArgumentError(
                "Service",
                name,
                "gpu_wait_seconds",
                f"must be {GPU_WAIT_MIN_SECONDS} to {GPU_WAIT_MAX_SECONDS} (a day) (got {wait})",
            )

        child = pulumi.ResourceOptions(parent=self, provider=cluster.provider)
        selector = {NAME_LABEL: spec.name}
        labels = {**selector, **MANAGED_BY}
        # a GPU service waits for a GPU node and its image: pulumi-kubernetes's 10 minutes are too few
        waits = {TIMEOUT_ANNOTATION: str(wait)} if spec.scale.gpu.count else {}
        metadata: dict[str, Any] = {
            "name": spec.name,
            "namespace": namespace,
            "labels": labels,
            **({"annotations": waits} if waits else {}),
        }
        deployment_spec: dict[str, Any] = {
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec(spec)},
        }
        if not spec.scale.autoscaled:
            deployment_spec["replicas"] = spec.scale.count[0]
        self.deployment: k8s.apps.v1.Deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata={**metadata, "annotations": {**waits, contract.SERVICE_ANNOTATION: spec.name}},
            spec=judged.apply(lambda _: deployment_spec) if judged is not None else deployment_spec,
            opts=child,
        )
        service_type = "ClusterIP" if spec.internal else "LoadBalancer"
        self.service: k8s.core.v1.Service = k8s.core.v1.Service(
            f"{name}-service",
            metadata=metadata,
            spec={
                "type": service_type,
                "selector": selector,
                "ports": [{"name": PORT_NAME, "port": spec.port, "targetPort": PORT_NAME, "protocol": "TCP"}],
            },
            opts=child,
        )
        self.autoscaler: Optional[k8s.autoscaling.v2.HorizontalPodAutoscaler] = None
        if spec.scale.autoscaled:
            low, high = spec.scale.count
            self.autoscaler = k8s.autoscaling.v2.HorizontalPodAutoscaler(
                f"{name}-autoscaler",
                metadata={k: v for k, v in metadata.items() if k != "annotations"},
                spec={
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": spec.name},
                    "minReplicas": low,
                    "maxReplicas": high,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": spec.scale.targets.cpu},
                            },
                        }
                    ],
                },
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[self.deployment]),
            )

        self.deployment_name = pulumi.Output.from_input(spec.name)
        self.service_name = pulumi.Output.from_input(spec.name)
        self.namespace = pulumi.Output.from_input(namespace)
        self.service_type = pulumi.Output.from_input(service_type)
        self.autoscaler_name = pulumi.Output.from_input(spec.name if self.autoscaler is not None else None)
        self.scheduling = pulumi.Output.from_input(spec.placement().as_dict())
        self.register_outputs(
            {
                "deploymentName": self.deployment_name,
                "serviceName": self.service_name,
                "namespace": self.namespace,
                "serviceType": self.service_type,
                "autoscalerName": self.autoscaler_name,
                "scheduling": self.scheduling,
            }
        )
