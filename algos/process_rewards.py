"""LPR's process rewards: the Monte Carlo value of every prefix of a trajectory, and
preference pairs for DPO.

``python -m fcenv process-rewards`` takes trajectories (sampled by a policy, or read from a
BFCL result file), cuts each one before every step, restores the env snapshot there and
samples ``--completions`` continuations from it with the policy: the value of the prefix is
the share of continuations whose entry ends valid (BFCL's verdict). Prefixes that are the
same state (every trajectory's first prefix is its task's prompt) are valued once. An action's
value is the value of the prefix it leads to, or its episode's verdict when it ends it.

It writes, in ``--out``:

- ``trajectories.jsonl``: one trajectory per line: ``id``, ``task_index``, ``valid``, the chat
  ``messages`` and ``steps`` (each step's ``message_index``, the position of its assistant
  message in the chat, its ``action`` text, the ``value`` of the prefix before it and the
  ``action_value``);
- ``pairs.jsonl``: preference pairs in the conversational format TRL's DPOTrainer reads
  (``prompt``: the chat before the step, ``chosen``/``rejected``: one assistant message each),
  from actions taken at the same state whose values differ by at least ``--margin``.

``train_fctncalling.py --critic_init_values trajectories.jsonl`` warm-starts the critic on the
prefix values before RL.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from fcenv.algos.model.loading import load_model, max_positions, token_ids
from fcenv.algos.model.policy import LoraSettings, Policy
from fcenv.algos.progress import progress_bar
from fcenv.algos.rollout.codec import TextCodec
from fcenv.algos.rollout.engine import Engine, EngineSettings, check_engine, make_engine
from fcenv.algos.rollout.play import play
from fcenv.algos.rollout.records import Rollout
from fcenv.algos.from_run import apply_run
from fcenv.algos.store.checkpoint import adapter_settings, load_actor_weights, load_adapter_weights
from fcenv.flags import memory_encoder_problems, open_web_search


@dataclass
class Sampler:
    """A policy with its engine, env and codec: what sampling trajectories and completions needs."""
    policy: Policy
    engine: Engine  # --rollout_engine, sampling with the policy's actor
    codec: TextCodec
    envs: list[gym.Env]
    max_new_tokens: int
    generator: torch.Generator
    dataset_path: Path
    held_out: frozenset[int] = frozenset()  # the run's held-out tasks in this file: never sampled
    tool_format: str | None = None  # FC mode's family (None: prompting)


@dataclass
class Trajectory:
    task_index: int
    texts: list[str]  # the actions, in order


@dataclass
class Replayed:
    """A trajectory replayed in the env: the state before each step and the end."""
    trajectory: Trajectory
    task_id: str
    message_index: list[int]  # per step: where its assistant message goes in the chat
    state_keys: list[str]  # per step: the state before it (the chat so far, as JSON)
    snapshots: list[dict | None]  # per step: the env snapshot before it (None: the task's start)
    messages: list[dict]
    valid: bool
    tools: list[dict] | None = None  # FC mode: the tools the template shows with the chat


def command_dataset(args: argparse.Namespace) -> Path:
    """The question file ``--dataset_path`` (by default ``fcenv.flags.DEFAULT_DATASET``) resolves
    to, checked: resolved once per run, here. ``ConfigError`` naming the flag otherwise."""
    from fcenv.algos.config import ConfigError
    from fcenv.flags import dataset_spec, resolve_specs

    spec = args.dataset_path = dataset_spec(args.dataset_path)
    files, problems = resolve_specs("--dataset_path", [spec])
    if problems:
        raise ConfigError("; ".join(problems))
    return files[spec]


def sampler_from_flags(args: argparse.Namespace, dataset: Path | None = None) -> Sampler:
    """The policy of a run's checkpoint (``--run``, as ``fcenv.algos.from_run`` applies it), of an
    adapter (``--adapter``), or a base model with a fresh (identity) actor adapter of the
    trainer's shape, with the flags' data (``dataset``: the question file the command resolved;
    by default ``command_dataset``'s), prompt or tool format, window and temperature, and the
    engine ``--rollout_engine`` names sampling with it (close it when done)."""
    from fcenv.algos.config import TrainConfig
    from fcenv.arguments import UsageError

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    saved = checkpoint = None
    if args.run:
        saved, checkpoint = apply_run(args)
    if dataset is None:
        dataset = command_dataset(args)
    search = open_web_search(args.web_search, [str(dataset)])  # before the model loads
    missing = memory_encoder_problems([str(dataset)])
    if missing:
        raise UsageError(missing[0])
    loaded = load_model(args.model_name_or_path, device, system_prompt=args.system_prompt,
                        dataset_path=dataset, tool_format=args.tool_format)
    held_out: frozenset[int] = frozenset()
    if saved is not None:
        lora = LoraSettings(r=saved["lora_r"], alpha=saved["lora_alpha"], target_modules=list(saved["lora_target_modules"]),
                            trainable_tokens=token_ids(loaded.tokenizer, saved.get("trainable_tokens", [])))
        if Path(saved["resolved"]["eval_path"]).resolve() == dataset.resolve():
            held_out = frozenset(int(i) for i in saved["resolved"]["eval_indices"])
    elif args.adapter:
        lora = adapter_settings(Path(args.adapter))
    else:
        # The trainer's adapter, so that a run started from these values has the same shape.
        defaults = TrainConfig()
        lora = LoraSettings(r=defaults.lora_r, alpha=defaults.lora_alpha, target_modules=list(defaults.lora_target_modules))
    window = args.context_window or max_positions(loaded.base)
    temperature, max_new_tokens = args.temperature, args.max_new_tokens
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, actor_lora=lora,
                    temperature=temperature, with_critic=False).to(device)
    if checkpoint is not None:
        load_actor_weights(checkpoint, policy)
    elif args.adapter:
        load_adapter_weights(Path(args.adapter), policy)
    policy.eval()
    # The model's chat mode, as the trainer shows it the chats (a run's prompt variation included).
    chat_mode = loaded.chat_mode.varied(args.prompt_variation)
    envs = [gym.make("fcenv/FunctionCalling-v0", dataset_path=str(dataset), reward="bfcl",
                     **chat_mode.env_options(), web_search=search) for _ in range(args.n_rollout_threads)]
    codec = TextCodec(loaded.tokenizer, window - max_new_tokens, render=envs[0].unwrapped.renderer,
                      stop_ids=loaded.stop_ids)
    generator = torch.Generator(device=device)
    generator.manual_seed(args.seed)
    settings = EngineSettings(Path(loaded.path), window, args.seed, kv_cache_mib=args.kv_cache_mib)
    engine = make_engine(args.rollout_engine, policy, settings)
    return Sampler(policy, engine, codec, envs, max_new_tokens, generator, dataset, held_out,
                   chat_mode.tool_format_name)


def _play(sampler: Sampler, starts: Sequence[int | tuple[int, dict]], progress: str = "") -> list[tuple[int, bool, list[str]]]:
    """Play one episode from each start; per start (in order): (start number, verdict, texts).
    ``progress``: the description of a bar over the episodes (none when empty)."""
    jobs = deque(enumerate(starts))
    started: dict[int, deque] = defaultdict(deque)
    bar = progress_bar(len(starts), progress, unit="episode")

    def next_task(thread: int):
        if started[thread]:  # the thread asks again: its last episode is over
            bar.update(1)
        if not jobs:
            return None
        number, start = jobs.popleft()
        started[thread].append(number)
        return start

    rollout: Rollout = play(sampler.envs, sampler.engine, sampler.codec, next_task,
                            max_new_tokens=sampler.max_new_tokens, generator=sampler.generator)
    bar.update(len(starts) - bar.n)
    bar.close()
    out = []
    for episode in rollout.episodes:  # a thread's episodes end in the order they started
        actions = [rollout.actions[i] for i in episode.action_indices]
        out.append((started[actions[0].thread].popleft(), bool(actions[-1].info.get("valid")), [a.text for a in actions]))
    return sorted(out)


def replay(env: gym.Env, trajectory: Trajectory) -> Replayed:
    """Step the trajectory's texts through the env again (the env is deterministic), keeping a
    snapshot before every step. Texts after the episode's end are ignored."""
    observation, info = env.reset(options={"index": trajectory.task_index})
    tools = info.get("tools")
    message_index, keys, snapshots = [], [], []
    valid, texts = False, []
    for number, text in enumerate(trajectory.texts):
        messages = info["messages"]
        message_index.append(len(messages))
        keys.append(json.dumps(messages, sort_keys=True))
        snapshots.append(env.unwrapped.snapshot() if number else None)
        texts.append(text)
        observation, _, terminated, truncated, info = env.step(text)
        valid = bool(info.get("valid"))
        if terminated or truncated:
            break
    else:
        valid = False  # the texts ran out before the episode ended
    return Replayed(Trajectory(trajectory.task_index, texts), str(info["id"]), message_index, keys, snapshots,
                    info["messages"], valid, tools)


def monte_carlo_values(sampler: Sampler, replayed: list[Replayed], completions: int,
                       progress: bool = False) -> dict[tuple[int, str], float]:
    """The share of ``completions`` continuations that end valid, per distinct state."""
    states: dict[tuple[int, str], int | tuple[int, dict]] = {}
    for r in replayed:
        index = r.trajectory.task_index
        for key, snapshot in zip(r.state_keys, r.snapshots):
            states.setdefault((index, key), index if snapshot is None else (index, snapshot))
    order = list(states)
    results = _play(sampler, [states[key] for key in order for _ in range(completions)],
                    progress="Monte Carlo completions" if progress else "")
    valid = np.array([v for _, v, _ in results], dtype=float).reshape(len(order), completions)
    return {key: float(share) for key, share in zip(order, valid.mean(1))}


def step_records(r: Replayed, values: dict[tuple[int, str], float]) -> list[dict[str, Any]]:
    index = r.trajectory.task_index
    prefix_values = [values[(index, key)] for key in r.state_keys]
    action_values = prefix_values[1:] + [float(r.valid)]
    return [{"message_index": m, "action": text, "value": v, "action_value": q}
            for m, text, v, q in zip(r.message_index, r.trajectory.texts, prefix_values, action_values)]


def preference_pairs(replayed: list[Replayed], steps: list[list[dict]], margin: float) -> list[dict[str, Any]]:
    """Pairs of different actions taken at the same state whose values differ by ``margin``
    or more; an action taken several times there counts once, with its mean value."""
    at_state: dict[tuple[int, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    prompts: dict[tuple[int, str], tuple[str, list[dict], list[dict] | None]] = {}
    for r, records in zip(replayed, steps):
        for key, record in zip(r.state_keys, records):
            state = (r.trajectory.task_index, key)
            at_state[state][record["action"]].append(record["action_value"])
            prompts[state] = (r.task_id, r.messages[: record["message_index"]], r.tools)
    pairs = []
    for state, actions in at_state.items():
        scored = sorted(((float(np.mean(v)), text) for text, v in actions.items()), reverse=True)
        task_id, prompt, tools = prompts[state]
        # FC mode: the tools as JSON text, the column TRL's DPOTrainer passes to the chat template.
        shown = {"tools": json.dumps(tools)} if tools is not None else {}
        for i, (high, chosen) in enumerate(scored):
            for low, rejected in scored[i + 1:]:
                if high - low >= margin:
                    pairs.append({"id": task_id, "prompt": prompt, **shown,
                                  "chosen": [{"role": "assistant", "content": chosen}],
                                  "rejected": [{"role": "assistant", "content": rejected}],
                                  "chosen_value": high, "rejected_value": low})
    return pairs


def training_tasks(sampler: Sampler, count: int, seed: int) -> list[int]:
    """``count`` tasks drawn from the file (0: all), never a run's held-out ones: the values and
    pairs are training data."""
    usable = [i for i in range(len(sampler.envs[0].unwrapped.tasks)) if i not in sampler.held_out]
    return sorted(np.random.default_rng(seed).permutation(usable)[:count].tolist()) if count else usable


def trajectories_from_results(path: Path, dataset: Path) -> list[Trajectory]:
    """A BFCL result file's answers as trajectories (a multi-turn result's turns flattened)."""
    from fcenv.data import load_tasks
    from fcenv.evaluate import read_results

    tasks = load_tasks(str(dataset))
    position = {t.id: i for i, t in enumerate(tasks)}
    out = []
    for line in read_results(path, {t.id: t for t in tasks}):
        result = line.result
        texts = [result] if isinstance(result, str) else [step for turn in result for step in turn]
        if texts:
            out.append(Trajectory(position[line.id], texts))
    return out


def process_rewards(args: argparse.Namespace, dataset: Path | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    sampler = sampler_from_flags(args, dataset)
    try:
        return _process_rewards(args, sampler, started)
    finally:
        sampler.engine.close()


def _process_rewards(args: argparse.Namespace, sampler: Sampler, started: float) -> dict[str, Any]:
    if args.from_results:
        trajectories = trajectories_from_results(Path(args.from_results), sampler.dataset_path)
    else:
        chosen = training_tasks(sampler, args.tasks, args.seed)
        played = _play(sampler, [i for i in chosen for _ in range(args.trajectories)],
                       progress="trajectories" if args.progress else "")
        starts = [i for i in chosen for _ in range(args.trajectories)]
        trajectories = [Trajectory(starts[number], texts) for number, _, texts in played]
    replayed = [replay(sampler.envs[0], t) for t in trajectories]
    values = monte_carlo_values(sampler, replayed, args.completions, progress=args.progress)
    steps = [step_records(r, values) for r in replayed]
    pairs = preference_pairs(replayed, steps, args.margin)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _write_jsonl(out / "trajectories.jsonl", [
        {"id": r.task_id, "task_index": r.trajectory.task_index, "valid": r.valid, "messages": r.messages,
         **({"tools": r.tools} if r.tools is not None else {}), "steps": s} for r, s in zip(replayed, steps)])
    _write_jsonl(out / "pairs.jsonl", pairs)
    summary = {"tool_format": sampler.tool_format, "trajectories": len(replayed), "valid": float(np.mean([r.valid for r in replayed])) if replayed else 0.0,
               "states_valued": len(values), "completions": len(values) * args.completions, "pairs": len(pairs),
               "seconds": round(time.perf_counter() - started, 1)}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def prefix_value_examples(path: Path, codec: TextCodec, render, with_tools: bool = False,
                          values: list[tuple[list[dict], float]] | None = None) -> list[tuple[list[int], float]]:
    """(context tokens, Monte Carlo value) of every distinct prefix in a trajectories.jsonl,
    each context rendered and cut exactly as in rollouts (``with_tools``: FC mode, the
    trajectories' tools through the template, ``render(messages, tools)``). ``values``: the
    file as ``read_prefix_values`` read it already (the trainer reads it before the model
    loads); else it is read here. Raises ``ConfigError`` naming the file (and line) of
    anything unreadable, of trajectories sampled in the other mode, or of a prefix the model's
    chat template cannot render (or its window cannot hold)."""
    from fcenv.algos.config import ConfigError
    from fcenv.algos.input_files import read_prefix_values

    def rendered(chat: list[dict]) -> str:
        return render(list(chat)) if not with_tools else render(list(chat), chat.tools)

    if values is None:
        values = read_prefix_values(path, with_tools=with_tools)
    examples = []
    for chat, value in values:
        try:
            examples.append((codec.encode(rendered(chat), chat), value))
        except Exception as exc:  # noqa: BLE001  the template is the model's code: any failure is the file's
            raise ConfigError(f"--critic_init_values {path}: a prefix cannot be rendered into the model's "
                              f"context ({type(exc).__name__}: {exc})") from None
    return examples


def _check_files(args: argparse.Namespace) -> Path:
    """The run, the model folder or adapter, the dataset spec and the result file the flags name,
    before the model loads (or the tiny model builds). Returns the question file the dataset
    spec resolved to."""
    from fcenv.algos.input_files import check_model_folder
    from fcenv.env import dataset_tasks
    from fcenv.evaluate import read_results

    check_engine(args.rollout_engine)
    if args.run:
        apply_run(args)  # its base, adapter, chat format, sampling and (unless given) data
    else:
        check_model_folder("--model_name_or_path", args.model_name_or_path)
        if args.adapter:
            adapter_settings(Path(args.adapter))
    dataset = command_dataset(args)
    if args.from_results:
        read_results(Path(args.from_results), {t.id: t for t in dataset_tasks(dataset)})
    return dataset


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    """Whole or not at all: written beside, then renamed into place."""
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    partial.replace(path)


# ---- the command (its flags: algos/commands.py and fcenv/flags.py) --------------------
def _command(args: argparse.Namespace) -> int:
    from fcenv.algos.config import ConfigError
    from fcenv.algos.store.manifest import CheckpointError
    from fcenv.cli import UsageError
    from fcenv.flags import ENGINE, MODEL, SAMPLING, TOOL_FORMAT, check

    check(args, MODEL, SAMPLING, ENGINE, TOOL_FORMAT)
    for name in ("tasks", "trajectories", "completions"):
        if getattr(args, name) < (0 if name == "tasks" else 1):
            raise UsageError(f"--{name} must be {'0 or more' if name == 'tasks' else 'positive'}")
    if not 0 <= args.margin <= 1:
        raise UsageError("--margin must be in [0, 1]")
    if args.from_results and not Path(args.from_results).is_file():
        raise UsageError(f"--from_results {args.from_results}: no such file")
    try:
        summary = process_rewards(args, _check_files(args))
    except (CheckpointError, ConfigError) as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(summary))
    return 0
