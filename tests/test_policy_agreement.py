"""The components and the pack agree: what a component refuses, the pack refuses, in the same words.

For every rule a component enforces at construction, the test builds the resources that component
would have registered (its own ``node_class_spec``/``node_pool_spec``, or the node class the user
asked for), sends them through the pack's gRPC server, and compares the pack's message with the
component's error. The pack learns the AMI facts the component read from ``aws.ec2.get_ami``
through its policy config, as a CI run would.
"""

from __future__ import annotations

from typing import Any, Callable

import pulumi
import pulumi_kubernetes as k8s
import pytest

from mixed_os_racks import ClusterRef, ConfigError, PoolSpec, parse_rack_config
from mixed_os_racks.spec import SpecError
from mixed_os_racks.karpenter import KarpenterPool, KarpenterPoolArgs, node_class_spec, node_pool_spec
from mixed_os_racks.offline import Catalog, run_program
from conftest import ARM_AMI, GPU_AMI, rack_config, run_rack
from policy_helpers import judge, start_pack

CLUSTER, ROLE = "test-rack", "KarpenterNodeRole-test-rack"


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:
        yield running


def catalog_config() -> dict[str, Any]:
    """What the component knows from aws.ec2.get_ami, handed to the pack as policy config."""
    amis = {
        ami.id: {
            "name": ami.name,
            "description": ami.description,
            "architecture": ami.architecture,
            "rootDeviceName": ami.root_device_name,
            "rootSnapshotGiB": ami.root_snapshot_gib,
        }
        for ami in Catalog.load().amis.values()
    }
    return {policy: {"amis": amis} for policy in ("al2023-family", "disk-fits-ami-snapshot", "arch-matches-ami")}


def as_built(pool: PoolSpec, family: str | None = None, keep_accelerators: bool = False) -> Callable[[], None]:
    """The EC2NodeClass and NodePool ``KarpenterPool`` registers for ``pool`` (``family`` overrides
    amiFamily; ``keep_accelerators`` drops the requirements that keep accelerated instances out)."""

    def program() -> None:
        spec = node_class_spec(pool, CLUSTER, ROLE)
        if family is not None:
            spec = {**spec, "amiFamily": family}
        node_class = k8s.apiextensions.CustomResource(
            f"rack-{pool.name}-nodeclass",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata={"name": pool.name},
            spec=spec,
        )
        pool_spec = node_pool_spec(pool)
        if keep_accelerators:
            requirements = pool_spec["template"]["spec"]["requirements"]
            pool_spec["template"]["spec"]["requirements"] = [r for r in requirements if r["operator"] != "DoesNotExist"]
        k8s.apiextensions.CustomResource(
            f"rack-{pool.name}-nodepool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": pool.name},
            spec=pool_spec,
            opts=pulumi.ResourceOptions(depends_on=[node_class]),
        )

    return program


def component_error(pool: PoolSpec) -> str:
    def program() -> None:
        KarpenterPool(f"rack-{pool.name}", KarpenterPoolArgs(pool=pool, cluster=ClusterRef.existing("rack", CLUSTER)))

    with pytest.raises(ConfigError) as refused:
        run_program(program, rack_config())
    field, said = str(refused.value).split(
        ": ", 1
    )  # the component names the spec's field first: the rule's words follow
    assert field in {"PoolSpec.arch", "PoolSpec.disk", "PoolSpec.ami_id"}, field
    return said


def spec_error(**fields: Any) -> tuple[str, PoolSpec]:
    """What ``PoolSpec`` says of these fields (the rule's own message), and the pool built past it."""
    with pytest.raises(SpecError) as refused:
        PoolSpec(**fields)
    (line,) = str(refused.value).splitlines()
    return line.split(": ", 1)[1], PoolSpec.model_construct(**{**PoolSpec(name=fields["name"]).model_dump(), **fields})


def pack_says(pack, program: Callable[[], None], policy: str) -> list[str]:
    return [
        v["message"]
        for v in judge(pack, program, catalog_config())
        if v["policy"] == policy and v["level"] == "mandatory"
    ]


GPU = dict(name="gpu", instance_families=["g5", "g6"], ami_id=GPU_AMI, disk=200)


def test_malformed_ami_id(pack):
    with pytest.raises(ConfigError) as refused:
        parse_rack_config(
            {"cluster_name": CLUSTER, "additional_karpenter_nodepools_config": [dict(GPU, ami_id="ami-XYZ")]}
        )
    pool = PoolSpec.model_construct(
        **{**PoolSpec(**GPU).model_dump(), "ami_id": "ami-XYZ"}
    )  # past the config's own check
    said = pack_says(pack, as_built(pool), "ami-id-format")
    assert said == ["karpenter nodepool 'gpu': invalid ami_id 'ami-XYZ' (must look like ami-0123456789abcdef0)"]
    assert str(refused.value) == f"rack:additional_karpenter_nodepools_config[0].ami_id: {said[0]}"


