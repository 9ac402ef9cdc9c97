"""Workloads and the lanes they can land on: ``workloads-reach-their-lane`` and its advisory twin.

Pure (the standard library and the pack's own modules), so the pack (where this is the top-level
``workloads``) and the components (``mixed_os_racks.pack.workloads``) share it: the ``Service``
component builds its scheduling from the same contract this module checks.

The seeds' (Convox racks') contract: a workload names a lane with
``convox.io/nodepool=<pool>`` (Karpenter pools) or ``convox.io/label=<label>`` (node groups); a
dedicated lane is tainted ``dedicated-node=<pool|label>:NoSchedule``; a GPU lane is tainted
``nvidia.com/gpu``; the default lane (the ``workload`` pool) has no GPUs.

Where a pod may go is decided with Kubernetes' own rules (``scheduling``).

A lane's labels are what it declares (NodePool ``spec.template.metadata.labels`` plus Karpenter's
own ``karpenter.sh/nodepool``, a node group's ``labels``). Nodes carry more (architecture, zone,
instance type); a requirement on a key no lane declares is assumed to hold, so only what the rack
decides is judged. Well-known labels (architecture, capacity type, instance type, family, size) are
met against what the lane can launch (``wellknown``, the instance table), and a pod must fit one
node of a lane it reaches: GPUs per node, and its effective requests within the allocatable of an
instance type the lane can launch, less the lane's DaemonSets, within a pool's ``limits`` (``fit``;
``docs/placement.md`` says what is not checked). ``gpu-daemonsets-reach-gpu-lanes`` holds the GPU
DaemonSets to every GPU lane.

The judge is split by job, one module each: ``lanemodel`` (the lane and the stack's lanes), ``laneconfig``
(lanes from the policy config, checked against the lane contract ``lane``), ``lanesource`` (lanes from the
stack's resources), ``pods`` (reading workloads), ``wording`` (the verdicts' words), ``reach`` (fit and
reach), ``gpudaemons`` (the GPU DaemonSet policies). This module names them together for the policies and
for callers of its former names; components import the lane contract (``lane``, ``laneconfig.size_facts``),
not the judge.
"""

from __future__ import annotations

from .lanemodel import (
    ANY_INSTANCE,
    EKS_DEFAULT_INSTANCE_TYPE,
    Finding,
    GPU_RESOURCES,
    LINUX,
    LaneView,
    Lanes,
    NFD_PREFIX,
    ON_DEMAND,
    OS_KEY,
    RESERVED_DOMAINS,
    SELECTING,
    Unknown,
    as_wellknown,
    is_well_known,
    kubernetes_os,
    named_lanes,
    number_text,
    read_labels,
    read_taints,
)  # noqa: F401
from .laneconfig import (
    CONFIG_KINDS,
    EFFECT_NAMES,
    LANES_SCHEMA,
    LANE_FIELDS,
    config_findings,
    configured_lanes,
    lanes_config_problems,
    size_facts,
)  # noqa: F401
from .lanesource import EKS_NODEGROUP_LABEL, GPU_REQUIREMENTS, group_requirements, read_lanes  # noqa: F401
from .pods import (
    CLAIM_KINDS,
    GPU_DEVICE_CLASSES,
    GROUPS,
    MIG_RESOURCE,
    NVIDIA_SLICES,
    POD_SPEC,
    RUNTIME_CLASS_TYPES,
    CUSTOM,
    Claim,
    DeviceClass,
    PodClaims,
    Workload,
    claimed,
    custom_kind,
    gpu_classes,
    image_name,
    pod_templates,
    read_workload,
    read_workloads,
    runtime_classes,
    workload_kind,
)  # noqa: F401
from .wording import (
    MIG_FAMILIES,
    missing_lane,
    no_gpu_lane,
    no_mig,
    requirement_words,
    untolerated_lane,
    well_known_reason,
)  # noqa: F401
from .reach import (
    Fit,
    GiB,
    Survey,
    findings,
    fit_on,
    fit_problems,
    judged_survey,
    lane_overheads,
    pod_problems,
    outside_the_rack,
    reach,
    reach_problems,
    squats,
    strict_keys,
    survey,
)  # noqa: F401
from .gpudaemons import (
    GPU_DAEMON_IMAGES,
    GPU_MODE_LABELS,
    GPU_NODE_KEYS,
    NODE_AGENTS,
    gpu_daemonsets,
    misses_gpu_lane,
    node_agent_labels,
    serves_gpus,
    squatting,
)  # noqa: F401
