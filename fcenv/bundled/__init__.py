"""The datasets that ship with the package (BFCL's file format, ``possible_answer/`` beside
them): the tiny single-turn and multi-turn splits, written by ``datasets/tiny/make_*.py``, and
the varied single-turn splits for pretrained models (BFCL's five AST categories, irrelevance
included), written by ``datasets/varied/make_varied.py``, and the varied multi-turn splits for
pretrained models (BFCL's four multi-turn kinds on its classes, one or two per task, with the
shorter docs of ``multi_turn_func_doc/``), written by ``datasets/multi_turn/make_multi_turn_varied.py``.

Anywhere a question file is taken (the env's ``dataset_path``, ``--dataset_path``, ``--data``),
a bundled split can be named instead of a path: ``tiny_train``, ``tiny_eval``,
``multi_turn_train``, ``multi_turn_eval``, ``varied_train``, ``varied_eval``,
``multi_turn_varied_train``, ``multi_turn_varied_eval``. An existing file of that name wins.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
BUNDLED = {name: FOLDER / f"{name}.json" for name in ("tiny_train", "tiny_eval", "multi_turn_train", "multi_turn_eval",
                                                      "varied_train", "varied_eval", "multi_turn_varied_train",
                                                      "multi_turn_varied_eval")}


def resolve(path_or_name: str | Path) -> Path:
    """A question file's path: the path itself, or a bundled split's file for its name."""
    path = Path(path_or_name)
    if not path.exists() and str(path_or_name) in BUNDLED:
        return BUNDLED[str(path_or_name)]
    return path


def split_holding(ids: Collection[str]) -> str | None:
    """The bundled split whose entries have all these ids, if one does. The splits number their
    entries from one count (``datasets/tiny``), so an id names one entry of the bundled data."""
    for name, path in BUNDLED.items():
        with path.open(encoding="utf-8") as lines:
            held = {json.loads(line)["id"] for line in lines if line.strip()}
        if set(ids) <= held:
            return name
    return None


def close_split_name(path: str | Path) -> str | None:
    """The bundled split a missing path probably meant (``tiny_evl``: ``tiny_eval``), if any."""
    name = Path(path).name
    if Path(name).suffix or name in BUNDLED:
        return None
    close = difflib.get_close_matches(name, list(BUNDLED), n=1, cutoff=0.75)
    return close[0] if close else None
