"""The rack's cluster add-ons: EKS add-ons pinned to a version, the Cluster Autoscaler, metrics-server.

* ``eks_addon``: an ``aws.eks.Addon`` whose ``addon_version`` is looked up for the cluster's Kubernetes
  version with ``aws.eks.get_addon_version_output(..., most_recent=True)``, as pulumi-eks resolves its
  own add-ons (``cluster.ts``, ``cni-addon.ts``). The version is a pinned input: after a control-plane
  upgrade the look-up answers for the new version and the next ``pulumi up`` moves the add-on; with
  ``most_recent`` it also moves when AWS publishes a newer build for the same Kubernetes version.
* ``ClusterAutoscaler``: the upstream ``cluster-autoscaler`` chart (9.x), the image of the release that
  matches the cluster's Kubernetes minor, on the nodes the caller names, finding the managed node
  groups' Auto Scaling groups by the tags EKS puts on them, with AWS credentials through EKS Pod Identity
  or IRSA (``identity.py``) and the least-privilege policy the autoscaler's AWS README documents.
* ``MetricsServer``: the upstream ``metrics-server`` chart, so HorizontalPodAutoscalers get CPU metrics.
"""

import json
from typing import Any, Mapping, NotRequired, Optional, Required, Sequence, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from .args import check_start, checked, documented, hosted, inherited_depends_on
from .cluster import ONE_PER_CLUSTER, ClusterRef
from .errors import ArgumentError
from .identity import Identity, service_account_role
from .karpenter_controller import bounded_name
from .facts import upstream


def eks_addon(
    name: str,
    cluster: ClusterRef,
    addon_name: str,
    *,
    opts: pulumi.ResourceOptions,
    tags: Optional[Mapping[str, str]] = None,
    **extra: Any,
) -> aws.eks.Addon:
    """An EKS add-on at the most recent version EKS offers for the cluster's Kubernetes version."""
    version = aws.eks.get_addon_version_output(
        addon_name=addon_name,
        kubernetes_version=cluster.version,
        most_recent=True,
        opts=pulumi.InvokeOptions(parent=opts.parent),
    ).version
    return aws.eks.Addon(
        name,
        cluster_name=cluster.name,
        addon_name=addon_name,
        addon_version=version,
        resolve_conflicts_on_create="OVERWRITE",
        resolve_conflicts_on_update="OVERWRITE",
        tags=dict(tags or {}),
        opts=opts,
        **extra,
    )


# ---- Cluster Autoscaler ---------------------------------------------------------------------------------

AUTOSCALER_SERVICE_ACCOUNT = "cluster-autoscaler"
AUTOSCALER_RELEASE = "cluster-autoscaler"
ENABLED_TAG = "k8s.io/cluster-autoscaler/enabled"


def cluster_tag(cluster_name: str) -> str:
    """The tag EKS puts on a managed node group's Auto Scaling group for its cluster (value ``owned``)."""
    return f"k8s.io/cluster-autoscaler/{cluster_name}"


