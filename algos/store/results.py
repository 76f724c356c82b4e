"""The results layout and atomic file writes.

``results/<experiment>/<model>/<dataset>/<algorithm>/run<k>/`` holds ``args.json``,
``logs/`` (TensorBoard event files), ``metrics.jsonl`` (one line of scalars per logged
iteration) and ``checkpoints/iter_<n>/``. Files are written to a temporary name, flushed to
disk and renamed, so a crash never leaves a half-written file behind; the metrics log is
append-only and is cut back to the checkpoint a run resumes from.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

_RUN = re.compile(r"^run(\d+)$")


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)  # makes the rename itself durable


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
    # One write of one line: a kill leaves at most a torn last line, which readers skip and
    # a resumed run cuts away (truncate_metrics) before appending again.
    with open(run_dir / "metrics.jsonl", "a") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / "metrics.jsonl"
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").split("\n"):  # not splitlines: see fcenv.data.jsonl_lines
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def truncate_metrics(run_dir: Path, after_iteration: int) -> None:
    """On resume, drop lines logged after the checkpoint (they will be logged again) and a torn tail."""
    kept = [r for r in read_metrics(run_dir) if r.get("iteration", 0) <= after_iteration]
    atomic_write_text(Path(run_dir) / "metrics.jsonl", "".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))


def wait_until_new_event_file_sorts_last(logs: Path) -> None:
    """Make the next TensorBoard event file sort after every existing one.

    TensorBoard reads a folder's event files in name order, and the names start with the
    second they were opened; a resumed run's ``purge_step`` only hides the stale events of
    files read before its own. A resume within the same second as the killed run's start
    (tests, quick restarts) therefore waits for the next second.
    """
    stamps = [int(p.name.split(".")[3]) for p in Path(logs).glob("events.out.tfevents.*")
              if len(p.name.split(".")) > 3 and p.name.split(".")[3].isdigit()]
    while stamps and int(time.time()) <= max(stamps):
        time.sleep(0.05)
