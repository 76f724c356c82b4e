"""The bundled splits: an id names one entry of the bundled data, so a result file scored
against the wrong split is refused with one line that names the split it answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fcenv.bundled import BUNDLED, split_holding
from fcenv.data import load_tasks

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [("tiny_train", "tiny_eval"), ("multi_turn_train", "multi_turn_eval"), ("varied_train", "varied_eval"),
         ("multi_turn_varied_train", "multi_turn_varied_eval")]
GENERATORS = ["tiny/make_tiny.py", "tiny/make_multi_turn.py", "varied/make_varied.py", "multi_turn/make_multi_turn_varied.py"]
# What the generators import from their own folders, copied beside them.
HELPERS = ["multi_turn/world.py", "multi_turn/skills.py", "multi_turn/func_docs.py", "multi_turn/check_split.py"]


def ids(name: str) -> list[str]:
    return [task.id for task in load_tasks(BUNDLED[name])]


@pytest.mark.parametrize("train, held_out", PAIRS)
def test_splits_have_distinct_ids_in_their_categories(train, held_out):
    train_ids, held_out_ids = ids(train), ids(held_out)
    assert len(set(train_ids)) == len(train_ids) and len(set(held_out_ids)) == len(held_out_ids)
    assert not set(train_ids) & set(held_out_ids)
    # The ids stay BFCL's "<category>_<n>": the category decides the checker.
    categories = {i.rsplit("_", 1)[0] for i in train_ids + held_out_ids}
    assert categories <= {"simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
                          "multi_turn_tiny", "multi_turn_varied_base", "multi_turn_varied_miss_param",
                          "multi_turn_varied_miss_func", "multi_turn_varied_long"}
    assert split_holding(train_ids[:5]) == train and split_holding(held_out_ids[-5:]) == held_out


def test_the_generators_write_the_bundled_files(tmp_path):
    """datasets/tiny/make_*.py, datasets/varied/make_varied.py and
    datasets/multi_turn/make_multi_turn_varied.py are the source of the bundled files (the
    multi-turn docs included): run into a copy, they write the same bytes."""
    out = f"Path({str(tmp_path / 'out')!r})"
    for script in HELPERS:
        (tmp_path / Path(script).name).write_text((ROOT / "datasets" / script).read_text())
    for script in GENERATORS:  # make_multi_turn.py writes through make_tiny.py
        source = (ROOT / "datasets" / script).read_text()
        (tmp_path / Path(script).name).write_text(
            source.replace('Path(__file__).resolve().parents[2] / "fcenv" / "bundled"', out))
    for script in GENERATORS:
        subprocess.run([sys.executable, str(tmp_path / Path(script).name)], cwd=tmp_path, check=True, timeout=300)
    for name, path in BUNDLED.items():
        assert (tmp_path / "out" / path.name).read_bytes() == path.read_bytes(), name
        assert (tmp_path / "out" / "possible_answer" / path.name).read_bytes() == \
            (path.parent / "possible_answer" / path.name).read_bytes(), name
    docs = sorted((BUNDLED["multi_turn_varied_train"].parent / "multi_turn_func_doc").iterdir())
    assert [(d.name, d.read_bytes()) for d in docs] == \
        [(d.name, d.read_bytes()) for d in sorted((tmp_path / "out" / "multi_turn_func_doc").iterdir())]


@pytest.mark.parametrize("train, held_out", PAIRS)
def test_results_of_the_other_split_are_refused_in_one_line(train, held_out, tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps({"id": i, "result": "[f()]"}) + "\n" for i in ids(train)[:20]))
    out = tmp_path / "verdicts.jsonl"
    proc = subprocess.run([sys.executable, "-m", "fcenv", "evaluate", "--dataset_path", held_out, "--results", str(results),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(results) in proc.stderr and f"the bundled split {train}'s entries (--dataset_path {train})" in proc.stderr
    assert not out.exists()
