"""The pack's own AMI look-up (``lookup: true``) against moto's EC2.

In-process, ``policies.lookup`` is called directly under ``mock_aws``. Through gRPC, the pack
process itself runs under moto: a ``sitecustomize`` on its ``PYTHONPATH`` starts ``mock_aws``, and
``MOTO_AMIS_PATH`` gives that EC2 the images (fixed ids, names, architectures, creation dates).
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import boto3
import pytest
import yaml
from moto import mock_aws

from mixed_os_racks.offline.packprocess import PolicyPackProcess, pack_env
from conftest import GPU_AMI
from mixed_os_racks.facts import amifacts
from mixed_os_racks.pack import lookup
from policy_helpers import (
    POLICIES,
    judge,
    launch_template,
    managed_node_group,
    messages,
    node_class,
    node_pool,
    of,
    root_volume,
)

MOTO_ROOT_GIB = 15  # moto gives every image a root snapshot of this size (checked below)
MOTO_ACCOUNT = "123456789012"  # moto's account: ``owners: [self]``
TEAM_IMAGES = [  # (id, name, architecture, creation date): two x86_64 builds and one arm64, all the account's own
    ("ami-0a0a0a0a0a0a0a0a1", "team-gpu-al2023-x86_64-v1", "x86_64", "2026-01-01T00:00:00.000Z"),
    ("ami-0a0a0a0a0a0a0a0a2", "team-gpu-al2023-x86_64-v2", "x86_64", "2026-02-01T00:00:00.000Z"),
    ("ami-0a0a0a0a0a0a0a0a3", "team-gpu-al2023-arm64-v1", "arm64", "2026-01-15T00:00:00.000Z"),
]
MISSING_AMI = "ami-0123456789abcdef0"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


@pytest.fixture
def ec2(monkeypatch):
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    lookup.clear()
    with mock_aws():
        yield boto3.client("ec2", region_name="us-east-1")
    lookup.clear()


def register(ec2, size_gib: int, name: str = "amazon-eks-node-al2023-x86_64-standard-1.33-v20261115") -> str:
    volume = ec2.create_volume(Size=size_gib, AvailabilityZone="us-east-1a")
    snapshot = ec2.create_snapshot(VolumeId=volume["VolumeId"])
    return ec2.register_image(
        Name=name,
        Description="AL2023",
        RootDeviceName="/dev/xvda",
        BlockDeviceMappings=[
            {"DeviceName": "/dev/xvda", "Ebs": {"SnapshotId": snapshot["SnapshotId"], "VolumeSize": size_gib}}
        ],
    )["ImageId"]


def test_the_root_snapshot_size_is_what_ec2_reports(ec2):
    ami = register(ec2, 100)
    image = ec2.describe_images(ImageIds=[ami])["Images"][0]
    root = [m for m in image["BlockDeviceMappings"] if m["DeviceName"] == image["RootDeviceName"]][0]
    assert root["Ebs"]["VolumeSize"] == MOTO_ROOT_GIB  # moto's answer, whatever the snapshot given
    facts = lookup.describe_image(ami)
    assert facts.root_snapshot_gib == float(root["Ebs"]["VolumeSize"])
    assert facts.root_device_name == image["RootDeviceName"]
    assert facts.name == "amazon-eks-node-al2023-x86_64-standard-1.33-v20261115"
    assert facts.creation_date == image["CreationDate"]


def test_answers_are_cached_per_ami(ec2):
    ami = register(ec2, 20)
    first = lookup.describe_image(ami)
    ec2.deregister_image(ImageId=ami)
    assert lookup.describe_image(ami) == first  # no second DescribeImages
    lookup.clear()
    with pytest.raises(LookupError):
        lookup.describe_image(ami)


def test_a_missing_image_is_a_reason_not_a_crash(ec2):
    with pytest.raises(LookupError, match="InvalidAMIID.NotFound"):
        lookup.describe_image(MISSING_AMI)
    with pytest.raises(LookupError, match="InvalidAMIID.NotFound"):  # failures are cached too
        lookup.describe_image(MISSING_AMI)


# ---- through the pack's gRPC server -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def moto_pack(tmp_path_factory):
    """The pack, with its EC2 answered by moto inside its own process."""
    root = tmp_path_factory.mktemp("moto-pack")
    (root / "sitecustomize.py").write_text(
        "import json, os\n"
        "if os.environ.get('MOTO_AMIS_PATH'):\n"
        "    from moto import mock_aws\n"
        "    mock_aws().start()\n"
        "    import boto3\n"
        "    for name, value in json.loads(os.environ.get('MOTO_SSM', '{}')).items():\n"
        "        boto3.client('ssm').put_parameter(Name=name, Value=value, Type='String')\n"
    )
    image = {
        "ami_id": GPU_AMI,
        "name": "amazon-eks-node-al2023-x86_64-nvidia-580-1.29-v20200101",
        "description": "EKS-optimized Kubernetes node based on Amazon Linux 2023, (k8s 1.29)",
        "owner_id": "111122223333",
        "public": True,
        "virtualization_type": "hvm",
        "architecture": "x86_64",
        "state": "available",
        "root_device_type": "ebs",
        "root_device_name": "/dev/xvda",
        "creation_date": "2020-01-01T00:00:00.000Z",
    }
    team = [
        dict(
            image,
            ami_id=ami,
            name=name,
            owner_id=MOTO_ACCOUNT,
            architecture=arch,
            creation_date=created,
            description="AL2023",
        )
        for ami, name, arch, created in TEAM_IMAGES
    ]
    (root / "amis.json").write_text(json.dumps([image, *team]))
    # moto lives in the tests' interpreter, not the pack's virtualenv: a copy of the pack that names no
    # virtualenv runs with $PULUMI_PYTHON_CMD, as the CLI's Python analyzer plugin would run it
    pack = shutil.copytree(POLICIES, root / "pack", ignore=shutil.ignore_patterns("venv", "__pycache__"))
    manifest = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())
    del manifest["runtime"]["options"]["virtualenv"]
    (pack / "PulumiPolicy.yaml").write_text(yaml.safe_dump(manifest))
    env = pack_env("mixed-os-racks", "test")
    env.update(CREDENTIALS)
    env.update(
        {
            "MOTO_AMIS_PATH": str(root / "amis.json"),
            "PULUMI_PYTHON_CMD": sys.executable,
            "MOTO_SSM": json.dumps({"/team/gpu/image": TEAM_IMAGES[2][0], "/team/not-an-image": "hello"}),
            "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
        }
    )
    with PolicyPackProcess(pack, env) as running:
        assert running.python == sys.executable and not running.warnings
        yield running


LOOKUP = {
    policy: {"lookup": True}
    for policy in ("al2023-family", "disk-fits-ami-snapshot", "arch-matches-ami", "pinned-ami-age", "ami-k8s-version")
}


def test_the_disk_rule_reads_the_snapshot_from_ec2(moto_pack):
    def program():
        launch_template("small", disk=MOTO_ROOT_GIB - 5)
        launch_template("exact", disk=MOTO_ROOT_GIB)

    assert messages(judge(moto_pack, program, LOOKUP), "disk-fits-ami-snapshot") == [
        f"launch template 'small': disk {MOTO_ROOT_GIB - 5} GiB is smaller than the root snapshot of {GPU_AMI} "
        f"({MOTO_ROOT_GIB} GiB); give it a disk of {MOTO_ROOT_GIB} GiB or more"
    ]
    unverified = [
        v
        for v in of(judge(moto_pack, program), "ami-facts-unknown")  # lookup off: it cannot tell
        if "disk-fits-ami-snapshot cannot verify" in v["message"]
    ]
    assert [v["level"] for v in unverified] == ["advisory", "advisory"]


def test_the_config_and_the_resources_record_come_before_ec2(moto_pack):
    def program():
        launch_template("small", disk=MOTO_ROOT_GIB - 5, tags={"mixed-os-racks/ami-root-snapshot-gib": "5"})

    assert not of(judge(moto_pack, program, LOOKUP), "disk-fits-ami-snapshot")
    config = {**LOOKUP, "disk-fits-ami-snapshot": {"lookup": True, "amiRootSnapshotGiB": {GPU_AMI: 50}}}
    assert messages(judge(moto_pack, program, config), "disk-fits-ami-snapshot") == [
        f"launch template 'small': disk {MOTO_ROOT_GIB - 5} GiB is smaller than the root snapshot of {GPU_AMI} (50 "
        f"GiB); give it a disk of 50 GiB or more"
    ]


def test_the_other_facts_come_from_ec2_too(moto_pack):
    def program():
        managed_node_group(
            "arm", ami_id=GPU_AMI, operating_system="AL2023", disk_size=100, instance_types=["m7g.large"]
        )

    config = {**LOOKUP, "ami-k8s-version": {"lookup": True, "kubernetesVersion": "1.33"}}
    violations = judge(moto_pack, program, config)
    assert messages(violations, "arch-matches-ami") == [
        f"node group 'arm': arch arm64 does not match {GPU_AMI}, which is x86_64 (pin an arm64 AMI, or set the lane's "
        f"arch to x86_64)"
    ]
    assert [v["level"] for v in of(violations, "pinned-ami-age")] == ["advisory"]
    assert "created 2020-01-01" in of(violations, "pinned-ami-age")[0]["message"]
    assert messages(violations, "ami-k8s-version", "advisory") == [
        f"node group 'arm': pinned AMI {GPU_AMI} ('amazon-eks-node-al2023-x86_64-nvidia-580-1.29-v20200101') is built "
        "for Kubernetes 1.29, but the cluster runs 1.33 (pin an AMI built for 1.33)"
    ]


def test_an_image_ec2_does_not_have_cannot_be_verified(moto_pack):
    def program():
        launch_template("ghost", image=MISSING_AMI, disk=50)

    violations = [
        v
        for v in of(judge(moto_pack, program, LOOKUP), "ami-facts-unknown")
        if "disk-fits-ami-snapshot" in v["message"]
    ]
    assert [v["level"] for v in violations] == ["advisory"]
    assert (
        f"disk-fits-ami-snapshot cannot verify disk 50 GiB against the root snapshot of {MISSING_AMI}"
        in violations[0]["message"]
    )
    assert "the look-up failed: EC2 DescribeImages: InvalidAMIID.NotFound" in violations[0]["message"]


# ---- selectors: by name, tags and SSM parameter, resolved as Karpenter and EC2 resolve them ----------------------


def test_a_name_term_is_queried_as_karpenter_queries_it(ec2):
    """karpenter-provider-aws ``pkg/providers/amifamily/ami.go``: a name term filters by name (wildcards) with the
    owners ``self`` and ``amazon`` unless it names one; only available images; deprecated ones included."""
    filters, owners = amifacts.karpenter_query({"name": "team-*"})
    assert filters == [{"Name": "state", "Values": ["available"]}, {"Name": "name", "Values": ["team-*"]}]
    assert owners == ["self", "amazon"]
    assert amifacts.karpenter_query({"name": "x", "owner": "999999999999"})[1] == ["999999999999"]
    assert amifacts.karpenter_query({"tags": {"team": "ml", "os": "*"}}) == (
        [
            {"Name": "state", "Values": ["available"]},
            {"Name": "tag:team", "Values": ["ml"]},
            {"Name": "tag-key", "Values": ["os"]},
        ],
        [],
    )

    ours, theirs = register(ec2, 20, name="team-al2023-a"), register(ec2, 20, name="other-al2023-b")
    ec2.create_tags(Resources=[ours], Tags=[{"Key": "team", "Value": "ml"}])
    assert [i.id for i in lookup.select({"name": "team-*"})] == [ours]
    assert lookup.select({"name": "team-*", "owner": "999999999999"}) == []
    assert [i.id for i in lookup.select({"tags": {"team": "ml"}})] == [ours]
    assert [i.id for i in lookup.select({"tags": {"team": "*"}})] == [ours]
    assert theirs not in [i.id for i in lookup.select({"name": "*-al2023-*", "tags": {"team": "ml"}})]


def test_an_ssm_parameter_names_the_image(ec2):
    """Karpenter reads an ``ssmParameter`` term with SSM GetParameter and skips a missing parameter or one that
    holds no AMI id; EC2 reads a launch template's ``resolve:ssm:`` image the same way."""
    ami = register(ec2, 20)
    ssm = boto3.client("ssm", region_name="us-east-1")
    ssm.put_parameter(Name="/team/ami", Value=ami, Type="String")
    ssm.put_parameter(Name="/team/text", Value="hello", Type="String")
    assert [i.id for i in lookup.select({"ssmParameter": "/team/ami"})] == [ami]
    assert lookup.select({"ssmParameter": "/team/missing"}) == []
    assert lookup.select({"ssmParameter": "/team/text"}) == []


