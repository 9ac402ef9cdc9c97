"""Reading the current stack's ``rack:`` config (the real engine's, or the offline one's).

The language host hands a program its whole stack config as the ``PULUMI_CONFIG`` environment
variable (JSON, structured values as JSON text), which the SDK exposes as
``pulumi.runtime.get_config_env()``. ``pulumi.Config`` cannot list keys, and unknown keys must be
errors, so this reads the whole map, and also refuses keys that were meant for the rack but that it
would never read: another spelling of the ``rack`` namespace, a rack parameter in the project's
namespace (where the CLI puts a key written without one), and a key written as a path.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Optional

import pulumi

from ..errors import ConfigError
from ..inputs import MAX_NESTING, nesting_depth
from ..facts import upstream
from .. import syntax
from ..spec import RackSpec
from ..spec.base import json_value, pointed, shown
from . import keys
from .keys import NAMESPACE
from .params import RackParams, parse_rack_config

FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def decode_config_value(raw: Any, key: str = "") -> Any:
    """Structured stack config reaches a program as JSON text; plain strings stay strings.

    JSON nested deeper than ``MAX_NESTING`` is refused (``ConfigError`` naming ``key``).
    """
    if isinstance(raw, str) and raw[:1] in "[{":
        try:
            value = json_value(raw)
        except json.JSONDecodeError:
            return raw
        except ValueError as exc:  # a key given twice in one JSON object
            raise ConfigError(f"{key or 'value'}: {shown(str(exc))}") from None
        except RecursionError:
            raise ConfigError(_too_deep(key)) from None
        if nesting_depth(value) > MAX_NESTING:
            raise ConfigError(_too_deep(key))
        return value
    return raw


def _too_deep(key: str) -> str:
    return (
        f"{key or 'value'}: nested deeper than {MAX_NESTING} levels of lists and mappings (no rack config needs that)"
    )


def rack_values(all_config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``rack:*`` entries of a full config map, keyed without the namespace."""
    prefix = f"{NAMESPACE}:"
    return {k[len(prefix) :]: decode_config_value(v, k) for k, v in all_config.items() if k.startswith(prefix)}


def _field_named(name: str) -> Optional[str]:
    """The rack parameter ``name`` spells, ignoring case."""
    fields = {field.lower(): field for field in RackParams.model_fields}
    return fields.get(name.lower())


def key_problems(all_config: Mapping[str, Any], project: Optional[str] = None) -> dict[str, str]:
    """Keys meant for the rack that it would never read: key -> ``<key>: <problem>``.

    - a namespace that is ``rack`` in another case (``Rack:karpenter_node_os``);
    - a rack parameter in the project's namespace: the CLI namespaces a key written without one
      with the project's name (pulumi ``sdk/go/common/workspace/loaders.go``,
      ``stackConfigNamespacedWithProject``), so ``karpenter_node_os: bottlerocket`` reaches the
      program as ``<project>:karpenter_node_os``;
    - under ``rack:``, a key that is a parameter in another case, or a path
      (``rack:additional_karpenter_nodepools_config[0].name``): a stack file's keys are names,
      only ``pulumi config set --path`` reads a path, and writes the value inside the list;
    - ``aws:region`` that is no AWS region (the AWS provider would fail on it anyway, later and vaguer).
    """
    problems: dict[str, str] = {}
    for key in all_config:
        namespace, sep, name = key.partition(":")
        if not sep:
            continue
        field = _field_named(name.strip())
        if namespace != NAMESPACE and namespace.strip().lower() == NAMESPACE:
            hint = (
                f"did you mean {NAMESPACE}:{field}?"
                if field
                else f"the rack reads the namespace '{NAMESPACE}', in lowercase"
            )
            why = (
                "namespaces are case-sensitive"
                if namespace.strip() != NAMESPACE
                else "the namespace has spaces around it"
            )
            problems[key] = f"{_spaced(key)}: not read: {why}; {hint}"
        elif project and namespace == project and project != NAMESPACE and field:
            problems[key] = (
                f"{key}: not read: the rack reads its parameters from the '{NAMESPACE}' namespace, and a key written "
                f"without a namespace is in the project's ('{project}'); did you mean {NAMESPACE}:{field}?"
            )
        elif namespace == NAMESPACE and not name.isascii() and not FIELD_NAME.fullmatch(name):
            meant = _field_named("".join(ch for ch in name if ch.isascii() and ch.isprintable()))
            problems[key] = f"{key}: unknown field" + (f"; did you mean {NAMESPACE}:{meant}?" if meant else "")
        elif namespace == NAMESPACE and not FIELD_NAME.fullmatch(name) and not re.search(r"[.\[]", name):
            problems[key] = f"{_spaced(key)}: unknown field" + (f"; did you mean {NAMESPACE}:{field}?" if field else "")
        elif namespace == NAMESPACE and not FIELD_NAME.fullmatch(name):
            parameter = re.split(r"[.\[]", name, maxsplit=1)[0]
            problems[key] = (
                f"{key}: unknown field: a stack config key is a name, not a path; write the value inside "
                f"{NAMESPACE}:{parameter} (`pulumi config set --path '{key}' <value>` does that)"
            )
        elif namespace == NAMESPACE and field and field != name:
            problems[key] = f"{key}: unknown field: keys are case-sensitive; did you mean {NAMESPACE}:{field}?"
    problems = {key: _pointed_key(key, problem) for key, problem in problems.items()}
    region = all_config.get("aws:region")
    problem = syntax.region_problem(region) if isinstance(region, str) else None
    if problem:
        problems["aws:region"] = f"aws:region: invalid region '{region}' ({problem})"
    return problems


