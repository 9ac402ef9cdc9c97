"""The GPU tier's cluster add-ons: ``NvidiaDevicePlugin`` and ``GpuObservability`` (dcgm-exporter).

Both are Helm v4 ``Chart``s (rendered client side, so the policy pack sees every object) pinned to
the nodes that carry our GPU-vendor label, ``convox.io/gpu-vendor=nvidia``. Only AL2023 GPU lanes
get that label (node groups and Karpenter pools; GPU lanes on Bottlerocket are refused, and
Bottlerocket's NVIDIA variants ship a device plugin of their own), so the DaemonSets run on every
GPU lane and nowhere else. The charts' own defaults would not do: the device plugin's affinity
wants NFD labels or ``nvidia.com/gpu.present=true``, and dcgm-exporter tolerates no GPU taint.
"""

from typing import Any, NotRequired, Optional, Required, TypedDict

import pulumi
import pulumi_kubernetes as k8s
import yaml

from . import contract
from .args import check_start, checked, documented, hosted
from .cluster import ONE_PER_CLUSTER, ClusterRef
from .errors import ArgumentError
from .facts import upstream
from .spec.rack import chart_version_problem, time_slicing_problem

NAMESPACE = "kube-system"
TIME_SLICING_CONFIG = "time-slicing"

# The taints of the seeds' lanes a GPU node may carry: the GPU taint, `dedicated` lanes, build lanes.
GPU_TOLERATIONS: list[dict[str, str]] = [
    {"key": key, "operator": "Exists", "effect": "NoSchedule"}
    for key in ("CriticalAddonsOnly", contract.GPU_TAINT_KEY, contract.DEDICATED_TAINT_KEY, contract.BUILD_TAINT_KEY)
]


def gpu_node_affinity() -> dict[str, Any]:
    """Required node affinity on the GPU-vendor label our AL2023 GPU lanes carry."""
    term = {
        "matchExpressions": [
            {"key": contract.GPU_VENDOR_LABEL, "operator": "In", "values": [contract.GPU_VENDOR_NVIDIA]}
        ]
    }
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def time_slicing_config(replicas: int) -> str:
    """The device plugin's config file (``version: v1``) sharing each GPU ``replicas`` ways."""
    config = {
        "version": "v1",
        "sharing": {"timeSlicing": {"resources": [{"name": contract.GPU_TAINT_KEY, "replicas": replicas}]}},
    }
    text: str = yaml.safe_dump(config, sort_keys=False)
    return text


def device_plugin_values(time_slicing_replicas: int = 1) -> dict[str, Any]:
    """Chart values (keys of nvidia-device-plugin 0.20.0's ``values.yaml``)."""
    values: dict[str, Any] = {"affinity": gpu_node_affinity(), "tolerations": GPU_TOLERATIONS}
    if time_slicing_replicas > 1:
        # The chart's own config mechanism: an integrated ConfigMap and its default entry.
        values["config"] = {
            "map": {TIME_SLICING_CONFIG: time_slicing_config(time_slicing_replicas)},
            "default": TIME_SLICING_CONFIG,
        }
    return values


def dcgm_exporter_values(service_monitor: bool = False) -> dict[str, Any]:
    """Chart values (keys of dcgm-exporter 4.8.2's ``values.yaml``)."""
    return {
        "affinity": gpu_node_affinity(),
        "tolerations": GPU_TOLERATIONS,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "200m", "memory": "512Mi"}},
        # The chart enables it by default; it needs the monitoring.coreos.com CRDs in the cluster.
        "serviceMonitor": {"enabled": service_monitor},
    }


