"""fcenv inside other trainers: the core every door shares (``core``: an episode as messages,
tools and ``step(text)``; ``tokens``: the same episode as one token sequence with the env's
tokens masked) and the doors, ``fcenv.trl``, ``fcenv.skyrl`` and ``fcenv.verl``."""

from fcenv.doors.core import Episode, Step, make_env

__all__ = ["Episode", "Step", "make_env"]
