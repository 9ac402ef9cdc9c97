"""Real Pulumi runs, as the tests replay them (``tests/recorded/README.md`` says where each file comes from).

A recorded run is the gRPC log of a real ``pulumi up`` (every registration the program, and the providers
constructing its components, sent the engine) and the state that ``up`` left (``pulumi stack export``, or
the checkpoint of an older CLI). Replaying it means registering the same inputs again, in the same order,
and planning against that state: the engine would find nothing to do.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Iterable, Optional

from google.protobuf import json_format, struct_pb2

from mixed_os_racks.offline.records import ProgramRun, Resource

RECORDED = Path(__file__).parent / "recorded"
PULUMI_EKS = RECORDED / "pulumi-eks"
PULUMI_AWSX = RECORDED / "pulumi-awsx"
AWSX = "pulumi-awsx/"
"""pulumi-awsx's runs are named from ``recorded/`` (``pulumi-awsx/TestProviderUpgrade/...``), pulumi-eks's from its
folder."""
EKS_RUNS = sorted(p.parent.relative_to(PULUMI_EKS).as_posix() for p in PULUMI_EKS.glob("**/grpc.jsonl.gz"))
AWSX_RUNS = sorted(p.parent.relative_to(RECORDED).as_posix() for p in PULUMI_AWSX.glob("**/grpc.jsonl.gz"))
RUNS = EKS_RUNS + AWSX_RUNS
STACK_TYPE = "pulumi:pulumi:Stack"


def folder(run: str) -> Path:
    return RECORDED / run if run.startswith(AWSX) else PULUMI_EKS / run


def log(run: str) -> list[dict[str, Any]]:
    with gzip.open(folder(run) / "grpc.jsonl.gz", "rt") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def registrations(run: str) -> list[dict[str, Any]]:
    """The run's registrations, one per URN: a remote component is registered twice (by the program, and by
    its provider while it constructs it); the engine keeps the provider's, which completes first."""
    seen: set[str] = set()
    out = []
    for entry in log(run):
        if entry["method"].endswith("/RegisterResource") and entry["response"]["urn"] not in seen:
            seen.add(entry["response"]["urn"])
            out.append(entry)
    return out


def checks(run: str) -> list[dict[str, Any]]:
    """The provider ``Check`` calls of the run: what the program sent, and what the provider made of it."""
    return [e for e in log(run) if e["method"].endswith("/Check")]


def state_file(run: str, into: Path) -> Path:
    """The run's state, unpacked into the folder ``into``."""
    packed = next(folder(run).glob("*.json.gz"))
    target = into / packed.name.removesuffix(".gz")
    target.write_bytes(gzip.decompress(packed.read_bytes()))
    return target


def state_doc(run: str) -> dict[str, Any]:
    packed = next(folder(run).glob("*.json.gz"))
    return json.loads(gzip.decompress(packed.read_bytes()))


def stack_and_project(run: str) -> tuple[str, str]:
    urn = registrations(run)[0]["response"]["urn"]
    stack, project = urn[len("urn:pulumi:") :].split("::")[:2]
    return stack, project


def program_run(run: str, drop: Iterable[str] = ()) -> ProgramRun:
    """The run's registrations as the offline engine records a program's (``drop``: URNs left out)."""
    dropped = set(drop)
    resources = []
    for entry in registrations(run):
        request, urn = entry["request"], entry["response"]["urn"]
        if urn in dropped:
            continue
        properties = struct_pb2.Struct()
        json_format.ParseDict(request.get("object") or {}, properties)
        resources.append(
            Resource(
                urn=urn,
                type=request["type"],
                name=request["name"],
                parent=request.get("parent", ""),
                custom=bool(request.get("custom")) and not request.get("remote"),
                inputs={},
                properties=properties,
                provider=request.get("provider", ""),
                dependencies=list(request.get("dependencies") or []),
                protect=bool(request.get("protect")),
                ignore_changes=list(request.get("ignoreChanges") or []),
                replace_on_changes=list(request.get("replaceOnChanges") or []),
                property_dependencies={
                    k: list((v or {}).get("urns") or []) for k, v in (request.get("propertyDependencies") or {}).items()
                },
                remote=bool(request.get("remote")),
                version=request.get("version", ""),
                deleted_with=request.get("deletedWith", ""),
                import_id=request.get("importId", ""),
            )
        )
    stack, project = stack_and_project(run)
    return ProgramRun(project, stack, resources, {})


REPLAY_PROGRAM = '''\
"""Registers a recorded run's resources again, as its program and providers did (tests/recorded_runs.py)."""
import json
from pathlib import Path

import pulumi

STACK = "pulumi:pulumi:Stack"
REF = "5cf8f73096256a8f31e491e813e4eb8e"
made = {}


def as_sent(value):
    """A recorded reference to a resource of the run as that resource, which the SDK sends as a reference."""
    if isinstance(value, dict):
        if value.get("4dabf18193072939515e22adb298388d") == REF and value.get("urn") in made:
            return made[value["urn"]]
        return {k: as_sent(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_sent(v) for v in value]
    return value


for entry in json.loads(Path(__file__).with_name("registrations.json").read_text()):
    request, urn = entry["request"], entry["response"]["urn"]
    if request["type"] == STACK:
        continue
    provider = made.get((request.get("provider") or "").rsplit("::", 1)[0])
    opts = pulumi.ResourceOptions(
        parent=made.get(request.get("parent")), provider=provider, version=request.get("version") or None,
        protect=request.get("protect") or None, ignore_changes=request.get("ignoreChanges") or None,
        replace_on_changes=request.get("replaceOnChanges") or None,
        import_=request.get("importId") or None, deleted_with=made.get(request.get("deletedWith") or ""),
        # a component stands for all its children in the SDK, so depending on one's own parent is a cycle:
        # only the custom resources are named (the plan reads propertyDependencies, not these)
        depends_on=[made[u] for u in request.get("dependencies") or []
                    if u in made and isinstance(made[u], pulumi.CustomResource)] or None,
    )
    props = as_sent(request.get("object") or {})
    if request["type"].startswith("pulumi:providers:"):
        made[urn] = pulumi.ProviderResource(request["type"].split(":")[-1], request["name"], props, opts)
    elif request.get("custom") and not request.get("remote"):
        made[urn] = pulumi.CustomResource(request["type"], request["name"], props, opts)
    else:
        made[urn] = pulumi.ComponentResource(request["type"], request["name"], props, opts)
'''


def replay_project(run: str, into: Path, drop: Iterable[str] = (), edit: Optional[Any] = None) -> tuple[Path, str]:
    """A Pulumi project in ``into`` whose program registers the run's resources again (less ``drop``, each
    request passed through ``edit`` first), for ``mixed-os-racks preview``; and its stack's name."""
    stack, project = stack_and_project(run)
    dropped = set(drop)
    kept = [e for e in registrations(run) if e["response"]["urn"] not in dropped]
    if edit is not None:
        kept = [edit(e) for e in kept]
    into.mkdir(parents=True, exist_ok=True)
    (into / "Pulumi.yaml").write_text(f"name: {project}\nruntime: python\n")
    (into / f"Pulumi.{stack}.yaml").write_text("config: {}\n")
    (into / "__main__.py").write_text(REPLAY_PROGRAM)
    (into / "registrations.json").write_text(json.dumps(kept))
    return into, stack


def state_resources(doc: dict[str, Any]) -> list[dict[str, Any]]:
    deployment = doc.get("deployment") or (doc.get("checkpoint") or {}).get("latest") or {}
    return deployment.get("resources") or []
