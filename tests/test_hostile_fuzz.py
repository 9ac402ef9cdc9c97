"""Generated stack files through the CLI entry point, in-process: exit 0, 1 or 2, never a traceback,
and on exit 2 an ``error:`` line naming a key or the file.

The documents mix the rack's real parameters (from ``RackParams``, the pool and node-group keys from
``params``) with keys that look like them, and values that YAML reads in surprising ways (``no``,
``1:30``, dates, tags, aliases, NaN, deep nesting, broken syntax), rendered raw so the YAML reader
sees them as a user would write them; and byte-level damage to a real stack file. Error output is
ASCII: a character a reader cannot see or tell apart (a zero-width space, a Cyrillic letter) is shown
escaped.

A second probe goes over every current ``rack:`` key with the values of the second hostile round
(``null``, ``k=v`` lists whose keys repeat, ids with invisible or confusable characters, CIDRs that
are private or have host bits set, JSON objects with a key twice): each config is refused with lines
that name their key, or kept exactly as written.
"""

from __future__ import annotations

import contextlib
import io
import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mixed_os_racks import parse_services
from mixed_os_racks.cli import main
from mixed_os_racks.config.keys import NODE_GROUP, POOL
from typing import Any

from mixed_os_racks.config.params import RackParams
from mixed_os_racks.config.stackconfig import parse_stack_config
from mixed_os_racks.errors import ConfigError

from conftest import REPO

RAW_VALUES = [
    "no",
    "yes",
    "on",
    "off",
    "true",
    "False",
    "~",
    "null",
    "",
    "1:30",
    "190:20:30",
    "2024-01-01",
    "2024-13-01",
    "2001-12-14t21:59:43.10-05:00",
    "0o17",
    "017",
    "08",
    "0x32",
    "1_000",
    "1e3",
    "1.5",
    "-5",
    "0",
    "50",
    "99999999999999999999999",
    ".nan",
    "-.inf",
    ".inf",
    "!!binary aGVsbG8=",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "!custom x",
    "!!str 123",
    "!!int '7'",
    "!!bool maybe",
    "!!int ''",
    "!!float ''",
    "&x [a, *x]",
    "&y {k: *y}",
    "[",
    "{",
    "]",
    "'",
    '"',
    "- a",
    "? a",
    "*nope",
    "|\n    block\n    text",
    ">-\n    folded",
    "bottlerocket",
    "al2023",
    "Bottlerocket",
    "g5,g6",
    "m6i,m7i",
    "c7i",
    "xlarge",
    "on-demand,spot",
    "arm64",
    "30s",
    "5m",
    "720h",
    "Never",
    "10%",
    "gp3",
    "ami-0a1b2c3d4e5f60718",
    "ami-0123456789abcdef0",
    "ami-XYZ",
    "al2023@v20240101",
    "k=v,k2=v2",
    "k=v=x",
    "nvidia.com/gpu=true:NoSchedule",
    "key:Bogus",
    "4.8.2",
    "[1, [2, [3]]]",
    "{a: {b: {c: d}}}",
    "[" * 60 + "]" * 60,
    '"g\\u200bpu"',
    '"gp\\u0430"',
    '"a\\u2028b"',
    "{secure: v1:AAAA}",
    "10.0.0.0/8",
    "34.201.7.9/16",
    "0.0.0.0/0",
    "team=a,team=b",
    "k=a,b",
    "create",
    "existing",
    '"[{\\"name\\": \\"gpu\\"}]"',
    '"[[[[[[[[[[]]]]]]]]]]"',
    '"\\0"',
    '"\\ud800"',
    "'it''s'",
    "{name: gpu, instance_families: g5}",
    "[{name: gpu}, {name: gpu}]",
]
ODD_KEYS = [
    "Rack:karpenter_node_os",
    "karpenter_node_os",
    "cluster_name",
    "rack:Cluster_Name",
    "RACK:x",
    "rack:additional_karpenter_nodepools_config[0].name",
    "rack:karpenter_node_oss",
    "1",
    "~",
    "true",
    "a:b:c",
    "aws:config:region",
    '"rack:cluster_name"',
    "<<",
    "rack:",
    ":x",
    "other:blob",
    "aws:region",
    "'k\\tey'",
]

raw = st.sampled_from(RAW_VALUES)
text = st.text(max_size=16).map(json.dumps)  # any text, as a double-quoted YAML scalar
number = st.integers(min_value=-(2**70), max_value=2**70).map(str)
scalar = st.one_of(raw, raw, text, number)


def flow_mapping(keys: list[str]) -> st.SearchStrategy[str]:
    entries = st.dictionaries(st.sampled_from(keys + ["bogus", "Name"]), scalar, max_size=6)
    return entries.map(lambda d: "{" + ", ".join(f"{k}: {v}" for k, v in d.items()) + "}")


