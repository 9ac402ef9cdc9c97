"""A reserved lane's worst case: which part of it is already paid (its reservations' instances, billed whether nodes
run on them or not), shown in the preview's printout and ``--json``, and counted by the budgets as the config says
(``lane-cost-ceiling``'s ``reserved``: ``include``, the default, or ``exclude``).

Facts relied on: EC2 bills an On-Demand Capacity Reservation for its instance count at the instance type's
On-Demand rate while it is active, whether instances run in it or not, and a Capacity Block is paid up front for its
duration (Amazon EC2 user guide, Capacity Reservation pricing and billing; Capacity Blocks for ML pricing). Karpenter
v1.14.1 launches a reserved node only of the reservation's instance type and counts it against the NodePool's limits
like any other (karpenter-provider-aws ``pkg/providers/instancetype/offering/reserved_capacity_resolver.go``), so a
lane whose limits hold its reservations (``capacity-reservation-fits``) has a worst case at least its reserved part.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mixed_os_racks.cli import main
from mixed_os_racks.cli.stackrun import catalog_config
from mixed_os_racks.offline import Catalog
from mixed_os_racks.offline.packprocess import PolicyPackProcess, pack_env
from mixed_os_racks.offline.policyconfig import PolicyPackError, parse_config
from mixed_os_racks.offline.records import ProgramRun
from mixed_os_racks.pack import reserved

from conftest import REPO
from policy_helpers import POLICIES, judge, messages, of
from test_reservation_checks import BLOCK, NOW, ODCR, SUBNET_A, SUBNET_B, account, created, reserved_program

CEILING = "lane-cost-ceiling"
P5 = 55.04  # p5.48xlarge, us-east-1, the table of aws/karpenter-provider-aws 1d927085
BLOCK_PAID = f"reserved: 2 nodes, $110.08 an hour already paid (2 x p5.48xlarge at $55.04, Capacity Block {BLOCK})"


@pytest.fixture(scope="module")
def pack():
    env = pack_env("mixed-os-racks", "test")
    env["MIXED_OS_RACKS_NOW"] = NOW  # the catalog's block runs from 12-14 to 12-28
    env["AWS_REGION"] = "us-east-1"  # a region the price table lists
    with PolicyPackProcess(POLICIES, env) as running:
        yield running


def ceiling(**props: object) -> dict:
    """``lane-cost-ceiling`` with the catalog's account (its reservations), and ``props``."""
    return {CEILING: {"reservations": account()[reserved.FITS]["reservations"], **props}}


# ---- through the pack: another program's reserved pool --------------------------------------------------------


def test_a_budget_counts_the_reserved_part_unless_told_to_exclude_it(pack):
    """A pool of p5.48xlarge under cpu 384 runs at most 2 of them, $110.08 an hour, and both are the block's: with
    the reserved part included (the default) a $50 budget refuses it, excluded it adds nothing to pay."""
    (over,) = messages(judge(pack, reserved_program(), ceiling(maxHourlyUsd=50)), CEILING)
    assert over.startswith(
        "karpenter nodepool 'train': its worst case, $110.08 an hour (2 x p5.48xlarge at $55.04, "
        "within limits.cpu 384), is over its budget of $50.00 an hour (maxHourlyUsd in the policy "
        "config, steady)"
    ), over
    assert messages(judge(pack, reserved_program(), ceiling(maxHourlyUsd=50, reserved="include")), CEILING) == [over]
    assert messages(judge(pack, reserved_program(), ceiling(maxHourlyUsd=50, reserved="exclude")), CEILING) == []


