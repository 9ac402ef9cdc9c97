"""Every error a component, a spec or the command raises reads as the user sees it: each message below is
met through the public interface (the stack config as the command reads it, a spec or component built by a
program, ``place``, the ``mixed-os-racks`` command) with the words and the exit code a user gets."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pulumi
import pulumi_eks as eks
import pytest

from mixed_os_racks import (
    ClusterAutoscaler,
    ClusterRef,
    ConfigError,
    KarpenterController,
    MetricsServer,
    NodeGroup,
    NodeGroupArgs,
    NodeGroupSpec,
    PoolSpec,
    ServiceSpec,
    parse_services,
    place,
)
from mixed_os_racks.cli import main
from mixed_os_racks.errors import ArgumentError
from mixed_os_racks.offline import Catalog, run_program
from mixed_os_racks.offline.cloud import ProviderError
from mixed_os_racks.placement import PlacementError
from mixed_os_racks.spec.base import SpecError
from mixed_os_racks.spec.rack import ClusterSpec, GpuObservabilitySpec, KarpenterSpec, RackSpec

from conftest import GPU_AMI, REPO
from test_validators import error as rack_error, pool_error

CREATE = {
    "cluster_mode": "create",
    "vpc_id": "vpc-0a1b2c3d4e5f60718",
    "private_subnets_ids": "subnet-0a1b2c3d4e5f60718,subnet-0a1b2c3d4e5f60719",
}
"""A cluster the rack creates, in a VPC the user brings."""
REGION = {"aws:region": "us-east-1"}


def raised(build: Callable[[], Any], kind: type[BaseException] = Exception) -> str:
    with pytest.raises(kind) as caught:
        build()
    return str(caught.value)


# ---- the stack config: the rack and the cluster it creates ---------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "said"),
    [
        (
            {**CREATE, "vpc_id": "vpc-XYZ"},
            "rack:vpc_id: invalid vpc_id 'vpc-XYZ' (must look like vpc-0123456789abcdef0)",
        ),
        (
            {**CREATE, "eks_api_server_public_access_cidrs": ""},
            "rack:eks_api_server_public_access_cidrs: at least one CIDR (the public endpoint is on)",
        ),
        (
            {**CREATE, "public_subnets_ids": "subnet-0a1b2c3d4e5f60718,subnet-0a1b2c3d4e5f60720"},
            "rack:public_subnets_ids: a subnet cannot be both private and public",
        ),
        (
            {**CREATE, "private_subnets_ids": ",".join(f"subnet-0a1b2c3d4e5f607{i:02d}" for i in range(31))},
            "rack:private_subnets_ids: at most 30 subnets (Karpenter's EC2NodeClass selects them by id, one term each; "
            "got 31)",
        ),
        ({**CREATE, "node_type": "t3"}, "rack:node_type: invalid node type 't3' (must look like t3.large)"),
        (
            {**CREATE, "node_type": "g5.xlarge"},
            "rack:node_type: node type 'g5.xlarge' is accelerated (GPU, Neuron): the system lane would be tainted and "
            "labelled as "
            "a GPU lane, which the rack's add-ons (Karpenter, CoreDNS, metrics-server) do not tolerate, and would pay "
            "for "
            "accelerators nothing uses (use a general-purpose type, e.g. t3.large)",
        ),
        (
            {**CREATE, "node_type": "t3.nano"},
            "rack:node_type: node type 't3.nano' is too small for the system lane: a system node must hold a Karpenter "
            "controller "
            "(1 CPU, 1Gi), CoreDNS (2 x 100m, 70Mi) and the node's DaemonSets, 1450m CPU and 1420Mi, and a t3.nano (2 "
            "vCPU, "
            "0.5 GiB) has about 1930m and 74Mi allocatable (use a larger type, e.g. t3.large)",
        ),
        (
            {"gpu_observability_enable": True, "nvidia_device_plugin_enable": False},
            "rack:gpu_observability_enable: gpu_observability_enable requires nvidia_device_plugin_enable "
            "(dcgm-exporter reads "
            "the GPUs the device plugin exposes)",
        ),
    ],
)
def test_the_racks_own_keys(values, said):
    assert rack_error(**values) == said


def test_a_cluster_autoscaler_for_a_version_it_has_no_release_for(monkeypatch):
    # every version EKS still creates has a release today: a table without 1.34's stands for a version to come
    from mixed_os_racks.facts import upstream

    monkeypatch.setattr(
        upstream,
        "CLUSTER_AUTOSCALER_RELEASES",
        {k: v for k, v in upstream.CLUSTER_AUTOSCALER_RELEASES.items() if k != "1.34"},
    )
    message = rack_error(
        **CREATE,
        k8s_version="1.34",
        cluster_autoscaler_enable=True,
        additional_node_groups_config=[{"type": "m6i.large", "min_size": 1, "max_size": 3}],
    )
    assert message.startswith(
        "rack:cluster_autoscaler_enable: no Cluster Autoscaler release is known for Kubernetes 1.34 (the rack knows "
    )
    assert message.endswith("): set k8s_version to one of them, or cluster_autoscaler_enable: false")


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        (
            {"instance_families": "g5,9zz"},
            "instance_families: karpenter nodepool 'gpu': instance family '9zz' must be an EC2 "
            "instance family like g5, m7g or c7i-flex",
        ),
        (
            {"instance_sizes": "xlarge,Huge"},
            "instance_sizes[1]: karpenter nodepool 'gpu': instance size 'Huge' must be an EC2 "
            "instance size like large, xlarge, 2xlarge or metal",
        ),
        ({"arch": ""}, "arch: karpenter nodepool 'gpu': arch must not be empty"),
        ({"cpu_limit": 0}, "cpu_limit: karpenter nodepool 'gpu': cpu_limit must be positive (got '0')"),
        (
            {"memory_limit_gb": 0},
            "memory_limit_gb: karpenter nodepool 'gpu': memory_limit_gb must be positive (got '0')",
        ),
        ({"weight": 101}, "weight: karpenter nodepool 'gpu': weight must be 1-100 (got '101')"),
        (
            {"volume_type": "gp2", "volume_throughput": 200},
            "volume_throughput: karpenter nodepool 'gpu': volume_throughput requires volume_type gp3 (currently gp2)",
        ),
        (
            {"labels": ",".join(f"l{i}=v" for i in range(100))},
            "labels: karpenter nodepool 'gpu': at most 100 node labels (the NodePool's limit, the rack's own included)",
        ),
        (
            {"taints": "Bad Key!=v:NoSchedule"},
            "taints: karpenter nodepool 'gpu': invalid taint key 'Bad Key!' (must be at most 63 letters, digits, '-', "
            "'_' or '.', "
            "starting and ending with a letter or digit)",
        ),
    ],
)
def test_a_pool_in_the_stack_config(fields, said):
    assert pool_error(**fields) == f"rack:additional_karpenter_nodepools_config[0].{said}"


# ---- specs and components a program builds ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (
            lambda: PoolSpec(name="gpu", capacity_types=[]),
            "PoolSpec.capacity_types: karpenter nodepool 'gpu': capacity_types must not be empty",
        ),
        (
            lambda: PoolSpec(name="gpu", disk=0),
            "PoolSpec.disk: karpenter nodepool 'gpu': disk must be positive (got '0')",
        ),
        (
            lambda: PoolSpec(name="gpu", disk=-5),
            "PoolSpec.disk: karpenter nodepool 'gpu': disk must be positive (got '-5')",
        ),
        (lambda: KarpenterSpec(replicas=11), "KarpenterSpec.replicas: invalid Karpenter replicas '11' (must be 1-10)"),
        (
            lambda: RackSpec(
                cluster_name="c",
                pools=[PoolSpec(name="workload")],
                node_groups=[NodeGroupSpec(instance_type="m6i.large")],
            ),
            "RackSpec.node_groups: every node group of a rack needs its name",
        ),
        (
            lambda: RackSpec(
                cluster_name="c",
                pools=[PoolSpec(name="workload")],
                cluster=ClusterSpec(
                    name="d",
                    vpc_id="vpc-0a1b2c3d4e5f60718",
                    private_subnet_ids=["subnet-0a1b2c3d4e5f60718", "subnet-0a1b2c3d4e5f60719"],
                ),
            ),
            "RackSpec: the cluster to create is named 'd', not 'c'",
        ),
        (
            lambda: RackSpec(
                cluster_name="c", pools=[PoolSpec(name="workload")], gpu_observability=GpuObservabilitySpec()
            ),
            "RackSpec.gpu_observability: gpu_observability requires device_plugin (dcgm-exporter reads the GPUs the "
            "device plugin "
            "exposes)",
        ),
    ],
)
def test_a_spec_a_program_builds(build, said):
    assert raised(build, SpecError) == said


def test_an_output_in_a_spec_built_by_a_program():
    message = raised(lambda: run_program(lambda: PoolSpec(name=pulumi.Output.from_input("gpu")), REGION), SpecError)
    assert message == (
        "PoolSpec.name: a pulumi Output: spec fields take plain values, checked when the spec is built (pass "
        "Outputs to the component arguments that take them)"
    )


def test_a_service_that_autoscales_on_cpu_it_does_not_request():
    message = raised(
        lambda: ServiceSpec(name="infer", image="vllm/vllm-openai:v0.6.4", port=8000, scale={"count": "1-4", "gpu": 1}),
        ConfigError,
    )
    assert message == (
        "Service 'infer': scale.count: range '1-4' autoscales on CPU, which needs scale.cpu (a GPU service "
        "requests no CPU by default)"
    )


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("null", "rack:services: null (no value): give the services, a mapping of service name to its fields"),
        (5, "rack:services: expected a mapping of service name to its fields (got 5)"),
        ([{"name": "web"}], 'rack:services: expected a mapping of service name to its fields (got [{"name": "web"}])'),
    ],
)
def test_the_services_value(value, said):
    assert raised(lambda: parse_services(value, "rack:services"), ConfigError) == said


def test_place_names_an_unknown_gpu_field():
    assert (
        raised(lambda: place(gpu={"count": 1, "vendr": "nvidia"}), PlacementError)
        == "invalid gpu field 'vendr' (expected count and vendor)"
    )


def component_error(build: Callable[[ClusterRef], Any]) -> str:
    return raised(lambda: run_program(lambda: build(ClusterRef.existing("shared", "shared")), REGION), ArgumentError)


def test_the_add_ons_arguments():
    assert (
        component_error(lambda c: MetricsServer("m", {"cluster": c, "replicas": 3}))
        == "MetricsServer 'm': replicas: must be 1 or 2 (got 3)"
    )
    assert (
        component_error(lambda c: KarpenterController("k", {"cluster": c, "replicas": 11}))
        == "KarpenterController 'k': replicas: must be 1-10 (got 11)"
    )
    message = component_error(lambda c: ClusterAutoscaler("ca", {"cluster": c, "kubernetes_version": "1.30"}))
    assert message.startswith(
        "ClusterAutoscaler 'ca': kubernetes_version: no Cluster Autoscaler release is known for "
        "Kubernetes '1.30' (known: "
    )

    def two(c: ClusterRef) -> None:
        ClusterAutoscaler("first", {"cluster": c})
        ClusterAutoscaler("second", {"cluster": c})

    assert component_error(two).startswith(
        "ClusterAutoscaler 'second': cluster: the cluster already has a Cluster "
        "Autoscaler (ClusterAutoscaler 'first'); two would fight over the node groups' sizes"
    )


def test_what_a_created_cluster_does_not_read():
    seen: dict[str, str] = {}

    def program() -> None:
        ref = ClusterRef.created(
            "made", eks.Cluster("made", skip_default_node_group=True), cluster_name="made", version="1.34"
        )
        for attribute in ("eks_cluster", "cluster_role"):
            try:
                getattr(ref, attribute)
            except ValueError as exc:
                seen[attribute] = str(exc)

    run_program(program, REGION)
    assert seen == {
        "eks_cluster": "a created cluster's aws.eks.Cluster is the eks.Cluster's eks_cluster output",
        "cluster_role": "a created cluster's role is pulumi-eks's own; pass the eks.Cluster to pulumi-eks instead",
    }


class NoEncryptionReadCatalog(Catalog):
    """The default catalog in an account where the program's role may not call GetEbsEncryptionByDefault."""

    @property  # type: ignore[override]
    def ebs_encryption_by_default(self) -> bool:
        raise ProviderError(
            "operation error EC2: GetEbsEncryptionByDefault, https response error StatusCode: 403, "
            "api error UnauthorizedOperation: You are not authorized to perform this operation."
        )

    @ebs_encryption_by_default.setter
    def ebs_encryption_by_default(self, value: bool) -> None:
        pass


