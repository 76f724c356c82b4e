"""Agentic episodes; memory ones: a scenario's prerequisite conversations fill the memory, then the question.

``AgenticEpisode`` is the loop both agentic families share (conversations of turns of steps,
BFCL's force quit, the final answer judged by the agentic checker); ``MemoryEpisode`` is the
memory categories' (its docstring: what one episode plays) and
``fcenv.agentic.web_episode.WebSearchEpisode`` the web-search ones'. Only the question's verdict
is rewarded, at the episode's last step; each step's ``info`` says where the episode stands
(``_info``), and ``messages`` is the current conversation's chat, a new list per conversation.
Docs: docs/environment.md#episodes, docs/training.md#agentic-data-memory-and-web-search.
"""

from __future__ import annotations

from typing import Any

from fcenv.checkers.agentic import INFERENCE_ERROR
from fcenv.checkers.result import CheckResult
from fcenv.agentic.prompts import memory_system_prompt, with_memory_prompt
from fcenv.backends.memory_snapshots import MemorySnapshots
from fcenv.episode import EpisodeSettings, StepOutcome, first_turn_messages
from fcenv.multi_turn.episode import step_messages
from fcenv.multi_turn.executor import ToolSession, decode_step, is_error_result
from fcenv.tasks import Task
from fcenv.handlers.native import InferenceCrash


class AgenticEpisode:
    """What BFCL's inference loop plays for an agentic question, after the conversations that
    come before it (none but a memory scenario's). Subclasses say how each conversation opens
    (``_open``: its tool session and first turn) and what its end leaves (``_close``)."""

    def __init__(self, task: Task, settings: EpisodeSettings):
        self.task = task
        self.settings = settings
        (self.class_name,) = task.involved_classes
        self.conversations = [*task.prerequisites, {"id": task.id, "question": task.question}]
        self.tools = settings.tools(task)  # FC mode; the same in every conversation, as in BFCL
        self.done = False
        self._prepare()
        self._start(0)

    @property
    def is_prerequisite(self) -> bool:
        return self.index < len(self.conversations) - 1

    def _prepare(self) -> None:
        """What the episode needs before its first conversation, refused at reset when missing."""

    def _open(self, conversation: dict[str, Any]) -> tuple[ToolSession, list[dict[str, Any]]]:
        raise NotImplementedError

    def _close(self, conversation: dict[str, Any]) -> None:
        """A conversation ended (not failed by BFCL's inference)."""

    def _start(self, index: int) -> None:
        self.index = index
        self.session, opening = self._open(self.conversations[index])
        self.messages = first_turn_messages(self.task, self.settings, opening)
        self.turn = 0
        self.steps_in_turn = 0
        self.calls_made = 0

    def _info(self, **extra: Any) -> dict[str, Any]:
        """Where the episode stands after a step, as its observation shows: the conversation
        (``conversation``, ``prerequisite``) and the turn; a step that ends a conversation also
        names it (``conversation_ended``), and ``step`` adds ``played_turn``, the turn the step
        was played in, counted over the episode's conversations."""
        return {"conversation": self.conversations[self.index]["id"], "prerequisite": self.is_prerequisite,
                "turn": self.turn, **extra}

    # ---------------------------------------------------------------- steps

    def step(self, text: str) -> StepOutcome:
        # The turn this step is played in, counted over the whole episode (a conversation's own
        # count starts again at 0): what a trainer groups an episode's actions by.
        played = sum(len(c["question"]) for c in self.conversations[:self.index]) + self.turn
        outcome = self._step(text)
        outcome.info = {**(outcome.info or {}), "played_turn": played}
        return outcome

    def _step(self, text: str) -> StepOutcome:
        crash = None
        try:
            calls = decode_step(text, self.settings.handler_for(self.task), self.settings.tool_format)
        except InferenceCrash as exc:
            crash, calls = exc, []
        if not calls:
            self.messages.append({"role": "assistant", "content": text})
            turns = len(self.conversations[self.index]["question"])
            if crash is not None and crash.fails_entry(self.turn, turns):
                return self._inference_error(crash)
            return self._end_turn(text)
        results = [self.session.execute(call) for call in calls]
        self.messages += step_messages(self.settings, text, calls, results, self.calls_made)
        self.calls_made += len(calls)
        self.steps_in_turn += 1
        executed = sum(not is_error_result(r) for r in results)
        step = CheckResult(valid=executed == len(results),
                           facets={"decodable": 1.0, "step_executed": executed / len(results)})
        info = self._info(results=results)
        if self.steps_in_turn > self.settings.max_steps_per_turn:
            return self._force_quit(step, calls, info)
        return StepOutcome(result=step, calls=calls, terminated=False, reward_scale=0.0, info=info)

    def _end_turn(self, text: str) -> StepOutcome:
        conversation = self.conversations[self.index]
        if self.turn + 1 < len(conversation["question"]):
            self.turn += 1
            self.steps_in_turn = 0
            self.messages.extend(conversation["question"][self.turn])
            return StepOutcome(result=CheckResult(True), calls=None, terminated=False, reward_scale=0.0,
                               info=self._info(turn_ended=self.turn - 1))
        if self.is_prerequisite:
            return self._next_conversation(CheckResult(True), None, self._info())
        return self._finish(self.settings.checker_for(self.task)(self.task, text), truncated=False)

    def _force_quit(self, step: CheckResult, calls, info: dict[str, Any]) -> StepOutcome:
        if self.is_prerequisite:  # BFCL stops the conversation and still flushes its memory
            return self._next_conversation(step, calls, {**info, "force_quit": True})
        return self._finish(self.settings.checker_for(self.task)(self.task, None), truncated=True, calls=calls,
                            info={**info, "force_quit": True})

    def _next_conversation(self, result: CheckResult, calls, info: dict[str, Any], flush: bool = True) -> StepOutcome:
        conversation = self.conversations[self.index]
        if flush:
            self._close(conversation)
        self._start(self.index + 1)
        return StepOutcome(result=result, calls=calls, terminated=False, reward_scale=0.0,
                           info={**info, **self._info(), "conversation_ended": conversation["id"]})

    def _inference_error(self, crash: InferenceCrash) -> StepOutcome:
        """BFCL's inference fails on this answer: a prerequisite conversation ends unflushed
        (its entry failed), the question fails whole."""
        if self.is_prerequisite:
            return self._next_conversation(CheckResult(False, INFERENCE_ERROR, [str(crash)], {}), None,
                                           self._info(inference_error=str(crash)), flush=False)
        return self._finish(CheckResult(False, INFERENCE_ERROR, [str(crash)], {}), truncated=False)

    def _finish(self, verdict: CheckResult, truncated: bool, calls=None, info: dict[str, Any] | None = None) -> StepOutcome:
        self.done = True
        return StepOutcome(result=verdict, calls=calls, terminated=not truncated, truncated=truncated,
                           info=info or self._info())


