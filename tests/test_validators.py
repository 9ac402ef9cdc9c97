"""Values are refused, never silently changed: every pattern matches the whole
string with ASCII digits only, and values follow the syntax of the API they end up in."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixed_os_racks import ConfigError, NodeGroupSpec, PoolSpec, parse_rack_config, parse_services
from mixed_os_racks.spec.base import SpecError
from mixed_os_racks.syntax import (
    eks_cluster_name_problem,
    instance_type_problem,
    label_value_problem,
    qualified_name_problem,
    region_problem,
)

from upstream_files import karpenter_families


def error(**values: Any) -> str:
    values.setdefault("cluster_name", "c")
    with pytest.raises(ConfigError) as caught:
        parse_rack_config(values)
    return str(caught.value)


def pool_error(**pool: Any) -> str:
    return error(additional_karpenter_nodepools_config=[{"name": "gpu", **pool}])


def accepted(**values: Any) -> Any:
    values.setdefault("cluster_name", "c")
    return parse_rack_config(values)


# ---- 12: whole strings, ASCII digits -------------------------------------------------------------------------

STRING_FIELDS = {
    "name": "gpu",
    "consolidate_after": "30s",
    "node_expiry": "720h",
    "disruption_budget_nodes": "10%",
    "ami_id": "ami-0123456789abcdef0",
}


@pytest.mark.parametrize("field", sorted(STRING_FIELDS))
@pytest.mark.parametrize("suffix", ["\n", " ", "\t", "\r\n"])
def test_a_trailing_newline_or_blank_is_refused(field, suffix):
    """A YAML block scalar (`name: |`) ends its value with a newline: 'gpu' and 'gpu\\n' are not the same pool."""
    good = STRING_FIELDS[field]
    assert accepted(additional_karpenter_nodepools_config=[{"name": "gpu", field: good}])
    assert pool_error(**{field: good + suffix})


def test_gpu_and_gpu_newline_cannot_coexist():
    assert "must be lowercase alphanumeric" in pool_error(name="gpu\n")


@pytest.mark.parametrize(
    "field, value",
    [
        ("consolidate_after", "３０s"),
        ("node_expiry", "７２０h"),
        ("disruption_budget_nodes", "１０%"),
        ("disruption_budget_nodes", "٣"),
        ("ami_id", "ami-０１２３４５６７"),
    ],
)
def test_only_ascii_digits_are_digits(field, value):
    assert pool_error(**{field: value})


def test_a_fullwidth_alias_date_is_refused():
    assert error(karpenter_ami_alias="al2023@v２０２４０１０１").startswith(
        "rack:karpenter_ami_alias: invalid karpenter_ami_alias"
    )


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=12).filter(lambda t: not t.isascii() or not t.strip() == t))
def test_no_odd_text_passes_as_a_duration(text):
    with pytest.raises(
        ConfigError,
        match=r"^rack:karpenter_consolidate_after: karpenter workload nodepool: invalid "
        r"karpenter_consolidate_after '30s",
    ):
        parse_rack_config({"cluster_name": "c", "karpenter_consolidate_after": f"30s{text}"})


# ---- 13: Kubernetes syntax -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpu-", "-gpu", "g" * 64, "gpu.pool", "gpu_pool", "Gpu", ""])
def test_pool_names_are_dns_labels(name):
    assert pool_error(name=name).endswith(
        f"karpenter nodepool name '{name}' must be lowercase alphanumeric with dashes, max 63 chars"
    )


def test_k_v_x_is_not_a_label():
    assert pool_error(labels="team=ml=x") == (
        "rack:additional_karpenter_nodepools_config[0].labels: karpenter nodepool 'gpu': invalid value 'ml=x' of label "
        "'team' (must be empty or at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or "
        "digit)"
    )


@pytest.mark.parametrize(
    "labels, problem",
    [
        ({"team": "x" * 64}, "invalid value"),
        ({"Team Name": "x"}, "invalid label key 'Team Name'"),
        ({"example.com/": "x"}, "invalid label key 'example.com/'"),
        ({"Example.com/team": "x"}, "invalid label key 'Example.com/team'"),
        ({"kubernetes.io/role": "gpu"}, "is in the restricted domain kubernetes.io"),
        ({"node-role.kubernetes.io/gpu": ""}, "is in the restricted domain kubernetes.io"),
        ({"karpenter.sh/capacity-type": "spot"}, "is in the restricted domain karpenter.sh"),
        ({"karpenter.k8s.aws/instance-family": "g5"}, "is in the restricted domain karpenter.k8s.aws"),
        # a plain suffix, not a subdomain: Karpenter's IsRestrictedNodeLabel uses strings.HasSuffix on the
        # domain, and the NodePool CRD's CEL checks the whole key with endsWith when it has no '/'
        ({"mykarpenter.sh/x": "y"}, "is in the restricted domain karpenter.sh"),
        ({"xkarpenter.k8s.aws/x": "y"}, "is in the restricted domain karpenter.k8s.aws"),
        ({"mykubernetes.io/x": "y"}, "is in the restricted domain kubernetes.io"),
        ({"xk8s.io/x": "y"}, "is in the restricted domain k8s.io"),
        ({"karpenter.sh": "x"}, "label 'karpenter.sh' is in the restricted domain karpenter.sh"),
    ],
)
def test_labels_follow_kubernetes(labels, problem):
    assert problem in pool_error(labels=labels)


def test_allowed_subdomains_of_kubernetes_io():
    spec = accepted(
        additional_karpenter_nodepools_config=[{"name": "gpu", "labels": {"node.kubernetes.io/lane": "gpu"}}]
    )
    assert spec.pools[1].labels == {"node.kubernetes.io/lane": "gpu"}


@pytest.mark.parametrize(
    "taints, problem",
    [
        ("a=b:NoSchedule,a=c:NoSchedule", "duplicate taint a:NoSchedule"),
        ("bad key=x:NoSchedule", "invalid taint key 'bad key'"),
        ("a=-x:NoSchedule", "invalid value '-x' of taint 'a'"),
        ("a=b:noschedule", "invalid taint effect 'noschedule'"),
        # the NodePool CRD's pattern for a taint value needs at least one character
        ("a=:NoSchedule", "taint 'a' has an empty value (write a:NoSchedule for a taint without one)"),
        ([{"key": "a", "value": "", "effect": "NoSchedule"}], "taint 'a' has an empty value"),
    ],
)
def test_taints_follow_kubernetes(taints, problem):
    assert problem in pool_error(taints=taints)


def test_a_taint_repeating_the_dedicated_one_is_refused():
    assert pool_error(dedicated=True, taints="dedicated-node=gpu:NoSchedule").endswith(
        "karpenter nodepool 'gpu': duplicate taint dedicated-node:NoSchedule (dedicated adds it already)"
    )
    # a different effect is another taint: Kubernetes keys taints by key and effect
    assert accepted(
        additional_karpenter_nodepools_config=[
            {"name": "gpu", "dedicated": True, "taints": "dedicated-node=gpu:NoExecute"}
        ]
    )


@pytest.mark.parametrize("label", ["gpu-", "-gpu", "g" * 64])
def test_node_group_labels_are_label_values(label):
    assert error(additional_node_groups_config=[{"type": "g5.xlarge", "label": label}]) == (
        f"rack:additional_node_groups_config[0]: label value '{label}' invalid, must contain only lowercase "
        f"alphanumeric and dashes"
    )


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=70))
def test_label_values_match_kubernetes(value):
    import re

    kubernetes = re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", value) and len(value) <= 63
    assert (label_value_problem(value) is None) == bool(kubernetes and value.isascii())


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abc-._/AZ09 ", max_size=30))
def test_qualified_names_match_kubernetes(key):
    import re

    prefix, slash, name = key.rpartition("/")
    dns = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
    good_prefix = not slash or bool(re.fullmatch(dns, prefix))
    good_name = bool(re.fullmatch(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", name)) and len(name) <= 63
    assert (qualified_name_problem(key) is None) == (good_prefix and good_name)


# ---- 14: AWS syntax -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", " ", "prod rack", "prod\n", "x" * 101, "prod-räck", "-prod", "null\t"])
def test_eks_cluster_names(name):
    assert error(cluster_name=name).startswith("rack:cluster_name:")


@pytest.mark.parametrize("name", ["prod-rack", "p", "1rack", "prod_rack", "x" * 100])
def test_good_cluster_names(name):
    assert accepted(cluster_name=name).cluster_name == name


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=110))
def test_cluster_names_match_the_eks_api(name):
    import re

    assert (eks_cluster_name_problem(name) is None) == bool(
        re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z_-]{0,99}", name, re.ASCII)
    )


@pytest.mark.parametrize(
    "value, good",
    [
        ("g4dn.xlarge", True),
        ("u7inh-32tb.480xlarge", True),
        ("c7i-flex.large", True),
        ("m7i.metal-24xl", True),
        ("p6e-gb200.36xlarge", True),
        ("g4dn", False),
        ("g4dn.XLarge", False),
        ("g4dn.xlarge\n", False),
        ("g4dn..xlarge", False),
        (".xlarge", False),
        ("g4dn.0xlarge", False),
    ],
)
def test_instance_types(value, good):
    assert (instance_type_problem(value) is None) == good


@pytest.mark.parametrize(
    "families, problem",
    [
        ("g5.xlarge", "is an instance type, not a family"),
        ("G5", "must be an EC2 instance family"),
        ("g5 ", "must be an EC2 instance family"),
    ],
)
def test_instance_families(families, problem):
    assert problem in pool_error(instance_families=[families])


@pytest.mark.parametrize(
    "region, good",
    [
        ("us-east-1", True),
        ("eu-central-2", True),
        ("us-gov-west-1", True),
        ("cn-northwest-1", True),
        ("eusc-de-east-1", True),
        ("us-east", False),
        ("US-EAST-1", False),
        ("us-east-1\n", False),
        ("us_east_1", False),
    ],
)
def test_regions(region, good):
    assert (region_problem(region) is None) == good


@pytest.mark.parametrize(
    "tags, problem",
    [
        ({"aws:team": "x"}, "reserved prefix 'aws:'"),
        ({"k" * 128: "x"}, "must be 1-127"),
        ({"team": "v" * 257}, "value must be at most 256"),
        ({"NAME": "x"}, "reserved tag key 'NAME' is not allowed"),
        ({f"t{n}": "x" for n in range(47)}, "at most 46 tags"),
    ],
)
def test_node_group_tags_follow_aws(tags, problem):
    assert problem in error(additional_node_groups_config=[{"type": "m5.large", "tags": tags}])


@pytest.mark.parametrize("key", ["node_role_name", "node_group_role_name"])
@pytest.mark.parametrize("name", ["role name", "x" * 65, "rôle", ""])
def test_role_names(key, name):
    shown = name.encode("ascii", "backslashreplace").decode()  # a non-ASCII letter is shown escaped
    assert error(**{key: name}).startswith(f"rack:{key}: invalid {key} '{shown}' (must be an IAM role name")


@pytest.mark.parametrize("region", ["us-east", "US-EAST-1", "us_east_1", "us-east-1 "])
def test_the_stacks_region_is_checked(region):
    from mixed_os_racks.config.stackconfig import parse_stack_config

    with pytest.raises(ConfigError) as caught:
        parse_stack_config({"aws:region": region, "rack:cluster_name": "c"})
    assert str(caught.value) == f"aws:region: invalid region '{region}' (must be an AWS region like us-east-1)"


def test_a_value_with_a_line_break_is_one_error_line():
    message = pool_error(name="gpu\nextra")
    assert len(message.splitlines()) == 1
    assert message == (
        "rack:additional_karpenter_nodepools_config[0].name: karpenter nodepool name 'gpu\\nextra' must be "
        "lowercase alphanumeric with dashes, max 63 chars"
    )


@pytest.mark.parametrize(
    "groups, expected",
    [
        ([{"type": "m7i.large", "id": [1]}], "rack:additional_node_groups_config[0].id: invalid id [1]"),
        ([{"type": "m7i.large", "id": "a b"}], 'rack:additional_node_groups_config[0].id: invalid id "a b"'),
        ([{"type": "m7i.large", "id": True}], "rack:additional_node_groups_config[0].id: invalid id true"),
        ([{"type": "m7i.large", "id": "n" * 17}], "rack:additional_node_groups_config[0].id: invalid id"),
        # the id names the group (<rack>-ng-<id>): 1 and "1" would be one group
        (
            [{"type": "m7i.large", "id": 1}, {"type": "m7i.large", "id": "1"}],
            "rack:additional_node_groups_config: duplicate node group id is found: 1",
        ),
    ],
)
def test_node_group_ids_name_groups_aws_can_name(groups, expected):
    assert error(additional_node_groups_config=groups).startswith(expected)


@pytest.mark.parametrize(
    "values, expected",
    [
        # what only the build lane, the system lane or the whole rack can say is named by the key that set it
        (
            {"build_node_enabled": True, "build_node_type": "c7i"},
            "rack:build_node_type[0]: karpenter nodepool 'build': invalid instance type 'c7i'",
        ),
        (
            {"build_node_enabled": True, "build_node_type": "p2.xlarge"},
            "rack:build_node_type: karpenter nodepool 'build': instance family p2 needs an NVIDIA driver",
        ),
        (
            {
                "build_node_enabled": True,
                "node_disk": 60000,
            },  # node_disk is every Karpenter pool's (karpenter_node_disk 0)
            "rack:node_disk: karpenter workload nodepool: disk must be 1-59000 GiB for a gp3 volume (got '60000')\n"
            "rack:node_disk: karpenter nodepool 'build': disk must be",
        ),
        (
            {
                "cluster_mode": "create",
                "vpc_id": "vpc-0a1b2c3d4e5f60718",
                "private_subnets_ids": "subnet-0a1b2c3d4e5f60711,subnet-0a1b2c3d4e5f60712",
                "node_type": "p2.xlarge",
            },
            "rack:node_type: node group 'system': instance family p2",
        ),
    ],
)
def test_rules_of_derived_lanes_name_their_key(values, expected):
    assert error(**values).startswith(expected)


@pytest.mark.parametrize(
    "values, expected",
    [
        # pydantic's lax mode reads true/false as 1/0: a YAML `weight: true` would silently be weight 1
        (
            {"additional_karpenter_nodepools_config": [{"name": "gpu", "weight": True}]},
            "rack:additional_karpenter_nodepools_config[0].weight: expected a number, got true",
        ),
        (
            {"additional_karpenter_nodepools_config": [{"name": "gpu", "disk": True}]},
            "rack:additional_karpenter_nodepools_config[0].disk: expected a number, got true",
        ),
        # a pool's disk 0 means the rack's (Convox); false is no 0
        (
            {"additional_karpenter_nodepools_config": [{"name": "gpu", "disk": False}]},
            "rack:additional_karpenter_nodepools_config[0].disk: expected a number, got false",
        ),
        (
            {"additional_node_groups_config": [{"type": "m5.large", "min_size": False}]},
            "rack:additional_node_groups_config[0].min_size: expected a number, got false",
        ),
        ({"karpenter_cpu_limit": True}, "rack:karpenter_cpu_limit: expected a number, got true"),
    ],
)
def test_a_boolean_is_not_a_number(values, expected):
    assert error(**values) == expected


BOOLEAN_KEYS = [
    "high_availability",
    "karpenter_consolidation_enabled",
    "karpenter_enabled",
    "build_node_enabled",
    "nvidia_device_plugin_enable",
]


@given(
    st.sampled_from(BOOLEAN_KEYS),
    st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=8), st.lists(st.booleans(), max_size=2)),
)
@settings(deadline=None)
def test_a_boolean_is_true_or_false_as_the_sdk_reads_it(key, value):
    # pydantic's lax mode reads 1, "yes", "on" and "t" as true; the Pulumi SDK's Config.get_bool takes only
    # true and false (and their text, "true"/"True"/"false"/"False"), so a stack file means what pulumi reads
    if isinstance(value, str) and value in ("true", "True", "false", "False"):
        accepted(**{key: value})
        return
    if value == "null":
        # The CLI hands the program every config value as text, a YAML null as the text null (object values
        # travel as JSON), so a program cannot tell `key: null` (or `key:` with nothing) from `key: "null"`.
        # Config.get_bool refuses both alike (ConfigTypeError, value 'null' is not a valid bool); the rack says
        # what the likely slip is, as it does for every key: no value was written.
        assert error(**{key: value}) == f"rack:{key}: null (no value): write a value, or remove the key for the default"
        return
    assert error(**{key: value}).startswith(f"rack:{key}: expected true or false, got ")


@pytest.mark.parametrize("key", BOOLEAN_KEYS)
def test_the_text_null_is_no_value_for_a_boolean_too(key):
    assert error(**{key: "null"}) == f"rack:{key}: null (no value): write a value, or remove the key for the default"


@pytest.mark.parametrize("item", [{"dedicated": 1}, {"dedicated": "yes"}, {"dedicated": "on"}])
def test_a_pool_flag_is_true_or_false(item):
    assert error(additional_karpenter_nodepools_config=[{"name": "gpu", **item}]).startswith(
        "rack:additional_karpenter_nodepools_config[0].dedicated: expected true or false, got "
    )


@pytest.mark.parametrize(
    "field, value",
    [
        # Karpenter decodes durations with Go's time.ParseDuration (int64 nanoseconds, about 2562047h):
        # longer ones match the CRD's pattern and then break the NodePool's decoding
        ("consolidate_after", "2562048h"),
        ("node_expiry", "9999999999999h"),
        ("consolidate_after", "2562047h60m"),
        # a budget's count is an IntOrString, 32 bits
        ("disruption_budget_nodes", "2147483648"),
    ],
)
def test_durations_and_budgets_karpenter_cannot_decode_are_refused(field, value):
    assert f"invalid {field} '{value}'" in pool_error(**{field: value})


def test_the_longest_durations_karpenter_decodes_pass():
    assert accepted(
        additional_karpenter_nodepools_config=[
            {
                "name": "gpu",
                "consolidate_after": "2562047h",
                "node_expiry": "Never",
                "disruption_budget_nodes": "2147483647",
            }
        ]
    )


def test_an_alias_pool_disk_below_the_eks_ami_snapshot_is_refused():
    """EC2 refuses a root volume below its snapshot (InvalidBlockDeviceMapping); the EKS-optimized AL2023
    AMIs an alias selects have a 20 GiB root snapshot. A pinned AMI's snapshot is read at preview."""
    assert pool_error(disk=19).endswith(
        "karpenter nodepool 'gpu': disk 19 GiB is smaller than the root snapshot of the EKS-optimized AL2023 AMI (20 "
        "GiB); give it a disk of 20 GiB or more"
    )
    assert error(karpenter_node_disk=5).startswith("rack:karpenter_node_disk: karpenter workload nodepool: disk 5 GiB")
    # Bottlerocket's data volume starts from a small image: a 10 GiB data disk is fine
    assert accepted(karpenter_node_os="bottlerocket", karpenter_node_disk=10)


