"""The pods GPU operators make of their custom resources, GPU sharing, and GPU DaemonSets by what they do, judged
by ``workloads-reach-their-lane`` and ``gpu-daemonsets-reach-gpu-lanes`` through the pack's real gRPC server over
the prod rack (a ``workload`` pool; a ``gpu`` pool of g5 and g6 up to 4xlarge, tainted ``nvidia.com/gpu``; a
``gpu-inference`` node group). Published manifests of each operator are in ``tests/corpus`` (38-42).

Upstream facts these tests pin (each read in the operator's source):

* NVIDIA/k8s-nim-operator@f63f74d7 ``internal/controller/platform/standalone/nimservice.go`` (``addGPUResources``):
  a NIMService whose model comes from a NIMCache of an optimized NIM (an NGC source without ``modelEndpoint``,
  ``NIMCache.IsOptimizedNIM``) and whose ``spec.resources`` names no ``nvidia.com/gpu`` gets the profile's tensor
  parallelism in GPUs, one at least, and ``multiNode.parallelism.tensor`` when multi-node; none with
  ``draResources``. ``nimcache_types.go`` ``GetNodeSelectors``: a NIMCache's Job without a nodeSelector gets
  ``feature.node.kubernetes.io/pci-10de.present: "true"``; its ``resources`` are cpu and memory only.
* ai-dynamo/dynamo ``deploy/operator/api/v1alpha1/common.go``: a service's ``resources.limits.gpu`` is a GPU count
  of ``gpuType``, ``nvidia.com/gpu`` unless set.
* SlinkyProject/slurm-operator@f2ed3fc5 ``api/v1beta1/nodeset_types.go``: ``scalingMode: DaemonSet`` schedules one
  pod per matching node; ``internal/builder/workerbuilder/worker_app.go``: the slurmd container is ``spec.slurmd``.
* sgl-project/ome@17b77eda ``pkg/controller/v1beta1/inferenceservice/utils/merging.go``: each component is the
  runtime's config with the InferenceService's merged over it; the runtime's ``nodeSelector`` goes to the engine
  and decoder only (``MergeNodeSelector``).
* NVIDIA/KAI-Scheduler@72de64fc ``docs/gpu-sharing``: a ``gpu-fraction`` or ``gpu-memory`` annotation gives a pod of
  the KAI scheduler part of a GPU; the pod requests no GPU resource, so EKS's ExtendedResourceToleration (which
  tolerates the taints named after extended resources a pod requests) adds nothing.
* The NVIDIA device plugin's MIG resources are ``nvidia.com/mig-<profile>``: ExtendedResourceToleration tolerates
  a taint of that name, not the lane's ``nvidia.com/gpu``.
* Project-HAMi/HAMi@4707fb02 ``charts/hami/templates/device-plugin/daemonsetnvidia.yaml``: HAMi runs the
  ``nvidia-device-plugin`` program from its own image, mounting ``/var/lib/kubelet/device-plugins``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pulumi_kubernetes as k8s
import pytest
from hypothesis import given, settings, strategies as st

from mixed_os_racks.facts import instances
from mixed_os_racks.pack import checks, overlays, pods, workloads
from mixed_os_racks.facts.wellknown import Requirement
from conftest import REPO
from policy_helpers import judge, messages, start_pack
from test_workloads_policy import deployment, on_rack

REACH, DAEMONS, SQUAT = "workloads-reach-their-lane", "gpu-daemonsets-reach-gpu-lanes", "gpu-lanes-for-gpu-workloads"
TOLERATE_GPU = [
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "dedicated-node", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
]
"""What a pod of the prod rack's GPU pool tolerates: its GPU taint and its ``dedicated`` taint."""
ON_GPU_POOL = {"convox.io/nodepool": "gpu"}


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:
        yield running


