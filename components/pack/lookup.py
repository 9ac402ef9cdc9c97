"""The pack's own AMI look-up: EC2 ``DescribeImages`` and SSM ``GetParameter`` with the stack's AWS
region and profile (``aws:region``, ``aws:profile``), else the ambient ones, once per question.

The Pulumi CLI hands a policy pack the stack's config as it hands a program its own: ``PULUMI_CONFIG``,
JSON of ``"ns:key"`` -> text (pulumi ``sdk/policy_proxy.go``; the offline engine's ``packprocess.pack_env``
does the same). The pack's clients read the region and profile from there, so a stack in eu-west-1 is not looked
up in the shell's us-east-1.

Used only when a policy's config sets ``lookup: true``. boto3 is imported on first use, so a pack
that never looks anything up starts without it. EC2's answer is read by the one AMI-facts decoder.
A capacity reservation is read with EC2 ``DescribeCapacityReservations`` by id (every state: an expired block is
told as expired, not as missing) and decoded by the one reservation decoder the offline catalog also uses; a
subnet's zone with ``DescribeSubnets`` by id. A selector (an EC2NodeClass term by name, owner or tags; an SSM
parameter; a launch template's ``resolve:ssm:`` image) is resolved the way Karpenter and EC2 resolve it: SSM gives an
id, a name/tags term becomes the ``DescribeImages`` query ``amifacts.karpenter_query`` builds.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Mapping, Optional, TypeVar

from ..facts.amifacts import AmiFacts, decode, karpenter_query
from . import reservation

_ENCRYPTION = "ebs-encryption-by-default"
_cache: dict[str, Any] = {}
_lock = threading.Lock()  # the pack's gRPC server runs 4 worker threads
_client: Any = None
_ssm: Any = None


CONFIG_ENV = "PULUMI_CONFIG"


def stack_aws_settings(environ: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The stack's ``aws:region`` and ``aws:profile`` from the pack's config environment, as boto3
    session arguments (``region_name``, ``profile_name``); what is not set is left to boto3's own chain."""
    raw = (os.environ if environ is None else environ).get(CONFIG_ENV) or "{}"
    try:
        config = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(config, dict):
        return {}
    settings = {"region_name": config.get("aws:region"), "profile_name": config.get("aws:profile")}
    return {k: v for k, v in settings.items() if isinstance(v, str) and v.strip()}


def _new_client(service: str) -> Any:
    """A boto3 client in the stack's region and profile (a profile that does not exist raises
    botocore's ``ProfileNotFound``, reported as the look-up's failure)."""
    import boto3

    return boto3.session.Session(**stack_aws_settings()).client(service)


def describe_image(ami_id: str) -> AmiFacts:
    """The AMI's facts. Raises ``LookupError`` with the reason (not found, no credentials, ...). Answers, and
    failures, are cached per AMI for the life of the pack process (one preview).
    """
    with _lock:
        if ami_id not in _cache:
            _cache[ami_id] = _fetch(ami_id)
        found: AmiFacts | LookupError = _cache[ami_id]
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

    try:
        if _client is None:
            _client = _new_client("ec2")
        return bool(_client.get_ebs_encryption_by_default().get("EbsEncryptionByDefault"))
    except botocore.exceptions.ClientError as exc:
        error = exc.response.get("Error", {})
        return LookupError(f"EC2 GetEbsEncryptionByDefault: {error.get('Code', 'error')}: {error.get('Message', exc)}")
    except botocore.exceptions.BotoCoreError as exc:
        return LookupError(f"EC2 GetEbsEncryptionByDefault: {exc}")


def clear() -> None:
    """Forget every answer (tests)."""
    global _client, _ssm
    with _lock:
        _cache.clear()
        _client = _ssm = None


T = TypeVar("T")


def _cached(key: Any, fetch: Callable[[], "T | LookupError"]) -> T:
    with _lock:
        if key not in _cache:
            _cache[key] = fetch()
        found: T | LookupError = _cache[key]
    if isinstance(found, LookupError):
        raise found
    return found


def select(term: Mapping[str, Any]) -> list[AmiFacts]:
    """The images a selector term matches (``ssmParameter``, or ``name``/``owner``/``tags``). Raises
    ``LookupError`` with the reason; an SSM parameter that is missing or holds no AMI id matches
    nothing, as Karpenter skips it."""
    parameter = term.get("ssmParameter")
    if isinstance(parameter, str) and parameter:
        value = _cached(("ssm", parameter), lambda: _fetch_parameter(parameter))
        return [describe_image(value)] if isinstance(value, str) and value.startswith("ami-") else []
    filters, owners = karpenter_query(term)
    key = ("images", repr(filters), tuple(owners))
    return list(_cached(key, lambda: _fetch_images(filters, owners)))


