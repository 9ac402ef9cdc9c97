"""Run a Pulumi program offline, under the SDK's mocks, and record what it registers."""

from __future__ import annotations

import base64
import contextvars
import json
import re
import runpy
import sys
from datetime import datetime, timezone
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

import grpc
import pulumi
from google.protobuf import json_format, struct_pb2

from ..errors import ConfigError
from ..pack.amifacts import deprecated
from . import eks_mng, k8s_yaml, remote, sdk
from .catalog import OFFLINE_ACCOUNT, Catalog, CatalogError, get_ami_result

STACK_TYPE = "pulumi:pulumi:Stack"
EXPANDERS: dict[str, Callable[[Any, remote.Context], list[remote.Child]]] = {
    eks_mng.TYPE: eks_mng.expand, **k8s_yaml.EXPANDERS,
}
"""Remote components the offline engine expands as their providers do (``remote``)."""


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
    providers: dict[str, str] = field(default_factory=dict)
    """A component's providers by package (what its children inherit)."""
    remote: bool = False
    """A component its provider builds (pulumi-eks's ``ManagedNodeGroup``, a Helm v4 ``Chart``)."""
    registered_outputs: Optional[struct_pb2.Struct] = field(repr=False, default=None)
    """A component's ``register_outputs`` values as sent over the wire (None until it registers any)."""

    @property
    def wire(self) -> dict[str, Any]:
        """The inputs as wire values (unknowns, secrets and resource references marked)."""
        return json_format.MessageToDict(self.properties)

    def unknown_inputs(self) -> list[str]:
        """The input paths not known until apply (``launchTemplate.id``), sorted."""
        found: list[str] = []

        def walk(value: Any, path: str) -> None:
            if value == sdk.UNKNOWN:
                found.append(path)
            elif isinstance(value, dict) and value.get(sdk.SIG_KEY) == sdk.SECRET_SIG:
                walk(value.get("value"), path)
            elif isinstance(value, dict) and value.get(sdk.SIG_KEY) != sdk.RESOURCE_SIG:
                for key, item in value.items():
                    walk(item, f"{path}.{key}" if path else key)
            elif isinstance(value, list):
                for n, item in enumerate(value):
                    walk(item, f"{path}[{n}]")

        walk(self.wire, "")
        return sorted(found)

    def to_json(self) -> dict[str, Any]:
        """As ``pulumi preview --json`` shows a resource's new state: secrets as ``[secret]``."""
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "inputs": shown(self.wire),
            "dependencies": list(self.dependencies),
            "propertyDependencies": {k: list(v) for k, v in self.property_dependencies.items()},
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
    outputs_wire: dict[str, Any] = field(default_factory=dict)
    """The stack's outputs as wire values (secrets and unknowns marked): what ``shown`` prints."""


def shown(value: Any) -> Any:
    """Wire values as ``pulumi preview`` prints them: a secret as ``[secret]``, an unknown as
    ``<computed>``, a resource reference as its URN."""
    if isinstance(value, dict):
        sig = value.get(sdk.SIG_KEY)
        if sig == sdk.SECRET_SIG:
            return "[secret]"
        if sig == sdk.RESOURCE_SIG:
            return value.get("urn")
        return {k: shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown(v) for v in value]
    return plain(value)


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
    """Answers the look-ups a rack program makes; anything else is refused by name.

    In preview (the default, as ``pulumi preview``) a resource being created has no id and no outputs
    beyond its inputs: the provider echoes the inputs and computes the rest at apply, so ``id`` and
    every computed output (an ARN, a launch template's ``latestVersion``) are unknown, as in a real
    preview. Remote components are expanded into their children (``expand``); what the engine cannot
    expand or render it says in ``warnings`` (each also printed to stderr as ``warning: ...``).
    """

    def __init__(self, catalog: Catalog, config: Mapping[str, str], preview: bool = True) -> None:
        self.catalog = catalog
        self.config = dict(config)
        self.region = str(config.get("aws:region") or "us-east-1")
        self.preview = preview
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        sys.stderr.write(f"warning: {message}\n")

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[Optional[str], dict]:
        if args.resource_id:  # a read (`Resource.get`) of something that already exists
            return args.resource_id, self._read(args.typ, args.resource_id)
        if not args.custom:
            # A component's outputs are what it registers, never its inputs echoed back: a remote
            # component (eks.ManagedNodeGroup, helm.v4.Chart) registers its children, its outputs unknown.
            return f"{args.name}-id", {}
        if self.preview:
            return "", dict(args.inputs)  # no id yet, outputs beyond the inputs unknown
        return f"{args.name}-id", dict(args.inputs)

    def expand(self, component: "Resource", ctx: remote.Context) -> list[remote.Child]:
        """The children a remote component's provider registers (none for other registrations)."""
        expander = EXPANDERS.get(component.type)
        if expander is None or component.custom:
            return []
        return expander(component, ctx)

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
            "version": "1.34",
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
        if token == "aws:ssm/getParameter:getParameter":
            return self._get_parameter(args.args)
        if token == "kubernetes:yaml:decode":
            return k8s_yaml.decode(args.args)
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
            now = datetime.now(timezone.utc)
            found = [ami for ami in found if not deprecated(ami, now)]
        if args.get("nameRegex"):
            pattern = re.compile(str(args["nameRegex"]))
            found = [ami for ami in found if pattern.search(ami.name)]
        if not found:
            # what the AWS provider says when EC2 DescribeImages finds nothing
            raise ProviderError("Your query returned no results. Please change your search criteria and try again.")
        if len(found) > 1 and not args.get("mostRecent"):
            raise ProviderError(f"Your query returned more than one result ({len(found)} images in the offline AMI "
                                "catalog). Please try a more specific search criteria, or set `most_recent` to true.")
        return get_ami_result(max(found, key=lambda ami: ami.creation_date))

    def _get_parameter(self, args: Mapping[str, Any]) -> dict[str, Any]:
        name = str(args.get("name") or "")
        value = self.catalog.parameter(name)
        if value is None:
            raise ProviderError(f"reading SSM Parameter ({name}): ParameterNotFound: the offline AMI catalog "
                                f"({self.catalog.source}) has no such parameter (add it under ssm_parameters:)")
        return {"id": name, "name": name, "arn": f"arn:aws:ssm:{self.region}:{OFFLINE_ACCOUNT}:parameter/{name.lstrip('/')}",
                "type": "String", "value": value, "insecureValue": value, "version": 1, "withDecryption": True}