def block_list(keys: list[str]) -> st.SearchStrategy[str]:
    return st.lists(flow_mapping(keys), max_size=3).map(
        lambda items: "".join(f"\n    - {item}" for item in items) or " []"
    )


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
    lines = [
        "config:",
        "  aws:region: us-east-1",
        "  rack:cluster_name: fuzz",
        f"  rack:karpenter_node_os: {draw(st.sampled_from(['al2023', 'bottlerocket', 'no', 'AL2023']))}",
    ]
    if draw(st.booleans()):
        disk = draw(st.integers(min_value=1, max_value=300))
        family = draw(st.sampled_from(["g5", "m6i", "'g5,m6i'", "yes"]))
        lines.append(
            f"  rack:additional_karpenter_nodepools_config:\n    - {{name: gpu, instance_families: {family}, "
            f"ami_id: ami-0a1b2c3d4e5f60718, disk: {disk}}}"
        )
    if draw(st.booleans()):
        lines.append(
            f"  rack:additional_node_groups_config:\n    - "
            f"{{type: g4dn.xlarge, ami_id: {draw(st.sampled_from(['ami-0a1b2c3d4e5f60718', 'null']))}}}"
        )
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
        junk = draw(
            st.binary(max_size=3) | st.sampled_from([b":", b"-", b" ", b"\n", b"\t", b"&a", b"*a", b"!!", b"{", b"'"])
        )
        cut = draw(st.integers(0, 2))
        data[at : at + cut] = junk
    return bytes(data)


