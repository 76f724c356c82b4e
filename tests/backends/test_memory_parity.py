"""Differential tests: the three memory backends against BFCL's own classes (memory_kv.py,
memory_vector.py, memory_rec_sum.py), run in the oracle venv.

Each run is a chain of conversations as BFCL's inference plays a memory scenario (fresh
instance per conversation, prerequisite memory flushed to the scenario's snapshot, questions
starting from the latest one; the oracle writes real snapshot files in a temporary folder, we
keep them in ``MemorySnapshots``). Per conversation the core-memory text of its system prompt,
every call's result string and the memory afterwards must be equal.

(a) Scripted chains: random calls from pools with hostile values (non-snake keys, wrong types,
    values at and past each limit, unhashable keys, wrong-typed counts, extra, missing and
    positional arguments, unknown and private names), including a chain that starts past its
    first prerequisite (no snapshot yet: an empty memory).
(b) Realistic chains: BFCL's own prerequisite conversations of every scenario written into
    memory message by message, with key searches (BM25+ scores compared as printed).
(c) The vector memory's scripted chains, with one encoder on both sides: a table of vectors
    whose inner products are exact in float32, standing in for all-MiniLM-L6-v2 (the oracle
    venv holds no sentence-transformers; tests/backends/test_sentence_encoder.py checks ours
    against it). BFCL's own faiss index runs there, so ties, padding and the checks on top_k
    are faiss'. A call that hands the encoder a non-string compares as "failed" only
    (``fcenv.backends.memory_vector`` says why); the state it leaves compares in full.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from fcenv.backends import memory_vector
from fcenv.backends.memory_snapshots import MemorySnapshots
from tests.support.memory_calls import (
    chain,
    differences,
    embedding_table,
    memory_request,
    realistic_chain,
    run_ours,
)

pytestmark = pytest.mark.oracle

CLASSES = ["MemoryAPI_kv", "MemoryAPI_rec_sum"]
SCENARIOS = ["customer", "finance", "healthcare", "notetaker", "student"]


@pytest.fixture(scope="module")
def memory_oracle(oracle, request):
    missing = oracle.run([{"op": "memory_ready"}])[0]["missing"]
    if missing:
        message = f"the oracle venv lacks {missing}, which BFCL's memory backends import; run `make oracle`"
        if request.config.getoption("--require-oracle"):
            pytest.fail(message)
        pytest.skip(message)
    return oracle


def _compare(oracle, runs, embeddings=None):
    answers = oracle.run([memory_request(*run, embeddings) for _, run in runs])
    problems = []
    for (label, run), answer in zip(runs, answers):
        problems += differences(label, run_ours(*run), answer, run[2])
    return problems


@pytest.mark.parametrize("class_name", CLASSES)
def test_scripted_chains_match_reference(memory_oracle, class_name):
    rng = random.Random(CLASSES.index(class_name) + 11)
    runs = []
    for index in range(40):
        scenario = rng.choice(SCENARIOS)
        start = 0 if index % 8 else 2  # every eighth chain starts with no snapshot to load
        conversations = chain(class_name, scenario, rng, conversations=rng.randint(1, 4), calls=25, start=start)
        runs.append((f"{class_name} chain {index} ({scenario})", (class_name, scenario, conversations)))
    assert sum(len(c["calls"]) for _, run in runs for c in run[2]) >= 2500
    problems = _compare(memory_oracle, runs)
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("class_name", CLASSES)
def test_bfcl_prerequisite_conversations_match_reference(memory_oracle, bfcl_dir, class_name):
    runs = []
    for scenario in SCENARIOS:
        path = bfcl_dir / "memory_prereq_conversation" / f"memory_{scenario}.json"
        entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        runs.append((f"{class_name} {scenario}", (class_name, scenario, realistic_chain(class_name, scenario, entries))))
    problems = _compare(memory_oracle, runs)
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])


def test_vector_chains_match_reference(memory_oracle, monkeypatch):
    table = embedding_table()

    def lookup(texts):
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"the vector memory embeds strings, not {type(text).__name__}")
        return np.asarray([table[text] for text in texts], dtype=np.float32)

    monkeypatch.setattr(memory_vector, "embed", lookup)
    rng = random.Random(31)
    runs = []
    for index in range(40):
        scenario = rng.choice(SCENARIOS)
        conversations = chain("MemoryAPI_vector", scenario, rng, conversations=rng.randint(1, 4), calls=25,
                              start=0 if index % 8 else 2)
        runs.append((f"MemoryAPI_vector chain {index} ({scenario})", ("MemoryAPI_vector", scenario, conversations)))
    problems = _compare(memory_oracle, runs, table)
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])


def test_snapshots_follow_bfcl_files():
    """Without the oracle: the chain's rules as BFCL's snapshot folder applies them."""
    snapshots = MemorySnapshots()
    # A chain's first conversation starts empty even when the scenario has a snapshot.
    snapshots.flush("MemoryAPI_kv", "customer", "memory_kv_prereq_0-customer-0", {"core_memory": {"a": "1"},
                                                                                 "archival_memory": {}})
    assert "snapshot" not in snapshots.config_for("MemoryAPI_kv", "customer", "memory_kv_prereq_0-customer-0")
    later = snapshots.config_for("MemoryAPI_kv", "customer", "memory_kv_prereq_1-customer-1")
    assert later["snapshot"] == {"core_memory": {"a": "1"}, "archival_memory": {}}
    assert snapshots.config_for("MemoryAPI_kv", "customer", "memory_kv_3-customer-3")["snapshot"] == later["snapshot"]
    # Per backend class and scenario; a copy each time, through JSON (keys become strings).
    assert "snapshot" not in snapshots.config_for("MemoryAPI_kv", "finance", "memory_kv_0-finance-0")
    assert "snapshot" not in snapshots.config_for("MemoryAPI_rec_sum", "customer", "memory_rec_sum_0-customer-0")
    later["snapshot"]["core_memory"]["a"] = "changed"
    assert snapshots.latest[("MemoryAPI_kv", "customer")]["core_memory"]["a"] == "1"
    snapshots.flush("MemoryAPI_vector", "student", "memory_vector_prereq_22-student-0",
                    {"core_memory": {"next_id": 1, "store": {0: "x"}}, "archival_memory": {"next_id": 0, "store": {}}})
    assert snapshots.latest[("MemoryAPI_vector", "student")]["core_memory"]["store"] == {"0": "x"}
    assert ("MemoryAPI_vector", "memory_vector_prereq_22-student-0") in snapshots.checkpoints
