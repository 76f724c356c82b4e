"""Every file a flag of `fcenv train` (train_fctncalling.py), `fcenv generate`
and `fcenv process-rewards` names is read and checked before anything heavy: a bad file is
refused, naming it, before a model loads or the tiny model builds.

The model given is a folder whose config.json no library can load, and the tiny model's cache
an empty folder: a command that reached either would fail there, or start a build, instead of
naming the bad file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def unloadable_model(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    (folder / "tokenizer.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"")
    return folder


def bad_question_file(folder: Path) -> Path:
    (folder / "possible_answer").mkdir(parents=True)
    (folder / "mine.json").write_text('{"id": "simple_python_0", "question": 3}\n')
    return folder / "mine.json"


def assert_refused(done: subprocess.CompletedProcess, status: int, *expected: str) -> None:
    assert done.returncode == status, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "no-such-architecture" not in done.stderr, done.stderr[-3000:]
    for text in expected:
        assert text in done.stderr, (text, done.stderr[-3000:])


def test_file_valued_flags_are_checked_before_any_model_loads(tmp_path):
    model = unloadable_model(tmp_path / "model")
    cache = tmp_path / "cache"
    cache.mkdir()
    questions = bad_question_file(tmp_path / "data")
    values = tmp_path / "values.jsonl"
    values.write_text('{"messages": [{"role": "user", "content": "Hi."}], "steps": [{"message_index": 1, "value": 0.5}]}\n'
                      '{"messages": "x"}\n')
    results = tmp_path / "results.jsonl"
    results.write_text('{"id": "simple_python_75", "result": "[f()]"}\n{"id": "nope", "result": "x"}\n')  # tiny_train's first id
    train = ["train_fctncalling.py", "--results_dir", str(tmp_path / "runs"), "--no-progress"]

    # training: the values file (LPR), with a model that cannot load and with the tiny model uncached
    for model_flags in (["--model_name_or_path", str(model)], ["--cache_dir", str(cache)]):
        assert_refused(run(*train, *model_flags, "--critic_init_values", str(values)), 2,
                       f"--critic_init_values {values}, line 2: not a trajectory of `fcenv process-rewards`")
        # the question files, training and held-out
        assert_refused(run(*train, *model_flags, "--eval_dataset_path", str(questions)), 2,
                       f"{questions}, line 1, entry 'simple_python_0', field 'question'")
    assert_refused(run(*train, "--model_name_or_path", str(tmp_path / "nowhere")), 2,
                   f"--model_name_or_path {tmp_path / 'nowhere'}: no such folder")
    assert_refused(run(*train, "--cache_dir", str(cache), "--resume", str(tmp_path)), 2,
                   f"checkpoint {tmp_path}: no complete checkpoint in this run folder")
    assert not (tmp_path / "runs").exists()

    # generate: the question files, the adapter
    generate = ["-m", "fcenv", "generate", "--out", str(tmp_path / "answers"), "--no-progress"]
    assert_refused(run(*generate, "--model", str(model), "--data", "tiny_eval", str(questions)), 2,
                   f"{questions}, line 1, entry 'simple_python_0', field 'question'")
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text("{not json")
    assert_refused(run(*generate, "--model", str(model), "--adapter", str(tmp_path / "adapter"), "--data", "tiny_eval"),
                   2, f"--adapter {tmp_path / 'adapter'}: no readable adapter_config.json")
    assert_refused(run(*generate, "--model", str(tmp_path / "nowhere"), "--data", "tiny_eval"), 2,
                   f"--model_name_or_path {tmp_path / 'nowhere'}: no such folder")

    # process-rewards: the result file to take trajectories from, the question file
    rewards = ["-m", "fcenv", "process-rewards", "--out", str(tmp_path / "lpr"), "--model_name_or_path", str(model)]
    assert_refused(run(*rewards, "--from_results", str(results)), 2,
                   f"{results}, line 2, entry 'nope', field 'id': no entry with this id")
    assert_refused(run(*rewards, "--dataset_path", str(questions)), 2,
                   f"{questions}, line 1, entry 'simple_python_0', field 'question'")
    assert list(cache.iterdir()) == [] and not (tmp_path / "answers").exists() and not (tmp_path / "lpr").exists()


def test_critic_init_values_the_chat_template_would_choke_on_are_refused_before_any_model_loads(tmp_path):
    """What the file holds is rendered by the model's chat template only once
    the model has loaded; a message it cannot render, or an empty prefix, is named before that,
    with the line, as any other bad line is."""
    model = unloadable_model(tmp_path / "model")
    cache = tmp_path / "cache"
    cache.mkdir()
    good = {"role": "user", "content": "Add 2 and 3."}
    rows = {
        "content": ({"messages": [{"role": "user", "content": 5}], "steps": [{"message_index": 1, "value": 0.5}]},
                    "messages[0]'s content is int, not text"),
        "role": ({"messages": [{"content": "Hi."}], "steps": [{"message_index": 1, "value": 0.5}]},
                 "messages[0] has the role None"),
        "empty prefix": ({"messages": [good], "steps": [{"message_index": 0, "value": 0.5}]},
                         "a message_index of 0 (an integer from 1 to the 1 messages)"),
        "index as text": ({"messages": [good], "steps": [{"message_index": "1", "value": 0.5}]},
                          "a message_index of '1'"),
    }
    train = ["train_fctncalling.py", "--results_dir", str(tmp_path / "runs"), "--no-progress"]
    for case, (row, words) in rows.items():
        values = tmp_path / f"{case.replace(' ', '_')}.jsonl"
        values.write_text(json.dumps({"messages": [good], "steps": [{"message_index": 1, "value": 1.0}]}) + "\n"
                          + json.dumps(row) + "\n")
        for model_flags in (["--model_name_or_path", str(model)], ["--cache_dir", str(cache)]):
            assert_refused(run(*train, *model_flags, "--critic_init_values", str(values)), 2,
                           f"--critic_init_values {values}, line 2: not a trajectory of `fcenv process-rewards`", words)
    assert not any(cache.iterdir()) and not (tmp_path / "runs").exists()
