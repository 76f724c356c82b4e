"""Load: a vector env of multi-turn episodes stepping for a long time, with memory flat.

``harness.load.run_load`` drives a vector env over a multi-turn BFCL file with a realistic mix
of actions (the ground truth, perturbed ground truths, wrong calls and prose) and samples the
resident memory. bench/bench_load.py runs it at full size (64 envs x 10,000 steps) and reports
throughput; the tests here run a CI-sized load and bound the memory growth after warm-up
(memory, not time), and check that the async vector env works.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import fcenv  # noqa: F401  (registers the env)
from harness.load import run_load

MAX_GROWTH_MIB = 24


@pytest.fixture
def base_path(bfcl_dir) -> Path:
    return bfcl_dir / "BFCL_v4_multi_turn_base.json"


@pytest.mark.slow
def test_memory_stays_flat_under_load(base_path):
    report = run_load(base_path, num_envs=64, steps=500, warmup=200, sample_every=25)
    assert report.episodes > 64  # episodes ended and were reset many times over
    assert 0.0 <= report.reward_min and report.reward_max <= 1.0 and report.reward_sum > 0.0
    assert report.growth_after_warmup <= MAX_GROWTH_MIB, report.samples


@pytest.mark.slow
def test_async_vector_env_works(base_path):
    report = run_load(base_path, num_envs=4, steps=60, warmup=10, sample_every=20, mode="async")
    assert report.episodes > 0 and report.actions > 0
    assert 0.0 <= report.reward_min and report.reward_max <= 1.0


def test_async_with_shared_memory_asks_for_pipes(base_path):
    """Text of any length and alphabet cannot live in shared memory: a clear error, rather
    than gymnasium's fixed-size charset layout (which returned 16M-character observations and
    crashed workers on characters outside the charset)."""
    with pytest.raises(ValueError, match="shared_memory=False") as caught:
        gym.make_vec("fcenv/FunctionCalling-v0", num_envs=2, vectorization_mode="async", dataset_path=str(base_path))
    assert "vector_kwargs={'shared_memory': False}" in str(caught.value.__cause__)
