"""The seeds' value shapes: comma lists, ``k=v`` pairs, ``key=value:Effect`` taints, JSON strings.

A Convox rack passes its lists as JSON text and its labels, tags and taints as comma-separated
strings; YAML lists and mappings work too. These turn either into what a spec field takes. They
check shapes only (a pair needs its ``=``, a key may not repeat); the values' rules are the specs'.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Callable

from pydantic import BeforeValidator

from ..spec.base import json_value, shown


class KeyProblems(ValueError):
    """Several problems found at once, each at a key path below the field that raised it."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems


def split_csv(value: Any) -> Any:
    """``"g5,g6"`` -> ``["g5", "g6"]``; lists pass through; an empty string means 'not set'. An empty item
    (``"g5,,g6"``, ``","``) is refused: dropped, ``","`` would mean no families at all, so any family."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",")]
        if value.strip() and not all(parts):
            raise ValueError(f"an empty item in '{shown(value)}' (write the items separated by single commas)")
        return [part for part in parts if part]
    return value


def parse_kv(value: Any, invalid: Callable[[str], str] = lambda part: f"invalid label '{part}'") -> Any:
    """``"k1=v1,k2=v2"`` -> ``{"k1": "v1", "k2": "v2"}``; mappings pass through unchanged (a value
    with a comma in a mapping stays one value). A key given twice is refused: one of the two values
    would be dropped without a word."""
    if not isinstance(value, str):
        return value
    out: dict[str, str] = {}
    if value.strip() and not all(part.strip() for part in value.split(",")):
        raise ValueError(f"an empty pair in '{shown(value)}' (write k1=v1,k2=v2, separated by single commas)")
    for part in value.split(","):
        if not part.strip():
            continue
        key, sep, val = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{invalid(part.strip())}, use format: k1=v1,k2=v2")
        if key.strip() in out:
            raise ValueError(
                f"'{key.strip()}' is given twice ('{key.strip()}={out[key.strip()]}' and '{part.strip()}'); keep one"
            )
        out[key.strip()] = val.strip()
    return out


def parse_taints(value: Any) -> Any:
    """``"key=value:Effect,key:Effect"`` -> taints; a YAML list of such strings or of mappings works too."""
    items = split_csv(value) if isinstance(value, str) else value
    if not isinstance(items, list):
        return items
    out: list[Any] = []
    for item in items:
        if not isinstance(item, str):
            out.append(item)
            continue
        key, sep, effect = item.strip().rpartition(":")
        name, _, val = key.partition("=")
        if not sep or not name or not effect:
            raise ValueError(f"invalid taint '{item}', use format: key=value:Effect or key:Effect")
        out.append({"key": name, "value": val if "=" in key else None, "effect": effect})
    return out


def json_list(value: Any) -> Any:
    """The seeds pass these lists as JSON strings; YAML lists work as they are."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            return json_value(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON: {exc.msg} at position {exc.pos}") from None
        except RecursionError:
            raise ValueError("invalid JSON: nested too deep to read") from None
    return value


def parse_tags(value: Any) -> Any:
    return parse_kv(value, lambda part: f"invalid tag '{part}'")


CsvList = Annotated[list[str], BeforeValidator(split_csv)]
KeyValues = Annotated[dict[str, str], BeforeValidator(parse_kv)]
Tags = Annotated[dict[str, str], BeforeValidator(parse_tags)]
Taints = Annotated[list[Any], BeforeValidator(parse_taints)]
JsonList = Annotated[list[Any], BeforeValidator(json_list)]
