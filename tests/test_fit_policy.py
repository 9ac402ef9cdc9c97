"""A pod must fit a lane, not only be allowed on it: ``workloads-reach-their-lane``'s fit check,
``gpu-daemonsets-reach-gpu-lanes`` and ``gpu-driver-supports-lane``, through the pack's gRPC server,
from Karpenter pools and from node groups (hand-written, and pulumi-eks ``ManagedNodeGroup`` children
as the CLI sends them); and the components refusing the same pods with the same words.

Upstream facts these tests pin, in our words:

* The EKS AL2023 AMI's nodeadm reserves for the kubelet (amazon-eks-ami ``nodeadm/internal/kubelet/
  config.go``): memory of 11 MiB for every pod the node may run plus 255 MiB, where the pod count is
  the ENI limit (ENIs times one less than the IPv4 addresses per ENI, plus 2); CPU of 6 % of the first
  core, 1 % of the second, 0.5 % of each of the third and fourth, and 0.25 % of every further core;
  1 GiB of ephemeral storage. It evicts below 100 MiB of free memory and 10 % of the root volume.
  Karpenter (v1.14.1) subtracts the same from its estimate of the memory an instance reports:
  EC2's MiB less 7.5 % (rounded up) for the hypervisor, after 64 MiB on arm64. Its generated
  instance-type reference publishes the result: g4dn.xlarge 3920m and 14481Mi, m5.large 1930m and
  6903Mi, t3.large 6837Mi, m6g.large 6844Mi, p4d.24xlarge 95690m and 1082712Mi.
* The scheduler's effective request (kubernetes ``component-helpers/resource/helpers.go``): sum of
  containers and sidecars (restartable init containers); every other init container needs its own
  request plus the sidecars declared before it; the larger per resource; plus ``overhead``.
* EKS's ``ExtendedResourceToleration`` tolerates the taint named after an extended resource a pod
  requests; it does nothing for DRA claims (``resource.k8s.io`` ResourceClaims, GA in 1.34).
* amazon-eks-ami ``doc/usage/g7-ami.md``: G7 needs NVIDIA driver 595 or newer; 595 does not support
  P3, P3dn and G6f; the EKS AMI's default branch is 580.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from typing import Any, Callable, Optional

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mixed_os_racks import ClusterRef, Rack, RackArgs, Service, ServiceArgs, ServiceSpec, load_stack_config, place
from mixed_os_racks.errors import ArgumentError
from mixed_os_racks.offline import costs, run_program
from mixed_os_racks.offline.policyconfig import PolicyPackError
from mixed_os_racks.facts import instances
from mixed_os_racks.pack import fit, workloads
from conftest import GPU_AMI, stack_config
from policy_helpers import (
    eks_node_group,
    judge,
    launch_template,
    managed_node_group,
    messages,
    node_class,
    of,
    start_pack,
    unknown,
)

REACH = "workloads-reach-their-lane"
DAEMONS = "gpu-daemonsets-reach-gpu-lanes"
DRIVER = "gpu-driver-supports-lane"
UNKNOWN_FACTS = "ami-facts-unknown"
GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
NETWORK_KEYS = (
    "rack:cluster_mode",
    "rack:vpc_id",
    "rack:private_subnets_ids",
    "rack:public_subnets_ids",
    "rack:eks_api_server_public_access_cidrs",
    "rack:cluster_admin_arns",
)
"""The prod stack's keys of a cluster it creates: without them, the same lanes in an existing cluster."""


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:
        yield running


def pod(
    select: Optional[dict[str, str]] = None,
    tolerations: Optional[list[dict[str, Any]]] = None,
    requests: Optional[dict[str, Any]] = None,
    limits: Optional[dict[str, Any]] = None,
    **spec: Any,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "busybox:1.36"}
    if requests or limits:
        container["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    body: dict[str, Any] = {"containers": [container], **spec}
    if select:
        body["nodeSelector"] = select
    if tolerations:
        body["tolerations"] = tolerations
    return body


def workload(name: str, spec: dict[str, Any], kind: Any = k8s.apps.v1.Deployment) -> Callable[[], Any]:
    return lambda: kind(
        name,
        metadata={"name": name},
        spec={
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    )


def stack(*parts: Callable[[], Any]) -> Any:
    def program() -> None:
        for part in parts:
            part()

    return run_program(program, {"aws:region": "us-east-1"}, stack="apps")


def pool(
    name: str,
    requirements: list[dict[str, Any]],
    taints: Optional[list[dict[str, str]]] = None,
    labels: Optional[dict[str, str]] = None,
    limits: Optional[dict[str, Any]] = None,
    class_name: Optional[str] = None,
) -> Callable[[], Any]:
    template: dict[str, Any] = {
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class_name or name},
            "requirements": requirements,
        }
    }
    if taints:
        template["spec"]["taints"] = taints
    if labels:
        template["metadata"] = {"labels": labels}
    spec: dict[str, Any] = {"template": template}
    if limits:
        spec["limits"] = limits
    return lambda: k8s.apiextensions.CustomResource(
        f"{name}-nodepool", api_version="karpenter.sh/v1", kind="NodePool", metadata={"name": name}, spec=spec
    )


def req(key: str, *values: str, operator: str = "In") -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def group(name: str, types: Optional[list[str]] = None, **kw: Any) -> Callable[[], Any]:
    return lambda: eks_node_group(name, None, **({"instance_types": types} if types else {}), **kw)


ON_DEMAND_AMD64 = pool(
    "general",
    [
        req("kubernetes.io/arch", "amd64"),
        req("karpenter.sh/capacity-type", "on-demand"),
        req("karpenter.k8s.aws/instance-family", "m6i"),
    ],
)
GPU_TAINTS = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]


# ---- the arithmetic --------------------------------------------------------------------------------------------


def nodeadm(vcpus: int, mib: int, max_pods: int, arm: bool = False) -> tuple[int, int]:
    """Allocatable (millicores, MiB) written out from nodeadm's reserves and Karpenter's memory estimate."""
    milli = vcpus * 1000
    bands = [(0, 1000, 0.06), (1000, 2000, 0.01), (2000, 4000, 0.005), (4000, milli, 0.0025)]
    cpu_reserved = sum(int((min(milli, hi) - lo) * rate) for lo, hi, rate in bands if milli > lo)
    reported = mib - (64 if arm else 0)
    reported -= math.ceil(reported * 0.075)
    return milli - cpu_reserved, reported - (11 * max_pods + 255) - 100


@pytest.mark.parametrize(
    "name, vcpus, mib, pods, published_cpu, published_mib",
    [
        ("g4dn.xlarge", 4, 16384, 29, 3920, 14481),
        ("m5.large", 2, 8192, 29, 1930, 6903),
        ("t3.large", 2, 8192, 35, 1930, 6837),
        ("m6g.large", 2, 8192, 29, 1930, 6844),
        ("p4d.24xlarge", 96, 1179648, 737, 95690, 1082712),
    ],
)
def test_allocatable_is_nodeadms_reserves_on_karpenters_estimate(name, vcpus, mib, pods, published_cpu, published_mib):
    itype = instances.instance_type(name)
    assert itype is not None and (itype.vcpus, itype.memory_mib, itype.max_pods) == (vcpus, mib, pods)
    allocatable = fit.allocatable(itype)
    assert (allocatable.cpu_m, allocatable.memory_mib) == nodeadm(vcpus, mib, pods, arm=name.startswith("m6g"))
    assert (allocatable.cpu_m, allocatable.memory_mib) == (published_cpu, published_mib)
    assert allocatable.ephemeral_mib == 20 * 1024 - 1024 - 2048  # 20 GiB root: 1 GiB reserved, 10 % eviction


def test_effective_requests_follow_the_scheduler():
    spec = {
        "initContainers": [
            {"name": "migrate", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
            {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}},
            {"name": "warm", "resources": {"limits": {"memory": "3Gi"}}},  # a limit alone is its request
        ],
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}}}],
        "overhead": {"cpu": "100m"},
    }
    asked = fit.pod_requests(spec)
    # cpu: max(0.5 + 0.25 sidecar, init 2) + 0.1 overhead; memory: max(2Gi + 256Mi, 3Gi + 256Mi sidecar before it)
    assert asked["cpu"] == pytest.approx(2.1)
    assert asked["memory"] == 3 * 2**30 + 256 * 2**20


@pytest.mark.parametrize(
    "text, amount",
    [
        ("4000000000n", 4.0),
        ("4000000u", 4.0),
        ("250m", 0.25),
        ("1e3", 1000.0),
        ("1E", 1e18),
        ("2k", 2000.0),
        ("1Ki", 1024.0),
        (".5", 0.5),
        ("5.", 5.0),
        (" 16Gi ", 16 * 2**30),
        ("1e3m", None),
        ("1Gi1", None),
        ("-1", None),
        ("1 Gi", None),
        ("", None),
    ],
)
def test_quantities_follow_apimachinerys_grammar(text, amount):
    # resource.Quantity: a number, then a binary suffix (Ki..Ei), a decimal one (n, u, m, k, M, G, T, P, E) or
    # an exponent, never two; UnmarshalJSON trims spaces around it
    assert fit.quantity(text) == amount


QUANTITIES = st.one_of(
    st.integers(0, 64).map(str),
    st.integers(1, 64000).map(lambda m: f"{m}m"),
    st.integers(1, 512).map(lambda g: f"{g}Gi"),
    st.integers(1, 4096).map(lambda m: f"{m}Mi"),
)
CONTAINER = st.fixed_dictionaries({"cpu": QUANTITIES, "memory": QUANTITIES})


