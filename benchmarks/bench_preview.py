"""Benchmark of the offline preview (not a test): wall time of the whole CLI, as a user runs it.

    make bench            # or: .venv/bin/python benchmarks/bench_preview.py [--repeat N]

Bars: the prod example in at most 1 s; a generated 1,000-pool config in at most 10 s, and growing
linearly: 1,000 pools take at most 5.5 times as long as 200 pools, measured in the same run. Each
figure is the median of ``--repeat`` runs (5); the fastest and slowest run are printed beside it.

The package is byte-compiled first, as pip compiles a wheel it installs: in an editable install, with
``PYTHONDONTWRITEBYTECODE`` set (as on the machine these numbers come from), every run would otherwise
compile the package's modules again, the preview's and the pack's (0.4 s of the prod preview).
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
GPU_AMI = "ami-0a1b2c3d4e5f60718"


def generated_stack(pools: int) -> dict:
    """``pools`` additional pools; every fourth one pinned to the catalog's GPU AMI."""
    configs = []
    for n in range(pools):
        pool = {"name": f"pool-{n:03d}", "instance_families": "c7i,m7i", "capacity_types": "on-demand,spot"}
        if n % 4 == 0:
            pool.update(instance_families="g5,g6", ami_id=GPU_AMI, disk=200, dedicated=True)
        configs.append(pool)
    return {
        "config": {
            "aws:region": "us-east-1",
            "rack:cluster_name": "bench",
            "rack:karpenter_node_os": "bottlerocket",
            "rack:additional_karpenter_nodepools_config": configs,
        }
    }


def wall(args: list[str], repeat: int) -> list[float]:
    """Wall times of ``python -m mixed_os_racks.offline preview ARGS``, one per run."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "mixed_os_racks.offline", "preview", *args], cwd=REPO, capture_output=True, text=True
        )
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            sys.exit(f"preview failed ({proc.returncode}): {proc.stderr}")
    return times


def spread(times: list[float]) -> str:
    return f"(runs {min(times):.2f}-{max(times):.2f} s)"


def compiled() -> None:
    """Byte-compile the package (see the module docstring): its ``__pycache__``, as pip leaves it."""
    import mixed_os_racks

    compileall.compile_dir(Path(mixed_os_racks.__file__).parent, quiet=1)


def pace() -> str:
    """How fast this machine runs Python right now: a fixed loop, timed. On a shared machine it can
    take twice as long from one minute to the next, and every figure here with it."""
    start = time.perf_counter()
    total = 0
    for n in range(3_000_000):
        total += n & 7
    return f"machine pace: a fixed CPU loop took {time.perf_counter() - start:.2f} s"


PROD_BAR_S, POOLS_BAR_S, GROWTH_BAR = 1.0, 10.0, 5.5


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("extra", nargs="*", help="extra preview arguments, e.g. --no-policy")
    args = parser.parse_args()
    compiled()
    print(pace())

    runs = wall(["--stack", "prod", *args.extra], args.repeat)
    prod = statistics.median(runs)
    print(f"prod example:        {prod:6.2f} s   (bar: <= {PROD_BAR_S:g} s) {spread(runs)}")
    seconds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for pools in (200, 1000):
            stack = Path(tmp) / f"Pulumi.bench{pools}.yaml"
            stack.write_text(yaml.safe_dump(generated_stack(pools)))
            runs = wall(["--config", str(stack), *args.extra], args.repeat)
            seconds[pools] = statistics.median(runs)
            print(f"{pools:4d} pools:          {seconds[pools]:6.2f} s   {spread(runs)}")
    growth = seconds[1000] / seconds[200]
    print(
        f"1,000 pools:         {seconds[1000]:6.2f} s   (bar: <= {POOLS_BAR_S:g} s), "
        f"{growth:.2f}x the time of 200 pools (bar: <= {GROWTH_BAR:g}x)"
    )
    print(pace())
    ok = prod <= PROD_BAR_S and seconds[1000] <= POOLS_BAR_S and growth <= GROWTH_BAR
    print("bars met" if ok else "BARS MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
