"""Each policy of the pack, passing and failing, through the pack's real gRPC server.

The pack is started once for the module, the way the Pulumi CLI starts it; every test configures
it (the CLI's config format, merged over the policies' defaults) and sends it a whole run:
``Analyze`` per resource, ``AnalyzeStack`` once.
"""

from __future__ import annotations

import base64
import gzip
import re
from datetime import timedelta

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixed_os_racks import clock
from mixed_os_racks.offline.policyconfig import PolicyPackError, parse_config
from conftest import ARM_AMI, GPU_AMI, rack_config, run_rack, stack_config
from policy_helpers import (
    AMI_IDS,
    BOTTLEROCKET_TOML,
    NODEADM,
    OLD,
    eks_node_group,
    facts,
    judge,
    launch_template,
    managed_node_group,
    messages,
    node_class,
    node_pool,
    of,
    root_volume,
    start_pack,
    unknown,
)

import pulumi_eks as eks

BAD_ID = "ami-0a1b2c3d4e5f6071"  # 16 digits: Karpenter's own pattern takes it, EC2 has no such image


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:
        yield running


# ---- the pack and its config -----------------------------------------------------------------------


def test_the_pack_serves_its_policies_at_their_levels(pack):
    levels = {p.name: p.enforcementLevel for p in pack.info.policies}
    assert pack.info.name == "mixed-os-racks"
    assert sorted(levels) == sorted(
        [
            "ami-id-format",
            "al2023-family",
            "disk-fits-ami-snapshot",
            "gpu-lane-os",
            "arch-matches-ami",
            "pinned-ami-age",
            "ami-k8s-version",
            "root-volume-encrypted",
            "ami-facts-unknown",
            "workloads-reach-their-lane",
            "gpu-lanes-for-gpu-workloads",
            "gpu-daemonsets-reach-gpu-lanes",
            "gpu-driver-supports-lane",
            "lane-cost-ceiling",
            "lane-cost-unbounded",
            "ami-soaked",
            "capacity-reservation-fits",
            "capacity-reservation-ending",
            "reserved-capacity-targeted",
        ]
    )
    advisory = {name for name, level in levels.items() if level == 0}
    assert advisory == {
        "pinned-ami-age",
        "ami-k8s-version",
        "ami-facts-unknown",
        "gpu-lanes-for-gpu-workloads",
        "lane-cost-unbounded",
        "capacity-reservation-ending",
    }
    # ami-facts-unknown reports what the AMI-facts policies of the same request leave: it runs after them
    assert [p.name for p in pack.info.policies][-1] == "ami-facts-unknown"


def test_config_is_merged_over_the_defaults_as_the_cli_does(pack):
    run = run_rack(stack_config("dev"), stack="dev")
    merged = pack.configure(parse_config({"all": "advisory", "pinned-ami-age": {"maxAgeDays": 30}}), run)
    assert merged["pinned-ami-age"] == ("advisory", {"maxAgeDays": 30, "lookup": False, "amis": {}})
    assert merged["gpu-lane-os"] == ("advisory", None)
    merged = pack.configure(parse_config({"all": "advisory", "gpu-lane-os": "mandatory"}), run)
    assert merged["gpu-lane-os"][0] == "mandatory" and merged["ami-id-format"][0] == "advisory"
    assert pack.configure({}, run)["disk-fits-ami-snapshot"] == (
        "mandatory",
        {"lookup": False, "amis": {}, "amiRootSnapshotGiB": {}},
    )


def test_a_name_that_is_no_policy_is_skipped_as_the_cli_skips_it_and_named(pack):
    """pulumi's ReconcilePolicyPackConfig (sdk/go/common/resource/analyzer/config.go) passes over a config
    entry whose name is no policy of the pack: so does the offline preview, with a warning naming it."""
    pack.warnings.clear()
    merged = pack.configure(parse_config({"gpu-lane-oss": "advisory"}))
    assert "gpu-lane-oss" not in merged and merged["gpu-lane-os"][0] == "mandatory"
    assert pack.warnings == [
        "policy pack config: 'gpu-lane-oss' is not a policy of mixed-os-racks, so it is ignored "
        "(as pulumi ignores it); did you mean 'gpu-lane-os'?"
    ]
    pack.warnings.clear()


@pytest.mark.parametrize(
    ("config", "error"),
    [
        ({"pinned-ami-age": {"maxAgeDays": "soon"}}, "pinned-ami-age: maxAgeDays: 'soon' is not of type 'number'"),
        ({"disk-fits-ami-snapshot": {"amiRootSnapshotGiB": {GPU_AMI: -1}}}, "amiRootSnapshotGiB"),
        ({"arch-matches-ami": {"amis": {GPU_AMI: {"architecture": "sparc"}}}}, "'sparc' is not one of"),
    ],
)
def test_config_against_the_policies_schemas(pack, config, error):
    with pytest.raises(PolicyPackError, match=error):
        pack.configure(parse_config(config))


def test_a_bad_enforcement_level_is_refused():
    with pytest.raises(PolicyPackError, match="'strict' is not a valid enforcement level"):
        parse_config({"gpu-lane-os": {"enforcementLevel": "strict"}})


def test_a_disabled_policy_reports_nothing(pack):
    def program():
        node_class("team", [{"id": BAD_ID}])

    assert messages(judge(pack, program), "ami-id-format")
    assert not of(judge(pack, program, {"ami-id-format": "disabled"}), "ami-id-format")


