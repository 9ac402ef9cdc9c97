"""The engine's side of the provider protocol, for tests: a resource monitor and an engine served over gRPC,
and the component provider started as the Pulumi CLI's Python language host starts a plugin.

pulumi-language-python's ``RunPlugin`` (pulumi/pulumi ``sdk/python/cmd/pulumi-language-python/main.go``): for a
plugin folder with a ``__main__.py`` it runs ``<python> <plugin folder> <engine address> [flags]`` in the
engine's working directory, ``<python>`` the virtualenv ``PulumiPlugin.yaml`` names; the provider prints its
port on stdout (``pulumi.provider.main``), and the engine talks to it over gRPC (``GetSchema``, ``Construct``).

The monitor answers as the offline engine does (``RecordingMonitor`` over ``OfflineMocks``: the AMI catalog's
look-ups, a preview's unknowns), so what ``Construct`` registers compares with what the Python path
(``run_program``) registers, registration for registration.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from concurrent import futures
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime import settings
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc, provider_pb2, provider_pb2_grpc, resource_pb2_grpc

from mixed_os_racks.offline.catalog import Catalog
from mixed_os_racks.offline.cloud import OfflineMocks
from mixed_os_racks.offline.engine import stack_config_values
from mixed_os_racks.offline.monitor import RecordingMonitor
from mixed_os_racks.offline.records import Resource

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "provider"
PROJECT, STACK = "consumer", "dev"
STACK_URN = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
CONFIG = {"aws:region": "us-east-1"}
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""The wire's unknown value (pulumi ``sdk/go/common/resource/plugin/rpc.go``, ``UnknownStringValue``)."""


class _Recording(RecordingMonitor):
    """The offline engine's recording monitor, making URNs in the program's project and stack (the engine's,
    not this process's Pulumi settings: a Python program run here has its own)."""

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        qualified = parent.split("::")[2] if parent else ""
        if qualified and qualified != "pulumi:pulumi:Stack":
            type_ = f"{qualified}${type_}"
        return f"urn:pulumi:{STACK}::{PROJECT}::{type_}::{name}"


class _Monitor(resource_pb2_grpc.ResourceMonitorServicer):
    """The resource monitor: every call answered by the offline engine's recording monitor."""

    def __init__(self, config: Mapping[str, str]) -> None:
        self.recording = _Recording(OfflineMocks(Catalog.load(), stack_config_values(config)))

    def _call(self, method: str, request: Any) -> Any:
        # a resource reference in a request (a remote component's cluster or role) is rehydrated with a
        # getResource call to the current monitor, as under the offline engine: this one, in this gRPC thread's
        # own context (Pulumi's settings are context variables: the test's own runs keep theirs)
        settings.SETTINGS.monitor = self.recording
        return getattr(self.recording, method)(request)

    def SupportsFeature(self, request, context):  # noqa: N802 (gRPC method names)
        return self._call("SupportsFeature", request)

    def GetDeploymentInfo(self, request, context):  # noqa: N802
        return self._call("GetDeploymentInfo", request)

    def RegisterResource(self, request, context):  # noqa: N802
        return self._call("RegisterResource", request)

    def RegisterResourceOutputs(self, request, context):  # noqa: N802
        self._call("RegisterResourceOutputs", request)
        return empty_pb2.Empty()

    def Invoke(self, request, context):  # noqa: N802
        return self._call("Invoke", request)

    def ReadResource(self, request, context):  # noqa: N802
        return self._call("ReadResource", request)


class _Engine(engine_pb2_grpc.EngineServicer):
    def __init__(self) -> None:
        self.logs: list[str] = []

    def Log(self, request, context):  # noqa: N802
        self.logs.append(request.message)
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):  # noqa: N802
        return engine_pb2.GetRootResourceResponse(urn=STACK_URN)

    def SetRootResource(self, request, context):  # noqa: N802
        return engine_pb2.SetRootResourceResponse()


class EngineSide:
    """A monitor and an engine on one loopback port, for one ``Construct``."""

    def __init__(self, config: Mapping[str, str] = CONFIG) -> None:
        self.monitor, self.engine = _Monitor(config), _Engine()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(self.monitor, self.server)
        engine_pb2_grpc.add_EngineServicer_to_server(self.engine, self.server)
        self.address = f"127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"
        self.server.start()

    @property
    def registered(self) -> list[Resource]:
        return list(self.monitor.recording.recorded)

    @property
    def component_outputs(self) -> dict[str, dict[str, Any]]:
        return dict(self.monitor.recording.component_outputs)

    def close(self) -> None:
        self.server.stop(None)


