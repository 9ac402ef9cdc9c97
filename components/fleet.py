"""The fleet's matrix (``mixed-os-racks fleet``, ``cli/fleet.py``): a column per stack and a row per lane (its OS,
AMI and the AMI's NVIDIA driver branch, sizes, worst case per hour), and per stack its Kubernetes minor, Karpenter
release, the packs' verdict and the plan's counts; with the order promotion needs and the upgrade gate.

The order: environments promote one way (dev, then staging, then prod; ``--order`` to say otherwise). A
later environment ahead of an earlier one is refused: a newer Kubernetes minor, a newer Karpenter release,
or a newer AMI on a lane of the same name (newer by the catalog's creation dates). The upgrade gate refuses a
Kubernetes minor more than one above the one the state's cluster runs (EKS upgrades a control plane one minor
at a time), a Karpenter release the compatibility matrix rules out for the minor, and a lane pinned to an AMI
built for another minor than its control plane.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .config.params import RackParams
from .offline.catalog import Catalog
from .offline.stackexport import StackState
from .pack import rules
from .facts import osfamily
from .facts.instances import ami_driver
from .facts.prices import usd
from .facts.upstream import karpenter_compatibility
from .spec.base import shown


ENVIRONMENT_WORDS = (
    ("dev", "development", "sandbox"),
    ("test", "testing", "qa", "int", "integration"),
    ("stage", "staging", "uat", "preprod", "pre-prod"),
    ("prod", "production", "live"),
)
"""The usual names of environments, in the order changes move through them: the default order."""


KARPENTER_CHART_RE = re.compile(r"(?:^|/)karpenter$")


# ---- what the matrix shows -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaneCell:
    """One lane of one stack."""

    key: str
    """The row: ``pool gpu``, ``node group rack-ng-1``."""
    os: str
    ami: str
    """The pinned AMI id, else what the lane boots by default (an alias, or the EKS-optimized AMI)."""
    pinned: bool
    driver: Optional[int]
    sizes: str
    worst: Optional[float]
    worst_text: str
    ami_minor: Optional[str] = None
    ami_created: str = ""


@dataclass
class StackColumn:
    """One stack: its lanes and what is said of it."""

    stack: str
    k8s: Optional[str] = None
    karpenter: Optional[str] = None
    verdict: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    lanes: dict[str, LaneCell] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """Why the stack fails (mandatory violations are counted in ``verdict``; these are the fleet's own)."""
    errors: list[str] = field(default_factory=list)
    mandatory: int = 0


def _sizes_of_pool(families: Sequence[str], sizes: Sequence[str], types: Sequence[str]) -> str:
    if types:
        return ",".join(types)
    return f"{','.join(families) or 'any family'} {','.join(sizes) or 'any size'}"


def lane_cells(params: RackParams, catalog: Catalog, worst: dict[str, tuple[Optional[float], str]]) -> list[LaneCell]:
    """The stack's lanes, from its validated config, with the worst case the preview printed for each."""
    pools = [params.workload_pool()] + ([params.build_pool()] if params.build_node_enabled else [])
    pools += list(params.additional_karpenter_nodepools_config)
    cells = []
    for pool in pools:
        ami = pool.ami_id or pool.alias or ""
        cells.append(
            _cell(
                f"pool {pool.name}",
                str(pool.os),
                ami,
                bool(pool.ami_id),
                catalog,
                _sizes_of_pool(pool.instance_families, pool.instance_sizes, pool.instance_types),
                worst.get(pool.name),
            )
        )
    for group in [*params.additional_node_groups_config, *params.additional_build_groups_config]:
        name = group.name or ""
        family = osfamily.AL2023  # node groups always run it
        ami = group.ami_id or f"EKS-optimized {family.family}"
        cells.append(
            _cell(
                f"node group {name}",
                family.name,
                ami,
                bool(group.ami_id),
                catalog,
                f"{group.instance_type} x{group.min_size}-{group.max_size}",
                worst.get(name),
            )
        )
    return cells


def _cell(
    key: str,
    os_name: str,
    ami: str,
    pinned: bool,
    catalog: Catalog,
    sizes: str,
    worst: Optional[tuple[Optional[float], str]],
) -> LaneCell:
    facts = catalog.get(ami) if pinned else None
    driver = ami_driver(facts.name, facts.description) if facts else None
    usd_an_hour, text = worst if worst is not None else (None, "not known")
    return LaneCell(
        key,
        os_name,
        ami,
        pinned,
        driver.branch if driver else None,
        sizes,
        usd_an_hour,
        text,
        rules.k8s_minor_of_ami(facts.name) if facts else None,
        facts.creation_date if facts else "",
    )


def karpenter_release(resources: Sequence[Any]) -> Optional[str]:
    """The Karpenter chart's version the run installs (its Helm ``Chart``), None when it installs none."""
    for res in resources:
        if res.type.startswith("kubernetes:helm.sh/") and KARPENTER_CHART_RE.search(str(res.inputs.get("chart", ""))):
            version = res.inputs.get("version")
            return version if isinstance(version, str) else None
    return None


def state_minor(state: StackState) -> Optional[str]:
    """The Kubernetes minor the state's EKS cluster runs (None: the state has no cluster the rack created): what
    EKS reported of the ``aws:eks/cluster:Cluster`` (pulumi-eks creates one under its ``eks:index:Cluster``
    component), else the version the component was given."""
    for kind in ("aws:eks/cluster:Cluster", "eks:index:Cluster"):
        for res in state.resources:
            if res.type == kind:
                minor = rules.k8s_minor(res.outputs.get("version") or res.inputs.get("version"))
                if minor:
                    return minor
    return None


# ---- order ---------------------------------------------------------------------------------------------------


def default_order(stacks: Sequence[str]) -> list[str]:
    """The stacks whose names say which environment they are, earliest first (others are in no order)."""

    def rank(name: str) -> Optional[int]:
        words = set(re.split(r"[-_.]", name.lower()))
        return next((n for n, names in enumerate(ENVIRONMENT_WORDS) if words & set(names)), None)

    ranked = [(rank(s), s) for s in stacks]
    return [s for r, s in sorted((r, s) for r, s in ranked if r is not None)]


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(n) if n.isdigit() else 0 for n in re.split(r"[.+-]", version.lstrip("v"))[:3])


