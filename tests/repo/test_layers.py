"""The packages import one way: algos -> fcenv -> checkers -> handlers.

A checker works on plain data (decoded calls, turn records) and never reaches into the env,
so a new checker or decoder can be read, tested and reused without the layers above it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORDER = ["handlers", "checkers", "fcenv", "algos"]  # each may import only those before it


def imported_packages(file: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(file.read_text(), str(file))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(ORDER)


@pytest.mark.parametrize("package", ORDER)
def test_a_package_imports_only_the_layers_below_it(package):
    allowed = set(ORDER[: ORDER.index(package) + 1])
    wrong = {}
    for file in sorted((ROOT / package).rglob("*.py")):
        above = imported_packages(file) - allowed
        if above:
            wrong[str(file.relative_to(ROOT))] = sorted(above)
    assert not wrong, f"{package} imports layers above it: {wrong}"


def test_the_fcenv_command_starts_without_the_training_libraries():
    """`fcenv evaluate` and `fcenv data` pay no import of torch, transformers or peft: the
    training layer's subcommands plug in as parsers only (algos/commands.py)."""
    import subprocess
    import sys

    probe = ("import sys; from fcenv.cli import build_parser; parser = build_parser(); "
             "parser.parse_args(['generate', '--data', 'x', '--out', 'y']); "
             "print(sorted(m for m in ('torch', 'transformers', 'peft') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert loaded.stdout.strip() == "[]"
