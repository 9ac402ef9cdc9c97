"""What every command of ``mixed-os-racks`` shares: its exit codes and ``UsageError``, the arguments checked
before anything runs (``--cwd``, ``--stack``/``--config``, ``--allow-lane-removal``, an output file), and
printing (standard output that may be closed, full or gone; ``error:`` lines)."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from ..offline.stackfile import stack_name_problem
from ..spec.base import shown

if TYPE_CHECKING:
    from ..offline.laneguard import GuardStep

    Commands = argparse._SubParsersAction[argparse.ArgumentParser]
    """What a command's module adds its parser to (``parser.add_subparsers()``)."""


EXIT_OK, EXIT_VIOLATION, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    pass


# ---- arguments, checked before anything runs ----------------------------------------------------------


RUNTIMES = ("python", "nodejs")
"""The language hosts whose programs the offline preview runs (``Pulumi.yaml``'s ``runtime:``)."""


def project_dir(cwd: Path) -> Path:
    """``--cwd``: a directory with a ``Pulumi.yaml`` (its program is checked by ``program_of``)."""
    if not cwd.exists():
        raise UsageError(f"--cwd {cwd}: no such directory")
    if not cwd.is_dir():
        raise UsageError(f"--cwd {cwd}: not a directory (give the project directory, the one with Pulumi.yaml)")
    if not (cwd / "Pulumi.yaml").is_file():
        raise UsageError(f"--cwd {cwd}: no Pulumi.yaml there, so it is not a Pulumi project directory")
    return cwd


def program_of(cwd: Path, runtime: str) -> list[Path]:
    """The program's files the preview must never overwrite, once its runtime is one the preview runs."""
    if runtime not in RUNTIMES:
        raise UsageError(
            f"{cwd / 'Pulumi.yaml'}: runtime: {shown(runtime)}: the offline preview runs {' and '.join(RUNTIMES)} "
            f"programs"
        )
    if runtime == "nodejs":
        return [cwd / "package.json"]
    if not (cwd / "__main__.py").is_file():
        raise UsageError(f"--cwd {cwd}: no __main__.py there (the Python program to preview)")
    return [cwd / "__main__.py"]


def stack_of(args: argparse.Namespace, cwd: Path) -> tuple[str, Path]:
    """The stack's name, checked as the Pulumi CLI checks it, and its config file."""
    if args.stack is not None:
        problem = stack_name_problem(args.stack)
        if problem:
            raise UsageError(f"--stack {args.stack}: {problem}")
        return args.stack, cwd / f"Pulumi.{args.stack}.yaml"
    path: Path = args.config
    stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    problem = stack_name_problem(stack)
    if problem:
        raise UsageError(f"--config {path}: names the stack {stack!r}, and {problem}")
    return stack, path


def allow_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-lane-removal",
        action="append",
        dest="allow_lanes",
        metavar="NAME[,NAME]",
        default=[],
        help="lanes (pool or node group names) this change may delete or replace (repeatable)",
    )


def allowed_lanes(args: argparse.Namespace) -> list[str]:
    names = [n.strip() for given in args.allow_lanes for n in given.split(",")]
    if any(not n for n in names):
        raise UsageError(f"--allow-lane-removal {','.join(args.allow_lanes)}: an empty lane name")
    return names


def unused_allowances(names: list[str], steps: list[GuardStep]) -> None:
    from ..offline.laneguard import unmatched_allowances

    for name in unmatched_allowances(steps, names):
        sys.stderr.write(f"warning: --allow-lane-removal {shown(name)}: this change removes no lane of that name\n")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return a.resolve() == b.resolve()


SOURCE_SUFFIXES = (
    ".py",
    ".pyi",
    ".yaml",
    ".yml",
    ".toml",
    ".cfg",
    ".txt",
    ".ts",
    ".mts",
    ".cts",
    ".js",
    ".mjs",
    ".cjs",
)
"""Existing files ``--json`` never overwrites: a program's modules, stack and project files, requirements."""


def check_output(path: Path, inputs: Iterable[Path], flag: str = "--json") -> None:
    """``--json`` (or ``flag``): somewhere a file can be written that is not one of the command's inputs."""
    where = f"{flag} {path}"
    for given in inputs:
        if _same_file(path, given):
            raise UsageError(f"{where}: is {given}, an input of this preview; write the JSON to another file")
    if path.is_dir():
        raise UsageError(f"{where}: is a directory; give a file name")
    if path.suffix.lower() in SOURCE_SUFFIXES and path.exists():  # a program's module: the next run would fail on JSON
        raise UsageError(
            f"{where}: is an existing {path.suffix} file (source, project or stack files), which JSON "
            f"would overwrite; write the JSON to a .json file"
        )
    if path.is_fifo():  # opening a FIFO to write waits for a reader: one no one reads would hang the command
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            raise UsageError(
                f"{where}: is a named pipe no one is reading; give a file, or read the pipe first"
            ) from None
    parent = path.absolute().parent
    if not parent.is_dir():
        raise UsageError(f"{where}: cannot be written: {parent} is not a directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{where}: cannot be written: permission denied")
    if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{where}: cannot be written: no permission to create files in {parent}")


def write_json(path: Path, doc: Any) -> None:
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(json.dumps(doc, indent=2) + "\n")
    except OSError as exc:
        raise UsageError(f"--json {path}: cannot write: {exc.strerror or exc}") from None


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, for a message."""
    return (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a named pipe"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
    )


# ---- printing -------------------------------------------------------------------------------------------


def print_text(text: str) -> None:
    """``text`` on standard output; a closed one (``>&-``) or one that cannot take it (a full disk, ``>/dev/full``)
    is an error naming it, and a reader that went away (``| head``) is none."""
    if sys.stdout is None:  # Python starts with no sys.stdout when descriptor 1 is closed
        raise UsageError(
            "standard output is closed, so there is nowhere to print (redirect it to a file, or to /dev/null)"
        )
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to say, and nothing to complain of at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError as exc:
        _drop_stdout()
        raise UsageError(f"cannot write to standard output: {exc.strerror or exc}") from None
    except ValueError:  # a stdout closed by the process itself
        raise UsageError("standard output is closed, so there is nowhere to print") from None


def _drop_stdout() -> None:
    """What standard output holds unwritten is dropped, so the process's end does not try to write it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.stdout.flush()
    except (OSError, ValueError):
        pass


def error_lines(lines: Iterable[str]) -> None:
    """One ``error:`` line per problem, with characters a reader cannot see or tell apart escaped."""
    sys.stderr.writelines(f"error: {shown(line)}\n" for line in lines)
