"""Rollout speed of the rollout engines (``hf`` against ``vllm``), and one whole training
iteration with each.

Run: ``python -m bench.bench_engines [--rounds 5] [--n_rollout_threads 32] [--group_size 1]
[--max_new_tokens 48] [--iterations 3] [--compile] [--shape qwen2-40m]
[--out bench/results/engines.json]`` (the ``vllm``
engine from ``.vllm-venv``: ``make vllm``).

1. Rollout tokens/s: one model (the embedded tiny default unless ``--model_name_or_path`` names
   a local folder), one batch of contexts (the bundled training split's first prompts as the env
   renders them, ``--n_rollout_threads`` at a time in groups of ``--group_size``, a group repeating its
   prompt), sampled at temperature 1 with up to ``--max_new_tokens`` tokens by each engine
   with the same LoRA actor (random, non-zero) and the same number of CPU threads
   (``--torch_threads``). The engines take turns, one warm-up batch each first, so both see the
   same machine load; each round's tokens/s is printed, then per engine the median and best
   rounds and the ratio vllm / hf of the medians. transformers' own ``generate`` on the same
   actor takes its turn too, as the reference both engines are measured against.
2. One whole iteration (play, score, update, sync), samples/s: our GRPO (groups of 4, one
   epoch, the sampling pass's old log-probs, as ``bench/bench_grpo.py`` runs it) and the
   default TPPO, each with each engine, 32 actions per iteration, one warm-up iteration, then
   ``--iterations`` timed iterations per round, the four runners taking turns.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from fcenv.flags import ENGINE, MODEL, SAMPLING, TOOL_FORMAT, add_group, check_parsed

ROOT = Path(__file__).resolve().parents[1]

ENGINES = ("hf", "vllm")
GENERATE = "generate"  # transformers' generate, the reference row
# The two trainers of bench/bench_grpo.py: GRPO doing TRL's GRPO's work per sample, and the default TPPO.
TRAINERS = {
    "GRPO": ["--algorithm_name", "GRPO", "--group_size", "4", "--ppo_epoch", "1", "--sampling_old_logprobs"],
    "TPPO": [],
}
BATCH = 32


def contexts_of(loaded, rows: int, group_size: int) -> list[list[int]]:
    import gymnasium as gym

    import fcenv
    from fcenv.algos.tiny.build import TINY_TRAIN

    env = gym.make(fcenv.ENV_ID, dataset_path=str(TINY_TRAIN), **loaded.chat_mode.env_options())
    texts = [env.reset(options={"index": index})[0] for index in range(rows // group_size)]
    env.close()
    encoded = [loaded.tokenizer(text, add_special_tokens=False).input_ids for text in texts]
    return [context for context in encoded for _ in range(group_size)]


def shaped_model(shape: str, folder: Path) -> Path:
    """A Qwen2 model of ``shape`` (bench/bench_memory.py's SHAPES) with random weights, saved in
    ``folder`` with the embedded tiny model's tokenizer and chat template: speed only (its
    actions seldom stop, so every row runs to --max_new_tokens)."""
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    from fcenv.algos.model.loading import load_model
    from bench.bench_memory import SHAPES

    tiny = load_model("tiny", torch.device("cpu"))
    hidden, inter, layers, heads, kv, vocab = SHAPES[shape]
    config = Qwen2Config(hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
                         num_attention_heads=heads, num_key_value_heads=kv, vocab_size=vocab,
                         max_position_embeddings=1024, tie_word_embeddings=True,
                         eos_token_id=tiny.stop_ids[0], pad_token_id=tiny.pad_id)
    torch.manual_seed(0)
    Qwen2ForCausalLM(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(tiny.path).save_pretrained(folder)
    return folder


def generate_tokens(policy, loaded, contexts: list[list[int]], max_new_tokens: int) -> int:
    """The reference the engines are measured against: transformers' own ``generate`` on the
    PEFT actor (how TRL samples without vLLM, and what the ``hf`` engine replaced), the whole
    batch left-padded, sampled at temperature 1 without top-k or top-p; returns the tokens
    sampled, up to and including each row's stop token."""
    import torch

    width = max(map(len, contexts))
    ids = torch.tensor([[loaded.pad_id] * (width - len(c)) + c for c in contexts])
    mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts])
    with torch.no_grad():
        out = policy.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens,
                                    do_sample=True, temperature=1.0, top_k=0, top_p=1.0,
                                    pad_token_id=loaded.pad_id, eos_token_id=list(loaded.stop_ids))
    tokens = 0
    for row in out[:, width:].tolist():
        stops = [i for i, token in enumerate(row) if token in loaded.stop_ids]
        tokens += stops[0] + 1 if stops else len(row)
    return tokens


