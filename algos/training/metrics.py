"""Scalars for logging, kept as (sum, count) pairs until the end.

Sums and counts add up across processes; only then are they divided. Keys are
``<name>:sum`` and ``<name>:n``; ``means`` turns them into ``<name>`` values.
"""

from __future__ import annotations

from collections import defaultdict

from fcenv.algos.ppo.buffer import Buffer
from fcenv.algos.rollout.codec import CONTEXT_OVERFLOW
from fcenv.algos.rollout.records import Rollout


def _add(sums: dict[str, float], name: str, value: float, count: float = 1.0) -> None:
    sums[f"{name}:sum"] += float(value)
    sums[f"{name}:n"] += float(count)


def rollout_stats(rollout: Rollout, prefix: str) -> dict[str, float]:
    """Reward per action, return and verdict per episode, facet rates, action lengths, and
    the share of episodes that ended because their chat outgrew the context window.

    Facets are logged per level, never mixed: ``facet_*`` of each episode's verdict (a
    single-turn answer's), and on multi-turn also ``turn_facet_*`` of each turn's verdict and
    ``step_facet_*`` of each step that made calls."""
    sums: dict[str, float] = defaultdict(float)
    episode_ends = {episode.action_indices[-1] for episode in rollout.episodes}
    for index, action in enumerate(rollout.actions):
        _add(sums, f"{prefix}/reward", action.reward)
        _add(sums, f"{prefix}/action_tokens", len(action.action))
        _add(sums, f"{prefix}/length_limit_rate", float(action.hit_length_limit))
        _add(sums, f"{prefix}/context_cut_rate", float(action.context_cut))
        turn_facets = action.info.get("turn_facets", {})
        for facet, score in turn_facets.items():
            _add(sums, f"{prefix}/turn_facet_{facet}", float(score))
        if index not in episode_ends and not turn_facets:
            for facet, score in action.info.get("facets", {}).items():
                _add(sums, f"{prefix}/step_facet_{facet}", float(score))
    for episode in rollout.episodes:
        _add(sums, f"{prefix}/episode_return", episode.total_reward(rollout.actions))
        last = rollout.actions[episode.action_indices[-1]]
        for facet, score in last.info.get("facets", {}).items():
            _add(sums, f"{prefix}/facet_{facet}", float(score))
        # BFCL accuracy: a multi-turn episode is right when its final verdict is.
        _add(sums, f"{prefix}/accuracy", float(last.info.get("valid", False)))
        # Episodes whose chat outgrew the window even cut from the middle: they ended there,
        # failing (context_cut_rate counts actions whose chat was cut and went on).
        _add(sums, f"{prefix}/context_overflow_rate", float(last.info.get("error_type") == CONTEXT_OVERFLOW))
    return dict(sums)


def explained_variance_sums(buffer: Buffer) -> dict[str, float]:
    """Moments of the value targets and of the residuals, over entries with a target."""
    mask = buffer.value_mask
    targets, residual = buffer.returns, buffer.returns - buffer.values
    return {"ev/n": float(mask.sum()), "ev/t": float((targets * mask).sum()),
            "ev/t2": float((targets.pow(2) * mask).sum()), "ev/r": float((residual * mask).sum()),
            "ev/r2": float((residual.pow(2) * mask).sum())}


def explained_variance(sums: dict[str, float]) -> float:
    """1 - Var(return - value) / Var(return); nan when the returns do not vary."""
    n = sums.get("ev/n", 0.0)
    if n < 2:
        return float("nan")
    var_t = sums["ev/t2"] / n - (sums["ev/t"] / n) ** 2
    var_r = sums["ev/r2"] / n - (sums["ev/r"] / n) ** 2
    return float(1.0 - var_r / var_t) if var_t > 1e-12 else float("nan")


def means(sums: dict[str, float]) -> dict[str, float]:
    out = {}
    for key, value in sums.items():
        if key.endswith(":sum"):
            name = key[: -len(":sum")]
            count = sums.get(f"{name}:n", 0.0)
            if count > 0:
                out[name] = value / count
    return out
