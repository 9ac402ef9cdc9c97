"""``ServiceSpec``: one service in the seeds' words (a ``convox.yml`` service), validated once.

Fields take the seeds' names (``nodeSelectorLabels``, ``securityContext.runAsNonRoot``) or their
Python spelling (``node_selector_labels``), and the seeds' shapes: ``scale: 2`` or
``scale: {count: 2-6, cpu: 256, memory: 512, gpu: 1}``, ``gpu: {count: 1, vendor: nvidia}``,
``health: /health`` or ``health: {path, grace, interval, timeout}``, ``environment: [KEY=value]``
or a mapping. Defaults are the seeds' (convox/convox ``pkg/manifest/manifest.go``): one replica;
250 millicores and 512 MiB requested when no GPU is; health on ``/`` every 5 s.

Every value is checked against what the Kubernetes API would accept (names are DNS-1035 labels,
label keys and values, environment variable names, ports) and every problem is one line naming the
service, the field path and the value: ``Service 'web': scale.count: invalid count '2-' (...)``.
"""

import json
import re
from typing import Any, Optional, Sequence

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic.alias_generators import to_camel

from .. import contract, syntax
from ..errors import ConfigError
from ..placement import GpuRequest, Placement, place
from .limits import INT32_MAX
from .base import FieldProblem, error_loc, error_message, json_value, key_path, pointed, rendered, shown, strict_scalars

DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
ENV_VAR_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
COUNT_RE = re.compile(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?")
"""Kubernetes' own patterns (k8s.io/apimachinery ``pkg/util/validation/validation.go``)."""

DEFAULT_CPU_MILLICORES = 250
DEFAULT_MEMORY_MIB = 512
DEFAULT_CPU_TARGET = 80
"""The autoscaler's CPU target (percent of the request) when ``scale.targets.cpu`` is not set: the
figure Kubernetes itself uses for a HorizontalPodAutoscaler without metrics (k8s.io/api
``autoscaling/v2`` ``HorizontalPodAutoscalerSpec.metrics``: "80% average CPU utilization")."""


MAX_CPU_TARGET = 1000
"""The rack's ceiling for ``scale.targets.cpu``. Kubernetes takes any positive ``averageUtilization``
(percent of the request; above 100 when pods may use more than they request), but a pod that needs
more than ten times its request is placed on nodes by a request that says almost nothing about it."""


def dns1035_problem(value: str, what: str) -> Optional[str]:
    """A Service's name: lowercase letters, digits and '-', starting with a letter, at most 63."""
    if len(value) <= 63 and DNS1035_LABEL.fullmatch(value):
        return None
    return (
        f"invalid {what} '{value}' (lowercase letters, digits and '-', starting with a letter and ending "
        f"with a letter or digit, at most 63 characters)"
    )


def dns1123_label_problem(value: str, what: str) -> Optional[str]:
    """A namespace: lowercase letters, digits and '-', starting and ending alphanumeric, at most 63."""
    if not syntax.dns_label_problem(value):
        return None
    return f"invalid {what} '{value}' (lowercase letters, digits and '-', starting and ending alphanumeric, at most 63)"


def label_key_problem(key: str) -> Optional[str]:
    """A label key: ``[prefix/]name``, the prefix a DNS subdomain of at most 253, the name at most 63."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return f"invalid label key '{key}' (its prefix must be a lowercase DNS subdomain, e.g. convox.io)"
    if not name or len(name) > 63 or not QUALIFIED_NAME.fullmatch(name):
        return (
            f"invalid label key '{key}' (the name is at most 63 letters, digits, '-', '_' or '.', "
            f"starting and ending alphanumeric)"
        )
    return None


def label_value_problem(key: str, value: str) -> Optional[str]:
    if value == "" or (len(value) <= 63 and QUALIFIED_NAME.fullmatch(value)):
        return None
    return (
        f"invalid value '{value}' for '{key}' (at most 63 letters, digits, '-', '_' or '.', "
        f"starting and ending alphanumeric)"
    )


class Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def _numbers(cls, value: Any, info: ValidationInfo) -> Any:
        return strict_scalars(cls, value, info)  # numbers and numeric strings pass, true/false do not


class GpuSpec(Part):
    """``scale.gpu``: a bare number is the count."""

    count: int = 0
    """GPUs per replica. Default 0."""
    vendor: str = "nvidia"
    """``nvidia`` (or ``nvidia.com``) or ``amd`` (or ``amd.com``). Default ``nvidia``."""

    @model_validator(mode="before")
    @classmethod
    def _bare_count(cls, value: Any) -> Any:
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return {"count": value}
        if isinstance(value, float) and value.is_integer():  # YAML's 1.0
            return {"count": int(value)}
        if not isinstance(value, (dict, GpuSpec)):
            raise ValueError(
                f"invalid gpu {_json(value)} (a whole number of GPUs per replica like 1, or "
                f"{{count: 1, vendor: nvidia}})"
            )
        return value

    @field_validator("count", mode="before")
    @classmethod
    def _whole(cls, v: Any) -> Any:
        if isinstance(v, float) and not v.is_integer():
            raise ValueError(
                f"invalid count {_json(v)} (a whole number of GPUs per replica: GPUs are not shared "
                f"between pods this way; use 1, or time-slicing on the lane)"
            )
        return v

    @field_validator("count")
    @classmethod
    def _count(cls, v: int) -> int:
        if v < 0:
            raise ValueError(f"invalid count '{v}' (0 or more)")
        return v

    @field_validator("vendor")
    @classmethod
    def _vendor(cls, v: str) -> str:
        if v not in contract.GPU_RESOURCES:
            raise ValueError(f"invalid vendor '{v}' (one of {', '.join(contract.GPU_RESOURCES)})")
        return v

    def request(self) -> GpuRequest:
        return GpuRequest(self.count, self.vendor)


def _json(value: Any) -> str:
    return rendered(value)


def _mapping_or(value: Any, field: str, bare: str, fields: str) -> Any:
    """``value`` when it is a mapping, else an error saying what ``field`` takes (no class names)."""
    if isinstance(value, (dict, BaseModel)):
        return value
    raise ValueError(f"invalid {field} {_json(value)} ({bare}, or a mapping {fields})")


class TargetsSpec(Part):
    """``scale.targets``: what the autoscaler aims for."""

    cpu: int = DEFAULT_CPU_TARGET
    """Average CPU use, percent of the request: 1-1000. Default 80. Above 100 is valid: use is measured
    against the request, and a pod without a CPU limit (or with a higher one) may use more."""

    @field_validator("cpu")
    @classmethod
    def _cpu(cls, v: int) -> int:
        if not 1 <= v <= MAX_CPU_TARGET:
            raise ValueError(
                f"invalid cpu target '{v}' (percent of the CPU request, 1-{MAX_CPU_TARGET}; a target "
                f"over {MAX_CPU_TARGET}% means the pods use more than ten times what they request: "
                f"raise scale.cpu instead)"
            )
        return v


def parse_count(value: Any) -> tuple[int, int]:
    """``2`` -> (2, 2); ``"2-6"`` -> (2, 6)."""
    if isinstance(value, bool):
        raise ValueError(f"invalid count '{str(value).lower()}' (use a number like 2 or a range like 2-6)")
    if isinstance(value, float) and value.is_integer():  # a number over the provider protocol
        value = int(value)
    if isinstance(value, int):
        low = high = value
    elif (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() for v in value)
    ):
        low, high = int(value[0]), int(value[1])  # [min, max]; numbers arrive as floats over the provider protocol
        value = f"{low}-{high}"
    else:
        match = COUNT_RE.fullmatch(value) if isinstance(value, str) else None
        if not match:
            raise ValueError(f"invalid count '{value}' (use a number like 2 or a range like 2-6)")
        low = syntax.whole_number(match.group(1))
        high = syntax.whole_number(match.group(2)) if match.group(2) is not None else low
    if low < 0:
        raise ValueError(f"invalid count '{value}' (0 or more)")
    if high > INT32_MAX:
        raise ValueError(f"invalid count '{value}' (at most {INT32_MAX}: replicas are a 32-bit integer)")
    if low > high:
        raise ValueError(f"invalid count '{value}' (the minimum {low} is above the maximum {high})")
    if low != high and low < 1:
        raise ValueError(f"invalid count '{value}' (an autoscaled range starts at 1 or more)")
    return low, high


class ScaleSpec(Part):
    """``scale``: a bare number or range is the count."""

    count: Sequence[int] = (1, 1)
    """Replicas: ``2``, a range ``2-6`` (a HorizontalPodAutoscaler on CPU between them), or ``[2, 6]``; held as
    (minimum, maximum). Default 1."""
    cpu: Optional[int] = None
    """CPU request, millicores. Default 250 (none for a GPU service)."""
    memory: Optional[int] = None
    """Memory request and limit, MiB. Default 512 (none for a GPU service)."""
    gpu: GpuSpec = GpuSpec()
    """GPUs per replica, as request and limit: ``1``, or ``{count: 1, vendor: nvidia}``."""
    targets: TargetsSpec = TargetsSpec()
    """The autoscaler's targets: ``{cpu: 80}``."""

    @model_validator(mode="before")
    @classmethod
    def _bare_count(cls, value: Any) -> Any:
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return {"count": value}
        return _mapping_or(value, "scale", "a count like 2 or a range like 2-6", "{count, cpu, memory, gpu, targets}")

    @field_validator("count", mode="before")
    @classmethod
    def _count(cls, value: Any) -> tuple[int, int]:
        return parse_count(value)

    @field_validator("cpu", "memory")
    @classmethod
    def _positive(cls, v: Optional[int]) -> Optional[int]:
        if v is not None and v <= 0:
            raise ValueError(f"invalid value '{v}' (must be positive)")
        return v

    @property
    def autoscaled(self) -> bool:
        return self.count[0] != self.count[1]

    @property
    def cpu_request(self) -> Optional[int]:
        """Millicores requested: ``cpu``, else the seeds' default unless the service asks for GPUs."""
        return self.cpu if self.cpu is not None or self.gpu.count else DEFAULT_CPU_MILLICORES

    @property
    def memory_request(self) -> Optional[int]:
        return self.memory if self.memory is not None or self.gpu.count else DEFAULT_MEMORY_MIB

    @model_validator(mode="after")
    def _autoscaled_needs_cpu(self) -> "ScaleSpec":
        if self.autoscaled and self.cpu_request is None:
            raise FieldProblem(
                "count",
                f"range '{self.count[0]}-{self.count[1]}' autoscales on CPU, which needs "
                f"scale.cpu (a GPU service requests no CPU by default)",
            )
        return self


class HealthSpec(Part):
    """``health``: a bare string is the path."""

    path: str = "/"
    """The HTTP path the readiness and liveness probes get. Default ``/``."""
    grace: Optional[int] = None
    """Seconds before the first readiness check. Default: ``interval``."""
    interval: int = 5
    """Seconds between checks. Default 5."""
    timeout: Optional[int] = None
    """Seconds a check may take. Default: ``interval`` - 1 (at least 1)."""

    @model_validator(mode="before")
    @classmethod
    def _bare_path(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"path": value}
        return _mapping_or(value, "health", "an HTTP path like /health", "{path, grace, interval, timeout}")

    @field_validator("path")
    @classmethod
    def _path(cls, v: str) -> str:
        if not v.startswith("/") or re.search(r"\s", v):
            raise ValueError(f"invalid path '{v}' (an HTTP path like /health)")
        return v

    @field_validator("interval", "timeout")
    @classmethod
    def _at_least_one(cls, v: Optional[int]) -> Optional[int]:
        if v is not None and not 1 <= v <= INT32_MAX:
            raise ValueError(f"invalid value '{v}' (seconds, 1 to {INT32_MAX}: a probe's seconds are a 32-bit integer)")
        return v

    @field_validator("grace")
    @classmethod
    def _grace(cls, v: Optional[int]) -> Optional[int]:
        if v is not None and not 0 <= v <= INT32_MAX:
            raise ValueError(f"invalid grace '{v}' (seconds, 0 to {INT32_MAX}: a probe's seconds are a 32-bit integer)")
        return v

    @property
    def initial_delay(self) -> int:
        return self.grace if self.grace is not None else self.interval

    @property
    def check_timeout(self) -> int:
        return self.timeout if self.timeout is not None else max(1, self.interval - 1)


class SecurityContextSpec(Part):
    """``securityContext``: on top of the restrictive defaults every container gets."""

    run_as_non_root: bool = False
    """Refuse to start an image whose user is root. Default false."""
    read_only_root_filesystem: bool = False
    """Mount the image read-only (``/tmp`` stays writable, an emptyDir). Default false."""


def _environment(value: Any) -> Any:
    """``[KEY=value, ...]`` (the seeds' form) -> a mapping; a mapping passes as it is."""
    if not isinstance(value, list):
        return value
    env: dict[str, Any] = {}
    for item in value:
        if not isinstance(item, str) or "=" not in item:
            raise ValueError(f"entry '{item}' has no value (write KEY=value)")
        key, _, val = item.partition("=")
        if key in env:
            raise ValueError(f"'{key}' is set twice")
        env[key] = val
    return env


class ServiceSpec(Part):
    """One service: a Deployment and a Service named ``name``, placed on the lane it selects."""

    name: str
    """The Deployment's and the Service's name: a DNS-1035 label (``web``)."""
    image: str
    """The container image (``nginx:1.27``, ``123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1``)."""
    port: int
    """The port the container listens on; the Service exposes it. 1-65535."""
    health: HealthSpec = HealthSpec()
    """Readiness and liveness on an HTTP path: ``/health``, or ``{path, grace, interval, timeout}``."""
    environment: dict[str, str] = {}
    """Environment variables: ``[KEY=value]`` or a mapping."""
    scale: ScaleSpec = ScaleSpec()
    """``count``, ``cpu`` (millicores), ``memory`` (MiB), ``gpu``, ``targets``; a bare number is the count."""
    node_selector_labels: dict[str, str] = {}
    """Labels the nodes must carry: ``convox.io/label: gpu-inference`` or ``convox.io/nodepool: gpu``
    (and the lane's ``dedicated-node`` taint is then tolerated)."""
    internal: bool = False
    """Reachable inside the cluster only (a ClusterIP Service); otherwise a LoadBalancer. Default false."""
    security_context: SecurityContextSpec = SecurityContextSpec()
    """``runAsNonRoot``, ``readOnlyRootFilesystem``."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            name = data.get("name")
            raise ServiceError(name if isinstance(name, str) else "?", exc) from None

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        problem = dns1035_problem(v, "name")
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("image")
    @classmethod
    def _image(cls, v: str) -> str:
        if not v or re.search(r"\s", v):
            raise ValueError(f"invalid image '{v}' (a reference like nginx:1.27, with no spaces)")
        return v

    @field_validator("port")
    @classmethod
    def _port(cls, v: int) -> int:
        if not 1 <= v <= 65535:
            raise ValueError(f"invalid port '{v}' (1-65535)")
        return v

    @field_validator("environment", mode="before")
    @classmethod
    def _env_list(cls, value: Any) -> Any:
        return _environment(value)

    @field_validator("environment")
    @classmethod
    def _env_names(cls, v: dict[str, str]) -> dict[str, str]:
        for key in v:
            if not ENV_VAR_NAME.fullmatch(key):
                raise ValueError(f"invalid name '{key}' (letters, digits, '_', '-' or '.', not starting with a digit)")
        return v

    @field_validator("node_selector_labels")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        for key, value in v.items():
            problem = label_key_problem(key) or label_value_problem(key, value)
            if problem:
                raise ValueError(problem)
        return v

    def placement(self) -> Placement:
        """Where it lands: ``place(node_selector_labels, scale.gpu)``."""
        return place(self.node_selector_labels, self.scale.gpu.request())


class ServiceError(ConfigError, ValueError):
    """A service whose fields the Kubernetes API (or the seeds) would refuse: one line per problem,
    ``Service '<name>': <field path>: <problem>``."""

    def __init__(self, name: str, exc: ValidationError) -> None:
        self.errors = exc.errors()
        lines = [(key_path(error_loc(e)), error_message(e)) for e in self.errors]
        self.problems = lines
        """``(field path, problem)`` of each line (a component names the paths under its argument's name)."""
        name = shown(name)
        super().__init__(
            "\n".join(
                f"Service '{name}': {path}: {message}" if path else f"Service '{name}': {message}"
                for path, message in lines
            )
        )


def parse_services(value: Any, key: str = "app:services") -> dict[str, ServiceSpec]:
    """The services of a stack config value (``app:services``): a mapping of service name to its fields,
    as a ``convox.yml``'s ``services:`` writes them, given as the mapping or as the JSON text a program
    reads from its config. The mapping key names the service; a ``name:`` that says otherwise is refused,
    as is a key given twice in the JSON text (one of them would be dropped). Every problem is one line of
    a ``ConfigError``, at its key path: ``app:services.web.scale.count: invalid count '2-' (...)``."""
    if isinstance(value, str):
        text = value.strip()
        if text == "null":
            raise ConfigError(f"{key}: null (no value): give the services, a mapping of service name to its fields")
        try:
            value = json_value(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{key}: invalid JSON: {exc.msg} at position {exc.pos}") from None
        except RecursionError:
            raise ConfigError(f"{key}: invalid JSON: nested too deep to read") from None
        except ValueError as exc:
            raise ConfigError(f"{key}: {shown(str(exc))}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: expected a mapping of service name to its fields (got {_json(value)})")
    specs: dict[str, ServiceSpec] = {}
    lines: list[str] = []
    for name, fields in value.items():
        if not isinstance(name, str):
            lines.append(f"{key}: service names are text (got {_json(name)})")
            continue
        where = f"{key}.{shown(name)}"
        if not isinstance(fields, dict):
            lines.append(f"{where}: expected the service's fields, a mapping (got {_json(fields)})")
            continue
        if "name" in fields and fields["name"] != name:
            lines.append(
                pointed(
                    f"{where}.name: '{fields['name']}' is not the service's key '{name}': the key names "
                    f"the service; drop name:, or rename the key to '{fields['name']}'",
                    [fields["name"], name],
                )
            )
            continue
        try:
            specs[name] = ServiceSpec(**{**fields, "name": name})
        except ServiceError as exc:
            for error in exc.errors:
                path = key_path(error_loc(error))
                lines.append(f"{where}.{path}: {error_message(error)}" if path else f"{where}: {error_message(error)}")
    if lines:
        raise ConfigError("\n".join(lines))
    return specs
