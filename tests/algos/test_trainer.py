"""Full PPO iterations against the real environment, on CPU with a tiny model."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

pytest.importorskip("peft")
from fcenv.algos.config import parse_config
from fcenv.algos.ppo.buffer import compute_advantages, score_rollout
from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT
from fcenv.algos.training.loop import Runner

# Small enough that an iteration takes a second or two.


def make_runner(model, results, *extra: str) -> Runner:
    args = ["--model_name_or_path", str(model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs",
            "--results_dir", str(results), "--n_rollout_threads", "4", "--num_env_steps", "8",
            "--max_new_tokens", "32", "--ppo_epoch", "1", "--num_mini_batch", "2", "--gradient_cp_steps", "2",
            "--lora_r", "4", "--eval_interval", "0", "--no-progress", *extra]
    return Runner(parse_config(args), log=lambda message: None)


def snapshot(params):
    return [p.detach().clone() for p in params]


def changed(before, params) -> bool:
    return any(not torch.equal(b, p.detach()) for b, p in zip(before, params))


@pytest.mark.parametrize("algorithm", ["TPPO", "APPO"])
def test_one_iteration_trains_both_adapters_and_the_head_but_not_the_base(tiny_model, tmp_path, algorithm):
    runner = make_runner(tiny_model, tmp_path, "--algorithm_name", algorithm, "--lr", "1e-2",
                         "--n_rollout_threads", "8", "--num_env_steps", "16", "--entropy_coef", "0.01")
    policy = runner.policy
    actor, critic_lora = policy.actor_parameters(), policy._adapter_params["critic"]
    head, base = list(policy.value_head.parameters()), policy.base_parameters()
    before = {name: snapshot(group) for name, group in
              [("actor", actor), ("critic", critic_lora), ("head", head), ("base", base)]}
    # Two iterations: PEFT starts LoRA B at zero, so A only moves once B has.
    metrics = runner.train_iteration()
    metrics.update(runner.train_iteration())
    assert changed(before["actor"], actor)
    assert changed(before["critic"], critic_lora)
    assert changed(before["head"], head)
    assert not changed(before["base"], base)
    for key in ("train/policy_loss", "train/value_loss", "train/entropy", "train/kl_ref", "train/approx_kl",
                "train/clip_fraction", "train/actor_grad_norm", "train/critic_grad_norm", "rollout/reward"):
        assert math.isfinite(metrics[key]), key
    assert metrics["train/entropy"] > 0
    assert 0.0 <= metrics["rollout/reward"] <= 1.0
    assert metrics["progress/samples"] == 16


def test_first_epoch_ratio_is_one(tiny_model, tmp_path):
    # The old log-probs, rescored (the default) or kept from sampling (--sampling_old_logprobs,
    # fp32), equal the update's own scoring of the same tokens up to float rounding: before any
    # step the ratio is 1 and nothing is clipped.
    runner = make_runner(tiny_model, tmp_path, "--num_mini_batch", "1", "--gradient_cp_steps", "1")
    from fcenv.algos.rollout.play import play

    rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(), max_new_tokens=32,
                   actions_per_env=1, generator=runner.sampling)
    assert runner.policy.samples_exactly
    buffer = score_rollout(runner.policy, rollout, token_budget=200, old_from="sampling")
    rescored = score_rollout(runner.policy, rollout, token_budget=200)
    from fcenv.algos.model.batching import pack

    batch = pack(buffer.contexts, buffer.actions, runner.policy.pad_id)
    with torch.no_grad():
        fresh = runner.policy.token_logprobs(batch)[0]
    torch.testing.assert_close(fresh, buffer.old_logprobs[:, :fresh.shape[1]], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rescored.old_logprobs, buffer.old_logprobs, atol=1e-5, rtol=1e-5)
    assert torch.equal(rescored.action_mask, buffer.action_mask) and torch.equal(rescored.values, buffer.values)


@pytest.mark.parametrize("ratio", ["TPPO", "APPO"])
def test_old_logprobs_from_the_first_pass_equal_rescored_ones(tiny_model, tmp_path, ratio):
    # With one minibatch per epoch the update's first pass runs the policy that sampled on
    # every row: its log-probs are the old ones, and the update is the rescored one's.
    from fcenv.algos.model.batching import pack
    from fcenv.algos.rollout.play import play

    results = []
    for source in ("rescore", "update"):
        runner = make_runner(tiny_model, tmp_path / source, "--algorithm_name", ratio, "--num_mini_batch", "1",
                             "--ppo_epoch", "2", "--lr", "0.1")
        assert runner._old_logprobs_from() == "update"
        runner.train_iteration()  # PEFT starts LoRA B at zero: one step first, so the next ones move the policy
        rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(), max_new_tokens=16,
                       actions_per_env=1, generator=runner.sampling)
        buffer = score_rollout(runner.policy, rollout, token_budget=200, old_from=source)
        assert (buffer.old_logprobs is None) == (source == "update")
        compute_advantages(buffer, rollout, [0.0] * len(rollout.episodes), runner.algorithm.estimator, 0.99, 0.95)
        runner.trainer.update(buffer, np.random.default_rng(0))
        with torch.no_grad():
            after = runner.policy.token_logprobs(pack(buffer.contexts, buffer.actions, runner.policy.pad_id))[0]
        results.append((buffer.old_logprobs, snapshot(runner.policy.actor_parameters()), after))
    (rescored, actor_rescored, _), (recorded, actor_recorded, after) = results
    torch.testing.assert_close(recorded, rescored, atol=1e-5, rtol=1e-5)
    for a, b in zip(actor_rescored, actor_recorded):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
    # The policy moved, and the second epoch did not overwrite the old log-probs with its own.
    assert (after - recorded[:, :after.shape[1]]).abs().max() > 1e-3


def test_old_logprobs_from_the_first_pass_need_one_minibatch(tiny_model, tmp_path):
    from fcenv.algos.rollout.play import play

    runner = make_runner(tiny_model, tmp_path)  # --num_mini_batch 2: the scoring pass runs
    assert runner._old_logprobs_from() == "rescore"
    rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(), max_new_tokens=16,
                   actions_per_env=1, generator=runner.sampling)
    buffer = score_rollout(runner.policy, rollout, token_budget=200, old_from="update")
    compute_advantages(buffer, rollout, [0.0] * len(rollout.episodes), "bad", 0.99, 0.95)
    with pytest.raises(ValueError, match="--num_mini_batch 1, not 2"):
        runner.trainer.update(buffer, np.random.default_rng(0))


def test_critic_warmup_leaves_the_actor_alone(tiny_model, tmp_path):
    runner = make_runner(tiny_model, tmp_path, "--critic_warmup_iters", "1")
    before = snapshot(runner.policy.actor_parameters())
    metrics = runner.train_iteration()
    assert not changed(before, runner.policy.actor_parameters())
    assert "train/policy_loss" not in metrics and math.isfinite(metrics["train/value_loss"])


def test_multi_turn_episodes_bootstrap_across_actions(tiny_model, tmp_path, bfcl_dir):
    # A model trained on single calls rarely writes calls that run here, so turns end
    # after a step or a few; longer chats are cut from the middle to the window.
    runner = make_runner(tiny_model, tmp_path, "--dataset_path", str(bfcl_dir / "BFCL_v4_multi_turn_base.json"),
                         "--n_rollout_threads", "2", "--context_window", "1024", "--max_new_tokens", "8")
    from fcenv.algos.rollout.play import play

    rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(), max_new_tokens=8,
                   actions_per_env=1, generator=runner.sampling)
    assert len(rollout.episodes) == 2
    assert any(len(e.action_indices) > 1 for e in rollout.episodes)
    assert all(len(a.context) <= 1016 for a in rollout.actions)
    buffer = score_rollout(runner.policy, rollout, token_budget=300)
    compute_advantages(buffer, rollout, [0.0, 0.0], "bad", 0.9, 1.0)
    for episode in rollout.episodes:
        rows = episode.action_indices
        # lam = 1: every token's target is r_t + gamma * (target of the next action)
        target = 0.0
        for row in reversed(rows):
            target = float(buffer.rewards[row]) + 0.9 * target
            length = int(buffer.action_mask[row].sum())
            torch.testing.assert_close(buffer.returns[row, :length], torch.full((length,), target), atol=1e-5, rtol=1e-5)
    metrics = runner.train_iteration()
    assert math.isfinite(metrics["train/value_loss"]) and math.isfinite(metrics["train/policy_loss"])


def test_supervised_warm_up_trains_only_the_actor(tiny_model, tmp_path):
    from fcenv.algos.config import parse_config as parse
    from fcenv.algos.model.policy import ACTOR

    args = ["--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs", "--results_dir",
            str(tmp_path), "--n_rollout_threads", "4", "--eval_interval", "0", "--no-progress", "--lora_r", "4"]
    plain = Runner(parse(args), log=lambda message: None)
    warmed = Runner(parse([*args, "--warmup_steps", "3", "--warmup_lr", "1e-2"]), log=lambda message: None)
    assert changed(snapshot(plain.policy.actor_parameters()), warmed.policy.actor_parameters())
    assert not changed(snapshot(plain.policy.critic_parameters()), warmed.policy.critic_parameters())
    assert not changed(snapshot(plain.policy.base_parameters()), warmed.policy.base_parameters())
    assert warmed.policy.model.active_adapter == ACTOR


def test_any_local_checkpoint_with_a_chat_template_trains(tiny_model, tmp_path):
    # A Qwen2-shaped checkpoint (not the Llama shape the tiny default uses), saved the way any
    # Hugging Face model is, with the tiny tokenizer and its chat template.
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from fcenv.algos.model.loading import load_tokenizer

    tokenizer = load_tokenizer(tiny_model)
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    folder = tmp_path / "qwen2-local"
    Qwen2ForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    runner = make_runner(folder, tmp_path, "--n_rollout_threads", "2", "--num_env_steps", "2")
    assert runner.loaded.label == "qwen2-local" and runner.loaded.renderer is not None
    observation, _ = runner.envs[0].reset(options={"index": 0})
    assert observation.startswith("<|system|>") and observation.endswith("<|assistant|>")
    metrics = runner.train_iteration()
    assert math.isfinite(metrics["train/policy_loss"]) and math.isfinite(metrics["train/value_loss"])


def test_length_sorted_micro_batches_give_the_same_update(tiny_model, tmp_path):
    """Micro-batching by length changes only how rows are batched: the scores and the
    parameters after an update equal those of one padded batch, up to float rounding."""
    from fcenv.algos.model.batching import length_sorted_chunks
    from fcenv.algos.rollout.play import play

    contexts = [[1] * n for n in (5, 40, 7, 33, 12)]
    actions = [[2] * n for n in (3, 1, 9, 2, 4)]
    chunks = length_sorted_chunks(contexts, actions, [[0], [1, 3], [2], [4]], token_budget=60)
    assert sorted(row for chunk in chunks for row in chunk) == [0, 1, 2, 3, 4]
    assert any(set(chunk) >= {1, 3} for chunk in chunks)  # a group stays together
    assert chunks[0] == [0, 2] and len(chunks) >= 3  # short rows first, padded area within budget
    assert len(length_sorted_chunks(contexts, actions, [[i] for i in range(5)], 0, min_chunks=3)) == 3
    # A group's samples share their prompt: they stay next to each other, and the prompt
    # counts once against the budget (the policy runs it once).
    prompts = [[1] * 20, [3] * 24]
    grouped = [prompts[row % 2] for row in range(8)]
    answers = [[2] * (1 + row) for row in range(8)]
    chunks = length_sorted_chunks(grouped, answers, [[i] for i in range(8)], token_budget=24 + 4 * 8)
    assert [sorted(chunk) for chunk in chunks] == [[0, 2, 4, 6], [1, 3, 5, 7]]

    results = []
    for budget in ("0", "150"):
        runner = make_runner(tiny_model, tmp_path / budget, "--micro_batch_tokens", budget, "--ppo_epoch", "1")
        rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(), max_new_tokens=16,
                       actions_per_env=1, generator=runner.sampling)
        buffer = score_rollout(runner.policy, rollout, token_budget=int(budget))
        compute_advantages(buffer, rollout, [0.0] * len(rollout.episodes), "bad", 0.99, 0.95)
        runner.trainer.update(buffer, np.random.default_rng(0))
        results.append((buffer, snapshot(runner.policy.actor_parameters()), snapshot(runner.policy.critic_parameters())))
    (one, actor_one, critic_one), (many, actor_many, critic_many) = results
    torch.testing.assert_close(one.old_logprobs, many.old_logprobs, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(one.values, many.values, atol=1e-5, rtol=1e-5)
    for a, b in zip(actor_one + critic_one, actor_many + critic_many):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_a_top_layer_critic_scores_and_trains_from_the_reference_states(tiny_model, tmp_path):
    """--critic_fraction 0.25 (the top one of the tiny model's four layers): scoring keeps each row's states from the reference pass; the values
    they give and the critic's update equal those of critic passes through every layer."""
    from fcenv.algos.model.batching import pack
    from fcenv.algos.rollout.play import play

    critics = []
    for keep_states in (True, False):
        runner = make_runner(tiny_model, tmp_path / str(keep_states), "--critic_fraction", "0.25", "--ppo_epoch", "2")
        policy = runner.policy
        assert policy.critic_start == policy.base.config.num_hidden_layers - 1
        rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(), max_new_tokens=16,
                       actions_per_env=1, generator=runner.sampling)
        buffer = score_rollout(policy, rollout, token_budget=0)
        assert [len(s) for s in buffer.critic_states] == [len(c) + len(a) for c, a in zip(buffer.contexts, buffer.actions)]
        if keep_states:
            with torch.no_grad():
                full = policy.token_values(pack(buffer.contexts, buffer.actions, policy.pad_id))
            width = buffer.values.shape[1]
            torch.testing.assert_close(buffer.values, full[:, :width] * buffer.action_mask, atol=1e-5, rtol=1e-5)
        else:
            buffer.critic_states = None  # the critic's passes run every layer
        compute_advantages(buffer, rollout, [0.0] * len(rollout.episodes), "bad", 0.99, 0.95)
        runner.trainer.update(buffer, np.random.default_rng(0))
        critics.append(snapshot(policy.critic_parameters()))
    for a, b in zip(*critics):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
