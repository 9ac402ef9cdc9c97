"""The specs the components take: one validated, immutable value per lane.

``PoolSpec`` (a Karpenter pool) and ``NodeGroupSpec`` (an EKS managed node group) are pydantic
models: building one checks every rule that holds for the lane whatever its source, once, with the
seeds' wording; a component trusts what its spec guarantees and checks only what needs the cloud
(the AMI's facts). ``RackSpec`` is a whole rack. The seeds' parameter names and value shapes
(comma lists, ``k=v`` labels, JSON strings) are translated into these in ``params``.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Annotated, Any, Literal, Mapping, Optional, Sequence, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from . import syntax
from .errors import ConfigError
from .policies import instances, rules, upstream


class FieldProblem(ValueError):
    """A rule broken by one field; an error's key path ends with that field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def key_path(loc: Sequence[Any]) -> str:
    """``("pools", 0, "disk")`` -> ``pools[0].disk`` (pydantic's own validator names are dropped)."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not str(part).startswith("function-") and "[" not in str(part):
            path += f".{part}" if path else str(part)
    return path


def error_message(error: Mapping[str, Any]) -> str:
    """One pydantic error in the seeds' words: the rule's own message, or what was expected and got.

    One problem is one line: a value with a line break in it (``name: |`` gives ``gpu\\n``) shows the
    break escaped, so the error names the value as written and cannot split into lines of its own."""
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required"
    if kind == "value_error":
        text = str(error["msg"]).removeprefix("Value error, ")
    else:
        text = f"{str(error['msg']).lower()} (got {json.dumps(error.get('input'), default=str)})"
    return text.replace("\r", "\\r").replace("\n", "\\n")


def error_loc(error: Mapping[str, Any]) -> tuple[Any, ...]:
    """Where an error is: its location, ending with the field a ``FieldProblem`` names."""
    loc = tuple(error["loc"])
    cause = (error.get("ctx") or {}).get("error")
    return loc + (cause.field,) if isinstance(cause, FieldProblem) else loc


class SpecError(ConfigError, ValueError):
    """A spec built with values its rules refuse: one ``<Spec>.<field>: <problem>`` line each."""

    def __init__(self, spec: str, exc: ValidationError) -> None:
        self.errors = exc.errors()
        """pydantic's errors, for callers that name the paths in their own terms (the stack config)."""
        lines = [(key_path(error_loc(e)), error_message(e)) for e in self.errors]
        super().__init__("\n".join(f"{spec}.{path}: {message}" if path else f"{spec}: {message}"
                                    for path, message in lines))


def _cluster_name(name: str) -> str:
    problem = syntax.eks_cluster_name_problem(name)
    if problem:
        raise ValueError(f"invalid cluster_name '{name}' ({problem})")
    return name


ClusterName = Annotated[str, AfterValidator(_cluster_name)]
"""An EKS cluster name, as the EKS API takes it."""


def numbers_only(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    """Refuse ``true``/``false`` for a number field: pydantic's lax mode takes them as 1 and 0, so a YAML
    ``weight: true`` would silently become weight 1. Numbers and numeric strings pass."""
    if isinstance(value, bool) and info.field_name in model.model_fields:
        kinds = {model.model_fields[info.field_name].annotation, *get_args(model.model_fields[info.field_name].annotation)}
        if bool not in kinds and kinds & {int, float}:
            raise ValueError(f"expected a number, got {str(value).lower()}")
    return value


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise SpecError(type(self).__name__, exc) from None

    @field_validator("*", mode="before")
    @classmethod
    def _numbers(cls, value: Any, info: ValidationInfo) -> Any:
        return numbers_only(cls, value, info)


# A pool's name is a Kubernetes object name (DNS-1123 label) that, as the seeds require, starts with a letter.
NAME_RE = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
# The NodePool CRD's patterns (Karpenter v1.14.1): consolidateAfter and expireAfter, disruption budgets.
DURATION_RE = re.compile(r"([0-9]+(s|m|h))+|Never")
BUDGET_RE = re.compile(r"(100|[0-9]{1,2})%|[0-9]+")
GO_MAX_DURATION_S = (2**63 - 1) / 1e9
"""Karpenter reads a NodePool's durations with Go's ``time.ParseDuration``, an int64 of nanoseconds:
about 2562047h. A longer duration matches the CRD's pattern and then cannot be decoded."""
BUDGET_NODES_MAX = 2**31 - 1
"""A budget's node count becomes an ``intstr.IntOrString``, whose integer is 32 bits."""
AL2023_ALIAS_RE = re.compile(r"al2023@(latest|v[0-9]{8})")
# The seeds' node-group label: lowercase alphanumerics and dashes; as a Kubernetes label value, at
# most 63 and starting and ending with an alphanumeric.
LABEL_VALUE_RE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
CHART_VERSION_RE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.-]+)?")
K8S_VERSION_RE = re.compile(r"1\.[0-9]{1,2}")
VPC_ID_RE = re.compile(r"vpc-(?:[0-9a-f]{8}|[0-9a-f]{17})")
SUBNET_ID_RE = re.compile(r"subnet-(?:[0-9a-f]{8}|[0-9a-f]{17})")
CIDR_RE = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}")
CAPACITY_TYPES = ("on-demand", "spot")
ARCHES = ("amd64", "arm64")
VOLUME_TYPES = tuple(upstream.EBS_VOLUMES)
TAINT_EFFECTS = syntax.TAINT_EFFECTS
RESERVED_TAG_KEYS = ("name", "rack")
WEIGHT_RANGE = (1, 100)
"""The NodePool CRD's bounds for ``spec.weight``."""
NODEPOOL_LABELS_MAX = 100
"""The NodePool CRD's ``maxProperties`` for template labels."""
TAGS_MAX = 50
"""AWS takes at most 50 tags per resource."""
EKS_SCALING_MAX = 2**31 - 1
"""EKS's scaling sizes (``NodegroupScalingConfig``) are 32-bit integers."""
RACK_TAGS = 4
"""Tags the rack adds to a node group: ``rack`` and the three AMI facts it records for the pack."""


