"""Benchmark of the pack's check of a ``lanes`` policy config (not a test): ``lanes_config_problems`` over a rack
stack's ``lanes`` output of 1,000 lanes, as the workload policies receive it from ``Configure``.

    .venv/bin/python benchmarks/bench_lanes.py [--lanes N] [--repeat N]

Bar: 1,000 lanes checked in at most 0.18 s, median of ``--repeat`` runs (7), each of a config the check has not
seen before (its lanes named for the run). The lanes are as a rack writes them: node pools and node
groups, GPU and general purpose, each with its own name and label, with the output's own fields (``os``, ``ami``,
cost) that the check passes as they are. Exits 1 when the bar is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from mixed_os_racks.pack.laneconfig import lanes_config_problems

BAR_S = 0.18
"""Twice what the pack's hand-written check of the lanes config took before it read the lane contract's schema."""


def lane(n: int, run: int = 0) -> dict[str, Any]:
    """The ``n``th lane of a rack's ``lanes`` output, with its name: a GPU pool, a general pool or a node group."""
    name = f"lane-{run}-{n:04d}"
    common = {
        "name": name,
        "labels": {"convox.io/nodepool": name},
        "worstCaseHourlyUsd": 12.5 + n,
        "worstCaseRolloutHourlyUsd": 14.0 + n,
    }
    if n % 3 == 0:
        return {
            **common,
            "kind": "nodepool",
            "os": "al2023",
            "gpu": True,
            "ami": {"alias": "al2023@latest"},
            "taints": [
                {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
                {"key": "dedicated-node", "value": name, "effect": "NoSchedule"},
            ],
            "arch": ["amd64"],
            "instanceFamilies": ["g5", "g6"],
            "instanceSizes": ["xlarge", "2xlarge", "4xlarge"],
            "capacityTypes": ["on-demand", "spot"],
            "maxGpusPerNode": 1,
            "largestInstanceType": "g6.4xlarge",
            "allocatable": {"cpu": "15890m", "memory": "57691Mi", "ephemeral-storage": "17Gi"},
        }
    if n % 3 == 1:
        return {
            **common,
            "kind": "nodepool",
            "os": "bottlerocket",
            "gpu": False,
            "ami": {"alias": "bottlerocket@latest"},
            "taints": [],
            "arch": ["amd64", "arm64"],
            "instanceFamilies": ["c7i", "m7i", "m7g"],
            "capacityTypes": ["spot"],
            "maxGpusPerNode": 0,
            "largestInstanceType": "m7i.48xlarge",
            "allocatable": {"cpu": "191450m", "memory": "742187Mi", "ephemeral-storage": "17Gi"},
        }
    return {
        **common,
        "kind": "nodegroup",
        "os": "al2023",
        "gpu": True,
        "ami": {"amiType": "AL2023_x86_64_NVIDIA"},
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
        "arch": ["amd64"],
        "instanceTypes": ["g5.2xlarge"],
        "capacityTypes": ["ON_DEMAND"],
        "maxGpusPerNode": 1,
        "largestInstanceType": "g5.2xlarge",
        "allocatable": {"cpu": "7910m", "memory": "28266Mi", "ephemeralStorage": "17Gi"},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    problems = lanes_config_problems([lane(n) for n in range(args.lanes)])  # a warm-up (imports, the schema)
    if problems:
        sys.exit(f"the generated config has problems: {problems[:3]}")
    times = []
    for run in range(1, args.repeat + 1):
        given = [lane(n, run) for n in range(args.lanes)]
        start = time.perf_counter()
        lanes_config_problems(given)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    ok = median <= BAR_S
    print(
        f"{args.lanes:,} lanes checked in {median:.3f} s, median (runs {min(times):.3f}-{max(times):.3f} s; "
        f"bar {BAR_S} s){'' if ok else '  MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
