"""BFCL's web-search categories in the env, on a recorded snapshot (no machine here reaches the web).

Loading BFCL's file as its two categories; episodes as BFCL's flow plays them (tools on the
snapshot, the first step without calls judged by the agentic checker, force quit); what the
tools answer (BFCL's shapes and error strings, max_results as a slice, no snippets in the
no-snippet category, a clear result where the snapshot lacks a query or page); a bad snapshot
named by entry and field; ``fcenv web-snapshot`` recording pages from a real local HTTP server
(a process of its own), replayed; and ``fcenv generate`` -> ``fcenv evaluate`` on the file.
"""

from __future__ import annotations

import ast
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fcenv.data import DatasetWarning, load_tasks
from fcenv.env import FunctionCallingEnv
from fcenv.search import SearchSourceError
from fcenv.search.snapshot import FORMAT, load_snapshot

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "{'answer': 'Zhang Yiming', 'context': 'Forbes, April 2025'}"
SNAPSHOT = {
    "format": FORMAT,
    "searches": [
        {"keywords": "most expensive tea", "results": [
            {"title": "Da Hong Pao", "link": "https://example.org/tea", "snippet": "Da Hong Pao, from China"},
            {"title": "Teas", "link": "https://example.org/teas", "snippet": "five teas"},
            {"title": "No snippet", "link": "https://example.org/bare"}]},
        {"keywords": "richest in China", "region": "cn-zh", "error": "Failed to retrieve the search results from "
                                                                    "server. Please try again later."},
    ],
    "pages": [
        {"url": "https://example.org/tea", "content": {"raw": "<p>China</p>", "truncate": "China"}},
        {"url": "https://example.org/gone", "error": "404 Client Error: Not Found for url: https://example.org/gone"},
    ],
}


@pytest.fixture(scope="module")
def tasks(bfcl_dir):
    return load_tasks(bfcl_dir / "BFCL_v4_web_search.json")


@pytest.fixture
def snapshot(tmp_path):
    path = tmp_path / "web.json"
    path.write_text(json.dumps(SNAPSHOT))
    return path


def play(tasks, snapshot, index, steps, **options):
    env = FunctionCallingEnv(tasks=tasks, web_search=str(snapshot), **options)
    env.reset(options={"index": index})
    return [env.step(step) for step in steps]


def test_the_file_makes_bfcl_s_two_categories(tasks, bfcl_dir):
    assert len(tasks) == 200 and [t.category for t in tasks] == ["web_search_base"] * 100 + ["web_search_no_snippet"] * 100
    base, bare = tasks[0], tasks[100]
    assert base.id == "web_search_base_0" and bare.id == "web_search_no_snippet_0" and base.kind == "agentic"
    assert base.initial_config == {"WebSearchAPI": {"show_snippet": True}}
    assert bare.initial_config == {"WebSearchAPI": {"show_snippet": False}}
    assert base.ground_truth == bare.ground_truth == ["Zhang Yiming"]
    assert base.question[0][0]["role"] == "system" and base.question[0][0]["content"].startswith("For your final answer")
    docs = [json.loads(line) for line in (bfcl_dir / "multi_turn_func_doc" / "web_search.json").read_text().splitlines()]
    assert base.functions == docs


def test_without_a_search_source_the_env_names_what_it_needs(tasks):
    with pytest.raises(ValueError, match=r"200 web-search entries \(web_search_base_0.*give web_search=<a snapshot file"):
        FunctionCallingEnv(tasks=tasks)
    with pytest.raises(SearchSourceError, match="no such file or folder"):
        FunctionCallingEnv(tasks=tasks, web_search="/nonexistent/web.json")


