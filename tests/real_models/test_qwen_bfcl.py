"""Qwen2.5-Coder-0.5B-Instruct scored as BFCL scores it.

Live: the model answers real BFCL entries through ``fcenv generate --tool_format hermes
--include-input-log`` (the command README shows); every prompt is exactly the tokenizer's own
``apply_chat_template`` with the tools BFCL's Qwen FC handler passes (asked of BFCL's code in the
oracle venv), and ``fcenv evaluate --tool_format hermes`` gives BFCL's verdict on every answer
(BFCL's Qwen FC handler parsing and decoding it, BFCL's checker judging it).

Recorded: every answer of the model's BFCL card (bench/results/real_card, BENCHMARKS.md), in FC
and prompting mode, gets the same verdict from ``fcenv evaluate`` as from BFCL's handler and
checker, and those verdicts add up to the card's figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bench.bfcl_sample import write_sample
from fcenv.data import load_tasks
from fcenv.prompts import hinted_functions

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]
CARD = ROOT / "bench" / "results" / "real_card"
CARD_REPORT = ROOT / "bench" / "results" / "real_card_qwen2.5_coder_0.5b.json"
LIVE_SAMPLE = {"simple_python": 3, "simple_java": 2, "multiple": 2, "parallel": 2, "irrelevance": 2,
               "live_simple": 2, "live_multiple": 1, "live_irrelevance": 2}


def fcenv(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "fcenv", *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=timeout)
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


def card_files(mode: str, bfcl_dir: Path, tmp_path: Path) -> tuple[list[Path], list[Path]]:
    """The card's answers of ``mode`` and question files holding exactly the entries answered."""
    data, results = [], []
    for result in sorted((CARD / mode).glob("BFCL_v4_*_result.json")):
        name = result.name.replace("_result.json", ".json")
        ids = {json.loads(line)["id"] for line in result.read_text().splitlines()}
        folder = tmp_path / mode
        (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
        for source, target in ((bfcl_dir / name, folder / name),
                               (bfcl_dir / "possible_answer" / name, folder / "possible_answer" / name)):
            if source.exists():
                kept = [line for line in source.read_text().splitlines() if line.strip()
                        and json.loads(line)["id"] in ids]
                target.write_text("".join(line + "\n" for line in kept))
        data.append(folder / name)
        results.append(result)
    return data, results


@pytest.mark.parametrize("mode", ["fc", "prompting"])
def test_every_answer_on_the_card_gets_bfcls_verdict(bfcl_dir, oracle, tmp_path, mode):
    report = json.loads(CARD_REPORT.read_text())["modes"][mode]["categories"]
    data, results = card_files(mode, bfcl_dir, tmp_path)
    single = [(d, r) for d, r in zip(data, results) if "multi_turn" not in d.name]
    assert len(single) >= 13
    ours = our_verdicts(mode, [d for d, _ in single], [r for _, r in single], tmp_path / f"{mode}.jsonl")
    tasks, texts = [], []
    for d, r in single:
        by_id = {t.id: t for t in load_tasks(d)}
        for line in map(json.loads, r.read_text().splitlines()):
            tasks.append(by_id[line["id"]])
            texts.append(line["result"])
    bfcl = bfcl_verdicts(oracle, mode, tasks, texts)
    mismatches = [(t.id, text[:200], b, (v["valid"], v["error_type"])) for t, text, b, v in zip(tasks, texts, bfcl, ours)
                  if b != (v["valid"], v["error_type"])]
    assert not mismatches, f"{len(mismatches)} of {len(tasks)} disagree, e.g. {mismatches[:3]}"
    # The card's figures are these verdicts.
    valid = Counter(t.category for t, (ok, _) in zip(tasks, bfcl) if ok)
    entries = Counter(t.category for t in tasks)
    for category, n in entries.items():
        assert report[category]["entries"] == n and report[category]["valid"] == valid[category], category
    # Multi-turn answers, where the card has them: BFCL's inference loop replayed on the same texts.
    multi = [(d, r) for d, r in zip(data, results) if "multi_turn" in d.name]
    for d, r in multi:
        by_id = {t.id: t for t in load_tasks(d)}
        lines = [json.loads(line) for line in r.read_text().splitlines()]
        verdicts = our_verdicts(mode, [d], [r], tmp_path / f"{mode}_{d.stem}.jsonl")
        requests = []
        for line in lines:
            task = by_id[line["id"]]
            entry = {"id": task.id, "question": task.question, "function": hinted_functions(task.functions, task.language),
                     "initial_config": task.initial_config, "involved_classes": task.involved_classes,
                     "missed_function": {str(k): v for k, v in task.missed_functions.items()}}
            if mode == "fc":
                requests.append({"op": "fc_multi", "family": "hermes", "entry": entry, "turns": line["result"],
                                 "ground_truth": task.ground_truth})
            else:
                requests.append({"op": "multi", "entry": entry, "turns": line["result"], "ground_truth": task.ground_truth})
        answers = oracle.run(requests)
        assert [(v["valid"], v["error_type"]) for v in verdicts] == [(a["valid"], a["error_type"]) for a in answers]
        category = d.stem.removeprefix("BFCL_v4_")
        assert report[category]["valid"] == sum(a["valid"] for a in answers)
