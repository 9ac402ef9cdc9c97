"""Limits every file and value the package reads shares, whoever reads it (stack config, policy config)."""

from __future__ import annotations

import difflib
import math
import os
import stat
from typing import Any, Iterable, Mapping, Optional

MAX_NESTING = 32
"""Deepest nesting of lists and mappings a config value may have. The deepest real rack value
(a pool list -> a pool -> its taints -> a taint) is four levels down; anything near this limit is
an accident or an attack on the parser, refused before it reaches one."""

MAX_VALUES = 100_000
"""Most values a YAML document may expand to through aliases (an alias bomb expands to billions)."""


def nesting_depth(value: Any) -> int:
    """How many lists and mappings deep ``value`` goes (iterative: safe on any depth)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            stack += [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item]
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
    return deepest


class NotFinite:
    """A JSON number Python would read as NaN or an infinity (``NaN``, ``Infinity``, ``1e400``): Go's JSON
    reader (the Pulumi CLI's) and protobuf's encoder refuse them, so every JSON reader here marks them with
    this and names them (``first_not_finite``)."""

    def __init__(self, text: str) -> None:
        self.text = text


def finite_float(text: str) -> Any:
    """``json.loads``'s ``parse_float``: the number, or ``NotFinite`` when it overflows a 64-bit float."""
    value = float(text)
    return value if math.isfinite(value) else NotFinite(text)


def finite_int(text: str) -> Any:
    """``json.loads``'s ``parse_int``: the integer, or ``NotFinite`` when it is past a 64-bit float's range
    (Go reads every JSON number of an untyped value as one). One of more than 309 digits is past it, and is never
    converted (Python refuses to convert one of more than 4300 digits)."""
    if len(text.lstrip("-")) > 309:
        return NotFinite(text)
    value = int(text)
    try:
        float(value)
    except OverflowError:
        return NotFinite(text)
    return value


def first_not_finite(doc: Any) -> Optional[tuple[str, str]]:
    """The key path and text of the first ``NotFinite`` number in ``doc`` (iterative: any depth). The walk keeps
    each value's parent and key, and writes out only the path it returns (bounded by ``key_path``): a path built for
    every value would copy a long key once for each value under it, megabytes times thousands."""
    stack: list[tuple[Any, Any]] = [(doc, None)]  # (value, (parent's link, its key or index) or None)
    while stack:
        value, link = stack.pop()
        if isinstance(value, NotFinite):
            steps: list[Any] = []
            while link is not None:
                link, step = link
                steps.append(step)
            return key_path(reversed(steps)), value.text
        if isinstance(value, dict):
            stack += [
                (v, (link, str(k))) for k, v in reversed(list(value.items())) if isinstance(v, (dict, list, NotFinite))
            ]
        elif isinstance(value, list):
            stack += [
                (v, (link, n)) for n, v in reversed(list(enumerate(value))) if isinstance(v, (dict, list, NotFinite))
            ]
    return None


MAX_KEY_SHOWN = 60
"""Most characters of one key a key path in a message shows (a longer one is cut, its length said)."""

MAX_PATH_SHOWN = 600
"""Most characters of a whole key path a message shows (its start and its end, a deep path's middle left out)."""


def seconds_from_env(name: str, default: float, example: str) -> float:
    """A limit in seconds from the environment variable ``name`` (``default`` when it is unset or blank); a
    ValueError naming the variable and its value when that is no number of seconds above 0."""
    given = os.environ.get(name, "").strip()
    if not given:
        return default
    try:
        limit = float(given)
    except ValueError:
        limit = math.nan
    if not 0 < limit < math.inf:
        raise ValueError(f"{name}={given[:40]!r}: not a number of seconds above 0 (such as {example})")
    return limit


def clipped(text: str, most: int) -> str:
    """``text``, or its first ``most`` characters and its length when it is longer: ``abc...(5000 characters)``."""
    return text if len(text) <= most else f"{text[:most]}...({len(text)} characters)"


def key_path(steps: Iterable[Any]) -> str:
    """``a.b[0].c`` from keys (str) and list indexes (int), each key cut to ``MAX_KEY_SHOWN`` characters and the
    whole to ``MAX_PATH_SHOWN``: a message naming a hostile file's key stays short however long or deep the key."""
    text = ""
    for step in steps:
        if isinstance(step, int):
            text += f"[{step}]"
            continue
        shown = clipped(step, MAX_KEY_SHOWN)
        text += f".{shown}" if text else shown
    return text if len(text) <= MAX_PATH_SHOWN else f"{text[: MAX_PATH_SHOWN // 3]} ... {text[-MAX_PATH_SHOWN // 2 :]}"


YAML_TAG_ERRORS = (ValueError, LookupError, ArithmeticError, TypeError)
"""What PyYAML's constructors raise, besides its own errors, for a value its explicit tag does not fit
(``!!bool maybe`` a KeyError, ``!!int ''`` an IndexError, ``!!int 0x`` a ValueError)."""
TAG_MISFIT = "a value does not fit its explicit tag (such as !!bool maybe or !!int '')"


MAX_FILE_BYTES = 1 << 30
"""Most bytes an input file may hold (1 GiB): far past the largest state export, and short of what would take the
machine's memory (a sparse file, ``--state`` pointed at a disk image)."""
PIPE_WAIT_S = 60.0
"""How long a named pipe may go without a byte (no one opened it to write, or its writer stalls) before reading it
stops: ``--config <(pulumi stack export)`` writes at once; a FIFO nobody writes to would wait for ever."""


class NotReadable(Exception):
    """Why an input file cannot be read, without its path (the caller names the file and the flag)."""


def read_input(path: "os.PathLike[str] | str") -> bytes:
    """The bytes of an input file: a regular file of at most ``MAX_FILE_BYTES``, or a pipe (``<(...)``, a FIFO) read
    until its writer closes it, giving up after ``PIPE_WAIT_S`` without a byte. A device or a socket is refused
    (``not_a_file``). OSError (no such file, a directory, no permission) is left to the caller to name."""
    problem = not_a_file(path)
    if problem:
        raise NotReadable(problem)
    if not stat.S_ISFIFO(os.stat(path).st_mode):
        with open(path, "rb") as file:
            if os.fstat(file.fileno()).st_size > MAX_FILE_BYTES:
                raise NotReadable(f"is larger than {MAX_FILE_BYTES >> 20:,} MiB, more than any input file could need")
            return file.read()
    return _read_pipe(path)


def _read_pipe(path: "os.PathLike[str] | str") -> bytes:
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opening a FIFO to read blocks until a writer opens it
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        chunks: list[bytes] = []
        size = 0
        while True:
            if not poller.poll(int(PIPE_WAIT_S * 1000)):
                raise NotReadable(f"is a pipe no one wrote to for {PIPE_WAIT_S:g} s (a FIFO with no writer?)")
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                if chunks or _writer_came(poller):
                    return b"".join(chunks)
                continue  # no writer has opened it yet: poll waits for one
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                raise NotReadable(
                    f"is a pipe that wrote more than {MAX_FILE_BYTES >> 20:,} MiB, more than any input file could need"
                )
    finally:
        os.close(fd)


def _writer_came(poller: Any) -> bool:
    """After a read of nothing: whether a writer opened the pipe and closed it (POLLHUP: an empty input), rather
    than none having opened it yet (Linux reports no event then)."""
    import select

    return any(event & select.POLLHUP for _, event in poller.poll(0))


def not_a_file(path: "os.PathLike[str] | str") -> str:
    """Why ``path`` is not a file to read a config from ('' when it is one, or does not exist: the
    reader says so): a device (``/dev/zero`` never ends, a terminal waits) or a socket. A pipe is read
    (``--config <(...)``, a file piped to ``/dev/stdin``)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISFIFO(mode):
        return ""
    return "is not a regular file (a device or a socket); give a file"


def closest(wrong: object, choices: Iterable[str], cutoff: float = 0.7) -> Optional[str]:
    """The choice ``wrong`` most likely misspells (difflib's similarity at least ``cutoff``), or None: the
    "did you mean" of every reader of names (spec fields, stack-config keys, catalog keys, component
    arguments, lane names, policy names). A name far longer than any choice is no misspelling of one."""
    text = str(wrong)
    listed = [c for c in choices if c != text]
    if not listed or len(text) > 2 * max(len(c) for c in listed) + 8:
        return None
    found = difflib.get_close_matches(text, listed, n=1, cutoff=cutoff)
    return found[0] if found else None
