"""The policy: shared base weights, reference = adapters off, sampling equals scoring."""

from __future__ import annotations

import copy

import pytest
import torch

pytest.importorskip("peft")
from transformers import Qwen2Config, Qwen2ForCausalLM

from fcenv.algos.model.batching import pack
from fcenv.algos.model.policy import ACTOR, CRITIC, LoraSettings, Policy
from fcenv.algos.rollout.hf import HFEngine

VOCAB, STOP, PAD = 64, 1, 2


def tiny_base(seed: int = 0) -> Qwen2ForCausalLM:
    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         tie_word_embeddings=True, eos_token_id=STOP, pad_token_id=PAD)
    return Qwen2ForCausalLM(config).eval()


def sampled(policy: Policy, contexts, max_new_tokens: int, **options) -> tuple[list[list[int]], list[list[float]]]:
    """The actions and their sampling log-probs of the hf engine on ``policy``."""
    samples = HFEngine(policy).sample(contexts, max_new_tokens, **options)
    return samples.actions, samples.logprobs


def make_policy(base=None, temperature: float = 1.0, seed: int = 0) -> Policy:
    torch.manual_seed(seed)
    policy = Policy(base if base is not None else tiny_base(), pad_id=PAD, stop_ids=[STOP],
                    actor_lora=LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]),
                    temperature=temperature)
    # PEFT starts LoRA B at zero (the adapter is a no-op); give both adapters real weights.
    with torch.no_grad():
        for p in policy.actor_parameters() + policy.critic_parameters():
            p.add_(0.3 * torch.randn_like(p))
    return policy


def contexts(seed: int, rows: int = 5) -> list[list[int]]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(3, VOCAB, (int(torch.randint(3, 12, (1,), generator=g)),), generator=g).tolist()
            for _ in range(rows)]


def test_actor_critic_and_reference_share_one_copy_of_the_base_weights():
    base = tiny_base()
    original = {n: p.data_ptr() for n, p in base.named_parameters()}
    policy = make_policy(base)
    layer = policy.base.model.layers[0].self_attn.q_proj.base_layer
    assert layer.weight.data_ptr() == original["model.layers.0.self_attn.q_proj.weight"]
    seen: dict[str, set[int]] = {}

    def record(role):
        def hook(module, args, output):
            seen.setdefault(role, set()).add(module.weight.data_ptr())
        return hook

    batch = pack(contexts(1), [[5, 6, STOP]] * 5, PAD)
    for role, run in [("actor", lambda: policy.token_logprobs(batch)),
                      ("critic", lambda: policy.token_values(batch)),
                      ("reference", lambda: policy.reference_logprobs(batch))]:
        handle = layer.register_forward_hook(record(role))
        with torch.no_grad():
            run()
        handle.remove()
    assert seen["actor"] == seen["critic"] == seen["reference"] == {layer.weight.data_ptr()}
    # Every base tensor is stored once: no copy for the critic or the reference.
    base_ptrs = [p.data_ptr() for p in policy.base_parameters()]
    assert len(base_ptrs) == len(set(base_ptrs)) == len(original)
    assert set(base_ptrs) == set(original.values())
    extra = sum(p.numel() for p in policy.actor_parameters() + policy.critic_parameters())
    assert extra < 0.2 * sum(p.numel() for p in policy.base_parameters())


def test_base_is_frozen_and_adapters_are_trainable():
    policy = make_policy()
    assert all(not p.requires_grad for p in policy.base_parameters())
    assert all(p.requires_grad for p in policy.actor_parameters() + policy.critic_parameters())
    actor_ids = {id(p) for p in policy.actor_parameters()}
    critic_ids = {id(p) for p in policy.critic_parameters()}
    assert actor_ids and critic_ids and not actor_ids & critic_ids
    assert {id(p) for p in policy.value_head.parameters()} <= critic_ids


