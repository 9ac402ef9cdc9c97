"""The rack's CrossGuard policies, as a library: ``policies()`` lists them, ``serve()`` serves them.

A pack's ``__main__.py`` (the repository's ``policies/``, one written by ``mixed-os-racks pack init``,
or a team's own that adds policies of its own) calls ``serve()``, which builds the ``PolicyPack``
(it serves over gRPC and prints its port). The rules are in ``rules``, reading resources in
``bootfacts``, the checks themselves in ``checks`` and ``reservedlanes`` (lanes) and ``reach`` and ``gpudaemons`` (pods
against the lanes).

Findings reach the user three ways: a violation at the policy's level; the SDK's advisory "can't
run policy ... during preview" for a value not known until apply; and, for an AMI fact nobody gave
(no config entry, no look-up), the pack's own advisory ``ami-facts-unknown``, which names the check
that could not run, the AMI or selector, and what would make it verifiable. The stack policies that
need AMI facts leave those findings, per request, for ``ami-facts-unknown``, which the SDK runs
after them (it runs a request's policies in the list's order, on one thread: see ``scope``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Callable, Iterable, Optional

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from .. import clock
from ..facts import prices
from . import (
    bootfacts,
    checks,
    cost,
    gpudaemons,
    laneconfig,
    lanesource,
    lookup,
    reach,
    reserved,
    reservedlanes,
    scope,
    soak,
    speedups,
)

MANDATORY, ADVISORY = EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY


class CannotVerify(UnknownValueError):
    """Raised after a policy reported what it could decide, when values it reads are not known until
    apply: the SDK turns it into the advisory "can't run policy ... during preview"."""

    def __init__(self, messages: list[str]) -> None:
        Exception.__init__(self)
        self.unknown_type_sentinel, self.props = "", []
        self.message = "; ".join(messages)


class UrnDependencies(Mapping[str, Sequence[str]]):
    """A resource's property dependencies as URNs, converted only for the properties a check reads."""

    def __init__(self, dependencies: Mapping[str, Sequence[Any]]) -> None:
        self._dependencies = dependencies

    def __getitem__(self, key: str) -> Sequence[str]:
        return [d.urn for d in self._dependencies[key]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dependencies)

    def __len__(self) -> int:
        return len(self._dependencies)


UNVERIFIED = scope.RequestLocal()
"""Per request: policy name -> the findings it could not verify, for ``ami-facts-unknown``."""
STACKS = scope.RequestLocal()
"""Per request: the joined stack, built once for all the stack policies (when ``scope`` is installed)."""
SURVEYS = scope.RequestLocal()
"""Per request: the workloads and lanes the workload policies read (``reach.survey``)."""
COSTS = scope.RequestLocal()
"""Per request: every lane's worst case (``cost.lanes_of``), for both cost policies."""


def report_all(policy: str, findings: Iterable[checks.Finding], report: ReportViolation) -> None:
    unsure, unverified = [], []
    for finding in findings:
        if finding.unverified:
            unverified.append(finding)
        elif finding.certain:
            report(finding.message, finding.urn or None)
        else:
            unsure.append(finding.message)
    UNVERIFIED.values[policy] = unverified
    if unsure:
        raise CannotVerify(unsure)


def knowledge(policy: str, config: Any) -> checks.AmiKnowledge:
    return checks.AmiKnowledge(config or {}, lookup.describe_image, lookup.encryption_by_default, lookup.select, policy)


def resource_policy(
    name: str,
    description: str,
    level: EnforcementLevel,
    check: Callable[..., Any],
    schema: Optional[PolicyConfigSchema] = None,
) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        parent = getattr(args.opts, "parent", None) or ""
        lane = bootfacts.read(args.resource_type, args.name, args.props, args.urn, parent)
        if lane is not None:
            report_all(name, check(lane, knowledge(name, args.get_config())), report)

    return ResourceValidationPolicy(
        name=name, description=description, enforcement_level=level, config_schema=schema, validate=validate
    )


def stack_of(args: StackValidationArgs) -> checks.Stack:
    """The stack, joined: once per request when ``scope`` is installed (every stack policy of a request
    gets the same resources), else for each policy."""
    key = tuple(r.urn for r in args.resources)
    found = STACKS.values.get(key) if scope.installed() else None
    if found is None:
        found = checks.Stack(
            [
                checks.StackResource(
                    r.resource_type,
                    r.name,
                    r.urn,
                    r.props,
                    UrnDependencies(r.property_dependencies),
                    getattr(r.opts, "parent", None) or "",
                )
                for r in args.resources
            ],
            UnknownValueError,
        )
        if scope.installed():
            STACKS.values[key] = found
    return found


