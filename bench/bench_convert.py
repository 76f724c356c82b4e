"""How fast training sets convert, and how fast they are checked against BFCL's test set.

Converts records in xLAM's layout (new questions drawn by ``datasets/tiny/make_xlam_like.py``)
with ``fcenv.sources.convert.convert_records`` (read, map the schema, build the answers, and
judge the source's own answer through the decoder and checker, per task), then builds the index of
BFCL's test questions and looks every converted task up in it. Each timing is the fastest of
``--repeats`` passes.

Run: ``python -m bench.bench_convert [--records 3000] [--bfcl_dir DIR] [--out bench/results/convert.json]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

from fcenv.bfcl_data import DEFAULT_DIR
from fcenv.flags import SAMPLE, add_group
from fcenv.sources import get_format
from fcenv.sources.convert import convert_records
from fcenv.sources.decontaminate import BfclIndex

ROOT = Path(__file__).resolve().parents[1]


def xlam_like(count: int) -> list[dict]:
    spec = importlib.util.spec_from_file_location("make_xlam_like", ROOT / "datasets" / "tiny" / "make_xlam_like.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.records(count)


def fastest(fn, repeats: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    add_group(parser, SAMPLE, skip=["categories", "per_category"])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "convert.json")
    args = parser.parse_args(argv)
    records = [(line, record) for line, record in enumerate(xlam_like(args.records), start=1)]
    seconds, conversion = fastest(lambda: convert_records(records, get_format("xlam"), "xlam_like.jsonl"),
                                  args.repeats)
    tasks = len(conversion.entries)
    index_seconds, index = fastest(lambda: BfclIndex.from_dir(Path(args.bfcl_dir or DEFAULT_DIR)), args.repeats)
    match_seconds, matches = fastest(lambda: [index.match(e["question"], e["function"]) for e in conversion.entries],
                                     args.repeats)
    report = {"records": len(records), "tasks": tasks, "convert_seconds": round(seconds, 3),
              "records_per_second": round(len(records) / seconds),
              "bfcl_index_seconds": round(index_seconds, 3), "bfcl_messages_indexed": len(index.messages),
              "check_seconds": round(match_seconds, 3), "tasks_checked_per_second": round(tasks / match_seconds),
              "copies_found": sum(m is not None for m in matches)}
    print(json.dumps(report, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
