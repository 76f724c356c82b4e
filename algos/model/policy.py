"""The policy: one frozen base causal LM, LoRA adapters "actor" and "critic", a value head.

The reference policy is the same base with the adapters switched off, so actor, critic and
reference share one copy of the base weights. The critic's adapter may cover only the top
layers (``critic_fraction``): below them the critic sees the base's own states, which the
reference pass computes anyway (``reference_pass`` records them), so its passes start from
those and run the top layers alone (``token_values(batch, states)``). Every distribution the
trainer uses (sampling, old and new log-probs, reference log-probs, entropy) is the base
distribution divided by one temperature, with no top-k, top-p or penalties, so PPO's ratios
compare like with like.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.utils.checkpoint
from peft import LoraConfig, get_peft_model

from fcenv.algos.model.batching import TokenBatch, pack, position_ids_for

ACTOR = "actor"
CRITIC = "critic"


@dataclass
class LoraSettings:
    r: int = 8
    alpha: int = 16
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "v_proj"])
    dropout: float = 0.0
    # Token ids whose rows of the embedding and output layers the adapter trains whole (PEFT's
    # trainable tokens): a token the base never learned to write, such as a tool-call tag whose
    # output row equals thousands of untrained ones, is beyond any low-rank change of the layers.
    trainable_tokens: tuple[int, ...] = ()
    # The decoder layers the adapter covers (empty: all). An adapter on the top layers alone stops
    # the backward pass at its first layer: its trainable token rows then learn from the output
    # side only (what the model writes), their input side (reading them) taking no gradient.
    layers: tuple[int, ...] = ()

    def to_config(self, token_layers: Sequence[str] = ()) -> LoraConfig:
        """PEFT's config; ``token_layers``: the layers (by module name) whose rows of
        ``trainable_tokens`` it trains."""
        rows = {layer: sorted(self.trainable_tokens) for layer in token_layers} if self.trainable_tokens else None
        return LoraConfig(r=self.r, lora_alpha=self.alpha, target_modules=list(self.target_modules),
                          lora_dropout=self.dropout, bias="none", task_type="CAUSAL_LM",
                          trainable_token_indices=rows, layers_to_transform=list(self.layers) or None)


def top_layers(model: torch.nn.Module, fraction: float) -> tuple[int, ...]:
    """The top ``fraction`` of ``model``'s decoder layers (rounded up, at least one); () for all."""
    if not 0 < fraction <= 1:
        raise ValueError(f"the share of layers must be in (0, 1], not {fraction}")
    depth = len(_decoder_layers(model))
    start = depth - max(1, math.ceil(fraction * depth))
    return tuple(range(start, depth)) if start else ()


def _token_layers(model: torch.nn.Module) -> list[str]:
    """The module names of the input embedding and, when it has weights of its own, the output
    layer (a tied one follows the embedding in PEFT)."""
    names = {id(module): name.rsplit(".", 1)[-1] for name, module in model.named_modules()}
    embedding, output = model.get_input_embeddings(), model.get_output_embeddings()
    layers = [names[id(embedding)]]
    if output is not None and output.weight is not embedding.weight:
        layers.append(names[id(output)])
    return layers