@settings(deadline=None, max_examples=60)
@given(containers=st.lists(CONTAINER, min_size=1, max_size=4), inits=st.lists(CONTAINER, max_size=3))
def test_a_pod_needs_at_least_each_container_and_the_sum_of_its_containers(containers, inits):
    spec = {
        "containers": [{"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(containers)],
        "initContainers": [{"name": f"i{i}", "resources": {"requests": r}} for i, r in enumerate(inits)],
    }
    asked = fit.pod_requests(spec)
    for resource in ("cpu", "memory"):
        amounts = [fit.quantity(c[resource]) or 0 for c in containers]
        init = [fit.quantity(c[resource]) or 0 for c in inits]
        assert asked.get(resource, 0) == pytest.approx(max([sum(amounts), *init]))


# ---- fit, through the pack ------------------------------------------------------------------------------------


def on_prod(*extra: Callable[[ClusterRef], Any]) -> Any:
    config = {k: v for k, v in stack_config("prod").items() if k not in NETWORK_KEYS}

    def program() -> None:
        rack = Rack("rack", RackArgs(spec=load_stack_config()))
        for add in extra:
            add(rack.cluster)

    return run_program(program, config, stack="prod")


INFERENCE = {
    "name": "inference",
    "image": "vllm/vllm-openai:v0.6.4",
    "port": 8000,
    "internal": True,
    "scale": {"count": 1, "memory": 16384, "gpu": 1},
    "nodeSelectorLabels": {"convox.io/label": "gpu-inference"},
}


def test_the_shipped_inference_service_at_16_gib_never_fits_a_g4dn_xlarge(pack):
    run = on_prod(lambda cluster: Service("inference", ServiceArgs(service=ServiceSpec(**INFERENCE), cluster=cluster)))
    [message] = messages(judge(pack, run), REACH)
    assert message.startswith(
        'service "inference" fits no lane: it requests memory 16Gi, nvidia.com/gpu 1; the nearest, '
        'node group "rack-ng-1" (convox.io/label=gpu-inference)'
    )
    assert "g4dn.xlarge, has memory 14481Mi allocatable < 16Gi requested" in message
    assert "lower scale.cpu/scale.memory/scale.gpu" in message
    fits = {**INFERENCE, "scale": {"count": 1, "memory": 12288, "gpu": 1}}
    assert (
        messages(
            judge(pack, on_prod(lambda c: Service("inference", ServiceArgs(service=ServiceSpec(**fits), cluster=c)))),
            REACH,
        )
        == []
    )


def test_the_component_refuses_what_the_pack_refuses_in_its_words(pack):
    """``Service(lanes=rack.lane_facts)`` and ``place(lanes=...)`` at construction; the pack at preview."""
    seen: dict[str, str] = {}

    def build(spec: dict[str, Any]) -> Callable[[ClusterRef], None]:
        def add(cluster: ClusterRef) -> None:
            Service(spec["name"], ServiceArgs(service=ServiceSpec(**spec), cluster=cluster))

        return add

    config = {k: v for k, v in stack_config("prod").items() if k not in NETWORK_KEYS}
    cases = [
        INFERENCE,
        {**INFERENCE, "scale": {"count": 1, "gpu": 2}},
        {**INFERENCE, "name": "web", "scale": {"count": 1, "gpu": 1}, "nodeSelectorLabels": {}},
    ]
    for spec in cases:

        def program(spec: dict[str, Any] = spec) -> None:
            rack = Rack("rack", RackArgs(spec=load_stack_config()))
            with pytest.raises(ArgumentError) as refused:
                Service(
                    spec["name"], ServiceArgs(service=ServiceSpec(**spec), cluster=rack.cluster, lanes=rack.lane_facts)
                )
            seen[spec["name"] + str(spec["scale"])] = refused.value.reason

        run_program(program, config, stack="prod")
        [preview] = messages(judge(pack, on_prod(build(spec))), REACH)
        assert seen[spec["name"] + str(spec["scale"])] == preview
    assert "nvidia.com/gpu 1 allocatable < 2 requested" in seen[INFERENCE["name"] + str(cases[1]["scale"])]


def test_place_refuses_with_the_lanes_and_is_unchanged_without_them():
    lanes = {
        "rack-ng-1": {
            "kind": "nodegroup",
            "labels": {"convox.io/label": "gpu-inference"},
            "gpu": True,
            "taints": [
                {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
                {"key": "dedicated-node", "value": "gpu-inference", "effect": "NoSchedule"},
            ],
            "instanceTypes": ["g4dn.xlarge"],
            "capacityTypes": ["ON_DEMAND"],
        }
    }
    selected = {"convox.io/label": "gpu-inference"}
    assert place(selected, gpu=1, lanes=lanes, memory_mib=12288) == place(selected, gpu=1)
    with pytest.raises(ValueError, match=r"has cpu 3920m allocatable < 8 requested"):
        place(selected, gpu=1, lanes=lanes, cpu=8)
    with pytest.raises(
        ValueError, match=r"requests 1 nvidia.com/gpu but selects no lane, and the default lane has no GPUs"
    ):
        place({}, gpu=1, lanes=lanes)


def test_spot_only_and_arm64_only_pods_beside_one_on_demand_amd64_pool(pack):
    spot = workload("spot", pod({"karpenter.sh/capacity-type": "spot"}))
    graviton = workload("graviton", pod({"kubernetes.io/arch": "arm64"}))
    assert sorted(messages(judge(pack, stack(ON_DEMAND_AMD64, spot, graviton)), REACH)) == [
        "deployment \"graviton\" fits no lane: the nearest, karpenter nodepool 'general', cannot take it: it needs "
        "kubernetes.io/arch=arm64, and the lane launches m6i (amd64) only (select a lane that offers it, or add one)",
        "deployment \"spot\" fits no lane: the nearest, karpenter nodepool 'general', cannot take it: it needs "
        "karpenter.sh/capacity-type=spot, and the lane launches capacity type on-demand only (select a lane that "
        "offers it, or add one)",
    ]
    both = pool(
        "general", [req("karpenter.sh/capacity-type", "on-demand", "spot"), req("kubernetes.io/arch", "amd64", "arm64")]
    )
    assert messages(judge(pack, stack(both, spot, graviton)), REACH) == []


def test_a_spot_pod_and_an_on_demand_node_group(pack):
    spot = workload("spot", pod({"eks.amazonaws.com/capacityType": "SPOT"}))
    assert messages(judge(pack, stack(group("ondemand", ["m6i.large"]), spot)), REACH) == [
        'deployment "spot" fits no lane: the nearest, node group "ondemand", cannot take it: it needs '
        "eks.amazonaws.com/capacityType=SPOT, and the lane launches capacity type ON_DEMAND only (select a lane that "
        "offers it, or add one)"
    ]
    assert messages(judge(pack, stack(group("spot", ["m6i.large"], capacity_type="SPOT"), spot)), REACH) == []


@pytest.mark.parametrize(
    "arm_group",
    [
        group("arm", ["m7g.large"], taints=[aws.eks.NodeGroupTaintArgs(key="team", value="ml", effect="NO_SCHEDULE")]),
        group(
            "arm",
            ami_type="AL2023_ARM_64_STANDARD",
            taints=[aws.eks.NodeGroupTaintArgs(key="team", value="ml", effect="NO_SCHEDULE")],
        ),
    ],
    ids=["by-instance-types", "by-ami-type"],
)
def test_the_only_arm64_lane_is_a_tainted_node_group(pack, arm_group):
    graviton = workload("graviton", pod({"kubernetes.io/arch": "arm64"}))
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, arm_group, graviton)), REACH) == [
        'deployment "graviton" selects node group "arm" but does not tolerate its taint team=ml:NoSchedule '
        "(add a toleration for it: custom taints are not tolerated automatically)"
    ]
    tolerated = workload("graviton", pod({"kubernetes.io/arch": "arm64"}, [{"key": "team", "operator": "Exists"}]))
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, arm_group, tolerated)), REACH) == []


def test_more_gpus_than_a_node_has_from_a_node_group_and_a_pool(pack):
    two = workload("trainer", pod({"convox.io/label": "ml"}, limits={"nvidia.com/gpu": 2}))
    ml = group("ml", ["g5.xlarge"], labels={"convox.io/label": "ml"})
    [message] = messages(judge(pack, stack(ml, two)), REACH)
    assert message.startswith(
        'deployment "trainer" fits no lane: it requests nvidia.com/gpu 2; the nearest, node group "ml"'
    )
    assert "g5.xlarge, has nvidia.com/gpu 1 allocatable < 2 requested" in message
    assert (
        messages(judge(pack, stack(group("ml", ["g5.12xlarge"], labels={"convox.io/label": "ml"}), two)), REACH) == []
    )

    gpu_pool = pool(
        "gpu",
        [req("karpenter.k8s.aws/instance-family", "g5"), req("karpenter.k8s.aws/instance-size", "xlarge", "2xlarge")],
        taints=GPU_TAINTS,
    )
    wants = workload("trainer", pod({"karpenter.sh/nodepool": "gpu"}, limits={"nvidia.com/gpu": 4}))
    [message] = messages(judge(pack, stack(gpu_pool, wants)), REACH)
    assert (
        "the nearest, karpenter nodepool 'gpu'" in message and "nvidia.com/gpu 1 allocatable < 4 requested" in message
    )


def test_a_managed_node_group_as_the_cli_sends_it(pack):
    """Its children (the ``aws.eks.NodeGroup`` pulumi-eks registers) carry the instance types."""
    ml = lambda: managed_node_group(  # noqa: E731
        "ml",
        instance_types=["g4dn.xlarge"],
        labels={"convox.io/label": "ml"},  # noqa: E731
        taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
        scaling_config={"desired_size": 1, "min_size": 1, "max_size": 2},
    )
    big = workload("llm", pod({"convox.io/label": "ml"}, requests={"memory": "16Gi"}, limits={"nvidia.com/gpu": 1}))
    [message] = messages(judge(pack, stack(ml, big)), REACH)
    assert "g4dn.xlarge, has memory 14481Mi allocatable < 16Gi requested" in message
    small = workload("llm", pod({"convox.io/label": "ml"}, requests={"memory": "12Gi"}, limits={"nvidia.com/gpu": 1}))
    assert messages(judge(pack, stack(ml, small)), REACH) == []


def test_the_lanes_daemonsets_take_their_share(pack):
    """dcgm-exporter's chart default requests (100m, 128Mi) on every node of the GPU lane."""
    ml = group("ml", ["g4dn.xlarge"], labels={"convox.io/label": "ml"})
    tight = workload(
        "llm", pod({"convox.io/label": "ml"}, requests={"memory": "14400Mi"}, limits={"nvidia.com/gpu": 1})
    )
    assert messages(judge(pack, stack(ml, tight)), REACH) == []
    exporter = workload(
        "dcgm-exporter",
        {
            **pod(tolerations=[{"operator": "Exists"}], requests={"cpu": "100m", "memory": "128Mi"}),
            "containers": [
                {
                    "name": "exporter",
                    "image": "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless",
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                }
            ],
        },
        kind=k8s.apps.v1.DaemonSet,
    )
    [message] = messages(judge(pack, stack(ml, exporter, tight)), REACH)
    assert (
        "memory 14353Mi allocatable < 14400Mi requested" in message and "DaemonSets' cpu 100m, memory 128Mi" in message
    )


def test_a_pools_limits_cap_what_it_launches(pack):
    capped = pool(
        "gpu",
        [req("karpenter.k8s.aws/instance-family", "g5")],
        taints=GPU_TAINTS,
        limits={"cpu": "16", "nvidia.com/gpu": "2"},
    )
    wants = workload(
        "trainer", pod({"karpenter.sh/nodepool": "gpu"}, requests={"cpu": "20"}, limits={"nvidia.com/gpu": 1})
    )
    [message] = messages(judge(pack, stack(capped, wants)), REACH)
    assert "g5.4xlarge, has cpu 15890m allocatable < 20 requested" in message
    assert "its limits (cpu 16, nvidia.com/gpu 2) rule out" in message


# A NodePool's limits, as Kubernetes and Karpenter take them (the same reading the worst case makes): Karpenter's
# NodePool CRD lets each limit be a whole number or a text quantity matching its pattern, whole (an optional sign,
# digits, then one suffix or exponent, with nothing before or after), so the API server refuses a pool whose limit
# is a word, has a space around it or is a fraction written as a number, and that pool never exists. Text the
# pattern lets through but apimachinery's quantity parser does not read (an exponent with a fraction, or past 64
# bits) is stored, and Karpenter then cannot decode the pool. Either way no node of it runs, so no pod lands on it:
# the fit policy judges it as a pool the stack lacks, and says why it never runs.
NEVER = "karpenter nodepool 'gpu', which it selects, "


@pytest.mark.parametrize(
    "limit, why",
    [
        (
            "abc",
            "is never created: Kubernetes refuses limits.cpu 'abc', which is no quantity (write a whole number, or "
            "text such as 64, 250m or 256Gi)",
        ),
        (" 64", "is never created: Kubernetes refuses limits.cpu ' 64', which is no quantity"),
        (
            1.5,
            "is never created: Kubernetes refuses limits.cpu 1.5: a limit written as a number is a whole number of 64 "
            "bits",
        ),
        (True, "is never created: Kubernetes refuses limits.cpu true, which is no quantity"),
        (
            "1e1.5",
            "launches nothing: Karpenter cannot read limits.cpu '1e1.5' (the API server takes it, but its exponent "
            "is no whole number of 64 bits)",
        ),
    ],
)
def test_a_pool_whose_limits_kubernetes_refuses_takes_no_pod_and_says_why(pack, limit, why):
    general = pool(
        "general", [req("karpenter.k8s.aws/instance-family", "m6i")], labels={"convox.io/nodepool": "general"}
    )
    broken = pool(
        "gpu",
        [req("karpenter.k8s.aws/instance-family", "g5")],
        taints=GPU_TAINTS,
        labels={"convox.io/nodepool": "gpu"},
        limits={"cpu": limit, "nvidia.com/gpu": 8},
    )
    # named as the seeds name a lane: as a pool the rack lacks, with why
    named = workload(
        "trainer", pod({"convox.io/nodepool": "gpu"}, [GPU], requests={"cpu": "2"}, limits={"nvidia.com/gpu": 1})
    )
    [message] = messages(judge(pack, stack(general, broken, named)), REACH)
    assert message.startswith(
        "deployment \"trainer\" targets karpenter nodepool 'gpu', which does not exist on this rack "
        "(existing pools: general)"
    ), message
    assert f"; {NEVER}{why}" in message
    # selected by Karpenter's own label, with no GPU: refused for it, not passed
    plain = workload("batch", pod({"karpenter.sh/nodepool": "gpu"}, [GPU], requests={"cpu": "2"}))
    [message] = messages(judge(pack, stack(general, broken, plain)), REACH)
    assert message.startswith(f'deployment "batch" selects no lane that runs: {NEVER}{why}'), message
    # a workload on another lane is not told about it
    assert (
        messages(
            judge(
                pack,
                stack(general, broken, workload("api", pod({"convox.io/nodepool": "general"}, requests={"cpu": "1"}))),
            ),
            REACH,
        )
        == []
    )


@pytest.mark.parametrize(
    "limits, said",
    [
        ({"cpu": "64"}, None),
        ({"cpu": 64}, None),
        ({"cpu": "+64"}, None),
        ({"cpu": "64e0"}, None),
        ({"cpu": "-4"}, "its limits (cpu -4) leave no instance type it can launch"),  # every node is over it
        ({"cpu": "-0"}, "its limits (cpu 0) leave no instance type it can launch"),
    ],
)
def test_limits_the_api_server_takes_are_read_as_karpenter_reads_them(pack, limits, said):
    capped = pool(
        "gpu",
        [req("karpenter.k8s.aws/instance-family", "g5")],
        taints=GPU_TAINTS,
        labels={"convox.io/nodepool": "gpu"},
        limits=limits,
    )
    wants = workload(
        "trainer", pod({"convox.io/nodepool": "gpu"}, [GPU], requests={"cpu": "2"}, limits={"nvidia.com/gpu": 1})
    )
    found = messages(judge(pack, stack(capped, wants)), REACH)
    assert found == [] if said is None else (len(found) == 1 and said in found[0] and "never" not in found[0]), found


