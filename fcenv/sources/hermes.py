"""NousResearch's Hermes function-calling sets (``NousResearch/hermes-function-calling-v1``).

A record: ``{"id", "conversations": [{"from", "value"}, ...], "category", "subcategory", "task"}``
(ShareGPT). ``from`` is ``system``, ``human``, ``gpt`` or ``tool``. The system turn lists the
tools between ``<tools>`` and ``</tools>`` (a list of ``{"type": "function", "function": {...}}``,
JSON or a Python literal); a ``gpt`` turn calls in ``<tool_call>{"name", "arguments"}</tool_call>``
blocks (JSON or a Python literal, as in ``{'arguments': {...}, 'name': ...}``); a ``tool`` turn
answers in ``<tool_response>...</tool_response>``. Copies that carry the tools in a ``tools``
field are read too. The system turn that lists the tools is replaced by the env's own prompt.
"""

from __future__ import annotations

import re
from typing import Any

from fcenv.sources import Dialogue, RecordError, Turn, register_format
from fcenv.sources.parsing import call_of, conversation, json_field, read_data, speakers, tool_docs

_TOOLS = re.compile(r"<tools>(.*?)</tools>", re.DOTALL)
_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_RESPONSE = re.compile(r"<tool_response>(.*?)</tool_response>", re.DOTALL)
_ROLES = {"system": "system", "human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
          "tool": "tool"}


def tools_in(text: str, field: str) -> list[dict[str, Any]] | None:
    """The tools a system prompt lists between ``<tools>`` tags (None when it lists none). The
    prompt names the tags before it uses them ("within <tools></tools> XML tags"): the list is
    the first pair with something inside."""
    bodies = [body.strip() for body in _TOOLS.findall(text)]
    if not bodies:
        return None
    body = next((b for b in bodies if b), "")
    if not body:
        return []
    try:
        value = read_data(body, field)
    except RecordError:  # some prompts list one tool object per line
        value = read_data("[" + ",".join(line for line in body.splitlines() if line.strip()) + "]", field)
    return tool_docs(value, f"{field} <tools>")


def assistant_turn(text: str, field: str) -> Turn:
    if text.count("<tool_call>") != len(_CALL.findall(text)):
        raise RecordError(field, "a <tool_call> block is not closed")
    fields = [f"{field} <tool_call> {i + 1}" for i in range(len(_CALL.findall(text)))]
    calls = [call_of(read_data(body.strip(), where), where) for body, where in zip(_CALL.findall(text), fields)]
    return Turn("assistant", _CALL.sub("", text).strip(), calls, field, fields)


def _detect(record: dict[str, Any]) -> bool:
    who = speakers(record)
    return bool(who & {"human", "gpt"}) and not who & {"function_call", "observation"}


@register_format("hermes", detect=_detect)
def read(record: dict[str, Any]) -> Dialogue:
    turns, docs, tools_field = [], None, "tools"
    if record.get("tools") not in (None, "", []):
        docs = tool_docs(json_field(record, "tools"), "tools")
    for index, turn in enumerate(conversation(record)):
        field = f"conversations[{index}].value"
        role = _ROLES.get(turn["from"])
        if role is None:
            raise RecordError(f"conversations[{index}].from", f"unknown speaker {turn['from']!r}")
        text = turn["value"]
        if role == "system":
            listed = tools_in(text, field)
            if listed is not None:
                docs, tools_field = (listed if docs is None else docs), field
                continue  # its instructions give Hermes's format; the env gives the task's own
            turns.append(Turn("system", text, field=field))
        elif role == "assistant":
            turns.append(assistant_turn(text, field))
        elif role == "tool":
            responses = _RESPONSE.findall(text)
            turns.append(Turn("tool", "\n".join(r.strip() for r in responses) if responses else text.strip(),
                              field=field))
        else:
            turns.append(Turn("user", text, field=field))
    return Dialogue(docs or [], turns, tools_field)
