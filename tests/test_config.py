"""The stack config: the seeds' parameters, defaults, rules and wording."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mixed_os_racks import ConfigError, parse_rack_config, parse_rack_params
from mixed_os_racks.pack import rules


def parse(**values):
    """The validated parameters (the seeds' names)."""
    values.setdefault("cluster_name", "test-rack")
    return parse_rack_params(values)


def spec(**values):
    """The rack they describe."""
    return parse(**values).spec()


def error_of(**values) -> str:
    with pytest.raises(ConfigError) as exc:
        parse(**values)
    return str(exc.value)


def pool_error(**pool) -> str:
    pool.setdefault("name", "gpu")
    return error_of(additional_karpenter_nodepools_config=[pool])


def test_defaults_are_the_seeds():
    config = parse()
    workload = config.spec().pools[0]
    assert config.karpenter_node_os == "al2023"
    assert config.spec().node_role_name == "KarpenterNodeRole-test-rack"
    assert (workload.name, workload.os, workload.alias) == ("workload", "al2023", "al2023@latest")
    assert workload.capacity_types == ["on-demand"]
    assert workload.arch == ["amd64"]
    assert (workload.cpu_limit, workload.memory_limit_gb) == (100, 400)
    assert workload.consolidation_policy == "WhenEmptyOrUnderutilized"
    assert (workload.consolidate_after, workload.node_expiry, workload.disruption_budget_nodes) == (
        "30s",
        "720h",
        "10%",
    )
    assert workload.volume_type == "gp3"


def test_pool_defaults():
    (pool,) = parse(additional_karpenter_nodepools_config=[{"name": "gpu"}]).additional_karpenter_nodepools_config
    assert (pool.arch, pool.capacity_types, pool.cpu_limit, pool.memory_limit_gb) == (
        ["amd64"],
        ["on-demand"],
        100,
        400,
    )
    assert pool.disruption_budget_nodes == "10%"
    assert pool.ami_id is None and pool.weight is None and not pool.dedicated


def test_cluster_name_is_required():
    with pytest.raises(ConfigError, match=r"^rack:cluster_name: required$"):
        parse_rack_config({})


def test_node_role_defaults_from_cluster_and_can_be_set():
    assert spec(node_role_name="my-role").node_role_name == "my-role"


@pytest.mark.parametrize("value", ["bottlerocket", "Bottlerocket", "BOTTLEROCKET"])
def test_node_os_is_case_insensitive(value):
    workload = spec(karpenter_node_os=value).pools[0]
    assert workload.os == "bottlerocket"
    assert workload.alias == "bottlerocket@latest"


def test_node_os_rejects_other_values():
    assert (
        error_of(karpenter_node_os="ubuntu")
        == "rack:karpenter_node_os: invalid karpenter_node_os 'ubuntu' (must be al2023 or bottlerocket)"
    )


@pytest.mark.parametrize("alias", ["al2023@latest", "al2023@v20261115"])
def test_ami_alias_accepted(alias):
    assert spec(karpenter_ami_alias=alias).pools[0].alias == alias


@pytest.mark.parametrize("alias", ["al2023@v2026", "al2@latest", "bottlerocket@latest", "latest"])
def test_ami_alias_rejected(alias):
    assert error_of(karpenter_ami_alias=alias) == (
        f"rack:karpenter_ami_alias: invalid karpenter_ami_alias '{alias}' (must be al2023@latest or al2023@vYYYYMMDD)"
    )


@pytest.mark.parametrize("alias", ["al2023@v20241399", "al2023@v00000000", "al2023@v20250229"])
def test_an_ami_alias_of_a_day_no_calendar_has_is_rejected(alias):
    day = alias.removeprefix("al2023@v")
    assert error_of(karpenter_ami_alias=alias) == (
        f"rack:karpenter_ami_alias: invalid karpenter_ami_alias '{alias}' ({day} is no date: an EKS AMI release is "
        "named by the day it was built, vYYYYMMDD)"
    )
    assert spec(karpenter_ami_alias="al2023@v20240229").pools[0].alias == "al2023@v20240229"  # a leap day


def test_seed_json_strings_and_csv_strings():
    text = json.dumps(
        [{"name": "gpu", "instance_families": "g5,g6", "capacity_types": "on-demand,spot", "disk": "200"}]
    )
    config = parse(
        additional_karpenter_nodepools_config=text, karpenter_instance_families="c6i, m6i", karpenter_cpu_limit="64"
    )
    (pool,) = config.additional_karpenter_nodepools_config
    assert pool.instance_families == ["g5", "g6"] and pool.capacity_types == ["on-demand", "spot"] and pool.disk == 200
    assert config.karpenter_instance_families == ["c6i", "m6i"] and config.karpenter_cpu_limit == 64


def test_yaml_lists_work_too():
    config = parse(additional_karpenter_nodepools_config=[{"name": "gpu", "instance_families": ["g5", "g6"]}])
    assert config.additional_karpenter_nodepools_config[0].instance_families == ["g5", "g6"]


def test_bad_json_names_the_key():
    assert error_of(additional_karpenter_nodepools_config='[{"name": "gpu"').startswith(
        "rack:additional_karpenter_nodepools_config: invalid JSON:"
    )


def test_unknown_top_level_key():
    assert (
        error_of(karpenter_node_oss="al2023")
        == "rack:karpenter_node_oss: unknown field; did you mean rack:karpenter_node_os?"
    )
    assert error_of(zzz_unknown="al2023") == "rack:zzz_unknown: unknown field"  # nothing close: nothing suggested


def test_unknown_pool_field_names_its_path():
    assert pool_error(amiid="ami-0123456789abcdef0") == (
        "rack:additional_karpenter_nodepools_config[0].amiid: unknown field (did you mean ami_id?)"
    )


@pytest.mark.parametrize("name", ["GPU", "1gpu", "gpu_pool", "g" * 64, ""])
def test_pool_name_format(name):
    assert pool_error(name=name).endswith(
        f"karpenter nodepool name '{name}' must be lowercase alphanumeric with dashes, max 63 chars"
    )


@pytest.mark.parametrize("name", ["workload", "build", "default", "system"])
def test_reserved_pool_names(name):
    assert (
        pool_error(name=name)
        == f"rack:additional_karpenter_nodepools_config[0].name: karpenter nodepool name '{name}' is reserved"
    )


def test_duplicate_pool_names():
    assert error_of(additional_karpenter_nodepools_config=[{"name": "gpu"}, {"name": "gpu"}]) == (
        "rack:additional_karpenter_nodepools_config: duplicate karpenter nodepool name: gpu"
    )


@pytest.mark.parametrize(
    "groups, name",
    [
        ({"additional_node_groups_config": [{"type": "c5.large"}]}, "rack-ng-0"),
        ({"additional_build_groups_config": [{"type": "c5.large"}]}, "rack-build-0"),
        ({"additional_node_groups_config": [{"type": "c5.large", "id": 7}]}, "rack-ng-7"),
    ],
)
def test_a_pool_may_not_take_a_node_groups_lane_name(groups, name):
    """Pools and node groups share one namespace: the lanes output, and --allow-lane-removal."""
    assert error_of(**groups, additional_karpenter_nodepools_config=[{"name": name}]) == (
        f"rack:additional_karpenter_nodepools_config: karpenter nodepool '{name}': name '{name}' is also a node "
        "group's: the rack's lanes are named alike, so one would hide the other (rename the pool)"
    )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("capacity_types", "dedicated", "invalid capacity type 'dedicated' (must be on-demand, spot or reserved)"),
        ("arch", "x86_64", "invalid arch 'x86_64' (must be amd64 or arm64)"),
        ("cpu_limit", 0, "cpu_limit must be positive (got '0')"),
        ("memory_limit_gb", -1, "memory_limit_gb must be positive (got '-1')"),
        ("consolidate_after", "30", "invalid consolidate_after '30' (use a duration like 30s, 5m or 1h)"),
        ("node_expiry", "30d", "invalid node_expiry '30d' (use hours like 720h, or Never)"),
        (
            "disruption_budget_nodes",
            "101%",
            "invalid disruption_budget_nodes '101%' (use a percentage like 10% or a count)",
        ),
        ("volume_type", "st1", "invalid volume_type 'st1' (must be one of gp2, gp3, io1, io2)"),
        ("weight", 101, "weight must be 1-100 (got '101')"),
        ("weight", 0, "weight must be 1-100 (got '0')"),  # the NodePool CRD: minimum 1
        ("labels", "convox.io/nodepool=x", "label 'convox.io/nodepool' is reserved"),
        # what the rack writes: a node group's label, the GPU vendor the device plugin selects, the system lane
        ("labels", "convox.io/label=x", "label 'convox.io/label' is reserved"),
        ("labels", "convox.io/gpu-vendor=nvidia", "label 'convox.io/gpu-vendor' is reserved"),
        ("labels", "convox.io/system-node=true", "label 'convox.io/system-node' is reserved"),
        (
            "taints",
            "a=b:NoWay",
            "invalid taint effect 'NoWay' (must be one of NoSchedule, PreferNoSchedule, NoExecute)",
        ),
        ("ami_id", "ami-XYZ", "invalid ami_id 'ami-XYZ' (must look like ami-0123456789abcdef0)"),
    ],
)
def test_pool_rules(field, value, message):
    assert pool_error(**{field: value}) == (
        f"rack:additional_karpenter_nodepools_config[0].{field}: karpenter nodepool 'gpu': {message}"
    )


