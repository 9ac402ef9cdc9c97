"""``workloads-reach-their-lane`` (mandatory) and ``gpu-lanes-for-gpu-workloads`` (advisory), through
the pack's real gRPC server, over the prod rack plus workloads written by our ``Service`` or by hand.

Kubernetes facts the policy follows (and these tests pin):

* ``ToleratesTaint`` (kubernetes/kubernetes ``staging/src/k8s.io/api/core/v1/toleration.go``): an empty
  toleration effect matches every effect, else the effects must be equal; an empty key (with
  ``Exists``) matches every key, else the keys must be equal; ``Exists`` matches any value, ``Equal``
  (or no operator) an equal value, ``Lt``/``Gt`` compare integer values.
* The scheduler's ``TaintToleration`` filter only keeps pods off nodes for ``NoSchedule`` and
  ``NoExecute`` taints (``pkg/scheduler/framework/plugins/tainttoleration``); ``PreferNoSchedule`` is
  a preference.
* ``nodeSelector`` pairs all must match and the required affinity's terms are ORed, each term's
  expressions ANDed, an empty term matching nothing (``component-helpers/scheduling/corev1/nodeaffinity``).
* The seeds refuse a deploy whose ``convox.io/nodepool`` names a pool the rack lacks, naming the pool
  and the existing pools (convox/convox ``provider/k8s/karpenter.go``, ``validateNodePool``); the pack
  says the same, naming the pool as every rule of the rack does: ``service "web" targets karpenter
  nodepool 'gpu-lg', which does not exist on this rack``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import Any, Callable, Optional

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s
import pytest

from mixed_os_racks import contract
from mixed_os_racks import ClusterRef, Rack, RackArgs, Service, ServiceArgs, ServiceSpec, load_stack_config
from mixed_os_racks.offline import run_program
from mixed_os_racks.cli import main
from mixed_os_racks.pack import checks, workloads
from conftest import REPO, rack_config, stack_config
from policy_helpers import judge, messages, node_class, node_pool, of, start_pack, unknown

REACH = "workloads-reach-their-lane"
SQUAT = "gpu-lanes-for-gpu-workloads"

WEB = {"name": "web", "image": "nginxinc/nginx-unprivileged:1.27", "port": 8080, "scale": {"count": "2-6", "cpu": 256}}
INFERENCE = {
    "name": "inference",
    "image": "vllm/vllm-openai:v0.6.4",
    "port": 8000,
    "internal": True,
    "scale": {"count": 1, "memory": 12288, "gpu": {"count": 1, "vendor": "nvidia"}},
    "nodeSelectorLabels": {"convox.io/label": "gpu-inference"},
}
GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
SEEDS_LANES = [
    {"name": "workload", "labels": {"convox.io/nodepool": "workload"}, "taints": [], "gpu": False},
    {
        "name": "gpu",
        "labels": {"convox.io/nodepool": "gpu", "convox.io/gpu-vendor": "nvidia"},
        "taints": [
            {"key": "dedicated-node", "value": "gpu", "effect": "NoSchedule"},
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
        ],
        "gpu": True,
    },
    {
        "name": "rack-ng-1",
        "labels": {"convox.io/label": "gpu-inference", "convox.io/gpu-vendor": "nvidia"},
        "taints": [
            {"key": "dedicated-node", "value": "gpu-inference", "effect": "NO_SCHEDULE"},
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
        ],
        "gpu": True,
    },
]


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:
        yield running


def services(*fields: dict[str, Any]) -> Callable[[ClusterRef], None]:
    def add(cluster: ClusterRef) -> None:
        for f in fields:
            Service(f["name"], ServiceArgs(service=ServiceSpec(**f), cluster=cluster))

    return add


NETWORK_KEYS = (
    "rack:cluster_mode",
    "rack:vpc_id",
    "rack:private_subnets_ids",
    "rack:public_subnets_ids",
    "rack:eks_api_server_public_access_cidrs",
    "rack:cluster_admin_arns",
)


def on_rack(*extra: Callable[[ClusterRef], Any], stack: str = "prod", whole: bool = False) -> Any:
    """The ``stack``'s lanes (its own stack config) plus ``extra`` workloads in its cluster, run offline:
    in the existing cluster of that name (the same lanes, without the cluster and Karpenter, which
    decide nothing here), or ``whole``, as the stack builds it."""
    config = stack_config(stack)
    if not whole:
        config = {k: v for k, v in config.items() if k not in NETWORK_KEYS}

    def program() -> None:
        rack = Rack("rack", RackArgs(spec=load_stack_config()))
        for add in extra:
            add(rack.cluster)

    return run_program(program, config, stack=stack)


def alone(*extra: Callable[[ClusterRef], Any]) -> Any:
    """Workloads in a stack of their own (the rack is another stack)."""

    def program() -> None:
        cluster = ClusterRef.existing("prod", "prod-rack")
        for add in extra:
            add(cluster)

    return run_program(program, {"aws:region": "us-east-1"}, stack="apps")


def pod(
    node_selector: Optional[dict[str, str]] = None,
    tolerations: Optional[list[dict[str, str]]] = None,
    gpus: int = 0,
    affinity: Optional[dict[str, Any]] = None,
) -> dict[str, Any]:
    """A pod spec as another team writes one."""
    container: dict[str, Any] = {"name": "app", "image": "busybox:1.36"}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    spec: dict[str, Any] = {"containers": [container]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    if affinity:
        spec["affinity"] = affinity
    return spec


def deployment(name: str, spec: dict[str, Any], kind: Any = k8s.apps.v1.Deployment) -> Callable[[ClusterRef], Any]:
    def add(cluster: ClusterRef) -> Any:
        return kind(
            name,
            metadata={"name": name},
            spec={
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
            },
        )

    return add


# ---- the seeds' app -------------------------------------------------------------------------------------------


def test_the_seeds_app_passes_every_policy(pack):
    violations = judge(pack, on_rack(services(WEB, INFERENCE), whole=True))
    assert violations == []


def test_the_mixed_app_example_previews_clean_offline(capsys):
    code = main(["preview", "--cwd", str(REPO / "examples" / "mixed-app"), "--stack", "example"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Policies:" not in out
    assert "rack:index:Service" in out and "kubernetes:apps/v1:Deployment" in out


# ---- refused, with the seeds' words ----------------------------------------------------------------------------------


def test_a_service_aimed_at_a_missing_pool(pack):
    lost = {**WEB, "nodeSelectorLabels": {"convox.io/nodepool": "gpu-lg"}}
    violations = judge(pack, on_rack(services(lost)))
    assert messages(violations, REACH) == [  # nothing close enough to suggest
        "service \"web\" targets karpenter nodepool 'gpu-lg', which does not exist on this rack (existing pools: gpu, "
        "workload)"
    ]
    typo = {**WEB, "nodeSelectorLabels": {"convox.io/nodepool": "wrokload"}}
    assert messages(judge(pack, on_rack(services(typo))), REACH) == [
        "service \"web\" targets karpenter nodepool 'wrokload', which does not exist on this rack "
        "(did you mean 'workload'? existing pools: gpu, workload)"
    ]
    assert of(violations, REACH)[0]["urn"].endswith("kubernetes:apps/v1:Deployment::web-deployment")


def test_a_service_aimed_at_a_missing_node_group_label(pack):
    lost = {**INFERENCE, "nodeSelectorLabels": {"convox.io/label": "gpu-inferense"}}
    assert messages(judge(pack, on_rack(services(lost))), REACH) == [
        'service "inference" targets node group label "gpu-inferense", which does not exist on this rack '
        "(did you mean 'gpu-inference'? existing labels: gpu-inference)"
    ]


def test_a_gpu_service_on_a_rack_with_no_gpu_lane(pack):
    assert messages(judge(pack, on_rack(services({**INFERENCE, "nodeSelectorLabels": {}}), stack="dev")), REACH) == [
        'service "inference" requests 1 nvidia.com/gpu, but this rack has no GPU lane '
        "(add a Karpenter pool or node group with GPU instance types)"
    ]


def test_a_service_selecting_a_label_no_lane_declares_is_told_in_both_cases(pack):
    # the rack's nodes carry only what their lanes declare: such a service lands only on nodes from elsewhere
    team = {**WEB, "nodeSelectorLabels": {"team": "ml"}}
    found = judge(pack, on_rack(services(team)))
    assert messages(found, REACH) == []
    [advice] = messages(found, REACH, "advisory")
    assert (
        'service "web" selects team=ml, which no lane of this rack declares, so it can land only on nodes from '
        "outside the rack (name them in the policy config's lanes to have it judged, or select a lane of the rack: "
        "convox.io/nodepool: gpu, convox.io/nodepool: workload, convox.io/label: gpu-inference)"
    ) in advice
    gpu_team = {**INFERENCE, "nodeSelectorLabels": {"team": "ml"}}
    [refusal] = messages(judge(pack, on_rack(services(gpu_team))), REACH)
    assert refusal.startswith(
        'service "inference" requests 1 nvidia.com/gpu, but it selects team=ml, which no lane of this rack declares'
    )


def test_a_custom_label_named_like_a_well_known_one_is_not_taken_for_it(pack):
    # instance-type (no domain) is the team's own label, not node.kubernetes.io/instance-type
    found = judge(pack, on_rack(deployment("trainer", pod({"instance-type": "trn1-32xl"}))))
    assert not any("launches" in m for m in messages(found, REACH))
    [advice] = messages(found, REACH, "advisory")
    assert 'deployment "trainer" selects instance-type=trn1-32xl, which no lane of this rack declares' in advice


def test_a_gpu_service_with_no_selector(pack):
    assert messages(judge(pack, on_rack(services({**INFERENCE, "nodeSelectorLabels": {}}))), REACH) == [
        'service "inference" requests 1 nvidia.com/gpu but selects no lane, and the default lane has no GPUs '
        "(select a GPU lane in nodeSelectorLabels: convox.io/nodepool: gpu, or convox.io/label: gpu-inference)"
    ]


def test_a_gpu_service_on_the_default_lane(pack):
    cpu_lane = {**INFERENCE, "nodeSelectorLabels": {"convox.io/nodepool": "workload"}}
    assert messages(judge(pack, on_rack(services(cpu_lane))), REACH) == [
        'service "inference" requests 1 nvidia.com/gpu, but it selects karpenter workload nodepool, which has no GPUs '
        "(select a GPU lane: convox.io/nodepool: gpu, or convox.io/label: gpu-inference)"
    ]


def test_a_dedicated_lane_without_its_toleration(pack):
    hand_written = pod({"convox.io/label": "gpu-inference"}, [GPU], gpus=1)
    assert messages(judge(pack, on_rack(deployment("inference", hand_written))), REACH) == [
        'deployment "inference" selects node group "rack-ng-1" (convox.io/label=gpu-inference) but does not tolerate '
        "its taint dedicated-node=gpu-inference:NoSchedule (add the toleration {key: dedicated-node, operator: Equal, "
        "value: gpu-inference, effect: NoSchedule}; the Service component adds it for nodeSelectorLabels "
        "convox.io/nodepool and convox.io/label)"
    ]


def test_a_dedicated_pool_without_either_toleration(pack):
    """EKS runs the ExtendedResourceToleration admission controller (EKS user guide, platform versions): a pod
    requesting nvidia.com/gpu gets {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}, so only the
    dedicated taint is left untolerated; a pod asking for no GPU gets nothing and tolerates neither."""
    hand_written = pod({"convox.io/nodepool": "gpu"}, gpus=2)
    assert messages(judge(pack, on_rack(deployment("trainer", hand_written))), REACH) == [
        "deployment \"trainer\" selects karpenter nodepool 'gpu' but does not tolerate its taint "
        "dedicated-node=gpu:NoSchedule (add the toleration {key: dedicated-node, "
        "operator: Equal, value: gpu, effect: NoSchedule}; the Service component adds it for nodeSelectorLabels "
        "convox.io/nodepool and convox.io/label)"
    ]
    no_gpu = pod({"convox.io/nodepool": "gpu"})
    assert messages(judge(pack, on_rack(deployment("cruncher", no_gpu))), REACH) == [
        "deployment \"cruncher\" selects karpenter nodepool 'gpu' but does not tolerate its taints "
        "dedicated-node=gpu:NoSchedule, nvidia.com/gpu=true:NoSchedule (add the toleration {key: dedicated-node, "
        "operator: Equal, value: gpu, effect: NoSchedule}; the Service component adds it for nodeSelectorLabels "
        "convox.io/nodepool and convox.io/label; it requests no GPU: select a lane without GPUs, or request "
        "nvidia.com/gpu)"
    ]


def _required(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": term} for term in terms]
            }
        }
    }


def test_a_lane_a_workload_names_must_take_it_unless_another_it_names_does(pack):
    """Terms and values are ORed: a pod naming the default pool beside a dedicated one lands on the default
    pool; naming only lanes whose taints it does not tolerate is refused."""
    either = _required([{"key": "convox.io/nodepool", "operator": "In", "values": ["workload", "gpu"]}])
    assert messages(judge(pack, on_rack(deployment("api", pod(affinity=either)))), REACH) == []
    only_gpu = _required([{"key": "convox.io/nodepool", "operator": "In", "values": ["gpu"]}])
    [message] = messages(judge(pack, on_rack(deployment("api", pod(affinity=only_gpu)))), REACH)
    assert message.startswith(
        "deployment \"api\" selects karpenter nodepool 'gpu' but does not tolerate its taints "
        "dedicated-node=gpu:NoSchedule, nvidia.com/gpu=true:NoSchedule"
    )
    by_vendor = _required([{"key": "convox.io/gpu-vendor", "operator": "In", "values": ["nvidia"]}])
    tolerates_the_pool = pod(tolerations=[{"key": "dedicated-node", "value": "gpu"}, GPU], affinity=by_vendor, gpus=1)
    assert (
        messages(judge(pack, on_rack(deployment("trainer", tolerates_the_pool))), REACH) == []
    )  # one GPU lane takes it


def test_a_missing_lane_among_alternatives_is_no_refusal(pack):
    # a pool that no longer exists, offered beside one that does: the scheduler takes the one that exists
    values = _required([{"key": "convox.io/nodepool", "operator": "In", "values": ["legacy-general", "workload"]}])
    terms = _required(
        [{"key": "convox.io/nodepool", "operator": "In", "values": ["legacy-general"]}],
        [{"key": "convox.io/nodepool", "operator": "In", "values": ["workload"]}],
    )
    for affinity in (values, terms):
        assert messages(judge(pack, on_rack(deployment("api", pod(affinity=affinity)))), REACH) == []
    [message] = messages(judge(pack, on_rack(deployment("api", pod({"convox.io/nodepool": "legacy-general"})))), REACH)
    assert "karpenter nodepool 'legacy-general', which does not exist on this rack" in message


@pytest.mark.parametrize(
    "spec",
    [
        # the Karpenter chart's own placement: off Karpenter's nodes, on Linux, tolerating CriticalAddonsOnly
        pod(
            {"kubernetes.io/os": "linux"},
            [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
            affinity=_required([{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]),
        ),
        # an EKS node group of the cluster that the stack does not hold, by the name EKS labels its nodes with
        pod({"eks.amazonaws.com/nodegroup": "system", "eks.amazonaws.com/capacityType": "ON_DEMAND"}),
    ],
    ids=["karpenter-chart", "other-node-group"],
)
def test_a_selection_aimed_at_nodes_outside_the_stack_passes(pack, spec):
    # the stack's only non-Karpenter lane is the tainted GPU node group; these pods run on the cluster's
    # system nodes, which an existing cluster has and the stack does not hold
    assert messages(judge(pack, on_rack(deployment("controller", spec))), REACH) == []


KINDS = [
    (
        "StatefulSet",
        lambda name, spec: k8s.apps.v1.StatefulSet(
            name,
            metadata={"name": name},
            spec={
                "serviceName": name,
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
            },
        ),
    ),
    (
        "DaemonSet",
        lambda name, spec: k8s.apps.v1.DaemonSet(
            name,
            metadata={"name": name},
            spec={
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
            },
        ),
    ),
    (
        "ReplicaSet",
        lambda name, spec: k8s.apps.v1.ReplicaSet(
            name,
            metadata={"name": name},
            spec={
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
            },
        ),
    ),
    (
        "ReplicationController",
        lambda name, spec: k8s.core.v1.ReplicationController(
            name,
            metadata={"name": name},
            spec={"selector": {"app": name}, "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
        ),
    ),
    (
        "Job",
        lambda name, spec: k8s.batch.v1.Job(
            name, metadata={"name": name}, spec={"template": {"spec": {**spec, "restartPolicy": "Never"}}}
        ),
    ),
    (
        "CronJob",
        lambda name, spec: k8s.batch.v1.CronJob(
            name,
            metadata={"name": name},
            spec={
                "schedule": "0 * * * *",
                "jobTemplate": {"spec": {"template": {"spec": {**spec, "restartPolicy": "Never"}}}},
            },
        ),
    ),
    ("Pod", lambda name, spec: k8s.core.v1.Pod(name, metadata={"name": name}, spec=spec)),
    (
        "Deployment",
        lambda name, spec: k8s.apps.v1beta2.Deployment(
            name,
            metadata={"name": name},
            spec={
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
            },
        ),
    ),
    (
        "Deployment",
        lambda name, spec: k8s.extensions.v1beta1.Deployment(
            name, metadata={"name": name}, spec={"template": {"metadata": {"labels": {"app": name}}, "spec": spec}}
        ),
    ),
    (
        "CronJob",
        lambda name, spec: k8s.batch.v1beta1.CronJob(
            name,
            metadata={"name": name},
            spec={"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": spec}}}},
        ),
    ),
]


@pytest.mark.parametrize(("kind", "build"), KINDS, ids=[f"{k}-{n}" for n, (k, _) in enumerate(KINDS)])
def test_every_kind_of_pod_template_is_judged(pack, kind, build):
    """By node selector or by required affinity, in any API group and version the kind comes in."""
    by_affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "convox.io/nodepool", "operator": "In", "values": ["gpu-xl"]}]}
                ]
            }
        }
    }
    violations = judge(
        pack,
        on_rack(
            lambda _: build("team-a", pod({"convox.io/nodepool": "gpu-lg"})),
            lambda _: build("team-b", pod(affinity=by_affinity)),
        ),
    )
    assert sorted(messages(violations, REACH)) == [
        f"{kind.lower()} \"team-a\" targets karpenter nodepool 'gpu-lg', which does not exist on this rack "
        "(existing pools: gpu, workload)",
        f"{kind.lower()} \"team-b\" targets karpenter nodepool 'gpu-xl', which does not exist on this rack "
        "(existing pools: gpu, workload)",
    ]


@pytest.mark.parametrize(
    ("type_", "kind"),
    [
        ("kubernetes:apps/v1:Deployment", "Deployment"),
        ("kubernetes:apps/v1beta1:Deployment", "Deployment"),
        ("kubernetes:extensions/v1beta1:DaemonSet", "DaemonSet"),
        ("kubernetes:batch/v1:CronJob", "CronJob"),
        ("kubernetes:batch/v2alpha1:CronJob", "CronJob"),
        ("kubernetes:core/v1:Pod", "Pod"),
        ("kubernetes:example.com/v1:Deployment", None),
        ("kubernetes:core/v1:Service", None),
        ("kubernetes:apps/v1:DeploymentPatch", None),
        ("kubernetes:apps/v1:Deployment:extra", None),
    ],
)
def test_workload_kinds_by_group_whatever_the_version(type_, kind):
    assert workloads.workload_kind(type_) == kind


def test_a_custom_taint_is_not_tolerated_automatically(pack):
    lanes = [
        *SEEDS_LANES,
        {
            "name": "ml",
            "labels": {"convox.io/label": "ml"},
            "taints": [
                {"key": "team", "value": "ml", "effect": "NoSchedule"},
                {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
            ],
        },
    ]
    config = {REACH: {"lanes": lanes}}
    ml = {**WEB, "nodeSelectorLabels": {"convox.io/label": "ml"}}
    assert messages(judge(pack, alone(services(ml)), config), REACH) == [
        'service "web" selects lane "ml" (convox.io/label=ml) but does not tolerate its taint team=ml:NoSchedule '
        "(add a toleration for it: custom taints are not tolerated automatically)"
    ]
    tolerated = deployment("web", pod({"convox.io/label": "ml"}, [{"key": "team", "operator": "Equal", "value": "ml"}]))
    assert messages(judge(pack, alone(tolerated), config), REACH) == []  # PreferNoSchedule does not keep it off


def test_a_pool_is_named_by_the_label_its_nodes_carry_as_the_seeds_read_it(pack):
    """The seeds list a rack's pools by ``spec.template.metadata.labels["convox.io/nodepool"]``, never by
    ``metadata.name``: a NodePool without the label has no node a ``convox.io/nodepool`` selector matches."""

    def unlabelled(_: ClusterRef) -> None:
        k8s.apiextensions.CustomResource(
            "batch-nodepool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": "batch"},
            spec={
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "workload"},
                        "requirements": [],
                    }
                }
            },
        )

    violations = judge(pack, on_rack(unlabelled, deployment("reports", pod({"convox.io/nodepool": "batch"}))))
    assert messages(violations, REACH) == [
        "deployment \"reports\" targets karpenter nodepool 'batch', which does not exist on this rack (existing pools: "
        "gpu, workload; NodePool 'batch' exists, but its nodes carry no convox.io/nodepool=batch label: add it to its "
        "spec.template.metadata.labels)"
    ]
    assert (
        messages(
            judge(pack, on_rack(unlabelled, deployment("reports", pod({"karpenter.sh/nodepool": "batch"})))), REACH
        )
        == []
    )


def test_the_racks_own_gpu_daemonsets_reach_every_gpu_lane(pack):
    """The device plugin and dcgm-exporter, scheduled as our chart values schedule them (when a preview
    expands their charts, the pack sees these DaemonSets): no refusal, no advisory."""
    from mixed_os_racks import gpu

    values = gpu.device_plugin_values()
    spec = pod(tolerations=values["tolerations"], affinity=values["affinity"])
    violations = judge(pack, on_rack(deployment("nvidia-device-plugin", spec, kind=k8s.apps.v1.DaemonSet)))
    assert of(violations, REACH) == [] and of(violations, SQUAT) == []


# ---- the advisory -------------------------------------------------------------------------------------------------


def test_a_workload_that_could_squat_on_gpu_nodes_gets_an_advisory(pack):
    everything = [{"operator": "Exists"}]
    violations = judge(
        pack,
        on_rack(
            lambda _: k8s.batch.v1.CronJob(
                "reports",
                metadata={"name": "reports"},
                spec={
                    "schedule": "0 * * * *",
                    "jobTemplate": {
                        "spec": {"template": {"spec": {**pod(tolerations=everything), "restartPolicy": "Never"}}}
                    },
                },
            ),
            deployment("node-exporter", pod(tolerations=everything), kind=k8s.apps.v1.DaemonSet),
            services(INFERENCE),
        ),
    )
    assert messages(violations, REACH) == []
    assert messages(violations, SQUAT, "advisory") == [
        "cronjob \"reports\" requests no GPU but tolerates the nvidia.com/gpu taint of karpenter nodepool 'gpu', "
        'node group "rack-ng-1" (convox.io/label=gpu-inference), so it can take a GPU node '
        "(drop the toleration, or request nvidia.com/gpu)"
    ]


def test_the_advisory_only_counts_gpu_lanes_the_workload_can_reach(pack):
    pinned = pod({"convox.io/nodepool": "gpu"}, [{"key": "dedicated-node", "operator": "Exists"}, GPU])
    violations = judge(pack, on_rack(deployment("batch", pinned)))
    assert messages(violations, SQUAT, "advisory") == [
        "deployment \"batch\" requests no GPU but tolerates the nvidia.com/gpu taint of karpenter nodepool 'gpu', "
        "so it can take a GPU node (drop the toleration, or request nvidia.com/gpu)"
    ]
    assert messages(violations, REACH) == []


# ---- lanes from elsewhere ---------------------------------------------------------------------------------------


def test_lanes_from_the_policy_config_when_the_rack_is_another_stack(pack):
    config = {REACH: {"lanes": SEEDS_LANES}, SQUAT: {"lanes": SEEDS_LANES}}
    assert judge(pack, alone(services(WEB, INFERENCE)), config) == []
    lost = {**WEB, "nodeSelectorLabels": {"convox.io/nodepool": "gpu-lg"}}
    assert messages(judge(pack, alone(services(lost)), config), REACH) == [
        "service \"web\" targets karpenter nodepool 'gpu-lg', which does not exist on this rack (existing pools: gpu, "
        "workload)"
    ]


def test_with_no_lanes_anywhere_it_says_what_would_make_it_verifiable(pack):
    violations = judge(pack, alone(services(WEB, INFERENCE)))
    assert messages(violations, REACH) == []
    (advisory,) = messages(violations, REACH, "advisory")
    assert advisory.startswith(
        f"can't run policy '{REACH}' from policy pack 'mixed-os-racks@v0.0.1' during preview: "
        'service "inference": cannot verify that it can land where it asks: this stack declares no lanes'
    )
    assert "set lanes: [{name, labels, taints, gpu}]" in advisory


def test_a_lanes_config_the_schema_refuses(pack):
    from mixed_os_racks.offline.policyconfig import PolicyPackError, parse_config

    run = alone(services(WEB))
    with pytest.raises(PolicyPackError, match=r"lanes"):
        pack.configure(
            parse_config({REACH: {"lanes": [{"name": "x", "taints": [{"key": "a", "effect": "Sometimes"}]}]}}), run
        )


def _readme_jq_program() -> str:
    readme = (REPO / "docs" / "components.md").read_text(encoding="utf-8")
    match = re.search(r"pulumi stack output lanes --json[^\n]*\n\s*\| jq '([^']+)'", readme)
    assert match, "docs/components.md shows how to turn the rack's lanes output into the policy config"
    return match.group(1)


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_readme_turns_the_rack_stacks_lanes_output_into_the_policy_config(pack):
    """The rack program's ``lanes`` stack output: ``{<lane>: {kind, os, labels, taints: [{key, value, effect}], gpu,
    ami}}``."""
    output = {
        "workload": {
            "kind": "nodepool",
            "os": "bottlerocket",
            "labels": {"convox.io/nodepool": "workload"},
            "taints": [],
            "gpu": False,
            "ami": {"alias": "bottlerocket@latest"},
        },
        "gpu": {
            "kind": "nodepool",
            "os": "al2023",
            "labels": SEEDS_LANES[1]["labels"],
            "taints": SEEDS_LANES[1]["taints"],
            "gpu": True,
            "ami": {"id": "ami-0a1b2c3d4e5f60718"},
        },
        "rack-ng-1": {
            "kind": "nodegroup",
            "os": "al2023",
            "labels": SEEDS_LANES[2]["labels"],
            "taints": [
                {"key": "dedicated-node", "value": "gpu-inference", "effect": "NO_SCHEDULE"},
                {"key": "nvidia.com/gpu", "effect": "NO_SCHEDULE"},
            ],
            "gpu": True,
            "ami": {},
        },
    }
    converted = subprocess.run(
        ["jq", _readme_jq_program()], input=json.dumps(output), capture_output=True, text=True, check=True
    )
    config = json.loads(converted.stdout)
    assert judge(pack, alone(services(WEB, INFERENCE)), config) == []
    lost = {**INFERENCE, "nodeSelectorLabels": {"convox.io/label": "gpu"}}
    assert messages(judge(pack, alone(services(lost)), config), REACH) == [
        'service "inference" targets node group label "gpu", which does not exist on this rack (existing labels: '
        "gpu-inference)"
    ]


def test_lanes_from_hand_written_eks_and_pulumi_eks_node_groups(pack):
    """``aws.eks.NodeGroup`` labels and taints (EKS effect spelling), pulumi-eks ``NodeGroupV2`` taints
    (a map of key to value and effect)."""

    def groups(_: ClusterRef) -> None:
        aws.eks.NodeGroup(
            "ml",
            cluster_name="c",
            node_role_arn="arn:aws:iam::123456789012:role/n",
            subnet_ids=["s"],
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=1, min_size=1, max_size=2),
            instance_types=["g5.xlarge"],
            labels={"convox.io/label": "ml"},
            taints=[aws.eks.NodeGroupTaintArgs(key="dedicated-node", value="ml", effect="NO_SCHEDULE")],
        )
        eks.NodeGroupV2(
            "batch",
            cluster="c",
            instance_type="c6i.large",
            labels={"convox.io/label": "batch"},
            taints={"dedicated-node": eks.TaintArgs(value="batch", effect="NoSchedule")},
        )

    seeds = {
        "name": "trainer",
        "image": "i",
        "port": 1,
        "scale": {"gpu": 1},
        "nodeSelectorLabels": {"convox.io/label": "ml"},
    }
    placed = judge(pack, alone(groups, services(seeds)))
    assert of(placed, REACH) == [] and of(placed, SQUAT) == []
    violations = judge(
        pack,
        alone(
            groups,
            deployment("cruncher", pod({"convox.io/label": "batch"})),
            deployment("trainer", pod({"convox.io/label": "ml"}, gpus=1)),
        ),
    )
    assert sorted(messages(violations, REACH)) == [
        'deployment "cruncher" selects node group "batch" (convox.io/label=batch) but does not tolerate its taint '
        "dedicated-node=batch:NoSchedule (add the toleration {key: dedicated-node, operator: Equal, value: batch, "
        "effect: NoSchedule}; the Service component adds it for nodeSelectorLabels convox.io/nodepool and "
        "convox.io/label)",
        'deployment "trainer" selects node group "ml" (convox.io/label=ml) but does not tolerate its taint '
        "dedicated-node=ml:NoSchedule (add the toleration {key: dedicated-node, operator: Equal, value: ml, "
        "effect: NoSchedule}; the Service component adds it for nodeSelectorLabels convox.io/nodepool and "
        "convox.io/label)",
    ]


def test_a_selector_not_known_at_preview_is_an_advisory_not_a_verdict(pack):
    def late(_: ClusterRef) -> None:
        k8s.apps.v1.Deployment(
            "late",
            metadata={"name": "late"},
            spec={
                "selector": {"matchLabels": {"app": "late"}},
                "template": {
                    "metadata": {"labels": {"app": "late"}},
                    "spec": pod({"convox.io/nodepool": unknown("gpu-lg")}),
                },
            },
        )

    violations = judge(pack, on_rack(late))
    assert messages(violations, REACH) == []
    (advisory,) = messages(violations, REACH, "advisory")
    assert "deployment 'late'" in advisory and "can't be known during preview" in advisory


def test_our_components_registered_outputs_are_lanes():
    """Under the CLI a component's ``AnalyzeStack`` properties are its registered outputs: a
    ``KarpenterPool``'s ``nodePoolName``, ``labels`` and ``taints``, a ``NodeGroup``'s ``labels`` and
    ``taints``. Read from the outputs the seeds' rack really registers, they are the rack's lanes."""
    seeds = rack_config(
        karpenter_node_os="bottlerocket",
        additional_karpenter_nodepools_config=[
            {"name": "gpu", "instance_families": "g5,g6", "dedicated": True, "taints": "nvidia.com/gpu=true:NoSchedule"}
        ],
        additional_node_groups_config=[{"id": 1, "type": "g4dn.xlarge", "dedicated": True, "label": "gpu-inference"}],
    )
    run = run_program(lambda: Rack("rack", RackArgs(spec=load_stack_config())), seeds, stack="test")
    components = [
        checks.StackResource(r.type, r.name, r.urn, run.component_outputs[r.urn])
        for r in run.resources
        if r.type in (contract.COMPONENT_POOL, contract.COMPONENT_NODE_GROUP)
    ]
    lanes = workloads.read_lanes(components, {})
    assert sorted((lane.subject, lane.gpu, [str(t) for t in lane.taints]) for lane in lanes.lanes) == [
        ("karpenter nodepool 'gpu'", True, ["dedicated-node=gpu:NoSchedule", "nvidia.com/gpu=true:NoSchedule"]),
        ("karpenter workload nodepool", False, []),
        (
            'node group "rack-ng-1" (convox.io/label=gpu-inference)',
            True,
            ["dedicated-node=gpu-inference:NoSchedule", "nvidia.com/gpu=true:NoSchedule"],
        ),
    ]
    assert lanes.existing("convox.io/nodepool") == ["gpu", "workload"]


def test_a_components_registered_outputs_reach_the_stack_policies(pack):
    """The CLI's ``AnalyzeStack`` sends each resource's outputs (pulumi ``step_generator.go``,
    ``AnalyzeResources``: ``Properties: v.Outputs``); a component's outputs are what it registered with
    ``register_outputs``. A lane known only from a component's outputs is a lane the workload reaches."""

    class Lane(pulumi.ComponentResource):
        def __init__(self, label: str) -> None:
            super().__init__(contract.COMPONENT_NODE_GROUP, f"{label}-lane")
            self.register_outputs({"labels": {"convox.io/label": label}, "taints": []})

    def on_lane(label: str) -> Callable[[ClusterRef], None]:
        def program(cluster: ClusterRef) -> None:
            Lane(label)
            deployment("cruncher", pod({"convox.io/label": "batch"}))(cluster)

        return program

    assert messages(judge(pack, alone(on_lane("batch"))), REACH) == []
    assert messages(judge(pack, alone(on_lane("ml"))), REACH) == [
        'deployment "cruncher" targets node group label "batch", which does not exist on this rack (existing labels: '
        "ml)"
    ]


