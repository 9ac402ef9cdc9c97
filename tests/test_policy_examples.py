"""The offline preview with policy packs: the bad-stack examples, exit codes, and what a user sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mixed_os_racks.cli import main
from conftest import REPO

EXAMPLES = REPO / "examples"
STACK_EXAMPLES = sorted(
    p for p in EXAMPLES.iterdir() if p.is_dir() and p.name not in ("consumer", "typescript-consumer")
)
"""The rack plus one hand-written resource, stack ``example`` (``consumer`` and ``typescript-consumer``, another
team's own programs with their own stacks, have their own tests: ``test_consumer.py``,
``test_typescript_consumer.py``)."""
DOCS = "".join(path.read_text(encoding="utf-8") for path in sorted((REPO / "docs").glob("*.md")))


def preview(capsys, example: str, *extra: str, json_out: Path | None = None) -> tuple[int, str, str]:
    folder = EXAMPLES / example
    args = ["preview", "--cwd", str(folder), "--stack", "example", "--amis", str(folder / "amis.yaml"), *extra]
    if json_out is not None:
        args += ["--json", str(json_out)]
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def policies_section(out: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index("Policies:")
    end = next(n for n in range(start + 1, len(lines)) if not lines[n].startswith("    "))
    return lines[start + 1 : end]


# ---- the four bad stacks -------------------------------------------------------------------------------------


def test_malformed_ami_id(capsys, tmp_path):
    code, out, err = preview(capsys, "malformed-ami-id", json_out=tmp_path / "out.json")
    assert code == 1, err
    assert policies_section(out) == [
        "    [mandatory]  mixed-os-racks: ami-id-format  (ml-batch-nodeclass)",
        "        EC2NodeClass 'ml-batch': invalid ami_id 'ami-0a1b2c3d4e5f6071' (must look like ami-0123456789abcdef0)",
    ]
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["violations"] == [
        {
            "policy": "ami-id-format",
            "pack": "mixed-os-racks",
            "level": "mandatory",
            "urn": (
                "urn:pulumi:example::malformed-ami-id::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::ml-batch-nodeclass"
            ),
            "message": "EC2NodeClass 'ml-batch': invalid ami_id 'ami-0a1b2c3d4e5f6071' (must look like "
            "ami-0123456789abcdef0)",
        }
    ]


def test_custom_ami_on_bottlerocket(capsys):
    code, out, _ = preview(capsys, "custom-ami-on-bottlerocket")
    assert code == 1
    section = policies_section(out)
    assert "    [mandatory]  mixed-os-racks: al2023-family  (batch-nodeclass)" in section
    assert "        EC2NodeClass 'batch': a pinned ami_id needs an AL2023 pool (got bottlerocket)" in section
    assert not any("rack-gpu" in line or "rack-workload" in line for line in section)  # the rack itself passes


def test_disk_below_snapshot_with_the_policy_config(capsys):
    config = EXAMPLES / "disk-below-snapshot" / "policy-config.json"
    code, out, _ = preview(capsys, "disk-below-snapshot", "--policy-pack-config", str(config))
    assert code == 1
    assert policies_section(out) == [
        "    [mandatory]  mixed-os-racks: disk-fits-ami-snapshot  (gpu-train-launch-template)",
        "        launch template 'gpu-train-launch-template': disk 50 GiB is smaller than the root snapshot of "
        "ami-0a1b2c3d4e5f60718 (100 GiB); give it a disk of 100 GiB or more",
    ]


def test_disk_below_snapshot_is_refused_from_the_catalog_without_a_policy_config(capsys):
    """The offline preview hands the pack the AMI catalog's facts: the hand-written template's disk is judged against
    the catalog's snapshot size, as with the policy config (which a real ``pulumi preview`` needs)."""
    code, out, _ = preview(capsys, "disk-below-snapshot")
    assert code == 1
    assert policies_section(out) == [
        "    [mandatory]  mixed-os-racks: disk-fits-ami-snapshot  (gpu-train-launch-template)",
        "        launch template 'gpu-train-launch-template': disk 50 GiB is smaller than the root snapshot of "
        "ami-0a1b2c3d4e5f60718 (100 GiB); give it a disk of 100 GiB or more",
    ]


