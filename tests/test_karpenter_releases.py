"""The Karpenter release the rack installs (``rack:karpenter_version``) and the (Kubernetes minor, Karpenter
release) pair judged against Karpenter's compatibility matrix.

Upstream facts pinned here (aws/karpenter-provider-aws):
- The v1.15 compatibility matrix (``website/content/en/v1.15/upgrading/compatibility.md``, commit d77d1a3a) lists
  Kubernetes 1.31 to 1.37; 1.36 needs Karpenter 1.13 or later and 1.37 needs 1.15.x. The v1.14 matrix (same path
  under ``v1.14``, commit 1d927085) lists 1.30 to 1.36, 1.36 from 1.13: a 1.14 release does not list 1.37, and a
  1.15 release does not list 1.30.
- The v1.15 CloudFormation reference (``website/content/en/v1.15/reference/cloudformation.md``, commit d77d1a3a)
  adds ``ec2:RebootInstances`` to ``AllowScopedDeletion`` (node repair's reboot, behind the ``RebootForRepair``
  AWS feature gate), with the same tag conditions; every other statement is as in v1.14.
- The 1.15.0 chart's ``values.yaml`` (commit d77d1a3a; trimmed in ``fixtures/karpenter-1.15.0``) keeps every key
  the rack writes (``settings.clusterName``, ``settings.interruptionQueue``, ``serviceAccount``, ``replicas``,
  ``nodeSelector``, ``tolerations``, ``controller.resources``).
- No 1.14 patch after 1.14.1 (tags end at v1.14.1, commit bde00654): the default stays 1.14.1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, strategies as st

from conftest import REPO, rack_config, reference, run_rack
from mixed_os_racks import ArgumentError, ClusterRef, ConfigError, clock, parse_rack_config
from mixed_os_racks.cli import main
from mixed_os_racks.karpenter_controller import KarpenterController, KarpenterControllerArgs
from mixed_os_racks.karpenter_controller import controller_policies
from mixed_os_racks.offline import Catalog, ProgramRun, run_program
from mixed_os_racks.offline.plan import make_plan
from mixed_os_racks.offline.stackexport import read_stack_export, write_export
from mixed_os_racks.facts import upstream
from mixed_os_racks.facts.upstream import karpenter_compatibility

PRIVATE = ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712", "subnet-0a1b2c3d4e5f60713"]
CREATE = dict(cluster_mode="create", vpc_id="vpc-0a1b2c3d4e5f60718", private_subnets_ids=",".join(PRIVATE))
FIXTURE = Path(__file__).parent / "fixtures" / "karpenter-1.15.0" / "chart-values.yaml"


def error(**values: Any) -> str:
    values.setdefault("cluster_name", "c")
    with pytest.raises(ConfigError) as caught:
        parse_rack_config(values)
    return str(caught.value)


# ---- the matrix, as one pure function ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "minor, release, supported, serving",
    [
        ("1.37", "1.15.0", True, "1.15.0"),
        ("1.37", "1.14.1", False, "1.15.0"),  # 1.37 is 1.15.x only
        ("1.36", "1.14.1", True, "1.14.1"),  # the LTS line serves where it can
        ("1.36", "1.15.0", True, "1.14.1"),
        ("1.31", "1.14.0", True, "1.14.1"),
        ("1.30", "1.14.1", True, "1.14.1"),
        ("1.30", "1.15.0", False, "1.14.1"),  # not in the v1.15 matrix: not confirmed
        ("1.29", "1.14.1", False, None),  # in neither matrix
        ("1.38", "1.15.0", False, None),
    ],
)
def test_the_pair_is_judged_by_the_releases_own_matrix(minor, release, supported, serving):
    verdict = karpenter_compatibility(minor, release)
    assert (verdict.supported, verdict.serving) == (supported, serving)
    assert bool(verdict.reason) is not supported


def test_a_refusal_says_why_and_where_it_was_read():
    assert karpenter_compatibility("1.37", "1.14.1").reason == (
        "Kubernetes 1.37 needs Karpenter 1.15.x, not 1.14.1 (karpenter-provider-aws "
        "website/content/en/v1.15/upgrading/compatibility.md, commit d77d1a3a)"
    )
    assert karpenter_compatibility("1.30", "1.15.0").reason == (
        "Karpenter 1.15.0 is not confirmed for Kubernetes 1.30: its compatibility matrix lists 1.31 to 1.37 "
        "(karpenter-provider-aws website/content/en/v1.15/upgrading/compatibility.md, commit d77d1a3a)"
    )
    assert karpenter_compatibility("1.29", "1.14.1").reason.startswith(
        "Karpenter 1.14.1 is not confirmed for Kubernetes 1.29: its compatibility matrix lists 1.30 to 1.36"
    )
    assert "not confirmed upstream" in karpenter_compatibility("1.36", "1.14.3").reason
    assert karpenter_compatibility("1.36", "1.13.2").reason.startswith("the rack installs Karpenter 1.14.x or 1.15.x")


@given(
    minor=st.integers(0, 60).map(lambda n: f"1.{n}"),
    release=st.one_of(
        st.sampled_from(sorted(upstream.KARPENTER_RELEASES)),
        st.tuples(st.integers(0, 3), st.integers(0, 20), st.integers(0, 9)).map(lambda t: "%d.%d.%d" % t),
        st.text(max_size=12),
    ),
)
def test_every_pair_gets_a_verdict_and_a_serving_release_that_serves(minor, release):
    verdict = karpenter_compatibility(minor, release)
    assert not verdict.supported or release in upstream.KARPENTER_RELEASES
    if verdict.serving is not None:
        assert karpenter_compatibility(minor, verdict.serving).supported
    else:
        assert not any(karpenter_compatibility(minor, r).supported for r in upstream.KARPENTER_RELEASES)


# ---- the stack key ------------------------------------------------------------------------------------------------


def test_kubernetes_137_on_the_default_release_names_karpenter_version_and_the_release_that_serves():
    assert error(**CREATE, k8s_version="1.37") == (
        "rack:karpenter_version: karpenter_version '1.14.1' with Kubernetes 1.37: Kubernetes 1.37 needs Karpenter "
        "1.15.x, not 1.14.1 (karpenter-provider-aws website/content/en/v1.15/upgrading/compatibility.md, commit "
        "d77d1a3a) (set karpenter_version: 1.15.0)"
    )
    run = run_rack(rack_config(**CREATE, k8s_version="1.37", karpenter_version="1.15.0"))
    cluster = next(r for r in run.resources if r.type == "eks:index:Cluster")
    assert cluster.inputs["version"] == "1.37"
    assert {
        r.inputs["version"]
        for r in run.resources
        if r.type == "kubernetes:helm.sh/v4:Chart" and "karpenter" in r.inputs["chart"]
    } == {"1.15.0"}


def test_the_default_stays_on_the_lts_line():
    rack = parse_rack_config({"cluster_name": "c", **CREATE})
    assert rack.karpenter is not None and rack.karpenter.version == "1.14.1"
    assert upstream.KARPENTER_CHART.version.startswith(upstream.KARPENTER_LTS_LINE + ".")


def test_a_kubernetes_the_newer_release_does_not_list_is_refused_with_the_release_that_serves(monkeypatch):
    monkeypatch.setenv(clock.ENV, "2026-05-01")  # while EKS still created clusters on 1.30
    assert error(**CREATE, k8s_version="1.30", karpenter_version="1.15.0").endswith("(set karpenter_version: 1.14.1)")


@pytest.mark.parametrize(
    "version, message",
    [
        (
            "1.14.3",
            "rack:karpenter_version: karpenter_version '1.14.3': Karpenter 1.14.3 is not confirmed upstream: its "
            "chart and release notes could not be read, so its values, IAM and CRD fields are unknown (the rack "
            "installs 1.14.0, 1.14.1, 1.15.0)",
        ),
        (
            "1.15.1",
            "rack:karpenter_version: karpenter_version '1.15.1': Karpenter 1.15.1 is not confirmed upstream: its "
            "chart and release notes could not be read, so its values, IAM and CRD fields are unknown (the rack "
            "installs 1.14.0, 1.14.1, 1.15.0)",
        ),
        (
            "1.13.2",
            "rack:karpenter_version: karpenter_version '1.13.2': the rack installs Karpenter 1.14.x or 1.15.x "
            "(1.14.0, 1.14.1, 1.15.0)",
        ),
        (
            "1.15.0-rc.0",
            "rack:karpenter_version: karpenter_version '1.15.0-rc.0': Karpenter 1.15.0-rc.0 is not confirmed "
            "upstream: its chart and release notes could not be read, so its values, IAM and CRD fields are "
            "unknown (the rack installs 1.14.0, 1.14.1, 1.15.0)",
        ),
        ("latest", "rack:karpenter_version: invalid karpenter_version 'latest' (must be a chart version like 4.8.2)"),
    ],
)
def test_a_release_that_cannot_be_confirmed_is_refused_with_the_reason(version, message):
    assert error(**CREATE, karpenter_version=version) == message


def test_karpenter_version_without_karpenter_is_refused():
    assert error(cluster_mode="existing", karpenter_version="1.15.0") == (
        "rack:karpenter_version: karpenter_version needs karpenter_install: true (the rack installs no Karpenter here)"
    )


# ---- an existing cluster: the pair judged with the version EKS reports ------------------------------------------


def catalog(version: str) -> dict[str, Any]:
    doc = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    doc["clusters"] = {
        **doc.get("clusters", {}),
        "test-rack": {"version": version, "authentication_mode": "API"},
        "legacy": {"version": version, "authentication_mode": "API"},
    }
    return doc


def test_karpenter_into_an_existing_137_cluster_names_the_key_and_the_release(tmp_path, capsys):
    stack, amis = tmp_path / "Pulumi.t.yaml", tmp_path / "amis.yaml"
    stack.write_text(yaml.safe_dump({"config": rack_config(karpenter_install=True, pod_identity_agent_enable=True)}))
    amis.write_text(yaml.safe_dump(catalog("1.37")))
    assert main(["preview", "--config", str(stack), "--amis", str(amis), "--no-policy", "--cwd", str(REPO)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.rstrip().endswith(
        "rack:karpenter_version: cluster 'test-rack' runs Kubernetes 1.37: karpenter_version '1.14.1' with Kubernetes "
        "1.37: Kubernetes 1.37 needs Karpenter 1.15.x, not 1.14.1 (karpenter-provider-aws "
        "website/content/en/v1.15/upgrading/compatibility.md, commit d77d1a3a) (set karpenter_version: 1.15.0)"
    )
    run = run_rack(
        rack_config(karpenter_install=True, pod_identity_agent_enable=True, karpenter_version="1.15.0"),
        Catalog.from_doc(catalog("1.37")),
    )
    assert {
        r.inputs["version"]
        for r in run.resources
        if r.type == "kubernetes:helm.sh/v4:Chart" and "karpenter" in r.inputs["chart"]
    } == {"1.15.0"}


def test_the_controller_on_its_own_judges_the_pair():
    def program(version: str) -> Any:
        return lambda: KarpenterController(
            "k", KarpenterControllerArgs(cluster=ClusterRef.existing("c", "legacy"), version=version)
        )

    with pytest.raises(ArgumentError) as caught:
        run_program(program("1.14.1"), {"aws:region": "us-east-1"}, Catalog.from_doc(catalog("1.37")))
    assert str(caught.value).startswith(
        "KarpenterController 'k': version: karpenter_version '1.14.1' with Kubernetes 1.37"
    )
    with pytest.raises(ArgumentError) as caught:
        run_program(program("1.14.2"), {"aws:region": "us-east-1"}, Catalog.from_doc(catalog("1.36")))
    assert "Karpenter 1.14.2 is not confirmed upstream" in str(caught.value)
    run = run_program(program("1.15.0"), {"aws:region": "us-east-1"}, Catalog.from_doc(catalog("1.37")))
    assert any(r.type == "kubernetes:helm.sh/v4:Chart" for r in run.resources)


# ---- what 1.15 needs: charts, IAM, values -----------------------------------------------------------------------


def _deletion(version: str) -> dict[str, Any]:
    docs = controller_policies(
        "aws",
        "us-east-1",
        "111122223333",
        "c",
        "arn:aws:iam::111122223333:role/n",
        "arn:aws:sqs:us-east-1:111122223333:c",
        version,
    )
    return next(s for s in docs["NodeLifecycle"]["Statement"] if s["Sid"] == "AllowScopedDeletion")


def test_1_15_may_reboot_what_it_may_delete_and_1_14_may_not():
    assert _deletion("1.15.0")["Action"] == [
        "ec2:TerminateInstances",
        "ec2:RebootInstances",
        "ec2:DeleteLaunchTemplate",
    ]
    assert _deletion("1.14.1")["Action"] == ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"]
    assert _deletion("1.15.0")["Resource"] == _deletion("1.14.1")["Resource"]  # the same scope: its instances only
    assert (
        _deletion("1.15.0")["Condition"]
        == _deletion("1.14.1")["Condition"]
        == {
            "StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/c": "owned"},
            "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
        }
    )


@pytest.fixture(scope="module")
def runs() -> dict[str, ProgramRun]:
    pools = [{"name": "gpu", "instance_families": "g5", "disk": 100}]  # AL2023, beside the Bottlerocket default lane
    return {
        version: run_rack(
            rack_config(
                **CREATE,
                k8s_version="1.36",
                karpenter_version=version,
                karpenter_node_os="bottlerocket",
                additional_karpenter_nodepools_config=pools,
            )
        )
        for version in ("1.14.1", "1.15.0")
    }


def _charts(run: ProgramRun) -> dict[str, Any]:
    return {r.inputs["chart"].rsplit("/", 1)[-1]: r for r in run.resources if r.type == "kubernetes:helm.sh/v4:Chart"}


def _keys(values: Any, known: Any, path: str = "") -> list[str]:
    """Value paths the chart's values file does not have (free-form maps are not walked)."""
    if not isinstance(values, dict):
        return []
    missing = []
    for key, value in values.items():
        if not isinstance(known, dict) or key not in known:
            missing.append(path + key)
        elif key not in ("nodeSelector", "annotations") and isinstance(known[key], dict) and known[key]:
            missing += _keys(value, known[key], f"{path}{key}.")
    return missing