# ---- hand-written pools, as other teams publish them ---------------------------------------------------------

GPU_TAINT = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]


def gpu_pool_with(requirements: list[dict[str, Any]]) -> Callable[[ClusterRef], None]:
    """A GPU pool on g5/g6/p4d (all x86_64), tainted nvidia.com/gpu as in Karpenter's and AWS's GPU
    examples, with more ``requirements``; and a general pool on m7i."""

    def add(cluster: ClusterRef) -> None:
        node_class("gpu", [{"alias": "al2023@latest"}])
        k8s.apiextensions.CustomResource(
            "gpu-nodepool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata={"name": "gpu"},
            spec={
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                        "requirements": [
                            {
                                "key": "karpenter.k8s.aws/instance-family",
                                "operator": "In",
                                "values": ["g5", "g6", "p4d"],
                            },
                            *requirements,
                        ],
                        "taints": GPU_TAINT,
                    }
                }
            },
        )
        node_class("general", [{"alias": "al2023@latest"}])
        node_pool("general", families=["m7i"], labels={"workload": "general"})

    return add


def test_a_gpu_pod_tolerates_the_gpu_taint_through_eks_admission(pack):
    """ExtendedResourceToleration (on in every EKS platform version): a pod requesting nvidia.com/gpu gets
    the nvidia.com/gpu NoSchedule toleration without writing it."""
    job = deployment("infer", pod({"karpenter.sh/nodepool": "gpu"}, gpus=1))
    assert messages(judge(pack, alone(gpu_pool_with([]), job)), REACH) == []


