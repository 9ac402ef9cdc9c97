"""The pack's pure layer: rules, resource reading and the policies, without a server.

Also: the pack directory imports as the pack runs it (``python policies``: top-level ``rules``,
``bootfacts``, ``checks``), with no pulumi in its rules and no boto3 until a look-up is asked for.
"""

from __future__ import annotations

import base64
import ast
import subprocess
import sys
from collections.abc import Mapping
from typing import Any, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import GPU_AMI, REPO
from mixed_os_racks import contract
from mixed_os_racks.pack import bootfacts, checks, rules
from mixed_os_racks.facts import wellknown as reqs
from mixed_os_racks.facts.amifacts import AmiFacts, decode
from policy_helpers import AMI_IDS, HEX

ids = AMI_IDS


def lane(type_: str, props: dict[str, Any], name: str = "r") -> bootfacts.LaneResource:
    found = bootfacts.read(type_, name, props)
    assert found is not None
    return found


def node_class(terms: list[dict[str, Any]], **spec: Any) -> bootfacts.LaneResource:
    return lane(contract.NODE_CLASS, {"metadata": {"name": "team"}, "spec": {"amiSelectorTerms": terms, **spec}})


# ---- the id rule, property-based ------------------------------------------------------------------------


@given(ids)
def test_a_node_class_id_is_flagged_exactly_when_the_rule_refuses_it(ami):
    """A hand-written class is named as itself; one our components built (tagged with its pool) as its pool."""
    found = [f.message for f in checks.ami_id_format(node_class([{"id": ami}]))]
    # the rule, written out here rather than read back from the implementation: ami- and 8 or 17 lowercase hex
    well_formed = len(ami) in (12, 21) and ami.startswith("ami-") and all(c in "0123456789abcdef" for c in ami[4:])
    assert found == ([] if well_formed else [rules.invalid_ami_id("EC2NodeClass 'team'", ami)])
    ours = node_class([{"id": ami}], tags={contract.NODEPOOL_LABEL: "gpu"})
    assert [f.message for f in checks.ami_id_format(ours)] == (
        [] if well_formed else [rules.invalid_ami_id("karpenter nodepool 'gpu'", ami)]
    )


MNG_URN = "urn:pulumi:s::p::eks:index:ManagedNodeGroup$aws:ec2/launchTemplate:LaunchTemplate::mng-launchTemplate"
MNG_PARENT = "urn:pulumi:s::p::eks:index:ManagedNodeGroup::mng"


@given(ids)
def test_every_kind_of_lane_checks_its_ids_the_same_way(ami):
    lanes = [
        lane(contract.LAUNCH_TEMPLATE, {"imageId": ami}, "lt"),
        bootfacts.read(
            contract.LAUNCH_TEMPLATE, "mng-launchTemplate", {"imageId": ami}, MNG_URN, MNG_PARENT
        ),  # pulumi-eks's
        lane(bootfacts.NODE_GROUP_V2, {"amiId": ami}, "v2"),
    ]
    flagged = [bool(list(checks.ami_id_format(each))) for each in lanes]  # type: ignore[arg-type]
    # an empty id pins nothing: a deployed template's outputs say imageId "" for none (terraform's unset
    # string), and pulumi-eks looks the EKS-optimized AMI up for an empty amiId
    assert flagged == [ami != "" and rules.invalid_ami_id("x", ami) is not None] * 3
    subjects = [checks.subject(each) for each in lanes]  # type: ignore[arg-type]
    assert subjects == ["launch template 'lt'", "node group 'mng'", "node group 'v2'"]


def test_a_launch_template_image_from_ssm_is_a_selector_not_an_id():
    """EC2 resolves ``resolve:ssm:<parameter>`` in a launch template's image at launch."""
    template = lane(contract.LAUNCH_TEMPLATE, {"imageId": "resolve:ssm:/team/gpu-ami"}, "lt")
    assert list(checks.ami_id_format(template)) == []
    assert template.amis() == [
        bootfacts.Ami(None, "the AMI in SSM parameter '/team/gpu-ami'", {"ssmParameter": "/team/gpu-ami"})
    ]


