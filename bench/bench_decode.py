"""Decode speed per text, ours vs BFCL's, on the texts of the decoder parity tests.

Run: ``python -m bench.bench_decode [--repeat 5]``. The reference is timed inside its own
process by the oracle driver's ``time_decode`` op (``default_decode_ast_prompting`` on every
text, failures included); ours is timed in this process through the registry
(``fcenv.handlers.decode``). Each side gets one warm-up pass, then ``--repeat`` timed passes,
the two sides taking turns, of which the fastest counts (on a shared machine the minimum is
the least noisy figure, and taking turns exposes both sides to the same load).
Prints one row per language: texts, share that decode, microseconds per text on each side,
and the speed-up.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench.side_by_side import fastest_passes
from fcenv.handlers import decode
from fcenv.handlers.base import DecodeError
from harness.decoder_parity import python_texts, texts_for
from harness.oracle import Oracle

ROOT = Path(__file__).resolve().parents[1]


def one_pass(texts: list[str], language: str) -> tuple[float, int]:
    """Seconds to decode every text once, and how many of them decode."""
    decoded = 0
    start = time.perf_counter()
    for text in texts:
        try:
            decode(text, language)
            decoded += 1
        except DecodeError:
            pass
    return time.perf_counter() - start, decoded


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__)
    parser.add_argument("--bfcl_dir", default=str(ROOT.parent / "shared" / "bfcl"), metavar="DIR", help="BFCL's data")
    parser.add_argument("--oracle_python", default=str(ROOT / ".oracle-venv" / "bin" / "python"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    bfcl_dir = Path(args.bfcl_dir)
    corpora = {
        "python": python_texts(bfcl_dir),
        "java": texts_for("java", bfcl_dir),
        "javascript": texts_for("javascript", bfcl_dir),
    }
    oracle = Oracle(args.oracle_python)
    print(f"{'language':<12}{'texts':>8}{'decoded':>9}{'ours us/text':>15}{'BFCL us/text':>15}{'speed-up':>10}")
    for language, texts in corpora.items():
        request = {"op": "time_decode", "language": language, "texts": texts, "repeat": 1}
        _, decoded = one_pass(texts, language)
        ours, reference = fastest_passes(lambda: one_pass(texts, language)[0], oracle, request, args.repeat)
        per = 1e6 / len(texts)
        print(f"{language:<12}{len(texts):>8}{decoded / len(texts):>9.0%}"
              f"{ours * per:>15.1f}{reference * per:>15.1f}{reference / ours:>9.2f}x")


if __name__ == "__main__":
    main()
