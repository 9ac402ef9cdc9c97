"""The whole rack per environment: the cluster it creates, its system lane, Karpenter itself,
both modes, the outputs, and what a change may never do to the cluster.

Upstream facts pinned here:
- pulumi-eks ``Cluster`` (nodejs/eks/cluster/cluster.ts): ``authenticationMode: API`` with no default node
  group creates no access entry of its own; ``skipDefaultSecurityGroups`` leaves the EKS-managed cluster
  security group as the only one; ``encryptionConfigKeyArn`` encrypts Kubernetes secrets. CoreDNS asked of
  ``Cluster`` (``corednsAddonOptions``: ``enabled``, or any ``configurationValues``) is created inside it,
  before any node group: EKS holds it DEGRADED and the first ``pulumi up`` fails after 20 minutes
  (pulumi-eks issue 1819), so the rack makes its own add-on after the system lane. A managed node
  group with no ``subnetIds`` takes the cluster's CoreData ``subnetIds``: public and private together.
- Karpenter's reference CloudFormation (../shared/reference/karpenter-v1.14.1/getting-started/cloudformation.yaml):
  the node role's four managed policies, the controller policies' statements, the queue (300 s, SQS SSE,
  EventBridge and SQS may send, non-TLS denied) and the five EventBridge rules.
- EKS: a node role joins through an access entry of type EC2_LINUX; Pod Identity trusts
  ``pods.eks.amazonaws.com`` with ``sts:AssumeRole`` and ``sts:TagSession``.
- The karpenter chart's values (../shared/reference/karpenter-v1.14.1/chart-values.yaml).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from conftest import REPO, rack_config, reference, run_rack, stack_config
from mixed_os_racks import ConfigError, parse_rack_config
from mixed_os_racks.karpenter_controller import bounded_name, controller_policies, queue_name, rule_name
from mixed_os_racks.offline import ProgramRun, Resource
from policy_helpers import judge, start_pack

PRIVATE = ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712", "subnet-0a1b2c3d4e5f60713"]
CREATE = dict(
    cluster_mode="create",
    vpc_id="vpc-0a1b2c3d4e5f60718",
    private_subnets_ids=",".join(PRIVATE),
    public_subnets_ids="subnet-0a1b2c3d4e5f60721",
    tags="team=platform",
)


def only(run: ProgramRun, type_: str, name: str | None = None) -> Resource:
    found = [r for r in run.resources if r.type == type_ and (name is None or r.name == name)]
    assert len(found) == 1, (type_, name, [r.name for r in found])
    return found[0]


def of(run: ProgramRun, type_: str) -> list[Resource]:
    return [r for r in run.resources if r.type == type_]


@pytest.fixture(scope="module")
def created() -> ProgramRun:
    return run_rack(
        rack_config(**CREATE, additional_karpenter_nodepools_config=[{"name": "gpu", "instance_families": "g5"}])
    )


@pytest.fixture(scope="module")
def single() -> ProgramRun:
    return run_rack(rack_config(**CREATE, high_availability=False))


# ---- the cluster ---------------------------------------------------------------------------------------------


def test_the_cluster_uses_access_entries_and_the_users_network(created):
    cluster = only(created, "eks:index:Cluster")
    inputs = cluster.inputs
    assert (inputs["name"], inputs["version"], inputs["vpcId"]) == ("test-rack", "1.34", "vpc-0a1b2c3d4e5f60718")
    assert inputs["privateSubnetIds"] == PRIVATE and inputs["publicSubnetIds"] == ["subnet-0a1b2c3d4e5f60721"]
    assert inputs["authenticationMode"] == "API"
    assert inputs["skipDefaultNodeGroup"] is True and inputs["skipDefaultSecurityGroups"] is True
    assert inputs["endpointPrivateAccess"] is True and inputs["endpointPublicAccess"] is True
    assert inputs["publicAccessCidrs"] == ["0.0.0.0/0"]
    assert inputs["tags"] == {"team": "platform"}
    assert cluster.protect is True
    key = only(created, "aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    assert cluster.property_dependencies["encryptionConfigKeyArn"] == [key.urn]
    assert "instanceRoles" not in inputs and "roleMappings" not in inputs  # refused by pulumi-eks in API mode


def test_coredns_runs_on_the_system_lane_once_it_exists(created):
    options = only(created, "eks:index:Cluster").inputs["corednsAddonOptions"]  # not inside Cluster
    assert options["enabled"] is False and "configurationValues" not in options  # values would enable it
    addon = only(created, "aws:eks/addon:Addon", "rack-coredns")
    assert (addon.inputs["addonName"], addon.inputs["clusterName"]) == ("coredns", "test-rack")
    assert json.loads(addon.inputs["configurationValues"]) == {
        "nodeSelector": {"convox.io/system-node": "true"},
        "tolerations": [{"key": "convox.io/system-node", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
    }
    # the SDK turns a dependency on our NodeGroup into one on each of its children: pulumi-eks's
    # ManagedNodeGroup among them, which is done when EKS reports the group's nodes ACTIVE
    assert only(created, "eks:index:ManagedNodeGroup", "rack-system").urn in addon.dependencies
    # Karpenter waits for cluster DNS too
    controller = only(created, "rack:index:KarpenterController")
    assert addon.urn in controller.dependencies


def test_every_node_group_of_a_created_cluster_is_in_its_private_subnets():
    run = run_rack(
        rack_config(**CREATE, additional_node_groups_config=[{"id": 1, "type": "g4dn.xlarge"}], build_node_enabled=True)
    )
    for group in of(run, "eks:index:ManagedNodeGroup"):
        assert group.inputs["subnetIds"] == PRIVATE, group.name


def test_the_pod_identity_agent_is_installed(created):
    addon = only(created, "aws:eks/addon:Addon", "rack-eks-pod-identity-agent")
    assert (addon.inputs["addonName"], addon.inputs["clusterName"]) == ("eks-pod-identity-agent", "test-rack")
    assert only(created, "eks:index:Cluster").urn in addon.dependencies


@pytest.mark.parametrize("fixture, size", [("created", 3), ("single", 1)])
def test_the_system_lane(fixture, size, request):
    run = request.getfixturevalue(fixture)
    group = only(run, "eks:index:ManagedNodeGroup", "rack-system").inputs
    assert group["instanceTypes"] == ["t3.large"] and group["amiType"] == "AL2023_x86_64_STANDARD"
    assert group["scalingConfig"] == {"minSize": size, "maxSize": size, "desiredSize": size}
    assert group["subnetIds"] == PRIVATE  # EKS spreads the group over its subnets' zones
    assert group["labels"] == {"convox.io/system-node": "true"}
    assert group["taints"] == [{"key": "convox.io/system-node", "value": "true", "effect": "NO_SCHEDULE"}]
    template = only(run, "aws:ec2/launchTemplate:LaunchTemplate", "rack-system-launch-template").inputs
    assert template["metadataOptions"]["httpTokens"] == "required"
    assert template["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"
    assert template["blockDeviceMappings"][0]["ebs"]["volumeType"] == "gp3"


def test_the_pools_select_the_racks_subnets_and_security_group_by_id_and_nothing_is_tagged(created):
    # the subnets are the user's: the rack changes nothing it does not own (no aws.ec2.Tag, which would
    # also untag them on destroy); the EC2NodeClass CRD takes an ``id`` term alone, one per subnet, ORed
    assert of(created, "aws:ec2/tag:Tag") == []
    for node_class in of(created, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"):
        spec = node_class.inputs["spec"]
        assert spec["subnetSelectorTerms"] == [{"id": subnet} for subnet in PRIVATE]
        assert spec["securityGroupSelectorTerms"] == [{"id": "<computed>"}]  # the EKS-managed cluster group


def test_existing_mode_pools_still_select_by_the_discovery_tag():
    run = run_rack(stack_config("dev"), stack="dev")
    for node_class in of(run, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"):
        spec = node_class.inputs["spec"]
        assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "dev-rack"}}]
        assert spec["securityGroupSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "dev-rack"}}]


def test_existing_mode_creates_no_cluster_and_no_karpenter():
    run = run_rack(stack_config("dev"), stack="dev")
    for type_ in ("eks:index:Cluster", "rack:index:RackCluster", "rack:index:KarpenterController", "aws:kms/key:Key"):
        assert not of(run, type_), type_


def test_the_secrets_key_is_protected_as_the_cluster_is(created):
    # deleting the KMS key would leave every secret the cluster stored unreadable
    assert only(created, "eks:index:Cluster").protect is True
    assert only(created, "aws:kms/key:Key").protect is True


def test_protect_can_be_turned_off():
    run = run_rack(rack_config(**CREATE, protect=False))
    assert only(run, "eks:index:Cluster").protect is False
    assert only(run, "aws:kms/key:Key").protect is False


def test_changing_pools_groups_or_karpenter_never_touches_the_cluster():
    base = run_rack(rack_config(**CREATE))
    changed = run_rack(
        rack_config(
            **CREATE,
            karpenter_node_os="bottlerocket",
            karpenter_cpu_limit=500,
            build_node_enabled=True,
            additional_karpenter_nodepools_config=[{"name": "gpu", "instance_families": "g6"}],
            additional_node_groups_config=[{"id": 1, "type": "g4dn.xlarge"}],
            nvidia_device_plugin_enable=True,
        )
    )
    for type_, name in (
        ("eks:index:Cluster", None),
        ("aws:kms/key:Key", None),
        ("aws:eks/addon:Addon", "rack-coredns"),
        ("aws:eks/addon:Addon", "rack-eks-pod-identity-agent"),
    ):
        before, after = only(base, type_, name), only(changed, type_, name)
        assert (before.urn, before.inputs) == (after.urn, after.inputs), type_


# ---- Karpenter itself ----------------------------------------------------------------------------------------


def test_the_node_role_and_its_access_entry(created):
    role = only(created, "aws:iam/role:Role", "rack-karpenter-node-role")
    assert role.inputs["name"] == "KarpenterNodeRole-test-rack"
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust == [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": ["sts:AssumeRole"]}]
    attached = sorted(
        a.inputs["policyArn"]
        for a in of(created, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if a.name.startswith("rack-karpenter-node-")
    )
    assert attached == [
        f"arn:aws:iam::aws:policy/{p}"
        for p in (
            "AmazonEC2ContainerRegistryPullOnly",
            "AmazonEKSWorkerNodePolicy",
            "AmazonEKS_CNI_Policy",
            "AmazonSSMManagedInstanceCore",
        )
    ]
    entry = only(created, "aws:eks/accessEntry:AccessEntry")
    assert (entry.inputs["type"], entry.inputs["clusterName"]) == ("EC2_LINUX", "test-rack")
    assert entry.property_dependencies["principalArn"] == [role.urn]
    assert not of(created, "aws:iam/instanceProfile:InstanceProfile")  # Karpenter v1 makes its own


def test_the_controller_role_trusts_pod_identity_only(created):
    role = only(created, "aws:iam/role:Role", "rack-karpenter-controller-role")
    assert json.loads(role.inputs["assumeRolePolicy"])["Statement"] == [
        {
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }
    ]
    association = only(created, "aws:eks/podIdentityAssociation:PodIdentityAssociation").inputs
    assert (association["clusterName"], association["namespace"], association["serviceAccount"]) == (
        "test-rack",
        "kube-system",
        "karpenter",
    )


def policies(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {
        p.name.removeprefix("rack-karpenter-"): json.loads(p.inputs["policy"]) for p in of(run, "aws:iam/policy:Policy")
    }


def test_the_controller_policy_follows_the_reference_statement_by_statement(created):
    found = policies(created)
    sids = {part: [s["Sid"] for s in doc["Statement"]] for part, doc in found.items()}
    assert sids == {
        "NodeLifecycle": [
            "AllowScopedEC2InstanceAccessActions",
            "AllowScopedEC2LaunchTemplateAccessActions",
            "AllowScopedEC2InstanceActionsWithTags",
            "AllowScopedResourceCreationTagging",
            "AllowScopedResourceTagging",
            "AllowScopedDeletion",
        ],
        "IAMIntegration": [
            "AllowPassingInstanceRole",
            "AllowScopedInstanceProfileCreationActions",
            "AllowScopedInstanceProfileTagActions",
            "AllowScopedInstanceProfileActions",
        ],
        "EKSIntegration": ["AllowAPIServerEndpointDiscovery"],
        "Interruption": ["AllowInterruptionQueueActions"],
        "ZonalShift": ["AllowZonalShiftStatusReadOnly"],
        "ResourceDiscovery": [
            "AllowRegionalReadActions",
            "AllowSSMReadActions",
            "AllowPricingReadActions",
            "AllowUnscopedInstanceProfileListAction",
            "AllowInstanceProfileReadActions",
        ],
    }
    statement = {s["Sid"]: s for doc in found.values() for s in doc["Statement"]}
    # scoped to this cluster, this node role, this queue, this region, this account: all known at preview
    assert (
        statement["AllowPassingInstanceRole"]["Resource"]
        == "arn:aws:iam::123456789012:role/KarpenterNodeRole-test-rack"
    )
    assert statement["AllowPassingInstanceRole"]["Condition"] == {
        "StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}
    }
    assert (
        statement["AllowAPIServerEndpointDiscovery"]["Resource"]
        == "arn:aws:eks:us-east-1:123456789012:cluster/test-rack"
    )
    assert statement["AllowInterruptionQueueActions"]["Resource"] == "arn:aws:sqs:us-east-1:123456789012:test-rack"
    assert statement["AllowScopedDeletion"]["Condition"]["StringEquals"] == {
        "aws:ResourceTag/kubernetes.io/cluster/test-rack": "owned"
    }
    assert statement["AllowRegionalReadActions"]["Condition"] == {"StringEquals": {"aws:RequestedRegion": "us-east-1"}}
    assert sorted(p.inputs["name"] for p in of(created, "aws:iam/policy:Policy")) == sorted(
        f"KarpenterController{part}Policy-test-rack" for part in sids
    )


READ_ONLY = ("Describe", "Get", "List")


def test_no_wildcard_actions_and_no_unconditioned_write_on_every_resource(created):
    for part, doc in policies(created).items():
        for statement in doc["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            assert all("*" not in action for action in actions), (part, statement["Sid"])
            writes = [a for a in actions if not a.split(":", 1)[1].startswith(READ_ONLY)]
            if writes and statement["Resource"] == "*":
                assert statement.get("Condition"), (part, statement["Sid"])


def test_the_reference_cloudformation_has_the_same_statements():
    """Read the reference file itself: every Sid it grants, we grant, with the same actions."""
    path = reference("karpenter-v1.14.1", "getting-started", "cloudformation.yaml")

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor(
        "!",
        lambda loader, suffix, node: (
            loader.construct_scalar(node) if isinstance(node, yaml.ScalarNode) else loader.construct_sequence(node)
        ),
    )
    template = yaml.load(path.read_text(), Loader=Loader)
    theirs = {}
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::IAM::ManagedPolicy":
            for statement in json.loads(
                resource["Properties"]["PolicyDocument"].replace("${", "<").replace('}"', '>"')
            )["Statement"]:
                theirs[statement["Sid"]] = sorted(
                    statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                )
    ours = {
        s["Sid"]: sorted(s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
        for doc in controller_policies("aws", "us-east-1", "1", "c", "arn:role", "arn:queue").values()
        for s in doc["Statement"]
    }
    assert ours == theirs


def test_the_interruption_queue_and_its_rules(created):
    queue = only(created, "aws:sqs/queue:Queue").inputs
    assert (queue["name"], queue["messageRetentionSeconds"], queue["sqsManagedSseEnabled"]) == ("test-rack", 300, True)
    policy = json.loads(only(created, "aws:sqs/queuePolicy:QueuePolicy").inputs["policy"])["Statement"]
    assert policy[0]["Principal"] == {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}
    assert policy[0]["Action"] == "sqs:SendMessage"
    assert policy[1]["Effect"] == "Deny" and policy[1]["Condition"] == {"Bool": {"aws:SecureTransport": False}}
    rules = {
        r.inputs["name"]: json.loads(r.inputs["eventPattern"])
        for r in of(created, "aws:cloudwatch/eventRule:EventRule")
    }
    assert rules == {
        "test-rack-karpenter-health": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
        "test-rack-karpenter-spot": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
        "test-rack-karpenter-rebalance": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Instance Rebalance Recommendation"],
        },
        "test-rack-karpenter-state-change": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Instance State-change Notification"],
        },
        "test-rack-karpenter-capacity-reservation": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
        },
    }
    targets = of(created, "aws:cloudwatch/eventTarget:EventTarget")
    queue_urn = only(created, "aws:sqs/queue:Queue").urn
    assert len(targets) == 5 and all(t.property_dependencies["arn"] == [queue_urn] for t in targets)


def test_names_stay_within_aws_limits_and_distinct():
    long = "c" * 100
    assert len(queue_name(long)) == 80 and len(rule_name(long, "capacity-reservation")) == 64
    assert bounded_name("KarpenterNodeRole-", long, 64) != bounded_name("KarpenterNodeRole-", long[:-1] + "d", 64)
    assert queue_name("prod-rack") == "prod-rack"


def charts(run: ProgramRun) -> dict[str, Resource]:
    return {r.inputs["chart"].rsplit("/", 1)[-1]: r for r in of(run, "kubernetes:helm.sh/v4:Chart")}


def test_the_charts(created, single):
    found = charts(created)
    crd, controller = found["karpenter-crd"], found["karpenter"]
    assert crd.inputs["chart"] == "oci://public.ecr.aws/karpenter/karpenter-crd" and crd.inputs["version"] == "1.14.1"
    assert controller.inputs["chart"] == "oci://public.ecr.aws/karpenter/karpenter"
    assert controller.inputs["skipCrds"] is True  # karpenter-crd owns them, and Helm upgrades them from templates/
    assert controller.inputs["name"] == "karpenter" and controller.inputs["namespace"] == "kube-system"
    values = controller.inputs["values"]
    assert values["settings"] == {
        "clusterName": "test-rack",
        "interruptionQueue": "test-rack",
        "featureGates": {"reservedCapacity": True},
    }
    assert values["serviceAccount"] == {"name": "karpenter"}  # matches the pod identity association
    assert values["replicas"] == 2 and charts(single)["karpenter"].inputs["values"]["replicas"] == 1
    assert values["nodeSelector"] == {"kubernetes.io/os": "linux", "convox.io/system-node": "true"}
    assert {"key": "convox.io/system-node", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in values[
        "tolerations"
    ]
    assert values["controller"]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert crd.urn in controller.dependencies


FREE_FORM = {"nodeSelector", "affinity", "podLabels", "podAnnotations", "additionalLabels", "additionalAnnotations"}
"""Values the chart passes through as they are: any keys go."""


def unknown_keys(values: Any, reference_values: Any, path: str = "") -> list[str]:
    if not isinstance(values, dict):
        return []
    found = []
    for key, value in values.items():
        if not isinstance(reference_values, dict) or key not in reference_values:
            found.append(f"{path}{key}")
        elif key not in FREE_FORM and isinstance(reference_values[key], dict) and reference_values[key]:
            found += unknown_keys(value, reference_values[key], f"{path}{key}.")
    return found


def test_every_chart_value_is_a_key_of_the_charts_values_file(created):
    reference_values = yaml.safe_load(reference("karpenter-v1.14.1", "chart-values.yaml").read_text())
    assert unknown_keys(charts(created)["karpenter"].inputs["values"], reference_values) == []


def test_every_pool_waits_for_both_charts(created):
    found = charts(created)
    for kind in ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:karpenter.sh/v1:NodePool"):
        for resource in of(created, kind):
            assert {found["karpenter-crd"].urn, found["karpenter"].urn} <= set(resource.dependencies), resource.name


def test_the_controller_waits_for_the_system_lane(created):
    """A component dependency becomes a dependency on the component's children: the managed node group."""
    lane = only(created, "eks:index:ManagedNodeGroup", "rack-system").urn
    assert lane in charts(created)["karpenter"].dependencies