def _rows_over_base(layer, original, read_only: frozenset, x: torch.Tensor, active_adapters, *args,
                    **kwargs) -> torch.Tensor:
    """PEFT's trainable-token layer's output, computed without its cost. PEFT builds a copy of
    the whole matrix with the trained rows in place at every forward (151,936 x 896 floats,
    545 MB, for Qwen2.5's embedding and again for its output layer), and its backward is then a
    gradient of the whole matrix (the output layer's a matmul as large as its forward). Here the
    frozen base layer runs as it is and only the trained tokens' outputs are replaced: the same
    values (the embedding's exactly, the output layer's up to the matmul's rounding), with a
    gradient that reaches the trained rows alone. Adapters in ``read_only`` take no gradient through
    their embedding rows (an adapter on the top layers: see ``LoraSettings.layers``)."""
    base = layer.base_layer
    if layer.disable_adapters or not active_adapters or layer.merged or not isinstance(
            base, torch.nn.Embedding | torch.nn.Linear):
        return original(x, active_adapters, *args, **kwargs)
    layer._check_overlapping_tokens(active_adapters)
    if isinstance(base, torch.nn.Linear):  # an output layer: the trained tokens' logits replaced
        out = torch.nn.functional.linear(x, base.weight)  # as PEFT's path: no bias
        for adapter in active_adapters:
            index = torch.tensor(layer.token_indices[adapter], device=out.device)
            rows = layer.trainable_tokens_delta[adapter].to(out.dtype)
            out = out.index_copy(out.dim() - 1, index, torch.nn.functional.linear(x, rows))
        return out
    out = base(x, *args, **kwargs)  # an embedding: the trained tokens' vectors replaced
    scale = layer._get_embed_scale()
    for adapter in active_adapters:
        index = torch.tensor(layer.token_indices[adapter], device=x.device)
        rows = layer.trainable_tokens_delta[adapter].to(out.dtype)
        if adapter in read_only:
            rows = rows.detach()
        if scale is not None:
            rows = rows * scale.to(out.dtype)
        hit = x.unsqueeze(-1) == index  # each position matches at most one trained token
        picked = hit.to(out.dtype) @ rows  # that token's row, exactly (a one-hot sum)
        out = torch.where(hit.any(-1, keepdim=True), picked, out)
    return out


def _fast_token_rows(model: torch.nn.Module, read_only: frozenset = frozenset()) -> None:
    """Every trainable-token layer of ``model`` computes its output with ``_rows_over_base``."""
    from peft.tuners.trainable_tokens.layer import TrainableTokensLayer

    for module in model.modules():
        if isinstance(module, TrainableTokensLayer):
            module.forward_adapters = functools.partial(_rows_over_base, module, module.forward_adapters, read_only)


def _switch_off_dropout(model: torch.nn.Module) -> None:
    # PPO's first ratio must be exactly the sampling distribution's; dropout would make the
    # scoring pass random, and it also lets us keep the model in train mode (which gradient
    # checkpointing needs) without changing the distribution.
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    for name in ("attention_dropout", "hidden_dropout", "dropout", "resid_pdrop", "attn_pdrop", "embd_pdrop"):
        if isinstance(getattr(model.config, name, None), float):
            setattr(model.config, name, 0.0)


def _hidden_size(model: torch.nn.Module) -> int:
    config = model.config
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    return int(text_config.hidden_size)


# The most output-layer scores (rows x tokens x vocabulary) one piece of a training step holds.
OUTPUT_LAYER_FLOATS = 1 << 25