def test_karpenter_keeps_one_image_per_architecture():
    """Newest per architecture, a non-deprecated image before a deprecated one, other architectures dropped."""

    def image(ami: str, arch: str, created: str, deprecated: str = "") -> amifacts.AmiFacts:
        return amifacts.AmiFacts(ami, name=ami, architecture=arch, creation_date=created, deprecation_time=deprecated)

    old, new, gone = (
        image("x1", "x86_64", "2026-01-01"),
        image("x2", "x86_64", "2026-02-01"),
        image("x3", "x86_64", "2026-03-01", "2026-03-02"),
    )
    arm, i386 = image("a1", "arm64", "2026-01-15"), image("i1", "i386", "2026-04-01")
    assert [i.id for i in amifacts.karpenter_choice([old, new, gone, arm, i386])] == ["x2", "a1"]
    assert [i.id for i in amifacts.karpenter_choice([old, gone])] == ["x1"]  # not deprecated beats newer
    assert [i.id for i in amifacts.karpenter_choice([gone])] == [
        "x3"
    ]  # a deprecated image is used when nothing else matches


SELECTED = {
    **{policy: {"lookup": True} for policy in ("disk-fits-ami-snapshot", "arch-matches-ami", "al2023-family")},
    "root-volume-encrypted": {"ebsEncryptionByDefault": True},
}


