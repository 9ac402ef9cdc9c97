"""Shared by the canary and promotion tests: an AMI catalog with the images a new AMI's way to prod needs
(newer builds of the prod GPU image, a Bottlerocket image, one with a larger root snapshot), and the
offline preview of a prod stack config through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from mixed_os_racks.cli import main

from conftest import GPU_AMI, REPO

POOLS_KEY = "rack:additional_karpenter_nodepools_config"
GROUPS_KEY = "rack:additional_node_groups_config"

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
        dict(
            gpu,
            id=NEW_AMI,
            name="amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261129",
            creation_date="2026-11-29T08:00:00.000Z",
        ),
        dict(
            gpu,
            id=NEWER_AMI,
            name="amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261206",
            creation_date="2026-12-06T08:00:00.000Z",
        ),
        dict(
            gpu,
            id=BOTTLEROCKET_AMI,
            name="bottlerocket-aws-k8s-1.34-nvidia-x86_64-v1.30.0-abcdef12",
            description="bottlerocket-aws-k8s-1.34-nvidia",
            root_snapshot_gib=2,
        ),
        dict(gpu, id=LARGE_ROOT_AMI, root_snapshot_gib=300),
    ]
    doc["ebs_encryption_by_default"] = True  # so a node group may pin these (unencrypted) images too
    path = folder / "amis.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def preview(folder: Path, values: dict[str, Any], amis: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    """``mixed-os-racks preview`` of the rack program with ``values`` as stack prod's config: (exit code, --json)."""
    stack = folder / "Pulumi.prod.yaml"
    stack.write_text(yaml.safe_dump({"config": values}))
    out = folder / "preview.json"
    code = main(
        ["preview", "--config", str(stack), "--cwd", str(REPO), "--amis", str(amis), "--json", str(out), *extra]
    )
    return code, (json.loads(out.read_text()) if out.exists() else {})