def test_a_gpu_daemonset_need_not_reach_a_pool_that_never_runs(pack):
    broken = pool(
        "gpu", [req("karpenter.k8s.aws/instance-family", "g5")], taints=GPU_TAINTS, limits={"cpu": "Infinity"}
    )
    plugin = workload(
        "nvidia-device-plugin",
        {
            "containers": [{"name": "plugin", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}],
            "tolerations": [GPU],
            "nodeSelector": {"team": "none"},
        },
        kind=k8s.apps.v1.DaemonSet,
    )
    assert messages(judge(pack, stack(broken, plugin)), DAEMONS) == []
    assert messages(
        judge(
            pack,
            stack(
                pool("gpu", [req("karpenter.k8s.aws/instance-family", "g5")], taints=GPU_TAINTS, limits={"cpu": "64"}),
                plugin,
            ),
        ),
        DAEMONS,
    )


# Karpenter's scheduler (kubernetes-sigs/karpenter, pkg/controllers/provisioning/scheduling) starts from a pool's
# limits as the room left, and before it makes a node of the pool it gives up when the nodes left are exactly zero,
# then keeps only the instance types none of whose capacities is above what is left of the same resource. A type
# has no capacity of a resource it lacks (nodes among them), so a limit below zero on any resource, or a GPU limit
# of zero beside GPU types of that vendor, leaves no type, while a limit on another vendor's GPUs does not bind them.
# A pool whose limits leave no type launches no node, whatever a pod requests: the fit policy says so, in the words
# it already uses for limits that leave no type, for a pod that requests nothing as for one that requests room.
LEAVES_NONE = "leave no instance type it can launch (raise the pool's limits, or select another lane)"


@pytest.mark.parametrize(
    "limits, words",
    [
        ({"nodes": 0}, "nodes 0"),
        ({"nodes": "0"}, "nodes 0"),
        ({"cpu": 64, "nodes": "-0"}, "cpu 64, nodes 0"),
        ({"nodes": -1}, "nodes -1"),
        ({"nvidia.com/gpu": 0, "amd.com/gpu": 8}, "amd.com/gpu 8, nvidia.com/gpu 0"),  # NVIDIA's own limit binds g5
        ({"pods": "-1"}, "pods -1"),  # every type has zero or more of any resource
    ],
)
@pytest.mark.parametrize("requests", [{"cpu": "1"}, {}])
def test_a_pool_whose_limits_leave_no_node_takes_no_pod(pack, limits, words, requests):
    capped = pool(
        "gpu", [req("karpenter.k8s.aws/instance-family", "g5")], labels={"convox.io/nodepool": "gpu"}, limits=limits
    )
    batch = workload("batch", pod({"convox.io/nodepool": "gpu"}, requests=requests))
    # a DaemonSet's pods make no node: one that requests nothing waits for none
    agent = workload("agent", pod({"convox.io/nodepool": "gpu"}), kind=k8s.apps.v1.DaemonSet)
    [message] = messages(judge(pack, stack(capped, batch, agent)), REACH)
    asks = "cpu 1" if requests else "nothing"
    assert message == (
        f"deployment \"batch\" fits no lane: it requests {asks}; the nearest, karpenter nodepool 'gpu': "
        f"its limits ({words}) {LEAVES_NONE}"
    ), message


def test_a_pool_whose_limits_leave_a_node_takes_its_pods(pack):
    # one node is made while any of a nodes limit is left (500m lets one run); g5's GPUs are NVIDIA's, which an AMD
    # limit does not count; a limit of zero on what no type of it has binds nothing
    for limits in ({"nodes": 1}, {"nodes": "500m"}, {"amd.com/gpu": 0}, {"example.com/dongle": 0}):
        capped = pool(
            "gpu", [req("karpenter.k8s.aws/instance-family", "g5")], labels={"convox.io/nodepool": "gpu"}, limits=limits
        )
        for requests in ({"cpu": "1"}, {}):
            batch = workload("batch", pod({"convox.io/nodepool": "gpu"}, requests=requests))
            assert messages(judge(pack, stack(capped, batch)), REACH) == [], (limits, requests)


# The API server's side of a limit as hypothesis draws it: text near a quantity (signs, spaces, suffixes, exponents
# with fractions or of many digits), numbers whole or not and of any size, and values of other JSON kinds.
LIMIT_VALUES = st.one_of(
    st.sampled_from(["64", " 64", "-4", "-0", "1e1.5", "1e99999999999999999999", "1e400", "Infinity", "64 "]),
    st.text(alphabet="0123456789.+-eEKMGTPinumk ", max_size=8),
    st.from_regex(
        r" ?[+-]?[0-9]{1,3}(\.[0-9]{0,2})?([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,21}(\.[0-9]?)?)? ?", fullmatch=True
    ),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(st.integers(0, 9), max_size=1),
)


# Limits as hypothesis draws them: any of the resources the policies count, and others, each holding a value as
# above or a small amount near zero (where a pool stops leaving room for one node).
LIMITS = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nodes", "nvidia.com/gpu", "amd.com/gpu", "pods"]),
    st.one_of(
        LIMIT_VALUES, st.integers(-2, 8), st.sampled_from(["0", "-0", "500m", "-500m", "1e-400", "4", "16Gi", "64Gi"])
    ),
    max_size=3,
)


@settings(deadline=None, max_examples=40)
@given(limits=LIMITS, requests=st.sampled_from([{"cpu": "1"}, {}]))
@example(limits={"cpu": "64", "memory": " 64", "nodes": ""}, requests={"cpu": "1"})  # two refused: one named, the same
@example(limits={"nodes": 0}, requests={})
def test_the_fit_and_cost_policies_agree_on_which_limits_run(pack, limits, requests):
    """Whatever a NodePool's limits hold, the fit policy (over the pack's gRPC server) and the worst case the
    preview prints (the cost policy's reading) agree on whether the pool ever runs, and give the same reason; and,
    for a pool that runs, on whether its limits leave it an instance type to launch (the worst case is then $0
    with its reason, and the fit policy refuses a pod that selects it, whatever the pod requests)."""
    general = pool(
        "general", [req("karpenter.k8s.aws/instance-family", "m6i")], labels={"convox.io/nodepool": "general"}
    )
    odd = pool(
        "gpu", [req("karpenter.k8s.aws/instance-family", "g5")], labels={"convox.io/nodepool": "gpu"}, limits=limits
    )
    run = stack(general, odd, workload("batch", pod({"convox.io/nodepool": "gpu"}, requests=requests)))
    [priced] = [lane for lane in costs.of_run(run, {}, {}).lanes if lane.name == "gpu"]
    why = priced.worst.why
    never = why.startswith(("it is never created: ", "it launches nothing: "))
    said = messages(judge(pack, run), REACH)
    assert any(f"{NEVER}{why[3:]}" in line for line in said) == never, (limits, why, said)
    assert never or not any("which it selects, " in line for line in said), (limits, said)
    no_type = why == "no instance type it can launch fits its limits" or why.startswith(
        "it can launch nothing: limits."
    )
    assert no_type == (priced.worst.usd == 0.0 and any(LEAVES_NONE in line for line in said)), (limits, why, said)
    assert no_type or never or said == [], (limits, why, said)


def test_an_unknown_request_is_an_advisory_not_a_pass(pack):
    ml = group("ml", ["g4dn.xlarge"], labels={"convox.io/label": "ml"})
    later = lambda: workload(  # noqa: E731
        "llm",
        pod(
            {"convox.io/label": "ml"},
            requests={"memory": unknown("64Gi")},  # noqa: E731
            limits={"nvidia.com/gpu": 1},
        ),
    )()
    found = judge(pack, stack(ml, later))
    assert messages(found, REACH) == []
    assert [v for v in found if v["policy"] == REACH and v["level"] == "advisory"]


# ---- what the API server refuses ---------------------------------------------------------------------------------
# kubernetes pkg/apis/core/validation ValidateResourceRequirements: every request and limit is a quantity of 0 or
# more; an extended resource (a domain outside kubernetes.io) is whole, cannot be overcommitted (helper.
# IsOvercommitAllowed: native resources other than hugepages only), so it needs a limit and a request equal to it;
# any other request is at most its limit. The API server refuses such a pod (or the Deployment holding it).


@pytest.mark.parametrize(
    "requests, limits, said",
    [
        ({"cpu": "lots"}, {}, "resources.requests.cpu 'lots' is not a quantity"),
        ({"cpu": ""}, {}, "resources.requests.cpu '' is not a quantity"),  # only empty text is none
        ({"cpu": "1e"}, {}, "resources.requests.cpu '1e' is not a quantity"),
        ({"cpu": "1e1.5"}, {}, "resources.requests.cpu '1e1.5' is not a quantity"),
        ({"memory": "NaN"}, {}, "resources.requests.memory 'NaN' is not a quantity"),
        ({"cpu": "-1"}, {}, "resources.requests.cpu '-1' is negative"),
        ({}, {"nvidia.com/gpu": -1}, "resources.limits.nvidia.com/gpu -1 is negative"),
        ({"memory": "2Gi"}, {"memory": "1Gi"}, "resources.requests.memory '2Gi' is above its limit '1Gi'"),
        ({"nvidia.com/gpu": 1}, {}, "resources.requests.nvidia.com/gpu 1 has no limit"),
        ({"nvidia.com/gpu": 1}, {"nvidia.com/gpu": 2}, "resources.requests.nvidia.com/gpu 1 is not its limit 2"),
        (
            {},
            {"vpc.amazonaws.com/efa": "1500m"},
            "resources.limits.vpc.amazonaws.com/efa '1500m' is not a whole number",
        ),
        (
            {"hugepages-2Mi": "1Gi", "memory": "2Gi"},
            {"memory": "2Gi"},
            "resources.requests.hugepages-2Mi '1Gi' has no limit",
        ),
        ({}, {"hugepages-2Mi": "1Gi"}, "resources ask for hugepages without cpu or memory"),
        ({"gpu": 1}, {}, "resources.requests.gpu is not a resource Kubernetes knows for a container"),
        ({"CPU": "1"}, {}, "resources.requests.CPU is not a resource Kubernetes knows for a container"),
    ],
)
def test_requirements_the_api_server_refuses_are_refused(pack, requests, limits, said):
    general = group("general", ["m6i.xlarge"])
    [message] = messages(judge(pack, stack(general, workload("api", pod(requests=requests, limits=limits)))), REACH)
    assert message.startswith(f'deployment "api": container "app": {said}')
    assert message.endswith("Kubernetes refuses such a pod, so none is ever created")


@pytest.mark.parametrize(
    "requests, limits",
    [
        ({"cpu": 0.1}, {"cpu": "100m"}),  # a number and the text that is the same quantity
        ({"memory": "1Gi"}, {"memory": "1073741824"}),
        ({"cpu": "500m", "memory": "1Gi"}, {"cpu": 1}),
        ({}, {"nvidia.com/gpu": "0"}),
        ({"ephemeral-storage": "0"}, {}),
        ({"hugepages-2Mi": "64Mi", "memory": "1Gi"}, {"hugepages-2Mi": "64Mi"}),
        ({"memory": "-0"}, {}),  # apimachinery reads it as 0
        # Quantity's JSON decoding trims spaces around the text, and ParseQuantity reads a number with no digits as 0
        # (its scanner takes the digits it finds, none being zero, then the suffix): what a template renders from an
        # empty value ("{{ .cpu }}m") is a pod the API server creates, asking for nothing
        ({"cpu": " 500m "}, {"cpu": " 1"}),
        ({"cpu": "m"}, {}),
        ({"memory": "Gi"}, {"memory": "1Gi"}),
        ({"cpu": "."}, {}),
        ({"cpu": "+"}, {}),
        ({"cpu": "-"}, {}),
        ({"cpu": "-m"}, {}),
        ({"example.com/dongle": 1, "cpu": "100m"}, {"example.com/dongle": "1"}),
    ],
)
def test_requirements_the_api_server_takes_pass(pack, requests, limits):
    general = group("general", ["m6i.xlarge"])
    assert messages(judge(pack, stack(general, workload("api", pod(requests=requests, limits=limits)))), REACH) == []


def test_a_request_past_a_floats_range_fits_no_lane(pack):
    # apimachinery reads any exponent: "1e400" is a quantity the API takes, and no node has that much
    general = group("general", ["m6i.xlarge"])
    [message] = messages(judge(pack, stack(general, workload("api", pod(requests={"memory": "1e400"})))), REACH)
    assert message.startswith('deployment "api" fits no lane: it requests memory beyond any number a node has')
    gpus = group("ml", ["g5.xlarge"], labels={"convox.io/label": "ml"})
    [message] = messages(
        judge(pack, stack(gpus, workload("llm", pod({"convox.io/label": "ml"}, limits={"nvidia.com/gpu": "1e400"})))),
        REACH,
    )
    assert "nvidia.com/gpu beyond any number a node has" in message  # too many, not a fraction


