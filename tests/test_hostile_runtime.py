"""Hostile input, at run time: every way a preview ends leaves nothing behind and says one thing.

The program's event loop and the SDK's worker threads are shut down on every
exit path; ``sys.exit`` in a program and Ctrl-C give one line and a known exit code; a broken pack is
named within 15 s; a config too large for a process environment is refused up front.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from mixed_os_racks.errors import ConfigError
from mixed_os_racks.offline import packprocess, run_program
from mixed_os_racks.offline.packprocess import PolicyPackProcess, pack_env
from mixed_os_racks.offline.policyconfig import PolicyPackError
from mixed_os_racks.cli import main
from mixed_os_racks.offline.engine import ProgramExit
from mixed_os_racks.offline.sdk import MAX_ARG_STRLEN

from conftest import GPU_AMI, REPO, rack_config, stack_config

POLICIES = REPO / "policies"


def project(tmp_path: Path, program: str, config: dict | None = None, name: str = "hostile") -> Path:
    """A project directory: Pulumi.yaml, ``program`` as __main__.py, and Pulumi.s.yaml."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(f"name: {name}\nruntime: python\n")
    (folder / "__main__.py").write_text(program)
    (folder / "Pulumi.s.yaml").write_text(yaml.safe_dump({"config": config or {"aws:region": "us-east-1"}}))
    return folder


def fake_pack(tmp_path: Path, name: str, program: str) -> Path:
    """A policy pack directory whose ``__main__.py`` is ``program`` (run as the CLI runs a pack)."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (folder / "__main__.py").write_text(program)
    return folder


def pack_copy(tmp_path: Path) -> Path:
    """The real pack at a path of its own, run with this interpreter (no virtualenv)."""
    pack = shutil.copytree(POLICIES, tmp_path / "pack", ignore=shutil.ignore_patterns("venv", "__pycache__"))
    manifest = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())
    manifest["runtime"].get("options", {}).pop("virtualenv", None)
    (pack / "PulumiPolicy.yaml").write_text(yaml.safe_dump(manifest))
    return pack


def processes_mentioning(text: str) -> list[int]:
    """Live processes (not this one) whose command line mentions ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def open_loops() -> set[int]:
    gc.collect()
    return {id(o) for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop) and not o.is_closed()}


def as_from_a_terminal() -> None:
    """In the child, before it runs: SIGINT as a terminal's foreground process has it. A shell that starts a
    background job without job control (``(make test &)``, some CI runners) starts it with SIGINT ignored,
    every child inherits that, and Python then installs no KeyboardInterrupt handler: Ctrl-C cannot be tested."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mixed_os_racks.offline", "preview", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=as_from_a_terminal,
    )


# ---- 1. the event loop and the worker threads, on every exit path ----------------------------------------


@pytest.mark.parametrize("ending", ["fine", "pinned-ami-error", "exception", "sys.exit", "ctrl-c"])
def test_every_run_closes_its_event_loops_and_joins_its_threads(ending, tmp_path):
    """The SDK's mock monitor makes an event loop on each worker thread it serves a request on and
    never closes it; left to the garbage collector at interpreter exit, such a loop printed
    "Exception ignored in BaseEventLoop.__del__ ... Invalid file descriptor: -1" after the prod
    preview's right error in most runs. Every loop a run makes is closed when it ends, however."""
    before_loops, before_threads = open_loops(), set(threading.enumerate())
    config = stack_config("prod")
    if ending == "pinned-ami-error":
        config["rack:additional_karpenter_nodepools_config"][0]["disk"] = 50  # below the AMI's 100 GiB snapshot
    body = {
        "exception": "raise ValueError('boom')\n",
        "sys.exit": "import sys\nsys.exit(5)\n",
        "ctrl-c": "raise KeyboardInterrupt\n",
    }.get(ending)
    program = (
        REPO
        if body is None
        else project(
            tmp_path,
            "import pulumi_aws as aws\naws.ec2.get_ami(filters=[{'name': 'image-id', 'values': ['"
            + GPU_AMI
            + "']}])\n"
            + body,
        )
    )
    expected = {
        "fine": None,
        "pinned-ami-error": ConfigError,
        "exception": ValueError,
        "sys.exit": ProgramExit,
        "ctrl-c": KeyboardInterrupt,
    }[ending]
    if expected is None:
        run_program(program, config, stack="prod")
    else:
        with pytest.raises(expected):
            run_program(program, config, stack="prod")
    assert open_loops() <= before_loops
    assert set(threading.enumerate()) <= before_threads


