"""The rack's CrossGuard policy pack: ``pulumi preview --policy-pack policies``.

This file only builds the ``PolicyPack`` (which serves it over gRPC and prints its port). The
rules are in ``rules``, reading resources in ``facts``, the policies themselves in ``checks``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Callable, Iterable, Optional

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

import checks
import facts
import lookup
import speedups
import workloads

speedups.install()

MANDATORY, ADVISORY = EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY


class CannotVerify(UnknownValueError):
    """Raised after a policy reported what it could decide: the SDK turns it into the advisory
    "can't run policy ..." diagnostic, as it does for a value not known at preview."""

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


def report_all(findings: Iterable[checks.Finding], report: ReportViolation) -> None:
    unsure = []
    for finding in findings:
        if finding.certain:
            report(finding.message, finding.urn or None)
        else:
            unsure.append(finding.message)
    if unsure:
        raise CannotVerify(unsure)


def knowledge(config: Any) -> checks.AmiKnowledge:
    return checks.AmiKnowledge(config or {}, lookup.describe_image, lookup.encryption_by_default)


def resource_policy(name: str, description: str, level: EnforcementLevel, check: Callable[..., Any],
                    schema: Optional[PolicyConfigSchema] = None) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        lane = facts.read(args.resource_type, args.name, args.props)
        if lane is not None:
            report_all(check(lane, knowledge(args.get_config())), report)

    return ResourceValidationPolicy(name=name, description=description, enforcement_level=level,
                                    config_schema=schema, validate=validate)


def stack_policy(name: str, description: str, check: checks.StackCheck,
                 schema: Optional[PolicyConfigSchema] = None) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        resources = [
            checks.StackResource(r.resource_type, r.name, r.urn, r.props, UrnDependencies(r.property_dependencies))
            for r in args.resources
        ]
        report_all(checks.judge_stack(check, resources, knowledge(args.get_config()), UnknownValueError), report)

    return StackValidationPolicy(name=name, description=description, enforcement_level=MANDATORY,
                                 config_schema=schema, validate=validate)


def workload_policy(name: str, description: str, level: EnforcementLevel,
                    judge: Callable[..., list[checks.Finding]]) -> StackValidationPolicy:
    """A policy over the stack's workloads and lanes (``workloads``); config: ``lanes``."""
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        resources = [
            checks.StackResource(r.resource_type, r.name, r.urn, r.props, UrnDependencies(r.property_dependencies))
            for r in args.resources
        ]
        report_all(judge(resources, args.get_config() or {}, UnknownValueError), report)

    return StackValidationPolicy(name=name, description=description, enforcement_level=level,
                                 config_schema=PolicyConfigSchema(properties={"lanes": workloads.LANES_SCHEMA}),
                                 validate=validate)


def schema(**extra: dict[str, Any]) -> PolicyConfigSchema:
    """Every AMI-facts policy: ``lookup`` (EC2, ambient credentials) and ``amis`` (facts by id)."""
    return PolicyConfigSchema(properties={
        "lookup": {"type": "boolean", "default": False,
                   "description": "Read AMI facts with EC2 DescribeImages (the ambient AWS credentials), once per AMI."},
        "amis": {"type": "object", "default": {},
                 "description": "AMI facts by id: name, description, architecture, rootDeviceName, rootSnapshotGiB, "
                                "rootSnapshotEncrypted, creationDate.",
                 "additionalProperties": {"type": "object", "properties": {
                     "name": {"type": "string"}, "description": {"type": "string"},
                     "architecture": {"type": "string", "enum": ["x86_64", "arm64"]},
                     "rootDeviceName": {"type": "string"}, "rootSnapshotGiB": {"type": "number"},
                     "rootSnapshotEncrypted": {"type": "boolean"}, "creationDate": {"type": "string"}}}},
        **extra,
    })


PolicyPack(
    name="mixed-os-racks",
    enforcement_level=MANDATORY,
    description="Refuses what breaks a mixed-OS rack: malformed AMI ids, custom AMIs off AL2023, "
                "root disks below the AMI's snapshot, GPU lanes on Bottlerocket, unencrypted root volumes.",
    policies=[
        resource_policy("ami-id-format", "Every AMI id is 'ami-' and 8 or 17 lowercase hex digits.", MANDATORY,
                        lambda lane, _: checks.ami_id_format(lane)),
        stack_policy("al2023-family", "A lane pinned to a custom AMI declares Amazon Linux 2023.",
                     checks.al2023_family, schema()),
        resource_policy("disk-fits-ami-snapshot", "The root volume is at least the AMI's root snapshot.", MANDATORY,
                        checks.disk_fits_ami_snapshot, schema(amiRootSnapshotGiB={
                            "type": "object", "default": {}, "additionalProperties": {"type": "number", "exclusiveMinimum": 0},
                            "description": "Root snapshot GiB by AMI id, e.g. {\"ami-0123456789abcdef0\": 20}."})),
        stack_policy("gpu-lane-os", "GPU lanes run Amazon Linux 2023, never Bottlerocket.", checks.gpu_lane_os),
        stack_policy("arch-matches-ami", "A lane's architecture matches its pinned AMI's.", checks.arch_matches_ami, schema()),
        stack_policy("root-volume-encrypted", "Every node's root volume is encrypted.", checks.root_volume_encrypted,
                     schema(ebsEncryptionByDefault={
                         "type": "boolean",
                         "description": "Whether the account encrypts new EBS volumes by default (EC2 GetEbsEncryptionByDefault)."})),
        resource_policy("pinned-ami-age", "A pinned AMI is recent enough to carry OS patches.", ADVISORY,
                        checks.pinned_ami_age, schema(maxAgeDays={
                            "type": "number", "minimum": 1, "default": 90,
                            "description": "Days after its creation a pinned AMI is considered stale."})),
        resource_policy("ami-k8s-version", "A pinned AMI is built for the cluster's Kubernetes minor.", ADVISORY,
                        checks.ami_k8s_version, schema(kubernetesVersion={
                            "type": "string", "pattern": "^v?1\\.[0-9]+(\\.[0-9]+)?$",
                            "description": "The cluster's Kubernetes version, when the resources do not say it."})),
        workload_policy("workloads-reach-their-lane", "Every workload can land on the lane it selects, and a GPU "
                        "workload on a GPU lane.", MANDATORY, workloads.reach),
        workload_policy("gpu-lanes-for-gpu-workloads", "A workload that requests no GPU cannot take a GPU node.",
                        ADVISORY, workloads.squatting),
    ],
)
