"""The physical name the Pulumi engine gives a resource the program does not name, under the stack's
``pulumi:autonaming`` config: what a look-up of a live resource by name must match. Pure: standard library only.

How the engine reads the config (pulumi/pulumi ``pkg/cmd/pulumi/autonaming/config.go`` and ``json.go``, and
``pkg/resource/autonaming/strategy.go``):

- ``pulumi:autonaming`` is an object: ``mode`` or ``pattern`` (with ``enforce``) at its root, under
  ``providers.<package>``, and under ``providers.<package>.resources.<type token>``; a resource takes the most
  specific one given (its type's, else its provider's, else the root's, else the provider's own default).
  ``mode`` with ``pattern`` or ``enforce`` is refused, and so is an unknown key or mode.
- ``mode: default``: the provider names the resource itself (pulumi-aws: ``<name>-`` and 7 hex digits);
  ``verbatim``: exactly the resource's logical name; ``disabled``: no auto-name (the provider's own fallback).
- ``pattern``: ``${name}`` is the logical name; ``${organization}``, ``${project}``, ``${stack}`` and
  ``${config.<key>}`` (a key of the project's namespace) are read once; ``${hex(n)}``, ``${alphanum(n)}`` (a-z,
  0-9), ``${string(n)}`` (a-z), ``${num(n)}`` and ``${uuid}`` are random, from a seed only the engine has.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

CONFIG_KEY = "pulumi:autonaming"
DEFAULT_SUFFIX = r"-[0-9a-f]{7}"
"""pulumi-aws's own auto-name (``tfbridge.AutoName``): the logical name, ``-`` and 7 hex digits."""
LONGEST = 63
"""The longest node group name EKS takes (``CreateNodegroup``'s ``nodegroupName``)."""
_NAMING_KEYS = {"mode", "pattern", "enforce"}
_RANDOM = {"hex": "[0-9a-f]", "alphanum": "[a-z0-9]", "string": "[a-z]", "num": "[0-9]"}
_EXPRESSION = re.compile(
    r"\$\{(?:(name|organization|project|stack|uuid)|config\.([^}]+)|(hex|alphanum|string|num)\((\d+)\))\}"
)
_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@dataclass(frozen=True)
class Naming:
    """The names a live resource of a type may have: the one the engine gives a new resource under the stack's
    config, and the provider's default one, which a resource created before the config keeps (the engine names a
    resource once, when it creates it). ``reason``: why a new resource's name cannot be known ('' when it can)."""

    patterns: tuple[str, ...]
    """Regular expressions a name matches in full."""
    reason: str = ""
    how: str = "default"
    """``default``, ``verbatim``, ``pattern`` or ``disabled``: the naming a new resource gets (for messages)."""

    def matches(self, name: str) -> bool:
        return any(re.fullmatch(pattern, name) for pattern in self.patterns)


@dataclass(frozen=True)
class Stack:
    """What a pattern's stack expressions read."""

    organization: Optional[str]
    """None when the engine does not say (a pattern reading it then names nothing)."""
    project: str
    stack: str
    config: Callable[[str], Optional[str]]
    """A key of the project's config namespace -> its value, or None when unset."""


def _section(value: Any, where: str) -> tuple[Optional[Mapping[str, Any]], str]:
    if value is None:
        return None, ""
    if not isinstance(value, Mapping):
        return None, f"{where} is not an object"
    return value, ""


def _chosen(section: Mapping[str, Any], where: str) -> tuple[Optional[Mapping[str, Any]], str]:
    """The naming a section gives itself (its mode, or pattern and enforce), None when it gives none."""
    given = {k: section[k] for k in _NAMING_KEYS if k in section}
    if "mode" in given and len(given) > 1:
        return None, f"{where} gives both mode and pattern/enforce"
    if "enforce" in given and "pattern" not in given:
        return None, f"{where} gives enforce without a pattern"
    if "mode" in given and given["mode"] not in ("default", "verbatim", "disabled"):
        return None, f"{where}.mode {given['mode']!r} is no naming mode"
    if "pattern" in given and not isinstance(given["pattern"], str):
        return None, f"{where}.pattern is not text"
    return (given or None), ""


