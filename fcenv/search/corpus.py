"""A local corpus: web search over one's own documents, for training without the web.

A folder of ``.txt``, ``.md`` and ``.html`` files (sub-folders too, hidden ones left out) is
the web: ``search_engine_query`` ranks its documents with BM25+ (``fcenv.backends.bm25``, the
ranking BFCL's key-value memory uses) over lower-case word tokens, and a document holding
none of the keywords is no result; ``fetch_url_content`` serves a document at its URL, the
base URL (``https://corpus.local/`` unless given) and its path in the folder
(``notes/tea.md`` -> ``https://corpus.local/notes/tea.md``). The region is ignored.

A result's title is an HTML page's ``<title>``, a Markdown file's first heading or a text
file's first line; its snippet the document's first ``SNIPPET_CHARS`` characters of text.
Modes: ``raw`` is the file as it is; ``truncate`` its text, one stripped string a line, scripts
and styles left out (what BeautifulSoup's ``get_text("\\n", strip=True)`` gives, done here with
the standard library); ``markdown`` a Markdown or text file as it is, an HTML page's text as
``truncate`` (not html2text's conversion: fcenv needs no extra package for a corpus).

A search that finds nothing answers as BFCL's tool does when the engine has no results.

A corpus serves what is inside its folder and nothing else: a file that is a link to something
outside it is left out (and named, as a ``DatasetWarning``). What one document may cost is
bounded: a file over ``MAX_DOCUMENT_BYTES``, or an HTML page whose parsing takes more than
``MAX_PARSE_SECONDS`` of CPU time (``html.parser`` is quadratic on some broken markup, such as
thousands of unclosed ``<a``) or that the parser cannot read, is named and left out; the rest
of the corpus opens.
"""

from __future__ import annotations

import os
import re
import time
import warnings
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote

from fcenv.backends.bm25 import BM25Plus
from fcenv.backends.web_search import SEARCH_FAILED
from fcenv.problems import DatasetWarning
from fcenv.search import SEARCH_SOURCES, Failure, SearchSourceError, Unavailable

SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")
DEFAULT_BASE_URL = "https://corpus.local/"
SNIPPET_CHARS = 300
MAX_RESULTS = 50  # the engine's page of results; the tool's max_results cuts it further
_WORD = re.compile(r"\w+")
MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
# A real page of a megabyte parses in a tenth of a second; broken markup that makes html.parser
# rescan the rest of the page at every '<' would take minutes. CPU time of this thread, so that
# a loaded machine does not leave out a page another machine keeps.
MAX_PARSE_SECONDS = 5.0
_FEED_CHARS = 64 * 1024


class DocumentLeftOut(Exception):
    """A document past the bounds on what one document may cost (its size, its parsing time),
    or one the standard library's HTML parser cannot read."""


class _TextOfHtml(HTMLParser):
    def __init__(self, deadline: float = float("inf")):
        super().__init__(convert_charrefs=True)
        self.strings: list[str] = []
        self.title = ""
        self._skipping = 0
        self._in_title = False
        self._deadline = deadline

    def _check_time(self) -> None:
        # html.parser calls back between its scans, also in the quadratic case (each unclosed
        # '<' handed over as data): a check here bounds the whole parse.
        if time.thread_time() > self._deadline:
            raise DocumentLeftOut(f"its HTML takes more than {MAX_PARSE_SECONDS:g} s of CPU time to parse")

    def handle_starttag(self, tag, attrs):
        self._check_time()
        if tag in ("script", "style"):
            self._skipping += 1
        self._in_title = self._in_title or tag == "title"

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skipping:
            self._skipping -= 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        self._check_time()
        if self._in_title and not self.title:
            self.title = data.strip()
        if not self._skipping and data.strip():
            self.strings.append(data.strip())


@dataclass(frozen=True)
class Document:
    url: str
    title: str
    raw: str
    text: str
    is_html: bool

    def modes(self) -> dict[str, str]:
        return {"raw": self.raw, "markdown": self.text if self.is_html else self.raw, "truncate": self.text}


