"""Write a synthetic training set in xLAM's record layout, on the tiny functions.

Run ``python datasets/tiny/make_xlam_like.py --out xlam_like.jsonl`` (deterministic). Each line
is a record as ``Salesforce/xlam-function-calling-60k`` writes them: ``{"id", "query",
"answers", "tools"}``, ``answers`` and ``tools`` being JSON strings, a tool's parameters typed
with Python names (``"int"``, ``"str"``). The questions are drawn from the same templates and
functions as the bundled ``tiny_train`` (``make_tiny.py``), with another seed, and none is a
question of the held-out ``tiny_eval``: so ``fcenv data convert`` and training on the result can
be compared with training on the bundled split, on the same held-out tasks.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20250301
COUNT = 900
PYTHON_TYPES = {"string": "str", "integer": "int", "float": "float", "boolean": "bool"}


def _make_tiny():
    spec = importlib.util.spec_from_file_location("make_tiny", HERE / "make_tiny.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def xlam_tool(doc: dict) -> dict:
    """A BFCL doc in xLAM's tool layout: parameters by name, Python type names."""
    return {"name": doc["name"], "description": doc["description"], "parameters": {
        name: {"description": spec["description"], "type": PYTHON_TYPES[spec["type"]]}
        for name, spec in doc["parameters"]["properties"].items()}}


def records(count: int = COUNT, seed: int = SEED) -> list[dict]:
    tiny = _make_tiny()
    held_out = {json.loads(line)["question"][0][0]["content"]
                for line in (tiny.OUT / "tiny_eval.json").read_text().splitlines()}
    rng = random.Random(seed)
    rows = tiny.build(count, rng, held_out)
    out = []
    for index, (question, functions, answer, _) in enumerate(rows):
        calls = [{"name": name, "arguments": {k: v[0] for k, v in arguments.items()}}
                 for call in answer for name, arguments in call.items()]
        out.append({"id": index, "query": question, "answers": json.dumps(calls),
                    "tools": json.dumps([xlam_tool(doc) for doc in functions])})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("xlam_like.jsonl"))
    parser.add_argument("--count", type=int, default=COUNT)
    args = parser.parse_args()
    rows = records(args.count)
    args.out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    print(f"wrote {len(rows)} records to {args.out}")


if __name__ == "__main__":
    main()
