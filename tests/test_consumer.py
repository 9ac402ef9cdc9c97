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
import tomllib
from pathlib import Path
from typing import Any, Optional
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

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
    return Path(
        shutil.copytree(CONSUMER, tmp_path / "ml-platform", ignore=shutil.ignore_patterns("venv", "__pycache__"))
    )


def command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "mixed-os-racks"), *args], cwd=cwd, env=environment(), capture_output=True, text=True, timeout=300
    )


def test_the_program_sees_the_installed_package_and_not_this_repository(consumer):
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import importlib.util, json, sys, mixed_os_racks; print(json.dumps("
            "[sys.path, mixed_os_racks.__version__, importlib.util.find_spec('components') is None]))",
        ],
        cwd=consumer,
        env=environment(),
        capture_output=True,
        text=True,
        check=True,
    )
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


@pytest.mark.slow
def test_the_consumers_own_unit_tests_pass_with_the_packages_mocks(consumer):
    # what the team runs: `pytest` in its repository (mixed_os_racks.testing answers the components' look-ups)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"],
        cwd=consumer,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.rstrip().splitlines()[-1].startswith("3 passed")


# ---- pack init ----------------------------------------------------------------------------------------


def test_pack_init_writes_a_pack_that_the_cli_starts_and_the_analyzer_drives(tmp_path, capsys):
    pack_dir = tmp_path / "policy-pack"
    assert main(["pack", "init", str(pack_dir)]) == 0
    out = capsys.readouterr().out
    assert f"next: cd {pack_dir} && pulumi install" in out
    manifest = yaml.safe_load((pack_dir / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": "venv"}}
    requirements = (pack_dir / "requirements.txt").read_text().splitlines()
    # this checkout is installed editable: pip recorded its folder, which is what the pack installs
    assert f"mixed-os-racks @ {REPO.as_uri()}" in requirements
    assert (
        f"requirements.txt installs mixed-os-racks @ {REPO.as_uri()}: the folder {REPO.as_uri()} (installed editable)"
        in out
    )
    # a folder CI cannot install: the line that installs this release from the package's repository instead
    source = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]["Source"]
    assert (
        f"  a path on this machine, which CI and other machines cannot install: write the pack with --requirement "
        f"'mixed-os-racks @ git+{source}@v{mixed_os_racks.__version__}' (--force to rewrite it)"
    ) in out.splitlines()
    assert any(line.startswith("pulumi-policy>=") for line in requirements)

    # what `pulumi install` makes: the pack's virtualenv, with the package and pulumi-policy
    python = small_venv(pack_dir / "venv")
    with PolicyPackProcess(pack_dir, pack_env("ml-platform", "dev")) as pack:
        argv, cwd = started_as(pack)
        assert argv == [str(python), "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, str(pack_dir)] and cwd == str(
            pack_dir
        )
        assert pack.info.name == "mixed-os-racks" and pack.warnings == []
        config = json.loads((pack_dir / "config.json").read_text())
        # the template holds every policy, at the level the pack itself declares
        assert {name: entry["enforcementLevel"] for name, entry in config.items()} == {
            p.name: LEVEL_NAMES[p.enforcementLevel] for p in pack.info.policies
        }
        assert config["pinned-ami-age"]["maxAgeDays"] == 90 and config["disk-fits-ami-snapshot"]["lookup"] is False

        def program() -> None:
            node_class("ml", [{"id": "ami-0c1d2e3f40516273"}])  # 16 hex digits: one short

        violations = judge(pack, program, json.loads((pack_dir / "config.json").read_text()))
    assert any("ami-0c1d2e3f40516273" in m for m in messages(violations, "ami-id-format"))
    assert read_config_file(pack_dir / "config.json")  # the CLI's format, as --policy-pack-config reads it


def test_pack_init_refuses_a_folder_that_is_not_empty_unless_forced(tmp_path, capsys):
    pack_dir = tmp_path / "pack"
    pack_dir.mkdir()
    (pack_dir / "notes.md").write_text("ours\n")  # not one of the pack's files: the folder is still someone's
    assert main(["pack", "init", str(pack_dir)]) == 2
    assert capsys.readouterr().err == (
        f"error: {pack_dir}: is not empty (it has notes.md); write the pack into a new or "
        "empty folder, or pass --force to write its files there (replacing "
        "PulumiPolicy.yaml, __main__.py, requirements.txt, config.json)\n"
    )
    assert sorted(p.name for p in pack_dir.iterdir()) == ["notes.md"]
    (pack_dir / "__main__.py").write_text("# ours\n")
    assert main(["pack", "init", str(pack_dir)]) == 2
    assert "(it has __main__.py);" in capsys.readouterr().err and (pack_dir / "__main__.py").read_text() == "# ours\n"
    assert main(["pack", "init", str(pack_dir), "--force"]) == 0
    assert "serve()" in (pack_dir / "__main__.py").read_text() and (pack_dir / "notes.md").read_text() == "ours\n"
    (tmp_path / "file").write_text("")
    assert main(["pack", "init", str(tmp_path / "file")]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err
    # a symlink to a folder that is not empty (a system folder, here a stand-in) is that folder
    system = tmp_path / "etc"
    system.mkdir()
    (system / "passwd").write_text("root:x:0:0\n")
    (tmp_path / "linked").symlink_to(system)
    assert main(["pack", "init", str(tmp_path / "linked")]) == 2
    assert "is not empty (it has passwd)" in capsys.readouterr().err
    assert sorted(p.name for p in system.iterdir()) == ["passwd"]


def test_pack_init_prints_a_folder_named_like_an_option_as_a_path(tmp_path, capsys, monkeypatch):
    """``cd -pack`` and ``--policy-pack -pack`` read the name as an option, quoted or not: ``./-pack`` cannot be."""
    monkeypatch.chdir(tmp_path)
    assert main(["pack", "init", "--", "-pack"]) == 0
    out = capsys.readouterr().out
    assert "next: cd ./-pack && pulumi install" in out
    assert "then: pulumi preview --policy-pack ./-pack --policy-pack-config ./-pack/config.json" in out
    assert (tmp_path / "-pack" / "PulumiPolicy.yaml").is_file()


@pytest.mark.parametrize("name", ["a" * 256, "é" * 128])  # 256 bytes: one more than NAME_MAX on Linux file systems
def test_pack_init_refuses_a_folder_name_too_long_for_the_file_system(tmp_path, capsys, name):
    assert main(["pack", "init", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the folder name '") and err.count("\n") == 1  # one line
    assert "is 256 bytes long, more than the file system takes in one name (255 bytes, its NAME_MAX)" in err
    assert name[:40].encode("ascii", "backslashreplace").decode() in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_pack_init_never_writes_through_a_symlink_even_with_force(tmp_path, capsys):
    pack_dir = tmp_path / "pack"
    pack_dir.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for name in ("config.json", "requirements.txt", "__main__.py", "PulumiPolicy.yaml"):
        (outside / name).write_text("precious\n")
        (pack_dir / name).symlink_to(outside / name)
    (pack_dir / "dangling.json").symlink_to(tmp_path / "nothing")
    assert main(["pack", "init", str(pack_dir)]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert main(["pack", "init", str(pack_dir), "--force"]) == 0
    for name in ("config.json", "requirements.txt", "__main__.py", "PulumiPolicy.yaml"):
        assert (outside / name).read_text() == "precious\n", name  # the files the links named are untouched
        assert not (pack_dir / name).is_symlink() and (pack_dir / name).read_text() != "precious\n", name
    assert json.loads((pack_dir / "config.json").read_text())["ami-id-format"]["enforcementLevel"] == "mandatory"
    assert not (tmp_path / "nothing").exists()
    assert sorted(p.name for p in pack_dir.iterdir() if p.name.startswith(".")) == []  # no temporary file left


@pytest.mark.parametrize(
    "requirement, why",
    [
        ("--extra-index-url https://evil.example/simple", "is a pip option, not a requirement"),
        ("-e .", "is a pip option, not a requirement"),
        ("mixed-os-racks==1.0\n--extra-index-url http://example.com/simple", "must be one requirements.txt line"),
        ("mixed-os-racks==1.0\rrequests", "must be one requirements.txt line"),
        ("", "must be one requirements.txt line"),
        ("   ", "must be one requirements.txt line"),
        ("requests", "installs requests, not mixed-os-racks"),
        ("mixed-os-rack @ git+https://example.com/org/repo@v1", "installs mixed-os-rack, not mixed-os-racks"),
        ("mixed-os-racks requests", "is not a requirement"),
        ("mixed-os-racks==0.1.0 --hash=sha256:00", "is not a requirement"),
        ("mixed-os-racks==0.1.0 # pinned", "is not a requirement"),
        ("git+https://example.com/org/mixed-os-racks@v1", "is not a requirement"),
    ],
)
def test_pack_init_writes_only_a_requirement_that_installs_this_package(tmp_path, capsys, requirement, why):
    assert main(["pack", "init", str(tmp_path / "pack"), "--requirement", requirement]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --requirement ") and why in err, err
    assert "it must install mixed-os-racks: 'mixed-os-racks==1.2.3'" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "pack").exists()


@pytest.mark.parametrize(
    "requirement",
    [
        "mixed-os-racks==0.1.0",
        "Mixed_OS.Racks>=0.1,<0.2",
        "mixed-os-racks[offline]~=0.1",
        "mixed-os-racks @ git+https://example.com/org/mixed-os-racks@v0.1.0",
        "mixed-os-racks@ https://example.com/mixed_os_racks-0.1.0-py3-none-any.whl",
        'mixed-os-racks==0.1.0; python_version >= "3.11"',
    ],
)
def test_pack_init_writes_a_requirement_of_this_package_as_given(tmp_path, capsys, requirement):
    assert main(["pack", "init", str(tmp_path / "pack"), "--requirement", f" {requirement} "]) == 0
    assert (tmp_path / "pack" / "requirements.txt").read_text().splitlines()[2] == requirement
    assert f"requirements.txt installs {requirement}: as given with --requirement" in capsys.readouterr().out


REQUIREMENT_TEXT = st.one_of(
    st.text(max_size=80),
    st.builds(
        lambda name, rest: name + rest,
        st.sampled_from(["mixed-os-racks", "Mixed_OS.Racks", "mixed-os-rack", "requests", "-r ", "--index-url "]),
        st.text(alphabet=st.sampled_from(list("=<>~!@ ,.[];#\n\r\t-+:/0123456789abcdefgh\"'")), max_size=40),
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=REQUIREMENT_TEXT)
@example(text=" mixed-os-racks>=0.1,<0.2 ").via("accepted")
@example(text="mixed-os-racks==1\n-i http://x").via("two lines")
def test_any_requirement_text_is_written_only_as_one_line_that_installs_this_package(tmp_path, capsys, text):
    from packaging.requirements import Requirement

    pack_dir = tmp_path / f"pack-{abs(hash(text))}"
    code = main(["pack", "init", str(pack_dir), "--requirement", text])
    out, err = capsys.readouterr()
    if code == 2:
        assert err.startswith("error: --requirement ") and len(err.splitlines()) == 1 and not pack_dir.exists()
        return
    assert code == 0, err
    line = (pack_dir / "requirements.txt").read_text().splitlines()[2]
    assert not line.startswith("-") and line.isprintable()
    assert re.sub(r"[-_.]+", "-", Requirement(line).name).lower() == "mixed-os-racks"


def test_pack_init_takes_the_path_of_this_package_and_refuses_another(tmp_path, capsys):
    assert main(["pack", "init", str(tmp_path / "pack"), "--requirement", str(REPO)]) == 0
    assert (tmp_path / "pack" / "requirements.txt").read_text().splitlines()[2] == f"mixed-os-racks @ {REPO.as_uri()}"
    assert "a path on this machine, which CI and other machines cannot install" in capsys.readouterr().out
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "evil"\n')
    assert main(["pack", "init", str(tmp_path / "pack2"), "--requirement", str(other)]) == 2
    assert f"{other} is not this package" in capsys.readouterr().err and not (tmp_path / "pack2").exists()


def _installed_as(record: Optional[dict[str, Any]]) -> Any:
    """This package's distribution as pip would have recorded it (PEP 610 ``direct_url.json``, or none)."""
    fake = mock.Mock()
    fake.read_text.side_effect = lambda name: {
        "INSTALLER": "pip\n",
        "direct_url.json": record and json.dumps(record),
    }.get(name)
    return mock.patch("importlib.metadata.distributions", return_value=[fake])


COMMIT = "3f1c2e4d5b6a79808f9e0d1c2b3a495867768594"


@pytest.mark.parametrize(
    "record, line, said",
    [
        (None, f"mixed-os-racks=={mixed_os_racks.__version__}", "from a package index (pip recorded no URL for it)"),
        (
            {
                "url": "https://git.example.com/platform/mixed-os-racks.git",
                "vcs_info": {"vcs": "git", "requested_revision": "v0.1.0", "commit_id": COMMIT},
            },
            f"mixed-os-racks @ git+https://git.example.com/platform/mixed-os-racks.git@{COMMIT}",
            f"the git repository https://git.example.com/platform/mixed-os-racks.git at commit {COMMIT} (v0.1.0)",
        ),
        (
            {
                "url": "ssh://git@git.example.com/platform/monorepo.git",
                "subdirectory": "packages/racks",
                "vcs_info": {"vcs": "git", "commit_id": COMMIT},
            },
            f"mixed-os-racks @ git+ssh://git@git.example.com/platform/monorepo.git@{COMMIT}#subdirectory=packages/racks",
            "at commit",
        ),
        (
            {
                "url": "https://files.example.com/mixed_os_racks-0.1.0-py3-none-any.whl",
                "archive_info": {"hashes": {"sha256": "ab" * 32}},
            },
            f"mixed-os-racks @ https://files.example.com/mixed_os_racks-0.1.0-py3-none-any.whl#sha256={'ab' * 32}",
            "the archive",
        ),
        (
            {"url": "file:///home/me/mixed-os-racks", "dir_info": {"editable": True}},
            "mixed-os-racks @ file:///home/me/mixed-os-racks",
            "a path on this machine",
        ),
        (
            {"url": "https://evil.example/x\n--extra-index-url https://evil.example/simple", "archive_info": {}},
            f"mixed-os-racks=={mixed_os_racks.__version__}",
            "is not a requirement line: must be one requirements.txt line",
        ),
    ],
)
def test_pack_init_writes_the_requirement_pip_recorded_for_this_install(tmp_path, capsys, record, line, said):
    with _installed_as(record):
        assert main(["pack", "init", str(tmp_path / "pack")]) == 0
    assert (tmp_path / "pack" / "requirements.txt").read_text().splitlines()[2:] == [line, "pulumi-policy>=1.13,<2"]
    out = capsys.readouterr().out
    assert f"requirements.txt installs {line}: " in out and said in out, out


def test_pack_init_prints_commands_a_shell_runs_whatever_the_folder_is_called(tmp_path, capsys):
    for name in ("policy pack", "it's here", "two\nlines", "tab\there", "$(touch pwned)", "ünïcode\u2028sep"):
        pack_dir = tmp_path / name
        assert main(["pack", "init", str(pack_dir)]) == 0
        out = capsys.readouterr().out
        (next_line,) = [line for line in out.splitlines() if line.startswith("next: cd ")]
        word = next_line.removeprefix("next: cd ").split(" && pulumi install", 1)[0]
        # what bash makes of the printed word is the folder's own name
        echoed = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, cwd=tmp_path)
        assert echoed.stdout.decode() == str(pack_dir), (name, word)
        assert f"then: pulumi preview --policy-pack {word} --policy-pack-config " in out
    assert not (tmp_path / "pwned").exists()


def test_the_written_pack_runs_under_the_offline_preview(consumer, tmp_path):
    pack_dir = tmp_path / "policy-pack"
    assert command("pack", "init", str(pack_dir), cwd=consumer).returncode == 0
    small_venv(pack_dir / "venv")
    run = command(
        "preview",
        "--stack",
        "dev",
        "--amis",
        "amis.yaml",
        "--policy-pack",
        str(pack_dir),
        "--policy-pack-config",
        str(pack_dir / "config.json"),
        cwd=consumer,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip().splitlines()[-2:] == [
        "Policy packs (--policy-pack):",
        f"    mixed-os-racks ({pack_dir}): passed",
    ]


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
    run = subprocess.run(
        shlex.split(line), cwd=consumer, env=environment(), capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, (line, run.stderr)
    assert "rack:index:KarpenterPool" in run.stdout and "kubernetes:apps/v1:Deployment" in run.stdout
    tail = run.stdout.rstrip().splitlines()[-2:]
    assert tail[0] == (
        f"Policy packs (no policies/ at or above {consumer.resolve()}: ran the pack bundled with "
        f"mixed-os-racks {mixed_os_racks.__version__}):"
    )
    assert tail[1] == f"    mixed-os-racks ({Path(mixed_os_racks.__file__).parent / 'pack' / 'bundled'}): passed"
    assert "virtualenv" not in run.stderr  # the bundled pack runs with this interpreter: nothing to create
    assert json.loads((consumer / "preview.json").read_text())["violations"] == []