def test_gpu_lane_on_bottlerocket(capsys):
    code, out, _ = preview(capsys, "gpu-lane-on-bottlerocket")
    assert code == 1
    assert policies_section(out) == [
        "    [mandatory]  mixed-os-racks: gpu-lane-os  (gpu-inference-nodepool)",
        "        karpenter nodepool 'gpu-inference': instance families g5,g6 make this a GPU lane, and GPU lanes must "
        "run "
        "Amazon Linux 2023, not Bottlerocket (move them to an AL2023 pool or node group)",
        "    [advisory]  mixed-os-racks: lane-cost-unbounded  (gpu-inference-nodepool)",
        "        karpenter nodepool 'gpu-inference': a GPU lane with no bound on what it costs an hour (it has no "
        "limits "
        "on cpu, memory, GPUs or nodes); set limits.nvidia.com/gpu (or cpu, memory, nodes) on it",
    ]


def test_every_example_ships_its_stack_config_and_catalog():
    for folder in STACK_EXAMPLES:
        assert {"Pulumi.yaml", "Pulumi.example.yaml", "amis.yaml", "__main__.py"} <= {
            p.name for p in folder.iterdir()
        }, folder


# ---- flags and exit codes -----------------------------------------------------------------------------------------


def test_no_policy_runs_no_pack(capsys):
    code, out, _ = preview(capsys, "gpu-lane-on-bottlerocket", "--no-policy")
    assert code == 0 and "Policies:" not in out


def test_advisory_everywhere_exits_0(capsys, tmp_path):
    config = tmp_path / "advisory.json"
    config.write_text(json.dumps({"all": "advisory"}))
    code, out, _ = preview(capsys, "gpu-lane-on-bottlerocket", "--policy-pack-config", str(config))
    assert code == 0
    assert "    [advisory]  mixed-os-racks: gpu-lane-os  (gpu-inference-nodepool)" in out


def test_the_pack_is_repeatable_with_a_config_each(capsys, tmp_path):
    quiet = tmp_path / "quiet.json"
    quiet.write_text(json.dumps({"gpu-lane-os": "disabled"}))
    code, out, _ = preview(
        capsys,
        "gpu-lane-on-bottlerocket",
        "--policy-pack",
        str(REPO / "policies"),
        "--policy-pack",
        str(REPO / "policies"),
        "--policy-pack-config",
        str(quiet),
        "--policy-pack-config",
        str(tmp_path / "empty.json"),
    )
    assert code == 2  # the second config file does not exist
    (tmp_path / "empty.json").write_text("")
    code, out, _ = preview(
        capsys,
        "gpu-lane-on-bottlerocket",
        "--policy-pack",
        str(REPO / "policies"),
        "--policy-pack",
        str(REPO / "policies"),
        "--policy-pack-config",
        str(quiet),
        "--policy-pack-config",
        str(tmp_path / "empty.json"),
    )
    assert code == 1
    assert out.count("mixed-os-racks: gpu-lane-os") == 1  # disabled for the first pack, on for the second


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (
            ["--policy-pack", "nowhere"],
            "error: no policy pack at nowhere (no PulumiPolicy.yaml): pass --policy-pack DIR, or --no-policy\n",
        ),
        (
            ["--no-policy", "--policy-pack", "policies"],
            "error: --no-policy runs no pack: drop --policy-pack and --policy-pack-config\n",
        ),
    ],
)
def test_usage_errors_exit_2(capsys, extra, error):
    code, out, err = preview(capsys, "malformed-ami-id", *extra)
    assert (code, out, err) == (2, "", error)


