"""``Rack``: the whole rack, from a ``RackSpec``, into an existing EKS cluster or one it creates."""

from __future__ import annotations

import functools
from typing import Any, Callable, NotRequired, Optional, Required, TypedDict

import pulumi
import pulumi_aws as aws

from . import contract, lanecost
from .ami import AmiLookup
from .args import check_start, checked, documented
from .cluster import ClusterRef
from .errors import ArgumentError
from .addons import ClusterAutoscaler, ClusterAutoscalerArgs, MetricsServer, MetricsServerArgs, eks_addon
from .eks import POD_IDENTITY_AGENT, RackCluster, RackClusterArgs
from .gpu import GpuObservability, GpuObservabilityArgs, NvidiaDevicePlugin, NvidiaDevicePluginArgs
from .karpenter import KarpenterPool, KarpenterPoolArgs, canary_node_pool_spec
from .karpenter_controller import KarpenterController, KarpenterControllerArgs
from .nodegroup import NodeGroup, NodeGroupArgs
from .pack import wellknown, workloads
from .spec import NodeGroupSpec, PoolSpec, RackSpec
from .spec.rack import doubly_scaled, version_support



class RackArgs(TypedDict, total=False):
    spec: Required[RackSpec]
    """The rack: ``load_stack_config()`` or ``parse_rack_config({...})``."""
    cluster: NotRequired[ClusterRef]
    """The cluster, when the program has one already. Default: the one ``spec.cluster`` creates, or else the
    existing EKS cluster ``spec.cluster_name`` (``ClusterRef.existing`` named after the rack)."""


def _lane(kind: str, os_name: str, labels: dict[str, str], taints: list[dict[str, str]], gpu: bool) -> dict[str, Any]:
    return {"kind": kind, "os": os_name, "labels": labels, "gpu": gpu,
            "taints": [{**t, "effect": contract.effect(t["effect"])} for t in taints]}


def pool_lane(pool: PoolSpec, spec: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """A pool's lane: labels, taints, and what sizes its nodes (``workloads.size_facts``), from its NodePool
    ``spec`` (default: the pool's own)."""
    requirements, limits = lanecost.pool_sizing(pool, spec)
    lane = _lane("nodepool", pool.os, pool.node_labels(), pool.node_taints(), pool.is_gpu)
    lane.update(capacityTypes=list(pool.capacity_types), **workloads.size_facts(requirements, limits, pool.disk))
    if pool.instance_families:
        lane["instanceFamilies"] = list(pool.instance_families)
    if pool.instance_sizes:
        lane["instanceSizes"] = list(pool.instance_sizes)
    return lane


def canary_lanes(spec: RackSpec) -> dict[str, dict[str, Any]]:
    """The canary lanes of a rack's pools and node groups, by name: each its lane's facts (the same labels and
    taints, so the same pods land there) and ``canaryOf``, the lane it is the canary of."""
    lanes = {pool.canary_name: {**pool_lane(pool, canary_node_pool_spec(pool)), "canaryOf": pool.name}
             for pool in spec.pools if pool.canary_ami_id}
    lanes.update({f"{g.name}{contract.CANARY_SUFFIX}": {**group_lane(g.canary(g.name or "")), "canaryOf": g.name}
                  for g in spec.node_groups if g.canary_ami_id})
    return lanes


def group_lane(group: NodeGroupSpec) -> dict[str, Any]:
    """A node group's lane, taints in Kubernetes' spelling (``NoSchedule``), as pods tolerate them."""
    lane = _lane("nodegroup", "al2023", group.node_labels(), group.node_taints(), group.is_gpu)
    requirements = [wellknown.Requirement(wellknown.TYPE_KEY, "In", (group.instance_type,))]
    lane.update(instanceTypes=[group.instance_type], capacityTypes=[group.capacity_type],
                **workloads.size_facts(requirements, root_gib=group.disk))
    return lane


@documented
class Rack(pulumi.ComponentResource):
    """A rack: its cluster (created or existing), Karpenter (when installed), the default workload pool,
    every additional Karpenter pool, the managed node groups and the GPU tier.

    Example (the stack config's ``rack:`` parameters, as the rack program reads them)::

        rack = Rack("prod", RackArgs(spec=load_stack_config()))
        pulumi.export("lanes", rack.lanes)
    """

    cluster: ClusterRef
    created: Optional[RackCluster]
    """The cluster the rack created (``spec.cluster``), with its system lane."""
    karpenter: Optional[KarpenterController]
    pools: dict[str, KarpenterPool]
    """Karpenter pools by lane name: the pool's name (``workload``, ``gpu``), as every message names it."""
    node_groups: dict[str, NodeGroup]
    """Managed node groups and build lanes by lane name: the group's name (``<rack>-ng-<id>``,
    ``<rack>-build-<id>``), as every message names it."""
    pod_identity_agent: Optional[aws.eks.Addon]
    """The EKS Pod Identity agent add-on the rack installed (None when the cluster brings its own)."""
    cluster_autoscaler: Optional[ClusterAutoscaler]
    """The Cluster Autoscaler: it owns each managed node group's desired size between min and max."""
    metrics_server: Optional[MetricsServer]
    device_plugin: Optional[NvidiaDevicePlugin]
    gpu_observability: Optional[GpuObservability]
    node_role_arn: pulumi.Output[str]
    """The role of the nodes Karpenter launches."""
    interruption_queue_name: pulumi.Output[Optional[str]]
    lanes: pulumi.Output[dict[str, Any]]
    """Lane name -> ``kind`` (nodepool or nodegroup), ``os``, ``labels``, ``taints``, ``gpu``, what sizes its
    nodes (``arch``, ``instanceFamilies``/``instanceSizes`` or ``instanceTypes``, ``capacityTypes``,
    ``maxGpusPerNode``, the ``allocatable`` of its ``largestInstanceType``), ``ami`` (an alias or AMI type
    that follows releases, or a pinned id with its creation date) and ``worstCaseHourlyUsd`` (the most it can
    cost an hour on demand, in the stack's region: docs/cost.md): where each workload lands and fits,
    which lanes stopped receiving AMI updates, and what each can spend. A canary lane (``<lane>-canary``)
    also has ``canaryOf``."""
    worst_case_hourly_usd: pulumi.Output[Optional[float]]
    """The sum of the lanes' ``worstCaseHourlyUsd`` (docs/cost.md); None when one is unbounded or not priced."""
    lane_facts: dict[str, dict[str, Any]]
    """``lanes`` without ``ami``, known at construction: a ``Service``'s ``lanes`` (so it refuses, when it is
    built, a pod no lane can hold)."""

    def __init__(self, name: str, args: RackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        check_start("Rack", name, opts)
        super().__init__("rack:index:Rack", name, None, opts)
        args = checked(self, name, args, RackArgs)  # type: ignore[assignment]
        spec: RackSpec = args["spec"]
        child = pulumi.ResourceOptions(parent=self)
        amis = AmiLookup(pulumi.InvokeOptions(parent=self))
        lanes: dict[str, Any] = {}
        self.lane_facts = {}
        worst_cases: dict[str, Callable[[Optional[str]], Any]] = {}  # lane -> its worst case in a region (lanecost)

        self.created = None
        if "cluster" in args:
            self.cluster = args["cluster"]
        elif spec.cluster is not None:
            if RackCluster.system_lane_name(name) in {pool.name for pool in spec.pools}:  # the lanes output names both alike
                raise ArgumentError("Rack", name, "spec.pools", (
                    f"karpenter nodepool '{RackCluster.system_lane_name(name)}' has the name of the system lane of the "
                    f"cluster the rack creates (rename the pool)"))
            self.created = RackCluster(name, RackClusterArgs(spec=spec.cluster, pod_identity_agent=spec.pod_identity_agent,
                                                             ami_lookup=amis, oidc_provider=spec.controller_identity == "irsa"),
                                       opts=child)
            self.cluster = self.created.ref
            system = self.created.system_lane_spec
            lanes[system.name or ""] = self._group_lane(system, self.created.system_lane)
            worst_cases[system.name or ""] = functools.partial(lanecost.group_worst_case, system)
            self.lane_facts[system.name or ""] = group_lane(system)
        else:
            self.cluster = ClusterRef.existing(name, spec.cluster_name, opts=child)
            live = self.cluster.live
            status, message = version_support(live.version) if live is not None else ("unknown", "")
            if status == "ended":  # a cluster the rack does not own: said, not refused
                pulumi.log.warn(f"cluster '{spec.cluster_name}': {message}", resource=self)
        # the EKS Pod Identity agent of an existing cluster, when asked (a created cluster's is RackCluster's)
        self.pod_identity_agent = self.created.pod_identity_agent if self.created is not None else None
        if self.created is None and spec.pod_identity_agent:
            self.pod_identity_agent = eks_addon(f"{name}-{POD_IDENTITY_AGENT}", self.cluster, POD_IDENTITY_AGENT,
                                                tags=spec.tags, opts=child)
        # a created cluster's system lane runs the rack's controllers; in an existing cluster they go anywhere
        system: dict[str, Any] = (
            {"node_selector": contract.SYSTEM_SELECTOR, "tolerations": [contract.SYSTEM_TOLERATION]}
            if self.created is not None else {})
        system_ready: list[pulumi.Resource] = (
            [self.created.system_lane, self.created.coredns] if self.created is not None else [])

        # Karpenter itself, then every pool waits for its CRDs and controller (and is destroyed first).
        # Both also wait for CoreDNS and the Pod Identity agent, so that `pulumi destroy` deletes them
        # only after the pools and the controller: draining a Karpenter node needs the controller, which
        # resolves AWS endpoints through cluster DNS and gets its credentials through the agent.
        self.karpenter = None
        cluster_addons: list[pulumi.Resource] = [self.created.coredns] if self.created is not None else []
        if self.pod_identity_agent is not None:
            cluster_addons.append(self.pod_identity_agent)
        pools_wait: list[pulumi.Resource] = list(cluster_addons)
        if spec.karpenter is not None:
            controller_args = KarpenterControllerArgs(cluster=self.cluster, version=spec.karpenter.version,
                                                      replicas=spec.karpenter.replicas, tags=spec.tags,
                                                      identity=spec.controller_identity)
            if spec.karpenter_node_role:
                controller_args["node_role_name"] = spec.karpenter_node_role
            if self.created is not None:  # the controller runs on the system lane
                controller_args["node_selector"] = contract.SYSTEM_SELECTOR
                controller_args["tolerations"] = [contract.SYSTEM_TOLERATION]
            self.karpenter = KarpenterController(
                f"{name}-karpenter", controller_args,
                # on the system lane, with cluster DNS (the controller resolves the AWS endpoints it calls)
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=list(dict.fromkeys([*system_ready, *cluster_addons])) or None),
            )
            pools_wait += [self.karpenter.crd_chart, self.karpenter.chart]

        pool_args = KarpenterPoolArgs(cluster=self.cluster, ami_lookup=amis, tags=spec.tags)  # type: ignore[typeddict-item]
        if self.created is not None and spec.cluster is not None:
            # the rack's own cluster: its subnets and security group by id, so nothing the user owns is tagged
            pool_args["subnet_ids"] = list(spec.cluster.private_subnet_ids)
            pool_args["security_group_ids"] = [self.created.security_group_id]
        if self.karpenter is not None:
            pool_args["node_role"] = self.karpenter.node_role
        elif spec.karpenter_node_role:  # else the pools' default, KarpenterNodeRole-<cluster_name>
            pool_args["node_role"] = aws.iam.Role.get(f"{name}-karpenter-node-role", spec.karpenter_node_role, opts=child)
        pool_opts = pulumi.ResourceOptions(parent=self, depends_on=pools_wait or None)
        self.pools = {
            pool.name: KarpenterPool(f"{name}-{pool.name}", KarpenterPoolArgs(pool_args, pool=pool), opts=pool_opts)
            for pool in spec.pools
        }
        canaries = canary_lanes(spec)
        for pool in spec.pools:
            self.lane_facts[pool.name] = pool_lane(pool)
            lanes[pool.name] = self.pools[pool.name].ami.apply(lambda ami, facts=self.lane_facts[pool.name]: {**facts, "ami": ami})
            worst_cases[pool.name] = functools.partial(lanecost.pool_worst_case, pool)
            if pool.canary_ami_id:
                self.lane_facts[pool.canary_name] = canaries[pool.canary_name]
                lanes[pool.canary_name] = self.pools[pool.name].canary.apply(
                    lambda canary, facts=canaries[pool.canary_name]: {**facts, "ami": (canary or {}).get("ami")})
                worst_cases[pool.canary_name] = functools.partial(lanecost.pool_worst_case, pool,
                                                                  spec=canary_node_pool_spec(pool))

        shared_role = (
            aws.iam.Role.get(f"{name}-node-group-role", spec.node_group_role, opts=child) if spec.node_group_role else None
        )
        self.node_groups = {}
        for group in spec.node_groups:
            lane = group.name or ""
            tagged = group.model_copy(update={"tags": spec.group_tags(group)})  # checked by RackSpec
            group_args = NodeGroupArgs(group=tagged, cluster=self.cluster, rack=spec.cluster_name, ami_lookup=amis)
            if spec.cluster is not None:
                # the private subnets, as the system lane: pulumi-eks's default is every subnet of the
                # cluster, public ones included (CoreData subnetIds is public + private)
                group_args["subnet_ids"] = spec.cluster.private_subnet_ids
            if shared_role is not None:
                group_args["node_role"] = shared_role
            self.node_groups[lane] = NodeGroup(lane, group_args, opts=child)
            lanes[lane] = self._group_lane(group, self.node_groups[lane])
            worst_cases[lane] = functools.partial(lanecost.group_worst_case, group)
            self.lane_facts[lane] = group_lane(group)
            canary = self.node_groups[lane].canary
            if canary is not None:
                canary_lane = f"{lane}{contract.CANARY_SUFFIX}"
                self.lane_facts[canary_lane] = canaries[canary_lane]
                lanes[canary_lane] = canary.ami.apply(lambda ami, facts=canaries[canary_lane]: {**facts, "ami": ami})
                worst_cases[canary_lane] = functools.partial(lanecost.group_worst_case, group.canary(lane))

        # autoscaling: the Cluster Autoscaler owns the managed groups' desired sizes; metrics-server feeds HPAs
        agent = [self.pod_identity_agent] if self.pod_identity_agent is not None else []
        self.cluster_autoscaler = None
        if spec.cluster_autoscaler:
            autoscaler_args = ClusterAutoscalerArgs(cluster=self.cluster, tags=spec.tags, identity=spec.controller_identity,
                                                    **system)  # type: ignore[typeddict-item]
            if spec.cluster is not None:
                autoscaler_args["kubernetes_version"] = spec.cluster.version
            self.cluster_autoscaler = ClusterAutoscaler(
                f"{name}-cluster-autoscaler", autoscaler_args,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*system_ready, *agent] or None))
            for group, pool in doubly_scaled(spec.node_groups, spec.pools):
                pulumi.log.warn(
                    f"node group '{group.name}' can scale (min_size {group.min_size} < max_size {group.max_size}) and has "
                    f"no taint, as Karpenter pool '{pool.name}' has none: a pending pod that fits both makes the Cluster "
                    f"Autoscaler and Karpenter each launch a node for it (the spare one is removed once empty). Taint "
                    f"the group (dedicated: true), fix its size (min_size = max_size), or leave scaling to Karpenter "
                    f"(cluster_autoscaler_enable: false)", resource=self)
        self.metrics_server = None
        if spec.metrics_server:
            self.metrics_server = MetricsServer(
                f"{name}-metrics-server",
                MetricsServerArgs(cluster=self.cluster, replicas=2 if spec.high_availability else 1, **system),  # type: ignore[typeddict-item]
                opts=pulumi.ResourceOptions(parent=self, depends_on=system_ready or None))

        self.device_plugin = None
        if spec.device_plugin is not None:
            self.device_plugin = NvidiaDevicePlugin(
                f"{name}-nvidia-device-plugin",
                NvidiaDevicePluginArgs(cluster=self.cluster, time_slicing_replicas=spec.device_plugin.time_slicing_replicas),
                opts=child,
            )
        self.gpu_observability = None
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
        self.lanes = pulumi.Output.all(aws.get_region_output(opts=pulumi.InvokeOptions(parent=self)).region,
                                       pulumi.Output.all(**lanes) if lanes else {}).apply(
            lambda both: lanecost.priced(both[1], both[0], worst_cases))
        self.worst_case_hourly_usd = self.lanes.apply(lanecost.rack_worst_case)
        self.register_outputs({
            "clusterName": self.cluster.name,
            "endpoint": self.cluster.endpoint,
            "kubeconfig": self.cluster.kubeconfig,
            "nodeRoleArn": self.node_role_arn,
            "interruptionQueueName": self.interruption_queue_name,
            "lanes": self.lanes,
            "worstCaseHourlyUsd": self.worst_case_hourly_usd,
            **({"maxHourlyUsd": spec.max_hourly_usd} if spec.max_hourly_usd is not None else {}),  # for lane-cost-ceiling
            "nodePools": sorted(self.pools),
            "nodeGroups": sorted(self.node_groups),
            "clusterAutoscaler": self.cluster_autoscaler is not None,
            "metricsServer": self.metrics_server is not None,
        })

    @staticmethod
    def _group_lane(group: NodeGroupSpec, component: NodeGroup) -> pulumi.Output[dict[str, Any]]:
        return component.ami.apply(lambda ami: {**group_lane(group), "ami": ami})

    def _existing_node_role_arn(self, spec: RackSpec) -> pulumi.Output[str]:
        """The ARN of the node role an existing Karpenter uses, from its name (the getting-started role has path /)."""
        invoke = pulumi.InvokeOptions(parent=self)
        partition = aws.get_partition_output(opts=invoke).partition
        account = aws.get_caller_identity_output(opts=invoke).account_id
        role = spec.node_role_name
        return pulumi.Output.all(partition, account).apply(lambda a: f"arn:{a[0]}:iam::{a[1]}:role/{role}")
