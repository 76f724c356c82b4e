"""How BFCL's memory backends carry memory from one conversation to the next, kept in memory.

In BFCL each memory category runs, per scenario, a chain of prerequisite conversations and
then the questions. A backend instance lives for one conversation:

- it starts empty in the first prerequisite conversation of a chain (an id with ``prereq``
  that ends in ``-0``); every later conversation, prerequisite or question, starts from the
  scenario's latest snapshot, or empty when there is none (BFCL prints a warning);
- at the end of each prerequisite conversation (a force quit included) the memory is
  flushed: written as JSON to ``<scenario>_final.json`` (the latest) and to a checkpoint
  named by the conversation's id; questions never flush, so every question of a scenario
  starts from the memory the whole chain left.

BFCL writes those files under the model's result folder, one ``memory_snapshot/`` folder per
backend. ``MemorySnapshots`` is that folder for one run, as plain data: the latest snapshot
per (backend class, scenario) and the checkpoints. A snapshot goes through JSON on the way
in, as the file does (dict keys become strings, tuples lists).

A memory backend's ``_load_scenario(config)`` takes ``{"scenario", "test_id"}`` plus
``"snapshot"``, the memory to start from when there is one (``config_for`` builds it);
``_snapshot()`` returns what BFCL's flush writes.
"""

from __future__ import annotations

import json
from typing import Any

from fcenv.backends.plain_data import plain_copy


def is_prerequisite(test_id: str) -> bool:
    return "prereq" in test_id


def is_first_prerequisite(test_id: str) -> bool:
    """BFCL's rule for the conversation that starts a chain with an empty memory."""
    return "prereq" in test_id and test_id.endswith("-0")


def open_scenario(backend: Any, config: dict[str, Any]) -> dict[str, Any] | None:
    """What every memory backend's ``_load_scenario`` does first: the scenario and conversation
    ids set on ``backend``, and the memory it starts from returned: none (an empty memory) when
    the config holds none. BFCL tests the loaded snapshot's truth, so an empty one counts as none."""
    backend.scenario = config.get("scenario")
    backend.test_id = config.get("test_id")
    snapshot = config.get("snapshot")
    return snapshot if snapshot else None


class MemorySnapshots:
    """BFCL's ``memory_snapshot/`` folders of one run, in memory."""

    def __init__(self) -> None:
        self.latest: dict[tuple[str, str], dict[str, Any]] = {}  # (class, scenario) -> <scenario>_final.json
        self.checkpoints: dict[tuple[str, str], dict[str, Any]] = {}  # (class, conversation id) -> its file

    def config_for(self, class_name: str, scenario: str, test_id: str) -> dict[str, Any]:
        """The scenario config a backend of ``class_name`` starts conversation ``test_id`` with."""
        config: dict[str, Any] = {"scenario": scenario, "test_id": test_id}
        if is_first_prerequisite(test_id):
            return config
        latest = self.latest.get((class_name, scenario))
        if latest is not None:
            config["snapshot"] = plain_copy(latest)
        return config

    def flush(self, class_name: str, scenario: str, test_id: str, memory: dict[str, Any]) -> None:
        """A prerequisite conversation's end: its memory becomes the scenario's latest."""
        text = json.dumps(memory)
        self.checkpoints[(class_name, test_id)] = json.loads(text)
        self.latest[(class_name, scenario)] = json.loads(text)
