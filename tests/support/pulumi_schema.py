"""A Pulumi package schema (as the plugin serves it) as the other languages see it: JSON Schema for the
properties a Pulumi YAML program may give a resource, and TypeScript declarations shaped like the SDK that
`pulumi package add` generates (argument interfaces, enums as string unions, outputs), for `tsc`."""

from __future__ import annotations

import json
from typing import Any

ANY = "pulumi.json#/Any"


def _ref(ref: str) -> str:
    return ref.removeprefix("#/types/")


def _name(token: str) -> str:
    return token.rsplit(":", 1)[-1]


def _json_property(prop: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in prop:
        return {} if prop["$ref"] == ANY else {"$ref": f"#/definitions/{_ref(prop['$ref'])}"}
    kind = prop.get("type")
    if kind == "array":
        return {"type": "array", "items": _json_property(prop["items"])}
    if kind == "object":
        return {"type": "object", "additionalProperties": _json_property(prop.get("additionalProperties", {}))}
    return {"type": kind} if kind else {}


def json_schema(schema: dict[str, Any], token: str) -> dict[str, Any]:
    """The JSON Schema of resource `token`'s inputs: unknown keys, missing required keys, wrong types and values
    outside an enum are errors, as Pulumi YAML's type checker reports them."""
    definitions: dict[str, Any] = {}
    for name, spec in schema.get("types", {}).items():
        if "enum" in spec:
            definitions[name] = {"enum": [member["value"] for member in spec["enum"]]}
        else:
            definitions[name] = {
                "type": "object",
                "properties": {k: _json_property(v) for k, v in spec.get("properties", {}).items()},
                "required": spec.get("required", []),
                "additionalProperties": False,
            }
    resource = schema["resources"][token]
    return {
        "type": "object",
        "properties": {k: _json_property(v) for k, v in resource.get("inputProperties", {}).items()},
        "required": resource.get("requiredInputs", []),
        "additionalProperties": False,
        "definitions": definitions,
    }


def _ts_type(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        return "any" if prop["$ref"] == ANY else _name(_ref(prop["$ref"]))
    kind = prop.get("type")
    if kind == "array":
        return f"{_ts_type(prop['items'])}[]"
    if kind == "object":
        return f"{{[key: string]: {_ts_type(prop.get('additionalProperties', {}))}}}"
    return {"string": "string", "integer": "number", "number": "number", "boolean": "boolean"}.get(kind or "", "any")


def _ts_input(prop: dict[str, Any]) -> str:
    """A plain property takes the value itself; any other also takes an Output of it."""
    inner = _ts_type(prop)
    return inner if prop.get("plain") else f"pulumi.Input<{inner}>"


def _ts_fields(properties: dict[str, Any], required: list[str]) -> list[str]:
    return [
        f"    {key}{'' if key in required else '?'}: {_ts_input(prop)};" for key, prop in sorted(properties.items())
    ]


def typescript(schema: dict[str, Any]) -> str:
    """index.d.ts of the package's TypeScript SDK: its resources, their argument types and its enums."""
    lines = ['import * as pulumi from "@pulumi/pulumi";', ""]
    for token, spec in sorted(schema.get("types", {}).items()):
        name = _name(token)
        if "enum" in spec:
            values = " | ".join(json.dumps(member["value"]) for member in spec["enum"])
            lines += [f"export type {name} = {values};", ""]
        else:
            lines += [f"export interface {name} {{", *_ts_fields(spec.get("properties", {}), spec.get("required", []))]
            lines += ["}", ""]
    for token, spec in sorted(schema["resources"].items()):
        name = _name(token)
        lines += [f"export interface {name}Args {{"]
        lines += _ts_fields(spec.get("inputProperties", {}), spec.get("requiredInputs", []))
        lines += ["}", "", f"export declare class {name} extends pulumi.ComponentResource {{"]
        lines += [
            f"    readonly {key}: pulumi.Output<{_ts_type(prop)}>;"
            for key, prop in sorted(spec.get("properties", {}).items())
        ]
        lines += [f"    constructor(name: string, args: {name}Args, opts?: pulumi.ComponentResourceOptions);", "}", ""]
    return "\n".join(lines)


def npm_name(schema: dict[str, Any]) -> str:
    """The npm package the Node.js code generator names the SDK: @<namespace>/<name>, or @pulumi/<name> for a
    schema without a namespace (tests/engine/test_sdks.py checks it against the real generator)."""
    namespace = schema.get("namespace") or "pulumi"
    return f"@{namespace}/{schema['name']}"


def package_json(schema: dict[str, Any]) -> dict[str, Any]:
    """package.json of the generated SDK (declarations only: enough for tsc)."""
    return {
        "name": npm_name(schema),
        "version": schema["version"],
        "types": "index.d.ts",
        "main": "index.js",
    }
