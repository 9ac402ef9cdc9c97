"""The soak gate and promotion: prod refuses an AMI that staging's state has not run on a lane of the same
name for ``soakDays`` (policy ``ami-soaked``, fed by ``preview --soaked-in`` or ``mixed-os-racks soak``), and
``mixed-os-racks promote`` writes only soaked AMIs into prod's stack file.

The states are exports of the example stacks (``write_export``: what an ``up`` of the offline run leaves),
with ``modified`` set as a real export has it: pulumi's ``apitype.ResourceV3.Modified`` (pulumi/pulumi
``sdk/go/common/apitype/core.go``), when the resource's state was last altered; checkpoints from before
early 2023 have none.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Optional

import pytest
import yaml
from hypothesis import given, strategies as st

from mixed_os_racks import clock
from mixed_os_racks.cli import main
from mixed_os_racks.offline.catalog import Catalog
from mixed_os_racks.offline.engine import run_program
from mixed_os_racks.offline.stackexport import state_time, write_export
from mixed_os_racks.pack.soak import DAY_SECONDS, Evidence

from promotion_helpers import GROUPS_KEY, NEW_AMI, NEWER_AMI, POOLS_KEY, catalog, preview
from conftest import GPU_AMI, REPO, stack_config

PROJECT = "mixed-os-racks"
SOAKED = "ami-soaked"


@pytest.fixture(scope="module")
def amis(tmp_path_factory) -> Path:
    return catalog(tmp_path_factory.mktemp("catalog"))


def with_gpu(
    stack: str, pool: Optional[dict[str, Any]] = None, group: Optional[dict[str, Any]] = None
) -> dict[str, Any]:
    """An example stack's config, its ``gpu`` pool changed by ``pool``; ``group``: prod's node group, so changed."""
    values = stack_config(stack)
    values[POOLS_KEY] = [{**values[POOLS_KEY][0], **(pool or {})}]
    if group is not None:
        values[GROUPS_KEY] = [{**stack_config("prod")[GROUPS_KEY][0], "disk": 100, **group}]
    return values


def export(folder: Path, stack: str, values: dict[str, Any], amis: Path, days: Optional[float]) -> Path:
    """The state an ``up`` of ``values`` left, every resource last altered ``days`` ago (None: no ``modified``,
    as before early 2023)."""
    run = run_program(REPO, values, Catalog.load(amis), project=PROJECT, stack=stack)
    path = folder / f"{stack}-{len(list(folder.iterdir()))}.json"
    if days is not None:  # the clock the pack judges by (conftest pins it)
        return write_export(run, path, at=clock.now() - timedelta(days=days))
    doc = json.loads(write_export(run, path).read_text())
    for res in doc["deployment"]["resources"]:
        res.pop("modified", None)
        res.pop("created", None)
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def prod_state(tmp_path_factory, amis) -> Path:
    """prod's own state: the example stack, its GPU pool on GPU_AMI (for 30 days)."""
    return export(tmp_path_factory.mktemp("prod"), "prod", stack_config("prod"), amis, 30)


def gate(
    folder: Path,
    amis: Path,
    prod_state: Path,
    ran: dict[str, Any],
    days: Optional[float],
    pins: dict[str, Any],
    *extra: str,
) -> tuple[int, dict[str, Any]]:
    """prod's preview, its gpu pool changed by ``pins``, against staging's state (its gpu pool changed by ``ran``,
    last altered ``days`` ago) and its own."""
    staging = export(folder, "staging", with_gpu("staging", ran), amis, days)
    return preview(
        folder, with_gpu("prod", pins), amis, "--soaked-in", str(staging), "--state", str(prod_state), *extra
    )


def soaked(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in doc["violations"] if v["policy"] == SOAKED]


# ---- the gate in the offline preview -----------------------------------------------------------------------


def test_an_ami_staging_ran_2_days_is_refused_naming_the_lane_the_ami_and_the_days(tmp_path, amis, prod_state):
    code, doc = gate(tmp_path, amis, prod_state, {"ami_id": NEW_AMI}, 2.04, {"ami_id": NEW_AMI})
    assert code == 1
    (refusal,) = soaked(doc)
    assert refusal["level"] == "mandatory" and refusal["pack"] == "mixed-os-racks"
    assert refusal["message"].startswith(
        f"karpenter nodepool 'gpu': AMI {NEW_AMI} is new on lane 'gpu', and has run "
        f"there in staging for 2 of 7 days (since "
    )
    assert refusal["urn"].endswith("::rack-gpu-nodeclass")


def test_an_ami_staging_ran_8_days_passes(tmp_path, amis, prod_state, capsys):
    code, doc = gate(tmp_path, amis, prod_state, {"ami_id": NEW_AMI}, 8.04, {"ami_id": NEW_AMI})
    assert code == 0 and soaked(doc) == []
    out = capsys.readouterr().out
    assert "mixed-os-racks (" in out
    # a passing preview says the gate ran, and what it judged: the AMI the lane newly runs, on that lane
    assert out.splitlines()[-1] == f"    Soak gate (ami-soaked, 7 days in staging): {NEW_AMI} on gpu soaked"


