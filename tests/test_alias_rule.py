"""An EC2NodeClass alias Karpenter's controller cannot parse, refused by the pack (``ami-id-format``).

Upstream facts pinned here (aws/karpenter-provider-aws, v1.14.1):
- ``pkg/apis/v1/ec2nodeclass.go``, ``amiFamilyFromAlias`` and ``amiVersionFromAlias``: the controller splits the
  alias on ``@`` and calls ``log.Fatalf`` (the process exits) unless there are exactly two parts, and again unless
  the first part equals one of the families lowercased (al2, al2023, bottlerocket, windows2019, windows2022,
  windows2025). A crash-looping controller stops every NodePool.
- The EC2NodeClass CRD (``../shared/reference/karpenter-v1.14.1/karpenter.k8s.aws_ec2nodeclasses.yaml``) checks the
  alias with ``self.matches('^[a-zA-Z0-9]+@.+$')``, ``self.split('@')[0] in [...]``, Windows families only
  ``latest`` (``self.split('@')[1]``), and ``maxLength: 30``: ``al2023@latest@foo`` passes all four.
- The families the CRD lists are the controller's (``amiFamilyFromAlias`` finds among AMIFamilyAL2, AL2023,
  Bottlerocket, Windows2019, Windows2022, Windows2025, lowercased), so the tests read the families, the
  latest-only families and the length from the CRD, not from the pack's table.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, strategies as st

from crd_helpers import cel_failures, crd_schema, jsonschema
from mixed_os_racks.facts import upstream
from mixed_os_racks.pack import rules


def alias_schema() -> dict[str, Any]:
    spec = crd_schema("karpenter.k8s.aws/v1", "EC2NodeClass")["properties"]["spec"]
    return spec["properties"]["amiSelectorTerms"]["items"]["properties"]["alias"]


def crd_lists() -> tuple[list[str], list[str]]:
    """The alias families the CRD's CEL rules list, and those of them held to ``latest``."""
    found = [
        re.findall(r"'([^']*)'", rule["rule"].split(" in ")[1].split("]")[0])
        for rule in alias_schema()["x-kubernetes-validations"]
        if rule["rule"].startswith("self.split('@')[0] in [")
    ]
    every, latest_only = found  # the family rule, then the Windows rule
    return every, latest_only


CRD_FAMILIES, CRD_LATEST_ONLY = crd_lists()


def test_the_packs_alias_table_is_the_crds():
    assert CRD_FAMILIES == ["al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025"]
    assert list(upstream.KARPENTER_ALIAS_FAMILIES) == CRD_FAMILIES
    assert list(upstream.KARPENTER_ALIAS_LATEST_ONLY) == CRD_LATEST_ONLY
    assert upstream.KARPENTER_ALIAS_MAX_LENGTH == alias_schema()["maxLength"]


def crd_admits(alias: str) -> bool:
    schema = alias_schema()
    return jsonschema.Draft7Validator(schema).is_valid(alias) and not list(cel_failures(schema, alias))


def controller_parses(alias: str) -> bool:
    """``amiFamilyFromAlias`` and ``amiVersionFromAlias``, as written in Go: no ``log.Fatalf``."""
    parts = alias.split("@")
    return len(parts) == 2 and any(family.lower() == parts[0] for family in CRD_FAMILIES)


def problem(alias: object) -> str | None:
    return rules.alias_problem(
        alias,
        upstream.KARPENTER_ALIAS_FAMILIES,
        upstream.KARPENTER_ALIAS_LATEST_ONLY,
        upstream.KARPENTER_ALIAS_MAX_LENGTH,
    )


def test_the_alias_the_crd_admits_and_the_controller_cannot_parse():
    assert crd_admits("al2023@latest@foo") and not controller_parses("al2023@latest@foo")
    assert problem("al2023@latest@foo") == (
        "invalid alias 'al2023@latest@foo' (must be family@version with one '@': Karpenter's controller cannot parse "
        "it and exits, which stops every NodePool)"
    )
    for alias in ("al2023@@", "bottlerocket@v1.2@x", "windows2022@latest@"):
        assert crd_admits(alias) and problem(alias) is not None, alias


def test_every_alias_the_controller_takes_passes():
    for alias in ("al2023@latest", "al2023@v20260917", "bottlerocket@v1.30.0", "al2@latest", "windows2025@latest"):
        assert crd_admits(alias) and problem(alias) is None, alias


FAMILIES = st.sampled_from([*CRD_FAMILIES, "AL2023", "Bottlerocket", "ubuntu", "al2023x", ""])
PIECES = st.text(alphabet="abcv0123456789.-_@ \n", max_size=12)


@given(family=FAMILIES, rest=PIECES)
def test_the_pack_refuses_every_alias_the_crd_admits_and_the_controller_rejects(family, rest):
    alias = f"{family}@{rest}"
    if crd_admits(alias) and not controller_parses(alias):
        assert problem(alias) is not None
    if crd_admits(alias) and controller_parses(alias):
        assert problem(alias) is None
    if problem(alias) is None:
        assert crd_admits(alias) and controller_parses(alias)


@given(st.one_of(st.text(max_size=40), st.integers(), st.none()))
def test_any_value_gets_a_verdict_naming_it(value):
    found = problem(value)
    assert found is None or found.startswith(f"invalid alias '{value}'")
