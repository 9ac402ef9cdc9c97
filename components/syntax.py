"""The syntax the real APIs enforce, checked before anything is sent to them.

Kubernetes (apimachinery's validation, the same patterns the Karpenter v1.14.1 CRDs carry): a
label key is a qualified name (an optional DNS-1123 subdomain prefix of at most 253 characters and a
``/``, then a name of at most 63 characters that starts and ends with an alphanumeric); a label or
taint value is at most 63 such characters or empty; an object name such as a NodePool's is a
DNS-1123 label. AWS: an EKS cluster name (1-100 characters, ``[0-9A-Za-z][0-9A-Za-z_-]*``, the
``ClusterName`` shape of the EKS API), an IAM role name (1-64 of ``[A-Za-z0-9+=,.@_-]``), an EC2
instance type (``<family>.<size>``, every type in botocore's EC2 enum matches), a region, and tags
(EC2's limits: keys of 1-127 characters, values of at most 256, letters, digits, spaces and
``_ . : / = + - @``, no ``aws:`` prefix). Every pattern matches the whole string, and only ASCII digits
count as digits.

Each ``*_problem`` function returns None for a good value, or what is wrong with it.
"""

from __future__ import annotations

import difflib
import re
from typing import Callable, Mapping, Optional, Sequence

from . import contract
from .inputs import closest
from .facts import instances

DNS1123_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
NAME_PART_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
TAINT_EFFECTS = tuple(contract.EKS_EFFECTS.values())
"""Kubernetes' taint effects: ``NoSchedule``, ``PreferNoSchedule``, ``NoExecute``."""

# Label domains the kubelet's node restriction or Karpenter reserve (karpenter sigs.k8s.io/karpenter
# pkg/apis/v1/labels.go RestrictedLabelDomains; the CRD's CEL rules on template labels), and the
# subdomains they allow.
RESTRICTED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws")
ALLOWED_LABEL_SUBDOMAINS = ("node.kubernetes.io", "node-restriction.kubernetes.io")
CRD_RESTRICTED_LABEL_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
"""The domains the NodePool CRD's CEL rules check on the whole key when it has no ``/``."""

EKS_CLUSTER_NAME_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{0,99}")
IAM_ROLE_NAME_RE = re.compile(r"[A-Za-z0-9+=,.@_-]{1,64}")
INSTANCE_FAMILY_RE = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
INSTANCE_SIZE_RE = re.compile(r"nano|micro|small|medium|large|xlarge|[1-9][0-9]*xlarge|metal(-[1-9][0-9]*xl)?")
REGION_RE = re.compile(r"[a-z]{2,4}(-[a-z]+)+-[0-9]+")
TAG_TEXT_RE = re.compile(r"[\w .:/=+\-@]*")
TAG_KEY_MAX, TAG_VALUE_MAX = 127, 256


BEYOND_DIGITS = 30
"""More decimal digits than any bound a field is held to has (Python refuses to read more than 4,300)."""


def whole_number(digits: str) -> int:
    """Decimal digits as a number; more than ``BEYOND_DIGITS`` of them (leading zeros aside) read as
    ``10**BEYOND_DIGITS``, which is past every bound, so a bound check refuses it with its own words."""
    significant = digits.lstrip("0") or "0"
    return int(significant) if len(significant) <= BEYOND_DIGITS else 10**BEYOND_DIGITS


def dns_label_problem(name: str) -> Optional[str]:
    if len(name) > 63 or not DNS1123_LABEL_RE.fullmatch(name):
        return (
            "must be a DNS-1123 label: lowercase letters, digits and dashes, starting and ending with a letter or "
            "digit, at most 63"
        )
    return None


