"""Checkers: from a task and decoded calls to a ``CheckResult``.

A checker is a function ``check(task, decoded) -> CheckResult`` where ``decoded`` is the
list of calls, or the ``DecodeError`` the handler raised. Checkers are registered by name;
other packages add theirs through the ``fcenv.checkers`` entry-point group.

A checker declares the facets it produces with their default weights in the shaped reward
(``register_checker(name, facets={...})``), next to the code that computes them;
``facet_weights()`` merges every checker's declarations.

Modules: ``result`` (``CheckResult``), ``ast_checker`` (BFCL's AST checker, with its rules in
``_bfcl_rules`` and the Java and JavaScript value converters ``java_values`` and ``js_values``,
which scan text in linear time with ``_scan``), ``relevance`` (relevance and irrelevance),
``multi_turn`` (a turn's state and response checks) and ``agentic`` (the final answer of a
memory or web-search entry).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fcenv.checkers.result import CheckResult
from fcenv.handlers.registry import Registry

Checker = Callable[[Any, Any], CheckResult]

_CHECKERS: Registry[Checker] = Registry(
    "checker", "fcenv.checkers", ("ast_checker", "relevance", "multi_turn", "agentic"), "fcenv.checkers"
)


_FACETS: dict[str, dict[str, float]] = {}  # checker name -> its facets' default weights


def register_checker(name: str, facets: Mapping[str, float] | None = None) -> Callable[[Checker], Checker]:
    """Register ``check(task, decoded) -> CheckResult`` under ``name`` (a decorator).

    ``facets`` maps each facet the checker produces to its default weight in the shaped
    reward (0 to log a facet without paying for it). A facet no checker declares cannot be
    weighted, so the shaped reward refuses it rather than leave it silently unpaid.
    """
    if facets is not None:
        bad = {k: w for k, w in facets.items() if not isinstance(w, (int, float)) or not 0 <= w < float("inf")}
        if bad:
            raise ValueError(f"checker {name!r}: facet weights must be finite numbers >= 0, not {bad}")
    decorator = _CHECKERS.register(name)  # first: a name already held keeps its facets too
    if facets is not None:
        _FACETS[name] = {k: float(w) for k, w in facets.items()}
    return decorator


def get_checker(name: str) -> Checker:
    return _CHECKERS.get(name)


def available_checkers() -> list[str]:
    return _CHECKERS.names()


def facet_weights() -> dict[str, float]:
    """Every registered checker's declared facets with their default weights, merged.

    Two checkers may produce a facet of the same name only with the same weight (a name has
    one meaning); a conflict is an error naming both.
    """
    _CHECKERS.names()  # loads the built-in checkers and the entry points
    merged: dict[str, float] = {}
    owner: dict[str, str] = {}
    for checker, declared in sorted(_FACETS.items()):
        for facet, weight in declared.items():
            if facet in merged and merged[facet] != weight:
                raise ValueError(f"facet {facet!r} is declared with weight {merged[facet]} by checker "
                                 f"{owner[facet]!r} and {weight} by {checker!r}; a facet name has one weight")
            merged.setdefault(facet, weight)
            owner.setdefault(facet, checker)
    return merged


__all__ = ["CheckResult", "register_checker", "get_checker", "available_checkers", "facet_weights"]
