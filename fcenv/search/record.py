"""``fcenv web-snapshot``: record a snapshot (``fcenv.search.snapshot``) from the live web.

For users with the web and a SerpAPI key. Searches go where BFCL's tool sends them (SerpAPI's
DuckDuckGo engine, ``kl`` the region) and pages are fetched as BFCL's tool fetches them (the
same browser-like headers, 20 s, redirects followed, an HTTP error status a failure), so that a
replay shows what a live run would have shown at recording time:

- a search: the engine's organic results, all of them (the tool cuts them to ``max_results``
  when replayed); an answer without organic results is recorded as BFCL's tool reports it
  (``Failed to retrieve the search results ...``), a failing request as its error text;
  SerpAPI's 429 (rate limit) is waited out and tried again, a few times;
- a page: its text in each mode (``raw``: the response's text; ``markdown``: html2text's
  conversion; ``truncate``: BeautifulSoup's text without scripts and styles, a line per
  string), or the request's error text. The modes whose converter is not installed are left
  out and said (``pip install "fcenv[web]"``).

What to record: ``--query`` keywords, ``--url`` pages, and (``--follow N``) the first N links of
each search's results, which a model will most likely fetch. An existing ``--out`` is added to:
what it holds is kept and not asked again. Requests need the ``requests`` package.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fcenv.backends.web_search import SEARCH_FAILED
from fcenv.search.snapshot import DEFAULT_REGION, load_snapshot, snapshot_document

SERPAPI_ENDPOINT = "https://serpapi.com/search.json"
# What BFCL's tool sends: a browser's headers, so that sites answer as they would a person.
BROWSER_HEADERS = {
    "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/112.0.0.0 Safari/537.36",
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"
              "application/signed-exchange;v=b3;q=0.7",
    "Accept-Language": "en-US,en;q=0.9",
    "Accept-Encoding": "gzip, deflate, br",
    "Connection": "keep-alive",
    "Upgrade-Insecure-Requests": "1",
    "Referer": "https://www.google.com/",
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-User": "?1",
    "Sec-Fetch-Dest": "document",
}
FETCH_TIMEOUT = 20
RATE_LIMIT_TRIES = 6


def _requests():
    try:
        import requests
    except ImportError:
        raise RuntimeError("recording a web snapshot needs the requests package: pip install \"fcenv[web]\"") from None
    return requests


def page_modes(html: str) -> dict[str, str]:
    """The page's text in each mode whose converter is installed (raw always)."""
    modes = {"raw": html}
    try:
        import html2text
    except ImportError:
        pass
    else:
        modes["markdown"] = html2text.HTML2Text().handle(html)
    try:
        from bs4 import BeautifulSoup
    except ImportError:
        pass
    else:
        soup = BeautifulSoup(html, "html.parser")
        for element in soup(["script", "style"]):
            element.extract()
        modes["truncate"] = soup.get_text(separator="\n", strip=True)
    return modes


def fetch_page(url: str) -> dict[str, Any]:
    """A snapshot's page entry for ``url``: its modes, or why the request failed."""
    requests = _requests()
    try:
        response = requests.get(url, headers=BROWSER_HEADERS, timeout=FETCH_TIMEOUT, allow_redirects=True)
        response.raise_for_status()
        return {"url": url, "content": page_modes(response.text)}
    except Exception as exc:  # noqa: BLE001  whatever the request meets is what the tool reports
        return {"url": url, "error": str(exc)}


def search(keywords: str, region: str, api_key: str, endpoint: str = SERPAPI_ENDPOINT,
           sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """A snapshot's search entry: SerpAPI's organic results for the keywords in the region."""
    requests = _requests()
    params = {"engine": "duckduckgo", "q": keywords, "kl": region, "api_key": api_key, "output": "json"}
    backoff = 2.0
    for _ in range(RATE_LIMIT_TRIES):
        try:
            payload = requests.get(endpoint, params=params, timeout=60).json()
        except Exception as exc:  # noqa: BLE001
            if "429" not in str(exc):
                return {"keywords": keywords, "region": region, "error": str(exc)}
            payload = {"error": str(exc)}
        if not ("error" in payload and "429" in str(payload["error"])):
            break
        sleep(backoff + random.uniform(0, backoff))
        backoff = min(backoff * 2, 120)
    else:
        raise RuntimeError(f"SerpAPI answered 429 (rate limit) {RATE_LIMIT_TRIES} times for {keywords!r}; try later")
    if "organic_results" not in payload:
        return {"keywords": keywords, "region": region, "error": SEARCH_FAILED}
    results = [{key: result[key] for key in ("title", "link", "snippet") if key in result}
               for result in payload["organic_results"]]
    return {"keywords": keywords, "region": region, "results": results}


def record(out: Path, queries: list[str], urls: list[str], region: str = DEFAULT_REGION, follow: int = 0,
           api_key: str | None = None, endpoint: str = SERPAPI_ENDPOINT,
           log: Callable[[str], None] = print) -> dict[str, int]:
    """Add the searches and pages to the snapshot at ``out`` (made if absent); returns counts."""
    searches, pages = _existing(out)
    have_searches = {(s["keywords"], s.get("region", DEFAULT_REGION)) for s in searches}
    have_pages = {p["url"] for p in pages}
    wanted = list(dict.fromkeys(urls))
    for keywords in dict.fromkeys(queries):
        if (keywords, region) in have_searches:
            continue
        entry = search(keywords, region, api_key or "", endpoint)
        searches.append(entry)
        log(f"searched {keywords!r}: " + (entry["error"] if "error" in entry else f"{len(entry['results'])} results"))
        wanted += [result["link"] for result in entry.get("results", [])[:follow] if "link" in result]
    added = 0
    for url in dict.fromkeys(wanted):
        if url in have_pages:
            continue
        entry = fetch_page(url)
        pages.append(entry)
        have_pages.add(url)
        added += 1
        log(f"fetched {url}: " + (entry["error"] if "error" in entry else ", ".join(entry["content"])))
    partial = [p["url"] for p in pages if "content" in p and len(p["content"]) < 3]
    if partial:
        log(f"{len(partial)} pages hold only some modes (html2text gives markdown, beautifulsoup4 truncate: "
            f"pip install \"fcenv[web]\"); the others are told so when asked for")
    out.write_text(json.dumps(snapshot_document(searches, pages), ensure_ascii=False, indent=1) + "\n",
                   encoding="utf-8")
    load_snapshot(out)  # what was written replays
    return {"searches": len(searches), "pages": len(pages), "pages_added": added}


def _existing(out: Path) -> tuple[list[dict], list[dict]]:
    if not out.exists():
        return [], []
    load_snapshot(out)  # a bad file is refused, not overwritten
    data = json.loads(out.read_text(encoding="utf-8"))
    return list(data.get("searches", [])), list(data.get("pages", []))
