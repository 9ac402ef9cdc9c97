"""``root-volume-encrypted`` through the pack's real gRPC server, on every kind of node-boot resource,
and its agreement with the ``NodeGroup`` component.

The upstream facts it rests on:
- Karpenter's default block device mappings (no ``blockDeviceMappings`` on the EC2NodeClass) are
  encrypted gp3 volumes (``DefaultEBS`` in karpenter-provider-aws pkg/providers/amifamily/resolver.go).
- EC2 encrypts a volume made from a snapshot when the launch asks for it, when the snapshot is
  encrypted, or when the account encrypts new volumes by default; otherwise it is unencrypted.
- Public AMIs cannot have encrypted snapshots, so aliases and EKS ``amiType``s boot from unencrypted ones.
- pulumi-eks's managed-node-group launch template (built for ``amiId``) sizes the root volume and sets
  no ``encrypted`` flag (``createMNGCustomLaunchTemplate`` in nodejs/eks/nodes/nodegroup.ts).
"""

from __future__ import annotations

from typing import Any

import pulumi_aws as aws
import pulumi_eks as eks
import pytest

from conftest import GPU_AMI, rack_config, run_rack, stack_config
from mixed_os_racks import ConfigError
from mixed_os_racks.offline import Catalog
from policy_helpers import (
    NODEADM,
    eks_node_group,
    judge,
    launch_template,
    managed_node_group,
    messages,
    node_class,
    of,
    start_pack,
)

POLICY = "root-volume-encrypted"
SNAPSHOT_PLAIN = {"amis": {GPU_AMI: {"rootSnapshotEncrypted": False, "rootDeviceName": "/dev/xvda"}}}


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:
        yield running


def config(**props: Any) -> dict[str, Any]:
    return {POLICY: props}


def mapping(encrypted: Any = None, device: str = "/dev/xvda") -> list[dict[str, Any]]:
    ebs: dict[str, Any] = {"volumeSize": "100Gi", "volumeType": "gp3"}
    if encrypted is not None:
        ebs["encrypted"] = encrypted
    return [{"deviceName": device, "ebs": ebs}]


# ---- EC2NodeClass ------------------------------------------------------------------------------------------


def test_karpenter_defaults_are_encrypted(pack):
    found = judge(pack, lambda: node_class("plain", [{"alias": "al2023@latest"}]), config(ebsEncryptionByDefault=False))
    assert of(found, POLICY) == []


def test_an_encrypted_root_mapping_passes_whatever_the_account(pack):
    program = lambda: node_class("enc", [{"alias": "al2023@latest"}], volumes=mapping(True))  # noqa: E731
    assert of(judge(pack, program, config(ebsEncryptionByDefault=False)), POLICY) == []


def test_an_alias_class_that_asks_nothing_in_an_account_that_does_not_encrypt(pack):
    program = lambda: node_class("plain", [{"alias": "al2023@latest"}], volumes=mapping())  # noqa: E731
    assert messages(judge(pack, program, config(ebsEncryptionByDefault=False)), POLICY) == [
        "EC2NodeClass 'plain': the EKS-optimized AMI it selects has an unencrypted root snapshot and EBS "
        "encryption by default is off, so its root volumes would be unencrypted (set encrypted: true on the root "
        "volume's blockDeviceMappings entry)"
    ]
    # the account encrypts new volumes: fine
    assert of(judge(pack, program, config(ebsEncryptionByDefault=True)), POLICY) == []


def test_the_boot_volume_is_the_mapping_named_like_the_root_device_not_the_kubelets(pack):
    # EC2 matches a mapping to the AMI's devices by name; the EC2NodeClass's rootVolume marks the volume
    # "mounted as kubelet root dir" (the v1.14.1 CRD), which Karpenter reads for ephemeral storage only
    kubelet_on_xvdb = mapping(False) + [
        {"deviceName": "/dev/xvdb", "rootVolume": True, "ebs": {"volumeSize": "200Gi", "encrypted": True}}
    ]
    program = lambda: node_class("split", [{"alias": "al2023@latest"}], volumes=kubelet_on_xvdb)  # noqa: E731
    assert messages(judge(pack, program, config(ebsEncryptionByDefault=False)), POLICY) == [
        "EC2NodeClass 'split': the EKS-optimized AMI it selects has an unencrypted root snapshot and EBS "
        "encryption by default is off, so its root volumes would be unencrypted (set encrypted: true on the root "
        "volume's blockDeviceMappings entry)"
    ]


