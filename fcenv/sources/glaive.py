"""Glaive's function-calling sets (``glaiveai/glaive-function-calling-v2``).

A record: ``{"system": "SYSTEM: You are a helpful assistant with access to the following
functions. Use them if required -\\n{...}\\n\\n{...}", "chat": "USER: ...\\n\\n\\nASSISTANT: ..."}``.
The system prompt lists the functions as JSON objects one after another (none in records
"with no access to external functions"). The chat is one transcript whose turns start with
``USER:``, ``ASSISTANT:`` or ``FUNCTION RESPONSE:``; an assistant turn ends with
``<|endoftext|>`` and calls with ``<functioncall> {"name": "f", "arguments": '{"x": 1}'}``,
the arguments being a JSON text in single quotes. The system prompt is replaced by the env's.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fcenv.sources import Dialogue, RecordError, Turn, register_format
from fcenv.sources.parsing import call_of, concatenated_objects, read_data, text_field, tool_docs

_MARKER = re.compile(r"(?:^|\n)[ \t]*(USER|ASSISTANT|FUNCTION RESPONSE):[ \t]*")
_ROLES = {"USER": "user", "ASSISTANT": "assistant", "FUNCTION RESPONSE": "tool"}
_END = "<|endoftext|>"
_CALL = "<functioncall>"
# {"name": "f", "arguments": '{...}'}: the quoted arguments, when the whole is no Python literal
# either (a quote inside them)
_QUOTED_ARGUMENTS = re.compile(r"""^(\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"arguments"\s*:\s*)'(.*)'(\s*\})$""", re.DOTALL)


def function_call(text: str, field: str):
    body = text.strip()
    if body.endswith("</functioncall>"):
        body = body[: -len("</functioncall>")].strip()
    try:
        value = read_data(body, field)
    except RecordError:
        quoted = _QUOTED_ARGUMENTS.match(body)
        if quoted is None:
            raise
        value = read_data(quoted.group(1) + json.dumps(quoted.group(2)) + quoted.group(3), field)
    return call_of(value, field)


@register_format("glaive", detect=lambda record: {"system", "chat"} <= record.keys())
def read(record: dict[str, Any]) -> Dialogue:
    system = text_field(record, "system")
    chat = text_field(record, "chat")
    docs = tool_docs(concatenated_objects(system, "system"), "system")
    pieces = _MARKER.split(chat)
    if len(pieces) < 3:
        raise RecordError("chat", "no USER:, ASSISTANT: or FUNCTION RESPONSE: turn found")
    turns = []
    for number, (marker, text) in enumerate(zip(pieces[1::2], pieces[2::2]), start=1):
        field = f"chat, turn {number} ({marker})"
        role = _ROLES[marker]
        text = text.replace(_END, "").strip()
        if role != "assistant" or _CALL not in text:
            turns.append(Turn(role, text, field=field))
            continue
        before, _, after = text.partition(_CALL)
        calls = [function_call(part, field) for part in after.split(_CALL)]
        turns.append(Turn("assistant", before.strip(), calls, field, [field] * len(calls)))
    return Dialogue(docs, turns, "system")
