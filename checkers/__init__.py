"""Checkers: from a task and decoded calls to a ``CheckResult``.

A checker is a function ``check(task, decoded) -> CheckResult`` where ``decoded`` is the
list of calls, or the ``DecodeError`` the handler raised. Checkers are registered by name;
other packages add theirs through the ``fcenv.checkers`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from checkers.result import CheckResult

Checker = Callable[[Any, Any], CheckResult]

_REGISTRY: dict[str, Checker] = {}
_BUILTIN_MODULES = ("ast_checker", "relevance", "multi_turn")
_loaded = False


def register_checker(name: str) -> Callable[[Checker], Checker]:
    """Register ``check(task, decoded) -> CheckResult`` under ``name`` (a decorator)."""

    def decorator(fn: Checker) -> Checker:
        _REGISTRY[name] = fn
        return fn

    return decorator


def _load() -> None:
    global _loaded
    if _loaded:
        return
    import importlib

    for module in _BUILTIN_MODULES:
        importlib.import_module(f"checkers.{module}")
    for ep in entry_points(group="fcenv.checkers"):
        _REGISTRY.setdefault(ep.name, ep.load())
    _loaded = True


def get_checker(name: str) -> Checker:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown checker {name!r}; registered: {sorted(_REGISTRY)}") from None


def available_checkers() -> list[str]:
    _load()
    return sorted(_REGISTRY)


__all__ = ["CheckResult", "register_checker", "get_checker", "available_checkers"]
