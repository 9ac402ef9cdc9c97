"""Another team's repository: its program imports the installed package, its preview runs the pack
installed with the package, `pack init` gives it a pack the analyzer protocol drives, and the CI
recipe's offline commands work there.

The program (``examples/consumer``) is copied out of this repository (so no ``policies/`` is found
at or above it) and run by the ``mixed-os-racks`` script of this virtualenv with no ``PYTHONPATH``:
the package comes from its installation (an editable install maps only ``mixed_os_racks``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import mixed_os_racks
from conftest import REPO
from mixed_os_racks.cli import main
from mixed_os_racks.offline.packprocess import ENGINE_ADDRESS, PolicyPackProcess, pack_env
from mixed_os_racks.offline.policyconfig import LEVEL_NAMES, read_config_file
from policy_helpers import judge, messages, node_class
from test_pack_start import small_venv, started_as

CONSUMER = REPO / "examples" / "consumer"
BIN = Path(sys.executable).parent


def environment() -> dict[str, str]:
    """A user's shell: this virtualenv's scripts on the PATH, nothing on PYTHONPATH."""
    return {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}


@pytest.fixture
def consumer(tmp_path: Path) -> Path:
    return Path(shutil.copytree(CONSUMER, tmp_path / "ml-platform", ignore=shutil.ignore_patterns("venv", "__pycache__")))


def command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "mixed-os-racks"), *args], cwd=cwd, env=environment(), capture_output=True,
                          text=True, timeout=300)


def test_the_program_sees_the_installed_package_and_not_this_repository(consumer):
    probe = subprocess.run([sys.executable, "-c", "import importlib.util, json, sys, mixed_os_racks; print(json.dumps("
                            "[sys.path, mixed_os_racks.__version__, importlib.util.find_spec('components') is None]))"],
                           cwd=consumer, env=environment(), capture_output=True, text=True, check=True)
    path, version, no_checkout = json.loads(probe.stdout)
    assert str(REPO) not in path and no_checkout
    assert version == mixed_os_racks.__version__ != "0+unknown"


def test_a_deployment_on_a_lane_that_does_not_exist_fails_naming_the_policy(consumer):
    stack = consumer / "Pulumi.dev.yaml"
    stack.write_text(stack.read_text().replace("serving_pool: ml ", "serving_pool: ml-gpu "))
    run = command("preview", "--stack", "dev", "--amis", "amis.yaml", cwd=consumer)
    assert run.returncode == 1, run.stderr
    assert "[mandatory]  mixed-os-racks: workloads-reach-their-lane  (model-server)" in run.stdout
    assert "karpenter nodepool 'ml-gpu', which does not exist on this rack" in run.stdout
    assert run.stdout.rstrip().endswith("bundled): failed: 1 mandatory violation")


def test_an_ami_missing_from_the_catalog_names_amis_and_its_format(consumer):
    run = command("preview", "--stack", "dev", cwd=consumer)  # the default catalog lacks the team's image
    assert run.returncode == 2
    assert "ami_id 'ami-0c1d2e3f405162738' cannot be read" in run.stderr
    assert "has no image ami-0c1d2e3f405162738; give a catalog that has it with --amis FILE" in run.stderr
    assert "root_snapshot_gib" in run.stderr and "docs/offline.md" in run.stderr


# ---- pack init ----------------------------------------------------------------------------------------


def test_pack_init_writes_a_pack_that_the_cli_starts_and_the_analyzer_drives(tmp_path, capsys):
    pack_dir = tmp_path / "policy-pack"
    assert main(["pack", "init", str(pack_dir)]) == 0
    assert "pulumi install" in capsys.readouterr().out
    manifest = yaml.safe_load((pack_dir / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": "venv"}}
    requirements = (pack_dir / "requirements.txt").read_text().splitlines()
    assert f"mixed-os-racks=={mixed_os_racks.__version__}" in requirements
    assert any(line.startswith("pulumi-policy>=") for line in requirements)

    # what `pulumi install` makes: the pack's virtualenv, with the package and pulumi-policy
    python = small_venv(pack_dir / "venv")
    with PolicyPackProcess(pack_dir, pack_env("ml-platform", "dev")) as pack:
        argv, cwd = started_as(pack)
        assert argv == [str(python), "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, str(pack_dir)] and cwd == str(pack_dir)
        assert pack.info.name == "mixed-os-racks" and pack.warnings == []
        config = json.loads((pack_dir / "config.json").read_text())
        # the template holds every policy, at the level the pack itself declares
        assert {name: entry["enforcementLevel"] for name, entry in config.items()} == {
            p.name: LEVEL_NAMES[p.enforcementLevel] for p in pack.info.policies}
        assert config["pinned-ami-age"]["maxAgeDays"] == 90 and config["disk-fits-ami-snapshot"]["lookup"] is False

        def program() -> None:
            node_class("ml", [{"id": "ami-0c1d2e3f40516273"}])  # 16 hex digits: one short

        violations = judge(pack, program, json.loads((pack_dir / "config.json").read_text()))
    assert any("ami-0c1d2e3f40516273" in m for m in messages(violations, "ami-id-format"))
    assert read_config_file(pack_dir / "config.json")  # the CLI's format, as --policy-pack-config reads it


def test_pack_init_refuses_to_overwrite_unless_forced(tmp_path, capsys):
    pack_dir = tmp_path / "pack"
    pack_dir.mkdir()
    (pack_dir / "__main__.py").write_text("# ours\n")
    assert main(["pack", "init", str(pack_dir)]) == 2
    assert capsys.readouterr().err == f"error: {pack_dir}: already has __main__.py; pass --force to overwrite\n"
    assert (pack_dir / "__main__.py").read_text() == "# ours\n" and not (pack_dir / "PulumiPolicy.yaml").exists()
    assert main(["pack", "init", str(pack_dir), "--force"]) == 0
    assert "serve()" in (pack_dir / "__main__.py").read_text()
    (tmp_path / "file").write_text("")
    assert main(["pack", "init", str(tmp_path / "file")]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err


def test_pack_init_writes_no_file_through_a_symlink_and_one_requirement_line(tmp_path, capsys):
    pack_dir = tmp_path / "pack"
    pack_dir.mkdir()
    outside = tmp_path / "elsewhere.json"
    (pack_dir / "config.json").symlink_to(outside)  # dangling: the file it names does not exist
    assert main(["pack", "init", str(pack_dir)]) == 2
    assert capsys.readouterr().err == f"error: {pack_dir}: already has config.json; pass --force to overwrite\n"
    assert not outside.exists() and not (pack_dir / "__main__.py").exists()
    for requirement in ("mixed-os-racks==1.0\n--extra-index-url http://example.com/simple", "", "   "):
        assert main(["pack", "init", str(tmp_path / "other"), "--requirement", requirement]) == 2
        assert "must be one requirements.txt line" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()
    assert main(["pack", "init", ""]) == 2
    assert "the pack's directory is empty" in capsys.readouterr().err


def test_the_written_pack_runs_under_the_offline_preview(consumer, tmp_path):
    pack_dir = tmp_path / "policy-pack"
    assert command("pack", "init", str(pack_dir), cwd=consumer).returncode == 0
    small_venv(pack_dir / "venv")
    run = command("preview", "--stack", "dev", "--amis", "amis.yaml", "--policy-pack", str(pack_dir),
                  "--policy-pack-config", str(pack_dir / "config.json"), cwd=consumer)
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip().splitlines()[-2:] == ["Policy packs (--policy-pack):",
                                                     f"    mixed-os-racks ({pack_dir}): passed"]


# ---- the CI recipe ------------------------------------------------------------------------------------


def recipe() -> dict:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    (workflow,) = re.findall(r"^```yaml\n(.*?)^```", text, re.M | re.S)
    return yaml.safe_load(workflow)


def test_the_ci_recipe_previews_on_every_pull_request_and_with_the_cli_where_a_cloud_is():
    workflow = recipe()
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key `on` as true
    cloud = [step.get("run", "") for step in workflow["jobs"]["cloud-preview"]["steps"]]
    assert any("pulumi install" in run and "policy-pack" in run for run in cloud)
    assert any(run.startswith("pulumi preview --stack dev --policy-pack policy-pack") for run in cloud)


def test_the_ci_recipes_offline_commands_pass_against_the_consumer_with_the_bundled_pack(consumer):
    steps = recipe()["jobs"]["offline-preview"]["steps"]
    (line,) = [step["run"] for step in steps if step.get("run", "").startswith("mixed-os-racks ")]
    run = subprocess.run(shlex.split(line), cwd=consumer, env=environment(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (line, run.stderr)
    assert "rack:index:KarpenterPool" in run.stdout and "kubernetes:apps/v1:Deployment" in run.stdout
    tail = run.stdout.rstrip().splitlines()[-2:]
    assert tail[0] == (f"Policy packs (no policies/ at or above {consumer.resolve()}: ran the pack bundled with "
                       f"mixed-os-racks {mixed_os_racks.__version__}):")
    assert tail[1] == f"    mixed-os-racks ({Path(mixed_os_racks.__file__).parent / 'pack' / 'bundled'}): passed"
    assert "virtualenv" not in run.stderr  # the bundled pack runs with this interpreter: nothing to create
    assert json.loads((consumer / "preview.json").read_text())["violations"] == []
