"""The ``vllm`` engine's process: vLLM in-process, serving ``fcenv.algos.rollout.vllm.VLLMEngine``.

Run by ``VLLMEngine`` as a script with the interpreter of the venv that holds vLLM
(``.vllm-venv`` by default): it imports vLLM, torch, safetensors and the standard library only,
never fcenv or algos, so that venv needs neither our package nor our pins. It talks to its parent
over one end of a socket pair whose file descriptor is its only argument (``serve``: the engine's
settings first, then each request in turn). vLLM runs in this process, with no processes of its
own (``Worker``); ``Worker.sync`` folds the actor into the base weights, ``SamplingExtras`` adds
the first tokens' entropy and greedy rows' temperature. Docs: docs/rollout-engines.md.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

# The key of the per-request settings in ``SamplingParams.extra_args``.
EXTRAS = "fcenv"
# PEFT's names of a saved adapter's tensors: <prefix><module>.lora_A.weight
PEFT_PREFIX = "base_model.model."
# ... and of a layer's trained rows (PEFT's trainable tokens): <prefix><module>.token_adapter.trainable_tokens_delta
TOKEN_ROWS = ".token_adapter.trainable_tokens_delta"


def serve(fd: int) -> None:
    """Answer the parent over the connection ``fd`` (``multiprocessing.connection``): the first
    message is the engine's settings, then each ``(command, payload)`` is a ``Worker`` method
    called and its result sent back, until ``close`` or the parent is gone."""
    from multiprocessing.connection import Connection

    connection = Connection(fd)
    settings = connection.recv()
    try:
        worker = Worker(settings, sampling_extras_class())
    except Exception as error:  # reported to the parent, which raises it there
        traceback.print_exc()
        connection.send(("error", f"{type(error).__name__}: {error}"))
        return
    connection.send(("ready", worker.info()))
    while True:
        try:
            command, payload = connection.recv()
        except EOFError:  # the parent is gone
            return
        if command == "close":
            connection.send(("ok", None))
            return
        try:
            result = getattr(worker, command)(**payload)
        except Exception as error:
            traceback.print_exc()
            connection.send(("error", f"{type(error).__name__}: {error}"))
        else:
            connection.send(("ok", result))


class Worker:
    """vLLM in this process: no engine-core or worker processes of its own (``uni``). On a CPU,
    vLLM's own processes poll each other and fight the trainer for the cores, and in the
    trainer's process vLLM would bind the OpenMP threads and disable ``torch.set_num_threads``."""

    def __init__(self, settings: dict, extras: type):
        from vllm import LLM

        self.extras = extras
        self.model = Path(settings["model"])
        self.llm = LLM(
            model=settings["model"],
            dtype=settings["dtype"],
            seed=settings["seed"],
            max_model_len=settings["max_model_len"],
            enforce_eager=settings["enforce_eager"],
            skip_tokenizer_init=True,  # prompts are token ids; actions come back as ids
            logprobs_mode="processed_logprobs",  # after temperature: the sampling distribution
            logits_processors=[extras],
            kv_cache_memory_bytes=settings["kv_cache_bytes"],
            # Whole prompts per step: vLLM rewinds the generator of a row whose prompt was cut
            # into chunks, which a CPU generator cannot do (per-row seeds then crash the batch).
            enable_chunked_prefill=False,
            distributed_executor_backend="uni",
            disable_log_stats=True,
            **({"gpu_memory_utilization": settings["gpu_memory_utilization"]}
               if settings.get("gpu_memory_utilization") else {}),
        )
        # vLLM's layers that hold several checkpoint weights (qkv_proj: q_proj, k_proj, v_proj):
        # a reloaded layer is given all of its parts.
        packed = self.llm.apply_model(lambda model: dict(getattr(model, "packed_modules_mapping", {})))[0]
        self.siblings = {part: list(parts) for parts in packed.values() for part in parts}
        self.folded: set[str] = set()  # modules whose weights differ from the checkpoint's
        self.calls = 0

    def info(self) -> dict:
        import torch

        config = self.llm.llm_engine.model_config
        scheduler = self.llm.llm_engine.vllm_config.scheduler_config
        cache = self.llm.llm_engine.vllm_config.cache_config
        return {"vllm": __import__("vllm").__version__, "threads": torch.get_num_threads(),
                "vocab_size": config.get_vocab_size(), "max_model_len": config.max_model_len,
                "max_num_seqs": scheduler.max_num_seqs, "max_num_batched_tokens": scheduler.max_num_batched_tokens,
                "kv_cache_tokens": cache.num_gpu_blocks * cache.block_size}

    def sync(self, adapter: str | None) -> dict:
        """The next samples use the base with the PEFT LoRA adapter saved in the folder
        ``adapter`` folded in (None: the base alone). Returns the number of adapted modules and
        the seconds it took.

        Each adapted linear layer gets ``W + B A * scaling``, computed as PEFT computes it,
        reloaded in place with vLLM's ``reload_weights`` (with the other weights vLLM packs into
        the same layer, e.g. q, k and v); trained rows of the embedding or output layer (PEFT's
        trainable tokens) replace the base's rows; the prefix cache, whose blocks hold the
        previous weights' keys and values, is emptied. Sampling then costs what the base model
        costs: vLLM's CPU LoRA kernels gather each token's adapter matrices, 82% of a profile on
        long prompts and an answer 2.4 times dearer than the base's on short ones
        (docs/benchmarks/real-model.md)."""
        started = time.perf_counter()
        deltas = lora_deltas(Path(adapter)) if adapter else {}
        # Modules folded before and not now go back to the checkpoint's weights.
        # (A top-level module, the output layer ``lm_head``, has no parent.)
        modules = {parent + dot + part for parent, dot, leaf in (m.rpartition(".") for m in deltas.keys() | self.folded)
                   for part in self.siblings.get(leaf, [leaf])}
        weights, found = [], set()
        for name, tensor in checkpoint_tensors(self.model, modules):
            module, kind = name.rsplit(".", 1)
            if kind == "weight" and module in deltas:
                change = deltas[module]
                if isinstance(change, tuple):  # trained rows (PEFT's trainable tokens) replace the base's
                    indices, rows = change
                    tensor = tensor.clone()
                    tensor[indices] = rows.to(tensor.dtype)
                else:
                    tensor = (tensor.float() + change).to(tensor.dtype)
                found.add(module)
            weights.append((name, tensor))
        missing = sorted(deltas.keys() - found)
        if missing:
            raise ValueError(f"{adapter}: the adapter adapts {missing[:3]}, which the checkpoint in {self.model} "
                             "does not hold")
        if weights:
            self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": iter(weights),
                                                              "is_checkpoint_format": True})
        if not self.llm.reset_prefix_cache():
            raise RuntimeError("vLLM could not empty its prefix cache (cached keys and values of the previous weights)")
        self.folded = set(deltas)
        return {"modules": len(deltas), "seconds": time.perf_counter() - started}

    def sample(self, contexts: list[list[int]], max_new_tokens: int, greedy: bool, temperature: float,
               stop_ids: list[int], seed: int | None, entropy_tokens: int) -> dict:
        import torch
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        self.calls += 1
        # The logits processor is asked only where it is needed (it costs a pass over the
        # vocabulary per token and row): the first tokens' entropy, greedy rows' temperature.
        extras = entropy_tokens > 0 or (greedy and temperature != 1.0)
        keys = [f"{self.calls}:{row}" for row in range(len(contexts))]
        params = [
            SamplingParams(
                n=1, temperature=0.0 if greedy else temperature, top_p=1.0, top_k=0, min_p=0.0,
                max_tokens=max_new_tokens, stop_token_ids=list(stop_ids), ignore_eos=True, logprobs=0,
                detokenize=False,
                extra_args={EXTRAS: {"key": key, "temperature": temperature, "greedy": greedy,
                                     "entropy_tokens": entropy_tokens}} if extras else None)
            for row, key in enumerate(keys)]
        prompts = [TokensPrompt(prompt_token_ids=list(context)) for context in contexts]
        if seed is not None:
            # The batch's random numbers (vLLM's sampler draws from the default generators
            # of this process); this call's rows are the whole batch, so the seed replays it.
            torch.manual_seed(seed)
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        actions, logprobs, entropies = [], [], []
        for key, output in zip(keys, outputs):
            completion = output.outputs[0]
            tokens = list(completion.token_ids)
            actions.append(tokens)
            logprobs.append([step[token].logprob for token, step in zip(tokens, completion.logprobs)])
            if entropy_tokens > 0:
                recorded = self.extras.entropies.pop(key, {})
                first = [recorded[step] for step in range(min(entropy_tokens, len(tokens)))]
                entropies.append(sum(first) / len(first) if first else 0.0)
        # Prompt tokens vLLM's prefix cache held (an episode's earlier steps): not run again.
        cached = [int(output.num_cached_tokens or 0) for output in outputs]
        return {"actions": actions, "logprobs": logprobs, "entropies": entropies, "cached": cached}


