"""``fcenv card RUN_OR_MODEL``: a fixed sample of BFCL's entries answered and scored in one command
(algos/card.py). Its card is the one ``fcenv generate`` and ``fcenv evaluate`` give on the same
sample; run again it reuses the sample and the answers, and goes on from an interrupted run's;
misuse is one line before any model loads; the sample is the one ``python -m bench.bfcl_sample``
and the committed benchmark answers were drawn by."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.algos.store.checkpoint import latest_checkpoint
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT
from fcenv.bfcl_sample import HELDOUT, HELDOUT_K, mixed_sample_lines, sample_ids, sampled_lines
from fcenv.score_card import NA, cost_latency, latencies
from tests.support.runs import fcenv, make_runner

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = ["simple_python", "irrelevance", "live_simple", "multi_turn_base"]
SCORE_FILES = ["data_agentic.csv", "data_format_sensitivity.csv", "data_live.csv", "data_multi_turn.csv",
               "data_non_live.csv", "data_overall.csv"]
# The ids of `python -m bench.bfcl_sample`'s 304 held-out entries (bfcl-eval 2026.3.23's data), as
# it wrote them before the sampler moved into the package: every held-out figure was measured on these.
HELDOUT_IDS_SHA256 = "0deea57228f8bbc98ea4b2ef1c046e2f0a60b5878340811d30099e704eb836fb"
# The overall table's cells that time the model's calls: each run of the model has its own.
TIMING = ["Total Cost ($)", "Latency Mean (s)", "Latency Standard Deviation (s)", "Latency 95th Percentile (s)"]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _printed_card(stdout: str) -> str:
    """What evaluate prints of the verdicts: the accuracy table and BFCL's score card (not the
    folders it wrote to)."""
    return stdout[stdout.index("category"):stdout.index("BFCL's score files written to")]


def _timing(overall_csv: str) -> dict[str, str]:
    """The cost and latency cells of a data_overall.csv."""
    header, row = list(csv.reader(io.StringIO(overall_csv)))[:2]
    return {column: row[header.index(column)] for column in TIMING}


def _untimed(text: str) -> str:
    """A score file or a printed card without its cost and latency cells (another run of the same
    answers takes other seconds), each line's spacing made one space."""
    rows = list(csv.reader(io.StringIO(text)))
    if set(TIMING) <= set(rows[0]):  # data_overall.csv
        timed = [rows[0].index(column) for column in TIMING]
        return "\n".join(",".join("?" if number and column in timed else cell for column, cell in enumerate(row))
                         for number, row in enumerate(rows))
    return "\n".join(" ".join(line.split()) for line in text.splitlines()
                     if not line.startswith(("Total Cost", "Latency ")))