def test_tools_answer_as_bfcl_s_from_the_snapshot(tasks, snapshot):
    calls = ('[search_engine_query(keywords="most expensive tea", max_results=2), '
             'search_engine_query(keywords="most expensive tea", max_results=-1), '
             'search_engine_query(keywords="most expensive tea", max_results="3"), '
             'search_engine_query(keywords="richest in China", region="cn-zh"), '
             'search_engine_query(keywords="unrecorded")]')
    base = play(tasks, snapshot, 0, [calls])[0][4]["results"]
    assert base[0] == str([{"title": "Da Hong Pao", "href": "https://example.org/tea", "body": "Da Hong Pao, from China"},
                           {"title": "Teas", "href": "https://example.org/teas", "body": "five teas"}])
    assert base[1] == str([{"title": "Da Hong Pao", "href": "https://example.org/tea", "body": "Da Hong Pao, from China"},
                           {"title": "Teas", "href": "https://example.org/teas", "body": "five teas"}])
    assert base[2] == "Error during execution: slice indices must be integers or None or have an __index__ method"
    assert json.loads(base[3]) == {"error": "Failed to retrieve the search results from server. Please try again later."}
    assert "holds no search for keywords 'unrecorded' in region 'wt-wt'" in json.loads(base[4])["error"]
    bare = play(tasks, snapshot, 100, ['[search_engine_query(keywords="most expensive tea")]'])[0][4]["results"][0]
    assert bare == str([{"title": "Da Hong Pao", "href": "https://example.org/tea"},
                        {"title": "Teas", "href": "https://example.org/teas"},
                        {"title": "No snippet", "href": "https://example.org/bare"}])
    # A result the engine gave without a snippet fails the snippet category, as BFCL's result["snippet"] does.
    assert play(tasks, snapshot, 0, ['[search_engine_query(keywords="most expensive tea")]'])[0][4]["results"][0] == \
        "Error during execution: 'snippet'"


def test_pages_answer_as_bfcl_s_from_the_snapshot(tasks, snapshot):
    calls = ('[fetch_url_content(url="https://example.org/tea", mode="truncate"), fetch_url_content(url="https://example.org/tea"), '
             'fetch_url_content(url="https://example.org/tea", mode="text"), fetch_url_content(url="https://example.org/gone"), '
             'fetch_url_content(url="example.org/tea"), fetch_url_content(url="https://example.org/elsewhere"), '
             'fetch_url_content(url="https://example.org/tea", mode="markdown")]')
    results = play(tasks, snapshot, 0, [calls])[0][4]["results"]
    assert [json.loads(r) for r in results[:4]] == [
        {"content": "China"}, {"content": "<p>China</p>"},
        {"error": "An error occurred while fetching https://example.org/tea: Unsupported mode: text"},
        {"error": "An error occurred while fetching https://example.org/gone: 404 Client Error: Not Found for url: "
                  "https://example.org/gone"}]
    assert results[4] == "Error during execution: Invalid URL: example.org/tea"
    assert "holds no page for https://example.org/elsewhere" in json.loads(results[5])["error"]
    assert "in the modes raw, truncate only" in json.loads(results[6])["error"]


def test_the_final_answer_is_judged_and_a_force_quit_has_none(tasks, snapshot):
    outcome = play(tasks, snapshot, 0, ['[search_engine_query(keywords="most expensive tea", max_results=1)]', ANSWER])
    assert [o[1:4] for o in outcome] == [(0.0, False, False), (1.0, True, False)] and outcome[1][4]["valid"]
    wrong = play(tasks, snapshot, 100, ["{'answer': 'Zhong Shanshan', 'context': ''}"])[0]
    assert wrong[1:3] == (0.0, True) and wrong[4]["error_type"] == "agentic:answer_not_found"
    looping = play(tasks, snapshot, 0, ['[search_engine_query(keywords="x")]'] * 3, max_steps_per_turn=2)
    assert looping[-1][3] and looping[-1][4]["error_type"] == "agentic:no_last_message" and looping[-1][4]["force_quit"]


