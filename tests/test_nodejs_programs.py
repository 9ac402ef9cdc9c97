"""The offline preview of Node.js programs (``runtime: nodejs``): started as Pulumi's Node.js language host starts
them, with the real ``@pulumi/pulumi`` SDK (the TypeScript example's ``node_modules``, which `make compiled`
installs with npm), against the engine's resource monitor served over gRPC (``offline/resmon.py``).

The programs here are small ones written into ``tmp_path`` (the example's packages linked in); the example itself,
with the package's components, is ``test_typescript_consumer.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import grpc
import pytest
from google.protobuf import json_format, struct_pb2
from hypothesis import given, strategies as st
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc, resource_pb2, resource_pb2_grpc

from conftest import REPO
from mixed_os_racks.offline.catalog import Catalog
from mixed_os_racks.offline.cloud import OfflineMocks
from mixed_os_racks.offline.nodejs import PRELUDE, node_config, program_error, run_node_program
from mixed_os_racks.offline.resmon import Deployment, EngineMonitor, serve
from mixed_os_racks.offline.stackfile import read_project

EXAMPLE = REPO / "examples" / "typescript-consumer"
NODE_MODULES = EXAMPLE / "node_modules"


def node_modules() -> Path:
    """The example's packages; the test skips when Node.js or npm is not installed, and fails when they are but the
    packages were not installed (`make compiled` runs `npm ci` there)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are not installed: the offline preview of TypeScript programs is not tested here")
    assert (NODE_MODULES / "@pulumi" / "pulumi" / "package.json").is_file(), (
        f"{NODE_MODULES} has no @pulumi/pulumi: run `make compiled` (npm ci in {EXAMPLE})"
    )
    return NODE_MODULES


