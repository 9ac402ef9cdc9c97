"""The package's layers, read from its source: the upstream facts (``mixed_os_racks.facts``) sit below everything
that reads them, the syntax the specs and the pack share imports no policy code (no circle syntax <-> pack), and
the command line (``mixed_os_racks.cli``) sits above everything but the process's entry, its commands above what
they share.

Every import counts, at module level or inside a function, as Python would run it."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from conftest import REPO

PACKAGE = "mixed_os_racks"
SOURCE = REPO / "components"
LEAVES = {f"{PACKAGE}.clock"}
"""Modules of the package that import none of it: what ``facts`` may lean on."""


def _modules() -> dict[str, Path]:
    found = {}
    for path in SOURCE.rglob("*.py"):
        if "bundled" in path.parts:  # the bundled pack's entry: a script, not a module of the package
            continue
        parts = [PACKAGE, *path.relative_to(SOURCE).with_suffix("").parts]
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


@functools.cache
def _imports(name: str) -> frozenset[str]:
    """The package's modules ``name`` imports (a package's ``from X import y`` counts as module ``X.y`` if it is
    one)."""
    path = MODULES[name]
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join(base + (node.module.split(".") if node.module else []))
            out.update(f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return frozenset(m for m in out if m == PACKAGE or m.startswith(PACKAGE + "."))


def _reach(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for dep in _imports(todo.pop()) - seen:
            seen.add(dep)
            if dep in MODULES:
                todo.append(dep)
    return seen


def test_the_facts_import_only_the_standard_library_each_other_and_leaf_modules():
    facts = [m for m in MODULES if m == f"{PACKAGE}.facts" or m.startswith(f"{PACKAGE}.facts.")]
    assert {f"{PACKAGE}.facts.upstream", f"{PACKAGE}.facts.instances", f"{PACKAGE}.facts.pricegen"} <= set(facts)
    above = {
        (m, dep) for m in facts for dep in _imports(m) if not (dep.startswith(f"{PACKAGE}.facts") or dep in LEAVES)
    }
    assert above == set()
    assert all(_imports(leaf) == set() for leaf in LEAVES)


def test_the_syntax_reaches_no_policy_code():
    reached = _reach(f"{PACKAGE}.syntax")
    assert f"{PACKAGE}.facts.instances" in reached  # what it reads the instance names against
    assert sorted(m for m in reached if m.startswith(f"{PACKAGE}.pack")) == []


def test_the_pack_reads_the_facts_from_below():
    assert f"{PACKAGE}.facts.upstream" in _imports(f"{PACKAGE}.pack.bootfacts")
    assert not any(m.startswith(f"{PACKAGE}.pack") for m in _reach(f"{PACKAGE}.facts.tables"))


def test_the_rules_read_only_the_os_family_records_of_the_package():
    assert _reach(f"{PACKAGE}.facts.osfamily") == set()
    assert _reach(f"{PACKAGE}.pack.rules") == {f"{PACKAGE}.facts.osfamily"}


CLI = f"{PACKAGE}.cli"
ENTRY = f"{PACKAGE}.__main__"
"""The process's entry (the ``mixed-os-racks`` script, ``python -m mixed_os_racks``): the one module above the
command line."""


def _in_cli(module: str) -> bool:
    return module == CLI or module.startswith(CLI + ".")


def test_no_module_outside_the_command_line_imports_it():
    assert ENTRY in MODULES and _imports(ENTRY) == {CLI}
    below = {(m, dep) for m in MODULES if not _in_cli(m) and m != ENTRY for dep in _imports(m) if _in_cli(dep)}
    assert below == set()


def test_the_command_line_and_the_domain_it_runs_are_in_no_circle():
    """No module reaches itself: before the command line was a package, ``promote`` imported the CLI's helpers
    and the CLI imported ``promote`` (``fleet`` too)."""
    for name in [m for m in MODULES if _in_cli(m)] + [f"{PACKAGE}.promote", f"{PACKAGE}.fleet"]:
        assert name not in _reach(name), name


def test_each_command_is_a_module_above_what_the_commands_share():
    """Every subcommand ``--help`` lists is a module of ``cli/`` named as it (``commands.COMMANDS``); no command
    imports another, and the modules they share (``common``, ``packs``, ...) import no command."""
    import argparse

    from mixed_os_racks.cli.commands import COMMANDS, build_parser

    listed = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert list(COMMANDS) == list(listed)
    commands = {getattr(module, "__name__") for module in COMMANDS.values()}
    assert commands == {f"{CLI}.{name}" for name in COMMANDS}
    shared = {m for m in MODULES if m.startswith(CLI + ".")} - commands - {f"{CLI}.commands"}
    assert {f"{CLI}.common", f"{CLI}.packs", f"{CLI}.stackrun"} <= shared
    assert {(m, dep) for m in commands | shared for dep in _imports(m) & commands if dep != m} == set()
    assert {(m, dep) for m in shared for dep in _imports(m) if dep in {CLI, f"{CLI}.commands"}} == set()
