"""How many of a model's FC answers are right but for their format: the ceiling a format fix can reach.

Qwen2.5-Coder-0.5B-Instruct, asked with ``tools=`` through its own template, mostly writes its
calls as JSON in Markdown fences (```` ```json {"name": ..., "arguments": ...} ``` ````) instead
of the ``<tool_call>`` blocks its template asks for, and BFCL's Qwen FC handler reads no call from
them. This script rewrites every answer's JSON calls (each fence's, or the whole text's when it is
bare JSON) as ``<tool_call>`` blocks, keeps answers with no JSON call (or already in
``<tool_call>`` blocks) as they are, and scores the
rewritten answers with ``fcenv evaluate --tool_format hermes``: the share that passes is the share
whose functions and arguments are right in any format. Irrelevance entries score lower here than
as written, since an invented call in a fence now counts as the call it is.

Run: ``python -m bench.format_ceiling --results bench/results/real_card/fc --report
bench/results/real_card_qwen2.5_coder_0.5b.json`` (the card's sample is written again from
BFCL's files, so the entries are the card's).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.bench_real_card import category_figures, summaries
from fcenv.bfcl_sample import write_sample
from fcenv.bfcl_data import DEFAULT_DIR as BFCL_DIR
from fcenv.flags import SAMPLE, add_group
from harness.any_format import as_tool_calls

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=str(ROOT / "bench/results/real_card/fc"),
                        help="folder of BFCL_v4_<category>_result.json files from fcenv generate --tool_format hermes")
    add_group(parser, SAMPLE, skip=["categories"], defaults={"per_category": 100},
              notes={"per_category": "the sample the results were made on"})
    parser.add_argument("--report", default="", help="a bench_real_card report: adds 'fc_any_format' to it")
    args = parser.parse_args()

    results = sorted(Path(args.results).glob("BFCL_v4_*_result.json"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data, rewritten = [], []
        for path in results:
            category = path.name.removeprefix("BFCL_v4_").removesuffix("_result.json")
            if category.startswith("multi_turn"):
                continue  # one rewritten step would change every later one
            data.append(write_sample(Path(args.bfcl_dir or BFCL_DIR), category, args.per_category, work))
            lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            out = work / "rewritten" / path.name
            out.parent.mkdir(exist_ok=True)
            out.write_text("".join(json.dumps({"id": line["id"], "result": as_tool_calls(line["result"])}) + "\n"
                                   for line in lines), encoding="utf-8")
            rewritten.append(out)
        verdicts = work / "verdicts.jsonl"
        subprocess.run([sys.executable, "-m", "fcenv", "evaluate", "--tool_format", "hermes",
                        "--dataset_path", *map(str, data), "--results", *map(str, rewritten), "--out", str(verdicts)],
                       cwd=ROOT, check=True)
        table = category_figures(verdicts)
    for category, row in table.items():
        print(f"{category:24s} {row['valid']:4d}/{row['entries']:<4d} {row['accuracy']:.3f}")
    if args.report:
        path = Path(args.report)
        report = json.loads(path.read_text())
        report["fc_any_format"] = {"how": "bench/format_ceiling.py: fenced or bare JSON calls rewritten as "
                                          "<tool_call> blocks, scored with --tool_format hermes",
                                   "categories": table,
                                   "summaries": summaries(table)}
        path.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
