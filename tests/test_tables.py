"""Every upstream data table has its source, commit and date in one place (``facts/tables.py``); a preview of the
rack warns about a table older than ``MAX_AGE_DAYS``; ``make tables`` regenerates those generated from files."""

from __future__ import annotations

import subprocess
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO, rack_config
from mixed_os_racks import clock
from mixed_os_racks.cli import main
from mixed_os_racks.facts import instances, matrixgen, pricelist, sizegen, tables, upstream


def test_every_table_says_where_it_came_from_and_when():
    names = [t.name for t in tables.TABLES]
    assert names == [
        "EC2 on-demand price list",
        "instance family facts",
        "instance sizes",
        "NVIDIA driver table",
        "Cluster Autoscaler image tags",
        "EKS Kubernetes release calendar",
        "Karpenter releases and compatibility matrix",
        "OS family records",
    ]
    for table in tables.TABLES:
        assert table.source and table.refresh and table.where, table.name
        date.fromisoformat(table.as_of)
    price = tables.TABLES[0]
    assert (price.commit, price.as_of) == (pricelist.COMMIT[:8], pricelist.COMMIT_DATE)  # read from the table itself
    assert price.refresh == tables.REGENERATE
    sizes = tables.TABLES[2]
    assert (sizes.commit, sizes.as_of, sizes.refresh) == (
        instances.SIZES_COMMIT[:8],
        instances.SIZES_DATE,
        tables.REGENERATE,
    )


def test_a_table_is_stale_one_day_past_the_age():
    price = tables.TABLES[0]
    edge = date.fromisoformat(price.as_of) + timedelta(days=tables.MAX_AGE_DAYS)
    assert not any(line.startswith("the EC2 on-demand price list") for line in tables.stale(edge.isoformat()))
    (line,) = [said for said in tables.stale((edge + timedelta(days=1)).isoformat()) if "price list" in said]
    assert line == (
        f"the EC2 on-demand price list table is 121 days old (as of {price.as_of}: aws/karpenter-provider-aws "
        f"pkg/providers/pricing at {price.commit}), older than 120 days: refresh it ({tables.REGENERATE})"
    )
    assert tables.stale(edge.isoformat(), max_age_days=10_000) == []


