"""Kubernetes' scheduling by labels and taints (``policies/scheduling.py``), as properties.

Each property is the upstream rule, read from kubernetes/kubernetes:

* ``ToleratesTaint`` (``staging/src/k8s.io/api/core/v1/toleration.go``): an empty toleration effect
  matches every effect, else the effects must be equal; an empty key (with ``Exists``) matches every
  key, else the keys must be equal; then ``Exists`` matches any value, ``Equal`` or no operator an
  equal value, ``Lt``/``Gt`` compare the values as integers (a value that is not one never matches),
  any other operator nothing.
* Label requirements (``k8s.io/apimachinery/pkg/labels/selector.go``, ``Requirement.Matches``):
  ``In`` needs the label with one of the values; ``NotIn`` holds when the label is absent or has none
  of them; ``Exists``/``DoesNotExist`` test presence. Node affinity terms are ORed and an empty term
  matches nothing (``component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go``).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mixed_os_racks.pack import scheduling


KEYS = st.sampled_from(["", "dedicated-node", "nvidia.com/gpu", "team"])
VALUES = st.sampled_from(["", "gpu", "ml", "1", "7", "true"])
EFFECTS = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])
TAINTS = st.builds(scheduling.NodeTaint, KEYS.filter(bool), VALUES, EFFECTS)
TOLERATIONS = st.builds(
    scheduling.Toleration,
    KEYS,
    st.sampled_from(["", "Equal", "Exists", "Lt", "Gt", "Bogus"]),
    VALUES,
    st.sampled_from(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]),
)


@given(taint=TAINTS, effect=EFFECTS)
def test_an_empty_key_exists_toleration_tolerates_every_taint_of_its_effect(taint, effect):
    assert scheduling.Toleration(operator="Exists").tolerates(taint)
    assert scheduling.Toleration(operator="Exists", effect=effect).tolerates(taint) == (taint.effect == effect)


@given(toleration=TOLERATIONS, taint=TAINTS)
def test_a_toleration_tolerates_by_effect_key_then_operator(toleration, taint):
    verdict = toleration.tolerates(taint)
    if toleration.effect and toleration.effect != taint.effect:
        assert not verdict
    elif toleration.key and toleration.key != taint.key:
        assert not verdict
    elif toleration.operator in ("", "Equal"):
        assert verdict == (toleration.value == taint.value)
    elif toleration.operator == "Exists":
        assert verdict
    elif toleration.operator in ("Lt", "Gt") and toleration.value.isdigit() and taint.value.isdigit():
        mine, theirs = int(toleration.value), int(taint.value)
        assert verdict == (theirs < mine if toleration.operator == "Lt" else theirs > mine)
    else:
        assert not verdict  # unknown operators, or Lt/Gt on values that are not integers


@given(
    labels=st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["1", "2", "x"]), max_size=3),
    values=st.lists(st.sampled_from(["1", "2", "x"]), max_size=2),
    operator=st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
)
def test_requirements_match_labels_as_label_selectors_do(labels, values, operator):
    requirement = scheduling.PodRequirement("a", operator, tuple(values))
    present = "a" in labels
    expected = {
        "In": present and labels.get("a") in values,
        "NotIn": not present or labels.get("a") not in values,
        "Exists": present,
        "DoesNotExist": not present,
    }[operator]
    assert requirement.holds(labels) == expected
    selection = scheduling.Selection(terms=((requirement,), ()))  # an empty term matches nothing
    assert selection.matches(labels, frozenset({"a"})) == expected
    assert selection.matches(labels, frozenset()) is True  # a key no lane declares is not judged


LABEL_VALUES = st.sampled_from(["1", "2"])
REQUIREMENTS = st.builds(
    scheduling.PodRequirement,
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
    st.lists(LABEL_VALUES, min_size=1, max_size=2).map(tuple),
)


@given(
    lane=st.dictionaries(st.sampled_from(["a", "b"]), LABEL_VALUES),
    node=st.dictionaries(st.just("c"), LABEL_VALUES),
    node_selector=st.lists(REQUIREMENTS, max_size=1).map(tuple),
    terms=st.none() | st.lists(st.lists(REQUIREMENTS, max_size=2).map(tuple), max_size=3).map(tuple),
)
def test_a_selection_on_a_lane_keeps_the_terms_that_select_it_and_no_node_is_won_or_lost(
    lane, node, node_selector, terms
):
    # the lane declares "a" and "b"; its nodes carry more ("c"), which only the node knows
    selection = scheduling.Selection(node_selector, terms)
    known = frozenset({"a", "b"})
    on = selection.on(lane, known)
    assert (on is not None) == selection.matches(lane, known)
    labels = {**lane, **node}
    everything = known | {"c"}
    if on is None:
        assert not selection.matches(labels, everything)
        return
    assert on.matches(labels, everything) == selection.matches(labels, everything)
    if terms is not None:  # each kept term selects the lane; each dropped term does not
        assert set(on.terms or ()) == {t for t in terms if t and all(r.key not in known or r.holds(lane) for r in t)}


def test_a_pod_spec_is_its_node_selector_and_any_of_its_affinity_terms():
    pod = {
        "nodeSelector": {"a": "1"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "b", "operator": "In", "values": ["x"]}]},
                        {"matchExpressions": [{"key": "c", "operator": "Exists"}]},
                    ]
                }
            }
        },
        "tolerations": [{"key": "k", "operator": "Equal", "value": 1, "effect": "NoSchedule"}],
    }
    selection = scheduling.selection_of(pod)
    known = frozenset("abc")
    assert selection.matches({"a": "1", "b": "x"}, known) and selection.matches({"a": "1", "c": ""}, known)
    assert not selection.matches({"a": "2", "b": "x"}, known) and not selection.matches({"a": "1"}, known)
    assert scheduling.tolerations_of(pod) == (scheduling.Toleration("k", "Equal", "1", "NoSchedule"),)
    assert scheduling.selection_of({}).empty and scheduling.selection_of({}).matches({}, known)


def test_gt_and_lt_compare_integer_label_values():
    more = scheduling.PodRequirement("gpus", "Gt", ("1",))
    assert more.holds({"gpus": "2"}) and not more.holds({"gpus": "1"}) and not more.holds({"gpus": "many"})
    assert not more.holds({}) and scheduling.PodRequirement("gpus", "Lt", ("4",)).holds({"gpus": "2"})


def test_eks_effect_spellings_read_as_kubernetes_and_only_two_effects_block():
    assert scheduling.NodeTaint.read({"key": "k", "value": "v", "effect": "NO_SCHEDULE"}) == scheduling.NodeTaint(
        "k", "v", "NoSchedule"
    )
    assert scheduling.NodeTaint.read({"key": "k", "effect": "NO_EXECUTE"}).blocking
    assert not scheduling.NodeTaint.read({"key": "k", "effect": "PREFER_NO_SCHEDULE"}).blocking
    assert str(scheduling.NodeTaint("nvidia.com/gpu", "", "NoSchedule")) == "nvidia.com/gpu:NoSchedule"


# ---- what the API server refuses ------------------------------------------------------------------------------

from mixed_os_racks import syntax  # noqa: E402
from mixed_os_racks.pack import checks, pods  # noqa: E402

TOLERATION_TEXT = st.sampled_from(
    ["", "gpu", "nvidia.com/gpu", "dedicated node", "Convox.io/x", "-bad", "true", "a" * 64]
)
A_TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": TOLERATION_TEXT,
        "operator": st.sampled_from(["", "Equal", "Exists", "In"]),
        "value": TOLERATION_TEXT,
        "effect": st.sampled_from(["", "NoSchedule", "NoExecute", "PreferNoSchedule", "NoSchedul"]),
        "tolerationSeconds": st.integers(0, 600),
    },
)


@given(A_TOLERATION)
def test_the_pack_refuses_the_tolerations_the_components_refuse(toleration):
    """Two readings of kubernetes' ValidateTolerations (pkg/apis/core/validation) agree: the components' check of a
    service's tolerations, and the pack's of a pod's (operators Lt/Gt, which only newer clusters take, aside)."""
    found = scheduling.refusals({"tolerations": [toleration]}, "spec")
    assert bool(found) == (syntax.tolerations_problem([toleration]) is not None), found
    assert all(problem.startswith("spec.tolerations[0].") for problem in found)


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    [
        "spec",
        "template",
        "headGroupSpec",
        "workerGroupSpecs",
        "rayClusterSpec",
        "pytorchReplicaSpecs",
        "tfReplicaSpecs",
        "xgbReplicaSpecs",
        "paddleReplicaSpecs",
        "jaxReplicaSpecs",
        "mpiReplicaSpecs",
        "Worker",
        "leaderWorkerTemplate",
        "leaderTemplate",
        "workerTemplate",
        "size",
        "tasks",
        "replicatedJobs",
        "predictor",
        "model",
        "sklearn",
        "triton",
        "transformer",
        "explainer",
        "workerSpec",
        "tensorParallelSize",
        "resources",
        "limits",
        "nvidia.com/gpu",
        "art",
        "workflowSpec",
        "templates",
        "templateDefaults",
        "container",
        "nodeSelector",
        "tolerations",
        "affinity",
        "containers",
    ]
)
SHAPES = st.recursive(
    JUNK, lambda inner: st.dictionaries(FIELDS, inner, max_size=4) | st.lists(inner, max_size=2), max_leaves=20
)
MANY_PODS = sorted(
    [
        *(f"kubernetes:{group}/v1:{kind}" for group, kind in pods.CUSTOM),
        "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
    ]
)


@given(st.sampled_from(MANY_PODS), SHAPES)
def test_any_shape_of_a_well_known_custom_resource_is_read_without_error(type_, spec):
    found = pods.read_workloads(checks.StackResource(type_, "x", "", {"metadata": {"name": "x"}, "spec": spec}))
    words = {word.split(" ")[0] for word, _ in pods.CUSTOM.values()} | {"leaderworkerset"}
    assert all(w.subject.split(" ")[0] in words for w in found)
