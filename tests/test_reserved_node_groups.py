"""Reserved capacity for managed node groups: a Capacity Block (``capacity_type: CAPACITY_BLOCK``) or an On-Demand
Capacity Reservation (``ON_DEMAND``), named by ``capacity_reservation_id`` and targeted by the group's launch template.

Upstream facts pinned here:
- EKS user guide, "Create a managed node group with Capacity Blocks for ML" (awsdocs/amazon-eks-user-guide
  ``latest/ug/ml/capacity-blocks-mng.adoc`` at 4d52b4d): a Capacity Block group is created from a custom launch
  template only, whose data has ``InstanceMarketOptions.MarketType: capacity-block``,
  ``CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId`` and the ``InstanceType``; the
  group's capacity type is ``CAPACITY_BLOCK`` (EKS rejects the create request otherwise); its desired size must be 0
  for an upgrade, and EKS scales it to 0 40 minutes before the block ends (EC2 stops its instances 30 minutes
  before). ``latest/ug/nodes/launch-templates.adoc``: an instance type in the launch template means none in the
  node group's ``instanceTypes``.
- pulumi-eks ``nodejs/eks/nodes/nodegroup.ts`` (pulumi/pulumi-eks at 7bf0c1b): ``createManagedNodeGroup`` passes
  ``capacityType``, ``instanceTypes`` and a given ``launchTemplate`` ({id, version}) to ``aws.eks.NodeGroup`` as they
  are; the launch template it builds itself (``createMNGCustomLaunchTemplate``, for ``amiId``, user data or
  ``enableIMDSv2``) sets block devices, user data, metadata options, image, placement and network interfaces only,
  and a given ``launchTemplate`` beside those options is refused: a group on a pinned AMI has no way to target a
  reservation, so the rack refuses ``ami_id`` (and ``canary_ami_id``) beside one.
- pulumi-aws (bridged from terraform-provider-aws): ``aws.ec2.LaunchTemplate`` takes
  ``capacityReservationSpecification.capacityReservationTarget.capacityReservationId`` and
  ``instanceMarketOptions.marketType``, and any change of its data is a new version, not a new template
  (``internal/service/ec2/ec2_launch_template.go``: only ``name``/``name_prefix`` are ForceNew); ``aws.eks.NodeGroup``'s
  ``capacity_type`` and ``instance_types`` are ForceNew, ``launch_template.version`` is updated in place
  (``internal/service/eks/node_group.go`` at 012e0a3; the offline plan's table, ``offline/forcenew.py``). That file
  validates ``capacity_type`` against the AWS SDK's ``types.CapacityTypes`` enum, which has ``CAPACITY_BLOCK``
  beside ``ON_DEMAND`` and ``SPOT`` (pulumi-aws 7.51.1's docstring still lists only the two). So a reservation
  added to, changed on or removed from a group rolls its nodes to a new launch template version, while turning a
  group into a block group (its capacity type) replaces it. The recorded real run below pins the plan on a
  launch template and a node group the real providers wrote.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import recorded_runs as rr
from conftest import rack_config, run_rack
from mixed_os_racks import ConfigError, NodeGroupSpec, parse_rack_config
from mixed_os_racks.offline import Catalog, ProgramRun, Resource

BLOCK = "cr-0a1b2c3d4e5f60718"
ODCR = "cr-0123456789abcdef0"
NEXT_BLOCK = "cr-0fedcba9876543210"
KEY = "rack:additional_node_groups_config[0]"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def group(**fields: Any) -> dict[str, Any]:
    return {
        "id": "train",
        "type": "p5.48xlarge",
        "min_size": 0,
        "max_size": 2,
        "dedicated": True,
        "label": "train",
        **fields,
    }


def block_group(**fields: Any) -> dict[str, Any]:
    return group(**{"capacity_type": "CAPACITY_BLOCK", "capacity_reservation_id": BLOCK, **fields})


def one(run: ProgramRun, type_: str, name: str) -> Resource:
    (found,) = [r for r in run.resources if r.type == type_ and r.name == name]
    return found


def template_and_group(run: ProgramRun, name: str = "rack-ng-train") -> tuple[dict[str, Any], dict[str, Any]]:
    """The launch template and the ``aws.eks.NodeGroup`` the group registers (pulumi-eks's child, as its provider
    registers it)."""
    return one(run, LAUNCH_TEMPLATE, f"{name}-launch-template").inputs, one(run, EKS_NODE_GROUP, name).inputs


def group_error(**fields: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_rack_config({"cluster_name": "c", "additional_node_groups_config": [group(**fields)]})
    return str(caught.value)


# ---- what a reserved group registers ------------------------------------------------------------------------


def test_a_capacity_block_group_launches_from_a_template_that_targets_the_block():
    template, node_group = template_and_group(run_rack(rack_config(additional_node_groups_config=[block_group()])))
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": BLOCK}
    }
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["instanceType"] == "p5.48xlarge"
    assert node_group["capacityType"] == "CAPACITY_BLOCK"
    assert "instanceTypes" not in node_group  # EKS takes the type in the launch template or the group, not both
    assert node_group["launchTemplate"]["id"]  # the group's own template: the hardening stays
    assert template["metadataOptions"]["httpTokens"] == "required"
    assert template["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"


def test_an_on_demand_reservation_is_targeted_without_the_block_market():
    template, node_group = template_and_group(
        run_rack(rack_config(additional_node_groups_config=[group(capacity_reservation_id=ODCR)]))
    )
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": ODCR}
    }
    assert "instanceMarketOptions" not in template and "instanceType" not in template
    assert node_group["capacityType"] == "ON_DEMAND"
    assert node_group["instanceTypes"] == ["p5.48xlarge"]


def test_a_group_without_a_reservation_writes_none():
    """Day 2: groups that take no reservation keep the launch template they had."""
    template, node_group = template_and_group(run_rack(rack_config(additional_node_groups_config=[group()])))
    assert not {"capacityReservationSpecification", "instanceMarketOptions", "instanceType"} & set(template)
    assert node_group["capacityType"] == "ON_DEMAND"


def test_the_lanes_output_names_the_groups_reservation_and_its_capacity_type():
    from mixed_os_racks.pack.laneconfig import lanes_config_problems

    lanes = run_rack(
        rack_config(
            additional_node_groups_config=[
                block_group(),
                group(id="serve", type="g6.2xlarge", label="serve", capacity_reservation_id=ODCR),
            ]
        )
    ).outputs["lanes"]
    assert lanes["rack-ng-train"]["capacityReservationIds"] == [BLOCK]
    assert lanes["rack-ng-train"]["capacityTypes"] == ["CAPACITY_BLOCK"]
    assert lanes["rack-ng-serve"]["capacityReservationIds"] == [ODCR]
    assert lanes["rack-ng-serve"]["capacityTypes"] == ["ON_DEMAND"]
    assert lanes_config_problems([{"name": name, **lane} for name, lane in lanes.items()]) == []


# ---- validation ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"capacity_type": "CAPACITY_BLOCK"},
            f"{KEY}.capacity_type: node group 'rack-ng-train': capacity_type CAPACITY_BLOCK needs "
            f"capacity_reservation_id "
            "(the Capacity Block the group launches into)",
        ),
        (
            {"capacity_type": "SPOT", "capacity_reservation_id": ODCR},
            f"{KEY}.capacity_reservation_id: node group 'rack-ng-train': capacity_reservation_id needs capacity_type "
            "CAPACITY_BLOCK (a Capacity Block) or ON_DEMAND (an On-Demand Capacity Reservation), not SPOT",
        ),
        (
            {"capacity_reservation_id": ODCR, "ami_id": "ami-0a1b2c3d4e5f60718"},
            f"{KEY}.capacity_reservation_id: node group 'rack-ng-train': capacity_reservation_id cannot be used with "
            f"ami_id "
            "(pulumi-eks builds a pinned AMI's launch template and gives it no capacity reservation)",
        ),
        (
            {"capacity_reservation_id": ODCR, "canary_ami_id": "ami-0a1b2c3d4e5f60718"},
            f"{KEY}.capacity_reservation_id: node group 'rack-ng-train': capacity_reservation_id cannot be used with "
            "canary_ami_id (pulumi-eks builds a pinned AMI's launch template and gives it no capacity reservation)",
        ),
        (
            {"capacity_type": "CAPACITY_BLOCK", "capacity_reservation_id": BLOCK, "min_size": 1},
            f"{KEY}.min_size: node group 'rack-ng-train': a CAPACITY_BLOCK group needs min_size 0 (got '1'): EKS "
            f"scales it "
            "to 0 before the block ends, and an upgrade needs its desired size at 0",
        ),
        (
            {"capacity_type": "capacity-block"},
            f"{KEY}: invalid capacity_type 'capacity-block' (must be ON_DEMAND, SPOT or CAPACITY_BLOCK)",
        ),
    ],
)
def test_reservation_problems_name_the_key_and_the_fix(fields, message):
    assert group_error(**fields) == message


IDS = st.from_regex(r"cr-(?:[0-9a-f]{8}|[0-9a-f]{17})", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=40))
def test_a_malformed_id_gets_one_line_naming_the_key_and_the_value(text):
    if re.fullmatch(r"cr-(?:[0-9a-f]{8}|[0-9a-f]{17})", text):
        return
    message = group_error(capacity_reservation_id=text)
    assert "\n" not in message
    assert message.startswith(
        f"{KEY}.capacity_reservation_id: node group 'rack-ng-train': invalid capacity reservation id '"
    )
    assert "' (must look like cr-0123456789abcdef0)" in message


@settings(max_examples=60, deadline=None)
@given(IDS, st.sampled_from(["ON_DEMAND", "CAPACITY_BLOCK"]), st.integers(min_value=1, max_value=100))
def test_any_well_formed_reservation_is_targeted_by_the_launch_template(reservation, capacity_type, most):
    from mixed_os_racks.nodegroup import reservation_template_args

    spec = NodeGroupSpec(
        instance_type="p5.48xlarge",
        capacity_type=capacity_type,
        capacity_reservation_id=reservation,
        min_size=0,
        max_size=most,
    )
    found = reservation_template_args(spec)
    target = found["capacity_reservation_specification"].capacity_reservation_target
    assert target.capacity_reservation_id == reservation
    block = capacity_type == "CAPACITY_BLOCK"
    assert ("instance_market_options" in found) is block and ("instance_type" in found) is block


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(st.none(), IDS, st.text(max_size=20)),
    st.sampled_from(["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"]),
    st.integers(min_value=0, max_value=3),
    st.booleans(),
)
def test_every_combination_is_accepted_only_when_eks_can_launch_it(reservation, capacity_type, least, pinned):
    """The rules as a whole: a spec is built exactly when the reservation is well formed, the capacity type can
    launch into it (a block needs one, Spot takes none), a block group can scale to 0, and no AMI is pinned beside
    a reservation."""
    fields: dict[str, Any] = {
        "instance_type": "p5.48xlarge",
        "capacity_type": capacity_type,
        "min_size": least,
        "max_size": 3,
        "capacity_reservation_id": reservation,
    }
    if pinned:
        fields["ami_id"] = "ami-0a1b2c3d4e5f60718"
    well_formed = reservation is None or re.fullmatch(r"cr-(?:[0-9a-f]{8}|[0-9a-f]{17})", reservation) is not None
    launchable = (capacity_type != "CAPACITY_BLOCK" or (reservation is not None and least == 0)) and not (
        reservation is not None and (capacity_type == "SPOT" or pinned)
    )
    try:
        NodeGroupSpec(**fields)
        built = True
    except ValueError:
        built = False
    assert built == (well_formed and launchable)


# ---- day 2 --------------------------------------------------------------------------------------------------


def _moved(before: ProgramRun, after: ProgramRun, tmp_path) -> list[tuple[str, str]]:
    """The plan ``preview --state`` makes for ``after`` against the state ``before`` left: its steps that change
    something, as (op, resource name)."""
    from mixed_os_racks.offline.plan import make_plan
    from mixed_os_racks.offline.stackexport import read_stack_export, write_export

    plan = make_plan(after, read_stack_export(write_export(before, tmp_path / "state.json"), "mixed-os-racks", "test"))
    # a reservation's read, and its discard once no lane names it, change nothing (test_reservation_read.py)
    return sorted((s.op, s.urn.rsplit("::", 1)[-1]) for s in plan.steps if s.op not in ("same", "read", "discard"))


@pytest.mark.parametrize(
    ("was", "now"),
    [({}, {"capacity_reservation_id": ODCR}), ({"capacity_reservation_id": ODCR}, {})],
    ids=["added", "removed"],
)
def test_reserving_capacity_for_a_running_group_rolls_it_and_nothing_else(was, now, tmp_path):
    """An ODCR added to (or removed from) a running On-Demand group: a new launch template version, which the group
    rolls its nodes to (an update, not a replacement); the other group is untouched, whatever the groups' order."""
    serve = group(id="serve", type="g6.2xlarge", label="serve", min_size=1)
    before = run_rack(rack_config(additional_node_groups_config=[group(**was), serve]))
    after = run_rack(rack_config(additional_node_groups_config=[serve, group(**now)]))
    # the template's new version, and the group's update to it (EKS rolls the nodes): no replacement, no other group
    assert _moved(before, after, tmp_path) == [("update", "rack-ng-train"), ("update", "rack-ng-train-launch-template")]


