"""Advantage estimators: from a scored rollout to advantages and value targets.

An estimator is one function registered by name. It gets the buffer (rewards, the critic's
token values when there is a critic, the mask of real action tokens, and each row's episode,
turn and task) and the bootstrap value of each episode, and returns:

- ``advantages`` (N, K): every real action token's advantage (an action-level estimator
  writes the action's advantage on each of its tokens);
- ``returns`` (N, K) and ``value_mask`` (N, K): the critic's targets and which entries have one
  (all zeros for an estimator that needs no critic).

Built in (``ESTIMATORS``): ``bad`` (TPPO: Bellman backup with action decomposition, per
token), ``action_gae`` (APPO: GAE over actions, one value per action), ``turn_gae`` (TurnPPO:
GAE over BFCL turns, one value per turn), and the critic-free group estimators ``grpo`` (the
episode's return against its group's mean, over the group's standard deviation), ``drgrpo``
(the same without the division) and ``rloo`` (against the mean of the rest of its group),
which need several episodes of the same task per group (``--group_size``), and ``batch``
(REINFORCE++: against the whole batch's mean, over its standard deviation). A new estimator is
a function registered here with ``@register_estimator`` (or under the ``fcenv.estimators``
entry-point group), plus a preset in ``fcenv.algos.ppo.algorithms`` if it should have a name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from fcenv.algos.ppo.advantages import action_gae, bad_advantages
from fcenv.handlers.registry import Registry


@dataclass(frozen=True)
class Estimate:
    advantages: torch.Tensor
    returns: torch.Tensor
    value_mask: torch.Tensor


# (buffer, episodes, last_values, gamma, lam) -> Estimate; ``episodes`` are lists of buffer rows.
EstimatorFn = Callable[..., Estimate]


@dataclass(frozen=True)
class Estimator:
    fn: EstimatorFn
    needs_critic: bool
    needs_groups: bool = False  # several episodes of one task per group
    whiten: bool = True  # normalise the advantages over the whole batch before the update


ESTIMATORS: Registry[Estimator] = Registry("advantage estimator", "fcenv.algos.ppo", ("estimators",), "fcenv.estimators")


def register_estimator(name: str, needs_critic: bool, needs_groups: bool = False,
                       whiten: bool = True) -> Callable[[EstimatorFn], EstimatorFn]:
    """A decorator: ``fn`` becomes the advantage estimator ``name`` (``--advantage_estimator``)."""
    def decorator(fn: EstimatorFn) -> EstimatorFn:
        ESTIMATORS.register(name, Estimator(fn, needs_critic, needs_groups, whiten))
        return fn

    return decorator


def get_estimator(name: str) -> Estimator:
    if name not in ESTIMATORS:
        raise ValueError(f"unknown advantage estimator {name!r}; known: {ESTIMATORS.names()}")
    return ESTIMATORS.get(name)


def _zeros(buffer) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.zeros_like(buffer.action_mask), torch.zeros_like(buffer.action_mask), torch.zeros_like(buffer.action_mask)


@register_estimator("bad", needs_critic=True)
def bad(buffer, episodes: Sequence[list[int]], last_values: Sequence[float], gamma: float, lam: float) -> Estimate:
    """Per token: inside an action a token's target is the next token's value (no reward, no
    discount); the action's last token sees the reward and the discounted next action."""
    advantages, returns, value_mask = _zeros(buffer)
    lengths = buffer.action_mask.sum(1).long().tolist()
    values = buffer.values.double().numpy()
    rewards = buffer.rewards.double().numpy()
    for rows, last_value in zip(episodes, last_values):
        token_values = [values[i, :lengths[i]] for i in rows]
        adv, ret = bad_advantages(token_values, rewards[rows], last_value, gamma, lam)
        for i, a, r in zip(rows, adv, ret):
            advantages[i, :lengths[i]] = torch.from_numpy(np.asarray(a, dtype=np.float32))
            returns[i, :lengths[i]] = torch.from_numpy(np.asarray(r, dtype=np.float32))
            value_mask[i, :lengths[i]] = 1.0
    return Estimate(advantages, returns, value_mask)


@register_estimator("action_gae", needs_critic=True)
def action_level_gae(buffer, episodes: Sequence[list[int]], last_values: Sequence[float], gamma: float,
                     lam: float) -> Estimate:
    """GAE over the actions of an episode, the value of each action's observation (column 0)."""
    advantages, returns, value_mask = _zeros(buffer)
    values = buffer.values.double().numpy()
    rewards = buffer.rewards.double().numpy()
    for rows, last_value in zip(episodes, last_values):
        adv, ret = action_gae(values[rows, 0], rewards[rows], last_value, gamma, lam)
        for i, a, r in zip(rows, adv, ret):
            advantages[i] = float(a) * buffer.action_mask[i]
            returns[i, 0] = float(r)
            value_mask[i, 0] = 1.0
    return Estimate(advantages, returns, value_mask)


def _episode_returns(buffer, episodes: Sequence[list[int]]) -> np.ndarray:
    rewards = buffer.rewards.double().numpy()
    return np.array([rewards[rows].sum() for rows in episodes])


