"""The recording monitor: every registration a program makes, as the engine sees it, with remote
components expanded into the children their providers register (``remote``)."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Optional, cast

import pulumi
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto.resource_pb2 import (
    ReadResourceRequest,
    ReadResourceResponse,
    RegisterResourceOutputsRequest,
    RegisterResourceRequest,
    RegisterResourceResponse,
)

from .. import contract
from . import eks_mng, k8s_yaml, remote, sdk
from .cloud import OfflineMocks, ProviderError
from .records import STACK_TYPE, Resource, plain
from .wire import wire_properties

EXPANDERS: dict[str, Callable[[Any, remote.Context], list[remote.Child]]] = {
    contract.MANAGED_NODE_GROUP: eks_mng.expand,
    **k8s_yaml.EXPANDERS,
}
"""Remote components the offline engine expands as their providers do (``remote``)."""


class _States(Mapping[str, Mapping[str, Any]]):
    """URN -> a resource's state as wire values, converted from the engine's message when an expander
    first reads it (few are read: a remote component's cluster, its role)."""

    def __init__(self) -> None:
        self._messages: dict[str, struct_pb2.Struct] = {}
        self._values: dict[str, dict[str, Any]] = {}

    def keep(self, urn: str, message: struct_pb2.Struct) -> None:
        self._messages[urn] = message
        self._values.pop(urn, None)

    def __getitem__(self, urn: str) -> Mapping[str, Any]:
        if urn not in self._values:
            self._values[urn] = json_format.MessageToDict(self._messages[urn])
        return self._values[urn]

    def __iter__(self) -> Iterator[str]:
        return iter(self._messages)

    def __len__(self) -> int:
        return len(self._messages)


class RecordingMonitor(sdk.IsolatingMockMonitor):
    """The SDK's mock monitor, keeping every registration request in order."""

    def __init__(self, mocks: pulumi.runtime.Mocks, on_resource: Optional[Callable[[Resource], None]] = None) -> None:
        super().__init__(mocks)
        self.on_resource = on_resource
        """Called with each resource as it is recorded (the offline preview sends it to the policy packs)."""
        self.recorded: list[Resource] = []
        self.reads: list[Resource] = []
        self.stack_outputs: dict[str, Any] = {}
        self.stack_outputs_wire: dict[str, Any] = {}
        self.component_outputs: dict[str, dict[str, Any]] = {}
        self.states = _States()
        """URN -> the state the engine holds (wire values): a read's in full, a create's as previewed."""
        self.registrations: dict[str, Resource] = {}

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """A URN as the engine makes it (pulumi ``Deployment.generateURN``): the parent's whole qualified
        type before the resource's own, except the root stack's (``rack:index:Rack$rack:index:KarpenterPool``).
        The SDK's mock keeps only the parent's last type and the stack's, so no URN would match a real
        ``pulumi stack export``."""
        qualified = parent.split("::")[2] if parent else ""
        if qualified and qualified != STACK_TYPE:
            type_ = f"{qualified}${type_}"
        return "urn:pulumi:" + "::".join([pulumi.get_stack(), pulumi.get_project(), type_, name])

    def RegisterResource(self, request: RegisterResourceRequest) -> RegisterResourceResponse:  # noqa: N802 (gRPC method)
        # served isolated (sdk.IsolatingMockMonitor); an import is answered as a create of that id
        response: RegisterResourceResponse = super().RegisterResource(_as_provider_gets(_without_import(request)))
        if request.importId and not response.id:
            response.id = request.importId
        self.record_registration(request, response.urn, response.object)
        return response

    def record_registration(self, request: Any, urn: str, state: struct_pb2.Struct) -> None:
        """Record a registration the engine answered with ``urn`` and ``state`` (a remote component's children
        too, when the engine expands it): the Python path's monitor and the engine's served one (``resmon``) both
        record through here."""
        if urn in self.registrations:  # the engine's step generator refuses a second registration
            raise ProviderError(f"Duplicate resource URN '{urn}'; try giving it a unique name")
        raw = json_format.MessageToDict(request.object)
        self.states.keep(urn, state)
        resource = Resource(
            urn=urn,
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
            aliases=[
                {"urn": a.urn}
                if a.urn
                else {
                    "name": a.spec.name,
                    "type": a.spec.type,
                    "project": a.spec.project,
                    "stack": a.spec.stack,
                    "parentUrn": a.spec.parentUrn,
                    "noParent": a.spec.noParent,
                }
                for a in request.aliases
            ],
            version=request.version,
            retain_on_delete=bool(request.retainOnDelete),
            deleted_with=request.deletedWith,
            replace_with=list(request.replace_with),
            import_id=request.importId if request.custom else "",
        )
        resource.__dict__["wire"] = raw  # what ``Resource.wire`` would compute again from ``properties``
        self._record(resource)
        if request.remote and not resource.custom and resource.type in EXPANDERS:
            mocks = cast(OfflineMocks, self.mocks)
            context = remote.Context(
                mocks.catalog, mocks.config, self.states, cast(Any, self.registrations), mocks.warn
            )
            for child in EXPANDERS[resource.type](resource, context):
                self._record(_child_resource(resource, child))

    def _record(self, resource: Resource) -> None:
        self.recorded.append(resource)
        self.registrations[resource.urn] = resource
        if self.on_resource is not None:
            self.on_resource(resource)

    def ReadResource(self, request: ReadResourceRequest) -> ReadResourceResponse:  # noqa: N802
        response: ReadResourceResponse = super().ReadResource(request)
        self.record_read(request, response.urn, response.properties)
        return response

    def record_read(self, request: Any, urn: str, state: struct_pb2.Struct) -> None:
        """Record a read (``Resource.get``) the engine answered with ``urn`` and the resource's ``state``."""
        self.states.keep(urn, state)
        self.reads.append(
            Resource(
                urn=urn,
                type=request.type,
                name=request.name,
                parent=request.parent,
                custom=True,
                inputs={"id": request.id},
                provider=request.provider,
            )
        )

    def RegisterResourceOutputs(self, request: RegisterResourceOutputsRequest) -> empty_pb2.Empty:  # noqa: N802
        self.record_outputs(request)
        done: empty_pb2.Empty = super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]  # the SDK's MockMonitor is not annotated
        return done

    def record_outputs(self, request: Any) -> None:
        """Record what a component (or the stack) registered as its outputs."""
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


def _without_import(request: Any) -> Any:
    """A registration that imports (``import_``) as the mocks take a create: the SDK's mock would answer it as a
    read of an existing resource (``new_resource`` with its id), which the offline cloud cannot do. The engine
    reads the resource when it imports it; offline, its state is the program's inputs, under the imported id.
    The recorded registration keeps the id."""
    if not request.importId:
        return request
    sent = type(request)()
    sent.CopyFrom(request)
    sent.importId = ""
    return sent


def _as_provider_gets(request: Any) -> Any:
    """A custom resource's registration with its inputs as its provider gets them: a reference to another
    resource as that resource's id (the engine marshals properties for a provider without resource references),
    so the mock echoes the id as the output, as a real provider's state holds it. The SDK's mock would otherwise
    rebuild each referenced resource from its URN, through a look-up that never finishes when the referenced
    resource's state does not fit its class (a policy document given as an object where the class reads text).
    The recorded registration keeps the references."""
    if not request.custom or sdk.RESOURCE_SIG.encode() not in request.object.SerializeToString():
        return request
    sent = type(request)()
    sent.CopyFrom(request)
    sent.object.CopyFrom(wire_properties(request.object))
    return sent


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
