"""What every checker returns."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


class LazyFacets(Mapping[str, float]):
    """Facets computed on first use, so a caller that only wants the verdict never pays for
    the partial-credit scoring of a wrong answer."""

    def __init__(self, compute: Callable[[], dict[str, float]]):
        self._compute: Callable[[], dict[str, float]] | None = compute
        self._values: dict[str, float] = {}

    def _resolved(self) -> dict[str, float]:
        if self._compute is not None:
            self._values, self._compute = self._compute(), None
        return self._values

    def __getitem__(self, name: str) -> float:
        return self._resolved()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._resolved())

    def __repr__(self) -> str:
        return repr(self._resolved())


@dataclass
class CheckResult:
    """A verdict plus the facets that shaped rewards are computed from.

    ``valid`` and ``error_type`` are BFCL's verdict (``error_type`` is None when valid).
    ``errors`` holds BFCL's messages. ``facets`` maps facet names (``decodable``,
    ``function_name``, ``required_args``, ``types``, ``values``, ``count``, ...) to scores
    in [0, 1]; 1 means that aspect of the answer is right. It may be a ``LazyFacets``;
    use ``dict(result.facets)`` for a plain dict.
    """

    valid: bool
    error_type: str | None = None
    errors: list[Any] = field(default_factory=list)
    facets: Mapping[str, float] = field(default_factory=dict)