def rollout_speed(args) -> dict:
    import torch

    from fcenv.algos.model.loading import load_model, max_positions
    from fcenv.algos.model.policy import LoraSettings, Policy
    from fcenv.algos.rollout.engine import EngineSettings, make_engine

    loaded = load_model(args.model_name_or_path, torch.device("cpu"), system_prompt=args.system_prompt)
    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(0)
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, with_critic=False,
                    actor_lora=LoraSettings(r=args.lora_r, alpha=2 * args.lora_r))
    with torch.no_grad():
        for parameter in policy.actor_parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    contexts = contexts_of(loaded, args.n_rollout_threads, args.group_size)
    settings = EngineSettings(Path(loaded.path), max_positions(loaded.base), seed=0, compile=args.compile,
                              kv_cache_mib=args.kv_cache_mib)
    engines = {name: make_engine(name, policy, settings) for name in ENGINES}
    generator = torch.Generator().manual_seed(0)
    runners = (*ENGINES, GENERATE)
    try:
        def run(name: str) -> tuple[int, float]:
            started = time.perf_counter()
            if name == GENERATE:
                tokens = generate_tokens(policy, loaded, contexts, args.max_new_tokens)
            else:
                tokens = sum(map(len, engines[name].sample(contexts, args.max_new_tokens, generator=generator).actions))
            return tokens, time.perf_counter() - started

        for name in runners:  # warm-up (the vllm engine folds the actor in at its first call)
            run(name)
        print(f"model {loaded.path.name} ({args.model_name_or_path}), {len(contexts)} rows in groups of "
              f"{args.group_size}, "
              f"contexts {min(map(len, contexts))}-{max(map(len, contexts))} tokens, max_new_tokens "
              f"{args.max_new_tokens}, {args.torch_threads} thread(s), vLLM {engines['vllm'].info['vllm']}"
              f"{' compiled' if args.compile else ' eager'}", flush=True)
        speeds: dict[str, list[float]] = {name: [] for name in runners}
        for round_ in range(args.rounds):
            line = []
            for name in runners:
                tokens, seconds = run(name)
                speeds[name].append(tokens / seconds)
                line.append(f"{name} {tokens} tokens {seconds:.2f}s {tokens / seconds:.0f} tok/s")
            print(f"round {round_ + 1}: " + ", ".join(line), flush=True)
    finally:
        for engine in engines.values():
            engine.close()
    medians = {name: statistics.median(values) for name, values in speeds.items()}
    for name, values in speeds.items():
        print(f"{name:<5} rollout tokens/s: median {medians[name]:.0f}, best {max(values):.0f}")
    print(f"vllm / hf (medians): {medians['vllm'] / medians['hf']:.2f}x; against transformers' generate: "
          f"vllm {medians['vllm'] / medians[GENERATE]:.2f}x, hf {medians['hf'] / medians[GENERATE]:.2f}x", flush=True)
    return {"tokens_per_second": speeds, "median": medians, "vllm_over_hf": medians["vllm"] / medians["hf"],
            "vllm_over_generate": medians["vllm"] / medians[GENERATE], "hf_over_generate": medians["hf"] / medians[GENERATE],
            "rows": args.n_rollout_threads, "group_size": args.group_size, "max_new_tokens": args.max_new_tokens,
            "threads": args.torch_threads, "vllm": engines["vllm"].info["vllm"], "compiled": args.compile}


