"""Change safety: ``preview --state`` (the plan against a ``pulumi stack export``), the ``lane-removal``
guard and the ``lane-rollout`` advisory, and ``guard`` over ``pulumi preview --json`` output.

Upstream facts these tests pin (read upstream, in our words):

- ``pulumi stack export`` writes ``{"version": 3, "deployment": {"manifest", "secrets_providers",
  "resources": [...]}}`` (version 4 plus ``features`` when a newer feature is used); a secret is
  ``{"4dabf...": "1b47...", "ciphertext": ...}`` (pulumi ``pkg/resource/stack/deployment.go``).
- terraform-provider-aws ``internal/service/eks/node_group.go``: ``instance_types`` is ForceNew (the
  group is replaced); ``scaling_config`` and ``launch_template.version`` are updated in place.
  ``internal/service/ec2/ec2_launch_template.go``: only ``name``/``name_prefix`` are ForceNew; other
  content makes a new version. ``internal/service/sqs/queue.go``: ``fifo_queue`` is ForceNew.
- pulumi-kubernetes ``diff.go``: ``metadata.name`` replaces every kind; a custom resource's spec is
  updated in place.
- pulumi-eks's ``ManagedNodeGroup`` (``ignoreScalingChanges``) puts ``ignoreChanges:
  ["scalingConfig.desiredSize"]`` on its node group, so a desired-size change is no change.
- Karpenter's default disruption budget is ``nodes: 10%``; drifted nodes are replaced within the
  budget. EKS rolls a node group's nodes ``maxUnavailable`` (default 1) at a time; deleting a group
  scales its Auto Scaling group to zero.
- ``pulumi preview --json``: ``steps`` with ``op``, ``urn``, ``oldState``, ``newState``,
  ``diffReasons``, ``replaceReasons``, ``detailedDiff``; a replacement is one ``replace`` step unless
  ``--show-replacement-steps`` adds ``create-replacement``/``delete-replaced``.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mixed_os_racks.cli import main
from mixed_os_racks.offline.catalog import Catalog
from mixed_os_racks.offline.engine import run_program
from mixed_os_racks.offline.laneguard import judge
from mixed_os_racks.offline.plan import make_plan
from mixed_os_racks.offline.previewjson import read_preview_json
from mixed_os_racks.offline.stackexport import MAX_DEPTH, StateFileError, export_run, read_stack_export, write_export

from conftest import GPU_AMI, NODECLASS, NODEPOOL, REPO, stack_config

FIXTURES = Path(__file__).parent / "fixtures" / "preview"
NODEGROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NEW_AMI = "ami-0b1c2d3e4f5a60718"
PROJECT = "mixed-os-racks"

POOLS = [
    {"name": "gpu", "instance_families": "g5", "ami_id": GPU_AMI, "disk": 200, "disruption_budget_nodes": "2"},
    {"name": "batch", "instance_families": "c7i"},
]
GROUPS = [{"id": 1, "type": "g4dn.xlarge", "label": "gpu-inference", "min_size": 1, "max_size": 3}]


def config(pools: list[dict[str, Any]] = POOLS, groups: list[dict[str, Any]] = GROUPS) -> dict[str, Any]:
    """The prod example (the rack creates its cluster and Karpenter) with these pools and node groups."""
    return {
        **stack_config("prod"),
        "rack:cluster_name": "cs",
        "rack:additional_karpenter_nodepools_config": pools,
        "rack:additional_node_groups_config": groups,
    }


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory) -> Path:
    """The default catalog plus a newer build of the GPU image (what an ``ami_id`` bump points to)."""
    doc = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    newer = dict(
        next(a for a in doc["amis"] if a["id"] == GPU_AMI), id=NEW_AMI, creation_date="2026-11-29T08:00:00.000Z"
    )
    doc["amis"].append(newer)
    doc["ebs_encryption_by_default"] = True  # so a node group may pin the (unencrypted) image too
    path = tmp_path_factory.mktemp("catalog") / "amis.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture(scope="module")
def base_export(tmp_path_factory, catalog_file) -> Path:
    """The state ``pulumi up`` of ``config()`` leaves, as ``pulumi stack export`` writes it."""
    run = run_program(REPO, config(), Catalog.load(catalog_file), project=PROJECT, stack="cs")
    return write_export(run, tmp_path_factory.mktemp("state") / "cs.json")


def write_stack(tmp_path: Path, values: dict[str, Any]) -> str:
    path = tmp_path / "Pulumi.cs.yaml"
    path.write_text(yaml.safe_dump({"config": values}))
    return str(path)


def preview(
    tmp_path: Path, values: dict[str, Any], state: Path, catalog: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "plan.json"
    code = main(
        [
            "preview",
            "--config",
            write_stack(tmp_path, values),
            "--cwd",
            str(REPO),
            "--amis",
            str(catalog),
            "--state",
            str(state),
            "--no-policy",
            "--json",
            str(out),
            *extra,
        ]
    )
    return code, (json.loads(out.read_text()) if out.exists() else {})


def ops(doc: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(r["type"], r["name"]): r["op"] for r in doc["resources"]}


def changed(doc: dict[str, Any], type_: str, name: str) -> dict[str, Any]:
    return next(r for r in doc["resources"] if (r["type"], r["name"]) == (type_, name))


def verdicts(doc: dict[str, Any], policy: str) -> list[dict[str, Any]]:
    return [v for v in doc["violations"] if v["policy"] == policy]


# ---- the example stacks against their own state ----------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "staging"])
def test_an_example_stack_against_its_own_export_is_all_same(stack, tmp_path):
    run = run_program(REPO, stack_config(stack), project=PROJECT, stack=stack)
    assert run.resources
    for secrets in ("ciphertext", "plaintext"):
        export = export_run(run, secrets)
        assert export["version"] == 3 and {"manifest", "resources"} <= set(export["deployment"])
        path = tmp_path / f"{secrets}.json"
        path.write_text(json.dumps(export))
        plan = make_plan(run, read_stack_export(path, PROJECT, stack))
        assert {s.op for s in plan.steps} <= {"same", "read"}, [
            (s.urn, s.op, s.diff) for s in plan.steps if s.op not in ("same", "read")
        ]


def test_prod_against_its_own_export_through_the_cli(tmp_path, capsys):
    """The example stacks' main command, with the pack: nothing but ``same``, exit 0."""
    run = run_program(REPO, stack_config("prod"), project=PROJECT, stack="prod")
    state = write_export(run, tmp_path / "prod.json")
    out = tmp_path / "plan.json"
    assert main(["preview", "--stack", "prod", "--cwd", str(REPO), "--state", str(state), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["summary"] == {"same": len(doc["resources"])}
    assert all(r["op"] == "same" and r["diff"] == [] for r in doc["resources"])
    text = capsys.readouterr().out
    assert f"    {len(doc['resources'])} unchanged" in text.splitlines()
    assert "to create" not in text


def _former_tokens(value: Any) -> Any:
    """A state written before the components were hosted: every type token the package had then (the
    components' modules, ``contract.FORMER_TYPES``) in place of today's, in types, URNs and references."""
    from mixed_os_racks.contract import FORMER_TYPES

    if isinstance(value, dict):
        return {k: _former_tokens(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_former_tokens(v) for v in value]
    if isinstance(value, str):
        for old, new in FORMER_TYPES.items():
            value = old if value == new else re.sub(rf"(?<=[:$]){re.escape(new)}(?=$|[$:])", old, value)
    return value


def test_prod_keeps_its_urns_through_the_components_aliases(tmp_path, capsys):
    """A stack made before the components moved to the provider's ``index`` module: every component aliases its
    former type token, the engine finds each resource by it (its children by their parent's alias), so the
    prod example plans only ``same``, with the pack, exit 0."""
    run = run_program(REPO, stack_config("prod"), project=PROJECT, stack="prod")
    export = _former_tokens(export_run(run))
    urns = [r["urn"] for r in export["deployment"]["resources"]]
    assert "rack:index:Rack$rack:eks:NodeGroup::rack-ng-1" in "\n".join(urns)  # the former URNs
    assert not any("rack:index:NodeGroup" in urn for urn in urns)
    state = tmp_path / "before.json"
    state.write_text(json.dumps(export))
    out = tmp_path / "plan.json"
    assert main(["preview", "--stack", "prod", "--cwd", str(REPO), "--state", str(state), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["summary"] == {"same": len(doc["resources"])} and len(doc["resources"]) == len(urns)
    assert f"    {len(urns)} unchanged" in capsys.readouterr().out.splitlines()


def test_a_resource_without_its_alias_is_replaced_by_a_new_urn(tmp_path):
    """Without the alias (a component whose former token is unknown to it), the engine would create it and its
    children anew and delete the old ones: what the aliases prevent."""
    run = run_program(REPO, stack_config("prod"), project=PROJECT, stack="prod")
    for res in run.resources:
        res.aliases = []
    state = tmp_path / "before.json"
    state.write_text(json.dumps(_former_tokens(export_run(run))))
    plan = make_plan(run, read_stack_export(state, PROJECT, "prod"))
    ops = {s.op for s in plan.steps}
    assert {"create", "delete"} <= ops


def test_a_reordered_set_of_subnets_is_no_change(tmp_path):
    # terraform-provider-aws declares a node group's subnet_ids and taint, and a cluster's vpc_config ids,
    # schema.TypeSet: their order is not compared (a list such as instance_types is)
    values = stack_config("prod")
    run = run_program(REPO, values, project=PROJECT, stack="prod")
    state = read_stack_export(write_export(run, tmp_path / "prod.json"), PROJECT, "prod")
    subnets = values["rack:private_subnets_ids"].split(",")
    reordered = run_program(
        REPO, {**values, "rack:private_subnets_ids": ",".join(reversed(subnets))}, project=PROJECT, stack="prod"
    )
    changed = [(s.type, s.op, s.diff) for s in make_plan(reordered, state).steps if s.op not in ("same", "read")]
    assert not [c for c in changed if c[0] in ("aws:eks/nodeGroup:NodeGroup", "aws:eks/cluster:Cluster")], changed


def test_the_mixed_app_example_against_its_own_export(tmp_path):
    folder = REPO / "examples" / "mixed-app"
    values = yaml.safe_load((folder / "Pulumi.example.yaml").read_text())["config"]
    project = yaml.safe_load((folder / "Pulumi.yaml").read_text())["name"]
    run = run_program(folder, values, Catalog.load(folder / "amis.yaml"), project=project, stack="example")
    path = write_export(run, tmp_path / "state.json")
    plan = make_plan(run, read_stack_export(path, project, "example"))
    assert {s.op for s in plan.steps} <= {"same", "read"}

    # the state edited as if the objects had been created otherwise: Kubernetes' immutable fields replace
    doc = json.loads(path.read_text())
    by_name = {r["urn"].rsplit("::", 1)[-1]: r for r in doc["deployment"]["resources"]}
    by_name["web-deployment"]["inputs"]["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] = "web-old"
    by_name["inference-deployment"]["inputs"]["spec"]["replicas"] = 3
    by_name["inference-service"]["inputs"]["spec"]["clusterIP"] = "10.100.0.10"
    by_name["web-service"]["inputs"]["spec"]["type"] = "ClusterIP"
    path.write_text(json.dumps(doc))
    steps = {s.name: s for s in make_plan(run, read_stack_export(path, project, "example")).steps}
    web = steps["web-deployment"]
    assert web.op == "replace" and web.replace_keys == ['spec.selector.matchLabels["app.kubernetes.io/name"]']
    assert (steps["inference-deployment"].op, steps["inference-deployment"].diff) == ("update", ["spec.replicas"])
    assert (steps["inference-service"].op, steps["inference-service"].diff) == ("replace", ["spec.clusterIP"])
    assert (steps["web-service"].op, steps["web-service"].diff) == ("update", ["spec.type"])  # not replaced on type


# ---- the lane guard ---------------------------------------------------------------------------------------


def test_a_removed_pool_is_refused_and_allowed_by_name(tmp_path, base_export, catalog_file, capsys):
    values = config(pools=POOLS[:1])
    code, doc = preview(tmp_path, values, base_export, catalog_file)
    assert code == 1
    assert ops(doc)[(NODEPOOL, "rack-batch-nodepool")] == "delete"
    assert ops(doc)[(NODECLASS, "rack-batch-nodeclass")] == "delete"
    assert ops(doc)[("rack:index:KarpenterPool", "rack-batch")] == "delete"
    assert doc["summary"]["delete"] == 3 and "create" not in doc["summary"]
    (refusal,) = verdicts(doc, "lane-removal")
    assert refusal["level"] == "mandatory" and refusal["pack"] == "change-safety" and refusal["lane"] == "batch"
    assert "NodeClaims" in refusal["message"] and "drains and terminates every node" in refusal["message"]
    out = capsys.readouterr().out
    assert "[mandatory]  change-safety: lane-removal  (rack-batch-nodepool)" in out
    assert " -      ├─ rack:index:KarpenterPool" in out or " -      └─ rack:index:KarpenterPool" in out
    assert "    - 3 to delete" in out.splitlines()

    code, doc = preview(tmp_path, values, base_export, catalog_file, "--allow-lane-removal", "batch")
    assert code == 0 and verdicts(doc, "lane-removal") == []

    code, _ = preview(tmp_path, values, base_export, catalog_file, "--allow-lane-removal", "bacth,gpu")
    assert code == 1
    assert "--allow-lane-removal bacth: this change removes no lane of that name" in capsys.readouterr().err


def test_a_node_group_instance_type_change_is_refused_as_a_replacement(tmp_path, base_export, catalog_file):
    values = config(groups=[dict(GROUPS[0], type="g5.xlarge")])
    code, doc = preview(tmp_path, values, base_export, catalog_file)
    assert code == 1
    group = changed(doc, NODEGROUP, "rack-ng-1")
    # the GPU changes with the type, and with it the Cluster Autoscaler's GPU label (no replacement of its own)
    assert group["op"] == "replace" and group["replaceReasons"] == ["instanceTypes[0]"]
    assert group["diff"] == ["instanceTypes[0]", 'labels["k8s.amazonaws.com/accelerator"]']
    (refusal,) = verdicts(doc, "lane-removal")
    assert refusal["lane"] == "gpu-inference"
    assert "replaced" in refusal["message"] and "all its nodes (1 node)" in refusal["message"]
    assert "--allow-lane-removal gpu-inference" in refusal["message"]
    assert preview(tmp_path, values, base_export, catalog_file, "--allow-lane-removal", "gpu-inference")[0] == 0
    assert preview(tmp_path, values, base_export, catalog_file, "--allow-lane-removal", "rack-ng-1")[0] == 0
    # the rack around every lane is no lane: naming it allows nothing
    assert preview(tmp_path, values, base_export, catalog_file, "--allow-lane-removal", "rack")[0] == 1


def test_an_ami_id_bump_warns_with_the_pools_budget(tmp_path, base_export, catalog_file):
    values = config(pools=[dict(POOLS[0], ami_id=NEW_AMI), POOLS[1]])
    code, doc = preview(tmp_path, values, base_export, catalog_file)
    assert code == 0
    nodeclass = changed(doc, NODECLASS, "rack-gpu-nodeclass")
    assert nodeclass["op"] == "update" and "spec.amiSelectorTerms[0].id" in nodeclass["diff"]
    (advice,) = verdicts(doc, "lane-rollout")
    assert advice["level"] == "advisory" and advice["lane"] == "gpu"
    assert "2 nodes at a time (the pool's disruption budget)" in advice["message"]
    assert "ami_id" in advice["message"] and "disruption_budget_nodes" in advice["message"]
    assert verdicts(doc, "lane-removal") == []


def test_a_node_group_ami_id_bump_rolls_the_group_in_place(tmp_path, catalog_file):
    """pulumi-eks puts a custom AMI in the group's launch template: a new ami_id is a new template
    version (an update), and EKS rolls the group's nodes; the group is not replaced."""
    group = dict(GROUPS[0], type="m5.large", label="custom", ami_id=GPU_AMI, disk=100)
    run = run_program(REPO, config(groups=[group]), Catalog.load(catalog_file), project=PROJECT, stack="cs")
    state = write_export(run, tmp_path / "state.json")
    code, doc = preview(tmp_path, config(groups=[dict(group, ami_id=NEW_AMI)]), state, catalog_file)
    assert code == 0
    assert changed(doc, LAUNCH_TEMPLATE, "rack-ng-1-launchTemplate")["diff"] == ["imageId"]
    node_group = changed(doc, NODEGROUP, "rack-ng-1")
    assert node_group["op"] == "update" and node_group["diff"] == ["launchTemplate.version"]
    assert doc["summary"]["update"] == 2 and "replace" not in doc["summary"]
    (advice,) = verdicts(doc, "lane-rollout")
    assert advice["lane"] == "custom" and "1 node at a time (EKS's default maxUnavailable)" in advice["message"]


def test_a_scaling_change_updates_in_place_and_desired_size_is_ignored(tmp_path, base_export, catalog_file):
    """min_size sets scalingConfig.minSize and the initial desiredSize; the group ignores desiredSize changes."""
    values = config(groups=[dict(GROUPS[0], min_size=2, max_size=4)])
    code, doc = preview(tmp_path, values, base_export, catalog_file)
    assert code == 0
    group = changed(doc, NODEGROUP, "rack-ng-1")
    assert group["op"] == "update" and group["diff"] == ["scalingConfig.maxSize", "scalingConfig.minSize"]
    assert doc["violations"] == [] and doc["summary"]["update"] == 1


# ---- each op on the rack's own resource types (the state edited as the stack would have drifted) ---------


def _edited(base_export: Path, tmp_path: Path, edit) -> Path:
    doc = json.loads(base_export.read_text())
    edit(doc["deployment"]["resources"])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    return path


def _resource(resources: list[dict[str, Any]], type_: str, name: str) -> dict[str, Any]:
    return next(r for r in resources if r["type"] == type_ and r["urn"].endswith("::" + name))


def _drop(resources: list[dict[str, Any]], gone: dict[str, Any]) -> None:
    """Remove a resource from a state with every reference to it (a state naming a resource it lacks is refused)."""
    resources.remove(gone)
    for res in resources:
        res["dependencies"] = [u for u in res.get("dependencies") or [] if u != gone["urn"]]
        res["propertyDependencies"] = {
            k: [u for u in v if u != gone["urn"]] for k, v in (res.get("propertyDependencies") or {}).items()
        }


def test_each_op_on_the_racks_resource_types(tmp_path, base_export, catalog_file):
    def edit(resources):
        _resource(resources, "aws:sqs/queue:Queue", "rack-karpenter-interruption")["inputs"]["fifoQueue"] = True
        _resource(resources, "aws:cloudwatch/eventRule:EventRule", "rack-karpenter-health")["inputs"]["description"] = (
            "old"
        )
        _resource(resources, "aws:iam/role:Role", "rack-karpenter-node-role")["inputs"]["path"] = "/old/"
        attachment = _resource(resources, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "rack-ng-1-cni")
        attachment["inputs"]["policyArn"] = "arn:aws:iam::aws:policy/Old"
        pool = _resource(resources, NODEPOOL, "rack-gpu-nodepool")
        pool["inputs"]["spec"]["weight"] = 99
        nodeclass = _resource(resources, NODECLASS, "rack-batch-nodeclass")
        nodeclass["inputs"]["metadata"]["name"] = "batch-old"
        _drop(resources, _resource(resources, "aws:eks/addon:Addon", "rack-eks-pod-identity-agent"))
        gone = copy.deepcopy(_resource(resources, "aws:iam/policy:Policy", "rack-karpenter-Interruption"))
        gone["urn"] = gone["urn"].replace("rack-karpenter-Interruption", "rack-karpenter-Retired")
        resources.append(gone)

    code, doc = preview(tmp_path, config(), _edited(base_export, tmp_path, edit), catalog_file)
    got = ops(doc)
    assert got[("aws:sqs/queue:Queue", "rack-karpenter-interruption")] == "replace"
    assert got[("aws:cloudwatch/eventRule:EventRule", "rack-karpenter-health")] == "update"
    assert got[("aws:iam/role:Role", "rack-karpenter-node-role")] == "replace"
    assert got[(NODEPOOL, "rack-gpu-nodepool")] == "update"  # a custom resource's spec: in place
    assert got[(NODECLASS, "rack-batch-nodeclass")] == "replace"  # metadata.name: every Kubernetes kind
    assert got[("aws:eks/addon:Addon", "rack-eks-pod-identity-agent")] == "create"
    assert got[("aws:iam/policy:Policy", "rack-karpenter-Retired")] == "delete"
    assert got[("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "rack-ng-1-cni")] == "replace"
    assert got[(NODEGROUP, "rack-ng-1")] == "same"
    assert changed(doc, "aws:sqs/queue:Queue", "rack-karpenter-interruption")["diff"] == ["fifoQueue"]
    assert doc["summary"] == {op: list(got.values()).count(op) for op in doc["summary"]}
    # the class's replacement removes the batch lane's class while its pool stays: refused
    (refusal,) = verdicts(doc, "lane-removal")
    assert refusal["lane"] == "batch-old" and "EC2NodeClass is replaced" in refusal["message"]
    assert code == 1


def test_a_launch_template_content_change_rolls_the_group_and_a_new_template_replaces_it(
    tmp_path, base_export, catalog_file
):
    def content(resources):
        _resource(resources, LAUNCH_TEMPLATE, "rack-ng-1-launch-template")["inputs"]["imageId"] = (
            "ami-0123456789abcdef0"
        )

    code, doc = preview(tmp_path, config(), _edited(base_export, tmp_path, content), catalog_file)
    assert code == 0
    assert changed(doc, LAUNCH_TEMPLATE, "rack-ng-1-launch-template")["op"] == "update"
    group = changed(doc, NODEGROUP, "rack-ng-1")
    assert group["op"] == "update" and group["diff"] == ["launchTemplate.version"]
    (advice,) = verdicts(doc, "lane-rollout")
    assert advice["lane"] == "gpu-inference" and "1 node at a time (EKS's default maxUnavailable" in advice["message"]

    def renamed(resources):
        _resource(resources, LAUNCH_TEMPLATE, "rack-ng-1-launch-template")["inputs"]["name"] = "old-name"

    code, doc = preview(tmp_path, config(), _edited(base_export, tmp_path, renamed), catalog_file)
    assert code == 1
    assert changed(doc, LAUNCH_TEMPLATE, "rack-ng-1-launch-template")["op"] == "replace"
    group = changed(doc, NODEGROUP, "rack-ng-1")
    assert group["op"] == "replace" and "launchTemplate.id" in group["replaceReasons"]
    (refusal,) = verdicts(doc, "lane-removal")
    assert "because its launch template is replaced" in refusal["message"]


def test_a_replaced_node_role_replaces_its_group(tmp_path, base_export, catalog_file):
    """A role's path is ForceNew; the group's nodeRoleArn comes from the role, so it changes with the new
    role, and nodeRoleArn is ForceNew on a node group: the lane is replaced, and refused."""

    def moved(resources):
        _resource(resources, "aws:iam/role:Role", "rack-ng-1-role")["inputs"]["path"] = "/old/"

    code, doc = preview(tmp_path, config(), _edited(base_export, tmp_path, moved), catalog_file)
    assert code == 1
    assert changed(doc, "aws:iam/role:Role", "rack-ng-1-role")["op"] == "replace"
    group = changed(doc, NODEGROUP, "rack-ng-1")
    assert group["op"] == "replace" and group["replaceReasons"] == ["nodeRoleArn"]
    assert [v["lane"] for v in verdicts(doc, "lane-removal")] == ["gpu-inference"]


def test_what_a_real_export_adds_is_no_change(tmp_path, base_export, catalog_file, capsys):
    """Ciphertext is unknown, never a change; a bridged provider's ``__defaults`` (an auto-name the
    program leaves out) and the engine's default providers are not the program's changes."""

    def encrypt(resources):
        role = _resource(resources, "aws:iam/role:Role", "rack-karpenter-node-role")
        role["inputs"]["assumeRolePolicy"] = {
            "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
            "ciphertext": "v1:AAAA",
        }
        group = _resource(resources, NODEGROUP, "rack-ng-1")
        group["inputs"]["__defaults"] = ["nodeGroupName"]
        group["inputs"]["nodeGroupName"] = "rack-ng-1-4f3a2b1"
        stack = resources[0]["urn"].split("::pulumi:pulumi:Stack::")[0]
        resources.insert(
            1,
            {
                "urn": f"{stack}::pulumi:providers:aws::default_7_12_0",
                "custom": True,
                "id": "0f3c",
                "type": "pulumi:providers:aws",
                "inputs": {"region": "us-east-1"},
            },
        )

    code, doc = preview(tmp_path, config(), _edited(base_export, tmp_path, encrypt), catalog_file)
    assert code == 0 and set(doc["summary"]) <= {"same", "read"}
    assert "ciphertext, which the offline preview cannot read" in capsys.readouterr().err


# ---- guard over pulumi preview --json ---------------------------------------------------------------------


def guard(*args: str) -> int:
    return main(["guard", *args])


def test_a_lane_retained_on_delete_is_not_removed(tmp_path, base_export, catalog_file):
    # pulumi's delete step skips the provider's delete for a resource with retainOnDelete: the NodePool and
    # its class stay in the cluster, and their nodes with them
    doc = json.loads(Path(base_export).read_text())
    for res in doc["deployment"]["resources"]:
        if res["urn"].endswith(("::rack-batch-nodepool", "::rack-batch-nodeclass")):
            res["retainOnDelete"] = True
    retained = tmp_path / "retained.json"
    retained.write_text(json.dumps(doc))
    code, plan = preview(tmp_path, config(pools=POOLS[:1]), str(retained), catalog_file)
    assert ops(plan)[(NODEPOOL, "rack-batch-nodepool")] == "delete" and verdicts(plan, "lane-removal") == []
    assert code == 0
    # the same in a `pulumi preview --json`: its oldState carries the option
    step = {
        "op": "delete",
        "urn": f"{P}kubernetes:karpenter.sh/v1:NodePool::batch",
        "oldState": {
            "type": "kubernetes:karpenter.sh/v1:NodePool",
            "retainOnDelete": True,
            "inputs": {"metadata": {"name": "batch"}},
        },
    }
    assert guard(_preview_file(tmp_path, {"steps": [step]})) == 0
    step["oldState"]["retainOnDelete"] = False
    assert guard(_preview_file(tmp_path, {"steps": [step]})) == 1


def test_deleting_karpenters_crd_or_scaling_a_group_to_zero_removes_lanes(tmp_path, capsys):
    # Kubernetes deletes every object of a deleted CustomResourceDefinition (every NodePool, and through
    # their owner references every NodeClaim); a managed node group's desiredSize set to 0 is an in-place
    # update that terminates all its nodes together (terraform-provider-aws: desired_size, IntAtLeast(0))
    crd = {
        "op": "delete",
        "urn": f"{P}kubernetes:helm.sh/v4:Chart$kubernetes:apiextensions.k8s.io/v1:"
        "CustomResourceDefinition::karpenter-crd:nodepools.karpenter.sh",
        "oldState": {
            "type": "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
            "inputs": {"metadata": {"name": "nodepools.karpenter.sh"}},
        },
    }
    assert guard(_preview_file(tmp_path, {"steps": [crd]})) == 1
    assert "the CustomResourceDefinition nodepools.karpenter.sh is deleted" in capsys.readouterr().out
    scaled = {
        "op": "update",
        "urn": GROUP_URN,
        "detailedDiff": {"scalingConfig.desiredSize": {"kind": "UPDATE"}},
        "oldState": {
            "type": "aws:eks/nodeGroup:NodeGroup",
            "inputs": {"scalingConfig": {"desiredSize": 4, "maxSize": 6}},
        },
        "newState": {
            "type": "aws:eks/nodeGroup:NodeGroup",
            "inputs": {"scalingConfig": {"desiredSize": 0, "maxSize": 6}},
        },
    }
    assert guard(_preview_file(tmp_path, {"steps": [scaled]})) == 1
    assert "its managed node group is scaled to zero (desiredSize 4 -> 0)" in capsys.readouterr().out
    scaled["newState"]["inputs"]["scalingConfig"]["desiredSize"] = 2
    assert guard(_preview_file(tmp_path, {"steps": [scaled]})) == 0


@pytest.mark.parametrize(
    "path, words",
    [
        (
            "spec.template.spec.expireAfter",
            "its NodePool template changes spec.template.spec.expireAfter, so Karpenter "
            "marks every node of the pool drifted",
        ),
        (
            "spec.template.spec.requirements[1].values[0]",
            "its NodePool requirements change, so Karpenter marks drifted every node whose labels they no longer allow",
        ),
    ],
    ids=["expire-after", "requirements"],
)
def test_what_karpenter_drifts_a_pool_on_is_a_rollout(tmp_path, capsys, path, words):
    # karpenter NodePool.Hash covers the template (expireAfter, terminationGracePeriod) but not its
    # requirements, which drift on their own (RequirementsDrifted): only nodes they no longer allow
    step = {
        "op": "update",
        "urn": f"{P}kubernetes:karpenter.sh/v1:NodePool::batch",
        "detailedDiff": {path: {"kind": "UPDATE"}},
        "oldState": {"type": "kubernetes:karpenter.sh/v1:NodePool", "inputs": {"metadata": {"name": "batch"}}},
        "newState": {"type": "kubernetes:karpenter.sh/v1:NodePool", "inputs": {"metadata": {"name": "batch"}}},
    }
    assert guard(_preview_file(tmp_path, {"steps": [step]})) == 0
    assert words in capsys.readouterr().out


def test_a_pools_taints_in_a_new_order_are_no_drift(tmp_path, capsys):
    # karpenter's NodePool hash reads taints as a set (HashOptions SlicesAsSets): only new items drift nodes
    taints = [{"key": "a", "value": "1", "effect": "NoSchedule"}, {"key": "b", "value": "2", "effect": "NoSchedule"}]

    def step(new: list[dict[str, str]]) -> dict[str, Any]:
        state = lambda items: {  # noqa: E731
            "type": "kubernetes:karpenter.sh/v1:NodePool",
            "inputs": {
                "metadata": {"name": "ml"},
                "spec": {"template": {"spec": {"taints": items}}},
            },
        }
        return {
            "op": "update",
            "urn": f"{P}kubernetes:karpenter.sh/v1:NodePool::ml",
            "oldState": state(taints),
            "newState": state(new),
            "detailedDiff": {"spec.template.spec.taints[0].key": {"kind": "UPDATE"}},
        }

    assert guard(_preview_file(tmp_path, {"steps": [step(list(reversed(taints)))]})) == 0
    assert "lane-rollout" not in capsys.readouterr().out
    assert guard(_preview_file(tmp_path, {"steps": [step([taints[0], {**taints[1], "value": "3"}])]})) == 0
    assert "lane-rollout" in capsys.readouterr().out


def test_guard_refuses_a_removed_pool_and_allows_it_by_name(tmp_path, capsys):
    out = tmp_path / "verdicts.json"
    assert guard(str(FIXTURES / "pool-removed.json"), "--json", str(out)) == 1
    doc = json.loads(out.read_text())
    (refusal,) = doc["violations"]
    assert (refusal["policy"], refusal["level"], refusal["lane"]) == ("lane-removal", "mandatory", "batch")
    assert "together with its EC2NodeClass" in refusal["message"]
    assert doc["changeSummary"] == {"same": 1, "delete": 3}
    assert "change-safety: lane-removal  (rack-batch-nodepool)" in capsys.readouterr().out
    assert guard(str(FIXTURES / "pool-removed.json"), "--allow-lane-removal", "batch") == 0


def test_guard_folds_replacement_steps_and_refuses_the_group(tmp_path):
    out = tmp_path / "verdicts.json"
    assert guard(str(FIXTURES / "nodegroup-instance-type.json"), "--json", str(out)) == 1
    (refusal,) = json.loads(out.read_text())["violations"]
    assert refusal["lane"] == "gpu-inference" and "all its nodes (3 nodes)" in refusal["message"]
    assert "creates the replacement group first" in refusal["message"]  # nodeGroupName in __defaults: auto-named
    assert guard(str(FIXTURES / "nodegroup-instance-type.json"), "--allow-lane-removal", "rack-ng-1") == 0


def test_guard_advises_on_an_ami_rollout_with_the_budgets_in_effect(tmp_path):
    out = tmp_path / "verdicts.json"
    assert guard(str(FIXTURES / "ami-bump.json"), "--json", str(out)) == 0
    by_lane = {v["lane"]: v for v in json.loads(out.read_text())["violations"]}
    assert set(by_lane) == {"gpu", "gpu-inference"} and {v["level"] for v in by_lane.values()} == {"advisory"}
    assert "10% of the pool's nodes at a time (rounded up; Karpenter's default budget)" in by_lane["gpu"]["message"]
    assert (
        "4 nodes" in by_lane["gpu-inference"]["message"] and "1 node at a time" in by_lane["gpu-inference"]["message"]
    )


def test_guard_reads_the_update_config_of_a_group(tmp_path):
    doc = json.loads((FIXTURES / "ami-bump.json").read_text())
    group = doc["steps"][-1]
    group["newState"]["inputs"]["updateConfig"] = {"maxUnavailable": 2}
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "verdicts.json"
    assert guard(str(path), "--json", str(out)) == 0
    (advice,) = [v for v in json.loads(out.read_text())["violations"] if v["lane"] == "gpu-inference"]
    assert "2 nodes at a time (its updateConfig.maxUnavailable)" in advice["message"]


def test_guard_without_the_pool_says_its_budget_is_not_known(tmp_path):
    """Without --show-sames an unchanged NodePool is not among the steps: the advisory says which budget it assumes."""
    doc = json.loads((FIXTURES / "ami-bump.json").read_text())
    doc["steps"] = [s for s in doc["steps"] if s["op"] != "same"]
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "verdicts.json"
    assert guard(str(path), "--json", str(out)) == 0
    (advice,) = [v for v in json.loads(out.read_text())["violations"] if v["urn"].endswith("rack-gpu-nodeclass")]
    assert "its own budget is not known" in advice["message"] and "--show-sames" in advice["message"]


def test_guard_uses_a_pools_drift_budget(tmp_path):
    """Budgets limited to other reasons do not bound drift; a Drifted one does."""
    doc = json.loads((FIXTURES / "ami-bump.json").read_text())
    pool = next(s for s in doc["steps"] if s["op"] == "same")
    pool["newState"]["inputs"]["spec"]["disruption"] = {
        "budgets": [{"nodes": "0", "reasons": ["Underutilized"]}, {"nodes": "3", "reasons": ["Drifted", "Empty"]}]
    }
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "verdicts.json"
    assert guard(str(path), "--json", str(out)) == 0
    (advice,) = [v for v in json.loads(out.read_text())["violations"] if v["lane"] == "gpu"]
    assert "3 nodes at a time (the pool's disruption budget)" in advice["message"]


@pytest.mark.parametrize(
    "budgets, words",
    [
        (
            [{"nodes": "0", "reasons": ["Underutilized"]}],
            "all the pool's nodes at once (its disruption budgets do not cover drift",
        ),
        ([], "all the pool's nodes at once (its disruption budgets do not cover drift"),
        (
            [{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}],
            "0 nodes (while its schedule '0 9 * * mon-fri' is active for 8h) at a time (the pool's disruption budget); "
            "outside "
            "its schedules, all the pool's nodes at once",
        ),
    ],
    ids=["other-reasons", "empty", "scheduled"],
)
def test_budgets_that_do_not_bound_drift_say_so(tmp_path, budgets, words):
    # karpenter GetAllowedDisruptionsByReason starts from no limit and takes the least of the budgets that
    # apply to the reason and are active; the CRD's 10% default only fills in budgets left out
    doc = json.loads((FIXTURES / "ami-bump.json").read_text())
    pool = next(s for s in doc["steps"] if s["op"] == "same")
    pool["newState"]["inputs"]["spec"]["disruption"] = {"budgets": budgets}
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "verdicts.json"
    assert guard(str(path), "--json", str(out)) == 0
    (advice,) = [v for v in json.loads(out.read_text())["violations"] if v["lane"] == "gpu"]
    assert words in advice["message"]


# ---- bad input --------------------------------------------------------------------------------------------


def _state_error(tmp_path, capsys, content: str | bytes) -> str:
    path = tmp_path / "state.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    code = main(["preview", "--stack", "dev", "--cwd", str(REPO), "--state", str(path), "--no-policy"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and str(path) in err, err
    return err


def _export(resources: list[dict[str, Any]], version: int = 3, **extra: Any) -> str:
    return json.dumps({"version": version, "deployment": {"manifest": {}, "resources": resources}, **extra})


STACK_URN = "urn:pulumi:dev::mixed-os-racks::pulumi:pulumi:Stack::mixed-os-racks-dev"


def test_a_bad_state_file_exits_2_naming_the_file_and_the_problem(tmp_path, capsys):
    assert "not JSON (line 1" in _state_error(tmp_path, capsys, "{nope")
    assert "not a text file" in _state_error(tmp_path, capsys, b"\x89\xff\x00age-encrypted")
    # the CLI reads deployment versions 1 to 4 (``DeploymentSchemaVersionOldestSupported``), migrating 1 and 2
    assert "deployment version 0: versions 1 to 4 are read" in _state_error(tmp_path, capsys, _export([], version=0))
    assert "newer than this tool" in _state_error(tmp_path, capsys, _export([], version=5))
    assert "version 3.0 is not a deployment version" in _state_error(tmp_path, capsys, _export([], version=3.0))
    assert "features this tool does not know: fancy" in _state_error(
        tmp_path, capsys, _export([], version=4, features=["hooks", "fancy"])
    )
    assert "no version and deployment" in _state_error(tmp_path, capsys, json.dumps({"resources": []}))
    assert "`pulumi preview --json` output" in _state_error(tmp_path, capsys, json.dumps({"steps": []}))
    assert "the whole deployment is a string" in _state_error(
        tmp_path, capsys, json.dumps({"version": 3, "deployment": "v1:ZW5jcnlwdGVk"})
    )
    other = STACK_URN.replace("dev::", "prod::")
    err = _state_error(tmp_path, capsys, _export([{"urn": other, "custom": False, "type": "pulumi:pulumi:Stack"}]))
    assert "belongs to stack 'prod' of project 'mixed-os-racks', not stack 'dev'" in err
    err = _state_error(
        tmp_path,
        capsys,
        _export(
            [
                {
                    "urn": STACK_URN.replace("::mixed-os-racks::", "::other::"),
                    "custom": False,
                    "type": "pulumi:pulumi:Stack",
                }
            ]
        ),
    )
    assert "of project 'other'" in err
    assert "is not a Pulumi URN" in _state_error(tmp_path, capsys, _export([{"urn": "arn:aws:x", "type": "t"}]))
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}
    err = _state_error(
        tmp_path,
        capsys,
        _export([{"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack", "inputs": {"x": secret}}]),
    )
    assert "inputs.x: a secret value with neither ciphertext nor plaintext" in err


def test_a_version_4_export_with_known_features_is_read(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(
        _export([{"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack"}], version=4, features=["hooks"])
    )
    state = read_stack_export(path, "mixed-os-racks", "dev")
    assert state.version == 4 and [r.type for r in state.resources] == ["pulumi:pulumi:Stack"]


# ---- references between resources, as the engine's integrity check has them --------------------------------
# pulumi/pulumi pkg/resource/deploy/snapshot.go, VerifyIntegrity: a resource's parent, dependencies, property
# dependencies and deletedWith must be resources of the state (and come before it), its provider a provider
# resource of the state (URN::ID; a resource pending replacement is exempt); replaceWith names resources likewise.

AWS = "urn:pulumi:dev::mixed-os-racks::pulumi:providers:aws::default"
QUEUE = "urn:pulumi:dev::mixed-os-racks::aws:sqs/queue:Queue::q"
TOPIC = "urn:pulumi:dev::mixed-os-racks::aws:sns/topic:Topic::t"
MISSING = "urn:pulumi:dev::mixed-os-racks::aws:sqs/queue:Queue::gone"


def _linked(**queue: Any) -> list[dict[str, Any]]:
    return [
        {"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack"},
        {"urn": AWS, "custom": True, "type": "pulumi:providers:aws", "id": "p-1"},
        {"urn": TOPIC, "custom": True, "type": "aws:sns/topic:Topic", "id": "t", "provider": f"{AWS}::p-1"},
        {
            "urn": QUEUE,
            "custom": True,
            "type": "aws:sqs/queue:Queue",
            "id": "q",
            "parent": STACK_URN,
            "provider": f"{AWS}::p-1",
            "dependencies": [TOPIC],
            "inputs": {"name": "q"},
            **queue,
        },
    ]


@pytest.mark.parametrize(
    "field, value, key",
    [
        ("parent", MISSING, "parent"),
        ("dependencies", [TOPIC, MISSING], "dependencies[1]"),
        ("propertyDependencies", {"name": [TOPIC], "policy": [MISSING]}, "propertyDependencies.policy[0]"),
        ("deletedWith", MISSING, "deletedWith"),
        ("replaceWith", [MISSING], "replaceWith[0]"),
    ],
)
def test_a_state_naming_a_resource_it_lacks_is_refused(tmp_path, capsys, field, value, key):
    err = _state_error(tmp_path, capsys, _export(_linked(**{field: value})))
    assert f"deployment.resources[3].{key}: {MISSING} is not a resource of the state ({QUEUE} names it" in err, err


@pytest.mark.parametrize("provider", [f"{AWS}::p-2", f"{MISSING}::p-1", "not-a-reference"])
def test_a_state_naming_a_provider_it_lacks_is_refused(tmp_path, capsys, provider):
    err = _state_error(tmp_path, capsys, _export(_linked(provider=provider)))
    assert f"deployment.resources[3].provider: {provider} is not a provider of the state" in err and QUEUE in err, err


def test_a_resource_pending_replacement_may_name_a_provider_that_is_gone(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(_export(_linked(provider=f"{AWS}::p-0", pendingReplacement=True)))
    assert [r.name for r in read_stack_export(path).resources][-1] == "q"


def test_resources_naming_each_other_round_a_cycle_are_refused(tmp_path, capsys):
    resources = _linked(propertyDependencies={"name": [TOPIC]})
    resources[2]["deletedWith"] = QUEUE
    err = _state_error(tmp_path, capsys, _export(resources))
    assert (
        f"the resources it names form a cycle: {TOPIC} (deletedWith) -> {QUEUE} (dependencies[0]) -> {TOPIC}" in err
    ), err


def test_the_order_of_the_resources_is_not_checked(tmp_path):
    """The engine writes each referent before the resources naming it; a state re-sorted by a tool reads the same."""
    path = tmp_path / "state.json"
    path.write_text(_export(list(reversed(_linked(deletedWith=TOPIC, replaceWith=[TOPIC])))))
    assert sorted(r.name for r in read_stack_export(path).resources) == ["default", "mixed-os-racks-dev", "q", "t"]


# What the engine's check (VerifyIntegrity, run on every state it loads) lets through, and so must read here:
# - it skips an empty URN in dependencies, propertyDependencies and replaceWith (no reference at all);
# - it names a provider resource that has no id by the URN and the engine's unknown-id token, so a reference
#   ending in that token is that provider's (and one ending in an empty id is no provider's);
# - a URN a resource names is there once any earlier resource of that URN is, the old (delete: true) copy of a
#   replaced resource included: an update stopped mid-replacement leaves the new copy after the resources naming
#   it, and may leave it naming one of them;
# - a resource pending replacement is exempt from its provider being there (but its provider must still read as a
#   provider reference), so its provider is no link of a cycle either.
UNKNOWN_ID = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def test_an_empty_urn_among_the_references_is_no_reference(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(
        _export(_linked(dependencies=["", TOPIC], propertyDependencies={"name": ["", TOPIC]}, replaceWith=[""]))
    )
    assert read_stack_export(path).resources[-1].dependencies == ["", TOPIC]


def test_a_provider_without_an_id_is_named_with_the_unknown_id(tmp_path, capsys):
    resources = _linked(provider=f"{AWS}::{UNKNOWN_ID}")
    del resources[1]["id"]
    resources[2]["provider"] = f"{AWS}::{UNKNOWN_ID}"
    path = tmp_path / "state.json"
    path.write_text(_export(resources))
    assert read_stack_export(path).resources[-1].provider == f"{AWS}::{UNKNOWN_ID}"
    resources[3]["provider"] = f"{AWS}::"
    err = _state_error(tmp_path, capsys, _export(resources))
    assert f"deployment.resources[3].provider: {AWS}:: is not a provider of the state" in err, err


def test_a_replacement_stopped_midway_may_leave_the_new_copy_naming_what_names_the_old(tmp_path, capsys):
    """The old queue (delete: true) comes first; the topic was made naming it; the new queue, made later, names the
    topic. The engine reads this; without the old copy no order could put each resource after what it names."""
    stack, aws, topic, queue = _linked()
    old = {**queue, "id": "q-old", "delete": True, "dependencies": []}
    topic["dependencies"] = [QUEUE]
    path = tmp_path / "state.json"
    path.write_text(_export([stack, aws, old, topic, queue]))
    state = read_stack_export(path)
    assert [r.name for r in state.resources][-1] == "q" and [r.id for r in state.pending_deletes] == ["q-old"]
    err = _state_error(tmp_path, capsys, _export([stack, aws, topic, queue]))
    assert (
        f"the resources it names form a cycle: {TOPIC} (dependencies[0]) -> {QUEUE} (dependencies[0]) -> {TOPIC}" in err
    ), err


def test_the_provider_of_a_resource_pending_replacement_is_no_link_of_a_cycle(tmp_path, capsys):
    stack, aws, topic, queue = _linked(provider=f"{AWS}::p-0", pendingReplacement=True, dependencies=[])
    aws["dependencies"] = [QUEUE]
    path = tmp_path / "state.json"
    path.write_text(_export([stack, queue, aws, topic]))
    assert [r.name for r in read_stack_export(path).resources] == ["mixed-os-racks-dev", "q", "default", "t"]
    queue["provider"] = "not-a-reference"  # the engine still reads it as a provider reference first
    err = _state_error(tmp_path, capsys, _export([stack, queue, aws, topic]))
    assert "deployment.resources[1].provider: not-a-reference is not a provider of the state" in err, err


def test_a_cycle_of_many_resources_is_named_in_a_few_lines(tmp_path, capsys):
    count = 100_000
    urns = [f"urn:pulumi:dev::mixed-os-racks::aws:sqs/queue:Queue::q{n}" for n in range(count)]
    resources = [{"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack"}] + [
        {"urn": urn, "custom": False, "type": "aws:sqs/queue:Queue", "dependencies": [urns[(n + 1) % count]]}
        for n, urn in enumerate(urns)
    ]
    err = _state_error(tmp_path, capsys, _export(resources))
    assert (
        f"deployment.resources[1]: {urns[0]}: the resources it names form a cycle: {urns[0]} (dependencies[0]) -> "
        f"{urns[1]} (dependencies[0])"
    ) in err, err
    assert f"... ({count - 6} more) -> {urns[0]} (pulumi writes each resource after those it names" in err, err
    assert len(err) < 2000


def test_a_huge_urn_is_cut_short_in_the_message_that_names_it(tmp_path, capsys):
    huge = "urn:pulumi:dev::mixed-os-racks::aws:sqs/queue:Queue::" + "x" * 10_000_000
    err = _state_error(tmp_path, capsys, _export(_linked(dependencies=[huge])))
    assert (
        f"deployment.resources[3].dependencies[0]: {huge[:200]}...({len(huge)} characters) is not a resource of the "
        f"state ({QUEUE} names it"
        in err
        and len(err) < 1000
    ), err[:2000]
    key = "k" * 10_000_000
    err = _state_error(tmp_path, capsys, _export(_linked(propertyDependencies={key: [MISSING]})))
    assert (
        f"deployment.resources[3].propertyDependencies.{key[:60]}...({len(key)} characters)[0]: {MISSING} is not a "
        f"resource"
        in err
        and len(err) < 1000
    ), err[:2000]


# ---- numbers past a float's range -------------------------------------------------------------------------------
# Go's encoding/json (the CLI's) refuses a number a float64 cannot hold; Python's json reads 1e400 as inf.


@pytest.mark.parametrize("number", ["1e400", "-2.5e309", "1" + "0" * 400])
def test_a_state_with_a_number_past_a_floats_range_is_refused_naming_the_key(tmp_path, capsys, number):
    text = _export(_linked(inputs={"name": "q", "tags": {"size": 0}})).replace('"size": 0', f'"size": {number}')
    err = _state_error(tmp_path, capsys, text)
    assert f"deployment.resources[3].inputs.tags.size: {number[:60]} is not a finite number" in err, err


def test_a_preview_with_a_number_past_a_floats_range_is_refused_naming_the_key(tmp_path, capsys):
    path = tmp_path / "preview.json"
    path.write_text('{"steps": [{"op": "same", "urn": "%s", "newState": {"inputs": {"n": [1, 1e400]}}}]}' % QUEUE)
    assert guard(str(path)) == 2
    err = capsys.readouterr().err
    assert f"{path}: steps[0].newState.inputs.n[1]: 1e400 is not a finite number" in err and "Traceback" not in err, err
    lines = tmp_path / "events.json"  # a streaming preview: one engine event a line
    lines.write_text(
        '{"sequence": 0, "preludeEvent": {}}\n{"sequence": 1, "summaryEvent": {"resourceChanges": {"same": 1e999}}}\n'
    )
    assert guard(str(lines)) == 2
    assert "line 2: summaryEvent.resourceChanges.same: 1e999 is not a finite number" in capsys.readouterr().err


def test_a_number_past_a_floats_range_under_a_huge_key_is_named_in_a_line(tmp_path, capsys):
    key = "k" * 1_000_000
    text = _export(_linked(inputs={"name": "q", key: [{"size": 0}]})).replace('"size": 0', '"size": 1e400')
    err = _state_error(tmp_path, capsys, text)
    assert (
        f"deployment.resources[3].inputs.{key[:60]}...(1000000 characters)[0].size: 1e400 is not a finite number" in err
        and len(err) < 1000
    ), err[:2000]


def test_a_huge_key_over_many_values_is_read_in_little_memory(tmp_path):
    """Looking for numbers past a float's range must not copy a long key once for every value under it (a 1 MB
    key over 10,000 values would be 10 GB)."""
    key = "k" * 1_000_000
    inputs = {key: {f"a{n}": 0 for n in range(10_000)}}
    path = tmp_path / "preview.json"
    path.write_text(
        json.dumps(
            {"steps": [{"op": "same", "urn": QUEUE, "newState": {"type": "aws:sqs/queue:Queue", "inputs": inputs}}]}
        )
    )

    def two_gigabytes() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run(
        [sys.executable, "-m", "mixed_os_racks", "guard", str(path)],
        capture_output=True,
        text=True,
        preexec_fn=two_gigabytes,
        timeout=300,
    )
    assert done.returncode == 0 and "No lane is removed or rolled." in done.stdout, done.stderr[-2000:]


# ---- times -----------------------------------------------------------------------------------------------------
# The CLI reads created/modified with Go's time.Time JSON reader (Go 1.25 for the current CLI): a fast RFC 3339 path,
# and when that fails, Go's layout parser with the RFC 3339 layout, whose extra strictness checks are switched off in
# the standard library. So Go reads a comma before the fraction, a one-digit hour, a zone of +24:00 or +23:60, and
# the year 0000; it refuses a lower-case t or z, a leap second :60, an hour 24, a zone hour past 24 or minute past 60,
# a year that is not four digits, a day its month lacks, and a zone written +0000 or +00. (Checked by running Go's
# reader on each case; the zone limits read from the current standard library, which added them after Go 1.19.)


@pytest.mark.parametrize(
    "when",
    [
        "2026-01-02T03:04:05+0000",
        "2026-W01-1T03:04:05Z",
        "2026-01-02t03:04:05Z",
        "2026-01-02T03:04:05z",
        "2026-01-02T03:04Z",
        "2026-02-30T03:04:05Z",
        "2026-01-02T03:04:05\u0661Z",
        "2026-01-02T03:04:60Z",
        "2026-01-02T24:00:00Z",
        "2026-01-02T03:04:05+25:00",
        "2026-01-02T03:04:05+00:61",
        "10000-01-02T03:04:05Z",
        "999-01-02T03:04:05Z",
        "2026-01-02T03:04:05+-1:00",
        "2026-01-02T03:04:05.Z",
        "2026-01-02T03:4:05Z",
        "2026-02-29T03:04:05Z",
    ],
)
def test_a_time_go_cannot_read_makes_the_state_unreadable(tmp_path, capsys, when):
    err = _state_error(tmp_path, capsys, _export(_linked(modified=json.loads(f'"{when}"'))))
    assert "deployment.resources[3].modified: must be a time as pulumi writes it (RFC 3339)" in err, err


@pytest.mark.parametrize(
    "when",
    [
        "2026-01-02T03:04:05Z",
        "2026-01-02T03:04:05.123456789-07:00",
        "2026-01-02T03:04:05.1234567891+00:00",
        "2026-01-02T03:04:05,5Z",
        "2026-01-02T3:04:05Z",
        "2026-01-02T03:04:05+24:00",
        "2026-01-02T03:04:05-23:60",
        "0000-02-29T00:00:00Z",
        "0999-01-02T03:04:05Z",
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59.5-01:00",
        "2024-02-29T03:04:05Z",
    ],
)
def test_a_time_go_reads_is_read(tmp_path, when):
    path = tmp_path / "state.json"
    path.write_text(_export(_linked(modified=when, created=when)))
    assert read_stack_export(path).resources[-1].modified == when


def test_a_bad_preview_file_exits_2_naming_the_file_and_the_problem(tmp_path, capsys):
    def error(content: str) -> str:
        path = tmp_path / "preview.json"
        path.write_text(content)
        code = guard(str(path))
        err = capsys.readouterr().err
        assert code == 2 and str(path) in err and "Traceback" not in err, err
        return err

    assert "not JSON" in error("nope")
    assert "`pulumi stack export` file, not `pulumi preview --json` output" in error(_export([]))
    assert "no steps and no changeSummary" in error(json.dumps({"resources": []}))
    assert "no steps and no changeSummary" in error(json.dumps({}))
    assert "op 'explode' is not a step op" in error(json.dumps({"steps": [{"op": "explode", "urn": STACK_URN}]}))
    assert "steps[0]: urn 'x' is not a Pulumi URN" in error(json.dumps({"steps": [{"op": "same", "urn": "x"}]}))
    mixed = [{"op": "same", "urn": STACK_URN}, {"op": "same", "urn": STACK_URN.replace("dev::", "prod::")}]
    assert "mixes stacks" in error(json.dumps({"steps": mixed}))
    assert "detailedDiff: must be null or an object" in error(
        json.dumps({"steps": [{"op": "same", "urn": STACK_URN, "detailedDiff": []}]})
    )
    missing = tmp_path / "missing.json"
    assert guard(str(missing)) == 2 and f"{missing}: no such file" in capsys.readouterr().err


def test_allow_lane_removal_needs_a_state(capsys):
    assert main(["preview", "--stack", "dev", "--cwd", str(REPO), "--allow-lane-removal", "gpu", "--no-policy"]) == 2
    assert "--allow-lane-removal needs --state FILE" in capsys.readouterr().err


def test_the_mixed_os_racks_command_is_the_cli_with_guard():
    """The ``mixed-os-racks`` script the package installs names the CLI's entry, and ``guard`` runs as a process."""
    import importlib
    import subprocess
    import sys
    import tomllib

    target = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]["mixed-os-racks"]
    module, attr = target.split(":")
    assert callable(getattr(importlib.import_module(module), attr))
    script = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; from {module} import {attr}; "
            f"sys.argv = ['mixed-os-racks', 'guard', {str(FIXTURES / 'pool-removed.json')!r}]; {attr}()",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert script.returncode == 1 and "lane-removal" in script.stdout, script.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "mixed_os_racks.offline", "guard", str(FIXTURES / "pool-removed.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "lane-removal" in proc.stdout


# ---- hostile files: an error, never a traceback -----------------------------------------------------------

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.sampled_from(["gpu", "10%", "Drifted"])
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "metadata",
                    "name",
                    "spec",
                    "template",
                    "nodeClassRef",
                    "disruption",
                    "budgets",
                    "nodes",
                    "reasons",
                    "labels",
                    "scalingConfig",
                    "desiredSize",
                    "updateConfig",
                    "parent",
                    "inputs",
                    "propertyDependencies",
                    "launchTemplate",
                ]
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)
_types = st.sampled_from(
    [NODEPOOL, NODECLASS, NODEGROUP, LAUNCH_TEMPLATE, "eks:index:ManagedNodeGroup", "pulumi:pulumi:Stack"]
)


@st.composite
def _preview_docs(draw):
    steps = []
    for n in range(draw(st.integers(0, 4))):
        type_ = draw(_types)
        step = {
            "op": draw(
                st.sampled_from(["same", "update", "replace", "delete", "create-replacement", "delete-replaced"])
            ),
            "urn": f"urn:pulumi:dev::p::{type_}::r{n % 2}",
            "detailedDiff": draw(
                st.one_of(
                    st.none(),
                    st.dictionaries(
                        st.sampled_from(["spec.amiSelectorTerms[0].id", "launchTemplate.version", "instanceTypes[0]"]),
                        _json,
                        max_size=2,
                    ),
                )
            ),
        }
        for key in ("oldState", "newState"):
            if draw(st.booleans()):
                step[key] = draw(
                    st.dictionaries(
                        st.sampled_from(["inputs", "parent", "propertyDependencies", "type"]), _json, max_size=3
                    )
                )
        steps.append(step)
    return {
        "steps": steps,
        "changeSummary": draw(st.dictionaries(st.sampled_from(["same", "update"]), st.integers(0, 3))),
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=_preview_docs())
def test_any_preview_json_is_judged_or_refused(tmp_path, doc):
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(doc))
    try:
        steps, _ = read_preview_json(path)
    except StateFileError as exc:
        assert str(path) in str(exc)
        return
    for verdict in judge(steps):
        assert verdict["policy"] in ("lane-removal", "lane-rollout") and verdict["message"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    resources=st.lists(
        st.fixed_dictionaries(
            {"type": _types},
            optional={
                "inputs": _json,
                "outputs": _json,
                "parent": _json,
                "id": _json,
                "ignoreChanges": _json,
                "propertyDependencies": _json,
                "custom": _json,
                "delete": _json,
            },
        ),
        max_size=4,
    )
)
def test_any_stack_export_is_read_or_refused(tmp_path, resources):
    for n, res in enumerate(resources):
        res["urn"] = f"urn:pulumi:dev::mixed-os-racks::{res['type']}::r{n}"
    path = tmp_path / "state.json"
    path.write_text(_export(resources))
    try:
        state = read_stack_export(path, "mixed-os-racks", "dev")
    except StateFileError as exc:
        assert str(path) in str(exc)
        return
    assert len(state.resources) <= len(resources)


P = "urn:pulumi:prod::mixed-os-racks::"
GROUP_URN = f"{P}eks:index:ManagedNodeGroup$aws:eks/nodeGroup:NodeGroup::ng"
COMPONENT_URN = f"{P}eks:index:ManagedNodeGroup::ng"


def _preview_file(tmp_path: Path, doc: dict[str, Any]) -> str:
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize(
    "parents", [{GROUP_URN: COMPONENT_URN, COMPONENT_URN: GROUP_URN}, {GROUP_URN: GROUP_URN}], ids=["two", "itself"]
)
def test_parents_in_a_cycle_are_refused_not_walked_for_ever(tmp_path, capsys, parents):
    steps = [{"op": "delete", "urn": urn, "oldState": {"parent": parent}} for urn, parent in parents.items()]
    assert guard(_preview_file(tmp_path, {"steps": steps})) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'preview.json'}: {GROUP_URN}: its parents form a cycle: {GROUP_URN} -> ")
    # the same in a stack export
    resources = [{"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack"}] + [
        {
            "urn": u.replace("prod::", "dev::"),
            "custom": False,
            "type": u.split("::")[2].rsplit("$", 1)[-1],
            "parent": p.replace("prod::", "dev::"),
        }
        for u, p in parents.items()
    ]
    assert "its parents form a cycle" in _state_error(tmp_path, capsys, _export(resources))


def test_a_parent_chain_deeper_than_pythons_recursion_limit_is_walked(tmp_path, capsys):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(600)  # a lower limit, so a chain past it stays small
    try:
        depth = 650
        resources = [{"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack"}]
        parent, type_ = STACK_URN, "pulumi:pulumi:Stack"
        for n in range(depth):
            type_ += "$team:index:Layer"
            resources.append(
                {
                    "urn": f"urn:pulumi:dev::mixed-os-racks::{type_}::layer-{n}",
                    "custom": False,
                    "type": "team:index:Layer",
                    "parent": parent,
                }
            )
            parent = resources[-1]["urn"]
        path = tmp_path / "state.json"
        path.write_text(_export(resources))
        code = main(["preview", "--stack", "dev", "--cwd", str(REPO), "--state", str(path), "--no-policy"])
        out, err = capsys.readouterr()
        assert code == 0 and "error" not in err, err
        assert f"layer-{depth - 1}" in out  # the deepest is shown, to be deleted
        steps = [{"op": "delete", "urn": r["urn"], "oldState": r} for r in resources[1:]]
        assert guard(_preview_file(tmp_path, {"steps": steps})) == 0
    finally:
        sys.setrecursionlimit(limit)


def test_a_preview_that_failed_is_not_judged_as_a_plan(tmp_path, capsys):
    """pulumi writes the steps it had when the preview failed, and an error diagnostic."""
    doc = {
        "steps": [{"op": "update", "urn": GROUP_URN, "detailedDiff": {"scalingConfig.maxSize": {}}}],
        "diagnostics": [{"urn": STACK_URN, "severity": "error", "message": "error: program failed\n"}],
    }
    assert guard(_preview_file(tmp_path, doc)) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'preview.json'}: the preview failed (error: program failed), "
        "so its steps are not the whole plan: fix the error and preview again\n"
    )
    doc["diagnostics"][0]["severity"] = "warning"
    assert guard(_preview_file(tmp_path, doc)) == 0


def test_a_lane_name_with_colons_or_unseen_characters_is_shown_whole_and_escaped(tmp_path, capsys):
    step = {
        "op": "delete",
        "urn": f"{P}eks:index:ManagedNodeGroup$aws:eks/nodeGroup:NodeGroup::team::gpu",
        "oldState": {"inputs": {}},
    }
    path = _preview_file(tmp_path, {"steps": [step]})
    assert guard(path) == 1
    assert "change-safety: lane-removal  (team::gpu)" in capsys.readouterr().out
    assert guard(path, "--allow-lane-removal", "gpu") == 1  # not another group's lane named gpu
    assert guard(path, "--allow-lane-removal", "team::gpu") == 0
    capsys.readouterr()
    name = "b\u200batch\n\nNo lane is removed or rolled."
    pool = {
        "op": "delete",
        "urn": f"{P}kubernetes:karpenter.sh/v1:NodePool::batch",
        "oldState": {"inputs": {"metadata": {"name": name}, "spec": {}}},
    }
    assert guard(_preview_file(tmp_path, {"steps": [pool]})) == 1
    out = capsys.readouterr().out
    assert "No lane is removed" not in out.replace("\\n\\nNo lane is removed or rolled.", "")
    assert "Karpenter lane 'b\\u200batch\\n\\nNo lane is removed or rolled.': its NodePool is deleted." in out


def test_ignore_changes_the_state_kept_but_the_program_dropped_ignore_nothing(tmp_path, base_export, catalog_file):
    """The engine diffs with the program's ``ignoreChanges`` (pulumi ``step_generator.go``: the goal's),
    not the ones an earlier program left in the state."""

    def edit(resources: list[dict[str, Any]]) -> None:
        group = _resource(resources, NODEGROUP, "rack-ng-1")
        group["inputs"]["instanceTypes"] = group["outputs"]["instanceTypes"] = ["g5.xlarge"]  # deployed so
        group["ignoreChanges"] = [*group.get("ignoreChanges", []), "instanceTypes"]

    code, doc = preview(tmp_path, config(), _edited(base_export, tmp_path, edit), catalog_file)
    assert code == 1
    assert changed(doc, NODEGROUP, "rack-ng-1")["op"] == "replace"


def test_a_pool_moving_to_a_new_class_while_the_old_one_is_deleted_is_no_removal(tmp_path, capsys):
    """Karpenter drifts the pool's nodes onto the new class; the old class's termination finalizer holds
    its deletion until no NodeClaim uses it. A pool left on a deleted class does lose it."""

    def nodeclass(op: str, name: str) -> dict[str, Any]:
        state = {"inputs": {"metadata": {"name": name}, "spec": {}}}
        return {
            "op": op,
            "urn": f"{P}kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::{name}",
            **({"oldState": state} if op == "delete" else {"newState": state}),
        }

    def pool(old_class: str, new_class: str) -> dict[str, Any]:
        def state(cls: str) -> dict[str, Any]:
            return {
                "inputs": {
                    "metadata": {"name": "batch"},
                    "spec": {
                        "template": {
                            "spec": {
                                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": cls}
                            }
                        }
                    },
                }
            }

        return {
            "op": "update",
            "urn": f"{P}kubernetes:karpenter.sh/v1:NodePool::batch",
            "oldState": state(old_class),
            "newState": state(new_class),
            "detailedDiff": {"spec.template.spec.nodeClassRef.name": {}},
        }

    moved = [pool("old", "new"), nodeclass("create", "new"), nodeclass("delete", "old")]
    out = tmp_path / "verdicts.json"
    assert guard(_preview_file(tmp_path, {"steps": moved}), "--json", str(out)) == 0
    assert [v["policy"] for v in json.loads(out.read_text())["violations"]] in ([], ["lane-rollout"])
    stays = [pool("old", "old"), nodeclass("delete", "old")]
    assert guard(_preview_file(tmp_path, {"steps": stays})) == 1
    assert "without its class" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, says",
    [
        ('{"steps": [], "x": NaN}', "not JSON as pulumi writes it (NaN is not a JSON number)"),
        ('{"steps": [], "x": -Infinity}', "not JSON as pulumi writes it (-Infinity is not a JSON number)"),
        (
            '{"steps": [], "x": ' + "9" * 5000 + "}",
            "x: " + "9" * 60 + " is not a finite number (it overflows a 64-bit float)",
        ),
        ("[" * 100_000, "nested deeper than any `pulumi preview --json` output could be"),
        ('{"steps": []}'.encode("utf-16"), "is UTF-16 text (as PowerShell's > writes it), not UTF-8"),
    ],
)
def test_json_pulumi_never_writes_is_named_not_a_failed_program(tmp_path, capsys, content, says):
    path = tmp_path / "preview.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert guard(str(path)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: {says}") and "program failed" not in err
    assert says[:20] in _state_error(tmp_path, capsys, content)  # a stack export given to preview --state: the same


def _nested_outputs(depth: int) -> str:
    """An export whose stack's outputs nest ``depth`` objects deep (written as text: deeper than json.dumps goes)."""
    stack = {"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack", "outputs": "OUTPUTS"}
    return _export([stack]).replace('"OUTPUTS"', '{"v": ' * depth + '"leaf"' + "}" * depth)


@pytest.mark.parametrize("value", [{}, False, 0, "", "abc"])
def test_a_list_of_the_wrong_type_is_named_never_read_as_empty(tmp_path, capsys, value):
    # `x or []` read {}, false, 0 and "" as no resources: every resource then planned as a create, and the
    # guard saw no step at all
    stack = {"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack"}
    assert "deployment.resources must be a list, not " in _state_error(
        tmp_path, capsys, json.dumps({"version": 3, "deployment": {"resources": value}})
    )
    assert "deployment.pending_operations must be a list" in _state_error(
        tmp_path, capsys, json.dumps({"version": 3, "deployment": {"resources": [stack], "pending_operations": value}})
    )
    assert "outputs must be an object, not " in _state_error(
        tmp_path, capsys, _export([{**stack, "outputs": value or 1}])
    )
    for doc, says in (
        ({"steps": value}, "steps must be a list, not "),
        ({"steps": [], "diagnostics": value}, "diagnostics must be a list, not "),
        ({"steps": [], "changeSummary": value or 5}, "changeSummary must be an object, not "),
    ):
        assert guard(_preview_file(tmp_path, doc)) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err and "program failed" not in err


@pytest.mark.parametrize("key", ["dependencies", "replaceOnChanges", "ignoreChanges"])
def test_a_resources_list_of_urns_or_paths_of_the_wrong_type_is_named(tmp_path, capsys, key):
    stack = {"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack", key: "not-a-list"}
    assert f"{key}: must be a list of " in _state_error(tmp_path, capsys, _export([stack]))


@pytest.mark.parametrize("count", [True, -5, 10**30])
def test_a_change_summary_count_pulumi_never_writes_is_named(tmp_path, capsys, count):
    assert guard(_preview_file(tmp_path, {"steps": [], "changeSummary": {"create": count}})) == 2
    assert "changeSummary must map ops to counts" in capsys.readouterr().err


def test_nesting_is_read_to_its_limit_and_named_past_it(tmp_path, capsys):
    # below Python's recursion limit, where json.loads still reads it, the walks over the values failed
    path = tmp_path / "state.json"
    path.write_text(_nested_outputs(MAX_DEPTH - 5))  # the file's own levels come on top
    assert main(["preview", "--stack", "dev", "--cwd", str(REPO), "--state", str(path), "--no-policy"]) in (0, 1)
    capsys.readouterr()
    for depth in (MAX_DEPTH, 600, 980):
        err = _state_error(tmp_path, capsys, _nested_outputs(depth))
        assert "nested deeper than any `pulumi stack export` file could be" in err  # json.loads itself stops ~1000


def test_a_byte_order_mark_is_dropped(tmp_path):
    path = tmp_path / "preview.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"steps": []}).encode())
    assert guard(str(path)) == 0


def test_values_of_the_wrong_shape_inside_a_file_are_named_or_read_as_pulumi_would(tmp_path, capsys):
    assert guard(_preview_file(tmp_path, {"steps": [{"op": ["delete"], "urn": GROUP_URN}]})) == 2
    assert "steps[0]: op ['delete'] is not a step op pulumi writes" in capsys.readouterr().err
    assert "features must be a list of names" in _state_error(tmp_path, capsys, _export([], version=4, features=[{}]))
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "plaintext": "{}"}
    err = _state_error(
        tmp_path,
        capsys,
        _export([{"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack", "inputs": secret}]),
    )
    assert "inputs and outputs must be objects of properties, not one secret or resource value" in err
    # a budget whose reasons are not a list, a __defaults that is not one: read as absent, not a crash
    pool = {
        "op": "update",
        "urn": f"{P}kubernetes:karpenter.sh/v1:NodePool::batch",
        "detailedDiff": {"spec.x": {}},
        "newState": {
            "inputs": {
                "metadata": {"name": "batch"},
                "spec": {"disruption": {"budgets": [{"nodes": "1", "reasons": 5}]}},
            }
        },
    }
    assert guard(_preview_file(tmp_path, {"steps": [pool]})) == 0
    group = {
        "op": "replace",
        "urn": GROUP_URN,
        "detailedDiff": {"instanceTypes": {}},
        "oldState": {"inputs": {"nodeGroupName": "ng", "__defaults": 5}},
        "newState": {"inputs": {"nodeGroupName": "ng", "__defaults": 5}},
    }
    assert guard(_preview_file(tmp_path, {"steps": [group]})) == 1
    assert "the program failed" not in capsys.readouterr().err


def test_the_guard_reads_each_step_once_for_thousands_of_pools(tmp_path):
    """Each pool's class, each class's pools and each group's components are looked up, not searched for:
    2,000 pools and their classes are judged in well under the time the file takes to write (it was 23 s)."""
    import time

    steps = []
    for n in range(2000):
        ref = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": f"c{n}"}
        steps.append(
            {
                "op": "delete",
                "urn": f"{P}kubernetes:karpenter.sh/v1:NodePool::p{n}",
                "oldState": {
                    "inputs": {"metadata": {"name": f"p{n}"}, "spec": {"template": {"spec": {"nodeClassRef": ref}}}}
                },
            }
        )
        steps.append(
            {
                "op": "delete",
                "urn": f"{P}kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::c{n}",
                "oldState": {"inputs": {"metadata": {"name": f"c{n}"}, "spec": {}}},
            }
        )
    out = tmp_path / "verdicts.json"
    start = time.process_time()
    assert guard(_preview_file(tmp_path, {"steps": steps}), "--json", str(out)) == 1
    assert time.process_time() - start < 5  # linear: about 0.3 s here
    violations = json.loads(out.read_text())["violations"]
    assert len(violations) == 2000 and all("together with its EC2NodeClass" in v["message"] for v in violations)
