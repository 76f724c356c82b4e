"""BFCL's multi-turn checker: state and response checks, turn by turn.

``Trajectory`` follows one episode as it happens: the model's calls run on the model's
instances as they arrive; when a turn ends, the turn's ground truth runs on separate
instances and the turn is judged by BFCL's rules (bfcl_reference.md section 5.3):

1. a turn whose ground truth has calls fails if the model made none
   (``multi_turn:empty_turn_model_response``);
2. a turn with no ground-truth calls is not checked;
3. every public attribute of each ground-truth instance must equal the model instance's
   (``multi_turn:instance_state_mismatch``);
4. the turn's ground-truth results must all be among the model's results so far, as a
   multiset (``multi_turn:execution_response_mismatch``).

The entry is valid when every turn passes; its error is the first failing turn's. Facets of a
turn (``TURN_FACETS``, with their default weights in the shaped reward): ``state`` and
``response`` (1 when that check passes or is not run), ``executed`` (share of the model's
calls that ran without error), ``ground_truth_recall`` (share of the turn's ground-truth calls
the model made with the same arguments). Facets of a step (``STEP_FACETS``, logged in the
step's ``info``, weight 0: the shaped reward pays turns): ``decodable``, ``step_executed``
(share of the step's calls that ran without error) and ``step_in_ground_truth`` (share of the
step's calls that are among the turn's ground-truth calls not made yet).
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Any

from checkers import register_checker
from checkers.result import CheckResult, LazyFacets
from fcenv.backends.posting_api import share_default_lists
from fcenv.backends.travel_booking import share_long_context_cards
from fcenv.multi_turn.executor import ToolSession, is_error_result, parse_call_text
from handlers import Call, DecodeError

EMPTY_TURN = "multi_turn:empty_turn_model_response"
STATE_MISMATCH = "multi_turn:instance_state_mismatch"
RESPONSE_MISMATCH = "multi_turn:execution_response_mismatch"
FORCE_TERMINATED = "multi_turn:force_terminated"
INFERENCE_ERROR = "multi_turn:inference_error"
# A turn that fails the state or the response check must earn less than one that passes, so
# those two carry most of the weight.
TURN_FACETS = {"executed": 1.0, "ground_truth_recall": 2.0, "state": 3.0, "response": 2.0}
STEP_FACETS = {"decodable": 1.0, "step_executed": 0.0, "step_in_ground_truth": 0.0}

# BFCL judges an entry's model and ground-truth instances in one process, where some of their
# state is the same objects: the long-context TravelAPI cards (module constants) and the
# TwitterAPI default tag/mention lists (default arguments). Each sees the other's changes to
# those objects, and the state check cannot tell them apart; our instances share them too.
_SHARED_IN_BFCL = {"TravelAPI": share_long_context_cards, "TwitterAPI": share_default_lists}


def state_mismatches(model: ToolSession, truth: ToolSession) -> list[dict[str, Any]]:
    """The first class whose public state differs, with the differing attributes."""
    for name in truth.instances:
        expected, actual = truth.public_state(name), model.public_state(name)
        differences = {k: {"model": actual.get(k), "ground_truth": v} for k, v in expected.items() if actual.get(k) != v}
        if differences:
            return [{"class": name, "differences": differences}]
    return []


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


class Trajectory:
    """One multi-turn episode under BFCL's rules, fed step by step."""

    def __init__(self, task, backend_package: str | None = None):
        self.task = task
        self.model = ToolSession.for_task(task, backend_package)
        self.truth = ToolSession.for_task(task, backend_package)
        if backend_package is None:
            for name, share in _SHARED_IN_BFCL.items():
                if name in self.model.instances:
                    share(self.model.instances[name], self.truth.instances[name])
        self.turn = 0
        self.model_results: list[str] = []  # every result of every turn so far
        self.turn_calls: list[Call] = []
        self.turn_results: list[str] = []
        self.turn_verdicts: list[CheckResult] = []

    @property
    def turns(self) -> int:
        return len(self.task.ground_truth)

    def execute(self, calls: list[Call]) -> list[str]:
        """Run one step's calls on the model's instances."""
        results = [self.model.execute(c) for c in calls]
        self.turn_calls += calls
        self.turn_results += results
        self.model_results += results
        return results

    def end_turn(self) -> CheckResult:
        """Judge the current turn and move to the next."""
        truth_calls = self.task.ground_truth[self.turn]
        truth_results = [self.truth.execute_text(c) for c in truth_calls]
        verdict = self._judge(truth_calls, truth_results)
        self.turn_verdicts.append(verdict)
        self.turn += 1
        self.turn_calls, self.turn_results = [], []
        return verdict

    def verdict(self, force_terminated: bool = False) -> CheckResult:
        """The entry's verdict so far: BFCL's, once every turn has ended."""
        facets = LazyFacets(partial(_mean_facets, list(self.turn_verdicts)))
        if force_terminated and self.turn < self.turns:
            return CheckResult(False, FORCE_TERMINATED, ["Model was force-terminated during inference phase."], facets)
        for index, turn in enumerate(self.turn_verdicts):
            if not turn.valid:
                return CheckResult(False, turn.error_type, [f"turn {index}: {_printed(e)}" for e in turn.errors], facets)
        return CheckResult(True, None, [], facets)

    # ---------------------------------------------------------------- internals

    def _judge(self, truth_calls: list[str], truth_results: list[str]) -> CheckResult:
        turn = self.turn
        checked = bool(truth_calls and self.turn_calls)
        mismatch = state_mismatches(self.model, self.truth) if checked else []
        missing = missing_results(self.model_results, truth_results) if checked else []
        facets = LazyFacets(partial(self._turn_facets, list(self.turn_calls), list(self.turn_results), truth_calls,
                                    state=not mismatch, response=not missing))
        if truth_calls and not self.turn_calls:
            return CheckResult(False, EMPTY_TURN, [f"Model response list is empty for turn {turn}"], facets)
        if mismatch:
            name = mismatch[0]["class"]
            message = f"Model instance for {name} does not match the state with ground truth instance."
            return CheckResult(False, STATE_MISMATCH, [message, mismatch], facets)
        if missing:
            message = (f"Model response execution results so far does not contain all the ground truth "
                       f"response execution results for turn {turn}.")
            return CheckResult(False, RESPONSE_MISMATCH, [message, {"missing_items": missing}], facets)
        return CheckResult(True, None, [], facets)

    def _turn_facets(self, calls: list[Call], results: list[str], truth_calls: list[str], *, state: bool,
                     response: bool) -> dict[str, float]:
        if truth_calls and not calls:  # the turn needed calls and got none: nothing is right
            return dict.fromkeys(TURN_FACETS, 0.0)
        return {
            "executed": _share(not is_error_result(r) for r in results),
            "ground_truth_recall": self._matched_share(calls, truth_calls),
            "state": float(state),
            "response": float(response),
        }

    def _matched_share(self, calls: list[Call], truth_calls: list[str]) -> float:
        if not truth_calls:
            return 1.0
        made = Counter(self.model.canonical(c.name, [], dict(c.arguments)) for c in calls)
        matched = 0
        for text in truth_calls:
            key = self.truth.canonical(*parse_call_text(text))
            if key is not None and made[key] > 0:
                made[key] -= 1
                matched += 1
        return matched / len(truth_calls)