def test_a_node_group_larger_than_eks_can_count_is_refused():
    # NodegroupScalingConfig's sizes are 32-bit integers in the EKS API
    assert error(additional_node_groups_config=[{"type": "m5.large", "max_size": 2**40}]).endswith(
        f"invalid max size: '{2**40}' (EKS takes at most 2147483647)"
    )


@pytest.mark.parametrize(
    "values",
    [
        {"additional_node_groups_config": [{"type": "mac1.metal"}]},
        {"additional_karpenter_nodepools_config": [{"name": "gpu", "instance_families": "mac2,m7i"}]},
        {"karpenter_instance_families": "mac2-m2pro"},
    ],
)
def test_mac_instances_are_not_for_eks_nodes(values):
    """EC2 Mac instances run only on Dedicated Hosts with macOS: no managed node group or Karpenter
    launches them, and no EKS node AMI boots on them."""
    assert "runs only on EC2 Dedicated Hosts with macOS, which EKS nodes cannot use" in error(**values)


@pytest.mark.parametrize(
    "field, value, problem",
    [
        (
            "instance_families",
            {"g5", "g6"},
            "a set has no order, so the objects it renders would change from one run to the next (give a list)",
        ),
        ("capacity_types", frozenset({"spot"}), "a set has no order"),
        ("ami_id", pulumi.Output.from_input("ami-0123456789abcdef0"), "a pulumi Output: spec fields take plain values"),
    ],
)
def test_a_spec_refuses_sets_and_outputs_naming_the_field(field, value, problem):
    with pytest.raises(SpecError) as refused:
        PoolSpec(name="ml", **{field: value})
    assert str(refused.value).startswith(f"PoolSpec.{field}: {problem}")


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


