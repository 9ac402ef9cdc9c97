"""Karpenter's NodeOverlays (``karpenter.sh/v1alpha1``, behind the ``NodeOverlay`` feature gate): what they change in
the instance types a NodePool can launch, for the fit and the worst case.

An overlay (kubernetes-sigs/karpenter ``pkg/apis/v1alpha1/nodeoverlay.go``) applies to an instance type of a pool
when its ``requirements`` are compatible with the type's labels and the pool's template labels (with
``karpenter.sh/nodepool``) (``pkg/controllers/nodeoverlay/controller.go``, ``getOverlaidOfferings``). It sets the
type's ``price``, or adjusts it (``priceAdjustment``: ``+0.5``, ``-0.5``, ``+10%``, ``-15%``), and adds extended
resources to its ``capacity`` (``nvidia.com/gpu: 1`` on a g6f type with a fraction of a GPU). Overlays are taken
highest ``weight`` first, and the first one to set a field (a price, or one resource) wins (``store.go``); at
equal weight, in name order. The controller reads them only when its ``FEATURE_GATES`` say ``NodeOverlay=true``
(``pkg/operator/options/options.go``: off by default; the chart's ``settings.featureGates.nodeOverlay``).

Pure: the standard library and the pack's modules."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Optional, Sequence

from .. import contract
from ..facts import instances, wellknown
from . import bootfacts, checks, fit

OVERLAY_TYPE = re.compile(r"kubernetes:karpenter\.sh/v1alpha1:NodeOverlay")
GATE = "NodeOverlay"
GATE_SETTING = "settings.featureGates.nodeOverlay"
_ADJUSTMENT_RE = re.compile(r"([+-])(\d*\.?\d+)(%?)")


@dataclass(frozen=True)
class Overlay:
    name: str
    requirements: tuple[wellknown.Requirement, ...]
    weight: int = 0
    price: Optional[float] = None
    adjustment: str = ""
    capacity: tuple[tuple[str, float], ...] = ()
    """The GPUs it gives each node (``nvidia.com/gpu``, ``amd.com/gpu``): the only extended resources the pack sizes."""

    def matches(self, itype: instances.InstanceType, pool: str, labels: tuple[tuple[str, str], ...]) -> bool:
        """Whether it applies to ``itype`` launched by pool ``pool`` whose nodes carry ``labels``."""
        carried = {**dict(labels), contract.KARPENTER_POOL_LABEL: pool}
        for req in self.requirements:
            if req.key in carried or not _instance_label(req.key):
                if req.key == wellknown.CAPACITY_TYPE_KEY:  # offerings: the worst case is at on-demand prices
                    if not wellknown.holds(req.operator, req.values, "on-demand"):
                        return False
                    continue
                if not _zone(req.key) and not wellknown.holds(req.operator, req.values, carried.get(req.key)):
                    return False
            elif not (
                wellknown.satisfies(req, itype.family, wellknown.family_labels(itype.family))
                and wellknown.type_satisfies(req, itype)
            ):
                return False
        return True


def _instance_label(key: str) -> bool:
    return key == wellknown.TYPE_KEY or key.startswith(wellknown.KARPENTER_PREFIX) or key == wellknown.ARCH_KEY


def _zone(key: str) -> bool:
    return key in ("topology.kubernetes.io/zone", "topology.k8s.aws/zone-id")


def read(resources: Sequence[checks.StackResource]) -> tuple[Overlay, ...]:
    """The stack's NodeOverlays, highest weight first, then by name (the order Karpenter applies them in)."""
    found = []
    for res in resources:
        if not OVERLAY_TYPE.fullmatch(res.type):
            continue
        spec = bootfacts.as_map(bootfacts.dig(res.props, "spec"))
        name = bootfacts.text(bootfacts.dig(res.props, "metadata", "name")) or res.name
        requirements = tuple(
            wellknown.Requirement(
                bootfacts.text(bootfacts.as_map(r).get("key")),
                bootfacts.text(bootfacts.as_map(r).get("operator")),
                tuple(str(v) for v in bootfacts.as_list(bootfacts.as_map(r).get("values"))),
            )
            for r in bootfacts.as_list(spec.get("requirements"))
        )
        weight = bootfacts.number(spec.get("weight"))
        price = bootfacts.number(spec.get("price")) if isinstance(spec.get("price"), str) else None
        capacity = tuple(
            (str(k), q)
            for k, v in bootfacts.as_map(spec.get("capacity")).items()
            if str(k) in (contract.NVIDIA_GPU, contract.AMD_GPU)
            and (q := fit.quantity(v)) is not None
            and math.isfinite(q)
        )
        found.append(
            Overlay(
                name,
                requirements,
                int(weight) if weight is not None and math.isfinite(weight) else 0,
                price if price is not None and 0 <= price < math.inf else None,
                bootfacts.text(spec.get("priceAdjustment")),
                capacity,
            )
        )
    return tuple(sorted(found, key=lambda o: (-o.weight, o.name)))


