"""Training data in the formats people train on: converted into tasks fcenv's
checkers judge as BFCL does, checked against BFCL's test set, read from any source.

The samples (tests/support/source_samples.py) are written in each set's own record layout. For every
format: the sample converts, the answer the source recorded passes through ``env.step`` with
the full reward and a wrong one fails, and a bad record is reported with its file, line and
field and left out.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import fcenv
import fcenv.sources.resolve as resolve
from fcenv.data import DatasetError, load_tasks
from fcenv.sources import SOURCE_FORMATS, Dialogue, Turn, register_format
from fcenv.sources.convert import calls_text
from fcenv.sources.report import convert_source
from fcenv.handlers import Call
from tests.support.source_forms import task_contents, write_every_form
from tests.support.source_samples import FORMATS, OPENAI, XLAM

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Conversions on the fly go to a folder of the test's own, not the user's cache."""
    folder = tmp_path / "cache"
    monkeypatch.setattr(resolve, "CACHE_DIR", folder)
    return folder


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fcenv", *args], capture_output=True, text=True, cwd=cwd,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})


def verdict(env, task_id: str, text: str):
    _, info = env.reset(options={"id": task_id})
    _, reward, terminated, _, info = env.step(text)
    assert terminated
    return info["valid"], reward


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_converts_and_its_own_answers_pass(name, tmp_path):
    records, tasks, _ = FORMATS[name]
    source = write_jsonl(tmp_path / f"{name}.jsonl", records)
    conversion = convert_source(str(source))
    assert conversion.format == name and not conversion.left_out
    assert [e["id"] for e in conversion.entries] == [task_id for task_id, _, _ in tasks]
    # The env takes the source itself (converted on the fly) and judges with BFCL's rules.
    env = gym.make(fcenv.ENV_ID, dataset_path=str(source), reward="bfcl")
    for task_id, right, wrong in tasks:
        assert verdict(env, task_id, right) == (True, 1.0), (task_id, right)
        valid, reward = verdict(env, task_id, wrong)
        assert not valid and reward < 1.0, (task_id, wrong)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_bad_records_are_reported_with_file_line_and_field_and_left_out(name, tmp_path):
    records, tasks, bad = FORMATS[name]
    lines = [records[0]] + [record for record, _, _ in bad] + ["{this line is not JSON"]
    source = write_jsonl(tmp_path / f"{name}.jsonl", lines)
    conversion = convert_source(str(source))
    expected = [(str(source), 2 + i, field, kind) for i, (_, field, kind) in enumerate(bad)]
    expected.append((str(source), len(lines), None, "unreadable"))
    assert [(p.file, p.line, p.field, kind) for kind, p in conversion.left_out] == expected
    # The good record's tasks are kept, and no task comes from a bad record.
    assert {e["origin"]["line"] for e in conversion.entries} == {1}
    with pytest.warns(UserWarning, match=rf"{len(expected)} records left out"):
        env = gym.make(fcenv.ENV_ID, dataset_path=str(source))
    assert len(env.unwrapped.tasks) == len(conversion.entries)


