"""A Gymnasium text space that holds any Unicode string.

``gymnasium.spaces.Text`` only contains strings over a finite charset (alphanumerics by
default) and of length >= 1, so it would reject empty answers, JSON, Python calls or any
non-ASCII text. Model text is arbitrary, so this space contains every ``str`` up to
``max_length`` characters; sampling draws short strings from a printable charset.

Such text has no fixed size or alphabet, so it cannot live in the shared memory that
``AsyncVectorEnv`` uses by default (gymnasium's ``Text`` layout would hold ``max_length``
charset indices per env and fails on characters outside the charset). Asking for it raises
gymnasium's ``CustomSpaceError``, which ``AsyncVectorEnv`` reports as a request to pass
``shared_memory=False``; with that (``gym.make_vec(..., vectorization_mode="async",
vector_kwargs={"shared_memory": False})``) observations travel through the workers' pipes.
"""

from __future__ import annotations

import multiprocessing
import string
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import CustomSpaceError
from gymnasium.vector.utils import create_shared_memory

_SAMPLE_CHARSET = string.printable + "éßλ中文🙂"
_SAMPLE_MAX = 64


class UnicodeText(spaces.Text):
    def __init__(self, max_length: int, seed: int | np.random.Generator | None = None):
        super().__init__(max_length=max_length, min_length=0, charset=_SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        length = int(self.np_random.integers(0, min(self.max_length, _SAMPLE_MAX) + 1))
        return "".join(self.np_random.choice(list(_SAMPLE_CHARSET), size=length))

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and other.max_length == self.max_length


@create_shared_memory.register(UnicodeText)
def _no_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = multiprocessing) -> None:
    raise CustomSpaceError(
        "UnicodeText holds text of any length and alphabet, which shared memory cannot; pass "
        "vector_kwargs={'shared_memory': False} to gym.make_vec(..., vectorization_mode='async')"
    )
