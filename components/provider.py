"""The package as a Pulumi component provider: every public component, for every Pulumi language.

``provider/`` (``PulumiPlugin.yaml``, ``runtime: python``) is the plugin a program adds with
``pulumi package add``; its ``__main__.py`` calls ``serve()``. The provider is the Python SDK's
component provider host (``pulumi.provider.experimental``, pulumi 3.272): it infers the schema from
each component's ``args`` annotation and its class-level output annotations (the attribute docstrings
are the descriptions), and ``Construct`` calls the component with the inputs mapped to Python names.
Three things are the package's own, each a small extension of the SDK's classes:

* a spec (a pydantic model) has fields with defaults; the SDK's analyzer reads only the annotations and
  would make every field required, so a field with a default is optional here (``RackAnalyzer``);
* docstrings are read along the class's bases (``_ChartAddon``'s outputs are its subclasses'), and a
  component's description is its own docstring, not the Python ``help()`` text;
* a component's ``ArgumentError`` (an ``InputPropertiesError``, and a ``RunError`` so that ``pulumi up``
  of a Python program prints it without a traceback) reaches the engine as ``INVALID_ARGUMENT`` with
  its property paths in the schema's names (``pool.volumeIops``): the SDK's server would send a
  ``RunError`` as plain text, and its host wraps whatever the component raises.
* ``Construct``'s inputs are checked against the schema before the SDK reads them (``RackServicer``,
  ``provider_inputs``): as they travel, so that a secret or an unknown is judged where it is.
* every name in the schema is an identifier in each language an SDK is generated for (``identifier``): a
  wire name that is not one (the Kubernetes ``ephemeral-storage`` of a lane's ``allocatable``) is served as
  ``ephemeralStorage``, and ``Construct`` maps it both ways, at any depth of the outputs (``RackProvider.get_state``);
* the schema carries what a published SDK needs (``repository`` and each language's package name, ``METADATA``),
  and its descriptions speak to every language (``neutral``);
* a component's refusal found while it builds (a pinned AMI's facts: a disk below the root snapshot) comes back
  as the one line a Python program prints, at the program's property path (``pool.disk``), never as a Python
  traceback; each ``Construct`` is one deployment's (``cluster.ProviderDeployment``), so what a cluster runs once is
  claimed once per deployment, whatever language asks.

Upstream (pulumi/pulumi ``sdk/python/lib/pulumi/provider/experimental``, release 3.272.0): the host puts
every type in the ``index`` module (``rack:index:KarpenterPool``), reads ``args`` with
``inspect.get_annotations`` (so a module with postponed annotations cannot be hosted), refuses unions,
``Literal`` and ``Annotated``, and maps a nested object input to a ``dict`` of Python names.
"""

import inspect
import json
import re
import sys
from typing import Any, Optional
from unittest import mock

import pulumi
from pulumi.errors import InputPropertyErrorDetails
from pulumi.provider import ConstructResult, server
from pulumi.provider.experimental import component as sdk_component
from pulumi.provider.experimental.analyzer import Analyzer, ComponentDefinition, PropertyDefinition, PropertyType
from pulumi.provider.experimental.util import camel_case
from pulumi.provider.server import ComponentInitError
from pulumi.runtime.proto import provider_pb2
from pydantic import BaseModel

from . import provider_inputs
from .cluster import DEPLOYMENT, ProviderDeployment
from .errors import ConfigError
from .inputs import closest
from .spec.base import PROPERTY_NAMES, rendered, shown

