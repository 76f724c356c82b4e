"""fcenv's score card (fcenv/score_card.py) against BFCL's own: the same per-category
accuracies and counts go to bfcl_eval's ``generate_leaderboard_csv`` in the oracle venv (driver
op "score_card") and to ``score_card``; every number of every table (as BFCL's CSV writer
receives it, before formatting, compared exactly) and every CSV file's text must agree.

Cases: every category present, some or all missing (BFCL counts those as 0 over their full
size and shows N/A), no entry right, every entry right, live categories of very different
sizes, model names with ``/`` and ``_``, and a seeded batch of random mixes.
"""

from __future__ import annotations

import random

import pytest

from fcenv.score_card import CATEGORY_SIZES, csv_files, csv_rows, score_card

pytestmark = pytest.mark.oracle

ALL = list(CATEGORY_SIZES)
NOT_AGENTIC = [c for c in ALL if not c.startswith(("memory", "web_search"))]
LIVE_AST = ["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"]


def _whole(categories, fraction):
    return {c: (int(CATEGORY_SIZES[c] * fraction), CATEGORY_SIZES[c]) for c in categories}


def _random_case(rng: random.Random) -> dict[str, tuple[int, int]]:
    chosen = [c for c in ALL if rng.random() < rng.choice([0.2, 0.5, 0.9])]
    case = {}
    for category in chosen:
        total = rng.choice([1, 2, 3, 7, CATEGORY_SIZES[category], rng.randint(1, 1500)])
        case[category] = (rng.choice([0, total, rng.randint(0, total)]), total)
    return case


CASES: list[tuple[str, str, dict[str, tuple[int, int]]]] = [
    ("every category, BFCL's sizes", "Qwen/Qwen2.5-Coder-0.5B-Instruct",
     {c: (CATEGORY_SIZES[c] * (k + 3) // 29, CATEGORY_SIZES[c]) for k, c in enumerate(ALL)}),
    ("all but the agentic categories", "Qwen/Qwen2.5-Coder-0.5B-Instruct", _whole(NOT_AGENTIC, 0.61)),
    ("nothing scored right", "zero-model", {c: (0, CATEGORY_SIZES[c]) for c in ALL}),
    ("everything right", "perfect", {c: (CATEGORY_SIZES[c], CATEGORY_SIZES[c]) for c in ALL}),
    ("one category", "solo", {"simple_python": (2, 3)}),
    ("non-live only", "my_run", _whole(["simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
                                        "parallel_multiple", "irrelevance"], 0.77)),
    ("live of very different sizes", "org/name_with_underscore",
     {"live_simple": (1, 3), "live_multiple": (700, 1053), "live_parallel": (16, 16), "live_parallel_multiple": (0, 5),
      "live_irrelevance": (3, 884), "live_relevance": (9, 16)}),
    ("one live category, the others missing at their full size", "m", {"live_parallel": (11, 16)}),
    ("no live AST category", "m", {"live_irrelevance": (400, 884), "live_relevance": (15, 16)}),
    ("multi-turn and irrelevance, partial files", "m",
     {"multi_turn_base": (3, 10), "multi_turn_long_context": (0, 4), "irrelevance": (239, 240)}),
    ("agentic only", "m", {"web_search_base": (37, 100), "memory_kv": (12, 155), "memory_rec_sum": (155, 155)}),
    ("nothing scored", "empty", {}),
]
_rng = random.Random(20260323)
CASES += [(f"random mix {k}", f"model_{k}/v{k}", _random_case(_rng)) for k in range(40)]


def _request(model, counts):
    return {"op": "score_card", "model": model,
            "scores": {c: {"accuracy": correct / total, "total_count": total} for c, (correct, total) in counts.items()}}


def test_category_sizes_are_bfcls(oracle):
    """What a category not scored counts as in the live average: BFCL's entry counts."""
    sizes, = oracle.run([{"op": "category_sizes"}])
    assert sizes == CATEGORY_SIZES


def test_the_score_card_matches_bfcls_numbers_and_csv_files(oracle):
    answers = oracle.run([_request(model, counts) for _, model, counts in CASES])
    checked = 0
    for (name, model, counts), reference in zip(CASES, answers):
        card = score_card(counts)
        ours = csv_rows(card, model)
        assert set(ours) == set(reference["rows"]) == set(reference["csv"]), name
        for file, (header, row) in ours.items():
            ref_header, ref_row = reference["rows"][file]
            assert header == ref_header, (name, file)
            assert len(row) == len(ref_row), (name, file)
            for column, mine, theirs in zip(header, row, ref_row):
                # exact: the same float (not merely the same two decimals), or the same string
                assert (isinstance(mine, str), mine) == (isinstance(theirs, str), theirs), (name, file, column)
                checked += 1
        assert csv_files(card, model) == reference["csv"], name
    assert checked > 4000


def test_an_empty_category_is_refused_as_bfcl_cannot_record_one(oracle):
    """BFCL's accuracy divides by the entries (save_eval_results); ours refuses a category
    with none rather than invent an accuracy for it."""
    reference, = oracle.run([{"op": "score_empty", "category": "live_simple"}])
    assert reference == {"raised": "ZeroDivisionError"}
    with pytest.raises(ValueError, match="live_simple: 0 correct of 0 entries"):
        score_card({"live_simple": (0, 0), "live_multiple": (3, 4)})
