"""The offline cloud: answers the look-ups (invokes) a program makes from the AMI catalog, and
what a provider would return for a new resource at preview (its inputs, and unknowns for the rest)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
from typing import Any, Mapping, Optional

import grpc
import pulumi

from .. import clock
from ..facts.amifacts import deprecated
from ..facts.upstream import dns_suffix, eks_calendar, minor_number, partition_of
from .catalog import OFFLINE_ACCOUNT, Catalog, CatalogError, get_ami_result, instant


OFFLINE_ADDON_VERSIONS: dict[str, dict[str, str]] = {
    addon: {
        f"1.{minor}": f"{base}.{minor - 28}-eksbuild.offline"
        for minor in (minor_number(version) for version in eks_calendar())
    }
    for addon, base in (
        ("coredns", "v1.12"),
        ("eks-pod-identity-agent", "v1.3"),
        ("metrics-server", "v0.8"),
        ("kube-proxy", "v1"),
        ("vpc-cni", "v1.20"),
    )
}
"""The offline stand-in for EKS's add-on versions: one per add-on and Kubernetes minor, marked
``-eksbuild.offline`` so nobody mistakes it for a build AWS publishes; for every minor EKS lists (``eks_calendar``)."""


# Each section of the catalog, in the form a look-up's error shows it (every field: docs/offline.md).
AMIS_FORM = (
    "amis: [{id: ami-0123456789abcdef0, name: ..., architecture: x86_64, root_device_name: /dev/xvda, "
    'root_snapshot_gib: 20, creation_date: "2026-01-01T00:00:00.000Z", owner_id: "111122223333"}]'
)
SUBNETS_FORM = "subnets: {subnet-0123456789abcdef0: us-east-1a}"
SSM_FORM = "ssm_parameters: {/aws/service/eks/optimized-ami/...: ami-0123456789abcdef0}"
RESERVATIONS_FORM = (
    "reservations: {cr-0123456789abcdef0: {instance_type: p5.48xlarge, availability_zone: us-east-1a, "
    "instance_count: 2}}"
)


def catalog_hint(form: str) -> str:
    """What a look-up the catalog cannot answer says: where the answer goes, in the catalog's format."""
    return f"give a catalog that has it with --amis FILE, YAML of the form `{form}`, described in docs/offline.md"