def test_an_ami_staging_never_ran_is_refused(tmp_path, amis, prod_state):
    code, doc = gate(tmp_path, amis, prod_state, {"ami_id": NEW_AMI}, 30, {"ami_id": NEWER_AMI})
    assert code == 1
    (refusal,) = soaked(doc)
    assert refusal["message"].startswith(
        f"karpenter nodepool 'gpu': AMI {NEWER_AMI} is new on lane 'gpu', and staging "
        f"has not run it there (its state has {NEW_AMI} on that lane)"
    )


def test_an_ami_prods_own_state_runs_is_never_refused(tmp_path, amis, prod_state, capsys):
    """staging has moved on to a new AMI for a day: prod, still on the one it runs, is not refused for it."""
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 1)
    code, doc = preview(tmp_path, stack_config("prod"), amis, "--soaked-in", str(staging), "--state", str(prod_state))
    assert code == 0 and soaked(doc) == []
    assert capsys.readouterr().out.splitlines()[-1] == (
        "    Soak gate (ami-soaked, 7 days in staging): no lane newly runs an AMI pinned by id, so none needed it"
    )
    # without prod's state nothing says prod runs it already: it is judged as new, and the warning says why
    code, doc = preview(tmp_path, stack_config("prod"), amis, "--soaked-in", str(staging))
    assert code == 1 and GPU_AMI in soaked(doc)[0]["message"]
    assert "--soaked-in without --state" in capsys.readouterr().err


def test_a_canary_counts_as_its_lane_both_ways(tmp_path, amis, prod_state):
    """staging's canary ran the candidate: prod's canary may run it once it has soaked, and is named as the canary."""
    staging_values = with_gpu("staging", {"canary_ami_id": NEW_AMI})
    prod_values = with_gpu("prod", {"canary_ami_id": NEW_AMI})
    young = export(tmp_path, "staging", staging_values, amis, 2.04)
    code, doc = preview(tmp_path, prod_values, amis, "--soaked-in", str(young), "--state", str(prod_state))
    assert code == 1
    (refusal,) = soaked(doc)
    assert refusal["message"].startswith(
        f"karpenter nodepool 'gpu-canary': AMI {NEW_AMI} is new on lane 'gpu', and "
        f"has run there in staging for 2 of 7 days"
    )
    old = export(tmp_path, "staging", staging_values, amis, 8.04)
    assert preview(tmp_path, prod_values, amis, "--soaked-in", str(old), "--state", str(prod_state))[0] == 0


def test_a_node_groups_ami_is_judged_by_its_launch_template(tmp_path, amis, prod_state):
    """A pinned managed node group's AMI is in the launch template pulumi-eks builds: its lane is the group's
    (rack-ng-1 in both stacks), and its canary's is too."""
    staging = export(tmp_path, "staging", with_gpu("staging", group={"ami_id": NEW_AMI}), amis, 2.04)
    code, doc = preview(
        tmp_path,
        with_gpu("prod", group={"canary_ami_id": NEW_AMI}),
        amis,
        "--soaked-in",
        str(staging),
        "--state",
        str(prod_state),
    )
    assert code == 1
    (refusal,) = soaked(doc)
    assert refusal["message"].startswith(
        f"node group 'rack-ng-1-canary': AMI {NEW_AMI} is new on lane 'rack-ng-1', "
        f"and has run there in staging for 2 of 7 days"
    )
    assert refusal["urn"].endswith("::rack-ng-1-canary-launchTemplate")


# ---- what a managed node group's state proves ---------------------------------------------------------------
#
# Upstream facts relied on (in our words):
# - pulumi/pulumi pkg/resource/deploy/step.go (commit 1b5949891b3c): a CreateStep stamps `created` and `modified`
#   with the time of the create; an UpdateStep moves `modified` only when the provider's update succeeds (or
#   reports a partial failure with its state), so a template's `modified` moves with its image while the group
#   that failed to roll onto it keeps its old state; a first ReadStep (a `get`) records neither time.
# - pulumi/pulumi sdk/go/common/apitype/core.go: `created`/`modified` are Go time.Time values, marshalled as
#   RFC 3339 with nanoseconds in UTC (`2024-10-28T18:17:41.426010047Z`).
# - pulumi/pulumi-eks tests/testdata/recorded/TestProviderUpgrade/managed-nodegroups/3.0.0/stack.json (commit
#   e666a6f9b3bb, here trimmed under tests/recorded/): a ManagedNodeGroup's launch template records
#   `latestVersion: 1` (a number) and its aws.eks.NodeGroup `launchTemplate.version: "1"` (text), the group
#   modified after the template.

