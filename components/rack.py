"""``Rack``: the whole rack, from a ``RackSpec``, into an existing EKS cluster or one it creates."""

import functools
from typing import Any, Callable, NotRequired, Optional, Required, TypedDict, cast

import pulumi
import pulumi_aws as aws

from . import clock, contract, lanecost
from .ami import AmiLookup
from .args import check_start, checked, documented, hosted
from .cluster import ClusterRef
from .errors import ArgumentError, ConfigError
from .addons import ClusterAutoscaler, ClusterAutoscalerArgs, MetricsServer, MetricsServerArgs, eks_addon
from .eks import POD_IDENTITY_AGENT, RackCluster, RackClusterArgs
from .gpu import GpuObservability, GpuObservabilityArgs, NvidiaDevicePlugin, NvidiaDevicePluginArgs
from .karpenter import KarpenterPool, KarpenterPoolArgs, canary_node_pool_spec
from .lane import AmiRef, CapacityType, Lane, LaneKind, NodeOs, lane_taints
from .karpenter_controller import KarpenterController, KarpenterControllerArgs
from .nodegroup import NodeGroup, NodeGroupArgs
from .facts import osfamily, tables, wellknown
from .pack import cost
from .pack.laneconfig import size_facts
from .spec import NodeGroupSpec, PoolSpec, RackSpec
from .spec.rack import doubly_scaled, version_support


class RackArgs(TypedDict, total=False):
    spec: Required[RackSpec]
    """The rack: its cluster, Karpenter, pools, node groups and GPU add-ons. In Python, ``load_stack_config()`` or
    ``parse_rack_config({...})`` reads it from the stack config."""
    cluster: NotRequired[ClusterRef]
    """The cluster, when the program has one already. Default: the one ``spec.cluster`` creates, or else the
    existing EKS cluster ``spec.cluster_name``, read by name (nothing created). In Python, a ``ClusterRef``."""


def pool_lane(pool: PoolSpec, spec: Optional[dict[str, Any]] = None) -> Lane:
    """A pool's lane: labels, taints, and what sizes its nodes (``laneconfig.size_facts``), from its NodePool
    ``spec`` (default: the pool's own)."""
    requirements, limits = lanecost.pool_sizing(pool, spec)
    lane = Lane(
        kind=LaneKind.NODEPOOL,
        os=pool.os,
        labels=pool.node_labels(),
        gpu=pool.is_gpu,
        taints=lane_taints(pool.node_taints()),
        capacityTypes=[CapacityType(c) for c in pool.capacity_types],
    )
    lane.update(size_facts(requirements, limits, pool.disk))
    if pool.instance_families:
        lane["instanceFamilies"] = list(pool.instance_families)
    if pool.instance_sizes:
        lane["instanceSizes"] = list(pool.instance_sizes)
    if pool.capacity_reservation_ids:
        lane["capacityReservationIds"] = list(pool.capacity_reservation_ids)
    return lane


def canary_lanes(spec: RackSpec) -> dict[str, Lane]:
    """The canary lanes of a rack's pools and node groups, by name: each its lane's facts (the same labels and
    taints, so the same pods land there) and ``canaryOf``, the lane it is the canary of."""
    lanes = {
        pool.canary_name: Lane(**pool_lane(pool, canary_node_pool_spec(pool)), canaryOf=pool.name)
        for pool in spec.pools
        if pool.canary_ami_id
    }
    lanes.update(
        {
            f"{g.name}{contract.CANARY_SUFFIX}": Lane(**group_lane(g.canary(g.name or "")), canaryOf=g.name or "")
            for g in spec.node_groups
            if g.canary_ami_id
        }
    )
    return lanes


def group_lane(group: NodeGroupSpec) -> Lane:
    """A node group's lane, taints in Kubernetes' spelling (``NoSchedule``), as pods tolerate them."""
    requirements = [wellknown.Requirement(wellknown.TYPE_KEY, "In", (group.instance_type,))]
    lane = Lane(
        kind=LaneKind.NODEGROUP,
        os=NodeOs(osfamily.AL2023.name),
        labels=group.node_labels(),
        gpu=group.is_gpu,
        taints=lane_taints(group.node_taints()),
        instanceTypes=[group.instance_type],
        capacityTypes=[CapacityType(group.capacity_type)],
    )
    lane.update(size_facts(requirements, root_gib=group.disk))
    if group.capacity_reservation_id:
        lane["capacityReservationIds"] = [group.capacity_reservation_id]
    return lane


