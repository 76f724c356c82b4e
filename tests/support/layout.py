"""What the installed package is made of, read from the checkout.

`pip install` puts one package on sys.path, ``fcenv``. Three of its subpackages live in folders at
the repository's top (``algos/``, ``handlers/``, ``checkers/``) and reach the package through
links (``fcenv/algos -> ../algos``), so the checkout, a worktree and the wheel import them by the
same names: ``fcenv.algos``, ``fcenv.handlers``, ``fcenv.checkers``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# each subpackage with its folder at the top, in the order the layers may import (lowest first)
LINKED = {"fcenv.handlers": "handlers", "fcenv.checkers": "checkers", "fcenv.algos": "algos"}
LAYERS = ["fcenv.handlers", "fcenv.checkers", "fcenv", "fcenv.algos"]  # each may import only those before it
BARE = {folder for folder in LINKED.values()}  # importable from the checkout's root, never to be imported


def _modules(folder: Path, prefix: str) -> dict[str, Path]:
    files = {}
    for file in sorted(folder.rglob("*.py")):  # rglob does not follow the links: each file once
        parts = [prefix, *file.relative_to(folder).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = file
    return files


def package_modules() -> dict[str, Path]:
    """Every module of the installed package, by its dotted name, with its file in the checkout."""
    files = _modules(ROOT / "fcenv", "fcenv")
    for package, folder in LINKED.items():
        files.update(_modules(ROOT / folder, package))
    return files


def layer_of(module: str) -> str:
    """The layer a module of the package belongs to (the longest matching prefix in LAYERS)."""
    return max((layer for layer in LAYERS if module == layer or module.startswith(layer + ".")), key=len)
