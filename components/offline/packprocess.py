"""One policy pack process, started as the Pulumi CLI starts a Python pack, and spoken to over
its gRPC analyzer protocol."""

from __future__ import annotations

import errno
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Mapping, Optional

import grpc
import yaml
from google.protobuf import empty_pb2
from pulumi.runtime.proto import analyzer_pb2 as pb
from pulumi.runtime.proto import analyzer_pb2_grpc

from ..inputs import TAG_MISFIT, YAML_TAG_ERRORS, closest, seconds_from_env
from . import sdk
from .engine import stack_config_values
from .policyconfig import LEVEL_NAMES, LEVELS, PolicyConfig, PolicyPackError, reconcile
from .records import STACK_TYPE, ProgramRun
from .wire import (
    outputs_known_at_registration,
    provider_of,
    resource_options,
    stack_properties,
    to_struct,
    wire_properties,
)

VIOLATION_LEVELS = {**LEVEL_NAMES, pb.REMEDIATE: "mandatory"}  # the CLI reports a remediate violation as mandatory
START_TIMEOUT_S = 120.0
"""How long a pack has to print its port, and then again to answer there and describe itself, unless
``$MIXED_OS_RACKS_PACK_START_S`` says otherwise (``start_limit``). A working pack needs 1-2 s on an idle machine,
and many times that on a loaded one. The Pulumi CLI waits for a plugin's port as long as the plugin runs, then
gives its gRPC server 10 s to answer (pulumi/pulumi ``sdk/go/common/resource/plugin/plugin.go``: ``newPlugin``
reads stdout until a newline with no deadline; ``dialPlugin`` waits ``pluginRPCConnectionTimeout``); a pack that
dies is named at once here too (its output ends), so the limit only bounds a pack that hangs."""
START_ENV = "MIXED_OS_RACKS_PACK_START_S"
RPC_TIMEOUT_S = 120.0
IN_FLIGHT = 512
"""``Analyze`` calls outstanding on the one channel at most (the pack serves 4 at a time, and queues the
rest): room for two of the groups the offline preview sends while the program runs (``analyzer``)."""
_MAX_MESSAGE = 400 * 1024 * 1024  # what the policy SDK's own server accepts


# ---- one running pack ----------------------------------------------------------------------------------


ENGINE_ADDRESS = "127.0.0.1:0"
"""The engine address the CLI passes a pack; the Python policy SDK reads it and never dials it."""


def start_limit() -> float:
    """The pack start limit in seconds: ``$MIXED_OS_RACKS_PACK_START_S``, else ``START_TIMEOUT_S``."""
    try:
        return seconds_from_env(START_ENV, START_TIMEOUT_S, "300")
    except ValueError as exc:
        raise PolicyPackError(str(exc)) from None


def _waited(limit: float) -> str:
    """How long the start was waited for, and how to wait longer."""
    return f"within {limit:g} s (on a busy machine, give it longer: {START_ENV}=<seconds>)"


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.0)


def _drain(fd: int) -> None:
    """Read a pack's stdout until it closes, so the pack never blocks writing to it."""
    try:
        while os.read(fd, 65536):
            pass
    except OSError:  # closed by ``close``
        pass


def _environment_hint(exc: OSError, env: Optional[Mapping[str, str]]) -> str:
    """For E2BIG: which variables made the environment too large."""
    if exc.errno != errno.E2BIG:
        return ""
    sizes = {key: len(key) + len(value) + 2 for key, value in (env if env is not None else os.environ).items()}
    biggest = sorted(sizes, key=lambda key: -sizes[key])[:3]
    return (
        " (its environment is too large; the biggest variables: "
        + ", ".join(f"{k} ({sizes[k]:,} bytes)" for k in biggest)
        + ")"
    )


