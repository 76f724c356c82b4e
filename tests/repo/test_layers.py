"""The layers import one way: fcenv.algos -> fcenv -> fcenv.checkers -> fcenv.handlers.

A checker works on plain data (decoded calls, turn records) and never reaches into the env,
so a new checker or decoder can be read, tested and reused without the layers above it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.layout import BARE, LAYERS, ROOT, layer_of, package_modules


def imported_modules(file: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(file.read_text(), str(file))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_below_it(layer):
    allowed = set(LAYERS[: LAYERS.index(layer) + 1])
    wrong = {}
    for module, file in package_modules().items():
        if layer_of(module) != layer:
            continue
        above = {layer_of(name) for name in imported_modules(file) if name.split(".")[0] == "fcenv"} - allowed
        if above:
            wrong[str(file.relative_to(ROOT))] = sorted(above)
    assert not wrong, f"{layer} imports layers above it: {wrong}"


def test_nothing_imports_the_linked_folders_by_their_bare_names():
    """From the checkout's root ``import algos`` still works (the folder is there), and would load
    a second copy of every module beside ``fcenv.algos``'s, with registries of its own."""
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    wrong = {}
    for name in tracked.stdout.split():
        file = ROOT / name
        if file.is_symlink() or not file.is_file():
            continue
        bare = sorted(module for module in imported_modules(file) if module.split(".")[0] in BARE)
        if bare:
            wrong[name] = bare
    assert not wrong, f"import these through fcenv (fcenv.algos, ...): {wrong}"


def test_the_fcenv_command_starts_without_the_training_libraries():
    """`fcenv evaluate` and `fcenv data` pay no import of torch, transformers or peft: the
    training layer's subcommands plug in as parsers only (algos/commands.py)."""
    probe = ("import sys; from fcenv.cli import build_parser; parser = build_parser(); "
             "parser.parse_args(['generate', '--data', 'x', '--out', 'y']); "
             "print(sorted(m for m in ('torch', 'transformers', 'peft') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert loaded.stdout.strip() == "[]"
