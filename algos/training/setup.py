"""Everything a run needs before its first iteration, each piece from the flags.

The data (the training file and its held-out tasks), the envs, the context window, the prompt
checks (every task's first context fits), the run folder with what the flags resolved to, and
the supervised warm-ups. Each is a function of the config and what is already built, so the
loop (``fcenv.algos.training.loop``) reads as the order in which they happen.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

import fcenv  # noqa: F401  (registers the environment id)
from fcenv.algos.config import ConfigError, TrainConfig, to_dict
from fcenv.algos.model.loading import LoadedModel, is_embedded, max_positions
from fcenv.algos.model.policy import Policy
from fcenv.algos.model.warmup import episode_groups, ground_truth_examples, supervised_steps, value_regression_steps
from fcenv.algos.rollout.codec import TextCodec, chat_of
from fcenv.algos.rollout.groups import GROUP_REWARDS
from fcenv.algos.store.data_fingerprint import tasks_fingerprint
from fcenv.algos.store.results import new_run_dir, run_parent, write_args
from fcenv.algos.tiny.build import BUNDLED_EVAL, bundled_train_split
from fcenv.chat_mode import ChatMode


@dataclass(frozen=True)
class DataFiles:
    """The question files of a run: ``--dataset_path`` (by default ``fcenv.flags.DEFAULT_DATASET``)
    and the held-out file, resolved once at the run's start (``resolve_data``) and handed down."""

    train: Path
    held_out: Path | None  # --eval_dataset_path's, a bundled split's own, or None: a share of train
    web_search: Any = None  # --web_search's source, opened once, for the web-search entries' tools

    @property
    def eval(self) -> Path:
        return self.held_out or self.train


@dataclass
class Data:
    """The training file with the tasks drawn from it, and the held-out file with its tasks."""

    train_path: Path
    train_indices: list[int]
    eval_path: Path
    eval_indices: list[int]
    files: DataFiles


def split_indices(count: int, eval_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """A fixed held-out share of one file's entries (the same for every seed of a run)."""
    order = np.random.default_rng(seed).permutation(count)
    held = round(count * eval_fraction)
    if held >= count:
        raise ValueError("--eval_fraction leaves no training entries")
    return sorted(order[held:].tolist()), sorted(order[:held].tolist())


def check_lora_targets(model: torch.nn.Module, targets: list[str]) -> None:
    """Every --lora_target_modules name must name layers of the model (peft matches the end of
    a module's dotted name)."""
    names = [name for name, _ in model.named_modules()]
    missing = [t for t in targets if not any(n == t or n.endswith("." + t) for n in names)]
    if missing:
        linear = sorted({n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)})
        raise ConfigError(f"--lora_target_modules: the model has no module named {missing}; its linear "
                          f"layers are {linear}")


def run_chat_mode(config: TrainConfig, loaded: LoadedModel) -> ChatMode:
    """The run's chat mode: the model's (the flags' mode with its renderer), under
    --prompt_variation when one is given (the variation writes the system prompt)."""
    return loaded.chat_mode.varied(config.prompt_variation)


def make_env(config: TrainConfig, loaded: LoadedModel, path: Path, web_search=None) -> gym.Env:
    # A group reward (--reward efficiency) rewrites the rewards of an env reward it names.
    reward = GROUP_REWARDS.get(config.reward).env_reward if config.reward in GROUP_REWARDS else config.reward
    return gym.make(config.env_name, dataset_path=str(path), reward=reward, web_search=web_search,
                    max_steps_per_turn=config.max_steps_per_turn, **run_chat_mode(config, loaded).env_options())


