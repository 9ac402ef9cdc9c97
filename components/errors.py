"""The two errors a user of the package meets: bad config and bad component arguments.

Both are ``pulumi.RunError``s, so ``pulumi up`` prints them without a traceback, and the offline
preview exits 2 with one ``error:`` line per line of the message.
"""

from __future__ import annotations

import pulumi


class ConfigError(pulumi.RunError):
    """Bad rack config or a lane the real APIs would refuse; the message names the key path or lane."""


class ArgumentError(ConfigError):
    """A component argument that is missing, unknown or of the wrong type.

    Like pulumi-eks's ``InputPropertiesError``, it names the property path:
    ``KarpenterPool 'ml': pool: required (expected PoolSpec)``.
    """

    def __init__(self, component: str, name: str, path: str, problem: str) -> None:
        super().__init__(f"{component} '{name}': {path}: {problem}")
        self.component = component
        self.name = name
        self.property_path = path
        self.reason = problem


class OfflineUnavailable(ImportError):
    """The offline engine (``mixed_os_racks.offline``, the ``mixed-os-racks`` command) cannot run on the
    installed Pulumi SDK: it uses SDK internals, so it needs the range the ``offline`` extra pins."""
