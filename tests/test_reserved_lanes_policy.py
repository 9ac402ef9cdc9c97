"""The pack judges another program's reserved node groups and pools: ``reserved-capacity-targeted``, over the pack's
real gRPC analyzer protocol, and the reservations a lane of another program launches into (``lanesource``).

Upstream facts pinned here (beside the ones in ``test_reserved_node_groups.py``):
- EKS user guide, Capacity Blocks for managed node groups (awsdocs/amazon-eks-user-guide
  ``latest/ug/ml/capacity-blocks-mng.adoc`` at 4d52b4d): "If the capacity type isn't set to CAPACITY_BLOCK or any of
  the other above required launch template values are missing, then the create request will be rejected": the
  launch template must carry ``InstanceMarketOptions.MarketType: capacity-block``, the block's
  ``CapacityReservationTarget.CapacityReservationId`` and an ``InstanceType``;
  ``latest/ug/nodes/launch-templates.adoc``: with an instance type in the launch template, none may be given in the
  node group.
- Karpenter v1.14.1: a NodePool launches into the reservations its EC2NodeClass selects only with ``reserved`` in its
  ``karpenter.sh/capacity-type`` requirement, and launches on-demand when it has none (karpenter.sh docs/tasks/odcrs,
  ``wellknown.CAPACITY_TYPE_KEY``); the CRD's ``capacityReservationSelectorTerms`` select by ``id`` or by tags.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest
from hypothesis import given, settings, strategies as st

from conftest import rack_config, run_rack
from mixed_os_racks.offline import run_program
from mixed_os_racks.pack import checks, lanesource
from policy_helpers import eks_node_group, judge, messages, node_class, start_pack

POLICY = "reserved-capacity-targeted"
BLOCK = "cr-0a1b2c3d4e5f60718"
ODCR = "cr-0123456789abcdef0"


@pytest.fixture(scope="module")
def pack():
    process = start_pack()
    yield process
    process.close()


def template(
    name: str = "train-lt",
    reservation: Optional[str] = BLOCK,
    market: Optional[str] = "capacity-block",
    instance_type: Optional[str] = "p5.48xlarge",
) -> aws.ec2.LaunchTemplate:
    """A launch template as another team writes one for a reserved group (no image: EKS's AMI)."""
    kw: dict[str, Any] = {}
    if reservation is not None:
        kw["capacity_reservation_specification"] = aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=reservation
            )
        )
    if market is not None:
        kw["instance_market_options"] = aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type=market)
    if instance_type is not None:
        kw["instance_type"] = instance_type
    return aws.ec2.LaunchTemplate(name, **kw)


def group_verdicts(pack, capacity_type: str, with_template: bool = True, **template_kw: Any) -> list[str]:
    group_kw = template_kw.pop("group_kw", {})

    def program() -> None:
        eks_node_group(
            "train",
            template(**template_kw) if with_template else None,
            capacity_type=capacity_type,
            ami_type="AL2023_x86_64_NVIDIA",
            **group_kw,
        )

    return messages(judge(pack, program), POLICY)


# ---- node groups --------------------------------------------------------------------------------------------


def test_a_block_group_whose_template_targets_the_block_passes(pack):
    assert group_verdicts(pack, "CAPACITY_BLOCK") == []


@pytest.mark.parametrize(
    ("template_kw", "missing"),
    [
        (
            {"reservation": None},
            "capacityReservationSpecification.capacityReservationTarget.capacityReservationId (the block's id)",
        ),
        ({"market": None}, "instanceMarketOptions.marketType capacity-block"),
        ({"market": "spot"}, "instanceMarketOptions.marketType capacity-block"),
        ({"instance_type": None}, "instanceType (the block's instance type)"),
        (
            {"reservation": None, "market": None, "instance_type": None},
            "capacityReservationSpecification.capacityReservationTarget.capacityReservationId (the block's id); "
            "instanceMarketOptions.marketType capacity-block; instanceType (the block's instance type)",
        ),
    ],
)
def test_a_block_groups_template_must_say_what_eks_requires(pack, template_kw, missing):
    assert group_verdicts(pack, "CAPACITY_BLOCK", **template_kw) == [
        f"node group 'train': capacity type CAPACITY_BLOCK needs its launch template 'train-lt' to set {missing} "
        f"(EKS rejects the group otherwise)"
    ]


def test_a_block_group_without_a_launch_template_is_refused(pack):
    assert group_verdicts(pack, "CAPACITY_BLOCK", with_template=False) == [
        "node group 'train': capacity type CAPACITY_BLOCK needs a launch template that targets the Capacity Block "
        "(EKS creates a CAPACITY_BLOCK group from a custom launch template only)"
    ]


