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
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence


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
    )
