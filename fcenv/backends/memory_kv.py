"""MemoryAPI_kv: BFCL's key-value memory (category memory_kv).

Two stores of string keys and values: a small core memory, shown to the model in its system
prompt, and a larger archival memory it must search. Keys are snake_case; keys are searched
with BM25+ (``fcenv.backends.bm25``). Sizes, messages and the order of the checks follow the
reference backend as observed by differential tests, hostile inputs included: add and replace
turn their arguments into strings first, while remove and retrieve look the key up as given
(so an unhashable key fails as Python's dict lookup does).
"""

from __future__ import annotations

import json
import re
from typing import Any

from fcenv.backends.bm25 import BM25Plus
from fcenv.backends.memory_snapshots import open_scenario
from fcenv.backends.plain_data import plain_copy

CORE_SIZE = 7
CORE_ENTRY_LENGTH = 300
ARCHIVAL_SIZE = 50
ARCHIVAL_ENTRY_LENGTH = 2000

_API_DESCRIPTION = ("This tool belongs to the memory suite, which provides APIs to interact with a key-value "
                    "based memory system.")
# re.match with "$": a key may end with one newline, as in the reference.
_KEY = re.compile(r"[a-z]+(_[a-z0-9]+)*$")
_BAD_KEY = {"error": "Key must be in snake_case format and cannot contain spaces."}
_DUPLICATE = {"error": "Key name must be unique."}
_NOT_FOUND = {"error": "Key not found."}


def _too_long(limit: int) -> dict[str, str]:
    return {"error": f"Entry is too long. Please shorten the entry to less than {limit} characters."}


def _tokens(text: str) -> list[str]:
    return text.replace("_", " ").lower().split()


def key_search(keys: list[str], query: Any, k: Any) -> dict[str, list]:
    """The ``k`` keys most like ``query``, best first, as [score, key] pairs. The corpus is
    scored before the query is read: an empty memory fails first, whatever the query."""
    index = BM25Plus([_tokens(key) for key in keys])
    scores = index.scores(_tokens(query))
    ranked = sorted(zip(scores, keys), key=lambda pair: pair[0], reverse=True)  # stable: ties keep key order
    return {"ranked_results": ranked[:k]}


class MemoryAPI_kv:  # noqa: N801  BFCL's class name, which data files name
    def __init__(self) -> None:
        self.core_memory: dict[str, str] = {}
        self.archival_memory: dict[str, str] = {}
        self._api_description = _API_DESCRIPTION

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        snapshot = open_scenario(self, scenario)
        if snapshot is not None:
            self.core_memory = plain_copy(snapshot["core_memory"])
            self.archival_memory = plain_copy(snapshot["archival_memory"])

    def _snapshot(self) -> dict[str, Any]:
        return {"core_memory": self.core_memory, "archival_memory": self.archival_memory}

    def _dump_core_memory_to_context(self) -> str:
        if not self.core_memory:
            return "There is no content in the core memory at this point."
        return json.dumps(self.core_memory, indent=4)

    # ---------------------------------------------------------------- shared by both stores

    @staticmethod
    def _add(store: dict, size: int, length: int, key: Any, value: Any, full: str, added: str) -> dict[str, str]:
        key, value = str(key), str(value)
        if len(store) >= size:
            return {"error": full}
        if len(value) > length:
            return _too_long(length)
        if not _KEY.match(key):
            return _BAD_KEY
        if key in store:
            return _DUPLICATE
        store[key] = value
        return {"status": added}

    @staticmethod
    def _replace(store: dict, length: int, key: Any, value: Any) -> dict[str, str]:
        key, value = str(key), str(value)
        if key not in store:
            return _NOT_FOUND
        if len(value) > length:
            return _too_long(length)
        store[key] = value
        return {"status": "Key replaced."}

    @staticmethod
    def _remove(store: dict, key: Any) -> dict[str, str]:
        if key in store:
            del store[key]
            return {"status": "Key removed."}
        return _NOT_FOUND

    @staticmethod
    def _retrieve(store: dict, key: Any) -> dict[str, str]:
        if key not in store:
            return _NOT_FOUND
        return {"value": store[key]}

    # ---------------------------------------------------------------- core memory

    def core_memory_add(self, key: str, value: str) -> dict[str, str]:
        return self._add(self.core_memory, CORE_SIZE, CORE_ENTRY_LENGTH, key, value,
                         "Core memory is full. Please clear some entries.", "Key-value pair added.")

    def core_memory_remove(self, key: str) -> dict[str, str]:
        return self._remove(self.core_memory, key)

    def core_memory_replace(self, key: str, value: str) -> dict[str, str]:
        return self._replace(self.core_memory, CORE_ENTRY_LENGTH, key, value)

    def core_memory_clear(self) -> dict[str, str]:
        self.core_memory = {}
        return {"status": "Short term memory cleared."}

    def core_memory_retrieve(self, key: str) -> dict[str, str]:
        return self._retrieve(self.core_memory, key)

    def core_memory_list_keys(self) -> dict[str, list[str]]:
        return {"keys": list(self.core_memory)}

    def core_memory_key_search(self, query: str, k: int = 5) -> dict[str, list]:
        return key_search(list(self.core_memory), query, k)

    def core_memory_retrieve_all(self) -> dict[str, str]:
        # The store itself, as the reference returns it (the caller prints it at once).
        return self.core_memory

    # ---------------------------------------------------------------- archival memory

    def archival_memory_add(self, key: str, value: str) -> dict[str, str]:
        return self._add(self.archival_memory, ARCHIVAL_SIZE, ARCHIVAL_ENTRY_LENGTH, key, value,
                         "Long term memory is full. Please clear some entries.", "Key added.")

    def archival_memory_remove(self, key: str) -> dict[str, str]:
        return self._remove(self.archival_memory, key)

    def archival_memory_replace(self, key: str, value: str) -> dict[str, str]:
        return self._replace(self.archival_memory, ARCHIVAL_ENTRY_LENGTH, key, value)

    def archival_memory_clear(self) -> dict[str, str]:
        self.archival_memory = {}
        return {"status": "Long term memory cleared."}

    def archival_memory_retrieve(self, key: str) -> dict[str, str]:
        return self._retrieve(self.archival_memory, key)

    def archival_memory_list_keys(self) -> dict[str, list[str]]:
        return {"keys": list(self.archival_memory)}

    def archival_memory_key_search(self, query: str, k: int = 5) -> dict[str, list]:
        return key_search(list(self.archival_memory), query, k)
