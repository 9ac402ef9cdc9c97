"""Run CrossGuard policy packs over an offline run, the way the Pulumi CLI runs them over a preview.

A pack is started as the CLI starts one (``<python> <pack dir>``, working directory the pack,
``PULUMI_*`` environment), and spoken to over its real gRPC analyzer protocol: the port it prints
on stdout, ``ConfigureStack``, ``GetAnalyzerInfo``, ``Configure`` with the config reconciled as the
CLI reconciles it (policy defaults and schema defaults, the pack's initial config, then the user's
``--policy-pack-config`` file, then a schema check), ``Analyze`` for every resource when the
program registers it (custom and component, with its options and provider), ``AnalyzeStack`` once
when the program is done. Then the process is killed, also on errors.

Like the CLI, ``Analyze`` gets each resource's inputs and ``AnalyzeStack`` each resource's outputs
(pulumi ``pkg/resource/deploy/step_generator.go``, ``AnalyzeResources``, sends ``v.Outputs``): for a
custom resource created by a preview, its inputs plus unknowns; for a component, what it registered
with ``register_outputs`` (nothing, when it registered none). A remote component's outputs come from
its provider, which the offline engine does not run: it gets the inputs it was given, a divergence
the README states (the pack also judges the children the engine expands such a component into).
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar

from .packprocess import Analysis, PolicyPackProcess, pack_env
from .policyconfig import PolicyConfig, PolicyPackError, read_config_file
from .records import ProgramRun, Resource


T = TypeVar("T")


def _in_background(work: Callable[[], T], name: str) -> Future[T]:
    """Run ``work`` on a daemon thread (never joined at exit, so a stuck start cannot hold the process)."""
    future: Future[T] = Future()

    def run() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(work())
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
                future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


FEED_EVERY = 256
"""While the program runs, resources go to the packs in groups of this many (the rest when it is done).
Each answer wakes gRPC's channel thread, which must take the interpreter lock from the program: a
group at a time makes the answers arrive together, and for 1,000 pools the client's share of the
work fell from about 1 s of CPU, one resource at a time, to about 0.5 s, as when all are sent at once."""


FIRST_GROUP = 16
"""The first group's size: a small program's resources reach the packs while it runs (``_group``)."""


def _group(sent: int) -> int:
    """The group size once ``sent`` resources have gone: 16 at first, then as many as have gone, up to
    ``FEED_EVERY`` (16, 16, 32, 64, 128, 256, 256, ...)."""
    return min(FEED_EVERY, max(FIRST_GROUP, sent))


class PolicyPacks:
    """Packs for one preview, started as soon as they are named, and fed each resource as the program
    registers it (``add``), as the CLI feeds them during a preview: a pack's start-up and its
    ``Analyze`` work overlap the program's run, and only ``AnalyzeStack`` waits for its end
    (``analyze``). All are killed on ``close``, however the preview ends (an error, Ctrl-C): the
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
        beneath: Optional[PolicyConfig] = None,
        overrides: Optional[Mapping[str, Mapping[str, Any]]] = None,
        extended: Optional[Mapping[str, Mapping[str, Sequence[str]]]] = None,
    ) -> None:
        """``overrides``: policy -> properties laid over each pack's config for that policy, in the packs that
        have it (``overridden`` says which were, once the packs have started); ``extended``: policy -> property ->
        items added to the list each pack's config gives it (none given: only these)."""
        self._overrides = dict(overrides or {})
        self._extended = dict(extended or {})
        self.overridden: set[str] = set()
        if configs and len(configs) != len(packs):
            raise PolicyPackError(
                f"{len(configs)} policy pack config(s) for {len(packs)} policy pack(s): give one per pack, in order"
            )
        self._user = [read_config_file(Path(c)) if c else {} for c in configs] or [{} for _ in packs]
        self._stack_config = stack_config or {}
        self._beneath = beneath
        """Config the offline preview gives every pack under the user's (the catalog's prices)."""
        self._target = ProgramRun(project=project, stack=stack, resources=[], outputs={})
        self.warnings: list[str] = []
        env = pack_env(project, stack, stack_config)
        self._lock = threading.Lock()
        self._packs: list[PolicyPackProcess] = []
        self._analyses: list[Optional[Analysis]] = []
        self._sent: list[int] = []
        self._failed: list[Optional[BaseException]] = []
        self._starting: list[Future[None]] = []
        try:
            for path in packs:
                self._packs.append(PolicyPackProcess(path, env, wait=False))
                self._analyses.append(None)
                self._sent.append(0)
                self._failed.append(None)
            for n, pack in enumerate(self._packs):
                self._starting.append(_in_background(functools.partial(self._start, n), f"start {pack.path.name}"))
        except BaseException:
            self.close()
            raise

    def _start(self, n: int) -> None:
        """Start pack ``n`` and configure it, then send it what the program registered meanwhile."""
        pack = self._packs[n]
        pack.handshake()
        user = dict(self._user[n])
        served = {policy.name for policy in pack.info.policies}
        for name, props in self._overrides.items():
            if name in served:
                level, given = user.get(name, ("", None))
                user[name] = (level, {**(given or {}), **props})
                with self._lock:
                    self.overridden.add(name)
        for name, lists in self._extended.items():
            if name in served:
                level, given = user.get(name, ("", None))
                props = dict(given or {})
                for key, items in lists.items():
                    had = props.get(key)
                    props[key] = list(dict.fromkeys([*(had if isinstance(had, list) else []), *items]))
                user[name] = (level, props)
        pack.configure(user, self._target, self._beneath)
        with self._lock:
            self._analyses[n] = pack.analysis(self._target.project, self._target.stack, self._stack_config)
            self._feed(n)

    def add(self, resource: Resource) -> None:
        """A resource the program registered, for ``Analyze``: sent to each pack that has started once a
        group is waiting (``_group``), to the others as soon as they have started. Never raises: a pack that
        fails is reported by ``analyze``."""
        with self._lock:
            self._target.resources.append(resource)
            for n in range(len(self._packs)):
                waiting = len(self._target.resources) - self._sent[n]
                if waiting >= _group(self._sent[n]) and self._analyses[n] is not None and self._failed[n] is None:
                    try:
                        self._feed(n)
                    except Exception as exc:  # noqa: BLE001 - raised again by ``analyze``
                        self._failed[n] = exc

    def _feed(self, n: int) -> Analysis:
        """Send pack ``n`` the resources it has not had (it has started: ``_start``)."""
        analysis = self._analyses[n]
        assert analysis is not None
        for resource in self._target.resources[self._sent[n] :]:
            analysis.add(resource)
        self._sent[n] = len(self._target.resources)
        return analysis

    def analyze(self, run: ProgramRun) -> list[dict[str, Any]]:
        """Every pack's violations over ``run``: the resources ``add`` has not sent yet, then
        ``AnalyzeStack``. A run other than the one ``add`` was fed is sent in full."""
        for starting in self._starting:
            starting.result()  # a pack that could not start, or refused its config
        with self._lock:
            fed = self._target.resources
            if len(fed) > len(run.resources) or any(a is not b for a, b in zip(fed, run.resources)):
                self._analyses = [pack.analysis(run.project, run.stack, self._stack_config) for pack in self._packs]
                self._sent = [0] * len(self._packs)
            self._target.resources = list(run.resources)
            violations: list[dict[str, Any]] = []
            self.warnings = []
            for n, pack in enumerate(self._packs):
                failed = self._failed[n]
                if failed is not None:
                    raise failed
                violations += self._feed(n).finish()
                self.warnings += pack.warnings
        return violations

    @property
    def names(self) -> list[str]:
        """Each started pack's name, as it describes itself (``GetAnalyzerInfo``), in order."""
        return [pack.info.name for pack in self._packs]

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