def custom(name: str, api_version: str, kind: str, spec: Any, **metadata: Any) -> Callable[[Any], Any]:
    def add(cluster: Any) -> Any:
        return k8s.apiextensions.CustomResource(
            f"{kind.lower()}-{name}", api_version=api_version, kind=kind, metadata={"name": name, **metadata}, spec=spec
        )

    return add


def reach(pack: Any, *extra: Callable[[Any], Any], level: str = "mandatory") -> list[str]:
    return messages(judge(pack, on_rack(*extra)), REACH, level)


NGC_CACHE = custom(
    "llama",
    "apps.nvidia.com/v1alpha1",
    "NIMCache",
    {
        "source": {
            "ngc": {"modelPuller": "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.12.0", "model": {"engine": "tensorrt"}}
        },
        "tolerations": TOLERATE_GPU,
        "storage": {"pvc": {"create": True, "size": "50Gi"}},
    },
)


def nim_service(**spec: Any) -> Callable[[Any], Any]:
    return custom(
        "llm",
        "apps.nvidia.com/v1alpha1",
        "NIMService",
        {
            "image": {"repository": "nvcr.io/nim/meta/llama-3.1-8b-instruct", "tag": "1.12.0"},
            "storage": {"nimCache": {"name": "llama"}},
            "tolerations": TOLERATE_GPU,
            **spec,
        },
    )


def test_a_nim_service_of_an_optimized_nim_gets_the_gpus_its_operator_gives(pack):
    # no resources written: the operator gives one GPU, so the pod reaches only GPU lanes it tolerates
    assert reach(pack, NGC_CACHE, nim_service(nodeSelector={"convox.io/nodepool": "workload"})) == [
        'nimservice "llm" requests 1 nvidia.com/gpu, but it selects karpenter workload nodepool, which has no GPUs '
        "(select a GPU lane: convox.io/nodepool: gpu, or convox.io/label: gpu-inference)"
    ]
    # multi-node: the tensor parallelism per pod, more than a 4xlarge of the GPU pool has
    multi = nim_service(nodeSelector=ON_GPU_POOL, multiNode={"parallelism": {"tensor": 8, "pipeline": 2}})
    [message] = reach(pack, NGC_CACHE, multi)
    assert message.startswith('nimservice "llm" fits no lane: it requests nvidia.com/gpu 8;')
    # the GPUs it writes are what it gets, and a universal NIM (a model endpoint) gets none from the operator
    assert (
        reach(pack, NGC_CACHE, nim_service(nodeSelector=ON_GPU_POOL, resources={"limits": {"nvidia.com/gpu": 1}})) == []
    )
    universal = custom(
        "llama",
        "apps.nvidia.com/v1alpha1",
        "NIMCache",
        {
            "source": {"ngc": {"modelPuller": "nvcr.io/nim/nvidia/llm-nim:1.12.0", "modelEndpoint": "hf://meta/llama"}},
            "nodeSelector": ON_GPU_POOL,
            "tolerations": TOLERATE_GPU,
        },
    )
    assert reach(pack, universal, nim_service(nodeSelector={"convox.io/nodepool": "workload"})) == []