def test_karpenter_can_be_installed_into_an_existing_cluster():
    run = run_rack(rack_config(karpenter_install=True))
    assert not of(run, "eks:index:Cluster")
    values = charts(run)["karpenter"].inputs["values"]
    assert values["nodeSelector"] == {"kubernetes.io/os": "linux"}  # no system lane of the rack's own here


# ---- outputs --------------------------------------------------------------------------------------------------


def test_the_stack_outputs(created):
    outputs = created.outputs
    assert outputs["clusterName"] == "test-rack"
    assert outputs["interruptionQueueName"] == "test-rack"
    assert outputs["nodeRoleArn"] == "arn:aws:iam::123456789012:role/KarpenterNodeRole-test-rack"
    assert "secret" in outputs["kubeconfig"]
    workload = outputs["lanes"]["workload"]
    assert {k: workload[k] for k in ("kind", "os", "labels", "taints", "gpu", "ami", "arch", "capacityTypes")} == {
        "kind": "nodepool",
        "os": "al2023",
        "labels": {"convox.io/nodepool": "workload"},
        "taints": [],
        "gpu": False,
        "ami": {"alias": "al2023@latest"},
        "arch": ["amd64"],
        "capacityTypes": ["on-demand"],
    }
    # what the fit check needs: the largest type the pool's limits (100 CPUs, 400 GiB) let it launch, and its
    # allocatable
    from mixed_os_racks.facts import instances
    from mixed_os_racks.pack import fit

    largest = instances.instance_type(workload["largestInstanceType"])
    assert largest is not None and largest.vcpus <= 100 and fit.memory_capacity_mib(largest) <= 400 * 1024
    allocatable = fit.allocatable(largest, 20)
    assert workload["allocatable"] == {
        "cpu": f"{allocatable.cpu_m}m",
        "memory": f"{allocatable.memory_mib}Mi",
        "ephemeral-storage": f"{allocatable.ephemeral_mib}Mi",
    }
    assert workload["maxGpusPerNode"] == 0  # no GPU or accelerator instance in a pool that is no GPU lane
    assert outputs["lanes"]["rack-system"]["taints"] == [
        {"key": "convox.io/system-node", "value": "true", "effect": "NoSchedule"}
    ]
    assert outputs["lanes"]["gpu"]["gpu"] is True


