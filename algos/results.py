"""The results layout and atomic file writes.

``results/<experiment>/<model>/<dataset>/<algorithm>/run<k>/`` holds ``args.json``,
``logs/`` (TensorBoard event files), ``metrics.jsonl`` (one line of scalars per logged
iteration) and ``checkpoints/iter_<n>/``. Files are written to a temporary name and renamed,
so a crash never leaves a half-written file behind.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

_RUN = re.compile(r"^run(\d+)$")


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def run_parent(results_dir: str | Path, experiment: str, model: str, dataset: str, algorithm: str) -> Path:
    safe = [re.sub(r"[^A-Za-z0-9._-]+", "_", part) or "_" for part in (experiment, model, dataset, algorithm)]
    return Path(results_dir).joinpath(*safe)


def new_run_dir(parent: Path) -> Path:
    """``run<k>`` with k one more than the largest existing run (run1 first)."""
    parent.mkdir(parents=True, exist_ok=True)
    while True:
        taken = [int(m.group(1)) for p in parent.iterdir() if (m := _RUN.match(p.name))]
        candidate = parent / f"run{max(taken, default=0) + 1}"
        try:
            candidate.mkdir()  # fails if a concurrent run took the number first
            return candidate
        except FileExistsError:
            continue


def write_args(run_dir: Path, args: dict[str, Any]) -> None:
    atomic_write_text(run_dir / "args.json", json.dumps(args, indent=2, sort_keys=True) + "\n")


def append_metrics(run_dir: Path, record: dict[str, Any]) -> None:
    # Appending one short line is as close to atomic as a log gets; readers skip a torn tail.
    with open(run_dir / "metrics.jsonl", "a") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / "metrics.jsonl"
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def truncate_metrics(run_dir: Path, after_iteration: int) -> None:
    """On resume, drop lines logged after the checkpoint (they will be logged again)."""
    kept = [r for r in read_metrics(run_dir) if r.get("iteration", 0) <= after_iteration]
    atomic_write_text(Path(run_dir) / "metrics.jsonl", "".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))