def _reserved_nodes(
    rack: str, facts: Lane, reads: dict[str, aws.ec2.CapacityReservation], opts: pulumi.ResourceOptions
) -> Optional[pulumi.Output[int]]:
    """The instances a lane's reservations hold together, read from EC2 (``CapacityReservation.get``: the provider's
    Read, ``DescribeCapacityReservations`` by id, for an ODCR and a Capacity Block alike); each reservation read once
    a rack, and none is managed: the stack never creates, changes or cancels it. None: a lane without reservations."""
    ids = facts.get("capacityReservationIds") or []
    for reservation_id in ids:
        if reservation_id not in reads:
            reads[reservation_id] = aws.ec2.CapacityReservation.get(
                f"{rack}-{reservation_id}", reservation_id, opts=opts
            )
    return pulumi.Output.all(*[reads[i].instance_count for i in ids]).apply(sum) if ids else None


def _priced_lane(
    region: pulumi.Output[str],
    ami: pulumi.Output[AmiRef],
    facts: Lane,
    worst_case: Callable[[Optional[str]], lanecost.Priced],
    reserved: Optional[pulumi.Output[int]] = None,
) -> pulumi.Output[Lane]:
    """A lane of the ``lanes`` output: its facts, what it boots (known once the AMI is read) and what it can cost
    an hour in the stack's region. Built in one step per lane: each step that returns the lane makes the SDK walk
    all of it again (``Output.from_input``), and a step over all the lanes at once walked every lane once more
    (1 s of the preview of 1,000 pools)."""

    def priced(region: str, found: AmiRef, nodes: Optional[int]) -> Lane:
        worst, rollout = worst_case(region)
        lane = Lane(**facts, ami=found)
        if nodes is not None:
            lane["reservedNodes"] = nodes
        lane[cost.WORST_OUTPUT], lane[cost.ROLLOUT_OUTPUT] = worst.usd, rollout.usd
        return lane

    return pulumi.Output.all(region, ami, reserved).apply(lambda got: priced(got[0], got[1], got[2]))


