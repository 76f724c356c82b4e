"""Hermes/Qwen tool calls: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

Every block in the text is one call, in order; text around and between the blocks is
ignored. A last block whose closing tag is missing (generation stopped at it) still counts.
Inside a block, the JSON object follows ``fcenv.handlers.json_calls`` (``arguments`` may be an
object or a JSON string; ``parameters`` is accepted too).

Failures: no block at all, or a block that is not JSON, is ``decoder_failed``; JSON of the
wrong shape is ``decoder_wrong_output_format``.
"""

from __future__ import annotations

from fcenv.handlers import register_handler
from fcenv.handlers.base import Call, DecodeError
from fcenv.handlers.json_calls import call_from_object, parse_json

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"


@register_handler("tool_call")
def decode(text: str) -> list[Call]:
    """Decode every ``<tool_call>`` block of ``text`` into a call."""
    if not isinstance(text, str):
        raise DecodeError(f"expected text, got {type(text).__name__}")
    blocks = tool_call_blocks(text)
    if not blocks:
        raise DecodeError("no <tool_call> block in the text")
    return [call_from_object(parse_json(block)) for block in blocks]


def tool_call_blocks(text: str) -> list[str]:
    """The blocks' contents; a block also ends where the next one opens.

    Plain searches, each position looked at a bounded number of times, so hostile text
    (thousands of opening tags and no closing one) stays linear.
    """
    blocks = []
    start = text.find(OPEN_TAG)
    close = 0
    while start >= 0:
        start += len(OPEN_TAG)
        if 0 <= close < start:
            close = text.find(CLOSE_TAG, start)
        following = text.find(OPEN_TAG, start)
        ends = [i for i in (close, following) if i >= 0]
        end = min(ends) if ends else len(text)
        blocks.append(text[start:end])
        if end == close:
            start = text.find(OPEN_TAG, close + len(CLOSE_TAG)) if following >= 0 else -1
        else:
            start = following
    return blocks