def test_reference_is_the_base_model_with_adapters_off():
    base = tiny_base()
    plain = copy.deepcopy(base)
    policy = make_policy(base)
    batch = pack(contexts(2), [[7, 8, 9, STOP], [4], [5, 5], [6, STOP], [9, 9, 9]], PAD)
    with torch.no_grad():
        ref = policy.reference_logprobs(batch)
        actor = policy.token_logprobs(batch)[0]
        out = plain(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                    position_ids=batch.position_ids).logits
    start = batch.context_length - 1
    expected = torch.log_softmax(out[:, start:start + batch.action_width], -1)
    expected = expected.gather(-1, batch.action_ids.unsqueeze(-1)).squeeze(-1) * batch.action_mask
    torch.testing.assert_close(ref, expected, atol=1e-5, rtol=1e-5)
    assert (actor - ref).abs().max() > 1e-3  # the actor adapter does change the distribution


def test_sampling_log_probs_equal_rescored_log_probs():
    for temperature in (1.0, 0.7):
        policy = make_policy(temperature=temperature)
        ctx = contexts(3, rows=6)
        actions, sample_logps = sampled(policy, ctx, 10, generator=torch.Generator().manual_seed(4))
        batch = pack(ctx, actions, PAD)
        with torch.no_grad():
            scored = policy.token_logprobs(batch)[0]
        for row, (action, logps) in enumerate(zip(actions, sample_logps)):
            assert len(action) == len(logps) >= 1
            torch.testing.assert_close(scored[row, :len(action)], torch.tensor(logps), atol=1e-4, rtol=1e-4)


def test_sampling_with_the_actor_folded_in_leaves_the_base_and_the_adapters_as_they_were():
    """Sampling runs with the actor's LoRA folded into copies of the weights it adapts: the
    base's own weights come back untouched (the same tensors, the same values), every role
    scores as before, and the folded pass draws what the adapter pass draws."""
    import fcenv.algos.rollout.hf as hf_module

    policy = make_policy()
    ctx = contexts(14, rows=4)
    base = {name: (p, p.detach().clone()) for name, p in policy.model.named_parameters() if "lora_" not in name}
    batch = pack(ctx, [[4, 5, 6]] * 4, PAD)
    with torch.no_grad():
        before = [policy.token_logprobs(batch)[0], policy.reference_logprobs(batch), policy.token_values(batch)]
    folded = HFEngine(policy).sample(ctx, 8, greedy=True)
    for name, (p, value) in base.items():
        assert dict(policy.model.named_parameters())[name] is p and torch.equal(p, value), name
    with torch.no_grad():
        after = [policy.token_logprobs(batch)[0], policy.reference_logprobs(batch), policy.token_values(batch)]
    for a, b in zip(before, after):
        assert torch.equal(a, b)
    assert all(p.requires_grad for p in policy.actor_parameters() + policy.critic_parameters())
    original = hf_module._folded
    hf_module._folded = lambda model, adapter: policy._adapter_context(adapter)
    try:
        unfolded = HFEngine(policy).sample(ctx, 8, greedy=True)
    finally:
        hf_module._folded = original
    assert folded.actions == unfolded.actions
    for x, y in zip(folded.logprobs, unfolded.logprobs):
        torch.testing.assert_close(torch.tensor(x), torch.tensor(y), atol=1e-5, rtol=1e-5)


