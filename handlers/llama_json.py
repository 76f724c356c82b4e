"""Llama 3.x native tool calls (bare JSON), decoded as BFCL's ``LlamaHandler_3_1`` does
(bfcl-eval 2026.3.23).

The model answers with ``{"name": ..., "parameters": {...}}``, a list of such objects, or
several separated by ``;``, optionally after ``<|python_tag|>``. BFCL's rules:

- every ``<|python_tag|>`` is removed;
- with a ``;`` anywhere in the text, it is split there and each piece must be JSON (so a
  ``;`` inside a string value breaks the answer);
- otherwise the text is read as a *Python* expression (BFCL calls ``eval``): ``True`` and
  ``None`` work, JSON's ``true``, ``false`` and ``null`` are undefined names and fail; a dict
  is one call, a list or tuple of dicts is several. Here the expression is evaluated by
  ``fcenv.handlers.bounded_eval`` (literals and operators only; names and calls fail), never run;
- each call needs ``name`` and ``parameters``; parameters that are not an object are
  ``decoder_wrong_output_format``.
"""

from __future__ import annotations

from typing import Any

from fcenv.handlers import register_handler
from fcenv.handlers.base import MAX_STEP_CALLS, Call, DecodeError, too_many_calls
from fcenv.handlers.bounded_eval import evaluate
from fcenv.handlers.json_calls import parse_json
from fcenv.handlers.native import native_call, require_keys
from fcenv.handlers.python import parse_expression

PYTHON_TAG = "<|python_tag|>"


@register_handler("llama_json")
def decode(text: str) -> list[Call]:
    """BFCL's ``decode_ast`` (and ``decode_execute``: both read calls alike) for Llama 3.x."""
    items = []
    for item in _items(text):
        require_keys(item, "name", "parameters")
        items.append(native_call(item["name"], item["parameters"]))
    return items


def decode_execute(text: str) -> list[Call]:
    """The calls a multi-turn step runs, read as ``decode`` reads them; a text split at ``;``
    into more pieces than a step may hold calls is refused before any piece is read."""
    if isinstance(text, str) and text.count(";") >= MAX_STEP_CALLS:
        raise too_many_calls()
    return decode(text)


def _items(text: str) -> list[Any]:
    if not isinstance(text, str):
        raise DecodeError(f"expected text, got {type(text).__name__}")
    text = text.replace(PYTHON_TAG, "")
    if ";" in text:
        return [parse_json(piece) for piece in text.split(";")]
    # eval() skips leading spaces and tabs, nothing else.
    value = evaluate(parse_expression(text.lstrip(" \t")))
    if isinstance(value, dict):
        return [value]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise DecodeError(f"expected a call object or a list of them, got {type(value).__name__}")
