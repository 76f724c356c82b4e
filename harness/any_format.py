"""FC answers right in any format: the ceiling a format fix can reach.

``json_calls`` reads the calls a model wrote as JSON (in Markdown fences, or the whole text);
``as_tool_calls`` writes them as a tool-calling family writes calls (``<tool_call>`` blocks for
hermes); ``any_format_verdicts`` judges single-step answers again once rewritten. The BFCL card's
ceiling (``bench/format_ceiling.py``) and the held-out client's (``bench/heldout.py``) use them.
"""

from __future__ import annotations

import re

from fcenv.handlers.base import Call, DecodeError
from fcenv.handlers.json_calls import calls_from_json, load_json
from fcenv.tool_formats import get_tool_format

FENCE = re.compile(r"```[ \t]*[A-Za-z]*[ \t]*\n(.*?)```", re.DOTALL)


def json_calls(text: str) -> list[Call]:
    """The calls written as JSON in ``text``: in each Markdown fence, or in the whole text."""
    bodies = FENCE.findall(text) or [text]
    calls = []
    for body in bodies:
        try:
            calls += calls_from_json(load_json(body))
        except (DecodeError, RecursionError):
            continue
    return calls


def as_tool_calls(text: str, tool_format: str = "hermes") -> str:
    """``text`` with its JSON calls written as the ``tool_format`` family writes calls
    (``<tool_call>`` blocks for hermes); unchanged when it has none, or when it already holds
    calls in that format."""
    family = get_tool_format(tool_format)
    try:
        if family.calls(text):
            return text
    except DecodeError:
        pass
    calls = json_calls(text)
    return family.write(calls) if calls else text


def any_format_verdicts(make_env, tool_format: str, jobs: list[int], answers: list[str | None]) -> list[bool | None]:
    """The ceiling a format fix can reach (FC mode): each single-step answer judged again with
    its JSON calls (a ```` ```json ```` block, bare JSON) written in the family's format, as
    ``bench/format_ceiling.py`` does for the BFCL card; None for episodes of several steps."""
    env = make_env()
    verdicts: list[bool | None] = []
    for index, text in zip(jobs, answers):
        if text is None:
            verdicts.append(None)
            continue
        env.reset(options={"index": index})
        verdicts.append(bool(env.step(as_tool_calls(text, tool_format))[4]["valid"]))
    return verdicts
