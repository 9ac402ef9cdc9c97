"""The embedded engine: run a Pulumi program or component without a cloud.

One job per module: ``engine`` runs a program under the SDK's mocks (``sdk``: the few SDK internals it
needs, in one place); ``cloud`` answers its look-ups from the AMI catalog (``catalog``) and what a
provider returns at preview; ``monitor`` records every registration (``records``: how the engine
holds and prints them) and expands remote components into the children their providers register
(``remote``: pulumi-eks ``ManagedNodeGroup`` in ``eks_mng``, yaml/v2 and Helm v4 in ``k8s_yaml``);
``stackfile`` reads stack files as the Pulumi CLI does; ``packprocess`` starts a policy pack as the
CLI does and speaks its gRPC protocol (``wire``: what goes on it; ``policyconfig``: the pack's
config, merged as the CLI merges it); ``analyzer`` runs the packs over a run; ``preview`` prints it.
The engine knows nothing about the rack: the ``mixed-os-racks`` command (``cli``) puts them together.
"""

from .catalog import Catalog, CatalogError
from .engine import run_program
from .records import ProgramRun, Resource

__all__ = ["Catalog", "CatalogError", "ProgramRun", "Resource", "run_program"]
