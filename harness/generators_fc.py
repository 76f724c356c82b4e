"""Model answers in the native tool-call formats (BFCL's FC mode), right and wrong.

Single-turn: for every entry, the calls of ``harness.generators`` (the possible answer and its
mutations: wrong names, values, types, counts) are written the way each family writes them
(``ToolFormat.write``), and then the format itself is broken in the ways such models break
it: prose around, tags missing or without their newlines, JSON that Python cannot read,
arguments as a string or under another key, blocks that are not calls, reasoning before the
answer. Multi-turn: the perturbed trajectories of ``harness.trajectories``, each step's calls
rewritten in the family's format, with some steps broken the same ways.
"""

from __future__ import annotations

import json
import random

from fcenv.tool_formats import get_tool_format
from fcenv.handlers import Call, DecodeError, decode
from harness.generators import (
    AST_CATEGORIES,
    RELEVANCE_CATEGORIES,
    Sample,
    answer_calls,
    load_category,
    mutate,
)

FAMILIES = ("hermes", "llama_json", "mistral")
_PROSE = ["I cannot help with that.", "None of the functions fit this request.", "", "Done.",
          "The answer is 42.", "Sure! Let me know if you need anything else."]


def _dumps(value) -> str:
    return json.dumps(value, default=repr)


def write(family: str, calls: list[tuple[str, dict]]) -> str:
    """The family's canonical answer; values without a JSON form are written as their repr."""
    objects = [Call(name, json.loads(_dumps(args))) for name, args in calls]
    return get_tool_format(family).write(objects)


def broken(family: str, calls: list[tuple[str, dict]], rng: random.Random) -> tuple[str, str]:
    """(label, text): the calls written with one of the family's typical format faults."""
    objects = [{"name": n, "arguments": json.loads(_dumps(a))} for n, a in calls]
    first = objects[0] if objects else {"name": "f", "arguments": {}}
    if family == "hermes":
        blocks = [f"<tool_call>\n{json.dumps(o)}\n</tool_call>" for o in objects]
        faults = {
            "prose_around": lambda: "Let me call the tools.\n" + "\n".join(blocks) + "\nDone.",
            "no_newlines": lambda: "".join(f"<tool_call>{json.dumps(o)}</tool_call>" for o in objects),
            "unclosed": lambda: "\n".join(blocks)[: -len("\n</tool_call>")],
            "bad_json_block": lambda: "\n".join(blocks + ["<tool_call>\n{\"name\": \"x\", \n</tool_call>"]),
            "string_arguments": lambda: "\n".join(
                f"<tool_call>\n{json.dumps({'name': o['name'], 'arguments': json.dumps(o['arguments'])})}\n</tool_call>"
                for o in objects),
            "parameters_key": lambda: f"<tool_call>\n{json.dumps({'name': first['name'], 'parameters': first['arguments']})}\n</tool_call>",
            "not_an_object": lambda: "\n".join(blocks + ["<tool_call>\n[1, 2]\n</tool_call>"]),
            "thinking": lambda: "<think>\nMaybe <tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>\n</think>\n\n"
                                + "\n".join(blocks),
            "python_syntax": lambda: "[" + ", ".join(f"{o['name']}(x=1)" for o in objects) + "]",
            "no_name": lambda: f"<tool_call>\n{json.dumps({'arguments': first['arguments']})}\n</tool_call>",
        }
    elif family == "llama_json":
        faults = {
            "python_tag": lambda: "<|python_tag|>" + write(family, calls),
            "json_literals": lambda: json.dumps({"name": first["name"], "parameters": {**first["arguments"], "flag": True}}),
            "list": lambda: json.dumps([{"name": o["name"], "parameters": o["arguments"]} for o in objects]),
            "comma_separated": lambda: ", ".join(repr({"name": o["name"], "parameters": o["arguments"]}) for o in objects),
            "trailing_semicolon": lambda: write(family, calls) + ";",
            "arguments_key": lambda: json.dumps({"name": first["name"], "arguments": first["arguments"]}),
            "string_parameters": lambda: repr({"name": first["name"], "parameters": json.dumps(first["arguments"])}),
            "prose_around": lambda: "Here you go: " + write(family, calls),
            "semicolon_in_value": lambda: json.dumps({"name": first["name"], "parameters": {"q": "a;b"}}),
            "leading_newline_indent": lambda: "\n  " + write(family, calls),
        }
    else:
        body = json.dumps(objects)
        faults = {
            "no_tag": lambda: body,
            "tag_twice": lambda: "[TOOL_CALLS][TOOL_CALLS] " + body,
            "object_not_list": lambda: "[TOOL_CALLS] " + json.dumps(first),
            "string_arguments": lambda: "[TOOL_CALLS] " + json.dumps(
                [{"name": o["name"], "arguments": json.dumps(o["arguments"])} for o in objects]),
            "no_arguments": lambda: "[TOOL_CALLS] " + json.dumps([{"name": o["name"]} for o in objects]),
            "prose_after": lambda: "[TOOL_CALLS] " + body + " Let me know!",
            "list_arguments": lambda: "[TOOL_CALLS] " + json.dumps([{"name": first["name"], "arguments": [1]}]),
            "with_ids": lambda: "[TOOL_CALLS] " + json.dumps([{**o, "id": "abcdefghi"} for o in objects]),
            "python_syntax": lambda: "[" + ", ".join(f"{o['name']}(x=1)" for o in objects) + "]",
            "number": lambda: "[TOOL_CALLS] 5",
        }
    label = rng.choice(sorted(faults))
    return label, faults[label]()


