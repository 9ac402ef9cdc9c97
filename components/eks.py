"""``RackCluster``: the EKS cluster a rack creates, in a network the user brings, with its system lane.

Through pulumi-eks ``Cluster`` (read from its source, nodejs/eks/cluster/cluster.ts):
``authentication_mode=API`` (access entries only; pulumi-eks refuses ``instance_roles`` and
``role_mappings`` with it), ``skip_default_node_group`` and ``skip_default_security_groups`` (no
self-managed nodes, so no node security group of pulumi-eks's own: nodes and Karpenter use the
EKS-managed cluster security group, the only one tagged ``karpenter.sh/discovery``), both endpoints
on with the public one limited to ``public_access_cidrs``, the cluster named ``cluster_name`` (so
every name built from it is known at preview), and Kubernetes secrets encrypted with a KMS key of its
own. The EKS Pod Identity agent is an ``aws.eks.Addon`` (pulumi-eks has no input for it).

CoreDNS is a managed add-on of our own, created after the system lane, which it tolerates and selects.
pulumi-eks would create it inside ``Cluster`` when asked (``corednsAddonOptions.enabled``), before any
node exists: EKS then holds the add-on ``DEGRADED`` (its pods cannot schedule), the provider waits 20
minutes for ``ACTIVE`` and fails the first ``pulumi up`` before any node group is made (pulumi-eks
issue 1819; without a default node group pulumi-eks creates no CoreDNS at all, PR 1371).

The system lane is an AL2023 managed node group (the seeds' system nodes: labelled and tainted
``convox.io/system-node=true``), three nodes spread over the private subnets' zones, one without high
availability. Nothing the user owns is changed: the rack's Karpenter pools select the private
subnets and the EKS-managed cluster security group by id (no ``karpenter.sh/discovery`` tags on
the user's subnets). A creating VPC is out of scope: bring your own network.
"""

import json
from typing import NotRequired, Optional, Required, TypedDict, cast

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks

from . import contract
from .addons import eks_addon
from .ami import AmiLookup
from .args import check_start, checked, documented, hosted
from .cluster import ClusterRef, oidc_issuer_of
from .errors import ConfigError
from .facts import upstream
from .nodegroup import NodeGroup, NodeGroupArgs
from .spec import ClusterSpec, NodeGroupSpec
from .spec.rack import version_support
from .subnets import subnets_problems

POD_IDENTITY_AGENT = "eks-pod-identity-agent"


def coredns_configuration() -> dict[str, object]:
    """The CoreDNS add-on's configuration values (keys of its add-on configuration schema): run on the
    system lane, which no workload reaches."""
    return {"nodeSelector": contract.SYSTEM_SELECTOR, "tolerations": [contract.SYSTEM_TOLERATION]}


class RackClusterArgs(TypedDict, total=False):
    spec: Required[ClusterSpec]
    """The cluster to create."""
    pod_identity_agent: NotRequired[bool]
    """Install the EKS Pod Identity agent add-on. Default true."""
    oidc_provider: NotRequired[bool]
    """Create the cluster's IAM OIDC provider, which IAM roles for service accounts (IRSA) trust. Default false."""


PYTHON_ONLY = {"ami_lookup": AmiLookup}
"""``ami_lookup``: a shared AMI look-up for the system lane (default: a private one)."""


