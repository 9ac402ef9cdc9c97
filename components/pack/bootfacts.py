"""Read what decides a node's boot out of one resource's properties: mappings in, facts out.

Pure (the standard library, the package's ``contract``, and ``upstream`` and ``wellknown`` of
``mixed_os_racks.facts``, which read a NodePool's requirements against the instance table), so the
pack's policies and the components and tests (``mixed_os_racks.pack.bootfacts``) share it.

A resource is read with its URN and its parent's: a launch template pulumi-eks registered for a
``ManagedNodeGroup`` (its parent's type in the URN's type chain) is named, and fixed, through it.

Reading is lazy: each fact reads only the fields it needs, when a rule asks for it. Under the
policy SDK the properties are proxies that raise on an unknown value, so a rule meets only the
unknowns it actually depends on (and the SDK turns that into an advisory "can't run policy").
Numbers arrive as floats, secrets arrive unwrapped.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import math
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional

from .. import contract
from ..facts import osfamily, upstream
from ..facts import wellknown as reqs

NODE_GROUP_V2 = "eks:index:NodeGroupV2"
NODE_GROUP_V1 = "eks:index:NodeGroup"
KARPENTER_CLASS = ("karpenter.k8s.aws", "EC2NodeClass")
AUTO_MODE_CLASS = ("eks.amazonaws.com", "NodeClass")
RESOLVE_SSM = "resolve:ssm:"
"""A launch template's ``imageId`` may name an SSM parameter; EC2 resolves it at launch."""

GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
"""The label the NVIDIA device plugin's default affinity selects (NFD sets it; pools may set it themselves)."""
PULUMI_EKS_DEFAULT_DISK_GIB = upstream.PULUMI_EKS_DEFAULT_DISK_GIB

QUANTITY_SUFFIX = {
    "": 1,
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
QUANTITY_RE = re.compile(r"([+]?[0-9]*(?:\.[0-9]*)?)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?[0-9]+))?")
"""apimachinery's ``resource.Quantity``: a number, then a binary suffix, a decimal one, or an exponent
(never two: ``1e3m`` is not a quantity). ``ParseQuantity`` reads a number with no digits as zero (``"m"``,
``"."``, ``"+Gi"``: what a template renders from an empty value, ``{{ .cpu }}m``), and only empty text
as none; a CRD's quantity field is stricter (``QUANTITY_PATTERN``)."""
QUANTITY_PATTERN = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?"
)
"""The pattern a CRD's quantity field (a NodePool's ``limits``) holds text to, whole (the CRDs' ``pattern``,
as controller-gen writes it for ``resource.Quantity``): looser than ``ParseQuantity`` in its exponent, which
may have a fraction (``1e1.5``) or more digits than an int64 holds; the API server stores such text, and
a controller then cannot decode it."""
INT64 = 2**63


# ---- reading helpers (work on dicts and on the SDK's read-only proxies alike) -------------------------


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) else ()


def dig(value: Any, *path: str) -> Any:
    for key in path:
        value = as_map(value).get(key)
    return value


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def number(value: Any) -> Optional[float]:
    """A size as a number: floats and ints pass, numeric strings ("20") are read, anything else is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip()) if isinstance(value, str) and value.strip() else None
    except ValueError:
        return None


def quantity(value: Any) -> Optional[float]:
    """A Kubernetes quantity (``"250m"``, ``"16Gi"``, ``2``, ``"1e3"``, ``"500u"``) in base units; None if it
    is not one (or is negative). One too large for a float (``"1e400"``) is infinite: no node holds it.
    An exponent is read as ``ParseQuantity`` reads it: one past an int64 is no quantity, and one past an
    int32 keeps its low 32 bits (``"1e4294967297"`` is 10)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if value < 0 or isinstance(value, float) and math.isnan(value):
            return None
        try:
            return float(value)
        except OverflowError:  # an int of hundreds of digits
            return math.inf
    if not isinstance(value, str):
        return None
    text = value.strip()  # as Quantity's UnmarshalJSON trims it
    match = QUANTITY_RE.fullmatch(text) if text else None
    if not match:
        return None
    number = float(numeral(match.group(1)))
    exponent = _exponent(match.group(3) or "0")
    if exponent is None:
        return None
    try:
        return number * QUANTITY_SUFFIX[match.group(2) or ""] * 10.0**exponent if number else 0.0
    except OverflowError:
        return math.inf


