"""Fuzzing the files and flags a user hands us: malformed datasets, result files and flag values.

Properties, on every generated input:

- a dataset either loads, and then every entry can be played and judged (reset, a step with
  its ground truth, a step with prose) without an exception, or it is refused with a
  ``DatasetError`` whose every problem names the file (and the line, id and field where
  there is one); never another exception;
- an entry that loads without being reported (a ``DatasetWarning`` naming it) can be passed:
  its own ground truth passes, or, single-turn, fails only on a value or a type the mutation
  changed, never on a function or parameter the docs lack;
- a result file either gives one verdict per line or is refused the same way;
- a flag value either parses to a usable setting (finite numbers) or ends the parse with exit
  status 2 and a message naming the flag.

Inputs start from real BFCL entries (two single-turn, one multi-turn, with their answers) and
change one or two things: a field deleted, a value of another type, a name changed (a key,
or the function a ground-truth call names), JSON cut short, garbage, a line doubled, deep
nesting.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import warnings

from hypothesis import given, note
from hypothesis import strategies as st

from fcenv.algos.config import TrainConfig, build_parser, parse_config
from fcenv.data import DatasetError, DatasetWarning, load_tasks
from fcenv.env import FunctionCallingEnv
from fcenv.episode import EpisodeSettings
from fcenv.evaluate import evaluate, read_results
from fcenv.rewards import get_reward_fn
from harness.strategies import fuzz_settings

SIMPLE, MULTI = "BFCL_v4_simple_python.json", "BFCL_v4_multi_turn_base.json"
ODD_VALUES = [None, 0, -1, 2.5, True, "", "x", [], {}, [[]], {"a": 1}, "cd(folder='x'", [1, "two"],
              {"role": "user"}, "\u2028", 10**30]


def entries(bfcl_dir, name, count):
    questions = [json.loads(x) for x in (bfcl_dir / name).read_text().splitlines()[:count]]
    answers = [json.loads(x) for x in (bfcl_dir / "possible_answer" / name).read_text().splitlines()[:count]]
    return questions, answers


def paths_in(value, prefix=()):
    """Every path to a value inside a JSON tree."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_in(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths_in(item, (*prefix, index))


def mutate_tree(draw, value):
    """One change inside an entry: a value replaced, a key deleted or renamed, the function a
    call string names renamed, or deep nesting."""
    value = json.loads(json.dumps(value))
    paths = [p for p in paths_in(value) if p]
    path = draw(st.sampled_from(paths))
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    how = draw(st.sampled_from(["replace", "delete", "nest", "rename", "rename"]))
    if how == "delete":
        del parent[path[-1]]
    elif how == "nest":
        parent[path[-1]] = json.loads("[" * 50 + "1" + "]" * 50)
    elif how == "rename" and isinstance(parent, dict):  # a name a user may mistype: a parameter, a function
        parent[path[-1] + "_x"] = parent.pop(path[-1])
    elif how == "rename" and isinstance(parent[path[-1]], str):  # "cd(folder='x')" -> "cd_x(folder='x')"
        parent[path[-1]] = re.sub(r"^(\w+)\(", r"\1_x(", parent[path[-1]])
    else:
        parent[path[-1]] = draw(st.sampled_from(ODD_VALUES))
    return value


def mutate_lines(draw, lines):
    """One change to the file's text: a line cut short, garbage, a doubled or blank line."""
    lines = list(lines)
    index = draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(["cut", "garbage", "double", "blank", "deep", "array"]))
    if how == "cut":
        lines[index] = lines[index][: draw(st.integers(0, max(0, len(lines[index]) - 1)))]
    elif how == "garbage":
        lines[index] = draw(st.text(min_size=1, max_size=20).filter(lambda s: "\n" not in s))
    elif how == "double":
        lines.insert(index, lines[index])
    elif how == "blank":
        lines.insert(index, "   ")
    elif how == "deep":
        lines[index] = "[" * 100_000 + "]" * 100_000
    else:
        return ["["] + [line + "," for line in lines[:-1]] + [lines[-1], "]"]
    return lines


