"""The pack is started as the Pulumi CLI starts a Python policy pack.

The CLI's Python analyzer plugin (pulumi-language-python's ``RunPlugin`` for kind ``analyzer``) runs
``<python> -u -m pulumi.policy <engine address> <pack dir>`` in the pack's directory, where
``<python>`` is the virtualenv ``PulumiPolicy.yaml`` names (``runtime.options.virtualenv``,
relative to the pack), or, when it names none, ``$PULUMI_PYTHON_CMD`` (else ``python3``). A
virtualenv that does not exist fails the CLI; the offline preview runs the pack with its own
interpreter instead and says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from mixed_os_racks.offline.packprocess import ENGINE_ADDRESS, PolicyPackProcess, pack_env
from policy_helpers import POLICIES


def pack_copy(tmp_path: Path, virtualenv: str | None) -> Path:
    pack = shutil.copytree(POLICIES, tmp_path / "pack", ignore=shutil.ignore_patterns("venv", "__pycache__"))
    manifest = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())
    if virtualenv is None:
        del manifest["runtime"]["options"]["virtualenv"]
    else:
        manifest["runtime"]["options"]["virtualenv"] = virtualenv
    (pack / "PulumiPolicy.yaml").write_text(yaml.safe_dump(manifest))
    return pack


def small_venv(where: Path) -> Path:
    """A real virtualenv of its own, seeing this interpreter's packages through a .pth file (as site
    directories, so their own .pth files run too: the package is installed editable)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next(where.glob("lib/python*/site-packages"))
    ours = [path for path in sys.path if path.endswith("site-packages")]
    (site / "tests-packages.pth").write_text("".join(f"import site; site.addsitedir({path!r})\n" for path in ours))
    return where / "bin" / "python"


