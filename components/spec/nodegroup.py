"""``NodeGroupSpec``: one EKS managed node group on Amazon Linux 2023, every rule checked once."""

import re
from dataclasses import dataclass
from typing import Optional

from pydantic import field_validator, model_validator

from .. import contract
from ..facts import instances, upstream
from ..pack import reservedlanes, rules
from .. import syntax
from .base import FieldProblem, Problems, Spec
from .limits import EKS_SCALING_MAX, LABEL_VALUE_RE, RACK_TAGS, RESERVED_TAG_KEYS
from .pool import mac_problem, needs_custom_nvidia_ami, usd_problem
from .tags import tags_problem


CAPACITY_BLOCK = reservedlanes.CAPACITY_BLOCK
CAPACITY_TYPES = ("ON_DEMAND", "SPOT", CAPACITY_BLOCK)
"""The EKS API's capacity types of a managed node group (CreateNodegroup ``capacityType``)."""


def node_disk_problem(disk: int) -> Optional[str]:
    """A node group's root volume: at least the seeds' 20 GiB, at most what a gp3 volume takes."""
    if disk < upstream.SEEDS_NODE_DISK_GIB:
        return f"node disk is less than 20: '{disk}'"
    most = upstream.EBS_VOLUMES["gp3"].size_gib[1]
    if disk > most:
        return f"node disk is more than a gp3 volume takes ({most} GiB): '{disk}'"
    return None


def autoscaler_gpu_type(instance_type: str) -> str:
    """The value of the Cluster Autoscaler's GPU label for an NVIDIA instance type: the autoscaler's own
    name for the GPU where it has one (``nvidia-tesla-t4``, ``nvidia-a10g``), else ``nvidia-`` and the
    model (``nvidia-h100``), a label value either way (``upstream.CLUSTER_AUTOSCALER_GPU_LABEL``)."""
    model = re.sub(r"\s+\d+\s*GB$", "", instances.facts(instance_type).gpu_model)  # "A100 40GB": the A100
    known = upstream.CLUSTER_AUTOSCALER_GPU_TYPES.get(model)
    if known:
        return known
    slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
    return f"nvidia-{slug}"[:63].rstrip("-") if slug else "nvidia"


@dataclass(frozen=True)
class Scaling:
    """A managed node group's scaling config, as EKS holds it (``DescribeNodegroup`` ``scalingConfig``)."""

    desired_size: int
    min_size: int
    max_size: int


def scaling_plan(min_size: int, max_size: int, live: Optional[Scaling]) -> tuple[int, bool]:
    """What a node group sends as its desired size, and whether ``pulumi up`` ignores changes to it.

    EKS's ``UpdateNodegroupConfig`` takes a desired size only between the minimum and the maximum
    ("Minimum capacity N can't be greater than desired size M"), and the AWS provider sends the whole
    scaling config whenever any of it changes (terraform-provider-aws ``internal/service/eks/node_group.go``,
    ``resourceNodeGroupUpdate``, which pulumi-aws wraps), so a changed bound travels with a desired size:

    * a fixed group (``min_size == max_size``): nobody else sizes it; it is sent, never ignored;
    * a group that can scale and does not exist yet (``live`` None): created at ``min_size``; changes
      ignored afterwards (the Cluster Autoscaler owns it);
    * a live group whose bounds stay as they are: changes ignored, so the autoscaler's size survives;
    * a live group whose bounds change: changes not ignored, and the size sent is the live one (what the
      autoscaler set), moved into the new bounds: never below ``min_size`` or above ``max_size``, so EKS
      accepts it, and a group the autoscaler grew keeps its nodes.

    Ignored, the engine would send the size recorded at the last ``pulumi up`` instead (ignoreChanges
    keeps the old input), which EKS refuses once a bound passes it (terraform-aws-modules/terraform-aws-eks
    #748, aws/containers-roadmap#1637), and which shrinks a group grown since (pulumi/pulumi-eks#321)."""
    if min_size == max_size:
        return min_size, False
    if live is None:
        return min_size, True
    desired = min(max(live.desired_size, min_size), max_size)
    return desired, (live.min_size, live.max_size) == (min_size, max_size)


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
    """``ON_DEMAND``, ``SPOT`` or ``CAPACITY_BLOCK`` (an EC2 Capacity Block for ML, named by
    ``capacity_reservation_id``). Default ``ON_DEMAND``."""
    capacity_reservation_id: Optional[str] = None
    """The EC2 capacity reservation the group launches into (``cr-0123456789abcdef0``): a Capacity Block with
    ``capacity_type: CAPACITY_BLOCK``, or an On-Demand Capacity Reservation with ``ON_DEMAND``. Its launch template
    targets it; a ``CAPACITY_BLOCK`` group has ``min_size`` 0. Not with ``ami_id`` or ``canary_ami_id``. Default
    none."""
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
    max_hourly_usd: Optional[float] = None
    """The group's budget: the most ``max_size`` nodes may cost an hour on demand, in US dollars (policy
    ``lane-cost-ceiling``). Default: none (``null`` is none too)."""
    canary_ami_id: Optional[str] = None
    """A candidate AL2023 AMI to try on a fixed-size second group ``<name>-canary`` with the group's instance type,
    label and taints. It is checked as ``ami_id`` is. Default none."""
    canary_size: int = 1
    """The canary group's size (its minimum, maximum and desired size), 1 or more. Default 1."""

    @property
    def subject(self) -> str:
        return rules.node_group_subject(self.name) if self.name else "node group"

    def canary(self, name: str) -> "NodeGroupSpec":
        """The canary group of the group named ``name``: ``<name>-canary``, on ``canary_ami_id``, ``canary_size``
        nodes, the group's label, taints and tags, and the tag that marks it a canary of ``name``."""
        canary = self.model_copy(
            update={
                "name": name + contract.CANARY_SUFFIX,
                "ami_id": self.canary_ami_id,
                "canary_ami_id": None,
                "min_size": self.canary_size,
                "max_size": self.canary_size,
                "tags": {**self.tags, contract.CANARY_OF: name},
            }
        )
        # a problem of the canary's AMI (its facts, at preview) is one of the field that set it
        canary._keys = {
            **self._keys,
            "ami_id": self.where("canary_ami_id"),
            "min_size": self.where("canary_size"),
            "max_size": self.where("canary_size"),
        }
        return canary

    @field_validator("name")
    @classmethod
    def _name(cls, v: Optional[str]) -> Optional[str]:
        problem = syntax.node_group_name_problem(v) if v is not None else None
        if problem:
            raise ValueError(f"invalid name '{v}' ({problem})")
        return v

    @model_validator(mode="after")
    def _rules(self) -> "NodeGroupSpec":
        found = Problems()  # every problem at once; a rule reading a field that broke one is not judged
        if not self.instance_type.strip():
            found.add("instance_type", f"node type is required: '{self.instance_type}'")
        elif syntax.instance_type_problem(self.instance_type):
            found.add("instance_type", f"invalid node type '{self.instance_type}' (must look like g4dn.xlarge)")
        elif unmade := syntax.unmade_instance_type(self.instance_type):
            found.add("instance_type", unmade, keyed=True)
        if self.capacity_type not in CAPACITY_TYPES:
            found.add(
                "capacity_type",
                f"invalid capacity_type '{self.capacity_type}' (must be ON_DEMAND, SPOT or {CAPACITY_BLOCK})",
            )
        if self.min_size < 0:
            found.add("min_size", f"invalid min size: '{self.min_size}'")
        if self.max_size < 1:
            found.add("max_size", f"invalid max size: '{self.max_size}'")
        elif self.max_size > EKS_SCALING_MAX:
            found.add("max_size", f"invalid max size: '{self.max_size}' (EKS takes at most {EKS_SCALING_MAX})")
        if found.ok("min_size", "max_size") and self.min_size > self.max_size:
            found.add("min_size", f"invalid min size: '{self.min_size}' must be less or equal to max size")
        if self.dedicated and not self.label:
            found.add("label", "label is required when dedicated option is set")
        elif self.label is not None and not LABEL_VALUE_RE.fullmatch(self.label):
            found.add(
                "label", f"label value '{self.label}' invalid, must contain only lowercase alphanumeric and dashes"
            )
        if problem := usd_problem(self.max_hourly_usd, "its"):
            found.add("max_hourly_usd", f"{self.subject}: {problem}")
        problem = node_disk_problem(self.disk)
        if problem:
            found.add("disk", problem)
        reserved = [key for key in self.tags if key.strip().lower() in RESERVED_TAG_KEYS]
        if reserved:
            found.add("tags", f"reserved tag key '{reserved[0]}' is not allowed")
        elif problem := tags_problem(self.tags):
            found.add("tags", problem)
        if found.ok("instance_type") and (problem := mac_problem(self.subject, [self.instance_type])):
            found.add("instance_type", problem)
        if self.ami_id is not None:
            problem = rules.invalid_ami_id(self.subject, self.ami_id)
            if problem:
                found.add("ami_id", problem)
        elif found.ok("instance_type") and (problem := needs_custom_nvidia_ami(self.subject, [self.instance_type])):
            found.add("instance_type", problem)
        found.run(self._reservation_rules, after=("capacity_type", "min_size", "max_size"))
        found.run(self._canary_rules, after=("name", "tags"))
        found.raise_found()
        return self

    def _reservation_rules(self) -> None:
        """A reservation is a Capacity Block (``CAPACITY_BLOCK``) or an ODCR (``ON_DEMAND``), targeted by the
        group's own launch template; a block group can be scaled to 0 (EKS user guide, Capacity Blocks for managed
        node groups: the desired size must be 0 for an upgrade, and EKS scales the group to 0 before the block ends)."""
        s, given = self.subject, self.capacity_reservation_id
        if given is None:
            if self.capacity_type == CAPACITY_BLOCK:
                raise FieldProblem(
                    "capacity_type",
                    f"{s}: capacity_type {CAPACITY_BLOCK} needs capacity_reservation_id "
                    f"(the Capacity Block the group launches into)",
                    keyed=True,
                )
            return
        if not syntax.EC2_ID_RES["capacity reservation"].fullmatch(given):
            raise FieldProblem(
                "capacity_reservation_id",
                f"{s}: invalid capacity reservation id '{given}' (must look like cr-0123456789abcdef0)",
                keyed=True,
            )
        if self.capacity_type == "SPOT":
            raise FieldProblem(
                "capacity_reservation_id",
                (
                    f"{s}: capacity_reservation_id needs capacity_type {CAPACITY_BLOCK} (a Capacity Block) or "
                    f"ON_DEMAND "
                    f"(an On-Demand Capacity Reservation), not SPOT"
                ),
                keyed=True,
            )
        for pinned in ("ami_id", "canary_ami_id"):
            if getattr(self, pinned) is not None:
                raise FieldProblem(
                    "capacity_reservation_id",
                    (
                        f"{s}: capacity_reservation_id cannot be used with {pinned} (pulumi-eks builds a pinned AMI's "
                        f"launch template and gives it no capacity reservation)"
                    ),
                    keyed=True,
                )
        if self.capacity_type == CAPACITY_BLOCK and self.min_size != 0:
            raise FieldProblem(
                "min_size",
                (
                    f"{s}: a {CAPACITY_BLOCK} group needs min_size 0 (got '{self.min_size}'): EKS scales it to 0 "
                    f"before "
                    f"the block ends, and an upgrade needs its desired size at 0"
                ),
                keyed=True,
            )

    @property
    def capacity_block(self) -> bool:
        """Whether the group launches into a Capacity Block (``capacity_type: CAPACITY_BLOCK``)."""
        return self.capacity_type == CAPACITY_BLOCK

    def _canary_rules(self) -> None:
        """The candidate AMI gets the group's AMI rules; its group needs a name EKS takes and room for its tag."""
        candidate = self.canary_ami_id
        if candidate is None:
            if "canary_size" in self.model_fields_set:
                raise FieldProblem(
                    "canary_size", f"{self.subject}: canary_size needs canary_ami_id (the AMI its canary tries)"
                )
            return
        canary = rules.node_group_subject(self.name + contract.CANARY_SUFFIX) if self.name else "canary node group"
        problem = rules.invalid_ami_id(canary, candidate)
        if problem:
            raise FieldProblem("canary_ami_id", problem)
        if candidate == self.ami_id:
            raise FieldProblem(
                "canary_ami_id",
                f"{self.subject}: canary_ami_id '{candidate}' is the group's own ami_id, so "
                f"its canary would try nothing new (remove canary_ami_id once the group runs it)",
            )
        problem = self.name and syntax.node_group_name_problem(self.name + contract.CANARY_SUFFIX)
        if problem:
            raise FieldProblem(
                "canary_ami_id", f"{self.subject}: its canary's name '{self.name}{contract.CANARY_SUFFIX}' {problem}"
            )
        if not 1 <= self.canary_size <= EKS_SCALING_MAX:
            raise FieldProblem(
                "canary_size", f"{self.subject}: canary_size must be 1-{EKS_SCALING_MAX} (got '{self.canary_size}')"
            )
        problem = tags_problem(self.tags, RACK_TAGS + 1, "the rack, with the canary's own tag,")
        if problem:
            raise FieldProblem("tags", f"{canary}: {problem}")

    @property
    def is_gpu(self) -> bool:
        return instances.is_nvidia_gpu_family(self.instance_type)

    @property
    def fixed_size(self) -> bool:
        """``min_size == max_size``: nothing but the config sets the group's size (Pulumi owns its desired size)."""
        return self.min_size == self.max_size

    def node_labels(self) -> dict[str, str]:
        labels: dict[str, str] = {}
        if self.system:
            labels[contract.SYSTEM_NODE_LABEL] = "true"
        if self.label:
            labels[contract.NODEGROUP_LABEL] = self.label
        if self.is_gpu:
            labels[contract.GPU_VENDOR_LABEL] = contract.GPU_VENDOR_NVIDIA
            # the Cluster Autoscaler counts a node as a GPU node by this label until its GPUs are advertised:
            # without it, a GPU group scales out again while the device plugin starts on the new node
            labels[upstream.CLUSTER_AUTOSCALER_GPU_LABEL] = autoscaler_gpu_type(self.instance_type)
        if self.build:
            labels[contract.BUILD_LABEL] = "true"
        return labels

    def node_taints(self) -> list[dict[str, str]]:
        """EKS taints (effects in the EKS API's spelling)."""
        taints: list[dict[str, str]] = []
        if self.system:
            taints.append({"key": contract.SYSTEM_NODE_LABEL, "value": "true", "effect": "NO_SCHEDULE"})
        if self.build:
            taints.append(
                {"key": contract.BUILD_TAINT_KEY, "value": contract.BUILD_TAINT_VALUE, "effect": "NO_SCHEDULE"}
            )
        if self.dedicated and self.label:
            taints.append({"key": contract.DEDICATED_TAINT_KEY, "value": self.label, "effect": "NO_SCHEDULE"})
        if self.is_gpu:
            taints.append({"key": contract.GPU_TAINT_KEY, "value": "true", "effect": "NO_SCHEDULE"})
        return taints