def test_existing_mode_outputs():
    run = run_rack(stack_config("dev"), stack="dev")
    assert run.outputs["endpoint"] == "https://dev-rack.eks.offline.invalid"
    assert run.outputs["nodeRoleArn"] == "arn:aws:iam::123456789012:role/KarpenterNodeRole-dev-rack"


def test_a_pinned_lane_shows_its_ami_and_its_age():
    run = run_rack(stack_config("prod"), stack="prod")
    assert run.outputs["lanes"]["gpu"]["ami"] == {
        "id": "ami-0a1b2c3d4e5f60718",
        "name": "amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115",
        "created": "2026-11-15T08:12:40.000Z",
    }
    assert run.outputs["lanes"]["rack-ng-1"]["ami"] == {"amiType": "AL2023_x86_64_NVIDIA"}


# ---- the seeds' switches and the mode rules --------------------------------------------------------------------


@pytest.mark.parametrize(
    "values, expected",
    [
        (
            {"karpenter_enabled": False},
            "rack:karpenter_enabled: karpenter_enabled=false is not possible: every lane of this rack",
        ),
        (
            {**CREATE, "karpenter_auth_mode": False},
            "rack:karpenter_auth_mode: karpenter_auth_mode=false is not possible here",
        ),
        ({"vpc_id": "vpc-0a1b2c3d4e5f60718"}, "rack:vpc_id: vpc_id is for cluster_mode: create"),
        (
            {"cluster_mode": "create", "vpc_id": "vpc-0a1b2c3d4e5f60718"},
            "rack:private_subnets_ids: cluster_mode: create needs private_subnets_ids",
        ),
        ({**CREATE, "k8s_version": "1.34.1"}, "rack:k8s_version: invalid k8s_version '1.34.1'"),
        # Karpenter v1's compatibility matrix starts at Kubernetes 1.29
        (
            {**CREATE, "k8s_version": "1.3"},
            "rack:k8s_version: k8s_version '1.3' is older than Karpenter supports (1.30 or later)",
        ),
        ({**CREATE, "k8s_version": "1.28"}, "rack:k8s_version: k8s_version '1.28' is older than Karpenter supports"),
        (
            {**CREATE, "eks_api_server_public_access_cidrs": "10.0.0.1/8"},
            "rack:eks_api_server_public_access_cidrs: invalid CIDR '10.0.0.1/8'",
        ),
        ({**CREATE, "private_subnets_ids": "subnet-xyz"}, "rack:private_subnets_ids: invalid subnet id 'subnet-xyz'"),
        ({**CREATE, "node_type": "t3"}, "rack:node_type: invalid node type 't3'"),
        ({"cluster_mode": "replace"}, "rack:cluster_mode: input should be 'existing' or 'create'"),
        ({"build_node_type": "c7i.large"}, "rack:build_node_type: build_node_type needs build_node_enabled: true"),
        # an add-on's setting with the add-on off would never be used: refused, as build_node_type is
        (
            {"nvidia_device_time_slicing_replicas": 4},
            "rack:nvidia_device_time_slicing_replicas: nvidia_device_time_slicing_replicas needs "
            "nvidia_device_plugin_enable: true",
        ),
        (
            {"gpu_observability_chart_version": "4.9.0"},
            (
                "rack:gpu_observability_chart_version: gpu_observability_chart_version needs "
                "gpu_observability_enable: true"
            ),
        ),
        (
            {"gpu_observability_service_monitor": True},
            "rack:gpu_observability_service_monitor: gpu_observability_service_monitor needs gpu_observability_enable: "
            "true",
        ),
        (
            {**CREATE, "private_subnets_ids": ",".join([PRIVATE[0]] * 2)},
            f"rack:private_subnets_ids: duplicate subnet id '{PRIVATE[0]}'",
        ),
        # AWS refuses these tags (its tagging rules: a key of 1-128 characters outside the reserved aws: prefix,
        # a value of at most 256; EC2 takes keys of at most 127), in either mode
        ({"tags": "team=a,oops"}, "rack:tags: invalid tag 'oops', use format: k1=v1,k2=v2"),
        ({"tags": {"aws:owner": "me"}}, "rack:tags: invalid tags: tag key 'aws:owner' uses the reserved prefix 'aws:'"),
        ({**CREATE, "tags": {"": "x"}}, "rack:tags: invalid tags: tag key '' must be 1-127"),
        ({"tags": {"k": "v" * 257}}, "rack:tags: invalid tags: tag 'k' value must be at most 256"),
        # on an instance Karpenter launches: the rack's tags, the pool's 2 and Karpenter's own 5
        (
            {"tags": {f"k{n}": "v" for n in range(44)}},
            "rack:tags: at most 43 tags (AWS takes 50; Karpenter with the pool adds 7)",
        ),
        # the rack sets these itself on what Karpenter launches
        (
            {"tags": {"karpenter.sh/discovery": "other"}},
            "rack:tags: reserved tag key 'karpenter.sh/discovery' is not allowed",
        ),
        ({"tags": {"convox.io/nodepool": "x"}}, "rack:tags: reserved tag key 'convox.io/nodepool' is not allowed"),
    ],
)
def test_mode_rules(values, expected):
    with pytest.raises(ConfigError) as caught:
        parse_rack_config({"cluster_name": "c", **values})
    assert str(caught.value).startswith(expected), str(caught.value)


