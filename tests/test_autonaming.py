"""The name the Pulumi engine gives a node group under ``pulumi:autonaming``, as the live-size look-up matches it.

pulumi/pulumi ``pkg/resource/autonaming/strategy.go`` (commit 1b5949891b3c), ``generateName``: ``${name}`` is the
logical name; ``${hex(n)}`` n hex digits, ``${alphanum(n)}`` n of a-z0-9, ``${string(n)}`` n of a-z, ``${num(n)}`` n
digits, ``${uuid}`` a UUID; anything else is kept as written. Stack expressions (``${stack}``, ``${project}``,
``${organization}``, ``${config.key}``) are resolved first (``pkg/cmd/pulumi/autonaming/pattern.go``).
"""

from __future__ import annotations

import random
import uuid

from hypothesis import given, strategies as st

from mixed_os_racks.autonaming import Stack, naming

TYPE = "aws:eks/nodeGroup:NodeGroup"
STACK = Stack("acme", "racks", "prod", {"color": "blue"}.get)
RANDOM = {
    "hex": "0123456789abcdef",
    "alphanum": "abcdefghijklmnopqrstuvwxyz0123456789",
    "string": "abcdefghijklmnopqrstuvwxyz",
    "num": "0123456789",
}
STACK_WORDS = {"${stack}": "prod", "${project}": "racks", "${organization}": "acme", "${config.color}": "blue"}

literal = st.text(alphabet="abcXYZ019-_.}{()", max_size=4)  # no '$': a literal never starts an expression
piece = st.one_of(
    literal.map(lambda text: (text, lambda r, t=text: t)),
    st.just(("${name}", lambda r: "rack-ng-1")),
    st.sampled_from(sorted(STACK_WORDS)).map(lambda w: (w, lambda r, w=w: STACK_WORDS[w])),
    st.tuples(st.sampled_from(sorted(RANDOM)), st.integers(0, 6)).map(
        lambda kc: (f"${{{kc[0]}({kc[1]})}}", lambda r, kc=kc: "".join(r.choice(RANDOM[kc[0]]) for _ in range(kc[1])))
    ),
    st.just(("${uuid}", lambda r: str(uuid.UUID(int=r.getrandbits(128))))),
    st.just(("${foo}", lambda r: "${foo}")),  # no expression the engine knows: kept as written
)


@given(st.lists(piece, min_size=1, max_size=6), st.integers(0, 2**32))
def test_every_name_the_engine_can_make_from_a_pattern_is_matched(pieces, seed):
    pattern = "".join(p for p, _ in pieces)
    rng = random.Random(seed)
    made = "".join(make(rng) for _, make in pieces)
    found = naming({"pattern": pattern}, TYPE, "rack-ng-1", STACK)
    assert found.reason == "" and found.matches(made), (pattern, made)


@given(st.sampled_from(sorted(RANDOM)), st.integers(1, 6))
def test_a_random_part_of_another_length_is_not_matched(kind, count):
    found = naming({"pattern": f"${{name}}_${{{kind}({count})}}"}, TYPE, "g", STACK)
    assert found.matches("g_" + RANDOM[kind][0] * count)
    assert not found.matches("g_" + RANDOM[kind][0] * (count + 1))
    assert not found.matches("g_" + RANDOM[kind][0] * (count - 1))


def test_without_config_or_in_default_mode_the_provider_names_it():
    for config in (None, {"mode": "default"}, {"providers": {"aws": {"mode": "default"}}}):
        found = naming(config, TYPE, "rack-ng-1", STACK)
        assert found.matches("rack-ng-1-0a1b2c3") and not found.matches("rack-ng-1")


def test_another_providers_or_types_naming_does_not_apply():
    config = {
        "providers": {
            "kubernetes": {"mode": "verbatim"},
            "aws": {"resources": {"aws:s3/bucket:Bucket": {"mode": "verbatim"}}},
        }
    }
    found = naming(config, TYPE, "rack-ng-1", STACK)
    assert found.matches("rack-ng-1-0a1b2c3") and not found.matches("rack-ng-1")


def test_config_the_cli_refuses_is_named():
    for config, says in [
        ({"mode": "loud"}, "pulumi:autonaming.mode 'loud' is no naming mode"),
        ({"enforce": True}, "pulumi:autonaming gives enforce without a pattern"),
        ({"prefix": "x"}, "pulumi:autonaming has the unknown key 'prefix'"),
        (
            {"providers": {"aws": {"resources": {TYPE: {}}}}},
            f"pulumi:autonaming.providers.aws.resources.{TYPE} gives no mode or pattern",
        ),
        ("[1]", "pulumi:autonaming is not an object"),
    ]:
        found = naming(config, TYPE, "rack-ng-1", STACK)
        assert found.reason == f"pulumi:autonaming: {says}, which the Pulumi CLI refuses", found.reason


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["mode", "pattern", "enforce", "providers", "resources", "aws", TYPE, "x"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=12,
)


@given(json_values | st.text(max_size=30))
def test_any_autonaming_config_gives_a_naming_or_a_reason_and_never_fails(config):
    found = naming(config, TYPE, "rack-ng-1", STACK)
    assert found.patterns and isinstance(found.reason, str)
    found.matches("rack-ng-1-0a1b2c3")


def test_a_random_part_longer_than_any_name_matches_none():
    found = naming({"pattern": "${name}_${hex(99999999999)}"}, TYPE, "g", STACK)
    assert found.reason == "" and not found.matches("g_" + "a" * 61)


def test_a_pattern_reading_what_the_engine_does_not_say_names_nothing():
    found = naming({"pattern": "${organization}-${name}"}, TYPE, "g", Stack(None, "racks", "prod", {}.get))
    assert (
        found.reason
        == "pulumi:autonaming: its pattern reads ${organization}, which the engine does not give the program"
    )
    assert found.matches("g-0a1b2c3")  # a group made before the config keeps its default name
