"""The README and docs/ are part of the product: their generated tables are current, and every Python
snippet in them runs, as written: a program under the offline engine, a pack's ``__main__.py``
(marked ``<!-- snippet: pack -->``) as a pack the analyzer protocol drives, a script (marked
``<!-- snippet: script -->``) in a copy of the rack program's directory (so the documented API cannot rot)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib

import pulumi_aws as aws
import pytest

from conftest import REPO, stack_config
from mixed_os_racks import docs
from mixed_os_racks.offline import run_program
from mixed_os_racks.offline.packprocess import PolicyPackProcess, pack_env
from policy_helpers import judge, messages

FILES = {
    path.relative_to(REPO).as_posix(): path.read_text(encoding="utf-8")
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
}
SNIPPET_RE = re.compile(r"^(?:<!-- snippet: (?P<kind>[a-z]+) -->\n)?```python\n(?P<code>.*?)^```", re.M | re.S)
SNIPPETS = [
    (name, match.group("kind") or "program", match.group("code"))
    for name, text in FILES.items()
    for match in SNIPPET_RE.finditer(text)
]
PROGRAMS = [(name, code) for name, kind, code in SNIPPETS if kind == "program"]
PACKS = [(name, code) for name, kind, code in SNIPPETS if kind == "pack"]
SCRIPTS = [(name, code) for name, kind, code in SNIPPETS if kind == "script"]


def test_the_generated_tables_are_current():
    for name, text in FILES.items():
        assert docs.render(text) == text, (
            f"{name}: run `make readme` (python -m mixed_os_racks.docs README.md docs/*.md)"
        )


def test_every_table_is_generated_from_its_model():
    blocks = [block for text in FILES.values() for block in re.findall(r"<!-- BEGIN generated: ([a-z-]+) -->", text)]
    assert sorted(blocks) == sorted(docs.TABLES)
    for name in docs.TABLES:
        assert "| `" in docs.TABLES[name]()


def test_the_config_tables_name_the_python_field_each_key_sets():
    rack = docs.TABLES["rack-params"]()
    assert "| `k8s_version` | `ClusterSpec.version` |" in rack
    assert "| `karpenter_node_os` | `PoolSpec.os` |" in rack
    assert "| `type` | `instance_type` |" in docs.TABLES["node-group-fields"]()


def test_a_stale_table_is_caught(tmp_path):
    config = FILES["docs/config.md"]
    stale = tmp_path / "config.md"
    stale.write_text(config.replace("| `cluster_name` |", "| `cluster_nam` |"), encoding="utf-8")
    fresh = tmp_path / "README.md"
    fresh.write_text(FILES["README.md"], encoding="utf-8")
    assert docs.main([str(fresh), str(stale), "--check"]) == 1
    assert docs.main([str(fresh), str(stale)]) == 0 and docs.main([str(fresh), str(stale), "--check"]) == 0
    assert stale.read_text(encoding="utf-8") == config


def test_the_readme_links_every_doc_and_every_doc_exists():
    readme = FILES["README.md"]
    linked = set(re.findall(r"\]\((docs/[a-z0-9-]+\.md)", readme))
    assert linked == {name for name in FILES if name.startswith("docs/")}
    assert (
        readme.index("make preview")
        < readme.index("## What you get")
        < readme.index("## Install")
        < readme.index("```python")
        < readme.index("## An AMI catalog")
        < readme.index("## Preview")
        < readme.index("## Contents")
    )


def test_every_python_block_of_the_docs_is_a_snippet_that_runs():
    # a ```python block the pattern missed (a typo in its marker, a stray space) would be shown and never run
    for name, text in FILES.items():
        blocks = text.count("```python\n")
        assert blocks == sum(1 for where, _, _ in SNIPPETS if where == name), name
    kinds = {(name, kind) for name, kind, _ in SNIPPETS}
    assert {("README.md", "program"), ("docs/components.md", "program"), ("docs/policies.md", "pack")} <= kinds


@pytest.mark.parametrize("where,snippet", PROGRAMS, ids=[f"{where}-{n}" for n, (where, _) in enumerate(PROGRAMS)])
def test_every_python_snippet_runs_offline(where, snippet):
    def program() -> None:
        exec(compile(snippet, where, "exec"), {"__name__": "__main__"})

    run = run_program(program, stack_config("prod"), stack="readme")
    assert [r for r in run.resources if r.type != "pulumi:pulumi:Stack"], "the snippet registers nothing"


@pytest.mark.parametrize("where,snippet", SCRIPTS, ids=[f"{where}-script-{n}" for n, (where, _) in enumerate(SCRIPTS)])
def test_every_script_snippet_runs_in_the_rack_programs_directory(tmp_path, monkeypatch, where, snippet):
    for path in [REPO / "Pulumi.yaml", REPO / "__main__.py", *REPO.glob("Pulumi.*.yaml")]:
        shutil.copy(path, tmp_path / path.name)
    monkeypatch.chdir(tmp_path)
    before = set(tmp_path.iterdir())
    exec(compile(snippet, where, "exec"), {"__name__": "__main__"})
    written = set(tmp_path.iterdir()) - before
    assert written, "the script writes nothing"
    for path in written:
        if path.suffix == ".json":
            assert json.loads(path.read_text())["version"] in (3, 4)


@pytest.mark.parametrize("where,snippet", PACKS, ids=[f"{where}-pack-{n}" for n, (where, _) in enumerate(PACKS)])
def test_every_pack_snippet_serves_a_pack(tmp_path, where, snippet):
    (tmp_path / "__main__.py").write_text(snippet, encoding="utf-8")
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime:\n  name: python\n", encoding="utf-8")
    with PolicyPackProcess(tmp_path, pack_env("readme", "dev")) as pack:
        names = {policy.name for policy in pack.info.policies}
        assert {"ami-id-format", "workloads-reach-their-lane", "node-groups-have-a-team"} <= names

        def untagged() -> None:
            aws.eks.NodeGroup(
                "ng",
                cluster_name="c",
                node_role_arn="arn:aws:iam::123456789012:role/n",
                subnet_ids=["subnet-0a1b2c3d4e5f60718"],
                instance_types=["m6i.large"],
                scaling_config={"min_size": 1, "max_size": 1, "desired_size": 1},
            )

        violations = judge(pack, untagged)
    assert messages(violations, "node-groups-have-a-team") == ["every node group carries a team tag"]
    assert {v["pack"] for v in violations} == {pack.info.name}


def _anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lowercase, punctuation other than '-' and '_' dropped, spaces
    as '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_between_the_docs_reaches_a_file_and_a_heading():
    # a cross-reference in words ("see the table above") goes stale when a section moves: the docs link
    # instead, and every link is checked here
    headings = {name: {_anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.M)} for name, text in FILES.items()}
    broken = []
    for name, text in FILES.items():
        base = (REPO / name).parent
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            path, _, anchor = target.partition("#")
            resolved = (base / path).resolve() if path else REPO / name
            if not resolved.exists():
                broken.append(f"{name}: {target} (no such file)")
            elif anchor:
                key = resolved.relative_to(REPO).as_posix()
                if anchor not in headings.get(key, set()):
                    broken.append(f"{name}: {target} (no such heading)")
    assert broken == []
    assert not re.search(r'see "[^"]+" above|the upgrade table above|"Use it for real"', FILES["docs/components.md"])


def test_make_test_runs_every_test_and_make_test_fast_leaves_out_the_slow_ones():
    """The README's two test commands: `make test` (and CI) select nothing out; `make test-fast` deselects the
    tests marked slow, a marker pytest knows (``--strict-markers`` refuses a misspelt one)."""

    def commands(target: str) -> list[str]:
        dry = subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True, check=True).stdout
        return [line for line in dry.splitlines() if " -m pytest " in line]

    (everything,) = commands("test")
    assert " -m " not in everything.split(" -m pytest ", 1)[1]
    (fast,) = commands("test-fast")
    assert fast.endswith(' -m "not slow"') and fast.split(' -m "not slow"')[0] == everything
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--strict-markers" in config["addopts"] and [m.split(":")[0] for m in config["markers"]].count("slow") == 1
    readme = FILES["README.md"]
    assert "make test-fast" in readme and "@pytest.mark.slow" in readme
