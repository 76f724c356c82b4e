"""``fcenv evaluate`` as a user runs it: wall time per result file, and its start-up.

Writes a result file per single-turn category (``harness.generators``' outputs, right and
wrong, ``--per_entry`` per entry: 18,205 outputs over 13 files at 5), then times, each in a
fresh process: ``fcenv evaluate --help`` (interpreter and command start-up), ``fcenv
evaluate`` on a one-line file of one category (start-up plus reading one question file), and
``fcenv evaluate`` on each category's whole file, then on all of them in one run. Start-up is
what a one-line run costs; the rest is reading, decoding and checking. Best of ``--repeat``
runs per row.

Run: ``python -m bench.bench_evaluate [--per_entry 5] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.generators import AST_CATEGORIES, RELEVANCE_CATEGORIES, generate

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fcenv", *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return elapsed


def main(argv: list[str] | None = None) -> int:
    from fcenv.bfcl_data import DEFAULT_DIR
    from fcenv.flags import SAMPLE, add_group

    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    add_group(parser, SAMPLE, skip=["categories", "per_category"])
    parser.add_argument("--per_entry", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    bfcl_dir = Path(args.bfcl_dir or DEFAULT_DIR)
    work = Path(tempfile.mkdtemp(prefix="bench-evaluate-"))
    files = {}
    for category in AST_CATEGORIES + RELEVANCE_CATEGORIES:
        samples = generate(bfcl_dir, seed=4321, per_entry=args.per_entry, categories=(category,))
        path = work / f"{category}_result.json"
        path.write_text("".join(json.dumps({"id": s.task.id, "result": s.text}) + "\n" for s in samples))
        files[category] = (path, len(samples))

    def best(*command: str) -> float:
        return min(run(*command) for _ in range(args.repeat))

    first = AST_CATEGORIES[0]
    one_line = work / "one_line.json"
    one_line.write_text(files[first][0].read_text().splitlines()[0] + "\n")
    question = lambda category: str(bfcl_dir / f"BFCL_v4_{category}.json")  # noqa: E731
    help_seconds = best("evaluate", "--help")
    one_seconds = best("evaluate", "--dataset_path", question(first), "--results", str(one_line), "--out",
                       str(work / "one.jsonl"), "--compat", "bfcl", "--partial")
    print(f"start-up: `fcenv evaluate --help` {help_seconds:.2f} s; one line of {first} {one_seconds:.2f} s")
    total_seconds = total_outputs = 0
    print("| category | outputs | wall s (fresh process) |\n|---|---|---|")
    for category, (path, count) in files.items():
        seconds = best("evaluate", "--dataset_path", question(category), "--results", str(path), "--out",
                       str(work / f"{category}.jsonl"), "--compat", "bfcl")
        total_seconds += seconds
        total_outputs += count
        print(f"| {category} | {count:,} | {seconds:.2f} |")
    print(f"| all 13 files, 13 processes | {total_outputs:,} | {total_seconds:.2f} (start-up "
          f"{len(files) * help_seconds:.1f} of it) |")
    together = best("evaluate", "--dataset_path", *[question(c) for c in files], "--results", *[str(p) for p, _ in files.values()],
                    "--out", str(work / "all.jsonl"), "--compat", "bfcl")
    print(f"| all 13 files, one process | {total_outputs:,} | {together:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
