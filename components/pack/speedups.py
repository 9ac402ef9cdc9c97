"""Make the Python policy SDK decode each resource once per request, not once per policy.

For every policy it runs, pulumi-policy's analyzer servicer turns a resource's properties from
protobuf into Python again (``json_format.MessageToDict``, then ``deserialize_properties``) and
wraps them in a fresh read-only proxy tree (``unknown_checking_proxy``, which walks every value):
four times per resource in ``Analyze`` (one per resource policy, and the provider's properties
each time) and four times over the whole stack in ``AnalyzeStack`` (one per stack policy). Every
policy gets the same values, so each step after the first, on the same object within one request,
is pure waste: it was most of the pack's time. ``install`` gives the servicer versions of the three
steps that remember their answers, by the identity of their input, for the request the thread is
serving (each gRPC worker thread serves one request at a time), and caches ``inspect.signature``,
which it calls on every request. The same goes for the options and the provider the servicer
builds for every resource, again for every policy (``_get_resource_options``,
``_get_provider_resource``: pure functions of the resource's message): with six stack policies,
they were a third of ``AnalyzeStack``. Policies see the same values as before: the proxies are
read-only, and the options and provider objects are only read (no policy of this pack, nor the SDK,
assigns to them), so sharing one between policies changes nothing they can observe. Decoding itself is remembered
by the message's content across requests (a bounded cache): a resource's properties arrive in
``Analyze`` and again in ``AnalyzeStack``, and one provider's with every resource it manages. The
values deserialized from a decoded dict, and their proxy tree, are kept with it across requests too
(``_keeping``): for a stack of 3,000 resources, rebuilding them was a third of ``AnalyzeStack``.
And ``AnalyzeStack`` reads each resource of its request once (``_StackResource``), where the
servicer read every message field and looked up every remembered step again for each stack policy:
sampled while it held the interpreter lock, that loop was 45% of the pack's time in ``make bench``.
Nothing is remembered outside ``Analyze`` and ``AnalyzeStack``. The servicer also parses the whole
stack config from the environment and configures the Pulumi runtime again at the start of every
request; a thread now does so only when the environment has changed (``_once_per_environment``).

Installed only when the SDK has the shape this was written against; otherwise the pack runs as is.

``tune_gc`` is the other half: the SDK builds and drops a tree of proxies for every resource of every
request, and with CPython's default collector thresholds (700, 10, 10) the cycle collector runs every
few hundred allocations, each full collection re-scanning every long-lived object of the process
(the SDK, gRPC, protobuf). It froze the pack's throughput at a fraction of what its work costs.
Objects alive at start-up are frozen (never scanned again) and collections run every 50,000 net
allocations; cyclic garbage is still collected, and nothing a policy sees changes.
"""

from __future__ import annotations

import functools
import gc
import inspect
import os
import threading
from typing import Any, Callable, Optional

from google.protobuf import json_format as _json_format


class _Remembered(threading.local):
    def __init__(self) -> None:
        self.answers: Optional[dict[Any, tuple[Any, Any]]] = None
        """While the thread serves ``Analyze`` or ``AnalyzeStack``, what it answered for that request;
        None otherwise (nothing is remembered for the SDK's other calls, ``Remediate`` among them)."""


_remembered = _Remembered()

_KEPT: dict[Any, tuple[Any, Any]] = {}
KEPT_LIMIT = 65_536
"""Answers ``_keeping`` holds across requests at most (emptied when full): a stack of thousands of
resources, each answered for its properties and its proxy."""


def _answered(table: dict[Any, tuple[Any, Any]], step: Any, value: Any, compute: Callable[[], Any],
              limit: Optional[int] = None) -> Any:
    """``compute()``, remembered in ``table`` under ``step`` and the identity of ``value``. The value is
    held with its answer, so its id is not reused meanwhile; with a ``limit``, a full table is emptied."""
    key = (step, id(value))
    found = table.get(key)
    if found is not None and found[0] is value:
        return found[1]
    answer = compute()
    if limit is not None and len(table) >= limit:
        table.clear()
    table[key] = (value, answer)
    return answer


