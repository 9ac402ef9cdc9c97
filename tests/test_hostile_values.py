"""Hostile values, second round: the keys added with create mode, tags and the mixed-app services.

Each class of problem is tried on every key of its kind, through the public interfaces a user meets:
``parse_stack_config`` (the stack config the program reads), ``parse_services`` (``app:services``),
the offline preview's exit code and ``error:`` lines, and the resources a Service registers.

Facts relied on (read upstream, in our words):

- EKS ``publicAccessCidrs``: the public endpoint takes IPv4 CIDR blocks of public addresses; EKS
  refuses private and reserved blocks there, and a cluster takes at most 40 of them (a quota AWS does
  not raise). A block written with host bits set (``34.201.7.9/16``) is not a network address.
- Kubernetes ``autoscaling/v2`` ``MetricTarget.averageUtilization`` is a percentage of the pods'
  *request*, with no upper bound in the API: with no CPU limit (or a limit above the request) pods can
  use more than they request, so a target of 150 is valid.
- ``pulumi config set --secret`` writes the value as ``{secure: <ciphertext>}`` in the stack file; only
  the CLI, with the stack's secrets provider, can decrypt it.
- ``python -m pulumi.policy <engine> <dir>`` runs the pack folder through ``runpy``, which needs the
  folder's ``__main__.py``; the CLI's Python host says a plugin folder without one "provides neither
  __main__.py nor a buildable pyproject.toml".
- The Pulumi CLI hands the program a YAML ``null`` config value as the JSON text ``null``.
"""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest

from mixed_os_racks import ConfigError, parse_services
from mixed_os_racks.cli import main
from mixed_os_racks.config.params import RackParams
from mixed_os_racks.config.stackconfig import parse_stack_config
from mixed_os_racks.spec import RackSpec
from mixed_os_racks.errors import ConfigError as SpecConfigError

from conftest import REPO

PRIVATE = ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712"]
CREATE = {
    "rack:cluster_mode": "create",
    "rack:vpc_id": "vpc-0a1b2c3d4e5f60718",
    "rack:private_subnets_ids": ",".join(PRIVATE),
}


def refused(**rack: Any) -> list[str]:
    """The error lines of a stack config of these ``rack:`` values (with a cluster name unless given)."""
    config = {"rack:cluster_name": "c", **{k if ":" in k else f"rack:{k}": v for k, v in rack.items()}}
    with pytest.raises(SpecConfigError) as caught:
        parse_stack_config(config)
    return str(caught.value).splitlines()


def accepted(**rack: Any) -> RackSpec:
    return parse_stack_config(
        {"rack:cluster_name": "c", **{k if ":" in k else f"rack:{k}": v for k, v in rack.items()}}
    )


def preview(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["preview", *args])
    return code, out.getvalue(), err.getvalue()


# ---- public-access CIDRs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cidr, kind",
    [
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("10.20.30.0/24", "private"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("100.64.0.0/10", "shared address space"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("0.0.0.0/8", "unspecified"),
    ],
)
def test_a_public_access_cidr_that_is_not_public_is_refused(cidr, kind):
    (line,) = refused(**CREATE, eks_api_server_public_access_cidrs=f"34.201.0.0/16,{cidr}")
    assert line.startswith(f"rack:eks_api_server_public_access_cidrs: CIDR '{cidr}' is {kind}")
    assert "not a public range" in line and "0.0.0.0/0 for anyone" in line


@pytest.mark.parametrize(
    "cidr, network",
    [("34.201.7.9/16", "34.201.0.0/16"), ("52.1.2.3/8", "52.0.0.0/8"), ("198.51.100.7/24", "198.51.100.0/24")],
)
def test_a_cidr_with_host_bits_says_so_and_names_the_network(cidr, network):
    (line,) = refused(**CREATE, eks_api_server_public_access_cidrs=cidr)
    assert line == (
        f"rack:eks_api_server_public_access_cidrs: invalid CIDR '{cidr}': host bits are set (the address "
        f"must be the first of its /{cidr.split('/')[1]} range); did you mean {network}?"
    )


def test_at_most_40_public_access_cidrs():
    forty = [f"34.{n}.0.0/16" for n in range(40)]
    spec = accepted(**CREATE, eks_api_server_public_access_cidrs=",".join(forty))
    assert spec.cluster.public_access_cidrs == forty
    (line,) = refused(**CREATE, eks_api_server_public_access_cidrs=",".join([*forty, "35.0.0.0/16"]))
    assert line.startswith("rack:eks_api_server_public_access_cidrs: 41 CIDRs, and EKS takes at most 40")


def test_a_public_access_cidr_listed_twice_is_refused():
    (line,) = refused(**CREATE, eks_api_server_public_access_cidrs="34.201.0.0/16,34.201.0.0/16")
    assert line == "rack:eks_api_server_public_access_cidrs: CIDR '34.201.0.0/16' is listed twice; keep one"


@pytest.mark.parametrize("cidrs", ["0.0.0.0/0", "203.0.113.0/24", "34.201.0.0/16,52.0.0.0/8", "1.2.3.4/32"])
def test_public_cidrs_pass(cidrs):
    assert accepted(**CREATE, eks_api_server_public_access_cidrs=cidrs).cluster.public_access_cidrs == cidrs.split(",")


# ---- repeated keys ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rack, where",
    [
        ({"tags": "team=a,team=b"}, "rack:tags"),
        ({"karpenter_node_labels": "tier=a,x=1,tier=b"}, "rack:karpenter_node_labels"),
        (
            {"additional_karpenter_nodepools_config": [{"name": "gpu", "labels": "tier=a,tier=b"}]},
            "rack:additional_karpenter_nodepools_config[0].labels",
        ),
        (
            {"additional_node_groups_config": [{"type": "g5.xlarge", "tags": "team=a,team=b"}]},
            "rack:additional_node_groups_config[0]",
        ),
    ],
)
def test_a_key_given_twice_in_a_kv_list_is_refused(rack, where):
    (line,) = refused(**rack)
    key = "tier" if "tier" in json.dumps(rack) else "team"
    assert line.startswith(f"{where}: '{key}' is given twice ('{key}=a' and '{key}=b'); keep one")


