"""Remote components, expanded offline as their providers expand them under the Pulumi CLI, and the
preview's unknowns.

The upstream facts these tests pin (read from the providers' sources; see the module docstrings of
``mixed_os_racks.offline.eks_mng`` and ``k8s_yaml`` for the files):

- pulumi-eks 4.x ``ManagedNodeGroup`` registers ``<name>-launchTemplate`` (only for ``amiId``, user data
  options, ``enableIMDSv2``, EFA) and the ``aws.eks.NodeGroup`` ``<name>``, both its children. Its launch
  template holds the image, base64 user data (AL2023: a MIME document of nodeadm ``NodeConfig`` parts with
  the cluster's name, endpoint, CA and service CIDR, then kubelet flags for labels and taints; Bottlerocket:
  TOML settings), one block device of ``diskSize`` on ``/dev/xvda`` (``/dev/xvdb`` on Bottlerocket) without
  ``encrypted``, and, for ``enableIMDSv2``, ``httpTokens: required`` with hop limit 2. With ``amiId`` the node
  group loses ``version``, ``releaseVersion`` and ``amiType``; otherwise ``operatingSystem`` picks the AMI type.
- yaml/v2 and helm.sh/v4 children are named ``<prefix>:<namespace>/<name>`` (cluster-scoped: ``<prefix>:<name>``,
  the prefix the component's name unless given), typed ``kubernetes:<group or core>/<version>:<Kind>``, with the
  default namespace on namespaced kinds only.
- In a preview, a resource being created has no id, and its computed outputs are unknown (pulumi/pulumi
  ``sdk/python/lib/pulumi/runtime/resource.py``: an empty id is unknown in a dry run).
"""

from __future__ import annotations

import base64
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s
import pytest
import yaml

from mixed_os_racks import contract
from mixed_os_racks.facts import osfamily
from mixed_os_racks.offline import Catalog, ProgramRun, Resource, run_program
from mixed_os_racks.cli import main
from conftest import GPU_AMI, REPO, rack_config, run_rack
from policy_helpers import existing_cluster, judge, start_pack

MNG = "eks:index:ManagedNodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
NG = "aws:eks/nodeGroup:NodeGroup"
ROLE = "arn:aws:iam::123456789012:role/nodes"


def run(program: Any, catalog: Catalog | None = None) -> ProgramRun:
    return run_program(program, {"aws:region": "us-east-1"}, catalog, stack="test")


def one(run_: ProgramRun, type_: str, name: str | None = None) -> Resource:
    found = [r for r in run_.resources if r.type == type_ and (name is None or r.name == name)]
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def user_data(template: Resource) -> str:
    return base64.b64decode(template.inputs["userData"]).decode()


def nodeadm_parts(text: str) -> list[dict[str, Any]]:
    """The ``application/node.eks.aws`` parts of a MIME user data document, as YAML."""
    parts = text.split("--BOUNDARY")[1:-1]
    return [yaml.safe_load(part.split("\n\n", 1)[1]) for part in parts if "application/node.eks.aws" in part]


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:
        yield running


# ---- pulumi-eks ManagedNodeGroup --------------------------------------------------------------------------