def test_an_excluded_reserved_part_is_named_and_the_fix_keeps_room_for_it(pack):
    """cpu 768: four p5.48xlarge, $220.16; less the block's two ($110.08, already paid) $110.08 over a $100 budget.
    The fix lowers the limit to three nodes ($165.12, of which $55.04 new), never below the reservation's two."""
    (over,) = messages(judge(pack, reserved_program(cpu="768"), ceiling(maxHourlyUsd=100, reserved="exclude")), CEILING)
    assert over.startswith(
        f"karpenter nodepool 'train': its worst case, $220.16 an hour (4 x p5.48xlarge at $55.04, within limits.cpu "
        f"768), less $110.08 an hour already paid (2 x p5.48xlarge at $55.04, Capacity Block {BLOCK}), is over its "
        f"budget of $100.00 an hour (maxHourlyUsd in the policy config, steady, reserved excluded); "
    ), over
    assert "for a worst case of $165.12 an hour" in over, over
    (tight,) = messages(judge(pack, reserved_program(cpu="768"), ceiling(maxHourlyUsd=1, reserved="exclude")), CEILING)
    assert "for a worst case of $110.08 an hour" in tight, tight  # the reserved two stay: they are paid for


def test_a_rack_budget_excludes_its_lanes_reserved_parts(pack):
    """The stack's total budget holds the lanes' sum less their reserved parts, when told."""
    both = ceiling(totalMaxHourlyUsd=60, reserved="exclude")
    assert messages(judge(pack, reserved_program(cpu="384"), both), CEILING) == []
    (over,) = messages(judge(pack, reserved_program(cpu="768"), both), CEILING)
    assert over.startswith(
        "the stack: its worst case, $110.08 an hour (the sum of its lanes: train $110.08), is over "
        "its budget of $60.00 an hour (totalMaxHourlyUsd in the policy config, steady, reserved "
        "excluded)"
    ), over


def test_a_reservation_not_yet_started_or_unknown_is_not_paid_for_now(pack):
    """Before the block starts (or with no facts of it) nothing is already paid: an excluding budget holds the whole."""
    unknown = ceiling(maxHourlyUsd=50, reserved="exclude")
    unknown[CEILING]["reservations"] = {}
    assert len(messages(judge(pack, reserved_program(), unknown), CEILING)) == 1
    env = pack_env("mixed-os-racks", "test")
    env["MIXED_OS_RACKS_NOW"] = "2026-12-07T12:00:00Z"
    with PolicyPackProcess(POLICIES, env) as early:
        assert (
            len(messages(judge(early, reserved_program(), ceiling(maxHourlyUsd=50, reserved="exclude")), CEILING)) == 1
        )


# ---- the config: reserved is include or exclude, and nothing else ----------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(
        st.text(max_size=8).filter(lambda t: t not in ("include", "exclude")),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False),
        st.none(),
        st.lists(st.sampled_from(["include", "exclude"]), max_size=2),
        st.sampled_from(["Include", "EXCLUDE", " include", "excluded", "all"]),
    )
)
def test_a_reserved_choice_that_is_not_include_or_exclude_is_refused_at_its_key(pack, value):
    with pytest.raises(PolicyPackError) as refused:
        pack.configure(parse_config({CEILING: {"reserved": value}}), ProgramRun("p", "s", [], {}))
    said = str(refused.value)
    assert said.startswith(f"invalid policy pack config for 'mixed-os-racks':\n  {CEILING}: reserved: "), said
    assert said.endswith(f"{CEILING}: reserved: {value!r} is not one of ['include', 'exclude']"), said  # one line


@pytest.mark.parametrize("value", ["include", "exclude"])
def test_include_and_exclude_are_taken(pack, value):
    pack.configure(parse_config({CEILING: {"reserved": value}}), ProgramRun("p", "s", [], {}))


# ---- the offline preview: the rack's reserved pool, by the catalog ------------------------------------------------


