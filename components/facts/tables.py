"""Every upstream data table the rack copies, in one place: its source, the commit it was read at, and the date
its data is current to, with how to refresh it, and which tables are older than ``MAX_AGE_DAYS``.

The tables themselves stay where they are read (``pricelist``, ``instances``, ``upstream``); this module only
says where each came from and how old it is, so a preview can say when one is due for a refresh (``stale``).
``make tables`` regenerates those that are generated from upstream files (the price list, the instance sizes and
Karpenter's compatibility matrices, by ``pricegen``, ``sizegen`` and ``matrixgen``). No pulumi imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Optional

from . import instances, pricelist

MAX_AGE_DAYS = 120
"""A table whose data is older than this many days is reported by the preview, so a team knows to refresh it."""
REGENERATE = "make tables KARPENTER=<a clone of aws/karpenter-provider-aws> COMMIT=<a tag>"


@dataclass(frozen=True)
class Table:
    name: str
    where: str
    """The module and name that hold it."""
    source: str
    """The upstream repository (and path) it was read from."""
    commit: str
    """The upstream commit (or tag) it was read at; '' where the source is no repository."""
    as_of: str
    """The date (ISO, UTC) its data is current to: the upstream commit's date, or the day the sources were read."""
    refresh: str
    """How to bring it up to date: ``REGENERATE`` for a table generated from upstream files, else what to read."""

    def age_days(self, today: str) -> int:
        return (date.fromisoformat(today) - date.fromisoformat(self.as_of)).days


TABLES: tuple[Table, ...] = (
    Table(
        "EC2 on-demand price list",
        "facts/pricelist.py PRICES",
        f"{pricelist.SOURCE} pkg/providers/pricing",
        pricelist.COMMIT[:8],
        pricelist.COMMIT_DATE,
        REGENERATE,
    ),
    Table(
        "instance family facts",
        "facts/instances.py FAMILIES",
        instances.SOURCE,
        "",
        instances.AS_OF,
        "by hand, from botocore's EC2 model and Karpenter's instance-type reference",
    ),
    Table(
        "instance sizes",
        "facts/instances.py _SIZES",
        "aws/karpenter-provider-aws website/content/en/preview/reference/instance-types.md",
        instances.SIZES_COMMIT[:8],
        instances.SIZES_DATE,
        REGENERATE,
    ),
    Table(
        "NVIDIA driver table",
        "facts/instances.py DRIVER_BRANCHES, EKS_NVIDIA_DRIVERS",
        "awslabs/amazon-eks-ami templates/al2023 (variables-default.pkrvars.hcl, runtime/gpu)",
        "be7adc2e",
        "2026-09-21",
        "by hand, from awslabs/amazon-eks-ami's release tags and templates/al2023",
    ),
    Table(
        "Cluster Autoscaler image tags",
        "facts/upstream.py CLUSTER_AUTOSCALER_RELEASES",
        "kubernetes/autoscaler git tags cluster-autoscaler-X.Y.Z",
        "55c37cd5",
        "2026-08-22",
        "by hand, from kubernetes/autoscaler's cluster-autoscaler-1.<minor>.<patch> tags",
    ),
    Table(
        "EKS Kubernetes release calendar",
        "facts/upstream.py EKS_VERSION_SUPPORT, EKS_UNDATED",
        "awsdocs/amazon-eks-user-guide latest/ug/versioning/kubernetes-versions.adoc",
        "0138560",
        "2026-12-07",
        "by hand, from the EKS user guide's release calendar (dates of 1.36 and 1.37 not yet published there)",
    ),
    Table(
        "Karpenter releases and compatibility matrix",
        "facts/upstream.py KARPENTER_RELEASES, KARPENTER_MATRICES",
        "aws/karpenter-provider-aws website/content/en/v1.15/upgrading/compatibility.md, charts/karpenter",
        "d77d1a3a",
        "2026-12-07",
        f"{REGENERATE} for the matrices; the releases by hand, from a release's chart, "
        "values and reference CloudFormation",
    ),
    Table(
        "OS family records",
        "facts/osfamily.py FAMILIES",
        "aws/karpenter-provider-aws pkg/providers/amifamily (pulumi/pulumi-eks nodejs/eks/nodes/ami.ts at 7bf0c1b1)",
        "1d927085",
        "2026-12-07",
        "by hand, from Karpenter's AMIFamily implementations, pulumi-eks's amiTypeMetadata and the EKS API's AMITypes",
    ),
)
"""The rack's upstream data tables. The EKS calendar, the Karpenter tables and the OS families were checked on
2026-12-07, against the newest sources that could be read then."""


def stale(today: str, max_age_days: Optional[float] = None) -> list[str]:
    """One line for each table whose data is older than ``max_age_days`` (default ``MAX_AGE_DAYS``) on ``today``
    (ISO date): its name, age, source and commit, and how to refresh it."""
    limit = MAX_AGE_DAYS if max_age_days is None else max_age_days
    return [
        f"the {t.name} table is {t.age_days(today)} days old (as of {t.as_of}: {t.source}"
        f"{f' at {t.commit}' if t.commit else ''}), older than {limit:g} days: refresh it ({t.refresh})"
        for t in TABLES
        if t.age_days(today) > limit
    ]
