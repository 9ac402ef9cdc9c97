"""Hostile input in files and arguments: every error names the file and the key, and no value is
silently read differently from the way the Pulumi CLI reads it.

Facts relied on, read in pulumi/pulumi and go-yaml/yaml v3:

- the CLI reads ``Pulumi.<stack>.yaml`` with go-yaml v3 (``sdk/go/common/encoding/marshal.go``), which
  refuses a repeated mapping key (``decode.go``: ``mapping key %#v already defined at line %d``),
  resolves only ``true``/``false`` (any case style) to booleans when the target is untyped, has no
  base-60 numbers (``resolve.go``: "Base 60 floats are a bad idea, were dropped in YAML 1.2"), reads
  ``0o17`` and ``1e3`` as numbers, and refuses an alias to a value containing it;
- it hands the program each top-level scalar as text, its JSON for numbers and booleans
  (``config/object.go`` ``MarshalString``); a date becomes Go's ``time.Time.String()``;
- a key without a namespace is put in the project's (``workspace/loaders.go``
  ``stackConfigNamespacedWithProject``); ``ns:config:name`` is ``ns:name`` (``config/key.go``);
- stack names: ``tokens/stack_name.go`` ``ParseStackName`` (1-100 bytes of ``[A-Za-z0-9_.-]``, and
  its message with ``%q`` of the first bad byte and its 0-based position).
"""

from __future__ import annotations

import typing

import json
from pathlib import Path
from typing import Optional

import pytest

from mixed_os_racks.errors import ConfigError
from mixed_os_racks.offline import run_program
from mixed_os_racks.cli import main
from mixed_os_racks.config.keys import item_keys
from mixed_os_racks.offline.stackfile import model_shape, TEXT, InputFileError, read_stack_file, stack_name_problem
from mixed_os_racks.config.keys import NODE_GROUP
from mixed_os_racks.config.params import RackParams
from mixed_os_racks.spec import NodeGroupSpec, PoolSpec
from mixed_os_racks.config.stackconfig import decode_config_value, parse_stack_config
from mixed_os_racks.inputs import MAX_NESTING, nesting_depth
from mixed_os_racks.offline.policyconfig import PolicyPackError, read_config_file

from conftest import REPO, rack_config

BASE = "config:\n  aws:region: us-east-1\n  rack:cluster_name: t\n"


def stack_file(tmp_path: Path, text: str | bytes, name: str = "Pulumi.t.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def preview(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["preview", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused(capsys, tmp_path: Path, text: str | bytes, *extra: str) -> list[str]:
    """The error lines of a preview of this stack file (which must exit 2 with nothing on stdout)."""
    path = stack_file(tmp_path, text)
    code, out, err = preview(capsys, "--config", str(path), "--no-policy", *extra)
    assert (code, out) == (2, ""), err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert all(line.startswith("error: ") for line in lines), err
    return [line.replace(str(path), "FILE") for line in lines]


# ---- 6. files that are not UTF-8 text ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, says",
    [
        (BASE.encode() + b"  rack:karpenter_node_os: caf\xe9\n", "is not UTF-8 text (byte 0xe9 at line 4"),
        (BASE.encode("utf-16"), "is UTF-16 text, not UTF-8; save it as UTF-8"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "is a binary file (it has NUL bytes), not UTF-8 text"),
    ],
)
def test_a_stack_file_that_is_not_utf8_is_named(data, says, capsys, tmp_path):
    (line,) = refused(capsys, tmp_path, data)
    assert line.startswith("error: stack config FILE: ") and says in line


def test_a_utf8_byte_order_mark_is_dropped_as_the_cli_drops_it(capsys, tmp_path):
    path = stack_file(tmp_path, b"\xef\xbb\xbf" + BASE.encode())
    assert preview(capsys, "--config", str(path), "--no-policy")[0] == 0