class MemoryEpisode(AgenticEpisode):
    """A memory question after its scenario's prerequisite conversations.

    One episode plays what BFCL's inference plays for one memory question, with a memory of its
    own (BFCL's per-scenario snapshot folder, in memory: ``fcenv.backends.memory_snapshots``):

    1. each prerequisite conversation of the question's scenario, in order, as a chat of its own:
       a fresh backend instance that starts from the memory the previous conversation left (the
       first starts empty), BFCL's memory system prompt showing the core memory at its start
       (with the function prompt in prompting mode), then the conversation's user turns. Steps
       with calls run on the backend and their results come back as tool messages; a step
       without calls ends the turn; more than ``max_steps_per_turn`` steps with calls in a turn
       end the conversation (BFCL's force quit). At its end the memory is flushed, force quit or
       not, unless BFCL's inference would have failed on it (FC mode:
       ``fcenv.handlers.native.InferenceCrash``);
    2. the question, likewise, in a chat of its own that asks for BFCL's answer format; the
       first step without calls is the final answer, judged by BFCL's agentic checker
       (``fcenv.checkers.agentic``). A force quit there leaves no final answer
       (``agentic:no_last_message``).

    Prerequisite conversations are not scored: their steps earn nothing.
    """

    def _prepare(self) -> None:
        self.scenario = self.task.initial_config[self.class_name]["scenario"]
        self.snapshots = MemorySnapshots()
        # A missing encoder is the setup's problem, not the model's: said at reset (an empty
        # batch loads it), never as a tool's error result.
        if self.class_name == "MemoryAPI_vector" and self.settings.backend_package is None:
            from fcenv.backends import memory_vector

            memory_vector.embed([])

    def _open(self, conversation: dict[str, Any]) -> tuple[ToolSession, list[dict[str, Any]]]:
        config = self.snapshots.config_for(self.class_name, self.scenario, conversation["id"])
        session = ToolSession([self.class_name], {self.class_name: config}, backend_package=self.settings.backend_package)
        memory = session.instances[self.class_name]
        prompt = memory_system_prompt(self.class_name, self.scenario, memory._dump_core_memory_to_context())
        return session, with_memory_prompt(conversation["question"][0], prompt)

    def _close(self, conversation: dict[str, Any]) -> None:
        memory = self.session.instances[self.class_name]
        self.snapshots.flush(self.class_name, self.scenario, conversation["id"], memory._snapshot())
