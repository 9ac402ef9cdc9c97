"""What the pack keeps for the one request a gRPC worker thread is serving.

The policy SDK's servicer runs every policy of a request (``Analyze`` of one resource,
``AnalyzeStack`` of the stack) one after another, in the list's order, on the thread serving that
request (pulumi_policy ``policy.py``, ``_PolicyAnalyzerServicer.Analyze``/``AnalyzeStack``). So what
one policy leaves for a later one of the same request (the findings ``ami-facts-unknown`` reports,
the joined stack every stack policy reads) lives in a ``RequestLocal``: one per thread, emptied when
a request starts and when it ends, so nothing reaches another request.

``install`` wraps the servicer's two methods; for an SDK of another shape it changes nothing and
returns False (the pack then empties each ``RequestLocal`` itself where it reads it).
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

_all: list["RequestLocal"] = []


class RequestLocal(threading.local):
    """Per-thread, per-request state: ``values``, emptied at every request's start and end."""

    def __init__(self) -> None:
        self.values: dict[Any, Any] = {}
        if self not in _all:
            _all.append(self)


def _reset() -> None:
    for local in _all:
        local.values = {}


def _scoped(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def serve(self: Any, *args: Any, **kwargs: Any) -> Any:
        _reset()
        try:
            return method(self, *args, **kwargs)
        finally:
            _reset()

    return serve


_installed = False


def install() -> bool:
    global _installed
    if _installed:
        return True
    try:
        import pulumi_policy.policy as sdk

        servicer = sdk._PolicyAnalyzerServicer
    except (ImportError, AttributeError):
        return False
    if not all(callable(getattr(servicer, name, None)) for name in ("Analyze", "AnalyzeStack")):
        return False
    for method in ("Analyze", "AnalyzeStack"):  # the SDK's servicer, wrapped where it is (setattr: a method replaced)
        setattr(servicer, method, _scoped(getattr(servicer, method)))
    _installed = True
    return True


def installed() -> bool:
    return _installed
