"""The README is part of the product: its generated tables are current, and every Python snippet in
it runs, as written, under the offline engine (so the documented API cannot rot)."""

from __future__ import annotations

import re

import pytest

from conftest import REPO, stack_config
from mixed_os_racks import docs
from mixed_os_racks.offline import run_program

README = (REPO / "README.md").read_text(encoding="utf-8")
SNIPPETS = re.findall(r"^```python\n(.*?)^```", README, re.M | re.S)


def test_the_generated_tables_are_current():
    assert docs.render(README) == README, "run `make readme` (python -m mixed_os_racks.docs README.md)"


def test_every_table_is_generated_from_its_model():
    blocks = re.findall(r"<!-- BEGIN generated: ([a-z-]+) -->", README)
    assert sorted(blocks) == sorted(docs.TABLES)
    for name in docs.TABLES:
        assert "| `" in docs.TABLES[name]()


def test_a_stale_table_is_caught(tmp_path):
    stale = tmp_path / "README.md"
    stale.write_text(README.replace("| `cluster_name` |", "| `cluster_nam` |"), encoding="utf-8")
    assert docs.main([str(stale), "--check"]) == 1
    assert docs.main([str(stale)]) == 0 and docs.main([str(stale), "--check"]) == 0


def test_the_readme_has_snippets():
    assert len(SNIPPETS) >= 5


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet-{n}" for n in range(len(SNIPPETS))])
def test_every_python_snippet_runs_offline(snippet):
    def program() -> None:
        exec(compile(snippet, "README.md", "exec"), {"__name__": "__main__"})

    run = run_program(program, stack_config("prod"), stack="readme")
    assert [r for r in run.resources if r.type != "pulumi:pulumi:Stack"], "the snippet registers nothing"
