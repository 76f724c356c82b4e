"""Run in .verl-venv by tests/doors/test_verl.py: fcenv.verl's tool given calls whose argument
names and values carry call syntax, as a model can write them in a tool call's JSON. Prints
one JSON report: per case, the tool's responses and the episode's chat afterwards."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TASK = "multi_turn_tiny_150"  # add, subtract, multiply: "Add 2 and 30, then subtract 12 from the result."
CASES = {
    # As text: add(a=2, b=30), multiply(a=7, b=6); multiply's 42 would be in the reply.
    "argument name": ("add", {"a": 2, "b=30), multiply(a=7, b": 6}),
    "value as a nested call": ("add", {"a": 2, "b": {"multiply": {"a": 7, "b": 6}}}),
    "plain call": ("add", {"a": 2, "b": 30}),
}


async def report() -> dict:
    from verl.tools.schemas import OpenAIFunctionToolSchema

    from fcenv.verl import FunctionCallingTool, tool_schemas

    schemas = {s["function"]["name"]: s for s in tool_schemas("multi_turn_train")}
    out = {}
    for mode, options in (("prompting", {}), ("hermes", {"tool_format": "hermes"})):
        for case, (name, arguments) in CASES.items():
            tool = FunctionCallingTool({"type": "native", "dataset_path": "multi_turn_train", "reward": "shaped",
                                        **options}, OpenAIFunctionToolSchema.model_validate(schemas[name]))
            instance, _ = await tool.create(create_kwargs={"task_id": TASK})
            response, _, metrics = await tool.execute(instance, arguments)
            _, episode = tool._episode(instance)
            out[f"{mode}: {case}"] = {"response": response.text, "metrics": metrics,
                                      "tool_messages": [m for m in episode.messages if m.get("role") == "tool"]}
            await tool.calc_reward(instance)
            await tool.release(instance)
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(report()), default=str))
