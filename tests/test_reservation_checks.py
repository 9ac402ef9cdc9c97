"""Reserved lanes checked against their reservations: the catalog's ``reservations:``, the reservation decoder and
the pack's look-up, and the two policies ``capacity-reservation-fits`` and ``capacity-reservation-ending``.

Upstream facts pinned here:
- botocore's EC2 model (the installed botocore, ``botocore/data/ec2/2016-11-15/service-2.json``), shape
  ``CapacityReservation``: ``CapacityReservationId``, ``InstanceType``, ``AvailabilityZone``, ``TotalInstanceCount``,
  ``AvailableInstanceCount``, ``State`` (``active``, ``expired``, ``cancelled``, ``scheduled``, ...), ``StartDate``,
  ``EndDate`` (absent with ``EndDateType: unlimited``), ``ReservationType`` (``default`` or ``capacity-block``). The
  look-up is tested through a real boto3 client whose answer botocore's ``Stubber`` validates against that model.
- Karpenter v1.14.1 (aws/karpenter-provider-aws at tag v1.14.1):
  ``pkg/providers/instancetype/offering/reserved_capacity_resolver.go`` offers a reserved node only of the
  reservation's instance type, in its zone, available only when the class's subnets reach that zone;
  ``pkg/providers/capacityreservation/types.go`` describes a selected id with the filter ``state=active`` only;
  ``pkg/apis/v1/ec2nodeclass_status.go`` marks a Capacity Block ``expiring`` 40 minutes before its end, after
  which its offering is unavailable (no new node).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber
from hypothesis import given, settings, strategies as st

import pulumi_kubernetes as k8s

from mixed_os_racks.offline.catalog import Catalog, CatalogError
from mixed_os_racks.offline.packprocess import PolicyPackProcess, pack_env
from mixed_os_racks.facts import wellknown
from mixed_os_racks.pack import lanemodel, lookup, reservation, reserved
from policy_helpers import POLICIES, judge, messages

BLOCK = "cr-0a1b2c3d4e5f60718"  # the default catalog's Capacity Block: 2 x p5.48xlarge, us-east-1a, 12-14 .. 12-28
ODCR = "cr-0123456789abcdef0"  # the default catalog's ODCR: 1 x p5.48xlarge, us-east-1b, no end
NOW = "2026-12-20T12:00:00Z"  # the block is running
FITS, ENDING = reserved.FITS, reserved.ENDING
SUBNET_A, SUBNET_B = "subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712"  # us-east-1a, us-east-1b in the catalog


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# ---- one decoder: EC2's answer (through boto3, validated by botocore's model) and the catalog's entry --------


EC2_ANSWER = {
    "CapacityReservations": [
        {
            "CapacityReservationId": BLOCK,
            "OwnerId": "123456789012",
            "CapacityReservationArn": f"arn:aws:ec2:us-east-1:123456789012:capacity-reservation/{BLOCK}",
            "AvailabilityZoneId": "use1-az4",
            "InstanceType": "p5.48xlarge",
            "InstancePlatform": "Linux/UNIX",
            "AvailabilityZone": "us-east-1a",
            "Tenancy": "default",
            "TotalInstanceCount": 2,
            "AvailableInstanceCount": 2,
            "EbsOptimized": True,
            "EphemeralStorage": False,
            "State": "active",
            "StartDate": datetime(2026, 12, 14, 11, 30, tzinfo=timezone.utc),
            "EndDate": datetime(2026, 12, 28, 11, 30, tzinfo=timezone.utc),
            "EndDateType": "limited",
            "InstanceMatchCriteria": "targeted",
            "CreateDate": datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc),
            "Tags": [],
            "ReservationType": "capacity-block",
        }
    ]
}
"""What ``DescribeCapacityReservations`` answers for the catalog's block, in botocore's shape (the Stubber refuses
a key or type the model does not have)."""


@pytest.fixture
def stubbed_ec2(monkeypatch):
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
    lookup.clear()
    monkeypatch.setattr(lookup, "_client", client)
    with Stubber(client) as stub:
        yield stub
    lookup.clear()


def test_ec2s_answer_and_the_catalogs_entry_decode_to_the_same_reservation(stubbed_ec2):
    stubbed_ec2.add_response("describe_capacity_reservations", EC2_ANSWER, {"CapacityReservationIds": [BLOCK]})
    from_ec2 = lookup.describe_capacity_reservation(BLOCK)
    assert from_ec2 == Catalog.load().reservations[BLOCK].__class__(
        id=BLOCK,
        instance_type="p5.48xlarge",
        zone="us-east-1a",
        count=2,
        kind="capacity-block",
        state="active",
        start=at("2026-12-14T11:30:00Z"),
        end=at("2026-12-28T11:30:00Z"),
    )
    catalog = Catalog.load().reservations[BLOCK]
    assert (catalog.instance_type, catalog.zone, catalog.count, catalog.kind, catalog.start, catalog.end) == (
        from_ec2.instance_type,
        from_ec2.zone,
        from_ec2.count,
        from_ec2.kind,
        from_ec2.start,
        from_ec2.end,
    )
    assert lookup.describe_capacity_reservation(BLOCK) is from_ec2  # cached: the stub had one answer
    stubbed_ec2.assert_no_pending_responses()


def test_a_reservation_the_account_lacks_is_none_and_a_failure_is_a_reason(stubbed_ec2):
    stubbed_ec2.add_client_error(
        "describe_capacity_reservations",
        "InvalidCapacityReservationId.NotFound",
        f"The capacity reservation ID '{ODCR}' does not exist",
        400,
        expected_params={"CapacityReservationIds": [ODCR]},
    )
    stubbed_ec2.add_client_error(
        "describe_capacity_reservations",
        "UnauthorizedOperation",
        "not authorized",
        403,
        expected_params={"CapacityReservationIds": [BLOCK]},
    )
    assert lookup.describe_capacity_reservation(ODCR) is None
    with pytest.raises(LookupError, match="EC2 DescribeCapacityReservations: UnauthorizedOperation"):
        lookup.describe_capacity_reservation(BLOCK)


def test_an_odcr_without_an_end_date_never_ends():
    found = reservation.decode(
        ODCR,
        {
            "InstanceType": "g6e.12xlarge",
            "AvailabilityZone": "us-east-1b",
            "TotalInstanceCount": 3,
            "State": "active",
            "EndDateType": "unlimited",
            "ReservationType": "default",
        },
    )
    assert found.end is None and not found.ended(at("2099-01-01T00:00:00Z")) and found.count == 3


def test_a_block_takes_no_node_from_40_minutes_before_its_end():
    block = Catalog.load().reservations[BLOCK]
    assert not block.ended(at("2026-12-28T10:49:00Z"))
    assert block.ended(at("2026-12-28T10:50:00Z"))
    assert block.not_started(at("2026-12-14T11:29:00Z")) and not block.not_started(at("2026-12-14T11:30:00Z"))


# ---- the catalog's section --------------------------------------------------------------------------------


def catalog_error(entry: object, reservation_id: str = ODCR) -> str:
    with pytest.raises(CatalogError) as caught:
        Catalog.from_doc({"reservations": {reservation_id: entry}}, "amis.yaml")
    return str(caught.value)


GOOD = {"instance_type": "p5.48xlarge", "availability_zone": "us-east-1a", "instance_count": 2}


@pytest.mark.parametrize(
    "entry, reservation_id, message",
    [
        (
            GOOD,
            "cr-XYZ",
            "AMI catalog amis.yaml: reservations: 'cr-XYZ' is not a capacity reservation id (cr- and 8 or 17 "
            "hex digits, like cr-0123456789abcdef0)",
        ),
        (
            {**GOOD, "availability_zone": "us-east-1"},
            ODCR,
            f"AMI catalog amis.yaml: reservations.{ODCR}.availability_zone: 'us-east-1' is not an Availability Zone "
            f"name (like us-east-1a)",
        ),
        ({**GOOD, "instance_count": 0}, ODCR, f"reservations.{ODCR}.instance_count: "),
        (
            {**GOOD, "instance_count": "2"},
            ODCR,
            f"reservations.{ODCR}.instance_count: expected a whole number, got text '2'",
        ),
        (
            {**GOOD, "type": "block"},
            ODCR,
            f"reservations.{ODCR}.type: expected default or capacity-block, got text 'block'",
        ),
        (
            {**GOOD, "type": "capacity-block", "end_date": "2026-12-28T11:30:00Z"},
            ODCR,
            f"reservations.{ODCR}: a Capacity Block has a start and an end date (missing start_date)",
        ),
        (
            {**GOOD, "start_date": "2026-12-28T11:30:00Z", "end_date": "2026-12-14T11:30:00Z"},
            ODCR,
            f"reservations.{ODCR}: end_date 2026-12-14T11:30:00Z is not after start_date 2026-12-28T11:30:00Z",
        ),
        (
            {**GOOD, "end_date": "2026-12-28"},
            ODCR,
            f"reservations.{ODCR}.end_date: '2026-12-28' is a date or a time without its zone",
        ),
        ({**GOOD, "instance_type": "p5.huge"}, ODCR, f"reservations.{ODCR}.instance_type: "),
        ({**GOOD, "zone": "us-east-1a"}, ODCR, f"reservations.{ODCR}.zone: unknown key"),
        ("p5.48xlarge", ODCR, f"reservations.{ODCR}: expected a mapping of a reservation's fields"),
    ],
)
def test_a_bad_reservation_gets_one_line_naming_the_entry_and_the_field(entry, reservation_id, message):
    error = catalog_error(entry, reservation_id)
    assert message in error and "\n" not in error and "Traceback" not in error


def test_the_default_catalogs_reservations_are_the_docs_examples():
    found = Catalog.load().reservations
    assert found[BLOCK].block and found[BLOCK].count == 2 and found[BLOCK].zone == "us-east-1a"
    assert found[ODCR].kind == "default" and found[ODCR].end is None and found[ODCR].instance_type == "p5.48xlarge"
    assert BLOCK in (Path(__file__).parents[1] / "docs" / "reserved-capacity.md").read_text()


FIELD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 300),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["p5.48xlarge", "us-east-1a", "capacity-block", "default", "2026-12-14T11:30:00Z"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            ["instance_type", "availability_zone", "instance_count", "type", "start_date", "end_date", "zone", "count"]
        ),
        FIELD_VALUES,
        max_size=7,
    ),
    st.sampled_from([ODCR, BLOCK, "cr-1", "", "CR-0123456789ABCDEF0"]),
)
def test_any_entry_loads_or_gets_a_clear_error(entry, reservation_id):
    try:
        loaded = Catalog.from_doc({"reservations": {reservation_id: entry}}, "amis.yaml")
    except CatalogError as exc:
        assert str(exc).startswith("AMI catalog amis.yaml: ") and "Traceback" not in str(exc)
        assert "reservations" in str(exc)
        return
    found = loaded.reservations[reservation_id]
    assert found.count is not None and found.count >= 1 and found.zone and found.instance_type
    assert found.end is None or found.start is None or found.end > found.start


# ---- the checks, on the lane model (what any lane that fills ``Lane.reservations`` gets) ----------------------


def pool(
    ids=(BLOCK,),
    capacity=("reserved", "on-demand"),
    types=("p5.48xlarge",),
    limits=(("cpu", 384.0),),
    subnets=(SUBNET_A, SUBNET_B),
    zones=(),
) -> lanemodel.LaneView:
    return lanemodel.LaneView(
        "train",
        "pool",
        {"convox.io/nodepool": "train"},
        requirements=(wellknown.Requirement(wellknown.TYPE_KEY, "In", tuple(types)),),
        capacity=((wellknown.CAPACITY_TYPE_KEY, tuple(capacity)),),
        limits=tuple(limits),
        reservations=lanemodel.Reservations(tuple(ids), tuple(subnets), "", tuple(zones)),
    )


def catalog_knowledge(**more) -> reserved.Knowledge:
    catalog = Catalog.load()
    return reserved.Knowledge(
        {
            "reservations": {i: reservation.as_config(r) for i, r in catalog.reservations.items()},
            "subnets": catalog.subnets,
            **more,
        }
    )


def fits(lane: lanemodel.LaneView, now: str = NOW, knowledge=None) -> list[str]:
    return [f.message for f in reserved.fits(lanemodel.Lanes((lane,)), knowledge or catalog_knowledge(), at(now))]


def ending(lane: lanemodel.LaneView, now: str = NOW) -> list[str]:
    return [f.message for f in reserved.ending(lanemodel.Lanes((lane,)), catalog_knowledge(), at(now))]


def test_a_lane_that_fits_its_reservations_gets_nothing():
    lane = pool(ids=(BLOCK, ODCR), limits=(("cpu", 576.0),))  # 3 x 192 vCPUs
    assert fits(lane) == [] and ending(lane) == []


def test_each_misfit_names_the_reservation_and_the_lane():
    assert fits(pool(ids=("cr-0fedcba9876543210",))) == [
        "karpenter nodepool 'train': capacity reservation cr-0fedcba9876543210 is not one the account has (EC2 "
        "DescribeCapacityReservations does not find it in the stack's region): check the id, the account and "
        "the region"
    ]
    assert fits(pool(types=("p4d.24xlarge",))) == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} is of p5.48xlarge, which the pool's requirements do not "
        f"let "
        f"it launch: Karpenter launches nothing into it"
    ]
    assert fits(pool(subnets=(SUBNET_B,))) == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} is in us-east-1a, and none of the pool's subnets is "
        f"({SUBNET_B} in us-east-1b): Karpenter launches nothing into it (add a subnet in us-east-1a)"
    ]
    assert fits(pool(zones=("us-east-1b",))) == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} is in us-east-1a, which the pool's "
        f"topology.kubernetes.io/zone requirement leaves out (us-east-1b): Karpenter launches nothing into it"
    ]
    assert fits(pool(limits=(("cpu", 192.0),))) == [
        f"karpenter nodepool 'train': its limits (cpu 192) hold 1 of the 2 p5.48xlarge of Capacity Block {BLOCK}: "
        f"the other 1 stay idle, billed all the same (raise the limits)"
    ]
    assert fits(pool(capacity=("on-demand",))) == [
        f"karpenter nodepool 'train': its capacity types (on-demand) leave out reserved: it launches nothing into "
        f"{BLOCK}, billed all the same (add reserved)"
    ]


def test_reservations_that_each_fit_but_not_together_are_named_together():
    assert fits(pool(ids=(BLOCK, ODCR), limits=(("cpu", 576.0),))) == []  # 3 x 192 vCPUs
    assert fits(pool(ids=(BLOCK, ODCR), limits=(("cpu", 400.0),))) == [
        f"karpenter nodepool 'train': its limits (cpu 400) do not hold all the instances of {BLOCK} (2 p5.48xlarge), "
        f"{ODCR} (1 p5.48xlarge) at once: part of them stays idle, billed all the same (raise the limits)"
    ]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2000), st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "nodes"]))
def test_the_idle_check_holds_exactly_when_the_limits_hold_the_count(amount, resource):
    per_node = {"cpu": 192, "memory": None, "nvidia.com/gpu": 8, "nodes": 1}[resource]
    if per_node is None:
        return
    said = fits(pool(limits=((resource, float(amount)),)))
    assert (said == []) == (amount >= 2 * per_node)


def group(max_nodes, capacity="CAPACITY_BLOCK") -> lanemodel.LaneView:
    """A managed node group of p5.48xlarge on the catalog's block, at most ``max_nodes`` nodes (its maxSize)."""
    return lanemodel.LaneView(
        "train",
        "node group",
        {"convox.io/label": "train"},
        requirements=(wellknown.Requirement(wellknown.TYPE_KEY, "In", ("p5.48xlarge",)),),
        capacity=((wellknown.EKS_CAPACITY_TYPE_KEY, (capacity,)),),
        reservations=lanemodel.Reservations((BLOCK,), (SUBNET_A,), "", (), "", max_nodes),
    )


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.none(), st.integers(0, 40)), st.sampled_from(["CAPACITY_BLOCK", "ON_DEMAND"]))
def test_a_groups_idle_check_holds_exactly_when_its_max_size_holds_the_count(max_nodes, capacity):
    """EKS runs at most a group's maxSize nodes: below the block's 2 instances, the rest stay idle."""
    said = fits(group(max_nodes, capacity))
    if max_nodes is None or max_nodes >= 2:
        assert said == []
    else:
        assert said == [
            f'node group "train" (convox.io/label=train): its max_size ({max_nodes}) holds {max_nodes} of '
            f"the 2 p5.48xlarge of Capacity Block {BLOCK}: the other {2 - max_nodes} stay idle, billed "
            f"all the same (raise max_size)"
        ]