def test_env_snapshots_share_the_recorded_web(tasks, snapshot):
    env = FunctionCallingEnv(tasks=tasks, web_search=str(snapshot))
    env.reset(options={"index": 0})
    saved = env.snapshot()
    assert saved["episode"].settings.web_search is env.settings.web_search  # not a copy of the web per branch
    env.restore(saved)
    assert env.step(ANSWER)[1] == 1.0


@pytest.mark.parametrize(("change", "where"), [
    (lambda s: s.update(format="other"), "field 'format': must be 'fcenv-web-snapshot/1'"),
    (lambda s: s["searches"][0]["results"][1].pop("link"), "entry 'searches[0]', field 'results[1].link': must be a string"),
    (lambda s: s["searches"].append({"keywords": "most expensive tea", "results": []}),
     "entry 'searches[2]', field 'keywords': 'most expensive tea' in region 'wt-wt' is recorded twice (first at searches[0])"),
    (lambda s: s["pages"][0]["content"].update(html="x"), "entry 'pages[0]', field 'content.html': must be a string under one"),
    (lambda s: s["pages"][1].update(content={"raw": ""}), "entry 'pages[1]', field 'content': give exactly one of"),
])
def test_a_bad_snapshot_is_refused_naming_entry_and_field(tmp_path, change, where):
    data = json.loads(json.dumps(SNAPSHOT))
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SearchSourceError) as caught:
        load_snapshot(path)
    assert f"{path}, {where}" in str(caught.value)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fcenv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fcenv", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_web_snapshot_records_a_local_server_s_pages_and_they_replay(tasks, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "tea.html").write_text("<html><body><h1>Da Hong Pao</h1><p>From <b>China</b>.</p></body></html>")
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(site)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        out = tmp_path / "web.json"
        done = fcenv("web-snapshot", "--out", str(out), "--url", f"{base}/tea.html", f"{base}/missing.html")
        assert done.returncode == 0, done.stderr
        again = fcenv("web-snapshot", "--out", str(out), "--url", f"{base}/tea.html")  # kept, not fetched again
        assert "2 pages (0 fetched now)" in again.stdout
    finally:
        server.terminate()
        server.wait()
    calls = f'[fetch_url_content(url="{base}/tea.html"), fetch_url_content(url="{base}/missing.html")]'
    results = [json.loads(r) for r in play(tasks, out, 0, [calls])[0][4]["results"]]
    assert results == [{"content": (site / "tea.html").read_text()},
                       {"error": f"An error occurred while fetching {base}/missing.html: 404 Client Error: File not "
                                 f"found for url: {base}/missing.html"}]


def test_web_snapshot_refuses_before_any_request():
    assert "SerpAPI key" in fcenv("web-snapshot", "--out", "x.json", "--query", "tea").stderr
    assert "http:// and https://" in fcenv("web-snapshot", "--out", "x.json", "--url", "ftp://x").stderr


