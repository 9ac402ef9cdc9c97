"""Day 2: what a second ``pulumi up``, a ``pulumi destroy`` or a config EKS, EC2 or Karpenter would
refuse later does to a rack.

Upstream facts these tests pin (read in the sources named):

- pulumi-eks ``ManagedNodeGroup`` ``ignoreScalingChanges`` puts ``ignoreChanges:
  ["scalingConfig.desiredSize"]`` on the ``aws.eks.NodeGroup`` it creates (nodejs/eks/nodes/nodegroup.ts):
  the engine then sends the old desired size with any new bounds. EKS's ``UpdateNodegroupConfig``
  takes a desired size only between the minimum and the maximum, so new bounds that leave the old
  desired size outside are refused.
- Pulumi deletes a resource only after every resource that depends on it (its ``dependencies``), and a
  component's children before the component (pkg/resource/graph ``DependingOn``).
- Karpenter's EC2NodeClass CRD (v1.14.1): ``node.kubernetes.io/instance-type`` is a well-known label a
  NodePool requirement may restrict with ``In``.
- Karpenter's v1.14 compatibility matrix (karpenter-provider-aws website/content/en/v1.14/upgrading/
  compatibility.md) ends at Kubernetes 1.36.
- EKS refuses a cluster whose subnets are in one Availability Zone ("Subnets specified must be in at
  least two different AZs", the EKS user guide's network requirements).
- nodeadm (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go) reserves for the kubelet 6% of the
  first core, 1% of the second, 0.5% of the third and fourth, 0.25% of the rest, and ``11 * maxPods +
  255`` MiB, with a hard eviction at 100Mi of memory available.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import rack_config, run_rack, stack_config
from mixed_os_racks import ConfigError, parse_rack_config
from mixed_os_racks.cli import main
from mixed_os_racks.karpenter_controller import CONTROLLER_RESOURCES
from mixed_os_racks.offline import Catalog, CatalogError, ProgramRun, Resource
from mixed_os_racks.facts import instances, upstream
from mixed_os_racks.pack import fit
from mixed_os_racks.spec.rack import system_node_fit_problem

PRIVATE = ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712", "subnet-0a1b2c3d4e5f60713"]
CREATE = dict(cluster_mode="create", vpc_id="vpc-0a1b2c3d4e5f60718", private_subnets_ids=",".join(PRIVATE))
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def only(run: ProgramRun, type_: str, name: str) -> Resource:
    found = [r for r in run.resources if r.type == type_ and r.name == name]
    assert len(found) == 1, (type_, name, [r.name for r in found])
    return found[0]


def error(**values: Any) -> str:
    values.setdefault("cluster_name", "c")
    with pytest.raises(ConfigError) as caught:
        parse_rack_config(values)
    return str(caught.value)


def refused(capsys, tmp_path: Path, values: dict[str, Any], catalog: Path | None = None) -> list[str]:
    """The offline CLI's error lines for a stack of these ``rack:`` values (it must exit 2)."""
    import yaml

    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yaml.safe_dump({"config": rack_config(**values)}))
    code = main(["preview", "--config", str(path), "--no-policy", *(["--amis", str(catalog)] if catalog else [])])
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, ""), captured.err
    assert "Traceback" not in captured.err
    return captured.err.splitlines()


# ---- 4. toggling high_availability ---------------------------------------------------------------------------


def sent_scaling(before: Resource, after: Resource) -> dict[str, int]:
    """The scaling config the engine sends on an update from ``before`` to ``after``: an ignored
    property keeps its old value."""
    sent = dict(after.inputs["scalingConfig"])
    if "scalingConfig.desiredSize" in after.ignore_changes:
        sent["desiredSize"] = before.inputs["scalingConfig"]["desiredSize"]
    return sent


@pytest.mark.parametrize("first, second", [(True, False), (False, True)])
def test_toggling_high_availability_sends_a_desired_size_eks_accepts(first, second):
    before = only(run_rack(rack_config(**CREATE, high_availability=first)), NODE_GROUP, "rack-system")
    after = only(run_rack(rack_config(**CREATE, high_availability=second)), NODE_GROUP, "rack-system")
    sent = sent_scaling(before, after)
    size = 3 if second else 1
    assert sent == {"minSize": size, "maxSize": size, "desiredSize": size}
    assert sent["minSize"] <= sent["desiredSize"] <= sent["maxSize"]


