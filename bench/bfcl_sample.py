"""A fixed sample of BFCL's entries, written in BFCL's layout (question files, and their possible
answers in ``possible_answer/``), so that every command that takes a question file takes it.

The sample of a category is ``k`` entries spread evenly over its file: positions
``i * n // k`` for ``i < k`` (all ``n`` entries when ``n <= k``). BFCL's memory file is sampled
per scenario instead (``k`` questions spread over each scenario's), so that every scenario and
its prerequisite conversations are in it; each question makes an entry of each of the three
memory categories. The format-sensitivity set is a list of ids; its sample is ``k`` of them spread
over the list. A sample depends on nothing but the files, so the same command names the
same entries on every machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SINGLE_TURN = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
               "irrelevance", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
               "live_irrelevance", "live_relevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
MEMORY = "memory"  # BFCL's memory file: its questions make the entries of memory_kv, memory_vector, memory_rec_sum
SENSITIVITY_FILE = "BFCL_v4_format_sensitivity.json"  # BFCL's format-sensitivity set: category -> entry ids
# The fixed held-out sample of RL on a real model (docs/benchmarks/real-model.md): BFCL's Python single-turn
# categories, HELDOUT_K entries of each (all of the smaller live ones): 304 entries.
HELDOUT = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_simple", "live_multiple",
           "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance")
HELDOUT_K = 31
# The fixed multi-turn held-out sample (multi-turn training on a real model): MULTI_TURN_K entries
# of each of BFCL's four multi-turn categories, spread over each file: 40 entries.
MULTI_TURN_K = 10


def spread(count: int, k: int) -> list[int]:
    """``k`` positions spread evenly over ``count`` (all of them when there are no more)."""
    return list(range(count)) if count <= k else [i * count // k for i in range(k)]


def sampled_lines(bfcl_dir: Path, category: str, k: int) -> tuple[list[str], list[str] | None]:
    """The sample of ``category``: its question lines and their possible-answer lines (None
    where the category has no answer file)."""
    name = f"BFCL_v4_{category}.json"
    lines = [line for line in (Path(bfcl_dir) / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    if category == MEMORY:
        keep = [line for scenario in _by_scenario(lines).values() for line in (scenario[i] for i in spread(len(scenario), k))]
    else:
        keep = [lines[i] for i in spread(len(lines), k)]
    answer_file = Path(bfcl_dir) / "possible_answer" / name
    if not answer_file.exists():
        return keep, None
    wanted = {_id(line) for line in keep}
    return keep, [line for line in answer_file.read_text(encoding="utf-8").splitlines()
                  if line.strip() and _id(line) in wanted]


def _by_scenario(lines: list[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for line in lines:
        groups.setdefault(json.loads(line)["scenario"], []).append(line)
    return groups


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def write_sample(bfcl_dir: Path, category: str, k: int, out: Path) -> Path:
    """The sample of ``category`` as ``out/BFCL_v4_<category>.json`` (its answers beside it, where
    the category has them); returns the question file."""
    name = f"BFCL_v4_{category}.json"
    questions, answers = sampled_lines(bfcl_dir, category, k)
    out.mkdir(parents=True, exist_ok=True)
    _write_lines(out / name, questions)
    if answers is not None:
        (out / "possible_answer").mkdir(exist_ok=True)
        _write_lines(out / "possible_answer" / name, answers)
    return out / name


def write_sensitivity_sample(bfcl_dir: Path, k: int, out: Path) -> Path:
    """``k`` entries of BFCL's format-sensitivity set, spread evenly over its id list (which goes
    category by category), as ``out/BFCL_v4_format_sensitivity.json`` in the set's format, with
    links to the category files and their answers beside it, where the set's loader looks."""
    kept = sensitivity_ids(bfcl_dir, k)
    out.mkdir(parents=True, exist_ok=True)
    for name in [f"BFCL_v4_{category}.json" for category, ids in kept.items() if ids] + ["possible_answer"]:
        if not (out / name).exists():
            (out / name).symlink_to((Path(bfcl_dir) / name).resolve())
    (out / SENSITIVITY_FILE).write_text(json.dumps(kept, indent=4) + "\n", encoding="utf-8")
    return out / SENSITIVITY_FILE


