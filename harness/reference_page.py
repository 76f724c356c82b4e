"""docs/reference.md's flag tables, written from the parsers themselves, so the page cannot drift
from what the commands take: ``python -m harness.reference_page`` rewrites the tables in place,
and ``tests/repo/test_docs.py`` fails while the page differs from what this writes.

A table follows its command's heading (``## `fcenv generate` ``); the text around the tables is
the page's own. A flag read under an earlier spelling shows it as ``(old: ...)``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference.md"
# The page's heading of each command, by the name ``commands`` gives it.
HEADINGS = {"train_fctncalling.py": "`train_fctncalling.py` and `fcenv train`"}
_TABLE = re.compile(r"\| flag \| default \| meaning \|\n\|---\|---\|---\|\n(?:\|.*\|\n)*")


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser: the trainer's and each ``fcenv`` subcommand's, by name."""
    from fcenv.algos.config import build_parser as train_parser
    from fcenv.cli import build_parser

    found = {"train_fctncalling.py": train_parser()}
    pending = [("fcenv", build_parser())]
    while pending:
        name, parser = pending.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, subparser in action.choices.items():
                    if sub != "train":  # fcenv train is train_fctncalling.py
                        pending.append((f"{name} {sub}", subparser))
        if name != "fcenv":
            found[name] = parser
    return found


def _default(action: argparse.Action) -> str:
    default = action.default
    if default is None or default is argparse.SUPPRESS or isinstance(action, argparse._StoreTrueAction) \
            or (isinstance(default, (str, list)) and not default):
        return ""
    return "`" + (" ".join(map(str, default)) if isinstance(default, list) else str(default)) + "`"


def table(parser: argparse.ArgumentParser) -> str:
    rows = ["| flag | default | meaning |", "|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        old = set(getattr(action, "old", ()))
        names = [name for name in action.option_strings if name not in old] or [action.metavar or action.dest.upper()]
        flag = ", ".join(f"`{name}`" for name in names)
        if old:
            flag += " (old: " + ", ".join(f"`{name}`" for name in sorted(old)) + ")"
        meaning = (action.help or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| {flag} | {_default(action)} | {meaning} |")
    return "\n".join(rows) + "\n"


def written(page: str) -> str:
    """The page with each command's table replaced by the one its parser gives."""
    for name, parser in commands().items():
        if table(parser).count("\n") == 2:
            continue  # a command of subcommands (fcenv data): its subcommands have the tables
        heading = f"## {HEADINGS.get(name, f'`{name}`')}\n"
        start = page.index(heading)  # a command with no section is an error: the page must name it
        match = _TABLE.search(page, start)
        page = page[:match.start()] + table(parser) + page[match.end():]
    return page


if __name__ == "__main__":
    PAGE.write_text(written(PAGE.read_text()))
