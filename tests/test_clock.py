"""``MIXED_OS_RACKS_NOW``: the moment EKS's support calendar, AMI deprecation times and AMI ages are judged
against (``components/clock.py``). The suite pins it (``conftest``), so its verdicts do not move with the
calendar; a user can set it to see what a preview will say on another day."""

from __future__ import annotations

import pytest

from mixed_os_racks import clock
from mixed_os_racks.cli import main
from conftest import REPO


def test_a_date_or_a_time_is_read_in_utc(monkeypatch):
    monkeypatch.setenv(clock.ENV, "2027-03-24")
    assert clock.now().isoformat() == "2027-03-24T00:00:00+00:00" and clock.today() == "2027-03-24"
    monkeypatch.setenv(clock.ENV, "2027-03-24T01:30:00+02:00")
    assert clock.today() == "2027-03-23"
    monkeypatch.delenv(clock.ENV)
    assert clock.now().tzinfo is not None


@pytest.mark.parametrize("value", ["tomorrow", "2027-13-01", "24/03/2027", "2027-03-24T25:00"])
def test_a_moment_that_is_no_iso_date_is_named_and_nothing_runs(monkeypatch, capsys, value):
    monkeypatch.setenv(clock.ENV, value)
    assert main(["preview", "--stack", "prod", "--cwd", str(REPO), "--no-policy"]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"error: MIXED_OS_RACKS_NOW={value!r}: not an ISO 8601 date or time (such as 2027-03-24 or "
        f"2027-03-24T09:00:00Z)\n"
    )


def test_a_preview_on_another_day_says_what_that_day_brings(monkeypatch, capsys):
    """The prod example's Kubernetes 1.34: in standard support the day before 2026-12-02, in extended support
    from then (a warning), and past it from 2027-12-02 (EKS creates no cluster: refused)."""
    monkeypatch.setenv(clock.ENV, "2026-12-01")
    assert main(["preview", "--stack", "prod", "--cwd", str(REPO), "--no-policy"]) == 0
    assert "extended support" not in capsys.readouterr().err
    monkeypatch.setenv(clock.ENV, "2026-12-02")
    assert main(["preview", "--stack", "prod", "--cwd", str(REPO), "--no-policy"]) == 0
    assert "Kubernetes 1.34 is in EKS extended support since 2026-12-02" in capsys.readouterr().err
    monkeypatch.setenv(clock.ENV, "2027-12-02")
    assert main(["preview", "--stack", "prod", "--cwd", str(REPO), "--no-policy"]) == 2
    assert "Kubernetes 1.34 reached the end of EKS extended support on 2027-12-02" in capsys.readouterr().err
