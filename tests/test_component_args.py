"""One convention: every component takes ``(name, args, opts)`` with typed args, and a missing,
unknown or wrongly typed argument fails with the component, the argument and what it expected."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Callable

import pulumi
import pytest

from mixed_os_racks import (
    ConfigError,
    ArgumentError,
    ClusterRef,
    GpuObservability,
    KarpenterPool,
    NodeGroup,
    NodeGroupSpec,
    MetricsServer,
    NvidiaDevicePlugin,
    PoolSpec,
    Rack,
    parse_rack_config,
)
from mixed_os_racks.offline import run_program


def refused(build: Callable[[], Any]) -> str:
    with pytest.raises(ArgumentError) as caught:
        run_program(build, {"aws:region": "us-east-1"})
    return str(caught.value)


def cluster() -> ClusterRef:
    return ClusterRef.existing("c", "c")


def test_missing_required_arguments_are_named():
    assert refused(lambda: KarpenterPool("x", {})) == (
        "KarpenterPool 'x': pool: required (expected PoolSpec)\nKarpenterPool 'x': cluster: required (expected "
        "ClusterRef)"
    )
    assert refused(lambda: KarpenterPool("x", {"pool": PoolSpec(name="x")})) == (
        "KarpenterPool 'x': cluster: required (expected ClusterRef)"
    )
    assert (
        refused(lambda: NodeGroup("g", {"cluster": cluster()}))
        == "NodeGroup 'g': group: required (expected NodeGroupSpec)"
    )
    assert (
        refused(lambda: NvidiaDevicePlugin("p", {}))
        == "NvidiaDevicePlugin 'p': cluster: required (expected ClusterRef)"
    )
    assert refused(lambda: Rack("r", {})) == "Rack 'r': spec: required (expected RackSpec)"


def test_every_problem_is_reported_at_once_with_its_property_path():
    # as pulumi-eks collects every {property path, reason} before it fails: unknown, missing and wrong
    with pytest.raises(ArgumentError) as caught:
        run_program(
            lambda: NvidiaDevicePlugin("p", {"time_slicing_replicas": "4", "replica": 2}), {"aws:region": "us-east-1"}
        )
    assert [path for path, _ in caught.value.problems] == ["replica", "cluster", "time_slicing_replicas"]
    assert caught.value.problems[0][1].startswith("unknown argument (expected one of: cluster, time_slicing_replicas")
    assert str(caught.value).splitlines()[1] == "NvidiaDevicePlugin 'p': cluster: required (expected ClusterRef)"


def test_wrong_types_say_what_was_expected_and_what_came():
    assert refused(lambda: NvidiaDevicePlugin("p", {"cluster": cluster(), "time_slicing_replicas": "4"})) == (
        "NvidiaDevicePlugin 'p': time_slicing_replicas: expected int, got str '4'"
    )
    assert refused(lambda: NvidiaDevicePlugin("p", {"cluster": cluster(), "time_slicing_replicas": True})) == (
        "NvidiaDevicePlugin 'p': time_slicing_replicas: expected int, got bool True"
    )
    assert refused(lambda: GpuObservability("m", {"cluster": cluster(), "service_monitor": "yes"})) == (
        "GpuObservability 'm': service_monitor: expected bool, got str 'yes'"
    )
    assert refused(lambda: KarpenterPool("x", {"pool": ["x"], "cluster": cluster()})) == (
        "KarpenterPool 'x': pool: expected PoolSpec, got list ['x']"
    )
    assert refused(lambda: KarpenterPool("x", {"pool": PoolSpec(name="x"), "cluster": "prod-rack"})) == (
        "KarpenterPool 'x': cluster: expected ClusterRef, got str 'prod-rack'"
    )
    assert refused(
        lambda: NodeGroup("g", {"group": NodeGroupSpec(instance_type="m5.large"), "cluster": cluster(), "node_role": 7})
    ) == ("NodeGroup 'g': node_role: expected Role or str (or an Output), got int 7")


def test_unknown_arguments_and_non_mappings_are_refused():
    assert refused(lambda: NvidiaDevicePlugin("p", {"cluster": cluster(), "replicas": 4})) == (
        "NvidiaDevicePlugin 'p': replicas: unknown argument (expected one of: cluster, time_slicing_replicas, version, "
        "namespace)"
    )
    assert refused(lambda: Rack("r", ["spec"])) == "Rack 'r': args: expected RackArgs (a mapping), got list"  # type: ignore[arg-type]


def test_values_are_checked_too():
    assert refused(lambda: NvidiaDevicePlugin("p", {"cluster": cluster(), "time_slicing_replicas": 0})) == (
        "NvidiaDevicePlugin 'p': time_slicing_replicas: invalid time_slicing_replicas '0' (must be 1 or more)"
    )
    assert refused(lambda: GpuObservability("m", {"cluster": cluster(), "version": "latest"})) == (
        "GpuObservability 'm': version: invalid version 'latest' (must be a chart version like 4.8.2)"
    )
    assert refused(
        lambda: NodeGroup("g", {"group": NodeGroupSpec(instance_type="m5.large", name="other"), "cluster": cluster()})
    ) == ("NodeGroup 'g': group.name: 'other' must be the component's name or unset")


def test_outputs_arrive_as_awaitable_outputs():
    """An ``Output`` passes the type check as the annotation's ``pulumi.Input`` allows."""

    def program() -> None:
        role_arn = pulumi.Output.from_input("arn:aws:iam::123456789012:role/nodes")
        group = NodeGroup(
            "g", {"group": NodeGroupSpec(instance_type="m5.large"), "cluster": cluster(), "node_role": role_arn}
        )
        pulumi.export("role", group.role_arn)

    run = run_program(program, {"aws:region": "us-east-1"})
    assert run.outputs["role"] == "arn:aws:iam::123456789012:role/nodes"
    assert not [r for r in run.resources if r.type == "aws:iam/role:Role"]  # no role of its own


