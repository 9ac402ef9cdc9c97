"""Mixed-OS racks: a hardened default lane and Amazon Linux 2023 GPU lanes for an EKS cluster."""

from .ami import AmiFacts, AmiLookup
from .config import (
    BuildGroupConfig,
    ConfigError,
    KarpenterPoolConfig,
    NodeGroupConfig,
    PoolSpec,
    RackConfig,
    load_stack_config,
    parse_rack_config,
)
from .karpenter import KarpenterPool, KarpenterPoolArgs
from .rack import Rack, RackArgs

__all__ = [
    "AmiFacts",
    "AmiLookup",
    "BuildGroupConfig",
    "ConfigError",
    "KarpenterPool",
    "KarpenterPoolArgs",
    "KarpenterPoolConfig",
    "NodeGroupConfig",
    "PoolSpec",
    "Rack",
    "RackArgs",
    "RackConfig",
    "load_stack_config",
    "parse_rack_config",
]
