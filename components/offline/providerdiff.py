"""What the engine and the providers make of a program's inputs before they are compared with the state,
so that the offline plan reads as a change only what the engine would (``plan`` uses it).

The engine never compares the program's inputs with the state as they are: it asks the resource's
provider to ``Check`` them first (with the old inputs), then the provider's ``Diff`` compares the
checked inputs with the old state (pulumi ``pkg/resource/deploy/step_generator.go``,
``continueStepsFromImport`` and ``diff``). Offline there is no provider, so what its ``Check`` adds and
what its ``Diff`` reads as equal is done here, from the providers' sources:

- **Bridged providers** (pulumi-aws, from pulumi-terraform-bridge): ``Check`` fills defaults and lists
  the keys it filled in ``__defaults`` at each object level (the object itself, and objects in lists:
  ``scalingConfig.__defaults``, ``tags[0].__defaults``); with old inputs it keeps the old values of those
  keys (an auto-name stays the name it was). pulumi-aws's ``Check`` also computes ``tagsAll``: the
  provider's default tags under the resource's ``tags``. Its ``Diff`` is terraform's, which reads two
  IAM policy documents as equal when they are equivalent (terraform-provider-aws
  ``verify.SuppressEquivalentPolicyDiffs``, awspolicyequivalence: statements in any order, a single value
  or a list of it, an account id or its root ARN) and a document as equal to the JSON text the state keeps
  of it (a policy sent as an object is stored as text).
- **pulumi-kubernetes** (``provider/pkg/provider/provider.go``, ``Check`` and ``Diff``): with old inputs,
  ``Check`` keeps an auto-name (``metadata.name`` with the ``pulumi.com/autonamed`` annotation) and the
  ``app.kubernetes.io/managed-by: pulumi`` label when the old inputs had them; ``Diff`` reads a missing
  namespace as ``default`` and a Secret's ``stringData`` as its base64 ``data``.
- **Provider resources** (``pulumi:providers:*``): the engine keeps its own ``__internal`` key in their
  inputs and sets ``version`` from the registration's version (``pkg/resource/deploy/providers/registry.go``).
- **Optional+Computed inputs** (bridged providers): the engine sends the provider's ``Diff`` the old
  *outputs* (pulumi ``pkg/resource/plugin/provider_plugin.go``, ``Diff``: ``Olds``), and the bridge builds
  the Terraform state from them and diffs the checked inputs against it (pulumi-terraform-bridge
  ``pkg/tfbridge/provider.go``, ``Diff``: ``makeTerraformStateWithOpts`` from the olds, ``MakeTerraformConfig``
  from the news). For an attribute Terraform declares ``Optional`` and ``Computed``, a value the program
  leaves out keeps the state's, and a value equal to the state's is no diff (``computed_view``). Which
  attributes those are is read from the installed provider SDK, which tfgen generates from the provider's
  schema (``optional_computed``), and, for attributes inside a block, from ``NESTED_OPTIONAL_COMPUTED``.
- **Resource references**: the engine hands a provider a reference as the id of the resource it names
  (``plugin.MarshalOptions`` without ``KeepResources``), and the state keeps that id: a reference equals
  the id (or ARN) the state holds for the resource it names, as long as that resource keeps its id.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import Any, Callable, Optional, cast

from .forcenew import builtin_kind

DEFAULTS_KEY = "__defaults"
INTERNAL_KEY = "__internal"
AUTONAMED = "pulumi.com/autonamed"
MANAGED_BY = "app.kubernetes.io/managed-by"
PROVIDER_PREFIX = "pulumi:providers:"

Unknown = Any
"""The plan's stand-in for a value not known until apply (``plan.UNKNOWN``), passed in by the caller."""


