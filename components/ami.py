"""Preview-time facts about a pinned AMI, read through ``aws.ec2.get_ami``.

One look-up per distinct AMI, however many pools or node groups pin it: share one ``AmiLookup``
between components (the ``Rack`` does). The checks themselves are the policy pack's rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

import pulumi
import pulumi_aws as aws

from policies import rules

from .config import ConfigError


def _provider_reason(exc: Exception) -> str:
    """The provider's own words for a failed look-up, without the SDK's ``invoke of <token> failed:``."""
    text = str(exc).strip()
    return re.sub(r"^invoke of \S+ failed: ", "", text.splitlines()[-1]) if text else type(exc).__name__


@dataclass(frozen=True)
class AmiFacts:
    id: str
    name: str
    description: str
    architecture: str
    root_device_name: str
    root_snapshot_gib: Optional[float]
    creation_date: str
    root_snapshot_encrypted: bool = False


class AmiLookup:
    """Looks AMIs up once each and checks a lane against them."""

    def __init__(self, opts: Optional[pulumi.InvokeOptions] = None) -> None:
        self._opts = opts
        self._cache: dict[str, AmiFacts] = {}
        self._encrypted_by_default: Optional[bool] = None

    def facts(self, subject: str, ami_id: str) -> AmiFacts:
        if ami_id not in self._cache:
            self._cache[ami_id] = self._fetch(subject, ami_id)
        return self._cache[ami_id]

    def _fetch(self, subject: str, ami_id: str) -> AmiFacts:
        try:
            image = aws.ec2.get_ami(
                filters=[aws.ec2.GetAmiFilterArgs(name="image-id", values=[ami_id])],
                include_deprecated=True,
                opts=self._opts,
            )
        except Exception as exc:  # the provider's own error: not found, not shared, no credentials
            reason = _provider_reason(exc)
            raise ConfigError(
                f"{subject}: ami_id '{ami_id}' cannot be read in this region/account ({reason}); "
                f"check that it exists here and is shared with this account"
            ) from None
        root = image.root_device_name
        size: Optional[float] = None
        encrypted = False
        for mapping in image.block_device_mappings or []:
            if mapping.device_name == root and mapping.ebs and mapping.ebs.get("volume_size"):
                size = float(mapping.ebs["volume_size"])
                encrypted = str(mapping.ebs.get("encrypted", "")).lower() == "true"
        return AmiFacts(
            id=ami_id,
            name=image.name or "",
            description=image.description or "",
            architecture=image.architecture,
            root_device_name=root,
            root_snapshot_gib=size,
            creation_date=image.creation_date or "",
            root_snapshot_encrypted=encrypted,
        )

    def check(self, subject: str, ami_id: str, arches: Iterable[str], disk_gib: float) -> AmiFacts:
        """Fail fast, with the policy pack's wording, when the lane cannot boot this AMI."""
        facts = self.facts(subject, ami_id)
        problem = rules.arch_mismatch(subject, arches, ami_id, facts.architecture)
        if not problem and facts.root_snapshot_gib is not None:
            problem = rules.disk_below_snapshot(subject, disk_gib, ami_id, facts.root_snapshot_gib)
        if problem:
            raise ConfigError(problem)
        return facts

    def check_root_encryption(self, subject: str, facts: AmiFacts) -> None:
        """Fail fast when a volume made from this AMI's root snapshot, with no ``encrypted`` flag in
        its launch template, would be unencrypted: EC2 encrypts it only when the snapshot is
        encrypted or the account encrypts new EBS volumes by default (one look-up, cached)."""
        if facts.root_snapshot_encrypted:
            return
        if self._encrypted_by_default is None:
            try:
                self._encrypted_by_default = bool(aws.ebs.get_encryption_by_default(opts=self._opts).enabled)
            except Exception as exc:  # the provider's own error, e.g. no ec2:GetEbsEncryptionByDefault
                raise ConfigError(f"{subject}: cannot read EBS encryption by default ({_provider_reason(exc)})") from None
        if not self._encrypted_by_default:
            raise ConfigError(
                f"{subject}: ami_id '{facts.id}' has an unencrypted root snapshot and EBS encryption by default "
                f"is off, so its root volumes would be unencrypted (pin an encrypted copy of the AMI, "
                f"e.g. aws ec2 copy-image --encrypted, or turn on EBS encryption by default)"
            )
