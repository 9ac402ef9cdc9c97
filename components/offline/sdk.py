"""Every use of the Pulumi Python SDK's private parts, in one place.

The offline engine runs a program the way the language host does, under the SDK's mocks, and reads
values off the wire the way the engine does. For that it needs a few things the SDK does not
export: the wire markers of unknowns, secrets and resource references, the mock monitor, the RPC
manager and the root-stack plumbing. They are tied to the SDK version the tests run on (``pulumi``
is pinned to that minor range in ``pyproject.toml``); nothing outside ``offline`` imports this.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from typing import Any, Callable, Iterator, Mapping

import pulumi
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import rpc as _rpc
from pulumi.runtime import settings as _settings
from pulumi.runtime import stack as _stack
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


def isolated(request: Callable[[], Any]) -> Any:
    """Serve one monitor request on its worker thread, keeping what it starts on that thread.

    The mock monitor deserializes a request's properties on the worker thread serving it; a
    resource reference among them (``cluster=...``, ``node_role=...`` of a remote component) is
    rehydrated there, as a ``getResource`` task on the thread's own event loop. Tracked by the
    program's RPC manager, the main loop would await it ("attached to a different loop"). So the
    request gets an RPC manager of its own (the worker runs in a copy of the program's context),
    and the thread's loop runs until everything the request started is done.
    """
    if threading.current_thread() is threading.main_thread():
        return request()
    _settings.SETTINGS.rpc_manager = RPCManager()
    try:
        return request()
    finally:
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:  # no loop on this thread: nothing was deserialized here
            loop = None
        if loop is not None and not loop.is_running():
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


@contextlib.contextmanager
def language_host_config(values: Mapping[str, str]) -> Iterator[None]:
    """The stack config as the language host hands it to a program: ``PULUMI_CONFIG`` (JSON of
    ``"ns:key"`` -> string) in the environment, which the SDK reads through ``pulumi.Config`` and
    ``pulumi.runtime.get_config_env()``. The environment is restored afterwards."""
    saved = {key: os.environ.get(key) for key in (CONFIG_ENV, SECRET_KEYS_ENV)}
    os.environ[CONFIG_ENV] = json.dumps(dict(values))
    os.environ[SECRET_KEYS_ENV] = "[]"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_under_mocks(body: Callable[[], Any], values: Mapping[str, str], mocks: pulumi.runtime.Mocks,
                    monitor: Any, project: str, stack: str, preview: bool = True) -> None:
    """Run ``body`` as a Pulumi program under ``mocks``, on a new event loop, in the current context.

    ``set_mocks`` registers the root stack before the program runs; its exports are registered
    when the program returns, as the real language host does.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        _settings.ROOT.set(None)
        pulumi.runtime.set_all_config(dict(values), [])
        pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=preview, monitor=monitor)
        _settings.SETTINGS.rpc_manager.clear()
        _settings.SETTINGS.outputs.clear()
        _sync_await(_stack.run_pulumi_func(body))
        root = _settings.get_root_resource()
        if isinstance(root, _stack.Stack) and root.outputs:
            root._outputs_registered = False
            root._finish()
            _sync_await(_stack.wait_for_rpcs())
    finally:
        asyncio.set_event_loop(None)
        loop.close()