def preview(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    stack = tmp_path / "Pulumi.t.yaml"
    stack.write_text(yaml.safe_dump({"config": rack_config()}))
    assert main(["preview", "--config", str(stack), "--no-policy", "--cwd", str(REPO)]) == 0
    return capsys.readouterr().err


def test_the_preview_says_which_tables_are_due_and_only_those(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(clock.ENV, "2027-01-01")
    due = tables.stale("2027-01-01")
    assert [line.split(" table is")[0] for line in due] == [
        "the EC2 on-demand price list",
        "the instance sizes",
        "the Cluster Autoscaler image tags",
    ]
    err = preview(tmp_path, capsys)
    assert [line for line in err.splitlines() if "days old" in line] == [
        f"warning: rack 'rack': {line}" for line in due
    ]
    monkeypatch.setenv(clock.ENV, "2026-12-04")  # every table younger than 120 days then
    assert tables.stale("2026-12-04") == [] and "days old" not in preview(tmp_path, capsys)


def test_make_tables_runs_the_generators_of_the_tables_made_from_files():
    found = subprocess.run(
        ["make", "-n", "tables", "KARPENTER=/src/kp", "COMMIT=v1.15.0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "-m mixed_os_racks.facts.pricegen --repo /src/kp --commit v1.15.0" in found
    assert "-m mixed_os_racks.facts.sizegen --repo /src/kp --commit v1.15.0" in found
    assert "-m mixed_os_racks.facts.matrixgen --repo /src/kp --commit v1.15.0" in found


# ---- the instance sizes, generated from Karpenter's instance-type reference -----------------------------------

REFERENCE = Path(__file__).parent / "fixtures" / "instance-types" / "instance-types.md"
MODULE = REPO / "components" / "facts" / "instances.py"


def _table(module_text: str) -> tuple[dict[str, str], str]:
    block = module_text[module_text.index(sizegen.BEGIN) : module_text.index(sizegen.END)]
    found: dict[str, Any] = {}
    exec(compile(block, "block", "exec"), found)  # the generated block is plain literals
    return found["_SIZES"], found["SIZES_COMMIT"]


def test_the_committed_sizes_are_what_the_generator_reads_in_the_upstream_reference():
    parsed = sizegen.parse(REFERENCE.read_text())
    assert sorted(parsed) == ["g5", "m7g", "p5"]
    for family, entries in parsed.items():
        assert entries == instances._SIZES[family].split(), family
    assert parsed["p5"][-1] == "48xlarge:192:2097152:8:100"  # 8 GPUs, pods from the ENI limit


def test_regenerating_changes_only_what_upstream_changed_and_keeps_what_it_dropped():
    text = MODULE.read_text()
    same = sizegen.regenerate(text, REFERENCE.read_text(), "0123abcd", "2027-01-01")
    table, commit = _table(same)
    assert table == instances._SIZES and commit == "0123abcd"
    before, p5 = REFERENCE.read_text().split("### `p5.48xlarge`")
    changed = before + "### `p5.48xlarge`" + p5.replace("|nvidia.com/gpu|8|", "|nvidia.com/gpu|16|")
    table, _ = _table(sizegen.regenerate(text, changed, "0123abcd", "2027-01-01"))
    assert table["p5"].split()[-1] == "48xlarge:192:2097152:16:100"
    assert {f: v for f, v in table.items() if f != "p5"} == {f: v for f, v in instances._SIZES.items() if f != "p5"}
    assert "p3" in table  # not in the reference: kept, as SIZES_KEPT says
    assert "SIZES_KEPT = (" in same


def test_the_generator_reads_a_clone_at_a_commit(tmp_path):
    repo = tmp_path / "karpenter-provider-aws"
    path = repo / sizegen.PATH
    path.parent.mkdir(parents=True)
    path.write_text(REFERENCE.read_text())
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "r"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    out = tmp_path / "instances.py"
    out.write_text(MODULE.read_text())
    assert sizegen.main(["--repo", str(repo), "--output", str(out)]) == 0
    table, commit = _table(out.read_text())
    assert table == instances._SIZES and len(commit) == 40


# ---- Karpenter's compatibility matrices, generated from its docs ------------------------------------------------

PAGES = Path(__file__).parent / "fixtures" / "compatibility"
UPSTREAM_MODULE = REPO / "components" / "facts" / "upstream.py"


def _matrices(module_text: str) -> dict[str, Any]:
    block = module_text[module_text.index(matrixgen.BEGIN) : module_text.index(matrixgen.END)]
    found: dict[str, Any] = {"KarpenterMatrix": upstream.KarpenterMatrix}
    exec(compile(block, "block", "exec"), found)
    return found["KARPENTER_MATRICES"]


def test_the_committed_matrices_are_what_karpenters_pages_say():
    for line in upstream.KARPENTER_LINES:
        assert matrixgen.parse((PAGES / f"v{line}.md").read_text()) == upstream.KARPENTER_MATRICES[line].cells, line


def test_regenerating_the_matrices_keeps_their_reading_and_names_the_commit():
    pages = {line: (PAGES / f"v{line}.md").read_text() for line in upstream.KARPENTER_LINES}
    text = matrixgen.regenerate(UPSTREAM_MODULE.read_text(), pages, "0123abcd" * 5, "2027-01-01")
    matrices = _matrices(text)
    assert {line: m.cells for line, m in matrices.items()} == {
        line: m.cells for line, m in upstream.KARPENTER_MATRICES.items()
    }
    assert matrices["1.15"].source == (
        "karpenter-provider-aws website/content/en/v1.15/upgrading/compatibility.md, commit 0123abcd (2027-01-01)"
    )
    newer = pages["1.15"].replace("| 1.15.x |", "| \\>= 1.15 |")  # were 1.37 opened to every later release
    assert matrixgen.parse(newer)["1.37"] == ("1.15", False)


@pytest.mark.parametrize(
    "page, problem",
    [
        ("no table here", "no compatibility matrix"),
        ("| Kubernetes | 1.37 |\n| karpenter | 1.15.0 |\n", "a cell the rack cannot read ('1.15.0')"),
    ],
)
def test_a_page_the_generator_cannot_read_stops_it_with_the_reason(page, problem):
    with pytest.raises(SystemExit) as stopped:
        matrixgen.parse(page)
    assert problem in str(stopped.value)


def test_the_matrix_generator_reads_a_clone_at_a_commit(tmp_path):
    repo = tmp_path / "karpenter-provider-aws"
    for line in upstream.KARPENTER_LINES:
        path = repo / matrixgen.path_of(line)
        path.parent.mkdir(parents=True)
        path.write_text((PAGES / f"v{line}.md").read_text())
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "r"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    out = tmp_path / "upstream.py"
    out.write_text(UPSTREAM_MODULE.read_text())
    assert matrixgen.main(["--repo", str(repo), "--output", str(out)]) == 0
    matrices = _matrices(out.read_text())
    assert {line: m.cells for line, m in matrices.items()} == {
        line: m.cells for line, m in upstream.KARPENTER_MATRICES.items()
    }
