"""Hostile input from the wire and at the process's edges: every number another language sends to the provider's
``Construct``, a pinned AMI the catalog lacks, a closed or full standard output, a pool's optional key written
``null``, and a Node.js project that turns TypeScript off.

JSON has no NaN or infinity, but protobuf's ``Struct`` carries both (a TypeScript program's ``NaN`` reaches the
provider as a ``number_value``), and protobuf's own JSON conversion raises on one: each is refused at its
property path, in the schema's names, as INVALID_ARGUMENT with per-property details, never a traceback.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mixed_os_racks.cli import main

from conftest import GPU_AMI, REPO, stack_config
from provider_helpers import EngineSide, ProviderProcess, property_errors, refused
from provider_helpers import provider  # noqa: F401 (the module's fixture: one provider process)

CLUSTER = {"name": "prod-rack"}
MISSING_AMI = "ami-0fffffffffffffff0"
"""Well formed, and in no catalog."""


def put(inputs: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``inputs`` with ``value`` at ``path`` (``pool.canaryNodes``, ``spec.pools[0].maxHourlyUsd``)."""
    import copy
    import re

    out = copy.deepcopy(inputs)
    steps = [int(s) if s.isdigit() else s for s in re.findall(r"[^.\[\]]+", path)]
    here: Any = out
    for step in steps[:-1]:
        here = here[step]
    here[steps[-1]] = value
    return out


POOL = {
    "cluster": CLUSTER,
    "pool": {
        "name": "ml",
        "instanceFamilies": ["g6"],
        "dedicated": True,
        "disk": 120,
        "gpuLimit": 4,
        "maxHourlyUsd": 20.5,
        "canaryAmiId": GPU_AMI,
        "canaryNodes": 1,
    },
}
GROUP = {
    "cluster": CLUSTER,
    "group": {
        "instanceType": "g6.2xlarge",
        "minSize": 1,
        "maxSize": 4,
        "dedicated": True,
        "label": "inference",
        "maxHourlyUsd": 5,
    },
}
RACK = {
    "spec": {
        "clusterName": "prod-rack",
        "maxHourlyUsd": 40,
        "pools": [
            {"name": "workload", "os": "bottlerocket"},
            {"name": "gpu", "instanceFamilies": ["g6"], "maxHourlyUsd": 10},
        ],
    }
}
NUMBERS = [  # (component, inputs, a number's property path)
    ("KarpenterPool", POOL, "pool.canaryNodes"),
    ("KarpenterPool", POOL, "pool.maxHourlyUsd"),
    ("KarpenterPool", POOL, "pool.gpuLimit"),
    ("KarpenterPool", POOL, "pool.disk"),
    ("KarpenterPool", POOL, "pool.weight"),
    ("KarpenterPool", POOL, "pool.cpuLimit"),
    ("NodeGroup", GROUP, "group.maxHourlyUsd"),
    ("NodeGroup", GROUP, "group.minSize"),
    ("NodeGroup", GROUP, "group.canarySize"),
    ("NodeGroup", GROUP, "group.disk"),
    ("Rack", RACK, "spec.maxHourlyUsd"),
    ("Rack", RACK, "spec.pools[1].maxHourlyUsd"),
    ("Rack", RACK, "spec.pools[1].gpuLimit"),
    ("KarpenterController", {"cluster": CLUSTER}, "replicas"),
    (
        "KarpenterPool",
        {**POOL, "tags": {"team": "ml"}},
        "tags.team",
    ),  # a string property: no number is one, least of all NaN
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(NUMBERS), value=st.sampled_from([math.nan, math.inf, -math.inf]))
def test_a_number_no_json_writes_is_refused_at_its_property_path(provider, case, value):
    component, inputs, path = case
    error = refused(provider, component, put(inputs, path, value))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    shown = {math.inf: "Infinity", -math.inf: "-Infinity"}.get(value, "NaN")
    assert (path, f"expected a finite number (got {shown}: JSON has no such number)") in property_errors(error)
    assert "Traceback" not in error.details() and 'File "' not in error.details()


def test_a_not_finite_number_inside_a_secret_is_named_where_it_is(provider):
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": math.nan}
    error = refused(provider, "KarpenterPool", {**POOL, "cluster": {"name": secret}})  # a cluster's fields take secrets
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert property_errors(error) == [("cluster.name", "expected a finite number (got NaN: JSON has no such number)")]


