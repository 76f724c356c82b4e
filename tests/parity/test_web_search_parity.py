"""fcenv's web-search tools on a recorded snapshot against BFCL's WebSearchAPI on the live thing.

A local HTTP server plays the web: SerpAPI's search endpoint (organic results, an answer
without any, an error payload) and pages (HTML with scripts and styles, a 404). BFCL's own
class (oracle venv, its SerpAPI client sent to this server) answers a list of calls live;
``fcenv web-snapshot`` records the same searches and pages from the same server (a process of
its own), and fcenv's WebSearchAPI answers the same calls from that snapshot. Every value must
be equal, in both categories (snippets shown or not) and in every fetch mode: raw, markdown
(html2text) and truncate (BeautifulSoup), an unsupported mode, a failed request, a bad URL.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from fcenv.backends.web_search import WebSearchAPI
from fcenv.search.snapshot import load_snapshot

pytestmark = pytest.mark.oracle
ROOT = Path(__file__).resolve().parents[2]
PAGE = ("<html><head><title>Tea &amp; more</title><style>p {color: red}</style><script>var x = 1;</script></head>"
        "<body><h1>Da Hong Pao</h1><p>The <b>most</b> expensive tea, from <a href='/china'>China</a>.</p>"
        "<ul><li>one</li><li>two</li></ul></body></html>")
SEARCHES = {
    "most expensive tea": {"organic_results": [
        {"position": 1, "title": "Da Hong Pao", "link": "https://example.org/tea", "snippet": "The most expensive tea"},
        {"position": 2, "title": "Teas", "link": "https://example.org/teas", "snippet": "five teas", "favicon": "x"},
        {"position": 3, "title": "Bare", "link": "https://example.org/bare"}]},
    "two results": {"organic_results": [
        {"title": "A", "link": "https://a.example/", "snippet": "a"}, {"title": "B", "link": "https://b.example/",
                                                                       "snippet": "b"}]},
    "nothing found": {"search_metadata": {"status": "Success"}},
    "out of searches": {"error": "Your account has run out of searches."},
}


class Web(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        url = urlparse(self.path)
        if url.path.startswith("/search"):
            status, body, kind = 200, json.dumps(SEARCHES[parse_qs(url.query)["q"][0]]), "application/json"
        elif url.path == "/page.html":
            status, body, kind = 200, PAGE, "text/html; charset=utf-8"
        else:
            status, body, kind = 404, "<h1>gone</h1>", "text/html"
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def web():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Web)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def calls(base):
    search = [{"name": "search_engine_query", "arguments": args} for args in (
        {"keywords": "most expensive tea"}, {"keywords": "two results", "max_results": 1},
        {"keywords": "two results", "max_results": -1}, {"keywords": "two results", "max_results": None},
        {"keywords": "two results", "max_results": "2"}, {"keywords": "nothing found"},
        {"keywords": "out of searches"})]
    fetch = [{"name": "fetch_url_content", "arguments": args} for args in (
        {"url": f"{base}/page.html"}, {"url": f"{base}/page.html", "mode": "markdown"},
        {"url": f"{base}/page.html", "mode": "truncate"}, {"url": f"{base}/page.html", "mode": "text"},
        {"url": f"{base}/missing"}, {"url": f"{base}/missing", "mode": "bogus"}, {"url": "ftp://example.org/x"},
        {"url": "example.org"})]
    return search + fetch


def ours(snapshot: Path, show_snippet: bool, requests: list[dict]) -> list:
    api = WebSearchAPI()
    api._load_scenario({"show_snippet": show_snippet})
    api._use_source(load_snapshot(snapshot))
    out = []
    for call in requests:
        try:
            out.append(getattr(api, call["name"])(**call["arguments"]))
        except Exception as exc:  # what the executor shows after "Error during execution: "
            out.append({"raised": str(exc)})
    return out


def test_the_snapshot_replays_what_bfcl_s_tool_answers_live(oracle, web, tmp_path):
    key = tmp_path / "key"
    key.write_text("test-key\n")
    snapshot = tmp_path / "web.json"
    recorded = subprocess.run(
        [sys.executable, "-m", "fcenv", "web-snapshot", "--out", str(snapshot), "--query", *SEARCHES,
         "--serpapi_key_file", str(key), "--serpapi_endpoint", f"{web}/search", "--url", f"{web}/page.html",
         f"{web}/missing"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert recorded.returncode == 0, recorded.stderr
    requests = calls(web)
    answers = oracle.run([{"op": "web_search", "show_snippet": show, "serpapi_backend": web, "calls": requests}
                          for show in (True, False)])
    for show, answer in zip((True, False), answers):
        mine = ours(snapshot, show, requests)
        for call, theirs, got in zip(requests, answer["results"], mine):
            assert got == theirs, (show, call)
    truncate = answers[0]["results"][9]["content"]
    assert "Da Hong Pao" in truncate and "var x" not in truncate  # the modes differ, and were compared
    assert answers[0]["results"][0] == {"raised": "'snippet'"} and len(answers[1]["results"][0]) == 3
