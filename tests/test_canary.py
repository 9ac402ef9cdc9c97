"""A canary lane per pool and per node group: ``canary_ami_id`` renders a second lane on the candidate AMI,
checked as the lane's own AMI is, marked so the lane guard lets it go, and shown in the ``lanes`` output.

Upstream facts these tests pin (read upstream, in our words):

- Karpenter v1.14.1's NodePool CRD (``../shared/reference/karpenter-v1.14.1/karpenter.sh_nodepools.yaml``):
  ``spec.weight`` is 1-100, and a NodePool with a higher weight is tried first (none counts as 0);
  ``spec.limits`` maps resource names to quantities, and ``nodes`` is one of them
  (kubernetes-sigs/karpenter ``designs/nodepool-node-limits.md``, enforced when provisioning since #2526).
- A NodeClaim of a deleted NodePool is deleted with it (laneguard's module docs): a canary's removal
  drains its nodes together; the guard says so, as an advisory.
- kubernetes-sigs/karpenter v1.14.1 (6e7eab7a) ``pkg/controllers/provisioning/scheduling/scheduler.go``: a new
  NodeClaim keeps its types whose capacity fits what is left of each limit (``filterByRemainingResources``),
  then ``subtractMax`` takes the largest capacity among them from the remaining limits; an instance type's
  capacity has no ``nodes`` (only a node in the cluster's state counts one, ``pkg/controllers/state/statenode.go``),
  and the pass refuses a pool only when its remaining ``nodes`` is exactly zero. ``_one_pass`` below models that.
- The same repository's ``pkg/apis/v1/nodepool.go``: ``NodePool.Hash`` (drift) hashes ``spec.template`` only, so
  metadata annotations and ``spec.limits`` change no node, while ``template.spec.terminationGracePeriod`` does;
  ``provisioning/scheduling/nodeclaimtemplate.go``: a NodeClaim's owner is its NodePool, ``blockOwnerDeletion``.
- pulumi/pulumi-kubernetes ``provider/pkg/metadata/overrides.go`` (``DeletionPropagation``, from v4.12.0, #3011;
  the package pins >=4.19): ``pulumi.com/deletionPropagationPolicy: background`` replaces the default foreground
  delete; ``provider/pkg/await/await.go`` (``Deletion``) waits 10 minutes for the object to go.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, strategies as st

from mixed_os_racks import NodeGroupSpec, PoolSpec, lanecost
from mixed_os_racks.karpenter import canary_node_pool_spec
from mixed_os_racks.cli import main
from mixed_os_racks.errors import ConfigError
from mixed_os_racks.offline.catalog import Catalog
from mixed_os_racks.offline.engine import run_program
from mixed_os_racks.offline.stackexport import write_export
from mixed_os_racks.facts import prices, wellknown
from mixed_os_racks.pack import fit, rules

from promotion_helpers import BOTTLEROCKET_AMI, GROUPS_KEY, LARGE_ROOT_AMI, NEW_AMI, POOLS_KEY, catalog, preview
from conftest import ARM_AMI, GPU_AMI, NODECLASS, NODEPOOL, REPO, stack_config
from policy_helpers import AMI_IDS

NODEGROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


@pytest.fixture(scope="module")
def amis(tmp_path_factory) -> Path:
    return catalog(tmp_path_factory.mktemp("catalog"))


def prod(pool: dict[str, Any] | None = None, group: dict[str, Any] | None = None) -> dict[str, Any]:
    """The prod example stack, its GPU pool and its node group changed by ``pool`` and ``group``."""
    values = stack_config("prod")
    values[POOLS_KEY] = [{**values[POOLS_KEY][0], **(pool or {})}]
    values[GROUPS_KEY] = [{**values[GROUPS_KEY][0], **(group or {})}]
    return values


def k8s_object(doc: dict[str, Any], type_: str, name: str) -> dict[str, Any]:
    (found,) = [r["inputs"] for r in doc["resources"] if r["type"] == type_ and r["inputs"]["metadata"]["name"] == name]
    return found


def by_name(doc: dict[str, Any], type_: str, name: str) -> dict[str, Any]:
    (found,) = [r for r in doc["resources"] if r["type"] == type_ and r["name"] == name]
    return found


# ---- a pool's canary -------------------------------------------------------------------------------------


def test_a_pools_canary_is_the_pool_on_the_candidate_with_a_higher_weight_and_a_node_limit(tmp_path, amis):
    code, doc = preview(tmp_path, prod(pool={"canary_ami_id": NEW_AMI, "canary_nodes": 2}), amis)
    assert code == 0, doc.get("violations")
    pool, canary = k8s_object(doc, NODEPOOL, "gpu")["spec"], k8s_object(doc, NODEPOOL, "gpu-canary")["spec"]
    # the same pods land there: the same labels, taints and requirements
    assert canary["template"]["metadata"] == pool["template"]["metadata"]
    assert canary["template"]["metadata"]["labels"]["convox.io/nodepool"] == "gpu"
    for key in ("taints", "requirements", "expireAfter"):
        assert canary["template"]["spec"][key] == pool["template"]["spec"][key]
    assert canary["template"]["spec"]["nodeClassRef"]["name"] == "gpu-canary"
    assert (pool["weight"], canary["weight"]) == (10, 11)
    # limits Karpenter counts within a scheduling pass: 2 x the largest type the pool can launch (g5.4xlarge and
    # g6.4xlarge: 16 vCPUs, 64 GiB counted as 60,620 MiB, one GPU), under the pool's cpu 64, memory 256Gi, GPUs 4
    assert pool["limits"] == {"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "4"}
    assert canary["limits"] == {"cpu": "32", "memory": "121240Mi", "nvidia.com/gpu": "2", "nodes": "2"}
    assert canary["disruption"] == pool["disruption"]
    # removal finishes: background deletion on both NodePools, a bounded drain on the canary's nodes only
    assert canary["template"]["spec"]["terminationGracePeriod"] == "5m"
    assert "terminationGracePeriod" not in pool["template"]["spec"]
    for name in ("gpu", "gpu-canary"):
        annotations = k8s_object(doc, NODEPOOL, name)["metadata"]["annotations"]
        assert annotations["pulumi.com/deletionPropagationPolicy"] == "background"
    assert (
        "pulumi.com/deletionPropagationPolicy"
        not in k8s_object(doc, NODECLASS, "gpu-canary")["metadata"]["annotations"]
    )

    pool_class, canary_class = (
        k8s_object(doc, NODECLASS, "gpu")["spec"],
        k8s_object(doc, NODECLASS, "gpu-canary")["spec"],
    )
    assert pool_class["amiSelectorTerms"] == [{"id": GPU_AMI}] and canary_class["amiSelectorTerms"] == [{"id": NEW_AMI}]
    assert canary_class["blockDeviceMappings"] == pool_class["blockDeviceMappings"]  # the pool's disk
    assert canary_class["amiFamily"] == "AL2023"
    assert canary_class["tags"]["convox.io/nodepool"] == "gpu-canary"
    for kind in (NODEPOOL, NODECLASS):
        assert k8s_object(doc, kind, "gpu-canary")["metadata"]["annotations"]["mixed-os-racks/canary-of"] == "gpu"
        assert "mixed-os-racks/canary-of" not in k8s_object(doc, kind, "gpu")["metadata"].get("annotations", {})


def test_the_lanes_output_marks_canaries(amis):
    values = prod(pool={"canary_ami_id": NEW_AMI}, group={"canary_ami_id": NEW_AMI, "disk": 100})
    lanes = run_program(REPO, values, Catalog.load(amis), stack="prod").outputs["lanes"]
    assert lanes["gpu-canary"]["canaryOf"] == "gpu" and lanes["gpu-canary"]["ami"]["id"] == NEW_AMI
    assert lanes["rack-ng-1-canary"]["canaryOf"] == "rack-ng-1" and lanes["rack-ng-1-canary"]["ami"]["id"] == NEW_AMI
    for canary, lane in (("gpu-canary", "gpu"), ("rack-ng-1-canary", "rack-ng-1")):
        assert "canaryOf" not in lanes[lane]
        costs = ("worstCaseHourlyUsd", "worstCaseRolloutHourlyUsd")
        assert {k: v for k, v in lanes[canary].items() if k not in ("canaryOf", "ami", *costs)} == {
            k: v for k, v in lanes[lane].items() if k not in ("ami", *costs)
        }
    # what a canary may cost is what its limits allow within a pass: one canary node's cpu, memory and GPU (16, 60,620
    # MiB, 1), so one g5.4xlarge ($1.624), the dearest type the pool can launch; and one of the group's three nodes
    assert lanes["gpu-canary"]["worstCaseHourlyUsd"] == 1.624 < lanes["gpu"]["worstCaseHourlyUsd"]
    assert lanes["rack-ng-1-canary"]["worstCaseHourlyUsd"] * 3 == pytest.approx(
        lanes["rack-ng-1"]["worstCaseHourlyUsd"]
    )


@pytest.mark.parametrize(
    ("candidate", "pool", "says"),
    [
        (
            BOTTLEROCKET_AMI,
            {},
            f"karpenter nodepool 'gpu-canary': pinned AMI {BOTTLEROCKET_AMI} "
            f"('bottlerocket-aws-k8s-1.34-nvidia-x86_64-v1.30.0-abcdef12') is bottlerocket, not Amazon Linux 2023",
        ),
        (ARM_AMI, {}, f"karpenter nodepool 'gpu-canary': arch x86_64 does not match {ARM_AMI}, which is arm64"),
        (
            LARGE_ROOT_AMI,
            {},
            f"karpenter nodepool 'gpu-canary': disk 200 GiB is smaller than the root snapshot of "
            f"{LARGE_ROOT_AMI} (300 GiB)",
        ),
    ],
)
def test_the_candidate_is_checked_as_the_pools_ami_is(tmp_path, amis, capsys, candidate, pool, says):
    """The pool's own AMI passes each time: only the candidate is refused, named by its canary lane."""
    code, _ = preview(tmp_path, prod(pool={"canary_ami_id": candidate, **pool}), amis, "--no-policy")
    assert code == 2
    assert says in capsys.readouterr().err


