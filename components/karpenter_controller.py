"""``KarpenterController``: Karpenter (1.14.x, 1.15.x) itself, in any EKS cluster that uses access entries.

What it creates follows Karpenter's reference CloudFormation (``getting-started/cloudformation.yaml``,
the same from v1.12 to v1.14; v1.15 adds ``ec2:RebootInstances`` to the scoped deletion statement) and its
getting-started guide:

- the node role ``KarpenterNodeRole-<cluster>`` (AmazonEKSWorkerNodePolicy, AmazonEKS_CNI_Policy,
  AmazonEC2ContainerRegistryPullOnly, AmazonSSMManagedInstanceCore), joined to the cluster by an EKS
  access entry of type ``EC2_LINUX`` (a STANDARD entry with ``system:bootstrappers`` is refused, and
  nodes never join). No instance profile: Karpenter v1 makes its own from ``EC2NodeClass.spec.role``;
- the controller role, trusted by ``pods.eks.amazonaws.com`` (``sts:AssumeRole``, ``sts:TagSession``) and
  bound by an EKS Pod Identity association to ``<namespace>/karpenter`` (or, with ``identity="irsa"``,
  trusted by the cluster's IAM OIDC provider for that service account only: ``identity.py``), with the reference
  policies, statement by statement (``controller_policies``), built from names, the partition, the region and the
  account id, so the whole document is known, and reviewable, at preview;
- the interruption queue (SQS-managed encryption, 300 s retention, a policy letting EventBridge and SQS
  send and denying non-TLS access) and the five EventBridge rules that feed it, all named after the
  cluster so two racks in one account and region never collide;
- the ``karpenter-crd`` chart (it owns the CRDs, in ``templates/``, so Helm upgrades them) and the
  ``karpenter`` chart with its own CRDs skipped, ``settings.clusterName``,
  ``settings.interruptionQueue`` (the queue's name), ``settings.featureGates.reservedCapacity: true`` (what a
  pool's ``capacity_reservation_ids`` needs), ``serviceAccount.name: karpenter`` pinned to match
  the association, and the controller's 1 CPU / 1 GiB.

The spot service-linked role (``AWSServiceRoleForEC2Spot``) is not created: creating it fails when the
account has it, so it is created once per account by hand (see the README).
"""

import functools
import json
import operator
from typing import Any, Mapping, NotRequired, Optional, Required, Sequence, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from .args import check_start, checked, documented, hosted, inherited_depends_on
from .cluster import ONE_PER_CLUSTER, ClusterRef
from .errors import ArgumentError
from .identity import Identity, service_account_role, trust
from .facts import upstream, wellknown
from .spec.rack import access_entries_problem, karpenter_pair_problem, karpenter_version_problem

SERVICE_ACCOUNT = "karpenter"
NODE_ROLE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonSSMManagedInstanceCore",
)
INTERRUPTION_EVENTS = {
    "health": ("aws.health", "AWS Health Event"),
    "spot": ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
    "rebalance": ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
    "state-change": ("aws.ec2", "EC2 Instance State-change Notification"),
    "capacity-reservation": ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
}
"""EventBridge rule -> (event source, detail type), as the reference CloudFormation's five rules."""
CONTROLLER_RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
"""What Karpenter's getting-started guide gives each controller replica."""


bounded_name = upstream.bounded_name
node_role_name = upstream.karpenter_node_role_name


def queue_name(cluster_name: str) -> str:
    """The reference CloudFormation names the queue after the cluster (SQS: at most 80 characters)."""
    return bounded_name("", cluster_name, 80)


def rule_name(cluster_name: str, event: str) -> str:
    return bounded_name("", cluster_name, 64, f"-karpenter-{event}")


# ---- the controller's policies, statement by statement -------------------------------------------------------