def test_a_daemonset_or_a_volume_past_a_floats_range_is_judged_not_a_crash(pack):
    agent = workload(
        "agent", pod(tolerations=[{"operator": "Exists"}], requests={"cpu": "1e400"}), kind=k8s.apps.v1.DaemonSet
    )
    general = group("general", ["m6i.xlarge"])
    [message] = messages(judge(pack, stack(general, agent)), REACH)
    assert (
        message.startswith('daemonset "agent" runs a pod on every node of')
        and "cpu beyond any number a node has" in message
    )
    huge = lambda: k8s.apiextensions.CustomResource(  # noqa: E731
        "huge-class",
        api_version="karpenter.k8s.aws/v1",
        kind="EC2NodeClass",
        metadata={"name": "huge"},
        spec={
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "r",
            "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "1e400"}}],
        },
    )
    found = judge(
        pack,
        stack(
            huge,
            pool("huge", [req("karpenter.k8s.aws/instance-family", "m6i")]),
            workload("api", pod({"karpenter.sh/nodepool": "huge"}, requests={"cpu": "1"})),
        ),
    )
    assert not [v for v in found if "Traceback" in v["message"] or "OverflowError" in v["message"]]


@pytest.mark.parametrize(
    "request_, limit, above",
    [
        ("1e400", "2", True),
        ("2", "1e400", False),
        ("1e400", "1e400", False),
        ("1e99999", "2", True),
        (0.1, "100m", False),
        ("1001m", 1, True),
    ],
)
def test_a_request_is_compared_with_its_limit_exactly_whatever_its_size(request_, limit, above):
    said = fit.refusals(
        {"containers": [{"name": "a", "resources": {"requests": {"cpu": request_}, "limits": {"cpu": limit}}}]}
    )
    assert bool(said) == above, said


def test_pod_level_resources_are_held_to_what_kubernetes_takes_there():
    spec = {
        "containers": [{"name": "app"}],
        "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "2"}, "requests": {"cpu": "3"}},
    }
    assert fit.refusals(spec) == [
        "pod-level resources: resources.limits.nvidia.com/gpu is not a resource a pod may set for itself (cpu, memory "
        "and hugepages only; set it on a container)",
        "pod-level resources: resources.requests.cpu '3' is above its limit '2' (a request must be at most its limit)",
    ]
    # null is a zero quantity (Quantity's UnmarshalJSON), as a Helm chart renders an empty value
    assert (
        fit.refusals(
            {
                "containers": [
                    {"name": "app", "resources": {"limits": {"nvidia.com/gpu": None}, "requests": {"cpu": None}}}
                ]
            }
        )
        == []
    )


@settings(deadline=None, max_examples=150)
@given(
    request=st.one_of(st.integers(-5, 5), st.text(max_size=6)),
    limit=st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=6)),
)
def test_any_requirement_is_read_without_an_exception(request, limit):
    pod_spec = pod(
        requests={"cpu": request, "nvidia.com/gpu": request}, limits={"cpu": limit} if limit is not None else {}
    )
    found = fit.refusals(pod_spec)
    # ParseQuantity reads a sign with no digits ("-") or a negative zero ("-0", "-m") as 0: no refusal for those
    signed_zero = (
        isinstance(request, str)
        and request.strip().startswith("-")
        and (not (rest := request.strip().removeprefix("-")) or fit.quantity(rest) == 0)
    )
    if fit.quantity(request) is None and not signed_zero:
        assert any("resources.requests.cpu" in line for line in found)
    assert any("nvidia.com/gpu" in line for line in found)  # never a limit for it: always refused


def test_a_sign_with_no_digits_is_a_zero_request_not_a_refusal():
    found = fit.refusals(pod(requests={"cpu": "-"}))
    assert not any("resources.requests.cpu" in line for line in found)


# ---- GPUs by other names ----------------------------------------------------------------------------------------


def claim_template(name: str, device_class: str = "gpu.nvidia.com", count: int = 1) -> Callable[[], Any]:
    return lambda: k8s.apiextensions.CustomResource(
        name,
        api_version="resource.k8s.io/v1",
        kind="ResourceClaimTemplate",
        metadata={"name": name},
        spec={
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class, "count": count}}]}
            }
        },
    )


def dra_pod(
    select: Optional[dict[str, str]] = None, tolerations: Optional[list[dict[str, Any]]] = None
) -> dict[str, Any]:
    spec = pod(select, tolerations)
    spec["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "two-gpus"}]
    return spec


def test_a_dra_claim_is_a_gpu_request(pack):
    gpu_pool = pool(
        "gpu",
        [req("karpenter.k8s.aws/instance-family", "g5")],
        taints=GPU_TAINTS,
        labels={"convox.io/gpu-vendor": "nvidia"},
    )
    claims = claim_template("two-gpus", count=2)
    # the GPU pool would take it but for its GPU taint, which no admission controller tolerates for a claim: the
    # toleration lands it, not selecting the pool
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, gpu_pool, claims, workload("llm", dra_pod()))), REACH) == [
        'deployment "llm" claims 2 nvidia.com/gpu through DRA (gpu), but does not tolerate the taints of the GPU lane '
        "it "
        "can land on (karpenter nodepool 'gpu': nvidia.com/gpu=true:NoSchedule) (it claims GPUs through DRA (gpu), "
        "which "
        "EKS's ExtendedResourceToleration does not cover: add the toleration {key: nvidia.com/gpu, operator: Exists, "
        "effect: NoSchedule})"
    ]
    untolerated = messages(
        judge(pack, stack(gpu_pool, claims, workload("llm", dra_pod({"karpenter.sh/nodepool": "gpu"})))), REACH
    )
    assert untolerated == [
        "deployment \"llm\" selects karpenter nodepool 'gpu' but does not tolerate its taint "
        "nvidia.com/gpu=true:NoSchedule "
        "(it claims GPUs through DRA (gpu), which EKS's ExtendedResourceToleration does not cover: add the toleration "
        "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule})"
    ]
    assert (
        messages(
            judge(pack, stack(gpu_pool, claims, workload("llm", dra_pod({"karpenter.sh/nodepool": "gpu"}, [GPU])))),
            REACH,
        )
        == []
    )
    small = pool(
        "gpu",
        [req("karpenter.k8s.aws/instance-family", "g5"), req("karpenter.k8s.aws/instance-size", "xlarge")],
        taints=GPU_TAINTS,
    )
    [message] = messages(
        judge(pack, stack(small, claims, workload("llm", dra_pod({"karpenter.sh/nodepool": "gpu"}, [GPU])))), REACH
    )
    assert "nvidia.com/gpu 1 allocatable < 2 requested" in message


def test_a_mig_claim_needs_a_gpu_lane_but_no_whole_gpu(pack):
    gpu_pool = pool("gpu", [req("karpenter.k8s.aws/instance-family", "p4d")], taints=GPU_TAINTS)
    slices = lambda: k8s.apiextensions.CustomResource(  # noqa: E731
        "slice",
        api_version="resource.k8s.io/v1",
        kind="ResourceClaim",
        metadata={"name": "slice"},
        spec={"devices": {"requests": [{"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com"}}]}},
    )
    spec = pod()
    spec["resourceClaims"] = [{"name": "mig", "resourceClaimName": "slice"}]
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, gpu_pool, slices, workload("notebook", spec))), REACH) == [
        'deployment "notebook" claims MIG devices of any profile through DRA (mig), but does not tolerate the taints '
        "of "
        "the GPU lane it can land on (karpenter nodepool 'gpu': nvidia.com/gpu=true:NoSchedule) (it claims GPUs "
        "through "
        "DRA (mig), which EKS's ExtendedResourceToleration does not cover: add the toleration {key: nvidia.com/gpu, "
        "operator: Exists, effect: NoSchedule})"
    ]


def mig_claim(name: str, *profiles: str, device_class: str = "mig.nvidia.com") -> Callable[[], Any]:
    """A claim of MIG devices as NVIDIA's DRA driver's examples write one (a CEL selector on the profile)."""
    requests = [
        {
            "name": f"mig-{i}",
            "exactly": {
                "deviceClassName": device_class,
                "selectors": [{"cel": {"expression": f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"}}],
            },
        }
        for i, profile in enumerate(profiles)
    ]
    return lambda: k8s.apiextensions.CustomResource(
        name,
        api_version="resource.k8s.io/v1",
        kind="ResourceClaimTemplate",
        metadata={"name": name},
        spec={"spec": {"devices": {"requests": requests}}},
    )


def mig_pod(template: str) -> dict[str, Any]:
    spec = pod({"karpenter.sh/nodepool": "gpu"}, [GPU])
    spec["resourceClaims"] = [{"name": "mig", "resourceClaimTemplateName": template}]
    return spec


def family_pool(*families: str) -> Callable[[], Any]:
    return pool("gpu", [req("karpenter.k8s.aws/instance-family", *families)], taints=GPU_TAINTS)


@pytest.mark.parametrize(
    ("families", "profiles", "verdict"),
    [
        (("g5", "g6", "g6e"), ("1g.5gb",), "g5 (A10G: no MIG), g6 (L4: no MIG), g6e (L40S: no MIG)"),
        (("p4d",), ("1g.5gb", "2g.10gb", "3g.20gb"), ""),  # A100 40GB
        (("p4de",), ("1g.5gb",), "p4de (A100 80GB: MIG 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)"),
        (("p5",), ("3g.40gb",), ""),  # H100 80GB
        (("p5en",), ("1g.10gb",), "p5en (H200 141GB: MIG 1g.18gb, 1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb)"),
        (("p6-b200",), ("7g.180gb",), ""),
        (("g7e",), ("2g.48gb",), ""),  # RTX PRO 6000 Blackwell Server Edition
        (("g6e", "g7e"), ("1g.24gb+me",), ""),  # one family of the lane has it: Karpenter can pick it
    ],
)
def test_mig_claims_are_judged_against_the_gpus_the_lane_launches(pack, families, profiles, verdict):
    found = messages(
        judge(
            pack, stack(family_pool(*families), mig_claim("slices", *profiles), workload("infer", mig_pod("slices")))
        ),
        REACH,
    )
    if not verdict:
        assert found == []
        return
    [message] = found
    assert message.startswith(
        f'deployment "infer" claims MIG devices {", ".join(profiles)} through DRA (mig), but no GPU '
        f"the lanes it reaches launch has {'them' if len(profiles) > 1 else 'it'}: karpenter nodepool "
        f"'gpu' launches {verdict} (MIG exists on A100, H100, H200, B200, B300, GB200, GB300 and RTX "
        "PRO Blackwell GPUs, each with its own profiles;"
    ), message


def test_mig_resources_of_the_device_plugin_are_judged_too(pack):
    # the device plugin's mixed strategy advertises nvidia.com/mig-<profile>; a MIG profile the GPUs lack is none
    sliced = workload("infer", pod({"karpenter.sh/nodepool": "gpu"}, [GPU], limits={"nvidia.com/mig-1g.5gb": 1}))
    [message] = messages(judge(pack, stack(family_pool("g6"), sliced)), REACH)
    assert message.startswith(
        'deployment "infer" requests nvidia.com/mig-1g.5gb (NVIDIA GPU slices), but no GPU the lanes '
        "it reaches launch has it: karpenter nodepool 'gpu' launches g6 (L4: no MIG)"
    )
    assert messages(judge(pack, stack(family_pool("p4d"), sliced)), REACH) == []
    media = workload("infer", pod({"karpenter.sh/nodepool": "gpu"}, [GPU], limits={"nvidia.com/mig-1g.10gb.me": 1}))
    assert messages(judge(pack, stack(family_pool("p5"), media)), REACH) == []  # 1g.10gb+me, '+' written '.'


def test_a_device_class_of_one_mig_profile_is_read_from_its_selector(pack):
    # NVIDIA/k8s-dra-driver-gpu demo/specs/extended-resources/mig-1g-12gb.yaml: one DeviceClass per profile
    device_class = lambda: k8s.apiextensions.CustomResource(  # noqa: E731
        "mig-1g-12gb",
        api_version="resource.k8s.io/v1",
        kind="DeviceClass",
        metadata={"name": "mig-1g-12gb.gpu.nvidia.com"},
        spec={
            "selectors": [
                {
                    "cel": {
                        "expression": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com']"
                        ".type == 'mig' && device.attributes['gpu.nvidia.com'].profile == '1g.12gb'"
                    }
                }
            ]
        },
    )
    claims = claim_template("slices", device_class="mig-1g-12gb.gpu.nvidia.com")
    [message] = messages(
        judge(pack, stack(family_pool("p5"), device_class, claims, workload("infer", mig_pod("slices")))), REACH
    )
    assert message.startswith(
        'deployment "infer" claims MIG devices 1g.12gb through DRA (mig), but no GPU the lanes it '
        "reaches launch has it: karpenter nodepool 'gpu' launches p5 (H100 80GB: MIG 1g.10gb,"
    )


@pytest.mark.parametrize(
    ("request_", "said"),
    [
        ({"count": -1}, "spec.spec.devices.requests[0].exactly.count -1: must be a whole number greater than zero"),
        ({"count": 0}, "spec.spec.devices.requests[0].exactly.count 0: must be a whole number greater than zero"),
        ({"count": 1.5}, "spec.spec.devices.requests[0].exactly.count 1.5: must be a whole number greater than zero"),
        (
            {"allocationMode": "All", "count": 2},
            "spec.spec.devices.requests[0].exactly.count 2: must not be specified when allocationMode is 'All'",
        ),
        (
            {"allocationMode": "Some"},
            "spec.spec.devices.requests[0].exactly.allocationMode 'Some': not supported (All or ExactCount)",
        ),
    ],
)
def test_a_claim_the_api_server_refuses_takes_no_gpu_off_the_pod(pack, request_, said):
    # a count of -1 was added to the pod's GPUs: a 2-GPU pod then fit a 1-GPU lane
    template = lambda: k8s.apiextensions.CustomResource(  # noqa: E731
        "broken",
        api_version="resource.k8s.io/v1",
        kind="ResourceClaimTemplate",
        metadata={"name": "broken"},
        spec={
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", **request_}}]}
            }
        },
    )
    spec = pod({"karpenter.sh/nodepool": "gpu"}, [GPU], limits={"nvidia.com/gpu": 2})
    spec["resourceClaims"] = [{"name": "extra", "resourceClaimTemplateName": "broken"}]
    one_gpu = pool("gpu", [req("node.kubernetes.io/instance-type", "g5.xlarge")], taints=GPU_TAINTS)
    assert messages(judge(pack, stack(one_gpu, template, workload("llm", spec))), REACH) == [
        f"resourceclaimtemplate 'broken': {said}; Kubernetes refuses it",
        f"deployment \"llm\": its claim 'extra' is ResourceClaimTemplate 'broken', which Kubernetes refuses ({said}), "
        f"so no "
        "pod of it ever starts",
    ]


def test_all_devices_of_a_node_is_at_least_one_gpu(pack):
    template = lambda: k8s.apiextensions.CustomResource(  # noqa: E731
        "every",
        api_version="resource.k8s.io/v1",
        kind="ResourceClaimTemplate",
        metadata={"name": "every"},
        spec={
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}}
                    ]
                }
            }
        },
    )
    spec = pod({"karpenter.sh/nodepool": "gpu"}, [GPU], limits={"nvidia.com/gpu": 1})
    spec["resourceClaims"] = [{"name": "all", "resourceClaimTemplateName": "every"}]
    one_gpu = pool("gpu", [req("node.kubernetes.io/instance-type", "g5.xlarge")], taints=GPU_TAINTS)
    [message] = messages(judge(pack, stack(one_gpu, template, workload("llm", spec))), REACH)
    assert "nvidia.com/gpu 1 allocatable < 2 requested" in message


