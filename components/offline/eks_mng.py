"""pulumi-eks 4.x ``ManagedNodeGroup``, expanded offline into the children its provider registers.

What pulumi-eks does, read from its source (``nodejs/eks/nodes/nodegroup.ts`` ``createManagedNodeGroup``
and ``createMNGCustomLaunchTemplate``, ``nodejs/eks/nodes/userdata.ts``, ``nodejs/eks/nodes/ami.ts``;
pulumi/pulumi-eks at 7bf0c1b1, v4.3.0 plus dependency bumps, whose argument names match the
Python SDK 4.4.0; ``MIRRORED`` says which releases this covers, and a run with another installed
pulumi-eks warns once that its children may differ from what that release's provider registers):

- The children, parented to the component: a launch template ``<name>-launchTemplate`` when any of
  ``bootstrapExtraArgs``, ``kubeletExtraArgs``, ``bottlerocketSettings``, ``nodeadmExtraOptions``,
  ``enableIMDSv2``, ``userData``, ``amiId``, ``enableEfaSupport`` is given, and the
  ``aws.eks.NodeGroup`` ``<name>``. No role, no access entry, no tags on the launch template.
- The launch template holds: user data (when custom user data is asked for, ``userData`` or
  ``amiId`` is given), base64-encoded: the caller's own text, or what the OS needs (AL2023: a MIME
  document of nodeadm ``NodeConfig`` parts, the cluster's name, endpoint, CA and service CIDR, then
  the kubelet flags for labels and taints, then ``nodeadmExtraOptions``; AL2: ``bootstrap.sh``; Bottlerocket:
  TOML settings); the image (``amiId``, or the EKS-recommended one from SSM) whenever it holds user
  data; one block device mapping of ``diskSize`` on ``/dev/xvda`` (``/dev/xvdb`` for Bottlerocket) when
  ``diskSize`` is given, and nothing else in it (no ``encrypted``); metadata options
  (``httpTokens`` required/optional, hop limit 2) when ``enableIMDSv2`` is given.
- The node group takes the caller's arguments (those ``aws.eks.NodeGroup`` has), the cluster's name,
  the role's ARN, scaling defaults (desired 2, min 1, max 2), the subnets (its own, else the
  cluster's), the launch template's id and latest version (or the caller's ``launchTemplate``). It
  defaults ``version`` to the cluster's when no launch template is given; with a built launch
  template ``diskSize`` moves into it; with custom user data or an ``amiId``, ``version``,
  ``releaseVersion`` and ``amiType`` are dropped; otherwise an ``operatingSystem`` without ``amiType``
  picks the AMI type from the OS, ``gpu`` and the instance types' architecture.
- The OS is ``operatingSystem``, else the AMI type's, else AL2023 (``DEFAULT_OS``).
- The arguments it refuses, with its own words.

The user data is the same document pulumi-eks renders (the same parts, keys, order and values);
its YAML and TOML are written by Python's serializers, so the text may differ from js-yaml's or
@iarna/toml's in layout only. EFA (``enableEfaSupport``) needs instance-type and subnet look-ups and is
refused offline, by name.
"""

from __future__ import annotations

import base64
import importlib.metadata
import ipaddress
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import yaml

from .. import contract
from ..facts import osfamily
from .remote import (
    UNKNOWN,
    Child,
    Context,
    ExpansionError,
    Registration,
    child_urn,
    derived,
    known,
    lookup,
    reference,
    reveal,
    without_none,
)

MIRRORED = ((4, 3), (4, 4))
"""The pulumi-eks minors (first, last) whose ``ManagedNodeGroup`` this expansion follows."""


def installed_version() -> Optional[str]:
    try:
        return importlib.metadata.version("pulumi_eks")
    except importlib.metadata.PackageNotFoundError:
        return None


