"""What is wrong with an input file: ``Problem`` (one thing, with where it is), ``DatasetError``
(every problem of a file at once), ``DatasetWarning`` (what loads but should be known) and
``warnings_shown_as`` (how the commands print those warnings).

A module of its own, importing only the standard library, so that the loader (``fcenv.loader``),
the resolver and converters of ``fcenv.sources`` and ``fcenv.data`` share them without importing
each other. ``fcenv.data`` re-exports every name.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file."""

    file: str
    line: int | None
    entry_id: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = [self.file]
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.entry_id is not None:
            where.append(f"entry {self.entry_id!r}")
        if self.field:
            where.append(f"field '{self.field}'")
        return ", ".join(where) + f": {self.message}"


class DatasetWarning(UserWarning):
    """Something in a file that loads but that its user should know: an entry no answer can
    pass in BFCL's own data (``fcenv.answerable``), a held-out function no class has.
    ``warnings.simplefilter("error", DatasetWarning)`` makes loading stop at the first one."""


@contextmanager
def warnings_shown_as(prog: str) -> Iterator[None]:
    """Within it, a ``DatasetWarning`` is printed as one line, ``<prog>: warning: <message>``
    (the commands' own voice), every time; other warnings as Python prints them."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, DatasetWarning):
            print(f"{prog}: warning: {message}", file=file or sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("always", DatasetWarning)
        warnings.showwarning = show
        yield


SHOWN = 50  # problems listed in a DatasetError's message; the rest are counted


class DatasetError(ValueError):
    """Raised with every problem found in an input file (a dataset, its answers, a result file),
    or in several, not just the first; the problems in file and line order. The message lists
    up to ``SHOWN`` of them, shared among the files, so that a file with many problems does not
    hide the others'."""

    def __init__(self, problems: list[Problem]):
        files = list(dict.fromkeys(p.file for p in problems))  # in the order the caller met them
        self.problems = sorted(problems, key=lambda p: (files.index(p.file), p.line or 0))
        if len(self.problems) == 1:  # one line, as the commands' other errors
            super().__init__(str(self.problems[0]))
        else:
            shown = "\n".join(_listed(self.problems, files))
            where = f" of {len(files)} files" if len(files) > 1 else ""
            super().__init__(f"{len(self.problems)} problems in the input{where}:\n{shown}")


def _listed(problems: list[Problem], files: list[str]) -> list[str]:
    """The message's lines: every problem up to ``SHOWN``; past it, an equal share of each file's
    (at least 3), then how many more that file has."""
    if len(problems) <= SHOWN:
        return [f"  {p}" for p in problems]
    share = max(SHOWN // len(files), 3)
    lines = []
    for file in files:
        own = [p for p in problems if p.file == file]
        lines += [f"  {p}" for p in own[:share]]
        if len(own) > share:
            lines.append(f"  ... and {len(own) - share} more" + (f" in {file}" if len(files) > 1 else ""))
    return lines