def test_an_unknown_reservation_is_not_guessed():
    knowledge = reserved.Knowledge({})
    (finding,) = reserved.fits(lanemodel.Lanes((pool(),)), knowledge, at(NOW))
    assert not finding.certain and f"set lookup: true on {FITS} (EC2 DescribeCapacityReservations)" in finding.message


def test_subnets_selected_by_tags_cannot_be_checked_for_the_zone():
    lane = pool()
    tagged = lanemodel.LaneView(
        lane.name,
        lane.kind,
        lane.labels,
        requirements=lane.requirements,
        capacity=lane.capacity,
        limits=lane.limits,
        reservations=lanemodel.Reservations((BLOCK,), (), "by tags karpenter.sh/discovery=prod"),
    )
    (finding,) = reserved.fits(lanemodel.Lanes((tagged,)), catalog_knowledge(), at(NOW))
    assert not finding.certain and "selected by tags karpenter.sh/discovery=prod" in finding.message


def test_the_ending_warnings_say_the_date():
    assert ending(pool(), "2026-12-23T12:00:00Z") == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} ends on 2026-12-28 11:30 UTC, within a week: Karpenter "
        f"stops launching into it 40 minutes before, and its nodes are terminated"
    ]
    assert ending(pool(), "2026-12-20T11:00:00Z") == []  # more than a week before it stops taking nodes
    assert ending(pool(), "2026-12-10T00:00:00Z") == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} starts on 2026-12-14 11:30 UTC: until then the pool "
        f"launches none into it"
    ]


