"""The AMI catalog that answers ``aws:ec2/getAmi`` offline.

One entry per AMI under the top-level key ``amis:``, each with ``id``, ``name``, ``description``,
``architecture`` (``x86_64``/``arm64``), ``root_device_name``, ``root_snapshot_gib``,
``creation_date`` (ISO 8601) and ``owner_id``, and optionally ``root_snapshot_encrypted`` (default
false). The optional top-level ``ebs_encryption_by_default`` (default false, as in a new AWS account)
answers ``aws:ebs/getEncryptionByDefault`` for the offline account.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Optional

import yaml

from ..policies.amifacts import AmiFacts, decode

DEFAULT_CATALOG = Path(__file__).with_name("amis.yaml")
_FIELDS = ("id", "name", "description", "architecture", "root_device_name", "root_snapshot_gib", "creation_date", "owner_id")
_OPTIONAL_FIELDS = ("root_snapshot_encrypted",)


class CatalogError(ValueError):
    pass


def get_ami_result(ami: AmiFacts) -> dict[str, Any]:
    """The ``aws:ec2/getAmi`` result EC2 would give for this image (engine property names)."""
    return {
        "id": ami.id,
        "imageId": ami.id,
        "name": ami.name,
        "description": ami.description,
        "architecture": ami.architecture,
        "rootDeviceName": ami.root_device_name,
        "rootDeviceType": "ebs",
        "creationDate": ami.creation_date,
        "ownerId": ami.owner_id,
        "state": "available",
        "virtualizationType": "hvm",
        "blockDeviceMappings": [
            {
                "deviceName": ami.root_device_name,
                "ebs": {
                    "delete_on_termination": "true",
                    "encrypted": "true" if ami.root_snapshot_encrypted else "false",
                    "snapshot_id": "snap-" + ami.id.removeprefix("ami-"),
                    "volume_size": f"{ami.root_snapshot_gib:g}",
                    "volume_type": "gp3",
                },
                "noDevice": "",
                "virtualName": "",
            }
        ],
    }


class Catalog:
    def __init__(
        self, amis: Mapping[str, AmiFacts], source: str = "<memory>", ebs_encryption_by_default: bool = False
    ) -> None:
        self.amis = dict(amis)
        self.source = source
        self.ebs_encryption_by_default = ebs_encryption_by_default

    def get(self, ami_id: str) -> Optional[AmiFacts]:
        return self.amis.get(ami_id)

    @classmethod
    def load(cls, path: Optional[Path] = None) -> "Catalog":
        path = Path(path) if path else DEFAULT_CATALOG
        try:
            doc = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CatalogError(f"AMI catalog {path}: {exc}") from None
        return cls.from_doc(doc, str(path))

    @classmethod
    def from_doc(cls, doc: Any, source: str = "<memory>") -> "Catalog":
        if not isinstance(doc, dict) or not isinstance(doc.get("amis", []), list):
            raise CatalogError(f"AMI catalog {source}: expected a top-level 'amis:' list")
        amis: dict[str, AmiFacts] = {}
        for n, entry in enumerate(doc.get("amis") or []):
            where = f"AMI catalog {source}: amis[{n}]"
            if not isinstance(entry, dict):
                raise CatalogError(f"{where}: expected a mapping")
            missing = [f for f in _FIELDS if f not in entry]
            unknown = sorted(set(entry) - set(_FIELDS) - set(_OPTIONAL_FIELDS))
            if missing or unknown:
                raise CatalogError(f"{where}: missing {missing or 'nothing'}, unknown {unknown or 'nothing'}")
            if entry["architecture"] not in ("x86_64", "arm64"):
                raise CatalogError(f"{where}.architecture: '{entry['architecture']}' (must be x86_64 or arm64)")
            encrypted = entry.get("root_snapshot_encrypted", False)
            if not isinstance(encrypted, bool):
                raise CatalogError(f"{where}.root_snapshot_encrypted: '{encrypted}' (must be true or false)")
            created = str(entry["creation_date"])
            if not re.match(r"^\d{4}-\d{2}-\d{2}", created):
                raise CatalogError(f"{where}.creation_date: '{created}' (must be ISO 8601)")
            amis[entry["id"]] = decode(str(entry["id"]), {**entry, "root_snapshot_encrypted": encrypted})
        by_default = doc.get("ebs_encryption_by_default", False)
        if not isinstance(by_default, bool):
            raise CatalogError(f"AMI catalog {source}: ebs_encryption_by_default: '{by_default}' (must be true or false)")
        return cls(amis, source, ebs_encryption_by_default=by_default)
