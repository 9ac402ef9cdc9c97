"""Preview-time facts about a pinned AMI, read through ``aws.ec2.get_ami``.

One look-up per distinct AMI, however many pools or node groups pin it: share one ``AmiLookup``
between components (the ``Rack`` does). The facts are decoded by the pack's own decoder
(``facts/amifacts.py``) and judged by the pack's rules, so a component refuses exactly what the
pack would, in the same words.
"""

import re
from typing import Any, Callable, Iterable, Optional

import pulumi
import pulumi_aws as aws

from .errors import ConfigError
from .facts import instances
from .pack import rules
from .facts.amifacts import AmiFacts, decode

__all__ = ["AmiFacts", "AmiLookup", "provider_reason"]


def provider_reason(exc: BaseException) -> str:
    """The provider's own words for a failed look-up: the whole message, without the SDK's
    ``invoke of <token> failed:`` prefix (multi-line reasons keep every line)."""
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    return re.sub(r"\Ainvoke of \S+ failed: ", "", text).strip()


def _image(result: Any) -> dict[str, Any]:
    """A ``GetAmiResult`` as a mapping the decoder reads (its mappings keep the provider's ``ebs`` map)."""
    return {
        "name": result.name,
        "description": result.description,
        "architecture": result.architecture,
        "root_device_name": result.root_device_name,
        "creation_date": result.creation_date,
        "owner_id": result.owner_id,
        "block_device_mappings": [
            {"device_name": m.device_name, "ebs": m.ebs} for m in (result.block_device_mappings or [])
        ],
    }


Where = Callable[[str], str]
"""How a lane names its own fields in a problem (``Spec.where``: ``PoolSpec.disk``, or the stack-config key
that set it); a problem about the AMI is the lane's ``ami_id``'s, one about its size the lane's ``disk``'s."""


def _at(where: Optional[Where], field: str, problem: str) -> str:
    return f"{where(field)}: {problem}" if where is not None else problem


class AmiLookup:
    """Looks AMIs up once each and checks a lane against them. Given ``where``, each refusal names the
    lane's field it is about (``arch``, ``disk``, ``ami_id``) first."""

    def __init__(self, opts: Optional[pulumi.InvokeOptions] = None) -> None:
        self._opts = opts
        self._cache: dict[str, AmiFacts] = {}
        self._encrypted_by_default: Optional[bool] = None

    def facts(self, subject: str, ami_id: str, where: Optional[Where] = None) -> AmiFacts:
        if ami_id not in self._cache:
            try:
                self._cache[ami_id] = self._fetch(subject, ami_id)
            except ConfigError as exc:
                raise ConfigError(_at(where, "ami_id", str(exc))) from None
        return self._cache[ami_id]

    def _fetch(self, subject: str, ami_id: str) -> AmiFacts:
        try:
            image = aws.ec2.get_ami(
                filters=[aws.ec2.GetAmiFilterArgs(name="image-id", values=[ami_id])],
                include_deprecated=True,
                opts=self._opts,
            )
        except Exception as exc:  # the provider's own error: not found, not shared, no credentials
            raise ConfigError(
                f"{subject}: ami_id '{ami_id}' cannot be read in this region/account ({provider_reason(exc)}); "
                f"check that it exists here and is shared with this account"
            ) from None
        return decode(ami_id, _image(image))

    def check(
        self,
        subject: str,
        ami_id: str,
        arches: Iterable[str],
        disk_gib: float,
        gpu_families: Iterable[str] = (),
        where: Optional[Where] = None,
    ) -> AmiFacts:
        """Fail fast, with the policy pack's wording, when the lane cannot boot this AMI (its name or description
        names another OS than AL2023, its architecture, its root snapshot), or its NVIDIA driver branch (when the
        AMI says it) cannot drive one of the lane's GPU families."""
        facts = self.facts(subject, ami_id, where)
        seen = rules.os_of_ami(facts.name, facts.description)
        problem = seen and rules.ami_names_other_os(subject, ami_id, facts.name, seen)
        if problem:
            raise ConfigError(_at(where, "ami_id", problem))
        problem = rules.arch_mismatch(subject, arches, ami_id, facts.architecture)
        if problem:
            raise ConfigError(_at(where, "arch", problem))
        if facts.root_snapshot_gib is not None:
            problem = rules.disk_below_snapshot(subject, disk_gib, ami_id, facts.root_snapshot_gib)
            if problem:
                raise ConfigError(_at(where, "disk", problem))
        driver = instances.image_driver(facts.nvidia_driver_branch, facts.name, facts.description)
        unsupported = [p for f in gpu_families if driver is not None and (p := driver.problem(f))]
        if unsupported and driver is not None and driver.branch is not None:
            problem = rules.driver_cannot_drive(
                subject, ami_id, driver.branch, driver.where, list(dict.fromkeys(unsupported))
            )
            raise ConfigError(_at(where, "ami_id", problem))
        return facts

    def encrypted_by_default(self, subject: str) -> bool:
        """Whether the account encrypts new EBS volumes by default (one look-up, cached)."""
        if self._encrypted_by_default is None:
            try:
                self._encrypted_by_default = bool(aws.ebs.get_encryption_by_default(opts=self._opts).enabled)
            except Exception as exc:  # the provider's own error, e.g. no ec2:GetEbsEncryptionByDefault
                raise ConfigError(
                    f"{subject}: cannot read EBS encryption by default ({provider_reason(exc)})"
                ) from None
        return self._encrypted_by_default

    def check_root_encryption(self, subject: str, facts: AmiFacts, fix: str, where: Optional[Where] = None) -> bool:
        """Fail fast, with rule ``root-volume-encrypted``'s words, when a root volume made from this
        AMI's snapshot with no ``encrypted`` flag would be unencrypted: EC2 encrypts it only when the
        snapshot is encrypted or the account encrypts new volumes by default. Returns whether the
        account's default was needed (and on)."""
        if facts.root_snapshot_encrypted:
            return False
        if not self.encrypted_by_default(subject):
            raise ConfigError(_at(where, "ami_id", rules.root_volume_unencrypted(subject, f"ami_id '{facts.id}'", fix)))
        return True
