"""PPO loss terms, masks, buffers and the flawed demonstrations, on small hand-made tensors."""

from __future__ import annotations

import math
import random

import pytest
import torch

from fcenv.algos.model.batching import pack, truncate_left
from fcenv.algos.ppo.losses import (
    approx_kl,
    clipped_policy_loss,
    clipped_value_loss,
    huber,
    masked_mean,
    normalize,
    reference_kl,
)


def test_huber_is_symmetric_and_matches_its_definition():
    errors = torch.tensor([-30.0, -10.0, -3.0, 0.0, 3.0, 10.0, 30.0])
    loss = huber(errors, 10.0)
    torch.testing.assert_close(loss, huber(-errors, 10.0))
    torch.testing.assert_close(loss[2:5], 0.5 * errors[2:5] ** 2)
    assert loss[0] == pytest.approx(10.0 * (30.0 - 5.0))  # the prior code gave 0 for e < -delta
    errors.requires_grad_(True)
    huber(errors, 10.0).sum().backward()
    assert errors.grad[0] == -10.0 and errors.grad[-1] == 10.0


def test_clipped_policy_loss_is_pessimistic():
    old = torch.zeros(4)
    logp = torch.log(torch.tensor([1.5, 1.5, 0.5, 0.5]))
    adv = torch.tensor([1.0, -1.0, 1.0, -1.0])
    loss, clipped = clipped_policy_loss(logp, old, adv, clip=0.2)
    # ratio 1.5 with A>0 is capped at 1.2; with A<0 the unclipped (worse) value counts
    torch.testing.assert_close(loss, torch.tensor([-1.2, 1.5, -0.5, 0.8]))
    assert clipped.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_clipped_value_loss_takes_the_larger_error():
    old = torch.tensor([0.0, 0.0])
    new = torch.tensor([1.0, 0.1])
    returns = torch.tensor([0.0, 1.0])
    loss = clipped_value_loss(new, old, returns, clip=0.2)
    # row 0: unclipped error 1 (0.5), clipped prediction 0.2 (0.02) -> 0.5
    # row 1: unclipped 0.9 (0.405), clipped 0.1 (same) -> 0.405
    torch.testing.assert_close(loss, torch.tensor([0.5, 0.405]))
    torch.testing.assert_close(clipped_value_loss(new, old, returns, clip=0.0), 0.5 * (returns - new) ** 2)


def test_kl_estimators_are_zero_at_equality_and_positive_elsewhere():
    logp = torch.log(torch.tensor([0.2, 0.5, 0.9]))
    assert torch.all(approx_kl(logp, logp) == 0) and torch.all(reference_kl(logp, logp) == 0)
    other = torch.log(torch.tensor([0.4, 0.25, 0.6]))
    assert torch.all(approx_kl(logp, other) > 0) and torch.all(reference_kl(logp, other) > 0)
    # k3 is an unbiased estimate of KL(p || q) for samples from p: check on a 3-way categorical
    p = torch.tensor([0.2, 0.5, 0.3])
    q = torch.tensor([0.4, 0.4, 0.2])
    expected = float((p * (p / q).log()).sum())
    estimate = float((p * reference_kl(p.log(), q.log())).sum())
    assert estimate == pytest.approx(expected, rel=1e-5)


