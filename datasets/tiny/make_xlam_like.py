"""Write a synthetic training set in xLAM's record layout, on the tiny functions.

Run ``python datasets/tiny/make_xlam_like.py --out xlam_like.jsonl`` (deterministic). Each line
is a record as ``Salesforce/xlam-function-calling-60k`` writes them: ``{"id", "query",
"answers", "tools"}``, ``answers`` and ``tools`` being JSON strings, a tool's parameters typed
with Python names (``"int"``, ``"str"``).

By default the records are the bundled ``tiny_train``'s 900 tasks, rewritten in xLAM's layout:
``fcenv data convert`` gives back the same questions, answers, function docs (less the
``enum`` lists, which xLAM's layout has no field for) and BFCL rules, so training on the
converted file can be compared like for like with training on the bundled split, on the
held-out ``tiny_eval``. The embedded tiny model is pretrained on ``tiny_train``'s prompts, so a
set of other questions would not be a like-for-like comparison. ``--draw N`` writes N new
questions from the same templates instead (another seed, none of them a question of
``tiny_eval``), for sets of any size (``bench/bench_convert.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20250301
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


def xlam_record(index: int, question: str, functions: list[dict], ground_truth: list[dict]) -> dict:
    """One task as an xLAM record; each answer argument is the first value BFCL accepts."""
    calls = [{"name": name, "arguments": {k: v[0] for k, v in arguments.items()}}
             for call in ground_truth for name, arguments in call.items()]
    return {"id": index, "query": question, "answers": json.dumps(calls),
            "tools": json.dumps([xlam_tool(doc) for doc in functions])}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def rewrite(split: str = "tiny_train.json") -> list[dict]:
    """The bundled split's tasks, in file order, as xLAM records."""
    bundled = _make_tiny().OUT
    answers = {row["id"]: row["ground_truth"] for row in _lines(bundled / "possible_answer" / split)}
    return [xlam_record(index, entry["question"][0][0]["content"], entry["function"], answers[entry["id"]])
            for index, entry in enumerate(_lines(bundled / split))]


def records(count: int, seed: int = SEED) -> list[dict]:
    """``count`` new questions from tiny's templates, none of them a question of ``tiny_eval``."""
    tiny = _make_tiny()
    held_out = {entry["question"][0][0]["content"] for entry in _lines(tiny.OUT / "tiny_eval.json")}
    rows = tiny.build(count, random.Random(seed), held_out)
    return [xlam_record(index, question, functions, answer)
            for index, (question, functions, answer, _) in enumerate(rows)]


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("xlam_like.jsonl"))
    parser.add_argument("--draw", type=int, metavar="N",
                        help="N new questions from tiny's templates instead of tiny_train's tasks")
    args = parser.parse_args()
    rows = records(args.draw) if args.draw is not None else rewrite()
    args.out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    print(f"wrote {len(rows)} records to {args.out}")


if __name__ == "__main__":
    main()