def test_a_label_from_a_single_value_requirement_is_the_nodes(pack):
    """Karpenter labels a node with every requirement that allows one value (NodePools docs)."""
    selecting = deployment("infer", pod({"workload": "gpu"}, gpus=1))
    lanes = gpu_pool_with([{"key": "workload", "operator": "In", "values": ["gpu"]}])
    assert messages(judge(pack, alone(lanes, selecting)), REACH) == []


@pytest.mark.parametrize("selector", [{"kubernetes.io/arch": "arm64"}, {"karpenter.k8s.aws/instance-family": "m5"}])
def test_a_gpu_pod_whose_selection_no_gpu_instance_meets_is_refused(pack, selector):
    """Karpenter intersects the pod's requirements with the pool's: g5, g6 and p4d are x86_64 and none is m5."""
    gpu_pod = pod(
        selector, tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}], gpus=1
    )
    found = messages(judge(pack, alone(gpu_pool_with([]), deployment("infer", gpu_pod))), REACH)
    assert len(found) == 1 and found[0].startswith('deployment "infer" requests 1 nvidia.com/gpu')


def test_a_pod_that_excludes_gpu_instances_cannot_squat(pack):
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"}]}
                ]
            }
        }
    }
    tolerant = pod(
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}], affinity=affinity
    )
    violations = judge(pack, alone(gpu_pool_with([]), deployment("batch", tolerant)))
    assert messages(violations, SQUAT, "advisory") == []
    # without the exclusion it could take a GPU node
    loose = pod(tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    assert messages(judge(pack, alone(gpu_pool_with([]), deployment("batch", loose))), SQUAT, "advisory")


# ---- instance labels, with or without requests ----------------------------------------------------------------


@pytest.mark.parametrize(
    "selector",
    [
        {"convox.io/nodepool": "workload", "node.kubernetes.io/instance-type": "p5.48xlarge"},
        {"convox.io/nodepool": "workload", "karpenter.k8s.aws/instance-family": "p5"},
        {"convox.io/nodepool": "gpu", "karpenter.k8s.aws/instance-family": "m7i"},
    ],
)
def test_an_instance_label_a_lane_never_launches_is_refused_without_requests(pack, selector):
    """The prod workload pool launches m6i, m7i and c7i, its gpu pool g5 and g6 (Pulumi.prod.yaml): a pod that
    requests nothing but selects an instance type or family of neither never lands."""
    tolerations = (
        [{"key": "dedicated-node", "operator": "Exists"}, GPU] if selector["convox.io/nodepool"] == "gpu" else None
    )
    found = messages(judge(pack, on_rack(deployment("probe", pod(selector, tolerations)))), REACH)
    assert len(found) == 1 and found[0].startswith('deployment "probe" fits no lane: the nearest, '), found


# ---- placement the API server refuses -------------------------------------------------------------------------

TERMS = "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (
            pod({"convox.io/nodepool": "gpu-lg"}, [{"key": "dedicated-node", "operator": "Exists", "value": "gpu"}]),
            (
                "spec.template.spec.tolerations[0].value: 'gpu' with operator Exists, "
                "which takes no value (drop the value)"
            ),
        ),
        (
            pod(tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedul"}]),
            "spec.template.spec.tolerations[0].effect: 'NoSchedul' is not one of NoSchedule, PreferNoSchedule, "
            "NoExecute",
        ),
        (
            pod(tolerations=[{"key": "dedicated node", "operator": "Equal", "value": "gpu"}]),
            "spec.template.spec.tolerations[0].key: 'dedicated node': must be at most 63 letters, digits, '-', '_' or "
            "'.', "
            "starting and ending with a letter or digit",
        ),
        (
            pod(tolerations=[{"operator": "Equal", "value": "gpu"}]),
            "spec.template.spec.tolerations[0].operator: 'Equal' with no key (only Exists may leave the key empty, to "
            "tolerate every taint)",
        ),
        (
            pod(
                {"convox.io/nodepool": "gpu"},
                [{"key": "nvidia.com/gpu", "operator": "Exists", "tolerationSeconds": 60}],
            ),
            "spec.template.spec.tolerations[0].tolerationSeconds: only effect NoExecute takes it",
        ),
        (
            pod({"Convox.io/nodepool": "gpu"}),
            "spec.template.spec.nodeSelector: label 'Convox.io/nodepool': 'gpu': its prefix "
            "must be a DNS subdomain (lowercase, at most 253 characters) followed by '/'",
        ),
        (
            pod(affinity=_required([{"key": "convox.io/nodepool", "operator": "In"}])),
            f"{TERMS}[0].matchExpressions[0].values: none, and operator In needs at least one",
        ),
        (
            pod(affinity=_required([{"key": "convox.io/nodepool", "operator": "Exists", "values": ["gpu"]}])),
            f"{TERMS}[0].matchExpressions[0].values: ['gpu'] with operator Exists, which takes none",
        ),
        (
            pod(affinity=_required([{"key": "convox.io/node pool", "operator": "In", "values": ["gpu"]}])),
            f"{TERMS}[0].matchExpressions[0].key: 'convox.io/node pool': must be at most 63 letters, digits, '-', '_' "
            f"or '.', "
            "starting and ending with a letter or digit",
        ),
        (
            pod(affinity=_required([{"key": "convox.io/nodepool", "operator": "Equals", "values": ["gpu"]}])),
            f"{TERMS}[0].matchExpressions[0].operator: 'Equals' is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt",
        ),
        (
            pod(
                affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
            ),
            f"{TERMS}: empty, and a required node affinity must have at least one term (an empty term list would match "
            f"no node)",
        ),
    ],
)
def test_placement_the_api_server_refuses_is_named_before_any_lane(pack, spec, said):
    """kubernetes/kubernetes pkg/apis/core/validation/validation.go: ValidateTolerations (a key is a label key, and
    may be empty only with Exists; Exists takes no value; the effect is one of the three; tolerationSeconds only
    with NoExecute), the node selector as labels, and ValidateNodeSelector (at least one term; In/NotIn need values,
    Exists/DoesNotExist take none, keys are label keys, the six operators). The pod is never created, so the lane it
    names (gpu-lg is missing) is not what is said."""
    found = messages(judge(pack, on_rack(deployment("bad", spec))), REACH)
    assert found == [f'deployment "bad": {said}; Kubernetes refuses such a pod, so none is ever created'], found


