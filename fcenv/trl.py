"""fcenv's tasks and verdicts inside TRL's trainers (GRPOTrainer, RLOOTrainer, ...).

``EpisodeRollout`` is a ``rollout_func``: it plays each prompt's episode (``episode_dataset``;
multi-turn or not) to its end with the trainer's model, the env's tool results and later user
turns between the steps, and hands TRL the sampled tokens with the env's tokens masked
(``env_mask``); its ``reward_func`` pays the env's reward. For single-turn tasks,
``prompt_dataset`` gives each row's chat and ``task_index``, and ``VerdictReward`` steps an env
on that task with each completion's text (reward ``"bfcl"`` or ``"shaped"``), keeping every
verdict (``verdicts``). FC mode: ``tool_format=``. Examples: docs/doors.md.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from numbers import Integral
from pathlib import Path
from typing import Any

from fcenv.chat_mode import ChatMode
from fcenv.env import FunctionCallingEnv


def _single_turn_indices(env: FunctionCallingEnv, path: str | Path, indices: Sequence[int] | None) -> list[int]:
    tasks = env.tasks
    chosen = list(range(len(tasks))) if indices is None else [int(i) for i in indices]
    # An agentic entry's answer comes after its tool calls ran: a whole episode too.
    multi = [tasks[i].id for i in chosen if tasks[i].is_multi_turn or tasks[i].kind == "agentic"]
    if multi:
        raise ValueError(f"{path}: {len(multi)} multi-turn entries, agentic ones counted (first: {multi[0]}); a reward function "
                         f"judges one completion per prompt; play multi-turn tasks with EpisodeRollout and "
                         f"episode_dataset")
    return chosen


def prompt_dataset(dataset_path: str | Path, *, system_prompt: str | None = None,
                   indices: Sequence[int] | None = None, tool_format: str | None = None, renderer: Any = None):
    """A ``datasets.Dataset`` with ``prompt``, ``task_index`` and ``task_id`` per single-turn
    task of a BFCL question file (or the chosen ``indices``).

    ``prompt`` is the chat (messages), which TRL renders with the model's template. In FC mode
    (``tool_format``) each task has its own tools, while TRL's trainers take one tool list for
    all prompts, so ``prompt`` is the text already rendered with the task's tools by
    ``renderer`` (the model's tokenizer, as the env takes it), and ``tools`` holds them as JSON.
    """
    import json

    from datasets import Dataset

    # Prompting: the chat's messages are the prompt, the env's rendering is not used.
    chat_mode = ChatMode.from_flags(tool_format, system_prompt, fc_renderer=renderer)
    env = FunctionCallingEnv(dataset_path=str(dataset_path), **chat_mode.env_options())
    rows = []
    for index in _single_turn_indices(env, dataset_path, indices):
        observation, info = env.reset(options={"index": index})
        row = {"prompt": info["messages"], "task_index": index, "task_id": info["id"]}
        if chat_mode.is_fc:
            row.update(prompt=observation, tools=json.dumps(info["tools"]))
        rows.append(row)
    return Dataset.from_list(rows)


def _text(completion: Any, where: str) -> str:
    """A completion as TRL passes it: text, or (conversational) a list of messages, whose
    assistant messages' text contents are joined. ``TypeError`` naming ``where`` otherwise."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and all(isinstance(m, dict) for m in completion):
        contents = [m.get("content") for m in completion if m.get("role") == "assistant"]
        if all(c is None or isinstance(c, str) for c in contents):
            return "".join(c or "" for c in contents)
        raise TypeError(f"{where}: an assistant message's content is not text: "
                        f"{next(c for c in contents if not (c is None or isinstance(c, str)))!r:.200}")
    raise TypeError(f"{where} is {type(completion).__name__} {completion!r:.200}, not text or a list of messages")


def _same_lengths(caller: str, **columns: Sequence[Any] | None) -> None:
    """TRL hands a reward function one value per completion in every column: a column of another
    length would pair completions with the wrong rows (zip stops at the shortest), so it is refused."""
    given = {name: len(values) for name, values in columns.items() if values is not None}
    if len(set(given.values())) > 1:
        raise ValueError(f"{caller}: the columns differ in length ({', '.join(f'{n}: {k}' for n, k in given.items())}); "
                         f"each completion needs its own row's values")


class VerdictReward:
    """A TRL reward function: fcenv's reward for each completion on its row's task."""

    def __init__(self, dataset_path: str | Path, *, reward: str | Callable = "bfcl", system_prompt: str | None = None,
                 handler: str | None = None, checker: str | Callable | None = None, tool_format: str | None = None):
        # The answer is judged, not rendered: FC mode needs no template here.
        chat_mode = ChatMode.from_flags(tool_format, system_prompt, fc_renderer=lambda messages, tools: "")
        self.env = FunctionCallingEnv(dataset_path=str(dataset_path), reward=reward, handler=handler, checker=checker,
                                      **chat_mode.env_options())
        self.dataset_path = dataset_path
        self.__name__ = f"fcenv_{reward if isinstance(reward, str) else getattr(reward, '__name__', 'reward')}"
        self.verdicts: list[dict[str, Any]] = []

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], task_index: Sequence[int],
                 **_: Any) -> list[float]:
        _same_lengths(self.__name__, prompts=prompts, completions=completions, task_index=task_index)
        texts = [_text(c, f"{self.__name__}: completion {k}") for k, c in enumerate(completions)]
        count = len(self.env.tasks)
        for k, index in enumerate(task_index):
            if isinstance(index, bool) or not isinstance(index, (int, Integral)) or not 0 <= index < count:
                raise ValueError(f"{self.__name__}: task_index {index!r} of completion {k} is not a task of "
                                 f"{self.dataset_path} (0 to {count - 1})")
        rewards = []
        for text, index in zip(texts, task_index):
            self.env.reset(options={"index": int(index)})
            _, reward, _, _, info = self.env.step(text)
            rewards.append(float(reward))
            self.verdicts.append({"id": info["id"], "valid": info["valid"], "error_type": info["error_type"]})
        return rewards

    @property
    def accuracy(self) -> float:
        """The share of valid verdicts so far."""
        return sum(v["valid"] for v in self.verdicts) / len(self.verdicts) if self.verdicts else 0.0


