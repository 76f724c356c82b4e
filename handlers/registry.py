"""The one registry style of every extension point: a name -> entry registry, filled by built-in
modules and by an entry-point group.

Decoders, checkers, tool formats, rewards, tool backends, advantage estimators, algorithm presets,
rollout engines and the formats of training sets (``fcenv.sources``) are each a ``Registry``. Built-in modules register their entries when
imported (``register(name)`` as a decorator, or ``register(name, entry)``); other packages
register theirs under the registry's entry-point group (``name = "module:object"``). Both are
loaded on the first lookup, so creating a registry or importing its package does no work. Every
command-line choice of these kinds is drawn from ``names()``, so an entry a user registers is
accepted wherever a built-in one is.

It lives in ``handlers``, the bottom layer, so that every layer above can use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar, overload

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, package: str, builtin_modules: tuple[str, ...], group: str):
        self.kind = kind
        self.group = group
        self._package = package
        self._builtin_modules = builtin_modules
        self._entries: dict[str, T] = {}
        self._loaded = False

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...
    @overload
    def register(self, name: str, entry: T) -> T: ...

    def register(self, name, entry=None):
        """Register ``entry`` under ``name``; without ``entry``, a decorator that registers what
        it decorates. A later registration of a name replaces the earlier one."""
        if entry is not None:
            self._entries[name] = entry
            return entry

        def decorator(fn: T) -> T:
            self._entries[name] = fn
            return fn

        return decorator

    def get(self, name: str) -> T:
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"unknown {self.kind} {name!r}; registered: {sorted(self._entries)}") from None

    def names(self) -> list[str]:
        self._load()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries

    def _load(self) -> None:
        if self._loaded:
            return
        for module in self._builtin_modules:
            importlib.import_module(f"{self._package}.{module}")
        for ep in entry_points(group=self.group):
            self._entries.setdefault(ep.name, ep.load())
        self._loaded = True
