"""The on-policy buffer: one iteration's actions, scored, with advantages and returns.

It is built fresh from each rollout (nothing survives from an earlier iteration) as padded
``(N, K)`` tensors plus an explicit mask of real action tokens. Each row keeps the episode,
the turn and the task it came from, which turn-level ratios and group estimators need. The
advantage estimator (``fcenv.algos.ppo.estimators``) fills advantages, value targets and their mask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from fcenv.algos.model.batching import TokenBatch, length_sorted_chunks, pack, pack_states
from fcenv.algos.model.policy import Policy
from fcenv.algos.ppo.estimators import get_estimator
from fcenv.algos.rollout.records import Rollout


@dataclass
class Buffer:
    contexts: list[list[int]]
    actions: list[list[int]]
    action_mask: torch.Tensor  # (N, K) 1 on real action tokens
    # (N, K) actor log-probs at rollout time; None until the update's first pass fills them
    # (score_rollout's old_from="update").
    old_logprobs: torch.Tensor | None
    ref_logprobs: torch.Tensor  # (N, K) reference (adapters off) log-probs
    values: torch.Tensor  # (N, K) critic value of the state before each token (zeros without a critic)
    rewards: torch.Tensor  # (N,)
    episode: torch.Tensor  # (N,) index of the row's episode in the rollout
    turn: torch.Tensor  # (N,) the row's turn within its episode (0 for single-turn)
    task: torch.Tensor  # (N,) dataset index of the row's task
    group: torch.Tensor  # (N,) the row's group: episodes of one task played together (--group_size)
    advantages: torch.Tensor | None = None  # (N, K)
    returns: torch.Tensor | None = None  # (N, K)
    value_mask: torch.Tensor | None = None  # (N, K) entries that have a value target
    # With a top-layer critic: each row's base hidden states entering the critic's first
    # layer (context then action tokens, hidden size), kept from the reference pass.
    critic_states: list[torch.Tensor] | None = None
    # Multi-step episodes: each one's rows run as one sequence in the update (``pack(chain=True)``).
    chained: bool = False

    def __len__(self) -> int:
        return len(self.actions)

    def units(self, level: str) -> torch.Tensor:
        """(N,) id of the ratio unit each row belongs to: the row itself for token and action
        ratios, its (episode, turn) for turn ratios. Ids are dense, in first-seen order."""
        if level != "turn":
            return torch.arange(len(self))
        keys: dict[tuple[int, int], int] = {}
        return torch.tensor([keys.setdefault((e, t), len(keys)) for e, t in zip(self.episode.tolist(), self.turn.tolist())])

    def states_for(self, rows: Sequence[int], batch: TokenBatch) -> torch.Tensor | None:
        """The critic states of ``rows`` laid out like ``batch`` (None without them)."""
        if self.critic_states is None:
            return None
        return pack_states([self.critic_states[i] for i in rows], [len(self.contexts[i]) for i in rows], batch)


# Where the PPO ratio's old log-probs come from (score_rollout's ``old_from``).
OLD_LOGPROB_SOURCES = ("rescore", "sampling", "update")


def _chunks(count: int, size: int) -> list[range]:
    return [range(i, min(i + size, count)) for i in range(0, count, size)]


@torch.no_grad()
def score_rollout(policy: Policy, rollout: Rollout, token_budget: int, min_chunks: int = 1,
                  with_reference: bool = True, group_size: int = 1, old_from: str = "rescore",
                  sampling_exact: bool | None = None) -> Buffer:
    """Old log-probs, reference log-probs (zeros when not needed) and token values (zeros
    without a critic) of every action, in length-sorted micro-batches (``length_sorted_chunks``).

    The old log-probs (``old_from``):
    - "rescore": an actor pass here.
    - "sampling" (``--sampling_old_logprobs``): the sampling pass's own, the behaviour
      policy's probabilities, equal to a scoring pass's up to float rounding (a few 1e-6) in
      fp32. When the engine's log-probs are not exact (``sampling_exact``, by default the
      policy's: a model in another dtype, whose cached and full passes round differently, or
      another engine's kernels) the actions are rescored.
    - "update": left as None for the update to fill from its first pass (``PPOTrainer``). With
      one minibatch per epoch that pass runs the unchanged policy on every row, so it is the
      scoring pass, exactly, and a forward pass of the actor is saved."""
    if old_from not in OLD_LOGPROB_SOURCES:
        raise ValueError(f"old_from must be one of {OLD_LOGPROB_SOURCES}, not {old_from!r}")
    contexts = [a.context for a in rollout.actions]
    actions = [a.action for a in rollout.actions]
    width = max(len(a) for a in actions)
    n = len(actions)
    old = torch.zeros(n, width)
    ref = torch.zeros(n, width)
    values = torch.zeros(n, width)
    mask = torch.zeros(n, width)
    for row, action in enumerate(actions):
        mask[row, :len(action)] = 1.0
    exact = policy.samples_exactly if sampling_exact is None else sampling_exact
    rescore = old_from == "rescore" or (old_from == "sampling" and not exact)
    if old_from == "sampling" and not rescore:
        for row, record in enumerate(rollout.actions):
            old[row, :len(record.sample_logprobs)] = torch.tensor(record.sample_logprobs)
    # Multi-step episodes run as one sequence each (``pack(chain=True)``), their rows read off it.
    chain = chains_episodes(rollout)
    groups = [list(e.action_indices) for e in rollout.episodes] if chain else [[i] for i in range(n)]
    # A top-layer critic starts from the base's states, which the reference pass computes (per row:
    # not kept for chained rows, whose critic then runs whole, over the one sequence).
    states_wanted = policy.has_critic and policy.critic_start > 0 and not chain
    critic_states: list[torch.Tensor] | None = [None] * n if states_wanted else None
    if rescore or with_reference or policy.has_critic:
        for rows in length_sorted_chunks(contexts, actions, groups, token_budget, min_chunks, chained=chain):
            batch = pack([contexts[i] for i in rows], [actions[i] for i in rows], policy.pad_id, policy.device,
                         chain=chain)
            c, k = batch.context_length, batch.action_width
            index = torch.tensor(rows)
            if rescore:
                old[index, :k] = policy.token_logprobs(batch)[0].float().cpu()
            states = None
            if with_reference or states_wanted:
                reference, states = policy.reference_pass(batch)
                if with_reference:
                    ref[index, :k] = reference.float().cpu()
            if states is not None:
                for i, row in enumerate(rows):
                    critic_states[row] = states[i, c - len(contexts[row]):c + len(actions[row])].to("cpu", copy=True)
            if policy.has_critic:
                values[index, :k] = policy.token_values(batch, states)[:, :k].float().cpu()
    rewards = torch.tensor([a.reward for a in rollout.actions], dtype=torch.float32)
    episode = torch.zeros(n, dtype=torch.long)
    task = torch.zeros(n, dtype=torch.long)
    for index, record in enumerate(rollout.episodes):
        episode[record.action_indices] = index
        task[record.action_indices] = record.task_index
    turn = torch.tensor([a.turn for a in rollout.actions], dtype=torch.long)
    group = torch.tensor([a.thread // group_size for a in rollout.actions], dtype=torch.long)
    return Buffer(contexts=contexts, actions=actions, action_mask=mask,
                  old_logprobs=None if old_from == "update" else old * mask,
                  ref_logprobs=ref * mask, values=values * mask, rewards=rewards, episode=episode, turn=turn,
                  task=task, group=group, critic_states=critic_states, chained=chain)


def chains_episodes(rollout: Rollout) -> bool:
    """Whether a rollout's episodes have several steps, which then run as one sequence each."""
    return any(len(e.action_indices) > 1 for e in rollout.episodes)


