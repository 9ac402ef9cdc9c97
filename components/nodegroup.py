"""``NodeGroup``: one EKS managed node group on Amazon Linux 2023, through pulumi-eks ``ManagedNodeGroup``.

How the hardening is done, and why this way (pulumi-eks 4.x, read from its source):

* **No ``ami_id``** (the EKS-optimized AMI of an ``ami_type`` chosen from the instance type):
  the group gets a launch template of its own (``<name>-launch-template``): IMDSv2 required (hop
  limit 2, what EKS and pulumi-eks use for node groups), an encrypted gp3 root volume of the
  group's ``disk`` on ``/dev/xvda``, and the group's tags on its instances and volumes. It carries
  no image and no user data, so EKS still picks the AMI from ``ami_type`` and merges its own
  bootstrap. pulumi-eks passes a given ``launch_template`` through as it is, as long as none of
  its own launch-template options (``ami_id``, ``enable_imd_sv2``, ``user_data``, ...) are set; the
  disk is then in the launch template, not in ``disk_size`` (EKS refuses both).
* **``ami_id``** (a pinned custom AL2023 image): pulumi-eks builds the launch template itself
  (``ami_id`` + ``operating_system=AL2023``): the image, the full nodeadm ``NodeConfig`` user data
  EKS does not merge for a custom AMI, ``disk_size`` moved into it, and IMDSv2 required through
  ``enable_imd_sv2``. It takes no launch template of ours alongside, and sets no ``encrypted``
  flag on the root volume: EC2 then encrypts it only when the AMI's root snapshot is encrypted
  or the account encrypts new volumes by default, so the preview checks exactly that (with the
  architecture and the root snapshot size) and refuses the AMI otherwise. The group's tags go
  on the node group; EKS puts only its own tags on the instances of this path.

Changing ``ami_id`` (one custom AMI for another) updates pulumi-eks's launch template, and the
node group rolls its nodes to the new launch template version; it is not replaced. Switching
between the two paths does replace the node group (EKS cannot drop an ``amiType`` in place).

Desired size starts at ``min_size``; pulumi-eks's ``ignore_scaling_changes`` puts
``ignoreChanges: ["scalingConfig.desiredSize"]`` on the ``aws.eks.NodeGroup`` it creates, so an
autoscaler's changes stay. (``ignore_changes`` on the ``ManagedNodeGroup`` itself would do
nothing: a component is not diffed, its children are.)

The cluster is an existing one: ``ExistingCluster.read`` reads it (``aws.eks.Cluster.get``) and
its IAM role, and hands pulumi-eks the ``CoreData`` it needs; a program that builds an
``eks.Cluster`` passes that instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional, Sequence, TypedDict, Union

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from policies import rules

from .ami import AmiLookup
from .config import BuildGroupConfig, ConfigError, NodeGroupConfig

AL2023_ROOT_DEVICE = "/dev/xvda"
BUILD_LABEL = "convox-build"
BUILD_TAINT_KEY = "dedicated"
WORKER_POLICIES = {
    "worker": "AmazonEKSWorkerNodePolicy",
    "cni": "AmazonEKS_CNI_Policy",
    "ecr": "AmazonEC2ContainerRegistryReadOnly",
}


def ami_type(instance_type: str) -> str:
    """The EKS AL2023 ``amiType`` for an instance type (used when no ``ami_id`` is pinned)."""
    arm = rules.is_arm_family(instance_type)
    if rules.is_nvidia_gpu_family(instance_type):
        return "AL2023_ARM_64_NVIDIA" if arm else "AL2023_x86_64_NVIDIA"
    if rules.is_neuron_family(instance_type):
        return "AL2023_x86_64_NEURON"
    return "AL2023_ARM_64_STANDARD" if arm else "AL2023_x86_64_STANDARD"


@dataclass(frozen=True)
class ExistingCluster:
    """An EKS cluster this program does not manage, read once and shared by its node groups."""

    cluster: aws.eks.Cluster
    cluster_role: aws.iam.Role
    k8s_provider: k8s.Provider

    @classmethod
    def read(
        cls, name: str, cluster_name: str, k8s_provider: k8s.Provider, opts: Optional[pulumi.ResourceOptions] = None
    ) -> "ExistingCluster":
        """Read the cluster ``cluster_name`` (``<name>``) and its IAM role (``<name>-role``)."""
        cluster = aws.eks.Cluster.get(name, cluster_name, opts=opts)
        role_name = cluster.role_arn.apply(lambda arn: arn.rsplit("/", 1)[-1])
        return cls(cluster, aws.iam.Role.get(f"{name}-role", role_name, opts=opts), k8s_provider)

    def core_data(self, node_role: aws.iam.Role) -> eks.CoreDataArgs:
        """What pulumi-eks needs of a cluster for one managed node group using ``node_role``.

        Without ``subnet_ids`` of its own, a group uses the cluster's subnets (pulumi-eks's default).
        """
        vpc = self.cluster.vpc_config
        return eks.CoreDataArgs(
            cluster=self.cluster,
            cluster_iam_role=self.cluster_role,
            endpoint=self.cluster.endpoint,
            instance_roles=[node_role],
            node_group_options=eks.ClusterNodeGroupOptionsArgs(),
            provider=self.k8s_provider,
            subnet_ids=vpc.subnet_ids,
            vpc_id=vpc.vpc_id,
        )


class NodeGroupArgs(TypedDict, total=False):
    group: NodeGroupConfig
    """The validated group; a ``BuildGroupConfig`` makes it a build lane."""
    cluster: Union[eks.Cluster, ExistingCluster]
    """The cluster: an ``eks.Cluster`` of this program, or ``ExistingCluster.read(...)``."""
    node_role: aws.iam.Role
    """The nodes' IAM role. Default: a role of the group's own with the three EKS worker policies."""
    default_disk: int
    """Root volume GiB when the group sets no ``disk`` (the rack's ``node_disk``). Default 20."""
    rack: str
    """The rack's name, written as the ``rack`` tag. Default: the component's name."""
    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]]
    """Subnets for the nodes. Default: the cluster's."""
    ami_lookup: AmiLookup
    """Shared AMI look-up, so an AMI pinned by many lanes is read once. Default: a private one."""


