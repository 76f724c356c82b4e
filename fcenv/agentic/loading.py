"""BFCL's agentic files as the entries BFCL's loader makes of them: the memory file as entries of its
three memory categories, the web-search file as entries of its two web-search categories.

``BFCL_v4_memory.json`` holds 155 questions, each naming a scenario; BFCL runs every question
once per memory backend (categories memory_kv, memory_vector, memory_rec_sum, in that order):

- the id's ``memory`` becomes the category (``memory_0-customer-0`` -> ``memory_kv_0-customer-0``);
  the answer stays under the file's id;
- the backend's class (``MemoryAPI_kv``, ...) replaces the file's ``MemoryAPI``, and the class's
  function docs are the entry's functions;
- BFCL's answer-format prompt (``fcenv.agentic.prompts.ANSWER_FORMAT``) becomes the question's
  first message, a system message;
- the scenario's prerequisite conversations (``memory_prereq_conversation/memory_<scenario>.json``,
  in file order) come first, their ids renamed the same way (``memory_kv_prereq_0-customer-0``);
  they ask for no answer format and are not scored.

The backend's scenario config holds the scenario's name: ``{"MemoryAPI_kv": {"scenario": ...}}``.

``BFCL_v4_web_search.json`` holds 100 questions; BFCL runs each twice, as ``web_search_base_<n>``
(results with snippets) and ``web_search_no_snippet_<n>`` (titles and links only), in that order,
each with the answer-format prompt first and the answer under the file's id. The scenario
config is BFCL's: ``{"WebSearchAPI": {"show_snippet": bool}}``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from fcenv.agentic.prompts import ANSWER_FORMAT, SCENARIO_ROLES

MEMORY_BACKENDS = ("kv", "vector", "rec_sum")
WEB_SEARCH_FILE_CATEGORY = "web_search"
WEB_SEARCH_CLASS = "WebSearchAPI"
# BFCL's two categories of the one file, and whether each shows the results' snippets.
WEB_SEARCH_CATEGORIES = {"web_search_base": True, "web_search_no_snippet": False}
MEMORY_FILE_CATEGORY = "memory"
PREREQUISITE_FOLDER = "memory_prereq_conversation"


class PrerequisiteError(ValueError):
    """A scenario's prerequisite file is missing or not as BFCL writes it."""


def memory_class(backend: str) -> str:
    return f"MemoryAPI_{backend}"


def expand_memory_entry(entry_id: str, value: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(backend, id, entry) for each memory category, from one entry of BFCL's memory file."""
    out = []
    for backend in MEMORY_BACKENDS:
        new_id = entry_id.replace(MEMORY_FILE_CATEGORY, f"memory_{backend}")
        question = with_answer_format(value["question"])
        cls = memory_class(backend)
        entry = {**value, "id": new_id, "question": question, "involved_classes": [cls],
                 "initial_config": {cls: {"scenario": value.get("scenario")}}}
        out.append((backend, new_id, entry))
    return out


def memory_file_id(entry_id: str) -> str:
    """The id in BFCL's memory file of a memory category's entry, ``expand_memory_entry``'s
    renaming undone (``memory_kv_0-customer-0`` -> ``memory_0-customer-0``); any other id as it is."""
    for backend in MEMORY_BACKENDS:
        category = f"memory_{backend}"
        if entry_id.startswith(category + "_"):
            return MEMORY_FILE_CATEGORY + entry_id[len(category):]
    return entry_id


def with_answer_format(question: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """BFCL's answer-format prompt as the first message of the question's first turn."""
    question = [list(turn) for turn in question]
    if question:
        question[0] = [{"role": "system", "content": ANSWER_FORMAT}, *question[0]]
    return question


def web_search_entry(new_id: str, value: dict[str, Any]) -> dict[str, Any]:
    """An entry of one web-search category (``new_id`` names it), from an entry of BFCL's file."""
    show_snippet = WEB_SEARCH_CATEGORIES[new_id.rsplit("_", 1)[0]]
    return {**value, "id": new_id, "question": with_answer_format(value["question"]),
            "involved_classes": [WEB_SEARCH_CLASS],
            "initial_config": {WEB_SEARCH_CLASS: {"show_snippet": show_snippet}}}


def expand_web_search_entry(entry_id: str, value: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(category, id, entry) for each web-search category, from one entry of BFCL's web-search file."""
    out = []
    for category in WEB_SEARCH_CATEGORIES:
        new_id = entry_id.replace(WEB_SEARCH_FILE_CATEGORY, category, 1)
        out.append((category, new_id, web_search_entry(new_id, value)))
    return out


def known_scenario(scenario: Any) -> bool:
    return isinstance(scenario, str) and scenario in SCENARIO_ROLES


@lru_cache(maxsize=16)
def _chain(folder: str, scenario: str) -> tuple[tuple[str, str], ...]:
    """(id, question as JSON) of each prerequisite conversation of ``scenario``, in file order."""
    path = Path(folder) / f"memory_{scenario}.json"
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise PrerequisiteError(f"cannot read {path}: {exc}") from None
    chain = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PrerequisiteError(f"{path}, line {number}: invalid JSON: {exc.msg}") from None
        question = entry.get("question") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not _turns_of_messages(question):
            raise PrerequisiteError(f"{path}, line {number}: a prerequisite conversation needs an id and a question "
                                    f"of turns of {{role, content}} messages")
        chain.append((entry["id"], json.dumps(question)))
    if not chain:
        raise PrerequisiteError(f"{path} holds no conversation")
    return tuple(chain)


def _turns_of_messages(question: Any) -> bool:
    return isinstance(question, list) and bool(question) and all(
        isinstance(turn, list) and turn and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in turn)
        for turn in question)


def prerequisites(folder: Path, backend: str, scenario: str) -> list[dict[str, Any]]:
    """The scenario's prerequisite conversations for one backend: ``[{"id", "question"}, ...]``.
    Raises ``PrerequisiteError``."""
    return [{"id": conversation_id.replace(MEMORY_FILE_CATEGORY, f"memory_{backend}"), "question": json.loads(question)}
            for conversation_id, question in _chain(str(folder), scenario)]
