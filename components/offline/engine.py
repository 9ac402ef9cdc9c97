"""Run a Pulumi program offline, under the SDK's mocks, and record what it registers."""

from __future__ import annotations

import base64
import contextvars
import json
import runpy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

import grpc
import pulumi
from google.protobuf import json_format, struct_pb2

from ..errors import ConfigError
from . import sdk
from .catalog import Catalog, get_ami_result

STACK_TYPE = "pulumi:pulumi:Stack"
OFFLINE_ACCOUNT = "123456789012"


@dataclass
class Resource:
    """One registration, as the engine sees it."""

    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    properties: struct_pb2.Struct = field(repr=False, default_factory=struct_pb2.Struct)
    """The inputs exactly as sent over the wire: unknowns and secrets keep their markers."""
    provider: str = ""
    dependencies: list[str] = field(default_factory=list)
    protect: bool = False
    delete_before_replace: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    replace_on_changes: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    """Input property -> the URNs its value came from (a node group's ``launchTemplate`` -> the template)."""
    delete_before_replace_defined: bool = False
    additional_secret_outputs: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "inputs": self.inputs,
        }


@dataclass
class ProgramRun:
    project: str
    stack: str
    resources: list[Resource]
    outputs: dict[str, Any]
    reads: list[Resource] = field(default_factory=list)
    """Existing resources the program reads (``Resource.get``): shown, never created or analysed."""
    component_outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """What each component registered with ``register_outputs``, by URN."""


