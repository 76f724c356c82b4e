"""The first token's choice: how likely a run's actor is to open its answer with the tool-call tag.

In FC mode BFCL's irrelevance verdict is decided by the answer's first token: an answer that
opens with the family's tag (``<tool_call>`` for Hermes) makes a call, anything else does not. So
this token's probability, on entries whose right answer is no call and on those that need one,
shows whether a checkpoint tells the two apart, and how greedy decoding will choose, without
generating an answer. Read by the independent client's own loading (``bench/heldout.py``: the
saved base, the actor through ``PeftModel.from_pretrained``, the tokenizer's template with
``tools=``); the prompts are what the env shows at the first step.

    python -m bench.first_token RUN --dataset_path OUT/bfcl_heldout.json --checkpoints first last \
        --per_kind 24 --out first_token.json

For each checkpoint and kind (``no_call``: irrelevance categories; ``call``: the others; in
multi-turn entries, the ground truth's states before a turn's first call, a later call, and the
reply that ends the turn: ``turn_first``, ``turn_next``, ``turn_end``): the mean probability of the
tag, and the share of prompts where greedy decoding opens with it. A model that never ends a turn
shows a ``turn_end`` tag probability near 1; one that stops after a turn's first call, a
``turn_next`` one near 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import gymnasium as gym
import torch

import fcenv  # registers the env id
from fcenv.flags import DATA, add_group, check_parsed
from bench.heldout import _max_positions, checkpoints, load_actor
from harness.template_prompts import prompt_ids

TAGS = {"hermes": "<tool_call>", "mistral": "[TOOL_CALLS]"}  # a call opens with this one token


def first_prompts(data: str, tool_format: str, per_kind: int, tokenizer, context_window: int) -> dict[str, list]:
    """Up to ``per_kind`` prompts (token ids) of each kind, in file order: the first step of
    single-turn entries (``no_call``: irrelevance, ``call``: the others), and in multi-turn entries
    the states their ground truth reaches by running its calls: where it makes a turn's first call
    (``turn_first``, after the user's request), a later one (``turn_next``, after a call's result),
    or ends the turn with a reply once its calls are made (``turn_end``)."""
    from fcenv.algos.model.warmup import END_OF_TURN, ground_truth_steps, written_in

    env = gym.make(fcenv.ENV_ID, dataset_path=str(data), tool_format=tool_format,
                   renderer=lambda messages, tools: "")
    written = written_in(env.unwrapped.settings.tool_format)
    prompts: dict[str, list] = {"no_call": [], "call": [], "turn_first": [], "turn_next": [], "turn_end": []}

    def add(kind: str, info: dict) -> None:
        if len(prompts[kind]) < per_kind:
            prompts[kind].append(prompt_ids(tokenizer, info["messages"], info.get("tools"), max_new_tokens=1,
                                            context_window=context_window))

    for index, task in enumerate(env.unwrapped.tasks):
        if all(len(found) >= per_kind for found in prompts.values()):
            break
        _, info = env.reset(options={"index": index})
        if task.kind != "multi_turn":
            add("no_call" if task.kind == "irrelevance" else "call", info)
            continue
        for step in ground_truth_steps(task) if task.ground_truth else []:
            add("turn_end" if step.text == END_OF_TURN else "turn_next" if step.index else "turn_first", info)
            _, _, terminated, truncated, info = env.step(written(step.text))
            if terminated or truncated:
                break
    env.close()
    return {kind: found for kind, found in prompts.items() if found}


@torch.no_grad()
def tag_probabilities(model, prompts: list[list[int]], tag_id: int) -> list[tuple[float, bool]]:
    """(P(tag), whether the tag is the most likely token) at the answer's first position."""
    out = []
    for ids in prompts:
        logits = model(input_ids=torch.tensor([ids]), logits_to_keep=1).logits[0, -1].float()  # the last position only
        probs = torch.softmax(logits, -1)
        out.append((float(probs[tag_id]), int(probs.argmax()) == tag_id))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    add_group(parser, DATA, notes={"dataset_path": "required"})
    parser.add_argument("--checkpoints", nargs="+", default=["first", "last"],
                        help="'base', 'first', 'last' or checkpoint folder names")
    parser.add_argument("--per_kind", type=int, default=24,
                        help="prompts of each kind (no_call, call, turn_first, turn_next, turn_end)")
    parser.add_argument("--torch_threads", type=int, default=2, help="CPU threads for torch")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if not args.dataset_path:
        parser.error("--dataset_path is required")
    check_parsed(parser, args, DATA)
    saved = json.loads((args.run_dir / "args.json").read_text())
    tool_format = saved["resolved"].get("tool_format")
    if tool_format not in TAGS:
        print(f"{args.run_dir}: not an FC run (tool format {tool_format!r}); the first token decides nothing",
              file=sys.stderr)
        return 2
    found = checkpoints(args.run_dir)
    named = {"first": found[0], "last": found[-1]} if found else {}
    torch.set_num_threads(args.torch_threads)
    resolved = saved["resolved"]
    window = int(resolved.get("context_window") or saved["context_window"] or _max_positions(resolved))
    report = {"data": args.dataset_path, "tag": TAGS[tool_format], "checkpoints": {}}
    prompts = None  # every checkpoint reads the same prompts: one base, one tokenizer
    for name in args.checkpoints:
        checkpoint = None if name == "base" else named.get(name, args.run_dir / "checkpoints" / name)
        if checkpoint is not None and not checkpoint.is_dir():
            print(f"--checkpoints {name}: no such checkpoint in {args.run_dir}", file=sys.stderr)
            return 2
        tokenizer, model = load_actor(args.run_dir, checkpoint)
        tag_id = tokenizer.convert_tokens_to_ids(TAGS[tool_format])
        if prompts is None:
            prompts = first_prompts(args.dataset_path, tool_format, args.per_kind, tokenizer, window)
        figures = {}
        for which, kind_prompts in prompts.items():
            pairs = tag_probabilities(model, kind_prompts, tag_id)
            figures[which] = {"entries": len(pairs), "mean_p_tag": sum(p for p, _ in pairs) / max(1, len(pairs)),
                              "greedy_opens_with_tag": sum(top for _, top in pairs) / max(1, len(pairs))}
        label = "base" if checkpoint is None else checkpoint.name
        report["checkpoints"][label] = figures
        print(label, json.dumps(figures), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
