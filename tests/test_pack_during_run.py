"""The offline preview feeds the policy packs as the Pulumi CLI does during a preview: resources go to
``Analyze`` as the program registers them (in groups growing from ``FIRST_GROUP`` to ``FEED_EVERY``),
so a pack works while the program still runs, and ``AnalyzeStack`` follows once the program is done. The program
itself serves the SDK's monitor requests on its own thread."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pulumi
import pytest

from mixed_os_racks.offline import run_program
from mixed_os_racks.offline import packprocess
from mixed_os_racks.offline.analyzer import FEED_EVERY, FIRST_GROUP, PolicyPacks
from mixed_os_racks.offline.packprocess import PolicyPackProcess
from mixed_os_racks.offline.policyconfig import PolicyPackError

REGION = {"aws:region": "us-east-1"}
RECORDING_PACK = """
import os
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy

def seen(args, report):
    with open(os.environ["SEEN_FILE"], "a") as out:
        out.write(args.urn + "\\n")
    if args.name == os.environ.get("DIE_ON", ""):
        os._exit(3)
    report("seen " + args.name)

PolicyPack(name="recorder", enforcement_level=EnforcementLevel.ADVISORY,
           policies=[ResourceValidationPolicy(name="seen", description="records each resource", validate=seen)])
"""


def recording_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, die_on: str = "") -> tuple[Path, Path]:
    pack = tmp_path / "recorder"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (pack / "__main__.py").write_text(RECORDING_PACK)
    seen = tmp_path / "seen.txt"
    seen.touch()
    monkeypatch.setenv("SEEN_FILE", str(seen))
    monkeypatch.setenv("DIE_ON", die_on)
    return pack, seen


def thing(name: str) -> pulumi.ComponentResource:
    return pulumi.ComponentResource("test:index:Thing", name, None)


@pytest.mark.parametrize("registered", [FIRST_GROUP, FEED_EVERY + 1], ids=["a small program", "a large one"])
def test_the_pack_judges_a_resource_while_the_program_still_runs(tmp_path, monkeypatch, registered):
    # the first resources go in a small group, so a small program's are judged while it runs too
    pack, seen = recording_pack(tmp_path, monkeypatch)
    observed: dict[str, float] = {}

    def wait_for_the_pack(_: object) -> None:  # a group is registered; the program goes on when the pack has it
        began, patience = time.monotonic(), packprocess.start_limit() + 30  # the pack starts meanwhile
        while "::first" not in seen.read_text() and time.monotonic() - began < patience:
            time.sleep(0.02)
        observed["waited"] = time.monotonic() - began
        observed["seen"] = "::first" in seen.read_text()
        thing("second")

    def program() -> None:
        group = [thing("first")] + [thing(f"t{n}") for n in range(registered - 1)]
        pulumi.Output.all(*[t.urn for t in group]).apply(wait_for_the_pack)

    with PolicyPacks([pack], [], "proj", "test", REGION) as packs:
        run = run_program(program, REGION, project="proj", stack="test", on_resource=packs.add)
        violations = packs.analyze(run)
    assert observed["seen"], f"the pack had not seen the first resource after {observed['waited']:.1f} s of the program"
    assert sorted(v["message"] for v in violations if v["policy"] == "seen") == sorted(
        f"seen {r.name}" for r in run.resources
    )
    # each resource went to Analyze once
    assert sorted(seen.read_text().split()) == sorted(r.urn for r in run.resources)


def test_a_pack_that_dies_during_the_program_is_reported_after_it_not_as_a_program_error(tmp_path, monkeypatch):
    pack, seen = recording_pack(tmp_path, monkeypatch, die_on="first")

    def after_first(_: object) -> None:
        deadline = time.monotonic() + packprocess.start_limit() + 30  # the pack starts meanwhile
        while "::first" not in seen.read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        thing("second")  # sent to a pack that is gone: the program does not notice

    def program() -> None:
        group = [thing("first")] + [thing(f"t{n}") for n in range(FEED_EVERY)]
        pulumi.Output.all(*[t.urn for t in group]).apply(after_first)

    with PolicyPacks([pack], [], "proj", "test", REGION) as packs:
        run = run_program(program, REGION, project="proj", stack="test", on_resource=packs.add)
        assert [r.name for r in run.resources if r.type == "test:index:Thing"][:: FEED_EVERY + 1] == ["first", "second"]
        with pytest.raises(PolicyPackError, match=r"policy pack .*recorder: UNAVAILABLE"):
            packs.analyze(run)


def test_a_run_calls_on_resource_with_each_resource_in_order():
    got = []

    def program() -> None:
        parent = thing("a")
        pulumi.ComponentResource("test:index:Thing", "b", None, pulumi.ResourceOptions(parent=parent))

    run = run_program(program, REGION, on_resource=got.append)
    assert got and [r.urn for r in got] == [r.urn for r in run.resources]
    assert all(a is b for a, b in zip(got, run.resources))


def test_a_run_serves_the_monitor_on_the_programs_thread():
    # the SDK hands each monitor request to its loop's executor; offline the monitor is in this process,
    # and a thread per request only made the program and its requests take turns (``sdk._AtOnce``)
    before = threading.active_count()
    during: list[int] = []

    def program() -> None:
        things = [thing(f"t{n}") for n in range(20)]
        pulumi.Output.all(*[t.urn for t in things]).apply(lambda _: during.append(threading.active_count()))

    run = run_program(program, REGION)
    assert len(run.resources) == 21 and during == [before]
    assert threading.active_count() == before


SILENT_PACK = """
import os, socket, sys, time
listener = socket.create_server(("127.0.0.1", 0))  # takes connections, never speaks gRPC
print(listener.getsockname()[1], flush=True)
held = [listener.accept()[0]]  # the start has read the port and connects
open(os.environ["CONNECTED_FILE"], "w").close()
time.sleep(60)
"""


def test_a_program_that_fails_while_a_pack_still_starts_ends_at_once(tmp_path, monkeypatch):
    # the preview stops the packs when the program fails; a pack still waiting for its gRPC channel
    # stops waiting then, instead of holding the command until its start times out
    pack = tmp_path / "silent"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (pack / "__main__.py").write_text(SILENT_PACK)
    connected = tmp_path / "connected"
    monkeypatch.setenv("CONNECTED_FILE", str(connected))
    packs = PolicyPacks([pack], [], "proj", "test", REGION)
    # the pack has printed its port and the start has connected: it waits for a server that never answers
    deadline = time.monotonic() + packprocess.start_limit()
    while not connected.exists():
        assert time.monotonic() < deadline, "the start never connected to the pack"
        time.sleep(0.02)
    begin = time.monotonic()
    packs.close()
    assert time.monotonic() - begin < 2
    with pytest.raises(PolicyPackError, match="was stopped while starting"):
        packs.analyze(run_program(lambda: None, REGION, project="proj", stack="test"))


def test_a_pack_stopped_as_it_connects_is_not_left_holding_the_command(tmp_path, monkeypatch):
    # the moment between reading a pack's port and opening its channel: a stop arriving then (the
    # program failed) must neither wait for the start nor leave it stuck
    pack, _ = recording_pack(tmp_path, monkeypatch)
    process = PolicyPackProcess(pack, wait=False)
    connect = packprocess.socket.create_connection

    def stopped_meanwhile(*args: object, **kwargs: object) -> object:
        connection = connect(*args, **kwargs)
        stop = threading.Thread(target=process.kill)
        stop.start()
        stop.join(5)
        assert not stop.is_alive(), "kill waited for the start"
        return connection

    monkeypatch.setattr(packprocess.socket, "create_connection", stopped_meanwhile)
    failure: list[BaseException] = []

    def start() -> None:
        try:
            process.handshake()
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            failure.append(exc)

    starting = threading.Thread(target=start, daemon=True)
    starting.start()
    starting.join(10)
    assert not starting.is_alive(), "the start is stuck"
    assert isinstance(failure[0], PolicyPackError) and "was stopped while starting" in str(failure[0])
    done = threading.Thread(target=process.close, daemon=True)
    done.start()
    done.join(10)
    assert not done.is_alive(), "close is stuck"
