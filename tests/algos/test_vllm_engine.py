"""The ``vllm`` rollout engine samples what the trainer scores, with the actor it just trained.

A real vLLM (``.vllm-venv``, built by ``make vllm``) serving a real tiny model, compared in
float32 with the ``hf`` engine and with the trainer's scoring pass (``Policy.token_logprobs``)
on the same policy: greedy tokens equal, every log-prob within 1e-4, sampled log-probs and the
first tokens' entropy (ARPO's branching signal) equal the trainer's, and after an update
(``sync``) the engine samples with the new actor, never a stale one. Then whole training
iterations with ``--rollout_engine vllm``: single-turn, multi-turn with groups and branching,
and a resumed run that continues exactly. Then the same choice in ``fcenv generate`` and
``fcenv process-rewards``, and the independent held-out client's vLLM side (bench/heldout.py
--rollout_engine vllm), and bench/bench_gpu.py's vLLM section on a small shape.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from fcenv.algos.config import parse_config
from fcenv.algos.model.batching import pack
from fcenv.algos.model.loading import load_model, max_positions
from fcenv.algos.model.policy import LoraSettings, Policy
from fcenv.algos.rollout.engine import EngineSettings, make_engine
from fcenv.algos.rollout.hf import HFEngine
from fcenv.algos.rollout.vllm import EngineError, VLLMEngine
from fcenv.algos.tiny.build import MULTI_TURN_TRAIN, TINY_EVAL, TINY_SYSTEM_PROMPT
from fcenv.algos.training.loop import Runner
from tests.support.runs import MULTI_TURN_EVAL

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-4
MAX_NEW_TOKENS = 24
LORA = LoraSettings(r=8, alpha=16, target_modules=["q_proj", "v_proj"])

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model_dir(vllm_ready, tmp_path_factory) -> Path:
    """The tests' tiny model with heads of 32 (vLLM's CPU attention takes no smaller)."""
    from fcenv.algos.tiny.build import build_tiny
    from harness.tiny_test_model import VLLM_TEST_SPEC

    torch.set_num_threads(1)
    return build_tiny(tmp_path_factory.getbasetemp() / "tiny-cache", VLLM_TEST_SPEC, log=lambda message: None)


@pytest.fixture(scope="module")
def loaded(model_dir):
    return load_model(str(model_dir), torch.device("cpu"), system_prompt=TINY_SYSTEM_PROMPT)


def make_policy(loaded, seed: int, temperature: float = 1.0) -> Policy:
    """The trainer's policy with a non-zero actor (PEFT starts LoRA B at zero)."""
    torch.manual_seed(seed)
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, actor_lora=LORA,
                    with_critic=False, temperature=temperature)
    with torch.no_grad():
        for parameter in policy.actor_parameters():
            parameter.add_(0.2 * torch.randn_like(parameter))
    return policy


@pytest.fixture(scope="module")
def policy(loaded):
    return make_policy(loaded, seed=1)


@pytest.fixture(scope="module")
def engine(policy, loaded):
    engine = make_engine("vllm", policy, EngineSettings(Path(loaded.path), max_positions(loaded.base), seed=0))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def prompts(loaded) -> list[list[int]]:
    """The bundled held-out split's prompts, rendered and tokenized as the trainer does."""
    import gymnasium as gym

    import fcenv

    env = gym.make(fcenv.ENV_ID, dataset_path=str(TINY_EVAL), renderer=loaded.renderer,
                   system_prompt=TINY_SYSTEM_PROMPT)
    texts = [env.reset(options={"index": index})[0] for index in range(len(env.unwrapped.tasks))]
    env.close()
    return [loaded.tokenizer(text, add_special_tokens=False).input_ids for text in texts]


@pytest.fixture(scope="module")
def contexts(prompts) -> list[list[int]]:
    return prompts[:6]


def scored(policy: Policy, contexts, actions, entropy_tokens: int = 0) -> tuple[list[list[float]], list[float]]:
    """The trainer's view: one scoring pass over context + action, each action token's
    log-prob, and the mean normalised entropy over each action's first ``entropy_tokens``."""
    batch = pack(contexts, actions, policy.pad_id)
    with torch.no_grad():
        logp, entropy = policy.token_logprobs(batch, with_entropy=True)
    vocabulary = policy.base.get_output_embeddings().weight.shape[0]
    logps = [logp[row, :len(action)].tolist() for row, action in enumerate(actions)]
    entropies = [(entropy[row, :min(entropy_tokens, len(action))].mean() / math.log(vocabulary)).item()
                 if entropy_tokens else 0.0 for row, action in enumerate(actions)]
    return logps, entropies