class RecordingMonitor(sdk.MockMonitor):
    """The SDK's mock monitor, keeping every registration request in order."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.recorded: list[Resource] = []
        self.reads: list[Resource] = []
        self.stack_outputs: dict[str, Any] = {}
        self.stack_outputs_wire: dict[str, Any] = {}
        self.component_outputs: dict[str, dict[str, Any]] = {}
        self.states: dict[str, dict[str, Any]] = {}
        """URN -> the state the engine holds (wire values): a read's in full, a create's as previewed."""
        self.registrations: dict[str, Resource] = {}

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        response = sdk.isolated(lambda: super(RecordingMonitor, self).RegisterResource(request))
        raw = json_format.MessageToDict(request.object)
        self.states[response.urn] = json_format.MessageToDict(response.object)
        resource = Resource(
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
            providers=dict(request.providers),
            remote=bool(request.remote),
        )
        self._record(resource)
        expand = getattr(self.mocks, "expand", None)
        if expand is not None and request.remote:
            context = remote.Context(self.mocks.catalog, self.mocks.config, self.states, self.registrations, self.mocks.warn)
            for child in expand(resource, context):
                self._record(_child_resource(resource, child))
        return response

    def _record(self, resource: Resource) -> None:
        self.recorded.append(resource)
        self.registrations[resource.urn] = resource

    def ReadResource(self, request):  # noqa: N802
        response = sdk.isolated(lambda: super(RecordingMonitor, self).ReadResource(request))
        self.states[response.urn] = json_format.MessageToDict(response.properties)
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
        wire = json_format.MessageToDict(request.outputs)
        outputs = plain(wire)
        if request.urn.split("::")[2] == STACK_TYPE:
            self.stack_outputs, self.stack_outputs_wire = outputs, wire
        else:
            self.component_outputs[request.urn] = outputs
            if request.urn in self.registrations:
                struct = struct_pb2.Struct()
                struct.CopyFrom(request.outputs)
                self.registrations[request.urn].registered_outputs = struct
        return super().RegisterResourceOutputs(request)


def _child_resource(parent: Resource, child: remote.Child) -> Resource:
    """A child a provider registers for ``parent``, as the engine records it."""
    properties = struct_pb2.Struct()
    properties.update(child.props)
    return Resource(
        urn=remote.child_urn(parent.urn, child.type, child.name),
        type=child.type,
        name=child.name,
        parent=parent.urn,
        custom=child.custom,
        inputs=plain(json_format.MessageToDict(properties)),
        properties=properties,
        provider=child.provider,
        dependencies=list(child.dependencies),
        ignore_changes=list(child.ignore_changes),
        property_dependencies={k: list(v) for k, v in child.property_dependencies.items()},
    )


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
        outputs_wire=monitor.stack_outputs_wire, reads=list(monitor.reads), component_outputs=dict(monitor.component_outputs),
    )
