"""Generators of perturbed backend calls for the group-a differential tests (no tests here).

Standard library only, so that the same generator can drive probes run in the oracle venv.
Arguments are drawn from the scenario's own values (names, ids, words of contents) mixed
with hostile ones (wrong types, missing and extra arguments, empty, huge, negative, unicode).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

HOSTILE_STRINGS = [
    "",
    " ",
    "..",
    ".",
    "/",
    "a/b",
    "../..",
    "ünïcødé ✓",
    "\n",
    "*",
    "\t tab",
    "x" * 300,
    "None",
]
HOSTILE_VALUES: list[Any] = [
    None,
    0,
    -1,
    1,
    2,
    10**12,
    -(10**12),
    3.5,
    -0.0,
    float("inf"),
    True,
    False,
    [],
    {},
    ["a"],
    {"k": 1},
    (1, 2),
]


# Values worth trying that a scenario's own strings rarely contain.
EXTRA_STRINGS: dict[str, list[str]] = {
    "GorillaFileSystem": [
        "l",
        "w",
        "c",
        ".",
        "..",
        "./",
        "../",
        "/",
        "//",
        "~",
        "-",
        "new.txt",
        "new_dir",
        "a b",
    ],
    "MathAPI": [
        "m",
        "cm",
        "km",
        "mm",
        "um",
        "nm",
        "in",
        "ft",
        "yd",
        "miles",
        "lb",
        "kg",
        "celsius",
        "fahrenheit",
        "1e3",
        "nan",
    ],
    "MessageAPI": [
        "USR001",
        "USR002",
        "USR003",
        "USR004",
        "USR005",
        "USR006",
        "Alice",
        "Bob",
        "hello",
    ],
    "TwitterAPI": ["#tag", "@user", "john", "john123", "alice", "bob", "hello"],
}


def load_docs(bfcl_dir: Path, doc_file: str) -> list[dict]:
    lines = (Path(bfcl_dir) / "multi_turn_func_doc" / doc_file).read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def scenario_values(scenario: Any) -> tuple[list[str], list[int]]:
    """Strings (keys, values and the words of values) and ints found anywhere in a scenario."""
    strings: set[str] = set()
    ints: set[int] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)
        elif isinstance(value, bool):
            return
        elif isinstance(value, int):
            ints.add(value)
        elif isinstance(value, str):
            if len(strings) < 2000:
                strings.add(value[:200])
                for word in value.split()[:50]:
                    strings.add(word)
            if value.isdigit() and len(value) < 10:
                ints.add(int(value))

    walk(scenario)
    return sorted(strings), sorted(ints)


_PARAMETERS = {
    "power": ("base", "exponent"),
    "round_number": ("number", "decimal_places"),
    "logarithm": ("value", "base", "precision"),
    "square_root": ("number", "precision"),
}


def _argument(call: dict[str, Any], name: str) -> Any:
    position = _PARAMETERS[call["name"]].index(name)
    if position < len(call["args"]):
        return call["args"][position]
    return call["kwargs"].get(name)


def _big_int(value: Any, limit: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > limit


def reference_would_stall(call: dict[str, Any]) -> bool:
    """Calls on which BFCL's MathAPI computes for minutes or more (ours answers at once)."""
    name = call["name"]
    if name == "power":
        base, exponent = _argument(call, "base"), _argument(call, "exponent")
        return _big_int(exponent, 10_000) and isinstance(base, int) and abs(base) > 1
    if name == "round_number":
        places = _argument(call, "decimal_places")
        return isinstance(_argument(call, "number"), int) and _big_int(places, 10_000)
    if name == "logarithm":
        # Past 10,000 digits BFCL fails fast or computes for hours depending on the value
        # (log(5) fails, log(2) stalls), so such calls are left out of the comparison.
        precision = _argument(call, "precision")
        return isinstance(precision, (int, float)) and abs(precision) > 10_000
    if name == "square_root":
        precision = _argument(call, "precision")
        return isinstance(precision, (int, float)) and 10_000 < abs(precision) < 10**11
    return False


class CallGenerator:
    """Random calls to one class's methods, as {name, args, kwargs} with literal values."""

    def __init__(
        self,
        docs: list[dict],
        scenario: dict,
        rng: random.Random,
        extra_strings: list[str] = (),
        hostile_rate: float = 0.15,
    ):
        self.docs = docs
        self.rng = rng
        strings, ints = scenario_values(scenario)
        self.strings = strings + list(extra_strings)
        self.ints = ints + [0, 1, 2, 3, 5, 10, 20, 100]
        self.hostile_rate = hostile_rate
        self.created: list[str] = []

    def remember(self, text: str) -> None:
        """A name the sequence itself created, to be reused by later calls."""
        self.created.append(text)

    def value_for(self, schema: dict) -> Any:
        rng = self.rng
        if rng.random() < self.hostile_rate:
            return rng.choice(HOSTILE_VALUES + HOSTILE_STRINGS)
        kind = schema.get("type")
        if kind == "string":
            if "enum" in schema and rng.random() < 0.7:
                return rng.choice(schema["enum"])
            pool = self.strings + self.created
            if not pool or rng.random() < 0.08:
                return rng.choice(HOSTILE_STRINGS)
            if self.created and rng.random() < 0.25:
                return rng.choice(self.created)
            return rng.choice(pool)
        if kind == "integer":
            return rng.choice(self.ints) if rng.random() < 0.8 else rng.randint(-5, 60)
        if kind in ("float", "number"):
            choice = rng.random()
            if choice < 0.4:
                return rng.choice(self.ints)
            if choice < 0.8:
                return round(rng.uniform(-1000, 1000), rng.choice([0, 1, 2, 3, 6]))
            return rng.choice([0.0, 1e-9, 1e15, -2.5, 0.1, 7])
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "array":
            items = schema.get("items", {"type": "string"})
            return [self.value_for(items) for _ in range(rng.choice([0, 1, 1, 2, 3, 5]))]
        if kind == "dict":
            return {}
        return rng.choice(HOSTILE_VALUES)

    def call(self, doc: dict | None = None) -> dict[str, Any]:
        for _ in range(100):
            call = self._draw(doc)
            if not reference_would_stall(call):
                break
        # Names a call creates (files, contacts, ...) are worth reusing in later calls.
        for value in list(call["args"]) + list(call["kwargs"].values()):
            if isinstance(value, str) and 0 < len(value) < 60 and self.rng.random() < 0.5:
                self.remember(value)
        return call

    def _draw(self, doc: dict | None) -> dict[str, Any]:
        rng = self.rng
        doc = doc or rng.choice(self.docs)
        props: dict = doc["parameters"].get("properties", {})
        required = list(doc["parameters"].get("required", []))
        kwargs: dict[str, Any] = {}
        for name, schema in props.items():
            if name in required or rng.random() < 0.5:
                kwargs[name] = self.value_for(schema)
        shape = rng.random()
        if shape < 0.04 and kwargs:
            kwargs.pop(rng.choice(list(kwargs)))  # a missing argument
        elif shape < 0.07:
            kwargs[rng.choice(["extra", "file", "self_", "verbose"])] = 1  # an unknown argument
        args: list[Any] = []
        if shape > 0.8:
            # positional in declared order, as far as a prefix of the params is present
            for name in props:
                if name not in kwargs:
                    break
                args.append(kwargs.pop(name))
            if shape > 0.985:
                args.append("surplus")  # one positional too many
        return {"name": doc["name"], "args": args, "kwargs": kwargs}
