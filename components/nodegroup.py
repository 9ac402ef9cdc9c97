"""``NodeGroup``: one EKS managed node group on Amazon Linux 2023, through pulumi-eks ``ManagedNodeGroup``.

How the hardening is done, and why this way (pulumi-eks 4.x, ``nodejs/eks/nodes/nodegroup.ts``):

* **No ``ami_id``** (the EKS-optimized AMI of an ``ami_type`` chosen from the instance type):
  the group gets a launch template of its own (``<name>-launch-template``): IMDSv2 required (hop
  limit 2, what EKS and pulumi-eks use for node groups), an encrypted gp3 root volume of the
  group's ``disk`` on ``/dev/xvda``, and the group's tags on its instances and volumes. It carries
  no image and no user data, so EKS still picks the AMI from ``ami_type`` and merges its own
  bootstrap. pulumi-eks passes a given ``launch_template`` through as it is (and refuses it beside
  its own launch-template options); the disk is in the launch template, not in ``disk_size`` (EKS
  refuses both). pulumi-eks defaults the node group's ``version`` to the cluster's only when no
  launch template is given, so this group passes the cluster's version itself: after a control
  plane upgrade, the next ``pulumi up`` rolls the group to the new kubelet.
* **``ami_id``** (a pinned custom AL2023 image): pulumi-eks builds the launch template itself
  (``ami_id`` + ``operating_system=AL2023``): the image, the full nodeadm ``NodeConfig`` user data
  EKS does not merge for a custom AMI, ``disk_size`` moved into it on ``/dev/xvda`` (hard-coded
  for AL2023, so an AMI booting from another device is refused), and IMDSv2 required through
  ``enable_imd_sv2``. It drops ``version`` (the AMI decides the kubelet) and sets no ``encrypted``
  flag on the root volume: EC2 then encrypts it only when the AMI's root snapshot is encrypted or
  the account encrypts new volumes by default, so the preview checks exactly that (with the
  architecture and the root snapshot size) and refuses the AMI otherwise. The group's tags go on
  the node group; pulumi-eks puts none on its launch template.

Changing ``ami_id`` (one custom AMI for another) updates pulumi-eks's launch template, and the
node group rolls its nodes to the new launch template version; it is not replaced. Switching
between the two paths does replace the node group (EKS cannot drop an ``amiType`` in place).

A group with ``capacity_reservation_id`` launches into that EC2 capacity reservation: its launch template targets
the reservation by id (``capacityReservationSpecification``), and for a Capacity Block (``capacity_type:
CAPACITY_BLOCK``) also says ``instanceMarketOptions.marketType: capacity-block`` and the instance type, which then
leaves the node group's ``instanceTypes`` (EKS user guide, Capacity Blocks for managed node groups: a custom launch
template only, with those three; the group's capacity type ``CAPACITY_BLOCK``). Adding, changing or removing the
reservation of an ``ON_DEMAND`` group, or changing the block of a ``CAPACITY_BLOCK`` group, is a new launch template
version: the group rolls its nodes and is not replaced. Turning a group into a block group or back changes its
capacity type, which EKS cannot change in place: the group is replaced. A pinned AMI's launch template is
pulumi-eks's, which takes no reservation, so ``ami_id`` and ``canary_ami_id`` are refused beside one.

A group with ``canary_ami_id`` gets a second group, ``<name>-canary`` (a ``NodeGroup`` inside this one, sharing its
role, subnets and AMI look-up): fixed at ``canary_size`` nodes, on the candidate AMI (pinned, as above), with the
group's instance type, label and taints, so the group's pods land on it too, and tagged ``mixed-os-racks/canary-of``
with the group's name. Removing ``canary_ami_id`` deletes it and leaves the group as it was.

Desired size starts at ``min_size``. Who owns it afterwards depends on the group's bounds
(``spec.nodegroup.scaling_plan``). A fixed-size group (``min_size == max_size``, such as the system lane)
has nobody else to set its size: Pulumi owns it and sends it with every change of the bounds. A group
whose ``min_size`` is below its ``max_size`` is sized by the Cluster Autoscaler: the group reads the live
group (``aws.eks.get_node_groups`` and ``get_node_group``, EKS ``ListNodegroups`` and ``DescribeNodegroup``,
before anything is registered) and, while its bounds stay as they are, asks pulumi-eks to ignore
desired-size changes (``ignore_scaling_changes``: ``ignoreChanges: ["scalingConfig.desiredSize"]`` on the
``aws.eks.NodeGroup``), so the autoscaler's size stays; when a bound changes, it sends the live desired
size moved into the new bounds, which EKS accepts, and ignores nothing. The live group is the one
named after this component as the engine names it (pulumi-eks names the ``aws.eks.NodeGroup`` after the
``ManagedNodeGroup``): by pulumi-aws's ``tfbridge.AutoName`` (``<name>-`` and 7 hex digits), or as the stack's
``pulumi:autonaming`` says (``autonaming.py``); a group created before that config keeps its first name.
(``ignore_changes`` on the ``ManagedNodeGroup`` itself would do nothing: a component is not diffed, its children are.)
"""

