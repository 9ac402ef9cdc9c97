"""What every spec shares: the base model, its error, and how errors name their fields.

A spec (``PoolSpec``, ``NodeGroupSpec``, ...) is a frozen pydantic model that checks every rule of
its value once, when it is built. A broken rule raises ``SpecError``, one line per problem, each
``<Spec>.<field>: <problem>``, all problems together. ``FieldProblem`` is how a rule that reads
several fields says which one is wrong; the stack-config layer (``config/``) reads the same errors
and names its own keys instead.
"""

from __future__ import annotations

import difflib
import json
from typing import Annotated, Any, Mapping, Optional, Sequence, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from ..errors import ConfigError
from . import syntax


class FieldProblem(ValueError):
    """A rule broken by one field; an error's key path ends with that field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def key_path(loc: Sequence[Any]) -> str:
    """``("pools", 0, "disk")`` -> ``pools[0].disk`` (pydantic's own validator names are dropped)."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not str(part).startswith("function-") and "[" not in str(part):
            path += f".{part}" if path else str(part)
    return path


def error_message(error: Mapping[str, Any]) -> str:
    """One pydantic error in the seeds' words: the rule's own message, or what was expected and got.

    One problem is one line: a value with a line break in it (``name: |`` gives ``gpu\\n``) shows the
    break escaped, so the error names the value as written and cannot split into lines of its own."""
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required"
    if kind == "value_error":
        text = str(error["msg"]).removeprefix("Value error, ")
    else:
        text = f"{str(error['msg']).lower()} (got {json.dumps(error.get('input'), default=str)})"
    return text.replace("\r", "\\r").replace("\n", "\\n")


def error_loc(error: Mapping[str, Any]) -> tuple[Any, ...]:
    """Where an error is: its location, ending with the field a ``FieldProblem`` names."""
    loc = tuple(error["loc"])
    cause = (error.get("ctx") or {}).get("error")
    return loc + (cause.field,) if isinstance(cause, FieldProblem) else loc


def _model_at(model: type[BaseModel], loc: Sequence[Any]) -> Optional[type[BaseModel]]:
    """The model that holds the last part of ``loc`` (descending through nested specs and lists of them)."""
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        nested = [t for t in (field.annotation, *get_args(field.annotation)) if isinstance(t, type) and issubclass(t, BaseModel)]
        if not nested:
            return None
        model = nested[0]
    return model


def did_you_mean(model: type[BaseModel], loc: Sequence[Any]) -> str:
    """For an unknown field: the field meant, by spelling or as the stack config's key for it
    (``NodeGroupSpec(type=...)``: ``type`` is the stack-config key of ``instance_type``)."""
    holder = _model_at(model, loc) if loc else None
    if holder is None or isinstance(loc[-1], int):
        return ""
    wrong = str(loc[-1])
    from ..config.keys import TABLES  # the stack config's keys (config imports the specs, so only here)

    by_key = {key: field for table in TABLES if table.spec is holder
              for field, key in table.keys.items() if field in holder.model_fields}
    if wrong in by_key:
        return f" (did you mean {by_key[wrong]}? '{wrong}' is its stack-config key)"
    close = difflib.get_close_matches(wrong, list(holder.model_fields), n=1, cutoff=0.7)
    return f" (did you mean {close[0]}?)" if close else ""


class SpecError(ConfigError, ValueError):
    """A spec built with values its rules refuse: one ``<Spec>.<field>: <problem>`` line each."""

    def __init__(self, spec: str, exc: ValidationError, model: Optional[type[BaseModel]] = None) -> None:
        self.errors = exc.errors()
        """pydantic's errors, for callers that name the paths in their own terms (the stack config)."""
        lines = [(key_path(error_loc(e)), error_message(e) + (did_you_mean(model, e["loc"]) if model and
                                                               e["type"] == "extra_forbidden" else ""))
                 for e in self.errors]
        super().__init__("\n".join(f"{spec}.{path}: {message}" if path else f"{spec}: {message}"
                                    for path, message in lines))


def _cluster_name(name: str) -> str:
    problem = syntax.eks_cluster_name_problem(name)
    if problem:
        raise ValueError(f"invalid cluster_name '{name}' ({problem})")
    return name


ClusterName = Annotated[str, AfterValidator(_cluster_name)]
"""An EKS cluster name, as the EKS API takes it."""


def numbers_only(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    """Refuse ``true``/``false`` for a number field: pydantic's lax mode takes them as 1 and 0, so a YAML
    ``weight: true`` would silently become weight 1. Numbers and numeric strings pass."""
    if isinstance(value, bool) and info.field_name in model.model_fields:
        kinds = {model.model_fields[info.field_name].annotation, *get_args(model.model_fields[info.field_name].annotation)}
        if bool not in kinds and kinds & {int, float}:
            raise ValueError(f"expected a number, got {str(value).lower()}")
    return value


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise SpecError(type(self).__name__, exc, type(self)) from None

    @field_validator("*", mode="before")
    @classmethod
    def _numbers(cls, value: Any, info: ValidationInfo) -> Any:
        return numbers_only(cls, value, info)