class Endpoint(BaseHTTPRequestHandler):
    """A chat server that searches once, then answers from what the tool showed it."""

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        shown = [m["content"] for m in body["messages"] if "Da Hong Pao" in str(m.get("content"))]
        text = ANSWER if shown else '[search_engine_query(keywords="most expensive tea", max_results=1)]'
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_generate_then_evaluate_plays_and_scores_the_file(bfcl_dir, snapshot, tmp_path):
    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    (data / "multi_turn_func_doc").mkdir()
    shutil.copy(bfcl_dir / "multi_turn_func_doc" / "web_search.json", data / "multi_turn_func_doc")
    for name in ("BFCL_v4_web_search.json", "possible_answer/BFCL_v4_web_search.json"):
        (data / name).write_text("".join((bfcl_dir / name).read_text().splitlines(keepends=True)[:2]))
    questions = data / "BFCL_v4_web_search.json"
    refused = fcenv("generate", "--endpoint", "http://127.0.0.1:9/v1", "--model_name_or_path", "m",
                    "--dataset_path", str(questions), "--out", str(tmp_path / "out"))
    assert refused.returncode == 2 and "holds 4 web-search entries (first: web_search_base_0), whose tools need --web_search" in refused.stderr
    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = fcenv("generate", "--endpoint", f"http://127.0.0.1:{server.server_port}/v1", "--model_name_or_path",
                     "m", "--dataset_path", str(questions), "--web_search", str(snapshot), "--out", str(tmp_path / "out"),
                     "--no-progress")
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    results = [json.loads(x) for x in (tmp_path / "out" / "BFCL_v4_web_search_result.json").read_text().splitlines()]
    assert [r["id"] for r in results] == ["web_search_base_0", "web_search_base_1", "web_search_no_snippet_0",
                                          "web_search_no_snippet_1"]
    assert results[0]["result"] == [['[search_engine_query(keywords="most expensive tea", max_results=1)]', ANSWER]]
    scored = fcenv("evaluate", "--dataset_path", str(questions), "--results", str(tmp_path / "out" /
                   "BFCL_v4_web_search_result.json"), "--out", str(tmp_path / "verdicts.jsonl"))
    assert scored.returncode == 0, scored.stderr
    verdicts = [json.loads(x) for x in (tmp_path / "verdicts.jsonl").read_text().splitlines()]
    assert [v["valid"] for v in verdicts] == [True, False, True, False]  # entry 1's answer is 7, not Zhang Yiming


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "docs"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "tea.md").write_text("# Da Hong Pao\n\nThe most expensive tea, grown in Fujian, China.\n")
    (folder / "billionaires.html").write_text(
        "<html><head><title>Richest in China</title><style>p {}</style></head>"
        "<body><h1>Forbes 2025</h1><p>Zhang Yiming is the richest person in China.</p><script>x()</script></body></html>")
    (folder / "cars.txt").write_text("Cars and trucks\nnothing about drinks\n")
    (folder / ".hidden.md").write_text("tea tea tea")
    return folder


def test_a_corpus_folder_is_searched_with_bm25_and_serves_its_documents(tasks, corpus):
    calls = ('[search_engine_query(keywords="expensive tea China"), search_engine_query(keywords="zeppelin"), '
             'fetch_url_content(url="https://corpus.local/billionaires.html", mode="truncate"), '
             'fetch_url_content(url="https://corpus.local/notes/tea.md", mode="markdown"), '
             'fetch_url_content(url="https://corpus.local/.hidden.md")]')
    results = play(tasks, corpus, 0, [calls])[0][4]["results"]
    found = ast.literal_eval(results[0])
    assert [r["href"] for r in found] == ["https://corpus.local/notes/tea.md", "https://corpus.local/billionaires.html"]
    assert found[0]["title"] == "Da Hong Pao" and found[0]["body"].startswith("# Da Hong Pao The most expensive tea")
    assert json.loads(results[1]) == {"error": "Failed to retrieve the search results from server. Please try again later."}
    assert json.loads(results[2]) == {"content": "Richest in China\nForbes 2025\nZhang Yiming is the richest person in China."}
    assert json.loads(results[3])["content"].startswith("# Da Hong Pao")
    assert "no document at https://corpus.local/.hidden.md" in json.loads(results[4])["error"]
    assert play(tasks, corpus, 100, ['[search_engine_query(keywords="Forbes")]'])[0][4]["results"][0] == \
        str([{"title": "Richest in China", "href": "https://corpus.local/billionaires.html"}])


def test_an_empty_corpus_is_refused(tasks, tmp_path):
    with pytest.raises(SearchSourceError, match="holds no documents to search"):
        FunctionCallingEnv(tasks=tasks, web_search=str(tmp_path))