class _ChartAddon(pulumi.ComponentResource):
    """One Helm v4 chart, rendered client side, in the cluster's provider; ``release`` names its objects."""

    release_name: pulumi.Output[str]
    """The Helm release name (the chart's objects are named after it)."""
    namespace: pulumi.Output[str]
    """The namespace the chart's objects are in."""
    chart_version: pulumi.Output[str]
    """The chart version installed."""

    def _install(
        self,
        name: str,
        chart: upstream.Chart,
        version: str,
        namespace: str,
        cluster: ClusterRef,
        values: dict[str, Any],
    ) -> None:
        problem = chart_version_problem(version, "version")
        if problem:
            raise ArgumentError(type(self).__name__, name, "version", problem)
        cluster.claim(type(self).__name__, name, {chart.name: ONE_PER_CLUSTER})
        self.chart: k8s.helm.v4.Chart = k8s.helm.v4.Chart(
            name,
            chart=chart.name,
            version=version,
            namespace=namespace,
            repository_opts=k8s.helm.v4.RepositoryOptsArgs(repo=chart.repo),
            values=values,
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider),
        )
        self.release_name = pulumi.Output.from_input(name)
        self.namespace = pulumi.Output.from_input(namespace)
        self.chart_version = pulumi.Output.from_input(version)
        self.register_outputs(
            {"releaseName": self.release_name, "namespace": self.namespace, "chartVersion": self.chart_version}
        )


class NvidiaDevicePluginArgs(TypedDict, total=False):
    cluster: Required[ClusterRef]
    """The cluster to install into (its Kubernetes provider)."""
    time_slicing_replicas: NotRequired[int]
    """Share each GPU this many ways (time-slicing) when greater than 1. Default 1."""
    version: NotRequired[str]
    """The chart version. Default 0.20.0."""
    namespace: NotRequired[str]
    """Default ``kube-system``."""


@documented
class NvidiaDevicePlugin(_ChartAddon):
    """The NVIDIA device plugin DaemonSet, on every AL2023 GPU lane and nowhere else.

    Example::

        NvidiaDevicePlugin("nvidia", NvidiaDevicePluginArgs(
            cluster=ClusterRef.existing("prod", "prod-rack"), time_slicing_replicas=2))
    """

    def __init__(self, name: str, args: NvidiaDevicePluginArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("NvidiaDevicePlugin", name, opts)
        token, opts = hosted("NvidiaDevicePlugin", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, NvidiaDevicePluginArgs)
        replicas = args.get("time_slicing_replicas", 1)
        problem = time_slicing_problem(replicas)
        if problem:
            raise ArgumentError("NvidiaDevicePlugin", name, "time_slicing_replicas", problem)
        self._install(
            name,
            upstream.NVIDIA_DEVICE_PLUGIN,
            args.get("version", upstream.NVIDIA_DEVICE_PLUGIN.version),
            args.get("namespace", NAMESPACE),
            args["cluster"],
            device_plugin_values(replicas),
        )


class GpuObservabilityArgs(TypedDict, total=False):
    cluster: Required[ClusterRef]
    """The cluster to install into (its Kubernetes provider)."""
    version: NotRequired[str]
    """The dcgm-exporter chart version. Default 4.8.2."""
    service_monitor: NotRequired[bool]
    """Create the chart's ServiceMonitor; only when the cluster has the monitoring.coreos.com CRDs. Default false."""
    namespace: NotRequired[str]
    """Default ``kube-system``."""


@documented
class GpuObservability(_ChartAddon):
    """NVIDIA dcgm-exporter: GPU metrics from every AL2023 GPU lane.

    Example::

        GpuObservability("dcgm", GpuObservabilityArgs(cluster=ClusterRef.existing("prod", "prod-rack")))
    """

    def __init__(self, name: str, args: GpuObservabilityArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("GpuObservability", name, opts)
        token, opts = hosted("GpuObservability", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, GpuObservabilityArgs)
        self._install(
            name,
            upstream.DCGM_EXPORTER,
            args.get("version", upstream.DCGM_EXPORTER.version),
            args.get("namespace", NAMESPACE),
            args["cluster"],
            dcgm_exporter_values(args.get("service_monitor", False)),
        )