def version_warning(version: Optional[str]) -> Optional[str]:
    """What a user should know when ``version`` of pulumi-eks is not one this expansion mirrors."""
    minor = re.match(r"(\d+)\.(\d+)", version or "")
    if minor and MIRRORED[0] <= (int(minor[1]), int(minor[2])) <= MIRRORED[1]:
        return None
    first, last = (".".join(map(str, v)) for v in MIRRORED)
    return (
        f"pulumi-eks {version or '(not installed)'}: the offline preview expands ManagedNodeGroup as "
        f"pulumi-eks {first}-{last} does; this release's provider may register other children or values"
    )


CLUSTER_TYPE = "eks:index:Cluster"
AWS_CLUSTER_TYPE = "aws:eks/cluster:Cluster"

CUSTOM_USER_DATA_ARGS = ("kubeletExtraArgs", "bootstrapExtraArgs", "bottlerocketSettings", "nodeadmExtraOptions")
CUSTOM_LAUNCH_TEMPLATE_ARGS = (*CUSTOM_USER_DATA_ARGS, "enableIMDSv2", "userData", "amiId", "enableEfaSupport")
NODE_GROUP_INPUTS = (
    "amiType",
    "capacityType",
    "clusterName",
    "diskSize",
    "forceUpdateVersion",
    "instanceTypes",
    "labels",
    "launchTemplate",
    "nodeGroupName",
    "nodeGroupNamePrefix",
    "nodeRepairConfig",
    "nodeRoleArn",
    "region",
    "releaseVersion",
    "remoteAccess",
    "scalingConfig",
    "subnetIds",
    "tags",
    "taints",
    "updateConfig",
    "version",
)
"""The inputs of ``aws.eks.NodeGroup`` (@pulumi/aws 7.x): the generated constructor keeps only these."""
ACCESS_ENTRY_MODES = ("API", "API_AND_CONFIG_MAP")
DEFAULT_OS = osfamily.AL2023.family
CORE_DATA_FIELDS = frozenset(
    {
        "cluster",
        "clusterIamRole",
        "endpoint",
        "instanceRoles",
        "nodeGroupOptions",
        "provider",
        "subnetIds",
        "vpcId",
        "awsProvider",
        "clusterSecurityGroup",
        "eksNodeAccess",
        "encryptionConfig",
        "fargateProfile",
        "kubeconfig",
        "oidcProvider",
        "privateSubnetIds",
        "publicSubnetIds",
        "storageClasses",
        "tags",
        "vpcCni",
        "accessEntries",
        "nodeSecurityGroupTags",
    }
)
"""pulumi-eks's ``CoreData`` fields, by their schema names (schema.json ``eks:index:CoreData``)."""
_INSTANCE_TYPE_RE = re.compile(r"([a-z]+)([0-9]+)([a-z])?-?([a-z]+)?\.([a-zA-Z0-9-]+)")
"""pulumi-eks's reading of an instance type: a ``g`` right after the generation digits is Graviton."""


@dataclass(frozen=True)
class AmiType:
    os: str
    gpu: bool
    arch: str
    ssm: str
    """The SSM parameter of the EKS-recommended image, ``{v}`` the Kubernetes version."""
    aliases: tuple[str, ...] = ()


