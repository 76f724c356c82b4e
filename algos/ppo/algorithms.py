"""An algorithm is three choices: the advantage estimator, the level of the policy ratio, and
whether a critic is trained. Named algorithms are presets of these choices.

- ``estimator``: a name in ``fcenv.algos.ppo.estimators`` (``bad``, ``action_gae``, ...).
- ``ratio``: ``token`` (one clipped ratio per token, the token's own advantage), ``action``
  (the product of an action's token ratios, one advantage per action) or ``turn`` (the
  product over every action of a multi-turn episode's turn, one advantage per turn).
- ``critic``: train the critic adapter and value head. Estimators that bootstrap from values
  need it; critic-free estimators do without (no critic adapter or value head at all).
- ``loss``: how token ratios' surrogate terms are averaged (token ratios only): ``token_mean``
  over every action token of the minibatch (long and short actions weigh per token),
  ``sequence_mean`` (each action's own mean, then the mean over actions: GRPO's original
  form, which favours short right answers and long wrong ones) or ``constant`` (the sum over
  tokens divided by actions x --max_new_tokens: Dr.GRPO's length-unbiased form).

TPPO, APPO, TurnPPO, GRPO, DrGRPO and RLOO are the presets (``ALGORITHMS``); adding an
algorithm is an estimator function (``fcenv.algos.ppo.estimators``) plus a ``register_algorithm`` line.
"""

from __future__ import annotations

from dataclasses import dataclass

from fcenv.algos.ppo.estimators import get_estimator
from fcenv.handlers.registry import Registry

RATIO_LEVELS = ("token", "action", "turn")
LOSS_AGGREGATIONS = ("token_mean", "sequence_mean", "constant")


@dataclass(frozen=True)
class Algorithm:
    estimator: str
    ratio: str
    critic: bool
    loss: str = "token_mean"


ALGORITHMS: Registry[Algorithm] = Registry("algorithm", "fcenv.algos.ppo", ("algorithms",), "fcenv.algorithms")
register_algorithm = ALGORITHMS.register

# Token-level PPO with Bellman backup over action decomposition (POAD's BAD).
register_algorithm("TPPO", Algorithm(estimator="bad", ratio="token", critic=True))
# Action-level PPO: GAE over actions, one ratio and one advantage per action.
register_algorithm("APPO", Algorithm(estimator="action_gae", ratio="action", critic=True))
# Turn-level PPO: one value per BFCL turn, GAE over turns, one ratio per turn.
register_algorithm("TurnPPO", Algorithm(estimator="turn_gae", ratio="turn", critic=True))
# Critic-free, group-relative: G episodes per task (--group_size), the return against the
# group's (GRPO: normalised) or the rest of the group's (RLOO) mean, on every token.
register_algorithm("GRPO", Algorithm(estimator="grpo", ratio="token", critic=False))
register_algorithm("RLOO", Algorithm(estimator="rloo", ratio="token", critic=False))
# Dr.GRPO: the group mean as the baseline without dividing by the group's std, and the
# length-unbiased loss (no per-action length normalisation).
register_algorithm("DrGRPO", Algorithm(estimator="drgrpo", ratio="token", critic=False, loss="constant"))


def resolve(preset: str, estimator: str = "", ratio: str = "", critic: str = "auto", loss: str = "") -> Algorithm:
    """The preset with the given choices changed; raises ``ValueError`` naming the bad choice.

    Empty ``estimator``/``ratio``/``loss`` and ``critic="auto"`` keep the preset's choice.
    """
    if preset not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {preset!r}; the presets are {ALGORITHMS.names()}")
    base = ALGORITHMS.get(preset)
    chosen_estimator = estimator or base.estimator
    needs_critic = get_estimator(chosen_estimator).needs_critic
    chosen_ratio = ratio or base.ratio
    if chosen_ratio not in RATIO_LEVELS:
        raise ValueError(f"unknown ratio level {chosen_ratio!r}; use one of {RATIO_LEVELS}")
    if critic not in ("auto", "on", "off"):
        raise ValueError(f"critic must be 'auto', 'on' or 'off', not {critic!r}")
    if critic == "off" and needs_critic:
        raise ValueError(f"the {chosen_estimator!r} estimator bootstraps from the critic's values; it cannot run "
                         f"with the critic off")
    with_critic = critic == "on" or (critic == "auto" and needs_critic)
    chosen_loss = loss or base.loss
    if chosen_loss not in LOSS_AGGREGATIONS:
        raise ValueError(f"unknown loss aggregation {chosen_loss!r}; use one of {LOSS_AGGREGATIONS}")
    if chosen_loss != "token_mean" and chosen_ratio != "token":
        raise ValueError(f"the {chosen_loss!r} loss averages token ratios; with {chosen_ratio!r} ratios each unit "
                         f"already has one term (use the token ratio, or the token_mean loss)")
    return Algorithm(estimator=chosen_estimator, ratio=chosen_ratio, critic=with_critic, loss=chosen_loss)