def _client_for(service: str) -> Any:
    global _client, _ssm

    if service == "ssm":
        if _ssm is None:
            _ssm = _new_client("ssm")
        return _ssm
    if _client is None:
        _client = _new_client("ec2")
    return _client


def _failure(call: str, exc: Exception) -> LookupError:
    import botocore.exceptions

    if isinstance(exc, botocore.exceptions.ClientError):
        error = exc.response.get("Error", {})
        return LookupError(f"{call}: {error.get('Code', 'error')}: {error.get('Message', exc)}")
    return LookupError(f"{call}: {exc}")


def _fetch_parameter(name: str) -> "str | None | LookupError":
    import botocore.exceptions

    try:
        return str(_client_for("ssm").get_parameter(Name=name)["Parameter"]["Value"])
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
            return None
        return _failure("SSM GetParameter", exc)
    except botocore.exceptions.BotoCoreError as exc:
        return _failure("SSM GetParameter", exc)


def _fetch_images(filters: list[dict[str, Any]], owners: list[str]) -> "tuple[AmiFacts, ...] | LookupError":
    import botocore.exceptions

    query: dict[str, Any] = {"Filters": filters, "IncludeDeprecated": True}
    if owners:
        query["Owners"] = owners
    try:
        pages = _client_for("ec2").get_paginator("describe_images").paginate(**query)
        return tuple(decode(str(image.get("ImageId")), image) for page in pages for image in page.get("Images", []))
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        return _failure("EC2 DescribeImages", exc)


def _fetch(ami_id: str) -> "AmiFacts | LookupError":
    global _client
    import botocore.exceptions

    try:
        if _client is None:
            _client = _new_client("ec2")
        images = _client.describe_images(ImageIds=[ami_id], IncludeDeprecated=True).get("Images", [])
    except botocore.exceptions.ClientError as exc:
        error = exc.response.get("Error", {})
        return LookupError(f"EC2 DescribeImages: {error.get('Code', 'error')}: {error.get('Message', exc)}")
    except botocore.exceptions.BotoCoreError as exc:
        return LookupError(f"EC2 DescribeImages: {exc}")
    if not images:
        return LookupError(f"EC2 DescribeImages: {ami_id} not found in this region/account")
    return decode(ami_id, images[0])


NOT_FOUND_CODES = {"reservation": "InvalidCapacityReservationId.NotFound", "subnet": "InvalidSubnetID.NotFound"}
"""EC2's error code for an id the account does not have (EC2 API reference, error codes)."""


def describe_capacity_reservation(reservation_id: str) -> Optional[reservation.CapacityReservation]:
    """The reservation's facts, or None when the account has no such reservation in the stack's region. Raises
    ``LookupError`` with the reason when EC2 cannot say (no credentials, no permission). Cached like
    ``describe_image``."""
    return _cached(("reservation", reservation_id), lambda: _fetch_reservation(reservation_id))


def _fetch_reservation(reservation_id: str) -> "reservation.CapacityReservation | None | LookupError":
    import botocore.exceptions

    try:
        found = _client_for("ec2").describe_capacity_reservations(CapacityReservationIds=[reservation_id])
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in (
            NOT_FOUND_CODES["reservation"],
            "InvalidCapacityReservationId.Malformed",
        ):
            return None
        return _failure("EC2 DescribeCapacityReservations", exc)
    except botocore.exceptions.BotoCoreError as exc:
        return _failure("EC2 DescribeCapacityReservations", exc)
    listed = [r for r in found.get("CapacityReservations", []) if r.get("CapacityReservationId") == reservation_id]
    return reservation.decode(reservation_id, listed[0]) if listed else None


def subnet_zone(subnet_id: str) -> Optional[str]:
    """The subnet's Availability Zone, or None when the account has no such subnet in the stack's region. Raises
    ``LookupError`` with the reason when EC2 cannot say. Cached for the life of the pack process."""
    return _cached(("subnet", subnet_id), lambda: _fetch_subnet_zone(subnet_id))


def _fetch_subnet_zone(subnet_id: str) -> "str | None | LookupError":
    import botocore.exceptions

    try:
        subnets = _client_for("ec2").describe_subnets(SubnetIds=[subnet_id]).get("Subnets", [])
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == NOT_FOUND_CODES["subnet"]:
            return None
        return _failure("EC2 DescribeSubnets", exc)
    except botocore.exceptions.BotoCoreError as exc:
        return _failure("EC2 DescribeSubnets", exc)
    zone = subnets[0].get("AvailabilityZone") if subnets else None
    return zone if isinstance(zone, str) else None
