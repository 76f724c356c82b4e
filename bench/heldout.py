"""Held-out BFCL accuracy of a trained run, measured by an independent client.

Nothing of the trainer is used: the base model and tokenizer load with ``transformers``'
``Auto*`` classes from the folder the run saved (``<run>/base``), the actor adapter of a
checkpoint loads with ``peft.PeftModel.from_pretrained``, answers come from plain
``generate`` on the tokenizer's own chat template over the env's messages, and the verdicts
from the env. Multi-turn entries are played step by step through ``env.step`` until the
episode ends. Both the checkpoint of the run's start (``iter_000000``) and its last one are
measured, greedy and sampled (temperature 1, no top-k or top-p), so "start -> end" is the
change RL made.

Run: ``python -m bench.heldout RUN_DIR [--data EVAL_FILE] [--samples 4] [--out report.json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import gymnasium as gym
import torch

import fcenv  # registers the env id

ROOT = Path(__file__).resolve().parents[1]


def checkpoints(run_dir: Path) -> list[Path]:
    return sorted(p for p in (run_dir / "checkpoints").glob("iter_*") if p.is_dir())


def load_actor(run_dir: Path, checkpoint: Path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base_dir = Path(json.loads((run_dir / "args.json").read_text())["resolved"]["base_model"])
    tokenizer = AutoTokenizer.from_pretrained(base_dir)
    base = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
    model = PeftModel.from_pretrained(base, checkpoint / "actor")
    return tokenizer, model.eval()


@torch.no_grad()
def answer(model, tokenizer, messages: list[dict], *, greedy: bool, max_new_tokens: int,
           context_window: int, tools: list[dict] | None = None) -> str:
    ids = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True,
                                        return_dict=False)
    ids = list(ids)[-(context_window - max_new_tokens):]
    prompt = torch.tensor([ids])
    options = {"do_sample": False} if greedy else {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0}
    out = model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=max_new_tokens,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, **options)
    return tokenizer.decode(out[0, prompt.shape[1]:], skip_special_tokens=True)


def play(env, index: int, model, tokenizer, *, greedy: bool, max_new_tokens: int, context_window: int):
    """One episode; returns (BFCL verdict of the entry, summed reward)."""
    _, info = env.reset(options={"index": index})
    total, done = 0.0, False
    while not done:
        text = answer(model, tokenizer, info["messages"], greedy=greedy, max_new_tokens=max_new_tokens,
                      context_window=context_window, tools=info.get("tools"))
        _, reward, terminated, truncated, info = env.step(text)
        total += reward
        done = terminated or truncated
    return bool(info["valid"]), total


def measure(run_dir: Path, checkpoint: Path, data: Path, indices: list[int], args, system_prompt: str,
            reward: str, tool_format: str | None = None) -> dict:
    tokenizer, model = load_actor(run_dir, checkpoint)
    # FC mode: the env only judges; the tools reach the model through the tokenizer's own template.
    rendering = {"tool_format": tool_format, "renderer": lambda messages, tools: ""} if tool_format else \
        {"system_prompt": system_prompt}
    env = gym.make(fcenv.ENV_ID, dataset_path=str(data), reward=reward, **rendering)
    count = len(indices)
    torch.manual_seed(args.seed)
    report = {"checkpoint": checkpoint.name, "tasks": count}
    for mode, greedy, repeats in (("greedy", True, 1), ("sampled", False, args.samples)):
        valid = reward_sum = 0.0
        for index in indices:
            for _ in range(repeats):
                ok, total = play(env, index, model, tokenizer, greedy=greedy, max_new_tokens=args.max_new_tokens,
                                 context_window=args.context_window)
                valid += ok
                reward_sum += total
        report[f"{mode}_accuracy"] = valid / (count * repeats)
        report[f"{mode}_reward"] = reward_sum / (count * repeats)
    return report


def _max_positions(resolved: dict) -> int:
    from transformers import AutoConfig

    return int(AutoConfig.from_pretrained(resolved["base_model"]).max_position_embeddings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--data", type=Path, default=None,
                        help="question file, all of its tasks (default: the run's held-out tasks)")
    parser.add_argument("--samples", type=int, default=4, help="sampled answers per task")
    parser.add_argument("--limit", type=int, default=0, help="first N tasks only (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    saved = json.loads((args.run_dir / "args.json").read_text())
    resolved = saved["resolved"]
    data = args.data or Path(resolved["eval_path"])
    if args.data:
        indices = list(range(len(gym.make(fcenv.ENV_ID, dataset_path=str(data)).unwrapped.tasks)))
    else:
        indices = resolved["eval_indices"]
    if args.limit > 0:
        indices = indices[: args.limit]
    args.max_new_tokens = int(saved["max_new_tokens"])
    # What --context_window resolved to (0 meant the model's maximum).
    args.context_window = int(resolved.get("context_window") or saved["context_window"] or _max_positions(resolved))
    torch.set_num_threads(1)
    found = checkpoints(args.run_dir)
    if not found:
        print(f"{args.run_dir}: no checkpoints", file=sys.stderr)
        return 2
    reports = []
    for checkpoint in dict.fromkeys([found[0], found[-1]]):
        started = time.perf_counter()
        report = measure(args.run_dir, checkpoint, data, indices, args, resolved["system_prompt"], saved["reward"],
                         resolved.get("tool_format"))
        report["seconds"] = round(time.perf_counter() - started, 1)
        reports.append(report)
        print(json.dumps(report), flush=True)
    start, end = reports[0], reports[-1]
    for mode in ("greedy", "sampled"):
        print(f"held-out {mode} accuracy {start[f'{mode}_accuracy']:.3f} -> {end[f'{mode}_accuracy']:.3f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"run": str(args.run_dir), "data": str(data), "reports": reports}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