def test_a_claim_the_stack_does_not_hold_is_not_read_as_no_gpu(pack):
    spec = pod({"karpenter.sh/nodepool": "gpu"})
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "made-elsewhere"}]
    found = judge(pack, stack(family_pool("g6"), workload("llm", spec)))
    [message] = messages(found, REACH)
    assert "requests no GPU" not in message
    assert message == (
        "deployment \"llm\" selects karpenter nodepool 'gpu' but does not tolerate its taint "
        "nvidia.com/gpu=true:NoSchedule "
        "(it claims devices through DRA from ResourceClaimTemplate 'made-elsewhere', which this stack does not hold, "
        "and EKS's "
        "ExtendedResourceToleration does not cover DRA claims: add the toleration {key: nvidia.com/gpu, operator: "
        "Exists, "
        "effect: NoSchedule})"
    )
    tolerating = pod({"karpenter.sh/nodepool": "gpu"}, [GPU])
    tolerating["resourceClaims"] = spec["resourceClaims"]
    found = judge(pack, stack(family_pool("g6"), workload("llm", tolerating)))
    assert messages(found, REACH) == [] and messages(found, "gpu-lanes-for-gpu-workloads", "advisory") == []
    [advice] = messages(found, REACH, "advisory")
    assert (
        "deployment \"llm\": cannot verify what its DRA claims ask for: ResourceClaimTemplate 'made-elsewhere' is not "
        "in "
        "this stack (declare it in this stack to have it judged)" in advice
    )


def test_a_label_no_lane_declares_is_named_not_the_default_pool(pack):
    gpu_pool = pool(
        "gpu",
        [req("karpenter.k8s.aws/instance-family", "g5")],
        taints=[*GPU_TAINTS, {"key": "dedicated-node", "value": "gpu", "effect": "NoSchedule"}],
    )
    trainer = workload("trainer", pod({"team": "ml"}, limits={"nvidia.com/gpu": 1}))
    [message] = messages(judge(pack, stack(ON_DEMAND_AMD64, gpu_pool, trainer)), REACH)
    assert message.startswith(
        'deployment "trainer" requests 1 nvidia.com/gpu, but it selects team=ml, which no lane of this rack declares'
    )


def test_an_amd_pod_is_not_told_it_requests_no_gpu(pack):
    gpu_pool = pool("gpu", [req("karpenter.k8s.aws/instance-family", "g5")], taints=GPU_TAINTS)
    amd = workload("radeon", pod({"karpenter.sh/nodepool": "gpu"}, limits={"amd.com/gpu": 1}))
    [message] = messages(judge(pack, stack(gpu_pool, amd)), REACH)
    assert "requests no GPU" not in message
    assert "it requests amd.com/gpu, not nvidia.com/gpu" in message


# ---- the lanes policy config ----------------------------------------------------------------------------------


def test_a_lanes_config_with_mistakes_names_each_path(pack):
    lanes = [
        {"name": "gpu", "labels": {"convox.io/nodepool": "gpu"}, "taint": [GPU_TAINTS[0]]},
        {"name": "gpu", "labels": {"bad key!": "x"}},
        {"name": "ml", "taints": [{"key": "nvidia.com/gpu", "value": "not ok!", "effect": "NoSchedule"}]},
    ]
    config = {REACH: {"lanes": lanes}}
    # refused when the pack is configured, as a schema error is: an error, never a violation of the stack
    with pytest.raises(PolicyPackError) as refused:
        judge(pack, stack(workload("web", pod({"convox.io/nodepool": "gpu"}))), config)
    assert str(refused.value) == "\n  ".join(
        [
            "invalid policy pack config for 'mixed-os-racks':",
            "workloads-reach-their-lane: lanes[0].taint: unknown key (did you mean 'taints'?)",
            "workloads-reach-their-lane: lanes[1].name: duplicate lane name 'gpu' (also lanes[0])",
            "workloads-reach-their-lane: lanes[1].labels: invalid label key 'bad key!' (must be at most 63 letters, "
            "digits, "
            "'-', '_' or '.', starting and ending with a letter or digit)",
            "workloads-reach-their-lane: lanes[2].taints[0].value: invalid taint value 'not ok!'",
        ]
    )


def test_a_configured_lane_states_its_sizes(pack):
    lanes = [
        {
            "name": "rack-ng-1",
            "kind": "nodegroup",
            "labels": {"convox.io/label": "gpu-inference"},
            "gpu": True,
            "taints": GPU_TAINTS,
            "maxGpusPerNode": 1,
            "allocatable": {"cpu": "3920m", "memory": "14481Mi"},
        }
    ]
    big = workload(
        "llm", pod({"convox.io/label": "gpu-inference"}, requests={"memory": "16Gi"}, limits={"nvidia.com/gpu": 1})
    )
    [message] = messages(judge(pack, stack(big), {REACH: {"lanes": lanes}}), REACH)
    assert message.startswith(
        'deployment "llm" fits no lane: it requests memory 16Gi, nvidia.com/gpu 1; the nearest, '
        'node group "rack-ng-1" (convox.io/label=gpu-inference): its largest node (as the policy config '
        "states it) has memory 14481Mi allocatable < 16Gi requested"
    )


LABEL_KEYS = st.one_of(
    st.sampled_from(["convox.io/label", "team", "a/b/c", "", "x" * 70, "Bad Key"]), st.text(max_size=12)
)
LANE_ENTRIES = st.fixed_dictionaries(
    {"name": st.one_of(st.sampled_from(["a", "b"]), st.integers(), st.none())},
    optional={
        "labels": st.one_of(
            st.dictionaries(LABEL_KEYS, st.one_of(st.text(max_size=8), st.integers()), max_size=2), st.text(max_size=4)
        ),
        "taints": st.one_of(
            st.lists(
                st.fixed_dictionaries({"key": LABEL_KEYS, "effect": st.sampled_from(["NoSchedule", "Never"])}),
                max_size=2,
            ),
            st.integers(),
        ),
        "taint": st.just([]),
        "maxGpusPerNode": st.one_of(st.integers(-1, 8), st.floats(allow_nan=True), st.booleans()),
        "allocatable": st.one_of(
            st.dictionaries(
                st.sampled_from(["cpu", "memory", "gpu"]), st.one_of(st.text(max_size=6), st.integers(0, 9)), max_size=2
            ),
            st.none(),
        ),
        "instanceTypes": st.lists(st.sampled_from(["g5.xlarge", "nope", "m7g.large"]), max_size=2),
    },
)


@settings(deadline=None, max_examples=150)
@given(lanes=st.one_of(st.lists(LANE_ENTRIES, max_size=3), st.text(max_size=5), st.integers()))
def test_any_lanes_config_is_judged_without_a_traceback(lanes):
    problems = workloads.lanes_config_problems(lanes)
    assert all(p.startswith("lanes") for p in problems)
    if not problems:  # a config the validator accepts is one the policies can read
        workloads.configured_lanes({"lanes": lanes})
    names = [entry.get("name") for entry in lanes if isinstance(entry, dict)] if isinstance(lanes, list) else []
    if any(names.count(n) > 1 for n in names if isinstance(n, str) and n):
        assert any("duplicate lane name" in p for p in problems)


# ---- GPU DaemonSets reach every GPU lane ----------------------------------------------------------------------


DEVICE_PLUGIN_DEFAULTS = [{"key": "CriticalAddonsOnly", "operator": "Exists"}, GPU]
"""nvidia-device-plugin 0.20.0's default tolerations (its values.yaml)."""


def device_plugin(tolerations: list[dict[str, Any]], affinity: Optional[dict[str, Any]] = None) -> Callable[[], Any]:
    spec = {
        "containers": [{"name": "plugin", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"}],
        "tolerations": tolerations,
    }
    if affinity:
        spec["affinity"] = affinity
    return workload("nvidia-device-plugin", spec, kind=k8s.apps.v1.DaemonSet)


DEDICATED_GPU_POOL = pool(
    "gpu",
    [req("karpenter.k8s.aws/instance-family", "g5")],
    labels={"convox.io/gpu-vendor": "nvidia"},
    taints=[*GPU_TAINTS, {"key": "dedicated-node", "value": "gpu", "effect": "NoSchedule"}],
)


def test_a_device_plugin_that_does_not_tolerate_a_dedicated_gpu_lane(pack):
    """Convox's bug: the chart's default tolerations miss the dedicated lane's taint."""
    [message] = messages(judge(pack, stack(DEDICATED_GPU_POOL, device_plugin(DEVICE_PLUGIN_DEFAULTS))), DAEMONS)
    assert message == (
        'daemonset "nvidia-device-plugin" serves GPUs (image nvcr.io/nvidia/k8s-device-plugin:v0.20.0) but never runs '
        "on "
        "karpenter nodepool 'gpu', a GPU lane: it does not tolerate dedicated-node=gpu:NoSchedule (add the tolerations "
        "{key: dedicated-node, operator: Exists, effect: NoSchedule})"
    )
    from mixed_os_racks import gpu

    ours = gpu.device_plugin_values()
    assert (
        messages(judge(pack, stack(DEDICATED_GPU_POOL, device_plugin(ours["tolerations"], ours["affinity"]))), DAEMONS)
        == []
    )


def test_a_gpu_daemonset_selecting_a_label_no_lane_carries(pack):
    """The chart's default affinity (NFD labels or nvidia.com/gpu.present) lands nowhere on the rack's lanes."""
    nfd = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}
                ]
            }
        }
    }
    exporter = workload(
        "dcgm",
        {"containers": [{"name": "e", "image": "busybox"}], "affinity": nfd, "tolerations": [{"operator": "Exists"}]},
        kind=k8s.apps.v1.DaemonSet,
    )
    ng = group("ml", ["g5.xlarge"], labels={"convox.io/gpu-vendor": "nvidia"})
    [message] = messages(judge(pack, stack(ng, exporter)), DAEMONS)
    assert message.startswith(
        'daemonset "dcgm" serves GPUs (it selects GPU nodes (nvidia.com/gpu.present=true)) but never '
        'runs on node group "ml", a GPU lane: its node selection (nvidia.com/gpu.present=true) does not '
        "match the lane's node labels (convox.io/gpu-vendor=nvidia)"
    )


CHART_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In", "values": ["true"]}
                    ]
                },
                {
                    "matchExpressions": [
                        {
                            "key": "feature.node.kubernetes.io/cpu-model.vendor_id",
                            "operator": "In",
                            "values": ["NVIDIA"],
                        }
                    ]
                },
                {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]},
            ]
        }
    }
}
"""nvidia-device-plugin 0.20.0's default affinity (its values.yaml): NFD's labels or the GPU operator's."""


