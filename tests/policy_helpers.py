"""Shared by the policy pack tests: resources as other teams write them, and the pack's verdict on them."""

from __future__ import annotations

import base64
import itertools
from typing import Any, Callable, Mapping, Optional

import string

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from hypothesis import strategies as st

from mixed_os_racks.offline import ProgramRun, run_program
from mixed_os_racks.offline.packprocess import PolicyPackProcess, pack_env
from mixed_os_racks.offline.policyconfig import parse_config
from conftest import GPU_AMI, REPO

POLICIES = REPO / "policies"
HEX = "0123456789abcdef"
AMI_IDS = st.one_of(
    st.sampled_from([8, 17]).flatmap(lambda n: st.text(HEX, min_size=n, max_size=n)).map(lambda d: f"ami-{d}"),
    st.text(HEX + "ABCDEFxyz-", max_size=20).map(lambda d: f"ami-{d}"),
    st.text(string.printable, max_size=24),
)
"""Well-formed ids, near misses (wrong length, case, letters) and anything at all."""
OLD = "2020-01-01T00:00:00.000Z"
NODEADM = base64.b64encode(
    b"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: c\n"
).decode()
BOTTLEROCKET_TOML = '[settings.kubernetes]\ncluster-name = "c"\n'


_sources = itertools.count()


def start_pack() -> PolicyPackProcess:
    return PolicyPackProcess(POLICIES, pack_env("mixed-os-racks", "test"))


def judge(
    pack: PolicyPackProcess, program: Callable[[], Any] | ProgramRun, config: Optional[Mapping[str, Any]] = None
) -> list[dict[str, Any]]:
    """The pack's violations for ``program`` (run offline) under the policy ``config`` (the CLI's file format)."""
    run = (
        program if isinstance(program, ProgramRun) else run_program(program, {"aws:region": "us-east-1"}, stack="test")
    )
    pack.configure(parse_config(config or {}), run)
    return pack.analyze(run)


def of(violations: list[dict[str, Any]], policy: str) -> list[dict[str, Any]]:
    return [v for v in violations if v["policy"] == policy]


def messages(violations: list[dict[str, Any]], policy: str, level: str = "mandatory") -> list[str]:
    return [v["message"] for v in of(violations, policy) if v["level"] == level]


def facts(ami: str = GPU_AMI, **entry: Any) -> dict[str, Any]:
    """Policy config giving one AMI's facts to every facts-reading policy."""
    amis = {"amis": {ami: entry}}
    return {
        p: amis
        for p in ("al2023-family", "arch-matches-ami", "pinned-ami-age", "ami-k8s-version", "disk-fits-ami-snapshot")
    }


# ---- resources as another team would write them ------------------------------------------------------


def node_class(
    name: str,
    terms: Any,
    family: Optional[str] = "AL2023",
    volumes: Any = None,
    annotations: Optional[dict[str, str]] = None,
    resource: Optional[str] = None,
    **spec: Any,
) -> k8s.apiextensions.CustomResource:
    body: dict[str, Any] = {"amiSelectorTerms": terms, "role": "KarpenterNodeRole-t", **spec}
    if family is not None:
        body["amiFamily"] = family
    if volumes is not None:
        body["blockDeviceMappings"] = volumes
    metadata: dict[str, Any] = {"name": name}
    if annotations:
        metadata["annotations"] = annotations
    return k8s.apiextensions.CustomResource(
        resource or f"{name}-nodeclass",
        api_version="karpenter.k8s.aws/v1",
        kind="EC2NodeClass",
        metadata=metadata,
        spec=body,
    )


def root_volume(size: Any, device: str = "/dev/xvda") -> list[dict[str, Any]]:
    return [{"deviceName": device, "ebs": {"volumeSize": size, "volumeType": "gp3"}}]


def node_pool(
    name: str,
    families: Any = None,
    arch: Optional[list[str]] = None,
    taints: Optional[list[dict[str, str]]] = None,
    labels: Optional[dict[str, str]] = None,
    node_class_name: Optional[str] = None,
) -> k8s.apiextensions.CustomResource:
    requirements: list[Any] = []
    if families is not None:
        requirements.append({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": families})
    if arch is not None:
        requirements.append({"key": "kubernetes.io/arch", "operator": "In", "values": arch})
    template: dict[str, Any] = {
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": node_class_name or name},
            "requirements": requirements,
        }
    }
    if taints:
        template["spec"]["taints"] = taints
    if labels:
        template["metadata"] = {"labels": labels}
    return k8s.apiextensions.CustomResource(
        f"{name}-nodepool",
        api_version="karpenter.sh/v1",
        kind="NodePool",
        metadata={"name": name},
        spec={"template": template},
    )


def launch_template(
    name: str,
    image: Any = GPU_AMI,
    disk: Any = None,
    user_data: Optional[str] = NODEADM,
    device: str = "/dev/xvda",
    **kw: Any,
) -> aws.ec2.LaunchTemplate:
    mappings = None
    if disk is not None:
        mappings = [
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=device, ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(volume_size=disk)
            )
        ]
    return aws.ec2.LaunchTemplate(name, image_id=image, user_data=user_data, block_device_mappings=mappings, **kw)


def eks_node_group(name: str, template: Optional[aws.ec2.LaunchTemplate], **kw: Any) -> aws.eks.NodeGroup:
    args: dict[str, Any] = dict(
        cluster_name="c",
        node_role_arn="arn:aws:iam::123456789012:role/n",
        subnet_ids=["s"],
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=1, min_size=1, max_size=2),
    )
    if template is not None:
        args["launch_template"] = aws.eks.NodeGroupLaunchTemplateArgs(id=template.id, version="1")
    args.update(kw)
    return aws.eks.NodeGroup(name, **args)


def existing_cluster(name: str = "c") -> dict[str, Any]:
    """pulumi-eks's ``CoreData`` for a cluster the program reads (what ``ManagedNodeGroup(cluster=...)`` takes):
    pulumi-eks reads its ``aws.eks.Cluster``'s name, version, endpoint and certificate authority, and the
    CoreData's ``subnetIds``. The keys are the schema's (the Python SDK sends a plain dict's keys as written)."""
    cluster = aws.eks.Cluster.get(f"{name}-cluster-{next(_sources)}", name)
    return {
        "cluster": cluster,
        "endpoint": cluster.endpoint,
        "instanceRoles": [],
        "subnetIds": cluster.vpc_config.subnet_ids,
        "vpcId": cluster.vpc_config.vpc_id,
    }


def managed_node_group(name: str, **kw: Any) -> eks.ManagedNodeGroup:
    """A pulumi-eks managed node group; offline, like under the CLI, its children are what the pack judges."""
    return eks.ManagedNodeGroup(
        name, cluster=existing_cluster(), node_role_arn="arn:aws:iam::123456789012:role/n", **kw
    )


def unknown(value: Any) -> pulumi.Output[Any]:
    """``value``, but not known until the resource it comes from exists (as at a real preview)."""
    source = aws.iam.Role(f"source-{next(_sources)}", assume_role_policy="{}")
    return source.arn.apply(lambda _: value)
