"""Day 2: the seeds' autoscaling at run time, add-ons that follow the control plane, who may administer
the cluster, the stack's identity and partition everywhere, and a GPU service's wait.

Upstream facts pinned here (read in the upstream sources; in our words):
- kubernetes/autoscaler ``cluster-autoscaler/charts/cluster-autoscaler`` (chart 9.59.0): the AWS
  auto-discovery flags are rendered only when ``autoDiscovery.clusterName`` is set; ``autoDiscovery.tags``
  lists the ASG tag keys to discover by; the chart names the service account after its full name unless
  ``rbac.serviceAccount.name`` is set, so the Pod Identity association needs it pinned; ``image.tag`` is
  ``v``-prefixed. The autoscaler's minor follows Kubernetes' minor (its README's release table), and the
  newest 1.34 release is v1.34.5.
- The autoscaler's AWS README: the read actions (Auto Scaling and EC2 describes, launch template
  versions, instance types from requirements, ``eks:DescribeNodegroup`` for scaling a managed group up
  from zero) take every resource; ``SetDesiredCapacity`` and ``TerminateInstanceInAutoScalingGroup``
  should be narrowed, e.g. by a tag condition. EKS tags each managed node group's Auto Scaling group
  ``k8s.io/cluster-autoscaler/enabled`` and ``k8s.io/cluster-autoscaler/<cluster>`` (value ``owned``).
- pulumi-eks ``ManagedNodeGroup``: ``ignoreScalingChanges`` puts ``ignoreChanges:
  ["scalingConfig.desiredSize"]`` on the ``aws.eks.NodeGroup`` it creates, so an autoscaler's desired
  size survives the next ``pulumi up``.
- pulumi-eks resolves its own add-ons' versions with ``aws.eks.getAddonVersion`` for the cluster's
  version, most recent (``cluster.ts``); the invoke token is ``aws:eks/getAddonVersion:getAddonVersion``.
- EKS access entries: an ``AccessEntry`` (``STANDARD``) per principal, and an ``AccessPolicyAssociation``
  with ``accessScope {type: cluster}`` and the policy ARN ``arn:<partition>:eks::aws:cluster-access-policy/
  AmazonEKSClusterAdminPolicy``. Principals are IAM role or user ARNs; an STS assumed-role ARN names a
  session. EKS refuses a second entry for the creator (ResourceInUseException), whom it bootstraps.
- AWS partitions by region (the SDKs' partitions table): ``us-gov-*`` is ``aws-us-gov``, ``cn-*`` is
  ``aws-cn``; the EC2 service principal in China is ``ec2.amazonaws.com.cn``.
- pulumi-eks ``Cluster`` (cluster.ts) builds two kubeconfigs: one with ``--profile`` for its own
  Kubernetes provider, and one without, which is what ``kubeconfigJson`` exports; a provider built from
  ``kubeconfigJson`` therefore authenticates with the shell's default identity.
- pulumi-kubernetes: ``pulumi.com/timeoutSeconds`` on an object sets how long its readiness is awaited
  (a non-zero ``customTimeouts`` would win); Deployments and Services otherwise give up after 10 minutes.
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Any

import pulumi
import pytest
import yaml

from conftest import REPO, rack_config, run_rack, stack_config
from mixed_os_racks import ArgumentError, ClusterRef, ConfigError, Service, ServiceArgs, ServiceSpec
from mixed_os_racks.addons import ClusterAutoscaler, ClusterAutoscalerArgs
from mixed_os_racks.offline import Catalog, ProgramRun, Resource, run_program

PRIVATE = ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712", "subnet-0a1b2c3d4e5f60713"]
CREATE = dict(cluster_mode="create", vpc_id="vpc-0a1b2c3d4e5f60718", private_subnets_ids=",".join(PRIVATE))
SCALABLE = [{"id": 1, "type": "g5.xlarge", "min_size": 0, "max_size": 3, "label": "gpu"}]
FIXED = [{"id": 1, "type": "m5.large", "min_size": 2, "max_size": 2}]
SYSTEM_SELECTOR = {"convox.io/system-node": "true"}
SYSTEM_TOLERATION = {"key": "convox.io/system-node", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
CHART = "kubernetes:helm.sh/v4:Chart"
ADDON = "aws:eks/addon:Addon"


def of(run: ProgramRun, type_: str) -> list[Resource]:
    return [r for r in run.resources if r.type == type_]


def only(run: ProgramRun, type_: str, name: str) -> Resource:
    found = [r for r in run.resources if r.type == type_ and r.name == name]
    assert len(found) == 1, (type_, name, [r.name for r in of(run, type_)])
    return found[0]


def charts(run: ProgramRun) -> dict[str, Resource]:
    return {r.inputs["chart"]: r for r in of(run, CHART)}


def refusal(**rack: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        run_rack(rack_config(**rack))
    return str(caught.value)


@pytest.fixture(scope="module")
def created() -> ProgramRun:
    return run_rack(rack_config(**CREATE, additional_node_groups_config=SCALABLE))


# ---- the Cluster Autoscaler ---------------------------------------------------------------------------------


def test_the_autoscaler_chart_finds_the_clusters_managed_groups_from_the_system_lane(created):
    chart = charts(created)["cluster-autoscaler"]
    assert chart.inputs["repositoryOpts"] == {"repo": "https://kubernetes.github.io/autoscaler"}
    assert chart.inputs["version"].startswith("9.")
    values = chart.inputs["values"]
    assert values["autoDiscovery"] == {
        "clusterName": "test-rack",
        "tags": ["k8s.io/cluster-autoscaler/enabled", "k8s.io/cluster-autoscaler/test-rack"],
    }
    assert values["image"] == {"repository": "registry.k8s.io/autoscaling/cluster-autoscaler", "tag": "v1.34.5"}
    assert values["awsRegion"] == "us-east-1" and values["cloudProvider"] == "aws"
    assert values["nodeSelector"] == SYSTEM_SELECTOR and values["tolerations"] == [SYSTEM_TOLERATION]


def test_the_autoscaler_image_follows_the_clusters_minor():
    run = run_rack(rack_config(**CREATE, k8s_version="1.33", additional_node_groups_config=SCALABLE))
    assert charts(run)["cluster-autoscaler"].inputs["values"]["image"]["tag"] == "v1.33.6"


def test_a_version_without_an_autoscaler_release_is_refused_naming_the_keys():
    # every minor without an autoscaler release (1.31 and older) is also past EKS extended support: a stack
    # is refused under k8s_version first; the component names its own argument
    message = refusal(**CREATE, k8s_version="1.30", additional_node_groups_config=SCALABLE)
    assert message.startswith("rack:k8s_version: ") and "end of EKS extended support" in message

    def program() -> None:
        ClusterAutoscaler("ca", ClusterAutoscalerArgs(cluster=ClusterRef.existing("c", "c"), kubernetes_version="1.31"))

    with pytest.raises(ArgumentError) as caught:
        run_program(program, {"aws:region": "us-east-1"})
    assert str(caught.value).startswith(
        "ClusterAutoscaler 'ca': kubernetes_version: no Cluster Autoscaler release is known for Kubernetes '1.31'"
    )


def test_the_autoscaler_authenticates_through_pod_identity_with_its_service_account(created):
    values = charts(created)["cluster-autoscaler"].inputs["values"]
    association = only(
        created, "aws:eks/podIdentityAssociation:PodIdentityAssociation", "rack-cluster-autoscaler-pod-identity"
    )
    assert association.inputs["serviceAccount"] == values["rbac"]["serviceAccount"]["name"]
    assert association.inputs["namespace"] == "kube-system" and association.inputs["clusterName"] == "test-rack"
    role = only(created, "aws:iam/role:Role", "rack-cluster-autoscaler-role")
    (statement,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    chart = charts(created)["cluster-autoscaler"]
    assert association.urn in chart.dependencies  # the pods start with credentials


def test_the_autoscaler_policy_reads_everywhere_and_scales_only_this_clusters_groups(created):
    policy = json.loads(only(created, "aws:iam/policy:Policy", "rack-cluster-autoscaler-policy").inputs["policy"])
    read, write = policy["Statement"]
    assert {
        "eks:DescribeNodegroup",
        "ec2:DescribeLaunchTemplateVersions",
        "ec2:DescribeInstanceTypes",
        "ec2:GetInstanceTypesFromInstanceRequirements",
        "autoscaling:DescribeAutoScalingGroups",
    } <= set(read["Action"])
    assert "Condition" not in read and not any(
        a.startswith(("autoscaling:Set", "autoscaling:Terminate")) for a in read["Action"]
    )
    assert sorted(write["Action"]) == [
        "autoscaling:SetDesiredCapacity",
        "autoscaling:TerminateInstanceInAutoScalingGroup",
    ]
    assert write["Condition"] == {"StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/test-rack": "owned"}}


def test_pulumi_keeps_the_desired_size_the_autoscaler_sets(created):
    # a group that can scale leaves its desired size to the autoscaler; a fixed-size group (the system lane,
    # min = max) is nobody's to scale, and sends its size so that new bounds always take
    groups = of(created, "aws:eks/nodeGroup:NodeGroup")
    scalable = [g for g in groups if g.inputs["scalingConfig"]["minSize"] < g.inputs["scalingConfig"]["maxSize"]]
    fixed = [g for g in groups if g not in scalable]
    assert scalable and fixed
    for group in scalable:
        assert "scalingConfig.desiredSize" in group.ignore_changes, group.name
    for group in fixed:
        assert "scalingConfig.desiredSize" not in group.ignore_changes, group.name
        assert group.inputs["scalingConfig"]["desiredSize"] == group.inputs["scalingConfig"]["minSize"]


@pytest.mark.parametrize(
    "rack, installed",
    [
        (dict(**CREATE, additional_node_groups_config=FIXED), False),  # nothing to scale (the system lane is min = max)
        (dict(**CREATE, additional_node_groups_config=SCALABLE, cluster_autoscaler_enable=False), False),
        (dict(additional_node_groups_config=SCALABLE), False),  # existing cluster, its add-ons are its own
        (dict(additional_node_groups_config=SCALABLE, karpenter_install=True, cluster_autoscaler_enable=True), True),
        (dict(additional_build_groups_config=[{"type": "c5.xlarge", "max_size": 2}]), False),
        (
            dict(
                additional_build_groups_config=[{"type": "c5.xlarge", "max_size": 2}],
                karpenter_install=True,
                cluster_autoscaler_enable=False,
            ),
            False,
        ),
    ],
)
def test_when_the_autoscaler_is_installed(rack, installed):
    assert ("cluster-autoscaler" in charts(run_rack(rack_config(**rack)))) is installed


@pytest.mark.parametrize("groups", ["additional_node_groups_config", "additional_build_groups_config"])
def test_in_an_existing_cluster_who_scales_the_groups_is_said(groups):
    # the rack cannot see whether the cluster already runs an autoscaler: a second one collides on its ClusterRole
    message = refusal(
        **{groups: [{"id": 1, "type": "c5.xlarge", "min_size": 0, "max_size": 2}]}, karpenter_install=True
    )
    assert message.startswith("rack:cluster_autoscaler_enable: node groups rack-")
    assert "ClusterRole cluster-autoscaler" in message and "cluster_autoscaler_enable: true" in message


def test_in_an_existing_cluster_the_autoscaler_follows_the_clusters_version_and_runs_anywhere():
    run = run_rack(
        rack_config(additional_node_groups_config=SCALABLE, karpenter_install=True, cluster_autoscaler_enable=True)
    )
    values = charts(run)["cluster-autoscaler"].inputs["values"]
    assert values["image"]["tag"] == "v1.34.5"  # the offline account's existing cluster runs 1.34
    assert values["nodeSelector"] == {} and values["tolerations"] == []


def test_a_second_autoscaler_for_the_same_cluster_is_refused():
    def program() -> None:
        cluster = ClusterRef.existing("c", "c")
        ClusterAutoscaler("one", ClusterAutoscalerArgs(cluster=cluster, kubernetes_version="1.34"))
        ClusterAutoscaler("two", ClusterAutoscalerArgs(cluster=cluster, kubernetes_version="1.34"))

    with pytest.raises(
        ArgumentError,
        match=r"ClusterAutoscaler 'two': cluster: .*already has a Cluster Autoscaler \(ClusterAutoscaler 'one'\)",
    ):
        run_program(program, {"aws:region": "us-east-1"})

    def through_two_refs() -> None:  # two refs to one cluster are one cluster
        ClusterAutoscaler(
            "one", ClusterAutoscalerArgs(cluster=ClusterRef.existing("a", "c"), kubernetes_version="1.34")
        )
        ClusterAutoscaler(
            "two", ClusterAutoscalerArgs(cluster=ClusterRef.existing("b", "c"), kubernetes_version="1.34")
        )

    with pytest.raises(ArgumentError, match=r"ClusterAutoscaler 'two': cluster: .*already has a Cluster Autoscaler"):
        run_program(through_two_refs, {"aws:region": "us-east-1"})


# ---- metrics-server -----------------------------------------------------------------------------------------


def test_metrics_server_runs_on_the_system_lane_of_a_created_cluster(created):
    chart = charts(created)["metrics-server"]
    assert chart.inputs["repositoryOpts"] == {"repo": "https://kubernetes-sigs.github.io/metrics-server/"}
    values = chart.inputs["values"]
    assert values == {"replicas": 2, "nodeSelector": SYSTEM_SELECTOR, "tolerations": [SYSTEM_TOLERATION]}


def test_metrics_server_in_an_existing_cluster_only_when_asked():
    assert "metrics-server" not in charts(run_rack(rack_config()))
    assert charts(run_rack(rack_config(metrics_server_enable=True)))["metrics-server"].inputs["values"]["replicas"] == 2


# ---- add-ons follow the control plane -----------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.33", "1.34"])
def test_every_addon_pins_the_version_eks_offers_for_the_clusters_kubernetes(version):
    run = run_rack(rack_config(**CREATE, k8s_version=version))
    addons = {a.inputs["addonName"]: a.inputs["addonVersion"] for a in of(run, ADDON)}
    assert set(addons) == {"coredns", "eks-pod-identity-agent"}
    minor = int(version.split(".")[1])
    # the offline stand-in answers one build per add-on and minor: a control-plane upgrade moves them
    assert addons == {
        "coredns": f"v1.12.{minor - 28}-eksbuild.offline",
        "eks-pod-identity-agent": f"v1.3.{minor - 28}-eksbuild.offline",
    }


def test_the_pod_identity_agent_of_an_existing_cluster_when_asked():
    run = run_rack(rack_config(pod_identity_agent_enable=True))
    (addon,) = of(run, ADDON)
    assert addon.inputs["addonName"] == "eks-pod-identity-agent" and addon.inputs["addonVersion"].startswith("v1.3.")
    assert of(run_rack(rack_config()), ADDON) == []


def test_karpenter_without_the_pod_identity_agent_is_refused_in_both_modes():
    for rack in (dict(karpenter_install=True), dict(**CREATE)):
        message = refusal(**rack, pod_identity_agent_enable=False)
        assert message.startswith("rack:pod_identity_agent_enable: ") and "set it true" in message


# ---- who can administer the cluster -------------------------------------------------------------------------

ADMINS = "arn:aws:iam::111122223333:role/ci,arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/AdminSSO"


def test_each_admin_arn_gets_an_access_entry_and_the_cluster_admin_policy():
    run = run_rack(rack_config(**CREATE, cluster_admin_arns=ADMINS))
    entries = {
        e.inputs["principalArn"]: e
        for e in of(run, "aws:eks/accessEntry:AccessEntry")
        if e.inputs.get("type") == "STANDARD"
    }
    assert sorted(entries) == sorted(ADMINS.split(","))
    associations = of(run, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert sorted(a.inputs["principalArn"] for a in associations) == sorted(entries)
    for association in associations:
        assert association.inputs["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
        assert association.inputs["accessScope"] == {"type": "cluster"}
        assert association.inputs["clusterName"] == "test-rack"
        assert entries[association.inputs["principalArn"]].urn in association.dependencies


@pytest.mark.parametrize(
    "arns, problem",
    [
        ("arn:aws:sts::111122223333:assumed-role/ci/session-1", "an STS assumed-role session: give the role's own ARN"),
        ("arn:aws:iam::111122223333:group/admins", "must be an IAM role or user ARN"),
        ("arn:aws:iam::1111:role/ci", "must be an IAM role or user ARN"),
        ("arn:aws:iam::111122223333:role/ci,arn:aws:iam::111122223333:role/team/ci", "duplicate ARN"),
        # IAM names are not distinguished by case: EKS would refuse the second access entry
        (
            "arn:aws:iam::111122223333:role/CI,arn:aws:iam::111122223333:role/ci",
            "duplicate ARN 'arn:aws:iam::111122223333:role/ci' (the same role as 'arn:aws:iam::111122223333:role/CI')",
        ),
    ],
)
def test_bad_admin_arns_are_refused_naming_the_key(arns, problem):
    message = refusal(**CREATE, cluster_admin_arns=arns)
    assert message.startswith("rack:cluster_admin_arns: ") and problem in message


def test_admin_arns_are_for_a_cluster_the_rack_creates():
    assert refusal(cluster_admin_arns="arn:aws:iam::111122223333:role/ci").startswith("rack:cluster_admin_arns: ")


def test_the_deploying_identity_among_the_admins_is_warned_about(capfd):
    # the offline account's caller is arn:aws:iam::123456789012:root
    run_rack(rack_config(**CREATE, cluster_admin_arns="arn:aws:iam::123456789012:user/root"))
    assert "cluster_admin_arns" not in capfd.readouterr().err
    # an assumed-role caller maps to its role; the rack warns instead of creating a colliding entry silently
    from mixed_os_racks.eks import principal_of_session

    assert principal_of_session("arn:aws:sts::123456789012:assumed-role/ci/build-7") == "ci"
    assert principal_of_session("arn:aws:iam::123456789012:role/ci") == ""


# ---- partitions and the stack's identity --------------------------------------------------------------------


def catalog_in(region: str) -> Catalog:
    """The offline catalog with the stacks' subnets in ``region``'s zones (a subnet belongs to one region)."""
    doc = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    doc["subnets"] = {subnet: f"{region}{zone[-1]}" for subnet, zone in doc["subnets"].items()}
    return Catalog.from_doc(doc)


def test_a_govcloud_stack_uses_its_partition_everywhere():
    run = run_rack(
        {
            **rack_config(
                **CREATE,
                additional_node_groups_config=FIXED,
                cluster_admin_arns="arn:aws-us-gov:iam::111122223333:role/ci",
            ),
            "aws:region": "us-gov-west-1",
        },
        catalog_in("us-gov-west-1"),
    )
    attachments = [
        a.inputs["policyArn"]
        for a in of(run, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if a.inputs["policyArn"] != "<computed>"
    ]  # the rack's own policies' ARNs come at apply
    assert attachments and all(arn.startswith("arn:aws-us-gov:iam::aws:policy/") for arn in attachments)
    (association,) = of(run, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert association.inputs["policyArn"].startswith("arn:aws-us-gov:eks::aws:cluster-access-policy/")
    text = json.dumps([r.inputs for r in run.resources])
    assert "arn:aws:" not in text


def test_a_china_stack_trusts_the_china_ec2_principal():
    run = run_rack(
        {**rack_config(**CREATE, additional_node_groups_config=FIXED), "aws:region": "cn-north-1"},
        catalog_in("cn-north-1"),
    )
    role = only(run, "aws:iam/role:Role", "rack-ng-1-role")
    assert json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Principal"] == {
        "Service": "ec2.amazonaws.com.cn"
    }
    assert all(
        a.inputs["policyArn"].startswith("arn:aws-cn:iam::aws:policy/")
        for a in of(run, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if a.name.startswith("rack-ng-1-")
    )


def test_a_created_clusters_kubeconfig_names_the_stacks_profile():
    def program() -> None:
        # what ClusterRef.created reads of a pulumi-eks Cluster, as it is after apply
        created = SimpleNamespace(
            eks_cluster=pulumi.Output.from_input(
                SimpleNamespace(
                    name="c",
                    endpoint="https://c.example",
                    arn="arn:aws:eks:eu-west-1:111122223333:cluster/c",
                    certificate_authority=SimpleNamespace(data="Q0E="),
                )
            ),
            kubeconfig_json=pulumi.Output.from_input("{}"),  # pulumi-eks's own, which names no profile
            urn=pulumi.Output.from_input("urn:pulumi:dev::p::eks:index:Cluster::c"),
        )
        ClusterRef.created("c", created, cluster_name="c", version="1.34")  # type: ignore[arg-type]

    run = run_program(program, {"aws:region": "eu-west-1", "aws:profile": "prod-admin"})
    (provider,) = of(run, "pulumi:providers:kubernetes")
    config = json.loads(provider.inputs["kubeconfig"])
    assert config["clusters"][0]["cluster"]["server"] == "https://c.example"
    assert config["users"][0]["user"]["exec"]["args"] == [
        "--region",
        "eu-west-1",
        "eks",
        "get-token",
        "--cluster-name",
        "c",
        "--output",
        "json",
        "--profile",
        "prod-admin",
    ]


# ---- a GPU service waits for its node -----------------------------------------------------------------------

INFERENCE = {
    "name": "inference",
    "image": "vllm/vllm-openai:v0.6.4",
    "port": 8000,
    "internal": True,
    "scale": {"count": 1, "memory": 16384, "gpu": {"count": 1, "vendor": "nvidia"}},
    "nodeSelectorLabels": {"convox.io/label": "gpu-inference"},
}
WEB = {"name": "web", "image": "nginx:1.27", "port": 8080}


def services(*specs: dict[str, Any], **extra: Any) -> ProgramRun:
    def program() -> None:
        cluster = ClusterRef.existing("prod", "prod-rack")
        for fields in specs:
            Service(fields["name"], ServiceArgs(service=ServiceSpec(**fields), cluster=cluster, **extra))  # type: ignore[typeddict-item]

    return run_program(program, {"aws:region": "us-east-1"})


def waits(run: ProgramRun, name: str) -> tuple[Any, Any]:
    deployment = only(run, "kubernetes:apps/v1:Deployment", f"{name}-deployment").inputs["metadata"]
    service = only(run, "kubernetes:core/v1:Service", f"{name}-service").inputs["metadata"]
    return (
        (deployment.get("annotations") or {}).get("pulumi.com/timeoutSeconds"),
        (service.get("annotations") or {}).get("pulumi.com/timeoutSeconds"),
    )


def test_a_gpu_services_deployment_and_service_wait_longer_than_ten_minutes():
    run = services(INFERENCE, WEB)
    deployment_wait, service_wait = waits(run, "inference")
    assert deployment_wait == service_wait and int(deployment_wait) >= 1200
    assert waits(run, "web") == (None, None)  # pulumi-kubernetes's own 10 minutes
    assert waits(services(INFERENCE, gpu_wait_seconds=3600), "inference") == ("3600", "3600")


@pytest.mark.parametrize(
    "bad, problem",
    [
        (600, "must be 1200 to 86400 (a day) (got 600)"),
        ("1800", "expected int"),
        (True, "expected int"),
        (10**30, "must be 1200 to 86400 (a day) (got 1000000"),
    ],
)
def test_a_wait_below_twenty_minutes_or_not_a_number_is_refused(bad, problem):
    with pytest.raises(ArgumentError, match=re.escape(f"Service 'inference': gpu_wait_seconds: {problem}")):
        services(INFERENCE, gpu_wait_seconds=bad)


def test_a_wait_on_a_service_without_gpus_is_refused_not_ignored():
    with pytest.raises(
        ArgumentError,
        match=re.escape(
            "Service 'web': gpu_wait_seconds: is for a GPU service, and this one requests no GPU (scale.gpu); remove it"
        ),
    ):
        services(WEB, gpu_wait_seconds=3600)


@pytest.mark.parametrize(
    "field, value, problem",
    [
        (
            "scale",
            {"count": 2**31},
            "scale.count: invalid count '2147483648' (at most 2147483647: replicas are a 32-bit integer)",
        ),
        (
            "health",
            {"path": "/", "interval": 10**10},
            "health.interval: invalid value '10000000000' (seconds, 1 to 2147483647",
        ),
    ],
)
def test_kubernetes_32_bit_fields_are_bounded(field, value, problem):
    with pytest.raises(ConfigError, match=re.escape(problem)):
        ServiceSpec(**{**WEB, field: value})


# ---- the example stacks show it all -------------------------------------------------------------------------


def test_the_prod_stack_has_the_autoscaler_metrics_server_versions_and_admins():
    run = run_rack(stack_config("prod"), stack="prod")
    assert {"cluster-autoscaler", "metrics-server"} <= set(charts(run))
    assert all(a.inputs.get("addonVersion") for a in of(run, ADDON))
    assert of(run, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")


@pytest.mark.parametrize(
    "rack, key",
    [
        (dict(**CREATE, cluster_admin_arns="arn:aws:sts::111122223333:assumed-role/ci/s"), "cluster_admin_arns"),
        (dict(karpenter_install=True, pod_identity_agent_enable=False), "pod_identity_agent_enable"),
        (dict(**CREATE, k8s_version="1.30", additional_node_groups_config=SCALABLE), "k8s_version"),
    ],
)
def test_each_refusal_exits_2_naming_its_key(tmp_path, capsys, rack, key):
    import yaml

    from mixed_os_racks.cli import main

    stack = tmp_path / "Pulumi.t.yaml"
    stack.write_text(yaml.safe_dump({"config": {**rack_config(**rack)}}))
    assert main(["preview", "--config", str(stack), "--no-policy"]) == 2
    err = capsys.readouterr().err
    # the line of the key in the file, when the file has it (a default's problem names the key alone)
    assert re.match(rf"error: ({re.escape(str(stack))}:\d+: )?rack:{key}: ", err) and "Traceback" not in err


def test_karpenter_in_an_existing_cluster_waits_for_the_agent_the_rack_installs():
    run = run_rack(rack_config(karpenter_install=True, pod_identity_agent_enable=True))
    (agent,) = of(run, ADDON)
    controller = only(run, "rack:index:KarpenterController", "rack-karpenter")
    assert agent.urn in controller.dependencies


def test_the_preview_json_of_a_govcloud_stack_shows_govcloud_arns(tmp_path, capsys):
    import yaml

    from mixed_os_racks.cli import main

    config = {
        **stack_config("prod"),
        "aws:region": "us-gov-west-1",
        "rack:cluster_admin_arns": "arn:aws-us-gov:iam::123456789012:role/ci-deploy",
    }
    stack, out, amis = tmp_path / "Pulumi.gov.yaml", tmp_path / "preview.json", tmp_path / "amis.yaml"
    stack.write_text(yaml.safe_dump({"config": config}))
    doc = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    doc["subnets"] = {subnet: f"us-gov-west-1{zone[-1]}" for subnet, zone in doc["subnets"].items()}
    amis.write_text(yaml.safe_dump(doc))
    assert main(["preview", "--config", str(stack), "--amis", str(amis), "--no-policy", "--json", str(out)]) == 0
    resources = json.loads(out.read_text())["resources"]
    arns = [
        r["inputs"]["policyArn"]
        for r in resources
        if "policyArn" in r["inputs"] and r["inputs"]["policyArn"] != "<computed>"
    ]
    assert arns and all(arn.startswith("arn:aws-us-gov:") for arn in arns)
    assert "arn:aws:" not in json.dumps(resources)


def test_the_autoscaler_and_metrics_server_start_after_and_go_before_the_system_lane_and_its_addons(created):
    coredns = only(created, ADDON, "rack-coredns")
    agent = only(created, ADDON, "rack-eks-pod-identity-agent")
    # waiting for a component is waiting for its resources: the system lane's launch template among them
    lane = only(created, "aws:ec2/launchTemplate:LaunchTemplate", "rack-system-launch-template")
    autoscaler, metrics = charts(created)["cluster-autoscaler"], charts(created)["metrics-server"]
    assert {coredns.urn, agent.urn, lane.urn} <= set(autoscaler.dependencies)
    assert {coredns.urn, lane.urn} <= set(metrics.dependencies)


def test_an_admin_arn_of_another_partition_than_the_stacks_region_is_refused():
    with pytest.raises(ConfigError) as caught:
        run_rack(
            {
                **rack_config(**CREATE, cluster_admin_arns="arn:aws:iam::111122223333:role/ci"),
                "aws:region": "us-gov-west-1",
            }
        )
    assert str(caught.value) == (
        "rack:cluster_admin_arns: ARN 'arn:aws:iam::111122223333:role/ci' is in the 'aws' partition, and the stack's "
        "region us-gov-west-1 is in 'aws-us-gov' (write arn:aws-us-gov:...)"
    )
