"""Reserved capacity as any program writes it: which EC2 capacity reservations a lane launches into, and the rules a
reserved lane must meet before EC2 can launch anything into its reservation (no catalog needed).

Read from the resources themselves:

* an ``aws.eks.NodeGroup``'s launch template: ``capacityReservationSpecification.capacityReservationTarget
  .capacityReservationId``, its ``instanceMarketOptions.marketType`` and ``instanceType``; the group's
  ``capacityType``;
* an ``EC2NodeClass``'s ``capacityReservationSelectorTerms`` (the ``id`` of each term; a term that selects by tags
  names no id before Karpenter resolves it), and its NodePool's ``karpenter.sh/capacity-type`` requirement.

The rules (policy ``reserved-capacity-targeted``), from the EKS user guide (Capacity Blocks for managed node groups:
a ``CAPACITY_BLOCK`` group is created from a custom launch template only, whose data targets the block by id, sets
the market type ``capacity-block`` and the instance type, and EKS rejects the group otherwise; an instance type in
the launch template means none in the group's ``instanceTypes``) and Karpenter v1.14.1 (a NodePool launches into the
reservations its EC2NodeClass selects only when its capacity-type requirement allows ``reserved``; Karpenter's
default, with no requirement, is ``on-demand``)."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from .. import syntax
from ..facts import wellknown
from . import bootfacts, checks

POLICY = "reserved-capacity-targeted"
CAPACITY_BLOCK = "CAPACITY_BLOCK"
"""The EKS API's capacity type of a node group that launches into a Capacity Block."""
BLOCK_MARKET = "capacity-block"
"""EC2's ``MarketType`` of a Capacity Block, in a launch template's ``instanceMarketOptions``."""
RESERVED = "reserved"
"""Karpenter's capacity type of a node launched into a capacity reservation."""
TARGET_PATH = "capacityReservationSpecification.capacityReservationTarget.capacityReservationId"
MARKET_PATH = "instanceMarketOptions.marketType"
ID_SHAPE = "must look like cr-0123456789abcdef0"


def template_reservation(template: bootfacts.LaunchTemplate) -> str:
    """The capacity reservation a launch template targets by id; '' when none."""
    return bootfacts.text(
        bootfacts.dig(
            template.props, "capacityReservationSpecification", "capacityReservationTarget", "capacityReservationId"
        )
    )


def template_market(template: bootfacts.LaunchTemplate) -> str:
    return bootfacts.text(bootfacts.dig(template.props, "instanceMarketOptions", "marketType"))


def class_terms(node_class: bootfacts.NodeClass) -> list[Any]:
    return list(bootfacts.as_list(bootfacts.dig(node_class.props, "spec", "capacityReservationSelectorTerms")))


def group_reservations(template: Optional[bootfacts.LaunchTemplate]) -> tuple[str, ...]:
    """The reservation a managed node group launches into: the one its launch template targets."""
    given = template_reservation(template) if template is not None else ""
    return (given,) if given else ()


def allows_reserved(pool: bootfacts.NodePool) -> bool:
    """Whether a NodePool may launch capacity type ``reserved``: every capacity-type requirement admits it, and there
    is one (without one, Karpenter launches on-demand)."""
    found = [r for r in pool.requirements() if r.key == wellknown.CAPACITY_TYPE_KEY]
    return bool(found) and all(wellknown.holds(r.operator, r.values, RESERVED) for r in found)


def only_reserved(pool: bootfacts.NodePool) -> bool:
    """Whether ``reserved`` is the only capacity type a NodePool's requirements let it launch. Beside ``on-demand`` or
    ``spot`` it is harmless without reservations (published pools list all three: awslabs/ai-on-eks), as Karpenter
    then launches the other types; alone, the pool launches nothing."""
    found = [r for r in pool.requirements() if r.key == wellknown.CAPACITY_TYPE_KEY]
    if not found or not all(wellknown.holds(r.operator, r.values, RESERVED) for r in found):
        return False
    return not any(all(wellknown.holds(r.operator, r.values, other) for r in found) for other in OTHER_TYPES)


OTHER_TYPES = ("on-demand", "spot")
"""Karpenter's capacity types beside ``reserved``."""


