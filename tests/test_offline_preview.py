"""The offline preview CLI: its tree, its JSON, its exit codes and its error messages."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from mixed_os_racks.cli import main

from conftest import REPO, stack_config


def preview(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "mixed_os_racks.offline", "preview", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout, proc.stderr


def write_stack(tmp_path, **rack) -> str:
    config = {"aws:region": "us-east-1", "rack:cluster_name": "t"}
    config.update({f"rack:{k}": v for k, v in rack.items()})
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return str(path)


def test_prod_preview_tree_and_json(tmp_path):
    out_file = tmp_path / "prod.json"
    code, out, err = preview("--stack", "prod", "--json", str(out_file))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Previewing update (prod), offline:"
    assert any(line.startswith(" +   pulumi:pulumi:Stack") and line.endswith("mixed-os-racks-prod") for line in lines)
    assert any("└─ rack:index:Rack" in line for line in lines)
    assert any(
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass" in line and line.endswith("rack-gpu-nodeclass") for line in lines
    )
    assert any(
        "kubernetes:karpenter.sh/v1:NodePool" in line and line.endswith("rack-workload-nodepool") for line in lines
    )

    # prod creates its cluster: nothing is read
    assert any("eks:index:Cluster" in line and line.endswith(" rack") for line in lines)
    assert not any(line.startswith(" >   ") for line in lines)

    doc = json.loads(out_file.read_text())
    assert set(doc) == {"resources", "outputs", "violations", "costs"}
    assert f"    + {len(doc['resources'])} to create" in lines
    first = doc["resources"][0]
    assert set(first) == {"urn", "type", "name", "parent", "custom", "inputs", "dependencies", "propertyDependencies"}
    # the stack's outputs, a secret shown as pulumi shows one (in the tree's Outputs too)
    assert doc["outputs"]["kubeconfig"] == "[secret]" and doc["outputs"]["clusterName"] == "prod-rack"
    assert '    kubeconfig           : "[secret]"' in lines
    # dependencies are URNs, as pulumi preview --json has them: a node group depends on its launch template
    by_urn = {r["urn"]: r for r in doc["resources"]}
    group = next(r for r in doc["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup" and r["name"] == "rack-ng-1")
    (template,) = group["propertyDependencies"]["launchTemplate"]
    assert template in group["dependencies"] and by_urn[template]["type"] == "aws:ec2/launchTemplate:LaunchTemplate"
    gpu = [r for r in doc["resources"] if r["name"] == "rack-gpu-nodeclass"][0]
    assert gpu["custom"] is True
    assert gpu["inputs"]["spec"]["amiSelectorTerms"] == [{"id": "ami-0a1b2c3d4e5f60718"}]
    assert gpu["parent"].endswith("rack:index:KarpenterPool::rack-gpu")


def test_an_existing_cluster_is_read_not_created(tmp_path):
    """In existing mode a node group needs the cluster and its role: both are read, as `pulumi preview` marks them."""
    stack = write_stack(tmp_path, additional_node_groups_config=[{"id": 1, "type": "m5.large"}])
    code, out, err = preview("--config", stack, "--no-policy", "--json", str(tmp_path / "out.json"))
    assert code == 0, err
    lines = out.splitlines()
    assert any(
        line.startswith(" >   ") and "aws:eks/cluster:Cluster" in line and line.endswith("rack-cluster")
        for line in lines
    )
    assert any(
        line.startswith(" >   ") and "aws:iam/role:Role" in line and line.endswith("rack-cluster-role")
        for line in lines
    )
    assert "    > 2 to read" in lines
    # --json has them too, after what is created, marked as pulumi preview --json marks a read
    resources = json.loads((tmp_path / "out.json").read_text())["resources"]
    reads = [r for r in resources if r.get("op") == "read"]
    assert [(r["type"], r["name"], r["id"], r["external"]) for r in reads] == [
        ("aws:eks/cluster:Cluster", "rack-cluster", "t", True),
        ("aws:iam/role:Role", "rack-cluster-role", "t-cluster-role", True),
    ]
    assert resources[-2:] == reads and f"    + {len(resources) - 2} to create" in lines
    assert all(r["urn"].endswith("::" + r["name"]) for r in reads)


def test_bad_config_exits_2_with_the_key_and_no_traceback(tmp_path):
    stack = write_stack(tmp_path, additional_karpenter_nodepools_config=[{"name": "gpu", "ami_id": "ami-XYZ"}])
    code, out, err = preview("--config", stack)
    assert code == 2
    assert err == (
        f"error: {stack}:4: rack:additional_karpenter_nodepools_config[0].ami_id: "
        "karpenter nodepool 'gpu': invalid ami_id 'ami-XYZ' (must look like ami-0123456789abcdef0)\n"
    )
    assert "Traceback" not in err and out == ""


def test_ami_missing_from_catalog_exits_2(tmp_path, capsys):
    stack = write_stack(
        tmp_path, additional_karpenter_nodepools_config=[{"name": "gpu", "ami_id": "ami-0123456789abcdef0"}]
    )
    assert main(["preview", "--config", stack]) == 2
    assert "karpenter nodepool 'gpu': ami_id 'ami-0123456789abcdef0' cannot be read" in capsys.readouterr().err


def test_other_catalog(tmp_path, capsys):
    catalog = tmp_path / "amis.yaml"
    catalog.write_text(
        yaml.safe_dump(
            {
                "amis": [
                    {
                        "id": "ami-0123456789abcdef0",
                        "name": "custom-al2023",
                        "description": "Amazon Linux 2023",
                        "architecture": "x86_64",
                        "root_device_name": "/dev/xvda",
                        "root_snapshot_gib": 30,
                        "creation_date": "2026-11-01T00:00:00Z",
                        "owner_id": "111122223333",
                    }
                ]
            }
        )
    )
    stack = write_stack(
        tmp_path, additional_karpenter_nodepools_config=[{"name": "gpu", "ami_id": "ami-0123456789abcdef0", "disk": 25}]
    )
    assert main(["preview", "--config", stack, "--amis", str(catalog)]) == 2
    assert (
        "disk 25 GiB is smaller than the root snapshot of ami-0123456789abcdef0 (30 GiB); give it a disk of 30 GiB or "
        "more" in capsys.readouterr().err
    )


def test_bad_catalog_exits_2(tmp_path, capsys):
    catalog = tmp_path / "amis.yaml"
    catalog.write_text("amis:\n  - id: ami-0123456789abcdef0\n")
    assert main(["preview", "--stack", "dev", "--cwd", str(REPO), "--amis", str(catalog)]) == 2
    assert "amis[0] (ami-0123456789abcdef0): missing name, description, architecture" in capsys.readouterr().err


def test_missing_stack_file_exits_2(capsys):
    assert main(["preview", "--stack", "nope", "--cwd", str(REPO)]) == 2
    assert capsys.readouterr().err.startswith("error: cannot read stack config")


def test_dev_preview_in_process(capsys):
    assert main(["preview", "--stack", "dev", "--cwd", str(REPO)]) == 0
    out = capsys.readouterr().out
    assert "rack-workload-nodeclass" in out and "rack-gpu" not in out


def test_example_stack_files_parse():
    from mixed_os_racks import parse_rack_config
    from mixed_os_racks.config.stackconfig import rack_values

    for name in ("dev", "prod"):
        assert parse_rack_config(rack_values(stack_config(name))).cluster_name


def test_every_config_error_is_its_own_line(tmp_path, capsys):
    stack = write_stack(tmp_path, karpenter_node_oss="al2023", additional_karpenter_nodepools_config=[{"name": "Bad"}])
    assert main(["preview", "--config", stack, "--no-policy"]) == 2
    assert sorted(capsys.readouterr().err.splitlines()) == [
        f"error: {stack}:4: rack:additional_karpenter_nodepools_config[0].name: "
        "karpenter nodepool name 'Bad' must be lowercase alphanumeric with dashes, max 63 chars",
        f"error: {stack}:6: rack:karpenter_node_oss: unknown field; did you mean rack:karpenter_node_os?",
    ]


def test_urns_are_made_as_the_engine_makes_them():
    # pulumi Deployment.generateURN: a child's type is its parent's whole qualified type, then its own;
    # the root stack's type is left out. A `pulumi stack export` holds such URNs, and --state matches them.
    from mixed_os_racks.offline import run_program
    from conftest import stack_config

    run = run_program(REPO, stack_config("prod"), stack="prod")
    by_urn = {r.urn: r for r in run.resources}
    stack_type = "pulumi:pulumi:Stack"
    checked = 0
    for res in run.resources:
        qualified = res.urn.split("::")[2]
        parent_type = res.parent.split("::")[2] if res.parent else ""
        if res.type == stack_type:
            assert qualified == stack_type
        elif parent_type == stack_type:
            assert qualified == res.type, res.urn
        elif res.parent in by_urn:
            assert qualified == f"{parent_type}${res.type}", res.urn
            checked += 1
    assert checked > 20
    assert any(r.urn.split("::")[2].count("$") >= 2 for r in run.resources)  # a grandchild carries the whole chain


def test_a_resource_referencing_one_whose_policy_is_an_object_previews(tmp_path):
    """A role given its trust policy as an object, and a resource that references the role: the provider
    gets the role's id and the role's state holds the policy as JSON text (pulumi-aws's ``Check`` encodes it),
    so the program reads text where ``Role.assume_role_policy`` says text. Such a program once left the
    offline engine waiting for ever; it runs in a process of its own here, with a deadline."""
    (tmp_path / "Pulumi.yaml").write_text("name: refs\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(
        "import pulumi, pulumi_aws as aws\n"
        "policy = {'Version': '2012-10-17', 'Statement': [{'Action': 'sts:AssumeRole', 'Effect': 'Allow',\n"
        "          'Principal': {'Service': 'ec2.amazonaws.com'}}]}\n"
        "role = aws.iam.Role('r', assume_role_policy=policy)\n"
        "aws.iam.RolePolicyAttachment('a', role=role, policy_arn='arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy')\n"
        "pulumi.export('trust', role.assume_role_policy)\n"
    )
    out = tmp_path / "preview.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mixed_os_racks.offline",
            "preview",
            "--cwd",
            str(tmp_path),
            "--stack",
            "dev",
            "--no-policy",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["outputs"]["trust"] == (
        '{"Statement":[{"Action":"sts:AssumeRole","Effect":"Allow","Principal":'
        '{"Service":"ec2.amazonaws.com"}}],"Version":"2012-10-17"}'
    )
    attachment = next(r for r in doc["resources"] if r["type"] == "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    assert attachment["inputs"]["role"] == next(r["urn"] for r in doc["resources"] if r["type"] == "aws:iam/role:Role")