def largest_gap(a: list[list[float]], b: list[list[float]]) -> float:
    assert [len(row) for row in a] == [len(row) for row in b]
    return max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def assert_well_formed(actions: list[list[int]], stop_ids: list[int]):
    """Each action ends at its first stop token (kept) or at the length limit."""
    for action in actions:
        assert 0 < len(action) <= MAX_NEW_TOKENS
        assert not set(action[:-1]) & set(stop_ids)
        assert action[-1] in stop_ids or len(action) == MAX_NEW_TOKENS


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_greedy_tokens_and_logprobs_equal_the_hf_engine(engine, policy, contexts, temperature):
    """Greedy picks the same tokens at any temperature; their log-probs are the tempered
    distribution's, as the trainer's (vLLM alone would report them untempered)."""
    policy.temperature = temperature
    try:
        hf = HFEngine(policy).sample(contexts, MAX_NEW_TOKENS, greedy=True)
        got = engine.sample(contexts, MAX_NEW_TOKENS, greedy=True)
    finally:
        policy.temperature = 1.0
    assert_well_formed(got.actions, policy.stop_ids)
    assert any(action[-1] in policy.stop_ids for action in got.actions)
    assert got.actions == hf.actions
    assert largest_gap(got.logprobs, hf.logprobs) < TOLERANCE
    assert got.entropies == []


def test_the_actor_is_really_sampled(engine, policy, loaded, contexts):
    """The base alone answers otherwise: the engine folded the actor in."""
    with policy.model.disable_adapter():
        base_logps, _ = scored(policy, contexts, engine.sample(contexts, MAX_NEW_TOKENS, greedy=True).actions)
    actions = engine.sample(contexts, MAX_NEW_TOKENS, greedy=True).actions
    assert largest_gap(scored(policy, contexts, actions)[0], base_logps) > 100 * TOLERANCE


def test_sampled_logprobs_and_first_token_entropy_equal_the_trainers(engine, policy, contexts):
    first = 5
    group = [context for context in contexts[:3] for _ in range(4)]  # groups: one prompt, four samples
    got = engine.sample(group, MAX_NEW_TOKENS, generator=torch.Generator().manual_seed(7), entropy_tokens=first)
    assert_well_formed(got.actions, policy.stop_ids)
    assert len({tuple(action) for action in got.actions}) > 3  # a group's rows draw apart
    logps, entropies = scored(policy, group, got.actions, first)
    assert largest_gap(got.logprobs, logps) < TOLERANCE
    assert max(abs(a - b) for a, b in zip(got.entropies, entropies)) < TOLERANCE
    assert all(0.0 < entropy < 1.0 for entropy in got.entropies)
    # The trainer's generator decides: the same state replays the same samples.
    assert engine.sample(group, MAX_NEW_TOKENS, generator=torch.Generator().manual_seed(7),
                         entropy_tokens=first) == got


