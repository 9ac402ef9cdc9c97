"""``ClusterRef``: the one way every component says "the cluster this goes into".

It holds the cluster's name, the Kubernetes provider that reaches it, and, where known, its
``aws.eks.Cluster`` (read, or created by pulumi-eks) and IAM role. Build it from an EKS cluster this
program does not manage (``ClusterRef.existing``: read, nothing created) or from the pulumi-eks
``Cluster`` a program creates (``ClusterRef.created``). Pools, node groups and add-ons take it as
their ``cluster`` argument.

A component also takes the cluster as data, as every Pulumi language can send it (pulumi-eks's
``CoreData`` is the same idea): ``{"name": ...}`` (the rest read from the cluster, as ``existing``
does), with ``endpoint`` and ``certificate_authority`` when the program has them (nothing is read),
``oidc_issuer``, ``oidc_provider_arn`` (for IRSA) and ``node_role_arn`` (the Karpenter pools' default node
role). ``ClusterRef.from_inputs`` turns that into a ref, named after the component.
"""

import json
import weakref
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping, Optional, cast

import pulumi
import pulumi_aws as aws
from pulumi.runtime import settings
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from . import syntax
from .errors import ArgumentError, PropertyProblems
from .inputs import closest


def kubeconfig(
    cluster_name: pulumi.Input[str],
    endpoint: pulumi.Input[str],
    ca_data: pulumi.Input[str],
    region: pulumi.Input[str],
    profile: Optional[str] = None,
) -> pulumi.Output[str]:
    """A kubeconfig that authenticates with ``aws eks get-token``, as pulumi-eks's own does
    (``generateKubeconfig`` in nodejs/eks/cluster/cluster.ts): ``--region`` always (the cluster's, from
    its ARN), and the stack's ``aws:profile`` as ``--profile`` when one is set, so the token is minted
    for the stack's identity, not for whatever the shell's default profile and region are."""

    def render(args: list[str]) -> str:
        cluster_name, server, ca, where = args
        token = ["--region", where, "eks", "get-token", "--cluster-name", cluster_name, "--output", "json"]
        if profile:
            token += ["--profile", profile]
        return json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": cluster_name, "cluster": {"server": server, "certificate-authority-data": ca}}],
                "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
                "current-context": cluster_name,
                "users": [
                    {
                        "name": cluster_name,
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1beta1",
                                "command": "aws",
                                "args": token,
                            }
                        },
                    }
                ],
            }
        )

    return pulumi.Output.all(cluster_name, endpoint, ca_data, region).apply(render)


def region_of(arn: pulumi.Input[str]) -> pulumi.Output[str]:
    """The region field of an ARN (``arn:aws:eks:<region>:<account>:cluster/<name>``), as pulumi-eks reads it."""
    return pulumi.Output.from_input(arn).apply(lambda text: text.split(":")[3])


@dataclass(frozen=True)
class LiveCluster:
    """What EKS says of an existing cluster (``DescribeCluster``), read at preview."""

    version: str
    authentication_mode: str
    """``API``, ``API_AND_CONFIG_MAP`` or ``CONFIG_MAP`` (``accessConfig.authenticationMode``)."""
    oidc_issuer: str
    """The cluster's OIDC issuer URL (``identity.oidc.issuer``), what IRSA trusts."""


def read_cluster(cluster_name: str, opts: Optional[pulumi.InvokeOptions] = None) -> Optional[LiveCluster]:
    """An existing cluster's facts (``aws.eks.get_cluster``), or None when it cannot be read here (the
    ``ClusterRef``'s own look-up then says why)."""
    try:
        found = aws.eks.get_cluster(name=cluster_name, opts=opts)
    except Exception:  # noqa: BLE001 (reported by the look-up every component makes)
        return None
    access = (found.access_configs or [None])[0]
    identity = (found.identities or [None])[0]
    oidc = (identity.oidcs or [None])[0] if identity is not None else None
    return LiveCluster(
        str(found.version),
        str(access.authentication_mode) if access is not None else "",
        str(oidc.issuer) if oidc is not None else "",
    )


