"""The vLLM engine samples what the trainer scores: tokens and log-probs equal Hugging Face's.

A real vLLM (``.vllm-venv``, built by ``make vllm``) serving a real tiny model, compared with
transformers (and PEFT for the LoRA actor) on the same weights in float32: greedy tokens
equal, every log-prob within 1e-4, with and without an adapter, sampled at a temperature,
the first tokens' entropy (ARPO's branching signal), and after an update of the adapter
(the engine must never sample with a stale one).
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
import torch

from algos.policy import LoraSettings
from algos.vllm_engine import EngineError, VLLMEngine, default_python

TOLERANCE = 1e-4
MAX_NEW_TOKENS = 24
LORA = LoraSettings(r=8, alpha=16, target_modules=["q_proj", "v_proj"])

# vLLM's CPU attention takes head sizes of 32 and more; the tests' usual tiny model has 16
# (tests/tiny_test_model.py), so the engine's tests build one of the same recipe with heads of 32.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def vllm_python() -> str:
    python = default_python()
    probe = subprocess.run([python, "-c", "import vllm"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.fail(f"vLLM is not importable with {python} ({probe.stderr.strip().splitlines()[-1:]}); "
                    "run `make vllm` to build .vllm-venv")
    return python


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    from algos.tiny import build_tiny
    from tests.tiny_test_model import VLLM_TEST_SPEC

    return build_tiny(tmp_path_factory.getbasetemp() / "tiny-cache", VLLM_TEST_SPEC, log=lambda message: None)


def load_base(model_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()


@pytest.fixture(scope="module")
def base(model_dir):
    return load_base(model_dir)


@pytest.fixture(scope="module")
def tokenizer(model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir)


@pytest.fixture(scope="module")
def prompts(tokenizer) -> list[list[int]]:
    """The bundled held-out split's prompts, rendered and tokenized as the trainer does."""
    import gymnasium as gym

    import fcenv
    from algos.tiny import TINY_EVAL, TINY_SYSTEM_PROMPT, chat_renderer

    env = gym.make(fcenv.ENV_ID, dataset_path=str(TINY_EVAL), renderer=chat_renderer(tokenizer),
                   system_prompt=TINY_SYSTEM_PROMPT)
    texts = [env.reset(options={"index": index})[0] for index in range(len(env.unwrapped.tasks))]
    env.close()
    return [tokenizer(text, add_special_tokens=False).input_ids for text in texts]


@pytest.fixture(scope="module")
def contexts(prompts) -> list[list[int]]:
    return prompts[:6]


@pytest.fixture(scope="module")
def engine(vllm_python, model_dir):
    with VLLMEngine(model_dir, max_lora_rank=LORA.r, kv_cache_bytes=256 << 20, python=vllm_python) as engine:
        yield engine


def random_adapter(model_dir: Path, folder: Path, seed: int):
    """A LoRA actor with non-zero weights (PEFT starts B at zero) on a fresh copy of the base,
    saved in ``folder``."""
    from peft import get_peft_model

    torch.manual_seed(seed)
    model = get_peft_model(load_base(model_dir), LORA.to_config())
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_" in name:
                parameter.add_(0.2 * torch.randn_like(parameter))
    model.save_pretrained(folder)
    return model


def hf_logprobs(model, context: list[int], action: list[int], temperature: float = 1.0,
                entropy_tokens: int = 0) -> tuple[list[float], float]:
    """The trainer's view: one forward pass over context + action, the log-prob of each
    action token under softmax(logits / temperature), and the mean normalised entropy over
    the first ``entropy_tokens`` positions."""
    ids = torch.tensor([context + action])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, len(context) - 1:-1].float()
    logp = torch.log_softmax(logits / temperature, dim=-1)
    chosen = logp.gather(-1, torch.tensor(action).unsqueeze(-1)).squeeze(-1).tolist()
    first = logp[:entropy_tokens]
    entropy = (-(first.exp() * first).sum(-1) / math.log(logp.shape[-1])).mean().item() if entropy_tokens else 0.0
    return chosen, entropy


