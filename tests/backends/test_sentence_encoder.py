"""The vector memory's encoder (fcenv.backends.sentence_encoder) against sentence-transformers.

The reference numbers were computed once with sentence-transformers 6.2.0 (transformers 5.24,
torch 2.13 CPU) on the same folder: ``SentenceTransformer(folder).encode(TEXTS,
normalize_embeddings=True)``, as BFCL's vector memory calls it. Ours matched them bit for bit
there; the test allows float32 rounding, which other CPUs and thread counts may change.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from fcenv.backends.sentence_encoder import EncoderMissing, encoder

TEXTS = ["My name is Michael and I live in Seattle.", "What is my first name?",
         "I occasionally like a strawberry matcha latte.", "  padded   text  ", "x", "", "ünïcødé ✓ 漢字",
         "word " * 400]
# The first six components of four of the texts' embeddings, and the sum of all 384.
FIRST_SIX = {
    0: ([-0.021799733862280846, -0.009610517881810665, 0.1040584072470665, 0.045757878571748734,
         -0.025048885494470596, 0.04888102039694786], 0.27835798263549805),
    1: ([-0.07773762941360474, -0.002691491274163127, 0.0033293862361460924, 0.06512469053268433,
         -0.10621798038482666, -0.044155534356832504], 0.17868691682815552),
    6: ([-0.04888284206390381, 0.08644389361143112, -0.019796349108219147, -0.003213065443560481,
         -0.0030860984697937965, -0.009395193308591843], -0.22715651988983154),
    7: ([-0.008123664185404778, -0.09558597207069397, -0.03867314010858536, 0.049661971628665924,
         -0.0437937006354332, 0.023719824850559235], -0.7859653234481812),  # cut at 256 tokens
}
# Inner products of every text's embedding with the second's.
WITH_SECOND = [0.470939964056015, 0.9999998807907104, 0.10179071873426437, 0.1434171199798584, 0.2001706212759018,
               0.15460875630378723, 0.18818195164203644, 0.06028549000620842]


def test_embeddings_equal_sentence_transformers(minilm):
    vectors = encoder(minilm).encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    for row, (first, total) in FIRST_SIX.items():
        np.testing.assert_allclose(vectors[row, :6], first, atol=2e-6)
        assert vectors[row].sum() == pytest.approx(total, abs=2e-5)
    np.testing.assert_allclose(vectors @ vectors[1], WITH_SECOND, atol=2e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    # One text alone or in a batch: the same vector to float32 rounding (padding differs).
    np.testing.assert_allclose(encoder(minilm).encode([TEXTS[2]])[0], vectors[2], atol=1e-6)


def test_the_vector_memory_ranks_with_the_real_encoder(minilm):
    from fcenv.multi_turn.executor import ToolSession
    from fcenv.handlers import Call

    session = ToolSession(["MemoryAPI_vector"], {})
    for text in ["I live in Seattle.", "My favourite drink is a strawberry matcha latte.", "I am 35 years old."]:
        assert session.execute(Call("archival_memory_add", {"text": text})).startswith('{"id": ')
    hits = json.loads(session.execute(Call("archival_memory_retrieve", {"query": "Where do I live?", "top_k": 2})))
    assert [hit["id"] for hit in hits["result"]][:1] == [0] and len(hits["result"]) == 2
    assert 0 < hits["result"][1]["similarity_score"] < hits["result"][0]["similarity_score"] < 1
    assert session.execute(Call("archival_memory_retrieve", {"query": 7})).startswith("Error during execution: ")


def test_a_missing_folder_says_how_to_fetch_it(tmp_path):
    with pytest.raises(EncoderMissing, match="fcenv models all-minilm-l6-v2"):
        encoder(tmp_path / "nowhere")
