"""Which training tasks are BFCL's test tasks, copied or nearly copied.

A training task is flagged when one of its user messages

- **equals** a user message of a BFCL test entry once both are normalised (Unicode NFKC,
  lowercased, every run of characters other than letters and digits read as one space), for
  messages of at least ``MIN_WORDS`` words (shorter ones, "yes" or "thanks", are no evidence); or
- **nearly equals** one: at least ``OVERLAP`` (half) of the BFCL message's word ``NGRAM``-grams
  (8-grams) occur in the training message, the measure and threshold decontamination of
  instruction-tuning data commonly uses; BFCL messages of fewer than 8 words are matched
  exactly only;

or when its **function set equals** a BFCL entry's (the same function names with the same
parameter names; BFCL's multi-turn entries' sets are their classes' documented functions) and
its question shares telling words with that entry's: words in fewer than ``COMMON`` (5%) of
BFCL's user messages, numbers left out; one word when BFCL asks those functions of that entry
only, two when it asks them of several. Changing a few values of a BFCL question defeats the
8-gram test on a short question; it changes neither the functions it is asked of nor the words
around the values. A common tool alone is no copy: BFCL asks ``get_current_weather(location,
unit)`` 118 questions, most of them about something else, and a training task asking another
thing of it shares a word with one of them by chance, two rarely.

BFCL's test files are every ``BFCL_v*_*.json`` question file of its data folder (not the
retired ``unused_datasets/``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NGRAM = 8
OVERLAP = 0.5
MIN_WORDS = 3
COMMON = 0.05  # a word in this share of BFCL's user messages or more ("the", "find") is no evidence
_SKIP = ("format_sensitivity",)  # a file of ids, no questions


def words(text: str) -> list[str]:
    return re.sub(r"[\W_]+", " ", unicodedata.normalize("NFKC", text).lower()).split()


def _grams(tokens: list[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def function_set(functions: Any) -> frozenset:
    """Function names with their parameter names: what a task asks to be called."""
    out = set()
    for doc in functions if isinstance(functions, list) else []:
        if isinstance(doc, dict) and isinstance(doc.get("name"), str):
            properties = (doc.get("parameters") or {}).get("properties") or {}
            out.add((doc["name"], frozenset(properties) if isinstance(properties, dict) else frozenset()))
    return frozenset(out)


def user_texts(question: Any) -> list[str]:
    if isinstance(question, str):
        return [question]
    turns = question if isinstance(question, list) else []
    if turns and isinstance(turns[0], dict):
        turns = [turns]
    return [m["content"] for turn in turns if isinstance(turn, list) for m in turn
            if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str)]


@dataclass(frozen=True)
class Match:
    bfcl_id: str
    how: str  # "exact", "near" or "function set"
    overlap: float = 1.0
    shared: tuple[str, ...] = ()  # function set: the words its question shares with BFCL's

    def __str__(self) -> str:
        if self.how == "exact":
            return f"its question equals BFCL's {self.bfcl_id}"
        if self.how == "near":
            return f"its question nearly equals BFCL's {self.bfcl_id} ({self.overlap:.0%} of its {NGRAM}-grams)"
        return (f"its function set equals BFCL's {self.bfcl_id}, and its question shares "
                f"{', '.join(map(repr, self.shared))} with that entry's")


class BfclIndex:
    """BFCL's test questions and function sets, for looking training tasks up in."""

    def __init__(self, entries: list[tuple[str, list[str], frozenset]]):
        self.exact: dict[tuple[str, ...], str] = {}
        self.grams: dict[tuple[str, ...], set[int]] = defaultdict(set)
        self.messages: list[tuple[str, int]] = []  # (entry id, number of its grams)
        # function set -> the entries offering it, each with the words of its questions
        self.functions: dict[frozenset, list[tuple[str, frozenset[str]]]] = defaultdict(list)
        self.common = _common_words([text for _, texts, _ in entries for text in texts])
        for entry_id, texts, functions in entries:
            for text in texts:
                tokens = words(text)
                if len(tokens) >= MIN_WORDS:
                    self.exact.setdefault(tuple(tokens), entry_id)
                grams = _grams(tokens)
                if grams:
                    for gram in grams:
                        self.grams[gram].add(len(self.messages))
                    self.messages.append((entry_id, len(grams)))
            if functions:
                self.functions[functions].append((entry_id, self.telling_words(texts)))

    def telling_words(self, texts: list[str]) -> frozenset[str]:
        """The words of ``texts`` that can tell a copy: not common in BFCL's questions, their
        digits left out (a disguise changes the values, not the words around them; a text
        without spaces, Chinese, is one word, cut at its numbers here)."""
        return frozenset(piece for text in texts for word in words(text) if word not in self.common
                         for piece in re.split(r"\d+", word) if piece)

    @classmethod
    def from_dir(cls, folder: Path) -> BfclIndex:
        from fcenv.loader import _func_docs, read_records
        from fcenv.problems import DatasetError, Problem

        files = sorted(p for p in Path(folder).glob("BFCL_v*_*.json") if not any(s in p.name for s in _SKIP))
        if not files:
            raise DatasetError([Problem(str(folder), None, None, None, "no BFCL question files here (BFCL_v*_*.json); "
                                                                       "run `fcenv data bfcl` or give --bfcl_dir")])
        docs = _func_docs(str(Path(folder) / "multi_turn_func_doc")) if (Path(folder) / "multi_turn_func_doc").is_dir() else {}
        entries = []
        for file in files:
            records, _, _ = read_records(file)
            for index, record in enumerate(r.value for r in records):
                if not isinstance(record, dict):
                    continue
                entry_id = str(record.get("id", f"{file.stem}_{index}"))
                functions = record.get("function") or [doc for cls in record.get("involved_classes") or []
                                                        for doc in docs.get(cls, [])]
                entries.append((entry_id, user_texts(record.get("question")), function_set(functions)))
        return cls(entries)

    def match(self, question: Any, functions: Any) -> Match | None:
        """The first way a training task copies a BFCL test task, if any."""
        for text in user_texts(question):
            tokens = words(text)
            if len(tokens) >= MIN_WORDS and tuple(tokens) in self.exact:
                return Match(self.exact[tuple(tokens)], "exact")
            counts: dict[int, int] = defaultdict(int)
            for gram in _grams(tokens):
                for message in self.grams.get(gram, ()):
                    counts[message] += 1
            best = max(counts.items(), key=lambda item: item[1] / self.messages[item[0]][1], default=None)
            if best is not None:
                overlap = best[1] / self.messages[best[0]][1]
                if overlap >= OVERLAP:
                    return Match(self.messages[best[0]][0], "near", overlap)
        return self._same_functions(question, functions)

    def _same_functions(self, question: Any, functions: Any) -> Match | None:
        """The first BFCL entry with the task's function set whose question shares telling
        words with the task's: one when BFCL asks those functions once, two when it asks them
        of several questions (one word in common with one of a hundred is chance)."""
        asked = self.telling_words(user_texts(question))
        entries = self.functions.get(function_set(functions), [])
        needed = 1 if len(entries) == 1 else 2
        for entry_id, vocabulary in entries:
            shared = asked & vocabulary
            if len(shared) >= needed:
                return Match(entry_id, "function set", shared=tuple(sorted(shared)[:3]))
        return None


def _common_words(texts: list[str]) -> frozenset[str]:
    """The words in at least ``COMMON`` of the texts."""
    counts: Counter = Counter(word for text in texts for word in set(words(text)))
    return frozenset(word for word, count in counts.items() if count >= COMMON * len(texts))
