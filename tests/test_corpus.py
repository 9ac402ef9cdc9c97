"""The pack on configurations shaped like published ones, with the verdict a rack reviewer gives each.

``tests/corpus/`` holds Kubernetes manifests written for this project in the shapes of public setups
(Karpenter's own examples, AWS's Karpenter blueprints, data-on-eks and ai-on-eks pools, terraform-aws-eks),
and trimmed copies of other teams' published manifests and charts (a ``Source:`` line names the repository,
commit and files; ``tests/corpus/README.md`` lists them); each one's header names the setup it models, the verdict
(``accept``, or ``refuse`` and the mandatory policies), the advisories expected (none unless listed), messages to find
word for word, the policy config it is judged with, and how it is applied (yaml/v2 ``ConfigFile`` or ``ConfigGroup``, or
v1 ``ConfigFile``, each expanded offline as its provider expands it). Node groups, which are not manifests, are cases in
code below (pulumi-eks and terraform-aws-eks shapes). Every case goes through the pack's real gRPC server.

The verdicts follow the rack's rules: (a) an AMI id is ``ami-`` and 8 or 17 lowercase hex digits; (b) a lane
pinned to a custom AMI declares AL2023; (c) the root disk fits the AMI's root snapshot; (d) no GPU lane on
Bottlerocket (Bottlerocket aliases and EKS Auto Mode launch its NVIDIA variant for GPU instances, per
karpenter-provider-aws ``pkg/providers/amifamily/bottlerocket.go`` and the EKS user guide's Auto Mode pages);
(e) a pool launches an architecture one of its pinned AMIs boots (Karpenter keeps one image per
architecture: ``pkg/providers/amifamily/ami.go``).
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s
import pytest

from mixed_os_racks.offline import run_program
from mixed_os_racks.offline.policyconfig import parse_config
from policy_helpers import BOTTLEROCKET_TOML, NODEADM, existing_cluster, start_pack

CORPUS = Path(__file__).with_name("corpus")
PUBLIC_SETUPS = (
    "aws/karpenter-provider-aws",
    "aws-samples/karpenter-blueprints",
    "awslabs/data-on-eks",
    "awslabs/ai-on-eks",
    "terraform-aws-modules/terraform-aws-eks",
    "pulumi/pulumi-eks",
    "awsdocs/amazon-eks-user-guide",
    "kubernetes-sigs/karpenter",
    "NVIDIA/k8s-device-plugin",
    "NVIDIA/k8s-dra-driver-gpu",
    "ray-project/kuberay",
    "kubeflow/trainer",
    "kserve/kserve",
    "knative/serving",
    "argoproj/argo-workflows",
    "volcano-sh/volcano",
    "kubernetes-sigs/jobset",
    "kubernetes-sigs/lws",
    "NVIDIA/k8s-nim-operator",
    "ai-dynamo/dynamo",
    "SlinkyProject/slurm-operator",
    "sgl-project/ome",
    "Project-HAMi/HAMi",
    "NVIDIA/KAI-Scheduler",
    "kubernetes-sigs/kueue",
)
APPLIERS: dict[str, Callable[[str, Path], Any]] = {
    "ConfigFile": lambda name, path: k8s.yaml.v2.ConfigFile(name, file=str(path)),
    "ConfigGroup": lambda name, path: k8s.yaml.v2.ConfigGroup(name, files=[str(path)]),
    "ConfigFile v1": lambda name, path: k8s.yaml.ConfigFile(name, file=str(path)),
}


@dataclass
class Case:
    path: Path
    models: str = ""
    refuses: set[str] = field(default_factory=set)
    accepted: bool = False
    advisories: set[str] = field(default_factory=set)
    messages: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    applied: str = ""
    source: str = ""
    """For a trimmed copy of a published manifest: ``owner/repo@<commit> <paths>``."""

    @property
    def name(self) -> str:
        return self.path.stem


def read_case(path: Path) -> Case:
    case = Case(path)
    fields: list[tuple[str, str]] = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        match = re.match(r"# ([A-Z][a-z]+(?: with)?): (.*)", line)
        if match:
            fields.append((match.group(1), match.group(2)))
        elif fields and line.startswith("#   "):
            fields[-1] = (fields[-1][0], f"{fields[-1][1]} {line[4:]}")
    for key, value in fields:
        if key == "Models":
            case.models = value
        elif key == "Verdict":
            verdict, _, policies = value.partition(" ")
            case.accepted = verdict == "accept"
            case.refuses = {p.strip() for p in policies.split(",") if p.strip()}
        elif key == "Advisory":
            case.advisories |= {p.strip() for p in value.split(",")}
        elif key == "Message":
            case.messages.append(value)
        elif key == "Config":
            case.config = json.loads(value)
        elif key == "Applied with":
            case.applied = value
        elif key == "Source":
            case.source = value
    return case


CASES = [read_case(path) for path in sorted(CORPUS.glob("*.yaml"))]


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:
        yield running


def verdict(pack, program: Callable[[], None], config: dict[str, Any]) -> list[dict[str, Any]]:
    run = run_program(program, {"aws:region": "us-east-1"}, stack="corpus")
    pack.configure(parse_config(config), run)
    return pack.analyze(run)


def test_the_corpus_is_documented_and_covers_the_shapes_that_matter():
    assert len(CASES) >= 20
    for case in CASES:
        assert case.models and any(setup in case.models for setup in PUBLIC_SETUPS), case.name
        assert case.accepted != bool(case.refuses), f"{case.name}: accept, or refuse with the policies"
        assert case.applied in APPLIERS, case.name
    text = "\n".join(case.path.read_text() for case in CASES)
    assert "eks.amazonaws.com/instance-category" in text and "kind: NodeClass" in text  # Auto Mode
    assert "instance-gpu-count" in text and "instance-gpu-manufacturer" in text and "nvidia.com/gpu.present" in text
    assert {case.applied for case in CASES} == set(APPLIERS)
    assert any("multi-arch" in case.name for case in CASES)
    readme = CORPUS.joinpath("README.md").read_text()
    for case in CASES:
        if case.source:  # a copy names its repository and a full commit, and the README lists it
            assert re.match(r"[\w.-]+/[\w.-]+@[0-9a-f]{40} ", case.source), case.name
            assert case.path.name in readme and case.source.split(" ", 1)[0] in readme, case.name


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_published_shape_gets_the_reviewers_verdict(pack, case: Case):
    def program() -> None:
        APPLIERS[case.applied](case.name, case.path)

    run = run_program(program, {"aws:region": "us-east-1"}, stack="corpus")
    objects = [r for r in run.resources if r.type.startswith("kubernetes:") and "yaml" not in r.type]
    assert objects, "the manifest's objects are registered (the component expanded)"
    pack.configure(parse_config(case.config), run)
    violations = pack.analyze(run)
    assert {v["policy"] for v in violations if v["level"] == "mandatory"} == case.refuses, violations
    assert {v["policy"] for v in violations if v["level"] == "advisory"} == case.advisories, violations
    said = [v["message"] for v in violations]
    for message in case.messages:
        assert message in said, said


# ---- node groups: pulumi-eks and terraform-aws-eks shapes, as programs ----------------------------------------

PINNED = "ami-0a1b2c3d4e5f60718"
FACTS = {  # a custom AL2023 image with a 20 GiB root snapshot, in an account that encrypts new volumes
    "disk-fits-ami-snapshot": {"amiRootSnapshotGiB": {PINNED: 20}},
    "arch-matches-ami": {"amis": {PINNED: {"architecture": "x86_64"}}},
    "root-volume-encrypted": {"ebsEncryptionByDefault": True},
}
ROLE = "arn:aws:iam::123456789012:role/nodes"


def bottlerocket_mng_gpu() -> None:
    """pulumi/pulumi-eks tests/testdata/programs/managed-ng-os: ``bottlerocket-mng-gpu``, Bottlerocket with
    ``gpu: true`` on g5g (a Graviton host with NVIDIA T4G GPUs). Refused: a GPU lane on Bottlerocket."""
    eks.ManagedNodeGroup(
        "bottlerocket-mng-gpu",
        cluster=existing_cluster(),
        node_role_arn=ROLE,
        operating_system="Bottlerocket",
        gpu=True,
        instance_types=["g5g.xlarge"],
    )


def al2023_mng_custom_ami() -> None:
    """pulumi/pulumi-eks managed-ng-os: ``al-2023-mng-custom-ami``, a pinned AL2023 image, ``diskSize`` 100."""
    eks.ManagedNodeGroup(
        "al-2023-mng-custom-ami",
        cluster=existing_cluster(),
        node_role_arn=ROLE,
        ami_id=PINNED,
        operating_system="AL2023",
        instance_types=["t3.medium"],
        disk_size=100,
    )


def custom_managed_nodegroup() -> None:
    """pulumi/pulumi-eks examples/custom-managed-nodegroup: the caller's launch template (image, nodeadm user
    data, a 20 GiB root, exactly the snapshot) on a managed node group that declares no OS."""
    template = aws.ec2.LaunchTemplate(
        "custom-lt",
        image_id=PINNED,
        user_data=NODEADM,
        block_device_mappings=[{"device_name": "/dev/xvda", "ebs": {"volume_size": 20, "volume_type": "gp3"}}],
    )
    eks.ManagedNodeGroup(
        "custom",
        cluster=existing_cluster(),
        node_role_arn=ROLE,
        instance_types=["t3.medium"],
        launch_template={"id": template.id, "version": template.latest_version.apply(str)},
    )


def bottlerocket_launch_template_on_pulumi_eks() -> None:
    """The same example with Bottlerocket TOML in the caller's launch template. Refused, and the fix is the
    template's own user data: pulumi-eks renders no user data for a launch template it did not build."""
    template = aws.ec2.LaunchTemplate(
        "br-lt", image_id=PINNED, user_data=base64.b64encode(BOTTLEROCKET_TOML.encode()).decode()
    )
    eks.ManagedNodeGroup(
        "br",
        cluster=existing_cluster(),
        node_role_arn=ROLE,
        instance_types=["t3.medium"],
        launch_template={"id": template.id, "version": "1"},
    )