def test_moving_a_block_group_to_its_next_block_updates_its_launch_template_only(tmp_path):
    before = run_rack(rack_config(additional_node_groups_config=[block_group()]))
    next_block = Catalog.from_doc(
        {
            "amis": [],
            "reservations": {
                NEXT_BLOCK: {
                    "instance_type": "p5.48xlarge",
                    "availability_zone": "us-east-1a",
                    "instance_count": 2,
                    "type": "capacity-block",
                    "start_date": "2026-12-28T11:30:00Z",
                    "end_date": "2027-01-11T11:30:00Z",
                }
            },
        }
    ).over(Catalog.load())
    after = run_rack(
        rack_config(additional_node_groups_config=[block_group(capacity_reservation_id=NEXT_BLOCK)]), next_block
    )
    assert _moved(before, after, tmp_path) == [("update", "rack-ng-train"), ("update", "rack-ng-train-launch-template")]


def test_turning_a_group_into_a_block_group_replaces_it_and_the_plan_says_so(tmp_path):
    """EKS cannot change a group's capacity type in place: the preview shows the replacement before it happens."""
    before = run_rack(rack_config(additional_node_groups_config=[group()]))
    after = run_rack(rack_config(additional_node_groups_config=[block_group()]))
    assert ("replace", "rack-ng-train") in _moved(before, after, tmp_path)


