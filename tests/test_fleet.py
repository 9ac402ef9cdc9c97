"""``mixed-os-racks fleet``: every stack of the project in one run, through the command's output and exit code.

Over the repository's own three stacks (Pulumi.dev/staging/prod.yaml) and edited copies of them in a project
folder of their own (the rack program and Pulumi.yaml copied beside them).

Upstream facts these tests pin:
- EKS upgrades a control plane one minor version at a time (the EKS user guide, update-cluster.adoc: "you can
  update only to the next minor version"; aws-samples/eks-workshop and pulumi-eks both rely on it). A state at
  1.33 may go to 1.34, never to 1.35.
- An EKS-optimized AL2023 AMI is built for one Kubernetes minor, which its name states
  (awslabs/amazon-eks-ami, templates/al2023: ``amazon-eks-node-al2023-<arch>-<variant>-<minor>-v<date>``); a node
  whose kubelet is newer than its control plane is not supported (Kubernetes version skew policy).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from mixed_os_racks.cli import main
from mixed_os_racks.offline.catalog import Catalog
from mixed_os_racks.offline.engine import run_program
from mixed_os_racks.offline.stackexport import write_export

from conftest import GPU_AMI, REPO, stack_config
from promotion_helpers import NEW_AMI, POOLS_KEY, catalog

STACKS = ("dev", "staging", "prod")


@pytest.fixture(scope="module")
def amis(tmp_path_factory) -> Path:
    return catalog(tmp_path_factory.mktemp("catalog"))


def project(folder: Path, **edits: dict[str, Any]) -> Path:
    """A project folder with the rack program and the repository's three stacks, each changed by ``edits[stack]``
    (a value of None removes the key)."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, folder / name)
    for stack in STACKS:
        values = stack_config(stack)
        for key, value in edits.get(stack, {}).items():
            if value is None:
                values.pop(key, None)
            else:
                values[key] = value
        (folder / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": values}))
    return folder


def fleet(folder: Path, amis: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = folder / "fleet.json"
    out.unlink(missing_ok=True)
    code = main(["fleet", "--cwd", str(folder), "--amis", str(amis), "--no-policy", "--json", str(out), *extra])
    return code, (json.loads(out.read_text()) if out.exists() else {})


def column(doc: dict[str, Any], stack: str) -> dict[str, Any]:
    return next(s for s in doc["stacks"] if s["stack"] == stack)


def gpu_pool(stack: str, **changes: Any) -> list[dict[str, Any]]:
    return [{**stack_config(stack)[POOLS_KEY][0], **changes}]


def test_the_repositorys_own_stacks_pass_in_one_run_with_the_project_pack(tmp_path, capsys):
    markdown = tmp_path / "fleet.md"
    code = main(["fleet", "--cwd", str(REPO), "--markdown", str(markdown), "--json", str(tmp_path / "f.json")])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    doc = json.loads((tmp_path / "f.json").read_text())
    assert [s["stack"] for s in doc["stacks"]] == ["dev", "prod", "staging"]
    assert doc["order"] == ["dev", "staging", "prod"]
    prod = column(doc, "prod")
    assert prod["kubernetes"] == "1.34" and prod["karpenter"]
    assert prod["policy"].startswith("passed")
    assert prod["plan"]["create"] > 0
    gpu = prod["lanes"]["pool gpu"]
    assert (gpu["os"], gpu["ami"], gpu["driverBranch"]) == ("al2023", GPU_AMI, 580)
    assert gpu["sizes"] == "g5,g6 xlarge,2xlarge,4xlarge" and gpu["worstCaseHourlyUsd"] > 0
    assert prod["lanes"]["pool workload"]["os"] == "bottlerocket"
    assert "pool gpu" not in column(doc, "dev")["lanes"]
    # staging pins prod's AMI on the same lane: nothing new in prod for the soak gate
    assert not gpu["newInOrder"]
    assert "fleet: previewing stack staging (3/3)" in err
    table = markdown.read_text()
    assert table.startswith("|  | dev | prod | staging |")
    assert "| pool gpu | - |" in table and GPU_AMI in table and "Every stack passes, in order." in table
    assert "Every stack passes, in order." in out


def test_prod_on_a_newer_kubernetes_minor_than_staging_is_refused_naming_both(tmp_path, amis, capsys):
    # (without its pinned 1.34 AMI, which the upgrade gate would refuse on a 1.35 control plane)
    folder = project(tmp_path, prod={"rack:k8s_version": "1.35", POOLS_KEY: gpu_pool("prod", ami_id=None)})
    code, doc = fleet(folder, amis)
    out = capsys.readouterr().out
    assert code == 1
    assert any(
        "stack prod is ahead of staging" in p and "Kubernetes 1.35 against 1.34" in p for p in doc["orderProblems"]
    )
    assert "Kubernetes 1.35 against 1.34" in out and "pool workload" in out  # the matrix is still printed
    assert not doc["passed"]


def test_prod_on_a_newer_ami_than_staging_on_the_same_lane_is_refused(tmp_path, amis):
    folder = project(tmp_path, prod={POOLS_KEY: gpu_pool("prod", ami_id=NEW_AMI)})
    code, doc = fleet(folder, amis, "--stacks", "staging,prod")
    assert code == 1
    [problem] = doc["orderProblems"]
    assert "stack prod is ahead of staging" in problem and NEW_AMI in problem and GPU_AMI in problem
    assert "pool gpu" in problem
    assert column(doc, "prod")["lanes"]["pool gpu"]["newInOrder"]


def test_staging_ahead_of_prod_is_the_order_promotion_needs(tmp_path, amis):
    folder = project(tmp_path, staging={POOLS_KEY: gpu_pool("staging", ami_id=NEW_AMI)})
    code, doc = fleet(folder, amis, "--stacks", "staging,prod")
    assert code == 0, doc
    assert doc["orderProblems"] == []


def test_the_order_flag_reverses_who_must_lead(tmp_path, amis):
    folder = project(tmp_path, staging={POOLS_KEY: gpu_pool("staging", ami_id=NEW_AMI)})
    code, doc = fleet(folder, amis, "--order", "prod,staging")
    assert code == 1
    assert doc["order"] == ["prod", "staging"]
    assert "stack staging is ahead of prod" in doc["orderProblems"][0]


def test_stacks_chooses_which_stacks_run(tmp_path, amis):
    folder = project(tmp_path)
    code, doc = fleet(folder, amis, "--stacks", "prod,staging")
    assert code == 0
    assert [s["stack"] for s in doc["stacks"]] == ["prod", "staging"]
    assert doc["order"] == ["staging", "prod"]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--stacks", "qa"], "--stacks qa: no Pulumi.qa.yaml in"),
        (["--stacks", "prod,,dev"], "--stacks prod,,dev: an empty stack name"),
        (["--stacks", "prod,prod"], "'prod' is named twice"),
        (["--order", "dev,qa"], "--order dev,qa: 'qa' is not a stack this run previews"),
        (["--states", "nowhere"], "--states nowhere: not a directory"),
    ],
)
def test_bad_arguments_get_one_error_line_and_exit_2(tmp_path, amis, capsys, argv, words):
    folder = project(tmp_path)
    code = main(["fleet", "--cwd", str(folder), "--amis", str(amis), "--no-policy", *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and words in err and "Traceback" not in err


def test_a_broken_stack_is_an_error_naming_it_and_the_others_still_show(tmp_path, amis, capsys):
    folder = project(tmp_path, staging={"rack:karpenter_node_os": "windows"})
    code, doc = fleet(folder, amis, "--stacks", "staging,prod")
    err = capsys.readouterr().err
    assert code == 2
    assert "error: stack staging: " in err and "karpenter_node_os" in err
    assert column(doc, "prod")["lanes"]["pool gpu"]["ami"] == GPU_AMI


def _state(folder: Path, stack: str, values: dict[str, Any], amis: Path) -> None:
    (folder / "states").mkdir(exist_ok=True)
    run = run_program(REPO, values, Catalog.load(amis), project="mixed-os-racks", stack=stack)
    write_export(run, folder / "states" / f"{stack}.json")


def test_the_upgrade_gate_refuses_a_kubernetes_minor_two_above_the_state(tmp_path, amis):
    values = {**stack_config("staging"), "rack:k8s_version": "1.33", POOLS_KEY: gpu_pool("staging", ami_id=None)}
    folder = project(
        tmp_path,
        staging={"rack:k8s_version": "1.35", POOLS_KEY: gpu_pool("staging", ami_id=None)},
        prod={"rack:k8s_version": "1.35", POOLS_KEY: gpu_pool("prod", ami_id=None)},
    )
    _state(tmp_path, "staging", values, amis)
    code, doc = fleet(folder, amis, "--states", str(tmp_path / "states"), "--stacks", "staging,prod")
    assert code == 1
    [problem] = column(doc, "staging")["problems"]
    assert "Kubernetes 1.33 -> 1.35 skips a minor" in problem and "1.34 first" in problem
    assert column(doc, "staging")["plan"]  # planned against its state: counts of the plan's steps


def test_the_upgrade_gate_takes_one_minor_at_a_time(tmp_path, amis):
    values = {**stack_config("staging"), "rack:k8s_version": "1.33", POOLS_KEY: gpu_pool("staging", ami_id=None)}
    folder = project(
        tmp_path, staging={POOLS_KEY: gpu_pool("staging", ami_id=None)}, prod={POOLS_KEY: gpu_pool("prod", ami_id=None)}
    )
    _state(tmp_path, "staging", values, amis)
    code, doc = fleet(folder, amis, "--states", str(tmp_path / "states"), "--stacks", "staging")
    assert column(doc, "staging")["problems"] == []
    assert code == 0, doc


def test_a_lane_on_an_ami_for_another_minor_than_its_control_plane_is_refused(tmp_path, amis):
    folder = project(tmp_path, prod={"rack:k8s_version": "1.33"}, staging={"rack:k8s_version": "1.33"})
    code, doc = fleet(folder, amis, "--stacks", "prod,staging")
    assert code == 1
    [problem] = column(doc, "prod")["problems"]
    assert f"pool gpu runs {GPU_AMI}, an AMI for Kubernetes 1.34, and its control plane runs 1.33" in problem


def test_the_upgrade_gate_refuses_a_new_minor_the_running_karpenter_does_not_support(tmp_path, amis):
    """Karpenter 1.14.x does not support Kubernetes 1.37 and 1.15.0 does (``upstream.karpenter_compatibility``, from
    karpenter-provider-aws's compatibility pages). The Karpenter chart depends on the cluster, so an update that
    moves both moves the control plane first: the 1.14.1 the state runs meets 1.37."""
    unpinned = {POOLS_KEY: gpu_pool("staging", ami_id=None)}
    _state(tmp_path, "staging", {**stack_config("staging"), **unpinned, "rack:k8s_version": "1.36"}, amis)
    folder = project(tmp_path, staging={**unpinned, "rack:k8s_version": "1.37", "rack:karpenter_version": "1.15.0"})
    code, doc = fleet(folder, amis, "--states", str(tmp_path / "states"), "--stacks", "staging")
    assert code == 1
    [problem] = column(doc, "staging")["problems"]
    assert "Kubernetes 1.36 -> 1.37 with Karpenter 1.14.1 -> 1.15.0 in one update" in problem
    assert "update Karpenter to 1.15.0 on Kubernetes 1.36 first" in problem
    # the same change in two updates: Karpenter first, then the minor
    _state(
        tmp_path,
        "staging",
        {**stack_config("staging"), **unpinned, "rack:k8s_version": "1.36", "rack:karpenter_version": "1.15.0"},
        amis,
    )
    code, doc = fleet(folder, amis, "--states", str(tmp_path / "states"), "--stacks", "staging")
    assert column(doc, "staging")["problems"] == [] and code == 0, doc


def test_a_program_that_fails_for_one_stack_is_named_with_it(tmp_path, amis, capsys):
    folder = project(tmp_path)
    main_py = folder / "__main__.py"
    main_py.write_text(
        "import pulumi\nif pulumi.get_stack() == 'staging':\n    raise RuntimeError('boom')\n" + main_py.read_text()
    )
    code, doc = fleet(folder, amis, "--stacks", "dev,staging")
    err = capsys.readouterr().err
    assert code == 2
    assert "error: stack staging: the program failed: RuntimeError: boom" in err
    assert column(doc, "dev")["errors"] == [] and column(doc, "dev")["lanes"]
