"""From a source's JSON-Schema tools and recorded calls to BFCL's function docs and possible
answers, judged by BFCL's rules exactly as the source means them.

- **Types.** JSON Schema's names (and the Python names some sets use) become BFCL's: ``string``,
  ``integer``, ``number`` -> ``float``, ``boolean``, ``array`` (``items`` kept, mapped the same
  way), ``object`` -> ``dict`` (``properties`` kept), ``any``. A parameter without a type (or
  with one no set agrees on, such as ``Callable``) takes the type of the value the answer gives
  it, else ``string``.
- **Values.** An answer value must have its parameter's type (a float with no fraction passes
  as an integer and is written as one); BFCL's checker accepts an integer for a top-level
  float, and because the answer keeps the source's integers inside ``number`` arrays, both
  ``[1, 2]`` and ``[1.0, 2.0]`` pass there, as JSON Schema's ``number`` means. A null argument
  is an omitted one.
- **Optional parameters.** A parameter the schema does not require and the answer omits is
  listed with ``""`` (BFCL's "may be omitted"), with its ``default`` as the one other value
  accepted; one the answer gives with its default value may be omitted as well.
- **Names.** A function or parameter name a Python call cannot hold (``Get Weather``,
  ``from``, ``$filter``) is rewritten (``Get_Weather``, ``from_``, ``_filter``) in the docs and
  the answers alike, so the task can be answered in BFCL's prompting format.
"""

from __future__ import annotations

import copy
import keyword
import re
from typing import Any

from fcenv.sources import Call, RecordError
from fcenv.sources.parsing import EXACT_INTEGERS, tool_docs

_TYPES = {"string": "string", "str": "string", "text": "string", "char": "string", "integer": "integer",
          "int": "integer", "long": "integer", "number": "float", "float": "float", "double": "float",
          "decimal": "float", "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
          "tuple": "array", "set": "array", "object": "dict", "dict": "dict", "map": "dict", "any": "any"}
_CHECK = {"string": (str,), "integer": (int,), "float": (int, float), "boolean": (bool,), "array": (list, tuple),
          "dict": (dict,)}
_PHRASE = {"string": "a string", "integer": "an integer", "float": "a number", "boolean": "a boolean",
           "array": "a list", "dict": "an object"}


# --------------------------------------------------------------------------- names


def python_name(name: str, dotted: bool = False) -> str:
    """``name`` as a Python call can write it (a function's dotted parts each an identifier)."""
    parts = []
    for part in name.split(".") if dotted else [name]:
        fixed = re.sub(r"\W", "_", part.strip())
        if not fixed.isidentifier():
            fixed = "_" + re.sub(r"[^A-Za-z0-9_]", "_", fixed)
        if keyword.iskeyword(fixed):
            fixed += "_"
        parts.append(fixed)
    return ".".join(parts)


# --------------------------------------------------------------------------- docs


def bfcl_type(schema: dict[str, Any]) -> str | None:
    """BFCL's type name for a JSON Schema, None when it gives none."""
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((t for t in declared if t != "null"), None)
    if isinstance(declared, str):
        return _TYPES.get(declared.strip().lower())
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key) or []:
            if isinstance(branch, dict) and branch.get("type") != "null" and (found := bfcl_type(branch)):
                return found
    if isinstance(schema.get("properties"), dict):
        return "dict"
    if isinstance(schema.get("items"), (dict, list)):
        return "array"
    if schema.get("enum"):
        return _value_type(schema["enum"][0])
    return None


def _value_type(value: Any) -> str | None:
    for kind, python in (("boolean", bool), ("integer", int), ("float", float), ("string", str), ("array", list),
                         ("dict", dict)):
        if isinstance(value, python):
            return kind
    return None