def autoscaler_policy(cluster_name: str) -> dict[str, Any]:
    """The autoscaler's AWS README policy: the describe calls on every resource (they take no resource
    scope), and the two calls that change a group only on Auto Scaling groups tagged for this cluster."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ClusterAutoscalerRead",
                "Effect": "Allow",
                "Resource": "*",
                "Action": [
                    "autoscaling:DescribeAutoScalingGroups",
                    "autoscaling:DescribeAutoScalingInstances",
                    "autoscaling:DescribeLaunchConfigurations",
                    "autoscaling:DescribeScalingActivities",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplateVersions",
                    "ec2:GetInstanceTypesFromInstanceRequirements",
                    "eks:DescribeNodegroup",
                ],
            },
            {
                "Sid": "ClusterAutoscalerOwnGroups",
                "Effect": "Allow",
                "Resource": "*",
                "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
                "Condition": {"StringEquals": {f"aws:ResourceTag/{cluster_tag(cluster_name)}": "owned"}},
            },
        ],
    }


def autoscaler_values(
    cluster_name: str,
    region: str,
    image_tag: str,
    node_selector: Mapping[str, str],
    tolerations: Sequence[Mapping[str, str]],
    annotations: Optional[Mapping[str, str]] = None,
) -> dict[str, Any]:
    """The ``cluster-autoscaler`` chart's values (keys of its 9.x ``values.yaml``). ``autoDiscovery.clusterName``
    turns on auto-discovery by the chart's default tags (``enabled`` and the cluster's); the service account
    name is pinned to match the Pod Identity association or the IRSA trust (else the chart derives
    ``<release>-aws-cluster-autoscaler``); ``annotations`` go on it (``rbac.serviceAccount.annotations``: IRSA's
    role ARN)."""
    return {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster_name, "tags": [ENABLED_TAG, cluster_tag(cluster_name)]},
        "image": {"repository": upstream.CLUSTER_AUTOSCALER_IMAGE, "tag": image_tag},
        "rbac": {
            "serviceAccount": {
                "create": True,
                "name": AUTOSCALER_SERVICE_ACCOUNT,
                **({"annotations": dict(annotations)} if annotations else {}),
            }
        },
        "fullnameOverride": AUTOSCALER_RELEASE,
        "nodeSelector": dict(node_selector),
        "tolerations": [dict(t) for t in tolerations],
        "extraArgs": {
            # keep the managed groups' sizes balanced across zones, and leave nodes with local data alone
            "balance-similar-node-groups": True,
            "skip-nodes-with-local-storage": True,
            "expander": "least-waste",
        },
    }


class ClusterAutoscalerArgs(TypedDict, total=False):
    cluster: Required[ClusterRef]
    """The cluster whose managed node groups it scales (each between its ``min_size`` and ``max_size``)."""
    kubernetes_version: NotRequired[str]
    """The cluster's Kubernetes minor (``1.34``): the autoscaler release follows it. Default: the cluster's
    version (known at preview for a cluster the program creates with a ``version``; else read)."""
    namespace: NotRequired[str]
    """Where it runs. Default ``kube-system``."""
    node_selector: NotRequired[Mapping[str, str]]
    """Labels of the nodes it runs on (e.g. the rack's system lane). Default none."""
    tolerations: NotRequired[Sequence[Mapping[str, str]]]
    """Taints of those nodes it tolerates. Default none."""
    tags: NotRequired[Mapping[str, str]]
    """AWS tags for its role, policy and Pod Identity association. Default none."""
    identity: NotRequired[Identity]
    """How it gets AWS credentials: ``pod_identity`` (an EKS Pod Identity association) or ``irsa`` (a role
    trusting the cluster's IAM OIDC provider for ``<namespace>/cluster-autoscaler`` only). Default ``pod_identity``."""


@documented
class ClusterAutoscaler(pulumi.ComponentResource):
    """The Kubernetes Cluster Autoscaler for a cluster's managed node groups, with its IAM and Pod Identity.

    One per cluster: a second one in the same program for the same ``ClusterRef`` is refused (two
    autoscalers would fight over the same groups' desired sizes, and their charts' objects collide).

    Example::

        ClusterAutoscaler("autoscaler", ClusterAutoscalerArgs(
            cluster=ClusterRef.existing("prod", "prod-rack"), kubernetes_version="1.34"))
    """

    role_arn: pulumi.Output[str]
    """The ARN of the role its pods assume (through EKS Pod Identity, or IRSA)."""
    identity: Identity
    """How it gets AWS credentials: ``pod_identity`` or ``irsa``."""
    policy: pulumi.Output[str]
    """The autoscaler's IAM policy document (JSON), as attached."""
    image_tag: pulumi.Output[str]
    """The Cluster Autoscaler release it runs: the one of the cluster's Kubernetes minor."""

    def __init__(self, name: str, args: ClusterAutoscalerArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("ClusterAutoscaler", name, opts)
        token, opts = hosted("ClusterAutoscaler", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, ClusterAutoscalerArgs)
        cluster: ClusterRef = args["cluster"]

        def release(version: str) -> str:
            tag = upstream.cluster_autoscaler_release(version)
            if tag is None:
                raise ArgumentError(
                    "ClusterAutoscaler",
                    name,
                    "kubernetes_version",
                    (
                        f"no Cluster Autoscaler release is known for Kubernetes '{version}' (known: "
                        f"{', '.join(upstream.CLUSTER_AUTOSCALER_RELEASES)})"
                    ),
                )
            return tag

        given = args.get("kubernetes_version")
        image_tag = pulumi.Output.from_input(release(given)) if given is not None else cluster.version.apply(release)
        other = cluster.claims.get("cluster-autoscaler")
        if other is not None:
            raise ArgumentError(
                "ClusterAutoscaler",
                name,
                "cluster",
                (
                    f"the cluster already has a Cluster Autoscaler ({other}); two would fight over the node groups' "
                    f"sizes"
                ),
            )
        namespace = args.get("namespace", "kube-system")
        cluster.claim(
            "ClusterAutoscaler",
            name,
            {"cluster-autoscaler": ONE_PER_CLUSTER, f"helm release {namespace}/{AUTOSCALER_RELEASE}": ONE_PER_CLUSTER},
        )
        tags = dict(args.get("tags") or {})
        child = pulumi.ResourceOptions(parent=self)
        region = aws.get_region_output(opts=pulumi.InvokeOptions(parent=self)).region

        identity = Identity(args.get("identity", Identity.POD_IDENTITY))
        account_role = service_account_role(
            ("ClusterAutoscaler", name),
            self,
            cluster,
            identity,
            (f"{name}-role", f"{name}-pod-identity"),
            cluster.name.apply(lambda c: bounded_name("ClusterAutoscaler-", c, 64)),
            namespace,
            AUTOSCALER_SERVICE_ACCOUNT,
            tags,
            pulumi.ResourceOptions(parent=self, depends_on=inherited_depends_on(opts)),
        )
        role = account_role.role
        self.policy = cluster.name.apply(lambda c: json.dumps(autoscaler_policy(c), sort_keys=True))
        policy = aws.iam.Policy(
            f"{name}-policy",
            name=cluster.name.apply(lambda c: bounded_name("ClusterAutoscalerPolicy-", c, 128)),
            policy=self.policy,
            tags=tags,
            opts=child,
        )
        attachment = aws.iam.RolePolicyAttachment(f"{name}-policy", role=role.name, policy_arn=policy.arn, opts=child)
        self.role_arn = account_role.arn
        self.identity = identity
        self.image_tag = image_tag
        self.chart: k8s.helm.v4.Chart = k8s.helm.v4.Chart(
            name,
            chart=upstream.CLUSTER_AUTOSCALER.name,
            version=upstream.CLUSTER_AUTOSCALER.version,
            repository_opts=k8s.helm.v4.RepositoryOptsArgs(repo=upstream.CLUSTER_AUTOSCALER.repo),
            namespace=namespace,
            name=AUTOSCALER_RELEASE,
            values=pulumi.Output.all(cluster.name, region, image_tag, account_role.annotations).apply(
                lambda a: autoscaler_values(
                    a[0], a[1], a[2], dict(args.get("node_selector") or {}), list(args.get("tolerations") or []), a[3]
                )
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=cluster.provider,
                depends_on=[*account_role.ready, attachment, *inherited_depends_on(opts)],
            ),
        )
        self.register_outputs({"roleArn": self.role_arn, "policy": self.policy, "imageTag": self.image_tag})


# ---- metrics-server -------------------------------------------------------------------------------------


def metrics_server_values(
    replicas: int, node_selector: Mapping[str, str], tolerations: Sequence[Mapping[str, str]]
) -> dict[str, Any]:
    """The ``metrics-server`` chart's values (keys of its 3.13 ``values.yaml``)."""
    return {"replicas": replicas, "nodeSelector": dict(node_selector), "tolerations": [dict(t) for t in tolerations]}


class MetricsServerArgs(TypedDict, total=False):
    cluster: Required[ClusterRef]
    """The cluster."""
    replicas: NotRequired[int]
    """Replicas, 1-2 (the metrics API is unavailable while none runs). Default 1."""
    namespace: NotRequired[str]
    """Where it runs. Default ``kube-system``."""
    node_selector: NotRequired[Mapping[str, str]]
    """Labels of the nodes it runs on. Default none."""
    tolerations: NotRequired[Sequence[Mapping[str, str]]]
    """Taints of those nodes it tolerates. Default none."""


@documented
class MetricsServer(pulumi.ComponentResource):
    """metrics-server, which serves the resource metrics API HorizontalPodAutoscalers read.

    Example::

        MetricsServer("metrics", MetricsServerArgs(cluster=ClusterRef.existing("prod", "prod-rack"), replicas=2))
    """

    chart_version: pulumi.Output[str]
    """The metrics-server chart version it installs."""

    def __init__(self, name: str, args: MetricsServerArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("MetricsServer", name, opts)
        token, opts = hosted("MetricsServer", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, MetricsServerArgs)
        cluster: ClusterRef = args["cluster"]
        replicas = args.get("replicas", 1)
        if not 1 <= replicas <= 2:
            raise ArgumentError("MetricsServer", name, "replicas", f"must be 1 or 2 (got {replicas})")
        cluster.claim("MetricsServer", name, {"metrics-server": ONE_PER_CLUSTER})
        self.chart: k8s.helm.v4.Chart = k8s.helm.v4.Chart(
            name,
            chart=upstream.METRICS_SERVER.name,
            version=upstream.METRICS_SERVER.version,
            repository_opts=k8s.helm.v4.RepositoryOptsArgs(repo=upstream.METRICS_SERVER.repo),
            namespace=args.get("namespace", "kube-system"),
            name="metrics-server",
            values=metrics_server_values(
                replicas, dict(args.get("node_selector") or {}), list(args.get("tolerations") or [])
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=inherited_depends_on(opts)),
        )
        self.chart_version = pulumi.Output.from_input(upstream.METRICS_SERVER.version)
        self.register_outputs({"chartVersion": self.chart_version})
