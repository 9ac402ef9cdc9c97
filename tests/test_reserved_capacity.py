"""Reserved capacity lanes: Karpenter pools that launch into EC2 capacity reservations.

Upstream facts pinned here:
- Karpenter v1.14.1's EC2NodeClass CRD (``../shared/reference/karpenter-v1.14.1/karpenter.k8s.aws_ec2nodeclasses.yaml``,
  generated from karpenter-provider-aws ``pkg/apis/v1/ec2nodeclass.go``): ``capacityReservationSelectorTerms`` takes
  at most 30 terms; a term's ``id`` matches ``^cr-[0-9a-z]+$``; ``id`` cannot be set along with ``tags``,
  ``ownerID`` or ``instanceMatchCriteria`` in a term; the terms are ORed. The tests run our objects, and the
  objects the CRD refuses, through the CRD's schema and CEL rules.
- The NodePool's ``karpenter.sh/capacity-type`` takes ``reserved`` next to ``on-demand`` and ``spot``: a NodePool
  whose requirement lacks ``reserved`` launches nothing into the reservations; ``reserved`` with ``on-demand``
  falls back to On-Demand, ``reserved`` alone launches only into them. Capacity Blocks for ML are selected the
  same way (EC2 models them as reservations of type ``capacity-block``) (karpenter.sh ``docs/tasks/odcrs``,
  v1.14 and v1.15 pages).
- The ``karpenter`` chart's ``settings.featureGates.reservedCapacity`` is ``true`` by default in 1.14.1
  (``../shared/reference/karpenter-v1.14.1/chart-values.yaml``) and in 1.15.0 (aws/karpenter-provider-aws
  ``charts/karpenter/values.yaml`` at d77d1a3a, trimmed in ``fixtures/karpenter-1.15.0``). The rack writes it
  ``true``: the same value as the default, so the rendered controller is unchanged, and a later chart whose
  default differs cannot silently turn reserved pools off.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from conftest import NODECLASS, NODEPOOL, named, reference
from crd_helpers import problems
from mixed_os_racks import ClusterRef, ConfigError, KarpenterPool, KarpenterPoolArgs, PoolSpec, parse_rack_config
from mixed_os_racks.karpenter_controller import chart_values
from mixed_os_racks.offline import run_program

FIXTURE_1_15 = __import__("pathlib").Path(__file__).parent / "fixtures" / "karpenter-1.15.0" / "chart-values.yaml"
BLOCK = "cr-0a1b2c3d4e5f60718"
ODCR = "cr-0123456789abcdef0"
KEY = "rack:additional_karpenter_nodepools_config[0]"


def pool_error(**pool: object) -> str:
    pool.setdefault("name", "train")
    with pytest.raises(ConfigError) as caught:
        parse_rack_config({"cluster_name": "c", "additional_karpenter_nodepools_config": [pool]})
    return str(caught.value)


def reserved_pool(**pool: object) -> PoolSpec:
    values = {
        "name": "train",
        "instance_families": "p5",
        "instance_sizes": "48xlarge",
        "cpu_limit": 384,
        "memory_limit_gb": 4096,
        "capacity_types": "reserved,on-demand",
        "capacity_reservation_ids": f"{BLOCK},{ODCR}",
        **pool,
    }
    spec = parse_rack_config({"cluster_name": "c", "additional_karpenter_nodepools_config": [values]})
    (found,) = [p for p in spec.pools if p.name == values["name"]]
    return found


def objects(pool: PoolSpec) -> tuple[dict, dict]:
    """The EC2NodeClass and NodePool the component registers for ``pool``, as the API server gets them."""

    def program() -> None:
        KarpenterPool(pool.name, KarpenterPoolArgs(pool=pool, cluster=ClusterRef.existing("other", "other")))

    run = run_program(program, {})
    node_class, node_pool = named(run, NODECLASS, pool.name), named(run, NODEPOOL, pool.name)
    return (
        {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", **node_class.inputs},
        {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", **node_pool.inputs},
    )


def capacity_requirement(node_pool: dict) -> list[str]:
    (found,) = [
        r["values"]
        for r in node_pool["spec"]["template"]["spec"]["requirements"]
        if r["key"] == "karpenter.sh/capacity-type"
    ]
    return found


# ---- what a reserved pool writes ----------------------------------------------------------------------------


def test_a_reserved_pool_selects_its_reservations_by_id_and_launches_reserved_first():
    node_class, node_pool = objects(reserved_pool())
    assert node_class["spec"]["capacityReservationSelectorTerms"] == [{"id": BLOCK}, {"id": ODCR}]
    assert capacity_requirement(node_pool) == ["reserved", "on-demand"]
    assert problems(node_class) == [] and problems(node_pool) == []


def test_reserved_only_is_the_users_choice():
    _, node_pool = objects(reserved_pool(capacity_types="reserved"))
    assert capacity_requirement(node_pool) == ["reserved"]


def test_a_pool_without_reservations_writes_no_terms():
    """Day 2: pools that take no reservation keep the EC2NodeClass they had."""
    node_class, node_pool = objects(PoolSpec(name="plain", instance_families=["c7i"]))
    assert "capacityReservationSelectorTerms" not in node_class["spec"]
    assert capacity_requirement(node_pool) == ["on-demand"]


def test_the_crd_refuses_what_the_rules_refuse():
    """The bounds we check are the CRD's: 31 terms, a malformed id, and an id beside other fields are refused."""
    node_class, _ = objects(reserved_pool())
    for terms, message in (
        ([{"id": f"cr-{n:017x}"} for n in range(31)], "spec.capacityReservationSelectorTerms"),
        ([{"id": "CR-XYZ"}], "does not match '^cr-[0-9a-z]+$'"),
        ([{"id": ODCR, "tags": {"team": "ml"}}], "'id' is mutually exclusive"),
    ):
        node_class["spec"]["capacityReservationSelectorTerms"] = terms
        assert any(message in p for p in problems(node_class)), (terms, problems(node_class))