def checked_state(type_: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A new resource's state as its provider returns it: its inputs, with an IAM policy document given as an
    object as the JSON text pulumi-aws keeps (its ``Check`` encodes the document, Go-style: keys sorted, no
    spaces, as pulumi-eks's recorded runs show), so the program reads text where the resource's class says
    text (``assume_role_policy``, ``policy``)."""
    if not type_.startswith("aws:"):
        return dict(inputs)
    return {k: _policy_text(v) for k, v in inputs.items()}


def _policy_text(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("Statement"), (list, dict)):
        try:
            return json.dumps(value, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):  # holds an unknown or an output: left as it is
            return value
    if isinstance(value, list):
        return [_policy_text(v) for v in value]
    return value


class ProviderError(grpc.RpcError):  # type: ignore[misc]  # grpc has no type information here: RpcError is Any
    """A look-up failure as the engine reports one: a gRPC error whose details are the message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self._message = message

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._message


class OfflineMocks(pulumi.runtime.Mocks):
    """Answers the look-ups a rack program makes; anything else is refused by name.

    In preview (the default, as ``pulumi preview``) a resource being created has no id and no outputs
    beyond its inputs: the provider echoes the inputs and computes the rest at apply, so ``id`` and
    every computed output (an ARN, a launch template's ``latestVersion``) are unknown, as in a real
    preview. What the engine cannot
    render it says in ``warnings`` (each also printed to stderr as ``warning: ...``).
    """

    def __init__(self, catalog: Catalog, config: Mapping[str, str], preview: bool = True) -> None:
        self.catalog = catalog
        self.config = dict(config)
        self.region = str(config.get("aws:region") or "us-east-1")
        self.partition = partition_of(self.region)
        self.preview = preview
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        if message in self.warnings:  # said once a run
            return
        self.warnings.append(message)
        sys.stderr.write(f"warning: {message}\n")

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[Optional[str], dict[str, Any]]:
        if args.resource_id:  # a read (`Resource.get`) of something that already exists
            return args.resource_id, self._read(args.typ, args.resource_id)
        if not args.custom:
            # A component's outputs are what it registers, never its inputs echoed back: a remote
            # component (eks.ManagedNodeGroup, helm.v4.Chart) registers its children, its outputs unknown.
            return f"{args.name}-id", {}
        state = checked_state(args.typ, args.inputs)
        if self.preview:
            return "", state  # no id yet, outputs beyond the inputs unknown
        return f"{args.name}-id", state

    def _read(self, token: str, resource_id: str) -> dict[str, Any]:
        if token == "aws:eks/cluster:Cluster":
            cluster = self._cluster(resource_id)  # the resource's state: one certificate authority, one access config
            cluster["certificateAuthority"] = cluster.pop("certificateAuthorities")[0]
            cluster["accessConfig"] = cluster.pop("accessConfigs")[0]
            return cluster
        if token == "aws:iam/role:Role":
            return {
                "id": resource_id,
                "name": resource_id,
                "arn": f"arn:{self.partition}:iam::{OFFLINE_ACCOUNT}:role/{resource_id}",
            }
        if token == "aws:ec2/capacityReservation:CapacityReservation":
            return self._capacity_reservation(resource_id)
        raise NotImplementedError(f"the offline engine cannot read an existing {token}")

    def _capacity_reservation(self, reservation_id: str) -> dict[str, Any]:
        """``aws.ec2.CapacityReservation.get``: the provider's Read, EC2 ``DescribeCapacityReservations`` by id (an ODCR
        or a Capacity Block). A reservation the catalog does not list, or one that has ended (EC2: ``expired``, which
        the Read takes for not found), is not found, and the preview fails as a real one does."""
        found = self.catalog.reservations.get(reservation_id)
        why = f"has no reservations.{reservation_id}"
        if found is not None and found.end is not None and found.end <= clock.now():
            why = (
                f"lists reservations.{reservation_id} as ended on {found.end.isoformat().replace('+00:00', 'Z')}: "
                "EC2 expired it"
            )
            found = None
        if found is None:
            raise ProviderError(
                f"reading EC2 Capacity Reservation ({reservation_id}): couldn't find resource (the offline "
                f"catalog ({self.catalog.source}) {why}; {catalog_hint(RESERVATIONS_FORM)})"
            )
        state: dict[str, Any] = {
            "id": reservation_id,
            "instanceType": found.instance_type,
            "availabilityZone": found.zone,
            "instanceCount": found.count,
            "instancePlatform": "Linux/UNIX",
            "tenancy": "default",
            "endDateType": "unlimited" if found.end is None else "limited",
            "ownerId": OFFLINE_ACCOUNT,
            "arn": f"arn:{self.partition}:ec2:{self.region}:{OFFLINE_ACCOUNT}:capacity-reservation/{reservation_id}",
        }
        if found.end is not None:
            state["endDate"] = found.end.isoformat().replace("+00:00", "Z")
        return state

    def _cluster(self, name: str) -> dict[str, Any]:
        """An existing EKS cluster as the offline account has it (``getCluster`` shape): the catalog's entry,
        or the defaults (``Catalog.cluster``)."""
        known = self.catalog.cluster(name)
        return {
            "id": name,
            "name": name,
            "arn": f"arn:{self.partition}:eks:{self.region}:{OFFLINE_ACCOUNT}:cluster/{name}",
            "endpoint": f"https://{name}.eks.offline.invalid",
            "certificateAuthorities": [{"data": base64.b64encode(b"offline").decode()}],
            "version": known.version,
            "status": "ACTIVE",
            "roleArn": f"arn:{self.partition}:iam::{OFFLINE_ACCOUNT}:role/{name}-cluster-role",
            "accessConfigs": [
                {"authenticationMode": known.authentication_mode, "bootstrapClusterCreatorAdminPermissions": False}
            ],
            "identities": [{"oidcs": [{"issuer": self._issuer(name)}]}],
            "kubernetesNetworkConfig": {"ipFamily": "ipv4", "serviceIpv4Cidr": "172.20.0.0/16"},
            "vpcConfig": {
                "vpcId": "vpc-offline",
                "subnetIds": ["subnet-offline-a", "subnet-offline-b", "subnet-offline-c"],
                "clusterSecurityGroupId": "sg-offline-cluster",
            },
        }

    def _issuer(self, name: str) -> str:
        """The cluster's OIDC issuer: the catalog's, else one of EKS's shape derived from the name."""
        given = self.catalog.cluster(name).oidc_issuer
        digest = hashlib.sha256(name.encode()).hexdigest()[:32].upper()
        return given or f"https://oidc.eks.{self.region}.{dns_suffix(self.partition)}/id/{digest}"

    def _get_node_groups(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``aws.eks.get_node_groups``: EKS ``ListNodegroups`` of one cluster."""
        name = str(args.get("clusterName") or "")
        return {
            "id": name,
            "clusterName": name,
            "region": self.region,
            "names": sorted(self.catalog.cluster(name).node_groups),
        }

    def _get_node_group(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``aws.eks.get_node_group``: EKS ``DescribeNodegroup``; a group the catalog does not list is not found."""
        cluster, group = str(args.get("clusterName") or ""), str(args.get("nodeGroupName") or "")
        found = self.catalog.cluster(cluster).node_groups.get(group)
        if found is None:
            raise ProviderError(
                f"reading EKS Node Group ({cluster}:{group}): ResourceNotFoundException: No node group "
                f"found for name: {group} (the offline catalog ({self.catalog.source}) lists it under "
                f"clusters.{cluster}.node_groups)"
            )
        return {
            "id": f"{cluster}:{group}",
            "clusterName": cluster,
            "nodeGroupName": group,
            "status": "ACTIVE",
            "region": self.region,
            "scalingConfigs": [
                {"desiredSize": found.desired_size, "minSize": found.min_size, "maxSize": found.max_size}
            ],
        }

    def _get_oidc_provider(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``aws.iam.get_open_id_connect_provider(url=...)``: IAM's OIDC provider for an EKS issuer. The
        account has one for every cluster's issuer but those the catalog marks ``oidc_provider: false``."""
        url = str(args.get("url") or "").removeprefix("https://")
        missing = {
            self._issuer(n).removeprefix("https://") for n, c in self.catalog.clusters.items() if not c.oidc_provider
        }
        if not url or url in missing or not url.startswith(f"oidc.eks.{self.region}."):
            raise ProviderError(
                f"reading IAM OIDC Provider ({url}): couldn't find resource (the offline catalog "
                f"({self.catalog.source}) marks the cluster oidc_provider: false, or the issuer is "
                f"not one of {self.region})"
            )
        arn = f"arn:{self.partition}:iam::{OFFLINE_ACCOUNT}:oidc-provider/{url}"
        return {
            "id": arn,
            "arn": arn,
            "url": url,
            "clientIdLists": ["sts.amazonaws.com"],
            "thumbprintLists": [],
            "tags": {},
        }

    # the SDK's MockMonitor.Invoke takes the outputs alone as well as the declared (outputs, failures) pair
    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:  # type: ignore[override]
        token = args.token
        if token == "aws:ec2/getAmi:getAmi":
            return self._get_ami(args.args)
        if token == "aws:ssm/getParameter:getParameter":
            return self._get_parameter(args.args)
        if token == "aws:ec2/getSubnet:getSubnet":
            return self._get_subnet(args.args)
        if token == "kubernetes:yaml:decode":
            from . import k8s_yaml  # the manifest reader: only for a program that decodes YAML

            return k8s_yaml.decode(args.args)
        if token == "aws:eks/getCluster:getCluster":
            return self._cluster(args.args["name"])
        if token == "aws:eks/getNodeGroups:getNodeGroups":
            return self._get_node_groups(args.args)
        if token == "aws:eks/getNodeGroup:getNodeGroup":
            return self._get_node_group(args.args)
        if token == "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider":
            return self._get_oidc_provider(args.args)
        if token == "aws:ebs/getEncryptionByDefault:getEncryptionByDefault":
            return {"id": self.region, "enabled": self.catalog.ebs_encryption_by_default}
        if token == "aws:index/getRegion:getRegion":
            return {"id": self.region, "name": self.region, "region": self.region}
        if token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {
                "id": OFFLINE_ACCOUNT,
                "accountId": OFFLINE_ACCOUNT,
                "arn": f"arn:{self.partition}:iam::{OFFLINE_ACCOUNT}:root",
                "userId": "offline",
            }
        if token == "aws:index/getPartition:getPartition":
            partition = self.partition
            suffix = dns_suffix(partition)
            return {
                "id": partition,
                "partition": partition,
                "dnsSuffix": suffix,
                "reverseDnsPrefix": ".".join(reversed(suffix.split("."))),
            }
        if token == "aws:eks/getAddonVersion:getAddonVersion":
            return self._get_addon_version(args.args)
        raise NotImplementedError(f"the offline engine cannot answer the look-up {token}")

    def _get_addon_version(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``aws.eks.get_addon_version``: EKS ``DescribeAddonVersions`` for one add-on and Kubernetes
        version. Offline, the answer is a stand-in (``OFFLINE_ADDON_VERSIONS``), not what AWS publishes:
        it has the shape of an EKS add-on version and changes with the Kubernetes version, as AWS's does."""
        name = str(args.get("addonName") or "")
        kubernetes = str(args.get("kubernetesVersion") or "")
        builds = OFFLINE_ADDON_VERSIONS.get(name)
        version = builds and builds.get(kubernetes)
        if not version:
            raise ProviderError(
                f"reading EKS Add-On version info ({name}, {kubernetes}): empty result (the offline "
                f"engine knows versions of {', '.join(sorted(OFFLINE_ADDON_VERSIONS))} for Kubernetes "
                f"{', '.join(sorted({v for b in OFFLINE_ADDON_VERSIONS.values() for v in b}))})"
            )
        return {
            "id": name,
            "addonName": name,
            "kubernetesVersion": kubernetes,
            "mostRecent": bool(args.get("mostRecent")),
            "region": self.region,
            "version": version,
        }

    def _get_ami(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``aws.ec2.get_ami`` as the AWS provider answers it: EC2 ``DescribeImages`` with the filters and
        owners given (deprecated images only with ``include_deprecated`` or by id), then one image:
        the only match, or the newest with ``most_recent``."""
        filters = list(args.get("filters") or [])
        owners = [str(o) for o in args.get("owners") or []]
        try:
            found = self.catalog.find(filters, owners)
        except CatalogError as exc:
            raise NotImplementedError(str(exc)) from None
        by_id = any(f.get("name") == "image-id" for f in filters)
        if not args.get("includeDeprecated") and not by_id:
            now = clock.now()
            found = [ami for ami in found if not deprecated(ami, now)]
        if args.get("nameRegex"):
            pattern = re.compile(str(args["nameRegex"]))
            found = [ami for ami in found if pattern.search(ami.name)]
        if not found:
            # what the AWS provider says when EC2 DescribeImages finds nothing, and where the offline account's images
            # come from
            ids = [v for f in filters if f.get("name") == "image-id" for v in f.get("values") or []]
            raise ProviderError(
                "Your query returned no results. Please change your search criteria and try again. "
                f"(offline: the AMI catalog {self.catalog.source} has no "
                + (f"image {', '.join(map(str, ids))}" if ids else "image matching these filters")
                + f"; {catalog_hint(AMIS_FORM)})"
            )
        if len(found) > 1 and not args.get("mostRecent"):
            raise ProviderError(
                f"Your query returned more than one result ({len(found)} images in the offline AMI "
                "catalog). Please try a more specific search criteria, or set `most_recent` to true."
            )
        return get_ami_result(max(found, key=lambda ami: instant(ami.creation_date)))

    def _get_subnet(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``aws.ec2.get_subnet(id=...)``: EC2 ``DescribeSubnets`` by id, in the stack's region."""
        if set(args) - {"id"} or not isinstance(args.get("id"), str):
            raise NotImplementedError(f"the offline engine looks subnets up by id only (got {sorted(args)})")
        subnet = args["id"]
        zone = self.catalog.zone_of(subnet, self.region)
        if zone is None:
            # what the AWS provider says when DescribeSubnets finds nothing
            raise ProviderError(
                f"no matching EC2 Subnet found (the offline catalog ({self.catalog.source}) has no "
                f"subnet {subnet} in {self.region}; {catalog_hint(SUBNETS_FORM)})"
            )
        return {
            "id": subnet,
            "availabilityZone": zone,
            "state": "available",
            "arn": f"arn:{self.partition}:ec2:{self.region}:{OFFLINE_ACCOUNT}:subnet/{subnet}",
            "ownerId": OFFLINE_ACCOUNT,
        }

    def _get_parameter(self, args: Mapping[str, Any]) -> dict[str, Any]:
        name = str(args.get("name") or "")
        value = self.catalog.parameter(name)
        if value is None:
            raise ProviderError(
                f"reading SSM Parameter ({name}): ParameterNotFound: the offline AMI catalog "
                f"({self.catalog.source}) has no such parameter ({catalog_hint(SSM_FORM)})"
            )
        return {
            "id": name,
            "name": name,
            "arn": f"arn:{self.partition}:ssm:{self.region}:{OFFLINE_ACCOUNT}:parameter/{name.lstrip('/')}",
            "type": "String",
            "value": value,
            "insecureValue": value,
            "version": 1,
            "withDecryption": True,
        }
