"""The core every trainer's door shares (fcenv.doors): an episode as messages, tools and
step(text), and the same episode as one token sequence whose env tokens are masked."""

from __future__ import annotations

import json

import pytest

from fcenv.algos.model.loading import load_tokenizer
from fcenv.algos.tiny.build import MULTI_TURN_TRAIN, TINY_SYSTEM_PROMPT
from fcenv.data import load_tasks
from fcenv.doors.core import Episode, make_env
from fcenv.doors.tokens import ChatTemplate, TokenEpisode
from fcenv.tool_formats import get_tool_format
from harness.trajectories import ground_truth_steps

CATEGORIES = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"]


def play(episode: Episode, turns: list[list[str]]) -> list:
    return [episode.step(text) for texts in turns for text in texts if not episode.done]


@pytest.mark.parametrize("reward", ["bfcl", "shaped", "steps"])
def test_ground_truth_earns_one_and_a_wrong_call_less_in_every_multi_turn_category(bfcl_dir, reward):
    for category in CATEGORIES:
        path = bfcl_dir / f"BFCL_v4_{category}.json"
        env = make_env(path, reward=reward)
        task = load_tasks(path)[3]
        episode = Episode(env, task_id=task.id)
        assert episode.messages[0]["role"] == "system" and episode.messages[-1] == task.question[0][-1]
        steps = play(episode, ground_truth_steps(task))
        assert episode.done and episode.valid and episode.reward == pytest.approx(1.0), (category, episode.info)
        assert sum(step.reward for step in steps) == pytest.approx(episode.reward)
        # Calls bring their results, a turn's end the next request (the last turn's, nothing).
        assert any(s.messages and all(m["role"] == "tool" for m in s.messages) for s in steps)
        assert any(s.messages and s.messages[-1]["role"] == "user" for s in steps) and steps[-1].messages == []
        turns = ground_truth_steps(task)
        first = next(i for i, calls in enumerate(task.ground_truth) if calls)
        wrong = Episode(env, task_id=task.id)  # the first turn that needs calls answered without them
        play(wrong, turns[:first] + [["I cannot do that."]] + turns[first + 1:])
        assert wrong.done and not wrong.valid and wrong.reward < 1.0, category


def test_missed_functions_are_announced_between_the_steps(bfcl_dir):
    path = bfcl_dir / "BFCL_v4_multi_turn_miss_func.json"
    task = {t.id: t for t in load_tasks(path)}["multi_turn_miss_func_0"]
    episode = Episode(make_env(path), task_id=task.id)
    steps = play(episode, ground_truth_steps(task)[:3])
    announcement = steps[-1].messages[-1]
    assert announcement["role"] == "user" and "'name': 'sort'" in announcement["content"]
    assert announcement["content"].endswith("What about now?")


def test_finish_answers_the_remaining_turns_with_nothing(bfcl_dir):
    path = bfcl_dir / "BFCL_v4_multi_turn_base.json"
    task = load_tasks(path)[0]
    episode = Episode(make_env(path, reward="shaped"), task_id=task.id)
    episode.step(ground_truth_steps(task)[0][0])
    steps = episode.finish()
    assert episode.done and len(steps) == len(task.ground_truth)  # one empty answer ends each turn
    assert not episode.valid and episode.summary()["error_type"].startswith("multi_turn:")
    with pytest.raises(RuntimeError, match="episode is over"):
        episode.step("[ls()]")


def test_a_users_registered_backend_plays_through_the_core(tmp_path):
    from fcenv.backends import register_backend

    @register_backend(docs=[{"name": "put", "description": "Store a value under a key.", "parameters": {
        "type": "dict", "required": ["key", "value"], "properties": {
            "key": {"type": "string", "description": "Key."}, "value": {"type": "integer", "description": "Value."}}}}])
    class DoorsTestStore:
        def _load_scenario(self, scenario, long_context=False):
            self.items = dict(scenario.get("items", {}))

        def put(self, key, value):
            self.items[key] = value
            return {"stored": key}

    (tmp_path / "possible_answer").mkdir()
    entry = {"id": "store_0", "involved_classes": ["DoorsTestStore"], "initial_config": {"DoorsTestStore": {}},
             "question": [[{"role": "user", "content": "Store 3 under a."}], [{"role": "user", "content": "And 4 under b."}]]}
    truth = {"id": "store_0", "ground_truth": [["put(key='a', value=3)"], ["put(key='b', value=4)"]]}
    (tmp_path / "store.json").write_text(json.dumps(entry) + "\n")
    (tmp_path / "possible_answer" / "store.json").write_text(json.dumps(truth) + "\n")
    env = make_env(tmp_path / "store.json", reward="shaped")
    episode = Episode(env, index=0)
    first = episode.step("[put(key='a', value=3)]")
    assert first.messages == [{"role": "tool", "name": "put(key='a', value=3)", "content": '{"stored": "a"}'}]
    assert episode.step("Done.").messages == [{"role": "user", "content": "And 4 under b."}]
    episode.step("[put(key='b', value=5)]")
    episode.step("Done.")
    assert episode.done and not episode.valid and 0.0 < episode.reward < 1.0  # the first turn earned its share