def numeral(written: str) -> str:
    """A quantity's number as ``QUANTITY_RE`` found it, ``"0"`` when it has no digits (``ParseQuantity``'s zero)."""
    return written if any(c.isdigit() for c in written) else "0"


def _exponent(written: str) -> Optional[int]:
    """A quantity's exponent as apimachinery's suffixer reads it: an int64 (else no quantity), kept as an int32."""
    if len(written.lstrip("+-").lstrip("0")) > 19:  # past any int64 (and no text int() should read)
        return None
    parsed = int(written)
    if not -INT64 <= parsed < INT64:
        return None
    kept = (parsed + 2**31) % 2**32 - 2**31
    return kept if kept != -(2**31) else 2**31  # whose negation, the scale Go sets, wraps back to -2^31: a huge number


def quantity_gib(value: Any) -> Optional[float]:
    """A Kubernetes quantity written as text (``"200Gi"``, ``"100G"``, ``"1Ti"``) in GiB; None when unreadable."""
    amount = quantity(value) if isinstance(value, str) else None
    return amount / 2**30 if amount is not None else None


# ---- a NodePool's limits, as Kubernetes takes them and Karpenter reads them ------------------------------


def shown_value(value: Any) -> str:
    """A limit as written, on one ASCII line: text quoted (cut at 40 characters), a float that is whole as the
    number it was (numbers reach the pack as floats), anything else by its kind."""
    if isinstance(value, str):
        text = json.dumps(value)[1:-1]
        return f"'{text[:40]}...'" if len(text) > 40 else f"'{text}'"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if isinstance(value, float) and not math.isfinite(value):
        return "(not a finite number)"
    if isinstance(value, int):
        try:
            return str(value) if abs(value) < 10**16 else f"{float(value):g}"
        except OverflowError:
            return "(a number past what a float holds)"
    if isinstance(value, float):
        return f"{value:g}"
    return (
        "(a list)"
        if isinstance(value, Sequence)
        else "(a mapping)"
        if isinstance(value, Mapping)
        else "(no JSON value)"
    )


def node_pool_limit(name: str, value: Any) -> tuple[Optional[float], str]:
    """One NodePool limit as Kubernetes takes it and Karpenter reads it: its amount in base units (negative: every
    node is over it), or why the NodePool never launches a node, said of the pool (``is never created: Kubernetes
    refuses limits.cpu 'abc' ...``, ``launches nothing: Karpenter cannot read ...``). The API server holds a limit to
    the CRD's schema (a whole number of 64 bits, or text of ``QUANTITY_PATTERN``) and refuses the NodePool otherwise;
    Karpenter decodes the text it took with ``ParseQuantity``, which refuses an exponent that is no int64."""
    what = f"limits.{name} {shown_value(value)}"
    if isinstance(value, str):
        if not QUANTITY_PATTERN.fullmatch(value):
            return None, (
                f"is never created: Kubernetes refuses {what}, which is no quantity (write a whole number, "
                f"or text such as 64, 250m or 256Gi)"
            )
        amount = quantity(value[1:] if value[:1] in ("+", "-") else value)  # the pattern allows one sign
        if amount is None:
            return None, (
                f"launches nothing: Karpenter cannot read {what} (the API server takes it, but its "
                f"exponent is no whole number of 64 bits)"
            )
        return (-amount if value.startswith("-") and amount else amount), ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        whole = isinstance(value, int) or math.isfinite(value) and value.is_integer()
        if whole and -INT64 <= value < INT64:
            return float(value), ""
        return None, (
            f"is never created: Kubernetes refuses {what}: a limit written as a number is a whole number "
            f"of 64 bits (write others as text, such as 1500m)"
        )
    return None, f"is never created: Kubernetes refuses {what}, which is no quantity"