@pytest.mark.parametrize("terms", [[{}], [{"matchExpressions": []}, {}]])
def test_a_required_affinity_whose_terms_are_all_empty_never_schedules(pack, terms):
    """The API server takes empty terms, but the scheduler matches an empty term to no node
    (kubernetes/kubernetes staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go)."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    found = messages(judge(pack, on_rack(deployment("nowhere", pod(affinity=affinity)))), REACH)
    assert found == [
        'deployment "nowhere" never schedules: every term of its required node affinity is empty, and an '
        "empty term matches no node (give each term matchExpressions, or drop the required node affinity)"
    ]


# ---- pods inside well-known custom resources ------------------------------------------------------------------


def custom(api_version: str, kind: str, name: str, spec: dict[str, Any]) -> Callable[[ClusterRef], Any]:
    def add(cluster: ClusterRef) -> Any:
        return k8s.apiextensions.CustomResource(
            name, api_version=api_version, kind=kind, metadata={"name": name}, spec=spec
        )

    return add


def _ray_cluster(head: dict[str, Any], worker: dict[str, Any]) -> dict[str, Any]:
    return {
        "rayVersion": "2.41.0",
        "headGroupSpec": {"rayStartParams": {}, "template": {"spec": head}},
        "workerGroupSpecs": [
            {
                "groupName": "gpu-group",
                "replicas": 1,
                "minReplicas": 1,
                "maxReplicas": 4,
                "rayStartParams": {},
                "template": {"spec": worker},
            }
        ],
    }


def _with_container(spec: dict[str, Any], **container: Any) -> dict[str, Any]:
    return {**spec, "containers": [{**spec["containers"][0], **container}]}


MISSING = pod({"convox.io/nodepool": "gpu-lg"})
GPU_ON_WORKLOAD = pod({"convox.io/nodepool": "workload"}, gpus=1)
CUSTOM_PODS = [
    # (api version, kind, spec, [(subject, the pod's spec as placed in it)])
    (
        "ray.io/v1",
        "RayCluster",
        _ray_cluster(MISSING, GPU_ON_WORKLOAD),
        ['raycluster "ray" head group', "raycluster \"ray\" worker group 'gpu-group'"],
    ),
    (
        "ray.io/v1",
        "RayJob",
        {"entrypoint": "python train.py", "rayClusterSpec": _ray_cluster(MISSING, GPU_ON_WORKLOAD)},
        ['rayjob "ray" head group', "rayjob \"ray\" worker group 'gpu-group'"],
    ),
    (
        "ray.io/v1",
        "RayService",
        {"serveConfigV2": "applications: []", "rayClusterConfig": _ray_cluster(MISSING, GPU_ON_WORKLOAD)},
        ['rayservice "ray" head group', "rayservice \"ray\" worker group 'gpu-group'"],
    ),
    (
        "kubeflow.org/v1",
        "PyTorchJob",
        {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": MISSING}},
                "Worker": {"replicas": 2, "restartPolicy": "OnFailure", "template": {"spec": GPU_ON_WORKLOAD}},
            }
        },
        ['pytorchjob "ray" replica Master', 'pytorchjob "ray" replica Worker'],
    ),
    (
        "batch.volcano.sh/v1alpha1",
        "Job",
        {
            "minAvailable": 2,
            "schedulerName": "volcano",
            "tasks": [
                {"name": "ps", "replicas": 1, "template": {"spec": MISSING}},
                {"name": "worker", "replicas": 2, "template": {"spec": GPU_ON_WORKLOAD}},
            ],
        },
        ["volcano job \"ray\" task 'ps'", "volcano job \"ray\" task 'worker'"],
    ),
    (
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        {
            "replicatedJobs": [
                {"name": "driver", "replicas": 1, "template": {"spec": {"template": {"spec": MISSING}}}},
                {
                    "name": "workers",
                    "replicas": 2,
                    "template": {"spec": {"parallelism": 2, "template": {"spec": GPU_ON_WORKLOAD}}},
                },
            ]
        },
        ["jobset \"ray\" replicated job 'driver'", "jobset \"ray\" replicated job 'workers'"],
    ),
    *(
        (
            version,
            kind,
            {
                field: {
                    first: {"replicas": 1, "template": {"spec": MISSING}},
                    "Worker": {"replicas": 2, "template": {"spec": GPU_ON_WORKLOAD}},
                }
            },
            [f'{kind.lower()} "ray" replica {first}', f'{kind.lower()} "ray" replica Worker'],
        )
        for version, kind, field, first in [
            ("kubeflow.org/v1", "TFJob", "tfReplicaSpecs", "PS"),
            ("kubeflow.org/v1", "XGBoostJob", "xgbReplicaSpecs", "Master"),
            ("kubeflow.org/v1", "PaddleJob", "paddleReplicaSpecs", "Master"),
            ("kubeflow.org/v2beta1", "MPIJob", "mpiReplicaSpecs", "Launcher"),
            ("kubeflow.org/v1", "MPIJob", "mpiReplicaSpecs", "Launcher"),
        ]
    ),
]


@pytest.mark.parametrize(
    ("api_version", "kind", "spec", "subjects"),
    CUSTOM_PODS,
    ids=[f"{c[1]}-{c[0].rsplit('/', 1)[1]}" for c in CUSTOM_PODS],
)
def test_pods_of_well_known_custom_resources_are_judged_as_a_deployments(pack, api_version, kind, spec, subjects):
    """Field paths: ray-project/kuberay ray-operator/apis/ray/v1 (raycluster_types.go headGroupSpec.template,
    workerGroupSpecs[].template; rayjob_types.go rayClusterSpec; rayservice_types.go rayClusterConfig);
    kubeflow/trainer v1 pytorch_types.go pytorchReplicaSpecs.<type>.template, and its other jobs the same way,
    each under a field of its own: tensorflow_types.go tfReplicaSpecs, xgboost_types.go xgbReplicaSpecs,
    paddlepaddle_types.go paddleReplicaSpecs, jax_types.go jaxReplicaSpecs, mpi_types.go mpiReplicaSpecs (the
    MPIJob of kubeflow/mpi-operator v2beta1, same group, keeps its Launcher and Worker under mpiReplicaSpecs too),
    each a map from a replica type to a replica spec whose template is a pod template; volcano-sh/apis batch/v1alpha1
    job.go tasks[].template; kubernetes-sigs/jobset api/jobset/v1alpha2 jobset_types.go
    replicatedJobs[].template (a JobTemplateSpec). Each pod is judged on its own: one names a missing pool,
    the other asks for a GPU on the pool that has none."""
    found = messages(judge(pack, on_rack(custom(api_version, kind, "ray", spec))), REACH)
    missing, gpu = subjects
    assert sorted(found) == sorted(
        [
            f"{missing} targets karpenter nodepool 'gpu-lg', which does not exist on this rack (existing pools: gpu, "
            f"workload)",
            f"{gpu} requests 1 nvidia.com/gpu, but it selects karpenter workload nodepool, which has no GPUs "
            "(select a GPU lane: convox.io/nodepool: gpu, or convox.io/label: gpu-inference)",
        ]
    ), found


def _missing(subject: str, pool: str) -> str:
    return (
        f"{subject} targets karpenter nodepool '{pool}', which does not exist on this rack "
        "(existing pools: gpu, workload)"
    )


def _gpu_on_workload(subject: str) -> str:
    return (
        f"{subject} requests 1 nvidia.com/gpu, but it selects karpenter workload nodepool, which has no GPUs "
        "(select a GPU lane: convox.io/nodepool: gpu, or convox.io/label: gpu-inference)"
    )


def test_a_knative_services_revision_template_is_a_pod(pack):
    """knative/serving pkg/apis/serving/v1 service_types.go: spec.template is a RevisionTemplateSpec, whose spec
    is a RevisionSpec that embeds a pod spec."""
    found = messages(
        judge(
            pack,
            on_rack(
                custom(
                    "serving.knative.dev/v1",
                    "Service",
                    "hello",
                    {"template": {"spec": {**GPU_ON_WORKLOAD, "containerConcurrency": 10}}},
                )
            ),
        ),
        REACH,
    )
    assert found == [_gpu_on_workload('knative service "hello"')]


def _serving(framework: str, **fields: Any) -> dict[str, Any]:
    """A predictor that names ``framework``, its container asking for a GPU, placed on the workload pool."""
    return {
        "nodeSelector": {"convox.io/nodepool": "workload"},
        "minReplicas": 1,
        **fields,
        framework: {
            "storageUri": "s3://models/llm",
            "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "24Gi"}},
        },
    }


@pytest.mark.parametrize(
    "predictor",
    [
        {
            "nodeSelector": {"convox.io/nodepool": "workload"},
            "minReplicas": 1,
            "model": {
                "modelFormat": {"name": "huggingface"},
                "args": ["--model_name=llama"],
                "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "24Gi"}},
            },
        },
        {**GPU_ON_WORKLOAD, "minReplicas": 1},
        *(_serving(framework) for framework in ("pytorch", "triton", "tensorflow", "huggingface", "onnx")),
        _serving("triton", model={"modelFormat": {"name": "sklearn"}}),
        _serving("sklearn", containers=[{"name": "logger", "image": "busybox:1.36"}]),
    ],
    ids=[
        "model",
        "containers",
        "pytorch",
        "triton",
        "tensorflow",
        "huggingface",
        "onnx",
        "framework-beside-a-model",
        "framework-and-a-sidecar",
    ],
)
def test_a_kserve_predictor_is_judged_by_its_model_container_or_its_pod(pack, predictor):
    """kserve/kserve pkg/apis/serving/v1beta1: a predictor carries a pod spec's fields itself (its containers,
    nodeSelector, tolerations, affinity) and may name what serves the model instead: a ``model``, or a framework key
    (predictor.go: sklearn, xgboost, tensorflow, pytorch, triton, onnx, huggingface, pmml, lightgbm, paddle). Either
    is a container spec written inline. KServe's defaulting webhook (inference_service_defaults.go) turns the first
    framework key it finds into the ``model``, fields untouched, dropping a ``model`` written beside it; the
    controller then runs that container first in the predictor's pod, after it the predictor's own containers, with
    the predictor's pod-level fields. So a framework's ``resources`` are the predictor pod's."""
    found = messages(
        judge(pack, on_rack(custom("serving.kserve.io/v1beta1", "InferenceService", "llm", {"predictor": predictor}))),
        REACH,
    )
    assert found == [_gpu_on_workload('inferenceservice "llm" predictor')]


