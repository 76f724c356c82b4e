"""ET-Agent's methods on the env: ARPO's entropy branching from env snapshots, the efficiency
reward, and dynamic sampling; one full training iteration with all of them on the multi-turn
split."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

pytest.importorskip("peft")
from fcenv.algos.config import parse_config
from fcenv.algos.ppo.buffer import Buffer
from fcenv.algos.ppo.estimators import get_estimator
from fcenv.algos.rollout.branching import BranchingSettings, play_branching
from fcenv.algos.rollout.groups import efficiency_rewards, informative_groups
from fcenv.algos.rollout.records import ActionRecord, EpisodeRecord, Rollout
from fcenv.algos.tiny.build import MULTI_TURN_TRAIN
from tests.support.runs import make_runner

GROUP_FLAGS = ("--dataset_path", str(MULTI_TURN_TRAIN), "--algorithm_name", "GRPO", "--group_size", "4",
               "--n_rollout_threads", "8", "--max_new_tokens", "16")


def _branch(runner, settings: BranchingSettings) -> Rollout:
    source = runner._task_source()
    return play_branching(runner.envs, runner.engine, runner.codec, lambda group: source(group * 4), 4,
                          max_new_tokens=16, settings=settings, generator=runner.sampling)


def test_branches_start_from_the_snapshot_after_tool_results_and_fill_the_budget(tiny_model, tmp_path):
    runner = make_runner(tiny_model, tmp_path, *GROUP_FLAGS)
    rollout = _branch(runner, BranchingSettings(beta=0.0, threshold=1.0))  # branch whenever a thread is free
    assert rollout.branches > 0
    groups: dict[int, list[EpisodeRecord]] = {}
    for episode in rollout.episodes:
        groups.setdefault(rollout.actions[episode.action_indices[0]].thread // 4, []).append(episode)
    assert sorted(len(g) for g in groups.values()) == [4, 4]  # the whole budget, no more
    by_actions = {tuple(e.action_indices): e for e in rollout.episodes}
    assert len(by_actions) == len(rollout.episodes)
    for episode in rollout.episodes:
        own = [i for i in episode.action_indices if rollout.actions[i].thread == rollout.actions[episode.action_indices[-1]].thread]
        shared = episode.action_indices[: len(episode.action_indices) - len(own)]
        assert episode.action_indices == shared + own and own  # a shared prefix, then actions of its own
        if shared:
            # It branched after a step whose calls ran, from the parent's exact state: the
            # parent's next action was sampled from the same context as the branch's first.
            assert rollout.actions[shared[-1]].info["calls"] > 0
            parent = next(e for e in rollout.episodes if e is not episode and e.action_indices[: len(shared)] == shared
                          and len(e.action_indices) > len(shared)
                          and rollout.actions[e.action_indices[len(shared)]].thread != rollout.actions[own[0]].thread)
            assert rollout.actions[parent.action_indices[len(shared)]].context == rollout.actions[own[0]].context
    threads = [rollout.actions[e.action_indices[-1]].thread for e in rollout.episodes]
    assert len(set(threads)) == len(threads)  # one chain per thread


def test_no_branching_still_plays_the_whole_budget(tiny_model, tmp_path):
    runner = make_runner(tiny_model, tmp_path, *GROUP_FLAGS)
    rollout = _branch(runner, BranchingSettings(beta=0.0, threshold=-1.0))  # never branch
    assert rollout.branches == 0 and len(rollout.episodes) == 8
    assert not any(set(a.action_indices) & set(b.action_indices)
                   for i, a in enumerate(rollout.episodes) for b in rollout.episodes[i + 1:])


def test_a_shared_action_gets_the_mean_of_its_episodes_advantages():
    # Episode 0 = rows [0, 1], episode 1 = rows [0, 2] (branched after row 0), episode 2 = [3].
    n = 4
    zeros = torch.zeros(n, 2)
    buffer = Buffer(contexts=[[1]] * n, actions=[[1, 2]] * n, action_mask=torch.ones(n, 2), old_logprobs=zeros,
                    ref_logprobs=zeros, values=zeros, rewards=torch.tensor([0.0, 1.0, 0.0, 0.0]),
                    episode=torch.tensor([1, 0, 1, 2]), turn=torch.zeros(n, dtype=torch.long),
                    task=torch.zeros(n, dtype=torch.long), group=torch.zeros(n, dtype=torch.long))
    advantages = get_estimator("rloo").fn(buffer, [[0, 1], [0, 2], [3]], [0.0] * 3, 1.0, 1.0).advantages[:, 0]
    # returns 1, 0, 0: RLOO advantages 1, -0.5, -0.5
    np.testing.assert_allclose(advantages.numpy(), [0.25, 1.0, -0.5, -0.5], rtol=1e-6)


def _episode_rollout(specs):
    """specs: (thread, valid, calls, tokens, error_type) per one-action episode."""
    actions = [ActionRecord(thread=t, context=[1], action=[5] * tokens, sample_logprobs=[0.0] * tokens, text="",
                            reward=0.5, info={"valid": valid, "calls": calls, "error_type": error})
               for t, valid, calls, tokens, error in specs]
    episodes = [EpisodeRecord(task_index=0, task_id="t", action_indices=[i]) for i in range(len(specs))]
    return Rollout(actions=actions, episodes=episodes, seconds=0.0)


def test_efficiency_reward_pays_right_answers_with_fewer_calls_and_tokens_more():
    rollout = _episode_rollout([(0, True, 1, 10, None), (1, True, 3, 30, None), (2, False, 1, 10, "x"),
                                (3, False, 0, 5, "ast_decoder:decoder_failed")])
    efficiency_rewards(rollout, group_size=4, sigma=1.0)
    rewards = [a.reward for a in rollout.actions]
    assert rewards[0] > 1.0 > rewards[1] > 0.0  # fewer calls and tokens than the group: up to 2x
    assert rewards[2] == 0.0 and rewards[3] == -1.0  # wrong: 0; broken format: -1
    calls = np.array([1, 3, 1, 0.0])
    length = np.array([10, 30, 10, 5.0])
    z = (length - length.mean()) / (length.std() + 1e-6)
    expected = 2 / (1 + np.exp(calls[0] - calls.mean())) * 2 / (1 + np.exp(z[0]))
    assert rewards[0] == pytest.approx(expected)
    efficiency_rewards(rollout, group_size=4, sigma=0.0)  # decayed to 0: the plain verdict
    assert [a.reward for a in rollout.actions] == [1.0, 1.0, 0.0, -1.0]


def test_dynamic_sampling_keeps_only_groups_whose_returns_differ():
    rollout = _episode_rollout([(0, True, 1, 3, None), (1, False, 1, 3, None), (2, True, 1, 3, None),
                                (3, True, 1, 3, None), (4, False, 1, 3, None), (5, False, 1, 3, None)])
    for action in rollout.actions:  # --reward bfcl: the verdict
        action.reward = float(action.info["valid"])
    kept, dropped = informative_groups(rollout, group_size=2)
    assert dropped == 2 and [a.thread for a in kept.actions] == [0, 1]
    assert [e.action_indices for e in kept.episodes] == [[0], [1]]
    # A shaped reward: two failing episodes where one failed less are a group to learn from;
    # two that earned the same are not, whatever their verdicts.
    for action, reward in zip(rollout.actions, [1.0, 0.25, 0.5, 0.5, 0.1, 0.3]):
        action.reward = reward
    kept, dropped = informative_groups(rollout, group_size=2)
    assert dropped == 1 and [a.thread for a in kept.actions] == [0, 1, 4, 5]


def test_one_iteration_with_branching_efficiency_reward_and_dynamic_sampling(tiny_model, tmp_path):
    runner = make_runner(tiny_model, tmp_path, *GROUP_FLAGS, "--branching", "entropy", "--branch_threshold", "1.0",
                         "--reward", "efficiency", "--dynamic_sampling", "--num_env_steps", "200")
    before = [p.detach().clone() for p in runner.policy.actor_parameters()]
    metrics = runner.train_iteration()
    assert metrics["rollout/branches"] > 0 and "rollout/dropped_groups" in metrics
    assert 0 < metrics["train/efficiency_sigma"] <= 1.0
    if metrics["rollout/dropped_groups"] < 2:  # a group with mixed verdicts was trained on
        assert math.isfinite(metrics["train/policy_loss"])
        assert any(not torch.equal(b, p.detach()) for b, p in zip(before, runner.policy.actor_parameters()))
    else:
        assert "train/policy_loss" not in metrics


@pytest.mark.parametrize("flags, message", [
    (["--reward", "efficiency"], "--reward efficiency compares the episodes of a group"),
    (["--dynamic_sampling"], "--dynamic_sampling compares"),
    (["--branching", "entropy", "--group_size", "2", "--n_rollout_threads", "4"], "only the group estimators"),
    (["--branch_beta", "nan"], "--branch_beta must be 0 or more and finite"),
])
def test_group_method_flags_need_groups(flags, message, capsys):
    with pytest.raises(SystemExit):
        parse_config(flags)
    assert message in capsys.readouterr().err