import json
import re
from typing import Any, Callable, Mapping, NotRequired, Optional, Required, Sequence, TypedDict, cast

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks

from . import autonaming, contract, syntax
from .ami import AmiLookup, provider_reason
from .args import check_start, checked, documented, hosted, inherited_depends_on, is_later
from .cluster import ClusterRef
from .errors import ArgumentError, ConfigError
from .lane import AmiRef, LaneTaint, lane_taints
from .facts import instances, osfamily, upstream
from .pack import cost, reservedlanes, rules
from .spec import NodeGroupSpec
from .spec.nodegroup import Scaling, scaling_plan

WORKER_POLICIES = {
    "worker": "AmazonEKSWorkerNodePolicy",
    "cni": "AmazonEKS_CNI_Policy",
    "ecr": "AmazonEC2ContainerRegistryReadOnly",
}
ENCRYPTION_FIX = (
    "pin an encrypted copy of the AMI, e.g. aws ec2 copy-image --encrypted, or turn on EBS encryption by default"
)


def ami_type(instance_type: str) -> str:
    """The EKS AL2023 ``amiType`` for an instance type (used when no ``ami_id`` is pinned)."""
    family = instances.facts(instance_type)
    arch = instances.ARM if family.arch == instances.ARM else instances.X86
    if family.gpu == instances.NVIDIA:
        return osfamily.AL2023.ami_types[(arch, osfamily.NVIDIA)]
    if family.neuron:  # Inferentia and Trainium: x86 only
        return osfamily.AL2023.ami_types[(instances.X86, osfamily.NEURON)]
    return osfamily.AL2023.ami_types[(arch, osfamily.STANDARD)]


class NodeGroupArgs(TypedDict, total=False):
    group: Required[NodeGroupSpec]
    """The group; ``build`` true makes it a build lane."""
    cluster: Required[ClusterRef]
    """The cluster the group joins. In Python, ``ClusterRef.existing(...)`` or ``ClusterRef.created(eks_cluster)``."""
    node_role: NotRequired[pulumi.Input[str]]
    """The nodes' IAM role ARN (``arn:<partition>:iam::<account>:role/...``) (in Python also the ``aws.iam.Role``).
    Default: a role of the group's own with the three EKS worker policies."""
    rack: NotRequired[str]
    """The rack's name, written as the ``rack`` tag. Default: the component's name."""
    subnet_ids: NotRequired[pulumi.Input[Sequence[pulumi.Input[str]]]]
    """Subnets for the nodes. Default: the cluster's."""


RULES = {
    "node_role": lambda role: None if isinstance(role, aws.iam.Role) else syntax.role_arn_problem(role),
    "subnet_ids": lambda ids: syntax.ec2_ids_problem(list(ids), "subnet", most=None, unknown=is_later),
}
"""What EKS's CreateNodegroup takes (``syntax``): a role ARN, subnet ids; checked on each known value."""
PYTHON_ONLY = {"ami_lookup": AmiLookup}
"""``ami_lookup``: a shared AMI look-up, so an AMI pinned by many lanes is read once (default: a private one)."""
ALSO = {"node_role": (aws.iam.Role,)}


NOT_FOUND_RE = re.compile(r"ResourceNotFoundException|No cluster found|couldn't find resource|not found", re.I)
"""How EKS (and the AWS provider) say a cluster or node group does not exist: a group that is not there yet."""


def _stack_config(key: str) -> Optional[str]:
    return pulumi.Config(pulumi.get_project()).get(key)


