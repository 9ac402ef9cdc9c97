"""Change fields of one list item in a stack file (``Pulumi.<stack>.yaml``), and nothing else of the file.

``mixed-os-racks promote`` sets a lane's ``ami_id`` this way. The file is edited as text, where the value is:
a block item keeps its comments, order and layout (a field's value is replaced where it is written, a new
field is a line after the item's last, a removed field's lines go); a flow item (``{name: gpu, ...}``) is
written again as one; the Convox JSON text (``'[{"name": "gpu", ...}]'``) is written again as JSON. Then the
new text is read as the Pulumi CLI reads it (``stackfile``) and must hold exactly the old config with the
changes: otherwise nothing is written, and the error says to set the field by hand. A ``secure:`` value is kept
as its ciphertext, where it is written.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional

import yaml

from .stackfile import InputFileError, Shape, compose, config_key, read_stack_file, read_utf8

Changes = Mapping[str, Optional[str]]
"""Field -> its new text value, or None to remove the field."""


class EditError(Exception):
    """A change that cannot be written into the file as asked: the CLI exits 2 with it."""


def _pairs(node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node]]:
    return list(node.value)


def _item_node(root: Optional[yaml.Node], key: str, index: int, project: str, source: str) -> yaml.Node:
    """The node of ``config: {key: [..., item index, ...]}`` (or the JSON text holding the list)."""
    config = (
        next((v for k, v in _pairs(root) if k.value == "config"), None) if isinstance(root, yaml.MappingNode) else None
    )
    if not isinstance(config, yaml.MappingNode):
        raise EditError(f"{source}: has no config: mapping")
    value = next(
        (v for k, v in _pairs(config) if isinstance(k.value, str) and config_key(k.value, project) == key), None
    )
    if value is None:
        raise EditError(f"{source}: has no {key}")
    if isinstance(value, yaml.SequenceNode):
        if not 0 <= index < len(value.value):
            raise EditError(f"{source}: {key} has no item [{index}]")
        return value.value[index]
    return value  # JSON text: the whole list is rewritten


def _plain(text: str) -> str:
    """``text`` as a YAML scalar that reads back as that text (plain when it can be)."""
    dumped: str = yaml.safe_dump(text, default_style=None, width=float("inf")).strip()
    return dumped.removesuffix("\n...").strip()


def _line_end(text: str, index: int) -> int:
    """The index just after the line ``index`` is on (a node's end may already be a line's start)."""
    if index > 0 and text[index - 1] == "\n":
        return index
    found = text.find("\n", index)
    return len(text) if found < 0 else found + 1


def _content_end(node: yaml.Node) -> int:
    """Where a node's content ends: a block collection's own end is where the next token starts (after any
    comment lines), so its last scalar's end is taken instead."""
    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, yaml.MappingNode) else last
    end: int = node.end_mark.index
    return end


def _block_edit(text: str, item: yaml.MappingNode, changes: Changes) -> str:
    """The block mapping ``item`` with ``changes`` written where they go (last offsets first)."""
    edits: list[tuple[int, int, str]] = []
    fields = {k.value: (k, v) for k, v in _pairs(item)}
    indent = item.value[0][0].start_mark.column if item.value else item.start_mark.column
    newline = "\r\n" if "\r\n" in text else "\n"
    added = ""
    for field, value in changes.items():
        if field in fields:
            key, node = fields[field]
            if value is None:  # the key's line through its value's last line
                start = text.rfind("\n", 0, key.start_mark.index) + 1
                edits.append((start, _line_end(text, _content_end(node)), ""))
            else:
                edits.append((node.start_mark.index, node.end_mark.index, _plain(value)))
        elif value is not None:
            added += f"{' ' * indent}{field}: {_plain(value)}{newline}"
    if added:
        at = _line_end(text, _content_end(item))
        prefix = "" if at == 0 or text[at - 1] == "\n" else newline
        edits.append((at, at, prefix + added))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _changed(item: Mapping[str, Any], changes: Changes) -> dict[str, Any]:
    out = {k: v for k, v in item.items() if not (k in changes and changes[k] is None)}
    out.update({k: v for k, v in changes.items() if v is not None})
    return out


def edit_item(path: Path, project: str, key: str, index: int, changes: Changes, shapes: Mapping[str, Shape]) -> str:
    """The text of the stack file at ``path`` with item ``index`` of the list ``key`` (``rack:...``) changed;
    ``EditError`` when it cannot be done without changing anything else."""
    source = str(path)
    try:
        text = read_utf8(path, "stack config")
        before = read_stack_file(path, project, shapes, secrets=True)  # a secure: value is kept as it is written
    except InputFileError as exc:
        raise EditError(str(exc)) from None
    node = _item_node(compose(text, source), key, index, project, source)
    values = before.get(key)
    if isinstance(values, str):  # Convox's JSON text: the list, written again as JSON text
        try:
            items = json.loads(values)
        except json.JSONDecodeError:
            raise EditError(f"{source}: {key} is text that is no JSON list") from None
        if not isinstance(items, list) or not 0 <= index < len(items) or not isinstance(items[index], dict):
            raise EditError(f"{source}: {key} has no item [{index}]")
        items[index] = _changed(items[index], changes)
        new = "'" + json.dumps(items).replace("'", "''") + "'"
        text = text[: node.start_mark.index] + new + text[node.end_mark.index :]
        expected: object = json.dumps(items)
    elif isinstance(node, yaml.MappingNode) and isinstance(values, list):
        item = _changed(values[index], changes)
        if node.flow_style:
            try:
                new = yaml.safe_dump(item, default_flow_style=True, sort_keys=False, width=float("inf")).strip()
            except yaml.YAMLError:  # a field holds a secure: value, which a flow mapping is not written again with
                raise EditError(
                    f"{source}: {key}[{index}] holds a secure: value: set it by hand (nothing was written)"
                ) from None
            text = text[: node.start_mark.index] + new + text[node.end_mark.index :]
        else:
            text = _block_edit(text, node, changes)
        expected = [item if n == index else v for n, v in enumerate(values)]
    else:
        raise EditError(f"{source}: {key}[{index}] is not a mapping of the lane's fields")
    _verify(path, text, project, shapes, {**before, key: expected}, key, index)
    return text


def _verify(
    path: Path, text: str, project: str, shapes: Mapping[str, Shape], expected: dict[str, Any], key: str, index: int
) -> None:
    """The new text read as the CLI reads it holds ``expected``: else nothing may be written."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / path.name
        probe.write_text(text, encoding="utf-8")
        try:
            after = read_stack_file(probe, project, shapes, secrets=True)
        except InputFileError:
            after = None
    if after != expected:
        raise EditError(
            f"{path}: cannot write {key}[{index}] without changing more of the file than that: set it by "
            f"hand (nothing was written)"
        )


def write_text(path: Path, text: str) -> None:
    """Replace the file's content at once (a new file renamed over it, with the old one's mode), or create it. A
    symbolic link stays one: the file it points to is replaced."""
    path = Path(os.path.realpath(path))
    if path.exists():
        mode = path.stat().st_mode & 0o7777
    else:  # a new file, with the mode the process would create it with
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(name, mode)
        os.replace(name, path)
    except BaseException:
        if os.path.exists(name):
            os.unlink(name)
        raise
