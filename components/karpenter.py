"""``KarpenterPool``: one Karpenter v1 EC2NodeClass plus the NodePool that uses it, and its canary.

A pool with ``canary_ami_id`` gets a second EC2NodeClass and NodePool, ``<pool>-canary``, on the candidate
AMI: the pool's requirements, labels, taints and disk, a weight one above the pool's, and limits sized for
``canary_nodes`` nodes. Karpenter orders NodePools by weight, highest first (NodePool CRD v1.14.1,
``spec.weight``), so the pool's pods land on the canary until its limits are reached, then on the pool.

Within one scheduling pass Karpenter subtracts from a NodePool's remaining limits, for each NodeClaim it
makes, the largest capacity among the claim's instance types (kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/provisioning/scheduling/scheduler.go``, ``subtractMax``); an instance type's capacity has
no ``nodes``, so ``limits.nodes`` holds only between passes (one pass made 101 NodeClaims, karpenter#2915).
The canary's cpu, memory and GPU limits are therefore ``canary_nodes`` times the largest type it can launch
(or the pool's, when tighter): what Karpenter counts within a pass. ``limits.nodes`` stays, for between passes.
"""

from typing import Any, Callable, Mapping, NotRequired, Optional, Required, TypedDict, Union, cast

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from . import contract, syntax
from .ami import AmiLookup
from .args import check_start, checked, documented, hosted, inherited_depends_on, is_later
from .cluster import ClusterRef
from .errors import ArgumentError
from .lane import AmiRef, LaneTaint, lane_taints
from .facts import instances, osfamily, upstream, wellknown
from .pack import cost, fit, rules
from .spec import PoolSpec
from .spec.tags import pool_tags_problem


class KarpenterPoolArgs(TypedDict, total=False):
    pool: Required[PoolSpec]
    """The pool: its name names the EC2NodeClass and the NodePool."""
    cluster: Required[ClusterRef]
    """The cluster: its name finds subnets and security groups (``karpenter.sh/discovery``) unless
    ``subnet_ids``/``security_group_ids`` are given; its Kubernetes provider applies the objects."""
    subnet_ids: NotRequired[pulumi.Input[list[pulumi.Input[str]]]]
    """The nodes' subnets, selected by id (1-30). Default: the subnets tagged ``karpenter.sh/discovery: <cluster>``."""
    security_group_ids: NotRequired[pulumi.Input[list[pulumi.Input[str]]]]
    """The nodes' security groups, selected by id (1-30). Default: the one tagged ``karpenter.sh/discovery: <cluster>``.
    """
    node_role: NotRequired[pulumi.Input[str]]
    """The nodes' IAM role: its name or its ARN (in Python also the ``aws.iam.Role``). Default: the cluster's
    ``node_role_arn``, else the role named ``KarpenterNodeRole-<cluster name>``."""
    tags: NotRequired[Mapping[str, str]]
    """AWS tags for the instances and volumes Karpenter launches for the pool. Default none."""


RULES = {
    "subnet_ids": lambda ids: syntax.ec2_ids_problem(list(ids), "subnet", unknown=is_later),
    "security_group_ids": lambda ids: syntax.ec2_ids_problem(list(ids), "security group", unknown=is_later),
    "node_role": lambda role: None if isinstance(role, aws.iam.Role) else syntax.role_problem(role),
}
"""What the EC2NodeClass and IAM take (``syntax``), checked on each argument's known value."""
PYTHON_ONLY = {"ami_lookup": AmiLookup}
"""``ami_lookup``: a shared AMI look-up, so an AMI pinned by many pools is read once (default: a private one)."""
ALSO = {"node_role": (aws.iam.Role,)}


def role_name(role: Union[aws.iam.Role, pulumi.Input[str]]) -> pulumi.Output[str]:
    """An IAM role's name, from the role or from its ARN (``arn:aws:iam::<account>:role/<path/>name``)."""
    if isinstance(role, aws.iam.Role):
        name: pulumi.Output[str] = role.name
        return name
    return pulumi.Output.from_input(role).apply(lambda arn: arn.rsplit("/", 1)[-1])


def _ebs(pool: PoolSpec, size_gib: int, volume_type: Optional[str] = None) -> dict[str, Any]:
    ebs: dict[str, Any] = {
        "volumeSize": f"{size_gib}Gi",
        "volumeType": volume_type or pool.volume_type,
        "encrypted": True,
        "deleteOnTermination": True,
    }
    if volume_type is None:
        if pool.volume_iops is not None:
            ebs["iops"] = pool.volume_iops
        if pool.volume_throughput is not None:
            ebs["throughput"] = pool.volume_throughput
    return ebs


