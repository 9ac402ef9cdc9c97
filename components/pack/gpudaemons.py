"""``gpu-daemonsets-reach-gpu-lanes``: the GPU DaemonSets (the NVIDIA device plugin, dcgm-exporter) land on every
GPU lane, and no other DaemonSet squats on one."""

from __future__ import annotations


from typing import Any, Mapping, Optional, Sequence

from .. import contract
from ..facts import wellknown
from . import bootfacts, checks
from .laneconfig import config_findings
from .lanemodel import Finding, LaneView, Lanes, NFD_PREFIX, SELECTING, Unknown
from .pods import Workload, image_name
from .reach import Survey, findings, judged_survey, squats, strict_keys, survey
from .wording import requirement_words, well_known_reason

GPU_DAEMON_IMAGES = ("k8s-device-plugin", "dcgm-exporter")
"""Image names of NVIDIA's device plugin (``nvcr.io/nvidia/k8s-device-plugin``) and dcgm-exporter
(``nvcr.io/nvidia/k8s/dcgm-exporter``), whatever registry or tag."""
GPU_NODE_KEYS = (
    contract.GPU_VENDOR_LABEL,
    bootfacts.GPU_PRESENT_LABEL,
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/cpu-model.vendor_id",
    *(
        prefix + label
        for prefix in (wellknown.KARPENTER_PREFIX, wellknown.AUTO_MODE_PREFIX)
        for label in ("instance-gpu-manufacturer", "instance-gpu-count", "instance-gpu-name")
    ),
)
"""Node labels a DaemonSet selects GPU nodes by (ours, NVIDIA's and NFD's, Karpenter's and EKS Auto Mode's)."""


GPU_DAEMON_PROGRAMS = ("nvidia-device-plugin", "dcgm-exporter")
"""The programs NVIDIA's device plugin and dcgm-exporter run, whatever image ships them (HAMi's device plugin runs
``nvidia-device-plugin`` from ``projecthami/hami``: Project-HAMi/HAMi ``charts/hami/templates/device-plugin``)."""
DEVICE_PLUGIN_DIR = "/var/lib/kubelet/device-plugins"
"""Where the kubelet's device plugin sockets are: a DaemonSet that mounts it registers devices with the kubelet
(Kubernetes device plugin framework)."""


def serves_gpus(workload: Workload) -> str:
    """Why a DaemonSet serves GPUs, or '': what it runs (NVIDIA's device plugin or dcgm-exporter, by program or by
    image), what it does (a device plugin, mounting the kubelet's device plugin directory, for NVIDIA GPUs: its
    program or its environment names NVIDIA), or its selection of GPU nodes."""
    if workload.kind != "DaemonSet":
        return ""
    for image in workload.images:
        if image_name(image) in GPU_DAEMON_IMAGES:
            return f"image {image}"
    for program in workload.programs:
        if program in GPU_DAEMON_PROGRAMS:
            return f"it runs {program}"
    if any(path.rstrip("/") == DEVICE_PLUGIN_DIR for path in workload.host_paths) and (
        any("nvidia" in program.lower() for program in workload.programs)
        or any(name.startswith("NVIDIA_") for name in workload.env_names)
    ):
        return f"a device plugin for NVIDIA GPUs (it mounts {DEVICE_PLUGIN_DIR})"
    for req in workload.selection.requirements:
        if req.key in GPU_NODE_KEYS and req.operator in SELECTING:
            return f"it selects GPU nodes ({requirement_words(req)})"
    return ""


GPU_MODE_LABELS = (
    "nvidia.com/mps.",
    "nvidia.com/mig.",
    "nvidia.com/gpu.sharing-strategy",
    "nvidia.com/gpu.replicas",
    "nvidia.com/gpu.deploy.",
    "nvidia.com/device-plugin.config",
)
"""Node labels that say how a GPU node is set up rather than what it has: NVIDIA's gpu-feature-discovery writes
``nvidia.com/mps.capable: true`` only on nodes set up for MPS sharing, ``nvidia.com/mig.*`` and the sharing labels
by the node's MIG and sharing config (NVIDIA/k8s-device-plugin ``internal/lm``); the GPU operator's
``nvidia.com/gpu.deploy.<component>`` turns a component on or off per node; ``nvidia.com/device-plugin.config``
picks a node's plugin config. A DaemonSet that requires one is meant for the nodes set up that way only."""
NODE_AGENTS: dict[str, tuple[str, ...]] = {
    "nfd-worker": (NFD_PREFIX,),
    "node-feature-discovery": (NFD_PREFIX,),
    "gpu-feature-discovery": ("nvidia.com/",),
    "gpu-operator": (bootfacts.GPU_PRESENT_LABEL, "nvidia.com/gpu.deploy."),
}
"""What a workload labels nodes with, by the program it runs (its command, else its image): NFD's worker
(the ``nfd-worker`` command of image ``node-feature-discovery``), gpu-feature-discovery (the device plugin
chart runs it from the ``k8s-device-plugin`` image), the GPU operator (a Deployment labelling every node
with an NVIDIA GPU). A DaemonSet labels the nodes it runs on; ``nvidia.com/`` labels only GPU nodes."""