def bfcl_schema(schema: Any, field: str) -> dict[str, Any]:
    """One parameter's JSON Schema as BFCL writes it (``type`` None where it must be inferred)."""
    if not isinstance(schema, dict):
        raise RecordError(field, "a parameter must be described by an object (a JSON Schema)", "bad_tools")
    kind = bfcl_type(schema)
    out: dict[str, Any] = {"type": kind}
    if isinstance(schema.get("description"), str):
        out["description"] = schema["description"]
    for key in ("enum", "default"):
        if key in schema:
            out[key] = copy.deepcopy(schema[key])
    if kind == "array":
        items = schema.get("items")
        items = items[0] if isinstance(items, list) and items else items  # tuple-style items
        out["items"] = bfcl_schema(items, f"{field}.items") if isinstance(items, dict) else {"type": None}
    if kind == "dict" and isinstance(schema.get("properties"), dict):
        out["properties"] = {k: bfcl_schema(v, f"{field}.properties.{k}") for k, v in schema["properties"].items()}
    return out


class Docs:
    """A dialogue's tools as BFCL docs, with the names rewritten for Python calls."""

    def __init__(self, tools: list[dict[str, Any]], field: str):
        tools = tool_docs(tools, field)  # a reader of someone else's may hand OpenAI's wrapped tools
        self.docs: list[dict[str, Any]] = []
        self.names: dict[str, str] = {}  # name as the source writes it -> name in the docs
        self.params: dict[str, dict[str, str]] = {}  # doc name -> {parameter as written -> in the doc}
        for index, tool in enumerate(tools):
            where = f"{field}[{index}]"
            name = python_name(tool["name"], dotted=True)
            if name in self.params:
                raise RecordError(where, f"two tools are named {name!r}", "bad_tools")
            parameters = tool.get("parameters") or {}
            properties = parameters.get("properties") or {}
            if not isinstance(properties, dict):
                raise RecordError(f"{where}.parameters.properties", "must be an object", "bad_tools")
            renamed = {param: python_name(param) for param in properties}
            if len(set(renamed.values())) < len(renamed):
                raise RecordError(f"{where}.parameters", "two parameters have the same name once written for "
                                                         "Python", "bad_tools")
            required = parameters.get("required") or []
            if not isinstance(required, list):
                required = []
            self.docs.append({
                "name": name,
                "description": tool.get("description") if isinstance(tool.get("description"), str) else "",
                "parameters": {
                    "type": "dict",
                    "properties": {renamed[p]: bfcl_schema(s, f"{where}.parameters.properties.{p}")
                                   for p, s in properties.items()},
                    "required": [renamed[p] for p in required if p in renamed],
                },
            })
            self.names[tool["name"]] = name
            self.names.setdefault(name, name)
            self.params[name] = renamed

    def doc(self, name: str) -> dict[str, Any] | None:
        renamed = self.names.get(name)
        return next((d for d in self.docs if d["name"] == renamed), None)

    def finished(self) -> list[dict[str, Any]]:
        """The docs, with every type no answer settled written as ``string``."""
        docs = copy.deepcopy(self.docs)
        for doc in docs:
            for schema in doc["parameters"]["properties"].values():
                _settle(schema)
        return docs


def _settle(schema: dict[str, Any]) -> None:
    if schema.get("type") is None:
        schema["type"] = "string"
    if schema["type"] == "array":
        _settle(schema.setdefault("items", {"type": None}))
    for inner in (schema.get("properties") or {}).values():
        _settle(inner)


# --------------------------------------------------------------------------- answers


def fitted(value: Any, schema: dict[str, Any], field: str) -> Any:
    """``value`` checked against its schema (typing an untyped schema by it), as the answer
    writes it; a ``type_mismatch`` ``RecordError`` when it does not fit."""
    if schema.get("type") is None:
        schema["type"] = _value_type(value) or "any"
        if schema["type"] == "array":
            schema.setdefault("items", {"type": None})
    kind = schema["type"]
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    if kind == "any":
        return value
    if not isinstance(value, _CHECK[kind]) or (isinstance(value, bool) and kind != "boolean"):
        raise RecordError(field, f"{value!r} is not {_PHRASE[kind]}, as the schema's type {kind} says", "type_mismatch")
    if kind == "array":
        items = [fitted(item, schema["items"], f"{field}[{i}]") for i, item in enumerate(value)]
        return whole_numbers_as_the_first(items) if schema["items"].get("type") == "float" else items
    return value