def test_after_an_update_sync_samples_with_the_new_actor(engine, policy, contexts):
    """The trainer's loop: sample, update the actor, sync. Afterwards the engine's log-probs
    of a fixed continuation (its answers before the update, forced as the prompt's tail) and
    of its new samples equal the updated actor's, not the old one's, on the same prompts
    (whose KV blocks vLLM has cached under the old weights)."""
    before = engine.sample(contexts, MAX_NEW_TOKENS, greedy=True).actions
    old, _ = scored(policy, contexts, before)
    saved = [parameter.detach().clone() for parameter in policy.actor_parameters()]
    try:
        # A few steps of supervised tuning toward the first prompt's answer with its last token changed.
        target = before[0][:-1] + [(before[0][-1] + 1) % policy.base.config.vocab_size]
        optimizer = torch.optim.Adam(policy.actor_parameters(), lr=1e-2)
        batch = pack(contexts[:1], [target], policy.pad_id)
        for _ in range(5):
            loss = -policy.token_logprobs(batch)[0].sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        new, _ = scored(policy, contexts, before)
        assert largest_gap(old, new) > 100 * TOLERANCE  # a stale actor would fail below
        engine.sync(policy)
        # The fixed continuation: each prompt with all but the last token of its old answer,
        # greedy for one token, must give the last token's log-prob under the new actor.
        heads = [context + action[:-1] for context, action in zip(contexts, before)]
        step = engine.sample(heads, 1, greedy=True)
        trainer, _ = scored(policy, heads, step.actions)
        assert largest_gap(step.logprobs, trainer) < TOLERANCE
        after = engine.sample(contexts, MAX_NEW_TOKENS, generator=torch.Generator().manual_seed(3))
        assert largest_gap(after.logprobs, scored(policy, contexts, after.actions)[0]) < TOLERANCE
        hf = HFEngine(policy).sample(contexts, MAX_NEW_TOKENS, greedy=True)
        assert engine.sample(contexts, MAX_NEW_TOKENS, greedy=True).actions == hf.actions
    finally:
        with torch.no_grad():
            for parameter, value in zip(policy.actor_parameters(), saved):
                parameter.copy_(value)
        engine.sync(policy)


@pytest.mark.parametrize("adapted", ["lora", "token_rows"])
def test_an_actor_that_adapts_the_output_layer_samples_as_the_trainer_scores(model_dir, contexts, tmp_path, adapted):
    """The output layer adapted, by LoRA (--lora_target_modules ... lm_head) or by trained rows
    of some tokens (--trainable_tokens, for a model whose tool-call tag cannot be written
    otherwise): the vllm engine folds it too, so its greedy answers are the hf engine's and its
    log-probs the trainer's; the saved adapter holds no copy of the frozen output layer."""
    import shutil

    from transformers import AutoModelForCausalLM

    # The tiny model ties its output layer to its embeddings; a copy with its own output layer
    # (as Qwen2.5-Coder-0.5B's checkpoint has).
    untied = tmp_path / "untied"
    shutil.copytree(model_dir, untied)
    model = AutoModelForCausalLM.from_pretrained(untied)
    model.config.tie_word_embeddings = False
    model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())
    model.save_pretrained(untied)
    loaded = load_model(str(untied), torch.device("cpu"), system_prompt=TINY_SYSTEM_PROMPT)
    torch.manual_seed(5)
    # The rows of tokens the tiny model writes often, so that the test sees them change.
    settings = (LoraSettings(r=8, alpha=16, target_modules=["q_proj", "lm_head"]) if adapted == "lora" else
                LoraSettings(r=8, alpha=16, target_modules=["q_proj"], trainable_tokens=tuple(range(3, 40))))
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, actor_lora=settings,
                    with_critic=False)
    with torch.no_grad():
        for parameter in policy.actor_parameters():
            parameter.add_(0.2 * torch.randn_like(parameter))
    marker = "lora_B" if adapted == "lora" else "trainable_tokens_delta"
    assert any("lm_head" in name for name, _ in policy.model.named_parameters() if marker in name)
    with make_engine("vllm", policy, EngineSettings(Path(loaded.path), max_positions(loaded.base), seed=0)) as engine:
        greedy = engine.sample(contexts, MAX_NEW_TOKENS, greedy=True)
        assert greedy.actions == HFEngine(policy).sample(contexts, MAX_NEW_TOKENS, greedy=True).actions
        sampled = engine.sample(contexts, MAX_NEW_TOKENS, generator=torch.Generator().manual_seed(2))
        assert largest_gap(sampled.logprobs, scored(policy, contexts, sampled.actions)[0]) < TOLERANCE
        saved = engine._folder / "actor" / "adapter_model.safetensors"
        from safetensors import safe_open

        with safe_open(str(saved), "pt") as handle:
            assert all(".lora_A." in name or ".lora_B." in name or name.endswith(".trainable_tokens_delta")
                       for name in handle.keys())  # noqa: SIM118 (safe_open handles are not iterable)


