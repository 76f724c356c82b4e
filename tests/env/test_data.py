"""Loading BFCL data: every category, the joins, the retired sets, and clear errors."""

from __future__ import annotations

import json
import shutil

import pytest

from fcenv.data import DatasetError, load_tasks

COUNTS = {
    "simple_python": 400, "simple_java": 100, "simple_javascript": 50, "multiple": 200, "parallel": 200,
    "parallel_multiple": 200, "irrelevance": 240, "live_simple": 258, "live_multiple": 1053,
    "live_parallel": 16, "live_parallel_multiple": 24, "live_irrelevance": 884, "live_relevance": 16,
    "multi_turn_base": 200, "multi_turn_miss_func": 200, "multi_turn_miss_param": 200,
    "multi_turn_long_context": 200,
}


@pytest.mark.parametrize("category", sorted(COUNTS))
def test_every_category_loads(bfcl_dir, category):
    tasks = load_tasks(bfcl_dir / f"BFCL_v4_{category}.json")
    assert len(tasks) == COUNTS[category]
    assert {t.category for t in tasks} == {category}
    for task in tasks:
        assert task.question
        if task.kind in ("ast", "multi_turn"):
            assert task.functions and task.ground_truth is not None


def test_categories_and_languages_follow_bfcl(bfcl_dir):
    live = load_tasks(bfcl_dir / "BFCL_v4_live_simple.json")[0]
    assert live.id.startswith("live_simple_") and live.category == "live_simple" and live.kind == "ast"
    assert load_tasks(bfcl_dir / "BFCL_v4_simple_javascript.json")[0].language == "javascript"
    assert load_tasks(bfcl_dir / "BFCL_v4_simple_java.json")[0].language == "java"
    assert load_tasks(bfcl_dir / "BFCL_v4_live_relevance.json")[0].kind == "relevance"


def test_multi_turn_docs_and_held_out_functions(bfcl_dir):
    base = {t.id: t for t in load_tasks(bfcl_dir / "BFCL_v4_multi_turn_base.json")}
    miss = {t.id: t for t in load_tasks(bfcl_dir / "BFCL_v4_multi_turn_miss_func.json")}
    task = miss["multi_turn_miss_func_0"]
    held = task.missed_functions
    assert list(held) == [3] and [f["name"] for f in held[3]] == ["sort"]
    assert task.question[3] == []  # the turn on which BFCL announces the held-out docs
    names = {f["name"] for f in task.functions}
    assert "sort" not in names and "sort" in {f["name"] for f in base["multi_turn_base_0"].functions}
    assert task.involved_classes == ["GorillaFileSystem"] or "GorillaFileSystem" in task.involved_classes


def test_retired_sets_load(bfcl_dir):
    folder = bfcl_dir / "unused_datasets" / "question"
    exec_simple = load_tasks(folder / "BFCL_v4_exec_simple.json")
    assert exec_simple[0].ground_truth == [{"calc_binomial_probability": {"n": [20], "k": [5], "p": [0.6]}}]
    exec_multiple = {t.id: t for t in load_tasks(folder / "BFCL_v4_exec_multiple.json")}
    # p=1/6 is computed as BFCL's eval of the answer would
    assert exec_multiple["exec_multiple_0"].ground_truth[0]["calc_binomial_probability"]["p"] == [1 / 6]
    chatable = load_tasks(folder / "BFCL_v4_chatable.json")
    assert chatable[0].id == "chatable_0" and chatable[0].kind == "irrelevance" and chatable[0].functions == []
    sql = load_tasks(folder / "BFCL_v4_sql.json")
    assert len(sql[0].question) == 1 and sql[0].question[0][0]["role"] == "user"
    assert load_tasks(folder / "BFCL_v4_rest.json")[0].kind == "relevance"
    # The retired composite set holds 16 answers that are not Python (curly quotes, unclosed
    # strings): BFCL's own replay of them fails, so they are reported when the file loads.
    with pytest.warns(UserWarning, match="update_market_status"), pytest.raises(DatasetError) as caught:
        load_tasks(folder / "BFCL_v4_multi_turn_composite.json")
    problems = caught.value.problems
    assert all(p.field.startswith("ground_truth[") and p.line for p in problems)
    assert sum("cannot read the call" in p.message for p in problems) == 16
    # Many more call methods no class has (view_messages_received) or pass arguments the
    # methods do not take (send_message(sender_id=...)): no answer could pass them.
    assert all(p.message.startswith("no answer can pass") for p in problems if "cannot read the call" not in p.message)


