"""Karpenter v1.14.1's CRDs as the API server applies them: the OpenAPI schema and the CEL rules.

Used by the conformance tests; importing this module skips the importing test module when
``../shared/reference`` (or the checkers) are absent.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

import pytest
import yaml

from conftest import KARPENTER_CRDS, REFERENCE_MISSING

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
