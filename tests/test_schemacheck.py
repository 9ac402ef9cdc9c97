"""A pack's config is checked against its policies' JSON schemas in a child process when the preview's
own process has not imported ``jsonschema`` (the offline preview: see ``schemacheck``), and here
otherwise; the messages are the same either way, and a child that cannot answer changes nothing."""

from __future__ import annotations

import sys

from mixed_os_racks.offline.schemacheck import SchemaCheck, errors_of

SCHEMA = {
    "type": "object",
    "properties": {
        "maxAgeDays": {"type": "number", "minimum": 1},
        "amis": {"type": "object", "additionalProperties": {"type": "object", "properties": {"architecture": {"enum": ["x86_64", "arm64"]}}}},
        "lookup": {"type": "boolean"},
    },
    "required": ["lookup"],
}
PAIRS = [
    (SCHEMA, {"maxAgeDays": "soon", "amis": {"ami-1": {"architecture": "sparc"}}}),
    (SCHEMA, {"maxAgeDays": 90.0, "lookup": False}),
    ({"type": "object", "properties": {}}, {}),
]


def test_the_messages_name_where_each_problem_is():
    assert errors_of(PAIRS) == [
        ["'lookup' is a required property", "amis.ami-1.architecture: 'sparc' is not one of ['x86_64', 'arm64']",
         "maxAgeDays: 'soon' is not of type 'number'"],
        [],
        [],
    ]


def test_a_child_checks_when_this_process_has_not_imported_jsonschema(monkeypatch):
    expected = errors_of(PAIRS)
    monkeypatch.delitem(sys.modules, "jsonschema")
    check = SchemaCheck()
    assert check(PAIRS) == expected
    assert "jsonschema" not in sys.modules  # the child checked: nothing was imported here


def test_without_a_child_this_process_checks(monkeypatch):
    expected = errors_of(PAIRS)
    assert SchemaCheck()(PAIRS) == expected  # jsonschema is imported here: no child is started

    monkeypatch.delitem(sys.modules, "jsonschema")
    dead = SchemaCheck()
    dead.close()  # a child that is gone before it is asked
    assert dead(PAIRS) == expected

    monkeypatch.delitem(sys.modules, "jsonschema")
    not_json = SchemaCheck()  # a value JSON cannot carry (NaN) is checked here, as before
    assert not_json([(SCHEMA, {"lookup": True, "maxAgeDays": float("nan")})]) == [[]]
