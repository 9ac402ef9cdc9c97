"""``preview --state``, ``guard`` and ``analyze`` on files the real Pulumi CLI wrote (``tests/recorded``).

Upstream facts these tests pin (read upstream, in our words):

- The engine asks the resource's provider to ``Check`` the program's inputs, with the old inputs, and the
  provider's ``Diff`` compares the checked inputs with the old state (pulumi
  ``pkg/resource/deploy/step_generator.go``). A bridged provider's ``Check`` lists the defaults it filled
  in ``__defaults`` at every object level and adds ``tagsAll``; pulumi-kubernetes' ``Check`` auto-names an
  object, and normalizes built-in kinds (an empty list is gone, a Secret's ``stringData`` becomes base64
  ``data``). The recorded ``Check`` calls show exactly that.
- A tainted resource is replaced whatever its inputs (``isTargetedReplace``); so is one pending replacement
  (``continueStepsFromDiff``). Deleting a protected resource fails the preview ("cannot be deleted because it is
  protected", ``step.go``); so does replacing one the program still protects. Views (``viewOf``) are never
  deleted on their own (``GenerateDeletes`` skips them).
- A file backend keeps ``{"version", "checkpoint": {"stack", "latest": <deployment>}}``
  (``apitype.VersionedCheckpoint``); the CLI reads deployment versions 1 to 4, migrating 1 and 2
  (``pkg/resource/stack/checkpoint.go``, ``migrate``); Go writes an empty list as ``null``.
- ``pulumi preview --json`` with ``PULUMI_ENABLE_STREAMING_JSON_PREVIEW`` writes one engine event a line
  (``apitype.EngineEvent``: ``resourcePreEvent.metadata`` with ``op``, ``urn``, ``old``, ``new``, ``keys``,
  ``diffs``, ``detailedDiff``; ``summaryEvent.resourceChanges``); the digest leaves ``steps`` out when there
  are none (``omitempty``); an unknown value is ``04da6b54-80e4-46f7-96ec-b56ff0331ba9``.
- ``pulumi policy analyze --file`` gives each resource's inputs to ``Analyze`` and its outputs to
  ``AnalyzeStack``, a secret it cannot decrypt as ``[secret]`` (``pkg/resource/deploy/analyze_snapshot.go``).
- terraform-provider-aws: an ``aws_eks_access_policy_association`` has no Update (every field forces a new
  one); ``aws_sqs_queue_policy``'s ``queue_url`` forces a new one; removing a cluster's
  ``encryption_config`` recreates it (``ForceNewIfChange``). pulumi-kubernetes ``diff.go``: a Pod's
  containers' ``image`` and a PersistentVolume's volume source replace it.
- Karpenter: an EC2NodeClass's ``networkInterfaces``, ``cpuOptions``, ``context``, ``connectionTracking``
  and ``placementGroupSelector`` are in its drift hash; a new subnet or security group selection drifts
  the nodes it no longer selects (``drift.go``); a budget with ``reasons: []`` limits no reason
  (``nodepool.go``).
"""

from __future__ import annotations

import copy
import functools
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings, strategies as st

import recorded_runs as rr
from mixed_os_racks.cli import main
from mixed_os_racks.offline import run_program
from mixed_os_racks.offline.plan import UNKNOWN, changed_paths, normal
from mixed_os_racks.offline.providerdiff import checked, old_view, without_defaults
from mixed_os_racks.offline.stackexport import write_export
from conftest import REPO

MNG = "TestProviderUpgrade/managed-nodegroups/3.0.0"
NODEGROUP = "aws:eks/nodeGroup:NodeGroup"


