"""The credit TPPO assigns inside one multi-turn episode: each action token's advantage, drawn.

A run with a critic (TPPO, APPO, TurnPPO) is loaded from a checkpoint as the trainer holds it (the
actor and critic adapters and the value head on the saved base); one task is played as a rollout
plays it (the run's chat mode, sampled at the run's temperature, or greedy), scored, and given
the run's advantages (TPPO: the Bellman backup over action decomposition, per token). The
picture shows every action token's advantage in order, the actions apart, and marks the tokens
that decide the verdict:

- the first token of each action, which chooses between calling and replying (a reply ends the
  turn; a call that should have been a reply loops, one that should have been a call leaves the
  turn empty);
- the tokens that write a value carried from an earlier tool result into a call (a user's id, an
  order's id, a found file's folder): the values no user message gave.

::

    python -m bench.credit_picture RUN --dataset_path multi_turn_varied_eval --id multi_turn_varied_base_3 --out OUT

writes ``OUT.png`` and ``OUT.json`` (each token with its value and advantage).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from fcenv.flags import DATA, SAMPLING, add_group, check_parsed


def load_policy(run_dir: Path, checkpoint_name: str):
    """The run's model, tokenizer and policy (actor, critic, value head) from one checkpoint."""
    from fcenv.algos.model.loading import load_model
    from fcenv.algos.model.policy import Policy
    from fcenv.algos.ppo.update import make_optimizers
    from fcenv.algos.store.checkpoint import adapter_settings, load_model_state, open_run

    saved, checkpoint = open_run(run_dir, checkpoint_name)
    loaded = load_model(saved["resolved"]["base_model"], torch.device("cpu"), tool_format=saved["tool_format"] or "",
                        system_prompt=saved["system_prompt"] or "")
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids,
                    actor_lora=adapter_settings(checkpoint / "actor"), temperature=saved["temperature"],
                    critic_fraction=saved.get("critic_fraction", 1.0))
    if not policy.has_critic:
        raise SystemExit(f"{run_dir}: a run without a critic has no per-token values")
    actor, critic = make_optimizers(policy, saved["lr"], saved["critic_lr"])
    load_model_state(checkpoint, policy, actor, critic)
    return saved, checkpoint, loaded, policy.eval()


def play_one(saved: dict, loaded, policy, data: str, entry: str, greedy: bool, seed: int):
    """One episode of ``entry`` (the run's env settings and chat mode), scored with the run's advantages."""
    import gymnasium as gym

    import fcenv
    from fcenv.algos.ppo.buffer import bootstrap_values, compute_advantages, score_rollout
    from fcenv.algos.ppo.algorithms import resolve
    from fcenv.algos.rollout.codec import TextCodec
    from fcenv.algos.rollout.hf import HFEngine
    from fcenv.algos.rollout.play import play

    env = gym.make(fcenv.ENV_ID, dataset_path=str(data), reward=saved["reward"],
                   max_steps_per_turn=saved["max_steps_per_turn"], **loaded.chat_mode.env_options())
    index = next(i for i, task in enumerate(env.unwrapped.tasks) if task.id == entry)
    codec = TextCodec(loaded.tokenizer, saved["resolved"]["context_window"] - saved["max_new_tokens"],
                      render=env.unwrapped.renderer, stop_ids=policy.stop_ids)
    started = []
    rollout = play([env], HFEngine(policy), codec, lambda thread: None if started else started.append(1) or index,
                   max_new_tokens=saved["max_new_tokens"], generator=torch.Generator().manual_seed(seed), greedy=greedy)
    algorithm = resolve(saved["algorithm_name"], saved["advantage_estimator"], saved["ratio_level"], saved["critic"],
                        saved["loss_aggregation"])
    buffer = score_rollout(policy, rollout, 0, with_reference=False)
    compute_advantages(buffer, rollout, bootstrap_values(policy, rollout, 4), algorithm.estimator, saved["gamma"],
                       saved["gae_lambda"])
    # The tool results each action saw (the rollout keeps none): the same actions replayed.
    env.reset(options={"index": index})
    results = [env.step(record.text)[4].get("results", []) for record in rollout.actions]
    return env.unwrapped.tasks[index], rollout, buffer, results


def carried_spans(task, texts: list[str], results_before: list[str], said: str) -> list[tuple[int, int]]:
    """Character spans of ``texts`` (an action's) that write a value only an earlier result showed."""
    spans = []
    for value in _argument_values(texts):
        if len(value) >= 3 and value not in said and any(value in r for r in results_before):
            start = texts.find(value)
            if start >= 0:
                spans.append((start, start + len(value)))
    return spans