def sensitivity_ids(bfcl_dir: Path, k: int) -> dict[str, list[str]]:
    """The sample of the format-sensitivity set: ``k`` of its ids spread evenly over its list,
    by category (every category of the set, empty where none is kept)."""
    listed = json.loads((Path(bfcl_dir) / SENSITIVITY_FILE).read_text(encoding="utf-8"))
    flat = [(category, entry) for category, ids in listed.items() for entry in ids]
    kept: dict[str, list[str]] = {category: [] for category in listed}
    for i in spread(len(flat), k):
        kept[flat[i][0]].append(flat[i][1])
    return kept


def write_sensitivity_entries(bfcl_dir: Path, k: int, out_file: Path) -> Path:
    """The entries of the format-sensitivity sample (``write_sensitivity_sample``'s) as one plain
    question file, their answers in ``possible_answer/`` beside it: what a client that asks
    each prompt variation itself (``bench/heldout.py --prompt_variations``) plays."""
    questions, answers = [], []
    for category, ids in sensitivity_ids(bfcl_dir, k).items():
        wanted = set(ids)
        name = f"BFCL_v4_{category}.json"
        for folder, kept in ((Path(bfcl_dir), questions), (Path(bfcl_dir) / "possible_answer", answers)):
            kept += [line for line in (folder / name).read_text(encoding="utf-8").splitlines()
                     if line.strip() and _id(line) in wanted]
    out_file = Path(out_file)
    (out_file.parent / "possible_answer").mkdir(parents=True, exist_ok=True)
    _write_lines(out_file, questions)
    _write_lines(out_file.parent / "possible_answer" / out_file.name, answers)
    return out_file


def write_mixed_sample(bfcl_dir: Path, categories: tuple[str, ...], k: int, out_file: Path) -> Path:
    """The samples of several categories (``k`` each, as ``write_sample``) in one question file
    ``out_file``, their answers in ``possible_answer/<its name>`` beside it: one file that every
    command takes, scored per category by the entries' ids."""
    questions, answers = [], []
    for category in categories:
        kept, kept_answers = sampled_lines(bfcl_dir, category, k)
        questions += kept
        answers += kept_answers or []
    out_file = Path(out_file)
    (out_file.parent / "possible_answer").mkdir(parents=True, exist_ok=True)
    _write_lines(out_file, questions)
    _write_lines(out_file.parent / "possible_answer" / out_file.name, answers)
    return out_file


def _id(line: str) -> str:
    return json.loads(line)["id"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description="Write the fixed held-out BFCL sample (one file).")
    parser.add_argument("out_file", type=Path, help="question file to write (answers in possible_answer/ beside it)")
    parser.add_argument("--bfcl_dir", type=Path, default=Path.home() / ".cache" / "fcenv" / "bfcl")
    parser.add_argument("--sensitivity", type=int, default=0, metavar="K",
                        help="instead: the K entries of the format-sensitivity sample (bench.bench_real_card "
                             "--format_sensitivity K asks the same ones)")
    parser.add_argument("--multi_turn", action="store_true",
                        help=f"instead: the multi-turn held-out sample ({MULTI_TURN_K} entries of each of BFCL's "
                             f"four multi-turn categories)")
    args = parser.parse_args(argv)
    if args.sensitivity:
        out = write_sensitivity_entries(args.bfcl_dir, args.sensitivity, args.out_file)
    else:
        out = write_mixed_sample(args.bfcl_dir, MULTI_TURN if args.multi_turn else HELDOUT,
                                 MULTI_TURN_K if args.multi_turn else HELDOUT_K, args.out_file)
    print(f"{out}: {sum(1 for _ in out.open(encoding='utf-8'))} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
