"""A pack's config checked against each policy's JSON schema (Draft 7, as the Pulumi CLI checks it),
in this process or in a child.

The offline preview runs the program in its own process, which is busy on one core from its start to
its end; importing ``jsonschema`` there cost about 45 ms of that process's CPU, 6% of the prod
preview. So ``SchemaCheck`` starts a child (``python -m mixed_os_racks.offline.schemacheck``) as the
packs start: it imports ``jsonschema`` on the other core meanwhile, is sent every (schema, value)
pair once the pack has described its policies, and answers each pair's messages. Where ``jsonschema``
is already imported here (a long-lived process: the tests), or the child cannot start, answer in
time, or be sent the values, the check runs here: the same messages either way (``errors_of``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Mapping, Optional, Sequence

Pair = tuple[Mapping[str, Any], Mapping[str, Any]]
"""A policy's config schema (``{"type": "object", "properties": ...}``) and its config."""

CHILD_TIMEOUT_S = 30.0


def schema_errors(schema: Mapping[str, Any], value: Mapping[str, Any]) -> list[str]:
    """Every way ``value`` breaks ``schema``, ordered by where: ``path: message``."""
    import jsonschema

    return [
        (f"{'.'.join(str(p) for p in error.absolute_path)}: " if error.absolute_path else "") + error.message
        for error in sorted(jsonschema.Draft7Validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    ]


def errors_of(pairs: Sequence[Pair]) -> list[list[str]]:
    """Each pair's messages, checked in this process."""
    return [schema_errors(schema, value) for schema, value in pairs]


class SchemaCheck:
    """``errors_of``, answered once, by a child started when this is made (see the module docstring)."""

    def __init__(self) -> None:
        self._child: Optional[subprocess.Popen[bytes]] = None
        if "jsonschema" in sys.modules:
            return
        try:
            self._child = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            self._child = None

    def __call__(self, pairs: Sequence[Pair]) -> list[list[str]]:
        child, self._child = self._child, None
        if child is not None:
            try:
                sent = json.dumps([[schema, value] for schema, value in pairs], allow_nan=False).encode()
                answer, _ = child.communicate(sent, timeout=CHILD_TIMEOUT_S)
                found = json.loads(answer)
                if child.returncode == 0 and _answers(found, len(pairs)):
                    return found
            except (subprocess.TimeoutExpired, TypeError, ValueError, OSError):
                pass  # checked here instead
            finally:
                _stop(child)
        return errors_of(pairs)

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            _stop(child)


def _answers(found: Any, count: int) -> bool:
    return (isinstance(found, list) and len(found) == count
            and all(isinstance(messages, list) and all(isinstance(m, str) for m in messages) for messages in found))


def _stop(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is None:
        child.kill()
    child.wait()
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            stream.close()


def main() -> None:
    import jsonschema  # noqa: F401 - imported while the parent waits for the packs, not after

    pairs = json.load(sys.stdin)
    json.dump(errors_of([(schema, value) for schema, value in pairs]), sys.stdout)


if __name__ == "__main__":
    main()
