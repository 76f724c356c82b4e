"""``FunctionCallingEnv``: BFCL tasks as a Gymnasium environment over text.

Observation: the chat so far, rendered to one string (BFCL's prompting prompt and a ChatML
rendering by default). Action: the model's text. ``step`` decodes it, checks it with BFCL's
rules and returns the reward; decoding failures are verdicts, never exceptions.
``info["messages"]`` holds the chat as messages for agents that apply their own template (copies,
each made once and shared by the infos of later steps: ``fcenv.chat_view``).
"""

from __future__ import annotations

import copy
import hashlib
import numbers
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium.error import ResetNeeded

from fcenv.checkers import CheckResult, get_checker
from fcenv.chat_mode import ChatMode
from fcenv.chat_view import ChatView
from fcenv.data import content_key, load_tasks
from fcenv.episode import EpisodeSettings, SingleTurnEpisode, StepOutcome, calls_info
from fcenv.sources.resolve import resolve_dataset
from fcenv.prompt_variations import PromptVariation, format_sensitivity_configs, variation_conflicts
from fcenv.prompts import BFCL_SYSTEM_PROMPT, Renderer, get_renderer
from fcenv.rewards import PROCESS_SHARE, RewardFn, get_reward_fn, pays_per_step, pays_per_turn
from fcenv.spaces import UnicodeText
from fcenv.tasks import Task
from fcenv.tool_formats import ToolFormat

# Long enough for BFCL's long-context prompts, which run to a few hundred thousand characters.
MAX_TEXT_LENGTH = 1 << 24
_ORDERS = ("random", "sequential")


@lru_cache(maxsize=16)
def _load_cached(path: Path, answers: str | None, content: str) -> tuple[Task, ...]:
    return tuple(load_tasks(path, answers=answers))


def dataset_tasks(path: str | Path, answers: str | Path | None = None) -> list[Task]:
    """The tasks of a ``dataset_path`` (a question file, a bundled split's name, a source or a
    mix: ``fcenv.sources.resolve``), parsed once per content and process: tasks are immutable,
    so the sub-environments of a vector env, and a command that checked the file before loading
    its model, share one parsed copy, and an env made after the file or its possible answers
    were edited reads them again (``content_key``)."""
    path = resolve_dataset(path).resolve()
    try:
        content = content_key(path, answers)
    except OSError:  # no file, a folder, one it may not read: the loader's clear error
        return load_tasks(path, answers=answers)
    return list(_load_cached(path, str(answers) if answers else None, content))


def _check_decoder_and_checker(handler: str | None, checker: str | Callable | None, tasks: list[Task]) -> None:
    """Unknown names are refused here, not at the first step; a named single-turn checker
    cannot judge multi-turn turns."""
    from fcenv.handlers import get_handler

    if handler is not None:
        get_handler(handler)  # KeyError naming the registered ones
    if checker is None or callable(checker):
        return
    get_checker(checker)
    if checker != "multi_turn" and any(t.is_multi_turn for t in tasks):
        raise ValueError(f"checker={checker!r} judges single-turn answers; multi-turn entries are judged turn by "
                         f"turn from a checkers.multi_turn.TurnRecord: use 'multi_turn' (the default) or a "
                         f"callable(task, TurnRecord) -> CheckResult")


def _search_source(web_search: Any, tasks: list[Task]):
    """The search source of the dataset's web-search entries, opened (and checked) now; refused
    when they have none, naming what they need."""
    from fcenv.agentic.loading import WEB_SEARCH_CLASS

    searching = [t.id for t in tasks if WEB_SEARCH_CLASS in t.involved_classes]
    if web_search is None:
        if searching:
            from fcenv.search import NEEDED

            raise ValueError(f"the dataset holds {len(searching)} web-search entries ({', '.join(searching[:3])}"
                             f"{', ...' if len(searching) > 3 else ''}): they search the web; give {NEEDED}")
        return None
    from fcenv.search import open_search_source

    return open_search_source(web_search)


