"""Our Java and JavaScript decoders against BFCL's (tree-sitter 0.21 there, 0.26 here).

Texts come from simple_java and simple_javascript: each possible answer is rendered in the
language's syntax with the forms BFCL's data uses (``new ArrayList<>(Arrays.asList(..))``,
``new int[]{..}``, ``1L``, ``2.5f``, JS arrays, objects and arrow functions, ...), chosen by
the parameter's type, then varied: formatting (brackets, semicolons, fences, spaces,
newlines), prose, comments, positional and duplicate arguments, several statements, other
value forms (double-brace collections, casts, lambdas, text blocks, non-ASCII strings, which
BFCL's Java parser cuts at byte offsets) and a pool of exotic syntax. Agreement is checked as
in test_handlers_parity.py (texts and comparison:
harness/decoder_parity.py).
"""

from __future__ import annotations

import pytest

from harness.decoder_parity import disagreements, report, texts_for

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("language", ["java", "javascript"])
def test_tree_sitter_decoders_match_bfcl(oracle, bfcl_dir, language):
    texts = texts_for(language, bfcl_dir)
    assert len(texts) >= 1000
    found = disagreements(oracle, texts, language)
    assert not found, report(found, len(texts))