PACKAGE = "rack"
"""The package name: every component's type token is ``rack:index:<Component>``."""
NAMESPACE = "mixed-os-racks"
"""The schema's namespace (generated SDKs are named after it, e.g. ``@mixed-os-racks/rack``)."""
REPOSITORY = "https://github.com/mixed-os-racks/mixed-os-racks"
"""Where the package's source is: ``pyproject.toml``'s ``Source`` URL."""
METADATA: dict[str, Any] = {
    "repository": REPOSITORY,
    "publisher": NAMESPACE,
    "keywords": ["pulumi", "aws", "eks", "karpenter", "kind/component", "category/cloud"],
    "language": {
        "nodejs": {"packageName": f"@{NAMESPACE}/{PACKAGE}"},
        "go": {"importBasePath": f"{REPOSITORY.removeprefix('https://')}/sdk/go/{PACKAGE}"},
        "csharp": {"rootNamespace": "MixedOsRacks"},
        "java": {"basePackage": "io.github.mixedosracks"},
        "python": {"packageName": "mixed_os_racks_rack"},
    },
}
"""What an SDK needs to be published rather than only generated in a program's folder (pulumi-eks's schema sets
the same keys): the repository, and each language's package name. The Go import path is the one the Go generator
derives from ``repository`` (pulumi/pulumi ``pkg/codegen/go/gen.go``, ``ExtractImportBasePath``), so ``go.mod``'s
module and the imports agree; the Node package is ``@<namespace>/<name>``, as the Node generator names it by
default; C# classes are in ``MixedOsRacks.Rack``, Java's in ``io.github.mixedosracks.rack``; the Python SDK is
``mixed_os_racks_rack``, apart from this package's own ``mixed_os_racks``."""

_IDENTIFIER = re.compile(r"[a-z][A-Za-z0-9]*")


def identifier(name: str) -> str:
    """A wire name as the schema serves it: an identifier in TypeScript, Go, C#, Java and Python
    (``ephemeral-storage`` -> ``ephemeralStorage``; a name that is one already is kept)."""
    if _IDENTIFIER.fullmatch(name):
        return name
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    first = words[0] if words else "property"
    text = first[0].lower() + first[1:] + "".join(w[0].upper() + w[1:] for w in words[1:])
    return text if text[0].isalpha() else f"p{text}"


def components() -> list[type[pulumi.ComponentResource]]:
    """The public components, listed explicitly (the host serves exactly these)."""
    from . import (
        ClusterAutoscaler,
        GpuObservability,
        KarpenterController,
        KarpenterPool,
        MetricsServer,
        NodeGroup,
        NvidiaDevicePlugin,
        Rack,
        RackCluster,
        Service,
    )

    return [
        Rack,
        RackCluster,
        KarpenterController,
        KarpenterPool,
        NodeGroup,
        ClusterAutoscaler,
        MetricsServer,
        NvidiaDevicePlugin,
        GpuObservability,
        Service,
    ]


def own_doc(cls: type) -> str:
    """A class's own docstring, without its Python example (an ``Example ...::`` paragraph and what follows)."""
    raw = vars(cls).get("__doc__")
    text = getattr(raw, "source_doc", raw)  # ``args.documented`` keeps the written docstring there
    text = inspect.cleandoc(text) if isinstance(text, str) else ""
    return re.split(r"\n\nExample[^\n]*::", text, maxsplit=1)[0].strip()


_PYTHON_ONLY = re.compile(r" ?\((?:in )?Python[^()]*\)|;? [Ii]n Python.*?\.(?=\s|$)", re.S)
"""Advice for Python programs only, in a docstring: ``(in Python also ...)``, ``; in Python also ....``,
``In Python, build it with ....``; the Python help keeps it, the schema drops it."""
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def neutral(text: str, names: set[str]) -> str:
    """A docstring as a description for every language: Markdown code spans (Python's ````x````), no advice
    for Python programs only, a field written with its schema name (``ami_id`` -> ``amiId``, for each snake_case
    word whose camelCase is one of ``names``, except in a stack-config key ``rack:...``), and JSON's ``null``,
    ``true`` and ``false`` for Python's ``None``, ``True`` and ``False``."""
    text = _PYTHON_ONLY.sub("", inspect.cleandoc(text))
    text = re.sub(r"``(.+?)``", r"`\1`", text, flags=re.S)

    def span(found: re.Match[str]) -> str:
        code = found.group(1)
        if code.startswith("rack:"):
            return found.group(0)
        code = _SNAKE.sub(lambda w: camel_case(w.group(0)) if camel_case(w.group(0)) in names else w.group(0), code)
        code = re.sub(r"\b(\w+)=(True|False)\b", lambda m: f"{m.group(1)}: {m.group(2).lower()}", code)
        return f"`{code}`"

    text = re.sub(r"`([^`]+)`", span, text)
    text = re.sub(r"\bNone\b", "none", text)
    return re.sub(r"\b(True|False)\b", lambda m: m.group(1).lower(), text)


