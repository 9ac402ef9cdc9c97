"""Tag rules: what AWS, Karpenter's EC2NodeClass and the rack itself refuse in a lane's tags."""

from __future__ import annotations

from typing import Mapping, Optional

from .. import contract
from ..facts import upstream
from .. import syntax
from .limits import RACK_TAGS, RESERVED_TAG_KEYS, TAGS_MAX


KARPENTER_RESTRICTED_TAGS = (
    "eks:eks-cluster-name",
    "kubernetes.io/cluster",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.k8s.aws/ec2nodeclass",
)
"""Tag keys (and, for ``kubernetes.io/cluster``, prefixes) the EC2NodeClass CRD refuses in ``spec.tags``:
Karpenter sets them on what it launches (its CEL rules, ``tag contains a restricted tag matching ...``)."""


def karpenter_tags_problem(tags: Mapping[str, str]) -> Optional[str]:
    """A tag key the EC2NodeClass CRD refuses, or None."""
    for key in tags:
        for restricted in KARPENTER_RESTRICTED_TAGS:
            if key == restricted or (restricted == "kubernetes.io/cluster" and key.startswith(restricted)):
                return f"tag key '{key}' is Karpenter's own (the EC2NodeClass refuses it in its tags)"
    return None


def tags_problem(tags: Mapping[str, str], added: int = RACK_TAGS, by: str = "the rack") -> Optional[str]:
    """What AWS would refuse in these tags (each key and value, and how many, with ``added`` more that
    ``by`` adds to the same resource), or None."""
    for key, value in tags.items():
        problem = syntax.tag_problem(key, value)
        if problem:
            return f"invalid tags: {problem}"
    if len(tags) > TAGS_MAX - added:
        return f"at most {TAGS_MAX - added} tags (AWS takes {TAGS_MAX}; {by} adds {added})"
    return None


KARPENTER_INSTANCE_TAGS = 5
"""Tags Karpenter puts on each instance it launches besides the EC2NodeClass's: ``karpenter.sh/nodepool``,
``karpenter.sh/nodeclaim``, ``karpenter.k8s.aws/ec2nodeclass``, ``kubernetes.io/cluster/<cluster>`` and
``eks:eks-cluster-name`` (the keys the EC2NodeClass CRD keeps for them)."""
POOL_TAGS = 2
"""Tags every EC2NodeClass of the rack carries: ``karpenter.sh/discovery`` and ``convox.io/nodepool``."""
RACK_OWN_TAG_KEYS = (upstream.DISCOVERY_TAG, contract.NODEPOOL_LABEL)
"""Tag keys the rack sets itself on what Karpenter launches (a user's value would be overwritten)."""


def pool_tags_problem(tags: Mapping[str, str]) -> Optional[str]:
    """What a pool's EC2NodeClass ``tags`` may not hold: anything AWS refuses, more than fit on an
    instance Karpenter launches beside its own and the pool's tags, Karpenter's keys, the rack's keys."""
    problem = tags_problem(
        tags, KARPENTER_INSTANCE_TAGS + POOL_TAGS, "Karpenter with the pool"
    ) or karpenter_tags_problem(tags)
    if problem:
        return problem
    for key in tags:
        if key in RACK_OWN_TAG_KEYS:
            return f"reserved tag key '{key}' is not allowed"
    return None


def rack_tags_problem(tags: Mapping[str, str]) -> Optional[str]:
    """What the rack's ``tags`` may not hold: what no pool takes, and the keys node groups write."""
    problem = pool_tags_problem(tags)
    if problem:
        return problem
    for key in tags:
        if key.strip().lower() in RESERVED_TAG_KEYS:
            return f"reserved tag key '{key}' is not allowed"
    return None
