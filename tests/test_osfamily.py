"""The OS family records (``mixed_os_racks.facts.osfamily``) against what upstream wrote, and the code that reads them.

Upstream facts pinned here:
- The EKS API model (boto/botocore 1.43.11, ``botocore/data/eks/2017-11-01/service-2.json``, shape ``AMITypes``,
  trimmed in ``fixtures/eks-api/``): every ``amiType`` ``CreateNodegroup`` takes. Each record's AMI types are among
  them, and every one but ``CUSTOM`` and the Windows types begins with exactly one record's prefix.
- pulumi/pulumi-eks at 7bf0c1b1, ``nodejs/eks/nodes/ami.ts`` ``amiTypeMetadata``: each AMI type's OS spelling
  (``AL2``, ``AL2023``, ``Bottlerocket``), GPU support and architecture. The offline engine mirrors that table
  (``offline.eks_mng.AMI_TYPES``); the records must say the same of every type in it.
- The EC2NodeClass CRD of Karpenter v1.14.1 (``../shared/reference/karpenter-v1.14.1``): ``amiFamily`` is an enum
  (AL2, AL2023, Bottlerocket, Custom, ...) and CEL rules tie an alias's family to the ``amiFamily`` beside it.
- The same CRD's ``amiSelectorTerms[].alias`` (its description and CEL rules): ``family@version``, at most 30
  characters, the version ``latest`` or one release in the family's form, ``al2023@v20240625`` (an EKS AMI's
  build date) or ``bottlerocket@v1.10.0`` (a Bottlerocket release). Each record's ``alias_pattern`` takes those.
  aws/karpenter-provider-aws at 1d927085, ``pkg/providers/amifamily/bottlerocket.go`` ``DescribeImageQuery``: a
  Bottlerocket alias's version loses its leading ``v`` before it names the SSM parameter, so ``1.10.0`` is one too.
- pulumi/pulumi-eks at 7bf0c1b1, ``nodejs/eks/nodes/userdata.ts``: a node's user data is nodeadm ``NodeConfig``
  parts for AL2023, a ``bootstrap.sh`` script for AL2, TOML settings for Bottlerocket (each record's ``user_data``;
  ``test_remote_components`` reads it through the offline expansion of a ``ManagedNodeGroup``).
- aws/karpenter-provider-aws at 1d927085, ``pkg/providers/amifamily/``: ``DefaultEBS`` is 20Gi (``resolver.go``);
  AL2023 and AL2 map it on ``/dev/xvda``; Bottlerocket maps 4Gi on ``/dev/xvda`` and ``DefaultEBS`` on ``/dev/xvdb``,
  its ``EphemeralBlockDevice`` (``bottlerocket.go``). ``blockDeviceMappings`` replace these defaults, so a
  Bottlerocket class that sets them must name both volumes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, strategies as st

from crd_helpers import crd_schema, problems
from mixed_os_racks.facts import osfamily, upstream
from mixed_os_racks.karpenter import node_class_spec
from mixed_os_racks.lane import NodeOs
from mixed_os_racks.offline import eks_mng
from mixed_os_racks.pack import bootfacts, rules
from mixed_os_racks.spec import PoolSpec

EKS_MODEL = Path(__file__).parent / "fixtures" / "eks-api" / "service-2.trimmed.json"
EKS_AMI_TYPES: list[str] = json.loads(EKS_MODEL.read_text())["shapes"]["AMITypes"]["enum"]


def test_the_rack_families_are_the_public_enums_values_in_its_order():
    assert [f.name for f in osfamily.RACK_FAMILIES] == [o.value for o in NodeOs]
    assert all(osfamily.of(o) is f for o, f in zip(NodeOs, osfamily.RACK_FAMILIES))


def test_each_familys_ami_types_are_eks_own_and_complete():
    for family in osfamily.FAMILIES:
        assert set(family.ami_types.values()) <= set(EKS_AMI_TYPES), family.name
        assert all(t.startswith(family.ami_type_prefix) for t in family.ami_types.values())
        # every EKS type of the family but the FIPS builds has its (architecture, accelerator) key
        theirs = {t for t in EKS_AMI_TYPES if t.startswith(family.ami_type_prefix) and not t.endswith("_FIPS")}
        assert theirs == set(family.ami_types.values()), family.name


def test_every_eks_ami_type_but_custom_and_windows_is_one_familys():
    for ami_type in EKS_AMI_TYPES:
        owners = [f for f in osfamily.FAMILIES if ami_type.startswith(f.ami_type_prefix)]
        if ami_type == "CUSTOM" or ami_type.startswith("WINDOWS_"):
            assert owners == [] and osfamily.of_ami_type(ami_type) is None
            assert bootfacts.os_of_ami_type(ami_type) == ("custom" if ami_type == "CUSTOM" else "windows")
        else:
            assert len(owners) == 1, ami_type
            assert osfamily.of_ami_type(ami_type) is owners[0]
            assert bootfacts.os_of_ami_type(ami_type) == owners[0].name


@given(st.sampled_from(EKS_AMI_TYPES), st.lists(st.booleans(), min_size=40, max_size=40))
def test_an_ami_types_family_is_read_in_any_case(ami_type, upper):
    mixed = "".join(c.upper() if up else c.lower() for c, up in zip(ami_type, upper))
    assert osfamily.of_ami_type(mixed) is osfamily.of_ami_type(ami_type)
    assert bootfacts.os_of_ami_type(mixed) == bootfacts.os_of_ami_type(ami_type)


def test_the_records_agree_with_pulumi_eks_ami_type_table():
    for ami_type, meta in eks_mng.AMI_TYPES.items():
        family = osfamily.by_family(meta.os)
        assert family is not None and osfamily.of_ami_type(ami_type) is family, ami_type
        accelerator = osfamily.NVIDIA if meta.gpu else osfamily.STANDARD
        assert family.ami_types[(meta.arch, accelerator)] == ami_type


def test_each_familys_alias_and_amifamily_pass_the_ec2nodeclass_crd():
    enum = crd_schema("karpenter.k8s.aws/v1", "EC2NodeClass")["properties"]["spec"]["properties"]["amiFamily"]["enum"]
    for family in osfamily.FAMILIES:
        assert family.family in enum
        spec = {"amiFamily": family.family, "amiSelectorTerms": [{"alias": family.alias}], "role": "r", **SELECTORS}
        assert problems(_node_class(spec)) == [], family.name
        crd = (
            upstream.KARPENTER_ALIAS_FAMILIES,
            upstream.KARPENTER_ALIAS_LATEST_ONLY,
            upstream.KARPENTER_ALIAS_MAX_LENGTH,
        )
        assert rules.alias_problem(family.alias, *crd) is None


SELECTORS = {"subnetSelectorTerms": [{"id": "subnet-1"}], "securityGroupSelectorTerms": [{"id": "sg-1"}]}


def _node_class(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "n"}, "spec": spec}


def test_karpenters_default_block_devices():
    assert osfamily.AL2023.block_devices == (("/dev/xvda", 20),)
    assert osfamily.AL2.block_devices == (("/dev/xvda", 20),)
    assert osfamily.BOTTLEROCKET.block_devices == (("/dev/xvda", 4), ("/dev/xvdb", 20))
    # the data volume is the one Karpenter calls ephemeral: the root for AL2023 and AL2, the second for Bottlerocket
    assert [f.data_is_root for f in osfamily.FAMILIES] == [True, False, True]
    assert osfamily.BOTTLEROCKET.data_device == "/dev/xvdb"


def test_a_pools_ec2nodeclass_maps_every_device_of_its_family_with_the_data_volume_at_its_disk():
    for os_name in NodeOs:
        pool = PoolSpec(name="p", os=os_name, disk=120)
        spec = node_class_spec(pool, "rack", "node-role")
        family = osfamily.of(os_name)
        assert spec["amiFamily"] == family.family
        assert [m["deviceName"] for m in spec["blockDeviceMappings"]] == [d for d, _ in family.block_devices]
        sizes = {m["deviceName"]: m["ebs"]["volumeSize"] for m in spec["blockDeviceMappings"]}
        assert sizes[family.data_device] == "120Gi"
        assert all(sizes[d] == f"{gib}Gi" for d, gib in family.block_devices if d != family.data_device)
        assert problems(_node_class({**spec, **SELECTORS})) == [], os_name


@given(st.text(max_size=20))
def test_the_rules_read_what_a_family_allows_in_any_case(os_name):
    family = osfamily.named(os_name)
    gpu = rules.gpu_lane_on_bottlerocket("x", os_name, "instance families g5")
    assert (gpu is None) == (family is None or family.gpu_lanes)
    pinned = rules.pinned_ami_not_al2023("x", os_name)
    assert (pinned is None) == (family is not None and family.pinned_ami)


def test_what_a_family_allows():
    assert [(f.name, f.gpu_lanes, f.pinned_ami) for f in osfamily.FAMILIES] == [
        ("al2023", True, True),
        ("bottlerocket", False, False),
        ("al2", True, False),
    ]
    assert rules.gpu_lane_on_bottlerocket("x", "Bottlerocket", "instance families g5") is not None
    assert rules.pinned_ami_not_al2023("x", "AL2023") is None


def test_an_amis_name_names_its_family():
    named = {
        "amazon-eks-node-al2023-x86_64-standard-1.33-v20260901": "al2023",
        "bottlerocket-aws-k8s-1.33-x86_64-v1.44.0-abcdef12": "bottlerocket",
        "amazon-eks-node-1.29-v20250101": "al2",
        "amzn2-ami-hvm-2.0.20250101-x86_64-gp2": "al2",
        "al2023-ami-2023.6.20250101.0-kernel-6.1-x86_64": "al2023",
    }
    for name, os_name in named.items():
        assert rules.os_of_ami(name) == os_name, name
        assert osfamily.of(os_name).ami_name_pattern.search(name)


def test_each_familys_alias_pattern_takes_latest_and_its_own_release_form_only():
    releases = {"al2023": "v20240625", "al2": "v20240625", "bottlerocket": "v1.10.0"}  # the CRD's examples
    for family in osfamily.FAMILIES:
        assert family.alias_pattern.fullmatch(family.alias).group(1) == "latest"
        alias = f"{family.name}@{releases[family.name]}"
        assert family.alias_pattern.fullmatch(alias).group(1) == releases[family.name]
        others = [f.name for f in osfamily.FAMILIES if f.alias_pattern.fullmatch(alias)]
        assert others == [family.name], alias
    # a release in another family's form is not the family's
    assert not osfamily.AL2023.alias_pattern.fullmatch("al2023@v1.10.0")
    assert not osfamily.BOTTLEROCKET.alias_pattern.fullmatch("bottlerocket@v20240625")
    assert osfamily.BOTTLEROCKET.alias_pattern.fullmatch("bottlerocket@1.10.0").group(1) == "1.10.0"
    assert not osfamily.AL2023.alias_pattern.fullmatch("al2023@20240625")  # an EKS AMI release keeps its v


@given(
    st.sampled_from(osfamily.FAMILIES).flatmap(
        lambda f: st.tuples(st.just(f), st.from_regex(f.alias_pattern, fullmatch=True))
    )
)
def test_every_alias_a_familys_pattern_takes_passes_the_ec2nodeclass_crd(family_and_alias):
    family, alias = family_and_alias
    spec = {"amiFamily": family.family, "amiSelectorTerms": [{"alias": alias}], "role": "r", **SELECTORS}
    if len(alias) <= upstream.KARPENTER_ALIAS_MAX_LENGTH:  # a long release still breaks the CRD's length
        assert problems(_node_class(spec)) == [], alias


def test_each_familys_user_data_format():
    assert [(f.name, f.user_data) for f in osfamily.FAMILIES] == [
        ("al2023", osfamily.NODEADM),
        ("bottlerocket", osfamily.BOTTLEROCKET_TOML),
        ("al2", osfamily.BOOTSTRAP_SH),
    ]


def test_each_familys_eks_root_snapshot_is_the_volume_amazon_eks_ami_builds_it_on():
    """awslabs/amazon-eks-ami builds each family's EKS-optimized AMIs on a root volume of
    ``launch_block_device_mappings_volume_size`` GiB (``templates/<family>/variables-default.json``, trimmed in
    ``fixtures/amazon-eks-ami/``), so that is its root snapshot: a lane whose data is on the root is held to it.
    Bottlerocket's pods write to a data volume of their own, so none is judged there."""
    built = Path(__file__).parent / "fixtures" / "amazon-eks-ami"
    for family in (osfamily.AL2023, osfamily.AL2):
        variables = json.loads((built / f"{family.name}-variables-default.trimmed.json").read_text())
        assert family.data_is_root and family.eks_root_snapshot_gib == int(
            variables["launch_block_device_mappings_volume_size"]
        ), family.name
    assert not osfamily.BOTTLEROCKET.data_is_root and osfamily.BOTTLEROCKET.eks_root_snapshot_gib is None
    assert all((family.eks_root_snapshot_gib is None) == (not family.data_is_root) for family in osfamily.FAMILIES)
