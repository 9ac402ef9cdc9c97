"""The AMI catalog: the offline account's images, SSM parameters, subnets and EKS clusters.

It answers, offline, what EC2, SSM, EKS and IAM answer for a real preview: ``aws:ec2/getAmi`` (by id, or
by name, owner, architecture and tag filters), ``aws:ssm/getParameter`` (an EKS-recommended image id, a
launch template's ``resolve:ssm:``), ``aws:ec2/getSubnet`` (a subnet's Availability Zone, by id),
``aws:ebs/getEncryptionByDefault``, ``aws:eks/getCluster``, ``aws:eks/getNodeGroups``,
``aws:eks/getNodeGroup`` (an existing cluster, and the node groups a cluster has: their live sizes) and
``aws:iam/getOpenIdConnectProvider`` (whether IAM has the cluster's OIDC provider); and what instances
cost (``prices``). The format:

```yaml
amis:
  - id: ami-0a1b2c3d4e5f60718                # ami- and 8 or 17 lowercase hex digits, unique
    name: amazon-eks-node-al2023-x86_64-nvidia-580-1.34-v20261115
    description: EKS-optimized Kubernetes node based on Amazon Linux 2023
    architecture: x86_64                     # or arm64
    root_device_name: /dev/xvda
    root_snapshot_gib: 100                   # a positive number
    creation_date: "2026-11-15T08:12:40.000Z"   # ISO 8601, quoted
    owner_id: "111122223333"                 # 12 digits, quoted
    root_snapshot_encrypted: false           # optional, default false
    owner_alias: amazon                      # optional: EC2's ImageOwnerAlias (owners: [amazon] matches it)
    deprecation_time: "2027-11-15T00:00:00Z" # optional
    tags: {team: ml}                         # optional
ssm_parameters:                              # optional: parameter name -> the AMI id it holds
  /aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/nvidia/recommended/image_id: ami-0a1b2c3d4e5f60718
subnets:                                     # optional: subnet id -> its Availability Zone
  subnet-0a1b2c3d4e5f60711: us-east-1a       # subnet- and 8 or 17 lowercase hex digits; a zone of the stack's region
ebs_encryption_by_default: false             # optional, default false, as in a new AWS account
prices:                                      # optional: instance type -> US dollars an hour on demand
  p5.48xlarge: 55.04                         # over the price table's (the stack's region), zero or more
clusters:                                    # optional: EKS cluster name -> what EKS says of it
  prod-rack:
    version: "1.34"                          # optional, quoted; default "1.34"
    authentication_mode: API_AND_CONFIG_MAP  # optional: API, API_AND_CONFIG_MAP (default) or CONFIG_MAP
    oidc_issuer: https://oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF  # optional
    oidc_provider: true                      # optional, default true: IAM has an OIDC provider for the issuer
    node_groups:                             # optional: node group name -> its scaling config, as EKS holds it
      rack-ng-1-0a1b2c3: {desired_size: 5, min_size: 1, max_size: 10}
reservations:                                # optional: capacity reservation id -> what EC2 says of it
  cr-0a1b2c3d4e5f60718:                      # cr- and 8 or 17 lowercase hex digits
    instance_type: p5.48xlarge               # an instance type
    availability_zone: us-east-1a            # its Availability Zone
    instance_count: 2                        # a whole number, 1 or more
    type: capacity-block                     # or default (an On-Demand Capacity Reservation, the default)
    start_date: "2026-12-14T11:30:00Z"       # ISO 8601, quoted; a Capacity Block has both dates
    end_date: "2026-12-28T11:30:00Z"         # optional for an ODCR (none: it runs until cancelled)
```

The file is validated as strictly as the stack config: unknown keys, duplicate ids, duplicate YAML
keys, numbers that are not positive and finite, and text fields given another YAML type are refused,
each with the file, the entry and the field; a subnet id or an Availability Zone name that could not
be one is refused with the entry, and so is a price of something that is no instance type, or that is
negative or not finite. A subnet the catalog does not list, or one in another region than the stack's,
is not found, as EC2 would say. A cluster the catalog does not list is an existing cluster with the
defaults above and no node groups; a node group it does not list is not found, as EKS would say. A capacity
reservation the catalog does not list is one the account does not have (``DescribeCapacityReservations``
would say ``InvalidCapacityReservationId.NotFound``); a listed one's end comes after its start, and a
Capacity Block has both. Prices
are the offline cloud's: the program's lanes are priced with them, and so are the worst cases the preview
prints and the pack judges (``lane-cost-ceiling``'s ``prices``).
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Mapping, Optional, Sequence

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ..facts.amifacts import AmiFacts, decode
from ..facts.prices import price_problem
from ..pack import reservation as reservations_
from ..pack.rules import AMI_ID_EXAMPLE, AMI_ID_RE
from ..spec.base import key_path
from ..spec.limits import K8S_VERSION_RE, SUBNET_ID_RE
from .. import syntax
from ..inputs import MAX_VALUES, TAG_MISFIT, YAML_TAG_ERRORS, NotReadable, closest, read_input

DEFAULT_CATALOG = Path(__file__).with_name("amis.yaml")
OFFLINE_ACCOUNT = "123456789012"
"""The account the offline engine runs as (``owners: [self]`` means it)."""
MAX_DEPTH = 20
"""A catalog is three levels deep; anything nested deeper than this is not a catalog."""


class CatalogError(ValueError):
    pass


# ---- the model ---------------------------------------------------------------------------------------


def instant(value: str) -> datetime:
    """An ISO 8601 time with its zone (``2026-11-15T08:12:40.000Z``), as a moment: times in other zones
    compare as moments, not as text."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _iso_8601(value: str) -> str:
    try:
        moment = instant(value)
    except ValueError as exc:
        why = f": {exc}" if "must be in" in str(exc) or "out of range" in str(exc) else ""
        raise ValueError(
            f"'{value}' is not an ISO 8601 time{why} (write it as EC2 gives it, like \"2026-11-15T08:12:40.000Z\")"
        ) from None
    if moment.tzinfo is None or "T" not in value.upper():  # which image is the most recent needs the moment
        raise ValueError(
            f"'{value}' is a date or a time without its zone (write it as EC2 gives it, in UTC, like "
            f'"2026-11-15T08:12:40.000Z")'
        )
    return value