def stack_policy(
    name: str, description: str, check: checks.StackCheck, schema: Optional[PolicyConfigSchema] = None
) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        stack = stack_of(args)
        report_all(
            name, checks.judge_stack(check, stack, knowledge(name, args.get_config()), UnknownValueError), report
        )

    return StackValidationPolicy(
        name=name, description=description, enforcement_level=MANDATORY, config_schema=schema, validate=validate
    )


LANE_POLICIES: set[str] = set()
"""The policies whose config holds ``lanes`` (made by ``workload_policy``): checked when the pack is configured."""


def workload_policy(
    name: str, description: str, level: EnforcementLevel, judge: Callable[..., list[checks.Finding]]
) -> StackValidationPolicy:
    """A policy over the stack's workloads and lanes (``reach``, ``gpudaemons``); config: ``lanes``."""
    LANE_POLICIES.add(name)

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        urns = tuple(r.urn for r in args.resources)
        resources = SURVEYS.values.get(urns) if scope.installed() else None
        if resources is None:
            resources = [
                checks.StackResource(r.resource_type, r.name, r.urn, r.props, UrnDependencies(r.property_dependencies))
                for r in args.resources
            ]
            if scope.installed():
                SURVEYS.values[urns] = resources
        config = args.get_config() or {}
        whole = None
        if scope.installed() and not laneconfig.config_findings(config):
            # the stack read once per request, for every workload policy with the same lanes
            key = (urns, repr(config.get("lanes")))
            whole = SURVEYS.values.get(key)
            if whole is None:
                whole = SURVEYS.values[key] = reach.survey(resources, config, UnknownValueError)
        report_all(name, judge(resources, config, UnknownValueError, whole), report)

    return StackValidationPolicy(
        name=name,
        description=description,
        enforcement_level=level,
        config_schema=PolicyConfigSchema(properties={"lanes": laneconfig.LANES_SCHEMA}),
        validate=validate,
    )


def cost_policy(
    name: str,
    description: str,
    level: EnforcementLevel,
    judge: Callable[[cost.Costs], Iterable[checks.Finding]],
    schema: Optional[PolicyConfigSchema] = None,
) -> StackValidationPolicy:
    """A policy over every lane's worst case per hour (``cost``), in the stack's region."""

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        stack, config = stack_of(args), args.get_config() or {}
        priced = prices.for_region(cost.stack_region(), cost.config_prices(config))
        key = (tuple(r.urn for r in args.resources), priced)
        found = COSTS.values.get(key) if scope.installed() else None  # both cost policies read the same lanes
        if found is None:
            found = cost.lanes_of(stack, priced, UnknownValueError)
            if scope.installed():
                COSTS.values[key] = found
        known = (
            reserved.Knowledge(config, lookup.describe_capacity_reservation, lookup.subnet_zone, name)
            if name == cost.CEILING
            else None
        )  # what a reserved lane has already paid, for its budgets
        report_all(
            name, judge(cost.survey(stack, config, priced, found, UnknownValueError, known, clock.now())), report
        )

    return StackValidationPolicy(
        name=name, description=description, enforcement_level=level, config_schema=schema, validate=validate
    )


RESERVED_LANES = scope.RequestLocal()
"""Per request: the stack's lanes, read once for both reservation policies."""


def reservation_policy(
    name: str, description: str, level: EnforcementLevel, judge: Callable[..., list[checks.Finding]]
) -> StackValidationPolicy:
    """A policy over the lanes' capacity reservations (``reserved``); config: ``lookup``, ``reservations``,
    ``subnets``."""

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        urns = tuple(r.urn for r in args.resources)
        lanes = RESERVED_LANES.values.get(urns) if scope.installed() else None
        if lanes is None:
            lanes = lanesource.read_lanes(
                [
                    checks.StackResource(
                        r.resource_type, r.name, r.urn, r.props, UrnDependencies(r.property_dependencies)
                    )
                    for r in args.resources
                ],
                {},
                UnknownValueError,
            )
            if scope.installed():
                RESERVED_LANES.values[urns] = lanes
        known = reserved.Knowledge(
            args.get_config() or {}, lookup.describe_capacity_reservation, lookup.subnet_zone, name
        )
        report_all(name, judge(lanes, known, clock.now()), report)

    return StackValidationPolicy(
        name=name,
        description=description,
        enforcement_level=level,
        config_schema=PolicyConfigSchema(properties=reserved.SCHEMA),
        validate=validate,
    )


def unverified_policy() -> StackValidationPolicy:
    """``ami-facts-unknown``: what the AMI-facts policies of this request could not verify."""

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        found, UNVERIFIED.values = UNVERIFIED.values, {}
        for findings in found.values():
            for finding in findings:
                report(finding.message, finding.urn or None)

    return StackValidationPolicy(
        name=checks.UNVERIFIED,
        enforcement_level=ADVISORY,
        validate=validate,
        description="A check that needs an AMI's facts could not run: it says which, for which AMI or selector, "
        "and what would make it verifiable.",
    )