def test_a_config_the_schemas_refuse_exits_2(capsys, tmp_path):
    config = tmp_path / "bad.json"
    config.write_text(
        json.dumps({"pinned-ami-age": {"maxAgeDays": "soon"}, "gpu-lane-os": {"enforcementLevel": "mandatory"}})
    )
    code, _, err = preview(capsys, "malformed-ami-id", "--policy-pack-config", str(config))
    assert code == 2
    assert (
        err
        == "error: invalid policy pack config for 'mixed-os-racks':\n  pinned-ami-age: maxAgeDays: 'soon' is not of "
        "type 'number'\n"
    )


LANES = "workloads-reach-their-lane"


@pytest.mark.parametrize(
    ("lane", "said"),
    [
        (
            {"allocatable": {"cpu": "lots"}},
            "lanes[0].allocatable.cpu: invalid quantity 'lots' (0 or more, like 3920m, 14481Mi, 17Gi)",
        ),
        (
            {"allocatable": {"memory": -1}},
            "lanes[0].allocatable.memory: invalid quantity -1 (0 or more, like 3920m, 14481Mi, 17Gi)",
        ),
        (
            {"allocatable": {"cpu": "m"}},
            "lanes[0].allocatable.cpu: invalid quantity 'm' (0 or more, like 3920m, 14481Mi, 17Gi)",
        ),
        ({"instanceTypes": ["g5"]}, "lanes[0].instanceTypes: invalid instance type 'g5' (must look like g4dn.xlarge)"),
        # the instance table sizes g5 (Karpenter's instance-type reference): no nano and no large (its smallest is
        # xlarge)
        (
            {"instanceTypes": ["g5.xlarge", "g5.nano"]},
            "lanes[0].instanceTypes: 'g5.nano' is no instance type (g5 comes in "
            "xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, 48xlarge)",
        ),
        (
            {"instanceTypes": ["g5.large"]},
            "lanes[0].instanceTypes: 'g5.large' is no instance type (did you mean 'g5.xlarge'? "
            "g5 comes in xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, 48xlarge)",
        ),
        (
            {"instanceTypes": ["g4dn.xlarge"], "arch": ["arm64"]},
            "lanes[0]: instanceTypes g4dn.xlarge and arch arm64 leave no instance type it could launch (they "
            "contradict each "
            "other: instanceTypes g4dn.xlarge is amd64, sizes xlarge)",
        ),
        (
            {"instanceFamilies": ["g5"], "instanceSizes": ["nano"]},
            "lanes[0]: instanceFamilies g5 and instanceSizes nano leave no instance type it could launch (they "
            "contradict each "
            "other: instanceFamilies g5 is amd64, sizes xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, "
            "24xlarge, "
            "48xlarge; instanceSizes nano is amd64/arm64, sizes nano)",
        ),
    ],
)
def test_a_lanes_config_the_pack_cannot_read_exits_2_like_any_config_error(capsys, tmp_path, lane, said):
    config = tmp_path / "lanes.json"
    config.write_text(json.dumps({LANES: {"lanes": [{"name": "gpu", "gpu": True, **lane}]}}))
    code, out, err = preview(capsys, "malformed-ami-id", "--policy-pack-config", str(config))
    assert (code, out, err) == (2, "", f"error: invalid policy pack config for 'mixed-os-racks':\n  {LANES}: {said}\n")


