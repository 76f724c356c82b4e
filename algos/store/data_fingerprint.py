"""What a run trains and is evaluated on, as a fingerprint of content: ``--resume`` compares it
with the data the flags name now, so that a file edited at the same path is noticed.

The fingerprint is of the tasks as the env reads them (questions, function docs, possible
answers, multi-turn state), not of the file's bytes: a source in another format or a mix is
fingerprinted after conversion, and an edited possible-answer file counts as a change.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def tasks_fingerprint(path: str | Path) -> str:
    """sha256 of the tasks ``path`` gives (a question file, a bundled split, a source or a mix),
    read afresh: a parsed copy kept in this process may predate an edit of the answers."""
    from fcenv.data import load_tasks
    from fcenv.sources.resolve import resolve_dataset

    digest = hashlib.sha256()
    for task in load_tasks(resolve_dataset(path).resolve()):
        content = [task.id, task.question, task.functions, task.ground_truth, task.initial_config,
                   task.involved_classes, {str(turn): docs for turn, docs in task.missed_functions.items()},
                   task.declared_kind]
        digest.update(json.dumps(content, sort_keys=True, default=repr).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def changed_data(recorded: dict[str, dict[str, str]], now: dict[str, dict[str, str]]) -> list[str]:
    """What differs between the data a run recorded and the data now, one line per file."""
    return [f"the {'training' if role == 'train' else 'held-out'} data {now[role]['path']} (fingerprint "
            f"{recorded[role]['sha256'][:12]} when the run started, {now[role]['sha256'][:12]} now)"
            for role in ("train", "eval") if role in recorded and recorded[role]["sha256"] != now[role]["sha256"]]
