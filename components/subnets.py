"""Preview-time facts about the subnets a created cluster goes into, read through ``aws.ec2.get_subnet``.

EKS creates a cluster only in subnets of at least two Availability Zones (``InvalidParameterException:
Subnets specified must be in at least two different AZs``). The subnet ids alone do not say which zone
each is in, so the rack reads them at preview, as it reads pinned AMIs, and refuses the config before
anything is created. The rule itself is ``spec.rack.subnet_zones_problem``.
"""

from __future__ import annotations

from typing import Iterable, Optional

import pulumi
import pulumi_aws as aws

from .ami import provider_reason
from .spec.rack import subnet_zones_problem


def subnet_zones(subnet_ids: Iterable[str], opts: Optional[pulumi.InvokeOptions] = None) -> dict[str, str]:
    """Each subnet's Availability Zone (``aws:ec2/getSubnet`` by id, one look-up each). Raises
    ``LookupError`` naming the subnet and the provider's reason when one cannot be read."""
    zones: dict[str, str] = {}
    for subnet in subnet_ids:
        try:
            zones[subnet] = aws.ec2.get_subnet(id=subnet, opts=opts).availability_zone
        except Exception as exc:  # the provider's own error: not found here, no credentials
            raise LookupError(f"subnet '{subnet}' cannot be read in this region/account ({provider_reason(exc)}); "
                              f"check that it exists here") from None
    return zones


def subnets_problem(subnet_ids: Iterable[str], opts: Optional[pulumi.InvokeOptions] = None) -> Optional[str]:
    """What is wrong with these subnets for an EKS cluster (unreadable, or all in one zone), or None."""
    try:
        zones = subnet_zones(subnet_ids, opts)
    except LookupError as exc:
        return str(exc)
    return subnet_zones_problem(zones)
