"""RL samples per second: our TPPO against AgileRL's LLMPPO, a PPO with a critic, on CPU.

Both train a LoRA actor and a critic on one frozen base with a KL penalty to the base, and do
two PPO epochs per batch. Same model (the embedded tiny model), prompts (the bundled training
split, rendered the way TRL's GRPO comparison renders them), reward (the env's shaped
reward), batch (32 prompts per optimizer round), LoRA (r 8, alpha 16, q/k/v/o), learning
rates (actor 1e-3, critic 2e-3), temperature 1 with no top-k/top-p, completion length 48,
KL coefficient 0.02. The sides take turns in one process, with the same torch threads. A
sample is one completion generated, scored and trained on.

AgileRL is a benchmark-only dependency with pins of its own (it wants transformers 5.14), so
this runs from a separate environment::

    python -m venv /tmp/agilerl-venv
    /tmp/agilerl-venv/bin/pip install torch==2.13.0
    /tmp/agilerl-venv/bin/pip install agilerl==2.58.0 transformers==5.14.1 peft==0.21.0 datasets==5.0.1
    /tmp/agilerl-venv/bin/pip install -e . tensorboard
    /tmp/agilerl-venv/bin/python -m bench.bench_ppo_peer [--rounds 2 --steps 4]

What each side does per sample is in docs/benchmarks/speed.md ("A PPO peer with a critic").
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from bench.bench_grpo import SETUPS, ours_round

ROOT = Path(__file__).resolve().parents[1]

TINY = SETUPS["tiny"]  # bench_grpo's tiny setup: model, prompts, reward, batch, lr, KL, tokens
BATCH, KL, LR, MAX_NEW_TOKENS = TINY.batch, TINY.kl, TINY.lr, TINY.max_new_tokens
CRITIC_LR = 2e-3
EPOCHS = 2


def agilerl_round(steps: int, seed: int) -> tuple[float, float]:
    """Samples per second of AgileRL's LLMPPO over ``steps`` updates (after one warm-up), and
    the share of that time spent generating."""
    import agilerl.algorithms.core.base as agilerl_base
    from agilerl.algorithms.ppo_llm import PPO
    from agilerl.rollouts.on_policy import collate_llm_rollouts

    from fcenv.algos.model.loading import load_model
    from fcenv.algos.model.policy import LoraSettings
    from fcenv.algos.tiny.build import TINY_TRAIN
    from fcenv.trl import VerdictReward, prompt_dataset

    # AgileRL's LLM extra installs liger-kernel, whose Triton kernels it binds onto the model
    # whenever the package is present; Triton has no CPU driver, so on a CPU they stay unbound.
    agilerl_base.HAS_LIGER_KERNEL = False
    loaded = load_model("tiny", torch.device("cpu"))
    tokenizer = loaded.tokenizer
    saved = tempfile.mkdtemp()
    loaded.base.save_pretrained(saved)  # AgileRL builds its own value-head model from a path
    dataset = prompt_dataset(TINY_TRAIN, system_prompt=loaded.system_prompt)
    reward = VerdictReward(TINY_TRAIN, reward="shaped", system_prompt=loaded.system_prompt)
    agent = PPO(
        pad_token_id=tokenizer.pad_token_id, pad_token=tokenizer.pad_token, model_name=saved,
        lora_config=LoraSettings(r=8, alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]).to_config(),
        batch_size=BATCH, beta=KL, lr_actor=LR, lr_critic=CRITIC_LR, update_epochs=EPOCHS, temperature=1.0,
        top_k=0, top_p=1.0, max_output_tokens=MAX_NEW_TOKENS, max_model_len=1024, hf_generate_chunk_size=BATCH,
        use_separate_reference_adapter=False, gradient_checkpointing=False, use_liger_loss=False,
        device="cpu", seed=seed)

    rows = list(range(len(dataset)))
    generator = torch.Generator().manual_seed(seed)
    generating = [0.0]

    def one_update() -> None:
        picked = [rows[int(i)] for i in torch.randint(len(rows), (BATCH,), generator=generator)]
        batch = dataset.select(picked)
        prompts = []
        for messages in batch["prompt"]:
            ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                                return_dict=True)
            prompts.append({"input_ids": ids["input_ids"], "attention_mask": ids["attention_mask"]})
        started = time.perf_counter()
        action = agent.get_action(prompts)
        generating[0] += time.perf_counter() - started
        token_ids, masks = action[0], action[1]
        completions = [tokenizer.decode(ids[0, p["input_ids"].shape[-1]:], skip_special_tokens=True)
                       for ids, p in zip(token_ids, prompts)]
        scores = reward(prompts=batch["prompt"], completions=completions, task_index=batch["task_index"])
        collated = collate_llm_rollouts(
            list(token_ids), list(masks), [torch.zeros_like(m, dtype=torch.long) for m in masks],
            [torch.tensor([s], dtype=torch.float32) for s in scores], group_size=1)
        agent.learn(collated.experiences(), turn_ids=collated.turn_ids)

    one_update()  # warm-up
    generating[0] = 0.0
    started = time.perf_counter()
    for _ in range(steps):
        one_update()
    seconds = time.perf_counter() - started
    return steps * BATCH / seconds, generating[0] / seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4, help="timed updates per side per round")
    parser.add_argument("--torch_threads", type=int, default=1, help="CPU threads for torch, each side")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "ppo_peer.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    import transformers

    transformers.logging.set_verbosity_error()  # AgileRL's generation config warns on every prompt
    # Ours as it comes (the critic's adapter on every layer, as AgileRL's) and with the critic's
    # adapter on the top quarter of the layers.
    ours = {"TPPO": ["--ppo_epoch", str(EPOCHS)],
            "TPPO, top-quarter critic": ["--ppo_epoch", str(EPOCHS), "--critic_fraction", "0.25"]}
    rates: dict[str, list[float]] = {name: [] for name in [*ours, "AgileRL LLMPPO"]}
    generating = []
    for round_index in range(args.rounds):
        for name, flags in ours.items():
            rates[name].append(ours_round(TINY, args.steps, seed=round_index, flags=flags)["samples_per_second"])
        rate, share = agilerl_round(args.steps, seed=round_index)
        rates["AgileRL LLMPPO"].append(rate)
        generating.append(share)
        print(f"round {round_index + 1}: " + ", ".join(f"{name} {values[-1]:.1f}" for name, values in rates.items())
              + f" samples/s (AgileRL {share:.0%} generating)", flush=True)
    theirs = statistics.median(rates["AgileRL LLMPPO"])
    report = {"samples_per_second": rates,
              "median": {name: statistics.median(values) for name, values in rates.items()},
              "against_agilerl": {name: statistics.median(values) / theirs for name, values in rates.items()},
              "flags": ours, "agilerl_generation_share": generating,
              "batch": BATCH, "steps_per_round": args.steps, "threads": args.torch_threads,
              "agilerl_version": importlib.metadata.version("agilerl"),
              "transformers_version": __import__("transformers").__version__}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print("median samples/s: " + ", ".join(
        f"{name} {report['median'][name]:.1f} (x{report['against_agilerl'][name]:.2f})" for name in rates))
    return 0


if __name__ == "__main__":
    sys.exit(main())
