"""Benchmark of the offline preview of a TypeScript program (not a test): the same 5,000 resources written in
TypeScript and in Python, each previewed by the whole CLI as a user runs it, printed side by side.

    make bench            # or: .venv/bin/python benchmarks/bench_typescript.py [--repeat N] [--resources N]

Bar: the TypeScript program's preview takes at most 3 times as long as the Python program's (wall time, the median of
``--repeat`` runs, 3). The CPU seconds of each run (the CLI, Node.js and the language's compiler together) are printed
beside it: on a loaded machine they move less than the wall time does. The programs are Kubernetes ConfigMaps from
pulumi-kubernetes (``@pulumi/kubernetes`` from the TypeScript example's ``node_modules``, which `make compiled`
installs, and the ``pulumi_kubernetes`` of the virtualenv), with ``--no-policy``: the policy pack judges both runs'
resources alike, and ``bench_policy.py`` measures it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_preview import compiled, pace

REPO = Path(__file__).resolve().parents[1]
NODE_MODULES = REPO / "examples" / "typescript-consumer" / "node_modules"
RATIO_BAR = 3.0

TYPESCRIPT = """\
import * as k8s from "@pulumi/kubernetes";

for (let i = 0; i < {count}; i++) {{
    new k8s.core.v1.ConfigMap(`cm-${{i}}`, {{ metadata: {{ name: `cm-${{i}}` }}, data: {{ index: String(i) }} }});
}}
"""

PYTHON = """\
import pulumi_kubernetes as k8s

for i in range({count}):
    k8s.core.v1.ConfigMap(f"cm-{{i}}", metadata={{"name": f"cm-{{i}}"}}, data={{"index": str(i)}})
"""


def projects(root: Path, count: int) -> dict[str, Path]:
    """The two projects, each with a dev stack in us-east-1."""
    typescript, python = root / "typescript", root / "python"
    for folder, runtime in ((typescript, "nodejs"), (python, "python")):
        folder.mkdir()
        (folder / "Pulumi.yaml").write_text(f"name: bench\nruntime: {runtime}\n")
        (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (typescript / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    (typescript / "package.json").write_text(json.dumps({"name": "bench", "main": "index.ts"}))
    (typescript / "index.ts").write_text(TYPESCRIPT.format(count=count))
    (python / "__main__.py").write_text(PYTHON.format(count=count))
    return {"TypeScript": typescript, "Python": python}


def run(folder: Path, count: int) -> tuple[float, float]:
    """Wall and CPU seconds of one ``mixed-os-racks preview --cwd FOLDER --stack dev --no-policy``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mixed_os_racks.offline",
            "preview",
            "--cwd",
            str(folder),
            "--stack",
            "dev",
            "--no-policy",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"preview of {folder} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    if f"+ {count + 1} to create" not in proc.stdout:  # the resources and the stack
        sys.exit(f"preview of {folder} did not plan {count + 1} creates:\n{proc.stdout[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resources", type=int, default=5000)
    args = parser.parse_args()
    if not (NODE_MODULES / "@pulumi" / "kubernetes").is_dir():
        sys.exit(f"{NODE_MODULES} has no @pulumi/kubernetes: run `make compiled` (npm ci in {NODE_MODULES.parent})")
    compiled()
    print(pace())
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    walls: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for language, folder in projects(Path(tmp), args.resources).items():
            runs = [run(folder, args.resources) for _ in range(args.repeat)]
            walls[language] = statistics.median(wall for wall, _ in runs)
            cpu = statistics.median(cpu for _, cpu in runs)
            print(
                f"{args.resources:,} resources, {language + ':':11s} {walls[language]:6.1f} s wall, {cpu:6.1f} s CPU "
                f"(runs {min(w for w, _ in runs):.1f}-{max(w for w, _ in runs):.1f} s)"
            )
    ratio = walls["TypeScript"] / walls["Python"]
    print(f"TypeScript / Python:       {ratio:6.2f}x   (bar: TypeScript within {RATIO_BAR:g}x Python)")
    print(pace())
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    ok = ratio <= RATIO_BAR
    print("bars met" if ok else "BARS MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