def test_a_nim_cache_job_lands_on_gpu_nodes_and_needs_their_toleration(pack):
    bare = custom(
        "cache",
        "apps.nvidia.com/v1alpha1",
        "NIMCache",
        {"source": {"ngc": {"modelPuller": "nvcr.io/nim/x:1"}}, "resources": {"cpu": "4", "memory": "16Gi"}},
    )
    # the rack's GPU lanes are dedicated: a pod reaches one by selecting it (corpus 38: an undedicated GPU pool,
    # where the GPU taint's toleration is the fix)
    assert reach(pack, bare) == [
        'nimcache "cache" selects NVIDIA GPU nodes (feature.node.kubernetes.io/pci-10de.present=true), but tolerates '
        "the "
        "taints of no GPU lane (karpenter nodepool 'gpu': dedicated-node=gpu:NoSchedule, "
        "nvidia.com/gpu=true:NoSchedule; "
        'node group "rack-ng-1" (convox.io/label=gpu-inference): dedicated-node=gpu-inference:NoSchedule, '
        "nvidia.com/gpu=true:NoSchedule) (select a GPU lane: convox.io/nodepool: gpu, or convox.io/label: "
        "gpu-inference, "
        "and tolerate its taints)"
    ]
    tolerated = custom(
        "cache",
        "apps.nvidia.com/v1alpha1",
        "NIMCache",
        {
            "source": {"ngc": {"modelPuller": "nvcr.io/nim/x:1"}},
            "tolerations": TOLERATE_GPU,
            "resources": {"cpu": "4", "memory": "16Gi"},
        },
    )
    violations = judge(pack, on_rack(tolerated))
    assert messages(violations, REACH) == [] and messages(violations, SQUAT, "advisory") == []
    # its cpu and memory are its Job's requests
    huge = custom(
        "cache",
        "apps.nvidia.com/v1alpha1",
        "NIMCache",
        {
            "source": {"ngc": {"modelPuller": "nvcr.io/nim/x:1"}},
            "tolerations": TOLERATE_GPU,
            "resources": {"cpu": "90"},
        },
    )
    [message] = reach(pack, huge)
    assert message.startswith('nimcache "cache" fits no lane: it requests cpu 90;')


def test_dynamo_services_get_the_gpu_type_their_shorthand_names(pack):
    def graph(resources: dict[str, Any], **pod: Any) -> Callable[[Any], Any]:
        return custom(
            "g",
            "nvidia.com/v1alpha1",
            "DynamoGraphDeployment",
            {
                "services": {
                    "Worker": {
                        "componentType": "worker",
                        "resources": resources,
                        "extraPodSpec": {
                            "mainContainer": {"image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.1"},
                            "tolerations": TOLERATE_GPU,
                            **pod,
                        },
                    }
                }
            },
        )

    assert reach(pack, graph({"limits": {"gpu": "1"}}, nodeSelector={"convox.io/nodepool": "workload"})) == [
        "dynamographdeployment \"g\" service 'Worker' requests 1 nvidia.com/gpu, but it selects karpenter workload "
        "nodepool, which has no GPUs (select a GPU lane: convox.io/nodepool: gpu, or convox.io/label: gpu-inference)"
    ]
    assert reach(pack, graph({"limits": {"gpu": "1"}}, nodeSelector=ON_GPU_POOL)) == []
    [message] = reach(pack, graph({"requests": {"cpu": "100"}, "limits": {"gpu": "1"}}, nodeSelector=ON_GPU_POOL))
    assert message.startswith(
        "dynamographdeployment \"g\" service 'Worker' fits no lane: it requests cpu 100, nvidia.com/gpu 1;"
    )
    # another vendor's GPU is no NVIDIA GPU, and its name is the API server's to judge (a qualified name)
    amd = graph({"limits": {"gpu": "1", "gpuType": "amd.com/gpu"}}, nodeSelector=ON_GPU_POOL)
    assert any("amd.com/gpu" in m for m in reach(pack, amd))