def test_the_pack_judges_every_image_a_name_resolves_to(moto_pack):
    def program():
        node_class("team", [{"name": "team-gpu-al2023-*"}], volumes=root_volume(f"{MOTO_ROOT_GIB - 5}Gi"))
        node_pool("team", arch=["arm64"], node_class_name="team")

    newest_x86, arm = TEAM_IMAGES[1][0], TEAM_IMAGES[2][0]
    disk = [
        f"EC2NodeClass 'team': disk {MOTO_ROOT_GIB - 5} GiB is smaller than the root snapshot of {ami} (the AMI named "
        f"'team-gpu-al2023-*') ({MOTO_ROOT_GIB} GiB); give it a disk of {MOTO_ROOT_GIB} GiB or more"
        for ami in (newest_x86, arm)
    ]
    violations = judge(moto_pack, program, SELECTED)
    assert sorted(messages(violations, "disk-fits-ami-snapshot")) == sorted(
        disk
    )  # the older x86_64 build is never used
    assert not of(violations, "arch-matches-ami")  # the arm64 image boots the arm64 pool
    assert not of(violations, "ami-facts-unknown")


def test_a_name_that_resolves_to_no_image_of_the_pools_architecture(moto_pack):
    def program():
        node_class("x86-only", [{"name": "team-gpu-al2023-x86_64-*"}], volumes=root_volume("50Gi"))
        node_pool("graviton", ["m7g"], node_class_name="x86-only")

    assert messages(judge(moto_pack, program, SELECTED), "arch-matches-ami") == [
        f"karpenter nodepool 'graviton' (EC2NodeClass 'x86-only'): arch arm64 does not match {TEAM_IMAGES[1][0]} (the "
        f"AMI "
        "named 'team-gpu-al2023-x86_64-*'), which is x86_64 (pin an arm64 AMI, or set the lane's arch to x86_64)"
    ]