def test_a_value_too_deep_too_large_or_holding_itself_is_named_not_a_crash():
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    cases = [
        (
            lambda: PoolSpec(name="ml", labels=_deep(5000)),
            "PoolSpec.labels.a: input should be a valid string (got a dict nested too deep to show)",
        ),
        (
            lambda: PoolSpec(name="ml", instance_families=cyclic),
            "PoolSpec.instance_families[0]: input should be a valid string (got a list that holds itself)",
        ),
        (lambda: PoolSpec(name="ml", disk=10**5000), "PoolSpec.disk: a number too large (at most 2^63 - 1)"),
        (lambda: parse_rack_config(None), "rack: expected a mapping of the rack's keys to their values, got NoneType"),  # type: ignore[arg-type]
        (lambda: parse_services("[" * 100_000 + "]" * 100_000), "app:services: invalid JSON: nested too deep to read"),
        (
            lambda: parse_services('{"web": {"image": "x", "port": ' + "9" * 5000 + "}}"),
            "app:services: invalid JSON: a number too long to read (more than 4300 digits)",
        ),
        (lambda: parse_services({1: {"image": "x", "port": 80}}), "app:services: service names are text (got 1)"),
    ]
    for build, message in cases:
        with pytest.raises(ConfigError) as refused:
            build()
        assert str(refused.value) == message


