"""The seeds' (Convox rack) parameters, in their own names and value shapes, translated into specs.

``RackParams`` accepts every ``rack:`` parameter an existing rack uses, with the seeds' defaults:
values may be YAML or the seeds' JSON strings, list-like fields take comma-separated strings
(``g5,g6``), labels take ``k=v,k2=v2``, taints ``key=value:Effect``. Unknown keys are errors.
``parse_rack_config`` validates them and returns the ``RackSpec`` the ``Rack`` takes; every error
names its key path (``rack:additional_karpenter_nodepools_config[0].ami_id``) and the bad value.
The rules themselves belong to the specs (``specs.py``) and the pack (``policies/rules.py``).
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Callable, Literal, Mapping, Optional, Sequence

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from . import syntax
from .errors import ConfigError
from .specs import (
    AL2023_ALIAS_RE,
    BUILD_LABEL,
    BUILD_TAINT_KEY,
    ClusterName,
    ClusterSpec,
    KarpenterSpec,
    error_loc,
    error_message,
    key_path,
    DevicePluginSpec,
    FieldProblem,
    GpuObservabilitySpec,
    NodeGroupSpec,
    PoolSpec,
    RackSpec,
    SpecError,
    chart_version_problem,
    numbers_only,
    rack_tags_problem,
    time_slicing_problem,
)
from .policies import upstream

NAMESPACE = "rack"
RESERVED_POOL_NAMES = frozenset({"workload", "build", "default", "system"})


class Problems(ValueError):
    """Several problems found at once, each at a key path below the field that raised it."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems


# ---- the seeds' value shapes ------------------------------------------------------------------------


def split_csv(value: Any) -> Any:
    """``"g5,g6"`` -> ``["g5", "g6"]``; lists pass through; an empty string means 'not set'."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def parse_kv(value: Any, invalid: Callable[[str], str] = lambda part: f"invalid label '{part}'") -> Any:
    """``"k1=v1,k2=v2"`` -> ``{"k1": "v1", "k2": "v2"}``; mappings pass through unchanged (a value
    with a comma in a mapping stays one value)."""
    if not isinstance(value, str):
        return value
    out: dict[str, str] = {}
    for part in value.split(","):
        if not part.strip():
            continue
        key, sep, val = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{invalid(part.strip())}, use format: k1=v1,k2=v2")
        out[key.strip()] = val.strip()
    return out


def parse_taints(value: Any) -> Any:
    """``"key=value:Effect,key:Effect"`` -> taints; a YAML list of such strings or of mappings works too."""
    items = split_csv(value) if isinstance(value, str) else value
    if not isinstance(items, list):
        return items
    out: list[Any] = []
    for item in items:
        if not isinstance(item, str):
            out.append(item)
            continue
        key, sep, effect = item.strip().rpartition(":")
        name, _, val = key.partition("=")
        if not sep or not name or not effect:
            raise ValueError(f"invalid taint '{item}', use format: key=value:Effect or key:Effect")
        out.append({"key": name, "value": val if "=" in key else None, "effect": effect})
    return out


def json_list(value: Any) -> Any:
    """The seeds pass these lists as JSON strings; YAML lists work as they are."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON: {exc.msg} at position {exc.pos}") from None
    return value


CsvList = Annotated[list[str], BeforeValidator(split_csv)]
KeyValues = Annotated[dict[str, str], BeforeValidator(parse_kv)]
Tags = Annotated[dict[str, str], BeforeValidator(lambda v: parse_kv(v, lambda part: f"invalid tag '{part}'"))]
Taints = Annotated[list[Any], BeforeValidator(parse_taints)]
JsonList = Annotated[list[Any], BeforeValidator(json_list)]


# ---- list items: one spec each, every problem at its own path -----------------------------------------


def _item_problems(errors: list[Any], index: int, keys: Mapping[str, str], field_suffix: bool) -> list[tuple[str, str]]:
    """A spec's validation errors as (sub-path, message), with spec field names turned back into the seeds'."""
    found = []
    for error in errors:
        loc = [keys.get(str(p), p) if n == 0 else p for n, p in enumerate(error["loc"])]
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, FieldProblem):
            loc = [keys.get(cause.field, cause.field)] if field_suffix else []
        found.append((f"[{index}]" + (("." + key_path(loc)) if loc else ""), error_message(error)))
    return found


