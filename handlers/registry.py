"""The one registry style of every extension point: a name -> entry registry, filled by built-in
modules and by an entry-point group.

Decoders, checkers, tool formats, rewards, tool backends, advantage estimators, algorithm presets,
rollout engines and the formats of training sets (``fcenv.sources``) are each a ``Registry``. Built-in modules register their entries when
imported (``register(name)`` as a decorator, or ``register(name, entry)``); other packages
register theirs under the registry's entry-point group (``name = "module:object"``). Both are
loaded on the first lookup, so creating a registry or importing its package does no work. Every
command-line choice of these kinds is drawn from ``names()``, so an entry a user registers is
accepted wherever a built-in one is.

A name is held once. Registering a name the registry holds (a built-in's, an entry point's, or
one registered before) raises ``ValueError`` naming it, whether or not anything has been looked
up yet: a registration outside the built-in modules loads the built-ins and entry points first,
so that what they hold is known. To change what a built-in does, register under a new name and
choose that name. An entry point under a name already held is left unloaded (the built-in, or the
entry registered first, keeps it).

It lives in ``handlers``, the bottom layer, so that every layer above can use it.
"""

from __future__ import annotations

import importlib
import sys
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
        self._loading = False

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...
    @overload
    def register(self, name: str, entry: T) -> T: ...

    def register(self, name, entry=None):
        """Register ``entry`` under ``name``; without ``entry``, a decorator that registers what
        it decorates. A name the registry already holds is refused (see the module doc)."""
        if not (self._loading or self._builtin_module_running()):
            self._load()
        self._refuse_held(name)  # now, before a decorator's caller does anything else under the name
        if entry is not None:
            return self._add(name, entry)
        return lambda fn: self._add(name, fn)

    def _add(self, name: str, entry: T) -> T:
        self._refuse_held(name)
        self._entries[name] = entry
        return entry

    def _refuse_held(self, name: str) -> None:
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered (a name is held once, built-in names "
                             f"included); register yours under another name and choose that one")

    def _builtin_module_running(self) -> bool:
        """Whether the body of one of the built-in modules is on the call stack: a built-in
        registers while its module is imported, by ``_load`` or by any import of it, and must
        not load the others then (importing a package stays cheap)."""
        builtins = {f"{self._package}.{module}" for module in self._builtin_modules}
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") in builtins:
                return True
            frame = frame.f_back
        return False

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
        if self._loaded or self._loading:  # loading: a module being loaded registers, or looks up
            return
        self._loading = True
        try:
            for module in self._builtin_modules:
                importlib.import_module(f"{self._package}.{module}")
            for ep in entry_points(group=self.group):
                if ep.name not in self._entries:
                    self._entries[ep.name] = ep.load()
            self._loaded = True
        finally:
            self._loading = False
