"""The offline AMI catalog: validated as strictly as the stack config, and answering what EC2 and SSM answer.

Every refusal names the file, the entry and the field. The look-ups it answers follow the AWS
provider's ``aws.ec2.get_ami`` (DescribeImages filters and owners, ``most_recent``) and
``aws.ssm.get_parameter``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mixed_os_racks.offline import Catalog, CatalogError, run_program
from mixed_os_racks.cli import main
from conftest import REPO

X86 = "ami-0123456789abcdef0"
ARM = "ami-0fedcba9876543210"


def entry(**fields: Any) -> dict[str, Any]:
    base = {
        "id": X86,
        "name": "team-al2023-x86_64-v1",
        "description": "AL2023",
        "architecture": "x86_64",
        "root_device_name": "/dev/xvda",
        "root_snapshot_gib": 30,
        "creation_date": "2026-11-01T00:00:00Z",
        "owner_id": "111122223333",
    }
    return {**base, **fields}


def load(tmp_path: Path, text: str | bytes) -> Catalog:
    path = tmp_path / "amis.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return Catalog.load(path)


def refused(tmp_path: Path, doc: Any) -> str:
    with pytest.raises(CatalogError) as caught:
        load(tmp_path, yaml.safe_dump(doc) if not isinstance(doc, (str, bytes)) else doc)
    return str(caught.value)


# ---- every class of bad input, with the file, the entry and the field --------------------------------------


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("abc", "expected a positive number, got text 'abc'"),
        (None, "expected a positive number, got null None"),
        (-5, "must be a positive number of GiB (got -5)"),
        (0, "must be a positive number of GiB (got 0)"),
        (True, "expected a positive number, got a boolean True"),
        (math.nan, "must be a positive number of GiB (got nan)"),
        (math.inf, "must be a positive number of GiB (got inf)"),
    ],
)
def test_a_snapshot_size_is_a_positive_finite_number(tmp_path, value, says):
    message = refused(tmp_path, {"amis": [entry(root_snapshot_gib=value)]})
    assert message == f"AMI catalog {tmp_path / 'amis.yaml'}: amis[0] ({X86}).root_snapshot_gib: {says}"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (["a", "b"], "amis[0].id: expected text, got a list ['a', 'b']"),
        (None, "amis[0].id: expected text, got null None"),
        ("ami-XYZ", "amis[0].id: 'ami-XYZ' is not an AMI id (must look like ami-0123456789abcdef0)"),
        ("ami-0123456789abcdef", "is not an AMI id"),  # 16 digits
        ("ami-0123456789abcdef0\n", "amis[0].id: 'ami-0123456789abcdef0\\n' is not an AMI id"),
    ],
)
def test_an_id_is_an_ami_id_in_the_rules_format(tmp_path, value, says):
    assert says in refused(tmp_path, {"amis": [entry(id=value)]})


def test_ids_are_unique(tmp_path):
    message = refused(tmp_path, {"amis": [entry(), entry(name="another")]})
    assert message.endswith(f"amis[1].id: '{X86}' is already amis[0] (ids are unique)")


def test_unknown_keys_are_refused_not_ignored(tmp_path):
    assert refused(tmp_path, {"amis": [entry(root_snapshot_size=30)]}).endswith(
        f"amis[0] ({X86}).root_snapshot_size: unknown key (did you mean root_snapshot_gib?)"
    )
    assert refused(tmp_path, {"amis": [entry()], "ami": []}).endswith(": ami: unknown key (did you mean amis?)")


def test_missing_fields_are_named_on_one_line(tmp_path):
    message = refused(tmp_path, {"amis": [{"id": X86}]})
    assert message.endswith(
        f"amis[0] ({X86}): missing name, description, architecture, root_device_name, "
        "root_snapshot_gib, creation_date, owner_id"
    )


def test_yaml_types_that_are_not_text_get_a_hint(tmp_path):
    message = refused(
        tmp_path,
        "amis:\n  - "
        + "\n    ".join(
            f"{k}: {v}" for k, v in {**entry(), "owner_id": 111122223333, "creation_date": "2026-11-01"}.items()
        )
        + "\n",
    )
    assert f"amis[0] ({X86}).creation_date: expected text, got a date 2026-11-01 (quote it)" in message
    assert f"amis[0] ({X86}).owner_id: expected text, got a number 111122223333 (quote it)" in message


def test_a_key_given_twice_is_refused(tmp_path):
    assert "the key 'amis' is given twice" in refused(tmp_path, "amis: []\namis: []\n")
    assert "the key 'name' is given twice" in refused(tmp_path, f"amis:\n  - id: {X86}\n    name: a\n    name: b\n")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("1: x\n", "the key 1 is a number, not text (quote it)"),
        ("- a\n- b\n", "expected a mapping with an 'amis:' list, got a list"),
        ("amis: {}\n", "amis: expected a list of images, got a mapping {}"),
        ("x: &a [*a]\n", "nested deeper than any catalog"),
        ("amis: " + "[" * 40 + "]" * 40 + "\n", "nested deeper than any catalog"),
        (
            "ebs_encryption_by_default: yes please\n",
            "ebs_encryption_by_default: expected true or false, got text 'yes please'",
        ),
        ("ssm_parameters: {/a: ami-XYZ}\n", "ssm_parameters: /a: 'ami-XYZ' is not an AMI id"),
        (
            "".join(f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10) if n else 'x'}]\n" for n in range(9)) + "amis: []\n",
            "expands to more than 100,000 values through aliases",
        ),  # an alias bomb: refused before it is built
        ("amis:\n  - id: !!bool maybe\n", "not valid YAML: a value does not fit its explicit tag"),
        ("amis:\n  - root_snapshot_gib: !!int ''\n", "not valid YAML: a value does not fit its explicit tag"),
    ],
)
def test_odd_documents(tmp_path, text, says):
    assert says in refused(tmp_path, text)


def test_a_file_that_is_not_utf8_text(tmp_path):
    assert refused(tmp_path, "amis: []\n".encode("utf-16")) == f"AMI catalog {tmp_path / 'amis.yaml'}: not UTF-8 text"
    assert refused(tmp_path, b"\xff\xfe\x00binary") == f"AMI catalog {tmp_path / 'amis.yaml'}: not UTF-8 text"


def test_the_cli_exits_2_naming_the_file_and_field(tmp_path, capsys):
    path = tmp_path / "amis.yaml"
    path.write_text(yaml.safe_dump({"amis": [entry(root_snapshot_gib=-5)]}))
    assert main(["preview", "--stack", "dev", "--cwd", str(REPO), "--amis", str(path), "--no-policy"]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"error: AMI catalog {path}: amis[0] ({X86}).root_snapshot_gib: must be a positive number of GiB (got -5)\n"
    )


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(10**6), 10**6),
        st.booleans(),
        st.text(max_size=8),
        st.none(),
    )
)
def test_any_snapshot_value_is_kept_exactly_when_positive_and_finite(value):
    doc = {"amis": [entry(root_snapshot_gib=value)]}
    good = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if good:
        assert Catalog.from_doc(doc).get(X86).root_snapshot_gib == float(value)
    else:
        with pytest.raises(CatalogError, match=r"amis\[0\].*\.root_snapshot_gib: "):
            Catalog.from_doc(doc)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ami-0123456789abcdefABCDEFxyz\n ", max_size=24))
def test_any_id_is_kept_exactly_when_the_rule_takes_it(value):
    from mixed_os_racks.pack import rules

    doc = {"amis": [entry(id=value)]}
    if rules.ami_id_problem(value) is None:
        assert Catalog.from_doc(doc).get(value) is not None
    else:
        with pytest.raises(CatalogError, match=r"amis\[0\].*\.id: "):
            Catalog.from_doc(doc)


# ---- what the catalog answers -------------------------------------------------------------------------------


CATALOG = Catalog.from_doc(
    {
        "amis": [
            entry(),
            entry(
                id=ARM,
                name="team-al2023-arm64-v1",
                architecture="arm64",
                creation_date="2026-11-02T00:00:00Z",
                tags={"team": "ml"},
            ),
            entry(
                id="ami-0aaaaaaaaaaaaaaa2",
                name="team-al2023-x86_64-v2",
                creation_date="2026-11-03T00:00:00Z",
                tags={"team": "ml"},
                owner_alias="amazon",
            ),
            entry(
                id="ami-0aaaaaaaaaaaaaaa3",
                name="team-al2023-x86_64-v3",
                creation_date="2026-11-04T00:00:00Z",
                deprecation_time="2026-11-05T00:00:00Z",
            ),
        ],
        "ssm_parameters": {"/team/gpu/ami": ARM},
    }
)


def looked_up(**kwargs: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def program() -> None:
        ami = aws.ec2.get_ami_output(**kwargs)
        pulumi.export("id", ami.id)
        pulumi.export("architecture", ami.architecture)

    found.update(run_program(program, {"aws:region": "us-east-1"}, CATALOG).outputs)
    return found


def test_get_ami_by_name_pattern_and_most_recent():
    """The AWS provider's ``aws_ami``: DescribeImages, then the newest of several only with ``most_recent``;
    deprecated images are left out unless asked for (EC2 ``IncludeDeprecated``)."""
    newest = looked_up(filters=[{"name": "name", "values": ["team-al2023-x86_64-*"]}], most_recent=True)
    assert newest == {"id": "ami-0aaaaaaaaaaaaaaa2", "architecture": "x86_64"}
    deprecated = looked_up(
        filters=[{"name": "name", "values": ["team-al2023-x86_64-*"]}], most_recent=True, include_deprecated=True
    )
    assert deprecated["id"] == "ami-0aaaaaaaaaaaaaaa3"
    with pytest.raises(Exception, match="more than one result"):
        looked_up(filters=[{"name": "name", "values": ["team-al2023-x86_64-*"]}])


def test_get_ami_by_tags_architecture_and_owner():
    assert (
        looked_up(filters=[{"name": "tag:team", "values": ["ml"]}, {"name": "architecture", "values": ["arm64"]}])["id"]
        == ARM
    )
    assert (
        looked_up(filters=[{"name": "tag-key", "values": ["team"]}], owners=["amazon"])["id"] == "ami-0aaaaaaaaaaaaaaa2"
    )
    with pytest.raises(Exception, match="Your query returned no results"):
        looked_up(filters=[{"name": "name", "values": ["team-*"]}], owners=["self"])  # the offline account owns none
    with pytest.raises(Exception, match="cannot filter images by 'platform-details'"):
        looked_up(filters=[{"name": "platform-details", "values": ["Linux/UNIX"]}])


def test_ssm_parameters():
    def program() -> None:
        pulumi.export("value", aws.ssm.get_parameter_output(name="/team/gpu/ami").value)

    assert run_program(program, {"aws:region": "us-east-1"}, CATALOG).outputs == {"value": ARM}

    def missing() -> None:
        pulumi.export("value", aws.ssm.get_parameter_output(name="/nope").value)

    with pytest.raises(Exception, match="has no such parameter"):
        run_program(missing, {"aws:region": "us-east-1"}, CATALOG)


def test_the_most_recent_image_is_the_latest_moment_whatever_its_zone():
    """EC2's creationDate is UTC; a catalog may write another zone: 01:00+05:00 is 20:00 UTC the day before."""
    catalog = Catalog.from_doc(
        {
            "amis": [
                entry(id="ami-0bbbbbbbbbbbbbbb1", name="zone-a", creation_date="2026-11-16T01:00:00+05:00"),
                entry(id="ami-0bbbbbbbbbbbbbbb2", name="zone-b", creation_date="2026-11-15T22:00:00Z"),
            ]
        }
    )

    def program() -> None:
        pulumi.export(
            "id", aws.ec2.get_ami_output(filters=[{"name": "name", "values": ["zone-*"]}], most_recent=True).id
        )

    assert run_program(program, {"aws:region": "us-east-1"}, catalog).outputs["id"] == "ami-0bbbbbbbbbbbbbbb2"


