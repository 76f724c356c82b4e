"""`python -m fcenv evaluate` (contract C3) run as a user runs it, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fcenv.data import load_tasks
from harness.trajectories import ground_truth_steps
from tests.support.answers import gt_answer
from tests.support.question_files import first_entries


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fcenv", *args], capture_output=True, text=True)


def write_jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_single_turn_results_with_repeated_ids(bfcl_dir, tmp_path):
    data = bfcl_dir / "BFCL_v4_simple_python.json"
    tasks = load_tasks(data)[:4]
    rows = []
    for task in tasks:  # three samples per prompt: right, prose, wrong value
        rows += [{"id": task.id, "result": gt_answer(task)},
                 {"id": task.id, "result": "Sorry, I can't."},
                 {"id": task.id, "result": gt_answer(task).replace("=", "=0+", 1)}]
    out = tmp_path / "verdicts.jsonl"
    proc = run("evaluate", "--dataset_path", str(data), "--results", write_jsonl(tmp_path / "r.jsonl", rows),
               "--out", str(out), "--compat", "bfcl", "--reward", "shaped", "--partial")
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(x) for x in out.read_text().splitlines()]
    assert [v["id"] for v in verdicts] == [r["id"] for r in rows]
    assert set(verdicts[0]) == {"id", "valid", "error_type", "reward", "facets"}
    assert [v["valid"] for v in verdicts[:2]] == [True, False]
    assert verdicts[0]["reward"] == 1.0 and verdicts[1]["error_type"] == "ast_decoder:decoder_failed"
    assert "simple_python" in proc.stdout and "pass@3" in proc.stdout and "TOTAL" in proc.stdout


def test_multi_turn_results(bfcl_dir, tmp_path):
    data = bfcl_dir / "BFCL_v4_multi_turn_base.json"
    tasks = load_tasks(data)[:3]
    rows = [{"id": t.id, "result": ground_truth_steps(t)} for t in tasks]
    rows.append({"id": tasks[0].id, "result": ground_truth_steps(tasks[0])[:-1]})  # force-terminated
    rows.append({"id": tasks[1].id, "result": "Error during inference: timeout"})
    rows.append({"id": tasks[2].id, "result": ground_truth_steps(tasks[2])})  # two samples of each entry
    out = tmp_path / "v.jsonl"
    proc = run("evaluate", "--dataset_path", str(data), "--results", write_jsonl(tmp_path / "r.jsonl", rows),
               "--out", str(out), "--compat", "bfcl", "--partial")
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(x) for x in out.read_text().splitlines()]
    assert [v["valid"] for v in verdicts] == [True, True, True, False, False, True]
    assert verdicts[3]["error_type"] == "multi_turn:force_terminated"
    assert verdicts[4]["error_type"] == "multi_turn:inference_error"


def test_auto_decoding_without_compat(bfcl_dir, tmp_path):
    data = bfcl_dir / "BFCL_v4_simple_python.json"
    task = load_tasks(data)[0]
    (name, params), = task.ground_truth[0].items()
    tool_call = json.dumps({"name": name, "arguments": {k: v[0] for k, v in params.items() if v[0] != ""}})
    rows = [{"id": task.id, "result": f"<tool_call>{tool_call}</tool_call>"}]
    out = tmp_path / "v.jsonl"
    assert run("evaluate", "--dataset_path", str(data), "--results", write_jsonl(tmp_path / "r.jsonl", rows), "--out", str(out),
               "--partial").returncode == 0
    assert json.loads(out.read_text())["valid"] is True
    assert run("evaluate", "--dataset_path", str(data), "--results", str(tmp_path / "r.jsonl"), "--out", str(out), "--compat", "bfcl",
               "--partial").returncode == 0
    assert json.loads(out.read_text())["valid"] is False


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"id": "simple_python_0", "result": "[f()]"}', "{not json"], "line 2: invalid JSON"),
        (['{"id": "nope_3", "result": "x"}'], "field 'id': no line answers an entry of"),
        (['{"id": "simple_python_0", "result": "x"}', '{"id": "nope_3", "result": "x"}'],
         "entry 'nope_3', field 'id': no entry with this id"),
        (['{"id": "simple_python_0"}'], "entry 'simple_python_0', field 'result': missing"),
        (['{"id": "simple_python_0", "result": [["x"]]}'], "field 'result': a single-turn result must be"),
    ],
)
def test_bad_result_files_fail_clearly(bfcl_dir, tmp_path, lines, message):
    results = tmp_path / "r.jsonl"
    results.write_text("\n".join(lines) + "\n")
    out = tmp_path / "v.jsonl"
    proc = run("evaluate", "--dataset_path", str(bfcl_dir / "BFCL_v4_simple_python.json"), "--results", str(results), "--out", str(out))
    assert proc.returncode == 2
    assert str(results) in proc.stderr and message in proc.stderr
    assert not out.exists()


def test_the_problems_of_several_bad_result_files_are_listed_together(bfcl_dir, tmp_path):
    """Each file's problems, in one refusal: a line that is not JSON in the first, a line without
    its result in the second, entries left unanswered by the third; nothing scored."""
    paths = {category: bfcl_dir / f"BFCL_v4_{category}.json" for category in ("simple_python", "irrelevance",
                                                                                "multiple")}
    ids = {category: [t.id for t in load_tasks(path)] for category, path in paths.items()}
    broken = tmp_path / "simple_python_result.json"
    broken.write_text("".join(json.dumps({"id": i, "result": "[f()]"}) + "\n" for i in ids["simple_python"][:-1])
                      + "{not json\n")
    no_result = write_jsonl(tmp_path / "irrelevance_result.json",
                            [{"id": i, "result": "No."} for i in ids["irrelevance"][1:]] + [{"id": ids["irrelevance"][0]}])
    short = write_jsonl(tmp_path / "multiple_result.json", [{"id": i, "result": "No."} for i in ids["multiple"][:3]])
    out = tmp_path / "v.jsonl"
    proc = run("evaluate", "--dataset_path", *map(str, paths.values()), "--results", str(broken), no_result, short,
               "--out", str(out))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "3 problems in the input of 3 files" in proc.stderr, proc.stderr
    assert f"{broken}, line {len(ids['simple_python'])}: invalid JSON" in proc.stderr
    assert f"{no_result}, line {len(ids['irrelevance'])}, entry {ids['irrelevance'][0]!r}, field 'result': missing" \
        in proc.stderr
    assert f"{short}: answers 3 of the {len(ids['multiple'])} entries" in proc.stderr
    assert not out.exists()


def test_a_file_with_many_problems_leaves_room_for_the_others():
    from fcenv.problems import SHOWN, DatasetError, Problem

    many = [Problem("a.json", line, None, None, "bad") for line in range(1, 2 * SHOWN)]
    message = str(DatasetError([*many, Problem("b.json", 4, None, None, "also bad")]))
    assert message.startswith(f"{2 * SHOWN} problems in the input of 2 files:")
    assert "b.json, line 4: also bad" in message and f"... and {2 * SHOWN - 1 - SHOWN // 2} more in a.json" in message
    assert len(message.splitlines()) == 1 + SHOWN // 2 + 1 + 1


def test_bad_question_file_fails_clearly(tmp_path):
    bad = tmp_path / "BFCL_v4_simple_python.json"
    bad.write_text('{"id": "simple_python_0", "question": 3}\n')
    proc = run("evaluate", "--dataset_path", str(bad), "--results", str(bad), "--out", str(tmp_path / "v.jsonl"))
    assert proc.returncode == 2 and "field 'question'" in proc.stderr and "line 1" in proc.stderr


def test_data_command_extracts_a_wheel(tmp_path):
    """`fcenv data bfcl --wheel` writes only data files, from a wheel we build here."""
    import zipfile

    wheel = tmp_path / "bfcl_eval-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("bfcl_eval/data/BFCL_v4_simple_python.json", '{"id": "simple_python_0"}\n')
        zf.writestr("bfcl_eval/data/possible_answer/BFCL_v4_simple_python.json", "{}\n")
        zf.writestr("bfcl_eval/eval_checker/multi_turn_eval/func_source_code/long_context.py",
                    "X = [1, 2, ...]\nY = {'a': 'b'}\n")
        zf.writestr("bfcl_eval/utils.py", "raise SystemExit('code must never run')\n")
    dest = tmp_path / "out"
    proc = run("data", "bfcl", "--wheel", str(wheel), "--dest", str(dest))
    assert proc.returncode == 0, proc.stderr
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == ["BFCL_v4_simple_python.json", "long_context.json", "possible_answer/BFCL_v4_simple_python.json"]
    from fcenv.bfcl_data import load_long_context

    assert load_long_context(dest / "long_context.json") == {"X": [1, 2, Ellipsis], "Y": {"a": "b"}}


def test_several_files_in_one_run(bfcl_dir, tmp_path):
    """Several question files with their result files, paired in order: one process, one
    verdict file in the files' order, one table over every category."""
    pairs, expected = [], []
    for category in ("simple_python", "irrelevance", "multi_turn_base"):
        data = bfcl_dir / f"BFCL_v4_{category}.json"
        tasks = load_tasks(data)[:2]
        if category == "multi_turn_base":
            rows = [{"id": t.id, "result": ground_truth_steps(t)} for t in tasks]
        elif category == "irrelevance":
            rows = [{"id": t.id, "result": "None of the functions fit."} for t in tasks]
        else:
            rows = [{"id": t.id, "result": gt_answer(t)} for t in tasks]
        pairs.append((str(data), write_jsonl(tmp_path / f"{category}.jsonl", rows)))
        expected += [r["id"] for r in rows]
    out = tmp_path / "all.jsonl"
    proc = run("evaluate", "--dataset_path", *[d for d, _ in pairs], "--results", *[r for _, r in pairs], "--out", str(out),
               "--compat", "bfcl", "--partial")
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(x) for x in out.read_text().splitlines()]
    assert [v["id"] for v in verdicts] == expected and all(v["valid"] for v in verdicts)
    assert all(c in proc.stdout for c in ("simple_python", "irrelevance", "multi_turn_base")) and "TOTAL" in proc.stdout
    unpaired = run("evaluate", "--dataset_path", *[d for d, _ in pairs], "--results", pairs[0][1], "--out", str(out))
    assert unpaired.returncode == 2 and "--dataset_path and --results pair up in order" in unpaired.stderr