def _preview(project: Path, stack: str, state: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = project / "plan.json"
    code = main(
        [
            "preview",
            "--cwd",
            str(project),
            "--stack",
            stack,
            "--state",
            str(state),
            "--no-policy",
            "--json",
            str(out),
            *extra,
        ]
    )
    return code, (json.loads(out.read_text()) if out.exists() else {})


def _write_state(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _urn(run: str, type_: str, name: str) -> str:
    return next(
        e["response"]["urn"]
        for e in rr.registrations(run)
        if (e["request"]["type"], e["request"]["name"]) == (type_, name)
    )


# ---- every recorded run, replayed against the state it left ------------------------------------------------


@pytest.mark.parametrize("run", rr.RUNS)
def test_each_recorded_run_replays_against_its_own_state_as_unchanged(run, tmp_path, capsys):
    project, stack = rr.replay_project(run, tmp_path / "project")
    state = rr.state_file(run, tmp_path)
    code, doc = _preview(project, stack, state)
    out = capsys.readouterr().out
    assert code == 0, out
    assert set(doc["summary"]) == {"same"}, [
        (r["name"], r["op"], r["diff"]) for r in doc["resources"] if r["op"] != "same"
    ]
    assert doc["violations"] == [] and doc["errors"] == []
    assert "to update" not in out and "to replace" not in out and "to create" not in out and "to delete" not in out


def test_the_replays_cover_what_made_them_differ(tmp_path):
    """The corpus holds each cause: nested ``__defaults``, ``tagsAll``, references stored as ids, policies stored
    as text, and ``null`` dependencies (CLI v3.102 and older)."""
    resources = [r for run in rr.RUNS for r in rr.state_resources(rr.state_doc(run))]
    nested = [
        r for r in resources if any(isinstance(v, dict) and "__defaults" in v for v in (r.get("inputs") or {}).values())
    ]
    assert {r["type"] for r in nested} >= {NODEGROUP, "aws:ec2/launchTemplate:LaunchTemplate"}
    assert any("tagsAll" in (r.get("inputs") or {}) for r in resources)
    assert any(isinstance((r.get("inputs") or {}).get("assumeRolePolicy"), str) for r in resources)
    old = rr.state_doc("TestProviderUpgrade/managed-nodegroups/1.0.4")
    assert any(None in (r.get("propertyDependencies") or {}).values() for r in rr.state_resources(old))
    role_refs = [
        e for e in rr.registrations(MNG) if e["request"]["type"] == "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
    ]
    assert role_refs and all("urn" in e["request"]["object"]["role"] for e in role_refs)  # a reference, stored as an id


@pytest.mark.parametrize("run", rr.RUNS)
def test_what_each_recorded_provider_check_returned_is_no_change_to_the_plan(run):
    """Given what the provider's ``Check`` returned as the state's inputs, the same program inputs plan as no
    change: every key a real ``Check`` added is one the plan knows a provider adds."""
    for entry in rr.checks(run):
        request, response = entry["request"], entry["response"]
        if response.get("failures") or "inputs" not in response:
            continue
        type_ = request["urn"].split("::")[2].rsplit("$", 1)[-1]
        old = old_view(type_, normal(response["inputs"]), UNKNOWN)
        new = checked(type_, old, normal(request.get("news") or {}), UNKNOWN)
        assert changed_paths(without_defaults(old), without_defaults(new)) == [], (request["urn"], request.get("news"))


# ---- what the engine does that inputs do not say ---------------------------------------------------------


def _mng_state(tmp_path: Path, edit) -> Path:
    doc = rr.state_doc(MNG)
    edit(doc)
    return _write_state(tmp_path / "state.json", doc)


def _resource(doc: dict[str, Any], type_: str, name: str) -> dict[str, Any]:
    return next(r for r in rr.state_resources(doc) if r["type"] == type_ and r["urn"].endswith("::" + name))


def test_a_tainted_managed_node_group_is_replaced_and_refused_as_a_lane_removal(tmp_path, capsys):
    def taint(doc: dict[str, Any]) -> None:
        doc["version"], doc["features"] = 4, ["taint"]
        _resource(doc, NODEGROUP, "example-managed-ng3")["taint"] = True

    state = _mng_state(tmp_path, taint)
    project, stack = rr.replay_project(MNG, tmp_path / "project")
    code, doc = _preview(project, stack, state)
    out = capsys.readouterr().out
    assert code == 1, out
    group = next(r for r in doc["resources"] if r["type"] == NODEGROUP and r["name"] == "example-managed-ng3")
    assert (group["op"], group["replaceReasons"], group["note"]) == ("replace", ["id"], "tainted in the state")
    assert doc["summary"] == {"replace": 1, "same": len(doc["resources"]) - 1}
    removal = [v for v in doc["violations"] if v["policy"] == "lane-removal"]
    assert [v["lane"] for v in removal] == ["example-managed-ng3"]
    assert "its managed node group is replaced" in removal[0]["message"]
    assert "[tainted in the state]" in out and "+-  " in out

    code, doc = _preview(project, stack, state, "--allow-lane-removal", "example-managed-ng3")
    assert code == 0 and [v["policy"] for v in doc["violations"]] == []


def test_a_group_pending_replacement_is_created_again_without_a_lane_removal(tmp_path, capsys):
    state = _mng_state(
        tmp_path, lambda doc: _resource(doc, NODEGROUP, "example-managed-ng1").update(pendingReplacement=True)
    )
    project, stack = rr.replay_project(MNG, tmp_path / "project")
    code, doc = _preview(project, stack, state)
    group = next(r for r in doc["resources"] if r["type"] == NODEGROUP and r["name"] == "example-managed-ng1")
    assert code == 0 and group["op"] == "replace" and group["note"].startswith("pending replacement")
    assert doc["violations"] == []  # a delete-before-replace deleted it already: the plan removes nothing

    # not registered any more: removed from the state, never deleted again
    ng1 = _urn(MNG, NODEGROUP, "example-managed-ng1")
    project, stack = rr.replay_project(MNG, tmp_path / "dropped", drop=[ng1])
    code, doc = _preview(project, stack, state)
    assert code == 0 and next(r for r in doc["resources"] if r["urn"] == ng1)["op"] == "discard"


def test_deleting_or_replacing_a_protected_resource_fails_as_the_real_preview_does(tmp_path, capsys):
    ng2 = _urn(MNG, NODEGROUP, "example-managed-ng2")
    state = _mng_state(tmp_path, lambda doc: _resource(doc, NODEGROUP, "example-managed-ng2").update(protect=True))
    project, stack = rr.replay_project(MNG, tmp_path / "project", drop=[ng2])
    code, doc = _preview(project, stack, state)
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert f'error: resource "{ng2}" cannot be deleted because it is protected' in captured.err
    assert "1 to delete" in captured.out  # the plan is shown, then the error
    assert doc["errors"] and "Traceback" not in captured.err

    # replaced while the program still protects it: the engine refuses too
    def taint_and_protect(doc: dict[str, Any]) -> None:
        doc["version"], doc["features"] = 4, ["taint"]
        _resource(doc, NODEGROUP, "example-managed-ng2").update(protect=True, taint=True)

    def protect(entry: dict[str, Any]) -> dict[str, Any]:
        if entry["response"]["urn"] == ng2:
            entry = copy.deepcopy(entry)
            entry["request"]["protect"] = True
        return entry

    state = _mng_state(tmp_path, taint_and_protect)
    project, stack = rr.replay_project(MNG, tmp_path / "protected", edit=protect)
    code, doc = _preview(project, stack, state)
    err = capsys.readouterr().err
    assert (
        code == 2
        and f'error: unable to replace resource "{ng2}" (tainted in the state) as it is marked for protection' in err
    )


def test_a_view_goes_with_its_owner_and_deleted_with_is_still_a_removal(tmp_path, capsys):
    ng4 = _urn(MNG, NODEGROUP, "example-managed-ng4")
    view_urn = (
        ng4.replace("aws:eks/nodeGroup:NodeGroup::", "aws:eks/nodeGroup:NodeGroup$kubernetes:core/v1:Node::")
        + "-node-1"
    )

    def add_view(doc: dict[str, Any]) -> None:
        doc["version"], doc["features"] = 4, ["views"]
        group = _resource(doc, NODEGROUP, "example-managed-ng4")
        group["deletedWith"] = _urn(MNG, "aws:eks/cluster:Cluster", "example-managed-nodegroups-eksCluster")
        rr.state_resources(doc).append(
            {
                "urn": view_urn,
                "custom": True,
                "id": "node-1",
                "type": "kubernetes:core/v1:Node",
                "parent": ng4,
                "viewOf": ng4,
                "inputs": {},
                "outputs": {},
            }
        )

    state = _mng_state(tmp_path, add_view)
    project, stack = rr.replay_project(MNG, tmp_path / "project")
    code, doc = _preview(project, stack, state)
    assert code == 0 and next(r for r in doc["resources"] if r["urn"] == view_urn)["op"] == "same"

    project, stack = rr.replay_project(MNG, tmp_path / "dropped", drop=[ng4])
    code, doc = _preview(project, stack, state)
    ops = {r["urn"]: (r["op"], r.get("note", "")) for r in doc["resources"]}
    assert ops[view_urn] == ("delete", f"a view of {ng4}")
    assert ops[ng4] == ("delete", "")  # the cluster it is deleted with stays: its provider deletes it
    assert code == 1 and [v["lane"] for v in doc["violations"] if v["policy"] == "lane-removal"] == [
        "example-managed-ng4"
    ]


# ---- the files the real tools write -----------------------------------------------------------------------


def test_a_file_backend_checkpoint_is_read(tmp_path, capsys):
    export = rr.state_doc(MNG)
    checkpoint = {"version": 3, "checkpoint": {"stack": "test", "config": {}, "latest": export["deployment"]}}
    state = _write_state(tmp_path / "test.json", checkpoint)
    project, stack = rr.replay_project(MNG, tmp_path / "project")
    code, doc = _preview(project, stack, state)
    assert code == 0 and set(doc["summary"]) == {"same"}

    never = _write_state(tmp_path / "new.json", {"version": 3, "checkpoint": {"stack": "test", "latest": None}})
    code, doc = _preview(project, stack, never)  # a stack never deployed: everything is created
    assert code == 0 and set(doc["summary"]) == {"create"}


@pytest.mark.parametrize("name", ["v0", "v1", "v3", "v4", "secrets"])
def test_pulumis_own_checkpoints_of_every_version_are_analyzed(name, tmp_path, capsys):
    state = rr.RECORDED / "pulumi-checkpoints" / f"checkpoint-{name}.json"
    assert main(["analyze", "--state", str(state), "--cwd", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Analyzing the state of stack foo" in out and "30 resources" in out


def test_a_checkpoint_with_a_feature_the_cli_does_not_know_is_refused(tmp_path, capsys):
    state = rr.RECORDED / "pulumi-checkpoints" / "checkpoint-v4-unsupported-feature.json"
    assert main(["analyze", "--state", str(state), "--cwd", str(tmp_path)]) == 2
    assert "uses deployment features this tool does not know: unsupported-feature" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name,summary", [("stack-output-resource-diff", {"same": 3}), ("destroy-with-components", {"delete": 2, "same": 1})]
)
def test_a_streaming_preview_of_engine_events_is_read(name, summary, tmp_path, capsys):
    events = rr.RECORDED / "pulumi-display" / f"{name}.json"
    assert main(["guard", str(events), "--json", str(tmp_path / "verdicts.json")]) == 0
    doc = json.loads((tmp_path / "verdicts.json").read_text())
    assert doc["violations"] == [] and doc["changeSummary"] == summary
    assert "No lane is removed or rolled." in capsys.readouterr().out


def _events_of(digest: dict[str, Any]) -> str:
    """A digest's steps as the engine streams them (``apitype.EngineEvent`` lines)."""
    lines = [{"sequence": 0, "timestamp": 1, "preludeEvent": {"config": {}}}]
    for n, step in enumerate(digest["steps"], 1):
        metadata = {
            "op": step["op"],
            "urn": step["urn"],
            "type": step["urn"].split("::")[2].rsplit("$", 1)[-1],
            "old": step.get("oldState"),
            "new": step.get("newState"),
            "keys": step.get("replaceReasons"),
            "diffs": step.get("diffReasons"),
            "detailedDiff": step.get("detailedDiff"),
            "logical": True,
            "provider": "",
        }
        lines.append({"sequence": n, "timestamp": 1, "resourcePreEvent": {"metadata": metadata, "planning": True}})
    lines.append(
        {
            "sequence": 999,
            "timestamp": 2,
            "summaryEvent": {
                "maybeCorrupt": False,
                "durationSeconds": 1,
                "resourceChanges": digest.get("changeSummary") or {},
            },
        }
    )
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.mark.parametrize("fixture", ["pool-removed", "nodegroup-instance-type", "ami-bump"])
def test_the_guard_gives_a_streamed_preview_the_verdicts_of_its_digest(fixture, tmp_path, capsys):
    digest_path = REPO / "tests" / "fixtures" / "preview" / f"{fixture}.json"
    streamed = tmp_path / "events.json"
    streamed.write_text(_events_of(json.loads(digest_path.read_text())))
    codes = [
        main(["guard", str(p), "--json", str(tmp_path / f"{n}.json")]) for n, p in enumerate((digest_path, streamed))
    ]
    verdicts = [json.loads((tmp_path / f"{n}.json").read_text()) for n in range(2)]
    assert codes[0] == codes[1] and verdicts[0] == verdicts[1]


def test_a_preview_with_nothing_to_do_has_no_steps_and_is_judged(tmp_path, capsys):
    path = _write_state(tmp_path / "preview.json", {"changeSummary": {"same": 83}, "duration": 1234})
    assert main(["guard", str(path)]) == 0
    out = capsys.readouterr().out
    assert "(0 steps)" in out and "same: 83" in out
    nulls = _write_state(tmp_path / "nulls.json", {"steps": None, "changeSummary": {"same": 1}})
    assert main(["guard", str(nulls)]) == 0


def test_an_unknown_group_name_in_a_preview_is_no_fixed_name(tmp_path, capsys):
    doc = json.loads((REPO / "tests" / "fixtures" / "preview" / "nodegroup-instance-type.json").read_text())
    for step in doc["steps"]:
        if step["urn"].split("::")[2].endswith(NODEGROUP) and step.get("newState"):
            step["newState"]["inputs"]["nodeGroupName"] = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
            step["newState"]["inputs"]["__defaults"] = []
    path = _write_state(tmp_path / "preview.json", doc)
    assert main(["guard", str(path)]) == 1
    out = capsys.readouterr().out
    assert "Pulumi creates the replacement group first" in out and "04da6b54" not in out


# ---- replacements and drift the providers' sources name ----------------------------------------------------


def _custom(type_: str, name: str, inputs: dict[str, Any], stack: str = "s", project: str = "p") -> dict[str, Any]:
    urn = f"urn:pulumi:{stack}::{project}::{type_}::{name}"
    return {"request": {"type": type_, "name": name, "custom": True, "object": inputs}, "response": {"urn": urn}}


def _project_of(tmp_path: Path, entries: list[dict[str, Any]]) -> tuple[Path, str]:
    folder = tmp_path / "project"
    folder.mkdir(exist_ok=True)
    (folder / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    (folder / "Pulumi.s.yaml").write_text("config: {}\n")
    (folder / "__main__.py").write_text(rr.REPLAY_PROGRAM)
    (folder / "registrations.json").write_text(json.dumps(entries))
    return folder, "s"


def _state_of(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    resources = [{"urn": "urn:pulumi:s::p::pulumi:pulumi:Stack::p-s", "custom": False, "type": "pulumi:pulumi:Stack"}]
    for e in entries:
        resources.append(
            {
                "urn": e["response"]["urn"],
                "custom": True,
                "id": e["request"]["name"] + "-id",
                "type": e["request"]["type"],
                "inputs": e["request"]["object"],
                "outputs": e["request"]["object"],
            }
        )
    return _write_state(tmp_path / "state.json", {"version": 3, "deployment": {"manifest": {}, "resources": resources}})


@pytest.mark.parametrize(
    "type_,old,new,op",
    [
        (
            "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
            {
                "clusterName": "c",
                "principalArn": "arn:aws:iam::1:role/a",
                "policyArn": "arn:p",
                "accessScope": {"type": "cluster"},
            },
            {
                "clusterName": "c",
                "principalArn": "arn:aws:iam::1:role/a",
                "policyArn": "arn:p",
                "accessScope": {"type": "namespace", "namespaces": ["x"]},
            },
            "replace",
        ),
        (
            "aws:sqs/queuePolicy:QueuePolicy",
            {"queueUrl": "https://q/1", "policy": "{}"},
            {"queueUrl": "https://q/2", "policy": "{}"},
            "replace",
        ),
        (
            "aws:eks/cluster:Cluster",
            {"roleArn": "r", "encryptionConfig": {"resources": ["secrets"], "provider": {"keyArn": "k"}}},
            {"roleArn": "r"},
            "replace",
        ),
        (
            "aws:eks/cluster:Cluster",
            {"roleArn": "r"},
            {"roleArn": "r", "encryptionConfig": {"resources": ["secrets"], "provider": {"keyArn": "k"}}},
            "update",
        ),
        (
            "kubernetes:core/v1:Pod",
            {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "x:1"}]}},
            {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "x:2"}]}},
            "replace",
        ),
        (
            "kubernetes:core/v1:Pod",
            {"metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {"containers": [{"name": "a"}]}},
            {"metadata": {"name": "p", "labels": {"a": "2"}}, "spec": {"containers": [{"name": "a"}]}},
            "update",
        ),
        (
            "kubernetes:core/v1:PersistentVolume",
            {"metadata": {"name": "v"}, "spec": {"csi": {"driver": "a", "volumeHandle": "1"}}},
            {"metadata": {"name": "v"}, "spec": {"csi": {"driver": "a", "volumeHandle": "2"}}},
            "replace",
        ),
        (
            "aws:iam/role:Role",
            {
                "name": "r",
                "assumeRolePolicy": json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {"Effect": "Allow", "Action": ["sts:AssumeRole"], "Principal": {"AWS": "111122223333"}}
                        ],
                    }
                ),
            },
            {
                "name": "r",
                "assumeRolePolicy": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": "sts:AssumeRole",
                            "Principal": {"AWS": "arn:aws:iam::111122223333:root"},
                        }
                    ],
                },
            },
            "same",
        ),
        (
            "aws:iam/role:Role",
            {"name": "r", "assumeRolePolicy": json.dumps({"Version": "2012-10-17", "Statement": []})},
            {
                "name": "r",
                "assumeRolePolicy": {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "*"}]},
            },
            "update",
        ),
    ],
)
def test_what_the_providers_replace_update_or_read_as_equal(type_, old, new, op, tmp_path, capsys):
    state = _state_of(tmp_path, [_custom(type_, "x", old)])
    project, stack = _project_of(tmp_path, [_custom(type_, "x", new)])
    code, doc = _preview(project, stack, state)
    assert code == 0 and next(r for r in doc["resources"] if r["name"] == "x")["op"] == op, doc["resources"]


