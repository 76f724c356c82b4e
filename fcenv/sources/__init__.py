"""Training data in the formats of the tool-calling sets people train on, as fcenv tasks.

A *source format* reads one record into a ``Dialogue`` (the tools, as JSON-Schema function docs,
and the turns, with the assistant's calls parsed), raising ``RecordError`` for a record it
cannot read; ``convert`` makes one BFCL task per assistant step. Built-in formats, one module
each: ``xlam``, ``hermes``, ``glaive``, ``toolace``, ``apigen_mt``, ``openai`` (sharing
``parsing``); ``schema`` maps tools and calls to BFCL's, ``files`` reads the file forms,
``resolve`` turns a ``dataset_path`` into one BFCL file, ``decontaminate`` finds copies of BFCL's
test set, ``report`` is ``fcenv data convert`` and ``check``. Your own format
(``register_format`` or the ``fcenv.sources`` entry points): docs/your-data.md#a-format-of-your-own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field as default
from typing import Any

from fcenv.handlers import Call
from fcenv.handlers.registry import Registry


class RecordError(ValueError):
    """One record that cannot become a judged task: where (``field``), why, and which kind of
    problem it is (the conversion summary counts records left out per kind)."""

    def __init__(self, field: str | None, message: str, kind: str = "unreadable"):
        super().__init__(message)
        self.field = field
        self.message = message
        self.kind = kind


@dataclass
class Turn:
    """One message. An assistant turn holds the calls it made (``calls``, each found at
    ``call_fields[i]`` of the record) and any text; ``field`` says where the turn is."""

    role: str  # system, user, assistant or tool
    content: str = ""
    calls: list[Call] = default(default_factory=list)
    field: str = ""
    call_fields: list[str] = default(default_factory=list)


@dataclass
class Dialogue:
    """A record's tools (JSON-Schema function docs: ``name``, ``description``, ``parameters``
    with ``properties`` and ``required``) and its turns in order."""

    tools: list[dict[str, Any]]
    turns: list[Turn]
    tools_field: str = "tools"


Reader = Callable[[dict[str, Any]], Dialogue]


@dataclass(frozen=True)
class SourceFormat:
    name: str
    read: Reader
    detect: Callable[[dict[str, Any]], bool] | None = None  # recognises the format from a record


SOURCE_FORMATS: Registry[SourceFormat] = Registry(
    "source format", "fcenv.sources", ("xlam", "hermes", "glaive", "toolace", "apigen_mt", "openai"), "fcenv.sources")

# A format's name starts the ids of its tasks (``xlam_parallel_3``), and BFCL reads the
# category from ids by substring: these would change the language or the checker.
_RESERVED = ("java", "relevance", "parallel", "multiple", "multi_turn", "exec", "memory", "web_search",
             "long_context", "composite")


def register_format(name: str, detect: Callable[[dict[str, Any]], bool] | None = None) -> Callable[[Reader], Reader]:
    """Register ``read(record) -> Dialogue`` as the source format ``name`` (a decorator).
    ``detect(record) -> bool`` lets a file in this format be converted without naming it."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or any(word in name for word in _RESERVED):
        raise ValueError(f"source format name {name!r}: use lowercase letters, digits and '_', without "
                         f"{', '.join(_RESERVED)} (task ids start with it, and BFCL reads categories from ids)")

    def decorator(read: Reader) -> Reader:
        SOURCE_FORMATS.register(name, SourceFormat(name, read, detect))
        return read

    return decorator


def get_format(name: str) -> SourceFormat:
    found = SOURCE_FORMATS.get(name)
    # An entry point names the reader itself.
    return found if isinstance(found, SourceFormat) else SourceFormat(name, found)


def available_formats() -> list[str]:
    return SOURCE_FORMATS.names()


def detect_format(record: Any) -> SourceFormat | None:
    """The format a record is written in, by the registered formats' ``detect``."""
    if not isinstance(record, dict):
        return None
    for name in available_formats():
        fmt = get_format(name)
        try:
            if fmt.detect is not None and fmt.detect(record):
                return fmt
        except Exception:  # a detector given an odd record says no
            continue
    return None


__all__ = ["Call", "Dialogue", "RecordError", "SOURCE_FORMATS", "SourceFormat", "Turn", "available_formats",
           "detect_format", "get_format", "register_format"]