@pytest.mark.parametrize(
    "data, says",
    [
        (b'{"all": "advis\xf6ry"}', "is not UTF-8 text"),
        ('{"all": "advisory"}'.encode("utf-16"), "is UTF-16 text, not UTF-8"),
    ],
)
def test_a_policy_config_that_is_not_utf8_is_named(data, says, capsys, tmp_path):
    config = tmp_path / "policy.json"
    config.write_bytes(data)
    code, _, err = preview(capsys, "--stack", "dev", "--policy-pack-config", str(config))
    assert code == 2
    assert err.startswith(f"error: policy pack config {config}: ") and says in err


# ---- 7. YAML values that are not text, and documents no config needs ----------------------------------------


@pytest.mark.parametrize(
    "value, says",
    [
        ("2024-01-01", 'YAML reads 2024-01-01 as a date, which the Pulumi CLI would rewrite; quote it: "2024-01-01"'),
        ("2024-13-01", 'YAML reads 2024-13-01 as a date, which the Pulumi CLI would rewrite; quote it: "2024-13-01"'),
        ("!!binary aGVsbG8=", "the YAML tag !!binary is not supported here (write the value as text)"),
        ("!!set {a, b}", "the YAML tag !!set is not supported here (write a plain mapping)"),
        ("!!omap [a: 1]", "the YAML tag !!omap is not supported here (write a plain list)"),
        ("!custom x", "the YAML tag !custom is not supported here (write the value as text)"),
        # an explicit tag on a value it does not fit: PyYAML's constructors raise KeyError, IndexError, ValueError
        ("!!bool maybe", "'maybe' is not a valid !!bool"),
        ("!<tag:yaml.org,2002:bool> ''", "'' is not a valid !!bool"),
        ("!!int ''", "'' is not a valid !!int"),
        ("!!int '-'", "'-' is not a valid !!int"),
        ("!!float ''", "'' is not a valid !!float"),
    ],
)
def test_values_that_are_not_text_name_the_key_and_the_type(value, says, capsys, tmp_path):
    (line,) = refused(capsys, tmp_path, BASE + f"  rack:karpenter_node_os: {value}\n")
    assert line == f"error: FILE:4: rack:karpenter_node_os: {says}"


def test_keys_that_are_not_text_are_named(capsys, tmp_path):
    lines = refused(capsys, tmp_path, BASE + "  1: x\n  ~: y\n  rack:karpenter_node_labels: {true: a, 5: b}\n")
    assert lines == [
        'error: FILE:4: 1: YAML reads this key as a number, not text; quote it: "1"',
        'error: FILE:5: ~: YAML reads this key as null (no value), not text; quote it: "~"',
        'error: FILE:6: rack:karpenter_node_labels.true: YAML reads this key as a boolean, not text; quote it: "true"',
        'error: FILE:6: rack:karpenter_node_labels.5: YAML reads this key as a number, not text; quote it: "5"',
    ]


def test_recursive_aliases_and_alias_bombs_are_refused(capsys, tmp_path):
    (line,) = refused(capsys, tmp_path, BASE + "  other:loop: &x [a, *x]\n")
    assert line == "error: FILE:4: other:loop[1]: an alias to a value that contains it (a recursive alias)"
    bomb = "".join(f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10) if n else 'x'}]\n" for n in range(7))
    (line,) = refused(capsys, tmp_path, bomb + BASE)
    assert line == "error: FILE: expands to more than 100,000 values through aliases"


@pytest.mark.parametrize(
    "deep", ["[" * 5000 + "]" * 5000, "\n" + "".join("  " * (n + 2) + f"k{n}:\n" for n in range(200))]
)
def test_documents_nested_deeper_than_any_config_are_refused(deep, capsys, tmp_path):
    (line,) = refused(capsys, tmp_path, BASE + f"  other:deep: {deep}\n")
    assert line.startswith("error: FILE:") and line.endswith(
        f"nested deeper than {MAX_NESTING} levels of lists and mappings (no stack config needs that)"
    )


