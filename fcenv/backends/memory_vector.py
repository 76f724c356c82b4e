"""MemoryAPI_vector: BFCL's vector memory (category memory_vector).

Two stores of texts under sequential ids, a small core memory (shown to the model in its
system prompt as the JSON of its id -> text map, even when empty) and a larger archival
memory; retrieval ranks texts by the inner product of their normalised all-MiniLM-L6-v2
embeddings (``sentence_encoder``) in an exact index with faiss' semantics (``exact_search``).

Behaviour follows the reference backend as observed by differential tests, down to the state
a failing call leaves: an add takes its id before the text is embedded, an update removes the
old vector before embedding the new text, so a failure there leaves the id spent or the store
ahead of its index, as in BFCL. Ids compare as Python compares dict keys (``1.0`` and ``True``
find id 1).

One deliberate difference: a text or query that is not a string fails when it reaches the
encoder, after the same state changes BFCL makes before its encoder runs. There a list is
encoded as a batch (a one-string list is stored as a list; a longer one fails at the index),
and what becomes of any other value depends on the installed sentence-transformers version,
which BFCL does not pin (older ones embed a number's digits, newer ones refuse it, a list of
two strings is read as a text pair). So the stores only ever hold strings.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from fcenv.backends.exact_search import FlatIPIndex
from fcenv.backends.memory_snapshots import open_scenario

CORE_SIZE = 7
CORE_ENTRY_LENGTH = 300
ARCHIVAL_SIZE = 50
ARCHIVAL_ENTRY_LENGTH = 2000
DIMENSION = 384

_API_DESCRIPTION = ("This tool belongs to the memory suite, which provides APIs to interact with a key-value "
                    "based memory system.")


def embed(texts: list[Any]) -> np.ndarray:
    """Normalised float32 embeddings, one row per text (the module-level seam the tests replace
    with a lookup table, as the oracle's driver replaces BFCL's encoder)."""
    from fcenv.backends.sentence_encoder import encoder

    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"the vector memory embeds strings, not {type(text).__name__}")
    return encoder().encode(list(texts))


class VectorStore:
    def __init__(self, max_size: int, max_entry_length: int):
        self.max_size = max_size
        self.max_entry_length = max_entry_length
        self._index = FlatIPIndex(DIMENSION)
        self._store: dict[int, Any] = {}
        self._next_id = 0

    def add(self, text: Any) -> dict[str, Any]:
        if len(text) > self.max_entry_length:
            return {"error": f"Entry length exceeds maximum length of {self.max_entry_length} characters."}
        if len(self._store) >= self.max_size:
            return {"error": f"Memory size exceeds maximum size of {self.max_size} entries."}
        vec_id = self._next_id
        self._next_id += 1
        self._index.add_with_ids(embed([text]), [vec_id])
        self._store[vec_id] = text
        return {"id": vec_id}

    def remove(self, vec_id: Any) -> dict[str, str]:
        if vec_id not in self._store:
            return {"error": f"ID {vec_id} not present in store."}
        self._index.remove_ids([int(vec_id)])
        del self._store[vec_id]
        return {"status": f"ID {vec_id} removed from store."}

    def update(self, vec_id: Any, new_text: Any) -> dict[str, str]:
        if vec_id not in self._store:
            return {"error": f"ID {vec_id} not present in store."}
        if len(new_text) > self.max_entry_length:
            return {"error": f"Entry length exceeds maximum length of {self.max_entry_length} characters."}
        self._index.remove_ids([int(vec_id)])
        self._index.add_with_ids(embed([new_text]), [int(vec_id)])
        self._store[vec_id] = new_text
        return {"status": f"ID {vec_id} updated."}

    def clear(self) -> dict[str, str]:
        self._index.reset()
        self._store.clear()
        self._next_id = 0
        return {"status": "Memory cleared."}

    def retrieve(self, query: Any, top_k: Any = 5) -> list[dict[str, Any]]:
        if not self._store:
            return []
        vector = embed([query])[0]
        hits = self._index.search(vector, min(top_k, len(self._store)))
        return [{"id": vec_id, "similarity_score": score, "text": self._store[vec_id]}
                for score, vec_id in hits if vec_id != -1]

    def retrieve_all(self) -> list[dict[str, Any]]:
        return [{"id": int(vec_id), "text": text} for vec_id, text in self._store.items()]

    def export(self) -> dict[str, Any]:
        return {"next_id": self._next_id, "store": self._store}

    def load_from_snapshot(self, snapshot: dict[str, Any]) -> None:
        self._next_id = snapshot["next_id"]
        self._store = {int(k): v for k, v in snapshot["store"].items()}
        self._index.reset()
        if self._store:
            ids = sorted(self._store)  # one batch, in id order, as the reference re-embeds them
            self._index.add_with_ids(embed([self._store[i] for i in ids]), ids)


class MemoryAPI_vector:  # noqa: N801  BFCL's class name, which data files name
    def __init__(self) -> None:
        self.core_memory = VectorStore(CORE_SIZE, CORE_ENTRY_LENGTH)
        self.archival_memory = VectorStore(ARCHIVAL_SIZE, ARCHIVAL_ENTRY_LENGTH)
        self._api_description = _API_DESCRIPTION

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        snapshot = open_scenario(self, scenario)
        if snapshot is not None:
            self.core_memory.load_from_snapshot(snapshot["core_memory"])
            self.archival_memory.load_from_snapshot(snapshot["archival_memory"])

    def _snapshot(self) -> dict[str, Any]:
        return {"core_memory": self.core_memory.export(), "archival_memory": self.archival_memory.export()}

    def _dump_core_memory_to_context(self) -> str:
        # The reference tests the store object's truth, which is always true: even an empty
        # core memory is shown as its JSON ("{}").
        return json.dumps(self.core_memory._store, indent=4)

    def core_memory_add(self, text: str) -> dict[str, Any]:
        return self.core_memory.add(text)

    def core_memory_remove(self, vec_id: int) -> dict[str, str]:
        return self.core_memory.remove(vec_id)

    def core_memory_update(self, vec_id: int, new_text: str) -> dict[str, str]:
        return self.core_memory.update(vec_id, new_text)

    def core_memory_clear(self) -> dict[str, str]:
        return self.core_memory.clear()

    def core_memory_retrieve(self, query: str, top_k: int | None = 5) -> dict[str, list]:
        return {"result": self.core_memory.retrieve(query, top_k)}

    def core_memory_retrieve_all(self) -> dict[str, list]:
        return {"result": self.core_memory.retrieve_all()}

    def archival_memory_add(self, text: str) -> dict[str, Any]:
        return self.archival_memory.add(text)

    def archival_memory_remove(self, vec_id: int) -> dict[str, str]:
        return self.archival_memory.remove(vec_id)

    def archival_memory_update(self, vec_id: int, new_text: str) -> dict[str, str]:
        return self.archival_memory.update(vec_id, new_text)

    def archival_memory_clear(self) -> dict[str, str]:
        return self.archival_memory.clear()

    def archival_memory_retrieve(self, query: str, top_k: int | None = 5) -> dict[str, list]:
        return {"result": self.archival_memory.retrieve(query, top_k)}

    def archival_memory_retrieve_all(self) -> dict[str, list]:
        return {"result": self.archival_memory.retrieve_all()}
