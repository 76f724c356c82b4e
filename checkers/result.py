"""What every checker returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CheckResult:
    """A verdict plus the facets that shaped rewards are computed from.

    ``valid`` and ``error_type`` are BFCL's verdict (``error_type`` is None when valid).
    ``errors`` holds BFCL's messages. ``facets`` maps facet names (``decodable``,
    ``function_name``, ``required_args``, ``types``, ``values``, ``count``, ...) to scores
    in [0, 1]; 1 means that aspect of the answer is right.
    """

    valid: bool
    error_type: str | None = None
    errors: list[Any] = field(default_factory=list)
    facets: dict[str, float] = field(default_factory=dict)