class ProviderProcess:
    """The component provider, started as the Python language host starts a plugin folder."""

    def __init__(self, engine_address: str, cwd: Path) -> None:
        # stderr to a file, as the engine reads a plugin's stderr as it comes: a pipe nobody reads fills up (64 KiB of
        # logs of registrations a closed test engine refused), and the provider then blocks on its next log line
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, str(PLUGIN), engine_address], cwd=cwd, stdout=subprocess.PIPE, stderr=self.stderr
        )
        assert self.process.stdout is not None
        port = self.process.stdout.readline().decode().strip()
        if not port.isdigit():
            self.process.kill()
            self.stderr.seek(0)
            raise AssertionError(f"the provider printed no port: {port!r} {self.stderr.read().decode()[-3000:]}")
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = provider_pb2_grpc.ResourceProviderStub(self.channel)

    def schema(self) -> dict[str, Any]:
        return json.loads(self.stub.GetSchema(provider_pb2.GetSchemaRequest()).schema)

    def construct(
        self,
        engine: EngineSide,
        type_: str,
        name: str,
        inputs: Mapping[str, Any],
        config: Mapping[str, str] = CONFIG,
        dependencies: Optional[Mapping[str, list[str]]] = None,
    ) -> provider_pb2.ConstructResponse:
        """``Construct``, with ``dependencies`` the URNs the engine lists for each input (``inputDependencies``)."""
        struct = struct_pb2.Struct()
        struct.update(dict(inputs))
        return self.stub.Construct(
            provider_pb2.ConstructRequest(
                project=PROJECT,
                stack=STACK,
                config=dict(config),
                dryRun=True,
                parallel=4,
                monitorEndpoint=engine.address,
                type=type_,
                name=name,
                parent=STACK_URN,
                inputs=struct,
                inputDependencies={
                    k: provider_pb2.ConstructRequest.PropertyDependencies(urns=v)
                    for k, v in (dependencies or {}).items()
                },
                organization="organization",
            ),
            timeout=120,
        )

    def close(self) -> None:
        self.channel.close()
        self.process.kill()
        self.process.wait()
        self.stderr.close()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def serve_provider(folder: Path) -> Iterator[ProviderProcess]:
    """A provider started beside a fresh engine (the body of the ``provider`` fixture), closed after."""
    engine = EngineSide()
    process = ProviderProcess(engine.address, folder)
    yield process
    process.close()
    engine.close()


# The fixtures a test module takes by importing them (``from provider_helpers import provider, schema``): pytest reads
# a fixture from the module's namespace and scopes it to that module, so each importing module starts one provider
# process of its own and stops it after its last test.


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProviderProcess]:
    """The component provider, started once for the test module in a folder of its own."""
    yield from serve_provider(tmp_path_factory.mktemp("program"))


@pytest.fixture(scope="module")
def schema(provider: ProviderProcess) -> dict[str, Any]:
    """The schema the module's provider serves (``GetSchema``)."""
    return provider.schema()


def refused(provider: ProviderProcess, component: str, inputs: dict[str, Any]) -> grpc.RpcError:
    """The error the provider answers a Construct of ``component`` with ``inputs`` (the test fails if it takes it)."""
    engine = EngineSide()
    try:
        with pytest.raises(grpc.RpcError) as caught:
            provider.construct(engine, f"rack:index:{component}", "bad", inputs)
    finally:
        engine.close()
    return caught.value


def property_errors(error: grpc.RpcError) -> list[tuple[str, str]]:
    """The ``InputPropertiesError`` details of a failed call: ``(property path, reason)`` each."""
    from pulumi.runtime.proto import errors_pb2, status_pb2

    found = []
    for key, value in error.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                errors = errors_pb2.InputPropertiesError()
                if detail.Unpack(errors):
                    found += [(e.property_path, e.reason) for e in errors.errors]
    return found


def comparable(resources: list[Resource]) -> list[tuple[str, str, str, bool, str, str]]:
    """Registrations as the engine records them: URN, type, parent, custom, inputs (JSON), provider; sorted (the
    order of registrations that do not wait for each other is the event loop's)."""
    return sorted(
        (r.urn, r.type, r.parent, r.custom, json.dumps(r.inputs, sort_keys=True), r.provider)
        for r in resources
        if r.type != "pulumi:pulumi:Stack"
    )


def camel(inputs: Any) -> Any:
    """Python's argument names -> the schema's (``instance_families`` -> ``instanceFamilies``), at every depth
    (the tests' map keys, labels and tags, have no underscore)."""
    from pulumi.provider.experimental.util import camel_case

    if isinstance(inputs, dict):
        return {camel_case(k): camel(v) for k, v in inputs.items()}
    if isinstance(inputs, list):
        return [camel(v) for v in inputs]
    return inputs


def run_python(component: str, name: str, args: Mapping[str, Any], config: Optional[Mapping[str, Any]] = None) -> Any:
    """The Python path: the component built by a Python program with ``args``, run offline."""
    import mixed_os_racks
    from mixed_os_racks.offline import run_program

    def program() -> None:
        getattr(mixed_os_racks, component)(name, dict(args))

    return run_program(program, dict(config or CONFIG), project=PROJECT, stack=STACK)
