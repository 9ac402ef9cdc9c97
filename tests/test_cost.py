"""Worst case per lane and hour: the price table, the figures the preview prints and the lanes output carries,
and the budgets ``lane-cost-ceiling`` holds them to (also for NodePools other programs write)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mixed_os_racks import NodeGroupSpec, PoolSpec, parse_rack_config
from mixed_os_racks.cli import main
from mixed_os_racks.errors import ConfigError
from mixed_os_racks.offline import Catalog, run_program
from mixed_os_racks.offline.catalog import CatalogError
from mixed_os_racks.offline.packprocess import PolicyPackProcess, pack_env
from mixed_os_racks.offline.stackexport import export_run, write_export
from mixed_os_racks.facts import prices, wellknown
from mixed_os_racks.pack import bootfacts, cost
from mixed_os_racks.spec.base import SpecError

from conftest import REPO, rack_config, run_rack, stack_config
from policy_helpers import POLICIES, judge, messages, of, start_pack, unknown
from test_change_safety import _former_tokens
from test_hostile_runtime import project

GIB = 2**30


# ---- hand computations: the prod example -----------------------------------------------------------------

# From the table (aws/karpenter-provider-aws 1d927085, us-east-1), by hand (docs/cost.md says the same):
#   gpu pool (g5/g6, xlarge-4xlarge; cpu 64, memory 256 GiB, nvidia.com/gpu 4): every type it can launch has
#     one GPU, so at most 4 nodes; the dearest, g5.4xlarge ($1.624, 16 vCPUs, 64 GiB), four of them use
#     64 vCPUs (the cpu limit) and 4 x 60,620 MiB (Karpenter counts 64 GiB as 65,536 MiB less 7.5 %), under
#     256 GiB: 4 x 1.624 = 6.496.
#   workload pool (m6i/m7i/c7i; cpu 200, memory 800 GiB): the dearest vCPU is m7i.metal-24xl's (5.32224 / 96 =
#     0.05544; m7i's others 0.0504, c7i's at most 0.0491, m6i's 0.048); two of them take 192 vCPUs, a third
#     does not fit, and the 8 left are best spent on m7i.2xlarge (0.4032): 2 x 5.32224 + 0.4032 = 11.04768.
#     Memory: 2 x 355.2 + 29.6 GiB counted, under 800.
#   rack-ng-1 (g4dn.xlarge, max_size 3): 3 x 0.526 = 1.578.   rack-system (t3.large, 3): 3 x 0.0832 = 0.2496.
#   rack: 6.496 + 11.04768 + 1.578 + 0.2496 = 19.37128 for its lanes, and its EKS control plane: Kubernetes 1.34
#     is in EKS extended support from 2026-12-02 (the rack's calendar, upstream.EKS_VERSION_SUPPORT), $0.60 an hour
#     there (Amazon EKS pricing), $0.10 before: 19.97128 on 2026-12-07, 19.47128 on 2026-11-01.
# During a rollout (worstCaseRolloutHourlyUsd):
#   gpu: drift launches a replacement before the old node goes, and Karpenter does not count the old one against
#     the limits (kubernetes-sigs/karpenter pkg/controllers/disruption/helpers.go); the pool's disruption budget,
#     nodes 10% of 4 nodes rounded up (NodePool.GetAllowedDisruptionsByReason, roundUp), lets one drift at once:
#     6.496 + 1 x 1.624 (g5.4xlarge, its dearest type) = 8.12.
#   workload: 3 nodes, 10% -> 1 replacement of its dearest type within cpu 200, m7i.metal-48xl (192 vCPUs,
#     $9.6768): 11.04768 + 9.6768 = 20.72448.
#   node groups: EKS raises max and desired by the larger of twice the AZs (at most the group's 3 subnets) and
#     maxUnavailable (1 by default) (EKS user guide, Managed node update behavior): 3 + 6 nodes.
#     rack-ng-1: 9 x 0.526 = 4.734; rack-system: 9 x 0.0832 = 0.7488.
#   rack: 8.12 + 20.72448 + 4.734 + 0.7488 + 0.60 = 34.92728.
HAND = {"gpu": 6.496, "workload": 11.04768, "rack-ng-1": 1.578, "rack-system": 0.2496}
HAND_ROLLOUT = {"gpu": 8.12, "workload": 20.72448, "rack-ng-1": 4.734, "rack-system": 0.7488}
HAND_PRICES = {
    "g5.4xlarge": 1.624,
    "m7i.metal-24xl": 5.32224,
    "m7i.2xlarge": 0.4032,
    "g4dn.xlarge": 0.526,
    "t3.large": 0.0832,
}


def preview_json(tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    out = tmp_path / "preview.json"
    return main(["preview", *args, "--json", str(out)]), (json.loads(out.read_text()) if out.exists() else {}), str(out)


def test_prod_prints_each_lane_and_the_rack_as_computed_by_hand(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MIXED_OS_RACKS_NOW", "2026-12-07")  # Kubernetes 1.34 in EKS extended support
    assert {t: prices.for_region("us-east-1").of(t) for t in HAND_PRICES} == HAND_PRICES
    code, doc, _ = preview_json(tmp_path, "--stack", "prod", "--cwd", str(REPO))
    out = capsys.readouterr().out
    assert code == 0
    lanes = doc["outputs"]["lanes"]
    assert {name: lane["worstCaseHourlyUsd"] for name, lane in lanes.items()} == HAND
    assert {name: lane["worstCaseRolloutHourlyUsd"] for name, lane in lanes.items()} == HAND_ROLLOUT
    assert doc["outputs"]["worstCaseHourlyUsd"] == 19.97128  # the lanes' 19.37128 and the control plane's 0.60
    costs = doc["costs"]
    assert {lane["name"]: lane["worstCaseHourlyUsd"] for lane in costs["lanes"]} == HAND
    assert {lane["name"]: lane["worstCaseRolloutHourlyUsd"] for lane in costs["lanes"]} == HAND_ROLLOUT
    assert costs["racks"] == [
        {
            "name": "rack",
            "urn": costs["racks"][0]["urn"],
            "worstCaseHourlyUsd": 19.97128,
            "worstCaseRolloutHourlyUsd": 34.92728,
            "controlPlaneHourlyUsd": 0.6,
            "controlPlanePrice": "EKS extended support",
            "maxHourlyUsd": 25,
        }
    ]
    printed = out[out.index("Worst case per hour") : out.index("Resources:")]
    assert "on-demand prices of us-east-1, aws/karpenter-provider-aws 1d927085 (2026-08-21)" in printed
    for subject, figure, detail in (
        (
            "karpenter nodepool 'gpu'",
            "$6.496",
            "4 x g5.4xlarge at $1.624, within limits.cpu 64 and limits.nvidia.com/gpu 4; "
            "during a rollout $8.12 (4 nodes + 1 drift replacement of g5.4xlarge at $1.624, within disruption budget "
            "nodes 10%)",
        ),
        (
            "karpenter workload nodepool",
            "$11.04768",
            "2 x m7i.metal-24xl at $5.32224 + 1 x m7i.2xlarge at $0.4032, within limits.cpu 200",
        ),
        (
            "node group 'rack-ng-1'",
            "$1.578",
            "3 x g4dn.xlarge at $0.526, within max_size 3; during a rollout $4.734 "
            "(max_size 3 + 6 x g4dn.xlarge at $0.526: EKS surges by the larger of twice its Availability Zones (3 "
            "subnets) "
            "and maxUnavailable 1)",
        ),
        ("node group 'rack-system'", "$0.2496", "3 x t3.large at $0.0832, within max_size 3"),
        (
            "rack 'rack'",
            "$19.97128",
            "the sum of its 4 lanes and its EKS control plane at $0.60 (EKS extended support); "
            "during a rollout $34.92728; budget $25.00 (its max_hourly_usd, steady)",
        ),
    ):
        assert any(
            line.split()[: len(subject.split())] == subject.split() and figure in line and detail in line
            for line in printed.splitlines()
        ), (subject, printed)
    # the lanes are printed beside the outputs, before the resource count
    assert out.index("Outputs:") < out.index("Worst case per hour") < out.index("Resources:")


def test_the_plan_against_the_stacks_state_prints_them_too(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MIXED_OS_RACKS_NOW", "2026-11-01")  # Kubernetes 1.34 in EKS standard support: $0.10
    run = run_program(REPO, stack_config("prod"), project="mixed-os-racks", stack="prod")
    state = write_export(run, tmp_path / "prod.json")
    code, doc, _ = preview_json(tmp_path, "--stack", "prod", "--cwd", str(REPO), "--state", str(state), "--no-policy")
    out = capsys.readouterr().out
    assert code == 0 and doc["costs"]["totalHourlyUsd"] == 19.47128
    assert "Worst case per hour (on-demand prices of us-east-1" in out
    assert any(
        line.split()[:2] == ["rack", "'rack'"]
        and "$19.47128" in line
        and "EKS control plane at $0.10 (EKS standard support)" in line
        for line in out.splitlines()
    )
    # the sections come in the plain preview's order: the lanes' worst cases, then the resources' summary, each
    # after a blank line
    assert main(["preview", "--stack", "prod", "--cwd", str(REPO), "--no-policy"]) == 0
    plain = capsys.readouterr().out

    def sections(text: str) -> list[str]:
        lines = text.splitlines()
        return [
            line
            for n, line in enumerate(lines)
            if line.endswith(":") and not line.startswith(" ") and n and not lines[n - 1]
        ]

    assert (
        [h for h in sections(plain) if h != "Outputs:"]
        == [h for h in sections(out)]
        == [
            "Worst case per hour (on-demand prices of us-east-1, aws/karpenter-provider-aws 1d927085 (2026-08-21)):",
            "Resources:",
        ]
    )


def test_a_gpu_pool_over_its_budget_is_refused_naming_the_lane_both_figures_and_the_limit(tmp_path, capsys):
    config = stack_config("prod")
    pools = config["rack:additional_karpenter_nodepools_config"]
    pools[0]["max_hourly_usd"] = 5
    stack = tmp_path / "Pulumi.budget.yaml"
    stack.write_text(yaml.safe_dump({"config": config}))
    code, doc, _ = preview_json(tmp_path, "--config", str(stack), "--cwd", str(REPO))
    assert code == 1
    (found,) = [v for v in doc["violations"] if v["policy"] == "lane-cost-ceiling"]
    assert found["level"] == "mandatory" and found["urn"].endswith("::rack-gpu-nodepool")
    assert found["message"] == (
        "karpenter nodepool 'gpu': its worst case, $6.496 an hour (4 x g5.4xlarge at $1.624, within limits.cpu 64 and "
        "limits.nvidia.com/gpu 4), is over its budget of $5.00 an hour (its max_hourly_usd, steady); lower "
        "limits.nvidia.com/gpu: "
        "4 -> 3 (the pool's gpu_limit), for a worst case of $4.872 an hour"
    )
    assert "lane-cost-ceiling" in capsys.readouterr().out
    pools[0]["max_hourly_usd"] = 7  # raised: passes
    stack.write_text(yaml.safe_dump({"config": config}))
    code, doc, _ = preview_json(tmp_path, "--config", str(stack), "--cwd", str(REPO))
    assert code == 0 and not of(doc["violations"], "lane-cost-ceiling")


def test_a_state_written_before_the_components_moved_keeps_its_budgets(tmp_path, capsys):
    """``analyze --state`` of a stack exported before the components moved to the provider's ``index`` module: a
    pool's budget is still its component's (registered as ``rack:karpenter:KarpenterPool``), and is held."""
    config = stack_config("prod")
    config["rack:additional_karpenter_nodepools_config"][0]["max_hourly_usd"] = 5
    run = run_program(REPO, config, project="mixed-os-racks", stack="prod")
    export = export_run(run)
    for res in export["deployment"]["resources"]:  # the engine keeps a component's registered outputs as its outputs
        if res["type"] == "rack:index:KarpenterPool":
            res["outputs"] = {k: v for k, v in run.component_outputs[res["urn"]].items() if k == "maxHourlyUsd"}
    export = _former_tokens(export)
    assert {"outputs": {"maxHourlyUsd": 5}, "type": "rack:karpenter:KarpenterPool"}.items() <= next(
        r for r in export["deployment"]["resources"] if r["urn"].endswith("::rack-gpu")
    ).items()
    state, out = tmp_path / "before.json", tmp_path / "analyzed.json"
    state.write_text(json.dumps(export))
    code = main(["analyze", "--state", str(state), "--cwd", str(REPO), "--json", str(out)])
    capsys.readouterr()
    (found,) = of(json.loads(out.read_text())["violations"], "lane-cost-ceiling")
    assert code == 1 and found["message"].startswith(
        "karpenter nodepool 'gpu': its worst case, $6.496 an hour (4 x g5.4xlarge at $1.624, within limits.cpu 64 and "
        "limits.nvidia.com/gpu 4), is over its budget of $5.00 an hour (its max_hourly_usd, steady)"
    )


def test_the_rack_budget_names_the_dearest_lane_and_its_limit(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MIXED_OS_RACKS_NOW", "2026-12-07")  # the control plane at $0.60 (extended support)
    config = {**stack_config("prod"), "rack:max_hourly_usd": 15}
    stack = tmp_path / "Pulumi.budget.yaml"
    stack.write_text(yaml.safe_dump({"config": config}))
    code, doc, _ = preview_json(tmp_path, "--config", str(stack), "--cwd", str(REPO))
    capsys.readouterr()
    assert code == 1
    (found,) = of(doc["violations"], "lane-cost-ceiling")
    assert found["urn"].endswith("rack:index:Rack::rack")
    # 15 - (19.97128 - 11.04768) = 6.0764 is left for the workload pool (the control plane's $0.60 counted): 110 vCPUs,
    # one m7i.metal-24xl (96, $5.32224) and m7i.2xlarge + xlarge + large (14, $0.4032 + 0.2016 + 0.1008) = $6.02784
    assert found["message"] == (
        "rack 'rack': its worst case, $19.97128 an hour (the sum of its lanes: workload $11.04768, gpu $6.496, "
        "rack-ng-1 "
        "$1.578, rack-system $0.2496, and the EKS control plane $0.60 (EKS extended support)), is over its budget of "
        "$15.00 "
        "an hour (its max_hourly_usd, steady); on karpenter workload nodepool, lower limits.cpu: 200 -> 110 (the "
        "pool's "
        "cpu_limit), for a worst case of $6.02784 an hour"
    )


def test_the_offline_catalog_prices_the_program_the_printout_and_the_pack(tmp_path, capsys, monkeypatch):
    # the control plane at $0.10 (1.34 in standard support): the rack's 25.47128 - 0.5 = 24.97128 holds its $25 budget
    monkeypatch.setenv("MIXED_OS_RACKS_NOW", "2026-11-01")
    catalog = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    catalog["prices"] = {"g5.4xlarge": 3.0}  # dearer than the table's 1.624: the gpu pool's 4 nodes cost $12
    amis = tmp_path / "amis.yaml"
    amis.write_text(yaml.safe_dump(catalog))
    code, doc, _ = preview_json(tmp_path, "--stack", "prod", "--cwd", str(REPO), "--amis", str(amis))
    out = capsys.readouterr().out
    assert code == 1
    assert doc["outputs"]["lanes"]["gpu"]["worstCaseHourlyUsd"] == 12.0
    assert "4 x g5.4xlarge at $3.00" in out and "1 overridden" in out
    (found,) = of(doc["violations"], "lane-cost-ceiling")
    assert found["message"].startswith(
        "karpenter nodepool 'gpu': its worst case, $12.00 an hour (4 x g5.4xlarge at $3.00"
    )


@pytest.mark.parametrize(
    "prices_entry, problem",
    [
        (
            {"g5.4xlarge": -1},
            "prices.g5.4xlarge: expected a finite number of US dollars an hour, zero or more, got -1.0",
        ),
        ({"g5.4xlarge": True}, "prices.g5.4xlarge: expected a number of US dollars an hour, got a boolean True"),
        ({"g5.4xlarge": "1.5"}, "prices.g5.4xlarge: expected a number of US dollars an hour, got text '1.5'"),
        ({"not a type": 1.0}, "prices.not a type: 'not a type' is not an instance type (must look like g5.xlarge)"),
        (
            {"g5.4xlarge": float("inf")},
            "prices.g5.4xlarge: expected a finite number of US dollars an hour, zero or more, got inf",
        ),
    ],
)
def test_catalog_prices_are_checked(prices_entry, problem):
    with pytest.raises(CatalogError) as caught:
        Catalog.from_doc({"prices": prices_entry}, "amis.yaml")
    assert str(caught.value) == f"AMI catalog amis.yaml: {problem}"


# ---- the rack's specs: budgets and the GPU limit ---------------------------------------------------------


def test_a_gpu_limit_reaches_the_node_pool_and_is_refused_where_it_means_nothing():
    pool = PoolSpec(name="ml", instance_families=["g6"], gpu_limit=8, max_hourly_usd=12.5)
    run = run_rack(
        rack_config(
            additional_karpenter_nodepools_config=[
                {"name": "ml", "instance_families": "g6", "gpu_limit": 8, "max_hourly_usd": 12.5}
            ]
        )
    )
    (node_pool,) = [
        r for r in run.resources if r.type == "kubernetes:karpenter.sh/v1:NodePool" and r.name == "rack-ml-nodepool"
    ]
    assert node_pool.inputs["spec"]["limits"] == {"cpu": "100", "memory": "400Gi", "nvidia.com/gpu": "8"}
    (component,) = [r for r in run.resources if r.type == "rack:index:KarpenterPool" and r.name == "rack-ml"]
    assert run.component_outputs[component.urn]["maxHourlyUsd"] == 12.5 == pool.max_hourly_usd
    amd = PoolSpec(name="amd", instance_families=["g4ad"], gpu_limit=2)
    assert amd.gpu_resource == "amd.com/gpu"
    with pytest.raises(SpecError, match="gpu_limit needs a GPU pool"):
        PoolSpec(name="cpu", instance_families=["m7i"], gpu_limit=8)
    with pytest.raises(SpecError, match="gpu_limit needs a GPU pool"):
        PoolSpec(name="any", gpu_limit=8)
    with pytest.raises(SpecError, match="gpu_limit must be positive"):
        PoolSpec(name="ml", instance_families=["g6"], gpu_limit=0)
    with pytest.raises(
        SpecError,
        match=r"PoolSpec.gpu_limit: .*gpu_limit 4\) hold none of its instance types: the smallest, "
        r"p5.48xlarge, has 192 vCPUs, 2048 GiB and 8 GPUs",
    ):
        PoolSpec(name="big", instance_types=["p5.48xlarge"], cpu_limit=192, memory_limit_gb=2048, gpu_limit=4)


BAD_BUDGETS = st.one_of(
    st.floats(max_value=0),
    st.just(math.inf),
    st.just(math.nan),
    st.booleans(),
    st.text(alphabet="abc-", min_size=1, max_size=5),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=60)
@given(st.one_of(st.floats(min_value=1e-6, max_value=1e12), st.integers(min_value=1, max_value=10**9)))
def test_any_positive_budget_is_taken(budget):
    assert PoolSpec(name="p", max_hourly_usd=budget).max_hourly_usd == float(budget)
    assert NodeGroupSpec(instance_type="m7i.large", max_hourly_usd=budget).max_hourly_usd == float(budget)


@settings(max_examples=60)
@given(BAD_BUDGETS)
def test_a_budget_that_is_no_positive_number_is_refused_at_its_key(budget):
    for key, values in (
        ("rack:max_hourly_usd", {"max_hourly_usd": budget}),
        ("rack:karpenter_max_hourly_usd", {"karpenter_max_hourly_usd": budget}),
        (
            "rack:additional_karpenter_nodepools_config[0].max_hourly_usd",
            {"additional_karpenter_nodepools_config": [{"name": "ml", "max_hourly_usd": budget}]},
        ),
        (
            "rack:additional_node_groups_config[0].max_hourly_usd",
            {"additional_node_groups_config": [{"type": "m7i.large", "max_hourly_usd": budget}]},
        ),
    ):
        with pytest.raises(ConfigError) as caught:
            parse_rack_config({"cluster_name": "c", **values})
        message = str(caught.value)
        assert message.startswith(f"{key}: "), (key, message)
        assert message.count("max_hourly_usd") == 1, message  # the key path names the key; the message does not again


@pytest.mark.parametrize(
    "values, message",
    [
        (
            {"max_hourly_usd": -1},
            "rack:max_hourly_usd: the rack's budget must be a positive number of US dollars an hour (got '-1')",
        ),
        (
            {"karpenter_max_hourly_usd": 0},
            "rack:karpenter_max_hourly_usd: karpenter workload nodepool: its budget must be a "
            "positive number of US dollars an hour (got '0')",
        ),
        (
            {"additional_karpenter_nodepools_config": [{"name": "ml", "max_hourly_usd": "inf"}]},
            "rack:additional_karpenter_nodepools_config[0].max_hourly_usd: karpenter nodepool 'ml': its budget must be "
            "a "
            "positive number of US dollars an hour (got 'inf')",
        ),
        (
            {"additional_node_groups_config": [{"type": "m7i.large", "max_hourly_usd": -2.5}]},
            "rack:additional_node_groups_config[0].max_hourly_usd: node group 'rack-ng-0': its budget must be a "
            "positive "
            "number of US dollars an hour (got '-2.5')",
        ),
    ],
)
def test_every_budget_error_reads_alike_and_names_its_key_once(values, message):
    with pytest.raises(ConfigError) as caught:
        parse_rack_config({"cluster_name": "c", **values})
    assert str(caught.value) == message


@pytest.mark.parametrize("items", ["additional_karpenter_nodepools_config", "additional_node_groups_config"])
def test_a_null_budget_in_a_pool_or_node_group_is_no_budget_as_for_its_other_optional_keys(items):
    """Inside a list item the value is JSON, so null is null, not the text 'null': an optional key given null is
    unset (as ami_id or disk), so the lane has no budget of its own; at the top level null is refused."""
    item = {"name": "ml"} if items.startswith("additional_karpenter") else {"type": "m7i.large"}
    spec = parse_rack_config({"cluster_name": "c", items: [{**item, "max_hourly_usd": None, "ami_id": None}]})
    (lane,) = (
        spec.node_groups if items == "additional_node_groups_config" else [p for p in spec.pools if p.name == "ml"]
    )
    assert lane.max_hourly_usd is None and lane.ami_id is None
    with pytest.raises(ConfigError, match=r"^rack:max_hourly_usd: null \(no value\)"):
        parse_rack_config({"cluster_name": "c", "max_hourly_usd": None})


def test_a_budget_in_stack_config_text_is_read_as_a_number():
    spec = parse_rack_config(
        {
            "cluster_name": "c",
            "max_hourly_usd": "40.5",
            "additional_node_groups_config": json.dumps([{"type": "g4dn.xlarge", "max_hourly_usd": 2}]),
        }
    )
    assert spec.max_hourly_usd == 40.5 and spec.node_groups[0].max_hourly_usd == 2


# ---- other programs' lanes, through the pack over gRPC ----------------------------------------------------


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:
        yield running


_names = itertools.count()


def gpu_node_pool(
    name: str, limits=None, families=("p5",), replicas=None, taint=True
) -> k8s.apiextensions.CustomResource:
    spec: dict = {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": list(families)}
                ],
            }
        }
    }
    if taint:
        spec["template"]["spec"]["taints"] = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    if limits is not None:
        spec["limits"] = limits
    if replicas is not None:
        spec["replicas"] = replicas
    return k8s.apiextensions.CustomResource(
        f"{name}-{next(_names)}", api_version="karpenter.sh/v1", kind="NodePool", metadata={"name": name}, spec=spec
    )


def test_a_node_pool_another_program_writes_is_held_to_the_policy_configs_budget(pack):
    program = lambda: gpu_node_pool("train", {"nvidia.com/gpu": 64})  # noqa: E731
    found = messages(judge(pack, program, {"lane-cost-ceiling": {"budgets": {"train": 100}}}), "lane-cost-ceiling")
    # p5.48xlarge: 8 GPUs at $55.04; 64 GPUs buy 8 of them. $100 buys one (8 GPUs) and six p5.4xlarge (1 GPU, $6.88)
    assert found == [
        "karpenter nodepool 'train': its worst case, $440.32 an hour (8 x p5.48xlarge at $55.04, within "
        "limits.nvidia.com/gpu "
        "64), is over its budget of $100.00 an hour (budgets.train in the policy config, steady); lower "
        "limits.nvidia.com/gpu: "
        "64 -> 14, for a worst case of $96.32 an hour (us-east-1 prices: the stack names no aws:region)"
    ]
    assert (
        messages(judge(pack, program, {"lane-cost-ceiling": {"maxHourlyUsd": 100}}), "lane-cost-ceiling")[0].count(
            "(maxHourlyUsd in the policy config, steady)"
        )
        == 1
    )
    assert not of(judge(pack, program, {"lane-cost-ceiling": {"maxHourlyUsd": 440.32}}), "lane-cost-ceiling")
    assert not of(judge(pack, program, {}), "lane-cost-ceiling")  # no budget, nothing to hold it to


def test_a_gpu_pool_without_limits_gets_the_advisory(pack):
    found = judge(pack, lambda: gpu_node_pool("open"), {})
    assert messages(found, "lane-cost-unbounded", "advisory") == [
        "karpenter nodepool 'open': a GPU lane with no bound on what it costs an hour (it has no limits on cpu, "
        "memory, "
        "GPUs or nodes); set limits.nvidia.com/gpu (or cpu, memory, nodes) on it"
    ]
    # bounded, or no GPU lane: no advisory
    assert not of(judge(pack, lambda: gpu_node_pool("held", {"nvidia.com/gpu": 8}), {}), "lane-cost-unbounded")
    assert not of(judge(pack, lambda: gpu_node_pool("cpu", families=("m7i",), taint=False), {}), "lane-cost-unbounded")
    # a budget on an unbounded lane: refused, with a limit to set
    over = messages(
        judge(pack, lambda: gpu_node_pool("open"), {"lane-cost-ceiling": {"maxHourlyUsd": 60}}), "lane-cost-ceiling"
    )
    assert over == [
        "karpenter nodepool 'open': its worst case, unbounded (it has no limits on cpu, memory, GPUs or nodes), "
        "is over its budget of $60.00 an hour (maxHourlyUsd in the policy config, steady); set limits.nvidia.com/gpu: "
        "8, "
        "for a worst case of $55.04 an hour (us-east-1 prices: the stack names no aws:region)"
    ]


def test_a_node_group_another_program_writes_is_held_to_max_size_times_its_dearest_type(pack):
    def program():
        aws.eks.NodeGroup(
            "infer",
            cluster_name="c",
            node_role_arn="arn:aws:iam::123456789012:role/n",
            subnet_ids=["s"],
            instance_types=["g5.xlarge", "g6.xlarge"],
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=1, min_size=1, max_size=10),
        )

    found = messages(judge(pack, program, {"lane-cost-ceiling": {"budgets": {"infer": 5}}}), "lane-cost-ceiling")
    assert found == [
        "node group 'infer': its worst case, $10.06 an hour (10 x g5.xlarge at $1.006, within max_size 10), is "
        "over its budget of $5.00 an hour (budgets.infer in the policy config, steady); lower max_size: 10 -> 4, for a "
        "worst case of $4.024 an hour (us-east-1 prices: the stack names no aws:region)"
    ]


def test_the_stack_total_and_the_stacks_region(tmp_path):
    """The pack prices in the stack's aws:region (handed to it as the CLI hands it), with us-east-1's list for a
    region the table lacks; totalMaxHourlyUsd holds every lane together."""

    def program():
        gpu_node_pool("a", {"nvidia.com/gpu": 8})
        gpu_node_pool("b", {"nvidia.com/gpu": 8})

    with PolicyPackProcess(POLICIES, pack_env("p", "test", {"aws:region": "eu-west-1"})) as pack:
        run = run_program(program, {"aws:region": "eu-west-1"}, stack="test")
        found = messages(judge(pack, run, {"lane-cost-ceiling": {"totalMaxHourlyUsd": 100}}), "lane-cost-ceiling")
    assert found == [
        "the stack: its worst case, $110.08 an hour (the sum of its lanes: a $55.04, b $55.04), is over its "
        "budget of $100.00 an hour (totalMaxHourlyUsd in the policy config, steady); on karpenter nodepool 'a', lower "
        "limits.nvidia.com/gpu: 8 -> 6, for a worst case of $41.28 an hour (us-east-1 prices: the table has "
        "none for eu-west-1)"
    ]


def test_a_static_pool_costs_its_replicas_and_unknown_values_are_not_guessed(pack):
    found = messages(
        judge(
            pack,
            lambda: gpu_node_pool("static", {"nodes": 2}, ("g6e",), replicas=1),
            {"lane-cost-ceiling": {"maxHourlyUsd": 1}},
        ),
        "lane-cost-ceiling",
    )
    assert len(found) == 1 and "1 x g6e.48xlarge at $30.13118, within replicas 1" in found[0], found
    assert "lower replicas: 1 -> 0" in found[0]
    uncertain = judge(
        pack,
        lambda: gpu_node_pool("later", {"nvidia.com/gpu": unknown("8")}),
        {"lane-cost-ceiling": {"maxHourlyUsd": 1}},
    )
    assert not messages(uncertain, "lane-cost-ceiling") and messages(uncertain, "lane-cost-ceiling", "advisory")


def test_a_limit_past_any_number_of_nodes_is_lowered_not_set(pack):
    found = judge(
        pack,
        lambda: gpu_node_pool("wide", {"cpu": "1e400"}, families=("m7i",), taint=False),
        {"lane-cost-ceiling": {"maxHourlyUsd": 10}},
    )
    (over,) = messages(found, "lane-cost-ceiling")
    assert over.startswith(
        "karpenter nodepool 'wide': its worst case, unbounded (limits.cpu 1e400 is past any number of "
        "nodes, so it bounds nothing), is over its budget of $10.00 an hour"
    ), over
    assert "; lower limits.cpu: 1e400 -> " in over, over


@pytest.mark.parametrize(
    "limits, worst",
    [
        ({"cpu": "1e400"}, "unbounded (limits.cpu 1e400 is past any number of nodes, so it bounds nothing)"),
        ({"cpu": "-5"}, None),
        ({"cpu": -4}, None),
        ({"nodes": "-1"}, None),
        ({"cpu": "abc"}, None),
        ({"nodes": "1e308"}, "unbounded (limits.nodes 1e+308 holds only between scheduling passes"),
        ({"nvidia.com/gpu": "1e308"}, "unbounded (limits.nvidia.com/gpu 1e+308 at these prices is more dollars"),
        ({"memory": [1, 2]}, None),
        ("nope", None),
        ({"cpu": 1e300}, None),
        ({"aws.amazon.com/neuron": 4}, "unbounded (it has no limits on cpu, memory, GPUs or nodes)"),
        ({"cpu": "1e300"}, "$4.3e+299 an hour (6.25e+298 x p5.4xlarge at $6.88, within limits.cpu 1e+300)"),
        # apimachinery keeps an exponent's low 32 bits: 1e4294967297 GPUs are 10
        (
            {"nvidia.com/gpu": "1e4294967297"},
            "$68.80 an hour (10 x p5.4xlarge at $6.88, within limits.nvidia.com/gpu 10)",
        ),
        ({"nodes": 0}, None),
        ({"nvidia.com/gpu": "0"}, None),
    ],
)
def test_hostile_limits_are_judged(pack, limits, worst):
    """A limit past any number of nodes bounds nothing, and says so; a worst case past what a float holds is
    unbounded; a limit past any budget is judged with its figure written short; a limit Kubernetes refuses (the
    NodePool is never created), and a zero or negative one (every node is over it), launch nothing."""
    found = judge(pack, lambda: gpu_node_pool("odd", limits), {"lane-cost-ceiling": {"maxHourlyUsd": 10}})
    over = messages(found, "lane-cost-ceiling")
    if worst is None:
        assert not over and not of(found, "lane-cost-unbounded")
        return
    assert len(over) == 1 and over[0].startswith(f"karpenter nodepool 'odd': its worst case, {worst}"), over
    assert len(over[0]) < 600 and "inf" not in over[0].replace("in", "").lower() and "nan" not in over[0].lower()
    assert bool(of(found, "lane-cost-unbounded")) == worst.startswith("unbounded")


QUANTITY_TEXT = st.one_of(
    st.text(alphabet="0123456789.+-eEKMGTPinumk ", max_size=10),
    st.from_regex(
        r"[+-]?[0-9]{1,3}(\.[0-9]{0,2})?([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,20}(\.[0-9]?)?)?", fullmatch=True
    ),
)
LIMIT_VALUES = st.one_of(
    QUANTITY_TEXT,
    st.text(max_size=6),
    st.floats(),
    st.integers(),
    st.integers(min_value=10**300),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
)
LIMITS = st.one_of(
    st.dictionaries(st.sampled_from(["cpu", "memory", "nodes", "nvidia.com/gpu", "pods"]), LIMIT_VALUES, max_size=3),
    LIMIT_VALUES,
)


def _unquoted(text: str) -> str:
    """``text`` without the values it quotes as written (a user's own 'Infinity' may be named)."""
    return "".join(text.split("'")[::2])


@settings(max_examples=300)
@given(LIMITS)
def test_any_limits_give_a_figure_or_a_reason_and_never_inf_or_nan(limits):
    """Whatever a NodePool's limits hold: a finite figure of zero or more (zero and unbounded say why), or
    unbounded; nothing raises, and no figure or reason says inf or nan."""
    usd_prices = prices.for_region("us-east-1")
    amounts, refused, written = bootfacts.node_pool_limits(limits)
    worst = (
        cost.WorstCase(0.0, usd_prices, why=f"it {refused}")
        if refused
        else cost.pool(
            [wellknown.Requirement("karpenter.k8s.aws/instance-family", "In", ("p5", "g6"))],
            amounts,
            usd_prices,
            None,
            written,
        )
    )
    assert worst.usd is None or (math.isfinite(worst.usd) and worst.usd >= 0)
    assert worst.unbounded == (worst.usd is None)
    if not worst.usd:
        assert worst.why, worst
    said = _unquoted(worst.words()).lower()
    assert "nan" not in said and not any(w in said for w in (" inf", "inf ", "-inf", "inf)", "infinity")), worst.words()
    assert worst.words().isascii() and "\n" not in worst.words()


# ---- the search ------------------------------------------------------------------------------------------


def brute_force(items, limits):
    best = 0.0
    ranges = [range(0, int(min(limits[d] // c[d] for d in range(len(limits)) if c[d] > 0)) + 1) for _, c in items]
    for counts in itertools.product(*ranges):
        if all(sum(k * c[d] for k, (_, c) in zip(counts, items)) <= limits[d] + 1e-9 for d in range(len(limits))):
            best = max(best, sum(k * p for k, (p, _) in zip(counts, items)))
    return best


ITEMS = st.lists(
    st.tuples(
        st.integers(1, 500).map(lambda c: c / 100), st.tuples(st.integers(1, 12), st.integers(0, 8), st.just(1))
    ).map(lambda t: (t[0], tuple(map(float, t[1])))),
    min_size=1,
    max_size=4,
)


@settings(max_examples=150)
@given(ITEMS, st.tuples(st.integers(12, 40), st.integers(8, 20), st.integers(1, 12)))
def test_the_search_finds_the_dearest_fill(items, limits):
    """Against every combination: the search's cost is the most whole nodes within every limit can cost."""
    limits = tuple(map(float, limits))
    cost_found, counts, exact = cost.dearest(tuple(items), limits)
    assert exact
    assert all(sum(k * c[d] for k, (_, c) in zip(counts, items)) <= limits[d] for d in range(3))
    assert math.isclose(cost_found, sum(k * p for k, (p, _) in zip(counts, items)))
    assert math.isclose(cost_found, brute_force(items, limits), abs_tol=1e-9)


def test_a_search_too_large_gives_the_fractional_bound_and_says_at_most():
    anything = [wellknown.Requirement("kubernetes.io/arch", "Exists", ())]
    worst = cost.pool(anything, {"cpu": 1000, "memory": 4000 * GIB}, prices.for_region("us-east-1"))
    assert not worst.exact and worst.words().startswith("at most $")
    assert "filled as if nodes could be split" in worst.words()


@settings(max_examples=80)
@given(ITEMS, st.tuples(st.integers(12, 40), st.integers(8, 20), st.integers(1, 12)))
def test_past_its_steps_the_search_gives_a_bound_no_fill_exceeds(items, limits):
    """When the search stops, the figure is the fractional bound: at least the dearest fill, at most one limit
    filled at its dearest price per unit."""
    limits = tuple(map(float, limits))
    saved = cost.SEARCH_STEPS
    cost.SEARCH_STEPS = 0
    cost.dearest.cache_clear()
    try:
        bound, _, exact = cost.dearest(tuple(items), limits)
    finally:
        cost.SEARCH_STEPS = saved
        cost.dearest.cache_clear()
    assert not exact
    assert bound >= brute_force(items, limits) - 1e-9
    per_limit = min(limits[d] * max(p / c[d] for p, c in items) for d in range(3) if all(c[d] > 0 for _, c in items))
    assert bound <= per_limit + 1e-9


# ---- worst cases of nothing, and past what a float holds ---------------------------------------------------

POOLS_PROGRAM = """
import pulumi_kubernetes as k8s

def pool(name, limits, requirements):
    k8s.apiextensions.CustomResource(name, api_version="karpenter.sh/v1", kind="NodePool",
                                     metadata={"name": name}, spec={
        "limits": limits, "template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5"]},
                             *requirements]}}})

"""


def _no_nan(text: str) -> None:
    raise AssertionError(f"{text} in the JSON output")


def preview_pools(tmp_path: Path, pools: str) -> tuple[int, dict, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    folder = project(tmp_path, POOLS_PROGRAM + pools)
    out = tmp_path / "preview.json"
    code = main(["preview", "--stack", "s", "--cwd", str(folder), "--no-policy", "--json", str(out)])
    return code, json.loads(out.read_text(), parse_constant=_no_nan), out.read_text()


def test_a_pool_that_can_launch_nothing_costs_nothing_and_says_why(tmp_path, capsys):
    code, doc, _ = preview_pools(
        tmp_path,
        """
pool("contradicts", {"cpu": 64}, [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}])
pool("below", {"cpu": "-4"}, [])
pool("minus", {"nodes": -1}, [])
""",
    )
    out = capsys.readouterr().out
    assert code == 0
    lanes = {lane["name"]: lane for lane in doc["costs"]["lanes"]}
    # p5 is x86_64 only: arm64 leaves it nothing to launch; a negative limit is one every node is over
    assert {name: (lane["worstCaseHourlyUsd"], lane["unbounded"], lane["detail"]) for name, lane in lanes.items()} == {
        "contradicts": (0.0, False, "it can launch nothing: its requirements leave no instance type"),
        "below": (0.0, False, "it can launch nothing: limits.cpu -4 is below zero"),
        "minus": (0.0, False, "it can launch nothing: limits.nodes -1 is below zero"),
    }
    assert doc["costs"]["totalHourlyUsd"] == 0.0
    printed = out[out.index("Worst case per hour") :]
    assert any(
        line.split()[:3] == ["karpenter", "nodepool", "'contradicts'"]
        and "$0.00" in line
        and "it can launch nothing: its requirements leave no instance type" in line
        for line in printed.splitlines()
    )


REFUSED = "it is never created: Kubernetes refuses "
BETWEEN_PASSES = (
    "holds only between scheduling passes: within one, Karpenter subtracts each new node's cpu, memory and "
    "GPUs from the limits, never a node count, so one pass can launch any number of nodes"
)
ODD_LIMITS = {  # name: (limits as the program writes them, worst case, unbounded, detail)
    "huge": ('{"cpu": "1e400"}', None, True, "limits.cpu 1e400 is past any number of nodes, so it bounds nothing"),
    "huge-mem": (
        '{"memory": "1e309"}',
        None,
        True,
        "limits.memory 1e309 is past any number of nodes, so it bounds nothing",
    ),
    "huge-and-held": (
        '{"cpu": "1e400", "nvidia.com/gpu": 4}',
        27.52,
        False,
        "4 x p5.4xlarge at $6.88, within limits.nvidia.com/gpu 4",
    ),
    "huge-below": ('{"cpu": "-1e400"}', 0.0, False, "it can launch nothing: limits.cpu -1e400 is below zero"),
    "zero": ('{"cpu": "0"}', 0.0, False, "no instance type it can launch fits its limits"),
    "minus-zero": ('{"cpu": "-0"}', 0.0, False, "no instance type it can launch fits its limits"),
    "tiny": ('{"cpu": "1e-400"}', 0.0, False, "no instance type it can launch fits its limits"),
    # Karpenter's scheduler keeps no instance type whose capacity of a resource is above what the limit leaves (a
    # type has none of a resource it lacks); within a pass it subtracts no node from limits.nodes (subtractMax,
    # v1.14.1),
    # so a node count alone bounds nothing (it still reads the count: an exponent's low 32 bits, 1e4294967297 is 10)
    "pods-below": ('{"nodes": 4, "pods": "-1"}', 0.0, False, "it can launch nothing: limits.pods -1 is below zero"),
    "half-a-node": ('{"nodes": "500m"}', None, True, "limits.nodes 0.5 " + BETWEEN_PASSES),
    "wrapped": ('{"nodes": "1e4294967297"}', None, True, "limits.nodes 10 " + BETWEEN_PASSES),
    "nodes-and-gpus": (
        '{"nodes": 1, "nvidia.com/gpu": 16}',
        110.08,
        False,
        "2 x p5.48xlarge at $55.04, within limits.nvidia.com/gpu 16",
    ),
    "word": (
        '{"cpu": "Infinity"}',
        0.0,
        False,
        REFUSED
        + "limits.cpu 'Infinity', which is no quantity (write a whole number, or text such as 64, 250m or 256Gi)",
    ),
    "spaced": (
        '{"cpu": " 64"}',
        0.0,
        False,
        REFUSED + "limits.cpu ' 64', which is no quantity (write a whole number, or text such as 64, 250m or 256Gi)",
    ),
    "past-64-bits": (
        '{"cpu": 2.0**64}',
        0.0,
        False,
        REFUSED + "limits.cpu 1.84467e+19: a limit written as a number is a "
        "whole number of 64 bits (write others as text, such as 1500m)",
    ),
    "fraction": (
        '{"cpu": 1.5}',
        0.0,
        False,
        REFUSED + "limits.cpu 1.5: a limit written as a number is a whole number of "
        "64 bits (write others as text, such as 1500m)",
    ),
    "boolean": ('{"cpu": True}', 0.0, False, REFUSED + "limits.cpu true, which is no quantity"),
    "list": ('{"cpu": [64]}', 0.0, False, REFUSED + "limits.cpu (a list), which is no quantity"),
    "text": ('"64"', 0.0, False, REFUSED + "spec.limits '64': it maps each resource to a quantity"),
    "odd-exponent": (
        '{"cpu": "1e1.5"}',
        0.0,
        False,
        "it launches nothing: Karpenter cannot read limits.cpu '1e1.5' (the "
        "API server takes it, but its exponent is no whole number of 64 bits)",
    ),
    "long-exponent": (
        '{"cpu": "1e99999999999999999999"}',
        0.0,
        False,
        "it launches nothing: Karpenter cannot read limits.cpu '1e99999999999999999999' (the API server "
        "takes it, but its exponent is no whole number of 64 bits)",
    ),
    "unset": ('{"cpu": None}', None, True, "it has no limits on cpu, memory, GPUs or nodes"),
}


def test_every_odd_limit_gets_a_truthful_worst_case_and_reason(tmp_path, capsys):
    """Each limit as Kubernetes takes it and Karpenter reads it: one past any number of nodes bounds nothing (said
    so, not "no limits"); one the API server refuses, or Karpenter cannot decode, launches nothing, and says which;
    no figure or reason is ever inf or NaN."""
    code, doc, text = preview_pools(
        tmp_path, "".join(f"pool({name!r}, {limits}, [])\n" for name, (limits, *_) in ODD_LIMITS.items())
    )
    out = capsys.readouterr().out
    assert code == 0
    lanes = {
        lane["name"]: (lane["worstCaseHourlyUsd"], lane["unbounded"], lane["detail"]) for lane in doc["costs"]["lanes"]
    }
    assert lanes == {name: tuple(expected) for name, (_, *expected) in ODD_LIMITS.items()}
    printed = out[out.index("Worst case per hour") :]
    for word in ("inf ", "inf)", "nan", "-inf", "infinite"):
        assert word not in printed.lower().replace("'infinity'", ""), printed
    assert "Traceback" not in out and "no limits on" not in lanes["huge"][2]


def test_the_preview_judges_a_pool_kubernetes_refuses_alike_in_its_cost_and_its_workloads(tmp_path, capsys):
    """The NodePool CRD holds a limit written as text to its quantity pattern, whole, so the API server refuses
    ``" 64"`` (a space before it) and the pool never exists: the preview prices it at $0 and refuses the workload
    that selects it (exit 1), naming the same limit and value in both."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    folder = project(
        tmp_path,
        POOLS_PROGRAM
        + """
pool("spaced", {"cpu": " 64"}, [])
k8s.apps.v1.Deployment("batch", metadata={"name": "batch"}, spec={"selector": {"matchLabels": {"app": "batch"}},
    "template": {"metadata": {"labels": {"app": "batch"}}, "spec": {"nodeSelector": {"karpenter.sh/nodepool": "spaced"},
    "containers": [{"name": "app", "image": "busybox:1.36", "resources": {"requests": {"cpu": "1"}}}]}}})
""",
    )
    out = tmp_path / "preview.json"
    code = main(["preview", "--stack", "s", "--cwd", str(folder), "--json", str(out)])
    doc = json.loads(out.read_text())
    why = "is never created: Kubernetes refuses limits.cpu ' 64', which is no quantity"
    assert code == 1
    [lane] = doc["costs"]["lanes"]
    assert (lane["worstCaseHourlyUsd"], lane["detail"].startswith(f"it {why}")) == (0.0, True)
    [violation] = [v for v in doc["violations"] if v["policy"] == "workloads-reach-their-lane"]
    assert violation["level"] == "mandatory" and violation["message"].startswith(
        f"deployment \"batch\" selects no lane that runs: karpenter nodepool 'spaced', which it selects, {why}"
    )
    assert f"which it selects, {why}" in capsys.readouterr().out


def test_the_preview_judges_a_pool_whose_limits_leave_no_node_alike_in_its_cost_and_its_workloads(tmp_path, capsys):
    """Karpenter gives up on a pool when the nodes its limits leave are exactly zero (and, for any limit, keeps
    no instance type whose capacity is above what is left), so a pool with ``nodes: 0`` launches no node: the
    preview prices it at $0 with why, and refuses the workload that selects it (exit 1) though the workload
    requests nothing, as a pod that needs a node Karpenter never makes."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    folder = project(
        tmp_path,
        POOLS_PROGRAM
        + """
pool("closed", {"cpu": "64", "nodes": 0}, [])
k8s.apps.v1.Deployment("batch", metadata={"name": "batch"}, spec={"selector": {"matchLabels": {"app": "batch"}},
    "template": {"metadata": {"labels": {"app": "batch"}}, "spec": {"nodeSelector": {"karpenter.sh/nodepool": "closed"},
    "containers": [{"name": "app", "image": "busybox:1.36"}]}}})
""",
    )
    out = tmp_path / "preview.json"
    code = main(["preview", "--stack", "s", "--cwd", str(folder), "--json", str(out)])
    doc = json.loads(out.read_text())
    assert code == 1
    [lane] = doc["costs"]["lanes"]
    assert (lane["worstCaseHourlyUsd"], lane["detail"]) == (0.0, "no instance type it can launch fits its limits")
    [violation] = [v for v in doc["violations"] if v["policy"] == "workloads-reach-their-lane"]
    said = (
        "deployment \"batch\" fits no lane: it requests nothing; the nearest, karpenter nodepool 'closed': its limits "
        "(cpu 64, nodes 0) leave no instance type it can launch (raise the pool's limits, or select another lane)"
    )
    assert (violation["level"], violation["message"]) == ("mandatory", said)
    assert said in capsys.readouterr().out


def test_a_worst_case_past_what_a_float_holds_is_unbounded_and_the_json_stays_json(tmp_path, capsys):
    # p5.4xlarge at $6.88 a GPU: 1e308 GPUs of it are past the largest float (about 1.8e308); 2e307 are not, but two
    # such pools together are
    code, doc, text = preview_pools(
        tmp_path,
        """
pool("past", {"nvidia.com/gpu": "1e308"}, [])
""",
    )
    out = capsys.readouterr().out
    assert code == 0 and "inf" not in out.lower() and "nan" not in out.lower()
    (lane,) = doc["costs"]["lanes"]
    assert (lane["worstCaseHourlyUsd"], lane["unbounded"], lane["detail"]) == (
        None,
        True,
        "limits.nvidia.com/gpu 1e+308 at these prices is more dollars than can be counted",
    )
    assert doc["costs"]["totalHourlyUsd"] is None

    code, doc, text = preview_pools(
        tmp_path / "sum",
        """
pool("a", {"nvidia.com/gpu": "2e307"}, [])
pool("b", {"nvidia.com/gpu": "2e307"}, [])
""",
    )
    out = capsys.readouterr().out
    assert code == 0 and "inf" not in out.lower() and "nan" not in out.lower()
    assert all(lane["worstCaseHourlyUsd"] > 1e307 for lane in doc["costs"]["lanes"])
    assert doc["costs"]["totalHourlyUsd"] is None
    assert any(line.split()[:3] == ["every", "lane", "unbounded"] for line in out.splitlines()), out


# ---- a ceiling where the bill is higher: unpriced types, rollouts, advice that keeps the lane -------------------


def test_a_type_the_table_does_not_price_gives_no_bound_outside_a_listed_region():
    """In us-east-2 (the table has no list; us-east-1's stands in) a trn1+trn2 pool can launch trn2.48xlarge, which the
    us-east-1 list does not price: Karpenter prices it from the Price List API there (karpenter-provider-aws
    pkg/providers/pricing/pricing.go) and launches it, so the pool has no bound and names it, until the user prices it.
    In us-east-1 the list is that region's own answer, and a type it lacks is not sold there."""

    def program():
        gpu_node_pool("neuron", {"aws.amazon.com/neuron": 64, "cpu": 1024}, families=("trn1", "trn2"), taint=False)

    assert prices.for_region("us-east-2").of("trn2.48xlarge") is None and prices.for_region("us-east-2").of(
        "trn1.2xlarge"
    )
    with PolicyPackProcess(POLICIES, pack_env("p", "test", {"aws:region": "us-east-2"})) as pack:
        run = run_program(program, {"aws:region": "us-east-2"}, stack="test")
        found = judge(pack, run, {"lane-cost-ceiling": {"maxHourlyUsd": 500}})
        (held,) = of(found, "lane-cost-ceiling")
        assert held["level"] == "advisory" and "cannot hold it to its budget of $500.00" in held["message"]
        assert (
            "it can launch trn2.48xlarge, which the us-east-1 list does not price (us-east-1 prices: the table has "
            "none for us-east-2) and Karpenter prices from the AWS Price List API: give its price under prices"
            in held["message"]
        ), held
        # priced by the user: a ceiling again, counted with that price
        priced = judge(pack, run, {"lane-cost-ceiling": {"maxHourlyUsd": 100, "prices": {"trn2.48xlarge": 40.0}}})
        (over,) = messages(priced, "lane-cost-ceiling")
        assert "trn2.48xlarge at $40.00" in over and "is over its budget of $100.00" in over, over
    listed = cost.pool(
        (wellknown.Requirement("karpenter.k8s.aws/instance-family", "In", ("trn1", "trn2")),),
        {"cpu": 1024.0},
        prices.for_region("us-east-1"),
    )
    assert listed.usd is not None and "trn2.48xlarge" in listed.left_out


def test_an_unpriced_type_outside_a_listed_region_does_not_hide_a_pool_its_limits_leave_unbounded():
    """A dynamic pool with a type its limits do not count launches any number of it, whatever an unpriced type costs:
    it is unbounded (lane-cost-unbounded), not "not known"; a static pool (replicas) with an unpriced type stays not
    known."""
    neuron = (wellknown.Requirement("karpenter.k8s.aws/instance-family", "In", ("trn1", "trn2")),)
    for region in ("us-east-2", ""):
        worst = cost.pool(neuron, {"nvidia.com/gpu": 8.0}, prices.for_region(region))
        assert worst.unbounded and "do not count trn1." in worst.why, worst
        static = cost.pool(neuron, {"nvidia.com/gpu": 8.0}, prices.for_region(region), replicas=2)
        assert static.usd is None and static.unknown and "trn2.48xlarge" in static.why, static


def test_a_node_limit_alone_bounds_no_pool_and_is_never_the_advice(pack):
    """kubernetes-sigs/karpenter v1.14.1 scheduler.go: within a pass each NodeClaim subtracts its types' largest
    capacity from the remaining limits (subtractMax), and an instance type's capacity has no "nodes": a pool held by
    limits.nodes alone can start any number of nodes in one pass. The advice sets a limit Karpenter counts."""
    (over,) = messages(
        judge(pack, lambda: gpu_node_pool("counted", {"nodes": 2}), {"lane-cost-ceiling": {"maxHourlyUsd": 60}}),
        "lane-cost-ceiling",
    )
    assert over.startswith(
        "karpenter nodepool 'counted': its worst case, unbounded (limits.nodes 2 holds only between scheduling passes"
    ), over
    assert "; set limits.nvidia.com/gpu: 8, for a worst case of $55.04 an hour" in over and "limits.nodes: " not in over


def test_the_advice_keeps_a_lane_nodes_can_land_on(pack):
    """A g6 pool with a $3 budget: one g6.16xlarge ($3.3968) is over it by itself, so no GPU limit helps but 0, a
    lane nothing lands on. The advice is a cpu limit that leaves the dearer sizes out; a p5 pool whose cheapest node
    is over the budget is told so."""
    assert prices.for_region("us-east-1").of("g6.16xlarge") == 3.3968
    (over,) = messages(
        judge(
            pack,
            lambda: gpu_node_pool("g6", {"nvidia.com/gpu": 4}, families=("g6",)),
            {"lane-cost-ceiling": {"maxHourlyUsd": 3}},
        ),
        "lane-cost-ceiling",
    )
    assert "nvidia.com/gpu: 4 -> 0" not in over and "-> 0," not in over, over
    assert "; set limits.cpu: " in over, over
    advised = int(over.split("set limits.cpu: ")[1].split(",")[0])
    limits = {"nvidia.com/gpu": 4.0, "cpu": float(advised)}
    requirements = (wellknown.Requirement("karpenter.k8s.aws/instance-family", "In", ("g6",)),)
    after = cost.pool(requirements, limits, prices.for_region(""))
    assert after.usd is not None and 0 < after.usd <= 3 and after.fill, after  # a usable lane within the budget

    (none,) = messages(
        judge(pack, lambda: gpu_node_pool("p5", {"nvidia.com/gpu": 8}), {"lane-cost-ceiling": {"maxHourlyUsd": 1}}),
        "lane-cost-ceiling",
    )
    assert "; no node of it fits that budget: the cheapest it can launch, p5.4xlarge, costs $6.88 an hour" in none, none


def test_a_rollout_budget_holds_the_figure_during_a_rollout(pack):
    """figure: rollout on lane-cost-ceiling: every budget holds the worst case while nodes drift. A p5 pool of 8 GPUs
    (one p5.48xlarge, $55.04) under the CRD's default budget (nodes 10% of 1, rounded up: 1) runs a replacement
    p5.48xlarge beside the old one: $110.08."""
    program = lambda: gpu_node_pool("roll", {"nvidia.com/gpu": 8})  # noqa: E731
    assert not of(judge(pack, program, {"lane-cost-ceiling": {"maxHourlyUsd": 60}}), "lane-cost-ceiling")
    (over,) = messages(
        judge(pack, program, {"lane-cost-ceiling": {"maxHourlyUsd": 60, "figure": "rollout"}}), "lane-cost-ceiling"
    )
    assert over.startswith(
        "karpenter nodepool 'roll': its worst case during a rollout, $110.08 an hour (1 node + 1 drift "
        "replacement of p5.48xlarge at $55.04, every node at once), is over its budget of $60.00 an hour (maxHourlyUsd "
        "in "
        "the policy config, rollout)"
    ), over


def test_a_rollout_budget_from_the_pack_config_is_held_in_the_preview_and_printed(tmp_path, capsys):
    """prod's gpu pool: $6.496 steady, $8.12 while one node drifts (HAND_ROLLOUT); a $7 budget holds the steady figure
    and not the rollout one, and the printout names which figure it holds."""
    config = stack_config("prod")
    config["rack:additional_karpenter_nodepools_config"][0]["max_hourly_usd"] = 7
    stack = tmp_path / "Pulumi.budget.yaml"
    stack.write_text(yaml.safe_dump({"config": config}))
    code, doc, _ = preview_json(tmp_path, "--config", str(stack), "--cwd", str(REPO))
    assert code == 0 and not of(doc["violations"], "lane-cost-ceiling")
    assert "budget $7.00 (its max_hourly_usd, steady)" in capsys.readouterr().out
    rollout = tmp_path / "policy.json"
    rollout.write_text(json.dumps({"lane-cost-ceiling": {"figure": "rollout"}}))
    code, doc, _ = preview_json(
        tmp_path, "--config", str(stack), "--cwd", str(REPO), "--policy-pack-config", str(rollout)
    )
    out = capsys.readouterr().out
    assert code == 1 and doc["costs"]["budgetsHold"] == "rollout"
    # the rack's $25 holds its steady $19.97128 (or $19.47128), not its $34.92728 (or $34.42728) during a rollout; nor
    # does rack-ng-1's $2 hold its $4.734, whose surge (6 x $0.526) no max_size lowers
    found, group, rack = sorted(of(doc["violations"], "lane-cost-ceiling"), key=lambda v: v["message"])
    assert rack["message"].startswith("rack 'rack': its worst case during a rollout, $34.")
    assert group["message"].startswith(
        "node group 'rack-ng-1': its worst case during a rollout, $4.734 an hour (max_size 3 "
        "+ 6 x g4dn.xlarge at $0.526"
    )
    assert group["message"].endswith(
        "(its max_hourly_usd, rollout); what a rollout adds, $3.156 an hour, leaves the lane nothing: raise the budget"
    )
    assert found["message"].startswith(
        "karpenter nodepool 'gpu': its worst case during a rollout, $8.12 an hour (4 nodes + 1 drift "
        "replacement of g5.4xlarge at $1.624, within disruption budget nodes 10%), is over its budget of $7.00 an hour "
        "(its max_hourly_usd, rollout)"
    ), found["message"]
    assert "budget $7.00 (its max_hourly_usd, rollout)" in out


@settings(max_examples=40, deadline=None)
@given(
    families=st.lists(
        st.sampled_from(["g5", "g6", "g6e", "p5", "m7i", "c7i", "g4dn"]), min_size=1, max_size=3, unique=True
    ),
    gpus=st.one_of(st.none(), st.integers(1, 64)),
    cpu=st.one_of(st.none(), st.integers(2, 2000)),
    budget=st.floats(0.05, 500),
)
def test_the_advice_never_leaves_a_lane_without_nodes(families, gpus, cpu, budget):
    """Whatever the pool and budget: a limit the advice names, applied, gives a lane that still launches a node and
    costs at most the budget; else the advice names sizes that fit, says no node fits, or says nothing."""
    requirements = (wellknown.Requirement("karpenter.k8s.aws/instance-family", "In", tuple(families)),)
    limits = {**({"nvidia.com/gpu": float(gpus)} if gpus else {}), **({"cpu": float(cpu)} if cpu else {})}
    table = prices.for_region("us-east-1")
    gpu_lane = any(f.startswith(("g", "p")) for f in families)
    advice = cost.pool_fix(requirements, limits, table, budget, gpu_lane)
    assert "-> 0," not in advice and "-> 0Gi," not in advice and "limits.nodes" not in advice, advice
    if advice.startswith(("lower limits.", "set limits.")):
        resource = advice.split("limits.", 1)[1].split(":")[0]
        value = advice.split(",")[0].split(" (")[0].rsplit(" ", 1)[1]
        amount = float(value[:-2]) * GIB if value.endswith("Gi") else float(value)
        after = cost.pool(requirements, {**limits, resource: amount}, table)
        assert after.usd is not None and 0 < after.usd <= budget + 1e-6 and (after.fill or not after.exact), (
            advice,
            after,
        )
    else:
        assert advice == "" or advice.startswith(("no node of it fits that budget", "no one limit brings it under")), (
            advice
        )
