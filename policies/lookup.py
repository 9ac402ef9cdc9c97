"""The pack's own AMI look-up: EC2 ``DescribeImages`` with the ambient AWS credentials, once per AMI.

Used only when a policy's config sets ``lookup: true``. boto3 is imported on first use, so a pack
that never looks anything up starts without it. Standalone (no sibling imports).
"""

from __future__ import annotations

import threading
from typing import Any, Optional

_cache: dict[str, "dict[str, Any] | LookupError"] = {}
_lock = threading.Lock()  # the pack's gRPC server runs 4 worker threads
_client: Any = None


def describe_image(ami_id: str) -> dict[str, Any]:
    """The AMI's facts, keyed like the policy config's ``amis`` entries::

        {"name", "description", "architecture", "rootDeviceName", "rootSnapshotGiB", "creationDate"}

    Raises ``LookupError`` with the reason (not found, no credentials, ...). Answers, and
    failures, are cached per AMI for the life of the pack process (one preview).
    """
    with _lock:
        if ami_id not in _cache:
            _cache[ami_id] = _fetch(ami_id)
        found = _cache[ami_id]
    if isinstance(found, LookupError):
        raise found
    return found


def clear() -> None:
    """Forget every answer (tests)."""
    global _client
    with _lock:
        _cache.clear()
        _client = None


def _fetch(ami_id: str) -> "dict[str, Any] | LookupError":
    global _client
    import botocore.exceptions
    import boto3

    try:
        if _client is None:
            _client = boto3.client("ec2")
        images = _client.describe_images(ImageIds=[ami_id], IncludeDeprecated=True).get("Images", [])
    except botocore.exceptions.ClientError as exc:
        error = exc.response.get("Error", {})
        return LookupError(f"EC2 DescribeImages: {error.get('Code', 'error')}: {error.get('Message', exc)}")
    except botocore.exceptions.BotoCoreError as exc:
        return LookupError(f"EC2 DescribeImages: {exc}")
    if not images:
        return LookupError(f"EC2 DescribeImages: {ami_id} not found in this region/account")
    return facts_of(images[0])


def facts_of(image: dict[str, Any]) -> dict[str, Any]:
    """One ``DescribeImages`` image -> the facts the rules use."""
    root = image.get("RootDeviceName") or ""
    size: Optional[float] = None
    for mapping in image.get("BlockDeviceMappings") or []:
        if mapping.get("DeviceName") == root and (mapping.get("Ebs") or {}).get("VolumeSize") is not None:
            size = float(mapping["Ebs"]["VolumeSize"])
    return {
        "name": image.get("Name") or "",
        "description": image.get("Description") or "",
        "architecture": image.get("Architecture") or "",
        "rootDeviceName": root,
        "rootSnapshotGiB": size,
        "creationDate": image.get("CreationDate") or "",
    }