def test_a_reference_equals_the_id_the_state_holds_until_its_resource_is_replaced(tmp_path, capsys):
    role = _custom("aws:iam/role:Role", "role", {"name": "role-1", "assumeRolePolicy": "{}"})
    attach = _custom(
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "attach",
        {
            "policyArn": "arn:p",
            "role": {
                "4dabf18193072939515e22adb298388d": "5cf8f73096256a8f31e491e813e4eb8e",
                "urn": role["response"]["urn"],
                "id": "role-1",
            },
        },
    )
    stored = copy.deepcopy(attach)
    stored["request"]["object"]["role"] = "role-id"  # the state keeps the role's id (``_state_of`` gives ids <name>-id)
    state = _state_of(tmp_path, [role, stored])
    project, stack = _project_of(tmp_path, [role, attach])
    code, doc = _preview(project, stack, state)
    assert code == 0 and set(doc["summary"]) == {"same"}

    renamed = copy.deepcopy(role)
    renamed["request"]["object"]["name"] = "role-2"  # a new name replaces the role: its id changes
    project, stack = _project_of(tmp_path, [renamed, attach])
    code, doc = _preview(project, stack, state)
    ops = {r["name"]: r["op"] for r in doc["resources"]}
    assert (ops["role"], ops["attach"]) == ("replace", "replace")


