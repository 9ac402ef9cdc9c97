"""The component package through the provider protocol, as another language's program reaches it.

The provider is started as the Python language host starts a plugin folder (``provider_helpers``), and the
tests speak the engine's side: ``GetSchema``, and ``Construct`` with camelCase inputs against a recording
resource monitor served here. What ``Construct`` registers is compared with what the same component,
built by a Python program with the same arguments, registers (``run_program``).

The schema is validated against Pulumi's own metaschema, stored as ``fixtures/metaschema/pulumi.json`` (the
README beside it names its source and commit). What the metaschema cannot state is checked here too: every
``$ref`` names a type or resource of the schema, ``required``/``requiredInputs`` name declared properties, and
an enum's values are of its ``type``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any, Iterator, Optional

import grpc
import jsonschema
import pytest
from google.protobuf import json_format

from conftest import GPU_AMI
from provider_helpers import (
    CONFIG,
    ROOT,
    UNKNOWN,
    EngineSide,
    ProviderProcess,
    camel,
    comparable,
    property_errors,
    refused,
    run_python,
)
from provider_helpers import provider, schema  # noqa: F401 (the module's fixtures: one provider process)

METASCHEMA = ROOT / "tests" / "fixtures" / "metaschema" / "pulumi.json"

PUBLIC = [
    "Rack",
    "RackCluster",
    "KarpenterController",
    "KarpenterPool",
    "NodeGroup",
    "ClusterAutoscaler",
    "MetricsServer",
    "NvidiaDevicePlugin",
    "GpuObservability",
    "Service",
]
CLUSTER = {"name": "prod-rack"}
CASES: dict[str, dict[str, Any]] = {
    "Rack": {
        "spec": {
            "cluster_name": "prod-rack",
            "device_plugin": {},
            "pools": [
                {"name": "workload", "os": "bottlerocket"},
                {"name": "gpu", "instance_families": ["g6"], "dedicated": True, "disk": 120},
            ],
            "node_groups": [{"name": "rack-ng-1", "instance_type": "g5.xlarge", "min_size": 1, "max_size": 3}],
        }
    },
    "RackCluster": {
        "spec": {
            "name": "lab",
            "vpc_id": "vpc-0123456789abcdef0",
            "private_subnet_ids": ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712"],
        }
    },
    "KarpenterController": {"cluster": CLUSTER, "replicas": 1},
    "KarpenterPool": {
        "cluster": CLUSTER,
        "pool": {
            "name": "ml",
            "instance_families": ["g6"],
            "dedicated": True,
            "disk": 120,
            "consolidation_policy": "WhenEmpty",
            "gpu_limit": 4,
            "max_hourly_usd": 20.5,
            "canary_ami_id": GPU_AMI,
        },
        "tags": {"team": "ml"},
    },
    "NodeGroup": {
        "cluster": CLUSTER,
        "group": {
            "instance_type": "g6.2xlarge",
            "min_size": 1,
            "max_size": 4,
            "dedicated": True,
            "label": "inference",
            "max_hourly_usd": 5,
        },
    },
    "ClusterAutoscaler": {"cluster": CLUSTER, "kubernetes_version": "1.34"},
    "MetricsServer": {"cluster": CLUSTER, "replicas": 2},
    "NvidiaDevicePlugin": {"cluster": CLUSTER, "time_slicing_replicas": 2},
    "GpuObservability": {"cluster": CLUSTER},
    "Service": {
        "cluster": CLUSTER,
        "service": {
            "name": "web",
            "image": "nginx:1.27",
            "port": 80,
            "scale": {"count": [2, 4], "cpu": 250},
            "node_selector_labels": {"convox.io/nodepool": "workload"},
        },
    },
}
NAMES = {"Rack": "rack", "RackCluster": "lab", "KarpenterPool": "ml", "NodeGroup": "inference", "Service": "web"}


# ---- GetSchema: Pulumi's metaschema ---------------------------------------------------------------------


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if "$ref" in node:
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _metaschema() -> Any:
    """Pulumi's metaschema (JSON Schema draft 2020-12). Its semver pattern names its groups as ECMA-262 does,
    ``(?<major>...)``, which Python's ``re`` (that jsonschema matches patterns with) spells ``(?P<major>...)``."""
    meta = json.loads(re.sub(r"\(\?<(\w+)>", r"(?P<\1>", METASCHEMA.read_text()))
    assert meta["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    return jsonschema.Draft202012Validator(meta)


def test_the_schema_validates_against_pulumis_metaschema(schema):
    validator = _metaschema()
    assert [f"{e.json_path}: {e.message[:300]}" for e in validator.iter_errors(schema)] == []
    # the metaschema is live: a type token it forbids (a type name starting with a digit) is found
    broken = {**schema, "types": {**schema["types"], "rack:index:9Lane": schema["types"]["rack:index:Lane"]}}
    assert [e.json_path for e in validator.iter_errors(broken)] == ["$.types"]


def test_the_schema_meets_the_rules_the_metaschema_cannot_state(schema):
    assert schema["name"] == "rack" and schema["namespace"] == "mixed-os-racks"
    problems = []
    for ref in _refs(schema):
        if ref == "pulumi.json#/Any":
            continue
        found = re.fullmatch(r"#/(types|resources)/(.+)", ref)
        if not found or found.group(2) not in schema[found.group(1)]:
            problems.append(f"$ref {ref!r} names nothing in the schema")
    for token, resource in schema["resources"].items():
        assert resource["isComponent"] is True
        for field, props in (("requiredInputs", "inputProperties"), ("required", "properties")):
            problems += [
                f"{token}.{field}: {name!r} is not declared" for name in resource[field] if name not in resource[props]
            ]
    for token, type_ in schema["types"].items():
        if "enum" in type_:
            kinds = {"string": str, "integer": int, "number": (int, float), "boolean": bool}
            problems += [
                f"{token}: enum value {v['value']!r} is no {type_['type']}"
                for v in type_["enum"]
                if not isinstance(v["value"], kinds[type_["type"]])
            ]
            continue
        problems += [
            f"{token}.required: {name!r} is not declared"
            for name in type_.get("required", [])
            if name not in type_.get("properties", {})
        ]
    assert problems == []


def test_every_public_component_is_listed_with_descriptions(schema):
    assert sorted(schema["resources"]) == sorted(f"rack:index:{name}" for name in PUBLIC)
    undescribed = []
    for token, resource in schema["resources"].items():
        if not resource.get("description"):
            undescribed.append(token)
        for props in ("inputProperties", "properties"):
            undescribed += [
                f"{token}.{props}.{name}" for name, prop in resource[props].items() if not prop.get("description")
            ]
    for token, type_ in schema["types"].items():
        if not type_.get("description"):
            undescribed.append(token)
        undescribed += [
            f"{token}.{name}" for name, prop in type_.get("properties", {}).items() if not prop.get("description")
        ]
        undescribed += [f"{token}.{v['name']}" for v in type_.get("enum", []) if not v.get("description")]
    assert undescribed == []


def test_inputs_required_inputs_and_outputs_are_the_components(schema):
    pool = schema["resources"]["rack:index:KarpenterPool"]
    assert pool["requiredInputs"] == ["cluster", "pool"]
    assert set(pool["inputProperties"]) == {"pool", "cluster", "subnetIds", "securityGroupIds", "nodeRole", "tags"}
    assert set(pool["properties"]) == {
        "nodeClassName",
        "nodePoolName",
        "labels",
        "taints",
        "ami",
        "maxHourlyUsd",
        "canary",
    }
    assert pool["required"] == [
        "ami",
        "labels",
        "nodeClassName",
        "nodePoolName",
        "taints",
    ]  # a budget, a canary only when set
    assert pool["properties"]["canary"]["$ref"] == "#/types/rack:index:PoolCanary"
    spec = schema["types"]["rack:index:PoolSpec"]
    assert spec["required"] == ["name"]  # a spec field with a default is optional
    assert spec["properties"]["os"]["$ref"] == "#/types/rack:index:NodeOs"
    assert [v["value"] for v in schema["types"]["rack:index:NodeOs"]["enum"]] == ["al2023", "bottlerocket"]
    assert schema["types"]["rack:index:ClusterRef"]["required"] == ["name"]
    lanes = schema["resources"]["rack:index:Rack"]["properties"]["lanes"]
    assert lanes["additionalProperties"]["$ref"] == "#/types/rack:index:Lane"
    # the lane is the pack's lanes config: the same fields
    from mixed_os_racks.pack import workloads

    lane = schema["types"]["rack:index:Lane"]["properties"]
    assert set(workloads.LANE_FIELDS) == set(lane) | {"name"}


def test_the_schema_command_prints_what_the_provider_serves(schema):
    printed = subprocess.run(
        [sys.executable, "-m", "mixed_os_racks", "schema"], capture_output=True, text=True, check=True
    )
    assert json.loads(printed.stdout) == schema


# ---- Construct: the same children as the Python path -----------------------------------------------------


@pytest.mark.parametrize("component", PUBLIC)
def test_construct_registers_what_the_python_path_registers(provider, component):
    name = NAMES.get(component, component.lower())
    engine = EngineSide()
    try:
        response = provider.construct(engine, f"rack:index:{component}", name, camel(CASES[component]))
        registered = engine.registered
        outputs = engine.component_outputs
    finally:
        engine.close()
    python = run_python(component, name, CASES[component])
    assert comparable(registered) == comparable(python.resources)
    assert response.urn == next(r.urn for r in registered if r.type == f"rack:index:{component}")
    component_urn = response.urn
    assert outputs[component_urn] == python.component_outputs[component_urn]
    assert len(registered) > 1  # the component and its children


def test_construct_returns_the_components_outputs(provider):
    engine = EngineSide()
    try:
        response = provider.construct(engine, "rack:index:KarpenterPool", "ml", camel(CASES["KarpenterPool"]))
    finally:
        engine.close()
    state = json_format.MessageToDict(response.state)
    assert state["nodePoolName"] == "ml"
    assert state["labels"] == {"convox.io/gpu-vendor": "nvidia", "convox.io/nodepool": "ml"}
    assert state["ami"] == {"alias": "al2023@latest"}
    assert {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"} not in state["taints"]  # a pool's own
    assert {"key": "dedicated-node", "value": "ml", "effect": "NoSchedule"} in state["taints"]


# ---- bad input: per-property errors ----------------------------------------------------------------------


def test_a_bad_input_comes_back_as_invalid_argument_with_its_property_path(provider):
    error = refused(
        provider, "KarpenterPool", {"cluster": CLUSTER, "pool": {"name": "ml", "volumeType": "gp2", "volumeIops": 3000}}
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert property_errors(error) == [
        ("pool.volumeIops", "karpenter nodepool 'ml': volume_iops requires volume_type gp3, io1 or io2 (currently gp2)")
    ]


def test_every_bad_input_is_reported_at_once(provider):
    error = refused(
        provider,
        "NodeGroup",
        {
            "cluster": {"name": "prod-rack", "endpoint": "https://x"},
            "group": {"instanceType": "g6.2xlarge", "minSize": -1, "label": "Bad_Label"},
            "nodeRole": "not-an-arn",
        },
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    paths = sorted(path for path, _ in property_errors(error))
    assert paths == ["cluster.certificateAuthority", "group.label", "group.minSize", "nodeRole"], property_errors(error)


def test_a_missing_required_input_is_named(provider):
    error = refused(provider, "KarpenterPool", {"cluster": CLUSTER})
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [path for path, _ in property_errors(error)] == ["pool"]


def test_a_wrongly_shaped_input_is_named_with_what_was_expected(provider):
    error = refused(provider, "KarpenterPool", {"cluster": CLUSTER, "pool": "ml", "subnetIds": "subnet-1"})
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert property_errors(error) == [
        ("pool", 'expected an object (PoolSpec) (got "ml")'),
        ("subnetIds", 'expected a list (got "subnet-1")'),
    ]


@pytest.mark.parametrize(
    "pools",
    [
        [{"name": "ml", "disk": "big"}] * 500,  # wrongly shaped: found before the component runs
        [{"name": "Bad_" + "x" * 300}] * 500,  # well shaped, refused by the component
    ],
    ids=["shape", "rule"],
)
def test_five_hundred_bad_pools_list_twenty_and_count_the_rest(provider, pools):
    error = refused(provider, "Rack", {"spec": {"clusterName": "prod-rack", "pools": pools}})
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # not RESOURCE_EXHAUSTED: the reply fits gRPC's metadata
    listed = property_errors(error)
    assert 1 <= len(listed) <= 20
    assert [path for path, _ in listed] == [
        f"spec.pools[{n}]." + ("disk" if "disk" in pools[0] else "name") for n in range(len(listed))
    ]
    assert error.details().splitlines()[-1] == f"Rack 'bad': and {500 - len(listed)} more"
    assert "Traceback" not in error.details()


# The wire's special values (pulumi/pulumi ``sdk/go/common/resource/plugin/rpc.go``, ``UnmarshalPropertyValue``,
# and the Python SDK's reader, ``sdk/python/lib/pulumi/runtime/rpc.py``). An object carrying the signature key is
# not an object but the kind of value its signature names. A secret comes in two encodings: the older one holds
# the value under ``value``; an output value holds it under ``value`` only when it is known, says whether it is
# secret, and lists the resources it came from. Either way the engine reads a secret as its value, marked secret,
# at the very place it was sent. The engine has one unknown sentinel per kind of value (a string's, an object's,
# ...), and reads each as an unknown of any type. A resource reference carries a URN and, for a custom resource,
# an id; an asset or archive is a value of its own kind. The Python SDK's reader, by contrast, moves an older
# secret up to the top-level input holding it and recognises only the string's unknown sentinel.
SIG = "4dabf18193072939515e22adb298388d"


def _secret(value: Any) -> dict[str, Any]:
    return {SIG: "1b47061264138c4ac30d75fd1eb44270", "value": value}


def _output(value: Any = None, **flags: Any) -> dict[str, Any]:
    return {SIG: "d0e6a833031e9bbcd3f4e8bde6ca49a4", **({} if value is None else {"value": value}), **flags}


UNKNOWN_OBJECT = "dd056dcd-154b-4c76-9bd3-c8f88648b5ff"
SECRETS = {
    "secret": _secret(GPU_AMI),
    "secret-output": _output(GPU_AMI, secret=True),
    "secret-in-output": _output(_secret(GPU_AMI)),
}
UNKNOWNS = {"unknown": UNKNOWN, "unknown-object": UNKNOWN_OBJECT, "unknown-output": _output()}


@pytest.mark.parametrize("value", [*SECRETS.values(), *UNKNOWNS.values()], ids=[*SECRETS, *UNKNOWNS])
def test_an_output_inside_a_spec_list_is_named_by_its_position(provider, value):
    """The engine sends a program's Outputs to a provider that accepts them (``acceptOutputs``, as the SDK's
    host answers ``Configure``) as output values where they are, and a secret in the older encoding where it is;
    a preview's unknowns as any of its unknown sentinels. Each is named at its own path, in both encodings."""
    pools = [{"name": "a"}, {"name": "b"}, {"name": "c", "amiId": value}]
    error = refused(provider, "Rack", {"spec": {"clusterName": "prod-rack", "pools": pools}})
    assert [path for path, _ in property_errors(error)] == ["spec.pools[2].amiId"]
    error = refused(
        provider, "KarpenterPool", {"cluster": CLUSTER, "pool": {"name": "ml", "instanceFamilies": ["g6", value]}}
    )
    [(path, reason)] = property_errors(error)
    assert path == "pool.instanceFamilies[1]" and "spec fields take plain values" in reason
    assert reason.startswith("a secret" if isinstance(value, dict) and "value" in value else "unknown during preview")


def _registered(
    provider: ProviderProcess,
    component: str,
    inputs: dict[str, Any],
    dependencies: Optional[dict[str, list[str]]] = None,
) -> list[tuple[str, str]]:
    engine = EngineSide()
    try:
        provider.construct(engine, f"rack:index:{component}", "ml", inputs, dependencies=dependencies)
        return sorted((r.urn, r.type) for r in engine.registered)
    finally:
        engine.close()


@pytest.mark.parametrize(
    "cluster",
    [
        {"name": _secret("prod-rack")},
        {"name": _output("prod-rack", secret=True)},
        _secret({"name": "prod-rack"}),
        _output({"name": "prod-rack"}, secret=True),
    ],
    ids=["name-secret", "name-secret-output", "cluster-secret", "cluster-secret-output"],
)
def test_a_secret_of_a_valid_value_is_taken_where_the_value_is(provider, cluster):
    """The cluster's fields take outputs, so a secret name is a name (whichever encoding): the component registers
    what it registers for the plain name. A secret whole cluster is a cluster whose every field is secret."""
    pool = {"name": "ml", "instanceFamilies": ["m7i"]}
    assert _registered(provider, "KarpenterPool", {"cluster": cluster, "pool": pool}) == _registered(
        provider, "KarpenterPool", {"cluster": CLUSTER, "pool": pool}
    )


@pytest.mark.parametrize(
    "wrap",
    [_secret, lambda v: _output(v, secret=True), lambda v: _output(_secret(v))],
    ids=["secret", "secret-output", "secret-in-output"],
)
def test_a_wrong_value_inside_a_secret_is_named_at_its_own_path(provider, wrap):
    error = refused(
        provider,
        "KarpenterPool",
        {
            "cluster": {"name": wrap(True)},
            "pool": {"name": "ml"},
            "subnetIds": ["subnet-0a1b2c3d4e5f60711", wrap(["subnet-1"])],
        },
    )
    assert property_errors(error) == [
        ("cluster.name", "expected a string (got true)"),
        ("subnetIds[1]", 'expected a string (got ["subnet-1"])'),
    ]
    error = refused(
        provider, "KarpenterPool", {"cluster": wrap({"name": "prod-rack", "endpoint": False}), "pool": {"name": "ml"}}
    )
    assert property_errors(error) == [("cluster.endpoint", "expected a string (got false)")]


def test_plain_inputs_that_came_from_other_resources_keep_their_values(provider):
    """With each input the engine lists the resources its value came from (``inputDependencies``). The Python SDK's
    server makes a whole top-level input with such a list, and no output inside it, one output of those resources,
    and its host then reads an output where an object belongs as an object with no fields. The schema marks
    ``cluster``, ``pool`` and ``tags`` plain: their values are what the program gave."""
    inputs = {"cluster": CLUSTER, "pool": {"name": "ml", "instanceFamilies": ["m7i"]}, "tags": {"team": "ml"}}
    urn = "urn:pulumi:dev::consumer::aws:eks/cluster:Cluster::shared"
    assert _registered(provider, "KarpenterPool", inputs, {key: [urn] for key in inputs}) == _registered(
        provider, "KarpenterPool", inputs
    )


def test_references_assets_and_malformed_values_are_named_where_they_are(provider):
    role = {SIG: "5cf8f73096256a8f31e491e813e4eb8e", "urn": "urn:pulumi:dev::consumer::aws:iam/role:Role::r", "id": "r"}
    asset = {SIG: "c44067f5952c0a294b673a41bacd8c17", "text": "x"}
    error = refused(
        provider,
        "KarpenterPool",
        {
            "cluster": {"name": asset},
            "pool": {"name": "ml", "disk": role},
            "tags": {"team": {SIG: "1b47061264138c4ac30d75fd1eb44270"}},
            "subnetIds": [{SIG: "not-a-signature"}],
        },
    )
    assert property_errors(error) == [
        ("pool.disk", "expected a whole number (got a reference to urn:pulumi:dev::consumer::aws:iam/role:Role::r)"),
        ("cluster.name", "expected a string (got an asset)"),
        ("subnetIds[0]", 'a value of an unknown kind (signature "not-a-signature")'),
        ("tags.team", "a secret with no value"),
    ]


@pytest.mark.parametrize("wrong", ["amiID", "ami_id", "amiIdd"])
def test_an_undeclared_input_is_refused_with_the_name_meant(provider, wrong):
    error = refused(provider, "KarpenterPool", {"cluster": CLUSTER, "pool": {"name": "ml", wrong: GPU_AMI}})
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert property_errors(error) == [
        (f"pool.{wrong}", f"'{wrong}' is not an input of PoolSpec (did you mean 'amiId'?)")
    ]
    error = refused(provider, "KarpenterPool", {"cluster": CLUSTER, "pool": {"name": "ml"}, "tag": {}})
    assert property_errors(error) == [("tag", "'tag' is not an input of KarpenterPool (did you mean 'tags'?)")]


@pytest.mark.parametrize("token", ["rack:index:KarpenterPol", "aws:ec2:Instance"])
def test_an_unknown_type_token_is_answered_with_the_components(provider, token):
    engine = EngineSide()
    try:
        with pytest.raises(grpc.RpcError) as caught:
            provider.construct(engine, token, "x", {})
    finally:
        engine.close()
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    message = caught.value.details()
    assert message.startswith(f'"{token}" is no component of this package')
    assert message.endswith("; it constructs " + ", ".join(f"rack:index:{name}" for name in PUBLIC))
    assert ("did you mean rack:index:KarpenterPool?" in message) == token.startswith("rack:")


# ---- unknown inputs preview ------------------------------------------------------------------------------


@pytest.mark.parametrize("unknown", [*UNKNOWNS.values()], ids=[*UNKNOWNS])
@pytest.mark.parametrize(
    "component,key", [("KarpenterPool", "cluster"), ("KarpenterPool", "pool"), ("NodeGroup", "group"), ("Rack", "spec")]
)
def test_a_whole_unknown_object_is_named_unknown_not_missing(provider, unknown, component, key):
    """An unknown value is a value of any shape not known yet: nothing inside it is missing. ``cluster`` and the
    specs are plain in the schema (the generated SDKs take the object itself, with outputs in the cluster's
    fields), so a whole unknown one is refused at its own path, as unknown."""
    inputs = {k: v for k, v in CASES[component].items() if k in ("cluster", "pool", "group", "spec")}
    error = refused(provider, component, {**camel(inputs), key: unknown})
    [(path, reason)] = property_errors(error)
    assert path == key and reason.startswith("unknown during preview"), reason
    assert "required" not in reason.lower() and "missing" not in reason.lower()


@pytest.mark.parametrize("unknown", [*UNKNOWNS.values()], ids=[*UNKNOWNS])
def test_unknown_items_of_a_list_preview_where_the_list_takes_outputs(provider, unknown):
    pool = {"name": "ml", "instanceFamilies": ["m7i"]}
    registered = _registered(
        provider,
        "KarpenterPool",
        {"cluster": {"name": unknown}, "pool": pool, "subnetIds": ["subnet-0a1b2c3d4e5f60711", unknown]},
    )
    assert "kubernetes:karpenter.sh/v1:NodePool" in {type_ for _, type_ in registered}
    error = refused(provider, "Rack", {"spec": {"clusterName": "prod-rack", "pools": [{"name": "a"}, unknown]}})
    [(path, reason)] = property_errors(error)
    assert path == "spec.pools[1]" and reason.startswith("unknown during preview")


def test_an_unknown_cluster_name_previews(provider):
    engine = EngineSide()
    try:
        provider.construct(
            engine,
            "rack:index:KarpenterPool",
            "ml",
            {"cluster": {"name": UNKNOWN}, "pool": {"name": "ml", "instanceFamilies": ["m7i"]}},
        )
        registered = {r.type: r for r in engine.registered}
    finally:
        engine.close()
    node_class = registered["kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"]
    assert node_class.inputs["spec"]["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    assert "kubernetes:karpenter.sh/v1:NodePool" in registered