def checked(
    type_: str, old: dict[str, Any], new: dict[str, Any], unknown: Unknown, version: str = ""
) -> dict[str, Any]:
    """The program's inputs ``new`` (plan-normal values) as the provider's ``Check`` would return them
    given the state's inputs ``old``: a copy, ``__defaults`` adopted at every level and gone from both
    sides' view (``without_defaults``), provider-computed keys filled in."""
    if type_.startswith(PROVIDER_PREFIX):
        out = {k: v for k, v in new.items() if k != INTERNAL_KEY}
        if version:
            out["version"] = version
        elif "version" in old and "version" not in out:
            out["version"] = old["version"]
        return out
    out = cast(dict[str, Any], _adopt_defaults(old, new))  # a dict in, a dict out
    if type_.startswith("aws:"):
        _fill_tags_all(old, out, unknown)
    elif type_.startswith("kubernetes:") and isinstance(out.get("metadata", {}), dict):
        _kubernetes_check(type_, old, out, unknown)
    return out


def old_view(type_: str, old: dict[str, Any], unknown: Unknown) -> dict[str, Any]:
    """The state's inputs as the comparison sees them: a provider's engine-kept ``__internal`` left out, a
    Kubernetes object normalized as its provider's ``Diff`` normalizes old inputs."""
    if type_.startswith(PROVIDER_PREFIX):
        return {k: v for k, v in old.items() if k != INTERNAL_KEY}
    if builtin_kind(type_):
        return _kubernetes_normalized(type_, old, unknown)
    return old


def _kubernetes_normalized(type_: str, inputs: dict[str, Any], unknown: Unknown) -> dict[str, Any]:
    """An object of Kubernetes' own API groups as pulumi-kubernetes normalizes one (``normalizeInputs``:
    through its typed form and back, so an empty list or map, which the typed form leaves out, is gone;
    a Secret's ``stringData`` becomes base64 ``data``; a CRD's ``status`` is dropped)."""
    kind = builtin_kind(type_)
    out = {k: _without_empty(v) for k, v in inputs.items() if k in ("metadata", "kind", "apiVersion") or not _empty(v)}
    out = {k: v for k, v in out.items() if not _empty(v) or k in ("metadata",)}
    if kind == "Secret":
        out = _secret_data(out, unknown)
    elif kind == "CustomResourceDefinition":
        out.pop("status", None)
    return out


def _empty(value: Any) -> bool:
    return isinstance(value, (list, dict)) and not value


def _without_empty(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if not _empty(v)}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value


def without_defaults(value: Any) -> Any:
    """``value`` with every level's ``__defaults`` list left out (the provider's note of what it filled)."""
    if isinstance(value, dict):
        return {k: without_defaults(v) for k, v in value.items() if k != DEFAULTS_KEY}
    if isinstance(value, list):
        return [without_defaults(v) for v in value]
    return value


