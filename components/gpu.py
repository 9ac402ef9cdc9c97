"""The GPU tier's cluster add-ons: ``NvidiaDevicePlugin`` and ``GpuObservability`` (dcgm-exporter).

Both are Helm v4 ``Chart``s (rendered client side, so the policy pack sees every object) pinned to
the nodes that carry our GPU-vendor label, ``convox.io/gpu-vendor=nvidia``. Only AL2023 GPU lanes
get that label (node groups and Karpenter pools; GPU lanes on Bottlerocket are refused, and
Bottlerocket's NVIDIA variants ship a device plugin of their own), so the DaemonSets run on every
GPU lane and nowhere else. The charts' own defaults would not do: the device plugin's affinity
wants NFD labels or ``nvidia.com/gpu.present=true``, and dcgm-exporter tolerates no GPU taint.
"""

from __future__ import annotations

from typing import Any, Optional, TypedDict

import pulumi
import pulumi_kubernetes as k8s
import yaml

from policies import rules

from .config import ConfigError

DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
DEVICE_PLUGIN_VERSION = "0.20.0"
DEVICE_PLUGIN_REPO = "https://nvidia.github.io/k8s-device-plugin"
DCGM_EXPORTER_CHART = "dcgm-exporter"
DCGM_EXPORTER_VERSION = "4.8.2"
DCGM_EXPORTER_REPO = "https://nvidia.github.io/dcgm-exporter/helm-charts"
NAMESPACE = "kube-system"
TIME_SLICING_CONFIG = "time-slicing"

# The taints of the seeds' lanes a GPU node may carry: the GPU taint, `dedicated` lanes, build lanes.
GPU_TOLERATIONS: list[dict[str, str]] = [
    {"key": key, "operator": "Exists", "effect": "NoSchedule"}
    for key in ("CriticalAddonsOnly", rules.GPU_TAINT_KEY, rules.DEDICATED_TAINT_KEY, "dedicated")
]


def gpu_node_affinity() -> dict[str, Any]:
    """Required node affinity on the GPU-vendor label our AL2023 GPU lanes carry."""
    term = {"matchExpressions": [{"key": rules.GPU_VENDOR_LABEL, "operator": "In", "values": [rules.GPU_VENDOR_NVIDIA]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def time_slicing_config(replicas: int) -> str:
    """The device plugin's config file (``version: v1``) sharing each GPU ``replicas`` ways."""
    config = {
        "version": "v1",
        "sharing": {"timeSlicing": {"resources": [{"name": rules.GPU_TAINT_KEY, "replicas": replicas}]}},
    }
    return yaml.safe_dump(config, sort_keys=False)


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


def _chart(
    parent: pulumi.Resource, release: str, chart: str, repo: str, version: str, namespace: str, values: dict[str, Any]
) -> k8s.helm.v4.Chart:
    """A Helm v4 chart, rendered client side; ``release`` names the chart's objects."""
    return k8s.helm.v4.Chart(
        release,
        chart=chart,
        version=version,
        namespace=namespace,
        repository_opts=k8s.helm.v4.RepositoryOptsArgs(repo=repo),
        values=values,
        opts=pulumi.ResourceOptions(parent=parent),
    )


class NvidiaDevicePluginArgs(TypedDict, total=False):
    time_slicing_replicas: int
    """Share each GPU this many ways (time-slicing) when greater than 1. Default 1."""
    version: str
    """The chart version. Default 0.20.0."""
    namespace: str
    """Default ``kube-system``."""


class NvidiaDevicePlugin(pulumi.ComponentResource):
    """The NVIDIA device plugin DaemonSet, on every AL2023 GPU lane and nowhere else."""

    chart: k8s.helm.v4.Chart

    def __init__(
        self, name: str, args: Optional[NvidiaDevicePluginArgs] = None, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        super().__init__("rack:gpu:NvidiaDevicePlugin", name, None, opts)
        args = args or NvidiaDevicePluginArgs()
        replicas = args.get("time_slicing_replicas", 1)
        if replicas < 1:
            raise ConfigError(f"nvidia device plugin: invalid time_slicing_replicas '{replicas}' (must be 1 or more)")
        self.chart = _chart(
            self, name, DEVICE_PLUGIN_CHART, DEVICE_PLUGIN_REPO, args.get("version", DEVICE_PLUGIN_VERSION),
            args.get("namespace", NAMESPACE), device_plugin_values(replicas),
        )
        self.register_outputs({})


class GpuObservabilityArgs(TypedDict, total=False):
    version: str
    """The dcgm-exporter chart version. Default 4.8.2."""
    service_monitor: bool
    """Create the chart's ServiceMonitor; only when the cluster has the monitoring.coreos.com CRDs. Default false."""
    namespace: str
    """Default ``kube-system``."""


class GpuObservability(pulumi.ComponentResource):
    """NVIDIA dcgm-exporter: GPU metrics from every AL2023 GPU lane."""

    chart: k8s.helm.v4.Chart

    def __init__(
        self, name: str, args: Optional[GpuObservabilityArgs] = None, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        super().__init__("rack:gpu:GpuObservability", name, None, opts)
        args = args or GpuObservabilityArgs()
        self.chart = _chart(
            self, name, DCGM_EXPORTER_CHART, DCGM_EXPORTER_REPO, args.get("version", DCGM_EXPORTER_VERSION),
            args.get("namespace", NAMESPACE), dcgm_exporter_values(args.get("service_monitor", False)),
        )
        self.register_outputs({})
