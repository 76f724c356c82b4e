"""Scripted memory episodes for the env's differential tests (no tests here).

A script gives, for each conversation of a memory task (its prerequisites, then the question),
the model's step texts turn by turn: some steps with calls, then a text without calls that
ends the turn; now and then a turn of more steps with calls than BFCL allows (a force quit,
after which the conversation's later turns are not played). ``play_ours`` feeds the texts to
``FunctionCallingEnv`` in order and records what the oracle's ``memory_episode`` op records on
BFCL's side: each conversation's opening messages, every step's results, the memory at its
end, and the verdict.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.support.memory_calls import VECTOR_TEXTS

STEP_LIMIT = 20  # BFCL's MAXIMUM_STEP_LIMIT; the env's default max_steps_per_turn

KV_STEPS = [
    "[core_memory_add(key='first_name', value='Michael')]",
    "[core_memory_add(key='home_city', value='Seattle'), archival_memory_add(key='latte', value='strawberry matcha')]",
    "[archival_memory_add(key='order_42', value='espresso machine, 2 accessories')]",
    "[core_memory_key_search(query='name')]",
    "[archival_memory_key_search(query='latte order', k=2)]",
    "[core_memory_retrieve(key='first_name')]",
    "[core_memory_replace(key='home_city', value='Portland')]",
    "[core_memory_add(key='Bad Key', value='x')]",
    "[core_memory_add(key='long_one', value='" + "z" * 301 + "')]",
    "[core_memory_remove(key='nothing_here')]",
    "[core_memory_retrieve_all()]",
    "[archival_memory_list_keys()]",
    "[unknown_function(x=1)]",
    "[core_memory_add(key=5, value=7)]",
]
REC_SUM_STEPS = [
    "[memory_append(text='Name: Michael. ')]",
    "[memory_append(text='Lives in Seattle. '), memory_retrieve()]",
    "[memory_update(text='Name: Michael. Age 35. ')]",
    "[memory_replace(old_text='Seattle', new_text='Portland')]",
    "[memory_replace(old_text='missing', new_text='x')]",
    "[memory_retrieve()]",
    "[memory_append(text='" + "y" * 10001 + "')]",
    "[memory_clear()]",
    "[unknown_function(x=1)]",
]
VECTOR_STEPS = [
    *(f"[core_memory_add(text={text!r})]" for text in VECTOR_TEXTS[:8]),
    *(f"[archival_memory_add(text={text!r})]" for text in VECTOR_TEXTS[:6]),
    "[core_memory_retrieve(query='where do I live', top_k=2)]",
    "[archival_memory_retrieve(query='latte')]",
    "[core_memory_update(vec_id=0, new_text='Seattle')]",
    "[core_memory_remove(vec_id=1)]",
    "[archival_memory_retrieve_all()]",
    "[core_memory_retrieve(query='Seattle', top_k=0)]",
    "[core_memory_add(text=7)]",
]
STEPS = {"MemoryAPI_kv": KV_STEPS, "MemoryAPI_rec_sum": REC_SUM_STEPS, "MemoryAPI_vector": VECTOR_STEPS}
# Texts without calls: each ends its turn (BFCL's decoder fails on them or finds no call).
ENDINGS = ["Noted, thanks!", "I'll remember that.", "Michael", "[]", "Sure. [not a call", "ok"]


def script(task, rng: random.Random, force_quit_rate: float = 0.04) -> list[list[list[str]]]:
    """Step texts per conversation, per turn."""
    steps = STEPS[task.involved_classes[0]]
    conversations = [*task.prerequisites, {"id": task.id, "question": task.question}]
    out = []
    for index, conversation in enumerate(conversations):
        turns = []
        question = index == len(conversations) - 1
        for _ in conversation["question"]:
            if rng.random() < force_quit_rate:
                turns.append([rng.choice(steps) for _ in range(STEP_LIMIT + 1)])
                break  # the conversation stops there
            texts = [rng.choice(steps) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
            texts.append(_answer(task, rng) if question else rng.choice(ENDINGS))
            turns.append(texts)
        out.append(turns)
    return out


def _answer(task, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.4:
        return f"{{'answer': '{task.ground_truth[0]}', 'context': 'from memory'}}"
    if roll < 0.5:
        return ""  # an empty final message: BFCL finds no last message
    if roll < 0.6:
        return task.ground_truth[-1].upper()
    return "{'answer': 'I do not know', 'context': 'I do not know'}"


def play_ours(env, task, turns_per_conversation: list[list[list[str]]]) -> dict[str, Any]:
    """The script through the env: what each conversation opened with, its results, its memory."""
    _, info = env.reset(options={"id": task.id})
    out = [{"opening": info["messages"], "results": [], "memory": None}]
    episode = env.unwrapped._episode
    verdict = None
    texts = [text for turns in turns_per_conversation for turn in turns for text in turn]
    for position, text in enumerate(texts):
        _, _, terminated, truncated, info = env.step(text)
        if "results" in info:
            out[-1]["results"].append(info["results"])
        if "conversation_ended" in info:
            ended = info["conversation_ended"]
            out[-1]["memory"] = episode.snapshots.checkpoints.get((episode.class_name, ended))
            out.append({"opening": info["messages"], "results": [], "memory": None})
        if terminated or truncated:
            assert position == len(texts) - 1, "the env ended the episode before the script did"
            verdict = {"valid": info["valid"], "error_type": info["error_type"]}
    memory = episode.session.instances[episode.class_name]
    out[-1]["memory"] = json.loads(json.dumps(memory._snapshot()))
    return {"conversations": out, "verdict": verdict, "recorded": turns_per_conversation[-1]}


def episode_request(task, turns_per_conversation, embeddings=None) -> dict[str, Any]:
    conversations = [*task.prerequisites, {"id": task.id, "question": task.question}]
    return {"op": "memory_episode", "class": task.involved_classes[0],
            "scenario": task.initial_config[task.involved_classes[0]]["scenario"], "functions": task.functions,
            "possible_answers": task.ground_truth, "embeddings": embeddings or {},
            "conversations": [{"test_id": c["id"], "question": c["question"], "turns": turns}
                              for c, turns in zip(conversations, turns_per_conversation)]}
