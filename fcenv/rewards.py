"""From a ``CheckResult`` to a scalar reward.

A reward is a claim about quality, so both built-in rewards keep one rule: **a valid answer
earns 1.0, and an answer BFCL fails earns strictly less** (in every category, single- and
multi-turn).

- ``bfcl``: 1.0 when BFCL's verdict is valid, else 0.0 (the leaderboard's own scoring). On a
  multi-turn entry only the entry's verdict is paid, at its last step.
- ``shaped``: 1.0 when valid; otherwise partial credit, at most ``INVALID_CAP`` (0.5): the
  weighted mean of the checker's facets times the cap, so a near miss earns more than prose
  but never approaches a valid answer. On a multi-turn entry each turn's end is paid
  ``shaped(turn verdict) / turns``: a perfect episode earns 1.0, and a turn that fails the
  state or response check earns at most half of a turn that passes.

The weights come from the checkers: each declares the facets it produces with their default
weights (``register_checker(name, facets=...)``). ``reward_weights`` changes some of them; a
name no checker declares is refused (a misspelt key would otherwise weigh nothing), and a
facet without a weight is an error when it is met, never silently unpaid.

Any ``callable(CheckResult) -> float`` is a reward too. On multi-turn entries it is called
with each turn's verdict and paid ``/ turns`` at the turn's end, unless it has the attribute
``per_turn = False`` (as ``bfcl_reward`` has): then it is called once, with the entry's
verdict. So ``reward=bfcl_reward`` behaves exactly like ``reward="bfcl"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from checkers import facet_weights
from checkers.result import CheckResult

RewardFn = Callable[[CheckResult], float]

# The most an answer BFCL fails can earn under the shaped reward.
INVALID_CAP = 0.5


def bfcl_reward(result: CheckResult) -> float:
    return 1.0 if result.valid else 0.0


bfcl_reward.per_turn = False  # type: ignore[attr-defined]


def pays_per_turn(reward_fn: RewardFn) -> bool:
    """Whether a multi-turn entry pays this reward at each turn's end or once at the end."""
    return bool(getattr(reward_fn, "per_turn", True))


class ShapedReward:
    """1.0 when valid, else ``invalid_cap`` times the weighted mean of the facets."""

    per_turn = True

    def __init__(self, weights: Mapping[str, float] | None = None, invalid_cap: float = INVALID_CAP):
        if not 0.0 <= invalid_cap < 1.0:
            raise ValueError(f"invalid_cap must be in [0, 1), not {invalid_cap!r}: an answer BFCL fails "
                             f"must earn less than a valid one")
        self.weights = merged_weights(weights)
        self.invalid_cap = float(invalid_cap)

    def __call__(self, result: CheckResult) -> float:
        if result.valid:
            return 1.0
        facets = dict(result.facets)
        unweighted = sorted(name for name in facets if name not in self.weights)
        if unweighted:
            raise ValueError(f"the shaped reward has no weight for facet(s) {unweighted}: declare them with "
                             f"register_checker(name, facets={{...}}) or give reward_weights")
        total = sum(self.weights[name] for name in facets)
        if total <= 0:
            return 0.0
        partial = sum(self.weights[name] * min(max(float(score), 0.0), 1.0) for name, score in facets.items()) / total
        return self.invalid_cap * partial

    def __repr__(self) -> str:
        return f"ShapedReward(weights={self.weights}, invalid_cap={self.invalid_cap})"


def merged_weights(overrides: Mapping[str, float] | None = None) -> dict[str, float]:
    """The checkers' declared weights, updated with ``overrides`` (each a declared facet)."""
    weights = facet_weights()
    if overrides is None:
        return weights
    if not isinstance(overrides, Mapping):
        raise TypeError(f"reward_weights must be a mapping of facet name to weight, not {type(overrides).__name__}")
    unknown = sorted(set(overrides) - set(weights))
    if unknown:
        raise ValueError(f"reward_weights names unknown facet(s) {unknown}; the checkers declare {sorted(weights)}")
    for name, weight in overrides.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight < float("inf"):
            raise ValueError(f"reward_weights[{name!r}] must be a finite number >= 0, not {weight!r}")
    return {**weights, **{k: float(v) for k, v in overrides.items()}}


REWARDS = ("bfcl", "shaped")


def get_reward_fn(reward: str | RewardFn, weights: Mapping[str, float] | None = None) -> RewardFn:
    if callable(reward):
        if weights is not None:
            raise ValueError("reward_weights applies to reward='shaped' only; a callable reward sets its own")
        return reward
    if reward == "bfcl":
        if weights is not None:
            raise ValueError("reward_weights applies to reward='shaped' only; reward='bfcl' pays the verdict")
        return bfcl_reward
    if reward == "shaped":
        return ShapedReward(weights)
    raise ValueError(f"unknown reward {reward!r}; use one of {REWARDS} or a callable(CheckResult) -> float")