ONE_PER_CLUSTER = "one per cluster: use the one there is"
"""The fix when a second component would install what a cluster runs once."""
_CLAIMS: "weakref.WeakKeyDictionary[object, dict[object, dict[str, str]]]" = weakref.WeakKeyDictionary()
"""Each program run's claims, by its resource monitor (not kept alive by this), by cluster."""


@dataclass(frozen=True)
class ProviderDeployment:
    """The deployment a component provider constructs a component for (one ``pulumi preview`` or ``up`` of a
    program in any language): every ``Construct`` the engine sends for it names the same resource monitor, and a
    second deployment has another. The SDK makes a new monitor client for each ``Construct``, so that client
    cannot say which components belong together; the endpoint can."""

    monitor: str
    """The engine's resource monitor endpoint (the ``Construct`` request's ``monitorEndpoint``)."""
    aws_provider: str = ""
    """The AWS provider the program gives the component (``urn::id``, the request's ``providers["aws"]``), or ``""``
    for the stack's default provider, whose account and region are the deployment's credentials and config."""


DEPLOYMENT: ContextVar[Optional[ProviderDeployment]] = ContextVar("DEPLOYMENT", default=None)
"""The deployment of the ``Construct`` being served, set by the component provider; None in a Python program."""
_DEPLOYMENT_CLAIMS: dict[str, dict[object, dict[str, str]]] = {}
"""Claims of the components constructed for each deployment (by its monitor endpoint), by cluster."""


def cluster_key(name: object, aws_provider: Optional[pulumi.ProviderResource]) -> object:
    """Who a cluster named ``name`` is: the name and the AWS provider that reaches it (its account and region). The
    stack's default provider, or in a deployment of another language's program the provider it gives (by its
    reference, the same in every ``Construct``), or a provider object of a Python program."""
    deployment = DEPLOYMENT.get()
    if deployment is not None:
        return ("existing", name, deployment.aws_provider) if deployment.aws_provider else ("existing", name)
    return ("existing", name) if aws_provider is None else ("existing", name, aws_provider)


def aws_provider_of(opts: pulumi.ResourceOptions) -> Optional[pulumi.ProviderResource]:
    """The AWS provider resources made with ``opts`` use: given in ``providers`` or as ``provider``, or inherited
    from the parent; None for the stack's default provider."""
    given = opts.providers.values() if isinstance(opts.providers, Mapping) else (opts.providers or [])
    for provider in [*given, opts.provider]:
        if isinstance(provider, pulumi.ProviderResource) and provider.package == "aws":
            return provider
    return opts.parent.get_provider("aws:eks/cluster:Cluster") if opts.parent is not None else None


def _cluster_name_problem(name: object) -> Optional[str]:
    if not isinstance(name, str):
        return f"expected str (an EKS cluster name), got {type(name).__name__} {name!r}"[:160]
    problem = syntax.eks_cluster_name_problem(name)
    return f"invalid cluster name {name!r} ({problem})"[:200] if problem else None


def _check_ref(how: str, name: object, checks: list[tuple[str, object, Callable[[object], Optional[str]]]]) -> None:
    """``ClusterRef.existing``/``created``'s arguments, every problem at once (as components report theirs)."""
    problems = []
    if not isinstance(name, str) or not name:
        problems.append(
            ("name", f"expected a non-empty str (it names the Kubernetes provider <name>-k8s), got {name!r}"[:160])
        )
    problems += [(key, problem) for key, value, check in checks if (problem := check(value))]
    if problems:
        raise ArgumentError(f"ClusterRef.{how}", str(name)[:60], *problems[0], more=problems[1:])


def _opts_problem(opts: object) -> Optional[str]:
    return (
        None
        if opts is None or isinstance(opts, pulumi.ResourceOptions)
        else f"expected pulumi.ResourceOptions or None, got {type(opts).__name__}"
    )


def oidc_issuer_of(identities: Any) -> Optional[str]:
    """The OIDC issuer of a cluster's ``identities`` (``[{oidcs: [{issuer}]}]``), or None when it has none."""
    oidcs = getattr(identities[0], "oidcs", None) if identities else None
    return getattr(oidcs[0], "issuer", None) if oidcs else None