# ---- the rack's own resources pass ---------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_racks_own_stacks_pass_every_policy(pack, stack):
    violations = judge(pack, run_rack(stack_config(stack), stack=stack))
    assert violations == []


def test_the_components_record_the_snapshot_the_pack_reads(pack):
    """The GPU pool's EC2NodeClass carries the size our component read: the pack needs nothing else."""
    pool = {"name": "gpu", "instance_families": "g5", "ami_id": GPU_AMI, "disk": 200}
    run = run_rack(rack_config(additional_karpenter_nodepools_config=[pool]))
    assert not of(judge(pack, run), "disk-fits-ami-snapshot")


# ---- ami-id-format -----------------------------------------------------------------------------------


def test_another_teams_node_class_with_a_malformed_id(pack):
    def program():
        node_class("ml", [{"id": BAD_ID}], volumes=root_volume("200Gi"))
        node_pool("ml", ["c7i"])

    violations = judge(pack, program)
    assert messages(violations, "ami-id-format") == [
        f"EC2NodeClass 'ml': invalid ami_id '{BAD_ID}' (must look like ami-0123456789abcdef0)"
    ]
    assert of(violations, "ami-id-format")[0]["urn"].endswith("::ml-nodeclass")


def test_raw_launch_template_and_pulumi_eks_groups_with_malformed_ids(pack):
    def program():
        launch_template("raw", image="ami-0A1B2C3D")
        managed_node_group("mng", ami_id="ami-1234", operating_system="AL2023", instance_types=["m6i.large"])
        eks.NodeGroupV2("ng2", cluster="c", ami_id="ami-xyz", operating_system="AL2023", instance_type="m6i.large")

    assert sorted(messages(judge(pack, program), "ami-id-format")) == [
        "launch template 'raw': invalid ami_id 'ami-0A1B2C3D' (must look like ami-0123456789abcdef0)",
        "node group 'mng': invalid ami_id 'ami-1234' (must look like ami-0123456789abcdef0)",
        "node group 'ng2': invalid ami_id 'ami-xyz' (must look like ami-0123456789abcdef0)",
    ]


def test_well_formed_ids_and_aliases_pass(pack):
    def program():
        node_class("a", [{"id": "ami-0123abcd"}, {"id": GPU_AMI}], volumes=root_volume("200Gi"))
        node_class("b", [{"alias": "al2023@latest"}], family=None)
        launch_template("raw", image=GPU_AMI)

    assert not of(judge(pack, program), "ami-id-format")


def test_another_teams_alias_that_karpenter_cannot_parse(pack):
    """The EC2NodeClass CRD admits ``al2023@latest@foo``; Karpenter's controller then exits on it
    (``amiFamilyFromAlias``: ``tests/test_alias_rule.py``), so the pack refuses it, naming the alias."""

    def program():
        node_class("ml", [{"alias": "al2023@latest@foo"}], family=None)
        node_pool("ml", ["c7i"])
        node_class("ok", [{"alias": "bottlerocket@v1.30.0"}], family=None)

    violations = judge(pack, program)
    assert messages(violations, "ami-id-format") == [
        "EC2NodeClass 'ml': invalid alias 'al2023@latest@foo' (must be family@version with one '@': Karpenter's "
        "controller cannot parse it and exits, which stops every NodePool)"
    ]
    assert of(violations, "ami-id-format")[0]["level"] == "mandatory"


@settings(max_examples=12, deadline=None)
@given(st.lists(AMI_IDS, min_size=1, max_size=6, unique=True))
def test_the_id_rule_over_grpc_flags_exactly_the_malformed_ids(pack, amis):
    def program():
        for n, ami in enumerate(amis):
            node_class(f"p{n}", [{"id": ami}], volumes=root_volume("200Gi"))

    flagged = {v["urn"].rsplit("::", 1)[-1] for v in of(judge(pack, program), "ami-id-format")}
    expected = {
        f"p{n}-nodeclass" for n, ami in enumerate(amis) if not re.fullmatch(r"ami-([0-9a-f]{8}|[0-9a-f]{17})", ami)
    }
    assert flagged == expected


def test_a_secret_ami_id_is_still_checked(pack):
    def program():
        node_class("team", [{"id": pulumi.Output.secret(BAD_ID)}])
        managed_node_group("mng", ami_id=pulumi.Output.secret("ami-nope"), operating_system="AL2023")

    assert sorted(messages(judge(pack, program), "ami-id-format")) == [
        f"EC2NodeClass 'team': invalid ami_id '{BAD_ID}' (must look like ami-0123456789abcdef0)",
        "node group 'mng': invalid ami_id 'ami-nope' (must look like ami-0123456789abcdef0)",
    ]


# ---- al2023-family -----------------------------------------------------------------------------------


def test_a_pinned_node_class_must_be_al2023(pack):
    def program():
        node_class("br", [{"id": GPU_AMI}], family="Bottlerocket", volumes=root_volume("200Gi"))
        node_class("custom", [{"name": "my-images-*"}], family="Custom")
        node_class("ok", [{"id": GPU_AMI}], volumes=root_volume("200Gi"))
        node_class("alias", [{"alias": "bottlerocket@latest"}], family=None)

    assert sorted(messages(judge(pack, program), "al2023-family")) == [
        "EC2NodeClass 'br': a pinned ami_id needs an AL2023 pool (got bottlerocket)",
        "EC2NodeClass 'custom': a pinned ami_id needs an AL2023 pool (got custom)",
    ]


