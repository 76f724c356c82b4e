"""fcenv's tasks and verdicts in TRL's GRPOTrainer (fcenv.trl): a few real training steps of
the tiny model on CPU."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("trl")
from fcenv.algos.model.loading import load_tokenizer
from fcenv.algos.model.warmup import answer_text
from fcenv.algos.tiny.build import MULTI_TURN_TRAIN, TINY_SYSTEM_PROMPT, TINY_TRAIN
from fcenv.data import load_tasks
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


def test_mismatched_columns_and_unreadable_completions_are_errors_that_say_what_differs():
    """A reward per completion or an error: never fewer rewards than completions (zip would stop
    at the shorter column), never an obscure TypeError for a None completion."""
    from fcenv.trl import EpisodeReward

    reward = VerdictReward(TINY_TRAIN, system_prompt=TINY_SYSTEM_PROMPT)
    with pytest.raises(ValueError, match=r"fcenv_bfcl: the columns differ in length \(prompts: 3, completions: 3, "
                                         r"task_index: 2\)"):
        reward([None] * 3, ["a", "b", "c"], task_index=[1, 2])
    with pytest.raises(ValueError, match=r"completions: 2, task_index: 3"):
        reward(None, ["a", "b"], task_index=[1, 2, 3])
    with pytest.raises(TypeError, match="fcenv_bfcl: completion 1 is NoneType None, not text or a list of messages"):
        reward([None, None], ["[f()]", None], task_index=[1, 2])
    with pytest.raises(TypeError, match="completion 0: an assistant message's content is not text"):
        reward([None], [[{"role": "assistant", "content": [{"type": "text"}]}]], task_index=[1])
    with pytest.raises(ValueError, match=r"task_index 900 of completion 1 is not a task of .*tiny_train.json \(0 to 899\)"):
        reward([None, None], ["a", "b"], task_index=[1, 900])
    assert reward.verdicts == []  # nothing judged from a batch that was refused
    with pytest.raises(ValueError, match=r"completions: 2, fcenv_reward: 1"):
        EpisodeReward("fcenv_bfcl")([None, None], ["a", "b"], fcenv_reward=[1.0])


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
    from fcenv.handlers import Call

    tokenizer = load_tokenizer(tiny_model)
    dataset = prompt_dataset(TINY_TRAIN, tool_format="hermes", renderer=tokenizer, indices=range(4))
    reward = VerdictReward(TINY_TRAIN, tool_format="hermes")
    for row in dataset:
        tools = json.loads(row["tools"])
        assert isinstance(row["prompt"], str) and all(json.dumps(t) in row["prompt"] for t in tools)
    truth = reward.env.tasks[3].ground_truth
    calls = [Call(name, {k: v[0] for k, v in args.items() if v[0] != ""}) for g in truth for name, args in g.items()]
    assert reward([None, None], [get_tool_format("hermes").write(calls), answer_text(truth)], [3, 3]) == [1.0, 0.0]


# ---------------------------------------------------------------------------------------------
# Whole episodes through TRL's rollout_func (fcenv.trl.EpisodeRollout).


def _trainer(model, tokenizer, dataset, rollout, tmp_path, steps=2):
    from trl import GRPOConfig, GRPOTrainer

    config = GRPOConfig(output_dir=str(tmp_path / "grpo"), use_cpu=True, bf16=False, per_device_train_batch_size=8,
                        num_generations=4, max_completion_length=160, max_steps=steps, learning_rate=1e-3,
                        logging_steps=1, report_to="none", save_strategy="no", seed=1, dataloader_num_workers=0)
    return GRPOTrainer(model=model, reward_funcs=rollout.reward_func, args=config, train_dataset=dataset,
                       processing_class=tokenizer, rollout_func=rollout)


def test_grpo_trainer_trains_on_whole_multi_turn_episodes_as_they_were_sampled(tiny_model, tmp_path):
    """Each prompt's episode is played to its end (tool results and the second user turn between
    the steps, masked); the log-probs the rollout sampled with are the model's own on the
    sequence TRL trains on, so TRL trains on the tokens sampled, in their context."""
    from transformers import AutoModelForCausalLM

    from fcenv.trl import EpisodeRollout, episode_dataset

    tokenizer = load_tokenizer(tiny_model)
    two_turns = [i for i, t in enumerate(load_tasks(MULTI_TURN_TRAIN)) if len(t.ground_truth) == 2][:4]
    dataset = episode_dataset(MULTI_TURN_TRAIN, system_prompt=TINY_SYSTEM_PROMPT, indices=two_turns)
    assert dataset[0]["prompt"][0]["fcenv_task"] == two_turns[0] and dataset[0]["prompt"][-1]["role"] == "user"
    rollout = EpisodeRollout(MULTI_TURN_TRAIN, system_prompt=TINY_SYSTEM_PROMPT, reward="shaped", max_step_tokens=24)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    trainer = _trainer(model, tokenizer, dataset, rollout, tmp_path)

    torch.manual_seed(0)
    out = rollout([row["prompt"] for row in dataset], trainer)
    assert len(rollout.outcomes) == 4 and all(o["steps"] >= 2 for o in rollout.outcomes)  # two turns at least
    for prompt, completion, mask, logprobs in zip(out["prompt_ids"], out["completion_ids"], out["env_mask"],
                                                  out["logprobs"]):
        assert len(completion) == len(mask) == len(logprobs) and 0 in mask and 1 in mask
        ids = torch.tensor([prompt + completion])
        with torch.no_grad():
            scores = torch.log_softmax(model(ids).logits[0, len(prompt) - 1:-1].float(), dim=-1)
        own = scores.gather(1, torch.tensor(completion)[:, None]).squeeze(1)
        sampled = torch.tensor(mask).bool()
        assert torch.allclose(own[sampled], torch.tensor(logprobs)[sampled], atol=1e-4)
    assert out["fcenv_reward"] == [o["reward"] for o in rollout.outcomes]
    with pytest.raises(ValueError, match="episode_dataset"):
        rollout([[{"role": "user", "content": "hi"}]], trainer)

    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()
    assert len(rollout.outcomes) == 4 + 2 * 8  # every episode of both steps judged by the env
    logged = [entry for entry in trainer.state.log_history if "rewards/fcenv_shaped/mean" in entry]
    assert len(logged) == 2 and all("fcenv/accuracy" in entry for entry in logged)
    assert any(not torch.equal(b, p.detach()) for b, p in zip(before, model.parameters()))


def test_episode_rollout_in_fc_mode_renders_each_tasks_tools(tiny_model, tmp_path):
    from transformers import AutoModelForCausalLM

    from fcenv.trl import EpisodeRollout, episode_dataset

    tokenizer = load_tokenizer(tiny_model)
    dataset = episode_dataset(MULTI_TURN_TRAIN, tool_format="hermes", indices=range(4))
    rollout = EpisodeRollout(MULTI_TURN_TRAIN, tool_format="hermes", reward="bfcl", max_step_tokens=8)
    trainer = _trainer(AutoModelForCausalLM.from_pretrained(tiny_model), tokenizer, dataset, rollout, tmp_path)
    out = rollout([row["prompt"] for row in dataset], trainer)
    for index, prompt in zip(range(4), out["prompt_ids"]):
        text = tokenizer.decode(prompt)
        tools = load_tasks(MULTI_TURN_TRAIN)[index].functions
        assert "<tools>" in text and all(f'"name": "{f["name"]}"' in text for f in tools)
    assert [o["id"] for o in rollout.outcomes] == dataset["task_id"] and set(out["fcenv_reward"]) <= {0.0, 1.0}