def test_a_block_group_naming_its_type_twice_is_refused(pack):
    assert group_verdicts(pack, "CAPACITY_BLOCK", group_kw={"instance_types": ["p5.48xlarge"]}) == [
        "node group 'train': instanceTypes p5.48xlarge beside its launch template 'train-lt''s instanceType "
        "p5.48xlarge "
        "(EKS takes the instance type in one place: remove instanceTypes)"
    ]


@pytest.mark.parametrize(
    ("capacity_type", "template_kw", "expected"),
    [
        ("ON_DEMAND", {"market": None, "instance_type": None, "reservation": ODCR}, []),  # an ODCR
        (
            "ON_DEMAND",
            {},
            [
                "node group 'train': its launch template 'train-lt' sets instanceMarketOptions.marketType "
                "capacity-block, which needs the group's capacityType CAPACITY_BLOCK (it is ON_DEMAND)"
            ],
        ),
        (
            "SPOT",
            {"market": None, "reservation": ODCR},
            [
                "node group 'train': capacity type SPOT cannot launch into capacity reservation 'cr-0123456789abcdef0' "
                "that its "
                "launch template 'train-lt' targets (ON_DEMAND launches into an On-Demand Capacity Reservation, "
                "CAPACITY_BLOCK "
                "into a Capacity Block)"
            ],
        ),
        (
            "ON_DEMAND",
            {"market": None, "reservation": "CR-12"},
            [
                "node group 'train': its launch template 'train-lt' targets invalid capacity reservation id 'CR-12' "
                "(must look "
                "like cr-0123456789abcdef0)"
            ],
        ),
    ],
    ids=["odcr", "block-market-on-demand", "spot-into-reservation", "malformed-id"],
)
def test_the_groups_capacity_type_and_its_templates_market_agree(pack, capacity_type, template_kw, expected):
    assert group_verdicts(pack, capacity_type, **template_kw) == expected


def test_the_racks_own_reserved_groups_and_pools_pass(pack):
    """What the components write meets the rules: a block group, an ODCR group and a reserved pool."""
    run = run_rack(
        rack_config(
            additional_node_groups_config=[
                {
                    "id": "train",
                    "type": "p5.48xlarge",
                    "min_size": 0,
                    "max_size": 2,
                    "capacity_type": "CAPACITY_BLOCK",
                    "capacity_reservation_id": BLOCK,
                },
                {"id": "serve", "type": "g6.2xlarge", "capacity_reservation_id": ODCR},
            ],
            additional_karpenter_nodepools_config=[
                {
                    "name": "batch",
                    "instance_families": "p5",
                    "capacity_types": "reserved,on-demand",
                    "capacity_reservation_ids": BLOCK,
                    "gpu_limit": 16,
                }
            ],
        )
    )
    assert messages(judge(pack, run), POLICY) == []


# ---- Karpenter pools of another program ---------------------------------------------------------------------


def pool(name: str, capacity: Optional[list[str]]) -> k8s.apiextensions.CustomResource:
    requirements: list[dict[str, Any]] = [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5"]}
    ]
    if capacity is not None:
        requirements.append({"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacity})
    return k8s.apiextensions.CustomResource(
        f"{name}-nodepool",
        api_version="karpenter.sh/v1",
        kind="NodePool",
        metadata={"name": name},
        spec={
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name},
                    "requirements": requirements,
                }
            }
        },
    )


def pool_program(capacity: Optional[list[str]], terms: Optional[list[dict[str, Any]]]):
    def program() -> None:
        extra = {"capacityReservationSelectorTerms": terms} if terms is not None else {}
        node_class("train", [{"alias": "al2023@latest"}], **extra)
        pool("train", capacity)

    return program


