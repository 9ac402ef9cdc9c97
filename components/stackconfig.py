"""Reading the current stack's ``rack:`` config (the real engine's, or the offline one's).

The language host hands a program its whole stack config as the ``PULUMI_CONFIG`` environment
variable (JSON, structured values as JSON text), which the SDK exposes as
``pulumi.runtime.get_config_env()``. ``pulumi.Config`` cannot list keys, and unknown keys must be
errors, so this reads the whole map.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import pulumi

from .params import NAMESPACE, parse_rack_config
from .specs import RackSpec


def decode_config_value(raw: Any) -> Any:
    """Structured stack config reaches a program as JSON text; plain strings stay strings."""
    if isinstance(raw, str) and raw[:1] in "[{":
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return raw


def rack_values(all_config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``rack:*`` entries of a full config map, keyed without the namespace."""
    prefix = f"{NAMESPACE}:"
    return {k[len(prefix):]: decode_config_value(v) for k, v in all_config.items() if k.startswith(prefix)}


def load_stack_config(rack: str = "rack") -> RackSpec:
    """The ``RackSpec`` of the current stack, for a ``Rack`` named ``rack``."""
    return parse_rack_config(rack_values(pulumi.runtime.get_config_env()), rack)
