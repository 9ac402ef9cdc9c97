"""Who scales which lane, on day 2: a managed node group's bounds change against what the Cluster
Autoscaler did, GPU groups the autoscaler recognises, and one autoscaler per pending pod.

Upstream facts pinned here (read in the upstream sources; in our words):
- terraform-provider-aws ``internal/service/eks/node_group.go`` (``resourceNodeGroupUpdate``, which
  pulumi-aws wraps): when ``scaling_config`` changes, ``UpdateNodegroupConfig`` carries the whole scaling
  config, desired size included. EKS refuses a desired size outside the bounds ("Minimum capacity N can't
  be greater than desired size M": terraform-aws-modules/terraform-aws-eks#748, aws/containers-roadmap#1637).
- pulumi-eks ``nodejs/eks/nodes/nodegroup.ts``: the ``aws.eks.NodeGroup`` is named after the
  ``ManagedNodeGroup`` and gets ``ignoreChanges: ["scalingConfig.desiredSize"]`` from
  ``ignoreScalingChanges``; with it the engine keeps the desired size of the last update
  (pulumi/pulumi-eks#321). pulumi-aws auto-names ``nodeGroupName`` as ``<name>-`` and 7 hex digits.
- The Cluster Autoscaler's AWS provider knows a GPU node by the label ``k8s.amazonaws.com/accelerator``
  (``GPULabel``), else by GPUs already allocatable (kubernetes-sigs/cluster-autoscaler ``pkg/utils/gpu``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from conftest import REPO, rack_config, run_rack
from mixed_os_racks import ClusterRef, NodeGroup, NodeGroupArgs, NodeGroupSpec
from mixed_os_racks.cli import main
from mixed_os_racks.offline import Catalog, run_program
from mixed_os_racks.spec.nodegroup import Scaling, scaling_plan

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
PRIVATE = ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712", "subnet-0a1b2c3d4e5f60713"]
CREATE = dict(cluster_mode="create", vpc_id="vpc-0a1b2c3d4e5f60718", private_subnets_ids=",".join(PRIVATE))
LIVE_NAME = "rack-ng-1-0a1b2c3"  # what pulumi-aws named the group on the first `up`


def catalog_file(tmp_path: Path, node_groups: dict[str, Any], **cluster: Any) -> Path:
    """The default catalog, with the cluster ``test-rack`` as EKS holds it now."""
    doc = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    doc["clusters"] = {"test-rack": {"node_groups": node_groups, **cluster}}
    path = tmp_path / "amis.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def preview_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rack: dict[str, Any], amis: Path | None = None, **config: Any
) -> tuple[int, dict[str, Any], str]:
    """The offline preview of stack ``t`` with the ``rack:`` keys ``rack`` and other namespaces' keys ``config``."""
    stack, out = tmp_path / "Pulumi.t.yaml", tmp_path / "preview.json"
    stack.write_text(yaml.safe_dump({"config": {**rack_config(**rack), **config}}))
    argv = ["preview", "--config", str(stack), "--no-policy", "--json", str(out), "--cwd", str(REPO)]
    code = main(argv + (["--amis", str(amis)] if amis else []))
    err = capsys.readouterr().err
    return code, (json.loads(out.read_text()) if out.exists() else {}), err


def sent(doc: dict[str, Any], group: str) -> tuple[dict[str, Any], list[str]]:
    """The scaling config an ``aws.eks.NodeGroup`` sends, and what the engine ignores of it."""
    (res,) = [r for r in doc["resources"] if r["type"] == NODE_GROUP and r["name"] == group]
    return res["inputs"]["scalingConfig"], res.get("ignoreChanges", [])


# ---- a bounds change is safe whatever the autoscaler did ------------------------------------------------------