def test_a_group_with_room_to_scale_leaves_its_desired_size_to_the_autoscaler():
    run = run_rack(
        rack_config(
            **CREATE,
            additional_node_groups_config=[
                {"id": 1, "type": "m5.large", "min_size": 1, "max_size": 5},
                {"id": 2, "type": "m5.large", "min_size": 2, "max_size": 2},
            ],
        )
    )
    assert only(run, NODE_GROUP, "rack-ng-1").ignore_changes == ["scalingConfig.desiredSize"]
    assert only(run, NODE_GROUP, "rack-ng-2").ignore_changes == []  # fixed size: Pulumi owns it
    assert only(run, NODE_GROUP, "rack-system").ignore_changes == []


# ---- 7. destroy order --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def created() -> ProgramRun:
    return run_rack(
        rack_config(**CREATE, additional_karpenter_nodepools_config=[{"name": "gpu", "instance_families": "g5"}])
    )


def test_coredns_and_the_pod_identity_agent_outlive_karpenter_and_every_pool(created):
    addons = {
        only(created, "aws:eks/addon:Addon", name).urn for name in ("rack-coredns", "rack-eks-pod-identity-agent")
    }
    karpenter = [r for r in created.resources if r.type == "kubernetes:helm.sh/v4:Chart" and "karpenter" in r.name]
    pools = [
        r
        for r in created.resources
        if r.type in ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:karpenter.sh/v1:NodePool")
    ]
    assert len(karpenter) == 2 and len(pools) == 4
    for resource in karpenter + pools:  # each depends on both add-ons: destroyed before them
        assert addons <= set(resource.dependencies), resource.name


# ---- 8. build_node_type ----------------------------------------------------------------------------------------


def test_the_build_pool_allows_exactly_the_listed_types():
    run = run_rack(rack_config(build_node_enabled=True, build_node_type="c5.large,m5.2xlarge"))
    pool = next(
        r
        for r in run.resources
        if r.type == "kubernetes:karpenter.sh/v1:NodePool" and r.inputs["metadata"]["name"] == "build"
    )
    requirements = {r["key"]: r for r in pool.inputs["spec"]["template"]["spec"]["requirements"]}
    assert requirements["node.kubernetes.io/instance-type"] == {
        "key": "node.kubernetes.io/instance-type",
        "operator": "In",
        "values": ["c5.large", "m5.2xlarge"],
    }
    # no family or size requirement that would also let c5.2xlarge and m5.large in
    assert "karpenter.k8s.aws/instance-family" not in requirements
    assert "karpenter.k8s.aws/instance-size" not in requirements


@pytest.mark.parametrize(
    "types, expected",
    [
        ("c5.large,c5", "rack:build_node_type[1]: karpenter nodepool 'build': invalid instance type 'c5'"),
        ("c5.large,c5.large", "rack:build_node_type: karpenter nodepool 'build': duplicate instance type 'c5.large'"),
        (
            "c5.large,g5.xlarge",
            "rack:build_node_type: karpenter nodepool 'build': instance families mix GPU families (g5)",
        ),
    ],
)
def test_build_types_are_checked_each_once(types, expected):
    message = error(build_node_enabled=True, build_node_type=types)
    assert message.startswith(expected), message
    assert len(message.splitlines()) == 1


# ---- 11. the cluster's subnets ---------------------------------------------------------------------------------


def test_one_subnet_is_refused_at_once():
    assert error(**{**CREATE, "private_subnets_ids": PRIVATE[0]}) == (
        "rack:private_subnets_ids: at least two subnets, in two Availability Zones (EKS refuses a cluster in one "
        "zone; got 1)"
    )


def test_more_subnets_than_a_node_class_selects_are_refused():
    many = ",".join(f"subnet-0a1b2c3d4e5f607{n:02d}" for n in range(31))
    assert error(**{**CREATE, "private_subnets_ids": many}).startswith("rack:private_subnets_ids: at most 30 subnets")