@given(st.sampled_from([8, 17]).flatmap(lambda n: st.text(HEX, min_size=n, max_size=n)))
def test_a_well_formed_id_is_reasoned_about_by_the_other_rules(digits):
    ami = f"ami-{digits}"
    assert checks.well_formed([bootfacts.Ami(ami, ami)]) == [bootfacts.Ami(ami, ami)]
    assert checks.well_formed([bootfacts.Ami(ami.upper(), ami)]) == []


# ---- reading resources ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quantity", "gib"),
    [
        ("200Gi", 200.0),
        ("1Ti", 1024.0),
        ("100G", 100e9 / 2**30),
        ("2T", 2e12 / 2**30),
        (" 20Gi ", 20.0),
        ("1.5Ti", 1536.0),
        ("20", 20 / 2**30),
        ("lots", None),
        (200.0, None),
        (None, None),
    ],
)
def test_volume_sizes_are_kubernetes_quantities(quantity, gib):
    assert bootfacts.quantity_gib(quantity) == (pytest.approx(gib) if gib is not None else None)


NODEADM = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n"
MIME = (
    'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n'
    f"--B\nContent-Type: application/node.eks.aws\n\n{NODEADM}--B--\n"
)


@pytest.mark.parametrize(
    ("user_data", "os_name"),
    [
        (NODEADM, "al2023"),
        (base64.b64encode(MIME.encode()).decode(), "al2023"),
        ('[settings.kubernetes]\ncluster-name = "c"\n', "bottlerocket"),
        (base64.b64encode(b"[settings]\nmotd = 'hi'\n").decode(), "bottlerocket"),
        ("#!/bin/bash\n/etc/eks/bootstrap.sh my-cluster\n", "al2"),
        ("#cloud-config\npackages: [nginx]\n", ""),
        (None, ""),
    ],
)
def test_user_data_says_which_os_boots(user_data, os_name):
    assert bootfacts.os_of_user_data(user_data) == os_name


@pytest.mark.parametrize(
    ("ami_type", "os_name"),
    [
        ("AL2023_x86_64_NVIDIA", "al2023"),
        ("AL2023_ARM_64_STANDARD", "al2023"),
        ("BOTTLEROCKET_ARM_64_NVIDIA", "bottlerocket"),
        ("AL2_x86_64_GPU", "al2"),
        ("WINDOWS_CORE_2022_x86_64", "windows"),
        ("CUSTOM", "custom"),
        ("", ""),
    ],
)
def test_eks_ami_types(ami_type, os_name):
    assert bootfacts.os_of_ami_type(ami_type) == os_name


@pytest.mark.parametrize(
    ("name", "description", "os_name"),
    [
        ("amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115", "", "al2023"),
        ("bottlerocket-aws-k8s-1.33-nvidia-x86_64-v1.30.0-abc", "", "bottlerocket"),
        ("amazon-eks-gpu-node-1.29-v20240101", "", "al2"),
        ("ubuntu-eks/k8s_1.29/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-20240101", "", "ubuntu"),
        ("team-image-7", "Amazon Linux 2023 with NVIDIA 580", "al2023"),
        ("team-image-7", "", None),
    ],
)
def test_an_amis_own_words_name_its_os(name, description, os_name):
    assert rules.os_of_ami(name, description) == os_name


@pytest.mark.parametrize(
    ("name", "minor"),
    [
        ("amazon-eks-node-al2023-x86_64-standard-1.33-v20261115", "1.33"),
        ("bottlerocket-aws-k8s-1.29-x86_64-v1.30.0", "1.29"),
        ("team-gpu-image", None),
        ("mixed-1.29-and-1.30", None),
    ],
)
def test_the_kubernetes_minor_an_ami_name_names(name, minor):
    assert rules.k8s_minor_of_ami(name) == minor