def test_the_candidates_driver_branch_is_checked_against_the_pools_families(tmp_path, amis, capsys):
    doc = yaml.safe_load(amis.read_text())
    newer = dict(
        next(a for a in doc["amis"] if a["id"] == NEW_AMI),
        name="amazon-eks-node-al2023-x86_64-nvidia-595-1.34-v20261129",
    )
    doc["amis"] = [newer if a["id"] == NEW_AMI else a for a in doc["amis"]]
    path = tmp_path / "amis-595.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, _ = preview(
        tmp_path, prod(pool={"instance_families": "g5,g6,p3", "canary_ami_id": NEW_AMI}), path, "--no-policy"
    )
    assert code == 2
    err = capsys.readouterr().err
    assert f"karpenter nodepool 'gpu-canary': its AMI {NEW_AMI} runs NVIDIA driver 595" in err and "p3" in err.lower()


def test_the_candidate_is_judged_by_the_pack_as_any_pinned_ami(tmp_path, amis):
    """The pack sees the canary's class as it sees the pool's: a Bottlerocket image (by its name in the
    policy config) on it is refused by al2023-family, naming the canary."""
    config = tmp_path / "policy.json"
    config.write_text(
        json.dumps({"al2023-family": {"amis": {NEW_AMI: {"name": "bottlerocket-aws-k8s-1.34-nvidia-x86_64"}}}})
    )
    code, doc = preview(
        tmp_path,
        prod(pool={"canary_ami_id": NEW_AMI}),
        amis,
        "--policy-pack",
        str(REPO / "policies"),
        "--policy-pack-config",
        str(config),
    )
    assert code == 1
    (refusal,) = [v for v in doc["violations"] if v["policy"] == "al2023-family"]
    assert refusal["message"].startswith(f"karpenter nodepool 'gpu-canary': pinned AMI {NEW_AMI}")


