"""The pack's own AMI look-up: EC2 ``DescribeImages`` with the ambient AWS credentials, once per AMI.

Used only when a policy's config sets ``lookup: true``. boto3 is imported on first use, so a pack
that never looks anything up starts without it. EC2's answer is read by the one AMI-facts decoder.
"""

from __future__ import annotations

import threading
from typing import Any

try:  # imported as ``mixed_os_racks.policies.lookup``
    from .amifacts import AmiFacts, decode
except ImportError:  # run as the pack: the pack directory is first on sys.path
    from amifacts import AmiFacts, decode  # type: ignore[no-redef]

_ENCRYPTION = "ebs-encryption-by-default"
_cache: dict[str, Any] = {}
_lock = threading.Lock()  # the pack's gRPC server runs 4 worker threads
_client: Any = None


def describe_image(ami_id: str) -> AmiFacts:
    """The AMI's facts. Raises ``LookupError`` with the reason (not found, no credentials, ...). Answers, and
    failures, are cached per AMI for the life of the pack process (one preview).
    """
    with _lock:
        if ami_id not in _cache:
            _cache[ami_id] = _fetch(ami_id)
        found = _cache[ami_id]
    if isinstance(found, LookupError):
        raise found
    return found


def encryption_by_default() -> bool:
    """Whether the account encrypts new EBS volumes by default (EC2 ``GetEbsEncryptionByDefault``,
    once per pack process). Raises ``LookupError`` with the reason."""
    with _lock:
        if _ENCRYPTION not in _cache:
            _cache[_ENCRYPTION] = _fetch_encryption()
        found = _cache[_ENCRYPTION]
    if isinstance(found, LookupError):
        raise found
    return bool(found)


def _fetch_encryption() -> "bool | LookupError":
    global _client
    import botocore.exceptions
    import boto3

    try:
        if _client is None:
            _client = boto3.client("ec2")
        return bool(_client.get_ebs_encryption_by_default().get("EbsEncryptionByDefault"))
    except botocore.exceptions.ClientError as exc:
        error = exc.response.get("Error", {})
        return LookupError(f"EC2 GetEbsEncryptionByDefault: {error.get('Code', 'error')}: {error.get('Message', exc)}")
    except botocore.exceptions.BotoCoreError as exc:
        return LookupError(f"EC2 GetEbsEncryptionByDefault: {exc}")


def clear() -> None:
    """Forget every answer (tests)."""
    global _client
    with _lock:
        _cache.clear()
        _client = None


def _fetch(ami_id: str) -> "AmiFacts | LookupError":
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
    return decode(ami_id, images[0])