def test_a_long_value_is_shown_cut():
    with pytest.raises(ConfigError) as refused:
        PoolSpec(name="ml", labels={"team": ["x" * 10_000]})
    assert len(str(refused.value)) < 400 and str(refused.value).endswith("...)")


@pytest.mark.parametrize(
    "values, expected",
    [
        # an empty item was dropped without a word; "," meant no families at all, so any family
        ({"karpenter_instance_families": ","}, "rack:karpenter_instance_families: an empty item in ','"),
        ({"karpenter_instance_families": "c7i,,m7i"}, "rack:karpenter_instance_families: an empty item in 'c7i,,m7i'"),
        (
            {"additional_karpenter_nodepools_config": [{"name": "gpu", "instance_families": "g5,g6,"}]},
            "rack:additional_karpenter_nodepools_config[0].instance_families: an empty item in 'g5,g6,'",
        ),
        ({"tags": "team=a,,cost=b"}, "rack:tags: an empty pair in 'team=a,,cost=b'"),
    ],
)
def test_an_empty_item_in_a_comma_list_is_refused(values, expected):
    assert error(**values).startswith(expected)


def test_an_empty_comma_list_is_not_set():
    assert accepted(karpenter_instance_families="") == accepted()


def test_a_json_number_too_long_to_read_is_named_without_pythons_advice():
    text = '[{"name": "gpu", "weight": ' + "9" * 5000 + "}]"
    message = error(additional_karpenter_nodepools_config=text)
    assert message == (
        "rack:additional_karpenter_nodepools_config: invalid JSON: a number too long to read (more than 4300 digits)"
    )


