"""``gpu-daemonsets-reach-gpu-lanes``: the GPU DaemonSets (the NVIDIA device plugin, dcgm-exporter) land on every
GPU lane, and no other DaemonSet squats on one."""

from __future__ import annotations


from typing import Any, Mapping, Optional, Sequence

from .. import contract
from . import checks, facts, wellknown
from .laneconfig import config_findings
from .lanemodel import Finding, Lane, SELECTING, Unknown
from .pods import Workload
from .reach import Survey, findings, judged_survey, squats, strict_keys, survey
from .wording import requirement_words, well_known_reason

GPU_DAEMON_IMAGES = ("k8s-device-plugin", "dcgm-exporter")
"""Image names of NVIDIA's device plugin (``nvcr.io/nvidia/k8s-device-plugin``) and dcgm-exporter
(``nvcr.io/nvidia/k8s/dcgm-exporter``), whatever registry or tag."""
GPU_NODE_KEYS = (contract.GPU_VENDOR_LABEL, facts.GPU_PRESENT_LABEL, "feature.node.kubernetes.io/pci-10de.present",
                 *(prefix + label for prefix in (wellknown.KARPENTER_PREFIX, wellknown.AUTO_MODE_PREFIX)
                   for label in ("instance-gpu-manufacturer", "instance-gpu-count", "instance-gpu-name")))
"""Node labels a DaemonSet selects GPU nodes by (ours, NVIDIA's and NFD's, Karpenter's and EKS Auto Mode's)."""


def serves_gpus(workload: Workload) -> str:
    """Why a DaemonSet serves GPUs (its image, or its selection of GPU nodes), or ''."""
    if workload.kind != "DaemonSet":
        return ""
    for image in workload.images:
        name = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
        if name in GPU_DAEMON_IMAGES:
            return f"image {image}"
    for req in workload.selection.requirements:
        if req.key in GPU_NODE_KEYS and req.operator in SELECTING:
            return f"it selects GPU nodes ({requirement_words(req)})"
    return ""


def misses_gpu_lane(workload: Workload, lane: Lane, known: frozenset[str]) -> str:
    """Why a GPU DaemonSet's pods never run on ``lane``'s nodes, or ''. Its own labels are judged strictly:
    a GPU label the lane's nodes do not declare (``nvidia.com/gpu.present`` without NFD) is not there."""
    strict = strict_keys(workload, known)
    on = workload.selection.on(lane.labels, strict)
    if on is None:
        labels = ", ".join(f"{k}={v}" for k, v in sorted(lane.labels.items())) or "none"
        wanted = "; ".join(requirement_words(r) for r in workload.selection.requirements)
        return (f"its node selection ({wanted}) does not match the lane's node labels ({labels}) "
                f"(select {contract.GPU_VENDOR_LABEL}: {contract.GPU_VENDOR_NVIDIA}, which the rack's GPU lanes carry)")
    if not lane.admits(on):
        return well_known_reason(on, lane)
    taints = lane.untolerated(workload.tolerations)
    if taints:
        fixes = ", ".join(f"{{key: {t.key}, operator: Exists, effect: {t.effect}}}" for t in taints)
        return f"it does not tolerate {', '.join(str(t) for t in taints)} (add the tolerations {fixes})"
    return ""


def gpu_daemonsets(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown = (),
                   whole: Optional[Survey] = None) -> list[Finding]:
    """Policy ``gpu-daemonsets-reach-gpu-lanes``: every DaemonSet that serves GPUs runs on every GPU lane."""
    problems = config_findings(config)
    if problems:
        return problems
    whole = whole or survey(resources, config, unknown)
    lanes = whole.lanes
    found = [f for f in whole.unsure if "daemonset" in f.message]
    known = lanes.known_keys
    for workload in whole.workloads:
        why = serves_gpus(workload)
        if not why:
            continue
        for lane in lanes.gpu_lanes:
            miss = misses_gpu_lane(workload, lane, known)
            if miss:
                found.extend(findings(workload, [f"{workload.subject} serves GPUs ({why}) but never runs on "
                                                  f"{lane.subject}, a GPU lane: {miss}"], lanes))
    return found


def squatting(resources: Sequence[checks.StackResource], config: Mapping[str, Any], unknown: Unknown = (),
              whole: Optional[Survey] = None) -> list[Finding]:
    """Policy ``gpu-lanes-for-gpu-workloads`` (advisory): no workload without GPUs can take a GPU node."""
    problems = config_findings(config)
    if problems:
        return problems
    lanes, workloads, found = judged_survey(resources, config, unknown, whole)
    for workload in workloads:
        found.extend(findings(workload, squats(workload, lanes), lanes))
    return found
