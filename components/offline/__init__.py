"""The embedded engine: run a Pulumi program or component without a cloud.

``run_program`` runs a program under the Pulumi SDK's mocks, answers AWS look-ups from an AMI
catalog, records every registered resource as the engine sees it (a preview: ids and computed outputs
unknown), and expands remote components into the children their providers register (``remote``:
pulumi-eks ``ManagedNodeGroup`` in ``eks_mng``, yaml/v2 and Helm v4 in ``k8s_yaml``).
"""

from .catalog import Catalog, CatalogError
from .engine import ProgramRun, Resource, run_program

__all__ = ["Catalog", "CatalogError", "ProgramRun", "Resource", "run_program"]