def _spaced(key: str) -> str:
    """A key with spaces in it, quoted so they show: ``'rack :karpenter_node_os'``."""
    return f"'{key}'" if " " in key else key


def _pointed_key(key: str, problem: str) -> str:
    """A key's problem with the key shown (``shown``) and any character a reader cannot see pointed at."""
    return pointed(problem.replace(key, shown(key)), key) if shown(key) != key else problem


def parse_stack_config(all_config: Mapping[str, Any], project: Optional[str] = None, rack: str = "rack") -> RackSpec:
    """The ``RackSpec`` a whole stack config map describes, for a ``Rack`` named ``rack``.

    Every problem is one line of the ``ConfigError``: keys the rack would not read (see
    ``key_problems``) and the ``rack:`` values' own problems.
    """
    problems = key_problems(all_config, project)
    prefix = f"{NAMESPACE}:"
    values = {
        k[len(prefix) :]: decode_config_value(v, k)
        for k, v in all_config.items()
        if k.startswith(prefix) and k not in problems
    }
    region = all_config.get("aws:region")
    try:
        spec = parse_rack_config(
            values, rack, region if isinstance(region, str) and "aws:region" not in problems else None
        )
    except ConfigError as exc:
        raise ConfigError("\n".join([*problems.values(), *str(exc).splitlines()])) from None
    if spec.cluster is not None and isinstance(region, str) and "aws:region" not in problems:
        partition = upstream.partition_of(region)
        for arn in spec.cluster.admin_arns:
            problem = syntax.arn_partition_problem(arn, partition, region)
            if problem:
                problems.setdefault(f"{prefix}cluster_admin_arns", f"{prefix}cluster_admin_arns: {problem}")
    if problems:
        raise ConfigError("\n".join(problems.values()))
    return spec


def load_stack_config(rack: str = "rack") -> RackSpec:
    """The ``RackSpec`` of the current stack, for a ``Rack`` named ``rack``. What only a look-up can
    tell is checked here too, under the key that sets it: the zones of a created cluster's subnets, and
    whether an existing cluster Karpenter is installed into takes access entries, and whether the Karpenter
    release supports its Kubernetes minor."""
    spec = parse_stack_config(pulumi.runtime.get_config_env(), pulumi.get_project(), rack)
    if spec.cluster is None and spec.karpenter is not None:
        from ..cluster import read_cluster  # the look-up (pulumi_aws) only in a program
        from ..spec.rack import access_entries_problem, karpenter_pair_problem

        live = read_cluster(spec.cluster_name)
        problem = live and access_entries_problem(spec.cluster_name, live.authentication_mode)
        if problem:
            raise ConfigError(f"{NAMESPACE}:karpenter_install: {problem}")
        problem = karpenter_pair_problem(live.version, spec.karpenter.version) if live else None
        if live and problem:
            raise ConfigError(
                f"{NAMESPACE}:karpenter_version: cluster '{spec.cluster_name}' runs Kubernetes "
                f"{live.version}: {problem}"
            )
    if spec.cluster is not None:
        from ..subnets import subnets_problems  # the look-up (pulumi_aws) only in a program

        found = subnets_problems(spec.cluster.private_subnet_ids, spec.cluster.public_subnet_ids)
        if found:
            raise ConfigError(
                "\n".join(f"{NAMESPACE}:{keys.CLUSTER.key(field)}: {problem}" for field, problem in found.items())
            )
    return spec
