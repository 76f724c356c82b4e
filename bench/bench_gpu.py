"""TPPO throughput and MFU on a 0.5B-parameter Qwen2-shaped model, against plain baselines.

A randomly initialised model of Qwen2-0.5B's shape (bf16 on a GPU, fp32 on a CPU) with our
policy (actor and critic LoRA adapters, value head) measures:

- rollout: ``Policy.sample`` (KV cache, temperature sampling), generated tokens per second,
  against Hugging Face ``generate`` on the same contexts and lengths (the physical reference);
- update: scoring (old, reference and critic passes) plus one TPPO update (critic and actor
  steps) over the same sequences, tokens per second, against one plain forward and backward
  of the same tokens through the LoRA model;
- MFU: the FLOPs each workload executes (counted once by ``torch.utils.flop_counter``:
  matmuls and attention, so prefill, logits computed only where needed and LoRA's frozen base
  are all as they run) over its median time, divided by the device's peak dense bf16 FLOPs
  (``--peak_tflops``). On
  a CPU the peak is measured: the best fp32 FLOP/s of large square ``torch.matmul`` calls on
  this machine with this thread count (the CPU analogue of MFU: how close to the hardware).

With ``--rollout_engine vllm``, the same rollout is also sampled by the ``vllm`` engine
(``algos/rollout/vllm.py``: vLLM serving the same base, saved to a scratch folder, with the
actor folded in at each sync; bf16, compiled with CUDA graphs on a GPU): its generated tokens
per second, the seconds of a sync (the actor handed to the engine after an update), the update
over its samples, a whole iteration (rollout, update, sync) next to the ``hf`` engine's
(rollout, update), and the mean gap between the engine's log-probs and the trainer's of the
same tokens (``rollout/engine_logprob_gap``). vLLM comes from ``.vllm-venv`` (``make vllm``)
or this interpreter.

Every action is forced to ``--new_tokens`` tokens (no stop token can be sampled), so both
sides generate the same number of tokens. Run on a GPU: ``python -m bench.bench_gpu``; a
quick CPU smoke run: ``python -m bench.bench_gpu --shape small --n_rollout_threads 4 --context 64
--new_tokens 16`` (``--rollout_engine vllm`` for the vLLM section); the compute-bound CPU size: ``python -m bench.bench_gpu --shape qwen2-40m
--n_rollout_threads 8 --context 512 --new_tokens 64 --repeats 2``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch

from fcenv.algos.config import TrainConfig
from fcenv.algos.model.batching import pack
from fcenv.algos.model.policy import LoraSettings, Policy
from fcenv.algos.ppo.algorithms import resolve
from fcenv.algos.ppo.buffer import compute_advantages, score_rollout
from fcenv.algos.ppo.update import PPOSettings, PPOTrainer, make_optimizers
from fcenv.algos.rollout.engine import EngineSettings
from fcenv.algos.rollout.hf import HFEngine
from fcenv.algos.rollout.records import ActionRecord, EpisodeRecord, Rollout
from fcenv.algos.rollout.vllm import VLLMEngine
from fcenv.flags import ENGINE, add_group, check_parsed
from bench.bench_memory import SHAPES

ROOT = Path(__file__).resolve().parents[1]

# Dense bf16 peak (TFLOP/s) by device name; anything else needs --peak_tflops.
PEAKS = {"H100": 989.0, "H200": 989.0, "A100": 312.0}


def build(shape: str, device: torch.device) -> tuple[torch.nn.Module, int]:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    hidden, inter, layers, heads, kv, vocab = SHAPES[shape]
    config = Qwen2Config(hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
                         num_attention_heads=heads, num_key_value_heads=kv, vocab_size=vocab,
                         tie_word_embeddings=True, eos_token_id=1, pad_token_id=0)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    torch.manual_seed(0)
    return Qwen2ForCausalLM(config).to(device=device, dtype=dtype), config.vocab_size


def measured_matmul_tflops(size: int = 2048, seconds: float = 3.0) -> float:
    """The best fp32 matmul throughput this CPU reaches (TFLOP/s), over a few timed rounds."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.matmul(a, b)  # warm-up
    best, spent = 0.0, 0.0
    while spent < seconds:
        start = time.perf_counter()
        for _ in range(4):
            torch.matmul(a, b)
        elapsed = time.perf_counter() - start
        spent += elapsed
        best = max(best, 4 * 2 * size ** 3 / elapsed / 1e12)
    return best