@pytest.mark.parametrize(
    ("pool", "key", "says"),
    [
        ({"canary_ami_id": "ami-XYZ"}, "canary_ami_id", "karpenter nodepool 'gpu-canary': invalid ami_id 'ami-XYZ'"),
        ({"canary_nodes": 2}, "canary_nodes", "canary_nodes needs canary_ami_id"),
        ({"canary_ami_id": GPU_AMI}, "canary_ami_id", "is the pool's own ami_id"),
        ({"canary_ami_id": NEW_AMI, "canary_nodes": 0}, "canary_nodes", "canary_nodes must be 1 or more (got '0')"),
        ({"canary_ami_id": NEW_AMI, "weight": 100}, "weight", "weight 100 leaves its canary no higher weight"),
        ({"canary_ami_id": NEW_AMI, "name": "g" * 60}, "name", "is longer than 63 characters"),
        ({"canary_ami_id": NEW_AMI, "canary_nodes": True}, "canary_nodes", "expected a number, got true"),
    ],
)
def test_a_bad_canary_is_named_at_its_key(tmp_path, amis, capsys, pool, key, says):
    assert preview(tmp_path, prod(pool=pool), amis, "--no-policy")[0] == 2
    err = capsys.readouterr().err
    assert f"rack:additional_karpenter_nodepools_config[0].{key}: " in err and says in err, err


