"""From a ``CheckResult`` to a scalar reward.

Every built-in reward keeps one rule: **a valid answer earns 1.0, and an answer BFCL fails earns
strictly less** (in every category, single- and multi-turn). ``bfcl``: BFCL's verdict, 1 or 0;
``shaped`` (``ShapedReward``): partial credit from the checker's weighted facets, at most
``INVALID_CAP``, each multi-turn turn paid ``1 / turns``; ``steps`` (``StepReward``): multi-turn
steps paid at once, each turn topped up to its shaped verdict. Weights are the checkers' declared
ones, changed by ``reward_weights`` (``merged_weights``). Any ``callable(CheckResult) -> float``
is a reward too, paid per turn unless ``per_turn = False``. Details: docs/rewards.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fcenv.checkers import facet_weights
from fcenv.checkers.result import CheckResult
from fcenv.handlers.registry import Registry

RewardFn = Callable[[CheckResult], float]

# The most an answer BFCL fails can earn under the shaped reward.
INVALID_CAP = 0.5


def bfcl_reward(result: CheckResult) -> float:
    """BFCL's verdict: 1.0 when valid, else 0.0; on a multi-turn entry, the entry's verdict
    once, at its last step (``per_turn = False``): ``reward=bfcl_reward`` is ``reward="bfcl"``."""
    return 1.0 if result.valid else 0.0


bfcl_reward.per_turn = False  # type: ignore[attr-defined]


def pays_per_turn(reward_fn: RewardFn) -> bool:
    """Whether a multi-turn entry pays this reward at each turn's end or once at the end."""
    return bool(getattr(reward_fn, "per_turn", True))


class ShapedReward:
    """1.0 when valid, else ``invalid_cap`` times the weighted mean of the facets, so a near
    miss earns more than prose but never approaches a valid answer. On a multi-turn entry each
    turn's end is paid ``shaped(turn verdict) / turns``: a perfect episode earns 1.0, and a turn
    that fails the state or response check earns at most half of a turn that passes. A facet
    without a weight is an error when it is met, never silently unpaid."""

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


# Step-grained rewards (StepTool): what each step with calls earns, as a share of its turn's
# process budget, and how big that budget is against the turn's verdict.
STEP_WEIGHTS = {"step_executed": 1.0, "step_in_ground_truth": 2.0}
PROCESS_SHARE = 0.5


class StepReward(ShapedReward):
    """Step-grained rewards (StepTool) on multi-turn entries; the shaped reward elsewhere.

    Each turn is worth ``1 / turns``. A step with calls is paid at once, from the turn's process
    budget (``PROCESS_SHARE`` of the turn): its calls' share of the turn's ground-truth calls,
    times the weighted mean of ``step_executed`` (the calls ran without error) and
    ``step_in_ground_truth`` (they are among the turn's ground-truth calls), with
    ``STEP_WEIGHTS``; steps beyond the budget earn nothing. The turn's end tops the turn up to
    its shaped verdict: a valid turn to its full ``1 / turns``, a failing one to at most half of
    it (never below what its steps already earned). So a valid entry earns exactly 1.0 and an
    entry BFCL fails earns less, while progress inside a turn is paid where it happens.
    """

    per_step = True

    def step_credit(self, facets: Mapping[str, float], calls: int, truth_calls: int) -> float:
        """The share of its turn's process budget one step with ``calls`` calls earns."""
        quality = sum(w * min(max(float(facets.get(name, 0.0)), 0.0), 1.0) for name, w in STEP_WEIGHTS.items())
        return quality / sum(STEP_WEIGHTS.values()) * calls / max(truth_calls, 1)

    def __repr__(self) -> str:
        return f"StepReward(weights={self.weights}, step_weights={STEP_WEIGHTS}, process_share={PROCESS_SHARE})"


def pays_per_step(reward_fn: RewardFn) -> bool:
    """Whether multi-turn steps with calls are paid as they happen (``StepReward``)."""
    return bool(getattr(reward_fn, "per_step", False))


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


# Named rewards: a factory from the reward_weights overrides (None: the checkers' declared
# weights) to the reward. Other packages add theirs under the ``fcenv.rewards`` entry-point group.
RewardFactory = Callable[[Mapping[str, float] | None], RewardFn]
REWARDS: Registry[RewardFactory] = Registry("reward", "fcenv", ("rewards",), "fcenv.rewards")
register_reward = REWARDS.register


@register_reward("bfcl")
def _bfcl(weights: Mapping[str, float] | None) -> RewardFn:
    if weights is not None:
        raise ValueError("reward_weights applies to weighted rewards such as 'shaped'; reward='bfcl' pays the verdict")
    return bfcl_reward


register_reward("shaped", ShapedReward)
register_reward("steps", StepReward)


def get_reward_fn(reward: str | RewardFn, weights: Mapping[str, float] | None = None) -> RewardFn:
    """A registered reward by name, built with ``weights``; or a callable, as it is."""
    if callable(reward):
        if weights is not None:
            raise ValueError("reward_weights applies to named rewards such as 'shaped'; a callable reward sets its own")
        return reward
    if reward not in REWARDS:
        raise ValueError(f"unknown reward {reward!r}; use one of {REWARDS.names()} or a callable(CheckResult) -> float")
    return REWARDS.get(reward)(weights)
