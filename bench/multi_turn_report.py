"""How a model plays BFCL's multi-turn entries, per category: accuracy (BFCL's verdict), turns
force-terminated by the step limit, and turns ended with a text reply (a step without a call, the
way a turn should end).

Reads a result file in BFCL's shape (``fcenv generate``'s: per entry, one list of step texts per
turn) and the verdicts ``fcenv evaluate --out`` wrote for it::

    python -m bench.multi_turn_report --results RESULTS --verdicts VERDICTS [--tool_format hermes] [--json OUT]

A turn is force-terminated when it took more steps with calls than BFCL allows (20; its last
step is then one with calls); it ended with a reply when its last step holds no call. A turn
the model never reached (the entry stopped earlier) counts as neither.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from fcenv.flags import TOOL_FORMAT, add_group
from fcenv.handlers import DecodeError
from fcenv.multi_turn.executor import decode_step
from fcenv.tasks import category_of
from fcenv.tool_formats import get_tool_format

STEP_LIMIT = 20  # BFCL's MAXIMUM_STEP_LIMIT: steps with calls one turn may take


def has_calls(text: str, tool_format) -> bool:
    try:
        return bool(decode_step(text, "python", tool_format))
    except (DecodeError, Exception):  # noqa: BLE001 - an answer BFCL's inference cannot read holds no call
        return False


def report(results: list[dict], verdicts: list[dict], tool_format=None) -> dict[str, dict[str, float]]:
    by_id = {v["id"]: v for v in verdicts}
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for entry in results:
        category = category_of(entry["id"])
        row = rows[category]
        row["entries"] += 1
        row["valid"] += bool(by_id[entry["id"]]["valid"])
        for turn in entry["result"]:
            if not turn:
                continue
            row["turns"] += 1
            ended = not has_calls(turn[-1], tool_format)
            row["replied"] += ended
            row["force_terminated"] += (not ended) and len(turn) > STEP_LIMIT
            row["steps"] += len(turn)
    out = {}
    for category, row in sorted(rows.items()):
        turns = max(row["turns"], 1)
        out[category] = {"entries": int(row["entries"]), "accuracy": row["valid"] / row["entries"],
                         "turns": int(row["turns"]), "force_terminated_turns": row["force_terminated"] / turns,
                         "turns_ended_with_reply": row["replied"] / turns, "steps_per_turn": row["steps"] / turns}
    return out


def table(summary: dict[str, dict[str, float]]) -> str:
    lines = ["| category | entries | accuracy | turns played | force-terminated turns | turns ended with a reply | steps per turn |",
             "|---|---|---|---|---|---|---|"]
    for category, row in summary.items():
        lines.append(f"| {category} | {row['entries']} | {row['accuracy']:.3f} | {row['turns']} | "
                     f"{row['force_terminated_turns']:.2f} | {row['turns_ended_with_reply']:.2f} | {row['steps_per_turn']:.1f} |")
    if len(summary) > 1:
        mean = sum(r["accuracy"] for r in summary.values()) / len(summary)
        lines.append(f"| **the categories' mean** | {sum(r['entries'] for r in summary.values())} | **{mean:.3f}** | | | | |")
    return "\n".join(lines)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, required=True, help="result file (BFCL's shape)")
    parser.add_argument("--verdicts", type=Path, required=True, help="fcenv evaluate's --out for it")
    add_group(parser, TOOL_FORMAT, skip=["system_prompt", "prompt_variation"],
              notes={"tool_format": "the format the answers are in"})
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    summary = report(_lines(args.results), _lines(args.verdicts),
                     get_tool_format(args.tool_format) if args.tool_format else None)
    print(table(summary))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