def hf_greedy(model, context: list[int], stop_id: int) -> list[int]:
    """transformers' own greedy decoding, the stop token kept."""
    with torch.no_grad():
        out = model.generate(torch.tensor([context]), attention_mask=torch.ones(1, len(context), dtype=torch.long),
                             do_sample=False, max_new_tokens=MAX_NEW_TOKENS, eos_token_id=stop_id, pad_token_id=stop_id)
    return out[0, len(context):].tolist()


def assert_close(engine_logps: list[float], reference: list[float]):
    assert len(engine_logps) == len(reference)
    gap = max(abs(a - b) for a, b in zip(engine_logps, reference))
    assert gap < TOLERANCE, f"log-probs differ by {gap:.2e}"


def assert_well_formed(actions: list[list[int]], stop_id: int):
    """Each action ends at its first stop token (kept) or at the length limit."""
    for action in actions:
        assert 0 < len(action) <= MAX_NEW_TOKENS
        assert stop_id not in action[:-1]
        assert action[-1] == stop_id or len(action) == MAX_NEW_TOKENS


def assert_greedy_parity(engine, model, contexts, stop_id, temperature: float = 1.0) -> list[list[int]]:
    actions, logps, entropies = engine.sample(contexts, MAX_NEW_TOKENS, stop_ids=[stop_id], greedy=True,
                                              temperature=temperature)
    assert entropies is None
    assert_well_formed(actions, stop_id)
    for context, action, logp in zip(contexts, actions, logps):
        assert action == hf_greedy(model, context, stop_id)
        assert_close(logp, hf_logprobs(model, context, action, temperature)[0])
    return actions


def test_greedy_tokens_and_logprobs_equal_transformers(engine, base, contexts, tokenizer):
    engine.load_adapter(None)
    actions = assert_greedy_parity(engine, base, contexts, tokenizer.eos_token_id)
    assert any(action[-1] == tokenizer.eos_token_id for action in actions)


def test_greedy_logprobs_are_under_the_temperature(engine, base, contexts, tokenizer):
    """Greedy picks the same tokens at any temperature; their log-probs are the tempered
    distribution's, as the trainer's (vLLM alone would report them untempered)."""
    engine.load_adapter(None)
    assert_greedy_parity(engine, base, contexts[:3], tokenizer.eos_token_id, temperature=0.7)


def test_greedy_with_a_lora_adapter_equals_peft(engine, base, model_dir, contexts, tokenizer, tmp_path):
    stop = tokenizer.eos_token_id
    model = random_adapter(model_dir, tmp_path / "actor", seed=1)
    engine.load_adapter(tmp_path / "actor")
    actions = assert_greedy_parity(engine, model, contexts, stop)
    # The adapter is really used: the base model answers otherwise.
    assert actions != [hf_greedy(base, context, stop) for context in contexts]


def test_sampled_logprobs_and_first_token_entropy_equal_peft(engine, model_dir, contexts, tokenizer, tmp_path):
    stop, temperature, first = tokenizer.eos_token_id, 0.8, 5
    model = random_adapter(model_dir, tmp_path / "actor", seed=2)
    engine.load_adapter(tmp_path / "actor")
    group = [context for context in contexts[:3] for _ in range(4)]  # groups: one prompt, four samples
    actions, logps, entropies = engine.sample(group, MAX_NEW_TOKENS, stop_ids=[stop], temperature=temperature,
                                              seed=7, entropy_tokens=first)
    assert_well_formed(actions, stop)
    assert len({tuple(action) for action in actions}) > 3  # a group's rows draw apart
    for context, action, logp, entropy in zip(group, actions, logps, entropies):
        reference, reference_entropy = hf_logprobs(model, context, action, temperature, min(first, len(action)))
        assert_close(logp, reference)
        assert abs(entropy - reference_entropy) < TOLERANCE
        assert 0.0 < entropy < 1.0
    # A seed replays its samples exactly.
    again = engine.sample(group, MAX_NEW_TOKENS, stop_ids=[stop], temperature=temperature, seed=7,
                          entropy_tokens=first)
    assert again == (actions, logps, entropies)


