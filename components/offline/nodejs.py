"""Run a Node.js (TypeScript or JavaScript) program offline, as Pulumi's Node.js language host runs it, against the
engine's resource monitor served here (``resmon``).

pulumi-language-nodejs (pulumi/pulumi ``sdk/nodejs/cmd/pulumi-language-nodejs/main.go``, ``Run``,
``execRuntime``, ``constructArguments``) finds ``@pulumi/pulumi/cmd/run`` from the program's directory
(``node -e "require.resolve(...)"``) and runs::

    node [nodeargs] <cmd/run> --monitor <addr> --engine <addr> --organization <org> --project <project>
         --root-directory <dir> --stack <stack> --pwd <dir> --dry-run --parallel <n> <entry point>

with the stack config in ``PULUMI_CONFIG`` (JSON, each key as ``<namespace>:config:<name>``, the form older
SDKs read), ``PULUMI_CONFIG_SECRET_KEYS``, and ``PULUMI_NODEJS_TYPESCRIPT=true`` unless ``runtime.options``
says ``typescript: false`` (``PULUMI_NODEJS_TSCONFIG_PATH`` for ``tsconfig``). The SDK's ``cmd/run`` then
compiles TypeScript as ``pulumi up`` does: ts-node (the program's own, else the one ``@pulumi/pulumi`` vendors)
with the program's ``tsconfig.json``, type-checked. The entry point is ``.`` (``package.json``'s ``main``)
unless ``Pulumi.yaml`` names one with ``main:`` (``pwd_main``); ``--parallel`` is the CLI's default, four per CPU.

A program that throws logs the error to the engine (``Engine.Log``, with Node's stack) and exits with 32, the
code that says it has been reported; the run fails with that error, named by the program's own file and line
(the first stack frame outside ``node_modules`` and Node's internals). A registration the engine refused (a
component the provider refused) is the cause of any error the program then logs, and is reported instead.
What the program prints goes to stderr: stdout is the preview's.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, chdir
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional
from urllib.parse import quote

from ..errors import ConfigError
from ..inputs import seconds_from_env
from . import sdk
from .catalog import Catalog
from .cloud import OfflineMocks
from .construct import PACKAGE, ComponentProvider, plugin_folder
from .engine import stack_config_values
from .records import ProgramRun, Resource
from .resmon import Deployment, serve
from .stackfile import ProjectFile

RUN_MODULE = "@pulumi/pulumi/cmd/run"
RUN_LIMIT_S = 1800.0
"""How long a program may run, unless ``$MIXED_OS_RACKS_PROGRAM_S`` says otherwise (``run_limit``). ``pulumi preview``
waits for a program as long as it runs; a program that never ends (a ``setInterval``, a promise that never settles
while a timer keeps Node alive) would hold a CI job until the job's own limit, with nothing said."""
RUN_LIMIT_ENV = "MIXED_OS_RACKS_PROGRAM_S"
REPORTED = 32
"""The exit code with which ``cmd/run`` says it has logged the program's error
(``nodeJSProcessExitedAfterShowingUserActionableMessage``)."""
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FRAME = re.compile(
    r"^\s*at (?:.*? \()?(?P<file>(?:file://)?[^()\s][^()]*?)"
    r":(?P<line>\d+):(?P<column>\d+)\)?(?: \{)?\s*$"
)
_REF = re.compile(r"^<ref \*\d+>\s*")
_UNHANDLED = re.compile(r"^Running program '.*' failed with an unhandled exception:\n", re.S)
PRELUDE = """\
import util from "node:util";
const inspect = util.inspect;
function inspectErrorsPlain(value, options, ...rest) {
    if (value instanceof Error && options !== null && typeof options === "object" && options.colors) {
        options = { ...options, colors: false };
    }
    return inspect.call(this, value, options, ...rest);
}
for (const key of Reflect.ownKeys(inspect)) {
    if (!["length", "name", "prototype"].includes(key)) {
        Object.defineProperty(inspectErrorsPlain, key, Object.getOwnPropertyDescriptor(inspect, key));
    }
}
util.inspect = inspectErrorsPlain;

import Module from "node:module";
const load = Module._load;
const quieted = new WeakSet();
function withoutStack(capture) {
    return function debuggablePromise(...args) {
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        try {
            return capture.apply(this, args);
        } finally {
            Error.stackTraceLimit = limit;
        }
    };
}
const stacksWanted = Boolean(process.env.PULUMI_DEBUG_PROMISE_LEAKS);
function unsent() {
    return Promise.resolve();
}
const sdkFile = /[\\\\/]@pulumi[\\\\/]pulumi[\\\\/]/;
Module._load = function (request, parent, ...rest) {
    const loaded = load.call(this, request, parent, ...rest);
    if (loaded === null || typeof loaded !== "object" || quieted.has(loaded)
        || !sdkFile.test((parent && parent.filename) || "")) {
        return loaded;
    }
    if (!stacksWanted && typeof loaded.debuggablePromise === "function"
        && typeof loaded.leakedPromises === "function" && typeof loaded.promiseDebugString === "function") {
        quieted.add(loaded);
        loaded.debuggablePromise = withoutStack(loaded.debuggablePromise);
    } else if (typeof loaded.debug === "function" && typeof loaded.info === "function"
               && typeof loaded.warn === "function" && typeof loaded.error === "function"
               && typeof loaded.hasErrors === "function") {
        quieted.add(loaded);
        loaded.debug = unsent;
    }
    return loaded;
};
"""
"""A module Node.js loads before the run script (``node --import=data:...``; the one-argument form, as ``cmd/run``
takes an ``--import`` argument for a custom loader and then turns off its automatic ES module mode). It changes three
things no preview output depends on:

* ``util.inspect`` formats an error without colours even when asked for them. ``cmd/run`` reports a program's
  unhandled error as ``util.inspect(err, {colors: true})`` (``cmd/run/error.js``, ``defaultErrorMessage``), and with
  colours Node.js marks each stack frame's package (``internal/util/inspect``, ``markNodeModules``), which in Node.js
  20.20 never returns for a frame in a file right under a scope folder: ``node_modules/@pulumi/output.ts``, where
  ts-node's source maps place the SDK's own files (their maps name ``../output.ts``). A program whose ``apply``
  throws inside a component's ``registerOutputs`` left Node.js spinning at full CPU until the run limit, its error
  never logged. The engine strips colours from what it is told (``program_error``).
* The SDK's ``debuggablePromise`` (``runtime/debuggable.js``), which wraps each of its promises and records
  ``new Error().stack`` on it, records no frames (``Error.stackTraceLimit`` is 0 for the length of that one call;
  the module's export is wrapped). The only reader of that stack is the leak report under
  ``PULUMI_DEBUG_PROMISE_LEAKS``; with that variable set nothing is wrapped. Capturing it, and formatting it
  through ts-node's source maps (the ``Error.prepareStackTrace`` ts-node installs), was two thirds of a TypeScript
  program's CPU time, growing faster than the number of resources. Every other stack (the program's errors, the
  source position of each registration, ``Resource.callsites``) is captured and formatted as before.
* The SDK's ``log.debug`` (``log/index.js``) sends nothing. With an engine connected it sends every debug message
  as an ``Engine.Log`` (the SDK's own runtime sends three for each resource), and each log waits for the one before
  it to be answered: 5,000 resources were 15,000 round trips in a row, most of a TypeScript preview's time. The
  preview shows no debug messages, as ``pulumi preview`` shows none without ``--debug``; the program's info,
  warning and error messages are sent as before, in order. Both wrapped modules are recognised by what they export
  as ``require`` returns them to one of the SDK's own files (``Module._load``); the SDK's modules call both through
  those exports."""


