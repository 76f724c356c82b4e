"""The docs tell the truth about the code: every package's opening names the modules it holds,
the documentation (README.md, BENCHMARKS.md, docs/) names every built-in entry of every registry
(decoders, checkers, tool formats, rewards, estimators, presets, rollout engines, source formats),
the reference page every flag, and BENCHMARKS.md or a page of docs/ every file of bench/results;
README's and BENCHMARKS.md's links lead to files that exist (MkDocs checks the links of docs/)."""

from __future__ import annotations

import argparse
import ast
import fnmatch
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["handlers", "checkers", "fcenv", "fcenv/backends", "fcenv/multi_turn", "fcenv/sources", "algos", "harness",
            "tests/support",
            *sorted(str(p.parent.relative_to(ROOT)) for p in (ROOT / "algos").glob("*/__init__.py"))]


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_opening_names_every_module_it_holds(package):
    folder = ROOT / package
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or ""
    named = set(re.findall(r"``(\w+)``|\b(\w+)/", doc))
    named = {a or b for a, b in named}
    modules = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("__")}
    subpackages = {p.parent.name for p in folder.glob("*/__init__.py")}
    missing = sorted((modules | subpackages) - named)
    assert not missing, f"{package}/__init__.py's docstring does not name {missing}"


DOCUMENTS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").rglob("*.md"))]


def documented_names() -> set[str]:
    """Every name the documentation shows as code (``reward="steps"`` shows ``steps``)."""
    spans = [span for doc in DOCUMENTS for span in re.findall(r"`([^`\n]+)`", doc.read_text())]
    return {word for span in spans for word in re.findall(r"[\w.-]+", span)}


def registries():
    from fcenv.algos.ppo.algorithms import ALGORITHMS
    from fcenv.algos.ppo.estimators import ESTIMATORS
    from fcenv.algos.rollout.engine import ENGINES
    from fcenv.algos.rollout.groups import GROUP_REWARDS
    from fcenv.checkers import available_checkers
    from fcenv.rewards import REWARDS
    from fcenv.sources import SOURCE_FORMATS
    from fcenv.tool_formats import TOOL_FORMATS
    from fcenv.handlers import available_handlers

    return {"decoders": available_handlers(), "checkers": available_checkers(), "tool formats": TOOL_FORMATS.names(),
            "rewards": REWARDS.names() + GROUP_REWARDS.names(), "estimators": ESTIMATORS.names(),
            "algorithms": ALGORITHMS.names(), "rollout engines": ENGINES.names(),
            "source formats": SOURCE_FORMATS.names()}


def test_the_docs_name_every_built_in_entry_of_every_registry():
    pytest.importorskip("torch")
    named = documented_names()
    missing = {kind: [n for n in names if n not in named] for kind, names in registries().items()}
    assert not any(missing.values()), f"the docs do not name these registered entries: {missing}"


def test_the_training_flags_offer_what_the_registries_hold():
    pytest.importorskip("torch")
    from fcenv.algos.config import build_parser

    actions = {a.dest: a for a in build_parser()._actions}
    held = registries()
    assert set(actions["algorithm_name"].choices) == set(held["algorithms"])
    assert set(actions["advantage_estimator"].choices) - {""} == set(held["estimators"])
    assert set(actions["reward"].choices) == set(held["rewards"])
    assert set(actions["tool_format"].choices) - {""} == set(held["tool formats"])


def parsers():
    """Every command's parser: the trainer's and each ``fcenv`` subcommand's, by name."""
    from harness.reference_page import commands

    return commands()


def test_the_reference_tables_are_the_parsers_own():
    """docs/reference.md's flag tables are what ``python -m harness.reference_page`` writes from
    the parsers: a flag added, renamed or given another default or help shows there."""
    pytest.importorskip("torch")
    from harness.reference_page import PAGE, written

    page = PAGE.read_text()
    assert written(page) == page, "docs/reference.md differs from the parsers: run python -m harness.reference_page"


def test_the_reference_names_every_flag():
    """docs/reference.md lists each command's flags; a flag with several spellings (an old one
    kept as an alias) is listed under any of them."""
    pytest.importorskip("torch")
    page = (ROOT / "docs" / "reference.md").read_text()
    shown = set(re.findall(r"`(--?[\w-]+)`", page))
    missing = {}
    for name, parser in parsers().items():
        for action in parser._actions:
            if action.option_strings and not isinstance(action, argparse._HelpAction):
                if not shown & set(action.option_strings):
                    missing.setdefault(name, []).append(action.option_strings[0])
    assert not missing, f"docs/reference.md does not list these flags: {missing}"


_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("name", ["README.md", "BENCHMARKS.md"])
def test_the_links_of_readme_and_benchmarks_lead_to_files(name):
    text = re.sub(r"^```.*?^```$|`[^`\n]*`", "", (ROOT / name).read_text(), flags=re.DOTALL | re.MULTILINE)
    broken = []
    for target in _LINK.findall(text):
        path = target.split("#", 1)[0]
        if path and not re.match(r"^[a-z][a-z0-9+.-]*:", path) and not (ROOT / path).exists():
            broken.append(target)
    assert not broken, f"{name} links to files that do not exist: {broken}"


def test_every_bench_result_is_named_where_its_figure_is_written():
    """A file of bench/results is named (its path, its name or its stem; a pattern with ``*`` or
    ``<...>`` names every file it matches; a folder named with its ``/`` names what it holds) in
    BENCHMARKS.md or a page of docs/, or in bench/run_all, which writes it."""
    texts = [doc.read_text() for doc in DOCUMENTS] + [(ROOT / "bench" / "run_all").read_text()]
    words = {w for text in texts for w in re.findall(r"[\w.*<>/-]+", text)}
    patterns = {re.sub(r"^.*bench/results/", "", re.sub(r"<[^>]*>", "*", w)) for w in words}
    # a pattern names a file by more than its suffix: not ``**`` (bold), ``*`` or ``<name>.json``
    patterns = {p for p in patterns if "*" not in p or len(re.sub(r"\W", "", p.split(".")[0])) >= 3}
    results = ROOT / "bench" / "results"
    unnamed = []
    for file in sorted(p for p in results.rglob("*") if p.is_file()):
        relative = file.relative_to(results).as_posix()
        candidates = {relative, file.name, file.stem}
        folders = {relative.rsplit("/", i)[0] + "/" for i in range(1, relative.count("/") + 1)}
        if not any(fnmatch.fnmatchcase(c, pattern) for c in candidates | folders for pattern in patterns):
            unnamed.append(relative)
    assert not unnamed, f"bench/results files no page names: {unnamed}"


def _cells(row: str) -> int:
    """The cells of a Markdown table row: its pipes, less those in code spans or escaped."""
    return re.sub(r"`[^`\n]*`|\\\|", "", row).strip().strip("|").count("|") + 1


def test_every_table_row_has_its_header_s_columns():
    """A row with more cells than its header shows its extra figures nowhere (the site drops
    them): a figure pasted into the wrong table."""
    wrong = []
    for doc in DOCUMENTS:
        lines = doc.read_text().split("\n")
        for i in range(1, len(lines)):
            if not re.fullmatch(r"\|[-:| ]+\|", lines[i].strip()) or not lines[i - 1].startswith("|"):
                continue
            width = _cells(lines[i - 1])
            row = i + 1
            while row < len(lines) and lines[row].startswith("|"):
                if _cells(lines[row]) != width:
                    wrong.append(f"{doc.relative_to(ROOT)}:{row + 1}: {_cells(lines[row])} cells, the header {width}")
                row += 1
    assert not wrong, "\n".join(wrong)