def order_problems(order: Sequence[str], columns: dict[str, StackColumn]) -> list[str]:
    """A later environment ahead of an earlier one: on the Kubernetes minor, the Karpenter release, or a lane's
    pinned AMI (newer by its creation date) where both pin one on a lane of the same name."""
    problems = []
    for n, later_name in enumerate(order):
        later = columns.get(later_name)
        for earlier in (columns.get(name) for name in order[:n]):
            if later is None or earlier is None or later.errors or earlier.errors:
                continue
            ahead = f"stack {later.stack} is ahead of {earlier.stack}, which comes before it"
            if later.k8s and earlier.k8s and _version_key(later.k8s) > _version_key(earlier.k8s):
                problems.append(
                    f"{ahead}: Kubernetes {later.k8s} against {earlier.k8s} (upgrade {earlier.stack} first)"
                )
            if (
                later.karpenter
                and earlier.karpenter
                and _version_key(later.karpenter) > _version_key(earlier.karpenter)
            ):
                problems.append(
                    f"{ahead}: Karpenter {later.karpenter} against {earlier.karpenter} (upgrade {earlier.stack} first)"
                )
            for key, lane in later.lanes.items():
                before = earlier.lanes.get(key)
                if (
                    before is None
                    or not (lane.pinned and before.pinned)
                    or lane.ami == before.ami
                    or not (lane.ami_created and before.ami_created)
                    or lane.ami_created <= before.ami_created
                ):
                    continue
                problems.append(
                    f"{ahead}: {key} runs {lane.ami} (created {lane.ami_created}), newer than {earlier.stack}'s "
                    f"{before.ami} (created {before.ami_created}) (promote it through {earlier.stack} first)"
                )
    return problems