# ---------------------------------------------------------------------------- token sequences


def answer_ids(template: ChatTemplate, text: str) -> list[int]:
    """What a model that wrote ``text`` sampled: its tokens, then the end-of-turn token."""
    return template.ids(text) + [template.eos_id]


def test_a_prompting_episode_is_the_chat_templates_rendering_with_the_answers_unmasked(tiny_model):
    """Prompting mode: the env records the answers as written, so the sequence equals the
    template's rendering of the whole chat, and the mask marks exactly the answers' tokens."""
    tokenizer = load_tokenizer(tiny_model)
    template = ChatTemplate(tokenizer)
    env = make_env(MULTI_TURN_TRAIN, system_prompt=TINY_SYSTEM_PROMPT, reward="shaped")
    task = next(t for t in env.tasks if len(t.ground_truth) == 2)
    playing = TokenEpisode(Episode(env, task_id=task.id), template, budget=1000)
    answers = [text for texts in ground_truth_steps(task) for text in texts]
    for text in answers:
        playing.add(answer_ids(template, text))
    episode = playing.episode
    assert episode.done and episode.valid and episode.reward == pytest.approx(1.0)
    whole = template.ids(template.text(episode.messages, None, generation_prompt=False))
    assert playing.prompt_ids + playing.completion_ids == whole
    sampled = [t for t, m in zip(playing.completion_ids, playing.mask) if m]
    assert sampled == [t for text in answers for t in answer_ids(template, text)]
    env_text = tokenizer.decode([t for t, m in zip(playing.completion_ids, playing.mask) if not m])
    assert task.question[1][0]["content"] in env_text and env_text.count("<|tool|>") >= len(task.ground_truth[0])
    assert len(playing.logprobs) == len(playing.completion_ids)


def test_an_answer_cut_by_the_length_limit_is_closed_by_the_env(tiny_model):
    template = ChatTemplate(load_tokenizer(tiny_model))
    env = make_env(MULTI_TURN_TRAIN, system_prompt=TINY_SYSTEM_PROMPT)
    task = env.tasks[0]
    playing = TokenEpisode(Episode(env, task_id=task.id), template, budget=1000)
    cut = template.ids(ground_truth_steps(task)[0][0])  # no end-of-turn token: cut off
    playing.add(cut)
    env_part = playing.completion_ids[len(cut):]
    assert env_part[0] == template.eos_id and playing.mask[len(cut)] == 0
    assert playing.prompt_ids + playing.completion_ids == template.ids(
        template.text(playing.episode.messages, None, generation_prompt=True))


def test_fc_mode_env_tokens_hold_the_tool_results_and_the_next_turn(bfcl_dir, tiny_model):
    """FC mode: the tools go to the template (the family's here, the tiny tokenizer's renders
    none); the env's tokens are its tool messages and the next request, masked."""
    path = bfcl_dir / "BFCL_v4_multi_turn_base.json"
    tokenizer = load_tokenizer(tiny_model)
    template = ChatTemplate(tokenizer, get_tool_format("hermes").chat_template)
    env = make_env(path, tool_format="hermes", reward="bfcl")
    task = load_tasks(path)[0]
    playing = TokenEpisode(Episode(env, task_id=task.id), template, budget=100_000)
    prompt = tokenizer.decode(playing.prompt_ids)
    assert '"name": "ls"' in prompt and prompt.endswith("<|im_start|>assistant\n")
    call = '<tool_call>\n{"name": "ls", "arguments": {"a": true}}\n</tool_call>'
    step = playing.add(answer_ids(template, call))
    assert step.messages[0]["role"] == "tool" and not step.done
    env_text = tokenizer.decode([t for t, m in zip(playing.completion_ids, playing.mask) if not m])
    assert step.messages[0]["content"] in env_text and env_text.endswith("<|im_start|>assistant\n")
    step = playing.add(answer_ids(template, "Done."))
    env_text = tokenizer.decode([t for t, m in zip(playing.completion_ids, playing.mask) if not m])
    assert task.question[1][0]["content"] in env_text


def test_an_episode_out_of_room_ends_with_a_verdict(tiny_model):
    template = ChatTemplate(load_tokenizer(tiny_model))
    env = make_env(MULTI_TURN_TRAIN, system_prompt=TINY_SYSTEM_PROMPT, reward="shaped")
    task = env.tasks[0]
    playing = TokenEpisode(Episode(env, task_id=task.id), template, budget=12)
    playing.add(answer_ids(template, ground_truth_steps(task)[0][0]))
    assert playing.done and len(playing.completion_ids) <= 12 and not playing.episode.valid
    assert playing.episode.summary()["error_type"].startswith("multi_turn:")
