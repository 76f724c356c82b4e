"""MemoryAPI_rec_sum: BFCL's recursive-summarisation memory (category memory_rec_sum).

One text the model keeps rewriting, shown whole in its system prompt. Behaviour follows the
reference backend as observed by differential tests: arguments become strings first; the
length limit applies to the text after an append, but only to the new text on an update or a
replace, so replacing a short text everywhere (the empty string is found between every two
characters) may grow the memory past the limit, as it does there.

One deliberate difference: a replace whose result would pass ``MAX_GROWN_LENGTH`` characters
fails with an execution error. There a replace of "" can multiply the memory's length by ten
thousand per call, and two such calls exhaust any machine's memory.
"""

from __future__ import annotations

from typing import Any

from fcenv.backends.memory_snapshots import open_scenario

MAX_LENGTH = 10000
MAX_GROWN_LENGTH = 1 << 24

_API_DESCRIPTION = ("This tool belongs to the memory suite, which provides APIs to manage memory data via "
                    "recursive summarization.")


def _too_long(when: str) -> dict[str, str]:
    return {"error": f"Entry will be too long after {when}. Please shorten the entry to less than {MAX_LENGTH} "
                     f"characters."}


class MemoryAPI_rec_sum:  # noqa: N801  BFCL's class name, which data files name
    def __init__(self) -> None:
        self.memory = ""
        self._api_description = _API_DESCRIPTION

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        snapshot = open_scenario(self, scenario)
        if snapshot is not None:
            memory = snapshot["memory"]
            if not isinstance(memory, str):  # the reference asserts this too
                raise TypeError(f"Memory data should be a string, but got {type(memory)} instead.")
            self.memory = memory

    def _snapshot(self) -> dict[str, Any]:
        return {"memory": self.memory}

    def _dump_core_memory_to_context(self) -> str:
        if not self.memory:
            return "There is no content in the memory at this point."
        return self.memory

    def memory_append(self, text: str) -> dict[str, str]:
        text = str(text)
        if len(self.memory + text) > MAX_LENGTH:
            return _too_long("appending")
        self.memory += text
        return {"status": "Memory appended."}

    def memory_update(self, text: str) -> dict[str, str]:
        text = str(text)
        if len(text) > MAX_LENGTH:
            return _too_long("updating")
        self.memory = text
        return {"status": "Memory updated."}

    def memory_clear(self) -> dict[str, str]:
        self.memory = ""
        return {"status": "Short term memory cleared."}

    def memory_replace(self, old_text: str, new_text: str) -> dict[str, str]:
        old_text, new_text = str(old_text), str(new_text)
        if old_text not in self.memory:
            return {"error": f"Text '{old_text}' not found in memory."}
        if len(new_text) > MAX_LENGTH:
            return _too_long("replacing")
        grown = len(self.memory) + self.memory.count(old_text) * (len(new_text) - len(old_text))
        if grown > MAX_GROWN_LENGTH:
            raise ValueError(f"the memory would grow to {grown} characters, over fcenv's bound of {MAX_GROWN_LENGTH}")
        self.memory = self.memory.replace(old_text, new_text)
        return {"status": "Memory updated."}

    def memory_retrieve(self) -> dict[str, str]:
        if not self.memory:
            return {"error": "Memory is empty."}
        return {"memory_content": self.memory}