def test_pulumi_eks_groups_must_declare_al2023(pack):
    """A pinned managed node group is judged through what pulumi-eks builds for it, as under the CLI: its
    launch template's user data says what boots. Without ``operating_system`` pulumi-eks renders the AL2023
    nodeadm ``NodeConfig`` (its ``DEFAULT_OS`` is AL2023, nodejs/eks/nodes/ami.ts ``getOperatingSystem``),
    so the 'implicit' group declares AL2023 the way a hand-written EKS node group does."""

    def program():
        managed_node_group("br", ami_id=GPU_AMI, operating_system="Bottlerocket", instance_types=["m6i.large"])
        managed_node_group("implicit", ami_id=GPU_AMI, instance_types=["m6i.large"])
        managed_node_group(
            "ok", ami_id=GPU_AMI, operating_system=eks.OperatingSystem.AL2023, instance_types=["m6i.large"]
        )
        managed_node_group("no-ami", operating_system="Bottlerocket", instance_types=["m6i.large"])
        eks.NodeGroupV2("v2", cluster="c", ami_id=GPU_AMI, operating_system="AL2", instance_type="m6i.large")

    fix = "set operating_system=AL2023 (pulumi-eks then renders the nodeadm user data)"
    assert sorted(messages(judge(pack, program), "al2023-family")) == [
        f"node group 'br': a pinned ami_id needs an AL2023 node group (got bottlerocket); {fix}",
        f"node group 'v2': a pinned ami_id needs an AL2023 node group (got al2); {fix}",
    ]


def test_an_eks_node_group_on_a_custom_image_needs_nodeadm_user_data(pack):
    def program():
        eks_node_group(
            "good", launch_template("good-lt", user_data=NODEADM), ami_type="CUSTOM", instance_types=["m6i.large"]
        )
        eks_node_group("toml", launch_template("toml-lt", user_data=BOTTLEROCKET_TOML), ami_type="CUSTOM")
        eks_node_group("none", launch_template("none-lt", user_data=None), ami_type="CUSTOM")
        eks_node_group("managed", None, ami_type="BOTTLEROCKET_x86_64")  # EKS's own image: nothing pinned

    fix = "give the launch template a nodeadm NodeConfig as its user data, and the node group ami_type CUSTOM or none"
    violations = judge(pack, program)
    assert sorted(messages(violations, "al2023-family")) == [
        f"node group 'none': a pinned ami_id needs an AL2023 node group (got no OS); {fix}",
        f"node group 'toml': a pinned ami_id needs an AL2023 node group (got bottlerocket); {fix}",
    ]
    assert {v["urn"].rsplit("::", 1)[-1] for v in of(violations, "al2023-family")} == {"none", "toml"}


def _mime(body: bytes, encoding: str = "7bit") -> bytes:
    return (
        b'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\n'
        b"Content-Type: application/node.eks.aws\nContent-Transfer-Encoding: "
        + encoding.encode()
        + b"\n\n"
        + body
        + b"\n--B--\n"
    )


NODE_CONFIG = b"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: c\n"


@pytest.mark.parametrize(
    "user_data",
    [
        base64.b64encode(gzip.compress(_mime(NODE_CONFIG))).decode(),  # terraform's cloudinit_config: gzip, base64
        base64.b64encode(_mime(base64.b64encode(NODE_CONFIG), "base64")).decode(),  # a base64 part
        base64.b64encode(_mime(NODE_CONFIG)).decode(),
    ],
    ids=["gzip", "base64-part", "plain-mime"],
)
def test_nodeadm_user_data_is_read_as_nodeadm_reads_it(pack, user_data):
    # amazon-eks-ami nodeadm: user data is base64-decoded, gunzipped if gzipped, then read as MIME, each
    # application/node.eks.aws part with its own transfer encoding (and gzip)
    def program():
        eks_node_group(
            "packed", launch_template("packed-lt", user_data=user_data), ami_type="CUSTOM", instance_types=["m6i.large"]
        )

    assert messages(judge(pack, program), "al2023-family") == []


def test_an_ami_type_beside_a_launch_template_image_is_refused_as_eks_refuses_it(pack):
    # EKS CreateNodegroup: with a launch template that names a custom AMI, "don't specify amiType, or the
    # node group deployment will fail" (CUSTOM is the one type it takes there)
    def program():
        eks_node_group(
            "typed",
            launch_template("typed-lt", user_data=NODEADM),
            ami_type="AL2023_x86_64_NVIDIA",
            instance_types=["g6.xlarge"],
        )
        eks_node_group("untyped", launch_template("untyped-lt", user_data=NODEADM), instance_types=["g6.xlarge"])

    assert messages(judge(pack, program), "al2023-family") == [
        f"node group 'typed': its launch template pins {GPU_AMI}, and EKS refuses ami_type AL2023_x86_64_NVIDIA beside "
        f"a "
        "launch template image (set ami_type CUSTOM, or leave it out)"
    ]