def test_consolidation_policy_values():
    assert pool_error(consolidation_policy="Always").endswith(
        "invalid consolidation_policy 'Always' (must be WhenEmpty or WhenEmptyOrUnderutilized)"
    )


@pytest.mark.parametrize("value", ["30s", "5m", "1h"])
def test_consolidate_after_accepted(value):
    assert parse(additional_karpenter_nodepools_config=[{"name": "a", "consolidate_after": value}])


@pytest.mark.parametrize("value", ["10%", "100%", "0", "5"])
def test_budget_accepted(value):
    assert spec(karpenter_disruption_budget_nodes=value).pools[0].disruption_budget_nodes == value


def test_node_expiry_never():
    assert spec(karpenter_node_expiry="Never").pools[0].node_expiry == "Never"


def test_iops_are_refused_for_gp2():
    """gp2's IOPS are 3 per GiB and cannot be provisioned (EC2: "The parameter iops is not supported for gp2
    volumes")."""
    assert pool_error(volume_type="gp2", volume_iops=4000) == (
        "rack:additional_karpenter_nodepools_config[0].volume_iops: "
        "karpenter nodepool 'gpu': volume_iops requires volume_type gp3, io1 or io2 (currently gp2)"
    )


@pytest.mark.parametrize("iops", [2999, 80001])
def test_iops_range(iops):
    assert pool_error(volume_iops=iops, disk=200).endswith(f"invalid volume_iops '{iops}' (must be 3000-80000)")