RECORDED_MNG = REPO / "tests" / "recorded" / "pulumi-eks" / "TestProviderUpgrade" / "managed-nodegroups" / "3.0.0"
RECORDED_AMI = "ami-00369ea992801deb2"  # example-managed-ng0's pinned image in that run


def recorded_state(tmp_path: Path, edit: Any = None) -> Path:
    doc = json.loads(gzip.open(RECORDED_MNG / "stack.json.gz").read())
    if edit is not None:
        edit(
            {
                r["urn"].rsplit("::", 1)[-1] + "/" + r["type"].rsplit(":", 1)[-1]: r
                for r in doc["deployment"]["resources"]
            }
        )
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(doc))
    return path


def soak_config_of(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    assert main(["soak", str(path)]) == 0
    out = capsys.readouterr()
    return json.loads(out.out)[SOAKED], out.err


def test_a_real_node_group_counts_as_running_its_image_from_when_the_group_reached_it(tmp_path, capsys):
    """In pulumi-eks's recorded run, example-managed-ng0's template was written at 18:15:22 and its group reached
    that version at 18:17:41: the soak counts from the group, the later of the two."""
    config, summary = soak_config_of(recorded_state(tmp_path), capsys)
    assert config["ranSince"]["example-managed-ng0"] == {RECORDED_AMI: "2024-10-28T18:17:42Z"}
    assert config["unreached"] == {}
    assert (f"lane 'example-managed-ng0': {RECORDED_AMI} since 2024-10-28T18:17:42Z (") in summary
    assert "days; its node group reached it: every node of the group was launched from it)" in summary


def test_the_soak_summary_says_what_each_lane_proves(tmp_path, amis, capsys):
    """A Karpenter lane's evidence is its EC2NodeClass's pin, a managed node group's the group's own state."""
    staging = export(
        tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}, group={"ami_id": NEWER_AMI}), amis, 8.04
    )
    _, summary = soak_config_of(staging, capsys)
    assert (f"lane 'gpu': {NEW_AMI} since ") in summary
    assert (
        "(8 days; its EC2NodeClass pins it: nodes Karpenter launched since boot it, older ones drift onto it)"
        in summary
    ), summary
    assert (f"lane 'rack-ng-1': {NEWER_AMI} since ") in summary
    assert "(8 days; its node group reached it: every node of the group was launched from it)" in summary


def test_a_template_version_the_group_has_not_reached_is_not_run(tmp_path, capsys):
    """The image was written into version 2 of the template (its `modified` moved), and the group's own state is
    still at version 1 (its rollout failed: NodeCreationFailure): the lane pins the image but has not run it."""

    def failed_rollout(by: dict[str, Any]) -> None:
        by["example-managed-ng0-launchTemplate/LaunchTemplate"]["outputs"]["latestVersion"] = 2
        by["example-managed-ng0-launchTemplate/LaunchTemplate"]["modified"] = "2024-11-30T10:00:00Z"

    config, summary = soak_config_of(recorded_state(tmp_path, failed_rollout), capsys)
    assert "example-managed-ng0" not in config["ranSince"]
    assert config["unreached"] == {
        "example-managed-ng0": {
            RECORDED_AMI: {"group": "example-managed-ng0", "groupVersion": "1", "templateVersion": "2", "failure": None}
        }
    }
    assert (
        f"lane 'example-managed-ng0': {RECORDED_AMI} pinned, but node group 'example-managed-ng0' has not reached "
        f"it (at launch template version 1, the image in version 2): not run there"
    ) in summary


@pytest.mark.parametrize(
    "version, says",
    [
        (None, None),  # the group's state records no version
        ("$Latest", "$Latest"),  # a symbolic version says nothing of which one the group runs
        (2, "2"),  # ahead of the template: not the version holding the image
        (1.0, None),  # a number where the state keeps text: read as the same version
        ({"1": 1}, None),  # no version at all
        ("x" * 500, "x" * 40 + "...(500 characters)"),  # a hostile state's text is shown cut short
    ],
)
def test_only_the_template_version_itself_proves_the_group_reached_it(tmp_path, capsys, version, says):
    def group_at(by: dict[str, Any]) -> None:
        template = by["example-managed-ng0/NodeGroup"]["outputs"]["launchTemplate"]
        if version is None:
            template.pop("version")
        else:
            template["version"] = version

    config, _ = soak_config_of(recorded_state(tmp_path, group_at), capsys)
    if version == 1.0:
        assert RECORDED_AMI in config["ranSince"]["example-managed-ng0"] and config["unreached"] == {}
        return
    assert config["unreached"]["example-managed-ng0"][RECORDED_AMI] == {
        "group": "example-managed-ng0",
        "groupVersion": says,
        "templateVersion": "1",
        "failure": None,
    }