@documented
class Rack(pulumi.ComponentResource):
    """A rack: its cluster (created or existing), Karpenter (when installed), the default workload pool,
    every additional Karpenter pool, the managed node groups and the GPU tier.

    Example (the stack config's ``rack:`` parameters, as the rack program reads them)::

        rack = Rack("prod", RackArgs(spec=load_stack_config()))
        pulumi.export("lanes", rack.lanes)
    """

    cluster_name: pulumi.Output[str]
    """The EKS cluster's name."""
    endpoint: pulumi.Output[str]
    """The cluster's API server endpoint."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (``aws eks get-token``, the stack's region and profile), as a secret."""
    node_role_arn: pulumi.Output[str]
    """The role of the nodes Karpenter launches."""
    interruption_queue_name: pulumi.Output[Optional[str]]
    """The SQS queue of Karpenter's interruption events (none when the rack does not install Karpenter)."""
    node_pool_names: pulumi.Output[list[str]]
    """The Karpenter pools' names, sorted."""
    node_group_names: pulumi.Output[list[str]]
    """The managed node groups' names, sorted."""
    lanes: pulumi.Output[dict[str, Lane]]
    """Lane name -> ``kind`` (nodepool or nodegroup), ``os``, ``labels``, ``taints``, ``gpu``, what sizes its
    nodes (``arch``, ``instanceFamilies``/``instanceSizes`` or ``instanceTypes``, ``capacityTypes``,
    ``maxGpusPerNode``, the ``allocatable`` of its ``largestInstanceType``), ``ami`` (an alias or AMI type
    that follows releases, or a pinned id with its creation date) and ``worstCaseHourlyUsd`` (the most it can
    cost an hour on demand, in the stack's region: docs/cost.md): where each workload lands and fits,
    which lanes stopped receiving AMI updates, and what each can spend. A canary lane (``<lane>-canary``)
    also has ``canaryOf``; a reserved lane ``capacityReservationIds`` and ``reservedNodes`` (the instances its
    reservations hold, read from EC2)."""
    worst_case_hourly_usd: pulumi.Output[Optional[float]]
    """The sum of the lanes' ``worstCaseHourlyUsd`` and the EKS control plane's ``control_plane_hourly_usd``
    (docs/cost.md); None when a lane is unbounded or not priced."""
    control_plane_hourly_usd: pulumi.Output[float]
    """The cluster's EKS control plane an hour: $0.10 in standard support, $0.60 in extended support (or when its
    version's support is not known or has ended); ``control_plane_price`` says which."""
    control_plane_price: pulumi.Output[str]
    """Which price ``control_plane_hourly_usd`` is: ``EKS standard support``, ``EKS extended support``, ..."""
    max_hourly_usd: Optional[pulumi.Output[float]]
    """The rack's budget in US dollars per hour (``spec.max_hourly_usd``), held by the policy lane-cost-ceiling;
    unset when the rack has none."""

    def __init__(self, name: str, args: RackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("Rack", name, opts)
        token, opts = hosted("Rack", opts)
        super().__init__(token, name, None, opts)
        args = checked(self, name, args, RackArgs)
        spec: RackSpec = args["spec"]
        child = pulumi.ResourceOptions(parent=self)
        for line in tables.stale(clock.today()):  # an advisory: the rack still previews and deploys
            pulumi.log.warn(f"rack '{name}': {line}", resource=self)
        amis = AmiLookup(pulumi.InvokeOptions(parent=self))
        lanes: dict[str, Any] = {}
        self.lane_facts: dict[str, Lane] = {}
        """``lanes`` without ``ami``, known at construction: a ``Service``'s ``lanes`` (so it refuses, when it is
        built, a pod no lane can hold)."""
        region = aws.get_region_output(
            opts=pulumi.InvokeOptions(parent=self)
        ).region  # what the lanes cost is priced in

        self.created: Optional[RackCluster] = None
        """The cluster the rack created (``spec.cluster``), with its system lane."""
        self.cluster: ClusterRef
        """Which cluster: for every component that goes into it."""
        support = "unknown"  # a cluster given as data: its version is not known here, so the ceiling is taken
        if "cluster" in args:
            self.cluster = args["cluster"]
            live = self.cluster.live
            support = version_support(live.version)[0] if live is not None else "unknown"
        elif spec.cluster is not None:
            if RackCluster.system_lane_for(name) in {
                pool.name for pool in spec.pools
            }:  # the lanes output names both alike
                raise ArgumentError(
                    "Rack",
                    name,
                    "spec.pools",
                    (
                        f"karpenter nodepool '{RackCluster.system_lane_for(name)}' has the name of the system lane of "
                        f"the "
                        f"cluster the rack creates (rename the pool)"
                    ),
                )
            self.created = RackCluster(
                name,
                cast(
                    RackClusterArgs,
                    {
                        "spec": spec.cluster,
                        "ami_lookup": amis,
                        "pod_identity_agent": spec.pod_identity_agent,
                        "oidc_provider": spec.controller_identity == "irsa",
                    },
                ),
                opts=child,
            )
            self.cluster = self.created.ref
            support = version_support(spec.cluster.version)[0]
            system_lane = self.created.system_lane_spec
            lanes[system_lane.name or ""] = _priced_lane(
                region,
                self.created.system_lane.ami,
                group_lane(system_lane),
                functools.partial(lanecost.group_worst_case, system_lane, subnets=len(spec.cluster.private_subnet_ids)),
            )
            self.lane_facts[system_lane.name or ""] = group_lane(system_lane)
        else:
            self.cluster = ClusterRef.existing(name, spec.cluster_name, opts=child)
            live = self.cluster.live
            status, message = version_support(live.version) if live is not None else ("unknown", "")
            support = status
            if status == "ended":  # a cluster the rack does not own: said, not refused
                pulumi.log.warn(f"cluster '{spec.cluster_name}': {message}", resource=self)
        # the EKS Pod Identity agent of an existing cluster, when asked (a created cluster's is RackCluster's)
        self.pod_identity_agent: Optional[aws.eks.Addon] = (
            self.created.pod_identity_agent if self.created is not None else None
        )
        if self.created is None and spec.pod_identity_agent:
            self.pod_identity_agent = eks_addon(
                f"{name}-{POD_IDENTITY_AGENT}", self.cluster, POD_IDENTITY_AGENT, tags=spec.tags, opts=child
            )
        # a created cluster's system lane runs the rack's controllers; in an existing cluster they go anywhere
        # node_selector and tolerations, for ClusterAutoscalerArgs and MetricsServerArgs alike (a dict: mypy types
        # no TypedDict that is part of both)
        system: dict[str, Any] = (
            {"node_selector": contract.SYSTEM_SELECTOR, "tolerations": [contract.SYSTEM_TOLERATION]}
            if self.created is not None
            else {}
        )
        system_ready: list[pulumi.Resource] = (
            [self.created.system_lane, self.created.coredns] if self.created is not None else []
        )

        # Karpenter itself, then every pool waits for its CRDs and controller (and is destroyed first).
        # Both also wait for CoreDNS and the Pod Identity agent, so that `pulumi destroy` deletes them
        # only after the pools and the controller: draining a Karpenter node needs the controller, which
        # resolves AWS endpoints through cluster DNS and gets its credentials through the agent.
        self.karpenter: Optional[KarpenterController] = None
        cluster_addons: list[pulumi.Resource] = [self.created.coredns] if self.created is not None else []
        if self.pod_identity_agent is not None:
            cluster_addons.append(self.pod_identity_agent)
        pools_wait: list[pulumi.Resource] = list(cluster_addons)
        if spec.karpenter is not None:
            controller_args = KarpenterControllerArgs(
                cluster=self.cluster,
                version=spec.karpenter.version,
                replicas=spec.karpenter.replicas,
                tags=spec.tags,
                identity=spec.controller_identity,
            )
            if spec.karpenter_node_role:
                controller_args["node_role_name"] = spec.karpenter_node_role
            if self.created is not None:  # the controller runs on the system lane
                controller_args["node_selector"] = contract.SYSTEM_SELECTOR
                controller_args["tolerations"] = [contract.SYSTEM_TOLERATION]
            self.karpenter = KarpenterController(
                f"{name}-karpenter",
                controller_args,
                # on the system lane, with cluster DNS (the controller resolves the AWS endpoints it calls)
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=list(dict.fromkeys([*system_ready, *cluster_addons])) or None
                ),
            )
            pools_wait += [self.karpenter.crd_chart, self.karpenter.chart]

        # ami_lookup: a Python-only argument (PYTHON_ONLY), not a field of the schema's KarpenterPoolArgs
        pool_args = KarpenterPoolArgs(cluster=self.cluster, ami_lookup=amis, tags=spec.tags)  # type: ignore[typeddict-item]
        if self.created is not None and spec.cluster is not None:
            # the rack's own cluster: its subnets and security group by id, so nothing the user owns is tagged
            pool_args["subnet_ids"] = list(spec.cluster.private_subnet_ids)
            pool_args["security_group_ids"] = [self.created.security_group_id]
        if self.karpenter is not None:
            pool_args["node_role"] = self.karpenter.node_role
        elif spec.karpenter_node_role:  # else the pools' default, KarpenterNodeRole-<cluster_name>
            pool_args["node_role"] = aws.iam.Role.get(
                f"{name}-karpenter-node-role", spec.karpenter_node_role, opts=child
            )
        pool_opts = pulumi.ResourceOptions(parent=self, depends_on=pools_wait or None)
        # each lane is checked against its pinned AMI as it is built: a lane refused is named and the others
        # still built, so that every refusal of the stack's config comes out in one run, each on its line
        refusals: list[str] = []
        self.pools: dict[str, KarpenterPool] = {}
        for pool in spec.pools:
            try:
                self.pools[pool.name] = KarpenterPool(
                    f"{name}-{pool.name}", cast(KarpenterPoolArgs, {**pool_args, "pool": pool}), opts=pool_opts
                )
            except ConfigError as exc:
                refusals += [line for line in str(exc).splitlines() if line not in refusals]
        canaries = canary_lanes(spec)
        reservations: dict[str, aws.ec2.CapacityReservation] = {}  # read once a rack (``_reserved_nodes``)
        for pool in (p for p in spec.pools if p.name in self.pools):
            self.lane_facts[pool.name] = pool_lane(pool)
            lanes[pool.name] = _priced_lane(
                region,
                self.pools[pool.name].ami,
                self.lane_facts[pool.name],
                functools.partial(lanecost.pool_worst_case, pool),
                _reserved_nodes(name, self.lane_facts[pool.name], reservations, child),
            )
            pool_canary = self.pools[pool.name].canary
            if pool_canary is not None:
                self.lane_facts[pool.canary_name] = canaries[pool.canary_name]
                lanes[pool.canary_name] = _priced_lane(
                    region,
                    pool_canary.apply(lambda canary: canary["ami"]),
                    canaries[pool.canary_name],
                    functools.partial(lanecost.pool_worst_case, pool, spec=canary_node_pool_spec(pool)),
                )

        shared_role = (
            aws.iam.Role.get(f"{name}-node-group-role", spec.node_group_role, opts=child)
            if spec.node_group_role
            else None
        )
        self.node_groups: dict[str, NodeGroup] = {}
        """Managed node groups and build lanes by lane name: the group's name (``<rack>-ng-<id>``,
        ``<rack>-build-<id>``), as every message names it."""
        for group in spec.node_groups:
            lane = group.name or ""
            tagged = group.model_copy(update={"tags": spec.group_tags(group)})  # checked by RackSpec
            group_args = cast(
                NodeGroupArgs, {"group": tagged, "cluster": self.cluster, "rack": spec.cluster_name, "ami_lookup": amis}
            )
            if spec.cluster is not None:
                # the private subnets, as the system lane: pulumi-eks's default is every subnet of the
                # cluster, public ones included (CoreData subnetIds is public + private)
                group_args["subnet_ids"] = spec.cluster.private_subnet_ids
            if shared_role is not None:
                group_args["node_role"] = shared_role
            try:
                self.node_groups[lane] = NodeGroup(lane, group_args, opts=child)
            except ConfigError as exc:
                refusals += [line for line in str(exc).splitlines() if line not in refusals]
                continue
            subnets = len(spec.cluster.private_subnet_ids) if spec.cluster is not None else None  # else: not known
            lanes[lane] = _priced_lane(
                region,
                self.node_groups[lane].ami,
                group_lane(group),
                functools.partial(lanecost.group_worst_case, group, subnets=subnets),
                _reserved_nodes(name, group_lane(group), reservations, child),
            )
            self.lane_facts[lane] = group_lane(group)
            canary = self.node_groups[lane].canary
            if canary is not None:
                canary_lane = f"{lane}{contract.CANARY_SUFFIX}"
                self.lane_facts[canary_lane] = canaries[canary_lane]
                lanes[canary_lane] = _priced_lane(
                    region,
                    canary.ami,
                    canaries[canary_lane],
                    functools.partial(lanecost.group_worst_case, group.canary(lane), subnets=subnets),
                )

        if refusals:
            raise ConfigError("\n".join(refusals))

        # autoscaling: the Cluster Autoscaler owns the managed groups' desired sizes; metrics-server feeds HPAs
        agent = [self.pod_identity_agent] if self.pod_identity_agent is not None else []
        self.cluster_autoscaler: Optional[ClusterAutoscaler] = None
        """The Cluster Autoscaler: it owns each managed node group's desired size between min and max."""
        if spec.cluster_autoscaler:
            autoscaler_args = ClusterAutoscalerArgs(
                cluster=self.cluster,
                tags=spec.tags,
                identity=spec.controller_identity,
                **system,  # type: ignore[typeddict-item]  # system: see above
            )
            if spec.cluster is not None:
                autoscaler_args["kubernetes_version"] = spec.cluster.version
            self.cluster_autoscaler = ClusterAutoscaler(
                f"{name}-cluster-autoscaler",
                autoscaler_args,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*system_ready, *agent] or None),
            )
            for group, pool, resource in doubly_scaled(spec.node_groups, spec.pools):
                fits = (
                    (
                        f"and a pod that requests {resource} tolerates its taints, as it does Karpenter pool "
                        f"'{pool.name}''s (EKS's ExtendedResourceToleration gives it {resource}:NoSchedule): a pending "
                        f"one that fits both"
                    )
                    if resource
                    else (f"and has no taint, as Karpenter pool '{pool.name}' has none: a pending pod that fits both")
                )
                pulumi.log.warn(
                    f"node group '{group.name}' can scale (min_size {group.min_size} < max_size {group.max_size}) "
                    f"{fits} "
                    f"makes the Cluster Autoscaler and Karpenter each launch a node for it (the spare one is removed "
                    f"once empty). Taint the group{' or the pool' if resource else ''} (dedicated: true), fix its size "
                    f"(min_size = max_size), or leave scaling to Karpenter (cluster_autoscaler_enable: false)",
                    resource=self,
                )
        self.metrics_server: Optional[MetricsServer] = None
        if spec.metrics_server:
            self.metrics_server = MetricsServer(
                f"{name}-metrics-server",
                MetricsServerArgs(cluster=self.cluster, replicas=2 if spec.high_availability else 1, **system),  # type: ignore[typeddict-item]  # system: see above
                opts=pulumi.ResourceOptions(parent=self, depends_on=system_ready or None),
            )

        self.device_plugin: Optional[NvidiaDevicePlugin] = None
        if spec.device_plugin is not None:
            self.device_plugin = NvidiaDevicePlugin(
                f"{name}-nvidia-device-plugin",
                NvidiaDevicePluginArgs(
                    cluster=self.cluster, time_slicing_replicas=spec.device_plugin.time_slicing_replicas
                ),
                opts=child,
            )
        self.gpu_observability: Optional[GpuObservability] = None
        if spec.gpu_observability is not None:
            self.gpu_observability = GpuObservability(
                f"{name}-gpu-observability",
                GpuObservabilityArgs(
                    cluster=self.cluster,
                    version=spec.gpu_observability.version,
                    service_monitor=spec.gpu_observability.service_monitor,
                ),
                opts=child,
            )

        if self.karpenter is not None:
            self.node_role_arn = self.karpenter.node_role_arn
            self.interruption_queue_name = self.karpenter.interruption_queue_name
        else:
            self.node_role_arn = self._existing_node_role_arn(spec)
            self.interruption_queue_name = pulumi.Output.from_input(None)
        self.lanes = pulumi.Output.all(**lanes) if lanes else pulumi.Output.from_input(cast(dict[str, Lane], {}))
        control_plane, price = cost.control_plane(support)
        self.control_plane_hourly_usd = pulumi.Output.from_input(control_plane)
        self.control_plane_price = pulumi.Output.from_input(price)
        self.worst_case_hourly_usd = self.lanes.apply(
            functools.partial(lanecost.rack_worst_case, control_plane=control_plane)
        )
        self.max_hourly_usd = None if spec.max_hourly_usd is None else pulumi.Output.from_input(spec.max_hourly_usd)
        self.cluster_name = self.cluster.name
        # ClusterRef declares endpoint optional (the provider's schema derives from it: given as data, a cluster
        # may leave it out), yet every ClusterRef holds one
        self.endpoint = pulumi.Output.from_input(self.cluster.endpoint)  # type: ignore[arg-type]
        self.kubeconfig = self.cluster.kubeconfig
        self.node_pool_names = pulumi.Output.from_input(sorted(self.pools))
        self.node_group_names = pulumi.Output.from_input(sorted(self.node_groups))
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "nodeRoleArn": self.node_role_arn,
                "interruptionQueueName": self.interruption_queue_name,
                "lanes": self.lanes,
                cost.WORST_OUTPUT: self.worst_case_hourly_usd,
                cost.CONTROL_PLANE_OUTPUT: self.control_plane_hourly_usd,  # in worstCaseHourlyUsd; read by the pack
                cost.CONTROL_PLANE_PRICE_OUTPUT: self.control_plane_price,
                **(
                    {cost.BUDGET_OUTPUT: self.max_hourly_usd} if self.max_hourly_usd is not None else {}
                ),  # for lane-cost-ceiling
                "nodePoolNames": self.node_pool_names,
                "nodeGroupNames": self.node_group_names,
                # the names as they were registered before the package was hosted (readers of a stack's state)
                "nodePools": sorted(self.pools),
                "nodeGroups": sorted(self.node_groups),
                "clusterAutoscaler": self.cluster_autoscaler is not None,
                "metricsServer": self.metrics_server is not None,
            }
        )

    def _existing_node_role_arn(self, spec: RackSpec) -> pulumi.Output[str]:
        """The ARN of the node role an existing Karpenter uses, from its name (the getting-started role has path /)."""
        invoke = pulumi.InvokeOptions(parent=self)
        partition = aws.get_partition_output(opts=invoke).partition
        account = aws.get_caller_identity_output(opts=invoke).account_id
        role = spec.node_role_name
        return pulumi.Output.all(partition, account).apply(lambda a: f"arn:{a[0]}:iam::{a[1]}:role/{role}")
