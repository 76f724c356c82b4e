"""The package works outside the checkout: its wheel, installed (not editable) into a fresh
environment, runs fcenv's commands from another directory on the bundled data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT

ROOT = Path(__file__).resolve().parents[2]
# The installed package's processes run without PYTHONPATH: one naming the checkout (as runs
# from a git worktree set it) would put the checkout back on their path.
OUTSIDE = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A venv holding only the built wheel of this package, the test venv's libraries reachable
    through a path entry (so nothing is downloaded), and none of the checkout."""
    base = tmp_path_factory.mktemp("install")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                            "--wheel-dir", str(base / "dist"), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((base / "dist").glob("fcenv-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "fcenv/bundled/tiny_eval.json" in names and "fcenv/bundled/possible_answer/multi_turn_train.json" in names
    assert not any(name.startswith(("tests/", "harness/", "bench/", "datasets/")) for name in names)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # The test venv's libraries, but not its .pth files (and so not its editable install).
    (site / "libraries.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", "--target",
                           str(site), str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return python


def run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "fcenv", *args], cwd=cwd, capture_output=True, text=True, timeout=900,
                          env=OUTSIDE)


def test_the_wheel_adds_one_top_level_package(installed):
    """Installing fcenv claims one name on sys.path: its trainers, decoders and checkers are
    fcenv.algos, fcenv.handlers and fcenv.checkers, not top-level names another project may hold."""
    site = installed.parents[1] / "lib"
    added = {entry.name for entry in next(site.glob("python*/site-packages")).iterdir()
             if entry.name not in {"libraries.pth", "__pycache__", "bin"}}  # bin: the fcenv script
    assert {name for name in added if not name.endswith(".dist-info")} == {"fcenv"}, added
    probe = ("import importlib.util as u, fcenv.algos.train, fcenv.handlers, fcenv.checkers; "
             "print([name for name in ('algos', 'handlers', 'checkers') if u.find_spec(name)])")
    found = subprocess.run([str(installed), "-c", probe], cwd=installed.parents[1], capture_output=True, text=True,
                           env=OUTSIDE)
    assert found.returncode == 0 and found.stdout.strip() == "[]", found.stderr[-2000:]


def test_the_licence_is_an_spdx_expression():
    """``project.license`` as PEP 639's SPDX string (a TOML table makes setuptools warn on every
    build), with a setuptools that reads it (77 or later) as the build requirement."""
    import re
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["project"]["license"] == "Apache-2.0"
    floor, = (re.fullmatch(r"setuptools>=(\d+).*", req) for req in config["build-system"]["requires"]
              if req.startswith("setuptools"))
    assert floor and int(floor.group(1)) >= 77


def test_the_installed_package_is_not_the_checkout(installed, tmp_path):
    where = subprocess.run([str(installed), "-c", "import fcenv, fcenv.algos as algos; print(fcenv.__file__, algos.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True, env=OUTSIDE).stdout
    assert str(ROOT) not in where and str(installed.parents[1]) in where


def test_train_generate_and_evaluate_from_another_directory(installed, tiny_model, tmp_path):
    trained = run(installed, tmp_path, "train", "--model_name_or_path", str(tiny_model), "--system_prompt",
                  TINY_SYSTEM_PROMPT, "--hide_function_docs", "--dataset_path", "multi_turn_train", "--n_rollout_threads", "4",
                  "--num_env_steps", "8", "--max_new_tokens", "16", "--eval_episodes", "4", "--no-progress")
    assert trained.returncode == 0, trained.stderr[-3000:]
    run_dir = next((tmp_path / "results").glob("default/*/multi_turn_train/TPPO/run1"))
    assert json.loads((run_dir / "args.json").read_text())["resolved"]["eval_path"].endswith(
        "fcenv/bundled/multi_turn_eval.json")
    answered = run(installed, tmp_path, "generate", "--run", str(run_dir), "--data", "multi_turn_eval", "tiny_eval",
                   "--out", "answers", "--max_new_tokens", "16", "--greedy", "--no-progress")
    assert answered.returncode == 0, answered.stderr[-3000:]
    for split in ("multi_turn_eval", "tiny_eval"):
        scored = run(installed, tmp_path, "evaluate", "--data", split, "--results", f"answers/{split}_result.json",
                     "--out", f"{split}_verdicts.jsonl")
        assert scored.returncode == 0, scored.stderr[-3000:]
        assert len((tmp_path / f"{split}_verdicts.jsonl").read_text().splitlines()) == 150


def test_the_data_command_names_its_default_folder(installed, tmp_path):
    shown = run(installed, tmp_path, "data", "bfcl", "--help")
    assert shown.returncode == 0 and "~/.cache/fcenv/bfcl" in shown.stdout


def test_fc_mode_works_from_the_wheel(installed, tiny_model, tmp_path):
    """The family chat templates ship as package data: FC mode renders without the checkout."""
    answered = run(installed, tmp_path, "generate", "--model", str(tiny_model), "--tool_format", "hermes",
                   "--data", "multi_turn_eval", "--out", "fc", "--max_new_tokens", "8", "--greedy", "--no-progress")
    assert answered.returncode == 0, answered.stderr[-3000:]
    scored = run(installed, tmp_path, "evaluate", "--tool_format", "hermes", "--data", "multi_turn_eval",
                 "--results", "fc/multi_turn_eval_result.json", "--out", "fc_verdicts.jsonl")
    assert scored.returncode == 0, scored.stderr[-3000:]
    assert len((tmp_path / "fc_verdicts.jsonl").read_text().splitlines()) == 150
