"""BAD (token-level) and action-level GAE against hand-computed episodes and closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from fcenv.algos.advantages import action_gae, bad_advantages


def test_bad_single_action_by_hand():
    adv, ret = bad_advantages([[0.5, 0.2, 0.4]], [1.0], last_value=0.0, gamma=0.9, lam=0.8)
    # last token: 1 - 0.4 = 0.6; then (0.4-0.2) + 0.8*0.6 = 0.68; then (0.2-0.5) + 0.8*0.68
    np.testing.assert_allclose(adv[0], [0.244, 0.68, 0.6])
    np.testing.assert_allclose(ret[0], [0.744, 0.88, 1.0])


def test_bad_two_actions_with_bootstrap_by_hand():
    adv, ret = bad_advantages([[0.1, 0.3], [0.6]], [0.0, 2.0], last_value=0.5, gamma=0.5, lam=0.5)
    # action 1: 2 + 0.5*0.5 - 0.6 = 1.65
    # action 0, last token: 0 + 0.5*0.6 - 0.3 = 0 -> gae = 0.25*1.65 = 0.4125
    # action 0, token 0: (0.3 - 0.1) + 0.5*0.4125 = 0.40625
    np.testing.assert_allclose(adv[0], [0.40625, 0.4125])
    np.testing.assert_allclose(adv[1], [1.65])
    np.testing.assert_allclose(ret[0], [0.50625, 0.7125])
    np.testing.assert_allclose(ret[1], [2.25])


def test_bad_inside_an_action_has_no_discount_and_no_reward():
    # lam = 0: a non-final token's advantage is exactly V_{j+1} - V_j, whatever gamma is.
    values = [[0.3, 0.7, -0.2, 0.4]]
    adv, ret = bad_advantages(values, [5.0], last_value=0.0, gamma=0.3, lam=0.0)
    np.testing.assert_allclose(adv[0][:3], [0.4, -0.9, 0.6])
    np.testing.assert_allclose(ret[0][:3], [0.7, -0.2, 0.4])  # the next token's value
    np.testing.assert_allclose(adv[0][3], 5.0 - 0.4)


@pytest.mark.parametrize("seed", range(20))
def test_bad_lambda_one_closed_form(seed):
    # With lam = 1 every token of action t has return r_t + gamma * Ret_{t+1,0}.
    rng = np.random.default_rng(seed)
    n_actions = int(rng.integers(1, 6))
    values = [rng.normal(size=int(rng.integers(1, 9))) for _ in range(n_actions)]
    rewards = rng.normal(size=n_actions)
    last_value = float(rng.normal())
    gamma = float(rng.uniform(0.5, 1.0))
    adv, ret = bad_advantages(values, rewards, last_value, gamma, 1.0)
    target_next = last_value
    for t in range(n_actions - 1, -1, -1):
        target = rewards[t] + gamma * target_next
        np.testing.assert_allclose(ret[t], np.full(len(values[t]), target), atol=1e-12)
        np.testing.assert_allclose(adv[t], target - values[t], atol=1e-12)
        target_next = target


@pytest.mark.parametrize("seed", range(10))
def test_bad_lambda_one_gamma_one_is_undiscounted_sum(seed):
    rng = np.random.default_rng(100 + seed)
    values = [rng.normal(size=int(rng.integers(1, 6))) for _ in range(4)]
    rewards = rng.normal(size=4)
    _, ret = bad_advantages(values, rewards, 0.7, 1.0, 1.0)
    for t in range(4):
        np.testing.assert_allclose(ret[t], rewards[t:].sum() + 0.7, atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_bad_with_one_token_actions_is_action_gae(seed):
    rng = np.random.default_rng(200 + seed)
    values = rng.normal(size=6)
    rewards = rng.normal(size=6)
    gamma, lam = 0.95, 0.9
    adv_tok, ret_tok = bad_advantages([[v] for v in values], rewards, 0.3, gamma, lam)
    adv_act, ret_act = action_gae(values, rewards, 0.3, gamma, lam)
    np.testing.assert_allclose(np.concatenate(adv_tok), adv_act, atol=1e-12)
    np.testing.assert_allclose(np.concatenate(ret_tok), ret_act, atol=1e-12)


def test_bad_shapes_follow_the_input():
    ragged = [[0.0, 1.0, 2.0], [3.0], [4.0, 5.0]]
    adv, ret = bad_advantages(ragged, [1, 0, 1], 0.0, 0.99, 0.95)
    assert [len(a) for a in adv] == [3, 1, 2] and [len(r) for r in ret] == [3, 1, 2]
    square = np.arange(6, dtype=np.float32).reshape(3, 2)
    adv2, ret2 = bad_advantages(square, [1, 0, 1], 0.0, 0.99, 0.95)
    assert isinstance(adv2, np.ndarray) and adv2.shape == (3, 2) and ret2.shape == (3, 2)


def test_bad_rejects_mismatched_input():
    with pytest.raises(ValueError):
        bad_advantages([[0.0]], [1.0, 2.0], 0.0, 0.9, 0.9)
    with pytest.raises(ValueError):
        bad_advantages([[]], [1.0], 0.0, 0.9, 0.9)


def test_action_gae_by_hand():
    adv, ret = action_gae([1.0, 2.0, 3.0], [0.0, 1.0, 2.0], 0.0, gamma=0.9, lam=0.5)
    # t2: 2 - 3 = -1; t1: 1 + 2.7 - 2 + 0.45*(-1) = 1.25; t0: 1.8 - 1 + 0.45*1.25 = 1.3625
    np.testing.assert_allclose(adv, [1.3625, 1.25, -1.0])
    np.testing.assert_allclose(ret, [2.3625, 3.25, 2.0])


def test_action_gae_lambda_one_is_discounted_return():
    values = [1.0, 2.0, 3.0]
    _, ret = action_gae(values, [0.0, 1.0, 2.0], 0.5, gamma=0.9, lam=1.0)
    np.testing.assert_allclose(ret, [0.9 * 1 + 0.81 * 2 + 0.729 * 0.5, 1 + 0.9 * 2 + 0.81 * 0.5, 2 + 0.45])


def test_action_gae_lambda_zero_is_td_error():
    values = np.array([0.2, -0.4, 0.9])
    rewards = np.array([1.0, 0.5, -1.0])
    adv, _ = action_gae(values, rewards, 0.25, gamma=0.8, lam=0.0)
    np.testing.assert_allclose(adv, rewards + 0.8 * np.array([-0.4, 0.9, 0.25]) - values)


def test_action_gae_terminal_episode_uses_zero_bootstrap():
    adv, ret = action_gae([0.0], [1.0], 0.0, 0.99, 0.95)
    assert adv.tolist() == [1.0] and ret.tolist() == [1.0]
