"""The PPO update: epochs over the buffer, minibatches, gradient accumulation, clipping.

The clipped surrogate works at one of three levels (``PPOSettings.ratio``): per token (the
ratio of token probabilities, each token's own advantage, as TPPO), per action (the product
of an action's token ratios, one advantage per action, as APPO) or per turn (the product over
a multi-turn episode's turn, one advantage per turn). All add the entropy bonus and the KL
penalty to the reference policy per token; with a critic, it is trained with a clipped value
loss on the entries that have a target. Advantages are whitened once per iteration over the
units of the ratio (tokens, actions or turns) of every process's buffer.

With several processes each one updates on its own buffer; gradients are averaged across
processes (``reduce_mean``) before clipping, so the replicas stay identical.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch

from fcenv.algos.model.batching import length_sorted_chunks, pack
from fcenv.algos.model.policy import Policy
from fcenv.algos.model.warmup import answer_nll
from fcenv.algos.ppo.algorithms import Algorithm
from fcenv.algos.ppo.buffer import Buffer
from fcenv.algos.ppo.estimators import get_estimator
from fcenv.algos.ppo.losses import (
    aggregate,
    approx_kl,
    clipped_policy_loss,
    clipped_value_loss,
    masked_sum,
    normalize,
    reference_kl,
)

ReduceFn = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class PPOSettings:
    """What the update needs: the algorithm's choices and the flags of the same names.

    Each value is declared once, as a ``TrainConfig`` flag (its default and help there) or as an
    ``Algorithm`` choice; ``from_config`` takes them from there."""

    ratio: str  # "token", "action" or "turn" (algos.ppo.algorithms.RATIO_LEVELS)
    loss: str  # how token terms are averaged (algos.ppo.algorithms.LOSS_AGGREGATIONS)
    whiten: bool  # normalise advantages over the batch (group estimators come normalised)
    max_new_tokens: int  # the "constant" loss divides by actions x this
    ppo_epoch: int
    num_mini_batch: int
    gradient_cp_steps: int
    micro_batch_tokens: int  # most padded tokens per micro-batch (0: no limit)
    clip_param: float
    value_clip: float
    entropy_coef: float
    kl_coef: float
    sft_coef: float  # weight of the demonstrations' answer-token NLL in each actor step
    value_loss_coef: float
    huber_delta: float | None  # None: squared error
    max_grad_norm: float
    target_kl: float

    @classmethod
    def from_config(cls, config, algorithm: Algorithm) -> PPOSettings:
        """The settings of a run: ``config`` (a ``TrainConfig``) and its resolved algorithm."""
        from_algorithm = {"ratio": algorithm.ratio, "loss": algorithm.loss,
                          "whiten": get_estimator(algorithm.estimator).whiten,
                          "huber_delta": config.huber_delta if config.use_huber_loss else None}
        flags = {f.name: getattr(config, f.name) for f in fields(cls) if f.name not in from_algorithm}
        return cls(**from_algorithm, **flags)


def _local(t: torch.Tensor) -> torch.Tensor:
    return t


def make_optimizers(policy: Policy, lr: float,
                    critic_lr: float) -> tuple[torch.optim.Optimizer, torch.optim.Optimizer | None]:
    """The actor's optimizer and the critic's (None without a critic)."""
    # One optimizer per role, over parameter lists fixed at construction: which adapter
    # PEFT has active never changes what each optimizer owns.
    actor = torch.optim.AdamW(policy.actor_parameters(), lr=lr, eps=1e-5, weight_decay=0.0)
    if not policy.has_critic:
        return actor, None
    critic = torch.optim.AdamW(policy.critic_parameters(), lr=critic_lr, eps=1e-5, weight_decay=0.0)
    return actor, critic


class PPOTrainer:
    def __init__(
        self,
        policy: Policy,
        settings: PPOSettings,
        actor_optimizer: torch.optim.Optimizer,
        critic_optimizer: torch.optim.Optimizer,
        reduce_mean: ReduceFn = _local,
        demonstrations: Sequence[tuple[list[int], list[int]]] = (),
    ):
        self.policy = policy
        # (context tokens, answer tokens) of the training tasks' ground truth, for --sft_coef.
        self.demonstrations = demonstrations
        self.settings = settings
        self.actor_optimizer = actor_optimizer
        self.critic_optimizer = critic_optimizer
        self.reduce_mean = reduce_mean

    # ---- statistics across processes ----------------------------------------------------
    def _global_moments(self, values: torch.Tensor, mask: torch.Tensor) -> tuple[float, float]:
        sums = torch.stack([masked_sum(values, mask), masked_sum(values.pow(2), mask), mask.sum()]).double()
        total, squares, count = (self.reduce_mean(sums.to(self.policy.device)).cpu()).tolist()
        if count <= 0:
            return 0.0, 1.0
        mean = total / count
        return mean, max(squares / count - mean * mean, 0.0) ** 0.5

    def _sync_and_clip(self, params: list[torch.nn.Parameter]) -> float:
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        flat = torch.cat([g.reshape(-1) for g in grads])
        flat = self.reduce_mean(flat)
        offset = 0
        for p, g in zip(params, grads):
            p.grad = flat[offset:offset + g.numel()].view_as(p).to(p.dtype)
            offset += g.numel()
        limit = self.settings.max_grad_norm if self.settings.max_grad_norm > 0 else float("inf")
        return float(torch.nn.utils.clip_grad_norm_(params, limit))

    # ---- the update -------------------------------------------------------------------
    def update(self, buffer: Buffer, rng: np.random.Generator, train_actor: bool = True) -> dict[str, float]:
        s = self.settings
        units = buffer.units(s.ratio)
        heads = _unit_heads(units)
        # Whitening over the units the ratio works on: every token, or one entry per unit.
        if s.ratio == "token":
            moments_mask = buffer.action_mask
        else:
            moments_mask = torch.zeros_like(buffer.action_mask)
            moments_mask[heads, 0] = 1.0
        if s.whiten:
            mean, std = self._global_moments(buffer.advantages, moments_mask)
            advantages = normalize(buffer.advantages, buffer.action_mask, mean, std)
        else:
            advantages = buffer.advantages * buffer.action_mask
        totals: dict[str, float] = defaultdict(float)
        weights: dict[str, float] = defaultdict(float)
        with_critic = self.policy.has_critic
        # Old log-probs left to the first pass: before the first optimizer step the actor is the
        # policy that sampled, so that pass's own log-probs are the old ones (the ratio is 1).
        record_old = buffer.old_logprobs is None and train_actor
        if record_old:
            if s.num_mini_batch != 1:
                raise ValueError("old log-probs from the update's first pass need one minibatch per epoch "
                                 f"(--num_mini_batch 1, not {s.num_mini_batch}): rescore them instead")
            buffer.old_logprobs = torch.zeros_like(buffer.action_mask)
        for epoch in range(s.ppo_epoch):
            epoch_kl, epoch_count = 0.0, 0.0
            for minibatch in self._minibatches(units, rng):
                stats = self._critic_step(buffer, minibatch) if with_critic else {}
                if train_actor:
                    stats.update(self._actor_step(buffer, advantages, units, minibatch, rng, record_old and epoch == 0))
                    epoch_kl += stats["approx_kl"] * stats["_tokens"]
                    epoch_count += stats["_tokens"]
                for key, value in stats.items():
                    if not key.startswith("_"):
                        weight = stats["_tokens"] if key in ("approx_kl", "clip_fraction", "entropy", "kl_ref") else 1.0
                        totals[key] += value * weight
                        weights[key] += weight
            if train_actor and s.target_kl > 0:
                pair = self.reduce_mean(torch.tensor([epoch_kl, epoch_count], dtype=torch.float64,
                                                     device=self.policy.device)).tolist()
                if pair[1] > 0 and pair[0] / pair[1] > s.target_kl:
                    break
        return {k: totals[k] / weights[k] for k in totals if weights[k] > 0}

    def _minibatches(self, units: torch.Tensor, rng: np.random.Generator) -> list[np.ndarray]:
        """Rows in random order, split into minibatches that keep each ratio unit whole."""
        members: dict[int, list[int]] = defaultdict(list)
        for row, unit in enumerate(units.tolist()):
            members[unit].append(row)
        order = rng.permutation(len(members))
        return [np.array([row for unit in part for row in members[int(unit)]], dtype=np.int64)
                for part in np.array_split(order, self.settings.num_mini_batch)]

    def _chunks(self, buffer: Buffer, minibatch: np.ndarray, units: torch.Tensor | None = None) -> list[np.ndarray]:
        """Gradient-accumulation micro-batches of rows of similar length (at least
        --gradient_cp_steps of them); with ``units``, a unit's rows stay in one micro-batch.
        The losses are normalised over the whole minibatch, so the sum of the micro-batches'
        gradients is the minibatch's gradient. Multi-step episodes keep their rows together
        and run as one sequence each (``pack(chain=True)``)."""
        if buffer.chained:
            members: dict[int, list[int]] = defaultdict(list)
            for row in minibatch.tolist():
                members[int(buffer.episode[row])].append(row)
            chunks = length_sorted_chunks(buffer.contexts, buffer.actions, list(members.values()),
                                          self.settings.micro_batch_tokens, self.settings.gradient_cp_steps, chained=True)
            return [np.array(chunk, dtype=np.int64) for chunk in chunks]
        if units is None:
            groups = [[int(row)] for row in minibatch]
        else:
            members: dict[int, list[int]] = defaultdict(list)
            for row, unit in zip(minibatch.tolist(), units[torch.as_tensor(minibatch)].tolist()):
                members[unit].append(row)
            groups = list(members.values())
        chunks = length_sorted_chunks(buffer.contexts, buffer.actions, groups, self.settings.micro_batch_tokens,
                                      self.settings.gradient_cp_steps)
        return [np.array(chunk, dtype=np.int64) for chunk in chunks]

    def _batch(self, buffer: Buffer, rows: np.ndarray):
        return pack([buffer.contexts[i] for i in rows], [buffer.actions[i] for i in rows],
                    self.policy.pad_id, self.policy.device, chain=buffer.chained)

    def _critic_step(self, buffer: Buffer, minibatch: np.ndarray) -> dict[str, float]:
        s = self.settings
        params = self.policy.critic_parameters()
        self.critic_optimizer.zero_grad(set_to_none=True)
        denominator = float(buffer.value_mask[minibatch].sum().clamp(min=1.0))
        loss_total = 0.0
        for rows in self._chunks(buffer, minibatch):
            batch = self._batch(buffer, rows)
            k = batch.action_width
            device = self.policy.device
            values = self.policy.token_values(batch, buffer.states_for(rows, batch))[:, :k]
            per_entry = clipped_value_loss(values, buffer.values[rows, :k].to(device), buffer.returns[rows, :k].to(device),
                                           s.value_clip, s.huber_delta)
            loss = s.value_loss_coef * masked_sum(per_entry, buffer.value_mask[rows, :k].to(device)) / denominator
            loss.backward()
            loss_total += float(loss.detach())
        grad_norm = self._sync_and_clip(params)
        self.critic_optimizer.step()
        return {"value_loss": loss_total, "critic_grad_norm": grad_norm}

    def _actor_step(self, buffer: Buffer, advantages: torch.Tensor, units: torch.Tensor,
                    minibatch: np.ndarray, rng: np.random.Generator, record_old: bool = False) -> dict[str, float]:
        s = self.settings
        params = self.policy.actor_parameters()
        self.actor_optimizer.zero_grad(set_to_none=True)
        tokens = float(buffer.action_mask[minibatch].sum().clamp(min=1.0))
        unit_count = float(max(len(set(units[torch.as_tensor(minibatch)].tolist())), 1))
        sums = defaultdict(float)
        for rows in self._chunks(buffer, minibatch, units):
            batch = self._batch(buffer, rows)
            k = batch.action_width
            device = self.policy.device
            mask = batch.action_mask
            logp, entropy = self.policy.token_logprobs(batch, with_entropy=True, entropy_grad=s.entropy_coef != 0)
            if record_old:
                buffer.old_logprobs[rows, :k] = logp.detach().float().cpu()
            old = buffer.old_logprobs[rows, :k].to(device)
            ref = buffer.ref_logprobs[rows, :k].to(device)
            adv = advantages[rows, :k].to(device)
            if s.ratio == "token":
                surrogate, clipped = clipped_policy_loss(logp, old, adv, s.clip_param)
                policy_loss = aggregate(surrogate, mask, s.loss, len(minibatch), tokens, s.max_new_tokens)
                sums["clip_fraction"] += float(masked_sum(clipped, mask))
            else:
                # One ratio per unit (an action, or a turn's actions): the product of its
                # token ratios, with the unit's one advantage.
                local = torch.unique(units[torch.as_tensor(rows)], return_inverse=True)[1].to(device)
                count = int(local.max()) + 1
                new_sum = torch.zeros(count, device=device).index_add(0, local, (logp * mask).sum(1))
                old_sum = torch.zeros(count, device=device).index_add(0, local, (old * mask).sum(1))
                sizes = torch.zeros(count, device=device).index_add(0, local, torch.ones_like(adv[:, 0]))
                unit_adv = torch.zeros(count, device=device).index_add(0, local, adv[:, 0]) / sizes
                surrogate, clipped = clipped_policy_loss(new_sum, old_sum, unit_adv, s.clip_param)
                policy_loss = surrogate.sum() / unit_count
                sums["clip_fraction"] += float((clipped[local][:, None] * mask).sum())
            entropy_mean = masked_sum(entropy, mask) / tokens
            loss = policy_loss - s.entropy_coef * entropy_mean
            kl_ref = torch.zeros((), device=device)
            if s.kl_coef != 0:
                kl_ref = masked_sum(reference_kl(logp, ref), mask) / tokens
                loss = loss + s.kl_coef * kl_ref
            loss.backward()
            sums["policy_loss"] += float(policy_loss.detach())
            sums["entropy"] += float(entropy_mean.detach()) * tokens
            sums["kl_ref"] += float(kl_ref.detach()) * tokens
            sums["approx_kl"] += float(masked_sum(approx_kl(logp.detach(), old), mask))
        demonstrated = {}
        if s.sft_coef != 0 and self.demonstrations:
            demonstrated["sft_loss"] = self._demonstration_step(rng, len(minibatch))
        grad_norm = self._sync_and_clip(params)
        self.actor_optimizer.step()
        return {
            **demonstrated,
            "policy_loss": sums["policy_loss"],
            "actor_grad_norm": grad_norm,
            "entropy": sums["entropy"] / tokens,
            "kl_ref": sums["kl_ref"] / tokens,
            "approx_kl": sums["approx_kl"] / tokens,
            "clip_fraction": sums["clip_fraction"] / tokens,
            "_tokens": tokens,
        }

    def _demonstration_step(self, rng: np.random.Generator, rows: int) -> float:
        """PPO-ptx: the mean answer-token NLL of one micro-batch of demonstrations (as many as
        a micro-batch of the minibatch's rows, and no more than ``--micro_batch_tokens`` hold),
        its gradient, weighted by --sft_coef, added to the actor step's. Drawn with the run's
        generator, so a resumed run draws what an unbroken one would. Returns the NLL."""
        s = self.settings
        size = min(len(self.demonstrations), max(1, math.ceil(rows / s.gradient_cp_steps)))
        chosen = rng.choice(len(self.demonstrations), size=size, replace=False)
        chosen = chosen[:fitting([sum(map(len, self.demonstrations[i])) for i in chosen], s.micro_batch_tokens)]
        nll = answer_nll(lambda batch: self.policy.token_logprobs(batch)[0], [self.demonstrations[i] for i in chosen],
                         self.policy.pad_id, self.policy.device)
        (s.sft_coef * nll).backward()
        return float(nll.detach())


def fitting(lengths: list[int], budget: int) -> int:
    """How many of the first ``lengths`` fit ``budget`` tokens together (0: no limit), at least
    one. A multi-turn step's demonstration carries its whole conversation (2,000 tokens and
    more): as many of them as a minibatch has rows made the supervised term cost several times
    the RL update, and its memory."""
    total = 0
    for count, length in enumerate(lengths):
        total += length
        if count and budget and total > budget:
            return count
    return len(lengths)


def _unit_heads(units: torch.Tensor) -> torch.Tensor:
    """The first row of each unit: where a unit's one advantage is read and whitened."""
    seen: set[int] = set()
    heads = []
    for row, unit in enumerate(units.tolist()):
        if unit not in seen:
            seen.add(unit)
            heads.append(row)
    return torch.tensor(heads, dtype=torch.long)