def test_a_canary_named_like_another_lane_is_refused(tmp_path, amis, capsys):
    values = prod(pool={"canary_ami_id": NEW_AMI})
    values[POOLS_KEY].append({"name": "gpu-canary", "instance_families": "c7i"})
    assert preview(tmp_path, values, amis, "--no-policy")[0] == 2
    assert "karpenter nodepool 'gpu': its canary 'gpu-canary' has the name of another lane" in capsys.readouterr().err


@given(st.one_of(AMI_IDS, st.integers(), st.none()))
def test_any_candidate_builds_a_pool_or_is_named(candidate):
    try:
        pool = PoolSpec(name="gpu", instance_families=["g5"], ami_id=GPU_AMI, disk=200, canary_ami_id=candidate)
    except ConfigError as exc:
        assert str(exc).startswith("PoolSpec.canary_ami_id: ")
        return
    assert candidate is None or (rules.invalid_ami_id("", candidate) is None and candidate != GPU_AMI)
    assert pool.candidate().ami_id == candidate and pool.candidate().name == "gpu"


# ---- a node group's canary ----------------------------------------------------------------------------------


def test_a_node_groups_canary_is_a_fixed_size_group_with_its_label_and_taints(tmp_path, amis):
    # a budget for the group and its canary together (the prod example's $2 holds the group alone)
    code, doc = preview(
        tmp_path, prod(group={"canary_ami_id": NEW_AMI, "canary_size": 2, "disk": 100, "max_hourly_usd": 3}), amis
    )
    assert code == 0, doc.get("violations")
    group, canary = (
        by_name(doc, NODEGROUP, "rack-ng-1")["inputs"],
        by_name(doc, NODEGROUP, "rack-ng-1-canary")["inputs"],
    )
    assert canary["scalingConfig"] == {"desiredSize": 2, "minSize": 2, "maxSize": 2}
    assert canary["labels"] == group["labels"] and canary["labels"]["convox.io/label"] == "gpu-inference"
    assert canary["taints"] == group["taints"] and canary["instanceTypes"] == group["instanceTypes"]
    assert canary["tags"]["mixed-os-racks/canary-of"] == "rack-ng-1"
    assert "mixed-os-racks/canary-of" not in group["tags"]
    assert by_name(doc, LAUNCH_TEMPLATE, "rack-ng-1-canary-launchTemplate")["inputs"]["imageId"] == NEW_AMI
    assert "imageId" not in by_name(doc, LAUNCH_TEMPLATE, "rack-ng-1-launch-template")["inputs"]  # EKS's AMI, as before


