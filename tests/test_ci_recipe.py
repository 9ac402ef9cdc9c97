"""docs/ci.md as another team follows it: the consumer example as a repository of its own whose
``requirements.txt`` points at this repository by URL (a Git URL pinned to the release tag), both
jobs' install steps into fresh virtualenvs, the offline preview, ``pack init``, and the pack's
virtualenv installed from what ``pack init`` wrote.

"This repository" is a local one: the checkout's files (tracked, and new ones not ignored) committed
into a repository of their own and tagged ``v<version>``, as a release is. The one change made to the
consumer's files is that repository's URL in place of ``[project.urls] Source``. pip installs for
real: it clones the repository at the tag and builds the package (its build backend from PyPI). To
keep the suite fast, the packages the package depends on come from this environment: each fresh
virtualenv gets links to them in its site-packages (pip sees them installed, exactly as it sees them
after a first install), and nothing of this package (``mixed_os_racks``, its metadata, the editable
install's finder). The test skips, saying why, where it cannot run at all: no git, or no index to fetch
the build backend from.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

import mixed_os_racks
from conftest import REPO
from test_consumer import CONSUMER, recipe

VERSION = mixed_os_racks.__version__
SOURCE = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]["Source"]
OFFLINE_LINE = f"mixed-os-racks[offline] @ git+{SOURCE}@v{VERSION}"

NOT_LINKED = re.compile(
    r"(mixed_os_racks.*|__editable__.*|_?_?pycache__|pip|pip-.*|setuptools|setuptools-.*|"
    r"pkg_resources|_distutils_hack|.*\.pth)"
)
"""What a fresh virtualenv does not get from this environment: this package in any form, pip and the
build tools (pip brings its own build environment), and the ``.pth`` hooks of this environment."""

NO_INDEX = (
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "No matching distribution found for setuptools",
)


def _run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _git(*args: str, cwd: Path) -> str:
    done = _run(
        [
            "git",
            "-c",
            "user.name=release",
            "-c",
            "user.email=release@localhost",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "tag.gpgsign=false",
            *args,
        ],
        cwd,
    )
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.strip()


def released_repository(where: Path) -> tuple[Path, str]:
    """The checkout's files as a repository of their own, tagged ``v<version>``; and the tag's commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: pip installs a Git URL with it")
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], REPO)
    if listed.returncode != 0:
        pytest.skip(f"{REPO} is not a git checkout: {listed.stderr.strip()}")
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO / name
        if source.is_file():  # a file deleted in the work tree but still in the index is left out
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / name)
    _git("init", "--quiet", cwd=where)
    _git("add", "--all", cwd=where)
    _git("commit", "--quiet", "--no-verify", "-m", f"mixed-os-racks {VERSION}", cwd=where)
    _git("tag", f"v{VERSION}", cwd=where)
    return where, _git("rev-parse", f"v{VERSION}^{{commit}}", cwd=where)