def timed(fn, device: torch.device) -> tuple[float, object]:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    out = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start, out


def vllm_section(policy: Policy, base_dir: Path, contexts: list[list[int]], args, generator: torch.Generator,
                 update_fn, device: torch.device) -> dict:
    """The vllm engine's rollout, update over its samples and sync, timed as the hf engine's
    (a warm-up round first, medians of ``--repeats``), and its log-prob gap to the trainer."""
    seconds: dict[str, list[float]] = {k: [] for k in ("rollout", "update", "sync", "iteration")}
    with VLLMEngine(policy, EngineSettings(base_dir, args.context + args.new_tokens, seed=0,
                                                kv_cache_mib=args.kv_cache_mib)) as engine:
        # vLLM refuses the policy's out-of-vocabulary stop id; with none, every action has full length too.
        engine.stop_ids = []
        for repeat in range(args.repeats + 1):
            rollout, samples = timed(partial(engine.sample, contexts, args.new_tokens, generator=generator), device)
            update = timed(partial(update_fn, samples.actions, samples.logprobs, repeat), device)[0]
            sync = timed(partial(engine.sync, policy), device)[0]  # the actor just updated, handed to the engine
            if repeat:
                for key, value in zip(seconds, (rollout, update, sync, rollout + update + sync)):
                    seconds[key].append(value)
        samples = engine.sample(contexts, args.new_tokens, generator=generator)
        with torch.no_grad():
            trainer = policy.token_logprobs(pack(contexts, samples.actions, policy.pad_id, device))[0]
        engine_logps = torch.tensor(samples.logprobs, device=device, dtype=trainer.dtype)
        gap = float((engine_logps - trainer).abs().mean())
        info = engine.info
    median = {k: float(np.median(v)) for k, v in seconds.items()}
    lengths = {len(action) for action in samples.actions}
    return {"seconds": median, "engine": info, "action_lengths": sorted(lengths), "engine_logprob_gap": gap,
            "tokens_per_second": {"rollout": len(contexts) * args.new_tokens / median["rollout"],
                                  "update": len(contexts) * (args.context + args.new_tokens) / median["update"]}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="qwen2-0.5b")
    add_group(parser, ENGINE, notes={"n_rollout_threads": "here: the rows of one batch, random prompts",
                                     "rollout_engine": "here: hf, or vllm to also measure the vllm engine (rollout, "
                                                       "sync, whole iteration)"})
    parser.add_argument("--context", type=int, default=512, help="prompt tokens of each row")
    parser.add_argument("--new_tokens", type=int, default=128, help="tokens of each action, exactly (no stop token)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peak_tflops", type=float, default=None)
    parser.add_argument("--torch_threads", type=int, default=0, help="CPU threads for torch (0: torch's default)")
    parser.add_argument("--group", type=int, default=1,
                        help="samples per prompt (the batch holds n_rollout_threads/group prompts)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "gpu.json"))
    args = parser.parse_args(argv)
    if args.rollout_engine not in ("hf", "vllm"):
        parser.error(f"--rollout_engine {args.rollout_engine}: hf or vllm")
    check_parsed(parser, args, ENGINE)
    batch = args.n_rollout_threads
    if args.group < 1 or batch <= 0 or batch % args.group:
        parser.error(f"--n_rollout_threads {batch} must be a positive multiple of --group {args.group}")

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    peak = args.peak_tflops or next((v for k, v in PEAKS.items() if k in name), None)
    peak_source = "given" if args.peak_tflops else ("datasheet, dense bf16" if peak else None)
    if peak is None and device.type == "cpu":
        torch.set_num_threads(args.torch_threads or torch.get_num_threads())
        peak, peak_source = measured_matmul_tflops(), f"measured fp32 matmul, {torch.get_num_threads()} threads"
    base, vocab = build(args.shape, device)
    scratch = tempfile.TemporaryDirectory(prefix="bench-gpu-base-")
    if args.rollout_engine == "vllm":
        base.save_pretrained(scratch.name)  # vLLM loads the base from a folder (before LoRA wraps it)
    lora = LoraSettings(r=8, alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    # A stop id outside the vocabulary is never sampled, so every action has full length
    # (HF generate gets the same from min_new_tokens).
    policy = Policy(base, pad_id=0, stop_ids=[vocab], actor_lora=lora).to(device)
    actor_opt, critic_opt = make_optimizers(policy, 1e-5, 1e-5)
    trainer = PPOTrainer(policy, PPOSettings.from_config(TrainConfig(ppo_epoch=1), resolve("TPPO")),
                         actor_opt, critic_opt)
    engine = HFEngine(policy)
    generator = torch.Generator(device=device).manual_seed(0)
    contexts = torch.randint(2, vocab, (batch, args.context), generator=generator, device=device).tolist()
    # --group G: G samples of each prompt, as group algorithms draw them (prefilled once each).
    contexts = [c for c in contexts[: batch // args.group] for _ in range(args.group)]
    sequence = args.context + args.new_tokens

    ids = torch.tensor(contexts, device=device)

    def rollout_fn():
        samples = engine.sample(contexts, args.new_tokens, generator=generator)
        return samples.actions, samples.logprobs

    def generate_fn():
        with policy.model.disable_adapter():
            return base.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True, temperature=1.0, top_k=0,
                                 top_p=1.0, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                                 pad_token_id=0)

    def update_fn(actions, logps, seed):
        rollout = Rollout(
            actions=[ActionRecord(thread=i, context=c, action=a, sample_logprobs=lp, text="", reward=float(i % 2))
                     for i, (c, a, lp) in enumerate(zip(contexts, actions, logps))],
            episodes=[EpisodeRecord(task_index=i, task_id=str(i), action_indices=[i], terminated=True)
                      for i in range(len(contexts))], seconds=0.0)
        buffer = score_rollout(policy, rollout, token_budget=0)
        compute_advantages(buffer, rollout, [0.0] * len(contexts), "bad", 1.0, 0.95)
        return trainer.update(buffer, np.random.default_rng(seed))

    def forward_backward_fn(actions):
        tokens = torch.cat([ids, torch.tensor(actions, device=device)], dim=1)
        # Logits where the trainer needs them, the actions' positions (all of them: 150k
        # vocabulary columns over every position would take gigabytes for nothing).
        logits = policy.model(input_ids=tokens, logits_to_keep=args.new_tokens).logits
        logits.float().logsumexp(-1).mean().backward()
        policy.model.zero_grad(set_to_none=True)

    seconds: dict[str, list[float]] = {k: [] for k in ("rollout", "generate", "update", "forward_backward")}
    for repeat in range(args.repeats + 1):  # the first round warms up and is not counted
        elapsed, (actions, logps) = timed(rollout_fn, device)
        times = [elapsed, timed(generate_fn, device)[0], timed(lambda: update_fn(actions, logps, repeat), device)[0],
                 timed(lambda: forward_backward_fn(actions), device)[0]]
        if repeat:
            for key, value in zip(seconds, times):
                seconds[key].append(value)
    vllm_report = None
    if args.rollout_engine == "vllm":
        vllm_report = vllm_section(policy, Path(scratch.name), contexts, args, generator, update_fn, device)
    scratch.cleanup()
    median_seconds = {k: float(np.median(v)) for k, v in seconds.items()}
    # Tokens each workload handles: generated tokens for sampling; every position of every
    # sequence for the update and the plain forward+backward.
    tokens = {"rollout": batch * args.new_tokens, "generate": batch * args.new_tokens,
              "update": batch * sequence, "forward_backward": batch * sequence}
    median = {k: tokens[k] / median_seconds[k] for k in seconds}

    # FLOPs as executed, counted once more under torch's FLOP counter (matmuls and attention):
    # exact where a formula would guess (prefill, logits only where needed, LoRA's frozen base
    # needing no weight gradients).
    from torch.utils.flop_counter import FlopCounterMode

    # The counter cannot read SDPA's grouped-query call as CUDA runs it (enable_gqa: fewer key
    # heads than query heads), so the count runs with eager attention: the same matmuls, which
    # it counts.
    base.set_attn_implementation("eager")
    flops = {}
    for key, fn in (("rollout", rollout_fn), ("generate", generate_fn),
                    ("update", lambda: update_fn(actions, logps, 0)), ("forward_backward", lambda: forward_backward_fn(actions))):
        counter = FlopCounterMode(display=False)
        with counter:
            fn()
        flops[key] = float(counter.get_total_flops())
    achieved = {k: flops[k] / median_seconds[k] / 1e12 for k in seconds}  # TFLOP/s
    mfu = {k: achieved[k] / peak for k in seconds} if peak else {}
    # Peak memory: the GPU's allocator high-water mark (every phase of this run together).
    peak_memory = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None
    report = {"device": name, "shape": args.shape, "parameters": sum(p.numel() for p in base.parameters()),
              "dtype": str(next(base.parameters()).dtype), "batch": batch, "context": args.context,
              "new_tokens": args.new_tokens, "group": args.group, "tokens_per_second": median, "seconds": median_seconds, "flops": flops,
              "achieved_tflops": achieved, "mfu": mfu, "peak_tflops": peak,
              "peak_source": peak_source, "threads": torch.get_num_threads(),
              "torch": torch.__version__, "peak_memory_bytes": peak_memory}
    if vllm_report is not None:
        rollout_flops = flops["rollout"]  # the same contexts and lengths as Policy.sample's
        vllm_report["rollout_achieved_tflops"] = rollout_flops / vllm_report["seconds"]["rollout"] / 1e12
        vllm_report["iteration_seconds_hf"] = median_seconds["rollout"] + median_seconds["update"]
        report["vllm"] = vllm_report
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"{name}, {args.shape} ({report['parameters'] / 1e6:.0f}M parameters, {report['dtype']}), batch "
          f"{batch}, context {args.context}, {args.new_tokens} new tokens, group {args.group}; peak {peak} TFLOP/s "
          f"({peak_source})" + (f"; peak memory {peak_memory / 2**30:.1f} GiB" if peak_memory else ""))
    for key, label in (("rollout", "rollout (Policy.sample)"), ("generate", "HF generate"),
                       ("update", "TPPO scoring + update"), ("forward_backward", "plain forward+backward")):
        extra = f", MFU {mfu[key] * 100:.1f}%" if mfu else ""
        print(f"  {label:<26} {median[key]:>10.0f} tokens/s, {achieved[key] * 1e3:.1f} GFLOP/s{extra}")
    if vllm_report is not None:
        v = vllm_report
        extra = f", MFU {v['rollout_achieved_tflops'] / peak * 100:.1f}%" if peak else ""
        print(f"  {'rollout (vllm engine)':<26} {v['tokens_per_second']['rollout']:>10.0f} tokens/s, "
              f"{v['rollout_achieved_tflops'] * 1e3:.1f} GFLOP/s{extra} (vLLM {v['engine']['vllm']})")
        print(f"  {'TPPO update, vllm samples':<26} {v['tokens_per_second']['update']:>10.0f} tokens/s")
        print(f"  iteration: vllm {v['seconds']['iteration']:.2f} s (rollout {v['seconds']['rollout']:.2f}, update "
              f"{v['seconds']['update']:.2f}, sync {v['seconds']['sync']:.2f}); hf {v['iteration_seconds_hf']:.2f} s; "
              f"engine log-prob gap {v['engine_logprob_gap']:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
