"""``mixed_os_racks.testing``: a consumer's unit tests get every look-up the components make answered from
an AMI catalog, as the offline preview answers them, through the SDK's own ``set_mocks``."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pytest

from conftest import GPU_AMI
from mixed_os_racks import ClusterRef, NodeGroup, NodeGroupArgs, NodeGroupSpec
from mixed_os_racks.offline import CatalogError
from mixed_os_racks.testing import OFFLINE_ACCOUNT, RackMocks, set_mocks


def test_the_look_ups_the_components_make_are_answered_from_the_catalog():
    mocks = set_mocks(RackMocks(region="eu-west-1"), project="p", stack="s")
    seen: dict[str, object] = {}

    @pulumi.runtime.test
    def look_up() -> None:
        ami = aws.ec2.get_ami(
            filters=[aws.ec2.GetAmiFilterArgs(name="image-id", values=[GPU_AMI])], include_deprecated=True
        )
        cluster = aws.eks.get_cluster(name="shared")
        seen.update(
            ami=(ami.architecture, ami.root_device_name),
            endpoint=cluster.endpoint,
            account=aws.get_caller_identity().account_id,
            region=aws.get_region().region,
            partition=aws.get_partition().partition,
        )

    look_up()
    assert seen == {
        "ami": ("x86_64", "/dev/xvda"),
        "endpoint": "https://shared.eks.offline.invalid",
        "account": OFFLINE_ACCOUNT,
        "region": "eu-west-1",
        "partition": "aws",
    }
    assert mocks.catalog.get(GPU_AMI) is not None


def test_a_node_group_in_an_existing_cluster_builds_under_the_mocks():
    # under the SDK's plain mock monitor this run fails with "attached to a different loop" (pulumi/pulumi#6561)
    mocks = set_mocks(RackMocks(), project="p", stack="s")

    @pulumi.runtime.test
    def build() -> None:
        NodeGroup(
            "inference",
            NodeGroupArgs(
                group=NodeGroupSpec(instance_type="g6.xlarge", min_size=1, max_size=4),
                cluster=ClusterRef.existing("shared", "shared-dev"),
            ),
        )

    build()
    group = mocks.registered("eks:index:ManagedNodeGroup", "inference")
    assert group.inputs["instanceTypes"] == ["g6.xlarge"]
    assert {r.typ for r in mocks.resources if r.resource_id} == {
        "aws:eks/cluster:Cluster",
        "aws:iam/role:Role",
    }  # read, not created
    with pytest.raises(
        KeyError, match=r"no eks:index:ManagedNodeGroup named 'training' was registered \(those registered: inference\)"
    ):
        mocks.registered("eks:index:ManagedNodeGroup", "training")


def test_a_look_up_of_the_programs_own_is_named_and_a_subclass_answers_it():
    class Mine(RackMocks):
        def call(self, args: pulumi.runtime.MockCallArgs):  # type: ignore[override]
            if args.token == "aws:route53/getZone:getZone":
                return {"id": "Z1", "name": args.args["name"], "zoneId": "Z1"}
            return super().call(args)

    set_mocks(Mine(), project="p", stack="s")

    @pulumi.runtime.test
    def zone() -> None:
        assert aws.route53.get_zone(name="example.com").zone_id == "Z1"
        assert aws.get_region().region == "us-east-1"

    zone()
    set_mocks(RackMocks(), project="p", stack="s")

    @pulumi.runtime.test
    def unknown() -> None:
        aws.route53.get_zone(name="example.com")

    with pytest.raises(Exception, match="cannot answer the look-up aws:route53/getZone:getZone"):
        unknown()


def test_the_catalog_is_validated_as_amis_is():
    with pytest.raises(
        CatalogError, match=r"AMI catalog <memory>: amis\[0\] \(ami-0a1b2c3d4e5f60718\): missing name, "
    ):
        RackMocks(amis={"amis": [{"id": GPU_AMI}]})


def test_each_item_of_mocks_resources_has_the_fields_the_docs_name():
    # docs/components.md lists them: typ (not type), name, inputs, provider, resource_id, custom
    mocks = set_mocks(RackMocks(), project="p", stack="s")

    @pulumi.runtime.test
    def build() -> None:
        parent = pulumi.ComponentResource("team:index:Lane", "lane", None)
        aws.ec2.LaunchTemplate("lt", image_id=GPU_AMI, opts=pulumi.ResourceOptions(parent=parent))
        aws.iam.Role.get("node", "node-role")

    build()
    lane, template, role = (
        mocks.registered(t, n)
        for t, n in [
            ("team:index:Lane", "lane"),
            ("aws:ec2/launchTemplate:LaunchTemplate", "lt"),
            ("aws:iam/role:Role", "node"),
        ]
    )
    assert (lane.typ, lane.name, lane.custom, lane.resource_id) == ("team:index:Lane", "lane", False, "")
    assert (template.typ, template.custom, template.inputs["imageId"], template.resource_id) == (
        "aws:ec2/launchTemplate:LaunchTemplate",
        True,
        GPU_AMI,
        "",
    )
    assert not template.provider  # no explicit provider
    assert (role.typ, role.resource_id) == ("aws:iam/role:Role", "node-role")
    assert not hasattr(template, "type")


def _as_previewed(value: object) -> object:
    """Inputs as the mocks resolve them, written as the offline preview's plain inputs: a value not known yet (the
    SDK's ``Unknown`` in a preview) as ``<computed>``."""
    if isinstance(value, dict):
        return {k: _as_previewed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_previewed(v) for v in value]
    return "<computed>" if isinstance(value, pulumi.output.Unknown) else value


