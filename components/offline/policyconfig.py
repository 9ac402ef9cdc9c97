"""A policy pack's config, read and merged as the Pulumi CLI merges it: the policies' defaults and
their schemas' defaults, the pack's initial config, then the user's ``--policy-pack-config`` file,
then a check against each policy's schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Optional

from google.protobuf import json_format
from pulumi.runtime.proto import analyzer_pb2 as pb

from ..inputs import MAX_NESTING, NotFinite, finite_float, finite_int, first_not_finite, nesting_depth
from .stackfile import InputFileError, read_utf8

LEVELS = {"advisory": pb.ADVISORY, "mandatory": pb.MANDATORY, "remediate": pb.REMEDIATE, "disabled": pb.DISABLED}
LEVEL_NAMES = {value: name for name, value in LEVELS.items()}

PolicyConfig = dict[str, tuple[str, Optional[dict[str, Any]]]]
"""Policy (or ``all``) -> (enforcement level or '', properties or None), as the CLI holds it."""


class PolicyPackError(Exception):
    """A pack that cannot start, answer, or be configured. The offline CLI exits 2 with it."""


# ---- the config file, merged as the CLI merges it ----------------------------------------------------


def read_config_file(path: Path) -> PolicyConfig:
    """``{"all": "mandatory", "<policy>": "advisory" | {"enforcementLevel": ..., "<prop>": ...}}``.

    The file must be UTF-8 JSON with no byte-order mark, as the CLI's (Go) JSON reader needs
    (pulumi/pulumi ``pkg/resource/analyzer/config.go``, ``parsePolicyPackConfig``: ``encoding/json`` over the
    file's bytes); a number that is not finite
    (``NaN``, ``Infinity``, ``1e400``, which Python's reader accepts and Go's and the pack's
    protobuf encoder do not) is refused here, naming the key; so is nesting deeper than
    ``MAX_NESTING``.
    """
    try:
        text = read_utf8(Path(path), "policy pack config", bom=False)
    except InputFileError as exc:
        raise PolicyPackError(str(exc)) from None
    if not text.strip():
        return {}
    too_deep = False
    try:
        doc = json.loads(text, parse_constant=NotFinite, parse_float=finite_float, parse_int=finite_int)
    except json.JSONDecodeError as exc:
        raise PolicyPackError(f"policy pack config {path} is not valid JSON: {exc}") from None
    except RecursionError:
        too_deep = True
    if too_deep or nesting_depth(doc) > MAX_NESTING + 1:  # a policy's value nests at most MAX_NESTING levels
        raise PolicyPackError(
            f"policy pack config {path}: nested deeper than {MAX_NESTING} levels (no policy config needs that)"
        )
    found = first_not_finite(doc)
    if found:
        key, number = found
        raise PolicyPackError(
            f"policy pack config {path}: {key}: {number[:60]} is not a finite number (JSON has no NaN or Infinity)"
        )
    if not isinstance(doc, dict):
        raise PolicyPackError(f"policy pack config {path}: expected a JSON object")
    return parse_config(doc, str(path))


def parse_config(doc: Mapping[str, Any], source: str = "<config>") -> PolicyConfig:
    config: PolicyConfig = {}
    for key, value in doc.items():
        if isinstance(value, str):
            level, props = value, None
        elif isinstance(value, dict):
            props = dict(value)
            level = props.pop("enforcementLevel", "")
            if not isinstance(level, str):
                raise PolicyPackError(f"policy pack config {source}: {key}: {level!r} is not a valid enforcement level")
            props = props or None
        else:
            raise PolicyPackError(
                f"policy pack config {source}: {key}: {value!r} is not a valid value; must be a string or object"
            )
        if level and level not in LEVELS:
            raise PolicyPackError(f"policy pack config {source}: {key}: '{level}' is not a valid enforcement level")
        if level or props:
            config[key] = (level, props)
    return config


def _apply(result: PolicyConfig, given: PolicyConfig) -> None:
    everything = given.get("all")
    if everything and everything[0]:
        for name, (_, props) in list(result.items()):
            result[name] = (everything[0], props)
    for name, (level, props) in given.items():
        if name not in result:  # the CLI skips a name that is no policy of the pack (ReconcilePolicyPackConfig)
            continue
        current_level, current_props = result.get(name, ("", None))
        merged = dict(current_props or {})
        merged.update(props or {})
        result[name] = (level or current_level, merged or None)


def reconcile(info: pb.AnalyzerInfo, user: PolicyConfig, beneath: Optional[PolicyConfig] = None) -> PolicyConfig:
    """Defaults (each policy's level and its schema's ``default``s), the pack's initial config, what the
    offline preview itself gives (``beneath``: the catalog's prices), then the user's file; then every
    policy's properties checked against its schema."""
    result: PolicyConfig = {}
    schemas: dict[str, dict[str, Any]] = {}
    for policy in info.policies:
        schema = json_format.MessageToDict(policy.configSchema.properties)
        defaults = {k: v["default"] for k, v in schema.items() if isinstance(v, dict) and "default" in v}
        result[policy.name] = (LEVEL_NAMES[policy.enforcementLevel], defaults or None)
        schemas[policy.name] = {
            "type": "object",
            "properties": schema,
            **({"required": list(policy.configSchema.required)} if policy.configSchema.required else {}),
        }
    initial: PolicyConfig = {
        name: (LEVEL_NAMES[c.enforcementLevel], json_format.MessageToDict(c.properties) or None)
        for name, c in info.initialConfig.items()
    }
    _apply(result, initial)
    _apply(result, beneath or {})
    _apply(result, user)
    problems = []
    for name, schema in schemas.items():
        problems += [
            f"{name}: {message}" for message in _schema_errors(schema, (result.get(name) or ("", None))[1] or {})
        ]
    if problems:
        raise PolicyPackError(f"invalid policy pack config for '{info.name}':\n  " + "\n  ".join(problems))
    return result


def properties_problems(properties: Mapping[str, Any], value: Mapping[str, Any]) -> list[str]:
    """What a policy's schema (its ``properties``) refuses in ``value``, each naming its path, as ``reconcile``
    words it: what the CLI checks before the pack is configured."""
    return _schema_errors({"type": "object", "properties": properties}, value)


def _schema_errors(schema: Mapping[str, Any], value: Mapping[str, Any]) -> list[str]:
    import jsonschema

    errors = list(jsonschema.Draft7Validator(schema).iter_errors(value))
    # a value both of the wrong type and outside an enum gets one line, the enum's (it says what the value may be)
    enums = {tuple(error.absolute_path) for error in errors if error.validator == "enum"}
    return [
        (f"{'.'.join(str(p) for p in error.absolute_path)}: " if error.absolute_path else "") + error.message
        for error in sorted(errors, key=lambda e: list(e.absolute_path))
        if not (error.validator == "type" and tuple(error.absolute_path) in enums)
    ]


# ---- one policy's entry, written into a config file ----------------------------------------------------


def with_entry(text: str, policy: str, value: Any, source: str = "<config>") -> str:
    """The config file's ``text`` with the top-level entry ``policy`` set to ``value``, and every other byte as it
    was (other policies' entries, their order, spacing and indentation): the entry's value is replaced where it
    is written, or, when the file has none, added as its last entry. ``text`` is one the CLI reads
    (``read_config_file`` has checked it); a policy given twice is refused, since which one a reader keeps is
    its own choice."""
    decoder = json.JSONDecoder()
    body = text
    start = len(body) - len(body.lstrip())
    if not body.strip():
        return json.dumps({policy: value}, indent=2) + "\n"
    if body[start] != "{":
        raise PolicyPackError(f"policy pack config {source}: expected a JSON object")
    spans: list[tuple[int, int]] = []  # where each value of the key ``policy`` is
    at, last_end = _blank(body, start + 1), start + 1
    while body[at] != "}":
        key, at = decoder.raw_decode(body, at)
        at = _blank(body, at)
        at = _blank(body, at + 1)  # past ':'
        _, end = decoder.raw_decode(body, at)
        if key == policy:
            spans.append((at, end))
        last_end = end
        at = _blank(body, end)
        if body[at] == ",":
            at = _blank(body, at + 1)
    if len(spans) > 1:
        raise PolicyPackError(f"policy pack config {source}: gives {policy} {len(spans)} times; keep one")
    indent = _indent_of(body, start)
    written = json.dumps(value, indent=2).replace("\n", "\n" + indent)
    if spans:
        begin, end = spans[0]
        return body[:begin] + written + body[end:]
    entry = f"{json.dumps(policy)}: {written}"
    if last_end == start + 1:  # an empty object: the entry is its only one
        return body[:start] + "{\n" + indent + entry + "\n}" + body[at + 1 :]
    return body[:last_end] + ",\n" + indent + entry + body[last_end:]


def _blank(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _indent_of(text: str, start: int) -> str:
    """The indentation of the object's first entry (two spaces when it has none on a line of its own)."""
    at = start + 1
    line = text.rfind("\n", start, _blank(text, at))
    if line < 0:
        return "  "
    first = _blank(text, at)
    return text[line + 1 : first] or "  "