def _class_step(old_spec: dict[str, Any], new_spec: dict[str, Any], diff: list[str]) -> dict[str, Any]:
    urn = "urn:pulumi:prod::rack::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::gpu-nodeclass"
    state = lambda spec: {  # noqa: E731
        "urn": urn,
        "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
        "inputs": {"metadata": {"name": "gpu"}, "spec": spec},
    }
    return {
        "op": "update",
        "urn": urn,
        "oldState": state(old_spec),
        "newState": state(new_spec),
        "detailedDiff": {d: {"kind": "update"} for d in diff},
    }


@pytest.mark.parametrize(
    "key,old,new,words",
    [
        (
            "networkInterfaces",
            [{"networkCardIndex": 0, "deviceIndex": 0}],
            [{"networkCardIndex": 0, "deviceIndex": 1}],
            "so Karpenter marks every node of the pool drifted",
        ),
        ("cpuOptions", {"coreCount": 4}, {"coreCount": 8}, "every node of the pool drifted"),
        ("context", "a", "b", "every node of the pool drifted"),
        (
            "connectionTracking",
            {"tcpEstablishedTimeout": 60},
            {"tcpEstablishedTimeout": 120},
            "every node of the pool drifted",
        ),
        ("placementGroupSelector", {"name": "a"}, {"name": "b"}, "every node of the pool drifted"),
        (
            "subnetSelectorTerms",
            [{"tags": {"a": "1"}}],
            [{"tags": {"a": "2"}}],
            "every node whose subnet the new selection no longer includes",
        ),
        (
            "securityGroupSelectorTerms",
            [{"id": "sg-1"}],
            [{"id": "sg-2"}],
            "whose security groups the new selection no longer includes",
        ),
    ],
)
def test_what_drifts_an_ec2nodeclass_is_a_rollout(key, old, new, words, tmp_path, capsys):
    path = _write_state(tmp_path / "preview.json", {"steps": [_class_step({key: old}, {key: new}, [f"spec.{key}"])]})
    assert main(["guard", str(path)]) == 0
    out = capsys.readouterr().out
    assert "lane-rollout" in out and words in out


def test_a_reordered_list_of_a_class_drifts_nothing(tmp_path, capsys):
    devices = [
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi"}},
        {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "80Gi"}},
    ]
    step = _class_step(
        {"blockDeviceMappings": devices},
        {"blockDeviceMappings": devices[::-1]},
        ["spec.blockDeviceMappings[0].deviceName", "spec.blockDeviceMappings[1].deviceName"],
    )
    path = _write_state(tmp_path / "preview.json", {"steps": [step]})
    assert main(["guard", str(path)]) == 0
    assert "No lane is removed or rolled." in capsys.readouterr().out