def _broadcast(buffer, episodes: Sequence[list[int]], per_episode: np.ndarray) -> Estimate:
    """Every token of every action of an episode gets the episode's advantage; an action that
    several episodes share (branching) gets the mean of theirs. No value targets."""
    advantages, returns, value_mask = _zeros(buffer)
    total = torch.zeros(len(buffer), dtype=torch.float64)
    count = torch.zeros(len(buffer), dtype=torch.float64)
    for rows, value in zip(episodes, per_episode):
        total[rows] += float(value)
        count[rows] += 1.0
    advantages = (total / count.clamp(min=1.0)).float()[:, None] * buffer.action_mask
    return Estimate(advantages, returns, value_mask)


def _groups(buffer, episodes: Sequence[list[int]]) -> dict[int, list[int]]:
    members: dict[int, list[int]] = {}
    for index, rows in enumerate(episodes):
        members.setdefault(int(buffer.group[rows[0]]), []).append(index)
    return members


@register_estimator("grpo", needs_critic=False, needs_groups=True, whiten=False)
def group_normalised(buffer, episodes: Sequence[list[int]], last_values: Sequence[float], gamma: float,
                     lam: float, eps: float = 1e-4) -> Estimate:
    """GRPO: (return - group mean) / (group standard deviation + eps); a group whose
    episodes all earned the same gets 0 (it says nothing about which behaviour is better)."""
    returns = _episode_returns(buffer, episodes)
    advantages = np.zeros_like(returns)
    for members in _groups(buffer, episodes).values():
        group = returns[members]
        advantages[members] = (group - group.mean()) / (group.std() + eps)
    return _broadcast(buffer, episodes, advantages)


@register_estimator("drgrpo", needs_critic=False, needs_groups=True, whiten=False)
def group_centred(buffer, episodes: Sequence[list[int]], last_values: Sequence[float], gamma: float,
                  lam: float) -> Estimate:
    """Dr.GRPO: the return minus its group's mean, not divided by the group's std (which
    weighs groups that are nearly all right or all wrong the most)."""
    returns = _episode_returns(buffer, episodes)
    advantages = np.zeros_like(returns)
    for members in _groups(buffer, episodes).values():
        advantages[members] = returns[members] - returns[members].mean()
    return _broadcast(buffer, episodes, advantages)


@register_estimator("rloo", needs_critic=False, needs_groups=True, whiten=False)
def leave_one_out(buffer, episodes: Sequence[list[int]], last_values: Sequence[float], gamma: float,
                  lam: float) -> Estimate:
    """RLOO: the return against the mean return of the other episodes of its group."""
    returns = _episode_returns(buffer, episodes)
    advantages = np.zeros_like(returns)
    for members in _groups(buffer, episodes).values():
        group = returns[members]
        if len(group) > 1:
            advantages[members] = (group - (group.sum() - group) / (len(group) - 1))
    return _broadcast(buffer, episodes, advantages)


@register_estimator("batch", needs_critic=False, whiten=False)
def batch_normalised(buffer, episodes: Sequence[list[int]], last_values: Sequence[float], gamma: float,
                     lam: float, eps: float = 1e-4) -> Estimate:
    """REINFORCE++'s baseline: the return against the mean return of the batch's episodes (this
    process's), over their standard deviation. A group whose episodes all earned the same still
    teaches here: a group below the batch's average is pushed away from what it did, which is
    the one signal a group baseline cannot give, e.g. for an irrelevant request that every
    episode answered with a call. Without --dynamic_sampling, which would drop such groups."""
    returns = _episode_returns(buffer, episodes)
    if len(returns) == 0:
        return _broadcast(buffer, episodes, returns)
    return _broadcast(buffer, episodes, (returns - returns.mean()) / (returns.std() + eps))


@register_estimator("turn_gae", needs_critic=True)
def turn_level_gae(buffer, episodes: Sequence[list[int]], last_values: Sequence[float], gamma: float,
                   lam: float) -> Estimate:
    """GAE over the BFCL turns of an episode (Turn-PPO, AgileRL's turn granularity): one value
    per turn, the critic's value of the turn's first observation; the turn's reward is the sum
    of its actions' rewards. Every token of every action in a turn gets the turn's advantage."""
    advantages, returns, value_mask = _zeros(buffer)
    values = buffer.values.double().numpy()
    rewards = buffer.rewards.double().numpy()
    turns_of_rows = buffer.turn.tolist()
    for rows, last_value in zip(episodes, last_values):
        turns: list[list[int]] = []
        for row in rows:
            if not turns or turns_of_rows[row] != turns_of_rows[turns[-1][0]]:
                turns.append([])
            turns[-1].append(row)
        adv, ret = action_gae([values[t[0], 0] for t in turns], [rewards[t].sum() for t in turns], last_value,
                              gamma, lam)
        for members, a, r in zip(turns, adv, ret):
            for row in members:
                advantages[row] = float(a) * buffer.action_mask[row]
            returns[members[0], 0] = float(r)
            value_mask[members[0], 0] = 1.0
    return Estimate(advantages, returns, value_mask)