def test_a_kserve_transformer_and_explainer_are_pods_of_their_own(pack):
    """kserve/kserve pkg/apis/serving/v1beta1: an InferenceService's ``transformer`` (transformer.go) and
    ``explainer`` (explainer.go) each become pods apart from the predictor's. A transformer is a pod spec written
    inline; an explainer is one too, or names an explainer framework (``art``; ``alibi`` and ``aix`` in earlier
    releases), a container spec the controller puts in its pod in place of the first container, with the
    explainer's own pod-level fields."""
    predictor = {"sklearn": {"storageUri": "gs://kfserving-examples/models/sklearn/1.0/model"}}
    transformer = {**pod({"convox.io/nodepool": "gpu-lg"}), "minReplicas": 1}
    explainer = {
        "nodeSelector": {"convox.io/nodepool": "workload"},
        "art": {"type": "SquareAttack", "resources": {"limits": {"nvidia.com/gpu": "1"}}},
    }
    found = messages(
        judge(
            pack,
            on_rack(
                custom(
                    "serving.kserve.io/v1beta1",
                    "InferenceService",
                    "cifar",
                    {"predictor": predictor, "transformer": transformer, "explainer": explainer},
                )
            ),
        ),
        REACH,
    )
    assert sorted(found) == sorted(
        [
            _missing('inferenceservice "cifar" transformer', "gpu-lg"),
            _gpu_on_workload('inferenceservice "cifar" explainer'),
        ]
    ), found


