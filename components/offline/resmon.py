"""The engine's side of the resource monitor protocol, served over gRPC on the loopback: what a program run by
another language host (Node.js), and a component provider's ``Construct``, talk to.

The Python path runs its program in this process, under the SDK's mock monitor (``engine``, ``monitor``). A
program in another language runs in its own process and reaches the engine as the Pulumi CLI's engine serves it
(pulumi/pulumi ``pkg/resource/deploy/source_eval.go``, ``resmon``): a ``ResourceMonitor`` and an ``Engine``
service at one address. ``EngineMonitor`` answers each call as the offline engine answers the Python path, and
records through the same code (``RecordingMonitor.record_registration``, ``record_read``, ``record_outputs``), so a
run records the same resources, with the same URNs, the same remote expansions and the same reads:

* ``RegisterResource``: a URN made as the engine makes it (the parent's type chain); a custom resource gets
  its provider's preview answer from the offline cloud (``OfflineMocks.new_resource``: its inputs, references as
  ids, no id yet); a component gets no outputs (the engine returns none for a local component); the stack too. A
  remote component of a package that has a ``Constructor`` (``construct``: this package's provider) is
  constructed by it, with this server's address as its monitor, as the engine calls ``Construct``: the provider
  registers the component and its children here, and the answer is the provider's (its URN and outputs). Other
  remote components are recorded and expanded as on the Python path (``monitor.EXPANDERS``).
* ``ReadResource`` and ``Invoke``: the offline cloud's answers (``OfflineMocks``); ``pulumi:pulumi:getResource``
  from what was registered. A look-up the cloud cannot answer fails as the engine fails it
  (``invocation of <token> returned an error: ...``), and the program may catch it.
* ``RegisterResourceOutputs``: recorded (the stack's exports, a component's outputs).
* ``Engine.Log``: warnings as the Python path prints them (``warning: ...``, once); errors kept for the caller
  (a Node.js program logs its unhandled exception there before it exits).

The monitor says which features it supports as the engine does (``GetDeploymentInfo``, and ``SupportsFeature``
for older SDKs), leaving out what it does not do: output values (as the SDK's mock monitor), transforms,
invoke transforms, resource and error hooks, and package parameterization, which an SDK then refuses by name
rather than being silently ignored.

A registration the engine would fail (a duplicate URN, a remote component its provider refuses, one the
offline engine cannot expand) fails the call and is kept in ``EngineMonitor.errors``, in the engine's words
(``rack:index:KarpenterPool resource 'gpu' has a problem: ...``): the run is over, as under ``pulumi preview``.
"""

from __future__ import annotations

import functools
import json
import math
import threading
from concurrent import futures
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Protocol

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from grpc._cython import cygrpc
from pulumi.runtime.mocks import MockCallArgs, MockResourceArgs
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    errors_pb2,
    provider_pb2,
    resource_pb2,
    resource_pb2_grpc,
    status_pb2,
)

from . import remote
from .cloud import OfflineMocks, ProviderError
from .monitor import RecordingMonitor
from .records import STACK_TYPE, ProgramRun, Resource
from .wire import to_struct, wire_properties

FEATURES = {
    "secrets": resource_pb2.RESOURCE_MONITOR_FEATURE_SECRETS,
    "resourceReferences": resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES,
    "aliasSpecs": resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS,
    "replacementTrigger": resource_pb2.RESOURCE_MONITOR_FEATURE_REPLACEMENT_TRIGGER,
    "deletedWith": resource_pb2.RESOURCE_MONITOR_FEATURE_DELETED_WITH,
    "replaceWith": resource_pb2.RESOURCE_MONITOR_FEATURE_REPLACE_WITH,
}
"""What the monitor supports, by the names older SDKs ask ``SupportsFeature`` for (``supportsFeatureID``)."""

WORKERS = 64
"""Calls served at once. A ``Construct`` holds one call open while the provider's registrations arrive on others."""


class ConstructError(Exception):
    """A remote component its provider refused: the engine's diagnostic, then one line per property problem."""


class Constructor(Protocol):
    """What constructs the remote components of one package (``construct.ComponentProvider``)."""

    def construct(self, request: provider_pb2.ConstructRequest) -> provider_pb2.ConstructResponse: ...