def _ami_id(value: str) -> str:
    if not AMI_ID_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not an AMI id (must look like {AMI_ID_EXAMPLE})")
    return value


class CatalogAmi(BaseModel):
    """One image, with the fields EC2 ``DescribeImages`` gives and the rack's rules read."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: str
    name: str = Field(min_length=1, max_length=128)
    description: str
    architecture: Literal["x86_64", "arm64"]
    root_device_name: str = Field(pattern=r"^/dev/[a-z0-9]+$")
    root_snapshot_gib: float
    creation_date: str
    owner_id: str = Field(pattern=r"^[0-9]{12}$")
    root_snapshot_encrypted: bool = False
    owner_alias: Optional[Literal["amazon", "aws-marketplace"]] = None
    deprecation_time: Optional[str] = None
    tags: dict[str, str] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _ami_id(value)

    @field_validator("creation_date", "deprecation_time")
    @classmethod
    def _time(cls, value: Optional[str]) -> Optional[str]:
        return value if value is None else _iso_8601(value)

    @field_validator("root_snapshot_gib")
    @classmethod
    def _positive(cls, value: float) -> float:
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"must be a positive number of GiB (got {value:g})")
        return value

    def facts(self) -> AmiFacts:
        return decode(
            self.id, {**self.model_dump(exclude_none=True), "root_snapshot_encrypted": self.root_snapshot_encrypted}
        )


ZONE_RE = re.compile(r"[a-z]{2,4}(-[a-z]+)+-[0-9]+([a-z]|-[a-z]+-[0-9]+[a-z])")
"""An Availability Zone (``us-east-1a``, ``us-gov-west-1b``, ``eusc-de-east-1a``) or Local Zone
(``us-east-1-bos-1a``) name: a region (``syntax.REGION_RE``) and a zone letter, or a Local Zone's suffix."""
AUTHENTICATION_MODES = ("API", "API_AND_CONFIG_MAP", "CONFIG_MAP")
"""EKS's ``accessConfig.authenticationMode`` values (botocore's EKS model, ``AuthenticationMode``)."""
OIDC_ISSUER_RE = re.compile(r"https://oidc\.eks\.[a-z0-9-]+\.[a-z0-9.-]+/id/[0-9A-F]{32}")
"""An EKS cluster's OIDC issuer URL (``https://oidc.eks.<region>.<dns suffix>/id/<32 hex digits>``)."""