TRAIN = {
    "name": "train",
    "nodeSelector": {"convox.io/nodepool": "workload"},
    "container": {
        "image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
        "command": ["python", "train.py"],
        "resources": {"limits": {"nvidia.com/gpu": "1"}},
    },
}
PREP = {"name": "prep", "script": {"image": "python:3.12", "command": ["python"], "source": "print('prep')"}}
STEPS = {"name": "main", "steps": [[{"name": "prep", "template": "prep"}], [{"name": "train", "template": "train"}]]}


def test_an_argo_workflows_templates_take_placement_from_the_template_its_defaults_or_the_workflow(pack):
    """argoproj/argo-workflows pkg/apis/workflow/v1alpha1/workflow_types.go: a template's nodeSelector (likewise
    tolerations, affinity) overrides the workflow's; spec.templateDefaults apply to every template that sets no
    value of its own (docs/template-defaults.md). Templates that only run steps run no pod of their own."""
    with_defaults = {
        "entrypoint": "main",
        "nodeSelector": {"convox.io/nodepool": "gpu-lg"},
        "templateDefaults": {"nodeSelector": {"convox.io/nodepool": "gpu-xl"}},
        "templates": [STEPS, PREP, TRAIN],
    }
    plain = {"entrypoint": "main", "nodeSelector": {"convox.io/nodepool": "gpu-lg"}, "templates": [STEPS, PREP]}
    found = messages(
        judge(
            pack,
            on_rack(
                custom("argoproj.io/v1alpha1", "Workflow", "ml", with_defaults),
                custom("argoproj.io/v1alpha1", "Workflow", "etl", plain),
            ),
        ),
        REACH,
    )
    assert sorted(found) == sorted(
        [
            _missing("workflow \"ml\" template 'prep'", "gpu-xl"),
            _gpu_on_workload("workflow \"ml\" template 'train'"),
            _missing("workflow \"etl\" template 'prep'", "gpu-lg"),
        ]
    ), found