KARPENTER_RESTRICTED_TAGS = ("eks:eks-cluster-name", "kubernetes.io/cluster", "karpenter.sh/nodepool",
                             "karpenter.sh/nodeclaim", "karpenter.k8s.aws/ec2nodeclass")
"""Tag keys (and, for ``kubernetes.io/cluster``, prefixes) the EC2NodeClass CRD refuses in ``spec.tags``:
Karpenter sets them on what it launches (its CEL rules, ``tag contains a restricted tag matching ...``)."""


def karpenter_tags_problem(tags: Mapping[str, str]) -> Optional[str]:
    """A tag key the EC2NodeClass CRD refuses, or None."""
    for key in tags:
        for restricted in KARPENTER_RESTRICTED_TAGS:
            if key == restricted or (restricted == "kubernetes.io/cluster" and key.startswith(restricted)):
                return f"tag key '{key}' is Karpenter's own (the EC2NodeClass refuses it in its tags)"
    return None


def tags_problem(tags: Mapping[str, str], added: int = RACK_TAGS, by: str = "the rack") -> Optional[str]:
    """What AWS would refuse in these tags (each key and value, and how many, with ``added`` more that
    ``by`` adds to the same resource), or None."""
    for key, value in tags.items():
        problem = syntax.tag_problem(key, value)
        if problem:
            return f"invalid tags: {problem}"
    if len(tags) > TAGS_MAX - added:
        return f"at most {TAGS_MAX - added} tags (AWS takes {TAGS_MAX}; {by} adds {added})"
    return None


KARPENTER_INSTANCE_TAGS = 5
"""Tags Karpenter puts on each instance it launches besides the EC2NodeClass's: ``karpenter.sh/nodepool``,
``karpenter.sh/nodeclaim``, ``karpenter.k8s.aws/ec2nodeclass``, ``kubernetes.io/cluster/<cluster>`` and
``eks:eks-cluster-name`` (the keys the EC2NodeClass CRD keeps for them)."""
POOL_TAGS = 2
"""Tags every EC2NodeClass of the rack carries: ``karpenter.sh/discovery`` and ``convox.io/nodepool``."""
RACK_OWN_TAG_KEYS = (upstream.DISCOVERY_TAG, rules.NODEPOOL_LABEL)
"""Tag keys the rack sets itself on what Karpenter launches (a user's value would be overwritten)."""


def pool_tags_problem(tags: Mapping[str, str]) -> Optional[str]:
    """What a pool's EC2NodeClass ``tags`` may not hold: anything AWS refuses, more than fit on an
    instance Karpenter launches beside its own and the pool's tags, Karpenter's keys, the rack's keys."""
    problem = (tags_problem(tags, KARPENTER_INSTANCE_TAGS + POOL_TAGS, "Karpenter with the pool")
               or karpenter_tags_problem(tags))
    if problem:
        return problem
    for key in tags:
        if key in RACK_OWN_TAG_KEYS:
            return f"reserved tag key '{key}' is not allowed"
    return None


def rack_tags_problem(tags: Mapping[str, str]) -> Optional[str]:
    """What the rack's ``tags`` may not hold: what no pool takes, and the keys node groups write."""
    problem = pool_tags_problem(tags)
    if problem:
        return problem
    for key in tags:
        if key.strip().lower() in RESERVED_TAG_KEYS:
            return f"reserved tag key '{key}' is not allowed"
    return None