def test_unsupported_files_say_why(bfcl_dir, tmp_path):
    with pytest.raises(DatasetError, match="format_sensitivity"):
        load_tasks(bfcl_dir / "BFCL_v4_format_sensitivity.json")
    with pytest.raises(DatasetError, match="web_search_base and web_search_no_snippet, which fcenv makes"):
        load_tasks(_web_search_renamed(bfcl_dir, tmp_path, "web_search_other"))


def _web_search_renamed(bfcl_dir, folder, category):
    """BFCL's first web-search entries, their ids in another category."""
    lines = (bfcl_dir / "BFCL_v4_web_search.json").read_text().splitlines()[:2]
    (folder / "BFCL_v4_web_search.json").write_text("\n".join(x.replace('"web_search_', f'"{category}_') for x in lines))
    return folder / "BFCL_v4_web_search.json"


def _copy_category(bfcl_dir, tmp_path, category):
    (tmp_path / "possible_answer").mkdir()
    name = f"BFCL_v4_{category}.json"
    shutil.copy(bfcl_dir / "possible_answer" / name, tmp_path / "possible_answer" / name)
    return tmp_path / name


def test_every_bad_entry_is_reported_at_once(bfcl_dir, tmp_path):
    path = _copy_category(bfcl_dir, tmp_path, "simple_python")
    lines = (bfcl_dir / "BFCL_v4_simple_python.json").read_text().splitlines()[:5]
    broken = [json.loads(x) for x in lines]
    broken[1]["function"][0]["parameters"]["properties"] = "oops"
    del broken[3]["question"]
    text = [json.dumps(e) for e in broken]
    text[2] = text[2][:-5]  # truncated JSON
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(DatasetError) as caught:
        load_tasks(path)
    problems = caught.value.problems
    assert len(problems) == 3
    assert (problems[0].line, problems[0].entry_id, problems[0].field) == (2, "simple_python_1", "function[0].parameters.properties")
    assert problems[1].line == 3 and "invalid JSON" in problems[1].message
    assert (problems[2].line, problems[2].entry_id, problems[2].field) == (4, "simple_python_3", "question")
    message = str(caught.value)
    assert str(path) in message and "line 2" in message and "'simple_python_1'" in message


def test_missing_answers_are_named(bfcl_dir, tmp_path):
    path = tmp_path / "BFCL_v4_simple_python.json"
    shutil.copy(bfcl_dir / "BFCL_v4_simple_python.json", path)
    with pytest.raises(DatasetError, match="possible_answer/BFCL_v4_simple_python.json"):
        load_tasks(path)
    (tmp_path / "other").mkdir()
    elsewhere = _copy_category(bfcl_dir, tmp_path / "other", "parallel")
    shutil.copy(bfcl_dir / "BFCL_v4_simple_python.json", elsewhere)  # answers hold other ids
    with pytest.raises(DatasetError, match="simple_python_0.*no answer for this id"):
        load_tasks(elsewhere)


def test_prior_format_needs_inline_answers(tmp_path):
    path = tmp_path / "prior.json"
    path.write_text(json.dumps([{"id": "simple_1", "question": [[{"role": "user", "content": "hi"}]], "function": []}]))
    with pytest.raises(DatasetError, match="ground_truth"):
        load_tasks(path)


def test_prior_format_spelling_of_involved_classes(bfcl_dir, tmp_path):
    entry = json.loads((bfcl_dir / "BFCL_v4_multi_turn_base.json").read_text().splitlines()[0])
    answer = json.loads((bfcl_dir / "possible_answer" / "BFCL_v4_multi_turn_base.json").read_text().splitlines()[0])
    entry["invoked_classes"] = entry.pop("involved_classes")
    entry["ground_truth"] = answer["ground_truth"]
    (tmp_path / "multi_turn_func_doc").symlink_to(bfcl_dir / "multi_turn_func_doc")
    path = tmp_path / "prior.json"
    path.write_text(json.dumps([entry]))
    (task,) = load_tasks(path)
    assert task.involved_classes == ["TwitterAPI", "GorillaFileSystem"] and len(task.functions) == 32


