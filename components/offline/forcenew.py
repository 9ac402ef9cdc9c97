"""Which changed properties make a provider *replace* a resource instead of updating it in place:
the one table the offline plan (``plan``) decides replacement from.

Paths are Pulumi property paths of the resource's inputs. A changed path forces replacement when it
is one of these, lies under one, or contains one (a whole ``launchTemplate`` block added or removed
changes its ``id``). Everything not listed is updated in place. Custom resources of a type not
listed here (and every Karpenter custom resource) are updated in place, except for the Kubernetes
metadata every object is replaced on.

Sources (read upstream):

- pulumi-aws is bridged from terraform-provider-aws; a ``ForceNew`` attribute there is a replacement
  here. ``internal/service/eks/node_group.go``: ``ami_type``, ``capacity_type``, ``cluster_name``,
  ``disk_size``, ``instance_types``, ``node_group_name(_prefix)``, ``node_role_arn``, ``subnet_ids``,
  ``remote_access`` and ``launch_template``'s ``id``/``name`` are ForceNew; ``launch_template.version``,
  ``version``, ``release_version``, ``labels``, ``taint``, ``scaling_config``, ``update_config`` are
  updated (UpdateNodegroupVersion / UpdateNodegroupConfig).
  ``internal/service/ec2/ec2_launch_template.go``: only ``name``/``name_prefix``; any content change
  is a new template version. ``internal/service/iam/role.go``: ``name``, ``name_prefix``, ``path``.
  ``internal/service/iam/policy.go``: ``name``, ``name_prefix``, ``path``, ``description``.
  ``internal/service/iam/role_policy_attachment.go``: ``role``, ``policy_arn`` (it has no update).
  ``internal/service/eks/cluster.go``: ``name``, ``role_arn``, ``bootstrap_self_managed_addons``,
  ``access_config.bootstrap_cluster_creator_admin_permissions``, ``kubernetes_network_config``'s
  ``ip_family``/``service_ipv4_cidr``, ``outpost_config.control_plane_instance_type``,
  ``remote_network_config``. ``internal/service/sqs/queue.go``: ``name``, ``name_prefix``,
  ``fifo_queue``. ``internal/service/events/rule.go``: ``name``, ``name_prefix``, ``event_bus_name``.
  ``internal/service/events/target.go``: ``rule``, ``target_id``, ``event_bus_name``.
  ``internal/service/eks/addon.go``: ``addon_name``, ``cluster_name``.
  ``internal/service/eks/access_entry.go``: ``cluster_name``, ``principal_arn``, ``type``.
  ``internal/service/eks/pod_identity_association.go`` (RequiresReplace): ``cluster_name``,
  ``namespace``, ``service_account``. ``internal/service/eks/access_policy_association.go``: every field
  (it has no Update). ``internal/service/sqs/queue_policy.go``: ``queue_url``.
- pulumi-kubernetes ``provider/pkg/provider/diff.go``: ``metadata.name`` and ``metadata.namespace``
  replace every kind; its per-kind table adds the selectors of Deployments and DaemonSets, a
  StatefulSet's selector/serviceName/volumeClaimTemplates/podManagementPolicy/revisionHistoryLimit, a
  Job's template/selector/completions/parallelism, a Service's clusterIP, a PersistentVolumeClaim's
  accessModes/selector/storageClassName/volumeName, a Secret's type (and data, unless the provider
  makes Secrets mutable), a ConfigMap's data/binaryData (unless the provider makes ConfigMaps mutable),
  a (Cluster)RoleBinding's roleRef, a StorageClass's parameters/provisioner, a ResourceQuota's scopes, a Pod's
  scheduling, security and volume fields and its containers' (``containerForceNewProperties``), a
  PersistentVolume's volume source.
  Custom resources (Karpenter's NodePool, EC2NodeClass) have no per-kind entry: updated in place.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Optional

AWS_FORCE_NEW: dict[str, tuple[str, ...]] = {
    "aws:eks/nodeGroup:NodeGroup": (
        "amiType",
        "capacityType",
        "clusterName",
        "diskSize",
        "instanceTypes",
        "nodeGroupName",
        "nodeGroupNamePrefix",
        "nodeRoleArn",
        "subnetIds",
        "remoteAccess",
        "launchTemplate.id",
        "launchTemplate.name",
    ),
    "aws:ec2/launchTemplate:LaunchTemplate": ("name", "namePrefix"),
    "aws:iam/role:Role": ("name", "namePrefix", "path"),
    "aws:iam/policy:Policy": ("name", "namePrefix", "path", "description"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ("role", "policyArn"),
    "aws:eks/cluster:Cluster": (
        "name",
        "roleArn",
        "bootstrapSelfManagedAddons",
        "accessConfig.bootstrapClusterCreatorAdminPermissions",
        "kubernetesNetworkConfig.ipFamily",
        "kubernetesNetworkConfig.serviceIpv4Cidr",
        "outpostConfig.controlPlaneInstanceType",
        "remoteNetworkConfig",
    ),
    "aws:sqs/queue:Queue": ("name", "namePrefix", "fifoQueue"),
    "aws:cloudwatch/eventRule:EventRule": ("name", "namePrefix", "eventBusName"),
    "aws:cloudwatch/eventTarget:EventTarget": ("rule", "targetId", "eventBusName"),
    "aws:eks/addon:Addon": ("addonName", "clusterName"),
    "aws:eks/accessEntry:AccessEntry": ("clusterName", "principalArn", "type"),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ("clusterName", "namespace", "serviceAccount"),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": (
        "clusterName",
        "policyArn",
        "principalArn",
        "accessScope",
    ),
    "aws:sqs/queuePolicy:QueuePolicy": ("queueUrl",),
}

AWS_FORCE_NEW_IF_REMOVED: dict[str, tuple[str, ...]] = {
    "aws:eks/cluster:Cluster": ("encryptionConfig",),
}
"""Properties whose removal (not a change) replaces the resource: terraform-provider-aws
``internal/service/eks/cluster.go`` ``ForceNewIfChange("encryption_config", ...)``: envelope encryption cannot be
turned off once on, so removing it recreates the cluster (adding it is an in-place ``AssociateEncryptionConfig``)."""

AWS_SETS: dict[str, tuple[str, ...]] = {
    "aws:eks/nodeGroup:NodeGroup": ("subnetIds", "taints"),
    "aws:eks/cluster:Cluster": (
        "vpcConfig.subnetIds",
        "vpcConfig.securityGroupIds",
        "vpcConfig.publicAccessCidrs",
        "enabledClusterLogTypes",
    ),
    "aws:ec2/launchTemplate:LaunchTemplate": ("vpcSecurityGroupIds", "securityGroupNames"),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": ("accessScope.namespaces",),
}
"""Properties terraform-provider-aws declares ``schema.TypeSet`` (``node_group.go``: ``subnet_ids``, ``taint``;
``cluster.go``: ``vpc_config``'s ids and CIDRs, ``enabled_cluster_log_types``; ``ec2_launch_template.go``:
``vpc_security_group_ids``, ``security_group_names``): their order is no change. (``instance_types`` is a list.)"""


def in_set_order(type_: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``inputs`` with each set-typed property of ``type_`` in one order (by its JSON), so that a
    reordered set compares equal. A property missing or not a list is left as it is."""
    paths = AWS_SETS.get(type_, ())
    if not paths:
        return inputs
    out = dict(inputs)  # copied along each path: the caller's inputs keep their order
    for path in paths:
        *parents, last = path.split(".")
        holder: Optional[dict[str, Any]] = out
        for part in parents:
            child = holder.get(part) if isinstance(holder, dict) else None
            if not isinstance(child, dict):
                holder = None
                break
            holder[part] = holder = dict(child)
        if isinstance(holder, dict) and isinstance(holder.get(last), list):
            holder[last] = in_one_order(holder[last])
    return out


