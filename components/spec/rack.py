"""The whole rack's specs: the cluster it creates, Karpenter, the GPU add-ons, and ``RackSpec``."""

import ipaddress
import re
from typing import Optional

from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..facts import instances, upstream
from ..pack import fit
from .. import clock, contract, syntax
from ..identity import Identity
from .base import FieldProblem, Spec, SpecError, cluster_name, error_message
from .limits import CHART_VERSION_RE, CIDR_RE, K8S_VERSION_RE, RACK_TAGS, SUBNET_ID_RE, VPC_ID_RE
from .nodegroup import NodeGroupSpec
from .pool import PoolSpec, usd_problem
from .tags import rack_tags_problem, tags_problem


def time_slicing_problem(replicas: int) -> Optional[str]:
    if replicas < 1:
        return f"invalid time_slicing_replicas '{replicas}' (must be 1 or more)"
    return None


def chart_version_problem(version: str, what: str) -> Optional[str]:
    if not CHART_VERSION_RE.fullmatch(version):
        return f"invalid {what} '{version}' (must be a chart version like 4.8.2)"
    return None


def karpenter_version_problem(version: str) -> Optional[str]:
    """Why the rack does not install Karpenter ``version``, named as ``karpenter_version``; None when it does."""
    problem = chart_version_problem(version, "karpenter_version")
    if problem:
        return problem
    problem = upstream.karpenter_release_problem(version)
    return f"karpenter_version '{version}': {problem}" if problem else None


def karpenter_pair_problem(k8s_version: str, karpenter_version: str) -> Optional[str]:
    """A control plane on ``k8s_version`` that Karpenter ``karpenter_version`` does not support (by its release's
    compatibility matrix: ``upstream.karpenter_compatibility``), with the release that would serve; None when it
    does."""
    verdict = upstream.karpenter_compatibility(k8s_version, karpenter_version)
    if verdict.supported:
        return None
    fix = (
        f"set karpenter_version: {verdict.serving}"
        if verdict.serving
        else "no Karpenter release the rack installs supports it: use another Kubernetes minor"
    )
    return f"karpenter_version '{karpenter_version}' with Kubernetes {k8s_version}: {verdict.reason} ({fix})"


PUBLIC_ACCESS_CIDRS_MAX = 40
"""EKS's fixed quota of CIDR blocks for a cluster's public endpoint (``publicAccessCidrs``)."""