def test_an_ome_inference_service_runs_its_runtime_with_its_own_fields_over_it(pack):
    runtime = custom(
        "srt",
        "ome.io/v1beta1",
        "ClusterServingRuntime",
        {
            "nodeSelector": ON_GPU_POOL,
            "engineConfig": {
                "tolerations": TOLERATE_GPU,
                "runner": {
                    "name": "ome-container",
                    "image": "lmsysorg/sglang:v0.5",
                    "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": 2}},
                },
            },
            "routerConfig": {"runner": {"name": "router", "image": "smg:0.2", "resources": {"limits": {"cpu": "1"}}}},
        },
    )

    def isvc(**spec: Any) -> Callable[[Any], Any]:
        return custom(
            "llm",
            "ome.io/v1beta1",
            "InferenceService",
            {"model": {"name": "llama"}, "runtime": {"name": "srt"}, **spec},
        )

    # the runtime's GPU, toleration and node selector: the engine lands on the GPU pool; the router is no GPU pod
    assert reach(pack, runtime, isvc(engine={"minReplicas": 1}, router={"minReplicas": 1})) == []
    # the InferenceService's runner resources win over the runtime's
    [message] = reach(pack, runtime, isvc(engine={"runner": {"resources": {"limits": {"cpu": "90"}}}}))
    assert message.startswith('inferenceservice "llm" engine fits no lane: it requests cpu 90, nvidia.com/gpu 1;')
    # multi-node: a leader and workers, each its own pod with its own runner
    placed = {"nodeSelector": ON_GPU_POOL, "tolerations": TOLERATE_GPU}  # a leader's and a worker's own pod specs
    multi = isvc(
        engine={
            "leader": {**placed, "runner": {"resources": {"limits": {"nvidia.com/gpu": 8}}}},
            "worker": {**placed, "size": 1, "runner": {"resources": {"limits": {"nvidia.com/gpu": 1}}}},
        }
    )
    [message] = reach(pack, runtime, multi)
    assert message.startswith('inferenceservice "llm" engine leader fits no lane: it requests nvidia.com/gpu 8;')
    # the runtime's node selector reaches every pod of the engine, a leader's and a worker's too
    elsewhere = custom(
        "srt", "ome.io/v1beta1", "ClusterServingRuntime", {"nodeSelector": {"convox.io/nodepool": "gpu-lg"}}
    )
    roles = isvc(
        engine={"leader": {"runner": {"image": "sglang:0.5"}}, "worker": {"size": 2, "runner": {"image": "sglang:0.5"}}}
    )
    assert sorted(reach(pack, elsewhere, roles)) == [
        f"inferenceservice \"llm\" engine {role} targets karpenter nodepool 'gpu-lg', which does not exist on this "
        f"rack "
        "(existing pools: gpu, workload)"
        for role in ("leader", "worker")
    ]
    # without the runtime in the stack, only what the InferenceService writes is judged
    assert reach(pack, isvc(engine={"minReplicas": 1})) == []


def test_a_slurm_nodeset_in_daemonset_mode_runs_only_where_it_selects(pack):
    def node_set(mode: str) -> Callable[[Any], Any]:
        return custom(
            "cpu",
            "slinky.slurm.net/v1beta1",
            "NodeSet",
            {
                "controllerRef": {"name": "slurm"},
                "scalingMode": mode,
                "slurmd": {"image": "ghcr.io/slinkyproject/slurmd:26.05", "resources": {"requests": {"cpu": "12"}}},
                "template": {"spec": {"nodeSelector": {"kubernetes.io/arch": "arm64"}}},
            },
        )

    # replicas wait for an arm64 node no lane launches; one pod per arm64 node is no pod at all
    assert reach(pack, node_set("StatefulSet")) == [
        'nodeset "cpu" fits no lane: the nearest, karpenter workload nodepool, cannot take it: it needs '
        "kubernetes.io/arch=arm64, and the lane launches c7i, m6i, m7i (amd64) only (select a lane that offers it, or "
        "add one)"
    ]
    assert reach(pack, node_set("DaemonSet")) == []


