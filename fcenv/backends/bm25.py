"""BM25+ ranking, as BFCL's key-value memory ranks keys (with ``rank_bm25.BM25Plus``'s defaults).

Written in plain Python so the backend needs no extra package. The arithmetic is done in the
same order as that library's numpy expression, element by element, so every score is the same
double, bit for bit (numpy's float64 and Python's float are both IEEE doubles):

    idf(word)  = log((documents + 1) / documents containing word)
    score(doc) = sum over query tokens q (repeats counted again) of
                 idf(q) * (delta + tf * (k1 + 1) / (k1 * (1 - b + b * len(doc) / avg len) + tf))

A query token no document holds adds nothing. An empty corpus has no average length: the
library divides by zero there, and so does this (BFCL's search on an empty memory fails with
``division by zero``).
"""

from __future__ import annotations

import math
from collections import Counter

K1 = 1.5
B = 0.75
DELTA = 1


class BM25Plus:
    """A corpus of token lists, ready to score queries. Built before any query is read, as in
    the library: an empty corpus fails here (division by zero), whatever the query."""

    def __init__(self, corpus: list[list[str]]):
        self.lengths = [len(document) for document in corpus]
        self.average = sum(self.lengths) / len(corpus)
        self.counts = [Counter(document) for document in corpus]
        containing = Counter(word for document in self.counts for word in document)
        self.idf = {word: math.log((len(corpus) + 1) / n) for word, n in containing.items()}

    def scores(self, query: list[str]) -> list[float]:
        """One score per document for the tokens of ``query``."""
        scores = [0.0] * len(self.counts)
        for token in query:
            weight = self.idf.get(token) or 0
            for index, (frequency, length) in enumerate(zip(self.counts, self.lengths)):
                tf = frequency.get(token) or 0
                scores[index] += weight * (DELTA + (tf * (K1 + 1)) / (K1 * (1 - B + B * length / self.average) + tf))
        return scores