def test_a_batch_beyond_one_steps_token_budget(engine, policy, prompts):
    """Every held-out prompt in one call: vLLM prefills them over several steps; log-probs and
    entropies are still the trainer's, and the generator's state replays them."""
    assert sum(map(len, prompts)) > engine.info["max_num_batched_tokens"]
    got = engine.sample(prompts, MAX_NEW_TOKENS, generator=torch.Generator().manual_seed(11), entropy_tokens=3)
    assert_well_formed(got.actions, policy.stop_ids)
    rows = list(range(0, len(prompts), 30))
    logps, entropies = scored(policy, [prompts[r] for r in rows], [got.actions[r] for r in rows], 3)
    assert largest_gap([got.logprobs[r] for r in rows], logps) < TOLERANCE
    assert max(abs(got.entropies[r] - e) for r, e in zip(rows, entropies)) < TOLERANCE
    assert engine.sample(prompts, MAX_NEW_TOKENS, generator=torch.Generator().manual_seed(11), entropy_tokens=3) == got


def test_bad_input_is_named_before_any_heavy_work(policy, loaded, tmp_path):
    with pytest.raises(EngineError, match="not a Hugging Face model folder"):
        VLLMEngine(policy, EngineSettings(tmp_path, 1024))
    # The trainer's own venv has no vLLM (it lives in .vllm-venv): the engine says so.
    with pytest.raises(EngineError, match="vLLM is not installed for .*make vllm"):
        VLLMEngine(policy, EngineSettings(Path(loaded.path), 1024), python=sys.executable)


def test_an_engine_killed_with_a_request_in_flight_is_named_with_its_log(policy, loaded, prompts):
    """The worker killed (as the OOM killer would) while it samples: an EngineError naming the
    engine, its log and what to do, not a bare ConnectionResetError."""
    import signal
    import threading

    engine = make_engine("vllm", policy, EngineSettings(Path(loaded.path), max_positions(loaded.base), seed=0))
    try:
        engine.sample(prompts[:1], 2, greedy=True)  # started and synced
        threading.Timer(0.05, engine._worker.process.send_signal, [signal.SIGKILL]).start()
        with pytest.raises(EngineError) as died:
            for _ in range(200):
                engine.sample(prompts, MAX_NEW_TOKENS, generator=torch.Generator().manual_seed(0))
        message = str(died.value)
        assert "the vLLM engine (--rollout_engine vllm)" in message and "exited with status -9" in message
        assert f"its log: {engine._worker.log}" in message and "make vllm" in message
    finally:
        engine.close()


# ---- whole training iterations with --rollout_engine vllm -------------------------------------
def make_runner(model_dir: Path, results: Path, *extra: str) -> Runner:
    args = ["--model_name_or_path", str(model_dir), "--system_prompt", TINY_SYSTEM_PROMPT, "--hide_function_docs",
            "--results_dir", str(results), "--n_rollout_threads", "4", "--num_env_steps", "8",
            "--max_new_tokens", "24", "--ppo_epoch", "1", "--num_mini_batch", "1", "--lora_r", "4", "--lr", "1e-2",
            "--eval_interval", "0", "--no-progress", "--seed", "5", "--rollout_engine", "vllm", *extra]
    return Runner(parse_config(args), log=lambda message: None)


def assert_engine_follows_the_actor(runner: Runner):
    """After an update the engine's samples score the same under the trainer's actor."""
    contexts = [action.context for action in runner._play().actions[:4]]
    got = runner.engine.sample(contexts, 16, generator=torch.Generator().manual_seed(0))
    assert largest_gap(got.logprobs, scored(runner.policy, contexts, got.actions)[0]) < TOLERANCE


def test_one_training_iteration_single_turn(model_dir, tmp_path):
    runner = make_runner(model_dir, tmp_path)
    try:
        assert runner.engine.exact_logprobs  # float32: the engine's log-probs serve as the old ones
        before = [parameter.detach().clone() for parameter in runner.policy.actor_parameters()]
        metrics = runner.train_iteration()
        assert metrics["rollout/engine_logprob_gap"] < TOLERANCE
        assert math.isfinite(metrics["train/policy_loss"])
        assert any(not torch.equal(b, p.detach()) for b, p in zip(before, runner.policy.actor_parameters()))
        assert_engine_follows_the_actor(runner)
    finally:
        runner.engine.close()