def test_the_prod_example_with_a_small_disk_prints_its_error_and_nothing_else():
    stack = REPO / "Pulumi.prod.yaml"
    doc = yaml.safe_load(stack.read_text())
    doc["config"]["rack:additional_karpenter_nodepools_config"][0]["disk"] = 50
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "mixed_os_racks.offline",
            "preview",
            "--config",
            "/dev/stdin",
            "--no-policy",
        ],
        input=yaml.safe_dump(doc),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # the warnings say which remote charts (Karpenter's, from its OCI registry) the engine cannot render
    err = [line for line in proc.stderr.splitlines() if not line.startswith(("import time:", "warning: "))]
    assert proc.returncode == 2
    assert err == [
        f"error: /dev/stdin:10: rack:additional_karpenter_nodepools_config[0].disk: karpenter nodepool 'gpu': disk 50 "
        f"GiB is smaller than the root snapshot of {GPU_AMI} (100 GiB); give it a disk of 100 GiB or more"
    ]


# ---- 2. a program that exits -----------------------------------------------------------------------------


def test_sys_exit_in_the_program_is_an_error_line_and_exit_2(tmp_path, capsys):
    folder = project(tmp_path, "import sys\nsys.exit(5)\n")
    assert main(["preview", "--cwd", str(folder), "--stack", "s", "--no-policy"]) == 2
    assert capsys.readouterr().err == "error: the program exited with code 5\n"


def test_sys_exit_with_a_message_and_an_exception_give_their_message(tmp_path, capsys):
    folder = project(tmp_path, "import sys\nsys.exit('cannot go on')\n", name="message")
    assert main(["preview", "--cwd", str(folder), "--stack", "s", "--no-policy"]) == 2
    assert capsys.readouterr().err == "error: the program exited with code 1: cannot go on\n"
    folder = project(tmp_path, "raise RuntimeError('the cluster is gone')\n", name="raises")
    assert main(["preview", "--cwd", str(folder), "--stack", "s", "--no-policy"]) == 2
    assert capsys.readouterr().err == "error: the program failed: RuntimeError: the cluster is gone\n"


def test_sys_exit_in_a_callback_is_an_error_line_too(tmp_path, capsys):
    program = (
        "import sys\nimport pulumi_aws as aws\n"
        "aws.s3.Bucket('b', bucket='b').bucket.apply(lambda _: sys.exit(7))  # known in preview: an input\n"
    )
    folder = project(tmp_path, program)
    assert main(["preview", "--cwd", str(folder), "--stack", "s", "--no-policy"]) == 2
    assert capsys.readouterr().err == "error: the program exited with code 7\n"


def test_sys_exit_0_ends_the_program_like_returning(tmp_path, capsys):
    program = "import sys\nimport pulumi_aws as aws\naws.s3.Bucket('kept')\nsys.exit(0)\naws.s3.Bucket('never')\n"
    folder = project(tmp_path, program)
    assert main(["preview", "--cwd", str(folder), "--stack", "s", "--no-policy"]) == 0
    out = capsys.readouterr().out
    assert "kept" in out and "never" not in out


def test_a_program_exit_is_one_line_from_a_shell_too(tmp_path):
    folder = project(tmp_path, "import sys\nsys.exit(5)\n")
    proc = cli("--cwd", str(folder), "--stack", "s", "--no-policy")
    assert (proc.returncode, proc.stderr) == (2, "error: the program exited with code 5\n")


def test_the_process_ends_with_all_its_output_written_and_its_exit_code(tmp_path):
    # the command ends its process without the interpreter's teardown: what it printed must still be all
    # there, whatever stdout is (a file is block-buffered), with the command's exit code
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "mixed_os_racks.offline",
                "preview",
                "--stack",
                "prod",
                "--no-policy",
                "--json",
                str(tmp_path / "prod.json"),
            ],
            cwd=REPO,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert text.startswith("Previewing update (prod), offline:") and text.endswith(" to create\n"), text[-300:]
    assert json.loads((tmp_path / "prod.json").read_text())["resources"]
    # a reader that goes away early (`| head -1`): no complaint, and the command's own exit code
    shell = subprocess.run(
        f"{sys.executable} -m mixed_os_racks.offline preview --stack prod --no-policy | head -1",
        shell=True,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        executable="/bin/bash",
    )
    assert shell.stdout == "Previewing update (prod), offline:\n"
    assert "Exception ignored" not in shell.stderr and "BrokenPipe" not in shell.stderr


# ---- 3. Ctrl-C --------------------------------------------------------------------------------------------