def node_agent_labels(workloads: Sequence[Workload], lanes: Lanes) -> dict[int, tuple[str, ...]]:
    """Per lane (by id), the label keys and prefixes node agents of the stack write on its nodes. An agent
    may select labels another one writes (gpu-feature-discovery selects NFD's), so this repeats until
    nothing more is found."""
    agents = [(w, prefixes) for w in workloads for program in w.programs if (prefixes := NODE_AGENTS.get(program))]
    found: dict[int, tuple[str, ...]] = {id(lane): () for lane in lanes.lanes}
    known = lanes.known_keys
    grew = bool(agents)
    while grew:
        grew = False
        for agent, prefixes in agents:
            for lane in lanes.lanes:
                new = tuple(
                    p for p in prefixes if p not in found[id(lane)] and (lane.gpu or not p.startswith("nvidia.com/"))
                )
                if not new or (agent.kind == "DaemonSet" and not _runs_on(agent, lane, known, found[id(lane)])):
                    continue
                found[id(lane)] += new
                grew = True
    return found


def _runs_on(daemonset: Workload, lane: LaneView, known: frozenset[str], labelled: tuple[str, ...]) -> bool:
    on = daemonset.selection.on(lane.labels, _agent_judged_keys(daemonset, known, labelled))
    return on is not None and lane.admits(on) and not lane.untolerated(daemonset.tolerations)


def _agent_judged_keys(workload: Workload, known: frozenset[str], labelled: tuple[str, ...]) -> frozenset[str]:
    """The label keys a GPU DaemonSet's selection is judged on for one lane: ``strict_keys``, but not labels
    that may be there: one an agent of the stack writes on the lane's nodes (``labelled``: NFD's
    ``pci-10de.present``), and a GPU mode label (``GPU_MODE_LABELS``: ``nvidia.com/mps.capable``), which narrows
    the DaemonSet to the nodes set up for that mode, by design, whoever writes it."""

    def judged(key: str) -> bool:
        return not key.startswith(labelled) and not key.startswith(GPU_MODE_LABELS)

    return frozenset(k for k in strict_keys(workload, known) if k in known or judged(k))


def misses_gpu_lane(workload: Workload, lane: LaneView, known: frozenset[str], labelled: tuple[str, ...] = ()) -> str:
    """Why a GPU DaemonSet's pods never run on ``lane``'s nodes, or ''. Its own labels are judged strictly:
    a GPU label the lane's nodes do not declare and no agent of the stack writes there (``nvidia.com/gpu.present``
    without the GPU operator) is not there (``_agent_judged_keys``)."""
    strict = _agent_judged_keys(workload, known, labelled)
    on = workload.selection.on(lane.labels, strict)
    if on is None:
        labels = ", ".join(f"{k}={v}" for k, v in sorted(lane.labels.items())) or "none"
        wanted = "; ".join(requirement_words(r) for r in workload.selection.requirements)
        if lane.labels.get(contract.GPU_VENDOR_LABEL) == contract.GPU_VENDOR_NVIDIA:
            fix = f"select {contract.GPU_VENDOR_LABEL}: {contract.GPU_VENDOR_NVIDIA}, which the rack's GPU lanes carry"
        else:  # a lane from elsewhere (a pool of another program, the policy config) carries no such label
            fix = (
                f"select a label its nodes carry ({lane.selector()}), or give the lane {contract.GPU_VENDOR_LABEL}: "
                f"{contract.GPU_VENDOR_NVIDIA}"
            )
        return f"its node selection ({wanted}) does not match the lane's node labels ({labels}) ({fix})"
    if not lane.admits(on):
        return well_known_reason(on, lane)
    taints = lane.untolerated(workload.tolerations)
    if taints:
        fixes = ", ".join(f"{{key: {t.key}, operator: Exists, effect: {t.effect}}}" for t in taints)
        return f"it does not tolerate {', '.join(str(t) for t in taints)} (add the tolerations {fixes})"
    return ""


def gpu_daemonsets(
    resources: Sequence[checks.StackResource],
    config: Mapping[str, Any],
    unknown: Unknown = (),
    whole: Optional[Survey] = None,
) -> list[Finding]:
    """Policy ``gpu-daemonsets-reach-gpu-lanes``: every DaemonSet that serves GPUs runs on every GPU lane."""
    problems = config_findings(config)
    if problems:
        return problems
    whole = whole or survey(resources, config, unknown)
    lanes = whole.lanes
    found = [f for f in whole.unsure if "daemonset" in f.message]
    known = lanes.known_keys
    labelled = node_agent_labels(whole.workloads, lanes)
    for workload in whole.workloads:
        why = serves_gpus(workload)
        if not why:
            continue
        for lane in lanes.gpu_lanes:
            miss = misses_gpu_lane(workload, lane, known, labelled[id(lane)])
            if miss:
                found.extend(
                    findings(
                        workload,
                        [
                            f"{workload.subject} serves GPUs ({why}) but never runs on "
                            f"{lane.subject}, a GPU lane: {miss}"
                        ],
                        lanes,
                    )
                )
    return found


def squatting(
    resources: Sequence[checks.StackResource],
    config: Mapping[str, Any],
    unknown: Unknown = (),
    whole: Optional[Survey] = None,
) -> list[Finding]:
    """Policy ``gpu-lanes-for-gpu-workloads`` (advisory): no workload without GPUs can take a GPU node."""
    problems = config_findings(config)
    if problems:
        return problems
    lanes, workloads, found = judged_survey(resources, config, unknown, whole)
    for workload in workloads:
        found.extend(findings(workload, squats(workload, lanes), lanes))
    return found