def _adopt_defaults(old: Any, new: Any) -> Any:
    """``new`` with the keys ``old`` lists in its ``__defaults`` (at this level and below) taken from ``old``
    where ``new`` leaves them out: ``Check`` fills the same defaults again, and keeps an old auto-name."""
    if isinstance(old, dict) and isinstance(new, dict):
        filled = old.get(DEFAULTS_KEY)
        out = {k: (_adopt_defaults(old[k], v) if k in old else v) for k, v in new.items()}
        for key in filled if isinstance(filled, list) else ():
            if isinstance(key, str) and key in old and key not in out:
                out[key] = old[key]
        return out
    if isinstance(old, list) and isinstance(new, list):
        return [_adopt_defaults(old[n], v) if n < len(old) else v for n, v in enumerate(new)]
    return new


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one (a secret, or nothing there)."""
    return value if isinstance(value, dict) else {}


def _fill_tags_all(old: dict[str, Any], new: dict[str, Any], unknown: Unknown) -> None:
    """pulumi-aws's ``Check`` sets ``tagsAll``: the provider's default tags, then the resource's ``tags``.
    The default tags are what the old ``tagsAll`` holds beyond the old ``tags``."""
    before = old.get("tagsAll")
    if "tagsAll" in new or "tagsAll" not in old:
        return
    if not isinstance(before, dict):  # a secret the export could not decrypt: not known offline
        new["tagsAll"] = unknown
        return
    tags = new.get("tags", {})
    if tags is unknown:
        new["tagsAll"] = unknown
        return
    old_tags = _mapping(old.get("tags"))
    defaults = {k: v for k, v in before.items() if k not in old_tags}
    new["tagsAll"] = {**defaults, **(tags if isinstance(tags, dict) else {})}


def _kubernetes_check(type_: str, old: dict[str, Any], new: dict[str, Any], unknown: Unknown) -> None:
    meta = dict(new.get("metadata") or {})
    old_meta = _mapping(old.get("metadata"))
    old_annotations = _mapping(old_meta.get("annotations"))
    old_labels = _mapping(old_meta.get("labels"))
    if "name" not in meta and old_annotations.get(AUTONAMED) == "true" and "name" in old_meta:
        meta["name"] = old_meta["name"]
        meta["annotations"] = {**(meta.get("annotations") or {}), AUTONAMED: "true"}
    if old_labels.get(MANAGED_BY) == "pulumi" and isinstance(meta.get("labels", {}), dict):
        meta["labels"] = {**(meta.get("labels") or {}), MANAGED_BY: "pulumi"}
    if "namespace" not in meta and old_meta.get("namespace") == "default":
        meta["namespace"] = "default"  # Diff reads a namespaced object's missing namespace as "default"
    if meta or "metadata" in new:
        new["metadata"] = meta
    if builtin_kind(type_):
        normalized = _kubernetes_normalized(type_, new, unknown)
        new.clear()
        new.update(normalized)


def _secret_data(inputs: dict[str, Any], unknown: Unknown) -> dict[str, Any]:
    """A Secret's ``stringData`` folded into ``data`` as base64, as the API server stores it (unknown when
    either is: a ciphertext the export could not decrypt)."""
    text = inputs.get("stringData")
    if text is unknown or (text and inputs.get("data") is unknown):
        return {**{k: v for k, v in inputs.items() if k != "stringData"}, "data": unknown}
    if not isinstance(text, dict) or not all(isinstance(v, str) for v in text.values()):
        return inputs
    data = dict(inputs.get("data") or {}) if isinstance(inputs.get("data", {}), dict) else {}
    data.update({k: base64.b64encode(v.encode()).decode() for k, v in text.items()})
    return {**{k: v for k, v in inputs.items() if k != "stringData"}, "data": data}


# ---- values the providers' Diff reads as equal ------------------------------------------------------


NOT_JSON = object()


def json_document(text: str) -> Any:
    """The object or list a JSON text encodes, or ``NOT_JSON``."""
    if text.lstrip()[:1] not in ("{", "["):
        return NOT_JSON
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return NOT_JSON


POLICY_SETS = ("Action", "NotAction", "Resource", "NotResource")


def is_policy(doc: Any) -> bool:
    return isinstance(doc, dict) and "Statement" in doc


def policy_form(doc: Any) -> Any:
    """An IAM policy document in one form, for awspolicyequivalence's rules: statements as a set, each
    action, resource, principal and condition value a set (a single value is a set of one), an account id
    as its root ARN."""
    if not isinstance(doc, dict):
        return doc
    statements = doc.get("Statement")
    statements = statements if isinstance(statements, list) else [statements]
    return {
        **{k: v for k, v in doc.items() if k != "Statement"},
        "Statement": sorted((json.dumps(_statement_form(s), sort_keys=True) for s in statements)),
    }


def _as_set(value: Any, item: Callable[[Any], Any] = lambda v: v) -> Any:
    values = value if isinstance(value, list) else [value]
    return sorted({json.dumps(item(v), sort_keys=True) for v in values})


def _principal(value: Any) -> Any:
    if isinstance(value, str) and value.isdigit() and len(value) == 12:
        return f"arn:aws:iam::{value}:root"
    return value


def _statement_form(statement: Any) -> Any:
    if not isinstance(statement, dict):
        return statement
    out: dict[str, Any] = {}
    for key, value in statement.items():
        if key in POLICY_SETS:
            out[key] = _as_set(value)
        elif key in ("Principal", "NotPrincipal") and isinstance(value, dict):
            out[key] = {k: _as_set(v, _principal) for k, v in value.items()}
        elif key == "Condition" and isinstance(value, dict):
            out[key] = {
                op: {k: _as_set(v) for k, v in cond.items()} if isinstance(cond, dict) else cond
                for op, cond in value.items()
            }
        elif key == "Sid" and value == "":
            continue  # an empty Sid is no Sid
        else:
            out[key] = value
    return out


def documents_equal(a: Any, b: Any) -> Optional[bool]:
    """Whether two decoded JSON documents are equal as the provider reads them (IAM policies by
    equivalence), or None when neither is a document (the caller compares them itself)."""
    if is_policy(a) and is_policy(b):
        return bool(policy_form(a) == policy_form(b))
    return None


# ---- Optional+Computed attributes of bridged providers -----------------------------------------------

BRIDGED = ("aws",)
"""Packages bridged from a Terraform provider (pulumi-terraform-bridge): their ``Diff`` is Terraform's."""

