"""Benchmark of the policy pack over gRPC (not a test): its start-up, and resources analysed per second.

    .venv/bin/python benchmarks/bench_policy.py [--resources N] [--repeat N]

Bars: the pack starts in under 1 s (spawned as the Pulumi CLI spawns it, until it has
answered ``GetAnalyzerInfo``); at least 2,000 resources analysed per second, median (``Configure``, then
``Analyze`` for every resource and ``AnalyzeStack`` once, all over the pack's real gRPC server).
The run is a rack built by our components plus other teams' raw resources, about 1/3 each of
Karpenter objects, AWS node resources (launch templates, EKS node groups) and everything else.
Exits 1 when a bar is missed. The package is byte-compiled first, as ``bench_preview`` says why.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_preview import compiled, pace  # noqa: E402

compiled()  # before the package's modules are imported below

import pulumi_aws as aws  # noqa: E402
import pulumi_kubernetes as k8s  # noqa: E402

from mixed_os_racks import Rack, RackArgs, parse_rack_config  # noqa: E402
from mixed_os_racks.offline import ProgramRun, run_program  # noqa: E402
from mixed_os_racks.offline.packprocess import PolicyPackProcess, pack_env  # noqa: E402
from mixed_os_racks.offline.policyconfig import parse_config  # noqa: E402

GPU_AMI = "ami-0a1b2c3d4e5f60718"
START_BAR_S = 1.0
RATE_BAR = 2_000.0
CONFIG = parse_config(
    {
        "disk-fits-ami-snapshot": {"amiRootSnapshotGiB": {GPU_AMI: 100}},
        "arch-matches-ami": {"amis": {GPU_AMI: {"architecture": "x86_64"}}},
        "ami-k8s-version": {
            "kubernetesVersion": "1.33",
            "amis": {GPU_AMI: {"name": "amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115"}},
        },
    }
)


def program(teams: int):
    def body() -> None:
        pools = [
            {
                "name": f"pool-{n:03d}",
                "instance_families": "g5,g6" if n % 2 else "c7i,m7i",
                **({"ami_id": GPU_AMI, "disk": 200} if n % 2 else {}),
            }
            for n in range(teams)
        ]
        Rack(
            "rack",
            RackArgs(spec=parse_rack_config({"cluster_name": "bench", "additional_karpenter_nodepools_config": pools})),
        )
        for n in range(teams):
            template = aws.ec2.LaunchTemplate(
                f"team-{n}-lt",
                image_id=GPU_AMI,
                instance_type="g5.xlarge",
                user_data="YXBpVmVyc2lvbjogbm9kZS5la3MuYXdzL3YxYWxwaGExCmtpbmQ6IE5vZGVDb25maWcK",
                block_device_mappings=[
                    {"device_name": "/dev/xvda", "ebs": {"volume_size": 150, "volume_type": "gp3", "encrypted": "true"}}
                ],
            )
            aws.eks.NodeGroup(
                f"team-{n}-ng",
                cluster_name="bench",
                node_role_arn="arn:aws:iam::123456789012:role/n",
                subnet_ids=["s"],
                ami_type="CUSTOM",
                launch_template={"id": template.id, "version": "1"},
                scaling_config={"desired_size": 1, "min_size": 1, "max_size": 3},
            )
            aws.iam.Role(f"team-{n}-role", assume_role_policy="{}")
            k8s.core.v1.ConfigMap(f"team-{n}-settings", data={"team": str(n)})

    return body


def startup(repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        with PolicyPackProcess(REPO / "policies", pack_env("bench", "bench")):
            times.append(time.perf_counter() - begin)
    return times


def throughput(run: ProgramRun, repeat: int) -> list[float]:
    rates = []
    with PolicyPackProcess(REPO / "policies", pack_env(run.project, run.stack)) as pack:
        for _ in range(repeat):
            begin = time.perf_counter()
            pack.configure(CONFIG, run)
            violations = pack.analyze(run)
            rates.append(len(run.resources) / (time.perf_counter() - begin))
            assert not [v for v in violations if v["level"] == "mandatory"], violations[:3]
    return rates


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resources", type=int, default=2000, help="about this many resources (default 2000)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    print(pace())
    starts = startup(args.repeat)
    run = run_program(program(max(1, args.resources // 7)), {"aws:region": "us-east-1"}, project="bench", stack="bench")
    rates = throughput(run, args.repeat)
    print(pace())

    start_ok = statistics.median(starts) < START_BAR_S
    rate_ok = statistics.median(rates) >= RATE_BAR
    print(
        f"pack start-up   median {statistics.median(starts):.3f} s  max {max(starts):.3f} s   "
        f"(bar < {START_BAR_S:g} s) {'ok' if start_ok else 'MISSED'}"
    )
    print(
        f"analysed        {len(run.resources)} resources, median {statistics.median(rates):,.0f}/s  "
        f"best {max(rates):,.0f}/s  worst {min(rates):,.0f}/s   (bar >= {RATE_BAR:,.0f}/s) "
        f"{'ok' if rate_ok else 'MISSED'}"
    )
    return 0 if start_ok and rate_ok else 1


if __name__ == "__main__":
    sys.exit(main())