@pytest.mark.parametrize(
    ("component", "inputs", "path"),
    [
        ("NodeGroup", put(GROUP, "group.canaryAmiId", MISSING_AMI), "group.canaryAmiId"),
        ("NodeGroup", put(GROUP, "group.amiId", MISSING_AMI), "group.amiId"),
        ("KarpenterPool", put(POOL, "pool.canaryAmiId", MISSING_AMI), "pool.canaryAmiId"),
        (
            "Rack",
            {
                "spec": {
                    "clusterName": "prod-rack",
                    "pools": [{"name": "workload"}],
                    "nodeGroups": [
                        {
                            "name": "rack-ng-1",
                            "instanceType": "g5.xlarge",
                            "minSize": 1,
                            "maxSize": 3,
                            "canaryAmiId": MISSING_AMI,
                        }
                    ],
                }
            },
            "spec.nodeGroups[0].canaryAmiId",
        ),
    ],
    ids=["group-canary", "group", "pool-canary", "rack-group-canary"],
)
def test_an_ami_the_account_lacks_is_named_at_the_field_that_pins_it(tmp_path, component, inputs, path):
    """A node group's canary once came back as a traceback: the canary's look-up failed inside the group. Each
    is refused at the field the user wrote (a ``Rack``'s at the lane's field in its spec). A process of its own per
    case: a component that failed halfway leaves the SDK's provider host with work that never ends."""
    engine = EngineSide()
    process = ProviderProcess(engine.address, tmp_path)
    try:
        error = refused(process, component, inputs)
    finally:
        process.close()
        engine.close()
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    [(where, reason)] = property_errors(error)
    assert where == path and f"ami_id '{MISSING_AMI}' cannot be read in this region/account" in reason
    assert "Traceback" not in error.details() and 'File "' not in error.details()


# ---- standard output ------------------------------------------------------------------------------------


def test_schema_with_standard_output_closed_says_so():
    done = subprocess.run(
        f"{sys.executable} -m mixed_os_racks.offline schema >&-",
        shell=True,
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: standard output is closed, so there is nowhere to print (redirect it to a file, or to /dev/null)\n"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_schema_to_a_full_disk_says_so():
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "mixed_os_racks.offline", "schema"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            cwd=REPO,
        )
    assert done.returncode == 2
    assert done.stderr == "error: cannot write to standard output: No space left on device\n"


def test_schema_to_a_reader_that_goes_away_is_no_error():
    done = subprocess.run(
        f"{sys.executable} -m mixed_os_racks.offline schema | head -c 10 >/dev/null",
        shell=True,
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        executable="/bin/bash",
    )
    assert done.stderr == ""


# ---- a pool's optional key written null -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "field", "value"),
    [
        ("rack:additional_karpenter_nodepools_config", "canary_nodes", None),
        ("rack:additional_node_groups_config", "canary_size", None),
    ],
)
def test_null_for_a_key_with_a_default_is_as_if_it_were_not_written(tmp_path, capsys, key, field, value):
    """An item reaches the program as JSON, where a key left empty is ``null``: as for ``ami_id`` and ``disk``, the
    key takes its default (a canary of 1 node), and the preview runs as without it."""
    values = stack_config("prod")
    canary = {"canary_ami_id": "ami-0b1c2d3e4f5a60718"} if "pools" in key else {}
    values[key] = [{**values[key][0], **canary, field: value}]
    stack = tmp_path / "Pulumi.prod.yaml"
    stack.write_text(yaml.safe_dump({"config": values}))
    without = tmp_path / "without" / "Pulumi.prod.yaml"
    without.parent.mkdir()
    values[key] = [{k: v for k, v in values[key][0].items() if k != field}]
    without.write_text(yaml.safe_dump({"config": values}))
    code = main(["preview", "--config", str(stack), "--cwd", str(REPO), "--no-policy"])
    out = capsys.readouterr().out
    assert code == main(["preview", "--config", str(without), "--cwd", str(REPO), "--no-policy"])
    assert out == capsys.readouterr().out.replace(str(without), str(stack))


# ---- a Node.js project with typescript: false --------------------------------------------------------------


def test_typescript_false_with_a_typescript_entry_point_names_the_option(tmp_path, capsys):
    """The Node.js host runs ts-node only when ``PULUMI_NODEJS_TYPESCRIPT`` is ``true`` (pulumi/pulumi
    ``sdk/nodejs/cmd/run/run.ts``), which ``typescript: false`` leaves unset: the program's ``index.ts`` would run
    as JavaScript and fail on its first annotation (``SyntaxError: Unexpected identifier 'as'``)."""
    example = REPO / "examples" / "typescript-consumer"
    project = tmp_path / "ts"
    shutil.copytree(example, project, ignore=shutil.ignore_patterns("node_modules"), symlinks=True)
    (project / "node_modules").symlink_to(example / "node_modules")
    doc = yaml.safe_load((project / "Pulumi.yaml").read_text())
    doc["runtime"]["options"]["typescript"] = False
    doc["packages"] = {"rack": str(REPO / "provider")}
    (project / "Pulumi.yaml").write_text(yaml.safe_dump(doc))
    assert main(["preview", "--stack", "dev", "--cwd", str(project), "--no-policy"]) == 2
    assert capsys.readouterr().err == (
        f"error: {project / 'Pulumi.yaml'}: runtime.options.typescript: false, but the program's entry point index.ts "
        f"is TypeScript, which Node.js then runs as JavaScript: remove typescript: false, or compile the program and "
        f"point main at the JavaScript\n"
    )
