"""BFCL's long-context filler data, loaded once from ``long_context.json``.

The file comes from ``python -m fcenv data bfcl`` (see ``fcenv.bfcl_data``); it is BFCL's
data and is not shipped in this repository.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fcenv.bfcl_data import find_long_context, load_long_context


@lru_cache(maxsize=1)
def _filler() -> dict[str, Any]:
    return load_long_context(find_long_context())


def filler(name: str) -> Any:
    """One filler constant (e.g. ``"FILE_CONTENT_EXTENSION"``). Callers copy what they mutate."""
    return _filler()[name]
