"""The rack's stack config, in the seeds' own words.

Stack config lives under the ``rack`` namespace (``rack:<param>`` in ``Pulumi.<env>.yaml``). Every
value may be YAML or the seeds' JSON string; list-like fields also take the seeds' comma-separated
strings. Unknown keys are errors, and every error names the key path and the bad value.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, ClassVar, Literal, Mapping, Optional

import pulumi
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from policies import rules

NAMESPACE = "rack"


class ConfigError(pulumi.RunError):
    """Bad rack config. Pulumi prints it without a traceback; the offline CLI exits 2 with it."""


class FieldProblem(ValueError):
    """A rule broken by one field; the error's key path ends with that field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


# ---- value shapes the seeds accept ---------------------------------------------------------------


def _split_csv(value: Any) -> Any:
    """``"g5,g6"`` -> ``["g5", "g6"]``; lists pass through; empty strings mean 'not set'."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _parse_kv(value: Any) -> Any:
    """``"k1=v1,k2=v2"`` -> ``{"k1": "v1", "k2": "v2"}``; mappings pass through."""
    if not isinstance(value, str):
        return value
    out: dict[str, str] = {}
    for part in value.split(","):
        if not part.strip():
            continue
        key, sep, val = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"invalid label '{part.strip()}', use format: k1=v1,k2=v2")
        out[key.strip()] = val.strip()
    return out


CsvList = Annotated[list[str], BeforeValidator(_split_csv)]
KeyValues = Annotated[dict[str, str], BeforeValidator(_parse_kv)]

NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
RESERVED_POOL_NAMES = frozenset({"workload", "build", "default", "system"})
DURATION_RE = re.compile(r"^\d+(s|m|h)$")
EXPIRY_RE = re.compile(r"^(\d+h|Never)$")
BUDGET_RE = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
CAPACITY_TYPES = ("on-demand", "spot")
ARCHES = ("amd64", "arm64")
VOLUME_TYPES = ("gp2", "gp3", "io1", "io2")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TAINT_RE = re.compile(r"^([A-Za-z0-9./_-]+)(?:=([A-Za-z0-9._-]*))?:([A-Za-z]+)$")
# Karpenter's own alias rule for AL2023 is looser; the seeds pin 'latest' or a dated release.
AL2023_ALIAS_RE = re.compile(r"^al2023@(latest|v\d{8})$")
INSTANCE_TYPE_RE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")
LABEL_VALUE_RE = re.compile(r"^[a-z0-9-]+$")
IAM_ROLE_NAME_RE = re.compile(r"^[A-Za-z0-9+=,.@_-]{1,64}$")
CHART_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")


class Taint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str
    value: Optional[str] = None
    effect: str


def _parse_taints(value: Any) -> Any:
    """``"key=value:Effect,key:Effect"`` -> taints; a YAML list of such strings or mappings works too."""
    items = _split_csv(value) if isinstance(value, str) else value
    if not isinstance(items, list):
        return items
    out: list[Any] = []
    for item in items:
        if not isinstance(item, str):
            out.append(item)
            continue
        match = TAINT_RE.match(item.strip())
        if not match:
            raise ValueError(f"invalid taint '{item}', use format: key=value:Effect or key:Effect")
        key, val, effect = match.groups()
        out.append({"key": key, "value": val, "effect": effect})
    return out


Taints = Annotated[list[Taint], BeforeValidator(_parse_taints)]


def _check_taint_effects(subject: str, taints: list[Taint]) -> None:
    for taint in taints:
        if taint.effect not in TAINT_EFFECTS:
            raise FieldProblem(
                "taints",
                f"{subject}: invalid taint effect '{taint.effect}' (must be one of {', '.join(TAINT_EFFECTS)})"
            )


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False, frozen=True)


class KarpenterPoolConfig(_Strict):
    """One Karpenter pool: an EC2NodeClass and a NodePool named after it (always AL2023)."""

    name: str
    instance_families: CsvList = []
    instance_sizes: CsvList = []
    capacity_types: CsvList = ["on-demand"]
    arch: CsvList = ["amd64"]
    cpu_limit: int = 100
    memory_limit_gb: int = 400
    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized"] = "WhenEmptyOrUnderutilized"
    consolidate_after: str = "30s"
    node_expiry: str = "720h"
    disruption_budget_nodes: str = "10%"
    disk: int = 20
    volume_type: str = "gp3"
    volume_iops: Optional[int] = None
    volume_throughput: Optional[int] = None
    ami_id: Optional[str] = None
    weight: Optional[int] = None
    labels: KeyValues = {}
    taints: Taints = []
    dedicated: bool = False

    @property
    def subject(self) -> str:
        return rules.pool_subject(self.name)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError(f"karpenter nodepool name '{v}' must be lowercase alphanumeric with dashes, max 63 chars")
        if v in RESERVED_POOL_NAMES:
            raise ValueError(f"karpenter nodepool name '{v}' is reserved")
        return v

    @field_validator("consolidation_policy", mode="before")
    @classmethod
    def _policy(cls, v: Any) -> Any:
        if v not in ("WhenEmpty", "WhenEmptyOrUnderutilized"):
            raise ValueError(f"invalid consolidation_policy '{v}' (must be WhenEmpty or WhenEmptyOrUnderutilized)")
        return v

    @model_validator(mode="after")
    def _rules(self) -> "KarpenterPoolConfig":
        check_pool_fields(self.subject, self)
        if self.volume_iops is not None:
            if self.volume_type != "gp3":
                raise FieldProblem("volume_iops", f"{self.subject}: volume_iops requires volume_type gp3 (currently {self.volume_type})")
            if not 3000 <= self.volume_iops <= 80000:
                raise FieldProblem("volume_iops", f"{self.subject}: invalid volume_iops '{self.volume_iops}' (must be 3000-80000)")
        if self.volume_throughput is not None:
            if self.volume_type != "gp3":
                raise FieldProblem(
                    "volume_throughput",
                    f"{self.subject}: volume_throughput requires volume_type gp3 (currently {self.volume_type})"
                )
            if not 125 <= self.volume_throughput <= 1000:
                raise FieldProblem(
                    "volume_throughput",
                    f"{self.subject}: invalid volume_throughput '{self.volume_throughput}' (must be 125-1000)"
                )
        if self.weight is not None and not 0 <= self.weight <= 100:
            raise FieldProblem("weight", f"{self.subject}: weight must be 0-100 (got '{self.weight}')")
        if self.ami_id is not None:
            problem = rules.invalid_ami_id(self.subject, self.ami_id)
            if problem:
                raise FieldProblem("ami_id", problem)
        return self


def check_pool_fields(subject: str, pool: Any) -> None:
    """The rules the default workload pool and every additional pool share."""
    for ct in pool.capacity_types:
        if ct not in CAPACITY_TYPES:
            raise FieldProblem("capacity_types", f"{subject}: invalid capacity type '{ct}' (must be on-demand or spot)")
    if not pool.capacity_types:
        raise FieldProblem("capacity_types", f"{subject}: capacity_types must not be empty")
    for arch in pool.arch:
        if arch not in ARCHES:
            raise FieldProblem("arch", f"{subject}: invalid arch '{arch}' (must be amd64 or arm64)")
    if not pool.arch:
        raise FieldProblem("arch", f"{subject}: arch must not be empty")
    if pool.cpu_limit <= 0:
        raise FieldProblem("cpu_limit", f"{subject}: cpu_limit must be positive (got '{pool.cpu_limit}')")
    if pool.memory_limit_gb <= 0:
        raise FieldProblem("memory_limit_gb", f"{subject}: memory_limit_gb must be positive (got '{pool.memory_limit_gb}')")
    if not DURATION_RE.match(pool.consolidate_after):
        raise FieldProblem("consolidate_after", f"{subject}: invalid consolidate_after '{pool.consolidate_after}' (use a duration like 30s, 5m or 1h)")
    if not EXPIRY_RE.match(pool.node_expiry):
        raise FieldProblem("node_expiry", f"{subject}: invalid node_expiry '{pool.node_expiry}' (use hours like 720h, or Never)")
    if not BUDGET_RE.match(pool.disruption_budget_nodes):
        raise FieldProblem(
            "disruption_budget_nodes",
            f"{subject}: invalid disruption_budget_nodes '{pool.disruption_budget_nodes}' (use a percentage like 10% or a count)"
        )
    if pool.disk <= 0:
        raise FieldProblem("disk", f"{subject}: disk must be positive (got '{pool.disk}')")
    if pool.volume_type not in VOLUME_TYPES:
        raise FieldProblem("volume_type", f"{subject}: invalid volume_type '{pool.volume_type}' (must be one of gp2, gp3, io1, io2)")
    if rules.NODEPOOL_LABEL in pool.labels:
        raise FieldProblem("labels", f"{subject}: label '{rules.NODEPOOL_LABEL}' is reserved")
    _check_taint_effects(subject, pool.taints)


class NodeGroupConfig(_Strict):
    """One EKS managed node group (always Amazon Linux 2023)."""

    kind: ClassVar[str] = "node group"
    type: Optional[str] = None
    disk: Optional[int] = None
    capacity_type: str = "ON_DEMAND"
    min_size: int = 1
    max_size: int = 100
    label: Optional[str] = "custom"
    """``convox.io/label`` on the group's nodes; an explicit null sets no label (not with ``dedicated``)."""
    id: Optional[int] = None
    tags: Optional[str] = None
    ami_id: Optional[str] = None
    dedicated: bool = False

    @field_validator("tags", mode="before")
    @classmethod
    def _tags_text(cls, v: Any) -> Any:
        if isinstance(v, Mapping):
            return ",".join(f"{k}={val}" for k, val in v.items())
        return v

    @model_validator(mode="after")
    def _rules(self) -> "NodeGroupConfig":
        if not self.type or not self.type.strip():
            raise ValueError(f"node type is required: '{self.type or ''}'")
        if not INSTANCE_TYPE_RE.match(self.type):
            raise ValueError(f"invalid node type '{self.type}' (must look like g4dn.xlarge)")
        if self.capacity_type not in ("ON_DEMAND", "SPOT"):
            raise ValueError(f"invalid capacity_type '{self.capacity_type}' (must be ON_DEMAND or SPOT)")
        if self.min_size < 0:
            raise ValueError(f"invalid min size: '{self.min_size}'")
        if self.max_size < 1:
            raise ValueError(f"invalid max size: '{self.max_size}'")
        if self.min_size > self.max_size:
            raise ValueError(f"invalid min size: '{self.min_size}' must be less or equal to max size")
        if self.dedicated and not self.label:
            raise ValueError("label is required when dedicated option is set")
        if self.label is not None and not LABEL_VALUE_RE.match(self.label):
            raise ValueError(f"label value '{self.label}' invalid, must contain only lowercase alphanumeric and dashes")
        if self.disk is not None and self.disk < 20:
            raise ValueError(f"node disk is less than 20: '{self.disk}'")
        self.tag_map()  # validates format and reserved keys
        if self.ami_id is not None:
            problem = rules.invalid_ami_id(f"{self.kind} '{self.type}'", self.ami_id)
            if problem:
                raise ValueError(problem)
        return self

    def tag_map(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if not self.tags:
            return out
        for part in self.tags.split(","):
            key, sep, value = part.partition("=")
            if not sep or not key.strip():
                raise ValueError("invalid 'tags', use format: k1=v1,k2=v2")
            if key.strip().lower() in ("name", "rack"):
                raise ValueError(f"reserved tag key '{key.strip()}' is not allowed")
            out[key.strip()] = value.strip()
        return out


class BuildGroupConfig(NodeGroupConfig):
    """A build lane: a node group tainted ``dedicated=build:NoSchedule``."""

    kind: ClassVar[str] = "build group"
    min_size: int = 0
    label: Optional[str] = "custom-build"


def _json_list(value: Any) -> Any:
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


def _backfill_ids(groups: list[NodeGroupConfig]) -> list[NodeGroupConfig]:
    ids = [g.id for g in groups]
    if all(i is None for i in ids):
        return [g.model_copy(update={"id": n}) for n, g in enumerate(groups)]
    if any(i is None for i in ids):
        raise ValueError("some node groups missing id property")
    seen: set[int] = set()
    for i in ids:
        if i in seen:
            raise ValueError(f"duplicate node group id is found: {i}")
        seen.add(i)  # type: ignore[arg-type]
    return groups


# The workload pool's fields, by the rack parameter that sets each.
WORKLOAD_KEYS = {
    "instance_families": "karpenter_instance_families",
    "capacity_types": "karpenter_capacity_types",
    "arch": "karpenter_arch",
    "cpu_limit": "karpenter_cpu_limit",
    "memory_limit_gb": "karpenter_memory_limit_gb",
    "consolidate_after": "karpenter_consolidate_after",
    "node_expiry": "karpenter_node_expiry",
    "disruption_budget_nodes": "karpenter_disruption_budget_nodes",
    "disk": "karpenter_node_disk",
    "volume_type": "karpenter_node_volume_type",
    "labels": "karpenter_node_labels",
    "taints": "karpenter_node_taints",
}


class RackConfig(_Strict):
    """The whole rack, parsed from the ``rack`` namespace of a stack config."""

    cluster_name: str = Field(min_length=1)
    node_role_name: Optional[str] = None

    # the default workload pool
    karpenter_node_os: str = "al2023"
    karpenter_instance_families: CsvList = []
    karpenter_instance_sizes: CsvList = []
    karpenter_arch: CsvList = ["amd64"]
    karpenter_capacity_types: CsvList = ["on-demand"]
    karpenter_cpu_limit: int = 100
    karpenter_memory_limit_gb: int = 400
    karpenter_consolidation_enabled: bool = True
    karpenter_consolidate_after: str = "30s"
    karpenter_node_expiry: str = "720h"
    karpenter_disruption_budget_nodes: str = "10%"
    karpenter_node_disk: int = 20
    karpenter_node_volume_type: str = "gp3"
    karpenter_node_labels: KeyValues = {}
    karpenter_node_taints: Taints = []
    karpenter_ami_alias: str = "al2023@latest"
    additional_karpenter_nodepools_config: Annotated[list[KarpenterPoolConfig], BeforeValidator(_json_list)] = []

    # managed node groups and the GPU tier
    node_disk: int = 20
    node_group_role_name: Optional[str] = None
    """An existing IAM role (name) for every managed node group; default: each group gets its own."""
    additional_node_groups_config: Annotated[list[NodeGroupConfig], BeforeValidator(_json_list)] = []
    additional_build_groups_config: Annotated[list[BuildGroupConfig], BeforeValidator(_json_list)] = []
    nvidia_device_plugin_enable: bool = False
    nvidia_device_time_slicing_replicas: int = 1
    gpu_observability_enable: bool = False
    gpu_observability_chart_version: str = "4.8.2"
    gpu_observability_service_monitor: bool = False

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
        if not AL2023_ALIAS_RE.match(v):
            raise ValueError(f"invalid karpenter_ami_alias '{v}' (must be al2023@latest or al2023@vYYYYMMDD)")
        return v

    @field_validator("additional_karpenter_nodepools_config")
    @classmethod
    def _unique_pools(cls, pools: list[KarpenterPoolConfig]) -> list[KarpenterPoolConfig]:
        seen: set[str] = set()
        for pool in pools:
            if pool.name in seen:
                raise ValueError(f"duplicate karpenter nodepool name: {pool.name}")
            seen.add(pool.name)
        return pools

    @field_validator("additional_node_groups_config", "additional_build_groups_config")
    @classmethod
    def _ids(cls, groups: list[NodeGroupConfig]) -> list[NodeGroupConfig]:
        return _backfill_ids(groups)

    @field_validator("node_disk")
    @classmethod
    def _node_disk(cls, v: int) -> int:
        if v < 20:
            raise ValueError(f"node disk is less than 20: '{v}'")
        return v

    @field_validator("node_group_role_name")
    @classmethod
    def _role_name(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not IAM_ROLE_NAME_RE.match(v):
            raise ValueError(f"invalid node_group_role_name '{v}' (must be an IAM role name, not an ARN)")
        return v

    @field_validator("nvidia_device_time_slicing_replicas")
    @classmethod
    def _replicas(cls, v: int) -> int:
        if v < 1:
            raise ValueError(f"invalid nvidia_device_time_slicing_replicas '{v}' (must be 1 or more)")
        return v

    @field_validator("gpu_observability_enable")
    @classmethod
    def _observability(cls, v: bool, info: ValidationInfo) -> bool:
        if v and not info.data.get("nvidia_device_plugin_enable"):
            raise ValueError("gpu_observability_enable=true requires nvidia_device_plugin_enable=true")
        return v

    @field_validator("gpu_observability_chart_version")
    @classmethod
    def _chart_version(cls, v: str) -> str:
        if not CHART_VERSION_RE.match(v):
            raise ValueError(f"invalid gpu_observability_chart_version '{v}' (must be a chart version like 4.8.2)")
        return v

    @model_validator(mode="after")
    def _rules(self) -> "RackConfig":
        try:
            workload = self.workload_pool_view()
        except ValidationError as exc:
            problem = (exc.errors()[0].get("ctx") or {}).get("error")
            if isinstance(problem, FieldProblem):
                raise FieldProblem(WORKLOAD_KEYS[problem.field], str(problem)) from None
            raise
        gpu = rules.gpu_families(workload.instance_families)
        message = gpu and rules.gpu_lane_on_bottlerocket(workload.subject, workload.os, f"instance families {','.join(gpu)}")
        if message:
            raise FieldProblem("karpenter_instance_families", message)
        return self

    def workload_pool_view(self) -> "PoolSpec":
        return PoolSpec(
            name="workload",
            os=self.karpenter_node_os,
            ami_alias=self.karpenter_ami_alias if self.karpenter_node_os == "al2023" else "bottlerocket@latest",
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
        )

    @property
    def karpenter_node_role(self) -> str:
        return self.node_role_name or f"KarpenterNodeRole-{self.cluster_name}"

    def pools(self) -> list["PoolSpec"]:
        """The default workload pool first, then every additional pool (always AL2023)."""
        return [self.workload_pool_view()] + [
            PoolSpec.from_pool(p, ami_alias=self.karpenter_ami_alias) for p in self.additional_karpenter_nodepools_config
        ]


class PoolSpec(KarpenterPoolConfig):
    """What a ``KarpenterPool`` builds: a validated pool plus its OS and AMI selection.

    The default workload pool is one too, so ``workload`` is a valid name here.
    """

    os: Literal["al2023", "bottlerocket"] = "al2023"
    ami_alias: str = "al2023@latest"

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError(f"karpenter nodepool name '{v}' must be lowercase alphanumeric with dashes, max 63 chars")
        return v


    @property
    def is_gpu(self) -> bool:
        return rules.is_gpu_lane(self.instance_families)

    @classmethod
    def from_pool(cls, pool: KarpenterPoolConfig, ami_alias: str = "al2023@latest") -> "PoolSpec":
        return cls(os="al2023", ami_alias=ami_alias, **pool.model_dump())


# ---- reading a stack config ------------------------------------------------------------------------


def _loc(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not str(part).startswith("function-"):
            path += f".{part}" if path else str(part)
    return path


def _error_text(error: Mapping[str, Any]) -> str:
    loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and ("[" in p or p.startswith("function-"))))
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, FieldProblem):
        loc += (cause.field,)
    path = f"{NAMESPACE}:{_loc(loc)}" if loc else f"{NAMESPACE}"
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"{path}: unknown field"
    if kind == "missing":
        return f"{path}: required"
    if kind == "value_error":
        return f"{path}: {str(error['msg']).removeprefix('Value error, ')}"
    return f"{path}: {error['msg'].lower()} (got {json.dumps(error.get('input'), default=str)})"


def parse_rack_config(values: Mapping[str, Any]) -> RackConfig:
    """Validate the ``rack`` namespace's values (keys without the ``rack:`` prefix)."""
    try:
        return RackConfig.model_validate(dict(values))
    except ValidationError as exc:
        raise ConfigError("\n".join(_error_text(e) for e in exc.errors())) from None


def decode_config_value(raw: Any) -> Any:
    """Structured stack config reaches a program as JSON text; plain strings stay strings."""
    if isinstance(raw, str) and raw[:1] in "[{":
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return raw


def rack_values(all_config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``rack:*`` entries of a full config map, keyed without the namespace."""
    prefix = f"{NAMESPACE}:"
    return {k[len(prefix) :]: decode_config_value(v) for k, v in all_config.items() if k.startswith(prefix)}


def load_stack_config() -> RackConfig:
    """Read and validate the current stack's ``rack`` config (the real engine's or the offline one's).

    ``pulumi.Config`` cannot list its keys, and unknown keys must be errors, so this reads the
    runtime's whole config map.
    """
    from pulumi.runtime import config as runtime_config

    merged = dict(runtime_config.get_config_env())
    merged.update(runtime_config.CONFIG.get())
    return parse_rack_config(rack_values(merged))