def test_ctrl_c_while_the_program_runs_exits_130_with_one_line_and_no_pack_left(tmp_path):
    pack = pack_copy(tmp_path)
    # SIGINT to the preview's own process while its program runs, with the pack started: as Ctrl-C, but
    # reaching only the preview (a terminal also signals the pack), so the pack must be killed by it.
    folder = project(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n")
    proc = cli("--cwd", str(folder), "--stack", "s", "--policy-pack", str(pack))
    assert (proc.returncode, proc.stderr) == (130, "error: interrupted\n")
    assert processes_mentioning(str(pack)) == []


def test_ctrl_c_while_waiting_for_a_pack_kills_it(tmp_path):
    pid_file = tmp_path / "pid"
    pack = fake_pack(
        tmp_path,
        "stuck",
        (
            "import os, signal, time\n"
            f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
            "os.kill(os.getppid(), signal.SIGINT)\n"  # Ctrl-C reaches the preview while it waits for this pack
            "time.sleep(600)\n"
        ),
    )
    folder = project(tmp_path, "")
    proc = cli("--cwd", str(folder), "--stack", "s", "--policy-pack", str(pack))
    assert (proc.returncode, proc.stderr) == (130, "error: interrupted\n")
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


# ---- 4. packs that never answer ---------------------------------------------------------------------------


def test_the_start_limit_is_generous_and_a_user_can_set_it(monkeypatch, tmp_path, capsys):
    """A pack on a loaded machine takes many times its idle 1-2 s to print its port, and the Pulumi CLI waits for a
    plugin's port as long as it runs (``plugin.go``, ``newPlugin``): the default is generous, and
    ``$MIXED_OS_RACKS_PACK_START_S`` sets it; a value that is no number of seconds is named before a pack starts."""
    assert packprocess.START_TIMEOUT_S >= 60
    monkeypatch.setenv(packprocess.START_ENV, "2.5")
    assert packprocess.start_limit() == 2.5
    pack = fake_pack(tmp_path, "slow", "import time\ntime.sleep(600)\n")
    for bad in ("soon", "0", "-3", "nan", "inf"):
        monkeypatch.setenv(packprocess.START_ENV, bad)
        with pytest.raises(PolicyPackError) as refused:
            PolicyPackProcess(pack)
        assert str(refused.value) == f"{packprocess.START_ENV}={bad!r}: not a number of seconds above 0 (such as 300)"
    assert processes_mentioning(str(pack)) == []


def test_a_pack_that_prints_a_port_nobody_listens_on_fails_at_once(tmp_path, capsys):
    """The policy SDK prints its port only after its gRPC server has started (pulumi-policy
    ``policy.py``: ``server.start()``, then the port on stdout), so a refused connection is final."""
    pack = fake_pack(
        tmp_path,
        "refused",
        (
            "import socket, sys, time\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()\n"
            "print(port, flush=True)\n"
            "time.sleep(600)\n"
        ),
    )
    started = time.monotonic()
    assert main(["preview", "--stack", "dev", "--policy-pack", str(pack)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: policy pack {pack} failed to start: it printed port ")
    assert "but nothing answers there (Connection refused)" in err
    assert time.monotonic() - started < packprocess.START_TIMEOUT_S
    assert processes_mentioning(str(pack)) == []


@pytest.mark.parametrize("kind, budget", [("silent listener", 5.0), ("no port", 1.5), ("half a line", 1.5)])
def test_a_pack_that_never_answers_is_named_when_its_time_is_up(kind, budget, tmp_path, capsys, monkeypatch):
    """The start budget is shortened for the test (the silent listener must still get to print its
    port first, on a busy machine)."""
    monkeypatch.setattr(packprocess, "START_TIMEOUT_S", budget)
    program = {
        "silent listener": "import socket, time\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
        "print(s.getsockname()[1], flush=True)\ntime.sleep(600)\n",
        "no port": "import time\ntime.sleep(600)\n",
        "half a line": "import sys, time\nsys.stdout.write('123'); sys.stdout.flush()\ntime.sleep(600)\n",
    }[kind]
    pack = fake_pack(tmp_path, kind.replace(" ", "-"), program)
    started = time.monotonic()
    assert main(["preview", "--stack", "dev", "--policy-pack", str(pack)]) == 2
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    what = {
        "silent listener": f"but no gRPC server answered there within {budget:g} s",
        "no port": f"it printed no port within {budget:g} s",
        "half a line": f"it printed no port within {budget:g} s",
    }[kind]
    assert err.startswith(f"error: policy pack {pack} failed to start: it ") and what in err.splitlines()[0]
    assert f"(on a busy machine, give it longer: {packprocess.START_ENV}=<seconds>)" in err.splitlines()[0]
    assert elapsed < budget + 5
    assert processes_mentioning(str(pack)) == []


# ---- 5. a config too large for a process environment -------------------------------------------------------


def big_stack(tmp_path: Path, size: int) -> Path:
    """The dev stack plus a value under another namespace, ``size`` bytes of ASCII."""
    config = stack_config("dev")
    config["other:blob"] = "x" * size
    path = tmp_path / "Pulumi.big.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return path


def env_string_bytes(config: dict) -> int:
    """``PULUMI_CONFIG=<compact JSON>`` and its NUL: what Linux measures against MAX_ARG_STRLEN."""
    from mixed_os_racks.offline.engine import stack_config_values
    from mixed_os_racks.offline.sdk import config_env_value

    return len("PULUMI_CONFIG=") + len(config_env_value(stack_config_values(config)).encode()) + 1


@pytest.mark.parametrize("policy", [["--no-policy"], []])
def test_a_config_too_large_for_pulumi_config_is_refused_up_front(policy, tmp_path, capsys):
    """The CLI hands a program (pulumi-language-python ``main.go``: ``env = append(env,
    "PULUMI_CONFIG="+config)``) and a pack (``sdk/policy_proxy.go``) the whole config in one
    environment variable; Linux refuses one environment string longer than MAX_ARG_STRLEN
    (``include/uapi/linux/binfmts.h``: 32 pages, 131072 bytes with 4 KiB pages, NUL included) with
    E2BIG. Such a stack cannot run under ``pulumi up``."""
    stack = big_stack(tmp_path, 200_000)
    assert main(["preview", "--config", str(stack), *policy]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith(f"error: {stack}: the stack config is too large to run")
    assert "PULUMI_CONFIG" in line and "131,072 bytes (MAX_ARG_STRLEN)" in line
    assert "the biggest keys: other:blob (200," in line


def test_the_limit_is_the_kernels_to_the_byte(tmp_path, capsys):
    """At exactly MAX_ARG_STRLEN the pack starts with the whole config; one byte more is refused."""
    base = stack_config("dev")
    base["other:blob"] = ""
    filler = MAX_ARG_STRLEN - env_string_bytes(base)
    stack = big_stack(tmp_path, filler)
    assert env_string_bytes(yaml.safe_load(stack.read_text())["config"]) == MAX_ARG_STRLEN
    assert main(["preview", "--config", str(stack)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    stack = big_stack(tmp_path, filler + 1)
    assert main(["preview", "--config", str(stack)]) == 2
    assert "too large to run" in capsys.readouterr().err


def test_run_program_refuses_it_too():
    config = rack_config()
    config["other:blob"] = "x" * MAX_ARG_STRLEN
    with pytest.raises(ConfigError, match=r"the biggest keys: other:blob"):
        run_program(REPO, config)


def test_a_pack_whose_environment_is_too_large_is_named_not_an_oserror(tmp_path):
    env = pack_env("p", "s")
    env["HUGE"] = "x" * (MAX_ARG_STRLEN + 1)
    with pytest.raises(PolicyPackError) as caught:
        PolicyPackProcess(POLICIES, env)
    message = str(caught.value)
    assert message.startswith(f"policy pack {POLICIES} failed to start: cannot run ")
    assert "Argument list too long (its environment is too large; the biggest variables: HUGE (" in message


def test_two_resources_with_one_urn_are_refused_as_the_engine_refuses_them(tmp_path, capsys):
    # pulumi's step generator: a URN registered twice in one run is the error "Duplicate resource URN
    # '<urn>'; try giving it a unique name" (pkg/resource/deploy, diag.GetDuplicateResourceURNError)
    program = (
        "from mixed_os_racks import ClusterRef, KarpenterPool, KarpenterPoolArgs, PoolSpec\n"
        "cluster = ClusterRef.existing('shared', 'shared-dev')\n"
        "KarpenterPool('ml', KarpenterPoolArgs(pool=PoolSpec(name='ml'), cluster=cluster))\n"
        "KarpenterPool('ml', KarpenterPoolArgs(pool=PoolSpec(name='ml2'), cluster=cluster))\n"
    )
    folder = project(tmp_path, program, name="twice")
    assert main(["preview", "--cwd", str(folder), "--stack", "s", "--no-policy"]) == 2
    assert capsys.readouterr().err == (
        "error: the program failed: Exception: Duplicate resource URN "
        "'urn:pulumi:s::twice::rack:index:KarpenterPool::ml'; "
        "try giving it a unique name\n"
    )