def test_an_ended_block_refuses_a_reserved_only_lane_and_warns_one_that_falls_back():
    after = "2026-12-29T00:00:00Z"
    assert fits(pool(capacity=("reserved",)), after) == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} ended on 2026-12-28 11:30 UTC: it takes no new nodes, and "
        f"the pool launches only into reservations, so it gets no node from it (remove it, or add on-demand)"
    ]
    assert ending(pool(capacity=("reserved",)), after) == []
    assert fits(pool(), after) == []
    assert ending(pool(), after) == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} ended on 2026-12-28 11:30 UTC: it takes no new nodes, and "
        f"the pool launches on-demand instances instead (remove it from the pool)"
    ]


# ---- through the pack: another team's EC2NodeClass and NodePool ----------------------------------------------


@pytest.fixture(scope="module")
def pack():
    env = pack_env("mixed-os-racks", "test")
    env["MIXED_OS_RACKS_NOW"] = NOW
    with PolicyPackProcess(POLICIES, env) as running:
        yield running


def reserved_program(ids=(BLOCK,), capacity=("reserved", "on-demand"), subnet_ids=(SUBNET_A, SUBNET_B), cpu="384"):
    def program() -> None:
        k8s.apiextensions.CustomResource(
            "train-class",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata={"name": "train"},
            spec={
                "amiFamily": "AL2023",
                "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "role": "KarpenterNodeRole-c",
                "subnetSelectorTerms": [{"id": s} for s in subnet_ids],
                "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
                "capacityReservationSelectorTerms": [{"id": i} for i in ids],
            },
        )
        k8s.apiextensions.CustomResource(
            "train-pool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": "train"},
            spec={
                "limits": {"cpu": cpu},
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "train"},
                        "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                        "requirements": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]},
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(capacity)},
                        ],
                    }
                },
            },
        )

    return program


