"""The pack's view of a lane (``LaneView``): somewhere pods can land (its labels, taints, GPUs, and what sizes
its nodes), and the lanes of a stack. The lane contract a rack's ``lanes`` output and the policy config write is
``lane.Lane``; ``laneconfig`` reads that into this view, ``lanesource`` reads a stack's resources into it. How a
pod's selection lands on a lane follows Kubernetes' own rules (``scheduling``) and what the lane can launch
(``wellknown``, the instance table). Pure: the standard library and the pack's modules."""

from __future__ import annotations


from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from .. import contract
from ..facts import instances, wellknown
from . import bootfacts, checks, fit, rules, scheduling
from . import overlays as overlays_
from .scheduling import NodeTaint, Selection, Toleration, label_text

Finding = checks.Finding
GPU_RESOURCES = (contract.NVIDIA_GPU, contract.AMD_GPU)
Unknown = Union[type[BaseException], tuple[type[BaseException], ...]]


# ---- the seeds' placement contract (names in ``contract``) --------------------------------------------


def named_lanes(selection: Selection) -> list[tuple[str, str]]:
    """The lanes a selection names: ``(convox.io/nodepool|convox.io/label, value)`` of ``nodeSelector``
    pairs and ``In`` requirements, in order, without repeats."""
    found: list[tuple[str, str]] = []
    for req in selection.requirements:
        if req.key in contract.LANE_KEYS and req.operator == "In":
            found += [(req.key, v) for v in req.values if (req.key, v) not in found]
    return found


# ---- lanes -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reservations:
    """The EC2 capacity reservations a lane launches into, and where its nodes can be (to judge them by)."""

    ids: tuple[str, ...]
    """The reservations' ids (``cr-...``), in the order the lane names them: an EC2NodeClass's
    ``capacityReservationSelectorTerms`` ``id`` terms, a launch template's ``capacityReservationTarget``."""
    subnet_ids: tuple[str, ...] = ()
    """The subnets its nodes launch into, by id; () when it selects them otherwise (``subnets``)."""
    subnets: str = ""
    """How it selects its subnets when not by id (``by tags karpenter.sh/discovery=prod``), for a message."""
    zones: tuple[str, ...] = ()
    """The Availability Zones its own requirements allow (a NodePool's ``topology.kubernetes.io/zone`` In); (): any."""
    canary_of: str = ""
    """The lane whose reservations this canary shares (``contract.CANARY_OF``): its small limits leave none idle,
    its lane's hold them; '': a lane of its own."""
    max_nodes: Optional[int] = None
    """The most nodes the lane runs at once when a count bounds it (a node group's ``scalingConfig.maxSize``); None:
    its ``limits`` bound it (a pool), or nothing does."""


