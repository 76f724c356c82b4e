"""Our Python decoder against BFCL's on thousands of generated texts (op "decode_exact").

Texts come from BFCL's own possible answers (every Python AST category, live included),
rendered as a model would write them, then mutated: formatting (brackets, fences, spaces,
newlines, quotes, comments), prose around the calls, positional and duplicate arguments,
nested calls, operator expressions, unary quirks, tuples, and a pool of exotic or hostile-ish
syntax. Agreement means: same success or failure, same failure kind
(``decoder_failed`` / ``decoder_wrong_output_format``) and the same decoded value with types,
tuples and key order. The texts and the comparison: harness/decoder_parity.py.
"""

from __future__ import annotations

import pytest

from harness.decoder_parity import arithmetic_texts, disagreements, python_texts, report

pytestmark = pytest.mark.oracle


def test_python_decoder_matches_bfcl(oracle, bfcl_dir):
    # No exclusions: the generators avoid the documented divergences (operator expressions
    # holding calls, names, lambdas, comprehensions or f-strings, and results beyond
    # handlers/bounded_eval.py's bounds), which test_handlers.py pins down instead.
    texts = python_texts(bfcl_dir) + arithmetic_texts(3000)
    assert len(texts) >= 8000
    found = disagreements(oracle, texts, "python")
    assert not found, report(found, len(texts))