NIGHTLY = {"entrypoint": "main", "nodeSelector": {"convox.io/nodepool": "gpu-lg"}, "templates": [STEPS, PREP, TRAIN]}


@pytest.mark.parametrize(
    ("kind", "word", "spec"),
    [
        ("WorkflowTemplate", "workflowtemplate", NIGHTLY),
        ("ClusterWorkflowTemplate", "clusterworkflowtemplate", NIGHTLY),
        (
            "CronWorkflow",
            "cronworkflow",
            {"schedule": "0 3 * * *", "concurrencyPolicy": "Forbid", "workflowSpec": NIGHTLY},
        ),
    ],
    ids=["WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"],
)
def test_argo_workflow_templates_and_cron_workflows_are_judged_as_workflows(pack, kind, word, spec):
    """argoproj/argo-workflows pkg/apis/workflow/v1alpha1: a WorkflowTemplate and a ClusterWorkflowTemplate keep a
    whole workflow spec as their ``spec`` (workflow_template_types.go, cluster_workflow_template_types.go), and a
    CronWorkflow keeps the spec of the workflow it starts on schedule under ``spec.workflowSpec``
    (cron_workflow_types.go). The workflows made from them run those templates, so their pods are judged as a
    Workflow's: here the script template takes the spec's missing pool, the GPU template the workload pool."""
    found = messages(judge(pack, on_rack(custom("argoproj.io/v1alpha1", kind, "nightly", spec))), REACH)
    assert sorted(found) == sorted(
        [
            _missing(f"{word} \"nightly\" template 'prep'", "gpu-lg"),
            _gpu_on_workload(f"{word} \"nightly\" template 'train'"),
        ]
    ), found