def test_a_launch_template_image_from_ssm(moto_pack):
    def program():
        launch_template("ssm", image="resolve:ssm:/team/gpu/image", disk=MOTO_ROOT_GIB - 1)
        launch_template("nothing", image="resolve:ssm:/team/not-an-image", disk=50)

    violations = judge(moto_pack, program, SELECTED)
    assert not of(violations, "ami-id-format")  # resolve:ssm: is EC2's own syntax, not a malformed id
    assert messages(violations, "disk-fits-ami-snapshot") == [
        f"launch template 'ssm': disk {MOTO_ROOT_GIB - 1} GiB is smaller than the root snapshot of {TEAM_IMAGES[2][0]} "
        f"(the AMI in SSM parameter '/team/gpu/image') ({MOTO_ROOT_GIB} GiB); give it a disk of {MOTO_ROOT_GIB} GiB or "
        f"more"
    ]
    (unresolved,) = [v for v in of(violations, "ami-facts-unknown") if "'nothing': disk-fits" in v["message"]]
    assert "the AMI in SSM parameter '/team/not-an-image': EC2 finds no image it selects" in unresolved["message"]


# ---- the stack's region and profile (PULUMI_CONFIG, as the CLI hands the pack its stack config) ----------------


def test_the_lookup_uses_the_stacks_region_not_the_shells(ec2, monkeypatch):
    # the shell says us-east-1 (CREDENTIALS); the stack says eu-west-1, where the image is
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"aws:region": "eu-west-1", "rack:cluster_name": "c"}))
    there = boto3.client("ec2", region_name="eu-west-1")
    volume = there.create_volume(Size=20, AvailabilityZone="eu-west-1a")
    snapshot = there.create_snapshot(VolumeId=volume["VolumeId"])
    ami = there.register_image(
        Name="eu-image",
        RootDeviceName="/dev/xvda",
        BlockDeviceMappings=[{"DeviceName": "/dev/xvda", "Ebs": {"SnapshotId": snapshot["SnapshotId"]}}],
    )["ImageId"]
    assert lookup.describe_image(ami).name == "eu-image"
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"rack:cluster_name": "c"}))  # no aws:region: the shell's
    lookup.clear()
    with pytest.raises(LookupError, match="does not exist"):  # us-east-1 has no such image
        lookup.describe_image(ami)


def test_the_lookup_uses_the_stacks_profile(ec2, monkeypatch):
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"aws:region": "us-east-1", "aws:profile": "no-such-profile"}))
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    with pytest.raises(LookupError, match="no-such-profile"):
        lookup.describe_image(register(ec2, 20))


@pytest.mark.parametrize(
    "environ, settings",
    [
        (
            {"PULUMI_CONFIG": '{"aws:region": "eu-west-1", "aws:profile": "ci"}'},
            {"region_name": "eu-west-1", "profile_name": "ci"},
        ),
        ({"PULUMI_CONFIG": '{"aws:region": ""}'}, {}),
        ({"PULUMI_CONFIG": "not json"}, {}),
        ({}, {}),
    ],
)
def test_the_stacks_aws_settings(environ, settings):
    assert lookup.stack_aws_settings(environ) == settings
