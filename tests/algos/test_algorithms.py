"""Algorithms as three separate choices (estimator, ratio level, critic), presets, and the
critic-free group algorithms: one full iteration of each on the real env with a tiny model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

pytest.importorskip("peft")
from fcenv.algos.config import parse_config
from fcenv.algos.ppo.algorithms import ALGORITHMS, Algorithm, resolve
from fcenv.algos.ppo.buffer import Buffer
from fcenv.algos.ppo.estimators import get_estimator
from tests.support.runs import make_runner


def test_presets_are_choices_and_unknown_names_are_refused():
    assert ALGORITHMS.get("TPPO") == Algorithm("bad", "token", True)
    assert ALGORITHMS.get("APPO") == Algorithm("action_gae", "action", True)
    assert resolve("TPPO", ratio="turn") == Algorithm("bad", "turn", True)
    assert resolve("GRPO") == Algorithm("grpo", "token", False)
    assert resolve("GRPO", critic="on").critic
    for bad, message in [(("POAD",), "unknown algorithm 'POAD'"), (("TPPO", "vtrace"), "unknown advantage estimator"),
                         (("TPPO", "", "sequence"), "unknown ratio level"),
                         (("TPPO", "", "", "off"), "bootstraps from the critic")]:
        with pytest.raises(ValueError, match=message):
            resolve(*bad)


@pytest.mark.parametrize("flags, message", [
    (["--advantage_estimator", "vtrace"], "--advantage_estimator"),
    (["--ratio_level", "sequence"], "--ratio_level"),
    (["--loss_aggregation", "median"], "--loss_aggregation"),
    (["--algorithm_name", "GRPO"], "--group_size must be 2 or more"),
    (["--algorithm_name", "GRPO", "--group_size", "3", "--n_rollout_threads", "8"], "multiple of --group_size"),
])
def test_bad_algorithm_flags_name_the_flag(flags, message, capsys):
    with pytest.raises(SystemExit):
        parse_config(flags)
    assert message in capsys.readouterr().err


def _buffer(rewards, groups):
    n = len(rewards)
    mask = torch.ones(n, 3)
    zeros = torch.zeros(n, 3)
    return Buffer(contexts=[[1]] * n, actions=[[1, 2, 3]] * n, action_mask=mask, old_logprobs=zeros,
                  ref_logprobs=zeros, values=zeros, rewards=torch.tensor(rewards, dtype=torch.float32),
                  episode=torch.arange(n), turn=torch.zeros(n, dtype=torch.long), task=torch.zeros(n, dtype=torch.long),
                  group=torch.tensor(groups))


def test_group_estimators_compare_episodes_of_one_task():
    buffer = _buffer([1.0, 0.0, 0.0, 0.0, 1.0, 1.0], [0, 0, 0, 0, 1, 1])
    episodes = [[i] for i in range(6)]
    grpo = get_estimator("grpo").fn(buffer, episodes, [0.0] * 6, 1.0, 1.0).advantages[:, 0].numpy()
    expected = np.array([1.0, 0.0, 0.0, 0.0]) - 0.25
    np.testing.assert_allclose(grpo[:4], expected / (expected.std() + 1e-4), rtol=1e-5)
    np.testing.assert_allclose(grpo[4:], 0.0)  # all right: nothing to learn from this group
    drgrpo = get_estimator("drgrpo").fn(buffer, episodes, [0.0] * 6, 1.0, 1.0).advantages[:, 0].numpy()
    np.testing.assert_allclose(drgrpo, [0.75, -0.25, -0.25, -0.25, 0.0, 0.0], rtol=1e-5)  # not divided by the std
    rloo = get_estimator("rloo").fn(buffer, episodes, [0.0] * 6, 1.0, 1.0).advantages[:, 0].numpy()
    np.testing.assert_allclose(rloo, [1.0, -1 / 3, -1 / 3, -1 / 3, 0.0, 0.0], rtol=1e-5)
    assert not get_estimator("grpo").needs_critic and get_estimator("bad").needs_critic


def test_the_batch_baseline_teaches_from_groups_whose_episodes_all_earned_the_same():
    # Group 0 all wrong (say an irrelevant request every episode answered with a call), group 1
    # all right: a group baseline gives both 0, the batch's mean tells them apart.
    buffer = _buffer([0.0, 0.0, 1.0, 1.0, 1.0, 0.0], [0, 0, 1, 1, 2, 2])
    episodes = [[i] for i in range(6)]
    batch = get_estimator("batch").fn(buffer, episodes, [0.0] * 6, 1.0, 1.0).advantages[:, 0].numpy()
    np.testing.assert_allclose(batch, np.array([-0.5, -0.5, 0.5, 0.5, 0.5, -0.5]) / (0.5 + 1e-4), rtol=1e-5)
    grpo = get_estimator("grpo").fn(buffer, episodes, [0.0] * 6, 1.0, 1.0).advantages[:, 0].numpy()
    np.testing.assert_allclose(grpo[:4], 0.0)
    uniform = get_estimator("batch").fn(_buffer([1.0] * 4, [0, 0, 1, 1]), [[i] for i in range(4)], [0.0] * 4, 1.0, 1.0)
    np.testing.assert_allclose(uniform.advantages.numpy(), 0.0)  # a batch with nothing between its episodes
    assert not get_estimator("batch").needs_critic and not get_estimator("batch").needs_groups


def test_loss_aggregations_weigh_tokens_as_documented():
    from fcenv.algos.ppo.losses import aggregate

    # Two actions: 1 token with term 4, 3 tokens with term 1 each (max_new_tokens 4).
    terms = torch.tensor([[4.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    mask = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    assert float(aggregate(terms, mask, "token_mean", 2, 4.0, 4)) == pytest.approx(7 / 4)
    assert float(aggregate(terms, mask, "sequence_mean", 2, 4.0, 4)) == pytest.approx((4 + 1) / 2)
    assert float(aggregate(terms, mask, "constant", 2, 4.0, 4)) == pytest.approx(7 / 8)
    # Micro-batches' shares add up to the minibatch's loss.
    for how in ("token_mean", "sequence_mean", "constant"):
        parts = sum(float(aggregate(terms[i:i + 1], mask[i:i + 1], how, 2, 4.0, 4)) for i in range(2))
        assert parts == pytest.approx(float(aggregate(terms, mask, how, 2, 4.0, 4)))
    assert resolve("DrGRPO") == Algorithm("drgrpo", "token", False, "constant")
    assert resolve("GRPO", loss="sequence_mean").loss == "sequence_mean"
    with pytest.raises(ValueError, match="averages token ratios"):
        resolve("APPO", loss="constant")


@pytest.mark.parametrize("algorithm", ["GRPO", "RLOO", "DrGRPO"])
def test_a_group_algorithm_trains_the_actor_with_no_critic_at_all(tiny_model, tmp_path, algorithm):
    runner = make_runner(tiny_model, tmp_path, "--algorithm_name", algorithm, "--group_size", "2",
                         "--n_rollout_threads", "8", "--num_env_steps", "16")
    assert runner.policy.value_head is None and runner.policy.critic_parameters() == []
    assert "critic" not in runner.policy.model.peft_config
    before = [p.detach().clone() for p in runner.policy.actor_parameters()]
    tasks = []
    for _ in range(2):
        source = runner._task_source()
        tasks.append([source(thread) for thread in range(8)])
    assert all(t[0] == t[1] and t[2] == t[3] for t in tasks)  # a group plays one task
    runner.run()
    assert any(not torch.equal(b, p.detach()) for b, p in zip(before, runner.policy.actor_parameters()))
    checkpoint = runner.run_dir / "checkpoints" / "iter_000002"
    assert (checkpoint / "actor" / "adapter_model.safetensors").exists()
    assert not (checkpoint / "critic").exists()
    assert set(json.loads((checkpoint / "manifest.json").read_text())["files"]) >= {"actor/adapter_model.safetensors"}
    resumed = make_runner(tiny_model, tmp_path, "--algorithm_name", algorithm, "--group_size", "2",
                          "--n_rollout_threads", "8", "--num_env_steps", "24", "--resume", str(runner.run_dir))
    assert resumed.iteration == 2
    metrics = resumed.train_iteration()
    assert math.isfinite(metrics["train/policy_loss"]) and "train/value_loss" not in metrics


def test_turn_level_ratio_keeps_turns_whole(tiny_model, tmp_path, bfcl_dir):
    runner = make_runner(tiny_model, tmp_path, "--dataset_path", str(bfcl_dir / "BFCL_v4_multi_turn_base.json"),
                         "--n_rollout_threads", "2", "--context_window", "1024", "--max_new_tokens", "8",
                         "--ratio_level", "turn", "--num_mini_batch", "2")
    from fcenv.algos.ppo.buffer import score_rollout
    from fcenv.algos.rollout.play import play

    rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(), max_new_tokens=8,
                   actions_per_env=1, generator=runner.sampling)
    buffer = score_rollout(runner.policy, rollout, token_budget=300)
    units = buffer.units("turn")
    keys = list(zip(buffer.episode.tolist(), buffer.turn.tolist()))
    assert len(buffer) > len(rollout.episodes)  # several steps per episode
    for i in range(len(buffer)):
        for j in range(len(buffer)):
            assert (units[i] == units[j]) == (keys[i] == keys[j])
    for minibatch in runner.trainer._minibatches(units, np.random.default_rng(0)):
        chosen = set(minibatch.tolist())
        for unit in set(units[torch.as_tensor(minibatch)].tolist()):
            assert {i for i, u in enumerate(units.tolist()) if u == unit} <= chosen  # whole turns only
    metrics = runner.train_iteration()
    assert math.isfinite(metrics["train/policy_loss"]) and math.isfinite(metrics["train/value_loss"])


def test_step_rewards_train_a_full_iteration(tiny_model, tmp_path):
    """--reward steps on the multi-turn split: rewards arrive at steps that end no turn, and an
    iteration trains."""
    from fcenv.algos.tiny.build import MULTI_TURN_TRAIN

    runner = make_runner(tiny_model, tmp_path, "--dataset_path", str(MULTI_TURN_TRAIN), "--reward", "steps",
                         "--n_rollout_threads", "4", "--max_new_tokens", "16")
    from fcenv.algos.rollout.play import play

    rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(), max_new_tokens=16,
                   actions_per_env=1, generator=runner.sampling)
    for episode in rollout.episodes:
        total = episode.total_reward(rollout.actions)
        valid = rollout.actions[episode.action_indices[-1]].info["valid"]
        assert (total == pytest.approx(1.0)) if valid else (0.0 <= total < 1.0)
    metrics = runner.train_iteration()
    assert math.isfinite(metrics["train/policy_loss"]) and math.isfinite(metrics["train/value_loss"])


def _demonstration_nll(runner) -> float:
    from fcenv.algos.model.batching import pack

    demos = runner.demonstrations[:16]
    batch = pack([c for c, _ in demos], [a for _, a in demos], runner.policy.pad_id, runner.policy.device)
    with torch.no_grad():
        logp = runner.policy.token_logprobs(batch)[0]
    return float(-(logp.sum() / batch.action_mask.sum()))


@pytest.mark.parametrize("sft_coef", ["0", "1"])
def test_sft_coef_teaches_the_ground_truth_in_every_actor_step(tiny_model, tmp_path, sft_coef):
    """--sft_coef (PPO-ptx): an actor step whose advantages are all zero (every group earned
    the same) still moves the actor toward the training tasks' ground truth, which is how RL
    keeps what the warm-up taught; without it such a step leaves the actor where it was."""
    from fcenv.algos.ppo.buffer import score_rollout
    from fcenv.algos.rollout.play import play

    runner = make_runner(tiny_model, tmp_path, "--algorithm_name", "GRPO", "--group_size", "2",
                         "--num_mini_batch", "1", "--kl_coef", "0", "--sft_coef", sft_coef)
    assert (len(runner.demonstrations) > 0) == (sft_coef != "0")  # built only when something learns them
    if sft_coef == "0":
        runner.demonstrations = make_runner(tiny_model, tmp_path / "with", "--sft_coef", "1").demonstrations
    rollout = play(runner.envs, runner.engine, runner.codec, runner._task_source(), max_new_tokens=24,
                   actions_per_env=1, generator=runner.sampling)
    buffer = score_rollout(runner.policy, rollout, token_budget=2048, with_reference=False)
    buffer.advantages = torch.zeros_like(buffer.action_mask)  # every group earned the same
    before = _demonstration_nll(runner)
    weights = [p.detach().clone() for p in runner.policy.actor_parameters()]
    stats = runner.trainer.update(buffer, np.random.default_rng(0))
    moved = any(not torch.equal(w, p.detach()) for w, p in zip(weights, runner.policy.actor_parameters()))
    if sft_coef == "0":
        assert not moved and "sft_loss" not in stats
    else:
        assert stats["sft_loss"] > 0 and _demonstration_nll(runner) < before


def test_sft_demonstrations_fit_the_micro_batch_tokens(tiny_model, tmp_path):
    """A demonstration micro-batch holds no more than --micro_batch_tokens (at least one
    demonstration): multi-turn demonstrations carry whole conversations, and as many as a
    minibatch has rows cost the update several times its RL part, and its memory."""
    from fcenv.algos.ppo.update import fitting

    assert fitting([700, 700, 700, 700], 2048) == 2
    assert fitting([3000, 10], 2048) == 1  # one too long for the budget is still learnt from
    assert fitting([700, 700, 700], 0) == 3  # 0: no limit
    for budget, rows in (("0", 16), ("64", 1)):  # a tiny task's demonstration is longer than 64 tokens
        runner = make_runner(tiny_model, tmp_path / budget, "--algorithm_name", "GRPO", "--group_size", "2",
                             "--sft_coef", "1", "--gradient_cp_steps", "2", "--micro_batch_tokens", budget)
        drawn = []
        runner.trainer.policy.token_logprobs = _recording(runner.trainer.policy.token_logprobs, drawn)
        runner.trainer._demonstration_step(np.random.default_rng(0), rows=32)
        assert [batch.input_ids.shape[0] for batch in drawn] == [rows]


def _recording(token_logprobs, drawn):
    def recorded(batch):
        drawn.append(batch)
        return token_logprobs(batch)
    return recorded