def test_a_pinned_al2023_group_builds_pulumi_eks_launch_template_and_node_group():
    def program() -> None:
        eks.ManagedNodeGroup(
            "gpu",
            cluster=existing_cluster("prod-rack"),
            node_role_arn=ROLE,
            ami_id=GPU_AMI,
            operating_system="AL2023",
            disk_size=120,
            enable_imd_sv2=True,
            instance_types=["g5.xlarge"],
            labels={"team": "ml"},
            taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
            tags={"team": "ml"},
            version="1.33",
        )

    r = run(program)
    component = one(r, MNG)
    template, group = one(r, LT), one(r, NG)
    assert (template.name, template.parent) == ("gpu-launchTemplate", component.urn)
    assert (group.name, group.parent) == ("gpu", component.urn)
    assert template.urn.endswith(f"{MNG}${LT}::gpu-launchTemplate")

    lt = template.inputs
    assert set(lt) == {"imageId", "userData", "blockDeviceMappings", "metadataOptions"}  # no tags, no name
    assert lt["imageId"] == GPU_AMI
    assert lt["blockDeviceMappings"] == [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 120}}]
    assert lt["metadataOptions"] == {"httpTokens": "required", "httpPutResponseHopLimit": 2, "httpEndpoint": "enabled"}
    text = user_data(template)
    assert text.startswith('MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="BOUNDARY"\n\n--BOUNDARY\n')
    assert text.endswith("--BOUNDARY--\n")
    cluster, kubelet = nodeadm_parts(text)
    assert cluster == {
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {
            "cluster": {
                "name": "prod-rack",
                "apiServerEndpoint": "https://prod-rack.eks.offline.invalid",
                "certificateAuthority": base64.b64encode(b"offline").decode(),
                "cidr": "172.20.0.0/16",
            }
        },
    }
    assert kubelet["spec"]["kubelet"]["flags"] == [
        "--node-labels=team=ml",
        "--register-with-taints=nvidia.com/gpu=true:NoSchedule",
    ]

    ng = group.inputs
    assert "version" not in ng and "amiType" not in ng and "diskSize" not in ng  # the image is in the template
    assert ng["launchTemplate"] == {"id": "<computed>", "version": "<computed>"}
    assert group.property_dependencies["launchTemplate"] == [template.urn]
    assert ng["clusterName"] == "prod-rack" and ng["nodeRoleArn"] == ROLE
    assert ng["scalingConfig"] == {"desiredSize": 2, "minSize": 1, "maxSize": 2}  # pulumi-eks's defaults
    assert ng["subnetIds"] == ["subnet-offline-a", "subnet-offline-b", "subnet-offline-c"]  # the cluster's
    assert ng["tags"] == {"team": "ml"} and ng["labels"] == {"team": "ml"}
    assert "operatingSystem" not in ng and "enableIMDSv2" not in ng  # aws.eks.NodeGroup has no such inputs


def test_a_pinned_bottlerocket_group_gets_toml_and_its_data_volume():
    def program() -> None:
        eks.ManagedNodeGroup(
            "br",
            cluster=existing_cluster(),
            node_role_arn=ROLE,
            ami_id=GPU_AMI,
            operating_system="Bottlerocket",
            disk_size=50,
            labels={"team": "ml"},
        )

    template = one(run(program), LT)
    assert template.inputs["blockDeviceMappings"] == [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": 50}}]
    text = user_data(template)
    assert "[settings.kubernetes]\n" in text and '"cluster-dns-ip" = "172.20.0.10"' not in text
    assert 'cluster-dns-ip = "172.20.0.10"' in text and 'cluster-name = "c"' in text
    assert '[settings.kubernetes.node-labels]\nteam = "ml"' in text


@pytest.mark.parametrize("family", osfamily.FAMILIES, ids=lambda f: f.name)
def test_a_pinned_group_gets_user_data_in_its_familys_format(family):
    """pulumi-eks (7bf0c1b1, ``nodejs/eks/nodes/userdata.ts``) writes nodeadm parts for AL2023, a script that runs
    ``/etc/eks/bootstrap.sh`` for AL2 and TOML settings for Bottlerocket: the record's ``user_data`` says which."""

    def program() -> None:
        eks.ManagedNodeGroup(
            "g", cluster=existing_cluster(), node_role_arn=ROLE, ami_id=GPU_AMI, operating_system=family.family
        )

    text = user_data(one(run(program), LT))
    marks = {
        osfamily.NODEADM: "Content-Type: application/node.eks.aws\n",
        osfamily.BOOTSTRAP_SH: '#!/bin/bash\n\n/etc/eks/bootstrap.sh --apiserver-endpoint "https://',
        osfamily.BOTTLEROCKET_TOML: "[settings.kubernetes]\n",
    }
    assert [form for form, mark in marks.items() if mark in text] == [family.user_data]


def test_the_expansion_names_the_pulumi_eks_releases_it_mirrors(monkeypatch, capsys):
    from mixed_os_racks.offline import eks_mng

    # the installed SDK is one the expansion was read against: nothing to say
    assert eks_mng.version_warning(eks_mng.installed_version()) is None
    assert eks_mng.version_warning("4.3.0") is None and eks_mng.version_warning("4.4.2") is None
    monkeypatch.setattr(eks_mng, "installed_version", lambda: "4.6.0")

    def program() -> None:
        for name in ("a", "b"):
            eks.ManagedNodeGroup(
                name, cluster=existing_cluster("prod-rack"), node_role_arn=ROLE, instance_types=["m7i.large"]
            )

    run(program)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "pulumi-eks 4.6.0" in line]
    assert warnings == [
        "warning: pulumi-eks 4.6.0: the offline preview expands ManagedNodeGroup as pulumi-eks "
        "4.3-4.4 does; this release's provider may register other children or values"
    ]