def started_as(pack: PolicyPackProcess) -> tuple[list[str], str]:
    cmdline = Path(f"/proc/{pack.pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    return cmdline, os.readlink(f"/proc/{pack.pid}/cwd")


def test_in_the_virtualenv_the_pack_names(tmp_path):
    pack_dir = pack_copy(tmp_path, "venv")
    python = small_venv(pack_dir / "venv")
    with PolicyPackProcess(pack_dir, pack_env("p", "s")) as pack:
        assert pack.info.name == "mixed-os-racks" and pack.warnings == []
        argv, cwd = started_as(pack)
    assert argv == [str(python), "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, str(pack_dir)]
    assert cwd == str(pack_dir)


def test_a_missing_virtualenv_is_said_and_this_python_runs_it(tmp_path):
    pack_dir = pack_copy(tmp_path, "no-such-venv")
    with PolicyPackProcess(pack_dir, pack_env("p", "s")) as pack:
        assert pack.info.name == "mixed-os-racks"
        argv, _ = started_as(pack)
        (warning,) = pack.warnings
    assert argv[0] == sys.executable
    assert f"its virtualenv {pack_dir / 'no-such-venv'} does not exist" in warning
    assert "pip install -r" in warning


def test_without_a_virtualenv_the_python_command_runs_it(tmp_path):
    pack_dir = pack_copy(tmp_path, None)
    python = small_venv(tmp_path / "elsewhere")
    env = pack_env("p", "s")
    env["PULUMI_PYTHON_CMD"] = str(python)
    with PolicyPackProcess(pack_dir, env) as pack:
        argv, _ = started_as(pack)
    assert argv[0] == str(python)


def test_the_packs_speedups_apply_to_the_installed_policy_sdk():
    # the pack adapts pulumi-policy's servicer (speedups: remembered conversions; scope: one joined stack
    # per request); each install says False, and changes nothing, for an SDK of another shape, so this
    # fails when an upgrade of pulumi-policy makes them stop applying
    code = (
        "import pulumi_policy.policy as sdk, pulumi_policy.proxy as proxy\n"
        "from mixed_os_racks.pack import scope, speedups\n"
        "def points():\n"
        "    return (sdk.json_format, sdk.deserialize_properties, sdk._PolicyAnalyzerServicer.AnalyzeStack,\n"
        "            sdk.StackValidationArgs, proxy._DictProxy.get, proxy._ListProxy.__iter__)\n"
        "before = points()\n"
        "assert speedups.install() is True, 'speedups'\n"
        "assert scope.install() is True and scope.installed(), 'scope'\n"
        "after = points()\n"
        "assert all(a is not b for a, b in zip(before, after)), after\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_the_speedups_decode_once_and_change_nothing_a_policy_sees():
    # a resource's properties reach the pack in Analyze and again in AnalyzeStack; with the speed-ups the
    # second request reuses the values and proxies built for the first (``speedups._keeping``), and
    # outside those two requests nothing is remembered
    code = """
from google.protobuf import struct_pb2
import pulumi_policy.policy as sdk
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy
from pulumi.runtime.proto import analyzer_pb2 as pb

built = []
original = sdk.unknown_checking_proxy
def counting(value):
    built.append(value)
    return original(value)
sdk.unknown_checking_proxy = counting

from mixed_os_racks.pack import scope, speedups
assert speedups.install() and scope.install()

read = []
def each(args, report):
    read.append(args.props["spec"]["size"])
    if args.props["spec"]["size"] == 2:
        report("size 2")
links = []
def stack(args, report):
    read.extend(r.props["spec"]["size"] for r in args.resources)
    links.append([(r.name, r.parent.name if r.parent else None, [d.name for d in r.dependencies],
                   {k: [d.name for d in v] for k, v in r.property_dependencies.items()}, r.opts.protect)
                  for r in args.resources])
servicer = sdk._PolicyAnalyzerServicer(
    "p", "0.0.1", [ResourceValidationPolicy(name="each", description="d", validate=each),
                   StackValidationPolicy(name="stack", description="d", validate=stack),
                   StackValidationPolicy(name="again", description="d", validate=stack)],
    EnforcementLevel.ADVISORY, None, "d", None, None, None, None, None)

def props(n):
    struct = struct_pb2.Struct()
    struct.update({"spec": {"size": n, "names": ["a", "b"]}})
    return struct

requests = [pb.AnalyzeRequest(type="t:m:R", name=f"r{n}", urn=f"urn:pulumi:s::p::t:m:R::r{n}", properties=props(n))
            for n in range(5)]
answers = [servicer.Analyze(request, None) for request in requests]
assert [len(a.diagnostics) for a in answers] == [0, 0, 1, 0, 0], answers
assert len(built) == 5, len(built)
whole = pb.AnalyzeStackRequest(resources=[pb.AnalyzerResource(
    type=q.type, name=q.name, urn=q.urn, properties=props(n), parent=requests[0].urn if n else "",
    dependencies=[requests[n - 1].urn] if n else [], options=pb.AnalyzerResourceOptions(protect=n == 4),
    propertyDependencies={"spec": pb.AnalyzerPropertyDependencies(urns=[requests[0].urn])} if n == 3 else {})
    for n, q in enumerate(requests)])
servicer.AnalyzeStack(whole, None)
servicer.AnalyzeStack(whole, None)
assert len(built) == 5, len(built)
assert read == [0, 1, 2, 3, 4] + [0, 1, 2, 3, 4] * 4, read
expected = [("r0", None, [], {}, False), ("r1", "r0", ["r0"], {}, False), ("r2", "r0", ["r1"], {}, False),
            ("r3", "r0", ["r2"], {"spec": ["r0"]}, False), ("r4", "r0", ["r3"], {}, True)]
assert links == [expected] * 4, links
fresh = {"x": 1}
assert sdk.unknown_checking_proxy(fresh) is not sdk.unknown_checking_proxy(fresh)

# the runtime is configured from the environment once, and again when it changes
import os, pulumi
stacks = []
servicer = sdk._PolicyAnalyzerServicer(
    "p", "0.0.1", [ResourceValidationPolicy(name="stack", description="d",
                                            validate=lambda a, r: stacks.append(pulumi.get_stack()))],
    EnforcementLevel.ADVISORY, None, "d", None, None, None, None, None)
os.environ.update(PULUMI_PROJECT="p", PULUMI_DRY_RUN="true", PULUMI_STACK="dev")
servicer.Analyze(requests[0], None)
servicer.Analyze(requests[1], None)
os.environ["PULUMI_STACK"] = "prod"
servicer.Analyze(requests[0], None)
assert stacks == ["dev", "dev", "prod"], stacks
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


SAME_ANSWERS = """
import json, sys
from google.protobuf import struct_pb2
import pulumi_policy.policy as sdk
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE
from pulumi.runtime.proto import analyzer_pb2 as pb

if sys.argv[1] == "fast":
    from mixed_os_racks.pack import speedups
    assert speedups.install()

seen = []
def reads(props):
    spec = props.get("spec")
    got = [spec.get("size"), spec.get("missing", "default"), "size" in spec, sorted(spec), len(spec["names"])]
    got.append(list(spec.get("names")))  # iterating: an unknown element raises
    got.append(sorted(props.get("__target")))
    return got
def each(args, report):
    seen.append(["each", args.name, reads(args.props)])
def stack(args, report):
    seen.append(["stack", [(r.name, r.parent.name if r.parent else None, [d.name for d in r.dependencies],
                 {k: [d.name for d in v] for k, v in r.property_dependencies.items()}, r.opts.protect,
                 r.provider.name if r.provider else None) for r in args.resources]])
    args.resources.reverse()  # a policy's list is its own
    for r in args.resources:
        if r.name == "r0":
            reads(r.props)
def size_read(args, report):
    seen.append(["sizes", [r.props["spec"]["size"] for r in args.resources]])
servicer = sdk._PolicyAnalyzerServicer(
    "p", "0.0.1", [ResourceValidationPolicy(name="each", description="d", validate=each),
                   StackValidationPolicy(name="stack", description="d", validate=stack),
                   StackValidationPolicy(name="again", description="d", validate=stack),
                   StackValidationPolicy(name="sizes", description="d", validate=size_read)],
    EnforcementLevel.ADVISORY, None, "d", None, None, None, None, None)

def props(n):
    struct = struct_pb2.Struct()
    names = ["a", UNKNOWN_STRING_VALUE] if n == 3 else ["a", "b"]
    struct.update({"spec": {"size": UNKNOWN_NUMBER_VALUE if n == 2 else n, "names": names}})
    return struct

urn = "urn:pulumi:s::p::t:m:R::r{}".format
provider = pb.AnalyzerProviderResource(type="pulumi:providers:aws", name="default",
                                       urn="urn:pulumi:s::p::pulumi:providers:aws::default")
requests = [pb.AnalyzeRequest(type="t:m:R", name=f"r{n}", urn=urn(n), properties=props(n), provider=provider)
            for n in range(5)]
answers = [servicer.Analyze(request, None) for request in requests]
whole = pb.AnalyzeStackRequest(resources=[pb.AnalyzerResource(
    type=q.type, name=q.name, urn=q.urn, properties=props(n), provider=provider,
    parent=urn(0) if n in (1, 2) else urn(9) if n == 3 else "",
    dependencies=[urn(n - 1), urn(9)] if n else [], options=pb.AnalyzerResourceOptions(protect=n == 4),
    propertyDependencies={"spec": pb.AnalyzerPropertyDependencies(urns=[urn(0), urn(9)])} if n == 3 else {})
    for n, q in enumerate(requests)])
stack_answer = servicer.AnalyzeStack(whole, None)
diagnostics = [[(d.policyName, d.message, d.urn, d.enforcementLevel) for d in a.diagnostics]
               for a in [*answers, stack_answer]]
print(json.dumps({"seen": seen, "diagnostics": diagnostics}, sort_keys=True))
"""


def test_the_speedups_change_nothing_a_policy_sees():
    # The same requests through pulumi-policy as installed and with the pack's speed-ups: the same reads
    # (values, defaults, membership, iteration, the proxy's own "__target"), the same "unknown at
    # preview" diagnostics with the same property paths, and for stack policies the same links (a
    # parent or dependency the request does not hold is left out), options and provider; each stack
    # policy gets a list of its own.
    runs = {}
    for mode in ("sdk", "fast"):
        proc = subprocess.run([sys.executable, "-c", SAME_ANSWERS, mode], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        runs[mode] = proc.stdout
    assert runs["fast"] == runs["sdk"]
    seen = __import__("json").loads(runs["sdk"])
    assert "can't be known during preview" in str(seen["diagnostics"])
    assert "names.1" in str(seen["diagnostics"]) and "spec.size" in str(seen["diagnostics"])