TRAIN = {
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


def preview(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool: dict, *args: str) -> tuple[int, dict]:
    monkeypatch.setenv("MIXED_OS_RACKS_NOW", NOW)
    stack, out = tmp_path / "Pulumi.reserved.yaml", tmp_path / "preview.json"
    stack.write_text(yaml.safe_dump({"config": created(f"{SUBNET_A},{SUBNET_B}", pool)}))
    code = main(["preview", "--config", str(stack), "--cwd", str(REPO), "--json", str(out), *args])
    return code, (json.loads(out.read_text()) if out.exists() else {})


def test_the_preview_says_which_lanes_are_reserved_and_what_is_already_paid(tmp_path, monkeypatch, capsys):
    code, doc = preview(tmp_path, monkeypatch, TRAIN, "--no-policy")
    out = capsys.readouterr().out
    assert code == 0
    (line,) = [row for row in out.splitlines() if row.lstrip().startswith("karpenter nodepool 'train' ")]
    assert (
        f"2 x p5.48xlarge at $55.04, within limits.cpu 384 and limits.memory 4096Gi; {BLOCK_PAID}; during a rollout"
        in line
    ), line
    lanes = {lane["name"]: lane for lane in doc["costs"]["lanes"]}
    assert lanes["train"]["reserved"] == {
        "capacityReservationIds": [BLOCK],
        "nodes": 2,
        "alreadyPaidHourlyUsd": 110.08,
        "notCounted": [],
    }
    assert lanes["train-canary"]["reserved"] is None  # its lane holds the block: counted once
    assert all(lanes[name]["reserved"] is None for name in lanes if not name.startswith("train"))
    assert doc["costs"]["budgetsCountReserved"] == "include"


def test_the_preview_counts_every_listed_reservation_and_fails_on_one_the_catalog_lacks(tmp_path, monkeypatch, capsys):
    code, doc = preview(
        tmp_path, monkeypatch, dict(TRAIN, capacity_reservation_ids=f"{BLOCK},{ODCR}", cpu_limit=576), "--no-policy"
    )
    assert code == 0
    (train,) = [lane for lane in doc["costs"]["lanes"] if lane["name"] == "train"]
    assert train["reserved"]["nodes"] == 3 and train["reserved"]["alreadyPaidHourlyUsd"] == round(3 * P5, 6)
    # the rack reads its reservations (``aws.ec2.CapacityReservation.get``): one the catalog lacks fails the preview
    (tmp_path / "preview.json").unlink()
    code, doc = preview(
        tmp_path, monkeypatch, dict(TRAIN, capacity_reservation_ids=f"{BLOCK},cr-0fedcba9876543210"), "--no-policy"
    )
    assert code == 2 and doc == {}
    err = capsys.readouterr().err
    assert "reading EC2 Capacity Reservation (cr-0fedcba9876543210): couldn't find resource" in err
    assert "has no reservations.cr-0fedcba9876543210" in err and "Traceback" not in err


def test_the_preview_holds_the_budget_as_the_pack_config_says(tmp_path, monkeypatch, capsys):
    """The train pool's $110.08 is all reserved: its $50 budget refuses it, unless the config excludes the reserved
    part; the printout says which."""
    pool = dict(TRAIN, max_hourly_usd=50)
    pool.pop("canary_ami_id")
    code, doc = preview(tmp_path, monkeypatch, pool)
    assert code == 1 and [v["message"] for v in of(doc["violations"], CEILING)]
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({CEILING: {"reserved": "exclude"}}))
    capsys.readouterr()
    code, doc = preview(tmp_path, monkeypatch, pool, "--policy-pack-config", str(config))
    out = capsys.readouterr().out
    assert code == 0 and not of(doc["violations"], CEILING), doc["violations"]
    assert "budget $50.00 (its max_hourly_usd, steady, reserved excluded)" in out
    assert doc["costs"]["budgetsCountReserved"] == "exclude"


def test_the_catalog_gives_the_ceiling_its_reservations():
    given = catalog_config(Catalog.load())
    assert given is not None and BLOCK in given[CEILING][1]["reservations"]


# ---- a reservation of a type the price table does not list ------------------------------------------------------


