"""One ``AmiFacts`` type and one decoder of AMI facts, for every source that knows an AMI.

The sources differ only in how they spell the same fields: EC2 ``DescribeImages`` (``RootDeviceName``,
``BlockDeviceMappings[].Ebs.VolumeSize``, used by the pack's look-up), the AWS provider's ``getAmi``
(``root_device_name``, ``block_device_mappings[].ebs["volume_size"]``, used by the components), the
policy config's ``amis`` entries (``rootDeviceName``, ``rootSnapshotGiB``) and the offline AMI
catalog (``root_snapshot_gib``). ``decode`` reads all of them: keys are compared without case and
underscores, and the root snapshot is read from the mapping of the root device when no size is
given directly.

Standard library only and no sibling imports (the pack and the components share it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Optional, Sequence

from .. import clock


@dataclass(frozen=True)
class AmiFacts:
    """What the rack's rules need to know about one AMI. Unknown facts are empty or None."""

    id: str
    name: str = ""
    description: str = ""
    architecture: str = ""
    """``x86_64`` or ``arm64`` (EC2's names)."""
    root_device_name: str = ""
    root_snapshot_gib: Optional[float] = None
    root_snapshot_encrypted: Optional[bool] = None
    creation_date: str = ""
    owner_id: str = ""
    owner_alias: str = ""
    """EC2's ``ImageOwnerAlias`` (``amazon`` for Amazon's public images), or ''."""
    deprecation_time: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)
    nvidia_driver_branch: Optional[int] = None
    """The NVIDIA driver's major version (branch) the image ships, when a source states it (the policy
    config's ``nvidiaDriverBranch``, the catalog's ``nvidia_driver_branch``); EC2 has no such field."""


def _key(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _fields(value: Any) -> dict[str, Any]:
    """A mapping's entries by normalised key (objects with attributes are read through ``vars``)."""
    if isinstance(value, Mapping):
        items = value.items()
    elif value is not None and hasattr(value, "__dict__"):
        items = vars(value).items()
    else:
        return {}
    return {_key(str(k)): v for k, v in items}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _size(value: Any) -> Optional[float]:
    """A positive, finite GiB count from a number or a numeric string; anything else is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
        return float(value)
    return None


def _flag(value: Any) -> Optional[bool]:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _tags(value: Any) -> dict[str, str]:
    """Tags as a mapping: EC2's ``[{"Key", "Value"}]`` list or a plain mapping."""
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        pairs = [_fields(item) for item in value]
        return {str(p.get("key")): str(p.get("value", "")) for p in pairs if p.get("key") is not None}
    return {}


def _root_ebs(fields: Mapping[str, Any], root: str) -> dict[str, Any]:
    mappings = fields.get("blockdevicemappings")
    if not isinstance(mappings, Sequence) or isinstance(mappings, str):
        return {}
    for mapping in mappings:
        entry = _fields(mapping)
        if root and _text(entry.get("devicename")) == root:
            return _fields(entry.get("ebs"))
    return {}


def decode(ami_id: str, image: Any) -> AmiFacts:
    """``image`` in any of the sources' spellings -> ``AmiFacts``."""
    fields = _fields(image)
    root = _text(fields.get("rootdevicename"))
    ebs = _root_ebs(fields, root)
    size = _size(fields["rootsnapshotgib"]) if "rootsnapshotgib" in fields else _size(ebs.get("volumesize"))
    encrypted = fields["rootsnapshotencrypted"] if "rootsnapshotencrypted" in fields else ebs.get("encrypted")
    return AmiFacts(
        id=ami_id,
        name=_text(fields.get("name")),
        description=_text(fields.get("description")),
        architecture=_text(fields.get("architecture")),
        root_device_name=root,
        root_snapshot_gib=size,
        root_snapshot_encrypted=_flag(encrypted),
        creation_date=_text(fields.get("creationdate")),
        owner_id=_text(fields.get("ownerid")),
        owner_alias=_text(fields.get("imageowneralias") or fields.get("owneralias")),
        deprecation_time=_text(fields.get("deprecationtime")),
        tags=_tags(fields.get("tags")),
        nvidia_driver_branch=_branch(fields.get("nvidiadriverbranch")),
    )


def _branch(value: Any) -> Optional[int]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value == int(value) and value > 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


# ---- which image a selector boots ---------------------------------------------------------------------

ARCHITECTURES = ("x86_64", "arm64")
"""The architectures Karpenter keeps (it drops images of any other, e.g. ``i386``)."""


def parse_time(value: str) -> Optional[datetime]:
    """An EC2 timestamp (``2026-11-15T08:12:40.000Z``) as an aware datetime; None when unreadable."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def deprecated(image: AmiFacts, now: datetime) -> bool:
    when = parse_time(image.deprecation_time) if image.deprecation_time else None
    return when is not None and when <= now


def karpenter_choice(images: Iterable[AmiFacts], now: Optional[datetime] = None) -> list[AmiFacts]:
    """The images Karpenter launches from what its ``amiSelectorTerms`` matched: one per architecture
    (a non-deprecated image over a deprecated one, then the newest ``CreationDate``, then the larger
    name), newest first (karpenter-provider-aws ``pkg/providers/amifamily/ami.go``, v1.14.1)."""
    now = now or clock.now()

    def rank(image: AmiFacts) -> tuple[bool, str, str]:
        return (not deprecated(image, now), image.creation_date, image.name)

    best: dict[str, AmiFacts] = {}
    for image in images:
        if image.architecture not in ARCHITECTURES:
            continue
        kept = best.get(image.architecture)
        if kept is None or rank(image) > rank(kept):
            best[image.architecture] = image
    return sorted(best.values(), key=lambda i: (i.creation_date, i.id), reverse=True)


def karpenter_query(term: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The EC2 ``DescribeImages`` filters and owners Karpenter builds for a ``name``/``owner``/``tags``
    term (karpenter-provider-aws ``pkg/providers/amifamily/ami.go`` ``DescribeImageQueries``, v1.14.1):
    ``name`` filters by name (wildcards allowed), each tag by ``tag:<key>`` (a ``*`` value by
    ``tag-key``); the owners are ``owner``, else ``self`` and ``amazon`` when the term has a name, else
    any; only ``available`` images, deprecated ones included."""
    filters: list[dict[str, Any]] = [{"Name": "state", "Values": ["available"]}]
    name = term.get("name")
    if isinstance(name, str) and name:
        filters.append({"Name": "name", "Values": [name]})
    tags = term.get("tags")
    for key, value in tags.items() if isinstance(tags, Mapping) else ():
        if value == "*":
            filters.append({"Name": "tag-key", "Values": [str(key)]})
        else:
            filters.append({"Name": f"tag:{key}", "Values": [str(value)]})
    owner = term.get("owner")
    owners = [str(owner)] if owner else (["self", "amazon"] if isinstance(name, str) and name else [])
    return filters, owners
