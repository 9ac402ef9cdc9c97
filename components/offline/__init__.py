"""The embedded engine: run a Pulumi program or component without a cloud.

``run_program`` runs a program under the Pulumi SDK's mocks, answers AWS look-ups from an AMI
catalog, and records every registered resource as the engine sees it.
"""

from .catalog import Catalog, CatalogError
from .engine import ProgramRun, Resource, run_program

__all__ = ["Catalog", "CatalogError", "ProgramRun", "Resource", "run_program"]