AUTO_NAMED = ("name",)
"""Properties the bridge auto-names (pulumi-terraform-bridge ``pkg/tfbridge/info/autonaming.go``,
``SetAutonaming``: every string input literally called ``name``): left out, ``Check`` proposes a new name
rather than keeping the state's, so leaving one out is a change (an auto-name already given is kept through
``__defaults``)."""

NESTED_OPTIONAL_COMPUTED: dict[str, tuple[str, ...]] = {
    "aws:eks/cluster:Cluster": (
        "accessConfig.authenticationMode",
        "kubernetesNetworkConfig.elasticLoadBalancing",
        "kubernetesNetworkConfig.ipFamily",
        "kubernetesNetworkConfig.serviceIpv4Cidr",
        "remoteNetworkConfig.remotePodNetworks",
        "upgradePolicy.supportType",
        "vpcConfig.publicAccessCidrs",
    ),
    "aws:eks/nodeGroup:NodeGroup": ("launchTemplate.id", "launchTemplate.name"),
    "aws:ec2/launchTemplate:LaunchTemplate": tuple(
        f"metadataOptions.{k}"
        for k in ("httpEndpoint", "httpProtocolIpv6", "httpPutResponseHopLimit", "httpTokens", "instanceMetadataTags")
    ),
}
"""Attributes inside a block that Terraform declares ``Optional`` and ``Computed``: the SDK's nested output
types do not say which (tfgen marks only a resource's own outputs). From terraform-provider-aws
``internal/service/eks/cluster.go`` (commit 00555dc5b38f92abbfa230badea0ed0754cea81e: ``access_config``'s
``authentication_mode``, ``kubernetes_network_config``'s ``elastic_load_balancing``, ``ip_family`` and
``service_ipv4_cidr``, ``remote_network_config``'s ``remote_pod_networks``, ``upgrade_policy``'s
``support_type``, ``vpc_config``'s ``public_access_cidrs``) and ``internal/service/eks/node_group.go``
(``launch_template``'s ``id`` and ``name``); ``internal/service/ec2/ec2_launch_template.go`` (``metadata_options``'
``http_endpoint``, ``http_protocol_ipv6``, ``http_put_response_hop_limit``, ``http_tokens``,
``instance_metadata_tags``)."""

_GETTER = re.compile(r'@pulumi\.getter(?:\(name="(\w+)"\))?\n\s+def (\w+)\(self\) -> ([^\n]*):')


def _class_body(text: str, header: str) -> str:
    start = text.find(header)
    if start < 0:
        return ""
    end = text.find("\nclass ", start + len(header))
    return text[start : end if end >= 0 else len(text)]


def _getters(body: str) -> dict[str, str]:
    """A generated class's property getters: wire name -> the getter's annotation."""
    return {name or snake: annotation for name, snake, annotation in _GETTER.findall(body)}


def _optional(annotation: str) -> bool:
    inner = annotation.removeprefix("pulumi.Input[").removeprefix("pulumi.Output[")
    return annotation.startswith("Optional[") or inner.startswith("Optional[")


