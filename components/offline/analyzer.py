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

import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .packprocess import PolicyPackProcess, pack_env
from .policyconfig import PolicyPackError, read_config_file
from .records import ProgramRun


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