def test_a_link_out_of_the_corpus_is_named_and_never_shown(tasks, corpus, tmp_path):
    """A corpus serves what is inside its folder; ``is_file`` follows a link,
    which would show the file it points at (anywhere on the machine) to the model."""
    outside = tmp_path / "secret.txt"
    outside.write_text("Zeppelin secret: the password is hunter2\n")
    (corpus / "notes" / "leak.txt").symlink_to(outside)
    (corpus / "tea-again.md").symlink_to(corpus / "notes" / "tea.md")  # a link inside the folder is its own
    calls = ('[search_engine_query(keywords="zeppelin password"), '
             'fetch_url_content(url="https://corpus.local/notes/leak.txt", mode="raw"), '
             'fetch_url_content(url="https://corpus.local/tea-again.md", mode="raw")]')
    with pytest.warns(DatasetWarning, match=f"{corpus / 'notes' / 'leak.txt'}: left out of the corpus: a link to "
                                            f".*secret.txt, outside"):
        observation, _, _, _, info = play(tasks, corpus, 0, [calls])[0]
    results = info["results"]
    assert "hunter2" not in json.dumps(results) and "hunter2" not in json.dumps(observation, default=str)
    assert json.loads(results[0]) == {"error": "Failed to retrieve the search results from server. Please try again "
                                               "later."}
    assert "no document at https://corpus.local/notes/leak.txt" in json.loads(results[1])["error"]
    assert json.loads(results[2])["content"].startswith("# Da Hong Pao")


def test_a_document_past_the_cost_bound_is_named_and_left_out(tasks, corpus):
    """60 KB of unclosed ``<a`` makes html.parser rescan the rest of the page
    at every '<' (minutes); the corpus opens within its bound per document, without that page."""
    from fcenv.search.corpus import open_corpus

    (corpus / "broken.html").write_text("<a " * 20_000)
    start = time.perf_counter()
    with pytest.warns(DatasetWarning, match=f"{corpus / 'broken.html'}: left out of the corpus: its HTML takes more "
                                            f"than .* s of CPU time"):
        opened = open_corpus(corpus)
    assert time.perf_counter() - start < 20  # the bound is 5 s of CPU time; today's parser takes a minute
    assert sorted(d.url.rsplit("/", 1)[1] for d in opened.documents) == ["billionaires.html", "cars.txt", "tea.md"]


def test_a_snapshot_nested_past_the_parser_is_refused_naming_the_flag_and_file(tasks, tmp_path):
    """JSON nested 100,000 deep ended in Python's RecursionError."""
    from fcenv.arguments import UsageError
    from fcenv.flags import open_web_search

    path = tmp_path / "deep.json"
    path.write_text(f'{{"format": "{FORMAT}", "searches": {"[" * 100_000}{"]" * 100_000}}}')
    with pytest.raises(UsageError, match=f"^--web_search: {path}: not a web snapshot: its JSON is nested deeper"):
        open_web_search(str(path), [])
    with pytest.raises(SearchSourceError, match=f"^{path}: not a web snapshot"):
        FunctionCallingEnv(tasks=tasks, web_search=str(path))


def test_a_page_html_parser_cannot_read_and_a_corpus_without_words_answer_cleanly(tmp_path):
    """Found by tests/fuzz/test_fuzz_web_sources.py: html.parser asserts on '<![' without a name
    (the page is named and left out), and BM25 over documents without a word divided by their
    mean length, 0 (a search finds nothing, as BFCL's engine answers with no results)."""
    from fcenv.search import Failure
    from fcenv.search.corpus import open_corpus

    (tmp_path / "broken.html").write_bytes(b"<![\xff\xfeCDATA[")
    (tmp_path / "empty.md").write_text("<!--")
    with pytest.warns(DatasetWarning, match="broken.html: left out of the corpus: html.parser cannot read its HTML"):
        opened = open_corpus(tmp_path)
    assert [d.url for d in opened.documents] == ["https://corpus.local/empty.md"]
    assert isinstance(opened.search("tea", "wt-wt"), Failure)
