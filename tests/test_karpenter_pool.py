"""What each Karpenter pool registers, and the preview-time AMI checks."""

from __future__ import annotations

import pytest

from mixed_os_racks import contract
from mixed_os_racks import ConfigError
from mixed_os_racks import ClusterRef, KarpenterPool, KarpenterPoolArgs, PoolSpec
from mixed_os_racks.offline import Catalog, run_program

from conftest import ARM_AMI, GPU_AMI, NODECLASS, NODEPOOL, named, of_type, rack_config, run_rack

GPU_POOL = {
    "name": "gpu",
    "instance_families": "g5,g6",
    "ami_id": GPU_AMI,
    "disk": 200,
    "dedicated": True,
    "taints": "nvidia.com/gpu=true:NoSchedule",
    "labels": "team=ml",
    "volume_iops": 6000,
    "volume_throughput": 250,
    "weight": 10,
}


def test_default_al2023_pool(dev_run):
    spec = named(dev_run, NODECLASS, "workload").inputs["spec"]
    assert spec["amiFamily"] == "AL2023"
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    assert spec["role"] == "KarpenterNodeRole-dev-rack"
    assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "dev-rack"}}]
    assert spec["securityGroupSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "dev-rack"}}]
    assert spec["metadataOptions"]["httpTokens"] == "required"
    assert spec["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert spec["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {"volumeSize": "20Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True},
        }
    ]


def test_default_pool_nodepool(dev_run):
    pool = named(dev_run, NODEPOOL, "workload").inputs
    assert pool["apiVersion"] == "karpenter.sh/v1"
    spec = pool["spec"]
    template = spec["template"]["spec"]
    assert template["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "workload"}
    assert {r["key"]: (r["operator"], r.get("values")) for r in template["requirements"]} == {
        "kubernetes.io/os": ("In", ["linux"]),
        "kubernetes.io/arch": ("In", ["amd64"]),
        "karpenter.sh/capacity-type": ("In", ["on-demand", "spot"]),
        "karpenter.k8s.aws/instance-family": ("In", ["c6i", "m6i", "r6i"]),
        # not an accelerated lane: no GPU or accelerator instances
        "karpenter.k8s.aws/instance-gpu-count": ("DoesNotExist", None),
        "karpenter.k8s.aws/instance-accelerator-count": ("DoesNotExist", None),
    }
    assert template["expireAfter"] == "720h"
    assert "taints" not in template
    assert spec["template"]["metadata"]["labels"] == {"convox.io/nodepool": "workload"}
    assert spec["limits"] == {"cpu": "64", "memory": "256Gi"}
    assert spec["disruption"] == {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "30s",
        "budgets": [{"nodes": "10%"}],
    }
    assert "weight" not in spec


def test_bottlerocket_default_lane(prod_run):
    spec = named(prod_run, NODECLASS, "workload").inputs["spec"]
    assert spec["amiFamily"] == "Bottlerocket"
    assert spec["amiSelectorTerms"] == [{"alias": "bottlerocket@latest"}]
    assert [(m["deviceName"], m["ebs"]["volumeSize"], m["ebs"]["encrypted"]) for m in spec["blockDeviceMappings"]] == [
        ("/dev/xvda", "4Gi", True),
        ("/dev/xvdb", "50Gi", True),
    ]


def test_consolidation_disabled_means_when_empty():
    run = run_rack(rack_config(karpenter_consolidation_enabled="false"))
    assert named(run, NODEPOOL, "workload").inputs["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"


def test_ami_alias_applies_to_al2023_workload():
    run = run_rack(rack_config(karpenter_ami_alias="al2023@v20261115"))
    assert named(run, NODECLASS, "workload").inputs["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20261115"}]


def test_pinned_gpu_pool():
    run = run_rack(rack_config(karpenter_node_os="bottlerocket", additional_karpenter_nodepools_config=[GPU_POOL]))
    node_class = named(run, NODECLASS, "gpu").inputs
    spec = node_class["spec"]
    assert spec["amiFamily"] == "AL2023"
    assert spec["amiSelectorTerms"] == [{"id": GPU_AMI}]
    assert spec["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": "200Gi",
                "volumeType": "gp3",
                "encrypted": True,
                "deleteOnTermination": True,
                "iops": 6000,
                "throughput": 250,
            },
        }
    ]
    assert node_class["metadata"]["annotations"] == {contract.ROOT_SNAPSHOT_ANNOTATION: "100"}

    pool = named(run, NODEPOOL, "gpu").inputs["spec"]
    labels = pool["template"]["metadata"]["labels"]
    assert labels == {"team": "ml", "convox.io/gpu-vendor": "nvidia", "convox.io/nodepool": "gpu"}
    assert pool["template"]["spec"]["taints"] == [
        {"key": "dedicated-node", "value": "gpu", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
    ]
    assert pool["weight"] == 10
    # the pinned AMI changes only its own pool
    assert named(run, NODECLASS, "workload").inputs["spec"]["amiFamily"] == "Bottlerocket"


def test_nodepool_label_always_wins():
    run = run_rack(rack_config(karpenter_node_labels="team=web"))
    assert named(run, NODEPOOL, "workload").inputs["spec"]["template"]["metadata"]["labels"] == {
        "team": "web",
        "convox.io/nodepool": "workload",
    }


def test_unknown_ami_is_a_clear_error():
    pool = dict(GPU_POOL, ami_id="ami-0123456789abcdef0")
    with pytest.raises(ConfigError) as exc:
        run_rack(rack_config(additional_karpenter_nodepools_config=[pool]))
    assert str(exc.value).startswith(
        "rack:additional_karpenter_nodepools_config[0].ami_id: "
        "karpenter nodepool 'gpu': ami_id 'ami-0123456789abcdef0' cannot be read in this region/account (Your query "
        "returned no results"
    )


def test_arch_mismatch_is_refused():
    pool = dict(GPU_POOL, ami_id=ARM_AMI)
    with pytest.raises(
        ConfigError, match=r"karpenter nodepool 'gpu': arch x86_64 does not match ami-0f0e0d0c0b0a09080, which is arm64"
    ):
        run_rack(rack_config(additional_karpenter_nodepools_config=[pool]))


def test_arm_pool_on_arm_ami_is_fine():
    pool = {"name": "arm", "instance_families": "m7g", "arch": "arm64", "ami_id": ARM_AMI}
    run = run_rack(rack_config(additional_karpenter_nodepools_config=[pool]))
    assert named(run, NODECLASS, "arm").inputs["metadata"]["annotations"] == {contract.ROOT_SNAPSHOT_ANNOTATION: "20"}


def test_disk_smaller_than_snapshot_is_refused():
    pool = dict(GPU_POOL, disk=50)
    with pytest.raises(ConfigError) as exc:
        run_rack(rack_config(additional_karpenter_nodepools_config=[pool]))
    assert (
        str(exc.value)
        == f"rack:additional_karpenter_nodepools_config[0].disk: karpenter nodepool 'gpu': disk 50 GiB is smaller than "
        f"the root snapshot of {GPU_AMI} (100 GiB); give it a disk of 100 GiB or more"
    )


def test_disk_equal_to_snapshot_is_fine():
    run = run_rack(rack_config(additional_karpenter_nodepools_config=[dict(GPU_POOL, disk=100)]))
    assert named(run, NODECLASS, "gpu").inputs["spec"]["blockDeviceMappings"][0]["ebs"]["volumeSize"] == "100Gi"


class CountingCatalog(Catalog):
    def __init__(self) -> None:
        base = Catalog.load()
        super().__init__(base.amis, base.source)
        self.lookups: list[str] = []

    def get(self, ami_id):
        self.lookups.append(ami_id)
        return super().get(ami_id)


def test_each_ami_is_looked_up_once():
    catalog = CountingCatalog()
    pools = [dict(GPU_POOL, name=f"gpu-{n}") for n in range(5)] + [
        {"name": "arm", "instance_families": "m7g", "arch": "arm64", "ami_id": ARM_AMI}
    ]
    run_rack(rack_config(additional_karpenter_nodepools_config=pools), catalog)
    assert sorted(catalog.lookups) == sorted([GPU_AMI, ARM_AMI])


def test_reordering_pools_changes_no_urn():
    pools = [GPU_POOL, {"name": "batch", "instance_families": "c7i"}, {"name": "arm", "arch": "arm64"}]
    first = run_rack(rack_config(additional_karpenter_nodepools_config=pools))
    second = run_rack(rack_config(additional_karpenter_nodepools_config=list(reversed(pools))))
    assert {r.urn: r.inputs for r in first.resources} == {r.urn: r.inputs for r in second.resources}


def test_changing_one_pool_touches_no_other():
    pools = [GPU_POOL, {"name": "batch", "instance_families": "c7i"}]
    before = run_rack(rack_config(additional_karpenter_nodepools_config=pools))
    after = run_rack(rack_config(additional_karpenter_nodepools_config=[dict(GPU_POOL, disk=300), pools[1]]))
    changed = {r.urn for r in before.resources} ^ {r.urn for r in after.resources}
    assert not changed
    old = {r.urn: r.inputs for r in before.resources}
    differs = sorted(r.name for r in after.resources if old[r.urn] != r.inputs)
    assert differs == ["rack-gpu-nodeclass"]


def test_every_kubernetes_object_goes_through_the_rack_provider(prod_run):
    (provider,) = of_type(prod_run, "pulumi:providers:kubernetes")
    for res in of_type(prod_run, NODECLASS) + of_type(prod_run, NODEPOOL):
        assert res.provider.startswith(provider.urn + "::")
        assert res.custom


def test_component_used_alone():
    """The component imported into another program, without the Rack."""
    import pulumi

    from mixed_os_racks import ClusterRef, KarpenterPool, KarpenterPoolArgs, PoolSpec
    from mixed_os_racks.offline import run_program

    def program():
        cluster = ClusterRef.existing("other", "other")
        pool = KarpenterPool(
            "ml",
            KarpenterPoolArgs(
                pool=PoolSpec(name="ml", instance_families=["g6"], ami_id=GPU_AMI, disk=120), cluster=cluster
            ),
        )
        pulumi.export("nodePool", pool.node_pool_name)
        pulumi.export("labels", pool.labels)

    run = run_program(program, {})
    assert sorted(r.type for r in run.resources) == sorted(
        ["pulumi:pulumi:Stack", "pulumi:providers:kubernetes", "rack:index:KarpenterPool", NODECLASS, NODEPOOL]
    )
    assert named(run, NODECLASS, "ml").inputs["spec"]["role"] == "KarpenterNodeRole-other"
    assert run.outputs == {"nodePool": "ml", "labels": {"convox.io/gpu-vendor": "nvidia", "convox.io/nodepool": "ml"}}


def test_the_spec_refuses_gpu_on_bottlerocket():
    """The rule holds whatever builds the pool: the spec refuses it before any component exists."""
    from mixed_os_racks import PoolSpec

    with pytest.raises(
        ConfigError,
        match=r"^PoolSpec.os: karpenter nodepool 'bad': instance families g5 make this a GPU lane, "
        r".* not Bottlerocket \(set os 'al2023', or move them to an AL2023 pool or node group\)$",
    ):
        PoolSpec(name="bad", os="bottlerocket", instance_families=["g5"])


def test_pool_spec_validates_like_the_stack_config():
    from mixed_os_racks import PoolSpec

    with pytest.raises(ConfigError, match=r"^PoolSpec.ami_id: karpenter nodepool 'ml': invalid ami_id 'ami-XYZ'"):
        PoolSpec(name="ml", ami_id="ami-XYZ")
    with pytest.raises(ConfigError, match=r"karpenter workload nodepool: invalid capacity type 'dedicated'"):
        PoolSpec(name="workload", capacity_types=["dedicated"])
    assert PoolSpec(name="workload", os="bottlerocket").subject == "karpenter workload nodepool"


# ---- which lanes may launch accelerated instances ---------- ------------------------------------------------

NO_ACCELERATORS = [
    {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"},
    {"key": "karpenter.k8s.aws/instance-accelerator-count", "operator": "DoesNotExist"},
]


def requirements_of(run, name):
    return named(run, NODEPOOL, name).inputs["spec"]["template"]["spec"]["requirements"]


def test_the_bottlerocket_default_lane_never_launches_an_accelerated_instance(prod_run):
    """Karpenter labels GPU and accelerator counts only on instance types that have them, and treats an
    absent label as DoesNotExist (karpenter-provider-aws pkg/apis/v1/labels.go, instance-type labels):
    with no families the Bottlerocket lane could otherwise launch a GPU instance for a pod that asks for
    nvidia.com/gpu, and Bottlerocket GPU lanes are refused."""
    requirements = requirements_of(prod_run, "workload")
    assert all(r in requirements for r in NO_ACCELERATORS)
    run = run_rack(rack_config(karpenter_node_os="bottlerocket"))  # no families at all
    assert all(r in requirements_of(run, "workload") for r in NO_ACCELERATORS)


def test_an_al2023_lane_offers_accelerators_only_when_it_lists_them():
    pools = [
        {"name": "gpu", "instance_families": "g5,g6"},
        {"name": "neuron", "instance_families": "inf2"},
        {"name": "any"},
        {"name": "cpu", "instance_families": "c7i"},
    ]
    run = run_rack(rack_config(additional_karpenter_nodepools_config=pools))
    for name in ("gpu", "neuron"):
        assert not [r for r in requirements_of(run, name) if r in NO_ACCELERATORS], name
    for name in ("any", "cpu", "workload"):
        assert all(r in requirements_of(run, name) for r in NO_ACCELERATORS), name


@pytest.mark.parametrize(
    "tags, problem",
    [
        ({"karpenter.sh/nodepool": "x"}, "tags: tag key 'karpenter.sh/nodepool' is Karpenter's own"),
        ({"karpenter.sh/discovery": "other"}, "tags: reserved tag key 'karpenter.sh/discovery' is not allowed"),
        ({f"k{n}": "v" for n in range(44)}, "tags: at most 43 tags (AWS takes 50; Karpenter with the pool adds 7)"),
    ],
)
def test_a_pools_tags_are_what_the_ec2nodeclass_and_ec2_take(tags, problem):
    """The EC2NodeClass CRD refuses Karpenter's own tag keys; an instance carries the class's tags and
    five of Karpenter's, 50 at most."""

    def program() -> None:
        KarpenterPool(
            "rack-gpu",
            KarpenterPoolArgs(pool=PoolSpec(name="gpu"), cluster=ClusterRef.existing("rack", "c"), tags=tags),
        )

    with pytest.raises(ConfigError) as refused:
        run_program(program, {"aws:region": "us-east-1"})
    assert str(refused.value).startswith(f"KarpenterPool 'rack-gpu': {problem}")


def test_a_pinned_ami_whose_nvidia_driver_cannot_drive_the_pools_families_is_refused():
    """The prod GPU AMI of the catalog names its branch (``...-nvidia-580-...``): G7 needs 595 or newer
    (amazon-eks-ami doc/usage/g7-ami.md); the pack's gpu-driver-supports-lane says the same words."""
    pool = dict(GPU_POOL, name="g7", instance_families="g7", ami_id=GPU_AMI)
    with pytest.raises(
        ConfigError,
        match=r"^rack:additional_karpenter_nodepools_config\[0\].ami_id: karpenter nodepool 'g7': "
        r"its AMI ami-0a1b2c3d4e5f60718 runs NVIDIA driver 580 \(its name\), which cannot drive instances the lane can "
        r"launch: g7 needs NVIDIA "
        r"driver 595 or newer",
    ):
        run_rack(rack_config(additional_karpenter_nodepools_config=[pool]))
    run_rack(
        rack_config(additional_karpenter_nodepools_config=[dict(GPU_POOL, ami_id=GPU_AMI)])
    )  # g5, g6: 580 drives them


def test_the_driver_is_checked_against_the_families_of_the_pools_instance_types_too():
    # a pool of instance_types ["g7.2xlarge"] launches g7 as instance_families ["g7"] does
    def program() -> None:
        KarpenterPool(
            "g7",
            KarpenterPoolArgs(
                pool=PoolSpec(name="g7", instance_types=["g7.2xlarge"], ami_id=GPU_AMI, disk=200),
                cluster=ClusterRef.existing("rack", "c"),
            ),
        )

    with pytest.raises(
        ConfigError,
        match=r"^PoolSpec.ami_id: karpenter nodepool 'g7': its AMI ami-0a1b2c3d4e5f60718 runs "
        r"NVIDIA driver 580 ",
    ):
        run_program(program, {"aws:region": "us-east-1"})
