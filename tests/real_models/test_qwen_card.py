"""Every answer of Qwen2.5-Coder-0.5B-Instruct's BFCL card (bench/results/real_card, BENCHMARKS.md)
gets the same verdict from ``fcenv evaluate`` as from BFCL's own code: in FC mode BFCL's Qwen FC
handler and checker, in prompting mode BFCL's prompting decoder and checker, on multi-turn
entries BFCL's inference loop replayed on the same texts and its multi-turn checker, on memory
entries BFCL's agentic runner; and those verdicts add up to the card's figures."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from fcenv.agentic.loading import memory_file_id
from fcenv.data import load_tasks
from fcenv.prompts import hinted_functions
from tests.real_models.test_qwen_bfcl import bfcl_verdicts, fcenv, our_verdicts

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]
CARD = ROOT / "bench" / "results" / "real_card"
REPORT = json.loads((ROOT / "bench" / "results" / "real_card_qwen2.5_coder_0.5b.json").read_text())


def card_files(mode: str, bfcl_dir: Path, tmp_path: Path) -> tuple[list[Path], list[Path]]:
    """The card's answers of ``mode`` and question files holding exactly the entries answered."""
    data, results = [], []
    for result in sorted((CARD / mode).glob("BFCL_v4_*_result.json")):
        name = result.name.replace("_result.json", ".json")
        ids = {memory_file_id(json.loads(line)["id"]) for line in result.read_text().splitlines()}
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


def is_single_turn(data: Path) -> bool:
    return "multi_turn" not in data.name and "memory" not in data.name


@pytest.mark.parametrize("mode", sorted(REPORT["modes"]))
def test_every_answer_on_the_card_gets_bfcls_verdict(bfcl_dir, oracle, tmp_path, mode):
    report = REPORT["modes"][mode]["categories"]
    data, results = card_files(mode, bfcl_dir, tmp_path)
    single = [(d, r) for d, r in zip(data, results) if is_single_turn(d)]
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
    assert len(tasks) == sum(c["entries"] for name, c in report.items() if not name.startswith(("multi_turn", "memory")))
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


    # Memory answers, where the card has them: BFCL's agentic runner on the same texts, entry by entry.
    for d, r in [(d, r) for d, r in zip(data, results) if "memory" in d.name]:
        verdicts = our_verdicts(mode, [d], [r], tmp_path / f"{mode}_{d.stem}.jsonl")
        answers = {json.loads(line)["id"]: json.loads(line)["ground_truth"]
                   for line in (d.parent / "possible_answer" / d.name).read_text().splitlines()}
        lines = [json.loads(line) for line in r.read_text().splitlines()]
        family = {"family": "hermes"} if mode == "fc" else {}
        scores = oracle.run([{"op": "agentic_scores", "category": line["id"].rsplit("_", 1)[0], "results": [line],
                              "answers": [answers[memory_file_id(line["id"])]], **family} for line in lines])
        assert [v["valid"] for v in verdicts] == [s["accuracy"] == 1 for s in scores]
        for category in {line["id"].rsplit("_", 1)[0] for line in lines}:
            kept = [s["accuracy"] == 1 for line, s in zip(lines, scores) if line["id"].startswith(category + "_")]
            assert (report[category]["entries"], report[category]["valid"]) == (len(kept), sum(kept)), category


def test_the_card_holds_both_modes_and_the_any_format_ceiling():
    assert sorted(REPORT["modes"]) == ["fc", "prompting"]
    ceiling = REPORT["fc_any_format"]["categories"]
    fc = REPORT["modes"]["fc"]["categories"]
    assert set(ceiling) == {c for c in fc if not c.startswith(("multi_turn", "memory"))}
    assert all(ceiling[c]["entries"] == fc[c]["entries"] for c in ceiling)


def test_fenced_json_calls_rewritten_as_tool_call_blocks_read_back_as_the_same_calls():
    """bench/format_ceiling.py's rewrite (harness/any_format.py) changes the format of the card's FC answers and nothing else."""
    from fcenv.handlers import decode
    from harness.any_format import as_tool_calls, json_calls

    rewritten = 0
    for path in sorted((CARD / "fc").glob("BFCL_v4_*_result.json")):
        if "multi_turn" in path.name or "memory" in path.name:
            continue
        for line in map(json.loads, path.read_text().splitlines()):
            text = line["result"]
            calls = json_calls(text)
            if not calls:
                assert as_tool_calls(text) == text
                continue
            rewritten += 1
            assert "<tool_call>" not in text
            assert decode(as_tool_calls(text), "hermes") == calls
    assert rewritten > 800  # of 1,006 answers, 887 in ```json fences


def test_format_sensitivity_answers_on_the_card_get_bfcls_verdicts(bfcl_dir, oracle, tmp_path):
    """The card's format-sensitivity sample (prompting mode, each entry under BFCL's 26 prompt
    variations, kept under the whole set's ids): ``fcenv evaluate --partial`` and BFCL's runner
    with its missing entries allowed fail the same answers, and the card's figures are theirs."""
    figures = REPORT["format_sensitivity"]
    results = CARD / "format_sensitivity" / "BFCL_v4_format_sensitivity_result.json"
    verdicts = tmp_path / "verdicts.jsonl"
    fcenv("evaluate", "--dataset_path", str(bfcl_dir / "BFCL_v4_format_sensitivity.json"), "--results", str(results),
          "--partial", "--out", str(verdicts))
    our_verdicts_of = [json.loads(line) for line in verdicts.read_text().splitlines()]
    [theirs] = oracle.run([{"op": "format_sensitivity", "results": str(results), "model": "card", "partial": True}])
    assert len(our_verdicts_of) == theirs["header"]["total_count"] == figures["answers"] == 26 * figures["entries"]
    assert {v["id"]: v["error_type"] for v in our_verdicts_of if not v["valid"]} == theirs["failed"]
    header = theirs["header"]
    assert (round(header["accuracy"], 4), header["accuracy_max_delta"], header["accuracy_std"]) == (
        figures["accuracy"], figures["max_delta"], figures["std"])
    assert {c: [header[c]["correct_count"], header[c]["total_count"]] for c in figures["by_config"]} == figures["by_config"]