def engine_naming(name: str) -> autonaming.Naming:
    """How the engine names this component's ``aws.eks.NodeGroup`` (pulumi-eks names it after the component) under
    the stack's ``pulumi:autonaming``, which the engine gives the program with the rest of the stack's config."""
    organization: Optional[str]
    try:
        organization = pulumi.get_organization()
    except Exception:  # an engine too old to say: a pattern that reads it names nothing
        organization = None
    stack = autonaming.Stack(organization, pulumi.get_project(), pulumi.get_stack(), _stack_config)
    return autonaming.naming(pulumi.Config("pulumi").get("autonaming"), contract.EKS_NODE_GROUP, name, stack)


def live_scaling(cluster_name: str, name: str, opts: pulumi.InvokeOptions) -> tuple[Optional[Scaling], Optional[str]]:
    """The scaling config EKS holds for this component's node group, or None when it does not exist yet;
    with the reason when it could not be read (the caller says so: a bound change may then be refused)."""
    naming = engine_naming(name)
    try:
        names = aws.eks.get_node_groups(cluster_name=cluster_name, opts=opts).names
        mine = sorted(n for n in names or [] if naming.matches(n))
        if not mine:
            # none there: a group yet to be created, unless the engine gives a new one a name nobody can know
            return None, (f"its name cannot be known ({naming.reason})" if naming.reason else None)
        if len(mine) > 1:
            named = (
                "named after it"
                if naming.how == "default"
                else f"named after it as {autonaming.CONFIG_KEY} or the provider's default names it"
            )
            return None, f"{len(mine)} node groups of cluster {cluster_name} are {named} ({', '.join(mine)})"
        found = aws.eks.get_node_group(cluster_name=cluster_name, node_group_name=mine[0], opts=opts)
    except Exception as exc:  # the provider's own error: no such cluster yet (a first `up`), or no permission
        reason = provider_reason(exc)
        return (None, None) if NOT_FOUND_RE.search(reason) else (None, reason)
    config = (found.scaling_configs or [None])[0]
    if config is None:
        return None, f"EKS gave node group {mine[0]} no scaling config"
    return Scaling(int(config.desired_size), int(config.min_size), int(config.max_size)), None