def test_an_unknown_custom_resource_is_read_for_the_pod_specs_it_embeds(pack):
    trainer = custom(
        "t",
        "example.com/v1",
        "Trainer",
        {
            "workers": [
                {
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "train",
                                    "image": "trainer:1",
                                    "resources": {"limits": {"nvidia.com/gpu": "1"}},
                                }
                            ],
                            "nodeSelector": {"convox.io/nodepool": "workload"},
                        }
                    }
                }
            ]
        },
    )
    assert reach(pack, trainer) == [
        'trainer "t" spec.workers[0].template.spec requests 1 nvidia.com/gpu, but it selects karpenter workload '
        "nodepool, which has no GPUs (select a GPU lane: convox.io/nodepool: gpu, or convox.io/label: gpu-inference)"
    ]
    # a release's chart values are not pods it runs
    release = custom(
        "r",
        "helm.toolkit.fluxcd.io/v2",
        "HelmRelease",
        {
            "chart": {"spec": {"chart": "x"}},
            "values": {"containers": [{"name": "a", "image": "a:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
        },
    )
    assert reach(pack, release) == []


def test_a_mig_slice_is_told_to_tolerate_the_lanes_gpu_taint(pack):
    mig = {
        "containers": [{"name": "app", "image": "cuda:12", "resources": {"limits": {"nvidia.com/mig-1g.10gb": "1"}}}],
        "nodeSelector": ON_GPU_POOL,
        "tolerations": TOLERATE_GPU[1:],
    }  # the dedicated lane's toleration only
    assert reach(pack, deployment("mig", mig)) == [
        "deployment \"mig\" selects karpenter nodepool 'gpu' but does not tolerate its taint "
        "nvidia.com/gpu=true:NoSchedule "
        "(it requests nvidia.com/mig-1g.10gb, whose taints EKS's ExtendedResourceToleration names after them, not "
        "nvidia.com/gpu: add the toleration {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule})"
    ]
    # tolerated, it reaches the GPU pool, whose g5 and g6 GPUs have no MIG: that is what it is told then
    [message] = reach(pack, deployment("mig", {**mig, "tolerations": TOLERATE_GPU}))
    assert "no GPU the lanes it reaches launch has it" in message


def test_a_kai_gpu_share_needs_the_gpu_toleration_and_is_no_squatter(pack):
    def shared(annotations: dict[str, str], **spec: Any) -> Callable[[Any], Any]:
        def add(cluster: Any) -> Any:
            return k8s.core.v1.Pod(
                "share",
                metadata={"name": "share", "annotations": annotations},
                spec={"schedulerName": "kai-scheduler", "containers": [{"name": "app", "image": "cuda:12"}], **spec},
            )

        return add

    assert reach(pack, shared({"gpu-memory": "2000"}, nodeSelector=ON_GPU_POOL, tolerations=TOLERATE_GPU[1:])) == [
        "pod \"share\" selects karpenter nodepool 'gpu' but does not tolerate its taint nvidia.com/gpu=true:NoSchedule "
        "(a "
        "GPU share (gpu-memory 2000) requests no nvidia.com/gpu, so EKS's ExtendedResourceToleration adds no "
        "toleration: "
        "add the toleration {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule})"
    ]
    violations = judge(
        pack, on_rack(shared({"gpu-fraction": "0.5"}, nodeSelector=ON_GPU_POOL, tolerations=TOLERATE_GPU))
    )
    assert messages(violations, REACH) == [] and messages(violations, SQUAT, "advisory") == []
    # under the default scheduler the annotation gives nothing: a pod that requests nothing and selects nothing
    assert reach(pack, shared({"gpu-fraction": "0.5"}, schedulerName="default-scheduler")) == []


def test_kueue_places_a_queued_workload_with_its_flavors_labels_and_tolerations(pack):
    """kubernetes-sigs/kueue@ff69552e ``pkg/podset/podset.go`` (``FromAssignment``, ``Merge``): a workload labelled
    ``kueue.x-k8s.io/queue-name`` is admitted through its LocalQueue's ClusterQueue with one of its ResourceFlavors,
    whose ``nodeLabels`` join the pods' nodeSelector and whose ``tolerations`` join theirs."""

    def flavor(name: str, **spec: Any) -> Callable[[Any], Any]:
        return custom(name, "kueue.x-k8s.io/v1beta2", "ResourceFlavor", spec)

    def queues(*flavors: str) -> list[Callable[[Any], Any]]:
        return [
            custom("team", "kueue.x-k8s.io/v1beta2", "LocalQueue", {"clusterQueue": "cluster"}),
            custom(
                "cluster",
                "kueue.x-k8s.io/v1beta2",
                "ClusterQueue",
                {
                    "resourceGroups": [
                        {
                            "coveredResources": ["nvidia.com/gpu"],
                            "flavors": [
                                {"name": f, "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]}
                                for f in flavors
                            ],
                        }
                    ]
                },
            ),
        ]

    def job(cluster: Any) -> Any:
        return k8s.batch.v1.Job(
            "train",
            metadata={"name": "train", "labels": {"kueue.x-k8s.io/queue-name": "team"}},
            spec={
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {"name": "train", "image": "trainer:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
                        ],
                    }
                }
            },
        )

    on_gpu = flavor("gpu", nodeLabels=ON_GPU_POOL, tolerations=TOLERATE_GPU)
    on_cpu = flavor("cpu", nodeLabels={"convox.io/nodepool": "workload"})
    assert reach(pack, on_gpu, on_cpu, *queues("gpu"), job) == []
    assert reach(pack, on_gpu, on_cpu, *queues("cpu", "gpu"), job) == []  # either flavor: the GPU one lands it
    assert reach(pack, on_gpu, on_cpu, *queues("cpu"), job) == [
        'job "train" requests 1 nvidia.com/gpu, but it selects karpenter workload nodepool (placed by Kueue\'s queue '
        "'team' (ClusterQueue 'cluster', flavors cpu)), which has no GPUs (select a GPU lane: convox.io/nodepool: gpu, "
        "or "
        "convox.io/label: gpu-inference)"
    ]


def _daemonset(name: str, **container: Any) -> Callable[[Any], Any]:
    return deployment(
        name,
        {
            "containers": [{"name": "plugin", **container}],
            "nodeSelector": {"gpu": "on"},
            "volumes": [{"name": "dp", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}],
        },
        kind=k8s.apps.v1.DaemonSet,
    )


def test_a_gpu_device_plugin_is_known_by_what_it_does_not_its_image(pack):
    hami = _daemonset(
        "vgpu",
        image="registry.local/team/vgpu:2",
        command=["vgpu-plugin"],
        env=[{"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"}],
    )
    message, *others = messages(judge(pack, on_rack(hami)), DAEMONS)
    assert len(others) == 1  # one for each GPU lane: the pool and the node group
    assert message.startswith(
        'daemonset "vgpu" serves GPUs (a device plugin for NVIDIA GPUs (it mounts '
        "/var/lib/kubelet/device-plugins)) but never runs on"
    )
    # another vendor's device plugin (Neuron, EFA) is none of the GPU lanes' concern
    neuron = _daemonset(
        "neuron", image="public.ecr.aws/neuron/neuron-device-plugin:2", command=["neuron-device-plugin"]
    )
    assert messages(judge(pack, on_rack(neuron)), DAEMONS) == []


OPERATOR_TYPES = [f"kubernetes:{group}/v1:{kind}" for group, kind in pods.OPERATORS] + [
    "kubernetes:example.com/v1:Anything",
    "kubernetes:ome.io/v1beta1:ClusterServingRuntime",
]
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "template",
                    "containers",
                    "resources",
                    "limits",
                    "gpu",
                    "runner",
                    "engine",
                    "leader",
                    "worker",
                    "services",
                    "extraPodSpec",
                    "mainContainer",
                    "nodeSelector",
                    "tolerations",
                    "slurmd",
                    "multiNode",
                    "storage",
                    "nimCache",
                    "name",
                    "image",
                    "components",
                    "podTemplate",
                    "runtime",
                    "size",
                    "clusterQueue",
                    "resourceGroups",
                    "flavors",
                    "nodeLabels",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(OPERATOR_TYPES), _json, _json)
def test_any_shape_of_an_operators_resource_is_read_without_an_error(type_, spec, related_spec):
    """Hostile shapes: every reader takes whatever the resource holds and the policy reads its pods or none."""
    resources = [
        checks.StackResource(type_, "r", "urn:r", {"metadata": {"name": "r"}, "spec": spec}),
        checks.StackResource(
            "kubernetes:apps.nvidia.com/v1alpha1:NIMCache",
            "c",
            "urn:c",
            {"metadata": {"name": "r"}, "spec": related_spec},
        ),
        checks.StackResource(
            "kubernetes:ome.io/v1beta1:ServingRuntime", "s", "urn:s", {"metadata": {"name": "r"}, "spec": related_spec}
        ),
        *(
            checks.StackResource(
                f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}",
                kind,
                f"urn:{kind}",
                {"metadata": {"name": "r"}, "spec": related_spec},
            )
            for kind in ("LocalQueue", "ClusterQueue", "ResourceFlavor")
        ),
        checks.StackResource(
            "kubernetes:batch/v1:Job",
            "j",
            "urn:j",
            {
                "metadata": {"name": "j", "labels": {"kueue.x-k8s.io/queue-name": "r"}},
                "spec": {"template": {"spec": spec}},
            },
        ),
    ]
    found = workloads.reach(resources, {})
    json.dumps([f.message for f in found])


