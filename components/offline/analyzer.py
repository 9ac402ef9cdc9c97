"""Run CrossGuard policy packs over an offline run, the way the Pulumi CLI runs them over a preview.

A pack is started as the CLI starts one (``<python> <pack dir>``, working directory the pack,
``PULUMI_*`` environment), and spoken to over its real gRPC analyzer protocol: the port it prints
on stdout, ``ConfigureStack``, ``GetAnalyzerInfo``, ``Configure`` with the config reconciled as the
CLI reconciles it (policy defaults and schema defaults, the pack's initial config, then the user's
``--policy-pack-config`` file, then a schema check), ``Analyze`` for every registered resource
(custom and component, with its options and provider), ``AnalyzeStack`` once. Then the process is
killed, also on errors.

Like the CLI, ``Analyze`` gets each resource's inputs and ``AnalyzeStack`` each resource's outputs
(pulumi ``pkg/resource/deploy/step_generator.go``, ``AnalyzeResources``, sends ``v.Outputs``): for a
custom resource created by a preview, its inputs plus unknowns; for a component, what it registered
with ``register_outputs`` (nothing, when it registered none). A remote component's outputs come from
its provider, which the offline engine does not run: it gets the inputs it was given, a divergence
the README states (the pack also judges the children the engine expands such a component into).
"""

from __future__ import annotations

import errno
import json
import math
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

import grpc
import yaml
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2 as pb
from pulumi.runtime.proto import analyzer_pb2_grpc

from ..inputs import MAX_NESTING, nesting_depth
from . import sdk
from .engine import STACK_TYPE, ProgramRun, Resource, stack_config_values
from .stackfile import InputFileError, read_utf8

LEVELS = {"advisory": pb.ADVISORY, "mandatory": pb.MANDATORY, "remediate": pb.REMEDIATE, "disabled": pb.DISABLED}
_LEVEL_OF = {value: name for name, value in LEVELS.items()}
VIOLATION_LEVELS = {**_LEVEL_OF, pb.REMEDIATE: "mandatory"}  # the CLI reports a remediate violation as mandatory
START_TIMEOUT_S = 10.0
"""A pack has this long to print its port, answer there and describe itself (a working pack needs 1-2 s)."""
RPC_TIMEOUT_S = 120.0
IN_FLIGHT = 16  # Analyze calls outstanding on the one channel (the pack serves 4 at a time)
_MAX_MESSAGE = 400 * 1024 * 1024  # what the policy SDK's own server accepts

PolicyConfig = dict[str, tuple[str, Optional[dict[str, Any]]]]
"""Policy (or ``all``) -> (enforcement level or '', properties or None), as the CLI holds it."""


class PolicyPackError(Exception):
    """A pack that cannot start, answer, or be configured. The offline CLI exits 2 with it."""


# ---- the config file, merged as the CLI merges it ----------------------------------------------------


class _NotFinite:
    """A JSON number Python would read as NaN or an infinity (``NaN``, ``Infinity``, ``1e400``)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _finite_float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else _NotFinite(text)


def _not_finite(doc: Any) -> Optional[tuple[str, str]]:
    """The key path and text of the first non-finite number in ``doc`` (iterative: any depth)."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _NotFinite):
            return path, value.text
        if isinstance(value, dict):
            stack += [(f"{path}.{k}" if path else str(k), v) for k, v in reversed(list(value.items()))]
        elif isinstance(value, list):
            stack += [(f"{path}[{n}]", v) for n, v in reversed(list(enumerate(value)))]
    return None