def test_json_text_nested_thousands_deep_is_refused_with_its_key(capsys, tmp_path):
    value = json.dumps("[" * 5000 + "]" * 5000)
    (line,) = refused(capsys, tmp_path, BASE + f"  rack:additional_karpenter_nodepools_config: {value}\n")
    assert line == (
        f"error: FILE:4: rack:additional_karpenter_nodepools_config: nested deeper than {MAX_NESTING} levels "
        "of lists and mappings (no rack config needs that)"
    )


def test_nan_and_infinity_are_not_numbers_a_config_can_hold(capsys, tmp_path):
    lines = refused(capsys, tmp_path, BASE + "  rack:karpenter_node_disk: .nan\n  rack:karpenter_cpu_limit: -.inf\n")
    assert lines == [
        "error: FILE:4: rack:karpenter_node_disk: .nan is not a finite number",
        "error: FILE:5: rack:karpenter_cpu_limit: -.inf is not a finite number",
    ]


def test_an_integer_the_cli_would_round_is_refused(capsys, tmp_path):
    """go-yaml reads an integer beyond int64 and uint64 as a float (``resolve.go``), which the CLI
    then writes in exponent form: 99999999999999999999999 would reach the program as 1e+23."""
    (line,) = refused(capsys, tmp_path, BASE + "  rack:karpenter_node_disk: 99999999999999999999999\n")
    assert (
        line
        == "error: FILE:4: rack:karpenter_node_disk: 99999999999999999999999 is too large a number (the Pulumi CLI "
        "would round it)"
    )


# ---- 9. policy config numbers --------------------------------------------------------------------------------


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "1" * 5000, "1." + "0" * 100_000 + "e400"])
def test_a_policy_config_with_a_number_json_cannot_hold_is_refused_when_read(number, capsys, tmp_path):
    """Python's JSON reader accepts NaN, Infinity and 1e400 (as inf); Go's (the CLI's) does not, and the
    pack's protobuf encoder fails on them: refused on reading, naming the file and the key, the number cut short.
    An integer of more than 309 digits is past a 64-bit float's range too (Python refuses to convert one of more
    than 4300 digits, with an error of its own)."""
    config = tmp_path / "policy.json"
    config.write_text('{"disk-fits-ami-snapshot": {"amiRootSnapshotGiB": {"ami-0a1b2c3d4e5f60718": %s}}}' % number)
    code, out, err = preview(capsys, "--stack", "dev", "--policy-pack-config", str(config))
    assert (code, out) == (2, "")
    assert err == (
        f"error: policy pack config {config}: disk-fits-ami-snapshot.amiRootSnapshotGiB.ami-0a1b2c3d4e5f60718: "
        f"{number[:60]} is not a finite number (JSON has no NaN or Infinity)\n"
    )


def test_a_policy_config_nested_thousands_deep_is_refused(capsys, tmp_path):
    config = tmp_path / "policy.json"
    config.write_text('{"all": ' + "[" * 5000 + "]" * 5000 + "}")
    code, _, err = preview(capsys, "--stack", "dev", "--policy-pack-config", str(config))
    assert (
        code == 2
        and err
        == f"error: policy pack config {config}: nested deeper than {MAX_NESTING} levels (no policy config needs "
        f"that)\n"
    )


# ---- 10. --json, --cwd, --config and --stack --------------------------------------------------------------


def test_json_equal_to_an_input_is_refused_and_the_input_is_untouched(capsys, tmp_path):
    path = stack_file(tmp_path, BASE)
    code, out, err = preview(capsys, "--config", str(path), "--no-policy", "--json", str(path))
    assert (code, out) == (2, "")
    assert err == f"error: --json {path}: is {path}, an input of this preview; write the JSON to another file\n"
    assert path.read_text() == BASE
    catalog = REPO / "components" / "offline" / "amis.yaml"
    code, _, err = preview(capsys, "--config", str(path), "--no-policy", "--amis", str(catalog), "--json", str(catalog))
    assert code == 2 and f"is {catalog}, an input of this preview" in err


