"""Remote components constructed by their package's provider, started as the engine starts a plugin.

Under ``pulumi preview`` a program in another language that uses this package's components registers each one
as a remote component (``rack:index:KarpenterPool``, ``remote: true``), as the SDK that ``pulumi package add``
generates does. The engine hands the registration to the package's provider, ``Construct`` (pulumi/pulumi
``pkg/resource/deploy/source_eval.go``), with its own resource monitor's address; the provider builds the
component there, so the component and its children are registered with the engine, and the policy packs judge
them.

The package is source-based (``provider/PulumiPlugin.yaml``, ``runtime: python``): the consumer's
``Pulumi.yaml`` names its folder under ``packages:`` (``pulumi package add`` writes it), and the Python language
host runs the folder as ``<python> <folder> <engine address>`` (``sdk/python/cmd/pulumi-language-python/main.go``,
``RunPlugin``), with the virtualenv ``PulumiPlugin.yaml`` names. The provider prints its port; the engine then
calls ``Configure`` (with the package's config: the stack config in its namespace) and ``Construct``
(``pkg/resource/plugin/provider_plugin.go``). ``ComponentProvider`` does the same, once per run, on the first
component. Offline, a virtualenv that was never made (``pulumi install`` makes it) is replaced by this
interpreter, which has this package; and a program whose ``Pulumi.yaml`` names no folder for the package (a Git
URL the machine cannot fetch, or nothing) gets this installed package's own provider
(``mixed_os_racks.provider.serve``, what ``provider/__main__.py`` runs).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Optional

import grpc
import yaml
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

from ..inputs import YAML_TAG_ERRORS
from .resmon import ConstructError
from .wire import to_struct

PACKAGE = "rack"
"""This package's name in its schema: its components' type tokens are ``rack:index:<Component>``."""
OWN_ENTRY = "from mixed_os_racks.provider import serve; serve()"
"""What ``provider/__main__.py`` runs: the provider of the installed package."""
START_TIMEOUT_S = 60.0
"""A provider has this long to print its port (importing the Pulumi SDKs for AWS, EKS and Kubernetes takes a few
seconds)."""
MAX_MESSAGE = 400 * 1024 * 1024


class ProviderStartError(ConstructError):
    """A component provider that could not be started or configured: the message names it and what it printed."""


def plugin_folder(project_dir: Path, packages: Mapping[str, Any], package: str) -> tuple[Optional[Path], str]:
    """The plugin folder ``Pulumi.yaml`` names for ``package`` under ``packages:`` (a path, or ``{source: path}``,
    relative to the project), and a warning. None when it names none (the installed package's provider serves), or
    names a Git repository or a registry's package, which a machine offline cannot fetch (the warning says so). A
    path that is not a plugin folder is refused (``ValueError``, naming it), as the CLI refuses it."""
    entry = packages.get(package)
    if entry is None:
        return None, ""
    source = entry.get("source") if isinstance(entry, dict) else entry
    if not isinstance(source, str) or not source:
        raise ValueError(f"expected a plugin's source (a folder, a Git URL or a package name), got {entry!r}")
    local = source.startswith((".", "/", "~")) or (project_dir / source).is_dir()
    if not local:
        return None, (
            f"{source} cannot be fetched offline: its components are constructed by the provider of the "
            f"installed mixed-os-racks"
        )
    folder = (project_dir / Path(source).expanduser()).resolve()
    if not (folder / "PulumiPlugin.yaml").is_file():
        raise ValueError(f"{source}: no PulumiPlugin.yaml in {folder} (the folder `pulumi package add` was given)")
    return folder, ""


def plugin_python(folder: Path) -> str:
    """The interpreter the Python language host runs a plugin folder with: the virtualenv ``PulumiPlugin.yaml``
    names (``runtime.options.virtualenv``), when it exists; else this one."""
    try:
        doc = yaml.safe_load((folder / "PulumiPlugin.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError, *YAML_TAG_ERRORS) as exc:
        raise ProviderStartError(f"component provider {folder}: cannot read PulumiPlugin.yaml ({exc})") from None
    runtime = doc.get("runtime") if isinstance(doc, dict) else None
    options = runtime.get("options") if isinstance(runtime, dict) else None
    venv = options.get("virtualenv") if isinstance(options, dict) else None
    python = (folder / str(venv) / "bin" / "python") if venv else None
    return str(python) if python is not None and python.exists() else sys.executable


class ComponentProvider:
    """One package's component provider for one run: started on the first ``construct`` (with the engine address the
    request names: the monitor and the engine are served at one address), configured, then asked to ``Construct``
    each component. ``close`` kills it."""

    def __init__(self, package: str, folder: Optional[Path], cwd: Path, config: Mapping[str, str]) -> None:
        self.package = package
        self.folder = folder
        self.cwd = cwd
        self.config = dict(config)
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen[bytes]] = None
        self._channel: Optional[grpc.Channel] = None
        self._stub: Optional[provider_pb2_grpc.ResourceProviderStub] = None
        self._stderr = tempfile.TemporaryFile()
        self._closed = False
        self._refused: Optional[ProviderStartError] = None

    @property
    def name(self) -> str:
        return (
            f"component provider {self.folder}"
            if self.folder
            else f"the {self.package} component provider ({OWN_ENTRY})"
        )

    def construct(self, request: provider_pb2.ConstructRequest) -> provider_pb2.ConstructResponse:
        """``Construct`` (a failure is the provider's ``grpc.RpcError``, as the engine gets it)."""
        stub = self._started(request.monitorEndpoint)
        response: provider_pb2.ConstructResponse = stub.Construct(request)
        return response

    def _started(self, engine: str) -> provider_pb2_grpc.ResourceProviderStub:
        with self._lock:
            if self._closed:
                raise ProviderStartError(f"{self.name} was stopped")
            if self._refused is not None:  # said once: every component waits on the same start
                raise self._refused
            if self._stub is None:
                try:
                    self._stub = self._start(engine)
                except ProviderStartError as exc:
                    self._refused = exc
                    raise
            return self._stub

    def _start(self, engine: str) -> provider_pb2_grpc.ResourceProviderStub:
        if self.folder is not None:
            command = [plugin_python(self.folder), str(self.folder), engine]
        else:
            command = [sys.executable, "-c", OWN_ENTRY, engine]
        try:
            self._process = subprocess.Popen(
                command, cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr
            )
        except OSError as exc:
            raise ProviderStartError(
                f"{self.name} failed to start: cannot run {command[0]}: {exc.strerror or exc}"
            ) from None
        port = self._read_port()
        self._channel = grpc.insecure_channel(
            f"127.0.0.1:{port}",
            options=[("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)],
        )
        stub = provider_pb2_grpc.ResourceProviderStub(self._channel)
        prefix = f"{self.package}:"
        variables = {key: value for key, value in self.config.items() if key.startswith(prefix)}
        try:  # as the engine configures a default provider: its package's config, by key and as arguments
            stub.Configure(
                provider_pb2.ConfigureRequest(
                    variables=variables,
                    args=to_struct({k[len(prefix) :]: v for k, v in variables.items()}),
                    acceptSecrets=True,
                    acceptResources=True,
                ),
                timeout=START_TIMEOUT_S,
            )
        except grpc.RpcError as exc:
            raise self._failed(f"refused Configure: {exc.code().name}: {exc.details()}") from None
        return stub

    def _read_port(self) -> int:
        """The first line the provider prints is its port; its output is drained afterwards so it never blocks."""
        assert self._process is not None and self._process.stdout is not None
        fd = self._process.stdout.fileno()
        deadline = time.monotonic() + START_TIMEOUT_S
        printed = b""
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in printed and len(printed) < 4096:
                if not selector.select(timeout=max(deadline - time.monotonic(), 0.0)):
                    raise self._failed(f"printed no port within {START_TIMEOUT_S:g} s")
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise self._failed(f"exited before printing its port (exit code {self._process.wait()})")
                printed += chunk
        line = printed.split(b"\n", 1)[0].decode(errors="replace").strip()
        if not line.isdigit() or not 0 < int(line) < 65536:
            raise self._failed(f"printed {line[:80]!r} instead of a port")
        threading.Thread(target=_drain, args=(fd,), daemon=True).start()
        return int(line)

    def _failed(self, what: str) -> ProviderStartError:
        self._stderr.seek(0)
        tail = self._stderr.read().decode(errors="replace").strip().splitlines()[-12:]
        return ProviderStartError(f"{self.name}: it {what}" + "".join(f"\n  {line}" for line in tail))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._channel is not None:
                self._channel.close()
            if self._process is not None and self._process.poll() is None:
                self._process.kill()
            if self._process is not None:
                self._process.wait()
                if self._process.stdout is not None:
                    self._process.stdout.close()
            self._stderr.close()


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