def pack_python(path: Path, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """The interpreter the CLI's Python analyzer plugin runs a pack with, and any warning.

    With ``runtime.options.virtualenv`` in ``PulumiPolicy.yaml`` (relative to the pack), that
    virtualenv's python; without one, ``$PULUMI_PYTHON_CMD`` or else this interpreter (the CLI would
    take ``python3`` from the PATH). A virtualenv that does not exist makes the CLI fail to start the
    pack; the offline preview runs it with this interpreter instead, and says so.
    """
    try:
        doc = yaml.safe_load((path / "PulumiPolicy.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise PolicyPackError(f"policy pack {path}: cannot read PulumiPolicy.yaml ({exc})") from None
    except YAML_TAG_ERRORS:
        raise PolicyPackError(f"policy pack {path}: cannot read PulumiPolicy.yaml ({TAG_MISFIT})") from None
    options = (
        ((doc.get("runtime") or {}).get("options") or {})
        if isinstance(doc, dict) and isinstance(doc.get("runtime"), dict)
        else {}
    )
    venv = options.get("virtualenv") if isinstance(options, dict) else None
    if not venv:
        return env.get("PULUMI_PYTHON_CMD") or sys.executable, []
    venv_dir = (path / str(venv)).resolve()
    python = venv_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if python.exists():
        return str(python), []
    return sys.executable, [
        f"policy pack {path}: its virtualenv {venv_dir} does not exist, so `pulumi preview --policy-pack` "
        f"could not start it; running it with {sys.executable} (create it: `pulumi install` in {path}, or "
        f"python -m venv {venv_dir} && {venv_dir}/bin/pip install -r {path}/requirements.txt)"
    ]


class PolicyPackProcess:
    """A policy pack started as the CLI starts it (``<python> -u -m pulumi.policy <engine> <pack dir>``,
    in the pack's directory, with the pack's virtualenv), with one gRPC channel to it. Use as a context
    manager (or call ``close``): the process is killed however the block ends.

    The pack must print its port within the start limit (``start_limit``), then answer there and describe
    itself (``GetAnalyzerInfo``) within the limit again; a pack that does not is killed and named with what it
    failed to do, and how to allow it longer.
    With ``wait=False`` the process is only started; ``handshake`` then does the rest (on another
    thread, while ``close`` may be called from this one).
    """

    def __init__(self, path: Path | str, env: Optional[Mapping[str, str]] = None, *, wait: bool = True) -> None:
        self.path = Path(path).resolve()
        if not (self.path / "PulumiPolicy.yaml").is_file():
            raise PolicyPackError(f"policy pack {path} not found: no PulumiPolicy.yaml in {self.path}")
        if not (self.path / "__main__.py").is_file():
            # `python -m pulumi.policy <engine> <dir>` runs the folder as a script (runpy), which needs its
            # __main__.py; the CLI's Python host refuses such a plugin folder before starting it
            raise PolicyPackError(
                f"policy pack {path} is not runnable: it provides no __main__.py (a Python pack's "
                f"__main__.py creates its PolicyPack; add one, or pass the pack's own folder)"
            )
        self.python, self.warnings = pack_python(self.path, env if env is not None else os.environ)
        self._limit = start_limit()  # a limit that is no number is named before the pack starts
        self._lock = threading.Lock()
        self._closed = False
        self._channel: Optional[grpc.Channel] = None
        self._ready: Optional[grpc.Future] = None
        self._readers: list[threading.Thread] = []
        self._stderr = tempfile.TemporaryFile()
        command = [self.python, "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, str(self.path)]
        try:
            self._proc = subprocess.Popen(
                command,
                cwd=self.path,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=dict(env) if env is not None else None,
            )
        except OSError as exc:
            self._stderr.close()
            raise PolicyPackError(
                f"policy pack {self.path} failed to start: cannot run {self.python}: "
                f"{exc.strerror or exc}{_environment_hint(exc, env)}"
            ) from None
        if wait:
            try:
                self.handshake()
            except BaseException:
                self.close()
                raise

    @property
    def pid(self) -> int:
        return self._proc.pid

    def handshake(self) -> None:
        """Read the port, then connect and ask ``GetAnalyzerInfo``, each within the start limit (as the CLI's
        own wait for the connection starts once it has the port)."""
        limit = self._limit
        port = self._read_port(time.monotonic() + limit, limit)
        deadline = time.monotonic() + limit
        self._connect(port, deadline, limit)
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self._channel)
        try:
            self.info: pb.AnalyzerInfo = self.stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=_left(deadline))
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise self._failed(f"did not answer GetAnalyzerInfo on port {port} {_waited(limit)}") from None
            raise self._rpc_failed(exc) from None

    def _read_port(self, deadline: float, limit: float) -> int:
        """The first line the pack prints is its port; stdout is drained afterwards so it never blocks."""
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        printed = b""
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in printed:
                if self._closed or not selector.select(timeout=_left(deadline)):
                    raise self._failed(f"printed no port {_waited(limit)}")
                chunk = os.read(fd, 4096)
                if not chunk:  # end of output: the pack exited; let it finish writing its error
                    raise self._failed(self._exited("before printing its port", deadline))
                printed += chunk
                if len(printed) > 4096:
                    break
        line = printed.split(b"\n", 1)[0].decode(errors="replace").strip()
        if not line.isdigit() or not 0 < int(line) < 65536:
            raise self._failed(f"printed {line[:80]!r} instead of a port")
        drainer = threading.Thread(target=_drain, args=(fd,), daemon=True)
        self._readers.append(drainer)
        drainer.start()
        return int(line)

    def _exited(self, when: str, deadline: float) -> str:
        try:
            code = self._proc.wait(timeout=max(_left(deadline), 0.1))
        except subprocess.TimeoutExpired:
            return f"closed its output {when}"
        return f"exited {when} (exit code {code})"

    def _connect(self, port: int, deadline: float, limit: float) -> None:
        """A channel to ``port``, ready: something must listen there (refused at once otherwise) and speak gRPC."""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=_left(deadline)).close()
        except OSError as exc:
            raise self._failed(f"printed port {port}, but nothing answers there ({exc.strerror or exc})") from None
        with self._lock:  # ``kill`` may run meanwhile, on another thread: it closes what is made here
            stopped = self._closed
            if not stopped:
                self._channel = grpc.insecure_channel(
                    f"127.0.0.1:{port}",
                    options=[
                        ("grpc.max_receive_message_length", _MAX_MESSAGE),
                        ("grpc.max_send_message_length", _MAX_MESSAGE),
                    ],
                )
                self._ready = ready = grpc.channel_ready_future(self._channel)
        if stopped:
            raise self._failed("was stopped while starting")
        try:
            ready.result(timeout=_left(deadline))
        except (grpc.FutureTimeoutError, grpc.FutureCancelledError):
            if self._closed:
                raise self._failed("was stopped while starting") from None
            raise self._failed(f"printed port {port}, but no gRPC server answered there {_waited(limit)}") from None

    def _failed(self, what: str) -> PolicyPackError:
        tail: list[str] = []
        with self._lock:
            if not self._stderr.closed:
                self._stderr.seek(0)
                tail = self._stderr.read().decode(errors="replace").strip().splitlines()[-12:]
        detail = ("\n  " + "\n  ".join(tail)) if tail else ""
        return PolicyPackError(f"policy pack {self.path} failed to start: it {what}{detail}")

    def _call(self, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=RPC_TIMEOUT_S)
        except grpc.RpcError as exc:
            raise self._rpc_failed(exc) from None

    def _rpc_failed(self, exc: grpc.RpcError) -> PolicyPackError:
        return PolicyPackError(f"policy pack {self.path}: {exc.code().name}: {exc.details()}")

    def kill(self) -> None:
        """Stop the process and the channel at once (safe from any thread; ``close`` still follows)."""
        with self._lock:
            self._closed = True
            if self._ready is not None:  # a start waiting for the channel stops waiting (once: grpc's
                self._ready.cancel()  # future fails when cancelled twice)
                self._ready = None
            if self._channel is not None:
                self._channel.close()
                self._channel = None
        if self._proc.poll() is None:
            self._proc.kill()

    def close(self) -> None:
        self.kill()
        self._proc.wait()
        for reader in self._readers:  # its process is gone: it reads the end of the output at once
            reader.join(timeout=2)
        with self._lock:
            if self._proc.stdout is not None and not any(r.is_alive() for r in self._readers):
                self._proc.stdout.close()
            self._stderr.close()

    def __enter__(self) -> "PolicyPackProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the protocol ----

    def configure(
        self,
        user: Optional[PolicyConfig] = None,
        run: Optional[ProgramRun] = None,
        beneath: Optional[PolicyConfig] = None,
    ) -> PolicyConfig:
        """``ConfigureStack`` (when a run is given) and ``Configure`` with the reconciled config (``beneath``:
        what the offline preview gives under the user's, ``reconcile``)."""
        if run is not None:
            self._call(
                self.stub.ConfigureStack,
                pb.AnalyzerStackConfigureRequest(stack=run.stack, project=run.project, dry_run=True),
            )
        config = reconcile(self.info, user or {}, beneath)
        policies = {p.name for p in self.info.policies}
        for name in sorted(set(user or {}) - policies - {"all"}):
            meant = closest(name, policies)
            self.warnings.append(
                f"policy pack config: '{name}' is not a policy of {self.info.name}, so it is ignored (as "
                f"pulumi ignores it)" + (f"; did you mean '{meant}'?" if meant else "")
            )
        request = pb.ConfigureAnalyzerRequest(
            policyConfig={
                name: pb.PolicyConfig(enforcementLevel=LEVELS[level or "advisory"], properties=to_struct(props))
                for name, (level, props) in config.items()
            }
        )
        try:
            self.stub.Configure(request, timeout=RPC_TIMEOUT_S)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.INVALID_ARGUMENT:  # the pack refuses its config: an error, as a
                raise PolicyPackError(str(exc.details())) from None  # schema error is (the CLI stops on both)
            raise self._rpc_failed(exc) from None
        return config

    def analyze(self, run: ProgramRun, provider_config: Optional[Mapping[str, Any]] = None) -> list[dict[str, Any]]:
        """``Analyze`` every resource, then ``AnalyzeStack`` once: the violations, as dicts."""
        analysis = self.analysis(run.project, run.stack, provider_config)
        for resource in run.resources:
            analysis.add(resource)
        return analysis.finish()

    def analysis(self, project: str, stack: str, provider_config: Optional[Mapping[str, Any]] = None) -> "Analysis":
        """An analysis fed one resource at a time (``Analysis.add``), as the CLI feeds a pack during a preview."""
        return Analysis(self, project, stack, provider_config or {})

    def _result(self, future: Any) -> pb.AnalyzeResponse:
        try:
            response: pb.AnalyzeResponse = future.result()
            return response
        except grpc.RpcError as exc:
            raise self._rpc_failed(exc) from None

    def _violation(self, d: pb.AnalyzeDiagnostic, urn: str) -> dict[str, Any]:
        prefix = d.description + "\n"
        message = d.message[len(prefix) :] if d.description and d.message.startswith(prefix) else d.message
        return {
            "policy": d.policyName,
            "pack": d.policyPackName or self.info.name,
            "level": VIOLATION_LEVELS[d.enforcementLevel],
            "urn": urn,
            "message": message,
        }


class Analysis:
    """One preview's resources through one pack, as the CLI sends them: ``Analyze`` for each resource
    once it is registered, so the pack can work while the program still runs (up to ``IN_FLIGHT`` calls
    outstanding; ``add`` waits for the oldest beyond that), then ``AnalyzeStack`` once over them all,
    when the program is done (``finish``): a component's registered outputs are known only then."""

    def __init__(self, pack: PolicyPackProcess, project: str, stack: str, provider_config: Mapping[str, Any]) -> None:
        self._pack = pack
        self._run = ProgramRun(project=project, stack=stack, resources=[], outputs={})
        self._provider_config = provider_config
        self._by_urn: dict[str, Any] = {}
        self._requests: list[pb.AnalyzeRequest] = []
        self._pending: deque[Any] = deque()
        self._responses: list[pb.AnalyzeResponse] = []
        self._stack = pb.AnalyzeStackRequest()
        """``AnalyzeStack``'s request, one entry added with each resource."""
        self._components: list[tuple[pb.AnalyzerResource, pb.AnalyzeRequest, Any]] = []
        """Entries whose properties (a component's registered outputs) are known only at the end."""

    def add(self, resource: Any) -> None:
        """Send ``Analyze`` for one registered resource (its provider, if explicit, was registered before it)."""
        self._by_urn[resource.urn] = resource
        self._run.resources.append(resource)
        request = pb.AnalyzeRequest(
            type=resource.type,
            name=resource.name,
            urn=resource.urn,
            properties=wire_properties(resource.properties),
            options=resource_options(resource),
            provider=provider_of(resource, self._by_urn, self._run, self._provider_config),
        )
        self._requests.append(request)
        self._pending.append(self._pack.stub.Analyze.future(request, timeout=RPC_TIMEOUT_S))
        entry = self._stack.resources.add(
            type=resource.type,
            name=resource.name,
            urn=resource.urn,
            options=request.options,
            provider=request.provider,
            parent=resource.parent,
            dependencies=resource.dependencies,
            propertyDependencies={
                k: pb.AnalyzerPropertyDependencies(urns=v) for k, v in resource.property_dependencies.items()
            },
        )
        if outputs_known_at_registration(resource):
            entry.properties.CopyFrom(stack_properties(request, resource))
        else:
            self._components.append((entry, request, resource))
        while len(self._pending) > IN_FLIGHT:
            self._responses.append(self._pack._result(self._pending.popleft()))

    def finish(self) -> list[dict[str, Any]]:
        """The answers to every ``Analyze``, then ``AnalyzeStack``: the violations, as dicts."""
        while self._pending:
            self._responses.append(self._pack._result(self._pending.popleft()))
        run, violations = self._run, []
        for request, response in zip(self._requests, self._responses):
            violations += [self._pack._violation(d, request.urn) for d in response.diagnostics]
        stack_urn = f"urn:pulumi:{run.stack}::{run.project}::{STACK_TYPE}::{run.project}-{run.stack}"
        for entry, request, resource in self._components:
            entry.properties.CopyFrom(stack_properties(request, resource))
        self._components = []
        response = self._pack._call(self._pack.stub.AnalyzeStack, self._stack)
        violations += [
            self._pack._violation(d, d.urn if d.urn in self._by_urn else stack_urn) for d in response.diagnostics
        ]
        return violations


def pack_env(project: str, stack: str, stack_config: Optional[Mapping[str, Any]] = None) -> dict[str, str]:
    """The environment the CLI gives a pack: ours, plus the stack's config (as the program gets it:
    ``"ns:key"`` -> text), project, stack and dry run. That is all a pack needs; a config too large
    for ``PULUMI_CONFIG`` is refused before any pack starts (``sdk.oversized_config``)."""
    env = dict(os.environ)
    env.update(
        {
            "PULUMI_ORGANIZATION": "organization",
            "PULUMI_PROJECT": project,
            "PULUMI_STACK": stack,
            "PULUMI_DRY_RUN": "true",
        }
    )
    if stack_config:
        env[sdk.CONFIG_ENV] = sdk.config_env_value(stack_config_values(stack_config))
    return env
