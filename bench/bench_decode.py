"""Decode speed per text, ours vs BFCL's, on the texts of the decoder parity tests.

Run: ``python bench/bench_decode.py [--repeat 5]``. The reference is timed inside its own
process by the oracle driver's ``time_decode`` op (``default_decode_ast_prompting`` on every
text, failures included); ours is timed in this process through the registry
(``handlers.decode``). Each side gets one warm-up pass, then ``--repeat`` timed passes of
which the fastest counts (the machine is shared; the minimum is the least noisy figure).
Prints one row per language: texts, share that decode, microseconds per text on each side,
and the speed-up.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from handlers import decode  # noqa: E402
from handlers.base import DecodeError  # noqa: E402
from tests.oracle import Oracle  # noqa: E402
from tests.test_handlers_parity import python_texts  # noqa: E402
from tests.test_handlers_parity_java_js import texts_for  # noqa: E402


def time_ours(texts: list[str], language: str, repeat: int) -> tuple[float, int]:
    """Seconds of the fastest of ``repeat`` passes, and how many texts decode."""
    decoded = 0
    for text in texts:  # warm-up, and the share of texts that decode
        try:
            decode(text, language)
            decoded += 1
        except DecodeError:
            pass
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            try:
                decode(text, language)
            except DecodeError:
                pass
        best = min(best, time.perf_counter() - start)
    return best, decoded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bfcl-dir", default=str(ROOT.parent / "shared" / "bfcl"))
    parser.add_argument("--oracle-python", default=str(ROOT / ".oracle-venv" / "bin" / "python"))
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
        one_pass = {"op": "time_decode", "language": language, "texts": texts, "repeat": 1}
        reference = min(answer["seconds"] for answer in oracle.run([one_pass] * (args.repeat + 1))[1:])
        ours, decoded = time_ours(texts, language, args.repeat)
        per = 1e6 / len(texts)
        print(f"{language:<12}{len(texts):>8}{decoded / len(texts):>9.0%}"
              f"{ours * per:>15.1f}{reference * per:>15.1f}{reference / ours:>9.2f}x")


if __name__ == "__main__":
    main()