@pytest.mark.parametrize(
    ("group", "says"),
    [
        (
            {"canary_ami_id": NEW_AMI},
            f"node group 'rack-ng-1-canary': disk 20 GiB is smaller than the root snapshot of {NEW_AMI}",
        ),
        ({"canary_ami_id": BOTTLEROCKET_AMI}, f"node group 'rack-ng-1-canary': pinned AMI {BOTTLEROCKET_AMI}"),
        (
            {"canary_ami_id": "ami-0a1b"},
            "rack:additional_node_groups_config[0]: node group 'rack-ng-1-canary': invalid ami_id 'ami-0a1b'",
        ),
        ({"canary_size": 3}, "canary_size needs canary_ami_id"),
        ({"tags": "mixed-os-racks/canary-of=rack-ng-9"}, "reserved tag key 'mixed-os-racks/canary-of' is not allowed"),
    ],
)
def test_a_node_groups_candidate_is_checked_as_its_ami_is(tmp_path, amis, capsys, group, says):
    assert preview(tmp_path, prod(group=group), amis, "--no-policy")[0] == 2
    assert says in capsys.readouterr().err


def test_a_node_group_component_gets_its_canary_inside_it():
    spec = NodeGroupSpec(instance_type="g6.xlarge", label="inference", dedicated=True, canary_ami_id=NEW_AMI)
    canary = spec.canary("inference")
    assert (canary.name, canary.ami_id, canary.min_size, canary.max_size) == ("inference-canary", NEW_AMI, 1, 1)
    assert canary.node_labels() == spec.node_labels() and canary.node_taints() == spec.node_taints()
    assert canary.tags == {"mixed-os-racks/canary-of": "inference"} and canary.canary_ami_id is None


# ---- day 2: adding and removing a canary ------------------------------------------------------------------


@pytest.fixture(scope="module")
def canary_export(tmp_path_factory, amis) -> Path:
    """prod's state after an ``up`` with a canary on its pool and on its node group."""
    values = prod(pool={"canary_ami_id": NEW_AMI}, group={"canary_ami_id": NEW_AMI, "disk": 100})
    run = run_program(REPO, values, Catalog.load(amis), project="mixed-os-racks", stack="prod")
    return write_export(run, tmp_path_factory.mktemp("state") / "prod.json")


def test_removing_canaries_is_not_refused_and_leaves_the_lanes_as_they_were(tmp_path, amis, canary_export, capsys):
    code, doc = preview(tmp_path, prod(group={"disk": 100}), amis, "--state", str(canary_export))
    assert code == 0, [v for v in doc["violations"] if v["level"] == "mandatory"]
    ops = {(r["type"], r["name"]): r["op"] for r in doc["resources"]}
    assert ops[(NODEPOOL, "rack-gpu-canary-nodepool")] == ops[(NODECLASS, "rack-gpu-canary-nodeclass")] == "delete"
    assert ops[(NODEGROUP, "rack-ng-1-canary")] == "delete"
    assert ops[(NODEPOOL, "rack-gpu-nodepool")] == ops[(NODECLASS, "rack-gpu-nodeclass")] == "same"
    assert ops[(NODEGROUP, "rack-ng-1")] == "same"
    removals = {v["lane"]: v for v in doc["violations"] if v["policy"] == "lane-removal"}
    assert set(removals) == {"gpu-canary", "rack-ng-1-canary"}
    assert {v["level"] for v in removals.values()} == {"advisory"}
    assert removals["gpu-canary"]["message"].startswith(
        "canary lane 'gpu-canary' of Karpenter lane 'gpu': its NodePool is deleted"
    )
    assert "pods move to 'rack-ng-1'" in removals["rack-ng-1-canary"]["message"]
    assert "[advisory]  change-safety: lane-removal  (rack-gpu-canary-nodepool)" in capsys.readouterr().out


def test_removing_the_pool_with_its_canary_is_still_refused(tmp_path, amis, canary_export):
    values = prod(group={"canary_ami_id": NEW_AMI, "disk": 100})
    values[POOLS_KEY] = []
    code, doc = preview(tmp_path, values, amis, "--state", str(canary_export), "--no-policy")
    assert code == 1
    levels = {v["lane"]: v["level"] for v in doc["violations"] if v["policy"] == "lane-removal"}
    assert levels == {"gpu": "mandatory", "gpu-canary": "advisory"}