_UNIT_S = {"h": 3600, "m": 60, "s": 1}


def duration_too_long(text: str) -> bool:
    """Whether a CRD-pattern duration (``1h30m``, ``Never``) is past what Go's time.ParseDuration takes."""
    if text == "Never":
        return False
    return sum(int(n) * _UNIT_S[unit] for n, unit in re.findall(r"([0-9]+)([hms])", text)) > GO_MAX_DURATION_S


BUILD_LABEL = "convox-build"
BUILD_TAINT_KEY = "dedicated"
SYSTEM_NODE_LABEL = "convox.io/system-node"
"""The seeds' system nodes carry it as a label and as a ``NoSchedule`` taint, both ``true``."""


class Taint(Spec):
    """A Kubernetes taint, as a NodePool writes it."""

    key: str
    value: Optional[str] = None
    effect: str

    def as_dict(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


# ---- Karpenter pools ----------------------------------------------------------------------------------


class PoolSpec(Spec):
    """One Karpenter pool: an EC2NodeClass and a NodePool, both named ``name``."""

    name: str
    """The EC2NodeClass and NodePool name (``metadata.name``); lowercase, digits and dashes, at most 63."""
    os: Literal["al2023", "bottlerocket"] = "al2023"
    """The node OS. Default ``al2023``; ``bottlerocket`` takes no GPU families and no pinned AMI."""
    ami_alias: str = "al2023@latest"
    """The AL2023 AMI alias when no ``ami_id`` is pinned: ``al2023@latest`` or ``al2023@vYYYYMMDD``."""
    instance_families: list[str] = []
    """Instance families the pool may launch (``g5``); default: any."""
    instance_sizes: list[str] = []
    """Instance sizes (``xlarge``); default: any."""
    capacity_types: list[str] = ["on-demand"]
    """``on-demand`` and/or ``spot``. Default ``on-demand``."""
    arch: list[str] = ["amd64"]
    """``amd64`` and/or ``arm64``. Default ``amd64``."""
    cpu_limit: int = 100
    """The pool's CPU limit (cores). Default 100."""
    memory_limit_gb: int = 400
    """The pool's memory limit (GiB). Default 400."""
    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized"] = "WhenEmptyOrUnderutilized"
    """Karpenter's consolidation policy. Default ``WhenEmptyOrUnderutilized``."""
    consolidate_after: str = "30s"
    """How long a node stays before consolidation: ``30s``, ``5m``, ``1h30m`` or ``Never``. Default ``30s``."""
    node_expiry: str = "720h"
    """Node lifetime (``expireAfter``): a duration like ``720h`` or ``1h30m``, or ``Never``. Default ``720h``."""
    disruption_budget_nodes: str = "10%"
    """Nodes disrupted at once: a percentage (``10%``) or a count. Default ``10%``."""
    disk: int = 20
    """Root volume GiB (Bottlerocket: the data volume). Default 20."""
    volume_type: str = "gp3"
    """EBS volume type: gp2, gp3, io1 or io2. Default ``gp3``."""
    volume_iops: Optional[int] = None
    """Provisioned IOPS: gp3 3000-80000 (at most 500 per GiB), io1 100-64000 (50 per GiB), io2
    100-256000 (1000 per GiB); required for io1 and io2, refused for gp2. Default: gp3's 3000."""
    volume_throughput: Optional[int] = None
    """Throughput MiB/s, gp3 only: 125-2000, at most 0.25 per IOPS. Default: gp3's 125."""
    ami_id: Optional[str] = None
    """A custom AL2023 AMI to pin instead of the alias."""
    weight: Optional[int] = None
    """The NodePool's weight (preference among pools), 1-100. Default: none."""
    labels: dict[str, str] = {}
    """Extra node labels; ``convox.io/nodepool`` is the pool's own."""
    taints: list[Taint] = []
    """Extra node taints."""
    dedicated: bool = False
    """Taint the nodes ``dedicated-node=<name>:NoSchedule``. Default false."""

    @property
    def subject(self) -> str:
        return rules.pool_subject(self.name)

    @property
    def alias(self) -> Optional[str]:
        """The AMI alias the EC2NodeClass selects (None when an AMI is pinned)."""
        if self.os == "bottlerocket":
            return "bottlerocket@latest"
        return None if self.ami_id else self.ami_alias

    @property
    def is_gpu(self) -> bool:
        """Every family is an NVIDIA GPU family: the pool gets the GPU-vendor label."""
        return instances.is_nvidia_lane(self.instance_families)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.fullmatch(v):
            raise ValueError(f"karpenter nodepool name '{v}' must be lowercase alphanumeric with dashes, max 63 chars")
        return v

    @field_validator("consolidation_policy", mode="before")
    @classmethod
    def _policy(cls, v: Any) -> Any:
        if v not in ("WhenEmpty", "WhenEmptyOrUnderutilized"):
            raise ValueError(f"invalid consolidation_policy '{v}' (must be WhenEmpty or WhenEmptyOrUnderutilized)")
        return v

    @model_validator(mode="after")
    def _rules(self) -> "PoolSpec":
        s = self.subject
        for family in self.instance_families:
            problem = syntax.instance_family_problem(family)
            if problem:
                raise FieldProblem("instance_families", f"{s}: instance family '{family}' {problem}")
        problem = _mac_problem(s, self.instance_families)
        if problem:
            raise FieldProblem("instance_families", problem)
        for size in self.instance_sizes:
            problem = syntax.instance_size_problem(size)
            if problem:
                raise FieldProblem("instance_sizes", f"{s}: instance size '{size}' {problem}")
        for ct in self.capacity_types:
            if ct not in CAPACITY_TYPES:
                raise FieldProblem("capacity_types", f"{s}: invalid capacity type '{ct}' (must be on-demand or spot)")
        if not self.capacity_types:
            raise FieldProblem("capacity_types", f"{s}: capacity_types must not be empty")
        for arch in self.arch:
            if arch not in ARCHES:
                raise FieldProblem("arch", f"{s}: invalid arch '{arch}' (must be amd64 or arm64)")
        if not self.arch:
            raise FieldProblem("arch", f"{s}: arch must not be empty")
        if self.cpu_limit <= 0:
            raise FieldProblem("cpu_limit", f"{s}: cpu_limit must be positive (got '{self.cpu_limit}')")
        if self.memory_limit_gb <= 0:
            raise FieldProblem("memory_limit_gb", f"{s}: memory_limit_gb must be positive (got '{self.memory_limit_gb}')")
        if not DURATION_RE.fullmatch(self.consolidate_after) or duration_too_long(self.consolidate_after):
            raise FieldProblem("consolidate_after", f"{s}: invalid consolidate_after '{self.consolidate_after}' (use a duration like 30s, 5m or 1h)")
        if not DURATION_RE.fullmatch(self.node_expiry) or duration_too_long(self.node_expiry):
            raise FieldProblem("node_expiry", f"{s}: invalid node_expiry '{self.node_expiry}' (use hours like 720h, or Never)")
        budget = self.disruption_budget_nodes
        if not BUDGET_RE.fullmatch(budget) or (not budget.endswith("%") and int(budget) > BUDGET_NODES_MAX):
            raise FieldProblem(
                "disruption_budget_nodes",
                f"{s}: invalid disruption_budget_nodes '{self.disruption_budget_nodes}' (use a percentage like 10% or a count)",
            )
        if self.volume_type not in VOLUME_TYPES:
            raise FieldProblem("volume_type", f"{s}: invalid volume_type '{self.volume_type}' (must be one of gp2, gp3, io1, io2)")
        self._volume_rules()
        self._label_rules()
        self._taint_rules()
        if self.weight is not None and not WEIGHT_RANGE[0] <= self.weight <= WEIGHT_RANGE[1]:
            raise FieldProblem("weight", f"{s}: weight must be 1-100 (got '{self.weight}')")
        if not AL2023_ALIAS_RE.fullmatch(self.ami_alias):
            raise FieldProblem("ami_alias", f"invalid karpenter_ami_alias '{self.ami_alias}' (must be al2023@latest or al2023@vYYYYMMDD)")
        gpu = instances.nvidia_families(self.instance_families)
        problem = gpu and rules.gpu_lane_on_bottlerocket(s, self.os, f"instance families {','.join(gpu)}")
        if problem:
            raise FieldProblem("instance_families", problem)
        if self.ami_id is not None:
            problem = rules.invalid_ami_id(s, self.ami_id) or rules.pinned_ami_not_al2023(s, self.os)
            if problem:
                raise FieldProblem("ami_id", problem)
        else:
            problem = _needs_custom_nvidia_ami(s, self.instance_families)
            if problem:
                raise FieldProblem("instance_families", problem)
        return self

    def _volume_rules(self) -> None:
        """The EBS limits of the volume type (``upstream.EBS_VOLUMES``): size, IOPS and throughput."""
        s, kind = self.subject, self.volume_type
        limits = upstream.EBS_VOLUMES[kind]
        low, high = limits.size_gib[0], min(limits.size_gib[1], upstream.KARPENTER_VOLUME_MAX_GIB)
        if not low <= self.disk <= high:
            if self.disk <= 0:
                raise FieldProblem("disk", f"{s}: disk must be positive (got '{self.disk}')")
            raise FieldProblem("disk", f"{s}: disk must be {low}-{high} GiB for a {kind} volume (got '{self.disk}')")
        if self.os == "al2023" and not self.ami_id and self.disk < upstream.EKS_AMI_ROOT_SNAPSHOT_GIB:
            # EC2 refuses a root volume below its snapshot (InvalidBlockDeviceMapping); a pinned AMI's
            # snapshot is read at preview instead. Bottlerocket's data volume starts from a 1 GiB image.
            raise FieldProblem("disk", f"{s}: disk {self.disk} GiB is smaller than the root snapshot of the "
                                       f"EKS-optimized AL2023 AMI ({upstream.EKS_AMI_ROOT_SNAPSHOT_GIB} GiB)")
        iops = self.volume_iops
        if iops is not None:
            if limits.iops is None:
                raise FieldProblem("volume_iops", f"{s}: volume_iops requires volume_type gp3, io1 or io2 (currently {kind})")
            if not limits.iops[0] <= iops <= limits.iops[1]:
                raise FieldProblem("volume_iops", f"{s}: invalid volume_iops '{iops}' (must be {limits.iops[0]}-{limits.iops[1]})")
            most = max(limits.baseline_iops, (limits.iops_per_gib or 0) * self.disk)
            if iops > most:
                raise FieldProblem(
                    "volume_iops",
                    f"{s}: volume_iops {iops} is more than a {self.disk} GiB {kind} volume takes "
                    f"({limits.iops_per_gib} per GiB: at most {most}; grow disk or lower volume_iops)",
                )
        elif limits.iops_required:
            raise FieldProblem(
                "volume_iops",
                f"{s}: volume_type {kind} needs volume_iops (EC2 refuses an {kind} volume without provisioned IOPS, "
                f"so no node would launch)",
            )
        throughput = self.volume_throughput
        if throughput is not None:
            if limits.throughput_mibs is None:
                raise FieldProblem("volume_throughput", f"{s}: volume_throughput requires volume_type gp3 (currently {kind})")
            low, high = limits.throughput_mibs
            if not low <= throughput <= high:
                raise FieldProblem("volume_throughput", f"{s}: invalid volume_throughput '{throughput}' (must be {low}-{high})")
            provisioned = iops if iops is not None else limits.baseline_iops
            most = max(limits.baseline_throughput_mibs, int(provisioned * (limits.throughput_per_iops or 0)))
            if throughput > most:
                raise FieldProblem(
                    "volume_throughput",
                    f"{s}: volume_throughput {throughput} MiB/s needs more than {provisioned} IOPS "
                    f"({limits.throughput_per_iops:g} MiB/s per IOPS: at most {most}; raise volume_iops)",
                )

    def _label_rules(self) -> None:
        s = self.subject
        if rules.NODEPOOL_LABEL in self.labels:
            raise FieldProblem("labels", f"{s}: label '{rules.NODEPOOL_LABEL}' is reserved")
        for key, value in self.labels.items():
            problem = syntax.qualified_name_problem(key)
            if problem:
                raise FieldProblem("labels", f"{s}: invalid label key '{key}' ({problem})")
            domain = syntax.restricted_label_domain(key)
            if domain:
                raise FieldProblem("labels", f"{s}: label '{key}' is in the restricted domain {domain} (Karpenter and the kubelet refuse it)")
            problem = syntax.label_value_problem(value)
            if problem:
                raise FieldProblem("labels", f"{s}: invalid value '{value}' of label '{key}' ({problem})")
        if len(self.node_labels()) > NODEPOOL_LABELS_MAX:
            raise FieldProblem("labels", f"{s}: at most {NODEPOOL_LABELS_MAX} node labels (the NodePool's limit, the rack's own included)")

    def _taint_rules(self) -> None:
        s = self.subject
        seen: set[tuple[str, str]] = set()
        for taint in self.node_taints():
            key, effect = taint["key"], taint["effect"]
            if effect not in TAINT_EFFECTS:
                raise FieldProblem("taints", f"{s}: invalid taint effect '{effect}' (must be one of {', '.join(TAINT_EFFECTS)})")
            problem = syntax.qualified_name_problem(key)
            if problem:
                raise FieldProblem("taints", f"{s}: invalid taint key '{key}' ({problem})")
            value = taint.get("value")
            if value == "":  # the NodePool CRD's pattern for a taint value needs a character
                raise FieldProblem("taints", f"{s}: taint '{key}' has an empty value (write {key}:{effect} for a taint without one)")
            problem = syntax.label_value_problem(value) if value else None
            if problem:
                raise FieldProblem("taints", f"{s}: invalid value '{value}' of taint '{key}' ({problem})")
            if (key, effect) in seen:
                why = " (dedicated adds it already)" if key == rules.DEDICATED_TAINT_KEY and self.dedicated else ""
                raise FieldProblem("taints", f"{s}: duplicate taint {key}:{effect}{why}")
            seen.add((key, effect))

    @property
    def offers_accelerators(self) -> bool:
        """Whether the pool may launch GPU or other accelerated instances: only an AL2023 pool that
        lists accelerated families itself; every other pool asks Karpenter for none."""
        return self.os == "al2023" and any(instances.is_accelerated_family(f) for f in self.instance_families)

    def node_labels(self) -> dict[str, str]:
        """The NodePool's node labels: the user's, the GPU-vendor label on a GPU pool, and
        ``convox.io/nodepool=<name>``, which always wins."""
        labels = dict(self.labels)
        if self.is_gpu:
            labels[rules.GPU_VENDOR_LABEL] = rules.GPU_VENDOR_NVIDIA
        labels[rules.NODEPOOL_LABEL] = self.name
        return labels

    def node_taints(self) -> list[dict[str, str]]:
        """``dedicated-node=<name>:NoSchedule`` first when dedicated, then the user's."""
        taints = [{"key": rules.DEDICATED_TAINT_KEY, "value": self.name, "effect": "NoSchedule"}] if self.dedicated else []
        return taints + [t.as_dict() for t in self.taints]


def _mac_problem(subject: str, instance_types: list[str]) -> Optional[str]:
    """EC2 Mac instances run only on Dedicated Hosts, with macOS: neither an EKS managed node group nor
    Karpenter launches them, and no EKS node AMI boots on them (EC2 User Guide, Amazon EC2 Mac instances)."""
    macs = sorted({instances.family_of(t) for t in instance_types if instances.family_of(t).startswith("mac")})
    if not macs:
        return None
    return f"{subject}: instance family {macs[0]} runs only on EC2 Dedicated Hosts with macOS, which EKS nodes cannot use"


def _needs_custom_nvidia_ami(subject: str, instance_types: list[str]) -> Optional[str]:
    """NVIDIA families the EKS-optimized AL2023 NVIDIA AMI cannot drive (its driver is 580; G7 needs 595
    or newer, P2 470 or older: amazon-eks-ami doc/usage/g7-ami.md, the EKS AMI docs)."""
    unserved = sorted({instances.family_of(t) for t in instance_types
                       if instances.is_nvidia_gpu_family(t) and not instances.facts(t).eks_nvidia_ami})
    if not unserved:
        return None
    what = f"instance family {unserved[0]} needs" if len(unserved) == 1 else f"instance families {', '.join(unserved)} need"
    return (
        f"{subject}: {what} an NVIDIA driver the EKS-optimized AL2023 NVIDIA AMI does not ship "
        f"(pin an ami_id built for it, e.g. amazon-eks-ami with nvidia_driver_major_version=595 for G7)"
    )


# ---- managed node groups ---------------------------------------------------------------------------------


class NodeGroupSpec(Spec):
    """One EKS managed node group on Amazon Linux 2023."""

    instance_type: str
    """The one instance type of the group (``g4dn.xlarge``)."""
    name: Optional[str] = None
    """How messages name the group before its component exists (the Rack sets it to the component name)."""
    build: bool = False
    """A build lane: ``dedicated=build:NoSchedule`` and ``convox-build=true``. Default false."""
    system: bool = False
    """The rack's system lane: ``convox.io/system-node=true``, as a label and a NoSchedule taint. Default false."""
    disk: int = upstream.SEEDS_NODE_DISK_GIB
    """Root volume GiB, at least 20. Default 20 (in the stack config: ``node_disk``)."""
    capacity_type: str = "ON_DEMAND"
    """``ON_DEMAND`` or ``SPOT``. Default ``ON_DEMAND``."""
    min_size: int = 1
    """Minimum (and initial) size. Default 1 (build lanes in the stack config: 0)."""
    max_size: int = 100
    """Maximum size. Default 100."""
    label: Optional[str] = "custom"
    """``convox.io/label`` on the nodes; ``null`` sets none (not with ``dedicated``). Default ``custom``
    (build lanes in the stack config: ``custom-build``)."""
    tags: dict[str, str] = {}
    """AWS tags for the group (a mapping, or ``k=v,k2=v2``); ``name`` and ``rack`` are reserved, in any case."""
    ami_id: Optional[str] = None
    """A custom AL2023 AMI to pin instead of EKS's AMI for the instance type."""
    dedicated: bool = False
    """Taint the nodes ``dedicated-node=<label>:NoSchedule``. Default false."""

    @property
    def subject(self) -> str:
        return rules.node_group_subject(self.name) if self.name else "node group"

    @model_validator(mode="after")
    def _rules(self) -> "NodeGroupSpec":
        if not self.instance_type.strip():
            raise FieldProblem("instance_type", f"node type is required: '{self.instance_type}'")
        if syntax.instance_type_problem(self.instance_type):
            raise FieldProblem("instance_type", f"invalid node type '{self.instance_type}' (must look like g4dn.xlarge)")
        if self.capacity_type not in ("ON_DEMAND", "SPOT"):
            raise FieldProblem("capacity_type", f"invalid capacity_type '{self.capacity_type}' (must be ON_DEMAND or SPOT)")
        if self.min_size < 0:
            raise FieldProblem("min_size", f"invalid min size: '{self.min_size}'")
        if self.max_size < 1:
            raise FieldProblem("max_size", f"invalid max size: '{self.max_size}'")
        if self.max_size > EKS_SCALING_MAX:
            raise FieldProblem("max_size", f"invalid max size: '{self.max_size}' (EKS takes at most {EKS_SCALING_MAX})")
        if self.min_size > self.max_size:
            raise FieldProblem("min_size", f"invalid min size: '{self.min_size}' must be less or equal to max size")
        if self.dedicated and not self.label:
            raise FieldProblem("label", "label is required when dedicated option is set")
        if self.label is not None and not LABEL_VALUE_RE.fullmatch(self.label):
            raise FieldProblem("label", f"label value '{self.label}' invalid, must contain only lowercase alphanumeric and dashes")
        if self.disk < upstream.SEEDS_NODE_DISK_GIB:
            raise FieldProblem("disk", f"node disk is less than 20: '{self.disk}'")
        most = upstream.EBS_VOLUMES["gp3"].size_gib[1]
        if self.disk > most:
            raise FieldProblem("disk", f"node disk is more than a gp3 volume takes ({most} GiB): '{self.disk}'")
        for key in self.tags:
            if key.strip().lower() in RESERVED_TAG_KEYS:
                raise FieldProblem("tags", f"reserved tag key '{key}' is not allowed")
        problem = tags_problem(self.tags)
        if problem:
            raise FieldProblem("tags", problem)
        problem = _mac_problem(self.subject, [self.instance_type])
        if problem:
            raise FieldProblem("instance_type", problem)
        if self.ami_id is not None:
            problem = rules.invalid_ami_id(self.subject, self.ami_id)
            if problem:
                raise FieldProblem("ami_id", problem)
        else:
            problem = _needs_custom_nvidia_ami(self.subject, [self.instance_type])
            if problem:
                raise FieldProblem("instance_type", problem)
        return self

    @property
    def is_gpu(self) -> bool:
        return instances.is_nvidia_gpu_family(self.instance_type)

    def node_labels(self) -> dict[str, str]:
        labels: dict[str, str] = {}
        if self.system:
            labels[SYSTEM_NODE_LABEL] = "true"
        if self.label:
            labels[rules.NODEGROUP_LABEL] = self.label
        if self.is_gpu:
            labels[rules.GPU_VENDOR_LABEL] = rules.GPU_VENDOR_NVIDIA
        if self.build:
            labels[BUILD_LABEL] = "true"
        return labels

    def node_taints(self) -> list[dict[str, str]]:
        """EKS taints (effects in the EKS API's spelling)."""
        taints: list[dict[str, str]] = []
        if self.system:
            taints.append({"key": SYSTEM_NODE_LABEL, "value": "true", "effect": "NO_SCHEDULE"})
        if self.build:
            taints.append({"key": BUILD_TAINT_KEY, "value": "build", "effect": "NO_SCHEDULE"})
        if self.dedicated and self.label:
            taints.append({"key": rules.DEDICATED_TAINT_KEY, "value": self.label, "effect": "NO_SCHEDULE"})
        if self.is_gpu:
            taints.append({"key": rules.GPU_TAINT_KEY, "value": "true", "effect": "NO_SCHEDULE"})
        return taints


# ---- the GPU tier's add-ons and the whole rack ---------------------------------------------------------


def time_slicing_problem(replicas: int) -> Optional[str]:
    if replicas < 1:
        return f"invalid nvidia_device_time_slicing_replicas '{replicas}' (must be 1 or more)"
    return None


def chart_version_problem(version: str, what: str) -> Optional[str]:
    if not CHART_VERSION_RE.fullmatch(version):
        return f"invalid {what} '{version}' (must be a chart version like 4.8.2)"
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
        problem = chart_version_problem(v, "gpu_observability_chart_version")
        if problem:
            raise ValueError(problem)
        return v


class ClusterSpec(Spec):
    """An EKS cluster the rack creates (pulumi-eks ``Cluster``) in a network the user brings."""

    name: ClusterName
    """The EKS cluster's name."""
    vpc_id: str
    """The VPC."""
    private_subnet_ids: list[str] = Field(min_length=1)
    """Subnets for the nodes (and Karpenter's, by the ``karpenter.sh/discovery`` tag)."""
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

    @field_validator("version")
    @classmethod
    def _version(cls, v: str) -> str:
        if not K8S_VERSION_RE.fullmatch(v):
            raise ValueError(f"invalid k8s_version '{v}' (must be a Kubernetes minor like 1.34)")
        if int(v.split(".")[1]) < upstream.KARPENTER_MIN_K8S_MINOR:
            raise ValueError(f"k8s_version '{v}' is older than Karpenter supports "
                             f"(1.{upstream.KARPENTER_MIN_K8S_MINOR} or later)")
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
        return v

    @field_validator("public_access_cidrs")
    @classmethod
    def _cidrs(cls, v: list[str]) -> list[str]:
        for cidr in v:
            try:
                network = ipaddress.ip_network(cidr, strict=True)
            except ValueError:
                raise ValueError(f"invalid CIDR '{cidr}' (must look like 203.0.113.0/24)") from None
            if network.version != 4 or not CIDR_RE.fullmatch(cidr):
                raise ValueError(f"invalid CIDR '{cidr}' (must be an IPv4 CIDR like 203.0.113.0/24)")
        if not v:
            raise ValueError("at least one CIDR (the public endpoint is on)")
        return v

    @model_validator(mode="after")
    def _rules(self) -> "ClusterSpec":
        if set(self.private_subnet_ids) & set(self.public_subnet_ids):
            raise FieldProblem("public_subnet_ids", "a subnet cannot be both private and public")
        problem = tags_problem(self.tags)
        if problem:
            raise FieldProblem("tags", problem)
        if syntax.instance_type_problem(self.system_node_type):
            raise FieldProblem("system_node_type", f"invalid node type '{self.system_node_type}' (must look like t3.large)")
        try:  # the system lane is a node group: its rules apply to the type and disk given here
            self.system_lane("system")
        except SpecError as exc:
            error = exc.errors[0]
            cause = (error.get("ctx") or {}).get("error")
            where = getattr(cause, "field", None) or (str(error["loc"][0]) if error["loc"] else "")
            field = "system_node_disk" if where == "disk" else "system_node_type"
            raise FieldProblem(field, error_message(error)) from None
        return self

    def system_lane(self, name: str) -> NodeGroupSpec:
        """The system lane: AL2023, labelled and tainted ``convox.io/system-node=true``, 3 nodes (1 without HA)."""
        size = 3 if self.high_availability else 1
        return NodeGroupSpec(instance_type=self.system_node_type, name=name, system=True, label=None,
                             disk=self.system_node_disk, min_size=size, max_size=size, tags=self.tags)


class KarpenterSpec(Spec):
    """Karpenter itself, installed by the rack."""

    version: str = upstream.KARPENTER_CHART.version
    """The ``karpenter`` and ``karpenter-crd`` chart version. Default 1.14.1."""
    replicas: int = 2
    """Controller replicas: 2 (1 without high availability)."""

    @field_validator("version")
    @classmethod
    def _version(cls, v: str) -> str:
        problem = chart_version_problem(v, "karpenter version")
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

    cluster_name: ClusterName
    """The EKS cluster."""
    tags: dict[str, str] = {}
    """AWS tags for everything the rack creates in AWS: the cluster, Karpenter's resources, every node
    group (under its own tags) and the instances and volumes Karpenter launches. Default none."""
    pod_identity_agent: bool = False
    """Install the EKS Pod Identity agent add-on (Karpenter's controller authenticates through it)."""
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
        for group in self.node_groups:  # each group carries the rack's tags under its own
            problem = tags_problem(self.group_tags(group))
            if problem:
                raise FieldProblem("tags", f"node group '{group.name}' with the rack's tags: {problem}")
        for what, names in (("karpenter nodepool name", [p.name for p in self.pools]),
                            ("node group name", [g.name for g in self.node_groups])):
            seen: set[Optional[str]] = set()
            for name in names:
                if name in seen:
                    raise ValueError(f"duplicate {what}: {name}")
                seen.add(name)
        if any(g.name is None for g in self.node_groups):
            raise ValueError("every node group of a rack needs its name")
        if self.gpu_observability is not None and self.device_plugin is None:
            raise ValueError("gpu_observability_enable=true requires nvidia_device_plugin_enable=true")
        if self.cluster is not None and self.cluster.name != self.cluster_name:
            raise ValueError(f"the cluster to create is named '{self.cluster.name}', not '{self.cluster_name}'")
        return self
