"""The same records in each form a source can take, and the tasks a form gives, for comparing
the forms (tests/env/test_sources.py, tests/fuzz/test_fuzz_sources.py)."""

from __future__ import annotations

import json
from pathlib import Path

from fcenv.data import load_tasks


def write_every_form(records: list, folder: Path) -> list[Path]:
    """The records as JSON Lines, a JSON array, a Parquet file and a save_to_disk folder."""
    from datasets import Dataset

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "r.json").write_text(json.dumps(records, indent=1))
    Dataset.from_list(records).to_parquet(str(folder / "r.parquet"))
    Dataset.from_list(records).save_to_disk(str(folder / "saved"))
    return [folder / "r.jsonl", folder / "r.json", folder / "r.parquet", folder / "saved"]


def task_contents(path: Path) -> list[tuple]:
    """What a judged task is made of: its id, question, docs and possible answer."""
    return [(t.id, t.question, t.functions, t.ground_truth) for t in load_tasks(path)]