class ClusterRef:
    """The EKS cluster a component goes into: its name, and what reaches it (endpoint and certificate
    authority; read from the cluster when not given). In Python, build it with ``existing`` or ``created``."""

    name: pulumi.Output[str]
    """The EKS cluster's name."""
    endpoint: Optional[pulumi.Output[str]]
    """The API server's endpoint (``https://...``), with ``certificate_authority``. Default: read from the cluster."""
    certificate_authority: Optional[pulumi.Output[str]]
    """The cluster's certificate authority data (base64), with ``endpoint``. Default: read from the cluster."""
    oidc_issuer: Optional[pulumi.Output[str]]
    """The cluster's OIDC issuer URL (``https://oidc.eks.<region>.<suffix>/id/<id>``, for IAM roles for service
    accounts). Default: read from the cluster."""
    oidc_provider_arn: Optional[pulumi.Output[str]]
    """The ARN of the cluster's IAM OIDC provider, which IRSA roles trust (``rack:controller_identity: irsa``).
    Default: the one ``RackCluster`` makes, or, for a cluster read by name, the one IAM holds for its issuer."""
    node_role_arn: Optional[pulumi.Output[str]]
    """The IAM role of the nodes Karpenter launches, its ARN or name: the Karpenter pools' default node role.
    Default: ``KarpenterNodeRole-<name>``."""

    def __init__(
        self,
        name: pulumi.Input[str],
        provider: k8s.Provider,
        *,
        endpoint: pulumi.Input[str],
        kubeconfig: pulumi.Input[str],
        cluster: Optional[eks.Cluster] = None,
        read: Optional[tuple[str, pulumi.ResourceOptions]] = None,
    ) -> None:
        self.name = pulumi.Output.from_input(name)
        self.provider: k8s.Provider = provider
        """The Kubernetes provider for the cluster's objects."""
        self.endpoint = pulumi.Output.from_input(endpoint)
        self.certificate_authority = None
        self.oidc_issuer = None
        self.node_role_arn = None
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(kubeconfig)
        """A kubeconfig for the cluster (``aws eks get-token``), as a secret."""
        self.cluster: Optional[eks.Cluster] = cluster
        """The pulumi-eks ``Cluster``, when this program creates the cluster."""
        self._read = read
        """(name, opts) to read an existing cluster and its role with, on first use."""
        self._version: Optional[str] = None
        self.known_name: Optional[str] = None
        """The cluster's name when this program knows it as text (``existing``, or ``created`` with
        ``cluster_name``): what a look-up of the live cluster (its node groups) needs at preview."""
        self.oidc_provider_arn = None
        self._looked_up_version: Optional[pulumi.Output[str]] = None
        self._key: object = self
        """Who the cluster is (``cluster_key``): its name and AWS provider when the name is known, the pulumi-eks
        ``Cluster`` of a ``created`` ref, else this ref."""
        self._own_claims: dict[str, str] = {}

    @property
    def claims(self) -> dict[str, str]:
        """What components of this program put in the cluster, by what they put (``NodePool ml``,
        ``helm release kube-system/metrics-server``, ``cluster-autoscaler``) -> the component that does.
        Shared, for one program run (its resource monitor), by the refs to one cluster: the refs of one name
        through one AWS provider (a name is unique in one account and region, which the provider fixes), and
        the refs to one pulumi-eks ``Cluster``. Each ``set_mocks`` (a unit test) is a run of its own; the
        components a component provider constructs for one deployment of another language's program share
        that deployment's claims (``DEPLOYMENT``), and two deployments are apart."""
        deployment = DEPLOYMENT.get()
        if deployment is not None:  # constructed for another language's program: its deployment's
            return _DEPLOYMENT_CLAIMS.setdefault(deployment.monitor, {}).setdefault(self._key, {})
        try:
            run = settings.get_monitor()  # one per program run (a new one each set_mocks)
        except Exception:  # noqa: BLE001 (no run at all: nothing to share)
            run = None
        if run is None:
            return self._own_claims
        try:
            return _CLAIMS.setdefault(run, {}).setdefault(self._key, {})
        except TypeError:  # a monitor that takes no weak reference: this ref's own
            return self._own_claims

    def claim(self, component: str, name: str, objects: Mapping[str, str]) -> None:
        """Record that ``component`` ``name`` puts ``objects`` (what -> the fix when another component
        already does) in the cluster; refuse what another component already puts there: two components
        would own one Kubernetes object, and the second create fails at apply."""
        claims, me = self.claims, f"{component} '{name}'"
        for what, fix in objects.items():
            owner = claims.get(what)
            if owner is not None and owner != me:
                raise ArgumentError(
                    component,
                    name,
                    "cluster",
                    f"{owner} already puts {what} in this cluster, and two components would own one object ({fix})",
                )
        claims.update((what, me) for what in objects)

    @classmethod
    def existing(
        cls,
        name: str,
        cluster_name: pulumi.Input[str],
        provider: Optional[k8s.Provider] = None,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> "ClusterRef":
        """An EKS cluster this program does not manage.

        Without ``provider``, a Kubernetes provider ``<name>-k8s`` is made from the cluster's endpoint
        (an ``aws.eks.get_cluster`` look-up, no resource). The cluster itself (``aws.eks.Cluster.get``,
        as ``<name>-cluster``) and its IAM role (``<name>-cluster-role``) are read only when a component
        needs them (a managed node group does, a Karpenter pool does not).
        """
        _check_ref(
            "existing",
            name,
            [
                (
                    "cluster_name",
                    cluster_name,
                    lambda n: None if isinstance(n, pulumi.Output) else _cluster_name_problem(n),
                ),
                (
                    "provider",
                    provider,
                    lambda p: (
                        None
                        if p is None or isinstance(p, k8s.Provider)
                        else f"expected a pulumi_kubernetes Provider or None, got {type(p).__name__}"
                    ),
                ),
                ("opts", opts, _opts_problem),
            ],
        )
        opts = opts or pulumi.ResourceOptions()
        found = aws.eks.get_cluster_output(name=cluster_name, opts=pulumi.InvokeOptions(parent=opts.parent))
        config = kubeconfig(
            cluster_name,
            found.endpoint,
            found.certificate_authorities[0].data,
            region_of(found.arn),
            pulumi.Config("aws").get("profile"),
        )
        if provider is None:
            provider = k8s.Provider(f"{name}-k8s", kubeconfig=config, opts=opts)
        ref = cls(cluster_name, provider, endpoint=found.endpoint, kubeconfig=config, read=(name, opts))
        ref.certificate_authority = found.certificate_authorities[0].data
        ref.oidc_issuer = found.identities.apply(oidc_issuer_of)
        ref.known_name = cluster_name if isinstance(cluster_name, str) else None
        if isinstance(cluster_name, str):  # who the cluster is: its name, through the AWS provider that reads it
            ref._key = cluster_key(cluster_name, aws_provider_of(opts))
        ref._looked_up_version = found.version
        return ref

    @classmethod
    def from_inputs(
        cls, owner: str, path: str, value: Mapping[str, object], opts: Optional[pulumi.ResourceOptions] = None
    ) -> "ClusterRef":
        """The cluster as data (``{"name", "endpoint", "certificate_authority", "oidc_issuer", "oidc_provider_arn",
        "node_role_arn"}``, each a value or an Output), as a component takes it from any language: with ``endpoint``
        and ``certificate_authority`` its Kubernetes provider ``<owner>-k8s`` is made from them (``--region`` the
        stack's), else as ``existing`` makes one (a look-up, nothing created). Problems raise ``PropertyProblems``
        at ``path.<key>``."""
        allowed = {"name", "endpoint", "certificate_authority", "oidc_issuer", "oidc_provider_arn", "node_role_arn"}
        problems = [
            (
                f"{path}.{key}",
                f"unknown field ({f'did you mean {meant}? ' if (meant := closest(key, allowed)) else ''}"
                f"expected one of: {', '.join(sorted(allowed))})",
            )
            for key in sorted(map(str, set(value) - allowed))
        ]
        name = value.get("name")
        if name is None:
            problems.append((f"{path}.name", "required (the EKS cluster's name)"))
        elif not isinstance(name, pulumi.Output) and (problem := _cluster_name_problem(name)):
            problems.append((f"{path}.name", problem))
        given = [key for key in ("endpoint", "certificate_authority") if value.get(key) is not None]
        if len(given) == 1:
            other = ({"endpoint", "certificate_authority"} - set(given)).pop()
            problems.append((f"{path}.{other}", f"required with {given[0]} (the two reach the API server together)"))
        fields: dict[str, pulumi.Input[str]] = {}
        for key in ("endpoint", "certificate_authority", "oidc_issuer", "oidc_provider_arn", "node_role_arn"):
            field = value.get(key)
            if isinstance(field, (str, pulumi.Output)):
                fields[key] = field
            elif field is not None:
                problems.append((f"{path}.{key}", f"expected str, got {type(field).__name__}"))
        if problems:
            raise PropertyProblems(problems)
        cluster_name = cast(pulumi.Input[str], name)  # a str or an Output: anything else is a problem above
        opts = opts or pulumi.ResourceOptions()
        node_role = fields.get("node_role_arn")
        if len(given) == 2:
            endpoint = pulumi.Output.from_input(fields["endpoint"])
            config = kubeconfig(
                cluster_name,
                endpoint,
                fields["certificate_authority"],
                aws.get_region_output(opts=pulumi.InvokeOptions(parent=opts.parent)).region,
                pulumi.Config("aws").get("profile"),
            )
            provider = k8s.Provider(f"{owner}-k8s", kubeconfig=config, opts=opts)
            ref = cls(cluster_name, provider, endpoint=endpoint, kubeconfig=config)
            ref.known_name = name if isinstance(name, str) else None
            ref.certificate_authority = pulumi.Output.from_input(fields["certificate_authority"])
            ref.oidc_issuer = (
                pulumi.Output.from_input(fields["oidc_issuer"]) if fields.get("oidc_issuer") is not None else None
            )
        else:
            ref = cls.existing(owner, cluster_name, opts=opts)
            if fields.get("oidc_issuer") is not None:
                ref.oidc_issuer = pulumi.Output.from_input(fields["oidc_issuer"])
        if node_role is not None:
            ref.node_role_arn = pulumi.Output.from_input(node_role)
        if fields.get("oidc_provider_arn") is not None:
            ref.oidc_provider_arn = pulumi.Output.from_input(fields["oidc_provider_arn"])
        if isinstance(name, str):  # who the cluster is: its name, through the AWS provider the component uses
            ref._key = cluster_key(name, aws_provider_of(opts))
        return ref

    @classmethod
    def created(
        cls,
        name: str,
        cluster: eks.Cluster,
        opts: Optional[pulumi.ResourceOptions] = None,
        cluster_name: Optional[str] = None,
        version: Optional[str] = None,
        oidc_provider_arn: Optional[pulumi.Input[str]] = None,
    ) -> "ClusterRef":
        """A cluster this program creates with pulumi-eks. Its Kubernetes provider ``<name>-k8s`` is made
        from a kubeconfig built as ``existing`` builds one (``kubeconfig``: the cluster's endpoint and CA,
        ``--region`` from its ARN, the stack's ``aws:profile`` as ``--profile``), not from pulumi-eks's
        ``kubeconfig_json``, which is the form pulumi-eks builds without the profile (for other users; its
        own provider uses a second form with it), so the charts and objects would be applied with the
        shell's default identity. (pulumi-eks's Python
        ``Cluster.provider`` is an Output, which a resource's ``provider`` option cannot take.) Pass
        ``cluster_name`` and ``version`` when the program sets them (``eks.Cluster(name=..., version=...)``),
        so what is built from them is known at preview. Pass ``oidc_provider_arn`` (e.g. the pulumi-eks
        Cluster's ``oidc_provider_arn`` with ``create_oidc_provider=True``) for components that authenticate
        with IAM roles for service accounts."""
        _check_ref(
            "created",
            name,
            [
                (
                    "cluster",
                    cluster,
                    lambda c: (
                        None
                        if hasattr(c, "eks_cluster")  # what is read of it
                        else f"expected a pulumi_eks Cluster, got {type(c).__name__}"
                    ),
                ),
                ("cluster_name", cluster_name, lambda n: None if n is None else _cluster_name_problem(n)),
                (
                    "version",
                    version,
                    lambda v: (
                        None if v is None or isinstance(v, str) else f"expected str or None, got {type(v).__name__}"
                    ),
                ),
                ("opts", opts, _opts_problem),
            ],
        )
        # A name given here is known at preview, and still carries the cluster: an Output resolved from the
        # cluster's URN (known at preview, its resources the cluster) makes every resource that takes the
        # name (an access entry, a Pod Identity association, an EKS add-on) depend on the cluster, as a name
        # read from the cluster would. A plain string carries no dependency, and those resources could be
        # created before the cluster exists when a component is used on its own.
        name_output = (
            cluster.urn.apply(lambda _: cluster_name)
            if cluster_name is not None
            else cluster.eks_cluster.apply(lambda c: c.name)
        )
        endpoint = cluster.eks_cluster.apply(lambda c: c.endpoint)
        config = kubeconfig(
            name_output,
            endpoint,
            cluster.eks_cluster.apply(lambda c: c.certificate_authority.data),
            region_of(cluster.eks_cluster.apply(lambda c: c.arn)),
            pulumi.Config("aws").get("profile"),
        )
        provider = k8s.Provider(f"{name}-k8s", kubeconfig=config, opts=opts)
        ref = cls(name_output, provider, endpoint=endpoint, kubeconfig=config, cluster=cluster)
        ref.certificate_authority = cluster.eks_cluster.apply(lambda c: c.certificate_authority.data)
        ref.oidc_issuer = cluster.eks_cluster.apply(lambda c: getattr(c, "identities", None)).apply(oidc_issuer_of)
        ref._key = ("created", cluster)  # refs to one pulumi-eks Cluster are one cluster
        ref._version = version
        ref.known_name = cluster_name
        if oidc_provider_arn is not None:
            ref.oidc_provider_arn = pulumi.Output.from_input(oidc_provider_arn)
        return ref

    def irsa(self, component: str, name: str) -> tuple[pulumi.Input[str], pulumi.Output[str]]:
        """The IAM OIDC provider's ARN and the issuer a role trusts for IRSA, or ``ArgumentError`` naming
        what is missing. An existing cluster's are read at preview: its issuer (``DescribeCluster``) and the
        provider IAM holds for it (``aws.iam.get_open_id_connect_provider``); one missing is refused with
        the command that makes it (the rack does not make a provider it does not own: destroying it would
        break every other IRSA role of the cluster)."""
        if self.oidc_provider_arn is not None and self.oidc_issuer is not None:
            return self.oidc_provider_arn, self.oidc_issuer
        if self._read is None:
            raise ArgumentError(
                component,
                name,
                "cluster",
                (
                    "IRSA needs the cluster's IAM OIDC provider: pass ClusterRef.created(..., oidc_provider_arn=...) "
                    "(pulumi-eks: eks.Cluster(create_oidc_provider=True) and its oidc_provider_arn)"
                ),
            )
        live = self.live
        if live is None or not live.oidc_issuer:
            raise ArgumentError(
                component,
                name,
                "cluster",
                (
                    f"IRSA needs the OIDC issuer of cluster '{self.known_name}', and the cluster cannot be read here "
                    f"(eks:DescribeCluster)"
                ),
            )
        try:
            provider = aws.iam.get_open_id_connect_provider(
                url=live.oidc_issuer, opts=pulumi.InvokeOptions(parent=self._read[1].parent)
            )
        except Exception:  # noqa: BLE001 (IAM has none for this issuer, or it cannot be read)
            raise ArgumentError(
                component,
                name,
                "cluster",
                (
                    f"IAM has no OIDC provider for the issuer {live.oidc_issuer} of cluster '{self.known_name}', which "
                    f"IRSA needs: create it once (eksctl utils associate-iam-oidc-provider --cluster {self.known_name} "
                    f"--approve, or aws iam create-open-id-connect-provider --url {live.oidc_issuer} --client-id-list "
                    f"sts.amazonaws.com)"
                ),
            ) from None
        self.oidc_provider_arn = provider.arn
        self.oidc_issuer = pulumi.Output.from_input(live.oidc_issuer)
        return self.oidc_provider_arn, self.oidc_issuer

    @cached_property
    def live(self) -> Optional[LiveCluster]:
        """An existing cluster's facts, read once at preview (its version, authentication mode and OIDC
        issuer); None for a cluster this program creates, or one that cannot be read."""
        if self._read is None or self.known_name is None:
            return None
        return read_cluster(self.known_name, pulumi.InvokeOptions(parent=self._read[1].parent))

    @cached_property
    def eks_cluster(self) -> aws.eks.Cluster:
        """The ``aws.eks.Cluster`` of an existing cluster (read on first use)."""
        if self._read is None:
            raise ValueError("a created cluster's aws.eks.Cluster is the eks.Cluster's eks_cluster output")
        name, opts = self._read
        return aws.eks.Cluster.get(f"{name}-cluster", self.name, opts=opts)

    @cached_property
    def cluster_role(self) -> aws.iam.Role:
        """The cluster's IAM role (read on first use for an existing cluster)."""
        if self._read is None:
            raise ValueError("a created cluster's role is pulumi-eks's own; pass the eks.Cluster to pulumi-eks instead")
        name, opts = self._read
        role_name = self.eks_cluster.role_arn.apply(lambda arn: arn.rsplit("/", 1)[-1])
        return aws.iam.Role.get(f"{name}-cluster-role", role_name, opts=opts)

    @property
    def version(self) -> pulumi.Output[str]:
        """The control plane's Kubernetes version (``1.34``)."""
        if self._version is not None:
            # plain, not carrying the cluster as ``name`` does: it feeds look-ups (an add-on's version), which
            # the engine answers as unknown at preview when they depend on a resource being created
            return pulumi.Output.from_input(self._version)
        if self.cluster is not None:
            created: pulumi.Output[str] = self.cluster.eks_cluster.apply(lambda c: c.version)
            return created
        if self._looked_up_version is not None:  # the look-up ``existing`` made: known at preview
            return self._looked_up_version
        read: pulumi.Output[str] = self.eks_cluster.version
        return read

    def node_group_cluster(self, node_role: Optional[aws.iam.Role]) -> "eks.Cluster | eks.CoreDataArgsDict":
        """What pulumi-eks ``ManagedNodeGroup(cluster=...)`` takes: the ``eks.Cluster`` a program created,
        or, for an existing cluster, the ``CoreData`` it reads (the ``aws.eks.Cluster``, its endpoint,
        subnets and VPC; a group without ``subnet_ids`` of its own uses the cluster's subnets). pulumi-eks
        reads ``instance_roles`` only for a cluster without access entries, where the node role must be
        among them: pass the role itself, not its ARN, to such a cluster."""
        if self.cluster is not None:
            return self.cluster
        cluster = self.eks_cluster
        vpc = cluster.vpc_config
        # pulumi-eks's CoreData, as the mapping its CoreDataArgsDict describes (the SDK would otherwise
        # evaluate CoreDataArgs' type hints, which import most of pulumi-aws: most of a preview's time)
        core: eks.CoreDataArgsDict = {
            "cluster": cluster,
            "cluster_iam_role": self.cluster_role,
            "endpoint": cluster.endpoint,
            "instance_roles": [node_role] if node_role is not None else [],
            "node_group_options": {},
            "provider": self.provider,
            "subnet_ids": vpc.subnet_ids,
            "vpc_id": vpc.vpc_id,
        }
        return core