@documented
class RackCluster(pulumi.ComponentResource):
    """An EKS cluster with access entries, secrets encryption, the Pod Identity agent and a system lane.

    Example::

        created = RackCluster("lab", RackClusterArgs(spec=ClusterSpec(
            name="lab", vpc_id="vpc-0123456789abcdef0",
            private_subnet_ids=["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712"])))
        pulumi.export("endpoint", created.ref.endpoint)
    """

    cluster_name: pulumi.Output[str]
    """The EKS cluster's name."""
    endpoint: pulumi.Output[str]
    """The API server's endpoint."""
    certificate_authority: pulumi.Output[str]
    """The cluster's certificate authority data (base64): with ``endpoint``, what reaches the cluster (pass
    both, with ``clusterName`` as ``name``, as another component's ``cluster``)."""
    oidc_issuer: pulumi.Output[str]
    """The cluster's OIDC issuer URL."""
    security_group_id: pulumi.Output[str]
    """The EKS-managed cluster security group (the rack's Karpenter pools select it by id)."""
    kms_key_arn: pulumi.Output[str]
    """The KMS key that encrypts the cluster's Kubernetes secrets."""
    admin_arns: pulumi.Output[list[str]]
    """The IAM principals given cluster admin (``spec.admin_arns``)."""
    system_lane_name: pulumi.Output[str]
    """The system lane's ``aws.eks.NodeGroup`` name."""
    oidc_provider_arn: Optional[pulumi.Output[str]]
    """The ARN of the cluster's IAM OIDC provider, which IRSA roles trust (when ``oidcProvider`` is set)."""

    def __init__(self, name: str, args: RackClusterArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("RackCluster", name, opts)
        token, opts = hosted("RackCluster", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, RackClusterArgs, python_only=PYTHON_ONLY)
        spec: ClusterSpec = args["spec"]
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(spec.tags)
        found = subnets_problems(spec.private_subnet_ids, spec.public_subnet_ids, pulumi.InvokeOptions(parent=self))
        if found:  # EKS would refuse the cluster after the KMS key was made
            raise ConfigError(
                "\n".join(f"cluster '{spec.name}': {field}: {problem}" for field, problem in found.items())
            )

        status, message = version_support(spec.version)
        if status == "extended":
            pulumi.log.warn(f"cluster '{spec.name}': {message}", resource=self)
        self.kms_key: aws.kms.Key = aws.kms.Key(
            f"{name}-secrets",
            description=f"EKS secrets encryption for {spec.name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=tags,
            # protected as the cluster is: deleting the key makes every secret the cluster stored unreadable
            opts=pulumi.ResourceOptions(parent=self, protect=spec.protect),
        )
        self.cluster: eks.Cluster = eks.Cluster(
            name,
            name=spec.name,
            version=spec.version,
            vpc_id=spec.vpc_id,
            private_subnet_ids=spec.private_subnet_ids,
            public_subnet_ids=spec.public_subnet_ids or None,
            authentication_mode=eks.AuthenticationMode.API,
            skip_default_node_group=True,
            skip_default_security_groups=True,
            endpoint_private_access=True,
            endpoint_public_access=True,
            public_access_cidrs=spec.public_access_cidrs,
            encryption_config_key_arn=self.kms_key.arn,
            coredns_addon_options=eks.CoreDnsAddonOptionsArgs(enabled=False),  # ours, once nodes exist (above)
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, protect=spec.protect),
        )
        self.ref: ClusterRef = ClusterRef.created(
            name, self.cluster, opts=child, cluster_name=spec.name, version=spec.version
        )
        self.oidc_provider: Optional[aws.iam.OpenIdConnectProvider] = None
        """The cluster's IAM OIDC provider, for IRSA (None unless asked)."""
        self.oidc_provider_arn = None
        if args.get("oidc_provider", False):
            # IRSA's trust: the issuer EKS gives the cluster, for tokens whose audience is STS (the client id
            # pulumi-eks's createOidcProvider uses too). No thumbprint: IAM takes the issuer's certificate
            # itself when none is given (the pulumi-aws OpenIdConnectProvider docs), and pulumi-eks would
            # fetch one over the network at deploy
            issuer = self.cluster.eks_cluster.apply(lambda c: c.identities[0].oidcs[0].issuer)
            self.oidc_provider = aws.iam.OpenIdConnectProvider(
                f"{name}-oidc",
                url=issuer,
                client_id_lists=[upstream.IRSA_AUDIENCE],
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.oidc_provider_arn = self.ref.oidc_provider_arn = self.oidc_provider.arn
            self.ref.oidc_issuer = issuer
        self.pod_identity_agent: Optional[aws.eks.Addon] = None
        """The EKS Pod Identity agent add-on (None when left out)."""
        if args.get("pod_identity_agent", True):
            self.pod_identity_agent = eks_addon(
                f"{name}-{POD_IDENTITY_AGENT}",
                self.ref,
                POD_IDENTITY_AGENT,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster]),
            )
        self.admin_access: list[aws.eks.AccessEntry] = self._admin_access(name, spec, tags)
        """The access entries of ``spec.admin_arns``."""
        lane = self.system_lane_for(name)
        self.system_lane_spec: NodeGroupSpec = spec.system_lane(lane)
        self.system_lane: NodeGroup = NodeGroup(
            lane,
            NodeGroupArgs(
                group=self.system_lane_spec,
                cluster=self.ref,
                rack=spec.name,
                subnet_ids=spec.private_subnet_ids,
                # ami_lookup: a Python-only argument (PYTHON_ONLY), not a field of the schema's NodeGroupArgs
                **({"ami_lookup": args["ami_lookup"]} if "ami_lookup" in args else {}),  # type: ignore[typeddict-item]
            ),
            opts=child,
        )
        self.coredns: aws.eks.Addon = eks_addon(
            f"{name}-coredns",
            self.ref,
            "coredns",
            tags=tags,
            configuration_values=json.dumps(coredns_configuration(), sort_keys=True),
            preserve=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_lane]),
        )
        # the rack's Karpenter pools select the private subnets and this group by id: nothing is tagged
        self.security_group_id = self.cluster.eks_cluster.apply(lambda c: c.vpc_config.cluster_security_group_id)
        self.cluster_name = pulumi.Output.from_input(spec.name)
        self.endpoint = cast(pulumi.Output[str], self.ref.endpoint)  # a created cluster's, always
        self.certificate_authority = self.cluster.eks_cluster.apply(lambda c: c.certificate_authority.data)
        self.oidc_issuer = self.cluster.eks_cluster.apply(lambda c: c.identities).apply(
            lambda ids: oidc_issuer_of(ids) or ""
        )
        self.kms_key_arn = self.kms_key.arn
        self.admin_arns = pulumi.Output.from_input(list(spec.admin_arns))
        self.system_lane_name = self.system_lane.node_group_name
        self.register_outputs(
            {
                "adminArns": self.admin_arns,
                "clusterName": self.cluster_name,
                "endpoint": self.endpoint,
                "certificateAuthority": self.certificate_authority,
                "oidcIssuer": self.oidc_issuer,
                "securityGroupId": self.security_group_id,
                "kmsKeyArn": self.kms_key_arn,
                "systemLaneName": self.system_lane_name,
                "oidcProviderArn": self.oidc_provider_arn,
            }
        )

    @staticmethod
    def system_lane_for(name: str) -> str:
        """The system lane's name (its node group component's) in a ``RackCluster`` named ``name``."""
        return f"{name}-system"

    def _admin_access(self, name: str, spec: ClusterSpec, tags: dict[str, str]) -> list[aws.eks.AccessEntry]:
        """An access entry and a cluster-scoped ``AmazonEKSClusterAdminPolicy`` association for each of
        ``spec.admin_arns``, the policy's ARN in the stack's partition. The creator is not among them: EKS
        makes the creator's entry itself (pulumi-eks bootstraps it) and refuses a second one for the same
        principal (ResourceInUseException), so a listed ARN that is the identity running this program is
        warned about: if it created the cluster, the entry will collide."""
        if not spec.admin_arns:
            return []
        invoke = pulumi.InvokeOptions(parent=self)
        partition = aws.get_partition_output(opts=invoke).partition
        caller = aws.get_caller_identity_output(opts=invoke).arn

        def warn_if_caller(arn: str) -> None:
            if arn in spec.admin_arns or any(
                principal_of_session(arn) == a.split(":", 5)[5].rsplit("/", 1)[-1]
                and a.split(":")[4] == arn.split(":")[4]
                and ":role/" in a
                for a in spec.admin_arns
            ):
                pulumi.log.warn(
                    f"rack:cluster_admin_arns lists the identity running this program ({arn}): if it created the "
                    "cluster, EKS already has its admin entry and refuses a second one (ResourceInUseException); "
                    "remove it from the list",
                    resource=self,
                )

        caller.apply(warn_if_caller)
        entries = []
        for arn in spec.admin_arns:
            account, resource = arn.split(":", 5)[4:]
            key = f"{account}-{resource.split('/', 1)[0]}-{resource.rsplit('/', 1)[-1]}"  # <account>-role-ci
            entry = aws.eks.AccessEntry(
                f"{name}-admin-{key}",
                cluster_name=spec.name,
                principal_arn=arn,
                type="STANDARD",
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster]),
            )
            aws.eks.AccessPolicyAssociation(
                f"{name}-admin-{key}",
                cluster_name=spec.name,
                principal_arn=arn,
                policy_arn=partition.apply(upstream.access_policy_arn),
                access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]),
            )
            entries.append(entry)
        return entries


def principal_of_session(arn: str) -> str:
    """The role name of an STS assumed-role ARN (``.../assumed-role/<role>/<session>``), else ''."""
    parts = arn.split(":", 5)
    if len(parts) == 6 and parts[2] == "sts" and parts[5].startswith("assumed-role/"):
        return parts[5].split("/")[1]
    return ""
