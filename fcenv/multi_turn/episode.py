"""Multi-turn episodes: turns of user requests, each answered in steps of tool calls.

Each step's text is decoded into calls, which run on the episode's own instances; their
results come back as tool messages in the next observation. A step without calls (prose, an
empty list, undecodable text) ends the turn, which is then judged by BFCL's rules; the next
turn's user message follows, or, in multi_turn_miss_func, BFCL's message announcing the
held-out functions. More than ``max_steps_per_turn`` steps with calls in one turn end the
episode as BFCL's inference does (truncated; ``multi_turn:force_terminated`` unless it was
the last turn).

Rewards: with turn rewards, each turn's end is rewarded with ``reward_fn(turn verdict) /
turns`` (so a perfect episode earns 1); without, only the last step is rewarded, with the
episode's BFCL verdict. A turn the step limit cut off earns nothing, also in the last turn,
where BFCL's verdict may still be valid (its evaluator only flags an entry that stopped early). In FC mode an answer that BFCL's inference itself would fail on
(``fcenv.handlers.native.InferenceCrash``) ends the episode as an inference error. Every step's
``info`` carries facets: a step with calls its step facets, a turn's end the turn verdict's
(also as ``turn_facets``, which the episode's last step needs, its ``facets`` being the
episode's)
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fcenv.checkers.multi_turn import INFERENCE_ERROR
from fcenv.checkers.result import CheckResult
from fcenv.episode import EpisodeSettings, StepOutcome, first_turn_messages
from fcenv.multi_turn.executor import call_text, decode_step, is_error_result, parse_call_text
from fcenv.multi_turn.trajectory import Trajectory
from fcenv.prompts import added_functions_message
from fcenv.tool_formats import assistant_calls_message, tool_message
from fcenv.tasks import Task
from fcenv.handlers import Call
from fcenv.handlers.native import InferenceCrash


def step_messages(settings: EpisodeSettings, text: str, calls: list[Call], results: list[str],
                  calls_made: int) -> list[dict[str, Any]]:
    """The messages a step with calls adds to the chat; ``calls_made`` (the episode's calls
    before this step) numbers the call ids of FC mode."""
    if settings.tool_format is None:
        # BFCL's prompting format for open models: the text as written, one tool message per
        # call, named by the call's source form.
        return [{"role": "assistant", "content": text},
                *({"role": "tool", "name": call_text(call.name, call.arguments), "content": result}
                  for call, result in zip(calls, results))]
    return [assistant_calls_message(calls, calls_made, text),
            *(tool_message(call, result, calls_made + i) for i, (call, result) in enumerate(zip(calls, results)))]


class MultiTurnEpisode:
    def __init__(self, task: Task, settings: EpisodeSettings):
        self.task = task
        self.settings = settings
        self.trajectory = Trajectory(task, settings.backend_package, settings.checker_for(task))
        self.messages = first_turn_messages(task, settings)
        self.tools = settings.tools(task)  # FC mode; unchanged over the episode, as in BFCL
        self.steps_in_turn = 0
        self.calls_made = 0  # numbers the call ids of FC mode
        self.process_paid = 0.0  # share of this turn's process budget paid so far (step rewards)
        self.done = False
        self._truth_keys = self._turn_truth_keys()

    def step(self, text: str) -> StepOutcome:
        crash = None
        try:
            calls = decode_step(text, self.settings.handler_for(self.task), self.settings.tool_format)
        except InferenceCrash as exc:
            crash, calls = exc, []
        if not calls:
            self.messages.append({"role": "assistant", "content": text})
            if crash is not None and crash.fails_entry(self.trajectory.turn, self.trajectory.turns):
                return self._inference_error(crash)
            return self._end_turn()  # in the last turn, no further query would fail
        results = self.trajectory.execute(calls)
        self._add_step_messages(text, calls, results)
        self.steps_in_turn += 1
        step = CheckResult(
            valid=not any(map(is_error_result, results)),
            facets={
                "decodable": 1.0,
                "step_executed": sum(not is_error_result(r) for r in results) / len(results),
                "step_in_ground_truth": self._matched_share(calls),
            },
        )
        info = {"turn": self.trajectory.turn, "results": results}
        if self.steps_in_turn > self.settings.max_steps_per_turn:
            return self._force_quit(calls, info)
        return StepOutcome(result=step, calls=calls, terminated=False, reward_scale=0.0, info=info)

    def _add_step_messages(self, text: str, calls: list[Call], results: list[str]) -> None:
        self.messages += step_messages(self.settings, text, calls, results, self.calls_made)
        self.calls_made += len(calls)

    # ---------------------------------------------------------------- turns

    def _end_turn(self, truncated: bool = False, calls: list[Call] | None = None, info: dict | None = None) -> StepOutcome:
        turn = self.trajectory.turn
        verdict = self.trajectory.end_turn()
        info = {**(info or {}), "turn": turn, "turn_valid": verdict.valid, "turn_error_type": verdict.error_type,
                "turn_facets": dict(verdict.facets)}
        scale = 1.0 / self.trajectory.turns if self.settings.turn_rewards else 0.0
        if self.trajectory.turn == self.trajectory.turns:
            return self._finish(verdict, scale, truncated, calls, info)
        self._next_turn()
        return StepOutcome(result=verdict, calls=calls, terminated=False, truncated=False, reward_scale=scale, info=info)

    def _force_quit(self, calls: list[Call], info: dict[str, Any]) -> StepOutcome:
        if self.trajectory.turn == self.trajectory.turns - 1:
            # BFCL's edge case: quitting in the last turn leaves the turn counts equal, so
            # the evaluator judges that turn normally.
            return self._end_turn(truncated=True, calls=calls, info=info)
        verdict = self.trajectory.verdict(force_terminated=True)
        return self._finish(verdict, 0.0, True, calls, {**info, "turn_valid": False, "turn_error_type": verdict.error_type})

    def _inference_error(self, crash: InferenceCrash) -> StepOutcome:
        """BFCL's inference would fail on this answer: the entry fails whole, nothing is paid."""
        self.done = True
        final = CheckResult(False, INFERENCE_ERROR, [str(crash)], {})
        info = {"turn": self.trajectory.turn, "turn_valid": False, "turn_error_type": INFERENCE_ERROR,
                "turn_verdicts": [v.valid for v in self.trajectory.turn_verdicts]}
        return StepOutcome(result=final, calls=None, terminated=True, reward_scale=0.0, info=info)

    def _finish(self, turn_verdict: CheckResult, scale: float, truncated: bool, calls, info) -> StepOutcome:
        self.done = True
        final = self.trajectory.verdict(force_terminated=truncated and self.trajectory.turn < self.trajectory.turns)
        info = {**info, "turn_verdicts": [v.valid for v in self.trajectory.turn_verdicts]}
        # A turn cut off by the step limit is never paid, even in the last turn, where BFCL still
        # judges it (and may find it valid): a reward for looping until the limit would teach looping.
        if truncated:
            scale = 0.0
        if self.settings.turn_rewards:
            return StepOutcome(result=final, calls=calls, terminated=not truncated, truncated=truncated,
                               reward_result=turn_verdict, reward_scale=scale, info=info)
        return StepOutcome(result=final, calls=calls, terminated=not truncated, truncated=truncated, info=info,
                           reward_scale=0.0 if truncated else 1.0)

    def _next_turn(self) -> None:
        turn = self.trajectory.turn
        self.steps_in_turn = 0
        self._truth_keys = self._turn_truth_keys()
        if turn in self.task.missed_functions:
            self.messages.append(added_functions_message(self.task.missed_functions[turn]))
        else:
            self.messages.extend(self.task.question[turn])

    # ---------------------------------------------------------------- step facets

    def _turn_truth_keys(self) -> Counter:
        truth = self.trajectory.truth
        turn = self.trajectory.turn
        texts = self.task.ground_truth[turn] if turn < self.trajectory.turns else []
        return Counter(truth.canonical(*parse_call_text(t)) for t in texts)

    def _matched_share(self, calls: list[Call]) -> float:
        model = self.trajectory.model
        matched = 0
        for call in calls:
            key = model.canonical(call.name, [], dict(call.arguments))
            if key is not None and self._truth_keys[key] > 0:
                self._truth_keys[key] -= 1
                matched += 1
        return matched / len(calls)
