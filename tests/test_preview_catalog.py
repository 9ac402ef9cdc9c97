"""The AMI catalog of the offline preview as a user gives it: ``--amis FILE`` adds to the default catalog (an
entry of FILE replacing the default's of the same id or key), and what the catalog knows of an AMI reaches the
pack's AMI-facts policies for any program, one with none of the components among them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mixed_os_racks.cli import main
from mixed_os_racks.offline.catalog import Catalog
from mixed_os_racks.pack import checks
from mixed_os_racks.pack.policies import policies

from conftest import GPU_AMI, REPO

PACK = REPO / "policies"
BIG_ROOT_AMI = "ami-0c0ffee0c0ffee0c0"
"""Not in the default catalog: an AL2023 GPU image built with a 120 GiB root disk."""


def write_catalog(folder: Path, *amis: dict, **sections: object) -> Path:
    path = folder / "my-amis.yaml"
    path.write_text(yaml.safe_dump({"amis": list(amis), **sections}))
    return path


def image(ami_id: str, snapshot: float) -> dict:
    return {
        "id": ami_id,
        "name": "amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261201",
        "description": "EKS-optimized Kubernetes node based on Amazon Linux 2023",
        "architecture": "x86_64",
        "root_device_name": "/dev/xvda",
        "root_snapshot_gib": snapshot,
        "creation_date": "2026-12-01T08:00:00.000Z",
        "owner_id": "111122223333",
    }


# ---- --amis adds to the default catalog ----------------------------------------------------------------------


def test_a_catalog_of_ones_own_image_keeps_the_default_catalogs_images_and_subnets(tmp_path, capsys):
    """prod's cluster goes into the default catalog's subnets and its GPU pool pins the default catalog's image:
    a file holding only a team's own image still previews prod (it used to replace the default: subnet not found)."""
    mine = write_catalog(tmp_path, image(BIG_ROOT_AMI, 120))
    code = main(["preview", "--stack", "prod", "--cwd", str(REPO), "--amis", str(mine), "--no-policy"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    catalog = Catalog.with_default(mine)
    assert {BIG_ROOT_AMI, GPU_AMI} <= set(catalog.amis) and catalog.source == str(mine)
    assert catalog.subnets == Catalog.load().subnets


def test_an_entry_of_the_file_replaces_the_defaults_entry_of_the_same_id(tmp_path, capsys):
    """prod's GPU pool pins GPU_AMI on a 200 GiB disk: a file saying that image's root snapshot is 300 GiB wins over
    the default's 100 GiB, and the pool is refused with the key path and the value."""
    mine = write_catalog(tmp_path, image(GPU_AMI, 300))
    code = main(["preview", "--stack", "prod", "--cwd", str(REPO), "--amis", str(mine), "--no-policy"])
    err = capsys.readouterr().err
    assert code == 2
    assert "disk 200 GiB is smaller than the root snapshot" in err and "300" in err


def test_each_section_is_added_key_by_key_and_the_ebs_default_only_when_the_file_sets_it(tmp_path):
    default = Catalog.load()
    unset = Catalog.with_default(
        write_catalog(tmp_path, subnets={"subnet-0123456789abcdef0": "us-west-2a"}, prices={"g5.xlarge": 2.0})
    )
    assert unset.subnets == {**default.subnets, "subnet-0123456789abcdef0": "us-west-2a"}
    assert unset.prices == {**default.prices, "g5.xlarge": 2.0}
    assert unset.amis == default.amis and unset.ebs_encryption_by_default is default.ebs_encryption_by_default
    assert (
        Catalog.with_default(write_catalog(tmp_path, ebs_encryption_by_default=True)).ebs_encryption_by_default is True
    )
    assert Catalog.with_default(None).amis == default.amis


def test_help_says_the_file_adds_to_the_default_catalog(capsys):
    with pytest.raises(SystemExit):
        main(["preview", "--help"])
    assert "added to the default catalog" in " ".join(capsys.readouterr().out.split())


# ---- the catalog's facts reach the pack, whatever the program ----------------------------------------------


PLAIN_PROGRAM = f'''"""A team's own program: pulumi-eks and pulumi-kubernetes, none of the rack's components."""
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

cluster = aws.eks.Cluster.get("shared", "shared")
eks.ManagedNodeGroup(
    "train",
    cluster={{"cluster": cluster, "endpoint": cluster.endpoint, "instanceRoles": [],
             "subnetIds": cluster.vpc_config.subnet_ids, "vpcId": cluster.vpc_config.vpc_id}},
    node_role_arn="arn:aws:iam::123456789012:role/train",
    ami_id="{BIG_ROOT_AMI}",
    disk_size=50,
    instance_types=["g5.2xlarge"],
    operating_system="AL2023",
)
k8s.core.v1.Namespace("ml", metadata={{"name": "ml"}})
'''


def plain_project(folder: Path) -> Path:
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: plain-gpu\nruntime: python\n")
    (folder / "__main__.py").write_text(PLAIN_PROGRAM)
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    return folder


def test_a_plain_programs_node_group_below_its_amis_snapshot_is_refused_from_the_catalog(tmp_path, capsys):
    """pulumi-eks puts ``diskSize`` in the launch template it builds when ``amiId`` is given
    (``createMNGCustomLaunchTemplate``, pulumi/pulumi-eks nodejs/eks/nodes/nodegroup.ts at 7bf0c1b1: one block device
    mapping of ``diskSize`` GiB, the image ``amiId``): EC2 refuses a root volume below the image's root snapshot. The
    catalog holds the snapshot's size; the pack hears it from the offline preview, not only from the components' own
    records."""
    project = plain_project(tmp_path / "plain")
    out = tmp_path / "out.json"
    code = main(
        [
            "preview",
            "--cwd",
            str(project),
            "--stack",
            "dev",
            "--amis",
            str(write_catalog(tmp_path, image(BIG_ROOT_AMI, 120))),
            "--policy-pack",
            str(PACK),
            "--json",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1, captured.err
    violations = json.loads(out.read_text())["violations"]
    refused = [v for v in violations if v["policy"] == "disk-fits-ami-snapshot"]
    assert [v["level"] for v in refused] == ["mandatory"]
    assert BIG_ROOT_AMI in refused[0]["message"] and "120" in refused[0]["message"] and "50" in refused[0]["message"]
    unknown = [v["message"] for v in violations if v["policy"] == "ami-facts-unknown"]
    assert not [m for m in unknown if "disk-fits-ami-snapshot" in m or "arch-matches-ami" in m], unknown
    # the account's EBS encryption default is a fact of the catalog only when it states it (the default catalog
    # assumes a new account's, which a mandatory verdict should not rest on): stated, it reaches the pack too
    assert [m.split(":")[1].split()[0] for m in unknown] == ["root-volume-encrypted"]
    code = main(
        [
            "preview",
            "--cwd",
            str(project),
            "--stack",
            "dev",
            "--policy-pack",
            str(PACK),
            "--json",
            str(out),
            "--amis",
            str(write_catalog(tmp_path, image(BIG_ROOT_AMI, 40), ebs_encryption_by_default=True)),
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert [v["policy"] for v in json.loads(out.read_text())["violations"]] == []


def test_every_policy_that_takes_ami_facts_is_given_the_catalogs():
    """The offline preview gives ``amis`` to the policies ``checks.AMI_FACTS_POLICIES`` names: those whose config
    schema has it."""
    with_facts = {
        p.name for p in policies() if p.config_schema is not None and "amis" in (p.config_schema.properties or {})
    }
    assert set(checks.AMI_FACTS_POLICIES) == with_facts
    facts = Catalog.load().policy_facts()[GPU_AMI]
    assert (
        facts["rootSnapshotGiB"] == 100 and facts["architecture"] == "x86_64" and facts["rootDeviceName"] == "/dev/xvda"
    )