def lora_deltas(folder: Path) -> dict:
    """Each adapted module's weight change ``B A * scaling`` (float32), keyed by the module's
    name in the base checkpoint, from a PEFT LoRA adapter folder (``save_pretrained``),
    computed in PEFT's order so the folded weights equal the ``hf`` engine's."""
    import torch
    from safetensors.torch import load_file

    config_file = folder / "adapter_config.json"
    config = json.loads(config_file.read_text())
    unsupported = {"use_dora": bool(config.get("use_dora")), "fan_in_fan_out": bool(config.get("fan_in_fan_out")),
                   "rank_pattern": bool(config.get("rank_pattern")), "alpha_pattern": bool(config.get("alpha_pattern")),
                   "peft_type": config.get("peft_type", "LORA") != "LORA"}
    refused = [name for name, bad in unsupported.items() if bad]
    if refused:
        raise ValueError(f"{config_file}: field {refused[0]} = {config.get(refused[0])!r} is not supported by the "
                         "vllm engine (plain LoRA only)")
    rank, alpha = int(config["r"]), float(config["lora_alpha"])
    scaling = alpha / math.sqrt(rank) if config.get("use_rslora") else alpha / rank
    tensors = load_file(str(folder / "adapter_model.safetensors"))
    deltas = {}
    rows_of = config.get("trainable_token_indices") or {}
    for name, a in tensors.items():
        if name.endswith(TOKEN_ROWS):  # trained rows of the embedding or output layer: (their indices, values)
            module = name.removeprefix(PEFT_PREFIX).removesuffix(TOKEN_ROWS)
            indices = rows_of.get(module.rsplit(".", 1)[-1]) if isinstance(rows_of, dict) else rows_of
            if not indices:
                raise ValueError(f"{config_file}: no trainable_token_indices for {module}, whose rows {folder} holds")
            deltas[module] = (torch.tensor(indices), a.to(torch.float32))
            continue
        if ".lora_A." not in name:
            if ".lora_B." not in name:
                raise ValueError(f"{folder}: tensor {name} is not a LoRA matrix of a linear layer (the vllm engine "
                                 "folds lora_A/lora_B pairs only)")
            continue
        module = name.removeprefix(PEFT_PREFIX).split(".lora_A.")[0]
        b = tensors[name.replace(".lora_A.", ".lora_B.")]
        deltas[module] = (b.to(torch.float32) @ a.to(torch.float32)) * scaling
    return deltas