def catalog_file(tmp_path: Path, subnets: dict[str, str]) -> Path:
    import yaml

    doc = yaml.safe_load(Path(Catalog.load().source).read_text())
    doc["subnets"] = subnets
    path = tmp_path / "amis.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_subnets_in_one_zone_are_refused_at_preview(capsys, tmp_path):
    catalog = catalog_file(tmp_path, {PRIVATE[0]: "us-east-1a", PRIVATE[1]: "us-east-1a"})
    lines = refused(capsys, tmp_path, {**CREATE, "private_subnets_ids": ",".join(PRIVATE[:2])}, catalog)
    assert lines == [
        f"error: {tmp_path / 'Pulumi.t.yaml'}:5: rack:private_subnets_ids: subnets {PRIVATE[0]}, {PRIVATE[1]} are all "
        f"in us-east-1a: EKS "
        "needs the cluster's subnets in at least two Availability Zones (add a subnet of another zone)"
    ]


def test_a_subnet_ec2_does_not_know_is_refused_at_preview(capsys, tmp_path):
    catalog = catalog_file(tmp_path, {PRIVATE[0]: "us-east-1a", PRIVATE[1]: "eu-west-1b"})  # another region's
    (line,) = refused(capsys, tmp_path, {**CREATE, "private_subnets_ids": ",".join(PRIVATE[:2])}, catalog)
    assert line.startswith(
        f"error: {tmp_path / 'Pulumi.t.yaml'}:5: rack:private_subnets_ids: subnet '{PRIVATE[1]}' cannot be read in "
        f"this "
        "region/account (no matching EC2 Subnet found"
    )


def test_the_component_refuses_one_zone_too():
    # a program that builds the cluster itself, with no stack config: the component checks the zones
    from mixed_os_racks.eks import RackCluster, RackClusterArgs
    from mixed_os_racks.offline import run_program
    from mixed_os_racks.spec import ClusterSpec

    catalog = Catalog.from_doc(
        {"subnets": {PRIVATE[0]: "us-east-1a", PRIVATE[1]: "us-east-1a", PRIVATE[2]: "us-east-1b"}}
    )

    def program(subnets: list[str]) -> Any:
        spec = ClusterSpec(name="c", vpc_id="vpc-0a1b2c3d4e5f60718", private_subnet_ids=subnets)
        return lambda: RackCluster("c", RackClusterArgs(spec=spec))

    with pytest.raises(ConfigError) as caught:
        run_program(program(PRIVATE[:2]), {"aws:region": "us-east-1"}, catalog)
    assert str(caught.value).startswith(
        f"cluster 'c': private_subnet_ids: subnets {PRIVATE[0]}, {PRIVATE[1]} are all in us-east-1a"
    )
    run = run_program(program(PRIVATE[1:]), {"aws:region": "us-east-1"}, catalog)
    assert only(run, "eks:index:Cluster", "c").inputs["privateSubnetIds"] == PRIVATE[1:]


@pytest.mark.parametrize(
    "subnets, says",
    [
        ({"subnet-xyz": "us-east-1a"}, "subnets: 'subnet-xyz' is not a subnet id"),
        ({PRIVATE[0]: "east"}, f"subnets: {PRIVATE[0]}: 'east' is not an Availability Zone name"),
        ({PRIVATE[0]: 1}, "subnets"),
        ([PRIVATE[0]], "subnets"),
    ],
)
def test_the_catalogs_subnets_are_validated(subnets, says):
    with pytest.raises(CatalogError) as caught:
        Catalog.from_doc({"subnets": subnets})
    assert says in str(caught.value), str(caught.value)


def test_local_zones_belong_to_their_region():
    catalog = Catalog.from_doc({"subnets": {PRIVATE[0]: "us-east-1-bos-1a", PRIVATE[1]: "us-east-11a"}})
    assert catalog.zone_of(PRIVATE[0], "us-east-1") == "us-east-1-bos-1a"
    assert catalog.zone_of(PRIVATE[1], "us-east-1") is None  # a zone of us-east-11, were there one


# ---- 12. k8s_version and Karpenter's compatibility matrix ----------------------------------------------------


def test_a_kubernetes_newer_than_karpenter_supports_is_refused():
    # Karpenter's compatibility matrix (website/content/en/v1.15/upgrading/compatibility.md at d77d1a3a,
    # tests/fixtures/compatibility/v1.15.md): 1.15.x supports Kubernetes up to 1.37
    newest = "1.37"
    assert (
        parse_rack_config(
            {"cluster_name": "c", **CREATE, "k8s_version": newest, "karpenter_version": "1.15.0"}
        ).cluster.version
        == newest
    )
    assert error(**CREATE, k8s_version="1.38") == (
        "rack:k8s_version: k8s_version '1.38' is newer than any Karpenter release the rack installs supports (1.37 "
        "at most, with Karpenter 1.15.0; use 1.37 or an older minor)"
    )