class NodeProgramError(Exception):
    """The Node.js program failed (or could not start): one line per problem, the first naming it."""


@dataclass(frozen=True)
class NodeOptions:
    """``runtime.options`` of a ``nodejs`` project, as the Node.js host reads them (``parseOptions``)."""

    typescript: bool = True
    tsconfig: str = ""
    nodeargs: str = ""


PACKAGE_MANAGERS = ("auto", "npm", "yarn", "pnpm", "bun")


def node_options(options: Mapping[str, Any], source: str) -> NodeOptions:
    """The options the host reads, refused in its words when one has the wrong type (``parseOptions``; the install
    options ``packagemanager`` and ``production`` are checked too, as the host checks them before a run)."""
    typescript, tsconfig, nodeargs = (
        options.get("typescript", True),
        options.get("tsconfig", ""),
        options.get("nodeargs", ""),
    )
    manager, production = options.get("packagemanager", "auto"), options.get("production", False)
    problem = (
        "typescript option must be a boolean"
        if not isinstance(typescript, bool)
        else "tsconfigpath option must be a string"
        if not isinstance(tsconfig, str)
        else "nodeargs option must be a string"
        if not isinstance(nodeargs, str)
        else "production option must be a boolean"
        if not isinstance(production, bool)
        else "packagemanager option must be a string"
        if not isinstance(manager, str)
        else f"packagemanager option must be one of auto, npm, yarn, pnpm or bun, got {json.dumps(manager)}"
        if manager not in PACKAGE_MANAGERS
        else None
    )
    if problem:
        raise NodeProgramError(f"{source}: runtime.options: {problem}")
    try:
        shlex.split(nodeargs)
    except ValueError as exc:
        raise NodeProgramError(f"{source}: runtime.options.nodeargs: {exc}") from None
    return NodeOptions(typescript, tsconfig, nodeargs)


