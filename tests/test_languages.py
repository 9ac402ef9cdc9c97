"""The component package as programs in other languages meet it: names every SDK generator can write, what one
deployment's components claim in a cluster, refusals as one line at the program's property path, the metadata a
published SDK needs, descriptions for every language, and a TypeScript SDK whose typings are the schema's.

The provider is started as the Python language host starts a plugin folder, and each test speaks the engine's side
over gRPC (``provider_helpers``): ``GetSchema``, and ``Construct`` against a recording resource monitor, one monitor
per deployment as the engine serves one per ``pulumi preview`` or ``up``.

How the generators write a schema's names, read in pulumi/pulumi ``pkg/codegen`` (commit 1b5949891b3c, 2026-08-21)
and pulumi/pulumi-dotnet ``pulumi-language-dotnet/codegen`` (commit 5e61d9ad6d35):

* Node.js (``nodejs/gen.go``, ``genPlainType`` and the resource class): a property's schema name is written as it
  is, as an interface member (``name?: T;``) and as ``args?.name``; a name that is no JavaScript identifier
  (``ephemeral-storage``) makes ``types/input.ts`` fail to compile (TS1131), and a local SDK's install runs ``tsc``.
* Go (``go/gen.go``, ``Title``): the struct field is the name with its first letter upper-cased and hyphens removed
  (``Unhyphenate``); ``ID``, ``URN``, ``GetProvider`` and ``ElementType`` are renamed (``structFieldName``).
* C# (pulumi-dotnet ``codegen/gen.go``, ``propertyName``): ``UppercaseFirst(Unhyphenate(name))`` for the
  property, while the ``[Input("<name>")]`` attribute keeps the wire name; a member named like its class is refused
  by the compiler (CS0542), which the generator renames only for functions.
* Python (``python/gen.go``, ``PyName``): camelCase becomes snake_case, so two names alike but for capitals are one.
* Java follows the schema's camelCase names. An enum member's ``name`` is capitalised and made an identifier by
  each generator (``makeSafeEnumName``).

So the rule every name of the schema meets, at any depth (every resource's inputs and outputs, every type's
properties; a type reached from an output or an input is one of ``types``): ASCII letters and digits starting with
a lower-case letter, no two alike but for capitals in one object, none equal to its holder's class name once
capitalised, and no ``id`` or ``urn`` output (every SDK's resources have both).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any, Iterator, Mapping

import grpc
import pytest
from hypothesis import given, strategies as st

from conftest import GPU_AMI, REPO
from provider_helpers import CONFIG, EngineSide, ProviderProcess, property_errors
from provider_helpers import provider, schema  # noqa: F401 (the module's fixtures: one provider process)

EXAMPLE = REPO / "examples" / "typescript-consumer"
CLUSTER = {"name": "prod-rack"}
RACK = {
    "spec": {
        "clusterName": "prod-rack",
        "devicePlugin": {},
        "pools": [
            {"name": "workload", "os": "bottlerocket"},
            {"name": "gpu", "instanceFamilies": ["g6"], "dedicated": True, "disk": 120},
        ],
        "nodeGroups": [{"name": "rack-ng-1", "instanceType": "g5.xlarge", "minSize": 1, "maxSize": 3}],
    }
}


# ---- every name is an identifier in every language ----------------------------------------------------------------


def name_problems(schema: Mapping[str, Any]) -> list[str]:
    """What no SDK generator could write as it is, by ``<token>.<property>``."""
    problems = []
    holders = [
        (token, f"{token.split(':')[-1]}Args", resource.get("inputProperties", {}), False)
        for token, resource in schema.get("resources", {}).items()
    ]
    holders += [
        (token, token.split(":")[-1], resource.get("properties", {}), True)
        for token, resource in schema.get("resources", {}).items()
    ]
    holders += [
        (token, token.split(":")[-1], type_.get("properties", {}), False) for token, type_ in schema["types"].items()
    ]
    for token, class_name, properties, outputs in holders:
        folded: dict[str, str] = {}
        for name in properties:
            where = f"{token}.{name}"
            if not re.fullmatch(r"[a-z][A-Za-z0-9]*", name):
                problems.append(f"{where}: not an identifier (ASCII letters and digits, a lower-case letter first)")
            if name.lower() in folded:
                problems.append(f"{where}: alike but for capitals to {folded[name.lower()]}")
            folded[name.lower()] = name
            if name[:1].upper() + name[1:] == class_name:
                problems.append(f"{where}: named like its class {class_name} (C# refuses it)")
            if outputs and name in ("id", "urn"):
                problems.append(f"{where}: every SDK's resource has its own {name}")
    for token, type_ in schema["types"].items():
        if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", token.split(":")[-1]):
            problems.append(f"{token}: a type name is a capitalised identifier")
        problems += [
            f"{token}.{member.get('name')}: an enum member's name is an identifier"
            for member in type_.get("enum", [])
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", str(member.get("name")))
        ]
    return problems


def test_every_name_of_the_schema_is_an_identifier_in_every_language(schema):
    assert name_problems(schema) == []
    assert "ephemeralStorage" in schema["types"]["rack:index:Allocatable"]["properties"]
    # the rule is live: the names that broke the generated SDKs, and the others it states, are each found
    broken = json.loads(json.dumps(schema))
    allocatable = broken["types"]["rack:index:Allocatable"]["properties"]
    allocatable["ephemeral-storage"] = allocatable.pop("ephemeralStorage")
    broken["types"]["rack:index:AmiRef"]["properties"]["amiTYPE"] = {"type": "string"}
    broken["types"]["rack:index:PoolCanary"]["properties"]["poolCanary"] = {"type": "string"}
    broken["resources"]["rack:index:Rack"]["properties"]["urn"] = {"type": "string"}
    assert sorted(p.split(": ")[0] for p in name_problems(broken)) == [
        "rack:index:Allocatable.ephemeral-storage",
        "rack:index:AmiRef.amiTYPE",
        "rack:index:PoolCanary.poolCanary",
        "rack:index:Rack.urn",
    ]


def declared_keys(value: Any, spec: Mapping[str, Any], schema: Mapping[str, Any], path: str) -> Iterator[str]:
    """Each key of an output value, at any depth, that its schema type does not declare, by path."""
    ref = spec.get("$ref")
    if ref is not None and ref.startswith("#/types/"):
        type_ = schema["types"][ref.removeprefix("#/types/")]
        if "properties" in type_ and isinstance(value, dict):
            for key, item in value.items():
                if key not in type_["properties"]:
                    yield f"{path}.{key}"
                else:
                    yield from declared_keys(item, type_["properties"][key], schema, f"{path}.{key}")
    elif spec.get("type") == "array" and isinstance(value, list):
        for n, item in enumerate(value):
            yield from declared_keys(item, spec.get("items", {}), schema, f"{path}[{n}]")
    elif spec.get("type") == "object" and isinstance(value, dict) and "additionalProperties" in spec:
        for key, item in value.items():
            yield from declared_keys(item, spec["additionalProperties"], schema, f"{path}.{key}")


def construct(
    provider: ProviderProcess, engine: EngineSide, component: str, name: str, inputs: dict[str, Any], **kwargs: Any
) -> dict[str, Any]:
    from google.protobuf import json_format

    return json_format.MessageToDict(
        provider.construct(engine, f"rack:index:{component}", name, inputs, **kwargs).state
    )


def test_the_outputs_reach_the_program_in_the_schemas_names_at_any_depth(provider, schema):
    """``Rack.lanes`` is a map of ``Lane``s, each with its ``allocatable``: the Python side writes the Kubernetes
    name ``ephemeral-storage`` (the pack's ``lanes`` config reads it so), and the program gets ``ephemeralStorage``."""
    engine = EngineSide()
    try:
        state = construct(provider, engine, "Rack", "rack", RACK)
    finally:
        engine.close()
    outputs = schema["resources"]["rack:index:Rack"]["properties"]
    assert [p for key, value in state.items() for p in declared_keys(value, outputs[key], schema, key)] == []
    assert state["lanes"]["gpu"]["allocatable"]["ephemeralStorage"].endswith("Mi")
    assert set(state["lanes"]["gpu"]["allocatable"]) == {"cpu", "memory", "ephemeralStorage"}


# ---- claims: one deployment, one owner per object ------------------------------------------------------------------


def refused(
    provider: ProviderProcess, engine: EngineSide, component: str, name: str, inputs: dict[str, Any], **kwargs: Any
) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        provider.construct(engine, f"rack:index:{component}", name, inputs, **kwargs)
    return caught.value


@pytest.mark.parametrize(
    "component,inputs,what",
    [
        ("KarpenterPool", {"pool": {"name": "ml", "instanceFamilies": ["m7i"]}}, "NodePool ml"),
        ("NvidiaDevicePlugin", {}, "nvidia-device-plugin"),
        ("MetricsServer", {}, "metrics-server"),
        ("KarpenterController", {"replicas": 1}, "Karpenter"),
    ],
)
def test_what_a_cluster_runs_once_is_claimed_once_per_deployment(provider, component, inputs, what):
    """Each ``Construct`` gets a new monitor client from the SDK; the deployment is the monitor endpoint the engine
    names in every request. A second component putting the same object in the same cluster is refused; a second
    deployment (another engine, another endpoint), or another cluster, is apart."""
    one, other = EngineSide(), EngineSide()
    try:
        construct(provider, one, component, "first", {"cluster": CLUSTER, **inputs})
        error = refused(provider, one, component, "second", {"cluster": dict(CLUSTER), **inputs})
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        [(path, reason)] = property_errors(error)
        assert path == "cluster"
        assert reason.startswith(f"{component} 'first' already puts {what}"), reason
        assert "Traceback" not in error.details()
        construct(provider, one, component, "elsewhere", {"cluster": {"name": "other-rack"}, **inputs})
        construct(provider, other, component, "second", {"cluster": CLUSTER, **inputs})
    finally:
        one.close()
        other.close()


def test_a_cluster_given_with_its_endpoint_is_the_cluster_it_names(provider):
    """Whether a program gives the cluster's name alone or with its endpoint and certificate authority, it is the
    same cluster: the one the name names, through the deployment's AWS provider."""
    pool = {"pool": {"name": "ml", "instanceFamilies": ["m7i"]}}
    engine = EngineSide()
    try:
        construct(provider, engine, "KarpenterPool", "us", {"cluster": CLUSTER, **pool})
        error = refused(
            provider,
            engine,
            "KarpenterPool",
            "again",
            {
                "cluster": {
                    **CLUSTER,
                    "endpoint": "https://ABC.gr7.us-east-1.eks.amazonaws.com",
                    "certificateAuthority": "Q0E=",
                },
                **pool,
            },
        )
        assert property_errors(error)[0][1].startswith("KarpenterPool 'us' already puts NodePool ml")
    finally:
        engine.close()


def test_a_cluster_of_one_name_through_another_aws_provider_is_another_cluster():
    """A cluster's name is unique in one account and region, which the AWS provider fixes: the same name through a
    provider of another region is another cluster, and each takes its own pool ``ml``; through one provider, not."""
    import pulumi
    import pulumi_aws as aws

    from mixed_os_racks import KarpenterPool
    from mixed_os_racks.errors import ConfigError
    from mixed_os_racks.offline import run_program

    pool = {"name": "ml", "instance_families": ["m7i"]}

    def apart() -> None:
        eu = aws.Provider("eu", region="eu-west-1")
        KarpenterPool("us", {"cluster": CLUSTER, "pool": pool})
        KarpenterPool("eu", {"cluster": CLUSTER, "pool": pool}, pulumi.ResourceOptions(providers={"aws": eu}))

    assert {r.name for r in run_program(apart, dict(CONFIG)).resources} >= {"us", "eu"}

    def together() -> None:
        eu = aws.Provider("eu", region="eu-west-1")
        KarpenterPool("eu", {"cluster": CLUSTER, "pool": pool}, pulumi.ResourceOptions(providers={"aws": eu}))
        KarpenterPool("eu-again", {"cluster": CLUSTER, "pool": pool}, pulumi.ResourceOptions(providers={"aws": eu}))

    with pytest.raises(ConfigError, match=r"KarpenterPool 'eu' already puts NodePool ml in this cluster"):
        run_program(together, dict(CONFIG))


# ---- a refusal is one line, at the program's property path
# ------------------------------------------------------------


@pytest.mark.parametrize(
    "component,inputs,path,subject",
    [
        (
            "KarpenterPool",
            {"cluster": CLUSTER, "pool": {"name": "ml", "instanceFamilies": ["g5"], "amiId": GPU_AMI, "disk": 80}},
            "pool.disk",
            "karpenter nodepool 'ml'",
        ),
        (
            "NodeGroup",
            {"cluster": CLUSTER, "group": {"instanceType": "g5.xlarge", "amiId": GPU_AMI, "disk": 30}},
            "group.disk",
            "node group 'bad'",
        ),
        (
            "Rack",
            {
                "spec": {
                    "clusterName": "prod-rack",
                    "pools": [
                        {"name": "workload"},
                        {"name": "gpu", "instanceFamilies": ["g5"], "amiId": GPU_AMI, "disk": 80},
                    ],
                }
            },
            "spec.pools[1].disk",
            "karpenter nodepool 'gpu'",
        ),
    ],
)
def test_a_refusal_found_while_building_is_one_line_at_the_programs_property(
    provider, component, inputs, path, subject
):
    """A disk below the pinned AMI's root snapshot is found once the AMI's facts are read: the Python path says
    ``PoolSpec.disk: karpenter nodepool 'ml': disk 80 GiB is smaller ...``; another language's program gets that line
    at its own property path, not a Python traceback."""
    engine = EngineSide()
    try:
        error = refused(provider, engine, component, "bad", inputs)
    finally:
        engine.close()
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    [(at, reason)] = property_errors(error)
    assert at == path
    assert re.fullmatch(
        rf"{re.escape(subject)}: disk \d+ GiB is smaller than the root snapshot of {GPU_AMI} \(100 GiB\); "
        r"give it a disk of 100 GiB or more",
        reason,
    ), reason
    assert error.details() == f"{component} 'bad': {path}: {reason}"


# ---- what a published SDK needs --------------------------------------------------------------------------------------


def test_the_schema_names_the_repository_and_each_languages_package(schema):
    """pulumi-eks's schema (pulumi/pulumi-eks ``provider/cmd/pulumi-resource-eks/schema.json``, commit 7bf0c1b179932)
    sets ``repository`` and each language's settings; the generators read ``nodejs.packageName``, ``go.importBasePath``,
    ``csharp.rootNamespace``, ``java.basePackage`` and ``python.packageName``. The Go generator's default import path
    is ``<repository host and path>/sdk/go/<name>`` (``ExtractImportBasePath``), and the Go language host puts the
    module one folder up (``path.Dir(importBasePath)``), so the two agree."""
    source = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]["Source"]
    assert schema["repository"] == source
    language = schema["language"]
    assert language["nodejs"]["packageName"] == f"@{schema['namespace']}/{schema['name']}"
    assert language["go"]["importBasePath"] == f"{source.removeprefix('https://')}/sdk/go/{schema['name']}"
    assert re.fullmatch(r"[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)*", language["csharp"]["rootNamespace"])
    assert re.fullmatch(r"[a-z][a-z0-9]*(\.[a-z][a-z0-9]*)+", language["java"]["basePackage"])
    assert language["python"]["packageName"] != "mixed_os_racks"  # the generated SDK is not this package
    assert all(settings.get("respectSchemaVersion") for settings in language.values())
    # what docs/languages.md imports is what the generators name
    docs = (REPO / "docs" / "languages.md").read_text()
    assert f'from "{language["nodejs"]["packageName"]}"' in docs
    assert f'"{language["go"]["importBasePath"]}"' in docs


