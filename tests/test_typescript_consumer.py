"""``examples/typescript-consumer`` through ``mixed-os-racks preview``: a TypeScript program that uses the package's
components as a generated SDK does (remote components, ``rack:index:*``, camelCase inputs), run with the real
``@pulumi/pulumi`` Node.js SDK; the components constructed by the package's provider (``provider/``), started as the
engine starts a plugin; every resource judged by the policy pack.

Each variant is the same program with another stack file (``--config``), as a team previews each environment: the
program is compiled once (ts-node's cache), and each run is one preview.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from mixed_os_racks.offline import Catalog, run_program
from mixed_os_racks.offline.stackexport import write_export
from test_nodejs_programs import EXAMPLE, node_modules, preview

CATALOG = EXAMPLE / "amis.yaml"
DEV = yaml.safe_load((EXAMPLE / "Pulumi.dev.yaml").read_text())["config"]


def stack_file(folder: Path, name: str, **changes: str) -> Path:
    """The dev stack's config with ``changes`` (``amiId=...``), as ``Pulumi.<name>.yaml``."""
    config = {**DEV, **{f"ml-platform-ts:{key}": value for key, value in changes.items()}}
    path = folder / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return path


def example(*args: str):
    node_modules()
    return preview("--cwd", str(EXAMPLE), "--amis", str(CATALOG), *args)


@pytest.fixture(scope="module")
def dev(tmp_path_factory):
    """The dev stack, previewed once: its printout, errors, exit code and --json document."""
    out = tmp_path_factory.mktemp("dev") / "preview.json"
    done = example("--stack", "dev", "--json", str(out))
    return done, (json.loads(out.read_text()) if out.exists() else {})


