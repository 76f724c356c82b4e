"""The warm-up's batches: an episode's steps drawn together and run as one sequence, and a batch
split into micro-batches (--micro_batch_tokens, so that long episodes fit in memory) gives the
batch's loss and gradient."""

from __future__ import annotations

import torch

from fcenv.algos.model.batching import pack
from fcenv.algos.model.warmup import _accumulated_nll, episode_groups, supervised_steps
from tests.algos.test_policy import PAD, make_policy


def episode_examples(seed: int) -> list[tuple[list[int], list[int]]]:
    """Two episodes of three steps (each context the previous context, answer and observation)
    and two single steps."""
    g = torch.Generator().manual_seed(seed)

    def tokens(n: int) -> list[int]:
        return torch.randint(3, 60, (n,), generator=g).tolist()

    examples = []
    for _ in range(2):
        context = tokens(9)
        for _ in range(3):
            answer = tokens(4)
            examples.append((context, answer))
            context = context + answer + tokens(3)
    examples += [(tokens(7), tokens(5)), (tokens(11), tokens(2))]
    return examples


def test_an_episodes_steps_are_one_group_and_micro_batches_give_the_batchs_gradient():
    examples = episode_examples(3)
    groups = episode_groups(examples)
    assert groups == [[0, 1, 2], [3, 4, 5], [6], [7]]
    policy = make_policy()
    outcomes = []
    for budget in (0, 24):  # one batch, then micro-batches of about 24 tokens (a group each)
        policy.zero_grad(set_to_none=True)
        loss = _accumulated_nll(lambda batch: policy.token_logprobs(batch)[0], examples, groups, PAD, "cpu", True,
                                budget)
        outcomes.append((float(loss), torch.cat([p.grad.flatten() for p in policy.actor_parameters()])))
    (whole, whole_grad), (split, split_grad) = outcomes
    assert abs(whole - split) < 1e-5
    assert (whole_grad - split_grad).norm() <= 1e-5 * whole_grad.norm()
    # And the steps run with it: the loss falls.
    losses = supervised_steps(lambda batch: policy.token_logprobs(batch)[0], policy.actor_parameters(), examples,
                              steps=8, batch_size=4, lr=1e-2, pad_id=PAD, device="cpu", seed=0, groups=groups,
                              chain=True, token_budget=24)
    assert losses[-1] < losses[0]


def family_episodes(seed: int, prompts: int = 2, per_prompt: int = 4) -> list[tuple[list[int], list[int]]]:
    """Episodes of two steps on ``prompts`` long prompts (a system prompt of tools), each with
    its own short request after the prompt."""
    g = torch.Generator().manual_seed(seed)

    def tokens(n: int) -> list[int]:
        return torch.randint(3, 60, (n,), generator=g).tolist()

    examples = []
    for prompt in [tokens(48) for _ in range(prompts)]:
        for _ in range(per_prompt):
            context = prompt + tokens(5)
            for _ in range(2):
                answer = tokens(3)
                examples.append((context, answer))
                context = context + answer + tokens(2)
    return examples


def test_episodes_on_one_prompt_are_drawn_together_and_run_it_once():
    """Multi-turn demonstrations are mostly their prompt (the tools' docs): the warm-up draws a
    batch's episodes from one prompt, and a micro-batch runs the prompt once, counted once
    against --micro_batch_tokens."""
    from fcenv.algos.model.batching import length_sorted_chunks

    examples = family_episodes(5)
    groups = episode_groups(examples)
    assert len(groups) == 8 and all(len(group) == 2 for group in groups)
    # Four episodes of one prompt: 53 + 4 x 12 tokens = 101 fit in 110; run one by one they are 4 x 65.
    rows = [i for group in groups for i in group]
    chunks = length_sorted_chunks([examples[i][0] for i in rows], [examples[i][1] for i in rows], groups, 110,
                                  chained=True)
    assert sorted(sorted(chunk) for chunk in chunks) == [list(range(0, 8)), list(range(8, 16))]
    assert pack([examples[i][0] for i in chunks[0]], [examples[i][1] for i in chunks[0]], PAD,
                chain=True).carriers.shared_prefix >= 48

    policy = make_policy()
    seen = []

    def logprobs(batch):
        seen.append((batch.carriers.input_ids.shape[0], batch.carriers.shared_prefix))
        return policy.token_logprobs(batch)[0]

    losses = supervised_steps(logprobs, policy.actor_parameters(), examples, steps=6, batch_size=4, lr=1e-2,
                              pad_id=PAD, device="cpu", seed=0, groups=groups, chain=True, token_budget=110)
    assert seen == [(4, seen[0][1])] * 6 and seen[0][1] >= 48  # each batch: one prompt's 4 episodes, one pass
    assert losses[-1] < losses[0]
