"""Reading a stack config file (``Pulumi.<stack>.yaml``) and ``Pulumi.yaml`` as the Pulumi CLI would,
refusing what the CLI and this reader would read differently.

The CLI reads stack files with go-yaml v3, a YAML 1.2 reader (pulumi
``sdk/go/common/encoding/marshal.go``), and hands the program each top-level value as text: a scalar
as its JSON (``50``, ``true``), a mapping or list as JSON text (``config/object.go``
``MarshalString``). PyYAML reads YAML 1.1, where ``no`` is a boolean, ``1:30`` is the number 90 and
``2024-01-01`` a date, and go-yaml turns a date into Go's ``2024-01-01 00:00:00 +0000 UTC``. So:

- a value the program reads as text (the caller says which: ``shapes``, by namespace, built from
  the program's config models with ``model_shape``) must not be written so that YAML reads a
  boolean, a number or a date: it is refused with a hint to quote it;
- anywhere else, a plain scalar that go-yaml reads as text is text here too (``yes``, ``1:30``), and
  one it reads as a number PyYAML does not (``0o17``, ``1e3``) is refused, as is any date;
- duplicate keys are refused, as go-yaml v3 refuses them (``mapping key "x" already defined``);
- keys must be text; ``!!binary``, ``!!set`` and other tags, NaN and infinities, recursive aliases,
  alias bombs and nesting deeper than ``MAX_NESTING`` are refused;
- a key without a namespace gets the project's, as the CLI does
  (``workspace/loaders.go`` ``stackConfigNamespacedWithProject``), and ``ns:config:name`` means
  ``ns:name`` (``config/key.go`` ``ParseKey``).

Every problem is reported as ``<file>:<line>: <key>: <problem>``.
"""

from __future__ import annotations

import json
import math
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import yaml
from pydantic import BaseModel

from ..inputs import MAX_NESTING, MAX_VALUES, YAML_TAG_ERRORS, NotReadable, nesting_depth, read_input
from ..spec.base import shown


_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {f"{_TAG}{t}" for t in ("str", "int", "float", "bool", "null")}
_PROJECT_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_STACK_NAME = re.compile(r"[A-Za-z0-9_.-]*")


class InputFileError(Exception):
    """A file given to the offline preview that cannot be used: one line per problem, each naming the file."""


# ---- text ------------------------------------------------------------------------------------------


def read_utf8(path: Path, what: str, bom: bool = True) -> str:
    """The file's text, which must be UTF-8 (a UTF-8 byte-order mark is dropped, as the CLI's YAML reader drops
    it; refused when not ``bom``: the CLI's JSON reader, Go's ``encoding/json``, refuses a file that starts with
    one)."""
    try:
        data = read_input(path)
    except NotReadable as exc:
        raise InputFileError(f"{what} {path}: {exc}") from None
    except IsADirectoryError:
        raise InputFileError(f"{what} {path}: is a directory, not a file") from None
    except OSError as exc:
        raise InputFileError(f"cannot read {what} {path}: {exc.strerror}") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputFileError(f"{what} {path}: is UTF-16 text, not UTF-8; save it as UTF-8")
    if b"\x00" in data:
        raise InputFileError(f"{what} {path}: is a binary file (it has NUL bytes), not UTF-8 text")
    if not bom and data.startswith(b"\xef\xbb\xbf"):
        raise InputFileError(
            f"{what} {path}: starts with a byte-order mark, which the Pulumi CLI's JSON reader refuses; "
            f"save it as UTF-8 without one"
        )
    try:
        return data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(
            f"{what} {path}: is not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}, offset {exc.start}); "
            "save it as UTF-8"
        ) from None


# ---- names, as the Pulumi CLI checks them ---------------------------------------------------------------


def _go_quoted_byte(byte: int) -> str:
    """A byte as Go's ``%q`` prints it (as a rune literal)."""
    escapes = {
        0x07: r"\a",
        0x08: r"\b",
        0x0C: r"\f",
        0x0A: r"\n",
        0x0D: r"\r",
        0x09: r"\t",
        0x0B: r"\v",
        0x27: r"\'",
        0x5C: "\\\\",
    }
    if byte in escapes:
        return f"'{escapes[byte]}'"
    char = chr(byte)
    if char.isprintable():
        return f"'{char}'"
    return f"'\\x{byte:02x}'" if byte < 0x80 else f"'\\u{byte:04x}'"


