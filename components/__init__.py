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
from .gpu import GpuObservability, GpuObservabilityArgs, NvidiaDevicePlugin, NvidiaDevicePluginArgs
from .karpenter import KarpenterPool, KarpenterPoolArgs
from .nodegroup import ExistingCluster, NodeGroup, NodeGroupArgs, ami_type
from .rack import Rack, RackArgs

__all__ = [
    "AmiFacts",
    "AmiLookup",
    "BuildGroupConfig",
    "ConfigError",
    "ExistingCluster",
    "GpuObservability",
    "GpuObservabilityArgs",
    "KarpenterPool",
    "KarpenterPoolArgs",
    "KarpenterPoolConfig",
    "NodeGroup",
    "NodeGroupArgs",
    "NodeGroupConfig",
    "NvidiaDevicePlugin",
    "NvidiaDevicePluginArgs",
    "PoolSpec",
    "Rack",
    "RackArgs",
    "RackConfig",
    "ami_type",
    "load_stack_config",
    "parse_rack_config",
]