@dataclass(frozen=True)
class LaneView:
    """The pack's view of a lane, somewhere pods can land: its node labels and taints, whether it offers GPUs, and
    what sizes its nodes; read from a stack's resources (``lanesource``) or the policy config (``laneconfig``)."""

    name: str
    kind: str
    """``pool`` (Karpenter), ``node group``, or ``lane`` (named in the policy config)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[NodeTaint, ...] = ()
    gpu: bool = False
    requirements: tuple[wellknown.Requirement, ...] = ()
    """A NodePool's requirements (a node group's: its instance types and architecture): with the pod's,
    they decide which instance families and types it can get."""
    capacity: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The capacity-type labels its nodes carry and the values they can take
    (``((karpenter.sh/capacity-type, (on-demand,)),)``); () when not known."""
    root_gib: Optional[float] = None
    """The root (Bottlerocket: data) volume, for ephemeral storage; None: the EKS AMIs' 20 GiB."""
    limits: tuple[tuple[str, float], ...] = ()
    """A NodePool's ``limits`` (cores, bytes, GPUs): no node larger than them is ever launched."""
    stated: Optional[fit.Allocatable] = None
    """Allocatable of its largest node as the policy config states it (a lane of another stack)."""
    max_gpus: Optional[int] = None
    """Most GPUs per node, as the policy config states it."""
    os: tuple[str, ...] = ()
    """The ``kubernetes.io/os`` values its nodes carry (``linux``, ``windows``); () when not known."""
    launches_gpus: bool = False
    """A pool no GPU lane by design (no GPU families, taint or label) that can still launch NVIDIA GPU
    instances for a pod that asks (it restricts no family), on an image that drives them."""
    never: str = ""
    """Why no node of it ever runs, said of the pool (``is never created: Kubernetes refuses limits.cpu 'abc'
    ...``, from ``bootfacts.node_pool_limits``, as the worst case says it); '': it runs."""
    overlays: tuple[overlays_.Overlay, ...] = ()
    """The NodeOverlays Karpenter applies to a pool's instance types (the feature gate on): the GPUs they give."""
    reservations: Optional[Reservations] = None
    """The capacity reservations it launches into; None: none (what ``reservations`` checks judge)."""

    def _alternatives(self, selection: Selection) -> list[tuple[wellknown.Requirement, ...]]:
        """Per alternative of the pod's required affinity, the lane's requirements and the pod's
        (Karpenter intersects them)."""
        terms = selection.terms if selection.terms is not None else ((),)
        return [self.requirements + as_wellknown(selection.node_selector + tuple(term)) for term in terms]

    def _families(self, selection: Selection) -> list[list[str]]:
        """Per alternative of the pod's required affinity, the families a pod with ``selection`` can get
        here; [] for a lane without requirements."""
        if not self.requirements:
            return []
        return [wellknown.candidates(reqs) for reqs in self._alternatives(selection)]

    def _capacity_holds(self, requirements: Sequence[scheduling.PodRequirement]) -> bool:
        """Whether the pod's requirements on the capacity type and the OS hold for some node of the lane."""
        offered = dict(self.capacity)
        for req in requirements:
            if req.key == OS_KEY and self.os and not any(wellknown.holds(req.operator, req.values, v) for v in self.os):
                return False
            carried = self.reservation_ids_carried() if req.key == RESERVATION_ID_KEY else None
            if carried is not None and not any(wellknown.holds(req.operator, req.values, v) for v in carried):
                return False
            if req.key in (wellknown.CAPACITY_TYPE_KEY, wellknown.EKS_CAPACITY_TYPE_KEY) and self.capacity:
                values = offered.get(req.key)
                if values is None:
                    if not wellknown.holds(req.operator, req.values, None):
                        return False
                elif not any(wellknown.holds(req.operator, req.values, v) for v in values):
                    return False
        return True

    def reservation_ids_carried(self) -> Optional[list[Optional[str]]]:
        """The ``karpenter.k8s.aws/capacity-reservation-id`` values its nodes can carry: Karpenter labels a node
        it launched into a reservation with the reservation's id (karpenter-provider-aws v1.14.1
        ``pkg/apis/v1/labels.go``), and no other node (None in the list: a node without the label). None: not
        known (its capacity types are not, or it launches reserved capacity into reservations it does not name)."""
        if not self.capacity:
            return None
        karpenter = dict(self.capacity).get(wellknown.CAPACITY_TYPE_KEY, ())
        reserved = "reserved" in karpenter
        if reserved and self.reservations is None:
            return None
        ids: list[Optional[str]] = list(self.reservations.ids) if self.reservations is not None and reserved else []
        return ids + ([None] if not reserved or any(v != "reserved" for v in karpenter) else [])

    def admitted(self, selection: Selection) -> Optional[Selection]:
        """``selection`` with only the affinity terms some instance this lane can launch satisfies: the
        pod's well-known requirements (``kubernetes.io/arch``, ``karpenter.k8s.aws/instance-*``, the
        capacity type, ``kubernetes.io/os``); lanes without requirements satisfy all but the last two.
        None: no term is satisfied."""

        def holds(term: tuple[scheduling.PodRequirement, ...]) -> bool:
            requirements = selection.node_selector + term
            return self._capacity_holds(requirements) and (
                not self.requirements or bool(wellknown.candidates(self.requirements + as_wellknown(requirements)))
            )

        return selection.keeping(holds)

    def admits(self, selection: Selection) -> bool:
        return self.admitted(selection) is not None

    def reached_by(self, selection: Selection, known: frozenset[str]) -> Optional[Selection]:
        """``selection`` as it lands on this lane: the affinity terms that select the lane by its labels
        and that some node of it meets; None: the pod never lands here."""
        on = selection.on(self.labels, known)
        return None if on is None else self.admitted(on)

    def launchable(
        self, selection: Selection
    ) -> tuple[list[instances.InstanceType], list[str], list[instances.InstanceType]]:
        """The instance types a pod with ``selection`` can get here (within the pool's limits), the
        families the table cannot size, and the types the limits rule out."""
        found: dict[str, instances.InstanceType] = {}
        unsized: list[str] = []
        labels = tuple(sorted(self.labels.items()))
        for reqs in self._alternatives(selection) if self.requirements else []:
            types, families = wellknown.launchable(reqs)
            found.update(
                (t.name, overlays_.overlaid(t, self.overlays, self.name, labels) if self.overlays else t) for t in types
            )
            unsized += [f for f in families if f not in unsized]
        within = self._within_limits()
        kept: list[instances.InstanceType] = []
        capped: list[instances.InstanceType] = []
        for itype in found.values():
            (kept if within(itype) else capped).append(itype)
        return kept, unsized, capped

    def _within_limits(self) -> Callable[[instances.InstanceType], bool]:
        """Whether a type fits the pool's ``limits`` (read once for all the types it is asked of), as the worst
        case reads them (``fit.within_limits``: every limit, ``nodes`` among them)."""
        return fit.within_limits(dict(self.limits))

    def gpu_for(self, selection: Selection) -> bool:
        """Whether a pod with ``selection`` can get an NVIDIA GPU instance here."""
        if not self.requirements:
            return self.gpu
        return (self.gpu or self.launches_gpus) and any(
            any(f != wellknown.OTHER_X86 and instances.is_nvidia_gpu_family(f) for f in families)
            for families in self._families(selection)
        )

    def mig_for(self, selection: Selection, profiles: Sequence[str]) -> bool:
        """Whether a pod with ``selection`` can get an instance here whose GPUs have every MIG profile in
        ``profiles`` ('' is any); True for a lane of the policy config that names no instances (not known)."""
        if not self.requirements:
            return True
        wanted = {p for p in profiles if p}
        return any(
            any(
                f != wellknown.OTHER_X86 and instances.mig_profiles(f) and wanted <= set(instances.mig_profiles(f))
                for f in families
            )
            for families in self._families(selection)
        )

    @property
    def subject(self) -> str:
        if self.kind == "pool":
            return rules.pool_subject(self.name)  # one wording for a pool, the lanes' rules' own
        label = self.labels.get(contract.NODEGROUP_LABEL)
        word = "node group" if self.kind == "node group" else "lane"
        return f'{word} "{self.name}" ({contract.NODEGROUP_LABEL}={label})' if label else f'{word} "{self.name}"'

    @property
    def gpu_taints(self) -> list[NodeTaint]:
        return [t for t in self.taints if t.blocking and t.key in (contract.NVIDIA_GPU, contract.AMD_GPU)]

    def selector(self) -> str:
        """How a workload selects this lane, in ``nodeSelectorLabels`` terms."""
        for key in (contract.NODEPOOL_LABEL, contract.NODEGROUP_LABEL):
            if key in self.labels:
                return f"{key}: {self.labels[key]}"
        if self.labels:
            key, value = sorted(self.labels.items())[0]
            return f"{key}: {value}"
        return self.subject

    def untolerated(self, tolerations: Sequence[Toleration]) -> list[NodeTaint]:
        return [t for t in self.taints if t.blocking and not any(tol.tolerates(t) for tol in tolerations)]

    def _key(self) -> tuple[Any, ...]:
        return (self.kind, tuple(sorted(self.labels.items())), self.taints, self.gpu)

    @property
    def sized(self) -> bool:
        """Whether its nodes' sizes are known (instance types from requirements, or stated)."""
        return bool(self.requirements) or self.stated is not None or self.max_gpus is not None