def stack_name_problem(name: str) -> Optional[str]:
    """The Pulumi CLI's verdict on a stack name (``sdk/go/common/tokens/stack_name.go``
    ``ParseStackName``): 1-100 bytes of ``[A-Za-z0-9_.-]``, in its own words."""
    data = name.encode("utf-8", "surrogateescape")
    if not data:
        return "a stack name may not be empty"
    if len(data) > 100:
        return "a stack name cannot exceed 100 characters"
    end = _STACK_NAME.match(name).end()  # type: ignore[union-attr]  # a starred pattern always matches
    if end != len(name):
        position = len(name[:end].encode("utf-8", "surrogateescape"))
        return (
            "a stack name may only contain alphanumeric, hyphens, underscores, or periods: "
            f"invalid character {_go_quoted_byte(data[position])} at position {position}"
        )
    return None


def project_name_problem(name: Any) -> Optional[str]:
    """The Pulumi CLI's verdict on a project name (``sdk/go/common/tokens/project.go`` ``ValidateProjectName``)."""
    if not isinstance(name, str) or not name:
        return "project names may not be empty"
    if len(name) > 100:
        return "project names are limited to 100 characters"
    if not _PROJECT_NAME.fullmatch(name):
        return "project names may only contain alphanumerics, hyphens, underscores, and periods"
    return None


# ---- YAML: one reader with limits ------------------------------------------------------------------------


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