@pytest.mark.parametrize(
    "target, says",
    [
        ("/nonexistent-dir/out.json", "cannot be written: /nonexistent-dir is not a directory"),
        ("{stack}/out.json", "cannot be written: {stack} is not a directory"),
        ("{tmp}", "is a directory; give a file name"),
        # a module the program imports, or the project's other files: JSON over them breaks the next run
        (
            "{tmp}/lanes.py",
            "is an existing .py file (source, project or stack files), which JSON would overwrite; write the JSON to a "
            ".json file",
        ),
        (
            "{tmp}/requirements.txt",
            "is an existing .txt file (source, project or stack files), which JSON would overwrite; write the JSON to "
            "a .json file",
        ),
    ],
)
def test_json_that_cannot_be_written_is_refused_before_the_program_runs(target, says, capsys, tmp_path):
    path = stack_file(tmp_path, BASE)
    target = target.format(stack=path, tmp=tmp_path)
    if target.endswith((".py", ".txt")):
        Path(target).write_text("import os\n")
    code, out, err = preview(capsys, "--config", str(path), "--no-policy", "--json", target)
    assert (code, out) == (2, "")
    assert err == f"error: --json {target}: {says.format(stack=path)}\n"


def test_a_json_write_that_fails_names_json_and_the_path(capsys, tmp_path):
    path = stack_file(tmp_path, BASE)
    code, out, err = preview(capsys, "--config", str(path), "--no-policy", "--json", "/dev/full")
    assert code == 2 and out.startswith("Previewing update (t), offline:")
    assert err == "error: --json /dev/full: cannot write: No space left on device\n"


@pytest.mark.parametrize(
    "where, says",
    [
        ("__main__.py", "not a directory (give the project directory, the one with Pulumi.yaml)"),
        ("components", "no Pulumi.yaml there, so it is not a Pulumi project directory"),
        ("no-such-dir", "no such directory"),
    ],
)
def test_cwd_must_be_a_project_directory(where, says, capsys):
    code, out, err = preview(capsys, "--cwd", str(REPO / where), "--stack", "dev", "--no-policy")
    assert (code, out) == (2, "")
    assert err == f"error: --cwd {REPO / where}: {says}\n"


def test_stack_names_are_checked_as_the_cli_checks_them(capsys, tmp_path):
    path = stack_file(tmp_path, BASE, name="Pulumi.a::b.yaml")
    code, _, err = preview(capsys, "--config", str(path), "--no-policy")
    assert code == 2
    assert err == (
        f"error: --config {path}: names the stack 'a::b', and a stack name may only contain alphanumeric, "
        "hyphens, underscores, or periods: invalid character ':' at position 1\n"
    )
    code, _, err = preview(capsys, "--stack", "org/prod", "--no-policy")
    assert code == 2 and err == (
        "error: --stack org/prod: a stack name may only contain alphanumeric, hyphens, "
        "underscores, or periods: invalid character '/' at position 3\n"
    )


@pytest.mark.parametrize(
    "name, problem",
    [
        ("prod", None),
        ("my-stack_1.2", None),
        ("", "a stack name may not be empty"),
        ("x" * 100, None),
        ("x" * 101, "a stack name cannot exceed 100 characters"),
        (
            "a b",
            "a stack name may only contain alphanumeric, hyphens, underscores, or periods: invalid character ' ' at "
            "position 1",
        ),
        (
            "ab'",
            "a stack name may only contain alphanumeric, hyphens, underscores, or periods: invalid character '\\'' at "
            "position 2",
        ),
        (
            "a\tb",
            "a stack name may only contain alphanumeric, hyphens, underscores, or periods: invalid character '\\t' at "
            "position 1",
        ),
        (
            "dév",
            "a stack name may only contain alphanumeric, hyphens, underscores, or periods: invalid character 'Ã' at "
            "position 1",
        ),
    ],
)
def test_stack_name_rules(name, problem):
    """Go's ``%q`` of a byte prints it as a rune literal: ``'\\''``, ``'\\t'``, and 0xC3 as ``'Ã'``."""
    assert stack_name_problem(name) == problem


# ---- 11. a key written as a path -----------------------------------------------------------------------------