# pulumi-terraform-bridge pkg/tfbridge/provider.go (commit 59de6c66), Update: when the Terraform provider's apply
# fails but returns a state, the bridge answers with that state and an initialization error; terraform-provider-aws
# internal/service/eks/node_group.go (resourceNodeGroupUpdate) fails a launch template version update whose EKS
# update ends Failed, with the new version in the state it returns (plugin SDK v2 keeps the planned values). The
# engine then records those outputs, moves `modified` and writes the reasons as the resource's `initErrors`
# (pulumi/pulumi pkg/resource/deploy/step.go, UpdateStep.Apply), and retries the update on the next `up`. So a
# failed rollout reads as the new version until a refresh or a retry: `initErrors` says it failed.
FAILED_UPDATE = (
    "updating urn:pulumi:staging::mixed-os-racks::eks:index:ManagedNodeGroup$aws:eks/nodeGroup:NodeGroup::"
    "rack-ng-1: 1 error occurred:\n\t* waiting for EKS Node Group (staging-rack:rack-ng-1-0a1b2c3) version "
    "update (4b1f): unexpected state 'Failed', wanted target 'Successful'. last error: NodeCreationFailure: "
    "Instances failed to join the kubernetes cluster"
)


def test_a_group_whose_state_records_a_failed_update_has_not_reached_its_version(tmp_path, capsys):
    def failed_update(by: dict[str, Any]) -> None:  # the provider reported the version it was sent, with the failure
        by["example-managed-ng0/NodeGroup"]["initErrors"] = [FAILED_UPDATE]

    config, summary = soak_config_of(recorded_state(tmp_path, failed_update), capsys)
    assert "example-managed-ng0" not in config["ranSince"]
    found = config["unreached"]["example-managed-ng0"][RECORDED_AMI]
    assert (found["groupVersion"], found["templateVersion"]) == ("1", "1")
    # on one line, its end kept (the provider's last error): "...last error: NodeCreationFailure: Instances failed ..."
    assert found["failure"].startswith("...") and found["failure"].endswith(FAILED_UPDATE[-60:])
    assert "NodeCreationFailure" in found["failure"] and "\n" not in found["failure"] and len(found["failure"]) == 203
    assert (
        f"lane 'example-managed-ng0': {RECORDED_AMI} pinned, but node group 'example-managed-ng0' has not reached it "
        f"(its last update failed: ..."
    ) in summary


def test_a_failed_rollout_recorded_with_the_new_version_still_refuses_the_ami(tmp_path, amis, prod_state):
    staging = export(tmp_path, "staging", with_gpu("staging", group={"ami_id": NEW_AMI}), amis, 8.04)
    doc = json.loads(staging.read_text())
    for res in doc["deployment"]["resources"]:
        if res["type"] == "aws:eks/nodeGroup:NodeGroup" and res["urn"].endswith("::rack-ng-1"):
            res["initErrors"] = [FAILED_UPDATE]
    staging.write_text(json.dumps(doc))
    code, result = preview(
        tmp_path,
        with_gpu("prod", group={"ami_id": NEW_AMI}),
        amis,
        "--soaked-in",
        str(staging),
        "--state",
        str(prod_state),
    )
    assert code == 1
    (refusal,) = soaked(result)
    assert refusal["message"].startswith(
        f"node group 'rack-ng-1': AMI {NEW_AMI} is new on lane 'rack-ng-1', and staging pins it there, but its node "
        f"group 'rack-ng-1' has not reached it (its state records the group's last update as failed: ..."
    )
    assert (
        "last error: NodeCreationFailure: Instances failed to join the kubernetes cluster: its rollout failed"
        in refusal["message"]
    )


def test_a_group_that_failed_to_roll_onto_a_new_ami_gives_it_no_soak(tmp_path, amis, prod_state):
    """staging wrote NEW_AMI into rack-ng-1's launch template 8 days ago, but the group never reached that version:
    prod's group may not take it; once staging's group reaches it (a refresh after EKS finished, or a new `up`),
    it counts from the group's own time."""
    staging = export(tmp_path, "staging", with_gpu("staging", group={"ami_id": NEW_AMI}), amis, 8.04)
    doc = json.loads(staging.read_text())
    by_name = {r["urn"].rsplit("::", 1)[-1] + "/" + r["type"]: r for r in doc["deployment"]["resources"]}
    template = by_name["rack-ng-1-launchTemplate/aws:ec2/launchTemplate:LaunchTemplate"]
    group = by_name["rack-ng-1/aws:eks/nodeGroup:NodeGroup"]
    assert (template["outputs"]["latestVersion"], group["outputs"]["launchTemplate"]["version"]) == (1, "1")
    template["outputs"]["latestVersion"] = 2
    staging.write_text(json.dumps(doc))
    prod_values = with_gpu("prod", group={"ami_id": NEW_AMI})
    code, result = preview(tmp_path, prod_values, amis, "--soaked-in", str(staging), "--state", str(prod_state))
    assert code == 1
    (refusal,) = soaked(result)
    assert refusal["message"].startswith(
        f"node group 'rack-ng-1': AMI {NEW_AMI} is new on lane 'rack-ng-1', and staging pins it there, but its node "
        f"group 'rack-ng-1' has not reached it (its state has the group at launch template version 1, the image in "
        f"version 2: its rollout failed or has not finished), so it has not run there"
    )
    group["outputs"]["launchTemplate"]["version"] = "2"
    group["modified"] = (clock.now() - timedelta(days=1.04)).isoformat()
    staging.write_text(json.dumps(doc))
    code, result = preview(tmp_path, prod_values, amis, "--soaked-in", str(staging), "--state", str(prod_state))
    assert code == 1 and "has run there in staging for 1 of 7 days" in soaked(result)[0]["message"]


