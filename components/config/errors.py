"""The one remapper: a spec's problems, named by the stack-config keys that set them.

A spec names its own fields (``PoolSpec.ami_alias: invalid ami_alias 'x' ...``); a stack user wrote
other keys (``rack:karpenter_ami_alias``). ``problems`` turns a ``SpecError`` into ``(key path,
message)`` pairs through the spec's ``KeyTable``, with the spec's field names in each message
replaced by the keys, so the user reads the words they wrote.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..spec.base import FieldProblem, SpecError, error_message, key_path
from .keys import KeyTable


def field_of(error: Mapping[str, Any]) -> str:
    """The spec field a pydantic error is about ('' for the spec as a whole)."""
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, FieldProblem):
        return cause.field
    return str(error["loc"][0]) if error["loc"] else ""


def _worded(message: str, table: KeyTable) -> str:
    """``message`` with the spec's field names written as the keys that set them: a field named as an
    identifier (``time_slicing_replicas``) or before the value it holds (``invalid version '1.3'``);
    a field that is also a plain word (``disk must be ...``) stays a word."""
    for spec_field, key in table.keys.items():
        if spec_field != key and spec_field in message:
            after = r"(?![\w'\"-])" if "_" in spec_field else r"(?= ')"
            message = re.sub(rf"(?<![\w.'\"-]){re.escape(spec_field)}{after}", key, message)
    return message


def problems(exc: SpecError, table: KeyTable, at: str = "") -> list[tuple[str, str]]:
    """``exc``'s problems as ``(key path, message)``, without repeats; ``at`` is an item's path
    (``[0]``) in a list, below which a problem names the item's key (``[0].disk``) when the table
    says so."""
    found: list[tuple[str, str]] = []
    for error in exc.errors:
        message = _worded(error_message(error), table)
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, FieldProblem):  # the key, then the item of its list that broke the rule
            key = key_path([table.key(cause.field), *([cause.index] if cause.index is not None else [])])
            path = (
                key
                if not at
                else at + (f".{key}" if table.suffix or cause.field in table.suffixed or cause.keyed else "")
            )
        elif not at:  # the key, then where in its value (``rack:karpenter_node_taints[1].effect``)
            path = key_path([table.key(field_of(error)), *list(error["loc"])[1:]])
        else:
            loc = list(error["loc"])
            path = at + (f".{key_path([table.key(str(loc[0])), *loc[1:]])}" if loc else "")
        if (path, message) not in found:
            found.append((path, message))
    return found
