"""Which training tasks are BFCL's test tasks, copied or nearly copied (``BfclIndex.match``).

A task is flagged when a user message equals a BFCL test entry's once normalised (``words``;
``MIN_WORDS`` words or more) or holds ``OVERLAP`` of its word ``NGRAM``-grams; or when its
function set equals a BFCL entry's and its question is that entry's with other values
(``same_but_values``) or shares that entry's telling words (``_same_functions``). A common tool
alone is no copy (BFCL asks ``get_current_weather(location, unit)`` 118 questions). BFCL's test
files: every ``BFCL_v*_*.json`` question file of its folder (not ``unused_datasets/``).
The rules and figures: docs/your-data.md#decontamination, docs/troubleshooting.md#decontamination.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A near copy holds OVERLAP of a BFCL message's word NGRAM-grams, the measure and threshold
# decontamination of instruction-tuning data commonly uses (bench/bench_decontaminate.py measures
# the false positives); a BFCL message of fewer than NGRAM words is matched exactly only.
NGRAM = 8
OVERLAP = 0.5
MASKED_NGRAM = 5  # values masked, shorter n-grams: a disguise may reword a little around its values
SHARED = 0.4  # of the telling words of two questions of a common tool, the share a copy shares
MIN_WORDS = 3  # shorter messages ("yes", "thanks") are no evidence
COMMON = 0.05  # a word in this share of BFCL's user messages or more ("the", "find") is no evidence
_SKIP = ("format_sensitivity",)  # a file of ids, no questions
VALUE = "#"  # a value's place in a masked question
# A value in quotes (an opening quote after no letter, a closing one before none: not "What's"),
# or a word, with its case kept (a capitalised word inside a sentence is a name, a value).
_PIECE = re.compile(r"(?<!\w)(?P<quoted>'[^'\n]{1,40}'|\"[^\"\n]{1,40}\")(?!\w)|(?P<word>[^\W_]+)")
_SENTENCE_END = ".?!:;\n"


def words(text: str) -> list[str]:
    """``text`` normalised (Unicode NFKC, lowercased, every run of characters other than letters
    and digits read as one space), as words."""
    return re.sub(r"[\W_]+", " ", unicodedata.normalize("NFKC", text).lower()).split()


def _grams(tokens: list[str] | tuple[str, ...], n: int = NGRAM) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def masked_words(text: str, values: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The words of ``text`` with its values masked (``VALUE``): numbers, quoted text, words
    capitalised inside a sentence (names, places), and ``values`` (the parameters' enum
    values); a run of values is one mask. What a disguise of a question changes, and no more."""
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    end = 0
    for piece in _PIECE.finditer(text):
        word = piece.group("word")
        # Inside a sentence: after a word or a mark other than a sentence's end.
        gap = text[end:piece.start()].strip(" \t\"'(")
        inside = gap[-1] not in _SENTENCE_END if gap else end > 0
        end = piece.end()
        value = word is None or any(c.isdigit() for c in word) or (word[0].isupper() and inside) \
            or word.lower() in values
        if not value:
            out.append(word.lower())
        elif not out or out[-1] != VALUE:
            out.append(VALUE)
    return tuple(out)


def _parameters(functions: Any) -> list[tuple[str, dict]]:
    found = []
    for doc in functions if isinstance(functions, list) else []:
        properties = ((doc.get("parameters") or {}).get("properties") or {}) if isinstance(doc, dict) else {}
        if isinstance(properties, dict):
            found.extend((name, spec) for name, spec in properties.items() if isinstance(spec, dict))
    return found


def enum_words(functions: Any) -> frozenset[str]:
    """The words of the parameters' enum values: values a question names, as it names a city."""
    return frozenset(word for _, spec in _parameters(functions) if isinstance(spec.get("enum"), list)
                     for value in spec["enum"] for word in words(str(value)))


def tool_words(functions: Any) -> frozenset[str]:
    """Words the tools' own parameters make likely in any question asking them: the parameters'
    names and enum values (a weather tool's 'celsius'), no evidence of a copy."""
    return enum_words(functions) | frozenset(word for name, _ in _parameters(functions) for word in words(name))


