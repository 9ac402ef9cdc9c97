"""Kubernetes manifests offline: the ``kubernetes:yaml:decode`` invoke, yaml/v2 ``ConfigFile`` and
``ConfigGroup``, and helm.sh/v4 ``Chart`` (local charts, rendered with ``helm template``).

What pulumi-kubernetes does, read from its source (pulumi/pulumi-kubernetes 94977969, just after
4.32.0; ``provider/pkg/provider/yaml/v2/{yaml,configfile,configgroup}.go``,
``provider/pkg/provider/helm/v4/chart.go``, ``provider/pkg/provider/invoke_decode_yaml.go``,
``provider/pkg/gen/kinds/kinds.tmpl``, ``provider/pkg/clients/clients.go``):

- ``kubernetes:yaml:decode`` takes ``text`` (and an optional ``defaultNamespace``), decodes every YAML
  or JSON document, drops those without ``kind`` or ``apiVersion``, and returns ``{"result": [...]}``.
- yaml/v2 reads files (ConfigGroup: glob patterns, sorted), then the ``yaml`` text, then ``objs``; skips
  empty documents; expands ``*List`` kinds into their items; refuses an object without ``kind`` and
  ``apiVersion`` or without ``.metadata.name`` (each read as apimachinery's unstructured accessors read
  it: a value that is not a string is none, a namespace too); gives the default namespace to namespaced kinds that
  have none (built-in kinds from its own table, custom kinds from a CustomResourceDefinition among
  the objects or from the cluster; a kind it cannot place gets no namespace, with a warning). Each
  object becomes a child of the component named ``<prefix>:<namespace>/<name>`` (``<prefix>:<name>``
  when cluster-scoped; the prefix defaults to the component's name, an explicit ``""`` means none),
  of type ``kubernetes:<group or core>/<version>:<Kind>``, with the whole object as its inputs;
  ``skipAwait`` adds the ``pulumi.com/skipAwait: "true"`` annotation; a ``v1/Secret``'s ``data`` and
  ``stringData`` are secret. With an input unknown at preview no child is registered ("Preview is
  incomplete").
- helm.sh/v4 ``Chart`` renders the chart client side, like ``helm template`` (hooks left out unless
  ``includeHooks``, CRDs included unless ``skipCrds``), with the release name the ``name`` input or the
  component's name, and registers the objects as yaml/v2 does, their default namespace the chart's
  ``namespace`` input.

Offline the cluster is the one the rack goes into: Karpenter's and EKS Auto Mode's kinds are known to
be cluster-scoped there. A remote chart (a repository, an ``oci://`` reference) cannot be fetched
offline, and a local chart needs a ``helm`` binary: either way the chart's objects are not judged,
and a warning says so.
"""

from __future__ import annotations

import copy
import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

import yaml

from ..inputs import TAG_MISFIT, YAML_TAG_ERRORS, NotReadable, read_input
from .remote import (
    Child,
    Context,
    ExpansionError,
    Registration,
    child_urn,
    known,
    reveal,
    secret,
)

CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
HELM_CHART = "kubernetes:helm.sh/v4:Chart"
DEFAULT_NAMESPACE = "default"
HELM_TIMEOUT_S = 60

NAMESPACED = frozenset(
    {
        "Binding",
        "ConfigMap",
        "ControllerRevision",
        "CronJob",
        "CSIStorageCapacity",
        "DaemonSet",
        "Deployment",
        "Endpoints",
        "EndpointSlice",
        "Event",
        "HorizontalPodAutoscaler",
        "Ingress",
        "Job",
        "Lease",
        "LimitRange",
        "NetworkPolicy",
        "PersistentVolumeClaim",
        "Pod",
        "PodDisruptionBudget",
        "PodTemplate",
        "ReplicaSet",
        "ReplicationController",
        "ResourceQuota",
        "Role",
        "RoleBinding",
        "Secret",
        "Service",
        "ServiceAccount",
        "StatefulSet",
    }
)
CLUSTER_SCOPED = frozenset(
    {
        "APIService",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "CSIDriver",
        "CSINode",
        "CustomResourceDefinition",
        "FlowSchema",
        "IngressClass",
        "MutatingWebhookConfiguration",
        "Namespace",
        "Node",
        "PersistentVolume",
        "PodSecurityPolicy",
        "PriorityClass",
        "PriorityLevelConfiguration",
        "RuntimeClass",
        "StorageClass",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
    }
)
"""The provider's own table of built-in kinds (``kinds.tmpl`` ``Namespaced``)."""
CLUSTER_CRDS = {
    ("karpenter.sh", "NodePool"): False,
    ("karpenter.sh", "NodeClaim"): False,
    ("karpenter.sh", "NodeOverlay"): False,
    ("karpenter.k8s.aws", "EC2NodeClass"): False,
    ("eks.amazonaws.com", "NodeClass"): False,
}
"""Custom kinds of the rack's cluster (Karpenter v1's CRDs, EKS Auto Mode's NodeClass): (group, kind) -> namespaced."""


