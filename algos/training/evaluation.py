"""Held-out evaluation during training: BFCL's verdict rate on tasks the run never trains on.

Every held-out task (split across processes) is answered greedily ("heldout_greedy/") and
sampled at the training temperature ("heldout_sampled/", the policy RL optimises). The sampled
answers draw from their own generator, seeded the same at every evaluation: the figures of two
evaluations compare like with like, and the training's random streams stay untouched.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

import gymnasium as gym
import torch

from fcenv.algos.rollout.codec import TextCodec
from fcenv.algos.rollout.engine import Engine
from fcenv.algos.rollout.play import play
from fcenv.algos.training.metrics import means, rollout_stats

HEADLINE = "heldout_greedy/accuracy"


@torch.no_grad()
def evaluate_heldout(envs: Sequence[gym.Env], engine: Engine, codec: TextCodec, indices: Sequence[int], *,
                     max_new_tokens: int, seed: int, device: torch.device,
                     merge: Callable[[dict[str, float]], dict[str, float]]) -> dict[str, float]:
    """This process's share of the held-out ``indices``, played on ``envs``; the figures of
    every process merged."""
    sums: dict[str, float] = {}
    sampling = torch.Generator(device=device)
    sampling.manual_seed(seed)
    for prefix, greedy in (("heldout_greedy", True), ("heldout_sampled", False)):
        queue = deque(indices)
        rollout = play(envs, engine, codec, lambda thread, queue=queue: queue.popleft() if queue else None,
                       max_new_tokens=max_new_tokens, greedy=greedy, generator=sampling)
        sums.update(rollout_stats(rollout, prefix))
    return means(merge(sums))