@pytest.mark.parametrize("throughput", [124, 2001])
def test_throughput_range(throughput):
    """gp3 throughput is 125-2,000 MiB/s since EC2 raised gp3's limits in 2025 (botocore's EC2 model, 2026-11)."""
    assert pool_error(volume_throughput=throughput, volume_iops=8000, disk=100).endswith(
        f"invalid volume_throughput '{throughput}' (must be 125-2000)"
    )


def test_labels_and_taints_in_seed_format():
    (pool,) = parse(
        additional_karpenter_nodepools_config=[
            {"name": "a", "labels": "team=ml,tier=gpu", "taints": "x=y:NoSchedule,z:NoExecute"}
        ]
    ).additional_karpenter_nodepools_config
    assert pool.labels == {"team": "ml", "tier": "gpu"}
    assert [(t.key, t.value, t.effect) for t in pool.taints] == [("x", "y", "NoSchedule"), ("z", None, "NoExecute")]


def test_malformed_taint():
    assert pool_error(taints="novalue").endswith("invalid taint 'novalue', use format: key=value:Effect or key:Effect")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "karpenter_capacity_types",
            "dedicated",
            "invalid capacity type 'dedicated' (must be on-demand, spot or reserved)",
        ),
        (
            "karpenter_capacity_types",
            "reserved",
            "invalid capacity type 'reserved' (the default lane takes on-demand or spot; "
            "reserved capacity is an additional pool's, with capacity_reservation_ids)",
        ),
        ("karpenter_arch", "arm", "invalid karpenter_arch 'arm' (must be amd64 or arm64)"),
        ("karpenter_cpu_limit", 0, "karpenter_cpu_limit must be positive (got '0')"),
        (
            "karpenter_consolidate_after",
            "soon",
            "invalid karpenter_consolidate_after 'soon' (use a duration like 30s, 5m or 1h)",
        ),
        (
            "karpenter_node_volume_type",
            "sc1",
            "invalid karpenter_node_volume_type 'sc1' (must be one of gp2, gp3, io1, io2)",
        ),
        ("karpenter_node_labels", "convox.io/nodepool=x", "label 'convox.io/nodepool' is reserved"),
        ("karpenter_node_labels", "convox.io/system-node=true", "label 'convox.io/system-node' is reserved"),
        (
            "karpenter_node_taints",
            "a:Bad",
            "invalid taint effect 'Bad' (must be one of NoSchedule, PreferNoSchedule, NoExecute)",
        ),
        # a value listed twice is refused, not passed on to the NodePool
        ("karpenter_instance_families", "c6i,m7i,c6i", "duplicate instance family 'c6i'"),
        ("karpenter_instance_sizes", "large,large", "duplicate instance size 'large'"),
        ("karpenter_capacity_types", "spot,on-demand,spot", "duplicate capacity type 'spot'"),
        ("karpenter_arch", "amd64,amd64", "duplicate karpenter_arch 'amd64'"),
    ],
)
def test_workload_rules_name_their_key(key, value, message):
    # the pool's rules, in the words the stack user wrote: a field named by its rack key
    assert error_of(**{key: value}) == f"rack:{key}: karpenter workload nodepool: {message}"