def test_the_seeds_switches_paste_in():
    spec = parse_rack_config(
        {
            "cluster_name": "c",
            **CREATE,
            "karpenter_enabled": True,
            "karpenter_auth_mode": True,
            "pod_identity_agent_enable": True,
        }
    )
    assert spec.karpenter is not None and spec.pod_identity_agent


def test_the_build_pool_is_the_seeds():
    spec = parse_rack_config(
        {
            "cluster_name": "c",
            "karpenter_node_os": "bottlerocket",
            "build_node_enabled": True,
            "build_node_type": "c7i.2xlarge",
        }
    )
    build = next(p for p in spec.pools if p.name == "build")
    assert (build.os, build.capacity_types, build.cpu_limit, build.memory_limit_gb) == (
        "al2023",
        ["on-demand"],
        32,
        256,
    )
    assert (build.consolidation_policy, build.consolidate_after) == ("WhenEmpty", "60s")
    assert build.node_labels() == {"convox-build": "true", "convox.io/nodepool": "build"}
    assert build.node_taints() == [{"key": "dedicated", "value": "build", "effect": "NoSchedule"}]
    assert (build.instance_types, build.instance_families, build.instance_sizes) == (["c7i.2xlarge"], [], [])


# ---- the three example stacks: the pack sees nothing to refuse -----------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_example_stacks_pass_the_pack(stack):
    with start_pack() as pack:
        found = judge(
            pack,
            run_rack(stack_config(stack), stack=stack),
            json.loads((REPO / "policies" / "config.json").read_text()),
        )
    assert [v for v in found if v["level"] == "mandatory"] == []


