"""WebSearchAPI: BFCL's web-search tools (``search_engine_query``, ``fetch_url_content``) on a
search source instead of the live web (``fcenv.search``: a recorded snapshot, a local corpus).

What the model meets is BFCL's tool: the same arguments and defaults, the same result shapes
(a list of ``{"title", "href", "body"}``, ``body`` left out in the no-snippet category;
``{"content": ...}`` for a page) and the same errors (``{"error": ...}`` for a failed search or
fetch, an exception for a URL without ``http://``/``https://``, which the executor shows as
``Error during execution: Invalid URL: ...``). ``max_results`` cuts the engine's results as a
slice does, so a value that cannot slice fails as BFCL's does. Where the source has no answer
(a query the snapshot was not recorded with) the result is ``{"error": ...}`` saying so.

The scenario config is BFCL's: ``{"show_snippet": bool}``. The episode gives the instance its
source (``_use_source``) before the model's first call.
"""

from __future__ import annotations

from typing import Any

from fcenv.search import MODES, Failure, Unavailable

SEARCH_FAILED = "Failed to retrieve the search results from server. Please try again later."


class WebSearchAPI:
    def __init__(self):
        self.show_snippet = True
        self._source = None

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        self.show_snippet = scenario["show_snippet"]

    def _use_source(self, source) -> None:
        self._source = source

    def _require_source(self):
        if self._source is None:
            raise RuntimeError("no search source: the web-search tools run on a snapshot or a corpus (web_search=)")
        return self._source

    def search_engine_query(self, keywords: str, max_results: int | None = 10, region: str | None = "wt-wt") -> Any:
        found = self._require_source().search(keywords, region)
        if isinstance(found, (Failure, Unavailable)):
            return {"error": found.message}
        shown = []
        for result in found[:max_results]:
            item = {"title": result["title"], "href": result["link"]}
            if self.show_snippet:
                item["body"] = result["snippet"]
            shown.append(item)
        return shown

    def fetch_url_content(self, url: str, mode: str = "raw") -> Any:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"Invalid URL: {url}")
        page = self._require_source().fetch(url)
        if isinstance(page, Unavailable):
            return {"error": page.message}
        if isinstance(page, Failure):
            return {"error": f"An error occurred while fetching {url}: {page.message}"}
        if mode not in MODES:
            return {"error": f"An error occurred while fetching {url}: Unsupported mode: {mode}"}
        if mode not in page:
            return {"error": f"the offline web snapshot holds {url} in the modes {', '.join(sorted(page))} only, "
                             f"not {mode!r}"}
        return {"content": page[mode]}
