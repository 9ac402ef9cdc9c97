"""The specs the components take: one validated, immutable value per lane or part of a rack.

Each spec checks every rule of its value once, when it is built, with the seeds' wording, and names
its own field names in its errors; a component trusts what its spec guarantees and checks only what
needs the cloud (an AMI's facts). ``base`` (the model and its errors), ``limits`` (patterns and
bounds, with the API each comes from; the name syntax they check is the package's ``syntax``), ``tags``
(tag rules), ``pool`` (``PoolSpec``), ``nodegroup`` (``NodeGroupSpec``), ``rack`` (the cluster,
Karpenter, the GPU add-ons and ``RackSpec``), ``service`` (``ServiceSpec``).
The stack config's Convox keys are mapped onto these in ``config/``.
"""

from .base import FieldProblem, Spec, SpecError
from .nodegroup import NodeGroupSpec
from .pool import PoolSpec, Taint
from .rack import ClusterSpec, DevicePluginSpec, GpuObservabilitySpec, KarpenterSpec, RackSpec

__all__ = [
    "ClusterSpec",
    "DevicePluginSpec",
    "FieldProblem",
    "GpuObservabilitySpec",
    "KarpenterSpec",
    "NodeGroupSpec",
    "PoolSpec",
    "RackSpec",
    "Spec",
    "SpecError",
    "Taint",
]
