"""One stack's offline preview, as ``preview`` and ``fleet`` run it: its stack file read as the Pulumi CLI reads it
(the rack's config model saying which keys hold text), its program run under the offline engine with the packs
started while it runs, told what the offline account holds (the catalog), and its lanes' worst cases."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from ..config.keys import NAMESPACE, item_keys
from ..config.params import RackParams
from ..errors import ConfigError
from ..offline import costs as lane_costs
from ..offline.analyzer import PolicyPacks
from ..offline.catalog import Catalog
from ..offline.engine import run_program, stack_config_values
from ..offline.nodejs import run_node_program
from ..offline.packprocess import pack_env
from ..offline.policyconfig import PolicyConfig, read_config_file
from ..offline.records import ProgramRun
from ..offline.sdk import oversized_config
from ..offline.stackexport import StackState, read_stack_export
from ..offline.stackfile import ProjectFile, located, model_shape, read_stack_file
from ..pack import checks, cost, reservation, reserved
from .common import UsageError


@dataclass
class StackRun:
    """One stack's offline preview: the program's run, the packs' verdicts over it and its lanes' worst cases."""

    run: ProgramRun
    violations: list[dict[str, Any]]
    names: list[str]
    """The packs' names, in the order they ran."""
    worst: cost.Costs


def read_stack(stack_file: Path, project: str) -> tuple[dict[str, Any], dict[str, int]]:
    """A stack file's config, read as the Pulumi CLI reads it (its warnings on stderr), and the line of each key;
    too large a config is refused."""
    notes: list[str] = []
    lines: dict[str, int] = {}
    config = read_stack_file(stack_file, project, {NAMESPACE: model_shape(RackParams, item_keys())}, notes, lines)
    sys.stderr.writelines(f"warning: {note}\n" for note in notes)
    too_large = oversized_config(stack_config_values(config))
    if too_large:
        raise UsageError(f"{stack_file}: {too_large}")
    return config, lines


def read_state(path: Optional[Path], project: str, stack: str) -> Optional[StackState]:
    """``--state``: the stack's export (None without one), with a warning for operations still pending."""
    if path is None:
        return None
    state = read_stack_export(path, project, stack)
    if state.pending:
        sys.stderr.write(
            f"warning: {path}: {state.pending} operation(s) of an earlier update are still pending "
            "(`pulumi refresh` or `pulumi cancel` first); the plan ignores them\n"
        )
    return state


def catalog_config(catalog: Catalog) -> Optional[PolicyConfig]:
    """What the offline account tells the packs, under the config's own: its prices and capacity reservations
    (``lane-cost-ceiling``: a reserved lane's part already paid), its capacity reservations and subnets' zones (both
    reservation policies: an id it does not list is not the account's, as EC2 would say), and its AMIs' facts for
    every policy that judges AMIs, whatever pins them (the components, a plain launch template, node group or
    EC2NodeClass), with the account's EBS encryption default when the catalog states it."""
    given: PolicyConfig = {}
    amis = catalog.policy_facts()
    given.update({policy: ("", {"amis": amis}) for policy in checks.AMI_FACTS_POLICIES})
    if "ebs_encryption_by_default" in catalog.given:
        given[checks.ENCRYPTION] = ("", {"amis": amis, "ebsEncryptionByDefault": catalog.ebs_encryption_by_default})
    account = {
        "reservations": {i: reservation.as_config(r) for i, r in catalog.reservations.items()},
        "subnets": dict(catalog.subnets),
    }
    given[cost.CEILING] = (
        "",
        {**({"prices": catalog.prices} if catalog.prices else {}), "reservations": account["reservations"]},
    )
    given.update({policy: ("", account) for policy in (reserved.FITS, reserved.ENDING)})
    return given


def run_stack(
    cwd: Path,
    project_file: ProjectFile,
    stack: str,
    stack_file: Path,
    config_lines: tuple[dict[str, Any], dict[str, int]],
    catalog: Catalog,
    packs: Sequence[Path],
    pack_configs: Sequence[Path],
    overrides: Optional[dict[str, dict[str, Any]]] = None,
) -> StackRun:
    """Run the project's program for ``stack`` (its config and the line of each key, from ``read_stack``) under
    the offline engine, with the packs started while it runs."""
    project = project_file.name
    overrides = overrides or {}
    config, lines = config_lines
    with PolicyPacks(
        packs, pack_configs, project, stack, config, catalog_config(catalog), overrides
    ) as policy:  # start while the program runs
        try:
            if project_file.runtime == "nodejs":
                run = run_node_program(cwd, project_file, config, catalog, stack=stack, on_resource=policy.add)
            else:
                run = run_program(cwd, config, catalog, project=project, stack=stack, on_resource=policy.add)
        except ConfigError as exc:  # a key's problem, found by the program: named with its file and line
            raise ConfigError(located(str(exc), str(stack_file), lines)) from None
        violations = policy.analyze(run)
        names = list(policy.names)
        sys.stderr.writelines(f"warning: {line}\n" for line in policy.warnings)
        missing = set(overrides) - policy.overridden
        if missing:
            raise UsageError(
                f"--soaked-in: no policy pack that ran has the policy {', '.join(sorted(missing))} (the rack's "
                f"pack of this version serves it: pass --policy-pack DIR of a pack that does)"
            )
    choices = _budget_choices(pack_configs)
    worst = lane_costs.of_run(
        run,
        pack_env(project, stack, config),
        catalog.prices,
        catalog.reservations,
        choices["figure"],
        choices["reserved"],
    )
    return StackRun(run, violations, names, worst)


def _budget_choices(paths: Sequence[Path]) -> dict[str, str]:
    """Which worst case the budgets hold and how they count reserved parts, as the pack configs say it
    (``lane-cost-ceiling``'s ``figure`` and ``reserved``, the last file's winning), for the printout; the pack reads
    the same."""
    choices = {"figure": cost.STEADY, "reserved": cost.INCLUDE}
    for path in paths:
        props = read_config_file(path).get(cost.CEILING, ("", None))[1] or {}
        choices.update({key: str(props[key]) for key in choices if key in props})
    return choices