@pytest.mark.parametrize(
    "value",
    [
        '[{"name": "gpu", "name": "ml"}]',
        '[{"name": "gpu", "labels": {"tier": "a", "tier": "b"}}]',
    ],
)
def test_a_key_given_twice_in_json_text_is_refused(value):
    (line,) = refused(additional_karpenter_nodepools_config=value)
    assert line.startswith("rack:additional_karpenter_nodepools_config:") and "appears twice" in line


def test_a_taint_given_twice_is_refused():
    (line,) = refused(karpenter_node_taints="a=1:NoSchedule,a=2:NoSchedule")
    assert line.startswith("rack:karpenter_node_taints:") and "duplicate taint a:NoSchedule" in line


def test_a_service_key_given_twice_in_json_is_refused():
    with pytest.raises(ConfigError) as caught:
        parse_services('{"web": {"image": "nginx", "port": 80, "nodeSelectorLabels": {"a": "1", "a": "2"}}}')
    assert str(caught.value) == "app:services: key 'a' appears twice in a JSON object; keep one"


# ---- create mode without Karpenter --------------------------------------------------------------------------------


def test_create_mode_without_karpenter_is_refused():
    (line,) = refused(**CREATE, karpenter_install=False)
    assert line.startswith("rack:karpenter_install: karpenter_install=false is not possible with cluster_mode: create")
    assert "remove the key, or set it true" in line
    assert accepted(**CREATE).karpenter is not None
    assert accepted(**CREATE, karpenter_install=True).karpenter is not None


# ---- services: the key names the service ----------------------------------------------------------------------------


def test_a_service_whose_name_disagrees_with_its_key_is_refused():
    with pytest.raises(ConfigError) as caught:
        parse_services({"web": {"name": "api", "image": "nginx", "port": 80}})
    assert str(caught.value) == (
        "app:services.web.name: 'api' is not the service's key 'web': the key names the "
        "service; drop name:, or rename the key to 'api'"
    )
    assert parse_services({"web": {"name": "web", "image": "nginx", "port": 80}})["web"].name == "web"


def test_service_problems_name_their_key_path():
    with pytest.raises(ConfigError) as caught:
        parse_services(json.dumps({"web": {"image": "nginx", "port": 0}, "db": "x"}))
    assert str(caught.value).splitlines() == [
        "app:services.web.port: invalid port '0' (1-65535)",
        'app:services.db: expected the service\'s fields, a mapping (got "x")',
    ]


# ---- null values ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(RackParams.model_fields))
def test_null_is_refused_for_every_key(key):
    """``rack:<key>: null`` reaches the program as the text ``null``: no value, never a cluster named null."""
    lines = refused(**{"cluster_name": "c", key: "null"})
    assert (
        f"rack:{key}: null (no value): write a value"
        + ("" if key == "cluster_name" else ", or remove the key for the default")
        in lines
    )