def terraform_bottlerocket_custom() -> None:
    """terraform-aws-modules/terraform-aws-eks tests/eks-managed-node-group: ``bottlerocket_custom``, a pinned
    image in the module's launch template, ``ami_type`` BOTTLEROCKET_x86_64 choosing its user data. The module
    gives the node group no AMI type beside an ``ami_id`` (``ami_type = var.ami_id != "" ? null : ...``, after
    EKS's custom-AMI launch template rule). Refused: a pin off AL2023."""
    template = aws.ec2.LaunchTemplate(
        "bottlerocket-custom", image_id=PINNED, user_data=base64.b64encode(BOTTLEROCKET_TOML.encode()).decode()
    )
    aws.eks.NodeGroup(
        "bottlerocket_custom",
        cluster_name="corpus",
        node_role_arn=ROLE,
        subnet_ids=["subnet-a"],
        instance_types=["m6i.large"],
        scaling_config={"desired_size": 1, "min_size": 1, "max_size": 2},
        launch_template={"id": template.id, "version": template.latest_version.apply(str)},
    )


def terraform_efa() -> None:
    """terraform-aws-eks tests/eks-managed-node-group: ``efa``, EKS's AL2023 NVIDIA AMI on p4d with the GPU taint."""
    aws.eks.NodeGroup(
        "efa",
        cluster_name="corpus",
        node_role_arn=ROLE,
        subnet_ids=["subnet-a"],
        ami_type="AL2023_x86_64_NVIDIA",
        instance_types=["p4d.24xlarge"],
        scaling_config={"desired_size": 1, "min_size": 1, "max_size": 2},
        taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
    )