def test_a_standalone_launch_template_is_judged_by_what_it_boots(pack):
    def program():
        launch_template("al2-node", user_data="#!/bin/bash\n/etc/eks/bootstrap.sh c\n")
        launch_template("bastion", user_data=None)  # no EKS node OS at all: not a node

    fix = "its user data must be a nodeadm NodeConfig (apiVersion: node.eks.aws/v1alpha1)"
    assert messages(judge(pack, program), "al2023-family") == [
        f"launch template 'al2-node': a pinned ami_id needs an AL2023 launch template (got al2); {fix}"
    ]


def test_the_amis_own_name_can_show_another_os(pack):
    def program():
        node_class("br-image", [{"id": GPU_AMI}], volumes=root_volume("200Gi"))

    config = facts(name="bottlerocket-aws-k8s-1.33-nvidia-x86_64-v1.30.0", description="Bottlerocket")
    assert messages(judge(pack, program, config), "al2023-family") == [
        f"EC2NodeClass 'br-image': pinned AMI {GPU_AMI} ('bottlerocket-aws-k8s-1.33-nvidia-x86_64-v1.30.0') "
        "is bottlerocket, not Amazon Linux 2023 (pin an AL2023 AMI, e.g. one built with awslabs/amazon-eks-ami)"
    ]
    config = facts(name="amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115")
    assert not of(judge(pack, program, config), "al2023-family")


# ---- disk-fits-ami-snapshot ---------------------------------------------------------------------------


def test_disk_below_the_recorded_snapshot(pack):
    """A hand-written node class carrying our annotation, with a disk below it."""

    def program():
        node_class(
            "small",
            [{"id": GPU_AMI}],
            volumes=root_volume("50Gi"),
            annotations={"mixed-os-racks/ami-root-snapshot-gib": "100"},
        )
        node_class(
            "big",
            [{"id": GPU_AMI}],
            volumes=root_volume("100Gi"),
            annotations={"mixed-os-racks/ami-root-snapshot-gib": "100"},
        )

    assert messages(judge(pack, program), "disk-fits-ami-snapshot") == [
        f"EC2NodeClass 'small': disk 50 GiB is smaller than the root snapshot of {GPU_AMI} (100 GiB); give it a disk "
        f"of 100 GiB or more"
    ]


def test_a_disk_below_the_eks_amis_twenty_gib_snapshot_is_refused_without_a_pin(pack):
    # amazon-eks-ami builds its AMIs with a 20 GiB root volume (templates/al2023/variables-default.json);
    # EC2 refuses a root volume smaller than its snapshot, whichever way the image is chosen
    def program():
        node_class("small", [{"alias": "al2023@latest"}], volumes=root_volume("10Gi"))
        node_class("enough", [{"alias": "al2023@latest"}], volumes=root_volume("20Gi"))
        eks_node_group(
            "small-ng",
            launch_template("small-lt", image=None, disk=8, user_data=None),
            ami_type="AL2023_x86_64_STANDARD",
            instance_types=["m6i.large"],
        )
        eks_node_group("sized-ng", None, ami_type="AL2023_x86_64_STANDARD", disk_size=10, instance_types=["m6i.large"])

    assert sorted(messages(judge(pack, program), "disk-fits-ami-snapshot")) == [
        "EC2NodeClass 'small': disk 10 GiB is smaller than the root snapshot of the EKS-optimized AMI it selects (20 "
        "GiB); give it a disk of 20 GiB or more",
        "node group 'sized-ng': disk 10 GiB is smaller than the root snapshot of EKS's AL2023_x86_64_STANDARD AMI (20 "
        "GiB); give it a disk of 20 GiB or more",
        "node group 'small-ng': disk 8 GiB is smaller than the root snapshot of EKS's AL2023_x86_64_STANDARD AMI (20 "
        "GiB); give it a disk of 20 GiB or more",
    ]


def test_an_al2_lanes_disk_is_held_to_al2s_four_gib_snapshot(pack):
    # amazon-eks-ami builds its AL2 AMIs on a 4 GiB volume (templates/al2/variables-default.json,
    # launch_block_device_mappings_volume_size "4", commit 09eea9e8), AL2023's on 20 GiB: EC2 refuses only a root
    # volume smaller than the snapshot, so 10 GiB boots AL2 and 2 GiB does not
    def program():
        node_class("al2-small", [{"alias": "al2@latest"}], volumes=root_volume("2Gi"))
        node_class("al2-enough", [{"alias": "al2@latest"}], volumes=root_volume("10Gi"))
        eks_node_group("al2-ng", None, ami_type="AL2_x86_64", disk_size=10, instance_types=["m6i.large"])
        eks_node_group("al2-tiny-ng", None, ami_type="AL2_x86_64", disk_size=3, instance_types=["m6i.large"])

    assert sorted(messages(judge(pack, program), "disk-fits-ami-snapshot")) == [
        "EC2NodeClass 'al2-small': disk 2 GiB is smaller than the root snapshot of the EKS-optimized AMI it selects (4 "
        "GiB); give it a disk of 4 GiB or more",
        "node group 'al2-tiny-ng': disk 3 GiB is smaller than the root snapshot of EKS's AL2_x86_64 AMI (4 GiB); "
        "give it a disk of 4 GiB or more",
    ]


