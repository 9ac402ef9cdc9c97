"""AMI catalogs for the canary and promotion tests: the default catalog plus the images a new AMI
flow needs (a newer build of the prod GPU image, a Bottlerocket image, an image with a 595 driver)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from conftest import GPU_AMI, REPO

NEW_AMI = "ami-0b1c2d3e4f5a60718"
"""A newer build of the prod GPU image (x86_64, NVIDIA 580, 100 GiB root snapshot): the candidate."""
NEWER_AMI = "ami-0c1d2e3f4a5b60718"
"""A build newer still: what staging tries next."""
BOTTLEROCKET_AMI = "ami-0d1e2f3a4b5c60718"
"""A Bottlerocket NVIDIA image (its name says so), x86_64."""
LARGE_ROOT_AMI = "ami-0e1f2a3b4c5d60718"
"""The GPU image built with a 300 GiB root snapshot."""


def catalog(folder: Path) -> Path:
    doc: dict[str, Any] = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    gpu = next(a for a in doc["amis"] if a["id"] == GPU_AMI)
    doc["amis"] += [
        dict(gpu, id=NEW_AMI, name="amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261129",
             creation_date="2026-11-29T08:00:00.000Z"),
        dict(gpu, id=NEWER_AMI, name="amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261206",
             creation_date="2026-12-06T08:00:00.000Z"),
        dict(gpu, id=BOTTLEROCKET_AMI, name="bottlerocket-aws-k8s-1.34-nvidia-x86_64-v1.30.0-abcdef12",
             description="bottlerocket-aws-k8s-1.34-nvidia", root_snapshot_gib=2),
        dict(gpu, id=LARGE_ROOT_AMI, root_snapshot_gib=300),
    ]
    doc["ebs_encryption_by_default"] = True  # so a node group may pin these (unencrypted) images too
    path = folder / "amis.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path
