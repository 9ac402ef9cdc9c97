"""Upstream data files, read as upstream wrote them, for the tests that check the rack's tables against them.

Each file is a trimmed copy under ``tests/fixtures`` whose README names its repository, path and commit. A test
that takes its expectation from here fails when a table of ``mixed_os_racks.facts`` says something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
INSTANCE_TYPE_LABELS = FIXTURES / "instance-types" / "instance-type-labels.md"

_FAMILY = re.compile(r"## (\S+) Family")
_TYPE = re.compile(r"### `(\S+)`")
_LABEL = re.compile(r" \|([^|]+)\|([^|]*)\|")


@dataclass
class KarpenterFamily:
    """One family of Karpenter's generated instance-type reference: every type it lists, and the labels
    Karpenter gives the first of them."""

    name: str
    types: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def arch(self) -> str:
        """``kubernetes.io/arch`` in EC2's spelling (``x86_64``, ``arm64``), as the rack's tables write it."""
        return {"amd64": "x86_64"}.get(self.labels["kubernetes.io/arch"], self.labels["kubernetes.io/arch"])

    @property
    def gpu_manufacturer(self) -> str:
        return self.labels.get("karpenter.k8s.aws/instance-gpu-manufacturer", "")

    @property
    def accelerator_manufacturer(self) -> str:
        return self.labels.get("karpenter.k8s.aws/instance-accelerator-manufacturer", "")


def karpenter_families() -> dict[str, KarpenterFamily]:
    """aws/karpenter-provider-aws's ``instance-types.md`` (tests/fixtures/instance-types): family -> its types
    and labels."""
    families: dict[str, KarpenterFamily] = {}
    current: KarpenterFamily | None = None
    for line in INSTANCE_TYPE_LABELS.read_text().splitlines():
        if match := _FAMILY.fullmatch(line):
            current = families.setdefault(match[1], KarpenterFamily(match[1]))
        elif (match := _TYPE.fullmatch(line)) and current is not None:
            current.types.append(match[1])
        elif (match := _LABEL.fullmatch(line)) and current is not None and match[1] not in ("Label", "--"):
            current.labels[match[1]] = match[2]
    return families
