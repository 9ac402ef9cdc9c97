"""Remote components, expanded offline the way their providers expand them under the Pulumi CLI.

Under ``pulumi preview`` a remote component (a multi-language component: pulumi-eks's
``ManagedNodeGroup``, pulumi-kubernetes's yaml/v2 ``ConfigFile``/``ConfigGroup`` and helm.sh/v4
``Chart``) is constructed by its provider, which registers the component's children; the policy pack
judges those children. Under the SDK's mocks the component is one opaque registration. The
expanders here read the component's registration (its inputs as the engine received them, on the
wire: unknowns and secrets keep their markers) and return the children its provider would register,
with the names, types and parents the provider gives them; the engine records them as it records any
registration. What an expander cannot do offline it says, by name, as an error or a warning.

Values stay wire values: ``UNKNOWN`` for a value not known until apply, ``{sig: secret, value}`` for a
secret, ``{sig: resource, urn, id}`` for a resource reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Protocol, Sequence

from . import sdk
from .catalog import Catalog

UNKNOWN = sdk.UNKNOWN
SIG = sdk.SIG_KEY


class Registration(Protocol):
    """What an expander reads of a component's registration (the engine's ``Resource``)."""

    urn: str
    type: str
    name: str
    provider: str
    providers: Mapping[str, str]
    dependencies: Sequence[str]
    property_dependencies: Mapping[str, Sequence[str]]

    @property
    def wire(self) -> dict[str, Any]: ...


@dataclass
class Child:
    """One resource a provider registers for a component, as the engine receives it."""

    type: str
    name: str
    props: dict[str, Any]
    """Wire values (unknowns and secrets marked)."""
    custom: bool = True
    provider: str = ""
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    ignore_changes: list[str] = field(default_factory=list)


@dataclass
class Context:
    """What the offline engine knows while expanding: the account and the program's other resources."""

    catalog: Catalog
    config: Mapping[str, str]
    """The stack config (``ns:key`` -> text)."""
    states: Mapping[str, Mapping[str, Any]]
    """URN -> the resource's state as the engine has it (wire values): reads in full, creates as previewed."""
    registrations: Mapping[str, Registration]
    warn: Callable[[str], None]


class ExpansionError(Exception):
    """A component its provider would refuse, or that the offline engine cannot expand: the message names it."""


def child_urn(parent_urn: str, type_: str, name: str) -> str:
    """A child's URN: the parent's stack, project and type chain, then the child's type and name."""
    head, _, _ = parent_urn.rpartition("::")
    return f"{head}${type_}::{name}"


# ---- wire values --------------------------------------------------------------------------------------


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(SIG) == sdk.SECRET_SIG


def reveal(value: Any) -> Any:
    """The value under any secret markers (a secret's secrecy is tracked with ``has_secret``)."""
    if is_secret(value):
        return reveal(value.get("value"))
    if isinstance(value, dict) and value.get(SIG) != sdk.RESOURCE_SIG:
        return {k: reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [reveal(v) for v in value]
    return value


def has_secret(value: Any) -> bool:
    if is_secret(value):
        return True
    if isinstance(value, dict):
        return any(has_secret(v) for v in value.values())
    if isinstance(value, list):
        return any(has_secret(v) for v in value)
    return False


def known(value: Any) -> bool:
    """True when nothing in ``value`` is unknown until apply."""
    if value == UNKNOWN:
        return False
    if isinstance(value, dict):
        return all(known(v) for v in value.values())
    if isinstance(value, list):
        return all(known(v) for v in value)
    return True


def secret(value: Any) -> dict[str, Any]:
    return {SIG: sdk.SECRET_SIG, "value": value}


def derived(value: Any, *sources: Any) -> Any:
    """``value`` computed from ``sources``: unknown when any source is, secret when any source is."""
    if not all(known(s) for s in sources):
        return UNKNOWN
    return secret(value) if any(has_secret(s) for s in sources) else value


def reference(value: Any) -> Optional[str]:
    """The URN a resource reference names, else None."""
    value = reveal(value)
    if isinstance(value, dict) and value.get(SIG) == sdk.RESOURCE_SIG:
        return str(value.get("urn") or "")
    return None


def lookup(value: Any, *path: str) -> Any:
    """``value[path[0]][path[1]]...``: UNKNOWN when a step is unknown, None when a step is absent."""
    for key in path:
        value = reveal(value)
        if value == UNKNOWN:
            return UNKNOWN
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def without_none(values: Mapping[str, Any]) -> dict[str, Any]:
    """A mapping without the keys an SDK would not send (``None``/undefined)."""
    return {k: v for k, v in values.items() if v is not None}