def test_a_budget_listing_no_reasons_bounds_no_drift(tmp_path, capsys):
    pool_urn = "urn:pulumi:prod::rack::kubernetes:karpenter.sh/v1:NodePool::gpu-nodepool"
    pool = {
        "urn": pool_urn,
        "type": "kubernetes:karpenter.sh/v1:NodePool",
        "inputs": {
            "metadata": {"name": "gpu"},
            "spec": {
                "template": {"spec": {"nodeClassRef": {"name": "gpu"}}},
                "disruption": {"budgets": [{"nodes": "1", "reasons": []}]},
            },
        },
    }
    steps = [
        _class_step(
            {"amiSelectorTerms": [{"id": "ami-1"}]},
            {"amiSelectorTerms": [{"id": "ami-2"}]},
            ["spec.amiSelectorTerms[0].id"],
        ),
        {"op": "same", "urn": pool_urn, "oldState": pool, "newState": pool},
    ]
    path = _write_state(tmp_path / "preview.json", {"steps": steps})
    assert main(["guard", str(path)]) == 0
    assert "all the pool's nodes at once" in capsys.readouterr().out


# ---- hostile state files ------------------------------------------------------------------------------------


def test_a_group_sized_past_a_floats_range_is_refused_naming_the_key(tmp_path, capsys):
    """Go's JSON reader (the CLI's) refuses a number past a 64-bit float's range, so no real state holds one;
    Python would read it as an infinity without a word."""
    ng0 = _urn(MNG, NODEGROUP, "example-managed-ng0")
    state = _mng_state(
        tmp_path,
        lambda doc: _resource(doc, NODEGROUP, "example-managed-ng0")["inputs"]["scalingConfig"].update(
            desiredSize=1e400
        ),
    )
    text = state.read_text().replace('"desiredSize": Infinity', '"desiredSize": 1e400')
    state.write_text(text)
    project, stack = rr.replay_project(MNG, tmp_path / "project", drop=[ng0])
    code, _ = _preview(project, stack, state)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert ".inputs.scalingConfig.desiredSize: 1e400 is not a finite number" in err and str(state) in err, err


def test_a_component_with_an_id_is_refused_as_the_cli_refuses_it(tmp_path, capsys):
    def component_with_id(doc: dict[str, Any]) -> None:
        _resource(doc, "eks:index:ManagedNodeGroup", "example-managed-ng0")["id"] = "ng-0"

    state = _mng_state(tmp_path, component_with_id)
    project, stack = rr.replay_project(MNG, tmp_path / "project")
    code, _ = _preview(project, stack, state)
    err = capsys.readouterr().err
    assert code == 2 and "has custom false (a component) but an id" in err