# ---- NodeOverlay --------------------------------------------------------------------------------------------------
# kubernetes-sigs/karpenter@2266468104f36373ed002241afaee2d3bbc26078: ``pkg/apis/v1alpha1/nodeoverlay.go`` (price,
# priceAdjustment, capacity of extended resources, weight), ``pkg/controllers/nodeoverlay`` (applied to a pool's type
# when its requirements are compatible with the type's and the pool's labels; highest weight first),
# ``pkg/operator/options/options.go`` (the NodeOverlay gate in FEATURE_GATES, off by default).

OVERLAID = "tests/corpus/43-blueprints-node-overlay-gate-on.yaml"


def _overlaid(tmp_path: Path, gate: str) -> Callable[[], None]:
    text = (REPO / OVERLAID).read_text()
    if gate == "absent":  # no Karpenter controller in this stack
        head, _, rest = text.partition("---\napiVersion: karpenter.k8s.aws/v1")
        text = (
            "\n".join(line for line in head.splitlines() if line.startswith("#"))
            + "\n---\napiVersion: karpenter.k8s.aws/v1"
            + rest
        )
    else:
        text = text.replace("NodeOverlay=true", f"NodeOverlay={gate}")
    path = tmp_path / "overlaid.yaml"
    path.write_text(text)

    def program() -> None:
        k8s.yaml.v2.ConfigGroup("overlaid", files=[str(path)])

    return program