def in_one_order(items: list[Any]) -> list[Any]:
    """A list read as a set, in one order (by each item's JSON): two orders of the same items are equal."""
    return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))


K8S_FORCE_NEW_ALL = ("metadata.name", "metadata.namespace")
_CONTAINER_FIELDS = (
    "args",
    "command",
    "env",
    "image",
    "imagePullPolicy",
    "lifecycle",
    "livenessProbe",
    "ports",
    "readinessProbe",
    "resources",
    "securityContext",
    "stdin",
    "stdinOnce",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "tty",
    "volumeDevices",
    "volumeMounts",
    "workingDir",
)
K8S_FORCE_NEW: dict[str, tuple[str, ...]] = {
    "Pod": tuple(
        f"spec.{f}"
        for f in (
            "affinity",
            "automountServiceAccountToken",
            "dnsConfig",
            "dnsPolicy",
            "enableServiceLinks",
            "hostAliases",
            "hostIPC",
            "hostNetwork",
            "hostPID",
            "hostname",
            "imagePullSecrets",
            "nodeName",
            "nodeSelector",
            "overhead",
            "preemptionPolicy",
            "priority",
            "priorityClassName",
            "readinessGates",
            "restartPolicy",
            "runtimeClassName",
            "schedulerName",
            "securityContext",
            "serviceAccount",
            "serviceAccountName",
            "shareProcessNamespace",
            "subdomain",
            "terminationGracePeriodSeconds",
            "volumes",
        )
    )
    + tuple(f"spec.{c}[*].{f}" for c in ("containers", "initContainers") for f in _CONTAINER_FIELDS),
    "PersistentVolume": tuple(
        f"spec.{f}"
        for f in (
            "awsElasticBlockStore",
            "azureDisk",
            "azureFile",
            "cephfs",
            "cinder",
            "csi",
            "fc",
            "flexVolume",
            "flocker",
            "gcePersistentDisk",
            "glusterfs",
            "hostPath",
            "iscsi",
            "local",
            "nfs",
            "photonPersistentDisk",
            "portworxVolume",
            "quobyte",
            "rbd",
            "scaleIO",
            "storageos",
            "vsphereVolume",
        )
    ),
    "Deployment": ("spec.selector",),
    "DaemonSet": ("spec.selector",),
    "StatefulSet": (
        "spec.selector",
        "spec.serviceName",
        "spec.volumeClaimTemplates",
        "spec.podManagementPolicy",
        "spec.revisionHistoryLimit",
    ),
    "Job": ("spec.template", "spec.selector", "spec.completions", "spec.parallelism"),
    "Service": ("spec.clusterIP",),
    "PersistentVolumeClaim": ("spec.accessModes", "spec.selector", "spec.storageClassName", "spec.volumeName"),
    "Secret": ("type", "data", "stringData"),
    "ConfigMap": ("data", "binaryData"),
    "RoleBinding": ("roleRef",),
    "ClusterRoleBinding": ("roleRef",),
    "StorageClass": ("parameters", "provisioner"),
    "ResourceQuota": ("spec.scopes",),
}
"""By kind, for the kinds of Kubernetes' own API groups (``kubernetes:apps/v1:Deployment``)."""

