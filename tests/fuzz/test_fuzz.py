"""Property-based fuzzing of every decoder and checker (harness/strategies.py makes the inputs;
the properties are in harness/fuzz_properties.py).

Properties, on every generated input:

- a decoder returns a list of ``Call`` (a string name, a dict of arguments) or raises
  ``DecodeError`` with one of BFCL's two kinds; never anything else. Each registered handler
  is called directly, since ``fcenv.handlers.decode`` turns any other exception into a
  ``DecodeError`` and would hide it; ``fcenv.handlers.decode`` is checked too;
- a checker returns a ``CheckResult``: a bool verdict, an error type exactly when invalid,
  facets in [0, 1]; the AST checker's facets are all 1 on a valid verdict;
- nothing the text says runs: the tests work in an empty folder that must stay empty.

Inputs are the same on every run (``derandomize``) and no example database is written. The
example counts add up, with test_fuzz_env.py, to over 100,000 inputs per run; each test
asserts that it ran all of its examples.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fcenv.checkers import available_checkers, get_checker
from fcenv.multi_turn.trajectory import check_recorded
from fcenv.handlers import DecodeError, available_handlers, decode, get_handler
from harness.fuzz_properties import (
    assert_check_result,
    assert_decoded,
    multi_turn_case,
    single_turn_case,
)
from harness.strategies import (
    Fuzz,
    fuzz_for,
    fuzz_settings,
    json_text,
    model_text,
    python_text,
    random_text,
    source_text,
    tool_call_text,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fuzz(bfcl_dir) -> Fuzz:
    return fuzz_for(bfcl_dir)


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch):
    """Work in an empty folder; whatever model text managed to create would land here."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def run_examples(strategy: st.SearchStrategy, check, examples: int) -> None:
    """``check`` on ``examples`` generated inputs, asserting that they all ran."""
    ran = 0

    @fuzz_settings(examples)
    @given(strategy)
    def property_holds(value):
        nonlocal ran
        ran += 1
        check(value)

    property_holds()
    assert ran >= examples


# --------------------------------------------------------------------------- decoders


def outcome(decoder, *args):
    try:
        return decoder(*args)
    except DecodeError as exc:
        return exc


def all_decoders_hold(text: str) -> None:
    for name in available_handlers():
        assert_decoded(outcome(get_handler(name), text))
        assert_decoded(outcome(decode, text, name))


def test_decoders_on_python_calls(fuzz, empty_cwd):
    run_examples(fuzz.strategy(python_text), all_decoders_hold, 20_000)


def test_decoders_on_java_and_javascript_calls(fuzz, empty_cwd):
    strategy = fuzz.strategy(source_text, "java") | fuzz.strategy(source_text, "javascript")
    run_examples(strategy, all_decoders_hold, 12_000)


def test_decoders_on_json_and_tool_call_blocks(fuzz, empty_cwd):
    run_examples(fuzz.strategy(json_text) | fuzz.strategy(tool_call_text), all_decoders_hold, 12_000)


def test_decoders_on_any_text(fuzz, empty_cwd):
    run_examples(fuzz.strategy(model_text) | random_text, all_decoders_hold, 20_000)


# --------------------------------------------------------------------------- checkers


def single_turn_checkers_hold(case) -> None:
    task, decoded = case
    for name in available_checkers():
        if name == "multi_turn":
            continue
        # Every single-turn checker on every kind of task: only the task's own kind is
        # BFCL-meaningful, but none may raise on any.
        assert_check_result(get_checker(name)(task, decoded), valid_means_all_ones=(name == "ast"))
    if task.kind == "ast":
        assert_check_result(get_checker("ast")(task, decoded, underscore_to_dot=True), valid_means_all_ones=True)


def test_single_turn_checkers(fuzz, empty_cwd):
    valid = 0

    def holds_and_counts(case) -> None:
        nonlocal valid
        single_turn_checkers_hold(case)
        task, decoded = case
        valid += task.kind == "ast" and get_checker("ast")(task, decoded).valid

    run_examples(fuzz.strategy(single_turn_case), holds_and_counts, 16_000)
    assert valid > 1_000  # valid answers are common enough for "valid => facets all 1" to bite


def multi_turn_checker_holds(case) -> None:
    task, decoded = case
    assert_check_result(check_recorded(task, decoded))


def test_multi_turn_checker(fuzz, empty_cwd):
    run_examples(fuzz.strategy(multi_turn_case), multi_turn_checker_holds, 2_000)
