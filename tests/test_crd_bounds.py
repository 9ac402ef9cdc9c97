"""The pool config's bounds are the CRDs' bounds: what the config accepts at the edge of each range is
an object Karpenter v1.14.1's CRDs and CEL rules accept, and what it refuses just past the edge the CRD
refuses too (where the CRD has the bound; the rest are EC2's and the kubelet's, see test_config.py).

The objects are rendered the way ``KarpenterPool`` renders them (``node_class_spec``, ``node_pool_spec``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crd_helpers import problems
from mixed_os_racks import ConfigError, PoolSpec, Taint
from mixed_os_racks.karpenter import node_class_spec, node_pool_spec

GPU_AMI = "ami-0a1b2c3d4e5f60718"


def objects(pool: PoolSpec) -> list[dict[str, Any]]:
    meta = {"name": pool.name}
    return [
        {
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": meta,
            "spec": node_class_spec(pool, "rack", "KarpenterNodeRole-rack"),
        },
        {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": meta, "spec": node_pool_spec(pool)},
    ]


def crd_problems(pool: PoolSpec) -> list[str]:
    return [p for obj in objects(pool) for p in problems(obj)]


BASE = {"name": "edge"}
# field -> (values the config accepts at the edges, values just past them that it refuses)
EDGES: dict[str, tuple[list[Any], list[Any]]] = {
    "weight": ([1, 100], [0, 101, -1]),
    "disruption_budget_nodes": (["0", "0%", "100%", "99%", "1000"], ["101%", "10.5%", "-1", "１０%", "10%\n", ""]),
    "consolidate_after": (["0s", "30s", "1h30m", "720h", "Never"], ["30", "1d", "never", "３０s", "30s\n", ""]),
    "node_expiry": (["720h", "1h30m", "30m", "Never"], ["30d", "Never ", "h", "７２０h"]),
    "name": (["a", "gpu-1", "a" * 63], ["gpu-", "1gpu", "a" * 64, "GPU", "gpu\n", "gpu_1", ""]),
    "labels": (
        [{"team": "ml"}, {"example.com/team": "x" * 63}, {"node.kubernetes.io/lane": "a"}, {"a": ""}],
        [
            {"team": "x" * 64},
            {"kubernetes.io/role": "x"},
            {"karpenter.sh/capacity-type": "spot"},
            {"-team": "x"},
            {"team": "-x"},
            {"team": "a b"},
            {"example.com/": "x"},
        ],
    ),
    "taints": (
        [[{"key": "a", "value": "b", "effect": "NoSchedule"}], [{"key": "example.com/a", "effect": "NoExecute"}]],
        [
            [{"key": "a", "value": "b", "effect": "Never"}],
            [{"key": "a", "value": "-b", "effect": "NoSchedule"}],
            [{"key": "a b", "effect": "NoSchedule"}],
            [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "x", "effect": "NoSchedule"}],
        ],
    ),
    "instance_sizes": ([["metal-24xl", "48xlarge", "medium"]], [["2XL"], ["xlarge\n"], ["metal-"]]),
    # GPU and CPU families never mix in one pool, and every family is of the pool's arch (BASE: amd64)
    "instance_families": ([["c7i-flex", "u7inh-32tb"], ["p6-b200"]], [["g5.xlarge"], ["G5"], ["-g5"], ["p6e-gb200"]]),
}


@pytest.mark.parametrize("field", sorted(EDGES))
def test_accepted_edges_conform_to_the_crds(field):
    room = {"cpu_limit": 1000, "memory_limit_gb": 4096} if field == "instance_families" else {}  # limits that hold a p6
    for value in EDGES[field][0]:
        pool = PoolSpec(**{**BASE, **room, field: value})
        assert crd_problems(pool) == [], (field, value)


@pytest.mark.parametrize("field", sorted(EDGES))
def test_refused_edges_are_refused_by_the_config(field):
    for value in EDGES[field][1]:  # refused by the rule of that field: the error names it (and the item, in a list)
        with pytest.raises(ConfigError, match=rf"^PoolSpec(\.{field}(\[[0-9]+\])?)?: "):
            PoolSpec(**{**BASE, field: value})


# the bounds the NodePool CRD itself carries: past them, the API server refuses the object too
CRD_BOUNDS = {
    "weight": [0, 101],
    "disruption_budget_nodes": ["101%", "10.5%"],
    "consolidate_after": ["30", "1d"],
    "node_expiry": ["30d"],
    "taints": [[{"key": "a", "value": "b", "effect": "Never"}]],
}


@pytest.mark.parametrize("field", sorted(CRD_BOUNDS))
def test_the_crd_refuses_what_the_config_refuses(field):
    for value in CRD_BOUNDS[field]:
        if field == "taints":
            value = [Taint.model_construct(**t) for t in value]
        pool = PoolSpec.model_construct(
            **{**PoolSpec(**BASE).model_dump(), field: value}
        )  # past the config's own check
        assert crd_problems(pool), (field, value)


VOLUME_EDGES = [
    # (volume_type, disk, iops, throughput): EC2's limits for each type at the edge
    ("gp3", 1, None, None),
    ("gp3", 59000, None, None),
    ("gp3", 160, 80000, None),
    ("gp3", 20, 3000, 750),
    ("gp3", 64, 8000, 2000),
    ("gp2", 16384, None, None),
    ("io1", 4, 100, None),
    ("io1", 1280, 64000, None),
    ("io2", 4, 100, None),
    ("io2", 256, 256000, None),
    ("io2", 59000, 100, None),
]


def test_the_crd_caps_volume_sizes_below_ebs():
    """EBS takes gp3 and io2 volumes up to 65,536 GiB, but the EC2NodeClass CRD's volumeSize pattern stops
    at 59000Gi: the config refuses what the CRD would, naming the bound."""
    with pytest.raises(ConfigError, match=r"disk must be 1-59000 GiB for a gp3 volume \(got '59001'\)"):
        PoolSpec(**BASE, disk=59001)
    pool = PoolSpec.model_construct(**{**PoolSpec(**BASE).model_dump(), "disk": 59001})
    assert any("volumeSize" in p for p in crd_problems(pool))


@pytest.mark.parametrize("kind, disk, iops, throughput", VOLUME_EDGES)
def test_volumes_at_the_edges_conform(kind, disk, iops, throughput):
    # below 20 GiB only a pinned AMI with a smaller root snapshot boots (the alias's snapshot is 20 GiB)
    pinned = {"ami_id": "ami-0f0e0d0c0b0a09080"} if disk < 20 else {}
    pool = PoolSpec(**BASE, **pinned, volume_type=kind, disk=disk, volume_iops=iops, volume_throughput=throughput)
    assert crd_problems(pool) == []
    (root,) = objects(pool)[0]["spec"]["blockDeviceMappings"]
    assert root["ebs"]["volumeSize"] == f"{disk}Gi"


pools = st.fixed_dictionaries(
    {
        "name": st.from_regex(r"[a-z]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True),
        "weight": st.one_of(st.none(), st.integers(1, 100)),
        "cpu_limit": st.integers(1, 10_000),
        "memory_limit_gb": st.integers(1, 100_000),
        "disruption_budget_nodes": st.one_of(
            st.integers(0, 100).map(lambda n: f"{n}%"), st.integers(0, 10_000).map(str)
        ),
        "consolidate_after": st.one_of(st.just("Never"), st.integers(0, 10_000).map(lambda n: f"{n}s")),
        "node_expiry": st.one_of(st.just("Never"), st.integers(1, 10_000).map(lambda n: f"{n}h")),
        "disk": st.integers(20, 16384),
        "capacity_types": st.sampled_from([["on-demand"], ["spot"], ["on-demand", "spot"]]),
        "arch": st.sampled_from([["amd64"], ["arm64"], ["amd64", "arm64"]]),
        "os": st.sampled_from(["al2023", "bottlerocket"]),
        "dedicated": st.booleans(),
    }
)


@settings(max_examples=40, deadline=None)
@given(pools)
def test_generated_pools_conform(fields):
    assert crd_problems(PoolSpec(**fields)) == []
