"""The lane contract (``mixed_os_racks.lane``) holds at both ends: the rack writes its lanes with the contract's
typed constructors, so a misspelt key is a type error, and the pack reads a lanes config against the schema
derived from the contract, saying each problem in the words users have always had.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest


COMPONENTS = Path(__file__).resolve().parent.parent / "components"


@pytest.mark.slow
def test_a_misspelt_lane_key_is_a_type_error(tmp_path: Path) -> None:
    """``Lane(...)`` and ``lane[...]`` are checked key by key by mypy (as ``rack.py`` builds the rack's lanes):
    ``capacityType`` for ``capacityTypes`` fails the type check, the right spelling passes."""
    import mypy.api

    package = tmp_path / "mixed_os_racks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module in ("lane.py", "contract.py"):  # the contract imports nothing else
        shutil.copy(COMPONENTS / module, package / module)
    snippet = tmp_path / "writer.py"
    snippet.write_text(
        "from mixed_os_racks.lane import CapacityType, Lane, LaneKind\n"
        "lane = Lane(kind=LaneKind.NODEPOOL, capacityTypes=[CapacityType.SPOT])\n"
        "lane['instanceFamilies'] = ['g5']\n"
        "wrong = Lane(kind=LaneKind.NODEPOOL, capacityType=[CapacityType.SPOT])\n"
        "lane['instanceFamily'] = ['g5']\n")
    out, _, status = mypy.api.run(["--strict", "--config-file=", f"--cache-dir={tmp_path / 'cache'}",
                                   f"--python-version={sys.version_info.major}.{sys.version_info.minor}",
                                   str(snippet), str(package)])
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1
    assert [line.split(":")[1] for line in errors] == ["4", "5"], out
    assert 'Extra key "capacityType" for TypedDict "Lane"' in errors[0]
    assert 'TypedDict "Lane" has no key "instanceFamily"' in errors[1]