@functools.lru_cache(maxsize=1)
def _sdk_modules(package: str) -> dict[str, tuple[Path, str]]:
    """Resource token -> (the SDK folder of its module, its class), from the SDK's own registry (the
    ``resource_modules`` its ``__init__`` registers)."""
    spec = importlib.util.find_spec(f"pulumi_{package}")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return {}
    root = Path(next(iter(spec.submodule_search_locations)))
    init = root / "__init__.py"
    text = init.read_text(encoding="utf-8") if init.is_file() else ""
    found = re.search(r'resource_modules="""(.*?)"""', text, re.S)
    out: dict[str, tuple[Path, str]] = {}
    try:
        modules = json.loads(found.group(1)) if found else []
    except ValueError:
        return {}
    for module in modules:
        folder = root.joinpath(*str(module.get("fqn", "")).split(".")[1:])
        for token, cls in (module.get("classes") or {}).items():
            out[token] = (folder, cls)
    return out


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


@functools.lru_cache(maxsize=None)
def optional_computed(type_: str) -> frozenset[str]:
    """The input property paths of ``type_`` that its Terraform schema declares ``Optional`` and ``Computed``.

    A resource's own: read from the installed provider SDK, generated by tfgen from the provider's schema
    (pulumi-terraform-bridge ``pkg/tfgen/generate.go``, ``isOptional``: an input is optional when Terraform's
    attribute is optional or computed, an output only when it is optional and not computed), so an input
    of the ``Args`` class that is optional and an output of the resource class that is not are Optional and
    Computed. Inside blocks: ``NESTED_OPTIONAL_COMPUTED``. None for a type the SDK does not hold."""
    package = type_.split(":", 1)[0]
    if package not in BRIDGED:
        return frozenset()
    nested = frozenset(NESTED_OPTIONAL_COMPUTED.get(type_, ()))
    module = _sdk_modules(package).get(type_)
    if module is None:
        return nested
    folder, cls = module
    member = type_.split(":")[1].partition("/")[2]
    candidates = [folder / f"{_snake(member)}.py"] + (sorted(folder.glob("*.py")) if folder.is_dir() else [])
    header = f"class {cls}(pulumi.CustomResource):"
    for path in candidates:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        if header in text:
            inputs = _getters(_class_body(text, f"class {cls}Args:"))
            outputs = _getters(_class_body(text, header))
            own = {k for k, a in inputs.items() if _optional(a) and k in outputs and not _optional(outputs[k])}
            return frozenset(own) | nested
    return nested


def _tree(paths: frozenset[str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for part in path.split("."):
            node = node.setdefault(part, {})
    return tree


def computed_view(
    type_: str,
    old: dict[str, Any],
    outputs: Any,
    new: dict[str, Any],
    unknown: Unknown,
    equal: Callable[[Any, Any], bool],
) -> dict[str, Any]:
    """The state's inputs ``old`` as a bridged provider's ``Diff`` compares them with the checked inputs
    ``new``, for the Optional+Computed attributes of ``type_``: one the program leaves out is no change (the
    provider keeps the state's value), and one equal to the state's output (``outputs``) is none either."""
    paths = optional_computed(type_)
    if not paths or not isinstance(outputs, dict):
        return old
    return _computed(old, outputs, new, _tree(paths), unknown, equal)


def _known(value: Any, unknown: Unknown) -> bool:
    if value is unknown:
        return False
    if isinstance(value, dict):
        return all(_known(v, unknown) for v in value.values())
    if isinstance(value, list):
        return all(_known(v, unknown) for v in value)
    return True


def _computed(
    old: dict[str, Any],
    outputs: dict[str, Any],
    new: dict[str, Any],
    tree: dict[str, Any],
    unknown: Unknown,
    equal: Callable[[Any, Any], bool],
) -> dict[str, Any]:
    out = dict(old)
    for key, below in tree.items():
        value = new.get(key)
        if value is None and key in AUTO_NAMED and key not in new:
            continue  # Check names it anew
        if value is None:
            if key in new:
                out[key] = None
            else:
                out.pop(key, None)  # left out: the provider keeps the state's value
            continue
        state = outputs.get(key)
        if value is unknown or state is None or not _known(state, unknown):
            continue
        if equal(state, value):
            out[key] = value
        elif below and isinstance(value, dict) and isinstance(state, dict):
            out[key] = _computed(_mapping(old.get(key)), state, value, below, unknown, equal)
    return out