def test_an_output_is_checked_once_its_value_is_known():
    """``args.checked``: an Output (or awaitable) argument is checked as a plain one is, when it resolves,
    and a list holding Outputs stays a list, each item checked when known."""

    def program(role: Any = None, subnets: Any = None) -> Callable[[], None]:
        def body() -> None:
            args: dict[str, Any] = {"pool": PoolSpec(name="ml"), "cluster": cluster()}
            if role is not None:
                args["node_role"] = role()
            if subnets is not None:
                args["subnet_ids"] = subnets()
            KarpenterPool("ml", args)  # type: ignore[arg-type]

        return body

    assert refused(program(role=lambda: pulumi.Output.from_input(123))) == (
        "KarpenterPool 'ml': node_role: resolved to int 123, expected Role or str"
    )
    assert refused(program(role=lambda: pulumi.Output.from_input("arn:aws:iam::123456789012:role/"))) == (
        "KarpenterPool 'ml': node_role: invalid role ARN 'arn:aws:iam::123456789012:role/' "
        "(like arn:aws:iam::123456789012:role/nodes)"
    )
    assert refused(
        program(subnets=lambda: [pulumi.Output.from_input("subnet-0a1b2c3d"), pulumi.Output.from_input(None)])
    ) == ("KarpenterPool 'ml': subnet_ids[1]: resolved to NoneType None, expected str")
    # a list of subnet ids known or not is taken as it is, one selector term per id
    run = run_program(
        program(subnets=lambda: [pulumi.Output.from_input("subnet-0a1b2c3d"), "subnet-0b2c3d4e"]),
        {"aws:region": "us-east-1"},
    )
    [node_class] = [r for r in run.resources if r.type.endswith("EC2NodeClass")]
    assert node_class.inputs["spec"]["subnetSelectorTerms"] == [{"id": "subnet-0a1b2c3d"}, {"id": "subnet-0b2c3d4e"}]


