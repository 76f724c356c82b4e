"""The vLLM rollout engine: samples continuations of token contexts in a vLLM process.

vLLM runs in a process of its own (``algos/vllm_worker.py``), started with the interpreter of
the venv that holds it: ``.vllm-venv`` beside the package when there is one (``make vllm``
builds it; vLLM pins a transformers older than the trainer's), else the given ``python``, else
this interpreter (a GPU user's venv with ``pip install vllm``). The two processes exchange
token ids and floats only: prompts go in as ids and actions come back as ids, with no text
in between, so what the trainer scores is what the engine sampled.

Every distribution is the base model's divided by one temperature, with no top-k, top-p or
penalties, as in ``algos.policy``: the returned log-probs are those of the sampled tokens
under it (vLLM's processed log-probs), in float32 equal to the trainer's up to float rounding.
The LoRA actor is synced by ``load_adapter(folder)`` after each update: the next ``sample``
uses the adapter saved there (``save_pretrained``), under a new adapter id.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from multiprocessing import Pipe
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().with_name("vllm_worker.py")
# The venv `make vllm` builds beside the package (vLLM and its pins, apart from the trainer's).
VLLM_VENV = ROOT / ".vllm-venv"


class EngineError(RuntimeError):
    """The vLLM engine could not start, or a request failed in it (the message says why)."""


def default_python() -> str:
    """The interpreter the engine runs with: ``.vllm-venv``'s when built, else this one."""
    venv_python = VLLM_VENV / "bin" / "python"
    return str(venv_python) if venv_python.exists() else sys.executable