# ---- validation ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        (
            {"capacity_types": "reserved"},
            f"{KEY}.capacity_types: karpenter nodepool 'train': capacity type 'reserved' needs "
            f"capacity_reservation_ids "
            "(the reservations the pool launches into)",
        ),
        (
            {"capacity_reservation_ids": ODCR},
            f"{KEY}.capacity_reservation_ids: karpenter nodepool 'train': capacity_reservation_ids need capacity type "
            "'reserved' in capacity_types, or Karpenter launches nothing into them (reserved,on-demand falls back to "
            "On-Demand when they are full; reserved alone launches only into them)",
        ),
        (
            {"capacity_types": "reserved", "capacity_reservation_ids": f"{ODCR},{ODCR}"},
            f"{KEY}.capacity_reservation_ids: karpenter nodepool 'train': duplicate capacity reservation id '{ODCR}'",
        ),
        (
            {"capacity_types": "reserved", "capacity_reservation_ids": ",".join(f"cr-{n:017x}" for n in range(31))},
            f"{KEY}.capacity_reservation_ids: karpenter nodepool 'train': 31 capacity reservation ids (at most 30, the "
            "EC2NodeClass's capacityReservationSelectorTerms)",
        ),
    ],
)
def test_reservation_problems_name_the_key_and_the_fix(pool, message):
    assert pool_error(**pool) == message


def test_the_workload_lane_takes_no_reservation():
    with pytest.raises(ConfigError) as caught:
        parse_rack_config({"cluster_name": "c", "karpenter_capacity_types": "reserved,on-demand"})
    assert str(caught.value) == (
        "rack:karpenter_capacity_types: karpenter workload nodepool: invalid capacity type 'reserved' (the default "
        "lane takes on-demand or spot; reserved capacity is an additional pool's, with capacity_reservation_ids)"
    )


IDS = st.from_regex(r"cr-(?:[0-9a-f]{8}|[0-9a-f]{17})", fullmatch=True)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(IDS, min_size=1, max_size=30, unique=True),
    st.sampled_from(["reserved", "reserved,on-demand", "spot,reserved,on-demand"]),
)
def test_any_well_formed_reservations_become_one_id_term_each_in_order(ids, capacity_types):
    pool = PoolSpec(name="train", capacity_types=capacity_types.split(","), capacity_reservation_ids=ids)
    from mixed_os_racks.karpenter import node_class_spec

    spec = node_class_spec(pool, "c", "KarpenterNodeRole-c")
    assert spec["capacityReservationSelectorTerms"] == [{"id": i} for i in ids]


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=40))
def test_a_malformed_id_gets_one_line_naming_key_index_and_value(text):
    if syntax_ok(text):
        return
    message = pool_error(capacity_types="reserved", capacity_reservation_ids=[ODCR, text])
    assert "\n" not in message
    assert message.startswith(
        f"{KEY}.capacity_reservation_ids[1]: karpenter nodepool 'train': invalid capacity reservation id '"
    )  # the value, shown as the project shows any value (escaped if need be)
    assert "' (must look like cr-0123456789abcdef0)" in message