def test_the_snapshot_size_our_node_groups_tag(pack):
    """Our NodeGroup component tags its ManagedNodeGroup with the size it read; a launch template can carry it too."""

    def program():
        managed_node_group(
            "mng",
            ami_id=GPU_AMI,
            operating_system="AL2023",
            disk_size=50,
            tags={"mixed-os-racks/ami-root-snapshot-gib": "100", "team": "ml"},
        )
        launch_template("lt", disk=99, tags={"mixed-os-racks/ami-root-snapshot-gib": "100"})

    assert sorted(messages(judge(pack, program), "disk-fits-ami-snapshot")) == [
        f"launch template 'lt': disk 99 GiB is smaller than the root snapshot of {GPU_AMI} (100 GiB); give it a disk "
        f"of 100 GiB or more",
        f"node group 'mng': disk 50 GiB is smaller than the root snapshot of {GPU_AMI} (100 GiB); give it a disk of "
        f"100 GiB or more",
    ]


def test_the_policy_config_comes_first_and_numbers_are_floats(pack):
    def program():
        node_class(
            "tb",
            [{"id": GPU_AMI}],
            volumes=root_volume("1Ti"),
            annotations={"mixed-os-racks/ami-root-snapshot-gib": "2000"},
        )
        launch_template("lt", disk=20.0)
        managed_node_group("mng", ami_id=GPU_AMI, operating_system="AL2023", disk_size=19)

    config = {"disk-fits-ami-snapshot": {"amiRootSnapshotGiB": {GPU_AMI: 20.0}}}
    assert messages(judge(pack, program, config), "disk-fits-ami-snapshot") == [
        f"node group 'mng': disk 19 GiB is smaller than the root snapshot of {GPU_AMI} (20 GiB); give it a disk of 20 "
        f"GiB or more"
    ]


def test_defaults_count_as_disks(pack):
    """No block device mappings: Karpenter's 20 GiB default on AL2023; pulumi-eks's 20 GiB default for a
    self-managed group. A pinned pulumi-eks *managed* node group without ``disk_size`` is another matter:
    pulumi-eks adds a block device mapping to the launch template it builds only for ``diskSize``
    (``createMNGCustomLaunchTemplate``, nodejs/eks/nodes/nodegroup.ts) and drops ``diskSize`` from the node
    group, so the root volume is the snapshot's own size, which always fits."""

    def program():
        node_class("default", [{"id": GPU_AMI}])
        eks.NodeGroupV2("v2", cluster="c", ami_id=GPU_AMI, operating_system="AL2023", instance_type="m6i.large")
        managed_node_group("mng", ami_id=GPU_AMI, operating_system="AL2023")

    config = {"disk-fits-ami-snapshot": {"amiRootSnapshotGiB": {GPU_AMI: 100}}}
    assert sorted(messages(judge(pack, program, config), "disk-fits-ami-snapshot")) == [
        f"EC2NodeClass 'default': disk 20 GiB is smaller than the root snapshot of {GPU_AMI} (100 GiB); "
        "give it a disk of 100 GiB or more; 20 GiB is Karpenter's default",
        f"node group 'v2': disk 20 GiB is smaller than the root snapshot of {GPU_AMI} (100 GiB); give it a disk of 100 "
        f"GiB or more; 20 GiB is pulumi-eks's default",
    ]


def test_the_root_device_is_the_amis_when_known(pack):
    def program():
        launch_template("sda", disk=10, device="/dev/sda1")

    assert not of(
        judge(pack, program, {"disk-fits-ami-snapshot": {"amiRootSnapshotGiB": {GPU_AMI: 15}}}),
        "disk-fits-ami-snapshot",
    )
    config = {"disk-fits-ami-snapshot": {"amis": {GPU_AMI: {"rootDeviceName": "/dev/sda1", "rootSnapshotGiB": 15}}}}
    assert messages(judge(pack, program, config), "disk-fits-ami-snapshot") == [
        f"launch template 'sda': disk 10 GiB is smaller than the root snapshot of {GPU_AMI} (15 GiB); give it a disk "
        f"of 15 GiB or more"
    ]


def test_an_unknown_size_is_an_advisory_naming_the_ami_never_silence(pack):
    """A snapshot size nobody gave is reported by the pack's own advisory, ``ami-facts-unknown``: which check
    could not run, for which AMI or selector, and what would make it verifiable (for an id, the config entry
    or the look-up; for a selector, only the look-up can resolve it). Never the SDK's "during preview"."""

    def program():
        launch_template("lt", disk=50)
        node_class("by-name", [{"name": "team-gpu-*"}], volumes=root_volume("50Gi"))

    violations = judge(pack, program)
    assert not of(violations, "disk-fits-ami-snapshot")
    unverified = sorted(
        (v for v in of(violations, "ami-facts-unknown") if "disk-fits-ami-snapshot" in v["message"]),
        key=lambda v: v["urn"].rsplit("::", 1)[-1],
    )
    assert [(v["level"], v["urn"].rsplit("::", 1)[-1]) for v in unverified] == [
        ("advisory", "by-name-nodeclass"),
        ("advisory", "lt"),
    ]
    assert unverified[0]["message"] == (
        "EC2NodeClass 'by-name': disk-fits-ami-snapshot cannot verify disk 50 GiB against the root snapshot of the AMI "
        "named 'team-gpu-*': its size is unknown; to verify it, set lookup: true on disk-fits-ami-snapshot: it is "
        "selected by name, which only the look-up resolves (EC2 DescribeImages)"
    )
    assert unverified[1]["message"] == (
        f"launch template 'lt': disk-fits-ami-snapshot cannot verify disk 50 GiB against the root snapshot of "
        f"{GPU_AMI}: "
        f'its size is unknown; to verify it, set amiRootSnapshotGiB {{"{GPU_AMI}": <GiB>}} (or '
        f"amis.{GPU_AMI}.rootSnapshotGiB) "
        "on disk-fits-ami-snapshot in the policy config, or set lookup: true on disk-fits-ami-snapshot (EC2 "
        "DescribeImages)"
    )
    assert not any("during preview" in v["message"] for v in violations)


