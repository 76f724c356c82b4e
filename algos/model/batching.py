"""Pack (context, action) token lists into model inputs.

Layout of one row: ``[pad .. pad][context][action][pad .. pad]``. Contexts are left-padded
to a common length ``C`` so that action token ``j`` of every row sits at column ``C + j``;
the logits and the critic's hidden state at column ``C - 1 + j`` then belong to the state
before action token ``j``. Which positions are real is carried by masks, never by token
ids, so a pad id that is also a real token (or id 0) changes nothing.

A multi-step episode is one growing token sequence: each step's context is the previous step's
context, action and the observation after it. ``pack(..., chain=True)`` runs such rows as one
sequence (``Carriers``): a row whose context and action are the start of another row's is read
off that row's pass, so an episode of n steps costs one pass over its last step instead of n
passes over ever longer contexts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import torch


@dataclass
class Carriers:
    """The sequences a chained batch runs (each the context and action of its longest row,
    left-padded to a common length ``L``), and where each row's states are in them."""

    input_ids: torch.Tensor  # (P, L)
    attention_mask: torch.Tensor  # (P, L)
    position_ids: torch.Tensor  # (P, L)
    index: torch.Tensor  # (B, K + 1) flat index into (P * L): the state before each action token of each row, then after
    # The first columns every carrier shares (a group's episodes start from one prompt), run once:
    # the carriers are then right-padded, the shared columns first. 0: left-padded, nothing shared.
    shared_prefix: int = 0

    def gather(self, states: torch.Tensor) -> torch.Tensor:
        """(P, L, ...) states of the carriers -> (B, K + 1, ...) states of the rows."""
        flat = states.reshape(-1, *states.shape[2:])
        return flat[self.index.reshape(-1)].reshape(*self.index.shape, *states.shape[2:])


@dataclass
class TokenBatch:
    input_ids: torch.Tensor  # (B, C + K)
    attention_mask: torch.Tensor  # (B, C + K), 1 on real tokens
    position_ids: torch.Tensor  # (B, C + K), positions counted over real tokens only
    action_ids: torch.Tensor  # (B, K)
    action_mask: torch.Tensor  # (B, K) float, 1 on real action tokens
    context_length: int  # C
    # Rows run as the starts of longer ones (``pack(..., chain=True)``); the row layout above is
    # then not built (its tensors are the carriers', ``context_length`` 0).
    carriers: Carriers | None = None

    @property
    def action_width(self) -> int:
        return self.action_ids.shape[1]