def engine_logprob_gap(buffer: Buffer, rollout: Rollout) -> dict[str, float]:
    """The engine's sampling log-probs against the trainer's old log-probs of the same tokens:
    the sum of their absolute differences and the token count (``rollout/engine_logprob_gap``,
    the train/inference mismatch), when the old log-probs are the trainer's (empty until the
    update has recorded them)."""
    if buffer.old_logprobs is None:
        return {}
    sampled = torch.zeros_like(buffer.action_mask)
    for row, record in enumerate(rollout.actions):
        sampled[row, :len(record.sample_logprobs)] = torch.tensor(record.sample_logprobs)
    gap = ((buffer.old_logprobs - sampled).abs() * buffer.action_mask).sum()
    return {"rollout/engine_logprob_gap:sum": float(gap), "rollout/engine_logprob_gap:n": float(buffer.action_mask.sum())}


@torch.no_grad()
def bootstrap_values(policy: Policy, rollout: Rollout, chunk_size: int) -> list[float]:
    """Per episode: 0 when it terminated, the critic's value of its last observation when
    the environment cut it short."""
    out = [0.0] * len(rollout.episodes)
    if not policy.has_critic:
        return out
    pending = [i for i, e in enumerate(rollout.episodes) if e.bootstrap_context is not None]
    for rows in _chunks(len(pending), chunk_size):
        chosen = [pending[i] for i in rows]
        values = policy.context_values([rollout.episodes[i].bootstrap_context for i in chosen])
        for i, value in zip(chosen, values.float().cpu().tolist()):
            out[i] = value
    return out


def compute_advantages(buffer: Buffer, rollout: Rollout, last_values: Sequence[float], estimator: str,
                       gamma: float, lam: float) -> None:
    """Fill ``advantages``, ``returns`` and ``value_mask`` with the named estimator."""
    estimate = get_estimator(estimator).fn(buffer, [e.action_indices for e in rollout.episodes], last_values,
                                           gamma, lam)
    buffer.advantages, buffer.returns, buffer.value_mask = estimate.advantages, estimate.returns, estimate.value_mask
