"""The ``mixed-os-racks`` command: every command's parser assembled in one place, in the order ``--help`` lists
them, and ``main()``, which runs the one the arguments name and turns what it raises into an exit code."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Optional, Protocol, Sequence

from .. import clock
from ..errors import ConfigError, OfflineUnavailable
from ..offline.catalog import CatalogError
from ..offline.engine import ProgramExit
from ..offline.nodejs import NodeProgramError
from ..offline.policyconfig import PolicyPackError
from ..offline.stackexport import StateFileError
from ..offline.stackfile import InputFileError
from ..pack.scaffold import ScaffoldError
from ..spec.base import shown
from . import analyze, fleet, guard, pack, preview, promote, schema, soak
from .common import EXIT_ERROR, EXIT_INTERRUPTED, UsageError, error_lines

if TYPE_CHECKING:
    from .common import Commands


class Command(Protocol):
    """What a command's module has: its parser, added to the command line's, and the run of it (an exit code)."""

    def add_parser(self, sub: Commands) -> None: ...

    def command(self, args: argparse.Namespace) -> int: ...


COMMANDS: dict[str, Command] = {
    "preview": preview,
    "analyze": analyze,
    "guard": guard,
    "pack": pack,
    "schema": schema,
    "soak": soak,
    "promote": promote,
    "fleet": fleet,
}
"""Each command's module by the command's name, in the order ``--help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The command line: a subcommand per module of ``COMMANDS``, each adding its own."""
    parser = argparse.ArgumentParser(prog="mixed-os-racks")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS.values():
        module.add_parser(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command ``argv`` (default: the process's arguments) names, run: its exit code, its errors as ``error:``
    lines (never a traceback)."""
    args = build_parser().parse_args(argv)
    try:
        clock.now()  # a MIXED_OS_RACKS_NOW the dates cannot be judged against is named before anything runs
        return COMMANDS[args.command].command(args)
    except KeyboardInterrupt:  # the packs are already killed: PolicyPacks closes on the way out
        sys.stderr.write("error: interrupted\n")
        return EXIT_INTERRUPTED
    except (ConfigError, InputFileError) as exc:  # one line per broken key
        error_lines(str(exc).split("\n"))
    except (
        UsageError,
        CatalogError,
        PolicyPackError,
        ProgramExit,
        ScaffoldError,
        StateFileError,
        OfflineUnavailable,
        clock.ClockError,
        NodeProgramError,
    ) as exc:
        sys.stderr.write("error: " + "\n".join(shown(line) for line in str(exc).split("\n")) + "\n")
    except Exception as exc:  # a program error: report it like the CLI does, without a traceback
        first, *rest = str(exc).strip().splitlines() or [""]
        sys.stderr.write(f"error: the program failed: {type(exc).__name__}" + (f": {first}" if first else "") + "\n")
        sys.stderr.writelines(f"  {line}\n" for line in rest)
    return EXIT_ERROR


def entry() -> None:
    """The command, run by the process's entry (``mixed_os_racks.__main__``, which has tuned the cycle
    collector for a short-lived run). When the command is done, what is left is only memory: every
    file it wrote is closed and every pack it started is stopped. So the process ends at once, with its
    output flushed, and without the interpreter's teardown: its last collection would walk every object
    of the run (for 1,000 pools that was 2 s after the output was written), and unloading the 1,500
    modules of the Pulumi SDKs took about 30 ms of every preview. The process's end frees it all.
    """
    if sys.stderr is None:  # descriptor 2 closed: errors go nowhere, and the exit code still says how it ended
        sys.stderr = open(os.devnull, "w")
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (BrokenPipeError, ValueError):  # the reader went away, or the stream is closed: nothing to say
            pass
        except OSError:  # what was left could not be written (a full disk): the run did not say all it had to
            code = code or EXIT_ERROR
    os._exit(code)
