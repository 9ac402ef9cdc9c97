"""The pack's seven policies as pure functions: facts in (``facts``), messages out (``rules``).

No pulumi imports: the tests call these directly, and ``__main__`` only adapts them to the
policy SDK. Resource policies take one resource; stack policies take the whole stack, because
what a Karpenter pool boots is split between its NodePool (instance types, taints, labels) and
its EC2NodeClass (AMI, family), and an EKS node group's image lives in its launch template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, Union

try:  # imported as ``mixed_os_racks.policies.checks`` (the installed package, the tests)
    from . import amifacts, facts, instances, rules
except ImportError:  # run as the pack: the pack directory is first on sys.path
    import amifacts  # type: ignore[no-redef]
    import facts  # type: ignore[no-redef]
    import instances  # type: ignore[no-redef]
    import rules  # type: ignore[no-redef]

Lookup = Callable[[str], "amifacts.AmiFacts"]
"""An AMI id -> its facts (``lookup.describe_image``); raises ``LookupError``."""
Unknown = Union[type[BaseException], tuple[type[BaseException], ...]]
"""The exception(s) meaning 'not known at preview' (the policy SDK's ``UnknownValueError``)."""


@dataclass(frozen=True)
class Finding:
    message: str
    urn: str = ""
    """Stack policies: the resource the finding is about."""
    certain: bool = True
    """False: the policy cannot decide (the pack reports it as an advisory, never a silence)."""


AmiFacts = amifacts.AmiFacts


class AmiKnowledge:
    """What one policy knows about AMIs: its config (``amis``, ``amiRootSnapshotGiB``), what the
    resource itself records, then EC2 when the config sets ``lookup: true``."""

    def __init__(self, config: Mapping[str, Any], lookup: Optional[Lookup] = None,
                 encryption_lookup: Optional[Callable[[], bool]] = None) -> None:
        self.config = config
        self.lookup = lookup if config.get("lookup") is True else None
        self.encryption_lookup = encryption_lookup if config.get("lookup") is True else None

    def configured(self, ami_id: str) -> Optional[AmiFacts]:
        entry = facts.as_map(facts.as_map(self.config.get("amis")).get(ami_id))
        return amifacts.decode(ami_id, entry) if entry else None

    def looked_up(self, ami_id: str) -> tuple[Optional[AmiFacts], str]:
        """(facts, why not): EC2's answer when lookup is on."""
        if self.lookup is None:
            return None, ""
        try:
            return self.lookup(ami_id), ""
        except LookupError as exc:
            return None, f"look-up failed: {exc}"

    def facts(self, ami_id: str) -> Optional[AmiFacts]:
        return self.configured(ami_id) or self.looked_up(ami_id)[0]

    def snapshot_encrypted(self, ami_id: str, recorded: Optional[bool]) -> Optional[bool]:
        """Whether the AMI's root snapshot is encrypted: config, the resource's own record, EC2."""
        configured = self.configured(ami_id)
        if configured is not None and configured.root_snapshot_encrypted is not None:
            return configured.root_snapshot_encrypted
        if recorded is not None:
            return recorded
        found = self.looked_up(ami_id)[0]
        return found.root_snapshot_encrypted if found is not None else None

    def encryption_by_default(self, recorded: Optional[bool]) -> Optional[bool]:
        """Whether the account encrypts new EBS volumes: config, the resource's own record, EC2."""
        configured = self.config.get("ebsEncryptionByDefault")
        if isinstance(configured, bool):
            return configured
        if recorded is not None:
            return recorded
        if self.encryption_lookup is None:
            return None
        try:
            return self.encryption_lookup()
        except LookupError:
            return None

    def snapshot_gib(self, ami_id: Optional[str], recorded: Optional[float]) -> tuple[Optional[float], str]:
        """The root snapshot size, in the issue's order: config, the resource's own record, EC2."""
        if ami_id:
            size = facts.number(facts.as_map(self.config.get("amiRootSnapshotGiB")).get(ami_id))
            configured = self.configured(ami_id)
            if size is None and configured is not None:
                size = configured.root_snapshot_gib
            if size is not None:
                return size, ""
        if recorded is not None:
            return recorded, ""
        if not ami_id:
            return None, "selected by something other than an id"
        found, why = self.looked_up(ami_id)
        if found is not None and found.root_snapshot_gib is not None:
            return found.root_snapshot_gib, ""
        return None, why or ("EC2 reports no root snapshot size" if found else "")


def subject(lane: facts.Lane) -> str:
    """How every message names the lane, in the components' words."""
    if isinstance(lane, (facts.NodeClass, facts.NodePool)):
        return rules.pool_subject(lane.subject_name)
    if isinstance(lane, facts.LaunchTemplate):
        return rules.launch_template_subject(lane.subject_name)
    return rules.node_group_subject(lane.subject_name)


def well_formed(amis: Sequence[facts.Ami]) -> list[facts.Ami]:
    """AMIs the other rules can reason about (``ami-id-format`` reports the malformed ones)."""
    return [a for a in amis if a.id is None or rules.invalid_ami_id("", a.id) is None]


def gpu_reason(lane: facts.Lane) -> Optional[str]:
    return lane.gpu_reason(instances.is_nvidia_gpu_family, rules.GPU_TAINT_KEY, rules.GPU_VENDOR_LABEL)


# ---- resource policies ---------------------------------------------------------------------------------


def ami_id_format(lane: facts.Lane) -> Iterator[Finding]:
    for value in lane.ami_id_values():
        problem = rules.invalid_ami_id(subject(lane), value)
        if problem:
            yield Finding(problem)


def disk_fits_ami_snapshot(lane: facts.Lane, knowledge: AmiKnowledge) -> Iterator[Finding]:
    for ami in well_formed(lane.amis()):
        known = knowledge.facts(ami.id) if ami.id else None
        disk = lane.root_disk(known.root_device_name if known and known.root_device_name else facts.AL2023_ROOT_DEVICE)
        if disk is None:
            continue
        size, why = knowledge.snapshot_gib(ami.id, lane.recorded_snapshot_gib(rules.ROOT_SNAPSHOT_ANNOTATION))
        if size is None:
            yield Finding(rules.disk_unverified(subject(lane), disk.gib, ami.label, why), certain=False)
            continue
        problem = rules.disk_below_snapshot(subject(lane), disk.gib, ami.label, size)
        if problem:
            yield Finding(f"{problem}; {rules.gib(disk.gib)} GiB is {disk.how}" if disk.how else problem)


def pinned_ami_age(lane: facts.Lane, knowledge: AmiKnowledge, now: Optional[datetime] = None) -> Iterator[Finding]:
    max_days = facts.number(knowledge.config.get("maxAgeDays"))
    now = now or datetime.now(timezone.utc)
    for ami in well_formed(lane.amis()):
        known = knowledge.facts(ami.id) if ami.id else None
        created = _parse_date(known.creation_date) if known else None
        if created is None or max_days is None:
            continue
        problem = rules.ami_too_old(subject(lane), ami.label, known.creation_date, (now - created).days, max_days)  # type: ignore[union-attr]
        if problem:
            yield Finding(problem)


def ami_k8s_version(lane: facts.Lane, knowledge: AmiKnowledge) -> Iterator[Finding]:
    cluster = rules.k8s_minor(lane.kubernetes_version() or knowledge.config.get("kubernetesVersion"))
    if cluster is None:
        return
    for ami in well_formed(lane.amis()):
        known = knowledge.facts(ami.id) if ami.id else None
        minor = rules.k8s_minor_of_ami(known.name) if known else None
        if known and minor:
            problem = rules.ami_for_other_k8s(subject(lane), ami.label, known.name, minor, cluster)
            if problem:
                yield Finding(problem)


def _parse_date(value: str) -> Optional[datetime]:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


# ---- the stack, with its lanes joined --------------------------------------------------------------


@dataclass(frozen=True)
class StackResource:
    type: str
    name: str
    urn: str
    props: Mapping[str, Any]
    property_dependencies: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Property -> the URNs it depends on (how a node group names its launch template's resource)."""


NODE_GROUPS = (facts.EksNodeGroup, facts.PulumiEksNodeGroup)


class Stack:
    """Every lane of the stack, with NodePools joined to their EC2NodeClass (by name) and node
    groups to their launch template (by the ``launchTemplate`` property's dependency)."""

    def __init__(self, resources: Sequence[StackResource], unknown: Unknown = ()) -> None:
        self.items = [(res, lane) for res in resources if (lane := facts.read(res.type, res.name, res.props))]
        self._by_urn = {res.urn: lane for res, lane in self.items}
        self._referenced = {
            urn for res, lane in self.items if isinstance(lane, NODE_GROUPS)
            for urn in res.property_dependencies.get("launchTemplate", ())
        }
        self._unknown = unknown
        self._node_classes: Optional[dict[str, facts.NodeClass]] = None

    def node_class(self, pool: facts.NodePool) -> Optional[facts.NodeClass]:
        if self._node_classes is None:
            by_name: dict[str, facts.NodeClass] = {}
            for _, lane in self.items:
                if isinstance(lane, facts.NodeClass):
                    try:
                        by_name.setdefault(lane.subject_name, lane)
                    except self._unknown:
                        continue  # a name not known at preview: no pool can be joined to it yet
            self._node_classes = by_name
        return self._node_classes.get(pool.node_class_name)

    def launch_template(self, res: StackResource) -> Optional[facts.LaunchTemplate]:
        for urn in res.property_dependencies.get("launchTemplate", ()):
            lane = self._by_urn.get(urn)
            if isinstance(lane, facts.LaunchTemplate):
                return lane
        return None

    def is_referenced(self, res: StackResource) -> bool:
        """A launch template some node group of the stack uses (judged as part of that group)."""
        return res.urn in self._referenced

    def boot(self, res: StackResource, lane: facts.Lane) -> Optional["Boot"]:
        """What a lane boots, joins resolved; None for lanes judged through another one
        (NodeClasses through their pools, launch templates through the node groups using them)."""
        if isinstance(lane, facts.NodePool):
            node_class = self.node_class(lane)
            return Boot(
                os=lambda: node_class.os() if node_class else "",
                amis=lambda: node_class.amis() if node_class else [],
                types=lane.instance_types,
            )
        if isinstance(lane, NODE_GROUPS):
            template = self.launch_template(res)

            def declared() -> str:
                own = lane.os()
                return template.os() if own in ("", "custom") and template is not None else own

            return Boot(
                os=declared,
                amis=lambda: lane.amis() or (template.amis() if template else []),
                types=lambda: lane.instance_types() or (template.instance_types() if template else []),
                template=template,
            )
        if isinstance(lane, facts.LaunchTemplate) and not self.is_referenced(res):
            return Boot(os=lane.os, amis=lane.amis, types=lane.instance_types)
        if isinstance(lane, facts.NodeClass):
            return Boot(os=lane.os, amis=lane.amis, types=lambda: [], judged_elsewhere=True)
        return None


@dataclass(frozen=True)
class Boot:
    """A lane's boot facts, each read only when a rule asks (so unknowns stay where they matter)."""

    os: Callable[[], str]
    amis: Callable[[], list[facts.Ami]]
    types: Callable[[], list[str]]
    template: Optional[facts.LaunchTemplate] = None
    judged_elsewhere: bool = False
    """A NodeClass: its pool is the GPU/arch lane; only its own AMI family is judged on it."""


StackCheck = Callable[[Stack, StackResource, facts.Lane, AmiKnowledge], Iterator[Finding]]


def judge_stack(check: StackCheck, resources: Sequence[StackResource], knowledge: AmiKnowledge, unknown: Unknown = ()) -> list[Finding]:
    """Run ``check`` on every lane. A lane whose facts are ``unknown`` (the SDK's exception for a
    value not known at preview) becomes an uncertain finding; the other lanes are still judged."""
    stack = Stack(resources, unknown)
    found: list[Finding] = []
    for res, lane in stack.items:
        try:
            found.extend(check(stack, res, lane, knowledge))
        except unknown as exc:
            found.append(Finding(f"{_subject(lane, res, unknown)}: {getattr(exc, 'message', exc)}", res.urn, certain=False))
    return found


def _subject(lane: facts.Lane, res: StackResource, unknown: Unknown) -> str:
    try:
        return subject(lane)
    except unknown:
        return f"{res.type} '{res.name}'"


# ---- stack policies ------------------------------------------------------------------------------------


def al2023_family(stack: Stack, res: StackResource, lane: facts.Lane, knowledge: AmiKnowledge) -> Iterator[Finding]:
    boot = stack.boot(res, lane)
    if boot is None or isinstance(lane, facts.NodePool):
        return
    amis = well_formed(boot.amis())
    if not amis:
        return
    declared = boot.os()
    if isinstance(lane, facts.LaunchTemplate) and not declared:
        return  # a launch template of no EKS node group that boots no EKS node OS: not a node
    fix = lane.os_fix or (boot.template.os_fix if boot.template else "")
    problem = rules.pinned_ami_not_al2023(subject(lane), declared, lane.lane_word, fix)
    if problem:
        yield Finding(problem, urn=res.urn)
    for ami in amis:
        known = knowledge.facts(ami.id) if ami.id else None
        seen = rules.os_of_ami(known.name, known.description) if known else None
        problem = seen and rules.ami_names_other_os(subject(lane), ami.label, known.name, seen)  # type: ignore[union-attr]
        if problem:
            yield Finding(problem, urn=res.urn)


def gpu_lane_os(stack: Stack, res: StackResource, lane: facts.Lane, knowledge: AmiKnowledge) -> Iterator[Finding]:
    boot = stack.boot(res, lane)
    if boot is None or boot.judged_elsewhere or boot.os() != "bottlerocket":
        return
    reason = gpu_reason(lane) or (gpu_reason(boot.template) if boot.template else None)
    problem = reason and rules.gpu_lane_on_bottlerocket(subject(lane), "bottlerocket", reason)
    if problem:
        yield Finding(problem, urn=res.urn)


def arch_matches_ami(stack: Stack, res: StackResource, lane: facts.Lane, knowledge: AmiKnowledge) -> Iterator[Finding]:
    boot = stack.boot(res, lane)
    if boot is None or boot.judged_elsewhere:
        return
    amis = [a for a in well_formed(boot.amis()) if a.id]
    if not amis:
        return
    arches = lane.arch_requirement() or sorted({instances.instance_arch(t) for t in boot.types()})
    for ami in amis if arches else []:
        known = knowledge.facts(ami.id)  # type: ignore[arg-type]
        if known and known.architecture:
            problem = rules.arch_mismatch(subject(lane), arches, ami.label, known.architecture)
            if problem:
                yield Finding(problem, urn=res.urn)


# ---- root-volume-encrypted -----------------------------------------------------------------------------

_ENCRYPTION_FIX = {
    facts.NodeClass: "set encrypted: true on the root volume's blockDeviceMappings entry",
    facts.LaunchTemplate: 'set encrypted "true" on the root device\'s block device mapping',
}
_PINNED_GROUP_FIX = "pin an encrypted copy of the AMI, e.g. aws ec2 copy-image --encrypted, or turn on EBS encryption by default"
_SELF_MANAGED_FIX = "set nodeRootVolumeEncrypted: true"
_PUBLIC = facts.Ami(None, "the EKS-optimized AMI it selects")
"""An alias or an EKS ``amiType`` selects a public AMI, whose root snapshot is unencrypted."""


def _encryption_fix(lane: facts.Lane) -> str:
    if isinstance(lane, facts.PulumiEksNodeGroup):
        return _PINNED_GROUP_FIX if lane.type == facts.MANAGED_NODE_GROUP else _SELF_MANAGED_FIX
    return _ENCRYPTION_FIX.get(type(lane), _PINNED_GROUP_FIX)


def _judged_for_encryption(stack: Stack, res: StackResource, lane: facts.Lane) -> bool:
    if isinstance(lane, facts.LaunchTemplate):  # a node's template: a node group's, or one that boots an EKS node OS
        return stack.is_referenced(res) or lane.os() != ""
    return isinstance(lane, (facts.NodeClass, facts.PulumiEksNodeGroup))


def root_volume_encrypted(stack: Stack, res: StackResource, lane: facts.Lane, knowledge: AmiKnowledge) -> Iterator[Finding]:
    """Every node's root volume is encrypted: asked for by the lane, or, when it asks nothing, made
    from an encrypted snapshot or in an account that encrypts new volumes by default."""
    if not _judged_for_encryption(stack, res, lane):
        return
    pinned = lane.amis()
    amis = well_formed(pinned)
    if pinned and not amis:
        return  # malformed ids: ami-id-format's
    known = knowledge.facts(amis[0].id) if len(amis) == 1 and amis[0].id else None
    device = known.root_device_name if known and known.root_device_name else facts.AL2023_ROOT_DEVICE
    volume = lane.root_volume(device)
    if volume is None or volume.encrypted:
        return
    by_default = knowledge.encryption_by_default(facts.flag(lane.recorded(rules.ENCRYPTION_BY_DEFAULT_TAG)))
    if by_default:
        return
    fix = _encryption_fix(lane)
    for ami in amis or [_PUBLIC]:
        if ami is _PUBLIC:
            snapshot: Optional[bool] = False
        elif ami.id:
            snapshot = knowledge.snapshot_encrypted(ami.id, facts.flag(lane.recorded(rules.ROOT_SNAPSHOT_ENCRYPTED_TAG)))
        else:
            snapshot = None
        if snapshot:
            continue
        label = f"ami_id '{ami.id}'" if ami.id else ami.label
        if snapshot is False and by_default is False:
            yield Finding(rules.root_volume_unencrypted(subject(lane), label, fix), urn=res.urn)
            continue
        unknown = " and ".join(
            what for what, value in (("whether its root snapshot is encrypted", snapshot),
                                     ("whether the account encrypts new EBS volumes by default", by_default))
            if value is None
        )
        how = (f"{fix}; or set amis.<id>.rootSnapshotEncrypted and ebsEncryptionByDefault in the policy config, "
               f"or lookup: true")
        yield Finding(rules.root_encryption_unverified(subject(lane), label, unknown, how), urn=res.urn, certain=False)