def reserved_capacity_targeted(
    stack: checks.Stack, res: checks.StackResource, lane: bootfacts.LaneResource, knowledge: checks.AmiKnowledge
) -> Iterator[checks.Finding]:
    """A reserved lane can launch into its reservation: a node group's launch template as EKS requires it for the
    group's capacity type, a NodePool's capacity types and its class's reservations in agreement."""
    if isinstance(lane, bootfacts.EksNodeGroup):
        yield from (checks.Finding(problem, urn=res.urn) for problem in _group_problems(stack, res, lane))
    elif isinstance(lane, bootfacts.NodePool):
        yield from (checks.Finding(problem, urn=res.urn) for problem in _pool_problems(stack, lane))


def _group_problems(stack: checks.Stack, res: checks.StackResource, group: bootfacts.EksNodeGroup) -> Iterator[str]:
    subject = checks.subject(group)
    capacity = bootfacts.text(group.props.get("capacityType")) or "ON_DEMAND"
    template = stack.launch_template(res)
    if template is None:
        if capacity == CAPACITY_BLOCK and "launchTemplate" not in list(group.props):  # keys: no value read
            yield (
                f"{subject}: capacity type {CAPACITY_BLOCK} needs a launch template that targets the Capacity Block "
                f"(EKS creates a {CAPACITY_BLOCK} group from a custom launch template only)"
            )
        return
    named = f"its launch template '{template.subject_name}'"
    reservation, market = template_reservation(template), template_market(template)
    if reservation and not syntax.EC2_ID_RES["capacity reservation"].fullmatch(reservation):
        yield f"{subject}: {named} targets invalid capacity reservation id '{reservation}' ({ID_SHAPE})"
    if capacity == CAPACITY_BLOCK:
        missing = [
            what
            for what, ok in (
                (f"{TARGET_PATH} (the block's id)", bool(reservation)),
                (f"{MARKET_PATH} {BLOCK_MARKET}", market == BLOCK_MARKET),
                ("instanceType (the block's instance type)", bool(template.instance_types())),
            )
            if not ok
        ]
        if missing:
            yield (
                f"{subject}: capacity type {CAPACITY_BLOCK} needs {named} to set {'; '.join(missing)} "
                f"(EKS rejects the group otherwise)"
            )
        if template.instance_types() and group.instance_types():
            yield (
                f"{subject}: instanceTypes {','.join(group.instance_types())} beside {named}'s instanceType "
                f"{template.instance_types()[0]} (EKS takes the instance type in one place: remove instanceTypes)"
            )
        return
    if market == BLOCK_MARKET:
        yield (
            f"{subject}: {named} sets {MARKET_PATH} {BLOCK_MARKET}, which needs the group's capacityType "
            f"{CAPACITY_BLOCK} (it is {capacity})"
        )
    elif reservation and capacity == "SPOT":
        yield (
            f"{subject}: capacity type SPOT cannot launch into capacity reservation '{reservation}' that {named} "
            f"targets (ON_DEMAND launches into an On-Demand Capacity Reservation, {CAPACITY_BLOCK} into a Capacity "
            f"Block)"
        )


def _pool_problems(stack: checks.Stack, pool: bootfacts.NodePool) -> Iterator[str]:
    node_class = stack.node_class(pool)
    if node_class is None:
        return  # another kind of class, or one not in the stack: its reservations are not known
    subject = checks.subject(pool)
    terms = class_terms(node_class)
    if terms and not allows_reserved(pool):
        yield (
            f"{subject}: its EC2NodeClass '{node_class.subject_name}' selects capacity reservations "
            f"(capacityReservationSelectorTerms), but its karpenter.sh/capacity-type requirement does not allow "
            f"'{RESERVED}', so Karpenter launches nothing into them (add '{RESERVED}': with on-demand beside it, "
            f"Karpenter falls back to On-Demand when they are full)"
        )
    elif not terms and only_reserved(pool):
        yield (
            f"{subject}: capacity type '{RESERVED}' only, but its EC2NodeClass '{node_class.subject_name}' selects no "
            f"capacity reservations (capacityReservationSelectorTerms), so Karpenter launches nothing for it"
        )
