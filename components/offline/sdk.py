"""Every use of the Pulumi Python SDK's private parts, in one place.

The offline engine runs a program the way the language host does, under the SDK's mocks, and reads
values off the wire the way the engine does. For that it needs a few things the SDK does not
export: the wire markers of unknowns, secrets and resource references, the mock monitor, the RPC
manager and the root-stack plumbing. They are tied to the SDK version the tests run on (``pulumi``
is pinned to that minor range in ``pyproject.toml``); nothing outside ``offline`` imports this.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import sys
import threading
from typing import Any, Callable, Iterator, Mapping

import pulumi
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import resource as _resource
from pulumi.runtime import rpc as _rpc
from pulumi.runtime import settings as _settings
from pulumi.runtime import stack as _stack
from pulumi.runtime.proto import source_pb2 as _source_pb2
from pulumi.runtime.rpc_manager import RPCManager
from pulumi.runtime.sync_await import _sync_await

SIG_KEY = _rpc._special_sig_key
SECRET_SIG = _rpc._special_secret_sig
RESOURCE_SIG = _rpc._special_resource_sig
UNKNOWN = _rpc.UNKNOWN
"""The wire value of an unknown (a value not known until apply)."""

MockMonitor = _mocks.MockMonitor
CONFIG_ENV = "PULUMI_CONFIG"
SECRET_KEYS_ENV = "PULUMI_CONFIG_SECRET_KEYS"


class _WorkerLoops:
    """One event loop per thread serving monitor requests (``isolated``), kept for every request the
    thread serves and closed with the run. Each loop records the tasks made on it, so finishing a
    request waits for its own tasks without scanning ``asyncio.all_tasks``, which walks every task of
    every loop in the process: with thousands of resources pending on the program's loop, that scan
    made each request cost more than the last."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self._loops: list[asyncio.AbstractEventLoop] = []

    def current(self) -> tuple[asyncio.AbstractEventLoop, list[asyncio.Task[Any]]]:
        """This thread's loop (made on first use, and made the thread's event loop) and its tasks."""
        loop = getattr(self._local, "loop", None)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            created: list[asyncio.Task[Any]] = []

            def record(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
                task = asyncio.Task(coro, loop=loop, **kwargs)
                created.append(task)
                return task

            loop.set_task_factory(record)
            self._local.loop, self._local.created = loop, created
            with self._lock:
                self._loops.append(loop)
        asyncio.set_event_loop(loop)
        return loop, self._local.created

    def close(self) -> None:
        """Close every worker loop (their threads have been joined: none is running)."""
        with self._lock:
            loops, self._loops = self._loops, []
        for loop in loops:
            if not loop.is_closed() and not loop.is_running():
                loop.close()


_WORKERS = _WorkerLoops()
"""The worker loops of the run in progress (``run_under_mocks`` makes a new set for each run)."""


def isolated(request: Callable[[], Any]) -> Any:
    """Serve one monitor request off the program's event loop, keeping what it starts to itself.

    The SDK sends a request from ``run_in_executor``, which ``run_under_mocks`` makes run it at once
    on the program's thread (``_AtOnce``). The mock monitor then deserializes the request's
    properties with ``_sync_await``; a resource reference among them (``cluster=...``, ``node_role=...``
    of a remote component) is rehydrated as a ``getResource`` task. On the program's own loop that
    would pump the loop from inside one of its callbacks, and the program's RPC manager would await a
    task of another loop ("attached to a different loop"). So the request runs with the program's
    loop set aside, on a loop of its own (``_WorkerLoops``, one per thread), with an RPC manager of
    its own (it runs in a copy of the program's context), until everything it started is done.
    """
    program_loop = asyncio.events._get_running_loop()
    if program_loop is None and threading.current_thread() is threading.main_thread():
        return request()  # before the program's loop runs (``set_mocks``): nothing to set aside
    _settings.SETTINGS.rpc_manager = RPCManager()  # type: ignore[no-untyped-call]  # the SDK's RPCManager is not annotated
    asyncio.events._set_running_loop(None)
    loop, created = _WORKERS.current()
    try:
        return request()
    finally:
        pending = [task for task in created if not task.done()]
        created.clear()
        if pending and not loop.is_running():
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        if program_loop is not None:
            asyncio.set_event_loop(program_loop)
            asyncio.events._set_running_loop(program_loop)


class IsolatingMockMonitor(MockMonitor):
    """The SDK's mock monitor, each request that deserializes resources served by ``isolated``. Under the
    plain mock monitor a remote component given a resource (pulumi-eks ``ManagedNodeGroup`` with its
    cluster and role) fails the run with "attached to a different loop" (pulumi/pulumi#6561): the
    reference is rehydrated on the request thread's loop and awaited on the program's."""

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        return isolated(lambda: super(IsolatingMockMonitor, self).RegisterResource(request))  # type: ignore[no-untyped-call]  # the SDK's MockMonitor is not annotated

    def ReadResource(self, request: Any) -> Any:  # noqa: N802
        return isolated(lambda: super(IsolatingMockMonitor, self).ReadResource(request))  # type: ignore[no-untyped-call]  # the SDK's MockMonitor is not annotated

    def Invoke(self, request: Any) -> Any:  # noqa: N802
        return isolated(lambda: super(IsolatingMockMonitor, self).Invoke(request))  # type: ignore[no-untyped-call]  # the SDK's MockMonitor is not annotated


class _AtOnce(concurrent.futures.ThreadPoolExecutor):
    """The program loop's default executor: each call runs at once, on the calling thread.

    The SDK hands every monitor request to ``run_in_executor``, for a gRPC call that blocks. Offline
    the monitor answers in this process, and a worker thread per request only made the program and
    its requests take turns holding the interpreter lock, with a thread switch for every request
    and every answer. The answer comes back as a finished future, which the loop awaits as before.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # as a worker thread would: the awaiting task gets it
            future.set_exception(exc)
        return future


MAX_ARG_STRLEN = 32 * 4096
"""Linux's limit on one argument or environment string, ``NAME=value`` and its NUL included
(``include/uapi/linux/binfmts.h``); ``execve`` fails with E2BIG ("Argument list too long") above it."""


def go_json_size(text: str) -> int:
    """Bytes of ``text`` as a JSON string the way Go's ``encoding/json`` writes it: UTF-8, with
    ``<``, ``>``, ``&``, U+2028 and U+2029 escaped (6 bytes each) and the usual escapes."""
    body = json.dumps(text, ensure_ascii=False)
    extra = sum(5 for ch in text if ch in "<>&") + sum(3 for ch in text if ch in "\u2028\u2029")
    return len(body.encode("utf-8", "surrogatepass")) + extra


def oversized_config(values: Mapping[str, str]) -> str | None:
    """Why a config cannot reach a program through ``PULUMI_CONFIG``, or None when it fits.

    The language host hands a program its whole stack config as one environment variable,
    ``PULUMI_CONFIG`` (JSON of ``"ns:key"`` -> string), and the policy proxy hands a policy pack the
    same (pulumi ``sdk/python/cmd/pulumi-language-python/main.go``, ``sdk/policy_proxy.go``).
    """
    sizes = {key: go_json_size(key) + 1 + go_json_size(value) for key, value in values.items()}
    total = len(f"{CONFIG_ENV}=") + 2 + sum(sizes.values()) + max(len(sizes) - 1, 0) + 1
    if total <= MAX_ARG_STRLEN:
        return None
    ranked = sorted(sizes, key=lambda key: -sizes[key])
    biggest = ranked[:1] + [key for key in ranked[1:3] if sizes[key] >= 1024]
    named = ", ".join(f"{key} ({sizes[key]:,} bytes)" for key in biggest)
    return (
        f"the stack config is too large to run: a program (and a policy pack) gets the whole config as one "
        f"environment variable, {CONFIG_ENV}, which would be {total:,} bytes, and Linux allows one environment "
        f"string at most {MAX_ARG_STRLEN:,} bytes (MAX_ARG_STRLEN), so `pulumi up` could not start the program "
        f"either; the biggest keys: {named} (keep large data in a file the program reads)"
    )


def config_env_value(values: Mapping[str, str]) -> str:
    """``PULUMI_CONFIG``'s value: compact JSON, as Go writes it (never larger than
    ``oversized_config`` measures)."""
    return json.dumps(dict(values), separators=(",", ":"), ensure_ascii=False)


@contextlib.contextmanager
def language_host_config(values: Mapping[str, str]) -> Iterator[None]:
    """The stack config as the language host hands it to a program: ``PULUMI_CONFIG`` (JSON of
    ``"ns:key"`` -> string) in the environment, which the SDK reads through ``pulumi.Config`` and
    ``pulumi.runtime.get_config_env()``. The environment is restored afterwards."""
    saved = {key: os.environ.get(key) for key in (CONFIG_ENV, SECRET_KEYS_ENV)}
    os.environ[CONFIG_ENV] = config_env_value(values)
    os.environ[SECRET_KEYS_ENV] = "[]"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class _ProgramLog:
    """Where a program's ``pulumi.log`` messages go (the SDK's mock engine calls ``warning``, ``error``, ...):
    warnings through the mocks' ``warn`` (``warning: ...`` on stderr, once a run, as ``pulumi preview``
    shows a program's warnings), errors to stderr; info and debug, which ``pulumi preview`` hides by
    default, nowhere."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        self._warn = getattr(mocks, "warn", None)

    def warning(self, message: str) -> None:
        if self._warn is not None:
            self._warn(message)
        else:
            sys.stderr.write(f"warning: {message}\n")

    def error(self, message: str) -> None:
        sys.stderr.write(f"error: {message}\n")

    def info(self, message: str) -> None:
        pass

    debug = info