def test_node_overlays_are_read_in_fit_and_worst_case_only_when_the_gate_is_on(pack, tmp_path):
    on = judge(pack, _overlaid(tmp_path, "true"))
    assert [v for v in on if v["policy"] in (REACH, "lane-cost-unbounded")] == []
    off = judge(pack, _overlaid(tmp_path, "false"))
    said = " ".join(messages(off, REACH, "advisory"))
    assert (
        "karpenter nodeoverlays 'g6f-gpu-fraction', 'gpu-slices-1gpu', 'gpu-slices-2gpu', 'gpu-slices-4gpu', "
        "'gpu-slices-8gpu': Karpenter's NodeOverlay feature gate is off, so Karpenter ignores them"
    ) in said
    # without the overlays the pool's GPU limit does not count g6f, and no node has 16 GPUs for the pod
    assert any("do not count g6f.large" in m for m in messages(off, "lane-cost-unbounded", "advisory"))
    absent = " ".join(messages(judge(pack, _overlaid(tmp_path, "absent")), REACH, "advisory"))
    assert "whether Karpenter's NodeOverlay feature gate is on is not known" in absent


def test_an_overlay_applies_by_weight_and_to_the_types_and_pools_it_selects():
    g6f = next(t for t in instances.sizes("g6f") if t.name == "g6f.large")
    g5 = next(t for t in instances.sizes("g5") if t.name == "g5.xlarge")
    family = Requirement("karpenter.k8s.aws/instance-family", "In", ("g6f",))
    low = overlays.Overlay("a-low", (family,), 1, capacity=(("nvidia.com/gpu", 1.0),), adjustment="+10%")
    high = overlays.Overlay(
        "b-high",
        (family, Requirement("karpenter.sh/nodepool", "In", ("gpu",))),
        9,
        capacity=(("nvidia.com/gpu", 2.0),),
        price=0.5,
    )
    ordered = (high, low)
    assert overlays.overlaid(g6f, ordered, "gpu", ()).gpus == 2  # the heavier one, on the pool it names
    assert overlays.overlaid(g6f, ordered, "other", ()).gpus == 1  # elsewhere the lighter one
    assert overlays.overlaid(g5, ordered, "gpu", ()).gpus == g5.gpus  # not a g6f: unchanged
    assert overlays.price("g6f.large", 1.0, ordered, "gpu", ()) == 0.5
    assert overlays.price("g6f.large", 1.0, ordered, "other", ()) == pytest.approx(1.1)
    assert overlays.price("g6f.large", 1.0, (overlays.Overlay("cut", (family,), adjustment="-2"),), "gpu", ()) == 0.0