def test_the_release_named_is_installed_with_its_iam_and_known_values(runs):
    run = runs["1.15.0"]
    charts = _charts(run)
    assert charts["karpenter"].inputs["version"] == charts["karpenter-crd"].inputs["version"] == "1.15.0"
    values = charts["karpenter"].inputs["values"]
    assert _keys(values, yaml.safe_load(FIXTURE.read_text())) == []
    assert _keys(values, yaml.safe_load(reference("karpenter-v1.14.1", "chart-values.yaml").read_text())) == []
    lifecycle = next(
        r for r in run.resources if r.type == "aws:iam/policy:Policy" and r.name.endswith("-NodeLifecycle")
    )
    deletion = next(s for s in json.loads(lifecycle.inputs["policy"])["Statement"] if s["Sid"] == "AllowScopedDeletion")
    assert "ec2:RebootInstances" in deletion["Action"]


def _fields(value: Any, known: Any, path: str = "") -> list[str]:
    """Field paths of ``value`` that ``known`` (an upstream example) does not have; list items against the union
    of the example's items, maps whose keys are data (``tags``) not walked."""
    if isinstance(value, list):
        union: dict[str, Any] = {}
        for item in known if isinstance(known, list) else []:
            union.update(item if isinstance(item, dict) else {})
        return [p for item in value for p in _fields(item, union, f"{path}[]")]
    if not isinstance(value, dict) or path.endswith("tags"):
        return []
    return [f"{path}.{key}" if key not in known else "" for key in value] + [
        p for key, sub in value.items() if key in known for p in _fields(sub, known[key], f"{path}.{key}")
    ]


