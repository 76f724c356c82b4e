"""BFCL's score card from `fcenv evaluate` (fcenv/score_card.py): printed after the accuracy
table, and with --score_dir written as BFCL's six score CSV files. The figures here are worked
out by hand from BFCL's rules; tests/parity/test_score_card_parity.py holds them to BFCL's code."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fcenv.score_card import (CATEGORY_SIZES, NA, card_from_accuracies, cost_latency, csv_files, csv_rows, latencies,
                              model_folder, model_name_of, render, score_card)
from tests.support.question_files import first_entries

SCORE_FILES = ["data_agentic.csv", "data_format_sensitivity.csv", "data_live.csv", "data_multi_turn.csv",
               "data_non_live.csv", "data_overall.csv"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fcenv", *args], capture_output=True, text=True)


def results(path: Path, answers: dict[str, str]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": i, "result": text}) + "\n" for i, text in answers.items()))
    return str(path)


@pytest.fixture
def run_folder(bfcl_dir, tmp_path):
    """BFCL's result layout for one model, hand-written answers: simple_python 1 of 2 right,
    live_simple 1 of 1, irrelevance 1 of 1 (an abstention)."""
    data = tmp_path / "data"
    model = tmp_path / "result" / "Qwen_Qwen2.5-Tiny"
    files = [
        (first_entries(bfcl_dir, data, "simple_python", 2), results(
            model / "non_live" / "BFCL_v4_simple_python_result.json",
            {"simple_python_0": "[calculate_triangle_area(base=10, height=5)]",
             "simple_python_1": "[math.factorial(number=4)]"})),
        (first_entries(bfcl_dir, data, "irrelevance", 1), results(
            model / "non_live" / "BFCL_v4_irrelevance_result.json", {"irrelevance_0": "I cannot answer that."})),
        (first_entries(bfcl_dir, data, "live_simple", 1), results(
            model / "live" / "BFCL_v4_live_simple_result.json",
            {"live_simple_0-0-0": "[get_user_info(user_id=7890, special='black')]"})),
    ]
    return [str(d) for d, _ in files], [r for _, r in files]


def test_score_dir_writes_bfcls_score_files(run_folder, tmp_path):
    data, result_files = run_folder
    score = tmp_path / "score"
    proc = run("evaluate", "--dataset_path", *data, "--results", *result_files, "--out", str(tmp_path / "v.jsonl"),
               "--compat", "bfcl", "--score_dir", str(score))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in score.iterdir()) == SCORE_FILES
    # simple = mean(1/2, Java 0, JavaScript 0) = 1/6; non-live = mean(1/6, 0, 0, 0) = 1/24;
    # live = (1 * 1 + 0 * 1053 + 0 * 16 + 0 * 24) / 1094 (the missing live categories at their
    # full size); irrelevance = mean(1, 0) = 1/2; overall = (1/24 + 1/1094 + 1/2) / 10.
    assert (score / "data_non_live.csv").read_text() == (
        "Rank,Model,Non-Live Overall Acc,AST Summary,Simple AST,Python Simple AST,Java Simple AST,"
        "JavaScript Simple AST,Multiple AST,Parallel AST,Parallel Multiple AST,Irrelevance Detection\n"
        "1,Qwen/Qwen2.5-Tiny,4.17%,N/A,N/A,50.00%,N/A,N/A,N/A,N/A,N/A,100.00%")
    assert (score / "data_live.csv").read_text().splitlines()[1] == "1,Qwen/Qwen2.5-Tiny,0.09%,N/A,100.00%,N/A,N/A,N/A,N/A,N/A"
    assert (score / "data_multi_turn.csv").read_text().splitlines()[1] == "1,Qwen/Qwen2.5-Tiny,0.00%,N/A,N/A,N/A,N/A"
    overall = (score / "data_overall.csv").read_text().splitlines()
    assert len(overall) == 2 and not (score / "data_overall.csv").read_text().endswith("\n")
    row = dict(zip(overall[0].split(","), overall[1].split(",")))
    assert len(row) == 36
    assert (row["Rank"], row["Overall Acc"], row["Model"]) == ("1", "5.43%", "Qwen/Qwen2.5-Tiny")
    assert (row["Live Acc"], row["Live Simple AST"], row["Irrelevance Detection"]) == ("0.09%", "100.00%", "N/A")
    assert row["Memory KV"] == row["Web Search Acc"] == row["Total Cost ($)"] == row["Organization"] == "N/A"
    sensitivity = (score / "data_format_sensitivity.csv").read_text().splitlines()
    assert len(sensitivity[0].split(",")) == 30 and sensitivity[1] == "1,Qwen/Qwen2.5-Tiny" + ",N/A" * 28
    # The printed card: the same figures, the missing categories named, the subset said.
    out = proc.stdout
    assert "BFCL score card" in out and "model Qwen/Qwen2.5-Tiny" in out
    assert "Overall Acc" in out and "5.43%" in out and "4.17%" in out
    assert "N/A: a category not scored here (19 of BFCL's 22)" in out and "counts it as 0" in out
    assert "not in these results: " in out and "memory_kv, memory_vector" in out
    assert "simple_python 2 of 400" in out
    assert "BFCL's score files written to" in out and "--partial" not in out
    # --model_name names the model instead of the folder.
    proc = run("evaluate", "--dataset_path", *data, "--results", *result_files, "--out", str(tmp_path / "v.jsonl"),
               "--compat", "bfcl", "--score_dir", str(score), "--model_name", "my_model-v2")
    assert proc.returncode == 0, proc.stderr
    assert (score / "data_live.csv").read_text().splitlines()[1].startswith("1,my_model-v2,0.09%,")


def test_a_model_bfcl_lists_is_named_as_bfcl_names_it_and_timed_lines_give_cost_and_latency(bfcl_dir, tmp_path):
    """A results folder named after a model in BFCL's registry: BFCL's display name, link,
    organisation and licence on the card; the lines' latencies (BFCL's generation writes them)
    give BFCL's cost and latency figures, worked out here by hand. A zero (a failed call) and a
    line without one are left out."""
    data = tmp_path / "data"
    model = tmp_path / "result" / "Qwen_Qwen3-8B"
    lines = {"simple_python_0": ("[calculate_triangle_area(base=10, height=5)]", 3600.0),
             "simple_python_1": ("[math.factorial(number=4)]", 0),
             "simple_python_2": ("[f()]", None)}
    simple = model / "non_live" / "BFCL_v4_simple_python_result.json"
    simple.parent.mkdir(parents=True)
    simple.write_text("".join(json.dumps({"id": i, "result": text, **({} if t is None else {"latency": t})}) + "\n"
                              for i, (text, t) in lines.items()))
    multi = model / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    multi.parent.mkdir(parents=True)
    multi.write_text(json.dumps({"id": "multi_turn_base_0", "result": [["[f()]"]], "latency": [[7200.0], [10800.0]]})
                     + "\n")
    data_files = [first_entries(bfcl_dir, data, "simple_python", 3), first_entries(bfcl_dir, data, "multi_turn_base", 1)]
    score = tmp_path / "score"
    proc = run("evaluate", "--dataset_path", *map(str, data_files), "--results", str(simple), str(multi), "--out",
               str(tmp_path / "v.jsonl"), "--compat", "bfcl", "--score_dir", str(score), "--partial")
    assert proc.returncode == 0, proc.stderr
    overall = (score / "data_overall.csv").read_text().splitlines()
    row = dict(zip(overall[0].split(","), overall[1].split(",")))
    assert (row["Model"], row["Model Link"], row["Organization"], row["License"]) == \
        ("Qwen3-8B (Prompt)", "https://huggingface.co/Qwen/Qwen3-8B", "Qwen", "apache-2.0")
    # 3600, 7200 and 10800 seconds: 6 hours x $23.92 / 100 = $1.4352; mean 7200, sample
    # deviation 3600; 95th percentile (linear): 7200 + 0.9 x 3600
    assert [row[c] for c in ("Total Cost ($)", "Latency Mean (s)", "Latency Standard Deviation (s)",
                             "Latency 95th Percentile (s)")] == ["1.44", "7200.0", "3600.0", "10440.0"]
    for file in score.iterdir():
        header, cells = (line.split(",") for line in file.read_text().splitlines())
        assert cells[header.index("Model")] == "Qwen3-8B (Prompt)", file.name
    assert "model Qwen3-8B (Prompt) (BFCL's name for Qwen/Qwen3-8B)" in proc.stdout
    assert re.search(r"\nTotal Cost \(\$\) +1\.44  ", proc.stdout) and re.search(r"\nLatency Mean \(s\) +7200\.0",
                                                                                proc.stdout), proc.stdout


def test_a_model_bfcl_does_not_list_keeps_its_name_and_untimed_lines_show_no_cost():
    """fcenv card's name for the real model, its hub name, a training run's: not in BFCL's
    registry (BFCL's evaluation would refuse them); the card names them as given, with "N/A"
    for link, organisation and licence, and without latencies "N/A" for cost and latency."""
    card = score_card({"simple_python": (1, 2)})
    for model in ("qwen2.5-coder-0.5b-instruct", "Qwen/Qwen2.5-Coder-0.5B-Instruct", "qwen:run/iter_40",
                  "Qwen/Qwen3-8B-Base"):
        header, row = csv_rows(card, model, timing=cost_latency(latencies([None, 0])))["data_overall.csv"]
        cells = dict(zip(header, row))
        assert cells["Model"] == model, model
        assert [cells[c] for c in ("Model Link", "Organization", "License", "Total Cost ($)", "Latency Mean (s)",
                                   "Latency Standard Deviation (s)", "Latency 95th Percentile (s)")] == [NA] * 7
        text = render(card, model)
        assert text.splitlines()[0].endswith(f"model {model}") and "BFCL's name" not in text
        assert "\nCost and Latency" in text and "the result lines carry no latency" in text
    # the same model as BFCL's results folder names it, and as --model_name names it
    assert csv_rows(card, "Qwen_Qwen3-0.6B-FC")["data_live.csv"][1][1] == "Qwen3-0.6B (FC)"
    assert csv_rows(card, "Qwen/Qwen3-0.6B")["data_live.csv"][1][1] == "Qwen3-0.6B (Prompt)"


def test_the_card_is_printed_without_score_dir_and_misuse_is_refused_before_work(run_folder, tmp_path):
    data, result_files = run_folder
    out = tmp_path / "v.jsonl"
    proc = run("evaluate", "--dataset_path", *data, "--results", *result_files, "--out", str(out), "--compat", "bfcl")
    assert proc.returncode == 0 and "BFCL score card" in proc.stdout and "5.43%" in proc.stdout, proc.stderr
    out.unlink()
    elsewhere = results(tmp_path / "other" / "r.jsonl", {"irrelevance_0": "No."})
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    cases = [
        ([*data[:2], "--results", *result_files[:1], elsewhere, "--score_dir", str(tmp_path / "s")],
         "--score_dir: the result files lie in different model folders; name the model with --model_name"),
        ([*data, "--results", *result_files, "--score_dir", str(tmp_path / "s"), "--model_name", "a,b"],
         "--model_name 'a,b' has a comma or a line break"),
        ([*data, "--results", *result_files, "--score_dir", str(a_file)], f"--score_dir: {a_file} is a file"),
    ]
    for args, message in cases:
        proc = run("evaluate", "--dataset_path", *args, "--out", str(out))
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert not out.exists() and not (tmp_path / "s").exists()


def test_the_card_shows_the_format_sensitivity_figures_scored_beside_it(run_folder, bfcl_dir, tmp_path):
    """The set scored in the same run as the categories: the card's format-sensitivity line
    shows its max delta and standard deviation, the figures the CSV files hold."""
    from fcenv.format_sensitivity import load_set
    from harness.format_answers import render_answer
    from harness.generators import answer_calls

    configs = ["ret_fmt=json&tool_call_tag=True&func_doc_fmt=xml&prompt_fmt=plaintext&style=classic",
               "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=markdown&style=classic"]
    id_file = bfcl_dir / "BFCL_v4_format_sensitivity.json"
    # The first configuration answers both entries rightly, the second neither: 100 points apart.
    varied = {entry.id: render_answer(answer_calls(entry.task, random.Random(1), omit=False),
                                      entry.variation) if entry.config == configs[0] else "I cannot."
              for entry in load_set(id_file, configs, 2)}
    data, result_files = run_folder
    fs_results = results(Path(result_files[0]).parents[1] / "format_sensitivity" /
                         "BFCL_v4_format_sensitivity_result.json", varied)
    score = tmp_path / "score"
    proc = run("evaluate", "--dataset_path", *data, str(id_file), "--results", *result_files, fs_results,
               "--sensitivity_configs", ",".join(configs), "--sensitivity_entries", "2",
               "--out", str(tmp_path / "v.jsonl"), "--compat", "bfcl", "--score_dir", str(score))
    assert proc.returncode == 0, proc.stderr
    card = proc.stdout.split("BFCL score card")[1]
    assert "Format Sensitivity" in card and "not scored (BFCL runs it" not in card
    assert re.search(r"\n  Max Delta +100\.0  points", card) and re.search(r"\n  Standard Deviation +70\.71  points",
                                                                            card), card
    assert "across 2 of BFCL's 26 prompt configurations" in card
    row = (score / "data_format_sensitivity.csv").read_text().splitlines()[1].split(",")
    assert row[2:4] == ["100.0", "70.71"]


def test_results_outside_bfcls_categories_print_no_card(tmp_path):
    """A question file of one's own (ids outside BFCL's categories): no card, and --score_dir
    is refused before any verdict."""
    function = {"name": "get_weather", "description": "Weather of a city.",
                "parameters": {"type": "dict", "properties": {"city": {"type": "string", "description": "City."}},
                               "required": ["city"]}}
    data = tmp_path / "weather.json"
    data.write_text(json.dumps({"id": "weather_0", "question": [[{"role": "user", "content": "Weather in Oslo?"}]],
                                "function": [function]}) + "\n")
    (tmp_path / "possible_answer").mkdir()
    (tmp_path / "possible_answer" / "weather.json").write_text(
        json.dumps({"id": "weather_0", "ground_truth": [{"get_weather": {"city": ["Oslo"]}}]}) + "\n")
    answers = results(tmp_path / "r.jsonl", {"weather_0": "[get_weather(city='Oslo')]"})
    out = tmp_path / "v.jsonl"
    proc = run("evaluate", "--dataset_path", str(data), "--results", answers, "--out", str(out))
    assert proc.returncode == 0 and "TOTAL" in proc.stdout and "BFCL score card" not in proc.stdout, proc.stderr
    out.unlink()
    proc = run("evaluate", "--dataset_path", str(data), "--results", answers, "--out", str(out), "--score_dir", str(tmp_path / "s"))
    assert proc.returncode == 2 and "--score_dir: none of the entries is in one of BFCL's scoring categories (weather)" \
        in proc.stderr, proc.stderr
    assert not out.exists()


# --- The pure functions --------------------------------------------------------------------------

def test_the_averaging_rules_by_hand():
    card = score_card({"simple_python": (3, 4), "simple_java": (1, 2), "simple_javascript": (0, 1),
                       "multiple": (1, 1), "parallel": (1, 2), "parallel_multiple": (0, 3),
                       "live_simple": (1, 1), "live_multiple": (0, 3), "live_parallel": (1, 1),
                       "live_parallel_multiple": (1, 3), "irrelevance": (1, 4), "live_irrelevance": (3, 4),
                       "multi_turn_base": (1, 2), "multi_turn_miss_func": (1, 1), "multi_turn_miss_param": (0, 1),
                       "multi_turn_long_context": (0, 1), "live_relevance": (1, 1)})
    assert card.simple.accuracy == pytest.approx((0.75 + 0.5 + 0) / 3)                   # plain mean
    assert card.non_live.accuracy == pytest.approx((1.25 / 3 + 1 + 0.5 + 0) / 4)         # plain mean
    assert card.non_live_ast == card.non_live                                             # nothing missing
    assert card.live.accuracy == pytest.approx((1 + 0 + 1 + 1) / 8)                      # weighted by entries
    assert card.irrelevance.accuracy == pytest.approx(0.5) and card.relevance.accuracy == 1
    assert card.multi_turn.accuracy == pytest.approx(0.375)
    assert card.agentic.accuracy == 0 and card.agentic.shown and not card.web_search.shown
    expected = (card.non_live.accuracy + card.live.accuracy + 0.5 + 3 * 0.375 + 4 * 0) / 10
    assert card.overall.accuracy == pytest.approx(expected)
    assert card.missing == ["memory_kv", "memory_vector", "memory_rec_sum", "web_search_base", "web_search_no_snippet"]


def test_a_missing_category_counts_as_zero_over_its_full_size():
    card = card_from_accuracies({"live_parallel": (1.0, 16)})
    assert card.live.accuracy == pytest.approx(16 / sum(CATEGORY_SIZES[c] for c in (
        "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")))
    assert card.live.shown and not card.live_ast.shown and card.categories["live_simple"].display == "N/A"
    text = render(card, "m")
    listed = text.split("not in these results: ")[1].split("\n")[0].split(", ")
    assert "live_simple" in listed and "live_parallel" not in listed  # scored, so not listed as missing
    assert "Fewer entries than BFCL's category" not in text  # all 16 entries of live_parallel


def test_bad_counts_and_names_are_refused():
    for counts in ({"simple_python": (0, 0)}, {"simple_python": (3, 2)}, {"simple_python": (-1, 2)},
                   {"nope": (1, 1)}, {"format_sensitivity": (1, 1)}):
        with pytest.raises(ValueError):
            score_card(counts)
    with pytest.raises(ValueError, match="unquoted"):
        csv_files(score_card({}), "a,b")


def test_the_model_is_named_by_bfcls_result_folder(tmp_path):
    model = tmp_path / "result" / "Qwen_Qwen2.5-7B"
    for path in (model / "non_live" / "BFCL_v4_simple_python_result.json",
                 model / "agentic" / "memory" / "kv" / "BFCL_v4_memory_kv_result.json",
                 model / "BFCL_v4_live_simple_result.json"):
        assert model_folder(path) == model.resolve()
    assert model_name_of([model / "live" / "a.json", model / "multi_turn" / "b.json"]) == "Qwen/Qwen2.5-7B"
    assert model_name_of([model / "a.json", tmp_path / "b.json"]) is None