def test_one_training_iteration_multi_turn_with_groups_and_branching(model_dir, tmp_path):
    """GRPO groups on the multi-turn split, ARPO's branching from the first tokens' entropy
    (which the engine measures), and the sampling pass's log-probs as the old ones."""
    runner = make_runner(model_dir, tmp_path, "--dataset_path", str(MULTI_TURN_TRAIN), "--algorithm_name", "GRPO",
                         "--group_size", "4", "--n_rollout_threads", "8", "--max_new_tokens", "16",
                         "--branching", "entropy", "--branch_threshold", "1.0", "--sampling_old_logprobs",
                         "--num_env_steps", "200", "--seed", "1")  # seed 1: a chain branches in the first rollout
    try:
        metrics = runner.train_iteration()
        assert metrics["rollout/branches"] > 0
        assert max(len(episode.action_indices) for episode in runner._play().episodes) > 1  # several turns
        assert_engine_follows_the_actor(runner)
    finally:
        runner.engine.close()


def test_an_episodes_later_steps_prefill_only_what_is_new(model_dir, tmp_path):
    """vLLM's prefix cache keeps a multi-turn episode's earlier steps (and a group's shared prompt):
    it runs fewer tokens per episode than the contexts hold (a re-prefill of every step). The tiny
    model's chats are short, a few of vLLM's 16-token blocks, so the saving here is small."""
    runner = make_runner(model_dir, tmp_path, "--dataset_path", str(MULTI_TURN_TRAIN), "--algorithm_name", "GRPO",
                         "--group_size", "4", "--n_rollout_threads", "8", "--max_new_tokens", "16",
                         "--num_env_steps", "200", "--seed", "1", "--kv_cache_mib", "2")
    try:
        metrics = runner.train_iteration()
        prompt, prefilled = metrics["perf/prompt_tokens_per_episode"], metrics["perf/prefilled_tokens_per_episode"]
        assert 0 < prefilled < prompt, (prefilled, prompt)
        # --kv_cache_mib sizes the cache the chats stay in: 2 MiB of this model's keys and values
        # (2 layers, one key-value head of 32, float32: 512 bytes a token) hold 4,096 tokens.
        assert runner.engine.info["kv_cache_tokens"] == (2 << 20) // 512
    finally:
        runner.engine.close()


def test_a_resumed_run_continues_exactly(model_dir, tmp_path):
    """Two iterations straight, or one, a checkpoint, and one more in a new process's engine:
    the same actions are sampled and the same actor comes out."""
    def actor(runner):
        return [parameter.detach().clone() for parameter in runner.policy.actor_parameters()]

    straight = make_runner(model_dir, tmp_path / "a", "--save_interval", "1")
    try:
        straight.train_iteration()
        straight.save()
        run_dir = straight.run_dir
        second = straight._play()
        straight.engine.close()
        resumed = make_runner(model_dir, tmp_path / "b", "--resume", str(run_dir))
        try:
            assert resumed.iteration == 1
            again = resumed._play()
            assert [a.action for a in again.actions] == [a.action for a in second.actions]
            assert [a.sample_logprobs for a in again.actions] == [a.sample_logprobs for a in second.actions]
            assert all(torch.equal(a, b) for a, b in zip(actor(resumed), actor(straight)))
        finally:
            resumed.engine.close()
    finally:
        straight.engine.close()


# ---- the same choice in fcenv generate and process-rewards, and the independent held-out client ----
def command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)


@pytest.fixture(scope="module")
def trained_run(model_dir, tmp_path_factory) -> Path:
    """A short run of the tests' model (the hf engine): an actor that differs from the base."""
    return make_runner(model_dir, tmp_path_factory.mktemp("run"), "--rollout_engine", "hf", "--save_interval", "1",
                       "--num_env_steps", "12").run()


def first_entries(data: Path, count: int, folder: Path) -> Path:
    """A question file of ``data``'s first ``count`` entries, with their answers beside it."""
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    for source, target in ((data, folder / data.name),
                           (data.parent / "possible_answer" / data.name, folder / "possible_answer" / data.name)):
        target.write_text("".join(source.read_text().splitlines(keepends=True)[:count]))
    return folder / data.name