def test_a_prompt_repeated_in_the_batch_samples_as_if_alone():
    """Group algorithms sample G episodes of one prompt: it is prefilled once and its cache
    shared, and every row's answer and log-probs are what it gets with no duplicate beside it."""
    policy = make_policy()
    a, b, c = contexts(8, rows=3)
    longest = max((a, b, c), key=len)
    alone, alone_logps = sampled(policy, [a, b, c, longest + [5]], 8, greedy=True)
    grouped, grouped_logps = sampled(policy, [a, a, b, b, c, longest + [5], a], 8, greedy=True)
    assert grouped == [alone[0], alone[0], alone[1], alone[1], alone[2], alone[3], alone[0]]
    # The same values up to float rounding: rows batched differently may take other kernel paths
    # (seen on AVX-512 CPUs, where equality failed in the 7th digit).
    for row in (0, 1, 6):
        torch.testing.assert_close(torch.tensor(grouped_logps[row]), torch.tensor(alone_logps[0]), atol=1e-6, rtol=1e-6)
    # sampled: every copy of a prompt draws its own answer from the same distribution
    drawn, logps = sampled(policy, [a] * 6, 8, generator=torch.Generator().manual_seed(3))
    batch = pack([a] * 6, drawn, PAD)
    with torch.no_grad():
        scored = policy.token_logprobs(batch)[0]
    for row, (action, lp) in enumerate(zip(drawn, logps)):
        torch.testing.assert_close(scored[row, :len(action)], torch.tensor(lp), atol=1e-4, rtol=1e-4)
    assert len({tuple(x) for x in drawn}) > 1


def test_samples_follow_the_tempered_distribution_exactly():
    # Pure temperature sampling: empirical first-token frequencies match softmax(logits / T).
    policy = make_policy(temperature=0.8)
    ctx = [[5, 6, 7]] * 4000
    actions, _ = sampled(policy, ctx, 1, generator=torch.Generator().manual_seed(0))
    counts = torch.bincount(torch.tensor([a[0] for a in actions]), minlength=VOCAB).float() / len(ctx)
    with torch.no_grad():
        batch = pack([[5, 6, 7]], [[0]], PAD)
        hidden = policy._hidden(batch, ACTOR)[:, :1]
        probs = policy._log_softmax(hidden).exp()[0, 0]
    assert (counts - probs).abs().max() < 0.03


def test_each_token_is_drawn_with_its_probability_and_never_one_of_probability_zero():
    from fcenv.algos.rollout.hf import _draw

    probs = torch.tensor([0.0, 0.5, 1e-3, 0.0, 0.25, 0.249, 0.0])
    draws = 200_000
    log_probs = probs.log().expand(draws, -1)  # log 0 = -inf: probability exactly 0
    tokens = _draw(log_probs, torch.Generator().manual_seed(0))
    counts = torch.bincount(tokens, minlength=len(probs)).double()
    assert counts[probs == 0].sum() == 0
    expected = probs.double() * draws
    spread = (expected * (1 - probs.double())).sqrt()
    assert ((counts - expected).abs() <= 5 * spread + 1).all(), (counts, expected)


def test_stop_token_ends_and_stays_in_the_action():
    policy = make_policy()
    with torch.no_grad():  # make the stop token overwhelmingly likely after two tokens
        policy.base.lm_head.weight[STOP] *= 0
    actions, _ = sampled(policy, contexts(5), 6, generator=torch.Generator().manual_seed(1))
    for action in actions:
        assert STOP not in action[:-1]
        assert len(action) == 6 or action[-1] == STOP


