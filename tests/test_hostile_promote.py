"""Hostile input on a new AMI's way to prod: ``promote``, ``soak``, ``analyze`` and the pack config they share.

``promote`` takes its bar from the pack config the gate reads, so it reads that config as the pack does (its
schema, then what the schema cannot state) and refuses what the pack refuses; it writes nothing the preview
would then refuse (a canary beside a pool of weight 100 or beside a lane already named ``<pool>-canary``, a
Bottlerocket image in an AL2023 lane); it keeps a prod stack file's ``secure:`` values as written; and no file
a command opens makes it wait for ever (a FIFO no one writes to) or read past what any input needs. ``soak``
writes its own entry of the pack config and leaves every other byte of the file as it was. ``analyze`` of a
stack's own state never refuses the AMIs that state runs.

The pack's verdicts are the real pack's, over its gRPC analyzer protocol (``Configure``): Pulumi's CLI
checks a config against each policy's schema before it configures a pack, and the pack refuses the rest
(``invalid policy pack config``), which stops the preview with that error.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mixed_os_racks import inputs
from mixed_os_racks.cli import main
from mixed_os_racks.offline.packprocess import PolicyPackProcess
from mixed_os_racks.offline.policyconfig import PolicyPackError, parse_config, read_config_file, with_entry
from mixed_os_racks.offline.records import ProgramRun

from conftest import GPU_AMI, REPO, stack_config
from policy_helpers import start_pack
from promotion_helpers import BOTTLEROCKET_AMI, LARGE_ROOT_AMI, NEW_AMI, POOLS_KEY, catalog
from test_ami_promotion import export, with_gpu

SOAKED = "ami-soaked"
CEILING = "lane-cost-ceiling"


@pytest.fixture(scope="module")
def amis(tmp_path_factory) -> Path:
    return catalog(tmp_path_factory.mktemp("catalog"))


@pytest.fixture(scope="module")
def soaked_staging(tmp_path_factory, amis) -> Path:
    """staging's state: its gpu pool on NEW_AMI for 8 days (soaked by the default bar of 7)."""
    return export(tmp_path_factory.mktemp("staging"), "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 8.04)


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("Pulumi.yaml", "__main__.py", "Pulumi.prod.yaml"):
        shutil.copy(REPO / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def pack() -> Iterator[PolicyPackProcess]:
    with start_pack() as running:
        yield running


def promote(project: Path, staging: Path, *extra: str) -> int:
    return main(["promote", "--from", str(staging), "--stack", "prod", "--cwd", str(project), *extra])


def pack_refuses(pack: PolicyPackProcess, config: dict[str, Any]) -> bool:
    """Whether the real pack refuses ``config`` when it is configured (as the CLI configures it)."""
    try:
        pack.configure(parse_config(config), ProgramRun("p", "s", [], {}))
    except PolicyPackError:
        return True
    return False


# ---- promote reads the pack config as the pack does --------------------------------------------------------


@pytest.mark.parametrize(
    ("props", "said"),
    [
        ({"soakDays": -1}, "soakDays: -1 is less than the minimum of 0"),
        ({"soakDays": True}, "soakDays: True is not of type 'number'"),
        ({"soakDays": "7"}, "soakDays: '7' is not of type 'number'"),
        (
            {"ranSince": {"gpu": {NEW_AMI: "2026-11-01T00:00:00+25:00"}}},
            f"ranSince.gpu.{NEW_AMI}: '2026-11-01T00:00:00+25:00' is no RFC 3339 time: zone offset +25:00 is no offset "
            f"a "
            f"clock has (-23:59 to +23:59)",
        ),
    ],
)
def test_promote_refuses_a_soak_bar_the_pack_refuses(tmp_path, project, soaked_staging, pack, capsys, props, said):
    """``soakDays: -1`` once wrote an AMI staging ran 2 days, and ``true`` read as 7: the bar is read as the gate
    reads it, or not at all."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({SOAKED: props}))
    before = (project / "Pulumi.prod.yaml").read_bytes()
    assert promote(project, soaked_staging, "--policy-pack-config", str(config)) == 2
    err = capsys.readouterr().err
    assert said in err and str(config) in err, err
    assert (project / "Pulumi.prod.yaml").read_bytes() == before
    assert pack_refuses(pack, {SOAKED: props})  # and the gate itself refuses the same config


def test_promote_with_a_pack_config_path_that_does_not_exist_is_an_error(tmp_path, project, soaked_staging, capsys):
    before = (project / "Pulumi.prod.yaml").read_bytes()
    missing = tmp_path / "nowhere.json"
    assert promote(project, soaked_staging, "--policy-pack-config", str(missing)) == 2
    assert f"error: --policy-pack-config {missing}: no such file" in capsys.readouterr().err
    assert (project / "Pulumi.prod.yaml").read_bytes() == before


SOAK_PROPS = st.fixed_dictionaries(
    {},
    optional={
        "soakDays": st.one_of(
            st.integers(-3, 30), st.floats(-2, 40, allow_nan=False), st.booleans(), st.text(max_size=3), st.none()
        ),
        "environment": st.one_of(st.text(max_size=8), st.integers()),
        "running": st.one_of(st.lists(st.sampled_from([GPU_AMI, NEW_AMI])), st.text(max_size=3)),
        "ranSince": st.dictionaries(
            st.sampled_from(["gpu", "rack-ng-1"]),
            st.dictionaries(
                st.sampled_from([GPU_AMI, NEW_AMI]),
                st.one_of(
                    st.none(),
                    st.integers(),
                    st.builds(
                        "{}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}".format,
                        st.integers(0, 2030).map(lambda y: f"{y:04d}"),
                        st.integers(0, 14),
                        st.integers(0, 32),
                        st.integers(0, 25),
                        st.integers(0, 61),
                        st.integers(0, 61),
                        st.one_of(
                            st.just("Z"),
                            st.builds(
                                "{}{:02d}:{:02d}".format, st.sampled_from("+-"), st.integers(0, 26), st.integers(0, 61)
                            ),
                        ),
                    ),
                ),
                max_size=2,
            ),
            max_size=2,
        ),
    },
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(props=SOAK_PROPS)
def test_promote_and_the_gate_agree_on_every_soak_config(tmp_path, pack, props):
    """Hundreds of ami-soaked configs (soakDays of every type, times with impossible months, days, hours and zone
    offsets): promote's reading refuses exactly what the real pack refuses when it is configured, and what it
    takes it reads as the gate does (the gate's ``Evidence``)."""
    from mixed_os_racks.pack.soak import Evidence
    from mixed_os_racks.cli.evidence import configured_soak

    config = tmp_path / "config.json"
    config.write_text(json.dumps({SOAKED: props}))
    refused = pack_refuses(pack, {SOAKED: props}) if props else False
    try:
        level, read = configured_soak(config)
    except PolicyPackError as exc:
        assert refused, f"promote refused what the pack takes: {exc}"
        return
    assert not refused, f"promote took what the pack refuses: {props}"
    if "ranSince" in read:
        Evidence.of(read)  # what is taken is read, never a traceback


# ---- promote writes nothing the preview refuses ------------------------------------------------------------


def test_a_canary_into_a_pool_of_weight_100_is_not_written(tmp_path, amis, project, capsys):
    stack = project / "Pulumi.prod.yaml"
    stack.write_text(stack.read_text().replace("      weight: 10\n", "      weight: 100\n", 1))
    before = stack.read_bytes()
    trial = export(tmp_path, "staging", with_gpu("staging", {"canary_ami_id": NEW_AMI}), amis, 8.04)
    assert promote(project, trial, "--canary", "--amis", str(amis)) == 1
    out = capsys.readouterr().out
    assert (
        f"not promoted: karpenter nodepool 'gpu': {POOLS_KEY}[0].canary_ami_id: (none) -> {NEW_AMI} would be refused:"
    ) in out and "weight 100 leaves its canary no higher weight" in out, out
    assert "nothing written" in out
    assert stack.read_bytes() == before


def test_a_canary_beside_a_lane_named_as_it_is_not_written(tmp_path, amis, project, capsys):
    stack = project / "Pulumi.prod.yaml"
    doc = yaml.safe_load(stack.read_text())
    pools = doc["config"][POOLS_KEY]
    doc["config"][POOLS_KEY] = pools + [{**pools[0], "name": "gpu-canary", "ami_id": GPU_AMI}]
    stack.write_text(yaml.safe_dump(doc))
    before = stack.read_bytes()
    trial = export(tmp_path, "staging", with_gpu("staging", {"canary_ami_id": NEW_AMI}), amis, 8.04)
    assert promote(project, trial, "--canary", "--lane", "gpu", "--amis", str(amis)) == 1
    out = capsys.readouterr().out
    assert "would be refused:" in out and "gpu-canary" in out, out
    assert stack.read_bytes() == before


def test_a_bottlerocket_image_is_never_written_into_an_al2023_lane(tmp_path, amis, project, capsys):
    # staging's lane runs the Bottlerocket NVIDIA image (a state another program wrote: the rack pins AL2023 only)
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 30)
    staging.write_text(staging.read_text().replace(NEW_AMI, BOTTLEROCKET_AMI))
    before = (project / "Pulumi.prod.yaml").read_bytes()
    assert promote(project, staging, "--lane", "gpu", "--amis", str(amis)) == 1
    out = capsys.readouterr().out
    assert (
        f"not promoted: karpenter nodepool 'gpu': pinned AMI {BOTTLEROCKET_AMI} "
        f"('bottlerocket-aws-k8s-1.34-nvidia-x86_64-v1.30.0-abcdef12') is bottlerocket, not Amazon Linux 2023"
    ) in out
    assert (project / "Pulumi.prod.yaml").read_bytes() == before


def test_an_image_whose_root_snapshot_is_larger_than_the_lanes_disk_is_never_written(tmp_path, amis, project, capsys):
    """staging's lane has a 300 GiB disk for it; prod's has 200: EC2 would refuse the volume, so the preview does."""
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": LARGE_ROOT_AMI, "disk": 300}), amis, 30)
    before = (project / "Pulumi.prod.yaml").read_bytes()
    assert promote(project, staging, "--lane", "gpu", "--amis", str(amis)) == 1
    out = capsys.readouterr().out
    assert (
        f"not promoted: karpenter nodepool 'gpu': disk 200 GiB is smaller than the root snapshot of {LARGE_ROOT_AMI} "
        f"(300 GiB); give it a disk of 300 GiB or more"
    ) in out, out
    assert (project / "Pulumi.prod.yaml").read_bytes() == before


def test_a_stack_file_with_secure_values_is_promoted_and_keeps_them(tmp_path, amis, project, soaked_staging, capsys):
    """Prod's stack file holds secrets (``pulumi config set --secret``): promote needs none of them in plain text,
    and writes the file with each ciphertext as it was."""
    stack = project / "Pulumi.prod.yaml"
    secrets = (
        "  app:dbPassword:\n    secure: v1:5Cj9Yq3c0+Tt7bXk:Zm9vYmFyYmF6\n  app:apiKey:\n    secure: AAABAKx7mFq1\n"
    )
    text = stack.read_text().replace("\nconfig:\n", "\nconfig:\n" + secrets, 1)
    stack.write_text(text)
    assert promote(project, soaked_staging, "--amis", str(amis)) == 0
    after = stack.read_text()
    assert after == text.replace(f"ami_id: {GPU_AMI}", f"ami_id: {NEW_AMI}")
    assert "secure: v1:5Cj9Yq3c0+Tt7bXk:Zm9vYmFyYmF6" in after


# ---- files that are no files ------------------------------------------------------------------------------


def test_promote_into_a_fifo_is_refused_at_once(tmp_path, project, soaked_staging, capsys):
    stack = project / "Pulumi.prod.yaml"
    stack.unlink()
    os.mkfifo(stack)
    started = time.monotonic()
    assert promote(project, soaked_staging) == 2
    assert time.monotonic() - started < 30
    assert (
        f"error: {stack}: is not a regular file (a named pipe); promote edits a stack file in place"
        in capsys.readouterr().err
    )


def test_a_fifo_no_one_writes_to_ends_the_wait_with_an_error(tmp_path, project, monkeypatch, capsys):
    monkeypatch.setattr(inputs, "PIPE_WAIT_S", 0.3)
    fifo = tmp_path / "staging.json"
    os.mkfifo(fifo)
    assert promote(project, fifo) == 2
    assert f"error: {fifo}: is a pipe no one wrote to for 0.3 s (a FIFO with no writer?)" in capsys.readouterr().err


def test_a_pipe_with_a_writer_is_read(tmp_path, project, soaked_staging, capsys):
    """``--from <(pulumi stack export)``: a pipe is read to its end, however slowly its writer starts."""
    fifo = tmp_path / "staging.json"
    os.mkfifo(fifo)

    def writer() -> None:
        time.sleep(0.5)
        with open(fifo, "wb") as out:
            out.write(soaked_staging.read_bytes())

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert promote(project, fifo) == 0
    finally:
        thread.join()
    assert f"ami_id: {NEW_AMI}" in (project / "Pulumi.prod.yaml").read_text()


def test_an_input_past_any_size_is_refused_without_reading_it(tmp_path, project, monkeypatch, capsys):
    monkeypatch.setattr(inputs, "MAX_FILE_BYTES", 1 << 20)
    big = tmp_path / "staging.json"
    with open(big, "wb") as out:  # sparse: no disk is used
        out.truncate(1 << 30)
    assert promote(project, big) == 2
    assert f"error: {big}: is larger than 1 MiB, more than any input file could need" in capsys.readouterr().err


def test_output_flags_never_wait_on_a_fifo(tmp_path, soaked_staging, capsys):
    """``--json`` into a FIFO no one reads would wait for a reader for ever; ``soak`` writes its entry into a file,
    never into a FIFO."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    assert main(["guard", str(soaked_staging), "--json", str(fifo)]) == 2
    assert f"error: --json {fifo}: is a named pipe no one is reading" in capsys.readouterr().err
    assert main(["soak", str(soaked_staging), "--policy-pack-config", str(fifo)]) == 2
    assert f"error: --policy-pack-config {fifo}: is a named pipe no one is reading" in capsys.readouterr().err


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_given_as_a_pack_config_is_refused(tmp_path, project, soaked_staging, capsys, device):
    assert promote(project, soaked_staging, "--policy-pack-config", device) == 2
    assert f"{device}: is not a regular file (a device or a socket); give a file" in capsys.readouterr().err


# ---- soak rewrites only its own entry ----------------------------------------------------------------------


def test_soak_writes_its_entry_and_leaves_the_rest_byte_for_byte(tmp_path, soaked_staging, capsys):
    config = tmp_path / "config.json"
    text = (
        '{\n    "all": "advisory",\n    "lane-cost-ceiling": {"maxHourlyUsd": 40,   "prices": {"g5.xlarge": 1.006}},\n'
        '    "ami-soaked": {"enforcementLevel": "mandatory", "soakDays": 3, "ranSince": {}},\n'
        '    "pinned-ami-age": {\n        "maxAgeDays": 60\n    }\n}\n'
    )
    config.write_text(text)
    assert main(["soak", str(soaked_staging), "--policy-pack-config", str(config)]) == 0
    after = config.read_text()
    start = text.index('{"enforcementLevel"')
    end = text.index('},\n    "pinned-ami-age"') + 1
    assert after[:start] == text[:start] and after.endswith(text[end:])  # every other byte as it was
    entry = json.loads(after)[SOAKED]
    assert (entry["enforcementLevel"], entry["soakDays"]) == ("mandatory", 3)  # its own settings kept
    assert NEW_AMI in entry["ranSince"]["gpu"]
    assert read_config_file(config)[SOAKED][0] == "mandatory"


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(max_size=6),
    st.floats(allow_nan=False, allow_infinity=False),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    doc=st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=5),
    indent=st.sampled_from([None, 0, 1, 2, 4, "\t"]),
    value=st.dictionaries(st.sampled_from(["soakDays", "ranSince", "running"]), JSON_VALUES, max_size=3),
    had=st.booleans(),
)
def test_an_entry_is_written_into_any_config_keeping_the_rest(doc, indent, value, had):
    """``with_entry`` on any JSON object however it is laid out: the result reads as the object with the entry set
    (added last when it had none), and the text before the entry is the file's own."""
    doc = {k: v for k, v in doc.items() if k != SOAKED}
    if had:
        doc[SOAKED] = {"old": True}
    text = json.dumps(doc, indent=indent)
    written = with_entry(text, SOAKED, value)
    assert json.loads(written) == {**doc, SOAKED: value}
    if not had and doc:
        assert written.startswith(text.rstrip().removesuffix("}").rstrip())


def test_a_policy_given_twice_is_not_guessed_at(tmp_path):
    with pytest.raises(PolicyPackError, match="gives ami-soaked 2 times; keep one"):
        with_entry('{"ami-soaked": {}, "x": 1, "ami-soaked": {"soakDays": 1}}', SOAKED, {})


# ---- analyze of a stack's own state ------------------------------------------------------------------------


def test_analyze_of_prods_own_export_never_refuses_the_amis_it_runs(tmp_path, amis, capsys):
    """A soak config written without ``--state`` lists nothing as running; the analyzed state's AMIs are running by
    definition, so prod's own export passes the gate it would fail by staging's evidence alone."""
    prod = export(tmp_path, "prod", stack_config("prod"), amis, 30)
    staging = export(tmp_path, "staging", with_gpu("staging", {"ami_id": NEW_AMI}), amis, 8.04)  # not prod's AMI
    config = tmp_path / "config.json"
    assert main(["soak", str(staging), "--policy-pack-config", str(config)]) == 0
    assert json.loads(config.read_text())[SOAKED]["running"] == []
    capsys.readouterr()
    assert main(["analyze", "--state", str(prod), "--cwd", str(REPO), "--policy-pack-config", str(config)]) == 0
    out = capsys.readouterr().out
    assert SOAKED not in out.split("Policy packs")[0], out


# ---- the pack's own config ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "said"),
    [
        (
            {CEILING: {"prices": {"G5.XLARGE": 1.006}}},
            f"{CEILING}: prices: invalid instance type 'G5.XLARGE' (EC2 writes it in lower case: 'g5.xlarge')",
        ),
        (
            {CEILING: {"prices": {"g5.large": 0.5}}},
            f"{CEILING}: prices: 'g5.large' is no instance type (did you mean 'g5.xlarge'? g5 comes in xlarge, "
            f"2xlarge, "
            "4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, 48xlarge)",
        ),
        (
            {CEILING: {"prices": {"gpu": 1}}},
            f"{CEILING}: prices: invalid instance type 'gpu' (must look like g4dn.xlarge)",
        ),
        (
            {SOAKED: {"ranSince": {"gpu": {GPU_AMI: "2026-12-01T10:00:00+25:00"}}}},
            f"{SOAKED}: ranSince.gpu.{GPU_AMI}: '2026-12-01T10:00:00+25:00' is no RFC 3339 time: zone offset +25:00 is "
            f"no "
            "offset a clock has (-23:59 to +23:59)",
        ),
        (
            {SOAKED: {"ranSince": {"gpu": {GPU_AMI: "2026-02-30T10:00:00Z"}}}},
            (
                f"{SOAKED}: ranSince.gpu.{GPU_AMI}: '2026-02-30T10:00:00Z' is no RFC 3339 time: "
                f"day 30 is no day of 2026-02"
            ),
        ),
    ],
)
def test_a_pack_config_no_policy_could_read_is_refused_when_the_pack_is_configured(pack, config, said):
    """A price for ``G5.XLARGE`` or ``g5.large`` would never be looked up (EC2 and Karpenter name types in lower case,
    and g5 starts at xlarge), and a time at ``+25:00`` would read as an AMI whose soak cannot be proven: each is an
    error of the config, named by its path, not a silent no-op or a misleading verdict."""
    with pytest.raises(PolicyPackError) as refused:
        pack.configure(parse_config(config), ProgramRun("p", "s", [], {}))
    assert str(refused.value) == f"invalid policy pack config for 'mixed-os-racks':\n  {said}"


def test_a_pack_config_with_a_byte_order_mark_is_an_error_as_the_cli_has_it(tmp_path, capsys):
    """Pulumi's CLI reads the file with Go's encoding/json (pulumi/pulumi ``pkg/resource/analyzer/config.go``,
    ``parsePolicyPackConfig``), which refuses a byte-order mark: exit 2 with what to do, before any pack runs."""
    config = tmp_path / "config.json"
    config.write_bytes(b"\xef\xbb\xbf" + json.dumps({"all": "mandatory"}).encode())
    code = main(["preview", "--stack", "dev", "--cwd", str(REPO), "--policy-pack-config", str(config)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        f"error: policy pack config {config}: starts with a byte-order mark, which the Pulumi CLI's JSON "
        f"reader refuses; save it as UTF-8 without one\n"
    )


TYPE_NAMES = st.one_of(
    st.sampled_from(
        [
            "g5.xlarge",
            "G5.XLARGE",
            "g5.Xlarge",
            "g5.large",
            "g5.nano",
            "p5.48xlarge",
            "m7i.metal-24xl",
            "zz9.xlarge",
            "g5",
            ".xlarge",
            "g5.",
            "c7i-flex.large",
            "t3.micro",
            "T3.MICRO",
            "g5.xlarge ",
            "",
        ]
    ),
    st.builds(
        "{}.{}".format,
        st.text("abcgmptz0123456789-", min_size=1, max_size=5),
        st.sampled_from(["nano", "large", "xlarge", "2xlarge", "metal", "48xlarge", "XLARGE"]),
    ),
    st.text(max_size=10),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(TYPE_NAMES, min_size=1, max_size=3, unique=True))
def test_prices_the_pack_refuses_are_the_ones_the_catalog_refuses(tmp_path, pack, names):
    """The same price list, as ``lane-cost-ceiling``'s ``prices`` and as the AMI catalog's ``prices:`` (which the
    offline preview gives the pack beneath the user's config): both refuse exactly the names that are no instance
    type, and neither ever fails otherwise."""
    from mixed_os_racks.offline.catalog import Catalog, CatalogError

    prices = {name: 1.5 for name in names}
    refused = pack_refuses(pack, {CEILING: {"prices": prices}})
    amis = tmp_path / "amis.yaml"
    amis.write_text(yaml.safe_dump({"prices": prices}))
    try:
        Catalog.load(amis)
    except CatalogError as exc:
        assert refused, f"the catalog refused what the pack takes: {exc}"
        return
    assert not refused, f"the pack refused what the catalog takes: {prices}"


@pytest.fixture(scope="module")
def staging_with_canary(tmp_path_factory, amis) -> Path:
    """staging's gpu pool on NEW_AMI, its canary on NEWER_AMI, both for 8 days."""
    from promotion_helpers import NEWER_AMI

    values = with_gpu("staging", {"ami_id": NEW_AMI, "canary_ami_id": NEWER_AMI})
    return export(tmp_path_factory.mktemp("trial"), "staging", values, amis, 8.04)


GPU_POOL_CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "weight": st.sampled_from([1, 50, 99, 100]),
        "canary_nodes": st.sampled_from([None, 1, 3]),
        "canary_ami_id": st.sampled_from([None, GPU_AMI, NEW_AMI]),
        "disk": st.sampled_from([20, 200, 400]),
    },
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    changes=GPU_POOL_CHANGES,
    beside=st.sampled_from([None, "gpu-canary", "gpu-2"]),
    canary=st.booleans(),
    secret=st.booleans(),
)
def test_what_promote_writes_is_a_config_the_preview_takes(
    tmp_path_factory, amis, staging_with_canary, changes, beside, canary, secret
):
    """Generated prod stack files (weights, canaries, disks, a lane beside the pool, secrets) and both kinds of
    promotion: promote exits 0, 1 or 2, never with a traceback; on 2 it writes nothing; and whatever it writes is a
    config the preview's own reading takes."""
    import contextlib
    import io

    from mixed_os_racks.config.keys import NAMESPACE, item_keys
    from mixed_os_racks.config.params import RackParams, parse_rack_params
    from mixed_os_racks.config.stackconfig import rack_values
    from mixed_os_racks.offline.stackfile import Secret, model_shape, read_stack_file

    folder = tmp_path_factory.mktemp("prod")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, folder / name)
    values = stack_config("prod")
    pool = {**values[POOLS_KEY][0], **changes}
    values[POOLS_KEY] = [pool] + ([{**pool, "name": beside, "canary_ami_id": None}] if beside else [])
    stack = folder / "Pulumi.prod.yaml"
    text = yaml.safe_dump({"config": values})
    if secret:
        text = text.replace("config:\n", "config:\n  app:token:\n    secure: v1:AAAAbbbbCCCC\n", 1)
    stack.write_text(text)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = promote(folder, staging_with_canary, "--amis", str(amis), *(["--canary"] if canary else []))
    assert code in (0, 1, 2), err.getvalue()
    assert all(line.startswith(("error: ", "warning: ", "  ")) for line in err.getvalue().splitlines()), err.getvalue()
    after = stack.read_text()
    event(f"exit {code}, {'unchanged' if after == text else 'written'}")
    if code == 2 or after == text:
        assert after == text
        return
    assert ("secure: v1:AAAAbbbbCCCC" in after) == secret
    config = read_stack_file(stack, "mixed-os-racks", {NAMESPACE: model_shape(RackParams, item_keys())}, secrets=True)
    parse_rack_params(rack_values({k: v for k, v in config.items() if not isinstance(v, Secret)}), "rack", "us-east-1")