def qualified_name_problem(key: str) -> Optional[str]:
    """A label or taint key: ``[prefix/]name``."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not DNS1123_SUBDOMAIN_RE.fullmatch(prefix)):
        return "its prefix must be a DNS subdomain (lowercase, at most 253 characters) followed by '/'"
    if not name or len(name) > 63 or not NAME_PART_RE.fullmatch(name):
        return "must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
    return None


def label_value_problem(value: str) -> Optional[str]:
    if len(value) > 63 or not LABEL_VALUE_RE.fullmatch(value):
        return (
            "must be empty or at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        )
    return None


def restricted_label_domain(key: str) -> Optional[str]:
    """The reserved domain a label key is in, or None.

    Both checks match a plain suffix, not a DNS subdomain: Karpenter's ``IsRestrictedNodeLabel``
    (``strings.HasSuffix`` on the part before ``/``) refuses ``mykarpenter.sh/x`` and ``xk8s.io/x``, and
    the NodePool CRD's CEL (``x.find("^([^/]+)").endsWith("karpenter.sh")``, the whole key when it has no
    ``/``) refuses a bare ``karpenter.sh`` too.
    """
    prefix, slash, _ = key.partition("/")
    if not slash:
        return next((d for d in CRD_RESTRICTED_LABEL_DOMAINS if key.endswith(d)), None)
    if any(prefix.endswith(d) for d in ALLOWED_LABEL_SUBDOMAINS):
        return None
    return next((d for d in RESTRICTED_LABEL_DOMAINS if prefix.endswith(d)), None)


def eks_cluster_name_problem(name: str) -> Optional[str]:
    if not EKS_CLUSTER_NAME_RE.fullmatch(name):
        return "must be 1-100 letters, digits, '-' or '_', starting with a letter or digit (the EKS cluster name rule)"
    return None


NODE_GROUP_NAME_MAX = 63 - 8
EKS_NODE_GROUP_NAME_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]*")


def node_group_name_problem(name: str) -> Optional[str]:
    """A node group component's name: pulumi-aws names its EKS node group ``<name>-<7 hex digits>``, and
    EKS's ``nodegroupName`` is 1-63 letters, digits, '-' and '_', starting with a letter or digit."""
    if not EKS_NODE_GROUP_NAME_RE.fullmatch(name) or len(name) > NODE_GROUP_NAME_MAX:
        return (
            f"must be 1-{NODE_GROUP_NAME_MAX} letters, digits, '-' or '_', starting with a letter or digit (EKS "
            f"names node groups so, at most 63 characters with the 8 Pulumi adds)"
        )
    return None


def iam_role_name_problem(name: str) -> Optional[str]:
    if name.startswith("arn:") or "/" in name:
        return "must be an IAM role name, not an ARN"
    if not IAM_ROLE_NAME_RE.fullmatch(name):
        return "must be an IAM role name: 1-64 of letters, digits and +=,.@_-"
    return None


def instance_family_problem(family: str) -> Optional[str]:
    if "." in family:
        return "is an instance type, not a family (give the family, e.g. g5, and sizes in instance_sizes)"
    if len(family) > 20 or not INSTANCE_FAMILY_RE.fullmatch(family):
        return "must be an EC2 instance family like g5, m7g or c7i-flex"
    return None


def instance_size_problem(size: str) -> Optional[str]:
    if not INSTANCE_SIZE_RE.fullmatch(size):
        return "must be an EC2 instance size like large, xlarge, 2xlarge or metal"
    return None


def instance_type_problem(instance_type: str) -> Optional[str]:
    family, dot, size = instance_type.partition(".")
    if not dot or instance_family_problem(family) or instance_size_problem(size):
        return "must look like g4dn.xlarge"
    return None


def priced_type_problem(instance_type: str) -> Optional[str]:
    """Why a key of a price list (``prices`` of ``lane-cost-ceiling``, of the AMI catalog) is no instance type a
    price could be for, in the lanes config's words; None when it is one (or of a family the table does not
    size, which may be newer than it). EC2 names types in lower case, and the pack looks prices up by the names
    Karpenter and EC2 give, so ``G5.XLARGE`` would never be read."""
    if instance_type != instance_type.lower() and not instance_type_problem(instance_type.lower()):
        return f"invalid instance type '{instance_type}' (EC2 writes it in lower case: '{instance_type.lower()}')"
    if instance_type_problem(instance_type):
        return f"invalid instance type '{instance_type}' (must look like g4dn.xlarge)"
    return unmade_instance_type(instance_type) or None


def unmade_instance_type(instance_type: str) -> str:
    """For a well-formed type of a family the instance table sizes, in a size the family does not come in
    (``g5.nano``, ``g5.large``): ``'g5.large' is no instance type (did you mean 'g5.xlarge'? g5 comes in
    xlarge, ...)``, with the likely size when one is close; '' otherwise (a family the table does not size
    may be newer than it, and is taken)."""
    family = instances.family_of(instance_type)
    made = instances.sizes(family)
    if not made or instances.instance_type(instance_type) is not None:
        return ""
    close = closest(instance_type, [t.name for t in made], cutoff=0.8)
    if close:  # of sizes spelled as alike (xlarge: 2xlarge, 4xlarge, 8xlarge), the smallest
        alike = difflib.SequenceMatcher(None, instance_type, close).ratio()
        close = next(t.name for t in made if difflib.SequenceMatcher(None, instance_type, t.name).ratio() == alike)
    listed = f"{family} comes in {', '.join(t.size for t in made)}"
    return f"'{instance_type}' is no instance type ({f'did you mean {close!r}? ' if close else ''}{listed})"


