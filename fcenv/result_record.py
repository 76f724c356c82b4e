"""How a result file's answers were made: what ``fcenv generate`` records beside each answer,
and what ``fcenv evaluate`` reads back.

Each line ``fcenv generate`` writes holds, beside BFCL's ``id``, ``result``, ``latency`` and token
counts (and ``inference_log`` with ``--include-input-log``), the key ``fcenv_generate``: the model
(its checkpoint, adapter, run or endpoint), the chat mode (``tool_format``, ``system_prompt``,
``prompt_variation``), the engine and the sampling settings. BFCL's runner scores a result line
by its ``id``, ``result`` and ``inference_log``, reads its latency and token counts for cost and
latency alone, and nothing else, so the record leaves BFCL's scores as they are
(``tests/parity/test_result_record_parity.py`` runs BFCL's runner on lines with and without it).
It lies in every line, not in a file beside it, so that it goes wherever a line goes: the
sample files ``cat`` joins, a file copied on its own.

``fcenv evaluate`` reads each result file's ``tool_format`` from it (``recorded_tool_format``):
with no ``--tool_format`` given, the answers are read in the recorded format; a flag that says
otherwise is refused. A file without a record (BFCL's own, one written by hand) is read as the
flags say.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RECORD_KEY = "fcenv_generate"


@dataclass(frozen=True)
class Recorded:
    """A result file's recorded tool format: ``None`` for prompting, and the first line that says so."""

    tool_format: str | None
    line: int


class RecordConflict(ValueError):
    """The lines of one result file record different tool formats (files of two runs joined)."""


def recorded_tool_format(path: Path) -> Recorded | None:
    """The tool format the lines of ``path`` record (``None`` inside: prompting); ``None``
    when no line holds a record (or the file cannot be read: reading it is
    ``fcenv.evaluate.read_results``' job, which names the problem). Raises ``RecordConflict``
    when lines record different formats. Only lines that name the key are parsed: a file
    without records costs one pass over its text."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if RECORD_KEY not in text:
        return None
    from fcenv.loader import jsonl_lines

    seen: dict[str | None, int] = {}
    for number, line in enumerate(jsonl_lines(text), start=1):
        if RECORD_KEY not in line:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue  # read_results names the line
        record = value.get(RECORD_KEY) if isinstance(value, dict) else None
        if isinstance(record, dict) and isinstance(record.get("tool_format"), (str, type(None))):
            seen.setdefault(record.get("tool_format") or None, number)
    if len(seen) > 1:
        said = ", ".join(f"{mode_name(name)} (line {line})" for name, line in seen.items())
        raise RecordConflict(f"{path}: its lines were generated in different modes, {said}: files of different "
                             f"runs joined; score each run's file on its own")
    if not seen:
        return None
    (tool_format, line), = seen.items()
    return Recorded(tool_format, line)


def mode_name(tool_format: str | None) -> str:
    """A recorded mode as a person reads it."""
    return f"--tool_format {tool_format}" if tool_format else "prompting mode (no --tool_format)"


def with_record(line: dict[str, Any], record: dict[str, Any] | None) -> dict[str, Any]:
    """A result line with its record, after BFCL's keys."""
    return line if record is None else {**line, RECORD_KEY: record}