# ---------------------------------------------------------------------------------------------
# Whole episodes, multi-turn included: a rollout_func.

# The key on each prompt's first message that names its task: TRL hands a rollout_func the
# prompts alone, not the dataset's other columns, and two tasks may start with the same chat.
TASK_KEY = "fcenv_task"


def episode_dataset(dataset_path: str | Path, *, indices: Sequence[int] | None = None, **env_options: Any):
    """A ``datasets.Dataset`` for ``EpisodeRollout``: per task (single- or multi-turn) of a
    question file, or of the chosen ``indices``, ``prompt`` (the task's first chat, the first
    message carrying the task's index under ``TASK_KEY``), ``task_index`` and ``task_id``.
    ``env_options`` are the env's (``system_prompt``, ``tool_format``, ...), as given to the
    rollout."""
    from datasets import Dataset

    from fcenv.doors.core import make_env

    env = make_env(dataset_path, **env_options)
    chosen = range(len(env.tasks)) if indices is None else [int(i) for i in indices]
    rows = []
    for index in chosen:
        _, info = env.reset(options={"index": index})
        prompt = info["messages"]
        prompt[0] = {**prompt[0], TASK_KEY: index}
        rows.append({"prompt": prompt, "task_index": index, "task_id": info["id"]})
    return Dataset.from_list(rows)