def test_unknown_account_default_is_reported_never_passed(pack):
    """Reported by the pack's own advisory, ``ami-facts-unknown``, naming this check and what would settle it."""
    program = lambda: node_class("plain", [{"alias": "al2023@latest"}], volumes=mapping(False))  # noqa: E731
    violations = judge(pack, program)
    assert of(violations, POLICY) == []
    found = of(violations, "ami-facts-unknown")
    assert [v["level"] for v in found] == ["advisory"]
    assert found[0]["message"] == (
        "EC2NodeClass 'plain': root-volume-encrypted cannot verify that the root volume from the EKS-optimized AMI it "
        "selects is encrypted: whether the account encrypts new EBS volumes by default is unknown; to verify it, set "
        "encrypted: true on the root volume's blockDeviceMappings entry; or set ebsEncryptionByDefault on "
        "root-volume-encrypted in the policy config; or set lookup: true on root-volume-encrypted (EC2 DescribeImages, "
        "GetEbsEncryptionByDefault)"
    )


def test_a_pinned_ami_with_an_encrypted_snapshot_passes(pack):
    program = lambda: node_class("gpu", [{"id": GPU_AMI}], volumes=mapping())  # noqa: E731
    encrypted = config(amis={GPU_AMI: {"rootSnapshotEncrypted": True}}, ebsEncryptionByDefault=False)
    assert of(judge(pack, program, encrypted), POLICY) == []
    plain = config(ebsEncryptionByDefault=False, **SNAPSHOT_PLAIN)
    assert messages(judge(pack, program, plain), POLICY) == [
        f"EC2NodeClass 'gpu': ami_id '{GPU_AMI}' has an unencrypted root snapshot and EBS encryption by default "
        "is off, so its root volumes would be unencrypted (set encrypted: true on the root volume's "
        "blockDeviceMappings entry)"
    ]


def test_mappings_without_the_root_device_leave_it_to_the_snapshot(pack):
    program = lambda: node_class("data", [{"alias": "al2023@latest"}], volumes=mapping(True, device="/dev/xvdb"))  # noqa: E731
    assert len(messages(judge(pack, program, config(ebsEncryptionByDefault=False)), POLICY)) == 1


# ---- launch templates ------------------------------------------------------------------------------------------


def test_a_node_groups_launch_template(pack):
    def program(encrypted: Any) -> None:
        ebs = aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(volume_size=100, encrypted=encrypted)
        template = aws.ec2.LaunchTemplate(
            "gpu-lt",
            image_id=GPU_AMI,
            user_data=NODEADM,
            block_device_mappings=[aws.ec2.LaunchTemplateBlockDeviceMappingArgs(device_name="/dev/xvda", ebs=ebs)],
        )
        eks_node_group("gpu", template, ami_type="CUSTOM")

    plain = config(ebsEncryptionByDefault=False, **SNAPSHOT_PLAIN)
    assert messages(judge(pack, lambda: program(None), plain), POLICY) == [
        f"launch template 'gpu-lt': ami_id '{GPU_AMI}' has an unencrypted root snapshot and EBS encryption by default "
        'is off, so its root volumes would be unencrypted (set encrypted "true" on the root device\'s block device '
        "mapping)"
    ]
    assert of(judge(pack, lambda: program("true"), plain), POLICY) == []


def test_a_template_without_an_image_boots_the_eks_ami(pack):
    def program() -> None:
        eks_node_group("std", launch_template("std-lt", image=None, user_data=None), ami_type="AL2023_x86_64_STANDARD")

    assert messages(judge(pack, program, config(ebsEncryptionByDefault=False)), POLICY) == [
        "launch template 'std-lt': the EKS-optimized AMI it selects has an unencrypted root snapshot and EBS "
        'encryption by default is off, so its root volumes would be unencrypted (set encrypted "true" on the '
        "root device's block device mapping)"
    ]


def test_a_template_that_boots_no_node_is_not_judged(pack):
    found = judge(pack, lambda: launch_template("bastion", user_data=None), config(ebsEncryptionByDefault=False))
    assert of(found, POLICY) == []


# ---- pulumi-eks groups -------------------------------------------------------------------------------------------