def fresh_virtualenv(where: Path) -> Path:
    """A new virtualenv whose site-packages links this environment's third-party packages (see above)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next(where.glob("lib/python*/site-packages"))
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not NOT_LINKED.fullmatch(entry.name):
            (site / entry.name).symlink_to(entry)
    return where / "bin" / "python"


def pip_install_requirements(python: Path, folder: Path) -> None:
    """``pip install -r requirements.txt`` in ``folder``, into ``python``'s environment."""
    done = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
            "requirements.txt",
        ],
        folder,
        timeout=600,
    )
    if done.returncode != 0 and any(sign in done.stdout + done.stderr for sign in NO_INDEX):
        pytest.skip(f"no package index to fetch the build backend from: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stdout + done.stderr


def shell(venv: Path) -> dict[str, str]:
    """A CI runner's shell after the install step: the virtualenv's scripts first on the PATH."""
    return {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}


def test_the_consumer_and_the_docs_install_from_the_repository_at_the_release_tag():
    requirement = [
        line for line in (CONSUMER / "requirements.txt").read_text().splitlines() if not line.startswith("#")
    ]
    assert requirement[0] == OFFLINE_LINE and all(not line.startswith("mixed-os-racks") for line in requirement[1:])
    ci = (REPO / "docs" / "ci.md").read_text()
    assert OFFLINE_LINE in ci
    # the line a reader copies installs what the repository has (its default branch: no release is tagged yet),
    # and the README says how to pin a commit, and the tag once it exists
    readme = " ".join((REPO / "README.md").read_text().split())
    assert f'pip install "mixed-os-racks[offline] @ git+{SOURCE}@main"' in readme and "<you>" not in readme
    assert f"git ls-remote {SOURCE} main" in readme and f"@v{VERSION}" in readme


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> tuple[Path, str, str, Path]:
    """The consumer, another repository whose requirements point at the released repository by URL, after
    the offline job's install step: (its folder, the repository's URL, the tag's commit, its virtualenv)."""
    where = tmp_path_factory.mktemp("ci")
    upstream, commit = released_repository(where / "mixed-os-racks")
    consumer = Path(
        shutil.copytree(CONSUMER, where / "ml-platform", ignore=shutil.ignore_patterns("venv", "__pycache__"))
    )
    # file://localhost/<path>, which git reads as the local repository: pip before 24 (its packaging 21)
    # refuses a git+file:/// URL, which has no host
    url = f"file://localhost{upstream}"
    requirements = consumer / "requirements.txt"
    requirements.write_text(requirements.read_text().replace(SOURCE, url))
    steps = recipe()["jobs"]["offline-preview"]["steps"]
    assert [step["run"] for step in steps if "pip install" in step.get("run", "")] == [
        "pip install -r requirements.txt"
    ]
    venv = consumer / "venv"
    pip_install_requirements(fresh_virtualenv(venv), consumer)
    return consumer, url, commit, venv


@pytest.mark.slow
def test_ci_recipe_from_a_local_clone(released):
    consumer, url, commit, venv = released
    installed = next(venv.glob("lib/python*/site-packages/mixed_os_racks"))
    assert not installed.is_symlink() and (installed / "pack" / "bundled" / "PulumiPolicy.yaml").is_file()

    # the offline job's preview line of docs/ci.md, after its install step
    steps = recipe()["jobs"]["offline-preview"]["steps"]
    (line,) = [step["run"] for step in steps if step.get("run", "").startswith("mixed-os-racks ")]
    run = _run(shlex.split(line), consumer, shell(venv))
    assert run.returncode == 0, (line, run.stderr)
    assert "rack:index:KarpenterPool" in run.stdout and "kubernetes:apps/v1:Deployment" in run.stdout
    assert run.stdout.rstrip().splitlines()[-1] == f"    mixed-os-racks ({installed / 'pack' / 'bundled'}): passed"

    # its unit tests, with the package's mocks
    (line,) = [step["run"] for step in steps if "pytest" in step.get("run", "")]
    tested = _run(shlex.split(line), consumer, {**shell(venv), "PYTHONDONTWRITEBYTECODE": "1"})
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert tested.stdout.rstrip().splitlines()[-1].startswith("3 passed")

    # the pack, written once where the program's packages are installed: it installs the package as pip did
    written = _run(["mixed-os-racks", "pack", "init", "policy-pack"], consumer, shell(venv))
    assert written.returncode == 0, written.stderr
    pack = consumer / "policy-pack"
    line_written = f"mixed-os-racks @ git+{url}@{commit}"
    assert (pack / "requirements.txt").read_text().splitlines()[2:] == [line_written, "pulumi-policy>=1.13,<2"]
    assert (
        f"requirements.txt installs {line_written}: the git repository {url} at commit {commit} (v{VERSION})"
        in written.stdout
    )

    # the cloud job's `cd policy-pack && pulumi install`: the pack's virtualenv, from what pack init wrote
    pip_install_requirements(fresh_virtualenv(pack / "venv"), pack)
    assert next((pack / "venv").glob("lib/python*/site-packages/mixed_os_racks")).is_dir()
    run = _run(
        [
            "mixed-os-racks",
            "preview",
            "--stack",
            "dev",
            "--amis",
            "amis.yaml",
            "--policy-pack",
            "policy-pack",
            "--policy-pack-config",
            "policy-pack/config.json",
        ],
        consumer,
        shell(venv),
    )
    assert run.returncode == 0, run.stderr
    assert "virtualenv" not in run.stderr  # the pack ran in its own, as `pulumi preview --policy-pack` runs it
    assert run.stdout.rstrip().splitlines()[-2:] == [
        "Policy packs (--policy-pack):",
        "    mixed-os-racks (policy-pack): passed",
    ]


@pytest.mark.slow
def test_the_consumer_program_and_its_tests_type_check_against_the_installed_package(released):
    """pyright, as a team runs it, over the consumer's program (a Deployment given place()'s affinity and
    tolerations as they are) and its unit tests, with the package installed as pip installed it."""
    consumer, _, _, venv = released
    pyright = Path(sys.executable).parent / "pyright"
    if not pyright.exists():
        pytest.skip("pyright is not installed here (requirements-dev.txt installs it)")
    checked = _run(
        [str(pyright), "--pythonpath", str(venv / "bin" / "python"), "__main__.py", "test_program.py"], consumer
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 errors" in checked.stdout