def plain(value: Any) -> Any:
    """Wire values -> JSON: unknowns become ``"<computed>"``, secrets ``{"secret": ...}``."""
    if isinstance(value, dict):
        sig = value.get(sdk.SIG_KEY)
        if sig == sdk.SECRET_SIG:
            return {"secret": plain(value.get("value"))}
        if sig == sdk.RESOURCE_SIG:
            return {"resource": value.get("urn")}
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if value == sdk.UNKNOWN:
        return "<computed>"
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class ProviderError(grpc.RpcError):
    """A look-up failure as the engine reports one: a gRPC error whose details are the message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self._message = message

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._message


class OfflineMocks(pulumi.runtime.Mocks):
    """Answers the look-ups a rack program makes; anything else is refused by name."""

    def __init__(self, catalog: Catalog, config: Mapping[str, str]) -> None:
        self.catalog = catalog
        self.region = str(config.get("aws:region") or "us-east-1")

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[Optional[str], dict]:
        if args.resource_id:  # a read (`Resource.get`) of something that already exists
            return args.resource_id, self._read(args.typ, args.resource_id)
        if not args.custom:
            # A component's outputs are what it registers, never its inputs echoed back: a remote
            # component (eks.ManagedNodeGroup, helm.v4.Chart) stays opaque, its outputs unknown.
            return f"{args.name}-id", {}
        return f"{args.name}-id", dict(args.inputs)

    def _read(self, token: str, resource_id: str) -> dict[str, Any]:
        if token == "aws:eks/cluster:Cluster":
            cluster = self._cluster(resource_id)
            cluster["certificateAuthority"] = cluster.pop("certificateAuthorities")[0]
            return cluster
        if token == "aws:iam/role:Role":
            return {"id": resource_id, "name": resource_id, "arn": f"arn:aws:iam::{OFFLINE_ACCOUNT}:role/{resource_id}"}
        raise NotImplementedError(f"the offline engine cannot read an existing {token}")

    def _cluster(self, name: str) -> dict[str, Any]:
        """An existing EKS cluster as the offline account has it (``getCluster`` shape)."""
        return {
            "id": name,
            "name": name,
            "arn": f"arn:aws:eks:{self.region}:{OFFLINE_ACCOUNT}:cluster/{name}",
            "endpoint": f"https://{name}.eks.offline.invalid",
            "certificateAuthorities": [{"data": base64.b64encode(b"offline").decode()}],
            "version": "1.33",
            "status": "ACTIVE",
            "roleArn": f"arn:aws:iam::{OFFLINE_ACCOUNT}:role/{name}-cluster-role",
            "accessConfig": {"authenticationMode": "API_AND_CONFIG_MAP"},
            "kubernetesNetworkConfig": {"ipFamily": "ipv4", "serviceIpv4Cidr": "172.20.0.0/16"},
            "vpcConfig": {
                "vpcId": "vpc-offline",
                "subnetIds": ["subnet-offline-a", "subnet-offline-b", "subnet-offline-c"],
                "clusterSecurityGroupId": "sg-offline-cluster",
            },
        }

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:  # type: ignore[override]
        token = args.token
        if token == "aws:ec2/getAmi:getAmi":
            return self._get_ami(args.args)
        if token == "aws:eks/getCluster:getCluster":
            return self._cluster(args.args["name"])
        if token == "aws:ebs/getEncryptionByDefault:getEncryptionByDefault":
            return {"id": self.region, "enabled": self.catalog.ebs_encryption_by_default}
        if token == "aws:index/getRegion:getRegion":
            return {"id": self.region, "name": self.region, "region": self.region}
        if token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {"id": OFFLINE_ACCOUNT, "accountId": OFFLINE_ACCOUNT, "arn": f"arn:aws:iam::{OFFLINE_ACCOUNT}:root", "userId": "offline"}
        if token == "aws:index/getPartition:getPartition":
            return {"id": "aws", "partition": "aws", "dnsSuffix": "amazonaws.com"}
        raise NotImplementedError(f"the offline engine cannot answer the look-up {token}")

    def _get_ami(self, args: Mapping[str, Any]) -> dict[str, Any]:
        ids = [v for f in args.get("filters") or [] if f.get("name") == "image-id" for v in f.get("values", [])]
        if len(ids) != 1:
            raise NotImplementedError("the offline engine answers aws:ec2/getAmi by one image-id filter only")
        ami = self.catalog.get(ids[0])
        if ami is None:
            # what the AWS provider says when EC2 DescribeImages finds nothing
            raise ProviderError("Your query returned no results. Please change your search criteria and try again.")
        return get_ami_result(ami)


class RecordingMonitor(sdk.MockMonitor):
    """The SDK's mock monitor, keeping every registration request in order."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.recorded: list[Resource] = []
        self.reads: list[Resource] = []
        self.stack_outputs: dict[str, Any] = {}
        self.component_outputs: dict[str, dict[str, Any]] = {}

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        response = sdk.isolated(lambda: super(RecordingMonitor, self).RegisterResource(request))
        raw = json_format.MessageToDict(request.object)
        self.recorded.append(
            Resource(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent=request.parent,
                custom=bool(request.custom),
                inputs=plain(raw),
                properties=request.object,
                provider=request.provider,
                dependencies=list(request.dependencies),
                protect=bool(request.protect),
                delete_before_replace=bool(request.deleteBeforeReplace),
                ignore_changes=list(request.ignoreChanges),
                replace_on_changes=list(request.replaceOnChanges),
                property_dependencies={k: list(v.urns) for k, v in request.propertyDependencies.items()},
                delete_before_replace_defined=bool(request.deleteBeforeReplaceDefined),
                additional_secret_outputs=list(request.additionalSecretOutputs),
            )
        )
        return response

    def ReadResource(self, request):  # noqa: N802
        response = sdk.isolated(lambda: super(RecordingMonitor, self).ReadResource(request))
        self.reads.append(
            Resource(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent=request.parent,
                custom=True,
                inputs={"id": request.id},
                provider=request.provider,
            )
        )
        return response

    def Invoke(self, request):  # noqa: N802
        return sdk.isolated(lambda: super(RecordingMonitor, self).Invoke(request))

    def RegisterResourceOutputs(self, request):  # noqa: N802
        outputs = plain(json_format.MessageToDict(request.outputs))
        if request.urn.split("::")[2] == STACK_TYPE:
            self.stack_outputs = outputs
        else:
            self.component_outputs[request.urn] = outputs
        return super().RegisterResourceOutputs(request)


