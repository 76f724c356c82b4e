"""What a multi-turn step costs, in FC mode and prompting mode, as the chat grows.

Run: ``python -m bench.bench_fc_steps [--calls 200000] [--turns 4] [--bfcl_dir DIR]``.

1. One step: on multi_turn_base_0 in FC mode (``tool_format="hermes"``, the family
   template), one step of ``--calls`` ``<tool_call>`` blocks calling ``ls()`` (11 MB for
   200,000), then three ordinary one-call steps; seconds each.
2. A chat grown by long steps: in each mode (prompting with ChatML, and the three FC families
   with their templates), ``--turns`` turns of 19 steps of 128 ``ls()`` calls each, then a
   prose step that ends the turn. Prints the chat's size at the end and the time of the first
   and the last step with calls (best of the first three and the last three), in milliseconds:
   a step's cost should not grow with the chat.

Times are CPU seconds of this process (``time.process_time``), so that a busy shared machine
does not inflate them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from fcenv.bfcl_data import DEFAULT_DIR as BFCL_DEFAULT_DIR
from fcenv.env import FunctionCallingEnv

ROOT = Path(__file__).resolve().parents[1]

STEP_CALLS = 128
STEPS_PER_TURN = 19  # BFCL force-terminates a turn at its 21st step with calls


def calls_text(mode: str, count: int) -> str:
    if mode == "hermes":
        return "\n".join(['<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>'] * count)
    if mode == "llama_json":
        return "; ".join(['{"name": "ls", "parameters": {}}'] * count)
    if mode == "mistral":
        return "[TOOL_CALLS] " + json.dumps([{"name": "ls", "arguments": {}}] * count)
    return "[" + ", ".join(["ls()"] * count) + "]"


def make_env(bfcl_dir: Path, mode: str) -> FunctionCallingEnv:
    env = FunctionCallingEnv(bfcl_dir / "BFCL_v4_multi_turn_base.json",
                             tool_format=None if mode == "prompting" else mode)
    env.reset(options={"id": "multi_turn_base_0"})
    return env


def timed_step(env: FunctionCallingEnv, text: str):
    """The step's result and the CPU time this process spent on it: other work on a shared
    machine does not count."""
    start = time.process_time()
    result = env.step(text)
    return time.process_time() - start, result


def the_issue_step(bfcl_dir: Path, calls: int) -> None:
    env = make_env(bfcl_dir, "hermes")
    text = calls_text("hermes", calls)
    seconds, result = timed_step(env, text)
    print(f"hermes step of {calls:,} calls ({len(text) / 1e6:.1f} MB): {seconds:.2f} s, "
          f"{len(result[4].get('results', [])):,} calls run, observation {len(result[0]) / 1e6:.1f} MB")
    seconds = [timed_step(env, calls_text("hermes", 1))[0] for _ in range(3)]
    print(f"  the next three one-call steps: {', '.join(f'{s:.3f}' for s in seconds)} s")


def grown_chat(bfcl_dir: Path, mode: str, turns: int) -> tuple[int, int, float, float]:
    env = make_env(bfcl_dir, mode)
    times = []
    for _ in range(turns):
        for _ in range(STEPS_PER_TURN):
            seconds, _ = timed_step(env, calls_text(mode, STEP_CALLS))
            times.append(seconds)
        _, result = timed_step(env, "I have done it.")
        if result[2] or result[3]:
            break
    info = result[4]
    return len(info["messages"]), len(result[0]), min(times[:3]) * 1e3, min(times[-3:]) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--bfcl_dir", type=Path, default=None, metavar="DIR",
                        help="BFCL's data (default: the first of ../shared/bfcl, datasets/bfcl and "
                             "~/.cache/fcenv/bfcl that holds it)")
    args = parser.parse_args()
    bfcl_dir = args.bfcl_dir or next(p for p in (ROOT.parent / "shared" / "bfcl", ROOT / "datasets" / "bfcl",
                                                 BFCL_DEFAULT_DIR) if (p / "BFCL_v4_multi_turn_base.json").exists())
    the_issue_step(bfcl_dir, args.calls)
    print(f"\nsteps of {STEP_CALLS} calls, {STEPS_PER_TURN} per turn, {args.turns} turns")
    print("| mode | messages at the end | observation (chars) | first step ms | last step ms |\n|---|---|---|---|---|")
    for mode in ("prompting", "hermes", "llama_json", "mistral"):
        messages, characters, first, last = grown_chat(bfcl_dir, mode, args.turns)
        print(f"| {mode} | {messages:,} | {characters:,} | {first:.1f} | {last:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