class _Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML has no type information here: its loader is Any
    """PyYAML's pure-Python safe loader, composing nodes no deeper than a config value of
    ``MAX_NESTING`` levels needs (the document, ``config:``, the value's levels and its scalars): the
    composer recurses once per level, so a document nested thousands deep would otherwise end in a
    ``RecursionError``. Each value's own depth is checked exactly once it is read."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D401 - PyYAML's hook
        self._depth += 1
        try:
            if self._depth > MAX_NESTING + 8:  # room for the document, `config:` and a scalar; exact below
                raise _TooDeep(self.peek_event().start_mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def compose(text: str, source: str) -> Optional[yaml.Node]:
    """The document's root node (None for an empty document), or an ``InputFileError``."""
    loader: Optional[_Loader] = None
    try:
        loader = _Loader(text)  # checks that every character is one YAML allows
        return loader.get_single_node()
    except _TooDeep as exc:
        raise InputFileError(
            f"{source}:{exc.line}: nested deeper than {MAX_NESTING} levels of lists and mappings "
            "(no stack config needs that)"
        ) from None
    except yaml.MarkedYAMLError as exc:
        line = f":{exc.problem_mark.line + 1}" if exc.problem_mark else ""
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        raise InputFileError(f"{source}{line}: not valid YAML: {what}") from None
    except yaml.YAMLError as exc:
        raise InputFileError(f"{source}: not valid YAML: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()


# ---- what each rack key holds, from the models --------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """What a position in the config holds: ``text``, a ``list`` or ``dict`` of ``item``, a ``model``
    with ``fields`` (by the key written in the stack file), or ``other`` (numbers, booleans, anything)."""

    kind: str
    item: Optional["Shape"] = None
    fields: Mapping[str, "Shape"] = field(default_factory=dict)


OTHER = Shape("other")
TEXT = Shape("text")

ItemKeys = Mapping[type[BaseModel], tuple[Sequence[str], Mapping[str, str]]]
"""A model as a config file writes it: the keys it takes, and field -> key where they differ."""


def shape_of(annotation: Any, items: ItemKeys = {}) -> Shape:
    """The shape of a pydantic field's type (``items``: how models inside it are written)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is str or (isinstance(annotation, type) and issubclass(annotation, str)):  # str, a StrEnum
        return TEXT
    if origin is typing.Annotated:
        return shape_of(args[0], items)
    if origin is typing.Literal:
        return TEXT if all(isinstance(a, str) for a in args) else OTHER
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        return shape_of(kept[0], items) if len(kept) == 1 else OTHER
    if origin is list:
        return Shape("list", item=shape_of(args[0], items) if args else OTHER)
    if origin is dict:
        return Shape("dict", item=shape_of(args[1], items) if len(args) == 2 else OTHER)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_shape(annotation, items)
    return OTHER


def model_shape(model: type[BaseModel], items: ItemKeys = {}) -> Shape:
    """What each key of ``model`` holds, by the key a config file writes."""
    keys, renamed = items.get(model, (None, {}))
    by_key = {renamed.get(name, name): shape_of(info.annotation, items) for name, info in model.model_fields.items()}
    if keys is not None:
        by_key = {key: by_key.get(key, OTHER) for key in keys}
    return Shape("model", fields=by_key)


# ---- nodes -> values, with every problem found --------------------------------------------------------


_GO_NULLS = {"", "~", "null", "Null", "NULL"}
_GO_BOOLS = {"true", "True", "TRUE", "false", "False", "FALSE"}
_GO_SPECIAL_FLOATS = {f"{sign}.{word}" for sign in ("", "+", "-") for word in ("inf", "Inf", "INF")} | {
    ".nan",
    ".NaN",
    ".NAN",
}
_GO_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?")


def go_yaml_type(text: str) -> str:
    """The type go-yaml v3 resolves a plain scalar to (its ``resolve``), as ``null``, ``bool``,
    ``int``, ``float``, ``timestamp`` or ``str``."""
    if text in _GO_NULLS:
        return "null"
    if text in _GO_BOOLS:
        return "bool"
    if text in _GO_SPECIAL_FLOATS:
        return "float"
    if text[:1] == ".":
        return "float" if _GO_FLOAT.fullmatch(text) else "str"
    if text[:1] and text[0] in "+-0123456789":
        if _GO_TIMESTAMP.fullmatch(text):
            return "timestamp"
        plain = text.replace("_", "")
        if _GO_INT.fullmatch(plain):
            return "int"
        if _GO_FLOAT.fullmatch(plain):
            return "float"
    return "str"


def _described(kind: str, text: str, value: Any) -> str:
    if kind == "bool":
        return f"the boolean {'true' if value else 'false'}"
    if kind in ("int", "float"):
        return f"the number {value:g}" if isinstance(value, float) else f"the number {value}"
    if kind == "timestamp":
        return "a date"
    return "text"


_KINDS = {"null": "null (no value)", "bool": "a boolean", "int": "a number", "float": "a number", "timestamp": "a date"}


@dataclass(frozen=True)
class Secret:
    """A ``secure:`` value, read as its ciphertext by a command that needs no plaintext (``promote``)."""

    ciphertext: str


class _Reader:
    """Turns composed nodes into values, collecting every problem (``<file>:<line>: <key>: <problem>``)."""

    def __init__(self, source: str, secrets: bool = False) -> None:
        self.source = source
        self.secrets = secrets
        """Whether a ``secure:`` value is read (as a ``Secret``), not refused."""
        self.problems: list[tuple[int, str]] = []
        self.values = 0
        self.lines: dict[str, int] = {}
        """Each value's key path (``rack:pools[0].disk``) -> the line it starts on."""
        self._loader = _Loader("")  # PyYAML's safe constructors and YAML 1.1 resolver

    def problem(self, node: yaml.Node, where: str, message: str) -> None:
        line = node.start_mark.line + 1
        self.problems.append((line, f"{self.source}:{line}: {_shown(where)}: {_shown(message)}"))

    def report(self) -> None:
        """Raise every problem found, in the file's order."""
        if self.problems:
            raise InputFileError("\n".join(text for _, text in sorted(self.problems, key=lambda p: p[0])))

    def value(self, node: yaml.Node, where: str, shape: Shape, ancestors: tuple[int, ...] = ()) -> Any:
        self.values += 1
        self.lines.setdefault(where, node.start_mark.line + 1)
        if self.values > MAX_VALUES:
            raise InputFileError(f"{self.source}: expands to more than {MAX_VALUES:,} values through aliases")
        if id(node) in ancestors:
            self.problem(node, where, "an alias to a value that contains it (a recursive alias)")
            return None
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, where, TEXT if shape.kind in ("list", "dict", "model") else shape)
        inside = (*ancestors, id(node))
        if isinstance(node, yaml.SequenceNode):
            if node.tag != f"{_TAG}seq":
                self.problem(node, where, f"the YAML tag {_short(node.tag)} is not supported here (write a plain list)")
                return None
            item = shape.item if shape.kind == "list" and shape.item else OTHER
            return [self.value(child, f"{where}[{n}]", item, inside) for n, child in enumerate(node.value)]
        if node.tag != f"{_TAG}map":
            self.problem(node, where, f"the YAML tag {_short(node.tag)} is not supported here (write a plain mapping)")
            return None
        if _is_secret(node) and self.secrets:
            return Secret(str(node.value[0][1].value))
        if _is_secret(node):
            self.problem(
                node,
                where,
                (
                    "an encrypted value (secure:), which the offline preview cannot decrypt (it has no secrets "
                    "provider); "
                    "to preview this stack offline, give --config a copy of the stack file with a plain stand-in value "
                    "here, or run `pulumi preview`, which decrypts it"
                ),
            )
            return None
        out: dict[str, Any] = {}
        for key, child in self.pairs(node, lambda key: f"{where}.{key}" if where else key):
            if shape.kind == "model":
                inner = shape.fields.get(key, OTHER)
            elif shape.kind == "dict" and shape.item:
                inner = shape.item
            else:
                inner = OTHER
            out[key] = self.value(child, f"{where}.{key}" if where else key, inner, inside)
        return out

    def pairs(self, node: yaml.MappingNode, name: Callable[[str], str]) -> list[tuple[str, yaml.Node]]:
        """A mapping's (key, value node) pairs; a key that is not text, or repeated, is a problem."""
        seen: dict[str, int] = {}
        pairs = []
        for key_node, child in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                self.problem(key_node, name("?"), "a key must be text, not a list or mapping")
                continue
            text = key_node.value
            if key_node.tag == f"{_TAG}merge":
                self.problem(
                    key_node, name(text), "merge keys (<<) are not supported in a stack config: write the values out"
                )
                continue
            kind = self.kind(key_node)
            if kind != "str":
                self.problem(
                    key_node,
                    name(text),
                    f"YAML reads this key as {_KINDS.get(kind, kind)}, not text; quote it: {_quoted(text)}",
                )
                continue
            if _unholdable(text):
                self.problem(key_node, name(text), _unholdable(text))
                continue
            if not text.isprintable():
                self.problem(key_node, name(text), "a key must not contain control characters (newlines, tabs, ...)")
                continue
            if text in seen:
                self.problem(
                    key_node,
                    name(text),
                    f"appears twice (also at line {seen[text]}), which the Pulumi CLI refuses; keep one",
                )
                continue
            seen[text] = key_node.start_mark.line + 1
            pairs.append((text, child))
        return pairs

    def implicit(self, node: yaml.ScalarNode) -> bool:
        """Whether the scalar's type is YAML's guess (plain, untagged), not written by its author."""
        return node.style is None and node.tag == self._loader.resolve(yaml.ScalarNode, node.value, (True, False))

    def kind(self, node: yaml.ScalarNode) -> str:
        """``str`` when both YAML 1.1 and go-yaml read the scalar as text, else the type one of them reads."""
        own = _short(node.tag).removeprefix("!!")
        if own != "str" or not self.implicit(node):
            return own
        return go_yaml_type(node.value)

    def scalar(self, node: yaml.ScalarNode, where: str, shape: Shape) -> Any:
        tag, text = node.tag, node.value
        if tag == f"{_TAG}timestamp":
            self.problem(
                node,
                where,
                f"YAML reads {text} as a date, which the Pulumi CLI would rewrite; quote it: {_quoted(text)}",
            )
            return None
        if tag not in _SCALAR_TAGS:
            self.problem(node, where, f"the YAML tag {_short(tag)} is not supported here (write the value as text)")
            return None
        try:
            value = self._loader.yaml_constructors[tag](self._loader, node)
        except (ValueError, yaml.YAMLError) as exc:
            self.problem(node, where, f"{text!r} is not a valid {_short(tag)} ({exc})")
            return None
        except YAML_TAG_ERRORS:
            self.problem(node, where, f"{text!r} is not a valid {_short(tag)}")
            return None
        if isinstance(value, str) and _unholdable(value):
            self.problem(node, where, _unholdable(value))
            return None
        implicit = self.implicit(node)
        yaml11 = _short(tag).removeprefix("!!")
        yaml12 = go_yaml_type(text) if implicit else yaml11
        if implicit and shape.kind == "text" and (yaml11 not in ("str", "null") or yaml12 not in ("str", "null")):
            kind = yaml11 if yaml11 not in ("str", "null") else yaml12
            self.problem(
                node,
                where,
                f"YAML reads {text} as {_described(kind, text, value)}, but this parameter is text; "
                f"quote it: {_quoted(text)}",
            )
            return None
        if isinstance(value, float) and not math.isfinite(value):
            self.problem(node, where, f"{text} is not a finite number")
            return None
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
            # go-yaml reads an integer outside int64 and uint64 as a float, so the CLI would round it
            self.problem(node, where, f"{text} is too large a number (the Pulumi CLI would round it)")
            return None
        if yaml11 != yaml12 and yaml12 == "str":  # yes, no, on, off, 1:30: text to the CLI, so text here too
            return text
        if yaml11 != yaml12:
            self.problem(
                node,
                where,
                f"YAML 1.1 reads {text} as {_described(yaml11, text, value)} and the Pulumi CLI (YAML 1.2) as "
                f"{_described(yaml12, text, text)}; write it so both agree (quote text, write numbers in decimal)",
            )
            return None
        return value


