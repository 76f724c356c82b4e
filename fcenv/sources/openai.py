"""The OpenAI chat format with tools, as TRL's trainers and most SFT sets take it.

A record: ``{"messages": [...], "tools": [...]}`` (or TRL's conversational prompt-completion
``{"prompt": [...], "completion": [...], "tools": [...]}``, read as one conversation). A message
is ``{"role": "system" | "user" | "assistant" | "tool", "content": ...}``; an assistant message
that calls has ``tool_calls: [{"type": "function", "function": {"name", "arguments"}}]``
(arguments an object or a JSON string; the older ``function_call`` is read too); content may be
None or a list of ``{"type": "text", "text"}`` parts. ``tools`` (a list, or a JSON string) holds
``{"type": "function", "function": {"name", "description", "parameters"}}`` JSON-Schema docs.
"""

from __future__ import annotations

from typing import Any

from fcenv.sources import Dialogue, RecordError, Turn, register_format
from fcenv.sources.parsing import MAX_TURN, call_of, json_field, read_data, tool_docs

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool",
          "function": "tool", "ipython": "tool"}


def _text(content: Any, field: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        if len(content) > MAX_TURN:
            raise RecordError(field, f"{len(content)} characters: too long to read")
        return content
    if isinstance(content, list):
        return "".join(part.get("text") or "" for part in content if isinstance(part, dict))
    raise RecordError(field, f"must be text, not {type(content).__name__}")


def _messages(record: dict[str, Any]) -> tuple[list[Any], list[str]]:
    if "messages" in record:
        messages = record["messages"]
        messages = read_data(messages, "messages") if isinstance(messages, str) else messages
        if not isinstance(messages, list):
            raise RecordError("messages", "must be a list of messages")
        return messages, [f"messages[{i}]" for i in range(len(messages))]
    prompt, completion = record.get("prompt"), record.get("completion")
    if not isinstance(prompt, list) or not isinstance(completion, list):
        raise RecordError("messages", "missing (or 'prompt' and 'completion' lists of messages)")
    return prompt + completion, [f"prompt[{i}]" for i in range(len(prompt))] + \
        [f"completion[{i}]" for i in range(len(completion))]


def _detect(record: dict[str, Any]) -> bool:
    messages = record.get("messages", record.get("prompt"))
    return isinstance(messages, list) and bool(messages) and isinstance(messages[0], dict) and "role" in messages[0]


@register_format("openai", detect=_detect)
def read(record: dict[str, Any]) -> Dialogue:
    docs = tool_docs(json_field(record, "tools"), "tools") if record.get("tools") not in (None, "") else []
    turns = []
    for message, where in zip(*_messages(record)):
        if not isinstance(message, dict):
            raise RecordError(where, "a message must be an object with a role")
        role = _ROLES.get(message.get("role"))
        if role is None:
            raise RecordError(f"{where}.role", f"unknown role {message.get('role')!r}")
        content = _text(message.get("content"), f"{where}.content")
        raw_calls = message.get("tool_calls") or ([{"function": message["function_call"]}]
                                                  if message.get("function_call") else [])
        if role != "assistant" or not raw_calls:
            turns.append(Turn(role, content, field=f"{where}.content"))
            continue
        if not isinstance(raw_calls, list):
            raise RecordError(f"{where}.tool_calls", "must be a list of calls")
        fields = [f"{where}.tool_calls[{i}]" for i in range(len(raw_calls))]
        calls = [call_of(c.get("function", c) if isinstance(c, dict) else c, f"{f}.function")
                 for c, f in zip(raw_calls, fields)]
        turns.append(Turn("assistant", content, calls, f"{where}.tool_calls", fields))
    return Dialogue(docs, turns)
