"""The dated on-demand price table: Karpenter's own lists at a named commit, its generator, and regions it lacks."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mixed_os_racks.facts import pricegen, pricelist, prices

FIXTURES = Path(__file__).parent / "fixtures" / "pricing"
UPSTREAM = "pkg/providers/pricing"


def test_the_table_is_karpenters_list_at_its_commit():
    """Every price in the trimmed upstream files is the committed table's, to the digit."""
    found = 0
    for path in FIXTURES.glob("zz_generated.pricing_aws*.go"):
        if path.name.endswith("_cn.go"):
            continue
        for region, listed in pricegen.parse(path.read_text()).items():
            for itype, price in listed.items():
                assert prices.for_region(region).of(itype) == float(price), (region, itype)
                found += 1
    assert found > 80
    assert pricelist.COMMIT == "1d927085dd81a9df9301e613f371dac5b4d16bfe" and pricelist.COMMIT_DATE == "2026-08-21"
    assert pricelist.FILES[f"{UPSTREAM}/zz_generated.pricing_aws.go"] == "2026-07-20T13:44:30Z"


@pytest.mark.skipif(shutil.which("git") is None, reason="the generator reads a git clone")
def test_the_generator_writes_the_table_from_a_clone(tmp_path):
    """The generator, run over a clone holding the upstream files, writes a table of their prices, dated by the
    commit, with the yuan-priced China list left out; its text is importable Python."""
    repo = tmp_path / "karpenter-provider-aws"
    (repo / UPSTREAM).mkdir(parents=True)
    for path in FIXTURES.glob("*.go"):
        shutil.copy(path, repo / UPSTREAM / path.name)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run(
        [*git, "commit", "-q", "-m", "prices", "--date", "2026-08-21T00:00:00Z"],
        check=True,
        env={"GIT_COMMITTER_DATE": "2026-08-21T00:00:00Z", "PATH": shutil.os.environ["PATH"]},
    )
    out = tmp_path / "pricelist.py"
    assert pricegen.main(["--repo", str(repo), "--output", str(out)]) == 0
    made: dict = {}
    exec(compile(out.read_text(), str(out), "exec"), made)  # noqa: S102 - the file the generator wrote
    assert made["COMMIT_DATE"] == "2026-08-21" and made["LEFT_OUT"] == ("cn-north-1",)
    assert set(made["PRICES"]) == {"us-east-1", "us-gov-east-1", "us-gov-west-1"}
    for region, families in made["PRICES"].items():
        for family, entries in families.items():
            assert entries == pricelist.PRICES[region][family], (region, family)


def test_a_region_the_table_lacks_gets_us_east_1_prices_and_says_so():
    assert prices.for_region("us-gov-west-1").of("c5.large") == 0.102  # GovCloud's own list
    assert prices.for_region("us-east-1").of("c5.large") == 0.085
    for region in ("eu-west-1", "cn-north-1", ""):
        priced = prices.for_region(region)
        assert priced.of("c5.large") == 0.085 and priced.table_region == "us-east-1"
        assert "us-east-1 prices" in priced.note and priced.note in priced.words
    assert prices.for_region("us-east-1").note == ""
    assert prices.for_region("eu-west-1", {"c5.large": 0.1}).of("c5.large") == 0.1