def names_a_key_or_file(line: str, path: str) -> bool:
    """``error: <file>...``, ``error: <ns>:<key>...``, ``error: rack: ...``, an argument, or a lane."""
    body = line.removeprefix("error: ")
    return (
        path in body
        or re.match(r"[^\s:]*:[^\s]*[: ]", body) is not None
        or re.match(r"'[^']*': ", body) is not None  # a key with spaces in it, quoted
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
        assert err.isascii(), err  # every character a reader cannot see or tell apart is shown escaped
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


# ---- every current key, with the values of the second round: no traceback, no silent change ---------------------

INVISIBLE = st.sampled_from(["\u200b", "\u0430", "\u2028", "\ufeff", "\u00a0", "\u202e", "\t"])
WORDS = st.sampled_from(["team", "tier", "gpu", "a", "web", "x.y/z", "k8s.io/x", "null", ""])
CIDRS = st.sampled_from(
    [
        "0.0.0.0/0",
        "203.0.113.0/24",
        "34.201.0.0/16",
        "34.201.7.9/16",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.1/32",
        "224.0.0.0/4",
        "::/0",
        "300.1.1.1/8",
        "1.2.3.4",
    ]
)


@st.composite
def hostile_text(draw: st.DrawFn) -> str:
    """A word, maybe with a character a reader cannot see or tell apart put inside it."""
    word = draw(WORDS)
    if word and draw(st.booleans()):
        at = draw(st.integers(0, len(word)))
        word = word[:at] + draw(INVISIBLE) + word[at:]
    return word


@st.composite
def kv_text(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    """``k=v,k2=v2`` with keys that may repeat, and the pairs it was written from."""
    pairs = draw(st.lists(st.tuples(hostile_text(), hostile_text()), max_size=4))
    return ",".join(f"{k}={v}" for k, v in pairs), pairs


def config_value(draw: st.DrawFn, key: str) -> Any:
    kind = draw(st.sampled_from(["null", "text", "kv", "cidrs", "number", "json"]))
    if kind == "null":
        return "null"
    if kind == "kv":
        return draw(kv_text())[0]
    if kind == "cidrs":
        return ",".join(draw(st.lists(CIDRS, min_size=0, max_size=3)))
    if kind == "number":
        return draw(st.sampled_from(["0", "1", "-1", "1.5", "41", "true"]))
    if kind == "json":
        return draw(
            st.sampled_from(
                ['[{"name": "gpu", "name": "x"}]', '{"a": 1, "a": 2}', "[]", "[null]", '[{"labels": "a=1,a=2"}]']
            )
        )
    return draw(hostile_text())


@st.composite
def stack_configs(draw: st.DrawFn) -> dict[str, Any]:
    config: dict[str, Any] = {
        "aws:region": "us-east-1",
        "rack:cluster_name": draw(st.sampled_from(["c", "c", "c", "null", "r\u0430ck"])),
    }
    if draw(st.booleans()):
        config.update(
            {
                "rack:cluster_mode": "create",
                "rack:vpc_id": "vpc-0a1b2c3d4e5f60718",
                "rack:private_subnets_ids": "subnet-0a1b2c3d4e5f60711,subnet-0a1b2c3d4e5f60712",
            }
        )
    for key in draw(st.lists(st.sampled_from(sorted(RackParams.model_fields)), max_size=3, unique=True)):
        config[f"rack:{key}"] = config_value(draw, key)
    if draw(st.booleans()):  # a plain k=v list, often with a key repeated: kept whole, or refused
        pairs = draw(
            st.lists(
                st.tuples(st.sampled_from(["team", "tier", "env"]), st.sampled_from(["a", "b", "x-1"])),
                min_size=1,
                max_size=4,
            )
        )
        config[f"rack:{draw(st.sampled_from(KV_KEYS))}"] = ",".join(f"{k}={v}" for k, v in pairs)
    return config


KV_KEYS = ("tags", "karpenter_node_labels")


@settings(max_examples=300, **SETTINGS)
@given(config=stack_configs())
def test_every_key_refuses_or_keeps_what_was_written(config):
    """Over every current key: a ``ConfigError`` whose lines each name a ``rack:``/``aws:`` key on one ASCII line,
    or a rack that holds exactly what was written (no pair of a ``k=v`` list dropped, no ``null`` taken as text)."""
    try:
        params = parse_stack_config_params(config)
    except ConfigError as exc:
        for line in str(exc).split("\n"):
            assert re.match(r"(rack|aws):\S*[: ]", line), line
            assert line.isascii() and line.isprintable(), line
        return
    for key, value in config.items():
        name = key.removeprefix("rack:")
        assert value != "null", f"{key}: null was taken as a value"
        if name in KV_KEYS and isinstance(value, str):
            pairs = [p.partition("=") for p in value.split(",") if p.strip()]
            assert len(getattr(params, name)) == len(pairs), f"{key}: a pair was dropped from {value!r}"
        if name == "cluster_name":
            assert params.cluster_name == value


def parse_stack_config_params(config: dict[str, Any]) -> RackParams:
    """The ``RackParams`` of a stack config (``parse_stack_config``'s checks, then the parameters themselves)."""
    from mixed_os_racks.config.params import parse_rack_params

    parse_stack_config(config)
    return parse_rack_params({k.removeprefix("rack:"): v for k, v in config.items() if k.startswith("rack:")})


SERVICE_FIELDS = {
    "name": st.one_of(hostile_text(), st.just("svc")),
    "image": st.sampled_from(["nginx:1.27", "nginx 1.27", "", "null"]),
    "port": st.sampled_from([80, 0, 70000, "80", "eighty", True, 1.5]),
    "scale": st.one_of(
        st.sampled_from([2, "2-6", "6-2", [2], None, 1.5]),
        st.fixed_dictionaries(
            {},
            optional={
                "count": st.sampled_from([1, "2-6", "x"]),
                "cpu": st.sampled_from([250, 0, True]),
                "gpu": st.sampled_from([1, 1.5, 2.0, [1], {"count": 1}, {"count": 1.5}, {"vendor": "intel"}, True]),
                "targets": st.sampled_from([{"cpu": 150}, {"cpu": 0}, {"cpu": 1001}, 80, {"memory": 50}]),
            },
        ),
    ),
    "health": st.sampled_from(["/health", "health", [1], {"path": "/x", "interval": 0}]),
    "nodeSelectorLabels": st.dictionaries(hostile_text(), hostile_text(), max_size=2),
    "environment": st.sampled_from([["A=1", "A=2"], ["A"], {"A": "1"}, "A=1"]),
}


@settings(max_examples=150, **SETTINGS)
@given(
    services=st.dictionaries(
        st.one_of(hostile_text(), st.just("web")),
        st.fixed_dictionaries(
            {
                "image": st.one_of(st.just("nginx:1.27"), SERVICE_FIELDS["image"]),
                "port": st.one_of(st.just(80), SERVICE_FIELDS["port"]),
            },
            optional={k: v for k, v in SERVICE_FIELDS.items() if k not in ("image", "port")},
        ),
        max_size=3,
    ),
    as_json=st.booleans(),
)
def test_every_service_field_refuses_or_keeps_what_was_written(services, as_json):
    """``app:services``: refused with lines that each name ``app:services.<name>...`` on one ASCII line,
    or every service kept under its key, with the name its key gives."""
    try:
        specs = parse_services(json.dumps(services) if as_json else services)
    except ConfigError as exc:
        for line in str(exc).split("\n"):
            assert line.startswith("app:services"), line
            assert line.isascii() and line.isprintable(), line
        return
    assert list(specs) == list(services)
    for name, spec in specs.items():
        assert spec.name == name
        assert services[name].get("name", name) == name, f"{name}: name {services[name]['name']!r} was dropped"
        assert spec.node_selector_labels == services[name].get("nodeSelectorLabels", {})