def test_a_key_written_as_a_path_is_named_as_written(capsys, tmp_path):
    lines = refused(capsys, tmp_path, BASE + "  rack:additional_karpenter_nodepools_config[0].name: gpu\n")
    assert lines == [
        "error: rack:additional_karpenter_nodepools_config[0].name: unknown field: a stack config key is a name, not a "
        "path; write the value inside rack:additional_karpenter_nodepools_config (`pulumi config set --path "
        "'rack:additional_karpenter_nodepools_config[0].name' <value>` does that)"
    ]


RACK_SHAPES = {"rack": model_shape(RackParams, item_keys())}


# ---- 15. YAML 1.1 surprises ------------------------------------------------------------------------------------


def text_fields() -> list[str]:
    """Every text position of the rack's config, from the models: ``RackParams`` fields, and the pool
    and node-group fields under the seeds' keys (``type`` for ``NodeGroupSpec.instance_type``)."""
    shape = model_shape(RackParams, item_keys())
    found = [name for name, field in shape.fields.items() if field == TEXT]
    for name, field in shape.fields.items():
        if field.kind == "list" and field.item is not None and field.item.kind == "model":
            found += [f"{name}[0].{key}" for key, sub in field.item.fields.items() if sub == TEXT]
    return found


def test_the_text_fields_come_from_the_models():
    fields = set(text_fields())
    rack = {f for f in fields if "[" not in f}

    def text(annotation: object) -> bool:  # str, a Literal of texts, either optional
        members = (
            [a for a in typing.get_args(annotation) if a is not type(None)]
            if typing.get_origin(annotation) is typing.Union
            else [annotation]
        )
        return all(m is str or typing.get_origin(m) is typing.Literal for m in members)

    assert rack == {name for name, info in RackParams.model_fields.items() if text(info.annotation)}
    assert {
        "cluster_name",
        "karpenter_node_os",
        "karpenter_consolidate_after",
        "gpu_observability_chart_version",
    } <= rack
    pools = {f.split(".", 1)[1] for f in fields if f.startswith("additional_karpenter_nodepools_config[0].")}
    assert pools == {
        "name",
        "consolidation_policy",
        "consolidate_after",
        "node_expiry",
        "disruption_budget_nodes",
        "volume_type",
        "ami_id",
        "canary_ami_id",
    }
    assert pools <= set(PoolSpec.model_fields)
    groups = {f.split(".", 1)[1] for f in fields if f.startswith("additional_node_groups_config[0].")}
    # ``type``: the seeds' key for instance_type
    assert groups == {"type", "capacity_type", "capacity_reservation_id", "label", "ami_id", "canary_ami_id"}
    assert NODE_GROUP.keys["instance_type"] == "type" and "instance_type" in NodeGroupSpec.model_fields
    assert {f.split(".", 1)[1] for f in fields if f.startswith("additional_build_groups_config[0].")} == groups


@pytest.mark.parametrize(
    "value, reads",
    [
        ("no", "the boolean false"),
        ("yes", "the boolean true"),
        ("off", "the boolean false"),
        ("true", "the boolean true"),
        ("1:30", "the number 90"),
        ("30", "the number 30"),
        ("0x1f", "the number 31"),
        ("1.5", "the number 1.5"),
        ("1e3", "the number 1e3"),
        ("0o17", "the number 0o17"),
        (".inf", "the number inf"),
    ],
)
def test_every_text_field_refuses_what_yaml_reads_as_another_type(value, reads, tmp_path):
    """``cluster_name: no`` is the text "no" to the CLI and the boolean false to PyYAML ("false"
    offline); ``1:30`` is 90 to PyYAML. A text parameter so written is refused, with the fix."""
    lines = []
    for field in text_fields():
        top, _, inner = field.partition("[0].")
        text = "config:\n" + (f"  rack:{top}:\n    - {inner}: {value}\n" if inner else f"  rack:{top}: {value}\n")
        with pytest.raises(InputFileError) as caught:
            read_stack_file(stack_file(tmp_path, text), "p", RACK_SHAPES)
        lines.append(str(caught.value))
    for field, line in zip(text_fields(), lines):
        where = f"rack:{field}"
        assert line.endswith(
            f'{where}: YAML reads {value} as {reads}, but this parameter is text; quote it: "{value}"'
        ), line