@dataclass(frozen=True)
class Deployment:
    """What the engine tells a program and a provider about the run (``DeploymentInfo``, ``ConstructRequest``)."""

    project: str
    stack: str
    config: Mapping[str, str]
    """The stack config, ``ns:key`` -> text (``engine.stack_config_values``)."""
    organization: str = "organization"
    parallel: int = 8


def package_of(type_: str) -> str:
    return type_.split(":", 1)[0]


class EngineMonitor(RecordingMonitor):
    """The recording monitor answering at the wire, as the engine does, for callers in other processes. Thread-safe:
    the server calls it from many threads (a ``Construct`` in progress receives its children meanwhile)."""

    def __init__(
        self,
        mocks: OfflineMocks,
        deployment: Deployment,
        on_resource: Optional[Callable[[Resource], None]] = None,
        constructors: Optional[Mapping[str, Constructor]] = None,
    ) -> None:
        super().__init__(mocks, on_resource)
        self.cloud = mocks
        self.deployment = deployment
        self.constructors = dict(constructors or {})
        """Package name -> what constructs its remote components."""
        self.address = ""
        """This monitor's address, sent to a provider for ``Construct`` (set when served)."""
        self.errors: list[str] = []
        """What failed the run, in the engine's words (a registration refused)."""
        self.logged_errors: list[str] = []
        """What the program logged as errors (``Engine.Log``): a Node.js program's unhandled exception."""
        self.root = ""
        self.aborted = threading.Event()
        """Set when a registration failed the run: the engine then stops the program (``rm.abortChan``)."""
        self.calls = 0
        """How many calls reached the monitor and the engine service (``arrived``)."""
        self._lock = threading.RLock()

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        qualified = parent.split("::")[2] if parent else ""
        if qualified and qualified != STACK_TYPE:
            type_ = f"{qualified}${type_}"
        return f"urn:pulumi:{self.deployment.stack}::{self.deployment.project}::{type_}::{name}"

    def arrived(self) -> None:
        """Count a call that reached the monitor or the engine service."""
        with self._lock:
            self.calls += 1

    def failed(self, message: str) -> None:
        with self._lock:
            if message not in self.errors:
                self.errors.append(message)
        self.aborted.set()

    def run(self) -> ProgramRun:
        """What was recorded, as the Python path's ``run_program`` returns it."""
        with self._lock:
            return ProgramRun(
                project=self.deployment.project,
                stack=self.deployment.stack,
                resources=list(self.recorded),
                outputs=self.stack_outputs,
                outputs_wire=self.stack_outputs_wire,
                reads=list(self.reads),
                component_outputs=dict(self.component_outputs),
            )

    # ---- the protocol, at the wire ----

    def RegisterResource(self, request: resource_pb2.RegisterResourceRequest) -> resource_pb2.RegisterResourceResponse:  # noqa: N802
        constructor = self.constructors.get(package_of(request.type))
        if request.remote and not request.custom and constructor is not None:
            return self._construct(constructor, request)
        not_finite = first_not_finite(request.object)
        if not_finite is not None:
            path, number = not_finite
            raise ConstructError(
                f"{request.type} resource '{request.name}' has a problem: property {path} with value "
                f"'{number}' has a problem: not a finite number (JSON has no NaN or Infinity)"
            )
        urn = self.make_urn(request.parent, request.type, request.name)
        id_, state = "", struct_pb2.Struct()
        if request.custom:
            inputs = json_format.MessageToDict(wire_properties(request.object))
            found, answered = self.cloud.new_resource(
                MockResourceArgs(  # an import is a create of that id offline
                    typ=request.type,
                    name=request.name,
                    inputs=inputs,
                    provider=request.provider,
                    resource_id=None,
                    custom=True,
                )
            )
            id_, state = request.importId or found or "", to_struct(_provider_state(inputs, answered))
        with self._lock:
            self.record_registration(request, urn, state)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=state)

    def _construct(
        self, constructor: Constructor, request: resource_pb2.RegisterResourceRequest
    ) -> resource_pb2.RegisterResourceResponse:
        info = self.deployment
        construct = provider_pb2.ConstructRequest(
            project=info.project,
            stack=info.stack,
            organization=info.organization,
            config=dict(info.config),
            dryRun=True,
            parallel=info.parallel,
            monitorEndpoint=self.address,
            type=request.type,
            name=request.name,
            parent=request.parent,
            inputs=request.object,
            protect=request.protect,
            providers=dict(request.providers),
            inputDependencies={
                k: provider_pb2.ConstructRequest.PropertyDependencies(urns=list(v.urns))
                for k, v in request.propertyDependencies.items()
            },
            aliases=list(request.aliases),
            dependencies=list(request.dependencies),
            additionalSecretOutputs=list(request.additionalSecretOutputs),
            deletedWith=request.deletedWith,
            replace_with=list(request.replace_with),
            deleteBeforeReplace=request.deleteBeforeReplace,
            ignoreChanges=list(request.ignoreChanges),
            replaceOnChanges=list(request.replaceOnChanges),
            retainOnDelete=request.retainOnDelete,
            accepts_output_values=True,
        )
        try:
            response = constructor.construct(construct)
        except grpc.RpcError as exc:
            raise construct_failure(exc, request) from None
        return resource_pb2.RegisterResourceResponse(
            urn=response.urn,
            object=response.state,
            propertyDependencies={
                k: resource_pb2.RegisterResourceResponse.PropertyDependencies(urns=list(v.urns))
                for k, v in response.stateDependencies.items()
            },
        )

    def ReadResource(self, request: resource_pb2.ReadResourceRequest) -> resource_pb2.ReadResourceResponse:  # noqa: N802
        urn = self.make_urn(request.parent, request.type, request.name)
        _, state = self.cloud.new_resource(
            MockResourceArgs(
                typ=request.type,
                name=request.name,
                inputs=json_format.MessageToDict(request.properties),
                provider=request.provider,
                resource_id=request.id,
            )
        )
        properties = to_struct(state)
        with self._lock:
            self.record_read(request, urn, properties)
        return resource_pb2.ReadResourceResponse(urn=urn, properties=properties)

    def Invoke(self, request: resource_pb2.ResourceInvokeRequest) -> resource_pb2.ResourceInvokeResponse:  # noqa: N802
        args = remote.reveal(json_format.MessageToDict(request.args))
        if request.tok == "pulumi:pulumi:getResource":
            return resource_pb2.ResourceInvokeResponse(**{"return": self._get_resource(str(args.get("urn") or ""))})
        returned = self.cloud.call(MockCallArgs(token=request.tok, args=args, provider=request.provider))
        return resource_pb2.ResourceInvokeResponse(**{"return": to_struct(returned)})

    def _get_resource(self, urn: str) -> struct_pb2.Struct:
        """``pulumi:pulumi:getResource``: a registered resource's URN, id and state (an SDK rebuilding a reference)."""
        with self._lock:
            if urn not in self.states:
                raise ProviderError(f"unknown resource {urn}")
            state = dict(self.states[urn])
        return to_struct({"urn": urn, "id": state.get("id", ""), "state": state})

    def RegisterResourceOutputs(self, request: resource_pb2.RegisterResourceOutputsRequest) -> empty_pb2.Empty:  # noqa: N802
        with self._lock:
            self.record_outputs(request)
        return empty_pb2.Empty()

    def GetDeploymentInfo(self, request: empty_pb2.Empty) -> resource_pb2.DeploymentInfo:  # noqa: N802
        info = self.deployment
        return resource_pb2.DeploymentInfo(
            project=info.project,
            stack=info.stack,
            organization=info.organization,
            config=dict(info.config),
            dryRun=True,
            parallel=info.parallel,
            supportedFeatures=list(FEATURES.values()),
        )

    def SupportsFeature(self, request: resource_pb2.SupportsFeatureRequest) -> resource_pb2.SupportsFeatureResponse:  # noqa: N802
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id in FEATURES)

    def SignalAndWaitForShutdown(self, request: empty_pb2.Empty) -> empty_pb2.Empty:  # noqa: N802
        return empty_pb2.Empty()

    # ---- the engine service ----

    def log(self, request: engine_pb2.LogRequest) -> None:
        if request.severity == engine_pb2.WARNING:
            self.cloud.warn(request.message)
        elif request.severity == engine_pb2.ERROR:
            with self._lock:
                self.logged_errors.append(request.message)


