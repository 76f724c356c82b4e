"""Contract C4's import path for the advantage math: ``bad_advantages`` and ``action_gae``.

The functions live in ``fcenv.algos.ppo.advantages``, beside the estimators that use them.
"""

from fcenv.algos.ppo.advantages import action_gae, bad_advantages

__all__ = ["action_gae", "bad_advantages"]