def test_convert_writes_bfcl_files_that_load_without_fcenv_sources(tmp_path):
    """The files written are BFCL's layout: a question file with possible_answer/ beside it."""
    source = write_jsonl(tmp_path / "xlam.jsonl", XLAM)
    proc = run("data", "convert", str(source), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert "2 records -> 2 tasks (parallel 1, parallel_multiple 1)" in proc.stdout
    question_file = tmp_path / "out" / "xlam.json"
    answers = [json.loads(line) for line in (tmp_path / "out" / "possible_answer" / "xlam.json").read_text().splitlines()]
    assert answers[0] == {"id": "xlam_parallel_0", "ground_truth": [
        {"live_giveaways_by_type": {"type": ["beta"]}}, {"live_giveaways_by_type": {"type": ["game", ""]}}]}
    # JSON Schema types become BFCL's; the optional parameter the answer omits may be omitted
    # or given its default.
    assert answers[1]["ground_truth"][1]["find_n_largest_numbers"] == {"nums": [[7, 1, 9, 4]], "n": [3],
                                                                       "reverse": [False, ""]}
    docs = json.loads(question_file.read_text().splitlines()[1])["function"]
    assert docs[0]["parameters"]["properties"]["numbers"] == {"type": "array", "description": "The list of numbers.",
                                                             "items": {"type": "float"}}
    assert [t.id for t in load_tasks(question_file)] == ["xlam_parallel_0", "xlam_parallel_multiple_0"]


def test_schema_types_and_optional_parameters_judge_as_the_source_means(tmp_path):
    """number -> float accepts integers and floats, in lists too; a float without a fraction
    given for an integer is written as one; an optional parameter may be omitted, or given its
    default, and one the answer gives with another value must be given."""
    tool = {"name": "stats", "description": "Statistics.", "parameters": {"type": "object", "properties": {
        "values": {"type": "array", "items": {"type": "number"}},
        "count": {"type": "integer"},
        "label": {"type": ["string", "null"], "default": "all"},
        "round": {"type": "boolean"}},
        "required": ["values", "count"]}}
    record = {"messages": [{"role": "user", "content": "Stats of 1, 2.5 and 4, count 3."},
                           {"role": "assistant", "tool_calls": [{"type": "function", "function": {
                               "name": "stats", "arguments": {"values": [1, 2.5, 4], "count": 3.0, "round": None}}}]}],
              "tools": [tool]}
    env = gym.make(fcenv.ENV_ID, dataset_path=str(write_jsonl(tmp_path / "s.jsonl", [record])), reward="bfcl")
    cases = {
        "[stats(values=[1, 2.5, 4], count=3)]": True,
        "[stats(values=[1.0, 2.5, 4.0], count=3)]": True,
        "[stats(values=[1, 2.5, 4], count=3, label='all')]": True,
        "[stats(values=[1, 2.5, 4], count=3, label='odd')]": False,
        "[stats(values=[1, 2.5, 4], count=3.0)]": False,
        "[stats(values=[1, 2.5, 4], count=3, round=True)]": False,
        "[stats(values=[1, 2.5], count=3)]": False,
        "[stats(count=3)]": False,
    }
    for text, valid in cases.items():
        assert verdict(env, "openai_simple_0", text)[0] is valid, text


def test_names_a_python_call_cannot_hold_are_rewritten_alike_in_docs_and_answers(tmp_path):
    tool = {"name": "flights-search", "parameters": {"type": "object", "properties": {
        "from": {"type": "string"}, "$filter": {"type": "string"}}, "required": ["from"]}}
    record = {"messages": [{"role": "user", "content": "Flights from Oslo, direct only."},
                           {"role": "assistant", "tool_calls": [{"type": "function", "function": {
                               "name": "flights-search", "arguments": {"from": "Oslo", "$filter": "direct"}}}]}],
              "tools": [tool]}
    env = gym.make(fcenv.ENV_ID, dataset_path=str(write_jsonl(tmp_path / "n.jsonl", [record])), reward="bfcl")
    (task,) = env.unwrapped.tasks
    assert task.functions[0]["name"] == "flights_search"
    assert list(task.functions[0]["parameters"]["properties"]) == ["from_", "_filter"]
    assert verdict(env, task.id, "[flights_search(from_='Oslo', _filter='direct')]") == (True, 1.0)
    assert not verdict(env, task.id, "[flights_search(from_='Oslo')]")[0]


def test_steps_calls_keeps_only_the_steps_that_call(tmp_path):
    source = write_jsonl(tmp_path / "g.jsonl", FORMATS["glaive"][0])
    conversion = convert_source(str(source), steps="calls")
    assert [e["id"] for e in conversion.entries] == ["glaive_simple_0", "glaive_simple_1"]
    proc = run("data", "convert", str(source), "--out", str(tmp_path / "out"), "--steps", "calls")
    assert proc.returncode == 0 and "2 records -> 2 tasks (simple 2)" in proc.stdout, proc.stderr


def test_replayed_history_shows_each_mode_its_own_form(tmp_path):
    """A later step's question holds the earlier calls and the recorded results: as prompting
    text in BFCL's prompting mode, as tool_calls with ids in FC mode."""
    source = write_jsonl(tmp_path / "apigen.jsonl", FORMATS["apigen_mt"][0])
    prompting = gym.make(fcenv.ENV_ID, dataset_path=str(source))
    _, info = prompting.reset(options={"id": "apigen_mt_multiple_1"})
    call = [m for m in info["messages"] if m["role"] == "assistant" and m["content"].startswith("[")]
    assert [m["content"] for m in call] == ["[get_reservation_details(reservation_id='0U4NPP')]"]
    assert not any("tool_calls" in m for m in info["messages"])
    assert info["messages"][0]["content"].endswith("# Airline Agent Policy\nThe current time is 2024-05-15 15:00:00 "
                                                   "EST. As an airline agent, you can help users book, modify, or "
                                                   "cancel flight reservations.")
    fc = gym.make(fcenv.ENV_ID, dataset_path=str(source), tool_format="hermes")
    _, info = fc.reset(options={"id": "apigen_mt_multiple_1"})
    (step,) = [m for m in info["messages"] if m.get("tool_calls")]
    assert step["content"] == "" and step["tool_calls"][0]["function"] == {
        "name": "get_reservation_details", "arguments": {"reservation_id": "0U4NPP"}}
    result = info["messages"][info["messages"].index(step) + 1]
    assert result["role"] == "tool" and result["tool_call_id"] == step["tool_calls"][0]["id"]
    _, reward, _, _, info = fc.step('<tool_call>\n{"name": "cancel_reservation", "arguments": '
                                    '{"reservation_id": "0U4NPP"}}\n</tool_call>')
    assert info["valid"] and reward == 1.0


def test_a_format_of_your_own_is_one_function_and_one_registration(tmp_path, monkeypatch):
    # The registration lasts for this test only (other tests list the built-in formats).
    SOURCE_FORMATS.names()  # loads the built-in formats first
    monkeypatch.setattr(SOURCE_FORMATS, "_entries", dict(SOURCE_FORMATS._entries))

    @register_format("utterances", detect=lambda record: "utterance" in record)
    def read(record):
        return Dialogue(tools=record["apis"], turns=[
            Turn("user", record["utterance"], field="utterance"),
            Turn("assistant", calls=[Call(c["api"], c["args"]) for c in record["calls"]], field="calls",
                 call_fields=[f"calls[{i}]" for i in range(len(record["calls"]))])])

    record = {"utterance": "Ring Bob.", "calls": [{"api": "ring", "args": {"who": "Bob"}}],
              "apis": [{"name": "ring", "parameters": {"type": "object", "properties": {"who": {"type": "string"}},
                                                       "required": ["who"]}}]}
    env = gym.make(fcenv.ENV_ID, dataset_path=str(write_jsonl(tmp_path / "u.jsonl", [record])), reward="bfcl")
    assert verdict(env, "utterances_simple_0", "[ring(who='Bob')]") == (True, 1.0)
    assert not verdict(env, "utterances_simple_0", "[ring(who='Alice')]")[0]
    with pytest.raises(ValueError, match="without java"):
        register_format("javanese")


# --------------------------------------------------------------------------- decontamination


def test_decontamination_finds_a_planted_bfcl_question(bfcl_dir, tmp_path):
    """A BFCL test question planted in training data, word for word or inside a longer one,
    and one that asks BFCL's functions of another question, are found: `convert
    --decontaminate` drops them, `check` lists them (status 1)."""
    bfcl = json.loads((bfcl_dir / "BFCL_v4_simple_python.json").read_text().splitlines()[0])
    question, functions = bfcl["question"][0][0]["content"], bfcl["function"]
    tools = json.dumps([{"name": "area", "description": "Area.", "parameters": {"side": {"type": "int"}}}])
    answers = json.dumps([{"name": "area", "arguments": {"side": 3}}])
    records = [
        {"id": 0, "query": "What is the area of a square with side 3?", "answers": answers, "tools": tools},
        {"id": 1, "query": question, "answers": answers, "tools": tools},
        {"id": 2, "query": f"Hello there. {question.upper()} Thank you very much!", "answers": answers, "tools": tools},
        {"id": 3, "query": "Compute something for me, a triangle please.",
         "answers": json.dumps([{"name": functions[0]["name"], "arguments": {"base": 3, "height": 4}}]),
         "tools": json.dumps([{"name": f["name"], "description": f["description"], "parameters": {
             p: {"type": ("int" if s["type"] == "integer" else "str")
                 + ("" if p in f["parameters"]["required"] else ", optional"), "description": s["description"]}
             for p, s in f["parameters"]["properties"].items()}} for f in functions])},
    ]
    source = write_jsonl(tmp_path / "planted.jsonl", records)
    check = run("data", "check", str(source), "--bfcl_dir", str(bfcl_dir))
    assert check.returncode == 1, check.stderr
    assert "3 of the 4 tasks copy BFCL's test set: exact 1, function set 1, near 1" in check.stdout
    assert f"planted.jsonl, line 2, step 1, task 'xlam_simple_1': its question equals BFCL's {bfcl['id']}" in check.stdout
    assert f"line 3, step 1, task 'xlam_simple_2': its question nearly equals BFCL's {bfcl['id']}" in check.stdout
    assert "line 4, step 1, task 'xlam_simple_3': its function set equals BFCL's" in check.stdout
    out = tmp_path / "out"
    proc = run("data", "convert", str(source), "--out", str(out), "--decontaminate", "--bfcl_dir", str(bfcl_dir))
    assert proc.returncode == 0, proc.stderr
    assert [t.id for t in load_tasks(out / "planted.json")] == ["xlam_simple_0"]
    clean = run("data", "check", str(out / "planted.json"), "--bfcl_dir", str(bfcl_dir))
    assert clean.returncode == 0 and "0 of the 1 tasks copy BFCL's test set" in clean.stdout


def test_a_common_tool_alone_is_no_copy(bfcl_dir, tmp_path, capsys):
    """BFCL offers get_current_weather(location, unit) with about a hundred questions, most of
    them about something else: a training task offering it copies none of them unless its
    question shares a telling word with one, as a disguised copy does (the words around the
    values it changed)."""
    from fcenv.cli import main

    weather = {"type": "function", "function": {
        "name": "get_current_weather", "description": "Get the current weather in a given location.",
        "parameters": {"type": "object", "required": ["location"], "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}}

    def record(question: str, answer: dict) -> dict:
        return {"messages": [{"role": "user", "content": question}, {"role": "assistant", **answer}],
                "tools": [weather]}

    no_call = {"content": "I can only look up the weather."}
    records = [record("Book a table for two at an Italian restaurant tonight.", no_call),
               record("Remind me to water the plants tomorrow morning.", no_call),
               # BFCL's live_simple_9-3-5, "What's weather in Hyderabad in Fahrenheit", disguised
               record("What's weather in Oslo in Celsius", {"tool_calls": [{"type": "function", "function": {
                   "name": "get_current_weather", "arguments": {"location": "Oslo", "unit": "celsius"}}}]})]
    source = write_jsonl(tmp_path / "weather.jsonl", records)
    assert main(["data", "check", str(source), "--bfcl_dir", str(bfcl_dir)]) == 1
    out = capsys.readouterr().out
    assert "1 of the 3 tasks copy BFCL's test set: function set 1" in out, out
    (found,) = [line for line in out.splitlines() if "its function set equals BFCL's" in line]
    assert "line 3, step 1, task 'openai_simple_0'" in found and "'weather'" in found, found


def disguised(text: str, rng) -> str:
    """A BFCL question with its values changed: numbers, names after a lowercase word, quoted text."""
    names = ["Zorvath", "Quillon", "Brammel", "Tessaly", "Orinoq"]
    text = re.sub(r"\d+", lambda _: str(rng.randint(2, 999)), text)
    text = re.sub(r"(?<=[a-z,] )[A-Z][a-z]+", lambda _: rng.choice(names), text)
    return re.sub(r"'[^']{1,40}'", lambda _: f"'{rng.choice(names).lower()}'", text)


def test_decontamination_catches_disguised_copies_and_spares_common_tools(bfcl_dir):
    """Measured on BFCL's own data: disguised copies of its single-turn questions of five words
    or more are caught (by any test, the function set's included); unrelated questions offered
    the function sets BFCL asks most often are mostly not (the function set alone flagged all)."""
    import random

    from fcenv.data import read_records
    from fcenv.sources.decontaminate import BfclIndex, function_set, user_texts, words

    index, rng = BfclIndex.from_dir(bfcl_dir), random.Random(0)
    copies, offered = [], {}
    for file in sorted(bfcl_dir.glob("BFCL_v4_*.json")):
        entries = [r.value for r in read_records(file)[0] if isinstance(r.value, dict) and r.value.get("function")]
        for entry in entries if not re.search(r"format_sensitivity|multi_turn|memory|web_search", file.name) else []:
            if sum(len(words(text)) for text in user_texts(entry["question"])) >= 5:
                copies.append(([[dict(m, content=disguised(m["content"], rng)) if m["role"] == "user" else m
                                 for m in turn] for turn in entry["question"]], entry["function"]))
        for entry in entries:
            offered.setdefault(function_set(entry["function"]), []).append(entry["function"])
    caught = sum(index.match(question, functions) is not None for question, functions in copies)
    assert caught >= 0.98 * len(copies), (caught, len(copies))
    common = [docs[0] for docs in sorted(offered.values(), key=len, reverse=True)[:5]]
    questions = sorted({t.question[0][0]["content"] for t in load_tasks("varied_train")})
    questions = questions[::len(questions) // 300]  # every topic of the split
    flagged = sum(index.match([[{"role": "user", "content": q}]], functions) is not None
                  for q in questions for functions in common)
    assert flagged <= 0.1 * len(questions) * len(common), (flagged, len(questions) * len(common))


def test_a_common_tool_s_own_words_condemn_no_public_style_set(bfcl_dir, tmp_path, capsys):
    """The question "Is it going to be chilly in Reykjavik this evening? Tell me in
    celsius." asking get_current_weather(location, unit) was flagged as a copy of BFCL's
    live_simple_10-3-6 (it shares 'celsius', an enum value of the tool's, and 'tell'), and so
    were 1,499 of 2,397 tasks of a public-style set of weather questions that copies nothing
    of BFCL (harness/public_style_set.py, bench/bench_decontaminate.py). Its copies with other values, lowercase enum values
    included, are still found."""
    from fcenv.cli import main
    from harness.public_style_set import WEATHER, flagged

    tasks, found, _ = flagged(3000, bfcl_dir)
    assert tasks == 3000 and len(found) <= 0.005 * tasks, found[:5]

    def record(question: str, unit: str) -> dict:
        call = {"type": "function", "function": {"name": "get_current_weather",
                                                 "arguments": {"location": "Reykjavik", "unit": unit}}}
        return {"messages": [{"role": "user", "content": question}, {"role": "assistant", "tool_calls": [call]}],
                "tools": [WEATHER]}

    source = write_jsonl(tmp_path / "weather.jsonl", [
        record("Is it going to be chilly in Reykjavik this evening? Tell me in celsius.", "celsius"),
        # BFCL's live_simple_9-3-5, "What's weather in Hyderabad in Fahrenheit", with other values
        record("What's weather in Reykjavik in celsius", "celsius")])
    assert main(["data", "check", str(source), "--bfcl_dir", str(bfcl_dir)]) == 1
    out = capsys.readouterr().out
    assert "1 of the 2 tasks copy BFCL's test set: function set 1" in out, out
    (line,) = [line for line in out.splitlines() if "its function set equals BFCL's" in line]
    assert "line 2, step 1" in line and "live_simple_9-3-5, and its question is that entry's with other values" in line


def test_the_trainer_is_warned_of_bfcl_test_files(bfcl_dir):
    test_file = str(bfcl_dir / "BFCL_v4_simple_python.json")
    (warning,) = resolve.test_set_warnings(test_file)
    assert "is BFCL's test set (simple_python)" in warning
    assert len(resolve.test_set_warnings(f"tiny_train:2,{test_file}:1")) == 1
    assert resolve.test_set_warnings("tiny_train") == []


# --------------------------------------------------------------------------- any source


def test_a_saved_dataset_and_a_parquet_file_load(tmp_path):
    """`datasets`' save_to_disk folders and Parquet files, converted on the fly; the OpenAI
    records' nested tools and messages go through Arrow's struct columns (nulls for the keys a
    record lacks) and still judge the same."""
    from datasets import Dataset, DatasetDict

    xlam = Dataset.from_list(XLAM)
    xlam.save_to_disk(str(tmp_path / "xlam_saved"))
    DatasetDict({"train": xlam}).save_to_disk(str(tmp_path / "xlam_dict"))
    # One struct type per column: arguments as objects in every record, and a record whose tool
    # has parameters the others lack.
    timer = {"type": "function", "function": {"name": "set_timer", "description": "Start a timer.", "parameters": {
        "type": "object", "properties": {"minutes": {"type": "integer", "description": "Length."}},
        "required": ["minutes"]}}}
    records = [OPENAI[0], {"messages": [dict(m, tool_calls=[{"type": "function", "function": {
        "name": "control_light", "arguments": json.loads(m["tool_calls"][0]["function"]["arguments"])}}])
        if m.get("tool_calls") else m for m in OPENAI[1]["messages"]], "tools": OPENAI[1]["tools"]},
        {"messages": [{"role": "user", "content": "A timer for 5 minutes."}, {"role": "assistant", "tool_calls": [
            {"type": "function", "function": {"name": "set_timer", "arguments": {"minutes": 5}}}]}], "tools": [timer]}]
    Dataset.from_list(records).to_parquet(str(tmp_path / "openai.parquet"))
    for path, ids in ((tmp_path / "xlam_saved", ["xlam_parallel_0", "xlam_parallel_multiple_0"]),
                      (tmp_path / "xlam_dict", ["xlam_parallel_0", "xlam_parallel_multiple_0"]),
                      (tmp_path / "openai.parquet", ["openai_simple_0", "openai_irrelevance_0", "openai_simple_1",
                                                     "openai_simple_2"])):
        assert [t.id for t in load_tasks(path)] == ids
    env = gym.make(fcenv.ENV_ID, dataset_path=str(tmp_path / "openai.parquet"), reward="bfcl")
    assert verdict(env, "openai_simple_0", "[control_light(room='living room', state='on')]") == (True, 1.0)
    assert not verdict(env, "openai_simple_1", "[control_light(room='kitchen', state='on')]")[0]
    assert verdict(env, "openai_simple_2", "[set_timer(minutes=5)]") == (True, 1.0)
    assert not verdict(env, "openai_simple_2", "[set_timer(minutes=5, room='hall')]")[0]


def test_the_same_records_give_the_same_tasks_from_every_file_form(tmp_path):
    """Arrow (Parquet, save_to_disk) fills a key one object of a list lacks with null, and turns
    a column's integers into floats when one of its numbers has a fraction: the tasks are those
    of the JSON Lines file all the same, and each record's own call passes on its own task."""
    order = {"type": "function", "function": {"name": "order", "description": "Order items.", "parameters": {
        "type": "object", "required": ["items"], "properties": {
            "items": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "qty": {"type": "integer"}}}},
            "options": {"type": "object", "properties": {"gift": {"type": "boolean"}, "note": {"type": "string"}}},
            "tip": {"type": "number"}}}}}

    def record(arguments: dict) -> dict:
        return {"messages": [{"role": "user", "content": "Order, please."}, {"role": "assistant", "tool_calls": [
            {"type": "function", "function": {"name": "order", "arguments": arguments}}]}], "tools": [order]}

    records = [record({"items": [{"name": "tea", "qty": 2}, {"name": "cake"}], "options": {"gift": True}, "tip": 2}),
               record({"items": [{"name": "jam"}], "options": {"note": "ring twice"}, "tip": 1.5})]
    forms = write_every_form(records, tmp_path / "forms")
    expected = task_contents(forms[0])
    for path in forms[1:]:
        assert task_contents(path) == expected, path.name
    own_calls = {"openai_simple_0": "[order(items=[{'name': 'tea', 'qty': 2}, {'name': 'cake'}], "
                                    "options={'gift': True}, tip=2)]",
                 "openai_simple_1": "[order(items=[{'name': 'jam'}], options={'note': 'ring twice'}, tip=1.5)]"}
    for path in forms:
        env = gym.make(fcenv.ENV_ID, dataset_path=str(path), reward="bfcl")
        for task_id, call in own_calls.items():
            assert verdict(env, task_id, call) == (True, 1.0), (path.name, task_id)


def test_a_conversion_is_cached_by_content(tmp_path, cache):
    source = write_jsonl(tmp_path / "x.jsonl", XLAM)
    first = resolve.resolve_dataset(source)
    assert first.parent.parent == cache and first.name == "x.json"
    assert resolve.resolve_dataset(source) == first
    write_jsonl(source, XLAM[:1])  # new bytes, a new conversion
    second = resolve.resolve_dataset(source)
    assert second != first and [t.id for t in load_tasks(second)] == ["xlam_parallel_0"]
    assert resolve.resolve_dataset("tiny_train").name == "tiny_train.json"  # BFCL files are used as they are


def test_several_sources_mix_with_weights(tmp_path):
    xlam = write_jsonl(tmp_path / "x.jsonl", XLAM)  # 2 tasks
    glaive = write_jsonl(tmp_path / "g.jsonl", FORMATS["glaive"][0])  # 5 tasks
    tasks = load_tasks(f"{xlam}:3,{glaive}")
    assert len(tasks) == 7  # as many as the parts together
    sources = [t.category.split("_")[0] for t in tasks]
    assert sources.count("xlam") == 5 and sources.count("glaive") == 2  # 3:1 of 7, rounded
    assert len({t.id for t in tasks}) == 7
    env = gym.make(fcenv.ENV_ID, dataset_path=f"{xlam}:3,{glaive}", reward="bfcl")
    parallel = [t.id for t in env.unwrapped.tasks if t.category == "xlam_parallel"]
    assert verdict(env, parallel[0], "[live_giveaways_by_type(type='beta'), live_giveaways_by_type()]") == (True, 1.0)
    mixed_with_bfcl = load_tasks(f"{xlam}:1,tiny_eval:1")
    assert len(mixed_with_bfcl) == 152 and sum(t.category.startswith("xlam") for t in mixed_with_bfcl) == 76
    with pytest.raises(DatasetError, match="no such file"):
        load_tasks(f"{xlam}:1,{tmp_path / 'missing.jsonl'}:2")


@pytest.mark.parametrize("weight", ["-1", "abc", "1e2", "0", "nan"])
def test_a_mistyped_weight_is_named_with_its_part(tmp_path, weight):
    """The file exists; what follows its colon is a bad weight, not part of a file name."""
    xlam = write_jsonl(tmp_path / "x.jsonl", XLAM)
    for spec in (f"{xlam}:{weight},tiny_train", f"{xlam}:{weight}"):
        with pytest.raises(DatasetError) as caught:
            load_tasks(spec)
        (problem,) = caught.value.problems
        assert problem.file == str(xlam) and f"bad weight {weight!r}" in problem.message, problem
        assert "no such file" not in str(caught.value)


def test_records_a_part_leaves_out_are_reported_every_time(bfcl_dir, tmp_path, capsys):
    """A mix converts its sources once; `data check` on it lists what they left out on every
    run, the cache warm or not, `convert --strict` refuses it, and each conversion warns."""
    from fcenv.cli import main

    source = write_jsonl(tmp_path / "x.jsonl", XLAM + [XLAM[0] | {"answers": "[{"}])
    spec = f"{source}:2,tiny_eval"
    left_out = f"{source}, line 3, entry '0', field 'answers': invalid JSON"
    for _ in range(2):
        assert main(["data", "check", spec, "--bfcl_dir", str(bfcl_dir)]) == 1
        out = capsys.readouterr().out
        assert "1 record left out: unreadable 1" in out and left_out in out, out
    assert main(["data", "convert", spec, "--out", str(tmp_path / "out"), "--strict"]) == 2
    assert left_out in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    for _ in range(2):
        with pytest.warns(UserWarning, match=r"x\.jsonl: 1 record left out \(unreadable 1\)"):
            resolve.converted(source, resolve.CACHE_DIR)


def test_a_mix_judges_by_its_parts_possible_answers_as_they_are_now(tmp_path):
    """A mix is written once to the cache, which every later process reads: editing a BFCL
    part's possible answer (its question file untouched) makes the mix anew."""
    bfcl = tmp_path / "bfcl"
    (bfcl / "possible_answer").mkdir(parents=True)
    doc = {"name": "area", "description": "Area of a square.", "parameters": {
        "type": "dict", "properties": {"side": {"type": "integer", "description": "Side."}}, "required": ["side"]}}
    question = bfcl / "BFCL_v4_simple_python.json"
    question.write_text(json.dumps({"id": "simple_python_0", "question": [[{"role": "user", "content": "Area?"}]],
                                    "function": [doc]}) + "\n")
    spec = f"{question}:1,{write_jsonl(tmp_path / 'x.jsonl', XLAM)}:1"
    for side in (3, 4):
        (bfcl / "possible_answer" / question.name).write_text(json.dumps(
            {"id": "simple_python_0", "ground_truth": [{"area": {"side": [side]}}]}) + "\n")
        env = gym.make(fcenv.ENV_ID, dataset_path=spec, reward="bfcl")
        area = next(t.id for t in env.unwrapped.tasks if t.category == "simple_python")
        assert verdict(env, area, f"[area(side={side})]") == (True, 1.0), side
        assert not verdict(env, area, f"[area(side={7 - side})]")[0], side


def test_convert_misuse_exits_2_in_one_line(tmp_path):
    source = write_jsonl(tmp_path / "x.jsonl", XLAM)
    (tmp_path / "a_file").write_text("")
    cases = [
        (["data", "convert", str(source), "--out", str(tmp_path / "o"), "--format", "nope"], "--format: unknown source"),
        (["data", "convert", str(source), "--out", str(tmp_path / "a_file")], "is a file"),
        (["data", "convert", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")], "no such file"),
        (["data", "convert", str(write_jsonl(tmp_path / "odd.jsonl", [{"a": 1}])), "--out", str(tmp_path / "o")],
         "line 1: not in a known source format"),
        (["data", "convert", str(write_jsonl(tmp_path / "b.jsonl", XLAM + [XLAM[0] | {"answers": "[{"}])), "--out",
          str(tmp_path / "o"), "--strict"], "b.jsonl, line 3, entry '0', field 'answers': invalid JSON"),
    ]
    for args, message in cases:
        proc = run(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "o").exists()


def _without_enums(functions: list[dict]) -> list[dict]:
    return [{**doc, "parameters": {**doc["parameters"], "properties": {
        name: {k: v for k, v in spec.items() if k != "enum"} for name, spec in doc["parameters"]["properties"].items()}}}
        for doc in functions]


def _rules(task) -> tuple:
    """What decides a verdict besides the docs and answers: BFCL's checker picks by these."""
    return task.kind, task.language, "parallel" in task.category, "multiple" in task.category


def _answers(task) -> tuple[str, ...]:
    """The task's own answer, the same calls in reverse order, and one with an argument left out."""
    calls = [Call(name, {k: v[0] for k, v in arguments.items()}) for c in task.ground_truth for name, arguments in c.items()]
    first = calls[0]
    dropped = Call(first.name, dict(list(first.arguments.items())[:-1]))
    return calls_text(calls), calls_text(calls[::-1]), calls_text([dropped, *calls[1:]])


def test_the_xlam_like_generator_rewrites_tiny_train_and_converts_back_to_it(tmp_path):
    """datasets/tiny/make_xlam_like.py writes tiny_train's tasks in xLAM's layout; converted
    (here on the fly, as --dataset_path does), they are tiny_train's tasks again: the same
    questions in the same order, answers and docs (less the enums xLAM's layout cannot hold), and
    the same verdicts and rewards for right, reordered and wrong answers. Training on the
    converted file is then training on the bundled split (docs/benchmarks/learning.md, "Training on converted data")."""
    out = tmp_path / "xlam_like.jsonl"
    subprocess.run([sys.executable, str(ROOT / "datasets" / "tiny" / "make_xlam_like.py"), "--out", str(out)],
                   check=True, capture_output=True)
    first = json.loads(out.read_text().splitlines()[0])
    assert sorted(first) == ["answers", "id", "query", "tools"] and isinstance(first["tools"], str)
    assert json.loads(first["tools"])[0]["parameters"]  # parameters by name, xLAM's way
    converted, bundled = load_tasks(out), load_tasks("tiny_train")
    assert len(converted) == len(bundled) == 900
    ours, theirs = gym.make(fcenv.ENV_ID, dataset_path=str(out)), gym.make(fcenv.ENV_ID, dataset_path="tiny_train")
    for task, original in zip(converted, bundled):
        assert task.question == original.question and task.ground_truth == original.ground_truth
        assert task.functions == _without_enums(original.functions) and _rules(task) == _rules(original)
        for text in _answers(task):
            assert verdict(ours, task.id, text) == verdict(theirs, original.id, text), (task.id, text)
    assert verdict(ours, converted[0].id, _answers(converted[0])[2])[0] is False  # a dropped argument fails


def test_the_xlam_like_generator_draws_new_questions_none_held_out(tmp_path):
    """--draw N: N new questions from tiny's templates, none of them a question of tiny_eval,
    every task judged on the bundled functions' types."""
    out = tmp_path / "xlam_like.jsonl"
    subprocess.run([sys.executable, str(ROOT / "datasets" / "tiny" / "make_xlam_like.py"), "--out", str(out),
                    "--draw", "60"], check=True, capture_output=True)
    tasks = load_tasks(out)
    held_out = {t.question[0][0]["content"] for t in load_tasks("tiny_eval")}
    assert len(tasks) == 60 and not held_out & {t.question[0][0]["content"] for t in tasks}
    bundled = {f["name"]: f["parameters"]["properties"] for t in load_tasks("tiny_train") for f in t.functions}
    for task in tasks:
        for doc in task.functions:
            assert {p: s["type"] for p, s in doc["parameters"]["properties"].items()} == \
                {p: s["type"] for p, s in bundled[doc["name"]].items()}


def test_the_trainer_takes_a_source_mixed_with_a_bfcl_test_file_and_warns(tiny_model, bfcl_dir, tmp_path):
    """`--dataset_path` takes a mix of a source and a BFCL file; the run trains on the mix's
    converted file (named after it), and says that a part of it is BFCL's test set."""
    from tests.support.runs import SCRIPT, tiny_flags

    source = write_jsonl(tmp_path / "xlam.jsonl", XLAM)
    test_file = bfcl_dir / "BFCL_v4_simple_python.json"
    home = tmp_path / "home"  # the conversion cache of the run's own user
    proc = subprocess.run([sys.executable, str(SCRIPT), *tiny_flags(tiny_model, tmp_path / "results"),
                           "--dataset_path", f"{source}:1,{test_file}:1", "--num_env_steps", "2", "--eval_interval", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "HOME": str(home)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"warning: {test_file} is BFCL's test set (simple_python)" in proc.stdout
    (args_file,) = (tmp_path / "results").glob(f"default/{tiny_model.name}/mix/TPPO/run1/args.json")
    train_path = Path(json.loads(args_file.read_text())["resolved"]["train_path"])
    assert train_path.name == "mix.json" and train_path.is_relative_to(home / ".cache" / "fcenv" / "sources")
    categories = {t.category for t in load_tasks(train_path)}
    assert {"xlam_parallel", "xlam_parallel_multiple", "simple_python"} == categories
