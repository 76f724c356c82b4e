"""The embedded tiny model's FC (native tool calling) build: how long it takes and what its base
model does on the held-out split, before any RL, measured by the independent client.

Builds the tiny model for a bundled training split and tool format (``fcenv.algos.tiny.tiny_spec``,
any field changed with ``--set field=value``) into ``--cache_dir``, then answers every held-out
task with the saved model (``AutoModelForCausalLM``/``AutoTokenizer``, the tools through the
tokenizer's own chat template, plain ``generate``), greedy and sampled at temperature 1, and
counts BFCL's verdicts and the error types of the failures. This is the "base" a run starts
from: what RL has to work with, and the habit it has to remove.

Run: ``python -m bench.bench_fc_build --dataset_path tiny_train --tool_format hermes
[--set pretrain_steps=800 ...] [--out bench/results/fc_build.json]``.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from dataclasses import asdict, fields, replace
from pathlib import Path

import gymnasium as gym
import torch

import fcenv  # registers the env id
from fcenv.flags import DATA, TOOL_FORMAT, add_group
from fcenv.algos.tiny.build import (
    BUNDLED_EVAL,
    DEFAULT_CACHE_DIR,
    TinySpec,
    build_tiny,
    bundled_train_split,
    tiny_spec,
)
from bench.heldout import answer


def spec_with(base: TinySpec, settings: list[str]) -> TinySpec:
    types = {f.name: type(getattr(base, f.name)) for f in fields(TinySpec)}
    changes = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        if name not in types:
            raise SystemExit(f"--set {setting}: TinySpec has no field {name!r}")
        changes[name] = value == "True" if types[name] is bool else types[name](value)
    return replace(base, **changes)


def play(env, index: int, model, tokenizer, *, greedy: bool, context_window: int) -> tuple[bool, str]:
    """One episode through the independent client; (verdict, error type)."""
    _, info = env.reset(options={"index": index})
    done = False
    while not done:
        text = answer(model, tokenizer, info["messages"], greedy=greedy, max_new_tokens=48,
                      context_window=context_window, tools=info.get("tools"))
        _, _, terminated, truncated, info = env.step(text)
        done = terminated or truncated
    return bool(info["valid"]), str(info.get("error_type") or "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_group(parser, DATA, defaults={"dataset_path": "tiny_train"},
              notes={"dataset_path": "here: a bundled training split (the tiny model is built for one)"})
    add_group(parser, TOOL_FORMAT, skip=["system_prompt", "prompt_variation"], defaults={"tool_format": "hermes"})
    parser.add_argument("--set", nargs="*", default=[], metavar="FIELD=VALUE", help="change fields of the build's TinySpec")
    parser.add_argument("--cache_dir", default=str(DEFAULT_CACHE_DIR))
    parser.add_argument("--samples", type=int, default=1, help="sampled answers per held-out task")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    split = bundled_train_split(args.dataset_path)
    if split is None:
        raise SystemExit(f"--dataset_path {args.dataset_path}: not a bundled training split")
    spec = spec_with(tiny_spec(split, args.tool_format), args.set)
    started, cpu = time.perf_counter(), time.process_time()
    path = build_tiny(args.cache_dir, spec=spec, dataset_path=split)
    build = {"wall_seconds": round(time.perf_counter() - started, 1), "cpu_seconds": round(time.process_time() - cpu, 1)}
    print(f"build: {build} -> {path}", flush=True)

    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    # The env only judges; the tools reach the model through the tokenizer's own template.
    env = gym.make(fcenv.ENV_ID, dataset_path=str(BUNDLED_EVAL[split]), tool_format=args.tool_format,
                   renderer=lambda messages, tools: "")
    count = len(env.unwrapped.tasks)
    torch.manual_seed(0)
    report = {"dataset": split.name, "tool_format": args.tool_format, "spec": asdict(spec), "build": build,
              "tasks": count}
    for mode, greedy, repeats in (("greedy", True, 1), ("sampled", False, args.samples)):
        verdicts, errors = [], collections.Counter()
        for index in range(count):
            for _ in range(repeats):
                valid, error = play(env, index, model, tokenizer, greedy=greedy, context_window=spec.max_positions)
                verdicts.append(valid)
                errors[error] += not valid
        report[f"{mode}_accuracy"] = round(sum(verdicts) / len(verdicts), 3)
        report[f"{mode}_errors"] = {k: round(v / len(verdicts), 3) for k, v in errors.most_common() if v}
        print(f"{mode}: accuracy {report[f'{mode}_accuracy']:.3f}; failures {report[f'{mode}_errors']}", flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
