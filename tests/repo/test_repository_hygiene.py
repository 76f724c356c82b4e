"""The repository must work on a machine other than the one it was written on.

A tracked symlink to a path outside the checkout, or an absolute path of a developer's machine
in source, config or the Makefile, works where it was written and breaks everywhere else (a
committed `.oracle-venv -> /work/oracle-venv` once made `make test` fail on every fresh clone
while CI, on the machine holding that path, passed).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Files whose lines are read by a program: source, configuration, build and CI scripts.
# Recorded benchmark logs (bench/results) quote interpreter paths of the run that made them.
CHECKED_SUFFIXES = {".py", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".sh", ".json"}
CHECKED_NAMES = {"Makefile", "run", "train_fctncalling.py"}
SKIPPED_PREFIXES = ("bench/results/", "datasets/")

# Home and workspace folders of developers' machines. Built from pieces so this file does not
# match itself.
MACHINE_PATH = re.compile(
    r"(?<![\w.])/(?:" + "|".join(["ho" + "me/[^/\\s'\"]+", "Us" + "ers/", "ro" + "ot/", "wo" + "rk/", "opt/pypi"]) + r")"
    r"|\b[A-Z]:\\\\?Us" + r"ers\\"
)


def tracked() -> list[tuple[str, str]]:
    """(mode, path) of every file git tracks in this checkout."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-s", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    rows = []
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            rows.append((meta.split()[0], path))
    return rows


def test_no_tracked_symlink_leaves_the_repository():
    escaping = []
    for mode, path in tracked():
        if mode != "120000":
            continue
        target = os.readlink(ROOT / path) if (ROOT / path).is_symlink() else None
        if target is None:
            blob = subprocess.run(["git", "cat-file", "-p", f":{path}"], cwd=ROOT, capture_output=True, check=True)
            target = blob.stdout.decode()
        resolved = os.path.normpath(os.path.join(ROOT, os.path.dirname(path), target))
        if os.path.isabs(target) or not (resolved == str(ROOT) or resolved.startswith(str(ROOT) + os.sep)):
            escaping.append(f"{path} -> {target}")
    assert not escaping, "tracked symlinks pointing outside the repository: " + ", ".join(escaping)


def test_venvs_are_ignored_as_links_too():
    """`.venv/` (trailing slash) ignores only a directory; a link of that name would be added."""
    for name in (".venv", ".oracle-venv", ".vllm-venv", ".docs-venv", "datasets/bfcl"):
        proc = subprocess.run(["git", "check-ignore", "--no-index", "-q", name], cwd=ROOT)
        assert proc.returncode == 0, f"{name} is not ignored when it is a link (.gitignore needs it without a trailing slash)"


def test_no_absolute_paths_of_a_developer_machine():
    found = []
    for _, path in tracked():
        if path.startswith(SKIPPED_PREFIXES) or path == "tests/repo/test_repository_hygiene.py":
            continue
        name = Path(path).name
        if Path(path).suffix not in CHECKED_SUFFIXES and name not in CHECKED_NAMES:
            continue
        file = ROOT / path
        if file.is_symlink() or not file.is_file():
            continue
        for number, line in enumerate(file.read_text("utf-8", "replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                found.append(f"{path}:{number}: {line.strip()[:120]}")
    assert not found, "absolute paths of a developer's machine:\n" + "\n".join(found)


def test_the_pattern_catches_what_it_is_for():
    for line in ["ORACLE = /" + "work/oracle-venv", "p = '/" + "home/alice/venv/bin/python'",
                 "C:\\" + "Users\\bob\\x", "--find-links /" + "root/wheels"]:
        assert MACHINE_PATH.search(line), line
    for line in ["url = 'https://example.com/home/page'", "ROOT / '.oracle-venv'", "tmp = '/tmp/x'",
                 "datasets/tiny/work/x.json"]:
        assert not MACHINE_PATH.search(line), line


# A numbered mention of an issue ("Iss" "ue 9"): the project's tracker is not part of the repository, so such a
# mention points a reader to nothing they can open. Built from pieces so this file does not match.
ISSUE_MENTION = re.compile(r"\b" + "iss" + r"ues? #?\d+", re.IGNORECASE)
PROSE_SUFFIXES = CHECKED_SUFFIXES | {".md", ""}


def test_no_mention_of_an_issue_number():
    """Docs, comments and docstrings link the doc page or the test instead."""
    found = []
    for _, path in tracked():
        if path.startswith(SKIPPED_PREFIXES) or Path(path).suffix not in PROSE_SUFFIXES:
            continue
        file = ROOT / path
        if file.is_symlink() or not file.is_file():
            continue
        for number, line in enumerate(file.read_text("utf-8", "replace").splitlines(), 1):
            if ISSUE_MENTION.search(line):
                found.append(f"{path}:{number}: {line.strip()[:120]}")
    assert not found, "mentions of an issue number (link the doc page or the test instead):\n" + "\n".join(found)


def test_the_issue_pattern_catches_what_it_is_for():
    for line in ["*" + "Iss" + "ue 9.*", "(" + "iss" + "ue 36, part 3)", "Iss" + "ues 5 and 35", "iss" + "ue #12"]:
        assert ISSUE_MENTION.search(line), line
    for line in ["an issue with the prompt", "tissue 5", "issued 3 calls"]:
        assert not ISSUE_MENTION.search(line), line
