"""Linear-time text scanning for the Java and JavaScript value converters.

BFCL's converters search model text with lazy regexes such as ``new ArrayList<[^>]*>\\(...(.+?)\\)\\)``.
Run with ``re.search`` on hostile text (thousands of unterminated prefixes) those cost
quadratic time. ``Finder`` answers "where is the next X after i" from a cache, so a scan that
tries every candidate start in increasing order does linear work overall, and the converters
reproduce the regexes' leftmost-match, lazy-extent semantics with it.
"""

from __future__ import annotations

import re
from typing import Any


class Finder:
    """``str.find`` with memory: repeated queries at increasing offsets reuse earlier answers."""

    def __init__(self, text: str):
        self.text = text
        self._cache: dict[str, tuple[int, int]] = {}

    def find(self, sub: str, start: int) -> int:
        hit = self._cache.get(sub)
        if hit is not None:
            asked, found = hit
            # The earlier answer still holds if nothing between the two starts was skipped.
            if asked <= start and (found == -1 or found >= start):
                return found
        found = self.text.find(sub, start)
        self._cache[sub] = (start, found)
        return found

    def lazy_end(self, start: int, stop: str, min_len: int = 0, dotall: bool = False) -> int:
        """Where ``.{min_len,}?<stop>`` starting at ``start`` stops (index of ``stop``), or -1.

        Without ``dotall`` the lazy part may not cross a newline, as with ``re``'s ``.``.
        """
        end = self.find(stop, start + min_len)
        if end == -1:
            return -1
        if not dotall:
            newline = self.find("\n", start)
            if newline != -1 and newline < end:
                return -1
        return end

    def starts(self, prefix: re.Pattern[str], pos: int = 0):
        """Every index where ``prefix`` matches, in order, with the match (overlaps allowed)."""
        while True:
            m = prefix.search(self.text, pos)
            if m is None:
                return
            yield m
            pos = m.start() + 1


def skip_space(text: str, i: int) -> int:
    """Index of the first non-whitespace character at or after ``i`` (``\\s*``)."""
    n = len(text)
    while i < n and text[i].isspace():  # str.isspace() is exactly re's \s
        i += 1
    return i


def match_text(pattern: re.Pattern[str], value: Any) -> bool:
    """``pattern.match(value)`` as BFCL's converters call ``re.match``: a value that is not
    text raises the same TypeError."""
    if not isinstance(value, str):
        raise TypeError(f"expected string or bytes-like object, got '{type(value).__name__}'")
    return pattern.match(value) is not None