@pytest.mark.parametrize(
    "live, bounds, expected",
    [
        # the autoscaler grew the group to 5; min_size raised 1 -> 6: the desired size sent is 6, not the 1 of
        # the first `up` (EKS: "Minimum capacity 6 can't be greater than desired size 1")
        ({"desired_size": 5, "min_size": 1, "max_size": 10}, (6, 10), {"minSize": 6, "maxSize": 10, "desiredSize": 6}),
        # max_size lowered below the autoscaler's 5: moved to the new maximum
        ({"desired_size": 5, "min_size": 1, "max_size": 10}, (1, 4), {"minSize": 1, "maxSize": 4, "desiredSize": 4}),
        # max_size raised: the group the autoscaler grew keeps its 5 nodes (not reset to min_size)
        ({"desired_size": 5, "min_size": 1, "max_size": 10}, (1, 20), {"minSize": 1, "maxSize": 20, "desiredSize": 5}),
    ],
)
def test_a_bounds_change_sends_the_live_size_moved_into_the_new_bounds(tmp_path, capsys, live, bounds, expected):
    amis = catalog_file(tmp_path, {LIVE_NAME: live})
    group = {
        "id": 1,
        "type": "m5.large",
        "min_size": bounds[0],
        "max_size": bounds[1],
        "dedicated": True,
        "label": "batch",
    }
    code, doc, err = preview_json(tmp_path, capsys, dict(**CREATE, additional_node_groups_config=[group]), amis)
    assert code == 0, err
    scaling, ignored = sent(doc, "rack-ng-1")
    assert scaling == expected
    assert expected["minSize"] <= scaling["desiredSize"] <= expected["maxSize"]
    assert ignored == []  # what is shown is what is sent: nothing replaced by the last update's size


def test_unchanged_bounds_keep_the_autoscalers_size(tmp_path, capsys):
    amis = catalog_file(tmp_path, {LIVE_NAME: {"desired_size": 7, "min_size": 1, "max_size": 10}})
    group = {"id": 1, "type": "m5.large", "min_size": 1, "max_size": 10, "dedicated": True, "label": "batch"}
    code, doc, err = preview_json(tmp_path, capsys, dict(**CREATE, additional_node_groups_config=[group]), amis)
    assert code == 0, err
    assert sent(doc, "rack-ng-1") == ({"minSize": 1, "maxSize": 10, "desiredSize": 7}, ["scalingConfig.desiredSize"])


def test_a_new_group_starts_at_min_size_and_leaves_its_size_to_the_autoscaler(tmp_path, capsys):
    group = {"id": 1, "type": "m5.large", "min_size": 2, "max_size": 10, "dedicated": True, "label": "batch"}
    code, doc, err = preview_json(
        tmp_path, capsys, dict(**CREATE, additional_node_groups_config=[group]), catalog_file(tmp_path, {})
    )
    assert code == 0, err
    assert sent(doc, "rack-ng-1") == ({"minSize": 2, "maxSize": 10, "desiredSize": 2}, ["scalingConfig.desiredSize"])


def test_another_groups_live_size_is_not_taken():
    # rack-ng-10's group is not rack-ng-1's: only <name>-<7 hex digits> is this component's group
    catalog = Catalog.from_doc(
        {
            **yaml.safe_load((REPO / "components/offline/amis.yaml").read_text()),
            "clusters": {
                "test-rack": {"node_groups": {"rack-ng-10-0a1b2c3": {"desired_size": 9, "min_size": 1, "max_size": 10}}}
            },
        }
    )
    group = {"id": 1, "type": "m5.large", "min_size": 2, "max_size": 10, "dedicated": True, "label": "batch"}
    run = run_rack(rack_config(**CREATE, additional_node_groups_config=[group]), catalog)
    (res,) = [r for r in run.resources if r.type == NODE_GROUP and r.name == "rack-ng-1"]
    assert res.inputs["scalingConfig"]["desiredSize"] == 2


def test_the_system_lane_owns_its_size_whatever_eks_holds(tmp_path, capsys):
    amis = catalog_file(tmp_path, {"rack-system-0a1b2c3": {"desired_size": 3, "min_size": 3, "max_size": 3}})
    code, doc, err = preview_json(tmp_path, capsys, dict(**CREATE, high_availability=False), amis)
    assert code == 0, err
    assert sent(doc, "rack-system") == ({"minSize": 1, "maxSize": 1, "desiredSize": 1}, [])


def test_a_live_size_that_cannot_be_read_is_said(tmp_path, capsys):
    two = {
        f"rack-ng-1-{suffix}": {"desired_size": 2, "min_size": 1, "max_size": 10} for suffix in ("0a1b2c3", "0a1b2c4")
    }
    group = {"id": 1, "type": "m5.large", "min_size": 1, "max_size": 10, "dedicated": True, "label": "batch"}
    code, doc, err = preview_json(
        tmp_path, capsys, dict(**CREATE, additional_node_groups_config=[group]), catalog_file(tmp_path, two)
    )
    assert code == 0
    assert (
        "node group 'rack-ng-1': its live size cannot be read (2 node groups of cluster test-rack are named after it"
        in err
    )
    assert sent(doc, "rack-ng-1") == ({"minSize": 1, "maxSize": 10, "desiredSize": 1}, ["scalingConfig.desiredSize"])