def whole_numbers_as_the_first(numbers: list[Any]) -> list[Any]:
    """A list of numbers with its whole numbers written as its first item is: integers after a
    whole first item, floats after one with a fraction. BFCL types a list's items by the first
    item of its possible answer, so ``[1.5, 2]`` fails its own check where ``[1.5, 2.0]`` passes,
    and after a whole first item both ``[1, 2.5]`` and ``[1.0, 2.5]`` pass. Written so, the list
    reads the same whether its file kept ``2`` or turned it into ``2.0`` (Arrow does, in a column
    where another number has a fraction)."""
    if not numbers or not all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in numbers):
        return numbers
    whole_first = isinstance(numbers[0], int) or numbers[0].is_integer()
    return [_whole_number_written(n, whole_first) for n in numbers]


def _whole_number_written(number: float, as_integer: bool) -> float:
    if abs(number) >= EXACT_INTEGERS:  # no exact float for it, or no exact integer: left as written
        return number
    if as_integer and isinstance(number, float) and number.is_integer():
        return int(number)
    if not as_integer and isinstance(number, int):
        return float(number)
    return number


def acceptable(value: Any, schema: dict[str, Any]) -> list[Any]:
    """BFCL's list of acceptable values for one given value: a dict's members become lists of
    acceptable values themselves, as BFCL's dict checker reads them, and so do those of a
    list of dicts."""
    if schema["type"] == "dict":
        return [{k: [v] for k, v in value.items()}]
    if schema["type"] == "array" and schema["items"].get("type") == "dict":
        return [[{k: [v] for k, v in item.items()} if isinstance(item, dict) else item for item in value]]
    return [value]


def expected_call(docs: Docs, call: Call, field: str) -> tuple[Call, dict[str, dict[str, list[Any]]]]:
    """The call as the docs name it (values fitted), and BFCL's possible answer for it."""
    doc = docs.doc(call.name)
    if doc is None:
        known = [d["name"] for d in docs.docs]
        raise RecordError(f"{field}.name", f"calls {call.name!r}, which is not among the tools {known}",
                          "unknown_function")
    name, properties = doc["name"], doc["parameters"]["properties"]
    renamed = docs.params[name]
    arguments, answer = {}, {}
    for param, value in call.arguments.items():
        if value is None:
            continue  # null: not given
        new = renamed.get(param, param if param in properties else None)
        if new is None:
            raise RecordError(f"{field}.arguments.{param}", f"{param!r} is not a parameter of {call.name!r} "
                                                            f"(its parameters: {sorted(renamed)})", "unknown_argument")
        schema = properties[new]
        arguments[new] = fitted(value, schema, f"{field}.arguments.{param}")
        answer[new] = acceptable(arguments[new], schema)
    required = doc["parameters"]["required"]
    for param in required:
        if param not in arguments:
            raise RecordError(f"{field}.arguments", f"the required parameter {param!r} of {call.name!r} is not given",
                              "missing_required")
    for param, schema in properties.items():
        if param in required:
            continue
        default = _default(schema)
        if param not in answer:
            answer[param] = ([] if default is None else acceptable(default, schema)) + [""]
        elif default is not None and arguments[param] == default:
            answer[param].append("")
    return Call(name, arguments), {name: answer}


def _default(schema: dict[str, Any]) -> Any:
    """The schema's default when it fits the parameter's type (else None)."""
    if schema.get("default") is None or schema.get("type") is None:
        return None
    try:
        return fitted(copy.deepcopy(schema["default"]), copy.deepcopy(schema), "default")
    except RecordError:
        return None
