"""BFCL v4's agentic entries at the doors: a web-search episode is one chat,
served by the core (messages, tools, step(text)), as one token sequence, and through SkyRL-gym;
a memory episode, a chain of chats, is refused with a message naming what plays it. The slices
come from BFCL's data in ~/.cache/fcenv/bfcl (``harness.agentic_slices``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fcenv.algos.model.loading import load_tokenizer
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT
from fcenv.doors.core import Episode, make_env
from fcenv.doors.tokens import ChatTemplate, TokenEpisode
from harness.agentic_slices import write_slices

SEARCH = "[search_engine_query(keywords='richest billionaire in China', max_results=1)]"


@pytest.fixture(scope="module")
def slices(bfcl_dir, tmp_path_factory) -> dict[str, Path]:
    return write_slices(bfcl_dir, tmp_path_factory.mktemp("agentic"), memory=1, web=1)


def right_answer(episode: Episode) -> str:
    return f"{{'answer': '{episode.task.ground_truth[0]}', 'context': 'the corpus'}}"


def test_a_web_search_episode_is_served_as_one_chat(slices):
    env = make_env(slices["web_search"], web_search=str(slices["corpus"]), reward="shaped")
    episode = Episode(env, index=0)
    assert episode.messages[-1]["content"] == episode.task.question[0][-1]["content"]
    step = episode.step(SEARCH)
    assert not step.done and step.reward == 0.0 and [m["role"] for m in step.messages] == ["tool"]
    assert "Zhong Shanshan" in step.messages[0]["content"]  # the corpus page of that hop
    step = episode.step(right_answer(episode))
    assert step.done and step.messages == [] and episode.valid and episode.reward == 1.0
    # A wrong answer earns less, and no answer (every step a call) less still.
    wrong = Episode(env, index=0)
    wrong.step("{'answer': 'I do not know', 'context': 'I do not know'}")
    silent = Episode(env, index=0)
    silent.finish()
    assert 0.0 < wrong.reward < 1.0 and not wrong.valid and silent.reward < wrong.reward


def test_a_web_search_episode_is_one_token_sequence_with_the_tool_results_masked(slices, tiny_model):
    template = ChatTemplate(load_tokenizer(tiny_model))
    env = make_env(slices["web_search"], web_search=str(slices["corpus"]), system_prompt=TINY_SYSTEM_PROMPT)
    playing = TokenEpisode(Episode(env, index=0), template, budget=5000)
    answers = [SEARCH, right_answer(playing.episode)]
    for text in answers:
        playing.add(template.ids(text) + [template.eos_id])
    episode = playing.episode
    assert episode.done and episode.valid and episode.reward == 1.0
    whole = template.ids(template.text(episode.messages, None, generation_prompt=False))
    assert playing.prompt_ids + playing.completion_ids == whole
    sampled = [t for t, m in zip(playing.completion_ids, playing.mask) if m]
    assert sampled == [t for text in answers for t in template.ids(text) + [template.eos_id]]


def test_skyrl_plays_a_web_search_entry_to_its_verdict(slices):
    skyrl_gym = pytest.importorskip("skyrl_gym")
    from omegaconf import DictConfig

    from fcenv.skyrl import dataset_rows, register

    env_id = register()
    rows = dataset_rows(slices["web_search"], web_search=str(slices["corpus"]))
    assert len(rows) == 2  # the question in BFCL's two web-search categories
    env = skyrl_gym.make(env_id, env_config=DictConfig({"web_search": str(slices["corpus"]), "reward": "bfcl"}),
                         extras={**rows[1], "max_turns": 50})
    chat, info = env.init(rows[1]["prompt"])
    assert info["task_id"] == "web_search_no_snippet_0"
    out = env.step(SEARCH)
    assert not out["done"] and out["observations"][0]["role"] == "tool"
    shown = out["observations"][0]["content"]
    assert "href" in shown and "body" not in shown  # the no-snippet category: titles and links alone
    out = env.step(right_answer(env.episode))
    assert out["done"] and out["reward"] == 1.0


def test_a_memory_episode_is_refused_naming_what_plays_it(slices):
    env = make_env(slices["memory"])
    with pytest.raises(ValueError, match=r"memory_kv_130-notetaker-0: a memory episode is a chain of "
                                         r"conversations.*fcenv train"):
        Episode(env, index=0)
