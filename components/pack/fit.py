"""What a node can hold and what a pod asks for: allocatable and effective requests, as pure arithmetic.

Allocatable follows what the EKS AL2023 AMI's ``nodeadm`` writes into the kubelet config
(awslabs/amazon-eks-ami ``nodeadm/internal/kubelet/config.go``) and what Karpenter (v1.14.1,
``pkg/providers/instancetype/types.go``) assumes before it launches a node:

* kube-reserved memory: 11 MiB per pod the node may run plus 255 MiB, with the ENI-limited max pods
  (``instances.InstanceType.max_pods``), whatever ``maxPods`` the kubelet is given;
* kube-reserved CPU: 6 % of the first core, 1 % of the second, 0.5 % of the third and fourth and
  0.25 % of every core above four (integer millicores per band);
* kube-reserved ephemeral storage 1 GiB; hard eviction at 100 MiB of memory and 10 % of the root
  (data) volume; no system-reserved;
* Karpenter's estimate of a type's memory capacity: EC2's MiB, less 64 MiB on arm64 (the kernel's
  CMA), less 7.5 % of that (rounded up) for the hypervisor (``vmMemoryOverheadPercent``). The real node
  reports its own MemTotal, a little different; this is the figure Karpenter launches for.

A pod's effective request is the scheduler's (kubernetes ``component-helpers/resource/helpers.go``,
``PodRequests``): regular containers and restartable init containers (sidecars) summed; each init
container in turn needs its request plus the sidecars started before it; the pod needs the larger
of the two, per resource; pod-level ``resources.requests`` (cpu, memory) replace the containers';
``overhead`` is added. A container with a limit and no request requests its limit; so does the pod
for a pod-level limit of a resource no container asks for (the API's defaulting, ``pkg/apis/core/v1``
``defaultPodRequests``, PodLevelResources, on by default since Kubernetes 1.34).

Pure: the standard library, the package's ``contract``, the pack's ``bootfacts`` and ``facts.instances``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional

from .. import contract, syntax
from ..facts import instances
from . import bootfacts

MIB = 2**20
GIB = 2**30
EVICTION_MEMORY_MIB = 100
KUBE_RESERVED_EPHEMERAL_GIB = 1
NODEFS_EVICTION = 0.10
VM_MEMORY_OVERHEAD = 0.075
ARM_CMA_MIB = 64
DEFAULT_ROOT_GIB = 20.0
"""The EKS AMIs' root volume (and Karpenter's default ``/dev/xvda``, Bottlerocket's data volume)."""
CPU_BANDS = ((0, 1000, 600), (1000, 2000, 100), (2000, 4000, 50), (4000, None, 25))
"""(from millicores, to millicores, rate in 1/10000): nodeadm's ``getCPUMillicoresToReserve``."""

CPU, MEMORY, EPHEMERAL = "cpu", "memory", "ephemeral-storage"
SIZED = (CPU, MEMORY, EPHEMERAL)


def kube_reserved_cpu_m(vcpus: int) -> int:
    total = vcpus * 1000
    reserved = 0
    for start, end, rate in CPU_BANDS:
        top = total if end is None else min(total, end)
        if top > start:
            reserved += (top - start) * rate // 10000
    return reserved


def kube_reserved_memory_mib(max_pods: int) -> int:
    return 11 * max_pods + 255


@functools.lru_cache(maxsize=4096)
def memory_capacity_mib(itype: instances.InstanceType) -> int:
    """Karpenter's estimate of the node's memory capacity before it has seen one."""
    mib = itype.memory_mib - (ARM_CMA_MIB if itype.arch == instances.ARM else 0)
    return mib - math.ceil(mib * VM_MEMORY_OVERHEAD)


# ---- a NodePool's limits against one node of a type -----------------------------------------------------

NODES = "nodes"
LIMITED = (CPU, MEMORY, contract.NVIDIA_GPU, contract.AMD_GPU, NODES)
"""The limits what one node of a type adds to is known for (one node counts one ``nodes``)."""


@functools.lru_cache(maxsize=4096)
def limit_capacity(itype: instances.InstanceType) -> tuple[float, ...]:
    """What one node of ``itype`` adds to each of ``LIMITED``: Karpenter's capacity (its memory estimate;
    a GPU counted under its vendor's resource only), and one node."""
    vendor = instances.facts(itype.name).gpu
    return (
        float(itype.vcpus),
        float(memory_capacity_mib(itype) * MIB),
        float(itype.gpus if vendor == instances.NVIDIA else 0),
        float(itype.gpus if vendor == instances.AMD else 0),
        1.0,
    )