def controller_policies(
    partition: str,
    region: str,
    account: str,
    cluster: str,
    node_role_arn: str,
    queue_arn: str,
    version: str = upstream.KARPENTER_CHART.version,
) -> dict[str, dict[str, Any]]:
    """The reference CloudFormation's controller policies, by its policy names' middle part
    (``KarpenterController<Part>Policy-<cluster>``): creation and tagging scoped by the cluster tag and
    ``karpenter.sh/nodepool``, deletion scoped the same way, ``iam:PassRole`` only for the node role and
    only to EC2, instance-profile actions scoped by the cluster and region tags, ``eks:DescribeCluster`` on
    this cluster only, SQS on this queue only, region-scoped describes. Karpenter ``version`` 1.15 and later
    may also reboot the instances it may delete (``upstream.KARPENTER_REBOOT_FROM``)."""
    ec2 = f"arn:{partition}:ec2:{region}"
    owned = f"kubernetes.io/cluster/{cluster}"
    tagged_resources = [
        f"{ec2}:*:{kind}/*"
        for kind in ("fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request")
    ]
    profiles = f"arn:{partition}:iam::{account}:instance-profile/*"
    cluster_arn = f"arn:{partition}:eks:{region}:{account}:cluster/{cluster}"
    return {
        "NodeLifecycle": _document(
            [
                {
                    "Sid": "AllowScopedEC2InstanceAccessActions",
                    "Effect": "Allow",
                    "Resource": [
                        f"{ec2}::image/*",
                        f"{ec2}::snapshot/*",
                        f"{ec2}:*:security-group/*",
                        f"{ec2}:*:subnet/*",
                        f"{ec2}:*:capacity-reservation/*",
                        f"{ec2}:*:placement-group/*",
                    ],
                    "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
                },
                {
                    "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
                    "Effect": "Allow",
                    "Resource": f"{ec2}:*:launch-template/*",
                    "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
                    "Condition": {
                        "StringEquals": {f"aws:ResourceTag/{owned}": "owned"},
                        "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                    },
                },
                {
                    "Sid": "AllowScopedEC2InstanceActionsWithTags",
                    "Effect": "Allow",
                    "Resource": tagged_resources,
                    "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
                    "Condition": {
                        "StringEquals": {
                            f"aws:RequestTag/{owned}": "owned",
                            "aws:RequestTag/eks:eks-cluster-name": cluster,
                        },
                        "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                    },
                },
                {
                    "Sid": "AllowScopedResourceCreationTagging",
                    "Effect": "Allow",
                    "Resource": tagged_resources,
                    "Action": "ec2:CreateTags",
                    "Condition": {
                        "StringEquals": {
                            f"aws:RequestTag/{owned}": "owned",
                            "aws:RequestTag/eks:eks-cluster-name": cluster,
                            "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                        },
                        "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
                    },
                },
                {
                    "Sid": "AllowScopedResourceTagging",
                    "Effect": "Allow",
                    "Resource": f"{ec2}:*:instance/*",
                    "Action": "ec2:CreateTags",
                    "Condition": {
                        "StringEquals": {f"aws:ResourceTag/{owned}": "owned"},
                        "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                        "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": cluster},
                        "ForAllValues:StringEquals": {
                            "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                        },
                    },
                },
                {
                    "Sid": "AllowScopedDeletion",
                    "Effect": "Allow",
                    "Resource": [f"{ec2}:*:instance/*", f"{ec2}:*:launch-template/*"],
                    "Action": [
                        "ec2:TerminateInstances",
                        *(["ec2:RebootInstances"] if reboots(version) else []),
                        "ec2:DeleteLaunchTemplate",
                    ],
                    "Condition": {
                        "StringEquals": {f"aws:ResourceTag/{owned}": "owned"},
                        "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
                    },
                },
            ]
        ),
        "IAMIntegration": _document(
            [
                {
                    "Sid": "AllowPassingInstanceRole",
                    "Effect": "Allow",
                    "Resource": node_role_arn,
                    "Action": "iam:PassRole",
                    "Condition": {
                        "StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}
                    },
                },
                {
                    "Sid": "AllowScopedInstanceProfileCreationActions",
                    "Effect": "Allow",
                    "Resource": profiles,
                    "Action": ["iam:CreateInstanceProfile"],
                    "Condition": {
                        "StringEquals": {
                            f"aws:RequestTag/{owned}": "owned",
                            "aws:RequestTag/eks:eks-cluster-name": cluster,
                            "aws:RequestTag/topology.kubernetes.io/region": region,
                        },
                        "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                    },
                },
                {
                    "Sid": "AllowScopedInstanceProfileTagActions",
                    "Effect": "Allow",
                    "Resource": profiles,
                    "Action": ["iam:TagInstanceProfile"],
                    "Condition": {
                        "StringEquals": {
                            f"aws:ResourceTag/{owned}": "owned",
                            "aws:ResourceTag/topology.kubernetes.io/region": region,
                            f"aws:RequestTag/{owned}": "owned",
                            "aws:RequestTag/eks:eks-cluster-name": cluster,
                            "aws:RequestTag/topology.kubernetes.io/region": region,
                        },
                        "StringLike": {
                            "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                            "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*",
                        },
                    },
                },
                {
                    "Sid": "AllowScopedInstanceProfileActions",
                    "Effect": "Allow",
                    "Resource": profiles,
                    "Action": [
                        "iam:AddRoleToInstanceProfile",
                        "iam:RemoveRoleFromInstanceProfile",
                        "iam:DeleteInstanceProfile",
                    ],
                    "Condition": {
                        "StringEquals": {
                            f"aws:ResourceTag/{owned}": "owned",
                            "aws:ResourceTag/topology.kubernetes.io/region": region,
                        },
                        "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
                    },
                },
            ]
        ),
        "EKSIntegration": _document(
            [
                {
                    "Sid": "AllowAPIServerEndpointDiscovery",
                    "Effect": "Allow",
                    "Resource": cluster_arn,
                    "Action": "eks:DescribeCluster",
                },
            ]
        ),
        "Interruption": _document(
            [
                {
                    "Sid": "AllowInterruptionQueueActions",
                    "Effect": "Allow",
                    "Resource": queue_arn,
                    "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
                },
            ]
        ),
        "ZonalShift": _document(
            [
                {
                    "Sid": "AllowZonalShiftStatusReadOnly",
                    "Effect": "Allow",
                    "Resource": "*",
                    "Action": ["arc-zonal-shift:GetManagedResource"],
                    "Condition": {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": cluster_arn}},
                },
            ]
        ),
        "ResourceDiscovery": _document(
            [
                {
                    "Sid": "AllowRegionalReadActions",
                    "Effect": "Allow",
                    "Resource": "*",
                    "Action": [
                        "ec2:DescribeCapacityReservations",
                        "ec2:DescribeImages",
                        "ec2:DescribeInstances",
                        "ec2:DescribeInstanceStatus",
                        "ec2:DescribeInstanceTypeOfferings",
                        "ec2:DescribeInstanceTypes",
                        "ec2:DescribeLaunchTemplates",
                        "ec2:DescribePlacementGroups",
                        "ec2:DescribeSecurityGroups",
                        "ec2:DescribeSpotPriceHistory",
                        "ec2:DescribeSubnets",
                    ],
                    "Condition": {"StringEquals": {"aws:RequestedRegion": region}},
                },
                {
                    "Sid": "AllowSSMReadActions",
                    "Effect": "Allow",
                    "Resource": f"arn:{partition}:ssm:{region}::parameter/aws/service/*",
                    "Action": "ssm:GetParameter",
                },
                {"Sid": "AllowPricingReadActions", "Effect": "Allow", "Resource": "*", "Action": "pricing:GetProducts"},
                {
                    "Sid": "AllowUnscopedInstanceProfileListAction",
                    "Effect": "Allow",
                    "Resource": "*",
                    "Action": "iam:ListInstanceProfiles",
                },
                {
                    "Sid": "AllowInstanceProfileReadActions",
                    "Effect": "Allow",
                    "Resource": profiles,
                    "Action": "iam:GetInstanceProfile",
                },
            ]
        ),
    }


def reboots(version: str) -> bool:
    """Whether Karpenter ``version`` reboots nodes for repair (1.15 and later: ``upstream.KARPENTER_REBOOT_FROM``)."""
    line = tuple(int(part) for part in version.split(".")[:2])
    return line >= tuple(int(part) for part in upstream.KARPENTER_REBOOT_FROM.split("."))


def _document(statements: list[dict[str, Any]]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": statements}


def queue_policy(queue_arn: str) -> dict[str, Any]:
    """EventBridge and SQS may send to the queue; nothing may use it without TLS."""
    return {
        "Version": "2012-10-17",
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": False}},
                "Principal": "*",
            },
        ],
    }


def chart_values(
    cluster_name: str,
    queue: str,
    replicas: int,
    node_selector: Mapping[str, str],
    tolerations: Sequence[Mapping[str, str]],
    annotations: Optional[Mapping[str, str]] = None,
) -> dict[str, Any]:
    """The ``karpenter`` chart's values (keys of its 1.14.1 ``values.yaml``). Its default affinity keeps
    the controller off the nodes Karpenter manages (``karpenter.sh/nodepool DoesNotExist``), and its
    pod anti-affinity needs one node per replica. ``annotations`` go on its service account
    (``serviceAccount.annotations``: IRSA's role ARN)."""
    return {
        # reservedCapacity (beta, on by default in 1.14 and 1.15): written so a reserved pool's NodePool launches
        # into its reservations whatever a later chart's default is
        "settings": {
            "clusterName": cluster_name,
            "interruptionQueue": queue,
            "featureGates": {"reservedCapacity": True},
        },
        "serviceAccount": {"name": SERVICE_ACCOUNT, **({"annotations": dict(annotations)} if annotations else {})},
        "replicas": replicas,
        "nodeSelector": {wellknown.OS_KEY: "linux", **node_selector},
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, *tolerations],
        "controller": {"resources": CONTROLLER_RESOURCES},
    }


class KarpenterControllerArgs(TypedDict, total=False):
    cluster: Required[ClusterRef]
    """The cluster (it must use access entries: API or API_AND_CONFIG_MAP authentication)."""
    node_role_name: NotRequired[str]
    """The node role to create. Default ``KarpenterNodeRole-<cluster>``."""
    version: NotRequired[str]
    """The Karpenter release (the ``karpenter`` and ``karpenter-crd`` chart version): 1.14.x or 1.15.x, one whose
    charts and notes were read upstream (``upstream.KARPENTER_RELEASES``). Default 1.14.1."""
    replicas: NotRequired[int]
    """Controller replicas, one node each. Default 2."""
    namespace: NotRequired[str]
    """Where the controller runs. Default ``kube-system``."""
    node_selector: NotRequired[Mapping[str, str]]
    """Labels of the nodes the controller runs on (e.g. the rack's system lane). Default: any Linux node Karpenter does
    not manage."""
    tolerations: NotRequired[Sequence[Mapping[str, str]]]
    """Taints of those nodes the controller tolerates (besides ``CriticalAddonsOnly``). Default none."""
    tags: NotRequired[Mapping[str, str]]
    """AWS tags for the roles, policies, queue and rules. Default none."""
    identity: NotRequired[Identity]
    """How the controller gets AWS credentials: ``pod_identity`` (an EKS Pod Identity association; needs the
    eks-pod-identity-agent add-on) or ``irsa`` (a role trusting the cluster's IAM OIDC provider for
    ``<namespace>/karpenter`` only). Default ``pod_identity``."""


@documented
class KarpenterController(pulumi.ComponentResource):
    """Karpenter (1.14.x or 1.15.x; default 1.14.1): its IAM, its interruption queue and rules, and its two charts.

    Example::

        KarpenterController("karpenter", KarpenterControllerArgs(cluster=ClusterRef.existing("prod", "prod-rack")))
    """

    node_role_arn: pulumi.Output[str]
    """The ARN of the role of the nodes Karpenter launches (``KarpenterNodeRole-<cluster>``)."""
    controller_role_arn: pulumi.Output[str]
    """The ARN of the role the controller's pods assume through EKS Pod Identity."""
    interruption_queue_name: pulumi.Output[str]
    """The SQS queue that carries interruption events to the controller."""
    policies: dict[str, pulumi.Output[str]]
    """The controller's policy documents (JSON) by part, as attached."""
    identity: Identity
    """How the controller gets AWS credentials: ``pod_identity`` or ``irsa``."""

    def __init__(self, name: str, args: KarpenterControllerArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("KarpenterController", name, opts)
        token, opts = hosted("KarpenterController", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, KarpenterControllerArgs)
        cluster: ClusterRef = args["cluster"]
        version = args.get("version", upstream.KARPENTER_CHART.version)
        replicas = args.get("replicas", 2)
        namespace = args.get("namespace", "kube-system")
        tags = dict(args.get("tags") or {})
        problem = karpenter_version_problem(version)
        if problem:
            raise ArgumentError("KarpenterController", name, "version", problem)
        if not 1 <= replicas <= 10:
            raise ArgumentError("KarpenterController", name, "replicas", f"must be 1-10 (got {replicas})")
        live = cluster.live
        pair = karpenter_pair_problem(live.version, version) if live else None
        if pair:  # a controller that does not support the control plane it runs on
            raise ArgumentError("KarpenterController", name, "version", pair)
        entries = access_entries_problem(cluster.known_name or "", live.authentication_mode) if live else None
        if entries:  # the nodes' access entry would be refused at apply, after the roles and the queue
            raise ArgumentError("KarpenterController", name, "cluster", entries)
        child = pulumi.ResourceOptions(parent=self)
        waits = pulumi.ResourceOptions(parent=self, depends_on=inherited_depends_on(opts))

        partition = aws.get_partition_output(opts=pulumi.InvokeOptions(parent=self)).partition
        region = aws.get_region_output(opts=pulumi.InvokeOptions(parent=self)).region
        account = aws.get_caller_identity_output(opts=pulumi.InvokeOptions(parent=self)).account_id
        role_name = pulumi.Output.from_input(args.get("node_role_name") or cluster.name.apply(node_role_name))

        # the nodes' role, and the access entry that lets them join
        self.node_role: aws.iam.Role = aws.iam.Role(
            f"{name}-node-role",
            name=role_name,
            tags=tags,
            opts=child,
            assume_role_policy=partition.apply(lambda p: trust(upstream.ec2_principal(p), ["sts:AssumeRole"])),
        )
        for policy in NODE_ROLE_POLICIES:
            aws.iam.RolePolicyAttachment(
                f"{name}-node-{policy}",
                role=self.node_role.name,
                opts=child,
                policy_arn=partition.apply(lambda p, policy=policy: f"arn:{p}:iam::aws:policy/{policy}"),
            )
        access = aws.eks.AccessEntry(
            f"{name}-node-access",
            cluster_name=cluster.name,
            principal_arn=self.node_role.arn,
            type="EC2_LINUX",
            tags=tags,
            opts=waits,
        )
        self.node_role_arn = pulumi.Output.all(partition, account, role_name).apply(
            lambda a: f"arn:{a[0]}:iam::{a[1]}:role/{a[2]}"
        )

        # the interruption queue and its rules
        queue = aws.sqs.Queue(
            f"{name}-interruption",
            name=cluster.name.apply(queue_name),
            message_retention_seconds=300,
            sqs_managed_sse_enabled=True,
            tags=tags,
            opts=child,
        )
        queue_arn = pulumi.Output.all(partition, region, account, cluster.name).apply(
            lambda a: f"arn:{a[0]}:sqs:{a[1]}:{a[2]}:{queue_name(a[3])}"
        )
        aws.sqs.QueuePolicy(
            f"{name}-interruption",
            queue_url=queue.id,
            opts=child,
            policy=queue_arn.apply(lambda arn: json.dumps(queue_policy(arn))),
        )
        for event, (source, detail) in INTERRUPTION_EVENTS.items():
            rule = aws.cloudwatch.EventRule(
                f"{name}-{event}",
                name=cluster.name.apply(functools.partial(rule_name, event=event)),
                tags=tags,
                opts=child,
                event_pattern=json.dumps({"source": [source], "detail-type": [detail]}),
            )
            aws.cloudwatch.EventTarget(
                f"{name}-{event}",
                rule=rule.name,
                arn=queue.arn,
                target_id="KarpenterInterruptionQueueTarget",
                opts=child,
            )
        self.interruption_queue_name = queue.name

        # the controller's role (trusted through Pod Identity or IRSA), its policies
        identity = Identity(args.get("identity", Identity.POD_IDENTITY))
        account_role = service_account_role(
            ("KarpenterController", name),
            self,
            cluster,
            identity,
            (f"{name}-controller-role", f"{name}-pod-identity"),
            cluster.name.apply(lambda c: bounded_name("KarpenterController-", c, 64)),
            namespace,
            SERVICE_ACCOUNT,
            tags,
            waits,
        )
        controller_role = account_role.role
        documents = pulumi.Output.all(partition, region, account, cluster.name, self.node_role_arn, queue_arn).apply(
            lambda a: {
                part: json.dumps(doc, sort_keys=True)
                for part, doc in controller_policies(a[0], a[1], a[2], a[3], a[4], a[5], version).items()
            }
        )
        self.policies = {}
        attached: list[pulumi.Resource] = []
        for part in (
            "NodeLifecycle",
            "IAMIntegration",
            "EKSIntegration",
            "Interruption",
            "ZonalShift",
            "ResourceDiscovery",
        ):
            document = documents.apply(operator.itemgetter(part))
            policy = aws.iam.Policy(
                f"{name}-{part}",
                name=cluster.name.apply(
                    functools.partial(bounded_name, f"KarpenterController{part}Policy-", limit=128)
                ),
                policy=document,
                tags=tags,
                opts=child,
            )
            attached.append(
                aws.iam.RolePolicyAttachment(
                    f"{name}-{part}", role=controller_role.name, policy_arn=policy.arn, opts=child
                )
            )
            self.policies[part] = document
        self.controller_role_arn = account_role.arn
        self.identity = identity

        # the charts: CRDs first, then the controller
        cluster.claim("KarpenterController", name, {"Karpenter": ONE_PER_CLUSTER})
        charts = pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=inherited_depends_on(opts))
        self.crd_chart: k8s.helm.v4.Chart = k8s.helm.v4.Chart(
            f"{name}-crd",
            chart=upstream.KARPENTER_CRD_CHART.name,
            version=version,
            namespace=namespace,
            name="karpenter-crd",
            opts=charts,
        )
        self.chart: k8s.helm.v4.Chart = k8s.helm.v4.Chart(
            name,
            chart=upstream.KARPENTER_CHART.name,
            version=version,
            namespace=namespace,
            name="karpenter",
            skip_crds=True,
            values=pulumi.Output.all(cluster.name, queue.name, account_role.annotations).apply(
                lambda a: chart_values(
                    a[0],
                    a[1],
                    replicas,
                    dict(args.get("node_selector") or {}),
                    list(args.get("tolerations") or []),
                    a[2],
                )
            ),
            # the controller starts once its credentials work: the association (Pod Identity), or the role and
            # its policies (IRSA: the pods assume it as soon as they start)
            opts=pulumi.ResourceOptions.merge(
                charts,
                pulumi.ResourceOptions(
                    depends_on=[self.crd_chart, *account_role.ready, *attached, access, *inherited_depends_on(opts)]
                ),
            ),
        )
        self.register_outputs(
            {
                "nodeRoleArn": self.node_role_arn,
                "controllerRoleArn": self.controller_role_arn,
                "interruptionQueueName": self.interruption_queue_name,
            }
        )