def run_under_mocks(
    body: Callable[[], Any],
    values: Mapping[str, str],
    mocks: pulumi.runtime.Mocks,
    monitor: Any,
    project: str,
    stack: str,
    preview: bool = True,
) -> None:
    """Run ``body`` as a Pulumi program under ``mocks``, on a new event loop, in the current context.

    ``set_mocks`` registers the root stack before the program runs; its exports are registered
    when the program returns, as the real language host does.
    """
    global _WORKERS
    _WORKERS = _WorkerLoops()
    traced = _resource._get_stack_trace
    # The SDK walks the whole Python stack of every registration for its stack trace and source
    # position (traceback.extract_stack, with every line read): the engine records neither.
    _resource._get_stack_trace = _no_stack_trace
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_quiet_after_interrupt)
    loop.set_default_executor(_AtOnce())
    asyncio.set_event_loop(loop)
    failed = True
    try:
        _settings.ROOT.set(None)
        pulumi.runtime.set_all_config(dict(values), [])
        # the organization the engine names when no service says one (the file backend's, as the pack and a
        # Node.js program get it here)
        pulumi.runtime.set_mocks(
            mocks,
            project=project,
            stack=stack,
            preview=preview,
            monitor=monitor,
            logger=_ProgramLog(mocks),  # type: ignore[arg-type]  # set_mocks declares a logging.Logger; the SDK calls only its level methods
            organization="organization",
        )
        _settings.SETTINGS.rpc_manager.clear()
        _settings.SETTINGS.outputs.clear()
        _sync_await(_stack.run_pulumi_func(body))
        root = _settings.get_root_resource()
        if isinstance(root, _stack.Stack) and root.outputs:
            root._outputs_registered = False
            root._finish()
            _sync_await(_stack.wait_for_rpcs())
        failed = False
    finally:
        _resource._get_stack_trace = traced
        if failed:  # the error is the caller's to report: the Outputs it left failed say it again when collected
            loop.set_exception_handler(_quiet_after_failure)
        _shut_down(loop)


def _no_stack_trace() -> Any:
    return _source_pb2.StackTrace()


def _quiet_after_interrupt(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's error handler: a task that ended with Ctrl-C or ``sys.exit`` has already been
    reported by the caller; anything else goes to asyncio's own handler."""
    exc = context.get("exception")
    if isinstance(exc, BaseException) and not isinstance(exc, Exception):
        return
    loop.default_exception_handler(context)


def _quiet_after_failure(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """After a run that failed: a future whose exception nobody read (an Output of the failed program,
    collected later, in this run or a later one) is the failure already raised, not news."""
    if "never retrieved" in str(context.get("message", "")):
        return
    _quiet_after_interrupt(loop, context)


def _shut_down(loop: asyncio.AbstractEventLoop) -> None:
    """Close the program's loop on every exit path (a program error, ``sys.exit``, Ctrl-C): cancel
    what is still pending, close the loop and the request loops (``isolated``).
    Nothing is left for the garbage collector to finalize at interpreter exit."""
    try:
        if not loop.is_running() and not loop.is_closed():
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()
        _WORKERS.close()
