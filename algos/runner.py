"""The training run: set up model, envs and trainer, then iterate rollout -> update -> log.

One ``Runner`` per process. Under ``accelerate launch`` every process holds a full replica,
plays its own environments (its own task draws and sampling seed) and averages gradients
with the others in the PPO update; only the main process writes results.
"""

from __future__ import annotations

import math
import resource
import shutil
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

import fcenv  # noqa: F401  (registers the environment id)
from algos import checkpoint as ckpt
from algos.algorithms import resolve
from algos.branching import BranchingSettings, play_branching
from algos.buffer import bootstrap_values, compute_advantages, score_rollout
from algos.config import ConfigError, TrainConfig, to_dict
from algos.estimators import get_estimator
from algos.groups import efficiency_rewards, informative_groups
from algos.loading import is_embedded, load_model, max_positions
from algos.policy import LoraSettings, Policy
from algos.process_rewards import prefix_value_examples
from algos.results import (
    append_metrics,
    new_run_dir,
    read_metrics,
    run_parent,
    truncate_metrics,
    wait_until_new_event_file_sorts_last,
    write_args,
)
from algos.rollout import Rollout, TextCodec, chat_of, play
from algos.stats import explained_variance, explained_variance_sums, means, rollout_stats
from algos.tiny import BUNDLED_EVAL, TINY_TRAIN, bundled_train_split
from algos.trainer import PPOSettings, PPOTrainer, make_optimizers
from algos.warmup import ground_truth_examples, supervised_steps, value_regression_steps
from fcenv.bundled import resolve as resolve_bundled

HEADLINE = "heldout_greedy/accuracy"

# Flags that must match between a run and its resumption.
# A resumed run is the same run: flags that decide what is learned, from what and how it is
# scored cannot change. Others (more --num_env_steps, another --lr) may; the change is written
# into args.json ("resumes") and said. The last group only places or shows the run.
_RESUME_FIXED = ("algorithm_name", "advantage_estimator", "ratio_level", "critic", "loss_aggregation",
                 "model_name_or_path", "dataset_path", "seed", "n_rollout_threads", "episode_length", "group_size",
                 "lora_r", "lora_alpha", "lora_target_modules", "critic_fraction", "max_new_tokens", "context_window", "temperature",
                 "reward", "efficiency_sigma", "branching", "branch_beta", "branch_threshold", "branch_entropy_tokens",
                 "system_prompt", "tool_format", "hide_function_docs", "env_name", "eval_dataset_path", "eval_fraction",
                 "eval_episodes")
_RESUME_IRRELEVANT = ("resume", "results_dir", "experiment_name", "dataset_name", "cache_dir", "progress", "world_size")


def split_indices(count: int, eval_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """A fixed held-out share of one file's entries (the same for every seed of a run)."""
    order = np.random.default_rng(seed).permutation(count)
    held = round(count * eval_fraction)
    if held >= count:
        raise ValueError("--eval_fraction leaves no training entries")
    return sorted(order[held:].tolist()), sorted(order[:held].tolist())


def _check_lora_targets(model: torch.nn.Module, targets: list[str]) -> None:
    """Every --lora_target_modules name must name layers of the model (peft matches the end of
    a module's dotted name)."""
    names = [name for name, _ in model.named_modules()]
    missing = [t for t in targets if not any(n == t or n.endswith("." + t) for n in names)]
    if missing:
        linear = sorted({n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)})
        raise ConfigError(f"--lora_target_modules: the model has no module named {missing}; its linear "
                          f"layers are {linear}")


