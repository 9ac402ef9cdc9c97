"""The limits and patterns the specs check against: each with the API that sets it."""

from __future__ import annotations

import re

from .. import contract
from ..facts import upstream
from .. import syntax

# A pool's name is a Kubernetes object name (DNS-1123 label) that, as the seeds require, starts with a letter.
NAME_RE = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
# The NodePool CRD's patterns (Karpenter v1.14.1): consolidateAfter and expireAfter, disruption budgets.
DURATION_RE = re.compile(r"([0-9]+(s|m|h))+|Never")
BUDGET_RE = re.compile(r"(100|[0-9]{1,2})%|[0-9]+")
GO_MAX_DURATION_S = (2**63 - 1) / 1e9
"""Karpenter reads a NodePool's durations with Go's ``time.ParseDuration``, an int64 of nanoseconds:
about 2562047h. A longer duration matches the CRD's pattern and then cannot be decoded."""
INT32_MAX = 2**31 - 1
"""Kubernetes' 32-bit integer fields: replicas, a probe's seconds, an ``intstr.IntOrString``."""
BUDGET_NODES_MAX = INT32_MAX
"""A budget's node count becomes an ``intstr.IntOrString``, whose integer is 32 bits."""
# The seeds' node-group label: lowercase alphanumerics and dashes; as a Kubernetes label value, at
# most 63 and starting and ending with an alphanumeric.
LABEL_VALUE_RE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
CHART_VERSION_RE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.-]+)?")
K8S_VERSION_RE = re.compile(r"1\.[0-9]{1,2}")
VPC_ID_RE = syntax.EC2_ID_RES["VPC"]
SUBNET_ID_RE = syntax.EC2_ID_RES["subnet"]
CIDR_RE = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}")
CAPACITY_TYPES = ("on-demand", "spot", "reserved")
"""Karpenter's ``karpenter.sh/capacity-type`` values: ``reserved`` launches into the EC2NodeClass's capacity
reservations (On-Demand Capacity Reservations and Capacity Blocks alike)."""
RESERVED = "reserved"
ARCHES = ("amd64", "arm64")
VOLUME_TYPES = tuple(upstream.EBS_VOLUMES)
TAINT_EFFECTS = syntax.TAINT_EFFECTS
RESERVED_TAG_KEYS = ("name", "rack", contract.CANARY_OF)
"""Tag keys the rack sets on a node group itself (the canary's mark among them), in any case."""
WEIGHT_RANGE = (1, 100)
"""The NodePool CRD's bounds for ``spec.weight``."""
NODEPOOL_LABELS_MAX = 100
"""The NodePool CRD's ``maxProperties`` for template labels."""
TAGS_MAX = 50
"""AWS takes at most 50 tags per resource."""
EKS_SCALING_MAX = 2**31 - 1
"""EKS's scaling sizes (``NodegroupScalingConfig``) are 32-bit integers."""
RACK_TAGS = 4
"""Tags the rack adds to a node group: ``rack`` and the three AMI facts it records for the pack."""

_UNIT_S = {"h": 3600, "m": 60, "s": 1}


def duration_too_long(text: str) -> bool:
    """Whether a CRD-pattern duration (``1h30m``, ``Never``) is past what Go's time.ParseDuration takes."""
    if text == "Never":
        return False
    return (
        sum(syntax.whole_number(n) * _UNIT_S[unit] for n, unit in re.findall(r"([0-9]+)([hms])", text))
        > GO_MAX_DURATION_S
    )