# ---- 13. mixed GPU and CPU pools --------------------------------------------------------------------------------


def test_a_pool_mixing_gpu_and_cpu_families_is_refused():
    message = error(additional_karpenter_nodepools_config=[{"name": "ml", "instance_families": "g5,m5"}])
    assert message == (
        "rack:additional_karpenter_nodepools_config[0].instance_families: karpenter nodepool 'ml': instance families "
        "mix GPU families (g5) with others (m5): its GPU nodes would get no GPU label or taint, so the device plugin "
        "would skip them and CPU pods would land on them (split it into two pools, one of GPU families and one of "
        "the others)"
    )
    assert error(karpenter_instance_families="m5,g6").startswith("rack:karpenter_instance_families: karpenter")


@pytest.mark.parametrize("families", ["g5,g4ad", "p4d,g4ad", "g4ad,g6"])
def test_a_pool_mixing_gpu_vendors_is_refused(families):
    """Every family a GPU family, but of two vendors: the lane's label and device plugin are one vendor's."""
    message = error(additional_karpenter_nodepools_config=[{"name": "ml", "instance_families": families}])
    nvidia = ",".join(f for f in families.split(",") if f != "g4ad")
    assert message == (
        "rack:additional_karpenter_nodepools_config[0].instance_families: karpenter nodepool 'ml': instance families "
        f"mix GPU vendors (amd: g4ad; nvidia: {nvidia}): a lane's GPU label, taint and device plugin are one vendor's, "
        "so the other's nodes would get none (split it into a pool per vendor)"
    )
    assert parse_rack_config(
        {
            "cluster_name": "c",
            "additional_karpenter_nodepools_config": [  # limits that hold a p4d
                {"name": "ml", "instance_families": nvidia, "cpu_limit": 400, "memory_limit_gb": 4096}
            ],
        }
    )


def test_a_pool_whose_limits_hold_none_of_its_instance_types_is_refused():
    # Karpenter launches no instance type whose capacity is beyond the pool's limits left
    # (filterByRemainingResources): limits below the smallest type leave the pool launching nothing
    assert error(
        additional_karpenter_nodepools_config=[
            {"name": "big", "instance_families": "m6i", "instance_sizes": "8xlarge", "cpu_limit": 16}
        ]
    ) == (
        "rack:additional_karpenter_nodepools_config[0].cpu_limit: karpenter nodepool 'big': its limits (cpu_limit 16, "
        "memory_limit_gb 400) hold none of its instance types: the smallest, m6i.8xlarge, has 32 vCPUs and 128 GiB, "
        "and "
        "Karpenter launches no type beyond the limits (the pool could launch nothing)"
    )
    assert parse_rack_config(
        {
            "cluster_name": "c",
            "additional_karpenter_nodepools_config": [
                {"name": "big", "instance_families": "m6i", "instance_sizes": "8xlarge", "cpu_limit": 32}
            ],
        }
    )


# ---- 14. node_disk above gp3's size ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lane",
    [
        CREATE,  # the system lane
        {"additional_node_groups_config": [{"type": "m5.large"}]},  # a node group without a disk of its own
        {"additional_build_groups_config": [{"type": "m5.large"}]},
    ],
)
def test_a_node_disk_beyond_gp3_is_refused_for_every_lane_that_uses_it(lane):
    most = 65536  # EC2's CreateVolume: a gp3 volume is 1-65,536 GiB
    pools_own = {"karpenter_node_disk": 20}  # the Karpenter pools' disk of their own (0: node_disk, as in Convox)
    assert parse_rack_config({"cluster_name": "c", **lane, **pools_own, "node_disk": most})
    assert error(**lane, **pools_own, node_disk=most + 1) == (
        f"rack:node_disk: node disk is more than a gp3 volume takes ({most} GiB): '{most + 1}'"
    )


