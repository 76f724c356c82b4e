"""One benchmark entry, as the env, handlers and checkers see it."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any


def category_of(entry_id: str) -> str:
    """BFCL's rule: the category is the id without its last ``_<n>`` part."""
    return entry_id.rsplit("_", 1)[0]


def language_of(category: str) -> str:
    # BFCL tests substrings, and "javascript" contains "java".
    if "javascript" in category:
        return "javascript"
    if "java" in category:
        return "java"
    return "python"


def kind_of(category: str) -> str:
    """Which family of rules decides the verdict: ast, relevance, irrelevance, multi_turn or
    agentic (BFCL's memory and web-search categories, judged on their final answer).

    Two retired sets have no rules of their own offline: chatable (questions with no
    functions) is judged like irrelevance, and rest (whose answers were live HTTP responses)
    like relevance, i.e. any well-formed call passes.
    """
    if "multi_turn" in category:
        return "multi_turn"
    if "memory" in category or "web_search" in category:  # BFCL's is_agentic
        return "agentic"
    if "irrelevance" in category or category == "chatable":
        return "irrelevance"
    if "relevance" in category or category == "rest":
        return "relevance"
    return "ast"


@dataclass(frozen=True)
class Task:
    """A BFCL entry joined with its answer.

    ``functions`` are the function docs as written in the data, without BFCL's language
    hints (the checkers need the original types; prompts add the hints themselves).
    ``ground_truth`` is BFCL's possible answer: ``[{name: {param: [acceptable, ...]}}]`` for
    single-turn entries, one list of call strings per turn for multi-turn ones, None for
    relevance and irrelevance. Tasks are shared between environments and never modified;
    whoever needs to change one works on a copy. ``missed_functions`` maps a turn index to the docs held out
    until that turn (multi_turn_miss_func). ``prerequisites`` are the conversations played before
    an agentic question, each ``{"id", "question"}`` (a memory scenario's chain, which fills the
    memory the question is asked against). ``source`` and ``line`` say where it came from.
    """

    id: str
    question: list[list[dict[str, Any]]]
    functions: list[dict[str, Any]]
    ground_truth: Any = None
    initial_config: dict[str, Any] = field(default_factory=dict)
    involved_classes: list[str] = field(default_factory=list)
    missed_functions: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    prerequisites: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""
    line: int = 0
    declared_kind: str | None = None  # from the data (an entry with involved_classes is multi-turn)

    # Asked for on every check: worked out once (a frozen dataclass still keeps these).
    @cached_property
    def category(self) -> str:
        return category_of(self.id)

    @cached_property
    def language(self) -> str:
        return language_of(self.category)

    @property
    def kind(self) -> str:
        return self.declared_kind or kind_of(self.category)

    @property
    def is_multi_turn(self) -> bool:
        return self.kind == "multi_turn"

    @property
    def long_context(self) -> bool:
        return "long_context" in self.category or "composite" in self.category
