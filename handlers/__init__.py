"""Decoders from model text to function calls.

A handler is a function ``decode(text) -> list[Call]`` registered under a name. It raises
``DecodeError`` and nothing else on bad text; ``decode`` below enforces that for third-party
handlers too, so callers can rely on it. Other packages add handlers through the
``fcenv.handlers`` entry-point group (``name = "module:function"``).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from handlers.base import Call, DecodeError

Handler = Callable[[str], list[Call]]

_REGISTRY: dict[str, Handler] = {}
_BUILTIN_MODULES = ("python", "java", "javascript", "json_calls", "tool_call", "auto")
_loaded = False


def register_handler(name: str) -> Callable[[Handler], Handler]:
    """Register ``decode(text) -> list[Call]`` under ``name`` (a decorator)."""

    def decorator(fn: Handler) -> Handler:
        _REGISTRY[name] = fn
        return fn

    return decorator


def _load() -> None:
    global _loaded
    if _loaded:
        return
    import importlib

    for module in _BUILTIN_MODULES:
        importlib.import_module(f"handlers.{module}")
    for ep in entry_points(group="fcenv.handlers"):
        _REGISTRY.setdefault(ep.name, ep.load())
    _loaded = True


def get_handler(name: str) -> Handler:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown handler {name!r}; registered: {sorted(_REGISTRY)}") from None


def available_handlers() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def decode(text: str, handler: str = "python") -> list[Call]:
    """Decode ``text`` with the named handler; any failure becomes a ``DecodeError``."""
    fn = get_handler(handler)
    try:
        return fn(text)
    except DecodeError:
        raise
    except Exception as exc:  # hostile text must never escape as anything else
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


__all__ = ["Call", "DecodeError", "register_handler", "get_handler", "available_handlers", "decode"]
