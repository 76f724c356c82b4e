"""From a ``CheckResult`` to a scalar reward.

Two rewards are built in:

- ``bfcl``: 1.0 when BFCL's verdict is valid, else 0.0 (the leaderboard's own scoring);
- ``shaped``: the weighted mean of the checker's facets, so an answer that gets the function
  right but one value wrong earns more than prose. Facets are scores in [0, 1]; a valid
  verdict has every facet at 1, so the shaped reward of a valid answer is 1.0 too.

``DEFAULT_WEIGHTS`` are the shaped reward's weights; pass your own ``weights`` to change them.
A facet missing from the weights counts with weight 0 (it is logged, not rewarded), the way
verifiers treats weight-0 reward functions as metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from checkers.result import CheckResult

RewardFn = Callable[[CheckResult], float]

DEFAULT_WEIGHTS: dict[str, float] = {
    # single-turn AST facets
    "decodable": 1.0,
    "function_name": 2.0,
    "count": 1.0,
    "required_args": 2.0,
    "types": 1.0,
    "values": 3.0,
    # relevance / irrelevance: abstaining or calling, whichever the category wants
    "abstained": 3.0,
    "called": 3.0,
    # multi-turn step facets
    "executed": 1.0,
    "matches_ground_truth": 2.0,
}


def bfcl_reward(result: CheckResult) -> float:
    return 1.0 if result.valid else 0.0


def shaped_reward(result: CheckResult, weights: Mapping[str, float] = DEFAULT_WEIGHTS) -> float:
    total = sum(weights.get(name, 0.0) for name in result.facets)
    if total <= 0:
        return bfcl_reward(result)
    return sum(weights.get(name, 0.0) * score for name, score in result.facets.items()) / total


def get_reward_fn(reward: str | RewardFn, weights: Mapping[str, float] | None = None) -> RewardFn:
    if callable(reward):
        return reward
    if reward == "bfcl":
        return bfcl_reward
    if reward == "shaped":
        chosen = dict(weights) if weights is not None else DEFAULT_WEIGHTS
        return lambda result: shaped_reward(result, chosen)
    raise ValueError(f"unknown reward {reward!r}; use 'bfcl', 'shaped' or a callable(CheckResult) -> float")
