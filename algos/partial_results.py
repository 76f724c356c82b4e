"""``fcenv generate``'s ``<name>.partial`` files: the answers a run finished, one result line
each, appended as they finish. A run that ends early (a failing server, Ctrl-C, a kill) leaves
one, and the error names it; the next run of the same command goes on from it: its answered
entries are kept and not asked again, and only the others are played.

A kill can cut the last line short while it is written: that line (the only one without its
newline) is dropped, and its entry asked again. Any other line that is not a result line of
the question file is an error naming the file and the line, since going on would mix answers
of another file (or damage) into the results; the file is left as it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class PartialError(ValueError):
    """A ``.partial`` file that cannot be resumed from: names the file, the line and why."""


def result_names(data: str | Path, samples: int) -> list[str]:
    """The result files of one question file: one, or one per sample."""
    stem = Path(data).stem
    return [f"{stem}_result.json" if samples == 1 else f"{stem}_result_sample{k}.json" for k in range(samples)]


def numbered_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The result lines of ``path`` (a result or ``.partial`` file) with their line numbers; none
    when there is no such file. Raises ``PartialError`` for a line that is not a result line."""
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    lines.pop()  # after the last newline: empty, or a line a kill cut short, whose entry is asked again
    hint = f"delete {path} to answer every entry again"
    numbered = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise PartialError(f"{path}, line {number}: not JSON ({exc}); {hint}") from None
        if not isinstance(record, dict) or "result" not in record or not isinstance(record.get("id"), str):
            raise PartialError(f"{path}, line {number}: not a result line (an object with 'id' and 'result'); {hint}")
        numbered.append((number, record))
    return numbered


def kept_answers(path: Path, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The result lines of ``path`` (a ``.partial`` file) by entry id, in the file's order; empty
    when there is no such file. Raises ``PartialError`` for a line that is not a result line
    of an entry in ``ids``."""
    known, kept = set(ids), {}
    for number, record in numbered_lines(path):
        if record["id"] not in known:
            raise PartialError(f"{path}, line {number}, entry {record['id']!r}: no entry with this id in the "
                               f"question file; delete {path} to answer every entry again")
        kept.setdefault(record["id"], record)
    return kept


def rewrite(path: Path, lines: list[dict[str, Any]]) -> None:
    """``path`` holding these result lines alone (the others' entries are to be asked again),
    written beside it and renamed: a kill leaves the old file or the new one, whole."""
    staged = path.with_name(path.name + ".tmp")
    staged.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    staged.replace(path)


def reopen(path: Path):
    """``path`` for appending the answers still to come, after a last line cut short by a kill
    (no newline at its end) is cut off; the lines before it are not rewritten."""
    if path.is_file():
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            os.truncate(path, end)
    return path.open("a", encoding="utf-8")
