"""Node.js programs at scale: nothing a program registers is lost, and a call the engine's gRPC server refuses fails
the preview instead of ending it with a partial plan.

Upstream facts these tests rest on (read in the example's ``node_modules``, @pulumi/pulumi 3.270.0, and in
grpc/grpc ``src/core/server/server.cc``, ``server.h``):

- The Node.js SDK sends every registration as soon as the program makes it: nothing bounds the calls in flight
  unless ``--parallel`` is 1 (``runtime/settings.js``, ``serialize``; ``runtime/resource.js``,
  ``runAsyncResourceOp``), so a loop of 10,000 resources is 10,000 concurrent calls on one connection.
- A call that fails with ``CANCELLED`` or ``UNAVAILABLE`` is taken as the engine shutting down: the SDK stops its
  RPCs (``terminateRpcs``), swallows the error (``errors.js``, ``isGrpcError``; ``runtime/rpc.js``), reports no
  leaked promises (``debuggable.js``, ``terminated``) and exits 0.
- gRPC core's server keeps a call that arrived before the application asked for one in a pending queue, refuses
  calls past ``grpc.server.max_pending_requests`` (1,000 by default, up to ``..._hard_limit``, 3,000: "Too many
  pending requests for this server") and drops those pending longer than
  ``grpc.server_max_unrequested_time_in_server`` (30 s). grpcio (1.85) asks for one call at a time from one
  thread; the program saw the refusals as ``CANCELLED``, so 1,500 resources previewed as about 1,450, exit 0.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from mixed_os_racks.offline import resmon
from mixed_os_racks.offline.catalog import Catalog
from mixed_os_racks.offline.cloud import OfflineMocks
from mixed_os_racks.offline.nodejs import NodeProgramError, run_node_program
from mixed_os_racks.offline.resmon import Deployment, serve
from mixed_os_racks.offline.stackfile import read_project

from test_nodejs_programs import node_modules, node_project

FLOOD = """\
// Registrations as the Node.js SDK sends them: all at once, through its own generated client, on one channel.
const grpc = require("@grpc/grpc-js");
const resrpc = require("@pulumi/pulumi/proto/resource_grpc_pb");
const resproto = require("@pulumi/pulumi/proto/resource_pb");
const gstruct = require("google-protobuf/google/protobuf/struct_pb");
const [address, count] = [process.argv[2], Number(process.argv[3])];
const client = new resrpc.ResourceMonitorClient(address, grpc.credentials.createInsecure());
const answers = {};
let done = 0;
for (let i = 0; i < count; i++) {
    const req = new resproto.RegisterResourceRequest();
    req.setType("kubernetes:core/v1:ConfigMap");
    req.setName(`cm-${i}`);
    req.setCustom(true);
    req.setObject(gstruct.Struct.fromJavaScript({ metadata: { name: `cm-${i}` }, data: { index: String(i) } }));
    client.registerResource(req, (err, resp) => {
        const answer = err ? grpc.status[err.code] : "OK";
        answers[answer] = (answers[answer] || 0) + 1;
        if (++done === count) { console.log(JSON.stringify(answers)); process.exit(0); }
    });
}
"""


@pytest.mark.slow
def test_ten_thousand_registrations_at_once_all_reach_the_plan_and_the_pack(tmp_path):
    """10,000 registrations in flight at once, as a loop of 10,000 resources sends them, are all answered, all
    recorded (the plan) and all handed on (``on_resource``, what sends each resource to the policy packs)."""
    modules = node_modules()
    (tmp_path / "flood.js").write_text(FLOOD)
    (tmp_path / "node_modules").symlink_to(modules, target_is_directory=True)
    handed_on: list[str] = []
    mocks = OfflineMocks(Catalog.load(), {"aws:region": "us-east-1"})
    with serve(mocks, Deployment("proj", "dev", {}), lambda resource: handed_on.append(resource.urn)) as server:
        sent = subprocess.run(["node", "flood.js", server.address, "10000"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=900)
        assert sent.returncode == 0, sent.stderr
        assert json.loads(sent.stdout) == {"OK": 10_000}
        assert server.refused() == 0
        urns = [resource.urn for resource in server.monitor.run().resources]
    expected = {f"urn:pulumi:dev::proj::kubernetes:core/v1:ConfigMap::cm-{i}" for i in range(10_000)}
    assert (len(urns), set(urns)) == (10_000, expected)
    assert sorted(handed_on) == sorted(urns)


@pytest.mark.slow
def test_a_call_the_server_refuses_fails_the_preview_not_a_partial_plan(tmp_path, monkeypatch):
    """Were gRPC to refuse a call nevertheless, the program would exit 0 having registered less than it made: the
    run fails, saying so, and returns no plan. (The server is made to refuse past one pending call here.)"""
    program = ("const pulumi = require('@pulumi/pulumi');\n"
               "for (let i = 0; i < 300; i++) new pulumi.CustomResource('test:index:Thing', `thing-${i}`, {});\n")
    folder = node_project(tmp_path / "p", "", pulumi_yaml="name: tsprogram\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n")
    (folder / "index.js").write_text(program)
    (folder / "package.json").write_text(json.dumps({"name": "tsprogram", "main": "index.js"}))
    monkeypatch.setattr(resmon, "SERVER_OPTIONS", [("grpc.server.max_pending_requests", 0),
                                                   ("grpc.server.max_pending_requests_hard_limit", 1)])
    with pytest.raises(NodeProgramError, match=r"^the offline engine's gRPC server refused \d+ of the program's calls, "
                                               r"so the program stopped registering resources and the preview would "
                                               r"miss some: nothing was previewed$"):
        run_node_program(folder, read_project(folder), {"aws:region": "us-east-1"})