def test_an_account_whose_encryption_default_cannot_be_read():
    catalog = NoEncryptionReadCatalog(Catalog.load().amis, "no-permission")
    group = NodeGroupSpec(
        instance_type="m6i.large", ami_id=GPU_AMI, label="ml", disk=100
    )  # its snapshot is unencrypted
    with pytest.raises(ConfigError) as caught:
        run_program(
            lambda: NodeGroup("ml", NodeGroupArgs(group=group, cluster=ClusterRef.existing("shared", "shared"))),
            REGION,
            catalog=catalog,
        )
    assert str(caught.value) == (
        "node group 'ml': cannot read EBS encryption by default (operation error EC2: GetEbsEncryptionByDefault, https "
        "response error StatusCode: 403, api error UnauthorizedOperation: You are not authorized to perform this "
        "operation.)"
    )


# ---- the command
# -------------------------------------------------------------------------------------------------------


def command(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err


def test_a_cwd_that_is_no_project(capsys, tmp_path):
    assert command(capsys, "preview", "--stack", "s", "--cwd", str(tmp_path / "nowhere")) == (
        2,
        f"error: --cwd {tmp_path / 'nowhere'}: no such directory\n",
    )
    (tmp_path / "file").write_text("")
    assert command(capsys, "preview", "--stack", "s", "--cwd", str(tmp_path / "file")) == (
        2,
        f"error: --cwd {tmp_path / 'file'}: not a directory (give the project directory, the one with Pulumi.yaml)\n",
    )
    assert command(capsys, "preview", "--stack", "s", "--cwd", str(tmp_path)) == (
        2,
        f"error: --cwd {tmp_path}: no Pulumi.yaml there, so it is not a Pulumi project directory\n",
    )
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    assert command(capsys, "preview", "--stack", "s", "--cwd", str(tmp_path)) == (
        2,
        f"error: --cwd {tmp_path}: no __main__.py there (the Python program to preview)\n",
    )


def test_a_json_output_that_cannot_be_written(capsys, tmp_path, monkeypatch):
    assert command(capsys, "preview", "--stack", "dev", "--cwd", str(REPO), "--json", str(tmp_path)) == (
        2,
        f"error: --json {tmp_path}: is a directory; give a file name\n",
    )
    # the system refuses (as it does a user without write permission; the suite may run as root, whom it never refuses)
    monkeypatch.setattr("mixed_os_racks.cli.common.os.access", lambda path, mode: False)
    existing = tmp_path / "out.json"
    existing.write_text("{}")
    assert command(capsys, "preview", "--stack", "dev", "--cwd", str(REPO), "--json", str(existing)) == (
        2,
        f"error: --json {existing}: cannot be written: permission denied\n",
    )
    assert command(capsys, "preview", "--stack", "dev", "--cwd", str(REPO), "--json", str(tmp_path / "new.json")) == (
        2,
        f"error: --json {tmp_path / 'new.json'}: cannot be written: no permission to create files in {tmp_path}\n",
    )


def test_lane_removal_without_a_state(capsys):
    assert command(capsys, "preview", "--stack", "dev", "--cwd", str(REPO), "--allow-lane-removal", "gpu") == (
        2,
        "error: --allow-lane-removal needs --state FILE: without the stack's state there is nothing to remove\n",
    )


def test_pack_init_with_no_directory(capsys):
    assert command(capsys, "pack", "init", " ") == (
        2,
        "error: pack init: the pack's directory is empty (name one, such as policy-pack)\n",
    )