def node_labels(group: NodeGroupConfig) -> dict[str, str]:
    labels: dict[str, str] = {}
    if group.label:
        labels[rules.NODEGROUP_LABEL] = group.label
    if rules.is_nvidia_gpu_family(group.type or ""):
        labels[rules.GPU_VENDOR_LABEL] = rules.GPU_VENDOR_NVIDIA
    if isinstance(group, BuildGroupConfig):
        labels[BUILD_LABEL] = "true"
    return labels


def node_taints(group: NodeGroupConfig) -> list[dict[str, str]]:
    """EKS taints (effects in the EKS API's spelling)."""
    taints: list[dict[str, str]] = []
    if isinstance(group, BuildGroupConfig):
        taints.append({"key": BUILD_TAINT_KEY, "value": "build", "effect": "NO_SCHEDULE"})
    if group.dedicated and group.label:
        taints.append({"key": rules.DEDICATED_TAINT_KEY, "value": group.label, "effect": "NO_SCHEDULE"})
    if rules.is_nvidia_gpu_family(group.type or ""):
        taints.append({"key": rules.GPU_TAINT_KEY, "value": "true", "effect": "NO_SCHEDULE"})
    return taints


def _assume_role_policy() -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ],
        }
    )


class NodeGroup(pulumi.ComponentResource):
    """An EKS managed node group on AL2023: GPU, Neuron, Graviton or x86, optionally on a pinned AMI."""

    managed_node_group: eks.ManagedNodeGroup
    launch_template: Optional[aws.ec2.LaunchTemplate]
    node_role: aws.iam.Role

    def __init__(self, name: str, args: NodeGroupArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("rack:eks:NodeGroup", name, None, opts)
        group = args["group"]
        instance_type = group.type or ""
        subject = rules.node_group_subject(name)  # the pack names the ManagedNodeGroup the same way
        disk = group.disk or args.get("default_disk") or 20
        tags = {**group.tag_map(), "rack": args.get("rack") or name}

        pinned = group.ami_id
        group_tags = dict(tags)
        if pinned:
            problem = rules.invalid_ami_id(subject, pinned)
            if problem:
                raise ConfigError(problem)
            lookup = args.get("ami_lookup") or AmiLookup(pulumi.InvokeOptions(parent=self))
            facts = lookup.check(subject, pinned, [rules.instance_arch(instance_type)], disk)
            lookup.check_root_encryption(subject, facts)
            if facts.root_snapshot_gib is not None:
                group_tags[rules.ROOT_SNAPSHOT_TAG] = rules.gib(facts.root_snapshot_gib)

        child = pulumi.ResourceOptions(parent=self)
        role_ready: list[pulumi.Resource] = []
        node_role = args.get("node_role")
        if node_role is None:
            node_role = aws.iam.Role(f"{name}-role", assume_role_policy=_assume_role_policy(), tags=tags, opts=child)
            role_ready = [
                aws.iam.RolePolicyAttachment(
                    f"{name}-{short}", role=node_role.name, policy_arn=f"arn:aws:iam::aws:policy/{policy}", opts=child
                )
                for short, policy in WORKER_POLICIES.items()
            ]
        self.node_role = node_role

        self.launch_template = None
        launch_template: Optional[aws.eks.NodeGroupLaunchTemplateArgs] = None
        if not pinned:
            self.launch_template = aws.ec2.LaunchTemplate(
                f"{name}-launch-template",
                block_device_mappings=[
                    aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                        device_name=AL2023_ROOT_DEVICE,
                        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                            volume_size=disk, volume_type="gp3", encrypted="true", delete_on_termination="true"
                        ),
                    )
                ],
                metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                    http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=2
                ),
                tag_specifications=[
                    aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
                    for kind in ("instance", "volume")
                ],
                tags=tags,
                opts=child,
            )
            launch_template = aws.eks.NodeGroupLaunchTemplateArgs(
                id=self.launch_template.id, version=self.launch_template.latest_version.apply(str)
            )

        cluster = args["cluster"]
        self.managed_node_group = eks.ManagedNodeGroup(
            name,
            cluster=cluster.core_data(node_role) if isinstance(cluster, ExistingCluster) else cluster,
            node_role=node_role,
            operating_system=eks.OperatingSystem.AL2023,
            # pinned: pulumi-eks builds the launch template (image, nodeadm user data, disk, IMDSv2)
            ami_id=pinned,
            disk_size=disk if pinned else None,
            enable_imd_sv2=True if pinned else None,
            # not pinned: EKS's AMI for the type, our launch template (disk, IMDSv2, encryption, tags)
            ami_type=None if pinned else ami_type(instance_type),
            launch_template=launch_template,
            instance_types=[instance_type],
            capacity_type=group.capacity_type,
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=group.min_size, min_size=group.min_size, max_size=group.max_size
            ),
            ignore_scaling_changes=True,
            labels=node_labels(group),
            taints=[aws.eks.NodeGroupTaintArgs(**taint) for taint in node_taints(group)],
            tags=group_tags,
            subnet_ids=args.get("subnet_ids"),
            opts=pulumi.ResourceOptions(parent=self, depends_on=role_ready),
        )
        self.register_outputs({"nodeGroup": self.managed_node_group.node_group})