@pytest.mark.parametrize(
    ("capacity", "terms", "expected"),
    [
        (["reserved", "on-demand"], [{"id": BLOCK}], []),
        (
            ["on-demand"],
            [{"id": BLOCK}],
            [
                "karpenter nodepool 'train': its EC2NodeClass 'train' selects capacity reservations "
                "(capacityReservationSelectorTerms), but its karpenter.sh/capacity-type requirement does not allow "
                "'reserved', so "
                "Karpenter launches nothing into them (add 'reserved': with on-demand beside it, Karpenter falls back "
                "to On-Demand "
                "when they are full)"
            ],
        ),
        (
            None,
            [{"tags": {"team": "ml"}}],
            [
                "karpenter nodepool 'train': its EC2NodeClass 'train' selects capacity "
                "reservations (capacityReservationSelectorTerms), but its karpenter.sh/capacity-type "
                "requirement does not allow 'reserved', so Karpenter launches nothing into them "
                "(add 'reserved': with on-demand beside it, Karpenter falls back to On-Demand when "
                "they are full)"
            ],
        ),
        (
            ["reserved"],
            None,
            [
                "karpenter nodepool 'train': capacity type 'reserved' only, but its EC2NodeClass 'train' "
                "selects no capacity reservations (capacityReservationSelectorTerms), so Karpenter launches "
                "nothing for it"
            ],
        ),
        # awslabs/ai-on-eks's GPU pools list all three types with no reservations: Karpenter launches spot or on-demand
        (["reserved", "spot", "on-demand"], None, []),
        (["on-demand", "spot"], None, []),
    ],
    ids=[
        "reserved-and-selected",
        "selected-not-reserved",
        "by-tags-no-requirement",
        "reserved-none-selected",
        "reserved-beside-others-none-selected",
        "plain",
    ],
)
def test_a_pools_capacity_types_and_its_classs_reservations_agree(pack, capacity, terms, expected):
    assert messages(judge(pack, pool_program(capacity, terms)), POLICY) == expected


# ---- the lane model -----------------------------------------------------------------------------------------


def lanes_of(program) -> dict[str, Any]:
    run = run_program(program, {"aws:region": "us-east-1"}, stack="test")
    resources = [
        checks.StackResource(r.type, r.name, r.urn, r.inputs, r.property_dependencies, r.parent or "")
        for r in run.resources
    ]
    return {lane.name: lane for lane in lanesource.read_lanes(resources, {}).lanes}


SUBNET_A, SUBNET_B = "subnet-0a1b2c3d4e5f60718", "subnet-0123456789abcdef0"


def reserved_group_program(capacity_type: str = "CAPACITY_BLOCK", reservation: str = BLOCK, max_size: int = 2):
    def program() -> None:
        lt = template(
            reservation=reservation,
            market="capacity-block" if capacity_type == "CAPACITY_BLOCK" else None,
            instance_type="p5.48xlarge" if capacity_type == "CAPACITY_BLOCK" else None,
        )
        eks_node_group(
            "train",
            lt,
            capacity_type=capacity_type,
            ami_type="AL2023_x86_64_NVIDIA",
            subnet_ids=[SUBNET_A, SUBNET_B],
            tags={"team": "ml"},
            labels={"convox.io/label": "train"},
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=0, min_size=0, max_size=max_size),
            **({} if capacity_type == "CAPACITY_BLOCK" else {"instance_types": ["p5.48xlarge"]}),
        )
        eks_node_group(
            "plain",
            None,
            instance_types=["g6.2xlarge"],
            ami_type="AL2023_x86_64_NVIDIA",
            labels={"convox.io/label": "plain"},
        )

    return program


def test_another_programs_node_group_is_a_reserved_lane_with_its_templates_reservation():
    lanes = lanes_of(reserved_group_program())
    assert lanes["train"].reservations is not None
    assert lanes["train"].reservations.ids == (BLOCK,)
    assert lanes["train"].reservations.subnet_ids == (SUBNET_A, SUBNET_B)
    assert lanes["train"].capacity == (("eks.amazonaws.com/capacityType", ("CAPACITY_BLOCK",)),)
    assert lanes["plain"].reservations is None


def test_the_racks_own_group_is_read_from_its_children_as_reserved():
    run = run_rack(
        rack_config(
            additional_node_groups_config=[{"id": "serve", "type": "g6.2xlarge", "capacity_reservation_id": ODCR}]
        )
    )
    resources = [
        checks.StackResource(r.type, r.name, r.urn, r.inputs, r.property_dependencies, r.parent or "")
        for r in run.resources
    ]
    lanes = {lane.name: lane for lane in lanesource.read_lanes(resources, {}).lanes}
    (serve,) = [lane for lane in lanes.values() if lane.reservations is not None]
    assert serve.kind == "node group" and serve.reservations.ids == (ODCR,)


def fits_config(zone: str, count: int = 2, instance_type: str = "p5.48xlarge") -> dict[str, Any]:
    return {
        "capacity-reservation-fits": {
            "reservations": {
                BLOCK: {
                    "instanceType": instance_type,
                    "availabilityZone": zone,
                    "instanceCount": count,
                    "type": "capacity-block",
                    "startDate": "2026-01-01T00:00:00Z",
                    "endDate": "2099-01-01T00:00:00Z",
                }
            },
            "subnets": {SUBNET_A: "us-east-1a", SUBNET_B: "us-east-1b"},
        }
    }


