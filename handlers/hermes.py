"""Hermes / Qwen native tool calls, decoded as BFCL's ``QwenFCHandler`` does (bfcl-eval 2026.3.23).

The model writes each call as a JSON object in its own block::

    <tool_call>
    {"name": "spotify.play", "arguments": {"artist": "Taylor Swift", "duration": 20}}
    </tool_call>

BFCL's rules, followed exactly:

- text up to the last ``</think>`` is reasoning and is dropped (BFCL stores only the rest);
- a block is ``<tool_call>\\n`` ... ``\\n</tool_call>`` (the newlines are part of the tags), the
  shortest such span; a block that is not JSON is skipped silently;
- no block at all is no call (an empty list: a turn's end, or a wrong count in an AST
  category), not a failure;
- every block must be an object with ``name`` and ``arguments``; ``arguments`` must be an
  object (``decoder_failed`` otherwise). On multi-turn steps (``decode_execute``) arguments
  written as a JSON string are parsed first, as BFCL's ``convert_to_function_call`` does;
- BFCL keeps every JSON block in the chat history and writes it back into the next prompt
  (``{"name": "`` + name + ...): a block that is not an object with a string ``name`` and
  an ``arguments`` key breaks that, and the entry fails as an inference error
  (``InferenceCrash``; see ``fcenv.handlers.native``).

Unlike the lenient ``tool_call`` decoder, a block without its closing tag or without the
newlines inside the tags does not count: that is how BFCL scores such a model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from fcenv.handlers import register_handler
from fcenv.handlers.base import MAX_STEP_CALLS, Call, DecodeError, too_many_calls
from fcenv.handlers.native import InferenceCrash, native_call, require_keys

OPEN = "<tool_call>\n"
CLOSE = "\n</tool_call>"
THINK_END = "</think>"


@register_handler("hermes")
def decode(text: str) -> list[Call]:
    """BFCL's ``decode_ast`` for Hermes/Qwen tool calls."""
    return [native_call(item["name"], item["arguments"], bad_arguments="decoder_failed")
            for item in _calls(text)]


def decode_execute(text: str) -> list[Call]:
    """BFCL's ``decode_execute``: the calls a multi-turn step runs (at most ``MAX_STEP_CALLS``)."""
    items = _parsed_blocks(text, limit=MAX_STEP_CALLS)
    broken = [item for item in items if _breaks_history(item)]
    try:
        calls = [native_call(item["name"], item["arguments"], json_string_arguments=True) for item in _checked(items)]
    except DecodeError as exc:
        if broken:
            raise InferenceCrash(f"{exc}; BFCL's next prompt cannot be built", immediate=_bfcl_decodes(items)) from None
        raise
    if broken:
        raise InferenceCrash("a tool call BFCL cannot write back into the next prompt", immediate=True)
    return calls


def _calls(text: str) -> list[dict]:
    return _checked(_parsed_blocks(text))


def _parsed_blocks(text: str, limit: int | None = None) -> list:
    if not isinstance(text, str):
        raise DecodeError(f"expected text, got {type(text).__name__}")
    if THINK_END in text:
        text = text.split(THINK_END)[-1].lstrip("\n")
    items = []
    for block in blocks(text):
        try:
            items.append(json.loads(block))
        except (ValueError, RecursionError, MemoryError):
            continue  # BFCL skips a block that is not JSON
        if limit is not None and len(items) > limit:
            raise too_many_calls()
    return items


def _checked(items: list) -> list[dict]:
    for item in items:
        require_keys(item, "name", "arguments")
    return items


def _breaks_history(item) -> bool:
    """Whether BFCL's Qwen prompt builder fails on this call in the history."""
    if not isinstance(item, dict):
        return True
    shown = item["function"] if "function" in item else item
    return not (isinstance(shown, dict) and isinstance(shown.get("name"), str) and "arguments" in shown)


def _bfcl_decodes(items: list) -> bool:
    """Whether BFCL's ``decode_execute`` gets calls out of these blocks (so the turn goes on)."""
    def arguments_ok(arguments) -> bool:
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                return False
        return isinstance(arguments, dict)

    return all(isinstance(i, dict) and "name" in i and "arguments" in i and not isinstance(i["name"], (list, dict))
               and arguments_ok(i["arguments"]) for i in items)


def blocks(text: str) -> Iterator[str]:
    """What ``re.findall(r"<tool_call>\\n(.*?)\\n</tool_call>", text, re.DOTALL)`` finds, in one
    pass (and as they are needed): with no closing tag after an opening one, no later opening
    tag can match either."""
    start = text.find(OPEN)
    while start >= 0:
        end = text.find(CLOSE, start + len(OPEN))
        if end < 0:
            break
        yield text[start + len(OPEN):end]
        start = text.find(OPEN, end + len(CLOSE))
