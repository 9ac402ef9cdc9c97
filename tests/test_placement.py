"""``place()``: a workload's scheduling with the seeds' semantics, and the pack agreeing it lands.

The seeds' rack renders a service's pod spec from ``nodeSelectorLabels`` and ``scale.gpu``
(convox/convox ``provider/k8s/template/app/service.yml.tmpl``): one required node-affinity term with
an ``In`` requirement per label; ``dedicated-node=<value>:NoSchedule`` (``Equal``) for each label keyed
``convox.io/label`` or ``convox.io/nodepool``; for a GPU count above 0, the vendor resource's taint
tolerated with ``Exists``/``NoSchedule`` and the resource requested and limited. Its vendor mapping is
``gpuResourceKey`` in ``provider/k8s/helpers.go``: nvidia/nvidia.com and amd/amd.com, anything else NVIDIA.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pulumi
from mixed_os_racks import contract
from mixed_os_racks import GpuRequest, PlacementError, place
from mixed_os_racks.placement import gpu_request
from mixed_os_racks.pack import scheduling, workloads

LABEL_KEYS = st.sampled_from(
    ["convox.io/label", "convox.io/nodepool", "team", "kubernetes.io/arch", "example.com/tier"]
)
LABEL_VALUES = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
SELECTORS = st.dictionaries(LABEL_KEYS, LABEL_VALUES, max_size=4)
VENDORS = st.one_of(
    st.sampled_from(["nvidia", "nvidia.com", "amd", "amd.com", "", "intel", "NVIDIA"]), st.text(max_size=12)
)

DEDICATED = {"key": "dedicated-node", "operator": "Equal", "effect": "NoSchedule"}
NVIDIA = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def terms(placement) -> list:
    """The node selector terms, as a manifest (``pod_spec()``) has them."""
    return placement.pod_spec()["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]


# ---- the seeds' two services --------------------------------------------------------------------------------


def test_web_on_the_default_lane_gets_no_scheduling_at_all():
    web = place({}, None)
    assert web.affinity is None and web.tolerations == [] and web.gpu_resources == {}
    assert web.pod_spec() == {}


def test_inference_selects_the_gpu_node_group_and_tolerates_its_taints():
    inference = place({"convox.io/label": "gpu-inference"}, {"count": 1, "vendor": "nvidia"})
    assert terms(inference) == [
        {"matchExpressions": [{"key": "convox.io/label", "operator": "In", "values": ["gpu-inference"]}]}
    ]
    assert inference.tolerations == [{**DEDICATED, "value": "gpu-inference"}, NVIDIA]
    assert inference.gpu_resources == {"nvidia.com/gpu": "1"}
    assert inference.pod_spec()["tolerations"] == inference.tolerations
    # the same affinity, as pulumi-kubernetes' input type names its fields (AffinityArgsDict)
    assert inference.affinity == {
        "node_affinity": {
            "required_during_scheduling_ignored_during_execution": {
                "node_selector_terms": [
                    {"match_expressions": [{"key": "convox.io/label", "operator": "In", "values": ["gpu-inference"]}]}
                ]
            }
        }
    }


# ---- GPU requests ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vendor", "resource"),
    [
        ("nvidia", "nvidia.com/gpu"),
        ("nvidia.com", "nvidia.com/gpu"),
        ("amd", "amd.com/gpu"),
        ("amd.com", "amd.com/gpu"),
        ("intel", "nvidia.com/gpu"),
        ("", "nvidia.com/gpu"),
        ("AMD", "nvidia.com/gpu"),
    ],
)
def test_the_seeds_vendor_mapping(vendor, resource):
    scheduling = place({}, {"count": 2, "vendor": vendor})
    assert scheduling.gpu_resources == {resource: "2"}
    assert scheduling.tolerations == [{"key": resource, "operator": "Exists", "effect": "NoSchedule"}]


@given(vendor=VENDORS, count=st.integers(min_value=1, max_value=16))
def test_every_vendor_maps_to_one_of_the_two_resources(vendor, count):
    resource = {"amd": "amd.com/gpu", "amd.com": "amd.com/gpu"}.get(vendor, "nvidia.com/gpu")
    scheduling = place({}, GpuRequest(count, vendor))
    assert scheduling.gpu_resources == {resource: str(count)}
    assert scheduling.tolerations == [{"key": resource, "operator": "Exists", "effect": "NoSchedule"}]


@given(count=st.integers(min_value=-3, max_value=16))
def test_a_bare_number_is_the_count_and_only_a_positive_one_asks_for_gpus(count):
    if count < 0:  # not silently no GPU
        with pytest.raises(ValueError, match=f"invalid gpu {count} \\(a count, 0 or more\\)"):
            place({}, count)
        return
    assert gpu_request(count) == GpuRequest(count, "nvidia")
    scheduling = place({}, count)
    assert scheduling.gpu_resources == ({"nvidia.com/gpu": str(count)} if count > 0 else {})
    assert scheduling.tolerations == ([NVIDIA] if count > 0 else [])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"node_selector_labels": "convox.io/label=gpu"},
            "node_selector_labels: expected a mapping of label to value, got str",
        ),
        (
            {"node_selector_labels": {"convox.io/label": None}},
            "node_selector_labels: labels and values are text (got 'convox.io/label': None)",
        ),
        (
            {"gpu": GpuRequest(True)},
            "invalid gpu GpuRequest(count=True, vendor='nvidia') (count is a whole number, 0 or more; "
            "vendor a name like nvidia)",
        ),
        (
            {"lanes": [1]},
            "lanes: expected the rack's lanes output (a mapping of lane name to its facts, or its JSON text) or a list "
            "of lanes",
        ),
        ({"cpu": float("nan")}, "cpu: expected a number, 0 or more, got nan"),
        ({"memory_mib": "512"}, "memory_mib: expected a number, 0 or more, got '512'"),
        # a lane the pack would not read: refused as the pack's config check words it, not read as no lane
        (
            {"lanes": {"gpu": {"labels": 5, "taints": "bad"}}},
            "lanes[0].labels: expected a mapping of label to value, got 5; lanes[0].taints: expected a list of {key, "
            "value, effect}, got 'bad'",
        ),
        (
            {"lanes": {"gpu": {"labels": {"convox.io/label": "gpu"}, "instanceTypes": "g5.xlarge"}}},
            "lanes[0].instanceTypes: expected a list of names, got 'g5.xlarge'",
        ),
        (
            {"lanes": {"gpu": {"labels": {"convox.io/label": "gpu"}, "maxGpusPerNode": -1}}},
            "lanes[0].maxGpusPerNode: expected a whole number of GPUs, got -1",
        ),
    ],
    ids=[
        "selector-text",
        "label-none",
        "gpu-bool",
        "lanes",
        "cpu-nan",
        "memory-text",
        "lane-shapes",
        "lane-types-text",
        "lane-negative-gpus",
    ],
)
def test_place_names_the_argument_it_cannot_use(kwargs, message):
    with pytest.raises(PlacementError) as refused:
        place(**kwargs)
    assert str(refused.value) == message and isinstance(refused.value, pulumi.RunError)


@pytest.mark.parametrize("gpu", [True, 1.5, "1", {"count": "1"}, {"count": 1, "model": "h100"}, [1]])
def test_a_gpu_request_in_no_shape_the_seeds_know_is_refused(gpu):
    with pytest.raises(ValueError, match="invalid gpu"):
        place({}, gpu)


# ---- selectors -> affinity and tolerations ---------------------------------------------------------------------


@given(selectors=SELECTORS)
def test_every_selector_label_is_one_required_in_requirement(selectors):
    scheduling = place(selectors)
    if not selectors:
        assert scheduling.affinity is None
        return
    (term,) = terms(scheduling)
    assert term["matchExpressions"] == [{"key": k, "operator": "In", "values": [v]} for k, v in selectors.items()]


@given(selectors=SELECTORS, gpu=st.integers(min_value=0, max_value=4))
def test_only_lane_keys_bring_the_dedicated_toleration(selectors, gpu):
    scheduling = place(selectors, gpu)
    dedicated = [t for t in scheduling.tolerations if t["key"] == "dedicated-node"]
    assert dedicated == [
        {**DEDICATED, "value": v} for k, v in selectors.items() if k in ("convox.io/label", "convox.io/nodepool")
    ]
    assert [t for t in scheduling.tolerations if t["key"] != "dedicated-node"] == ([NVIDIA] if gpu else [])


@given(selectors=SELECTORS, gpu=st.integers(min_value=0, max_value=4), custom=st.booleans())
def test_the_pack_agrees_a_placed_workload_reaches_the_dedicated_lane_it_selects(selectors, gpu, custom):
    """Whatever it selects, a workload placed by ``place()`` tolerates the seeds' taints of the lane it
    selects (Kubernetes' matching, as the pack applies it), and nothing else: a custom taint is not
    tolerated automatically."""
    taints = [scheduling.NodeTaint("dedicated-node", v) for k, v in selectors.items() if k in contract.LANE_KEYS]
    if gpu:
        taints.append(scheduling.NodeTaint("nvidia.com/gpu", "true"))
    lane = workloads.LaneView("lane", "lane", dict(selectors), tuple(taints), gpu=bool(gpu))
    if custom:
        lane = workloads.LaneView(
            "lane", "lane", dict(selectors), (*taints, scheduling.NodeTaint("team", "ml")), gpu=bool(gpu)
        )
    tolerations = [scheduling.Toleration.read(t) for t in place(selectors, gpu).tolerations]
    untolerated = lane.untolerated(tolerations)
    assert untolerated == ([scheduling.NodeTaint("team", "ml")] if custom else [])


@pytest.mark.parametrize(
    "cpu, memory_mib", [(1e308, None), (10**400, None), (None, 10**400), (None, 1e-05), (None, 1e16)]
)
def test_any_size_is_judged_without_an_exception(cpu, memory_mib):
    # the sizes go to the pack as quantities written out in full (1e-05 MiB is 0.00001Mi, never "1e-05Mi",
    # which is no quantity); one larger than any node fits no lane
    lanes = {
        "general": {"kind": "nodegroup", "labels": {"convox.io/label": "general"}, "instanceTypes": ["m6i.xlarge"]}
    }
    selected = {"convox.io/label": "general"}
    if (cpu or 0) > 1000 or (memory_mib or 0) > 10**9:
        with pytest.raises(PlacementError, match="fits no lane"):
            place(selected, lanes=lanes, cpu=cpu, memory_mib=memory_mib)
    else:
        assert place(selected, lanes=lanes, cpu=cpu, memory_mib=memory_mib) == place(selected)
