"""BFCL's memory categories in the env: loading BFCL's memory file, playing a question after its
scenario's prerequisite conversations, and judging the final answer.

With the oracle: the tasks equal the entries BFCL's loader makes (ids, prompts, functions,
prerequisite chains), and scripted episodes give what BFCL's inference loop and agentic runner
give on the same step texts (each conversation's opening messages, every call's result, the
memory each conversation leaves, the verdict), for the three backends (the vector one on a
shared table encoder, as in tests/backends/test_memory_parity.py). Without it: the episode's
shape (chats, rewards, snapshots, FC mode) and its refusals.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from fcenv.agentic.loading import memory_file_id
from fcenv.agentic.recorded import check_recorded_agentic
from fcenv.backends import memory_vector
from fcenv.data import load_tasks
from fcenv.env import FunctionCallingEnv
from fcenv.problems import DatasetError
from tests.support.memory_calls import embedding_table
from tests.support.memory_episodes import episode_request, play_ours, script

CATEGORIES = ["memory_kv", "memory_vector", "memory_rec_sum"]


@pytest.fixture(scope="module")
def memory_tasks(bfcl_dir):
    return load_tasks(bfcl_dir / "BFCL_v4_memory.json")


@pytest.fixture
def table_encoder(monkeypatch):
    """The vector memory on a lookup table instead of all-MiniLM-L6-v2 (shared with the oracle)."""
    table = embedding_table()

    def lookup(texts):
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"the vector memory embeds strings, not {type(text).__name__}")
        return np.asarray([table[text] for text in texts], dtype=np.float32).reshape(len(texts), 384)

    monkeypatch.setattr(memory_vector, "embed", lookup)
    return table


def test_the_memory_file_makes_bfcl_s_three_categories(memory_tasks):
    assert [t.category for t in memory_tasks] == [c for c in CATEGORIES for _ in range(155)]
    task = memory_tasks[0]
    assert task.id == "memory_kv_0-customer-0" and task.kind == "agentic" and task.ground_truth == ["Michael"]
    assert task.involved_classes == ["MemoryAPI_kv"] and task.initial_config == {"MemoryAPI_kv": {"scenario": "customer"}}
    assert [p["id"] for p in task.prerequisites][:2] == ["memory_kv_prereq_0-customer-0", "memory_kv_prereq_1-customer-1"]
    assert task.question[0][0]["role"] == "system" and task.question[0][1]["content"] == "What is my first name?"
    assert {f["name"] for f in memory_tasks[155].functions} >= {"core_memory_add", "archival_memory_retrieve"}


def test_each_category_s_entry_names_its_question_in_bfcl_s_file(memory_tasks, bfcl_dir):
    file_ids = [json.loads(line)["id"] for line in (bfcl_dir / "BFCL_v4_memory.json").read_text().splitlines()]
    assert [memory_file_id(t.id) for t in memory_tasks] == file_ids * 3
    assert memory_file_id("simple_python_0") == "simple_python_0"


def test_a_sample_of_the_memory_file_holds_every_scenario_with_its_prerequisites(bfcl_dir, tmp_path):
    """fcenv/bfcl_sample.py samples the memory file per scenario (the real model's card plays it)."""
    from fcenv.bfcl_sample import write_sample

    sample = write_sample(bfcl_dir, "memory", 2, tmp_path)
    tasks = load_tasks(sample)
    scenarios = {t.initial_config[t.involved_classes[0]]["scenario"] for t in tasks}
    assert scenarios == {"customer", "healthcare", "finance", "student", "notetaker"}
    assert len(tasks) == 3 * 2 * 5 and [t.category for t in tasks] == [c for c in CATEGORIES for _ in range(10)]
    whole = {t.id: t for t in load_tasks(bfcl_dir / "BFCL_v4_memory.json")}
    for task in tasks:
        assert task.ground_truth == whole[task.id].ground_truth and task.prerequisites == whole[task.id].prerequisites


@pytest.mark.oracle
@pytest.mark.parametrize("category", CATEGORIES)
def test_tasks_equal_bfcl_s_entries(oracle, memory_tasks, category):
    entries = oracle.run([{"op": "memory_entries", "category": category}])[0]["entries"]
    by_id = {e["id"]: e for e in entries}
    ours = [t for t in memory_tasks if t.category == category]
    assert len(ours) == len([e for e in entries if "prereq" not in e["id"]]) == 155
    for task in ours:
        entry = by_id[task.id]
        assert task.question == entry["question"], task.id
        assert task.functions == entry["function"], task.id
        assert task.involved_classes == entry["involved_classes"]
        assert [p["id"] for p in task.prerequisites] == entry["depends_on"], task.id
        for prerequisite in task.prerequisites:
            assert prerequisite["question"] == by_id[prerequisite["id"]]["question"], prerequisite["id"]


def _episode_problems(oracle, tasks, rng, embeddings=None):
    env = FunctionCallingEnv(tasks=tasks)
    scripts = [script(task, rng) for task in tasks]
    answers = oracle.run([episode_request(task, s, embeddings) for task, s in zip(tasks, scripts)])
    problems = []
    for task, turns, answer in zip(tasks, scripts, answers):
        ours = play_ours(env, task, turns)
        if ours["verdict"] != answer["verdict"]:
            problems.append(f"{task.id}: verdict ours {ours['verdict']} != reference {answer['verdict']}")
        # The same question recorded, as `fcenv evaluate` reads a BFCL result file.
        recorded = check_recorded_agentic(task, ours["recorded"], env.settings)
        if {"valid": recorded.valid, "error_type": recorded.error_type} != answer["verdict"]:
            problems.append(f"{task.id}: recorded verdict {recorded} != reference {answer['verdict']}")
        for index, (mine, ref) in enumerate(zip(ours["conversations"], answer["conversations"])):
            for key in ("opening", "results", "memory"):
                if mine[key] != ref[key]:
                    problems.append(f"{task.id}, conversation {index}: {key} ours {str(mine[key])[:300]} != "
                                    f"reference {str(ref[key])[:300]}")
        if len(ours["conversations"]) != len(answer["conversations"]):
            problems.append(f"{task.id}: {len(ours['conversations'])} conversations != {len(answer['conversations'])}")
    return problems


@pytest.mark.oracle
@pytest.mark.parametrize("category", ["memory_kv", "memory_rec_sum"])
def test_scripted_episodes_match_bfcl(oracle, memory_tasks, category):
    rng = random.Random(CATEGORIES.index(category))
    tasks = rng.sample([t for t in memory_tasks if t.category == category], 12)
    problems = _episode_problems(oracle, tasks, rng)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:15])


