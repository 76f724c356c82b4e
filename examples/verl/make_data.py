"""verl's training and validation parquet files for fcenv's tasks (rows of
``fcenv.verl.dataset_rows``), for ``examples/verl/fcenv_grpo.yaml``.

Run: ``python examples/verl/make_data.py --data multi_turn_train --val multi_turn_eval --out data/fcenv``
(``--data``/``--val``: a bundled split's name or a BFCL question file).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from datasets import Dataset

from fcenv.verl import dataset_rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="multi_turn_train")
    parser.add_argument("--val", default="multi_turn_eval")
    parser.add_argument("--out", type=Path, default=Path("data/fcenv"))
    parser.add_argument("--system_prompt", default=None, help="as in agent_loops.yaml (default: BFCL's)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    options = {"system_prompt": args.system_prompt} if args.system_prompt else {}
    for name, data in (("train", args.data), ("val", args.val)):
        rows = dataset_rows(data, **options)
        Dataset.from_list(rows).to_parquet(str(args.out / f"{name}.parquet"))
        print(f"{args.out / name}.parquet: {len(rows)} tasks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