def pwd_main(root: Path, main: Optional[str]) -> tuple[Path, str]:
    """The program's directory and entry point from ``Pulumi.yaml``'s ``main`` (pulumi ``pkg/engine/project.go``,
    ``getPwdMain``): none is the project's directory and ``.``; a directory is itself and ``.``; a file is its
    directory and its name."""
    if not main:
        return root, "."
    path = Path(main) if Path(main).is_absolute() else root / main
    if path.is_dir():
        return path, "."
    if not path.exists():
        raise NodeProgramError(f"{root / 'Pulumi.yaml'}: main: project 'main' could not be read: {path} does not exist")
    return path.parent, path.name


TYPESCRIPT_SUFFIXES = (".ts", ".mts", ".cts")


def typescript_entry(program_dir: Path, entry: str, source: str) -> None:
    """With ``typescript: false`` the host has Node.js run the entry point as JavaScript (no ts-node), so a
    TypeScript entry point (``package.json``'s ``main``, default ``index.js``, or ``Pulumi.yaml``'s ``main``) would
    fail on its first type annotation, naming no option: refused here, saying which option and file."""
    main = entry
    if entry == ".":
        try:
            manifest = json.loads((program_dir / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # no readable package.json: Node.js says what it cannot find
        given = manifest.get("main") if isinstance(manifest, dict) else None
        main = given if isinstance(given, str) else "index.js"
    if main.endswith(TYPESCRIPT_SUFFIXES):
        raise NodeProgramError(
            f"{source}: runtime.options.typescript: false, but the program's entry point {main} is "
            f"TypeScript, which Node.js then runs as JavaScript: remove typescript: false, or "
            f"compile the program and point main at the JavaScript"
        )


def node_config(values: Mapping[str, str]) -> dict[str, str]:
    """The config as the Node.js host hands it over: ``ns:key`` -> ``ns:config:key`` (``constructConfig``)."""
    return {f"{key.partition(':')[0]}:config:{key.partition(':')[2]}": value for key, value in values.items()}


def _locate_run(node: str, program_dir: Path) -> str:
    """``@pulumi/pulumi/cmd/run`` as Node resolves it from the program's directory (the host's ``locateModule``)."""
    script = f"console.log(require.resolve({json.dumps(RUN_MODULE)}))"
    found = subprocess.run([node, "-e", script], cwd=program_dir, capture_output=True, text=True)
    if found.returncode != 0 or not found.stdout.strip():
        said = "".join(
            f"\n  {line}" for line in found.stderr.strip().splitlines()[:6] if "MODULE_NOT_FOUND" not in found.stderr
        )
        raise NodeProgramError(
            f"{program_dir}: the Pulumi Node.js SDK is not installed there (node cannot resolve "
            f"{RUN_MODULE}): run `npm ci` (or `pulumi install`) in {program_dir}{said}"
        )
    return found.stdout.strip()


def run_limit() -> float:
    """The program run limit in seconds: ``$MIXED_OS_RACKS_PROGRAM_S``, else ``RUN_LIMIT_S``."""
    try:
        return seconds_from_env(RUN_LIMIT_ENV, RUN_LIMIT_S, "3600")
    except ValueError as exc:
        raise NodeProgramError(str(exc)) from None


def run_node_program(
    project_dir: Path,
    project: ProjectFile,
    config: Mapping[str, Any],
    catalog: Optional[Catalog] = None,
    stack: str = "dev",
    on_resource: Optional[Callable[[Resource], None]] = None,
) -> ProgramRun:
    """Run the Node.js program of ``project`` (in ``project_dir``) as a preview, as ``run_program`` runs a Python one.

    Remote components of this package are constructed by its provider (``construct``); others are expanded as
    on the Python path. ``NodeProgramError`` when the program fails, with Node's file and line; ``ConfigError``
    for a config too large for ``PULUMI_CONFIG``."""
    project_dir = project_dir.resolve()
    limit = run_limit()
    options = node_options(project.options, str(project_dir / "Pulumi.yaml"))
    node = shutil.which("node")
    if node is None:
        raise NodeProgramError("could not find node on the $PATH (the Node.js runtime this nodejs project needs)")
    program_dir, entry = pwd_main(project_dir, project.main)
    if not options.typescript:
        typescript_entry(program_dir, entry, str(project_dir / "Pulumi.yaml"))
    run_path = _locate_run(node, program_dir)
    catalog = catalog or Catalog.load()
    values = stack_config_values(config)
    problem = sdk.oversized_config(node_config(values))
    if problem:
        raise ConfigError(problem)
    mocks = OfflineMocks(catalog, values)
    deployment = Deployment(project.name, stack, values, parallel=(os.cpu_count() or 1) * 4)
    try:
        folder, note = plugin_folder(project_dir, project.packages, PACKAGE)
    except ValueError as exc:
        raise NodeProgramError(f"{project_dir / 'Pulumi.yaml'}: packages.{PACKAGE}: {exc}") from None
    if note:
        sys.stderr.write(f"warning: {project_dir / 'Pulumi.yaml'}: packages.{PACKAGE}: {note}\n")
    rack = ComponentProvider(PACKAGE, folder, project_dir, values)
    with ExitStack() as cleanup:
        cleanup.callback(rack.close)
        server = cleanup.enter_context(serve(mocks, deployment, on_resource, {PACKAGE: rack}))
        cleanup.enter_context(chdir(program_dir))  # where the engine's providers read files the program names
        args = [
            node,
            "--import=data:text/javascript," + quote(PRELUDE),
            *shlex.split(options.nodeargs),
            run_path,
            "--monitor",
            server.address,
            "--engine",
            server.address,
            "--organization",
            deployment.organization,
            "--project",
            project.name,
            "--root-directory",
            str(project_dir),
            "--stack",
            stack,
            "--pwd",
            str(program_dir),
            "--dry-run",
            "--parallel",
            str(deployment.parallel),
            entry,
        ]
        env = {**os.environ, sdk.CONFIG_ENV: sdk.config_env_value(node_config(values)), sdk.SECRET_KEYS_ENV: "[]"}
        if options.typescript:
            env["PULUMI_NODEJS_TYPESCRIPT"] = "true"
        if options.tsconfig:
            env["PULUMI_NODEJS_TSCONFIG_PATH"] = options.tsconfig
        process = subprocess.Popen(
            args, cwd=program_dir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        copier = threading.Thread(target=_copy_to_stderr, args=(process.stdout,), daemon=True)
        copier.start()
        monitor = server.monitor
        try:
            code = _wait(process, monitor.aborted, limit)
        finally:
            if process.poll() is None:  # interrupted: the program goes first, then the server and the provider
                process.kill()
                process.wait()
            copier.join(timeout=5)
        if monitor.errors:
            raise NodeProgramError("\n".join(monitor.errors))
        refused = server.refused()
        if refused:  # the SDK took a refusal for the engine shutting down: it stopped registering and exits 0
            raise NodeProgramError(
                f"the offline engine's gRPC server refused {refused} of the program's calls, so the "
                f"program stopped registering resources and the preview would miss some: nothing "
                f"was previewed"
            )
        if code == REPORTED and monitor.logged_errors:
            raise NodeProgramError("\n".join(program_error(message, program_dir) for message in monitor.logged_errors))
        if code != 0:
            raise NodeProgramError(
                f"the program exited with code {code}"
                + (": " + monitor.logged_errors[0] if monitor.logged_errors else "")
            )
        sys.stderr.writelines(f"error: {message}\n" for message in monitor.logged_errors)
        return monitor.run()


def _copy_to_stderr(stream: Any) -> None:
    """What the program prints, to stderr as it comes (stdout carries the preview)."""
    with stream:
        for line in iter(stream.readline, b""):
            sys.stderr.write(line.decode(errors="replace"))
            sys.stderr.flush()


def _wait(process: subprocess.Popen[bytes], aborted: threading.Event, limit: float = RUN_LIMIT_S) -> int:
    """The program's exit code; once the engine has refused a registration, the program is stopped, as the engine
    stops it (``source_eval.go``: a failed ``Construct`` aborts the run). Left running, a Node.js program would
    spend minutes formatting each failed registration's error for its log. A program still running after
    ``limit`` seconds is stopped, and the run fails saying so (``NodeProgramError``)."""
    deadline = time.monotonic() + limit
    while True:
        try:
            return process.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            if aborted.is_set():
                process.kill()
                return process.wait()
            if time.monotonic() >= deadline:
                process.kill()
                process.wait()
                raise NodeProgramError(
                    f"the program did not finish within {limit:g} s, so it was stopped (a program "
                    f"that never ends, such as one with a setInterval, keeps running; give a long "
                    f"one more time with {RUN_LIMIT_ENV}=<seconds>)"
                ) from None


def program_error(message: str, program_dir: Path) -> str:
    """A program's logged error as ``the program failed: <error>``, then where Node says it was thrown: the first
    stack frame in the program's own files (``at index.ts:12:11``), relative to its directory. A TypeScript
    error (``index.ts(12,5): error TS2322: ...``) and a ``RunError`` are their own lines; stack frames are dropped."""
    text = _REF.sub("", _UNHANDLED.sub("", _ANSI.sub("", message).strip()))
    lines = [line for line in text.splitlines() if line.strip()]
    frames = [found for found in map(_FRAME.match, lines) if found]
    first = next((n for n, line in enumerate(lines) if _FRAME.match(line)), len(lines))
    # the message, then the stack (util.inspect prints an error's other properties after it: dropped)
    where = next((m for m in frames if _own(m.group("file"))), None)
    head, *rest = lines[:first] or ["(no message)"]
    head = head.replace("TSError: \u2a2f ", "TSError: ", 1)  # ts-node's mark before its diagnostics
    out = [f"the program failed: {head}", *rest]
    if where is not None:
        out.append(f"  at {_relative(where.group('file'), program_dir)}:{where.group('line')}:{where.group('column')}")
    return "\n".join(out)


def _own(file: str) -> bool:
    return not (file.startswith("node:") or "/node_modules/" in file or file.startswith("internal/"))


def _relative(file: str, program_dir: Path) -> str:
    path = Path(file.removeprefix("file://"))
    try:
        return str(path.relative_to(program_dir))
    except ValueError:
        return str(path)
