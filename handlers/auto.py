"""A lenient decoder that finds the calls whatever format the model chose.

Rules, in order; the first that yields calls wins:

1. ``<tool_call>`` in the text: the ``tool_call`` decoder decides (its result or failure
   is final, since the model clearly chose that format).
2. The text (without a Markdown fence around it) is valid JSON: the ``json`` decoder
   decides, for the same reason.
3. BFCL's Python decoder on the whole text (``[f(a=1)]``, ``f(a=1)``, a plain ``` fence).
4. The first fenced code block anywhere in the text (```` ```python ````, ```` ```json ````,
   or no tag), decoded as JSON if it is JSON, else as Python: prose around the fence is ignored.
5. Python calls among lines of prose: for each line that starts like a call (``[`` or
   ``name(``), the text from that line to the end, then that line alone; this is tried for
   the first ``MAX_CANDIDATE_LINES`` such lines, so hostile text with many lines stays cheap.

If nothing works, the failure of rule 3 is raised (BFCL's own verdict on the text).
"""

from __future__ import annotations

import json
import re

from fcenv.handlers import register_handler
from fcenv.handlers.base import Call, DecodeError
from fcenv.handlers.json_calls import calls_from_json, strip_fence
from fcenv.handlers.python import decode as decode_python
from fcenv.handlers.tool_call import OPEN_TAG
from fcenv.handlers.tool_call import decode as decode_tool_calls

MAX_CANDIDATE_LINES = 8
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_CALL_START = re.compile(r"\s*(\[|[A-Za-z_][\w.]*\s*\()")


@register_handler("auto")
def decode(text: str) -> list[Call]:
    """Decode calls in any of the formats listed in the module docstring."""
    if not isinstance(text, str):
        raise DecodeError(f"expected text, got {type(text).__name__}")
    if OPEN_TAG in text:
        return decode_tool_calls(text)
    as_json = _json_or_none(strip_fence(text.strip()))
    if as_json is not None:
        return calls_from_json(as_json)
    try:
        return decode_python(text)
    except DecodeError as failure:
        first_failure = failure
    for candidate in _candidates(text):
        try:
            return candidate()
        except DecodeError:
            continue
    raise first_failure


def _candidates(text: str):
    fence = _FENCE.search(text)
    if fence is not None:
        body = fence.group(2).strip()
        yield lambda: _decode_block(body)
    lines = text.splitlines()
    tried = 0
    for index, line in enumerate(lines):
        if tried >= MAX_CANDIDATE_LINES:
            return
        if not _CALL_START.match(line):
            continue
        tried += 1
        if index > 0:  # from the first line on, that is the whole text: already tried
            rest = "\n".join(lines[index:])
            yield lambda rest=rest: decode_python(rest)
        yield lambda line=line: decode_python(line)


def _decode_block(body: str) -> list[Call]:
    as_json = _json_or_none(body)
    return calls_from_json(as_json) if as_json is not None else decode_python(body)


def _json_or_none(text: str) -> object | None:
    if not text or text[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError, MemoryError):
        return None
