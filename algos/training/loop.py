"""The training run, top to bottom: set up, then iterate rollout -> score -> advantages ->
update -> evaluate -> log -> save.

One ``Runner`` per process. Under ``accelerate launch`` every process holds a full replica,
plays its own environments (its own task draws and sampling seed) and averages gradients
with the others in the PPO update; only the main process writes results. The pieces live
beside this file: ``setup`` (data, envs, prompt checks, run folder, warm-ups), ``resume``,
``evaluation`` (held-out accuracy), ``metrics`` (logged scalars) and ``distributed``.
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from fcenv.algos.config import ConfigError, TrainConfig
from fcenv.algos.input_files import check_training_files
from fcenv.algos.model.loading import load_model, token_ids
from fcenv.algos.model.policy import LoraSettings, Policy, top_layers
from fcenv.algos.ppo.algorithms import resolve
from fcenv.algos.ppo.buffer import bootstrap_values, compute_advantages, engine_logprob_gap, score_rollout
from fcenv.algos.ppo.update import PPOSettings, PPOTrainer, make_optimizers
from fcenv.algos.process_rewards import prefix_value_examples
from fcenv.algos.rollout.branching import BranchingSettings, play_branching
from fcenv.algos.rollout.codec import TextCodec
from fcenv.algos.rollout.engine import EngineSettings, make_engine
from fcenv.algos.rollout.groups import GROUP_REWARDS, informative_groups
from fcenv.algos.rollout.play import play
from fcenv.algos.rollout.records import Rollout
from fcenv.algos.store import checkpoint as ckpt
from fcenv.algos.store.results import append_metrics, read_metrics, wait_until_new_event_file_sorts_last
from fcenv.algos.training import setup
from fcenv.algos.training.distributed import Processes, has_accelerator
from fcenv.algos.training.evaluation import HEADLINE, evaluate_heldout
from fcenv.algos.training.metrics import explained_variance, explained_variance_sums, means, rollout_stats
from fcenv.algos.training.resume import resume
from fcenv.sources.resolve import test_set_warnings


class Runner:
    def __init__(self, config: TrainConfig, accelerator=None, log: Callable[[str], None] = print):
        from accelerate import Accelerator
        from accelerate.utils import set_seed

        c = self.config = config
        # Before the model loads or the tiny model builds; the dataset specs are resolved here, once.
        files, prefix_values = check_training_files(config)
        # On a machine without an accelerator, say so: accelerate then treats several
        # processes started by torchrun as CPU data parallel (gloo) instead of ignoring them.
        self.processes = Processes(accelerator or Accelerator(cpu=not has_accelerator()))
        self.rank, self.is_main = self.processes.rank, self.processes.is_main
        self.log = log if self.is_main else (lambda message: None)
        device = self.processes.accelerator.device

        # The model. The same seed on every process: identical adapters and value head.
        set_seed(c.seed)
        with self.processes.accelerator.main_process_first():
            # Before the thread setting: the one-time build of the tiny model uses every core.
            self.loaded = load_model(c.model_name_or_path, device, cache_dir=c.cache_dir, system_prompt=c.system_prompt,
                                     dataset_path=files.train, tool_format=c.tool_format)
        if c.torch_threads > 0:
            torch.set_num_threads(c.torch_threads)
        setup.check_lora_targets(self.loaded.base, c.lora_target_modules)
        self.algorithm = resolve(c.algorithm_name, c.advantage_estimator, c.ratio_level, c.critic, c.loss_aggregation)
        self.policy = Policy(self.loaded.base, pad_id=self.loaded.pad_id, stop_ids=self.loaded.stop_ids,
                             with_critic=self.algorithm.critic,
                             actor_lora=LoraSettings(r=c.lora_r, alpha=c.lora_alpha,
                                                     target_modules=list(c.lora_target_modules),
                                                     trainable_tokens=token_ids(self.loaded.tokenizer,
                                                                                      c.trainable_tokens),
                                                     layers=top_layers(self.loaded.base, c.actor_fraction)),
                             temperature=c.temperature, gradient_checkpointing=c.gradient_checkpointing,
                             critic_fraction=c.critic_fraction).to(device)

        # The data and the envs; every task's first context must fit the window.
        for warning in test_set_warnings(c.dataset_path):
            self.log(f"warning: {warning}")
        self.search_source = files.web_search  # one for all the envs, opened with the data
        self.envs = [self.make_env(files.train) for _ in range(c.n_rollout_threads)]
        self.data = setup.choose_data(c, files, lambda path: len(self.make_env(path).unwrapped.tasks))
        self.eval_envs: list = []
        self.context_window = setup.context_window(c, self.loaded.base)
        self.codec = TextCodec(self.loaded.tokenizer, self.context_window - c.max_new_tokens,
                               render=self.envs[0].unwrapped.renderer, stop_ids=self.loaded.stop_ids)
        setup.check_prompts(c, self.loaded, self.codec, self.data, self.make_env)

        # The update.
        self.actor_optimizer, self.critic_optimizer = make_optimizers(self.policy, c.lr, c.critic_lr)
        # The ground truth's demonstrations, for a new run's warm-up and for --sft_coef.
        wanted = c.sft_coef != 0 or (c.warmup_steps > 0 and not c.resume)
        self.demonstrations = (setup.actor_demonstrations(c, self.loaded, self.codec, self.data, self.search_source)
                               if wanted else [])
        # The file was checked before the model loaded (input_files.check_ground_truth); the
        # training share of it may still hold none.
        if c.sft_coef != 0 and not self.demonstrations:
            raise ConfigError(f"--sft_coef {c.sft_coef}: {files.train} holds no task with a ground truth to learn "
                              "(agentic entries have none): give a file that does, or --sft_coef 0")
        if c.warmup_steps > 0 and not c.resume and not self.demonstrations:
            raise ConfigError(f"--warmup_steps {c.warmup_steps}: the training tasks of {files.train} hold no ground "
                              "truth to learn (agentic entries have none): give a file that does, or leave it out")
        self.trainer = PPOTrainer(self.policy, PPOSettings.from_config(c, self.algorithm), self.actor_optimizer,
                                  self.critic_optimizer, reduce_mean=self.processes.reduce_mean,
                                  demonstrations=self.demonstrations if c.sft_coef != 0 else ())

        # Per-process randomness of the run: task draws and minibatch order, and sampling.
        self.rng = np.random.default_rng([c.seed, self.rank])
        self.sampling = torch.Generator(device=device)
        self.sampling.manual_seed(c.seed * 100_003 + self.rank)
        self.iteration = 0
        self.samples = 0
        self.writer = None
        self.purge_step: int | None = None  # on resume: TensorBoard steps from here on are the new run's

        # A new run folder, or the run this one continues.
        if c.resume:
            resumed = resume(c.resume, c, files, self.policy, self.actor_optimizer, self.critic_optimizer, self.rank,
                             self.is_main, self.log)
            self.engine = self._start_engine()  # after the checkpoint's checks: an engine takes seconds to start
            self.run_dir, self.iteration, self.samples = resumed.run_dir, resumed.iteration, resumed.samples
            self.purge_step = self.samples + 1
            self.rng.bit_generator.state = resumed.rng["tasks"]
            self.sampling.set_state(resumed.rng["sampling"].to(self.sampling.device)
                                    if self.sampling.device.type != "cpu" else resumed.rng["sampling"])
        else:
            if c.adapter:  # the actor starts from it; checked before the run folder exists
                setup.start_actor_from(c.adapter, self.policy, self.loaded.tokenizer, c.trainable_tokens)
            # Read before the run folder exists: a bad file leaves nothing behind.
            critic_examples = (prefix_value_examples(Path(c.critic_init_values), self.codec,
                                                     self.envs[0].unwrapped.renderer, self.loaded.chat_mode.is_fc,
                                                     values=prefix_values)
                               if c.critic_init_values else [])
            self.engine = self._start_engine()  # before the run folder: an engine that cannot start leaves none
            self.run_dir = Path(self.processes.broadcast(
                str(setup.create_run_dir(c, self.loaded, self.data, self.context_window, self.processes.world))
                if self.is_main else None))
            shown = self.is_main and c.progress
            setup.warm_up_critic(c, self.policy, critic_examples, self.log, progress=shown)
            setup.warm_up_actor(c, self.policy, self.demonstrations, self.log, progress=shown)

    def _start_engine(self):
        """The rollout engine, sampling with the actor (an engine of its own process folds the
        actor in at its first rollout, so a resumed or warmed-up actor is the one sampled)."""
        c = self.config
        return make_engine(c.rollout_engine, self.policy,
                           EngineSettings(Path(self.loaded.path), self.context_window, c.seed,
                                          compile=c.rollout_compile, kv_cache_mib=c.kv_cache_mib))

    def make_env(self, path: Path):
        return setup.make_env(self.config, self.loaded, path, self.search_source)

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
        self.engine.close()
        self._report_start_to_end()
        return self.run_dir

    def train_iteration(self) -> dict[str, float]:
        c = self.config
        started = time.perf_counter()
        # 1. Play: episodes on the envs, actions from the engine.
        rollout = self._play()
        extra: dict[str, float] = {}
        if c.reward in GROUP_REWARDS:  # rewards relative to the group's episodes (--reward efficiency)
            extra = GROUP_REWARDS.get(c.reward).rewrite(rollout, c, self.samples / c.num_env_steps)
        sums = rollout_stats(rollout, "rollout")
        sums["perf/generated_tokens"] = float(rollout.generated_tokens)
        # Per episode: the context tokens sampled from (what re-prefilling every step would run), and
        # those the engine ran after its prefix cache (an episode's earlier steps are cached).
        sums["perf/prompt_tokens_per_episode:sum"] = float(rollout.prompt_tokens)
        sums["perf/prompt_tokens_per_episode:n"] = float(len(rollout.episodes))
        if rollout.cached_tokens is not None:
            sums["perf/prefilled_tokens_per_episode:sum"] = float(rollout.prompt_tokens - rollout.cached_tokens)
            sums["perf/prefilled_tokens_per_episode:n"] = float(len(rollout.episodes))
        if c.branching != "none":
            sums["rollout/branches"] = float(rollout.branches)
        trained = rollout
        if c.dynamic_sampling:
            trained, dropped = informative_groups(rollout, c.group_size)
            sums["rollout/dropped_groups"] = float(dropped)
        # 2. Score: log-probs, reference log-probs and values of every action token; advantages.
        scoring_started = time.perf_counter()
        update: dict[str, float] = {}
        if trained.actions:  # dynamic sampling can leave nothing to learn from
            chunk = max(1, math.ceil(len(trained.actions) / (c.num_mini_batch * c.gradient_cp_steps)))
            buffer = score_rollout(self.policy, trained, c.micro_batch_tokens, c.num_mini_batch * c.gradient_cp_steps,
                                   with_reference=c.kl_coef != 0, group_size=c.group_size,
                                   old_from=self._old_logprobs_from(), sampling_exact=self.engine.exact_logprobs)
            last_values = bootstrap_values(self.policy, trained, chunk)
            compute_advantages(buffer, trained, last_values, self.algorithm.estimator, c.gamma, c.gae_lambda)
            sums.update(explained_variance_sums(buffer))
        # 3. Update the adapters, and hand the new actor to the engine.
        update_started = time.perf_counter()
        if trained.actions:
            update = self.trainer.update(buffer, self.rng, train_actor=self.iteration >= c.critic_warmup_iters)
            if self._old_logprobs_from() != "sampling" or not self.engine.exact_logprobs:
                sums.update(engine_logprob_gap(buffer, trained))  # the trainer's own old log-probs
            self.engine.sync(self.policy)
        finished = time.perf_counter()

        # 4. The iteration's figures, added up over processes.
        merged = self.processes.merge(sums)
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

    # ---- the loop's steps -----------------------------------------------------------------
    def _draw_task(self) -> int:
        train = self.data.train_indices
        return int(train[int(self.rng.integers(len(train)))])

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
            return play_branching(self.envs, self.engine, self.codec, lambda group: source(group * c.group_size),
                                  c.group_size, max_new_tokens=c.max_new_tokens, settings=settings,
                                  generator=self.sampling)
        return play(self.envs, self.engine, self.codec, source, max_new_tokens=c.max_new_tokens,
                    actions_per_env=c.episode_length, generator=self.sampling)

    def _old_logprobs_from(self) -> str:
        """Where the PPO ratio's old log-probs come from (``score_rollout``'s ``old_from``)."""
        if self.config.sampling_old_logprobs:
            return "sampling"
        # With one minibatch per epoch the update's first pass is the scoring pass.
        return "update" if self.config.num_mini_batch == 1 else "rescore"

    def evaluate(self) -> dict[str, float]:
        """Held-out accuracy and rewards, greedy and sampled (``fcenv.algos.training.evaluation``)."""
        if not self.data.eval_indices:
            return {}
        mine = self.data.eval_indices[self.rank::self.processes.world]
        needed = min(self.config.n_rollout_threads, max(1, len(mine)))
        while len(self.eval_envs) < needed:
            self.eval_envs.append(self.make_env(self.data.eval_path))
        return evaluate_heldout(self.eval_envs[:needed], self.engine, self.codec, mine,
                                max_new_tokens=self.config.max_new_tokens, seed=self.config.seed * 7919 + self.rank,
                                device=self.policy.device, merge=self.processes.merge)

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
                     f"({end[key] - start[key]:+.3f}, {len(self.data.eval_indices)} tasks)")

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

    def save(self) -> Path:
        """A checkpoint of this iteration, written crash-safe (``fcenv.algos.store.checkpoint``)."""
        self.processes.check_replicas(self.policy.actor_parameters() + self.policy.critic_parameters())
        checkpoints = self.run_dir / "checkpoints"
        stage = ckpt.staging_dir(checkpoints, self.iteration)
        if self.is_main:
            ckpt.begin(stage)
            state = {"iteration": self.iteration, "samples": self.samples, "world_size": self.processes.world,
                     "algorithm": self.config.algorithm_name}
            ckpt.write_model_state(stage, self.policy, self.actor_optimizer, self.critic_optimizer, state)
        self.processes.wait()
        ckpt.write_rng(stage, self.rank, {"tasks": self.rng.bit_generator.state, "sampling": self.sampling.get_state()})
        self.processes.wait()
        final = checkpoints / ckpt.checkpoint_name(self.iteration)
        if self.is_main:
            ckpt.publish(stage, self.iteration)
        self.processes.wait()
        return final


def _memory_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB
