"""The ``vllm`` rollout engine: sampling in a vLLM process of its own.

vLLM runs in a process of its own (``algos/rollout/vllm_worker.py``), started with the
interpreter of the venv that holds it: ``.vllm-venv`` beside the package when there is one
(``make vllm`` builds it: vLLM pins a transformers older than the trainer's), else this
interpreter (a GPU user's venv with ``pip install vllm``). The two processes exchange token
ids and floats only: contexts go in as ids and actions come back as ids, with no text in
between, so what the trainer scores is what the engine sampled.

Every distribution is the base model's with the actor, divided by the policy's temperature,
with no top-k, top-p or penalties, as in ``fcenv.algos.model.policy``: the returned log-probs are
those of the sampled tokens under it (vLLM's processed log-probs). ``sync(policy)`` saves the
actor adapter (PEFT ``save_pretrained``) and the engine folds it into its weights, as the
``hf`` engine folds it for sampling: in float32 the log-probs equal the trainer's up to float
rounding (``exact_logprobs``), in bfloat16 they do not, and the trainer rescores and logs the
difference (``rollout/engine_logprob_gap``).

Randomness comes from the trainer: each call seeds the engine's random numbers with a number
drawn from the ``generator`` passed to ``sample``, and the engine's batch is that call's rows
alone, so a run (and a resumed run) samples the same actions again. (One seed per call, not
per row: vLLM draws a seeded row's noise apart from the batch's, which cost a third of its
CPU sampling speed.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import torch

from fcenv.algos.model.policy import ACTOR, Policy
from fcenv.algos.rollout.engine import EngineSettings, Samples, register_engine
from fcenv.algos.rollout.worker_link import EngineError, WorkerLink

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().with_name("vllm_worker.py")
# The venv `make vllm` builds beside the package (vLLM and its pins, apart from the trainer's).
VLLM_VENV = ROOT / ".vllm-venv"
# torch.manual_seed takes any integer below 2**63.
SEED_BOUND = 2**63 - 1


def default_python() -> str:
    """The interpreter the engine runs with: ``.vllm-venv``'s when built, else this one."""
    venv_python = VLLM_VENV / "bin" / "python"
    return str(venv_python) if venv_python.exists() else sys.executable


def vllm_missing(python: str) -> str | None:
    """Why ``python`` cannot run the engine (None when it can), found without importing vLLM."""
    try:
        probe = subprocess.run([python, "-c", "import importlib.util, sys; "
                                "sys.exit(importlib.util.find_spec('vllm') is None)"],
                               capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"cannot run {python}: {error}"
    if probe.returncode != 0:
        return f"vLLM is not installed for {python} (`make vllm` builds .vllm-venv with it)"
    return None


@register_engine("vllm")
class VLLMEngine:
    """vLLM serving the policy's base model (its folder, in the policy's dtype) with the actor
    folded in; its KV cache is ``settings.kv_cache_mib`` (on a CPU, memory reserved up front).
    The engine's process runs as many CPU threads as this one's torch (the trainer's
    ``--torch_threads``): sampling and training take turns on the same cores."""

    def __init__(self, policy: Policy, settings: EngineSettings, *, python: str | None = None):
        model = Path(settings.model_path)
        if not (model / "config.json").is_file():
            raise EngineError(f"{model}: not a Hugging Face model folder (no config.json)")
        self.python = python or default_python()
        missing = vllm_missing(self.python)
        if missing:
            raise EngineError(f"--rollout_engine vllm: {missing}")
        self.policy = policy
        self.stop_ids = list(policy.stop_ids)
        self.exact_logprobs = policy.samples_exactly
        dtype = next(policy.base.parameters()).dtype
        on_cpu = policy.device.type == "cpu"
        eager = on_cpu and not settings.compile
        worker_settings = {
            "model": str(model), "dtype": str(dtype).removeprefix("torch."), "seed": settings.seed,
            "max_model_len": settings.context_window, "kv_cache_bytes": settings.kv_cache_mib << 20,
            # On a CPU nothing is compiled unless asked (a first compile takes minutes on 2 cores,
            # a cached one most of a minute; the compiled forward pass takes half the time);
            # on a GPU, vLLM's compiled model and CUDA graphs, and a share of the GPU left to the trainer.
            "enforce_eager": eager, "gpu_memory_utilization": None if on_cpu else 0.3,
        }
        self._folder = Path(tempfile.mkdtemp(prefix="fcenv-vllm-actor-"))
        try:
            self._worker = WorkerLink("the vLLM engine (--rollout_engine vllm)", self.python, WORKER,
                                      _engine_environment(torch.get_num_threads(), eager))
            self._worker.send(worker_settings, "starting")
            status, info = self._worker.receive("starting")
        except EngineError:
            shutil.rmtree(self._folder, ignore_errors=True)
            raise
        if status != "ready":
            self._worker.process.wait()
            shutil.rmtree(self._folder, ignore_errors=True)
            raise EngineError(f"the vLLM engine ({self.python}) did not start: {info} (its log: {self._worker.log})")
        self.info = info
        # The actor is folded in at the first sample: a resumed run or a warm-up changes it
        # after the engine starts.
        self._synced = False

    @staticmethod
    def missing() -> str | None:
        """Why the engine cannot run here, found before any model loads (None when it can)."""
        return vllm_missing(default_python())

    def sync(self, policy: Policy) -> None:
        """Fold ``policy``'s actor, as it is now, into the engine's weights."""
        self.policy = policy
        # The adapter alone: with the output layer adapted PEFT would also save that layer's frozen
        # weights (save_embedding_layers), which the engine already has.
        policy.model.save_pretrained(str(self._folder), selected_adapters=[ACTOR], save_embedding_layers=False)
        self._worker.request("sync", adapter=str(self._folder / ACTOR))
        self._synced = True

    def sample(
        self,
        contexts: Sequence[Sequence[int]],
        max_new_tokens: int,
        *,
        generator: torch.Generator | None = None,
        greedy: bool = False,
        entropy_tokens: int = 0,
    ) -> Samples:
        if not contexts:
            return Samples([], [], [])
        if any(len(context) == 0 for context in contexts):
            raise ValueError("every context needs at least one token")
        if not self._synced:
            self.sync(self.policy)
        seed = None
        if not greedy:
            device = generator.device if generator is not None else "cpu"
            seed = int(torch.randint(SEED_BOUND, (1,), generator=generator, device=device))
        result = self._worker.request("sample", contexts=[[int(t) for t in c] for c in contexts],
                               max_new_tokens=int(max_new_tokens), greedy=bool(greedy),
                               temperature=float(self.policy.temperature), stop_ids=self.stop_ids, seed=seed,
                               entropy_tokens=int(entropy_tokens))
        return Samples(result["actions"], result["logprobs"], result["entropies"], result.get("cached"))

    def close(self) -> None:
        self._worker.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> VLLMEngine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _engine_environment(threads: int, eager: bool) -> dict[str, str]:
    """The engine process's environment: this one's, with vLLM's logging cut to errors, and
    ``threads`` OpenMP threads (vLLM binds no threads to cores when it runs in-process, as it
    does there). ``eager``: nothing compiled, not even the helpers vLLM compiles apart from
    the model (the log-prob ranks' kernel took 30 s to 3 min to compile at the first request
    on 2 shared cores)."""
    env = dict(os.environ)
    env.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    env["OMP_NUM_THREADS"] = str(threads)
    if eager:
        env["TORCHDYNAMO_DISABLE"] = "1"
    return env