def test_left_padding_does_not_change_scores():
    policy = make_policy()
    ctx = contexts(6, rows=4)
    acts = [[3, 4, STOP], [5], [6, 7, 8, 9], [STOP]]
    with torch.no_grad():
        together = policy.token_logprobs(pack(ctx, acts, PAD))[0]
        values = policy.token_values(pack(ctx, acts, PAD))
        for row in range(4):
            alone = policy.token_logprobs(pack([ctx[row]], [acts[row]], PAD))[0]
            alone_values = policy.token_values(pack([ctx[row]], [acts[row]], PAD))
            k = len(acts[row])
            torch.testing.assert_close(together[row, :k], alone[0, :k], atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(values[row, :k + 1], alone_values[0, :k + 1], atol=1e-5, rtol=1e-5)


def test_pad_id_is_irrelevant_even_when_it_is_a_real_token():
    base = tiny_base()
    policy_a = make_policy(copy.deepcopy(base))
    policy_b = make_policy(copy.deepcopy(base))
    policy_b.pad_id = 0  # a token id that also occurs in actions below
    ctx = contexts(7, rows=3)
    acts = [[0, 0, STOP], [4, 0], [0]]
    with torch.no_grad():
        a = policy_a.token_logprobs(pack(ctx, acts, policy_a.pad_id))[0]
        b = policy_b.token_logprobs(pack(ctx, acts, policy_b.pad_id))[0]
    torch.testing.assert_close(a, b)
    assert (a[0, :3] != 0).all()  # real tokens with id 0 are scored, not masked


def test_values_column_zero_is_the_context_value():
    policy = make_policy()
    ctx = contexts(8, rows=3)
    with torch.no_grad():
        values = policy.token_values(pack(ctx, [[4, 5], [6], [7, 8, 9]], PAD))
        alone = policy.context_values(ctx)
    assert values.shape == (3, 4)
    torch.testing.assert_close(values[:, 0], alone, atol=1e-5, rtol=1e-5)


def test_critic_adapter_changes_values_not_actor_log_probs():
    policy = make_policy()
    batch = pack(contexts(9, rows=2), [[4, 5], [6]], PAD)
    with torch.no_grad():
        logp = policy.token_logprobs(batch)[0].clone()
        values = policy.token_values(batch).clone()
        for p in policy._adapter_params[CRITIC]:
            p.add_(0.5)
        assert torch.equal(policy.token_logprobs(batch)[0], logp)
        assert not torch.allclose(policy.token_values(batch), values)


def test_gradients_reach_only_the_active_role():
    policy = make_policy()
    batch = pack(contexts(10, rows=2), [[4, 5], [6]], PAD)
    policy.token_logprobs(batch)[0].sum().backward()
    assert all(p.grad is not None for p in policy.actor_parameters())
    assert all(p.grad is None for p in policy.critic_parameters())
    assert all(p.grad is None for p in policy.base_parameters())
    policy.zero_grad(set_to_none=True)
    policy.token_values(batch).sum().backward()
    assert all(p.grad is None for p in policy.actor_parameters())
    assert all(p.grad is not None for p in policy.critic_parameters())


def test_gradient_checkpointing_gives_the_same_gradients():
    grads = []
    for checkpointing in (False, True):
        torch.manual_seed(0)
        policy = Policy(tiny_base(), pad_id=PAD, stop_ids=[STOP], gradient_checkpointing=checkpointing,
                        actor_lora=LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]))
        with torch.no_grad():
            for p in policy.actor_parameters():
                p.add_(0.1)
        rows = contexts(11, rows=3)
        # a repeated context as well: checkpointed layers keep no cache to share it through
        batch = pack(rows + [rows[0]], [[4, 5], [6], [7, 8, 9], [10]], PAD)
        policy.token_logprobs(batch)[0].sum().backward()
        grads.append([p.grad.clone() for p in policy.actor_parameters()])
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_an_actor_only_policy_has_no_critic_side():
    torch.manual_seed(0)
    policy = Policy(tiny_base(), pad_id=PAD, stop_ids=[STOP], with_critic=False,
                    actor_lora=LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]))
    assert policy.critic_parameters() == [] and policy.value_head is None
    actions, _ = sampled(policy, contexts(12, rows=2), 4, generator=torch.Generator().manual_seed(0))
    assert all(1 <= len(a) <= 4 for a in actions)