@pytest.mark.parametrize(
    "args, message",
    [
        ({"subnet_ids": []}, "subnet_ids: no subnet ids (give at least one, or leave the argument out)"),
        (
            {"subnet_ids": ["subnet-0a1b2c3d", "subnet-NOPE"]},
            "subnet_ids: [1]: 'subnet-NOPE' is not a subnet id (subnet- and 8 or 17 hex digits)",
        ),
        ({"subnet_ids": [f"subnet-{n:08x}" for n in range(31)]}, "subnet_ids: 31 subnet ids (at most 30)"),
        (
            {"security_group_ids": ["sg-0a1b2c3d", "sg-0a1b2c3d"]},
            "security_group_ids: a security group id is listed twice",
        ),
        (
            {"node_role": "  "},
            "node_role: '  ' must be an IAM role name: 1-64 of letters, digits and +=,.@_- (or a role ARN)",
        ),
    ],
    ids=["empty", "pattern", "thirty", "twice", "blank-role"],
)
def test_ids_and_roles_are_held_to_what_the_ec2nodeclass_and_iam_take(args, message):
    # the EC2NodeClass CRD (Karpenter v1.14.1): 1-30 subnet and security group terms (ids of the CRD's shape,
    # held to EC2's: 8 or 17 hex digits), a role that is not empty; IAM role names are 1-64 of [A-Za-z0-9+=,.@_-]
    assert (
        refused(lambda: KarpenterPool("ml", {"pool": PoolSpec(name="ml"), "cluster": cluster(), **args}))
        == f"KarpenterPool 'ml': {message}"
    )


def test_a_node_groups_role_is_an_arn_and_may_be_awaited():
    # pulumi-eks passes node_role_arn to EKS's CreateNodegroup, whose nodeRole is the role's ARN
    assert refused(
        lambda: NodeGroup(
            "g", {"group": NodeGroupSpec(instance_type="m5.large"), "cluster": cluster(), "node_role": "nodes"}
        )
    ) == ("NodeGroup 'g': node_role: invalid role ARN 'nodes' (like arn:aws:iam::123456789012:role/nodes)")

    async def role() -> str:
        return "arn:aws:iam::123456789012:role/nodes"

    def program() -> None:
        group = NodeGroup(
            "g", {"group": NodeGroupSpec(instance_type="m5.large"), "cluster": cluster(), "node_role": role()}
        )
        pulumi.export("role", group.role_arn)

    assert run_program(program, {"aws:region": "us-east-1"}).outputs["role"] == "arn:aws:iam::123456789012:role/nodes"


def test_every_component_registers_its_outputs():
    spec = parse_rack_config(
        {
            "cluster_name": "c",
            "nvidia_device_plugin_enable": True,
            "additional_node_groups_config": [{"id": 1, "type": "g5.xlarge"}],
        }
    )

    def program() -> None:
        Rack("rack", {"spec": spec})

    run = run_program(program, {"aws:region": "us-east-1"})
    components = [r for r in run.resources if not r.custom and r.type.startswith("rack:")]
    assert {r.type for r in components} == {
        "rack:index:Rack",
        "rack:index:KarpenterPool",
        "rack:index:NodeGroup",
        "rack:index:NvidiaDevicePlugin",
    }
    registered = {r.name: run.component_outputs.get(r.urn) for r in components}
    assert all(registered.values()), registered  # no component registers empty outputs
    assert registered["rack-workload"] == {
        "nodeClassName": "workload",
        "nodePoolName": "workload",
        "labels": {"convox.io/nodepool": "workload"},
        "taints": [],
        "ami": {"alias": "al2023@latest"},
    }
    assert registered["rack-ng-1"]["labels"] == {
        "convox.io/label": "custom",
        "convox.io/gpu-vendor": "nvidia",
        "k8s.amazonaws.com/accelerator": "nvidia-a10g",
    }
    assert registered["rack-ng-1"]["roleArn"] == "<computed>"  # the group's own role, created by the preview
    assert registered["rack-nvidia-device-plugin"] == {
        "releaseName": "rack-nvidia-device-plugin",
        "namespace": "kube-system",
        "chartVersion": "0.20.0",
    }
    assert (registered["rack"]["nodePools"], registered["rack"]["nodeGroups"]) == (["workload"], ["rack-ng-1"])
    assert registered["rack"]["clusterName"] == "c" and set(registered["rack"]["lanes"]) == {"workload", "rack-ng-1"}


