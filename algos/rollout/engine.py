"""Rollout engines: what samples a rollout's actions.

An engine continues token contexts: one action per context, as token ids (the stop token
included when one was drawn) with each token's log-probability under the sampling
distribution (the base model with the actor adapter, logits over the temperature, no top-k
or top-p), and on request each action's mean normalised entropy over its first tokens
(entropy / log(vocabulary), ARPO's branching signal). Contexts go in as ids and actions come
out as ids, so what the trainer scores is exactly what the engine sampled.

After every update the trainer calls ``sync(policy)``: the next rollout samples with the actor
it just trained, never a stale one. ``exact_logprobs`` says whether the engine's log-probs
equal the trainer's scoring pass up to float rounding, so that PPO may take them as the old
log-probs.

Built in: ``hf`` (``fcenv.algos.rollout.hf``, in the training process; the default) and ``vllm``
(``fcenv.algos.rollout.vllm``, vLLM in a process of its own, the actor folded into its weights at
every sync; ``make vllm`` installs it). A new engine is
a class ``Engine(policy, settings: EngineSettings)`` registered with ``@register_engine(name)``
(or under the ``fcenv.rollout_engines`` entry-point group); ``--rollout_engine`` then takes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import torch

from fcenv.handlers.registry import Registry


@dataclass
class Samples:
    actions: list[list[int]]
    logprobs: list[list[float]]
    entropies: list[float] = field(default_factory=list)  # empty unless entropy_tokens > 0
    # Per context, the prompt tokens the engine did not run again (its prefix cache); None: it keeps none.
    cached_tokens: list[int] | None = None


class Engine(Protocol):
    stop_ids: list[int]
    exact_logprobs: bool

    def sample(self, contexts: Sequence[Sequence[int]], max_new_tokens: int, *,
               generator: torch.Generator | None = None, greedy: bool = False,
               entropy_tokens: int = 0) -> Samples: ...

    def sync(self, policy) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class EngineSettings:
    """What an engine needs besides the policy: an engine in another process loads the base
    model from its folder and sizes its cache for the context window."""

    model_path: Path
    context_window: int
    seed: int = 0
    compile: bool = False  # vllm on a CPU: compile the model rather than run it eagerly
    kv_cache_mib: int = 1024  # an engine that keeps a KV cache of its own (vllm): its size


ENGINES: Registry[type] = Registry("rollout engine", "fcenv.algos.rollout", ("hf", "vllm"), "fcenv.rollout_engines")
register_engine = ENGINES.register


def check_engine(name: str) -> None:
    """Raises ``ConfigError`` naming ``--rollout_engine`` unless an engine is registered as
    ``name`` and can run here: an engine class may say why not with a static ``missing()``
    (vLLM's: no vLLM for its interpreter), asked before any model loads."""
    from fcenv.algos.errors import ConfigError

    if name not in ENGINES:
        raise ConfigError(f"--rollout_engine {name!r}: no such rollout engine (registered: {', '.join(ENGINES.names())})")
    missing = getattr(ENGINES.get(name), "missing", None)
    why = missing() if callable(missing) else None
    if why:
        raise ConfigError(f"--rollout_engine {name}: {why}")


def make_engine(name: str, policy, settings: EngineSettings) -> Engine:
    """The registered engine ``name`` sampling with ``policy``'s actor."""
    return ENGINES.get(name)(policy, settings)
