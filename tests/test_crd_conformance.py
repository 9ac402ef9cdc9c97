"""Every rendered EC2NodeClass and NodePool is valid against Karpenter v1.14.1's CRDs, CEL rules included."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixed_os_racks.offline.catalog import Catalog
from mixed_os_racks.pack import bootfacts

from promotion_helpers import NEW_AMI, catalog

from conftest import GPU_AMI, NODECLASS, NODEPOOL, of_type, rack_config, run_rack, stack_config
from crd_helpers import crd_schema, jsonschema, problems


SAMPLE_SECURITY_GROUP = "sg-0123456789abcdef0"


def at_apply(obj: Any) -> Any:
    """An object as the API server gets it at apply: a created cluster's security group id is unknown
    at preview (EKS makes the group with the cluster), a real ``sg-`` id then."""
    if isinstance(obj, dict):
        return {k: (SAMPLE_SECURITY_GROUP if k == "id" and v == "<computed>" else at_apply(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [at_apply(v) for v in obj]
    return obj


def karpenter_objects(run) -> list[dict[str, Any]]:
    return [at_apply(r.inputs) for r in of_type(run, NODECLASS) + of_type(run, NODEPOOL)]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_example_stacks_conform(stack):
    objects = karpenter_objects(run_rack(stack_config(stack), stack=stack))
    assert len(objects) >= 2
    for obj in objects:
        assert problems(obj) == [], obj["metadata"]["name"]


def test_every_pool_option_conforms():
    pools = [
        {
            "name": "gpu",
            "instance_families": "g5,g6",
            "instance_sizes": "xlarge",
            "ami_id": GPU_AMI,
            "disk": 200,
            "dedicated": True,
            "taints": "nvidia.com/gpu=true:NoSchedule",
            "weight": 100,
            "volume_iops": 3000,
            "volume_throughput": 125,
            "capacity_types": "on-demand,spot",
            "node_expiry": "Never",
            "consolidation_policy": "WhenEmpty",
            "disruption_budget_nodes": "0",
            "labels": "a=b",
        },
        {"name": "io", "volume_type": "io2", "volume_iops": 2000, "arch": "amd64,arm64"},
    ]
    run = run_rack(rack_config(karpenter_node_os="bottlerocket", additional_karpenter_nodepools_config=pools))
    for obj in karpenter_objects(run):
        assert problems(obj) == [], obj["metadata"]["name"]


def test_a_canary_conforms(tmp_path):
    """A pool's canary: its NodePool's weight above the pool's and ``limits.nodes`` are what the CRD takes."""
    pools = [
        {
            "name": "gpu",
            "instance_families": "g5",
            "ami_id": GPU_AMI,
            "disk": 200,
            "weight": 99,
            "canary_ami_id": NEW_AMI,
            "canary_nodes": 3,
        }
    ]
    run = run_rack(rack_config(additional_karpenter_nodepools_config=pools), Catalog.load(catalog(tmp_path)))
    canary = [obj for obj in karpenter_objects(run) if obj["metadata"]["name"] == "gpu-canary"]
    assert [obj["kind"] for obj in canary] == ["EC2NodeClass", "NodePool"]
    assert canary[1]["spec"]["weight"] == 100 and canary[1]["spec"]["limits"]["nodes"] == "3"
    for obj in canary:
        assert problems(obj) == [], obj["kind"]
    over = {**canary[1], "spec": {**canary[1]["spec"], "weight": 101}}
    assert any("weight" in p for p in problems(over))  # the checker does read the weight's bound


def test_the_checker_catches_what_karpenter_refuses():
    bad = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "bad"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest", "id": "ami-0123456789abcdef0"}],
            "role": "r",
            "subnetSelectorTerms": [{"tags": {"a": "b"}}],
            "securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
            "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "volumeType": "gp9"}}],
        },
    }
    found = problems(bad)
    assert any("gp9" in p for p in found)  # schema enum
    assert any("'alias' is mutually exclusive" in p for p in found)  # CEL


def test_a_pinned_id_without_family_is_caught():
    spec = {
        "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}],
        "role": "r",
        "subnetSelectorTerms": [{"tags": {"a": "b"}}],
        "securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
    }
    found = problems(
        {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "x"}, "spec": spec}
    )
    assert any("must specify amiFamily if amiSelectorTerms does not contain an alias" in p for p in found)


NODE_POOL_LIMITS = crd_schema("karpenter.sh/v1", "NodePool")["properties"]["spec"]["properties"]["limits"]


@settings(max_examples=300)
@given(
    st.one_of(
        st.text(alphabet="0123456789.+-eEKMGTPinumk ", max_size=10),
        st.booleans(),
        st.lists(st.integers(), max_size=1),
        st.from_regex(
            r" ?[+-]?[0-9]{0,3}(\.[0-9]{0,2})?([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{0,3}(\.[0-9]?)?)? ?", fullmatch=True
        ),
        st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
    )
)
def test_a_limit_the_node_pool_schema_refuses_is_priced_as_never_created(value):
    """The worst case reads a NodePool's limits as the API server takes them: refused ("it is never created")
    exactly when Karpenter's CRD refuses them (text held to its quantity pattern; a boolean, list or mapping)."""
    refused_by_schema = any(jsonschema.Draft7Validator(NODE_POOL_LIMITS).iter_errors({"cpu": value}))
    _, why, _ = bootfacts.node_pool_limits({"cpu": value})
    assert why.startswith("is never created: Kubernetes refuses") == refused_by_schema, (value, why)