def nvidia_daemonset(name: str, command: str, tolerations: list[dict[str, Any]], **spec: Any) -> Callable[[], Any]:
    return workload(
        name,
        {
            "containers": [{"name": "c", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0", "command": [command]}],
            "tolerations": tolerations,
            **spec,
        },
        kind=k8s.apps.v1.DaemonSet,
    )


def nfd_worker(tolerations: list[dict[str, Any]]) -> Callable[[], Any]:
    """node-feature-discovery 0.19.0's worker, as its chart renders it (command nfd-worker)."""
    return workload(
        "nfd-worker",
        {
            "containers": [
                {
                    "name": "worker",
                    "command": ["nfd-worker"],
                    "image": "registry.k8s.io/nfd/node-feature-discovery:v0.19.0",
                }
            ],
            "tolerations": tolerations,
        },
        kind=k8s.apps.v1.DaemonSet,
    )


def test_the_fix_for_a_missed_gpu_lane_names_a_label_that_lane_carries(pack):
    # a GPU pool written elsewhere carries no convox.io/gpu-vendor: the rack's fix would not reach it
    theirs = pool("gpu", [req("karpenter.k8s.aws/instance-family", "g6")], taints=GPU_TAINTS)
    plugin = nvidia_daemonset(
        "nvidia-device-plugin",
        "nvidia-device-plugin",
        DEVICE_PLUGIN_DEFAULTS,
        nodeSelector={"nvidia.com/gpu.present": "true"},
    )
    [message] = messages(judge(pack, stack(theirs, plugin)), DAEMONS)
    assert message.endswith(
        "(select a label its nodes carry (karpenter.sh/nodepool: gpu), or give the lane convox.io/gpu-vendor: nvidia)"
    )
    ours = pool(
        "gpu",
        [req("karpenter.k8s.aws/instance-family", "g6")],
        taints=GPU_TAINTS,
        labels={"convox.io/gpu-vendor": "nvidia"},
    )
    [message] = messages(judge(pack, stack(ours, plugin)), DAEMONS)
    assert message.endswith("(select convox.io/gpu-vendor: nvidia, which the rack's GPU lanes carry)")


def test_labels_a_node_agent_of_the_stack_writes_on_a_lane_are_there(pack):
    gpu_pool = pool("gpu", [req("karpenter.k8s.aws/instance-family", "g6")], taints=GPU_TAINTS)
    plugin = nvidia_daemonset(
        "nvidia-device-plugin", "nvidia-device-plugin", DEVICE_PLUGIN_DEFAULTS, affinity=CHART_AFFINITY
    )
    # without NFD (the chart's default), the plugin selects labels no node carries: refused
    [message] = messages(judge(pack, stack(gpu_pool, plugin)), DAEMONS)
    assert "never runs on karpenter nodepool 'gpu', a GPU lane: its node selection" in message
    # NFD's worker on the lane writes feature.node.kubernetes.io/pci-10de.present on its nodes: the plugin reaches it
    assert messages(judge(pack, stack(gpu_pool, plugin, nfd_worker([GPU]))), DAEMONS) == []
    # ... only where the worker runs: the chart's own worker tolerates nvidia.com/gpu=present, not =true
    only_present = [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]
    [message] = messages(judge(pack, stack(gpu_pool, plugin, nfd_worker(only_present))), DAEMONS)
    assert "never runs on karpenter nodepool 'gpu', a GPU lane" in message


def test_the_gpu_operator_labels_every_gpu_node(pack):
    gpu_pool = pool("gpu", [req("karpenter.k8s.aws/instance-family", "g6")], taints=GPU_TAINTS)
    exporter = workload(
        "dcgm-exporter",
        {
            "containers": [{"name": "e", "image": "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3"}],
            "nodeSelector": {"nvidia.com/gpu.deploy.dcgm-exporter": "true"},
            "tolerations": [GPU],
        },
        kind=k8s.apps.v1.DaemonSet,
    )
    operator = workload(
        "gpu-operator", {"containers": [{"name": "o", "image": "nvcr.io/nvidia/gpu-operator:v25.10.0"}]}
    )
    assert messages(judge(pack, stack(gpu_pool, exporter, operator)), DAEMONS) == []


@pytest.mark.parametrize("affinity", [None, CHART_AFFINITY], ids=["rack-values", "chart-defaults"])
def test_a_daemonset_for_nodes_set_up_for_a_gpu_mode_is_not_a_miss(pack, affinity):
    # the device plugin chart's MPS control daemon: "We only deploy this pod if the following sharing label is
    # applied" (nvidia.com/mps.capable, written by gpu-feature-discovery on nodes set up for MPS): none is its intent
    gpu_pool = pool(
        "gpu",
        [req("karpenter.k8s.aws/instance-family", "g6")],
        taints=GPU_TAINTS,
        labels={"convox.io/gpu-vendor": "nvidia"},
    )
    from mixed_os_racks import gpu

    spec = {
        "affinity": affinity or gpu.device_plugin_values()["affinity"],
        "nodeSelector": {"nvidia.com/mps.capable": "true"},
    }
    mps = nvidia_daemonset("mps-control-daemon", "mps-control-daemon", DEVICE_PLUGIN_DEFAULTS, **spec)
    found = judge(pack, stack(gpu_pool, mps, nfd_worker([GPU])))
    assert messages(found, DAEMONS) == [] and messages(found, REACH) == []
    # a label that marks GPU nodes is still judged: the plugin aimed at nvidia.com/gpu.present with no operator misses
    plugin = nvidia_daemonset(
        "nvidia-device-plugin",
        "nvidia-device-plugin",
        DEVICE_PLUGIN_DEFAULTS,
        nodeSelector={"nvidia.com/gpu.present": "true"},
    )
    [message] = messages(judge(pack, stack(gpu_pool, plugin)), DAEMONS)
    assert "its node selection (nvidia.com/gpu.present=true) does not match the lane's node labels" in message


# ---- the NVIDIA driver branch drives the lane's GPUs ----------------------------------------------------------


def gpu_class(ami: str = GPU_AMI) -> Callable[[], Any]:
    return lambda: node_class(
        "gpu", [{"id": ami}], volumes=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi"}}]
    )


def facts_of(name: str, ami: str = GPU_AMI, **more: Any) -> dict[str, Any]:
    entry = {"name": name, "architecture": "x86_64", "rootSnapshotGiB": 20, **more}
    return {
        p: {"amis": {ami: entry}}
        for p in (
            DRIVER,
            "al2023-family",
            "arch-matches-ami",
            "disk-fits-ami-snapshot",
            "ami-k8s-version",
            "pinned-ami-age",
        )
    }


def test_a_595_ami_cannot_drive_g6f_and_a_580_ami_cannot_drive_g7(pack):
    g6f = pool("gpu", [req("karpenter.k8s.aws/instance-family", "g6", "g6f")], taints=GPU_TAINTS)
    [message] = messages(
        judge(pack, stack(gpu_class(), g6f), facts_of("custom-al2023-nvidia-595-1.34-20261120")), DRIVER
    )
    assert message.startswith(
        f"karpenter nodepool 'gpu': its AMI {GPU_AMI} runs NVIDIA driver 595 (its name), which cannot "
        "drive instances the lane can launch: g6f is not supported by NVIDIA driver 595 or newer ("
    )
    g7 = pool("gpu", [req("karpenter.k8s.aws/instance-family", "g7")], taints=GPU_TAINTS)
    [message] = messages(
        judge(pack, stack(gpu_class(), g7), facts_of("amazon-eks-node-al2023-x86_64-nvidia-1.34-v20260714")), DRIVER
    )
    assert (
        "runs NVIDIA driver 580 (the EKS AMI of release v20260714 for 1.34), which cannot drive instances the lane can "
        "launch: g7 needs NVIDIA driver 595 or newer" in message
    )
    # from release v20260917 the official AMI picks its driver per instance type, G7's included
    assert (
        messages(
            judge(pack, stack(gpu_class(), g7), facts_of("amazon-eks-node-al2023-x86_64-nvidia-1.34-v20261115")), DRIVER
        )
        == []
    )
    assert messages(judge(pack, stack(gpu_class(), g7), facts_of("custom-gpu", nvidiaDriverBranch=595)), DRIVER) == []
    assert messages(judge(pack, stack(gpu_class(), g6f), facts_of("custom-gpu", nvidiaDriverBranch=580)), DRIVER) == []


def test_an_unknown_driver_branch_is_ami_facts_unknown(pack):
    g7 = pool("gpu", [req("karpenter.k8s.aws/instance-family", "g7")], taints=GPU_TAINTS)
    found = judge(pack, stack(gpu_class(), g7), facts_of("custom-gpu"))
    assert messages(found, DRIVER) == []
    [advice] = [m for m in messages(found, UNKNOWN_FACTS, "advisory") if "NVIDIA driver" in m]
    assert f"cannot verify that the NVIDIA driver of {GPU_AMI} drives g7" in advice and "nvidiaDriverBranch" in advice


def test_a_node_group_launch_template_with_g7_on_a_580_ami(pack):
    def lane() -> None:
        template = launch_template("g7-lt", instance_type="g7.2xlarge")
        eks_node_group("g7", template, ami_type="CUSTOM")

    [message] = messages(judge(pack, stack(lane), facts_of("custom-al2023-nvidia-580-1.34")), DRIVER)
    assert message.startswith(
        f"node group 'g7': its AMI {GPU_AMI} runs NVIDIA driver 580 (its name), which cannot drive "
        "instances the lane can launch: g7 needs NVIDIA driver 595 or newer"
    )


SUFFIXES = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


@settings(deadline=None, max_examples=200)
@given(number=st.integers(0, 10**6), suffix=st.sampled_from(sorted(SUFFIXES)), junk=st.text(max_size=6))
def test_quantities_read_as_kubernetes_writes_them(number, suffix, junk):
    assert fit.quantity(f"{number}{suffix}") == pytest.approx(number * SUFFIXES[suffix])
    assert fit.quantity(number) == number
    parsed = fit.quantity(junk)  # anything else is a quantity or None, never an exception
    assert parsed is None or parsed >= 0
    assert fit.quantity(True) is None and fit.quantity(-1) is None
    # apimachinery reads any exponent (an inf.Dec past int64): a quantity past a float's range is one no node holds
    assert fit.quantity("1e999") == math.inf and fit.quantity(f"5e{10**9}") == math.inf and fit.quantity("0e999") == 0
    assert fit.quantity("1e-999") == 0 and fit.quantity(float("nan")) is None


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_racks_lanes_output_through_the_readmes_jq_is_a_complete_lanes_config(pack):
    """The prod rack's real ``lanes`` output, turned into the policy config by the README's recipe: a stack
    of workloads alone is judged for fit as the rack's own stack is."""
    from conftest import REPO
    from test_workloads_policy import _readme_jq_program

    config = {k: v for k, v in stack_config("prod").items() if k not in NETWORK_KEYS}
    output = run_program(REPO, config, stack="prod").outputs["lanes"]
    converted = subprocess.run(
        ["jq", _readme_jq_program()], input=json.dumps(output), capture_output=True, text=True, check=True
    )
    lanes_config = json.loads(converted.stdout)
    assert workloads.lanes_config_problems(lanes_config[REACH]["lanes"]) == []

    def alone(spec: dict[str, Any]) -> Any:
        def program() -> None:
            Service(
                spec["name"], ServiceArgs(service=ServiceSpec(**spec), cluster=ClusterRef.existing("prod", "prod-rack"))
            )

        return run_program(program, {"aws:region": "us-east-1"}, stack="apps")

    [message] = messages(judge(pack, alone(INFERENCE), lanes_config), REACH)
    assert message.startswith(
        'service "inference" fits no lane: it requests memory 16Gi, nvidia.com/gpu 1; the nearest, '
        'node group "rack-ng-1" (convox.io/label=gpu-inference)'
    )
    assert "g4dn.xlarge, has memory 14481Mi allocatable < 16Gi requested" in message
    fits = {**INFERENCE, "scale": {"count": 1, "memory": 12288, "gpu": 1}}
    assert judge(pack, alone(fits), lanes_config) == []


# ---- what real manifests write: init-container GPUs, pod-level limits, the OS, DaemonSets, per-type labels --------
#
# Upstream facts these pin, in our words:
# * The scheduler hands an init container's resources on to the containers after it
#   (component-helpers ``PodRequests``): a GPU an init container checks is the app's GPU, not another.
# * With PodLevelResources (beta, on by default in Kubernetes 1.34) the API defaults a pod-level
#   request to the pod-level limit when no container asks for that resource (``pkg/apis/core/v1``
#   ``defaultPodRequests``).
# * Every node carries ``kubernetes.io/os``; the EKS Linux AMIs (AL2023, Bottlerocket) give ``linux``.
# * A DaemonSet runs a pod on each node its selection admits; a DaemonSet that admits none runs no pod.
# * Karpenter launches only instance types that meet every requirement of the pod and the pool
#   (``instance-type``, ``instance-size``, ``instance-cpu``, ``instance-gpu-count``...).
# * ``resource.k8s.io/v1beta1`` device requests name their ``deviceClassName`` on the request itself.

G5_POOL = pool(
    "gpu",
    [req("karpenter.k8s.aws/instance-family", "g5"), req("karpenter.k8s.aws/instance-size", "xlarge", "2xlarge")],
    taints=GPU_TAINTS,
)


def gpu_pod(select: dict[str, str], **spec: Any) -> dict[str, Any]:
    return pod(select, limits={"nvidia.com/gpu": 1}, **spec)


def test_an_init_container_that_checks_the_gpu_does_not_ask_for_another(pack):
    check = {"name": "nvidia-smi", "image": "nvidia/cuda:12.4.1-base", "resources": {"limits": {"nvidia.com/gpu": 1}}}
    one = workload(
        "finetune", gpu_pod({"karpenter.sh/nodepool": "gpu"}, initContainers=[check, {**check, "name": "again"}])
    )
    assert messages(judge(pack, stack(G5_POOL, one)), REACH) == []
    sidecar = {**check, "name": "exporter", "restartPolicy": "Always"}  # a sidecar keeps its GPU: 2 in all
    two = workload("finetune", gpu_pod({"karpenter.sh/nodepool": "gpu"}, initContainers=[sidecar]))
    [message] = messages(judge(pack, stack(G5_POOL, two)), REACH)
    assert 'deployment "finetune" fits no lane: it requests nvidia.com/gpu 2' in message


def test_a_pod_level_limit_without_requests_is_what_the_pod_asks():
    spec = pod(resources={"limits": {"cpu": "8", "memory": "32Gi"}})
    assert fit.pod_requests(spec) == {"cpu": 8, "memory": 32 * 2**30}
    # a container's request for it stands; a pod-level request wins over both
    assert fit.pod_requests(pod(requests={"cpu": "2"}, resources={"limits": {"cpu": "8"}}))["cpu"] == 2
    assert (
        fit.pod_requests(pod(requests={"cpu": "2"}, resources={"requests": {"cpu": "3"}, "limits": {"cpu": "8"}}))[
            "cpu"
        ]
        == 3
    )


def test_a_pod_level_limit_too_big_for_the_lane_is_refused(pack):
    big = workload("big", pod({"convox.io/label": "ml"}, resources={"limits": {"cpu": "8", "memory": "32Gi"}}))
    [message] = messages(judge(pack, stack(group("ml", ["m6i.xlarge"], labels={"convox.io/label": "ml"}), big)), REACH)
    assert message.startswith(
        'deployment "big" fits no lane: it requests cpu 8, memory 32Gi; the nearest, node group "ml"'
    )


def test_windows_pods_find_no_linux_lane_and_windows_daemonsets_cost_linux_nodes_nothing(pack):
    windows = workload("iis", pod({"kubernetes.io/os": "windows"}))
    al2023 = lambda: node_class("general", [{"alias": "al2023@latest"}])  # noqa: E731 (its nodes' OS: Linux)
    assert (
        messages(judge(pack, stack(ON_DEMAND_AMD64, windows)), REACH) == []
    )  # a class the stack does not hold: not known
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, al2023, windows)), REACH) == [
        "deployment \"iis\" fits no lane: the nearest, karpenter nodepool 'general', cannot take it: it needs "
        "kubernetes.io/os=windows, and the lane's nodes run linux (select a lane that offers it, or add one)"
    ]
    linux = workload("api", pod({"kubernetes.io/os": "linux"}))
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, al2023, linux)), REACH) == []
    # a Windows agent's DaemonSet tolerates everything, but lands on no Linux node: a pod that fills a
    # g4dn.xlarge (3920m, 14481Mi allocatable) still fits it, and the DaemonSet itself is no violation
    agent = workload(
        "windows-exporter",
        pod({"kubernetes.io/os": "windows"}, [{"operator": "Exists"}], requests={"cpu": "200m", "memory": "1Gi"}),
        kind=k8s.apps.v1.DaemonSet,
    )
    full = workload("llm", pod({"convox.io/label": "ml"}, requests={"cpu": "3", "memory": "14000Mi"}))
    ml = group("ml", ["g4dn.xlarge"], labels={"convox.io/label": "ml"})
    assert messages(judge(pack, stack(ml, agent, full)), REACH) == []
    # a Windows node group does take it
    windows_group = group("win", ["m6i.large"], ami_type="WINDOWS_CORE_2022_x86_64")
    assert messages(judge(pack, stack(windows_group, windows)), REACH) == []


