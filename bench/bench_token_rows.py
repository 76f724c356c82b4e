"""The cost of trained token rows (``--trainable_tokens``) in the update: a forward and backward
of the actor's log-probs on Qwen2.5-Coder-0.5B-Instruct with the rows of ``<tool_call>`` and
``</tool_call>`` trained whole, through PEFT's own trainable-token layer against our fast path
(``fcenv.algos.model.policy._rows_over_base``: the frozen base layers run as they are and only
the trained tokens' outputs are replaced), on the same batch, taking turns.

PEFT's layer copies the whole embedding matrix (151,936 x 896 floats, 545 MB) with the rows in
place at every forward, for the embedding and again for the untied output layer, and its
backward computes the whole output matrix's gradient. The batch is one micro-batch of ``make
train-real``'s update (4 samples: ``--n_rollout_threads 8 --gradient_cp_steps 2``).

Run: ``python -m bench.bench_token_rows [--micro_batch 4 --context 512 --new_tokens 64 --repeats 3]
[--out bench/results/token_rows_qwen.json]`` (``make models`` fetches the model).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from bench.bench_grpo import QWEN

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--micro_batch", type=int, default=4, help="samples in the micro-batch")
    parser.add_argument("--context", type=int, default=512)
    parser.add_argument("--new_tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--torch_threads", type=int, default=2, help="CPU threads for torch")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "token_rows_qwen.json"))
    args = parser.parse_args(argv)
    if not (QWEN / "config.json").is_file():
        parser.error(f"{QWEN} is missing (`make models` fetches it)")
    from peft.tuners.trainable_tokens.layer import TrainableTokensLayer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from fcenv.algos.model.batching import pack
    from fcenv.algos.model.loading import token_ids
    from fcenv.algos.model.policy import LoraSettings, Policy

    torch.set_num_threads(args.torch_threads)
    tokenizer = AutoTokenizer.from_pretrained(QWEN)
    base = AutoModelForCausalLM.from_pretrained(QWEN, dtype=torch.float32)
    rows = token_ids(tokenizer, ["<tool_call>", "</tool_call>"])
    policy = Policy(base, pad_id=tokenizer.pad_token_id, stop_ids=[tokenizer.eos_token_id], with_critic=False,
                    actor_lora=LoraSettings(r=8, alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                                            trainable_tokens=rows))
    layers = [m for m in policy.model.modules() if isinstance(m, TrainableTokensLayer)]
    generator = torch.Generator().manual_seed(0)
    vocab = len(tokenizer)
    contexts = torch.randint(0, vocab, (args.micro_batch, args.context), generator=generator).tolist()
    # Every action opens with the tag and closes with its end, as a call does.
    actions = [[rows[0], *torch.randint(0, vocab, (args.new_tokens - 2,), generator=generator).tolist(), rows[1]]
               for _ in range(args.micro_batch)]
    batch = pack(contexts, actions, policy.pad_id)

    def step() -> float:
        started = time.perf_counter()
        logps = policy.token_logprobs(batch)[0]
        logps.sum().backward()
        policy.model.zero_grad(set_to_none=True)
        return time.perf_counter() - started

    fast_paths = {module: vars(module)["forward_adapters"] for module in layers}  # what Policy installed

    def use(fast: bool) -> None:
        for module, fast_path in fast_paths.items():
            if fast:
                module.forward_adapters = fast_path
            else:
                del module.forward_adapters  # PEFT's own layer's forward

    seconds: dict[str, list[float]] = {"peft": [], "fast": []}
    for name in seconds:  # one untimed step each
        use(name == "fast")
        step()
    for _ in range(args.repeats):
        for name in seconds:
            use(name == "fast")
            seconds[name].append(step())
    median = {name: statistics.median(values) for name, values in seconds.items()}
    report = {"seconds": seconds, "median": median, "speedup": median["peft"] / median["fast"],
              "batch": args.micro_batch, "context": args.context, "new_tokens": args.new_tokens,
              "threads": args.torch_threads}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"forward + backward of {args.micro_batch} x ({args.context} + {args.new_tokens}) tokens: PEFT's layer "
          f"{median['peft']:.2f} s, the fast path {median['fast']:.2f} s ({report['speedup']:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
