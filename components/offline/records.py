"""What the offline engine records of a run: each registration as the engine sees it, and the
run's stack outputs; and how wire values print (``shown``: as ``pulumi preview`` shows them,
``plain``: as JSON)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Optional

from google.protobuf import json_format, struct_pb2

from . import sdk

STACK_TYPE = "pulumi:pulumi:Stack"


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
    aliases: list[dict[str, Any]] = field(default_factory=list)
    """The resource's aliases as the engine receives them: ``{"urn"}``, or a spec (``name``, ``type``, ``parentUrn``,
    ``noParent``, ``project``, ``stack``; empty: the resource's own)."""
    """A component its provider builds (pulumi-eks's ``ManagedNodeGroup``, a Helm v4 ``Chart``)."""
    registered_outputs: Optional[struct_pb2.Struct] = field(repr=False, default=None)
    """A component's ``register_outputs`` values as sent over the wire (None until it registers any), or the
    outputs a stack's state holds for the resource (what ``AnalyzeStack`` gets)."""
    version: str = ""
    """The provider package version the registration asks for (the engine stores it in a provider's inputs)."""
    retain_on_delete: bool = False
    deleted_with: str = ""
    replace_with: list[str] = field(default_factory=list)
    import_id: str = ""
    """The id the program imports (``import_``): the engine adopts the existing resource of that id."""

    @functools.cached_property
    def wire(self) -> dict[str, Any]:
        """The inputs as wire values (unknowns, secrets and resource references marked); read, never changed."""
        wire: dict[str, Any] = json_format.MessageToDict(self.properties)
        return wire

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
            # as the CLI's resource state: present only when set
            **({"protect": True} if self.protect else {}),
            # what the engine will not change on an update (it sends the old value instead): shown, so a
            # reader sees what is sent
            **({"ignoreChanges": list(self.ignore_changes)} if self.ignore_changes else {}),
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
