"""The embedded engine: run a Pulumi program or component without a cloud.

One job per module: ``engine`` runs a program under the SDK's mocks (``sdk``: the few SDK internals it
needs, in one place); ``cloud`` answers its look-ups from the AMI catalog (``catalog``) and what a
provider returns at preview; ``monitor`` records every registration (``records``: how the engine
holds and prints them) and expands remote components into the children their providers register
(``remote``: pulumi-eks ``ManagedNodeGroup`` in ``eks_mng``, yaml/v2 and Helm v4 in ``k8s_yaml``);
a program in another language runs as its language host runs it (``nodejs``) against the resource
monitor served over gRPC (``resmon``), and this package's components in it are built by their provider
(``construct``); ``stackfile`` reads stack files as the Pulumi CLI does; ``packprocess`` starts a policy
pack as the CLI does and speaks its gRPC protocol (``wire``: what goes on it; ``policyconfig``: the pack's
config, merged as the CLI merges it); ``analyzer`` runs the packs over a run; ``preview`` prints it
(``costs``: the lanes' worst cases per hour). Against a running stack: ``stackexport`` and ``previewjson``
read what ``pulumi stack export`` and ``pulumi preview --json`` write, ``plan`` compares (``providerdiff``:
what the providers make of the inputs first; ``forcenew``: what replaces), ``laneguard`` judges what a plan
does to the lanes; ``soakstate`` reads what a state proves its lanes have run, and ``stackedit`` changes one
item of a stack file. The engine knows nothing about the rack: the ``mixed-os-racks`` command (``cli``) puts
them together.
"""

from importlib import metadata
from typing import TYPE_CHECKING, Any

TESTED_SDK = (3, 272)
"""The Pulumi SDK minor release the engine was tested on: it uses SDK internals (``sdk``). The
package's ``offline`` extra pins the same release (``pyproject.toml``; a test holds the two together)."""


def sdk_problem() -> str | None:
    """Why the installed Pulumi SDK cannot run the engine, or None."""
    try:
        have = metadata.version("pulumi")
    except metadata.PackageNotFoundError:  # the SDK's import would already have failed
        return None
    major, minor = TESTED_SDK
    if have.split(".")[:2] == [str(major), str(minor)]:
        return None
    return (
        f"the offline engine (mixed_os_racks.offline, `mixed-os-racks preview`) needs pulumi>={major}.{minor},"
        f"<{major}.{minor + 1} (it runs programs under the SDK's mocks, through SDK internals), and this environment "
        f'has pulumi {have}: pip install "mixed-os-racks[offline]" gives it the SDK it was tested with (the '
        f"components themselves work with this SDK)"
    )


def require_sdk() -> None:
    """Raise ``OfflineUnavailable`` (saying which SDK it needs) when the engine cannot run here. Only running
    a program needs the SDK release the engine was tested on: the rest of the package (the command's
    ``--help``, ``pack init``, ``guard``, the AMI catalog, ``mixed_os_racks.testing``) works with any SDK the
    components take."""
    problem = sdk_problem()
    if problem:
        from ..errors import OfflineUnavailable

        raise OfflineUnavailable(problem)


_WHERE = {
    "Catalog": "catalog",
    "CatalogError": "catalog",
    "run_program": "engine",
    "ProgramRun": "records",
    "Resource": "records",
}
"""The engine's names, imported on first use: ``python -m mixed_os_racks.offline`` tunes the cycle
collector before the engine's imports (``mixed_os_racks.__main__``)."""

__all__ = sorted([*_WHERE, "require_sdk", "sdk_problem"])


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # what type checkers see  # noqa: F401 (re-exported lazily above)
    from .catalog import Catalog, CatalogError
    from .engine import run_program
    from .records import ProgramRun, Resource