def test_adding_a_canary_changes_nothing_of_its_lane(tmp_path, amis):
    values = prod(group={"disk": 100})
    run = run_program(REPO, values, Catalog.load(amis), project="mixed-os-racks", stack="prod")
    state = write_export(run, tmp_path / "prod.json")
    code, doc = preview(
        tmp_path,
        prod(pool={"canary_ami_id": NEW_AMI}, group={"canary_ami_id": NEW_AMI, "disk": 100}),
        amis,
        "--state",
        str(state),
        "--no-policy",
    )
    assert code == 0
    changed = {(r["type"], r["name"]): r["op"] for r in doc["resources"] if r["op"] != "same"}
    assert set(changed.values()) == {"create"}
    assert all("canary" in name for _, name in changed), changed


def test_guard_lets_a_canary_go_with_an_advisory(tmp_path, capsys):
    """The recorded preview of a removed pool, its objects marked as a canary's: advised, not refused."""
    doc = json.loads((Path(__file__).parent / "fixtures" / "preview" / "pool-removed.json").read_text())
    for step in doc["steps"]:
        inputs = (step.get("oldState") or {}).get("inputs") or {}
        if step["oldState"]["type"] in (NODEPOOL, NODECLASS):
            inputs["metadata"].setdefault("annotations", {})["mixed-os-racks/canary-of"] = "gpu"
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(doc))
    assert main(["guard", str(path)]) == 0
    out = capsys.readouterr().out
    assert "[advisory]  change-safety: lane-removal" in out and "canary lane 'batch' of Karpenter lane 'gpu'" in out


# ---- a burst within one scheduling pass ------------------------------------------------------------------------


def _one_pass(limits: dict[str, float], claims: list[list[Any]]) -> list[Any]:
    """Karpenter v1.14.1's provisioning pass, for one NodePool (kubernetes-sigs/karpenter
    pkg/controllers/provisioning/scheduling/scheduler.go): a new NodeClaim keeps the instance types of its pod whose
    capacity fits what is left of each limit (filterByRemainingResources; a type's capacity has no "nodes", and a
    "nodes" limit stops the pool only when exactly none is left), and then subtracts the largest capacity among them
    (subtractMax). Returns each claim's types: the instance may be any of them."""
    remaining, made = dict(limits), []
    for options in claims:
        if remaining.get("nodes") == 0:
            break
        fits = [
            t
            for t in options
            if all(
                dict(zip(fit.LIMITED[:-1], fit.limit_capacity(t)[:-1])).get(r, 0.0) <= left
                for r, left in remaining.items()
                if r != "nodes"
            )
        ]
        if not fits:
            continue
        made.append(fits)
        for r in remaining:
            if r != "nodes":
                remaining[r] -= max(dict(zip(fit.LIMITED[:-1], fit.limit_capacity(t)[:-1])).get(r, 0.0) for t in fits)
    return made


FAMILIES = st.sampled_from([["g5", "g6"], ["g6"], ["g6e"], ["p4d", "p5"], ["g4dn", "g5"]])


@given(families=FAMILIES, canary_nodes=st.integers(1, 3), data=st.data())
def test_a_burst_in_one_pass_stays_within_what_the_canary_is_priced_at(families, canary_nodes, data):
    """Any burst of pending pods (each NodeClaim offered any subset of the pool's types) in one pass of Karpenter's
    scheduler: the canary's nodes never hold more cpu, memory or GPUs than canary_nodes of its largest type, and never
    cost more than its worst case. Under its former limits (the pool's, with nodes: canary_nodes) the same pass can put
    more nodes than canary_nodes on the candidate."""
    pool = PoolSpec(
        name="gpu",
        instance_families=families,
        gpu_limit=64,
        cpu_limit=1000,
        memory_limit_gb=8000,
        ami_id=GPU_AMI,
        canary_ami_id=NEW_AMI,
        canary_nodes=canary_nodes,
    )
    spec = canary_node_pool_spec(pool)
    requirements, limits = lanecost.pool_sizing(pool, spec)
    types, _ = wellknown.launchable(tuple(requirements))
    table = prices.for_region("us-east-1")
    types = tuple(t for t in types if table.of(t.name) is not None)
    claims = data.draw(st.lists(st.lists(st.sampled_from(types), min_size=1, max_size=4, unique=True), max_size=40))
    made = _one_pass(limits, claims)
    largest = [max(fit.limit_capacity(t)[d] for t in types) for d in range(3)]
    for d in range(3):  # cpu, memory, nvidia.com/gpu: whichever type each claim launches
        assert sum(max(fit.limit_capacity(t)[d] for t in fits) for fits in made) <= canary_nodes * largest[d] + 1e-6
    dearest = sum(max(table.of(t.name) or 0.0 for t in fits) for fits in made)
    worst, _ = lanecost.pool_worst_case(pool, "us-east-1", spec)
    assert worst.usd is not None and dearest <= worst.usd + 1e-6

    smallest = min(types, key=lambda t: fit.limit_capacity(t))
    former = {**lanecost.pool_sizing(pool)[1], "nodes": float(canary_nodes)}
    assert len(_one_pass(former, [[smallest]] * (canary_nodes + 3))) == canary_nodes + 3  # nodes is no bound in a pass