def account() -> dict:
    knowledge = catalog_knowledge()
    props = {"reservations": knowledge.config["reservations"], "subnets": knowledge.config["subnets"]}
    return {FITS: props, ENDING: props}


def test_the_pack_judges_another_programs_reserved_pool(pack):
    assert messages(judge(pack, reserved_program(), account()), FITS) == []
    refused = messages(
        judge(
            pack, reserved_program(ids=(BLOCK, "cr-0fedcba9876543210"), subnet_ids=(SUBNET_B,), cpu="192"), account()
        ),
        FITS,
    )
    assert refused == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} is in us-east-1a, and none of the pool's subnets is "
        f"({SUBNET_B} in us-east-1b): Karpenter launches nothing into it (add a subnet in us-east-1a)",
        f"karpenter nodepool 'train': its limits (cpu 192) hold 1 of the 2 p5.48xlarge of Capacity Block {BLOCK}: "
        f"the other 1 stay idle, billed all the same (raise the limits)",
        "karpenter nodepool 'train': capacity reservation cr-0fedcba9876543210 is not one the account has (EC2 "
        "DescribeCapacityReservations does not find it in the stack's region): check the id, the account and "
        "the region",
    ]


def test_the_pack_warns_of_a_block_ending_within_a_week_by_its_clock(pack):
    ends = {
        **account(),
        FITS: {
            **account()[FITS],
            "reservations": {BLOCK: {**account()[FITS]["reservations"][BLOCK], "endDate": "2026-12-24T11:30:00Z"}},
        },
    }
    ends[ENDING] = ends[FITS]
    assert messages(judge(pack, reserved_program(), ends), ENDING, "advisory") == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} ends on 2026-12-24 11:30 UTC, within a week: Karpenter "
        f"stops launching into it 40 minutes before, and its nodes are terminated"
    ]