def test_a_daemonset_for_nodes_the_rack_does_not_have_runs_nowhere_and_is_no_violation(pack):
    neuron = workload(
        "neuron-device-plugin",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    req("node.kubernetes.io/instance-type", "inf2.xlarge", "trn1.2xlarge")
                                ]
                            }
                        ]
                    }
                }
            },
            tolerations=[{"operator": "Exists"}],
        ),
        kind=k8s.apps.v1.DaemonSet,
    )
    arm_agent = workload("arm-agent", pod({"kubernetes.io/arch": "arm64"}), kind=k8s.apps.v1.DaemonSet)
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, neuron, arm_agent)), REACH) == []
    # the same selection on a Deployment leaves its pods pending
    arm_api = workload("arm-api", pod({"kubernetes.io/arch": "arm64"}))
    assert len(messages(judge(pack, stack(ON_DEMAND_AMD64, arm_api)), REACH)) == 1


@pytest.mark.parametrize(
    "requirement, words",
    [
        (req("node.kubernetes.io/instance-type", "g5.48xlarge"), "node.kubernetes.io/instance-type=g5.48xlarge"),
        (req("karpenter.k8s.aws/instance-size", "12xlarge"), "karpenter.k8s.aws/instance-size=12xlarge"),
        (req("karpenter.k8s.aws/instance-cpu", "31", operator="Gt"), "karpenter.k8s.aws/instance-cpu Gt [31]"),
        (
            req("karpenter.k8s.aws/instance-gpu-count", "3", operator="Gt"),
            "karpenter.k8s.aws/instance-gpu-count Gt [3]",
        ),
    ],
    ids=["type", "size", "cpu", "gpu-count"],
)
def test_instance_labels_no_type_of_the_lane_has_are_refused(pack, requirement, words):
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [requirement]}]
            }
        }
    }
    wants = workload("trainer", gpu_pod({"karpenter.sh/nodepool": "gpu"}, affinity=affinity))
    [message] = messages(judge(pack, stack(G5_POOL, wants)), REACH)
    assert message == (
        'deployment "trainer" fits no lane: it requests nvidia.com/gpu 1; the nearest, karpenter nodepool '
        f"'gpu': no instance type it can launch meets the pod's node selection ({words}) "
        "(select instance types the lane launches)"
    )
    fits = workload("trainer", gpu_pod({"karpenter.sh/nodepool": "gpu", "karpenter.k8s.aws/instance-size": "2xlarge"}))
    assert messages(judge(pack, stack(G5_POOL, fits)), REACH) == []