# ---- descriptions for every language ---------------------------------------------------------------------------------


def test_descriptions_speak_to_every_language(schema):
    """No description names a Python call, a Python-only object, Python's ``None``/``True``/``False``, or a field by
    its Python name (a snake_case word whose camelCase the schema declares), outside a stack-config key ``rack:...``."""
    declared = {
        name
        for section in ("resources", "types")
        for item in schema[section].values()
        for props in ("properties", "inputProperties")
        for name in item.get(props, {})
    }
    found = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "description" and isinstance(value, str):
                    check(value, where)
                else:
                    walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for n, value in enumerate(node):
                walk(value, f"{where}[{n}]")

    def check(text: str, where: str) -> None:
        code = " ".join(span for span in re.findall(r"`([^`]+)`", text) if not span.startswith("rack:"))
        for pattern in (
            r"\bPython\b",
            r"\bNone\b",
            r"\bTrue\b",
            r"\bFalse\b",
            r"``",
            r"\w\((\.\.\.|\{|\))",
            r"\bpulumi\.",
            r"ClusterRef\.",
            r"^\s{2,}\S",
        ):
            if re.search(pattern, text, re.M):
                found.append(f"{where}: {pattern} in {text[:120]!r}")
        for word in re.findall(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b", code):
            camel = re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), word)
            if camel in declared:
                found.append(f"{where}: {word} is {camel} in the schema")

    walk(schema, "schema")
    assert found == []