def test_quoted_the_same_values_are_text(tmp_path):
    path = stack_file(
        tmp_path, BASE.replace("cluster_name: t", 'cluster_name: "no"') + "  rack:karpenter_consolidate_after: '1:30'\n"
    )
    config = read_stack_file(path, "p", RACK_SHAPES)
    assert config["rack:cluster_name"] == "no" and config["rack:karpenter_consolidate_after"] == "1:30"


def test_elsewhere_a_value_is_what_the_cli_reads(tmp_path, capsys):
    """Outside text parameters, a scalar go-yaml reads as text is text here too (``no`` stays "no"
    under another namespace; ``1:30`` in a number parameter is the text the CLI would pass, and the
    parameter's own error follows, as ``yes`` in a boolean one: the SDK's ``Config.get_bool`` takes only
    true and false); one go-yaml reads as a number and PyYAML does not is refused."""
    path = stack_file(tmp_path, BASE + "  other:flag: no\n  rack:nvidia_device_plugin_enable: yes\n")
    config = read_stack_file(path, "p", RACK_SHAPES)
    assert config["other:flag"] == "no" and config["rack:nvidia_device_plugin_enable"] == "yes"
    lines = refused(capsys, tmp_path, BASE + "  other:flag: no\n  rack:nvidia_device_plugin_enable: yes\n")
    assert lines == ['error: FILE:5: rack:nvidia_device_plugin_enable: expected true or false, got "yes"']

    lines = refused(capsys, tmp_path, BASE + "  rack:karpenter_node_disk: 1:30\n")
    assert lines == [
        "error: FILE:4: rack:karpenter_node_disk: input should be a valid integer, unable to parse string as an "
        'integer (got "1:30")'
    ]
    lines = refused(capsys, tmp_path, BASE + "  rack:karpenter_node_disk: 1e3\n")
    assert lines == [
        "error: FILE:4: rack:karpenter_node_disk: YAML 1.1 reads 1e3 as text and the Pulumi CLI (YAML 1.2) as "
        "the number 1e3; write it so both agree (quote text, write numbers in decimal)"
    ]


def test_duplicate_keys_are_refused(capsys, tmp_path):
    lines = refused(
        capsys,
        tmp_path,
        BASE + "  rack:cluster_name: u\n  rack:additional_karpenter_nodepools_config:\n"
        "    - name: gpu\n      disk: 100\n      disk: 200\n",
    )
    assert lines == [
        "error: FILE:4: rack:cluster_name: appears twice (also at line 3), which the Pulumi CLI refuses; keep one",
        "error: FILE:8: rack:additional_karpenter_nodepools_config[0].disk: appears twice (also at line 7), which the "
        "Pulumi CLI refuses; keep one",
    ]


def test_keys_are_namespaced_as_the_cli_namespaces_them(tmp_path):
    path = stack_file(tmp_path, BASE + "  region_hint: x\n  aws:config:profile: dev\n")
    config = read_stack_file(path, "my-project", RACK_SHAPES)
    assert config["my-project:region_hint"] == "x" and config["aws:profile"] == "dev"
    with pytest.raises(InputFileError, match=r"Pulumi\.t\.yaml:5: a:b:c: not a configuration key"):
        read_stack_file(stack_file(tmp_path, BASE + "  region_hint: x\n  a:b:c: 1\n"), "p", RACK_SHAPES)


# ---- 16. keys that look like ours but are not read ---------------------------------------------------------------