def test_masks_decide_what_counts_not_values():
    values = torch.tensor([[0.0, 2.0, 5.0], [4.0, 0.0, 9.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    assert masked_mean(values, mask) == pytest.approx((0 + 2 + 4 + 0 + 9) / 5)
    out = normalize(values, mask, mean=3.0, std=2.0)
    assert out[0, 2] == 0.0  # padding stays zero
    assert out[0, 0] == pytest.approx(-1.5)  # an exact 0.0 advantage is a real entry


def test_pack_places_actions_after_left_padded_contexts():
    batch = pack([[5, 6, 7], [8]], [[1], [2, 3]], pad_id=0)
    assert batch.context_length == 3 and batch.action_width == 2
    assert batch.input_ids.tolist() == [[5, 6, 7, 1, 0], [0, 0, 8, 2, 3]]
    assert batch.attention_mask.tolist() == [[1, 1, 1, 1, 0], [0, 0, 1, 1, 1]]
    assert batch.position_ids[1, 2:].tolist() == [0, 1, 2]
    assert batch.action_mask.tolist() == [[1.0, 0.0], [1.0, 1.0]]
    with pytest.raises(ValueError):
        pack([[]], [[1]], 0)


def test_truncate_left_keeps_the_end():
    assert truncate_left(list(range(10)), 4) == [6, 7, 8, 9]
    assert truncate_left([1, 2], 4) == [1, 2]


def test_answer_text_and_the_teachers_demonstrations():
    from collections import Counter

    from fcenv.algos.model.warmup import answer_text
    from fcenv.algos.tiny.teacher import Teacher, teacher_answer, value_pools
    from fcenv.tasks import Task

    truth = [{"get_weather": {"city": ["Paris"], "unit": ["fahrenheit", ""]}}]
    assert answer_text(truth) == "[get_weather(city='Paris', unit='fahrenheit')]"
    assert answer_text([{"f": {"a": ["", 1], "b": [2]}}]) == "[f(b=2)]"
    truths = [truth, [{"add": {"a": [1], "b": [2]}}], [{"get_weather": {"city": ["Rome"], "unit": ["celsius"]}}]]
    pools = value_pools([Task(id=f"simple_{i}", question=[], functions=[], ground_truth=t) for i, t in enumerate(truths)])
    rng = random.Random(0)
    teacher = Teacher(habit_rate=0.6, slip_rate=0.3)
    right = "[get_weather(city='Paris', unit='fahrenheit')]"
    asked = Counter(teacher_answer("What is the weather in Paris?", truth, pools, rng, teacher) for _ in range(2000))
    told = Counter(teacher_answer("Weather for Paris, please.", truth, pools, rng, teacher) for _ in range(2000))
    # Questions get the chatty habit more often than not; commands never do.
    assert sum(n for s, n in asked.items() if s.startswith("Sure! ")) / 2000 == pytest.approx(0.6, abs=0.04)
    assert not any(s.startswith("Sure! ") for s in told)
    assert asked.most_common(1)[0][0] == "Sure! " + right and told.most_common(1)[0][0] == right
    # Slips drop an argument or call the wrong function; values are never made up.
    assert any(s.startswith("[add(") for s in told) and not any("Rome" in s for s in told)
    assert any(s in told for s in ("[get_weather(unit='fahrenheit')]", "[get_weather(city='Paris')]"))
    assert told[right] / 2000 == pytest.approx(0.7, abs=0.04)


def test_explained_variance_from_sums():
    from fcenv.algos.training.metrics import explained_variance

    def sums(targets, predictions):
        t, r = torch.tensor(targets), torch.tensor(targets) - torch.tensor(predictions)
        return {"ev/n": float(len(targets)), "ev/t": float(t.sum()), "ev/t2": float((t ** 2).sum()),
                "ev/r": float(r.sum()), "ev/r2": float((r ** 2).sum())}

    assert explained_variance(sums([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])) == pytest.approx(1.0)
    assert explained_variance(sums([1.0, 2.0, 3.0], [2.0, 2.0, 2.0])) == pytest.approx(0.0)
    assert math.isnan(explained_variance(sums([1.0, 1.0], [0.0, 0.0])))


def test_multi_turn_facets_are_logged_per_level():
    """Step, turn and episode facets never share a metric: on a two-turn task played right,
    every level's facets are all 1 (a mix would hide which level failed)."""
    import gymnasium as gym

    import fcenv
    from fcenv.algos.model.warmup import ground_truth_steps
    from fcenv.algos.rollout.play import _summary
    from fcenv.algos.rollout.records import ActionRecord, EpisodeRecord, Rollout
    from fcenv.algos.tiny.build import MULTI_TURN_EVAL
    from fcenv.algos.training.metrics import means, rollout_stats

    env = gym.make(fcenv.ENV_ID, dataset_path=str(MULTI_TURN_EVAL), reward="shaped")
    task_index = next(i for i, t in enumerate(env.unwrapped.tasks) if len(t.question) == 2)
    _, info = env.reset(options={"index": task_index})
    actions, episode = [], EpisodeRecord(task_index=task_index, task_id=info["id"])
    for step in ground_truth_steps(env.unwrapped.tasks[task_index]):
        _, reward, terminated, truncated, info = env.step(step.text)
        episode.action_indices.append(len(actions))
        actions.append(ActionRecord(thread=0, context=[1], action=[2], sample_logprobs=[0.0], text=step.text,
                                    reward=reward, info=_summary(info)))
    assert terminated and info["valid"]
    stats = means(rollout_stats(Rollout(actions, [episode], 0.0), "rollout"))
    levels = {key.split("/")[1].split("facet_")[0] for key in stats if "facet_" in key}
    assert levels == {"", "turn_", "step_"}
    assert stats["rollout/accuracy"] == 1.0
    for key in ("facet_state", "turn_facet_state", "turn_facet_response", "step_facet_step_executed",
                "step_facet_step_in_ground_truth"):
        assert stats[f"rollout/{key}"] == 1.0, key
    assert not any(k.startswith("rollout/facet_step") for k in stats)
