"""An exact inner-product index with faiss' ``IndexIDMap(IndexFlatIP)`` semantics, in numpy.

BFCL's vector memory keeps its embeddings in that faiss index. A flat index is an exhaustive
search, so numpy gives the same similarities; what has to be copied is which entries faiss
returns, and in which order, when similarities tie (the same text stored twice embeds to the
same vector). faiss 1.11 answers one query with k = 1 by keeping the first best entry, and
with 1 < k < 100 (the memory holds at most 50) through a binary min-heap of k slots keyed on
(similarity, position), then sorted out of the heap; both are followed here step by step, so
ties come out as faiss orders them. Entries sit in insertion order; removing one closes the
gap, as faiss does. A search may ask for more entries than the index holds: the slots left
over have id -1.

The checks faiss' Python wrapper makes on ``k`` come first, with its messages: ``k > 0`` (a
bare AssertionError), a float refused by numpy, a bool refused by the C++ binding.
"""

from __future__ import annotations

import numpy as np

# The value faiss fills an empty similarity slot with: float32's lowest.
_LOWEST = float(np.finfo(np.float32).min)


class FlatIPIndex:
    def __init__(self, dimension: int):
        self.dimension = dimension
        self.ids: list[int] = []
        self.vectors = np.zeros((0, dimension), dtype=np.float32)

    @property
    def ntotal(self) -> int:
        return len(self.ids)

    def add_with_ids(self, vectors: np.ndarray, ids: list[int]) -> None:
        rows, _ = vectors.shape  # a 1-d array fails here, as it does in faiss' wrapper
        if rows != len(ids):
            raise AssertionError("not same nb of vectors as ids")
        self.vectors = np.concatenate([self.vectors, vectors.astype(np.float32)])
        self.ids += [int(i) for i in ids]

    def remove_ids(self, ids: list[int]) -> None:
        gone = set(ids)
        keep = [position for position, i in enumerate(self.ids) if i not in gone]
        self.vectors = self.vectors[keep]
        self.ids = [self.ids[position] for position in keep]

    def reset(self) -> None:
        self.ids = []
        self.vectors = np.zeros((0, self.dimension), dtype=np.float32)

    def search(self, query: np.ndarray, k) -> list[tuple[float, int]]:
        """(similarity, id) of the ``k`` best entries for one query vector, best first, padded
        with (lowest float32, -1) when the index holds fewer."""
        if not k > 0:
            raise AssertionError()
        if isinstance(k, float):
            raise TypeError("'float' object cannot be interpreted as an integer")
        if isinstance(k, bool):
            raise TypeError("an integer is required")
        scores = [float(s) for s in (self.vectors @ query.astype(np.float32))]  # float32 products, exact as doubles
        positions = _first_best(scores) if k == 1 else _heap_best(scores, k)
        return [(score, self.ids[p] if p >= 0 else -1) for score, p in positions]


def _first_best(scores: list[float]) -> list[tuple[float, int]]:
    best, position = _LOWEST, -1
    for j, score in enumerate(scores):
        if best < score:
            best, position = score, j
    return [(best, position)]


# The heap: 1-based lists (slot 0 unused), ordered by (similarity, position) with the smallest on top.
def _below(a: float, b: float, a_id: int, b_id: int) -> bool:
    return a < b or (a == b and a_id < b_id)


def _sift(values: list[float], ids: list[int], size: int, value: float, value_id: int) -> None:
    """Put (value, value_id) at the top of a heap of ``size`` slots and sift it down."""
    i = 1
    while True:
        left, right = 2 * i, 2 * i + 1
        if left > size:
            break
        child = left if right == size + 1 or _below(values[left], values[right], ids[left], ids[right]) else right
        if _below(value, values[child], value_id, ids[child]):
            break
        values[i], ids[i] = values[child], ids[child]
        i = child
    values[i], ids[i] = value, value_id


def _heap_best(scores: list[float], k: int) -> list[tuple[float, int]]:
    values, ids = [0.0] + [_LOWEST] * k, [0] + [-1] * k
    for j, score in enumerate(scores):
        if values[1] < score:
            _sift(values, ids, k, score, j)
    # Out of the heap: pop the smallest k times, filling the array from its end; an empty slot
    # (-1) popped is overwritten by the next real entry, so real entries end up at the end.
    kept = 0
    for popped in range(k):
        value, value_id = values[1], ids[1]
        size = k - popped
        if size > 1:
            _sift(values, ids, size - 1, values[size], ids[size])
        values[k - kept], ids[k - kept] = value, value_id
        if value_id != -1:
            kept += 1
    best = list(zip(values[k - kept + 1:], ids[k - kept + 1:]))
    return best + [(_LOWEST, -1)] * (k - kept)
