"""``PoolSpec``: one Karpenter pool (an EC2NodeClass and a NodePool), every rule checked once."""

import enum
import math
from datetime import datetime
from typing import Any, Optional

from pydantic import field_validator, model_validator

from .. import contract
from ..lane import NodeOs
from ..facts import instances, osfamily, upstream, wellknown
from ..pack import fit, rules
from .. import syntax
from .base import FieldProblem, Problems, Spec
from .limits import (
    ARCHES,
    BUDGET_NODES_MAX,
    BUDGET_RE,
    CAPACITY_TYPES,
    DURATION_RE,
    RESERVED,
    NAME_RE,
    NODEPOOL_LABELS_MAX,
    TAINT_EFFECTS,
    VOLUME_TYPES,
    WEIGHT_RANGE,
    duration_too_long,
)


def _is_date(text: str) -> bool:
    try:
        datetime.strptime(text, "%Y%m%d")
    except ValueError:
        return False
    return True


class ConsolidationPolicy(enum.StrEnum):
    """When Karpenter consolidates a pool's nodes."""

    WHEN_EMPTY = "WhenEmpty"
    """Only nodes that run no workload pods."""
    WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
    """Empty nodes, and nodes whose pods fit elsewhere or on a cheaper node."""


class Taint(Spec):
    """A Kubernetes taint, as a NodePool writes it. In Python, this is the taint a user gives a pool; the rack
    writes it into its lane's record as a ``mixed_os_racks.lane.LaneTaint``, and the pack reads taints on nodes as
    ``mixed_os_racks.pack.scheduling.NodeTaint``."""

    key: str
    """The taint's key (``team``, ``example.com/dedicated``)."""
    value: Optional[str] = None
    """Its value; none for a taint without one."""
    effect: str
    """``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``."""

    def as_dict(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


FAMILY_FIELDS = ("instance_families", "instance_types", "instance_sizes")
"""The fields that say what a pool launches: rules reading what it launches wait for them to be valid."""


class PoolSpec(Spec):
    """One Karpenter pool: an EC2NodeClass and a NodePool, both named ``name``."""

    name: str
    """The EC2NodeClass and NodePool name (``metadata.name``); lowercase, digits and dashes, at most 63."""
    os: NodeOs = NodeOs.AL2023
    """The node OS. Default ``al2023``; ``bottlerocket`` takes no GPU families and no pinned AMI."""
    ami_alias: str = osfamily.AL2023.alias
    """The AL2023 AMI alias when no ``ami_id`` is pinned: ``al2023@latest`` or ``al2023@vYYYYMMDD``."""
    instance_families: list[str] = []
    """Instance families the pool may launch (``g5``); default: any."""
    instance_sizes: list[str] = []
    """Instance sizes (``xlarge``); default: any."""
    instance_types: list[str] = []
    """Exactly these instance types (``c7i.2xlarge``), not the cross-product of their families and
    sizes; default: any (as the families and sizes allow)."""
    capacity_types: list[str] = ["on-demand"]
    """``on-demand``, ``spot`` and/or ``reserved`` (``reserved`` needs ``capacity_reservation_ids``: with
    ``on-demand`` too the pool falls back to On-Demand when its reservations are full, alone it launches only
    into them). Default ``on-demand``."""
    capacity_reservation_ids: list[str] = []
    """EC2 capacity reservations the pool launches into (On-Demand Capacity Reservations or Capacity Blocks,
    ``cr-0123456789abcdef0``, at most 30): the EC2NodeClass's ``capacityReservationSelectorTerms``, one ``id``
    term each; needs ``reserved`` in ``capacity_types``. Default none."""
    arch: list[str] = ["amd64"]
    """``amd64`` and/or ``arm64``. Default ``amd64``."""
    cpu_limit: int = 100
    """The pool's CPU limit (cores). Default 100."""
    memory_limit_gb: int = 400
    """The pool's memory limit (GiB). Default 400."""
    gpu_limit: Optional[int] = None
    """The pool's GPU limit (``nvidia.com/gpu``, or ``amd.com/gpu`` for AMD families), GPU pools only. Default: none."""
    max_hourly_usd: Optional[float] = None
    """The pool's budget: the most its worst case may cost an hour on demand, in US dollars (policy
    ``lane-cost-ceiling``). Default: none (``null`` is none too)."""
    consolidation_policy: ConsolidationPolicy = ConsolidationPolicy.WHEN_EMPTY_OR_UNDERUTILIZED
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
    """Extra node labels; ``convox.io/nodepool``, ``convox.io/label``, ``convox.io/gpu-vendor`` and
    ``convox.io/system-node`` are the rack's own."""
    taints: list[Taint] = []
    """Extra node taints."""
    dedicated: bool = False
    """Taint the nodes ``dedicated-node=<name>:NoSchedule``. Default false."""
    canary_ami_id: Optional[str] = None
    """A candidate AL2023 AMI to try beside the pool: an EC2NodeClass and NodePool ``<name>-canary`` with the
    pool's labels, taints, requirements and disk, a higher weight, and limits for ``canary_nodes`` nodes. It is
    checked as ``ami_id`` is. Default none."""
    canary_nodes: int = 1
    """How many of the pool's largest nodes the canary holds, 1 or more: its NodePool's cpu, memory and GPU limits
    are that many times the largest type's (what Karpenter counts within a scheduling pass), and its ``limits.nodes``
    is that number (counted between passes only). Default 1."""

    @property
    def subject(self) -> str:
        return rules.pool_subject(self.name)

    @property
    def canary_name(self) -> str:
        """The canary lane's EC2NodeClass and NodePool name: ``<name>-canary``."""
        return self.name + contract.CANARY_SUFFIX

    def candidate(self) -> "PoolSpec":
        """The pool as its canary boots it: pinned to ``canary_ami_id``, with the pool's name, labels and taints."""
        return self.model_copy(update={"ami_id": self.canary_ami_id, "canary_ami_id": None})

    @property
    def os_family(self) -> osfamily.OsFamily:
        """The record of the pool's OS family."""
        return osfamily.of(self.os)

    @property
    def alias(self) -> Optional[str]:
        """The AMI alias the EC2NodeClass selects (None when an AMI is pinned)."""
        if not self.os_family.alias_release:
            return self.os_family.alias
        return None if self.ami_id else self.ami_alias

    @property
    def families(self) -> list[str]:
        """The families the pool may launch, as far as its config names them: its instance types'
        families (those in ``instance_families`` too, when both are given), else ``instance_families``."""
        if not self.instance_types:
            return list(self.instance_families)
        named = list(dict.fromkeys(instances.family_of(t) for t in self.instance_types))
        return [f for f in named if f in self.instance_families] if self.instance_families else named

    @property
    def is_gpu(self) -> bool:
        """Every family is an NVIDIA GPU family: the pool gets the GPU-vendor label."""
        return instances.is_nvidia_lane(self.families)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.fullmatch(v):
            raise ValueError(f"karpenter nodepool name '{v}' must be lowercase alphanumeric with dashes, max 63 chars")
        return v

    @field_validator("os", mode="before")
    @classmethod
    def _os(cls, v: Any) -> Any:
        if v not in osfamily.RACK_NAMES:
            raise ValueError(f"invalid os '{v}' (must be {' or '.join(osfamily.RACK_NAMES)})")
        return v

    @field_validator("consolidation_policy", mode="before")
    @classmethod
    def _policy(cls, v: Any) -> Any:
        if v not in ("WhenEmpty", "WhenEmptyOrUnderutilized"):
            raise ValueError(f"invalid consolidation_policy '{v}' (must be WhenEmpty or WhenEmptyOrUnderutilized)")
        return v

    def _limits_problem(self) -> Optional[tuple[str, str]]:
        """(field, problem) when the pool's limits hold none of the instance types it names: Karpenter launches
        no type whose capacity is beyond the limits left (``filterByRemainingResources``), so such a pool
        launches nothing. Judged only for pools that name families, sizes or types the table sizes."""
        if not (self.instance_families or self.instance_types or self.instance_sizes):
            return None
        requirements = [wellknown.Requirement(wellknown.ARCH_KEY, "In", tuple(self.arch))]
        for key, values in (
            (wellknown.FAMILY_KEY, self.instance_families),
            (wellknown.KARPENTER_PREFIX + "instance-size", self.instance_sizes),
            (wellknown.TYPE_KEY, self.instance_types),
        ):
            if values:
                requirements.append(wellknown.Requirement(key, "In", tuple(values)))
        types, unsized = wellknown.launchable(tuple(requirements))
        if unsized or not types:
            return None
        gpus = self.gpu_limit if self.gpu_limit is not None else float("inf")
        fits = [
            t
            for t in types
            if t.vcpus <= self.cpu_limit
            and fit.memory_capacity_mib(t) <= self.memory_limit_gb * 1024
            and t.gpus <= gpus
        ]
        if fits:
            return None
        smallest = min(types, key=lambda t: (t.vcpus, t.memory_mib))
        field = (
            "cpu_limit"
            if smallest.vcpus > self.cpu_limit
            else "memory_limit_gb"
            if fit.memory_capacity_mib(smallest) > self.memory_limit_gb * 1024
            else "gpu_limit"
        )
        given = f", gpu_limit {self.gpu_limit}" if self.gpu_limit is not None else ""
        has = f" and {min(t.gpus for t in types)} GPUs" if self.gpu_limit is not None else ""
        return field, (
            f"{self.subject}: its limits (cpu_limit {self.cpu_limit}, memory_limit_gb {self.memory_limit_gb}{given}) "
            f"hold none of its instance types: the smallest, {smallest.name}, has {smallest.vcpus} vCPUs"
            f"{',' if has else ' and'} {smallest.memory_mib / 1024:g} GiB{has}, and Karpenter launches no type "
            f"beyond the limits (the pool could launch nothing)"
        )

    @model_validator(mode="after")
    def _rules(self) -> "PoolSpec":
        found = Problems()  # every problem at once: each group of rules, unless a field it reads broke one already
        found.run(self._family_rules)
        found.run(self._capacity_rules)
        found.run(self._reservation_rules, after=("capacity_types",))
        found.run(self._arch_rules)
        found.run(self._limit_rules, after=FAMILY_FIELDS + ("arch",))
        found.run(self._consolidation_rules)
        found.run(self._expiry_rules)
        found.run(self._budget_rules)
        found.run(self._volume_rules)
        found.run(self._label_rules)
        found.run(self._taint_rules)
        found.run(self._weight_rules)
        found.run(self._alias_rules)
        found.run(self._ami_rules)
        found.run(self._gpu_rules, after=FAMILY_FIELDS)
        found.run(self._canary_rules, after=("name", "weight"))
        found.raise_found()
        return self

    def _family_rules(self) -> None:
        s = self.subject
        for family in self.instance_families:
            problem = syntax.instance_family_problem(family)
            if problem:
                raise FieldProblem("instance_families", f"{s}: instance family '{family}' {problem}")
        problem = mac_problem(s, self.instance_families)
        if problem:
            raise FieldProblem("instance_families", problem)
        for spec_field, what in (
            ("instance_families", "instance family"),
            ("instance_sizes", "instance size"),
            ("capacity_types", "capacity type"),
            ("arch", "arch"),
        ):
            values: list[str] = getattr(self, spec_field)
            twice = sorted({v for v in values if values.count(v) > 1})
            if twice:  # a list given twice is a typo, not a weight: said, not passed on to the NodePool
                raise FieldProblem(spec_field, f"{s}: duplicate {what} '{twice[0]}'")
        for index, instance_type in enumerate(self.instance_types):
            if syntax.instance_type_problem(instance_type):
                raise FieldProblem(
                    "instance_types",
                    f"{s}: invalid instance type '{instance_type}' (must look like c7i.2xlarge)",
                    index,
                )
            if unmade := syntax.unmade_instance_type(instance_type):
                raise FieldProblem("instance_types", f"{s}: {unmade}", index)
        twice = sorted({t for t in self.instance_types if self.instance_types.count(t) > 1})
        if twice:
            raise FieldProblem("instance_types", f"{s}: duplicate instance type '{twice[0]}'")
        problem = mac_problem(s, self.instance_types)
        if problem:
            raise FieldProblem("instance_types", problem)
        if self.instance_types and self.instance_families and not self.families:
            raise FieldProblem(
                "instance_types",
                f"{s}: no instance type is of the instance families "
                f"{','.join(self.instance_families)} (the pool could launch nothing)",
            )
        families_field = "instance_types" if self.instance_types else "instance_families"
        arches = sorted({wellknown.K8S_ARCH[instances.facts(f).arch] for f in self.families})
        if arches and not set(arches) & set(self.arch):  # Karpenter intersects the two: no instance type is left
            raise FieldProblem(
                families_field,
                f"{s}: instance families {','.join(self.families)} are {','.join(arches)}, "
                f"and the pool's arch is {','.join(self.arch)} (the pool could launch nothing)",
            )
        for index, size in enumerate(self.instance_sizes):
            problem = syntax.instance_size_problem(size)
            if problem:
                raise FieldProblem("instance_sizes", f"{s}: instance size '{size}' {problem}", index)
            # a size none of its families comes in (by the instance table: a family it does not size may)
            nowhere = [syntax.unmade_instance_type(f"{family}.{size}") for family in self.families]
            if nowhere and all(nowhere):
                raise FieldProblem("instance_sizes", f"{s}: instance size '{size}': {'; '.join(nowhere)}", index)

    def _capacity_rules(self) -> None:
        s = self.subject
        for ct in self.capacity_types:
            if ct not in CAPACITY_TYPES:
                raise FieldProblem(
                    "capacity_types", f"{s}: invalid capacity type '{ct}' (must be on-demand, spot or reserved)"
                )
        if not self.capacity_types:
            raise FieldProblem("capacity_types", f"{s}: capacity_types must not be empty")

    def _reservation_rules(self) -> None:
        """The EC2NodeClass CRD's ``capacityReservationSelectorTerms`` (at most 30 terms, ids ``cr-...``), and
        the NodePool's ``reserved`` capacity type, without which Karpenter launches nothing into them."""
        s, ids = self.subject, self.capacity_reservation_ids
        for index, given in enumerate(ids):
            if not syntax.EC2_ID_RES["capacity reservation"].fullmatch(given):
                raise FieldProblem(
                    "capacity_reservation_ids",
                    f"{s}: invalid capacity reservation id '{given}' (must look like cr-0123456789abcdef0)",
                    index,
                )
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise FieldProblem("capacity_reservation_ids", f"{s}: duplicate capacity reservation id '{twice[0]}'")
        if len(ids) > syntax.EC2_SELECTOR_TERMS_MAX:
            raise FieldProblem(
                "capacity_reservation_ids",
                (
                    f"{s}: {len(ids)} capacity reservation ids (at most {syntax.EC2_SELECTOR_TERMS_MAX}, the "
                    f"EC2NodeClass's "
                    f"capacityReservationSelectorTerms)"
                ),
            )
        if RESERVED in self.capacity_types and not ids:
            raise FieldProblem(
                "capacity_types",
                f"{s}: capacity type 'reserved' needs capacity_reservation_ids "
                f"(the reservations the pool launches into)",
            )
        if ids and RESERVED not in self.capacity_types:
            raise FieldProblem(
                "capacity_reservation_ids",
                (
                    f"{s}: capacity_reservation_ids need capacity type 'reserved' in capacity_types, or Karpenter "
                    f"launches "
                    f"nothing into them (reserved,on-demand falls back to On-Demand when they are full; reserved alone "
                    f"launches only into them)"
                ),
            )

    def _arch_rules(self) -> None:
        s = self.subject
        for arch in self.arch:
            if arch not in ARCHES:
                raise FieldProblem("arch", f"{s}: invalid arch '{arch}' (must be amd64 or arm64)")
        if not self.arch:
            raise FieldProblem("arch", f"{s}: arch must not be empty")

    def _limit_rules(self) -> None:
        s = self.subject
        if self.cpu_limit <= 0:
            raise FieldProblem("cpu_limit", f"{s}: cpu_limit must be positive (got '{self.cpu_limit}')")
        if self.memory_limit_gb <= 0:
            raise FieldProblem(
                "memory_limit_gb", f"{s}: memory_limit_gb must be positive (got '{self.memory_limit_gb}')"
            )
        if self.gpu_limit is not None:
            if self.gpu_limit <= 0:
                raise FieldProblem("gpu_limit", f"{s}: gpu_limit must be positive (got '{self.gpu_limit}')")
            if not self.families or not all(instances.is_gpu_family(f) for f in self.families):
                raise FieldProblem(
                    "gpu_limit",
                    f"{s}: gpu_limit needs a GPU pool (instance families that all have GPUs, "
                    f"such as g6; this pool's: {','.join(self.families) or 'any'})",
                )
        problem = usd_problem(self.max_hourly_usd, "its")
        if problem:
            raise FieldProblem("max_hourly_usd", f"{s}: {problem}")
        limits_problem = self._limits_problem()
        if limits_problem:
            raise FieldProblem(*limits_problem)

    def _consolidation_rules(self) -> None:
        s = self.subject
        if not DURATION_RE.fullmatch(self.consolidate_after) or duration_too_long(self.consolidate_after):
            raise FieldProblem(
                "consolidate_after",
                f"{s}: invalid consolidate_after '{self.consolidate_after}' (use a duration like 30s, 5m or 1h)",
            )

    def _expiry_rules(self) -> None:
        s = self.subject
        if not DURATION_RE.fullmatch(self.node_expiry) or duration_too_long(self.node_expiry):
            raise FieldProblem(
                "node_expiry", f"{s}: invalid node_expiry '{self.node_expiry}' (use hours like 720h, or Never)"
            )

    def _budget_rules(self) -> None:
        s = self.subject
        budget = self.disruption_budget_nodes
        if not BUDGET_RE.fullmatch(budget) or (
            not budget.endswith("%") and syntax.whole_number(budget) > BUDGET_NODES_MAX
        ):
            raise FieldProblem(
                "disruption_budget_nodes",
                f"{s}: invalid disruption_budget_nodes '{self.disruption_budget_nodes}' (use a percentage like 10% or "
                f"a count)",
            )

    def _weight_rules(self) -> None:
        s = self.subject
        if self.weight is not None and not WEIGHT_RANGE[0] <= self.weight <= WEIGHT_RANGE[1]:
            raise FieldProblem("weight", f"{s}: weight must be 1-100 (got '{self.weight}')")

    def _alias_rules(self) -> None:
        alias = osfamily.AL2023.alias_pattern.fullmatch(self.ami_alias)
        if not alias:
            raise FieldProblem(
                "ami_alias", f"invalid ami_alias '{self.ami_alias}' (must be al2023@latest or al2023@vYYYYMMDD)"
            )
        if alias.group(1) != "latest" and not _is_date(alias.group(1)[1:]):
            raise FieldProblem(
                "ami_alias",
                f"invalid ami_alias '{self.ami_alias}' ({alias.group(1)[1:]} is no date: "
                f"an EKS AMI release is named by the day it was built, vYYYYMMDD)",
            )

    def _ami_rules(self) -> None:
        if self.ami_id is not None:
            problem = rules.invalid_ami_id(self.subject, self.ami_id) or rules.pinned_ami_not_al2023(
                self.subject, self.os
            )
            if problem:
                raise FieldProblem("ami_id", problem)

    def _gpu_rules(self) -> None:
        s = self.subject
        families_field = "instance_types" if self.instance_types else "instance_families"
        gpu = instances.nvidia_families(self.families)
        # the pool's OS is what to change (a GPU lane's families are its purpose): the problem is os's
        problem = (
            rules.gpu_lane_on_bottlerocket(
                s,
                self.os,
                f"instance families {','.join(gpu)}",
                "set os 'al2023', or move them to an AL2023 pool or node group",
            )
            if gpu
            else None
        )
        if problem:
            raise FieldProblem("os", problem)
        gpus = [f for f in self.families if instances.is_gpu_family(f)]
        if gpus and len(gpus) < len(self.families):
            # a pool is a GPU lane only when every family is a GPU family: a mixed pool's GPU nodes would
            # get no GPU label or taint, so the device plugin skips them and CPU pods land on them
            others = [f for f in self.families if not instances.is_gpu_family(f)]
            raise FieldProblem(
                families_field,
                (
                    f"{s}: instance families mix GPU families ({','.join(gpus)}) with others ({','.join(others)}): "
                    f"its GPU nodes would get no GPU label or taint, so the device plugin would skip them and CPU pods "
                    f"would land on them (split it into two pools, one of GPU families and one of the others)"
                ),
            )
        vendors = sorted({instances.facts(f).gpu for f in gpus})
        if len(vendors) > 1:
            # one lane, one GPU vendor: its label (convox.io/gpu-vendor) and device plugin are the vendor's
            named = "; ".join(f"{v}: {','.join(f for f in gpus if instances.facts(f).gpu == v)}" for v in vendors)
            raise FieldProblem(
                families_field,
                (
                    f"{s}: instance families mix GPU vendors ({named}): a lane's GPU label, taint and device plugin "
                    f"are one vendor's, so the other's nodes would get none (split it into a pool per vendor)"
                ),
            )
        alias = osfamily.AL2023.alias_pattern.fullmatch(self.ami_alias)
        if self.ami_id is None and alias and (alias.group(1) == "latest" or _is_date(alias.group(1)[1:])):
            # the release an alias pins (a malformed alias is ami_alias's problem, and pins no release to judge)
            release = alias.group(1)[1:] if alias.group(1) != "latest" else None
            problem = needs_custom_nvidia_ami(s, self.families, release)
            if problem:
                raise FieldProblem(families_field, problem)

    def _canary_rules(self) -> None:
        """The candidate AMI gets the pool's AMI rules; its lane needs a name and a weight above the pool's."""
        s, candidate = self.subject, self.canary_ami_id
        if candidate is None:
            if "canary_nodes" in self.model_fields_set:
                raise FieldProblem("canary_nodes", f"{s}: canary_nodes needs canary_ami_id (the AMI its canary tries)")
            return
        problem = rules.invalid_ami_id(rules.pool_subject(self.canary_name), candidate) or rules.pinned_ami_not_al2023(
            rules.pool_subject(self.canary_name), self.os
        )
        if problem:
            raise FieldProblem("canary_ami_id", problem)
        if candidate == self.ami_id:
            raise FieldProblem(
                "canary_ami_id",
                f"{s}: canary_ami_id '{candidate}' is the pool's own ami_id, so its canary "
                f"would try nothing new (remove canary_ami_id once the pool runs it)",
            )
        if not NAME_RE.fullmatch(self.canary_name):
            raise FieldProblem(
                "name",
                f"{s}: its canary's name '{self.canary_name}' is longer than 63 characters (the "
                f"EC2NodeClass and NodePool name): shorten the pool's name",
            )
        if self.weight is not None and self.weight >= WEIGHT_RANGE[1]:
            raise FieldProblem(
                "weight",
                f"{s}: weight {self.weight} leaves its canary no higher weight (Karpenter tries "
                f"the highest first; at most {WEIGHT_RANGE[1] - 1} with canary_ami_id)",
            )
        if self.canary_nodes < 1:
            raise FieldProblem("canary_nodes", f"{s}: canary_nodes must be 1 or more (got '{self.canary_nodes}')")

    def _volume_rules(self) -> None:
        """The EBS limits of the volume type (``upstream.EBS_VOLUMES``): size, IOPS and throughput."""
        s, kind = self.subject, self.volume_type
        if kind not in VOLUME_TYPES:
            raise FieldProblem("volume_type", f"{s}: invalid volume_type '{kind}' (must be one of gp2, gp3, io1, io2)")
        limits = upstream.EBS_VOLUMES[kind]
        low, high = limits.size_gib[0], min(limits.size_gib[1], upstream.KARPENTER_VOLUME_MAX_GIB)
        if not low <= self.disk <= high:
            if self.disk <= 0:
                raise FieldProblem("disk", f"{s}: disk must be positive (got '{self.disk}')")
            raise FieldProblem("disk", f"{s}: disk must be {low}-{high} GiB for a {kind} volume (got '{self.disk}')")
        snapshot = self.os_family.eks_root_snapshot_gib
        if not self.ami_id and snapshot is not None and self.disk < snapshot:
            # EC2 refuses a root volume below its snapshot (InvalidBlockDeviceMapping); a pinned AMI's
            # snapshot is read at preview instead. Bottlerocket's data volume starts from a 1 GiB image.
            family = self.os_family.family
            raise FieldProblem(
                "disk",
                f"{s}: disk {self.disk} GiB is smaller than the root snapshot of the "
                f"EKS-optimized {family} AMI ({snapshot} GiB); give it a disk of {snapshot} GiB or more",
            )
        iops = self.volume_iops
        if iops is not None:
            if limits.iops is None:
                raise FieldProblem(
                    "volume_iops", f"{s}: volume_iops requires volume_type gp3, io1 or io2 (currently {kind})"
                )
            if not limits.iops[0] <= iops <= limits.iops[1]:
                raise FieldProblem(
                    "volume_iops", f"{s}: invalid volume_iops '{iops}' (must be {limits.iops[0]}-{limits.iops[1]})"
                )
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
                raise FieldProblem(
                    "volume_throughput", f"{s}: volume_throughput requires volume_type gp3 (currently {kind})"
                )
            low, high = limits.throughput_mibs
            if not low <= throughput <= high:
                raise FieldProblem(
                    "volume_throughput", f"{s}: invalid volume_throughput '{throughput}' (must be {low}-{high})"
                )
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
        for key in contract.RESERVED_POOL_LABELS:
            if key in self.labels:
                raise FieldProblem("labels", f"{s}: label '{key}' is reserved")
        for key, value in self.labels.items():
            problem = syntax.qualified_name_problem(key)
            if problem:
                raise FieldProblem("labels", f"{s}: invalid label key '{key}' ({problem})")
            domain = syntax.restricted_label_domain(key)
            if domain:
                raise FieldProblem(
                    "labels",
                    f"{s}: label '{key}' is in the restricted domain {domain} (Karpenter and the kubelet refuse it)",
                )
            problem = syntax.label_value_problem(value)
            if problem:
                raise FieldProblem("labels", f"{s}: invalid value '{value}' of label '{key}' ({problem})")
        if len(self.node_labels()) > NODEPOOL_LABELS_MAX:
            raise FieldProblem(
                "labels",
                f"{s}: at most {NODEPOOL_LABELS_MAX} node labels (the NodePool's limit, the rack's own included)",
            )

    def _taint_rules(self) -> None:
        s = self.subject
        seen: set[tuple[str, str]] = set()
        for taint in self.node_taints():
            key, effect = taint["key"], taint["effect"]
            if effect not in TAINT_EFFECTS:
                raise FieldProblem(
                    "taints", f"{s}: invalid taint effect '{effect}' (must be one of {', '.join(TAINT_EFFECTS)})"
                )
            problem = syntax.qualified_name_problem(key)
            if problem:
                raise FieldProblem("taints", f"{s}: invalid taint key '{key}' ({problem})")
            value = taint.get("value")
            if value == "":  # the NodePool CRD's pattern for a taint value needs a character
                raise FieldProblem(
                    "taints", f"{s}: taint '{key}' has an empty value (write {key}:{effect} for a taint without one)"
                )
            problem = syntax.label_value_problem(value) if value else None
            if problem:
                raise FieldProblem("taints", f"{s}: invalid value '{value}' of taint '{key}' ({problem})")
            if (key, effect) in seen:
                why = " (dedicated adds it already)" if key == contract.DEDICATED_TAINT_KEY and self.dedicated else ""
                raise FieldProblem("taints", f"{s}: duplicate taint {key}:{effect}{why}")
            seen.add((key, effect))

    @property
    def gpu_resource(self) -> str:
        """The extended resource its GPUs are (``nvidia.com/gpu``, ``amd.com/gpu`` for AMD families)."""
        vendors = {instances.facts(f).gpu for f in self.families if instances.is_gpu_family(f)}
        return contract.gpu_resource(vendors.pop() if len(vendors) == 1 else None)

    @property
    def offers_accelerators(self) -> bool:
        """Whether the pool may launch GPU or other accelerated instances: only an AL2023 pool that
        lists accelerated families itself; every other pool asks Karpenter for none."""
        return self.os_family.gpu_lanes and any(instances.is_accelerated_family(f) for f in self.families)

    def node_labels(self) -> dict[str, str]:
        """The NodePool's node labels: the user's, the GPU-vendor label on a GPU pool, and
        ``convox.io/nodepool=<name>``, which always wins."""
        labels = dict(self.labels)
        if self.is_gpu:
            labels[contract.GPU_VENDOR_LABEL] = contract.GPU_VENDOR_NVIDIA
        labels[contract.NODEPOOL_LABEL] = self.name
        return labels

    def node_taints(self) -> list[dict[str, str]]:
        """``dedicated-node=<name>:NoSchedule`` first when dedicated, then the user's."""
        taints = (
            [{"key": contract.DEDICATED_TAINT_KEY, "value": self.name, "effect": "NoSchedule"}]
            if self.dedicated
            else []
        )
        return taints + [t.as_dict() for t in self.taints]


def usd_problem(value: Optional[float], whose: str) -> Optional[str]:
    """A budget: a positive, finite number of US dollars an hour (or none). The problem names the budget by
    whose it is (``its``, ``the rack's``): its key path already names the key."""
    if value is not None and not (math.isfinite(value) and value > 0):
        return f"{whose} budget must be a positive number of US dollars an hour (got '{value:g}')"
    return None


def mac_problem(subject: str, instance_types: list[str]) -> Optional[str]:
    """EC2 Mac instances run only on Dedicated Hosts, with macOS: neither an EKS managed node group nor
    Karpenter launches them, and no EKS node AMI boots on them (EC2 User Guide, Amazon EC2 Mac instances)."""
    macs = sorted({instances.family_of(t) for t in instance_types if instances.family_of(t).startswith("mac")})
    if not macs:
        return None
    return (
        f"{subject}: instance family {macs[0]} runs only on EC2 Dedicated Hosts with macOS, which EKS nodes cannot use"
    )


def needs_custom_nvidia_ami(subject: str, instance_types: list[str], release: Optional[str] = None) -> Optional[str]:
    """NVIDIA families the EKS-optimized AL2023 NVIDIA AMI cannot drive: the latest release (``release``
    None: a managed node group's AMI type, ``al2023@latest``), or the release an alias pins
    (``instances.stock_ami_problem``: the dated driver table, for every Kubernetes minor Karpenter runs on)."""
    minors = range(upstream.KARPENTER_MIN_K8S_MINOR, upstream.KARPENTER_MAX_K8S_MINOR + 1)
    problem = instances.stock_ami_problem(instance_types, release, minors)
    if not problem:
        return None
    fix = (
        "use a later release or al2023@latest, or pin an ami_id built for them"
        if release
        else "pin an ami_id built for it"
    )
    return f"{subject}: {problem} ({fix})"