def region_problem(region: str) -> Optional[str]:
    if not REGION_RE.fullmatch(region):
        return "must be an AWS region like us-east-1"
    return None


def _tag_char_problem(text: str) -> Optional[str]:
    bad = next((ch for ch in text if not TAG_TEXT_RE.fullmatch(ch)), None)
    return None if bad is None else f"'{bad}' is not allowed in a tag" if bad.isprintable() and bad != " " else None


def tag_problem(key: str, value: str) -> Optional[str]:
    """What AWS refuses in one tag, naming the key or value and, for a character, the character."""
    if not 1 <= len(key) <= TAG_KEY_MAX or not TAG_TEXT_RE.fullmatch(key):
        which = _tag_char_problem(key)
        return f"tag key '{key}' must be 1-{TAG_KEY_MAX} letters, digits, spaces or _.:/=+-@" + (
            f" ({which}; use another character, e.g. '-')" if which and key else ""
        )
    if key.lower().startswith("aws:"):
        return f"tag key '{key}' uses the reserved prefix 'aws:'"
    if len(value) > TAG_VALUE_MAX:
        return f"tag '{key}' value must be at most {TAG_VALUE_MAX} characters (it has {len(value)})"
    if not TAG_TEXT_RE.fullmatch(value):
        which = _tag_char_problem(value) or "it has a character that is not allowed"
        return (
            f"tag '{key}' value '{value}': {which} (AWS takes letters, digits, spaces and _.:/=+-@ only; "
            f"use another character, e.g. ':' or '/')"
        )
    return None


PARTITIONS = ("aws", "aws-cn", "aws-us-gov", "aws-iso", "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-eusc")
IAM_PRINCIPAL_ARN_RE = re.compile(
    r"arn:(?P<partition>[a-z-]+):iam::(?P<account>[0-9]{12}):(?P<kind>role|user)"
    r"(?P<path>/(?:[\x21-\x7e]*/)?)(?P<name>[A-Za-z0-9+=,.@_-]{1,64})"
)
"""An IAM role or user ARN, path allowed (IAM: a path is ``/`` or ``/.../`` of printable ASCII, at most
512 characters; a role or user name 1-64 of ``[A-Za-z0-9+=,.@_-]``)."""


def principal_arn_problem(arn: str) -> Optional[str]:
    """What keeps ``arn`` from being an EKS access entry's principal: an IAM role or user ARN. An STS
    assumed-role ARN names one session, not the role: EKS wants the role's own ARN."""
    if re.fullmatch(r"arn:[a-z-]+:sts::[0-9]{12}:assumed-role/.+", arn):
        role = arn.split(":", 5)[5].split("/")[1]
        return (
            f"invalid ARN '{arn}' (an STS assumed-role session: give the role's own ARN, "
            f"arn:<partition>:iam::<account>:role/<path/>{role})"
        )
    found = IAM_PRINCIPAL_ARN_RE.fullmatch(arn)
    if found is None or found["partition"] not in PARTITIONS or len(found["path"]) > 512:
        return f"invalid ARN '{arn}' (must be an IAM role or user ARN like arn:aws:iam::123456789012:role/ci)"
    return None


def arn_partition_problem(arn: str, partition: str, region: str) -> Optional[str]:
    """An ARN of another partition than the stack's region's: IAM principals do not cross partitions."""
    found = IAM_PRINCIPAL_ARN_RE.fullmatch(arn)
    if found is not None and found["partition"] != partition:
        return (
            f"ARN '{arn}' is in the '{found['partition']}' partition, and the stack's region {region} is in "
            f"'{partition}' (write arn:{partition}:...)"
        )
    return None


def role_arn_problem(arn: str) -> Optional[str]:
    """What keeps ``arn`` from being an IAM role's ARN (``arn:<partition>:iam::<account>:role/<path/>name``)."""
    found = IAM_PRINCIPAL_ARN_RE.fullmatch(arn)
    if found is None or found["kind"] != "role" or found["partition"] not in PARTITIONS or len(found["path"]) > 512:
        return f"invalid role ARN {_quoted(arn)} (like arn:aws:iam::123456789012:role/nodes)"
    return None


def role_problem(role: str) -> Optional[str]:
    """What keeps ``role`` from naming an IAM role: a role name, or a role's ARN."""
    if role.startswith("arn:"):
        return role_arn_problem(role)
    problem = iam_role_name_problem(role)
    return f"{_quoted(role)} {problem} (or a role ARN)" if problem else None