@pytest.mark.parametrize("value", ["2026-11-15", "2026-11-15T08:12:40"])
def test_a_creation_date_needs_its_time_and_zone(tmp_path, value):
    message = refused(tmp_path, {"amis": [entry(creation_date=value)]})
    assert f"creation_date: '{value}' is a date or a time without its zone" in message


# ---- where a user looks after a look-up fails: the error and the docs show the section to add ----------


def _catalog_blocks(path: Path) -> list[str]:
    import re

    return [
        block
        for block in re.findall(r"^```yaml\n(.*?)^```", path.read_text(encoding="utf-8"), re.M | re.S)
        if block.lstrip().startswith(("amis:", "# "))
    ]


def test_the_catalog_format_in_the_readme_and_docs_loads_and_shows_subnets(tmp_path):
    for doc in (REPO / "README.md", REPO / "docs" / "offline.md"):
        (block,) = [b for b in _catalog_blocks(doc) if "amis:" in b]
        catalog = load(tmp_path, block)
        assert catalog.zone_of("subnet-0a1b2c3d4e5f60711", "us-east-1") == "us-east-1a", doc


def test_a_subnet_missing_from_the_catalog_shows_the_section_to_add(tmp_path, capsys):
    stack = yaml.safe_load((REPO / "Pulumi.staging.yaml").read_text())
    stack["config"]["rack:private_subnets_ids"] = "subnet-0a1b2c3d4e5f60711,subnet-0a1b2c3d4e5f6071f"
    (tmp_path / "Pulumi.s.yaml").write_text(yaml.safe_dump(stack))
    assert main(["preview", "--cwd", str(REPO), "--config", str(tmp_path / "Pulumi.s.yaml"), "--no-policy"]) == 2
    (error,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert error.endswith(
        "rack:private_subnets_ids: subnet 'subnet-0a1b2c3d4e5f6071f' cannot be read in this region/account (no "
        "matching "
        f"EC2 Subnet found (the offline catalog ({REPO / 'components' / 'offline' / 'amis.yaml'}) has no subnet "
        "subnet-0a1b2c3d4e5f6071f in us-east-1; give a catalog that has it with --amis FILE, YAML of the form "
        "`subnets: {subnet-0123456789abcdef0: us-east-1a}`, described in docs/offline.md)); check that it exists here"
    )
    # the form shown is one the catalog reads
    assert load(tmp_path, "subnets: {subnet-0123456789abcdef0: us-east-1a}").zone_of(
        "subnet-0123456789abcdef0", "us-east-1"
    )


def test_a_parameter_missing_from_the_catalog_shows_the_section_to_add():
    def missing() -> None:
        pulumi.export("value", aws.ssm.get_parameter_output(name="/nope").value)

    with pytest.raises(
        Exception,
        match=r"has no such parameter \(give a catalog that has it with --amis FILE, YAML of "
        r"the form `ssm_parameters: \{/aws/service/eks/optimized-ami/\.\.\.: ami-",
    ):
        run_program(missing, {"aws:region": "us-east-1"}, CATALOG)
