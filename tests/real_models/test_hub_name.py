"""A model given by its Hugging Face hub name, as most users give one (``--model_name_or_path
HuggingFaceTB/SmolLM2-135M-Instruct``), loaded offline from the hub's cache.

The hub is out of reach here, so its cache is laid out by hand as huggingface_hub writes it
(``models--Org--Name/snapshots/<commit>/`` with ``refs/main`` naming the commit), its files
links to the SmolLM2 folder `make models` fetched, and the commands run with huggingface_hub's
own variables (``HF_HUB_OFFLINE``, ``HF_HOME``, ``HF_HUB_CACHE``) set for them alone. The name
must load and train the model, not be refused as a missing folder (by fcenv card either), and the
run folder and score card are named after the model (not the snapshot's commit), the answers'
record as the user gave it; a name the cache does not hold is one line naming the argument."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fcenv.algos.card import _target
from fcenv.bundled import BUNDLED
from fcenv.result_record import RECORD_KEY

ROOT = Path(__file__).resolve().parents[2]
HUB_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def hub(smollm2, tmp_path_factory) -> tuple[dict[str, str], Path]:
    """The environment of a machine whose hub cache holds SmolLM2 under its hub name, offline;
    and the snapshot folder the name resolves to."""
    home = tmp_path_factory.mktemp("hf-home")
    repo = home / "hub" / ("models--" + HUB_NAME.replace("/", "--"))
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    for file in smollm2.iterdir():
        if file.name != "fcenv_source.json":  # fcenv's record of the fetch, no file of the hub's
            (snapshot / file.name).symlink_to(file)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(home),
           "HF_HUB_CACHE": str(home / "hub")}
    env.pop("HF_TOKEN", None)
    return env, snapshot


def run(env: dict[str, str], *argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=900,
                          check=False)


def entries(split: str, count: int, folder: Path) -> Path:
    """The first ``count`` entries of a bundled split, with their answers beside them."""
    source = BUNDLED[split]
    data = folder / f"{split}.json"
    (folder / "possible_answer").mkdir(parents=True)
    data.write_text("".join(source.read_text().splitlines(keepends=True)[:count]))
    answers = (source.parent / "possible_answer" / source.name).read_text().splitlines(keepends=True)[:count]
    (folder / "possible_answer" / data.name).write_text("".join(answers))
    return data


def test_generate_loads_the_model_by_its_hub_name(hub, tmp_path):
    env, _ = hub
    data = entries("tiny_eval", 2, tmp_path / "data")
    out = tmp_path / "out"
    # From a folder of its own: the name is no path there, nor anywhere else.
    done = run(env, "-m", "fcenv", "generate", "--model_name_or_path", HUB_NAME, "--dataset_path", str(data),
               "--out", str(out), "--greedy", "--max_new_tokens", "4", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (out / f"{data.stem}_result.json").read_text().splitlines()]
    assert [line["id"] for line in lines] == ["simple_python_0", "simple_python_1"]
    assert all(isinstance(line["result"], str) for line in lines)
    # The record names the model as the user gave it.
    assert {line[RECORD_KEY]["model"] for line in lines} == {HUB_NAME}


def test_a_training_run_of_a_hub_name_is_named_after_the_model(hub, tmp_path):
    env, snapshot = hub
    data = entries("tiny_train", 1, tmp_path / "data")
    results = tmp_path / "results"
    done = run(env, str(ROOT / "train_fctncalling.py"), "--model_name_or_path", HUB_NAME, "--dataset_path", str(data),
               "--eval_dataset_path", str(data), "--results_dir", str(results), "--experiment_name", "hub",
               "--algorithm_name", "GRPO", "--group_size", "2", "--n_rollout_threads", "2", "--num_env_steps", "2",
               "--max_new_tokens", "4", "--lora_r", "4", "--ppo_epoch", "1", "--num_mini_batch", "1",
               "--save_interval", "1", "--eval_interval", "0", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # results/<experiment>/<model>/<dataset>/<algorithm>/run1: the model's name, not its commit.
    [args_file] = results.glob("*/*/*/*/run1/args.json")
    assert args_file.relative_to(results).parts == ("hub", "SmolLM2-135M-Instruct", "tiny_train", "GRPO", "run1",
                                                     "args.json")
    args = json.loads(args_file.read_text())
    assert args["model_name_or_path"] == HUB_NAME
    # What the name resolved to: the snapshot it loaded (the commit pinned), as a local folder.
    assert args["resolved"]["base_model"] == str(snapshot.resolve())
    assert (args_file.parent / "checkpoints" / "iter_000001" / "actor" / "adapter_model.safetensors").is_file()
    # fcenv card names the run's card after the model too (the run alone says which: no hub here).
    card = _target(argparse.Namespace(target=str(args_file.parent), checkpoint=""))
    assert card.card_name == "SmolLM2-135M-Instruct:run1/iter_000001"


CARD_PROBE = """
import argparse, json
from fcenv.algos.card import _target
from fcenv.arguments import UsageError
found = _target(argparse.Namespace(target="HuggingFaceTB/SmolLM2-135M-Instruct", checkpoint=""))
try:
    _target(argparse.Namespace(target="HuggingFaceTB/NoSuchModel", checkpoint=""))
except UsageError as exc:
    refused = str(exc)
print(json.dumps({"path": found.path, "out": str(found.default_out), "name": found.card_name, "refused": refused}))
"""


def test_fcenv_card_takes_the_name_and_a_name_the_cache_lacks_is_one_line(hub, tmp_path):
    env, _ = hub
    done = run(env, "-c", CARD_PROBE, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    # Answered by the name (generate's --model_name_or_path), the card and its folder named after the model.
    assert probe["path"] == HUB_NAME and probe["out"] == "card/SmolLM2-135M-Instruct"
    assert probe["name"] == "SmolLM2-135M-Instruct"
    # The check every command shares (fcenv.algos.input_files.check_model_folder): one line, the reason
    # huggingface_hub gives.
    refused = probe["refused"]
    assert refused.startswith("RUN_OR_MODEL HuggingFaceTB/NoSuchModel: no such folder, and no model of that name "
                              "from the Hugging Face hub (") and "\n" not in refused, refused
