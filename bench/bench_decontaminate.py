"""How often decontamination condemns a public-style training set that copies nothing of BFCL.

Public function-calling sets (Glaive, Hermes, ToolACE, xLAM) ask OpenAI's example tool,
``get_current_weather(location, unit)`` with ``unit`` one of ``celsius`` and ``fahrenheit``,
thousands of times; BFCL asks the same function set 118 times. A set written here from
templates in that style (OpenAI messages: weather questions in many phrasings and cities,
units named or not, and a share of other tools) is converted with ``fcenv.sources`` and every
task looked up in the index of BFCL's test questions (``fcenv.sources.decontaminate``). None of
its questions is a BFCL question, so every task flagged is a false positive; the report counts
them, by how they were flagged, with the first few. The set and the look-up are
``harness/public_style_set.py``'s.

Run: ``python -m bench.bench_decontaminate [--records 3000] [--bfcl_dir DIR] [--out bench/results/decontaminate.json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fcenv.bfcl_data import DEFAULT_DIR
from fcenv.flags import SAMPLE, add_group
from harness.public_style_set import flagged

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=3000)
    add_group(parser, SAMPLE, skip=["categories", "per_category"])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "decontaminate.json")
    args = parser.parse_args(argv)
    tasks, found, by_how = flagged(args.records, Path(args.bfcl_dir or DEFAULT_DIR))
    report = {"records": args.records, "tasks": tasks, "flagged": len(found), "by_how": dict(by_how),
              "first_flagged": [{"question": q, "why": why} for q, why in found[:10]]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