def read_config_file(path: Path) -> PolicyConfig:
    """``{"all": "mandatory", "<policy>": "advisory" | {"enforcementLevel": ..., "<prop>": ...}}``.

    The file must be UTF-8 JSON, as the CLI's (Go) JSON reader needs; a number that is not finite
    (``NaN``, ``Infinity``, ``1e400``, which Python's reader accepts and Go's and the pack's
    protobuf encoder do not) is refused here, naming the key; so is nesting deeper than
    ``MAX_NESTING``.
    """
    try:
        text = read_utf8(Path(path), "policy pack config")
    except InputFileError as exc:
        raise PolicyPackError(str(exc)) from None
    if not text.strip():
        return {}
    too_deep = False
    try:
        doc = json.loads(text, parse_constant=_NotFinite, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise PolicyPackError(f"policy pack config {path} is not valid JSON: {exc}") from None
    except RecursionError:
        too_deep = True
    if too_deep or nesting_depth(doc) > MAX_NESTING:
        raise PolicyPackError(f"policy pack config {path}: nested deeper than {MAX_NESTING} levels (no policy config needs that)")
    found = _not_finite(doc)
    if found:
        key, number = found
        raise PolicyPackError(f"policy pack config {path}: {key}: {number} is not a finite number (JSON has no NaN or Infinity)")
    if not isinstance(doc, dict):
        raise PolicyPackError(f"policy pack config {path}: expected a JSON object")
    return parse_config(doc, str(path))


def parse_config(doc: Mapping[str, Any], source: str = "<config>") -> PolicyConfig:
    config: PolicyConfig = {}
    for key, value in doc.items():
        if isinstance(value, str):
            level, props = value, None
        elif isinstance(value, dict):
            props = dict(value)
            level = props.pop("enforcementLevel", "")
            if not isinstance(level, str):
                raise PolicyPackError(f"policy pack config {source}: {key}: {level!r} is not a valid enforcement level")
            props = props or None
        else:
            raise PolicyPackError(f"policy pack config {source}: {key}: {value!r} is not a valid value; must be a string or object")
        if level and level not in LEVELS:
            raise PolicyPackError(f"policy pack config {source}: {key}: '{level}' is not a valid enforcement level")
        if level or props:
            config[key] = (level, props)
    return config


def _apply(result: PolicyConfig, given: PolicyConfig) -> None:
    everything = given.get("all")
    if everything and everything[0]:
        for name, (_, props) in list(result.items()):
            result[name] = (everything[0], props)
    for name, (level, props) in given.items():
        if name not in result:  # the CLI skips a name that is no policy of the pack (ReconcilePolicyPackConfig)
            continue
        current_level, current_props = result.get(name, ("", None))
        merged = dict(current_props or {})
        merged.update(props or {})
        result[name] = (level or current_level, merged or None)


def reconcile(info: pb.AnalyzerInfo, user: PolicyConfig) -> PolicyConfig:
    """Defaults (each policy's level and its schema's ``default``s), the pack's initial config,
    then the user's file; then every policy's properties checked against its schema."""
    result: PolicyConfig = {}
    schemas: dict[str, dict[str, Any]] = {}
    for policy in info.policies:
        schema = json_format.MessageToDict(policy.configSchema.properties)
        defaults = {k: v["default"] for k, v in schema.items() if isinstance(v, dict) and "default" in v}
        result[policy.name] = (_LEVEL_OF[policy.enforcementLevel], defaults or None)
        schemas[policy.name] = {"type": "object", "properties": schema, **({"required": list(policy.configSchema.required)} if policy.configSchema.required else {})}
    initial: PolicyConfig = {
        name: (_LEVEL_OF[c.enforcementLevel], json_format.MessageToDict(c.properties) or None)
        for name, c in info.initialConfig.items()
    }
    _apply(result, initial)
    _apply(result, user)
    problems = []
    for name, schema in schemas.items():
        problems += [f"{name}: {message}" for message in _schema_errors(schema, (result.get(name) or ("", None))[1] or {})]
    if problems:
        raise PolicyPackError(f"invalid policy pack config for '{info.name}':\n  " + "\n  ".join(problems))
    return result


def _schema_errors(schema: Mapping[str, Any], value: Mapping[str, Any]) -> list[str]:
    import jsonschema

    return [
        (f"{'.'.join(str(p) for p in error.absolute_path)}: " if error.absolute_path else "") + error.message
        for error in sorted(jsonschema.Draft7Validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    ]


_SIG = sdk.SIG_KEY
_RESOURCE_SIG = sdk.RESOURCE_SIG


def wire_properties(struct: struct_pb2.Struct) -> struct_pb2.Struct:
    """Properties as the CLI sends them to an analyzer: unknowns and secrets kept, resource
    references downgraded to the resource's id (or, without one, its URN)."""
    if _RESOURCE_SIG.encode() not in struct.SerializeToString():
        return struct
    return _struct(_downgrade(json_format.MessageToDict(struct)))


def _stack_properties(request: pb.AnalyzeRequest, resource: Resource) -> struct_pb2.Struct:
    """What ``AnalyzeStack`` gets for a resource: its outputs (a custom resource's previewed inputs;
    a component's registered outputs, or none)."""
    if resource.custom or resource.remote:
        return request.properties
    if resource.registered_outputs is None:
        return struct_pb2.Struct()
    return wire_properties(resource.registered_outputs)


def _downgrade(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(_SIG) == _RESOURCE_SIG:
            return value.get("id") or value.get("urn", "")
        return {k: _downgrade(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_downgrade(v) for v in value]
    return value


def _struct(value: Optional[Mapping[str, Any]]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    if value:
        struct.update(value)
    return struct


# ---- one running pack ----------------------------------------------------------------------------------


ENGINE_ADDRESS = "127.0.0.1:0"
"""The engine address the CLI passes a pack; the Python policy SDK reads it and never dials it."""


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
    return " (its environment is too large; the biggest variables: " + ", ".join(f"{k} ({sizes[k]:,} bytes)" for k in biggest) + ")"


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
    options = ((doc.get("runtime") or {}).get("options") or {}) if isinstance(doc, dict) and isinstance(doc.get("runtime"), dict) else {}
    venv = options.get("virtualenv") if isinstance(options, dict) else None
    if not venv:
        return env.get("PULUMI_PYTHON_CMD") or sys.executable, []
    venv_dir = (path / str(venv)).resolve()
    python = venv_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if python.exists():
        return str(python), []
    return sys.executable, [
        f"policy pack {path}: its virtualenv {venv_dir} does not exist, so `pulumi preview --policy-pack` "
        f"could not start it; running it with {sys.executable} (create it: python -m venv {venv_dir} && "
        f"{venv_dir}/bin/pip install -r {path}/requirements.txt)"
    ]


class PolicyPackProcess:
    """A policy pack started as the CLI starts it (``<python> -u -m pulumi.policy <engine> <pack dir>``,
    in the pack's directory, with the pack's virtualenv), with one gRPC channel to it. Use as a context
    manager (or call ``close``): the process is killed however the block ends.

    The pack must print its port, answer there and describe itself (``GetAnalyzerInfo``) within
    ``START_TIMEOUT_S`` in all; a pack that does not is killed and named with what it failed to do.
    With ``wait=False`` the process is only started; ``handshake`` then does the rest (on another
    thread, while ``close`` may be called from this one).
    """

    def __init__(self, path: Path | str, env: Optional[Mapping[str, str]] = None, *, wait: bool = True) -> None:
        self.path = Path(path).resolve()
        if not (self.path / "PulumiPolicy.yaml").is_file():
            raise PolicyPackError(f"policy pack {path} not found: no PulumiPolicy.yaml in {self.path}")
        self.python, self.warnings = pack_python(self.path, env if env is not None else os.environ)
        self._lock = threading.Lock()
        self._closed = False
        self._channel: Optional[grpc.Channel] = None
        self._readers: list[threading.Thread] = []
        self._stderr = tempfile.TemporaryFile()
        command = [self.python, "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, str(self.path)]
        try:
            self._proc = subprocess.Popen(
                command, cwd=self.path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr,
                env=dict(env) if env is not None else None,
            )
        except OSError as exc:
            self._stderr.close()
            raise PolicyPackError(f"policy pack {self.path} failed to start: cannot run {self.python}: "
                                  f"{exc.strerror or exc}{_environment_hint(exc, env)}") from None
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
        """Read the port, connect, and ask ``GetAnalyzerInfo``, all within ``START_TIMEOUT_S``."""
        deadline = time.monotonic() + START_TIMEOUT_S
        port = self._read_port(deadline)
        self._connect(port, deadline)
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self._channel)
        try:
            self.info: pb.AnalyzerInfo = self.stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=_left(deadline))
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise self._failed(f"did not answer GetAnalyzerInfo on port {port} within {START_TIMEOUT_S:g} s") from None
            raise self._rpc_failed(exc) from None

    def _read_port(self, deadline: float) -> int:
        """The first line the pack prints is its port; stdout is drained afterwards so it never blocks."""
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        printed = b""
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in printed:
                if self._closed or not selector.select(timeout=_left(deadline)):
                    raise self._failed(f"printed no port within {START_TIMEOUT_S:g} s")
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

    def _connect(self, port: int, deadline: float) -> None:
        """A channel to ``port``, ready: something must listen there (refused at once otherwise) and speak gRPC."""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=_left(deadline)).close()
        except OSError as exc:
            raise self._failed(f"printed port {port}, but nothing answers there ({exc.strerror or exc})") from None
        with self._lock:
            if self._closed:
                raise self._failed("was stopped while starting")
            self._channel = grpc.insecure_channel(
                f"127.0.0.1:{port}",
                options=[("grpc.max_receive_message_length", _MAX_MESSAGE), ("grpc.max_send_message_length", _MAX_MESSAGE)],
            )
            ready = grpc.channel_ready_future(self._channel)
        try:
            ready.result(timeout=_left(deadline))
        except (grpc.FutureTimeoutError, grpc.FutureCancelledError):
            raise self._failed(f"printed port {port}, but no gRPC server answered there within {START_TIMEOUT_S:g} s") from None

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

    def configure(self, user: Optional[PolicyConfig] = None, run: Optional[ProgramRun] = None) -> PolicyConfig:
        """``ConfigureStack`` (when a run is given) and ``Configure`` with the reconciled config."""
        if run is not None:
            self._call(self.stub.ConfigureStack, pb.AnalyzerStackConfigureRequest(stack=run.stack, project=run.project, dry_run=True))
        config = reconcile(self.info, user or {})
        policies = {p.name for p in self.info.policies}
        self.warnings += [f"policy pack config: '{name}' is not a policy of {self.info.name}, so it is ignored (as "
                          f"pulumi ignores it)" for name in sorted(set(user or {}) - policies - {"all"})]
        request = pb.ConfigureAnalyzerRequest(policyConfig={
            name: pb.PolicyConfig(enforcementLevel=LEVELS[level or "advisory"], properties=_struct(props))
            for name, (level, props) in config.items()
        })
        self._call(self.stub.Configure, request)
        return config

    def analyze(self, run: ProgramRun, provider_config: Optional[Mapping[str, Any]] = None) -> list[dict[str, Any]]:
        """``Analyze`` every resource, then ``AnalyzeStack`` once: the violations, as dicts."""
        by_urn = {r.urn: r for r in run.resources}
        stack_urn = f"urn:pulumi:{run.stack}::{run.project}::{STACK_TYPE}::{run.project}-{run.stack}"
        requests = [
            pb.AnalyzeRequest(
                type=r.type, name=r.name, urn=r.urn, properties=wire_properties(r.properties), options=_options(r),
                provider=_provider(r, by_urn, run, provider_config or {}),
            )
            for r in run.resources
        ]
        violations: list[dict[str, Any]] = []
        for request, response in zip(requests, self._analyze_all(requests)):
            violations += [self._violation(d, request.urn) for d in response.diagnostics]
        stack = pb.AnalyzeStackRequest(resources=[
            pb.AnalyzerResource(
                type=q.type, name=q.name, urn=q.urn, properties=_stack_properties(q, r), options=q.options,
                provider=q.provider,
                parent=r.parent, dependencies=r.dependencies,
                propertyDependencies={k: pb.AnalyzerPropertyDependencies(urns=v) for k, v in r.property_dependencies.items()},
            )
            for q, r in zip(requests, run.resources)
        ])
        response = self._call(self.stub.AnalyzeStack, stack)
        violations += [self._violation(d, d.urn if d.urn in by_urn else stack_urn) for d in response.diagnostics]
        return violations

    def _analyze_all(self, requests: Sequence[pb.AnalyzeRequest]) -> Iterable[pb.AnalyzeResponse]:
        """Pipelined on the one channel: up to ``IN_FLIGHT`` calls outstanding, answers in order."""
        pending: list[Any] = []
        for request in requests:
            pending.append(self.stub.Analyze.future(request, timeout=RPC_TIMEOUT_S))
            if len(pending) >= IN_FLIGHT:
                yield self._result(pending.pop(0))
        for future in pending:
            yield self._result(future)

    def _result(self, future: Any) -> pb.AnalyzeResponse:
        try:
            return future.result()
        except grpc.RpcError as exc:
            raise self._rpc_failed(exc) from None

    def _violation(self, d: pb.AnalyzeDiagnostic, urn: str) -> dict[str, Any]:
        prefix = d.description + "\n"
        message = d.message[len(prefix):] if d.description and d.message.startswith(prefix) else d.message
        return {
            "policy": d.policyName,
            "pack": d.policyPackName or self.info.name,
            "level": VIOLATION_LEVELS[d.enforcementLevel],
            "urn": urn,
            "message": message,
        }


def _options(r: Resource) -> pb.AnalyzerResourceOptions:
    return pb.AnalyzerResourceOptions(
        protect=r.protect,
        ignoreChanges=r.ignore_changes,
        deleteBeforeReplace=r.delete_before_replace,
        deleteBeforeReplaceDefined=r.delete_before_replace_defined,
        additionalSecretOutputs=r.additional_secret_outputs,
        customTimeouts=pb.AnalyzerResourceOptions.CustomTimeouts(),
        parent=r.parent,
    )


def _provider(
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
                type=explicit.type, name=explicit.name, urn=explicit.urn, properties=wire_properties(explicit.properties)
            )
    if not r.custom:
        return None
    package = r.type.split(":", 1)[0]
    prefix = f"{package}:"
    props = {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}
    urn = f"urn:pulumi:{run.stack}::{run.project}::pulumi:providers:{package}::default"
    return pb.AnalyzerProviderResource(type=f"pulumi:providers:{package}", name="default", urn=urn, properties=_struct(props))


def pack_env(project: str, stack: str, stack_config: Optional[Mapping[str, Any]] = None) -> dict[str, str]:
    """The environment the CLI gives a pack: ours, plus the stack's config (as the program gets it:
    ``"ns:key"`` -> text), project, stack and dry run. That is all a pack needs; a config too large
    for ``PULUMI_CONFIG`` is refused before any pack starts (``sdk.oversized_config``)."""
    env = dict(os.environ)
    env.update({"PULUMI_ORGANIZATION": "organization", "PULUMI_PROJECT": project, "PULUMI_STACK": stack,
                "PULUMI_DRY_RUN": "true"})
    if stack_config:
        env[sdk.CONFIG_ENV] = sdk.config_env_value(stack_config_values(stack_config))
    return env


def _in_background(work: Any, name: str) -> Future:
    """Run ``work`` on a daemon thread (never joined at exit, so a stuck start cannot hold the process)."""
    future: Future = Future()

    def run() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(work())
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
                future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


class PolicyPacks:
    """Packs for one preview, started as soon as they are named (a pack's start-up then overlaps the
    program's run), and all killed on ``close``, however the preview ends (an error, Ctrl-C): the
    processes first, so that nothing waits on a pack that is stuck.

    ``configs`` pair with ``packs`` by position, as the CLI pairs its flags; they are read first.
    """

    def __init__(
        self,
        packs: Sequence[Path | str],
        configs: Sequence[Optional[Path | str]] = (),
        project: str = "project",
        stack: str = "stack",
        stack_config: Optional[Mapping[str, Any]] = None,
    ) -> None:
        if configs and len(configs) != len(packs):
            raise PolicyPackError(f"{len(configs)} policy pack config(s) for {len(packs)} policy pack(s): give one per pack, in order")
        self._user = [read_config_file(Path(c)) if c else {} for c in configs] or [{} for _ in packs]
        self._stack_config = stack_config or {}
        self.warnings: list[str] = []
        env = pack_env(project, stack, stack_config)
        self._packs: list[PolicyPackProcess] = []
        self._starting: list[Future] = []
        try:
            for path in packs:
                pack = PolicyPackProcess(path, env, wait=False)
                self._packs.append(pack)
                self._starting.append(_in_background(pack.handshake, f"start {pack.path.name}"))
        except BaseException:
            self.close()
            raise

    def analyze(self, run: ProgramRun) -> list[dict[str, Any]]:
        violations: list[dict[str, Any]] = []
        self.warnings = []
        for pack, starting, user in zip(self._packs, self._starting, self._user):
            starting.result()
            pack.configure(user, run)
            self.warnings += pack.warnings
            violations += pack.analyze(run, self._stack_config)
        return violations

    def close(self) -> None:
        for pack in self._packs:
            pack.kill()
        for starting in self._starting:
            try:
                starting.exception(timeout=5)  # ends promptly once its process is gone
            except Exception:  # noqa: BLE001 - a start still running is abandoned; its process is dead
                pass
        for pack in self._packs:
            pack.close()

    def __enter__(self) -> "PolicyPacks":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