def test_the_pools_take_node_disk_unless_karpenter_node_disk_is_set_as_convox_does():
    # Convox: karpenter_effective_disk = karpenter_node_disk > 0 ? karpenter_node_disk : node_disk, and an
    # additional pool's disk 0 (or none) is the effective disk
    spec = parse_rack_config(
        {
            "cluster_name": "c",
            "node_disk": 100,
            "additional_karpenter_nodepools_config": [
                {"name": "ml", "instance_families": "g5"},
                {"name": "big", "instance_families": "m6i", "disk": 300},
            ],
        }
    )
    assert {p.name: p.disk for p in spec.pools} == {"workload": 100, "ml": 100, "big": 300}
    spec = parse_rack_config(
        {
            "cluster_name": "c",
            "node_disk": 100,
            "karpenter_node_disk": 50,
            "additional_karpenter_nodepools_config": [{"name": "ml", "instance_families": "g5", "disk": 0}],
        }
    )
    assert {p.name: p.disk for p in spec.pools} == {"workload": 50, "ml": 50}
    # the default lane's disk problems then name node_disk, where the value came from
    # the EC2NodeClass CRD's volumeSize pattern stops at 59000Gi (test_crd_bounds reads it from the CRD)
    assert error(node_disk=59001).startswith("rack:node_disk: karpenter workload nodepool: disk")


def test_the_build_pools_disk_is_bounded_by_karpenter_too():
    # the build pool's volume is Karpenter's: its CRD stops at 59000Gi, below gp3's size
    assert error(build_node_enabled=True, node_disk=59001).startswith("rack:node_disk:")


# ---- 15. a system node too small for Karpenter and CoreDNS ------------------------------------------------------


def test_the_system_lane_must_hold_karpenter_and_coredns():
    assert error(**CREATE, node_type="t3.small") == (
        "rack:node_type: node type 't3.small' is too small for the system lane: a system node must hold a Karpenter "
        "controller (1 CPU, 1Gi), CoreDNS (2 x 100m, 70Mi) and the node's DaemonSets, 1450m CPU and 1420Mi, and a "
        "t3.small (2 vCPU, 2 GiB) has about 1930m and 1418Mi allocatable (use a larger type, e.g. t3.large)"
    )
    assert error(**CREATE, node_type="m6g.medium").startswith("rack:node_type: node type 'm6g.medium' is too small")
    for fits in ("t3.medium", "t3.large", "c5.large", "m7g.large"):
        assert parse_rack_config({"cluster_name": "c", **CREATE, "node_type": fits}).cluster is not None


