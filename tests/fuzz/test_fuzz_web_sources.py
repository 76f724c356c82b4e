"""Fuzzing the web-search sources a user hands us: corpus folders and snapshot files.

Properties, on every generated input:

- a corpus folder of documents of hostile shapes and sizes (unclosed tags and comments by the
  thousand, deep nesting, NUL bytes, invalid UTF-8, long lines), links among them (to a file
  outside the folder, to one inside, dangling) either opens or is refused with a
  ``SearchSourceError``; never another exception. Opened, it serves no text from outside the
  folder (searched or fetched), every URL it gives is one of its own documents, and each
  document cost at most the parsing bound (lowered here, so that a slow parse shows) plus one
  step of the parser: a document past it is named (a ``DatasetWarning``) and left out;
- a snapshot file of any JSON shape (deep nesting included) either loads or is refused with a
  ``SearchSourceError`` naming the file; never another exception.
"""

from __future__ import annotations

import json
import shutil
import time
import warnings

from hypothesis import given, note
from hypothesis import strategies as st

from fcenv.problems import DatasetWarning
from fcenv.search import SearchSourceError
from fcenv.search import corpus as corpus_module
from fcenv.search.snapshot import FORMAT, load_snapshot
from harness.strategies import fuzz_settings

SECRET = "zeppelinsecret"  # the outside file's text: never served
BOUND = 0.05  # seconds of CPU time a document's HTML may take to parse, lowered for the test
PIECES = ["<a ", "<!--", "<![CDATA[", "</", "<?x", "<!doctype", "&#", "&amp", "<script>", "<style>", "<title>",
          "<div>", "</div>", "<p>tea</p>", "tea ", "China ", "\x00", "\n", ">", "'", '"', "=", "<a href='", "é"]


@st.composite
def documents(draw) -> tuple[str, bytes]:
    name = draw(st.sampled_from(["a.html", "b.htm", "c.md", "d.txt", "sub/e.html", "sub/deep/f.markdown", "G.HTML"]))
    pieces = draw(st.lists(st.sampled_from(PIECES), min_size=0, max_size=12))
    repeat = draw(st.sampled_from([1, 10, 1000, 6000]))
    text = "".join(pieces) * repeat
    raw = text.encode("utf-8")
    if draw(st.booleans()) and raw:  # invalid UTF-8 somewhere
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + b"\xff\xfe" + raw[at:]
    return name, raw


def test_hostile_corpora_open_within_their_bound_and_serve_only_themselves(tmp_path_factory, monkeypatch):
    monkeypatch.setattr(corpus_module, "MAX_PARSE_SECONDS", BOUND)
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text(f"{SECRET} tea China\n")

    @fuzz_settings(150)
    @given(docs=st.lists(documents(), min_size=0, max_size=5),
           links=st.lists(st.sampled_from(["outside", "inside", "dangling", "folder"]), max_size=3))
    def check(docs, links):
        folder = tmp_path_factory.mktemp("corpus")
        for name, raw in docs:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(raw)
        for number, kind in enumerate(links):
            link = folder / f"link{number}.txt"
            target = {"outside": outside, "inside": folder / docs[0][0] if docs else outside,
                      "dangling": folder / "nowhere.txt", "folder": outside.parent}[kind]
            (folder / (f"linked{number}" if kind == "folder" else link.name)).symlink_to(target)
        note(f"{[(n, len(r)) for n, r in docs]} {links}")
        costs = {}
        read = corpus_module.read_document

        def timed(path, url):  # the module's own reading, its CPU time kept per document
            start = time.thread_time()
            try:
                return read(path, url)
            finally:
                costs[path.name] = time.thread_time() - start

        monkeypatch.setattr(corpus_module, "read_document", timed)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                opened = corpus_module.open_corpus(folder)
        except SearchSourceError as exc:
            assert "holds no documents to search" in str(exc) and str(folder) in str(exc)
            return
        finally:
            monkeypatch.setattr(corpus_module, "read_document", read)
            shutil.rmtree(folder, ignore_errors=True)
        named = [str(w.message) for w in caught if issubclass(w.category, DatasetWarning)]
        assert all(message.startswith("web_search: ") and "left out of the corpus" in message for message in named)
        assert all(cost < BOUND + 0.5 for cost in costs.values()), costs
        own = {d.url for d in opened.documents}
        for document in opened.documents:
            assert SECRET not in document.raw and SECRET not in document.text
        results = opened.search(f"{SECRET} tea China", "wt-wt")
        assert SECRET not in json.dumps(results, default=str)
        if isinstance(results, list):
            assert {r["link"] for r in results} <= own
        for number in range(len(links)):
            assert SECRET not in json.dumps(opened.fetch(f"https://corpus.local/link{number}.txt"), default=str)

    check()


def json_values(depth: int = 3):
    leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
    return st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                        max_leaves=20)


@st.composite
def snapshots(draw) -> str:
    kind = draw(st.sampled_from(["shaped", "any", "deep", "cut"]))
    if kind == "deep":  # nested past the parser's recursion, anywhere a value goes
        depth = draw(st.sampled_from([10, 2_000, 100_000]))
        nested = "[" * depth + "]" * depth
        return draw(st.sampled_from([nested, f'{{"format": "{FORMAT}", "searches": {nested}}}',
                                     f'{{"format": "{FORMAT}", "pages": [{{"url": "u", "content": {{"raw": {nested}}}}}]}}']))
    if kind == "any":
        return json.dumps(draw(json_values()))
    document = {"format": draw(st.sampled_from([FORMAT, "other", 1])),
                "searches": draw(st.lists(st.fixed_dictionaries({"keywords": json_values(), "results": json_values()}),
                                          max_size=3)),
                "pages": draw(st.lists(st.fixed_dictionaries({"url": json_values(), "content": json_values()}),
                                       max_size=3))}
    text = json.dumps(document)
    return text[:draw(st.integers(0, len(text)))] if kind == "cut" else text


def test_hostile_snapshots_load_or_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "web.json"

    @fuzz_settings(400)
    @given(text=snapshots())
    def check(text):
        path.write_text(text)
        try:
            load_snapshot(path)
        except SearchSourceError as exc:
            assert str(path) in str(exc)

    check()
