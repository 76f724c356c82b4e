"""The ``hf`` rollout engine: sampling in the training process, on the policy's own modules.

Tokens are drawn one at a time with a KV cache from the base model with the actor's LoRA folded
into copies of the weights it adapts, at the policy's temperature: the same distribution the
trainer scores, so its log-probs equal a scoring pass's up to float rounding (fp32). It needs
no syncing: it reads the adapter's current weights at every call.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence

import torch
from peft.tuners.lora import LoraLayer
from peft.tuners.trainable_tokens import TrainableTokensLayer

from fcenv.algos.model.batching import pack
from fcenv.algos.model.policy import (
    ACTOR,
    Policy,
    kv_cache,
    run_once_per_context,
    shared_contexts,
    with_kv_cache,
)
from fcenv.algos.rollout.engine import EngineSettings, Samples, register_engine


@register_engine("hf")
class HFEngine:
    """Samples with ``policy`` (the actor adapter) in this process."""

    def __init__(self, policy: Policy, settings: EngineSettings | None = None):
        self.policy = policy
        self.stop_ids = policy.stop_ids
        self.exact_logprobs = policy.samples_exactly

    def sync(self, policy: Policy) -> None:
        """Nothing to do: sampling reads the policy's adapters as they are."""

    def close(self) -> None:
        """Nothing to release."""

    @torch.no_grad()
    def sample(
        self,
        contexts: Sequence[Sequence[int]],
        max_new_tokens: int,
        *,
        generator: torch.Generator | None = None,
        greedy: bool = False,
        entropy_tokens: int = 0,
    ) -> Samples:
        policy = self.policy
        # Sampling keeps a KV cache; a model in training mode with gradient checkpointing
        # would drop it (Hugging Face switches the cache off there), so it samples in eval
        # mode (dropout is off either way).
        with _evaluating(policy.base), _folded(policy.model, ACTOR):
            batch = pack(contexts, None, policy.pad_id, policy.device)
            model = policy.base
            attention = batch.attention_mask
            positions = batch.position_ids
            # A group's episodes start from one prompt: each distinct context is prefilled once and
            # its KV cache repeated for the rows that share it (rows of equal contexts are equal).
            shared = shared_contexts(batch)
            if shared is not None:
                out = run_once_per_context(model, batch, shared, logits_to_keep=1)
                out.logits = out.logits[shared[1]]
            else:
                out = model(input_ids=batch.input_ids, attention_mask=attention, position_ids=positions,
                            use_cache=True, logits_to_keep=1)
            rows = len(contexts)
            stop = torch.tensor(policy.stop_ids, device=policy.device)
            finished = torch.zeros(rows, dtype=torch.bool, device=policy.device)
            tokens: list[torch.Tensor] = []
            logps: list[torch.Tensor] = []
            alive: list[torch.Tensor] = []
            entropy_sum = torch.zeros(rows, device=policy.device)
            entropy_count = torch.zeros(rows, device=policy.device)
            for step in range(max_new_tokens):
                logp_all = policy.tempered_log_probs(out.logits[:, -1])
                if step < entropy_tokens:
                    live = (~finished).float()
                    entropy = -(logp_all.exp() * logp_all).sum(-1) / math.log(logp_all.shape[-1])
                    entropy_sum += entropy * live
                    entropy_count += live
                if greedy:
                    token = logp_all.argmax(-1)
                else:
                    token = _draw(logp_all, generator)
                alive.append(~finished)
                tokens.append(token)
                logps.append(logp_all.gather(-1, token.unsqueeze(-1)).squeeze(-1))
                finished = finished | torch.isin(token, stop)
                if bool(finished.all()):
                    break
                attention = torch.cat([attention, torch.ones_like(attention[:, :1])], dim=1)
                positions = positions[:, -1:] + 1
                feed = torch.where(finished, torch.full_like(token, policy.pad_id), token)
                out = model(input_ids=feed.unsqueeze(-1), attention_mask=attention, position_ids=positions,
                            use_cache=True, **with_kv_cache(kv_cache(out)))
            token_grid = torch.stack(tokens, 1).tolist()
            logp_grid = torch.stack(logps, 1).tolist()
            alive_grid = torch.stack(alive, 1).tolist()
            actions = [[t for t, a in zip(tr, ar) if a] for tr, ar in zip(token_grid, alive_grid)]
            action_logps = [[v for v, a in zip(lr, ar) if a] for lr, ar in zip(logp_grid, alive_grid)]
            entropies = (entropy_sum / entropy_count.clamp(min=1.0)).tolist()
            return Samples(actions, action_logps, entropies if entropy_tokens else [])


def _draw(log_probs: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """One token per row, drawn from ``exp(log_probs)`` by inverting the cumulative
    distribution with one uniform number per row (torch.multinomial draws an exponential
    variate per vocabulary entry: on a CPU, 0.4 ms of a small model's 5 ms decoding step)."""
    cdf = log_probs.exp().double().cumsum(-1)
    uniform = torch.rand((len(cdf), 1), generator=generator, dtype=torch.float64, device=cdf.device)
    # The first entry whose cumulative probability exceeds the draw: never one of probability 0.
    token = torch.searchsorted(cdf, uniform * cdf[:, -1:], right=True).squeeze(-1)
    return token.clamp(max=cdf.shape[-1] - 1)


@contextlib.contextmanager
def _folded(model: torch.nn.Module, adapter: str):
    """``adapter`` folded into fresh copies of the weights it adapts, with the adapters
    switched off: the same function, but one matrix product per adapted layer instead of
    three and their bookkeeping (a tenth of a small model's decoding step). The base's own
    weights are put back untouched afterwards (folding in place and out again would round
    them away from the reference's). The copies cost the adapted weights' memory again
    while sampling."""
    swapped = []
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, LoraLayer) and adapter in module.lora_A:
                layer = module.get_base_layer()
                swapped.append((layer, layer.weight))
                # The sum in the adapter's precision (fp32 beside a bf16 base), stored in the base's.
                folded = (layer.weight + module.get_delta_weight(adapter)).to(layer.weight.dtype)
                layer.weight = torch.nn.Parameter(folded, requires_grad=False)
            elif isinstance(module, TrainableTokensLayer) and adapter in module.trainable_tokens_delta:
                # Trained rows of the embedding or output layer replace the base's rows.
                layer = module.get_base_layer()
                swapped.append((layer, layer.weight))
                layer.weight = torch.nn.Parameter(module.get_merged_weights([adapter]).detach(), requires_grad=False)
    try:
        with model.disable_adapter():
            yield
    finally:
        for layer, weight in swapped:
            layer.weight = weight


@contextlib.contextmanager
def _evaluating(model: torch.nn.Module):
    training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(training)