def test_misuse_is_one_line_and_status_2(bfcl_dir, tmp_path):
    """Misuse ends with exit status 2 and one line naming the flag or file, no traceback,
    nothing written."""
    data = str(bfcl_dir / "BFCL_v4_simple_python.json")
    results = write_jsonl(tmp_path / "r.jsonl", [{"id": "simple_python_0", "result": "[f()]"}])
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"id": "simple_python_0", "result": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    (tmp_path / "folder").mkdir()
    not_a_wheel = tmp_path / "bfcl_eval-9-py3-none-any.whl"
    not_a_wheel.write_text("not a zip")
    cases = [
        (["evaluate", "--dataset_path", data, "--results", results, "--out", str(tmp_path / "v.jsonl"), "--handler", "nope"],
         "--handler: unknown decoder 'nope'"),
        (["evaluate", "--dataset_path", data, "--results", results, "--out", str(tmp_path / "folder")],
         "--out: " + str(tmp_path / "folder") + " is a directory"),
        (["evaluate", "--dataset_path", data, "--results", str(deep), "--out", str(tmp_path / "v.jsonl")],
         f"{deep}, line 1: JSON nested too deeply"),
        (["data", "bfcl", "--wheel", str(not_a_wheel), "--dest", str(tmp_path / "dest")], "is not a wheel"),
    ]
    for args, message in cases:
        proc = run(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bfcl_eval-9-py3-none-any.whl", "deep.jsonl", "folder", "r.jsonl"]
    assert not any((tmp_path / "folder").iterdir())


def test_output_into_a_closed_pipe_ends_quietly(bfcl_dir, tmp_path):
    """`fcenv evaluate ... | head -0`: the reader is gone before anything is printed."""
    rows = [{"id": "simple_python_0", "result": "[f()]"}] * 3
    command = [sys.executable, "-m", "fcenv", "evaluate", "--dataset_path", str(bfcl_dir / "BFCL_v4_simple_python.json"),
               "--results", write_jsonl(tmp_path / "r.jsonl", rows), "--out", str(tmp_path / "v.jsonl"), "--partial"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # the child is still importing: its first print meets a closed pipe
    stderr = process.stderr.read().decode()
    assert process.wait() == 141 and stderr == ""
    assert len((tmp_path / "v.jsonl").read_text().splitlines()) == 3


def test_lenient_evaluation_accepts_what_bfcl_accepts(bfcl_dir, tmp_path):
    """Without --compat, every answer BFCL's decoding passes also passes (Java and JavaScript
    answers included, and prose that BFCL counts as an abstention on irrelevance), and an
    answer in another format (here <tool_call>) passes too."""
    from harness.generators import generate

    samples = generate(bfcl_dir, seed=5, per_entry=3, max_entries=25,
                       categories=("simple_java", "simple_javascript", "simple_python", "live_irrelevance", "parallel"))
    data_by_category = {}
    for sample in samples:
        data_by_category.setdefault(sample.task.category, []).append({"id": sample.task.id, "result": sample.text})
    passed = {"compat": 0, "lenient": 0}
    for category, rows in data_by_category.items():
        data = bfcl_dir / f"BFCL_v4_{category}.json"
        results = write_jsonl(tmp_path / f"{category}.jsonl", rows)
        verdicts = {}
        for mode, flags in (("compat", ["--compat", "bfcl"]), ("lenient", [])):
            out = tmp_path / f"{category}_{mode}.jsonl"
            proc = run("evaluate", "--dataset_path", str(data), "--results", results, "--out", str(out), "--partial", *flags)
            assert proc.returncode == 0, proc.stderr
            verdicts[mode] = [json.loads(x)["valid"] for x in out.read_text().splitlines()]
            passed[mode] += sum(verdicts[mode])
        assert all(lenient for compat, lenient in zip(verdicts["compat"], verdicts["lenient"]) if compat), category
    assert passed["lenient"] >= passed["compat"] > 0


def test_a_result_file_that_leaves_entries_unanswered_is_refused_unless_partial(bfcl_dir, tmp_path):
    """A crashed or cut generation run must not score as a whole one: entries without a result
    line are refused (naming how many and which), with or without --compat bfcl, in every file
    of a run, samples or not, unless --partial asks for the subset, as BFCL's --partial-eval."""
    simple = first_entries(bfcl_dir, tmp_path / "data", "simple_python", 3)
    irrelevance = first_entries(bfcl_dir, tmp_path / "data", "irrelevance", 2)
    tasks = load_tasks(simple)
    answer = gt_answer(tasks[0])
    one_of_three = write_jsonl(tmp_path / "part.jsonl", [{"id": tasks[0].id, "result": answer}] * 2)  # two samples
    whole = write_jsonl(tmp_path / "whole.jsonl", [{"id": t.id, "result": gt_answer(t)} for t in tasks] * 2)
    abstained = write_jsonl(tmp_path / "irr.jsonl", [{"id": t.id, "result": "No."} for t in load_tasks(irrelevance)])
    out = tmp_path / "v.jsonl"
    for flags in ([], ["--compat", "bfcl"]):
        proc = run("evaluate", "--dataset_path", str(simple), "--results", one_of_three, "--out", str(out), *flags)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert (f"{one_of_three}: answers 1 of the 3 entries of {simple.name}; 2 have no result line: "
                f"'{tasks[1].id}', '{tasks[2].id}' (--partial scores only the entries answered)") in proc.stderr
        assert not out.exists() and "TOTAL" not in proc.stdout
        # Several files in one run: the one that leaves entries out is named, the whole one is not.
        proc = run("evaluate", "--dataset_path", str(irrelevance), str(simple), "--results", abstained, one_of_three,
                   "--out", str(out), *flags)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and abstained not in proc.stderr  # one problem: one line
        assert f"{one_of_three}: answers 1 of the 3 entries" in proc.stderr
        assert not out.exists()
        proc = run("evaluate", "--dataset_path", str(simple), "--results", one_of_three, "--out", str(out), "--partial", *flags)
        assert proc.returncode == 0, proc.stderr
        assert "TOTAL" in proc.stdout and f"--partial: accuracy over the entries answered only; {one_of_three}: " \
                                          "1 of 3 entries answered" in proc.stdout
        assert len(out.read_text().splitlines()) == 2
        out.unlink()
        proc = run("evaluate", "--dataset_path", str(irrelevance), str(simple), "--results", abstained, whole,
                   "--out", str(out), *flags)
        assert proc.returncode == 0 and "--partial" not in proc.stdout, proc.stderr
        assert len(out.read_text().splitlines()) == 8
        out.unlink()


def test_uneven_repeats_are_refused_naming_the_ids_and_counts(bfcl_dir, tmp_path):
    """One id three times and the others once would weigh that entry three times in accuracy
    and leave pass@k at k=1: refused before any verdict, naming the ids and their counts, with
    --partial too; the same results with even repeats score."""
    simple = first_entries(bfcl_dir, tmp_path / "data", "simple_python", 3)
    tasks = load_tasks(simple)
    rows = [{"id": t.id, "result": gt_answer(t)} for t in tasks] + [{"id": tasks[0].id, "result": "No."}] * 2
    uneven = write_jsonl(tmp_path / "uneven.jsonl", rows)
    out = tmp_path / "v.jsonl"
    for flags in ([], ["--partial"], ["--compat", "bfcl"]):
        proc = run("evaluate", "--dataset_path", str(simple), "--results", uneven, "--out", str(out), *flags)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert (f"{uneven}: uneven repeats: '{tasks[0].id}' 3 lines, where the other 2 ids have 1 line each; "
                "accuracy and pass@k need every entry of a file answered the same number of times") in proc.stderr
        assert not out.exists() and "TOTAL" not in proc.stdout
    even = write_jsonl(tmp_path / "even.jsonl", [{"id": t.id, "result": gt_answer(t)} for t in tasks] * 3)
    proc = run("evaluate", "--dataset_path", str(simple), "--results", even, "--out", str(out))
    assert proc.returncode == 0 and "pass@3" in proc.stdout, proc.stderr