def _argument_values(text: str) -> list[str]:
    from fcenv.handlers import DecodeError
    from fcenv.multi_turn.executor import decode_step
    from fcenv.tool_formats import get_tool_format

    try:
        calls = decode_step(text, "python", get_tool_format("hermes"))
    except (DecodeError, Exception):  # noqa: BLE001 - a text that is no call carries nothing
        return []
    values = []
    for call in calls:
        for value in call.arguments.values():
            values += [str(v) for v in value] if isinstance(value, list) else [str(value)]
    return values


def token_table(task, rollout, buffer, tokenizer, step_results: list[list[str]]) -> list[dict]:
    """Every action token of the episode: its action, text, value, advantage and whether it decides."""
    rows = []
    said = " ".join(m["content"] for turn in task.question for m in turn)  # what the user gave
    results: list[str] = []
    for action_index, record in enumerate(rollout.actions):
        pieces = [tokenizer.decode([t], skip_special_tokens=False) for t in record.action]
        text = "".join(pieces)
        spans = carried_spans(task, text, results, said)
        offset = 0
        for j, (token, piece) in enumerate(zip(record.action, pieces)):
            start, offset = offset, offset + len(piece)
            carried = any(a < offset and start < b for a, b in spans)
            rows.append({"action": action_index, "token": piece, "value": float(buffer.values[action_index, j]),
                         "advantage": float(buffer.advantages[action_index, j]), "first": j == 0,
                         "carried": carried, "calls": record.info["calls"], "reward": record.reward,
                         "turn": record.turn})
        results += [str(r) for r in step_results[action_index]]
    return rows


def draw(rows: list[dict], title: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(10, len(rows) / 12), 4.8))
    x = range(len(rows))
    colors = ["#3a7dc9" if r["calls"] else "#d98c1f" for r in rows]
    ax.bar(x, [r["advantage"] for r in rows], color=colors, width=1.0)
    for i, r in enumerate(rows):
        if r["first"] and i:
            ax.axvline(i - 0.5, color="#999999", linewidth=0.6)
        if r["first"] or r["carried"]:
            marker, color = ("v", "#c0392b") if r["first"] else ("*", "#27ae60")
            ax.plot(i, r["advantage"], marker=marker, color=color, markersize=7)
            if r["carried"] and (i == 0 or not rows[i - 1]["carried"]) or r["first"]:
                ax.annotate(repr(r["token"].strip() or r["token"])[1:-1][:14], (i, r["advantage"]), fontsize=6,
                            rotation=60, xytext=(2, 6), textcoords="offset points")
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xlabel("action tokens of the episode, in order (blue: an action with calls; orange: a reply that ends a turn)")
    ax.set_ylabel("advantage")
    ax.set_title(title, fontsize=9)
    ax.plot([], [], "v", color="#c0392b", label="first token: call or reply")
    ax.plot([], [], "*", color="#27ae60", label="a value carried from an earlier result")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out, dpi=130)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a training run with a critic (TPPO, APPO, TurnPPO)")
    parser.add_argument("--checkpoint", default="", help="its checkpoint (default: the latest)")
    add_group(parser, DATA, defaults={"dataset_path": "multi_turn_varied_eval"})
    parser.add_argument("--id", required=True, help="the entry to play")
    # The run's temperature (or greedy), --max_new_tokens and context window: the episode as training plays it.
    add_group(parser, SAMPLING, skip=["temperature", "max_new_tokens", "context_window"], defaults={"seed": 0})
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.png and OUT.json")
    args = parser.parse_args(argv)
    check_parsed(parser, args, DATA, SAMPLING)

    saved, checkpoint, loaded, policy = load_policy(args.run, args.checkpoint)
    with torch.no_grad():
        task, rollout, buffer, results = play_one(saved, loaded, policy, args.dataset_path, args.id, args.greedy,
                                                  args.seed)
    rows = token_table(task, rollout, buffer, loaded.tokenizer, results)
    verdict = rollout.actions[-1].info
    title = (f"{saved['algorithm_name']} credit on {task.id} ({checkpoint.name}): {len(rollout.actions)} actions, "
             f"{len(rows)} tokens, verdict {'valid' if verdict['valid'] else verdict['error_type']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    draw(rows, title, args.out.with_suffix(".png"))
    args.out.with_suffix(".json").write_text(json.dumps({"title": title, "tokens": rows}, indent=1) + "\n")
    print(title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