def _card(model: Path, bfcl_dir: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return fcenv("card", str(model), "--categories", *CATEGORIES, "--per_category", "2", "--bfcl_dir", str(bfcl_dir),
                 "--out", str(out), "--system_prompt", TINY_SYSTEM_PROMPT, "--greedy", "--max_new_tokens", "8",
                 "--no-progress", *extra)


@pytest.fixture(scope="module")
def card(tiny_model, bfcl_dir, tmp_path_factory):
    """One card of the tests' model on two entries of each of four categories."""
    out = tmp_path_factory.mktemp("card") / "out"
    done = _card(tiny_model, bfcl_dir, out)
    assert done.returncode == 0, done.stderr[-3000:]
    return out, done


def test_the_card_is_what_generate_and_evaluate_give_on_the_same_sample(card, tiny_model, bfcl_dir, tmp_path):
    out, done = card
    sample = out / "bfcl_sample.json"
    assert sample_ids(sample.read_text().splitlines()) == sample_ids(mixed_sample_lines(bfcl_dir, CATEGORIES, 2)[0])
    assert sorted(p.name for p in (out / "score").iterdir()) == SCORE_FILES
    assert "Overall" in done.stdout and f"verdicts written to {out / 'verdicts.jsonl'}" in done.stdout
    # The two commands by hand, on the card's own sample file.
    answers = tmp_path / "answers"
    generated = fcenv("generate", "--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT,
                      "--dataset_path", str(sample), "--out", str(answers), "--greedy", "--max_new_tokens", "8",
                      "--no-progress")
    assert generated.returncode == 0, generated.stderr[-3000:]
    scored = fcenv("evaluate", "--compat", "bfcl", "--dataset_path", str(sample), "--results",
                   str(answers / "bfcl_sample_result.json"), "--out", str(tmp_path / "verdicts.jsonl"),
                   "--score_dir", str(tmp_path / "score"), "--model_name", Path(tiny_model).name)
    assert scored.returncode == 0, scored.stderr[-3000:]
    assert [(v["id"], v["valid"]) for v in _lines(out / "verdicts.jsonl")] == \
        [(v["id"], v["valid"]) for v in _lines(tmp_path / "verdicts.jsonl")]
    for name in SCORE_FILES:  # every per-category accuracy and summary, cell by cell
        assert _untimed((out / "score" / name).read_text()) == _untimed((tmp_path / "score" / name).read_text()), name
    assert _untimed(_printed_card(done.stdout)) == _untimed(_printed_card(scored.stdout))
    # Both cards time the model's calls from their answers' lines (BFCL's "latency").
    for score, stdout in ((out / "score", done.stdout), (tmp_path / "score", scored.stdout)):
        timing = _timing((score / "data_overall.csv").read_text())
        assert NA not in timing.values() and all(float(value) >= 0 for value in timing.values()), timing
        assert "Latency Mean (s)" in stdout and "Cost and Latency" not in stdout


def test_the_answers_carry_bfcls_latency_and_token_counts_and_the_card_its_cost_and_latency(card):
    """Each answer's line times its model calls in BFCL's shapes (a single-turn entry's numbers, a
    multi-turn entry's turns of step numbers), and the card's cost and latency are those seconds'."""
    out, done = card
    answers = _lines(out / "answers" / "bfcl_sample_result.json")
    multi = [line for line in answers if line["id"].startswith("multi_turn")]
    assert len(multi) == 2 and len(answers) == 8
    for line in answers:
        if line in multi:  # turns of step values, aligned with the result's
            steps = [len(turn) for turn in line["result"]]
            for key in ("latency", "input_token_count", "output_token_count"):
                assert [len(turn) for turn in line[key]] == steps, (line["id"], key)
            seconds = [value for turn in line["latency"] for value in turn]
            counts = [value for key in ("input_token_count", "output_token_count") for turn in line[key] for value in turn]
        else:
            seconds, counts = [line["latency"]], [line["input_token_count"], line["output_token_count"]]
        assert all(isinstance(value, float) and value > 0 for value in seconds), line["id"]
        assert all(type(value) is int and value > 0 for value in counts), line["id"]
    # The card: BFCL's cost and latency of those seconds, where it said N/A without them.
    timing = cost_latency(latencies(line["latency"] for line in answers))
    assert _timing((out / "score" / "data_overall.csv").read_text()) == \
        {column: str(value) for column, value in zip(TIMING, (timing.cost, timing.mean, timing.std, timing.p95))}
    assert any(line.startswith("Latency Mean (s)") and line.split()[3] == str(timing.mean)
               for line in done.stdout.splitlines()), done.stdout


@pytest.mark.oracle
def test_bfcls_runner_times_the_answers_as_the_card_does(card, oracle):
    """BFCL's runner (record_cost_latency, then its overall table) on the card's answers gives
    the cost and latency cells the card wrote."""
    out, _ = card
    answers = _lines(out / "answers" / "bfcl_sample_result.json")
    scores = {category: {"accuracy": 0.5, "total_count": 2} for category in CATEGORIES}
    reference, = oracle.run([{"op": "score_card", "model": "tiny", "scores": scores, "results": [answers]}])
    theirs, ours = _timing(reference["csv"]["data_overall.csv"]), _timing((out / "score" / "data_overall.csv").read_text())
    assert theirs == ours and NA not in ours.values(), (theirs, ours)


def test_run_again_it_reuses_the_sample_and_the_answers_and_goes_on_from_an_interrupted_run(card, tiny_model,
                                                                                           bfcl_dir):
    out, first = card
    sample, result = out / "bfcl_sample.json", out / "answers" / "bfcl_sample_result.json"
    written = {path: path.stat().st_mtime_ns for path in (sample, result)}
    again = _card(tiny_model, bfcl_dir, out)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {path: path.stat().st_mtime_ns for path in written} == written  # nothing asked of the model again
    assert "every entry answered, scored again" in again.stderr
    assert _printed_card(again.stdout) == _printed_card(first.stdout)
    # An interrupted run: three answers in generate's .partial file; the others are asked.
    lines = result.read_text().splitlines(keepends=True)
    partial = result.with_name(result.name + ".partial")
    partial.write_text("".join(lines[:3]))
    result.unlink()
    resumed = _card(tiny_model, bfcl_dir, out)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"3 answers kept, {len(lines) - 3} to go" in resumed.stderr
    assert result.read_text().splitlines(keepends=True)[:3] == lines[:3] and not partial.exists()
    assert len(_lines(result)) == len(lines)
    # Answers made otherwise are refused before any model loads, and left as they are.
    longer = _card(tiny_model, bfcl_dir, out, "--max_new_tokens", "16")
    assert longer.returncode == 2 and "Traceback" not in longer.stderr
    assert "max_new_tokens 8 (this card: 16)" in longer.stderr and "give another --out" in longer.stderr
    assert len(_lines(result)) == len(lines)


def test_a_run_answers_with_its_latest_checkpoint_in_its_own_chat_format(tiny_model, bfcl_dir, tmp_path):
    run = make_runner(tiny_model, tmp_path / "results", "--num_env_steps", "4").run()
    checkpoint = latest_checkpoint(run)
    done = fcenv("card", str(run), "--categories", "simple_python", "--per_category", "2", "--bfcl_dir",
                 str(bfcl_dir), "--greedy", "--max_new_tokens", "8", "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    out = run / "card" / checkpoint.name  # a card per checkpoint: a later one never reuses these answers
    record = _lines(out / "answers" / "bfcl_sample_result.json")[0]["fcenv_generate"]
    assert record["adapter"] == str(checkpoint.resolve() / "actor") and record["system_prompt"] == TINY_SYSTEM_PROMPT
    overall = (out / "score" / "data_overall.csv").read_text().splitlines()[1]
    assert f"{Path(tiny_model).name}:{run.name}/{checkpoint.name}" in overall
    other = fcenv("card", str(run), "--checkpoint", "iter_999", "--bfcl_dir", str(bfcl_dir))
    assert other.returncode == 2 and f"RUN_OR_MODEL {run}: no checkpoint iter_999" in other.stderr


def test_misuse_is_one_line_before_any_model_loads(bfcl_dir, tmp_path):
    model_like = tmp_path / "notes"
    model_like.mkdir()
    no_checkpoints = tmp_path / "run"
    no_checkpoints.mkdir()
    (no_checkpoints / "args.json").write_text(json.dumps({"resolved": {"base_model": "tiny"}}))
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    cases = [
        (["missing"], "RUN_OR_MODEL missing: no such folder"),
        ([str(model_like)], f"RUN_OR_MODEL {model_like}: neither a training run folder"),
        ([str(no_checkpoints)], f"RUN_OR_MODEL {no_checkpoints}: no checkpoint (none saved)"),
        (["tiny", "--categories", "simple_python", "web_search"], "--categories: web_search: its tools search the "
                                                                  "live web"),
        (["tiny", "--categories", "memory_kv"], "--categories: memory_kv: ask 'memory'"),
        (["tiny", "--bfcl_dir", str(empty)], f"--bfcl_dir {empty}: no BFCL_v4_simple_python.json"),
        (["tiny", "--checkpoint", "iter_1"], "--checkpoint names a checkpoint of a training run"),
    ]
    for args, message in cases:
        bfcl = [] if "--bfcl_dir" in args else ["--bfcl_dir", str(bfcl_dir)]
        done = fcenv("card", *args, *bfcl, "--out", str(out))
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not out.exists()


def test_the_sample_is_the_one_the_benchmarks_were_measured_on(bfcl_dir, tmp_path):
    bench = subprocess.run([sys.executable, "-m", "bench.bfcl_sample", str(tmp_path / "bench" / "heldout.json"),
                            "--bfcl_dir", str(bfcl_dir)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bench.returncode == 0, bench.stderr
    ids = sample_ids((tmp_path / "bench" / "heldout.json").read_text().splitlines())
    assert hashlib.sha256("\n".join(ids).encode()).hexdigest() == HELDOUT_IDS_SHA256
    sampled = fcenv("sample", str(tmp_path / "sample" / "heldout.json"), "--categories", *HELDOUT, "--per_category",
                    str(HELDOUT_K), "--bfcl_dir", str(bfcl_dir))
    assert sampled.returncode == 0, sampled.stderr
    for name in ("heldout.json", "possible_answer/heldout.json"):
        assert (tmp_path / "sample" / name).read_bytes() == (tmp_path / "bench" / name).read_bytes()
    # The real model's committed card answers (bench/results/real_card) were drawn by the same rule.
    for category in ("simple_python", "multi_turn_base", "live_parallel"):
        answered = [line["id"] for line in _lines(ROOT / "bench/results/real_card/fc" / f"BFCL_v4_{category}_result.json")]
        assert sorted(answered) == sorted(sample_ids(sampled_lines(bfcl_dir, category, len(answered))[0])), category