@pytest.mark.parametrize(
    "key, says",
    [
        (
            "Rack:karpenter_node_os",
            "Rack:karpenter_node_os: not read: namespaces are case-sensitive; did you mean rack:karpenter_node_os?",
        ),
        (
            "RACK:karpenter_node_os",
            "RACK:karpenter_node_os: not read: namespaces are case-sensitive; did you mean rack:karpenter_node_os?",
        ),
        (
            "karpenter_node_os",
            "mixed-os-racks:karpenter_node_os: not read: the rack reads its parameters from the 'rack' namespace, "
            "and a key written without a namespace is in the project's ('mixed-os-racks'); did you mean "
            "rack:karpenter_node_os?",
        ),
        (
            "rack:Karpenter_Node_OS",
            "rack:Karpenter_Node_OS: unknown field: keys are case-sensitive; did you mean rack:karpenter_node_os?",
        ),
        (
            "' rack:karpenter_node_os'",
            "' rack:karpenter_node_os': not read: the namespace has spaces around it; did you mean "
            "rack:karpenter_node_os?",
        ),
        (
            "'rack :karpenter_node_os'",
            "'rack :karpenter_node_os': not read: the namespace has spaces around it; did you mean "
            "rack:karpenter_node_os?",
        ),
        ("'rack:karpenter_node_os '", "'rack:karpenter_node_os ': unknown field; did you mean rack:karpenter_node_os?"),
        ("rack:123", "rack:123: unknown field"),
    ],
)
def test_keys_meant_for_the_rack_are_refused_with_the_key_it_reads(key, says, capsys, tmp_path):
    lines = refused(capsys, tmp_path, BASE + f"  {key}: bottlerocket\n")
    assert lines == [f"error: FILE:4: {says}"]


def test_under_pulumi_up_too(tmp_path):
    """The check is in ``load_stack_config``, which reads the whole config map the CLI hands the
    program (``PULUMI_CONFIG``), so ``pulumi up`` refuses the same keys."""
    config = rack_config()
    config["mixed-os-racks:karpenter_node_os"] = "bottlerocket"
    with pytest.raises(ConfigError, match=r"did you mean rack:karpenter_node_os\?"):
        run_program(REPO, config, project="mixed-os-racks")
    with pytest.raises(ConfigError, match=r"^Rack:cluster_name: not read"):
        parse_stack_config({"rack:cluster_name": "t", "Rack:cluster_name": "u"}, "p")
    assert parse_stack_config({"rack:cluster_name": "t", "other:karpenter_node_os": "x"}, "p").cluster_name == "t"


# ---- the nesting limit, at its boundary: a value may nest MAX_NESTING levels, not one more ------------------


