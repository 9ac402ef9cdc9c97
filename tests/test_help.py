"""What a newcomer reads: ``help()`` of each component, the errors of a mistyped spec field, and taints
that read the same in every output."""

from __future__ import annotations

import inspect
import pydoc
import re
import typing

import pulumi
import pytest

import mixed_os_racks
from mixed_os_racks import ConfigError, NodeGroupSpec, PoolSpec
from mixed_os_racks.args import required_keys
from mixed_os_racks.offline import run_program

COMPONENTS = sorted(name for name in mixed_os_racks.__all__ if f"{name}Args" in mixed_os_racks.__all__)


def test_every_component_is_covered():
    assert {
        "KarpenterPool",
        "NodeGroup",
        "NvidiaDevicePlugin",
        "GpuObservability",
        "KarpenterController",
        "RackCluster",
        "Rack",
        "Service",
        "ClusterAutoscaler",
        "MetricsServer",
    } == set(COMPONENTS)


@pytest.mark.parametrize("name", COMPONENTS)
def test_help_lists_the_args_the_outputs_and_an_example(name):
    component = getattr(mixed_os_racks, name)
    text = pydoc.render_doc(component, renderer=pydoc.plaintext)
    assert ":param str t:" not in text and "remote" not in text  # not the docstring of Pulumi's base class
    doc = inspect.getdoc(component)
    assert doc.index("Example") < doc.index("::\n") < doc.index(f"Args (``{name}Args``") < doc.index("Outputs")
    args = getattr(mixed_os_racks, f"{name}Args")
    for field in args.__annotations__:
        line = next(line for line in doc.splitlines() if line.startswith(f"    {field} ("))
        assert line.endswith("optional):") != (field in required_keys(args)), line
    outputs = [
        attr
        for cls in component.__mro__
        if cls.__module__.startswith("mixed_os_racks.")
        for attr, hint in cls.__dict__.get("__annotations__", {}).items()
        if typing.get_origin(hint) is pulumi.Output
    ]
    assert outputs
    for attr in outputs:
        assert re.search(rf"^    {attr} \(pulumi\.Output\[.*\]\):\n        \S", doc, re.M), attr


@pytest.mark.parametrize("name", COMPONENTS)
def test_the_example_in_help_runs(name):
    doc = inspect.getdoc(getattr(mixed_os_racks, name))
    example = doc[doc.index("::\n") + 3 : doc.index("\n\nArgs (")]
    code = "import pulumi\nfrom mixed_os_racks import *\n" + inspect.cleandoc(example)

    def program() -> None:
        exec(compile(code, f"help({name})", "exec"), {"__name__": "__main__"})

    run = run_program(program, {"aws:region": "us-east-1", "rack:cluster_name": "prod-rack"}, stack="help")
    assert any(r.type.startswith("rack:") for r in run.resources)


# ---- a mistyped spec field --------------------------------------------------------------------------------


def refused(build: typing.Callable[[], typing.Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        build()
    return str(caught.value)


def test_a_stack_config_key_as_a_spec_field_says_which_field_it_sets():
    assert "NodeGroupSpec.type: unknown field (did you mean instance_type? 'type' is its stack-config key)" in refused(
        lambda: NodeGroupSpec(type="g6.xlarge", min_size=1, max_size=2)
    )
    assert (
        "PoolSpec.karpenter_node_os: unknown field (did you mean os? 'karpenter_node_os' is its stack-config key)"
        in (refused(lambda: PoolSpec(name="ml", karpenter_node_os="al2023")))
    )


def test_a_misspelt_spec_field_gets_the_nearest_one_and_nonsense_gets_none():
    assert refused(lambda: PoolSpec(name="ml", dsik=100)) == "PoolSpec.dsik: unknown field (did you mean disk?)"
    assert refused(lambda: PoolSpec(name="ml", colour="blue")) == "PoolSpec.colour: unknown field"


# ---- taints, in Kubernetes' spelling everywhere -------------------------------------------------------------


def test_taints_read_as_pods_tolerate_them_in_every_output(prod_run):
    lanes = prod_run.outputs["lanes"]
    effects = {t["effect"] for lane in lanes.values() for t in lane["taints"]}
    assert effects == {"NoSchedule"}
    groups = [r for r in prod_run.resources if r.type == "rack:index:NodeGroup"]
    assert groups
    for group in groups:
        assert {t["effect"] for t in prod_run.component_outputs[group.urn]["taints"]} == {"NoSchedule"}, group.name