def test_analyze_judges_a_running_stacks_state_without_its_program(tmp_path, capsys):
    folder = REPO / "examples" / "gpu-lane-on-bottlerocket"
    values = yaml.safe_load(next(folder.glob("Pulumi.*.yaml")).read_text())["config"]
    stack = next(folder.glob("Pulumi.*.yaml")).name.split(".")[1]
    project = yaml.safe_load((folder / "Pulumi.yaml").read_text())["name"]
    run = run_program(folder, values, project=project, stack=stack)
    state = write_export(run, tmp_path / "state.json")
    out = tmp_path / "verdicts.json"
    assert main(["analyze", "--state", str(state), "--cwd", str(tmp_path), "--json", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert "gpu-lane-os" in {v["policy"] for v in doc["violations"] if v["level"] == "mandatory"}
    assert f"Analyzing the state of stack {stack}" in capsys.readouterr().out


def test_analyze_reads_a_recorded_export_and_judges_its_outputs_as_deployed(tmp_path, capsys):
    """A deployed template's outputs say ``imageId: ""`` and its group's ``diskSize: 0`` for none: no image,
    no disk of its own, never a refusal."""
    state = rr.state_file(MNG, tmp_path)
    out = tmp_path / "verdicts.json"
    assert main(["analyze", "--state", str(state), "--cwd", str(tmp_path), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert not [v for v in doc["violations"] if v["level"] == "mandatory"]
    assert len(doc["resources"]) == len(rr.state_resources(rr.state_doc(MNG)))


def test_a_lane_named_with_colons_reads_the_same_in_the_plan_and_the_guard(tmp_path, capsys):
    entries = [
        _custom(
            NODEGROUP,
            "team::gpu",
            {
                "clusterName": "c",
                "nodeRoleArn": "r",
                "subnetIds": ["s"],
                "scalingConfig": {"minSize": 1, "maxSize": 2, "desiredSize": 1},
            },
        )
    ]
    state = _state_of(tmp_path, entries)
    project, stack = _project_of(tmp_path, [])
    code, _ = _preview(project, stack, state)
    out = capsys.readouterr().out
    assert code == 1 and "change-safety: lane-removal  (team::gpu)" in out


# ---- where the program's inputs meet what the cloud computed, imports, and the engine's other flags ---------------
#
# Upstream facts these tests pin (read upstream, in our words):
# - The engine sends a provider's Diff the old outputs (pulumi pkg/resource/plugin/provider_plugin.go, Diff: Olds);
#   pulumi-terraform-bridge builds the Terraform state from them and diffs the config built from the checked
#   inputs against it (pkg/tfbridge/provider.go, Diff, commit 59de6c661df1e7561e6ece7ad7f1c835c63010c4). For an
#   attribute Terraform declares Optional and Computed, a value left out keeps the state's and a value equal to
#   it is no diff. terraform-provider-aws internal/service/eks/node_group.go: capacity_type, ami_type, disk_size
#   and instance_types are Optional+Computed+ForceNew; cluster.go (00555dc5b38f92abbfa230badea0ed0754cea81e):
#   kubernetes_network_config and its ip_family (ForceNew) are Optional+Computed. tfgen (pkg/tfgen/generate.go,
#   isOptional) makes an input optional when Terraform's attribute is optional or computed, an output only when
#   it is optional and not computed: the SDK's types say which attributes are Optional+Computed. The bridge
#   auto-names every string input called "name" (pkg/tfbridge/info/autonaming.go, SetAutonaming).
# - pulumi pkg/resource/deploy/step_generator.go (commit 1b5949891b3cefcb9974752b24a5ecef0acc86c8): a resource
#   whose DeletedWith resource is replaced is replaced ("deletedWith"); isImport: a custom resource with an import
#   id that the state lacks is imported, one the state holds under another id (or as external) is an
#   import-replacement (an import step, then a logical replace), one with the same id is diffed as usual; a
#   resource external in the state and now registered is created anew (wasExternal: NewCreateReplacementStep);
#   an unchanged resource with initErrors is updated (hasInitErrors), replaced when replaceOnChanges covers
#   "#initerror". step.go isDeletedWith: a delete is skipped only when the resource it names is deleted too.
#   providers.ProviderRequest.DefaultName: a default provider is named default_<major>_<minor>_<patch> of the
#   version a registration asks for; the old one, no longer used, is deleted.

CLUSTER_RUN = (
    "TestProviderUpgrade/cluster/2.2.1"  # pulumi-eks before 2.3.0: its clusters send no kubernetesNetworkConfig
)
AWSX_RUN = "pulumi-awsx/TestProviderUpgrade/default-args/1.0.6"


def _edited(run: str, type_: str, names: tuple[str, ...], change) -> Any:
    """An ``edit`` for ``rr.replay_project``: ``change(inputs)`` on the registrations of ``type_`` named ``names``
    (all of that type when empty)."""

    def edit(entry: dict[str, Any]) -> dict[str, Any]:
        request = entry["request"]
        if request["type"] != type_ or (names and request["name"] not in names):
            return entry
        entry = copy.deepcopy(entry)
        change(entry["request"].setdefault("object", {}))
        return entry

    return edit


def _op(doc: dict[str, Any], type_: str, name: str) -> tuple[str, list[str]]:
    step = next(r for r in doc["resources"] if r["type"] == type_ and r["name"] == name)
    return step["op"], step["diff"]


@pytest.mark.parametrize(
    "name,change,op",
    [
        ("example-managed-ng1", lambda i: i.update(capacityType="ON_DEMAND"), "same"),
        ("example-managed-ng1", lambda i: i.update(amiType="AL2023_x86_64_STANDARD"), "same"),
        ("example-managed-ng1", lambda i: i.update(instanceTypes=["t3.medium"]), "same"),
        ("example-managed-ng1", lambda i: i.update(diskSize=20), "same"),
        ("example-managed-ng2", lambda i: i.pop("instanceTypes"), "same"),
        ("example-managed-ng2", lambda i: i.pop("diskSize"), "same"),
        ("example-managed-ng1", lambda i: i.update(capacityType="SPOT"), "replace"),
        ("example-managed-ng1", lambda i: i.update(instanceTypes=["t3.large"]), "replace"),
        ("example-managed-ng2", lambda i: i.update(diskSize=40), "replace"),
    ],
    ids=[
        "capacityType-added",
        "amiType-added",
        "instanceTypes-added",
        "diskSize-added",
        "instanceTypes-dropped",
        "diskSize-dropped",
        "capacityType-changed",
        "instanceTypes-changed",
        "diskSize-changed",
    ],
)
def test_a_node_groups_computed_inputs_added_as_they_are_or_dropped_are_no_change(name, change, op, tmp_path, capsys):
    """Each case is the recorded run with one edit of one group's inputs; the state is the one that run left, whose
    outputs hold what EKS chose (ON_DEMAND, AL2023_x86_64_STANDARD, t3.medium, 20 GiB)."""
    project, stack = rr.replay_project(MNG, tmp_path / "project", edit=_edited(MNG, NODEGROUP, (name,), change))
    code, doc = _preview(project, stack, rr.state_file(MNG, tmp_path))
    assert _op(doc, NODEGROUP, name)[0] == op
    others = [r for r in doc["resources"] if r["name"] != name or r["type"] != NODEGROUP]
    assert {r["op"] for r in others} == {"same"}
    assert code == (1 if op == "replace" else 0), capsys.readouterr().out  # a replaced group is a lane removal


@pytest.mark.parametrize("family,op", [("ipv4", "same"), ("ipv6", "replace")])
def test_pulumi_eks_2_3_s_ip_family_on_a_cluster_whose_outputs_say_ipv4(family, op, tmp_path, capsys):
    """pulumi-eks 2.3.0 began sending ``kubernetesNetworkConfig.ipFamily``; a cluster a 2.2.1 run made has none in its
    inputs and ``ipv4`` in its outputs."""
    edit = _edited(
        CLUSTER_RUN, "aws:eks/cluster:Cluster", (), lambda i: i.update(kubernetesNetworkConfig={"ipFamily": family})
    )
    project, stack = rr.replay_project(CLUSTER_RUN, tmp_path / "project", edit=edit)
    code, doc = _preview(project, stack, rr.state_file(CLUSTER_RUN, tmp_path))
    clusters = [r for r in doc["resources"] if r["type"] == "aws:eks/cluster:Cluster"]
    assert clusters and {r["op"] for r in clusters} == {op}
    if op == "replace":
        assert {tuple(r["replaceReasons"]) for r in clusters} == {("kubernetesNetworkConfig.ipFamily",)}


def test_optional_computed_attributes_come_from_the_providers_schema():
    """Read from the installed SDK (generated from pulumi-aws's schema), so every type has them, not a list of four."""
    from mixed_os_racks.offline.providerdiff import optional_computed

    assert optional_computed(NODEGROUP) >= {"capacityType", "amiType", "diskSize", "instanceTypes", "launchTemplate.id"}
    assert not optional_computed(NODEGROUP) & {"clusterName", "subnetIds", "labels", "taints", "scalingConfig"}
    assert {"kubernetesNetworkConfig", "kubernetesNetworkConfig.ipFamily"} <= optional_computed(
        "aws:eks/cluster:Cluster"
    )
    assert "availabilityZone" in optional_computed("aws:ec2/subnet:Subnet")
    assert optional_computed("kubernetes:core/v1:ConfigMap") == frozenset()  # not a bridged provider


def test_a_subnets_availability_zone_dropped_from_awsx_is_no_change_but_moved_is_one(tmp_path, capsys):
    """The class, on a resource type the rack does not use: a pulumi-awsx run's subnets, ``availabilityZone``
    (terraform-provider-aws ``subnet.go``: Optional, Computed, ForceNew)."""
    subnet = "aws:ec2/subnet:Subnet"
    project, stack = rr.replay_project(
        AWSX_RUN, tmp_path / "dropped", edit=_edited(AWSX_RUN, subnet, (), lambda i: i.pop("availabilityZone"))
    )
    code, doc = _preview(project, stack, rr.state_file(AWSX_RUN, tmp_path))
    assert code == 0 and set(doc["summary"]) == {"same"}
    name = "awsx-nodejs-default-args-private-1"
    project, stack = rr.replay_project(
        AWSX_RUN,
        tmp_path / "moved",
        edit=_edited(AWSX_RUN, subnet, (name,), lambda i: i.update(availabilityZone="us-east-1f")),
    )
    code, doc = _preview(project, stack, rr.state_file(AWSX_RUN, tmp_path))
    op, diff = _op(doc, subnet, name)
    assert op != "same" and diff == ["availabilityZone"]


def test_a_resource_deleted_with_a_replaced_one_is_replaced_too(tmp_path, capsys):
    role0, attachment = "example-role0", "example-role1-policy-2"  # the attachment is of another role
    state = _mng_state(
        tmp_path,
        lambda doc: (
            doc.update(version=4, features=["taint"]) or _resource(doc, "aws:iam/role:Role", role0).update(taint=True)
        ),
    )
    role0_urn = _urn(MNG, "aws:iam/role:Role", role0)
    attach = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
    project, stack = rr.replay_project(MNG, tmp_path / "plain")
    code, doc = _preview(project, stack, state)
    assert _op(doc, attach, attachment)[0] == "same"

    def deleted_with(entry: dict[str, Any]) -> dict[str, Any]:
        if entry["request"]["name"] == attachment:
            entry = copy.deepcopy(entry)
            entry["request"]["deletedWith"] = role0_urn
        return entry

    project, stack = rr.replay_project(MNG, tmp_path / "project", edit=deleted_with)
    code, doc = _preview(project, stack, state)
    step = next(r for r in doc["resources"] if r["name"] == attachment)
    assert (step["op"], step["replaceReasons"]) == ("replace", ["deletedWith"])
    assert step["note"] == f"deleted with {role0_urn}, which is replaced"


@pytest.mark.parametrize("how", ["same-id", "other-id", "not-in-state"])
def test_a_program_that_imports_plans_as_the_engine_does(how, tmp_path, capsys):
    ng1 = _urn(MNG, NODEGROUP, "example-managed-ng1")
    held = _resource(rr.state_doc(MNG), NODEGROUP, "example-managed-ng1")["id"]
    wanted = held if how == "same-id" else "example-managed-nodegroups-eksCluster-1234567:imported-ng"

    def importing(entry: dict[str, Any]) -> dict[str, Any]:
        if entry["response"]["urn"] == ng1:
            entry = copy.deepcopy(entry)
            entry["request"]["importId"] = wanted
        return entry

    drop = (
        (lambda doc: rr.state_resources(doc).remove(_resource(doc, NODEGROUP, "example-managed-ng1")))
        if how == "not-in-state"
        else (lambda doc: None)
    )
    project, stack = rr.replay_project(MNG, tmp_path / "project", edit=importing)
    code, doc = _preview(project, stack, _mng_state(tmp_path, drop))
    out = capsys.readouterr()
    assert "NotImplementedError" not in out.err and "Traceback" not in out.err
    step = next(r for r in doc["resources"] if r["urn"] == ng1)
    if how == "same-id":
        assert code == 0 and step["op"] == "same"
    elif how == "other-id":  # the engine imports the other group, then deletes the one the state holds
        assert (step["op"], step["replaceReasons"]) == ("replace", ["id"]) and step["note"].startswith(
            "import-replacement: "
        )
        assert code == 1 and [v["lane"] for v in doc["violations"] if v["policy"] == "lane-removal"] == [
            "example-managed-ng1"
        ]
    else:
        assert code == 0 and (step["op"], step["note"]) == ("import", f"imported: id {wanted}")
        assert doc["summary"]["import"] == 1 and "=   " in out.out and "1 to import" in out.out


def test_a_resource_external_in_the_state_and_now_declared_is_created_anew(tmp_path, capsys):
    state = _mng_state(tmp_path, lambda doc: _resource(doc, NODEGROUP, "example-managed-ng1").update(external=True))
    project, stack = rr.replay_project(MNG, tmp_path / "project")
    code, doc = _preview(project, stack, state)
    step = next(r for r in doc["resources"] if r["type"] == NODEGROUP and r["name"] == "example-managed-ng1")
    assert step["op"] == "replace" and step["note"].startswith("external in the state")
    assert code == 0 and doc["violations"] == []  # the group it read is not deleted: no lane goes


@pytest.mark.parametrize("replace_on_changes,op", [([], "update"), (["*"], "replace")])
def test_an_unchanged_resource_with_init_errors_is_updated(replace_on_changes, op, tmp_path, capsys):
    name = "example-role2"
    state = _mng_state(tmp_path, lambda doc: _resource(doc, "aws:iam/role:Role", name).update(initErrors=["timed out"]))
    edit = _edited(MNG, "aws:iam/role:Role", (name,), lambda i: None)

    def with_options(entry: dict[str, Any]) -> dict[str, Any]:
        entry = edit(entry)
        if entry["request"]["name"] == name and replace_on_changes:
            entry = copy.deepcopy(entry)
            entry["request"]["replaceOnChanges"] = replace_on_changes
        return entry

    project, stack = rr.replay_project(MNG, tmp_path / "project", edit=with_options)
    code, doc = _preview(project, stack, state)
    step = next(r for r in doc["resources"] if r["type"] == "aws:iam/role:Role" and r["name"] == name)
    assert step["op"] == op and step["note"].startswith("initialization errors in the state")
    assert code == 0


def test_a_dropped_group_deleted_with_a_cluster_that_stays_is_deleted_by_its_provider(tmp_path, capsys):
    ng4 = _urn(MNG, NODEGROUP, "example-managed-ng4")
    cluster = _urn(MNG, "aws:eks/cluster:Cluster", "example-managed-nodegroups-eksCluster")
    state = _mng_state(
        tmp_path, lambda doc: _resource(doc, NODEGROUP, "example-managed-ng4").update(deletedWith=cluster)
    )
    project, stack = rr.replay_project(MNG, tmp_path / "project", drop=[ng4])
    code, doc = _preview(project, stack, state)
    step = next(r for r in doc["resources"] if r["urn"] == ng4)
    assert step["op"] == "delete" and "note" not in step  # the cluster stays: the group's own delete runs


def test_a_default_provider_version_bump_creates_the_new_one_and_deletes_the_old(tmp_path, capsys):
    def bumped(entry: dict[str, Any]) -> dict[str, Any]:
        if entry["request"].get("version") == "6.45.0":
            entry = copy.deepcopy(entry)
            entry["request"]["version"] = "6.46.0"
        return entry

    project, stack = rr.replay_project(MNG, tmp_path / "project", edit=bumped)
    code, doc = _preview(project, stack, rr.state_file(MNG, tmp_path))
    changed = {(r["name"], r["op"]) for r in doc["resources"] if r["op"] != "same"}
    assert changed == {("default_6_46_0", "create"), ("default_6_45_0", "delete")}
    assert code == 0


@functools.lru_cache(maxsize=None)
def _state_of_run(run: str) -> Any:
    from mixed_os_racks.offline.stackexport import read_stack_export

    with tempfile.TemporaryDirectory() as folder:
        return read_stack_export(rr.state_file(run, Path(folder)))


def _plan_of(run: str, edit) -> Any:
    """The plan of a recorded run's own registrations, edited, against the state it left (no program run)."""
    from mixed_os_racks.offline.plan import make_plan

    program = rr.program_run(run)
    for res in program.resources:
        edit(res)
    return make_plan(program, _state_of_run(run))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_computed_inputs_added_as_the_outputs_hold_them_or_dropped_plan_same(data):
    """Property: for every group of a real run, any set of its Optional+Computed inputs (from the provider's schema)
    added with the values its outputs hold, or dropped, plans nothing; one of them set to another value is a change."""
    from google.protobuf import struct_pb2
    from mixed_os_racks.offline.providerdiff import optional_computed

    outputs = {r["urn"]: r["outputs"] for r in rr.state_resources(rr.state_doc(MNG)) if r["type"] == NODEGROUP}
    fields = sorted(p for p in optional_computed(NODEGROUP) if "." not in p and p not in ("name", "region"))
    chosen = {
        urn: data.draw(st.dictionaries(st.sampled_from(fields), st.sampled_from(["add", "drop"]), max_size=6))
        for urn in sorted(outputs)
    }
    changed = data.draw(st.sampled_from(sorted(outputs)))
    other = data.draw(st.sampled_from(["capacityType", "amiType", "instanceTypes", "diskSize"]))

    def edit(res, broken: bool) -> None:
        if res.urn not in outputs:
            return
        inputs = json_format.MessageToDict(res.properties)
        for key, how in chosen[res.urn].items():
            if how == "drop":
                inputs.pop(key, None)
            elif key in outputs[res.urn]:
                inputs[key] = outputs[res.urn][key]
        if broken and res.urn == changed:
            inputs[other] = {
                "capacityType": "CAPACITY_BLOCK",
                "amiType": "BOTTLEROCKET_ARM_64",
                "instanceTypes": ["p5.48xlarge"],
                "diskSize": 999,
            }[other]
        res.properties = struct_pb2.Struct()
        json_format.ParseDict(inputs, res.properties)
        res.__dict__.pop("wire", None)

    plan = _plan_of(MNG, lambda res: edit(res, False))
    assert {s.op for s in plan.steps} <= {"same"}, [(s.name, s.op, s.diff) for s in plan.steps if s.op != "same"]
    plan = _plan_of(MNG, lambda res: edit(res, True))
    steps = [(s.urn, s.op) for s in plan.steps if s.op != "same"]
    assert steps == [(changed, "replace")] and all(p.startswith(other) for p in plan.by_urn()[changed].diff)


@pytest.mark.parametrize(
    "key,value,words",
    [
        ("initErrors", "timed out", "initErrors: must be a list of messages"),
        ("initErrors", [1], "initErrors: must be a list of messages"),
        ("importID", 7, "importID: must be a string, not 7"),
    ],
)
def test_init_errors_and_import_ids_of_the_wrong_type_are_refused(key, value, words, tmp_path, capsys):
    state = _mng_state(tmp_path, lambda doc: _resource(doc, NODEGROUP, "example-managed-ng1").update({key: value}))
    project, stack = rr.replay_project(MNG, tmp_path / "project")
    code, _ = _preview(project, stack, state)
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    "ops,code", [(["import"], 0), (["import-replacement", "replace", "delete-replaced"], 1), (["replace"], 1)]
)
def test_the_guard_reads_an_import_and_an_import_replacement_as_the_engine_steps_them(ops, code, tmp_path, capsys):
    """A real group of the recorded run, imported by the preview: an import removes nothing; an import-replacement's
    logical step is the replace after it, which deletes the group the state held (``step.go``: ``ImportStep.Logical``
    is false when it replaces)."""
    group = _resource(rr.state_doc(MNG), NODEGROUP, "example-managed-ng1")
    old = {k: group[k] for k in ("urn", "type", "custom", "id", "parent", "inputs", "outputs")}
    new = {**old, "id": "imported"}
    steps = [
        {
            "op": op,
            "urn": group["urn"],
            **({"newState": new} if op != "delete-replaced" else {}),
            **({"oldState": old} if op != "import" else {}),
        }
        for op in ops
    ]
    path = _write_state(tmp_path / "preview.json", {"steps": steps})
    assert main(["guard", str(path), "--json", str(tmp_path / "verdicts.json")]) == code
    assert "(1 steps):" in capsys.readouterr().out  # the parts fold into one logical step
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())["violations"]
    assert [v["lane"] for v in verdicts if v["policy"] == "lane-removal"] == (["example-managed-ng1"] if code else [])


@pytest.mark.parametrize(
    "change,template_op",
    [
        (lambda m: m.pop("httpTokens"), "same"),
        (lambda m: m.update(httpTokens="required", instanceMetadataTags=""), "same"),
        (lambda m: m.update(httpPutResponseHopLimit=1), "update"),
    ],
    ids=["httpTokens-dropped", "as-the-outputs-hold", "hop-limit-changed"],
)
def test_a_launch_templates_metadata_options_meet_its_outputs(change, template_op, tmp_path, capsys):
    """terraform-provider-aws ``ec2_launch_template.go``: each of ``metadata_options``' attributes is Optional and
    Computed. (The replay sends the group the template version it recorded, so a new version rolls nothing here.)"""
    name = "example-managed-ng3-launchTemplate"
    edit = _edited(MNG, "aws:ec2/launchTemplate:LaunchTemplate", (name,), lambda i: change(i["metadataOptions"]))
    project, stack = rr.replay_project(MNG, tmp_path / "project", edit=edit)
    code, doc = _preview(project, stack, rr.state_file(MNG, tmp_path))
    assert _op(doc, "aws:ec2/launchTemplate:LaunchTemplate", name)[0] == template_op
    assert {r["op"] for r in doc["resources"] if r["name"] != name} == {"same"}


def test_the_preview_without_a_state_shows_an_import_as_the_engine_does(tmp_path, capsys):
    """With no state to compare with, a resource the program imports is an import (``=``), not a create."""
    ng1 = _urn(MNG, NODEGROUP, "example-managed-ng1")

    def importing(entry: dict[str, Any]) -> dict[str, Any]:
        if entry["response"]["urn"] == ng1:
            entry = copy.deepcopy(entry)
            entry["request"]["importId"] = "example-managed-nodegroups-eksCluster:example-managed-ng1"
        return entry

    project, stack = rr.replay_project(MNG, tmp_path / "project", edit=importing)
    assert main(["preview", "--cwd", str(project), "--stack", stack, "--no-policy"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.rstrip().endswith(" example-managed-ng1") and NODEGROUP in line]
    assert [line[:4] for line in rows] == [" =  "]
    plain, _ = rr.replay_project(MNG, tmp_path / "plain")
    assert main(["preview", "--cwd", str(plain), "--stack", stack, "--no-policy"]) == 0
    created = next(line for line in capsys.readouterr().out.splitlines() if line.endswith(" to create"))
    count = int(created.split()[1])
    assert f"    + {count - 1} to create\n    = 1 to import\n" in out
