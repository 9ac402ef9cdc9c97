"""What the offline engine sends a pack over the analyzer protocol: properties as the engine
puts them on the wire, each resource's options and provider."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2 as pb

from . import sdk
from .records import ProgramRun, Resource

_SIG = sdk.SIG_KEY
_RESOURCE_SIG = sdk.RESOURCE_SIG


def wire_properties(struct: struct_pb2.Struct) -> struct_pb2.Struct:
    """Properties as the CLI sends them to an analyzer or a provider: unknowns and secrets kept, resource
    references downgraded to the resource's id (or, for a component, its URN)."""
    if _RESOURCE_SIG.encode() not in struct.SerializeToString():
        return struct
    return to_struct(_downgrade(json_format.MessageToDict(struct)))


def outputs_known_at_registration(resource: Resource) -> bool:
    """Whether a resource's outputs, as ``AnalyzeStack`` gets them, are known when it registers: a
    custom resource's previewed outputs are its inputs (so are a remote component's, whose provider
    does not run offline); a component's are what it registers later, when its program is done."""
    return resource.custom or resource.remote


def stack_properties(request: pb.AnalyzeRequest, resource: Resource) -> struct_pb2.Struct:
    """What ``AnalyzeStack`` gets for a resource: its outputs (a component's registered outputs, or a
    state's; a custom resource's previewed inputs; or none)."""
    if resource.registered_outputs is not None:
        return wire_properties(resource.registered_outputs)
    if outputs_known_at_registration(resource):
        return request.properties
    return struct_pb2.Struct()


def _downgrade(value: Any) -> Any:
    """A resource reference as the engine hands it to a provider or a pack (``MarshalProperties`` without
    ``KeepResources``): a custom resource's id (unknown while the resource is only previewed), a component's URN."""
    if isinstance(value, dict):
        if value.get(_SIG) == _RESOURCE_SIG:
            if "id" in value:
                return value["id"] or sdk.UNKNOWN
            return value.get("urn", "")
        return {k: _downgrade(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_downgrade(v) for v in value]
    return value


def to_struct(value: Optional[Mapping[str, Any]]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    if value:
        struct.update(value)
    return struct


def resource_options(r: Resource) -> pb.AnalyzerResourceOptions:
    return pb.AnalyzerResourceOptions(
        protect=r.protect,
        ignoreChanges=r.ignore_changes,
        deleteBeforeReplace=r.delete_before_replace,
        deleteBeforeReplaceDefined=r.delete_before_replace_defined,
        additionalSecretOutputs=r.additional_secret_outputs,
        customTimeouts=pb.AnalyzerResourceOptions.CustomTimeouts(),
        parent=r.parent,
    )


def provider_of(
    r: Resource, by_urn: Mapping[str, Resource], run: ProgramRun, config: Mapping[str, Any]
) -> Optional[pb.AnalyzerProviderResource]:
    """The resource's provider: the registered one it names, else its package's default provider
    (whose inputs, as with the CLI, are the stack config of that package)."""
    if r.type.startswith("pulumi:providers:"):
        return None
    if r.provider:
        urn = r.provider.rsplit("::", 1)[0]
        explicit = by_urn.get(urn)
        if explicit is not None:
            return pb.AnalyzerProviderResource(
                type=explicit.type,
                name=explicit.name,
                urn=explicit.urn,
                properties=wire_properties(explicit.properties),
            )
    if not r.custom:
        return None
    package = r.type.split(":", 1)[0]
    prefix = f"{package}:"
    props = {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}
    urn = f"urn:pulumi:{run.stack}::{run.project}::pulumi:providers:{package}::default"
    return pb.AnalyzerProviderResource(
        type=f"pulumi:providers:{package}", name="default", urn=urn, properties=to_struct(props)
    )