def selector_terms(ids: Optional[pulumi.Input[list[Any]]], cluster_name: pulumi.Input[str]) -> Any:
    """EC2NodeClass selector terms: one ``id`` term per id when ids are given (the EC2NodeClass CRD
    takes ``id`` alone in a term, and ORs the terms), else the ``karpenter.sh/discovery`` tag term."""
    if ids is None:
        return [{"tags": {upstream.DISCOVERY_TAG: cluster_name}}]
    if isinstance(ids, (list, tuple)):  # one term per id, each id known or not
        return [{"id": i} for i in ids]
    return pulumi.Output.from_input(cast(pulumi.Output[list[Any]], ids)).apply(lambda given: [{"id": i} for i in given])


def node_class_spec(
    pool: PoolSpec,
    cluster_name: pulumi.Input[str],
    node_role: pulumi.Input[str],
    root_device: str = osfamily.AL2023.os_device,
    tags: Optional[Mapping[str, str]] = None,
    subnet_ids: Optional[pulumi.Input[list[str]]] = None,
    security_group_ids: Optional[pulumi.Input[list[Any]]] = None,
    lane: Optional[str] = None,
) -> dict[str, Any]:
    """The EC2NodeClass spec of a pool (Karpenter ``karpenter.k8s.aws/v1``).

    ``root_device`` is the pinned AMI's root device (AL2023's ``/dev/xvda`` otherwise). ``tags`` go on
    what Karpenter launches (instances, volumes, network interfaces), under the pool's own two tags.
    ``subnet_ids`` and ``security_group_ids`` select by id; without them, by the discovery tag. ``lane``
    names the class in its ``convox.io/nodepool`` tag (default: the pool; a canary's class names the canary).
    """
    family = pool.os_family
    selector = [{"id": pool.ami_id}] if pool.ami_id and family.pinned_ami else [{"alias": pool.alias}]
    if family.data_is_root:
        volumes = [{"deviceName": root_device, "ebs": _ebs(pool, pool.disk)}]
    else:
        # Mappings replace Karpenter's defaults: the OS volume (its default size, gp3) and the data volume both go here.
        volumes = [
            {
                "deviceName": device,
                "ebs": _ebs(pool, pool.disk) if device == family.data_device else _ebs(pool, size, "gp3"),
            }
            for device, size in family.block_devices
        ]
    return {
        "amiFamily": family.family,
        "amiSelectorTerms": selector,
        "role": node_role,
        "subnetSelectorTerms": selector_terms(subnet_ids, cluster_name),
        "securityGroupSelectorTerms": selector_terms(security_group_ids, cluster_name),
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": 1,
            "httpTokens": "required",
        },
        "blockDeviceMappings": volumes,
        "tags": {**(tags or {}), upstream.DISCOVERY_TAG: cluster_name, contract.NODEPOOL_LABEL: lane or pool.name},
        # the reservations by id, one term each (the CRD takes ``id`` alone in its term, and ORs the terms)
        **(
            {"capacityReservationSelectorTerms": [{"id": i} for i in pool.capacity_reservation_ids]}
            if pool.capacity_reservation_ids
            else {}
        ),
    }


CANARY_TERMINATION_GRACE = "5m"
"""A canary's ``terminationGracePeriod``: how long Karpenter lets a canary node drain (PodDisruptionBudgets and
``karpenter.sh/do-not-disrupt`` respected) before it deletes the pods left and the instance (NodePool CRD
v1.14.1: without one it waits for ever). The canary's EC2NodeClass keeps a finalizer until the class's
NodeClaims are gone (aws/karpenter-provider-aws ``pkg/controllers/nodeclass/controller.go``), and
pulumi-kubernetes waits 10 minutes for it: 5 minutes of drain leave room for the instances to terminate."""
BACKGROUND_DELETION = {upstream.DELETION_PROPAGATION_ANNOTATION: "background"}
"""On every NodePool the rack writes: its deletion does not wait for its nodes to drain (``upstream``)."""

NO_ACCELERATORS = ("karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-accelerator-count")
"""Karpenter's well-known instance labels for GPU and accelerator counts (karpenter-provider-aws pkg/apis/v1/labels.go).
"""


