"""The actor's supervised warm-up on ground truth (``--warmup_steps``), in FC mode on a real
tokenizer: every demonstration is an answer BFCL accepts, irrelevance included."""

from __future__ import annotations

import gymnasium as gym
from transformers import AutoTokenizer

import fcenv
from fcenv.algos.model.warmup import NO_CALL, ground_truth_examples
from fcenv.chat_mode import ChatMode
from fcenv.sources.resolve import resolve_dataset

FIRST = 60  # the first tasks of varied_train: all five categories


def test_warm_up_demonstrations_are_accepted_answers_and_irrelevance_is_answered_without_a_call(qwen_coder):
    tokenizer = AutoTokenizer.from_pretrained(qwen_coder)
    path = resolve_dataset("varied_train")
    mode = ChatMode(tool_format="hermes", renderer=tokenizer)
    examples = ground_truth_examples(path, tokenizer, mode, 4096, range(FIRST))
    env = gym.make(fcenv.ENV_ID, dataset_path=str(path), reward="bfcl", **mode.env_options())
    tasks = env.unwrapped.tasks
    assert len(examples) == FIRST  # one demonstration per single-turn task, none skipped
    kinds = {tasks[i].kind for i in range(FIRST)}
    assert kinds == {"ast", "irrelevance"}
    for index, (context, answer) in enumerate(examples):
        observation, _ = env.reset(options={"index": index})
        assert context[-len(tokenizer(observation).input_ids):] == tokenizer(observation).input_ids
        assert answer[-1] == tokenizer.eos_token_id
        text = tokenizer.decode(answer[:-1])
        if tasks[index].kind == "irrelevance":
            assert text == NO_CALL
        else:
            assert text.startswith("<tool_call>\n") and text.endswith("</tool_call>")
        _, reward, terminated, _, info = env.step(text)
        assert terminated and info["valid"] and reward == 1.0, (tasks[index].id, text)