def _is_secret(node: yaml.MappingNode) -> bool:
    """Whether a mapping is a secret the CLI encrypted: ``pulumi config set --secret`` writes the value as a
    mapping whose one key is ``secure`` and whose value is the ciphertext (``secure: v1:...``; the
    Automation API's ``StackSettingsSecureConfigValue`` models the same shape)."""
    return (
        len(node.value) == 1
        and isinstance(node.value[0][0], yaml.ScalarNode)
        and node.value[0][0].value == "secure"
        and isinstance(node.value[0][1], yaml.ScalarNode)
    )


def _unholdable(text: str) -> str:
    """Why no process environment (where the CLI puts the config) can hold ``text``, or ''."""
    if "\x00" in text:
        return "contains a NUL character (\\0), which no environment variable can hold"
    bad = next((ch for ch in text if 0xD800 <= ord(ch) <= 0xDFFF), None)
    if bad is not None:
        return f"contains a lone surrogate (\\u{ord(bad):04x}), which is not Unicode text"
    return ""


def _shown(text: str) -> str:
    """``text`` on one line, with characters a reader cannot see or tell apart escaped (``shown``)."""
    return shown(text)


def _quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar (JSON's string syntax is one)."""
    return json.dumps(text, ensure_ascii=False)


def _short(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag


# ---- the files ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectFile:
    """What the offline preview reads of ``Pulumi.yaml``."""

    name: str
    runtime: str
    """The language host: ``python``, ``nodejs``, ... (``runtime:`` or ``runtime: {name: ...}``)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """``runtime.options`` (the Node.js host's ``typescript``, ``nodeargs``, ...)."""
    main: Optional[str] = None
    packages: Mapping[str, Any] = field(default_factory=dict)
    """``packages:``, as ``pulumi package add`` writes it: package name -> a plugin's source."""


def read_project(project_dir: Path) -> ProjectFile:
    """``<dir>/Pulumi.yaml``: the project's name, checked as the CLI checks it, its runtime and its packages
    (pulumi ``sdk/go/common/workspace/project.go``: ``runtime`` is a name or ``{name, options}``)."""
    path = Path(project_dir) / "Pulumi.yaml"
    source = str(path)
    root = compose(read_utf8(path, "project file"), source)
    reader = _Reader(source)
    doc = reader.value(root, "", OTHER) if root is not None else None
    reader.report()
    if not isinstance(doc, dict):
        raise InputFileError(f"{source}: expected a mapping with the project's name: and runtime:")
    problem = project_name_problem(doc.get("name"))
    if problem:
        raise InputFileError(f"{source}: name: {problem}")
    runtime: Any = doc.get("runtime")
    options: Any = {}
    if isinstance(runtime, dict):
        runtime, options = runtime.get("name"), runtime.get("options") or {}
    if not isinstance(runtime, str) or not runtime:
        raise InputFileError(
            f"{source}: runtime: expected the language's name (python, nodejs, ...) or "
            f"{{name: ..., options: ...}}, got {_shown(json.dumps(doc.get('runtime')))}"
        )
    if not isinstance(options, dict):
        raise InputFileError(f"{source}: runtime.options: expected a mapping, got {_shown(json.dumps(options))}")
    main, packages = doc.get("main"), doc.get("packages") or {}
    if main is not None and not isinstance(main, str):
        raise InputFileError(f"{source}: main: expected a path, got {_shown(json.dumps(main))}")
    if not isinstance(packages, dict):
        raise InputFileError(
            f"{source}: packages: expected a mapping of package names to sources, got {_shown(json.dumps(packages))}"
        )
    return ProjectFile(str(doc["name"]), runtime, options, main, packages)


def read_project_file(project_dir: Path) -> str:
    """The project name from ``<dir>/Pulumi.yaml``, checked as the CLI checks it."""
    return read_project(project_dir).name


def config_key(key: str, project: str) -> Optional[str]:
    """A stack file's config key as the CLI names it: ``ns:name``; None when it cannot be one."""
    colons = key.count(":")
    if colons == 0:
        return f"{project}:{key}" if key else None
    if colons == 1:
        namespace, _, name = key.partition(":")
        return key if namespace and name else None
    namespace, module, name = key.split(":", 2)
    if colons == 2 and module == "config" and namespace and name:
        return f"{namespace}:{name}"
    return None


def read_stack_file(
    path: Path,
    project: str,
    shapes: Mapping[str, Shape] = {},
    warnings: Optional[list[str]] = None,
    lines: Optional[dict[str, int]] = None,
    secrets: bool = False,
) -> dict[str, Any]:
    """``config:`` of a stack file, keyed ``ns:name``, with every problem of the file at once.

    ``shapes``: what each key of a namespace holds (``model_shape``); other keys are read as go-yaml reads them.
    ``warnings``, when given, gets what the file holds that the offline preview cannot read (``environment:``);
    ``lines`` the line each config value starts on, by key path (for ``located``); with ``secrets``, a ``secure:``
    value is read as a ``Secret`` (its ciphertext), not refused."""
    source = str(path)
    root = compose(read_utf8(path, "stack config"), source)
    if root is None:
        return {}
    reader = _Reader(source, secrets)
    if not isinstance(root, yaml.MappingNode) or root.tag != f"{_TAG}map":
        raise InputFileError(f"{source}: expected a mapping with a 'config:' mapping")
    config: dict[str, Any] = {}
    for key, node in reader.pairs(root, lambda key: key):
        if key != "config":
            value = reader.value(node, key, OTHER)  # checked, not used: secretsprovider, encryptedkey, environment...
            if key == "environment" and value and warnings is not None:
                names = value if isinstance(value, list) else value.get("imports") if isinstance(value, dict) else None
                listed = ", ".join(str(n) for n in names) if isinstance(names, list) and names else "some"
                warnings.append(
                    f"{_shown(source)}: imports Pulumi ESC environments ({_shown(listed)}), which the offline preview "
                    f"cannot "
                    f"open: config they set is not here, so its keys take their defaults (give --config a "
                    f"copy of the stack file with those values, or run `pulumi preview`)"
                )
            continue
        if isinstance(node, yaml.ScalarNode) and node.tag == f"{_TAG}null":
            continue
        if not isinstance(node, yaml.MappingNode) or node.tag != f"{_TAG}map":
            reader.problem(node, "config", "expected a mapping of <namespace>:<key> to values")
            continue
        written: dict[str, str] = {}
        for raw, child in reader.pairs(node, lambda key: key):
            name = config_key(raw, project)
            if name is None:
                reader.problem(child, raw, "not a configuration key (keys look like <namespace>:<name>)")
                continue
            if name in written:
                reader.problem(child, raw, f"the same key as {written[name]} (both are {name}); keep one")
                continue
            written[name] = raw
            namespace, _, field_name = name.partition(":")
            shape = shapes[namespace].fields.get(field_name, OTHER) if namespace in shapes else OTHER
            config[name] = reader.value(child, name, shape, (id(node),))
            if nesting_depth(config[name]) > MAX_NESTING:
                reader.problem(
                    child,
                    name,
                    f"nested deeper than {MAX_NESTING} levels of lists and mappings (no stack config needs that)",
                )
    reader.report()
    if lines is not None:
        lines.update(
            {where: line for where, line in reader.lines.items() if where.partition("[")[0].partition(".")[0] in config}
        )
    return config


def located(message: str, source: str, lines: Mapping[str, int]) -> str:
    """A config problem found after the file was read (by the program: ``rack:pools[0].disk: ...``), one per
    line, each naming the file and the line of the value its key path names, as the file's own problems do
    (``Pulumi.prod.yaml:12: rack:...``). A path into a value written as JSON text gets the line of that value;
    a line naming no key of the file is left as it is."""
    out = []
    for text in message.split("\n"):
        path = text.split(": ", 1)[0]
        path = path[1:-1] if len(path) > 1 and path[0] == path[-1] == "'" else path  # a key shown quoted (spaces in it)
        # the path, then each shorter path above it (``a[0].b`` -> ``a[0]`` -> ``a``): the deepest the file has
        ends = [len(path)] + [m.start() for m in reversed(list(re.finditer(r"[.\[]", path)))]
        line = next((lines[path[:end]] for end in ends if path[:end] in lines), None)
        out.append(f"{source}:{line}: {text}" if line is not None else text)
    return "\n".join(out)
