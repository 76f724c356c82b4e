"""Decode + check speed, ours vs BFCL's, on the same generated single-turn outputs.

Run: ``python -m bench.bench_check [--repeat 5] [--per_entry 3]``. The reference is timed inside
its own process by the oracle driver's ``time_single`` op (BFCL's runner logic: decode, format
check, checker); ours is timed in this process (handler + checker). Each side gets one warm-up
pass, then ``--repeat`` timed passes, the sides taking turns, of which the fastest counts. A
last row times the checkers alone (``time_ast`` op vs ours), both fed BFCL's decoded values.
Prints a table per category family.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from fcenv import handlers
from bench.side_by_side import fastest_passes
from fcenv.checkers import get_checker
from fcenv.checkers.ast_checker import calls_from_bfcl
from fcenv.handlers.base import DecodeError
from harness.decoder_parity import decode_or_error
from harness.generators import generate
from harness.oracle import Oracle, from_jsonable

ROOT = Path(__file__).resolve().parents[1]


def family(category: str) -> str:
    if "relevance" in category:
        return "relevance/irrelevance"
    if "java" in category:
        return "java" if "javascript" not in category else "javascript"
    return "python ast"


def time_ours(items, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for sample, decoder, checker in items:
            checker(sample.task, decode_or_error(decoder, sample.text))
    return time.perf_counter() - start


def checker_only(samples, oracle: Oracle, repeat: int) -> None:
    """The checkers alone: both fed BFCL's own decoded values (AST categories that decode)."""
    ast_samples = [s for s in samples if s.task.kind == "ast"]
    decoded = oracle.run([{"op": "decode", "text": s.text, "language": s.task.language} for s in ast_samples])
    items = []
    for sample, answer in zip(ast_samples, decoded):
        if not answer["ok"]:
            continue
        try:
            calls = calls_from_bfcl(from_jsonable(answer["decoded"]))
        except DecodeError:
            continue
        items.append((sample, answer["decoded"], calls))
    request = {"op": "time_ast", "repeat": 1, "items": [
        {"function": s.task.functions, "decoded": d, "ground_truth": s.task.ground_truth, "category": s.task.category}
        for s, d, _ in items]}
    check = get_checker("ast")

    def ours_pass() -> float:
        start = time.perf_counter()
        for sample, _, calls in items:
            check(sample.task, calls)
        return time.perf_counter() - start

    ours, reference = fastest_passes(ours_pass, oracle, request, repeat)
    per = 1e6 / len(items)
    print(f"{'checker only (ast)':<24}{len(items):>8}{ours * per:>15.1f}{reference * per:>15.1f}{reference / ours:>9.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__)
    parser.add_argument("--bfcl_dir", default=str(ROOT.parent / "shared" / "bfcl"), metavar="DIR", help="BFCL's data")
    parser.add_argument("--oracle_python", default=str(ROOT / ".oracle-venv" / "bin" / "python"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--per_entry", type=int, default=3)
    args = parser.parse_args()

    samples = generate(Path(args.bfcl_dir), seed=7, per_entry=args.per_entry)
    groups = defaultdict(list)
    for sample in samples:
        kind = sample.task.kind
        language = "python" if kind in ("relevance", "irrelevance") else sample.task.language
        decoder = handlers.get_handler(language)
        if decoder is None:
            continue
        checker = get_checker(kind if kind in ("relevance", "irrelevance") else "ast")
        groups[family(sample.task.category)].append((sample, decoder, checker))

    oracle = Oracle(args.oracle_python)
    rows = []
    for name, items in sorted(groups.items()):
        request = {"op": "time_single", "repeat": 1, "items": [
            {"text": s.text, "category": s.task.category, "function": s.task.functions,
             "ground_truth": s.task.ground_truth} for s, _, _ in items]}
        ours, reference = fastest_passes(lambda: time_ours(items, 1), oracle, request, args.repeat)
        rows.append((name, len(items), ours, reference))
    total = ("all", sum(r[1] for r in rows), sum(r[2] for r in rows), sum(r[3] for r in rows))
    print(f"{'family':<24}{'texts':>8}{'ours us/text':>15}{'BFCL us/text':>15}{'speed-up':>10}")
    for name, n, ours, reference in rows + [total]:
        per = 1e6 / n
        print(f"{name:<24}{n:>8}{ours * per:>15.1f}{reference * per:>15.1f}{reference / ours:>9.2f}x")
    print()
    checker_only(samples, oracle, args.repeat)
    missing = sorted({lang for lang in ("python", "java", "javascript") if handlers.get_handler(lang) is None})
    if missing:
        print(f"(no handler installed yet for: {', '.join(missing)}; those texts are left out)")


if __name__ == "__main__":
    main()