def position_ids_for(attention_mask: torch.Tensor) -> torch.Tensor:
    """Left padding must not shift positions: count real tokens only."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def pack(
    contexts: Sequence[Sequence[int]],
    actions: Sequence[Sequence[int]] | None,
    pad_id: int,
    device: torch.device | str = "cpu",
    chain: bool = False,
) -> TokenBatch:
    """Build a ``TokenBatch``; ``actions=None`` (or empty actions) gives ``K = 0``. With
    ``chain``, rows that are the start of another row run inside it (``Carriers``), when any are."""
    if not contexts:
        raise ValueError("empty batch")
    if any(len(c) == 0 for c in contexts):
        raise ValueError("every context needs at least one token")
    actions = actions if actions is not None else [[] for _ in contexts]
    if len(actions) != len(contexts):
        raise ValueError(f"{len(contexts)} contexts but {len(actions)} actions")
    if chain:
        chained = _chained(contexts, actions, pad_id, device)
        if chained is not None:
            return chained
    width_c = max(len(c) for c in contexts)
    width_k = max((len(a) for a in actions), default=0)
    rows = len(contexts)
    input_ids = torch.full((rows, width_c + width_k), pad_id, dtype=torch.long)
    attention = torch.zeros((rows, width_c + width_k), dtype=torch.long)
    action_ids = torch.full((rows, width_k), pad_id, dtype=torch.long)
    action_mask = torch.zeros((rows, width_k), dtype=torch.float32)
    for row, (context, action) in enumerate(zip(contexts, actions)):
        start = width_c - len(context)
        input_ids[row, start:width_c] = torch.as_tensor(list(context), dtype=torch.long)
        attention[row, start:width_c] = 1
        if action:
            tokens = torch.as_tensor(list(action), dtype=torch.long)
            input_ids[row, width_c:width_c + len(action)] = tokens
            attention[row, width_c:width_c + len(action)] = 1
            action_ids[row, :len(action)] = tokens
            action_mask[row, :len(action)] = 1.0
    return TokenBatch(
        input_ids=input_ids.to(device),
        attention_mask=attention.to(device),
        position_ids=position_ids_for(attention).to(device),
        action_ids=action_ids.to(device),
        action_mask=action_mask.to(device),
        context_length=width_c,
    )


def chain_carriers(sequences: Sequence[Sequence[int]]) -> list[int]:
    """For each sequence, the index of the longest sequence it is the start of (itself when none
    is longer): the carriers a chained batch runs."""
    order = sorted(range(len(sequences)), key=lambda i: -len(sequences[i]))
    carrier = [0] * len(sequences)
    heads: list[int] = []
    for i in order:
        tokens = sequences[i]
        carrier[i] = next((h for h in heads if list(sequences[h][:len(tokens)]) == list(tokens)), i)
        if carrier[i] == i:
            heads.append(i)
    return carrier


# Fewer shared columns than this are run with the rest (a chat template's header, not a prompt).
MIN_SHARED_PREFIX = 32


def common_prefix(sequences: Sequence[Sequence[int]]) -> int:
    """How many first tokens all ``sequences`` share."""
    first, length = sequences[0], min(len(s) for s in sequences)
    for other in sequences[1:]:
        length = next((i for i in range(length) if other[i] != first[i]), length)
    return length


def _chained_chunks(contexts, ordered, length, token_budget: int) -> list[list[Sequence[int]]]:
    """Episodes (``ordered``, in prompt order) packed in order while a micro-batch's tokens as
    ``pack(chain=True)`` runs them stay within ``token_budget``: the start all its episodes share
    once (when ``MIN_SHARED_PREFIX`` or longer), then each episode's rest, padded to the longest."""
    def cost(count: int, longest: int, shared: int) -> int:
        shared = shared if count > 1 and shared >= MIN_SHARED_PREFIX else 0
        return shared + count * (longest - shared)

    chunks, current, longest, shared = [], [], 0, 0
    for group in ordered:
        first = contexts[group[0]]
        together = common_prefix([contexts[current[0][0]], first]) if current else len(first)
        new_longest, new_shared = max(longest, length(group)), min(shared, together) if current else together
        if current and cost(len(current) + 1, new_longest, new_shared) > token_budget:
            chunks.append(current)
            current, new_longest, new_shared = [], length(group), len(first)
        current.append(group)
        longest, shared = new_longest, new_shared
    chunks.append(current)
    return chunks


def _chained(contexts, actions, pad_id: int, device) -> TokenBatch | None:
    sequences = [list(c) + list(a) for c, a in zip(contexts, actions)]
    carrier = chain_carriers(sequences)
    heads = sorted(set(carrier))
    if len(heads) == len(sequences):
        return None
    width = max(len(sequences[h]) for h in heads)
    slot = {h: p for p, h in enumerate(heads)}
    shared = common_prefix([sequences[h] for h in heads]) if len(heads) > 1 else 0
    shared = shared if shared >= MIN_SHARED_PREFIX else 0
    input_ids = torch.full((len(heads), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(heads), width), dtype=torch.long)
    # Left-padded, or with a shared prefix right-padded (the prefix in the same columns of every carrier).
    offset = {h: 0 if shared else width - len(sequences[h]) for h in heads}
    for p, h in enumerate(heads):
        input_ids[p, offset[h]:offset[h] + len(sequences[h])] = torch.as_tensor(sequences[h], dtype=torch.long)
        attention[p, offset[h]:offset[h] + len(sequences[h])] = 1
    width_k = max((len(a) for a in actions), default=0)
    index = torch.zeros((len(contexts), width_k + 1), dtype=torch.long)
    action_ids = torch.full((len(contexts), width_k), pad_id, dtype=torch.long)
    action_mask = torch.zeros((len(contexts), width_k), dtype=torch.float32)
    for row, (context, action) in enumerate(zip(contexts, actions)):
        h = carrier[row]
        start = offset[h] + len(context) - 1  # the carrier's column of the state before the action
        last = offset[h] + len(context) + len(action) - 1
        columns = torch.clamp(torch.arange(start, start + width_k + 1), max=max(last, start))
        index[row] = slot[h] * width + columns
        if action:
            action_ids[row, :len(action)] = torch.as_tensor(list(action), dtype=torch.long)
            action_mask[row, :len(action)] = 1.0
    carriers = Carriers(input_ids.to(device), attention.to(device), position_ids_for(attention).to(device), index.to(device),
                        shared)
    return TokenBatch(input_ids=carriers.input_ids, attention_mask=carriers.attention_mask,
                      position_ids=carriers.position_ids, action_ids=action_ids.to(device),
                      action_mask=action_mask.to(device), context_length=0, carriers=carriers)