def _keeping(step: Callable[[Any], Any]) -> Callable[..., Any]:
    """``step(value)``, answered once per input object across requests (``_decoded`` hands the same
    decoded dict for the same properties, so a resource's values, decoded for ``Analyze``, are not
    decoded and wrapped again for ``AnalyzeStack``). Threads share the table (a lost race only
    computes an answer twice)."""

    @functools.wraps(step)
    def kept(value: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or _remembered.answers is None:
            return step(value, *args, **kwargs)
        return _answered(_KEPT, step, value, lambda: step(value), KEPT_LIMIT)

    return kept


def _remembering(step: Callable[[Any], Any]) -> Callable[..., Any]:
    """``step(value)``, answered once per input object for the request being served."""

    @functools.wraps(step)
    def remembered(value: Any, *args: Any, **kwargs: Any) -> Any:
        answers = _remembered.answers
        if args or kwargs or answers is None:
            return step(value, *args, **kwargs)
        return _answered(answers, step, value, lambda: step(value))

    return remembered


@functools.lru_cache(maxsize=16384)
def _decoded(kind: type, wire: bytes) -> Any:
    message = kind()
    message.ParseFromString(wire)
    return _json_format.MessageToDict(message)


def _message_to_dict(message: Any) -> Any:
    """``MessageToDict`` answered by content: the same properties arrive once in ``Analyze`` and again
    in ``AnalyzeStack``, and one provider's properties with every resource it manages."""
    return _decoded(type(message), message.SerializeToString(deterministic=True))


class _Ready:
    """A stack resource's properties, decoded, deserialized and wrapped once for the request
    (``_StackResource``): the servicer's three steps hand it on as it is (``_ready_or``)."""

    __slots__ = ("proxy",)

    def __init__(self, proxy: Any) -> None:
        self.proxy = proxy


def _ready_or(step: Callable[..., Any], take: Callable[[_Ready], Any]) -> Callable[..., Any]:
    """``step``, except that a ``_Ready`` value gives ``take(value)`` at once."""

    @functools.wraps(step)
    def call(value: Any, *args: Any, **kwargs: Any) -> Any:
        if type(value) is _Ready:
            return take(value)
        return step(value, *args, **kwargs)

    return call


class _RememberingJsonFormat:
    """``google.protobuf.json_format`` with ``MessageToDict(message)`` remembered per message content."""

    MessageToDict = staticmethod(_ready_or(_remembering(_message_to_dict), lambda ready: ready))

    def __getattr__(self, name: str) -> Any:
        return getattr(_json_format, name)


def _remembering_method(method: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A servicer method of one message, answered once per message object for the request being served
    (for a ``_StackResource``, what it was given when it was read)."""

    @functools.wraps(method)
    def answer(self: Any, message: Any) -> Any:
        if type(message) is _StackResource:
            return message.built[method.__name__]
        answers = _remembered.answers
        if answers is None:
            return method(self, message)
        return _answered(answers, method, message, lambda: method(self, message))

    return answer


class _Urns:
    __slots__ = ("urns",)

    def __init__(self, urns: list[str]) -> None:
        self.urns = urns


class _StackResource:
    """One resource of an ``AnalyzeStack`` request, read from its message once for all the stack
    policies: the servicer reads every resource again for each of them (ten in this pack), and with
    the message's fields, the remembered steps and options looked up each time, that was most of the
    pack's time. Its properties are ``_Ready``; its options and provider are built by the servicer's
    own methods (``built``); anything else is read from the message."""

    __slots__ = ("message", "type", "urn", "name", "parent", "properties", "dependencies", "propertyDependencies",
                 "built")

    def __init__(self, servicer: Any, message: Any, sdk: Any) -> None:
        self.message = message
        self.type, self.urn, self.name, self.parent = message.type, message.urn, message.name, message.parent
        self.dependencies = list(message.dependencies)
        self.propertyDependencies = {k: _Urns(list(v.urns)) for k, v in message.propertyDependencies.items()}
        self.properties = _Ready(sdk.unknown_checking_proxy(sdk.deserialize_properties(
            sdk.json_format.MessageToDict(message.properties))))
        self.built = {name: getattr(servicer, name)(message) for name in _BUILT}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.message, name)


_BUILT = ("_get_resource_options", "_get_provider_resource")


class _StackRequest:
    """An ``AnalyzeStackRequest`` whose resources are ``_StackResource``; anything else from the message."""

    def __init__(self, request: Any, resources: list[_StackResource]) -> None:
        self.request, self.resources = request, resources

    def __getattr__(self, name: str) -> Any:
        return getattr(self.request, name)


def _reading_once(method: Callable[..., Any], sdk: Any) -> Callable[..., Any]:
    @functools.wraps(method)
    def analyze_stack(self: Any, request: Any, context: Any) -> Any:
        return method(self, _StackRequest(request, [_StackResource(self, r, sdk) for r in request.resources]), context)

    return analyze_stack


def _one_request(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def serve(self: Any, *args: Any, **kwargs: Any) -> Any:
        _remembered.answers = {}
        try:
            return method(self, *args, **kwargs)
        finally:
            _remembered.answers = None

    return serve


_RUNTIME_ENV = ("PULUMI_CONFIG", "PULUMI_PROJECT", "PULUMI_STACK", "PULUMI_DRY_RUN", "PULUMI_ORGANIZATION")
"""What the servicer's ``_configure_runtime_settings`` reads: the stack config and the stack's names."""


class _Configured(threading.local):
    def __init__(self) -> None:
        self.environment: Optional[tuple[Optional[str], ...]] = None


_configured = _Configured()


def _once_per_environment(method: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``_configure_runtime_settings``, which the servicer runs first in every request: it parses the
    whole stack config from the environment and configures the Pulumi runtime again. Both come from the
    environment only, so each thread (the runtime's settings are per thread) does it again only when
    that has changed."""

    @functools.wraps(method)
    def configure(self: Any) -> Any:
        environment = tuple(os.environ.get(name) for name in _RUNTIME_ENV)
        if _configured.environment != environment:
            method(self)
            _configured.environment = environment

    return configure


GC_THRESHOLDS = (50_000, 20, 20)
"""For a long-lived process (the pack, the test suite)."""
RUN_GC_THRESHOLDS = (2_000_000, 100, 100)
"""For one offline preview (a short-lived process): the SDK's registrations leave cycles of futures
behind, and each collection of a large young generation walked them again. 1,000 generated pools:
7.1 s of CPU for the program with ``GC_THRESHOLDS``, 4.7 s with these (as with no collection at
all), for 360 MB at most instead of 310; a collection still runs every 2 million allocations."""


def tune_gc(thresholds: tuple[int, int, int] = GC_THRESHOLDS) -> None:
    """Freeze what start-up built and collect cycles less often (see the module docstring)."""
    gc.freeze()
    gc.set_threshold(*thresholds)


def install() -> bool:
    """Install the speed-ups into the policy SDK; False (and nothing changed) for an SDK of another shape."""
    try:
        import pulumi_policy.policy as sdk

        servicer = sdk._PolicyAnalyzerServicer
    except (ImportError, AttributeError):
        return False
    steps = ("json_format", "signature", "deserialize_properties", "unknown_checking_proxy")
    if not all(hasattr(sdk, name) for name in steps) or not all(
        callable(getattr(servicer, name, None)) for name in ("Analyze", "AnalyzeStack")
    ):
        return False
    sdk.json_format = _RememberingJsonFormat()
    sdk.deserialize_properties = _ready_or(_keeping(sdk.deserialize_properties), lambda ready: ready)
    sdk.unknown_checking_proxy = _ready_or(_keeping(sdk.unknown_checking_proxy), lambda ready: ready.proxy)
    sdk.signature = functools.lru_cache(maxsize=None)(inspect.signature)
    built = all(callable(getattr(servicer, name, None)) for name in _BUILT)
    for name in _BUILT:
        if callable(getattr(servicer, name, None)):
            setattr(servicer, name, _remembering_method(getattr(servicer, name)))
    if callable(getattr(servicer, "_configure_runtime_settings", None)):
        servicer._configure_runtime_settings = _once_per_environment(servicer._configure_runtime_settings)
    servicer.Analyze = _one_request(servicer.Analyze)
    servicer.AnalyzeStack = _one_request(_reading_once(servicer.AnalyzeStack, sdk) if built else servicer.AnalyzeStack)
    return True