def new_amis(order: Sequence[str], columns: dict[str, StackColumn]) -> set[tuple[str, str]]:
    """(stack, lane) where a lane pins an AMI that no earlier environment pins on a lane of that name: the soak
    gate's to judge, shown in the matrix."""
    marked = set()
    for n, name in enumerate(order):
        column = columns.get(name)
        if column is None or n == 0:
            continue
        for key, lane in column.lanes.items():
            earlier = [columns[e].lanes.get(key) for e in order[:n] if e in columns]
            if lane.pinned and not any(cell is not None and cell.ami == lane.ami for cell in earlier):
                marked.add((name, key))
    return marked


# ---- the upgrade gate ------------------------------------------------------------------------------------------


def upgrade_problems(column: StackColumn, state: Optional[StackState]) -> list[str]:
    """What EKS or Karpenter cannot take: a minor more than one above the state's, a (Kubernetes, Karpenter) pair the
    compatibility matrix rules out, a lane's AMI built for another minor than the control plane it joins."""
    problems = []
    running = state_minor(state) if state is not None else None
    if state is not None and running and column.k8s and _version_key(column.k8s)[:2] > _version_key(running)[:2]:
        (major, minor), (old_major, old_minor) = _version_key(column.k8s)[:2], _version_key(running)[:2]
        if major != old_major or minor - old_minor > 1:
            problems.append(
                f"stack {column.stack}: Kubernetes {running} -> {column.k8s} skips a minor: EKS upgrades a "
                f"control plane one minor at a time (go to {old_major}.{old_minor + 1} first)"
            )
        # the Karpenter chart depends on the cluster, so one update moves the control plane first: the Karpenter
        # the state runs meets the new minor before its own chart is updated
        installed = karpenter_release(state.resources)
        if installed and column.karpenter and installed != column.karpenter:
            verdict = karpenter_compatibility(column.k8s, installed)
            if not verdict.supported:
                problems.append(
                    f"stack {column.stack}: Kubernetes {running} -> {column.k8s} with Karpenter {installed} -> "
                    f"{column.karpenter} in one update: the control plane moves first, and {verdict.reason} "
                    f"(update Karpenter to {column.karpenter} on Kubernetes {running} first, then the "
                    f"Kubernetes version)"
                )
    if column.k8s and column.karpenter:  # the pair the stack ends on (the rack's config refuses most of these itself)
        verdict = karpenter_compatibility(column.k8s, column.karpenter)
        if not verdict.supported:
            problems.append(
                f"stack {column.stack}: Karpenter {column.karpenter} with Kubernetes {column.k8s}: {verdict.reason}"
            )
    if column.k8s:
        for lane in column.lanes.values():
            if lane.ami_minor and lane.ami_minor != column.k8s:
                problems.append(
                    f"stack {column.stack}: {lane.key} runs {lane.ami}, an AMI for Kubernetes {lane.ami_minor}, "
                    f"and its control plane runs {column.k8s}"
                )
    return problems


# ---- rendering -------------------------------------------------------------------------------------------------


def as_json(
    stacks: Sequence[str],
    order: Sequence[str],
    columns: dict[str, StackColumn],
    order_failures: list[str],
    marked: set[tuple[str, str]],
) -> dict[str, Any]:
    rows = sorted({key for c in columns.values() for key in c.lanes}, key=lambda k: (not k.startswith("pool"), k))
    return {
        "stacks": [
            {
                "stack": c.stack,
                "kubernetes": c.k8s,
                "karpenter": c.karpenter,
                "policy": c.verdict,
                "plan": c.counts,
                "problems": c.problems,
                "errors": c.errors,
                "passed": not (c.problems or c.mandatory or c.errors),
                "lanes": {
                    key: {
                        "os": cell.os,
                        "ami": cell.ami,
                        "pinned": cell.pinned,
                        "driverBranch": cell.driver,
                        "amiKubernetes": cell.ami_minor,
                        "sizes": cell.sizes,
                        "worstCaseHourlyUsd": cell.worst,
                        "worstCase": cell.worst_text,
                        "newInOrder": (c.stack, key) in marked,
                    }
                    for key, cell in c.lanes.items()
                },
            }
            for c in (columns[s] for s in stacks)
        ],
        "lanes": rows,
        "order": list(order),
        "orderProblems": order_failures,
        "passed": not order_failures and all(not (c.problems or c.mandatory or c.errors) for c in columns.values()),
    }