def first_not_finite(properties: struct_pb2.Struct) -> Optional[tuple[str, str]]:
    """The first number in ``properties`` that is NaN or an infinity, by its property path (``pool.maxHourlyUsd``,
    ``pools[0].disk``) and as Go prints it (``NaN``, ``+Inf``, ``-Inf``), or None. Protobuf's ``Struct`` carries such
    a number (a Node.js program's ``NaN`` arrives as one), but no JSON does: a provider, the state and the policy
    packs all read properties as JSON."""
    pending: list[tuple[str, struct_pb2.Value]] = [
        (key, properties.fields[key]) for key in sorted(properties.fields, reverse=True)
    ]
    while pending:  # depth first, keys in order, list items in order
        path, value = pending.pop()
        kind = value.WhichOneof("kind")
        if kind == "number_value" and not math.isfinite(value.number_value):
            number = value.number_value
            return path, "NaN" if math.isnan(number) else ("+Inf" if number > 0 else "-Inf")
        if kind == "struct_value":
            fields = value.struct_value.fields
            pending += [(f"{path}.{key}", fields[key]) for key in sorted(fields, reverse=True)]
        elif kind == "list_value":
            pending += reversed([(f"{path}[{n}]", item) for n, item in enumerate(value.list_value.values)])
    return None