def _named(value: dict[str, Any], rule: Callable[[str], Optional[str]], what: str) -> dict[str, Any]:
    """A mapping whose keys are names ``rule`` accepts (EKS's rule for the kind of name)."""
    for name in value:
        problem = rule(name)
        if problem:
            raise ValueError(f"{name!r} is not {what} ({problem})")
    return value


class CatalogNodeGroup(BaseModel):
    """A node group's scaling config, as EKS ``DescribeNodegroup`` gives it."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    desired_size: int = Field(ge=0)
    min_size: int = Field(ge=0)
    max_size: int = Field(ge=1)

    @model_validator(mode="after")
    def _bounds(self) -> "CatalogNodeGroup":
        if not self.min_size <= self.desired_size <= self.max_size:
            raise ValueError(
                f"EKS holds min_size <= desired_size <= max_size (got {self.min_size}, "
                f"{self.desired_size}, {self.max_size})"
            )
        return self


class CatalogCluster(BaseModel):
    """An EKS cluster, as EKS ``DescribeCluster`` and ``ListNodegroups`` give it."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    version: str = "1.34"
    authentication_mode: Literal["API", "API_AND_CONFIG_MAP", "CONFIG_MAP"] = "API_AND_CONFIG_MAP"
    oidc_issuer: Optional[str] = None
    oidc_provider: bool = True
    node_groups: dict[str, CatalogNodeGroup] = Field(default_factory=dict)

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not K8S_VERSION_RE.fullmatch(value):
            raise ValueError(f'{value!r} is not a Kubernetes minor (like "1.34")')
        return value

    @field_validator("oidc_issuer")
    @classmethod
    def _issuer(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and not OIDC_ISSUER_RE.fullmatch(value):
            raise ValueError(
                f"{value!r} is not an EKS OIDC issuer (like "
                f"https://oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF)"
            )
        return value

    @field_validator("node_groups")
    @classmethod
    def _group_names(cls, value: dict[str, CatalogNodeGroup]) -> dict[str, CatalogNodeGroup]:
        return _named(value, syntax.node_group_name_problem, "a node group name")


def _instance_type(value: str) -> str:
    if syntax.instance_type_problem(value.lower()):
        raise ValueError(f"{value!r} is not an instance type (must look like g5.xlarge)")
    problem = syntax.priced_type_problem(value)  # one in capitals, or in a size its family does not come in
    if problem:
        raise ValueError(problem)
    return value


def _price(value: float) -> float:
    problem = price_problem(value)
    if problem:
        raise ValueError(problem)
    return value


InstanceTypeName = Annotated[str, AfterValidator(_instance_type)]
Price = Annotated[float, AfterValidator(_price)]
"""An entry of ``prices:``: an instance type, and what it costs an hour on demand (``facts.prices``)."""


def _reservation_id(value: str) -> str:
    if not syntax.EC2_ID_RES["capacity reservation"].fullmatch(value):
        raise ValueError(
            f"{value!r} is not a capacity reservation id (cr- and 8 or 17 hex digits, like cr-0123456789abcdef0)"
        )
    return value


class CatalogReservation(BaseModel):
    """A capacity reservation (an ODCR or a Capacity Block), with the fields EC2 ``DescribeCapacityReservations``
    gives and the rack's checks read."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    instance_type: InstanceTypeName
    availability_zone: str
    instance_count: int = Field(ge=1)
    type: Literal["default", "capacity-block"] = "default"
    start_date: Optional[str] = None
    end_date: Optional[str] = None

    @field_validator("availability_zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        if not ZONE_RE.fullmatch(value):
            raise ValueError(f"{value!r} is not an Availability Zone name (like us-east-1a)")
        return value

    @field_validator("start_date", "end_date")
    @classmethod
    def _time(cls, value: Optional[str]) -> Optional[str]:
        return value if value is None else _iso_8601(value)

    @model_validator(mode="after")
    def _dates(self) -> "CatalogReservation":
        if self.type == "capacity-block" and (self.start_date is None or self.end_date is None):
            missing = " and ".join(k for k in ("start_date", "end_date") if getattr(self, k) is None)
            raise ValueError(f"a Capacity Block has a start and an end date (missing {missing})")
        if (
            self.start_date is not None
            and self.end_date is not None
            and instant(self.end_date) <= instant(self.start_date)
        ):
            raise ValueError(f"end_date {self.end_date} is not after start_date {self.start_date}")
        return self

    def facts(self, reservation_id: str) -> reservations_.CapacityReservation:
        return reservations_.decode(reservation_id, self.model_dump(exclude_none=True))


class CatalogDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    amis: list[CatalogAmi] = Field(default_factory=list)
    ssm_parameters: dict[str, str] = Field(default_factory=dict)
    subnets: dict[str, str] = Field(default_factory=dict)
    ebs_encryption_by_default: bool = False
    prices: dict[InstanceTypeName, Price] = Field(default_factory=dict)
    clusters: dict[str, CatalogCluster] = Field(default_factory=dict)
    reservations: dict[str, CatalogReservation] = Field(default_factory=dict)

    @field_validator("reservations", mode="before")
    @classmethod
    def _reservation_ids(cls, value: Any) -> Any:
        for reservation_id in value if isinstance(value, dict) else ():
            _reservation_id(reservation_id)
        return value

    @field_validator("clusters")
    @classmethod
    def _cluster_names(cls, value: dict[str, CatalogCluster]) -> dict[str, CatalogCluster]:
        return _named(value, syntax.eks_cluster_name_problem, "an EKS cluster name")

    @field_validator("subnets")
    @classmethod
    def _subnet_zones(cls, value: dict[str, str]) -> dict[str, str]:
        for subnet, zone in value.items():
            if not SUBNET_ID_RE.fullmatch(subnet):
                raise ValueError(f"{subnet!r} is not a subnet id (must look like subnet-0123456789abcdef0)")
            if not ZONE_RE.fullmatch(zone):
                raise ValueError(f"{subnet}: {zone!r} is not an Availability Zone name (like us-east-1a)")
        return value

    @field_validator("ssm_parameters")
    @classmethod
    def _parameter_values(cls, value: dict[str, str]) -> dict[str, str]:
        for name, ami_id in value.items():
            if not name.strip():
                raise ValueError("a parameter name is empty")
            try:
                _ami_id(ami_id)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        return value

    @model_validator(mode="after")
    def _unique_ids(self) -> "CatalogDoc":
        first: dict[str, int] = {}
        for n, ami in enumerate(self.amis):
            if ami.id in first:
                raise ValueError(f"amis[{n}].id: '{ami.id}' is already amis[{first[ami.id]}] (ids are unique)")
            first[ami.id] = n
        return self


# ---- reading the file ------------------------------------------------------------------------------------


class _StrictLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML has no type information here: its loader is Any
    """YAML as the stack config reads it: a key given twice is an error, not "the last one wins"."""

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:  # noqa: D401 - PyYAML's hook
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError:  # a date no calendar has (2026-13-01): kept as text, which the entry's field check names
            return node.value

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key '{key}' is given twice", key_node.start_mark
                )
            if isinstance(key, (str, int, float, bool)):
                seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _StrictLoader.construct_yaml_timestamp)


def _expanded(node: yaml.Node, sizes: dict[int, float]) -> float:
    """How many values ``node`` stands for once its aliases are expanded (a node an alias repeats is
    counted each time, but sized once); infinite for a node that contains itself."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    sizes[id(node)] = math.inf  # while it is being sized: an alias back to it is a cycle
    children: list[yaml.Node] = []
    if isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    elif isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    size = 1 + sum(_expanded(child, sizes) for child in children)
    sizes[id(node)] = size
    return size


def _load(text: str, path: Path) -> Any:
    """The catalog's document, refusing one that aliases expand beyond ``MAX_VALUES`` before it is built."""
    loader = _StrictLoader(text)  # a SafeLoader subclass
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded(node, {})
        if size == math.inf:
            raise CatalogError(f"AMI catalog {path}: nested deeper than any catalog (more than {MAX_DEPTH} levels)")
        if size > MAX_VALUES:
            raise CatalogError(f"AMI catalog {path}: expands to more than {MAX_VALUES:,} values through aliases")
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deep ``value`` nests (stops counting past ``limit``)."""
    if limit <= 0 or not isinstance(value, (dict, list)):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((_depth(child, limit - 1) for child in children), default=0)


def _type_name(value: Any) -> str:
    if isinstance(value, (date, datetime)):
        return "a date"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
        list: "a list",
        dict: "a mapping",
        str: "text",
        bytes: "binary data",
        set: "a set",
    }.get(type(value), f"a YAML {type(value).__name__}")


def _shown(value: Any) -> str:
    return value.isoformat() if isinstance(value, (date, datetime)) else repr(value)


def _where(loc: Sequence[Any], doc: Any) -> str:
    """``("amis", 2, "root_snapshot_gib")`` -> ``amis[2] (ami-...).root_snapshot_gib``: the entry by its
    position and, when it has a readable one, its id."""
    path = key_path(loc)
    if len(loc) >= 2 and loc[0] == "amis" and isinstance(loc[1], int):
        entries = doc.get("amis") if isinstance(doc, dict) else None
        entry = entries[loc[1]] if isinstance(entries, list) and loc[1] < len(entries) else None
        ami_id = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(ami_id, str) and AMI_ID_RE.fullmatch(ami_id):
            head = f"amis[{loc[1]}]"
            path = f"{head} ({ami_id}){path[len(head) :]}"
    return path or "the catalog"


def _problem(error: Mapping[str, Any], doc: Any) -> tuple[str, str]:
    """One pydantic error as (where, what is wrong), naming the type found and the fix."""
    loc = tuple(error["loc"])
    kind, given = error["type"], error.get("input")
    if kind == "missing":
        return _where(loc[:-1], doc), f"missing {loc[-1]}"
    where = _where(loc, doc)
    if kind == "extra_forbidden":
        model = _model_at(loc[:-1])
        meant = closest(loc[-1], model.model_fields) if model is not None else None
        return where, "unknown key" + (f" (did you mean {meant}?)" if meant else "")
    if kind == "dict_type":
        what = _MAPPINGS.get(str(loc[-1]) if loc else "", "names to values")
        return where, f"expected a mapping of {what}, got {_type_name(given)} {_shown(given)}"
    if kind == "list_type":
        return where, f"expected a list of images, got {_type_name(given)} {_shown(given)}"
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str(error.get("ctx", {}).get("expected", "")))
        meant = next((c for c in choices if isinstance(given, str) and c.lower() == given.lower()), None) or closest(
            given, choices
        )
        either = f"{', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else "".join(choices)
        return where, (
            f"expected {either}, got {_type_name(given)} {_shown(given)}"
            + (f" (did you mean {meant}?)" if meant else "")
        )
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return where, f"expected a whole number, got {_type_name(given)} {_shown(given)}"
    if kind == "value_error":
        return where, str(error["msg"]).removeprefix("Value error, ")
    if kind in ("string_type", "string_pattern_mismatch", "string_too_short", "string_too_long") and not isinstance(
        given, str
    ):
        quote = isinstance(given, (bool, int, float, date))
        return where, f"expected text, got {_type_name(given)} {_shown(given)}" + (" (quote it)" if quote else "")
    if kind == "float_type":
        what = "a number of US dollars an hour" if loc[:1] == ("prices",) else "a positive number"
        return where, f"expected {what}, got {_type_name(given)} {_shown(given)}"
    if kind == "bool_type":
        return where, f"expected true or false, got {_type_name(given)} {_shown(given)}"
    if kind in ("model_type", "model_attributes_type"):  # pydantic's words name our class
        model = _model_at(loc)
        what = _ENTRIES.get(model, "its fields") if model is not None else "its fields"
        return where, f"expected a mapping of {what}, got {_type_name(given)} {_shown(given)}"
    return where, f"{str(error['msg']).lower()} (got {given!r})"


def _model_at(loc: Sequence[Any]) -> Optional[type[BaseModel]]:
    """The model of the entry at ``loc`` (``()``: the file; ``("amis", 0)``: an image; ``("clusters", "c")``: a
    cluster; ``("clusters", "c", "node_groups", "g")``: a node group), or None (inside a plain mapping)."""
    shapes: dict[tuple[Any, ...], type[BaseModel]] = {
        (): CatalogDoc,
        ("amis", int): CatalogAmi,
        ("clusters", str): CatalogCluster,
        ("clusters", str, "node_groups", str): CatalogNodeGroup,
        ("reservations", str): CatalogReservation,
    }
    shape = tuple(part if part in ("amis", "clusters", "node_groups", "reservations") else type(part) for part in loc)
    return shapes.get(shape)


_MAPPINGS = {
    "clusters": "EKS cluster names to their fields (version, authentication_mode, ...)",
    "node_groups": "node group names to their scaling config (desired_size, min_size, max_size)",
    "subnets": "subnet ids to their Availability Zones",
    "prices": "instance types to US dollars an hour",
    "ssm_parameters": "parameter names to AMI ids",
    "tags": "tag keys to values",
    "reservations": "capacity reservation ids to their fields (instance_type, availability_zone, ...)",
}
"""What each mapping of the catalog maps, for a section given another shape."""
_ENTRIES: dict[type[BaseModel], str] = {
    CatalogAmi: "an image's fields (id, name, architecture, ...)",
    CatalogCluster: "a cluster's fields (version, authentication_mode, oidc_issuer, oidc_provider, node_groups)",
    CatalogNodeGroup: "a node group's scaling config (desired_size, min_size, max_size)",
    CatalogReservation: "a reservation's fields (instance_type, availability_zone, instance_count, type, start_date, "
    "end_date)",
    CatalogDoc: "the catalog's sections (amis, ssm_parameters, subnets, ...)",
}
"""What an entry of each kind holds, for an entry given another shape."""


def _problems(exc: ValidationError, doc: Any) -> list[str]:
    """One line per field; an entry's missing fields on one line."""
    lines: dict[str, list[str]] = {}
    for where, what in (_problem(e, doc) for e in exc.errors()):
        lines.setdefault(where, []).append(what)
    out = []
    for where, whats in lines.items():
        missing = [w.removeprefix("missing ") for w in whats if w.startswith("missing ")]
        rest = [w for w in whats if not w.startswith("missing ")]
        if missing:
            out.append(f"{where}: missing {', '.join(missing)}")
        out += [f"{where}: {w}" for w in rest]
    return out


class Catalog:
    """The offline account's images (by id) and SSM parameters."""

    def __init__(
        self,
        amis: Mapping[str, AmiFacts],
        source: str = "<memory>",
        ebs_encryption_by_default: bool = False,
        ssm_parameters: Optional[Mapping[str, str]] = None,
        subnets: Optional[Mapping[str, str]] = None,
        prices: Optional[Mapping[str, float]] = None,
        clusters: Optional[Mapping[str, CatalogCluster]] = None,
        reservations: Optional[Mapping[str, reservations_.CapacityReservation]] = None,
        given: Sequence[str] = (),
    ) -> None:
        self.amis = dict(amis)
        self.source = source
        self.ebs_encryption_by_default = ebs_encryption_by_default
        self.ssm_parameters = dict(ssm_parameters or {})
        self.subnets = dict(subnets or {})
        """Subnet id -> its Availability Zone."""
        self.prices = dict(prices or {})
        """Instance type -> US dollars an hour on demand, over the price table (``facts.prices``)."""
        self.clusters = dict(clusters or {})
        """EKS cluster name -> what EKS says of it (a cluster not listed has the defaults)."""
        self.reservations = dict(reservations or {})
        """Capacity reservation id -> what EC2 says of it (one not listed: the account has no such reservation)."""
        self.given = frozenset(given)
        """The sections the file wrote (``ebs_encryption_by_default`` among them only when the file set it)."""

    def over(self, base: "Catalog") -> "Catalog":
        """This catalog added to ``base``: every image, SSM parameter, subnet, price, cluster and capacity reservation
        of both, this catalog's entry winning over ``base``'s of the same id or key, and ``base``'s EBS encryption
        default unless this catalog sets its own (``--amis FILE`` over the default catalog)."""
        encrypted = (
            self.ebs_encryption_by_default
            if "ebs_encryption_by_default" in self.given
            else base.ebs_encryption_by_default
        )
        return Catalog(
            {**base.amis, **self.amis},
            self.source,
            encrypted,
            {**base.ssm_parameters, **self.ssm_parameters},
            {**base.subnets, **self.subnets},
            {**base.prices, **self.prices},
            {**base.clusters, **self.clusters},
            {**base.reservations, **self.reservations},
            sorted(self.given | base.given),
        )

    def policy_facts(self) -> dict[str, dict[str, Any]]:
        """Every image's facts as the pack's AMI-facts policies take them in their config (``amis``: AMI id ->
        ``rootSnapshotGiB``, ``architecture``, ...): the offline preview gives them to the pack, so that what the
        catalog knows of an AMI reaches the policies whichever resource pins it."""
        return {
            ami.id: {
                key: value
                for key, value in {
                    "name": ami.name,
                    "description": ami.description,
                    "architecture": ami.architecture,
                    "rootDeviceName": ami.root_device_name,
                    "rootSnapshotGiB": ami.root_snapshot_gib,
                    "rootSnapshotEncrypted": ami.root_snapshot_encrypted,
                    "creationDate": ami.creation_date,
                    "ownerId": ami.owner_id,
                    "imageOwnerAlias": ami.owner_alias,
                    "deprecationTime": ami.deprecation_time,
                    "tags": dict(ami.tags),
                    "nvidiaDriverBranch": ami.nvidia_driver_branch,
                }.items()
                if value not in (None, "")
            }
            for ami in self.amis.values()
        }

    def cluster(self, name: str) -> CatalogCluster:
        """An EKS cluster of the offline account: the one listed, else one with the defaults and no node groups."""
        return self.clusters.get(name) or CatalogCluster()

    def zone_of(self, subnet_id: str, region: str) -> Optional[str]:
        """The subnet's Availability Zone, or None when the account has no such subnet in ``region``."""
        zone = self.subnets.get(subnet_id)
        rest = zone[len(region) :] if zone is not None and zone.startswith(region) else ""
        # us-east-1a (a zone letter) or us-east-1-bos-1a (a Local Zone of the region)
        return zone if re.fullmatch(r"[a-z]|-[a-z]+-[0-9]+[a-z]", rest) else None

    def get(self, ami_id: str) -> Optional[AmiFacts]:
        return self.amis.get(ami_id)

    def parameter(self, name: str) -> Optional[str]:
        """An SSM parameter's value (``GetParameter`` by name or ARN), or None when the account has none."""
        if name.startswith("arn:"):
            name = name.split(":parameter", 1)[-1]
        return self.ssm_parameters.get(name) or self.ssm_parameters.get("/" + name.lstrip("/"))

    def find(self, filters: Sequence[Mapping[str, Any]] = (), owners: Sequence[str] = ()) -> list[AmiFacts]:
        """EC2 ``DescribeImages``: every image matching all ``filters`` (each one's values ORed, ``*`` and
        ``?`` as wildcards) and, when given, one of ``owners`` (account ids, ``self``, ``amazon``,
        ``aws-marketplace``). An unsupported filter is refused by name."""
        ids = [[str(v) for v in f.get("values") or []] for f in filters if f.get("name") == "image-id"]
        if ids and not any(c in v for v in ids[0] for c in "*?"):
            pool = [ami for ami in (self.get(v) for v in ids[0]) if ami is not None]  # by id: one read each
        else:
            pool = list(self.amis.values())
        found = []
        for ami in pool:
            if owners and not any(_owned_by(ami, owner) for owner in owners):
                continue
            if all(_matches(ami, str(f.get("name", "")), [str(v) for v in f.get("values") or []]) for f in filters):
                found.append(ami)
        return found

    @classmethod
    def load(cls, path: Optional[Path] = None) -> "Catalog":
        path = Path(path) if path else DEFAULT_CATALOG
        try:
            text = read_input(path).decode("utf-8")
        except NotReadable as exc:
            raise CatalogError(f"AMI catalog {path}: {exc}") from None
        except OSError as exc:
            raise CatalogError(f"AMI catalog {path}: cannot read it ({exc.strerror})") from None
        except UnicodeDecodeError:
            raise CatalogError(f"AMI catalog {path}: not UTF-8 text") from None
        try:
            doc = _load(text, path)
        except CatalogError:
            raise
        except yaml.YAMLError as exc:
            raise CatalogError(f"AMI catalog {path}: not valid YAML: {exc}") from None
        except YAML_TAG_ERRORS:
            raise CatalogError(f"AMI catalog {path}: not valid YAML: {TAG_MISFIT}") from None
        except RecursionError:
            raise CatalogError(
                f"AMI catalog {path}: nested deeper than any catalog (more than {MAX_DEPTH} levels)"
            ) from None
        return cls.from_doc({} if doc is None else doc, str(path))

    @classmethod
    def with_default(cls, path: Optional[Path] = None) -> "Catalog":
        """``--amis FILE``: the default catalog (``DEFAULT_CATALOG``, the example stacks' images) with FILE's
        entries added, an entry of FILE replacing the default's of the same id or key; no FILE: the default."""
        default = cls.load()
        return default if path is None else cls.load(path).over(default)

    @classmethod
    def from_doc(cls, doc: Any, source: str = "<memory>") -> "Catalog":
        if not isinstance(doc, dict):
            raise CatalogError(f"AMI catalog {source}: expected a mapping with an 'amis:' list, got {_type_name(doc)}")
        if _depth(doc) >= MAX_DEPTH:
            raise CatalogError(f"AMI catalog {source}: nested deeper than any catalog (more than {MAX_DEPTH} levels)")
        bad_keys = [k for k in _keys(doc) if not isinstance(k, str)]
        if bad_keys:
            raise CatalogError(
                f"AMI catalog {source}: the key {bad_keys[0]!r} is {_type_name(bad_keys[0])}, not text (quote it)"
            )
        try:
            model = CatalogDoc.model_validate(doc)
        except ValidationError as exc:
            problems = _problems(exc, doc)
            raise CatalogError(
                f"AMI catalog {source}: "
                + (problems[0] if len(problems) == 1 else "invalid:\n  " + "\n  ".join(problems))
            ) from None
        return cls(
            {ami.id: ami.facts() for ami in model.amis},
            source,
            model.ebs_encryption_by_default,
            model.ssm_parameters,
            model.subnets,
            prices=model.prices,
            clusters=model.clusters,
            reservations={i: entry.facts(i) for i, entry in model.reservations.items()},
            given=list(model.model_fields_set),
        )


def _keys(value: Any) -> list[Any]:
    """Every mapping key in ``value``, at any depth."""
    if isinstance(value, dict):
        return [*value.keys(), *(k for v in value.values() for k in _keys(v))]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []


# ---- DescribeImages filters ---------------------------------------------------------------------------------


def _owned_by(ami: AmiFacts, owner: str) -> bool:
    if owner == "self":
        return ami.owner_id == OFFLINE_ACCOUNT
    if owner in ("amazon", "aws-marketplace"):
        return ami.owner_alias == owner
    return ami.owner_id == owner


def _glob(pattern: str) -> re.Pattern[str]:
    """EC2's filter wildcards: ``*`` any run of characters, ``?`` one character; nothing else is special."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.S)


def _matches(ami: AmiFacts, name: str, values: list[str]) -> bool:
    fields = {
        "image-id": ami.id,
        "name": ami.name,
        "description": ami.description,
        "architecture": ami.architecture,
        "owner-id": ami.owner_id,
        "owner-alias": ami.owner_alias,
        "root-device-name": ami.root_device_name,
        "state": "available",
        "image-type": "machine",
        "virtualization-type": "hvm",
        "root-device-type": "ebs",
    }
    if name == "tag-key":
        return any(_glob(v).fullmatch(key) for v in values for key in ami.tags)
    if name.startswith("tag:"):
        value = ami.tags.get(name[4:])
        return value is not None and any(_glob(v).fullmatch(value) for v in values)
    if name not in fields:
        raise CatalogError(
            f"the offline AMI catalog cannot filter images by '{name}' "
            f"(it filters by {', '.join(sorted(fields))}, tag:<key> and tag-key)"
        )
    return any(_glob(v).fullmatch(fields[name]) for v in values)


def get_ami_result(ami: AmiFacts) -> dict[str, Any]:
    """The ``aws:ec2/getAmi`` result EC2 would give for this image (engine property names)."""
    return {
        "id": ami.id,
        "imageId": ami.id,
        "name": ami.name,
        "description": ami.description,
        "architecture": ami.architecture,
        "rootDeviceName": ami.root_device_name,
        "rootDeviceType": "ebs",
        "creationDate": ami.creation_date,
        "deprecationTime": ami.deprecation_time,
        "ownerId": ami.owner_id,
        "imageOwnerAlias": ami.owner_alias,
        "state": "available",
        "virtualizationType": "hvm",
        "tags": dict(ami.tags),
        "blockDeviceMappings": [
            {
                "deviceName": ami.root_device_name,
                "ebs": {
                    "delete_on_termination": "true",
                    "encrypted": "true" if ami.root_snapshot_encrypted else "false",
                    "snapshot_id": "snap-" + ami.id.removeprefix("ami-"),
                    "volume_size": f"{ami.root_snapshot_gib:g}",
                    "volume_type": "gp3",
                },
                "noDevice": "",
                "virtualName": "",
            }
        ],
    }