def test_without_facts_the_pack_says_what_would_make_it_verifiable(pack):
    found = judge(pack, reserved_program(), {})
    assert messages(found, FITS) == []
    assert any(FITS in v["policy"] and "set lookup: true" in v["message"] for v in found if v["level"] == "advisory")


# ---- the rack, previewed offline with the catalog's account --------------------------------------------------


def created(subnets: str, pool: dict) -> dict:
    """A rack that creates its cluster in the catalog's subnets (its pools select them by id)."""
    from conftest import rack_config

    return rack_config(
        cluster_mode="create",
        vpc_id="vpc-0f1e2d3c4b5a69788",
        private_subnets_ids=subnets,
        additional_karpenter_nodepools_config=[pool],
    )


def test_the_offline_preview_judges_the_racks_reserved_pool_and_its_canary_by_the_catalog(pack):
    """The offline preview hands both policies the catalog's reservations and subnets (``cli.stackrun.catalog_config``);
    the rack's pool selects its subnets by id (``private_subnets_ids``). Its canary shares the reservation with
    small limits by design: it is checked for the reservation's type and zone, not its count."""
    from conftest import run_rack
    from mixed_os_racks.cli.stackrun import catalog_config

    subnets = f"{SUBNET_A},{SUBNET_B}"
    train = {
        "name": "train",
        "instance_families": "p5",
        "instance_sizes": "48xlarge",
        "cpu_limit": 384,
        "memory_limit_gb": 4096,
        "dedicated": True,
        "capacity_types": "reserved,on-demand",
        "capacity_reservation_ids": BLOCK,
        "canary_ami_id": "ami-0a1b2c3d4e5f60718",
        "disk": 200,
    }
    run = run_rack(created(subnets, train))
    pack.configure({}, run, catalog_config(Catalog.load()))
    assert messages(pack.analyze(run), FITS) == []

    small = dict(train, cpu_limit=192)
    small.pop("canary_ami_id")
    run = run_rack(created(f"{SUBNET_B},subnet-0a1b2c3d4e5f60713", small))
    pack.configure({}, run, catalog_config(Catalog.load()))
    assert messages(pack.analyze(run), FITS) == [
        f"karpenter nodepool 'train': Capacity Block {BLOCK} is in us-east-1a, and none of the pool's subnets is "
        f"({SUBNET_B} in us-east-1b, subnet-0a1b2c3d4e5f60713 in us-east-1c): Karpenter launches nothing into it "
        f"(add a subnet in us-east-1a)",
        f"karpenter nodepool 'train': its limits (cpu 192, memory 4096Gi) hold 1 of the 2 p5.48xlarge of Capacity "
        f"Block "
        f"{BLOCK}: the other 1 stay idle, billed all the same (raise the limits)",
    ]
    # a reservation the account does not have: the rack's read of it fails first (test_reservation_read.py), and the
    # pack refuses it in any other program (test_the_pack_judges_another_programs_reserved_pool)
    with pytest.raises(Exception, match="reading EC2 Capacity Reservation \\(cr-0fedcba9876543210\\)"):
        run_rack(
            created(f"{SUBNET_A},{SUBNET_B}", dict(small, capacity_reservation_ids=f"{BLOCK},cr-0fedcba9876543210"))
        )