def test_a_disabled_check_leaves_nothing_unverified(pack):
    def program():
        launch_template("lt", disk=50)

    config = {"disk-fits-ami-snapshot": "disabled", "root-volume-encrypted": "disabled"}
    assert not of(judge(pack, program, config), "ami-facts-unknown")
    assert of(judge(pack, program), "ami-facts-unknown")  # the same pack, the next request: reported again


# ---- gpu-lane-os -------------------------------------------------------------------------------------------


GPU_ON_BR = (
    "make this a GPU lane, and GPU lanes must run Amazon Linux 2023, not Bottlerocket (move them to an AL2023 "
    "pool or node group)"
)


def test_a_gpu_pool_on_a_bottlerocket_node_class(pack):
    def program():
        node_class("gpu", [{"alias": "bottlerocket@latest"}], family=None)
        node_pool("gpu", ["g5", "m6i", "g6"])
        node_class("tainted", [{"alias": "bottlerocket@v1.30.0"}], family="Bottlerocket")
        node_pool("tainted", taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])
        node_class("labelled", [{"alias": "bottlerocket@latest"}], family=None)
        node_pool("labelled", labels={"convox.io/gpu-vendor": "nvidia"})
        node_class("fine", [{"alias": "al2023@latest"}], family=None)
        node_pool("fine", ["g5"])
        node_pool("cpu-on-br", ["m6i"], node_class_name="gpu")

    violations = judge(pack, program)
    assert sorted(messages(violations, "gpu-lane-os")) == [
        f"karpenter nodepool 'gpu': instance families g5,g6 {GPU_ON_BR}",
        f"karpenter nodepool 'labelled': labels convox.io/gpu-vendor=nvidia {GPU_ON_BR}",
        f"karpenter nodepool 'tainted': taints nvidia.com/gpu {GPU_ON_BR}",
    ]
    assert all(v["urn"].endswith("-nodepool") for v in of(violations, "gpu-lane-os"))


def test_gpu_node_groups_on_bottlerocket(pack):
    def program():
        managed_node_group("mng", operating_system="Bottlerocket", instance_types=["g5.xlarge"])
        eks.NodeGroupV2("v2", cluster="c", operating_system="Bottlerocket", instance_type="m6i.large", gpu=True)
        eks_node_group("eks", None, ami_type="BOTTLEROCKET_x86_64_NVIDIA", instance_types=["m6i.large"])
        eks_node_group("fine", None, ami_type="AL2023_x86_64_NVIDIA", instance_types=["g5.xlarge"])

    assert sorted(messages(judge(pack, program), "gpu-lane-os")) == [
        f"node group 'eks': ami_type BOTTLEROCKET_x86_64_NVIDIA {GPU_ON_BR}",
        f"node group 'mng': instance types g5.xlarge {GPU_ON_BR}",
        f"node group 'v2': gpu=true {GPU_ON_BR}",
    ]


def test_an_eks_node_group_on_a_bottlerocket_launch_template(pack):
    def program():
        template = launch_template("br-lt", user_data=BOTTLEROCKET_TOML, instance_type="g6.xlarge")
        eks_node_group("br", template, ami_type="CUSTOM")

    assert messages(judge(pack, program), "gpu-lane-os") == [f"node group 'br': instance types g6.xlarge {GPU_ON_BR}"]


# ---- arch-matches-ami ---------------------------------------------------------------------------------


def test_a_pools_arch_against_the_amis(pack):
    def program():
        node_class("arm", [{"id": GPU_AMI}], volumes=root_volume("200Gi"))
        node_pool("arm", ["m7g"], arch=["arm64"])
        node_class("x86", [{"id": GPU_AMI}], volumes=root_volume("200Gi"))
        node_pool("x86", ["g5"], arch=["amd64"])
        node_class("graviton", [{"id": GPU_AMI}], volumes=root_volume("200Gi"))
        node_pool("graviton", ["g5g"])  # no arch requirement: the families say arm64

    config = facts(architecture="x86_64")
    fix = "(pin an arm64 AMI, or set the lane's arch to x86_64)"
    assert sorted(messages(judge(pack, program, config), "arch-matches-ami")) == [
        f"karpenter nodepool 'arm': arch arm64 does not match {GPU_AMI}, which is x86_64 {fix}",
        f"karpenter nodepool 'graviton': arch arm64 does not match {GPU_AMI}, which is x86_64 {fix}",
    ]
    assert not of(judge(pack, program), "arch-matches-ami")  # the AMI's arch unknown: nothing to say


