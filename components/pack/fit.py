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

Pure: the standard library and the pack's ``facts`` and ``instances``.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from . import facts, instances

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
        return Allocatable(self.cpu_m - round(used.get(CPU, 0) * 1000), self.memory_mib - math.ceil(used.get(MEMORY, 0) / MIB),
                           self.ephemeral_mib - math.ceil(used.get(EPHEMERAL, 0) / MIB), self.gpus)


def allocatable(itype: instances.InstanceType, root_gib: Optional[float] = None) -> Allocatable:
    """The allocatable of one node of ``itype`` whose root (data) volume is ``root_gib`` GiB."""
    root_mib = (root_gib or DEFAULT_ROOT_GIB) * 1024
    cpu = itype.vcpus * 1000 - kube_reserved_cpu_m(itype.vcpus)
    memory = memory_capacity_mib(itype) - kube_reserved_memory_mib(itype.max_pods) - EVICTION_MEMORY_MIB
    ephemeral = root_mib - KUBE_RESERVED_EPHEMERAL_GIB * 1024 - math.ceil(root_mib * NODEFS_EVICTION)
    return Allocatable(cpu, memory, int(ephemeral), itype.gpus)


# ---- quantities -----------------------------------------------------------------------------------------------

quantity = facts.quantity
"""A Kubernetes quantity in base units (``facts.quantity``)."""


def _container(container: Any) -> dict[str, float]:
    resources = facts.as_map(facts.as_map(container).get("resources"))
    requests, limits = facts.as_map(resources.get("requests")), facts.as_map(resources.get("limits"))
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
    for container in facts.as_list(pod.get("containers")):
        _add(total, _container(container))
    sidecars: dict[str, float] = {}
    init_max: dict[str, float] = {}
    for container in facts.as_list(pod.get("initContainers")):
        own = _container(container)
        if facts.as_map(container).get("restartPolicy") == "Always":
            _add(sidecars, own)
            _add(total, own)
            usage = dict(sidecars)
        else:
            usage = _add(dict(sidecars), own)
        for name, amount in usage.items():
            init_max[name] = max(init_max.get(name, 0), amount)
    for name, amount in init_max.items():
        total[name] = max(total.get(name, 0), amount)
    pod_resources = facts.as_map(pod.get("resources"))
    pod_level, pod_limits = facts.as_map(pod_resources.get("requests")), facts.as_map(pod_resources.get("limits"))
    for name in (CPU, MEMORY):
        if name in pod_level and (amount := quantity(pod_level[name])) is not None:
            total[name] = amount
        elif name not in total and name in pod_limits and (amount := quantity(pod_limits[name])) is not None:
            total[name] = amount  # no container asks for it: the pod-level limit is the pod's request
    for name, value in facts.as_map(pod.get("overhead")).items():
        if (amount := quantity(value)) is not None:
            total[str(name)] = total.get(str(name), 0) + amount
    return {k: v for k, v in total.items() if v}


def words(resource: str, amount: float) -> str:
    """``cpu 4``, ``memory 16Gi``, ``memory 14481Mi``, ``nvidia.com/gpu 2``: as a manifest would say it."""
    if resource in (MEMORY, EPHEMERAL):
        mib = amount / MIB
        if mib >= 1024 and (mib / 1024).is_integer():
            return f"{resource} {int(mib / 1024)}Gi"
        return f"{resource} {math.ceil(mib) if not float(mib).is_integer() else int(mib)}Mi"
    if resource == CPU:
        milli = round(amount * 1000)
        return f"cpu {milli // 1000}" if milli % 1000 == 0 else f"cpu {milli}m"
    return f"{resource} {int(amount) if float(amount).is_integer() else amount}"