def read_document(path: Path, url: str) -> Document:
    """The document at ``path``; ``DocumentLeftOut`` past the bounds on size and parsing time."""
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise DocumentLeftOut(f"{size:,} bytes, over the bound of {MAX_DOCUMENT_BYTES:,} bytes a document")
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() in (".html", ".htm"):
        parser = _TextOfHtml(time.thread_time() + MAX_PARSE_SECONDS)
        try:
            for start in range(0, len(raw), _FEED_CHARS):  # in pieces: the time is checked between them too
                parser.feed(raw[start:start + _FEED_CHARS])
                parser._check_time()
            parser.close()
        except DocumentLeftOut:
            raise
        except Exception as exc:  # html.parser asserts on some broken markup ('<![' and no name, in 3.11)
            raise DocumentLeftOut(f"html.parser cannot read its HTML ({type(exc).__name__}: {exc})") from None
        text = "\n".join(parser.strings)
        return Document(url, parser.title or path.stem, raw, text, True)
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    first = lines[0].lstrip("#").strip() if lines else ""
    return Document(url, first or path.stem, raw, "\n".join(lines), False)


class Corpus:
    def __init__(self, folder: Path, base_url: str = DEFAULT_BASE_URL):
        self.folder = folder
        base = base_url if base_url.endswith("/") else base_url + "/"
        files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
                       and not any(part.startswith(".") for part in p.relative_to(folder).parts))
        files = [p for p in files if _inside(p, folder)]
        self.documents = [d for d in (_document(p, base + quote(p.relative_to(folder).as_posix())) for p in files)
                          if d is not None]
        if not self.documents:
            raise SearchSourceError(f"web_search: {folder} holds no documents to search ({', '.join(SUFFIXES)} files)")
        self.by_url = {unquote(d.url): d for d in self.documents}
        self.index = BM25Plus([_tokens(d.title + "\n" + d.text) for d in self.documents])
        self.token_sets = [set(_tokens(d.title + "\n" + d.text)) for d in self.documents]

    def __deepcopy__(self, memo) -> Corpus:  # read-only: an env's snapshot() need not copy the corpus
        return self

    def search(self, keywords: str, region: str):
        if not isinstance(keywords, str):
            return Failure(SEARCH_FAILED)
        query = _tokens(keywords)
        # A document holding none of the keywords is no result; with none left, nothing is scored
        # (BM25 over documents that hold no word at all would divide by their mean length, 0).
        if not any(self.token_sets[i] & set(query) for i in range(len(self.documents))):
            return Failure(SEARCH_FAILED)
        scores = self.index.scores(query)
        hits = [i for i in sorted(range(len(scores)), key=lambda i: -scores[i]) if self.token_sets[i] & set(query)]
        return [{"title": d.title, "link": d.url, "snippet": " ".join(d.text.split())[:SNIPPET_CHARS]}
                for d in (self.documents[i] for i in hits[:MAX_RESULTS])]

    def fetch(self, url: str):
        document = self.by_url.get(unquote(url).split("#", 1)[0])
        if document is None:
            return Unavailable(f"no document at {url} in the local corpus")
        return document.modes()


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is the folder's own: ``is_file`` follows a link, and a link to a file
    outside the folder would show that file to the model. Left out, and named."""
    real = Path(os.path.realpath(path))
    if real.is_relative_to(Path(os.path.realpath(folder))):
        return True
    warnings.warn(f"web_search: {path}: left out of the corpus: a link to {real}, outside {folder}", DatasetWarning,
                  stacklevel=2)
    return False


def _document(path: Path, url: str) -> Document | None:
    try:
        return read_document(path, url)
    except DocumentLeftOut as exc:
        warnings.warn(f"web_search: {path}: left out of the corpus: {exc}", DatasetWarning, stacklevel=2)
        return None


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def open_corpus(path: Path) -> Corpus:
    if not path.is_dir():
        raise SearchSourceError(f"web_search: {path} is not a folder of documents")
    return Corpus(path)


SEARCH_SOURCES.register("corpus", open_corpus)