def test_null_in_a_stack_file_is_refused_with_its_key(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("config:\n  aws:region: us-east-1\n  rack:cluster_name: null\n")
    code, out, err = preview("--config", str(path), "--cwd", str(REPO), "--no-policy")
    assert (code, out) == (2, "")
    assert f"error: {path}:3: rack:cluster_name: null (no value): write a value" in err.splitlines()
    with pytest.raises(ConfigError, match=r"^app:services: null \(no value\)"):
        parse_services("null")


# ---- HPA targets ---------------------------------------------------------------------------------------------------


def test_a_cpu_target_above_100_percent_is_used():
    from mixed_os_racks import ClusterRef, Service, ServiceArgs
    from mixed_os_racks.offline import run_program

    specs = parse_services({"web": {"image": "nginx", "port": 80, "scale": {"count": "2-6", "targets": {"cpu": 150}}}})

    def program() -> None:
        Service("web", ServiceArgs(service=specs["web"], cluster=ClusterRef.existing("c", "c"), namespace="apps"))

    run = run_program(program, {"aws:region": "us-east-1"}, stack="test")
    (hpa,) = [r for r in run.resources if r.type == "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"]
    assert hpa.inputs["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 150}
    with pytest.raises(
        ConfigError, match=r"scale\.targets\.cpu: invalid cpu target '1001' \(percent of the CPU request, 1-1000"
    ):
        parse_services({"web": {"image": "nginx", "port": 80, "scale": {"targets": {"cpu": 1001}}}})


# ---- a pack that cannot run ------------------------------------------------------------------------------------------


def test_a_pack_without_main_py_is_named(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\n")
    code, out, err = preview("--stack", "dev", "--cwd", str(REPO), "--policy-pack", str(pack))
    assert (code, out) == (2, "")
    assert err == (
        f"error: policy pack {pack} is not runnable: it provides no __main__.py (a Python pack's "
        "__main__.py creates its PolicyPack; add one, or pass the pack's own folder)\n"
    )


# ---- characters a reader cannot see
# -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rack, line",
    [
        (
            {"additional_karpenter_nodepools_config": [{"name": "g\u200bpu"}]},
            "rack:additional_karpenter_nodepools_config[0].name: karpenter nodepool name 'g\\u200bpu' must be "
            "lowercase "
            "alphanumeric with dashes, max 63 chars ['g\\u200bpu' has '\\u200b' (ZERO WIDTH SPACE) at position 1; use "
            "plain ASCII]",
        ),
        (
            {"karpenter_node_os": "bottlerocket\u0430"},
            "rack:karpenter_node_os: invalid karpenter_node_os 'bottlerocket\\u0430' (must be al2023 or bottlerocket) "
            "['bottlerocket\\u0430' has '\\u0430' (CYRILLIC SMALL LETTER A) at position 12; use plain ASCII]",
        ),
        (
            {"cluster_name": "r\u0430ck"},
            "rack:cluster_name: invalid cluster_name 'r\\u0430ck' (must be 1-100 letters, digits, '-' or '_', starting "
            "with a "
            "letter or digit (the EKS cluster name rule)) ['r\\u0430ck' has '\\u0430' (CYRILLIC SMALL LETTER A) at "
            "position 1; "
            "use plain ASCII]",
        ),
        (
            {"rack:karpenter_node_os\u200b": "al2023"},
            "rack:karpenter_node_os\\u200b: unknown field; did you mean rack:karpenter_node_os? "
            "['rack:karpenter_node_os\\u200b' "
            "has '\\u200b' (ZERO WIDTH SPACE) at position 22; use plain ASCII]",
        ),
        (
            {"node_role_name": "role\u2028x"},
            "rack:node_role_name: invalid node_role_name 'role\\u2028x' (must be an IAM role name: 1-64 of letters, "
            "digits and "
            "+=,.@_-) ['role\\u2028x' has '\\u2028' (LINE SEPARATOR) at position 4; use plain ASCII]",
        ),
    ],
)
def test_invisible_and_confusable_characters_are_shown_escaped_and_pointed_at(rack, line):
    assert line in refused(**rack)


def test_service_values_are_shown_escaped():
    with pytest.raises(ConfigError) as caught:
        parse_services({"web": {"image": "nginx", "port": 80, "nodeSelectorLabels": {"convox.io/label": "gpu\u200b"}}})
    assert "'gpu\\u200b'" in str(caught.value) and "ZERO WIDTH SPACE" in str(caught.value)
    assert str(caught.value).isascii()


# ---- messages a user can act on
# -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rack, where",
    [
        ({"tags": {"cost-center": "a,b"}}, "rack:tags"),
        (
            {"additional_node_groups_config": [{"type": "g5.xlarge", "tags": {"cost-center": "a,b"}}]},
            "rack:additional_node_groups_config[0]",
        ),
    ],
)
def test_a_tag_value_with_a_comma_names_the_value_and_the_character(rack, where):
    (line,) = refused(**rack)
    assert line == (
        f"{where}: invalid tags: tag 'cost-center' value 'a,b': ',' is not allowed in a tag (AWS takes "
        "letters, digits, spaces and _.:/=+-@ only; use another character, e.g. ':' or '/')"
    )


def test_an_encrypted_value_says_the_offline_preview_cannot_decrypt_it(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(
        "config:\n  aws:region: us-east-1\n  rack:cluster_name: c\n  rack:node_role_name:\n"
        "    secure: v1:AAAABBBBCCCC\n"
    )
    code, out, err = preview("--config", str(path), "--cwd", str(REPO), "--no-policy")
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(
        f"error: {path}:5: rack:node_role_name: an encrypted value (secure:), which the offline preview cannot decrypt"
    )
    assert "give --config a copy of the stack file with a plain stand-in value here, or run `pulumi preview`" in line


@pytest.mark.parametrize(
    "scale, line",
    [
        (
            {"gpu": 1.5},
            "app:services.web.scale.gpu: invalid gpu 1.5 (a whole number of GPUs per replica like 1, or "
            "{count: 1, vendor: nvidia})",
        ),
        (
            {"gpu": {"count": 1.5}},
            "app:services.web.scale.gpu.count: invalid count 1.5 (a whole number of GPUs per replica",
        ),
        (
            {"gpu": [1]},
            "app:services.web.scale.gpu: invalid gpu [1] (a whole number of GPUs per replica like 1, or "
            "{count: 1, vendor: nvidia})",
        ),
        ({"gpu": True}, "app:services.web.scale.gpu: invalid gpu true"),
        (
            [2],
            "app:services.web.scale: invalid scale [2] (a count like 2 or a range like 2-6, or a mapping "
            "{count, cpu, memory, gpu, targets})",
        ),
        ({"targets": 80}, "app:services.web.scale.targets: expected a mapping of its fields (got 80)"),
    ],
)
def test_nested_fields_say_what_they_take_without_class_names(scale, line):
    with pytest.raises(ConfigError) as caught:
        parse_services({"web": {"image": "nginx", "port": 80, "scale": scale}})
    assert str(caught.value).startswith(line)
    assert "spec" not in str(caught.value).lower().replace("inspect", "")


@pytest.mark.parametrize("field, value", [("health", [1]), ("securityContext", "yes"), ("scale", None)])
def test_no_message_names_a_class(field, value):
    with pytest.raises(ConfigError) as caught:
        parse_services({"web": {"image": "nginx", "port": 80, field: value}})
    assert "spec" not in str(caught.value).lower(), str(caught.value)


def test_a_spec_given_a_non_mapping_item_names_no_class():
    with pytest.raises(SpecConfigError) as caught:
        RackSpec(cluster_name="c", pools=[1])
    assert str(caught.value) == "RackSpec.pools[0]: expected a mapping of its fields (got 1)"


@pytest.mark.parametrize("date", ["2026-13-01", "2026-99-99", "'2026-02-30T00:00:00Z'"])
def test_an_impossible_ami_date_names_the_entry_and_field(date, tmp_path):
    catalog = (REPO / "components" / "offline" / "amis.yaml").read_text()
    first = catalog.index('creation_date: "2026-11-15T08:12:40.000Z"')
    amis = tmp_path / "amis.yaml"
    amis.write_text(
        catalog[:first] + f"creation_date: {date}" + catalog[first + len('creation_date: "2026-11-15T08:12:40.000Z"') :]
    )
    code, out, err = preview("--stack", "dev", "--cwd", str(REPO), "--no-policy", "--amis", str(amis))
    assert (code, out) == (2, "")
    assert "Traceback" not in err and "the program failed" not in err
    assert f"amis[0] (ami-0a1b2c3d4e5f60718).creation_date: '{date.strip(chr(39))}' is not an ISO 8601 time" in err
    assert "month must be in 1..12" in err or "day is out of range" in err


def test_a_catalog_entry_that_is_not_a_mapping_names_no_class(tmp_path):
    amis = tmp_path / "amis.yaml"
    amis.write_text("amis:\n  - 1\n")
    code, out, err = preview("--stack", "dev", "--cwd", str(REPO), "--no-policy", "--amis", str(amis))
    assert (code, out) == (2, "")
    assert err == (
        f"error: AMI catalog {amis}: amis[0]: expected a mapping of an image's fields (id, name, "
        "architecture, ...), got a number 1\n"
    )