def counted_limits(limits: Mapping[str, float]) -> tuple[float, ...]:
    """Per ``LIMITED``, the room a NodePool's ``limits`` (base units) leave (infinite: no limit). A ``nodes``
    limit above zero lets a whole node more run while any of it is left (Karpenter stops at none left, or less):
    it is counted as the whole nodes it lets run (``500m`` is one)."""
    room = [limits.get(r, math.inf) for r in LIMITED]
    nodes = room[-1]
    if 0 < nodes < math.inf:
        room[-1] = float(math.ceil(nodes))
    return tuple(room)


def within_limits(limits: Mapping[str, float]) -> Callable[[instances.InstanceType], bool]:
    """Whether one node of a type fits a NodePool's ``limits`` when none of them is used yet, as Karpenter judges
    a type before it launches one: what the node adds to each limited resource at most the limit, no ``nodes``
    limit of zero or less, and no limit below zero on any resource (every type adds zero or more of each)."""
    room = counted_limits(limits)
    below = any(amount < 0 for name, amount in limits.items() if name not in LIMITED)
    return lambda itype: not below and all(adds <= left for adds, left in zip(limit_capacity(itype), room))


def limits_below_zero(limits: Mapping[str, float]) -> list[str]:
    """The limits below zero, those of ``LIMITED`` first: every node is over each of them."""
    return [r for r in LIMITED if limits.get(r, 0.0) < 0] + sorted(
        r for r, amount in limits.items() if r not in LIMITED and amount < 0
    )


@dataclass(frozen=True)
class Allocatable:
    """What pods can be given on one node: cpu in millicores, memory and ephemeral storage in MiB."""

    cpu_m: int
    memory_mib: int
    ephemeral_mib: int
    gpus: int = 0

    def get(self, resource: str) -> float:
        """In the units ``requests`` uses: cores, bytes."""
        if resource == CPU:
            return self.cpu_m / 1000
        if resource == MEMORY:
            return self.memory_mib * MIB
        if resource == EPHEMERAL:
            return self.ephemeral_mib * MIB
        return self.gpus

    def less(self, used: Mapping[str, float]) -> "Allocatable":
        """After ``used`` (cores and bytes) is taken by the lane's DaemonSets."""
        return Allocatable(
            self.cpu_m - round(used.get(CPU, 0) * 1000),
            self.memory_mib - math.ceil(used.get(MEMORY, 0) / MIB),
            self.ephemeral_mib - math.ceil(used.get(EPHEMERAL, 0) / MIB),
            self.gpus,
        )


BEYOND = 1e30
"""More of anything than a node has: a request past a float's range (``"1e400"``, infinite) counts as this much,
so that the arithmetic over requests (sums, differences, whole units) stays finite."""


def allocatable(itype: instances.InstanceType, root_gib: Optional[float] = None) -> Allocatable:
    """The allocatable of one node of ``itype`` whose root (data) volume is ``root_gib`` GiB."""
    root_mib = min(root_gib or DEFAULT_ROOT_GIB, BEYOND) * 1024
    cpu = itype.vcpus * 1000 - kube_reserved_cpu_m(itype.vcpus)
    memory = memory_capacity_mib(itype) - kube_reserved_memory_mib(itype.max_pods) - EVICTION_MEMORY_MIB
    ephemeral = root_mib - KUBE_RESERVED_EPHEMERAL_GIB * 1024 - math.ceil(root_mib * NODEFS_EVICTION)
    return Allocatable(cpu, memory, int(ephemeral), itype.gpus)


# ---- quantities -----------------------------------------------------------------------------------------------

quantity = bootfacts.quantity
"""A Kubernetes quantity in base units (``bootfacts.quantity``)."""


def _container(container: Any) -> dict[str, float]:
    resources = bootfacts.as_map(bootfacts.as_map(container).get("resources"))
    requests, limits = bootfacts.as_map(resources.get("requests")), bootfacts.as_map(resources.get("limits"))
    found: dict[str, float] = {}
    for name in [*requests, *(k for k in limits if k not in requests)]:
        amount = quantity(requests[name]) if name in requests else quantity(limits[name])
        if amount:
            found[str(name)] = amount
    return found


def _add(into: dict[str, float], more: Mapping[str, float]) -> dict[str, float]:
    for name, amount in more.items():
        into[name] = into.get(name, 0) + amount
    return into


