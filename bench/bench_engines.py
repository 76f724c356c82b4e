"""Rollout speed of the two engines: Hugging Face (``Policy.sample``) vs vLLM (``VLLMEngine``).

Run: ``python bench/bench_engines.py [--rounds 5] [--threads 1] [--model tiny]
[--system_prompt TEXT]`` (vLLM from
``.vllm-venv``: ``make vllm``). One run, one model (the embedded tiny default unless
``--model`` names a local folder), one batch of prompts: the bundled training split's first
prompts as the env renders them, ``--rows`` at a time in groups of ``--group_size`` (a group
repeats its prompt), sampled at temperature 1 with up to ``--max_new_tokens`` tokens, each
engine with the same LoRA actor (random, non-zero) and the same number of CPU threads. The
engines take turns, one warm-up batch each first, so both see the same machine load; each
round's rollout tokens/s is printed, then per engine the median and best rounds and the
ratio vLLM / HF of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def prompts(loaded, rows: int, group_size: int) -> list[list[int]]:
    import gymnasium as gym

    import fcenv
    from algos.tiny import TINY_TRAIN

    env = gym.make(fcenv.ENV_ID, dataset_path=str(TINY_TRAIN), renderer=loaded.renderer,
                   **({"system_prompt": loaded.system_prompt} if loaded.system_prompt else {}))
    distinct = rows // group_size
    texts = [env.reset(options={"index": index})[0] for index in range(distinct)]
    env.close()
    encoded = [loaded.tokenizer(text, add_special_tokens=False).input_ids for text in texts]
    return [context for context in encoded for _ in range(group_size)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny", help="the embedded tiny default, or a local HF model folder")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=32, help="actions per batch (the trainer's --n_rollout_threads)")
    parser.add_argument("--group_size", type=int, default=1)
    parser.add_argument("--max_new_tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of each engine (the trainer's default: 1)")
    parser.add_argument("--lora_r", type=int, default=8)
    parser.add_argument("--system_prompt", default="",
                        help="the env's system prompt (default: the tiny model's for it, else BFCL's)")
    args = parser.parse_args()
    if args.rows % args.group_size:
        parser.error("--rows must be a multiple of --group_size")

    import torch

    from algos.loading import load_model
    from algos.policy import ACTOR, LoraSettings, Policy
    from algos.vllm_engine import VLLMEngine

    loaded = load_model(args.model, torch.device("cpu"), system_prompt=args.system_prompt)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, with_critic=False,
                    actor_lora=LoraSettings(r=args.lora_r, alpha=2 * args.lora_r))
    with torch.no_grad():
        for parameter in policy.actor_parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    contexts = prompts(loaded, args.rows, args.group_size)
    generator = torch.Generator().manual_seed(0)

    with tempfile.TemporaryDirectory() as folder, \
            VLLMEngine(loaded.path, max_lora_rank=args.lora_r, threads=args.threads) as engine:
        policy.model.save_pretrained(folder, selected_adapters=[ACTOR])
        engine.load_adapter(Path(folder) / ACTOR)
        runs = {
            "hf": lambda: policy.sample(contexts, args.max_new_tokens, generator=generator)[0],
            "vllm": lambda: engine.sample(contexts, args.max_new_tokens, stop_ids=loaded.stop_ids,
                                          seed=int(torch.randint(1 << 30, (1,), generator=generator)))[0],
        }
        for run in runs.values():  # warm-up
            run()
        print(f"model {loaded.path.name} ({args.model}), {len(contexts)} rows in groups of {args.group_size}, "
              f"contexts {min(map(len, contexts))}-{max(map(len, contexts))} tokens, max_new_tokens "
              f"{args.max_new_tokens}, {args.threads} thread(s), vLLM {engine.info['vllm']}")
        speeds: dict[str, list[float]] = {name: [] for name in runs}
        for round_ in range(args.rounds):
            line = []
            for name, run in runs.items():
                start = time.perf_counter()
                actions = run()
                seconds = time.perf_counter() - start
                tokens = sum(map(len, actions))
                speeds[name].append(tokens / seconds)
                line.append(f"{name} {tokens} tokens {seconds:.2f}s {tokens / seconds:.0f} tok/s")
            print(f"round {round_ + 1}: " + ", ".join(line))
    medians = {name: statistics.median(values) for name, values in speeds.items()}
    for name, values in speeds.items():
        print(f"{name:<5} rollout tokens/s: median {medians[name]:.0f}, best {max(values):.0f}")
    print(f"vllm / hf (medians): {medians['vllm'] / medians['hf']:.2f}x")


if __name__ == "__main__":  # vLLM's engine is a process of its own
    main()