RESERVED_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws", "eks.amazonaws.com")
"""Label domains Kubernetes, Karpenter and EKS reserve: their labels are well-known, not a lane's own."""


def as_wellknown(requirements: Iterable[scheduling.PodRequirement]) -> tuple[wellknown.Requirement, ...]:
    return tuple(
        wellknown.Requirement(r.key, r.operator, r.values) for r in requirements if r.operator in wellknown.OPERATORS
    )


OS_KEY = wellknown.OS_KEY
LINUX = ("linux",)


def kubernetes_os(os_name: str) -> tuple[str, ...]:
    """The ``kubernetes.io/os`` label of a lane's nodes: ``windows`` for a Windows AMI, else ``linux``
    (AL2023, AL2, Bottlerocket and custom AMIs of the EKS node images are all Linux)."""
    return ("windows",) if os_name == "windows" else LINUX


ON_DEMAND = "on-demand"
RESERVATION_ID_KEY = "karpenter.k8s.aws/capacity-reservation-id"
"""The label Karpenter gives a node launched into a capacity reservation: the reservation's id."""
ANY_INSTANCE = (wellknown.Requirement(wellknown.ARCH_KEY, "Exists", ()),)
"""A pool with no requirements: any instance type."""
EKS_DEFAULT_INSTANCE_TYPE = "t3.medium"
"""What EKS launches for a node group that names no instance type (EKS API, CreateNodegroup instanceTypes)."""