def node_pool_limits(value: Any) -> tuple[dict[str, float], str, dict[str, str]]:
    """A NodePool's ``spec.limits``, the one reading every policy makes of them (the fit policies' lanes, the
    worst case, whether a limit makes a GPU lane): each limit's amount (``node_pool_limit``; a ``null`` one is
    dropped, as the API server prunes it), why the NodePool launches nothing when one is refused or unreadable
    (else ''), and each limit as written (for one past what a float holds)."""
    if value is None:
        return {}, "", {}
    if not isinstance(value, Mapping):
        return (
            {},
            (
                f"is never created: Kubernetes refuses spec.limits {shown_value(value)}: it maps each resource to "
                f"a quantity"
            ),
            {},
        )
    found: dict[str, float] = {}
    for name, given in sorted(value.items(), key=lambda item: str(item[0])):  # one refusal named, whatever the order
        if given is None:
            continue
        amount, refused = node_pool_limit(str(name), given)
        if amount is None:
            return {}, refused, {}
        found[str(name)] = amount
    found = {str(k): found[str(k)] for k in value if str(k) in found}  # as written
    return (
        found,
        "",
        {str(k): (v if isinstance(v, str) else shown_value(v)) for k, v in value.items() if str(k) in found},
    )


USER_DATA_MAX = 1 << 20
"""Most bytes unpacked from user data (EC2 takes 16 KiB; a gzip layer may not expand past this)."""


def _gunzip(data: bytes) -> bytes:
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, USER_DATA_MAX)
    except zlib.error:
        return b""


def _layers(data: bytes) -> bytes:
    """Base64 and gzip taken off, as nodeadm takes them off (base64 then gzip, each optional)."""
    for _ in range(4):
        if data[:2] == b"\x1f\x8b":
            data = _gunzip(data)
            continue
        try:  # line breaks inside are skipped, as Go's decoder (nodeadm's) skips them
            candidate = base64.b64decode(re.sub(rb"\s+", b"", data), validate=True)
        except (binascii.Error, ValueError):
            break
        if candidate[:2] != b"\x1f\x8b":
            try:
                candidate.decode("utf-8")
            except UnicodeDecodeError:
                break
        data = candidate
    return data


def unpacked_user_data(value: Any) -> str:
    """User data as nodeadm reads it (amazon-eks-ami ``nodeadm/internal/configprovider``): base64 and
    gzip taken off, then a MIME multi-part document's parts, each with its own transfer encoding and gzip."""
    data = _layers(text(value).encode("utf-8", "replace"))
    found = [data]
    if b"multipart/" in data[:4096]:
        import email

        message = email.message_from_bytes(data)
        for part in message.walk() if message.is_multipart() else ():
            if not part.is_multipart():
                payload = part.get_payload(decode=True)
                found.append(_layers(payload) if isinstance(payload, bytes) else b"")
    return "\n".join(chunk.decode("utf-8", "replace") for chunk in found)


def os_of_user_data(value: Any) -> str:
    """What user data boots: ``al2023`` (nodeadm NodeConfig), ``bottlerocket`` (TOML settings),
    ``al2`` (bootstrap.sh), or '' when it says none of these. Base64 and gzip are taken off first,
    and MIME parts read (``unpacked_user_data``)."""
    decoded = unpacked_user_data(value)
    if "node.eks.aws/" in decoded and "NodeConfig" in decoded:
        return osfamily.AL2023.name
    if re.search(r"^\s*\[settings[.\]]", decoded, re.M):
        return osfamily.BOTTLEROCKET.name
    if "/etc/eks/bootstrap.sh" in decoded:
        return osfamily.AL2.name
    return ""


def os_of_ami_type(ami_type: str) -> str:
    """EKS ``amiType`` -> OS: ``AL2023_x86_64_NVIDIA`` -> al2023, ``BOTTLEROCKET_*`` -> bottlerocket, ``CUSTOM`` ->
    custom."""
    family = osfamily.of_ami_type(ami_type)
    if family is not None:
        return family.name
    upper = ami_type.upper()
    if upper.startswith("WINDOWS_"):  # EKS's Windows AMI types: a family the pack only names
        return "windows"
    return "custom" if upper == "CUSTOM" else ""


def os_name(declared: str) -> str:
    """Normalise a declared OS: ``AL2023`` -> al2023, ``Bottlerocket`` -> bottlerocket, ``Windows2022`` -> windows."""
    lowered = declared.strip().lower()
    return "windows" if lowered.startswith("windows") else lowered


PIN_KEYS = frozenset({"id", "name", "tags", "ssmParameter"})
"""``amiSelectorTerms`` keys that select an AMI of one's own (``alias`` selects a public one)."""