def pod_requests(pod: Any) -> dict[str, float]:
    """The pod's effective requests by resource (cores, bytes, counts), as the scheduler computes them."""
    total: dict[str, float] = {}
    for container in bootfacts.as_list(pod.get("containers")):
        _add(total, _container(container))
    sidecars: dict[str, float] = {}
    init_max: dict[str, float] = {}
    for container in bootfacts.as_list(pod.get("initContainers")):
        own = _container(container)
        if bootfacts.as_map(container).get("restartPolicy") == "Always":
            _add(sidecars, own)
            _add(total, own)
            usage = dict(sidecars)
        else:
            usage = _add(dict(sidecars), own)
        for name, amount in usage.items():
            init_max[name] = max(init_max.get(name, 0), amount)
    for name, amount in init_max.items():
        total[name] = max(total.get(name, 0), amount)
    pod_resources = bootfacts.as_map(pod.get("resources"))
    pod_level, pod_limits = (
        bootfacts.as_map(pod_resources.get("requests")),
        bootfacts.as_map(pod_resources.get("limits")),
    )
    for name in (CPU, MEMORY):
        if name in pod_level and (found := quantity(pod_level[name])) is not None:
            total[name] = found
        elif name not in total and name in pod_limits and (found := quantity(pod_limits[name])) is not None:
            total[name] = found  # no container asks for it: the pod-level limit is the pod's request
    for name, value in bootfacts.as_map(pod.get("overhead")).items():
        if (found := quantity(value)) is not None:
            total[str(name)] = total.get(str(name), 0) + found
    return {k: min(v, BEYOND) for k, v in total.items() if v}  # an infinite request ("1e400") as more than any node has


# ---- what the API server refuses ------------------------------------------------------------------------------


def _native(resource: str) -> bool:
    """A resource of Kubernetes' own (kubernetes ``helper.IsNativeResource``): no domain, or kubernetes.io's.
    The others are extended resources (``nvidia.com/gpu``), counted in whole units."""
    domain, slash, _ = resource.partition("/")
    return not slash or domain == "kubernetes.io" or domain.endswith(".kubernetes.io")


def extended(resource: str) -> bool:
    """An extended resource (kubernetes ``helper.IsExtendedResourceName``): not native, and not a quota's
    ``requests.`` name."""
    return not _native(resource) and not resource.startswith("requests.")


def _overcommitted(resource: str) -> bool:
    """Whether a request may be below its limit (kubernetes ``helper.IsOvercommitAllowed``): a native
    resource other than hugepages."""
    return _native(resource) and not resource.startswith("hugepages-")


def _shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"'{value}'" if isinstance(value, str) else str(value)


def _exact(value: Any) -> Optional[Fraction]:
    """A quantity exactly (requests and limits are compared exactly); None when ``quantity`` reads none."""
    amount = quantity(value)
    if amount is None:
        return None
    if not isinstance(value, str):
        return Fraction(str(value)) if math.isfinite(amount) else None  # as written (0.1 is 1/10, as "100m" is)
    match = bootfacts.QUANTITY_RE.fullmatch(value.strip())
    assert match is not None
    written = match.group(3) or "0"
    if len(written) > 4:  # no request and limit a scheduler compares are that far apart: compare as floats
        return Fraction(amount) if math.isfinite(amount) else None
    suffix = bootfacts.QUANTITY_SUFFIX[match.group(2) or ""]
    return (
        Fraction(bootfacts.numeral(match.group(1)))
        * (Fraction(suffix) if suffix >= 1 else Fraction(1, round(1 / suffix)))
        * Fraction(10) ** int(written)
    )


def _compared(request: Any, limit: Any) -> int:
    """-1, 0 or 1 as ``request`` is below, equal to or above ``limit``: exactly, else (a number of thousands of
    digits) as floats, where an infinite quantity is above every finite one."""
    exact, most = _exact(request), _exact(limit)
    a, b = (exact, most) if exact is not None and most is not None else (quantity(request) or 0, quantity(limit) or 0)
    return (a > b) - (a < b)


def refusals(pod: Mapping[str, Any]) -> list[str]:
    """What the API server refuses in a pod's resource requirements (kubernetes ``pkg/apis/core/validation``,
    ``ValidateResourceRequirements`` and ``validateContainerResourceName``): a name that is neither a standard
    container resource nor domain-qualified; a value that is no quantity or is negative (``null`` is zero, as
    ``Quantity`` decodes it); a fraction of an extended resource; a request above its limit; an extended
    resource (or hugepages) requested without a limit, or with another one; hugepages without cpu or memory.
    At pod level (``spec.resources``) only cpu, memory and hugepages may be set. Such a pod is never created."""
    found = []
    for group in ("initContainers", "containers"):
        for container in bootfacts.as_list(pod.get(group)):
            container = bootfacts.as_map(container)
            found += _requirements(
                f'container "{bootfacts.text(container.get("name"))}"', bootfacts.as_map(container.get("resources"))
            )
    if "resources" in pod:
        found += _requirements("pod-level resources", bootfacts.as_map(pod.get("resources")), pod_level=True)
    return found