_NOT_PUBLIC = (
    (
        "private",
        lambda n: any(n.subnet_of(ipaddress.ip_network(r)) for r in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")),
    ),
    ("loopback", lambda n: n.is_loopback),
    ("link-local", lambda n: n.is_link_local),
    ("shared address space (carrier-grade NAT)", lambda n: n.subnet_of(ipaddress.ip_network("100.64.0.0/10"))),
    ("multicast", lambda n: n.is_multicast),
    ("unspecified ('this network')", lambda n: n.subnet_of(ipaddress.ip_network("0.0.0.0/8"))),
    ("reserved", lambda n: n.is_reserved),
)


def public_cidr_problem(cidr: str) -> Optional[str]:
    """What keeps ``cidr`` from being a public endpoint's allowed range, or None.

    It must be an IPv4 network written with its network address (``34.201.0.0/16``, not
    ``34.201.7.9/16``, which EKS refuses), and a range of public addresses: a private, loopback,
    link-local, shared (``100.64.0.0/10``), multicast, ``0.0.0.0/8`` or reserved (``240.0.0.0/4``) range
    is refused by EKS for the public endpoint and could never match a caller on the internet.
    ``0.0.0.0/0`` (anyone) is fine, and so are the documentation ranges (``203.0.113.0/24``), which
    examples use."""
    try:
        network = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return f"invalid CIDR '{cidr}' (must be an IPv4 CIDR like 203.0.113.0/24)"
    if network.version != 4 or not CIDR_RE.fullmatch(cidr):
        return f"invalid CIDR '{cidr}' (must be an IPv4 CIDR like 203.0.113.0/24)"
    if str(network) != cidr:
        return (
            f"invalid CIDR '{cidr}': host bits are set (the address must be the first of its /{network.prefixlen} "
            f"range); did you mean {network}?"
        )
    if network.prefixlen == 0:
        return None
    kind = next((name for name, test in _NOT_PUBLIC if test(network)), None)
    if kind:
        return (
            f"CIDR '{cidr}' is {kind}, not a public range: EKS refuses it for the public endpoint and no caller on "
            f"the internet comes from it; give the public addresses your callers come from (e.g. 203.0.113.0/24), "
            f"or 0.0.0.0/0 for anyone"
        )
    return None


def today() -> str:
    """Today's date (UTC, ISO), against which EKS's support dates are read (``clock``)."""
    return clock.today()


def version_support(version: str, when: Optional[str] = None) -> tuple[str, str]:
    """Where Kubernetes ``version`` stands on EKS (``upstream.eks_support``) and what to say of it:
    ``("ended", ...)`` past the end of extended support, ``("extended", ...)`` in extended support,
    ``("standard", "")`` or ``("unknown", "")`` otherwise."""
    when = when or today()
    status, since = upstream.eks_support(version, when)
    listed = sorted(upstream.EKS_VERSION_SUPPORT, key=lambda v: int(v.split(".")[1]))
    after = f"1.{int(listed[-1].split('.')[1]) + 1}"  # the first minor the calendar read here does not date
    creatable = next((v for v in listed if upstream.eks_support(v, when)[0] != "ended"), after)
    standard = next((v for v in listed if upstream.eks_support(v, when)[0] == "standard"), after)
    if status == "ended":
        return status, (
            f"Kubernetes {version} reached the end of EKS extended support on {since} "
            f"({upstream.EKS_VERSION_SOURCE}): EKS creates no cluster on it and upgrades existing "
            f"control planes itself (use {creatable} or newer)"
        )
    if status == "extended":
        price = upstream.EKS_PRICE_PER_CLUSTER_HOUR
        return status, (
            f"Kubernetes {version} is in EKS extended support since {since} ({upstream.EKS_VERSION_SOURCE}), "
            f"billed ${price['extended']:.2f} an hour per cluster instead of standard support's "
            f"${price['standard']:.2f} until {upstream.EKS_VERSION_SUPPORT[version][1]} "
            f"(upgrade to {standard} or newer)"
        )
    return status, ""


def access_entries_problem(cluster_name: str, mode: str) -> Optional[str]:
    """A cluster whose authentication mode takes no access entries (``CONFIG_MAP``: the aws-auth
    ConfigMap only). EKS's CreateAccessEntry needs ``API`` or ``API_AND_CONFIG_MAP``; a cluster moves from
    ``CONFIG_MAP`` to ``API_AND_CONFIG_MAP`` (the aws-auth ConfigMap keeps working beside access entries),
    and never back (the EKS user guide, Change authentication mode to use access entries)."""
    if mode != "CONFIG_MAP":
        return None
    return (
        f"cluster '{cluster_name}' authenticates with CONFIG_MAP (the aws-auth ConfigMap only), and EKS refuses "
        f"access entries there, through which Karpenter's nodes join: switch it to API_AND_CONFIG_MAP first "
        f"(aws eks update-cluster-config --name {cluster_name} --access-config "
        f"authenticationMode=API_AND_CONFIG_MAP; one way, and the aws-auth ConfigMap keeps working)"
    )


SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute", "NO_SCHEDULE", "NO_EXECUTE")
"""Taint effects that keep a pod without the toleration off a node (Kubernetes' and the EKS API's spellings)."""
NEURON_RESOURCE = "aws.amazon.com/neuron"
"""The extended resource the Neuron device plugin advertises for AWS Inferentia and Trainium devices."""


def extended_resources(families: list[str]) -> list[str]:
    """The extended resources nodes of these instance types or families advertise (their GPU vendor's, Neuron's)."""
    found = [
        contract.gpu_resource(instances.facts(f).gpu) if instances.facts(f).gpu else NEURON_RESOURCE
        for f in families
        if instances.facts(f).gpu or instances.facts(f).neuron
    ]
    return list(dict.fromkeys(found))


def tolerated(taints: list[dict[str, str]], resource: str = "") -> bool:
    """Whether a pod that tolerates nothing of its own schedules past these taints. A pod that requests the extended
    resource ``resource`` tolerates its NoSchedule taint all the same: EKS runs the ExtendedResourceToleration
    admission plugin (EKS user guide, platform versions), which adds ``<resource>:NoSchedule`` (operator Exists) to
    every pod requesting it (kubernetes ``plugin/pkg/admission/extendedresourcetoleration``)."""
    return all(
        t.get("effect") not in SCHEDULING_EFFECTS
        or (resource and t.get("key") == resource and t.get("effect") in ("NoSchedule", "NO_SCHEDULE"))
        for t in taints
    )


def doubly_scaled(groups: list[NodeGroupSpec], pools: list[PoolSpec]) -> list[tuple[NodeGroupSpec, PoolSpec, str]]:
    """Node groups the Cluster Autoscaler scales (``min_size < max_size``) that a pending pod fits as well as a
    Karpenter pool: both react to the one pod, each launching a node (the autoscaler for pods it could place in a
    group, Karpenter for pods no node holds). The pod tolerates nothing of its own, so it fits lanes whose taints it
    is given automatically: none, or, when it requests an extended resource both lanes' nodes advertise (a GPU
    pod's ``nvidia.com/gpu``), that resource's NoSchedule taint. Each such group once, with the first such pool and
    the resource ('' for a pod that requests none)."""
    found = []
    for group in (g for g in groups if not g.fixed_size):
        offered = [""] + extended_resources([group.instance_type])
        for resource in offered:
            pool = next(
                (
                    p
                    for p in pools
                    if tolerated(p.node_taints(), resource)
                    and (not resource or p.offers_accelerators and resource in extended_resources(p.families))
                ),
                None,
            )
            if pool is not None and tolerated(group.node_taints(), resource):
                found.append((group, pool, resource))
                break
    return found


def admin_role_problem(admin_arns: list[str], entries: dict[str, str]) -> Optional[str]:
    """An admin ARN naming a role that already has an EKS access entry of the rack's making (``entries``:
    role name -> who makes its entry). EKS puts an IAM principal in one access entry only (the EKS user
    guide, Create access entries) and refuses a second (``ResourceInUseException``), so such a role cannot
    also be given an admin entry. Role names compare as IAM compares them: without path, any case."""
    taken = {name.lower(): (name, why) for name, why in entries.items()}
    for arn in admin_arns:
        found = syntax.IAM_PRINCIPAL_ARN_RE.fullmatch(arn)
        if found is None or found["kind"] != "role" or found["name"].lower() not in taken:
            continue
        name, why = taken[found["name"].lower()]
        return (
            f"ARN '{arn}' is the role {name}, which {why}; EKS keeps one access entry per IAM principal and "
            f"refuses a second (ResourceInUseException): remove it from the list (nodes need no admin access)"
        )
    return None


class DevicePluginSpec(Spec):
    """The NVIDIA device plugin on every AL2023 GPU lane."""

    time_slicing_replicas: int = 1
    """Share each GPU this many ways (time-slicing) when greater than 1. Default 1."""

    @field_validator("time_slicing_replicas")
    @classmethod
    def _replicas(cls, v: int) -> int:
        problem = time_slicing_problem(v)
        if problem:
            raise ValueError(problem)
        return v


class GpuObservabilitySpec(Spec):
    """dcgm-exporter on every AL2023 GPU lane."""

    version: str = upstream.DCGM_EXPORTER.version
    """The dcgm-exporter chart version. Default 4.8.2."""
    service_monitor: bool = False
    """Create the chart's ServiceMonitor (needs the monitoring.coreos.com CRDs). Default false."""

    @field_validator("version")
    @classmethod
    def _version(cls, v: str) -> str:
        problem = chart_version_problem(v, "version")
        if problem:
            raise ValueError(problem)
        return v


AVAILABILITY_ZONE_RE = re.compile(r"[a-z]{2,4}(-[a-z]+)+-[0-9]+[a-z]")
"""An Availability Zone's name: its region and one letter (``us-east-1a``, ``eusc-de-east-1b``). A Local Zone
(``us-east-1-bos-1a``) or Wavelength Zone (``us-east-1-wl1-bos-wlz-1``) has a longer name after the region
(EC2 User Guide, Regions and Zones)."""


def outside_availability_zones(zones: dict[str, str]) -> Optional[str]:
    """Subnets in a Local or Wavelength Zone (``zones``: subnet id -> zone). EKS places no cluster network
    interface in a Local Zone subnet ("you must not specify Local Zone subnets when you create your
    cluster") and makes no managed node group there (the EKS user guide, Amazon EKS on AWS Local Zones):
    such a subnet is none of the cluster's, the system lane's or the pools'."""
    local = {subnet: zone for subnet, zone in zones.items() if not AVAILABILITY_ZONE_RE.fullmatch(zone)}
    if not local:
        return None
    listed = ", ".join(f"{subnet} ({zone})" for subnet, zone in local.items())
    return (
        f"{listed} {'is' if len(local) == 1 else 'are'} in a Local Zone or Wavelength Zone, not an Availability "
        f"Zone: EKS places no cluster network interfaces and no managed node groups there (leave "
        f"{'it' if len(local) == 1 else 'them'} out; add Local Zone nodes after the cluster exists)"
    )


def subnet_zones_problem(zones: dict[str, str]) -> Optional[str]:
    """EKS creates a cluster only in subnets of at least two Availability Zones (its API refuses the
    rest: "Subnets specified must be in at least two different AZs"), and none in a Local Zone.
    ``zones``: subnet id -> zone."""
    problem = outside_availability_zones(zones)
    if problem:
        return problem
    distinct = sorted(set(zones.values()))
    if len(distinct) >= 2:
        return None
    where = distinct[0] if distinct else "no zone"
    return (
        f"subnets {', '.join(zones)} are all in {where}: EKS needs the cluster's subnets in at least two "
        f"Availability Zones (add a subnet of another zone)"
    )


def system_node_fit_problem(instance_type: str) -> Optional[str]:
    """Whether one system node can hold what may land on it together: a Karpenter controller replica
    (one per node), both CoreDNS replicas (their anti-affinity is only preferred) and a margin for the
    node's DaemonSets, within its allocatable (``fit.allocatable``: nodeadm's reserves on the instance
    table's sizes). A type the table does not size is not judged."""
    itype = instances.instance_type(instance_type)
    if itype is None:
        return None
    room = fit.allocatable(itype)
    need_cpu = (
        upstream.KARPENTER_CONTROLLER_REQUESTS[0]
        + upstream.COREDNS_REPLICAS * upstream.COREDNS_REQUESTS[0]
        + upstream.SYSTEM_DAEMONSETS_MARGIN[0]
    )
    need_memory = (
        upstream.KARPENTER_CONTROLLER_REQUESTS[1]
        + upstream.COREDNS_REPLICAS * upstream.COREDNS_REQUESTS[1]
        + upstream.SYSTEM_DAEMONSETS_MARGIN[1]
    )
    if room.cpu_m >= need_cpu and room.memory_mib >= need_memory:
        return None
    return (
        f"node type '{instance_type}' is too small for the system lane: a system node must hold a Karpenter "
        f"controller (1 CPU, 1Gi), CoreDNS (2 x 100m, 70Mi) and the node's DaemonSets, {need_cpu}m CPU and "
        f"{need_memory}Mi, and a {instance_type} ({itype.vcpus} vCPU, {itype.memory_mib / 1024:g} GiB) has about "
        f"{room.cpu_m}m and {room.memory_mib}Mi allocatable (use a larger type, e.g. t3.large)"
    )


class ClusterSpec(Spec):
    """An EKS cluster the rack creates (pulumi-eks ``Cluster``) in a network the user brings."""

    name: str
    """The EKS cluster's name."""
    vpc_id: str
    """The VPC."""
    private_subnet_ids: list[str]
    """Subnets for the nodes and the cluster, 2-30, in at least two Availability Zones (Karpenter's pools select them by
    id)."""
    public_subnet_ids: list[str] = []
    """Subnets for public load balancers. Default none."""
    version: str = "1.34"
    """The Kubernetes version of the control plane. Default 1.34."""
    high_availability: bool = True
    """Three system nodes and two Karpenter replicas; one of each without. Default true."""
    public_access_cidrs: list[str] = ["0.0.0.0/0"]
    """Who may reach the public API endpoint. Default ``0.0.0.0/0``."""
    tags: dict[str, str] = {}
    """AWS tags for the cluster and what the rack creates with it."""
    system_node_type: str = "t3.large"
    """The system lane's instance type. Default ``t3.large`` (Karpenter requests 1 CPU and 1 GiB per replica)."""
    system_node_disk: int = Field(default=upstream.SEEDS_NODE_DISK_GIB, ge=upstream.SEEDS_NODE_DISK_GIB)
    """The system lane's root volume GiB, at least 20. Default 20."""
    protect: bool = True
    """Protect the cluster from ``pulumi destroy`` and replacement. Default true."""
    admin_arns: list[str] = []
    """IAM role or user ARNs given cluster admin (an access entry with ``AmazonEKSClusterAdminPolicy``,
    cluster scope), besides the cluster's creator, whose entry EKS makes itself. Default none."""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return cluster_name(v)

    @field_validator("admin_arns")
    @classmethod
    def _admin_arns(cls, v: list[str]) -> list[str]:
        for arn in v:
            problem = syntax.principal_arn_problem(arn)
            if problem:
                raise ValueError(problem)
        seen: dict[tuple[str, ...], str] = {}
        # IAM names are unique per account whatever the path (/a/ci and /b/ci are one role) and the case
        # (IAM User Guide, IAM identifiers: "names are not distinguished by case": CI and ci are one role)
        for arn in v:
            found = syntax.IAM_PRINCIPAL_ARN_RE.fullmatch(arn)
            assert found is not None
            who = (found["partition"], found["account"], found["kind"], found["name"].lower())
            if who in seen:
                raise ValueError(f"duplicate ARN '{arn}' (the same {found['kind']} as '{seen[who]}')")
            seen[who] = arn
        return v

    @field_validator("version")
    @classmethod
    def _version(cls, v: str) -> str:
        if not K8S_VERSION_RE.fullmatch(v):
            raise ValueError(f"invalid version '{v}' (must be a Kubernetes minor like 1.34)")
        status, message = version_support(v)
        if status == "ended":  # EKS would refuse the cluster after the KMS key was made
            raise ValueError(f"version '{v}': {message}")
        if int(v.split(".")[1]) < upstream.KARPENTER_MIN_K8S_MINOR:
            raise ValueError(
                f"version '{v}' is older than Karpenter supports (1.{upstream.KARPENTER_MIN_K8S_MINOR} or later)"
            )
        if int(v.split(".")[1]) > upstream.KARPENTER_MAX_K8S_MINOR:
            newest = f"1.{upstream.KARPENTER_MAX_K8S_MINOR}"
            serving = upstream.karpenter_compatibility(newest, upstream.KARPENTER_CHART.version).serving
            raise ValueError(
                f"version '{v}' is newer than any Karpenter release the rack installs supports "
                f"({newest} at most, with Karpenter {serving}; use {newest} or an older minor)"
            )
        return v

    @field_validator("vpc_id")
    @classmethod
    def _vpc(cls, v: str) -> str:
        if not VPC_ID_RE.fullmatch(v):
            raise ValueError(f"invalid vpc_id '{v}' (must look like vpc-0123456789abcdef0)")
        return v

    @field_validator("private_subnet_ids", "public_subnet_ids")
    @classmethod
    def _subnets(cls, v: list[str], info: ValidationInfo) -> list[str]:
        for subnet in v:
            if not SUBNET_ID_RE.fullmatch(subnet):
                raise ValueError(f"invalid subnet id '{subnet}' (must look like subnet-0123456789abcdef0)")
        twice = sorted({subnet for subnet in v if v.count(subnet) > 1})
        if twice:
            raise ValueError(f"duplicate subnet id '{twice[0]}'")
        if info.field_name == "private_subnet_ids":
            if len(v) < 2:
                # EKS: "Subnets specified must be in at least two different AZs"; one subnet is one zone
                raise ValueError(
                    f"at least two subnets, in two Availability Zones (EKS refuses a cluster in one zone; got {len(v)})"
                )
            if len(v) > upstream.KARPENTER_SELECTOR_TERMS_MAX:
                raise ValueError(
                    f"at most {upstream.KARPENTER_SELECTOR_TERMS_MAX} subnets (Karpenter's EC2NodeClass "
                    f"selects them by id, one term each; got {len(v)})"
                )
        return v

    @field_validator("public_access_cidrs")
    @classmethod
    def _cidrs(cls, v: list[str]) -> list[str]:
        for cidr in v:
            problem = public_cidr_problem(cidr)
            if problem:
                raise ValueError(problem)
        if not v:
            raise ValueError("at least one CIDR (the public endpoint is on)")
        if len(v) > PUBLIC_ACCESS_CIDRS_MAX:
            raise ValueError(
                f"{len(v)} CIDRs, and EKS takes at most {PUBLIC_ACCESS_CIDRS_MAX} for the public endpoint "
                f"(a fixed quota): merge neighbouring ranges into wider ones"
            )
        twice = sorted({cidr for cidr in v if v.count(cidr) > 1})
        if twice:
            raise ValueError(f"CIDR '{twice[0]}' is listed twice; keep one")
        return v

    @model_validator(mode="after")
    def _rules(self) -> "ClusterSpec":
        if set(self.private_subnet_ids) & set(self.public_subnet_ids):
            raise FieldProblem("public_subnet_ids", "a subnet cannot be both private and public")
        problem = tags_problem(self.tags)
        if problem:
            raise FieldProblem("tags", problem)
        if syntax.instance_type_problem(self.system_node_type):
            raise FieldProblem(
                "system_node_type", f"invalid node type '{self.system_node_type}' (must look like t3.large)"
            )
        try:  # the system lane is a node group: its rules apply to the type and disk given here
            self.system_lane("system")
        except SpecError as exc:
            error = exc.errors[0]
            cause = (error.get("ctx") or {}).get("error")
            where = getattr(cause, "field", None) or (str(error["loc"][0]) if error["loc"] else "")
            field = {"disk": "system_node_disk", "tags": "tags"}.get(where, "system_node_type")
            raise FieldProblem(field, error_message(error)) from None
        if instances.is_accelerated_family(self.system_node_type):
            raise FieldProblem(
                "system_node_type",
                (
                    f"node type '{self.system_node_type}' is accelerated (GPU, Neuron): the system lane would be "
                    f"tainted "
                    f"and labelled as a GPU lane, which the rack's add-ons (Karpenter, CoreDNS, metrics-server) do not "
                    f"tolerate, and would pay for accelerators nothing uses (use a general-purpose type, e.g. t3.large)"
                ),
            )
        problem = system_node_fit_problem(self.system_node_type)
        if problem:
            raise FieldProblem("system_node_type", problem)
        return self

    def system_lane(self, name: str) -> NodeGroupSpec:
        """The system lane: AL2023, labelled and tainted ``convox.io/system-node=true``, 3 nodes (1 without HA)."""
        size = 3 if self.high_availability else 1
        return NodeGroupSpec(
            instance_type=self.system_node_type,
            name=name,
            system=True,
            label=None,
            disk=self.system_node_disk,
            min_size=size,
            max_size=size,
            tags=self.tags,
        )


class KarpenterSpec(Spec):
    """Karpenter itself, installed by the rack."""

    version: str = upstream.KARPENTER_CHART.version
    """The Karpenter release (the ``karpenter`` and ``karpenter-crd`` chart version): 1.14.x or 1.15.x, one whose
    charts and notes were read upstream (``upstream.KARPENTER_RELEASES``). Default 1.14.1, the 1.14 LTS line."""
    replicas: int = 2
    """Controller replicas: 2 (1 without high availability)."""

    @field_validator("version")
    @classmethod
    def _version(cls, v: str) -> str:
        problem = karpenter_version_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("replicas")
    @classmethod
    def _replicas(cls, v: int) -> int:
        if not 1 <= v <= 10:
            raise ValueError(f"invalid Karpenter replicas '{v}' (must be 1-10)")
        return v


class RackSpec(Spec):
    """A whole rack: its pools (the default ``workload`` lane first), node groups and GPU add-ons."""

    cluster_name: str
    """The EKS cluster."""
    tags: dict[str, str] = {}
    """AWS tags for everything the rack creates in AWS: the cluster, Karpenter's resources, every node
    group (under its own tags) and the instances and volumes Karpenter launches. Default none."""
    pod_identity_agent: bool = False
    """Install the EKS Pod Identity agent add-on (Karpenter's controller authenticates through it)."""
    controller_identity: Identity = Identity.POD_IDENTITY
    """How Karpenter and the Cluster Autoscaler get AWS credentials: EKS Pod Identity, or IAM roles for
    service accounts (the cluster's IAM OIDC provider: made with the cluster the rack creates, looked up for
    an existing one)."""
    cluster_autoscaler: bool = False
    """Install the Cluster Autoscaler for the managed node groups (it needs the Pod Identity agent)."""
    metrics_server: bool = False
    """Install metrics-server (HorizontalPodAutoscalers read CPU use from it)."""
    karpenter_node_role: Optional[str] = None
    """The IAM role (name) of Karpenter's nodes. Default ``KarpenterNodeRole-<cluster_name>``."""
    pools: list[PoolSpec] = Field(min_length=1)
    """Karpenter pools, the default lane first; names are unique."""
    node_groups: list[NodeGroupSpec] = []
    """Managed node groups and build lanes; each has its ``name`` (the component name), unique."""
    node_group_role: Optional[str] = None
    """An existing IAM role (name) shared by every node group. Default: each group gets its own."""
    device_plugin: Optional[DevicePluginSpec] = None
    """The NVIDIA device plugin, when enabled."""
    gpu_observability: Optional[GpuObservabilitySpec] = None
    """dcgm-exporter, when enabled (needs the device plugin)."""
    cluster: Optional[ClusterSpec] = None
    """The EKS cluster to create; None: an existing cluster named ``cluster_name``."""
    karpenter: Optional[KarpenterSpec] = None
    """Karpenter to install; None: the cluster already runs Karpenter v1."""
    high_availability: bool = True
    """Spread the rack's own control parts: three system nodes, two Karpenter replicas."""
    max_hourly_usd: Optional[float] = None
    """The rack's budget: the most the worst cases of all its lanes together may cost an hour on demand, in
    US dollars (policy ``lane-cost-ceiling``). Default: none."""

    @field_validator("cluster_name")
    @classmethod
    def _cluster_name(cls, v: str) -> str:
        return cluster_name(v)

    @field_validator("karpenter_node_role", "node_group_role")
    @classmethod
    def _role_name(cls, v: Optional[str], info: ValidationInfo) -> Optional[str]:
        problem = v is not None and syntax.iam_role_name_problem(v)
        if problem:
            raise ValueError(f"invalid {info.field_name} '{v}' ({problem})")
        return v

    @property
    def node_role_name(self) -> str:
        return self.karpenter_node_role or upstream.karpenter_node_role_name(self.cluster_name)

    def group_tags(self, group: NodeGroupSpec) -> dict[str, str]:
        """A node group's tags: the rack's, then the group's own (which win)."""
        return {**self.tags, **group.tags}

    @model_validator(mode="after")
    def _unique(self) -> "RackSpec":
        problem = rack_tags_problem(self.tags)
        if problem:
            raise FieldProblem("tags", problem)
        problem = usd_problem(self.max_hourly_usd, "the rack's")
        if problem:
            raise FieldProblem("max_hourly_usd", problem)
        for group in self.node_groups:  # each group carries the rack's tags under its own (its canary one more)
            problem = tags_problem(self.group_tags(group), RACK_TAGS + (1 if group.canary_ami_id else 0))
            if problem:
                raise FieldProblem("tags", f"node group '{group.name}' with the rack's tags: {problem}")
        for spec_field, what, names in (
            ("pools", "karpenter nodepool name", [p.name for p in self.pools]),
            ("node_groups", "node group name", [g.name for g in self.node_groups]),
        ):
            seen: set[Optional[str]] = set()
            for name in names:
                if name in seen:
                    raise FieldProblem(spec_field, f"duplicate {what}: {name}")
                seen.add(name)
        if any(g.name is None for g in self.node_groups):
            raise FieldProblem("node_groups", "every node group of a rack needs its name")
        groups = {g.name for g in self.node_groups}
        for pool in self.pools:  # one namespace: the rack's lanes output and --allow-lane-removal name both
            if pool.name in groups:
                raise FieldProblem(
                    "pools",
                    f"{pool.subject}: name '{pool.name}' is also a node group's: the rack's "
                    f"lanes are named alike, so one would hide the other (rename the pool)",
                )
        lanes = [*(p.name for p in self.pools), *groups]
        for spec_field, lane, canary in (
            *(("pools", p.subject, p.canary_name) for p in self.pools if p.canary_ami_id),
            *(
                ("node_groups", g.subject, f"{g.name}{contract.CANARY_SUFFIX}")
                for g in self.node_groups
                if g.canary_ami_id
            ),
        ):
            if canary in lanes:
                raise FieldProblem(
                    spec_field,
                    f"{lane}: its canary '{canary}' has the name of another lane of the rack, "
                    f"so one would hide the other (rename that lane)",
                )
        if self.gpu_observability is not None and self.device_plugin is None:
            raise FieldProblem(
                "gpu_observability",
                "gpu_observability requires device_plugin (dcgm-exporter reads the GPUs the device plugin exposes)",
            )
        if (
            self.cluster_autoscaler
            and self.cluster is not None
            and upstream.cluster_autoscaler_release(self.cluster.version) is None
        ):
            raise FieldProblem(
                "cluster_autoscaler",
                (
                    f"no Cluster Autoscaler release is known for Kubernetes {self.cluster.version} (the rack knows "
                    f"{', '.join(upstream.CLUSTER_AUTOSCALER_RELEASES)}): set k8s_version to one of them, or "
                    f"cluster_autoscaler_enable: false"
                ),
            )
        if self.cluster is not None and self.karpenter is not None:
            problem = karpenter_pair_problem(self.cluster.version, self.karpenter.version)
            if problem:
                raise FieldProblem("karpenter", problem)
        if self.cluster is not None and self.cluster.name != self.cluster_name:
            raise ValueError(f"the cluster to create is named '{self.cluster.name}', not '{self.cluster_name}'")
        if self.cluster is not None and self.cluster.admin_arns:
            entries = {}
            if self.karpenter is not None:
                entries[self.node_role_name] = "the rack creates for Karpenter's nodes with an EC2_LINUX access entry"
            if self.node_group_role and self.node_groups:
                entries[self.node_group_role] = (
                    "the rack's managed node groups use, and EKS gives a managed node "
                    "group's role an access entry itself"
                )
            problem = admin_role_problem(self.cluster.admin_arns, entries)
            if problem:
                raise FieldProblem("cluster_admin_arns", problem)
        return self