def iteration_speed(args) -> dict:
    from fcenv.algos.config import parse_config
    from fcenv.algos.training.loop import Runner

    rates: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as results:
        runners = {}
        try:
            for trainer, flags in TRAINERS.items():
                for engine in ENGINES:
                    config = parse_config(["--results_dir", results, "--experiment_name", f"{trainer}-{engine}",
                                           "--n_rollout_threads", str(BATCH), "--num_env_steps", "1000000",
                                           "--max_new_tokens", str(args.max_new_tokens), "--eval_interval", "0",
                                           "--save_interval", "1000000", "--no-progress",
                                           "--torch_threads", str(args.torch_threads), "--rollout_engine", engine, *flags,
                                           *(["--rollout_compile"] if args.compile else [])])
                    runner = runners[f"{trainer} {engine}"] = Runner(config, log=lambda message: None)
                    runner.train_iteration()  # warm-up
            rates = {name: [] for name in runners}
            for round_ in range(args.rounds):
                for name, runner in runners.items():
                    started, samples = time.perf_counter(), runner.samples
                    for _ in range(args.iterations):
                        runner.train_iteration()
                    rates[name].append((runner.samples - samples) / (time.perf_counter() - started))
                print(f"round {round_ + 1}: " + ", ".join(f"{name} {values[-1]:.1f}" for name, values in rates.items())
                      + " samples/s", flush=True)
        finally:
            for runner in runners.values():
                runner.engine.close()
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for trainer in TRAINERS:
        print(f"{trainer}: hf {medians[f'{trainer} hf']:.1f}, vllm {medians[f'{trainer} vllm']:.1f} samples/s "
              f"(vllm / hf {medians[f'{trainer} vllm'] / medians[f'{trainer} hf']:.2f}x)")
    return {"samples_per_second": rates, "median": medians, "flags": TRAINERS, "batch": BATCH,
            "iterations_per_round": args.iterations}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_group(parser, MODEL, skip=["adapter", "run", "checkpoint"])
    parser.add_argument("--shape", default="", help="instead of --model_name_or_path: a random-weights Qwen2 shape "
                                                    "of bench/bench_memory.py (e.g. qwen2-40m), rollouts only")
    parser.add_argument("--rounds", type=int, default=5)
    # The engines are what is compared: both run, whatever --rollout_engine would choose.
    add_group(parser, ENGINE, skip=["rollout_engine"],
              notes={"n_rollout_threads": "the rollouts' batch (the training iterations play 32)"})
    parser.add_argument("--group_size", type=int, default=1)
    add_group(parser, SAMPLING, skip=["temperature", "greedy", "context_window", "seed"])
    parser.add_argument("--torch_threads", type=int, default=1,
                        help="CPU threads of each engine (the trainer's default: 1)")
    parser.add_argument("--lora_r", type=int, default=8)
    add_group(parser, TOOL_FORMAT, skip=["tool_format", "prompt_variation"])
    parser.add_argument("--compile", action="store_true", help="the vllm engine compiles its model "
                                                                   "(--rollout_compile)")
    parser.add_argument("--iterations", type=int, default=3, help="timed training iterations per runner per round "
                                                                 "(0: no training iterations)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "engines.json"))
    args = parser.parse_args()
    check_parsed(parser, args, ENGINE, SAMPLING, TOOL_FORMAT)
    if args.n_rollout_threads % args.group_size:
        parser.error("--n_rollout_threads must be a multiple of --group_size")
    if args.shape and args.iterations:
        parser.error("--shape measures rollouts only: add --iterations 0")
    with tempfile.TemporaryDirectory() as folder:
        if args.shape:
            from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT

            args.model_name_or_path = str(shaped_model(args.shape, Path(folder) / args.shape))
            args.system_prompt = args.system_prompt or TINY_SYSTEM_PROMPT
        report = {"model": args.shape or args.model_name_or_path, "rollout": rollout_speed(args)}
    if args.iterations > 0:
        report["iteration"] = iteration_speed(args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":  # the vllm engine is a process of its own
    main()
