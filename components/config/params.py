"""The seeds' (Convox rack) parameters, in their own names and value shapes, translated into specs.

``RackParams`` accepts every ``rack:`` parameter an existing rack uses, with the seeds' defaults:
values may be YAML or the seeds' JSON strings, list-like fields take comma-separated strings
(``g5,g6``), labels take ``k=v,k2=v2``, taints ``key=value:Effect``. Unknown keys are errors.
``parse_rack_config`` validates them and returns the ``RackSpec`` the ``Rack`` takes; every error
names its key path (``rack:additional_karpenter_nodepools_config[0].ami_id``) and the bad value.
The rules themselves belong to the specs (``spec/``); the keys that set each spec field are in ``keys``.
"""

from __future__ import annotations

import re
import typing
from typing import Annotated, Any, Callable, Literal, Mapping, Optional, TypeVar, cast

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .. import contract
from ..errors import ConfigError
from ..identity import Identity
from ..inputs import closest
from ..lane import NodeOs
from ..facts import instances, osfamily, upstream, wellknown
from ..spec import ClusterSpec, DevicePluginSpec, GpuObservabilitySpec, KarpenterSpec, NodeGroupSpec, PoolSpec, RackSpec
from ..spec.base import (
    ClusterName,
    FieldProblem,
    Spec,
    SpecError,
    error_loc,
    error_message,
    key_path,
    strict_scalars,
    rendered,
    shown,
)
from ..spec.nodegroup import node_disk_problem
from ..spec.rack import karpenter_version_problem
from ..spec.pool import ConsolidationPolicy, Taint
from . import keys
from .errors import field_of, problems
from .keys import NAMESPACE, KeyTable
from .shapes import CsvList, KeyValues, KeyProblems, Tags, Taints, json_list, parse_kv, parse_taints, split_csv

RESERVED_POOL_NAMES = frozenset({"workload", "build", "default", "system"})


# ---- list items: one spec each, every problem at its own path -----------------------------------------


def _validate_items(items: list[Any], table: KeyTable, build: Callable[[int, dict[str, Any]], Any]) -> list[Any]:
    """Each item: only the table's keys, then ``build`` (which builds its spec); all problems together,
    each at ``[n]`` or below it."""
    specs, found = [], []
    for n, item in enumerate(items):
        if not isinstance(item, Mapping):
            found.append((f"[{n}]", f"expected a mapping (got {rendered(item)})"))
            continue
        unknown = [k for k in item if k not in table.item_keys]
        if unknown:
            found += [(f"[{n}].{k}", "unknown field" + table.meant(str(k))) for k in unknown]
            continue
        try:
            specs.append(build(n, {k: v for k, v in item.items() if not _unset(k, v, table)}))
        except SpecError as exc:
            found += problems(exc, table, f"[{n}]")
        except FieldProblem as exc:
            found.append((f"[{n}].{exc.at}", str(exc)))
        except ValueError as exc:  # a value in the seeds' shapes that does not parse
            found.append((f"[{n}]", str(exc)))
    if found:
        raise KeyProblems(found)
    return specs


def _unset(key: str, value: Any, table: KeyTable) -> bool:
    """Whether an item's key is as if it were not written: ``null`` for a key whose field has a default and takes no
    none (the JSON an item reaches the program as has ``null`` for a key left empty), so ``canary_nodes: null`` is
    its default 1, as ``ami_id: null`` is none. Where none is a value of the field (``label: null``, no label) the
    ``null`` is kept; a key that needs a value keeps it too, and is refused."""
    spec_field = table.field_of(key) or key
    found = table.spec.model_fields.get(spec_field)
    return (
        value is None
        and found is not None
        and not found.is_required()
        and type(None) not in typing.get_args(found.annotation)
    )


SpecT = TypeVar("SpecT", bound=Spec)
DiskT = TypeVar("DiskT")


def sourced(spec: SpecT, table: KeyTable, at: str = "", keys_of: Mapping[str, str] = {}) -> SpecT:
    """``spec``, knowing the stack-config key path of each field (``at`` is a list item's path; ``keys_of``
    full paths of fields the rack set for it): a problem found after it is built names the key the user wrote."""
    prefix = f"{NAMESPACE}:{at}." if at else f"{NAMESPACE}:"
    spec._keys = {name: keys_of.get(name) or prefix + table.key(name) for name in type(spec).model_fields}
    return spec


def _disk_key(karpenter_node_disk: Any) -> str:
    """The key that sets a Karpenter pool's disk when the pool sets none (``effective_disk``)."""
    return f"{NAMESPACE}:node_disk" if karpenter_node_disk == 0 else f"{NAMESPACE}:karpenter_node_disk"


def _pool_shapes(item: dict[str, Any]) -> dict[str, Any]:
    shapes: dict[str, Callable[[Any], Any]] = {
        key: split_csv
        for key in ("instance_families", "instance_sizes", "capacity_types", "arch", "capacity_reservation_ids")
    }
    for key, shape in {**shapes, "labels": parse_kv, "taints": parse_taints}.items():
        if key in item:
            try:
                item[key] = shape(item[key])
            except FieldProblem:
                raise
            except ValueError as exc:  # the item's own key names the problem
                raise FieldProblem(key, str(exc)) from None
    return item


def effective_disk(karpenter_node_disk: DiskT, node_disk: DiskT) -> DiskT:
    """Convox's ``karpenter_effective_disk``: ``karpenter_node_disk`` when it is not 0, else ``node_disk``."""
    return node_disk if karpenter_node_disk == 0 else karpenter_node_disk


def _pools(items: list[Any], info: ValidationInfo) -> list[PoolSpec]:
    """The additional pools, AL2023 with the rack's alias (whose problems the ``workload`` pool reports)."""
    alias = info.data.get("karpenter_ami_alias", osfamily.AL2023.alias)
    disk = effective_disk(
        info.data.get("karpenter_node_disk", 0), info.data.get("node_disk", upstream.SEEDS_NODE_DISK_GIB)
    )

    def build(n: int, item: dict[str, Any]) -> PoolSpec:
        name = item.get("name")
        if isinstance(name, str) and name in RESERVED_POOL_NAMES:
            raise FieldProblem("name", f"karpenter nodepool name '{name}' is reserved")
        rack_set: dict[str, str] = {"os": f"{NAMESPACE}:karpenter_node_os"}
        if (
            not isinstance(item.get("disk"), bool) and item.get("disk") in (None, 0, "0") and isinstance(disk, int)
        ):  # Convox: a pool's disk 0 is the rack's
            item["disk"] = disk
            rack_set["disk"] = _disk_key(info.data.get("karpenter_node_disk", 0))
        at = f"additional_karpenter_nodepools_config[{n}]"
        try:
            return sourced(PoolSpec(**_pool_shapes(item), os=NodeOs.AL2023, ami_alias=alias), keys.POOL, at, rack_set)
        except SpecError as exc:  # the alias is the rack's: the workload pool names it under its own key
            exc.errors = [e for e in exc.errors if field_of(e) != "ami_alias"]
            if exc.errors:
                raise
            return sourced(PoolSpec(**_pool_shapes(item), os=NodeOs.AL2023), keys.POOL, at, rack_set)

    return _validate_items(items, keys.POOL, build)


GROUP_ID_RE = re.compile(r"[0-9A-Za-z_-]{1,16}")


def group_id_problem(value: Any) -> Optional[str]:
    """What is wrong with a node group ``id``: it names the group (``<rack>-ng-<id>``) and, through
    that, its IAM role and EKS node group, whose names take letters, digits, '-' and '_' only."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not GROUP_ID_RE.fullmatch(str(value)):
        return f"invalid id {rendered(value)} (a number, or 1-16 letters, digits, '-' or '_')"
    return None


def _groups(kind: str, defaults: Mapping[str, Any]) -> Callable[[list[Any], ValidationInfo], list[NodeGroupSpec]]:
    """A validator for the node-group list ``kind`` (``ng``/``build``): ids, names, defaults, then a spec each."""

    def validate(items: list[Any], info: ValidationInfo) -> list[NodeGroupSpec]:
        ids = [item.get("id") if isinstance(item, Mapping) else None for item in items]
        bad = [(f"[{n}].id", problem) for n, i in enumerate(ids) if i is not None and (problem := group_id_problem(i))]
        if bad:
            raise KeyProblems(bad)
        if any(i is not None for i in ids) and any(i is None for i in ids):
            raise ValueError("some node groups missing id property")
        seen: set[str] = set()
        for i in ids:
            if i is not None and str(i) in seen:  # 1 and "1" name the same group
                raise ValueError(f"duplicate node group id is found: {i}")
            seen.add(str(i))
        rack = (info.context or {}).get("rack", "rack")
        disk = info.data.get("node_disk", upstream.SEEDS_NODE_DISK_GIB)

        def build(n: int, item: dict[str, Any]) -> NodeGroupSpec:
            group_id = item.pop("id", None)
            group_id = n if group_id is None else group_id
            fields = {**defaults, **{keys.NODE_GROUP.field_of(k) or k: v for k, v in item.items()}}
            fields["instance_type"] = fields.get("instance_type") or ""
            rack_set = {}
            if fields.get("disk") is None:
                fields["disk"] = disk
                rack_set["disk"] = f"{NAMESPACE}:node_disk"
            if "tags" in fields:
                fields["tags"] = (
                    parse_kv(fields["tags"], lambda _: "invalid 'tags'") if fields["tags"] is not None else {}
                )
            spec = NodeGroupSpec(**{**fields, "name": f"{rack}-{kind}-{group_id}", "build": kind == "build"})
            return sourced(
                spec, keys.NODE_GROUP, f"additional_{'node' if kind == 'ng' else 'build'}_groups_config[{n}]", rack_set
            )

        return _validate_items(items, keys.NODE_GROUP, build)

    return validate


# ---- the rack's parameters ------------------------------------------------------------------------------


class RackParams(BaseModel):
    """The ``rack`` namespace of a stack config, in the seeds' words (keys without ``rack:``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    _spec: Optional[RackSpec] = PrivateAttr(default=None)
    _partition: str = PrivateAttr(default="aws")
    """The partition of the stack's ``aws:region`` (given as the validation context's ``region``)."""

    @field_validator("*", mode="before")
    @classmethod
    def _numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None or value == "null":
            # YAML's null reaches the program as the text "null" (the CLI passes it as JSON): no value at all
            required = info.field_name is not None and cls.model_fields[info.field_name].is_required()
            raise ValueError(
                "null (no value): write a value" + ("" if required else ", or remove the key for the default")
            )
        return strict_scalars(cls, value, info)

    cluster_name: ClusterName
    """The EKS cluster (required): the one to use, or the name of the one to create."""
    cluster_mode: Literal["existing", "create"] = "existing"
    """``existing``: the rack goes into the EKS cluster ``cluster_name``. ``create``: the rack creates it (pulumi-eks)
    in your VPC. Default ``existing``."""
    vpc_id: Optional[str] = None
    """``create``: the VPC to create the cluster in (bring your own network)."""
    private_subnets_ids: CsvList = []
    """``create`` (required): the subnets for the nodes, in at least two Availability Zones; Karpenter selects them by
    id (untagged)."""
    public_subnets_ids: CsvList = []
    """``create``: subnets for public load balancers. Default none."""
    k8s_version: str = "1.34"
    """``create``: the cluster's Kubernetes version. Default 1.34."""
    high_availability: bool = True
    """Three system nodes and two Karpenter replicas (one of each when false). Default true."""
    eks_api_server_public_access_cidrs: CsvList = ["0.0.0.0/0"]
    """``create``: who may reach the cluster's public endpoint (the private one is on too). Default ``0.0.0.0/0``."""
    tags: Tags = {}
    """AWS tags for everything the rack creates in AWS, including what Karpenter launches (a node
    group's own tags win). Karpenter's own keys and ``name``/``rack`` are refused. Default none."""
    protect: bool = True
    """``create``: protect the cluster from ``pulumi destroy`` and replacement. Default true."""
    cluster_admin_arns: CsvList = []
    """``create``: IAM role or user ARNs (paths allowed, not STS assumed-role ARNs) given cluster admin through an EKS
    access entry with ``AmazonEKSClusterAdminPolicy``. Leave out the identity that creates the cluster: EKS gives it an
    entry itself. Default none."""
    cluster_autoscaler_enable: Optional[bool] = None
    """The Cluster Autoscaler for the managed node groups (it owns their desired size between ``min_size`` and
    ``max_size``). Default true when a node group has ``min_size < max_size`` and the rack creates the cluster; with
    ``existing``, false, and required (true or false) when the rack installs Karpenter there and a group can scale: the
    rack cannot see whether the cluster already runs one."""
    metrics_server_enable: Optional[bool] = None
    """metrics-server (the metrics API that services' ``scale.targets`` autoscalers read). Default true with ``create``;
    with ``existing``, set true if the cluster has none."""
    node_type: str = "t3.large"
    """The system lane's instance type (``create``), not an accelerated one. Default ``t3.large``: Karpenter requests 1
    CPU and 1 GiB per replica."""
    karpenter_version: Optional[str] = None
    """The Karpenter release to install: 1.14.x or 1.15.x, one whose charts and notes the rack read upstream (1.14.0,
    1.14.1, 1.15.0; others are refused, with the reason). Judged with the cluster's Kubernetes minor against Karpenter's
    compatibility matrix: Kubernetes 1.37 needs 1.15.0. Default 1.14.1 (the 1.14 long-term-support line)."""
    karpenter_install: Optional[bool] = None
    """Install Karpenter (its IAM, interruption queue and charts; ``karpenter_version``). Default true with ``create``
    (where false is refused: a new cluster has no Karpenter for the rack's lanes), false with ``existing``."""
    karpenter_enabled: bool = True
    """Convox's switch: every lane of this rack is a Karpenter or managed lane, so it must stay true."""
    karpenter_auth_mode: Optional[bool] = None
    """Convox's switch for access entries; this rack's Karpenter needs them (true), and creates clusters with them."""
    pod_identity_agent_enable: Optional[bool] = None
    """Install the EKS Pod Identity agent add-on (its version follows the cluster's). Default true with ``create`` and
    ``controller_identity: pod_identity``; with ``existing``, set true to install it (leave it out when the cluster has
    the add-on). Karpenter under Pod Identity needs it: false with Karpenter installed is refused."""
    controller_identity: Optional[Literal["pod_identity", "irsa"]] = None
    """How Karpenter and the Cluster Autoscaler get AWS credentials: ``pod_identity`` (EKS Pod Identity associations) or
    ``irsa`` (IAM roles for service accounts: each role trusts the cluster's IAM OIDC provider for its one service
    account; the rack creates the provider with the cluster, and an existing cluster must have one). Default ``irsa`` in
    the China regions, where EKS Pod Identity is not offered, ``pod_identity`` elsewhere."""
    build_node_enabled: bool = False
    """Convox's Karpenter ``build`` pool (AL2023, ``dedicated=build:NoSchedule``). Default false."""
    build_node_type: CsvList = []
    """The build pool's instance types: exactly these (not the other sizes of their families); the pool takes their
    architecture. Default: any non-accelerated amd64 type."""
    node_role_name: Optional[str] = None
    """Karpenter's node role. Default ``KarpenterNodeRole-<cluster_name>``."""

    karpenter_node_os: str = osfamily.AL2023.name
    """The default ``workload`` lane's OS: ``al2023`` or ``bottlerocket`` (case-insensitive). Default ``al2023``."""
    karpenter_instance_families: CsvList = []
    """Instance families of the default lane. Default: any."""
    karpenter_instance_sizes: CsvList = []
    """Instance sizes of the default lane. Default: any."""
    karpenter_arch: CsvList = []
    """``amd64``, ``arm64``. Default (or empty): the architecture of ``node_type``, as in Convox (``amd64`` for
    ``t3.large``)."""
    karpenter_capacity_types: CsvList = ["on-demand"]
    """``on-demand``, ``spot``. Default ``on-demand``."""
    karpenter_cpu_limit: int = 100
    """CPU limit of the default lane (cores, positive). Default 100."""
    karpenter_memory_limit_gb: int = 400
    """Memory limit of the default lane (GiB, positive). Default 400."""
    karpenter_max_hourly_usd: Optional[float] = None
    """The default lane's budget: the most its worst case may cost an hour on demand, in US dollars (policy
    ``lane-cost-ceiling``). Default: none."""
    karpenter_consolidation_enabled: bool = True
    """``false`` means ``WhenEmpty``. Default true."""
    karpenter_consolidate_after: str = "30s"
    """``30s``, ``5m``, ``1h``. Default ``30s``."""
    karpenter_node_expiry: str = "720h"
    """Hours like ``720h``, or ``Never``. Default ``720h``."""
    karpenter_disruption_budget_nodes: str = "10%"
    """A percentage or a count. Default ``10%``."""
    node_disk: int = upstream.SEEDS_NODE_DISK_GIB
    """Root volume GiB of a node group that sets no ``disk``, and of the Karpenter pools when
    ``karpenter_node_disk`` is 0; at least 20. Default 20."""
    karpenter_node_disk: int = 0
    """Root volume GiB of the default lane (Bottlerocket: the data volume), and of every pool that sets no
    ``disk`` (or 0); 0 means ``node_disk``, as in Convox. Default 0."""
    karpenter_node_volume_type: str = "gp3"
    """gp2, gp3, io1, io2. Default ``gp3``."""
    karpenter_node_labels: KeyValues = {}
    """Extra labels of the default lane. Default none."""
    karpenter_node_taints: Taints = []
    """Extra taints of the default lane. Default none."""
    karpenter_ami_alias: str = osfamily.AL2023.alias
    """AL2023 alias of every AL2023 pool: ``al2023@latest`` or ``al2023@vYYYYMMDD``. Default ``al2023@latest``."""
    additional_karpenter_nodepools_config: Annotated[list[PoolSpec], BeforeValidator(json_list)] = []
    """More Karpenter pools (always AL2023); see the pool fields below. Default none."""

    node_group_role_name: Optional[str] = None
    """An existing IAM role (name) for every managed node group. Default: each group gets its own role."""
    additional_node_groups_config: Annotated[list[NodeGroupSpec], BeforeValidator(json_list)] = []
    """EKS managed node groups (always AL2023); see the node group fields below. Default none."""
    additional_build_groups_config: Annotated[list[NodeGroupSpec], BeforeValidator(json_list)] = []
    """Build lanes: node group fields, ``min_size`` 0, ``label`` ``custom-build``. Default none."""
    nvidia_device_plugin_enable: bool = False
    """The NVIDIA device plugin on every AL2023 GPU lane. Default false."""
    nvidia_device_time_slicing_replicas: int = 0
    """Share each GPU this many ways (time-slicing) when greater than 1; 0 or 1 shares none. Default 0."""
    gpu_observability_enable: bool = False
    """dcgm-exporter on every GPU lane; needs ``nvidia_device_plugin_enable``. Default false."""
    gpu_observability_chart_version: str = upstream.DCGM_EXPORTER.version
    """The dcgm-exporter chart version. Default 4.8.2."""
    gpu_observability_service_monitor: bool = False
    """The chart's ServiceMonitor; only when the cluster has the monitoring.coreos.com CRDs. Default false."""
    max_hourly_usd: Optional[float] = None
    """The rack's budget: the most the worst cases of all its lanes together may cost an hour on demand, in US dollars
    (policy ``lane-cost-ceiling``; [cost](cost.md)). Default: none."""

    @field_validator("karpenter_node_os", mode="before")
    @classmethod
    def _os(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v  # the seeds take it in any case

    @field_validator(
        "additional_karpenter_nodepools_config",
        "additional_node_groups_config",
        "additional_build_groups_config",
        mode="wrap",
    )
    @classmethod
    def _lists(cls, value: Any, handler: Any, info: ValidationInfo) -> list[Any]:
        """A list of pools or node groups (YAML, or the seeds' JSON text): a spec per item, every problem at its
        path."""
        items = json_list(value)
        if not isinstance(items, list):
            refused: list[Any] = handler(items)  # not a list: pydantic's list validation refuses it
            return refused
        if info.field_name == "additional_karpenter_nodepools_config":
            return _pools(items, info)
        if info.field_name == "additional_build_groups_config":
            return _groups("build", {"min_size": 0, "label": "custom-build"})(items, info)
        return _groups("ng", {})(items, info)

    @field_validator("karpenter_version")
    @classmethod
    def _karpenter_version(cls, v: Optional[str]) -> Optional[str]:
        problem = v is not None and karpenter_version_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("node_disk")
    @classmethod
    def _node_disk(cls, v: int) -> int:
        problem = node_disk_problem(v)  # the node-group rule, for the default of groups that may not exist
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _rack(self, info: ValidationInfo) -> "RackParams":
        """The whole ``RackSpec``, built once here; each part's problems are named by the keys that set it."""
        region = (info.context or {}).get("region")
        self._partition = upstream.partition_of(region) if isinstance(region, str) else "aws"
        self._mode_rules()
        found: list[tuple[str, str]] = []
        disk_key = {"disk": _disk_key(self.karpenter_node_disk)}
        workload = self._part(
            found, keys.WORKLOAD_POOL, lambda: sourced(self.workload_pool(), keys.WORKLOAD_POOL, keys_of=disk_key)
        )
        if self.karpenter_node_disk == 0:  # the default lane's disk is node_disk's: its problems are that key's
            found[:] = [("node_disk" if key == "karpenter_node_disk" else key, message) for key, message in found]
        cluster = self._part(found, keys.CLUSTER, self.cluster_spec) if self.cluster_mode == "create" else None
        build = (
            self._part(found, keys.BUILD_POOL, lambda: sourced(self.build_pool(), keys.BUILD_POOL, keys_of=disk_key))
            if self.build_node_enabled
            else None
        )
        # the add-ons' settings are checked whether or not they are on: a bad value is never silently kept
        plugin = self._part(
            found,
            keys.DEVICE_PLUGIN,
            lambda: DevicePluginSpec(time_slicing_replicas=self.nvidia_device_time_slicing_replicas or 1),
        )  # Convox: 0 or 1 shares none
        observability = self._part(
            found,
            keys.GPU_OBSERVABILITY,
            lambda: GpuObservabilitySpec(
                version=self.gpu_observability_chart_version, service_monitor=self.gpu_observability_service_monitor
            ),
        )
        for key, switch in (
            ("nvidia_device_time_slicing_replicas", "nvidia_device_plugin_enable"),
            ("gpu_observability_chart_version", "gpu_observability_enable"),
            ("gpu_observability_service_monitor", "gpu_observability_enable"),
        ):
            unused = key in self.model_fields_set and not (
                key == "nvidia_device_time_slicing_replicas" and self.nvidia_device_time_slicing_replicas in (0, 1)
            )
            if unused and not getattr(self, switch) and not any(k == key for k, _ in found):
                found.append((key, f"{key} needs {switch}: true"))  # a valid setting, never used
        if found:
            raise KeyProblems(found)
        self._spec = self._part(
            found,
            keys.RACK,
            lambda: RackSpec(
                cluster_name=self.cluster_name,
                tags=self.tags,
                karpenter_node_role=self.node_role_name,
                pools=[workload, *self.additional_karpenter_nodepools_config, *([build] if build else [])],
                cluster=cluster,
                karpenter=KarpenterSpec(
                    version=self.karpenter_version or upstream.KARPENTER_CHART.version,
                    replicas=2 if self.high_availability else 1,
                )
                if self.installs_karpenter
                else None,
                pod_identity_agent=self.installs_pod_identity_agent,
                controller_identity=self.identity,
                cluster_autoscaler=self.installs_cluster_autoscaler,
                metrics_server=self.installs_metrics_server,
                high_availability=self.high_availability,
                node_groups=[*self.additional_node_groups_config, *self.additional_build_groups_config],
                node_group_role=self.node_group_role_name,
                device_plugin=plugin if self.nvidia_device_plugin_enable else None,
                gpu_observability=observability if self.gpu_observability_enable else None,
                max_hourly_usd=self.max_hourly_usd,
            ),
        )
        if found:
            if all(key for key, _ in found):
                raise KeyProblems(found)
            raise ValueError("; ".join(message for _, message in found))  # the rack as a whole
        return self

    @staticmethod
    def _part(found: list[tuple[str, str]], table: KeyTable, build: Callable[[], Any]) -> Any:
        """``build()``'s spec, or None with its problems added to ``found`` under the keys that set them."""
        try:
            return build()
        except SpecError as exc:
            found += [p for p in problems(exc, table) if p not in found]
            return None

    @property
    def pools_disk(self) -> int:
        """The Karpenter pools' disk where they set none (``effective_disk``)."""
        return effective_disk(self.karpenter_node_disk, self.node_disk)

    @property
    def installs_karpenter(self) -> bool:
        return self.karpenter_install if self.karpenter_install is not None else self.cluster_mode == "create"

    @property
    def installs_cluster_autoscaler(self) -> bool:
        """Explicitly asked, or: some node group can scale and the rack creates the cluster (in an existing
        cluster that it installs Karpenter into, the key is required: ``_mode_rules``)."""
        if self.cluster_autoscaler_enable is not None:
            return self.cluster_autoscaler_enable
        scalable = any(
            g.min_size < g.max_size for g in (*self.additional_node_groups_config, *self.additional_build_groups_config)
        )
        return scalable and self.cluster_mode == "create"

    @property
    def installs_metrics_server(self) -> bool:
        if self.metrics_server_enable is not None:
            return self.metrics_server_enable
        return self.cluster_mode == "create"

    @property
    def identity(self) -> Identity:
        """How the rack's controllers get AWS credentials: as asked, else the partition's default."""
        return Identity(self.controller_identity or upstream.default_identity(self._partition))

    @property
    def installs_pod_identity_agent(self) -> bool:
        if self.pod_identity_agent_enable is not None:
            return self.pod_identity_agent_enable
        return self.cluster_mode == "create" and self.identity == "pod_identity"

    def _mode_rules(self) -> None:
        problems: list[tuple[str, str]] = []
        if not self.karpenter_enabled:
            problems.append(
                (
                    "karpenter_enabled",
                    (
                        "karpenter_enabled=false is not possible: every lane of this rack is a Karpenter pool or a "
                        "managed "
                        "node group, and the default lane is Karpenter's (remove the key, or set it true)"
                    ),
                )
            )
        if self.karpenter_auth_mode is False and (self.installs_karpenter or self.cluster_mode == "create"):
            problems.append(
                (
                    "karpenter_auth_mode",
                    (
                        "karpenter_auth_mode=false is not possible here: Karpenter's nodes join through an EKS access "
                        "entry, "
                        "so the cluster uses access entries (remove the key, or set it true)"
                    ),
                )
            )
        if self.cluster_mode == "create" and self.karpenter_install is False:
            problems.append(
                (
                    "karpenter_install",
                    (
                        "karpenter_install=false is not possible with cluster_mode: create: a new cluster has no "
                        "Karpenter, and "
                        "the rack's default lane and pools are Karpenter NodePools (remove the key, or set it true; to "
                        "run your "
                        "own Karpenter, install it in the cluster and use cluster_mode: existing)"
                    ),
                )
            )
        unavailable = upstream.POD_IDENTITY_UNAVAILABLE.get(self._partition)
        for key, asked in (
            ("controller_identity", self.controller_identity == "pod_identity"),
            ("pod_identity_agent_enable", self.pod_identity_agent_enable is True),
        ):
            if asked and unavailable:
                problems.append(
                    (
                        key,
                        (
                            f"EKS Pod Identity is not available in the {self._partition} partition ({unavailable}): "
                            f"use "
                            f"controller_identity: irsa, the default there (remove the key)"
                        ),
                    )
                )
        pod_identity = self.identity == "pod_identity"
        if self.pod_identity_agent_enable is False and self.installs_karpenter and pod_identity:
            problems.append(
                (
                    "pod_identity_agent_enable",
                    (
                        "pod_identity_agent_enable=false is not possible with karpenter_install: Karpenter's "
                        "controller "
                        "authenticates with EKS Pod Identity, and crash-loops without the agent (remove the key, or "
                        "set it "
                        "true; with cluster_mode: existing, leave it out only if the cluster already runs the "
                        "eks-pod-identity-agent add-on; or set controller_identity: irsa)"
                    ),
                )
            )
        if (
            self.pod_identity_agent_enable is False
            and not self.installs_karpenter
            and self.installs_cluster_autoscaler
            and pod_identity
        ):
            problems.append(
                (
                    "pod_identity_agent_enable",
                    (
                        "pod_identity_agent_enable=false is not possible with the Cluster Autoscaler the rack "
                        "installs: it "
                        "authenticates with EKS Pod Identity (remove the key, or set cluster_autoscaler_enable: false, "
                        "or "
                        "controller_identity: irsa; leave the key out only if the cluster already runs the "
                        "eks-pod-identity-agent add-on)"
                    ),
                )
            )
        scalable = [
            g.name
            for g in (*self.additional_node_groups_config, *self.additional_build_groups_config)
            if g.min_size < g.max_size
        ]
        if (
            self.cluster_mode == "existing"
            and self.installs_karpenter
            and self.cluster_autoscaler_enable is None
            and scalable
        ):
            problems.append(
                (
                    "cluster_autoscaler_enable",
                    (
                        f"node groups {', '.join(map(str, scalable))} can scale (min_size < max_size), and the rack "
                        f"cannot see "
                        f"whether this existing cluster already runs a Cluster Autoscaler: a second one fails on its "
                        f"objects "
                        f"(the ClusterRole cluster-autoscaler) and fights the first over the groups' sizes. Say who "
                        f"scales "
                        f"them: cluster_autoscaler_enable: true installs the rack's, false leaves them to the "
                        f"cluster's own"
                    ),
                )
            )
        if self.cluster_mode == "existing":
            for key in (
                "vpc_id",
                "private_subnets_ids",
                "public_subnets_ids",
                "k8s_version",
                "eks_api_server_public_access_cidrs",
                "node_type",
                "protect",
                "cluster_admin_arns",
            ):
                if key in self.model_fields_set:
                    problems.append((key, f"{key} is for cluster_mode: create (an existing cluster keeps its own)"))
        elif not self.private_subnets_ids:
            problems.append(
                ("private_subnets_ids", "cluster_mode: create needs private_subnets_ids (the nodes' subnets)")
            )
        elif self.vpc_id is None:
            problems.append(("vpc_id", "cluster_mode: create needs vpc_id (bring your own network)"))
        if self.karpenter_version is not None and not self.installs_karpenter:
            problems.append(
                (
                    "karpenter_version",
                    "karpenter_version needs karpenter_install: true (the rack installs no Karpenter here)",
                )
            )
        if self.build_node_type and not self.build_node_enabled:
            problems.append(("build_node_type", "build_node_type needs build_node_enabled: true"))
        if problems:
            raise KeyProblems(problems)

    def cluster_spec(self) -> ClusterSpec:
        """The cluster ``cluster_mode: create`` makes."""
        return ClusterSpec(
            name=self.cluster_name,
            vpc_id=self.vpc_id,  # type: ignore[arg-type]  # None: ClusterSpec names it missing
            private_subnet_ids=self.private_subnets_ids,
            public_subnet_ids=self.public_subnets_ids,
            version=self.k8s_version,
            high_availability=self.high_availability,
            public_access_cidrs=self.eks_api_server_public_access_cidrs,
            tags=self.tags,
            system_node_type=self.node_type,
            system_node_disk=self.node_disk,
            protect=self.protect,
            admin_arns=self.cluster_admin_arns,
        )

    def build_pool(self) -> PoolSpec:
        """The seeds' Karpenter ``build`` pool: AL2023 whatever ``karpenter_node_os`` says, on-demand,
        32 CPU and 256 GiB, ``WhenEmpty`` after 60 s, tainted ``dedicated=build:NoSchedule``; of the
        architectures of ``build_node_type`` (amd64 without one), as Convox derives it."""
        arches = sorted(
            {wellknown.K8S_ARCH.get(instances.instance_arch(t), "amd64") for t in self.build_node_type if "." in t}
        ) or ["amd64"]
        return PoolSpec(
            name="build",
            os=NodeOs.AL2023,
            ami_alias=self.karpenter_ami_alias,
            instance_types=self.build_node_type,
            arch=arches,
            capacity_types=["on-demand"],
            cpu_limit=32,
            memory_limit_gb=256,
            consolidation_policy=ConsolidationPolicy.WHEN_EMPTY,
            consolidate_after="60s",
            disk=self.pools_disk,
            labels={contract.BUILD_LABEL: "true"},
            taints=[Taint(key=contract.BUILD_TAINT_KEY, value=contract.BUILD_TAINT_VALUE, effect="NoSchedule")],
        )

    def workload_pool(self) -> PoolSpec:
        """The default ``workload`` lane, from the ``karpenter_*`` parameters."""
        limits = upstream.EBS_VOLUMES.get(self.karpenter_node_volume_type)
        if limits is not None and limits.iops_required:
            raise KeyProblems(
                [
                    (
                        "karpenter_node_volume_type",
                        (
                            f"karpenter workload nodepool: volume_type {self.karpenter_node_volume_type} needs "
                            f"provisioned IOPS, and the "
                            f"default pool has no IOPS parameter (use gp3 or gp2, or an additional pool with "
                            f"volume_iops)"
                        ),
                    )
                ]
            )
        if "reserved" in self.karpenter_capacity_types:
            raise KeyProblems(
                [
                    (
                        "karpenter_capacity_types",
                        (
                            "karpenter workload nodepool: invalid capacity type 'reserved' (the default lane takes "
                            "on-demand or spot; "
                            "reserved capacity is an additional pool's, with capacity_reservation_ids)"
                        ),
                    )
                ]
            )
        return PoolSpec(
            name="workload",
            os=cast(NodeOs, self.karpenter_node_os),  # checked by PoolSpec, in its words
            ami_alias=self.karpenter_ami_alias,
            instance_families=self.karpenter_instance_families,
            instance_sizes=self.karpenter_instance_sizes,
            capacity_types=self.karpenter_capacity_types,
            arch=self.karpenter_arch or [wellknown.K8S_ARCH.get(instances.instance_arch(self.node_type), "amd64")],
            cpu_limit=self.karpenter_cpu_limit,
            memory_limit_gb=self.karpenter_memory_limit_gb,
            max_hourly_usd=self.karpenter_max_hourly_usd,
            consolidation_policy=(
                ConsolidationPolicy.WHEN_EMPTY_OR_UNDERUTILIZED
                if self.karpenter_consolidation_enabled
                else ConsolidationPolicy.WHEN_EMPTY
            ),
            consolidate_after=self.karpenter_consolidate_after,
            node_expiry=self.karpenter_node_expiry,
            disruption_budget_nodes=self.karpenter_disruption_budget_nodes,
            disk=self.pools_disk,
            volume_type=self.karpenter_node_volume_type,
            labels=self.karpenter_node_labels,
            taints=self.karpenter_node_taints,
        )

    def spec(self) -> RackSpec:
        """The ``RackSpec`` these parameters describe (built when they were validated)."""
        assert self._spec is not None, "RackParams are built by model_validate"
        return self._spec


# ---- errors, with their key paths ------------------------------------------------------------------------


def _lines(error: Mapping[str, Any]) -> list[str]:
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, KeyProblems):
        base = key_path(error["loc"])
        return [
            f"{NAMESPACE}:{base}{'' if sub.startswith('[') or not base else '.'}{shown(sub)}: {shown(message)}"
            for sub, message in cause.problems
        ]
    path = key_path(error_loc(error))
    message = error_message(error)
    if error["type"] == "extra_forbidden" and len(error["loc"]) == 1:  # a rack: key that is no parameter
        meant = closest(error["loc"][0], RackParams.model_fields)
        message += f"; did you mean {NAMESPACE}:{meant}?" if meant else ""
    return [f"{NAMESPACE}:{path}: {message}" if path else f"{NAMESPACE}: {message}"]


def parse_rack_params(values: Mapping[str, Any], rack: str = "rack", region: Optional[str] = None) -> RackParams:
    """Validate the ``rack`` namespace's values (keys without the ``rack:`` prefix); ``region``, the stack's
    ``aws:region``, decides the partition's defaults (``controller_identity``)."""
    if not isinstance(values, Mapping):
        raise ConfigError(
            f"{NAMESPACE}: expected a mapping of the rack's keys to their values, got {type(values).__name__}"
        )
    try:
        return RackParams.model_validate(dict(values), context={"rack": rack, "region": region})
    except ValidationError as exc:
        raise ConfigError("\n".join(line for error in exc.errors() for line in _lines(error))) from None


def parse_rack_config(values: Mapping[str, Any], rack: str = "rack", region: Optional[str] = None) -> RackSpec:
    """The ``RackSpec`` of a ``Rack`` named ``rack`` from the ``rack`` namespace's values (in ``region``,
    the stack's ``aws:region``: its partition's defaults).

    Node groups are named after the rack (``<rack>-ng-<id>``, ``<rack>-build-<id>``), as the
    ``Rack`` names their components, so a config error names the group as the pack will.
    """
    return parse_rack_params(values, rack, region).spec()
