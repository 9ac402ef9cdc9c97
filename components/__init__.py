"""Mixed-OS racks: a hardened default lane and Amazon Linux 2023 GPU lanes for an EKS cluster.

Every component takes ``(name, args, opts)``: ``args`` is a ``TypedDict`` (``XArgs``) whose required
fields are required, checked when the component is built. Every component that goes into a cluster
takes it as ``cluster``, a ``ClusterRef``. Pools and node groups take a spec (``PoolSpec``,
``NodeGroupSpec``); the stack config's Convox parameters become a ``RackSpec`` through
``load_stack_config``.

The names below are imported on first use, so ``import mixed_os_racks.pack`` (the policy pack's
rules) loads no Pulumi provider SDK.
"""

import importlib as _importlib
from typing import TYPE_CHECKING
from typing import Any as _Any

_EXPORTS = {
    "addons": ("ClusterAutoscaler", "ClusterAutoscalerArgs", "MetricsServer", "MetricsServerArgs"),
    "ami": ("AmiFacts", "AmiLookup"),
    "cluster": ("ClusterRef",),
    "eks": ("RackCluster", "RackClusterArgs"),
    "errors": ("ArgumentError", "ConfigError"),
    "gpu": ("GpuObservability", "GpuObservabilityArgs", "NvidiaDevicePlugin", "NvidiaDevicePluginArgs"),
    "karpenter": ("KarpenterPool", "KarpenterPoolArgs"),
    "karpenter_controller": ("KarpenterController", "KarpenterControllerArgs"),
    "nodegroup": ("NodeGroup", "NodeGroupArgs", "ami_type"),
    "config.params": ("RackParams", "parse_rack_config", "parse_rack_params"),
    "config.stackconfig": ("load_stack_config",),
    "placement": ("GpuRequest", "Placement", "PlacementError", "place"),
    "rack": ("Rack", "RackArgs"),
    "service": ("Service", "ServiceArgs"),
    "spec.service": ("ServiceError", "ServiceSpec", "parse_services"),
    "spec": (
        "ClusterSpec",
        "DevicePluginSpec",
        "GpuObservabilitySpec",
        "KarpenterSpec",
        "NodeGroupSpec",
        "PoolSpec",
        "RackSpec",
        "Taint",
    ),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE)


def _version() -> str:
    """The installed distribution's version, read on first use (``importlib.metadata`` and its scan of
    the installed distributions would otherwise cost every ``import mixed_os_racks``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mixed-os-racks")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


def __getattr__(name: str) -> _Any:
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mixed_os_racks' has no attribute '{name}'")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public API (what ``__all__`` lists, and ``__version__``): not the module's own machinery."""
    return sorted({*__all__, "__version__"})


if TYPE_CHECKING:  # what type checkers and IDEs see, each name re-exported explicitly (``X as X``)  # noqa: F401
    from .addons import (
        ClusterAutoscaler as ClusterAutoscaler,
        ClusterAutoscalerArgs as ClusterAutoscalerArgs,
        MetricsServer as MetricsServer,
        MetricsServerArgs as MetricsServerArgs,
    )
    from .ami import AmiFacts as AmiFacts, AmiLookup as AmiLookup
    from .cluster import ClusterRef as ClusterRef
    from .config.params import (
        RackParams as RackParams,
        parse_rack_config as parse_rack_config,
        parse_rack_params as parse_rack_params,
    )
    from .config.stackconfig import load_stack_config as load_stack_config
    from .eks import RackCluster as RackCluster, RackClusterArgs as RackClusterArgs
    from .errors import ArgumentError as ArgumentError, ConfigError as ConfigError
    from .gpu import (
        GpuObservability as GpuObservability,
        GpuObservabilityArgs as GpuObservabilityArgs,
        NvidiaDevicePlugin as NvidiaDevicePlugin,
        NvidiaDevicePluginArgs as NvidiaDevicePluginArgs,
    )
    from .karpenter import KarpenterPool as KarpenterPool, KarpenterPoolArgs as KarpenterPoolArgs
    from .karpenter_controller import (
        KarpenterController as KarpenterController,
        KarpenterControllerArgs as KarpenterControllerArgs,
    )
    from .nodegroup import NodeGroup as NodeGroup, NodeGroupArgs as NodeGroupArgs, ami_type as ami_type
    from .placement import (
        GpuRequest as GpuRequest,
        Placement as Placement,
        PlacementError as PlacementError,
        place as place,
    )
    from .rack import Rack as Rack, RackArgs as RackArgs
    from .service import Service as Service, ServiceArgs as ServiceArgs
    from .spec import (
        ClusterSpec as ClusterSpec,
        DevicePluginSpec as DevicePluginSpec,
        GpuObservabilitySpec as GpuObservabilitySpec,
        KarpenterSpec as KarpenterSpec,
        NodeGroupSpec as NodeGroupSpec,
        PoolSpec as PoolSpec,
        RackSpec as RackSpec,
        Taint as Taint,
    )
    from .spec.service import ServiceError as ServiceError, ServiceSpec as ServiceSpec, parse_services as parse_services

del TYPE_CHECKING  # read above; not part of the package's namespace