def test_node_class_facts():
    nc = node_class([{"alias": "bottlerocket@v1.30.0"}], amiFamily="AL2023")
    assert nc.os() == "bottlerocket" and nc.amis() == []  # an alias is the family and no pin
    nc = node_class(
        [
            {"id": GPU_AMI},
            {"name": "team-*", "owner": "self"},
            {"tags": {"team": "ml", "os": "al2023"}},
            {"ssmParameter": "/team/ami"},
        ],
        amiFamily="Custom",
    )
    assert [a.label for a in nc.amis()] == [
        GPU_AMI,
        "the AMI named 'team-*' owned by self",
        "the AMI tagged os=al2023,team=ml",
        "the AMI in SSM parameter '/team/ami'",
    ]
    assert [a.how for a in nc.amis()] == ["id", "name", "tags", "SSM parameter"]
    assert nc.os() == "custom"
    assert node_class([], amiFamily="AL2023").root_disk("/dev/xvda") == bootfacts.Disk(20.0, "Karpenter's default")
    assert node_class([], amiFamily="Custom").root_disk("/dev/xvda") is None  # the AMI's own size
    rooted = node_class(
        [],
        blockDeviceMappings=[
            {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "4Gi"}},
            {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "300Gi"}, "rootVolume": True},
        ],
    )
    # EC2 boots from the mapping named like the AMI's root device; ``rootVolume`` marks the kubelet's volume
    # (the CRD: "mounted as kubelet root dir"; Karpenter reads it for ephemeral storage only)
    assert rooted.root_disk("/dev/xvda") == bootfacts.Disk(4.0)
    assert rooted.kubelet_disk("/dev/xvda") == bootfacts.Disk(300.0)


def test_node_pool_facts():
    pool = lane(
        contract.NODE_POOL,
        {
            "metadata": {"name": "p"},
            "spec": {
                "template": {
                    "spec": {
                        "nodeClassRef": {"name": "nc"},
                        "requirements": [
                            {"key": "karpenter.k8s.aws/instance-family", "operator": "NotIn", "values": ["g5"]},
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": ["g6.xlarge", "m7i.large"],
                            },
                        ],
                    }
                }
            },
        },
    )
    assert pool.node_class_name == "nc" and pool.arch_requirement() == []
    assert checks.gpu_reason(pool) == "instance types g6.xlarge"  # NotIn is not a GPU lane


def test_karpenter_kinds_of_any_version_are_read():
    assert isinstance(bootfacts.read("kubernetes:karpenter.k8s.aws/v1beta1:EC2NodeClass", "n", {}), bootfacts.NodeClass)
    assert isinstance(bootfacts.read("kubernetes:karpenter.sh/v1beta1:NodePool", "n", {}), bootfacts.NodePool)
    assert bootfacts.read("aws:iam/role:Role", "n", {}) is None


# ---- where snapshot sizes come from ----------------------------------------------------------------------


def _disk(config: dict[str, Any], tags: dict[str, str], ec2: Any = None) -> list[checks.Finding]:
    """disk-fits-ami-snapshot on one launch template: 25 GiB of disk on GPU_AMI, with ``tags``."""
    template = checks.StackResource(
        contract.LAUNCH_TEMPLATE,
        "lt",
        "urn:lt",
        {
            "imageId": GPU_AMI,
            "tags": tags,
            "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 25.0}}],
        },
    )
    return checks.judge_stack(
        checks.disk_fits_ami_snapshot, [template], checks.AmiKnowledge(config, ec2, policy="disk")
    )


def test_snapshot_size_sources_in_order():
    """The config, then what the resource records, then EC2 (only with lookup: true)."""

    def ec2(ami: str) -> AmiFacts:
        return decode(ami, {"rootSnapshotGiB": 30.0, "rootDeviceName": "/dev/xvda"})

    recorded = {contract.ROOT_SNAPSHOT_TAG: "20"}
    assert [
        f.message.rsplit("(", 1)[-1]
        for f in _disk({"amiRootSnapshotGiB": {GPU_AMI: 40.0}, "lookup": True}, recorded, ec2)
    ] == ["40 GiB); give it a disk of 40 GiB or more"]
    assert _disk({"lookup": True}, recorded, ec2) == []  # 20 GiB recorded: the disk fits
    assert [f.message.rsplit("(", 1)[-1] for f in _disk({"lookup": True}, {}, ec2)] == [
        "30 GiB); give it a disk of 30 GiB or more"
    ]
    unknown = _disk({}, {}, ec2)  # lookup is off
    assert [(f.unverified, f.certain) for f in unknown] == [(True, True)]


def test_a_failed_look_up_is_the_reason():
    def ec2(ami: str) -> AmiFacts:
        raise LookupError("EC2 DescribeImages: UnauthorizedOperation: no")

    (found,) = _disk({"lookup": True}, {}, ec2)
    assert (
        found.unverified
        and "the look-up failed: EC2 DescribeImages: UnauthorizedOperation: no; to verify it" in found.message
    )


# ---- stack policies: unknowns stay with their lane ---------------------------------------------------------