def nested(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


def test_a_value_nests_as_deep_as_the_limit_and_no_deeper():
    assert nesting_depth(json.loads(nested(MAX_NESTING))) == MAX_NESTING
    assert decode_config_value(nested(MAX_NESTING), "rack:x") == json.loads(nested(MAX_NESTING))
    with pytest.raises(ConfigError, match=rf"^rack:x: nested deeper than {MAX_NESTING} levels"):
        decode_config_value(nested(MAX_NESTING + 1), "rack:x")


@pytest.mark.parametrize("levels, refused_", [(MAX_NESTING, False), (MAX_NESTING + 1, True)])
def test_a_stack_file_value_at_the_nesting_limit(levels, refused_, tmp_path):
    path = stack_file(tmp_path, BASE + f"  other:deep: {nested(levels)}\n")
    if not refused_:
        assert read_stack_file(path, "p", RACK_SHAPES)["other:deep"] == json.loads(nested(levels))
        return
    with pytest.raises(InputFileError) as caught:
        read_stack_file(path, "p", RACK_SHAPES)
    assert str(caught.value) == (
        f"{path}:4: other:deep: nested deeper than {MAX_NESTING} levels of lists and "
        "mappings (no stack config needs that)"
    )


@pytest.mark.parametrize("levels, refused_", [(MAX_NESTING, False), (MAX_NESTING + 1, True)])
def test_a_policy_config_value_at_the_nesting_limit(levels, refused_, tmp_path):
    config = tmp_path / "policy.json"
    config.write_text('{"pinned-ami-age": {"x": %s}}' % nested(levels - 1))  # the policy's value: levels deep
    if not refused_:
        read_config_file(config)
        return
    with pytest.raises(PolicyPackError, match=f"nested deeper than {MAX_NESTING} levels"):
        read_config_file(config)


def test_a_taint_mapping_names_its_item_and_field_one_problem_a_line(capsys, tmp_path):
    taints = "\n    - key: a\n    - foo: b\n      effect: NoSchedule\n    - 5\n"
    assert refused(capsys, tmp_path, BASE + f"  rack:karpenter_node_taints:{taints}") == [
        "error: FILE:5: rack:karpenter_node_taints[0].effect: required",
        "error: FILE:6: rack:karpenter_node_taints[1].key: required",
        "error: FILE:6: rack:karpenter_node_taints[1].foo: unknown field",
        "error: FILE:8: rack:karpenter_node_taints[2]: expected a mapping of its fields (got 5)",
    ]
    pool = "\n    - name: a\n      taints:\n        - key: a\n          x: 1\n"
    assert refused(capsys, tmp_path, BASE + f"  rack:additional_karpenter_nodepools_config:{pool}") == [
        "error: FILE:7: rack:additional_karpenter_nodepools_config[0].taints[0].effect: required",
        "error: FILE:8: rack:additional_karpenter_nodepools_config[0].taints[0].x: unknown field",
    ]


def test_a_component_user_reads_a_nested_spec_problem_in_field_names():
    from mixed_os_racks import PoolSpec

    with pytest.raises(ConfigError) as caught:
        PoolSpec(name="a", taints=[{"key": "a"}, {"foo": "b", "effect": "NoSchedule"}])
    assert str(caught.value).splitlines() == [
        "PoolSpec.taints[0].effect: required",
        "PoolSpec.taints[1].key: required",
        "PoolSpec.taints[1].foo: unknown field",
    ]


def test_a_pool_named_as_the_created_clusters_system_lane_is_refused(capsys, tmp_path):
    prod = (REPO / "Pulumi.prod.yaml").read_text()
    assert "    - name: gpu\n" in prod
    path = stack_file(tmp_path, prod.replace("    - name: gpu\n", "    - name: rack-system\n    - name: gpu\n", 1))
    code, out, err = preview(capsys, "--config", str(path), "--no-policy")
    assert (code, out) == (2, "")
    assert err == (
        "error: Rack 'rack': spec.pools: karpenter nodepool 'rack-system' has the name of the system lane "
        "of the cluster the rack creates (rename the pool)\n"
    )


@pytest.mark.parametrize("flag", ["--config", "--amis", "--state", "--policy-pack-config"])
def test_a_device_is_refused_as_an_input_file_not_read_for_ever(flag, capsys, tmp_path):
    """/dev/zero never ends (it was read until memory ran out); a pipe is read (``--config <(...)``)."""
    args = (
        ["--config", "/dev/zero"]
        if flag == "--config"
        else ["--config", str(stack_file(tmp_path, BASE)), flag, "/dev/zero"]
    )
    code, out, err = preview(capsys, *args, *([] if flag == "--policy-pack-config" else ["--no-policy"]))
    assert (code, out) == (2, "")
    assert err.startswith("error: ") and "/dev/zero: is not a regular file (a device or a socket); give a file" in err


@pytest.mark.parametrize(
    "environment, named", [("[team-a, prod/aws]", "team-a, prod/aws"), ("{imports: [shared]}", "shared")]
)
def test_a_stack_files_esc_environments_are_said_to_be_unread(tmp_path, capsys, environment, named):
    # the Pulumi CLI merges the config of the environments a stack file imports; offline none is opened,
    # so a key they set would silently take its default
    path = stack_file(tmp_path, BASE + f"environment: {environment}\n")
    code, _, err = preview(capsys, "--config", str(path), "--no-policy")
    assert code == 0
    assert f"warning: {path}: imports Pulumi ESC environments ({named}), which the offline preview cannot open" in err
    assert "imports Pulumi ESC" not in preview(capsys, "--config", str(stack_file(tmp_path, BASE)), "--no-policy")[2]
