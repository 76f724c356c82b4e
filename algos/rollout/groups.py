"""What group-relative methods do to a rollout between playing and scoring it.

A group is the episodes of one task played together (``ActionRecord.thread // group_size``).
Group rewards (``--reward efficiency``) are registered in ``GROUP_REWARDS``, in the registry
style of the env's own rewards (``fcenv.rewards.REWARDS``): each names the env reward its episodes
are played with and rewrites the played group's rewards.

- ``efficiency_rewards``: ET-Agent's efficiency reward. Each episode earns, at its last action,
  ``valid * f_calls * f_length + f_format`` in place of the env's reward, with
  ``f(x) = 2 / (1 + exp(sigma * x))`` of its call count minus the group's mean and of its
  z-scored action tokens: a right answer with fewer calls or fewer tokens than its group earns
  up to 2, a wrong one 0, a broken format -1. ``sigma`` decays to 0 over the run (ET-Agent's
  released scripts end at 0), where the reward is BFCL's verdict minus the format penalty.
- ``informative_groups``: dynamic sampling (DAPO): only groups whose episodes' returns differ
  go to the update; a group of equal returns has no group-relative advantage to learn. Under
  ``--reward bfcl`` that is a group whose episodes disagree on BFCL's verdict; under a shaped
  reward a group of failing episodes is kept when some failed less than others.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fcenv.algos.rollout.records import EpisodeRecord, Rollout
from fcenv.handlers.registry import Registry


def _groups(rollout: Rollout, group_size: int) -> dict[int, list[int]]:
    """Episode indices per group, in rollout order."""
    groups: dict[int, list[int]] = defaultdict(list)
    for index, episode in enumerate(rollout.episodes):
        groups[rollout.actions[episode.action_indices[0]].thread // group_size].append(index)
    return groups


def episode_valid(rollout: Rollout, episode: EpisodeRecord) -> bool:
    """BFCL's verdict of the episode (a multi-turn episode's final one)."""
    return bool(rollout.actions[episode.action_indices[-1]].info.get("valid", False))


def broken_format(rollout: Rollout, episode: EpisodeRecord) -> bool:
    """The answer could not be decoded where calls were due (BFCL's decoder errors). Prose is a
    valid answer for irrelevance tasks and ends a multi-turn turn, so it is not broken."""
    error = rollout.actions[episode.action_indices[-1]].info.get("error_type") or ""
    return error.startswith("ast_decoder:") or error == "relevance_error:decoder_failed"


def _factor(x: np.ndarray, sigma: float) -> np.ndarray:
    return 2.0 / (1.0 + np.exp(sigma * x))


def efficiency_rewards(rollout: Rollout, group_size: int, sigma: float) -> None:
    """Replace the actions' rewards with ET-Agent's efficiency reward, paid at each episode's
    last action (earlier actions earn 0). Shared first actions (branching) earn 0 too: every
    episode ends in an action of its own."""
    for action in rollout.actions:
        action.reward = 0.0
    for members in _groups(rollout, group_size).values():
        episodes = [rollout.episodes[i] for i in members]
        calls = np.array([sum(rollout.actions[a].info.get("calls", 0) for a in e.action_indices) for e in episodes],
                         dtype=float)
        length = np.array([sum(len(rollout.actions[a].action) for a in e.action_indices) for e in episodes],
                          dtype=float)
        z_length = (length - length.mean()) / (length.std() + 1e-6)
        f = _factor(calls - calls.mean(), sigma) * _factor(z_length, sigma)
        for episode, factor in zip(episodes, f):
            reward = float(episode_valid(rollout, episode)) * float(factor)
            reward -= float(broken_format(rollout, episode))
            rollout.actions[episode.action_indices[-1]].reward = reward


def informative_groups(rollout: Rollout, group_size: int) -> tuple[Rollout, int]:
    """The rollout cut to the groups whose episodes' returns differ, and how many groups were
    dropped. Actions are renumbered; each kept episode keeps its actions."""
    kept_episodes: list[EpisodeRecord] = []
    dropped = 0
    for members in _groups(rollout, group_size).values():
        # Rounded: returns summed in another order must not look different.
        returns = {round(sum(rollout.actions[a].reward for a in rollout.episodes[i].action_indices), 9)
                   for i in members}
        if len(returns) > 1:
            kept_episodes += [rollout.episodes[i] for i in members]
        else:
            dropped += 1
    old_rows = sorted({row for episode in kept_episodes for row in episode.action_indices})
    new_row = {old: new for new, old in enumerate(old_rows)}
    episodes = [replace(e, action_indices=[new_row[a] for a in e.action_indices]) for e in kept_episodes]
    return Rollout(actions=[rollout.actions[i] for i in old_rows], episodes=episodes, seconds=rollout.seconds,
                   branches=rollout.branches), dropped


@dataclass(frozen=True)
class GroupReward:
    """A reward relative to the episodes of a group: the env pays ``env_reward`` (a name in
    ``fcenv.rewards.REWARDS``), then ``rewrite(rollout, config, progress)`` replaces the played
    rewards in place (``progress``: the run's share done, in [0, 1]) and returns scalars to log."""

    rewrite: Callable[[Rollout, Any, float], dict[str, float]]
    env_reward: str


GROUP_REWARDS: Registry[GroupReward] = Registry("group reward", "fcenv.algos.rollout", ("groups",), "fcenv.group_rewards")
register_group_reward = GROUP_REWARDS.register


def _efficiency(rollout: Rollout, config, progress: float) -> dict[str, float]:
    sigma = config.efficiency_sigma * max(0.0, 1.0 - progress)  # decays linearly to 0 over the run
    efficiency_rewards(rollout, config.group_size, sigma)
    return {"train/efficiency_sigma": sigma}


register_group_reward("efficiency", GroupReward(_efficiency, env_reward="bfcl"))
