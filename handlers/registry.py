"""A name -> function registry filled by built-in modules and by an entry-point group.

Shared by ``handlers`` and ``checkers``. Built-in modules register themselves with the
decorator when imported; they and the entry points are loaded on first lookup, so importing
the package does no work.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar

F = TypeVar("F", bound=Callable)


class Registry(Generic[F]):
    def __init__(self, kind: str, package: str, builtin_modules: tuple[str, ...], group: str):
        self.kind = kind
        self._package = package
        self._builtin_modules = builtin_modules
        self._group = group
        self._entries: dict[str, F] = {}
        self._loaded = False

    def register(self, name: str) -> Callable[[F], F]:
        """A decorator that registers a function under ``name``."""

        def decorator(fn: F) -> F:
            self._entries[name] = fn
            return fn

        return decorator

    def get(self, name: str) -> F:
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} {name!r}; registered: {sorted(self._entries)}") from None

    def names(self) -> list[str]:
        self._load()
        return sorted(self._entries)

    def _load(self) -> None:
        if self._loaded:
            return
        for module in self._builtin_modules:
            importlib.import_module(f"{self._package}.{module}")
        for ep in entry_points(group=self._group):
            self._entries.setdefault(ep.name, ep.load())
        self._loaded = True