RECORDED = "TestProviderUpgrade/managed-nodegroups/3.0.0"
"""A real ``pulumi up`` of pulumi-eks's ``managed-nodegroups`` example (``tests/recorded/README.md``): its
``example-managed-ng3`` group launches from a launch template pulumi-eks built."""


def _edit(type_: str, name: str, change: Any) -> Any:
    def edit(entry: dict[str, Any]) -> dict[str, Any]:
        request = entry["request"]
        if (request["type"], request["name"]) != (type_, name):
            return entry
        entry = copy.deepcopy(entry)
        change(entry["request"].setdefault("object", {}))
        return entry

    return edit


@pytest.mark.parametrize(
    ("type_", "name", "change", "op"),
    [
        (
            LAUNCH_TEMPLATE,
            "example-managed-ng3-launchTemplate",
            lambda i: i.update(
                capacityReservationSpecification={"capacityReservationTarget": {"capacityReservationId": BLOCK}},
                instanceMarketOptions={"marketType": "capacity-block"},
            ),
            "update",
        ),
        (EKS_NODE_GROUP, "example-managed-ng1", lambda i: i.update(capacityType="CAPACITY_BLOCK"), "replace"),
    ],
    ids=["reservation-in-the-template", "capacity-type-of-the-group"],
)
def test_the_plan_on_what_the_real_providers_recorded(type_, name, change, op, tmp_path):
    """Against a real state: targeting a reservation from a recorded launch template updates it and changes nothing
    else; a recorded group's capacity type changed to CAPACITY_BLOCK replaces that group."""
    import json

    from mixed_os_racks.cli import main

    project, stack = rr.replay_project(RECORDED, tmp_path / "project", edit=_edit(type_, name, change))
    out = project / "plan.json"
    main(
        [
            "preview",
            "--cwd",
            str(project),
            "--stack",
            stack,
            "--state",
            str(rr.state_file(RECORDED, tmp_path)),
            "--no-policy",
            "--json",
            str(out),
        ]
    )
    steps = json.loads(out.read_text())["resources"]
    assert [s["op"] for s in steps if (s["type"], s["name"]) == (type_, name)] == [op]
    assert {s["op"] for s in steps if s["name"] != name} <= {"same", "read"}, steps