_overlay_spec = st.fixed_dictionaries(
    {},
    optional={
        "requirements": st.lists(
            st.fixed_dictionaries(
                {
                    "key": st.sampled_from(
                        [
                            "karpenter.k8s.aws/instance-family",
                            "karpenter.k8s.aws/instance-gpu-count",
                            "karpenter.sh/nodepool",
                            "karpenter.sh/capacity-type",
                            "team",
                            "node.kubernetes.io/instance-type",
                        ]
                    ),
                    "operator": st.sampled_from(
                        ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte", "??"]
                    ),
                    "values": st.lists(
                        st.sampled_from(["g6f", "1", "gpu", "on-demand", "-3", "1e400", "x"]), max_size=3
                    ),
                }
            ),
            max_size=3,
        ),
        "weight": st.one_of(st.integers(-5, 10_000), st.floats(), st.text(max_size=4), st.none()),
        "price": st.one_of(st.text(max_size=6), st.sampled_from(["0.5", "1" * 400]), st.floats(), st.none()),
        "priceAdjustment": st.one_of(
            st.sampled_from(["+10%", "-15%", "-100%", "+0.5", "-2", "10%", ""]), st.text(max_size=5)
        ),
        "capacity": st.dictionaries(
            st.sampled_from(["nvidia.com/gpu", "amd.com/gpu", "cpu", "x"]),
            st.one_of(st.integers(-3, 64), st.sampled_from(["1", "1e400", "abc", "0.5"]), st.none()),
            max_size=3,
        ),
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_overlay_spec, min_size=1, max_size=3))
def test_any_node_overlay_is_read_without_an_error(specs):
    resources = [
        checks.StackResource(
            "kubernetes:karpenter.sh/v1alpha1:NodeOverlay",
            f"o{i}",
            f"urn:o{i}",
            {"metadata": {"name": f"o{i}"}, "spec": spec},
        )
        for i, spec in enumerate(specs)
    ]
    found = overlays.read(resources)
    assert [o.weight for o in found] == sorted((o.weight for o in found), reverse=True)
    for itype in instances.sizes("g6f")[:2] + instances.sizes("g5")[:1]:
        assert overlays.overlaid(itype, found, "gpu", (("team", "ml"),)).gpus >= 0
        price = overlays.price(itype.name, 1.0, found, "gpu", ())
        assert price is None or price >= 0
