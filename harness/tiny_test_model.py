"""The tiny model the tests train on: one spec, so every test module (and bench/bench_faults.py)
shares one cache entry. A few seconds of pretraining: enough that some answers parse, so
rewards vary."""

from __future__ import annotations

from fcenv.algos.tiny.build import TinySpec

TEST_SPEC = TinySpec(hidden_size=32, intermediate_size=64, num_layers=2, num_heads=2, num_kv_heads=1,
                     pretrain_steps=150, pretrain_batch=8, pretrain_lr=1e-2)

# vLLM's CPU attention takes head sizes of 32 and more (TEST_SPEC's are 16): the vLLM engine's
# tests use the same recipe with two heads of 32 (tests/test_vllm_engine.py).
VLLM_TEST_SPEC = TinySpec(hidden_size=64, intermediate_size=128, num_layers=2, num_heads=2, num_kv_heads=1,
                          pretrain_steps=150, pretrain_batch=8, pretrain_lr=1e-2)