# ---- the TypeScript SDK --------------------------------------------------------------------------------------------


def test_the_examples_sdk_is_the_one_generated_from_the_schema(schema):
    """``examples/typescript-consumer/rack.ts`` is what ``mixed-os-racks schema --typescript`` writes from the schema
    the provider serves: its typings follow the schema, a field at a time."""
    from mixed_os_racks.typings import typescript

    assert (EXAMPLE / "rack.ts").read_text() == typescript(schema)


@pytest.mark.slow
def test_tsc_accepts_the_example_and_refuses_what_the_schema_refuses(tmp_path):
    """``tsc`` (the TypeScript the example's lock file pins) compiles the example and the TypeScript program of
    docs/languages.md against the generated module, and refuses, line by line, what the schema does not declare: each
    ``@ts-expect-error`` must find its error."""
    tsc = EXAMPLE / "node_modules" / "typescript" / "bin" / "tsc"
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed: tsc is not run here")
    assert tsc.is_file(), f"{tsc} is missing: run `make compiled` (npm ci in {EXAMPLE})"
    lock = json.loads((EXAMPLE / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/typescript"]["version"] == "5.9.3"
    (tmp_path / "checks.ts").write_text("""\
import * as rack from "./rack";
const cluster: rack.types.input.ClusterRefArgs = { name: "prod-rack" };
new rack.NodeGroup("a", { cluster, group: { instanceType: "g6.xlarge", maxHourlyUsd: 5 } });
// @ts-expect-error a budget is a number
new rack.NodeGroup("b", { cluster, group: { instanceType: "g6.xlarge", maxHourlyUsd: "5" } });
// @ts-expect-error the Python name is not the schema's
new rack.KarpenterPool("c", { cluster, pool: { name: "c", ami_id: "ami-0123456789abcdef0" } });
// @ts-expect-error pool is required
new rack.KarpenterPool("d", { cluster });
// @ts-expect-error an OS the enum does not have
new rack.KarpenterPool("e", { cluster, pool: { name: "e", os: "ubuntu" } });
const lane = (l: rack.types.output.Lane): string | undefined => l.allocatable?.ephemeralStorage;
export const outputs = [lane];
""")
    for name in ("index.ts", "rack.ts", "tsconfig.json"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    (tmp_path / "node_modules").symlink_to(EXAMPLE / "node_modules")
    # the TypeScript program of docs/languages.md, with the generated module where the package would be
    (program,) = re.findall(r"```typescript\n(.*?)```", (REPO / "docs" / "languages.md").read_text(), re.S)
    assert 'from "@mixed-os-racks/rack"' in program
    (tmp_path / "docs.ts").write_text(program.replace('from "@mixed-os-racks/rack"', 'from "./rack"'))
    config = json.loads((tmp_path / "tsconfig.json").read_text())
    (tmp_path / "tsconfig.json").write_text(json.dumps({**config, "files": [*config["files"], "checks.ts", "docs.ts"]}))
    done = subprocess.run(
        ["node", str(tsc), "--noEmit", "-p", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr


# ---- the Go program of docs/languages.md, by the Go generator's rules
# ---------------------------------------------------
# pulumi/pulumi pkg/codegen/go/gen.go (commit 1b5949891b3c), ``typeStringImpl``: an input the schema marks plain is
# its plain Go type, so a required plain object is a value of ``<Type>Args`` (an object type in an input is its
# input shape, ``resolveObjectType``) and an optional one a pointer; an optional plain scalar is a pointer
# (``*int``: ``pulumi.IntRef``); an input that takes outputs is an input type (``pulumi.StringInput``:
# ``pulumi.String``). Plainness reaches into a list or a map, not into an object type, whose fields are declared
# once for every use. A field is the property's name with its first letter upper-cased (``Title``).


def _fields(body: str) -> list[tuple[str, str]]:
    """``Field: value`` pairs of a Go composite literal's body, at its top level."""
    pairs, depth, start = [], 0, 0
    for n, ch in enumerate(body + ","):
        depth += ch in "{(" or -(ch in "})")
        if ch == "," and depth == 0:
            item = body[start:n].strip()
            if item:
                key, _, value = item.partition(":")
                pairs.append((key.strip(), value.strip()))
            start = n + 1
    return pairs


def go_problems(
    literal: str, properties: Mapping[str, Any], required: list[str], schema: Mapping[str, Any], plain: bool, where: str
) -> list[str]:
    by_field = {name[:1].upper() + name[1:]: name for name in properties}
    problems = []
    for field, value in _fields(literal):
        name = by_field.get(field)
        if name is None:
            problems.append(f"{where}.{field}: no such field")
            continue
        prop, at = properties[name], f"{where}.{name}"
        is_plain, optional = plain or bool(prop.get("plain")), name not in required
        ref = prop.get("$ref", "")
        if ref.startswith("#/types/") and "properties" in schema["types"][ref.removeprefix("#/types/")]:
            type_ = schema["types"][ref.removeprefix("#/types/")]
            token = ref.split(":")[-1]
            head = f"&rack.{token}Args{{" if is_plain and optional else f"rack.{token}Args{{"
            if not (value.startswith(head) or not is_plain and value.startswith(f"&rack.{token}Args{{")):
                problems.append(f"{at}: expected {head}...}} (got {value[:40]})")
                continue
            # an object type's fields are its own: plain or not as its type declares them
            problems += go_problems(
                value[value.index("{") + 1 : value.rindex("}")],
                type_["properties"],
                type_.get("required", []),
                schema,
                False,
                at,
            )
            continue
        kind = {"string": "String", "integer": "Int", "number": "Float64", "boolean": "Bool"}.get(prop.get("type", ""))
        if kind is None:
            continue
        if not is_plain:
            expected = f"pulumi.{kind}("
        elif optional:
            expected = f"pulumi.{kind}Ref("
        else:
            expected = {"String": '"', "Bool": "t" if value.startswith("t") else "f"}.get(kind, "")
        if not value.startswith(expected) or expected == "" and not re.fullmatch(r"-?\d+(\.\d+)?", value):
            problems.append(f"{at}: expected {expected or 'a number'}... (got {value[:40]})")
    return problems


def test_the_go_program_writes_each_field_as_the_go_generator_types_it(schema):
    docs = (REPO / "docs" / "languages.md").read_text()
    (program,) = re.findall(r"```go\n(.*?)```", docs, re.S)
    found = re.search(r"rack\.New(\w+)\(ctx, \"[^\"]+\", &rack\.(\w+)Args\{(.*)\}\)\n", program, re.S)
    assert found and found.group(1) == found.group(2)
    resource = schema["resources"][f"rack:index:{found.group(1)}"]
    args = found.group(3)
    assert (
        go_problems(args, resource["inputProperties"], resource["requiredInputs"], schema, False, found.group(1)) == []
    )
    assert _fields(args)[0][0] == "Cluster" and len(_fields(args)) == 2
    # the rules are live: the pointers the generator does not write, a value where an input type belongs
    wrong = (
        args.replace("Cluster: rack.ClusterRefArgs{", "Cluster: &rack.ClusterRefArgs{")
        .replace("MinSize: pulumi.IntRef(1)", "MinSize: 1")
        .replace('pulumi.String("prod-rack")', '"prod-rack"')
    )
    assert [
        p.split(":")[0]
        for p in go_problems(
            wrong, resource["inputProperties"], resource["requiredInputs"], schema, False, found.group(1)
        )
    ] == ["NodeGroup.cluster"] + ["NodeGroup.group.minSize"]
    wrong = args.replace('pulumi.String("prod-rack")', '"prod-rack"')
    assert go_problems(wrong, resource["inputProperties"], resource["requiredInputs"], schema, False, "NodeGroup") == [
        'NodeGroup.cluster.name: expected pulumi.String(... (got "prod-rack")'
    ]


# ---- the lanes another language's program exports are lanes to the pack --------------------------------------------


def test_a_rack_s_lanes_from_another_language_are_the_packs_lanes(provider):
    """The ``lanes`` a TypeScript program exports name ``ephemeralStorage``; the workload policies' ``lanes`` config
    reads them as the Python program's (``ephemeral-storage``): no problem, the same allocatable."""
    from mixed_os_racks.pack import laneconfig

    engine = EngineSide()
    try:
        state = construct(provider, engine, "Rack", "rack", RACK)
    finally:
        engine.close()
    exported = [{"name": name, **lane} for name, lane in state["lanes"].items()]
    kubernetes = [
        {
            **lane,
            "allocatable": {
                ("ephemeral-storage" if k == "ephemeralStorage" else k): v for k, v in lane["allocatable"].items()
            },
        }
        for lane in exported
    ]
    assert laneconfig.lanes_config_problems(exported) == []
    assert [lane.stated for lane in laneconfig.configured_lanes({"lanes": exported})] == [
        lane.stated for lane in laneconfig.configured_lanes({"lanes": kubernetes})
    ]
    assert all(lane.stated is not None for lane in laneconfig.configured_lanes({"lanes": exported}))


# ---- the identifier a wire name is served as ------------------------------------------------------------------------


@given(st.text(min_size=1, max_size=40))
def test_any_wire_name_is_served_as_an_identifier_and_an_identifier_as_itself(name):
    """Whatever a Python name or a TypedDict key is (``ephemeral-storage``, ``9lives``, ``_``, a Cyrillic letter), the
    schema's name for it passes the rule, and a name that already does is kept."""
    from mixed_os_racks.provider import identifier

    served = identifier(name)
    assert re.fullmatch(r"[a-z][A-Za-z0-9]*", served), (name, served)
    assert identifier(served) == served
    if re.fullmatch(r"[a-z][A-Za-z0-9]*", name):
        assert served == name
    assert identifier("ephemeral-storage") == "ephemeralStorage"
