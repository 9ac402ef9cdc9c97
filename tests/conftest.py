"""Shared helpers: run the rack program offline and look at what it registers."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Mapping, Optional

import pytest
import yaml
from hypothesis import HealthCheck, settings, strategies


from mixed_os_racks.offline import Catalog, ProgramRun, Resource, run_program
from mixed_os_racks.pack.speedups import tune_gc

# Property tests run with no per-example deadline: on a busy 2-core machine one example may take longer
# than Hypothesis's default 200 ms without anything being wrong. ``ci`` (the default, and what `make test`
# and .ci/run use) is derandomized: every run draws the same examples, so a red run is red again on any
# machine, never at random. ``HYPOTHESIS_PROFILE=wide`` draws new examples each run, ten times as many, to
# look for what the fixed draws miss (a failure prints the example and a blob that replays it);
# ``HYPOTHESIS_PROFILE=dev`` keeps the deadline for looking at slow examples locally.
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True, derandomize=True, database=None
)
settings.register_profile(
    "wide", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True, max_examples=1000
)
settings.register_profile("dev", deadline=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
# Dates are judged as of one day (EKS's support calendar, the catalog's AMI deprecation times and ages), so the
# verdicts the tests expect do not move with the calendar; every process a test starts inherits it.
os.environ.setdefault("MIXED_OS_RACKS_NOW", "2026-12-04T12:00:00Z")
# Hypothesis compiles its regex strategy module on first use. After a test that caught a RecursionError
# (the hostile-input tests nest values thousands deep), CPython 3.11 can fail that compile with
# "SystemError: AST constructor recursion depth mismatch" (cpython gh-106905): build it now, first.
with warnings.catch_warnings():  # Hypothesis asks plugins not to build strategies early; this one must be
    warnings.simplefilter("ignore")
    strategies.from_regex(r"[a-z]", fullmatch=True).validate()

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference"
KARPENTER_CRDS = REFERENCE / "karpenter-v1.14.1"
REFERENCE_MISSING = "upstream reference data"


def reference(*parts: str) -> Path:
    """A file or folder of ``../shared/reference``; the test is skipped (and the summary says so) without it."""
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{REFERENCE_MISSING}: {path} is absent")
    return path


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001 - pytest's hook signature
    """Once, loudly: tests that check us against upstream data did not run."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if REFERENCE_MISSING in str(r.longrepr)]
    if skipped:
        terminalreporter.write_sep("!", f"{len(skipped)} tests SKIPPED: {REFERENCE} is missing", red=True, bold=True)
        terminalreporter.write_line(
            "These tests check the components against upstream data (Karpenter CRDs and CEL rules, chart values "
            "files). CI always has the folder; put ../shared/reference beside the repository to run them."
        )


NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"

GPU_AMI = "ami-0a1b2c3d4e5f60718"  # x86_64, 100 GiB root snapshot, in the default catalog
ARM_AMI = "ami-0f0e0d0c0b0a09080"  # arm64, 20 GiB root snapshot, in the default catalog


def stack_config(name: str) -> dict[str, Any]:
    return yaml.safe_load((REPO / f"Pulumi.{name}.yaml").read_text())["config"]


def rack_config(**rack: Any) -> dict[str, Any]:
    """A stack config map: ``rack:`` keys from keyword arguments, a cluster name by default."""
    values: dict[str, Any] = {"aws:region": "us-east-1", "rack:cluster_name": "test-rack"}
    values.update({f"rack:{k}": v for k, v in rack.items()})
    return values


def run_rack(config: Mapping[str, Any], catalog: Optional[Catalog] = None, stack: str = "test") -> ProgramRun:
    return run_program(REPO, config, catalog, stack=stack)


def of_type(run: ProgramRun, type_: str) -> list[Resource]:
    return [r for r in run.resources if r.type == type_]


def named(run: ProgramRun, type_: str, k8s_name: str) -> Resource:
    """The Kubernetes object of ``type_`` whose metadata.name is ``k8s_name``."""
    matches = [r for r in of_type(run, type_) if r.inputs["metadata"]["name"] == k8s_name]
    assert len(matches) == 1, f"{type_} {k8s_name}: {len(matches)} registered"
    return matches[0]


@pytest.fixture(scope="session")
def prod_run() -> ProgramRun:
    return run_rack(stack_config("prod"), stack="prod")


@pytest.fixture(scope="session")
def dev_run() -> ProgramRun:
    return run_rack(stack_config("dev"), stack="dev")


def pytest_configure(config: pytest.Config) -> None:
    """Collect cycles less often: a Pulumi program run allocates many short-lived SDK objects, and the
    default thresholds spend a large share of the suite in the collector (as in the pack: ``speedups``)."""
    tune_gc()
