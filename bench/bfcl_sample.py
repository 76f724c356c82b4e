"""``python -m bench.bfcl_sample``: the fixed held-out samples of the real-model benchmarks, written
by the package's sampler (``fcenv.bfcl_sample``, which ``fcenv sample`` and ``fcenv card`` use),
so the same command names the same entries as before it moved there.

    python -m bench.bfcl_sample OUT_FILE                 # HELDOUT: 304 single-turn entries
    python -m bench.bfcl_sample OUT_FILE --multi_turn    # 40 multi-turn entries
    python -m bench.bfcl_sample OUT_FILE --sensitivity K # K entries of the format-sensitivity set
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fcenv.bfcl_data import DEFAULT_DIR
from fcenv.bfcl_sample import (HELDOUT, HELDOUT_K, MULTI_TURN, MULTI_TURN_K, write_mixed_sample,
                               write_sensitivity_entries)
from fcenv.flags import SAMPLE, add_group


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description="Write the fixed held-out BFCL sample (one file).")
    parser.add_argument("out_file", type=Path, help="question file to write (answers in possible_answer/ beside it)")
    add_group(parser, SAMPLE, skip=["categories", "per_category"])
    parser.add_argument("--sensitivity", type=int, default=0, metavar="K",
                        help="instead: the K entries of the format-sensitivity sample (bench.bench_real_card "
                             "--format_sensitivity K asks the same ones)")
    parser.add_argument("--multi_turn", action="store_true",
                        help=f"instead: the multi-turn held-out sample ({MULTI_TURN_K} entries of each of BFCL's "
                             f"four multi-turn categories)")
    args = parser.parse_args(argv)
    bfcl_dir = Path(args.bfcl_dir or DEFAULT_DIR)
    if args.sensitivity:
        out = write_sensitivity_entries(bfcl_dir, args.sensitivity, args.out_file)
    else:
        out = write_mixed_sample(bfcl_dir, MULTI_TURN if args.multi_turn else HELDOUT,
                                 MULTI_TURN_K if args.multi_turn else HELDOUT_K, args.out_file)
    print(f"{out}: {sum(1 for _ in out.open(encoding='utf-8'))} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