def assert_named(error: DatasetError, files):
    assert error.problems
    for problem in error.problems:
        assert problem.file in files, problem
        assert problem.message
    text = str(error)
    assert "Traceback" not in text and any(f in text for f in files)


def test_malformed_datasets_are_refused_or_playable(bfcl_dir, tmp_path_factory):
    simple_q, simple_a = entries(bfcl_dir, SIMPLE, 2)
    multi_q, multi_a = entries(bfcl_dir, MULTI, 1)
    ran = loaded = passable = 0

    @fuzz_settings(1500)
    @given(st.data())
    def holds(data):
        nonlocal ran, loaded, passable
        folder = tmp_path_factory.mktemp("data")
        (folder / "possible_answer").mkdir()
        (folder / "multi_turn_func_doc").symlink_to(bfcl_dir / "multi_turn_func_doc")
        name, questions, answers = data.draw(st.sampled_from([(SIMPLE, simple_q, simple_a), (MULTI, multi_q, multi_a)]))
        questions, answers = [dict(q) for q in questions], [dict(a) for a in answers]
        side = data.draw(st.sampled_from(["question", "answer"]))
        rows = questions if side == "question" else answers
        index = data.draw(st.integers(0, len(rows) - 1))
        rows[index] = mutate_tree(data.draw, rows[index])
        question_lines = [json.dumps(q, ensure_ascii=False) for q in questions]
        answer_lines = [json.dumps(a, ensure_ascii=False) for a in answers]
        if data.draw(st.booleans()):
            if side == "question":
                question_lines = mutate_lines(data.draw, question_lines)
            else:
                answer_lines = mutate_lines(data.draw, answer_lines)
        files = (folder / name, folder / "possible_answer" / name)
        files[0].write_text("\n".join(question_lines) + "\n", encoding="utf-8")
        files[1].write_text("\n".join(answer_lines) + "\n", encoding="utf-8")
        note(f"{side} {index}: {question_lines if side == 'question' else answer_lines}")
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", DatasetWarning)
                tasks = load_tasks(files[0])
        except DatasetError as error:
            assert_named(error, {str(f) for f in files})
        else:
            loaded += 1
            reported = {t.id for t in tasks for w in caught if f"entry {t.id!r}" in str(w.message)}
            answerable = play_every_entry(tasks, reported)
            passable += answerable
        ran += 1
        shutil.rmtree(folder)

    holds()
    assert ran >= 1500 and 0 < loaded < ran and passable > 300


# The verdicts of a ground truth that names what the docs lack: the loader refuses or reports that.
NAME_OR_PARAMETER_ERRORS = {"simple_function_checker:wrong_func_name", "simple_function_checker:unexpected_param",
                            "simple_function_checker:missing_required", "simple_function_checker:missing_optional"}


def passing_answer(task) -> str:
    """The possible answer as a call: the first acceptable value of each parameter it needs,
    and none of those it may leave out (``""`` acceptable)."""
    calls = []
    for call in task.ground_truth:
        (name, params), = call.items()
        calls.append(f"{name}({', '.join(f'{k}={v[0]!r}' for k, v in params.items() if v and '' not in v)})")
    return "[" + ", ".join(calls) + "]"


