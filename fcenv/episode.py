"""Single-turn episodes: one prompt, one answer, one verdict.

An episode owns what changes during one run of a task (the chat so far); the task itself is
shared and never modified. ``EpisodeSettings`` holds the choices made when the env was built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checkers import CheckResult, get_checker
from fcenv.prompts import BFCL_SYSTEM_PROMPT, hinted_functions, system_prompt, with_system_prompt
from fcenv.tasks import Task
from handlers import Call, DecodeError, decode

Checker = Callable[[Task, Any], CheckResult]


@dataclass(frozen=True)
class EpisodeSettings:
    """``handler``/``checker``: a registered name, or None for BFCL's choice for the task."""

    handler: str | None = None
    checker: str | Checker | None = None
    system_prompt: str = BFCL_SYSTEM_PROMPT
    max_steps_per_turn: int = 20
    backend_package: str | None = None
    # Multi-turn: reward each turn's verdict at its end (True), or only the episode's (False).
    turn_rewards: bool = False

    def handler_for(self, task: Task) -> str:
        if self.handler is not None:
            return self.handler
        # BFCL decodes AST categories in their own language, everything else as Python.
        return task.language if task.kind == "ast" else "python"

    def checker_for(self, task: Task) -> Checker:
        if callable(self.checker):
            return self.checker
        return get_checker(self.checker or task.kind)


@dataclass
class StepOutcome:
    """What one step produced; the env turns it into Gymnasium's step tuple.

    ``result`` is reported in ``info``; the reward is ``reward_fn(reward_result or result) *
    reward_scale`` (multi-turn steps that end no turn have scale 0).
    """

    result: CheckResult
    calls: list[Call] | None
    terminated: bool = True
    truncated: bool = False
    info: dict[str, Any] | None = None
    reward_result: CheckResult | None = None
    reward_scale: float = 1.0


def first_turn_messages(task: Task, settings: EpisodeSettings) -> list[dict[str, Any]]:
    prompt = system_prompt(hinted_functions(task.functions, task.language), settings.system_prompt)
    return with_system_prompt(task.question[0], prompt)


def decode_safely(text: str, handler: str) -> list[Call] | DecodeError:
    try:
        return decode(text, handler)
    except DecodeError as exc:
        return exc


def calls_info(calls: list[Call] | None) -> list[dict[str, Any]]:
    return [{"name": c.name, "arguments": dict(c.arguments)} for c in calls or []]


class SingleTurnEpisode:
    def __init__(self, task: Task, settings: EpisodeSettings):
        self.task = task
        self.settings = settings
        self.messages = first_turn_messages(task, settings)
        self.done = False

    def step(self, text: str) -> StepOutcome:
        decoded = decode_safely(text, self.settings.handler_for(self.task))
        result = self.settings.checker_for(self.task)(self.task, decoded)
        self.messages.append({"role": "assistant", "content": text})
        self.done = True
        calls = None if isinstance(decoded, DecodeError) else decoded
        return StepOutcome(result=result, calls=calls)
