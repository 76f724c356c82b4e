"""Small training sets of BFCL v4's agentic categories, cut from BFCL's files for a CPU run.

BFCL's data is not committed: the slices are written from the files in ``~/.cache/fcenv/bfcl``
(the Makefile's ``data`` target), where a test or a benchmark needs them.

- ``memory/memory_<scenario>.json``: the first questions of one memory scenario (notetaker by
  default, the one with the shortest prerequisite conversations), with their answers in
  ``possible_answer/``; fcenv makes each into its three memory categories and reads the
  scenario's prerequisite conversations from BFCL's folder.
- ``web_search/web_search_slice.json``: the first web-search questions, with their answers;
  each is played in BFCL's two categories (with and without snippets).
- ``corpus/``: a local web for those questions, one Markdown page per hop of each answer's
  ``source`` (BFCL records the sub-question, its answer and where it was found), so that
  the questions can be answered by searching and reading it (``--web_search corpus/``).

    python -m harness.agentic_slices OUT [--memory 4] [--web 4] [--scenario notetaker] [--start 0]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

MEMORY_FILE = "BFCL_v4_memory.json"
WEB_SEARCH_FILE = "BFCL_v4_web_search.json"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _link_folders(bfcl_dir: Path, out: Path) -> None:
    """BFCL's function docs and prerequisite conversations beside the slice, where fcenv's
    loader looks first (so that the slice reads ``bfcl_dir``'s, wherever that is)."""
    out.mkdir(parents=True, exist_ok=True)
    for folder in ("multi_turn_func_doc", "memory_prereq_conversation"):
        if not (out / folder).exists():
            (out / folder).symlink_to((bfcl_dir / folder).resolve(), target_is_directory=True)


def _slice(bfcl_dir: Path, name: str, keep) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    questions = [q for q in _lines(bfcl_dir / name) if keep(q)]
    answers = {a["id"]: a for a in _lines(bfcl_dir / "possible_answer" / name)}
    return questions, [answers[q["id"]] for q in questions]


def memory_slice(bfcl_dir: Path, out: Path, count: int = 4, scenario: str = "notetaker", start: int = 0) -> Path:
    """``count`` questions of ``scenario`` from its ``start``-th on, with their answers; returns
    the question file."""
    questions, answers = _slice(bfcl_dir, MEMORY_FILE, lambda q: q.get("scenario") == scenario)
    if not questions:
        raise ValueError(f"{bfcl_dir / MEMORY_FILE} holds no question of the scenario {scenario!r}")
    name = f"memory_{scenario}.json"
    _link_folders(bfcl_dir, out)
    _write(out / "possible_answer" / name, answers[start:start + count])
    return _write(out / name, questions[start:start + count])


def web_search_slice(bfcl_dir: Path, out: Path, count: int = 4, start: int = 0) -> Path:
    """``count`` web-search questions from the ``start``-th on, with their answers; returns the
    question file."""
    questions, answers = _slice(bfcl_dir, WEB_SEARCH_FILE, lambda q: True)
    _link_folders(bfcl_dir, out)
    _write(out / "possible_answer" / "web_search_slice.json", answers[start:start + count])
    return _write(out / "web_search_slice.json", questions[start:start + count])


def _page_name(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "page"


def answer_corpus(web_search_file: Path, out: Path) -> Path:
    """A folder of Markdown pages, one per hop of each answer's recorded source: its
    sub-question as the title, then the hop's answer in a sentence. Returns the folder."""
    answers = _lines(web_search_file.parent / "possible_answer" / web_search_file.name)
    out.mkdir(parents=True, exist_ok=True)
    for answer in answers:
        for number, hop in enumerate(answer.get("source") or []):
            question, found = str(hop.get("subquestion", "")).strip(), str(hop.get("answer", "")).strip()
            if not question or not found:
                continue
            page = out / f"{answer['id']}-{number}-{_page_name(question)}.md"
            page.write_text(f"# {question}\n\n{question.rstrip('?')}? The answer is {found}.\n", encoding="utf-8")
    return out


def write_slices(bfcl_dir: Path, out: Path, memory: int = 4, web: int = 4, scenario: str = "notetaker",
                 start: int = 0) -> dict[str, Path]:
    """Both slices from the ``start``-th question of each file on, and the corpus of the web one."""
    web_file = web_search_slice(bfcl_dir, out / "web_search", web, start)
    return {"memory": memory_slice(bfcl_dir, out / "memory", memory, scenario, start), "web_search": web_file,
            "corpus": answer_corpus(web_file, out / "corpus")}


def main(argv: list[str] | None = None) -> int:
    from fcenv.bfcl_data import DEFAULT_DIR

    parser = argparse.ArgumentParser(prog="python -m harness.agentic_slices", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the slices into")
    parser.add_argument("--bfcl_dir", type=Path, default=DEFAULT_DIR, help="BFCL's data folder")
    parser.add_argument("--memory", type=int, default=4, help="memory questions (each makes three entries)")
    parser.add_argument("--web", type=int, default=4, help="web-search questions (each makes two entries)")
    parser.add_argument("--scenario", default="notetaker", help="the memory scenario the questions come from")
    parser.add_argument("--start", type=int, default=0,
                        help="skip this many questions of each file (a held-out slice after a training one)")
    args = parser.parse_args(argv)
    for kind, path in write_slices(args.bfcl_dir, args.out, args.memory, args.web, args.scenario, args.start).items():
        print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