def test_a_refusal_in_a_custom_resources_pod_names_where_the_field_is(pack):
    spec = {
        "entrypoint": "main",
        "templateDefaults": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "value": "true"}]},
        "templates": [{"name": "main", "container": {"image": "busybox:1.36"}}],
    }
    ray = _ray_cluster(pod(), pod(affinity=_required([{"key": "convox.io/nodepool", "operator": "NotIn"}])))
    found = messages(
        judge(
            pack,
            on_rack(
                custom("argoproj.io/v1alpha1", "Workflow", "ml", spec),
                custom(
                    "argoproj.io/v1alpha1", "CronWorkflow", "nightly", {"schedule": "0 3 * * *", "workflowSpec": spec}
                ),
                custom("ray.io/v1", "RayCluster", "ray", ray),
            ),
        ),
        REACH,
    )
    assert sorted(found) == sorted(
        [
            "cronworkflow \"nightly\" template 'main': spec.workflowSpec.templateDefaults.tolerations[0].value: 'true' "
            "with "
            "operator Exists, which takes no value (drop the value); Kubernetes refuses such a pod, so none is ever "
            "created",
            "raycluster \"ray\" worker group 'gpu-group': spec.workerGroupSpecs[0].template.spec.affinity.nodeAffinity."
            "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: none, and "
            "operator NotIn needs at least one; Kubernetes refuses such a pod, so none is ever created",
            "workflow \"ml\" template 'main': spec.templateDefaults.tolerations[0].value: 'true' with operator Exists, "
            "which "
            "takes no value (drop the value); Kubernetes refuses such a pod, so none is ever created",
        ]
    ), found


def test_a_kubeflow_jobs_replica_is_named_with_its_type_and_its_fields_path(pack):
    """kubeflow/trainer v1: a TFJob's tfReplicaSpecs and a JAXJob's jaxReplicaSpecs (whose only replica type is
    Worker) map each replica type to a replica spec; its template is the pod template of that type's pods, so a
    refusal names the path through the type."""
    bad = pod(tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "value": "true"}])
    found = messages(
        judge(
            pack,
            on_rack(
                custom(
                    "kubeflow.org/v1",
                    "TFJob",
                    "mnist",
                    {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": bad}}}},
                ),
                custom(
                    "kubeflow.org/v1",
                    "JAXJob",
                    "jax",
                    {"jaxReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": GPU_ON_WORKLOAD}}}},
                ),
            ),
        ),
        REACH,
    )
    assert sorted(found) == sorted(
        [
            "tfjob \"mnist\" replica Worker: spec.tfReplicaSpecs.Worker.template.spec.tolerations[0].value: 'true' "
            "with "
            "operator Exists, which takes no value (drop the value); Kubernetes refuses such a pod, so none is ever "
            "created",
            _gpu_on_workload('jaxjob "jax" replica Worker'),
        ]
    ), found


def _leader_worker_set(size: Optional[int], **templates: dict[str, Any]) -> dict[str, Any]:
    group: dict[str, Any] = {
        name: {"metadata": {"labels": {"role": name}}, "spec": spec} for name, spec in templates.items()
    }
    if size is not None:
        group["size"] = size
    return {"replicas": 2, "leaderWorkerTemplate": group}


def test_a_leader_worker_sets_leader_template_is_a_pod_beside_its_workers(pack):
    """kubernetes-sigs/lws api/leaderworkerset/v1 leaderworkerset_types.go: each group's leader pod runs
    leaderTemplate when one is written, else the workerTemplate, so without one every pod of the set runs the
    worker template; with one, the group's other size - 1 pods run the worker template, and size defaults to 1,
    which leaves a group with no workers (its workers' StatefulSet has none)."""
    leader, workers = pod({"convox.io/nodepool": "gpu-lg"}), GPU_ON_WORKLOAD
    found = messages(
        judge(
            pack,
            on_rack(
                custom(
                    "leaderworkerset.x-k8s.io/v1",
                    "LeaderWorkerSet",
                    "vllm",
                    _leader_worker_set(4, leaderTemplate=leader, workerTemplate=workers),
                ),
                custom(
                    "leaderworkerset.x-k8s.io/v1",
                    "LeaderWorkerSet",
                    "alone",
                    _leader_worker_set(None, leaderTemplate=leader, workerTemplate=workers),
                ),
                custom(
                    "leaderworkerset.x-k8s.io/v1",
                    "LeaderWorkerSet",
                    "same",
                    _leader_worker_set(4, workerTemplate=workers),
                ),
            ),
        ),
        REACH,
    )
    assert sorted(found) == sorted(
        [
            _missing('leaderworkerset "vllm" leader', "gpu-lg"),
            _gpu_on_workload('leaderworkerset "vllm" workers'),
            _missing('leaderworkerset "alone" leader', "gpu-lg"),
            _gpu_on_workload('leaderworkerset "same"'),
        ]
    ), found


def test_a_kserve_multi_node_predictors_workers_are_a_pod_placed_by_their_own_spec(pack):
    """kserve/kserve pkg/apis/serving/v1beta1 predictor.go: a predictor's workerSpec carries a pod spec of its own
    inline, beside pipelineParallelSize and tensorParallelSize. The controller (components/predictor.go,
    reconcilers/deployment) builds the worker pods from the serving runtime's worker pod spec with the workerSpec's
    pod-level fields over it, not the predictor's: they do not inherit its nodeSelector or tolerations. It keeps one
    container, the runtime's worker container with the workerSpec's first container over it, and always sets that
    container's GPU count: what it asks for, else at least one nvidia.com/gpu."""
    predictor = {
        "nodeSelector": {"convox.io/nodepool": "gpu"},
        "tolerations": [{"key": "dedicated-node", "operator": "Exists"}, GPU],
        "model": {"modelFormat": {"name": "huggingface"}, "resources": {"limits": {"nvidia.com/gpu": "1"}}},
    }
    placed = {
        **predictor,
        "workerSpec": {
            "tensorParallelSize": 1,
            "pipelineParallelSize": 2,
            "nodeSelector": {"convox.io/nodepool": "gpu-lg"},
        },
    }
    bare = {
        **predictor,
        "workerSpec": {
            "pipelineParallelSize": 2,
            "nodeSelector": {"convox.io/nodepool": "workload"},
            "containers": [{"name": "worker-container", "image": "kserve/huggingfaceserver:v0.15.2"}],
        },
    }
    found = messages(
        judge(
            pack,
            on_rack(
                custom("serving.kserve.io/v1beta1", "InferenceService", "llm", {"predictor": placed}),
                custom("serving.kserve.io/v1beta1", "InferenceService", "bare", {"predictor": bare}),
            ),
        ),
        REACH,
    )
    assert sorted(found) == sorted(
        [
            _missing('inferenceservice "llm" predictor worker', "gpu-lg"),
            _gpu_on_workload('inferenceservice "bare" predictor worker'),
        ]
    ), found


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("karpenter.sh/v1", "NodePool"),
        ("helm.toolkit.fluxcd.io/v2", "HelmRelease"),
        ("argoproj.io/v1alpha1", "Application"),
        ("serving.kserve.io/v1alpha1", "ClusterServingRuntime"),
    ],
)
def test_custom_resources_that_run_no_pods_are_not_read_for_pods(pack, api_version, kind):
    found = messages(
        judge(
            pack,
            on_rack(
                custom(
                    api_version,
                    kind,
                    "other",
                    {"values": {"template": {"spec": MISSING}}, **_ray_cluster(MISSING, MISSING)},
                )
            ),
        ),
        REACH,
    )
    assert found == []


def test_an_unknown_custom_resource_is_read_for_the_pods_it_embeds_by_their_shape(pack):
    """A custom resource of a group no reader knows: each object under its spec holding containers is a pod spec,
    named by its path; chart values are not."""
    found = messages(
        judge(
            pack,
            on_rack(
                custom(
                    "example.com/v1",
                    "RayCluster",
                    "other",
                    {"values": {"template": {"spec": MISSING}}, **_ray_cluster(MISSING, GPU_ON_WORKLOAD)},
                )
            ),
        ),
        REACH,
    )
    assert sorted(found) == sorted(
        [
            _missing('raycluster "other" spec.headGroupSpec.template.spec', "gpu-lg"),
            _gpu_on_workload('raycluster "other" spec.workerGroupSpecs[0].template.spec'),
        ]
    ), found
