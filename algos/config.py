"""Command-line flags of ``train_fctncalling.py``, as one dataclass.

Every flag is a field of ``TrainConfig`` with its default and help text; the parser is built
from the fields, so the two cannot drift apart. Unknown flags are an error. The defaults
train the embedded default (tiny model, bundled dataset, TPPO) on two CPU cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcenv.algos.errors import ConfigError as ConfigError  # re-exported: algos.config.ConfigError, as before
from fcenv import flags
from fcenv.arguments import ArgumentParser
from fcenv.flags import EMBEDDED_MODEL as EMBEDDED_MODEL  # re-exported: algos.config.EMBEDDED_MODEL, as before
# A resumed run is the same run: flags that decide what is learned, from what and how it is
# scored cannot change within it.
RESUME_FIXED = ("algorithm_name", "advantage_estimator", "ratio_level", "critic", "loss_aggregation",
                "model_name_or_path", "adapter", "dataset_path", "seed", "n_rollout_threads", "episode_length", "group_size",
                "lora_r", "lora_alpha", "lora_target_modules", "critic_fraction", "actor_fraction", "max_new_tokens", "context_window",
                "temperature", "reward", "efficiency_sigma", "branching", "branch_beta", "branch_threshold",
                "branch_entropy_tokens", "max_steps_per_turn", "system_prompt", "tool_format", "prompt_variation", "hide_function_docs", "env_name",
                "eval_dataset_path", "eval_fraction", "eval_episodes")


# Names a flag may take, read from the registries when the parser is built: an estimator, reward or
# tool format a package registers is accepted like a built-in one.
def algorithm_names() -> list[str]:
    from fcenv.algos.ppo.algorithms import ALGORITHMS

    return ALGORITHMS.names()


def estimator_names() -> list[str]:
    from fcenv.algos.ppo.estimators import ESTIMATORS

    return ESTIMATORS.names()


def ratio_levels() -> list[str]:
    from fcenv.algos.ppo.algorithms import RATIO_LEVELS

    return list(RATIO_LEVELS)


def loss_aggregations() -> list[str]:
    from fcenv.algos.ppo.algorithms import LOSS_AGGREGATIONS

    return list(LOSS_AGGREGATIONS)


def reward_names() -> list[str]:
    from fcenv.algos.rollout.groups import GROUP_REWARDS
    from fcenv.rewards import REWARDS

    return sorted({*REWARDS.names(), *GROUP_REWARDS.names()})


def _flag(default: Any, help: str, **extra: Any) -> Any:
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": help, **extra})
    return field(default=default, metadata={"help": help, **extra})


def _shared(name: str, note: str = "") -> Any:
    """A flag the other commands take too (fcenv.flags): its default, help and checks are
    declared there once, so that every command spells and means it alike. ``note``: what it
    means for training, after the shared help."""
    flag = flags.shared_flag(name)
    return field(default=flag.default, metadata={"help": flag.help, "shared": flag, "note": note})


@dataclass
class TrainConfig:
    # --- run ---------------------------------------------------------------------------
    seed: int = _shared("seed")
    env_name: str = _flag("fcenv/FunctionCalling-v0", "Gymnasium id of the environment")
    algorithm_name: str = _flag("TPPO", "a preset ({choices}): TPPO is token-level PPO with BAD, APPO action-level "
                                        "PPO with GAE, TurnPPO one value per BFCL turn, GRPO, DrGRPO and RLOO are "
                                        "critic-free and group-relative (set --group_size); the four flags below "
                                        "change its choices", choices=algorithm_names)
    advantage_estimator: str = _flag("", "advantage estimator (default: the preset's): {choices}",
                                     choices=estimator_names)
    ratio_level: str = _flag("", "level of the PPO ratio (default: the preset's): {choices}", choices=ratio_levels)
    critic: str = _flag("auto", "train a critic: auto (when the estimator needs one), on or off",
                        choices=["auto", "on", "off"])
    loss_aggregation: str = _flag("", "how token terms are averaged (default: the preset's): token_mean (over "
                                      "the minibatch's tokens), sequence_mean (per action, then over actions) or "
                                      "constant (sum over actions x --max_new_tokens, Dr.GRPO)",
                                  choices=loss_aggregations)
    experiment_name: str = _flag("default", "first folder of the results path")
    results_dir: str = _flag("results", "root of the results layout")
    resume: str = _flag("", "a run folder or one of its checkpoints to continue from, with the run's own flags "
                            "(its args.json); flags given with it change those (the fixed ones cannot)")
    resume_with_changed_data: bool = _flag(False, "with --resume: go on although the training or held-out data "
                                                  "changed since the run began (its fingerprint in args.json); "
                                                  "the change is recorded there")
    # --- data and env --------------------------------------------------------------------
    dataset_path: str = _shared("dataset_path", f"the data to train on (default: {flags.DEFAULT_DATASET})")
    dataset_name: str = _flag("", "dataset folder in the results path (default: the file's stem)")
    eval_dataset_path: str = _flag("", "held-out question file (default: a bundled split's own held-out "
                                       "split, else a held-out share of --dataset_path)")
    eval_fraction: float = _flag(0.1, "share of --dataset_path held out when there is no eval file")
    reward: str = _flag("shaped", "reward ({choices}): 'shaped' (weighted facets), 'bfcl' (1 if valid), 'steps' "
                                  "(multi-turn steps paid as they happen, StepTool) or 'efficiency' (ET-Agent: "
                                  "valid x call-count and length factors against the group, -1 for a broken "
                                  "format; needs --group_size), or one a package registers",
                        choices=reward_names)
    efficiency_sigma: float = _flag(1.0, "temperature of --reward efficiency's factors at the start; it decays "
                                         "linearly to 0 (plain verdicts) by --num_env_steps")
    system_prompt: str = _shared("system_prompt")
    tool_format: str = _shared("tool_format")
    prompt_variation: str = _shared("prompt_variation")
    max_steps_per_turn: int = _flag(20, "steps with calls one turn may take before the env ends it (BFCL's "
                                        "force quit; BFCL's limit is 20): a lower one keeps a CPU run on multi-turn "
                                        "or agentic data short")
    web_search: str = _shared("web_search", "needed when the training or held-out data holds web-search entries")
    hide_function_docs: bool = _flag(False, "allow a --system_prompt without '{functions}' on data that has "
                                            "functions (the model learns its functions from the data)")
    # --- model -------------------------------------------------------------------------
    model_name_or_path: str = _shared("model_name_or_path")
    adapter: str = _shared("adapter", "training: the actor starts from it (a supervised or earlier RL adapter) "
                                      "instead of a fresh one; its rank, alpha, targets and trainable tokens must "
                                      "be the run's")
    cache_dir: str = _flag("", "where the tiny model is cached (default: ~/.cache/fcenv/models)")
    lora_r: int = _flag(8, "LoRA rank of both adapters")
    lora_alpha: int = _flag(16, "LoRA alpha of both adapters")
    lora_target_modules: list = _flag(["q_proj", "k_proj", "v_proj", "o_proj"], "modules that get LoRA",  # noqa: RUF009  (_flag builds a field with a default factory)
                                      nargs="+")
    trainable_tokens: list = _flag([], "tokens, as the tokenizer writes them, whose rows of the embedding and "  # noqa: RUF009
                                       "output layers the actor trains whole (e.g. a tool-call tag the base never "
                                       "learned to write: make train-real)", nargs="+")
    critic_fraction: float = _flag(1.0, "share of the decoder layers, from the top, that the critic's adapter covers "
                                        "(rounded up, at least one; 1: every layer); below them the critic starts "
                                        "from the reference pass's states and runs only its own layers (0.25: "
                                        "an iteration 1.4x faster, as good on single-turn, less on multi-turn)")
    actor_fraction: float = _flag(1.0, "share of the decoder layers, from the top, that the actor's adapter covers "
                                       "(rounded up, at least one; 1: every layer): the backward pass stops at its "
                                       "first layer, and --trainable_tokens rows then learn from what the model "
                                       "writes, not from reading them (long multi-turn chats: make train-real-mt)")
    gradient_checkpointing: bool = _flag(False, "recompute activations in the backward pass")
    context_window: int = _shared("context_window")
    max_new_tokens: int = _shared("max_new_tokens")
    temperature: float = _shared("temperature")
    # --- rollout -----------------------------------------------------------------------
    rollout_engine: str = _shared("rollout_engine", "'hf' samples with the policy's own modules, 'vllm' is synced "
                                                    "with the actor after every update")
    rollout_compile: bool = _flag(False, "--rollout_engine vllm on a CPU: compile the model (torch.compile: "
                                         "minutes at the first start, cached in ~/.cache/vllm for later "
                                         "ones; its forward pass takes half the time) instead of running it "
                                         "eagerly. On a GPU it always compiles")
    n_rollout_threads: int = _shared("n_rollout_threads")
    kv_cache_mib: int = _shared("kv_cache_mib")
    episode_length: int = _flag(1, "actions per environment per iteration (episodes always finish)")
    group_size: int = _flag(1, "episodes of the same task per group, played side by side (GRPO and RLOO "
                               "need 2 or more; --n_rollout_threads must be a multiple)")
    branching: str = _flag("none", "ARPO's branching (multi-turn, group algorithms): 'entropy' starts half "
                                   "of each group and branches a chain from the env snapshot after a tool result "
                                   "when the policy's entropy rises, until the group's threads are used",
                           choices=["none", "entropy"])
    branch_beta: float = _flag(0.2, "--branching: weight of the entropy rise in the branching draw")
    branch_threshold: float = _flag(0.5, "--branching: branch when U(0,1) - beta x entropy rise <= this")
    branch_entropy_tokens: int = _flag(20, "--branching: the first tokens of an action whose entropy is measured")
    dynamic_sampling: bool = _flag(False, "train only on groups whose episodes' returns differ (DAPO; needs "
                                          "--group_size): under --reward bfcl, groups that disagree on BFCL's verdict")
    num_env_steps: int = _flag(6400, "total actions over the run (all processes); it ends after the iteration "
                                     "that reaches them")
    # --- PPO ---------------------------------------------------------------------------
    lr: float = _flag(1e-3, "actor (LoRA) learning rate")
    critic_lr: float = _flag(2e-3, "critic (LoRA and value head) learning rate")
    ppo_epoch: int = _flag(2, "passes over each rollout")
    num_mini_batch: int = _flag(1, "minibatches per pass (one optimizer step each)")
    gradient_cp_steps: int = _flag(1, "micro-batches each minibatch is split into, at least (gradient accumulation)")
    sampling_old_logprobs: bool = _flag(False, "keep the sampling pass's log-probs as the PPO ratio's old ones "
                                               "(exact up to rounding in fp32; a bf16 model rescores anyway). "
                                               "Without it they are recorded by the update's first pass with "
                                               "--num_mini_batch 1, and rescored with more minibatches")
    micro_batch_tokens: int = _flag(2048, "most padded tokens in one micro-batch: rows of similar length go "
                                          "together, so padding costs little (0: no limit)")
    gamma: float = _flag(0.99, "discount between actions")
    gae_lambda: float = _flag(0.95, "GAE / BAD lambda")
    clip_param: float = _flag(0.2, "PPO ratio clip")
    value_clip: float = _flag(0.2, "value clip around the rollout value (0: no clipping)")
    entropy_coef: float = _flag(0.0, "entropy bonus weight")
    kl_coef: float = _flag(0.02, "weight of the KL penalty to the reference (base) policy (0: no "
                                 "reference pass at all)")
    value_loss_coef: float = _flag(1.0, "weight of the value loss")
    use_huber_loss: bool = _flag(False, "Huber instead of squared error for the value loss")
    huber_delta: float = _flag(10.0, "Huber delta")
    max_grad_norm: float = _flag(1.0, "gradient norm clip for actor and critic (0: off)")
    target_kl: float = _flag(0.0, "stop an iteration's epochs once the approximate KL exceeds it (0: off)")
    critic_warmup_iters: int = _flag(0, "first iterations that train only the critic")
    critic_init_values: str = _flag("", "a trajectories.jsonl of `fcenv process-rewards`: before RL, regress the "
                                        "critic's value of each prefix on its Monte Carlo value (LPR)")
    critic_init_steps: int = _flag(100, "steps of that regression")
    warmup_steps: int = _flag(0, "supervised steps on ground truth for the actor adapter before RL")
    warmup_lr: float = _flag(1e-3, "learning rate of the supervised warm-up")
    sft_coef: float = _flag(0.0, "weight of a supervised loss on the training tasks' ground truth, a micro-batch "
                                 "of it (within --micro_batch_tokens) added to every actor step (PPO-ptx): RL keeps what the warm-up taught, "
                                 "such as answering without a call when no function fits (0: none)")
    # --- logging, evaluation, checkpoints ---------------------------------------------
    log_interval: int = _flag(1, "iterations between TensorBoard writes")
    eval_interval: int = _flag(25, "iterations between evaluations on the held-out split (0: never)")
    eval_episodes: int = _flag(0, "held-out tasks per evaluation (0: all)")
    save_interval: int = _flag(50, "iterations between checkpoints (the last one is always saved)")
    progress: bool = _flag(True, "show a progress bar")
    torch_threads: int = _flag(1, "CPU threads for torch (0: torch's default). One thread is the fastest "
                                  "for the tiny default, and robust on a shared machine")


def build_parser(prog: str = "train_fctncalling.py") -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Train a function-calling policy with reinforcement learning on fcenv's BFCL environment: "
                    "PPO at the token, action or turn level (TPPO, APPO, TurnPPO) or the group-relative GRPO, "
                    "Dr.GRPO and RLOO, with LoRA adapters on a frozen base.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    for spec in dataclasses.fields(TrainConfig):
        default = spec.default if spec.default is not dataclasses.MISSING else spec.default_factory()
        extra = {k: v for k, v in spec.metadata.items() if k != "help"}
        help = spec.metadata["help"]
        if "shared" in spec.metadata:  # declared in fcenv.flags; its help written now, with the names registered now
            shared = spec.metadata["shared"]
            parser.add_argument(f"--{spec.name}", **shared.arguments(default, spec.metadata["note"]))
            continue
        if callable(extra.get("choices")):
            # The empty default ("the preset's", "prompting") is always allowed.
            names = extra["choices"]()
            extra["choices"] = ["", *names] if default == "" else names
            help = help.replace("{choices}", ", ".join(names))
            extra.setdefault("metavar", spec.name.upper())
        name = f"--{spec.name}"
        if isinstance(default, bool):
            parser.add_argument(name, action=argparse.BooleanOptionalAction, default=default, help=help)
        elif isinstance(default, list):
            parser.add_argument(name, default=default, help=help, **extra)
        else:
            parser.add_argument(name, type=type(default), default=default, help=help, **extra)
    return parser


def parse_config(argv: list[str] | None = None, prog: str = "train_fctncalling.py") -> TrainConfig:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.resume:
        # `--resume RUN` alone continues the run as it was: its own flags become the defaults,
        # and only the flags given here change (the trainer says which, and records them).
        parser.set_defaults(**run_flags(args.resume))
        args = parser.parse_args(argv)
    config = TrainConfig(**vars(args))
    problems = validate(config)
    if problems:
        build_parser(prog).error("; ".join(problems))
    return config


def run_flags(resume: str) -> dict[str, Any]:
    """The flags a run was started with (its args.json, as last resumed), for ``--resume``: a run
    folder or one of its checkpoints (``<run>/checkpoints/iter_<n>``). Empty when there is no
    readable args.json: the trainer then reports the folder."""
    path = Path(resume)
    for run_dir in (path, path.parent.parent):
        try:
            saved = json.loads((run_dir / "args.json").read_text())
        except (OSError, ValueError):
            continue
        if isinstance(saved, dict):
            # Consent to changed data is given per resume, never inherited from the run.
            flags = {spec.name for spec in dataclasses.fields(TrainConfig)} - {"resume", "resume_with_changed_data"}
            return {name: value for name, value in saved.items() if name in flags}
    return {}


def validate(config: TrainConfig) -> list[str]:
    from fcenv.algos.ppo.algorithms import resolve
    from fcenv.algos.ppo.estimators import get_estimator

    problems = []
    algorithm = None
    try:
        algorithm = resolve(config.algorithm_name, config.advantage_estimator, config.ratio_level, config.critic,
                            config.loss_aggregation)
    except ValueError as exc:
        problems.append(f"--algorithm_name/--advantage_estimator/--ratio_level/--critic/--loss_aggregation: {exc}")
    else:
        if get_estimator(algorithm.estimator).needs_groups and config.group_size < 2:
            problems.append(f"--group_size must be 2 or more for the {algorithm.estimator!r} estimator "
                            f"(it compares episodes of the same task)")
    grouped = {"--reward efficiency": config.reward == "efficiency", "--branching entropy": config.branching != "none",
               "--dynamic_sampling": config.dynamic_sampling}
    for flag, chosen in grouped.items():
        if chosen and config.group_size < 2:
            problems.append(f"{flag} compares the episodes of a group: --group_size must be 2 or more")
    if config.branching != "none" and algorithm is not None and not get_estimator(algorithm.estimator).needs_groups:
        problems.append(f"--branching entropy shares actions between episodes, which only the group estimators "
                        f"(grpo, drgrpo, rloo) credit; the {algorithm.estimator!r} estimator cannot")
    if config.critic_init_values:
        if not Path(config.critic_init_values).is_file():
            problems.append(f"--critic_init_values {config.critic_init_values}: no such file")
        if algorithm is not None and not algorithm.critic:
            problems.append("--critic_init_values warm-starts the critic, and this algorithm trains none")
    # The flags every command shares: one check each (fcenv.flags); the engine's name is checked
    # before the model loads (algos.input_files.check_training_files).
    problems += flags.problems(config, flags.MODEL, flags.SAMPLING, flags.ENGINE, flags.TOOL_FORMAT)
    if config.group_size < 1:
        problems.append("--group_size must be positive")
    elif config.group_size > 1:
        if config.n_rollout_threads % config.group_size:
            problems.append("--n_rollout_threads must be a multiple of --group_size")
        if config.episode_length != 1:
            problems.append("--group_size above 1 plays one episode per environment: --episode_length must be 1")
    positive = ["episode_length", "num_env_steps", "max_steps_per_turn", "branch_entropy_tokens", "ppo_epoch", "num_mini_batch",
                "gradient_cp_steps", "log_interval", "save_interval"]
    problems += [f"--{name} must be positive" for name in positive if getattr(config, name) <= 0]
    if not 0 <= config.eval_fraction < 1:
        problems.append("--eval_fraction must be in [0, 1)")
    if not 0 <= config.gamma <= 1 or not 0 <= config.gae_lambda <= 1:
        problems.append("--gamma and --gae_lambda must be in [0, 1]")
    # Numbers that parse but cannot be meant: nan and inf pass argparse's float().
    above_zero = ["lr", "critic_lr", "warmup_lr", "clip_param", "huber_delta", "lora_alpha", "lora_r"]
    at_least_zero = ["efficiency_sigma", "branch_beta", "branch_threshold", "value_clip", "entropy_coef", "kl_coef", "value_loss_coef", "max_grad_norm", "target_kl",
                     "critic_warmup_iters", "critic_init_steps", "warmup_steps", "sft_coef", "eval_interval", "eval_episodes", "torch_threads",
                     "micro_batch_tokens"]
    for name in above_zero + at_least_zero:
        value = getattr(config, name)
        if not math.isfinite(value) or value < 0 or (value == 0 and name in above_zero):
            problems.append(f"--{name} must be {'positive' if name in above_zero else '0 or more'} and finite, not {value}")
    if not 0 < config.critic_fraction <= 1:
        problems.append(f"--critic_fraction must be in (0, 1], not {config.critic_fraction}")
    if not 0 < config.actor_fraction <= 1:
        problems.append(f"--actor_fraction must be in (0, 1], not {config.actor_fraction}")
    if not config.lora_target_modules or not all(config.lora_target_modules):
        problems.append("--lora_target_modules needs at least one module name")
    if not _is_function_calling_env(config.env_name):
        problems.append(f"--env_name must be a registered id of fcenv's FunctionCallingEnv (such as "
                        f"fcenv/FunctionCalling-v0), not {config.env_name!r}")
    return problems


def _is_function_calling_env(env_id: str) -> bool:
    """The trainer speaks to FunctionCallingEnv (its tasks, renderer and verdicts); an id a
    user registered for it with other defaults is fine."""
    from gymnasium.envs.registration import registry

    import fcenv  # noqa: F401  (registers fcenv's id)

    spec = registry.get(env_id)
    return spec is not None and spec.entry_point == "fcenv.env:FunctionCallingEnv"


def to_dict(config: TrainConfig) -> dict[str, Any]:
    return dataclasses.asdict(config)