def test_the_packages_export_carries_times_as_the_cli_writes_them(tmp_path, amis):
    """write_export stamps every resource it creates as a first `up` does, in Go's spelling: the same shape as the
    times of pulumi-eks's recorded state, and read back to the instant given."""
    run = run_program(REPO, stack_config("staging"), Catalog.load(amis), project=PROJECT, stack="staging")
    at = datetime(2026, 11, 29, 8, 0, 0, 123400, tzinfo=timezone.utc)
    doc = json.loads(write_export(run, tmp_path / "s.json", at=at).read_text())
    go_time = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]*[1-9])?Z")
    real = json.loads(gzip.open(RECORDED_MNG / "stack.json.gz").read())["deployment"]["resources"]
    assert all(go_time.fullmatch(r["modified"]) and go_time.fullmatch(r["created"]) for r in real)
    resources = doc["deployment"]["resources"]
    assert resources and {(r["created"], r["modified"]) for r in resources} == {("2026-11-29T08:00:00.1234Z",) * 2}
    assert state_time(resources[0]["modified"]) == at


def test_a_state_without_modified_times_proves_no_soak(tmp_path, amis, prod_state):
    code, doc = gate(tmp_path, amis, prod_state, {"ami_id": NEW_AMI}, None, {"ami_id": NEW_AMI})
    assert code == 1
    assert "its soak cannot be proven" in soaked(doc)[0]["message"]


def test_a_modified_time_in_the_future_proves_no_soak(tmp_path, amis, prod_state, capsys):
    """A time after the package's clock (a wrong clock where the state was written, or an edited state) would
    otherwise count as a soak of 0 days and pass a bar of 0 days."""
    code, doc = gate(tmp_path, amis, prod_state, {"ami_id": NEW_AMI}, -3, {"ami_id": NEW_AMI}, "--soak-days", "0")
    assert code == 1
    assert "which is in the future" in soaked(doc)[0]["message"] and "counts as not soaked" in soaked(doc)[0]["message"]
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, -3)
    assert main(["soak", str(staging)]) == 0
    summary = capsys.readouterr().err
    assert f"lane 'gpu': {NEW_AMI} since " in summary and "which is in the future: it proves no soak" in summary, (
        summary
    )


def test_a_created_time_in_the_future_proves_no_soak_either(tmp_path, amis, prod_state):
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 8.04)
    doc = json.loads(staging.read_text())
    for res in doc["deployment"]["resources"]:
        res["created"] = (clock.now() + timedelta(days=1)).isoformat()
    staging.write_text(json.dumps(doc))
    code, result = preview(
        tmp_path, with_gpu("prod", {"ami_id": NEW_AMI}), amis, "--soaked-in", str(staging), "--state", str(prod_state)
    )
    assert code == 1 and "which is in the future" in soaked(result)[0]["message"]


@pytest.mark.parametrize(
    "when, says",
    [
        ("9999-12-31T23:59:59.5Z", "since 9999-12-31T23:59:59Z, which is in the future: it proves no soak"),
        ("9999-12-31T23:59:59-01:00", "since 9999-12-31T23:59:59Z, which is in the future: it proves no soak"),
        ("0001-01-01T00:00:00+01:00", "since 0001-01-01T00:00:00Z ("),
    ],
)
def test_a_time_at_the_ends_of_the_calendar_is_evidence_like_any_other(tmp_path, amis, capsys, when, says):
    """The CLI reads these times (Go's time.Time holds years 0000 to 9999 and instants a zone moves past them); their
    UTC instant lies past what a Python datetime holds, so the soak summary keeps them at the nearest end."""
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, None)
    doc = json.loads(staging.read_text())
    for res in doc["deployment"]["resources"]:
        res["modified"] = res["created"] = when
    staging.write_text(json.dumps(doc))
    assert main(["soak", str(staging)]) == 0
    summary = capsys.readouterr().err
    assert f"lane 'gpu': {NEW_AMI} {says}" in summary and "Error" not in summary, summary


def test_soak_days_come_from_the_flag(tmp_path, amis, prod_state):
    code, doc = gate(tmp_path, amis, prod_state, {"ami_id": NEW_AMI}, 2.04, {"ami_id": NEW_AMI}, "--soak-days", "2")
    assert code == 0 and soaked(doc) == []
    code, doc = gate(tmp_path, amis, prod_state, {"ami_id": NEW_AMI}, 2.04, {"ami_id": NEW_AMI}, "--soak-days", "14")
    assert "2 of 14 days" in soaked(doc)[0]["message"]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--no-policy"], "--soaked-in is judged by the policy ami-soaked, in the policy pack: drop --no-policy"),
        (["--soak-days", "-1"], "argument --soak-days: '-1' is not a number of days (0 or more)"),
        (["--soak-days", "nan"], "argument --soak-days: 'nan' is not a number of days"),
    ],
)
def test_bad_soak_arguments_exit_2(tmp_path, amis, capsys, extra, says):
    staging = tmp_path / "staging.json"
    staging.write_text("{}")
    with pytest.raises(SystemExit) if "argument" in says else contextlib.nullcontext():
        code, _ = preview(tmp_path, stack_config("prod"), amis, "--soaked-in", str(staging), *extra)
        assert code == 2
    assert says in capsys.readouterr().err


def test_the_evidence_must_be_the_state_of_another_stack(tmp_path, amis, prod_state, capsys):
    code, _ = preview(tmp_path, stack_config("prod"), amis, "--soaked-in", str(prod_state))
    assert code == 2
    assert "is the state of stack 'prod' itself: give the state of the environment before it" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 3}')
    assert preview(tmp_path, stack_config("prod"), amis, "--soaked-in", str(bad))[0] == 2
    assert f"error: {bad}: no deployment, so not a `pulumi stack export` file" in capsys.readouterr().err


def test_a_pack_without_the_policy_is_named(tmp_path, amis, prod_state, capsys):
    pack = tmp_path / "pack"
    shutil.copytree(REPO / "components" / "pack" / "bundled", pack, ignore=shutil.ignore_patterns("__pycache__"))
    (pack / "__main__.py").write_text(
        "from mixed_os_racks.pack.policies import policies, serve\n"
        "import mixed_os_racks.pack.policies as p\n"
        "p.policies = lambda real=policies: [x for x in real() if x.name != 'ami-soaked']\n"
        "serve()\n"
    )
    staging = export(tmp_path, "staging", with_gpu("staging"), amis, 30)
    code, _ = preview(tmp_path, stack_config("prod"), amis, "--soaked-in", str(staging), "--policy-pack", str(pack))
    assert code == 2
    assert "--soaked-in: no policy pack that ran has the policy ami-soaked" in capsys.readouterr().err


# ---- the same gate in `pulumi preview`: the pack's config, written by `mixed-os-racks soak` -----------------


def test_soak_writes_the_config_the_pack_reads(tmp_path, amis, prod_state, capsys):
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 2.04)
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"pinned-ami-age": "advisory", SOAKED: {"enforcementLevel": "mandatory", "soakDays": 3}})
    )
    assert main(["soak", str(staging), "--state", str(prod_state), "--policy-pack-config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"lane 'gpu': {NEW_AMI} since " in out and "(2 days; its EC2NodeClass pins it" in out
    assert f"wrote {config} (ami-soaked)" in out
    doc = json.loads(config.read_text())
    assert doc["pinned-ami-age"] == "advisory"  # the file's other entries are kept
    entry = doc[SOAKED]
    assert (entry["enforcementLevel"], entry["soakDays"], entry["environment"]) == ("mandatory", 3, "staging")
    assert set(entry["ranSince"]["gpu"]) == {NEW_AMI} and entry["running"] == [GPU_AMI]
    # the pack, given only this config (as `pulumi preview --policy-pack-config` gives it): 2 of 3 days
    code, result = preview(
        tmp_path,
        with_gpu("prod", {"ami_id": NEW_AMI}),
        amis,
        "--policy-pack",
        str(REPO / "policies"),
        "--policy-pack-config",
        str(config),
    )
    assert code == 1 and "2 of 3 days" in soaked(result)[0]["message"]
    capsys.readouterr()

    assert main(["soak", str(staging)]) == 0  # without a file: the config on stdout, the summary on stderr
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert set(printed) == {SOAKED} and printed[SOAKED]["running"] == [] and "soakDays 7" in captured.err


def test_without_evidence_the_gate_is_off(tmp_path, amis, capsys):
    """No environment's evidence in the config: nothing is judged (dev and staging preview as before), and the
    output says nothing of the gate."""
    code, doc = preview(tmp_path, with_gpu("prod", {"ami_id": NEW_AMI}), amis)
    assert code == 0 and soaked(doc) == []
    assert "Soak gate" not in capsys.readouterr().out


@given(st.floats(min_value=0, max_value=60 * DAY_SECONDS), st.floats(min_value=0, max_value=30))
def test_an_ami_passes_exactly_when_it_has_run_its_days(age, days):
    now = datetime(2026, 12, 1, tzinfo=timezone.utc)
    since = (now - timedelta(seconds=age)).isoformat()
    evidence = Evidence("staging", {"gpu": {NEW_AMI: since}}, days)
    problem = evidence.problem("karpenter nodepool 'gpu'", "gpu", NEW_AMI, now)
    run = (now - datetime.fromisoformat(since)).total_seconds()
    assert (problem is None) == (run >= days * DAY_SECONDS)
    if problem:
        assert f"for {math.floor(run / DAY_SECONDS)} of {days:g} day" in problem
    assert evidence.problem("x", "gpu", GPU_AMI, now) is not None  # another AMI never ran
    assert Evidence("staging", {}, days, frozenset({GPU_AMI})).problem("x", "gpu", GPU_AMI, now) is None


# ---- promote ---------------------------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path) -> Path:
    """A copy of the rack's project with its prod stack file (and its comments)."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("Pulumi.yaml", "__main__.py", "Pulumi.prod.yaml"):
        shutil.copy(REPO / name, folder / name)
    return folder


def promote(project: Path, staging: Path, *extra: str) -> int:
    return main(["promote", "--from", str(staging), "--stack", "prod", "--cwd", str(project), *extra])


def test_promote_writes_a_soaked_ami_and_only_that(tmp_path, amis, project, capsys):
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 8.04)
    before = (project / "Pulumi.prod.yaml").read_text()
    assert promote(project, staging) == 0
    out = capsys.readouterr().out
    assert (
        f"karpenter nodepool 'gpu': rack:additional_karpenter_nodepools_config[0].ami_id: {GPU_AMI} -> {NEW_AMI} "
        f"(ran 8 days on lane 'gpu' in staging)"
    ) in out
    assert "node group 'rack-ng-1': staging has no ami_id on lane 'rack-ng-1': nothing to promote" in out
    after = (project / "Pulumi.prod.yaml").read_text()
    assert after == before.replace(f"ami_id: {GPU_AMI}", f"ami_id: {NEW_AMI}")  # one line; comments and layout kept
    assert promote(project, staging) == 0  # again: nothing to do
    assert f"runs {NEW_AMI} already, as staging does" in capsys.readouterr().out


def test_promote_never_writes_an_unsoaked_ami(tmp_path, amis, project, capsys):
    staging = export(
        tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}, group={"ami_id": NEWER_AMI}), amis, 2.04
    )
    before = (project / "Pulumi.prod.yaml").read_bytes()
    assert promote(project, staging) == 1
    out = capsys.readouterr().out
    assert (
        f"not promoted: karpenter nodepool 'gpu': AMI {NEW_AMI} is new on lane 'gpu', and has run there in staging for "
        f"2 of 7 days" in out
    )
    assert f"not promoted: node group 'rack-ng-1': AMI {NEWER_AMI}" in out and "nothing written" in out
    assert (project / "Pulumi.prod.yaml").read_bytes() == before
    # a lower bar, from the pack config the gate reads
    config = tmp_path / "config.json"
    config.write_text(json.dumps({SOAKED: {"soakDays": 2}}))
    assert promote(project, staging, "--lane", "gpu", "--policy-pack-config", str(config)) == 0
    assert f"ami_id: {NEW_AMI}" in (project / "Pulumi.prod.yaml").read_text()
    assert "rack-ng-1" not in capsys.readouterr().out  # --lane: only that lane


def test_promote_never_writes_an_ami_a_node_group_failed_to_roll_onto(tmp_path, amis, project, capsys):
    """staging's template has held NEWER_AMI for 8 days, but its group is still at the version before: not promoted."""
    staging = export(tmp_path, "staging", with_gpu("staging", group={"ami_id": NEWER_AMI}), amis, 8.04)
    doc = json.loads(staging.read_text())
    for res in doc["deployment"]["resources"]:
        if res["type"] == "aws:ec2/launchTemplate:LaunchTemplate" and res["urn"].endswith("::rack-ng-1-launchTemplate"):
            res["outputs"]["latestVersion"] = 3
    staging.write_text(json.dumps(doc))
    before = (project / "Pulumi.prod.yaml").read_bytes()
    assert promote(project, staging, "--lane", "rack-ng-1") == 1
    out = capsys.readouterr().out
    assert (
        f"not promoted: node group 'rack-ng-1': AMI {NEWER_AMI} is new on lane 'rack-ng-1', and staging pins it "
        f"there, but its node group 'rack-ng-1' has not reached it (its state has the group at launch template "
        f"version 1, the image in version 3"
    ) in out
    assert (project / "Pulumi.prod.yaml").read_bytes() == before


def test_promote_to_a_canary_then_to_the_lane(tmp_path, amis, project, capsys):
    """The flow: staging's canary soaks the candidate, prod's canary takes it; staging's lane takes it (its clock
    starts again: the resource holding it changed), and prod's lane takes what its own canary runs."""
    stack = project / "Pulumi.prod.yaml"
    trial = export(tmp_path, "staging", with_gpu("staging", {"canary_ami_id": NEW_AMI}), amis, 8.04)
    assert promote(project, trial, "--canary") == 0
    pool = yaml.safe_load(stack.read_text())["config"][POOLS_KEY][0]
    assert (pool["ami_id"], pool["canary_ami_id"]) == (GPU_AMI, NEW_AMI)
    assert f".canary_ami_id: (none) -> {NEW_AMI} (ran 8 days on lane 'gpu' in staging)" in capsys.readouterr().out
    prod = export(tmp_path, "prod", yaml.safe_load(stack.read_text())["config"], amis, 2)  # prod's up, with its canary

    promoted = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 0.5)
    assert promote(project, promoted) == 1  # by staging's evidence alone: its lane has had it half a day
    assert "has run there in staging for 0 of 7 days" in capsys.readouterr().out
    assert promote(project, promoted, "--state", str(prod)) == 0  # prod's own canary runs it: no soak needed
    out = capsys.readouterr().out
    assert (
        f".ami_id: {GPU_AMI} -> {NEW_AMI}; canary_ami_id removed (its canary ran it) (prod's own state runs it)" in out
    )
    pool = yaml.safe_load(stack.read_text())["config"][POOLS_KEY][0]
    assert pool["ami_id"] == NEW_AMI and "canary_ami_id" not in pool
    code, doc = preview(
        tmp_path, yaml.safe_load(stack.read_text())["config"], amis, "--soaked-in", str(promoted), "--state", str(prod)
    )
    assert code == 0, soaked(doc)  # what promote wrote passes the gate


def test_promote_writes_the_convox_json_form_too(tmp_path, amis, project):
    stack = project / "Pulumi.prod.yaml"
    doc = yaml.safe_load(stack.read_text())
    doc["config"][POOLS_KEY] = json.dumps(doc["config"][POOLS_KEY])
    stack.write_text(yaml.safe_dump(doc))
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 8.04)
    assert promote(project, staging) == 0
    written = yaml.safe_load(stack.read_text())["config"][POOLS_KEY]
    assert isinstance(written, str) and json.loads(written)[0]["ami_id"] == NEW_AMI


def test_promote_writes_through_a_symlinked_stack_file(tmp_path, amis, project, capsys):
    kept = project / "stacks" / "prod.yaml"
    kept.parent.mkdir()
    (project / "Pulumi.prod.yaml").rename(kept)
    (project / "Pulumi.prod.yaml").symlink_to(Path("stacks") / "prod.yaml")
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 8.04)
    assert promote(project, staging) == 0
    assert (project / "Pulumi.prod.yaml").is_symlink() and f"ami_id: {NEW_AMI}" in kept.read_text()