@pytest.mark.oracle
def test_scripted_vector_episodes_match_bfcl(oracle, memory_tasks, table_encoder):
    rng = random.Random(7)
    tasks = rng.sample([t for t in memory_tasks if t.category == "memory_vector"], 8)
    problems = _episode_problems(oracle, tasks, rng, table_encoder)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:15])


# ------------------------------------------------------------------------------ without the oracle


def _kv_task(memory_tasks, task_id="memory_kv_0-customer-0"):
    return next(t for t in memory_tasks if t.id == task_id)


def _play_prerequisites(env, task, writes=("[core_memory_add(key='first_name', value='Michael')]",)):
    """Write the given calls in the first turn of the first conversation, answer every other turn
    with prose; returns the last step's outcome (the question's opening)."""
    episode = env.unwrapped._episode
    pending = list(writes)
    while episode.is_prerequisite:
        text = pending.pop(0) if pending else "Noted."
        observation, reward, terminated, truncated, info = env.step(text)
        assert reward == 0.0 and not terminated and not truncated
    return observation, info


def test_a_question_is_asked_against_the_memory_its_prerequisites_left(memory_tasks):
    task = _kv_task(memory_tasks)
    env = FunctionCallingEnv(tasks=[task])
    observation, info = env.reset()
    assert info["messages"][0]["role"] == "system" and "There is no content in the core memory" in observation
    assert info["messages"][1]["content"] == task.prerequisites[0]["question"][0][0]["content"]
    observation, info = _play_prerequisites(env, task)
    # The question's own chat: the core memory in its system prompt, BFCL's answer format, the question.
    assert info["conversation"] == task.id and not info["prerequisite"]
    system = info["messages"][0]["content"]
    assert '"first_name": "Michael"' in system and "For your final answer to the user" in system
    assert [m["role"] for m in info["messages"]] == ["system", "user"]
    _, reward, terminated, _, info = env.step("[core_memory_retrieve(key='first_name')]")
    assert reward == 0.0 and info["results"] == ['{"value": "Michael"}']
    _, reward, terminated, truncated, info = env.step("{'answer': 'Michael', 'context': 'my core memory'}")
    assert terminated and not truncated and reward == 1.0 and info["valid"]


def test_a_wrong_or_missing_answer_is_a_verdict(memory_tasks):
    task = _kv_task(memory_tasks)
    env = FunctionCallingEnv(tasks=[task])
    env.reset()
    _play_prerequisites(env, task, writes=())
    _, reward, terminated, _, info = env.step("{'answer': 'I do not know', 'context': 'I do not know'}")
    assert terminated and reward == 0.0 and info["error_type"] == "agentic:answer_not_found"
    env.reset()
    _play_prerequisites(env, task, writes=())
    for _ in range(20):
        env.step("[core_memory_list_keys()]")
    _, reward, terminated, truncated, info = env.step("[core_memory_list_keys()]")
    assert truncated and not terminated and info["error_type"] == "agentic:no_last_message"


def test_a_forced_quit_prerequisite_still_leaves_its_memory(memory_tasks):
    task = _kv_task(memory_tasks)
    env = FunctionCallingEnv(tasks=[task], max_steps_per_turn=2)
    env.reset()
    env.step("[core_memory_add(key='first_name', value='Michael')]")
    env.step("[core_memory_list_keys()]")
    _, _, _, _, info = env.step("[core_memory_list_keys()]")  # the third step with calls: force quit
    assert info["force_quit"] and info["conversation_ended"] == task.prerequisites[0]["id"]
    assert '"first_name": "Michael"' in info["messages"][0]["content"]  # the next conversation shows it