def test_a_managed_node_group_is_expanded_as_the_offline_preview_expands_it():
    """A user's pulumi-eks ManagedNodeGroup: a test sees the node group and launch template its provider registers,
    with the arguments the offline preview registers (the same expansion, components/offline/eks_mng.py)."""
    from policy_helpers import managed_node_group
    from mixed_os_racks.offline.engine import run_program

    def program() -> None:
        managed_node_group(
            "gpu",
            ami_id=GPU_AMI,
            disk_size=200,
            enable_imd_sv2=True,
            instance_types=["g6.xlarge"],
            labels={"lane": "gpu"},
            scaling_config={"min_size": 0, "max_size": 4, "desired_size": 1},
        )

    mocks = set_mocks(RackMocks(), project="p", stack="s", preview=True)
    pulumi.runtime.test(program)()
    preview = run_program(program, {"aws:region": "us-east-1"}, project="p", stack="s")
    children = [(r.type, r.name) for r in preview.resources if r.parent.endswith("eks:index:ManagedNodeGroup::gpu")]
    assert sorted(children) == [
        ("aws:ec2/launchTemplate:LaunchTemplate", "gpu-launchTemplate"),
        ("aws:eks/nodeGroup:NodeGroup", "gpu"),
    ]
    for typ, name in children:
        expected = next(r for r in preview.resources if (r.type, r.name) == (typ, name))
        assert _as_previewed(mocks.registered(typ, name).inputs) == expected.inputs, typ
        assert mocks.registered(typ, name).custom is True
    group = mocks.registered("aws:eks/nodeGroup:NodeGroup", "gpu").inputs
    assert group["instanceTypes"] == ["g6.xlarge"] and group["scalingConfig"] == {
        "minSize": 0,
        "maxSize": 4,
        "desiredSize": 1,
    }
    assert "amiType" not in group and "diskSize" not in group  # pulumi-eks moves them into the launch template
    template = mocks.registered("aws:ec2/launchTemplate:LaunchTemplate", "gpu-launchTemplate").inputs
    assert template["imageId"] == GPU_AMI and template["metadataOptions"]["httpTokens"] == "required"
    assert template["blockDeviceMappings"] == [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 200}}]
    # the component's own item comes first, with the inputs the program gave it
    kinds = [r.typ for r in mocks.resources]
    assert kinds.index("eks:index:ManagedNodeGroup") < kinds.index("aws:ec2/launchTemplate:LaunchTemplate")
    # outside a preview the same children; the values known only once the launch template exists are left out
    mocks = set_mocks(RackMocks(), project="p", stack="s")
    pulumi.runtime.test(program)()
    assert mocks.registered("aws:eks/nodeGroup:NodeGroup", "gpu").inputs["launchTemplate"] == {}


def test_a_catalog_given_to_the_mocks_adds_to_the_default_as_amis_does(tmp_path):
    mine = {
        "amis": [
            {
                "id": "ami-0c0ffee0c0ffee0c0",
                "name": "team-al2023-gpu",
                "description": "Amazon Linux 2023",
                "architecture": "x86_64",
                "root_device_name": "/dev/xvda",
                "root_snapshot_gib": 120,
                "creation_date": "2026-12-01T08:00:00.000Z",
                "owner_id": "111122223333",
            }
        ]
    }
    path = tmp_path / "amis.yaml"
    path.write_text(json.dumps(mine))
    for given in (mine, str(path)):
        catalog = RackMocks(amis=given).catalog
        assert {"ami-0c0ffee0c0ffee0c0", GPU_AMI} <= set(catalog.amis)