class FunctionCallingEnv(gym.Env[str, str]):
    """A BFCL dataset as an environment.

    Args:
        dataset_path: a BFCL question file (JSON Lines; answers in ``possible_answer/`` beside
            it) or one JSON file in the prior implementation's format; or a training set in
            another format (JSON Lines, JSON, Parquet or a ``datasets`` save_to_disk folder),
            converted on first use, or several mixed, ``"a.jsonl:2,b.parquet:1"``
            (``fcenv.sources``).
        tasks: already-loaded tasks, instead of ``dataset_path``.
        answers_path: the possible-answer file, when it is not in BFCL's layout.
        handler: the decoder's registered name for every task; None picks BFCL's decoder
            (the task's language for AST categories, Python otherwise).
        checker: a registered checker name or a callable ``(task, decoded) -> CheckResult``
            for every task; None picks by category, BFCL's way. On multi-turn entries it
            judges each turn: ``(task, checkers.multi_turn.TurnRecord) -> CheckResult``.
        reward: a name in ``fcenv.rewards.REWARDS``: ``"bfcl"`` (1 if valid else 0),
            ``"shaped"`` (1 if valid, else at most 0.5 of partial credit from the checker's
            facets), ``"steps"`` (multi-turn steps paid as they happen, StepTool; shaped on
            single-turn entries) or one a package registers; or a callable
            ``(CheckResult) -> float``. ``reward_weights`` changes some of the facet weights of
            the weighted rewards (``fcenv.rewards``).
        system_prompt: the system prompt template, ``{functions}`` marking where the JSON
            docs go; BFCL's prompting prompt by default.
        renderer: ``"chatml"`` (default), ``"plain"``, a callable ``(messages) -> str``, or a
            tokenizer (its chat template renders the chat). With ``tool_format``: a tokenizer
            (its template, given ``tools=``), a callable ``(messages, tools) -> str``, or None for
            the family's template from ``fcenv/chat_templates``.
        tool_format: native tool calling (BFCL's FC mode) in a model family's format:
            ``"hermes"`` (``<tool_call>`` blocks, Qwen), ``"llama_json"`` (bare JSON, Llama 3.x)
            or ``"mistral"`` (``[TOOL_CALLS]``), or a ``ToolFormat``; see ``fcenv.tool_formats``.
            No system prompt is added; the tools go to the chat template and are in
            ``info["tools"]``; tool results come back as ``tool`` messages with their call's id.
            None (default): BFCL's prompting format.
        order: ``"random"`` (an entry drawn with the env's seeded generator at each reset) or
            ``"sequential"`` (entries in file order, wrapping around).
        max_steps_per_turn: multi-turn step limit per turn (BFCL's is 20).
        backend_package: a module prefix holding classes with BFCL's backend names, to run
            multi-turn calls on instead of ours (for differential tests).
        web_search: where BFCL's web-search tools get their answers (``fcenv.search``): a
            snapshot file recorded with ``fcenv web-snapshot``, a folder of one's own documents
            (searched with BM25), ``"KIND:PATH"`` for a registered kind, or a search source
            object. Needed when the dataset holds web-search entries; fcenv has no live search.
        prompt_variation: one of BFCL v4's format-sensitivity prompts for the single-turn
            Python entries (``fcenv.prompt_variations``): a configuration such as
            ``"ret_fmt=json&tool_call_tag=True&func_doc_fmt=xml&prompt_fmt=plaintext&style=classic"``,
            ``"random"`` (one of BFCL's 26 drawn with the env's seeded generator at each reset)
            or None / ``"none"`` (BFCL's default prompt). The episode's answer is read in the
            drawn configuration's return format and tag, as BFCL's runner reads it; ``info``
            names it (``prompt_variation``). ``reset(options={"prompt_variation": config})``
            sets one episode's. Not with ``tool_format``, ``handler`` or another ``system_prompt``.
    """

    # Gymnasium's checker expects render_fps; a text env has no frame rate, so one frame a step.
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        dataset_path: str | Path | None = None,
        *,
        tasks: list[Task] | None = None,
        answers_path: str | Path | None = None,
        handler: str | None = None,
        checker: str | Callable | None = None,
        reward: str | RewardFn = "bfcl",
        reward_weights: Mapping[str, float] | None = None,
        system_prompt: str | None = None,
        renderer: str | Renderer | Any | None = None,
        tool_format: str | ToolFormat | None = None,
        order: str = "random",
        max_steps_per_turn: int = 20,
        backend_package: str | None = None,
        web_search: Any = None,
        render_mode: str | None = None,
        prompt_variation: str | None = None,
    ):
        if (dataset_path is None) == (tasks is None):
            raise ValueError("give exactly one of dataset_path and tasks")
        if order not in _ORDERS:
            raise ValueError(f"order must be one of {_ORDERS}, not {order!r}")
        if isinstance(max_steps_per_turn, bool) or not isinstance(max_steps_per_turn, numbers.Integral) \
                or max_steps_per_turn < 1:
            raise ValueError(f"max_steps_per_turn must be a whole number of 1 or more, not {max_steps_per_turn!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.tasks = list(tasks) if tasks is not None else dataset_tasks(Path(dataset_path), answers_path)
        if not self.tasks:
            raise ValueError("the environment needs at least one task")
        self._index = {t.id: i for i, t in enumerate(self.tasks)}
        # Which tasks, in which order: a snapshot holds a cursor and an episode of these.
        self._dataset_fingerprint = hashlib.sha256("\0".join(f"{t.source}\0{t.id}" for t in self.tasks).encode()).hexdigest()
        _check_decoder_and_checker(handler, checker, self.tasks)
        search_source = _search_source(web_search, self.tasks)
        self.reward_fn = get_reward_fn(reward, reward_weights)
        # The keywords enter as a chat mode: a tool format's name resolved, and what a tool format
        # leaves no place for (a system prompt, a decoder) refused, there (fcenv.chat_mode).
        tool_format = ChatMode(tool_format=tool_format, system_prompt=system_prompt, handler=handler).tool_format
        self.settings = EpisodeSettings(
            handler=handler,
            checker=checker,
            system_prompt=BFCL_SYSTEM_PROMPT if system_prompt is None else system_prompt,
            max_steps_per_turn=int(max_steps_per_turn),
            backend_package=backend_package,
            turn_rewards=pays_per_turn(self.reward_fn),
            tool_format=tool_format,
            web_search=search_source,
        )
        conflicts = variation_conflicts(prompt_variation, tool_format=tool_format is not None, handler=handler is not None,
                                        system_prompt=system_prompt not in (None, BFCL_SYSTEM_PROMPT))
        if conflicts:
            raise ValueError("; ".join(conflicts))
        self.prompt_variation = "none" if prompt_variation is None else prompt_variation
        self.renderer = get_renderer(renderer, self.settings.tool_format)
        self.order = order
        self.render_mode = render_mode
        # A chat grows with every step (an action may be MAX_TEXT_LENGTH long and a multi-turn
        # episode has many): no bound on the observation holds, so the space declares none.
        self.observation_space = UnicodeText(sys.maxsize)
        self.action_space = UnicodeText(MAX_TEXT_LENGTH)
        self._cursor = 0
        self._episode = None
        self._chat: ChatView | None = None

    # ------------------------------------------------------------------ Gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._cursor = 0  # a seeded reset starts the sequence again, as it restarts random draws
        task = self.tasks[self._pick(options or {})]
        variation = self._draw_variation((options or {}).get("prompt_variation", self.prompt_variation))
        self._start(self._new_episode(task, replace(self.settings, prompt_variation=variation)))
        return self._observation(), self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._episode is None or self._episode.done:
            raise ResetNeeded("call reset() before step(): the episode has ended")
        if not isinstance(action, str):
            raise TypeError(f"the action must be the model's text (str), not {type(action).__name__}")
        outcome: StepOutcome = self._episode.step(action)
        if pays_per_step(self.reward_fn) and self._episode.task.is_multi_turn:
            reward = self._step_reward(outcome)
        else:
            scored = outcome.reward_result or outcome.result
            reward = float(self.reward_fn(scored)) * outcome.reward_scale if outcome.reward_scale else 0.0
        info = self._info(outcome)
        return self._observation(), reward, outcome.terminated, outcome.truncated, info

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self._episode is not None:
            return self._observation()
        return None

    # ------------------------------------------------------------------ snapshots

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to continue this episode later; see ``restore``."""
        return {"episode": copy.deepcopy(self._episode, self._shared()), "rng": copy.deepcopy(self.np_random.bit_generator.state),
                "cursor": self._cursor, "dataset": self._dataset_fingerprint}

    def restore(self, snapshot: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Continue from a snapshot; the snapshot itself stays usable for further branches.
        Returns the observation and info there, as ``reset`` does."""
        if snapshot.get("dataset") != self._dataset_fingerprint:
            raise ValueError("this snapshot was taken in an environment on another dataset; restore it into an "
                             "environment built on the same tasks")
        self._start(copy.deepcopy(snapshot["episode"], self._shared()))
        self.np_random.bit_generator.state = copy.deepcopy(snapshot["rng"])
        self._cursor = snapshot["cursor"]
        return self._observation(), self._info()

    # ------------------------------------------------------------------ internals

    def _shared(self) -> dict[int, Any]:
        """What a snapshot shares instead of copying (``deepcopy``'s memo): the search source,
        read-only and possibly large (a corpus' index), which every episode of the env uses."""
        source = self.settings.web_search
        return {} if source is None else {id(source): source}

    def _step_reward(self, outcome: StepOutcome) -> float:
        """``StepReward`` on a multi-turn step: a step with calls is paid from its turn's process
        budget; a turn's end tops the turn up to its verdict's reward (``fcenv.rewards``)."""
        episode, info = self._episode, outcome.info or {}
        task = episode.task
        turn_share = 1.0 / len(task.ground_truth)
        if "turn_valid" not in info:  # a step with calls, the turn goes on
            truth_calls = len(task.ground_truth[info["turn"]])
            credit = self.reward_fn.step_credit(outcome.result.facets, len(outcome.calls or []), truth_calls)
            credit = min(credit, 1.0 - episode.process_paid)
            episode.process_paid += credit
            return turn_share * PROCESS_SHARE * credit
        paid, episode.process_paid = episode.process_paid, 0.0
        if not outcome.reward_scale:
            # Cut off by the step limit: the turn earns nothing, what its steps were paid is taken back.
            return -turn_share * PROCESS_SHARE * paid
        verdict = float(self.reward_fn(outcome.reward_result or outcome.result))
        return turn_share * max(0.0, verdict - PROCESS_SHARE * paid)

    @property
    def task(self) -> Task | None:
        return None if self._episode is None else self._episode.task

    def _pick(self, options: dict[str, Any]) -> int:
        if "id" in options:
            try:
                return self._index[options["id"]]
            except KeyError:
                raise KeyError(f"no entry with id {options['id']!r} in the dataset") from None
        if "index" in options:
            index = options["index"]
            if isinstance(index, bool) or not isinstance(index, numbers.Integral):
                raise TypeError(f"options['index'] must be a whole number, not {index!r}")
            index = int(index)
            if not 0 <= index < len(self.tasks):
                raise IndexError(f"index {index} is outside the dataset's {len(self.tasks)} entries")
            return index
        if self.order == "sequential":
            index, self._cursor = self._cursor, (self._cursor + 1) % len(self.tasks)
            return index
        return int(self.np_random.integers(len(self.tasks)))

    def _draw_variation(self, choice: str) -> PromptVariation | None:
        """The episode's prompt variation: none, the one named, or one of BFCL's drawn."""
        if choice in (None, "none"):
            return None
        if choice == "random":
            configs = format_sensitivity_configs()
            return PromptVariation.parse(configs[int(self.np_random.integers(len(configs)))])
        return PromptVariation.parse(choice)

    def _new_episode(self, task: Task, settings: EpisodeSettings | None = None):
        settings = settings or self.settings
        if task.kind == "agentic" and not task.prerequisites and "WebSearchAPI" in task.involved_classes:
            from fcenv.agentic.web_episode import WebSearchEpisode

            return WebSearchEpisode(task, settings)
        if task.kind == "agentic":
            from fcenv.agentic.episode import MemoryEpisode

            return MemoryEpisode(task, settings)
        if task.is_multi_turn:
            from fcenv.multi_turn.episode import MultiTurnEpisode

            return MultiTurnEpisode(task, settings)
        return SingleTurnEpisode(task, settings)

    def _start(self, episode) -> None:
        self._episode = episode
        self._chat = ChatView(episode, self.renderer, self.settings.tool_format is not None)

    def _observation(self) -> str:
        return self._chat.observation()

    def _info(self, outcome: StepOutcome | None = None) -> dict[str, Any]:
        task = self._episode.task
        info: dict[str, Any] = {"id": task.id, "category": task.category, "messages": self._chat.messages()}
        if self._episode.settings.varies(task):
            info["prompt_variation"] = self._episode.settings.prompt_variation.config
        if self.settings.tool_format is not None:
            info["tools"] = self._chat.tools()
        if outcome is not None:
            result: CheckResult = outcome.result
            info.update(
                valid=result.valid,
                error_type=result.error_type,
                errors=result.errors,
                facets=dict(result.facets),
                calls=calls_info(outcome.calls),
            )
            info.update(outcome.info or {})
        return info