class NotKnown(Exception):
    message = "value at .spec can't be known during preview"


class Later(Mapping):
    """A mapping whose every value is unknown, as the policy SDK's proxies present one."""

    def __getitem__(self, key: str) -> Any:
        raise NotKnown()

    def __iter__(self) -> Iterator[str]:
        return iter(["spec"])

    def __len__(self) -> int:
        return 1


def test_an_unknown_lane_is_uncertain_and_the_others_are_judged():
    resources = [
        checks.StackResource(
            contract.NODE_CLASS,
            "nc",
            "urn:nc",
            {"metadata": {"name": "br"}, "spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}},
        ),
        checks.StackResource(contract.NODE_POOL, "late", "urn:late", {"metadata": {"name": "late"}, "spec": Later()}),
        checks.StackResource(
            contract.NODE_POOL,
            "gpu",
            "urn:gpu",
            {
                "metadata": {"name": "gpu"},
                "spec": {
                    "template": {
                        "spec": {
                            "nodeClassRef": {"name": "br"},
                            "requirements": [
                                {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}
                            ],
                        }
                    }
                },
            },
        ),
    ]
    found = checks.judge_stack(checks.gpu_lane_os, resources, checks.AmiKnowledge({}), NotKnown)
    assert [(f.urn, f.certain) for f in found] == [("urn:late", False), ("urn:gpu", True)]
    assert found[0].message == "karpenter nodepool 'late': value at .spec can't be known during preview"
    assert found[1].message.startswith(
        "karpenter nodepool 'gpu' (EC2NodeClass 'br'): instance families g5 make this a GPU lane"
    )


# ---- the pack's modules: the rules alone load no Pulumi SDK and no AWS SDK ------------------------------------


def test_the_pack_modules_import_without_pulumi_or_boto3():
    # the pack process imports these from the installed package; the package's public names load lazily
    code = (
        "import sys\n"
        "from mixed_os_racks.pack import rules, bootfacts, checks, lookup, workloads\n"
        "assert not [m for m in sys.modules if m == 'pulumi' or m.startswith('pulumi.') or m.startswith('pulumi_')], "
        "sorted(m for m in sys.modules if m.startswith('pulumi'))\n"
        "assert 'boto3' not in sys.modules, 'boto3'\n"
        "assert checks.rules is rules and checks.bootfacts is bootfacts\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_rules_import_nothing_but_the_standard_library_and_the_os_family_records():
    # the records are standard library only themselves (test_layers.py): the rules stay pure
    source = (REPO / "components" / "pack" / "rules.py").read_text()
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == [
        "from __future__ import annotations",
        "import re",
        "from typing import Iterable, Mapping, Optional",
        "from ..facts import osfamily",
    ]


def test_every_module_imports_its_siblings_one_way():
    # relative imports inside the package, never a top-level name that only resolves from one folder
    package = {p.stem for p in (REPO / "components").rglob("*.py")}
    for path in (REPO / "components").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Try):
                caught = {getattr(h.type, "id", None) for h in node.handlers}
                assert "ImportError" not in caught and "ModuleNotFoundError" not in caught, path
            if isinstance(node, ast.Import):
                assert not {a.name.split(".")[0] for a in node.names} & (package - {"__init__", "__main__"}), path


# ---- what a NodePool's requirements select, read against the instance table ------------------------------------

K = "karpenter.k8s.aws/"


def pool(*requirements: tuple[str, str, list[str]]) -> list[Any]:
    return reqs.read([{"key": k, "operator": op, "values": values} for k, op, values in requirements])


@pytest.mark.parametrize(
    ("requirements", "reason"),
    [
        ([(K + "instance-gpu-count", "Gt", ["0"])], f"requirements {K}instance-gpu-count Gt [0]"),
        ([(K + "instance-gpu-count", "Gte", ["1"])], f"requirements {K}instance-gpu-count Gte [1]"),
        ([(K + "instance-gpu-count", "Lt", ["1"])], None),  # no GPU type has fewer than one GPU
        ([(K + "instance-gpu-count", "Exists", [])], f"requirements {K}instance-gpu-count Exists"),
        ([(K + "instance-gpu-count", "DoesNotExist", [])], None),
        ([(K + "instance-category", "NotIn", ["g", "p"])], None),
        ([(K + "instance-category", "In", ["c", "m", "r"])], None),
        ([(K + "instance-category", "In", ["g"]), (K + "instance-gpu-manufacturer", "In", ["amd"])], None),  # g4ad only
        ([(K + "instance-category", "In", ["g"]), (K + "instance-gpu-count", "DoesNotExist", [])], None),
        ([(K + "instance-gpu-name", "In", ["t4"])], f"requirements {K}instance-gpu-name In [t4]"),
        ([(K + "instance-accelerator-name", "In", ["inferentia2"])], None),  # Neuron: an accelerator, not a GPU
        (
            [("eks.amazonaws.com/instance-category", "In", ["p"])],
            "requirements eks.amazonaws.com/instance-category In [p]",
        ),
        ([(K + "instance-family", "In", ["g5", "m6i"])], "instance families g5"),
        ([(K + "instance-family", "In", ["g5"]), ("kubernetes.io/arch", "In", ["arm64"])], None),  # nothing can launch
        ([("node.kubernetes.io/instance-type", "In", ["p5.48xlarge"])], "instance types p5.48xlarge"),
    ],
)
def test_gpu_selection_reads_every_operator(requirements, reason):
    assert reqs.gpu_selection(pool(*requirements)) == reason


@pytest.mark.parametrize(
    ("requirements", "arches"),
    [
        ([], ["arm64", "x86_64"]),
        ([("kubernetes.io/arch", "In", ["amd64"])], ["x86_64"]),
        ([("kubernetes.io/arch", "NotIn", ["amd64"])], ["arm64"]),
        ([(K + "instance-family", "In", ["m7g", "c7g"])], ["arm64"]),
        ([(K + "instance-category", "In", ["c", "m", "r"])], ["arm64", "x86_64"]),
        (
            [(K + "instance-category", "In", ["g"]), (K + "instance-generation", "Gt", ["4"])],
            ["arm64", "x86_64"],
        ),  # g5g
        ([(K + "instance-family", "In", ["p6e-gb200"])], ["arm64"]),  # NVIDIA Grace
    ],
)
def test_the_architectures_a_pool_can_launch(requirements, arches):
    assert reqs.architectures(pool(*requirements)) == arches


def test_a_pool_joins_its_class_by_group_kind_and_name():
    def node_pool(ref: dict[str, str]) -> bootfacts.NodePool:
        found = bootfacts.read(
            contract.NODE_POOL, "p", {"metadata": {"name": "p"}, "spec": {"template": {"spec": {"nodeClassRef": ref}}}}
        )
        assert isinstance(found, bootfacts.NodePool)
        return found

    assert node_pool({"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}).auto_mode
    assert node_pool({"name": "default"}).node_class_ref == ("karpenter.k8s.aws", "EC2NodeClass", "default")
    assert (
        node_pool({"apiVersion": "karpenter.k8s.aws/v1beta1", "kind": "EC2NodeClass", "name": "x"}).node_class_ref[0]
        == "karpenter.k8s.aws"
    )
    classes = [
        checks.StackResource(
            contract.NODE_CLASS,
            "nc",
            "urn:nc",
            {"metadata": {"name": "default"}, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]}},
        )
    ]
    stack = checks.Stack(classes)
    assert (
        stack.node_class(node_pool({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}))
        is not None
    )
    assert stack.node_class(node_pool({"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"})) is None
    assert (
        stack.node_class(node_pool({"group": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "name": "default"}))
        is None
    )


def test_multi_architecture_rule():
    assert rules.no_ami_for_arch("s", ["amd64"], {"ami-a": "x86_64", "ami-b": "arm64"}) is None
    assert rules.no_ami_for_arch("s", ["amd64", "arm64"], {"ami-a": "x86_64"}) is None  # it launches what fits
    assert rules.no_ami_for_arch("s", ["arm64"], {"ami-a": "x86_64", "ami-b": "x86_64"}) == (
        "s: arch arm64 does not match any of its AMIs: ami-a is x86_64, ami-b is x86_64 (pin an arm64 AMI, or set the "
        "lane's arch to x86_64)"
    )


def test_numbers_in_messages_print_whole_and_in_full():
    # a service asking for a million GPUs was told it "requests 1e+06 nvidia.com/gpu"
    assert [rules.gib(v) for v in (20.0, 1e6, 1.5, 2**40)] == ["20", "1000000", "1.5", "1099511627776"]