# ---- kubernetes:yaml:decode ---------------------------------------------------------------------------------


class _ManifestLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML has no type information here: its loader is Any
    """YAML as the provider reads a manifest (sigs.k8s.io/yaml, on go-yaml v2): a plain scalar that
    looks like a timestamp (``2026-01-01``) or a base-60 number (``1:30``) stays text, as go-yaml
    gives them to a map of interfaces; PyYAML would make a date (which no Struct can hold) or 90."""

    def construct_yaml_timestamp(self, node: yaml.Node) -> Any:
        return self.construct_scalar(node)

    def construct_yaml_int(self, node: yaml.Node) -> Any:
        return self.construct_scalar(node) if ":" in str(node.value) else super().construct_yaml_int(node)

    def construct_yaml_float(self, node: yaml.Node) -> Any:
        return self.construct_scalar(node) if ":" in str(node.value) else super().construct_yaml_float(node)


_ManifestLoader.add_constructor("tag:yaml.org,2002:timestamp", _ManifestLoader.construct_yaml_timestamp)
_ManifestLoader.add_constructor("tag:yaml.org,2002:int", _ManifestLoader.construct_yaml_int)
_ManifestLoader.add_constructor("tag:yaml.org,2002:float", _ManifestLoader.construct_yaml_float)


def documents(text: str, source: str) -> list[Any]:
    try:
        return [doc for doc in yaml.load_all(text, Loader=_ManifestLoader)]
    except yaml.YAMLError as exc:
        raise ExpansionError(f"{source}: not valid YAML: {exc}") from None
    except YAML_TAG_ERRORS:
        raise ExpansionError(f"{source}: not valid YAML: {TAG_MISFIT}") from None