GPU_ON_BR = (
    "make this a GPU lane, and GPU lanes must run Amazon Linux 2023, not Bottlerocket (move them to an AL2023 "
    "pool or node group)"
)
NODE_GROUP_CASES = [
    (
        bottlerocket_mng_gpu,
        {"gpu-lane-os"},
        f"node group 'bottlerocket-mng-gpu': instance types g5g.xlarge {GPU_ON_BR}",
    ),
    (al2023_mng_custom_ami, set(), None),
    (custom_managed_nodegroup, set(), None),
    (
        bottlerocket_launch_template_on_pulumi_eks,
        {"al2023-family"},
        "node group 'br': a pinned ami_id needs an AL2023 node group (got bottlerocket); its user data must be a "
        "nodeadm NodeConfig (apiVersion: node.eks.aws/v1alpha1)",
    ),
    (
        terraform_bottlerocket_custom,
        {"al2023-family"},
        "node group 'bottlerocket_custom': a pinned ami_id needs an AL2023 node group (got bottlerocket); give the "
        "launch template a nodeadm NodeConfig as its user data, and the node group ami_type CUSTOM or none",
    ),
    (terraform_efa, set(), None),
]


@pytest.mark.parametrize(
    ("program", "refuses", "message"), NODE_GROUP_CASES, ids=[c[0].__name__ for c in NODE_GROUP_CASES]
)
def test_a_published_node_group_shape_gets_the_reviewers_verdict(pack, program, refuses, message):
    violations = verdict(pack, program, FACTS)
    assert {v["policy"] for v in violations if v["level"] == "mandatory"} == refuses, violations
    assert not [v for v in violations if v["level"] == "advisory"], violations
    if message:
        assert message in [v["message"] for v in violations]