def test_an_unpinned_group_keeps_eks_ami_and_takes_the_clusters_version():
    def program() -> None:
        eks.ManagedNodeGroup(
            "arm",
            cluster=existing_cluster(),
            node_role_arn=ROLE,
            operating_system="Bottlerocket",
            gpu=True,
            instance_types=["g5g.xlarge"],
        )

    r = run(program)
    assert not [x for x in r.resources if x.type == LT]  # nothing asks for a launch template
    ng = one(r, NG).inputs
    assert ng["amiType"] == "BOTTLEROCKET_ARM_64_NVIDIA"  # from the OS, gpu and g5g's Graviton host
    assert ng["version"] == "1.34"  # the cluster's, when no launch template is given


def test_a_given_launch_template_passes_through_with_its_dependency():
    def program() -> None:
        template = aws.ec2.LaunchTemplate("team-lt", image_id=GPU_AMI)
        eks.ManagedNodeGroup(
            "team", cluster=existing_cluster(), node_role_arn=ROLE, launch_template={"id": template.id, "version": "1"}
        )

    r = run(program)
    team = one(r, LT, "team-lt")
    group = one(r, NG)
    assert group.inputs["launchTemplate"] == {"id": "<computed>", "version": "1"}
    assert group.property_dependencies["launchTemplate"] == [team.urn]
    assert "version" not in group.inputs  # the caller's template decides the kubelet


def test_the_recommended_image_comes_from_ssm():
    catalog = Catalog.from_doc(
        {
            "amis": [],
            "ssm_parameters": {
                "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id": GPU_AMI
            },
        }
    )

    def program() -> None:
        eks.ManagedNodeGroup(
            "std",
            cluster=existing_cluster(),
            node_role_arn=ROLE,
            kubelet_extra_args="--max-pods=110",
            instance_types=["m6i.large"],
        )

    template = one(run(program, catalog), LT)
    assert template.inputs["imageId"] == GPU_AMI
    assert nodeadm_parts(user_data(template))[1]["spec"]["kubelet"]["flags"] == ["--max-pods=110"]
    with pytest.raises(
        Exception,
        match="recommended image from the SSM parameter /aws/service/eks/optimized-ami/1.34/"
        "amazon-linux-2023/x86_64/standard/recommended/image_id",
    ):
        run(program)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"ami_id": GPU_AMI, "gpu": True}, "You cannot specify both amiId and gpu when creating a managed node group."),
        ({"enable_efa_support": True}, "the offline engine cannot expand enable_efa_support"),
        ({"ami_id": GPU_AMI, "ami_type": "AL2023_x86_64_STANDARD"}, "You cannot specify both amiId and amiType"),
        (
            {"ami_type": "BOTTLEROCKET_x86_64", "operating_system": "AL2023", "kubelet_extra_args": "--x"},
            "Operating system 'AL2023' does not match the detected operating system 'Bottlerocket'",
        ),
    ],
)
def test_what_pulumi_eks_refuses_is_refused(kwargs, error):
    def program() -> None:
        eks.ManagedNodeGroup("bad", cluster=existing_cluster(), node_role_arn=ROLE, **kwargs)

    with pytest.raises(Exception, match=error):
        run(program)


