"""One table per spec: which stack-config key sets each spec field.

The stack config speaks the seeds' (Convox racks') parameter names; the specs have their own field
names. These tables are the only place the two meet: ``params`` builds specs through them, ``errors``
names a spec's problem by the key the user wrote, the docs generator lists the keys, and the
offline preview's stack-file reader learns from them which positions hold text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from pydantic import BaseModel

from ..inputs import closest
from ..spec import ClusterSpec, DevicePluginSpec, GpuObservabilitySpec, NodeGroupSpec, PoolSpec, RackSpec

NAMESPACE = "rack"
"""The stack config namespace the rack reads (``rack:<key>``)."""


@dataclass(frozen=True)
class KeyTable:
    """How the stack config sets one spec's fields.

    ``keys``: spec field -> the key that sets it (a field not listed is set under its own name);
    ``item_keys``: for a list of such specs (pools, node groups), the keys an item may hold, in
    order; ``suffix``: whether an item's problem names the item's key (``[0].disk``) or only the
    item (``[0]``, as the seeds' CLI words node-group errors); ``suffixed``: fields whose problems name
    the item's key even without ``suffix`` (keys the seeds never had); ``default``: the key a problem of
    the spec as a whole (or of a field set by the rack itself) is reported under."""

    spec: type[BaseModel]
    keys: Mapping[str, str] = field(default_factory=dict)
    item_keys: tuple[str, ...] = ()
    suffix: bool = True
    default: str = ""
    suffixed: tuple[str, ...] = ()

    def key(self, spec_field: str) -> str:
        """The key that sets ``spec_field`` ('' for a problem of the spec as a whole)."""
        if not spec_field:
            return self.default
        if spec_field in self.keys:
            return self.keys[spec_field]
        if self.item_keys or spec_field in self.spec.model_fields and not self.default:
            return spec_field
        return self.default or spec_field

    def meant(self, wrong: str) -> str:
        """For a list item's unknown key: the key meant, as the spec's field name it sets or by spelling
        (``instance_type`` in a node group: its key is ``type``), as ``" (did you mean ...?)"``, or ''."""
        key = self.keys.get(wrong)
        if key is not None and key in self.item_keys:
            return f" (did you mean {key}? '{wrong}' is the {self.spec.__name__} field it sets)"
        close = closest(wrong, self.item_keys)
        return f" (did you mean {close}?)" if close else ""

    def field_of(self, key: str) -> Optional[str]:
        """The spec field a key sets (the inverse of ``key``)."""
        for spec_field, k in self.keys.items():
            if k == key:
                return spec_field
        return key if key in self.spec.model_fields else None


POOL = KeyTable(
    PoolSpec,
    item_keys=(
        "name",
        "instance_families",
        "instance_sizes",
        "capacity_types",
        "arch",
        "cpu_limit",
        "memory_limit_gb",
        "consolidation_policy",
        "consolidate_after",
        "node_expiry",
        "disruption_budget_nodes",
        "disk",
        "volume_type",
        "volume_iops",
        "volume_throughput",
        "ami_id",
        "weight",
        "labels",
        "taints",
        "dedicated",
        "gpu_limit",
        "max_hourly_usd",
        "canary_ami_id",
        "canary_nodes",
        "capacity_reservation_ids",
    ),
    keys={"ami_alias": "karpenter_ami_alias"},
)
"""An item of ``additional_karpenter_nodepools_config`` (always AL2023, with the rack's AMI alias)."""

NODE_GROUP = KeyTable(
    NodeGroupSpec,
    item_keys=(
        "type",
        "disk",
        "capacity_type",
        "capacity_reservation_id",
        "min_size",
        "max_size",
        "label",
        "id",
        "tags",
        "ami_id",
        "dedicated",
        "max_hourly_usd",
        "canary_ami_id",
        "canary_size",
    ),
    keys={"instance_type": "type"},
    suffix=False,
    suffixed=("max_hourly_usd",),
)
"""An item of ``additional_node_groups_config`` and ``additional_build_groups_config``; ``id`` names the
group (``<rack>-ng-<id>``), ``disk`` defaults to the rack's ``node_disk``."""

WORKLOAD_POOL = KeyTable(
    PoolSpec,
    keys={
        "os": "karpenter_node_os",
        "ami_alias": "karpenter_ami_alias",
        "instance_families": "karpenter_instance_families",
        "instance_sizes": "karpenter_instance_sizes",
        "capacity_types": "karpenter_capacity_types",
        "arch": "karpenter_arch",
        "cpu_limit": "karpenter_cpu_limit",
        "memory_limit_gb": "karpenter_memory_limit_gb",
        "max_hourly_usd": "karpenter_max_hourly_usd",
        "consolidation_policy": "karpenter_consolidation_enabled",
        "consolidate_after": "karpenter_consolidate_after",
        "node_expiry": "karpenter_node_expiry",
        "disruption_budget_nodes": "karpenter_disruption_budget_nodes",
        "disk": "karpenter_node_disk",
        "volume_type": "karpenter_node_volume_type",
        "labels": "karpenter_node_labels",
        "taints": "karpenter_node_taints",
    },
    default="karpenter_node_os",
)
"""The default ``workload`` lane, set by the ``karpenter_*`` parameters."""

BUILD_POOL = KeyTable(
    PoolSpec,
    keys={
        "instance_types": "build_node_type",
        "disk": "node_disk",
        "ami_alias": "karpenter_ami_alias",
    },
    default="build_node_type",
)
"""The seeds' Karpenter ``build`` pool: its types, and the rack's ``node_disk`` and alias."""

CLUSTER = KeyTable(
    ClusterSpec,
    keys={
        "name": "cluster_name",
        "private_subnet_ids": "private_subnets_ids",
        "public_subnet_ids": "public_subnets_ids",
        "version": "k8s_version",
        "public_access_cidrs": "eks_api_server_public_access_cidrs",
        "system_node_type": "node_type",
        "system_node_disk": "node_disk",
        "admin_arns": "cluster_admin_arns",
    },
)
"""The cluster ``cluster_mode: create`` makes."""

DEVICE_PLUGIN = KeyTable(DevicePluginSpec, keys={"time_slicing_replicas": "nvidia_device_time_slicing_replicas"})
GPU_OBSERVABILITY = KeyTable(
    GpuObservabilitySpec,
    keys={
        "version": "gpu_observability_chart_version",
        "service_monitor": "gpu_observability_service_monitor",
    },
)

RACK = KeyTable(
    RackSpec,
    keys={
        "karpenter_node_role": "node_role_name",
        "pod_identity_agent": "pod_identity_agent_enable",
        "cluster_autoscaler": "cluster_autoscaler_enable",
        "metrics_server": "metrics_server_enable",
        "pools": "additional_karpenter_nodepools_config",
        "node_groups": "additional_node_groups_config",
        "node_group_role": "node_group_role_name",
        "device_plugin": "nvidia_device_plugin_enable",
        "gpu_observability": "gpu_observability_enable",
        "karpenter": "karpenter_version",
    },
)
"""The whole rack: what only all its parts together can break."""

TABLES = (POOL, NODE_GROUP, WORKLOAD_POOL, BUILD_POOL, CLUSTER, DEVICE_PLUGIN, GPU_OBSERVABILITY, RACK)
"""Every table (a spec's did-you-mean reads them: ``NodeGroupSpec(type=...)`` meant ``instance_type``)."""

ITEM_TABLES: Mapping[type[BaseModel], KeyTable] = {PoolSpec: POOL, NodeGroupSpec: NODE_GROUP}
"""A spec as a list item of the stack config: the seeds' keys it takes."""


def item_keys() -> dict[type[BaseModel], tuple[tuple[str, ...], dict[str, str]]]:
    """Each list-item spec as the stack config writes it: its keys, and spec field -> key where they differ."""
    return {
        table.spec: (table.item_keys, {f: k for f, k in table.keys.items() if k in table.item_keys})
        for table in ITEM_TABLES.values()
    }