def _validate_items(
    items: list[Any], allowed: Sequence[str], build: Callable[[int, dict[str, Any]], Any],
    keys: Mapping[str, str], field_suffix: bool,
) -> list[Any]:
    """Each item: only ``allowed`` keys, then ``build`` (which validates a spec); all problems together."""
    specs, problems = [], []
    for n, item in enumerate(items):
        if not isinstance(item, Mapping):
            problems.append((f"[{n}]", f"expected a mapping (got {json.dumps(item, default=str)})"))
            continue
        unknown = [k for k in item if k not in allowed]
        if unknown:
            problems += [(f"[{n}].{k}", "unknown field") for k in unknown]
            continue
        try:
            specs.append(build(n, dict(item)))
        except SpecError as exc:
            problems += _item_problems(exc.errors, n, keys, field_suffix)
        except FieldProblem as exc:
            problems.append((f"[{n}].{exc.field}", str(exc)))
        except ValueError as exc:  # a value in the seeds' shapes that does not parse
            problems.append((f"[{n}]", str(exc)))
    if problems:
        raise Problems(problems)
    return specs


POOL_KEYS = (
    "name", "instance_families", "instance_sizes", "capacity_types", "arch", "cpu_limit", "memory_limit_gb",
    "consolidation_policy", "consolidate_after", "node_expiry", "disruption_budget_nodes", "disk", "volume_type",
    "volume_iops", "volume_throughput", "ami_id", "weight", "labels", "taints", "dedicated",
)
GROUP_KEYS = ("type", "disk", "capacity_type", "min_size", "max_size", "label", "id", "tags", "ami_id", "dedicated")
GROUP_FIELDS = {"instance_type": "type"}  # spec field -> the seeds' key

# The default pool's fields, by the rack parameter that sets each.
WORKLOAD_KEYS = {
    "instance_families": "karpenter_instance_families",
    "instance_sizes": "karpenter_instance_sizes",
    "capacity_types": "karpenter_capacity_types",
    "arch": "karpenter_arch",
    "cpu_limit": "karpenter_cpu_limit",
    "memory_limit_gb": "karpenter_memory_limit_gb",
    "consolidation_policy": "karpenter_consolidation_enabled",
    "consolidate_after": "karpenter_consolidate_after",
    "node_expiry": "karpenter_node_expiry",
    "disruption_budget_nodes": "karpenter_disruption_budget_nodes",
    "disk": "karpenter_node_disk",
    "volume_type": "karpenter_node_volume_type",
    "labels": "karpenter_node_labels",
    "taints": "karpenter_node_taints",
    "ami_alias": "karpenter_ami_alias",
    "os": "karpenter_node_os",
}


def _pool_shapes(item: dict[str, Any]) -> dict[str, Any]:
    for key in ("instance_families", "instance_sizes", "capacity_types", "arch"):
        if key in item:
            item[key] = split_csv(item[key])
    if "labels" in item:
        item["labels"] = parse_kv(item["labels"])
    if "taints" in item:
        item["taints"] = parse_taints(item["taints"])
    return item


def _pools(items: list[Any], info: ValidationInfo) -> list[PoolSpec]:
    alias = info.data.get("karpenter_ami_alias", "al2023@latest")

    def build(n: int, item: dict[str, Any]) -> PoolSpec:
        name = item.get("name")
        if isinstance(name, str) and name in RESERVED_POOL_NAMES:
            raise FieldProblem("name", f"karpenter nodepool name '{name}' is reserved")
        return PoolSpec(**_pool_shapes(item), os="al2023", ami_alias=alias)

    pools = _validate_items(items, POOL_KEYS, build, {}, field_suffix=True)
    seen: set[str] = set()
    for pool in pools:
        if pool.name in seen:
            raise ValueError(f"duplicate karpenter nodepool name: {pool.name}")
        seen.add(pool.name)
    return pools


