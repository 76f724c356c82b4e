"""Single-turn episodes: one prompt, one answer, one verdict.

An episode owns what changes during one run of a task (the chat so far); the task itself is
shared and never modified. ``EpisodeSettings`` holds the choices made when the env was built.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fcenv.checkers import CheckResult, get_checker
from fcenv.prompt_variations import PromptVariation, reaches
from fcenv.prompts import BFCL_SYSTEM_PROMPT, hinted_functions, system_prompt, with_system_prompt
from fcenv.tasks import Task
from fcenv.handlers import Call, DecodeError, decode

if TYPE_CHECKING:
    from fcenv.tool_formats import ToolFormat

Checker = Callable[[Task, Any], CheckResult]


@dataclass(frozen=True)
class EpisodeSettings:
    """``handler``/``checker``: a registered name, or None for BFCL's choice for the task.
    ``tool_format``: native tool calling in that family's format (``fcenv.tool_formats``)
    instead of BFCL's prompting format; it then decodes every answer. ``prompt_variation``: one
    of BFCL's format-sensitivity prompts (``fcenv.prompt_variations``) instead of its default,
    for the single-turn Python entries it covers; its decoder then reads their answers."""

    handler: str | None = None
    checker: str | Checker | None = None
    system_prompt: str = BFCL_SYSTEM_PROMPT
    max_steps_per_turn: int = 20
    backend_package: str | None = None
    # Multi-turn: reward each turn's verdict at its end (True), or only the episode's (False).
    turn_rewards: bool = False
    tool_format: ToolFormat | None = None
    # Web search: the source the web-search tools answer from (``fcenv.search``), or None.
    web_search: Any = None
    prompt_variation: PromptVariation | None = None

    def decode(self, task: Task, text: str) -> list[Call] | DecodeError:
        """The answer's calls as BFCL decodes them for its verdict, or the decode failure."""
        if self.tool_format is not None:
            try:
                return self.tool_format.calls(text)
            except DecodeError as exc:
                return exc
        return decode_safely(text, self.handler_for(task))

    def tools(self, task: Task) -> list[dict[str, Any]] | None:
        """FC mode's tools: the docs with BFCL's language hints, as its FC handlers pass them."""
        return hinted_functions(task.functions, task.language) if self.tool_format is not None else None

    def varies(self, task: Task) -> bool:
        """Whether the prompt variation shapes this task's prompt and decoding: it is given, and
        it reaches the task (``fcenv.prompt_variations.reaches``: single-turn Python entries)."""
        return self.prompt_variation is not None and reaches(task)

    def handler_for(self, task: Task) -> str:
        if self.handler is not None:
            return self.handler
        if self.varies(task):
            return self.prompt_variation.handler
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


def first_turn_messages(task: Task, settings: EpisodeSettings,
                        messages: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The chat's opening: the first turn's messages (``messages``, else the task's), with the
    function prompt in prompting mode."""
    opening = task.question[0] if messages is None else messages
    if settings.tool_format is not None:  # the tools reach the model through its chat template
        return [_as_fc(m) for m in opening]
    docs = hinted_functions(task.functions, task.language)
    if settings.varies(task):
        prompt = settings.prompt_variation.system_prompt(docs)
    else:
        prompt = system_prompt(docs, settings.system_prompt)
    return with_system_prompt([_as_prompting(m) for m in opening], prompt)


# A question may replay earlier steps of a conversation (converted sources, fcenv.sources): an
# assistant message then holds its calls twice, as prompting text in ``content`` and as
# ``tool_calls``. Each mode shows the model the form it answers in, as the env writes its own steps.
def _as_prompting(message: dict[str, Any]) -> dict[str, Any]:
    if "tool_calls" not in message:
        return message
    return {k: v for k, v in message.items() if k != "tool_calls"}


def _as_fc(message: dict[str, Any]) -> dict[str, Any]:
    message = copy.deepcopy(message)
    if message.get("tool_calls"):
        message["content"] = ""
    return message


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
        self.tools = settings.tools(task)
        self.done = False

    def step(self, text: str) -> StepOutcome:
        decoded = self.settings.decode(self.task, text)
        result = self.settings.checker_for(self.task)(self.task, decoded)
        self.messages.append({"role": "assistant", "content": text})
        self.done = True
        calls = None if isinstance(decoded, DecodeError) else decoded
        return StepOutcome(result=result, calls=calls)
