"""Progress bars for the long steps a person waits on (the tiny model's build, the warm-ups,
``fcenv process-rewards``): tqdm's, on stderr, shown when they have a description."""

from __future__ import annotations


def progress_bar(total: int, description: str, unit: str = "step"):
    """A bar over ``total`` units; a silent one (updates cost nothing) when ``description`` is empty."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit=unit, disable=not description, dynamic_ncols=True)