def _level(
    value: Any, where: str, below: Optional[str]
) -> tuple[Optional[Mapping[str, Any]], Optional[Mapping[str, Any]], str]:
    """One level of the config (the root, a provider's, a resource type's): the section at ``where`` (None when
    absent or refused), the naming it gives itself, and why it is refused ('' when it is not). ``below``: the key
    that holds the next level down, the one key besides the naming keys a section may have (None: none)."""
    section, problem = _section(value, where)
    if section is None:
        return None, None, problem
    unknown = sorted(set(section) - _NAMING_KEYS - ({below} if below else set()))
    if unknown:
        return None, None, f"{where} has the unknown key {unknown[0]!r}"
    chosen, problem = _chosen(section, where)
    if problem:
        return None, None, problem
    return section, chosen, ""


def _resolve(config: Any, type_token: str) -> tuple[Optional[Mapping[str, Any]], str]:
    """The naming the engine applies to ``type_token`` (None: the provider's default), or why it refuses the config."""
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            return None, f"{CONFIG_KEY} is not an object"
    root, chosen, problem = _level(config, CONFIG_KEY, "providers")
    if root is None:
        return None, problem
    providers, problem = _section(root.get("providers"), f"{CONFIG_KEY}.providers")
    if problem:
        return None, problem
    package = type_token.split(":", 1)[0]
    where = f"{CONFIG_KEY}.providers.{package}"
    provider, own, problem = _level((providers or {}).get(package), where, "resources")
    if provider is None:
        return (None if problem else chosen), problem
    resources, problem = _section(provider.get("resources"), f"{where}.resources")
    if problem:
        return None, problem
    where = f"{where}.resources.{type_token}"
    typed, found, problem = _level((resources or {}).get(type_token), where, None)
    if problem:
        return None, problem
    if typed is None:
        return (own if own is not None else chosen), ""
    if found is None:
        return None, f"{where} gives no mode or pattern"
    return found, ""


def _pattern_regex(pattern: str, name: str, stack: Stack) -> tuple[Optional[str], str]:
    parts, at = [], 0
    for found in _EXPRESSION.finditer(pattern):
        parts.append(re.escape(pattern[at : found.start()]))
        at = found.end()
        word, key, random, count = found.groups()
        if word == "uuid":
            parts.append(_UUID)
        elif word:
            value = {"name": name, "organization": stack.organization, "project": stack.project, "stack": stack.stack}[
                word
            ]
            if value is None:
                return None, f"its pattern reads ${{{word}}}, which the engine does not give the program"
            parts.append(re.escape(value))
        elif key is not None:
            value = stack.config(key)
            if value is None:
                return None, f"its pattern reads ${{config.{key}}}, which the stack's config does not set"
            parts.append(re.escape(value))
        else:  # EKS and most AWS names stop at 63 characters: a longer part matches no live name
            parts.append(f"{_RANDOM[random]}{{{min(int(count), LONGEST + 1)}}}")
    parts.append(re.escape(pattern[at:]))
    return "".join(parts), ""


def naming(config: Any, type_token: str, name: str, stack: Stack) -> Naming:
    """How the engine names a resource of ``type_token`` with logical name ``name`` under the ``pulumi:autonaming``
    value ``config`` (None when the stack sets none)."""
    default = re.escape(name) + DEFAULT_SUFFIX
    if config is None:
        return Naming((default,))
    chosen, problem = _resolve(config, type_token)
    if problem:
        return Naming((default,), f"{CONFIG_KEY}: {problem}, which the Pulumi CLI refuses", "refused")
    mode = "default" if chosen is None else chosen.get("mode", "pattern")
    if mode == "default":
        return Naming((default,))
    if mode == "verbatim":
        return Naming((re.escape(name), default), how="verbatim")
    if mode == "disabled":
        return Naming(
            (default,),
            f"{CONFIG_KEY} disables auto-naming for {type_token}, so the provider names a new one itself",
            "disabled",
        )
    regex, problem = _pattern_regex(str((chosen or {}).get("pattern")), name, stack)
    if regex is None:
        return Naming((default,), f"{CONFIG_KEY}: {problem}", "pattern")
    return Naming((regex, default), how="pattern")