class Policy(torch.nn.Module):
    def __init__(
        self,
        base: torch.nn.Module,
        *,
        pad_id: int,
        stop_ids: Sequence[int],
        actor_lora: LoraSettings,
        critic_lora: LoraSettings | None = None,
        temperature: float = 1.0,
        gradient_checkpointing: bool = False,
        with_critic: bool = True,
        critic_fraction: float = 1.0,
    ):
        super().__init__()
        if temperature <= 0:
            raise ValueError("the training temperature must be positive (0 is greedy, for evaluation only)")
        _switch_off_dropout(base)
        base.requires_grad_(False)
        if gradient_checkpointing:
            base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        # Checkpointed layers keep no KV cache while training, so rows cannot share a context's pass.
        self.shares_contexts = not gradient_checkpointing
        with warnings.catch_warnings():
            # PEFT reads transformers' renamed `is_gradient_checkpointing`; the warning is theirs.
            warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
            token_layers = _token_layers(base)
            self.model = get_peft_model(base, actor_lora.to_config(token_layers), adapter_name=ACTOR)
        roles = [ACTOR]
        self.value_head = None
        if not 0 < critic_fraction <= 1:
            raise ValueError(f"critic_fraction must be in (0, 1], not {critic_fraction}")
        depth = len(_decoder_layers(base))
        # The first layer the critic's adapter covers: the top share of the layers, at least one.
        self.critic_start = depth - max(1, math.ceil(critic_fraction * depth)) if with_critic else 0
        if with_critic:  # without: an actor-only policy (supervised tuning, memory baselines)
            # The critic gets the actor's trainable token rows too (its own copies): PEFT cannot
            # add an adapter without them to a model whose tied embedding already has them.
            critic_config = (critic_lora or actor_lora).to_config(token_layers)
            critic_config.layers_to_transform = list(range(self.critic_start, depth)) if self.critic_start else None
            self.model.add_adapter(CRITIC, critic_config)
            roles.append(CRITIC)
            hidden = _hidden_size(base)
            self.value_head = torch.nn.Linear(hidden, 1, dtype=torch.float32)
            # Start at V = 0 everywhere: a random head would give values with many times the
            # variance of the rewards, and its noise would swamp the first advantages.
            torch.nn.init.zeros_(self.value_head.weight)
            torch.nn.init.zeros_(self.value_head.bias)
        # An adapter on the top layers alone: the backward pass stops at its first layer.
        self.actor_start = min(actor_lora.layers) if actor_lora.layers else 0
        if actor_lora.trainable_tokens:
            read_only = {name for name, start in ((ACTOR, self.actor_start), (CRITIC, self.critic_start)) if start}
            _fast_token_rows(self.model, frozenset(read_only))
        self.pad_id = int(pad_id)
        self.stop_ids = sorted({int(i) for i in stop_ids})
        if not self.stop_ids:
            raise ValueError("the tokenizer has no end-of-sequence token")
        self.temperature = float(temperature)
        self._adapter_params = {name: self._lora_parameters(name) for name in roles}
        self._activate(ACTOR)
        self.train()

    # ---- parameters -------------------------------------------------------------------
    def _lora_parameters(self, adapter: str) -> list[torch.nn.Parameter]:
        pattern = re.compile(rf"\.(lora_[A-Za-z_]+|trainable_tokens_delta)\.{adapter}(\.|$)")
        return [p for n, p in self.model.named_parameters() if pattern.search(n)]

    def actor_parameters(self) -> list[torch.nn.Parameter]:
        return list(self._adapter_params[ACTOR])

    def critic_parameters(self) -> list[torch.nn.Parameter]:
        if self.value_head is None:
            return []
        return list(self._adapter_params[CRITIC]) + list(self.value_head.parameters())

    def base_parameters(self) -> list[torch.nn.Parameter]:
        trainable = {id(p) for p in self.actor_parameters() + self.critic_parameters()}
        return [p for p in self.parameters() if id(p) not in trainable]

    @property
    def has_critic(self) -> bool:
        return self.value_head is not None

    @property
    def base(self) -> torch.nn.Module:
        return self.model.get_base_model()

    @property
    def samples_exactly(self) -> bool:
        """Whether sampling's log-probs equal a scoring pass's up to float rounding: in fp32
        (bf16's rounding differs between the cached and the full forward pass)."""
        return next(self.base.parameters()).dtype == torch.float32

    @property
    def device(self) -> torch.device:
        return self._adapter_params[ACTOR][0].device

    def _activate(self, adapter: str) -> None:
        self.model.set_adapter(adapter)
        # PEFT's set_adapter freezes the other adapter; both must stay trainable because
        # each optimizer owns a fixed parameter list built once.
        for params in self._adapter_params.values():
            for p in params:
                p.requires_grad_(True)

    def _adapter_context(self, adapter: str | None):
        if adapter is None:
            return self.model.disable_adapter()
        self._activate(adapter)
        return contextlib.nullcontext()

    # ---- scoring ----------------------------------------------------------------------
    def _hidden(self, batch: TokenBatch, adapter: str | None,
                states: list[torch.Tensor] | None = None) -> torch.Tensor:
        """Last-layer hidden states at columns ``C-1 .. C+K-1``: the state before each
        action token, plus the state after the last slot. With ``states`` (a list), the
        hidden states entering the critic's first layer, every column, are appended to it.

        Rows that share a context (a group's samples, an ARPO branch's siblings) run it once:
        the distinct contexts go through the model with a KV cache, the cache is repeated
        for their rows (``index_select``, so gradients flow back to the one pass), and the
        actions continue from it. Same values as one pass over every row, up to float
        rounding; a group of four spends about half the compute on a short prompt."""
        decoder = self.base.get_decoder()
        c, k = batch.context_length, batch.action_width
        if batch.carriers is not None:  # rows run inside longer ones (one pass per episode)
            if states is not None:
                raise ValueError("a chained batch keeps no per-row states for a top-layer critic")
            with self._adapter_context(adapter):
                return batch.carriers.gather(run_carriers(decoder, batch.carriers))
        shared = shared_contexts(batch) if k > 0 and self.shares_contexts else None
        recorded: list[torch.Tensor] = []
        recording = (_recording_input(_decoder_layers(self.base)[self.critic_start], recorded)
                     if states is not None else contextlib.nullcontext())
        with self._adapter_context(adapter), recording:
            if shared is None:
                out = decoder(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                              position_ids=batch.position_ids, use_cache=False)
                if states is not None:
                    states.append(recorded[0])
                return out.last_hidden_state[:, c - 1:c + k]
            prefix = run_once_per_context(decoder, batch, shared)
            rest = decoder(input_ids=batch.input_ids[:, c:], attention_mask=batch.attention_mask,
                           position_ids=batch.position_ids[:, c:], use_cache=True,
                           **with_kv_cache(kv_cache(prefix)))
        if states is not None:
            states.append(torch.cat([recorded[0][shared[1]], recorded[1]], dim=1))
        return torch.cat([prefix.last_hidden_state[shared[1], c - 1:c], rest.last_hidden_state], dim=1)

    def _critic_hidden_from(self, batch: TokenBatch, states: torch.Tensor) -> torch.Tensor:
        """``_hidden`` of the critic, run from ``states`` (the base's hidden states entering
        the critic's first adapted layer, every column): the layers below are not run."""
        decoder = self.base.get_decoder()
        c, k = batch.context_length, batch.action_width
        with self._adapter_context(CRITIC), _starting_at(_decoder_layers(self.base), self.critic_start, states):
            out = decoder(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                          position_ids=batch.position_ids, use_cache=False)
        return out.last_hidden_state[:, c - 1:c + k]

    def _log_softmax(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.tempered_log_probs(self.base.get_output_embeddings()(hidden))

    def tempered_log_probs(self, logits: torch.Tensor) -> torch.Tensor:
        # Dividing by a temperature of 1 changes nothing but costs a copy of the logits (and
        # its backward): vocabulary-wide tensors are the largest of an update.
        logits = logits.float()
        return torch.log_softmax(logits if self.temperature == 1.0 else logits / self.temperature, dim=-1)

    def token_logprobs(
        self, batch: TokenBatch, adapter: str | None = ACTOR, with_entropy: bool = False,
        entropy_grad: bool = True, states: list[torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Log-probability of each action token (B, K) under ``adapter`` (None: the
        reference), and the entropy of each token's distribution when asked (outside the
        graph unless ``entropy_grad``: a loss that does not use it should not pay for its
        backward). ``states``: as in ``_hidden``."""
        hidden = self._hidden(batch, adapter, states)[:, : batch.action_width]
        ids = batch.action_ids
        if not (torch.is_grad_enabled() and hidden.requires_grad):
            logp, entropy = self._token_scores(hidden, ids, adapter, with_entropy, False)
            return logp * batch.action_mask, entropy
        # The vocabulary-wide scores are the largest tensors of a step (rows x tokens x vocabulary,
        # kept three times for the backward pass): a few rows at a time, recomputed in the backward
        # pass instead of kept (long multi-turn episodes have many rows).
        rows = max(1, OUTPUT_LAYER_FLOATS // max(1, hidden.shape[1] * self._vocabulary(hidden)))
        pieces = [torch.utils.checkpoint.checkpoint(self._token_scores, hidden[i:i + rows], ids[i:i + rows], adapter,
                                                    with_entropy, entropy_grad, use_reentrant=False)
                  for i in range(0, hidden.shape[0], rows)]
        logp = torch.cat([p[0] for p in pieces])
        entropy = torch.cat([p[1] for p in pieces]) if with_entropy else None
        return logp * batch.action_mask, entropy

    def _vocabulary(self, hidden: torch.Tensor) -> int:
        return int(self.base.get_output_embeddings().weight.shape[0])

    def _token_scores(self, hidden: torch.Tensor, ids: torch.Tensor, adapter: str | None, with_entropy: bool,
                      entropy_grad: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The log-probs of ``ids`` and (``with_entropy``) each position's entropy, from the last
        hidden states, under ``adapter``: its output layer may be adapted too (trained token rows),
        and a recomputation in the backward pass must see the same adapter."""
        with self._adapter_context(adapter):
            logp_all = self._log_softmax(hidden)
        logp = logp_all.gather(-1, ids.unsqueeze(-1)).squeeze(-1)
        entropy = None
        if with_entropy:
            with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
                entropy = -(logp_all.exp() * logp_all).sum(-1)
        return logp, entropy

    def reference_logprobs(self, batch: TokenBatch) -> torch.Tensor:
        return self.token_logprobs(batch, adapter=None)[0]

    def reference_pass(self, batch: TokenBatch) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The reference log-probs (B, K), and with a top-layer critic the base's hidden
        states entering the critic's first layer (B, C + K, hidden), from one pass."""
        states: list[torch.Tensor] | None = [] if self.critic_start and batch.carriers is None else None
        logp = self.token_logprobs(batch, adapter=None, states=states)[0]
        return logp, states[0] if states else None

    def token_values(self, batch: TokenBatch, states: torch.Tensor | None = None) -> torch.Tensor:
        """Critic values (B, K + 1): column j is the value of the state before action
        token j (column 0: the context alone). ``states`` from ``reference_pass`` (a
        top-layer critic) spare the layers below the critic's."""
        if states is not None and self.critic_start:
            hidden = self._critic_hidden_from(batch, states)
        else:
            hidden = self._hidden(batch, CRITIC)
        return self.value_head(hidden.float()).squeeze(-1)

    @torch.no_grad()
    def context_values(self, contexts: Sequence[Sequence[int]]) -> torch.Tensor:
        return self.token_values(pack(contexts, None, self.pad_id, self.device))[:, 0]


@functools.cache
def _kv_cache_name() -> str:
    """What the installed transformers calls a model's KV cache, as a forward argument and an
    output field: ``cache`` since it renamed ``past_key_values`` (the old name warns there)."""
    from transformers.modeling_outputs import BaseModelOutputWithPast

    return "cache" if "cache" in BaseModelOutputWithPast.__dataclass_fields__ else "past_key_values"


def kv_cache(out) -> object:
    """The KV cache a forward with ``use_cache=True`` returned."""
    return getattr(out, _kv_cache_name())


def with_kv_cache(cache) -> dict[str, object]:
    """The keyword argument that hands ``cache`` to a forward."""
    return {_kv_cache_name(): cache}


def run_once_per_context(model: torch.nn.Module, batch: TokenBatch, shared: tuple[torch.Tensor, torch.Tensor],
                          **kwargs):
    """``model`` over the contexts of ``batch`` (its first ``C`` columns), each distinct one
    once, with its KV cache repeated for every row that shares it (``index_select``, so the
    gradients of all those rows flow back into the one pass)."""
    first, index = shared
    c = batch.context_length
    out = model(input_ids=batch.input_ids[first, :c], attention_mask=batch.attention_mask[first, :c],
                position_ids=batch.position_ids[first, :c], use_cache=True, **kwargs)
    kv_cache(out).reorder_cache(index)
    return out


def run_carriers(decoder: torch.nn.Module, carriers) -> torch.Tensor:
    """The last hidden states (P, L, hidden) of a chained batch's carriers. A prefix they all share
    (``Carriers.shared_prefix``: a group's episodes start from one prompt) runs once, its KV cache
    repeated for every carrier (``reorder_cache``, so the gradients of all of them flow back into
    the one pass), and the rest of each carrier continues from it."""
    n = carriers.shared_prefix
    if not n:
        return decoder(input_ids=carriers.input_ids, attention_mask=carriers.attention_mask,
                       position_ids=carriers.position_ids, use_cache=False).last_hidden_state
    count = carriers.input_ids.shape[0]
    first = decoder(input_ids=carriers.input_ids[:1, :n], attention_mask=carriers.attention_mask[:1, :n],
                    position_ids=carriers.position_ids[:1, :n], use_cache=True)
    cache = kv_cache(first)
    cache.reorder_cache(torch.zeros(count, dtype=torch.long, device=carriers.input_ids.device))
    rest = decoder(input_ids=carriers.input_ids[:, n:], attention_mask=carriers.attention_mask,
                   position_ids=carriers.position_ids[:, n:], use_cache=True, **with_kv_cache(cache))
    return torch.cat([first.last_hidden_state.expand(count, -1, -1), rest.last_hidden_state], dim=1)


def _decoder_layers(model: torch.nn.Module) -> torch.nn.ModuleList:
    """The decoder's stack of layers (``model.layers`` in Hugging Face's decoders)."""
    layers = getattr(model.get_decoder(), "layers", None)
    if not isinstance(layers, torch.nn.ModuleList):
        raise ValueError(f"{type(model).__name__}: no stack of decoder layers found (expected `.layers`)")
    return layers


@contextlib.contextmanager
def _recording_input(layer: torch.nn.Module, recorded: list[torch.Tensor]):
    """Append the hidden states entering ``layer`` to ``recorded`` on each call."""
    def record(module, args, kwargs):
        recorded.append(args[0] if args else kwargs["hidden_states"])
    handle = layer.register_forward_pre_hook(record, with_kwargs=True)
    try:
        yield
    finally:
        handle.remove()


@contextlib.contextmanager
def _starting_at(layers: torch.nn.ModuleList, start: int, states: torch.Tensor):
    """The decoder's layers below ``start`` hand on ``states`` instead of computing: the
    model runs from layer ``start``, with the embeddings, positions and masks it always
    builds. (Decoder layers of transformers 5 return the hidden states alone.)"""
    def given(*args, **kwargs):
        return states
    for layer in layers[:start]:
        layer.forward = given
    try:
        yield
    finally:
        for layer in layers[:start]:
            del layer.forward


def shared_contexts(batch: TokenBatch) -> tuple[torch.Tensor, torch.Tensor] | None:
    """For a batch whose rows repeat contexts: the first row of each distinct context, and
    for every row the position of its context among those; None when all differ."""
    c = batch.context_length
    mask = batch.attention_mask[:, :c]
    keys = torch.cat([batch.input_ids[:, :c] * mask, mask], dim=1)
    distinct, index = torch.unique(keys, dim=0, return_inverse=True)
    if len(distinct) == len(keys):
        return None
    rows = torch.arange(len(keys), device=keys.device)
    first = torch.full((len(distinct),), len(keys), device=keys.device).scatter_reduce(0, index, rows, "amin")
    return first, index


__all__ = ["ACTOR", "CRITIC", "LoraSettings", "Policy", "position_ids_for", "top_layers"]
