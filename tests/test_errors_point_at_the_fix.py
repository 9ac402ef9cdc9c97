"""Errors that point at the fix: the key or field to change, the value that would do, and the name
meant when one is mistyped, wherever a name is read (stack-config keys, list items written as YAML or
as the seeds' JSON text, component arguments, spec fields, lane names in selectors, catalog keys,
policy names); and, from the offline preview, the stack file and line of the value.
"""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import GPU_AMI, REPO
from mixed_os_racks import (
    ClusterRef,
    ConfigError,
    KarpenterPool,
    KarpenterPoolArgs,
    NodeGroup,
    NodeGroupArgs,
    NodeGroupSpec,
    PoolSpec,
)
from mixed_os_racks import PlacementError, Service, ServiceArgs, ServiceSpec, place
from mixed_os_racks.cli import main
from mixed_os_racks.offline import run_program


def preview_errors(tmp_path, capsys, text: str) -> list[str]:
    stack = tmp_path / "Pulumi.mine.yaml"
    stack.write_text(text)
    assert main(["preview", "--cwd", str(REPO), "--config", str(stack), "--no-policy"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    return [line.replace(str(stack), "Pulumi.mine.yaml") for line in lines]


HEAD = "config:\n  aws:region: us-east-1\n  rack:cluster_name: mine\n"


# ---- a disk below the AMI's root snapshot: the key, and the size that fits -------------------------------


def test_a_disk_below_the_snapshot_names_the_stack_key_its_line_and_the_size_that_fits(tmp_path, capsys):
    text = HEAD + (
        "  rack:additional_karpenter_nodepools_config:\n    - name: gpu\n      instance_families: g5\n"
        f"      ami_id: {GPU_AMI}\n      disk: 50\n"
    )
    assert preview_errors(tmp_path, capsys, text) == [
        "error: Pulumi.mine.yaml:8: rack:additional_karpenter_nodepools_config[0].disk: karpenter nodepool 'gpu': disk "
        "50 GiB "
        f"is smaller than the root snapshot of {GPU_AMI} (100 GiB); give it a disk of 100 GiB or more"
    ]
    # a pool that sets no disk takes the rack's: the key to change is that one
    text = (
        HEAD + f"  rack:node_disk: 40\n  rack:additional_karpenter_nodepools_config: "
        f'\'[{{"name": "gpu", "ami_id": "{GPU_AMI}"}}]\'\n'
    )
    (line,) = preview_errors(tmp_path, capsys, text)
    assert line.startswith(
        "error: Pulumi.mine.yaml:4: rack:node_disk: karpenter nodepool 'gpu': disk 40 GiB is smaller"
    )
    # a node group's, by its own key
    text = (
        HEAD
        + f"  rack:additional_node_groups_config:\n    - id: 1\n      type: g5.xlarge\n      ami_id: {GPU_AMI}\n      "
        f"disk: 60\n"
    )
    (line,) = preview_errors(tmp_path, capsys, text)
    assert line.startswith(
        "error: Pulumi.mine.yaml:8: rack:additional_node_groups_config[0].disk: node group 'rack-ng-1': "
        "disk 60 GiB is smaller"
    ) and line.endswith("give it a disk of 100 GiB or more")


def test_every_lane_a_stack_file_gets_wrong_is_reported_in_one_run(tmp_path, capsys):
    """Two pools and a node group, each refused for its pinned AMI (a disk below the snapshot, an arm64 image on x86
    instances): one run names all three, each on its line with its key path, line and value; exit 2 as for one."""
    from conftest import ARM_AMI

    text = HEAD + (
        "  rack:additional_karpenter_nodepools_config:\n"
        f"    - name: gpu\n      instance_families: g5\n      ami_id: {GPU_AMI}\n      disk: 50\n"
        f"    - name: batch\n      instance_families: m7i\n      ami_id: {ARM_AMI}\n      disk: 50\n"
        f"  rack:additional_node_groups_config:\n    - id: 1\n      type: g5.xlarge\n      ami_id: {GPU_AMI}\n"
        "      disk: 60\n"
    )
    errors = preview_errors(tmp_path, capsys, text)
    assert len(errors) == 3, errors
    assert errors[0].startswith(
        "error: Pulumi.mine.yaml:8: rack:additional_karpenter_nodepools_config[0].disk: "
        "karpenter nodepool 'gpu': disk 50 GiB is smaller than the root snapshot"
    )
    assert errors[1] == (
        "error: Pulumi.mine.yaml:9: rack:additional_karpenter_nodepools_config[1].arch: karpenter nodepool "
        f"'batch': arch x86_64 does not match {ARM_AMI}, which is arm64 (pin an x86_64 AMI, or set the "
        "lane's arch to arm64)"
    )
    assert errors[2].startswith(
        "error: Pulumi.mine.yaml:17: rack:additional_node_groups_config[0].disk: node group "
        "'rack-ng-1': disk 60 GiB is smaller"
    )
    # the order of the lanes in the file is the order of the lines; reordered, the same lines
    swapped = (
        text.replace("name: gpu", "name: tmp").replace("name: batch", "name: gpu").replace("name: tmp", "name: batch")
    )
    assert len(preview_errors(tmp_path, capsys, swapped)) == 3


def test_a_disk_below_the_snapshot_names_the_spec_field_in_a_program():
    def program() -> None:
        cluster = ClusterRef.existing("shared", "shared")
        KarpenterPool(
            "ml",
            KarpenterPoolArgs(
                pool=PoolSpec(name="ml", instance_families=["g5"], ami_id=GPU_AMI, disk=80), cluster=cluster
            ),
        )

    with pytest.raises(ConfigError) as refused:
        run_program(program, {"aws:region": "us-east-1"})
    assert str(refused.value) == (
        f"PoolSpec.disk: karpenter nodepool 'ml': disk 80 GiB is smaller than the root snapshot of "
        f"{GPU_AMI} (100 GiB); give it a disk of 100 GiB or more"
    )

    def group() -> None:
        NodeGroup(
            "inference",
            NodeGroupArgs(
                group=NodeGroupSpec(instance_type="g5.xlarge", ami_id=GPU_AMI, disk=30),
                cluster=ClusterRef.existing("shared", "shared"),
            ),
        )

    with pytest.raises(
        ConfigError,
        match=r"^NodeGroupSpec.disk: node group 'inference': disk 30 GiB is smaller .* "
        r"give it a disk of 100 GiB or more$",
    ):
        run_program(group, {"aws:region": "us-east-1"})


def test_a_disk_below_the_eks_amis_snapshot_says_the_size_that_fits():
    with pytest.raises(
        ConfigError,
        match=r"^PoolSpec.disk: karpenter nodepool 'ml': disk 15 GiB is smaller than the root "
        r"snapshot of the EKS-optimized AL2023 AMI \(20 GiB\); give it a disk of 20 GiB or more$",
    ):
        PoolSpec(name="ml", disk=15)


# ---- a GPU lane on Bottlerocket: the OS is what to change -------------------------------------------------


def test_a_bottlerocket_gpu_pool_blames_its_os(tmp_path, capsys):
    with pytest.raises(
        ConfigError,
        match=r"^PoolSpec.os: karpenter nodepool 'ml': instance families g5 make this a GPU lane, "
        r".*\(set os 'al2023', or move them to an AL2023 pool or node group\)$",
    ):
        PoolSpec(name="ml", os="bottlerocket", instance_families=["g5"])
    text = HEAD + "  rack:karpenter_node_os: bottlerocket\n  rack:karpenter_instance_families: g6\n"
    assert preview_errors(tmp_path, capsys, text) == [
        "error: Pulumi.mine.yaml:4: rack:karpenter_node_os: karpenter workload nodepool: instance families g6 make "
        "this a GPU "
        "lane, and GPU lanes must run Amazon Linux 2023, not Bottlerocket (set karpenter_node_os 'al2023', or move "
        "them to "
        "an AL2023 pool or node group)"
    ]


# ---- did you mean, wherever a name is read ------------------------------------------------------------------


def test_a_node_groups_python_field_in_the_stack_config_names_its_key_in_yaml_and_in_json_text(tmp_path, capsys):
    meant = "unknown field (did you mean type? 'instance_type' is the NodeGroupSpec field it sets)"
    as_yaml = HEAD + "  rack:additional_node_groups_config:\n    - id: 1\n      instance_type: g5.xlarge\n"
    assert preview_errors(tmp_path, capsys, as_yaml) == [
        f"error: Pulumi.mine.yaml:6: rack:additional_node_groups_config[0].instance_type: {meant}"
    ]
    as_json = (
        HEAD + "  rack:additional_node_groups_config: '" + json.dumps([{"id": 1, "instance_type": "g5.xlarge"}]) + "'\n"
    )
    # a path inside JSON text has no line of its own: the value's line
    assert preview_errors(tmp_path, capsys, as_json) == [
        f"error: Pulumi.mine.yaml:4: rack:additional_node_groups_config[0].instance_type: {meant}"
    ]


def test_misspelled_keys_of_the_stack_config_get_the_key_meant(tmp_path, capsys):
    text = HEAD + (
        "  rack:karpenter_instance_familys: c6i\n  rack:additional_karpenter_nodepools_config:\n    - name: gpu\n"
        "      instance_familes: g5\n      dedicate: true\n      zzz: 1\n"
    )
    assert preview_errors(tmp_path, capsys, text) == [
        "error: Pulumi.mine.yaml:7: rack:additional_karpenter_nodepools_config[0].instance_familes: unknown field (did "
        "you mean instance_families?)",
        "error: Pulumi.mine.yaml:8: rack:additional_karpenter_nodepools_config[0].dedicate: unknown field (did you "
        "mean dedicated?)",
        "error: Pulumi.mine.yaml:9: rack:additional_karpenter_nodepools_config[0].zzz: unknown field",
        "error: Pulumi.mine.yaml:4: rack:karpenter_instance_familys: unknown field; did you mean "
        "rack:karpenter_instance_families?",
    ]


def test_a_misspelled_component_argument_gets_the_argument_meant():
    def program() -> None:
        KarpenterPool("ml", {"pool": PoolSpec(name="ml"), "clsuter": ClusterRef.existing("shared", "shared")})  # type: ignore[typeddict-unknown-key]

    with pytest.raises(ConfigError) as refused:
        run_program(program, {"aws:region": "us-east-1"})
    assert str(refused.value).splitlines() == [
        "KarpenterPool 'ml': clsuter: unknown argument (did you mean cluster? expected one of: pool, cluster, "
        "subnet_ids, "
        "security_group_ids, node_role, tags, ami_lookup)",
        "KarpenterPool 'ml': cluster: required (expected ClusterRef)",
    ]


LANES = {
    "train": {"kind": "nodepool", "labels": {"convox.io/nodepool": "train"}, "taints": [], "gpu": False},
    "gpu": {"kind": "nodepool", "labels": {"convox.io/nodepool": "gpu"}, "taints": [], "gpu": True},
}


def test_a_misspelled_lane_in_a_selector_gets_the_lane_meant():
    with pytest.raises(PlacementError) as refused:
        place({"convox.io/nodepool": "trian"}, lanes=LANES)
    assert str(refused.value) == (
        "the workload targets karpenter nodepool 'trian', which does not exist on this rack "
        "(did you mean 'train'? existing pools: gpu, train)"
    )

    def program() -> None:
        Service(
            "web",
            ServiceArgs(
                service=ServiceSpec(
                    name="web", image="nginx:1.27", port=80, nodeSelectorLabels={"convox.io/nodepool": "trian"}
                ),
                cluster=ClusterRef.existing("shared", "shared"),
                lanes=LANES,
            ),
        )

    with pytest.raises(
        ConfigError,
        match=r"^Service 'web': service: service \"web\" targets karpenter nodepool 'trian', "
        r"which does not exist on this rack \(did you mean 'train'\?",
    ):
        run_program(program, {"aws:region": "us-east-1"})


def test_a_misspelled_catalog_key_gets_the_key_meant(tmp_path, capsys):
    catalog = tmp_path / "amis.yaml"
    catalog.write_text(yaml.safe_dump({"amis": [], "subnet": {}}))
    assert main(["preview", "--cwd", str(REPO), "--stack", "dev", "--amis", str(catalog), "--no-policy"]) == 2
    assert capsys.readouterr().err == f"error: AMI catalog {catalog}: subnet: unknown key (did you mean subnets?)\n"


def test_a_misspelled_policy_in_the_pack_config_is_named_with_the_policy_meant(tmp_path, capsys):
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"ami-id-formt": "advisory"}))
    assert main(["preview", "--cwd", str(REPO), "--stack", "dev", "--policy-pack-config", str(config)]) == 0
    assert (
        "warning: policy pack config: 'ami-id-formt' is not a policy of mixed-os-racks, so it is ignored (as pulumi "
        "ignores it); did you mean 'ami-id-format'?"
    ) in capsys.readouterr().err


def test_a_look_up_that_fails_at_preview_names_the_key_and_its_line(tmp_path, capsys):
    text = (
        HEAD + "  rack:additional_karpenter_nodepools_config:\n    - name: gpu\n      ami_id: ami-0123456789abcdef0\n"
    )
    (line,) = preview_errors(tmp_path, capsys, text)
    assert line.startswith(
        "error: Pulumi.mine.yaml:6: rack:additional_karpenter_nodepools_config[0].ami_id: karpenter "
        "nodepool 'gpu': ami_id 'ami-0123456789abcdef0' cannot be read"
    )