def test_the_offline_preview_judges_the_racks_block_group_by_its_max_size(pack):
    """The rack's own block group (its aws.eks.NodeGroup child, scalingConfig.maxSize = max_size): a max_size of 1 on
    the catalog's block of 2 leaves one idle; 2 fits."""
    from conftest import rack_config, run_rack
    from mixed_os_racks.cli.stackrun import catalog_config

    def group(max_size: int) -> dict:
        return rack_config(
            cluster_mode="create",
            vpc_id="vpc-0f1e2d3c4b5a69788",
            private_subnets_ids=f"{SUBNET_A},{SUBNET_B}",
            additional_node_groups_config=[
                {
                    "id": "train",
                    "type": "p5.48xlarge",
                    "capacity_type": "CAPACITY_BLOCK",
                    "min_size": 0,
                    "max_size": max_size,
                    "capacity_reservation_id": BLOCK,
                    "dedicated": True,
                    "label": "train",
                }
            ],
        )

    for max_size, said in (
        (2, []),
        (
            1,
            [
                f'node group "rack-ng-train" (convox.io/label=train): its max_size (1) holds 1 of the 2 p5.48xlarge of '
                f"Capacity Block {BLOCK}: the other 1 stay idle, billed all the same (raise max_size)"
            ],
        ),
    ):
        run = run_rack(group(max_size))
        pack.configure({}, run, catalog_config(Catalog.load()))
        assert messages(pack.analyze(run), FITS) == said