def stack_config_values(config: Mapping[str, Any]) -> dict[str, str]:
    """Stack-file values as the CLI hands them to a program: scalars as their JSON text (``50``,
    ``true``), structured values as JSON text. The CLI's encoder is Go's, which writes a whole float
    without ``.0`` (pulumi ``sdk/go/common/resource/config/object.go`` ``MarshalString``)."""
    out: dict[str, str] = {}
    for key, value in config.items():
        if isinstance(value, str):
            out[key] = value
        elif isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
            out[key] = str(int(value))
        else:
            out[key] = json.dumps(value)
    return out


class ProgramExit(Exception):
    """The program called ``sys.exit`` with a failure: the offline CLI exits 2 with this message."""

    def __init__(self, code: Any) -> None:
        if code in (None, 0):  # from a callback (an ``apply``): the program stopped half-way
            message = "the program exited with code 0 before it finished"
        elif isinstance(code, int):
            message = f"the program exited with code {code}"
        else:  # sys.exit("message"): Python prints the message and exits 1
            message = f"the program exited with code 1: {code}"
        super().__init__(message)
        self.code = code


def _exits_as_errors(body: Callable[[], Any]) -> Callable[[], Any]:
    """``sys.exit`` inside the program ends the program, as it does under the language host; a
    failure code becomes a ``ProgramExit`` (an ordinary exception), so it is reported like any
    program error instead of tearing through the SDK's event loop as a ``SystemExit``."""

    def run() -> Any:
        try:
            return body()
        except SystemExit as exc:
            if exc.code not in (None, 0):
                raise ProgramExit(exc.code) from None
            return None

    return run


def check_config_fits(values: Mapping[str, str]) -> None:
    """Refuse a config the Pulumi CLI could not hand to a program: it does so in one environment
    variable, ``PULUMI_CONFIG``, which Linux caps at ``MAX_ARG_STRLEN`` bytes."""
    problem = sdk.oversized_config(values)
    if problem:
        raise ConfigError(problem)


def run_program(
    program: Callable[[], Any] | Path | str,
    config: Mapping[str, Any],
    catalog: Optional[Catalog] = None,
    project: str = "mixed-os-racks",
    stack: str = "dev",
) -> ProgramRun:
    """Run ``program`` (a ``__main__.py`` path, a project directory, or a callable) as a preview.

    Exceptions the program raises propagate unchanged (``ConfigError`` among them); ``sys.exit``
    with a failure code raises ``ProgramExit``. A config too large for ``PULUMI_CONFIG`` is refused
    (``ConfigError``) before the program runs. The program's event loop and the SDK's worker
    threads are shut down however the run ends.
    """
    catalog = catalog or Catalog.load()
    values = stack_config_values(config)
    check_config_fits(values)
    mocks = OfflineMocks(catalog, values)
    monitor = RecordingMonitor(mocks)

    if callable(program):
        body = program
    else:
        path = Path(program)
        main = path / "__main__.py" if path.is_dir() else path

        def body() -> None:
            sys.path.insert(0, str(main.parent))
            try:
                runpy.run_path(str(main), run_name="__main__")
            finally:
                sys.path.remove(str(main.parent))

    def run() -> None:
        with sdk.language_host_config(values):
            sdk.run_under_mocks(_exits_as_errors(body), values, mocks, monitor, project, stack)

    # A fresh context: no state (root stack, config, settings) leaks between runs in one process.
    try:
        contextvars.Context().run(run)
    except SystemExit as exc:  # from a callback the program registered (an ``apply``), not its body
        raise ProgramExit(exc.code) from None
    return ProgramRun(
        project=project, stack=stack, resources=list(monitor.recorded), outputs=monitor.stack_outputs,
        reads=list(monitor.reads), component_outputs=dict(monitor.component_outputs),
    )