def test_node_group_instance_types_against_the_ami(pack):
    def program():
        managed_node_group("mng", ami_id=ARM_AMI, operating_system="AL2023", instance_types=["m6i.large"])
        eks_node_group("eks", launch_template("eks-lt", image=ARM_AMI), ami_type="CUSTOM", instance_types=["c7g.large"])
        launch_template("alone", image=ARM_AMI, instance_type="c6i.large")

    config = facts(ARM_AMI, architecture="arm64")
    fix = "(pin an x86_64 AMI, or set the lane's arch to arm64)"
    assert sorted(messages(judge(pack, program, config), "arch-matches-ami")) == [
        f"launch template 'alone': arch x86_64 does not match {ARM_AMI}, which is arm64 {fix}",
        f"node group 'mng': arch x86_64 does not match {ARM_AMI}, which is arm64 {fix}",
    ]


def test_a_node_group_names_its_launch_template_by_a_literal_name_too(pack):
    # EKS's launchTemplate takes the template's name or id; a name written as text has no dependency to
    # follow, so the group is joined to the stack's template of that name
    def program():
        template = aws.ec2.LaunchTemplate("arm-lt", name="team-arm-lt", image_id=ARM_AMI, user_data=NODEADM)
        eks_node_group(
            "team",
            None,
            ami_type="CUSTOM",
            instance_types=["m6i.large"],
            launch_template={"name": "team-arm-lt", "version": "$Latest"},
            opts=pulumi.ResourceOptions(depends_on=[template]),
        )

    config = facts(ARM_AMI, architecture="arm64")
    assert messages(judge(pack, program, config), "arch-matches-ami") == [
        f"node group 'team': arch x86_64 does not match {ARM_AMI}, which is arm64 (pin an x86_64 AMI, or set the "
        "lane's arch to arm64)"
    ]


# ---- the advisories --------------------------------------------------------------------------------------


def test_pinned_ami_age(pack):
    def program():
        node_class("old", [{"id": GPU_AMI}], volumes=root_volume("200Gi"))

    violations = judge(pack, program, facts(creationDate=OLD))
    assert [v["level"] for v in of(violations, "pinned-ami-age")] == ["advisory"]
    assert of(violations, "pinned-ami-age")[0]["message"].startswith(f"EC2NodeClass 'old': pinned AMI {GPU_AMI} is ")
    assert (
        "created 2020-01-01), more than maxAgeDays 90: it gets no OS patches (pin a newer build)"
        in (of(violations, "pinned-ami-age")[0]["message"])
    )
    recent = (clock.now() - timedelta(days=30)).isoformat()
    assert not of(judge(pack, program, facts(creationDate=recent)), "pinned-ami-age")
    stricter = facts(creationDate=recent)
    stricter["pinned-ami-age"]["maxAgeDays"] = 14
    assert "more than maxAgeDays 14" in of(judge(pack, program, stricter), "pinned-ami-age")[0]["message"]


def test_ami_k8s_version(pack):
    """The cluster's minor comes from the resource or the config. A pinned pulumi-eks managed node group
    carries none: pulumi-eks drops ``version`` from the node group it builds when ``amiId`` is set
    (createManagedNodeGroup, nodejs/eks/nodes/nodegroup.ts), so under the CLI no child says 1.29."""

    def program():
        node_class("pool", [{"id": GPU_AMI}], volumes=root_volume("200Gi"))
        managed_node_group("mng", ami_id=GPU_AMI, operating_system="AL2023", version="1.29")

    config = facts(name="amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115")
    assert of(judge(pack, program, config), "ami-k8s-version") == []
    config["ami-k8s-version"]["kubernetesVersion"] = "1.29"
    found = of(judge(pack, program, config), "ami-k8s-version")
    assert sorted(v["message"] for v in found) == [
        f"EC2NodeClass 'pool': pinned AMI {GPU_AMI} ('amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115') is "
        f"built "
        "for Kubernetes 1.34, but the cluster runs 1.29 (pin an AMI built for 1.29)",
        f"node group 'mng': pinned AMI {GPU_AMI} ('amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115') is built "
        "for Kubernetes 1.34, but the cluster runs 1.29 (pin an AMI built for 1.29)",
    ]
    levels = {v["urn"].rsplit("::", 1)[-1]: v["level"] for v in found}
    assert levels == {"pool-nodeclass": "advisory", "mng-launchTemplate": "advisory"}


# ---- unknowns at preview --------------------------------------------------------------------------------


def test_an_unknown_ami_id_makes_the_mandatory_policies_advisory(pack):
    def program():
        node_class("late", [{"id": unknown(BAD_ID)}], volumes=root_volume("50Gi"))
        node_pool("late", ["g5"])

    violations = judge(pack, program)
    assert not [v for v in violations if v["level"] == "mandatory"]
    format_ = of(violations, "ami-id-format")
    assert [v["level"] for v in format_] == ["advisory"]
    assert format_[0]["message"] == (
        "can't run policy 'ami-id-format' from policy pack 'mixed-os-racks@v0.0.1' during preview: "
        "string value at .spec.amiSelectorTerms.0.id can't be known during preview"
    )
    assert format_[0]["urn"].endswith("::late-nodeclass")


def test_an_unknown_value_a_rule_does_not_read_changes_nothing(pack):
    def program():
        node_class("team", [{"id": BAD_ID}], volumes=root_volume("50Gi"), role=unknown("arn:role"))

    assert messages(judge(pack, program), "ami-id-format") == [
        f"EC2NodeClass 'team': invalid ami_id '{BAD_ID}' (must look like ami-0123456789abcdef0)"
    ]