@pytest.mark.parametrize(
    "values, key",
    [
        # Python refuses to read more than 4,300 digits: such a count or duration was blamed on another key
        ({"karpenter_consolidate_after": "1" * 5000 + "s"}, "karpenter_consolidate_after"),
        ({"karpenter_disruption_budget_nodes": "1" * 5000}, "karpenter_disruption_budget_nodes"),
    ],
)
def test_a_number_of_thousands_of_digits_is_refused_by_its_own_rule(values, key):
    assert error(**values).startswith(f"rack:{key}: karpenter workload nodepool: invalid {key} '111")


def test_leading_zeros_do_not_make_a_count_too_large():
    assert accepted(karpenter_disruption_budget_nodes="0" * 5000 + "5")


@pytest.mark.parametrize(
    "field, value", [("name", "a" * 100_000), ("os", "9" * 5000), ("consolidate_after", "1" * 5000 + "s")]
)
def test_a_huge_value_is_shown_cut(field, value):
    with pytest.raises(SpecError) as caught:
        PoolSpec(**{"name": "ml", "instance_families": ["m6i"], field: value})
    message = str(caught.value)
    assert message.startswith(f"PoolSpec.{field}: ") and len(message) < 400 and "...'" in message


def test_a_spec_reports_every_problem_at_once():
    """Each rule a spec's fields break is a line of its error (a program in another language gets them all as
    per-property errors), not only the first; a rule reading a field that broke one is not judged."""
    with pytest.raises(SpecError) as caught:
        PoolSpec(name="ml", disk=0, weight=500, capacity_types=["x"], instance_families=["g6", "g6"])
    assert str(caught.value).splitlines() == [
        "PoolSpec.instance_families: karpenter nodepool 'ml': duplicate instance family 'g6'",
        "PoolSpec.capacity_types: karpenter nodepool 'ml': invalid capacity type 'x' (must be on-demand, spot or "
        "reserved)",
        "PoolSpec.disk: karpenter nodepool 'ml': disk must be positive (got '0')",
        "PoolSpec.weight: karpenter nodepool 'ml': weight must be 1-100 (got '500')",
    ]
    with pytest.raises(SpecError) as caught:
        NodeGroupSpec(instance_type="g6.2xlarge", min_size=-1, label="Bad_Label", capacity_type="CHEAP")
    assert [line.split(":")[0] for line in str(caught.value).splitlines()] == [
        "NodeGroupSpec.capacity_type",
        "NodeGroupSpec.min_size",
        "NodeGroupSpec.label",
    ]