def single_turn_samples(family: str, bfcl_dir, seed: int, per_entry: int) -> list[Sample]:
    rng = random.Random(f"{family}-{seed}")
    samples = []
    for category in AST_CATEGORIES + RELEVANCE_CATEGORIES:
        for task in load_category(bfcl_dir, category):
            for k in range(per_entry):
                if task.kind in ("relevance", "irrelevance"):
                    if rng.random() < 0.5 and task.functions:
                        doc = rng.choice(task.functions)
                        calls = [(doc["name"], {p: rng.choice([1, "x", 2.5, True])
                                                for p in list(doc["parameters"].get("properties", {}))[:2]})]
                        label, text = ("call", write(family, calls)) if rng.random() < 0.6 else broken(family, calls, rng)
                    else:
                        label, text = "prose", rng.choice(_PROSE)
                    samples.append(Sample(task, text, label))
                    continue
                calls = answer_calls(task, rng, omit=rng.random() < 0.5)
                roll = rng.random()
                if k == 0 or roll < 0.3:
                    samples.append(Sample(task, write(family, calls), "correct"))
                elif roll < 0.65:
                    label, mutated = mutate(task, calls, rng)
                    samples.append(Sample(task, write(family, mutated), label))
                else:
                    label, text = broken(family, calls, rng)
                    samples.append(Sample(task, text, f"format/{label}"))
    return samples


def fc_turns(family: str, turns: list[list[str]], rng: random.Random, fault_rate: float = 0.15) -> list[list[str]]:
    """Prompting-format step texts rewritten in the family's format; every turn ends with a
    step that holds no call."""
    out = []
    for steps in turns:
        written = []
        for text in steps:
            try:
                calls = [(c.name, c.arguments) for c in decode(text, "python")]
            except DecodeError:
                calls = []
            if not calls:
                written.append(text)
            elif rng.random() < fault_rate:
                written.append(broken(family, calls, rng)[1])
            else:
                written.append(write(family, calls))
        if not written or _has_calls(family, written[-1]):
            written.append("Done.")
        out.append(written)
    return out


def _has_calls(family: str, text: str) -> bool:
    try:
        return bool(get_tool_format(family).step_calls(text))
    except DecodeError:
        return False