@pytest.mark.parametrize(
    "min_size, max_size, live, expected",
    [
        (1, 1, Scaling(5, 1, 10), (1, False)),
        (0, 4, None, (0, True)),
        (3, 9, Scaling(2, 1, 9), (3, False)),
        (1, 9, Scaling(2, 1, 9), (2, True)),
        (1, 3, Scaling(8, 1, 10), (3, False)),
    ],
)
def test_the_scaling_plan(min_size, max_size, live, expected):
    assert scaling_plan(min_size, max_size, live) == expected


# ---- GPU groups carry the autoscaler's GPU label -------------------------------------------------------------


@pytest.mark.parametrize(
    "instance_type, value",
    [
        ("g4dn.xlarge", "nvidia-tesla-t4"),
        ("g5.xlarge", "nvidia-a10g"),
        ("g6.xlarge", "nvidia-l4"),
        ("g6e.xlarge", "nvidia-l40s"),
        ("p4d.24xlarge", "nvidia-tesla-a100"),
        ("p5.48xlarge", "nvidia-h100"),
        ("g5g.xlarge", "nvidia-t4g"),
    ],
)
def test_a_gpu_group_is_labelled_for_the_cluster_autoscaler(tmp_path, capsys, instance_type, value):
    group = {"id": 1, "type": instance_type, "min_size": 0, "max_size": 3, "label": "gpu"}
    code, doc, err = preview_json(tmp_path, capsys, dict(**CREATE, additional_node_groups_config=[group]))
    assert code == 0, err
    (res,) = [r for r in doc["resources"] if r["type"] == NODE_GROUP and r["name"] == "rack-ng-1"]
    assert res["inputs"]["labels"]["k8s.amazonaws.com/accelerator"] == value


def test_only_gpu_groups_carry_the_gpu_label():
    run = run_rack(
        rack_config(
            **CREATE,
            additional_node_groups_config=[
                {"id": 1, "type": "m5.large", "min_size": 1, "max_size": 1},
                {"id": 2, "type": "inf2.xlarge", "min_size": 1, "max_size": 1},
            ],
        )
    )
    labels = [r.inputs["labels"] for r in run.resources if r.type == NODE_GROUP]
    assert labels and all("k8s.amazonaws.com/accelerator" not in each for each in labels)


# ---- one autoscaler per pending pod -------------------------------------------------------------------------


def test_an_untainted_scalable_group_beside_an_untainted_pool_is_warned_about(tmp_path, capsys):
    group = {"id": 1, "type": "m5.large", "min_size": 1, "max_size": 5}
    code, _, err = preview_json(tmp_path, capsys, dict(**CREATE, additional_node_groups_config=[group]))
    assert code == 0
    assert (
        "warning: node group 'rack-ng-1' can scale (min_size 1 < max_size 5) and has no taint, as Karpenter pool "
        "'workload' has none: a pending pod that fits both makes the Cluster Autoscaler and Karpenter each launch"
    ) in err


@pytest.mark.parametrize(
    "rack",
    [
        dict(
            additional_node_groups_config=[
                {"id": 1, "type": "m5.large", "min_size": 1, "max_size": 5, "dedicated": True, "label": "batch"}
            ]
        ),  # tainted: only pods meant for it
        dict(additional_node_groups_config=[{"id": 1, "type": "m5.large", "min_size": 3, "max_size": 3}]),  # fixed
        dict(
            additional_node_groups_config=[{"id": 1, "type": "m5.large", "min_size": 1, "max_size": 5}],
            cluster_autoscaler_enable=False,
        ),  # Karpenter alone scales
        dict(
            additional_node_groups_config=[{"id": 1, "type": "m5.large", "min_size": 1, "max_size": 5}],
            karpenter_node_taints="pool=workload:NoSchedule",
        ),  # no untainted pool
    ],
)
def test_one_autoscaler_per_pod_is_not_warned_about(tmp_path, capsys, rack):
    code, _, err = preview_json(tmp_path, capsys, dict(**CREATE, **rack))
    assert code == 0 and "each launch a node" not in err


