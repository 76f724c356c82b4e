"""What the source formats share: reading JSON (or the Python literals some sets write instead),
tool lists and calls, each failure a ``RecordError`` naming the field.

Python literals are read with ``ast.literal_eval``, which builds values and runs nothing; texts
over ``MAX_TEXT`` characters are refused first, as are values nested too deeply to read.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from fcenv.sources import Call, RecordError

MAX_TEXT = 1 << 20  # one record's tool list or call: far beyond any real one
MAX_TURN = 1 << 22  # one message, or glaive's whole transcript
# Beyond 2**53 not every integer has a float, and every float is whole: such numbers stay as written.
EXACT_INTEGERS = 2**53


def read_data(text: str, field: str, what: str = "JSON") -> Any:
    """A JSON value, or failing that the same data written as a Python literal (Hermes's
    ``{'name': ..., 'arguments': {...}}``)."""
    if not isinstance(text, str):
        raise RecordError(field, f"must be a string of {what}, not {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise RecordError(field, f"{len(text)} characters: too long to read")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        error = f"invalid {what}: {exc.msg} (column {exc.colno})"
    except RecursionError:
        raise RecordError(field, "nested too deeply to read") from None
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise RecordError(field, error) from None


def json_field(record: dict[str, Any], key: str, what: str = "JSON") -> Any:
    """A field that some copies of a set hold as a JSON string and others (Parquet, ``datasets``)
    as the value itself."""
    if key not in record or record[key] is None:
        raise RecordError(key, "missing")
    value = record[key]
    return read_data(value, key, what) if isinstance(value, str) else value


def text_field(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise RecordError(key, "missing" if value is None else f"must be a string, not {type(value).__name__}")
    if len(value) > MAX_TURN:
        raise RecordError(key, f"{len(value)} characters: too long to read")
    return value


def concatenated_objects(text: str, field: str) -> list[Any]:
    """JSON objects written one after another (glaive's system prompt lists its functions so)."""
    decoder, out, pos = json.JSONDecoder(), [], 0
    while True:
        pos = text.find("{", pos)
        if pos < 0:
            return out
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise RecordError(field, f"invalid JSON in the function list: {exc.msg} (character {exc.pos})") from None
        except RecursionError:
            raise RecordError(field, "nested too deeply to read") from None
        out.append(value)


def first_json_array(text: str, field: str) -> list[Any] | None:
    """The first JSON array of objects in a text (ToolACE's system prompt holds its functions so)."""
    pos = text.find("[{")
    if pos < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise RecordError(field, f"invalid JSON in the function list: {exc.msg} (character {exc.pos})") from None
    except RecursionError:
        raise RecordError(field, "nested too deeply to read") from None
    return value


def tool_docs(value: Any, field: str) -> list[dict[str, Any]]:
    """Function docs from a tool list: OpenAI's ``{"type": "function", "function": {...}}`` or
    the bare ``{"name", "description", "parameters"}``."""
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise RecordError(field, f"must be a list of tools, not {type(value).__name__}", "bad_tools")
    docs = []
    for index, tool in enumerate(value):
        where = f"{field}[{index}]"
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            tool = tool["function"]
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
            raise RecordError(where, "a tool must be an object with a name", "bad_tools")
        parameters = tool.get("parameters")
        if parameters is None:
            parameters = {"type": "object", "properties": {}}
        if not isinstance(parameters, dict):
            raise RecordError(f"{where}.parameters", "must be an object (a JSON Schema)", "bad_tools")
        docs.append(without_nulls({**tool, "parameters": parameters}))
    return docs


def without_nulls(value: Any) -> Any:
    """A tool doc without null members: Arrow (Parquet, ``datasets``) stores the docs of a column
    with one struct type, filling the keys a doc lacks with nulls."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def call_of(value: Any, field: str) -> Call:
    """``{"name": ..., "arguments": {...}}`` (arguments also as a JSON string; ``parameters``
    as some sets name them) as a call."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        raise RecordError(field, "a call must be an object with a name and arguments")
    arguments = value.get("arguments", value.get("parameters"))
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        arguments = read_data(arguments, f"{field}.arguments") if arguments.strip() else {}
    if not isinstance(arguments, dict):
        raise RecordError(f"{field}.arguments", f"must be an object, not {type(arguments).__name__}")
    return Call(value["name"], dict(arguments))


def conversation(record: dict[str, Any], key: str = "conversations") -> list[dict[str, Any]]:
    """A ShareGPT turn list: ``[{"from": ..., "value": ...}, ...]``."""
    turns = record.get(key)
    if isinstance(turns, str):
        turns = read_data(turns, key)
    if not isinstance(turns, list) or not turns:
        raise RecordError(key, "missing or empty" if not turns else "must be a list of turns")
    for index, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("from"), str):
            raise RecordError(f"{key}[{index}]", "a turn must be an object with 'from' and 'value'")
        if not isinstance(turn.get("value"), str):
            raise RecordError(f"{key}[{index}].value", "must be a string")
        if len(turn["value"]) > MAX_TURN:
            raise RecordError(f"{key}[{index}].value", f"{len(turn['value'])} characters: too long to read")
    return turns


def speakers(record: dict[str, Any], key: str = "conversations") -> set[str]:
    """Who speaks in a ShareGPT record (for recognising its format)."""
    turns = record.get(key)
    return {t.get("from") for t in turns if isinstance(t, dict)} if isinstance(turns, list) else set()