def checkpoint_tensors(model: Path, modules: set[str]):
    """``(name, tensor)`` of the checkpoint's tensors that belong to ``modules`` (their weights
    and biases), read from its safetensors files (memory-mapped: only those are read)."""
    from safetensors import safe_open

    files = sorted(model.glob("*.safetensors"))
    if modules and not files:
        raise ValueError(f"{model}: no safetensors files to fold the adapter into")
    for file in files:
        with safe_open(str(file), "pt") as handle:
            for name in handle.keys():
                if name.rsplit(".", 1)[0] in modules:
                    yield name, handle.get_tensor(name)


def sampling_extras_class() -> type:
    """``SamplingExtras``, defined when the engine starts: it derives from vLLM's
    ``LogitsProcessor``, and nothing of vLLM is imported before then."""
    import torch
    from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

    class SamplingExtras(LogitsProcessor):
        """Per row of the batch with fcenv's extras: records the normalised entropy of the
        tempered distribution while the action is within its first ``entropy_tokens`` tokens
        (ARPO's branching signal; keyed by the number of tokens generated so far, so a step vLLM
        computes twice is recorded once), and divides greedy rows' logits by the temperature (the
        argmax is unchanged; vLLM leaves greedy logits untempered, while the trainer's
        distribution is always the base one divided by the temperature, so a greedy token's
        log-prob is reported under it, as the ``hf`` engine does). It sees the very logits each
        token is drawn from, and only for the requests that ask."""

        # request key -> {step: normalised entropy}; read and emptied by Worker.sample (same process)
        entropies: dict[str, dict[int, float]] = {}

        def __init__(self, vllm_config, device, is_pin_memory):
            self.rows: dict[int, tuple[dict, list[int]]] = {}

        def is_argmax_invariant(self) -> bool:
            return False  # applied to greedy rows too, before the greedy pick

        def update_state(self, batch_update: BatchUpdate | None) -> None:
            if batch_update is None:
                return
            for index in batch_update.removed:
                self.rows.pop(index, None)
            for index, params, _, output in batch_update.added:
                extras = (params.extra_args or {}).get(EXTRAS)
                if extras:
                    self.rows[index] = (extras, output)
                else:
                    self.rows.pop(index, None)
            for source, target, direction in batch_update.moved:
                moving = self.rows.pop(source, None)
                if direction == MoveDirectionality.SWAP:
                    staying = self.rows.pop(target, None)
                    if staying is not None:
                        self.rows[source] = staying
                else:
                    self.rows.pop(target, None)
                if moving is not None:
                    self.rows[target] = moving

        def apply(self, logits: torch.Tensor) -> torch.Tensor:
            if not self.rows:
                return logits
            measured = [(index, extras, len(output)) for index, (extras, output) in self.rows.items()
                        if len(output) < extras["entropy_tokens"]]
            if measured:
                rows = torch.tensor([index for index, _, _ in measured], device=logits.device)
                temperatures = torch.tensor([[extras["temperature"]] for _, extras, _ in measured],
                                            dtype=logits.dtype, device=logits.device)
                logp = torch.log_softmax(logits[rows] / temperatures, dim=-1)
                entropy = (-(logp.exp() * logp).sum(-1) / math.log(logits.shape[-1])).tolist()
                for (_, extras, step), value in zip(measured, entropy):
                    SamplingExtras.entropies.setdefault(extras["key"], {})[step] = value
            greedy = [(index, extras["temperature"]) for index, (extras, _) in self.rows.items()
                      if extras["greedy"] and extras["temperature"] != 1.0]
            for index, temperature in greedy:
                logits[index] /= temperature
            return logits

    return SamplingExtras


if __name__ == "__main__":
    # Run as a script, Python puts this file's folder first on the path, where algos/rollout/vllm.py
    # would shadow the vllm package.
    here = Path(__file__).resolve().parent
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != here]
    # The engine's process is set up here, not by its user: vLLM in this process (see
    # ``Worker``), models from local folders only.
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ["HF_HUB_OFFLINE"] = "1"
    serve(int(sys.argv[1]))
