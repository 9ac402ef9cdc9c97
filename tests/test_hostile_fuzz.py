"""Generated stack files through the CLI entry point, in-process: exit 0, 1 or 2, never a traceback,
and on exit 2 an ``error:`` line naming a key or the file.

The documents mix the rack's real parameters (from ``RackParams``, the pool and node-group keys from
``params``) with keys that look like them, and values that YAML reads in surprising ways (``no``,
``1:30``, dates, tags, aliases, NaN, deep nesting, broken syntax), rendered raw so the YAML reader
sees them as a user would write them; and byte-level damage to a real stack file.
"""

from __future__ import annotations

import contextlib
import io
import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mixed_os_racks.cli import main
from mixed_os_racks.config.keys import NODE_GROUP, POOL
from mixed_os_racks.config.params import RackParams

from conftest import REPO

RAW_VALUES = [
    "no", "yes", "on", "off", "true", "False", "~", "null", "", "1:30", "190:20:30", "2024-01-01", "2024-13-01",
    "2001-12-14t21:59:43.10-05:00", "0o17", "017", "08", "0x32", "1_000", "1e3", "1.5", "-5", "0", "50", "99999999999999999999999",
    ".nan", "-.inf", ".inf", "!!binary aGVsbG8=", "!!set {a, b}", "!!omap [a: 1]", "!custom x", "!!str 123", "!!int '7'",
    "&x [a, *x]", "&y {k: *y}", "[", "{", "]", "'", '"', "- a", "? a", "*nope", "|\n    block\n    text", ">-\n    folded",
    "bottlerocket", "al2023", "Bottlerocket", "g5,g6", "m6i,m7i", "c7i", "xlarge", "on-demand,spot", "arm64", "30s", "5m",
    "720h", "Never", "10%", "gp3", "ami-0a1b2c3d4e5f60718", "ami-0123456789abcdef0", "ami-XYZ", "al2023@v20240101",
    "k=v,k2=v2", "k=v=x", "nvidia.com/gpu=true:NoSchedule", "key:Bogus", "4.8.2", "[1, [2, [3]]]",
    "{a: {b: {c: d}}}", "[" * 60 + "]" * 60, '"[{\\"name\\": \\"gpu\\"}]"', '"[[[[[[[[[[]]]]]]]]]]"', "\"\\0\"",
    '"\\ud800"', "'it''s'", "{name: gpu, instance_families: g5}", "[{name: gpu}, {name: gpu}]",
]
ODD_KEYS = [
    "Rack:karpenter_node_os", "karpenter_node_os", "cluster_name", "rack:Cluster_Name", "RACK:x",
    "rack:additional_karpenter_nodepools_config[0].name", "rack:karpenter_node_oss", "1", "~", "true", "a:b:c",
    "aws:config:region", '"rack:cluster_name"', "<<", "rack:", ":x", "other:blob", "aws:region", "'k\\tey'",
]

raw = st.sampled_from(RAW_VALUES)
text = st.text(max_size=16).map(json.dumps)  # any text, as a double-quoted YAML scalar
number = st.integers(min_value=-(2**70), max_value=2**70).map(str)
scalar = st.one_of(raw, raw, text, number)


def flow_mapping(keys: list[str]) -> st.SearchStrategy[str]:
    entries = st.dictionaries(st.sampled_from(keys + ["bogus", "Name"]), scalar, max_size=6)
    return entries.map(lambda d: "{" + ", ".join(f"{k}: {v}" for k, v in d.items()) + "}")


def block_list(keys: list[str]) -> st.SearchStrategy[str]:
    return st.lists(flow_mapping(keys), max_size=3).map(lambda items: "".join(f"\n    - {item}" for item in items) or " []")


value = st.one_of(scalar, scalar, block_list(list(POOL.item_keys)), block_list(list(NODE_GROUP.item_keys)))
key = st.one_of(st.sampled_from([f"rack:{name}" for name in RackParams.model_fields]), st.sampled_from(ODD_KEYS))


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = ["config:", "  aws:region: us-east-1"]
    if draw(st.integers(0, 4)):
        lines.append("  rack:cluster_name: fuzz")
    for k, v in draw(st.lists(st.tuples(key, value), max_size=5)):
        lines.append(f"  {k}: {v}")
    return "\n".join(lines) + "\n"


@st.composite
def rack_documents(draw: st.DrawFn) -> str:
    """Mostly sensible racks (so the pack gets to judge them), with one generated value among them."""
    lines = ["config:", "  aws:region: us-east-1", "  rack:cluster_name: fuzz",
             f"  rack:karpenter_node_os: {draw(st.sampled_from(['al2023', 'bottlerocket', 'no', 'AL2023']))}"]
    if draw(st.booleans()):
        disk = draw(st.integers(min_value=1, max_value=300))
        family = draw(st.sampled_from(["g5", "m6i", "'g5,m6i'", "yes"]))
        lines.append(f"  rack:additional_karpenter_nodepools_config:\n    - {{name: gpu, instance_families: {family}, "
                     f"ami_id: ami-0a1b2c3d4e5f60718, disk: {disk}}}")
    if draw(st.booleans()):
        lines.append(f"  rack:additional_node_groups_config:\n    - {{type: g4dn.xlarge, ami_id: {draw(st.sampled_from(['ami-0a1b2c3d4e5f60718', 'null']))}}}")
    if draw(st.booleans()):
        lines.append(f"  {draw(key)}: {draw(scalar)}")
    return "\n".join(lines) + "\n"


DEV = (REPO / "Pulumi.dev.yaml").read_bytes()


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """The dev stack file with a few bytes inserted, replaced or removed."""
    data = bytearray(DEV)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        junk = draw(st.binary(max_size=3) | st.sampled_from([b":", b"-", b" ", b"\n", b"\t", b"&a", b"*a", b"!!", b"{", b"'"]))
        cut = draw(st.integers(0, 2))
        data[at:at + cut] = junk
    return bytes(data)


def names_a_key_or_file(line: str, path: str) -> bool:
    """``error: <file>...``, ``error: <ns>:<key>...``, ``error: rack: ...``, an argument, or a lane."""
    body = line.removeprefix("error: ")
    return (
        path in body
        or re.match(r"[^\s:]*:[^\s]*[: ]", body) is not None
        or body.startswith(("--", "karpenter nodepool '", "node group '", "policy pack "))
    )


def run_cli(path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["preview", "--config", str(path), "--cwd", str(REPO), *extra])
    return code, out.getvalue(), err.getvalue()


def check(path, *extra: str) -> None:
    code, out, err = run_cli(path, *extra)
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err + out and "Exception ignored" not in err, err
    if code == 2:
        errors = [line for line in err.splitlines() if line.startswith("error: ")]
        assert errors, err
        assert any(names_a_key_or_file(line, str(path)) for line in errors), err


SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@settings(max_examples=150, **SETTINGS)
@given(doc=documents())
def test_generated_stack_files(doc, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "Pulumi.fuzz.yaml"
    path.write_text(doc, encoding="utf-8")
    check(path, "--no-policy")


@settings(max_examples=60, **SETTINGS)
@given(data=damaged())
def test_damaged_stack_files(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "Pulumi.fuzz.yaml"
    path.write_bytes(data)
    check(path, "--no-policy")


@settings(max_examples=6, **SETTINGS)
@given(doc=rack_documents())
def test_generated_stack_files_with_the_pack(doc, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "Pulumi.fuzz.yaml"
    path.write_text(doc, encoding="utf-8")
    check(path)