_AL2, _AL2023, _BOTTLEROCKET = osfamily.AL2.family, osfamily.AL2023.family, osfamily.BOTTLEROCKET.family
_EKS = "/aws/service/eks/optimized-ami/{v}/"
_BR = "/aws/service/bottlerocket/aws-k8s-{v}"
AMI_TYPES: dict[str, AmiType] = {
    "AL2_x86_64": AmiType(_AL2, False, "x86_64", _EKS + "amazon-linux-2/recommended/image_id", ("amazon-linux-2",)),
    "AL2_x86_64_GPU": AmiType(
        _AL2, True, "x86_64", _EKS + "amazon-linux-2-gpu/recommended/image_id", ("amazon-linux-2-gpu",)
    ),
    "AL2_ARM_64": AmiType(
        _AL2, False, "arm64", _EKS + "amazon-linux-2-arm64/recommended/image_id", ("amazon-linux-2-arm",)
    ),
    "AL2023_x86_64_STANDARD": AmiType(
        _AL2023,
        False,
        "x86_64",
        _EKS + "amazon-linux-2023/x86_64/standard/recommended/image_id",
        ("amazon-linux-2023/x86_64/standard",),
    ),
    "AL2023_ARM_64_STANDARD": AmiType(
        _AL2023,
        False,
        "arm64",
        _EKS + "amazon-linux-2023/arm64/standard/recommended/image_id",
        ("amazon-linux-2023/arm64/standard",),
    ),
    "AL2023_x86_64_NVIDIA": AmiType(
        _AL2023,
        True,
        "x86_64",
        _EKS + "amazon-linux-2023/x86_64/nvidia/recommended/image_id",
        ("amazon-linux-2023/x86_64/nvidia",),
    ),
    "BOTTLEROCKET_ARM_64": AmiType(_BOTTLEROCKET, False, "arm64", _BR + "/arm64/latest/image_id"),
    "BOTTLEROCKET_x86_64": AmiType(_BOTTLEROCKET, False, "x86_64", _BR + "/x86_64/latest/image_id"),
    "BOTTLEROCKET_ARM_64_NVIDIA": AmiType(_BOTTLEROCKET, True, "arm64", _BR + "-nvidia/arm64/latest/image_id"),
    "BOTTLEROCKET_x86_64_NVIDIA": AmiType(_BOTTLEROCKET, True, "x86_64", _BR + "-nvidia/x86_64/latest/image_id"),
}
"""pulumi-eks's AMI types (``nodejs/eks/nodes/ami.ts``): Windows is not among them."""


def _set(value: Any) -> bool:
    """``value !== undefined``: given at all."""
    return value is not None


def _truthy(value: Any) -> bool:
    """JavaScript truthiness of an input (an unknown input is an Output object: truthy)."""
    return value == UNKNOWN or bool(reveal(value))


def _ami_type(name: str) -> Optional[str]:
    for key, meta in AMI_TYPES.items():
        if name == key or name in meta.aliases:
            return key
    return None


