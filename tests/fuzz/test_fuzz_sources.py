"""Fuzzing the forms a source can come in: the same records as JSON Lines, a JSON array, a
Parquet file and a ``save_to_disk`` folder.

Records are drawn in the OpenAI format with nested tools: parameters that are objects, lists
of objects, lists of lists, numbers that are sometimes whole; calls that leave out optional
keys at any depth (or give them as null), records that offer different tools. Arrow, under
Parquet and ``datasets``, gives every object of a column the same keys and every number of a
column the same type, which is where the forms can part.

Properties, on every drawn set of records:

- the four forms give the same tasks (ids, questions, docs, possible answers);
- no record is left out, and each record's own call, as its JSON Lines file wrote it, passes on
  the task the Parquet form made of it.
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import fcenv
from fcenv.sources import resolve
from harness.strategies import fuzz_settings
from tests.support.source_forms import task_contents, write_every_form

pytest.importorskip("datasets")

PARAMETERS = ["city", "count", "items", "options", "tip", "when", "tags", "flag"]
MEMBERS = ["name", "qty", "note", "size"]
TOOLS = ["order", "lookup"]
LEAVES = ["integer", "number", "string", "boolean"]
TEXT = st.text("abcXYZ019 é-_.,", max_size=8)


def schema(depth: int) -> st.SearchStrategy[dict]:
    """A parameter's JSON Schema: a leaf, or (above depth 0) an object or an array."""
    leaf = st.sampled_from(LEAVES).map(lambda kind: {"type": kind})
    if depth == 0:
        return described(leaf)
    members = st.dictionaries(st.sampled_from(MEMBERS), schema(depth - 1), min_size=1, max_size=3)
    # The first member is required, so that no object is empty in every record: Parquet cannot
    # store an object column without keys, whatever the reader does.
    objects = members.map(lambda props: {"type": "object", "properties": props, "required": [next(iter(props))]})
    arrays = schema(depth - 1).map(lambda items: {"type": "array", "items": items})
    return described(leaf | objects | arrays)


def described(schemas: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    """Some schemas with a description, so the schemas of one column differ in their keys."""
    return st.builds(lambda s, text: {**s, "description": text} if text else s, schemas, st.none() | TEXT)


@st.composite
def value(draw, spec: dict):
    """A value of the schema: optional object members left out, or now and then given as null."""
    kind = spec["type"]
    if kind == "integer":
        return draw(st.integers(-1000, 1000))
    if kind == "number":
        return draw(st.integers(-1000, 1000) | st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3)))
    if kind == "string":
        return draw(TEXT)
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "array":
        return draw(st.lists(value(spec["items"]), max_size=3))
    return draw(members(spec))


@st.composite
def members(draw, spec: dict) -> dict:
    given_members = {}
    for name, inner in spec["properties"].items():
        how = "given" if name in spec.get("required", []) else draw(st.sampled_from(["given", "left out", "null"]))
        if how != "left out":
            given_members[name] = draw(value(inner)) if how == "given" else None
    return given_members


@st.composite
def records(draw) -> list[dict]:
    """One to four records over the same parameters (one schema per name, as Arrow needs), each
    offering some of the tools and calling one or two of them."""
    schemas = {name: draw(schema(2)) for name in draw(st.lists(st.sampled_from(PARAMETERS), min_size=1,
                                                               max_size=5, unique=True))}
    tools = {}
    for tool in TOOLS:
        names = draw(st.lists(st.sampled_from(sorted(schemas)), min_size=1, max_size=3, unique=True))
        tools[tool] = {"name": tool, "description": f"The {tool} tool.", "parameters": {
            "type": "object", "properties": {n: schemas[n] for n in names}, "required": names[:1]}}
    drawn = []
    for _ in range(draw(st.integers(1, 4))):
        offered = draw(st.lists(st.sampled_from(TOOLS), min_size=1, max_size=2, unique=True))
        called = draw(st.lists(st.sampled_from(offered), min_size=1, max_size=2))
        calls = [{"type": "function", "function": {"name": name, "arguments": draw(members(tools[name]["parameters"]))}}
                 for name in called]
        drawn.append({"messages": [{"role": "user", "content": draw(TEXT) or "Please."},
                                   {"role": "assistant", "content": None, "tool_calls": calls}],
                      "tools": [{"type": "function", "function": tools[name]} for name in offered]})
    return drawn


def as_called(value):
    """A value as a model copying the source writes it: a null member is a member not given,
    and the whole numbers of a list of numbers are written as its first item is (BFCL types a
    list's items by its first: after 1.5, a 2 must be 2.0)."""
    if isinstance(value, dict):
        return {k: as_called(v) for k, v in value.items() if v is not None}
    if not isinstance(value, list):
        return value
    items = [as_called(v) for v in value]
    if items and all(type(v) in (int, float) for v in items) and not float(items[0]).is_integer():
        return [float(v) for v in items]
    return items


def own_answer(record: dict) -> str:
    """The record's calls in BFCL's prompting format."""
    calls = []
    for call in record["messages"][1]["tool_calls"]:
        arguments = as_called(call["function"]["arguments"])
        calls.append(f"{call['function']['name']}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})")
    return f"[{', '.join(calls)}]"


def test_every_file_form_gives_the_same_tasks(tmp_path_factory, monkeypatch):
    monkeypatch.setattr(resolve, "CACHE_DIR", tmp_path_factory.mktemp("cache"))

    @fuzz_settings(100)
    @given(records())
    def run(drawn):
        note(drawn)
        forms = write_every_form(drawn, tmp_path_factory.mktemp("forms"))
        expected = task_contents(forms[0])
        assert len(expected) == len(drawn)  # no record left out
        for path in forms[1:]:
            assert task_contents(path) == expected, path.name
        env = gym.make(fcenv.ENV_ID, dataset_path=str(forms[2]), reward="bfcl")
        for record, task in zip(drawn, env.unwrapped.tasks):
            env.reset(options={"id": task.id})
            _, reward, _, _, info = env.step(own_answer(record))
            assert info["valid"] and reward == 1.0, (task.id, own_answer(record), task.ground_truth, info)

    run()