@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda: ClusterRef.existing("a", None),
            "ClusterRef.existing 'a': cluster_name: expected str (an EKS cluster name), got NoneType None",
        ),
        (
            lambda: ClusterRef.existing("a", "bad name!"),
            "ClusterRef.existing 'a': cluster_name: invalid cluster name 'bad name!' "
            "(must be 1-100 letters, digits, '-' or '_', starting with a letter or digit "
            "(the EKS cluster name rule))",
        ),
        (
            lambda: ClusterRef.existing("", "c"),
            "ClusterRef.existing '': name: expected a non-empty str (it names the Kubernetes "
            "provider <name>-k8s), got ''",
        ),
        (
            lambda: ClusterRef.created("lab", "c"),
            "ClusterRef.created 'lab': cluster: expected a pulumi_eks Cluster, got str",
        ),
        (
            lambda: ClusterRef.existing("a", "c", opts={"parent": None}),
            "ClusterRef.existing 'a': opts: expected pulumi.ResourceOptions or None, got dict",
        ),
    ],
    ids=["none", "name", "empty", "created", "opts"],
)
def test_a_cluster_ref_names_what_is_wrong_with_its_arguments(build, message):
    assert refused(build) == message


def test_a_node_group_is_named_as_eks_names_node_groups():
    # EKS's nodegroupName: 1-63 letters, digits, '-' and '_', starting with a letter or digit; pulumi-aws
    # auto-names the group <name>-<7 hex digits> (its nodeGroupName AutoName), so the name has 55
    assert refused(
        lambda: NodeGroup("Bad Name!", {"group": NodeGroupSpec(instance_type="m5.large"), "cluster": cluster()})
    ) == (
        "NodeGroup 'Bad Name!': name: invalid name 'Bad Name!' (must be 1-55 letters, digits, '-' or '_', starting "
        "with "
        "a letter or digit (EKS names node groups so, at most 63 characters with the 8 Pulumi adds)): it names the EKS "
        "node group"
    )
    with pytest.raises(ConfigError, match=r"^NodeGroupSpec\.name: invalid name 'a/b' \(must be 1-55"):
        NodeGroupSpec(instance_type="m5.large", name="a/b")
    with pytest.raises(ConfigError, match=r"^NodeGroupSpec\.name: invalid name 'n{56}' \(must be 1-55"):
        NodeGroupSpec(instance_type="m5.large", name="n" * 56)


def test_two_components_that_would_own_one_cluster_object_are_refused():
    # the second create of a NodePool, an EC2NodeClass, a Deployment or a Helm release of the same name
    # in one cluster fails at apply ("already exists"); the components refuse it when they are built
    spec = PoolSpec(name="ml")
    assert refused(
        lambda: [KarpenterPool(n, {"pool": spec, "cluster": ClusterRef.existing(n, "c")}) for n in ("a", "b")]
    ) == (
        "KarpenterPool 'b': cluster: KarpenterPool 'a' already puts NodePool ml in this cluster, and two components "
        "would own one object (give the pool another name)"
    )

    def two_plugins() -> None:
        shared = cluster()
        for n in ("p", "q"):
            NvidiaDevicePlugin(n, {"cluster": shared})

    assert refused(two_plugins) == (
        "NvidiaDevicePlugin 'q': cluster: NvidiaDevicePlugin 'p' already puts nvidia-device-plugin "
        "in this cluster, and two components would own one object (one per cluster: use the one "
        "there is)"
    )
    # one pool per cluster: the same spec in two clusters is fine
    run_program(
        lambda: [KarpenterPool(n, {"pool": spec, "cluster": ClusterRef.existing(n, n)}) for n in ("a", "b")],
        {"aws:region": "us-east-1"},
    )


