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
And ``AnalyzeStack`` builds the stack's resources once for all its stack policies
(``_stack_resources``), where the servicer built them again for each (ten in this pack): decoded,
wrapped, given their options and provider, and linked to their parent and dependencies. The
servicer's own loop is handed a request without resources (``_WithoutResources``), and the
arguments it builds for each policy get the resources read once, in a list of their own
(``_given_resources``); everything else (levels, reports, config, the "unknown at preview"
diagnostic) is still the servicer's. With this, ``AnalyzeStack`` of 1,000 generated pools (3,006
resources) took 0.34 s in the pack instead of 0.54-0.62 s. The resource objects are shared between
stack policies as the options and providers are; no policy of this pack assigns to them (a team's
own policies, served beside them, read them too: docs/policies.md says they are read-only). The SDK's
read-only proxies get a direct ``get`` and iteration (``_quick_reads``): the same values and the
same ``UnknownValueError``, in one call where ``Mapping.get`` made four.
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
from typing import Any, Callable, Optional, cast

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


def _answered(
    table: dict[Any, tuple[Any, Any]], step: Any, value: Any, compute: Callable[[], Any], limit: Optional[int] = None
) -> Any:
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
    return _decoded(cast(Any, type(message)), message.SerializeToString(deterministic=True))


class _RememberingJsonFormat:
    """``google.protobuf.json_format`` with ``MessageToDict(message)`` remembered per message content."""

    MessageToDict = staticmethod(_remembering(_message_to_dict))

    def __getattr__(self, name: str) -> Any:
        return getattr(_json_format, name)


def _remembering_method(method: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A servicer method of one message, answered once per message object for the request being served."""

    @functools.wraps(method)
    def answer(self: Any, message: Any) -> Any:
        answers = _remembered.answers
        if answers is None:
            return method(self, message)
        return _answered(answers, method, message, lambda: method(self, message))

    return answer


class _Stack(threading.local):
    def __init__(self) -> None:
        self.reading: Optional[tuple[Any, Any, Any]] = None
        """While the thread serves ``AnalyzeStack``: the servicer, the request and the SDK module;
        ``resources`` holds what was read from the request once the first stack policy asked."""
        self.resources: Optional[list[Any]] = None


_stack = _Stack()


class _WithoutResources:
    """An ``AnalyzeStackRequest`` as the servicer's own per-policy loop sees it: with no resources
    (``_stack_resources`` has read them once); anything else is read from the request."""

    resources = ()

    def __init__(self, request: Any) -> None:
        self.request = request

    def __getattr__(self, name: str) -> Any:
        return getattr(self.request, name)


def _stack_resources(servicer: Any, request: Any, sdk: Any) -> list[Any]:
    """The request's resources as the servicer builds them for each stack policy (``PolicyResource``:
    properties decoded, deserialized and wrapped read-only, options, provider), with parent,
    dependencies and property dependencies linked to the resources of the request they name (a URN
    the request does not hold is left out), built once for all the stack policies."""
    read = []
    by_urn: dict[str, Any] = {}
    for message in request.resources:
        props = sdk.unknown_checking_proxy(
            sdk.deserialize_properties(sdk.json_format.MessageToDict(message.properties))
        )
        resource = sdk.PolicyResource(
            message.type,
            props,
            message.urn,
            message.name,
            servicer._get_resource_options(message),
            servicer._get_provider_resource(message),
            None,
            [],
            {},
        )
        by_urn[message.urn] = resource
        read.append((resource, message))
    for resource, message in read:
        resource.parent = by_urn.get(message.parent)
        resource.dependencies = [by_urn[urn] for urn in message.dependencies if urn in by_urn]
        resource.property_dependencies = {
            key: [by_urn[urn] for urn in deps.urns if urn in by_urn]
            for key, deps in message.propertyDependencies.items()
        }
    return [resource for resource, _ in read]


def _given_resources(args_type: type) -> Callable[..., Any]:
    """``StackValidationArgs``, given the resources ``_stack_resources`` read (a list of its own for each
    policy) in place of the empty list the servicer's loop built from ``_WithoutResources``."""

    def stack_validation_args(resources: list[Any], config: Any, stack_tags: Any) -> Any:
        if not resources and _stack.reading is not None:
            if _stack.resources is None:
                servicer, request, sdk = _stack.reading
                _stack.resources = _stack_resources(servicer, request, sdk)
            resources = list(_stack.resources)
        return args_type(resources, config, stack_tags)

    return stack_validation_args


