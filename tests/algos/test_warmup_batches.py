"""The warm-up's batches: an episode's steps drawn together and run as one sequence, and a batch
split into micro-batches (--micro_batch_tokens, so that long episodes fit in memory) gives the
batch's loss and gradient."""

from __future__ import annotations

import torch

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