class Runner:
    def __init__(self, config: TrainConfig, accelerator=None, log: Callable[[str], None] = print):
        from accelerate import Accelerator
        from accelerate.utils import set_seed

        self.config = config
        # On a machine without an accelerator, say so: accelerate then treats several
        # processes started by torchrun as CPU data parallel (gloo) instead of ignoring them.
        self.accelerator = accelerator or Accelerator(cpu=not _has_accelerator())
        self.rank = self.accelerator.process_index
        self.world = self.accelerator.num_processes
        self.is_main = self.accelerator.is_main_process
        self.log = log if self.is_main else (lambda message: None)
        device = self.accelerator.device

        # The same seed on every process: identical adapters and value head at the start.
        set_seed(config.seed)
        with self.accelerator.main_process_first():
            # Before the thread setting: the one-time build of the tiny model uses every core.
            self.loaded = load_model(config.model_name_or_path, device, cache_dir=config.cache_dir,
                                     system_prompt=config.system_prompt, dataset_path=config.dataset_path,
                                     tool_format=config.tool_format)
        if config.torch_threads > 0:
            torch.set_num_threads(config.torch_threads)
        _check_lora_targets(self.loaded.base, config.lora_target_modules)
        lora = LoraSettings(r=config.lora_r, alpha=config.lora_alpha, target_modules=list(config.lora_target_modules))
        self.algorithm = resolve(config.algorithm_name, config.advantage_estimator, config.ratio_level, config.critic,
                                 config.loss_aggregation)
        self.policy = Policy(self.loaded.base, pad_id=self.loaded.pad_id, stop_ids=self.loaded.stop_ids,
                             with_critic=self.algorithm.critic,
                             actor_lora=lora, temperature=config.temperature,
                             gradient_checkpointing=config.gradient_checkpointing,
                             critic_fraction=config.critic_fraction).to(device)
        self._set_up_data()
        self.context_window = self._context_window()
        self.codec = TextCodec(self.loaded.tokenizer, self.context_window - config.max_new_tokens,
                               render=self.envs[0].unwrapped.renderer)
        self._check_prompts()
        self.actor_optimizer, self.critic_optimizer = make_optimizers(self.policy, config.lr, config.critic_lr)
        settings = PPOSettings(
            ratio=self.algorithm.ratio, loss=self.algorithm.loss, max_new_tokens=config.max_new_tokens,
            ppo_epoch=config.ppo_epoch, num_mini_batch=config.num_mini_batch,
            gradient_cp_steps=config.gradient_cp_steps, micro_batch_tokens=config.micro_batch_tokens, clip_param=config.clip_param, value_clip=config.value_clip,
            entropy_coef=config.entropy_coef, kl_coef=config.kl_coef, value_loss_coef=config.value_loss_coef,
            huber_delta=config.huber_delta if config.use_huber_loss else None,
            max_grad_norm=config.max_grad_norm, target_kl=config.target_kl,
            whiten=get_estimator(self.algorithm.estimator).whiten)
        self.trainer = PPOTrainer(self.policy, settings, self.actor_optimizer, self.critic_optimizer,
                                  reduce_mean=self._reduce_mean)
        # Per-process randomness of the run: task draws and minibatch order, and sampling.
        self.rng = np.random.default_rng([config.seed, self.rank])
        self.sampling = torch.Generator(device=device)
        self.sampling.manual_seed(config.seed * 100_003 + self.rank)
        self.iteration = 0
        self.samples = 0
        self.writer = None
        self.purge_step: int | None = None  # on resume: TensorBoard steps from here on are the new run's
        if config.resume:
            self._resume(config.resume)
        else:
            # Read before the run folder exists: a bad file leaves nothing behind.
            critic_examples = (prefix_value_examples(Path(config.critic_init_values), self.codec,
                                                     self.envs[0].unwrapped.renderer, bool(config.tool_format))
                               if config.critic_init_values else [])
            self.run_dir = self._new_run_dir()
            self._warm_up(critic_examples)

    # ---- set-up -------------------------------------------------------------------------
    def _set_up_data(self) -> None:
        c = self.config
        bundled = bundled_train_split(c.dataset_path)
        self.train_path = resolve_bundled(c.dataset_path) if c.dataset_path else TINY_TRAIN
        eval_path = resolve_bundled(c.eval_dataset_path) if c.eval_dataset_path else (BUNDLED_EVAL[bundled] if bundled else None)
        self.envs = [self._make_env(self.train_path) for _ in range(c.n_rollout_threads)]
        count = len(self.envs[0].unwrapped.tasks)
        if eval_path is not None:
            self.train_indices = list(range(count))
            self.eval_path = eval_path
            self.eval_indices = list(range(len(self._make_env(eval_path).unwrapped.tasks)))
        else:
            self.train_indices, self.eval_indices = split_indices(count, c.eval_fraction, seed=0)
            self.eval_path = self.train_path
        if c.eval_episodes > 0:
            self.eval_indices = self.eval_indices[: c.eval_episodes]
        self.eval_envs: list[gym.Env] = []

    def _context_window(self) -> int:
        """--context_window, or (0) what the model's config supports."""
        c = self.config
        window = c.context_window or max_positions(self.loaded.base)
        if window <= c.max_new_tokens:
            raise ConfigError(f"--context_window ({window}{'' if c.context_window else ', the model maximum'}) must "
                             f"exceed --max_new_tokens ({c.max_new_tokens})")
        return window

    def _check_prompts(self) -> None:
        """Before anything heavy: the function docs are shown (or hiding them was asked for),
        and every task's first context fits the window, cut from the middle if need be."""
        c = self.config
        prompt = self.loaded.system_prompt
        hidden = prompt is not None and "{functions}" not in prompt and not c.tool_format
        embedded_default = is_embedded(c.model_name_or_path) and not c.system_prompt
        for path in dict.fromkeys([self.train_path, self.eval_path]):
            env = self._make_env(path)
            tasks = env.unwrapped.tasks
            if hidden and not (c.hide_function_docs or embedded_default) and any(t.functions for t in tasks):
                raise ConfigError(f"--system_prompt has no '{{functions}}', so the function docs of {path} would not "
                                 f"be shown to the model; add '{{functions}}' where they go, or pass "
                                 f"--hide_function_docs if the model is meant to learn its functions from the data")
            for index in range(len(tasks)):
                observation, info = env.reset(options={"index": index})
                self.codec.encode_counted(observation, chat_of(info), f"{info['id']} of {path}")
            env.close()

    def _make_env(self, path: Path) -> gym.Env:
        # The efficiency reward is computed over groups from the env's verdicts (algos.groups).
        reward = "bfcl" if self.config.reward == "efficiency" else self.config.reward
        return gym.make(self.config.env_name, dataset_path=str(path), reward=reward, **self._rendering())

    def _rendering(self) -> dict:
        """How the env shows the chat: BFCL's prompting prompt through the model's renderer, or
        in FC mode the tools through the tokenizer's chat template."""
        if self.config.tool_format:
            return {"tool_format": self.config.tool_format, "renderer": self.loaded.tokenizer}
        return {"renderer": self.loaded.renderer, "system_prompt": self.loaded.system_prompt}

    def _new_run_dir(self) -> Path:
        from accelerate.utils import broadcast_object_list

        c = self.config
        holder = [None]
        if self.is_main:
            dataset = c.dataset_name or self.train_path.stem
            parent = run_parent(c.results_dir, c.experiment_name, self.loaded.label, dataset, c.algorithm_name)
            run_dir = new_run_dir(parent)
            write_args(run_dir, {**to_dict(c), "world_size": self.world, "resolved": self._resolved(run_dir)})
            holder = [str(run_dir)]
        if self.world > 1:
            broadcast_object_list(holder)
        return Path(holder[0])

    def _resolved(self, run_dir: Path) -> dict:
        """What the flags resolved to, so that anyone can rebuild the run's env and model: the
        data files, the system prompt, and the base model's folder. The embedded model is
        copied into the run (``base/``, a few MB), so the run stays loadable with
        ``AutoModelForCausalLM``/``AutoTokenizer`` and ``PeftModel`` after the cache is gone."""
        base = self.loaded.path
        if is_embedded(self.config.model_name_or_path):
            shutil.copytree(base, run_dir / "base")
            base = run_dir / "base"
        return {"train_path": str(self.train_path.resolve()), "eval_path": str(Path(self.eval_path).resolve()),
                "eval_indices": list(self.eval_indices), "context_window": self.context_window,
                "system_prompt": None if self.config.tool_format else self.loaded.system_prompt,
                "tool_format": self.config.tool_format or None, "base_model": str(Path(base).resolve())}

    def _warm_up(self, critic_examples: list[tuple[list[int], float]]) -> None:
        c = self.config
        if critic_examples:
            self._warm_up_critic(critic_examples)
        if c.warmup_steps <= 0:
            return
        rendering = self._rendering()
        examples = ground_truth_examples(self.train_path, self.loaded.tokenizer, rendering["renderer"],
                                         rendering.get("system_prompt"), self.codec.context_limit, self.train_indices,
                                         tool_format=c.tool_format or None)
        batch = max(1, math.ceil(c.n_rollout_threads / c.gradient_cp_steps))
        losses = supervised_steps(lambda b: self.policy.token_logprobs(b)[0], self.policy.actor_parameters(),
                                  examples, steps=c.warmup_steps, batch_size=batch, lr=c.warmup_lr,
                                  pad_id=self.policy.pad_id, device=self.policy.device, seed=c.seed)
        if losses:
            self.log(f"actor warm-up: {len(losses)} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}")

    def _warm_up_critic(self, examples: list[tuple[list[int], float]]) -> None:
        """LPR's Monte Carlo prefix values (--critic_init_values) as the critic's first targets."""
        c = self.config
        policy = self.policy
        losses = value_regression_steps(
            lambda batch: policy.token_values(batch)[:, 0], policy.critic_parameters(), examples,
            steps=c.critic_init_steps, batch_size=c.n_rollout_threads, lr=c.critic_lr, pad_id=policy.pad_id,
            device=policy.device, seed=c.seed)
        if losses:
            self.log(f"critic warm-up on {len(examples)} Monte Carlo prefix values: {len(losses)} steps, "
                     f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")

    def _resume(self, path: str) -> None:
        import json

        checkpoint = ckpt.find_resume_checkpoint(path, self.log)
        self.run_dir = ckpt.run_dir_of(checkpoint)
        try:
            saved = json.loads((self.run_dir / "args.json").read_text())
        except (OSError, ValueError) as exc:
            raise ckpt.CheckpointError(checkpoint, None, f"its run's args.json cannot be read ({exc})") from None
        saved.setdefault("critic_fraction", 1.0)  # runs from before the flag: a critic on every layer
        fixed = [k for k in _RESUME_FIXED if k in saved and saved[k] != getattr(self.config, k)]
        if fixed:
            raise ckpt.CheckpointError(checkpoint, None, f"--resume: these flags differ from the run's "
                                                         f"args.json and cannot change within a run: {fixed}")
        state = ckpt.load_model_state(checkpoint, self.policy, self.actor_optimizer, self.critic_optimizer)
        self.iteration, self.samples = int(state["iteration"]), int(state["samples"])
        now = to_dict(self.config)
        changed = {k: {"from": saved[k], "to": v} for k, v in now.items()
                   if k not in _RESUME_IRRELEVANT and k in saved and saved[k] != v}
        if changed and self.is_main:
            history = [*saved.get("resumes", []), {"iteration": self.iteration, "changed": changed}]
            write_args(self.run_dir, {**saved, **{k: now[k] for k in changed}, "resumes": history})
            self.log("resumed with changed flags (recorded in args.json): "
                     + ", ".join(f"--{k} {c['from']} -> {c['to']}" for k, c in changed.items()))
        self.purge_step = self.samples + 1
        extra = ckpt.load_rng(checkpoint, self.rank)
        self.rng.bit_generator.state = extra["tasks"]
        self.sampling.set_state(extra["sampling"].to(self.sampling.device) if self.sampling.device.type != "cpu"
                                else extra["sampling"])
        if self.is_main:
            ckpt.set_aside_later(checkpoint, self.log)
            truncate_metrics(self.run_dir, self.iteration)
        self.log(f"resumed from {checkpoint} at iteration {self.iteration}")

    # ---- distributed helpers ------------------------------------------------------------
    def _reduce_mean(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.world == 1:
            return tensor
        return self.accelerator.reduce(tensor, reduction="mean")

    def _merge(self, sums: dict[str, float]) -> dict[str, float]:
        """Add up per-process sums (keys may differ between processes)."""
        if self.world == 1:
            return sums
        from accelerate.utils import gather_object

        merged: dict[str, float] = {}
        for part in gather_object([sums]):
            for key, value in part.items():
                merged[key] = merged.get(key, 0.0) + value
        return merged

    # ---- the loop -----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """The run ends once it has taken --num_env_steps actions (all processes): a multi-turn
        episode takes several, so the number of iterations depends on the episodes."""
        return self.samples >= self.config.num_env_steps

    def run(self) -> Path:
        from tqdm.auto import tqdm

        c = self.config
        heldout = None
        if self.iteration == 0 and not c.resume:  # a resumed run already holds its start
            heldout = self._record_start()
        bar = tqdm(total=c.num_env_steps, initial=min(self.samples, c.num_env_steps),
                   disable=not (self.is_main and c.progress), desc=f"{c.algorithm_name}", unit="action",
                   dynamic_ncols=True)
        while not self.done:
            before = self.samples
            metrics = self.train_iteration()
            last = self.done
            if c.eval_interval > 0 and (self.iteration % c.eval_interval == 0 or last):
                metrics.update(self.evaluate())
            if self.iteration % c.log_interval == 0 or last:
                self._log(metrics)
            if self.iteration % c.save_interval == 0 or last:
                self.save()
            heldout = metrics.get(HEADLINE, heldout)
            bar.update(min(self.samples, c.num_env_steps) - min(before, c.num_env_steps))
            bar.set_postfix(reward=f"{metrics['rollout/reward']:.3f}",
                            **({"heldout_greedy": f"{heldout:.3f}"} if heldout is not None else {}))
        bar.close()
        if self.writer is not None:
            self.writer.close()
        self._report_start_to_end()
        return self.run_dir

    def _record_start(self) -> float | None:
        """The run's start, before any update: the held-out figures at iteration 0 and a
        checkpoint (``iter_000000``, after any warm-up) to compare the end with. Returns the
        held-out greedy accuracy (None without evaluations)."""
        start = {}
        if self.config.eval_interval > 0:
            start = self.evaluate()
            self._log({**start, "progress/samples": 0.0})
        self.save()
        return start.get(HEADLINE)

    def _report_start_to_end(self) -> None:
        evaluations = [m for m in read_metrics(self.run_dir) if HEADLINE in m]
        if len(evaluations) < 2:
            return
        start, end = evaluations[0], evaluations[-1]
        for mode in ("greedy", "sampled"):
            key = f"heldout_{mode}/accuracy"
            self.log(f"held-out accuracy ({mode}) start -> end: {start[key]:.3f} -> {end[key]:.3f} "
                     f"({end[key] - start[key]:+.3f}, {len(self.eval_indices)} tasks)")

    def _draw_task(self) -> int:
        return int(self.train_indices[int(self.rng.integers(len(self.train_indices)))])

    def _task_source(self) -> Callable[[int], int]:
        """Each thread's next task: a fresh draw, or with groups, its group's task (drawn once
        per iteration, groups in thread order)."""
        size = self.config.group_size
        if size == 1:
            return lambda thread: self._draw_task()
        drawn: dict[int, int] = {}

        def group_task(thread: int) -> int:
            group = thread // size
            if group not in drawn:
                drawn[group] = self._draw_task()
            return drawn[group]

        return group_task

    def _play(self) -> Rollout:
        c = self.config
        source = self._task_source()
        if c.branching == "entropy":
            settings = BranchingSettings(entropy_tokens=c.branch_entropy_tokens, beta=c.branch_beta,
                                         threshold=c.branch_threshold)
            return play_branching(self.envs, self.policy, self.codec, lambda group: source(group * c.group_size),
                                  c.group_size, max_new_tokens=c.max_new_tokens, settings=settings,
                                  generator=self.sampling)
        return play(self.envs, self.policy, self.codec, source, max_new_tokens=c.max_new_tokens,
                    actions_per_env=c.episode_length, generator=self.sampling)

    def _old_logprobs_from(self) -> str:
        """Where the PPO ratio's old log-probs come from (``score_rollout``'s ``old_from``)."""
        if self.config.sampling_old_logprobs:
            return "sampling"
        # With one minibatch per epoch the update's first pass is the scoring pass.
        return "update" if self.config.num_mini_batch == 1 else "rescore"

    @property
    def efficiency_sigma(self) -> float:
        """--efficiency_sigma, decayed linearly to 0 over the run."""
        return self.config.efficiency_sigma * max(0.0, 1.0 - self.samples / self.config.num_env_steps)

    def train_iteration(self) -> dict[str, float]:
        c = self.config
        started = time.perf_counter()
        rollout = self._play()
        extra: dict[str, float] = {}
        if c.reward == "efficiency":
            efficiency_rewards(rollout, c.group_size, self.efficiency_sigma)
            extra["train/efficiency_sigma"] = self.efficiency_sigma
        sums = rollout_stats(rollout, "rollout")
        sums["perf/generated_tokens"] = float(rollout.generated_tokens)
        if c.branching != "none":
            sums["rollout/branches"] = float(rollout.branches)
        trained = rollout
        if c.dynamic_sampling:
            trained, dropped = informative_groups(rollout, c.group_size)
            sums["rollout/dropped_groups"] = float(dropped)
        scoring_started = time.perf_counter()
        update: dict[str, float] = {}
        if trained.actions:  # dynamic sampling can leave nothing to learn from
            chunk = max(1, math.ceil(len(trained.actions) / (c.num_mini_batch * c.gradient_cp_steps)))
            buffer = score_rollout(self.policy, trained, c.micro_batch_tokens, c.num_mini_batch * c.gradient_cp_steps,
                                   with_reference=c.kl_coef != 0, group_size=c.group_size,
                                   old_from=self._old_logprobs_from())
            last_values = bootstrap_values(self.policy, trained, chunk)
            compute_advantages(buffer, trained, last_values, self.algorithm.estimator, c.gamma, c.gae_lambda)
            sums.update(explained_variance_sums(buffer))
        update_started = time.perf_counter()
        if trained.actions:
            update = self.trainer.update(buffer, self.rng, train_actor=self.iteration >= c.critic_warmup_iters)
        finished = time.perf_counter()

        merged = self._merge(sums)
        metrics = means(merged)
        metrics.update(extra)
        if c.branching != "none":
            metrics["rollout/branches"] = merged["rollout/branches"]
        if c.dynamic_sampling:
            metrics["rollout/dropped_groups"] = merged["rollout/dropped_groups"]
        metrics.update({f"train/{k}": v for k, v in update.items()})
        metrics["train/explained_variance"] = explained_variance(merged)
        seconds = finished - started
        samples = int(merged["rollout/reward:n"])  # actions taken by all processes
        self.samples += samples
        self.iteration += 1
        metrics.update({
            "perf/iteration_seconds": seconds,
            "perf/rollout_seconds": scoring_started - started,
            "perf/update_seconds": finished - update_started,
            "perf/samples_per_second": samples / seconds,
            "perf/generated_tokens_per_second": merged["perf/generated_tokens"] / max(scoring_started - started, 1e-9),
            "perf/memory_mb": _memory_mb(self.policy.device),
            "progress/samples": float(self.samples),
        })
        return metrics

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """The held-out tasks (split across processes), answered greedily ("heldout_greedy/")
        and sampled at the training temperature ("heldout_sampled/", the policy RL optimises);
        ``accuracy`` is BFCL's verdict rate."""
        if not self.eval_indices:
            return {}
        mine = self.eval_indices[self.rank::self.world]
        needed = min(self.config.n_rollout_threads, max(1, len(mine)))
        while len(self.eval_envs) < needed:
            self.eval_envs.append(self._make_env(self.eval_path))
        sums: dict[str, float] = {}
        # Its own generator with the same seed at every evaluation: comparable draws, and
        # the training's random streams stay untouched.
        sampling = torch.Generator(device=self.policy.device)
        sampling.manual_seed(self.config.seed * 7919 + self.rank)
        for prefix, greedy in (("heldout_greedy", True), ("heldout_sampled", False)):
            queue = deque(mine)
            rollout = play(self.eval_envs[:needed], self.policy, self.codec,
                           lambda thread, queue=queue: queue.popleft() if queue else None,
                           max_new_tokens=self.config.max_new_tokens, greedy=greedy, generator=sampling)
            sums.update(rollout_stats(rollout, prefix))
        return means(self._merge(sums))

    def _log(self, metrics: dict[str, float]) -> None:
        if not self.is_main:
            return
        if self.writer is None:
            from torch.utils.tensorboard import SummaryWriter

            # purge_step hides the events a killed run wrote after the checkpoint this run
            # resumed from, so each iteration is logged once.
            if self.purge_step is not None:
                wait_until_new_event_file_sorts_last(self.run_dir / "logs")
            self.writer = SummaryWriter(str(self.run_dir / "logs"), purge_step=self.purge_step)
        for key, value in metrics.items():
            if isinstance(value, float) and math.isfinite(value):
                self.writer.add_scalar(key, value, self.samples)
        self.writer.flush()
        append_metrics(self.run_dir, {"iteration": self.iteration, "samples": self.samples, **metrics})

    def _check_replicas(self) -> None:
        """Every process must hold the same weights; a checksum per process says so."""
        if self.world == 1:
            return
        from accelerate.utils import gather_object

        with torch.no_grad():
            local = sum(float(p.double().sum()) for p in self.policy.actor_parameters() + self.policy.critic_parameters())
        sums = gather_object([local])
        if len(set(sums)) != 1:
            raise RuntimeError(f"the process replicas have diverged (parameter checksums {sums})")

    def save(self) -> Path:
        self._check_replicas()
        checkpoints = self.run_dir / "checkpoints"
        stage = ckpt.staging_dir(checkpoints, self.iteration)
        if self.is_main:
            ckpt.begin(stage)
            state = {"iteration": self.iteration, "samples": self.samples, "world_size": self.world,
                     "algorithm": self.config.algorithm_name}
            ckpt.write_model_state(stage, self.policy, self.actor_optimizer, self.critic_optimizer, state)
        self.accelerator.wait_for_everyone()
        ckpt.write_rng(stage, self.rank, {"tasks": self.rng.bit_generator.state,
                                          "sampling": self.sampling.get_state()})
        self.accelerator.wait_for_everyone()
        final = checkpoints / ckpt.checkpoint_name(self.iteration)
        if self.is_main:
            ckpt.publish(stage, self.iteration)
        self.accelerator.wait_for_everyone()
        return final


def _has_accelerator() -> bool:
    probe = getattr(torch, "accelerator", None)
    return bool(probe.is_available()) if probe is not None else torch.cuda.is_available()


def _memory_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB
