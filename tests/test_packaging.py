"""``pip install .`` gives a working package: one distinct import name, every import declared.

The wheel is built as pip builds it. Its modules' imports are checked against the wheel's own
``Requires-Dist`` (a module the package imports must come from the standard library, the package
itself, or a declared distribution), and the installed wheel, on its own, runs the offline preview
of the prod example from outside the repository.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # built from a copy: a build writes build/ and egg-info next to its sources, never into the checkout
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "components", source / "components", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("mixed_os_racks-*.whl")
    return built


@pytest.mark.slow
def test_one_distinct_import_name(wheel):
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    assert tops == {"mixed_os_racks", next(t for t in tops if t.endswith(".dist-info"))}


def _imports(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.slow
def test_everything_the_package_imports_is_declared(wheel):
    with zipfile.ZipFile(wheel) as archive:
        sources = {n: archive.read(n).decode() for n in archive.namelist() if n.endswith(".py")}
        metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    declared = {
        re.split(r"[ ;<>=!~\[]", line.removeprefix("Requires-Dist: "), maxsplit=1)[0].lower().replace("_", "-")
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist: ")
    }
    providers = importlib.metadata.packages_distributions()
    undeclared = {}
    for name, source in sources.items():
        for module in _imports(source):
            if module in sys.stdlib_module_names or module == "mixed_os_racks" or module == "__future__":
                continue
            dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
            if not dists & declared:
                undeclared.setdefault(module, []).append(name)
    assert undeclared == {}


@pytest.mark.slow
def test_the_installed_wheel_runs_the_prod_preview_from_elsewhere(wheel, tmp_path):
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:  # a pure-Python wheel installs by unpacking it (PEP 427)
        assert all(not n.endswith((".so", ".pyd")) for n in archive.namelist())
        archive.extractall(target)
    # -S: no site-packages of this virtualenv (where the package is installed editable); its
    # dependencies are on the path, the package only from the wheel
    env = {"PYTHONPATH": f"{target}:{sysconfig.get_paths()['purelib']}", "PATH": "/usr/bin:/bin"}
    where = subprocess.run(
        [sys.executable, "-S", "-c", "import mixed_os_racks; print(mixed_os_racks.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(target))
    run = subprocess.run(
        [
            sys.executable,
            "-S",
            "-m",
            "mixed_os_racks.offline",
            "preview",
            "--cwd",
            str(REPO),
            "--stack",
            "prod",
            "--no-policy",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "eks:index:Cluster" in run.stdout and " to create" in run.stdout


@pytest.mark.slow
def test_the_wheel_ships_its_types_its_pack_and_the_command(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        metadata = archive.read(f"{info}/METADATA").decode()
    assert {
        "mixed_os_racks/py.typed",
        "mixed_os_racks/pack/bundled/PulumiPolicy.yaml",
        "mixed_os_racks/pack/bundled/__main__.py",
        "mixed_os_racks/offline/amis.yaml",
    } <= names
    assert "mixed-os-racks = mixed_os_racks.__main__:entry" in entry_points
    requires = [
        line.removeprefix("Requires-Dist: ")
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist: pulumi")
    ]
    assert "pulumi<4,>=3.231.0" in requires
    assert any(line.startswith("pulumi<3.273,>=3.272") and 'extra == "offline"' in line for line in requires)


def test_the_namespace_is_the_public_api():
    # what dir() and `from mixed_os_racks import *` show: the exported names and the version, none of the
    # module's own machinery (typing, importlib, its lazy-import tables)
    import mixed_os_racks

    public = set(mixed_os_racks.__all__)
    assert set(dir(mixed_os_racks)) == public | {"__version__"}
    assert {"place", "Rack", "ClusterRef", "ConfigError", "PoolSpec"} <= public
    for machinery in ("Any", "TYPE_CHECKING", "annotations", "importlib"):
        assert machinery not in dir(mixed_os_racks) and not hasattr(mixed_os_racks, machinery), machinery
    assert all(hasattr(mixed_os_racks, name) for name in public)


def test_type_checkers_see_every_export_re_exported():
    # The names are imported lazily: type checkers read them from the TYPE_CHECKING block. A program checked
    # with `mypy --strict` (no implicit re-export: mypy's --no-implicit-reexport, part of --strict) gets
    # "Module does not explicitly export" for a name imported there without `as` itself, so each is written
    # `from .rack import Rack as Rack`, from the module the package really takes it from.
    import mixed_os_racks

    tree = ast.parse((REPO / "components" / "__init__.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    seen: dict[str, str] = {}
    for statement in block.body:
        assert isinstance(statement, ast.ImportFrom) and statement.level == 1 and statement.module
        for alias in statement.names:
            assert alias.asname == alias.name, f"{alias.name}: write `{alias.name} as {alias.name}`"
            seen[alias.name] = statement.module
    assert sorted(seen) == mixed_os_racks.__all__
    for name, module in seen.items():
        assert getattr(mixed_os_racks, name) is getattr(importlib.import_module(f"mixed_os_racks.{module}"), name), name