class VLLMEngine:
    """vLLM serving one local Hugging Face model folder (float32 by default), with an
    optional PEFT LoRA adapter.

    ``max_lora_rank``: the largest LoRA rank ``load_adapter`` will be given (None: no
    adapters). ``kv_cache_bytes``: the KV cache's size (on a CPU, memory reserved up front).
    ``threads``: CPU threads of the engine's process (None: one per core), one by default
    like the trainer's ``--torch_threads``: on a machine whose cores are busy with other work
    an engine with more OpenMP threads than free cores waits on its slowest thread at every
    step (measured on 2 shared cores: 2 threads were several times slower than 1)."""

    def __init__(self, model: str | Path, *, max_lora_rank: int | None = None, dtype: str = "float32",
                 max_model_len: int | None = None, kv_cache_bytes: int = 1 << 30, seed: int = 0,
                 threads: int | None = 1, python: str | None = None, enforce_eager: bool = True):
        model = Path(model)
        if not (model / "config.json").is_file():
            raise EngineError(f"{model}: not a Hugging Face model folder (no config.json)")
        self.model = model
        self.python = python or default_python()
        settings = {"model": str(model), "dtype": dtype, "seed": seed, "max_model_len": max_model_len,
                    "enforce_eager": enforce_eager, "max_lora_rank": max_lora_rank,
                    "kv_cache_bytes": kv_cache_bytes}
        self._connection, child = Pipe()
        try:
            self._process = subprocess.Popen([self.python, str(WORKER), str(child.fileno())],
                                             pass_fds=[child.fileno()],
                                             env=_engine_environment(threads, enforce_eager))
        except OSError as error:
            raise EngineError(f"cannot start the vLLM engine with {self.python}: {error}") from None
        finally:
            child.close()
        self._connection.send(settings)
        status, info = self._receive("starting")
        if status != "ready":
            self._process.wait()
            raise EngineError(f"the vLLM engine ({self.python}) did not start: {info}")
        self.info = info
        self.adapter_version = 0

    # ---- requests ----------------------------------------------------------------------
    def sample(self, contexts: list[list[int]], max_new_tokens: int, *, stop_ids: list[int],
               greedy: bool = False, temperature: float = 1.0, seed: int | None = None,
               entropy_tokens: int = 0) -> tuple[list[list[int]], list[list[float]], list[float] | None]:
        """One continuation of each context: its tokens (the stop token included when one
        was produced), their log-probs under the sampling distribution (the model's divided
        by ``temperature``; greedy picks its most likely token and reports it there too), and
        with ``entropy_tokens`` each action's mean normalised entropy (entropy / log(vocabulary))
        over its first ``entropy_tokens`` tokens, else None. ``seed``: row ``i`` draws from
        its own generator seeded ``seed + i`` (the same call samples the same actions again);
        None draws from the engine's own stream."""
        if temperature <= 0:
            raise ValueError(f"the temperature must be positive, not {temperature} (greedy=True picks the argmax)")
        if not contexts:
            return [], [], [] if entropy_tokens > 0 else None
        if any(not context for context in contexts):
            raise ValueError("every context needs at least one token")
        result = self._request("sample", contexts=[[int(t) for t in c] for c in contexts],
                               max_new_tokens=int(max_new_tokens), greedy=bool(greedy),
                               temperature=float(temperature), stop_ids=sorted({int(i) for i in stop_ids}),
                               seed=None if seed is None else int(seed), entropy_tokens=int(entropy_tokens))
        return result["actions"], result["logprobs"], result["entropies"]

    def load_adapter(self, path: str | Path | None) -> None:
        """The next ``sample`` uses the PEFT LoRA adapter saved in ``path`` (the folder with
        ``adapter_config.json``), read afresh even when the folder was used before; None:
        the base model alone."""
        if path is None:
            self.adapter_version = self._request("load_adapter", path=None)
            return
        path = Path(path)
        config = path / "adapter_config.json"
        if not config.is_file():
            raise EngineError(f"{path}: not a PEFT adapter folder (no adapter_config.json)")
        rank = json.loads(config.read_text()).get("r")
        if not isinstance(rank, int) or self._max_lora_rank is None or rank > self._max_lora_rank:
            raise EngineError(f"{config}: field r = {rank}, but the engine was started for LoRA ranks up to "
                              f"{self._max_lora_rank} (max_lora_rank)")
        self.adapter_version = self._request("load_adapter", path=str(path.resolve()))

    @property
    def _max_lora_rank(self) -> int | None:
        return self.info.get("max_lora_rank")

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self._connection.send(("close", {}))
                self._connection.recv()
            except (EOFError, OSError):
                pass
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._connection.close()

    def __enter__(self) -> VLLMEngine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- plumbing ----------------------------------------------------------------------
    def _request(self, command: str, **payload):
        if self._process.poll() is not None:
            raise EngineError(f"the vLLM engine has exited (status {self._process.returncode})")
        self._connection.send((command, payload))
        status, result = self._receive(command)
        if status != "ok":
            raise EngineError(f"vLLM engine, {command}: {result}")
        return result

    def _receive(self, what: str):
        # The engine answers every message; only its death leaves one unanswered.
        while not self._connection.poll(1.0):
            if self._process.poll() is not None:
                raise EngineError(f"the vLLM engine ({self.python}) exited with status "
                                  f"{self._process.returncode} while {what} (its error is printed above)")
        try:
            return self._connection.recv()
        except EOFError:
            self._process.wait()
            raise EngineError(f"the vLLM engine ({self.python}) exited with status "
                              f"{self._process.returncode} while {what} (its error is printed above)") from None


def _engine_environment(threads: int | None, eager: bool) -> dict[str, str]:
    """The engine process's environment: this one's, with vLLM's logging cut to errors; with
    ``threads``, that many OpenMP threads (vLLM binds no threads to cores when it runs
    in-process, as it does there); ``eager``: nothing compiled, not even the helpers vLLM
    compiles apart from the model (the log-prob ranks' kernel took 30 s to 3 min to compile at
    the first request on 2 shared cores)."""
    env = dict(os.environ)
    env.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    if eager:
        env["TORCHDYNAMO_DISABLE"] = "1"
    return env