def _requirement(key: str, values: list[str]) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


def node_pool_spec(pool: PoolSpec) -> dict[str, Any]:
    """The NodePool spec of a pool (Karpenter ``karpenter.sh/v1``)."""
    requirements = [
        _requirement(wellknown.OS_KEY, ["linux"]),
        _requirement(wellknown.ARCH_KEY, pool.arch),
        _requirement(wellknown.CAPACITY_TYPE_KEY, pool.capacity_types),
    ]
    if pool.instance_families:
        requirements.append(_requirement(wellknown.FAMILY_KEY, pool.instance_families))
    if pool.instance_sizes:
        requirements.append(_requirement(wellknown.KARPENTER_PREFIX + "instance-size", pool.instance_sizes))
    if pool.instance_types:
        requirements.append(_requirement(wellknown.TYPE_KEY, pool.instance_types))
    if not pool.offers_accelerators:
        # Karpenter labels an instance type with a GPU or accelerator count only when it has one, and
        # treats a label an instance type cannot fill as absent: DoesNotExist keeps every GPU, Neuron
        # and other accelerated instance out of a pool that is not an accelerated lane (a pod asking for
        # nvidia.com/gpu must not get a GPU node on Bottlerocket, or without the GPU lane's taint).
        requirements += [{"key": key, "operator": "DoesNotExist"} for key in NO_ACCELERATORS]

    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.name},
        "requirements": requirements,
        "expireAfter": pool.node_expiry,
    }
    taints = pool.node_taints()
    if taints:
        template_spec["taints"] = taints
    spec: dict[str, Any] = {
        "template": {"metadata": {"labels": pool.node_labels()}, "spec": template_spec},
        "limits": {
            "cpu": str(pool.cpu_limit),
            "memory": f"{pool.memory_limit_gb}Gi",
            **({pool.gpu_resource: str(pool.gpu_limit)} if pool.gpu_limit is not None else {}),
        },
        "disruption": {
            "consolidationPolicy": pool.consolidation_policy,
            "consolidateAfter": pool.consolidate_after,
            "budgets": [{"nodes": pool.disruption_budget_nodes}],
        },
    }
    if pool.weight is not None:
        spec["weight"] = pool.weight
    return spec


def canary_limits(pool: PoolSpec, requirements: list[dict[str, Any]]) -> dict[str, str]:
    """A canary's ``limits``: per resource Karpenter counts within a scheduling pass (cpu, memory, each GPU
    resource), ``canary_nodes`` times the most one node of a type it can launch has (its capacity as Karpenter
    estimates it before a launch, ``fit.limit_capacity``), or the pool's own limit when that is tighter; and
    ``nodes: canary_nodes``. A type the instance table does not size is not counted (a node of it larger than
    these limits is one the canary does not launch)."""
    limits: dict[str, str] = dict(node_pool_spec(pool)["limits"])
    types, _ = wellknown.launchable(tuple(wellknown.read(requirements)))
    n = pool.canary_nodes
    if types:
        most = [max(fit.limit_capacity(t)[d] for t in types) for d in range(len(fit.LIMITED))]
        room = dict(zip(fit.LIMITED, most))
        if n * room[fit.CPU] < pool.cpu_limit:
            limits[fit.CPU] = str(int(n * room[fit.CPU]))
        mib = int(n * room[fit.MEMORY]) // fit.MIB
        if mib < pool.memory_limit_gb * 1024:
            limits[fit.MEMORY] = f"{mib}Mi"
        for resource in (contract.NVIDIA_GPU, contract.AMD_GPU):
            gpus = int(n * room[resource])
            if gpus and (resource not in limits or gpus < float(limits[resource])):
                limits[resource] = str(gpus)
    limits[fit.NODES] = str(n)
    return limits


def canary_node_pool_spec(pool: PoolSpec) -> dict[str, Any]:
    """The NodePool spec of a pool's canary: the pool's, on the canary's class, a weight one above the pool's
    (none counts as 0), limits for ``canary_nodes`` nodes (``canary_limits``), and a bounded
    ``terminationGracePeriod`` (``CANARY_TERMINATION_GRACE``), so removing the canary finishes."""
    spec = node_pool_spec(pool)
    spec["template"]["spec"]["nodeClassRef"]["name"] = pool.canary_name
    spec["template"]["spec"]["terminationGracePeriod"] = CANARY_TERMINATION_GRACE
    spec["weight"] = (pool.weight or 0) + 1
    spec["limits"] = canary_limits(pool, spec["template"]["spec"]["requirements"])
    return spec


