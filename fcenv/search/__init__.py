"""Where BFCL's web-search tools get their answers, when fcenv cannot reach the web.

BFCL's ``WebSearchAPI`` (``fcenv.backends.web_search``) asks a live search engine (DuckDuckGo
through SerpAPI) and fetches live pages. fcenv plays the same tools, with the same arguments,
result shapes and error strings, on a *search source*: an object with two methods,

- ``search(keywords, region)``: the engine's organic results for that query, as SerpAPI gives
  them (``[{"title", "link", "snippet"}, ...]``, ``snippet`` optional), or a ``Failure``
  (what BFCL's tool returns as ``{"error": message}``), or an ``Unavailable`` (the source has
  no answer for it: the model is told so in a tool result, never by an exception);
- ``fetch(url)``: the page, as its text per mode (``{"raw": ..., "markdown": ..., "truncate":
  ...}``, any subset), or a ``Failure`` (why the request failed, as ``requests`` words it) or an
  ``Unavailable``.

The tool itself applies ``max_results``, drops snippets in BFCL's no-snippet category, checks
the URL and the mode, and words the results as BFCL does.

Built-in sources: ``snapshot`` (``fcenv.search.snapshot``: a recorded JSON file, replayed) and
``corpus`` (``fcenv.search.corpus``: a folder of one's own documents, searched with BM25).
``open_search_source`` turns what a user gives (``web_search=`` of the env, ``--web_search`` of
``fcenv generate``) into a source: a source object as is, ``"KIND:PATH"`` for a registered
kind, a file (a snapshot) or a folder (a corpus). Register your own kind (a live engine, say)
with ``SEARCH_SOURCES.register(name, factory)``, ``factory(path) -> source``, or under the
``fcenv.search_sources`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fcenv.handlers.registry import Registry

MODES = ("raw", "markdown", "truncate")  # fetch_url_content's modes, BFCL's names


@dataclass(frozen=True)
class Failure:
    """What the live tool would have met: a search engine's error, or why a page's request failed."""

    message: str


@dataclass(frozen=True)
class Unavailable:
    """The source holds no answer for this query or URL (a snapshot recorded without it)."""

    message: str


SearchResult = list[dict[str, Any]] | Failure | Unavailable
FetchResult = dict[str, str] | Failure | Unavailable


@runtime_checkable
class SearchSource(Protocol):
    def search(self, keywords: str, region: str) -> SearchResult: ...

    def fetch(self, url: str) -> FetchResult: ...


class SearchSourceError(ValueError):
    """A search source that cannot be opened: a bad snapshot, an empty corpus, an unknown kind."""


# kind -> factory(path) -> source. Built-ins register when their module is imported.
SEARCH_SOURCES: Registry[Callable[[Path], SearchSource]] = Registry(
    "search source", "fcenv.search", ("snapshot", "corpus"), "fcenv.search_sources")

NEEDED = ("web_search=<a snapshot file recorded with `fcenv web-snapshot`, or a folder of documents to search>"
          " (fcenv has no live web search)")


def open_search_source(value: Any) -> SearchSource:
    """A search source from a source object, ``"KIND:PATH"``, a snapshot file or a corpus folder.
    Raises ``SearchSourceError`` naming what is wrong."""
    if isinstance(value, SearchSource) and not isinstance(value, (str, Path)):
        return value
    if not isinstance(value, (str, Path)):
        raise SearchSourceError(f"web_search must be a path or a search source (an object with search() and "
                                f"fetch()), not {type(value).__name__}")
    text = str(value)
    kind, _, rest = text.partition(":")
    if rest and kind in SEARCH_SOURCES.names():
        return SEARCH_SOURCES.get(kind)(Path(rest))
    path = Path(text)
    if path.is_dir():
        return SEARCH_SOURCES.get("corpus")(path)
    if path.is_file():
        return SEARCH_SOURCES.get("snapshot")(path)
    raise SearchSourceError(f"web_search: {text}: no such file or folder (a snapshot file, a folder of documents, "
                            f"or KIND:PATH with KIND one of {', '.join(SEARCH_SOURCES.names())})")
