"""Qwen2.5-Coder-0.5B-Instruct scored as BFCL scores it, live: the model answers real BFCL
entries through ``fcenv generate --tool_format hermes --include-input-log`` (the command docs/models.md
shows); every prompt is exactly the tokenizer's own
``apply_chat_template`` with the tools BFCL's Qwen FC handler passes (asked of BFCL's code in the
oracle venv), and ``fcenv evaluate --tool_format hermes`` gives BFCL's verdict on every answer
(BFCL's Qwen FC handler parsing and decoding it, BFCL's checker judging it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fcenv.bfcl_sample import write_sample
from fcenv.data import load_tasks

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]
LIVE_SAMPLE = {"simple_python": 3, "simple_java": 2, "multiple": 2, "parallel": 2, "irrelevance": 2,
               "live_simple": 2, "live_multiple": 1, "live_irrelevance": 2}


def fcenv(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "fcenv", *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=timeout, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def bfcl_verdicts(oracle, mode: str, tasks: list, texts: list[str]) -> list[tuple[bool, str | None]]:
    """BFCL's verdicts: its Qwen FC handler and checker (FC mode), or its prompting decoder and
    checker (prompting mode)."""
    op = {"fc": {"op": "fc_single", "family": "hermes"}, "prompting": {"op": "single"}}[mode]
    answers = oracle.run([{**op, "text": text, "category": task.category, "function": task.functions,
                           "ground_truth": task.ground_truth} for task, text in zip(tasks, texts)])
    return [(a["valid"], a["error_type"]) for a in answers]


def our_verdicts(mode: str, data: list[Path], results: list[Path], out: Path) -> list[dict]:
    scoring = ["--tool_format", "hermes"] if mode == "fc" else ["--compat", "bfcl"]
    fcenv("evaluate", *scoring, "--data", *map(str, data), "--results", *map(str, results), "--out", str(out))
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_qwen_answers_from_its_own_template_and_gets_bfcls_verdicts(qwen_coder, bfcl_dir, oracle, tmp_path):
    from transformers import AutoTokenizer

    files = [write_sample(bfcl_dir, category, k, tmp_path / "data") for category, k in LIVE_SAMPLE.items()]
    out = tmp_path / "out"
    fcenv("generate", "--model", str(qwen_coder), "--tool_format", "hermes", "--greedy", "--include-input-log",
          "--max_new_tokens", "160", "--no-progress", "--data", *map(str, files), "--out", str(out), timeout=1800)
    results = [out / f"{f.stem}_result.json" for f in files]
    tokenizer = AutoTokenizer.from_pretrained(qwen_coder)
    lines, tasks = [], []
    for data, result in zip(files, results):
        entries = {e["id"]: e for e in map(json.loads, data.read_text().splitlines())}
        answered = [json.loads(line) for line in result.read_text().splitlines()]
        tools = oracle.run([{"op": "fc_tools", "family": "hermes", "entry": entries[a["id"]]} for a in answered])
        for line, bfcl_tools in zip(answered, tools):
            [given] = line["inference_log"]
            expected = tokenizer.apply_chat_template(entries[line["id"]]["question"][0], tools=bfcl_tools["tools"],
                                                     tokenize=False, add_generation_prompt=True)
            assert given["content"]["formatted_prompt"] == expected, line["id"]
        lines += answered
        by_id = {t.id: t for t in load_tasks(data)}
        tasks += [by_id[line["id"]] for line in answered]
    assert len(lines) == sum(LIVE_SAMPLE.values())
    ours = our_verdicts("fc", files, results, tmp_path / "verdicts.jsonl")
    bfcl = bfcl_verdicts(oracle, "fc", tasks, [line["result"] for line in lines])
    assert [(v["valid"], v["error_type"]) for v in ours] == bfcl
    # The flaw the card shows: the right call, written as a ```json block BFCL's handler does not read.
    assert sum("```json" in line["result"] for line in lines) >= len(lines) // 3