def test_clusters_of_one_name_in_two_regions_or_two_unit_tests_are_not_one():
    # an EKS cluster name is unique in one account and region, which the AWS provider fixes: refs read through a
    # parent with an AWS provider of its own are other clusters; through the same provider, one; each set_mocks run
    # (a unit test) is a run of its own
    import pulumi_aws as aws

    def two_regions() -> None:
        for region in ("us-east-1", "eu-west-1"):
            provider = aws.Provider(f"aws-{region}", region=region)
            parent = pulumi.ComponentResource(
                "team:index:Region", region, opts=pulumi.ResourceOptions(providers={"aws": provider})
            )
            ref = ClusterRef.existing(f"prod-{region}", "prod", opts=pulumi.ResourceOptions(parent=parent))
            MetricsServer(f"metrics-{region}", {"cluster": ref})

    run_program(two_regions, {"aws:region": "us-east-1"})

    def one_region() -> None:
        for region in ("us-east-1", "eu-west-1"):
            parent = pulumi.ComponentResource("team:index:Region", region)  # the stack's own provider, both
            MetricsServer(
                f"metrics-{region}",
                {"cluster": ClusterRef.existing(f"prod-{region}", "prod", opts=pulumi.ResourceOptions(parent=parent))},
            )

    assert refused(one_region).startswith(
        "MetricsServer 'metrics-eu-west-1': cluster: MetricsServer 'metrics-us-east-1' already puts"
    )

    unit_tests = (  # Pulumi's unit-test pattern, in a process of its own (set_mocks changes the process)
        "import pulumi\n"
        "from mixed_os_racks import ClusterRef, MetricsServer\n"
        "class Mocks(pulumi.runtime.Mocks):\n"
        "    def new_resource(self, args): return [args.name + '_id', args.inputs]\n"
        "    def call(self, args): return {}\n"
        "for test in ('one', 'two'):\n"
        "    pulumi.runtime.set_mocks(Mocks(), preview=False)\n"
        "    MetricsServer('metrics-' + test, {'cluster': ClusterRef.existing('ref-' + test, 'prod-rack')})\n"
        "print('both built')\n"
    )
    done = subprocess.run([sys.executable, "-c", unit_tests], capture_output=True, text=True, timeout=60)
    assert done.stdout == "both built\n", done.stderr


@pytest.mark.parametrize(
    "component, extra, said",
    [
        # an argument that means the same in every component is held to the API that takes it
        (
            "KarpenterController",
            {"node_role_name": "arn:aws:iam::123456789012:role/x"},
            "node_role_name: invalid role name",
        ),
        ("KarpenterController", {"namespace": "UPPER"}, "namespace: invalid namespace 'UPPER'"),
        (
            "KarpenterController",
            {"tags": {"aws:team": "a"}},
            "tags: invalid tags: tag key 'aws:team' uses the reserved prefix",
        ),
        (
            "ClusterAutoscaler",
            {"tags": {"team": "x" * 300}},
            "tags: invalid tags: tag 'team' value must be at most 256",
        ),
        ("ClusterAutoscaler", {"node_selector": {"": "x"}}, "node_selector: label '': 'x'"),
        ("MetricsServer", {"namespace": "Kube_System"}, "namespace: invalid namespace 'Kube_System'"),
        (
            "MetricsServer",
            {"tolerations": [{"key": "a", "effect": "Bogus"}]},
            "tolerations: invalid toleration [0].effect",
        ),
        (
            "KarpenterController",
            {"tolerations": [{"key": "a", "operator": "Exists", "value": "b"}]},
            "tolerations: invalid toleration [0].value: 'b' with operator Exists",
        ),
        (
            "KarpenterController",
            {"tolerations": [{"key": "a", "tolerationSeconds": "soon", "effect": "NoExecute"}]},
            "tolerations: invalid toleration [0].tolerationSeconds",
        ),
        ("NvidiaDevicePlugin", {"namespace": ""}, "namespace: invalid namespace ''"),
        ("GpuObservability", {"namespace": "a" * 64}, "namespace: invalid namespace"),
    ],
)
def test_common_arguments_are_checked_in_every_component(component, extra, said):
    import mixed_os_racks

    kind = getattr(mixed_os_racks, component)
    message = refused(lambda: kind("x", {"cluster": cluster(), **extra}))
    assert message.startswith(f"{component} 'x': {said}"), message