def terms(*alternatives: list[dict[str, Any]]) -> dict[str, Any]:
    """Required node affinity with these ``nodeSelectorTerms`` (ORed), each a list of ``matchExpressions``."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": expressions} for expressions in alternatives]
            }
        }
    }


GPU_ANY_SIZE = pool("gpu", [req("karpenter.k8s.aws/instance-family", "g5")], taints=GPU_TAINTS)


def test_an_affinity_terms_instance_labels_bind_only_the_lanes_that_term_selects(pack):
    # The terms are ORed: a node passes the pod's affinity when it meets one term whole. The gpu pool's
    # nodes meet only the first term, so only its xlarge types (1 GPU) are open to the pod there.
    small_gpu = [req("karpenter.sh/nodepool", "gpu"), req("karpenter.k8s.aws/instance-size", "xlarge")]
    four = pod(
        limits={"nvidia.com/gpu": 4},
        tolerations=[GPU],
        affinity=terms(small_gpu, [req("karpenter.sh/nodepool", "general")]),
    )
    [message] = messages(judge(pack, stack(GPU_ANY_SIZE, ON_DEMAND_AMD64, workload("trainer", four))), REACH)
    assert message.startswith(
        'deployment "trainer" fits no lane: it requests nvidia.com/gpu 4; the nearest, karpenter '
        "nodepool 'gpu': the nearest instance type it can launch for this pod, g5.xlarge, has "
        "nvidia.com/gpu 1 allocatable < 4 requested"
    )
    # the same pod, its first term open to g5.12xlarge (4 GPUs), lands
    large_gpu = [req("karpenter.sh/nodepool", "gpu"), req("karpenter.k8s.aws/instance-size", "xlarge", "12xlarge")]
    fits = pod(
        limits={"nvidia.com/gpu": 4},
        tolerations=[GPU],
        affinity=terms(large_gpu, [req("karpenter.sh/nodepool", "general")]),
    )
    assert messages(judge(pack, stack(GPU_ANY_SIZE, ON_DEMAND_AMD64, workload("trainer", fits))), REACH) == []


def test_a_gpu_pod_whose_only_term_for_the_gpu_lane_its_nodes_cannot_meet_reaches_no_gpu(pack):
    # the first term selects the gpu pool but asks for arm64, which g5 is not; the second selects a
    # lane without GPUs: no node the pod may land on has a GPU
    arm_gpu = [req("karpenter.sh/nodepool", "gpu"), req("kubernetes.io/arch", "arm64")]
    wants = gpu_pod({}, tolerations=[GPU], affinity=terms(arm_gpu, [req("karpenter.sh/nodepool", "general")]))
    [message] = messages(judge(pack, stack(GPU_ANY_SIZE, ON_DEMAND_AMD64, workload("trainer", wants))), REACH)
    assert message.startswith(
        'deployment "trainer" requests 1 nvidia.com/gpu, but it selects karpenter nodepool '
        "'general', which has no GPUs (select a GPU lane: "
    )
    amd_gpu = [req("karpenter.sh/nodepool", "gpu"), req("kubernetes.io/arch", "amd64")]
    lands = gpu_pod({}, tolerations=[GPU], affinity=terms(amd_gpu, [req("karpenter.sh/nodepool", "general")]))
    assert messages(judge(pack, stack(GPU_ANY_SIZE, ON_DEMAND_AMD64, workload("trainer", lands))), REACH) == []


def test_every_extended_resource_a_pod_requests_tolerates_its_taint_as_eks_admits_it(pack):
    # EKS's ExtendedResourceToleration admission plugin adds {key: <resource>, operator: Exists, effect:
    # NoSchedule} for every extended resource a container requests, Neuron devices as GPUs
    neuron_taint = [{"key": "aws.amazon.com/neuron", "value": "true", "effect": "NoSchedule"}]
    neuron = pool("neuron", [req("karpenter.k8s.aws/instance-family", "inf2")], taints=neuron_taint)
    infer = workload(
        "neuron-infer",
        pod(
            {"karpenter.sh/nodepool": "neuron"},
            limits={"aws.amazon.com/neuron": 1},
            requests={"cpu": "2", "memory": "8Gi"},
        ),
    )
    assert messages(judge(pack, stack(neuron, infer)), REACH) == []
    no_request = workload("neuron-infer", pod({"karpenter.sh/nodepool": "neuron"}, requests={"cpu": "2"}))
    [message] = messages(judge(pack, stack(neuron, no_request)), REACH)
    assert "does not tolerate its taint aws.amazon.com/neuron=true:NoSchedule" in message


def test_a_term_of_match_fields_is_a_term_and_a_pod_bound_by_node_name_is_not_scheduled(pack):
    # nodeaffinity.go: a term with only matchFields (metadata.name) still selects nodes; a pod with
    # nodeName skips the scheduler (and its taint checks) altogether
    by_name = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["ip-10-0-1-7.ec2.internal"]}
                        ]
                    }
                ]
            }
        }
    }
    pinned = workload("pinned-gpu", gpu_pod({}, tolerations=[GPU], affinity=by_name))
    assert messages(judge(pack, stack(G5_POOL, pinned)), REACH) == []
    bound = workload("bound-gpu", gpu_pod({}, nodeName="ip-10-0-1-7.ec2.internal"))
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, bound)), REACH) == []


def test_a_daemonset_for_a_label_a_pool_does_not_define_takes_no_room_on_its_nodes(pack):
    # Karpenter counts a DaemonSet on a pool's nodes only when the pool defines the custom labels it
    # requires ("if not defined are denied"); dcgm-exporter on nvidia.com/gpu.present never runs on m6i
    small = pool("small", [req("node.kubernetes.io/instance-type", "m6i.large")])
    dcgm = workload(
        "dcgm-exporter",
        pod({"nvidia.com/gpu.present": "true"}, [{"operator": "Exists"}], requests={"cpu": "100m", "memory": "128Mi"}),
        kind=k8s.apps.v1.DaemonSet,
    )
    app = workload("cpu-app", pod({"karpenter.sh/nodepool": "small"}, requests={"cpu": "1850m"}))
    assert messages(judge(pack, stack(small, dcgm, app)), REACH) == []
    # a DaemonSet the pool's labels do select takes its share
    agent = workload(
        "agent",
        pod({"karpenter.sh/nodepool": "small"}, [{"operator": "Exists"}], requests={"cpu": "100m"}),
        kind=k8s.apps.v1.DaemonSet,
    )
    assert len(messages(judge(pack, stack(small, agent, app)), REACH)) == 1


def test_a_selection_whose_parts_name_different_lanes_selects_none(pack):
    # the node selector and the required affinity are ANDed: no node is in two pools at once
    small = pool("small", [req("node.kubernetes.io/instance-type", "m6i.large")])
    both = workload(
        "api", pod({"karpenter.sh/nodepool": "general"}, affinity=terms([req("karpenter.sh/nodepool", "small")]))
    )
    [message] = messages(judge(pack, stack(ON_DEMAND_AMD64, small, both)), REACH)
    assert message == (
        'deployment "api" selects no lane: no lane of this rack carries all of its node selection '
        "(karpenter.sh/nodepool=general; karpenter.sh/nodepool=small), and the node selector and "
        "affinity must all hold (select one lane)"
    )
    one = workload(
        "api", pod({"karpenter.sh/nodepool": "small"}, affinity=terms([req("karpenter.sh/nodepool", "small")]))
    )
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, small, one)), REACH) == []


def test_a_daemonset_must_fit_every_lane_it_runs_on_not_only_one(pack):
    # the DaemonSet controller makes one pod per node it selects: on a lane whose nodes cannot hold it,
    # each stays Pending, whatever the other lanes hold
    small = pool("small", [req("node.kubernetes.io/instance-type", "m6i.large")])
    big = pool("big", [req("node.kubernetes.io/instance-type", "m6i.4xlarge")])
    agent = workload(
        "agent",
        pod(tolerations=[{"operator": "Exists"}], requests={"cpu": "2", "memory": "1Gi"}),
        kind=k8s.apps.v1.DaemonSet,
    )
    [message] = messages(judge(pack, stack(small, big, agent)), REACH)
    assert message.startswith(
        "daemonset \"agent\" runs a pod on every node of karpenter nodepool 'small' and fits none: "
        "it requests cpu 2, memory 1Gi; the nearest instance type it can launch for this pod, "
        "m6i.large, has cpu 1930m allocatable < 2 requested"
    )
    assert messages(judge(pack, stack(big, agent)), REACH) == []


@pytest.mark.parametrize("resource", ["nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared"])
def test_nvidia_gpu_slices_need_a_gpu_lane_as_whole_gpus_do(pack, resource):
    # MIG slices and shared (time-sliced, renamed) GPUs are resources only the device plugin on an NVIDIA
    # GPU node advertises; no node of a lane without GPUs has one
    sliced = workload("infer", pod(limits={resource: 1}))
    gpus = (
        G5_POOL
        if "mig" not in resource
        else pool("gpu", [req("karpenter.k8s.aws/instance-family", "p4d")], taints=GPU_TAINTS)
    )
    [message] = messages(judge(pack, stack(ON_DEMAND_AMD64, gpus, sliced)), REACH)
    # EKS's ExtendedResourceToleration tolerates a taint named after the slice, not the lane's nvidia.com/gpu: the fix
    # that lands it is that toleration
    assert message == (
        f'deployment "infer" requests {resource} (NVIDIA GPU slices), but does not tolerate the taints of '
        "the GPU lane it can land on (karpenter nodepool 'gpu': nvidia.com/gpu=true:NoSchedule) (it requests "
        f"{resource}, whose taints EKS's ExtendedResourceToleration names after them, not nvidia.com/gpu: "
        "add the toleration {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule})"
    )
    on_gpu = workload("infer", pod({"karpenter.sh/nodepool": "gpu"}, tolerations=[GPU], limits={resource: 1}))
    assert of(judge(pack, stack(ON_DEMAND_AMD64, gpus, on_gpu)), REACH) == []
    assert of(judge(pack, stack(ON_DEMAND_AMD64, gpus, on_gpu)), "gpu-lanes-for-gpu-workloads") == []


def test_a_runtime_class_of_the_stack_adds_its_scheduling_and_overhead_to_the_pod(pack):
    # the RuntimeClass admission controller merges scheduling.nodeSelector into the pod's, adds
    # scheduling.tolerations, and sets the pod's overhead from overhead.podFixed
    def runtime(name: str, scheduling: dict[str, Any], overhead: Optional[dict[str, Any]] = None) -> Callable[[], Any]:
        return lambda: k8s.node.v1.RuntimeClass(
            name,
            metadata={"name": name},
            handler=name,
            scheduling=scheduling,
            **({"overhead": {"pod_fixed": overhead}} if overhead else {}),
        )

    nvidia = runtime("nvidia", {"node_selector": {"karpenter.sh/nodepool": "gpu"}, "tolerations": [GPU]})
    uses = workload("infer", gpu_pod({}, runtimeClassName="nvidia"))
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, G5_POOL, nvidia, uses)), REACH) == []
    heavy = runtime("kata", {"node_selector": {"karpenter.sh/nodepool": "general"}}, overhead={"cpu": "2"})
    sandboxed = workload("sandboxed", pod(runtimeClassName="kata", requests={"cpu": "1"}))
    small_general = pool("general", [req("node.kubernetes.io/instance-type", "m6i.large")])
    [message] = messages(judge(pack, stack(small_general, heavy, sandboxed)), REACH)
    assert message.startswith('deployment "sandboxed" fits no lane: it requests cpu 3; ')


@pytest.mark.parametrize(
    ("runtime_class", "overhead", "said"),
    [
        (
            None,
            {"cpu": "250m"},
            "spec.overhead is set without a runtimeClassName (the RuntimeClass admission controller "
            "refuses a pod overhead no RuntimeClass defines: drop overhead, and name a RuntimeClass whose "
            "overhead.podFixed gives it)",
        ),
        (
            "runc",
            {"cpu": "250m"},
            "spec.overhead is set, but RuntimeClass 'runc' defines no overhead (the RuntimeClass "
            "admission controller refuses it: drop overhead, or give the RuntimeClass overhead.podFixed)",
        ),
        (
            "kata",
            {"cpu": "1"},
            "spec.overhead is not RuntimeClass 'kata''s overhead.podFixed (the RuntimeClass admission "
            "controller refuses a pod overhead other than its class's: drop overhead, and the class sets it)",
        ),
        ("kata", {"cpu": "250m", "memory": "120Mi"}, ""),  # the class's own, in other words: admitted
        ("elsewhere", {"cpu": "1"}, ""),  # a class the stack does not hold is not judged
    ],
)
def test_a_pods_own_overhead_is_held_to_its_runtime_class(pack, runtime_class, overhead, said):
    # kubernetes plugin/pkg/admission/runtimeclass, validateOverhead
    classes = [
        lambda: k8s.node.v1.RuntimeClass("runc", metadata={"name": "runc"}, handler="runc"),
        lambda: k8s.node.v1.RuntimeClass(
            "kata",
            metadata={"name": "kata"},
            handler="kata",
            overhead={"pod_fixed": {"cpu": "0.25", "memory": "120Mi"}},
        ),
    ]
    spec = pod(overhead=overhead, **({"runtimeClassName": runtime_class} if runtime_class else {}))
    found = messages(judge(pack, stack(ON_DEMAND_AMD64, *classes, workload("sandboxed", spec))), REACH)
    assert found == (
        [f'deployment "sandboxed": {said}; Kubernetes refuses such a pod, so none is ever created'] if said else []
    )


@pytest.mark.parametrize("name", ["NVIDIA.com/gpu", "Nvidia.com/gpu", "nvidia.com/", "nvidia..com/gpu"])
def test_a_resource_name_kubernetes_refuses_is_named_before_any_taint(pack, name):
    # ValidateResourceName: a qualified name whose domain is a lowercase DNS subdomain
    spec = pod({"karpenter.sh/nodepool": "gpu"}, limits={name: 1})
    [message] = messages(judge(pack, stack(G5_POOL, workload("llm", spec))), REACH)
    assert message.startswith(
        f'deployment "llm": container "app": resources.limits.{name} is not a valid resource name: '
    )
    assert message.endswith("; Kubernetes refuses such a pod, so none is ever created")


def test_an_argo_rollouts_pods_are_judged_as_a_deployments(pack):
    # argoproj.io Rollout: spec.template is a Deployment's pod template
    rollout = lambda: k8s.apiextensions.CustomResource(  # noqa: E731
        "canary",
        api_version="argoproj.io/v1alpha1",
        kind="Rollout",
        metadata={"name": "canary"},
        spec={
            "selector": {"matchLabels": {"app": "canary"}},
            "template": {"metadata": {"labels": {"app": "canary"}}, "spec": pod(limits={"nvidia.com/gpu": 4})},
        },
    )
    [message] = messages(judge(pack, stack(ON_DEMAND_AMD64, G5_POOL, rollout)), REACH)
    assert message.startswith('rollout "canary" fits no lane: it requests nvidia.com/gpu 4; ')


def test_a_daemonset_is_held_only_to_the_pools_that_run_it(pack):
    # a pool that does not define a custom label the DaemonSet requires never runs it (Karpenter's
    # Requirements.Compatible): a GPU-node agent on nvidia.com/gpu.present is not judged on CPU nodes
    small = pool("small", [req("node.kubernetes.io/instance-type", "m6i.large")])
    big_gpu = pool(
        "gpu",
        [req("node.kubernetes.io/instance-type", "g5.12xlarge")],
        taints=GPU_TAINTS,
        labels={"nvidia.com/gpu.present": "true"},
    )
    agent = workload(
        "agent",
        pod({"nvidia.com/gpu.present": "true"}, [{"operator": "Exists"}], requests={"cpu": "3"}),
        kind=k8s.apps.v1.DaemonSet,
    )
    assert messages(judge(pack, stack(small, big_gpu, agent)), REACH) == []


def test_nvidia_resources_that_are_not_gpus_are_not_gpu_slices(pack):
    # the NVIDIA Network Operator's nvidia.com/hostdev is a network device, not a part of a GPU
    nic = workload("rdma", pod(limits={"nvidia.com/hostdev": 1}))
    assert messages(judge(pack, stack(ON_DEMAND_AMD64, nic)), REACH) == []


def test_a_v1beta1_gpu_claim_counts_as_the_v1_one(pack):
    def claim(version: str, request: dict[str, Any]) -> Callable[[], Any]:
        return lambda: k8s.apiextensions.CustomResource(
            f"gpu-{version}",
            api_version=f"resource.k8s.io/{version}",
            kind="ResourceClaimTemplate",
            metadata={"name": "gpu"},
            spec={"spec": {"devices": {"requests": [request]}}},
        )

    claims = pod(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu"}])
    v1 = claim("v1", {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}})
    v1beta1 = claim("v1beta1", {"name": "gpu", "deviceClassName": "gpu.nvidia.com"})
    for template in (v1, v1beta1):
        [message] = messages(judge(pack, stack(ON_DEMAND_AMD64, template, workload("dra", claims))), REACH)
        assert message.startswith(
            'deployment "dra" claims 1 nvidia.com/gpu through DRA (gpu), but this rack has no GPU lane'
        )


def bottlerocket_group_on_a_template() -> Any:
    """A Bottlerocket managed node group whose launch template sizes both of its volumes: the OS volume
    (``/dev/xvda``, 4 GiB) and the data volume (``/dev/xvdb``, 100 GiB), where Bottlerocket keeps ephemeral storage."""
    template = aws.ec2.LaunchTemplate(
        "br-template",
        block_device_mappings=[
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=device, ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(volume_size=size)
            )
            for device, size in (("/dev/xvda", 4), ("/dev/xvdb", 100))
        ],
    )
    return eks_node_group("br", template, instance_types=["m6i.xlarge"], ami_type="BOTTLEROCKET_x86_64")


@pytest.mark.parametrize("gib, fits", [(50, True), (150, False)])
def test_a_bottlerocket_groups_ephemeral_storage_is_its_data_volume(pack, gib, fits):
    """Bottlerocket keeps ephemeral storage on its data volume (``/dev/xvdb``; the OS volume holds the OS only), so a
    node group's launch template is read at the OS family's data device, as a Karpenter pool's EC2NodeClass is.
    (Upstream: Karpenter's Bottlerocket family maps ``/dev/xvda`` to the OS and ``/dev/xvdb`` to the data volume,
    aws/karpenter-provider-aws ``pkg/providers/amifamily/bottlerocket.go``, ``DefaultBlockDeviceMappings``; the
    record holding both is checked against it in test_osfamily.py.)"""
    found = messages(
        judge(
            pack,
            stack(
                bottlerocket_group_on_a_template, workload("scratch", pod(requests={"ephemeral-storage": f"{gib}Gi"}))
            ),
        ),
        REACH,
    )
    assert (found == []) is fits, found