def _printed(error: Any) -> str:
    """An error as text; a state difference holding an int too long to print (over Python's
    4,300 digits) is described instead, so a verdict never fails on the model's state."""
    try:
        return str(error)
    except ValueError:
        return f"<a {type(error).__name__} holding an int too long to print>"


def _share(flags) -> float:
    flags = list(flags)
    return sum(flags) / len(flags) if flags else 1.0


def _mean_facets(verdicts: list[CheckResult]) -> dict[str, float]:
    if not verdicts:
        return {}
    names = verdicts[0].facets
    return {n: sum(v.facets.get(n, 0.0) for v in verdicts) / len(verdicts) for n in names}


@register_checker("multi_turn", facets={**TURN_FACETS, **STEP_FACETS})
def check_multi_turn(task, decoded, backend_package: str | None = None) -> CheckResult:
    """A whole trajectory: ``decoded[turn][step]`` is a step's calls or its DecodeError.

    Steps that hold no call are skipped, as BFCL's evaluator skips chat text. A trajectory
    with fewer turns than the ground truth was force-terminated during inference.
    """
    if not isinstance(decoded, list):
        return CheckResult(False, INFERENCE_ERROR, ["the result is not a list of turns"], {})
    if len(decoded) != len(task.ground_truth):
        return CheckResult(False, FORCE_TERMINATED, ["Model was force-terminated during inference phase."], {})
    trajectory = Trajectory(task, backend_package)
    for steps in decoded:
        for calls in steps:
            if not isinstance(calls, DecodeError) and calls:
                trajectory.execute(calls)
        trajectory.end_turn()
    return trajectory.verdict()