def finished(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema the SDK's host generates, with ``METADATA`` and every description ``neutral``."""
    names = {
        name
        for section in ("resources", "types")
        for item in schema.get(section, {}).values()
        for props in ("properties", "inputProperties")
        for name in item.get(props, {})
    }

    def described(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: neutral(v, names) if k == "description" and isinstance(v, str) else described(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [described(v) for v in node]
        return node

    languages = {
        lang: {**settings, **METADATA["language"].get(lang, {})}
        for lang, settings in schema.get("language", {}).items()
    }
    return {**described(schema), **{k: v for k, v in METADATA.items() if k != "language"}, "language": languages}


class RackAnalyzer(Analyzer):
    """The SDK's analyzer, reading specs' defaults and docstrings along a class's bases."""

    def analyze_component(self, component: type[pulumi.ComponentResource]) -> ComponentDefinition:
        definition = super().analyze_component(component)
        definition.description = own_doc(component) or None
        return definition

    def analyze_type(
        self, typ: type, *, is_component_output: bool
    ) -> tuple[dict[str, PropertyDefinition], dict[str, str]]:
        properties, mapping = super().analyze_type(typ, is_component_output=is_component_output)
        if isinstance(typ, type) and issubclass(typ, BaseModel):
            for schema_name, py_name in mapping.items():
                if not typ.model_fields[py_name].is_required():
                    properties[schema_name].optional = True
        named = {identifier(name): name for name in properties}  # the SDK keeps a name that is no identifier as it is
        return {new: properties[old] for new, old in named.items()}, {new: mapping[old] for new, old in named.items()}

    def get_docstring(self, typ: type, name: str) -> Optional[str]:
        for cls in getattr(typ, "__mro__", (typ,)):
            if cls is object:
                continue
            found = super().get_docstring(cls, name) or getattr(cls, "__field_docs__", {}).get(name)
            if found:
                return inspect.cleandoc(found)
        return None


def schema_path(path: str) -> str:
    """A property path in Python names -> the schema's (``pool.volume_iops[0]`` -> ``pool.volumeIops[0]``)."""
    return ".".join(camel_case(part) for part in path.split("."))


class RackProvider(sdk_component.ComponentProvider):
    """The SDK's component provider over ``components()``, with ``RackAnalyzer`` and per-property errors."""

    def __init__(self, version: str) -> None:
        with mock.patch.object(sdk_component, "Analyzer", RackAnalyzer):  # the host builds its analyzer by name
            super().__init__(components(), PACKAGE, NAMESPACE, version)
        self.schema = json.dumps(finished(json.loads(self.schema or "{}")))

    def get_state(self, instance: pulumi.ComponentResource, component_def: ComponentDefinition) -> dict[str, Any]:
        """The component's outputs in the schema's names at any depth: the SDK's host maps the fields of an object
        output, but not those of the objects in a list or a map (``Rack.lanes``), nor a field's own object."""
        state: dict[str, Any] = {}
        for schema_name, prop in component_def.outputs.items():
            value = getattr(instance, component_def.outputs_mapping[schema_name], None)
            if value is not None:
                state[schema_name] = self._to_schema(value, prop)
        return state

    def _to_schema(self, value: Any, prop: PropertyDefinition) -> Any:
        if isinstance(value, pulumi.Output):
            return value.apply(lambda known: self._to_schema(known, prop))
        if value is None:
            return None
        if prop.ref:
            found = self.get_type_definition(prop)
            if found is None:
                return value
            if found.enum:
                return getattr(value, "value", value)
            if not isinstance(value, dict):
                return value
            return {
                schema_name: self._to_schema(value[py_name], found.properties[schema_name])
                for schema_name, py_name in found.properties_mapping.items()
                if value.get(py_name) is not None
            }
        if prop.items is not None and isinstance(value, list):
            return [self._to_schema(item, prop.items) for item in value]
        if prop.additional_properties is not None and isinstance(value, dict):
            return {key: self._to_schema(item, prop.additional_properties) for key, item in value.items()}
        return value

    def map_inputs(self, inputs: pulumi.Inputs, component_def: ComponentDefinition) -> pulumi.Inputs:
        """The SDK's mapping of the inputs to Python names, with whole numbers of integer properties as ``int``:
        numbers arrive as floats, and the SDK's conversion of an integer property is overwritten by the float
        (``map_input_properties``, pulumi 3.272), so ``replicas: 2`` would reach the component as ``2.0``."""
        mapped = super().map_inputs(inputs, component_def)
        integers: pulumi.Inputs = self._integers(mapped, component_def.inputs, component_def.inputs_mapping)
        return integers

    def _integers(self, value: Any, properties: dict[str, PropertyDefinition], mapping: dict[str, str]) -> Any:
        if not isinstance(value, dict):
            return value
        out = dict(value)
        for schema_name, prop in properties.items():
            if mapping[schema_name] in out:
                out[mapping[schema_name]] = self._integer(out[mapping[schema_name]], prop)
        return out

    def _integer(self, value: Any, prop: PropertyDefinition) -> Any:
        if prop.type == PropertyType.INTEGER and isinstance(value, float) and value.is_integer():
            return int(value)
        if prop.ref:
            found = self.get_type_definition(prop)
            return (
                self._integers(value, found.properties, found.properties_mapping) if found and not found.enum else value
            )
        if prop.items is not None and isinstance(value, list):
            return [self._integer(v, prop.items) for v in value]
        if prop.additional_properties is not None and isinstance(value, dict):
            return {k: self._integer(v, prop.additional_properties) for k, v in value.items()}
        return value

    def checked(self, request: provider_pb2.ConstructRequest) -> provider_pb2.ConstructRequest:
        """A ``Construct`` request with its inputs checked against the schema, as they travel (refused with
        ``InputPropertiesError``), and ``upgraded`` for the SDK's reader (``provider_inputs``); an input the schema
        marks plain keeps its value whatever resources the engine lists it as coming from (``depending``)."""
        resource_type = request.type
        component = resource_type.split(":")[-1]
        if resource_type != f"{PACKAGE}:index:{component}" or component not in self._components:
            tokens = [f"{PACKAGE}:index:{c}" for c in self._components]
            meant = closest(resource_type, tokens)
            raise pulumi.InputPropertiesError(
                f"{rendered(resource_type)} is no component of this package"
                + (f" (did you mean {meant}?)" if meant else "")
                + f"; it constructs {', '.join(tokens)}",
                [],
            )
        properties = self._component_defs[component].inputs
        checked = provider_pb2.ConstructRequest()
        checked.CopyFrom(request)
        wire = provider_inputs.wire_values(request.inputs)
        for key, prop in properties.items():
            if prop.plain and key in request.inputDependencies:
                if key in wire:
                    wire[key] = provider_inputs.depending(
                        wire[key], prop, self.get_type_definition, list(request.inputDependencies[key].urns)
                    )
                del checked.inputDependencies[key]
        wire = {k: provider_inputs.upgraded(v, properties.get(k), self.get_type_definition) for k, v in wire.items()}
        found = provider_inputs.problems(wire, properties, component, self.get_type_definition)
        if found:
            raise provider_inputs.refusal(component, request.name, found)
        checked.inputs.Clear()
        checked.inputs.update(wire)
        return checked

    def construct(
        self, name: str, resource_type: str, inputs: pulumi.Inputs, options: Optional[pulumi.ResourceOptions] = None
    ) -> ConstructResult:
        """The SDK's ``construct``, of inputs ``checked`` (``RackServicer``), with a component's own per-property
        errors named in the schema's names."""
        component = resource_type.split(":")[-1]
        token = PROPERTY_NAMES.set(camel_case)  # a spec built from the program's data is named by its path there
        try:
            return super().construct(name, resource_type, inputs, options)
        except ComponentInitError as exc:
            inner = exc.inner
            component = resource_type.split(":")[-1]
            if isinstance(inner, pulumi.InputPropertiesError) and inner.errors:
                raise provider_inputs.refusal(
                    component, name, [(schema_path(e["property_path"]), e["reason"]) for e in inner.errors]
                ) from None
            if isinstance(inner, ConfigError):  # a lane the real APIs would refuse (a pinned AMI's facts): no traceback
                raise self.refused(component, name, inner) from None
            raise
        finally:
            PROPERTY_NAMES.reset(token)

    def refused(self, component: str, name: str, error: ConfigError) -> pulumi.InputPropertiesError:
        """A component's refusal found while it builds or at preview (a ``ConfigError``: a pinned AMI's facts), as
        the engine shows a bad input: a line that starts with a path of the component's inputs (``pool.disk: ``, a
        spec built from the program's data names its fields so) at that path, any other line where ``_located``
        finds it."""
        inputs = self._component_defs[component].inputs if component in self._component_defs else {}
        lines: list[str] = []
        errors: list[InputPropertyErrorDetails] = []
        for line in [line for line in str(error).splitlines() if line.strip()] or [type(error).__name__]:
            path, _, reason = line.partition(": ")
            if not (
                reason and re.fullmatch(r"[A-Za-z]\w*(\.\w+|\[\d+\])*", path) and re.split(r"[.\[]", path)[0] in inputs
            ):
                path, reason = self._located(component, line) if component in self._component_defs else ("", line)
            if path:
                errors.append({"property_path": path, "reason": reason})
            lines.append(f"{component} '{shown(name)}': {path + ': ' if path else ''}{reason}")
        return pulumi.InputPropertiesError("\n".join(lines), errors)

    def _located(self, component: str, line: str) -> tuple[str, str]:
        """A component's ``ConfigError`` line (``NodeGroupSpec.canary_ami_id: node group 'x': ...``) as a property
        path and reason: the spec's field under the input of that spec's type (``group.canaryAmiId``), else the
        input holding such a spec (a ``Rack``'s ``spec``) with the whole line, naming the lane."""
        where, _, reason = line.partition(": ")
        match = re.fullmatch(r"(\w+)\.(\w+)", where)
        inputs = self._component_defs[component].inputs
        if match:
            for key, prop in inputs.items():
                found = self.get_type_definition(prop) if prop.ref else None
                if found is not None and found.name == match.group(1):
                    return f"{key}.{camel_case(match.group(2))}", reason
            for key, prop in inputs.items():
                if self._holds(prop, match.group(1), set()):
                    return key, line
        return "", line

    def _holds(self, prop: PropertyDefinition, type_name: str, seen: set[str]) -> bool:
        """Whether a property's value holds an object of the type named ``type_name``, at any depth."""
        if prop.items is not None:
            return self._holds(prop.items, type_name, seen)
        if prop.additional_properties is not None:
            return self._holds(prop.additional_properties, type_name, seen)
        found = self.get_type_definition(prop) if prop.ref else None
        if found is None or found.enum or found.name in seen:
            return False
        return found.name == type_name or any(
            self._holds(p, type_name, seen | {found.name}) for p in found.properties.values()
        )


class RackServicer(server.ProviderServicer):
    """The SDK's gRPC servicer, with ``Construct``'s inputs ``checked`` before its reader reads them."""

    async def _construct(self, request: provider_pb2.ConstructRequest, context: Any) -> provider_pb2.ConstructResponse:
        assert isinstance(self.provider, RackProvider)
        token = DEPLOYMENT.set(ProviderDeployment(request.monitorEndpoint, request.providers.get("aws", "")))
        try:
            return await super()._construct(self.provider.checked(request), context)
        except ConfigError as exc:  # found once the component's outputs resolve (an apply): one line, not a traceback
            component = request.type.split(":")[-1]
            raise self.provider.refused(component, request.name, exc) from None
        finally:
            DEPLOYMENT.reset(token)


def version() -> str:
    """The schema's version: the installed package's, or ``0.0.0`` for a checkout that was never installed."""
    from . import __version__

    return __version__ if re.fullmatch(r"\d+\.\d+\.\d+", __version__) else "0.0.0"


def provider() -> RackProvider:
    return RackProvider(version())


def schema() -> dict[str, Any]:
    """The schema the provider serves (``GetSchema``)."""
    import json

    served: dict[str, Any] = json.loads(provider().schema or "{}")
    return served


def serve(args: Optional[list[str]] = None) -> None:
    """Serve the provider over gRPC, as a plugin: ``python <plugin dir> <engine address> [flags]``, which is how
    the Python language host runs a plugin folder with a ``__main__.py``. Prints the port, then serves."""
    with mock.patch.object(server, "ProviderServicer", RackServicer):  # ``main`` builds its servicer by name
        server.main(provider(), sys.argv[1:] if args is None else args)