def test_a_cluster_that_is_not_one_is_refused_by_name():
    def program() -> None:
        eks.ManagedNodeGroup("bad", cluster="my-cluster", node_role_arn=ROLE, ami_id=GPU_AMI)

    with pytest.raises(
        Exception, match="eks:index:ManagedNodeGroup 'bad': cluster must be a pulumi-eks Cluster or a CoreData"
    ):
        run(program)


def test_a_created_cluster_leaves_the_user_data_unknown():
    """A cluster created in the same program has no endpoint or CA at preview: the user data is unknown."""

    def program() -> None:
        cluster = aws.eks.Cluster("new", role_arn=ROLE, vpc_config={"subnet_ids": ["s"]})
        eks.ManagedNodeGroup(
            "gpu",
            cluster={"cluster": cluster, "instance_roles": []},
            node_role_arn=ROLE,
            ami_id=GPU_AMI,
            operating_system="AL2023",
            subnet_ids=["s"],
        )

    template = one(run(program), LT)
    assert template.inputs["userData"] == "<computed>" and template.inputs["imageId"] == GPU_AMI
    assert template.unknown_inputs() == ["userData"]


def test_our_pinned_node_group_passes_the_pack_with_no_advisory(pack):
    """The component records the snapshot size and encryption on the group's tags; pulumi-eks puts them on
    its node group, and the pack reads them for the launch template that node group uses."""
    catalog = Catalog.from_doc(
        {
            "ebs_encryption_by_default": True,
            "amis": [
                {
                    "id": GPU_AMI,
                    "name": "amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115",
                    "description": "AL2023",
                    "architecture": "x86_64",
                    "root_device_name": "/dev/xvda",
                    "root_snapshot_gib": 100,
                    "creation_date": "2026-11-15T08:12:40.000Z",
                    "owner_id": "111122223333",
                }
            ],
        }
    )
    built = run_rack(
        rack_config(additional_node_groups_config=[{"id": 1, "type": "g5.xlarge", "ami_id": GPU_AMI, "disk": 120}]),
        catalog,
    )
    group = one(built, NG, "rack-ng-1")
    assert group.inputs["tags"][contract.ROOT_SNAPSHOT_TAG] == "100"
    assert one(built, LT, "rack-ng-1-launchTemplate").inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 120
    assert judge(pack, built) == []
    # told a bigger snapshot (the config comes before what the resource records), the pack refuses the disk on
    # pulumi-eks's launch template, naming the group the user configured
    violations = judge(pack, built, {"disk-fits-ami-snapshot": {"amiRootSnapshotGiB": {GPU_AMI: 150}}})
    assert [(v["policy"], v["urn"].rsplit("::", 1)[-1], v["message"]) for v in violations] == [
        (
            "disk-fits-ami-snapshot",
            "rack-ng-1-launchTemplate",
            f"node group 'rack-ng-1': disk 120 GiB is smaller than the root snapshot of {GPU_AMI} (150 GiB); give it a "
            f"disk of 150 GiB or more",
        )
    ]


# ---- yaml/v2 ConfigFile and ConfigGroup, v1 ConfigFile -----------------------------------------------------


MANIFEST = """\
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: ConfigMapList
items:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {a: "1"}}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: team}
stringData: {token: s3cret}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec: {amiSelectorTerms: [{alias: al2023@latest}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
"""