def preview(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``mixed-os-racks preview ...`` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "mixed_os_racks.offline", "preview", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def node_project(folder: Path, program: str, config: str = "", name: str = "tsprogram", pulumi_yaml: str = "") -> Path:
    """A TypeScript project: Pulumi.yaml (``runtime: nodejs``), package.json, index.ts, Pulumi.dev.yaml, and the
    example's node_modules linked in."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    (folder / "Pulumi.yaml").write_text(pulumi_yaml or f"name: {name}\nruntime: nodejs\n")
    (folder / "package.json").write_text(json.dumps({"name": name, "main": "index.ts"}))
    (folder / "index.ts").write_text(program)
    (folder / "Pulumi.dev.yaml").write_text(f"config:\n  aws:region: us-east-1\n{config}")
    return folder


LOOKUP = """\
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";

const config = new pulumi.Config();
const ns = new k8s.core.v1.Namespace("ml", { metadata: { name: config.require("namespace") } });
const ami = pulumi.runtime.invoke("aws:ec2/getAmi:getAmi", {
    mostRecent: true, filters: [{ name: "image-id", values: [config.require("amiId")] }],
});
export const namespace = ns.metadata.name;
export const amiName = pulumi.output(ami).apply((found: any) => found.name);
export const secretLane = pulumi.secret("gpu");
"""


@pytest.mark.slow
def test_a_typescript_program_previews_with_the_catalogs_answers(tmp_path):
    folder = node_project(
        tmp_path / "p", LOOKUP, "  tsprogram:namespace: ml\n  tsprogram:amiId: ami-0a1b2c3d4e5f60718\n"
    )
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy", "--json", str(tmp_path / "out.json"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:5] == [
        "Previewing update (dev), offline:",
        "",
        "     Type                             Name",
        " +   pulumi:pulumi:Stack              tsprogram-dev",
        " +   └─ kubernetes:core/v1:Namespace  ml",
    ]
    # the look-up answered from the AMI catalog; a secret export shown as the CLI shows it
    assert '    amiName   : "amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115"' in done.stdout
    assert '    secretLane: "[secret]"' in done.stdout
    doc = json.loads((tmp_path / "out.json").read_text())
    (namespace,) = [r for r in doc["resources"] if r["type"] == "kubernetes:core/v1:Namespace"]
    # the URN as the engine makes it; the inputs as the Node SDK sent them
    assert namespace["urn"] == "urn:pulumi:dev::tsprogram::kubernetes:core/v1:Namespace::ml"
    assert namespace["parent"] == "urn:pulumi:dev::tsprogram::pulumi:pulumi:Stack::tsprogram-dev"
    assert namespace["inputs"]["metadata"] == {"name": "ml"}
    assert doc["outputs"]["namespace"] == "ml"


@pytest.mark.slow
def test_a_lookup_the_catalog_cannot_answer_fails_the_program_in_the_engines_words(tmp_path):
    folder = node_project(
        tmp_path / "p", LOOKUP, "  tsprogram:namespace: ml\n  tsprogram:amiId: ami-00000000000000000\n"
    )
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
    assert done.returncode == 2
    first = next(line for line in done.stderr.splitlines() if line.startswith("error:"))
    assert first.startswith(
        "error: the program failed: Error: invocation of aws:ec2/getAmi:getAmi returned an error: "
        "Your query returned no results."
    ), done.stderr
    assert "has no image ami-00000000000000000" in done.stderr


@pytest.mark.slow
def test_a_typescript_exception_exits_2_with_the_file_and_line_node_reports(tmp_path):
    program = """\
import * as pulumi from "@pulumi/pulumi";

const config = new pulumi.Config();
function lane(name: string): string {
    throw new Error(`no lane named ${name} in this rack`);
}
export const chosen = lane(config.require("lane"));
"""
    folder = node_project(tmp_path / "p", program, "  tsprogram:lane: gpu\n")
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.endswith(
        "error: the program failed: Error: no lane named gpu in this rack\n  at index.ts:5:11\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "statement, message",
    [
        (
            'setTimeout(() => { throw new Error("no lane after all"); }, 10);',
            "error: the program failed: Error: no lane after all\n  at index.ts:3:26\n",
        ),
        (
            'Promise.reject(new Error("no lane promised"));',
            "error: the program failed: Error: no lane promised\n  at index.ts:3:16\n",
        ),
        ("process.exit(3);", "error: the program exited with code 3\n"),
    ],
    ids=["throw-in-timer", "unhandled-rejection", "exit-3"],
)
def test_a_failure_after_the_program_body_ran_exits_2_with_nodes_message(tmp_path, statement, message):
    """Node ends a process on an uncaught throw in a callback and on an unhandled rejection (Node 15 and later,
    ``--unhandled-rejections=throw``); the preview reports each as the program's failure, as the CLI does."""
    program = f'import * as pulumi from "@pulumi/pulumi";\nexport const lane = "gpu";\n{statement}\n'
    done = preview("--cwd", str(node_project(tmp_path / "p", program)), "--stack", "dev", "--no-policy")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(message), done.stderr


@pytest.mark.slow
def test_a_throw_inside_a_components_registered_outputs_ends_the_run_naming_the_error(tmp_path, monkeypatch):
    """The SDK reports the rejected ``registerOutputs`` as the program's unhandled error; its stack runs through the
    SDK's own source-mapped files (``node_modules/@pulumi/output.ts``), which Node.js 20.20's coloured
    ``util.inspect`` never finishes formatting (``PRELUDE``). The run ends with the program's error, long before
    the run limit (set low here so that a spinning Node.js fails the test instead of holding it for 30 minutes)."""
    program = """\
import * as pulumi from "@pulumi/pulumi";

class Lane extends pulumi.ComponentResource {
    constructor(name: string) {
        super("test:index:Lane", name, {}, {});
        this.registerOutputs({ x: pulumi.output(2).apply(() => { throw new Error("boom"); }) });
    }
}
new Lane("gpu");
"""
    monkeypatch.setenv("MIXED_OS_RACKS_PROGRAM_S", "300")
    done = preview("--cwd", str(node_project(tmp_path / "p", program)), "--stack", "dev", "--no-policy")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("error: the program failed: Error: boom\n  at index.ts:6:72\n"), done.stderr


def test_nodes_inspect_formats_an_error_through_a_scoped_packages_file_when_colours_are_asked_for(tmp_path):
    """What ``cmd/run`` does with a program's error (``util.inspect(err, {colors: true})``), for a stack as ts-node's
    source maps write the SDK's frames, under the module the engine loads first: it returns, without colours."""
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    script = """\
const util = require("util");
const err = new Error("boom");
err.stack = "Error: boom\\n    at /p/index.ts:6:72\\n" +
    "    at applyHelperAsync (/p/node_modules/@pulumi/output.ts:519:31)";
console.log(JSON.stringify(util.inspect(err, { colors: true })));
console.log(JSON.stringify(util.inspect({ lane: "gpu" }, { colors: true })));
"""
    done = subprocess.run(
        ["node", "--import=data:text/javascript," + quote(PRELUDE), "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        "Error: boom\n    at /p/index.ts:6:72\n    at applyHelperAsync (/p/node_modules/@pulumi/output.ts:519:31)",
        "{ lane: \x1b[32m'gpu'\x1b[39m }",
    ]


@pytest.mark.parametrize("debugged", [False, True])
def test_the_sdks_promises_record_a_stack_only_when_their_leak_report_is_asked_for(debugged):
    """Upstream (``@pulumi/pulumi`` 3.270.0, ``runtime/debuggable.js``): ``debuggablePromise`` records ``new
    Error().stack`` on every promise the SDK makes, read only by the leak report printed under
    ``PULUMI_DEBUG_PROMISE_LEAKS``; the SDK's own modules call it through the module's export
    (``debuggable_1.debuggablePromise(...)``). Under the preview's first module, that stack has no frames unless the
    variable is set, and then it has the caller's; other errors keep their frames either way."""
    folder = node_modules()
    script = """\
require("@pulumi/pulumi");  // as a program loads the SDK
const debuggable = require("@pulumi/pulumi/runtime/debuggable");
function program() { return debuggable.debuggablePromise(Promise.resolve(1), "ctx"); }
const made = program();
const kept = debuggable.leakedPromises()[0];
const recorded = [...kept].map(p => p._debugStackTrace)[0];
function other() { return new Error().stack; }
console.log(JSON.stringify([recorded.includes("at program"), other().includes("at other"), made instanceof Promise]));
"""
    env = {key: value for key, value in os.environ.items() if key != "PULUMI_DEBUG_PROMISE_LEAKS"}
    if debugged:
        env["PULUMI_DEBUG_PROMISE_LEAKS"] = "true"
    done = subprocess.run(
        ["node", "--import=data:text/javascript," + quote(PRELUDE), "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder.parent,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [debugged, True, True]


@pytest.mark.slow
def test_the_sdk_sends_the_engine_no_debug_messages_and_every_other_in_order(tmp_path, monkeypatch):
    """Upstream (``@pulumi/pulumi`` 3.270.0, ``log/index.js``): ``log.debug`` sends an ``Engine.Log`` of severity
    DEBUG whenever an engine is connected (the SDK's runtime itself logs three per resource), and every log waits
    for the one before it to be answered. The preview shows no debug messages (as ``pulumi preview`` without
    ``--debug``), so under its first module the SDK does not send them; the program's other messages arrive, in
    the order it wrote them."""
    program = """\
import * as pulumi from "@pulumi/pulumi";
for (let i = 0; i < 20; i++) {
    new pulumi.ComponentResource("test:index:Thing", `thing-${i}`, {});
    pulumi.log.debug(`debug ${i}`);
}
pulumi.log.warn("first");
pulumi.log.debug("not sent");
pulumi.log.info("second");
pulumi.log.warn("third");
"""
    said: list[tuple[int, str]] = []
    logged = EngineMonitor.log
    monkeypatch.setattr(
        EngineMonitor,
        "log",
        lambda self, request: (said.append((request.severity, request.message)), logged(self, request)),
    )
    folder = node_project(tmp_path / "p", program)
    run = run_node_program(folder, read_project(folder), {"aws:region": "us-east-1"})
    assert len(run.resources) == 21  # the stack and the things
    assert said == [(engine_pb2.WARNING, "first"), (engine_pb2.INFO, "second"), (engine_pb2.WARNING, "third")]


@pytest.mark.slow
def test_a_type_error_exits_2_naming_the_file_and_line_typescript_reports(tmp_path):
    """TypeScript is compiled as the Node.js host compiles it: ts-node, type-checked, with the program's typescript."""
    program = """\
import * as pulumi from "@pulumi/pulumi";

const config = new pulumi.Config();
const replicas: number = config.require("lane");
export const chosen = replicas;
"""
    folder = node_project(tmp_path / "p", program, "  tsprogram:lane: gpu\n")
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
    assert done.returncode == 2
    assert done.stderr.endswith(
        "error: the program failed: TSError: Unable to compile TypeScript:\n"
        "index.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"
    )


@pytest.mark.slow
def test_typescript_false_runs_javascript_without_compiling(tmp_path):
    program = "const pulumi = require('@pulumi/pulumi');\nexports.lane = new pulumi.Config().require('lane');\n"
    folder = node_project(
        tmp_path / "p",
        "",
        "  tsprogram:lane: gpu\n",
        pulumi_yaml="name: tsprogram\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
    )
    (folder / "index.js").write_text(program)
    (folder / "package.json").write_text(json.dumps({"name": "tsprogram", "main": "index.js"}))
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
    assert done.returncode == 0, done.stderr
    assert '    lane: "gpu"' in done.stdout


def _running_in(folder: Path) -> list[str]:
    """The processes whose command line names ``folder`` (the program's ``--root-directory``)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if proc.name.isdigit() and str(folder) in line:
            found.append(line)
    return found


@pytest.mark.slow
def test_a_program_that_never_ends_is_stopped_at_the_run_limit_and_says_how_to_allow_more(tmp_path, monkeypatch):
    """``pulumi preview`` waits for a program as long as it runs; the offline preview stops it at the run limit
    (``MIXED_OS_RACKS_PROGRAM_S``), exits 2 naming the limit, and leaves no Node.js process behind. The program never
    ends whatever the machine's load, so a short limit is reached the same way on any machine."""
    program = "const pulumi = require('@pulumi/pulumi');\nsetInterval(() => {}, 1000);\nexports.lane = 'gpu';\n"
    folder = node_project(
        tmp_path / "p", "", pulumi_yaml="name: tsprogram\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n"
    )
    (folder / "index.js").write_text(program)
    (folder / "package.json").write_text(json.dumps({"name": "tsprogram", "main": "index.js"}))
    monkeypatch.setenv("MIXED_OS_RACKS_PROGRAM_S", "3")
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(
        "error: the program did not finish within 3 s, so it was stopped (a program that never "
        "ends, such as one with a setInterval, keeps running; give a long one more time with "
        "MIXED_OS_RACKS_PROGRAM_S=<seconds>)\n"
    ), done.stderr
    assert _running_in(folder) == []
    for bad in ("soon", "0", "-1", "nan", "inf"):
        monkeypatch.setenv("MIXED_OS_RACKS_PROGRAM_S", bad)
        done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
        assert (done.returncode, done.stderr) == (
            2,
            f"error: MIXED_OS_RACKS_PROGRAM_S={bad!r}: not a number of seconds above 0 (such as 3600)\n",
        )


@pytest.mark.slow
def test_a_number_that_is_not_finite_is_refused_at_its_property_path(tmp_path):
    """A program's NaN reaches the engine (protobuf's ``Struct`` carries it) but no provider, state or pack reads it
    (their properties are JSON): the registration is refused naming the property, as the engine names one."""
    program = (
        "const k8s = require('@pulumi/kubernetes');\n"
        "new k8s.apiextensions.CustomResource('budget', {apiVersion: 'rack.example.com/v1', kind: 'Budget',\n"
        "    spec: {lanes: [{name: 'gpu', maxHourlyUsd: 40}, {name: 'ml', maxHourlyUsd: NaN}]}});\n"
    )
    folder = node_project(
        tmp_path / "p", "", pulumi_yaml="name: tsprogram\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n"
    )
    (folder / "index.js").write_text(program)
    (folder / "package.json").write_text(json.dumps({"name": "tsprogram", "main": "index.js"}))
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: kubernetes:rack.example.com/v1:Budget resource 'budget' has a problem: "
        "property spec.lanes[1].maxHourlyUsd with value 'NaN' has a problem: not a finite number "
        "(JSON has no NaN or Infinity)\n"
    ), done.stderr


@pytest.mark.parametrize("number, shown", [(float("nan"), "NaN"), (float("inf"), "+Inf"), (float("-inf"), "-Inf")])
def test_the_first_number_that_is_not_finite_is_found_at_any_depth(number, shown):
    from mixed_os_racks.offline.resmon import first_not_finite

    properties = struct_pb2.Struct()
    properties.update({"a": 1, "pools": [{"disk": 200}, {"disk": number}], "z": {"y": number}})
    assert first_not_finite(properties) == ("pools[1].disk", shown)
    properties.update({"pools": []})
    assert first_not_finite(properties) == ("z.y", shown)
    properties.update({"z": {"y": 1.5}})
    assert first_not_finite(properties) is None


@pytest.mark.slow
def test_main_names_the_entry_point_and_its_directory_is_the_programs(tmp_path):
    """``main: src/index.ts``: the program runs in ``src`` (``--pwd``), as ``getPwdMain`` sets it."""
    program = 'import * as pulumi from "@pulumi/pulumi";\nexport const cwd = process.cwd();\n'
    folder = node_project(tmp_path / "p", "", pulumi_yaml="name: tsprogram\nruntime: nodejs\nmain: src/index.ts\n")
    (folder / "src").mkdir()
    (folder / "src" / "index.ts").write_text(program)
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
    assert done.returncode == 0, done.stderr
    assert f'    cwd: "{folder / "src"}"' in done.stdout


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("options: {typescript: 'yes'}", "runtime.options: typescript option must be a boolean"),
        ("options: {nodeargs: [--max-old-space-size=4096]}", "runtime.options: nodeargs option must be a string"),
        ("options: {nodeargs: '--title \"x'}", "runtime.options.nodeargs: No closing quotation"),
        (
            "options: {packagemanager: npx}",
            'runtime.options: packagemanager option must be one of auto, npm, yarn, pnpm or bun, got "npx"',
        ),
        ("options: {production: 1}", "runtime.options: production option must be a boolean"),
        ("options: {}\nmain: src/", "main: project 'main' could not be read: {folder}/src does not exist"),
        (
            "options: {}\npackages: {rack: ../nowhere}",
            "packages.rack: ../nowhere: no PulumiPlugin.yaml in {parent}/nowhere (the folder `pulumi package add` was "
            "given)",
        ),
        (
            "options: {}\npackages: {rack: [x]}",
            "packages.rack: expected a plugin's source (a folder, a Git URL or a package name), got ['x']",
        ),
    ],
)
def test_runtime_options_and_packages_are_checked_as_the_host_checks_them(tmp_path, options, message):
    node_modules()
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    message = message.format(folder=folder, parent=tmp_path)
    (folder / "Pulumi.yaml").write_text(f"name: p\nruntime:\n  name: nodejs\n  {options}\n")
    (folder / "Pulumi.dev.yaml").write_text("config: {}\n")
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
    assert (done.returncode, done.stderr) == (2, f"error: {folder / 'Pulumi.yaml'}: {message}\n")


def test_a_project_without_its_packages_says_how_to_install_them(tmp_path):
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: p\nruntime: nodejs\n")
    (folder / "Pulumi.dev.yaml").write_text("config: {}\n")
    done = preview("--cwd", str(folder), "--stack", "dev", "--no-policy")
    assert (done.returncode, done.stderr) == (
        2,
        (
            f"error: {folder}: the Pulumi Node.js SDK is not installed there (node cannot resolve "
            f"@pulumi/pulumi/cmd/run): "
            f"run `npm ci` (or `pulumi install`) in {folder}\n"
        ),
    )


@pytest.mark.parametrize(
    ("project", "message"),
    [
        (
            "name: p\n",
            "runtime: expected the language's name (python, nodejs, ...) or {name: ..., options: ...}, got null",
        ),
        (
            "name: p\nruntime: {name: 5}\n",
            "runtime: expected the language's name (python, nodejs, ...) or {name: ..., "
            'options: ...}, got {"name": 5}',
        ),
        (
            "name: p\nruntime: {name: nodejs, options: [typescript]}\n",
            'runtime.options: expected a mapping, got ["typescript"]',
        ),
        ("name: p\nruntime: nodejs\nmain: [index.ts]\n", 'main: expected a path, got ["index.ts"]'),
        (
            "name: p\nruntime: nodejs\npackages: [rack]\n",
            'packages: expected a mapping of package names to sources, got ["rack"]',
        ),
    ],
)
def test_a_project_file_the_cli_could_not_run_is_refused_naming_the_key(tmp_path, project, message):
    (tmp_path / "Pulumi.yaml").write_text(project)
    done = preview("--cwd", str(tmp_path), "--stack", "dev")
    assert (done.returncode, done.stderr) == (2, f"error: {tmp_path / 'Pulumi.yaml'}: {message}\n")


def test_a_runtime_the_preview_does_not_run_is_refused_by_name(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: go\n")
    done = preview("--cwd", str(tmp_path), "--stack", "dev")
    assert (done.returncode, done.stderr) == (
        2,
        f"error: {tmp_path / 'Pulumi.yaml'}: runtime: go: the offline preview runs python and nodejs programs\n",
    )


def test_the_config_reaches_node_as_the_host_hands_it_over():
    """``PULUMI_CONFIG`` keys as ``<namespace>:config:<name>`` (pulumi-language-nodejs ``constructConfig``)."""
    assert node_config({"aws:region": "us-east-1", "ml:lanes": '{"a":1}'}) == {
        "aws:config:region": "us-east-1",
        "ml:config:lanes": '{"a":1}',
    }


# ---- the monitor, spoken to directly ----------------------------------------------------------------------------


@pytest.fixture
def engine():
    mocks = OfflineMocks(Catalog.load(), {"aws:region": "us-east-1"})
    with serve(mocks, Deployment("proj", "dev", {"aws:region": "us-east-1"})) as server:
        channel = grpc.insecure_channel(server.address)
        yield server, resource_pb2_grpc.ResourceMonitorStub(channel), engine_pb2_grpc.EngineStub(channel)
        channel.close()


def _struct(value: dict) -> struct_pb2.Struct:
    found = struct_pb2.Struct()
    found.update(value)
    return found


def test_the_monitor_makes_urns_with_the_parents_type_chain_and_refuses_a_second_registration(engine):
    server, monitor, _ = engine
    stack = monitor.RegisterResource(resource_pb2.RegisterResourceRequest(type="pulumi:pulumi:Stack", name="proj-dev"))
    comp = monitor.RegisterResource(
        resource_pb2.RegisterResourceRequest(type="my:index:Lane", name="gpu", parent=stack.urn)
    )
    child = monitor.RegisterResource(
        resource_pb2.RegisterResourceRequest(
            type="kubernetes:core/v1:Namespace",
            name="gpu-ns",
            parent=comp.urn,
            custom=True,
            object=_struct({"metadata": {"name": "gpu"}}),
        )
    )
    assert child.urn == "urn:pulumi:dev::proj::my:index:Lane$kubernetes:core/v1:Namespace::gpu-ns"
    assert (child.id, dict(child.object)["metadata"]["name"]) == ("", "gpu")  # no id at preview; the inputs echoed
    assert not comp.object.fields  # a component's outputs are what it registers later
    with pytest.raises(grpc.RpcError) as refused:
        monitor.RegisterResource(
            resource_pb2.RegisterResourceRequest(type="my:index:Lane", name="gpu", parent=stack.urn)
        )
    assert "Duplicate resource URN 'urn:pulumi:dev::proj::my:index:Lane::gpu'" in refused.value.details()
    assert server.monitor.errors == [
        "my:index:Lane resource 'gpu': Duplicate resource URN 'urn:pulumi:dev::proj::my:index:Lane::gpu'; try giving "
        "it "
        "a unique name"
    ]
    assert [r.urn for r in server.monitor.run().resources] == [stack.urn, comp.urn, child.urn]


def test_a_reference_is_rebuilt_from_what_was_registered_and_a_lookup_failure_is_the_programs(engine):
    server, monitor, _ = engine
    role = monitor.RegisterResource(
        resource_pb2.RegisterResourceRequest(
            type="aws:iam/role:Role",
            name="nodes",
            custom=True,
            object=_struct({"assumeRolePolicy": {"Version": "2012-10-17", "Statement": []}}),
        )
    )
    # the provider's state: a policy document given as an object is kept as the JSON text pulumi-aws keeps
    assert dict(role.object)["assumeRolePolicy"] == '{"Statement":[],"Version":"2012-10-17"}'
    found = monitor.Invoke(
        resource_pb2.ResourceInvokeRequest(tok="pulumi:pulumi:getResource", args=_struct({"urn": role.urn}))
    )
    assert getattr(found, "return")["urn"] == role.urn
    assert getattr(found, "return")["state"]["assumeRolePolicy"] == '{"Statement":[],"Version":"2012-10-17"}'
    with pytest.raises(grpc.RpcError) as failed:
        monitor.Invoke(resource_pb2.ResourceInvokeRequest(tok="aws:ec2/getVpc:getVpc", args=_struct({})))
    assert failed.value.details() == (
        "invocation of aws:ec2/getVpc:getVpc returned an error: the offline engine cannot "
        "answer the look-up aws:ec2/getVpc:getVpc"
    )
    assert server.monitor.errors == []  # the program may catch it; the run goes on


def test_an_input_not_known_yet_or_secret_stays_as_it_was_sent(engine):
    """A policy document is kept as text only where it is known and not secret (the SDK's mock hands the offline
    cloud an unknown or a secret as an object, which it leaves alone)."""
    _, monitor, _ = engine
    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": unknown}]}
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": policy}
    role = monitor.RegisterResource(
        resource_pb2.RegisterResourceRequest(
            type="aws:iam/rolePolicy:RolePolicy",
            name="nodes",
            custom=True,
            object=_struct({"name": unknown, "policy": policy, "secretPolicy": secret}),
        )
    )
    assert json_format.MessageToDict(role.object) == {"name": unknown, "policy": policy, "secretPolicy": secret}


def test_the_monitor_leaves_out_what_it_does_not_do(engine):
    _, monitor, _ = engine
    info = monitor.GetDeploymentInfo(resource_pb2.google_dot_protobuf_dot_empty__pb2.Empty())
    supported = set(info.supportedFeatures)
    assert resource_pb2.RESOURCE_MONITOR_FEATURE_SECRETS in supported
    assert not supported & {
        resource_pb2.RESOURCE_MONITOR_FEATURE_TRANSFORMS,
        resource_pb2.RESOURCE_MONITOR_FEATURE_OUTPUT_VALUES,
        resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_HOOKS,
    }
    assert (info.project, info.stack, info.dryRun) == ("proj", "dev", True)
    assert monitor.SupportsFeature(resource_pb2.SupportsFeatureRequest(id="secrets")).hasSupport
    assert not monitor.SupportsFeature(resource_pb2.SupportsFeatureRequest(id="transforms")).hasSupport


def test_the_engine_keeps_the_programs_errors_and_prints_its_warnings(engine, capfd):
    server, _, logs = engine
    logs.Log(engine_pb2.LogRequest(severity=engine_pb2.WARNING, message="pool 'ml' has no limits"))
    logs.Log(engine_pb2.LogRequest(severity=engine_pb2.ERROR, message="boom"))
    logs.Log(engine_pb2.LogRequest(severity=engine_pb2.INFO, message="hidden, as pulumi preview hides it"))
    assert server.monitor.logged_errors == ["boom"]
    assert capfd.readouterr().err == "warning: pool 'ml' has no limits\n"


# ---- how a Node.js error reads ----------------------------------------------------------------------------------


def test_an_error_names_the_programs_own_frame_not_the_sdks(tmp_path):
    logged = (
        f"Running program '{tmp_path}' failed with an unhandled exception:\n"
        "<ref *1> \x1b[31mError: no lane\x1b[39m\n"
        "    at lane (/x/node_modules/@pulumi/pulumi/runtime/invoke.ts:301:37)\n"
        f"    at Object.<anonymous> ({tmp_path}/src/index.ts:12:9)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1358:14) {\n"
        "  promise: Promise { <rejected> [Circular *1] }\n"
        "}"
    )
    assert program_error(logged, tmp_path) == "the program failed: Error: no lane\n  at src/index.ts:12:9"


FRAGMENTS = st.sampled_from(
    [
        "\x1b[31m",
        "\x1b[39m",
        "\x1b[90m",
        "Error: no lane",
        "TSError: \u2a2f x",
        "\n",
        " {",
        "    at f (/p/index.ts:1:2)",
        "    at node:internal/x:3:4",
        "promise: {}",
        "é",
    ]
)


@given(st.lists(FRAGMENTS, max_size=12).map("".join))
def test_any_logged_error_reads_as_one_failure_without_escape_codes(logged):
    message = program_error(logged, Path("/p"))
    assert message.startswith("the program failed: ")
    assert "\x1b" not in message