class EpisodeReward:
    """The reward function that goes with ``EpisodeRollout``: each episode's summed env reward,
    which the rollout passes on (``fcenv_reward``). It also logs the share of BFCL-valid
    episodes (``fcenv/accuracy``)."""

    def __init__(self, name: str):
        self.__name__ = name

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], fcenv_reward: Sequence[float],
                 fcenv_valid: Sequence[bool] = (), log_metric: Callable | None = None, **_: Any) -> list[float]:
        _same_lengths(self.__name__, completions=completions, fcenv_reward=fcenv_reward,
                      fcenv_valid=fcenv_valid or None)
        if log_metric is not None and fcenv_valid:
            log_metric("fcenv/accuracy", sum(map(bool, fcenv_valid)) / len(fcenv_valid))
        return [float(r) for r in fcenv_reward]


class EpisodeRollout:
    """TRL's ``rollout_func`` for fcenv episodes, every BFCL category, single- and multi-turn.

    Each prompt (a row of ``episode_dataset``) is played to the episode's end with the
    trainer's model (``transformers``' ``generate`` with the trainer's sampling settings), all
    live episodes of the batch sampled together at each step. The env's messages after a step
    (tool results, the next user turn, multi_turn_miss_func's announcement) are appended as the
    chat template renders them, as tokens masked from the loss (``env_mask``); the model's
    tokens are the ones it sampled, with their sampling log-probs. ``max_step_tokens`` bounds
    one step (default: GRPOConfig's ``max_completion_length``), which also bounds the whole
    episode's completion; an episode that runs out of room is finished without the model, its
    remaining turns unanswered (``fcenv.doors.core.Episode.finish``).

    ``env_options`` are the env's: ``reward`` (``"bfcl"``, ``"shaped"``, ``"steps"`` or a
    callable), ``tool_format`` (FC mode; the tools go to the tokenizer's chat template, or the
    family's where it renders none), ``system_prompt``, ``handler``, ``checker``,
    ``backend_package``, ``max_steps_per_turn``. Pass ``reward_funcs=rollout.reward_func``; the
    episodes' outcomes are kept in ``outcomes`` and the actions taken counted in ``actions``.
    """

    def __init__(self, dataset_path: str | Path, *, max_step_tokens: int | None = None, **env_options: Any):
        from fcenv.doors.core import make_env

        if max_step_tokens is not None and int(max_step_tokens) < 1:
            raise ValueError(f"max_step_tokens must be 1 or more, not {max_step_tokens!r}")
        self.dataset_path = dataset_path
        self.env_options = dict(env_options)
        self.max_step_tokens = max_step_tokens
        self._envs = [make_env(dataset_path, **env_options)]  # bad options are refused here
        self.tool_format = self._envs[0].settings.tool_format  # as the env resolved it (None: prompting)
        reward = env_options.get("reward", "bfcl")
        self.reward_func = EpisodeReward(f"fcenv_{reward if isinstance(reward, str) else getattr(reward, '__name__', 'reward')}")
        self.outcomes: list[dict[str, Any]] = []
        self.actions = 0

    @property
    def accuracy(self) -> float:
        """The share of BFCL-valid episodes so far."""
        return sum(o["valid"] for o in self.outcomes) / len(self.outcomes) if self.outcomes else 0.0

    def _task_of(self, prompt: Any) -> int:
        first = prompt[0] if isinstance(prompt, list) and prompt and isinstance(prompt[0], dict) else {}
        index = first.get(TASK_KEY)
        if index is None:
            raise ValueError(f"a prompt without its task: EpisodeRollout plays the rows of fcenv.trl.episode_dataset"
                             f"({str(self.dataset_path)!r}), whose first message names the task under {TASK_KEY!r}")
        return int(index)

    def _env(self, slot: int):
        from fcenv.doors.core import make_env

        while len(self._envs) <= slot:
            self._envs.append(make_env(self.dataset_path, **self.env_options))
        return self._envs[slot]

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list]:
        import torch
        from trl.models import unwrap_model_for_generation

        from fcenv.doors.core import Episode
        from fcenv.doors.tokens import ChatTemplate, TokenEpisode

        if getattr(trainer, "use_vllm", False):
            raise ValueError("EpisodeRollout samples with the trainer's own model (transformers' generate); "
                             "set use_vllm=False")
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        template = ChatTemplate(tokenizer, self.tool_format.chat_template if self.tool_format else None)
        total = int(trainer.max_completion_length)
        step_tokens = min(int(self.max_step_tokens or total), total)
        positions = getattr(trainer.model.config, "max_position_embeddings", None)
        episodes = []
        for slot, prompt in enumerate(prompts):
            episode = Episode(self._env(slot), index=self._task_of(prompt))
            playing = TokenEpisode(episode, template, budget=total)
            if positions:
                playing.budget = min(total, int(positions) - len(playing.prompt_ids))
            episodes.append(playing)
        config = copy.deepcopy(trainer.generation_config)
        stop_ids = config.eos_token_id if isinstance(config.eos_token_id, list) else [config.eos_token_id]
        with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator,
                                         gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
                                         generation_kwargs=trainer.generation_kwargs) as model, torch.no_grad():
            while True:
                for playing in episodes:
                    if not playing.done and playing.room <= 0:
                        playing.finish()
                live = [playing for playing in episodes if not playing.done]
                if not live:
                    break
                budget = min(step_tokens, max(playing.room for playing in live))
                sampled = sample_steps(model, [p.context for p in live], config, budget, tokenizer.pad_token_id,
                                       stop_ids)
                for playing, (ids, logprobs) in zip(live, sampled):
                    playing.add(ids, logprobs)
        out: dict[str, list] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [],
                                "fcenv_reward": [], "fcenv_valid": [], "fcenv_actions": []}
        for playing in episodes:
            if not playing.completion_ids:  # no room at all: one masked token, as TRL needs one
                playing.completion_ids, playing.mask, playing.logprobs = [template.eos_id], [0], [0.0]
            summary = playing.episode.summary()
            self.outcomes.append({**summary, "actions": playing.actions})
            self.actions += playing.actions
            out["prompt_ids"].append(playing.prompt_ids)
            out["completion_ids"].append(playing.completion_ids)
            out["logprobs"].append(playing.logprobs)
            out["env_mask"].append(playing.mask)
            out["fcenv_reward"].append(summary["reward"])
            out["fcenv_valid"].append(summary["valid"])
            out["fcenv_actions"].append(playing.actions)
        return out


