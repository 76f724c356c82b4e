"""A recorded web: a snapshot file of search results and fetched pages, replayed offline.

``fcenv web-snapshot`` writes the file (``fcenv.search.record``); ``load_snapshot`` reads it and
gives its layout (``FORMAT``). A search is keyed by its exact keywords and region, a page by its
exact URL, each holding what the engine or the site answered or the error it gave. A query or
URL the snapshot lacks is the model's tool result, ``{"error": ...}`` saying so; a snapshot that
is not as described is refused when it is opened, every problem named by entry and field.
Docs: docs/environment.md#web-search-without-the-web.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fcenv.problems import Problem
from fcenv.search import MODES, SEARCH_SOURCES, Failure, SearchSourceError, Unavailable

FORMAT = "fcenv-web-snapshot/1"
DEFAULT_REGION = "wt-wt"


class Snapshot:
    """A snapshot file, read and checked whole; immutable, so copies of an episode share it."""

    def __init__(self, path: Path, searches: dict[tuple[str, str], Any], pages: dict[str, Any]):
        self.path = path
        self.searches = searches
        self.pages = pages

    def __deepcopy__(self, memo) -> Snapshot:  # read-only: an env's snapshot() need not copy the web
        return self

    def search(self, keywords: str, region: str):
        if not isinstance(keywords, str) or not isinstance(region, str):
            return Unavailable(f"the offline web snapshot ({self.path.name}) holds searches for text keywords and "
                               f"regions only")
        found = self.searches.get((keywords, region))
        if found is None:
            return Unavailable(f"the offline web snapshot ({self.path.name}) holds no search for keywords "
                               f"{keywords!r} in region {region!r}: it was not searched when the snapshot was "
                               f"recorded")
        return Failure(found) if isinstance(found, str) else found

    def fetch(self, url: str):
        found = self.pages.get(url)
        if found is None:
            return Unavailable(f"the offline web snapshot ({self.path.name}) holds no page for {url}: it was not "
                               f"fetched when the snapshot was recorded")
        return Failure(found) if isinstance(found, str) else found


def load_snapshot(path: str | Path) -> Snapshot:
    """Read and check a snapshot file; raises ``SearchSourceError`` listing every problem.

    The file is one JSON object::

        {
          "format": "fcenv-web-snapshot/1",
          "searches": [
            {"keywords": "most expensive tea", "region": "wt-wt",
             "results": [{"title": "...", "link": "https://...", "snippet": "..."}, ...]},
            {"keywords": "...", "region": "wt-wt", "error": "Failed to retrieve the search results ..."}
          ],
          "pages": [
            {"url": "https://...", "content": {"raw": "<html>...", "markdown": "...", "truncate": "..."}},
            {"url": "https://...", "error": "404 Client Error: Not Found for url: https://..."}
          ]
        }

    A search is keyed by its exact keywords and region (BFCL's default region is ``wt-wt``); its
    ``results`` are the engine's organic results in SerpAPI's words (``link``, ``snippet``: the
    tool calls them ``href`` and ``body``), all of them: ``max_results`` and the no-snippet
    category are applied when replayed. ``error`` records what the engine answered instead. A
    page is keyed by its exact URL; ``content`` holds its text in any of fetch_url_content's
    modes, ``error`` why the request failed (the tool words it ``An error occurred while
    fetching <url>: <error>``).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SearchSourceError(f"{path}: cannot read the snapshot: {exc}") from None
    except json.JSONDecodeError as exc:
        raise SearchSourceError(f"{path}, line {exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:  # json nests by recursion: a hostile file would otherwise end in a traceback
        raise SearchSourceError(f"{path}: not a web snapshot: its JSON is nested deeper than Python's parser goes "
                                f"(a snapshot nests five levels)") from None
    problems: list[Problem] = []
    file = str(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise SearchSourceError(str(Problem(file, None, None, "format", f"must be {FORMAT!r} (an fcenv web snapshot), "
                                                                        f"not {got!r}")))
    searches = _searches(data.get("searches", []), file, problems)
    pages = _pages(data.get("pages", []), file, problems)
    unknown = sorted(set(data) - {"format", "searches", "pages"})
    if unknown:
        problems.append(Problem(file, None, None, unknown[0], "unknown field (a snapshot holds format, searches, pages)"))
    if problems:
        raise SearchSourceError("the web snapshot has problems:\n" + "\n".join(f"  {p}" for p in problems))
    return Snapshot(path, searches, pages)


def _entries(value: Any, name: str, file: str, problems: list[Problem]) -> list[tuple[str, dict]]:
    if not isinstance(value, list):
        problems.append(Problem(file, None, None, name, "must be a list"))
        return []
    out = []
    for index, entry in enumerate(value):
        where = f"{name}[{index}]"
        if isinstance(entry, dict):
            out.append((where, entry))
        else:
            problems.append(Problem(file, None, where, None, "must be an object"))
    return out


def _one_of(entry: dict, where: str, answer: str, file: str, problems: list[Problem]) -> bool:
    """Exactly one of ``answer`` and ``error``; an ``error`` must be text."""
    if (answer in entry) == ("error" in entry):
        problems.append(Problem(file, None, where, answer, f"give exactly one of {answer!r} and 'error'"))
        return False
    if "error" in entry and not isinstance(entry["error"], str):
        problems.append(Problem(file, None, where, "error", "must be a string"))
        return False
    return True


def _searches(value: Any, file: str, problems: list[Problem]) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    first: dict[tuple[str, str], str] = {}
    for where, entry in _entries(value, "searches", file, problems):
        keywords, region = entry.get("keywords"), entry.get("region", DEFAULT_REGION)
        if not isinstance(keywords, str):
            problems.append(Problem(file, None, where, "keywords", "must be a string"))
            continue
        if not isinstance(region, str):
            problems.append(Problem(file, None, where, "region", "must be a string"))
            continue
        if (keywords, region) in first:
            problems.append(Problem(file, None, where, "keywords", f"{keywords!r} in region {region!r} is recorded "
                                                                   f"twice (first at {first[keywords, region]})"))
            continue
        first[keywords, region] = where
        if not _one_of(entry, where, "results", file, problems):
            continue
        if "error" in entry:
            out[keywords, region] = entry["error"]
        elif _results_ok(entry["results"], where, file, problems):
            out[keywords, region] = entry["results"]
    return out


def _results_ok(results: Any, where: str, file: str, problems: list[Problem]) -> bool:
    if not isinstance(results, list):
        problems.append(Problem(file, None, where, "results", "must be a list of {title, link, snippet}"))
        return False
    ok = True
    for index, result in enumerate(results):
        field = f"results[{index}]"
        if not isinstance(result, dict):
            problems.append(Problem(file, None, where, field, "must be an object {title, link, snippet}"))
            ok = False
            continue
        for key in ("title", "link", "snippet"):
            required = key != "snippet"  # the engine leaves a snippet out now and then
            if (key in result or required) and not isinstance(result.get(key), str):
                problems.append(Problem(file, None, where, f"{field}.{key}", "must be a string"))
                ok = False
    return ok


def _pages(value: Any, file: str, problems: list[Problem]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    first: dict[str, str] = {}
    for where, entry in _entries(value, "pages", file, problems):
        url = entry.get("url")
        if not isinstance(url, str):
            problems.append(Problem(file, None, where, "url", "must be a string"))
            continue
        if url in first:
            problems.append(Problem(file, None, where, "url", f"{url} is recorded twice (first at {first[url]})"))
            continue
        first[url] = where
        if not _one_of(entry, where, "content", file, problems):
            continue
        if "error" in entry:
            out[url] = entry["error"]
            continue
        content = entry["content"]
        if not isinstance(content, dict) or not content:
            problems.append(Problem(file, None, where, "content", f"must be an object of the page's text per mode "
                                                                  f"({', '.join(MODES)})"))
            continue
        bad = [mode for mode, text in content.items() if mode not in MODES or not isinstance(text, str)]
        if bad:
            problems.append(Problem(file, None, where, f"content.{bad[0]}",
                                    f"must be a string under one of the modes {', '.join(MODES)}"))
            continue
        out[url] = dict(content)
    return out


def snapshot_document(searches: list[dict[str, Any]], pages: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON object of a snapshot file holding these entries."""
    return {"format": FORMAT, "searches": searches, "pages": pages}


SEARCH_SOURCES.register("snapshot", load_snapshot)