def _boot(
    pool: PoolSpec, subject: str, lookup: Callable[[], AmiLookup], where: Callable[[str], str]
) -> tuple[AmiRef, str, dict[str, str]]:
    """What a pool boots, checked (a refusal named ``where`` names the field): (its ``ami`` output, the root
    device, the annotations recording the AMI's facts)."""
    if not pool.ami_id:
        return {"alias": pool.alias or ""}, pool.os_family.os_device, {}
    facts = lookup().check(
        subject, pool.ami_id, pool.arch, pool.disk, instances.nvidia_families(pool.families), where=where
    )
    annotations = (
        {contract.ROOT_SNAPSHOT_ANNOTATION: rules.gib(facts.root_snapshot_gib)}
        if facts.root_snapshot_gib is not None
        else {}
    )
    ami: AmiRef = {"id": pool.ami_id, "name": facts.name, "created": facts.creation_date}
    return ami, facts.root_device_name or pool.os_family.os_device, annotations


class PoolCanary(TypedDict):
    """A pool's canary lane (``canary_ami_id``): where the pool's pods try a candidate AMI first."""

    nodePoolName: str
    """The canary's NodePool and EC2NodeClass: ``<pool>-canary``."""
    ami: AmiRef
    """The candidate AMI it boots (pinned: ``{"id", "name", "created"}``)."""
    nodes: int
    """The most nodes it launches (``canary_nodes``: the NodePool's ``limits.nodes``)."""


