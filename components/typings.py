"""The package's TypeScript SDK in one module, from its schema: what ``pulumi package add`` generates for a Node.js
program (``@mixed-os-racks/rack``), for a machine where the Pulumi CLI cannot run.

``mixed-os-racks schema --typescript`` prints it. The names and types are the ones the Node.js generator writes
(pulumi/pulumi ``pkg/codegen/nodejs/gen.go``, ``typeAst``, ``objectType``, ``genPlainType``, ``genEnum``, and the
resource class it writes for a component):

* an object type is an interface ``types.input.<Name>Args`` where an input takes it and ``types.output.<Name>``
  where an output gives it; an enum is ``types.enums.<Name>``, a ``const`` object of its members and the union of
  their values;
* an input property is ``pulumi.Input<T>`` unless the schema marks it ``plain`` (then ``T``, and everything in it
  plain too); a property that is not required is optional (``?``); an output is ``pulumi.Output<T>``, with
  ``| undefined`` when not required; an integer or a number is ``number``, a map is ``{[key: string]: T}``, ``Any``
  is ``any``;
* a component is a ``pulumi.ComponentResource`` registered with its type token, its inputs, every output as
  ``undefined``, the schema's version, and ``remote: true``, so that the engine asks the package's provider to
  construct it; a missing required input throws ``Missing required property '<name>'``.

A program can import this module as it would import the generated package: ``rack.KarpenterPool``,
``rack.types.enums.NodeOs``, ``rack.types.input.PoolSpecArgs``.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

HEADER = """\
// {name}: the {namespace} component package's TypeScript SDK, generated from its schema by
// `mixed-os-racks schema --typescript` (version {version}), with the names and types `pulumi package add` writes.
// Do not edit: generate it again when the package changes.
import * as pulumi from "@pulumi/pulumi";
"""


def _comment(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    lines = text.replace("*/", "*\\/").splitlines()
    return [f"{indent}/**", *[f"{indent} * {line}".rstrip() for line in lines], f"{indent} */"]


def _name(token: str) -> str:
    return token.split(":")[-1]


class _Writer:
    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.types: Mapping[str, Any] = schema.get("types", {})

    def type_of(self, spec: Mapping[str, Any], input: bool, plain: bool) -> str:
        """The TypeScript type of a property's (or item's) type spec: ``plain`` when it or what holds it is."""
        plain = plain or bool(spec.get("plain"))
        ref = spec.get("$ref")
        if ref is not None:
            if ref == "pulumi.json#/Any":
                return "any"
            token = ref.split("/", 2)[-1]
            found = self.types.get(token, {})
            if "enum" in found:
                text = f"types.enums.{_name(token)}"
            else:
                text = f"types.input.{_name(token)}Args" if input else f"types.output.{_name(token)}"
        elif spec.get("type") == "array":
            text = f"{self.type_of(spec.get('items', {}), input, plain)}[]"
        elif spec.get("type") == "object" and "additionalProperties" in spec:
            text = f"{{[key: string]: {self.type_of(spec['additionalProperties'], input, plain)}}}"
        else:
            text = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean"}.get(
                spec.get("type", ""), "any"
            )
        return text if not input or plain or text == "any" else f"pulumi.Input<{text}>"

    def interface(self, name: str, spec: Mapping[str, Any], input: bool, indent: str) -> list[str]:
        required = set(spec.get("required", []))
        out = [*_comment(spec.get("description"), indent), f"{indent}export interface {name} {{"]
        for prop, prop_spec in spec.get("properties", {}).items():
            out += _comment(prop_spec.get("description"), indent + "    ")
            sigil = "" if prop in required else "?"
            readonly = "" if input else "readonly "
            out.append(f"{indent}    {readonly}{prop}{sigil}: {self.type_of(prop_spec, input, False)};")
        return out + [f"{indent}}}"]

    def enum(self, name: str, spec: Mapping[str, Any], indent: str) -> list[str]:
        out = [f"{indent}export const {name} = {{"]
        for member in spec["enum"]:
            out += _comment(member.get("description"), indent + "    ")
            out.append(f"{indent}    {member.get('name') or member['value']}: {json.dumps(member['value'])},")
        out += [
            f"{indent}}} as const;",
            "",
            *_comment(spec.get("description"), indent),
            f"{indent}export type {name} = (typeof {name})[keyof typeof {name}];",
        ]
        return out

    def component(self, token: str, spec: Mapping[str, Any]) -> list[str]:
        name, version = _name(token), self.schema.get("version", "0.0.0")
        outputs, required_outputs = spec.get("properties", {}), set(spec.get("required", []))
        inputs, required_inputs = spec.get("inputProperties", {}), spec.get("requiredInputs", [])
        out = [
            *_comment(spec.get("description"), ""),
            f"export class {name} extends pulumi.ComponentResource {{",
            "    /** @internal */",
            f"    public static readonly __pulumiType = {json.dumps(token)};",
            "",
            f"    /** Whether `obj` is an instance of {name}: true even when another copy of this SDK made it. */",
            f"    public static isInstance(obj: any): obj is {name} {{",
            "        if (obj === undefined || obj === null) {",
            "            return false;",
            "        }",
            f'        return obj["__pulumiType"] === {name}.__pulumiType;',
            "    }",
            "",
        ]
        for prop, prop_spec in outputs.items():
            out += _comment(prop_spec.get("description"), "    ")
            typ = self.type_of(prop_spec, False, False)
            typ = typ if prop in required_outputs else f"{typ} | undefined"
            out.append(f"    public readonly {prop}!: pulumi.Output<{typ}>;")
        out += [
            "",
            *_comment(f"Create a {name} component.", "    "),
            f"    constructor(name: string, args: {name}Args, opts?: pulumi.ComponentResourceOptions) {{",
            "        let resourceInputs: pulumi.Inputs = {};",
            "        opts = opts || {};",
        ]
        for prop in required_inputs:
            out += [
                f"        if (args?.{prop} === undefined && !opts.urn) {{",
                f"            throw new Error(\"Missing required property '{prop}'\");",
                "        }",
            ]
        out += [f"        resourceInputs[{json.dumps(prop)}] = args?.{prop};" for prop in inputs]
        out += [
            f"        resourceInputs[{json.dumps(prop)}] = undefined /*out*/;" for prop in outputs if prop not in inputs
        ]
        out += [
            f"        opts = pulumi.mergeOptions({{ version: {json.dumps(version)} }}, opts);",
            f"        super({name}.__pulumiType, name, resourceInputs, opts, true /*remote*/);",
            "    }",
            "}",
            "",
            *_comment(f"The set of arguments for constructing a {name} component.", ""),
            *self.interface(f"{name}Args", {"properties": inputs, "required": required_inputs}, True, ""),
        ]
        return out

    def module(self) -> str:
        enums = {t: s for t, s in sorted(self.types.items()) if "enum" in s}
        objects = {t: s for t, s in sorted(self.types.items()) if "enum" not in s}
        out = [
            HEADER.format(
                name=f"@{self.schema.get('namespace')}/{self.schema.get('name')}",
                namespace=self.schema.get("namespace"),
                version=self.schema.get("version"),
            ).rstrip("\n"),
            "",
            "export namespace types {",
            "    export namespace enums {",
        ]
        for token, spec in enums.items():
            out += self.enum(_name(token), spec, "        ") + [""]
        out[-1:] = ["    }", "", "    export namespace input {"]
        for token, spec in objects.items():
            out += self.interface(f"{_name(token)}Args", spec, True, "        ") + [""]
        out[-1:] = ["    }", "", "    export namespace output {"]
        for token, spec in objects.items():
            out += self.interface(_name(token), spec, False, "        ") + [""]
        out[-1:] = ["    }", "}", ""]
        for token, spec in self.schema.get("resources", {}).items():
            out += self.component(token, spec) + [""]
        return "\n".join(out)


def typescript(schema: Mapping[str, Any]) -> str:
    """The TypeScript module of ``schema`` (the package's, as ``GetSchema`` serves it)."""
    return _Writer(schema).module()