def _assume_role_policy(partition: str) -> str:
    """EC2 may assume the nodes' role (its service principal is ``ec2.amazonaws.com.cn`` in China)."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": upstream.ec2_principal(partition)},
                    "Action": "sts:AssumeRole",
                }
            ],
        }
    )


def reservation_template_args(group: NodeGroupSpec) -> dict[str, Any]:
    """What the group's launch template says of its capacity reservation (none without one): it targets the
    reservation by id (``capacityReservationSpecification.capacityReservationTarget``); for a Capacity Block, also
    the market type ``capacity-block`` and the instance type, which EKS requires in the launch template of a
    ``CAPACITY_BLOCK`` group (EKS user guide, Capacity Blocks for managed node groups)."""
    if group.capacity_reservation_id is None:
        return {}
    found: dict[str, Any] = {
        "capacity_reservation_specification": aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=group.capacity_reservation_id
            )
        )
    }
    if group.capacity_block:
        found["instance_market_options"] = aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(
            market_type=reservedlanes.BLOCK_MARKET
        )
        found["instance_type"] = group.instance_type
    return found


@documented
class NodeGroup(pulumi.ComponentResource):
    """An EKS managed node group on AL2023: GPU, Neuron, Graviton or x86, optionally on a pinned AMI.

    Example::

        inference = NodeGroup("inference", NodeGroupArgs(
            group=NodeGroupSpec(instance_type="g6.2xlarge", min_size=1, max_size=4, dedicated=True, label="inference"),
            cluster=ClusterRef.existing("prod", "prod-rack")))
        pulumi.export("inferenceTaints", inference.taints)
    """

    node_group_name: pulumi.Output[str]
    """The ``aws.eks.NodeGroup``'s name."""
    node_group_arn: pulumi.Output[str]
    """The ``aws.eks.NodeGroup``'s ARN."""
    role_arn: pulumi.Output[str]
    """The nodes' IAM role ARN."""
    labels: pulumi.Output[dict[str, str]]
    """The labels every node of the group carries."""
    taints: pulumi.Output[list[LaneTaint]]
    """The taints every node of the group carries, in Kubernetes' spelling (``NoSchedule``), as pods tolerate them
    (the ``aws.eks.NodeGroup`` itself takes the EKS API's ``NO_SCHEDULE``)."""
    ami: pulumi.Output[AmiRef]
    """What the group boots: ``{"amiType": ...}`` (EKS's AMI, updated by EKS releases), or a pinned
    ``{"id", "name", "created"}``."""
    max_hourly_usd: Optional[pulumi.Output[float]]
    """The group's budget in US dollars per hour (``group.max_hourly_usd``), held by the policy lane-cost-ceiling;
    unset when the group has none."""

    def __init__(self, name: str, args: NodeGroupArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("NodeGroup", name, opts)
        token, opts = hosted("NodeGroup", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, NodeGroupArgs, RULES, PYTHON_ONLY, ALSO)
        group: NodeGroupSpec = args["group"]
        cluster: ClusterRef = args["cluster"]
        problem = syntax.node_group_name_problem(name)
        if problem:
            raise ArgumentError(
                "NodeGroup", name, "name", f"invalid name '{name}' ({problem}): it names the EKS node group"
            )
        if group.name is not None and group.name != name:
            raise ArgumentError(
                "NodeGroup", name, "group.name", f"'{group.name}' must be the component's name or unset"
            )
        subject = rules.node_group_subject(name)  # the pack names the ManagedNodeGroup the same way
        tags = {**group.tags, "rack": args.get("rack") or name}

        pinned = group.ami_id
        group_tags = dict(tags)
        ami: AmiRef = {"amiType": ami_type(group.instance_type)}
        if pinned:
            lookup = cast(Optional[AmiLookup], args.get("ami_lookup")) or AmiLookup(pulumi.InvokeOptions(parent=self))
            where: Callable[[str], str] = lambda field: group.where("instance_type" if field == "arch" else field)  # noqa: E731
            device = lookup.facts(subject, pinned, where).root_device_name
            problem = device and rules.root_device_not_sized(subject, pinned, device, osfamily.AL2023.os_device)
            if problem:
                raise ConfigError(f"{where('ami_id')}: {problem}")
            facts = lookup.check(
                subject,
                pinned,
                [instances.instance_arch(group.instance_type)],
                group.disk,
                instances.nvidia_families([group.instance_type]),
                where,
            )
            ami = {"id": pinned, "name": facts.name, "created": facts.creation_date}
            by_default = lookup.check_root_encryption(subject, facts, ENCRYPTION_FIX, where)
            if facts.root_snapshot_gib is not None:
                group_tags[contract.ROOT_SNAPSHOT_TAG] = rules.gib(facts.root_snapshot_gib)
            group_tags[contract.ROOT_SNAPSHOT_ENCRYPTED_TAG] = str(bool(facts.root_snapshot_encrypted)).lower()
            if by_default:
                group_tags[contract.ENCRYPTION_BY_DEFAULT_TAG] = "true"

        child = pulumi.ResourceOptions(parent=self)
        role_ready: list[pulumi.Resource] = []
        given = args.get("node_role")
        self.node_role: Optional[aws.iam.Role] = None
        """The group's own role (None when one was passed)."""
        if given is None:
            # the region's partition (aws, aws-us-gov, aws-cn) in the trust and the managed policies' ARNs
            partition = aws.get_partition_output(opts=pulumi.InvokeOptions(parent=self)).partition
            self.node_role = aws.iam.Role(
                f"{name}-role", assume_role_policy=partition.apply(_assume_role_policy), tags=tags, opts=child
            )
            role_ready = [
                aws.iam.RolePolicyAttachment(
                    f"{name}-{short}",
                    role=self.node_role.name,
                    opts=child,
                    policy_arn=partition.apply(lambda p, policy=policy: f"arn:{p}:iam::aws:policy/{policy}"),
                )
                for short, policy in WORKER_POLICIES.items()
            ]
        role = self.node_role if self.node_role is not None else given
        role_object = role if isinstance(role, aws.iam.Role) else None

        self.launch_template: Optional[aws.ec2.LaunchTemplate] = None
        launch_template: Optional[aws.eks.NodeGroupLaunchTemplateArgs] = None
        if not pinned:
            self.launch_template = aws.ec2.LaunchTemplate(
                f"{name}-launch-template",
                block_device_mappings=[
                    aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                        device_name=osfamily.AL2023.os_device,
                        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                            volume_size=group.disk, volume_type="gp3", encrypted="true", delete_on_termination="true"
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
                **reservation_template_args(group),
                opts=child,
            )
            launch_template = aws.eks.NodeGroupLaunchTemplateArgs(
                id=self.launch_template.id, version=self.launch_template.latest_version.apply(str)
            )

        desired, ignore_desired = self._scaling(name, group, cluster)
        self.managed_node_group: eks.ManagedNodeGroup = eks.ManagedNodeGroup(
            name,
            cluster=cluster.node_group_cluster(role_object),
            node_role=role_object,
            node_role_arn=None if role_object is not None else role,
            operating_system=eks.OperatingSystem.AL2023,
            # pinned: pulumi-eks builds the launch template (image, nodeadm user data, disk, IMDSv2)
            ami_id=pinned,
            disk_size=group.disk if pinned else None,
            enable_imd_sv2=True if pinned else None,
            # not pinned: EKS's AMI for the type, our launch template (disk, IMDSv2, encryption, tags),
            # and the cluster's version, which pulumi-eks does not default beside a launch template
            ami_type=None if pinned else ami_type(group.instance_type),
            launch_template=launch_template,
            version=None if pinned else cluster.version,
            # a Capacity Block group names its type in the launch template, and EKS takes it in one place only
            instance_types=None if group.capacity_block else [group.instance_type],
            capacity_type=group.capacity_type,
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=desired, min_size=group.min_size, max_size=group.max_size
            ),
            ignore_scaling_changes=ignore_desired,  # who owns desired size: see the module's doc
            labels=group.node_labels(),
            taints=[aws.eks.NodeGroupTaintArgs(**taint) for taint in group.node_taints()],
            tags=group_tags,
            subnet_ids=args.get("subnet_ids"),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*role_ready, *inherited_depends_on(opts)]),
        )
        self.canary: Optional[NodeGroup] = None
        """The canary group (``canary_ami_id``), None without one."""
        if group.canary_ami_id:
            canary_args: dict[str, Any] = {
                "group": group.canary(name),
                "cluster": cluster,
                "node_role": role,
                "rack": args.get("rack") or name,
            }
            own: Mapping[str, Any] = args  # with the Python-only ami_lookup
            canary_args.update({shared: own[shared] for shared in ("subnet_ids", "ami_lookup") if shared in own})
            self.canary = NodeGroup(
                f"{name}{contract.CANARY_SUFFIX}",
                cast(NodeGroupArgs, canary_args),
                opts=pulumi.ResourceOptions(parent=self, depends_on=role_ready),
            )
        node_group = self.managed_node_group.node_group
        # under the SDK's mocks (a unit test) the remote component's outputs are empty: no node group to read
        self.node_group_name = node_group.apply(lambda g: g.node_group_name if g is not None else None)
        self.node_group_arn = node_group.apply(lambda g: g.arn if g is not None else None)
        self.role_arn = role_object.arn if role_object is not None else pulumi.Output.from_input(role)  # type: ignore[arg-type]  # the role given, or else made: never None
        self.labels = pulumi.Output.from_input(group.node_labels())
        self.taints = pulumi.Output.from_input(lane_taints(group.node_taints()))
        self.ami = pulumi.Output.from_input(ami)
        self.max_hourly_usd = None if group.max_hourly_usd is None else pulumi.Output.from_input(group.max_hourly_usd)
        self.register_outputs(
            {
                "ami": self.ami,
                "nodeGroupName": self.node_group_name,
                "nodeGroupArn": self.node_group_arn,
                "roleArn": self.role_arn,
                "labels": self.labels,
                "taints": self.taints,
                **(
                    {cost.BUDGET_OUTPUT: self.max_hourly_usd} if self.max_hourly_usd is not None else {}
                ),  # for lane-cost-ceiling
            }
        )

    def _scaling(self, name: str, group: NodeGroupSpec, cluster: ClusterRef) -> tuple[int, bool]:
        """The desired size to send and whether to ignore changes to it (``scaling_plan``), from the live
        group when the group can scale."""
        if group.fixed_size:
            return scaling_plan(group.min_size, group.max_size, None)
        live, reason = None, None
        if cluster.known_name is None:
            fix = (
                "pass cluster_name to ClusterRef.created"
                if cluster.cluster is not None
                else "name the cluster as text, not an Output"
            )
            reason = f"the cluster's name is not known at preview ({fix})"
        else:
            live, reason = live_scaling(cluster.known_name, name, pulumi.InvokeOptions(parent=self))
        if reason:
            pulumi.log.warn(
                f"node group '{name}': its live size cannot be read ({reason}): a change of min_size or max_size "
                f"is sent with the desired size of the last `pulumi up`, which EKS refuses when it lies outside "
                f"the new bounds (run `pulumi refresh` first, or set the size: aws eks update-nodegroup-config "
                f"--scaling-config desiredSize=N)",
                resource=self,
            )
        return scaling_plan(group.min_size, group.max_size, live)
