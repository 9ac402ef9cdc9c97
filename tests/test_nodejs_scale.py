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

import pytest

from mixed_os_racks.offline import resmon
from mixed_os_racks.offline.nodejs import NodeProgramError, run_node_program
from mixed_os_racks.offline.stackfile import read_project

from test_nodejs_programs import node_project

JAVASCRIPT_PROJECT = "name: tsprogram\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n"
"""A project whose program is JavaScript (``index.js``), run without ts-node."""

TEN_THOUSAND = """\
const k8s = require("@pulumi/kubernetes");
for (let i = 0; i < 10000; i++) {
    new k8s.core.v1.ConfigMap(`cm-${i}`, { metadata: { name: `cm-${i}` }, data: { index: String(i) } });
}
"""


@pytest.mark.slow
def test_a_program_of_ten_thousand_resources_has_all_of_them_in_the_plan_and_the_pack(tmp_path):
    """A loop of 10,000 ``@pulumi/kubernetes`` ConfigMaps, run as the Node.js host runs it, sends 10,000
    registrations at once: every one is answered, recorded (the plan) and handed on (``on_resource``, what sends each
    resource to the policy packs). (Before the server queued every call, 1,500 previewed as about 1,450.)"""
    folder = node_project(tmp_path / "p", "", pulumi_yaml=JAVASCRIPT_PROJECT)
    (folder / "index.js").write_text(TEN_THOUSAND)
    (folder / "package.json").write_text(json.dumps({"name": "tsprogram", "main": "index.js"}))
    handed_on: list[str] = []
    run = run_node_program(
        folder,
        read_project(folder),
        {"aws:region": "us-east-1"},
        on_resource=lambda resource: handed_on.append(resource.urn),
    )
    urns = [resource.urn for resource in run.resources if resource.type == "kubernetes:core/v1:ConfigMap"]
    expected = {f"urn:pulumi:dev::tsprogram::kubernetes:core/v1:ConfigMap::cm-{i}" for i in range(10_000)}
    assert (len(urns), set(urns)) == (10_000, expected)
    assert set(urns) <= set(handed_on)


@pytest.mark.slow
def test_a_call_the_server_refuses_fails_the_preview_not_a_partial_plan(tmp_path, monkeypatch):
    """Were gRPC to refuse a call nevertheless, the program would exit 0 having registered less than it made: the
    run fails, saying so, and returns no plan. (The server is made to refuse past one pending call here.)"""
    program = (
        "const pulumi = require('@pulumi/pulumi');\n"
        "for (let i = 0; i < 300; i++) new pulumi.CustomResource('test:index:Thing', `thing-${i}`, {});\n"
    )
    folder = node_project(tmp_path / "p", "", pulumi_yaml=JAVASCRIPT_PROJECT)
    (folder / "index.js").write_text(program)
    (folder / "package.json").write_text(json.dumps({"name": "tsprogram", "main": "index.js"}))
    monkeypatch.setattr(
        resmon,
        "SERVER_OPTIONS",
        [("grpc.server.max_pending_requests", 0), ("grpc.server.max_pending_requests_hard_limit", 1)],
    )
    with pytest.raises(
        NodeProgramError,
        match=r"^the offline engine's gRPC server refused \d+ of the program's calls, "
        r"so the program stopped registering resources and the preview would "
        r"miss some: nothing was previewed$",
    ):
        run_node_program(folder, read_project(folder), {"aws:region": "us-east-1"})
