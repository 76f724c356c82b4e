"""Mistral native tool calls, decoded as BFCL's ``MistralFCHandler`` does (bfcl-eval 2026.3.23).

The model answers ``[TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]``. ``[TOOL_CALLS]``
is a special token, which BFCL's server drops from the text (every occurrence), and so does
this decoder. The rest must be one JSON list of objects, each with ``name`` and
``arguments``; anything else fails: text that is not JSON is kept as text, which no decoder
accepts, and JSON of another shape makes BFCL's handler raise while reading the answer, which
fails a multi-turn entry whole (``InferenceCrash``). Arguments that are not an object are
``decoder_wrong_output_format``; on multi-turn steps (``decode_execute``) arguments written as
a JSON string are parsed first, as BFCL's ``convert_to_function_call`` does.
"""

from __future__ import annotations

from typing import Any

from fcenv.handlers import register_handler
from fcenv.handlers.base import MAX_STEP_CALLS, Call, DecodeError, too_many_calls
from fcenv.handlers.json_calls import parse_json
from fcenv.handlers.native import InferenceCrash, native_call, require_keys

TOOL_CALLS_TAG = "[TOOL_CALLS]"


@register_handler("mistral")
def decode(text: str) -> list[Call]:
    """BFCL's ``decode_ast`` for Mistral tool calls."""
    return [native_call(item["name"], item["arguments"]) for item in _items(text)]


def decode_execute(text: str) -> list[Call]:
    """BFCL's ``decode_execute``: the calls a multi-turn step runs (at most ``MAX_STEP_CALLS``)."""
    items = _items(text)
    if len(items) > MAX_STEP_CALLS:
        raise too_many_calls()
    return [native_call(item["name"], item["arguments"], json_string_arguments=True) for item in items]


def _items(text: str) -> list[Any]:
    if not isinstance(text, str):
        raise DecodeError(f"expected text, got {type(text).__name__}")
    value = parse_json(text.replace(TOOL_CALLS_TAG, ""))  # not JSON: BFCL keeps the text, no call
    # JSON of any other shape makes BFCL's handler raise while reading the answer.
    if not isinstance(value, list):
        raise InferenceCrash(f"expected a JSON list of calls, got {type(value).__name__}", immediate=True)
    for item in value:
        try:
            require_keys(item, "name", "arguments")
        except DecodeError as exc:
            raise InferenceCrash(str(exc), immediate=True) from None
        if isinstance(item["name"], (list, dict)):
            raise InferenceCrash("a call's name must be a string", immediate=True)
    return value
