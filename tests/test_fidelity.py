"""What the real EC2, EKS and Karpenter APIs would do with the rack, each test stating the
upstream fact it encodes."""

from __future__ import annotations

import json
from typing import Any

import pulumi_eks as eks
import pytest

from conftest import GPU_AMI, rack_config, run_rack
from mixed_os_racks import contract
from mixed_os_racks import (
    ClusterRef,
    ConfigError,
    NodeGroup,
    NodeGroupArgs,
    NodeGroupSpec,
    PoolSpec,
    ami_type,
    parse_rack_config,
)
from mixed_os_racks.ami import provider_reason
from mixed_os_racks.offline import Catalog, run_program
from mixed_os_racks.facts import instances
from mixed_os_racks.pack import bootfacts, checks
from upstream_files import KarpenterFamily, karpenter_families

MNG = "eks:index:ManagedNodeGroup"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def error(**values: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_rack_config({"cluster_name": "c", **values})
    return str(caught.value)


def pool_error(**pool: Any) -> str:
    return error(additional_karpenter_nodepools_config=[{"name": "p", **pool}])


# ---- EBS: io1 and io2 need provisioned IOPS; each type's ranges and ratios ----------------------------------
# EC2 (CreateVolume / EbsBlockDevice, botocore 1.44.8): IOPS is required for io1 and io2, optional for gp3,
# refused for gp2; gp3 3,000-80,000 IOPS at most 500 per GiB and 125-2,000 MiB/s at most 0.25 per IOPS,
# io1 100-64,000 at most 50 per GiB, io2 100-256,000 at most 1,000 per GiB. Without IOPS an io1/io2 launch
# fails with InvalidParameterCombination, so the pool would apply and never launch a node.


@pytest.mark.parametrize("kind", ["io1", "io2"])
def test_io_volumes_need_iops(kind):
    assert pool_error(volume_type=kind) == (
        f"rack:additional_karpenter_nodepools_config[0].volume_iops: karpenter nodepool 'p': volume_type {kind} needs "
        f"volume_iops (EC2 refuses an {kind} volume without provisioned IOPS, so no node would launch)"
    )


@pytest.mark.parametrize("kind, disk, iops", [("io1", 100, 5000), ("io2", 20, 20000), ("gp3", 20, 10000)])
def test_iops_up_to_the_ratio_are_accepted(kind, disk, iops):
    spec = parse_rack_config(
        {
            "cluster_name": "c",
            "additional_karpenter_nodepools_config": [
                {"name": "p", "volume_type": kind, "disk": disk, "volume_iops": iops}
            ],
        }
    )
    assert spec.pools[1].volume_iops == iops


@pytest.mark.parametrize(
    "kind, disk, iops, most", [("io1", 100, 5001, 5000), ("io2", 20, 20001, 20000), ("gp3", 20, 10001, 10000)]
)
def test_iops_past_the_ratio_are_refused(kind, disk, iops, most):
    assert pool_error(volume_type=kind, disk=disk, volume_iops=iops).endswith(
        f"volume_iops {iops} is more than a {disk} GiB {kind} volume takes "
        f"({ {'io1': 50, 'io2': 1000, 'gp3': 500}[kind] } per GiB: at most {most}; grow disk or lower volume_iops)"
    )


@pytest.mark.parametrize("kind, low, high", [("io1", 99, 64001), ("io2", 99, 256001)])
def test_io_iops_ranges(kind, low, high):
    for iops in (low, high):
        assert pool_error(volume_type=kind, disk=16384, volume_iops=iops).endswith(
            f"invalid volume_iops '{iops}' (must be {low + 1}-{high - 1})"
        )


def test_gp3_throughput_follows_its_iops():
    # 3,000 IOPS (gp3's baseline) carry at most 750 MiB/s
    assert pool_error(volume_throughput=751).endswith(
        "volume_throughput 751 MiB/s needs more than 3000 IOPS (0.25 MiB/s per IOPS: at most 750; raise volume_iops)"
    )
    assert (
        parse_rack_config(
            {
                "cluster_name": "c",
                "additional_karpenter_nodepools_config": [
                    {"name": "p", "volume_throughput": 2000, "volume_iops": 8000, "disk": 20}
                ],
            }
        )
        .pools[1]
        .volume_throughput
        == 2000
    )
    assert pool_error(volume_type="io2", volume_iops=1000, volume_throughput=200).endswith(
        "volume_throughput requires volume_type gp3 (currently io2)"
    )


@pytest.mark.parametrize("kind", ["io1", "io2"])
def test_the_default_pool_cannot_use_io_volumes(kind):
    assert error(karpenter_node_volume_type=kind) == (
        f"rack:karpenter_node_volume_type: karpenter workload nodepool: volume_type {kind} needs provisioned IOPS, and "
        f"the default pool has no IOPS parameter (use gp3 or gp2, or an additional pool with volume_iops)"
    )


def test_an_io2_pool_renders_its_iops():
    pool = {"name": "db", "volume_type": "io2", "volume_iops": 16000, "disk": 100}
    run = run_rack(rack_config(additional_karpenter_nodepools_config=[pool]))
    (node_class,) = [r for r in run.resources if r.type == NODECLASS and r.inputs["metadata"]["name"] == "db"]
    ebs = node_class.inputs["spec"]["blockDeviceMappings"][0]["ebs"]
    assert (ebs["volumeType"], ebs["iops"], ebs["volumeSize"]) == ("io2", 16000, "100Gi")


# ---- the kubeconfig mints tokens for the stack's identity ------------------------------------------------------
# pulumi-eks's own kubeconfig (generateKubeconfig, nodejs/eks/cluster/cluster.ts) runs
# `aws --region <region> eks get-token --cluster-name <name> --output json`, the region read from the
# cluster's ARN, and adds `--profile <profile>` when the stack sets aws:profile.


def exec_of(run) -> dict[str, Any]:
    (provider,) = [r for r in run.resources if r.type == "pulumi:providers:kubernetes"]
    return json.loads(provider.inputs["kubeconfig"])["users"][0]["user"]["exec"]


def test_kubeconfig_passes_the_region_and_the_profile():
    run = run_rack({**rack_config(), "aws:region": "eu-west-1", "aws:profile": "prod-admin"})
    assert exec_of(run)["args"] == [
        "--region",
        "eu-west-1",
        "eks",
        "get-token",
        "--cluster-name",
        "test-rack",
        "--output",
        "json",
        "--profile",
        "prod-admin",
    ]


def test_kubeconfig_without_a_profile_uses_the_region_only():
    args = exec_of(run_rack(rack_config()))["args"]
    assert args[:2] == ["--region", "us-east-1"] and "--profile" not in args


# ---- node groups follow the cluster's version ------------------------------------------------------------------
# pulumi-eks (createManagedNodeGroup) defaults a node group's `version` to the cluster's only when no
# launch template is given, and drops `version` for a custom AMI. Our unpinned groups pass a launch
# template, so without an explicit version they would stay on their first kubelet after an upgrade
# (EKS never upgrades a node group by itself, and then blocks the next control-plane upgrade).


def test_an_unpinned_group_takes_the_existing_clusters_version():
    run = run_rack(rack_config(additional_node_groups_config=[{"id": 1, "type": "m5.large"}]))
    (group,) = [r for r in run.resources if r.type == MNG]
    assert group.inputs["version"] == "1.34"  # the offline engine's existing cluster runs 1.34
    assert "launchTemplate" in group.inputs


def test_a_pinned_group_leaves_the_version_to_its_ami():
    catalog = Catalog.from_doc(
        {
            "ebs_encryption_by_default": True,
            "amis": [
                {
                    "id": GPU_AMI,
                    "name": "custom-al2023",
                    "description": "AL2023",
                    "architecture": "x86_64",
                    "root_device_name": "/dev/xvda",
                    "root_snapshot_gib": 100,
                    "creation_date": "2026-11-15T00:00:00Z",
                    "owner_id": "111122223333",
                }
            ],
        }
    )
    run = run_rack(
        rack_config(additional_node_groups_config=[{"id": 1, "type": "g5.xlarge", "ami_id": GPU_AMI, "disk": 100}]),
        catalog,
    )
    (group,) = [r for r in run.resources if r.type == MNG]
    assert "version" not in group.inputs and group.inputs["amiId"] == GPU_AMI


def test_a_group_in_a_created_cluster_takes_that_clusters_version():
    def program() -> None:
        cluster = eks.Cluster("lab", authentication_mode=eks.AuthenticationMode.API, skip_default_node_group=True)
        NodeGroup(
            "lab-ng",
            NodeGroupArgs(group=NodeGroupSpec(instance_type="m5.large"), cluster=ClusterRef.created("lab", cluster)),
        )

    run = run_program(program, {"aws:region": "us-east-1"})
    (group,) = [r for r in run.resources if r.type == MNG]
    # the created cluster's version is its eks_cluster output: unknown until the cluster exists
    assert group.inputs["version"] == "<computed>"
    assert group.property_dependencies["version"] == [
        next(r.urn for r in run.resources if r.type == "eks:index:Cluster")
    ]


# ---- instance-family facts, against Karpenter's instance-type reference -----------------------------------------
# aws/karpenter-provider-aws website/content/en/preview/reference/instance-types.md at 1d927085 (v1.14.1 docs,
# tests/fixtures/instance-types): Karpenter labels each type, from EC2's DescribeInstanceTypes, with
# kubernetes.io/arch (amd64 or arm64), karpenter.k8s.aws/instance-gpu-manufacturer (nvidia, amd) and
# karpenter.k8s.aws/instance-accelerator-manufacturer (aws for Inferentia and Trainium, qualcomm, ...). The EKS
# AMI types follow from those: an NVIDIA GPU takes AL2023_<arch>_NVIDIA, an AWS Neuron device AL2023_x86_64_NEURON,
# anything else AL2023_<arch>_STANDARD (an AMD GPU too: no EKS AMI carries its driver).

UPSTREAM_FAMILIES = karpenter_families()


def upstream_ami_type(family: KarpenterFamily) -> str:
    arch = {"x86_64": "x86_64", "arm64": "ARM_64"}[family.arch]
    if family.gpu_manufacturer == "nvidia":
        return f"AL2023_{arch}_NVIDIA"
    return "AL2023_x86_64_NEURON" if family.accelerator_manufacturer == "aws" else f"AL2023_{arch}_STANDARD"


def test_the_reference_is_read_whole():
    assert len(UPSTREAM_FAMILIES) == 177 and sum(len(f.types) for f in UPSTREAM_FAMILIES.values()) == 1363
    assert {n for n, f in UPSTREAM_FAMILIES.items() if f.accelerator_manufacturer == "aws"} >= {"inf2", "trn1", "trn2"}


@pytest.mark.parametrize("name", sorted(UPSTREAM_FAMILIES))
def test_every_family_karpenter_lists_gets_its_architecture_gpu_and_ami_type(name):
    upstream = UPSTREAM_FAMILIES[name]
    fact = instances.facts(name)
    assert (fact.arch, fact.gpu, fact.neuron) == (
        upstream.arch,
        upstream.gpu_manufacturer,
        upstream.accelerator_manufacturer == "aws",
    )
    instance_type = upstream.types[0]
    assert instances.instance_arch(instance_type) == upstream.arch
    assert ami_type(instance_type) == upstream_ami_type(upstream)
    # the pack calls a node group on it a GPU lane exactly when its GPUs are NVIDIA's
    lane = bootfacts.read(contract.EKS_NODE_GROUP, "g", {"instanceTypes": [instance_type]})
    assert (checks.gpu_reason(lane) is not None) == (upstream.gpu_manufacturer == "nvidia")
    if upstream.gpu_manufacturer == "nvidia":
        group = NodeGroupSpec(instance_type=instance_type)
        assert group.node_labels()[contract.GPU_VENDOR_LABEL] == contract.GPU_VENDOR_NVIDIA
        assert {"key": contract.GPU_TAINT_KEY, "value": "true", "effect": "NO_SCHEDULE"} in group.node_taints()


@pytest.mark.parametrize("name", sorted(UPSTREAM_FAMILIES))
def test_every_family_karpenter_lists_comes_in_exactly_its_types(name):
    """The size table (generated from the same reference) knows each type Karpenter lists, and no other."""
    assert sorted(t.name for t in instances.sizes(name)) == sorted(UPSTREAM_FAMILIES[name].types)


@pytest.mark.parametrize(
    "family, arch",
    [
        ("p6e-gb200", "arm64"),
        ("g5g", "arm64"),
        ("m9g", "arm64"),
        ("c8gb", "arm64"),
        ("mac-m4", "arm64"),
        ("p6-b300", "x86_64"),
        ("g7e", "x86_64"),
        ("c7i-flex", "x86_64"),
        ("u7inh-32tb", "x86_64"),
        ("mac1", "x86_64"),
        ("m10g", "arm64"),  # not in the table yet: EC2's naming rule ('g' after the generation digit)
    ],
)
def test_architectures(family, arch):
    assert instances.instance_arch(f"{family}.xlarge") == arch


def test_p6e_gb200_gets_the_arm_nvidia_ami():
    """Grace hosts are arm64: the x86 NVIDIA AMI would not boot (amazon-eks-ami serves GB200 from arm64-nvidia)."""
    assert ami_type("p6e-gb200.36xlarge") == "AL2023_ARM_64_NVIDIA"


def test_neuron_by_name_and_amd_is_not_an_nvidia_lane():
    assert instances.is_neuron_family("trn3.48xlarge")  # Trainium3: not in botocore's enum yet
    assert not instances.is_nvidia_gpu_family("g4ad.xlarge") and instances.is_gpu_family("g4ad.xlarge")
    assert ami_type("g4ad.xlarge") == "AL2023_x86_64_STANDARD"  # no EKS AMI carries AMD's driver


def test_g7_runs_on_the_stock_ami_of_v20260917_and_later():
    """G7's RTX PRO 4500 needs NVIDIA driver 595 or newer; from release v20260917 the EKS AL2023 NVIDIA AMI
    carries two drivers and picks one per instance type (amazon-eks-ami #2768, PR #2808, PR #2819): the
    latest AMI (a node group's AMI type, al2023@latest) drives it, a pool pinned to an older release does not."""
    assert NodeGroupSpec(instance_type="g7.2xlarge").instance_type == "g7.2xlarge"
    assert PoolSpec(name="g", instance_families=["g7"]).instance_families == ["g7"]
    assert PoolSpec(name="g", instance_families=["g7"], ami_alias="al2023@v20260917").instance_families == ["g7"]
    with pytest.raises(
        ConfigError,
        match=r"the EKS-optimized AL2023 NVIDIA AMI of release v20260714 runs NVIDIA driver "
        r"580, which cannot drive instances the lane can launch: g7 needs NVIDIA driver "
        r"595 or newer",
    ):
        PoolSpec(name="g", instance_families=["g7", "g6"], ami_alias="al2023@v20260714")


@pytest.mark.parametrize(
    "spec", [lambda: NodeGroupSpec(instance_type="p2.xlarge"), lambda: PoolSpec(name="g", instance_families=["p2"])]
)
def test_p2_needs_a_custom_ami(spec):
    """P2's K80 needs driver 470 or older, which no EKS AL2023 NVIDIA AMI ships."""
    with pytest.raises(
        ConfigError,
        match=r"instance family p2 needs an NVIDIA driver the EKS-optimized AL2023 NVIDIA AMI does not ship",
    ):
        spec()


# ---- a pinned AMI's root device -----------------------------------------------------------------------------------


def root_sda1_catalog() -> Catalog:
    return Catalog.from_doc(
        {
            "ebs_encryption_by_default": True,
            "amis": [
                {
                    "id": "ami-0b0b0b0b0b0b0b0b0",
                    "name": "custom-al2023-sda1",
                    "description": "AL2023 built with another root device",
                    "architecture": "x86_64",
                    "root_device_name": "/dev/sda1",
                    "root_snapshot_gib": 30,
                    "creation_date": "2026-11-15T00:00:00Z",
                    "owner_id": "111122223333",
                }
            ],
        }
    )


def test_a_pool_sizes_the_amis_own_root_device():
    """Karpenter's mappings name devices: only the AMI's root device resizes the root volume."""
    pool = {"name": "sda", "ami_id": "ami-0b0b0b0b0b0b0b0b0", "disk": 60}
    run = run_rack(rack_config(additional_karpenter_nodepools_config=[pool]), root_sda1_catalog())
    (node_class,) = [r for r in run.resources if r.type == NODECLASS and r.inputs["metadata"]["name"] == "sda"]
    assert [m["deviceName"] for m in node_class.inputs["spec"]["blockDeviceMappings"]] == ["/dev/sda1"]


def test_a_node_group_refuses_an_ami_it_cannot_size():
    """pulumi-eks hard-codes /dev/xvda for an AL2023 launch template's disk (createMNGCustomLaunchTemplate):
    for an AMI booting from /dev/sda1 the disk would be a second volume and the root keep its snapshot size."""
    with pytest.raises(ConfigError) as caught:
        run_rack(
            rack_config(
                additional_node_groups_config=[{"id": 1, "type": "m5.large", "ami_id": "ami-0b0b0b0b0b0b0b0b0"}]
            ),
            root_sda1_catalog(),
        )
    assert str(caught.value) == (
        "rack:additional_node_groups_config[0].ami_id: node group 'rack-ng-1': ami_id 'ami-0b0b0b0b0b0b0b0b0' boots "
        "from /dev/sda1, but this lane sizes /dev/xvda "
        "(pin an AMI whose root device is /dev/xvda)"
    )


# ---- provider errors keep their whole reason ---------------------------------------------------------------------


def test_a_multi_line_provider_error_keeps_every_line():
    exc = Exception(
        "invoke of aws:ec2/getAmi:getAmi failed: operation error EC2: DescribeImages, https response error StatusCode: "
        "403\n"
        "api error UnauthorizedOperation: You are not authorized to perform this operation.\n"
        "User: arn:aws:sts::123456789012:assumed-role/ci/preview is not authorized"
    )
    assert provider_reason(exc) == (
        "operation error EC2: DescribeImages, https response error StatusCode: 403\n"
        "api error UnauthorizedOperation: You are not authorized to perform this operation.\n"
        "User: arn:aws:sts::123456789012:assumed-role/ci/preview is not authorized"
    )
    assert provider_reason(Exception("")) == "Exception"
