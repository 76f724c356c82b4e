"""A user's tool backend that does, on the model's arguments, what tools do wrong: exits
(argparse inside a tool), raises ``BaseException`` subclasses of its own, returns values that
cannot be printed, holds state that ``!=`` cannot compare (numpy arrays) or whose comparison
raises. For tests/env/test_hostile_tools.py and the multi-turn fuzzers: every one of these must
be the model's failure (an error result, a failed verdict), never the env's exception.

``HostileToolsAPI.act(value)`` picks what to do from the value itself, so any argument a
fuzzer makes reaches one of the misbehaviours.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from fcenv.backends import register_backend

NAME = "HostileToolsAPI"


class ToolStop(BaseException):
    """An exception outside ``Exception``, as some libraries define."""


class Unprintable:
    def __str__(self):
        raise SystemExit("printing a tool's result exits")

    __repr__ = __str__


class Uncomparable:
    """State whose comparison raises and which cannot be pickled."""

    def __init__(self, value):
        self.value = value
        self.lock = (lambda: value)  # a lambda: pickle refuses it

    def __ne__(self, other):
        raise RuntimeError("cannot compare")

    __eq__ = __ne__
    __hash__ = object.__hash__


class Sly(str):
    """A string subclass whose own methods misbehave."""

    def __hash__(self):
        raise SystemExit("hashing a result exits")

    def startswith(self, *args):
        raise ToolStop("startswith")


def _doc(name, description, parameter, kind):
    return {"name": name, "description": description, "parameters": {
        "type": "dict", "required": [parameter],
        "properties": {parameter: {"type": kind, "description": f"The {parameter}."}}}}


DOCS = [
    _doc("parse", "Parse a command-line flag, such as '--level=3'.", "flag", "string"),
    _doc("record", "Add a reading to every sensor.", "value", "float"),
    _doc("act", "Do something with a value.", "value", "string"),
]

# act(value) misbehaves in one of these ways, chosen by the value's printed length.
MISBEHAVIOURS = ("exit", "stop", "unprintable", "sly", "uncomparable", "array_state", "fine", "keyerror")


@register_backend(NAME, docs=DOCS)
class HostileToolsAPI:
    def _load_scenario(self, scenario, long_context=False):
        self.readings = np.array(scenario.get("readings", [0.0, 0.0]), dtype=float)
        self.mood = scenario.get("mood", "calm")

    def parse(self, flag):
        parser = argparse.ArgumentParser(prog="parse", add_help=False)
        parser.add_argument("--level", type=int, required=True)
        return {"level": parser.parse_args([flag]).level}  # a bad flag: usage on stderr, SystemExit(2)

    def record(self, value):
        self.readings = self.readings + float(value)
        return {"readings": self.readings.tolist()}

    def act(self, value):
        how = MISBEHAVIOURS[len(repr(value)) % len(MISBEHAVIOURS)]
        if how == "exit":
            raise SystemExit(f"act cannot use {value!r}")
        if how == "stop":
            raise ToolStop(value)
        if how == "unprintable":
            return Unprintable()
        if how == "sly":
            return Sly(value)
        if how == "uncomparable":
            self.mood = Uncomparable(value)
            return "ok"
        if how == "array_state":
            self.readings = np.array([len(str(value))] * 3, dtype=float)
            return "ok"
        if how == "keyerror":
            return {}[value]
        return {"done": str(value)}


# Tasks on the hostile backend: the ground truth reaches the misbehaviours too.
ENTRIES = [
    ([["parse(flag='--level=3')", "record(value=2.5)"], ["act(value='abcde')"]], {"readings": [1.0, 2.0]}),
    ([["record(value=1.0)", "act(value='abc')"]], {}),
    ([["act(value='a')", "act(value='abcd')"], ["parse(flag='--level=x')"]], {"mood": "calm"}),
]


def write_tasks(folder: Path) -> Path:
    """A question file with its answers for the hostile backend."""
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    questions, answers = [], []
    for index, (truth, config) in enumerate(ENTRIES):
        questions.append({"id": f"hostile_{index}", "involved_classes": [NAME], "initial_config": {NAME: config},
                          "question": [[{"role": "user", "content": f"Step {turn} of the job."}] for turn in range(len(truth))]})
        answers.append({"id": f"hostile_{index}", "ground_truth": truth})
    path = folder / "hostile.json"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions))
    (folder / "possible_answer" / "hostile.json").write_text("".join(json.dumps(a) + "\n" for a in answers))
    return path
