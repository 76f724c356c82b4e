"""Training data in the formats of the tool-calling sets people train on, as fcenv tasks.

A *source format* reads one record of a dataset (a JSON Lines line, an entry of a JSON array,
a Parquet row, a row of a ``datasets`` dataset) into a ``Dialogue``: the tools the record
offers, as JSON-Schema function docs, and its turns, with the assistant's calls parsed.
``fcenv.sources.convert`` turns dialogues into BFCL question entries and possible answers,
one task per assistant step, judged by fcenv's own checkers.

The built-in formats (one module each): ``xlam``, ``hermes``, ``glaive``, ``toolace``,
``apigen_mt`` and ``openai``, reading with what ``parsing`` shares. ``schema`` maps a source's
JSON-Schema tools and calls to BFCL's docs and possible answers, ``convert`` makes the tasks,
``files`` reads JSON Lines, JSON, Parquet and ``datasets`` folders, ``resolve`` turns any
``dataset_path`` into one BFCL file (conversion cache, mixes), ``decontaminate`` finds copies of
BFCL's test set and ``report`` is ``fcenv data convert`` and ``fcenv data check``.

A format of your own is one function and one registration::

    from fcenv.sources import Dialogue, Turn, register_format
    from fcenv.handlers import Call

    @register_format("mine", detect=lambda record: "utterance" in record)
    def read(record: dict) -> Dialogue:
        return Dialogue(tools=record["apis"], turns=[
            Turn("user", record["utterance"], field="utterance"),
            Turn("assistant", calls=[Call(c["api"], c["args"]) for c in record["calls"]], field="calls")])

or the ``fcenv.sources`` entry-point group (``mine = "my_package.data:read"``, then
``--format mine``). A reader raises ``RecordError`` (field and message) for a record it
cannot read; the record is reported and left out.
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
