"""The lane contract (``mixed_os_racks.lane``) holds at both ends: the rack writes its lanes with the contract's
typed constructors, so a misspelt key is a type error, and the pack reads a lanes config against the schema
derived from the contract, saying each problem in the words users have always had.
"""

from __future__ import annotations

import copy
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator
from unittest import mock

import pytest
from hypothesis import given, strategies as st

from conftest import run_rack, stack_config
from mixed_os_racks.pack import laneconfig
from mixed_os_racks.pack.laneconfig import LANE_FIELDS, LANES_SCHEMA, LENIENT, lanes_config_problems

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
        "lane['instanceFamily'] = ['g5']\n"
    )
    out, _, status = mypy.api.run(
        [
            "--strict",
            "--config-file=",
            f"--cache-dir={tmp_path / 'cache'}",
            f"--python-version={sys.version_info.major}.{sys.version_info.minor}",
            str(snippet),
            str(package),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1
    assert [line.split(":")[1] for line in errors] == ["4", "5"], out
    assert 'Extra key "capacityType" for TypedDict "Lane"' in errors[0]
    assert 'TypedDict "Lane" has no key "instanceFamily"' in errors[1]


def test_every_problem_of_a_lane_is_said_in_order() -> None:
    """One config with a problem of each kind: what the schema refuses and what the rules refuse, said lane by lane
    in the order users have always read them (unknown keys, name, labels, taints, lists, instance types, GPUs,
    allocatable, then a lane that launches nothing). The fields the pack reads leniently (``gpu: 'yes'``,
    ``kind: pool``) and lists or numbers given as null are not refused, as before."""
    lanes: list[Any] = [
        {
            "name": "gpu",
            "taint": [],
            "labels": {"bad key!": 1, "a": 5},
            "taints": [{"key": "k", "effect": "X", "zz": 1}, {"value": "not ok!"}, "bad"],
            "arch": ["x", 3],
            "instanceTypes": ["g5", "g5.nano"],
            "maxGpusPerNode": -1,
            "allocatable": {"cpu": "lots", "gpu": 1, "ephemeralStorage": True},
            "kind": "pool",
            "gpu": "yes",
        },
        {"name": "gpu", "labels": None},
        {"name": "b", "instanceTypes": ["g4dn.xlarge"], "arch": ["arm64"]},
        7,
        {"taints": None, "arch": None, "maxGpusPerNode": 2.5},
    ]
    assert lanes_config_problems(lanes) == [
        "lanes[0].taint: unknown key (did you mean 'taints'?)",
        "lanes[0].labels: invalid label key 'bad key!' (must be at most 63 letters, digits, '-', '_' or '.', "
        "starting and ending with a letter or digit)",
        "lanes[0].labels.a: invalid label value 5 (must be a string)",
        "lanes[0].taints[0].effect: invalid taint effect 'X' (expected NoSchedule, NoExecute or PreferNoSchedule)",
        "lanes[0].taints[0].zz: unknown key (expected key, value, effect)",
        "lanes[0].taints[1].key: invalid taint key None",
        "lanes[0].taints[1].value: invalid taint value 'not ok!'",
        "lanes[0].taints[1].effect: invalid taint effect None (expected NoSchedule, NoExecute or PreferNoSchedule)",
        "lanes[0].taints[2]: expected {key, value, effect}, got 'bad'",
        "lanes[0].arch: expected a list of names, got ['x', 3]",
        "lanes[0].instanceTypes: invalid instance type 'g5' (must look like g4dn.xlarge)",
        "lanes[0].instanceTypes: 'g5.nano' is no instance type (g5 comes in xlarge, 2xlarge, 4xlarge, 8xlarge, "
        "12xlarge, 16xlarge, 24xlarge, 48xlarge)",
        "lanes[0].maxGpusPerNode: expected a whole number of GPUs, got -1",
        "lanes[0].allocatable.cpu: invalid quantity 'lots' (0 or more, like 3920m, 14481Mi, 17Gi)",
        "lanes[0].allocatable.gpu: unknown resource (expected cpu, memory, ephemeral-storage)",
        "lanes[0].allocatable.ephemeralStorage: invalid quantity True (0 or more, like 3920m, 14481Mi, 17Gi)",
        "lanes[1].name: duplicate lane name 'gpu' (also lanes[0])",
        "lanes[1].labels: expected a mapping of label to value, got None",
        "lanes[2]: instanceTypes g4dn.xlarge and arch arm64 leave no instance type it could launch (they contradict "
        "each other: instanceTypes g4dn.xlarge is amd64, sizes xlarge)",
        "lanes[3]: expected a lane {name, labels, taints, ...}, got 7",
        "lanes[4].name: every lane needs a name",
        "lanes[4].maxGpusPerNode: expected a whole number of GPUs, got 2.5",
    ]
    assert lanes_config_problems({"gpu": {}}) == ["lanes: expected a list of lanes, got {'gpu': {}}"]
    assert lanes_config_problems(None) == lanes_config_problems([]) == []


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 4),
    st.floats(),
    st.sampled_from(
        ["", "gpu", "bad key!", "g5.xlarge", "g5", "arm64", "NoSchedule", "NO_EXECUTE", "spot", "3920m", "m", "x/y"]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["key", "value", "effect", "cpu", "memory", "ephemeralStorage", "gpu", "x/y", "bad key!"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=6,
)
LANES = st.lists(
    st.dictionaries(st.sampled_from([*LANE_FIELDS, "taint", "zzz"]), VALUES, max_size=6) | VALUES, max_size=3
)


def _refused(lanes: Any) -> list[str]:
    """What the lane contract's schema refuses (as the Pulumi CLI checks it, with every object closed to the keys
    it names), outside the fields read leniently and the nulls the pack takes for none."""
    import jsonschema

    def closed(schema: Any) -> Any:
        if not isinstance(schema, dict):
            return schema
        schema = {key: closed(value) for key, value in schema.items()}
        return {**schema, "additionalProperties": False} if "properties" in schema else schema

    found = []
    for error in jsonschema.Draft7Validator(closed(LANES_SCHEMA)).iter_errors(lanes):
        path = list(error.absolute_path)
        if len(path) > 1 and (
            path[1] in LENIENT
            or error.validator == "enum"
            and path[1] in ("arch", "capacityTypes")
            or error.instance is None
            and len(path) == 2
            and path[1] not in ("name", "labels")
        ):
            continue
        found.append(".".join(map(str, path)))
    return found


@given(LANES)
def test_what_the_schema_refuses_is_said_and_nothing_raises(lanes: list[Any]) -> None:
    """Every value the contract's schema refuses gets a one-line problem naming its lane (none is silently
    dropped), every problem names a path under ``lanes``, and no config, however hostile, raises."""
    problems = lanes_config_problems(lanes)
    assert all(p.startswith("lanes[") and "\n" not in p for p in problems), problems
    for path in _refused(lanes):
        assert any(p.startswith(f"lanes[{path.split('.')[0]}]") for p in problems), (path, problems)


@pytest.fixture(scope="module")
def prod_lanes() -> list[dict[str, Any]]:
    """The prod rack stack's ``lanes`` output (the prod program run offline) as a workload policy's ``lanes``
    config: each lane with its name."""
    lanes = run_rack(stack_config("prod"), stack="prod").outputs["lanes"]
    return [{"name": name, **lane} for name, lane in lanes.items()]


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a config where a value is: each key of a map and each item of a list, at any depth."""
    if path:
        yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield from _places(inner, (*path, key))


@given(data=st.data())
def test_one_wrong_value_anywhere_in_a_racks_lanes_is_said_as_the_whole_schema_says_it(
    prod_lanes: list[dict[str, Any]], data: st.DataObject
) -> None:
    """The prod rack's own lanes are a sound config. One value of them replaced, or one key added, anywhere (a
    field, a label, a taint's effect, an allocatable quantity) with any value: every value the contract's schema
    refuses is said, naming its lane, and the problems are exactly those found when jsonschema is given every lane
    whole (the quick test of sound lanes and fields, ``_conforming``, hides nothing)."""
    assert lanes_config_problems(prod_lanes) == []
    lanes = copy.deepcopy(prod_lanes)
    *at, last = data.draw(st.sampled_from(list(_places(lanes))))
    holder = lanes
    for key in at:
        holder = holder[key]
    if isinstance(holder, dict) and data.draw(st.booleans()):
        last = data.draw(st.sampled_from([*LANE_FIELDS, "taint", "ephemeralStorage", "x/y"]))
    holder[last] = data.draw(VALUES)
    problems = lanes_config_problems(lanes)
    for path in _refused(lanes):
        assert any(p.startswith(f"lanes[{path.split('.')[0]}]") for p in problems), (path, problems)
    with (
        mock.patch.object(laneconfig, "_LANE_CONFORMS", lambda value: False),
        mock.patch.object(laneconfig, "_FIELD_CONFORMS", {}),
    ):
        assert lanes_config_problems(lanes) == problems


def test_the_pack_reads_a_config_lane_into_its_view_in_one_place() -> None:
    """``configured_lanes`` reads each configured lane into the pack's ``LaneView``: labels, taints in Kubernetes'
    spelling, GPUs, what it launches as requirements, capacity types in both spellings, and what it states."""
    [view] = laneconfig.configured_lanes(
        {
            "lanes": [
                {
                    "name": "gpu",
                    "kind": "nodegroup",
                    "labels": {"convox.io/label": "gpu"},
                    "gpu": True,
                    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
                    "instanceTypes": ["g5.xlarge"],
                    "capacityTypes": ["ON_DEMAND"],
                    "maxGpusPerNode": 1.0,
                    "allocatable": {"cpu": "3920m", "memory": "14481Mi", "ephemeralStorage": "17Gi"},
                }
            ]
        }
    )
    assert (view.name, view.kind, dict(view.labels), view.gpu, view.max_gpus) == (
        "gpu",
        "node group",
        {"convox.io/label": "gpu"},
        True,
        1,
    )
    assert [str(t) for t in view.taints] == ["nvidia.com/gpu=true:NoSchedule"]
    assert dict(view.capacity) == {
        "karpenter.sh/capacity-type": ("on-demand",),
        "eks.amazonaws.com/capacityType": ("ON_DEMAND",),
    }
    assert view.stated is not None and (view.stated.cpu_m, view.stated.memory_mib, view.stated.ephemeral_mib) == (
        3920,
        14481,
        17 * 1024,
    )
    assert [(r.key, r.values) for r in view.requirements] == [("node.kubernetes.io/instance-type", ("g5.xlarge",))]