# ---- the live group under pulumi:autonaming ------------------------------------------------------------------
#
# pulumi/pulumi pkg/cmd/pulumi/autonaming/config.go and pkg/resource/autonaming/strategy.go (commit 1b5949891b3c):
# `pulumi:autonaming` takes `mode` (default, verbatim, disabled) or `pattern` (+ `enforce`) at its root, per
# provider and per resource type, the most specific winning; verbatim names a resource by its logical name, a
# pattern expands ${name}, ${stack}, ${project}, ${organization}, ${config.key} and random ${hex(n)}, ${alphanum(n)},
# ${string(n)}, ${num(n)}, ${uuid}. The engine names a resource when it creates it: an existing group keeps the name
# it was created with. pkg/resource/deploy/source_eval.go hands the program the stack's whole config.
SCALABLE = {"id": 1, "type": "m5.large", "min_size": 6, "max_size": 10, "dedicated": True, "label": "batch"}
LIVE = {"desired_size": 5, "min_size": 1, "max_size": 10}


@pytest.mark.parametrize(
    "autonaming, live_name",
    [
        ({"mode": "verbatim"}, "rack-ng-1"),
        ({"pattern": "${stack}-${name}-${hex(4)}"}, "t-rack-ng-1-0a9f"),
        ({"pattern": "${project}_${name}_${alphanum(3)}${num(2)}${string(1)}"}, "mixed-os-racks_rack-ng-1_z9a07q"),
        ({"pattern": "${name}-${uuid}"}, "rack-ng-1-6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
        ({"pattern": "${organization}-${name}"}, "organization-rack-ng-1"),  # the offline engine's organization
        (
            {
                "pattern": "x-${name}",
                "providers": {"aws": {"resources": {"aws:eks/nodeGroup:NodeGroup": {"mode": "verbatim"}}}},
            },
            "rack-ng-1",
        ),  # the type's own naming wins over the root's
        ({"providers": {"aws": {"pattern": "${name}-${config.suffix}"}}}, "rack-ng-1-blue"),
        ({"mode": "verbatim"}, LIVE_NAME),  # created before the config: the engine never renames it
    ],
)
def test_a_raise_of_min_size_finds_the_group_as_the_engine_named_it(tmp_path, capsys, autonaming, live_name):
    amis = catalog_file(tmp_path, {live_name: LIVE})
    code, doc, err = preview_json(
        tmp_path,
        capsys,
        dict(**CREATE, additional_node_groups_config=[SCALABLE]),
        amis,
        **{"pulumi:autonaming": autonaming, "mixed-os-racks:suffix": "blue"},
    )
    assert code == 0, err
    assert sent(doc, "rack-ng-1") == ({"minSize": 6, "maxSize": 10, "desiredSize": 6}, [])
    assert "live size cannot be read" not in err


@pytest.mark.parametrize(
    "autonaming, says",
    [
        (
            {"mode": "disabled"},
            "its name cannot be known (pulumi:autonaming disables auto-naming for "
            "aws:eks/nodeGroup:NodeGroup, so the provider names a new one itself)",
        ),
        (
            {"mode": "verbatim", "pattern": "${name}"},
            "its name cannot be known (pulumi:autonaming: pulumi:autonaming gives "
            "both mode and pattern/enforce, which the Pulumi CLI refuses)",
        ),
        (
            {"pattern": "${name}-${config.missing}"},
            "its name cannot be known (pulumi:autonaming: its pattern reads "
            "${config.missing}, which the stack's config does not set)",
        ),
    ],
)
def test_a_group_whose_name_cannot_be_known_is_warned_about(tmp_path, capsys, autonaming, says):
    """No group carries a name the look-up can match: rather than take the group as new (and send min_size over the
    autoscaler's size), the rack says it cannot read the live size."""
    amis = catalog_file(tmp_path, {"terraform-20261201000000000000000001": LIVE})
    code, doc, err = preview_json(
        tmp_path,
        capsys,
        dict(**CREATE, additional_node_groups_config=[SCALABLE]),
        amis,
        **{"pulumi:autonaming": autonaming},
    )
    assert code == 0, err
    assert f"warning: node group 'rack-ng-1': its live size cannot be read ({says}): a change of min_size" in err


def test_two_groups_named_both_ways_are_not_guessed_between(tmp_path, capsys):
    amis = catalog_file(tmp_path, {LIVE_NAME: LIVE, "rack-ng-1": LIVE})
    code, _, err = preview_json(
        tmp_path,
        capsys,
        dict(**CREATE, additional_node_groups_config=[SCALABLE]),
        amis,
        **{"pulumi:autonaming": {"mode": "verbatim"}},
    )
    assert code == 0, err
    assert (
        f"its live size cannot be read (2 node groups of cluster test-rack are named after it as pulumi:autonaming "
        f"or the provider's default names it (rack-ng-1, {LIVE_NAME}))"
    ) in err


# A GPU pod tolerates its vendor's GPU taint without saying so: EKS runs the ExtendedResourceToleration admission
# plugin (EKS user guide, platform versions), which gives every pod requesting an extended resource the toleration
# `<resource>` Exists NoSchedule (kubernetes plugin/pkg/admission/extendedresourcetoleration). So a GPU group
# tainted only nvidia.com/gpu and a GPU pool tainted with nothing else are both open to it.
GPU_GROUP = {"id": 1, "type": "g5.xlarge", "min_size": 0, "max_size": 3}
GPU_POOL = {"name": "gpu", "instance_families": "g5,g6", "disk": 100}


def test_a_scalable_gpu_group_beside_an_open_gpu_pool_is_warned_about(tmp_path, capsys):
    code, _, err = preview_json(
        tmp_path,
        capsys,
        dict(**CREATE, additional_node_groups_config=[GPU_GROUP], additional_karpenter_nodepools_config=[GPU_POOL]),
    )
    assert code == 0, err
    assert (
        "warning: node group 'rack-ng-1' can scale (min_size 0 < max_size 3) and a pod that requests nvidia.com/gpu "
        "tolerates its taints, as it does Karpenter pool 'gpu''s (EKS's ExtendedResourceToleration gives it "
        "nvidia.com/gpu:NoSchedule): a pending one that fits both makes the Cluster Autoscaler and Karpenter each "
        "launch a node for it"
    ) in err
    assert "Taint the group or the pool (dedicated: true)" in err


@pytest.mark.parametrize(
    "groups, pools",
    [
        (
            [{**GPU_GROUP, "dedicated": True, "label": "gpu"}],
            [GPU_POOL],
        ),  # the pod must name the group's dedicated taint
        ([GPU_GROUP], [{**GPU_POOL, "dedicated": True}]),  # ... or the pool's
        ([{**GPU_GROUP, "min_size": 2, "max_size": 2}], [GPU_POOL]),  # a fixed group: the autoscaler adds nothing
        ([GPU_GROUP], [{"name": "cpu", "instance_families": "m7i"}]),  # no pool with GPUs: Karpenter cannot launch one
        ([GPU_GROUP], [{**GPU_POOL, "taints": "nvidia.com/gpu:NoExecute"}]),  # the plugin tolerates NoSchedule only
    ],
)
def test_a_gpu_pod_that_only_one_autoscaler_serves_is_not_warned_about(tmp_path, capsys, groups, pools):
    code, _, err = preview_json(
        tmp_path,
        capsys,
        dict(**CREATE, additional_node_groups_config=groups, additional_karpenter_nodepools_config=pools),
    )
    assert code == 0, err
    assert "each launch a node" not in err


def test_a_gpu_pools_own_gpu_taint_is_tolerated_too(tmp_path, capsys):
    """A pool tainted nvidia.com/gpu:NoSchedule, like the group, is still open to every GPU pod."""
    code, _, err = preview_json(
        tmp_path,
        capsys,
        dict(
            **CREATE,
            additional_node_groups_config=[GPU_GROUP],
            additional_karpenter_nodepools_config=[{**GPU_POOL, "taints": "nvidia.com/gpu:NoSchedule"}],
        ),
    )
    assert code == 0, err
    assert (
        "warning: node group 'rack-ng-1' can scale (min_size 0 < max_size 3) and a pod that requests nvidia.com/gpu"
        in err
    )


@pytest.mark.parametrize(
    "made, fix",
    [
        (
            lambda: ClusterRef.existing("c", pulumi.Output.from_input("shared")),
            "name the cluster as text, not an Output",
        ),
    ],
)
def test_a_group_in_a_cluster_named_only_at_apply_says_how_to_name_it(capsys, made, fix):
    """A scalable group reads its live size by the cluster's name; for an existing cluster named by an Output,
    the advice is to name it as text (ClusterRef.created's cluster_name is for a cluster the program makes)."""

    def program() -> None:
        NodeGroup(
            "g", NodeGroupArgs(group=NodeGroupSpec(instance_type="m5.large", min_size=1, max_size=3), cluster=made())
        )

    run_program(program, {"aws:region": "us-east-1"})
    err = capsys.readouterr().err
    assert f"node group 'g': its live size cannot be read (the cluster's name is not known at preview ({fix}))" in err