def test_bottlerocket_workload_with_gpu_families_is_refused():
    assert error_of(karpenter_node_os="bottlerocket", karpenter_instance_families="m6i,g5") == (
        "rack:karpenter_node_os: karpenter workload nodepool: instance families g5 make this a GPU lane, "
        "and GPU lanes must run Amazon Linux 2023, not Bottlerocket (set karpenter_node_os 'al2023', or move them to "
        "an AL2023 pool or node group)"
    )


def test_every_error_is_reported():
    message = error_of(karpenter_node_oss="x", additional_karpenter_nodepools_config=[{"name": "Bad"}])
    assert len(message.splitlines()) == 2


def test_type_errors_name_key_and_value():
    assert error_of(karpenter_cpu_limit="lots") == (
        'rack:karpenter_cpu_limit: input should be a valid integer, unable to parse string as an integer (got "lots")'
    )


# ---- the AMI id rule, property-based -------------------------------------------------------------

HEX = "0123456789abcdef"


@given(st.sampled_from([8, 17]).flatmap(lambda n: st.text(HEX, min_size=n, max_size=n)))
def test_valid_ami_ids_pass(digits):
    ami = f"ami-{digits}"
    assert rules.invalid_ami_id("x", ami) is None
    assert parse(additional_karpenter_nodepools_config=[{"name": "gpu", "ami_id": ami}])


@given(st.text(HEX, max_size=20).filter(lambda d: len(d) not in (8, 17)))
def test_wrong_length_fails(digits):
    assert (
        rules.invalid_ami_id("x", f"ami-{digits}")
        == f"x: invalid ami_id 'ami-{digits}' (must look like ami-0123456789abcdef0)"
    )


@given(
    st.integers(min_value=0, max_value=16),
    st.sampled_from([8, 17]),
    st.sampled_from(sorted(set(string.printable) - set(HEX))),
)
def test_a_foreign_character_fails(position, length, bad):
    digits = list("0" * length)
    digits[position % length] = bad
    ami = "ami-" + "".join(digits)
    assert rules.invalid_ami_id("x", ami) == f"x: invalid ami_id '{ami}' (must look like ami-0123456789abcdef0)"


@given(st.text(max_size=30))
def test_anything_without_the_prefix_fails(text):
    if not text.startswith("ami-"):
        assert rules.invalid_ami_id("x", text) == f"x: invalid ami_id '{text}' (must look like ami-0123456789abcdef0)"