class ManagedNodeGroup:
    """One component's expansion (see the module docstring)."""

    def __init__(self, reg: Registration, ctx: Context) -> None:
        self.reg, self.ctx = reg, ctx
        self.args = dict(reg.wire)
        self.subject = f"{contract.MANAGED_NODE_GROUP} '{reg.name}'"
        self.warned = False

    def fail(self, reason: str) -> ExpansionError:
        return ExpansionError(f"{self.subject}: {reason}")

    # ---- the cluster (CoreData) ----

    def core(self) -> Any:
        """The ``CoreData`` pulumi-eks reads: the component's ``cluster`` argument, or a Cluster's ``core``.

        pulumi-eks reads CoreData's fields by their schema names (``subnetIds``, ``instanceRoles``); a
        Python mapping the SDK sent untranslated (``subnet_ids``) is not read, and a warning says so."""
        cluster = self.args.get("cluster")
        urn = reference(cluster)
        if urn is not None:
            registered = self.ctx.registrations.get(urn)
            if registered is not None and registered.type == CLUSTER_TYPE:
                return UNKNOWN  # a Cluster component's core: not known until its children exist
            raise self.fail(
                f"cluster is a {registered.type if registered else 'resource'}, not a pulumi-eks Cluster "
                "or its CoreData (pulumi-eks reads core.cluster)"
            )
        if cluster == UNKNOWN:
            return UNKNOWN
        if not isinstance(reveal(cluster), dict) or reference(lookup(cluster, "cluster")) is None:
            raise self.fail(
                "cluster must be a pulumi-eks Cluster or a CoreData whose cluster is the aws.eks.Cluster "
                "(pulumi-eks reads core.cluster's name, version, endpoint and certificate authority)"
            )
        unread = sorted(k for k in reveal(cluster) if _camel(k) != k and _camel(k) in CORE_DATA_FIELDS)
        if unread and not self.warned:
            self.warned = True
            self.ctx.warn(
                f"{self.subject}: its cluster's CoreData has {', '.join(unread)}, which pulumi-eks does not "
                f"read (it reads {', '.join(_camel(k) for k in unread)}): they are ignored"
            )
        return cluster

    def cluster(self, *path: str) -> Any:
        """A field of ``core.cluster`` (the ``aws.eks.Cluster``): unknown when the cluster is not known yet."""
        core = self.core()
        if core == UNKNOWN:
            return UNKNOWN
        state = self.ctx.states.get(reference(lookup(core, "cluster")) or "")
        value = lookup(state, *path) if state is not None else UNKNOWN
        return UNKNOWN if value is None else value  # an output a preview did not compute is unknown

    def core_field(self, key: str) -> Any:
        core = self.core()
        return UNKNOWN if core == UNKNOWN else lookup(core, key)

    # ---- arguments ----

    def validate(self) -> None:
        a = self.args
        problems = []
        if _set(a.get("nodeRole")) and _set(a.get("nodeRoleArn")):
            problems.append("You cannot specify both nodeRole and nodeRoleArn when creating a managed node group.")
        for key in ("gpu", "amiType"):
            if _truthy(a.get("amiId")) and _truthy(a.get(key)):
                problems.append(f"You cannot specify both amiId and {key} when creating a managed node group.")
        if not _truthy(a.get("nodeRoleArn")) and not _truthy(a.get("nodeRole")):
            problems.append("An IAM role, or role ARN must be provided to create a managed node group")
        if a.get("enableEfaSupport") is True or a.get("enableEfaSupport") == UNKNOWN:
            raise self.fail(
                "the offline engine cannot expand enable_efa_support (pulumi-eks looks up the instance "
                "types, their offerings and the subnets of the placement group's zone)"
            )
        if _truthy(a.get("launchTemplate")) and self.builds_launch_template():
            problems.append(
                "If you provide a custom launch template, you cannot provide any of "
                f"{', '.join(CUSTOM_LAUNCH_TEMPLATE_ARGS)}. Please include these in the launch template "
                "that you are providing."
            )
        if self.custom_user_data() and _truthy(a.get("userData")):
            problems.append(
                f"If you provide custom userData, you cannot provide any of {', '.join(CUSTOM_USER_DATA_ARGS)}. "
                "Please include these in the userData that you are providing."
            )
        if problems:
            raise self.fail("The input properties for the managed node group are invalid: " + " ".join(problems))

    def builds_launch_template(self) -> bool:
        return any(_set(self.args.get(key)) for key in CUSTOM_LAUNCH_TEMPLATE_ARGS)

    def custom_user_data(self) -> bool:
        return any(_set(self.args.get(key)) for key in CUSTOM_USER_DATA_ARGS)

    def operating_system(self) -> Any:
        """``getOperatingSystem``: the OS given, else the AMI type's, else AL2023; they must agree."""
        ami_type, os_name = self.args.get("amiType"), self.args.get("operatingSystem")
        if ami_type == UNKNOWN or os_name == UNKNOWN:
            return UNKNOWN
        ami_type, os_name = reveal(ami_type), reveal(os_name)
        if not ami_type:
            return os_name or DEFAULT_OS
        resolved = _ami_type(ami_type)
        if resolved is None:
            raise self.fail(f"Cannot determine OS of unknown AMI type: {ami_type}")
        detected = AMI_TYPES[resolved].os
        if os_name and os_name != detected:
            raise self.fail(
                f"Operating system '{os_name}' does not match the detected operating system '{detected}' "
                f"of AMI type '{ami_type}'."
            )
        return detected

    def architecture(self) -> Any:
        types = self.args.get("instanceTypes")
        if not known(types):
            return UNKNOWN
        graviton = x86 = False
        for instance_type in reveal(types) or []:
            match = _INSTANCE_TYPE_RE.search(str(instance_type))
            if match is None:
                raise self.fail(f"instanceTypes: Invalid EC2 instance type: {instance_type}")
            graviton, x86 = (True, x86) if match.group(3) == "g" else (graviton, True)
            if graviton and x86:
                raise self.fail(
                    "instanceTypes: Cannot determine architecture of instance types. The provided "
                    "instance types do not share a common architecture"
                )
        return "arm64" if graviton else "x86_64"

    def determined_ami_type(self, os_name: Any) -> Any:
        """``determineAmiType``: the AMI type for the OS, ``gpu`` and the instance types' architecture."""
        gpu, arch = self.args.get("gpu"), self.architecture()
        if os_name == UNKNOWN or gpu == UNKNOWN or arch == UNKNOWN:
            return UNKNOWN
        wanted = (os_name, bool(reveal(gpu)), arch)
        for name, meta in AMI_TYPES.items():
            if (meta.os, meta.gpu, meta.arch) == wanted:
                return name
        raise self.fail(
            f"No AMI type found for OS: {os_name}, GPU support: {str(wanted[1]).lower()}, architecture: {arch}"
        )

    # ---- the children ----

    def expand(self) -> list[Child]:
        self.validate()
        a = self.args
        version = a.get("version")
        if not _truthy(version) and not _truthy(a.get("launchTemplate")):
            version = self.cluster("version")
        children: list[Child] = []
        template_urn = ""
        if self.builds_launch_template():
            template = self.launch_template(version)
            template_urn = child_urn(self.reg.urn, template.type, template.name)
            children.append(template)
        children.append(self.node_group(version, template_urn))
        return children

    def launch_template(self, version: Any) -> Child:
        a = self.args
        os_name = self.operating_system()
        user_data = None
        if self.custom_user_data() or _set(a.get("userData")) or _set(a.get("amiId")):
            user_data = self.user_data(os_name)
        image = None
        if user_data is not None:
            image = a["amiId"] if _set(a.get("amiId")) else self.recommended_image(os_name, version)
        device = UNKNOWN if os_name == UNKNOWN else (osfamily.by_family(os_name) or osfamily.AL2023).data_device
        disk = a.get("diskSize")
        mappings = [{"deviceName": device, "ebs": {"volumeSize": disk}}] if _truthy(disk) else None
        imds = a.get("enableIMDSv2")
        metadata = None
        if _set(imds):
            metadata = {
                "httpTokens": derived("required" if _truthy(imds) else "optional", imds),
                "httpPutResponseHopLimit": 2,
                "httpEndpoint": "enabled",
            }
        props = without_none(
            {"blockDeviceMappings": mappings, "userData": user_data, "metadataOptions": metadata, "imageId": image}
        )
        deps = self.reg.property_dependencies
        property_dependencies = {
            key: list(deps.get(source, []))
            for key, source in (("imageId", "amiId"), ("blockDeviceMappings", "diskSize"), ("userData", "userData"))
            if key in props and deps.get(source)
        }
        return Child(
            contract.LAUNCH_TEMPLATE,
            f"{self.reg.name}-launchTemplate",
            props,
            provider=self.aws_provider(),
            dependencies=sorted({u for urns in property_dependencies.values() for u in urns}),
            property_dependencies=property_dependencies,
        )

    def recommended_image(self, os_name: Any, version: Any) -> Any:
        """``getRecommendedAMI``: the EKS-recommended image, read from SSM (offline: the catalog)."""
        ami_type = self.args.get("amiType")
        if ami_type == UNKNOWN or version == UNKNOWN:
            return UNKNOWN
        name = _ami_type(reveal(ami_type)) if ami_type else self.determined_ami_type(os_name)
        if name is None:
            raise self.fail(
                f"amiType: Cannot resolve recommended AMI for AMI type: {reveal(ami_type)}. "
                "Please provide the AMI ID and userdata."
            )
        if name == UNKNOWN:
            return UNKNOWN
        parameter = AMI_TYPES[name].ssm.format(v=reveal(version))
        image = self.ctx.catalog.parameter(parameter)
        if image is None:
            raise self.fail(
                f"pulumi-eks reads the recommended image from the SSM parameter {parameter}, which the "
                f"offline AMI catalog ({self.ctx.catalog.source}) does not have (add it under ssm_parameters:)"
            )
        return image

    def user_data(self, os_name: Any) -> Any:
        a = self.args
        given = a.get("userData")
        if _set(given):
            return derived(_b64(str(reveal(given))), given)
        metadata = {
            "name": self.cluster_name(),
            "apiServerEndpoint": self.cluster("endpoint"),
            "certificateAuthority": self.cluster("certificateAuthority", "data"),
            "cidr": self.service_cidr(),
        }
        sources = [
            metadata,
            os_name,
            a.get("labels"),
            a.get("taints"),
            a.get("kubeletExtraArgs"),
            a.get("bootstrapExtraArgs"),
            a.get("bottlerocketSettings"),
            a.get("nodeadmExtraOptions"),
        ]
        if not all(known(s) for s in sources):
            return UNKNOWN
        plain = {k: reveal(v) for k, v in metadata.items()}
        # an operatingSystem no record spells gets Bottlerocket's settings, as the last branch of pulumi-eks's
        family = osfamily.by_family(os_name) or osfamily.BOTTLEROCKET
        write = {
            osfamily.NODEADM: self.nodeadm,
            osfamily.BOOTSTRAP_SH: self.bootstrap_sh,
            osfamily.BOTTLEROCKET_TOML: self.bottlerocket_toml,
        }[family.user_data]
        text = write(plain)
        return derived(_b64(text), *sources)

    def cluster_name(self) -> Any:
        given = self.args.get("clusterName")
        return given if _truthy(given) else self.cluster("name")

    def service_cidr(self) -> Any:
        config = self.cluster("kubernetesNetworkConfig")
        if not known(config):
            return UNKNOWN
        config = reveal(config) or {}
        return config.get("serviceIpv6Cidr") if config.get("ipFamily") == "ipv6" else config.get("serviceIpv4Cidr")

    def taints(self) -> dict[str, dict[str, str]]:
        """The node group's taints as pulumi-eks passes them to the user data: key -> value, kubelet effect."""
        out: dict[str, dict[str, str]] = {}
        for taint in reveal(self.args.get("taints")) or []:
            effect = contract.EKS_EFFECTS.get(str(taint.get("effect")))
            if effect is None:
                raise self.fail(
                    f"taints: Invalid taint effect: {taint.get('effect')}. Must be one of NO_SCHEDULE, "
                    "NO_EXECUTE, PREFER_NO_SCHEDULE."
                )
            out[str(taint.get("key"))] = {"value": taint.get("value") or "", "effect": effect}
        return out

    def kubelet_flags(self) -> list[str]:
        extra = reveal(self.args.get("kubeletExtraArgs"))
        flags = str(extra).split(" ") if extra else []
        labels = reveal(self.args.get("labels")) or {}
        if labels:
            flags.append("--node-labels=" + ",".join(f"{k}={v}" for k, v in labels.items()))
        taints = self.taints()
        if taints:
            flags.append(
                "--register-with-taints="
                + ",".join(
                    f"{k}={t['value']}:{t['effect']}" if t["value"] else f"{k}:{t['effect']}" for k, t in taints.items()
                )
            )
        return flags

    def nodeadm(self, cluster: Mapping[str, Any]) -> str:
        if _set(self.args.get("bottlerocketSettings")):
            raise self.fail("The 'bottlerocketSettings' argument is not supported for nodeadm based user data.")
        if reveal(self.args.get("bootstrapExtraArgs")):
            raise self.fail("The 'bootstrapExtraArgs' argument is not supported for nodeadm based user data.")
        head = {"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig"}
        parts = [("application/node.eks.aws", "---\n" + _yaml({**head, "spec": {"cluster": dict(cluster)}}))]
        flags = self.kubelet_flags()
        if flags:
            parts.append(("application/node.eks.aws", "---\n" + _yaml({**head, "spec": {"kubelet": {"flags": flags}}})))
        for option in reveal(self.args.get("nodeadmExtraOptions")) or []:
            parts.append((str(option.get("contentType")), str(option.get("content"))))
        body = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="BOUNDARY"\n\n'
        body += "".join(f"--BOUNDARY\nContent-Type: {kind}\n\n{content}\n" for kind, content in parts)
        return body + "--BOUNDARY--\n"

    def bootstrap_sh(self, cluster: Mapping[str, Any]) -> str:
        if _set(self.args.get("bottlerocketSettings")):
            raise self.fail("The 'bottlerocketSettings' argument is not supported for Linux based user data.")
        extra = reveal(self.args.get("bootstrapExtraArgs"))
        tail = f" {extra}" if extra else ""
        flags = self.kubelet_flags()
        if len(flags) == 1:
            tail += f" --kubelet-extra-args {flags[0]}"
        elif flags:
            tail += f" --kubelet-extra-args '{' '.join(flags)}'"
        script = (
            f'#!/bin/bash\n\n/etc/eks/bootstrap.sh --apiserver-endpoint "{cluster["apiServerEndpoint"]}" '
            f'--b64-cluster-ca "{cluster["certificateAuthority"]}" "{cluster["name"]}"{tail}'
        )
        return (
            'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="==MYBOUNDARY=="\n\n'
            '--==MYBOUNDARY==\nContent-Type: text/x-shellscript; charset="us-ascii"\n\n'
            f"{script}\n--==MYBOUNDARY==--"
        )

    def bottlerocket_toml(self, cluster: Mapping[str, Any]) -> str:
        for key, what in (("bootstrapExtraArgs", "bootstrapExtraArgs"), ("kubeletExtraArgs", "kubeletExtraArgs")):
            if reveal(self.args.get(key)):
                raise self.fail(f"The '{what}' argument is not supported with Bottlerocket.")
        kubernetes: dict[str, Any] = {
            "cluster-name": cluster["name"],
            "api-server": cluster["apiServerEndpoint"],
            "cluster-certificate": cluster["certificateAuthority"],
            "cluster-dns-ip": _cluster_dns_ip(str(cluster["cidr"])),
        }
        labels = reveal(self.args.get("labels"))
        if labels:
            kubernetes["node-labels"] = labels
        taints = self.taints()
        if taints:
            kubernetes["node-taints"] = {k: f"{t['value']}:{t['effect']}" for k, t in taints.items()}
        settings = json.loads(json.dumps(reveal(self.args.get("bottlerocketSettings")) or {}))
        if not isinstance(settings.get("settings"), dict):
            settings["settings"] = {}
        root = settings["settings"]
        own = root.get("kubernetes") if isinstance(root.get("kubernetes"), dict) else {}
        root["kubernetes"] = {**kubernetes, **own}
        return _toml(settings)

    def node_group(self, version: Any, template_urn: str) -> Child:
        a = self.args
        props = {key: a[key] for key in NODE_GROUP_INPUTS if key in a}
        props["version"] = version
        if template_urn:
            props.pop("diskSize", None)
        ami_type = a.get("amiType")
        if self.custom_user_data() or _set(a.get("userData")) or _set(a.get("amiId")):
            for key in ("version", "releaseVersion", "amiType"):
                props.pop(key, None)
            ami_type = None
        elif not _set(ami_type) and _set(a.get("operatingSystem")):
            ami_type = self.determined_ami_type(self.operating_system())
        props["amiType"] = ami_type
        props["clusterName"] = self.cluster_name()
        props["nodeRoleArn"] = a["nodeRoleArn"] if _truthy(a.get("nodeRoleArn")) else self.role_arn()
        props["scalingConfig"] = self.scaling()
        props["subnetIds"] = self.subnets()
        props["launchTemplate"] = {"id": UNKNOWN, "version": UNKNOWN} if template_urn else a.get("launchTemplate")
        deps = self.reg.property_dependencies
        property_dependencies = {key: list(deps[key]) for key in props if deps.get(key)}
        if template_urn:
            property_dependencies["launchTemplate"] = [template_urn]
        role = deps.get("nodeRole") or ([ref] if (ref := reference(self.args.get("nodeRole"))) else [])
        if role and not deps.get("nodeRoleArn"):  # the ARN comes from the role (a reference carries no dependency)
            property_dependencies["nodeRoleArn"] = list(role)
        access = reference(self.core_field("eksNodeAccess"))
        dependencies = sorted(
            {u for urns in property_dependencies.values() for u in urns} | ({access} if access else set())
        )
        ignore = ["scalingConfig.desiredSize"] if _truthy(a.get("ignoreScalingChanges")) else []
        return Child(
            contract.EKS_NODE_GROUP,
            self.reg.name,
            without_none(props),
            provider=self.aws_provider(),
            dependencies=dependencies,
            property_dependencies=property_dependencies,
            ignore_changes=ignore,
        )

    def role_arn(self) -> Any:
        urn = reference(self.args.get("nodeRole"))
        state = self.ctx.states.get(urn or "")
        arn = lookup(state, "arn") if state is not None else None
        return UNKNOWN if arn is None else arn

    def scaling(self) -> Any:
        given = self.args.get("scalingConfig")
        if given == UNKNOWN:
            return UNKNOWN
        config = given if isinstance(given, dict) else {}
        return {
            "desiredSize": config.get("desiredSize", 2),
            "minSize": config.get("minSize", 1),
            "maxSize": config.get("maxSize", 2),
        }

    def subnets(self) -> Any:
        if _set(self.args.get("subnetIds")):
            return self.args["subnetIds"]
        core = self.core()
        if core == UNKNOWN:
            return UNKNOWN
        for key in ("subnetIds", "privateSubnetIds", "publicSubnetIds"):
            value = lookup(core, key)
            if value is not None:
                return value
        return []

    def aws_provider(self) -> str:
        """Children inherit the component's AWS provider (pulumi-eks passes none of its own)."""
        return self.reg.providers.get("aws", "")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode()


