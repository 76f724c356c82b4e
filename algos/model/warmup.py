"""Supervised warm-up on ground truth: the answer text of a task and a few SFT steps.

Used twice: to pretrain the embedded tiny model (all its weights) and, on request, to warm
up the actor adapter of any model before RL. The loss is the mean negative log-likelihood
of the answer tokens (the end-of-turn token included) given the prompt the env renders.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from fcenv.algos.model.batching import TokenBatch, common_prefix, pack
from fcenv.algos.progress import progress_bar
from fcenv.chat_mode import ChatMode

LogprobFn = Callable[[TokenBatch], torch.Tensor]
Example = tuple[list[int], list[int]]  # (context tokens, answer tokens)


def _value_text(value: Any) -> str:
    return repr(value)


def call_list_text(calls: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """``[f(a=1, b='x'), g()]``: BFCL's prompting format for a list of calls."""
    parts = [f"{name}({', '.join(f'{key}={_value_text(value)}' for key, value in args.items())})"
             for name, args in calls]
    return "[" + ", ".join(parts) + "]"


def answer_text(ground_truth: list[dict[str, dict[str, list[Any]]]]) -> str:
    """A single-turn BFCL possible answer as the call list a model should write: the first
    acceptable value of each parameter, parameters whose first choice is "" left out."""
    calls = []
    for call in ground_truth:
        for name, params in call.items():
            calls.append((name, {key: choices[0] for key, choices in params.items() if choices and choices[0] != ""}))
    return call_list_text(calls)


def plain_logprobs(model: torch.nn.Module, batch: TokenBatch) -> torch.Tensor:
    """Answer-token log-probs of a plain causal LM (no adapters, temperature 1)."""
    if batch.carriers is not None:  # rows run inside longer ones: the output layer on the rows' states only
        from fcenv.algos.model.policy import run_carriers

        hidden = batch.carriers.gather(run_carriers(model.get_decoder(), batch.carriers))[:, :batch.action_width]
        logp = torch.log_softmax(model.get_output_embeddings()(hidden).float(), -1)
        return logp.gather(-1, batch.action_ids.unsqueeze(-1)).squeeze(-1) * batch.action_mask
    # Logits only where answer tokens are predicted (the last K + 1 positions), not over the
    # whole context.
    out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                position_ids=batch.position_ids, use_cache=False, logits_to_keep=batch.action_width + 1)
    logits = out.logits[:, :batch.action_width].float()
    logp = torch.log_softmax(logits, -1).gather(-1, batch.action_ids.unsqueeze(-1)).squeeze(-1)
    return logp * batch.action_mask


def shared_context_logprobs(model: torch.nn.Module, batch: TokenBatch) -> torch.Tensor:
    """``plain_logprobs``, with rows that share a context running it once (its KV cache
    repeated for their rows, the gradients flowing back into the one pass): several
    demonstrations of one long prompt cost about one prompt."""
    from fcenv.algos.model.policy import run_once_per_context, shared_contexts

    shared = None if batch.carriers is not None else shared_contexts(batch)
    if shared is None:
        return plain_logprobs(model, batch)
    c = batch.context_length
    prefix = run_once_per_context(model, batch, shared, logits_to_keep=1)
    rest = model(input_ids=batch.input_ids[:, c:], attention_mask=batch.attention_mask,
                 position_ids=batch.position_ids[:, c:], past_key_values=prefix.past_key_values, use_cache=True)
    # The logits before action token j: the context's last for j = 0, then the action's own.
    logits = torch.cat([prefix.logits[shared[1]], rest.logits[:, :batch.action_width - 1]], dim=1).float()
    logp = torch.log_softmax(logits, -1).gather(-1, batch.action_ids.unsqueeze(-1)).squeeze(-1)
    return logp * batch.action_mask


def answer_nll(logprob_fn: LogprobFn, examples: Sequence[Example], pad_id: int,
               device: torch.device | str, chain: bool = False) -> torch.Tensor:
    """The mean negative log-likelihood of ``examples``' answer tokens (one packed batch): the
    loss of the warm-up and of ``--sft_coef``'s demonstration step. ``chain``: an episode's
    steps run as one sequence (``pack(chain=True)``)."""
    batch = pack([context for context, _ in examples], [answer for _, answer in examples], pad_id, device, chain=chain)
    return -(logprob_fn(batch).sum() / batch.action_mask.sum().clamp(min=1.0))


