"""MkDocs hook: the site shows the repository's own files where the pages link to them.

The pages are written to be read on GitHub too, so a link to a file outside docs/ is an ordinary
relative link into the repository (``../../bench/results/train_heldout.png`` from
docs/benchmarks/). MkDocs knows only docs/, and in strict mode such a link fails the build. This
hook, run by ``mkdocs build`` (mkdocs.yml, ``hooks:``):

- serves every repository file a page links to under ``repository/<its path>`` in the site, and
  points the link there (a link to a file that does not exist is left alone, so the strict build
  names it);
- builds the page ``benchmarks/index.md`` from BENCHMARKS.md at the repository's root (the
  benchmarks' index, one file for GitHub and the site), its links resolved from where that file
  lies.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
MIRRORED = {"benchmarks/index.md": "BENCHMARKS.md"}  # a page of the site <- a file of the repository
SERVED = "repository"  # the site folder holding the repository files the pages link to

# [text](target) and ![alt](target); code blocks and code spans are skipped (see _prose)
_LINK = re.compile(r"(!?\[[^\]\n]*\]\()([^)\s]+)(\))")
_CODE = re.compile(r"^```.*?^```$|`[^`\n]*`", re.DOTALL | re.MULTILINE)


def _source(uri: str, docs_dir: Path) -> Path:
    """Where a page's text lies in the repository."""
    return ROOT / MIRRORED[uri] if uri in MIRRORED else docs_dir / uri


def _target(source: Path, link: str) -> Path | None:
    """The repository path a relative link of a file at ``source`` points to, or None (a URL,
    an anchor on the same page, an absolute path)."""
    path = link.split("#", 1)[0]
    if not path or re.match(r"^[a-z][a-z0-9+.-]*:", path) or path.startswith("/"):
        return None
    return Path(os.path.normpath(source.parent / path))


def _repository_file(target: Path, docs_dir: Path) -> str | None:
    """The path of a linked file outside docs/ that the site serves, relative to the root."""
    if target.is_relative_to(docs_dir) or not target.is_relative_to(ROOT) or not target.is_file():
        return None
    if target.suffix == ".md":  # a markdown file is a page: only the mirrored ones have a place
        return None
    return target.relative_to(ROOT).as_posix()


def _links(text: str):
    """Each link's match, outside code blocks and code spans."""
    code = [m.span() for m in _CODE.finditer(text)]
    for match in _LINK.finditer(text):
        if not any(start <= match.start() < end for start, end in code):
            yield match


def on_files(files: Files, config) -> Files:
    docs_dir = Path(config["docs_dir"]).resolve()
    for uri, name in MIRRORED.items():
        files.append(File.generated(config, uri, abs_src_path=str(ROOT / name)))
    pages = [f.src_uri for f in files if f.src_uri.endswith(".md")]
    served = set()
    for uri in pages:
        source = _source(uri, docs_dir)
        for match in _links(source.read_text(encoding="utf-8")):
            target = _target(source, match[2])
            if target is not None and (path := _repository_file(target, docs_dir)) and path not in served:
                served.add(path)
                files.append(File.generated(config, f"{SERVED}/{path}", abs_src_path=str(ROOT / path)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    docs_dir = Path(config["docs_dir"]).resolve()
    uri = page.file.src_uri
    source = _source(uri, docs_dir)
    mirrored_sources = {ROOT / name: page_uri for page_uri, name in MIRRORED.items()}

    def rewrite(match: re.Match) -> str:
        link = match[2]
        target = _target(source, link)
        if target is None:
            return match[0]
        anchor = link[len(link.split("#", 1)[0]):]
        if target in mirrored_sources:
            where = mirrored_sources[target]
        elif target.is_relative_to(docs_dir):
            if uri not in MIRRORED:
                return match[0]  # an ordinary link between pages: MkDocs checks it
            where = target.relative_to(docs_dir).as_posix()
        elif path := _repository_file(target, docs_dir):
            where = f"{SERVED}/{path}"
        else:
            return match[0]  # no such file: MkDocs reports the link
        return match[1] + posixpath.relpath(where, posixpath.dirname(uri) or ".") + anchor + match[3]

    spans = [(m.start(), m.end(), rewrite(m)) for m in _links(markdown)]
    for start, end, text in reversed(spans):
        markdown = markdown[:start] + text + markdown[end:]
    return markdown
