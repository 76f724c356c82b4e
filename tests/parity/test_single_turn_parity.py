"""End to end: text -> our handler -> our checker, against BFCL's runner on the same text.

The handler is the task's language (``python``/``java``/``javascript``); relevance categories
use ``python``, as BFCL does. Categories whose handler is not installed are skipped.
"""

from __future__ import annotations

from collections import Counter

import pytest

from fcenv import handlers
from fcenv.checkers import get_checker
from harness.decoder_parity import decode_or_error
from harness.generators import generate

pytestmark = pytest.mark.oracle


def test_text_to_verdict_matches_bfcl(oracle, bfcl_dir):
    samples = generate(bfcl_dir, seed=4321, per_entry=5)
    decoders = {}
    usable = []
    for sample in samples:
        language = "python" if sample.task.kind in ("relevance", "irrelevance") else sample.task.language
        if language not in decoders:
            decoders[language] = handlers.get_handler(language)
        if decoders[language] is not None:
            usable.append((sample, decoders[language]))
    if not usable:
        pytest.skip("no handler installed yet")
    answers = oracle.run([{"op": "single_safe", "text": s.text, "category": s.task.category,
                           "function": s.task.functions, "ground_truth": s.task.ground_truth} for s, _ in usable])
    mismatches = []
    checked = Counter()
    for (sample, decoder), reference in zip(usable, answers):
        task = sample.task
        result = get_checker(task.kind if task.kind in ("relevance", "irrelevance") else "ast")(
            task, decode_or_error(decoder, sample.text))
        checked[task.category] += 1
        if "raised" in reference:
            agree = not result.valid and result.error_type.startswith("checker_error:")
        else:
            agree = (result.valid, result.error_type) == (reference["valid"], reference["error_type"])
        if not agree:
            mismatches.append((task.id, sample.mutation, sample.text[:200], reference.get("error_type"),
                               result.error_type))
    missing = sorted(lang for lang, fn in decoders.items() if fn is None)
    print(f"compared {sum(checked.values())} texts; no handler yet for {missing or 'none'}")
    assert not mismatches, f"{len(mismatches)} of {len(usable)} disagree, e.g. {mismatches[:8]}"