@pytest.mark.parametrize("adapter", [ACTOR, CRITIC, None])
def test_rows_sharing_a_context_score_as_one_pass_over_every_row(adapter):
    """A group's rows run their shared context once (KV cache repeated per row); log-probs,
    values and the gradients reaching both adapters equal one plain pass over every row."""
    import fcenv.algos.model.policy as policy_module

    policy = make_policy()
    a, b = contexts(21, rows=2)
    rows = [a, b, a, a, b, a + [7]]
    actions = [[5, 6, 7], [8], [9, 10, 11, 12], [5], [13, 14], [15, 16]]
    batch = pack(rows, actions, PAD)
    assert policy_module.shared_contexts(batch) is not None

    def outputs(shared: bool):
        policy.zero_grad(set_to_none=True)
        original = policy_module.shared_contexts
        if not shared:
            policy_module.shared_contexts = lambda batch: None
        try:
            hidden = policy._hidden(batch, adapter)
        finally:
            policy_module.shared_contexts = original
        if hidden.requires_grad:  # the reference (adapters off) trains nothing
            # A fixed random readout of the real positions (a sum of squares would be nearly
            # constant after the final norm, its gradient all cancellation).
            readout = torch.randn(hidden.shape, generator=torch.Generator().manual_seed(5))
            (hidden * readout * real.unsqueeze(-1)).sum().backward()
        grads = {name: p.grad.clone() for name, p in policy.named_parameters() if p.grad is not None}
        return hidden.detach(), grads

    real = torch.cat([torch.ones(len(rows), 1), batch.action_mask], dim=1)
    together, together_grads = outputs(shared=False)
    shared, shared_grads = outputs(shared=True)
    torch.testing.assert_close(shared[real.bool()], together[real.bool()], atol=1e-5, rtol=1e-5)
    assert shared_grads.keys() == together_grads.keys() and (adapter is None) == (not shared_grads)
    if adapter is None:
        return
    # float32 sums taken in another order: the gradient as a whole agrees to about 1e-6
    together_flat = torch.cat([together_grads[name].flatten() for name in sorted(together_grads)])
    shared_flat = torch.cat([shared_grads[name].flatten() for name in sorted(together_grads)])
    assert (shared_flat - together_flat).norm() <= 1e-5 * together_flat.norm()


def test_sampling_with_gradient_checkpointing_equals_sampling_without():
    """Training with --gradient_checkpointing still samples through a KV cache (shared by a
    repeated prompt too), and gives the answers and log-probs of a policy without it."""
    results = []
    for checkpointing in (False, True):
        torch.manual_seed(0)
        policy = Policy(tiny_base(), pad_id=PAD, stop_ids=[STOP], gradient_checkpointing=checkpointing,
                        actor_lora=LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]))
        rows = contexts(3, rows=3)
        results.append(HFEngine(policy).sample(rows + [rows[0]], 6, greedy=True))
        assert policy.base.training  # back in training mode afterwards
    assert results[0] == results[1]