def test_after_an_update_the_engine_samples_with_the_new_adapter(engine, model_dir, contexts, tokenizer, tmp_path):
    """The trainer's loop: sample, update the actor, save it where it was, load it again. The
    engine's log-probs of its answers equal the updated actor's, not the old one's, on the same
    prompts (whose KV blocks vLLM has cached under the old adapter)."""
    stop, folder = tokenizer.eos_token_id, tmp_path / "actor"
    model = random_adapter(model_dir, folder, seed=3)
    engine.load_adapter(folder)
    before, _, _ = engine.sample(contexts, MAX_NEW_TOKENS, stop_ids=[stop], greedy=True)
    old = [hf_logprobs(model, c, a)[0] for c, a in zip(contexts, before)]

    # A few steps of supervised tuning toward the first prompt's old answer with its last token changed.
    target = before[0][:-1] + [(before[0][-1] + 1) % len(tokenizer)]
    optimizer = torch.optim.Adam([p for n, p in model.named_parameters() if "lora_" in n], lr=1e-2)
    ids = torch.tensor([contexts[0] + target])
    for _ in range(5):
        logits = model(input_ids=ids).logits[0, len(contexts[0]) - 1:-1]
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor(target))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    new = [hf_logprobs(model, c, a)[0] for c, a in zip(contexts, before)]
    # The update moved the log-probs far more than the tolerance: a stale adapter fails below.
    assert max(abs(x - y) for o, n in zip(old, new) for x, y in zip(o, n)) > 100 * TOLERANCE
    model.save_pretrained(folder)  # the same folder: only a new adapter id tells the versions apart

    engine.load_adapter(folder)
    after, logps, _ = engine.sample(contexts, MAX_NEW_TOKENS, stop_ids=[stop], greedy=True)
    for context, action, logp in zip(contexts, after, logps):
        assert action == hf_greedy(model, context, stop)
        assert_close(logp, hf_logprobs(model, context, action)[0])


def test_a_batch_beyond_one_steps_token_budget(engine, base, prompts, tokenizer):
    """Every held-out prompt in one call: vLLM prefills them over several steps. Seeded rows
    replay, and their log-probs and entropies are still the trainer's."""
    stop = tokenizer.eos_token_id
    engine.load_adapter(None)
    assert sum(map(len, prompts)) > engine.info["max_num_batched_tokens"]
    sampled = engine.sample(prompts, MAX_NEW_TOKENS, stop_ids=[stop], seed=11, entropy_tokens=3)
    actions, logps, entropies = sampled
    assert_well_formed(actions, stop)
    for row in range(0, len(prompts), 30):
        reference, reference_entropy = hf_logprobs(base, prompts[row], actions[row], 1.0, min(3, len(actions[row])))
        assert_close(logps[row], reference)
        assert abs(entropies[row] - reference_entropy) < TOLERANCE
    assert engine.sample(prompts, MAX_NEW_TOKENS, stop_ids=[stop], seed=11, entropy_tokens=3) == sampled


def test_bad_input_is_named_before_any_heavy_work(engine, tmp_path):
    with pytest.raises(EngineError, match="not a Hugging Face model folder"):
        VLLMEngine(tmp_path)
    with pytest.raises(EngineError, match="not a PEFT adapter folder"):
        engine.load_adapter(tmp_path)
    (tmp_path / "adapter_config.json").write_text('{"r": 64}')
    with pytest.raises(EngineError, match="field r = 64.*ranks up to 8"):
        engine.load_adapter(tmp_path)
    with pytest.raises(ValueError, match="temperature must be positive"):
        engine.sample([[1, 2]], 4, stop_ids=[0], temperature=0.0)


def test_an_interpreter_without_vllm_is_a_clear_error(model_dir):
    """The trainer's own venv has no vLLM (it lives in .vllm-venv): the engine says so."""
    import sys

    with pytest.raises(EngineError, match=r"did not start: .*No module named 'vllm'"):
        VLLMEngine(model_dir, python=sys.executable)