def _reading_once(method: Callable[..., Any], sdk: Any) -> Callable[..., Any]:
    @functools.wraps(method)
    def analyze_stack(self: Any, request: Any, context: Any) -> Any:
        _stack.reading, _stack.resources = (self, request, sdk), None
        try:
            return method(self, _WithoutResources(request), context)
        finally:
            _stack.reading = _stack.resources = None

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


def _quick_reads(proxy: Any) -> bool:
    """Give the SDK's read-only proxies a direct ``get`` and iteration: ``Mapping.get`` and
    ``Sequence.__iter__`` reach a value through three more calls each (``__getitem__``, then the
    unknown check, then its helper), and the pack's rules read a stack of 3,000 resources through
    about 100,000 of them. A read gives what it gave before and raises the same ``UnknownValueError``
    for a value unknown at preview (same sentinels, same property path)."""
    names = ("_DictProxy", "_ListProxy", "UnknownValueError", "_append_prop")
    sentinels = [
        value for name, value in vars(proxy).items() if name.startswith("UNKNOWN_") and name.endswith("_VALUE")
    ]
    if not all(hasattr(proxy, name) for name in names) or not sentinels:
        return False
    unknown_values = frozenset(sentinels)
    unknown_error, path_to = proxy.UnknownValueError, proxy._append_prop

    def get(self: Any, key: Any, default: Any = None) -> Any:
        target = self._DictProxy__target
        if key == "__target":
            return target
        try:
            value = target[key]
        except KeyError:
            return default
        if isinstance(value, str) and value in unknown_values:
            raise unknown_error(value, path_to(self._DictProxy__props_acc, key))
        return value

    def iterate(self: Any) -> Any:
        for index, value in enumerate(self._ListProxy__target):
            if isinstance(value, str) and value in unknown_values:
                raise unknown_error(value, path_to(self._ListProxy__props_acc, index))
            yield value

    proxy._DictProxy.get = get
    proxy._ListProxy.__iter__ = iterate
    return True


GC_THRESHOLDS = (50_000, 20, 20)
"""For a long-lived process (the pack, the test suite)."""


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
    sdk.json_format = _RememberingJsonFormat()  # type: ignore[attr-defined]  # replaces the SDK module's own import, which its servicer reads
    sdk.deserialize_properties = _keeping(sdk.deserialize_properties)  # type: ignore[attr-defined]  # replaces the SDK module's own import, which its servicer reads
    sdk.unknown_checking_proxy = _keeping(sdk.unknown_checking_proxy)  # type: ignore[attr-defined]  # replaces the SDK module's own import, which its servicer reads
    sdk.signature = functools.lru_cache(maxsize=None)(inspect.signature)  # type: ignore[attr-defined]  # replaces the SDK module's own import, which its servicer reads
    built = ("_get_resource_options", "_get_provider_resource")
    reads_once = all(callable(getattr(servicer, name, None)) for name in built) and all(
        isinstance(getattr(sdk, name, None), type) for name in ("PolicyResource", "StackValidationArgs")
    )
    for name in built:
        if callable(getattr(servicer, name, None)):
            setattr(servicer, name, _remembering_method(getattr(servicer, name)))
    if callable(getattr(servicer, "_configure_runtime_settings", None)):
        setattr(servicer, "_configure_runtime_settings", _once_per_environment(servicer._configure_runtime_settings))
    setattr(servicer, "Analyze", _one_request(servicer.Analyze))
    if reads_once:
        setattr(sdk, "StackValidationArgs", _given_resources(sdk.StackValidationArgs))
        setattr(servicer, "AnalyzeStack", _reading_once(servicer.AnalyzeStack, sdk))
    setattr(servicer, "AnalyzeStack", _one_request(servicer.AnalyzeStack))
    import pulumi_policy.proxy as proxy

    _quick_reads(proxy)
    return True