def test_config_file_v2_children_are_named_typed_and_namespaced_as_the_provider_does(tmp_path):
    path = tmp_path / "team.yaml"
    path.write_text(MANIFEST)

    def program() -> None:
        k8s.yaml.v2.ConfigFile("team", file=str(path), skip_await=True)

    r = run(program)
    component = one(r, "kubernetes:yaml/v2:ConfigFile")
    children = {(c.type, c.name) for c in r.resources if c.parent == component.urn}
    assert children == {
        ("kubernetes:core/v1:Namespace", "team:team"),
        ("kubernetes:core/v1:ConfigMap", "team:default/settings"),  # the default namespace, a List expanded
        ("kubernetes:core/v1:Secret", "team:team/token"),
        ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "team:default"),  # cluster-scoped: no namespace
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "team:reader"),
    }
    secret = one(r, "kubernetes:core/v1:Secret")
    assert secret.inputs["stringData"] == {"secret": {"token": "s3cret"}}
    assert secret.inputs["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
    assert one(r, "kubernetes:core/v1:Namespace").urn in secret.dependencies
    assert one(r, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass").inputs["spec"] == {
        "amiSelectorTerms": [{"alias": "al2023@latest"}]
    }


def test_config_group_v2_reads_globs_in_order_then_yaml_then_objects(tmp_path):
    for name in ("b", "a"):
        (tmp_path / f"{name}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n")

    def program() -> None:
        k8s.yaml.v2.ConfigGroup(
            "g",
            files=[str(tmp_path / "*.yaml")],
            resource_prefix="",
            yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            objs=[{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d", "namespace": "x"}}],
        )

    names = [r.name for r in run(program).resources if r.type == "kubernetes:core/v1:ConfigMap"]
    assert names == ["default/a", "default/b", "default/c", "x/d"]  # an explicit empty prefix means none


def test_a_programs_relative_paths_are_read_from_its_project_directory(tmp_path):
    # the Pulumi CLI runs a program in its project directory, so "manifests/*.yaml" means the project's
    project = tmp_path / "project"
    (project / "manifests").mkdir(parents=True)
    (project / "manifests" / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (project / "__main__.py").write_text(
        "import pulumi_kubernetes as k8s\n"
        "k8s.yaml.v2.ConfigGroup('g', files=['manifests/*.yaml'])\n"
        "k8s.yaml.v2.ConfigFile('f', file='manifests/a.yaml', resource_prefix='f')\n"
    )
    before = os.getcwd()
    found = run_program(project, {"aws:region": "us-east-1"})
    assert os.getcwd() == before
    assert sorted(r.name for r in found.resources if r.type == "kubernetes:core/v1:ConfigMap") == [
        "f:default/a",
        "g:default/a",
    ]


def test_a_manifests_dates_and_base_60_numbers_stay_text_as_the_provider_reads_them(tmp_path):
    # sigs.k8s.io/yaml decodes with go-yaml v2, which gives a map of interfaces a timestamp-looking or
    # 1:30-looking plain scalar as the string it is (PyYAML would make a date, or 90)
    path = tmp_path / "team.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team\n  annotations: {created: 2026-01-01}\n"
        "data: {window: 1:30, count: 1_000}\n"
    )
    found = run(lambda: k8s.yaml.v2.ConfigFile("team", file=str(path)))
    config_map = one(found, "kubernetes:core/v1:ConfigMap")
    assert config_map.inputs["metadata"]["annotations"] == {"created": "2026-01-01"}
    assert config_map.inputs["data"] == {"window": "1:30", "count": 1000}


def test_a_config_file_without_names_or_with_unknown_inputs(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n")
    with pytest.raises(
        Exception, match=r"kubernetes:yaml/v2:ConfigFile 'bad': Kubernetes resources require a \.metadata\.name"
    ):
        run(lambda: k8s.yaml.v2.ConfigFile("bad", file=str(path)))

    def program() -> None:
        late = aws.iam.Role("late", assume_role_policy="{}")
        k8s.yaml.v2.ConfigFile("late", file=late.arn.apply(lambda _: str(path)))

    r = run(program)
    assert not [c for c in r.resources if c.parent == one(r, "kubernetes:yaml/v2:ConfigFile").urn]
    assert (
        "kubernetes:yaml/v2:ConfigFile:late -- Required input properties have unknown values. Preview is incomplete."
        in (capsys.readouterr().err)
    )


@pytest.mark.parametrize(
    "manifest, missing",
    [
        # the provider reads kind, apiVersion and name with unstructured's accessors: a value that is not a
        # string is none (a list would otherwise become part of a resource's name or type)
        ("apiVersion: v1\nkind: [ConfigMap]\nmetadata: {name: a}\n", "a kind and apiVersion"),
        ("apiVersion: v1\nkind: 5\nmetadata: {name: a}\n", "a kind and apiVersion"),
        ("apiVersion: 1\nkind: ConfigMap\nmetadata: {name: a}\n", "a kind and apiVersion"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [a]}\n", "a .metadata.name"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 5}\n", "a .metadata.name"),
    ],
)
def test_a_manifest_field_that_is_not_text_is_refused_as_missing(tmp_path, manifest, missing):
    path = tmp_path / "bad.yaml"
    path.write_text(manifest)
    with pytest.raises(
        Exception, match=rf"kubernetes:yaml/v2:ConfigFile 'bad': Kubernetes resources require {re.escape(missing)}"
    ):
        run(lambda: k8s.yaml.v2.ConfigFile("bad", file=str(path)))


def test_a_namespace_that_is_not_text_is_none_and_the_default_follows(tmp_path):
    path = tmp_path / "team.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: 2024}\n")
    r = run(lambda: k8s.yaml.v2.ConfigFile("team", file=str(path)))
    [child] = [c for c in r.resources if c.type == "kubernetes:core/v1:ConfigMap"]
    assert child.name == "team:default/a"


def test_v1_config_file_decodes_through_the_provider_invoke(tmp_path):
    """v1 ``ConfigFile`` is a local component: the Python SDK reads the file and asks the provider's
    ``kubernetes:yaml:decode`` for the objects, then names them itself (no prefix, no default namespace)."""
    path = tmp_path / "team.yaml"
    path.write_text(MANIFEST + "---\n{}\n---\nnot: a kubernetes object\n")

    r = run(lambda: k8s.yaml.ConfigFile("team", file=str(path)))
    assert sorted(
        (c.type, c.name) for c in r.resources if c.type.startswith("kubernetes:") and "yaml:" not in c.type
    ) == [
        ("kubernetes:core/v1:ConfigMap", "settings"),
        ("kubernetes:core/v1:Namespace", "team"),
        ("kubernetes:core/v1:Secret", "team/token"),
        ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "default"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "reader"),
    ]


def test_a_custom_kind_nobody_knows_gets_no_namespace_and_a_warning(tmp_path, capsys):
    path = tmp_path / "crontab.yaml"
    path.write_text("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: nightly}\n")
    r = run(lambda: k8s.yaml.v2.ConfigFile("jobs", file=str(path)))
    assert one(r, "kubernetes:stable.example.com/v1:CronTab").name == "jobs:nightly"
    assert "so they are rendered without a namespace: stable.example.com/v1, Kind=CronTab" in capsys.readouterr().err


# ---- helm.sh/v4 Chart --------------------------------------------------------------------------------------------


def chart_dir(tmp_path: Path) -> Path:
    chart = tmp_path / "team-chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: team-chart\nversion: 0.1.0\n")
    return chart


