"""What ``fcenv generate`` asks for one ``--dataset_path``: a question file's entries, each once,
or BFCL v4's format-sensitivity set, each of its entries under each configuration it picks
(``fcenv.format_sensitivity``), so that one result file answers the set under the ids BFCL
gives it and ``fcenv evaluate`` reads each answer with its configuration's decoder.

A question is a position in ``ids``: its result id, its entry (``tasks``) and how the env is
reset to ask it (``options``: the entry's index among the env's tasks and, for the set, its
configuration's prompt).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcenv.tasks import Task


@dataclass(frozen=True)
class Questions:
    source: dict[str, Any]  # the env's data: {"dataset_path": file} or {"tasks": [...]}
    ids: list[str]  # each question's result id, in the result file's order
    tasks: list[Task]  # each question's entry
    indices: list[int]  # each question's entry among the env's tasks
    configs: list[str | None]  # each question's prompt variation; None: the env's own prompt

    def options(self, question: int) -> dict[str, Any]:
        """``reset``'s options that ask this question."""
        options: dict[str, Any] = {"index": self.indices[question]}
        if self.configs[question] is not None:
            options["prompt_variation"] = self.configs[question]
        return options


def file_questions(data: str | Path) -> Questions:
    """A question file's entries, each once, as the env built on the file numbers them."""
    from fcenv.env import dataset_tasks

    tasks = dataset_tasks(data, None)
    return Questions({"dataset_path": data}, [task.id for task in tasks], tasks, list(range(len(tasks))),
                     [None] * len(tasks))


def env_questions(env) -> Questions:
    """The entries of an env already built, each once."""
    tasks = env.unwrapped.tasks
    return Questions({"tasks": tasks}, [task.id for task in tasks], tasks, list(range(len(tasks))), [None] * len(tasks))


def set_questions(id_file: Path, configs: list[str], entries: int = 0) -> Questions:
    """The format-sensitivity set's questions (``configs`` and the first ``entries`` entries of
    it; 0: all), the env built on the entries they ask, each once."""
    from fcenv.format_sensitivity import load_set

    varied = load_set(id_file, configs, entries)
    position: dict[str, int] = {}
    env_tasks = []
    for entry in varied:
        if entry.task.id not in position:
            position[entry.task.id] = len(env_tasks)
            env_tasks.append(entry.task)
    return Questions({"tasks": env_tasks}, [entry.id for entry in varied], [entry.task for entry in varied],
                     [position[entry.task.id] for entry in varied], [entry.config for entry in varied])


def questions_of(data: str | Path, args: argparse.Namespace) -> Questions:
    """The questions of one resolved ``--dataset_path``; the set's slice is the flags'
    (``--sensitivity_configs``, ``--sensitivity_entries``)."""
    from fcenv.format_sensitivity import is_set_file, select_configs

    if is_set_file(data):
        return set_questions(Path(data), select_configs(args.sensitivity_configs), args.sensitivity_entries)
    return file_questions(data)
