"""The command-line parser of every fcenv command (and of the trainer's, in algos): argparse's,
with what a person at a terminal needs from it.

An error is one line, naming the flag, with where the flags are listed (argparse would print the
whole usage first: 53 lines for ``fcenv train``). A flag is spelt out: with abbreviations, a
misspelt ``--num_env_step`` would silently mean ``--num_env_steps``, and a flag added later could
change what an old command line means. ``UsageError`` is what a command raises for a flag that
cannot be meant (``fcenv.cli`` prints it as the same one line).
"""

from __future__ import annotations

import argparse
from typing import NoReturn


class UsageError(Exception):
    """A flag that cannot be meant; reported as one line with exit status 2.

    Here, beside the parser, so that what a command calls (``fcenv.sources.report``, the training
    layer's commands) can raise it without importing ``fcenv.cli``, which imports them."""


class ArgumentParser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        command = f"python {self.prog}" if self.prog.endswith(".py") else self.prog
        hint = f" (`{command} --help` lists the flags)" if self.add_help else ""
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")