def hpc_program() -> None:
    """A pool that may launch p5.48xlarge or hpc7a.96xlarge (which the us-east-1 list does not price: not sold on demand
    there), and launches into an ODCR of hpc7a.96xlarge."""
    import pulumi_kubernetes as k8s

    k8s.apiextensions.CustomResource(
        "hpc-class",
        api_version="karpenter.k8s.aws/v1",
        kind="EC2NodeClass",
        metadata={"name": "hpc"},
        spec={
            "amiFamily": "AL2023",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole-c",
            "subnetSelectorTerms": [{"id": SUBNET_A}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
            "capacityReservationSelectorTerms": [{"id": ODCR}],
        },
    )
    k8s.apiextensions.CustomResource(
        "hpc-pool",
        api_version="karpenter.sh/v1",
        kind="NodePool",
        metadata={"name": "hpc"},
        spec={
            "limits": {"cpu": "384"},
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "hpc"},
                    "requirements": [
                        {
                            "key": "node.kubernetes.io/instance-type",
                            "operator": "In",
                            "values": ["p5.48xlarge", "hpc7a.96xlarge"],
                        },
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved", "on-demand"]},
                    ],
                }
            },
        },
    )


def test_a_reserved_type_the_table_does_not_price_leaves_the_worst_case_not_known(pack):
    """Karpenter offers a reservation's nodes even without an on-demand price for the type (the offering's price is
    then 0), so the pool launches hpc7a.96xlarge, which a worst case of priced types leaves out: not known, with what
    to give, until prices gives it; then the type is in the fill and its reserved part is counted."""
    hpc = {
        ODCR: {
            "instanceType": "hpc7a.96xlarge",
            "availabilityZone": "us-east-1a",
            "instanceCount": 1,
            "type": "default",
        }
    }
    found = judge(pack, hpc_program, {CEILING: {"maxHourlyUsd": 200, "reservations": hpc}})
    assert messages(found, CEILING) == []
    (advice,) = [v["message"] for v in of(found, CEILING) if v["level"] == "advisory"]
    assert (
        "it launches hpc7a.96xlarge into its reservations, which the us-east-1 list does not price (not sold on "
        "demand there): give its price under prices"
    ) in advice, advice
    priced = judge(
        pack,
        hpc_program,
        {
            CEILING: {
                "maxHourlyUsd": 60,
                "reservations": hpc,
                "reserved": "exclude",
                "prices": {"hpc7a.96xlarge": 100.0},
            }
        },
    )
    (over,) = messages(priced, CEILING)
    assert over.startswith(
        "karpenter nodepool 'hpc': its worst case, $200.00 an hour (2 x hpc7a.96xlarge at $100.00, "
    ), over
    assert f"less $100.00 an hour already paid (1 x hpc7a.96xlarge at $100.00, capacity reservation {ODCR})" in over, (
        over
    )


def test_a_node_group_on_a_capacity_block_shows_its_reserved_part(tmp_path, monkeypatch, capsys):
    """A managed node group on the catalog's block (max_size 2 of p5.48xlarge) has the same reserved part."""
    from conftest import rack_config
    from test_reserved_node_groups import block_group

    monkeypatch.setenv("MIXED_OS_RACKS_NOW", NOW)
    stack, out = tmp_path / "Pulumi.group.yaml", tmp_path / "preview.json"
    stack.write_text(yaml.safe_dump({"config": rack_config(additional_node_groups_config=[block_group()])}))
    assert main(["preview", "--config", str(stack), "--cwd", str(REPO), "--json", str(out), "--no-policy"]) == 0
    (group,) = [lane for lane in json.loads(out.read_text())["costs"]["lanes"] if lane["name"] == "rack-ng-train"]
    assert group["reserved"] == {
        "capacityReservationIds": [BLOCK],
        "nodes": 2,
        "alreadyPaidHourlyUsd": 110.08,
        "notCounted": [],
    }
    assert BLOCK_PAID in capsys.readouterr().out
