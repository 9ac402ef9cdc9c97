"""Mocks for the unit tests of a program that uses the components (``pulumi.runtime.set_mocks``).

The components look things up in AWS as they are built: a pinned AMI (``aws:ec2/getAmi:getAmi``), an
existing cluster (``aws:eks/getCluster:getCluster``, then ``aws.eks.Cluster.get`` and ``aws.iam.Role.get``
for a node group), the account, region and partition (``getCallerIdentity``, ``getRegion``,
``getPartition``), EBS encryption by default, subnets' zones, EKS add-on versions, a reserved lane's capacity
reservations (``aws.ec2.CapacityReservation.get``, from the catalog's ``reservations:``). Under the SDK's
mocks each would need an answer written by hand. ``RackMocks`` answers all of them as the offline
preview does, from an AMI catalog (the ``--amis`` file: images, SSM parameters, subnets; format in
docs/offline.md), in one offline account (``OFFLINE_ACCOUNT``)::

    import pulumi
    from mixed_os_racks.testing import RackMocks, set_mocks

    mocks = set_mocks(RackMocks(amis="amis.yaml", region="us-east-1"), project="ml-platform", stack="dev",
                      config={"ml-platform:cluster_name": "shared-dev"})

    @pulumi.runtime.test  # the SDK's test helper: runs the program, then waits for every registration
    def run_program():
        import infra  # noqa: F401 (the program's module; or runpy.run_path("__main__.py"))

    run_program()
    mocks.registered("kubernetes:apps/v1:Deployment", "model-server").inputs

``set_mocks`` is ``pulumi.runtime.set_mocks`` with the stack's config set and a mock monitor that serves
each request on an event loop of its own: under the SDK's plain mock monitor, a remote component given
a resource (``NodeGroup``'s pulumi-eks ``ManagedNodeGroup``, given the cluster and its role) fails the run
with "attached to a different loop" (pulumi/pulumi#6561). That monitor also expands the remote components
the offline preview expands (pulumi-eks's ``ManagedNodeGroup``, pulumi-kubernetes's yaml/v2 and Helm v4
``Chart``) into the children their providers register, with the arguments the preview registers: a test
sees a ``ManagedNodeGroup``'s ``aws:eks/nodeGroup:NodeGroup`` and its ``aws:ec2/launchTemplate:LaunchTemplate``
in ``resources``, after the component's own item.

A resource is created with the id ``<name>-id`` and its inputs as its outputs (with ``preview=True``,
as in a preview: no id, and outputs beyond the inputs unknown). A look-up it cannot answer (one of the
program's own) raises ``NotImplementedError`` naming it: subclass and answer it, falling back on
``super().call(args)``. It works beside any Pulumi SDK the components take (the offline preview needs
the one its extra pins).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import pulumi
from pulumi.runtime import rpc

from .offline.catalog import OFFLINE_ACCOUNT, Catalog
from .offline.cloud import OfflineMocks
from .offline.monitor import RecordingMonitor

__all__ = ["OFFLINE_ACCOUNT", "RackMocks", "set_mocks"]

STACK_REFERENCE = "pulumi:pulumi:StackReference"

CatalogInput = Union[None, str, Path, Catalog, Mapping[str, Any]]
"""An AMI catalog: a file's path or the file's content as a mapping (``{"amis": [...]}``), added to the
package's default catalog (the example stacks' images) as ``--amis`` adds it; a ``Catalog``, as it is; or None
for the default catalog."""


def catalog_of(amis: CatalogInput) -> Catalog:
    """The catalog ``amis`` names, validated as ``--amis`` validates it (``CatalogError`` naming the field), and
    over the default catalog as ``--amis`` lays it (an entry of ``amis`` wins over the default's of its id or key)."""
    if isinstance(amis, Catalog):
        return amis
    if isinstance(amis, Mapping):
        return Catalog.from_doc(dict(amis)).over(Catalog.load())
    return Catalog.with_default(Path(amis) if amis is not None else None)


class RackMocks(OfflineMocks):
    """``pulumi.runtime.Mocks`` answering the components' look-ups from an AMI catalog, as the offline
    preview does, and keeping every resource the program registers (``resources``)."""

    def __init__(
        self,
        amis: CatalogInput = None,
        region: str = "us-east-1",
        preview: bool = False,
        config: Optional[Mapping[str, str]] = None,
        stack_outputs: Optional[Mapping[str, Mapping[str, Any]]] = None,
    ) -> None:
        """``amis``: the catalog (see ``CatalogInput``); ``region``: the stack's ``aws:region`` (the account's
        partition follows it); ``config``: more of the stack's config the look-ups read, by ``<ns>:<key>``;
        ``stack_outputs``: other stacks' outputs by stack name, for the program's ``pulumi.StackReference``s
        (``{"acme/rack/prod": {"lanes": ...}}``: the rack stack's ``lanes``, for ``Service``'s and ``place()``'s
        ``lanes``)."""
        super().__init__(catalog_of(amis), {"aws:region": region, **(config or {})}, preview=preview)
        self.stack_outputs = {name: dict(outputs) for name, outputs in (stack_outputs or {}).items()}
        self.resources: list[pulumi.runtime.MockResourceArgs] = []
        """What the program registered, in order: the SDK's ``MockResourceArgs`` (``typ``, the type token, not
        ``type``; ``name``; ``inputs``, resolved; ``provider``; ``resource_id``, for a read, else empty; ``custom``).
        A remote component the offline preview expands is followed by the children its provider registers (their
        inputs as the preview registers them; a value known only once another resource exists, such as the
        launch template's id in a node group's ``launchTemplate``, is the SDK's ``pulumi.output.Unknown`` with
        ``preview=True``, else left out)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[Optional[str], dict[str, Any]]:
        self.resources.append(args)
        if args.typ == STACK_REFERENCE:  # read with the stack's name as its id (the SDK's StackReference)
            stack = str(args.resource_id or args.inputs.get("name") or "")
            if stack not in self.stack_outputs:
                raise NotImplementedError(
                    f"no outputs of the stack {stack!r} for its StackReference: give them with "
                    f"RackMocks(stack_outputs={{{stack!r}: {{...}}}})"
                )
            return stack, {"name": stack, "outputs": self.stack_outputs[stack], "secretOutputNames": []}
        return super().new_resource(args)

    def registered(self, typ: str, name: str) -> pulumi.runtime.MockResourceArgs:
        """The resource of type ``typ`` (``kubernetes:apps/v1:Deployment``) registered as ``name``; ``KeyError``
        listing those of the type when there is none."""
        found = [r for r in self.resources if r.typ == typ and r.name == name]
        if not found:
            raise KeyError(
                f"no {typ} named {name!r} was registered (those registered: "
                f"{', '.join(r.name for r in self.resources if r.typ == typ) or 'none'})"
            )
        return found[-1]


def set_mocks(
    mocks: Optional[RackMocks] = None,
    project: str = "project",
    stack: str = "stack",
    preview: bool = False,
    config: Optional[Mapping[str, str]] = None,
) -> RackMocks:
    """``pulumi.runtime.set_mocks`` with ``mocks`` (default: ``RackMocks()``, the default catalog), the stack's
    ``config`` (``{"<ns>:<key>": "<value as text>"}``, as ``pulumi.Config`` reads it), and a mock monitor under
    which remote components given resources work (see above). Returns the mocks. Call it before each test's
    program: every call is a program run of its own."""
    mocks = mocks if mocks is not None else RackMocks()
    try:  # the SDK registers the root stack here, on this thread's event loop: one must exist
        asyncio.get_event_loop()
    except RuntimeError:  # none set (an earlier run closed its own)
        asyncio.set_event_loop(asyncio.new_event_loop())
    pulumi.runtime.set_all_config(dict(config or {}), [])
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=preview, monitor=_ExpandingMonitor(mocks))
    return mocks


class _ExpandingMonitor(RecordingMonitor):
    """The offline preview's monitor (the SDK's mock monitor, each request on a loop of its own, remote components
    expanded as the preview expands them), adding each expanded child to ``RackMocks.resources``."""

    def __init__(self, mocks: RackMocks) -> None:
        super().__init__(mocks)
        self.rack_mocks = mocks

    def record_registration(self, request: Any, urn: str, state: Any) -> None:
        first = len(self.recorded)
        super().record_registration(request, urn, state)
        for child in self.recorded[first + 1 :]:  # the registration itself, then what its provider registers
            self.rack_mocks.resources.append(
                pulumi.runtime.MockResourceArgs(
                    typ=child.type,
                    name=child.name,
                    inputs=rpc.deserialize_properties(child.properties),
                    provider=child.provider,
                    resource_id="",
                    custom=child.custom,
                )
            )
