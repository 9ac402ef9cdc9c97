"""Run CrossGuard policy packs over an offline run, the way the Pulumi CLI runs them over a preview.

A pack is started as the CLI starts one (``<python> <pack dir>``, working directory the pack,
``PULUMI_*`` environment), and spoken to over its real gRPC analyzer protocol: the port it prints
on stdout, ``ConfigureStack``, ``GetAnalyzerInfo``, ``Configure`` with the config reconciled as the
CLI reconciles it (policy defaults and schema defaults, the pack's initial config, then the user's
``--policy-pack-config`` file, then a schema check), ``Analyze`` for every registered resource
(custom and component, with its options and provider), ``AnalyzeStack`` once. Then the process is
killed, also on errors.

Like the CLI, ``Analyze`` gets each resource's inputs; ``AnalyzeStack`` gets them too (the CLI sends
outputs there, which for a resource created by a preview are its inputs plus unknowns; for a
component, which has no inputs under the CLI, the offline run has the inputs it was given).
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

import grpc
import yaml
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2 as pb
from pulumi.runtime.proto import analyzer_pb2_grpc

from . import sdk
from .engine import STACK_TYPE, ProgramRun, Resource

LEVELS = {"advisory": pb.ADVISORY, "mandatory": pb.MANDATORY, "remediate": pb.REMEDIATE, "disabled": pb.DISABLED}
_LEVEL_OF = {value: name for name, value in LEVELS.items()}
VIOLATION_LEVELS = {**_LEVEL_OF, pb.REMEDIATE: "mandatory"}  # the CLI reports a remediate violation as mandatory
START_TIMEOUT_S = 60.0
RPC_TIMEOUT_S = 120.0
IN_FLIGHT = 16  # Analyze calls outstanding on the one channel (the pack serves 4 at a time)
_MAX_MESSAGE = 400 * 1024 * 1024  # what the policy SDK's own server accepts

PolicyConfig = dict[str, tuple[str, Optional[dict[str, Any]]]]
"""Policy (or ``all``) -> (enforcement level or '', properties or None), as the CLI holds it."""


class PolicyPackError(Exception):
    """A pack that cannot start, answer, or be configured. The offline CLI exits 2 with it."""


# ---- the config file, merged as the CLI merges it ----------------------------------------------------


def read_config_file(path: Path) -> PolicyConfig:
    """``{"all": "mandatory", "<policy>": "advisory" | {"enforcementLevel": ..., "<prop>": ...}}``."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise PolicyPackError(f"cannot read policy pack config {path}: {exc.strerror}") from None
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PolicyPackError(f"policy pack config {path} is not valid JSON: {exc}") from None
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
    manager (or call ``close``): the process is killed however the block ends."""

    def __init__(self, path: Path | str, env: Optional[Mapping[str, str]] = None) -> None:
        self.path = Path(path).resolve()
        if not (self.path / "PulumiPolicy.yaml").is_file():
            raise PolicyPackError(f"policy pack {path} not found: no PulumiPolicy.yaml in {self.path}")
        self.python, self.warnings = pack_python(self.path, env if env is not None else os.environ)
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [self.python, "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, str(self.path)],
            cwd=self.path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(env) if env is not None else None,
        )
        self._channel: Optional[grpc.Channel] = None
        try:
            port = self._read_port()
            self._channel = grpc.insecure_channel(
                f"127.0.0.1:{port}",
                options=[("grpc.max_receive_message_length", _MAX_MESSAGE), ("grpc.max_send_message_length", _MAX_MESSAGE)],
            )
            grpc.channel_ready_future(self._channel).result(timeout=START_TIMEOUT_S)
            self.stub = analyzer_pb2_grpc.AnalyzerStub(self._channel)
            self.info: pb.AnalyzerInfo = self._call(self.stub.GetAnalyzerInfo, empty_pb2.Empty())
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _read_port(self) -> int:
        """The first line the pack prints is its port; stdout is drained afterwards so it never blocks."""
        assert self._proc.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._proc.stdout, selectors.EVENT_READ)
            if not selector.select(timeout=START_TIMEOUT_S):
                raise self._failed(f"printed no port within {START_TIMEOUT_S:g} s")
        line = self._proc.stdout.readline().decode(errors="replace").strip()
        if not line:  # end of output: the pack exited; let it finish writing its error
            self._proc.wait(timeout=START_TIMEOUT_S)
            raise self._failed("exited before printing its port")
        if not line.isdigit():
            raise self._failed(f"printed {line!r} instead of a port")
        threading.Thread(target=self._proc.stdout.read, daemon=True).start()
        return int(line)

    def _failed(self, what: str) -> PolicyPackError:
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

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        if self._proc.stdout is not None:
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
                type=q.type, name=q.name, urn=q.urn, properties=q.properties, options=q.options, provider=q.provider,
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
    """The environment the CLI gives a pack: ours, plus the stack's config, project, stack, dry run."""
    env = dict(os.environ)
    env.update({"PULUMI_ORGANIZATION": "organization", "PULUMI_PROJECT": project, "PULUMI_STACK": stack,
                "PULUMI_DRY_RUN": "true"})
    if stack_config:
        env["PULUMI_CONFIG"] = json.dumps({k: v if isinstance(v, str) else json.dumps(v) for k, v in stack_config.items()})
    return env


class PolicyPacks:
    """Packs for one preview, started in the background as soon as they are named (a pack's start-up
    then overlaps the program's run), and all killed on ``close``, however the preview ends.

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
        env = pack_env(project, stack, stack_config)
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(packs)))
        self._starting = [self._pool.submit(PolicyPackProcess, path, env) for path in packs]

    def analyze(self, run: ProgramRun) -> list[dict[str, Any]]:
        violations: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        for starting, user in zip(self._starting, self._user):
            pack = starting.result()
            self.warnings += pack.warnings
            pack.configure(user, run)
            violations += pack.analyze(run, self._stack_config)
        return violations

    def close(self) -> None:
        for starting in self._starting:
            try:
                starting.result().close()
            except Exception:  # noqa: BLE001 - it failed to start: it has cleaned up after itself
                pass
        self._pool.shutdown()

    def __enter__(self) -> "PolicyPacks":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
