"""BFCL's multi-turn rules, on plain data: one turn's verdict, and the entry's.

The env runs the calls (``fcenv.multi_turn.trajectory``): the model's on the model's instances as
they arrive, and at a turn's end the turn's ground truth on separate instances. It hands this
checker a ``TurnRecord`` (calls, result strings, every instance's public state) and gets the
turn's verdict by BFCL's rules (``judge_turn``); the entry is valid when every turn passes, its
error the first failing turn's (``entry_verdict``). A checker of your own is a function
``(task, TurnRecord) -> CheckResult`` (``checker=`` on the env). Facets and their weights:
docs/environment.md#decoders-checkers-and-facets.
"""

from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from fcenv.checkers import register_checker
from fcenv.checkers.result import CheckResult, LazyFacets

EMPTY_TURN = "multi_turn:empty_turn_model_response"
STATE_MISMATCH = "multi_turn:instance_state_mismatch"
RESPONSE_MISMATCH = "multi_turn:execution_response_mismatch"
FORCE_TERMINATED = "multi_turn:force_terminated"
INFERENCE_ERROR = "multi_turn:inference_error"
# A turn that fails the state or the response check must earn less than one that passes, so
# those two carry most of the weight.
TURN_FACETS = {"executed": 1.0, "ground_truth_recall": 2.0, "state": 3.0, "response": 2.0}
STEP_FACETS = {"decodable": 1.0, "step_executed": 0.0, "step_in_ground_truth": 0.0}


@dataclass
class TurnRecord:
    """One finished turn, as plain data.

    ``model_states`` and ``truth_states`` map each class to its public attributes, in the
    order of the entry's involved classes (None when the state check is not run: no calls on
    one side). ``errors`` marks which of the turn's model results are errors;
    ``ground_truth_recall`` computes the facet of that name when it is read.
    """

    turn: int
    truth_calls: list[str]
    model_calls: int
    all_model_results: list[str]
    truth_results: list[str]
    errors: list[bool]
    model_states: dict[str, dict[str, Any]] | None
    truth_states: dict[str, dict[str, Any]] | None
    ground_truth_recall: Callable[[], float]


def state_mismatches(model_states: dict[str, dict[str, Any]],
                     truth_states: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The first class whose public state differs, with the differing attributes."""
    for name, expected in truth_states.items():
        actual = model_states.get(name, {})
        differences = {k: {"model": actual.get(k), "ground_truth": v} for k, v in expected.items()
                       if differs(actual.get(k), v)}
        if differences:
            return [{"class": name, "differences": differences}]
    return []


def differs(model: Any, truth: Any) -> bool:
    """BFCL's ``model != truth``, made total for the state of users' backends: where ``!=``
    gives no truth value (numpy arrays) or raises, the two are compared by their pickled
    bytes, and what cannot be pickled differs. Built-in backends hold plain data, whose
    ``!=`` always answers: their verdicts are BFCL's."""
    try:
        return bool(model != truth)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  a user's __ne__ / __bool__ is the tool's code
        pass
    try:
        return pickle.dumps(model) != pickle.dumps(truth)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001
        return True


def missing_results(model_results: list[str], truth_results: list[str]) -> list[str]:
    """Ground-truth results not found among the model's (each model result used once)."""
    available = Counter(model_results)
    missing = []
    for result in truth_results:
        if available[result] > 0:
            available[result] -= 1
        else:
            missing.append(result)
    return missing


@register_checker("multi_turn", facets={**TURN_FACETS, **STEP_FACETS})
def judge_turn(task: Any, record: TurnRecord) -> CheckResult:
    """BFCL's verdict on one turn, with the turn's facets.

    BFCL's rules, in order: a turn whose ground truth has calls fails if the model made none
    (``EMPTY_TURN``); a turn with no ground-truth calls is not checked; every public attribute of
    each ground-truth instance must equal the model instance's (``STATE_MISMATCH``); the turn's
    ground-truth results must all be among the model's results so far, as a multiset
    (``RESPONSE_MISMATCH``). Facets (``TURN_FACETS``): ``state`` and ``response`` (1 when that
    check passes or is not run), ``executed`` (share of the model's calls that ran without error),
    ``ground_truth_recall`` (share of the turn's ground-truth calls the model made with the same
    arguments). A step's facets (``STEP_FACETS``, logged in the step's ``info``, weight 0: the
    shaped reward pays turns): ``decodable``, ``step_executed`` (share of the step's calls that
    ran without error) and ``step_in_ground_truth`` (share of the step's calls that are among the
    turn's ground-truth calls not made yet).
    """
    checked = bool(record.truth_calls and record.model_calls)
    mismatch = state_mismatches(record.model_states, record.truth_states) if checked else []
    missing = missing_results(record.all_model_results, record.truth_results) if checked else []
    facets = LazyFacets(partial(_turn_facets, record, state=not mismatch, response=not missing))
    if record.truth_calls and not record.model_calls:
        return CheckResult(False, EMPTY_TURN, [f"Model response list is empty for turn {record.turn}"], facets)
    if mismatch:
        name = mismatch[0]["class"]
        message = f"Model instance for {name} does not match the state with ground truth instance."
        return CheckResult(False, STATE_MISMATCH, [message, mismatch], facets)
    if missing:
        message = (f"Model response execution results so far does not contain all the ground truth "
                   f"response execution results for turn {record.turn}.")
        return CheckResult(False, RESPONSE_MISMATCH, [message, {"missing_items": missing}], facets)
    return CheckResult(True, None, [], facets)


def entry_verdict(turn_verdicts: list[CheckResult], turns: int, force_terminated: bool = False) -> CheckResult:
    """The entry's verdict from its turns' verdicts: BFCL's, once every turn has ended."""
    facets = LazyFacets(partial(_mean_facets, list(turn_verdicts)))
    if force_terminated and len(turn_verdicts) < turns:
        return CheckResult(False, FORCE_TERMINATED, ["Model was force-terminated during inference phase."], facets)
    for index, turn in enumerate(turn_verdicts):
        if not turn.valid:
            return CheckResult(False, turn.error_type, [f"turn {index}: {_printed(e)}" for e in turn.errors], facets)
    return CheckResult(True, None, [], facets)


def _turn_facets(record: TurnRecord, *, state: bool, response: bool) -> dict[str, float]:
    if record.truth_calls and not record.model_calls:  # the turn needed calls and got none
        return dict.fromkeys(TURN_FACETS, 0.0)
    return {
        "executed": _share(not error for error in record.errors),
        "ground_truth_recall": record.ground_truth_recall() if record.truth_calls else 1.0,
        "state": float(state),
        "response": float(response),
    }


def _printed(error: Any) -> str:
    """An error as text; a state difference that cannot be printed (an int over Python's
    4,300 digits, a user's object whose ``repr`` fails) is described instead, so a verdict
    never fails on the model's state."""
    try:
        return str(error)
    except ValueError:
        return f"<a {type(error).__name__} holding an int too long to print>"
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  a user's __repr__ is the tool's code
        return f"<a {type(error).__name__} holding a value that cannot be printed>"


def _share(flags) -> float:
    flags = list(flags)
    return sum(flags) / len(flags) if flags else 1.0


def _mean_facets(verdicts: list[CheckResult]) -> dict[str, float]:
    if not verdicts:
        return {}
    names = verdicts[0].facets
    return {n: sum(v.facets.get(n, 0.0) for v in verdicts) / len(verdicts) for n in names}
