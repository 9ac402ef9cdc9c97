"""The two errors a user of the package meets: bad config and bad component arguments.

Both are ``pulumi.RunError``s, so ``pulumi up`` prints them without a traceback, and the offline
preview exits 2 with one ``error:`` line per line of the message.
"""

from __future__ import annotations

from typing import Sequence

import pulumi


class ConfigError(pulumi.RunError):
    """Bad rack config or a lane the real APIs would refuse; the message names the key path or lane."""


class ArgumentError(ConfigError, pulumi.InputPropertiesError):
    """Component arguments that are missing, unknown or of the wrong type: every problem at once.

    A ``pulumi.InputPropertiesError``: it names each property path and its reason (``errors``, as the SDK
    reads them), one line each: ``KarpenterPool 'ml': pool: required (expected PoolSpec)``; the component
    provider sends them to the engine as per-property errors, so a program in any language gets them. It
    is also a ``RunError`` (the CLI prints a ``RunError`` from a Python program without a traceback, any
    other exception with one); ``problems`` holds the ``(path, reason)`` pairs.
    """

    def __init__(
        self, component: str, name: str, path: str, problem: str, more: Sequence[tuple[str, str]] = ()
    ) -> None:
        from .spec.base import (
            shown,
        )  # one problem, one line: a line break or an invisible character in a value is escaped

        self.problems = [(path, problem), *more]
        super().__init__("\n".join(f"{component} '{shown(name)}': {shown(p)}: {shown(r)}" for p, r in self.problems))
        self.errors = [{"property_path": p, "reason": r} for p, r in self.problems]
        self.component = component
        self.name = name
        self.property_path = path
        self.reason = problem


class PropertyProblems(ValueError):
    """What is wrong with one argument given as data (a spec or a cluster as a mapping): ``(path, reason)``
    pairs, which the component reports as its ``ArgumentError``."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{path}: {reason}" for path, reason in problems))
        self.problems = list(problems)


class OfflineUnavailable(ImportError):
    """The offline engine (``mixed_os_racks.offline``, ``mixed-os-racks preview``) cannot run a program on
    the installed Pulumi SDK: it uses SDK internals, so it needs the range the ``offline`` extra pins."""