def test_a_pin_whose_id_is_unknown_is_still_a_pin_off_al2023(pack):
    # any pinned AMI on Bottlerocket is refused whatever its id: the id unknown at preview leaves only the
    # AMI's own facts unjudged (an advisory), not the family
    def program():
        node_class("br", [{"id": unknown(GPU_AMI)}], family="Bottlerocket")

    violations = judge(pack, program)
    assert messages(violations, "al2023-family") == [
        "EC2NodeClass 'br': a pinned ami_id needs an AL2023 pool (got bottlerocket)"
    ]
    assert messages(violations, "al2023-family", level="advisory")


def test_an_unknown_pool_does_not_hide_the_others(pack):
    def program():
        node_class("br", [{"alias": "bottlerocket@latest"}], family=None)
        node_pool("late", unknown(["g5"]), node_class_name="br")
        node_pool("known", ["g6"], node_class_name="br")

    violations = of(judge(pack, program), "gpu-lane-os")
    assert [v["message"] for v in violations if v["level"] == "mandatory"] == [
        f"karpenter nodepool 'known' (EC2NodeClass 'br'): instance families g6 {GPU_ON_BR}"
    ]
    advisory = [v for v in violations if v["level"] == "advisory"]
    assert (
        len(advisory) == 1
        and (
            "karpenter nodepool 'late' (EC2NodeClass 'br'): string value at .spec.template.spec.requirements.0.values "
            "can't be known"
        )
        in advisory[0]["message"]
    )


def test_user_data_is_read_only_for_a_gpu_lane(pack):
    """gpu-lane-os looks for GPU evidence first: a CPU group whose launch template's user data is not known
    yet gets nothing; a GPU group's unknown user data is reported as unknown until apply."""

    def program():
        eks_node_group(
            "cpu",
            launch_template("cpu-lt", user_data=unknown(NODEADM)),
            ami_type="CUSTOM",
            instance_types=["m6i.large"],
        )
        eks_node_group(
            "gpu",
            launch_template("gpu-lt", user_data=unknown(NODEADM)),
            ami_type="CUSTOM",
            instance_types=["g5.xlarge"],
        )

    found = of(judge(pack, program), "gpu-lane-os")
    assert [v["level"] for v in found] == ["advisory"]
    assert "node group 'gpu': string value at .userData can't be known during preview" in found[0]["message"]
    assert "'cpu'" not in found[0]["message"]


# ---- what the pack is sent --------------------------------------------------------------------------------


def test_requests_carry_options_and_provider_as_the_cli_sends_them():
    from mixed_os_racks.offline.wire import _RESOURCE_SIG, provider_of, resource_options, wire_properties

    config = stack_config("prod")
    run = run_rack(config, stack="prod")
    by_urn = {r.urn: r for r in run.resources}
    node_class = next(r for r in run.resources if r.name == "rack-gpu-nodeclass")
    provider = provider_of(node_class, by_urn, run, config)
    assert (provider.type, provider.name) == ("pulumi:providers:kubernetes", "rack-k8s")
    assert provider.urn == next(r.urn for r in run.resources if r.name == "rack-k8s")
    assert resource_options(node_class).parent == node_class.parent and node_class.parent.endswith(
        "KarpenterPool::rack-gpu"
    )

    default = provider_of(next(r for r in run.resources if r.type == "aws:iam/role:Role"), by_urn, run, config)
    assert (default.type, default.name) == ("pulumi:providers:aws", "default")
    assert dict(default.properties) == {"region": "us-east-1"}
    assert provider_of(next(r for r in run.resources if r.type == "rack:index:Rack"), by_urn, run, config) is None

    assert any(_RESOURCE_SIG.encode() in r.properties.SerializeToString() for r in run.resources)
    for resource in run.resources:  # resource references go as ids or URNs (the CLI keeps no references)
        assert _RESOURCE_SIG.encode() not in wire_properties(resource.properties).SerializeToString()


@pytest.mark.parametrize(
    "limit, gpu_lane",
    [
        (0, False),
        ("0", False),
        ("0m", False),
        ("0k", False),
        ("00", False),
        ("0e3", False),
        ("-0", False),
        (" 0 ", False),
        (" 1 ", False),
        ("abc", False),
        ("1", True),
        ("500m", True),
        ("+1", True),
    ],
)
def test_a_gpu_limit_is_a_quantity_and_only_a_nonzero_one_makes_a_gpu_lane(pack, limit, gpu_lane):
    # a NodePool's limits are resource.Quantity values: "0m", "0k", "0e3" and "-0" are zero, as 0 is; the CRD holds
    # text to its quantity pattern, so the API server refuses " 1 " and "abc": that pool never runs, GPU or not
    def program() -> None:
        pool = node_pool("cpu", ["m6i"])
        pool_spec = {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "cpu"},
                    "requirements": [],
                }
            },
            "limits": {"cpu": "100", "nvidia.com/gpu": limit},
        }
        k8s.apiextensions.CustomResource(
            "limited-nodepool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": "limited"},
            spec=pool_spec,
            opts=pulumi.ResourceOptions(depends_on=[pool]),
        )
        node_class("limited", [{"alias": "bottlerocket@latest"}], family="Bottlerocket")
        node_class("cpu", [{"alias": "bottlerocket@latest"}], family="Bottlerocket")

    found = messages(judge(pack, program), "gpu-lane-os")
    assert bool(found) == gpu_lane, found