def same_but_values(ours: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether a masked question is a masked BFCL question with other values: equal, or for a
    BFCL question of ``MASKED_NGRAM`` words or more, holding ``OVERLAP`` of its 5-grams. A BFCL
    question of fewer than ``MIN_WORDS`` words that are no values is no evidence."""
    if sum(word != VALUE for word in theirs) < MIN_WORDS:
        return False
    if len(theirs) < MASKED_NGRAM:
        return ours == theirs
    grams = _grams(theirs, MASKED_NGRAM)
    return len(grams & _grams(ours, MASKED_NGRAM)) >= OVERLAP * len(grams)


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
    other_values: bool = False  # function set: its question is BFCL's with other values
    alone: bool = False  # function set: BFCL asks it of that entry alone

    def __str__(self) -> str:
        if self.how == "exact":
            return f"its question equals BFCL's {self.bfcl_id}"
        if self.how == "near":
            return f"its question nearly equals BFCL's {self.bfcl_id} ({self.overlap:.0%} of its {NGRAM}-grams)"
        if self.other_values:
            return (f"its function set equals BFCL's {self.bfcl_id}, and its question is that entry's with other "
                    f"values" + (f" (both say {', '.join(map(repr, self.shared))})" if self.shared else ""))
        alone = ", which BFCL asks of that entry alone," if self.alone else ""
        return (f"its function set equals BFCL's {self.bfcl_id}{alone} and its question shares "
                f"{', '.join(map(repr, self.shared))} with that entry's")


@dataclass(frozen=True)
class _Offered:
    """A BFCL entry offering a function set: its id, its question's telling words, and its
    questions masked (``masked_words``, its parameters' enum values among the values)."""

    entry_id: str
    words: frozenset[str]
    masked: tuple[tuple[str, ...], ...]


class BfclIndex:
    """BFCL's test questions and function sets, for looking training tasks up in."""

    def __init__(self, entries: list[tuple[str, list[str], frozenset, frozenset[str]]]):
        """``entries``: (id, user messages, function set, its parameters' enum words)."""
        self.exact: dict[tuple[str, ...], str] = {}
        self.grams: dict[tuple[str, ...], set[int]] = defaultdict(set)
        self.messages: list[tuple[str, int]] = []  # (entry id, number of its grams)
        # function set -> the entries offering it, each with its questions' words, masked too
        self.functions: dict[frozenset, list[_Offered]] = defaultdict(list)
        self.common = _common_words([text for _, texts, _, _ in entries for text in texts])
        for entry_id, texts, functions, values in entries:
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
                self.functions[functions].append(_Offered(entry_id, self.telling_words(texts),
                                                          tuple(masked_words(text, values) for text in texts)))

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
        # A multi-turn entry's function set: its classes' documented functions.
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
                entries.append((entry_id, user_texts(record.get("question")), function_set(functions),
                                enum_words(functions)))
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
        """The first BFCL entry with the task's function set whose question the task's is with
        other values; else the first whose question shares telling words with the task's (the
        tool's parameters' words left out): one when BFCL asks that function set of that entry
        alone, else two, and ``SHARED`` of the telling words of the two questions."""
        entries = self.functions.get(function_set(functions), [])
        if not entries:
            return None
        texts = user_texts(question)
        values = enum_words(functions)
        ours = [masked_words(text, values) for text in texts]
        likely = tool_words(functions)
        asked = self.telling_words(texts) - likely
        for entry in entries:
            if any(same_but_values(mine, theirs) for mine in ours for theirs in entry.masked):
                return Match(entry.entry_id, "function set", shared=tuple(sorted(asked & entry.words)[:3]),
                             other_values=True)
        alone = len(entries) == 1
        for entry in entries:
            theirs = entry.words - likely
            shared = asked & theirs
            if len(shared) >= (1 if alone else 2) and (alone or len(shared) >= SHARED * len(asked | theirs)):
                return Match(entry.entry_id, "function set", shared=tuple(sorted(shared)[:3]), alone=alone)
        return None


def _common_words(texts: list[str]) -> frozenset[str]:
    """The words in at least ``COMMON`` of the texts."""
    counts: Counter = Counter(word for text in texts for word in set(words(text)))
    return frozenset(word for word, count in counts.items() if count >= COMMON * len(texts))
