"""BFCL's long-context filler data, loaded once from ``long_context.json``.

The file comes from ``python -m fcenv data bfcl`` (see ``fcenv.bfcl_data``); it is BFCL's
data and is not shipped in this repository.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fcenv.backends.plain_data import plain_copy
from fcenv.bfcl_data import find_long_context, load_long_context

_IMMUTABLE = (str, int, float, bool, type(None), type(Ellipsis))


@lru_cache(maxsize=1)
def _filler() -> dict[str, Any]:
    return load_long_context(find_long_context())


def filler(name: str) -> Any:
    """One filler constant (e.g. ``"FILE_CONTENT_EXTENSION"``), shared: never mutate it."""
    return _filler()[name]


@lru_cache(maxsize=None)
def _flat(name: str) -> bool:
    value = filler(name)
    return isinstance(value, list) and all(isinstance(item, _IMMUTABLE) for item in value)


def filler_copy(name: str) -> Any:
    """A private copy of a filler constant; a flat list of immutable items is copied shallowly,
    which is the same thing and a hundred times faster than ``copy.deepcopy``."""
    value = filler(name)
    return list(value) if _flat(name) else plain_copy(value)