def test_promote_from_another_projects_state_warns_naming_both(tmp_path, amis, project, capsys):
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 8.04)
    staging.write_text(staging.read_text().replace(f"::{PROJECT}::", "::other-racks::"))
    assert promote(project, staging) == 0
    captured = capsys.readouterr()
    assert (
        f"warning: --from {staging}: is the state of project 'other-racks', not of project '{PROJECT}'" in captured.err
    ), captured.err
    assert f"ami_id: {NEW_AMI}" in (project / "Pulumi.prod.yaml").read_text()


def test_promote_names_what_it_cannot_do(tmp_path, amis, project, capsys):
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 8.04)
    assert promote(project, staging, "--lane", "gpu-typo") == 2
    err = capsys.readouterr().err
    assert "--lane gpu-typo: " in err and "(its pools and node groups: gpu, rack-ng-1)" in err
    prod = export(tmp_path, "prod", stack_config("prod"), amis, 30)
    assert promote(project, prod) == 2
    assert "is the state of stack 'prod' itself" in capsys.readouterr().err
    (project / "Pulumi.prod.yaml").write_text(
        "config:\n  rack:cluster_name: prod-rack\n  rack:karpenter_node_os: windows\n"
    )
    assert promote(project, staging) == 2
    assert "rack:karpenter_node_os" in capsys.readouterr().err


def test_promote_writes_nothing_when_the_change_would_reach_further(tmp_path, amis, project, capsys):
    """The second pool's ami_id is an alias of the first's: writing the first would change both, so the edit is
    refused and the file is left as it was."""
    stack = project / "Pulumi.prod.yaml"
    text = stack.read_text()
    pools = text.index("  rack:additional_karpenter_nodepools_config:")
    anchored = text.replace(f"ami_id: {GPU_AMI}", f"ami_id: &gpu-ami {GPU_AMI}", 1)
    second = "    - name: gpu2\n      instance_families: g5\n      ami_id: *gpu-ami\n      disk: 200\n"
    end = anchored.index("  # the seeds' GPU inference lane", pools)
    stack.write_text(anchored[:end] + second + anchored[end:])
    before = stack.read_bytes()
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 8.04)
    assert promote(project, staging, "--lane", "gpu") == 2
    assert (
        f"error: {stack}: cannot write rack:additional_karpenter_nodepools_config[0] without changing more of the "
        f"file than that: set it by hand (nothing was written)" in capsys.readouterr().err
    )
    assert stack.read_bytes() == before
