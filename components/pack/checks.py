"""The pack's policies as pure functions: facts in (``bootfacts``), messages out (``rules``).

No pulumi imports: the tests call these directly, and ``__main__`` only adapts them to the
policy SDK. Resource policies take one resource; stack policies take the whole stack, because
what a Karpenter pool boots is split between its NodePool (instance types, taints, labels) and
its EC2NodeClass (AMI, family), an EKS node group's image lives in its launch template, and a
launch template pulumi-eks builds carries no tags: what our components record reaches it through
the node group using it.

A finding is certain (a violation at the policy's level), unknown until apply (a value a preview
cannot know: the SDK's "can't run policy ... during preview"), or unverified (an AMI fact nobody
gave: reported by ``ami-facts-unknown``, with the check, the AMI or selector, and what would make
it verifiable).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
import functools
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, Union

from .. import clock, contract
from ..facts import amifacts, instances, osfamily, upstream, wellknown
from . import bootfacts, rules

FORMAT, FAMILY, DISK, GPU, ARCH, ENCRYPTION, AGE, K8S = (
    "ami-id-format",
    "al2023-family",
    "disk-fits-ami-snapshot",
    "gpu-lane-os",
    "arch-matches-ami",
    "root-volume-encrypted",
    "pinned-ami-age",
    "ami-k8s-version",
)
UNVERIFIED = "ami-facts-unknown"

Lookup = Callable[[str], "amifacts.AmiFacts"]
"""An AMI id -> its facts (``lookup.describe_image``); raises ``LookupError``."""
Select = Callable[[Mapping[str, Any]], "list[amifacts.AmiFacts]"]
"""A selector term (name/owner/tags/ssmParameter) -> the images it matches (``lookup.select``); raises ``LookupError``.
"""
Unknown = Union[type[BaseException], tuple[type[BaseException], ...]]
"""The exception(s) meaning 'not known at preview' (the policy SDK's ``UnknownValueError``)."""


@dataclass(frozen=True)
class Finding:
    message: str
    urn: str = ""
    """Stack policies: the resource the finding is about."""
    certain: bool = True
    """False: a value the rule reads is not known until apply (the SDK's advisory "can't run policy")."""
    unverified: bool = False
    """True: an AMI fact is unknown, so the check could not run (the ``ami-facts-unknown`` advisory)."""


AmiFacts = amifacts.AmiFacts


@dataclass(frozen=True)
class Resolved:
    """One image a lane boots, as far as it is known."""

    ami: bootfacts.Ami
    facts: Optional[AmiFacts]
    why: str = ""
    """Why the facts are missing: '' (not looked up), or the look-up's answer."""

    @property
    def label(self) -> str:
        """The id for an id; ``ami-... (the AMI named 'x-*')`` for an image a selector resolved to."""
        if self.ami.id or self.facts is None:
            return self.ami.label
        return f"{self.facts.id} ({self.ami.label})"


class AmiKnowledge:
    """What one policy knows about AMIs: its config (``amis``, ``amiRootSnapshotGiB``), what the
    resource itself records, then EC2 (and SSM) when the config sets ``lookup: true``."""

    def __init__(
        self,
        config: Mapping[str, Any],
        lookup: Optional[Lookup] = None,
        encryption_lookup: Optional[Callable[[], bool]] = None,
        select: Optional[Select] = None,
        policy: str = "",
    ) -> None:
        self.config = config
        self.lookups = config.get("lookup") is True
        self.lookup = lookup if self.lookups else None
        self.encryption_lookup = encryption_lookup if self.lookups else None
        self.select = select if self.lookups else None
        self.policy = policy
        """The policy this knowledge is configured for (what a message tells the user to configure)."""

    def configured(self, ami_id: str) -> Optional[AmiFacts]:
        entry = bootfacts.as_map(bootfacts.as_map(self.config.get("amis")).get(ami_id))
        return amifacts.decode(ami_id, entry) if entry else None

    def looked_up(self, ami_id: str) -> tuple[Optional[AmiFacts], str]:
        """(facts, why not): EC2's answer when lookup is on."""
        if self.lookup is None:
            return None, ""
        try:
            return self.lookup(ami_id), ""
        except LookupError as exc:
            return None, f"the look-up failed: {exc}"

    def resolve(self, amis: Sequence[bootfacts.Ami], karpenter: bool = False) -> list[Resolved]:
        """The images ``amis`` boot: an id's facts (config, else EC2), a selector's matches (EC2, with
        lookup). ``karpenter``: the lane is an EC2NodeClass, which launches one image per architecture
        (the newest, non-deprecated first) of everything its terms match."""
        out: list[Resolved] = []
        for ami in amis:
            if ami.id:
                found, why = (self.configured(ami.id), "")
                if found is None:
                    found, why = self.looked_up(ami.id)
                out.append(Resolved(ami, found, why))
            elif ami.term is not None and self.select is not None:
                try:
                    matches = self.select(ami.term)
                except LookupError as exc:
                    out.append(Resolved(ami, None, f"the look-up failed: {exc}"))
                    continue
                if not matches:
                    out.append(Resolved(ami, None, "EC2 finds no image it selects"))
                out += [Resolved(ami, image) for image in matches]
            else:
                out.append(Resolved(ami, None))
        if karpenter and self.select is not None:
            chosen = {image.id for image in amifacts.karpenter_choice(r.facts for r in out if r.facts)}
            out = [r for r in out if r.facts is None or r.facts.id in chosen]
        return out

    def unresolved_how(self, resolved: Resolved, configure: str) -> str:
        """What would make an unknown fact of ``resolved`` known. ``configure`` names the config for an id."""
        if resolved.ami.id:
            return f"{configure} in the policy config, or set lookup: true on {self.policy} (EC2 DescribeImages)"
        if resolved.ami.term is not None and not self.lookups:
            via = (
                "SSM GetParameter, then EC2 DescribeImages"
                if resolved.ami.how == "SSM parameter"
                else "EC2 DescribeImages"
            )
            return (
                f"set lookup: true on {self.policy}: it is selected by {resolved.ami.how}, which only the look-up "
                f"resolves ({via})"
            )
        return f"make {resolved.ami.label} resolvable with the pack's credentials, or pin it by id"

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

    def configured_snapshot_gib(self, ami_id: str) -> Optional[float]:
        size = bootfacts.number(bootfacts.as_map(self.config.get("amiRootSnapshotGiB")).get(ami_id))
        configured = self.configured(ami_id)
        return size if size is not None else (configured.root_snapshot_gib if configured else None)


# ---- how messages name a lane ---------------------------------------------------------------------


def subject(lane: bootfacts.LaneResource) -> str:
    """How every message names the lane, in the components' words: a NodePool by its name (and its
    class when that differs), an EC2NodeClass by its own (by its pool's when our components built it),
    a launch template pulumi-eks built by its node group."""
    if isinstance(lane, bootfacts.NodePool):
        group, kind, name = lane.node_class_ref
        if name and (name != lane.subject_name or (group, kind) != bootfacts.KARPENTER_CLASS):
            kind = "EKS Auto Mode NodeClass" if lane.auto_mode else kind
            return rules.pool_with_class_subject(lane.subject_name, name, kind)
        return rules.pool_subject(lane.subject_name)
    if isinstance(lane, bootfacts.NodeClass):
        return rules.pool_subject(lane.rack_pool) if lane.rack_pool else rules.node_class_subject(lane.subject_name)
    if isinstance(lane, bootfacts.LaunchTemplate) and lane.built_by != contract.MANAGED_NODE_GROUP:
        return rules.launch_template_subject(lane.subject_name)
    return rules.node_group_subject(lane.subject_name)


def well_formed(amis: Sequence[bootfacts.Ami]) -> list[bootfacts.Ami]:
    """AMIs the other rules can reason about (``ami-id-format`` reports the malformed ones)."""
    return [a for a in amis if a.id is None or rules.invalid_ami_id("", a.id) is None]


def gpu_reason(lane: bootfacts.LaneResource) -> Optional[str]:
    return lane.gpu_reason(instances.is_nvidia_gpu_family, contract.GPU_TAINT_KEY, contract.GPU_VENDOR_LABEL)


def pulumi_eks_built(lane: Optional[bootfacts.LaneResource]) -> bool:
    """A resource pulumi-eks's ``ManagedNodeGroup`` registered (its launch template or node group)."""
    return lane is not None and lane.built_by == contract.MANAGED_NODE_GROUP


# ---- resource policies ---------------------------------------------------------------------------------


def ami_id_format(lane: bootfacts.LaneResource) -> Iterator[Finding]:
    for value in lane.ami_id_values():
        problem = rules.invalid_ami_id(subject(lane), value)
        if problem:
            yield Finding(problem)
    if isinstance(lane, bootfacts.NodeClass):
        for alias in lane.alias_values():
            problem = rules.alias_problem(
                alias,
                upstream.KARPENTER_ALIAS_FAMILIES,
                upstream.KARPENTER_ALIAS_LATEST_ONLY,
                upstream.KARPENTER_ALIAS_MAX_LENGTH,
            )
            if problem:
                yield Finding(f"{subject(lane)}: {problem}")


def _resolved(lane: bootfacts.LaneResource, knowledge: AmiKnowledge) -> list[Resolved]:
    return knowledge.resolve(well_formed(lane.amis()), karpenter=isinstance(lane, bootfacts.NodeClass))


def pinned_ami_age(
    lane: bootfacts.LaneResource, knowledge: AmiKnowledge, now: Optional[datetime] = None
) -> Iterator[Finding]:
    max_days = bootfacts.number(knowledge.config.get("maxAgeDays"))
    now = now or clock.now()
    for image in _resolved(lane, knowledge):
        created = amifacts.parse_time(image.facts.creation_date) if image.facts else None
        if created is None or max_days is None:
            continue
        creation_date = image.facts.creation_date  # type: ignore[union-attr]  # created is None without facts
        problem = rules.ami_too_old(subject(lane), image.label, creation_date, (now - created).days, max_days)
        if problem:
            yield Finding(problem)


def ami_k8s_version(lane: bootfacts.LaneResource, knowledge: AmiKnowledge) -> Iterator[Finding]:
    cluster = rules.k8s_minor(lane.kubernetes_version() or knowledge.config.get("kubernetesVersion"))
    if cluster is None:
        return
    for image in _resolved(lane, knowledge):
        minor = rules.k8s_minor_of_ami(image.facts.name) if image.facts else None
        if image.facts and minor:
            problem = rules.ami_for_other_k8s(subject(lane), image.label, image.facts.name, minor, cluster)
            if problem:
                yield Finding(problem)


# ---- the stack, with its lanes joined --------------------------------------------------------------


@dataclass(frozen=True)
class StackResource:
    type: str
    name: str
    urn: str
    props: Mapping[str, Any]
    property_dependencies: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Property -> the URNs it depends on (how a node group names its launch template's resource)."""
    parent: str = ""
    """The parent's URN."""


NODE_GROUPS = (bootfacts.EksNodeGroup, bootfacts.PulumiEksNodeGroup)
AUTO_MODE_OS = osfamily.BOTTLEROCKET.name
"""EKS Auto Mode nodes always run Bottlerocket (EKS user guide, automode/auto-mng.adoc: "Can run
Bottlerocket: Yes - Required", "Supports Custom AMIs: No")."""


class Stack:
    """Every lane of the stack, with NodePools joined to their class (by ``nodeClassRef`` group, kind
    and name) and node groups to their launch template (by the ``launchTemplate`` property's dependency)."""

    def __init__(self, resources: Sequence[StackResource], unknown: Unknown = ()) -> None:
        self.resources = resources
        """Every resource of the stack, lanes or not (components carry budgets: ``cost``)."""
        self.items = [
            (res, lane)
            for res in resources
            if (lane := bootfacts.read(res.type, res.name, res.props, res.urn, res.parent))
        ]
        self._by_urn = {res.urn: lane for res, lane in self.items}
        self._unknown = unknown
        self._node_classes: Optional[dict[str, bootfacts.NodeClass]] = None
        templates: dict[str, tuple[str, bootfacts.LaunchTemplate]] = {}
        for res, lane in self.items:
            if isinstance(lane, bootfacts.LaunchTemplate) and (
                name := self._known_text(functools.partial(_name_of, lane))
            ):
                templates.setdefault(name, (res.urn, lane))
        self._templates: dict[str, tuple[str, bootfacts.LaunchTemplate]] = {}
        """A node group's launch template: by the ``launchTemplate`` property's dependency, else by the
        literal name it gives (``launchTemplate.name``, a template of the stack with that ``name``)."""
        for res, lane in self.items:
            if not isinstance(lane, NODE_GROUPS):
                continue
            found = [
                (urn, t)
                for urn in res.property_dependencies.get("launchTemplate", ())
                if isinstance(t := self._by_urn.get(urn), bootfacts.LaunchTemplate)
            ]
            if not found:
                named = self._known_text(lambda: bootfacts.as_map(lane.props.get("launchTemplate")).get("name"))
                found = [templates[named]] if named in templates else []
            if found:
                self._templates[res.urn] = found[0]
        self._users: dict[str, bootfacts.LaneResource] = {
            urn: self._by_urn[group] for group, (urn, _) in self._templates.items()
        }

    def _known_text(self, read: Callable[[], Any]) -> str:
        """A text value, or '' when it is not text or not known at preview."""
        try:
            value = read()
        except self._unknown:
            return ""
        return value if isinstance(value, str) else ""

    def node_class(self, pool: bootfacts.NodePool) -> Optional[bootfacts.NodeClass]:
        """The EC2NodeClass a pool launches from: same group, kind and name (None for other kinds)."""
        group, kind, name = pool.node_class_ref
        if (group, kind) != bootfacts.KARPENTER_CLASS:
            return None
        if self._node_classes is None:
            by_name: dict[str, bootfacts.NodeClass] = {}
            for _, lane in self.items:
                if isinstance(lane, bootfacts.NodeClass):
                    try:
                        by_name.setdefault(lane.subject_name, lane)
                    except self._unknown:
                        continue  # a name not known at preview: no pool can be joined to it yet
            self._node_classes = by_name
        return self._node_classes.get(name)

    def launch_template(self, res: StackResource) -> Optional[bootfacts.LaunchTemplate]:
        found = self._templates.get(res.urn)
        return found[1] if found else None

    def user(self, res: StackResource) -> Optional[bootfacts.LaneResource]:
        """The node group using this launch template, if any."""
        return self._users.get(res.urn)

    def is_referenced(self, res: StackResource) -> bool:
        """A launch template some node group of the stack uses (judged as part of that group)."""
        return res.urn in self._users

    def recorded(self, res: StackResource, lane: bootfacts.LaneResource, key: str) -> Any:
        """A fact our components record: on the resource, else on the node group using it (pulumi-eks
        puts no tags on the launch template it builds; the group carries them)."""
        own = lane.recorded(key)
        user = self.user(res) if own is None else None
        return user.recorded(key) if user is not None else own

    def boot(self, res: StackResource, lane: bootfacts.LaneResource) -> Optional["Boot"]:
        """What a lane boots, joins resolved; None for lanes judged through another one
        (launch templates through the node groups using them)."""
        if isinstance(lane, bootfacts.NodePool):
            if lane.auto_mode:
                return Boot(os=lambda: AUTO_MODE_OS, amis=lambda: [], arches=lane.architectures, karpenter=True)
            node_class = self.node_class(lane)
            return Boot(
                os=lambda: node_class.os() if node_class else "",
                amis=lambda: node_class.amis() if node_class else [],
                arches=lane.architectures,
                karpenter=True,
                pinned=lambda: node_class.pins() if node_class else False,
            )
        if isinstance(lane, NODE_GROUPS):
            template = self.launch_template(res)

            def declared() -> str:
                own = lane.os()
                return template.os() if own in ("", "custom") and template is not None else own

            def types() -> list[str]:
                return lane.instance_types() or (template.instance_types() if template else [])

            return Boot(
                os=declared,
                amis=lambda: lane.amis() or (template.amis() if template else []),
                arches=lambda: sorted({instances.instance_arch(t) for t in types()}),
                template=template,
            )
        if isinstance(lane, bootfacts.LaunchTemplate) and not self.is_referenced(res):
            return Boot(
                os=lane.os,
                amis=lane.amis,
                arches=lambda: sorted({instances.instance_arch(t) for t in lane.instance_types()}),
            )
        if isinstance(lane, bootfacts.NodeClass):
            return Boot(
                os=lane.os, amis=lane.amis, arches=lambda: [], judged_elsewhere=True, karpenter=True, pinned=lane.pins
            )
        return None


@dataclass(frozen=True)
class Boot:
    """A lane's boot facts, each read only when a rule asks (so unknowns stay where they matter)."""

    os: Callable[[], str]
    amis: Callable[[], list[bootfacts.Ami]]
    arches: Callable[[], list[str]]
    """The EC2 architectures the lane can launch."""
    template: Optional[bootfacts.LaunchTemplate] = None
    judged_elsewhere: bool = False
    """A NodeClass: its pool is the GPU/arch lane; only its own AMI family is judged on it."""
    karpenter: bool = False
    """Karpenter picks one image per architecture among what the class selects."""
    pinned: Optional[Callable[[], bool]] = None
    """Whether it pins an AMI, read without the AMIs' own values (default: ``amis`` is not empty)."""

    def pins(self) -> bool:
        return self.pinned() if self.pinned is not None else bool(self.amis())


StackCheck = Callable[[Stack, StackResource, bootfacts.LaneResource, AmiKnowledge], Iterator[Finding]]


def judge_stack(
    check: StackCheck, resources: Sequence[StackResource] | Stack, knowledge: AmiKnowledge, unknown: Unknown = ()
) -> list[Finding]:
    """Run ``check`` on every lane. A lane whose facts are ``unknown`` (the SDK's exception for a
    value not known at preview) becomes an uncertain finding; the other lanes are still judged."""
    stack = resources if isinstance(resources, Stack) else Stack(resources, unknown)
    found: list[Finding] = []
    for res, lane in stack.items:
        try:
            found.extend(check(stack, res, lane, knowledge))
        except unknown as exc:
            found.append(
                Finding(f"{_subject(lane, res, unknown)}: {getattr(exc, 'message', exc)}", res.urn, certain=False)
            )
    return found


def _subject(lane: bootfacts.LaneResource, res: StackResource, unknown: Unknown) -> str:
    """The lane's subject; without what is unknown (a pool's class), its own name; else its type and name."""
    own = {bootfacts.NodePool: rules.pool_subject, bootfacts.NodeClass: rules.node_class_subject}.get(type(lane))
    names: tuple[Callable[[], str], ...] = (
        lambda: subject(lane),
        lambda: own(lane.subject_name) if own else subject(lane),
    )
    for name in names:
        try:
            return name()
        except unknown:
            continue
    return f"{res.type} '{res.name}'"


# ---- stack policies ------------------------------------------------------------------------------------


def _family_fix(lane: bootfacts.LaneResource, template: Optional[bootfacts.LaunchTemplate]) -> str:
    """How to declare AL2023 on the resource the user wrote: a pulumi-eks argument only where pulumi-eks
    builds the launch template; the template's own user data where the user wrote the template."""
    if isinstance(lane, bootfacts.EksNodeGroup) and pulumi_eks_built(lane):
        if template is None or pulumi_eks_built(template):
            return bootfacts.PulumiEksNodeGroup.os_fix
        return template.os_fix
    return lane.os_fix or (template.os_fix if template is not None else "")


def al2023_family(
    stack: Stack, res: StackResource, lane: bootfacts.LaneResource, knowledge: AmiKnowledge
) -> Iterator[Finding]:
    boot = stack.boot(res, lane)
    if boot is None or isinstance(lane, bootfacts.NodePool):
        return
    if not boot.pins():
        return  # a malformed id, or one not known at preview, is still a pin: the family is judged first
    if (
        isinstance(lane, bootfacts.EksNodeGroup)
        and boot.template is not None
        and boot.template.amis()
        and lane.ami_type() not in ("", "CUSTOM")
    ):
        yield Finding(
            rules.ami_type_beside_image(subject(lane), lane.ami_type(), boot.template.amis()[0].label), urn=res.urn
        )
        return  # EKS refuses the group whatever the template boots
    declared = boot.os()
    if isinstance(lane, bootfacts.LaunchTemplate) and not declared:
        return  # a launch template of no EKS node group that boots no EKS node OS: not a node
    problem = rules.pinned_ami_not_al2023(subject(lane), declared, lane.lane_word, _family_fix(lane, boot.template))
    if problem:
        yield Finding(problem, urn=res.urn)
    for image in knowledge.resolve(well_formed(boot.amis()), karpenter=boot.karpenter):  # the AMIs' own facts
        seen = rules.os_of_ami(image.facts.name, image.facts.description) if image.facts else None
        problem = seen and rules.ami_names_other_os(subject(lane), image.label, image.facts.name, seen)  # type: ignore[union-attr]  # seen is None without facts
        if problem:
            yield Finding(problem, urn=res.urn)


def gpu_lane_os(
    stack: Stack, res: StackResource, lane: bootfacts.LaneResource, knowledge: AmiKnowledge
) -> Iterator[Finding]:
    """GPU evidence first: the OS (which may mean reading user data) only for a GPU lane."""
    boot = stack.boot(res, lane)
    if boot is None or boot.judged_elsewhere:
        return
    reason = gpu_reason(lane) or (gpu_reason(boot.template) if boot.template else None)
    if not reason:
        return
    problem = rules.gpu_lane_on_bottlerocket(subject(lane), boot.os(), reason)
    if problem:
        yield Finding(problem, urn=res.urn)


def arch_matches_ami(
    stack: Stack, res: StackResource, lane: bootfacts.LaneResource, knowledge: AmiKnowledge
) -> Iterator[Finding]:
    boot = stack.boot(res, lane)
    if boot is None or boot.judged_elsewhere:
        return
    amis = well_formed(boot.amis())
    if not amis:
        return
    arches = boot.arches()
    if not arches:
        return
    images = knowledge.resolve(amis, karpenter=boot.karpenter)
    if any(not (i.facts and i.facts.architecture) for i in images):
        return  # an AMI whose architecture is unknown may be the one that fits
    problem = rules.no_ami_for_arch(subject(lane), arches, {i.label: i.facts.architecture for i in images})  # type: ignore[union-attr]  # every image has facts (returned above)
    if problem:
        yield Finding(problem, urn=res.urn)


def disk_fits_ami_snapshot(
    stack: Stack, res: StackResource, lane: bootfacts.LaneResource, knowledge: AmiKnowledge
) -> Iterator[Finding]:
    """Every image a lane boots (each of a class's, per architecture) against the root volume it asks for;
    an EKS-optimized AMI (an ``al2023`` or ``al2`` alias, an AL2023 or AL2 ``amiType``) against its family's root
    snapshot (``osfamily.OsFamily.eks_root_snapshot_gib``)."""
    if isinstance(lane, bootfacts.NodePool):
        return  # a pool's disk is its class's
    if isinstance(lane, bootfacts.EksNodeGroup):  # its disk is its launch template's, or its diskSize
        template = stack.launch_template(res)
        family = osfamily.named(lane.os())
        snapshot = family.eks_root_snapshot_gib if family is not None else None
        if family is not None and snapshot is not None and (template is None or not template.amis()):
            disk = template.root_disk(family.os_device) if template is not None else None
            # a deployed group's outputs say diskSize 0 when it has none of its own (terraform's unset number)
            size = disk.gib if disk is not None else (bootfacts.number(lane.props.get("diskSize")) or None)
            problem = size is not None and rules.disk_below_snapshot(
                subject(lane), size, f"EKS's {lane.ami_type()} AMI", snapshot
            )
            if problem:
                yield Finding(problem, urn=res.urn)
        return
    selected = osfamily.named(lane.os()) if isinstance(lane, bootfacts.NodeClass) else None
    snapshot = selected.eks_root_snapshot_gib if selected is not None else None
    if (
        selected is not None
        and snapshot is not None
        and not lane.amis()
        and "blockDeviceMappings" in bootfacts.as_map(bootfacts.dig(lane.props, "spec"))
    ):
        disk = lane.root_disk(selected.os_device)
        problem = disk is not None and rules.disk_below_snapshot(
            subject(lane), disk.gib, "the EKS-optimized AMI it selects", snapshot
        )
        if problem:
            yield Finding(problem, urn=res.urn)
    recorded = bootfacts.number(stack.recorded(res, lane, contract.ROOT_SNAPSHOT_ANNOTATION))
    for image in knowledge.resolve(well_formed(lane.amis()), karpenter=isinstance(lane, bootfacts.NodeClass)):
        known = image.facts.root_device_name if image.facts else None
        root = known or osfamily.AL2023.os_device
        disk = lane.root_disk(root)
        if disk is None:
            continue
        size = knowledge.configured_snapshot_gib(image.ami.id) if image.ami.id else None
        if size is None and image.ami.id and recorded is not None:
            size = recorded
        if size is None and image.facts is not None:
            size = image.facts.root_snapshot_gib
        if size is None:
            why = image.why or ("EC2 reports no root snapshot size" if image.facts else "its size is unknown")
            configure = (
                f'set amiRootSnapshotGiB {{"{image.ami.id}": <GiB>}} (or amis.{image.ami.id}.rootSnapshotGiB) on {DISK}'
            )
            how = knowledge.unresolved_how(image, configure)
            yield Finding(
                rules.disk_unverified(subject(lane), disk.gib, image.label, why, how), urn=res.urn, unverified=True
            )
            continue
        problem = rules.disk_below_snapshot(subject(lane), disk.gib, image.label, size)
        if problem:
            yield Finding(f"{problem}; {rules.gib(disk.gib)} GiB is {disk.how}" if disk.how else problem, urn=res.urn)


# ---- root-volume-encrypted -----------------------------------------------------------------------------

_ENCRYPTION_FIX = {
    bootfacts.NodeClass: "set encrypted: true on the root volume's blockDeviceMappings entry",
    bootfacts.LaunchTemplate: 'set encrypted "true" on the root device\'s block device mapping',
}
_PINNED_GROUP_FIX = (
    "pin an encrypted copy of the AMI, e.g. aws ec2 copy-image --encrypted, or turn on EBS encryption by default"
)
"""pulumi-eks's managed-node-group launch template sets no ``encrypted``, and no argument asks it to."""
_SELF_MANAGED_FIX = "set nodeRootVolumeEncrypted: true"
_PUBLIC = bootfacts.Ami(None, "the EKS-optimized AMI it selects")
"""An alias or an EKS ``amiType`` selects a public AMI, whose root snapshot is unencrypted."""


def _encryption_fix(lane: bootfacts.LaneResource) -> str:
    if isinstance(lane, bootfacts.PulumiEksNodeGroup):
        return _SELF_MANAGED_FIX
    if isinstance(lane, bootfacts.EksNodeGroup):
        return _EKS_TEMPLATE_FIX
    if pulumi_eks_built(lane):
        return _PINNED_GROUP_FIX
    return _ENCRYPTION_FIX.get(type(lane), _PINNED_GROUP_FIX)


_EKS_TEMPLATE_FIX = (
    'give it a launch template whose root device mapping sets encrypted "true", or turn on EBS encryption by default'
)
"""A managed node group without a launch template gets EKS's own, which asks no encryption."""


def _judged_for_encryption(stack: Stack, res: StackResource, lane: bootfacts.LaneResource) -> bool:
    if isinstance(
        lane, bootfacts.LaunchTemplate
    ):  # a node's template: a node group's, or one that boots an EKS node OS
        return stack.is_referenced(res) or lane.os() != ""
    if isinstance(lane, bootfacts.EksNodeGroup):  # through its launch template when it has one
        return stack.launch_template(res) is None and "launchTemplate" not in list(lane.props)  # keys: no value read
    return isinstance(lane, (bootfacts.NodeClass, bootfacts.PulumiEksNodeGroup))


def root_volume_encrypted(
    stack: Stack, res: StackResource, lane: bootfacts.LaneResource, knowledge: AmiKnowledge
) -> Iterator[Finding]:
    """Every node's root volume is encrypted: asked for by the lane, or, when it asks nothing, made
    from an encrypted snapshot or in an account that encrypts new volumes by default."""
    if not _judged_for_encryption(stack, res, lane):
        return
    pinned = lane.amis()
    amis = well_formed(pinned)
    if pinned and not amis:
        return  # malformed ids: ami-id-format's
    images = knowledge.resolve(amis, karpenter=isinstance(lane, bootfacts.NodeClass)) if amis else []
    known = images[0].facts if len(images) == 1 else None
    device = known.root_device_name if known and known.root_device_name else osfamily.AL2023.os_device
    volume = (
        bootfacts.RootVolume(False, "EKS's own launch template")
        if isinstance(lane, bootfacts.EksNodeGroup)
        else lane.root_volume(device)
    )
    if volume is None or volume.encrypted:
        return
    by_default = knowledge.encryption_by_default(
        bootfacts.flag(stack.recorded(res, lane, contract.ENCRYPTION_BY_DEFAULT_TAG))
    )
    if by_default:
        return
    fix = _encryption_fix(lane)
    recorded = bootfacts.flag(stack.recorded(res, lane, contract.ROOT_SNAPSHOT_ENCRYPTED_TAG))
    for image in images or [Resolved(_PUBLIC, None)]:
        if image.ami is _PUBLIC:
            snapshot: Optional[bool] = False
        elif image.ami.id:
            snapshot = knowledge.snapshot_encrypted(image.ami.id, recorded)
        else:
            snapshot = image.facts.root_snapshot_encrypted if image.facts else None
        if snapshot:
            continue
        label = f"ami_id '{image.ami.id}'" if image.ami.id else image.label
        if snapshot is False and by_default is False:
            yield Finding(rules.root_volume_unencrypted(subject(lane), label, fix), urn=res.urn)
            continue
        unknown = list(
            what
            for what, value in (
                ("whether its root snapshot is encrypted", snapshot),
                ("whether the account encrypts new EBS volumes by default", by_default),
            )
            if value is None
        )
        how = _encryption_how(fix, image, snapshot, by_default, knowledge)
        yield Finding(
            rules.root_encryption_unverified(subject(lane), label, unknown, how), urn=res.urn, unverified=True
        )


def _encryption_how(
    fix: str, image: Resolved, snapshot: Optional[bool], by_default: Optional[bool], knowledge: AmiKnowledge
) -> str:
    """Every way to settle it: the fix itself, the config keys for the unknown facts, the look-up."""
    keys = ([f"amis.{image.ami.id}.rootSnapshotEncrypted"] if snapshot is None and image.ami.id else []) + (
        ["ebsEncryptionByDefault"] if by_default is None else []
    )
    ways = [fix]
    if keys:
        ways.append(f"set {' and '.join(keys)} on {ENCRYPTION} in the policy config")
    if snapshot is None and not image.ami.id:
        ways.append(knowledge.unresolved_how(image, ""))
    elif not knowledge.lookups:
        ways.append(f"set lookup: true on {ENCRYPTION} (EC2 DescribeImages, GetEbsEncryptionByDefault)")
    return "; or ".join(ways)


DRIVER = "gpu-driver-supports-lane"
AMI_FACTS_POLICIES = (FAMILY, DISK, ARCH, ENCRYPTION, AGE, K8S, DRIVER)
"""The policies whose config takes AMI facts by id (``amis``: ``policies.schema``)."""


def _nvidia_families(stack: Stack, res: StackResource, lane: bootfacts.LaneResource) -> list[str]:
    """The NVIDIA GPU families a GPU lane can launch (a pool: every candidate of its requirements)."""
    if gpu_reason(lane) is None and not (
        isinstance(lane, NODE_GROUPS)
        and stack.launch_template(res) is not None
        and gpu_reason(stack.launch_template(res)) is not None  # type: ignore[arg-type]  # not None: tested before the and
    ):
        return []
    if isinstance(lane, bootfacts.NodePool):
        found = wellknown.candidates(lane.requirements())
        return [f for f in found if f != wellknown.OTHER_X86 and instances.is_nvidia_gpu_family(f)]
    template = stack.launch_template(res) if isinstance(lane, NODE_GROUPS) else None
    types = lane.instance_types() or (template.instance_types() if template else [])
    return sorted(set(instances.nvidia_families(types)))


def gpu_driver_supports_lane(
    stack: Stack, res: StackResource, lane: bootfacts.LaneResource, knowledge: AmiKnowledge
) -> Iterator[Finding]:
    """The NVIDIA driver branch of every image a GPU lane boots drives every GPU family the lane can
    launch (``instances.DRIVER_BRANCHES``). Images are those pinned (an EC2NodeClass's ids or selectors,
    a launch template's or pulumi-eks's image): an alias or AMI type boots EKS's own NVIDIA AMI, whose
    families ``needs_custom_nvidia_ami`` judges."""
    boot = stack.boot(res, lane)
    if boot is None or boot.judged_elsewhere or (isinstance(lane, bootfacts.LaunchTemplate) and not boot.arches()):
        return
    amis = well_formed(boot.amis())
    if not amis:
        return
    families = _nvidia_families(stack, res, lane)
    if not families:
        return
    for image in knowledge.resolve(amis, karpenter=boot.karpenter):
        driver = (
            None
            if image.facts is None
            else instances.image_driver(image.facts.nvidia_driver_branch, image.facts.name, image.facts.description)
        )
        bounded = [f for f in families if f in instances.DRIVER_BRANCHES]
        if driver is not None and driver.per_instance:  # the AMI picks a driver that drives each family
            continue
        if driver is None:
            if bounded:
                configure = (
                    f"set amis.{image.ami.id}.nvidiaDriverBranch on {DRIVER}, or name the branch in the AMI's "
                    f"name or description (…-nvidia-595-…)"
                )
                how = knowledge.unresolved_how(image, configure) if image.facts is None else configure
                yield Finding(
                    rules.driver_unverified(subject(lane), image.label, bounded, how), urn=res.urn, unverified=True
                )
            continue
        problems = [p for f in families if (p := driver.problem(f))]
        if problems and driver.branch is not None:
            yield Finding(
                rules.driver_cannot_drive(subject(lane), image.label, driver.branch, driver.where, problems),
                urn=res.urn,
            )


def _name_of(template: bootfacts.LaunchTemplate) -> Any:
    """A launch template's ``name`` as its resource says it (read when known)."""
    return template.props.get("name")