STANDARD = (CPU, MEMORY, EPHEMERAL)
"""The container resources Kubernetes names without a domain (and ``hugepages-<size>``)."""


def _name_problem(name: str, pod_level: bool) -> str:
    if pod_level:
        return (
            ""
            if name in (CPU, MEMORY) or name.startswith("hugepages-")
            else "is not a resource a pod may set for itself (cpu, memory and hugepages only; set it on a container)"
        )
    if "/" not in name and name not in STANDARD and not name.startswith("hugepages-"):
        return (
            "is not a resource Kubernetes knows for a container (cpu, memory, ephemeral-storage, hugepages-<size>, "
            "or a name with a domain, such as nvidia.com/gpu)"
        )
    problem = syntax.qualified_name_problem(name) if "/" in name else None
    if problem:  # ValidateResourceName: a qualified name, its domain lowercase (NVIDIA.com/gpu is none)
        return f"is not a valid resource name: {problem} (such as nvidia.com/gpu)"
    return ""


def _requirements(where: str, resources: Mapping[str, Any], pod_level: bool = False) -> list[str]:
    found, read = [], {}
    for part in ("limits", "requests"):
        for name, value in bootfacts.as_map(resources.get(part)).items():
            name, what = str(name), f"{where}: resources.{part}.{name} {_shown(value)}"
            if problem := _name_problem(name, pod_level):
                found.append(f"{where}: resources.{part}.{name} {problem}")
                continue
            if value is None:  # JSON null decodes as a zero quantity
                value = 0
            amount = quantity(value)
            if amount is None:
                rest = value.strip().removeprefix("-") if isinstance(value, str) else None
                magnitude = (
                    (quantity(rest) if rest else 0.0) if rest is not None and value.strip() else None
                )  # "-" is 0
                if magnitude == 0:  # "-0" is zero
                    read[part, name] = "0"
                    continue
                negative = (
                    magnitude is not None
                    or isinstance(value, (int, float))
                    and not isinstance(value, bool)
                    and value < 0
                )
                found.append(
                    f"{what} is negative (a request or limit must be 0 or more)"
                    if negative
                    else f"{what} is not a quantity (write a number with an optional suffix: 500m, 2, 4Gi)"
                )
            elif not _native(name) and math.isfinite(amount) and not float(amount).is_integer():
                found.append(f"{what} is not a whole number (an extended resource is counted in whole units)")
            else:
                read[part, name] = value
    limits = bootfacts.as_map(resources.get("limits"))
    for (part, name), value in read.items():
        if part != "requests":
            continue
        what = f"{where}: resources.requests.{name} {_shown(value)}"
        if not _overcommitted(name):
            if name not in limits:
                found.append(
                    f"{what} has no limit (it cannot be overcommitted, so Kubernetes needs its limit; set "
                    f"limits.{name} alone and the request follows it)"
                )
            elif ("limits", name) in read and _compared(value, read["limits", name]) != 0:
                found.append(
                    f"{what} is not its limit {_shown(limits[name])} (it cannot be overcommitted: the two must be "
                    f"equal)"
                )
        elif ("limits", name) in read and _compared(value, read["limits", name]) > 0:
            found.append(f"{what} is above its limit {_shown(limits[name])} (a request must be at most its limit)")
    named = {name for _, name in read}
    if any(n.startswith("hugepages-") for n in named) and not named & {CPU, MEMORY}:
        found.append(
            f"{where}: resources ask for hugepages without cpu or memory (Kubernetes needs one of them beside it)"
        )
    return found


def words(resource: str, amount: float) -> str:
    """``cpu 4``, ``memory 16Gi``, ``memory 14481Mi``, ``nvidia.com/gpu 2``: as a manifest would say it."""
    if amount >= BEYOND:
        return f"{resource} beyond any number a node has"
    if resource in (MEMORY, EPHEMERAL):
        mib = amount / MIB
        if mib >= 1024 and (mib / 1024).is_integer():
            return f"{resource} {int(mib / 1024)}Gi"
        return f"{resource} {math.ceil(mib) if not float(mib).is_integer() else int(mib)}Mi"
    if resource == CPU:
        milli = round(amount * 1000)
        return f"cpu {milli // 1000}" if milli % 1000 == 0 else f"cpu {milli}m"
    return f"{resource} {int(amount) if float(amount).is_integer() else amount}"