@documented
class KarpenterPool(pulumi.ComponentResource):
    """A Karpenter pool: an EC2NodeClass and a NodePool, both named after the pool.

    Example::

        cluster = ClusterRef.existing("prod", "prod-rack")
        ml = KarpenterPool("ml", KarpenterPoolArgs(
            pool=PoolSpec(name="ml", instance_families=["g6"], ami_id="ami-0a1b2c3d4e5f60718", disk=120,
                          dedicated=True),
            cluster=cluster))
        pulumi.export("mlNodePool", ml.node_pool_name)
    """

    node_class_name: pulumi.Output[str]
    """The EC2NodeClass's ``metadata.name``."""
    node_pool_name: pulumi.Output[str]
    """The NodePool's ``metadata.name``: what ``convox.io/nodepool`` selects."""
    labels: pulumi.Output[dict[str, str]]
    """The labels every node of the pool carries."""
    taints: pulumi.Output[list[LaneTaint]]
    """The taints every node of the pool carries (``key``, ``value``, ``effect``)."""
    ami: pulumi.Output[AmiRef]
    """What the pool boots: ``{"alias": ...}``, or a pinned ``{"id", "name", "created"}`` (which gets no updates)."""
    max_hourly_usd: Optional[pulumi.Output[float]]
    """The pool's budget in US dollars per hour (``pool.max_hourly_usd``), held by the policy lane-cost-ceiling;
    unset when the pool has none."""
    canary: Optional[pulumi.Output[PoolCanary]]
    """The canary lane (``canary_ami_id``): its NodePool's name, the candidate AMI it boots and its node limit;
    unset without one."""

    def __init__(self, name: str, args: KarpenterPoolArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("KarpenterPool", name, opts)
        token, opts = hosted("KarpenterPool", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, KarpenterPoolArgs, RULES, PYTHON_ONLY, ALSO)
        pool: PoolSpec = args["pool"]
        cluster: ClusterRef = args["cluster"]
        tags = dict(args.get("tags") or {})
        problem = pool_tags_problem(tags)
        if problem:
            raise ArgumentError("KarpenterPool", name, "tags", problem)
        names = [pool.name, *([pool.canary_name] if pool.canary_ami_id else [])]
        cluster.claim(
            "KarpenterPool",
            name,
            {f"{kind} {n}": "give the pool another name" for n in names for kind in ("NodePool", "EC2NodeClass")},
        )
        node_role = (
            role_name(args["node_role"])
            if "node_role" in args
            else role_name(cluster.node_role_arn)
            if cluster.node_role_arn is not None
            else cluster.name.apply(upstream.karpenter_node_role_name)
        )
        shared = cast(Optional[AmiLookup], args.get("ami_lookup"))
        found: list[AmiLookup] = [shared] if shared is not None else []

        def lookup() -> AmiLookup:
            if not found:
                found.append(AmiLookup(pulumi.InvokeOptions(parent=self)))
            return found[0]

        ami, root_device, annotations = _boot(pool, pool.subject, lookup, pool.where)
        metadata: dict[str, Any] = {"name": pool.name}
        if annotations:
            metadata["annotations"] = annotations
        # what the pool waits for (Karpenter's charts, when the rack installs them), its objects wait for:
        # applied before the CRDs and the controller exist they would be refused, and destroyed after
        # the controller, their finalizers would strand instances
        waits = inherited_depends_on(opts)
        self.node_class: k8s.apiextensions.CustomResource = k8s.apiextensions.CustomResource(
            f"{name}-nodeclass",
            api_version="karpenter.k8s.aws/v1",
            kind="EC2NodeClass",
            metadata=metadata,
            spec=node_class_spec(
                pool,
                cluster.name,
                node_role,
                root_device,
                tags,
                cast(Any, args.get("subnet_ids")),
                args.get("security_group_ids"),
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=waits),
        )
        self.node_pool: k8s.apiextensions.CustomResource = k8s.apiextensions.CustomResource(
            f"{name}-nodepool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": pool.name, "annotations": dict(BACKGROUND_DELETION)},
            spec=node_pool_spec(pool),
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[self.node_class, *waits]),
        )
        self.canary_node_class: Optional[k8s.apiextensions.CustomResource] = None
        """The canary's EC2NodeClass (None without ``canary_ami_id``)."""
        self.canary_node_pool: Optional[k8s.apiextensions.CustomResource] = None
        """The canary's NodePool (None without ``canary_ami_id``)."""
        canary: Optional[PoolCanary] = None
        if pool.canary_ami_id:
            candidate = pool.candidate()
            canary_ami, canary_root, canary_annotations = _boot(
                candidate,
                rules.pool_subject(pool.canary_name),
                lookup,
                lambda field: pool.where("canary_ami_id" if field == "ami_id" else field),
            )
            marked = {
                contract.CANARY_OF: pool.name
            }  # the lane guard lets a canary go; the soak gate counts it as the pool
            self.canary_node_class = k8s.apiextensions.CustomResource(
                f"{name}-canary-nodeclass",
                api_version="karpenter.k8s.aws/v1",
                kind="EC2NodeClass",
                metadata={"name": pool.canary_name, "annotations": {**canary_annotations, **marked}},
                spec=node_class_spec(
                    candidate,
                    cluster.name,
                    node_role,
                    canary_root,
                    tags,
                    cast(Any, args.get("subnet_ids")),
                    args.get("security_group_ids"),
                    lane=pool.canary_name,
                ),
                opts=pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=waits),
            )
            self.canary_node_pool = k8s.apiextensions.CustomResource(
                f"{name}-canary-nodepool",
                api_version="karpenter.sh/v1",
                kind="NodePool",
                metadata={"name": pool.canary_name, "annotations": {**marked, **BACKGROUND_DELETION}},
                spec=canary_node_pool_spec(pool),
                opts=pulumi.ResourceOptions(
                    parent=self, provider=cluster.provider, depends_on=[self.canary_node_class, *waits]
                ),
            )
            canary = {"nodePoolName": pool.canary_name, "ami": canary_ami, "nodes": pool.canary_nodes}
        self.node_class_name = pulumi.Output.from_input(pool.name)
        self.node_pool_name = pulumi.Output.from_input(pool.name)
        self.labels = pulumi.Output.from_input(pool.node_labels())
        self.taints = pulumi.Output.from_input(lane_taints(pool.node_taints()))
        self.ami = pulumi.Output.from_input(ami)
        self.max_hourly_usd = None if pool.max_hourly_usd is None else pulumi.Output.from_input(pool.max_hourly_usd)
        self.canary = pulumi.Output.from_input(canary) if canary is not None else None
        self.register_outputs(
            {
                "nodeClassName": self.node_class_name,
                "nodePoolName": self.node_pool_name,
                "labels": self.labels,
                "taints": self.taints,
                "ami": self.ami,
                **({"canary": self.canary} if self.canary is not None else {}),
                **(
                    {cost.BUDGET_OUTPUT: self.max_hourly_usd} if self.max_hourly_usd is not None else {}
                ),  # for lane-cost-ceiling
            }
        )