def resolve_data(config: TrainConfig) -> DataFiles:
    """--dataset_path and --eval_dataset_path resolved to their question files (a source
    converted, a mix mixed: ``fcenv.sources``) and read, once per run; without
    --eval_dataset_path the held-out file is a bundled split's own held-out split, else none (a
    share of the training file is held out). ``ConfigError`` with every problem of both, each
    line naming its flag."""
    from fcenv.flags import dataset_spec, resolve_specs

    train_spec = dataset_spec(config.dataset_path)
    eval_specs = [config.eval_dataset_path] if config.eval_dataset_path else []
    train, wrong = resolve_specs("--dataset_path", [train_spec])
    held_out, wrong_eval = resolve_specs("--eval_dataset_path", eval_specs)
    if wrong or wrong_eval:
        raise ConfigError("\n".join(wrong + wrong_eval))
    if eval_specs:
        return DataFiles(train[train_spec], held_out[eval_specs[0]])
    bundled = bundled_train_split(train[train_spec])
    return DataFiles(train[train_spec], BUNDLED_EVAL[bundled] if bundled else None)


def data_record(config: TrainConfig, files: DataFiles) -> dict[str, dict[str, str]]:
    """The data files the flags name (as given, else the file they resolve to) with the
    fingerprint of their tasks (``fcenv.algos.store.data_fingerprint``)."""
    named = {"train": (config.dataset_path or str(files.train), files.train),
             "eval": (config.eval_dataset_path or str(files.eval), files.eval)}
    return {role: {"path": name, "sha256": tasks_fingerprint(path)} for role, (name, path) in named.items()}


def choose_data(config: TrainConfig, files: DataFiles, count_tasks: Callable[[Path], int]) -> Data:
    """The training file and the tasks drawn from it, and the held-out tasks: a bundled split's
    own held-out split, --eval_dataset_path, or a fixed share of the training file."""
    training, held_out = files.train, files.held_out
    count = count_tasks(training)
    if held_out is not None:
        train_indices, eval_indices = list(range(count)), list(range(count_tasks(held_out)))
    else:
        train_indices, eval_indices = split_indices(count, config.eval_fraction, seed=0)
        held_out = training
    if config.eval_episodes > 0:
        eval_indices = eval_indices[: config.eval_episodes]
    return Data(training, train_indices, held_out, eval_indices, files)


def context_window(config: TrainConfig, base: torch.nn.Module) -> int:
    """--context_window, or (0) what the model's config supports."""
    window = config.context_window or max_positions(base)
    if window <= config.max_new_tokens:
        raise ConfigError(f"--context_window ({window}{'' if config.context_window else ', the model maximum'}) must "
                          f"exceed --max_new_tokens ({config.max_new_tokens})")
    return window


def check_prompts(config: TrainConfig, loaded: LoadedModel, codec: TextCodec, data: Data,
                  new_env: Callable[[Path], gym.Env]) -> None:
    """Before anything heavy: the function docs are shown (or hiding them was asked for),
    and every task's first context fits the window, cut from the middle if need be."""
    hidden = loaded.chat_mode.hides_function_docs
    embedded_default = is_embedded(config.model_name_or_path) and not config.system_prompt
    for path in dict.fromkeys([data.train_path, data.eval_path]):
        env = new_env(path)
        tasks = env.unwrapped.tasks
        if hidden and not (config.hide_function_docs or embedded_default) and any(t.functions for t in tasks):
            raise ConfigError(f"--system_prompt has no '{{functions}}', so the function docs of {path} would not "
                              f"be shown to the model; add '{{functions}}' where they go, or pass "
                              f"--hide_function_docs if the model is meant to learn its functions from the data")
        for index in range(len(tasks)):
            observation, info = env.reset(options={"index": index})
            codec.encode_counted(observation, chat_of(info), f"{info['id']} of {path}")
        env.close()


def create_run_dir(config: TrainConfig, loaded: LoadedModel, data: Data, window: int, world: int) -> Path:
    """A new ``run<k>`` folder holding args.json: the flags, and what they resolved to (the data
    files, the system prompt and the base model's folder), so that anyone can rebuild the run's
    env and model. The embedded model is copied into the run (``base/``, a few MB), so the run
    stays loadable with ``AutoModelForCausalLM``/``AutoTokenizer`` and ``PeftModel`` after the
    cache is gone."""
    parent = run_parent(config.results_dir, config.experiment_name, loaded.label,
                        config.dataset_name or data.train_path.stem, config.algorithm_name)
    run_dir = new_run_dir(parent)
    base = loaded.path
    if is_embedded(config.model_name_or_path):
        shutil.copytree(base, run_dir / "base")
        base = run_dir / "base"
    resolved = {"train_path": str(data.train_path.resolve()), "eval_path": str(Path(data.eval_path).resolve()),
                "eval_indices": list(data.eval_indices), "context_window": window,
                "system_prompt": loaded.chat_mode.system_prompt, "tool_format": loaded.chat_mode.tool_format_name,
                "base_model": str(Path(base).resolve()),
                # What the data held when the run began: --resume refuses data changed since.
                "data": data_record(config, data.files)}
    write_args(run_dir, {**to_dict(config), "world_size": world, "resolved": resolved})
    return run_dir