def _provider_state(inputs: Mapping[str, Any], answered: Mapping[str, Any]) -> dict[str, Any]:
    """A new custom resource's state as its provider previews it (``OfflineMocks.new_resource``), at the wire: what
    the offline cloud made of a value where the value is known and not secret; an unknown or a secret as it was
    sent (the SDK's mock monitor hands the cloud those as objects, which ``cloud.checked_state`` leaves alone)."""
    return {
        key: answered.get(key, value) if remote.known(value) and not remote.has_secret(value) else value
        for key, value in inputs.items()
    }


def construct_failure(error: grpc.RpcError, request: Any) -> ConstructError:
    """A provider's refusal in the engine's words (``errorToMessage``, ``diag.GetResourceInvalidError``): the
    component, the message, then each property problem with its path (the schema's names) and value."""
    lines = [f"{request.type} resource '{request.name}' has a problem: {error.details() or error.code().name}"]
    inputs = json_format.MessageToDict(request.object)
    for path, reason in property_errors(error):
        value = _at_path(inputs, path)
        shown = f" with value '{_go_value(value)}'" if value is not _MISSING else ""
        lines.append(f"  - property {path}{shown} has a problem: {reason}")
    return ConstructError("\n".join(lines))


def property_errors(error: grpc.RpcError) -> list[tuple[str, str]]:
    """The ``InputPropertiesError`` details of a failed call (``grpc-status-details-bin``): (property path, reason)."""
    found: list[tuple[str, str]] = []
    for key, value in getattr(error, "trailing_metadata", lambda: ())() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                problems = errors_pb2.InputPropertiesError()
                if detail.Unpack(problems):
                    found += [(e.property_path, e.reason) for e in problems.errors]
    return found


_MISSING = object()


def _at_path(value: Any, path: str) -> Any:
    """The value at a property path (``pool.amiId``, ``pools[0].disk``), or ``_MISSING``."""
    for part in path.replace("]", "").replace("[", ".").split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return remote.reveal(value)


