"""One multi-turn episode under BFCL's rules, fed step by step: the calls run here, the
verdicts come from a checker on plain data (``fcenv.checkers.multi_turn``).

The model's calls run on the model's instances as they arrive; when a turn ends, the turn's
ground truth runs on separate instances, and the turn's ``TurnRecord`` (calls, results, the
public state of every instance) goes to the checker: BFCL's ``multi_turn`` by default, or the
env's ``checker=``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from fcenv.checkers import CheckResult, get_checker
from fcenv.checkers.multi_turn import FORCE_TERMINATED, INFERENCE_ERROR, TurnRecord, entry_verdict
from fcenv.backends.posting_api import share_default_lists
from fcenv.backends.travel_booking import share_long_context_cards
from fcenv.multi_turn.executor import ToolSession, is_error_result, parse_call_text
from fcenv.handlers import Call, DecodeError

TurnChecker = Callable[[Any, TurnRecord], CheckResult]

# BFCL judges an entry's model and ground-truth instances in one process, where some of their
# state is the same objects: the long-context TravelAPI cards (module constants) and the
# TwitterAPI default tag/mention lists (default arguments). Each sees the other's changes to
# those objects, and the state check cannot tell them apart; our instances share them too.
_SHARED_IN_BFCL = {"TravelAPI": share_long_context_cards, "TwitterAPI": share_default_lists}


class Trajectory:
    def __init__(self, task, backend_package: str | None = None, checker: TurnChecker | None = None):
        self.task = task
        self.checker = checker or get_checker("multi_turn")
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
        checked = bool(truth_calls and self.turn_calls)
        calls = list(self.turn_calls)
        record = TurnRecord(
            turn=self.turn, truth_calls=list(truth_calls), model_calls=len(calls),
            all_model_results=list(self.model_results), truth_results=truth_results,
            errors=[is_error_result(r) for r in self.turn_results],
            model_states=self._states(self.model) if checked else None,
            truth_states=self._states(self.truth) if checked else None,
            ground_truth_recall=lambda: self._matched_share(calls, truth_calls))
        verdict = self.checker(self.task, record)
        self.turn_verdicts.append(verdict)
        self.turn += 1
        self.turn_calls, self.turn_results = [], []
        return verdict

    def verdict(self, force_terminated: bool = False) -> CheckResult:
        """The entry's verdict so far: BFCL's, once every turn has ended."""
        return entry_verdict(self.turn_verdicts, self.turns, force_terminated)

    def _states(self, session: ToolSession) -> dict[str, dict[str, Any]]:
        # The ground truth's classes, in its order: the first differing class is reported.
        return {name: session.public_state(name) for name in self.truth.instances}

    def _matched_share(self, calls: list[Call], truth_calls: list[str]) -> float:
        made = Counter(self.model.canonical(c.name, [], dict(c.arguments)) for c in calls)
        matched = 0
        for text in truth_calls:
            key = self.truth.canonical(*parse_call_text(text))
            if key is not None and made[key] > 0:
                made[key] -= 1
                matched += 1
        return matched / len(truth_calls)


def check_recorded(task, decoded, backend_package: str | None = None,
                   checker: TurnChecker | None = None) -> CheckResult:
    """A whole recorded trajectory: ``decoded[turn][step]`` is a step's calls or its DecodeError.

    Steps that hold no call are skipped, as BFCL's evaluator skips chat text. A trajectory
    with fewer turns than the ground truth was force-terminated during inference.
    """
    if not isinstance(decoded, list):
        return CheckResult(False, INFERENCE_ERROR, ["the result is not a list of turns"], {})
    if len(decoded) != len(task.ground_truth):
        return CheckResult(False, FORCE_TERMINATED, ["Model was force-terminated during inference phase."], {})
    trajectory = Trajectory(task, backend_package, checker)
    for steps in decoded:
        for calls in steps:
            if not isinstance(calls, DecodeError) and calls:
                trajectory.execute(calls)
        trajectory.end_turn()
    return trajectory.verdict()