GROUP_ID_RE = re.compile(r"[0-9A-Za-z_-]{1,16}")


def group_id_problem(value: Any) -> Optional[str]:
    """What is wrong with a node group ``id``: it names the group (``<rack>-ng-<id>``) and, through
    that, its IAM role and EKS node group, whose names take letters, digits, '-' and '_' only."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not GROUP_ID_RE.fullmatch(str(value)):
        return f"invalid id {json.dumps(value, default=str)} (a number, or 1-16 letters, digits, '-' or '_')"
    return None


def _groups(kind: str, prefix: str, defaults: Mapping[str, Any]) -> Callable[[list[Any], ValidationInfo], list[NodeGroupSpec]]:
    """A validator for the node-group list ``kind`` (``ng``/``build``): ids, names, defaults, then a spec each."""

    def validate(items: list[Any], info: ValidationInfo) -> list[NodeGroupSpec]:
        ids = [item.get("id") if isinstance(item, Mapping) else None for item in items]
        bad = [(f"[{n}].id", problem) for n, i in enumerate(ids) if i is not None and (problem := group_id_problem(i))]
        if bad:
            raise Problems(bad)
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
            fields = {**defaults, "disk": disk, **item}
            fields["instance_type"] = fields.pop("type", None) or ""
            if fields.get("disk") is None:
                fields["disk"] = disk
            if "tags" in fields:
                fields["tags"] = parse_kv(fields["tags"], lambda _: "invalid 'tags'") if fields["tags"] is not None else {}
            return NodeGroupSpec(**{**fields, "name": f"{rack}-{prefix}-{group_id}", "build": kind == "build"})

        return _validate_items(items, GROUP_KEYS, build, GROUP_FIELDS, field_suffix=False)

    return validate


# ---- the rack's parameters ------------------------------------------------------------------------------


class RackParams(BaseModel):
    """The ``rack`` namespace of a stack config, in the seeds' words (keys without ``rack:``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    _spec: Optional[RackSpec] = PrivateAttr(default=None)

    @field_validator("*", mode="before")
    @classmethod
    def _numbers(cls, value: Any, info: ValidationInfo) -> Any:
        return numbers_only(cls, value, info)

    cluster_name: ClusterName
    """The EKS cluster (required): the one to use, or the name of the one to create."""
    cluster_mode: Literal["existing", "create"] = "existing"
    """``existing``: the rack goes into the EKS cluster ``cluster_name``. ``create``: the rack creates it (pulumi-eks) in your VPC. Default ``existing``."""
    vpc_id: Optional[str] = None
    """``create``: the VPC to create the cluster in (bring your own network)."""
    private_subnets_ids: CsvList = []
    """``create`` (required): the subnets for the nodes; tagged ``karpenter.sh/discovery``."""
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
    node_type: str = "t3.large"
    """The system lane's instance type (``create``). Default ``t3.large``: Karpenter requests 1 CPU and 1 GiB per replica."""
    karpenter_install: Optional[bool] = None
    """Install Karpenter 1.14.1 (its IAM, interruption queue and charts). Default true with ``create``, false with ``existing``."""
    karpenter_enabled: bool = True
    """The seeds' switch: every lane of this rack is a Karpenter or managed lane, so it must stay true."""
    karpenter_auth_mode: Optional[bool] = None
    """The seeds' switch for access entries; this rack's Karpenter needs them (true), and creates clusters with them."""
    pod_identity_agent_enable: Optional[bool] = None
    """Install the EKS Pod Identity agent add-on. Default true with ``create``; with ``existing``, the cluster must have it for Karpenter."""
    build_node_enabled: bool = False
    """The seeds' Karpenter ``build`` pool (AL2023, ``dedicated=build:NoSchedule``). Default false."""
    build_node_type: CsvList = []
    """The build pool's instance types (their families and sizes). Default: any non-accelerated type."""
    node_role_name: Optional[str] = None
    """Karpenter's node role. Default ``KarpenterNodeRole-<cluster_name>``."""

    karpenter_node_os: str = "al2023"
    """The default ``workload`` lane's OS: ``al2023`` or ``bottlerocket`` (case-insensitive). Default ``al2023``."""
    karpenter_instance_families: CsvList = []
    """Instance families of the default lane. Default: any."""
    karpenter_instance_sizes: CsvList = []
    """Instance sizes of the default lane. Default: any."""
    karpenter_arch: CsvList = ["amd64"]
    """``amd64``, ``arm64``. Default ``amd64``."""
    karpenter_capacity_types: CsvList = ["on-demand"]
    """``on-demand``, ``spot``. Default ``on-demand``."""
    karpenter_cpu_limit: int = 100
    """CPU limit of the default lane (cores, positive). Default 100."""
    karpenter_memory_limit_gb: int = 400
    """Memory limit of the default lane (GiB, positive). Default 400."""
    karpenter_consolidation_enabled: bool = True
    """``false`` means ``WhenEmpty``. Default true."""
    karpenter_consolidate_after: str = "30s"
    """``30s``, ``5m``, ``1h``. Default ``30s``."""
    karpenter_node_expiry: str = "720h"
    """Hours like ``720h``, or ``Never``. Default ``720h``."""
    karpenter_disruption_budget_nodes: str = "10%"
    """A percentage or a count. Default ``10%``."""
    karpenter_node_disk: int = 20
    """Root volume GiB (Bottlerocket: the data volume). Default 20."""
    karpenter_node_volume_type: str = "gp3"
    """gp2, gp3, io1, io2. Default ``gp3``."""
    karpenter_node_labels: KeyValues = {}
    """Extra labels of the default lane. Default none."""
    karpenter_node_taints: Taints = []
    """Extra taints of the default lane. Default none."""
    karpenter_ami_alias: str = "al2023@latest"
    """AL2023 alias of every AL2023 pool: ``al2023@latest`` or ``al2023@vYYYYMMDD``. Default ``al2023@latest``."""
    additional_karpenter_nodepools_config: Annotated[list[PoolSpec], BeforeValidator(json_list)] = []
    """More Karpenter pools (always AL2023); see the pool fields below. Default none."""

    node_disk: int = upstream.SEEDS_NODE_DISK_GIB
    """Root volume GiB of a node group that sets no ``disk``; at least 20. Default 20."""
    node_group_role_name: Optional[str] = None
    """An existing IAM role (name) for every managed node group. Default: each group gets its own role."""
    additional_node_groups_config: Annotated[list[NodeGroupSpec], BeforeValidator(json_list)] = []
    """EKS managed node groups (always AL2023); see the node group fields below. Default none."""
    additional_build_groups_config: Annotated[list[NodeGroupSpec], BeforeValidator(json_list)] = []
    """Build lanes: node group fields, ``min_size`` 0, ``label`` ``custom-build``. Default none."""
    nvidia_device_plugin_enable: bool = False
    """The NVIDIA device plugin on every AL2023 GPU lane. Default false."""
    nvidia_device_time_slicing_replicas: int = 1
    """Share each GPU this many ways (time-slicing) when greater than 1. Default 1."""
    gpu_observability_enable: bool = False
    """dcgm-exporter on every GPU lane; needs ``nvidia_device_plugin_enable``. Default false."""
    gpu_observability_chart_version: str = upstream.DCGM_EXPORTER.version
    """The dcgm-exporter chart version. Default 4.8.2."""
    gpu_observability_service_monitor: bool = False
    """The chart's ServiceMonitor; only when the cluster has the monitoring.coreos.com CRDs. Default false."""

    @field_validator("node_role_name", "node_group_role_name")
    @classmethod
    def _role_name(cls, v: Optional[str], info: ValidationInfo) -> Optional[str]:
        problem = v is not None and syntax.iam_role_name_problem(v)
        if problem:
            raise ValueError(f"invalid {info.field_name} '{v}' ({problem})")
        return v

    @field_validator("karpenter_node_os", mode="before")
    @classmethod
    def _os(cls, v: Any) -> Any:
        lowered = str(v).lower()
        if lowered not in ("al2023", "bottlerocket"):
            raise ValueError(f"invalid karpenter_node_os '{v}' (must be al2023 or bottlerocket)")
        return lowered

    @field_validator("karpenter_ami_alias")
    @classmethod
    def _alias(cls, v: str) -> str:
        if not AL2023_ALIAS_RE.fullmatch(v):
            raise ValueError(f"invalid karpenter_ami_alias '{v}' (must be al2023@latest or al2023@vYYYYMMDD)")
        return v

    @field_validator("additional_karpenter_nodepools_config", mode="wrap")
    @classmethod
    def _pools(cls, value: Any, handler: Any, info: ValidationInfo) -> list[PoolSpec]:
        items = json_list(value)
        if not isinstance(items, list):
            return handler(items)
        return _pools(items, info)

    @field_validator("additional_node_groups_config", mode="wrap")
    @classmethod
    def _node_groups(cls, value: Any, handler: Any, info: ValidationInfo) -> list[NodeGroupSpec]:
        items = json_list(value)
        if not isinstance(items, list):
            return handler(items)
        return _groups("ng", "ng", {})(items, info)

    @field_validator("additional_build_groups_config", mode="wrap")
    @classmethod
    def _build_groups(cls, value: Any, handler: Any, info: ValidationInfo) -> list[NodeGroupSpec]:
        items = json_list(value)
        if not isinstance(items, list):
            return handler(items)
        return _groups("build", "build", {"min_size": 0, "label": "custom-build"})(items, info)

    @field_validator("node_disk")
    @classmethod
    def _node_disk(cls, v: int) -> int:
        if v < upstream.SEEDS_NODE_DISK_GIB:
            raise ValueError(f"node disk is less than 20: '{v}'")
        return v

    @field_validator("nvidia_device_time_slicing_replicas")
    @classmethod
    def _replicas(cls, v: int) -> int:
        problem = time_slicing_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("gpu_observability_enable")
    @classmethod
    def _observability(cls, v: bool, info: ValidationInfo) -> bool:
        if v and not info.data.get("nvidia_device_plugin_enable"):
            raise ValueError("gpu_observability_enable=true requires nvidia_device_plugin_enable=true")
        return v

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        problem = rack_tags_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("gpu_observability_chart_version")
    @classmethod
    def _chart_version(cls, v: str) -> str:
        problem = chart_version_problem(v, "gpu_observability_chart_version")
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _workload(self) -> "RackParams":
        """The whole ``RackSpec``, built once here so each rule's error names the key that set it."""
        workload = self.workload_pool()
        self._mode_rules()
        cluster = self.cluster_spec()
        build = [self.build_pool()] if self.build_node_enabled else []
        try:  # what only the whole rack can say (a group's tags with the rack's), under the key that set it
            self._spec = self._rack_spec(workload, cluster, build)
        except SpecError as exc:
            keys = {"node_groups": "additional_node_groups_config", "pools": "additional_karpenter_nodepools_config"}
            problems = [(keys.get(field, field), error_message(error)) for error in exc.errors for field in [_field_of(error)]]
            if all(key for key, _ in problems):
                raise Problems(problems) from None
            raise ValueError("; ".join(message for _, message in problems)) from None  # the rack as a whole
        return self

    @property
    def installs_karpenter(self) -> bool:
        return self.karpenter_install if self.karpenter_install is not None else self.cluster_mode == "create"

    @property
    def installs_pod_identity_agent(self) -> bool:
        if self.pod_identity_agent_enable is not None:
            return self.pod_identity_agent_enable
        return self.cluster_mode == "create"

    def _mode_rules(self) -> None:
        problems: list[tuple[str, str]] = []
        if not self.karpenter_enabled:
            problems.append(("karpenter_enabled", (
                "karpenter_enabled=false is not possible: every lane of this rack is a Karpenter pool or a managed "
                "node group, and the default lane is Karpenter's (remove the key, or set it true)"
            )))
        if self.karpenter_auth_mode is False and (self.installs_karpenter or self.cluster_mode == "create"):
            problems.append(("karpenter_auth_mode", (
                "karpenter_auth_mode=false is not possible here: Karpenter's nodes join through an EKS access entry, "
                "so the cluster uses access entries (remove the key, or set it true)"
            )))
        if self.cluster_mode == "create" and self.pod_identity_agent_enable is False and self.installs_karpenter:
            problems.append(("pod_identity_agent_enable", (
                "pod_identity_agent_enable=false is not possible with karpenter_install: Karpenter's controller "
                "authenticates with EKS Pod Identity"
            )))
        if self.cluster_mode == "existing":
            for key in ("vpc_id", "private_subnets_ids", "public_subnets_ids", "k8s_version",
                        "eks_api_server_public_access_cidrs", "node_type", "protect"):
                if key in self.model_fields_set:
                    problems.append((key, f"{key} is for cluster_mode: create (an existing cluster keeps its own)"))
        elif not self.private_subnets_ids:
            problems.append(("private_subnets_ids", "cluster_mode: create needs private_subnets_ids (the nodes' subnets)"))
        elif self.vpc_id is None:
            problems.append(("vpc_id", "cluster_mode: create needs vpc_id (bring your own network)"))
        if self.build_node_type and not self.build_node_enabled:
            problems.append(("build_node_type", "build_node_type needs build_node_enabled: true"))
        if problems:
            raise Problems(problems)

    def cluster_spec(self) -> Optional[ClusterSpec]:
        """The cluster to create (``cluster_mode: create``), or None."""
        if self.cluster_mode != "create":
            return None
        fields = {
            "name": self.cluster_name, "vpc_id": self.vpc_id, "private_subnet_ids": self.private_subnets_ids,
            "public_subnet_ids": self.public_subnets_ids, "version": self.k8s_version,
            "high_availability": self.high_availability, "public_access_cidrs": self.eks_api_server_public_access_cidrs,
            "tags": self.tags, "system_node_type": self.node_type, "system_node_disk": self.node_disk,
            "protect": self.protect,
        }
        keys = {"name": "cluster_name", "private_subnet_ids": "private_subnets_ids", "public_subnet_ids": "public_subnets_ids",
                "version": "k8s_version", "public_access_cidrs": "eks_api_server_public_access_cidrs",
                "system_node_type": "node_type", "system_node_disk": "node_disk"}
        try:
            return ClusterSpec(**fields)
        except SpecError as exc:
            raise Problems([(keys.get(field, field), error_message(error))
                            for error in exc.errors for field in [_field_of(error)]]) from None

    def build_pool(self) -> PoolSpec:
        """The seeds' Karpenter ``build`` pool: AL2023 whatever ``karpenter_node_os`` says, on-demand,
        32 CPU and 256 GiB, ``WhenEmpty`` after 60 s, tainted ``dedicated=build:NoSchedule``."""
        families = sorted({t.split(".", 1)[0] for t in self.build_node_type})
        sizes = sorted({t.split(".", 1)[1] for t in self.build_node_type if "." in t})
        bad = [t for t in self.build_node_type if syntax.instance_type_problem(t)]
        if bad:
            raise Problems([("build_node_type", f"invalid node type '{bad[0]}' (must look like c7i.2xlarge)")])
        try:
            return PoolSpec(
                name="build", os="al2023", ami_alias=self.karpenter_ami_alias, instance_families=families,
                instance_sizes=sizes, capacity_types=["on-demand"], cpu_limit=32, memory_limit_gb=256,
                consolidation_policy="WhenEmpty", consolidate_after="60s", disk=self.node_disk,
                labels={BUILD_LABEL: "true"}, taints=[{"key": BUILD_TAINT_KEY, "value": "build", "effect": "NoSchedule"}],
            )
        except SpecError as exc:  # what the build lane is made of: its types, and the rack's node_disk
            raise Problems([("node_disk" if _field_of(error) == "disk" else "build_node_type", error_message(error))
                            for error in exc.errors]) from None

    def workload_pool(self) -> PoolSpec:
        """The default ``workload`` lane, from the ``karpenter_*`` parameters."""
        limits = upstream.EBS_VOLUMES.get(self.karpenter_node_volume_type)
        if limits is not None and limits.iops_required:
            raise Problems([("karpenter_node_volume_type", (
                f"karpenter workload nodepool: volume_type {self.karpenter_node_volume_type} needs provisioned IOPS, and the "
                f"default pool has no IOPS parameter (use gp3 or gp2, or an additional pool with volume_iops)"
            ))])
        try:
            return PoolSpec(**dict(
                name="workload",
                os=self.karpenter_node_os,
                ami_alias=self.karpenter_ami_alias,
                instance_families=self.karpenter_instance_families,
                instance_sizes=self.karpenter_instance_sizes,
                capacity_types=self.karpenter_capacity_types,
                arch=self.karpenter_arch,
                cpu_limit=self.karpenter_cpu_limit,
                memory_limit_gb=self.karpenter_memory_limit_gb,
                consolidation_policy="WhenEmptyOrUnderutilized" if self.karpenter_consolidation_enabled else "WhenEmpty",
                consolidate_after=self.karpenter_consolidate_after,
                node_expiry=self.karpenter_node_expiry,
                disruption_budget_nodes=self.karpenter_disruption_budget_nodes,
                disk=self.karpenter_node_disk,
                volume_type=self.karpenter_node_volume_type,
                labels=self.karpenter_node_labels,
                taints=self.karpenter_node_taints,
            ))
        except SpecError as exc:
            raise Problems([
                (WORKLOAD_KEYS.get(field, field), error_message(error))
                for error in exc.errors
                for field in [_field_of(error)]
            ]) from None

    def spec(self) -> RackSpec:
        """The ``RackSpec`` these parameters describe (built when they were validated)."""
        assert self._spec is not None, "RackParams are built by model_validate"
        return self._spec

    def _rack_spec(self, workload: PoolSpec, cluster: Optional[ClusterSpec], build: list[PoolSpec]) -> RackSpec:
        return RackSpec(
            cluster_name=self.cluster_name,
            tags=self.tags,
            karpenter_node_role=self.node_role_name,
            pools=[workload, *self.additional_karpenter_nodepools_config, *build],
            cluster=cluster,
            karpenter=KarpenterSpec(replicas=2 if self.high_availability else 1) if self.installs_karpenter else None,
            pod_identity_agent=self.installs_pod_identity_agent,
            high_availability=self.high_availability,
            node_groups=[*self.additional_node_groups_config, *self.additional_build_groups_config],
            node_group_role=self.node_group_role_name,
            device_plugin=(
                DevicePluginSpec(time_slicing_replicas=self.nvidia_device_time_slicing_replicas)
                if self.nvidia_device_plugin_enable else None
            ),
            gpu_observability=(
                GpuObservabilitySpec(version=self.gpu_observability_chart_version,
                                     service_monitor=self.gpu_observability_service_monitor)
                if self.gpu_observability_enable else None
            ),
        )


