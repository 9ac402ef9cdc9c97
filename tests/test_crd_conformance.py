"""Every rendered EC2NodeClass and NodePool is valid against Karpenter v1.14.1's CRDs, CEL rules included."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

import pytest
import yaml

from conftest import GPU_AMI, KARPENTER_CRDS, NODECLASS, NODEPOOL, REFERENCE_MISSING, of_type, rack_config, run_rack, stack_config

if not KARPENTER_CRDS.is_dir():
    pytest.skip(f"{REFERENCE_MISSING}: Karpenter CRDs not found in {KARPENTER_CRDS}", allow_module_level=True)

celpy = pytest.importorskip("celpy")
jsonschema = pytest.importorskip("jsonschema")
from celpy import celtypes  # noqa: E402

CRD_FILES = {
    ("karpenter.k8s.aws/v1", "EC2NodeClass"): "karpenter.k8s.aws_ec2nodeclasses.yaml",
    ("karpenter.sh/v1", "NodePool"): "karpenter.sh_nodepools.yaml",
}


@lru_cache(maxsize=None)
def crd_schema(api_version: str, kind: str) -> dict[str, Any]:
    doc = yaml.safe_load((KARPENTER_CRDS / CRD_FILES[(api_version, kind)]).read_text())
    version = api_version.split("/")[1]
    (entry,) = [v for v in doc["spec"]["versions"] if v["name"] == version]
    return entry["schema"]["openAPIV3Schema"]


# Kubernetes' CEL string library: the functions the CRDs use that plain CEL lacks.
def _split(text: Any, sep: Any) -> Any:
    return celtypes.ListType([celtypes.StringType(part) for part in str(text).split(str(sep))])


def _find(text: Any, pattern: Any) -> Any:
    match = re.search(str(pattern), str(text))
    return celtypes.StringType(match.group(0) if match else "")


CEL_FUNCTIONS = {"split": _split, "find": _find}
_env = celpy.Environment()


@lru_cache(maxsize=None)
def _program(rule: str) -> Any:
    return _env.program(_env.compile(rule), functions=CEL_FUNCTIONS)


def cel_failures(schema: dict[str, Any], value: Any, path: str = "") -> Iterator[str]:
    """Evaluate every x-kubernetes-validations rule on the value it applies to (create-time rules only)."""
    for validation in schema.get("x-kubernetes-validations", []):
        rule = validation["rule"]
        if "oldSelf" in rule:
            continue  # transition rules judge updates, not a fresh object
        result = _program(rule).evaluate({"self": celpy.json_to_cel(value)})
        if result is not True and result != celtypes.BoolType(True):
            yield f"{path or '.'}: {validation.get('message', rule)}"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, sub in value.items():
            sub_schema = props.get(key) or (extra if isinstance(extra, dict) else None)
            if sub_schema:
                yield from cel_failures(sub_schema, sub, f"{path}.{key}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for n, item in enumerate(value):
            yield from cel_failures(schema["items"], item, f"{path}[{n}]")


def problems(obj: dict[str, Any]) -> list[str]:
    schema = crd_schema(obj["apiVersion"], obj["kind"])
    validator = jsonschema.Draft7Validator(schema)
    found = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]
    return found + list(cel_failures(schema, obj))


def karpenter_objects(run) -> list[dict[str, Any]]:
    return [r.inputs for r in of_type(run, NODECLASS) + of_type(run, NODEPOOL)]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_example_stacks_conform(stack):
    objects = karpenter_objects(run_rack(stack_config(stack), stack=stack))
    assert len(objects) >= 2
    for obj in objects:
        assert problems(obj) == [], obj["metadata"]["name"]


def test_every_pool_option_conforms():
    pools = [
        {"name": "gpu", "instance_families": "g5,g6", "instance_sizes": "xlarge", "ami_id": GPU_AMI, "disk": 200,
         "dedicated": True, "taints": "nvidia.com/gpu=true:NoSchedule", "weight": 100, "volume_iops": 3000,
         "volume_throughput": 125, "capacity_types": "on-demand,spot", "node_expiry": "Never",
         "consolidation_policy": "WhenEmpty", "disruption_budget_nodes": "0", "labels": "a=b"},
        {"name": "io", "volume_type": "io2", "arch": "amd64,arm64"},
    ]
    run = run_rack(rack_config(karpenter_node_os="bottlerocket", additional_karpenter_nodepools_config=pools))
    for obj in karpenter_objects(run):
        assert problems(obj) == [], obj["metadata"]["name"]


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
    spec = {"amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}], "role": "r",
            "subnetSelectorTerms": [{"tags": {"a": "b"}}], "securityGroupSelectorTerms": [{"tags": {"a": "b"}}]}
    found = problems({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "x"}, "spec": spec})
    assert any("must specify amiFamily if amiSelectorTerms does not contain an alias" in p for p in found)