def start_actor_from(adapter: str, policy: Policy, tokenizer, trainable_tokens: list[str]) -> None:
    """--adapter: its weights become the actor's start. Its trainable token rows must be the
    rows of the tokens the run names (the same count of rows for other tokens would load without
    a complaint and train the wrong rows)."""
    from fcenv.algos.model.loading import token_ids
    from fcenv.algos.store.checkpoint import adapter_settings, load_adapter_weights

    saved = tuple(sorted(adapter_settings(Path(adapter)).trainable_tokens))
    named = tuple(sorted(token_ids(tokenizer, trainable_tokens)))
    if saved != named:
        raise ConfigError(f"--adapter {adapter}: it trains the rows of tokens {list(saved)}, and --trainable_tokens "
                          f"names {list(named)}: give the tokens it was trained with")
    load_adapter_weights(Path(adapter), policy)


def actor_demonstrations(config: TrainConfig, loaded: LoadedModel, codec: TextCodec, data: Data,
                         web_search=None) -> list[tuple[list[int], list[int]]]:
    """(context, answer) tokens of the training tasks' ground truth, which the warm-up and
    --sft_coef learn (``web_search``: the run's search source, which a file of web-search
    entries needs to load)."""
    # The ground truth is Python calls, which BFCL's default prompt asks for: no variation here.
    shown = replace(run_chat_mode(config, loaded), prompt_variation=None)
    return ground_truth_examples(data.train_path, loaded.tokenizer, shown, codec.context_limit,
                                 data.train_indices, web_search=web_search)


def warm_up_actor(config: TrainConfig, policy: Policy, examples: list[tuple[list[int], list[int]]],
                  log: Callable[[str], None], progress: bool = False) -> None:
    """--warmup_steps supervised steps of the actor adapter on ``examples`` (``actor_demonstrations``)."""
    if config.warmup_steps <= 0:
        return
    batch = max(1, math.ceil(config.n_rollout_threads / config.gradient_cp_steps))
    # A multi-turn task's steps are drawn together and run as one sequence (one pass per task).
    start = time.perf_counter()
    losses = supervised_steps(lambda b: policy.token_logprobs(b)[0], policy.actor_parameters(), examples,
                              steps=config.warmup_steps, batch_size=batch, lr=config.warmup_lr, pad_id=policy.pad_id,
                              device=policy.device, seed=config.seed, groups=episode_groups(examples), chain=True,
                              token_budget=config.micro_batch_tokens, progress="actor warm-up" if progress else "")
    if losses:
        log(f"actor warm-up: {len(losses)} steps in {time.perf_counter() - start:.0f} s, "
            f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")


def warm_up_critic(config: TrainConfig, policy: Policy, examples: list[tuple[list[int], float]],
                   log: Callable[[str], None], progress: bool = False) -> None:
    """LPR's Monte Carlo prefix values (--critic_init_values) as the critic's first targets."""
    if not examples:
        return
    losses = value_regression_steps(
        lambda batch: policy.token_values(batch)[:, 0], policy.critic_parameters(), examples,
        steps=config.critic_init_steps, batch_size=config.n_rollout_threads, lr=config.critic_lr, pad_id=policy.pad_id,
        device=policy.device, seed=config.seed, progress="critic warm-up" if progress else "")
    if losses:
        log(f"critic warm-up on {len(examples)} Monte Carlo prefix values: {len(losses)} steps, "
            f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
