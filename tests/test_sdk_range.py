"""The components work beside the oldest Pulumi SDK their providers allow; the offline engine says
plainly when it runs on an SDK outside the range its extra pins.

pulumi-eks 4.4, pulumi-aws 7 and pulumi-kubernetes 4 each require ``pulumi>=3.231.0`` (their
``Requires-Dist``), so 3.231.0 is the oldest SDK a program using the components can have; the package
itself asks ``pulumi>=3.231.0,<4``. The offline engine uses SDK internals (``offline/sdk.py``) and was
tested on the minor release the ``offline`` extra pins; the rest of the suite runs on that release
(the newest this package supports). Here a virtualenv gets pulumi 3.231.0 (pip, from its cache) over
this environment's other packages, and a program builds components under the SDK's own mocks.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from unittest import mock

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from mixed_os_racks.offline import TESTED_SDK, sdk_problem

from test_pack_start import small_venv

OLDEST = "3.231.0"


def _pulumi_requirement(dist: str, extra: str = "") -> Requirement:
    found = [Requirement(line) for line in importlib.metadata.requires(dist) or []]
    return next(
        r
        for r in found
        if r.name == "pulumi"
        and (r.marker is None or r.marker.evaluate({"extra": extra}))
        and (extra == "" or r.marker is not None)
    )


def test_the_package_and_its_providers_all_accept_the_oldest_sdk():
    # what a resolver checks for `pip install mixed-os-racks pulumi==3.231.0`, over the installed providers
    for dist in ("mixed-os-racks", "pulumi-aws", "pulumi-eks", "pulumi-kubernetes", "pulumi-policy"):
        assert _pulumi_requirement(dist).specifier.contains(OLDEST), dist
    assert not _pulumi_requirement("mixed-os-racks", "offline").specifier.contains(OLDEST)
    assert _pulumi_requirement("mixed-os-racks", "offline").specifier.contains(importlib.metadata.version("pulumi"))


def test_the_engine_checks_the_release_the_offline_extra_pins():
    # the engine's own record of its SDK release (read without parsing the package's metadata at every
    # start) and the extra's pin are one range: every release the pin admits, and no other, passes
    major, minor = TESTED_SDK
    pin = _pulumi_requirement("mixed-os-racks", "offline").specifier
    assert pin == SpecifierSet(f">={major}.{minor},<{major}.{minor + 1}")
    for release in (
        f"{major}.{minor}.0",
        f"{major}.{minor}.17",
        f"{major}.{minor - 1}.9",
        f"{major}.{minor + 1}.0",
        f"{major + 1}.{minor}.0",
        f"{major}.{minor}0.0",
    ):
        with mock.patch("importlib.metadata.version", return_value=release):
            assert (sdk_problem() is None) == pin.contains(release), release


@pytest.fixture(scope="module")
def oldest_sdk(tmp_path_factory) -> Path:
    """A virtualenv with pulumi 3.231.0 of its own, seeing this environment's other packages."""
    where = tmp_path_factory.mktemp("oldest-sdk") / "venv"
    python = small_venv(where)
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            f"pulumi=={OLDEST}",
        ],
        capture_output=True,
        text=True,
    )
    if install.returncode != 0:
        pytest.skip(
            f"pulumi {OLDEST} cannot be installed here (not in pip's cache, and no index): "
            + (install.stderr.strip().splitlines() or ["pip failed"])[-1]
        )
    return python


PROGRAM = textwrap.dedent("""
    import importlib.metadata, json, pulumi

    assert importlib.metadata.version("pulumi") == "{oldest}", importlib.metadata.version("pulumi")
    registered = []

    class Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args):
            registered.append((args.typ, args.name, args.inputs))
            return args.name + "-id", dict(args.inputs)

        def call(self, args):
            if args.token == "aws:eks/getCluster:getCluster":
                return {{"endpoint": "https://example.eks", "arn": "arn:aws:eks:us-east-1:123456789012:cluster/shared",
                        "certificateAuthorities": [{{"data": "Y2E="}}], "name": "shared",
                        "roleArn": "arn:aws:iam::123456789012:role/eks",
                        "vpcConfig": {{"subnetIds": ["subnet-0a1b2c3d4e5f60718"]}}}}
            return {{}}

    pulumi.runtime.set_mocks(Mocks(), preview=True)

    from mixed_os_racks import ClusterRef, KarpenterPool, KarpenterPoolArgs, PoolSpec

    seen = {{}}

    @pulumi.runtime.test  # the SDK's own test helper: waits for the Output it returns
    def build():
        pool = KarpenterPool("ml", KarpenterPoolArgs(
            pool=PoolSpec(name="ml", instance_families=["g6"], disk=120, dedicated=True),
            cluster=ClusterRef.existing("shared", "shared"),
        ))
        return pulumi.Output.all(pool.taints, pool.node_pool_name).apply(lambda v: seen.update(taints=v[0], pool=v[1]))

    build()
    print(json.dumps({{"types": sorted({{t for t, _, _ in registered}}), **seen}}))
""")


@pytest.mark.slow
def test_components_build_beside_the_oldest_sdk(oldest_sdk):
    run = subprocess.run(
        [str(oldest_sdk), "-c", PROGRAM.format(oldest=OLDEST)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert {
        "rack:index:KarpenterPool",
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
        "kubernetes:karpenter.sh/v1:NodePool",
    } <= set(out["types"])
    assert {"key": "dedicated-node", "value": "ml", "effect": "NoSchedule"} in out["taints"] and out["pool"] == "ml"


@pytest.mark.slow
def test_the_offline_engine_names_the_sdk_it_needs(oldest_sdk):
    pin = _pulumi_requirement("mixed-os-racks", "offline").specifier
    run = subprocess.run(
        [str(oldest_sdk), "-m", "mixed_os_racks", "preview", "--stack", "dev"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    named = run.stderr.removeprefix(
        "error: the offline engine (mixed_os_racks.offline, `mixed-os-racks preview`) needs pulumi"
    )
    assert named != run.stderr and SpecifierSet(named.split(" ", 1)[0]) == pin
    assert (
        f"this environment has pulumi {OLDEST}" in run.stderr and 'pip install "mixed-os-racks[offline]"' in run.stderr
    )
    assert "Traceback" not in run.stderr
    assert Version(OLDEST) not in pin


@pytest.mark.slow
def test_commands_that_run_no_program_work_beside_the_oldest_sdk(oldest_sdk, tmp_path):
    # --help, pack init and guard run no program: only preview needs the release the engine was tested on
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(oldest_sdk), "-m", "mixed_os_racks", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )

    shown = run("--help")
    assert shown.returncode == 0 and "preview" in shown.stdout and shown.stderr == ""
    written = run("pack", "init", "policy-pack")
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "policy-pack" / "config.json").is_file() and "pulumi install" in written.stdout
    (tmp_path / "preview.json").write_text(json.dumps({"steps": [], "changeSummary": {}}))
    guarded = run("guard", "preview.json")
    assert guarded.returncode == 0, guarded.stderr
    assert "No lane is removed or rolled." in guarded.stdout


@pytest.mark.slow
def test_the_consumers_unit_tests_pass_beside_the_oldest_sdk(oldest_sdk, tmp_path):
    # mixed_os_racks.testing needs no particular SDK: the consumer example's tests run on 3.231 too
    consumer = shutil.copytree(Path(__file__).parents[1] / "examples" / "consumer", tmp_path / "ml-platform")
    run = subprocess.run(
        [str(oldest_sdk), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"],
        cwd=consumer,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.rstrip().splitlines()[-1].startswith("3 passed")
