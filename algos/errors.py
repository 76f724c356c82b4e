"""``ConfigError``: a setting that cannot work.

A module of its own, importing nothing, so that what ``fcenv.algos.config`` asks for flag names (the
rollout engines' registry, the presets) can raise it without importing ``fcenv.algos.config`` back.
``fcenv.algos.config.ConfigError`` is the same class.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A setting that cannot work, found once the model and data are known (before training)."""