def pack_states(states: Sequence[torch.Tensor], context_lengths: Sequence[int], batch: TokenBatch) -> torch.Tensor:
    """Per-row hidden states (context then action tokens, hidden size) laid out in the
    columns of ``batch`` (B, C + K, hidden); padding columns hold zeros (they are masked)."""
    c = batch.context_length
    out = states[0].new_zeros((len(states), batch.input_ids.shape[1], states[0].shape[-1]))
    for row, (state, length) in enumerate(zip(states, context_lengths)):
        out[row, c - length:c - length + len(state)] = state
    return out.to(batch.input_ids.device)


def truncate_left(tokens: Sequence[int], limit: int) -> list[int]:
    """Keep the last ``limit`` tokens: the end of a chat (the question, the assistant
    header) matters most, and sampling and scoring must see the very same tokens."""
    tokens = list(tokens)
    return tokens[-limit:] if len(tokens) > limit else tokens


def length_sorted_chunks(contexts: Sequence[Sequence[int]], actions: Sequence[Sequence[int]],
                         groups: Sequence[Sequence[int]], token_budget: int, min_chunks: int = 1,
                         chained: bool = False) -> list[list[int]]:
    """Micro-batches of rows of similar length, so that padding costs little.

    ``groups`` are lists of row indices that must share a micro-batch (a ratio unit: an action,
    or a turn's actions). They are ordered by padded length, groups that start from one context
    kept together (the policy runs a shared context once), and packed in order
    while a micro-batch's size (distinct contexts x longest context + rows x longest action:
    the tokens the model runs) stays within ``token_budget`` (0: no limit). There are at least
    ``min_chunks`` when there are as many groups. Every row lands in exactly one micro-batch; a
    sum over micro-batches equals the sum over the whole batch, up to float rounding.
    ``chained``: each group is an episode whose rows run as one sequence (``pack(chain=True)``),
    the tokens its episodes' first contexts share counted once (``pack`` runs them once).
    """
    def width(group):
        if chained:
            first = len(contexts[group[0]])
            return first, max(len(contexts[i]) + len(actions[i]) for i in group) - first
        return max(len(contexts[i]) for i in group), max(len(actions[i]) for i in group)

    def length(group):
        return sum(width(group))

    if chained:
        # Episodes in prompt order: those whose first contexts start alike (a group's samples, tasks
        # on the same tools) sit side by side, and a micro-batch runs what they share once.
        ordered = sorted(groups, key=lambda g: (list(contexts[g[0]]), length(g)))
    else:
        families: dict[tuple[int, ...], list[Sequence[int]]] = defaultdict(list)
        for group in groups:
            families[tuple(contexts[group[0]])].append(group)
        for family in families.values():
            family.sort(key=length)
        ordered = [group for family in sorted(families.values(), key=lambda f: length(f[0])) for group in family]
    if token_budget <= 0:
        chunks = [ordered]
    elif chained:
        chunks = _chained_chunks(contexts, ordered, length, token_budget)
    else:
        chunks, current, seen, rows, wide_c, wide_k = [], [], set(), 0, 0, 0
        for group in ordered:
            shared = {tuple(contexts[i]) for i in group}
            c, k = width(group)
            new_seen, new_rows, new_c, new_k = seen | shared, rows + len(group), max(wide_c, c), max(wide_k, k)
            if current and len(new_seen) * new_c + new_rows * new_k > token_budget:
                chunks.append(current)
                current, new_seen, new_rows, new_c, new_k = [], shared, len(group), c, k
            current.append(group)
            seen, rows, wide_c, wide_k = new_seen, new_rows, new_c, new_k
        chunks.append(current)
    if len(chunks) < min_chunks <= len(ordered):
        count = len(ordered)
        chunks = [ordered[i * count // min_chunks:(i + 1) * count // min_chunks] for i in range(min_chunks)]
    return [[row for group in chunk for row in group] for chunk in chunks if chunk]