@pytest.mark.slow
def test_the_dev_stack_previews_the_components_children_and_the_pack_passes_them(dev):
    done, doc = dev
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    tree = lines[lines.index(" +   pulumi:pulumi:Stack                                      ml-platform-ts-dev") :]
    # the pool's EC2NodeClass and NodePool under the pool, the node group under its component
    assert " +   ├─ rack:index:KarpenterPool                              ml" in tree
    assert " +   │  ├─ kubernetes:karpenter.k8s.aws/v1:EC2NodeClass       ml-nodeclass" in tree
    assert " +   │  ├─ kubernetes:karpenter.sh/v1:NodePool                ml-nodepool" in tree
    assert " +   └─ rack:index:NodeGroup                                  inference" in tree
    assert " +      ├─ eks:index:ManagedNodeGroup                         inference" in tree
    assert " +      │  └─ aws:eks/nodeGroup:NodeGroup                     inference" in tree
    assert " +   ├─ kubernetes:apps/v1:Deployment                         model-server" in tree
    assert '    trainingNodePool  : "ml"' in lines  # the component's output, through Construct, to the program
    assert "    mixed-os-racks (" in done.stdout and done.stdout.endswith(": passed\n")
    by_name = {(r["type"], r["name"]): r for r in doc["resources"]}
    node_class = by_name["kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "ml-nodeclass"]
    assert node_class["urn"] == (
        "urn:pulumi:dev::ml-platform-ts::rack:index:KarpenterPool$"
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::ml-nodeclass"
    )
    assert node_class["inputs"]["spec"]["amiSelectorTerms"] == [{"id": "ami-0c1d2e3f405162738"}]
    assert node_class["inputs"]["spec"]["blockDeviceMappings"][0]["ebs"]["volumeSize"] == "200Gi"
    assert doc["violations"] == []
    assert {(c["kind"], c["name"]) for c in doc["costs"]["lanes"]} == {("pool", "ml"), ("node group", "inference")}


def python_twin(project: str, stack: str):
    """The same program in Python, giving the components the cluster as data, as the TypeScript program does."""
    import pulumi
    import pulumi_kubernetes as k8s

    import mixed_os_racks

    def program() -> None:
        cluster = {"name": "shared-dev"}
        pool = mixed_os_racks.KarpenterPool(
            "ml",
            {
                "cluster": cluster,
                "tags": {"team": "ml"},
                "pool": {
                    "name": "ml",
                    "os": "al2023",
                    "instance_families": ["g6", "g6e"],
                    "ami_id": "ami-0c1d2e3f405162738",
                    "disk": 200,
                    "dedicated": True,
                },
            },
        )
        group = mixed_os_racks.NodeGroup(
            "inference",
            {
                "cluster": cluster,
                "group": {
                    "instance_type": "g6.xlarge",
                    "min_size": 1,
                    "max_size": 4,
                    "dedicated": True,
                    "label": "inference",
                    "max_hourly_usd": 5,
                },
            },
        )
        placed = mixed_os_racks.place({"convox.io/nodepool": "ml"}, gpu=1)
        k8s.apps.v1.Deployment(
            "model-server",
            metadata={"name": "model-server", "namespace": "default"},
            spec={
                "replicas": 1,
                "selector": {"match_labels": {"app": "model-server"}},
                "template": {
                    "metadata": {"labels": {"app": "model-server"}},
                    "spec": {
                        "affinity": placed.affinity,
                        "tolerations": placed.tolerations,
                        "containers": [
                            {
                                "name": "server",
                                "image": "nvcr.io/nvidia/tritonserver:24.12-py3",
                                "resources": {
                                    "limits": placed.gpu_resources,
                                    "requests": {"cpu": "2", "memory": "8Gi", **placed.gpu_resources},
                                },
                            }
                        ],
                    },
                },
            },
            opts=pulumi.ResourceOptions(depends_on=[pool]),
        )
        pulumi.export("trainingNodePool", pool.node_pool_name)
        pulumi.export("inferenceNodeGroup", group.node_group_name)
        pulumi.export("inferenceTaints", group.taints)
        pulumi.export("inferenceBudget", group.max_hourly_usd)

    return run_program(program, DEV, Catalog.load(CATALOG), project=project, stack=stack)


@pytest.mark.slow
def test_the_typescript_program_registers_what_its_python_twin_registers(dev, tmp_path):
    """Against the state its Python twin leaves (``--state``), the TypeScript program changes nothing: every resource
    has the same URN and the same inputs, the components' children included."""
    done, doc = dev
    assert done.returncode == 0, done.stderr
    state = write_export(python_twin("ml-platform-ts", "dev"), tmp_path / "dev.json")
    planned = example("--stack", "dev", "--no-policy", "--state", str(state), "--json", str(tmp_path / "plan.json"))
    assert planned.returncode == 0, planned.stderr
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert {r["urn"] for r in plan["resources"]} == {r["urn"] for r in doc["resources"]}
    assert set(plan["summary"]) <= {"same", "read"}, [
        (r["urn"], r["op"]) for r in plan["resources"] if r["op"] != "same"
    ]


@pytest.mark.slow
def test_a_malformed_ami_id_exits_2_naming_the_property(tmp_path):
    done = example("--config", str(stack_file(tmp_path, "bad", amiId="ami-XYZ")))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines()[-2:] == [
        "error: rack:index:KarpenterPool resource 'ml' has a problem: KarpenterPool 'ml': pool.amiId: karpenter "
        "nodepool "
        "'ml': invalid ami_id 'ami-XYZ' (must look like ami-0123456789abcdef0)",
        "  - property pool.amiId with value 'ami-XYZ' has a problem: karpenter nodepool 'ml': invalid ami_id 'ami-XYZ' "
        "(must look like ami-0123456789abcdef0)",
    ], done.stderr


@pytest.mark.slow
def test_a_deployment_that_selects_a_lane_the_rack_does_not_have_fails_workloads_reach_their_lane(tmp_path):
    """The pack reads the lanes from the children the provider registered: the Deployment's lane is not among them."""
    out = tmp_path / "out.json"
    done = example("--config", str(stack_file(tmp_path, "lost", servingPool="training")), "--json", str(out))
    assert done.returncode == 1, done.stderr
    (verdict,) = [v for v in json.loads(out.read_text())["violations"] if v["policy"] == "workloads-reach-their-lane"]
    assert verdict["level"] == "mandatory"
    assert verdict["urn"] == "urn:pulumi:lost::ml-platform-ts::kubernetes:apps/v1:Deployment::model-server"
    assert "[mandatory]  mixed-os-racks: workloads-reach-their-lane  (model-server)" in done.stdout


@pytest.mark.slow
def test_a_gpu_pool_on_bottlerocket_is_refused_as_the_python_path_refuses_it(tmp_path):
    done = example("--config", str(stack_file(tmp_path, "br", poolOs="bottlerocket")))
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("error: "))
    assert lines[start].startswith("error: rack:index:KarpenterPool resource 'ml' has a problem: ")
    problems = dict(
        line.removeprefix("  - property ").split(" has a problem: ", 1)
        for line in lines[start + 1 :]
        if line.startswith("  - property ")
    )
    assert problems["pool.os with value 'bottlerocket'"] == (
        "karpenter nodepool 'ml': instance families g6,g6e make this a GPU lane, and GPU lanes must run Amazon Linux "
        "2023, not Bottlerocket (set os 'al2023', or move them to an AL2023 pool or node group)"
    )
    # the Python path: the same component with the same arguments, refused for the same problems, in the same words
    from mixed_os_racks import KarpenterPool

    def program() -> None:
        KarpenterPool(
            "ml",
            {
                "cluster": {"name": "shared-dev"},
                "pool": {
                    "name": "ml",
                    "os": "bottlerocket",
                    "instance_families": ["g6", "g6e"],
                    "ami_id": "ami-0c1d2e3f405162738",
                    "disk": 200,
                    "dedicated": True,
                },
            },
        )

    with pytest.raises(Exception) as python:
        run_program(program, DEV, Catalog.load(CATALOG), project="ml-platform-ts", stack="br")
    assert all(reason in str(python.value) for reason in problems.values()), (problems, str(python.value))


def test_the_example_is_listed_with_its_readme():
    readme = (EXAMPLE / "README.md").read_text()
    assert "rack.ts" in readme and "pulumi package add" in readme
    package = json.loads((EXAMPLE / "package.json").read_text())
    assert package["dependencies"] == {"@pulumi/kubernetes": "4.34.2", "@pulumi/pulumi": "3.270.0"}
    lock = json.loads((EXAMPLE / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/@pulumi/pulumi"]["version"] == "3.270.0"
    assert (REPO / "provider" / "PulumiPlugin.yaml").is_file()
    assert yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())["packages"] == {"rack": "../../provider"}