def test_a_lane_of_no_cpu_is_a_lane_and_maxgpuspernode_0_holds(capsys, tmp_path):
    # 0 is a quantity (a node whose allocatable is all reserved); a GPU lane stated to hold no GPU takes no GPU pod
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    (folder / "Pulumi.s.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text(
        "import pulumi_kubernetes as k8s\n"
        "k8s.apps.v1.Deployment('llm', metadata={'name': 'llm'}, spec={'selector': {'matchLabels': {'a': 'b'}}, "
        "'template': {\n"
        "  'metadata': {'labels': {'a': 'b'}}, 'spec': {'nodeSelector': {'convox.io/label': 'gpu'}, 'containers': [\n"
        "  {'name': 'c', 'image': 'x', 'resources': {'limits': {'nvidia.com/gpu': 1}}}]}}})\n"
    )
    config = tmp_path / "lanes.json"
    config.write_text(
        json.dumps(
            {
                LANES: {
                    "lanes": [
                        {
                            "name": "gpu",
                            "labels": {"convox.io/label": "gpu"},
                            "gpu": True,
                            "instanceTypes": ["g5.xlarge"],
                            "maxGpusPerNode": 0,
                            "allocatable": {"cpu": 0},
                        }
                    ]
                }
            }
        )
    )
    code = main(
        [
            "preview",
            "--cwd",
            str(folder),
            "--stack",
            "s",
            "--policy-pack",
            str(REPO / "policies"),
            "--policy-pack-config",
            str(config),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert (
        'deployment "llm" fits no lane: it requests nvidia.com/gpu 1; the nearest, lane "gpu" (convox.io/label=gpu): '
        "the nearest instance type it can launch for this pod, g5.xlarge, has nvidia.com/gpu 0 allocatable < 1 "
        "requested (after kube-reserved and eviction thresholds); the policy config gives it at most 0 GPUs per node "
        "(maxGpusPerNode)"
    ) in out


def test_a_pack_that_fails_to_start_exits_2_and_is_not_left_running(capsys, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (broken / "__main__.py").write_text("import missing_policy_library\n")
    code, out, err = preview(capsys, "malformed-ami-id", "--policy-pack", str(broken))
    assert code == 2 and out == ""
    assert err.startswith(f"error: policy pack {broken} failed to start: it exited before printing its port")
    assert "ModuleNotFoundError: No module named 'missing_policy_library'" in err

    talkative = tmp_path / "talkative"
    talkative.mkdir()
    (talkative / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    pid_file = tmp_path / "pid"
    (talkative / "__main__.py").write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\nprint('hello', "
        f"flush=True)\ntime.sleep(600)\n"
    )
    code, _, err = preview(capsys, "malformed-ami-id", "--policy-pack", str(talkative))
    assert code == 2 and "failed to start: it printed 'hello' instead of a port" in err
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_the_cli_as_a_user_runs_it():
    """`python -m mixed_os_racks.offline preview` in a shell: the exit code a CI job sees."""
    folder = EXAMPLES / "gpu-lane-on-bottlerocket"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mixed_os_racks.offline",
            "preview",
            "--cwd",
            str(folder),
            "--stack",
            "example",
            "--amis",
            str(folder / "amis.yaml"),
            "--policy-pack",
            "policies",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "[mandatory]  mixed-os-racks: gpu-lane-os  (gpu-inference-nodepool)" in proc.stdout


@pytest.mark.parametrize("example", [p.name for p in STACK_EXAMPLES])
def test_the_readme_shows_what_each_example_prints(capsys, example):
    """The docs' output block for each example is the preview's own ``Policies:`` section."""
    readme = DOCS
    command = readme.index(f"--cwd examples/{example} ")
    section = readme[command : readme.find("```sh", command)]
    if "```\nPolicies:" not in section:  # an example the README says previews with no violation
        code, out, _ = preview(capsys, example)
        block = readme.rfind("\n\n```sh", 0, command)
        said = readme[readme.rfind("\n\n", 0, block) : block]  # the paragraph that introduces the command
        assert code == 0 and "Policies:" not in out and "no violation" in said
        return
    shown = readme[readme.index("```\nPolicies:", command) + 4 :]
    shown = shown[: shown.index("```")].splitlines()
    extra = (
        ["--policy-pack-config", str(EXAMPLES / example / "policy-config.json")]
        if "--policy-pack-config" in (readme[command : readme.index("```\nPolicies:", command)])
        else []
    )
    _, out, _ = preview(capsys, example, *extra)
    assert shown == ["Policies:", *policies_section(out)]