# ---- an instance type its family does not come in ---------------------------------------------------------

G5_SIZES = "g5 comes in xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, 48xlarge"
CREATE = {
    "cluster_mode": "create",
    "vpc_id": "vpc-0a1b2c3d4e5f60718",
    "private_subnets_ids": "subnet-0a1b2c3d4e5f60711,subnet-0a1b2c3d4e5f60712",
}


@pytest.mark.parametrize(
    "values, expected",
    [
        # the lanes policy config's words, at the key that names the type
        (
            {"additional_node_groups_config": [{"type": "g5.large"}]},
            f"rack:additional_node_groups_config[0].type: 'g5.large' is no instance type (did you mean 'g5.xlarge'? "
            f"{G5_SIZES})",
        ),
        # of sizes spelled as alike, the smallest: g7 starts at 2xlarge
        (
            {"additional_node_groups_config": [{"type": "g7.xlarge"}]},
            "rack:additional_node_groups_config[0].type: 'g7.xlarge' is no instance type (did you mean 'g7.2xlarge'? "
            "g7 comes "
            "in 2xlarge, 4xlarge, 8xlarge, 12xlarge, 24xlarge, 48xlarge)",
        ),
        (
            {"additional_build_groups_config": [{"type": "c7i.large"}, {"type": "g5.nano"}]},
            f"rack:additional_build_groups_config[1].type: 'g5.nano' is no instance type ({G5_SIZES})",
        ),
        (
            {"build_node_enabled": True, "build_node_type": "c7i.large,c7i.nano"},
            "rack:build_node_type[1]: karpenter nodepool 'build': 'c7i.nano' is no instance type (c7i comes in large, "
            "xlarge, "
            "2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, metal-24xl, 48xlarge, metal-48xl)",
        ),
        (
            {**CREATE, "node_type": "t3.8xlarge"},
            "rack:node_type: 't3.8xlarge' is no instance type (did you mean 't3.xlarge'? t3 comes in nano, micro, "
            "small, "
            "medium, large, xlarge, 2xlarge)",
        ),
    ],
)
def test_a_size_its_family_does_not_come_in_is_refused_at_its_key(values, expected):
    assert error(**values) == expected


