"""fcenv's tasks and verdicts in TRL's GRPOTrainer (fcenv.trl): a few real training steps of
the tiny model on CPU."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("trl")
from algos.model.loading import load_tokenizer
from algos.model.warmup import answer_text
from algos.tiny.build import MULTI_TURN_TRAIN, TINY_SYSTEM_PROMPT, TINY_TRAIN
from fcenv.trl import VerdictReward, prompt_dataset


def test_the_reward_is_the_envs_verdict_on_each_completion():
    reward = VerdictReward(TINY_TRAIN, reward="shaped", system_prompt=TINY_SYSTEM_PROMPT)
    truth = answer_text(reward.env.tasks[3].ground_truth)
    conversational = [[{"role": "assistant", "content": truth}], [{"role": "assistant", "content": "[nope()]"}]]
    rewards = reward([None, None], conversational, task_index=[3, 3])
    assert rewards[0] == 1.0 and 0.0 <= rewards[1] < 1.0  # a failing answer earns less
    assert reward([None], [truth], [3]) == [1.0]  # plain-text completions as well
    assert [v["valid"] for v in reward.verdicts] == [True, False, True] and reward.accuracy == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="multi_turn_train.json: .* multi-turn entries"):
        prompt_dataset(MULTI_TURN_TRAIN)


def test_grpo_trainer_trains_on_fcenv_prompts_and_verdicts(tiny_model, tmp_path):
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    dataset = prompt_dataset(TINY_TRAIN, system_prompt=TINY_SYSTEM_PROMPT, indices=range(16))
    assert dataset[0]["prompt"][0] == {"role": "system", "content": dataset[0]["prompt"][0]["content"]}
    assert dataset[0]["prompt"][-1]["role"] == "user" and dataset[0]["task_index"] == 0
    reward = VerdictReward(TINY_TRAIN, reward="shaped", system_prompt=TINY_SYSTEM_PROMPT)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    before = [p.detach().clone() for p in model.parameters()]
    config = GRPOConfig(output_dir=str(tmp_path / "grpo"), use_cpu=True, bf16=False, per_device_train_batch_size=8,
                        num_generations=4, max_completion_length=16, max_steps=2, learning_rate=1e-3,
                        logging_steps=1, report_to="none", save_strategy="no", seed=1, dataloader_num_workers=0)
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=config, train_dataset=dataset,
                          processing_class=load_tokenizer(tiny_model))
    trainer.train()
    assert len(reward.verdicts) >= 16  # every completion judged by the env
    logged = [entry for entry in trainer.state.log_history if "rewards/fcenv_shaped/mean" in entry]
    assert len(logged) == 2
    assert any(not torch.equal(b, p.detach()) for b, p in zip(before, model.parameters()))


def test_fc_mode_prompts_carry_each_tasks_tools_and_answers_are_read_in_the_family_format(tiny_model):
    """FC mode for TRL: each prompt is rendered with its own task's tools (TRL takes one tool
    list per trainer), and the reward reads completions as BFCL's FC handler does."""
    import json

    from fcenv.tool_formats import get_tool_format
    from handlers import Call

    tokenizer = load_tokenizer(tiny_model)
    dataset = prompt_dataset(TINY_TRAIN, tool_format="hermes", renderer=tokenizer, indices=range(4))
    reward = VerdictReward(TINY_TRAIN, tool_format="hermes")
    for row in dataset:
        tools = json.loads(row["tools"])
        assert isinstance(row["prompt"], str) and all(json.dumps(t) in row["prompt"] for t in tools)
    truth = reward.env.tasks[3].ground_truth
    calls = [Call(name, {k: v[0] for k, v in args.items() if v[0] != ""}) for g in truth for name, args in g.items()]
    assert reward([None, None], [get_tool_format("hermes").write(calls), answer_text(truth)], [3, 3]) == [1.0, 0.0]