def test_every_ec2nodeclass_field_the_rack_writes_is_in_the_v1_15_reference(runs):
    example = yaml.safe_load((FIXTURE.parent / "ec2nodeclass-example.yaml").read_text())["spec"]
    example["amiSelectorTerms"].append({"alias": "al2023@v20240703"})  # the example's commented alias term
    classes = [r for r in runs["1.15.0"].resources if r.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"]
    assert classes
    for node_class in classes:
        assert [f for f in _fields(node_class.inputs["spec"], example, "spec") if f] == [], node_class.name


def test_moving_to_1_15_updates_one_policy_in_place_and_replaces_nothing(runs, tmp_path):
    """Day 2: the plan of the 1.15.0 program against the state the 1.14.1 one left (the offline engine's plan, as
    ``preview --state`` makes it) updates the node-lifecycle policy's document and replaces, creates or deletes
    nothing. The two charts are components (Helm v4 ``Chart``), which the engine re-renders with the new
    ``version``; their rendered objects are the charts' own (not rendered offline)."""
    state = write_export(runs["1.14.1"], tmp_path / "state.json")
    plan = make_plan(runs["1.15.0"], read_stack_export(state, "mixed-os-racks", "test"))
    moved = sorted((s.op, s.urn.rsplit("::", 1)[-1]) for s in plan.steps if s.op not in ("same", "read"))
    assert moved == [("update", "rack-karpenter-NodeLifecycle")]
    before, after = _charts(runs["1.14.1"]), _charts(runs["1.15.0"])
    assert [before[c].inputs["version"] for c in ("karpenter", "karpenter-crd")] == ["1.14.1", "1.14.1"]
    assert [after[c].urn for c in ("karpenter", "karpenter-crd")] == [
        before[c].urn for c in ("karpenter", "karpenter-crd")
    ]
