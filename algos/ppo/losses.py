"""PPO's loss terms as small functions over per-token (or per-action) tensors.

Every reduction takes an explicit mask of real entries: padding is never detected from a
value (an advantage can be exactly 0, a token id can be 0). Sums are divided by a
``denominator`` the caller chooses, so a minibatch split into gradient-accumulation chunks
gets exactly the gradient of the whole minibatch.
"""

from __future__ import annotations

import torch


def masked_sum(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum()


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return masked_sum(values, mask) / mask.sum().clamp(min=1.0)


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, how: str, rows: int, tokens: float,
              max_new_tokens: int) -> torch.Tensor:
    """A micro-batch's share of the minibatch's loss from per-token terms. ``rows`` and
    ``tokens`` count the whole minibatch, so the micro-batches' shares add up to its loss.

    ``token_mean``: the sum over tokens / the minibatch's tokens; ``sequence_mean``: each row's
    mean, summed, / rows; ``constant``: the sum / (rows x max_new_tokens), Dr.GRPO's form, in
    which a token weighs the same whatever the length of its action."""
    if how == "sequence_mean":
        return ((per_token * mask).sum(1) / mask.sum(1).clamp(min=1.0)).sum() / rows
    if how == "constant":
        return masked_sum(per_token, mask) / (rows * max_new_tokens)
    if how == "token_mean":
        return masked_sum(per_token, mask) / tokens
    raise ValueError(f"unknown loss aggregation {how!r}")


def normalize(values: torch.Tensor, mask: torch.Tensor, mean: float, std: float, eps: float = 1e-8) -> torch.Tensor:
    """Whiten with given statistics (computed over the real entries of the whole rollout,
    across processes) and zero the padding."""
    return (values - mean) / (std + eps) * mask


def clipped_policy_loss(
    logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, clip: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-entry clipped surrogate (to minimise) and whether the ratio was clipped."""
    log_ratio = logp - old_logp
    ratio = torch.exp(log_ratio)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip, 1.0 + clip) * advantages
    loss = -torch.minimum(unclipped, clipped)
    was_clipped = ((ratio - 1.0).abs() > clip).float()
    return loss, was_clipped


def approx_kl(logp: torch.Tensor, old_logp: torch.Tensor) -> torch.Tensor:
    """Per-entry estimate of KL(old || new): (r - 1) - log r, always >= 0."""
    log_ratio = logp - old_logp
    return torch.exp(log_ratio) - 1.0 - log_ratio


def reference_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(policy || reference) on tokens sampled from the policy:
    exp(ref - logp) - (ref - logp) - 1; unbiased, non-negative, with a useful gradient."""
    diff = ref_logp - logp
    return torch.exp(diff) - diff - 1.0


def huber(error: torch.Tensor, delta: float) -> torch.Tensor:
    """Symmetric in the error's sign: quadratic inside |e| <= delta, linear outside."""
    magnitude = error.abs()
    quadratic = 0.5 * error.pow(2)
    linear = delta * (magnitude - 0.5 * delta)
    return torch.where(magnitude <= delta, quadratic, linear)


def clipped_value_loss(
    values: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    clip: float,
    huber_delta: float | None = None,
) -> torch.Tensor:
    """Per-entry value loss; with ``clip > 0`` the pessimistic max of the plain and the
    clipped prediction's loss (PPO's value clipping)."""

    def point_loss(prediction: torch.Tensor) -> torch.Tensor:
        error = returns - prediction
        return huber(error, huber_delta) if huber_delta is not None else 0.5 * error.pow(2)

    loss = point_loss(values)
    if clip > 0:
        clipped = old_values + torch.clamp(values - old_values, -clip, clip)
        loss = torch.maximum(loss, point_loss(clipped))
    return loss