def test_snapshots_restore_mid_chain(memory_tasks):
    task = _kv_task(memory_tasks)
    env = FunctionCallingEnv(tasks=[task])
    env.reset()
    env.step("[core_memory_add(key='first_name', value='Michael')]")
    snapshot = env.snapshot()
    env.step("[core_memory_clear()]")
    observation, _ = env.restore(snapshot)
    _, _, _, _, info = env.step("[core_memory_retrieve_all()]")
    assert info["results"] == ['{"first_name": "Michael"}']


def test_fc_mode_plays_a_memory_question(memory_tasks):
    task = _kv_task(memory_tasks)
    env = FunctionCallingEnv(tasks=[task], tool_format="hermes")
    _, info = env.reset()
    assert {t["function"]["name"] if "function" in t else t["name"] for t in info["tools"]} >= {"core_memory_add"}
    call = '<tool_call>\n{"name": "core_memory_add", "arguments": {"key": "first_name", "value": "Michael"}}\n</tool_call>'
    _, _, _, _, info = env.step(call)
    assert info["results"] == ['{"status": "Key-value pair added."}']
    _play_prerequisites(env, task, writes=())
    _, reward, terminated, _, info = env.step("{'answer': 'Michael', 'context': 'core memory'}")
    assert terminated and reward == 1.0


def test_rec_sum_and_vector_prompts(memory_tasks, table_encoder):
    rec_sum = next(t for t in memory_tasks if t.category == "memory_rec_sum")
    _, info = FunctionCallingEnv(tasks=[rec_sum]).reset()
    assert "There is no content in the memory at this point." in info["messages"][0]["content"]
    vector = next(t for t in memory_tasks if t.category == "memory_vector")
    _, info = FunctionCallingEnv(tasks=[vector]).reset()
    assert "Here is the content of your Core Memory from previous interactions:\n{}\n" in info["messages"][0]["content"]


def test_a_missing_encoder_is_said_at_reset(memory_tasks, monkeypatch, tmp_path):
    from fcenv.backends import sentence_encoder

    monkeypatch.setattr(sentence_encoder, "default_folder", lambda: tmp_path / "absent")
    vector = next(t for t in memory_tasks if t.category == "memory_vector")
    with pytest.raises(sentence_encoder.EncoderMissing, match="fcenv models all-minilm-l6-v2"):
        FunctionCallingEnv(tasks=[vector]).reset()


def test_a_damaged_encoder_is_named_at_reset_with_its_folder_and_repair(memory_tasks, minilm, monkeypatch, tmp_path):
    """A cut model.safetensors gave a raw SafetensorError naming no folder."""
    import shutil

    from fcenv.backends import sentence_encoder

    folder = shutil.copytree(minilm, tmp_path / "all-minilm-l6-v2")
    with (folder / "model.safetensors").open("r+b") as handle:
        handle.truncate(1_000_000)
    monkeypatch.setattr(sentence_encoder, "default_folder", lambda: folder)
    vector = next(t for t in memory_tasks if t.category == "memory_vector")
    with pytest.raises(sentence_encoder.EncoderDamaged, match=f"sentence encoder in {folder} does not load "
                                                              f"\\(SafetensorError: .*\\); fetch it again with "
                                                              f"`python -m fcenv models all-minilm-l6-v2`"):
        FunctionCallingEnv(tasks=[vector]).reset()
    assert "model.safetensors" in sentence_encoder.encoder_problem(folder)


def test_memory_categories_only_come_from_bfcl_s_memory_file(tmp_path, bfcl_dir):
    made = tmp_path / "BFCL_v4_memory_kv.json"
    made.write_text('{"id": "memory_kv_0-customer-0", "question": [[{"role": "user", "content": "hi"}]], '
                    '"involved_classes": ["MemoryAPI_kv"]}\n')
    with pytest.raises(DatasetError, match="BFCL_v4_memory.json"):
        load_tasks(made)
    odd = tmp_path / "BFCL_v4_memory.json"
    odd.write_text('{"id": "memory_0-nowhere-0", "question": [[{"role": "user", "content": "hi"}]], '
                   '"involved_classes": ["MemoryAPI"], "scenario": "nowhere"}\n')
    (tmp_path / "possible_answer").mkdir()
    (tmp_path / "possible_answer" / odd.name).write_text('{"id": "memory_0-nowhere-0", "ground_truth": ["x"]}\n')
    with pytest.raises(DatasetError, match="none of BFCL's memory scenarios"):
        load_tasks(odd)


def test_the_trainers_doors_refuse_a_chain_of_chats(memory_tasks):
    from fcenv.doors.core import Episode

    with pytest.raises(ValueError, match="chain of conversations"):
        Episode(FunctionCallingEnv(tasks=[_kv_task(memory_tasks)]), index=0)