@pytest.mark.parametrize(
    "values, expected",
    [
        (
            {
                "additional_karpenter_nodepools_config": [
                    {"name": "gpu", "instance_families": "g5", "instance_sizes": "xlarge,large"}
                ]
            },
            "rack:additional_karpenter_nodepools_config[0].instance_sizes[1]: karpenter nodepool 'gpu': instance size "
            "'large': "
            f"'g5.large' is no instance type (did you mean 'g5.xlarge'? {G5_SIZES})",
        ),
        (
            {"karpenter_instance_families": "c7i,m7i", "karpenter_instance_sizes": "nano"},
            "rack:karpenter_instance_sizes[0]: karpenter workload nodepool: instance size 'nano': 'c7i.nano' is no "
            "instance type "
            "(c7i comes in large, xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, metal-24xl, "
            "48xlarge, "
            "metal-48xl); 'm7i.nano' is no instance type (m7i comes in large, xlarge, 2xlarge, 4xlarge, 8xlarge, "
            "12xlarge, "
            "16xlarge, 24xlarge, metal-24xl, 48xlarge, metal-48xl)",
        ),
    ],
)
def test_a_pool_size_none_of_its_families_comes_in_is_refused_at_its_key(values, expected):
    assert error(**values) == expected


@pytest.mark.parametrize("families, sizes", [("c7i,t3", "nano"), ("c7i,zz9", "nano"), ("", "nano")])
def test_a_pool_size_one_of_its_families_may_come_in_is_taken(families, sizes):
    """t3 comes in nano; a family the table does not size (zz9) may; a pool of any family may."""
    spec = accepted(
        additional_karpenter_nodepools_config=[{"name": "p", "instance_families": families, "instance_sizes": sizes}]
    )
    assert [p.instance_sizes for p in spec.pools if p.name == "p"] == [[sizes]]


