"""The worst case per hour of the rack's lanes, from their specs, as the pack computes it from their resources.

A pool's worst case is read from the NodePool spec the ``KarpenterPool`` writes (its requirements and
``limits``), a node group's from its instance type and ``max_size``: the same inputs ``pack.cost`` reads
from the NodePool and the ``aws.eks.NodeGroup``, so the ``lanes`` output and ``lane-cost-ceiling`` agree.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .karpenter import node_pool_spec
from .facts import prices, wellknown
from .pack import bootfacts, cost
from .spec import NodeGroupSpec, PoolSpec


def pool_sizing(
    pool: PoolSpec, spec: Optional[dict[str, Any]] = None
) -> tuple[list[wellknown.Requirement], dict[str, float]]:
    """What sizes a pool's nodes, as its NodePool says it (``spec``, default the pool's own; its canary's has
    ``limits.nodes``): its requirements, and its ``limits`` in base units."""
    spec = spec or node_pool_spec(pool)
    requirements = wellknown.read(spec["template"]["spec"]["requirements"])
    limits, _, _ = bootfacts.node_pool_limits(
        spec["limits"]
    )  # as the pack reads a NodePool's (its specs are valid ones)
    return requirements, limits


Priced = tuple[cost.WorstCase, cost.Rollout]
"""A lane's worst case per hour, steady and during a rollout."""


def pool_worst_case(pool: PoolSpec, region: Optional[str], spec: Optional[dict[str, Any]] = None) -> Priced:
    spec = spec or node_pool_spec(pool)
    worst = cost.pool(*pool_sizing(pool, spec), prices.for_region(region))
    return worst, cost.pool_rollout(worst, spec["disruption"]["budgets"])


def group_worst_case(group: NodeGroupSpec, region: Optional[str], subnets: Optional[int] = None) -> Priced:
    """``subnets``: how many subnets the group spans, when known (its Availability Zones are at most as many)."""
    worst = cost.group([group.instance_type], group.max_size, prices.for_region(region))
    return worst, cost.group_rollout(worst, group.max_size, subnets)


def rack_worst_case(lanes: Mapping[str, Mapping[str, Any]], control_plane: float = 0.0) -> Optional[float]:
    """The rack's worst case: the sum of its lanes' and its control plane's, None when a lane has none."""
    return cost.summed([*(lane.get(cost.WORST_OUTPUT) for lane in lanes.values()), control_plane])