def test_loading_never_changes_the_data(bfcl_dir):
    path = bfcl_dir / "BFCL_v4_simple_java.json"
    raw = [json.loads(x) for x in path.read_text().splitlines()]
    tasks = load_tasks(path)
    assert [t.functions for t in tasks] == [e["function"] for e in raw]


def test_json_lines_end_at_newlines_only(tmp_path):
    """U+2028, U+0085 and form feed are legal inside JSON strings written with
    ensure_ascii=False; a line ends at "\\n" (or "\\r\\n") only."""
    folder = tmp_path / "data"
    (folder / "possible_answer").mkdir(parents=True)
    doc = {"name": "say", "description": "Say it.",
           "parameters": {"type": "dict", "properties": {"text": {"type": "string", "description": "t"}},
                          "required": ["text"]}}
    odd = "a\u2028b\u0085c\x0cd\u2029e"
    questions = [{"id": f"simple_python_{i}", "question": [[{"role": "user", "content": f"Say {odd} {i}"}]],
                  "function": [doc]} for i in range(3)]
    answers = [{"id": f"simple_python_{i}", "ground_truth": [{"say": {"text": [f"{odd} {i}"]}}]} for i in range(3)]
    (folder / "BFCL_v4_simple_python.json").write_text(
        "\r\n".join(json.dumps(q, ensure_ascii=False) for q in questions) + "\r\n", encoding="utf-8")
    (folder / "possible_answer" / "BFCL_v4_simple_python.json").write_text(
        "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8")
    tasks = load_tasks(folder / "BFCL_v4_simple_python.json")
    assert [t.line for t in tasks] == [1, 2, 3]
    assert tasks[2].question[0][0]["content"] == f"Say {odd} 2"


def _multi_turn_copy(bfcl_dir, tmp_path, change):
    """The first multi_turn_base entry and its answer in a folder of their own, changed."""
    (tmp_path / "possible_answer").mkdir()
    (tmp_path / "multi_turn_func_doc").symlink_to(bfcl_dir / "multi_turn_func_doc")
    name = "BFCL_v4_multi_turn_base.json"
    entry = json.loads((bfcl_dir / name).read_text().splitlines()[0])
    answer = json.loads((bfcl_dir / "possible_answer" / name).read_text().splitlines()[0])
    change(entry, answer)
    (tmp_path / name).write_text(json.dumps(entry) + "\n")
    (tmp_path / "possible_answer" / name).write_text(json.dumps(answer) + "\n")
    return tmp_path / name


def test_data_the_checkers_cannot_judge_is_refused_at_load(bfcl_dir, tmp_path):
    """What the checkers need is checked when the file loads, not when an episode meets it."""

    def unreadable(entry, answer):
        answer["ground_truth"][1][0] = "cd(folder='document'"

    def short(entry, answer):
        answer["ground_truth"] = answer["ground_truth"][:1]

    (tmp_path / "a").mkdir()
    with pytest.raises(DatasetError) as caught:
        load_tasks(_multi_turn_copy(bfcl_dir, tmp_path / "a", unreadable))
    (problem,) = caught.value.problems
    assert problem.file.endswith("possible_answer/BFCL_v4_multi_turn_base.json")
    assert (problem.line, problem.entry_id, problem.field) == (1, "multi_turn_base_0", "ground_truth[1][0]")
    assert "cd(folder='document'" in problem.message and "SyntaxError" in problem.message

    (tmp_path / "b").mkdir()
    with pytest.raises(DatasetError, match=r"multi_turn_base_0.*ground_truth.*1 turns of answers for \d turns"):
        load_tasks(_multi_turn_copy(bfcl_dir, tmp_path / "b", short))

    path = _copy_category(bfcl_dir, tmp_path, "simple_python")
    lines = (bfcl_dir / "BFCL_v4_simple_python.json").read_text().splitlines()[:5]
    entry = json.loads(lines[2])
    del entry["function"]
    lines[2] = json.dumps(entry)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as caught:
        load_tasks(path)
    (problem,) = caught.value.problems
    assert (problem.line, problem.entry_id, problem.field) == (3, "simple_python_2", "function")