_CUSTOM_GROUP = re.compile(r"\.")  # a custom resource's API group has a dot (karpenter.sh); core groups do not


def builtin_kind(type_: str) -> str:
    """The kind of a Kubernetes type of Kubernetes' own API groups (``kubernetes:apps/v1:Deployment`` ->
    ``Deployment``), '' for a custom resource's (``karpenter.sh``) or a type that is not Kubernetes'."""
    if not type_.startswith("kubernetes:") or type_.count(":") < 2:
        return ""
    _, group_version, kind = type_.split(":", 2)
    group = group_version.rsplit("/", 1)[0] if "/" in group_version else ""
    return "" if _CUSTOM_GROUP.search(group) and not group.endswith(".k8s.io") else kind


def force_new_paths(type_: str) -> tuple[str, ...]:
    """The property paths a change of which replaces a resource of ``type_``."""
    if type_ in AWS_FORCE_NEW:
        return AWS_FORCE_NEW[type_]
    if type_.startswith("kubernetes:"):
        kind = builtin_kind(type_)
        return K8S_FORCE_NEW_ALL + K8S_FORCE_NEW.get(kind, ()) if kind else K8S_FORCE_NEW_ALL
    return ()


_SEGMENT = re.compile(r"\[[^\]]*\]|[^.\[]+")


def _segments(path: str) -> list[str]:
    """A property path's steps: ``spec.containers[0]["a.b"]`` -> ``spec``, ``containers``, ``[0]``, ``["a.b"]``."""
    return _SEGMENT.findall(path)


def related(path: str, rule: str) -> bool:
    """``path`` is ``rule``, lies under it, or contains it (a rule's ``[*]`` matches any list index)."""
    if path == rule:
        return True
    a, b = _segments(path), _segments(rule)
    return all(x == y or (y == "[*]" and x.startswith("[")) for x, y in zip(a, b))


def removed_forcing(type_: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The properties of ``type_`` whose removal replaces it, present in ``old`` and gone from ``new``."""
    return [
        key
        for key in AWS_FORCE_NEW_IF_REMOVED.get(type_, ())
        if old.get(key) not in (None, [], {}) and new.get(key) in (None, [], {})
    ]


def replacing(type_: str, changed: Iterable[str], replace_on_changes: Iterable[str] = ()) -> list[str]:
    """The changed paths that force replacement (the provider's rules and the resource's ``replaceOnChanges``)."""
    rules = tuple(force_new_paths(type_)) + tuple(replace_on_changes)
    return [p for p in changed if any(related(p, r) or r == "*" for r in rules)]