def test_the_fit_uses_the_requests_the_rack_gives_karpenter():
    cpu, memory = upstream.KARPENTER_CONTROLLER_REQUESTS
    assert CONTROLLER_RESOURCES["requests"] == {"cpu": str(cpu // 1000), "memory": f"{memory // 1024}Gi"}


def test_allocatable_follows_nodeadm():
    # nodeadm: 6% of the first core, 1% of the second, 0.5% of the third and fourth, 0.25% of the rest;
    # 11 MiB per pod the node may run, plus 255 MiB
    assert fit.kube_reserved_cpu_m(1) == 60
    assert fit.kube_reserved_cpu_m(2) == 70
    assert fit.kube_reserved_cpu_m(8) == 90  # 60 + 10 + 10 + 4 x 2.5
    assert fit.kube_reserved_memory_mib(110) == 1465


def test_a_type_whose_size_is_not_known_is_not_judged():
    assert instances.instance_type("zz9.large") is None and system_node_fit_problem("zz9.large") is None


# ---- the example stacks -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["prod", "staging"])
def test_the_example_stacks_that_create_a_cluster_still_preview(stack):
    run = run_rack(stack_config(stack), stack=stack)
    assert [r for r in run.resources if r.type == "eks:index:Cluster"]


# ---- 10. the example policy config -----------------------------------------------------------------------------


def readme_levels() -> dict[str, str]:
    """The documented table of policies (docs/policies.md): policy -> its level."""
    import re

    from conftest import REPO

    text = (REPO / "docs" / "policies.md").read_text()
    start = text.index("## The policies\n")
    table = text[start : text.index("## The policy config\n", start)]
    return dict(re.findall(r"^\| `([a-z0-9-]+)` \| (mandatory|advisory|disabled) \|", table, re.M))


def test_the_example_policy_config_keeps_the_documented_levels_and_the_racks_kubernetes():
    import json

    from conftest import REPO
    from mixed_os_racks.config.params import RackParams
    from mixed_os_racks.offline.policyconfig import parse_config, reconcile
    from policy_helpers import start_pack

    with start_pack() as pack:
        config = reconcile(pack.info, parse_config(json.loads((REPO / "policies" / "config.json").read_text())))
    levels = readme_levels()
    assert len(levels) == len(config) >= 11
    assert {name: level for name, (level, _) in config.items()} == levels
    assert config["ami-facts-unknown"][0] == "advisory"  # "all: mandatory" made it mandatory
    assert config["ami-k8s-version"][1]["kubernetesVersion"] == RackParams.model_fields["k8s_version"].default


# ---- the offline preview's JSON on the example stack that creates its cluster --------------------------------


def test_the_prod_preview_json_shows_the_day2_fixes(capsys, tmp_path):
    import json

    from conftest import REPO

    out = tmp_path / "preview.json"
    code = main(["preview", "--cwd", str(REPO), "--stack", "prod", "--no-policy", "--json", str(out)])
    capsys.readouterr()
    assert code == 0
    resources = json.loads(out.read_text())["resources"]
    assert not [r for r in resources if r["type"] == "aws:ec2/tag:Tag"]  # no subnet tags
    (key,) = [r for r in resources if r["type"] == "aws:kms/key:Key"]
    assert key.get("protect") is True
    stack = resources[0]
    assert "protect" not in stack


@pytest.mark.parametrize(
    "values, key",
    [
        (
            {"karpenter_instance_families": "m7g"},
            "rack:karpenter_instance_families: karpenter workload nodepool: instance families m7g",
        ),
        (
            {"additional_karpenter_nodepools_config": [{"name": "ml", "instance_families": "g5", "arch": "arm64"}]},
            "rack:additional_karpenter_nodepools_config[0].instance_families: karpenter nodepool 'ml': instance "
            "families g5",
        ),
    ],
    ids=["default-lane", "pool"],
)  # the build pool takes its types' arch
def test_a_pool_whose_families_are_not_of_its_arch_is_refused(values, key):
    """Karpenter intersects the families with the arch requirement: nothing would be left to launch."""
    message = error(**values)
    assert message.startswith(key) and message.endswith("(the pool could launch nothing)")
    assert (
        " are arm64, and the pool's arch is amd64 " in message or " are amd64, and the pool's arch is arm64 " in message
    )


def test_an_empty_karpenter_arch_is_node_types_as_convox_reads_it():
    # Convox's default karpenter_arch is "": the default lane then takes node_type's architecture
    assert {p.name: p.arch for p in parse_rack_config({"cluster_name": "c", "karpenter_arch": ""}).pools} == {
        "workload": ["amd64"]
    }
    graviton = parse_rack_config({**CREATE, "cluster_name": "c", "karpenter_arch": "", "node_type": "m7g.large"})
    assert [p.arch for p in graviton.pools if p.name == "workload"] == [["arm64"]]


@pytest.mark.parametrize(
    "values, expected",
    [
        # the system lane on a GPU type is tainted and labelled a GPU lane, which CoreDNS, Karpenter and
        # metrics-server (tolerating only the system taint) cannot run on
        (
            {**CREATE, "node_type": "g4dn.xlarge"},
            "rack:node_type: node type 'g4dn.xlarge' is accelerated (GPU, Neuron)",
        ),
        # the Cluster Autoscaler authenticates with EKS Pod Identity, as Karpenter does
        (
            {"pod_identity_agent_enable": False, "cluster_autoscaler_enable": True},
            "rack:pod_identity_agent_enable: pod_identity_agent_enable=false is not possible with the Cluster "
            "Autoscaler",
        ),
        # a reserved tag goes on the system lane too, but the key that set it is tags
        ({**CREATE, "tags": "Name=x"}, "rack:tags: reserved tag key 'Name' is not allowed"),
    ],
    ids=["gpu-system-lane", "agent-off-autoscaler", "create-tags"],
)
def test_what_breaks_the_system_lane_or_the_autoscaler_is_refused_under_its_key(values, expected):
    assert error(**values).startswith(expected)


def test_the_build_pool_takes_the_architecture_of_its_instance_types():
    # Convox derives the build pool's arch from build_node_type: a Graviton type makes an arm64 pool
    def build(types: str) -> Any:
        spec = parse_rack_config({"cluster_name": "c", "build_node_enabled": True, "build_node_type": types})
        return next(p.arch for p in spec.pools if p.name == "build")

    assert build("c7g.large") == ["arm64"]
    assert build("c7g.large,c7i.large") == ["amd64", "arm64"]
    assert next(
        p.arch for p in parse_rack_config({"cluster_name": "c", "build_node_enabled": True}).pools if p.name == "build"
    ) == ["amd64"]