# ---- hostile input: another program's classes and configs, anything at all ----------------------------------


ANYTHING = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=8),
        st.sampled_from([BLOCK, ODCR, SUBNET_A, "us-east-1a", "p5.48xlarge", "2026-12-28T11:30:00Z"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["id", "tags", "ownerID", "x", "InstanceType", "EndDate", "type"]), inner, max_size=3
        ),
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(ANYTHING, ANYTHING, ANYTHING)
def test_any_class_terms_and_config_give_findings_not_a_crash(reservation_terms, subnet_terms, config_reservations):
    from mixed_os_racks.pack import checks, lanesource

    node_class = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "train"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "capacityReservationSelectorTerms": reservation_terms,
            "subnetSelectorTerms": subnet_terms,
        },
    }
    node_pool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "train"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "train"},
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved"]}],
                }
            }
        },
    }
    resources = [
        checks.StackResource("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "c", "urn:c", node_class, {}),
        checks.StackResource("kubernetes:karpenter.sh/v1:NodePool", "p", "urn:p", node_pool, {}),
    ]
    lanes = lanesource.read_lanes(resources, {})
    knowledge = reserved.Knowledge({"reservations": config_reservations, "subnets": config_reservations})
    for judged in (reserved.fits(lanes, knowledge, at(NOW)), reserved.ending(lanes, knowledge, at(NOW))):
        assert all(f.message.startswith("karpenter nodepool 'train': ") for f in judged)


@settings(max_examples=150, deadline=None)
@given(ANYTHING)
def test_the_decoder_reads_anything_without_a_crash(raw):
    found = reservation.decode(BLOCK, raw)
    assert found.count is None or found.count >= 1
    assert found.kind in ("", "default", "capacity-block")


def test_a_subnets_zone_is_what_ec2_says(stubbed_ec2):
    stubbed_ec2.add_response(
        "describe_subnets",
        {
            "Subnets": [
                {
                    "SubnetId": SUBNET_B,
                    "AvailabilityZone": "us-east-1b",
                    "AvailabilityZoneId": "use1-az6",
                    "VpcId": "vpc-0f1e2d3c4b5a69788",
                    "CidrBlock": "10.1.2.0/24",
                    "State": "available",
                }
            ]
        },
        {"SubnetIds": [SUBNET_B]},
    )
    stubbed_ec2.add_client_error(
        "describe_subnets", "InvalidSubnetID.NotFound", "no such subnet", 400, expected_params={"SubnetIds": [SUBNET_A]}
    )
    assert lookup.subnet_zone(SUBNET_B) == "us-east-1b"
    assert lookup.subnet_zone(SUBNET_A) is None


# ---- placement: a pod that selects a reservation lands only on the lanes that launch into it --------------------


def test_a_pod_selecting_a_reservation_id_lands_only_where_nodes_carry_it():
    """Karpenter labels a node launched into a reservation ``karpenter.k8s.aws/capacity-reservation-id: <id>``
    (karpenter-provider-aws v1.14.1 ``pkg/apis/v1/labels.go``), and no other node."""
    from mixed_os_racks.pack.scheduling import PodRequirement, Selection

    def selecting(*ids: str, operator: str = "In") -> Selection:
        return Selection((PodRequirement(lanemodel.RESERVATION_ID_KEY, operator, ids),))

    with_fallback, reserved_only = pool(), pool(capacity=("reserved",))
    on_demand = pool(ids=(), capacity=("on-demand",))
    on_demand = lanemodel.LaneView("batch", "pool", requirements=on_demand.requirements, capacity=on_demand.capacity)
    assert with_fallback.admits(selecting(BLOCK)) and reserved_only.admits(selecting(BLOCK))
    assert not with_fallback.admits(selecting(ODCR)) and not on_demand.admits(selecting(BLOCK))
    assert on_demand.admits(selecting(operator="DoesNotExist")) and with_fallback.admits(
        selecting(operator="DoesNotExist")
    )
    assert not reserved_only.admits(selecting(operator="DoesNotExist"))  # every node of it is in a reservation
    configured = lanemodel.LaneView("x", "lane", capacity=((wellknown.CAPACITY_TYPE_KEY, ("reserved",)),))
    assert configured.admits(selecting(ODCR))  # another stack's lane: its reservations are not known here


def test_the_pack_refuses_a_workload_selecting_a_reservation_no_lane_launches_into(pack):
    def program() -> None:
        reserved_program()()
        for name, chosen in (("on-block", BLOCK), ("on-odcr", ODCR)):
            k8s.apps.v1.Deployment(
                name,
                metadata={"name": name},
                spec={
                    "selector": {"matchLabels": {"app": name}},
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {
                            "nodeSelector": {lanemodel.RESERVATION_ID_KEY: chosen},
                            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                            "containers": [{"name": "c", "image": "nginx"}],
                        },
                    },
                },
            )

    assert messages(judge(pack, program, account()), "workloads-reach-their-lane") == [
        f"deployment \"on-odcr\" fits no lane: the nearest, karpenter nodepool 'train', cannot take it: it needs "
        f"{lanemodel.RESERVATION_ID_KEY}={ODCR}, and the lane launches into {BLOCK} only (select a lane that offers "
        f"it, "
        f"or add one)"
    ]