@dataclass(frozen=True)
class Ami:
    """A pinned AMI as a lane selects it: by id, or by name, tags or SSM parameter (then ``id`` is None)."""

    id: Optional[str]
    label: str
    """How a message names it: the id, or e.g. ``the AMI named 'my-ami-*'``."""
    term: Optional[Mapping[str, Any]] = None
    """A selector (``{"name": ..., "owner": ...}``, ``{"tags": ...}``, ``{"ssmParameter": ...}``) for ``id`` None."""

    @property
    def how(self) -> str:
        """What the selector selects by: ``name``, ``tags``, ``SSM parameter``, or ``id``."""
        if self.term is None:
            return "id"
        return "SSM parameter" if "ssmParameter" in self.term else ("name" if "name" in self.term else "tags")


@dataclass(frozen=True)
class Disk:
    gib: float
    how: str = ""
    """Where the size comes from when it is a default, e.g. ``Karpenter's default``."""


@dataclass(frozen=True)
class RootVolume:
    encrypted: bool
    """The lane asks for encryption (``encrypted: true``); False: it leaves it to the snapshot and the account."""
    where: str
    """How a message names what decides it, e.g. ``blockDeviceMappings /dev/xvda``."""


def flag(value: Any) -> Optional[bool]:
    """``true``/``"true"`` -> True, ``false``/``"false"`` -> False, anything else -> None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


# ---- lanes: one per kind of resource that decides what a node boots --------------------------------


class LaneResource:
    """One resource's boot facts. Subclasses read their own kind; every fact is read on demand."""

    types: ClassVar[tuple[str, ...]] = ()
    os_fix: ClassVar[str] = ""
    """How to declare AL2023 on this kind of resource."""
    lane_word: ClassVar[str] = "node group"
    """What a message calls the lane: ``karpenter nodepool``s are pools, the rest node groups."""

    def __init__(self, type_: str, name: str, props: Mapping[str, Any], urn: str = "", parent: str = "") -> None:
        self.type = type_
        self.name = name
        self.props = props
        self.urn = urn
        self.parent = parent
        """The parent's URN ('' for none)."""

    @property
    def built_by(self) -> str:
        """The type of the component whose provider registered this resource (the parent's type in the
        URN's type chain, ``eks:index:ManagedNodeGroup``), or '' for a top-level resource."""
        chain = self.urn.split("::")[2].split("$") if self.urn.count("::") >= 3 else []
        return chain[-2] if len(chain) >= 2 else ""

    @property
    def parent_name(self) -> str:
        return self.parent.rsplit("::", 1)[-1] if self.parent else ""

    @property
    def subject_name(self) -> str:
        """The name a message gives the lane (its Kubernetes or AWS name, else the Pulumi name)."""
        return text(self.props.get("nodeGroupName")) or self.name

    def ami_id_values(self) -> list[Any]:
        """Every value that must be an AMI id (checked by ``ami-id-format``)."""
        return []

    def amis(self) -> list[Ami]:
        """The custom AMIs this lane pins (empty: it boots an AMI EKS or Karpenter picks)."""
        return [Ami(v, v) for v in self.ami_id_values() if isinstance(v, str)]

    def os(self) -> str:
        """The OS the lane declares (al2023, bottlerocket, al2, custom, windows) or '' when none."""
        return ""

    def root_disk(self, root_device: str) -> Optional[Disk]:
        """The root volume the lane asks for; None when it leaves the AMI's own size."""
        return None

    def recorded(self, key: str) -> Any:
        """A fact our components stamp on the resource (an annotation or a tag), or None."""
        return None

    def recorded_snapshot_gib(self, key: str) -> Optional[float]:
        """The root snapshot size our components stamp on the resource."""
        return number(self.recorded(key))

    def root_volume(self, root_device: str) -> Optional["RootVolume"]:
        """Whether the lane asks for an encrypted root volume; None when another resource decides
        (a pool's NodeClass, a node group's launch template) or the lane is not judged."""
        return None

    def instance_types(self) -> list[str]:
        """The instance types (or, for Karpenter, families) the lane may launch, as written."""
        return []

    def arch_requirement(self) -> list[str]:
        """An explicit architecture requirement (Karpenter ``kubernetes.io/arch``), as written."""
        return []

    def gpu_reason(self, is_gpu: Callable[[str], bool], taint_key: str, vendor_label: str) -> Optional[str]:
        """What makes this a GPU lane, worded to fit '<reason> make this a GPU lane'; None if nothing."""
        return None

    def kubernetes_version(self) -> Optional[str]:
        return None


