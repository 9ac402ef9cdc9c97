"""``NodeGroup`` through the rack program: what each managed node group registers, and its URNs."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pytest

from mixed_os_racks import contract
from mixed_os_racks import ConfigError, ami_type
from mixed_os_racks.offline import Catalog, ProgramRun, Resource, run_program
from mixed_os_racks.pack import rules

REPO = Path(__file__).resolve().parents[1]
MNG = "eks:index:ManagedNodeGroup"
NODE_GROUP = "rack:index:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ROLE = "aws:iam/role:Role"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"

X86_AMI = "ami-0a1b2c3d4e5f60718"  # x86_64, 100 GiB root snapshot, encrypted in CATALOG
X86_AMI_2 = "ami-0123456789abcdef0"  # x86_64, 20 GiB root snapshot, encrypted in CATALOG
ARM_AMI = "ami-0f0e0d0c0b0a09080"  # arm64, 20 GiB root snapshot, encrypted in CATALOG
PLAIN_AMI = "ami-0aaaaaaaaaaaaaaa1"  # x86_64, 20 GiB root snapshot, NOT encrypted


def _ami(ami_id: str, arch: str, snapshot: int, encrypted: bool) -> dict[str, Any]:
    return {
        "id": ami_id,
        "name": f"custom-al2023-{arch}-{ami_id}",
        "description": "a custom AL2023 EKS node image",
        "architecture": arch,
        "root_device_name": "/dev/xvda",
        "root_snapshot_gib": snapshot,
        "creation_date": "2026-11-15T08:12:40.000Z",
        "owner_id": "111122223333",
        "root_snapshot_encrypted": encrypted,
    }


AMIS = [
    _ami(X86_AMI, "x86_64", 100, True),
    _ami(X86_AMI_2, "x86_64", 20, True),
    _ami(ARM_AMI, "arm64", 20, True),
    _ami(PLAIN_AMI, "x86_64", 20, False),
]
CATALOG = Catalog.from_doc({"amis": AMIS})


def run(catalog: Catalog = CATALOG, **rack: Any) -> ProgramRun:
    """The rack program, offline, with these ``rack:`` values."""
    config: dict[str, Any] = {"aws:region": "us-east-1", "rack:cluster_name": "test-rack"}
    config.update({f"rack:{k}": v for k, v in rack.items()})
    return run_program(REPO, config, catalog, stack="test")


def only(run_: ProgramRun, type_: str, name: Optional[str] = None) -> Resource:
    found = [r for r in run_.resources if r.type == type_ and (name is None or r.name == name)]
    assert len(found) == 1, f"{type_} {name}: {[r.name for r in found]}"
    return found[0]


def mng(run_: ProgramRun, name: str) -> dict[str, Any]:
    return only(run_, MNG, name).inputs


def gpu_group(**fields: Any) -> dict[str, Any]:
    return {
        "id": 1,
        "type": "g4dn.xlarge",
        "min_size": 1,
        "max_size": 3,
        "dedicated": True,
        "label": "gpu-inference",
        **fields,
    }


@pytest.fixture(scope="module")
def gpu_run() -> ProgramRun:
    return run(additional_node_groups_config=[gpu_group(tags="team=ml")], node_disk=80)


# ---- AMI type selection ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "instance_type, expected",
    [
        ("g4dn.xlarge", "AL2023_x86_64_NVIDIA"),
        ("g6e.12xlarge", "AL2023_x86_64_NVIDIA"),
        ("p5.48xlarge", "AL2023_x86_64_NVIDIA"),
        ("g5g.2xlarge", "AL2023_ARM_64_NVIDIA"),
        ("inf2.xlarge", "AL2023_x86_64_NEURON"),
        ("trn1.32xlarge", "AL2023_x86_64_NEURON"),
        ("m7g.large", "AL2023_ARM_64_STANDARD"),
        ("c6gn.xlarge", "AL2023_ARM_64_STANDARD"),
        ("m5.large", "AL2023_x86_64_STANDARD"),
        ("g4ad.xlarge", "AL2023_x86_64_STANDARD"),  # AMD GPUs: no NVIDIA AMI
    ],
)
def test_ami_type_from_instance_type(instance_type: str, expected: str) -> None:
    assert ami_type(instance_type) == expected


def test_x86_and_arm_groups_coexist_in_one_rack() -> None:
    r = run(additional_node_groups_config=[{"id": 0, "type": "m5.large"}, {"id": 1, "type": "m7g.large"}])
    assert mng(r, "rack-ng-0")["amiType"] == "AL2023_x86_64_STANDARD"
    assert mng(r, "rack-ng-1")["amiType"] == "AL2023_ARM_64_STANDARD"


# ---- what a GPU node group registers ----------------------------------------------------------------------


def test_gpu_group_managed_node_group_arguments(gpu_run: ProgramRun) -> None:
    inputs = mng(gpu_run, "rack-ng-1")
    assert inputs["operatingSystem"] == "AL2023"
    assert inputs["amiType"] == "AL2023_x86_64_NVIDIA"
    assert inputs["instanceTypes"] == ["g4dn.xlarge"]
    assert inputs["capacityType"] == "ON_DEMAND"
    assert inputs["scalingConfig"] == {"minSize": 1, "maxSize": 3, "desiredSize": 1}
    assert inputs["ignoreScalingChanges"] is True
    # the Cluster Autoscaler's GPU label (its AWS provider's GPULabel), with its own name for the T4
    assert inputs["labels"] == {
        contract.NODEGROUP_LABEL: "gpu-inference",
        contract.GPU_VENDOR_LABEL: contract.GPU_VENDOR_NVIDIA,
        "k8s.amazonaws.com/accelerator": "nvidia-tesla-t4",
    }
    assert sorted(inputs["taints"], key=lambda t: t["key"]) == [
        {"key": "dedicated-node", "value": "gpu-inference", "effect": "NO_SCHEDULE"},
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
    ]
    assert inputs["tags"] == {"team": "ml", "rack": "test-rack"}
    # no pinned AMI: EKS picks the AMI; the disk lives in our launch template
    assert "amiId" not in inputs and "diskSize" not in inputs and "enableIMDSv2" not in inputs
    assert set(inputs["launchTemplate"]) == {"id", "version"}


def test_gpu_group_launch_template_is_hardened(gpu_run: ProgramRun) -> None:
    lt = only(gpu_run, LAUNCH_TEMPLATE, "rack-ng-1-launch-template").inputs
    assert lt["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {"volumeSize": 80, "volumeType": "gp3", "encrypted": "true", "deleteOnTermination": "true"},
        }
    ]
    assert lt["metadataOptions"] == {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 2}
    assert "imageId" not in lt and "userData" not in lt  # EKS keeps choosing the AMI and its bootstrap
    tagged = {spec["resourceType"]: spec["tags"] for spec in lt["tagSpecifications"]}
    assert tagged == {"instance": {"team": "ml", "rack": "test-rack"}, "volume": {"team": "ml", "rack": "test-rack"}}
    # a preview does not know a launch template's id or latest version until it exists: the managed node
    # group takes both from this template (its property dependency), and pulumi-eks hands them to its node group
    template = only(gpu_run, LAUNCH_TEMPLATE, "rack-ng-1-launch-template")
    group = only(gpu_run, MNG, "rack-ng-1")
    assert group.inputs["launchTemplate"] == {"id": "<computed>", "version": "<computed>"}
    assert group.property_dependencies["launchTemplate"] == [template.urn]
    node_group = only(gpu_run, "aws:eks/nodeGroup:NodeGroup", "rack-ng-1")
    assert node_group.parent == group.urn and node_group.property_dependencies["launchTemplate"] == [template.urn]


def test_group_gets_its_own_least_privilege_role(gpu_run: ProgramRun) -> None:
    role = only(gpu_run, ROLE, "rack-ng-1-role")
    assert '"ec2.amazonaws.com"' in role.inputs["assumeRolePolicy"]
    attachments = [r for r in gpu_run.resources if r.type == ATTACHMENT]
    assert sorted(a.inputs["policyArn"] for a in attachments) == [
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    ]
    group = only(gpu_run, MNG, "rack-ng-1")
    assert group.inputs["nodeRole"] == {"resource": role.urn}
    assert group.inputs["cluster"]["instanceRoles"] == [{"resource": role.urn}]
    # the node group waits for the policies: nodes without them never join
    assert {a.urn for a in attachments} <= set(group.dependencies)


def test_existing_cluster_is_read_not_created(gpu_run: ProgramRun) -> None:
    core = mng(gpu_run, "rack-ng-1")["cluster"]
    assert core["cluster"]["resource"].endswith("rack:index:Rack$aws:eks/cluster:Cluster::rack-cluster")
    assert core["clusterIamRole"]["resource"].endswith("$aws:iam/role:Role::rack-cluster-role")
    assert core["endpoint"] == "https://test-rack.eks.offline.invalid"
    assert core["subnetIds"] == ["subnet-offline-a", "subnet-offline-b", "subnet-offline-c"]
    assert core["vpcId"] == "vpc-offline"
    assert core["provider"]["resource"].endswith("pulumi:providers:kubernetes::rack-k8s")
    assert not [r for r in gpu_run.resources if r.type == "aws:eks/cluster:Cluster"]  # read, never registered


def test_components_nest_under_the_rack(gpu_run: ProgramRun) -> None:
    group = only(gpu_run, NODE_GROUP, "rack-ng-1")
    assert group.parent.endswith("rack:index:Rack::rack")
    for child in (MNG, LAUNCH_TEMPLATE, ROLE):
        assert only(gpu_run, child, None if child != MNG else "rack-ng-1").parent == group.urn
    assert gpu_run.outputs["nodeGroups"] == ["rack-ng-1"]


def test_existing_role_from_config_is_shared_and_nothing_is_created() -> None:
    r = run(
        node_group_role_name="rack-nodes",
        additional_node_groups_config=[gpu_group()],
        additional_build_groups_config=[{"type": "c6i.large"}],
    )
    assert not [x for x in r.resources if x.type in (ROLE, ATTACHMENT)]
    for name in ("rack-ng-1", "rack-build-0"):
        assert mng(r, name)["nodeRole"]["resource"].endswith("rack:index:Rack$aws:iam/role:Role::rack-node-group-role")


def test_plain_group_has_no_gpu_label_or_taint_and_uses_the_rack_disk() -> None:
    r = run(node_disk=50, additional_node_groups_config=[{"type": "m5.large", "capacity_type": "SPOT"}])
    inputs = mng(r, "rack-ng-0")
    assert inputs["labels"] == {contract.NODEGROUP_LABEL: "custom"}
    assert "taints" not in inputs or inputs["taints"] == []
    assert inputs["capacityType"] == "SPOT"
    assert only(r, LAUNCH_TEMPLATE).inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 50


def test_neuron_group_is_not_an_nvidia_lane() -> None:
    inputs = mng(run(additional_node_groups_config=[{"type": "inf2.xlarge", "disk": 100}]), "rack-ng-0")
    assert inputs["amiType"] == "AL2023_x86_64_NEURON"
    assert contract.GPU_VENDOR_LABEL not in inputs["labels"]


def test_build_group_lane() -> None:
    r = run(
        additional_build_groups_config=[
            {"type": "c6i.2xlarge", "label": "builds"},
            {"type": "g5.xlarge", "dedicated": True},
        ]
    )
    plain = mng(r, "rack-build-0")
    assert plain["labels"] == {"convox-build": "true", contract.NODEGROUP_LABEL: "builds"}
    assert plain["taints"] == [{"key": "dedicated", "value": "build", "effect": "NO_SCHEDULE"}]
    assert plain["scalingConfig"] == {"minSize": 0, "maxSize": 100, "desiredSize": 0}
    gpu = mng(r, "rack-build-1")
    assert gpu["labels"] == {
        "convox-build": "true",
        contract.NODEGROUP_LABEL: "custom-build",
        contract.GPU_VENDOR_LABEL: contract.GPU_VENDOR_NVIDIA,
        "k8s.amazonaws.com/accelerator": "nvidia-a10g",
    }
    assert {(t["key"], t["value"]) for t in gpu["taints"]} == {
        ("dedicated", "build"),
        ("dedicated-node", "custom-build"),
        ("nvidia.com/gpu", "true"),
    }


def test_explicit_null_label_sets_no_label() -> None:
    inputs = mng(run(additional_node_groups_config=[{"type": "m5.large", "label": None}]), "rack-ng-0")
    assert contract.NODEGROUP_LABEL not in (inputs.get("labels") or {})


# ---- a pinned custom AMI ------------------------------------------------------------------------------------


def test_pinned_ami_goes_through_pulumi_eks() -> None:
    r = run(additional_node_groups_config=[gpu_group(ami_id=X86_AMI, disk=120)])
    inputs = mng(r, "rack-ng-1")
    assert inputs["amiId"] == X86_AMI
    assert inputs["operatingSystem"] == "AL2023"
    assert inputs["diskSize"] == 120
    assert inputs["enableIMDSv2"] is True
    assert "amiType" not in inputs and "launchTemplate" not in inputs and "gpu" not in inputs
    assert inputs["tags"][contract.ROOT_SNAPSHOT_TAG] == "100"
    # pulumi-eks builds the launch template (the component makes none of its own): a child of the managed node group
    (template,) = [x for x in r.resources if x.type == LAUNCH_TEMPLATE]
    assert (template.name, template.parent) == ("rack-ng-1-launchTemplate", only(r, MNG, "rack-ng-1").urn)
    assert template.inputs["imageId"] == X86_AMI
    assert inputs["labels"][contract.GPU_VENDOR_LABEL] == contract.GPU_VENDOR_NVIDIA


def test_pinned_ami_defaults_to_the_rack_disk() -> None:
    inputs = mng(run(node_disk=40, additional_node_groups_config=[gpu_group(ami_id=X86_AMI_2)]), "rack-ng-1")
    assert inputs["diskSize"] == 40
    assert inputs["tags"][contract.ROOT_SNAPSHOT_TAG] == "20"


def test_pinned_arm_ami_on_a_graviton_group() -> None:
    inputs = mng(run(additional_node_groups_config=[{"type": "m7g.large", "ami_id": ARM_AMI}]), "rack-ng-0")
    assert inputs["amiId"] == ARM_AMI


def test_pinned_ami_architecture_must_match_the_instance_type() -> None:
    with pytest.raises(ConfigError) as caught:
        run(additional_node_groups_config=[gpu_group(ami_id=ARM_AMI)])
    # the node group's architecture is its instance type's: the key that sets it is named
    assert str(caught.value) == "rack:additional_node_groups_config[0].type: " + rules.arch_mismatch(
        "node group 'rack-ng-1'", ["x86_64"], ARM_AMI, "arm64"
    )


def test_pinned_ami_disk_must_fit_the_root_snapshot() -> None:
    with pytest.raises(ConfigError) as caught:
        run(additional_node_groups_config=[gpu_group(ami_id=X86_AMI, disk=50)])
    assert str(caught.value) == (
        f"rack:additional_node_groups_config[0].disk: node group 'rack-ng-1': disk 50 GiB is smaller than the root "
        f"snapshot of {X86_AMI} (100 GiB); give it a disk of 100 GiB or more"
    )


def test_pinned_ami_must_exist() -> None:
    with pytest.raises(ConfigError, match=r"node group 'rack-build-0': ami_id 'ami-0bbbbbbbbbbbbbbb2' cannot be read"):
        run(additional_build_groups_config=[{"type": "g4dn.xlarge", "ami_id": "ami-0bbbbbbbbbbbbbbb2"}])


def test_pinned_ami_with_unencrypted_snapshot_is_refused_unless_the_account_encrypts() -> None:
    with pytest.raises(ConfigError) as caught:
        run(additional_node_groups_config=[gpu_group(ami_id=PLAIN_AMI)])
    assert str(caught.value).startswith(
        f"rack:additional_node_groups_config[0].ami_id: node group 'rack-ng-1': ami_id '{PLAIN_AMI}' has an "
        f"unencrypted root snapshot and EBS encryption by default is off"
    )
    encrypting_account = Catalog.from_doc({"amis": AMIS, "ebs_encryption_by_default": True})
    inputs = mng(run(encrypting_account, additional_node_groups_config=[gpu_group(ami_id=PLAIN_AMI)]), "rack-ng-1")
    assert inputs["amiId"] == PLAIN_AMI


# ---- names and URNs ------------------------------------------------------------------------------------------


def urns(run_: ProgramRun) -> set[str]:
    return {r.urn for r in run_.resources}


def test_reordering_the_lists_changes_no_urn() -> None:
    groups = [gpu_group(id=4), {"id": 9, "type": "m7g.large"}, {"id": 2, "type": "m5.large", "ami_id": X86_AMI_2}]
    builds = [{"id": 0, "type": "c6i.large"}, {"id": 1, "type": "c7g.large"}]
    first = run(additional_node_groups_config=groups, additional_build_groups_config=builds)
    second = run(additional_node_groups_config=groups[::-1], additional_build_groups_config=builds[::-1])
    assert urns(first) == urns(second)
    assert {r.name for r in first.resources if r.type == NODE_GROUP} == {
        "rack-ng-4",
        "rack-ng-9",
        "rack-ng-2",
        "rack-build-0",
        "rack-build-1",
    }


def test_changing_ami_id_keeps_the_node_group_urn() -> None:
    before = run(additional_node_groups_config=[gpu_group(ami_id=X86_AMI_2)])
    after = run(additional_node_groups_config=[gpu_group(ami_id=X86_AMI, disk=100)])
    for type_ in (NODE_GROUP, MNG):
        assert only(before, type_, "rack-ng-1").urn == only(after, type_, "rack-ng-1").urn
    assert mng(before, "rack-ng-1")["amiId"] != mng(after, "rack-ng-1")["amiId"]
    assert urns(before) == urns(after)


def test_changing_one_group_touches_no_other() -> None:
    other = {"id": 7, "type": "m5.large"}
    before = run(additional_node_groups_config=[gpu_group(ami_id=X86_AMI_2), other])
    after = run(additional_node_groups_config=[gpu_group(ami_id=X86_AMI, disk=100), other])

    def of_group(r: ProgramRun) -> dict[str, dict[str, Any]]:
        return {x.urn: x.inputs for x in r.resources if "rack-ng-7" in x.urn}

    assert of_group(before) == of_group(after) and of_group(before)


def test_a_pinned_ami_stating_its_nvidia_branch_must_drive_the_groups_gpus():
    """P3dn on a 595 AMI, G7 on a 580 one: refused before anything is created (amazon-eks-ami doc/usage/g7-ami.md)."""
    amis = [
        {**_ami(X86_AMI, "x86_64", 20, True), "name": "custom-al2023-nvidia-595"},
        {**_ami(X86_AMI_2, "x86_64", 20, True), "description": "AL2023 EKS node, NVIDIA 580 driver"},
    ]
    catalog = Catalog.from_doc({"amis": amis})
    with pytest.raises(
        ConfigError,
        match=r"runs NVIDIA driver 595 \(its name\), which cannot drive instances the lane can "
        r"launch: p3dn is not supported by NVIDIA driver 595 or newer",
    ):
        run(catalog, additional_node_groups_config=[gpu_group(type="p3dn.24xlarge", ami_id=X86_AMI)])
    with pytest.raises(
        ConfigError,
        match=r"runs NVIDIA driver 580 \(its description\), which cannot drive instances the lane "
        r"can launch: g7 needs NVIDIA driver 595 or newer",
    ):
        run(catalog, additional_node_groups_config=[gpu_group(type="g7.2xlarge", ami_id=X86_AMI_2)])
    run(catalog, additional_node_groups_config=[gpu_group(type="g7.2xlarge", ami_id=X86_AMI)])