def schema(**extra: dict[str, Any]) -> PolicyConfigSchema:
    """Every AMI-facts policy: ``lookup`` (EC2, ambient credentials) and ``amis`` (facts by id)."""
    return PolicyConfigSchema(
        properties={
            "lookup": {
                "type": "boolean",
                "default": False,
                "description": "Read AMI facts with EC2 DescribeImages and resolve selectors (names, tags, SSM "
                "parameters) as Karpenter and EC2 do, with the ambient AWS credentials.",
            },
            "amis": {
                "type": "object",
                "default": {},
                "description": "AMI facts by id: name, description, architecture, rootDeviceName, rootSnapshotGiB, "
                "rootSnapshotEncrypted, creationDate, nvidiaDriverBranch.",
                "additionalProperties": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "description": {"type": "string"},
                        "architecture": {"type": "string", "enum": ["x86_64", "arm64"]},
                        "rootDeviceName": {"type": "string"},
                        "rootSnapshotGiB": {"type": "number"},
                        "rootSnapshotEncrypted": {"type": "boolean"},
                        "creationDate": {"type": "string"},
                        "nvidiaDriverBranch": {"type": "integer", "minimum": 1},
                    },
                },
            },
            **extra,
        }
    )


def policies() -> list[Policy]:
    """The rack's policies (new objects on each call), ``ami-facts-unknown`` last."""
    return [
        resource_policy(
            "ami-id-format",
            "Every AMI id is 'ami-' and 8 or 17 lowercase hex digits, and every "
            "EC2NodeClass alias one family@version Karpenter's controller can parse.",
            MANDATORY,
            lambda lane, _: checks.ami_id_format(lane),
        ),
        stack_policy(
            "al2023-family", "A lane pinned to a custom AMI declares Amazon Linux 2023.", checks.al2023_family, schema()
        ),
        stack_policy(
            "disk-fits-ami-snapshot",
            "The root volume is at least the AMI's root snapshot.",
            checks.disk_fits_ami_snapshot,
            schema(
                amiRootSnapshotGiB={
                    "type": "object",
                    "default": {},
                    "additionalProperties": {"type": "number", "exclusiveMinimum": 0},
                    "description": 'Root snapshot GiB by AMI id, e.g. {"ami-0123456789abcdef0": 20}.',
                }
            ),
        ),
        stack_policy("gpu-lane-os", "GPU lanes run Amazon Linux 2023, never Bottlerocket.", checks.gpu_lane_os),
        stack_policy(
            "arch-matches-ami", "A lane's architecture matches its pinned AMI's.", checks.arch_matches_ami, schema()
        ),
        stack_policy(
            "root-volume-encrypted",
            "Every node's root volume is encrypted.",
            checks.root_volume_encrypted,
            schema(
                ebsEncryptionByDefault={
                    "type": "boolean",
                    "description": "Whether the account encrypts new EBS volumes by default (EC2 "
                    "GetEbsEncryptionByDefault).",
                }
            ),
        ),
        resource_policy(
            "pinned-ami-age",
            "A pinned AMI is recent enough to carry OS patches.",
            ADVISORY,
            checks.pinned_ami_age,
            schema(
                maxAgeDays={
                    "type": "number",
                    "minimum": 1,
                    "default": 90,
                    "description": "Days after its creation a pinned AMI is considered stale.",
                }
            ),
        ),
        resource_policy(
            "ami-k8s-version",
            "A pinned AMI is built for the cluster's Kubernetes minor.",
            ADVISORY,
            checks.ami_k8s_version,
            schema(
                kubernetesVersion={
                    "type": "string",
                    "pattern": "^v?1\\.[0-9]+(\\.[0-9]+)?$",
                    "description": "The cluster's Kubernetes version, when the resources do not say it.",
                }
            ),
        ),
        stack_policy(
            checks.DRIVER,
            "A GPU lane's pinned AMI runs an NVIDIA driver branch that drives every GPU family the lane can launch.",
            checks.gpu_driver_supports_lane,
            schema(),
        ),
        stack_policy(
            soak.POLICY,
            "An AMI a lane would newly run has run on a lane of the same name in the "
            "environment before for soakDays (its evidence: `mixed-os-racks soak`).",
            soak.ami_soaked,
            PolicyConfigSchema(properties=soak.SCHEMA),
        ),
        stack_policy(
            reservedlanes.POLICY,
            "A lane that names a capacity reservation can launch into it: a "
            "CAPACITY_BLOCK node group's launch template targets the block with market type capacity-block, "
            "and a NodePool launches capacity type reserved exactly when its EC2NodeClass selects "
            "reservations.",
            reservedlanes.reserved_capacity_targeted,
        ),
        workload_policy(
            "workloads-reach-their-lane",
            "Every workload can land on the lane it selects, and a GPU workload on a GPU lane.",
            MANDATORY,
            reach.reach,
        ),
        workload_policy(
            "gpu-daemonsets-reach-gpu-lanes",
            "Every DaemonSet that serves GPUs (the NVIDIA device plugin, dcgm-exporter) reaches every GPU lane.",
            MANDATORY,
            gpudaemons.gpu_daemonsets,
        ),
        workload_policy(
            "gpu-lanes-for-gpu-workloads",
            "A workload that requests no GPU cannot take a GPU node.",
            ADVISORY,
            gpudaemons.squatting,
        ),
        cost_policy(
            cost.CEILING,
            "A lane's worst case per hour (and a rack's, the stack's) is within its budget.",
            MANDATORY,
            cost.ceiling,
            PolicyConfigSchema(properties=cost.CEILING_SCHEMA),
        ),
        reservation_policy(
            reserved.FITS,
            "Every capacity reservation a lane names is the account's, of an instance type "
            "the lane can launch, in a zone of its subnets, within its limits, and not ended for a lane "
            "of reservations only.",
            MANDATORY,
            reserved.fits,
        ),
        reservation_policy(
            reserved.ENDING,
            "A capacity reservation a lane names has not ended, does not end within a "
            "week, and has started (with its date).",
            ADVISORY,
            reserved.ending,
        ),
        cost_policy(
            cost.UNBOUNDED, "A GPU lane has limits that bound what it can cost an hour.", ADVISORY, cost.unbounded
        ),
        unverified_policy(),
    ]


