"""JSON tool calls, in the shapes models and APIs commonly write them.

Accepted (as a list of such objects, or a single one):

- BFCL's JSON return format: ``{"function": "name", "parameters": {...}}``;
- OpenAI style: ``{"name": "name", "arguments": {...}}``, where ``arguments`` may also be a
  JSON string holding the object (as in API responses); ``parameters`` works there too;
- an API message: ``{"tool_calls": [{"type": "function", "function": {"name", "arguments"}}]}``
  (the items may also be given directly, as a list).

The text may be wrapped in a Markdown code fence (```` ```json ````). If it is not JSON as a
whole, the span from its first ``[``/``{`` to its last ``]``/``}`` is tried, so a sentence
around the JSON does not matter. Missing arguments mean no arguments; ``[]`` means no calls.

Failures: text that holds no JSON is ``decoder_failed``; JSON of another shape is
``decoder_wrong_output_format``.
"""

from __future__ import annotations

import json
from typing import Any

from fcenv.handlers import register_handler
from fcenv.handlers.base import Call, DecodeError


@register_handler("json")
def decode(text: str) -> list[Call]:
    """Decode JSON function calls (see the module docstring for the accepted shapes)."""
    return calls_from_json(load_json(text))


def load_json(text: str) -> Any:
    if not isinstance(text, str):
        raise DecodeError(f"expected text, got {type(text).__name__}")
    body = strip_fence(text.strip())
    try:
        return parse_json(body)
    except DecodeError:
        start = min((i for i in (body.find("["), body.find("{")) if i >= 0), default=-1)
        end = max(body.rfind("]"), body.rfind("}"))
        if start < 0 or end <= start or (start == 0 and end == len(body) - 1):
            raise
        return parse_json(body[start:end + 1])


def strip_fence(text: str) -> str:
    """The inside of a Markdown code fence around the whole text (the text otherwise)."""
    if not (text.startswith("```") and text.endswith("```") and len(text) >= 6):
        return text
    inner = text[3:-3]
    first_line, newline, rest = inner.partition("\n")
    # The info string (```json) is one word on the fence's own line.
    if newline and first_line.strip().isidentifier():
        inner = rest
    return inner.strip()


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError, MemoryError) as exc:
        # ValueError covers JSONDecodeError and ints beyond Python's digit limit.
        raise DecodeError(f"not JSON: {exc}") from None


def calls_from_json(data: Any) -> list[Call]:
    if isinstance(data, dict) and "tool_calls" in data:
        data = data["tool_calls"]
    items = data if isinstance(data, list) else [data]
    return [call_from_object(item) for item in items]


def call_from_object(item: Any) -> Call:
    """One call from ``{"function"|"name": ..., "parameters"|"arguments": ...}``."""
    if not isinstance(item, dict):
        raise wrong_shape(f"a call must be a JSON object, got {type(item).__name__}")
    if isinstance(item.get("function"), dict):  # the API's {"type": "function", "function": {...}}
        item = item["function"]
    name = item.get("function", item.get("name"))
    if not isinstance(name, str):
        raise wrong_shape("a call needs a string 'function' or 'name'")
    arguments = item.get("parameters", item.get("arguments", {}))
    if isinstance(arguments, str):
        arguments = parse_json(arguments) if arguments.strip() else {}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise wrong_shape(f"the arguments of {name!r} must be a JSON object")
    return Call(name, arguments)


def wrong_shape(message: str) -> DecodeError:
    return DecodeError(message, kind="decoder_wrong_output_format")