def test_a_node_groups_rack_is_a_tag_value():
    spec = NodeGroupSpec(instance_type="m6i.large")
    message = refused(lambda: NodeGroup("ng", {"group": spec, "cluster": cluster(), "rack": "a,b"}))
    assert message.startswith("NodeGroup 'ng': rack: tag 'rack' value 'a,b'"), message


def test_tolerations_kubernetes_takes_pass():
    import mixed_os_racks

    ok = [
        {"operator": "Exists"},
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        {"key": "dedicated-node", "value": "gpu", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    ]
    run = run_program(
        lambda: mixed_os_racks.MetricsServer("x", {"cluster": cluster(), "tolerations": ok}),
        {"aws:region": "us-east-1"},
    )
    chart = next(r for r in run.resources if r.type == "kubernetes:helm.sh/v4:Chart")
    assert chart.inputs["values"]["tolerations"] == ok  # handed to the chart as written, none dropped


@pytest.mark.parametrize(
    "name, opts, said",
    [
        ("", None, "name: expected a non-empty str (it names the component's resources), got ''"),
        (None, None, "name: expected a non-empty str (it names the component's resources), got None"),
        (5, None, "name: expected a non-empty str (it names the component's resources), got 5"),
        ("x", {"parent": None}, "opts: expected pulumi.ResourceOptions or None, got dict"),
    ],
)
def test_a_components_name_and_options_are_checked_before_pulumi_reads_them(name, opts, said):
    # Pulumi's own check is a bare TypeError ("Missing resource name argument (for URN creation)")
    message = refused(
        lambda: KarpenterPool(
            name, {"pool": PoolSpec(name="ml", instance_families=["m6i"]), "cluster": cluster()}, opts
        )
    )
    assert message.endswith(said), message


def test_a_failed_run_leaves_no_noise_for_the_next(caplog):
    # the Outputs a failed program leaves behind held its error; collected later, asyncio logged each as a
    # "Future exception was never retrieved" traceback, some 800 lines on stderr
    import gc

    gc.collect()  # what earlier tests left behind is theirs: collect it before this test's runs are judged
    caplog.clear()

    def body() -> None:
        KarpenterPool(
            "ml",
            {
                "pool": PoolSpec(name="ml", instance_families=["m6i"]),
                "cluster": cluster(),
                "node_role": pulumi.Output.from_input(5),
            },
        )

    for _ in range(2):
        assert "node_role: resolved to int 5" in refused(body)
        gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]  # asyncio logs them


def test_an_argument_error_is_one_line_per_problem_whatever_its_value_holds():
    message = refused(
        lambda: KarpenterPool(
            "ml",
            {
                "pool": PoolSpec(name="ml", instance_families=["m6i"]),
                "cluster": cluster(),
                "node_role": "KarpenterNodeRole-c\nerror: a line of its own",
            },
        )
    )
    assert message.count("\n") == 0 and "KarpenterNodeRole-c\\nerror" in message