NAME = "mixed-os-racks"
DESCRIPTION = (
    "Refuses what breaks a mixed-OS rack: malformed AMI ids, custom AMIs off AL2023, root disks below "
    "the AMI's snapshot, GPU lanes on Bottlerocket, unencrypted root volumes, workloads that select a "
    "lane the rack does not have."
)


OWN_CONFIG_PROBLEMS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    soak.POLICY: soak.config_problems,
    cost.CEILING: cost.config_problems,
}
"""The policies whose properties have rules their schema cannot state, and what finds their problems."""


def config_problems(pack: str, config: Mapping[str, Mapping[str, Any]]) -> Optional[str]:
    """What is wrong with a pack's config (policy name -> its properties) beyond what its schema says,
    in the words the CLI uses for a schema error; None when nothing is."""
    problems: dict[str, list[str]] = {}
    for name in sorted(LANE_POLICIES & set(config)):
        for problem in laneconfig.lanes_config_problems((config[name] or {}).get("lanes")):
            problems.setdefault(problem, []).append(name)  # one line per problem, whichever policies share it
    for name, judge in OWN_CONFIG_PROBLEMS.items():
        for problem in judge(config.get(name) or {}) if name in config else []:
            problems.setdefault(problem, []).append(name)
    if not problems:
        return None
    return f"invalid policy pack config for '{pack}':\n  " + "\n  ".join(
        f"{', '.join(names)}: {problem}" for problem, names in problems.items()
    )


def _refusing_malformed_config(pack: str) -> bool:
    """Make the SDK's ``Configure`` refuse a config ``config_problems`` finds (INVALID_ARGUMENT): a lanes
    config the pack cannot read is an error when the pack is configured, as a schema error is (the CLI
    stops with it), not a violation at analysis. False (nothing changed) for an SDK of another shape."""
    try:
        import grpc
        from google.protobuf import json_format
        from pulumi_policy.policy import _PolicyAnalyzerServicer as servicer
    except (ImportError, AttributeError):
        return False
    configure = getattr(servicer, "Configure", None)
    if not callable(configure):
        return False

    def checked(self: Any, request: Any, context: Any) -> Any:
        given = {
            name: json_format.MessageToDict(request.policyConfig[name].properties) for name in request.policyConfig
        }
        problem = config_problems(pack, given)
        if problem:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
        return configure(self, request, context)

    setattr(servicer, "Configure", checked)  # the SDK's servicer class, patched where the pack starts
    return True


def serve(extra: Iterable[Policy] = (), name: str = NAME, description: str = DESCRIPTION) -> None:
    """Serve the rack's policies, and ``extra`` ones of a team's own, as one pack (the pack's ``__main__``).

    Installs the pack's speed-ups of pulumi-policy (``speedups``, ``scope``) first: they change
    how that SDK serves a request in this process, so only a pack process calls this."""
    speedups.install()
    scope.install()
    _refusing_malformed_config(name)
    found = [*policies(), *extra]
    # ami-facts-unknown reports what the policies before it left: it runs last, whatever is added
    found.sort(key=lambda policy: policy.name == checks.UNVERIFIED)
    speedups.tune_gc()  # after every import and policy: what exists now lives as long as the pack
    PolicyPack(name=name, enforcement_level=MANDATORY, description=description, policies=found)
