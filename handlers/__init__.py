"""Decoders from model text to function calls.

A handler is a function ``decode(text) -> list[Call]`` registered under a name. It raises
``DecodeError`` and nothing else on bad text; ``decode`` below enforces that for third-party
handlers too, so callers can rely on it. Other packages add handlers through the
``fcenv.handlers`` entry-point group (``name = "module:function"``).

Modules: ``base`` (``Call``, ``DecodeError``), ``registry`` (the registry style every extension
point uses); BFCL's prompting decoders ``python`` (with ``bounded_eval``, operator expressions
without eval, and ``python_fast``), ``java`` and ``javascript`` (tree-sitter, with
``tree_sitter_support`` and the ``java_fast`` / ``javascript_fast`` readers of plain answers),
``bfcl_text`` (BFCL's clean-up of raw text), ``bfcl_formats`` (the return formats and
``<TOOLCALL>`` tag of BFCL's prompt variations); ``json_calls``, ``tool_call`` and ``auto``; the FC
families ``hermes``, ``llama_json`` and ``mistral`` with what they share in ``native``.
"""

from __future__ import annotations

from collections.abc import Callable

from fcenv.handlers.base import Call, DecodeError
from fcenv.handlers.registry import Registry

Handler = Callable[[str], list[Call]]

_HANDLERS: Registry[Handler] = Registry(
    "handler", "fcenv.handlers", ("python", "java", "javascript", "json_calls", "tool_call", "auto", "hermes", "llama_json", "mistral", "bfcl_formats"),
    "fcenv.handlers"
)


def register_handler(name: str) -> Callable[[Handler], Handler]:
    """Register ``decode(text) -> list[Call]`` under ``name`` (a decorator)."""
    return _HANDLERS.register(name)


def get_handler(name: str) -> Handler:
    return _HANDLERS.get(name)


def available_handlers() -> list[str]:
    return _HANDLERS.names()


def decode(text: str, handler: str = "python") -> list[Call]:
    """Decode ``text`` with the named handler; any failure becomes a ``DecodeError``."""
    return decode_with(get_handler(handler), text)


def decode_with(fn: Handler, text: str) -> list[Call]:
    """``fn(text)``, where any failure becomes a ``DecodeError``."""
    try:
        return fn(text)
    except DecodeError:
        raise
    except Exception as exc:  # hostile text must never escape as anything else
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


__all__ = ["Call", "DecodeError", "register_handler", "get_handler", "available_handlers", "decode", "decode_with"]
