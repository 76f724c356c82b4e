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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote

from fcenv.backends.bm25 import BM25Plus
from fcenv.backends.web_search import SEARCH_FAILED
from fcenv.search import SEARCH_SOURCES, Failure, SearchSourceError, Unavailable

SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")
DEFAULT_BASE_URL = "https://corpus.local/"
SNIPPET_CHARS = 300
MAX_RESULTS = 50  # the engine's page of results; the tool's max_results cuts it further
_WORD = re.compile(r"\w+")


class _TextOfHtml(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.strings: list[str] = []
        self.title = ""
        self._skipping = 0
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skipping += 1
        self._in_title = self._in_title or tag == "title"

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skipping:
            self._skipping -= 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
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
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() in (".html", ".htm"):
        parser = _TextOfHtml()
        parser.feed(raw)
        parser.close()
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
        if not files:
            raise SearchSourceError(f"web_search: {folder} holds no documents to search ({', '.join(SUFFIXES)} files)")
        self.documents = [read_document(p, base + quote(p.relative_to(folder).as_posix())) for p in files]
        self.by_url = {unquote(d.url): d for d in self.documents}
        self.index = BM25Plus([_tokens(d.title + "\n" + d.text) for d in self.documents])
        self.token_sets = [set(_tokens(d.title + "\n" + d.text)) for d in self.documents]

    def __deepcopy__(self, memo) -> Corpus:  # read-only: an env's snapshot() need not copy the corpus
        return self

    def search(self, keywords: str, region: str):
        if not isinstance(keywords, str):
            return Failure(SEARCH_FAILED)
        query = _tokens(keywords)
        scores = self.index.scores(query)
        hits = [i for i in sorted(range(len(scores)), key=lambda i: -scores[i]) if self.token_sets[i] & set(query)]
        if not hits:
            return Failure(SEARCH_FAILED)
        return [{"title": d.title, "link": d.url, "snippet": " ".join(d.text.split())[:SNIPPET_CHARS]}
                for d in (self.documents[i] for i in hits[:MAX_RESULTS])]

    def fetch(self, url: str):
        document = self.by_url.get(unquote(url).split("#", 1)[0])
        if document is None:
            return Unavailable(f"no document at {url} in the local corpus")
        return document.modes()


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def open_corpus(path: Path) -> Corpus:
    if not path.is_dir():
        raise SearchSourceError(f"web_search: {path} is not a folder of documents")
    return Corpus(path)


SEARCH_SOURCES.register("corpus", open_corpus)
