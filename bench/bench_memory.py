"""Peak memory of actor + critic + reference against the actor alone.

Each setting runs in a fresh subprocess on the same randomly initialised base model (by
default Qwen2-0.5B's shape) and the same batch, and reports its peak resident memory:

- ``actor``: the base with one LoRA adapter; sample, score, one policy-gradient backward;
- ``full``: ``fcenv.algos.model.policy.Policy`` (actor and critic adapters, value head, reference =
  adapters off); sample, score actor / reference / critic, actor backward, critic backward.

On a GPU the peak is ``torch.cuda.max_memory_allocated``. Run:
``python -m bench.bench_memory [--shape qwen2-0.5b|small] [--out bench/results/memory.json]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from fcenv.flags import ENGINE, add_group

ROOT = Path(__file__).resolve().parents[1]
SHAPES = {
    # hidden, intermediate, layers, heads, kv heads, vocab
    "qwen2-0.5b": (896, 4864, 24, 14, 2, 151936),
    "small": (256, 768, 4, 4, 2, 8192),
    # A compute-bound size for CPUs (39M parameters), a 20M-50M Qwen2-shaped model.
    "qwen2-40m": (512, 1408, 8, 8, 2, 32000),
}


def _peak_mb(device) -> float:
    import torch

    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure(setting: str, shape: str, batch: int, context: int, new_tokens: int) -> dict:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from fcenv.algos.model.batching import pack
    from fcenv.algos.model.policy import LoraSettings, Policy
    from fcenv.algos.rollout.hf import HFEngine

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    baseline = _peak_mb(device)  # the interpreter, torch and transformers, before any model
    hidden, inter, layers, heads, kv, vocab = SHAPES[shape]
    config = Qwen2Config(hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
                         num_attention_heads=heads, num_key_value_heads=kv, vocab_size=vocab,
                         tie_word_embeddings=True, eos_token_id=1, pad_token_id=0)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    base = Qwen2ForCausalLM(config).to(device=device, dtype=dtype)
    lora = LoraSettings(r=8, alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    contexts = torch.randint(2, vocab, (batch, context)).tolist()
    generator = torch.Generator(device=device).manual_seed(0)
    started = time.perf_counter()
    # The same sampling and scoring code for both; "actor" just has no critic side.
    policy = Policy(base, pad_id=0, stop_ids=[1], actor_lora=lora, with_critic=setting == "full").to(device)
    actions = HFEngine(policy).sample(contexts, new_tokens, generator=generator).actions
    tokens = pack(contexts, actions, 0, device)
    if setting == "full":
        with torch.no_grad():
            policy.reference_logprobs(tokens)
            policy.token_values(tokens)
    logp, entropy = policy.token_logprobs(tokens, with_entropy=True)
    (-(logp.sum()) - entropy.sum()).backward()
    if setting == "full":
        policy.token_values(tokens).pow(2).sum().backward()
    return {"setting": setting, "shape": shape, "peak_mb": _peak_mb(device), "baseline_mb": baseline, "seconds": time.perf_counter() - started,
            "device": str(device), "parameters": sum(p.numel() for p in base.parameters())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="qwen2-0.5b")
    add_group(parser, ENGINE, skip=["rollout_engine", "kv_cache_mib"], defaults={"n_rollout_threads": 2},
              notes={"n_rollout_threads": "here: the rows of one batch, random prompts"})
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--new_tokens", type=int, default=16)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "memory.json"))
    parser.add_argument("--worker", choices=["actor", "full"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        import torch

        torch.set_num_threads(2)
        print(json.dumps(measure(args.worker, args.shape, args.n_rollout_threads, args.context, args.new_tokens)))
        return 0
    results = {}
    for setting in ("actor", "full"):
        out = subprocess.run([sys.executable, "-m", "bench.bench_memory", "--worker", setting, "--shape", args.shape,
                              "--n_rollout_threads", str(args.n_rollout_threads), "--context", str(args.context),
                              "--new_tokens", str(args.new_tokens)],
                             capture_output=True, text=True, check=True, cwd=ROOT)
        results[setting] = json.loads(out.stdout.strip().splitlines()[-1])
    ratio = results["full"]["peak_mb"] / results["actor"]["peak_mb"]
    net = {k: r["peak_mb"] - r["baseline_mb"] for k, r in results.items()}
    net_ratio = net["full"] / net["actor"]
    report = {"actor_alone": results["actor"], "actor_critic_reference": results["full"], "ratio": ratio,
              "ratio_above_baseline": net_ratio,
              "batch": args.n_rollout_threads, "context": args.context, "new_tokens": args.new_tokens}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"{args.shape}: actor alone {results['actor']['peak_mb']:.0f} MB, actor+critic+reference "
          f"{results['full']['peak_mb']:.0f} MB, ratio {ratio:.3f}; above the process baseline "
          f"{net['actor']:.0f} MB vs {net['full']:.0f} MB, ratio {net_ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