def sample_steps(model, contexts: list[list[int]], config, max_new_tokens: int, pad_id: int | None,
                 stop_ids: Sequence[int]) -> list[tuple[list[int], list[float]]]:
    """One step of each context, sampled together (left-padded): the tokens up to and including
    the first stop token, with their log-probs under the sampling distribution (the scores
    after temperature, top-k and top-p)."""
    import torch

    pad = pad_id if pad_id is not None else stop_ids[0]
    width = max(map(len, contexts))
    ids = torch.full((len(contexts), width), pad, dtype=torch.long)
    mask = torch.zeros((len(contexts), width), dtype=torch.long)
    for row, context in enumerate(contexts):
        ids[row, width - len(context):] = torch.tensor(context)
        mask[row, width - len(context):] = 1
    device = next(model.parameters()).device
    config = copy.copy(config)
    config.max_new_tokens, config.pad_token_id = max_new_tokens, pad
    config.output_scores = config.return_dict_in_generate = True
    out = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device), generation_config=config)
    new = out.sequences[:, width:]
    logprobs = torch.stack([torch.log_softmax(scores.float(), dim=-1).gather(1, new[:, t:t + 1]).squeeze(1)
                            for t, scores in enumerate(out.scores)], dim=1)
    stops = set(stop_ids)
    steps = []
    for tokens, values in zip(new.tolist(), logprobs.tolist()):
        end = next((i + 1 for i, token in enumerate(tokens) if token in stops), len(tokens))
        steps.append((tokens[:end], values[:end]))
    return steps
