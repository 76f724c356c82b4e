"""Salesforce's xLAM function-calling sets (``Salesforce/xlam-function-calling-60k``, APIGen).

A record: ``{"id": 0, "query": "...", "tools": "[...]", "answers": "[...]"}``, ``tools`` and
``answers`` being JSON strings (or, in Parquet copies, the lists themselves). A tool is
``{"name", "description", "parameters": {param: {"type", "description", "default"}}}`` with
Python type names (``"str"``, ``"int"``, ``"List[int]"``, ``"Dict[str, Any]"``, ``"str, optional"``);
a parameter is optional when its type says ``optional`` or it has a ``default``. An answer is
``{"name", "arguments"}``. One user turn, one assistant step with every answer as its calls.
"""

from __future__ import annotations

import re
from typing import Any

from fcenv.sources import Dialogue, RecordError, Turn, register_format
from fcenv.sources.parsing import call_of, json_field, text_field

_SCALARS = {"str": "string", "string": "string", "int": "integer", "integer": "integer", "float": "number",
            "number": "number", "bool": "boolean", "boolean": "boolean"}
_ARRAYS = {"list", "tuple", "set", "sequence", "iterable", "array"}
_OBJECTS = {"dict", "mapping", "object"}


def python_type(text: str) -> tuple[dict[str, Any], bool]:
    """A Python type name as a JSON Schema, and whether it says ``optional``."""
    text = text.strip()
    optional = bool(re.search(r",\s*optional\s*$", text, re.IGNORECASE))
    text = re.sub(r",\s*optional\s*$", "", text, flags=re.IGNORECASE).strip()
    if text.startswith("Optional[") and text.endswith("]"):
        return python_type(text[len("Optional["):-1])[0], True
    return _schema(text), optional


def _schema(text: str) -> dict[str, Any]:
    base, _, rest = text.partition("[")
    base = base.strip().rsplit(".", 1)[-1].lower()  # typing.List -> list
    args = _split_top(rest[:-1]) if rest.endswith("]") else []
    if base in _SCALARS:
        return {"type": _SCALARS[base]}
    if base in _ARRAYS:
        return {"type": "array", **({"items": _schema(args[0])} if args and args[0] != "..." else {})}
    if base in _OBJECTS:
        return {"type": "object"}
    if base == "union":
        kinds = [_schema(a) for a in args if a.strip().lower() not in ("none", "nonetype")]
        if {k.get("type") for k in kinds} <= {"integer", "number"} and kinds:
            return {"type": "number"}
        return kinds[0] if kinds else {}
    return {}  # Any, Callable, ...: the type is taken from the answer


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def xlam_tool(tool: Any, field: str) -> dict[str, Any]:
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
        raise RecordError(field, "a tool must be an object with a name", "bad_tools")
    params = tool.get("parameters") or {}
    if not isinstance(params, dict):
        raise RecordError(f"{field}.parameters", "must be an object of parameters", "bad_tools")
    properties, required = {}, []
    for name, spec in params.items():
        if not isinstance(spec, dict):
            raise RecordError(f"{field}.parameters.{name}", "must be an object with a type", "bad_tools")
        kind = spec.get("type", "")
        schema, optional = python_type(kind) if isinstance(kind, str) else ({}, False)
        properties[name] = {**schema, **({"description": spec["description"]} if "description" in spec else {}),
                            **({"default": spec["default"]} if "default" in spec else {})}
        if not optional and "default" not in spec:
            required.append(name)
    return {"name": tool["name"], "description": tool.get("description", ""),
            "parameters": {"type": "object", "properties": properties, "required": required}}


@register_format("xlam", detect=lambda record: {"query", "tools", "answers"} <= record.keys())
def read(record: dict[str, Any]) -> Dialogue:
    query = text_field(record, "query")
    tools = json_field(record, "tools")
    answers = json_field(record, "answers")
    if not isinstance(tools, list):
        raise RecordError("tools", "must be a list of tools", "bad_tools")
    if not isinstance(answers, list):
        raise RecordError("answers", "must be a list of calls")
    docs = [xlam_tool(tool, f"tools[{i}]") for i, tool in enumerate(tools)]
    fields = [f"answers[{i}]" for i in range(len(answers))]
    calls = [call_of(answer, where) for answer, where in zip(answers, fields)]
    return Dialogue(docs, [Turn("user", query, field="query"),
                           Turn("assistant", calls=calls, field="answers", call_fields=fields)])