def _yaml(value: Any) -> str:
    text: str = yaml.safe_dump(value, sort_keys=False, default_flow_style=False, width=80)
    return text


def _cluster_dns_ip(cidr: str) -> str:
    """The cluster DNS address: the tenth address of the service CIDR (pulumi-eks ``getClusterDnsIp``)."""
    try:
        return str(ipaddress.ip_network(cidr, strict=False).network_address + 10)
    except ValueError:
        raise ExpansionError(f"cannot compute the cluster DNS address from the service CIDR '{cidr}'") from None


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml(value: Mapping[str, Any]) -> str:
    """TOML for nested tables of text, numbers, booleans and lists, keys sorted (as pulumi-eks sorts them)."""
    lines: list[str] = []

    def key(k: str) -> str:
        return k if _BARE_KEY.fullmatch(k) else json.dumps(k)

    def scalar(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
        if isinstance(v, list):
            return "[" + ", ".join(scalar(x) for x in v) + "]"
        return json.dumps(str(v))

    def table(path: list[str], body: Mapping[str, Any]) -> None:
        plain = [(k, v) for k, v in sorted(body.items()) if not isinstance(v, Mapping)]
        if path and (plain or not any(isinstance(v, Mapping) for v in body.values())):
            lines.append(f"[{'.'.join(key(p) for p in path)}]")
        lines.extend(f"{key(k)} = {scalar(v)}" for k, v in plain)
        if plain:
            lines.append("")
        for k, v in sorted(body.items()):
            if isinstance(v, Mapping):
                table([*path, k], v)

    table([], value)
    return "\n".join(lines).rstrip("\n") + "\n"


def expand(reg: Registration, ctx: Context) -> list[Child]:
    problem = version_warning(installed_version())
    if problem:
        ctx.warn(problem)  # once a run: the engine drops a warning it has given
    return ManagedNodeGroup(reg, ctx).expand()