def test_generate_answers_greedy_with_vllm_as_with_hf(trained_run, tmp_path):
    """`fcenv generate --run` with either engine: the same greedy answers (float32), one
    engine serving both question files."""
    files = (first_entries(TINY_EVAL, 60, tmp_path / "data"), first_entries(MULTI_TURN_EVAL, 12, tmp_path / "data"))
    for engine in ("hf", "vllm"):
        done = command("-m", "fcenv", "generate", "--run", str(trained_run), "--data", *map(str, files), "--out",
                       str(tmp_path / engine), "--greedy", "--max_new_tokens", "24", "--no-progress",
                       "--rollout_engine", engine)
        assert done.returncode == 0, done.stderr[-3000:]
    for data in files:
        name = f"{data.stem}_result.json"
        answers = {engine: [json.loads(line) for line in (tmp_path / engine / name).read_text().splitlines()]
                   for engine in ("hf", "vllm")}
        # Each line records its engine (fcenv/result_record.py) and the seconds its calls took;
        # everything else is the same, token counts included.
        assert [line["fcenv_generate"].pop("engine") for line in answers["vllm"]] == ["vllm"] * len(answers["vllm"])
        assert [line["fcenv_generate"].pop("engine") for line in answers["hf"]] == ["hf"] * len(answers["hf"])
        for line in answers["vllm"] + answers["hf"]:
            assert line.pop("latency")
        assert answers["vllm"] == answers["hf"]


def test_process_rewards_samples_with_vllm(trained_run, tmp_path):
    done = command("-m", "fcenv", "process-rewards", "--run", str(trained_run), "--rollout_engine", "vllm",
                   "--tasks", "3", "--trajectories", "2", "--completions", "2", "--threads", "4", "--out",
                   str(tmp_path), "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["trajectories"] == 6 and summary["completions"] == 2 * summary["states_valued"] > 0
    for line in (tmp_path / "trajectories.jsonl").read_text().splitlines():
        steps = json.loads(line)["steps"]
        assert steps and all(step["value"] in (0.0, 0.5, 1.0) for step in steps)


def test_the_held_out_client_scores_greedy_answers_from_vllm_as_from_generate(trained_run, tmp_path):
    """bench/heldout.py --rollout_engine vllm (vLLM's LLM on the checkpoint's actor, its adapter merged by PEFT)
    against plain transformers generate: the same greedy verdicts and rewards, start and end,
    single-turn and multi-turn (played step by step)."""
    for data, limit in ((TINY_EVAL, "30"), (MULTI_TURN_EVAL, "8")):
        reports = {}
        for engine in ("hf", "vllm"):
            out = tmp_path / f"{data.stem}_{engine}.json"
            done = command("-m", "bench.heldout", str(trained_run), "--dataset_path", str(data), "--limit", limit,
                           "--samples", "1", "--rollout_engine", engine, "--out", str(out))
            assert done.returncode == 0, done.stderr[-3000:]
            reports[engine] = json.loads(out.read_text())["reports"]
        assert [r["checkpoint"] for r in reports["vllm"]] == ["iter_000000", "iter_000003"]
        for hf, vllm in zip(reports["hf"], reports["vllm"]):
            assert vllm["greedy_accuracy"] == hf["greedy_accuracy"]
            assert vllm["greedy_reward"] == pytest.approx(hf["greedy_reward"], abs=1e-9)
            assert 0.0 <= vllm["sampled_accuracy"] <= 1.0


def test_bench_gpu_measures_the_vllm_engine(vllm_ready, tmp_path):
    """bench/bench_gpu.py's vLLM section, run on the CPU with a small shape (on a GPU it is the
    0.5B Qwen2 shape in bfloat16): every action of full length, and in float32 the engine's
    log-probs are the trainer's."""
    out = tmp_path / "gpu.json"
    done = command("-m", "bench.bench_gpu", "--shape", "small", "--n_rollout_threads", "4", "--context", "32", "--new_tokens",
                   "8", "--repeats", "1", "--rollout_engine", "vllm", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())["vllm"]
    assert report["action_lengths"] == [8]
    assert report["engine_logprob_gap"] < TOLERANCE
    seconds = report["seconds"]
    assert seconds["iteration"] == pytest.approx(seconds["rollout"] + seconds["update"] + seconds["sync"])
    assert "rollout (vllm engine)" in done.stdout and "iteration: vllm" in done.stdout