# ---- errors, with their key paths ------------------------------------------------------------------------


def _field_of(error: Mapping[str, Any]) -> str:
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, FieldProblem):
        return cause.field
    return str(error["loc"][0]) if error["loc"] else ""


def _lines(error: Mapping[str, Any]) -> list[str]:
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, Problems):
        base = key_path(error["loc"])
        return [f"{NAMESPACE}:{base}{'' if sub.startswith('[') or not base else '.'}{sub}: {message}"
                for sub, message in cause.problems]
    path = key_path(error_loc(error))
    return [f"{NAMESPACE}:{path}: {error_message(error)}" if path else f"{NAMESPACE}: {error_message(error)}"]


def parse_rack_params(values: Mapping[str, Any], rack: str = "rack") -> RackParams:
    """Validate the ``rack`` namespace's values (keys without the ``rack:`` prefix)."""
    try:
        return RackParams.model_validate(dict(values), context={"rack": rack})
    except ValidationError as exc:
        raise ConfigError("\n".join(line for error in exc.errors() for line in _lines(error))) from None


def parse_rack_config(values: Mapping[str, Any], rack: str = "rack") -> RackSpec:
    """The ``RackSpec`` of a ``Rack`` named ``rack`` from the ``rack`` namespace's values.

    Node groups are named after the rack (``<rack>-ng-<id>``, ``<rack>-build-<id>``), as the
    ``Rack`` names their components, so a config error names the group as the pack will.
    """
    return parse_rack_params(values, rack).spec()
