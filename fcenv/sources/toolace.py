"""ToolACE (``Team-ACE/ToolACE``).

A record: ``{"system": "...Here is a list of functions in JSON format that you can invoke:\\n
[{...}, ...]. ...", "conversations": [{"from": "user" | "assistant" | "tool", "value": ...}]}``.
The functions are a JSON array in the system prompt (``parameters`` with ``"type": "dict"``).
An assistant turn that calls writes the calls in Python syntax, ``[Func(a="x", b=1), Other()]``,
where a function name may hold spaces (``Get Manager Placeholder Image``); other assistant
turns are text. A tool turn holds the results. The system prompt is replaced by the env's.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from fcenv.sources import Call, Dialogue, RecordError, Turn, register_format
from fcenv.sources.parsing import MAX_TEXT, conversation, first_json_array, speakers, text_field, tool_docs

_ROLES = {"user": "user", "assistant": "assistant", "tool": "tool", "system": "system"}
# JSON's words, which ToolACE's calls sometimes use for Python's
_WORDS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_CALLS = re.compile(r"^\s*\[.*\)\s*\]\s*$", re.DOTALL)


def split_top(text: str, separator: str = ",") -> list[str]:
    """``text`` cut at ``separator`` outside brackets and quotes."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _literal(node: ast.AST, field: str) -> Any:
    if isinstance(node, ast.Name) and node.id in _WORDS:
        return _WORDS[node.id]
    if isinstance(node, ast.List):
        return [_literal(n, field) for n in node.elts]
    if isinstance(node, ast.Tuple):
        return [_literal(n, field) for n in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_literal(k, field): _literal(v, field) for k, v in zip(node.keys, node.values)}
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise RecordError(field, f"the value {ast.unparse(node)[:80]!r} is not a literal") from None


def calls_in(text: str, field: str) -> list[Call]:
    """``[Func(a="x"), Other Name(b=1)]`` as calls, names as written."""
    if len(text) > MAX_TEXT:
        raise RecordError(field, "too long to read")
    calls = []
    for part in split_top(text.strip()[1:-1]):
        name, paren, rest = part.partition("(")
        if not paren or not rest.rstrip().endswith(")") or not name.strip():
            raise RecordError(field, f"cannot read the call {part[:80]!r}")
        try:
            node = ast.parse(f"f({rest.rstrip()[:-1]})", mode="eval").body
        except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            raise RecordError(field, f"cannot read the call {part[:80]!r}: {exc}") from None
        if node.args or any(k.arg is None for k in node.keywords):
            raise RecordError(field, f"the call {part[:80]!r} passes arguments by position; only name=value is read")
        calls.append(Call(name.strip(), {k.arg: _literal(k.value, field) for k in node.keywords}))
    return calls


def _detect(record: dict[str, Any]) -> bool:
    who = speakers(record)
    return "system" in record and bool(who) and who <= set(_ROLES)


@register_format("toolace", detect=_detect)
def read(record: dict[str, Any]) -> Dialogue:
    system = text_field(record, "system")
    listed = first_json_array(system, "system")
    docs = tool_docs(listed, "system") if listed is not None else []
    turns = []
    for index, turn in enumerate(conversation(record)):
        field = f"conversations[{index}].value"
        role = _ROLES.get(turn["from"])
        if role is None:
            raise RecordError(f"conversations[{index}].from", f"unknown speaker {turn['from']!r}")
        text = turn["value"]
        if role == "assistant" and _CALLS.match(text):
            calls = calls_in(text, field)
            turns.append(Turn("assistant", "", calls, field, [field] * len(calls)))
        else:
            turns.append(Turn(role, text.strip(), field=field))
    return Dialogue(docs, turns, "system")