class NodeClass(LaneResource):
    """Karpenter ``EC2NodeClass``: AMI selection, family and block devices."""

    types = (contract.NODE_CLASS,)
    lane_word = "pool"

    @property
    def subject_name(self) -> str:
        return text(dig(self.props, "metadata", "name")) or self.name

    @property
    def rack_pool(self) -> str:
        """The pool our components built this class for (its ``convox.io/nodepool`` tag), or ''."""
        return text(as_map(dig(self.props, "spec", "tags")).get(contract.NODEPOOL_LABEL))

    def _terms(self) -> Sequence[Any]:
        return as_list(dig(self.props, "spec", "amiSelectorTerms"))

    def ami_id_values(self) -> list[Any]:
        return [as_map(term).get("id") for term in self._terms() if "id" in as_map(term)]

    def alias_values(self) -> list[Any]:
        """Every ``amiSelectorTerms[].alias`` as written."""
        return [as_map(term)["alias"] for term in self._terms() if "alias" in as_map(term)]

    def pins(self) -> bool:
        """Whether a term selects an AMI of its own (by id, name, tags or SSM parameter), read from the terms'
        keys alone: a pin whose id is not known at preview is still a pin."""
        return any(keys & PIN_KEYS and "alias" not in keys for keys in (set(as_map(t)) for t in self._terms()))

    def amis(self) -> list[Ami]:
        found: list[Ami] = []
        for term in self._terms():
            term = as_map(term)
            if "alias" in term:
                continue
            if isinstance(term.get("id"), str):
                found.append(Ami(term["id"], term["id"]))
            elif "name" in term:
                owner = text(term.get("owner"))
                tags = ",".join(f"{k}={v}" for k, v in sorted(as_map(term.get("tags")).items()))
                label = f"the AMI named '{text(term.get('name'))}'" + (f" owned by {owner}" if owner else "")
                found.append(Ami(None, label + (f" tagged {tags}" if tags else ""), _plain(term)))
            elif "ssmParameter" in term:
                found.append(Ami(None, f"the AMI in SSM parameter '{text(term.get('ssmParameter'))}'", _plain(term)))
            elif "tags" in term:
                tags = ",".join(f"{k}={v}" for k, v in sorted(as_map(term.get("tags")).items()))
                found.append(Ami(None, f"the AMI tagged {tags}", _plain(term)))
        return found

    def os(self) -> str:
        for term in self._terms():
            alias = text(as_map(term).get("alias"))
            if alias:
                return os_name(alias.split("@", 1)[0])
        return os_name(text(dig(self.props, "spec", "amiFamily")))

    def root_disk(self, root_device: str) -> Optional[Disk]:
        """The volume EC2 boots from the AMI's ``root_device`` (its snapshot must fit in it)."""
        return self._disk(self._root_mapping(root_device))

    def kubelet_disk(self, root_device: str) -> Optional[Disk]:
        """The volume the kubelet's root directory is on (pods' ephemeral storage): the mapping marked
        ``rootVolume``, else ``root_device``'s."""
        mappings = [as_map(m) for m in as_list(dig(self.props, "spec", "blockDeviceMappings"))]
        marked = [m for m in mappings if m.get("rootVolume") is True]
        return self._disk(marked[0] if marked else self._root_mapping(root_device))

    def _disk(self, mapping: Optional[Mapping[str, Any]]) -> Optional[Disk]:
        if "blockDeviceMappings" not in as_map(dig(self.props, "spec")):
            family = osfamily.named(self.os())
            default = family.default_root_gib if family is not None else None
            return Disk(default, "Karpenter's default") if default is not None else None
        size = quantity_gib(dig(mapping, "ebs", "volumeSize")) if mapping else None
        return Disk(size) if size is not None else None

    def recorded(self, key: str) -> Any:
        recorded = as_map(dig(self.props, "metadata", "annotations")).get(key)
        return recorded if recorded is not None else as_map(dig(self.props, "spec", "tags")).get(key)

    def _root_mapping(self, root_device: str) -> Optional[Mapping[str, Any]]:
        """The mapping of ``root_device``: EC2 matches a mapping to the AMI's devices by name
        (``rootVolume`` marks the kubelet's volume for Karpenter, not the one EC2 boots from)."""
        mappings = [as_map(m) for m in as_list(dig(self.props, "spec", "blockDeviceMappings"))]
        root = [m for m in mappings if m.get("deviceName") == root_device]
        return root[0] if root else None

    def root_volume(self, root_device: str) -> Optional[RootVolume]:
        if "blockDeviceMappings" not in as_map(dig(self.props, "spec")):
            return RootVolume(upstream.KARPENTER_DEFAULT_MAPPINGS_ENCRYPTED, "Karpenter's default mappings")
        mapping = self._root_mapping(root_device)
        if mapping is None:
            return RootVolume(False, f"blockDeviceMappings has no entry for {root_device}")
        return RootVolume(
            flag(dig(mapping, "ebs", "encrypted")) is True, f"blockDeviceMappings {text(mapping.get('deviceName'))}"
        )