def decode(args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``kubernetes:yaml:decode`` invoke (``ConfigFile``/``ConfigGroup`` v1 call it from the program)."""
    text = args.get("text")
    if not isinstance(text, str):
        raise ExpansionError("kubernetes:yaml:decode: missing required field 'text' of type string")
    objects = [
        doc
        for doc in documents(text, "kubernetes:yaml:decode")
        if isinstance(doc, dict) and _text(doc.get("kind")) and _text(doc.get("apiVersion"))
    ]
    namespace = args.get("defaultNamespace")
    if namespace:
        for obj in objects:
            meta = obj.setdefault("metadata", {})
            if not meta.get("namespace") and str(obj.get("kind")) not in CLUSTER_SCOPED:
                meta["namespace"] = namespace  # a kind it does not know is assumed namespaced here
    return {"result": objects}


# ---- yaml/v2 -------------------------------------------------------------------------------------------------


def _group(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return ("" if group == "core" else group), version


def _kind_scope(obj: Mapping[str, Any], objects: Iterable[Mapping[str, Any]]) -> Optional[bool]:
    """Whether an object's kind is namespaced: True, False, or None when nothing says."""
    kind = str(obj.get("kind", "")).removesuffix("Patch")
    group, _ = _group(str(obj.get("apiVersion", "")))
    if group in (
        "",
        "apps",
        "batch",
        "policy",
        "autoscaling",
        "networking.k8s.io",
        "rbac.authorization.k8s.io",
        "storage.k8s.io",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        "apiregistration.k8s.io",
        "scheduling.k8s.io",
        "node.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "certificates.k8s.io",
        "flowcontrol.apiserver.k8s.io",
    ):
        if kind in NAMESPACED:
            return True
        if kind in CLUSTER_SCOPED:
            return False
    for crd in objects:
        if crd.get("kind") == "CustomResourceDefinition":
            spec = crd.get("spec") or {}
            if spec.get("group") == group and (spec.get("names") or {}).get("kind") == kind:
                return spec.get("scope") == "Namespaced"
    return CLUSTER_CRDS.get((group, kind))


def _text(value: Any) -> str:
    """A field as apimachinery's unstructured accessors read it: a string, else empty."""
    return value if isinstance(value, str) else ""


def _expand_lists(objects: Iterable[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for obj in objects:
        if not obj:
            continue  # an empty document
        if not isinstance(obj, dict):
            raise ExpansionError(f"a Kubernetes object must be a mapping, got {type(obj).__name__}: {obj!r}"[:200])
        if _text(obj.get("kind")).endswith("List") and isinstance(obj.get("items"), list):
            out += _expand_lists(obj["items"])
        else:
            out.append(obj)
    return out


def register(reg: Registration, objects: list[Any], ctx: Context, default_namespace: str) -> list[Child]:
    """The yaml/v2 children of ``reg``: normalized, named, typed and ordered as the provider registers them."""
    args = reg.wire
    prefix = reveal(args["resourcePrefix"]) if "resourcePrefix" in args else reg.name
    objs = [copy.deepcopy(o) for o in _expand_lists(objects)]
    unresolved: list[str] = []
    for obj in objs:
        if not _text(obj.get("kind")) or not _text(obj.get("apiVersion")):  # unstructured's GetKind: a string, or ""
            raise ExpansionError(
                f"{reg.type} '{reg.name}': Kubernetes resources require a kind and apiVersion: {obj!r}"[:300]
            )
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not _text(meta.get("name")):
            raise ExpansionError(
                f"{reg.type} '{reg.name}': Kubernetes resources require a .metadata.name: {obj!r}"[:300]
            )
        if "namespace" in meta and not _text(meta["namespace"]):  # read as none: the default namespace, if any, follows
            del meta["namespace"]
        group, version = _group(str(obj["apiVersion"]))
        obj["apiVersion"] = f"{group}/{version}" if group else version
        if not meta.get("namespace"):
            scope = _kind_scope(obj, objs)
            if scope:
                meta["namespace"] = default_namespace
            elif scope is None:
                unresolved.append(f"{obj['apiVersion']}, Kind={obj['kind']}")
    if unresolved:
        ctx.warn(
            f"{reg.type} '{reg.name}': Unable to determine whether the following kinds are namespaced without a "
            f"reachable cluster or a matching CustomResourceDefinition, so they are rendered without a namespace: "
            f"{', '.join(sorted(set(unresolved)))}."
        )
    skip_await = reveal(args.get("skipAwait")) is True
    order = sorted(
        range(len(objs)), key=lambda n: (objs[n]["kind"] not in ("Namespace", "CustomResourceDefinition"), n)
    )
    children, namespaces, crds = [], {}, {}
    for n in order:
        obj = objs[n]
        meta = obj["metadata"]
        group, version = _group(obj["apiVersion"])
        type_ = f"kubernetes:{group or 'core'}/{version}:{obj['kind']}"
        name = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta["name"])
        name = f"{prefix}:{name}" if prefix else name
        if skip_await:
            meta["annotations"] = {**(meta.get("annotations") or {}), "pulumi.com/skipAwait": "true"}
        props: dict[str, Any] = dict(obj)
        if obj["apiVersion"] == "v1" and obj["kind"] == "Secret":
            props.update({k: secret(v) for k, v in obj.items() if k in ("data", "stringData")})
        urn = child_urn(reg.urn, type_, name)
        if obj["kind"] == "Namespace":
            namespaces[meta["name"]] = urn
        if obj["kind"] == "CustomResourceDefinition":
            spec = obj.get("spec") or {}
            crds[(spec.get("group"), (spec.get("names") or {}).get("kind"))] = urn
        depends = [u for u in (namespaces.get(meta.get("namespace")), crds.get((group, obj["kind"]))) if u]
        children.append(Child(type_, name, props, provider=_kubernetes_provider(reg), dependencies=depends))
    return children


def _kubernetes_provider(reg: Registration) -> str:
    return reg.provider or reg.providers.get("kubernetes", "")


def default_namespace(reg: Registration, ctx: Context) -> str:
    """The provider's default namespace: its ``namespace`` input, else the stack's ``kubernetes:namespace``."""
    provider = ctx.registrations.get(_kubernetes_provider(reg).rsplit("::", 1)[0])
    given = reveal(provider.wire.get("namespace")) if provider is not None else None
    return given if isinstance(given, str) and given else ctx.config.get("kubernetes:namespace") or DEFAULT_NAMESPACE


def _incomplete(reg: Registration, ctx: Context) -> list[Child]:
    ctx.warn(f"{reg.type}:{reg.name} -- Required input properties have unknown values. Preview is incomplete.")
    return []


def _read(path: str, reg: Registration) -> str:
    try:
        return read_input(path).decode("utf-8")
    except (OSError, UnicodeDecodeError, NotReadable) as exc:  # a device, a FIFO no one writes to: never a wait
        raise ExpansionError(f"{reg.type} '{reg.name}': reading YAML file from disk: {path}: {exc}") from None


def _fetchable(path: str) -> bool:
    return "://" in path


def config_file(reg: Registration, ctx: Context) -> list[Child]:
    args = reg.wire
    if not known(args.get("file")) or not known(args.get("resourcePrefix")):
        return _incomplete(reg, ctx)
    path = str(reveal(args.get("file")))
    if _fetchable(path):
        raise ExpansionError(f"{reg.type} '{reg.name}': the offline engine does not fetch {path} (use a local file)")
    return register(reg, documents(_read(path, reg), path), ctx, default_namespace(reg, ctx))


def config_group(reg: Registration, ctx: Context) -> list[Child]:
    args = reg.wire
    if not known({k: args.get(k) for k in ("files", "yaml", "objs", "resourcePrefix")}):
        return _incomplete(reg, ctx)
    objects: list[Any] = []
    for pattern in reveal(args.get("files")) or []:
        if _fetchable(pattern):
            raise ExpansionError(
                f"{reg.type} '{reg.name}': the offline engine does not fetch {pattern} (use a local file)"
            )
        paths = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        for path in paths:
            objects += documents(_read(path, reg), path)
    texts = reveal(args.get("yaml"))
    for text in [texts] if isinstance(texts, str) else texts or []:
        objects += documents(str(text), f"{reg.type} '{reg.name}' yaml")
    objects += reveal(args.get("objs")) or []
    return register(reg, objects, ctx, default_namespace(reg, ctx))


# ---- helm.sh/v4 Chart ---------------------------------------------------------------------------------------


def helm_chart(reg: Registration, ctx: Context) -> list[Child]:
    args = reg.wire
    if not known(args):
        return _incomplete(reg, ctx)
    chart = str(reveal(args.get("chart")) or "")
    repo = (
        reveal((args.get("repositoryOpts") or {}).get("repo")) if isinstance(args.get("repositoryOpts"), dict) else None
    )
    local = not repo and not _fetchable(chart) and Path(chart).exists()
    what = f"{reg.type} '{reg.name}' (chart {chart}{f' from {repo}' if repo else ''})"
    if not local:
        ctx.warn(f"{what}: the offline engine renders only local charts, so its objects were not judged")
        return []
    helm = shutil.which("helm")
    if helm is None:
        ctx.warn(f"{what}: no helm binary on the PATH to render it with, so its objects were not judged")
        return []
    namespace = str(reveal(args.get("namespace")) or default_namespace(reg, ctx))
    release = str(reveal(args.get("name")) or reg.name)
    rendered = _helm_template(helm, release, chart, namespace, reveal(args), what)
    return register(reg, documents(rendered, what), ctx, namespace)


def _helm_template(helm: str, release: str, chart: str, namespace: str, args: Mapping[str, Any], what: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        values = Path(tmp) / "values.yaml"
        values.write_text(yaml.safe_dump(args.get("values") or {}))
        command = [helm, "template", release, chart, "--namespace", namespace, "--values", str(values)]
        if args.get("version"):
            command += ["--version", str(args["version"])]
        if not args.get("skipCrds"):
            command.append("--include-crds")
        if not args.get("includeHooks"):
            command.append("--no-hooks")
        if args.get("devel"):
            command.append("--devel")
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=HELM_TIMEOUT_S, env=dict(os.environ))
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ExpansionError(f"{what}: helm template failed: {exc}") from None
    if done.returncode != 0:
        raise ExpansionError(f"{what}: helm template failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


EXPANDERS = {CONFIG_FILE: config_file, CONFIG_GROUP: config_group, HELM_CHART: helm_chart}

__all__ = ["EXPANDERS", "decode"]
