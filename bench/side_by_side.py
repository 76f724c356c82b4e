"""Timing ours against the reference on one shared machine."""

from __future__ import annotations

from collections.abc import Callable


def fastest_passes(ours_pass: Callable[[], float], oracle, request: dict, repeat: int) -> tuple[float, float]:
    """Seconds of our fastest pass and of the reference's, ``repeat`` passes each.

    Each side warms up first (the oracle on the first of the two requests it gets per pass,
    in the same process), then the sides take turns, so machine load affects both alike;
    on a shared machine the minimum is the least noisy figure.
    """
    ours_pass()
    ours = reference = float("inf")
    for _ in range(repeat):
        reference = min(reference, oracle.run([request, request])[1]["seconds"])
        ours = min(ours, ours_pass())
    return ours, reference
