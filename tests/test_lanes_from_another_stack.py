"""A team with its own program places its workloads on the lanes of a rack another stack runs: the rack
stack's ``lanes`` output, through a ``pulumi.StackReference`` or as its JSON, given to ``Service`` and
``place()``, gets the refusal the policy pack would give, when the program runs, before the Deployment is
registered. The lanes here are what the prod rack program really exports (run offline), not a hand copy.
"""

from __future__ import annotations

import json

import pulumi
import pytest

from conftest import stack_config, run_rack
from mixed_os_racks import ClusterRef, ConfigError, PlacementError, Service, ServiceArgs, ServiceSpec, place
from mixed_os_racks.testing import RackMocks, set_mocks

RACK = "acme/rack/prod"


@pytest.fixture(scope="module")
def prod_lanes() -> dict:
    """The prod rack stack's ``lanes`` output, as ``pulumi stack output lanes --json`` would print it."""
    lanes = run_rack(stack_config("prod"), stack="prod").outputs["lanes"]
    assert {"gpu", "workload"} <= set(lanes) and lanes["gpu"]["gpu"] is True
    return lanes


def service(**fields) -> ServiceSpec:
    return ServiceSpec(name="inference", image="vllm/vllm-openai:v0.6.4", port=8000, **fields)


TOO_MANY_GPUS = dict(scale={"gpu": 64}, nodeSelectorLabels={"convox.io/nodepool": "gpu"})


def test_a_service_asking_more_gpus_than_any_lane_is_refused_through_a_stack_reference(prod_lanes):
    mocks = set_mocks(RackMocks(stack_outputs={RACK: {"lanes": prod_lanes}}), project="apps", stack="prod")

    @pulumi.runtime.test
    def program() -> None:
        rack = pulumi.StackReference(RACK)
        Service(
            "inference",
            ServiceArgs(
                service=service(**TOO_MANY_GPUS),
                cluster=ClusterRef.existing("prod", "prod-rack"),
                lanes=rack.get_output("lanes"),
            ),
        )

    with pytest.raises(
        ConfigError,
        match=r"^Service 'inference': service: service \"inference\" fits no lane: it requests nvidia.com/gpu 64",
    ):
        program()
    # the refusal comes before the Deployment: it is never registered
    assert not [r for r in mocks.resources if r.typ == "kubernetes:apps/v1:Deployment"]


def test_a_service_that_fits_a_lane_of_the_other_stack_is_built(prod_lanes):
    mocks = set_mocks(RackMocks(stack_outputs={RACK: {"lanes": prod_lanes}}), project="apps", stack="prod")

    @pulumi.runtime.test
    def program() -> None:
        rack = pulumi.StackReference(RACK)
        Service(
            "inference",
            ServiceArgs(
                service=service(scale={"gpu": 1}, nodeSelectorLabels={"convox.io/nodepool": "gpu"}),
                cluster=ClusterRef.existing("prod", "prod-rack"),
                lanes=rack.get_output("lanes"),
            ),
        )

    program()
    pod = mocks.registered("kubernetes:apps/v1:Deployment", "inference-deployment").inputs["spec"]["template"]["spec"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]


def test_the_lanes_json_is_judged_when_the_service_is_built(prod_lanes):
    text = json.dumps(prod_lanes)  # `pulumi stack output lanes --json`

    def program() -> None:
        Service(
            "inference",
            ServiceArgs(service=service(**TOO_MANY_GPUS), cluster=ClusterRef.existing("prod", "prod-rack"), lanes=text),
        )

    from mixed_os_racks.offline import run_program

    with pytest.raises(
        ConfigError,
        match=r"^Service 'inference': service: service \"inference\" fits no lane: it requests nvidia.com/gpu 64",
    ):
        run_program(program, {"aws:region": "us-east-1"})


def test_place_refuses_a_lane_the_other_stack_lacks_from_its_json_and_its_output(prod_lanes):
    with pytest.raises(
        PlacementError,
        match=r"targets karpenter nodepool 'gpus', which does not exist on this rack "
        r"\(did you mean 'gpu'\? existing pools: ",
    ):
        place({"convox.io/nodepool": "gpus"}, gpu=1, lanes=json.dumps(prod_lanes))
    assert place({"convox.io/nodepool": "gpu"}, gpu=1, lanes=json.dumps(prod_lanes)) == place(
        {"convox.io/nodepool": "gpu"}, gpu=1
    )

    set_mocks(RackMocks(stack_outputs={RACK: {"lanes": prod_lanes}}), project="apps", stack="prod")

    @pulumi.runtime.test
    def program() -> None:
        placed = place({"convox.io/nodepool": "gpus"}, gpu=1, lanes=pulumi.StackReference(RACK).get_output("lanes"))
        assert placed.tolerations  # given at once; judged when the lanes are known

    with pytest.raises(PlacementError, match=r"targets karpenter nodepool 'gpus', which does not exist on this rack"):
        program()


@pytest.mark.parametrize(
    "lanes, says",
    [
        ("{not json", "lanes: not the JSON of the rack's lanes"),
        ('"gpu"', "lanes: expected the rack's lanes output"),
        (
            json.dumps({"gpu": {"labels": {"convox.io/nodepool": "gpu"}, "taint": []}}),
            "lanes[0].taint: unknown key (did you mean 'taints'?)",
        ),
    ],
)
def test_lanes_that_are_no_lanes_are_refused_naming_them(lanes, says):
    with pytest.raises(PlacementError) as refused:
        place({"convox.io/nodepool": "gpu"}, lanes=lanes)
    assert str(refused.value).startswith(says)


def test_a_stack_reference_the_mocks_were_not_given_is_named():
    set_mocks(RackMocks(), project="apps", stack="prod")

    @pulumi.runtime.test
    def program() -> None:
        pulumi.StackReference("acme/rack/staging")

    with pytest.raises(Exception, match=r"no outputs of the stack 'acme/rack/staging' for its StackReference"):
        program()
