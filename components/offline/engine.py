"""Run a Pulumi program offline, under the SDK's mocks, and record what it registers."""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import runpy
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional

from ..errors import ConfigError
from ..facts import prices
from . import require_sdk, sdk
from .catalog import Catalog
from .cloud import OfflineMocks
from .monitor import RecordingMonitor
from .records import ProgramRun, Resource


def stack_config_values(config: Mapping[str, Any]) -> dict[str, str]:
    """Stack-file values as the CLI hands them to a program: scalars as their JSON text (``50``,
    ``true``), structured values as JSON text. The CLI's encoder is Go's, which writes a whole float
    without ``.0`` (pulumi ``sdk/go/common/resource/config/object.go`` ``MarshalString``)."""
    out: dict[str, str] = {}
    for key, value in config.items():
        if isinstance(value, str):
            out[key] = value
        elif isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
            out[key] = str(int(value))
        else:
            out[key] = json.dumps(value)
    return out


class ProgramExit(Exception):
    """The program called ``sys.exit`` with a failure: the offline CLI exits 2 with this message."""

    def __init__(self, code: Any) -> None:
        if code in (None, 0):  # from a callback (an ``apply``): the program stopped half-way
            message = "the program exited with code 0 before it finished"
        elif isinstance(code, int):
            message = f"the program exited with code {code}"
        else:  # sys.exit("message"): Python prints the message and exits 1
            message = f"the program exited with code 1: {code}"
        super().__init__(message)
        self.code = code


def _exits_as_errors(body: Callable[[], Any]) -> Callable[[], Any]:
    """``sys.exit`` inside the program ends the program, as it does under the language host; a
    failure code becomes a ``ProgramExit`` (an ordinary exception), so it is reported like any
    program error instead of tearing through the SDK's event loop as a ``SystemExit``."""

    def run() -> Any:
        try:
            return body()
        except SystemExit as exc:
            if exc.code not in (None, 0):
                raise ProgramExit(exc.code) from None
            return None

    return run


@contextlib.contextmanager
def _working_directory(folder: Optional[Path]) -> Iterator[None]:
    """The program's directory as the working directory while it runs (its callbacks too), as the
    Pulumi CLI runs a program in its project's directory: relative paths in it (a ``ConfigFile``'s
    manifest, a ``ConfigGroup``'s glob, a local chart) mean what they mean under ``pulumi up``."""
    if folder is None:
        yield
        return
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def check_config_fits(values: Mapping[str, str]) -> None:
    """Refuse a config the Pulumi CLI could not hand to a program: it does so in one environment
    variable, ``PULUMI_CONFIG``, which Linux caps at ``MAX_ARG_STRLEN`` bytes."""
    problem = sdk.oversized_config(values)
    if problem:
        raise ConfigError(problem)


def run_program(
    program: Callable[[], Any] | Path | str,
    config: Mapping[str, Any],
    catalog: Optional[Catalog] = None,
    project: str = "mixed-os-racks",
    stack: str = "dev",
    on_resource: Optional[Callable[[Resource], None]] = None,
) -> ProgramRun:
    """Run ``program`` (a ``__main__.py`` path, a project directory, or a callable) as a preview.

    Exceptions the program raises propagate unchanged (``ConfigError`` among them); ``sys.exit``
    with a failure code raises ``ProgramExit``. A config too large for ``PULUMI_CONFIG`` is refused
    (``ConfigError``) before the program runs. The program's event loops are closed however the run
    ends. ``on_resource`` is called with each resource as it is recorded, in the order of
    ``ProgramRun.resources``. On a Pulumi SDK other than the release the engine was tested on it raises
    ``OfflineUnavailable`` (an ``ImportError``) saying which it needs.
    """
    require_sdk()
    catalog = catalog or Catalog.load()
    values = stack_config_values(config)
    check_config_fits(values)
    mocks = OfflineMocks(catalog, values)
    monitor = RecordingMonitor(mocks, on_resource)

    home: Optional[Path] = None
    if callable(program):
        body = program
    else:
        path = Path(program).resolve()
        main = path / "__main__.py" if path.is_dir() else path
        home = main.parent

        def body() -> None:
            sys.path.insert(0, str(main.parent))
            try:
                runpy.run_path(str(main), run_name="__main__")
            finally:
                sys.path.remove(str(main.parent))

    def run() -> None:
        # the catalog's prices are the offline cloud's: the program's lanes are priced with them (facts.prices)
        with sdk.language_host_config(values), _working_directory(home), prices.offline(catalog.prices):
            sdk.run_under_mocks(_exits_as_errors(body), values, mocks, monitor, project, stack)

    # A fresh context: no state (root stack, config, settings) leaks between runs in one process.
    try:
        contextvars.Context().run(run)
    except SystemExit as exc:  # from a callback the program registered (an ``apply``), not its body
        raise ProgramExit(exc.code) from None
    return ProgramRun(
        project=project,
        stack=stack,
        resources=list(monitor.recorded),
        outputs=monitor.stack_outputs,
        outputs_wire=monitor.stack_outputs_wire,
        reads=list(monitor.reads),
        component_outputs=dict(monitor.component_outputs),
    )