def test_a_local_chart_without_helm_is_not_judged_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-helm-here"))
    chart = chart_dir(tmp_path)
    r = run(lambda: k8s.helm.v4.Chart("team", chart=str(chart)))
    assert [c.type for c in r.resources if c.parent == one(r, "kubernetes:helm.sh/v4:Chart").urn] == []
    assert (
        f"warning: kubernetes:helm.sh/v4:Chart 'team' (chart {chart}): no helm binary on the PATH to render it "
        "with, so its objects were not judged"
    ) in capsys.readouterr().err


def test_a_remote_chart_is_not_judged_and_says_so(capsys):
    run(
        lambda: k8s.helm.v4.Chart(
            "dp",
            chart="nvidia-device-plugin",
            version="0.20.0",
            repository_opts={"repo": "https://nvidia.github.io/k8s-device-plugin"},
        )
    )
    assert (
        "kubernetes:helm.sh/v4:Chart 'dp' (chart nvidia-device-plugin from "
        "https://nvidia.github.io/k8s-device-plugin): "
        "the offline engine renders only local charts, so its objects were not judged"
    ) in capsys.readouterr().err


STAND_IN = """#!{python}
# A stand-in for the helm binary (not helm): it records its arguments and prints fixed YAML, as
# `helm template` prints a chart's rendered objects.
import json, sys
open({record!r}, "w").write(json.dumps(sys.argv[1:]))
print('''apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gpu}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu-class}}
      requirements:
        - {{key: karpenter.k8s.aws/instance-category, operator: In, values: [g]}}
        - {{key: karpenter.k8s.aws/instance-gpu-manufacturer, operator: In, values: [nvidia]}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: gpu-class}}
spec: {{amiSelectorTerms: [{{alias: bottlerocket@latest}}], role: nodes}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {{name: team}}
''')
"""


