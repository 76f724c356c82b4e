"""The docs tell the truth about the code: every package's opening names the modules it holds,
and README names every built-in entry of every registry (decoders, checkers, tool formats,
rewards, estimators, presets, rollout engines, source formats)."""

from __future__ import annotations

import ast
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


def readme_names() -> set[str]:
    """Every name README shows as code (``reward="steps"`` shows ``steps``)."""
    spans = re.findall(r"`([^`\n]+)`", (ROOT / "README.md").read_text())
    return {word for span in spans for word in re.findall(r"[\w.-]+", span)}


def registries():
    from algos.ppo.algorithms import ALGORITHMS
    from algos.ppo.estimators import ESTIMATORS
    from algos.rollout.engine import ENGINES
    from algos.rollout.groups import GROUP_REWARDS
    from checkers import available_checkers
    from fcenv.rewards import REWARDS
    from fcenv.sources import SOURCE_FORMATS
    from fcenv.tool_formats import TOOL_FORMATS
    from handlers import available_handlers

    return {"decoders": available_handlers(), "checkers": available_checkers(), "tool formats": TOOL_FORMATS.names(),
            "rewards": REWARDS.names() + GROUP_REWARDS.names(), "estimators": ESTIMATORS.names(),
            "algorithms": ALGORITHMS.names(), "rollout engines": ENGINES.names(),
            "source formats": SOURCE_FORMATS.names()}


def test_readme_names_every_built_in_entry_of_every_registry():
    pytest.importorskip("torch")
    named = readme_names()
    missing = {kind: [n for n in names if n not in named] for kind, names in registries().items()}
    assert not any(missing.values()), f"README does not name these registered entries: {missing}"


def test_the_training_flags_offer_what_the_registries_hold():
    pytest.importorskip("torch")
    from algos.config import build_parser

    actions = {a.dest: a for a in build_parser()._actions}
    held = registries()
    assert set(actions["algorithm_name"].choices) == set(held["algorithms"])
    assert set(actions["advantage_estimator"].choices) - {""} == set(held["estimators"])
    assert set(actions["reward"].choices) == set(held["rewards"])
    assert set(actions["tool_format"].choices) - {""} == set(held["tool formats"])