def test_the_reservation_checks_judge_another_programs_node_group(pack):
    """The group's reservation is judged as a pool's is: in a zone of its subnets it passes; in another zone, or of an
    instance type the group does not launch, it is refused, naming the group and the reservation."""
    assert messages(judge(pack, reserved_group_program(), fits_config("us-east-1b")), "capacity-reservation-fits") == []
    (zone,) = messages(judge(pack, reserved_group_program(), fits_config("us-east-1c")), "capacity-reservation-fits")
    assert zone == (
        f'node group "train" (convox.io/label=train): Capacity Block {BLOCK} is in us-east-1c, and none of '
        f"the group's subnets is ({SUBNET_A} in us-east-1a, {SUBNET_B} in us-east-1b): EKS launches nothing "
        f"into it (add a subnet in us-east-1c)"
    )
    (kind,) = messages(
        judge(pack, reserved_group_program(), fits_config("us-east-1a", instance_type="p4d.24xlarge")),
        "capacity-reservation-fits",
    )
    assert kind == (
        f'node group "train" (convox.io/label=train): Capacity Block {BLOCK} is of p4d.24xlarge, which the '
        f"group's instance types do not let it launch: EKS launches nothing into it"
    )


def test_a_groups_max_size_below_its_blocks_count_leaves_part_idle(pack):
    """EKS keeps a managed node group within ``scalingConfig.maxSize`` (the Auto Scaling group's maximum), so a
    group of max_size 1 on a block of 2 instances leaves one idle, billed all the same; with 2 or more, none."""
    for enough in (2, 3):
        assert (
            messages(
                judge(pack, reserved_group_program(max_size=enough), fits_config("us-east-1a")),
                "capacity-reservation-fits",
            )
            == []
        )
    assert messages(
        judge(pack, reserved_group_program(max_size=1), fits_config("us-east-1a")), "capacity-reservation-fits"
    ) == [
        f'node group "train" (convox.io/label=train): its max_size (1) holds 1 of the 2 p5.48xlarge of Capacity Block '
        f"{BLOCK}: the other 1 stay idle, billed all the same (raise max_size)"
    ]


_GROUP_RUN: list[Any] = []


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 10**6),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=6),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    )
)
def test_any_max_size_another_program_writes_is_read_or_left_unknown(max_size):
    """A group's ``scalingConfig.maxSize`` as any program may write it: a whole count bounds the lane's nodes (a number,
    or text of one, as the pack reads sizes), anything else leaves the bound unknown (no finding, no crash)."""
    if not _GROUP_RUN:
        run = run_program(reserved_group_program(), {"aws:region": "us-east-1"}, stack="test")
        _GROUP_RUN.append(
            [
                checks.StackResource(r.type, r.name, r.urn, r.inputs, r.property_dependencies, r.parent or "")
                for r in run.resources
            ]
        )
    resources = [
        res
        if res.name != "train" or "scalingConfig" not in res.props
        else checks.StackResource(
            res.type,
            res.name,
            res.urn,
            {**res.props, "scalingConfig": {"maxSize": max_size}},
            res.property_dependencies,
            res.parent,
        )
        for res in _GROUP_RUN[0]
    ]
    (train,) = [lane for lane in lanesource.read_lanes(resources, {}).lanes if lane.reservations is not None]
    value: Any = max_size
    if isinstance(value, str):  # a number written as text is read as the number (bootfacts.number)
        try:
            value = float(value.strip())
        except ValueError:
            value = None
    whole = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and value >= 0
        and value == int(value)
    )
    assert train.reservations.max_nodes == (int(value) if whole else None)


def test_two_groups_alike_but_for_their_reservations_are_two_reserved_lanes():
    """Two groups with the same labels and taints (the rack's default label) are one lane for placement, but each
    reservation is judged with the group that launches into it: neither hides the other's."""
    run = run_rack(
        rack_config(
            additional_node_groups_config=[
                {
                    "id": "train",
                    "type": "p5.48xlarge",
                    "min_size": 0,
                    "max_size": 2,
                    "capacity_type": "CAPACITY_BLOCK",
                    "capacity_reservation_id": BLOCK,
                },
                {"id": "serve", "type": "g6.2xlarge", "capacity_reservation_id": ODCR},
            ]
        )
    )
    resources = [
        checks.StackResource(r.type, r.name, r.urn, r.inputs, r.property_dependencies, r.parent or "")
        for r in run.resources
    ]
    reserved = sorted(lane.reservations.ids for lane in lanesource.read_lanes(resources, {}).lanes if lane.reservations)
    assert reserved == [(ODCR,), (BLOCK,)]
