"""Checkers: from a task and decoded calls to a ``CheckResult``.

A checker is a function ``check(task, decoded) -> CheckResult`` where ``decoded`` is the
list of calls, or the ``DecodeError`` the handler raised. Checkers are registered by name;
other packages add theirs through the ``fcenv.checkers`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checkers.result import CheckResult
from handlers.registry import Registry

Checker = Callable[[Any, Any], CheckResult]

_CHECKERS: Registry[Checker] = Registry(
    "checker", "checkers", ("ast_checker", "relevance", "multi_turn"), "fcenv.checkers"
)


def register_checker(name: str) -> Callable[[Checker], Checker]:
    """Register ``check(task, decoded) -> CheckResult`` under ``name`` (a decorator)."""
    return _CHECKERS.register(name)


def get_checker(name: str) -> Checker:
    return _CHECKERS.get(name)


def available_checkers() -> list[str]:
    return _CHECKERS.names()


__all__ = ["CheckResult", "register_checker", "get_checker", "available_checkers"]
