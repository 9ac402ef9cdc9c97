"""Mixed-OS racks: a hardened default lane and Amazon Linux 2023 GPU lanes for an EKS cluster.

Every component takes ``(name, args, opts)``: ``args`` is a ``TypedDict`` (``XArgs``) whose required
fields are required, checked when the component is built. Every component that goes into a cluster
takes it as ``cluster``, a ``ClusterRef``. Pools and node groups take a spec (``PoolSpec``,
``NodeGroupSpec``); the stack config's Convox parameters become a ``RackSpec`` through
``load_stack_config``.
"""

from .ami import AmiFacts, AmiLookup
from .cluster import ClusterRef
from .eks import RackCluster, RackClusterArgs
from .errors import ArgumentError, ConfigError
from .gpu import GpuObservability, GpuObservabilityArgs, NvidiaDevicePlugin, NvidiaDevicePluginArgs
from .karpenter import KarpenterPool, KarpenterPoolArgs
from .karpenter_controller import KarpenterController, KarpenterControllerArgs
from .nodegroup import NodeGroup, NodeGroupArgs, ami_type
from .params import RackParams, parse_rack_config, parse_rack_params
from .placement import GpuRequest, Placement, place
from .rack import Rack, RackArgs
from .service import Service, ServiceArgs
from .servicespec import ServiceError, ServiceSpec
from .specs import ClusterSpec, DevicePluginSpec, GpuObservabilitySpec, KarpenterSpec, NodeGroupSpec, PoolSpec, RackSpec, Taint
from .stackconfig import load_stack_config

__all__ = [
    "AmiFacts",
    "AmiLookup",
    "ArgumentError",
    "ClusterRef",
    "ClusterSpec",
    "ConfigError",
    "DevicePluginSpec",
    "GpuObservability",
    "GpuObservabilityArgs",
    "GpuObservabilitySpec",
    "GpuRequest",
    "KarpenterController",
    "KarpenterControllerArgs",
    "KarpenterPool",
    "KarpenterPoolArgs",
    "KarpenterSpec",
    "NodeGroup",
    "NodeGroupArgs",
    "NodeGroupSpec",
    "NvidiaDevicePlugin",
    "NvidiaDevicePluginArgs",
    "Placement",
    "PoolSpec",
    "Rack",
    "RackArgs",
    "RackCluster",
    "RackClusterArgs",
    "RackParams",
    "RackSpec",
    "Service",
    "ServiceArgs",
    "ServiceError",
    "ServiceSpec",
    "Taint",
    "ami_type",
    "load_stack_config",
    "parse_rack_config",
    "parse_rack_params",
    "place",
]