def play_every_entry(tasks, reported: set[str] = frozenset()) -> int:
    """Plays each entry's ground truth (then prose); the entries whose ground truth passed."""
    from harness.trajectories import ground_truth_steps

    env = FunctionCallingEnv(tasks=tasks, reward="shaped")
    passed = 0
    for index, task in enumerate(tasks):
        env.reset(options={"index": index})
        if task.is_multi_turn:
            texts = [s for turn in ground_truth_steps(task) for s in turn]
        else:
            texts = [passing_answer(task)] if task.kind == "ast" else ["No call fits."]
        done = False
        for text in texts + ["I cannot help with that."] * 3:
            if done:
                break
            _, reward, terminated, truncated, info = env.step(text)
            assert 0.0 <= reward <= 1.0 and isinstance(info["valid"], bool)
            done = terminated or truncated
        passed += info["valid"]
        if task.id in reported or task.kind not in ("ast", "multi_turn"):
            continue
        # An entry that loaded unreported can be passed by its own ground truth.
        if task.is_multi_turn:
            assert info["valid"], (task.id, info["error_type"], info["errors"])
        else:
            assert info["error_type"] not in NAME_OR_PARAMETER_ERRORS, (task.id, info["error_type"], info["errors"])
    return passed


def test_malformed_result_files_are_refused_or_judged(bfcl_dir, tmp_path_factory):
    data = bfcl_dir / SIMPLE
    tasks = {t.id: t for t in load_tasks(data)}
    multi = {t.id: t for t in load_tasks(bfcl_dir / MULTI)}
    good = [{"id": "simple_python_0", "result": "[calculate_triangle_area(base=10, height=5)]"},
            {"id": "simple_python_1", "result": "no idea"}]
    good_multi = [{"id": "multi_turn_base_0", "result": [["[ls()]", "done"], ["x"], [], ["[cd(folder='a')]"]]}]
    ran = judged = 0

    @fuzz_settings(1000)
    @given(st.data())
    def holds(data):
        nonlocal ran, judged
        is_multi = data.draw(st.booleans())
        by_id, rows = (multi, good_multi) if is_multi else (tasks, good)
        rows = [mutate_tree(data.draw, row) if data.draw(st.booleans()) else row for row in rows]
        lines = [json.dumps(r, ensure_ascii=False) for r in rows]
        if data.draw(st.booleans()):
            lines = mutate_lines(data.draw, lines)
        path = tmp_path_factory.mktemp("results") / "r.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        note(repr(lines))
        try:
            results = read_results(path, by_id)
        except DatasetError as error:
            assert_named(error, {str(path)})
        else:
            verdicts = list(evaluate(by_id.values(), results, EpisodeSettings(), get_reward_fn("shaped"), "auto"))
            assert len(verdicts) == len(results) and all(isinstance(v["valid"], bool) for v in verdicts)
            judged += 1
        ran += 1

    holds()
    assert ran >= 1000 and 0 < judged < ran


FLAG_VALUES = ["0", "-1", "1", "2.5", "nan", "inf", "-inf", "1e308", "1e999", "x", "", "True", "-0", "0x10",
               "q_proj", "fcenv/FunctionCalling-v0", "CartPole-v1", "TPPO", "grpo", "turn", "  3 "]


def test_flag_values_parse_to_usable_settings_or_exit_2(capsys):
    fields = {f.name: f for f in TrainConfig.__dataclass_fields__.values()}
    options = {a.dest: a.option_strings[0] for a in build_parser()._actions if a.option_strings and a.dest in fields}
    flags = sorted(options)
    ran = refused = 0

    @fuzz_settings(1500)
    @given(st.lists(st.tuples(st.sampled_from(flags), st.sampled_from(FLAG_VALUES)), min_size=1, max_size=3))
    def holds(chosen):
        nonlocal ran, refused
        argv = [f"{options[name]}={value}" for name, value in chosen]
        note(repr(argv))
        try:
            config = parse_config(argv)
        except SystemExit as stop:
            assert stop.code == 2
            message = capsys.readouterr().err
            assert "error:" in message and "--" in message and "Traceback" not in message
            refused += 1
        else:
            for name, value in vars(config).items():
                if isinstance(value, float):
                    assert math.isfinite(value), (name, value)
                if isinstance(value, int) and not isinstance(value, bool) and name != "seed":
                    assert value >= 0, (name, value)
        ran += 1

    holds()
    assert ran >= 1500 and 0 < refused < ran
