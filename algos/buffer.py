"""The on-policy buffer: one iteration's actions, scored, with advantages and returns.

It is built fresh from each rollout (nothing survives from an earlier iteration) as padded
``(N, K)`` tensors plus an explicit mask of real action tokens. TPPO gives every token its
own BAD advantage and value target; APPO gives the whole action one GAE advantage and one
value target (the value of the observation, column 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from algos.advantages import action_gae, bad_advantages
from algos.batching import pack
from algos.policy import Policy
from algos.rollout import Rollout

ALGORITHMS = ("TPPO", "APPO")


@dataclass
class Buffer:
    contexts: list[list[int]]
    actions: list[list[int]]
    action_mask: torch.Tensor  # (N, K) 1 on real action tokens
    old_logprobs: torch.Tensor  # (N, K) actor log-probs at rollout time
    ref_logprobs: torch.Tensor  # (N, K) reference (adapters off) log-probs
    values: torch.Tensor  # (N, K) critic value of the state before each token
    rewards: torch.Tensor  # (N,)
    advantages: torch.Tensor | None = None  # (N, K)
    returns: torch.Tensor | None = None  # (N, K)
    value_mask: torch.Tensor | None = None  # (N, K) entries that have a value target

    def __len__(self) -> int:
        return len(self.actions)


def _chunks(count: int, size: int) -> list[range]:
    return [range(i, min(i + size, count)) for i in range(0, count, size)]


@torch.no_grad()
def score_rollout(policy: Policy, rollout: Rollout, chunk_size: int, with_reference: bool = True) -> Buffer:
    """Old log-probs, reference log-probs (zeros when not needed) and token values of
    every action, in chunks."""
    contexts = [a.context for a in rollout.actions]
    actions = [a.action for a in rollout.actions]
    width = max(len(a) for a in actions)
    n = len(actions)
    old = torch.zeros(n, width)
    ref = torch.zeros(n, width)
    values = torch.zeros(n, width)
    mask = torch.zeros(n, width)
    for rows in _chunks(n, chunk_size):
        batch = pack([contexts[i] for i in rows], [actions[i] for i in rows], policy.pad_id, policy.device)
        k = batch.action_width
        old[rows.start:rows.stop, :k] = policy.token_logprobs(batch)[0].float().cpu()
        if with_reference:
            ref[rows.start:rows.stop, :k] = policy.reference_logprobs(batch).float().cpu()
        values[rows.start:rows.stop, :k] = policy.token_values(batch)[:, :k].float().cpu()
        mask[rows.start:rows.stop, :k] = batch.action_mask.cpu()
    rewards = torch.tensor([a.reward for a in rollout.actions], dtype=torch.float32)
    return Buffer(contexts=contexts, actions=actions, action_mask=mask, old_logprobs=old * mask,
                  ref_logprobs=ref * mask, values=values * mask, rewards=rewards)


@torch.no_grad()
def bootstrap_values(policy: Policy, rollout: Rollout, chunk_size: int) -> list[float]:
    """Per episode: 0 when it terminated, the critic's value of its last observation when
    the environment cut it short."""
    out = [0.0] * len(rollout.episodes)
    pending = [i for i, e in enumerate(rollout.episodes) if e.bootstrap_context is not None]
    for rows in _chunks(len(pending), chunk_size):
        chosen = [pending[i] for i in rows]
        values = policy.context_values([rollout.episodes[i].bootstrap_context for i in chosen])
        for i, value in zip(chosen, values.float().cpu().tolist()):
            out[i] = value
    return out


def compute_advantages(
    buffer: Buffer, rollout: Rollout, last_values: Sequence[float], algorithm: str, gamma: float, lam: float
) -> None:
    """Fill ``advantages``, ``returns`` and ``value_mask`` episode by episode."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; use one of {ALGORITHMS}")
    advantages = torch.zeros_like(buffer.values)
    returns = torch.zeros_like(buffer.values)
    value_mask = torch.zeros_like(buffer.values)
    lengths = buffer.action_mask.sum(1).long().tolist()
    values = buffer.values.double().numpy()
    for episode, last_value in zip(rollout.episodes, last_values):
        rows = episode.action_indices
        rewards = buffer.rewards[rows].double().numpy()
        if algorithm == "TPPO":
            token_values = [values[i, :lengths[i]] for i in rows]
            adv, ret = bad_advantages(token_values, rewards, last_value, gamma, lam)
            for i, a, r in zip(rows, adv, ret):
                advantages[i, :lengths[i]] = torch.from_numpy(np.asarray(a, dtype=np.float32))
                returns[i, :lengths[i]] = torch.from_numpy(np.asarray(r, dtype=np.float32))
                value_mask[i, :lengths[i]] = 1.0
        else:
            adv, ret = action_gae(values[rows, 0], rewards, last_value, gamma, lam)
            for i, a, r in zip(rows, adv, ret):
                advantages[i, :lengths[i]] = float(a)  # the action's advantage on each of its tokens
                returns[i, 0] = float(r)
                value_mask[i, 0] = 1.0
    buffer.advantages = advantages
    buffer.returns = returns
    buffer.value_mask = value_mask