def test_gpu_lane_on_bottlerocket(pack):
    refused_spec, pool = spec_error(name="workload", os="bottlerocket", instance_families=["m6i", "g5"])
    with pytest.raises(ConfigError) as refused:
        parse_rack_config(
            {"cluster_name": CLUSTER, "karpenter_node_os": "bottlerocket", "karpenter_instance_families": "m6i,g5"}
        )
    # A Bottlerocket pool is built with `instance-gpu-count`/`instance-accelerator-count DoesNotExist`, so
    # as built it can launch no g5: the pack rightly passes it. Written by hand without those exclusions
    # (as a user's own manifest would be), the same pool is a GPU lane and both refuse it in the same words.
    assert pack_says(pack, as_built(pool), "gpu-lane-os") == []
    (said,) = pack_says(pack, as_built(pool, keep_accelerators=True), "gpu-lane-os")
    # the same rule in the same words; each names the fix where it is: the pack's resources, the spec's os
    rule = said.removesuffix("(move them to an AL2023 pool or node group)")
    assert rule != said and refused_spec == rule + "(set os 'al2023', or move them to an AL2023 pool or node group)"
    assert (
        str(refused.value)
        == f"rack:karpenter_node_os: {rule}(set karpenter_node_os 'al2023', or move them to an AL2023 pool or node "
        f"group)"
    )


def test_pinned_ami_off_al2023(pack):
    refused_spec, _ = spec_error(name="gpu", os="bottlerocket", ami_id=GPU_AMI, disk=200)
    said = pack_says(pack, as_built(PoolSpec(**GPU), family="Bottlerocket"), "al2023-family")
    assert said == [refused_spec]


def test_arch_mismatch(pack):
    pool = PoolSpec(**dict(GPU, ami_id=ARM_AMI, instance_families=["m6i"], arch=["amd64"]))
    said = pack_says(pack, as_built(pool), "arch-matches-ami")
    assert said == [component_error(pool)]


def test_disk_below_snapshot(pack):
    pool = PoolSpec(**dict(GPU, disk=50))
    said = pack_says(pack, as_built(pool), "disk-fits-ami-snapshot")
    assert said == [component_error(pool)]


def test_what_the_components_accept_the_pack_accepts(pack):
    pools = [GPU, dict(name="arm", instance_families=["m7g"], arch=["arm64"], ami_id=ARM_AMI, disk=20)]
    run = run_rack(rack_config(additional_karpenter_nodepools_config=pools, karpenter_node_os="bottlerocket"))
    assert judge(pack, run, catalog_config()) == []


# ---- managed node groups: the component's subject is the pack's (``node group '<name>'``) -------------

PINNED = "ami-0c0c0c0c0c0c0c0c0"


def pinned_catalog(snapshot_gib: int, architecture: str) -> Catalog:
    return Catalog.from_doc(
        {
            "amis": [
                {
                    "id": PINNED,
                    "name": "amazon-eks-node-al2023-x86_64-nvidia-1.33-v20261115",
                    "description": "EKS-optimized Kubernetes node based on Amazon Linux 2023",
                    "architecture": architecture,
                    "root_device_name": "/dev/xvda",
                    "root_snapshot_gib": snapshot_gib,
                    "root_snapshot_encrypted": True,
                    "creation_date": "2026-11-15T00:00:00Z",
                    "owner_id": "111122223333",
                }
            ]
        }
    )


def node_group_config(disk: int) -> dict[str, Any]:
    return rack_config(additional_node_groups_config=[{"id": 1, "type": "g5.xlarge", "ami_id": PINNED, "disk": disk}])


def node_group_error(catalog: Catalog, disk: int) -> str:
    with pytest.raises(ConfigError) as refused:
        run_rack(node_group_config(disk), catalog)
    key, said = str(refused.value).split(": ", 1)  # the stack-config key first: the rule's words follow
    assert key in {"rack:additional_node_groups_config[0].disk", "rack:additional_node_groups_config[0].type"}, key
    return said


def test_node_group_disk_below_snapshot(pack):
    component = node_group_error(pinned_catalog(100, "x86_64"), disk=50)
    # the same group, built where the component's look-up saw a 20 GiB snapshot; the pack is told 100
    built = run_rack(node_group_config(disk=50), pinned_catalog(20, "x86_64"))
    said = [
        v["message"]
        for v in judge(pack, built, {"disk-fits-ami-snapshot": {"amiRootSnapshotGiB": {PINNED: 100}}})
        if v["policy"] == "disk-fits-ami-snapshot" and v["level"] == "mandatory"
    ]
    assert said == [component]


def test_node_group_arch_mismatch(pack):
    component = node_group_error(pinned_catalog(20, "arm64"), disk=50)
    built = run_rack(node_group_config(disk=50), pinned_catalog(20, "x86_64"))
    said = [
        v["message"]
        for v in judge(pack, built, {"arch-matches-ami": {"amis": {PINNED: {"architecture": "arm64"}}}})
        if v["policy"] == "arch-matches-ami" and v["level"] == "mandatory"
    ]
    assert said == [component]