def test_the_racks_tags_reach_every_lane():
    """``rack:tags`` go on every AWS resource the rack makes, as the seeds' ``tags`` do: an EC2NodeClass's
    ``spec.tags`` go on the instances, volumes and interfaces Karpenter launches for it (Karpenter
    docs, NodeClasses, ``spec.tags``); a node group's on the group, its launch template and instances.
    A group's own tags win over the rack's."""
    run = run_rack(
        rack_config(
            tags="team=platform,env=prod",
            additional_node_groups_config=[{"id": 1, "type": "m5.large", "tags": {"env": "batch"}}],
        )
    )
    node_class = only(run, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "rack-workload-nodeclass")
    assert node_class.inputs["spec"]["tags"] == {
        "team": "platform",
        "env": "prod",
        "karpenter.sh/discovery": "test-rack",
        "convox.io/nodepool": "workload",
    }
    group = only(run, "aws:eks/nodeGroup:NodeGroup", "rack-ng-1")
    assert {k: group.inputs["tags"][k] for k in ("team", "env", "rack")} == {
        "team": "platform",
        "env": "batch",
        "rack": "test-rack",
    }


@pytest.mark.parametrize(
    "tags, expected",
    [
        # the EC2NodeClass CRD's CEL rules refuse the keys Karpenter sets itself
        ({"karpenter.sh/nodepool": "x"}, "rack:tags: tag key 'karpenter.sh/nodepool' is Karpenter's own"),
        (
            {"kubernetes.io/cluster/other": "owned"},
            "rack:tags: tag key 'kubernetes.io/cluster/other' is Karpenter's own",
        ),
        ({"eks:eks-cluster-name": "x"}, "rack:tags: tag key 'eks:eks-cluster-name' is Karpenter's own"),
        ({"rack": "mine"}, "rack:tags: reserved tag key 'rack' is not allowed"),
    ],
)
def test_tags_the_lanes_would_refuse_are_refused_up_front(tags, expected):
    with pytest.raises(ConfigError) as caught:
        parse_rack_config({"cluster_name": "c", "tags": tags})
    assert str(caught.value).startswith(expected), str(caught.value)


def test_a_group_full_of_tags_leaves_no_room_for_the_racks():
    groups = [{"id": 1, "type": "m5.large", "tags": {f"g{n}": "v" for n in range(46)}}]
    with pytest.raises(ConfigError) as caught:
        parse_rack_config({"cluster_name": "c", "tags": "team=platform", "additional_node_groups_config": groups})
    assert (
        str(caught.value)
        == "rack:tags: node group 'rack-ng-1' with the rack's tags: at most 46 tags (AWS takes 50; the rack adds 4)"
    )


def test_a_long_cluster_name_gives_one_node_role_name_everywhere():
    """IAM role names stop at 64 characters: ``KarpenterNodeRole-<cluster>`` for a 60-character cluster
    name is shortened (with a hash) the same way for the pools, the role Karpenter's install creates
    and the exported ARN."""
    name = "c" * 60
    for values in ({}, {"karpenter_install": True}):
        run = run_rack(rack_config(cluster_name=name, **values))
        roles = {r.inputs["spec"]["role"] for r in of(run, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")}
        (role,) = roles
        assert len(role) <= 64 and role.startswith("KarpenterNodeRole-ccc")
        assert run.outputs["nodeRoleArn"].endswith(f":role/{role}")