def test_a_program_spec_names_the_type_its_family_does_not_come_in():
    with pytest.raises(SpecError) as caught:
        PoolSpec(name="ml", instance_types=["g5.xlarge", "g5.large"])
    assert str(caught.value) == (
        f"PoolSpec.instance_types[1]: karpenter nodepool 'ml': 'g5.large' is no instance type "
        f"(did you mean 'g5.xlarge'? {G5_SIZES})"
    )
    with pytest.raises(SpecError) as caught:
        NodeGroupSpec(instance_type="g5.large")
    assert str(caught.value).startswith("NodeGroupSpec.instance_type: 'g5.large' is no instance type (did you mean")


# Karpenter's instance-type reference (tests/fixtures/instance-types, aws/karpenter-provider-aws at 1d927085):
# every type each family comes in, from EC2's DescribeInstanceTypes
UPSTREAM = {name: family.types for name, family in karpenter_families().items()}
ANY_SIZE = sorted({name.split(".", 1)[1] for types in UPSTREAM.values() for name in types})


@settings(max_examples=150)
@given(family=st.sampled_from(sorted(UPSTREAM)), size=st.sampled_from(ANY_SIZE))
def test_a_node_group_type_is_refused_exactly_when_its_family_does_not_come_in_its_size(family, size):
    """Any family Karpenter lists in any size some family comes in: taken when EC2 has that type, else refused
    at ``type`` naming the value and every size the family comes in."""
    name = f"{family}.{size}"
    groups = {"additional_node_groups_config": [{"type": name}]}
    if name in UPSTREAM[family]:
        try:
            accepted(**groups)
        except ConfigError as exc:  # another rule of the type (a GPU family's driver): not this one
            assert "is no instance type" not in str(exc), str(exc)
        return
    message = error(**groups)
    assert message.startswith(f"rack:additional_node_groups_config[0].type: '{name}' is no instance type ("), message
    listed = message.rsplit(f"{family} comes in ", 1)[1].removesuffix(")").split(", ")
    assert sorted(listed) == sorted(t.split(".", 1)[1] for t in UPSTREAM[family]), message


@pytest.mark.parametrize("name", ["zz9.large", "g99.nano", "m99i.xlarge"])
def test_a_family_the_table_does_not_size_is_taken(name):
    """A family newer than the instance table is not refused for its sizes."""
    assert accepted(additional_node_groups_config=[{"type": name}]).node_groups[0].instance_type == name
    assert PoolSpec(name="new", instance_types=[name]).instance_types == [name]