EC2_ID_PREFIXES = {"subnet": "subnet", "security group": "sg", "VPC": "vpc", "capacity reservation": "cr"}
EC2_ID_RES = {kind: re.compile(prefix + r"-(?:[0-9a-f]{8}|[0-9a-f]{17})") for kind, prefix in EC2_ID_PREFIXES.items()}
"""EC2's resource ids: the prefix, then 8 (older) or 17 hex digits (the EC2NodeClass CRD's pattern,
``subnet-[0-9a-z]+``, takes any id of that shape too)."""
EC2_SELECTOR_TERMS_MAX = 30
"""The EC2NodeClass CRD (Karpenter v1.14.1): ``subnetSelectorTerms`` and ``securityGroupSelectorTerms``
take 1-30 terms, ``capacityReservationSelectorTerms`` at most 30."""


def ec2_ids_problem(
    ids: Sequence[object],
    kind: str,
    most: Optional[int] = EC2_SELECTOR_TERMS_MAX,
    unknown: Callable[[object], bool] = lambda _: False,
) -> Optional[str]:
    """What is wrong with a list of EC2 ids of ``kind`` (``subnet``, ``security group``); items
    ``unknown`` says are not known yet are left out of the checks of the ids themselves."""
    prefix = EC2_ID_PREFIXES[kind]
    if not ids:
        return f"no {kind} ids (give at least one, or leave the argument out)"
    if most is not None and len(ids) > most:
        return f"{len(ids)} {kind} ids (at most {most})"
    known = [(n, value) for n, value in enumerate(ids) if not unknown(value)]
    for n, value in known:
        if not isinstance(value, str) or not EC2_ID_RES[kind].fullmatch(value):
            return f"[{n}]: {_quoted(value)} is not a {kind} id ({prefix}- and 8 or 17 hex digits)"
    if len({value for _, value in known}) < len(known):
        return f"a {kind} id is listed twice"
    return None


def node_selector_problem(selector: Mapping[object, object]) -> Optional[str]:
    """What Kubernetes refuses in a node selector (label keys and values), or None."""
    for key, value in selector.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return f"labels and values are text (got {_quoted(key)}: {_quoted(value)})"
        problem = qualified_name_problem(key) or label_value_problem(value)
        if problem:
            return f"label {_quoted(key)}: {_quoted(value)}: {problem}"
    return None


TOLERATION_FIELDS = ("key", "operator", "value", "effect", "tolerationSeconds")


def tolerations_problem(tolerations: Sequence[object]) -> Optional[str]:
    """What Kubernetes refuses in a pod's tolerations (``validateTolerations``), or None: an unknown field, a key
    that is no label key (empty only with ``Exists``), an operator other than ``Equal``/``Exists``, a value with
    ``Exists`` or one that is no label value, an unknown effect, ``tolerationSeconds`` that is no whole number
    or is given without ``NoExecute``."""
    for n, toleration in enumerate(tolerations):
        at = f"[{n}]"
        if not isinstance(toleration, Mapping):
            return f"{at}: expected {{key, operator, value, effect}}, got {_quoted(toleration)}"
        unknown = [str(k) for k in toleration if k not in TOLERATION_FIELDS]
        if unknown:
            return f"{at}.{unknown[0]}: unknown field (expected {', '.join(TOLERATION_FIELDS)})"
        key, operator = toleration.get("key") or "", toleration.get("operator") or "Equal"
        value, effect = toleration.get("value") or "", toleration.get("effect") or ""
        if not all(isinstance(v, str) for v in (key, operator, value, effect)):
            return f"{at}: key, operator, value and effect are text"
        if operator not in ("Equal", "Exists"):
            return f"{at}.operator: {_quoted(operator)} is not Equal or Exists"
        if key and qualified_name_problem(key):
            return f"{at}.key: {_quoted(key)}: {qualified_name_problem(key)}"
        if not key and operator != "Exists":
            return f"{at}.key: empty, which only operator Exists takes (it tolerates every taint)"
        if operator == "Exists" and value:
            return f"{at}.value: {_quoted(value)} with operator Exists, which takes no value"
        if value and label_value_problem(value):
            return f"{at}.value: {_quoted(value)}: {label_value_problem(value)}"
        if effect and effect not in TAINT_EFFECTS:
            return f"{at}.effect: {_quoted(effect)} is not one of {', '.join(TAINT_EFFECTS)}"
        seconds = toleration.get("tolerationSeconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
            return f"{at}.tolerationSeconds: {_quoted(seconds)} is not a whole number of seconds"
        if seconds is not None and effect != "NoExecute":
            return f"{at}.tolerationSeconds: only effect NoExecute takes it"
    return None


def _quoted(value: object) -> str:
    text = f"'{value}'" if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
