"""Advantage and return math for one episode (contract C4), as pure numpy functions.

Token-level PPO uses Bellman backup with Action Decomposition (BAD, the POAD paper): inside
an action the target of a token's value is the next token's value, undiscounted and without
reward; only the last token of an action sees the reward and the discount. Action-level PPO
uses ordinary GAE with one value per action.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ArrayLike = Sequence[float] | np.ndarray


def bad_advantages(
    token_values: Sequence[ArrayLike] | np.ndarray,
    rewards: ArrayLike,
    last_value: float,
    gamma: float,
    lam: float,
) -> tuple[list[np.ndarray] | np.ndarray, list[np.ndarray] | np.ndarray]:
    """Per-token advantages and returns of one episode under BAD.

    ``token_values[t][j]`` is the critic's value of the state before token ``j`` of action
    ``t`` (``j = 0``: the observation alone); ``rewards[t]`` is the reward after action
    ``t``; ``last_value`` is the value of the state after the last action (0 when the
    episode ended, the critic's estimate when it was cut short). The outputs have the
    shapes of ``token_values``: a list of 1-D arrays (actions may differ in length), or a
    2-D array when a 2-D array was given.
    """
    rows = [np.asarray(v, dtype=np.float64).reshape(-1) for v in token_values]
    reward_row = np.asarray(rewards, dtype=np.float64).reshape(-1)
    if len(rows) != len(reward_row):
        raise ValueError(f"{len(rows)} actions but {len(reward_row)} rewards")
    if any(len(row) == 0 for row in rows):
        raise ValueError("every action needs at least one token")

    advantages = [np.zeros_like(row) for row in rows]
    gae = 0.0
    next_first_value = float(last_value)
    for t in range(len(rows) - 1, -1, -1):
        values = rows[t]
        last = len(values) - 1
        # The action's last token is the step that crosses into the next observation.
        delta = reward_row[t] + gamma * next_first_value - values[last]
        gae = delta + gamma * lam * gae
        advantages[t][last] = gae
        for j in range(last - 1, -1, -1):
            delta = values[j + 1] - values[j]
            gae = delta + lam * gae
            advantages[t][j] = gae
        next_first_value = float(values[0])

    returns = [adv + row for adv, row in zip(advantages, rows)]
    if isinstance(token_values, np.ndarray) and token_values.ndim == 2:
        return np.stack(advantages), np.stack(returns)
    return advantages, returns


def action_gae(
    action_values: ArrayLike,
    rewards: ArrayLike,
    last_value: float,
    gamma: float,
    lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Standard GAE over the actions of one episode; returns ``(advantages, returns)``.

    ``action_values[t]`` is the value of the observation action ``t`` was taken in,
    ``last_value`` the value after the last action (0 when the episode ended).
    """
    values = np.asarray(action_values, dtype=np.float64).reshape(-1)
    reward_row = np.asarray(rewards, dtype=np.float64).reshape(-1)
    if len(values) != len(reward_row):
        raise ValueError(f"{len(values)} actions but {len(reward_row)} rewards")
    advantages = np.zeros_like(values)
    gae = 0.0
    next_value = float(last_value)
    for t in range(len(values) - 1, -1, -1):
        delta = reward_row[t] + gamma * next_value - values[t]
        gae = delta + gamma * lam * gae
        advantages[t] = gae
        next_value = float(values[t])
    return advantages, advantages + values