@dataclass(frozen=True)
class Lanes:
    """Every lane of the stack and of the policy config, and the ones whose facts are not known yet."""

    lanes: tuple[LaneView, ...]
    unknown: tuple[str, ...] = ()
    """Lanes whose labels or taints are not known at preview (named as their resources)."""
    never: tuple[LaneView, ...] = ()
    """Pools the stack declares whose nodes never run (``LaneView.never``): no pod lands on them, as on a pool the
    stack lacks, but a pod that selects one is told why. Their label keys are the stack's own (known)."""

    @property
    def known_keys(self) -> frozenset[str]:
        return frozenset(k for lane in self.lanes + self.never for k in lane.labels) | frozenset(contract.LANE_KEYS)

    def existing(self, key: str) -> list[str]:
        return sorted({lane.labels[key] for lane in self.lanes if key in lane.labels})

    @property
    def gpu_lanes(self) -> list[LaneView]:
        return [lane for lane in self.lanes if lane.gpu]


def read_labels(value: Any) -> dict[str, str]:
    return {str(k): label_text(v) for k, v in bootfacts.as_map(value).items()}


def read_taints(value: Any) -> tuple[NodeTaint, ...]:
    if isinstance(value, Mapping):  # pulumi-eks NodeGroupV2: {key: {value, effect}}
        return tuple(
            NodeTaint(
                str(k),
                bootfacts.text(bootfacts.as_map(v).get("value")),
                scheduling.effect(bootfacts.as_map(v).get("effect")),
            )
            for k, v in value.items()
        )
    return tuple(NodeTaint.read(t) for t in bootfacts.as_list(value))


def number_text(value: Any) -> str:
    """A config value as the user wrote it: numbers arrive as floats (``2.0`` was ``2``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


SELECTING = ("In", "Exists", "Gt")
NFD_PREFIX = "feature.node.kubernetes.io/"
"""node-feature-discovery's labels: in a kubernetes.io domain, but written by NFD's worker, on the nodes it runs on."""


def is_well_known(key: str) -> bool:
    """A label the kubelet, EKS or Karpenter give nodes (judged against the instance table, or not at all)."""
    domain, slash, _ = key.partition("/")
    return bool(slash) and domain.endswith(RESERVED_DOMAINS) and not key.startswith(NFD_PREFIX)