def gate(resources: Sequence[checks.StackResource]) -> Optional[bool]:
    """Whether the stack's Karpenter controller has the NodeOverlay gate on: its container's ``FEATURE_GATES``
    (or ``--feature-gates``) says ``NodeOverlay=true``; a controller that names no such gate has it off (the
    default); None: the stack holds no Karpenter controller (one that sets ``FEATURE_GATES``)."""
    said: Optional[bool] = None
    for res in resources:
        if not res.type.startswith("kubernetes:apps/") or not res.type.endswith(":Deployment"):
            continue
        for container in bootfacts.as_list(bootfacts.dig(res.props, "spec", "template", "spec", "containers")):
            container = bootfacts.as_map(container)
            gates = [
                bootfacts.text(bootfacts.as_map(e).get("value"))
                for e in bootfacts.as_list(container.get("env"))
                if bootfacts.as_map(e).get("name") == "FEATURE_GATES"
            ]
            gates += [
                bootfacts.text(a).split("=", 1)[1]
                for a in bootfacts.as_list(container.get("args"))
                if bootfacts.text(a).startswith("--feature-gates=")
            ]
            for text in gates:
                named = dict(part.strip().split("=", 1) for part in text.split(",") if "=" in part)
                on = named.get(GATE, "false").strip().lower() == "true"
                said = on or bool(said)
    return said


def overlaid(
    itype: instances.InstanceType, overlays: Sequence[Overlay], pool: str, labels: tuple[tuple[str, str], ...]
) -> instances.InstanceType:
    """``itype`` as the pool's overlays leave its GPUs: the first overlay (by weight) that gives the type's vendor
    resource sets it (a type without GPUs takes NVIDIA's)."""
    vendor = instances.facts(itype.name).gpu
    own = contract.gpu_resource(vendor) if vendor else contract.NVIDIA_GPU
    for overlay in overlays:
        given = dict(overlay.capacity).get(own)
        if given is not None and overlay.matches(itype, pool, labels):
            return dataclasses.replace(itype, gpus=int(given)) if int(given) != itype.gpus else itype
    return itype


def price(
    name: str, base: Optional[float], overlays: Sequence[Overlay], pool: str, labels: tuple[tuple[str, str], ...]
) -> Optional[float]:
    """What the pool's overlays make a type's on-demand price: the first overlay (by weight) that sets a price or
    an adjustment decides; a price adjusted below zero is zero."""
    itype = next((t for t in instances.sizes(instances.family_of(name)) if t.name == name), None)
    if itype is None:
        return base
    for overlay in overlays:
        if (overlay.price is None and not overlay.adjustment) or not overlay.matches(itype, pool, labels):
            continue
        if overlay.price is not None:
            return overlay.price
        match = _ADJUSTMENT_RE.fullmatch(overlay.adjustment)
        if base is None or match is None:
            return base
        amount = float(match.group(2)) * (1 if match.group(1) == "+" else -1)
        return max(0.0, base * (1 + amount / 100) if match.group(3) else base + amount)
    return base


def applied(resources: Sequence[checks.StackResource], unknown: checks.Unknown = ()) -> tuple[Overlay, ...]:
    """The overlays Karpenter applies: the stack's, when its controller has the gate on (none while a value they
    hang on is not known)."""
    try:
        found = read(resources)
        return found if found and gate(resources) else ()
    except unknown:
        return ()


def words(overlays: Sequence[Overlay]) -> str:
    return ", ".join(f"'{o.name}'" for o in overlays[:5]) + (
        f" and {len(overlays) - 5} more" if len(overlays) > 5 else ""
    )


def unapplied(resources: Sequence[checks.StackResource], unknown: checks.Unknown = ()) -> str:
    """Why the stack's NodeOverlays are not applied ('' when there are none, or the gate is on)."""
    try:
        overlays, on = read(resources), gate(resources)
    except unknown:
        return ""
    if not overlays:
        return ""
    if on:
        return ""
    which = f"karpenter nodeoverlay{'s' if len(overlays) > 1 else ''} {words(overlays)}"
    if on is None:
        return (
            f"{which}: not applied to the fit or the worst case: whether Karpenter's {GATE} feature gate is on is not "
            f"known (this stack holds no Karpenter controller that sets FEATURE_GATES); with it off Karpenter ignores "
            f"them (set {GATE_SETTING}: true where Karpenter is installed)"
        )
    return (
        f"{which}: Karpenter's {GATE} feature gate is off, so Karpenter ignores "
        f"{'them' if len(overlays) > 1 else 'it'}, "
        f"and so do the fit and the worst case (set {GATE_SETTING}: true in Karpenter's chart values, or drop "
        f"{'them' if len(overlays) > 1 else 'it'})"
    )