def syntax_ok(text: str) -> bool:
    import re

    return re.fullmatch(r"cr-(?:[0-9a-f]{8}|[0-9a-f]{17})", text) is not None


# ---- the chart's gate ---------------------------------------------------------------------------------------


def test_the_rack_writes_the_reserved_capacity_gate_on_at_its_default():
    values = chart_values("c", "c", 2, {}, [])
    assert values["settings"]["featureGates"] == {"reservedCapacity": True}
    for upstream_values in (reference("karpenter-v1.14.1", "chart-values.yaml"), FIXTURE_1_15):
        assert yaml.safe_load(upstream_values.read_text())["settings"]["featureGates"]["reservedCapacity"] is True


# ---- day 2 --------------------------------------------------------------------------------------------------


def test_reserving_capacity_for_one_pool_updates_its_two_objects_in_place_and_nothing_else(tmp_path):
    """Adding a reservation to a running pool: the engine's plan (as ``preview --state`` makes it, from the state
    the first ``up`` left) updates that pool's EC2NodeClass and NodePool and replaces, creates or deletes nothing."""
    from conftest import rack_config, run_rack
    from mixed_os_racks.offline.plan import make_plan
    from mixed_os_racks.offline.stackexport import read_stack_export, write_export

    train = {
        "name": "train",
        "instance_families": "p5",
        "instance_sizes": "48xlarge",
        "cpu_limit": 384,
        "memory_limit_gb": 4096,
        "dedicated": True,
    }
    batch = {"name": "batch", "instance_families": "c7i"}
    before = run_rack(rack_config(additional_karpenter_nodepools_config=[train, batch]))
    reserved = dict(train, capacity_types="reserved,on-demand", capacity_reservation_ids=BLOCK)
    after = run_rack(rack_config(additional_karpenter_nodepools_config=[batch, reserved]))  # list order does not matter
    state = write_export(before, tmp_path / "state.json")
    plan = make_plan(after, read_stack_export(state, "mixed-os-racks", "test"))
    moved = sorted((s.op, s.urn.rsplit("::", 1)[-1]) for s in plan.steps if s.op not in ("same", "read"))
    assert moved == [("update", "rack-train-nodeclass"), ("update", "rack-train-nodepool")]


# ---- the lanes output ---------------------------------------------------------------------------------------


def test_the_lanes_output_says_which_lane_launches_into_reservations():
    """``lanes`` names a reserved pool's reservations and its capacity types; another stack's ``lanes`` policy
    config takes the entry as it is (the pack does not read the ids)."""
    from conftest import rack_config, run_rack
    from mixed_os_racks.pack.laneconfig import lanes_config_problems

    train = {
        "name": "train",
        "instance_families": "p5",
        "instance_sizes": "48xlarge",
        "cpu_limit": 384,
        "memory_limit_gb": 4096,
        "capacity_types": "reserved",
        "capacity_reservation_ids": f"{BLOCK},{ODCR}",
    }
    lanes = run_rack(rack_config(additional_karpenter_nodepools_config=[train])).outputs["lanes"]
    assert lanes["train"]["capacityReservationIds"] == [BLOCK, ODCR]
    assert lanes["train"]["capacityTypes"] == ["reserved"]
    assert "capacityReservationIds" not in lanes["workload"]
    assert lanes_config_problems([{"name": name, **lane} for name, lane in lanes.items()]) == []


def test_a_reserved_pools_canary_launches_into_the_same_reservations():
    from mixed_os_racks.karpenter import canary_node_pool_spec, node_class_spec

    pool = PoolSpec(
        name="train",
        capacity_types=["reserved", "on-demand"],
        capacity_reservation_ids=[BLOCK],
        canary_ami_id="ami-0a1b2c3d4e5f60718",
    )
    canary_class = node_class_spec(pool.candidate(), "c", "KarpenterNodeRole-c", lane=pool.canary_name)
    assert canary_class["capacityReservationSelectorTerms"] == [{"id": BLOCK}]
    assert capacity_requirement({"spec": canary_node_pool_spec(pool)}) == ["reserved", "on-demand"]