def test_a_top_layer_critic_runs_from_the_reference_pass_states():
    """critic_fraction=0.5: the critic's adapter covers the top one of two layers only, and from the states the
    reference pass records (prompts shared by rows included) its values and gradients equal a
    full critic pass, without running the layers below."""
    torch.manual_seed(0)
    policy = Policy(tiny_base(), pad_id=PAD, stop_ids=[STOP], critic_fraction=0.5,
                    actor_lora=LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():
        for p in policy.actor_parameters() + policy.critic_parameters():
            p.add_(0.3 * torch.randn_like(p))
    names = {id(p): n for n, p in policy.named_parameters()}
    critic_lora = [names[id(p)] for p in policy._adapter_params[CRITIC]]
    assert critic_lora and all(".layers.1." in n for n in critic_lora)
    assert any(".layers.0." in names[id(p)] for p in policy.actor_parameters())
    a, b = contexts(31, rows=2)
    batch = pack([a, b, a, b + [9]], [[5, 6, 7], [8], [9, 10], [11, 12, 13, 14]], PAD)
    real = torch.cat([torch.ones(4, 1), batch.action_mask], dim=1).bool()
    with torch.no_grad():
        reference, states = policy.reference_pass(batch)
        torch.testing.assert_close(reference, policy.reference_logprobs(batch))
    assert states.shape == (4, batch.input_ids.shape[1], 32)
    readout = torch.randn(real.shape, generator=torch.Generator().manual_seed(3))

    def values_and_grads(from_states: bool):
        policy.zero_grad(set_to_none=True)
        values = policy.token_values(batch, states if from_states else None)
        (values * readout * real).sum().backward()
        return values.detach(), [p.grad.clone() for p in policy.critic_parameters()]

    full, full_grads = values_and_grads(False)
    started, started_grads = values_and_grads(True)
    torch.testing.assert_close(started[real], full[real], atol=1e-5, rtol=1e-5)
    for x, y in zip(started_grads, full_grads):
        torch.testing.assert_close(x, y, atol=1e-5, rtol=1e-4)
    with torch.no_grad():  # the bottom layer broken: a pass from the states never runs it
        policy.base.model.layers[0].mlp.down_proj.weight.fill_(float("nan"))
        assert policy.token_values(batch).isnan().all()
        torch.testing.assert_close(policy.token_values(batch, states)[real], full[real], atol=1e-5, rtol=1e-5)
    assert policy.critic_start == 1
    assert Policy(tiny_base(), pad_id=PAD, stop_ids=[STOP], critic_fraction=0.6, actor_lora=LoraSettings()).critic_start == 0
    with pytest.raises(ValueError, match="critic_fraction must be in"):
        Policy(tiny_base(), pad_id=PAD, stop_ids=[STOP], critic_fraction=0.0, actor_lora=LoraSettings())


@pytest.mark.parametrize("tied", [False, True])
def test_trainable_token_rows_train_with_the_actor_and_sample_as_they_score(tied):
    """--trainable_tokens: the actor trains whole rows of the embedding (and of an untied output
    layer) for named tokens; the base keeps its rows (the reference is unchanged), gradients
    reach the rows, and sampling with the rows folded in draws what scoring scores."""
    base = tiny_base()
    if not tied:
        base.config.tie_word_embeddings = False
        base.lm_head.weight = torch.nn.Parameter(base.lm_head.weight.detach().clone())
    rows = (5, 9)
    torch.manual_seed(0)
    policy = Policy(base, pad_id=PAD, stop_ids=[STOP], actor_lora=LoraSettings(r=4, alpha=8, target_modules=["q_proj"],
                                                                                 trainable_tokens=rows))
    names = [name for name, p in policy.model.named_parameters() if "trainable_tokens_delta.actor" in name]
    assert len(names) == (1 if tied else 2)
    ctx = contexts(21, rows=4)
    batch = pack(ctx, [[5, 9, 6]] * 4, PAD)
    with torch.no_grad():
        reference = policy.reference_logprobs(batch)
        for p in policy.actor_parameters():
            p.add_(0.5 * torch.randn_like(p))
    logps = policy.token_logprobs(batch)[0]
    assert not torch.allclose(logps, reference)
    torch.testing.assert_close(policy.reference_logprobs(batch), reference)
    logps.sum().backward()
    deltas = [p for name, p in policy.model.named_parameters() if "trainable_tokens_delta.actor" in name]
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in deltas)
    policy.model.zero_grad(set_to_none=True)
    actions, sample_logps = sampled(policy, ctx, 10, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        scored = policy.token_logprobs(pack(ctx, actions, PAD))[0]
    for row, (action, lp) in enumerate(zip(actions, sample_logps)):
        torch.testing.assert_close(scored[row, :len(action)], torch.tensor(lp), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("tied", [False, True])
def test_trainable_token_rows_score_and_train_as_peft_does(tied):
    """The trained rows' fast path (``_rows_over_base``: the base layers run as they are, the
    trained tokens' outputs replaced) gives PEFT's own layer's log-probs and row gradients."""
    from peft.tuners.trainable_tokens.layer import TrainableTokensLayer

    base = tiny_base()
    if not tied:
        base.config.tie_word_embeddings = False
        base.lm_head.weight = torch.nn.Parameter(base.lm_head.weight.detach().clone())
    torch.manual_seed(1)
    policy = Policy(base, pad_id=PAD, stop_ids=[STOP], actor_lora=LoraSettings(r=4, alpha=8, target_modules=["q_proj"],
                                                                                 trainable_tokens=(5, 9)))
    with torch.no_grad():
        for p in policy.actor_parameters():
            p.add_(0.5 * torch.randn_like(p))
    batch = pack(contexts(22, rows=4), [[5, 9, 6, 5]] * 4, PAD)  # the rows as inputs and as outputs
    deltas = [p for name, p in policy.model.named_parameters() if "trainable_tokens_delta.actor" in name]

    def scored() -> tuple[torch.Tensor, list[torch.Tensor]]:
        logps = policy.token_logprobs(batch)[0]
        logps.sum().backward()
        grads = [p.grad.clone() for p in deltas]
        policy.model.zero_grad(set_to_none=True)
        return logps.detach(), grads

    fast, fast_grads = scored()
    layers = [m for m in policy.model.modules() if isinstance(m, TrainableTokensLayer)]
    assert layers and all("forward_adapters" in vars(m) for m in layers)
    for module in layers:
        del module.forward_adapters  # PEFT's own forward again
    peft, peft_grads = scored()
    torch.testing.assert_close(fast, peft, atol=1e-6, rtol=1e-5)
    for ours, theirs in zip(fast_grads, peft_grads):
        assert theirs.abs().sum() > 0
        torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("adapter", [ACTOR, CRITIC, None])
def test_an_episodes_steps_score_as_one_pass_over_its_last_step(adapter):
    """A multi-step episode's rows (each step's context the previous step's context, action and
    observation) packed with ``chain=True`` run as one sequence: the log-probs, values and
    gradients equal one pass over every row, and rows of other episodes keep their own."""
    policy = make_policy()
    prompt, other = contexts(31, rows=2)
    steps = [[5, 6, 7], [8, 9], [10, 11, 12, 13]]
    observations = [[20, 21], [22, 23, 24]]
    rows, actions = [list(prompt)], [steps[0]]
    for action, seen, following in zip(steps, observations, steps[1:]):
        rows.append(rows[-1] + action + seen)
        actions.append(following)
    rows.append(list(other))
    actions.append([14, 15])
    chained, plain = pack(rows, actions, PAD, chain=True), pack(rows, actions, PAD)
    assert chained.carriers is not None and chained.carriers.input_ids.shape[0] == 2  # two sequences for four rows
    real = torch.cat([torch.ones(len(rows), 1), plain.action_mask], dim=1).bool()

    def outputs(batch):
        policy.zero_grad(set_to_none=True)
        hidden = policy._hidden(batch, adapter)
        if hidden.requires_grad:
            weights = torch.randn(hidden.shape, generator=torch.Generator().manual_seed(5))
            (hidden * weights * real.unsqueeze(-1)).sum().backward()
        return hidden.detach(), {n: p.grad.clone() for n, p in policy.named_parameters() if p.grad is not None}

    one, one_grads = outputs(chained)
    each, each_grads = outputs(plain)
    torch.testing.assert_close(one[real], each[real], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(policy.token_logprobs(chained, adapter)[0], policy.token_logprobs(plain, adapter)[0],
                               atol=1e-5, rtol=1e-5)
    assert one_grads.keys() == each_grads.keys() and (adapter is None) == (not one_grads)
    if one_grads:
        flat_one = torch.cat([one_grads[n].flatten() for n in sorted(one_grads)])
        flat_each = torch.cat([each_grads[n].flatten() for n in sorted(one_grads)])
        assert (flat_one - flat_each).norm() <= 1e-5 * flat_each.norm()


def test_an_actor_on_the_top_layers_stops_the_backward_pass_there_and_reloads_as_saved(tmp_path):
    """An actor adapter on the top layers (--actor_fraction): only those layers get LoRA, no
    gradient reaches a layer below them nor the input side of its trained token rows (their
    output side learns), and the saved adapter reads back with its layers for generate and PEFT."""
    from fcenv.algos.model.policy import top_layers
    from fcenv.algos.store.checkpoint import adapter_settings

    base = tiny_base()
    layers = top_layers(base, 0.5)
    assert layers == (1,) and top_layers(base, 1.0) == ()
    policy = Policy(base, pad_id=PAD, stop_ids=[STOP], with_critic=False,
                    actor_lora=LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"], trainable_tokens=(5, 6),
                                            layers=layers))
    names = [n for n, _ in policy.model.named_parameters() if "lora_A" in n]
    assert names and all(".layers.1." in n for n in names)
    reached: list[torch.Tensor] = []
    first = policy.base.get_decoder().layers[0]
    handle = first.register_forward_hook(lambda module, args, out: reached.append(out[0] if isinstance(out, tuple) else out))
    try:
        batch = pack([[5, 7, 8, 6]], [[5, 9, 6]], PAD)  # the trained tokens in the context and the action
        policy.token_logprobs(batch)[0].sum().backward()
    finally:
        handle.remove()
    assert not reached[0].requires_grad  # nothing below the adapter is in the graph
    rows = [p for n, p in policy.model.named_parameters() if "trainable_tokens_delta" in n]
    assert rows and any(p.grad is not None and p.grad.abs().sum() > 0 for p in rows)  # written: learnt
    policy.model.save_pretrained(tmp_path, selected_adapters=[ACTOR])
    saved = adapter_settings(tmp_path / ACTOR if (tmp_path / ACTOR).exists() else tmp_path)
    assert saved.layers == layers and saved.trainable_tokens == (5, 6)


@pytest.mark.parametrize("adapter", [ACTOR, CRITIC, None])
def test_a_groups_episodes_run_their_shared_prompt_once(adapter):
    """A group's episodes start from one prompt: chained, the prompt runs once (its KV cache
    repeated for each episode) and the rest of each episode after it; log-probs and gradients equal
    one pass over every row."""
    policy = make_policy()
    g = torch.Generator().manual_seed(41)
    prompt = torch.randint(3, VOCAB, (40,), generator=g).tolist()
    rows, actions = [], []
    for first, following, seen in (([5, 6], [7, 8, 9], [20, 21]), ([10], [11, 12], [22, 23, 24]), ([13, 14, 15], [16], [25])):
        rows += [list(prompt), prompt + first + seen]
        actions += [first, following]
    chained, plain = pack(rows, actions, PAD, chain=True), pack(rows, actions, PAD)
    assert chained.carriers.shared_prefix >= len(prompt) and chained.carriers.input_ids.shape[0] == 3
    real = torch.cat([torch.ones(len(rows), 1), plain.action_mask], dim=1).bool()

    def outputs(batch):
        policy.zero_grad(set_to_none=True)
        hidden = policy._hidden(batch, adapter)
        if hidden.requires_grad:
            weights = torch.randn(hidden.shape, generator=torch.Generator().manual_seed(5))
            (hidden * weights * real.unsqueeze(-1)).sum().backward()
        return hidden.detach(), {n: p.grad.clone() for n, p in policy.named_parameters() if p.grad is not None}

    once, once_grads = outputs(chained)
    each, each_grads = outputs(plain)
    torch.testing.assert_close(once[real], each[real], atol=1e-5, rtol=1e-5)
    assert once_grads.keys() == each_grads.keys()
    if once_grads:
        flat_once = torch.cat([once_grads[n].flatten() for n in sorted(once_grads)])
        flat_each = torch.cat([each_grads[n].flatten() for n in sorted(once_grads)])
        assert (flat_once - flat_each).norm() <= 1e-5 * flat_each.norm()
