"""APIGen-MT (``Salesforce/APIGen-MT-5k``): multi-turn agent trajectories on tau-bench's
airline and retail domains, in LLaMA-Factory's ShareGPT layout with tools.

A record: ``{"conversations": [{"from", "value"}, ...], "system": "<the domain policy>",
"tools": "[...]"}``. ``from`` is ``human``, ``gpt`` (the agent's text), ``function_call`` (a JSON
``{"name", "arguments"}``, or a list of them) or ``observation`` (the tool's result). ``tools``
is a JSON string (or list) of ``{"name", "description", "parameters"}`` JSON-Schema docs.
Consecutive ``function_call`` turns are one step's calls. The policy stays as the system prompt.
"""

from __future__ import annotations

from typing import Any

from fcenv.sources import Dialogue, RecordError, Turn, register_format
from fcenv.sources.parsing import call_of, conversation, json_field, read_data, speakers, tool_docs

_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "observation": "tool",
          "system": "system", "function_call": "call"}


@register_format("apigen_mt", detect=lambda record: bool(speakers(record) & {"function_call", "observation"}))
def read(record: dict[str, Any]) -> Dialogue:
    docs = tool_docs(json_field(record, "tools"), "tools")
    turns, previous = [], None
    if isinstance(record.get("system"), str) and record["system"].strip():
        turns.append(Turn("system", record["system"], field="system"))
    for index, turn in enumerate(conversation(record)):
        field = f"conversations[{index}].value"
        role = _ROLES.get(turn["from"])
        if role is None:
            raise RecordError(f"conversations[{index}].from", f"unknown speaker {turn['from']!r}")
        if role != "call":
            turns.append(Turn(role, turn["value"].strip(), field=field))
        else:
            value = read_data(turn["value"], field)
            values = value if isinstance(value, list) else [value]
            fields = [field if len(values) == 1 else f"{field}[{i}]" for i in range(len(values))]
            calls = [call_of(v, where) for v, where in zip(values, fields)]
            if previous == "call":  # the same step's next call
                turns[-1].calls += calls
                turns[-1].call_fields += fields
            else:
                turns.append(Turn("assistant", "", calls, field, fields))
        previous = role
    return Dialogue(docs, turns)
