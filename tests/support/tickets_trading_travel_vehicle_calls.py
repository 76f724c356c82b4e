"""Helpers for the group-b backend tests (TicketAPI, TradingBot, TravelAPI, VehicleControlAPI).

No tests here: loading BFCL's multi-turn entries and scenarios, routing ground-truth calls
the way BFCL does, and generating perturbed calls per class. Calls are {name, args,
kwargs} with literal values only, so the same calls can be sent to the oracle driver.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from fcenv.backends import FUNC_DOC_FILES
from tests.support.backend_differential import parse_call

GROUP_B = ("TicketAPI", "TradingBot", "TravelAPI", "VehicleControlAPI")
CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)


def load_docs(bfcl_dir: Path, class_name: str) -> list[dict]:
    path = Path(bfcl_dir) / "multi_turn_func_doc" / FUNC_DOC_FILES[class_name]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_entries(bfcl_dir: Path, category: str) -> list[dict]:
    """Questions of one multi-turn category with their ground truth joined in."""
    questions = [
        json.loads(line)
        for line in (Path(bfcl_dir) / f"BFCL_v4_{category}.json").read_text().splitlines()
        if line.strip()
    ]
    answers_path = Path(bfcl_dir) / "possible_answer" / f"BFCL_v4_{category}.json"
    answers = {
        a["id"]: a["ground_truth"] for a in map(json.loads, answers_path.read_text().splitlines())
    }
    return [{**q, "ground_truth": answers[q["id"]]} for q in questions]


def method_owners(bfcl_dir: Path, involved_classes: list[str]) -> dict[str, str]:
    """Method name -> class, the last involved class winning a clash (BFCL's routing)."""
    owners: dict[str, str] = {}
    for class_name in involved_classes:
        for doc in load_docs(bfcl_dir, class_name):
            owners[doc["name"]] = class_name
    return owners


def group_b_turns(bfcl_dir: Path, entry: dict) -> tuple[list[str], list[list[dict]]]:
    """The entry's group-b classes and, per turn, its ground-truth calls routed to them."""
    owners = method_owners(bfcl_dir, entry["involved_classes"])
    classes = [c for c in entry["involved_classes"] if c in GROUP_B]
    turns = []
    for turn in entry["ground_truth"]:
        calls = [parse_call(text) for text in turn]
        turns.append([call for call in calls if owners.get(call["name"]) in GROUP_B])
    return classes, turns


def scenarios(bfcl_dir: Path, class_name: str) -> list[dict]:
    """The distinct initial configs of one class across the four multi-turn categories."""
    seen: dict[str, dict] = {}
    for category in CATEGORIES:
        for entry in load_entries(bfcl_dir, category):
            if class_name in entry["initial_config"]:
                config = entry["initial_config"][class_name]
                seen.setdefault(json.dumps(config, sort_keys=True), config)
    return list(seen.values())


# The reference prints some sets, whose order follows string hashing and so differs
# between processes; these messages are compared with their items sorted.
_SET_ORDER_PATTERNS = [
    re.compile(r"(Invalid fields for update: )(.*?)(\"\}|'\}|$)"),
    re.compile(r"(Must be one of \{)(.*?)(\})"),
]


def normalize_result(text: str) -> str:
    for pattern in _SET_ORDER_PATTERNS:
        text = pattern.sub(
            lambda m: m.group(1) + ", ".join(sorted(m.group(2).split(", "))) + m.group(3), text
        )
    return text


# ---------------------------------------------------------------------------------------
# Perturbed calls

WEIRD_STRINGS = [
    "",
    " ",
    "ünïcødé ✓",
    "None",
    "\n",
    "x" * 300,
    "0",
    "-1",
    "1e3",
    "{symbol}",
    "{}",
    "'",
    "%s",
]
WEIRD_VALUES: list[Any] = [
    None,
    0,
    -1,
    1,
    2,
    5,
    10**12,
    -(10**12),
    0.5,
    -0.0,
    3.75,
    float("inf"),
    float("nan"),
    True,
    False,
    [],
    {},
    ["a"],
    {"k": 1},
    (1, 2),
    "",
    "ünïcødé",
]
_TYPE_SAMPLES: dict[str, list[Any]] = {
    "string": ["", "abc", "ünïcødé ✓", "x" * 50],
    "integer": [0, 1, -1, 5, 10**15, -7],
    "float": [0.0, 0.5, 1.0, 10.0, 99.99, -3.5, 1e9, 5, 150],
    "boolean": [True, False],
    "array": [[], ["a", "b"]],
    "dict": [{}, {"title": "t"}],
}


def _walk_values(value: Any, strings: set, numbers: set) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _walk_values(key, strings, numbers)
            _walk_values(item, strings, numbers)
    elif isinstance(value, list):
        for item in value:
            _walk_values(item, strings, numbers)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, (int, float)):
        numbers.add(value)
    elif isinstance(value, str) and len(value) < 200:
        strings.add(value)


class CallGenerator:
    """Random calls to one class's public methods, from its docs, a scenario and value pools.

    ``pools`` maps a parameter name to plausible values for it (ids, names, codes that the
    scenario or earlier results make meaningful); other parameters draw from the scenario's
    own strings and numbers, from type samples, or (at ``weird_rate``) from hostile values.
    """

    def __init__(
        self,
        docs: list[dict],
        scenario: dict,
        pools: dict[str, list],
        rng: random.Random,
        weird_rate: float = 0.12,
    ):
        self.docs = docs
        self.rng = rng
        self.pools = pools
        self.weird_rate = weird_rate
        strings: set = set()
        numbers: set = set()
        _walk_values(scenario, strings, numbers)
        self.strings = sorted(strings)
        self.numbers = sorted(numbers, key=repr)

    def value(self, name: str, schema: dict) -> Any:
        rng = self.rng
        if rng.random() < self.weird_rate:
            return rng.choice(WEIRD_VALUES + WEIRD_STRINGS)
        pool = self.pools.get(name)
        if pool and rng.random() < 0.8:
            return rng.choice(pool)
        kind = schema.get("type", "string")
        if kind == "string" and self.strings and rng.random() < 0.5:
            return rng.choice(self.strings)
        if kind in ("integer", "float") and self.numbers and rng.random() < 0.4:
            return rng.choice(self.numbers)
        if kind == "array" and rng.random() < 0.5:
            items = pool or self.strings or ["a"]
            return [rng.choice(items) for _ in range(rng.randint(0, 4))]
        return rng.choice(_TYPE_SAMPLES.get(kind, _TYPE_SAMPLES["string"]))

    def call(self, doc: dict | None = None) -> dict:
        rng = self.rng
        doc = doc or rng.choice(self.docs)
        params = doc["parameters"].get("properties", {})
        required = doc["parameters"].get("required", [])
        chosen = [p for p in params if p in required or rng.random() < 0.5]
        if required and rng.random() < 0.04:
            chosen.remove(rng.choice(required))  # a missing argument
        values = {p: self.value(p, params[p]) for p in chosen}
        args: list = []
        kwargs: dict = {}
        positional = rng.random() < 0.3
        for name in params:
            if name not in values:
                positional = False  # after a gap, only keywords keep their meaning
                continue
            if positional:
                args.append(values[name])
            else:
                kwargs[name] = values[name]
        roll = rng.random()
        if roll < 0.03:
            kwargs["unexpected"] = 1  # an extra keyword
        elif roll < 0.05 and not kwargs:
            args = args + [1] * (len(params) - len(args) + 1)  # one positional too many
        return {"name": doc["name"], "args": args, "kwargs": kwargs}