class NodePool(LaneResource):
    """Karpenter ``NodePool`` (and EKS Auto Mode's): requirements, taints, labels and limits of the pool's nodes."""

    types = (contract.NODE_POOL,)
    lane_word = "pool"

    @property
    def subject_name(self) -> str:
        return text(dig(self.props, "metadata", "name")) or self.name

    def _template_spec(self) -> Any:
        return dig(self.props, "spec", "template", "spec")

    @functools.cached_property
    def node_class_ref(self) -> tuple[str, str, str]:
        """(group, kind, name) of ``nodeClassRef``. Without a group (Karpenter v1beta1 wrote ``apiVersion``),
        the group of its ``apiVersion``, else Karpenter's; without a kind, ``EC2NodeClass``."""
        ref = as_map(dig(self._template_spec(), "nodeClassRef"))
        group = text(ref.get("group")) or text(ref.get("apiVersion")).rpartition("/")[0] or KARPENTER_CLASS[0]
        return group, text(ref.get("kind")) or KARPENTER_CLASS[1], text(ref.get("name"))

    @property
    def node_class_name(self) -> str:
        return self.node_class_ref[2]

    @property
    def auto_mode(self) -> bool:
        return self.node_class_ref[:2] == AUTO_MODE_CLASS

    def requirements(self) -> list["reqs.Requirement"]:
        return list(self._requirements)

    @functools.cached_property
    def _requirements(self) -> tuple["reqs.Requirement", ...]:
        """Read once per lane (a lane lives for one request; a value unknown at preview raises, and is not kept)."""
        return tuple(reqs.read(dig(self._template_spec(), "requirements")))

    def _values(self, label: str) -> list[str]:
        return [v for r in self.requirements() if r.label == label and r.operator == "In" for v in r.values]

    def families(self) -> list[str]:
        return self._values("instance-family")

    def instance_types(self) -> list[str]:
        return self.families() + self._values("instance-type")

    def arch_requirement(self) -> list[str]:
        return self._values("arch")

    def architectures(self) -> list[str]:
        """The EC2 architectures the pool can launch (from every requirement, read against the instance table)."""
        return reqs.architectures(self.requirements())

    def gpu_reason(self, is_gpu: Callable[[str], bool], taint_key: str, vendor_label: str) -> Optional[str]:
        selected = reqs.gpu_selection(self.requirements())
        if selected:
            return selected
        template = dig(self.props, "spec", "template")
        limit = as_map(dig(self.props, "spec", "limits")).get(taint_key)
        # read as every policy reads it (``node_pool_limit``): "0", "-0", "0e3" and 0 are none, and so is one the
        # API server refuses (" 0 ", "abc") or Karpenter cannot read: such a pool never runs a node
        amount = node_pool_limit(taint_key, limit)[0] if limit is not None else None
        if amount is not None and amount != 0:
            return f"limits {taint_key}"
        return _gpu_taint_or_label(
            dig(template, "spec", "taints"), dig(template, "metadata", "labels"), taint_key, vendor_label
        )


