"""A call handed over as parts (verl's tool API: a name and a dict of arguments) runs as
exactly that one call, or not at all: hostile argument names and values, fuzzed, never make
the text the env decodes hold another call, and never change a value on the way.

Each example is stepped on a real multi-turn episode (the bundled calculator tasks) in BFCL's
prompting syntax and in every native tool format; the calls the env ran are read back from
the chat it records.
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fcenv.doors.calls import CallRefused, written_call
from fcenv.doors.core import Episode, make_env
from fcenv.multi_turn.executor import call_text
from fcenv.tool_formats import get_tool_format
from harness.strategies import fuzz_settings

TASK = "multi_turn_tiny_150"  # add, subtract, multiply; its truth: add(a=2, b=30), subtract(a=32, b=12)
FORMATS = [None, "hermes", "llama_json", "mistral"]
# What a hostile name or value is made of: call syntax, quotes, the formats' own markers.
PIECES = ["a", "b", "=", "1", ")", "(", ", ", "multiply(a=7, b=6)", "]", "[", "'", '"', "\\", "{", "}", ":",
          "<tool_call>", "</tool_call>", "[TOOL_CALLS]", "; ", "\n", "**", "#", "é", " ", "\x00", "None", "lambda"]
hostile_text = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)
values = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
                      | hostile_text, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
                      max_leaves=6)
arguments = st.dictionaries(st.sampled_from(["a", "b"]) | hostile_text, values, max_size=3)


def ran(episode: Episode, text: str, tool_format: str | None) -> list[tuple[str, object]]:
    """The calls the env ran for one step: (name, arguments) from the chat it records."""
    step = episode.step(text)
    assistant = episode.messages[-len(step.messages) - 1] if step.messages else episode.messages[-1]
    if tool_format is None:
        return [(m["name"], None) for m in step.messages if m.get("role") == "tool"]
    return [(c["function"]["name"], c["function"]["arguments"]) for c in assistant.get("tool_calls") or []]


@pytest.fixture(scope="module")
def envs():
    return {fmt: make_env("multi_turn_train", reward="shaped", **({"tool_format": fmt} if fmt else {})) for fmt in FORMATS}


def test_an_argument_name_with_call_syntax_is_refused():
    hostile = {"a": 2, "b=30), multiply(a=7, b": 6}  # as text: add(a=2, b=30), multiply(a=7, b=6)
    with pytest.raises(CallRefused, match=r"argument name 'b=30\), multiply\(a=7, b' of 'add' is not an identifier"):
        written_call("add", hostile)
    with pytest.raises(CallRefused, match=r"function name 'add\(a=1\), multiply' is not an identifier"):
        written_call("add(a=1), multiply", {"a": 2})


def test_a_value_a_format_would_change_is_refused():
    with pytest.raises(CallRefused, match="reads it back unchanged"):
        written_call("add", {"a": "[TOOL_CALLS] x"}, tool_format=get_tool_format("mistral"))


def test_the_source_form_of_any_call_is_one_call():
    """Tool messages are named by a call's source form: a name from a native format's JSON
    cannot make it read as two calls."""
    for name, arguments in (("add", {"a": 1, "b=2), multiply(a": 3}), ("add(a=1), multiply", {"a": 2})):
        tree = ast.parse(call_text(name, arguments), mode="eval").body
        assert isinstance(tree, ast.Call), call_text(name, arguments)
        assert not any(isinstance(node, ast.Call) for node in ast.walk(tree) if node is not tree)


@pytest.mark.parametrize("tool_format", FORMATS)
@fuzz_settings(400)
@given(name=st.sampled_from(["add", "multiply"]) | hostile_text, args=arguments)
def test_exactly_the_call_made_runs_or_none(envs, tool_format, name, args):
    try:
        text = written_call(name, args, tool_format=None if tool_format is None else get_tool_format(tool_format))
    except CallRefused as exc:
        assert "the call was not run" in str(exc)
        return
    episode = Episode(envs[tool_format], task_id=TASK)
    expected = (call_text(name, args), None) if tool_format is None else (name, args)
    got = ran(episode, text, tool_format)
    assert got == [expected], (text, got)
    if tool_format is not None and got:
        assert repr(got[0][1]) == repr(args)  # every value as the model wrote it