def episode_groups(examples: Sequence[Example]) -> list[list[int]]:
    """Runs of consecutive examples that are one episode's steps (each context the previous
    example's context and answer, then what followed): the warm-up draws them whole and runs
    each as one sequence."""
    groups: list[list[int]] = []
    for index, (context, _) in enumerate(examples):
        if groups:
            before, answer = examples[groups[-1][-1]]
            head = list(before) + list(answer)
            if len(context) > len(head) and list(context[:len(head)]) == head:
                groups[-1].append(index)
                continue
        groups.append([index])
    return groups


def supervised_steps(
    logprob_fn: LogprobFn,
    params: Sequence[torch.nn.Parameter],
    examples: Sequence[Example],
    *,
    steps: int,
    batch_size: int,
    lr: float,
    pad_id: int,
    device: torch.device | str,
    seed: int,
    max_grad_norm: float = 1.0,
    on_step: Callable[[int, float], None] | None = None,
    groups: Sequence[Sequence[int]] | None = None,
    chain: bool = False,
    token_budget: int = 0,
    progress: str = "",
) -> list[float]:
    """Run ``steps`` AdamW steps of answer-token NLL; returns the loss of each step.

    The learning rate warms up linearly over the first tenth of the steps, then decays
    linearly to a tenth of ``lr``: a short run still ends on a small step size. With
    ``groups`` (lists of example indices, e.g. the demonstrations of one prompt) a batch is
    ``batch_size`` whole groups instead of ``batch_size`` examples (``episode_groups``: an
    episode's steps). ``chain``: rows that are an episode's steps run as one sequence.
    ``token_budget``: a batch runs in micro-batches of at most about that many tokens (whole
    groups; 0: one), their gradients summed, so that long episodes fit in memory; the loss is
    the batch's mean either way. ``progress``: the description of a progress bar over the steps
    (none when empty).
    """
    if steps <= 0 or not examples:
        return []
    bar = progress_bar(steps, progress)
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    warm = max(1, steps // 10)

    def scale(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return 1.0 - 0.9 * (step - warm) / max(1, steps - warm)

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, scale)
    order = random.Random(seed)
    pool: list[int] = []
    losses = []
    # Random batches. Batches of similar lengths cut the padding (a quarter of the compute)
    # but were measured to cost the tiny model much of its copying skill (held-out greedy
    # accuracy after clean supervised training 0.76 instead of 0.93).
    units = [[i] for i in range(len(examples))] if groups is None else [list(g) for g in groups]
    # Multi-step episodes on one prompt (tasks on the same tools) are drawn together: the prompt
    # they share, most of a multi-turn episode's tokens, then runs once for the batch (``pack``).
    # Single answers keep the random draw.
    episodes = {k for k, unit in enumerate(units) if chain and len(unit) > 1}
    ordered = sorted(episodes)
    families = [[ordered[i] for i in family] for family in prompt_families([examples[units[k][0]][0] for k in ordered])]
    families += [[k] for k in range(len(units)) if k not in episodes]
    blocks = any(len(family) > 1 for family in families)
    waiting: list[list[int]] = []
    for step in range(steps):
        if blocks:
            waiting = waiting or drawn_in_blocks(families, batch_size, order)
            drawn = waiting.pop()
        else:
            if len(pool) < batch_size:
                fresh = list(range(len(units)))
                order.shuffle(fresh)
                pool += fresh
            drawn, pool = pool[:batch_size], pool[batch_size:]
        optimizer.zero_grad(set_to_none=True)
        loss = _accumulated_nll(logprob_fn, examples, [units[unit] for unit in drawn], pad_id, device, chain,
                                token_budget)
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
        bar.update(1)
        bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
        if on_step is not None:
            on_step(step, losses[-1])
    bar.close()
    return losses



def prompt_families(first_contexts: Sequence[Sequence[int]]) -> list[list[int]]:
    """Indices of ``first_contexts`` in families of contexts that start alike: in token order,
    a context joins the one before it when they share at least half of the shorter (a prompt of
    the same tools; a chat template's header alone is far less)."""
    order = sorted(range(len(first_contexts)), key=lambda i: list(first_contexts[i]))
    families: list[list[int]] = []
    for i in order:
        if families:
            before = first_contexts[families[-1][-1]]
            shorter = min(len(before), len(first_contexts[i]))
            if 2 * common_prefix([before, first_contexts[i]]) >= shorter:
                families[-1].append(i)
                continue
        families.append([i])
    return families


def drawn_in_blocks(families: Sequence[Sequence[int]], size: int, rng: random.Random) -> list[list[int]]:
    """Every index of ``families`` once, in blocks of ``size`` from one family where a family has
    that many left (each family shuffled), the rest in blocks of mixed families, blocks shuffled."""
    blocks, rest = [], []
    for family in families:
        members = rng.sample(list(family), len(family))
        whole = len(members) - len(members) % size
        blocks += [members[k:k + size] for k in range(0, whole, size)]
        rest += members[whole:]
    rng.shuffle(rest)
    blocks += [rest[k:k + size] for k in range(0, len(rest), size)]
    rng.shuffle(blocks)
    return blocks


def _accumulated_nll(logprob_fn: LogprobFn, examples: Sequence[Example], drawn: list[list[int]], pad_id: int,
                     device, chain: bool, token_budget: int) -> torch.Tensor:
    """The mean answer-token NLL of the ``drawn`` groups, its gradient accumulated over
    micro-batches of whole groups (``token_budget``: 0 for one); returns the loss, detached."""
    if token_budget <= 0:
        loss = answer_nll(logprob_fn, [examples[i] for unit in drawn for i in unit], pad_id, device, chain=chain)
        loss.backward()
        return loss.detach()
    from fcenv.algos.model.batching import length_sorted_chunks

    rows = [i for unit in drawn for i in unit]
    local = {row: k for k, row in enumerate(rows)}
    chunks = length_sorted_chunks([examples[i][0] for i in rows], [examples[i][1] for i in rows],
                                  [[local[i] for i in unit] for unit in drawn], token_budget, chained=chain)
    tokens = sum(len(examples[i][1]) for i in rows)
    total = torch.zeros(())
    for chunk in chunks:
        part = [examples[rows[k]] for k in chunk]
        nll = answer_nll(logprob_fn, part, pad_id, device, chain=chain) * (sum(len(a) for _, a in part) / tokens)
        nll.backward()
        total += nll.detach().cpu()
    return total


def value_regression_steps(
    value_fn: Callable[[TokenBatch], torch.Tensor],
    params: Sequence[torch.nn.Parameter],
    examples: Sequence[tuple[list[int], float]],
    *,
    steps: int,
    batch_size: int,
    lr: float,
    pad_id: int,
    device: torch.device | str,
    seed: int,
    max_grad_norm: float = 1.0,
    progress: str = "",
) -> list[float]:
    """``steps`` AdamW steps of squared error between ``value_fn`` (the critic's value of each
    context, (B,)) and the examples' targets (e.g. Monte Carlo values of prefixes); returns
    each step's loss. ``progress``: as ``supervised_steps``'."""
    if steps <= 0 or not examples:
        return []
    bar = progress_bar(steps, progress)
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    order = random.Random(seed)
    losses = []
    for _ in range(steps):
        chosen = order.sample(range(len(examples)), min(batch_size, len(examples)))
        batch = pack([examples[i][0] for i in chosen], None, pad_id, device)
        target = torch.tensor([examples[i][1] for i in chosen], dtype=torch.float32, device=device)
        loss = 0.5 * (value_fn(batch) - target).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
        optimizer.step()
        losses.append(float(loss.detach()))
        bar.update(1)
        bar.set_postfix(loss=f"{losses[-1]:.4f}", refresh=False)
    bar.close()
    return losses


END_OF_TURN = "Done."  # what a demonstration writes to end a multi-turn turn (any text without calls does)
# What a demonstration answers when no function fits the request (irrelevance: any text without
# a call is right). Without these, a warm-up that teaches the call format teaches calling always.
NO_CALL = "None of the available functions can help with this request."


@dataclass(frozen=True)
class Step:
    """One step of a task's ground truth: its text, and where it is (turn, index in the turn,
    calls in the turn). A multi-turn turn is one call per step, then END_OF_TURN."""

    text: str
    turn: int = 0
    index: int = 0
    calls_in_turn: int = 1

    @property
    def ends_turn(self) -> bool:
        return self.index == self.calls_in_turn


def ground_truth_steps(task) -> list[Step]:
    """The steps that answer a task: its answer as one call list (single-turn), a sentence
    without a call (irrelevance), or each turn's calls one per step, then a step that ends the
    turn (multi-turn)."""
    if task.kind == "ast":
        return [Step(answer_text(task.ground_truth))]
    if task.kind == "irrelevance":
        return [Step(NO_CALL)]
    steps = []
    for turn, calls in enumerate(task.ground_truth):
        steps += [Step(f"[{call}]", turn, k, len(calls)) for k, call in enumerate(calls)]
        steps.append(Step(END_OF_TURN, turn, len(calls), len(calls)))
    return steps


def ground_truth_examples(dataset_path, tokenizer, chat_mode: ChatMode, context_limit: int,
                          indices: Sequence[int] | None = None,
                          answers: Callable[[Any, Step], list[str]] | None = None,
                          web_search: Any = None, chained: bool = True) -> list[Example]:
    """(context tokens, answer tokens + end token) for every step of the ground truth of the
    single-turn AST, irrelevance and multi-turn tasks of a file, each context exactly as the env renders
    it in ``chat_mode`` (multi-turn: after the ground truth's earlier steps ran) and cut from the
    left as in rollouts. ``answers(task, step)`` gives the texts to learn at a step (default: the
    ground truth's). In FC mode the answers are written in the family's format. A multi-turn
    task's steps are one growing token sequence, each context built from the one before as a
    rollout builds it (``TextCodec.follow``); with ``chained=False`` each context is encoded on its
    own (how the embedded tiny models were built, kept so they build as they did)."""
    import gymnasium as gym

    import fcenv
    from fcenv.algos.rollout.codec import TextCodec, chat_of

    # Agentic entries have no ground-truth steps, but a file of web-search entries needs its source to load.
    env = gym.make(fcenv.ENV_ID, dataset_path=str(dataset_path), web_search=web_search, **chat_mode.env_options())
    codec = TextCodec(tokenizer, context_limit, render=env.unwrapped.renderer)
    written = written_in(env.unwrapped.settings.tool_format) if chat_mode.is_fc else (lambda text: text)
    tasks = env.unwrapped.tasks
    examples = []
    for index in indices if indices is not None else range(len(tasks)):
        task = tasks[index]
        # Irrelevance is answered without a call; the others need their ground truth.
        answerable = task.kind == "irrelevance" or (task.kind in ("ast", "multi_turn") and task.ground_truth)
        if not answerable:
            continue
        observation, info = env.reset(options={"index": int(index)})
        context, cut = codec.encode_counted(observation, chat_of(info), task.id) if chained else (codec.encode(observation), False)
        for step in ground_truth_steps(task):
            for text in answers(task, step) if answers is not None else [step.text]:
                answer = tokenizer(written(text), add_special_tokens=False).input_ids
                examples.append((context, answer + [tokenizer.eos_token_id]))
            played = tokenizer(written(step.text), add_special_tokens=False).input_ids + [tokenizer.eos_token_id]
            following, _, terminated, truncated, info = env.step(written(step.text))
            if terminated or truncated:
                break
            # The next step's context as a rollout builds it: this one's tokens, the answer's, then
            # what the chat shows after it, so the steps of an episode are one growing sequence.
            if chained:
                context, cut = codec.follow(context, cut, played, observation, following, chat_of(info), task.id)
            else:
                context, cut = codec.encode(following), False
            observation = following
    env.close()
    return examples


def written_in(tool_format) -> Callable[[str], str]:
    """Rewrites a prompting-format answer (``[f(a=1)]``) in a native tool-call format; text
    without calls (the end of a turn) stays as it is."""
    from fcenv.handlers import DecodeError, decode

    def written(text: str) -> str:
        try:
            calls = decode(text, "python")
        except DecodeError:
            return text
        return tool_format.write(calls) if calls else text

    return written