def _go_value(value: Any) -> str:
    """A property value as the engine prints one (``%v``): text as it is, a whole number without a point."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# ---- the server ----------------------------------------------------------------------------------------------


def _served(method: Callable[..., Any]) -> Callable[..., Any]:
    """A monitor call as a gRPC method: the engine's failures become the caller's error, and a registration the
    engine refuses ends the run (``EngineMonitor.errors``)."""

    @functools.wraps(method)
    def serve(self: "_MonitorService", request: Any, context: grpc.ServicerContext) -> Any:
        name = method.__name__
        try:
            return method(self, request, context)
        except ConstructError as exc:
            self.monitor.failed(str(exc))
            context.abort(grpc.StatusCode.UNKNOWN, "resource monitor shut down")
        except grpc.RpcError as exc:  # the offline cloud's refusal, as a provider's
            message = str(exc.details() if callable(getattr(exc, "details", None)) else exc)
            if name == "Invoke":
                context.abort(grpc.StatusCode.UNKNOWN, f"invocation of {request.tok} returned an error: {message}")
            self.monitor.failed(_subject(request, message))
            context.abort(grpc.StatusCode.UNKNOWN, message)
        except (NotImplementedError, remote.ExpansionError) as exc:  # what the offline engine cannot do, by name
            if name == "Invoke":
                context.abort(grpc.StatusCode.UNKNOWN, f"invocation of {request.tok} returned an error: {exc}")
            self.monitor.failed(_subject(request, str(exc)))
            context.abort(grpc.StatusCode.UNKNOWN, str(exc))
        except Exception as exc:  # noqa: BLE001 - a fault of the offline engine: said, never a hang
            self.monitor.failed(f"the offline engine failed answering {name}: {type(exc).__name__}: {exc}")
            context.abort(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}")
        raise AssertionError("unreachable: context.abort raises")  # pragma: no cover

    return serve


def _subject(request: Any, message: str) -> str:
    """A failure named by the resource it is about, as the engine names it."""
    if getattr(request, "type", "") and getattr(request, "name", ""):
        return f"{request.type} resource '{request.name}': {message}"
    return message


class _MonitorService(resource_pb2_grpc.ResourceMonitorServicer):
    def __init__(self, monitor: EngineMonitor) -> None:
        self.monitor = monitor

    @_served
    def RegisterResource(
        self,
        request: resource_pb2.RegisterResourceRequest,  # noqa: N802
        context: grpc.ServicerContext,
    ) -> resource_pb2.RegisterResourceResponse:
        return self.monitor.RegisterResource(request)

    @_served
    def ReadResource(
        self,
        request: resource_pb2.ReadResourceRequest,  # noqa: N802
        context: grpc.ServicerContext,
    ) -> resource_pb2.ReadResourceResponse:
        return self.monitor.ReadResource(request)

    @_served
    def Invoke(
        self,
        request: resource_pb2.ResourceInvokeRequest,  # noqa: N802
        context: grpc.ServicerContext,
    ) -> resource_pb2.ResourceInvokeResponse:
        return self.monitor.Invoke(request)

    @_served
    def RegisterResourceOutputs(
        self,
        request: resource_pb2.RegisterResourceOutputsRequest,  # noqa: N802
        context: grpc.ServicerContext,
    ) -> empty_pb2.Empty:
        return self.monitor.RegisterResourceOutputs(request)

    @_served
    def GetDeploymentInfo(
        self,
        request: empty_pb2.Empty,  # noqa: N802
        context: grpc.ServicerContext,
    ) -> resource_pb2.DeploymentInfo:
        return self.monitor.GetDeploymentInfo(request)

    @_served
    def SupportsFeature(
        self,
        request: resource_pb2.SupportsFeatureRequest,  # noqa: N802
        context: grpc.ServicerContext,
    ) -> resource_pb2.SupportsFeatureResponse:
        return self.monitor.SupportsFeature(request)

    @_served
    def SignalAndWaitForShutdown(
        self,
        request: empty_pb2.Empty,  # noqa: N802
        context: grpc.ServicerContext,
    ) -> empty_pb2.Empty:
        return self.monitor.SignalAndWaitForShutdown(request)


class _EngineService(engine_pb2_grpc.EngineServicer):
    def __init__(self, monitor: EngineMonitor) -> None:
        self.monitor = monitor

    def Log(self, request: engine_pb2.LogRequest, context: grpc.ServicerContext) -> empty_pb2.Empty:  # noqa: N802
        self.monitor.log(request)
        return empty_pb2.Empty()

    def GetRootResource(
        self,
        request: engine_pb2.GetRootResourceRequest,  # noqa: N802
        context: grpc.ServicerContext,
    ) -> engine_pb2.GetRootResourceResponse:
        return engine_pb2.GetRootResourceResponse(urn=self.monitor.root)

    def SetRootResource(
        self,
        request: engine_pb2.SetRootResourceRequest,  # noqa: N802
        context: grpc.ServicerContext,
    ) -> engine_pb2.SetRootResourceResponse:
        self.monitor.root = request.urn
        return engine_pb2.SetRootResourceResponse()


MAX_MESSAGE = 400 * 1024 * 1024
"""The largest message either side sends (a big component's state), as the engine's own servers allow."""

NEVER_REFUSE = 2**31 - 1
"""gRPC core's server holds a call that arrived before the application asked for the next one in a pending queue,
and refuses calls past a bound on it (``grpc.server.max_pending_requests``, 1,000 by default, randomly up to
``..._hard_limit``, 3,000), or that waited there longer than ``grpc.server_max_unrequested_time_in_server`` (30 s):
grpcio asks for one call at a time, from one thread, so a program that sends thousands of registrations at once
fills that queue. The Node.js SDK takes a refused call (``CANCELLED``, ``UNAVAILABLE``) as the engine shutting
down: it stops registering and exits 0, without a word (``isGrpcError``, ``terminateRpcs``). The engine's own
server (Go) has no such queue; here it is unbounded, in count and in time."""

SERVER_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE),
    ("grpc.max_send_message_length", MAX_MESSAGE),
    ("grpc.server.max_pending_requests", NEVER_REFUSE),
    ("grpc.server.max_pending_requests_hard_limit", NEVER_REFUSE),
    ("grpc.server_max_unrequested_time_in_server", NEVER_REFUSE),
]
"""The monitor's server options (``NEVER_REFUSE``)."""


class _Arrivals(grpc.ServerInterceptor):  # type: ignore[misc]  # grpc has no type information here: ServerInterceptor is Any
    """Counts each call gRPC hands to the application (one it has no method for too) on the monitor (``arrived``)."""

    def __init__(self, monitor: EngineMonitor) -> None:
        self.monitor = monitor

    def intercept_service(self, continuation: Callable[[Any], Any], handler_call_details: Any) -> Any:
        self.monitor.arrived()
        return continuation(handler_call_details)


def _server_ids() -> set[int]:
    """The ids under which gRPC's channelz knows this process's servers."""
    return {int(found["ref"]["serverId"]) for found in json.loads(cygrpc.channelz_get_servers(0)).get("server", [])}


class EngineServer:
    """An ``EngineMonitor`` served with the ``Engine`` service on one loopback port (``address``), until ``close``.
    Use as a context manager."""

    def __init__(self, monitor: EngineMonitor) -> None:
        self.monitor = monitor
        before = _server_ids()
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="resmon"),
            interceptors=[_Arrivals(monitor)],
            options=SERVER_OPTIONS,
        )
        created = _server_ids() - before
        self._channelz = created.pop() if len(created) == 1 else None  # another thread's server made at once: unknown
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(_MonitorService(monitor), self._server)
        engine_pb2_grpc.add_EngineServicer_to_server(_EngineService(monitor), self._server)
        self.address = f"127.0.0.1:{self._server.add_insecure_port('127.0.0.1:0')}"
        monitor.address = self.address
        self._server.start()

    def refused(self) -> int:
        """How many calls gRPC took from the program but never handed to the monitor (it refused them, or they are
        still queued): the calls channelz counts as started, less those that reached the monitor (0 when channelz
        does not know this server)."""
        if self._channelz is None:
            return 0
        found = json.loads(cygrpc.channelz_get_server(self._channelz)).get("server", {})
        started = int(found.get("data", {}).get("callsStarted", 0))
        return max(0, started - self.monitor.calls)

    def close(self) -> None:
        self._server.stop(grace=None)

    def __enter__(self) -> "EngineServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve(
    mocks: OfflineMocks,
    deployment: Deployment,
    on_resource: Optional[Callable[[Resource], None]] = None,
    constructors: Optional[Mapping[str, Constructor]] = None,
) -> EngineServer:
    """A monitor and an engine for one run, served (``EngineServer.address``)."""
    return EngineServer(EngineMonitor(mocks, deployment, on_resource, constructors))
