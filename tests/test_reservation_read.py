"""The rack reads each reserved lane's reservations, and its ``lanes`` output gives the nodes they hold
(``reservedNodes``): in a real ``pulumi up`` through the AWS provider, offline from the catalog's ``reservations:``.

Upstream facts pinned here:
- pulumi-aws 7.51.1 (the installed ``pulumi_aws/ec2/capacity_reservation.py``): ``CapacityReservation.get(name, id)``
  is a resource read (the engine's ReadResource, token ``aws:ec2/capacityReservation:CapacityReservation``) whose
  state has ``instance_count``, ``instance_type``, ``availability_zone``, ``end_date`` and ``end_date_type``. A read
  resource is not managed: the engine records it as external, and a read that leaves the program is discarded from
  the state, never deleted (nothing is cancelled in the account).
- terraform-provider-aws, which pulumi-aws bridges (``internal/service/ec2/ec2_capacity_reservation.go``,
  ``resourceCapacityReservationRead``, and ``findCapacityReservationByID`` in ``internal/service/ec2/find.go`` at
  084df2c): the Read calls EC2 ``DescribeCapacityReservations`` with ``CapacityReservationIds: [id]`` and sets
  ``instance_count`` from ``TotalInstanceCount``; it filters on no reservation type, so a Capacity Block's id reads
  the same way (``aws.ec2.CapacityBlockReservation`` is a resource that buys a block: its read goes through the same
  finder). An id EC2 does not know (``InvalidCapacityReservationId.NotFound``), or a reservation whose state is
  ``expired`` or ``cancelled``, is not found, and the engine fails the read: ``up`` fails naming the id.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import rack_config, run_rack
from mixed_os_racks.offline import ProgramRun

BLOCK = "cr-0a1b2c3d4e5f60718"  # the default catalog's Capacity Block: 2 x p5.48xlarge, 2026-12-14 .. 12-28
ODCR = "cr-0123456789abcdef0"  # the default catalog's ODCR: 1 x p5.48xlarge, no end
READ = "aws:ec2/capacityReservation:CapacityReservation"

TRAIN = {
    "name": "train",
    "instance_families": "p5",
    "instance_sizes": "48xlarge",
    "cpu_limit": 576,
    "memory_limit_gb": 6144,
    "dedicated": True,
    "capacity_types": "reserved,on-demand",
    "capacity_reservation_ids": f"{BLOCK},{ODCR}",
    "canary_ami_id": "ami-0a1b2c3d4e5f60718",
    "disk": 200,
}
SERVE = {"id": "serve", "type": "p5.48xlarge", "label": "serve", "capacity_reservation_id": ODCR}


def rack(pools: list[dict[str, Any]] = (), groups: list[dict[str, Any]] = ()) -> ProgramRun:  # type: ignore[assignment]
    return run_rack(
        rack_config(additional_karpenter_nodepools_config=list(pools), additional_node_groups_config=list(groups))
    )


def test_the_lanes_output_gives_each_reserved_lanes_node_count():
    """A pool on the block (2) and the ODCR (1) holds 3; a group on the ODCR 1; its canary and the unreserved lanes
    none (the canary's lane counts the reservations it shares)."""
    lanes = rack([TRAIN], [SERVE]).outputs["lanes"]
    assert lanes["train"]["reservedNodes"] == 3
    assert lanes["rack-ng-serve"]["reservedNodes"] == 1
    assert "reservedNodes" not in lanes["train-canary"]
    assert sorted(name for name, lane in lanes.items() if "reservedNodes" in lane) == ["rack-ng-serve", "train"]


def test_each_reservation_is_read_once_by_id_and_nothing_is_created():
    run = rack([TRAIN], [SERVE])
    assert sorted(r.name for r in run.reads if r.type == READ) == [f"rack-{ODCR}", f"rack-{BLOCK}"]
    assert not [r for r in run.resources if r.type == READ]  # read, not registered: nothing to create


@pytest.mark.parametrize("ids", [f"{BLOCK},cr-0fedcba9876543210", "cr-0fedcba9876543210"])
def test_a_reservation_the_catalog_lacks_fails_the_preview_naming_it_and_the_key(ids):
    with pytest.raises(Exception) as failed:
        rack([dict(TRAIN, capacity_reservation_ids=ids, cpu_limit=384)])
    said = str(failed.value)
    assert "reading EC2 Capacity Reservation (cr-0fedcba9876543210): couldn't find resource" in said
    assert "has no reservations.cr-0fedcba9876543210" in said and "reservations: {cr-" in said


def test_an_ended_reservation_is_not_found_as_ec2_expires_it(monkeypatch):
    monkeypatch.setenv("MIXED_OS_RACKS_NOW", "2026-12-29T00:00:00Z")  # the block ended on 12-28 11:30
    with pytest.raises(
        Exception,
        match=rf"reading EC2 Capacity Reservation \({BLOCK}\): couldn't find resource .*"
        rf"lists reservations.{BLOCK} as ended on 2026-12-28T11:30:00Z: EC2 expired it",
    ):
        rack([dict(TRAIN, capacity_reservation_ids=BLOCK, cpu_limit=384)])


def _steps(before: ProgramRun, after: ProgramRun, tmp_path) -> list[tuple[str, str]]:
    from mixed_os_racks.offline.plan import make_plan
    from mixed_os_racks.offline.stackexport import read_stack_export, write_export

    plan = make_plan(after, read_stack_export(write_export(before, tmp_path / "state.json"), "mixed-os-racks", "test"))
    return sorted((s.op, s.urn.rsplit("::", 1)[-1]) for s in plan.steps if s.urn.split("::")[-2].endswith(READ))


def test_day_2_a_reservation_is_read_never_created_or_deleted(tmp_path):
    """Added: a read; kept: a read again; removed: discarded from the state, nothing deleted in the account."""
    plain = rack([], [{k: v for k, v in SERVE.items() if k != "capacity_reservation_id"}])
    reserved = rack([], [SERVE])
    assert _steps(plain, reserved, tmp_path) == [("read", f"rack-{ODCR}")]
    assert _steps(reserved, reserved, tmp_path) == [("read", f"rack-{ODCR}")]
    assert _steps(reserved, plain, tmp_path) == [("discard", f"rack-{ODCR}")]


def test_another_languages_program_gets_the_count_through_the_component_provider(tmp_path):
    """A Rack built by the provider for a Node.js, Go or YAML program reads the reservation through the engine, as the
    Python path does, and the program gets ``reservedNodes`` in the schema's names."""
    from google.protobuf import json_format
    from provider_helpers import EngineSide, serve_provider

    spec = {
        "clusterName": "prod-rack",
        "pools": [
            {
                "name": "train",
                "instanceFamilies": ["p5"],
                "instanceSizes": ["48xlarge"],
                "cpuLimit": 384,
                "memoryLimitGb": 4096,
                "dedicated": True,
                "capacityTypes": ["reserved", "on-demand"],
                "capacityReservationIds": [BLOCK],
            }
        ],
    }
    for provider in serve_provider(tmp_path):
        engine = EngineSide()
        try:
            state = json_format.MessageToDict(
                provider.construct(engine, "rack:index:Rack", "rack", {"spec": spec}).state
            )
        finally:
            engine.close()
        assert state["lanes"]["train"]["reservedNodes"] == 2