def test_a_pinned_pulumi_eks_managed_node_group(pack):
    program = lambda: managed_node_group("gpu", ami_id=GPU_AMI, instance_types=["g5.xlarge"])  # noqa: E731
    assert messages(judge(pack, program, config(ebsEncryptionByDefault=False, **SNAPSHOT_PLAIN)), POLICY) == [
        f"node group 'gpu': ami_id '{GPU_AMI}' has an unencrypted root snapshot and EBS encryption by default is off, "
        "so its root volumes would be unencrypted (pin an encrypted copy of the AMI, e.g. aws ec2 copy-image "
        "--encrypted, or turn on EBS encryption by default)"
    ]
    # no amiId and no launch template: EKS makes its own, which asks no encryption either (aws-ia
    # terraform-aws-eks-blueprints#138: "does NOT enforce encryption of the root volumes")
    standard = lambda: managed_node_group("std", instance_types=["m5.large"])  # noqa: E731
    assert messages(judge(pack, standard, config(ebsEncryptionByDefault=False)), POLICY) == [
        "node group 'std': the EKS-optimized AMI it selects has an unencrypted root snapshot and EBS encryption by "
        "default is off, so its root volumes would be unencrypted (give it a launch template whose root device "
        'mapping sets encrypted "true", or turn on EBS encryption by default)'
    ]
    assert of(judge(pack, standard, config(ebsEncryptionByDefault=True)), POLICY) == []


def test_a_self_managed_pulumi_eks_group(pack):
    def program(encrypted: Any) -> None:
        kw = {} if encrypted is None else {"node_root_volume_encrypted": encrypted}
        eks.NodeGroupV2("self", cluster="c", ami_id=GPU_AMI, instance_type="g5.xlarge", **kw)

    plain = config(ebsEncryptionByDefault=False, **SNAPSHOT_PLAIN)
    assert messages(judge(pack, lambda: program(None), plain), POLICY) == [
        f"node group 'self': ami_id '{GPU_AMI}' has an unencrypted root snapshot and EBS encryption by default is off, "
        "so its root volumes would be unencrypted (set nodeRootVolumeEncrypted: true)"
    ]
    assert of(judge(pack, lambda: program(True), plain), POLICY) == []


# ---- the rack's own lanes ---------------------------------------------------------------------------------------


def test_the_racks_lanes_pass_with_nothing_to_verify(pack):
    """Karpenter pools and unpinned node groups ask for encryption; nothing is left unverified."""
    found = judge(pack, run_rack(stack_config("prod"), stack="prod"), {})
    assert of(found, POLICY) == []


PLAIN_AMI = "ami-0aaaaaaaaaaaaaaa1"


def plain_catalog(by_default: bool) -> Catalog:
    return Catalog.from_doc(
        {
            "ebs_encryption_by_default": by_default,
            "amis": [
                {
                    "id": PLAIN_AMI,
                    "name": "custom-al2023-x86_64",
                    "description": "a custom AL2023 EKS node image",
                    "architecture": "x86_64",
                    "root_device_name": "/dev/xvda",
                    "root_snapshot_gib": 20,
                    "root_snapshot_encrypted": False,
                    "creation_date": "2026-11-15T08:12:40.000Z",
                    "owner_id": "111122223333",
                }
            ],
        }
    )


def test_the_component_and_the_pack_agree(pack):
    group = {"id": 1, "type": "g5.xlarge", "ami_id": PLAIN_AMI}
    with pytest.raises(ConfigError) as refused:
        run_rack(rack_config(additional_node_groups_config=[group]), plain_catalog(False))
    # the same group, built where the account encrypts by default; the pack is told it does not
    built = run_rack(rack_config(additional_node_groups_config=[group]), plain_catalog(True))
    told = config(ebsEncryptionByDefault=False, amis={PLAIN_AMI: {"rootSnapshotEncrypted": False}})
    assert messages(judge(pack, built, told), POLICY) == [
        str(refused.value).removeprefix("rack:additional_node_groups_config[0].ami_id: ")
    ]


def test_a_pinned_group_in_an_encrypting_account_records_why_it_is_encrypted(pack):
    """The component records the facts it looked up (a pack sees no invoke results): no advisory."""
    built = run_rack(
        rack_config(additional_node_groups_config=[{"id": 1, "type": "g5.xlarge", "ami_id": PLAIN_AMI}]),
        plain_catalog(True),
    )
    assert of(judge(pack, built, {}), POLICY) == []