def test_a_pools_canary_counts_against_the_pools_budget(tmp_path, amis):
    """gpu alone is $6.496 an hour, under a $7 budget; its canary (one g5.4xlarge, $1.624) takes the same pods beside
    it, so the budget holds both: $8.12 is over, and the fix leaves the canary its room."""
    code, doc = preview(tmp_path, prod(pool={"max_hourly_usd": 7}), amis)
    assert code == 0, doc.get("violations")
    code, doc = preview(tmp_path, prod(pool={"max_hourly_usd": 7, "canary_ami_id": NEW_AMI}), amis)
    assert code == 1
    (found,) = [v for v in doc["violations"] if v["policy"] == "lane-cost-ceiling"]
    assert found["message"] == (
        "karpenter nodepool 'gpu': its worst case, $8.12 an hour with its canary (gpu $6.496 an hour (4 x g5.4xlarge "
        "at "
        "$1.624, within limits.cpu 64 and limits.nvidia.com/gpu 4); gpu-canary $1.624 an hour (1 x g5.4xlarge at "
        "$1.624, "
        "within limits.cpu 16 and limits.memory 59.1992Gi and limits.nvidia.com/gpu 1)), is over its budget of $7.00 "
        "an "
        "hour (its max_hourly_usd, steady); lower limits.nvidia.com/gpu: 4 -> 3 (the pool's gpu_limit), for a worst "
        "case "
        "of $4.872 an hour"
    )


# ---- day 2: the limits and annotations reach a running canary in place -----------------------------------------


def test_a_running_canary_takes_its_new_limits_and_annotations_in_place(tmp_path, amis):
    """prod's state as a canary was written before: its NodePool with the pool's limits and nodes, no deletion
    annotation, no terminationGracePeriod; the pool's NodePool without the annotation. The plan updates both in place
    (a NodePool's name is its only replacing field), and touches nothing else."""
    values = prod(pool={"canary_ami_id": NEW_AMI}, group={"disk": 100})
    run = run_program(REPO, values, Catalog.load(amis), project="mixed-os-racks", stack="prod")
    state = json.loads(write_export(run, tmp_path / "now.json").read_text())
    for res in state["deployment"]["resources"]:
        if res["type"] != NODEPOOL:
            continue
        for side in ("inputs", "outputs"):
            body = res.get(side) or {}
            if not body:
                continue
            annotations = body["metadata"].get("annotations", {})
            annotations.pop("pulumi.com/deletionPropagationPolicy", None)
            if not annotations:
                body["metadata"].pop("annotations", None)
            if body["metadata"]["name"] == "gpu-canary":
                body["spec"]["template"]["spec"].pop("terminationGracePeriod")
                body["spec"]["limits"] = {"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "4", "nodes": "1"}
    before = tmp_path / "before.json"
    before.write_text(json.dumps(state))
    code, doc = preview(tmp_path, values, amis, "--state", str(before), "--no-policy")
    assert code == 0, doc.get("violations")
    changed = {(r["type"], r["name"]): r["op"] for r in doc["resources"] if r["op"] != "same"}
    # every NodePool takes the annotation in place (the default workload pool's too); nothing is replaced
    assert changed == {
        (NODEPOOL, "rack-gpu-canary-nodepool"): "update",
        (NODEPOOL, "rack-gpu-nodepool"): "update",
        (NODEPOOL, "rack-workload-nodepool"): "update",
    }, changed
