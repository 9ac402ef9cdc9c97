"""The config rules: node groups, build groups and the GPU tier, in the seeds' own words."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mixed_os_racks import ConfigError, NodeGroupSpec, RackParams, parse_rack_params
from mixed_os_racks.spec import SpecError

NG = "additional_node_groups_config"
BG = "additional_build_groups_config"


def parse(**values: Any) -> RackParams:
    return parse_rack_params({"cluster_name": "c1", **values})


def error(**values: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(**values)
    return str(caught.value)


def group(**fields: Any) -> dict[str, Any]:
    return {"type": "g4dn.xlarge", **fields}


# ---- defaults ---------------------------------------------------------------------------------------


def test_node_group_defaults_are_the_seeds() -> None:
    ng = parse(**{NG: [{"type": "g4dn.xlarge"}]}).additional_node_groups_config[0]
    # no disk of its own: the rack's node_disk (20); tags are a mapping, empty by default
    assert (ng.disk, ng.capacity_type, ng.min_size, ng.max_size, ng.label, ng.dedicated, ng.ami_id, ng.tags) == (
        20,
        "ON_DEMAND",
        1,
        100,
        "custom",
        False,
        None,
        {},
    )
    assert (ng.name, ng.instance_type, ng.build) == ("rack-ng-0", "g4dn.xlarge", False)


def test_build_group_defaults_differ_in_min_size_and_label() -> None:
    bg = parse(**{BG: [{"type": "c6i.large"}]}).additional_build_groups_config[0]
    assert bg.build and bg.name == "rack-build-0"
    assert (bg.min_size, bg.max_size, bg.label) == (0, 100, "custom-build")


def test_gpu_tier_defaults() -> None:
    cfg = parse()
    assert cfg.node_disk == 20
    assert cfg.additional_node_groups_config == [] and cfg.additional_build_groups_config == []
    assert cfg.nvidia_device_plugin_enable is False
    assert cfg.nvidia_device_time_slicing_replicas == 0  # Convox's default: 0 (or 1) shares no GPU
    assert cfg.gpu_observability_enable is False
    assert cfg.gpu_observability_chart_version == "4.8.2"
    assert cfg.gpu_observability_service_monitor is False
    assert cfg.node_group_role_name is None


def test_seeds_json_string_is_accepted() -> None:
    text = json.dumps(
        [{"id": 7, "type": "g4dn.xlarge", "min_size": 1, "max_size": 3, "dedicated": True, "label": "gpu-inference"}]
    )
    ng = parse(**{NG: text}).additional_node_groups_config[0]
    assert (ng.name, ng.instance_type, ng.max_size, ng.dedicated, ng.label) == (
        "rack-ng-7",
        "g4dn.xlarge",
        3,
        True,
        "gpu-inference",
    )


def test_tags_as_a_mapping_or_the_seeds_text() -> None:
    a = parse(**{NG: [group(tags="team=ml,cost=gpu")]}).additional_node_groups_config[0]
    b = parse(**{NG: [group(tags={"team": "ml", "cost": "gpu"})]}).additional_node_groups_config[0]
    assert a.tags == b.tags == {"team": "ml", "cost": "gpu"}


def test_tags_are_a_mapping_end_to_end() -> None:
    """A mapping stays the mapping it is: ``{"a": "b,c=d"}`` used to be joined and split into two tags.
    EKS takes letters, digits, spaces and + - = . _ : / @ in tag values (its TagMap rules), so the
    comma is refused by name, and an '=' stays in its one value."""
    ng = parse(**{NG: [group(tags={"a": "b=c", "team": "ml"})]}).additional_node_groups_config[0]
    assert ng.tags == {"a": "b=c", "team": "ml"}
    assert error(**{NG: [group(tags={"a": "b,c=d"})]}) == (
        f"rack:{NG}[0]: invalid tags: tag 'a' value 'b,c=d': ',' is not allowed in a tag (AWS takes letters, digits, "
        "spaces and _.:/=+-@ only; use another character, e.g. ':' or '/')"
    )


# ---- ids --------------------------------------------------------------------------------------------


def test_ids_are_backfilled_by_position_when_no_entry_has_one() -> None:
    cfg = parse(**{NG: [group(), group(type="m5.large")], BG: [group()]})
    assert [g.name for g in cfg.additional_node_groups_config] == ["rack-ng-0", "rack-ng-1"]
    assert [g.name for g in cfg.additional_build_groups_config] == ["rack-build-0"]


def test_explicit_ids_are_kept() -> None:
    cfg = parse(**{NG: [group(id=5), group(id=2)]})
    assert [g.name for g in cfg.additional_node_groups_config] == ["rack-ng-5", "rack-ng-2"]


@pytest.mark.parametrize("key", [NG, BG])
def test_some_groups_missing_id(key: str) -> None:
    assert error(**{key: [group(id=1), group()]}) == f"rack:{key}: some node groups missing id property"


@pytest.mark.parametrize("key", [NG, BG])
def test_duplicate_id(key: str) -> None:
    assert error(**{key: [group(id=3), group(id=3)]}) == f"rack:{key}: duplicate node group id is found: 3"


# ---- one message per rule ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"type": None}, "node type is required: ''"),
        ({"type": "  "}, "node type is required: '  '"),
        ({"type": "g4dn"}, "invalid node type 'g4dn' (must look like g4dn.xlarge)"),
        ({"disk": 19}, "node disk is less than 20: '19'"),
        ({"capacity_type": "spot"}, "invalid capacity_type 'spot' (must be ON_DEMAND, SPOT or CAPACITY_BLOCK)"),
        (
            {"capacity_type": "On_Demand"},
            "invalid capacity_type 'On_Demand' (must be ON_DEMAND, SPOT or CAPACITY_BLOCK)",
        ),
        ({"min_size": -1}, "invalid min size: '-1'"),
        ({"max_size": 0}, "invalid max size: '0'"),
        ({"min_size": 4, "max_size": 3}, "invalid min size: '4' must be less or equal to max size"),
        ({"label": "GPU"}, "label value 'GPU' invalid, must contain only lowercase alphanumeric and dashes"),
        (
            {"label": "gpu_inference"},
            "label value 'gpu_inference' invalid, must contain only lowercase alphanumeric and dashes",
        ),
        ({"label": ""}, "label value '' invalid, must contain only lowercase alphanumeric and dashes"),
        ({"dedicated": True, "label": None}, "label is required when dedicated option is set"),
        ({"dedicated": True, "label": ""}, "label is required when dedicated option is set"),
        ({"tags": "team"}, "invalid 'tags', use format: k1=v1,k2=v2"),
        ({"tags": "team=ml,=x"}, "invalid 'tags', use format: k1=v1,k2=v2"),
        ({"tags": "Name=gpu"}, "reserved tag key 'Name' is not allowed"),
        ({"tags": "a=b,RACK=x"}, "reserved tag key 'RACK' is not allowed"),
        (
            {"ami_id": "ami-XYZ"},
            "node group 'rack-ng-0': invalid ami_id 'ami-XYZ' (must look like ami-0123456789abcdef0)",
        ),
    ],
)
def test_node_group_rule(fields: dict[str, Any], message: str) -> None:
    assert error(**{NG: [group(**fields)]}) == f"rack:{NG}[0]: {message}"


def test_build_group_rules_name_the_build_list_and_the_build_group() -> None:
    """One name for one thing: the config names the group as the component and the pack do."""
    assert error(**{BG: [group(), group(ami_id="ami-123")]}) == (
        f"rack:{BG}[1]: node group 'rack-build-1': invalid ami_id 'ami-123' (must look like ami-0123456789abcdef0)"
    )
    assert (
        error(**{BG: [group(min_size=2, max_size=1)]})
        == f"rack:{BG}[0]: invalid min size: '2' must be less or equal to max size"
    )


def test_unknown_group_field_is_an_error() -> None:
    assert error(**{NG: [group(gpu=True)]}) == f"rack:{NG}[0].gpu: unknown field"
    assert error(**{BG: [group(instance_type="x")]}) == (
        f"rack:{BG}[0].instance_type: unknown field (did you mean type? 'instance_type' is the NodeGroupSpec field it "
        f"sets)"
    )
    assert error(**{NG: [group(min_sise=1)]}) == f"rack:{NG}[0].min_sise: unknown field (did you mean min_size?)"


def test_wrong_value_type_names_path_and_value() -> None:
    text = error(**{NG: [group(min_size="three")]})
    assert text.startswith(f"rack:{NG}[0].min_size: ") and '"three"' in text


def test_invalid_json_string() -> None:
    assert error(**{NG: "[{"}).startswith(f"rack:{NG}: invalid JSON: ")


def test_node_disk_rule() -> None:
    assert error(node_disk=10) == "rack:node_disk: node disk is less than 20: '10'"


def test_observability_needs_the_device_plugin() -> None:
    assert error(gpu_observability_enable=True) == (
        "rack:gpu_observability_enable: gpu_observability_enable requires nvidia_device_plugin_enable "
        "(dcgm-exporter reads the GPUs the device plugin exposes)"
    )
    assert parse(gpu_observability_enable=True, nvidia_device_plugin_enable=True).gpu_observability_enable


def test_time_slicing_replicas_rule() -> None:
    assert error(nvidia_device_time_slicing_replicas=-1) == (
        "rack:nvidia_device_time_slicing_replicas: invalid nvidia_device_time_slicing_replicas '-1' (must be 1 or more)"
    )
    # Convox's default, 0, shares no GPU, as 1 does; neither needs the device plugin switched on
    for none in (0, 1):
        assert parse(nvidia_device_time_slicing_replicas=none).spec().device_plugin is None
        on = parse(nvidia_device_time_slicing_replicas=none, nvidia_device_plugin_enable=True).spec().device_plugin
        assert on is not None and on.time_slicing_replicas == 1


def test_chart_version_rule() -> None:
    on = {"nvidia_device_plugin_enable": True, "gpu_observability_enable": True}
    assert parse(gpu_observability_chart_version="4.9.0", **on).gpu_observability_chart_version == "4.9.0"
    assert error(gpu_observability_chart_version="latest") == (
        "rack:gpu_observability_chart_version: invalid gpu_observability_chart_version 'latest' (must be a chart "
        "version like 4.8.2)"
    )


def test_node_group_role_name_rule() -> None:
    assert parse(node_group_role_name="rack-nodes").node_group_role_name == "rack-nodes"
    assert error(node_group_role_name="arn:aws:iam::1:role/x") == (
        "rack:node_group_role_name: invalid node_group_role_name 'arn:aws:iam::1:role/x' (must be an IAM role name, "
        "not an ARN)"
    )


def test_label_null_without_dedicated_means_no_label() -> None:
    assert parse(**{NG: [group(label=None)]}).additional_node_groups_config[0].label is None


@given(st.integers(min_value=0, max_value=500), st.integers(min_value=1, max_value=500))
def test_sizes_are_accepted_exactly_when_min_le_max(min_size: int, max_size: int) -> None:
    values = {"cluster_name": "c1", NG: [group(min_size=min_size, max_size=max_size)]}
    if min_size <= max_size:
        ng = parse_rack_params(values).additional_node_groups_config[0]
        assert (ng.min_size, ng.max_size) == (min_size, max_size)
    else:
        with pytest.raises(ConfigError, match="must be less or equal to max size"):
            parse_rack_params(values)


def test_models_validate_on_their_own() -> None:
    assert error(**{NG: [{}]}) == f"rack:{NG}[0]: node type is required: ''"
    with pytest.raises(SpecError, match=r"^NodeGroupSpec.instance_type: required$"):
        NodeGroupSpec()  # type: ignore[call-arg]
    with pytest.raises(SpecError, match=r"^NodeGroupSpec.instance_type: node type is required: ' '$"):
        NodeGroupSpec(instance_type=" ")
    assert parse(**{BG: [{"type": "c6i.large"}]}).additional_build_groups_config[0].label == "custom-build"