def test_a_local_chart_is_rendered_with_helm_template_and_judged(tmp_path, monkeypatch, pack):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    record = tmp_path / "argv.json"
    helm.write_text(STAND_IN.format(python=sys.executable, record=str(record)))
    helm.chmod(helm.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    chart = chart_dir(tmp_path)

    def program() -> None:
        k8s.helm.v4.Chart("team", chart=str(chart), namespace="ml", values={"gpu": True})

    r = run(program)
    argv = json.loads(record.read_text())
    assert argv[:6] == ["template", "team", str(chart), "--namespace", "ml", "--values"]
    assert argv[7:] == ["--include-crds", "--no-hooks"]
    component = one(r, "kubernetes:helm.sh/v4:Chart")
    assert sorted((c.type, c.name) for c in r.resources if c.parent == component.urn) == [
        ("kubernetes:core/v1:ServiceAccount", "team:ml/team"),  # the chart's namespace is the default
        ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "team:gpu-class"),
        ("kubernetes:karpenter.sh/v1:NodePool", "team:gpu"),
    ]
    assert [v["message"] for v in judge(pack, r) if v["level"] == "mandatory"] == [
        "karpenter nodepool 'gpu' (EC2NodeClass 'gpu-class'): requirements karpenter.k8s.aws/instance-category In [g] "
        "and "
        "karpenter.k8s.aws/instance-gpu-manufacturer In [nvidia] make this a GPU lane, and GPU lanes must run Amazon "
        "Linux 2023, not Bottlerocket (move them to an AL2023 pool or node group)"
    ]


# ---- unknowns, as in a real preview --------------------------------------------------------------------------


def test_ids_and_computed_outputs_are_unknown_and_the_tree_says_which_inputs(capsys):
    assert main(["preview", "--stack", "prod", "--cwd", str(REPO), "--no-policy"]) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(n for n, line in enumerate(out) if "aws:eks/nodeGroup:NodeGroup" in line)
    assert out[row].startswith(" +") and out[row].endswith("rack-ng-1")
    # prod creates its cluster, so the cluster's name is unknown too
    assert (
        out[row + 1]
        .strip()
        .endswith("unknown until apply: clusterName, launchTemplate.id, launchTemplate.version, nodeRoleArn")
    )
    assert not out[row + 1].startswith(" +")


def test_a_preview_knows_inputs_and_reads_but_not_ids():
    def program() -> None:
        role = aws.iam.Role("nodes", assume_role_policy="{}", name="nodes")
        pulumi.export("id", role.id)
        pulumi.export("name", role.name)  # an input the provider echoes
        pulumi.export("arn", role.arn)  # computed by AWS
        pulumi.export("cluster", aws.eks.Cluster.get("c", "prod").endpoint)

    assert run(program).outputs == {
        "id": "<computed>",
        "name": "nodes",
        "arn": "<computed>",
        "cluster": "https://prod.eks.offline.invalid",
    }
