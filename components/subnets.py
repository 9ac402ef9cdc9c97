"""Preview-time facts about the subnets a created cluster goes into, read through ``aws.ec2.get_subnet``.

EKS creates a cluster only in subnets of at least two Availability Zones (``InvalidParameterException:
Subnets specified must be in at least two different AZs``), and none in a Local Zone. The subnet ids
alone do not say which zone each is in, so the rack reads them at preview, as it reads pinned AMIs, the
private subnets and the public ones (pulumi-eks gives the cluster both), and refuses the config before
anything is created. The rules themselves are ``spec.rack.subnet_zones_problem`` and
``spec.rack.outside_availability_zones``.
"""

from __future__ import annotations

from typing import Iterable, Optional

import pulumi
import pulumi_aws as aws

from .ami import provider_reason
from .spec.rack import outside_availability_zones, subnet_zones_problem


def subnet_zones(subnet_ids: Iterable[str], opts: Optional[pulumi.InvokeOptions] = None) -> dict[str, str]:
    """Each subnet's Availability Zone (``aws:ec2/getSubnet`` by id, one look-up each). Raises
    ``LookupError`` naming the subnet and the provider's reason when one cannot be read."""
    zones: dict[str, str] = {}
    for subnet in subnet_ids:
        try:
            zones[subnet] = aws.ec2.get_subnet(id=subnet, opts=opts).availability_zone
        except Exception as exc:  # the provider's own error: not found here, no credentials
            raise LookupError(
                f"subnet '{subnet}' cannot be read in this region/account ({provider_reason(exc)}); "
                f"check that it exists here"
            ) from None
    return zones


def subnets_problems(
    private: Iterable[str], public: Iterable[str] = (), opts: Optional[pulumi.InvokeOptions] = None
) -> dict[str, str]:
    """What is wrong with a cluster's subnets, by field (``private_subnet_ids``, ``public_subnet_ids``):
    unreadable, in a Local Zone, or (private) all in one zone."""
    found: dict[str, str] = {}
    for field, ids, rule in (
        ("private_subnet_ids", private, subnet_zones_problem),
        ("public_subnet_ids", public, outside_availability_zones),
    ):
        ids = list(ids)
        if not ids:
            continue
        try:
            problem = rule(subnet_zones(ids, opts))
        except LookupError as exc:
            problem = str(exc)
        if problem:
            found[field] = problem
    return found