def _gpu_taint_or_label(taints: Any, labels: Any, taint_key: str, vendor_label: str) -> Optional[str]:
    """GPU evidence beyond instance types: an ``nvidia.com/gpu`` taint or the GPU-vendor label."""
    if isinstance(as_map(taints).get(taint_key), Mapping):  # pulumi-eks NodeGroupV2: {key: {value, effect}}
        return f"taints {taint_key}"
    if any(as_map(t).get("key") == taint_key for t in as_list(taints)):
        return f"taints {taint_key}"
    labels = as_map(labels)
    vendor = labels.get(vendor_label)
    if vendor:
        return f"labels {vendor_label}={vendor}"
    if flag(labels.get(GPU_PRESENT_LABEL)) is True:
        return f"labels {GPU_PRESENT_LABEL}=true"
    return None


class LaunchTemplate(LaneResource):
    """``aws.ec2.LaunchTemplate``: image, user data, block devices, instance type."""

    types = (contract.LAUNCH_TEMPLATE,)
    lane_word = "launch template"
    os_fix = "its user data must be a nodeadm NodeConfig (apiVersion: node.eks.aws/v1alpha1)"

    @property
    def subject_name(self) -> str:
        if self.built_by == contract.MANAGED_NODE_GROUP and self.parent_name:
            return self.parent_name  # pulumi-eks's own template: named, and fixed, through its node group
        return text(self.props.get("name")) or self.name

    def ami_id_values(self) -> list[Any]:
        image = self.props.get("imageId")
        if image is None or image == "":  # a deployed template's outputs say "" for no image (terraform's unset)
            return []
        return [] if isinstance(image, str) and image.startswith(RESOLVE_SSM) else [image]

    def amis(self) -> list[Ami]:
        image = self.props.get("imageId")
        if isinstance(image, str) and image.startswith(RESOLVE_SSM):
            parameter = image[len(RESOLVE_SSM) :]
            return [Ami(None, f"the AMI in SSM parameter '{parameter}'", {"ssmParameter": parameter})]
        return super().amis()

    def os(self) -> str:
        return os_of_user_data(self.props.get("userData"))

    def _root_mapping(self, root_device: str) -> Optional[Mapping[str, Any]]:
        for mapping in as_list(self.props.get("blockDeviceMappings")):
            if as_map(mapping).get("deviceName") == root_device:
                return as_map(mapping)
        return None

    def root_disk(self, root_device: str) -> Optional[Disk]:
        size = number(dig(self._root_mapping(root_device), "ebs", "volumeSize"))
        return Disk(size) if size is not None else None

    def recorded(self, key: str) -> Any:
        return as_map(self.props.get("tags")).get(key)

    def root_volume(self, root_device: str) -> Optional[RootVolume]:
        mapping = self._root_mapping(root_device)
        if mapping is None:
            return RootVolume(False, f"no block device mapping for {root_device}")
        return RootVolume(flag(dig(mapping, "ebs", "encrypted")) is True, f"block device mapping {root_device}")

    def instance_types(self) -> list[str]:
        value = self.props.get("instanceType")
        return [value] if isinstance(value, str) else []

    def gpu_reason(self, is_gpu: Callable[[str], bool], taint_key: str, vendor_label: str) -> Optional[str]:
        gpus = [t for t in self.instance_types() if is_gpu(t)]
        return f"instance types {','.join(gpus)}" if gpus else None


class EksNodeGroup(LaneResource):
    """``aws.eks.NodeGroup``: AMI type, instance types, taints, labels; its image is in its launch template."""

    types = (contract.EKS_NODE_GROUP,)
    os_fix = (
        "give the launch template a nodeadm NodeConfig as its user data, and the node group ami_type CUSTOM or none"
    )

    def instance_types(self) -> list[str]:
        return [t for t in as_list(self.props.get("instanceTypes")) if isinstance(t, str)]

    def ami_type(self) -> str:
        return text(self.props.get("amiType"))

    def os(self) -> str:
        return os_of_ami_type(self.ami_type())

    def recorded(self, key: str) -> Any:
        return as_map(self.props.get("tags")).get(key)

    def gpu_reason(self, is_gpu: Callable[[str], bool], taint_key: str, vendor_label: str) -> Optional[str]:
        return _group_gpu_reason(self, is_gpu, taint_key, vendor_label)

    def kubernetes_version(self) -> Optional[str]:
        return text(self.props.get("version")) or None