def _cell_parts(lane: Optional[dict[str, Any]]) -> list[str]:
    """A lane's cell, a part a line: OS, AMI (its driver branch), sizes, worst case per hour."""
    if lane is None:
        return ["-"]
    ami = lane["ami"] + (f" (driver {lane['driverBranch']})" if lane["driverBranch"] else "")
    ami += " [new: not in an earlier stack]" if lane["newInOrder"] else ""
    worst = usd(lane["worstCaseHourlyUsd"]) if lane["worstCaseHourlyUsd"] is not None else lane["worstCase"]
    return [lane["os"], ami, lane["sizes"], f"{worst}/h"]


def _table(doc: dict[str, Any]) -> tuple[list[str], list[list[list[str]]]]:
    """The header (the stacks) and the rows, each cell a list of parts (one line each in the text matrix)."""
    stacks = doc["stacks"]
    head = ["", *(s["stack"] for s in stacks)]
    rows = [
        [["Kubernetes"], *([s["kubernetes"] or "-"] for s in stacks)],
        [["Karpenter"], *([s["karpenter"] or "-"] for s in stacks)],
        [["policy"], *([s["policy"] or "-"] for s in stacks)],
        [["plan"], *([", ".join(f"{n} to {op}" for op, n in sorted(s["plan"].items())) or "-"] for s in stacks)],
    ]
    rows += [[[key], *(_cell_parts(s["lanes"].get(key)) for s in stacks)] for key in doc["lanes"]]
    return head, rows


def _findings(doc: dict[str, Any]) -> list[str]:
    lines = [
        *doc["orderProblems"],
        *(p for s in doc["stacks"] for p in s["problems"]),
        *(f"stack {s['stack']}: {e}" for s in doc["stacks"] for e in s["errors"]),
    ]
    return lines


def render_text(doc: dict[str, Any]) -> str:
    """The matrix: a column per stack, a row per lane (a line per part of a cell), then what is refused."""
    head, rows = _table(doc)
    grid = [[[shown(part) for part in cell] for cell in row] for row in [[[h] for h in head], *rows]]
    widths = [max(len(part) for row in grid for part in row[n]) for n in range(len(head))]
    out = [f"Fleet of {len(doc['stacks'])} stacks, offline; order: {' -> '.join(doc['order']) or '(none)'}"]
    for row in grid:
        out.append("")
        for line in range(max(len(cell) for cell in row)):
            parts = [cell[line] if line < len(cell) else "" for cell in row]
            out.append("  ".join(f"{part:<{width}}" for part, width in zip(parts, widths)).rstrip())
    findings = _findings(doc)
    out += ["", "Refused:" if findings else "Every stack passes, in order."]
    out += [f"    {shown(line)}" for line in findings]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return shown(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def render_markdown(doc: dict[str, Any]) -> str:
    head, rows = _table(doc)
    out = ["| " + " | ".join(_md(c) for c in head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join("<br>".join(_md(part) for part in cell) for cell in row) + " |" for row in rows]
    findings = _findings(doc)
    out += ["", f"Order: {_md(' -> '.join(doc['order']) or '(none)')}", ""]
    out += (
        ["**Refused:**", ""] + [f"- {_md(line)}" for line in findings]
        if findings
        else ["Every stack passes, in order."]
    )
    return "\n".join(out) + "\n"
