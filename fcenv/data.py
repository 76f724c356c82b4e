"""Load a dataset into ``Task`` objects: ``load_tasks`` takes whatever a ``dataset_path`` names.

A bundled split's name, a source in another format or a mix of several is first resolved to one
BFCL question file (``fcenv.sources.resolve``: converted or mixed once, then cached); that file,
or a question file named directly, is read, validated and joined by ``fcenv.loader``. Accepted
files, and how their problems are reported (every problem of a file in one ``DatasetError``),
are described there; the problem types live in ``fcenv.problems``.

The three are apart so that the resolver, which loads a mix's parts, and this module, which
resolves before it loads, never import each other. Every name importable from here before
(the readers, ``content_key``, the problem types) still is.
"""

from __future__ import annotations

from pathlib import Path

from fcenv.loader import answers_path_for, content_key, func_doc_dir_for, jsonl_lines, load_file, read_records
from fcenv.problems import DatasetError, DatasetWarning, Problem, warnings_shown_as
from fcenv.sources.resolve import resolve_dataset
from fcenv.tasks import Task

__all__ = ["DatasetError", "DatasetWarning", "Problem", "answers_path_for", "content_key", "func_doc_dir_for",
           "jsonl_lines", "load_file", "load_tasks", "read_records", "warnings_shown_as"]


def load_tasks(
    path: str | Path,
    *,
    answers: str | Path | None = None,
    func_doc_dir: str | Path | None = None,
) -> list[Task]:
    """Read, validate and join a dataset; raise ``DatasetError`` listing every problem.

    ``path`` may also name a bundled split, a source in another format or a mix of several
    (converted first, ``fcenv.sources.resolve``)."""
    return load_file(resolve_dataset(path), answers=answers, func_doc_dir=func_doc_dir)