class PulumiEksNodeGroup(LaneResource):
    """pulumi-eks's self-managed ``NodeGroupV2`` and ``NodeGroup`` (their inputs).

    A ``ManagedNodeGroup`` is judged through the children pulumi-eks registers for it (its launch
    template and ``aws.eks.NodeGroup``), as under the Pulumi CLI, where the component itself carries
    no inputs: pulumi-eks 4.x registers it from its provider with the Node.js SDK it bundles
    (@pulumi/pulumi 3.173.0 in its yarn.lock), which sends a component's inputs to the engine only
    from 3.203.0 on (pulumi/pulumi #20357)."""

    types = (NODE_GROUP_V2, NODE_GROUP_V1)
    os_fix = "set operating_system=AL2023 (pulumi-eks then renders the nodeadm user data)"

    def ami_id_values(self) -> list[Any]:
        # pulumi-eks reads an empty amiId as none (it looks up the EKS-optimized AMI), as a launch template's ""
        return [] if self.props.get("amiId") in (None, "") else [self.props["amiId"]]

    def os(self) -> str:
        declared = text(self.props.get("operatingSystem"))
        return os_name(declared) if declared else os_of_ami_type(text(self.props.get("amiType")))

    def instance_types(self) -> list[str]:
        value = self.props.get("instanceType")
        return [value] if isinstance(value, str) else []

    def root_disk(self, root_device: str) -> Optional[Disk]:
        size = number(self.props.get("nodeRootVolumeSize"))
        return Disk(size) if size is not None else Disk(PULUMI_EKS_DEFAULT_DISK_GIB, "pulumi-eks's default")

    def recorded(self, key: str) -> Any:
        for tags in ("tags", "autoScalingGroupTags", "cloudFormationTags"):
            recorded = as_map(self.props.get(tags)).get(key)
            if recorded is not None:
                return recorded
        return None

    def root_volume(self, root_device: str) -> Optional[RootVolume]:
        return RootVolume(flag(self.props.get("nodeRootVolumeEncrypted")) is True, "nodeRootVolumeEncrypted")

    def gpu_reason(self, is_gpu: Callable[[str], bool], taint_key: str, vendor_label: str) -> Optional[str]:
        return _group_gpu_reason(self, is_gpu, taint_key, vendor_label)

    def kubernetes_version(self) -> Optional[str]:
        return text(self.props.get("version")) or None


def _plain(term: Mapping[str, Any]) -> dict[str, Any]:
    """A selector term as plain values (the SDK's proxies copied out)."""
    return {k: (dict(as_map(v)) if isinstance(v, Mapping) else v) for k, v in term.items()}


def _group_gpu_reason(
    group: LaneResource, is_gpu: Callable[[str], bool], taint_key: str, vendor_label: str
) -> Optional[str]:
    """A node group's GPU evidence: GPU instance types, pulumi-eks ``gpu``, a GPU AMI type, the taint, the label."""
    gpus = [t for t in group.instance_types() if is_gpu(t)]
    if gpus:
        return f"instance types {','.join(gpus)}"
    if group.props.get("gpu") is True:
        return "gpu=true"
    ami_type = text(group.props.get("amiType"))
    if re.search(r"NVIDIA|GPU", ami_type, re.I):
        return f"ami_type {ami_type}"
    return _gpu_taint_or_label(group.props.get("taints"), group.props.get("labels"), taint_key, vendor_label)


LANES: dict[str, type[LaneResource]] = {
    t: kind for kind in (NodeClass, NodePool, LaunchTemplate, EksNodeGroup, PulumiEksNodeGroup) for t in kind.types
}


def read(type_: str, name: str, props: Mapping[str, Any], urn: str = "", parent: str = "") -> Optional[LaneResource]:
    """The lane a resource describes, or None for resources that decide nothing about a node's boot.

    Karpenter kinds are matched by group and kind, whatever the version (``v1``, ``v1beta1``).
    """
    kind = LANES.get(type_)
    if kind is None and type_.startswith("kubernetes:karpenter.k8s.aws/") and type_.endswith(":EC2NodeClass"):
        kind = NodeClass
    if kind is None and type_.startswith("kubernetes:karpenter.sh/") and type_.endswith(":NodePool"):
        kind = NodePool
    if kind is None:
        return None
    return kind(type_, name, props, urn, parent)
