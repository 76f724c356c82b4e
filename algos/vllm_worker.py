"""The vLLM engine's process: vLLM in-process, serving ``algos.vllm_engine.VLLMEngine``.

Run by ``VLLMEngine`` with the interpreter of the venv that holds vLLM (``.vllm-venv`` by
default), as a script: it imports vLLM, torch and the standard library only, never fcenv or
algos, so that venv needs neither our package nor our pins. It talks to its parent over one
end of a socket pair (``multiprocessing.connection``, whose file descriptor is its only
argument): the first message is the engine's settings, then each request is answered in turn.

vLLM runs in this process (no engine-core or worker processes of its own): on a CPU, vLLM's
own processes poll each other and fight the trainer for the cores, and in the trainer's
process vLLM would bind the OpenMP threads and disable ``torch.set_num_threads``.

Two things vLLM does not give are added by one logits processor (``SamplingExtras``), which
sees the very logits each token is drawn from: the normalised entropy of the first tokens of
each action (ARPO's branching signal), and the temperature for greedy rows (vLLM leaves greedy
logits untempered; the trainer's distribution is always the base one divided by the
temperature, so a greedy token's log-prob is reported under it, as ``Policy.sample`` does).
"""

from __future__ import annotations

import math
import os
import sys
import traceback

# The key of the per-request settings in ``SamplingParams.extra_args``.
EXTRAS = "fcenv"


def serve(fd: int) -> None:
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
    def __init__(self, settings: dict, extras: type):
        from vllm import LLM

        self.extras = extras
        self.llm = LLM(
            model=settings["model"],
            dtype=settings["dtype"],
            seed=settings["seed"],
            max_model_len=settings["max_model_len"],
            enforce_eager=settings["enforce_eager"],
            skip_tokenizer_init=True,  # prompts are token ids; actions come back as ids
            logprobs_mode="processed_logprobs",  # after temperature: the sampling distribution
            logits_processors=[extras],
            enable_lora=settings["max_lora_rank"] is not None,
            max_lora_rank=settings["max_lora_rank"] or 16,
            max_loras=1,
            kv_cache_memory_bytes=settings["kv_cache_bytes"],
            # Whole prompts per step: vLLM rewinds the generator of a row whose prompt was cut
            # into chunks, which a CPU generator cannot do (per-row seeds then crash the batch).
            enable_chunked_prefill=False,
            distributed_executor_backend="uni",
            disable_log_stats=True,
        )
        self.max_lora_rank = settings["max_lora_rank"]
        self.adapter = None
        self.versions = 0
        self.calls = 0

    def info(self) -> dict:
        import torch

        config = self.llm.llm_engine.model_config
        scheduler = self.llm.llm_engine.vllm_config.scheduler_config
        return {"vllm": __import__("vllm").__version__, "threads": torch.get_num_threads(),
                "vocab_size": config.get_vocab_size(), "max_model_len": config.max_model_len,
                "max_lora_rank": self.max_lora_rank, "max_num_seqs": scheduler.max_num_seqs,
                "max_num_batched_tokens": scheduler.max_num_batched_tokens}

    def load_adapter(self, path: str | None) -> int:
        """The next samples use the PEFT adapter in ``path`` (None: none), under a new name:
        vLLM's caches (the adapter's, and the KV prefix cache, which is keyed by the adapter's
        name and path) then cannot serve the previous version's weights."""
        from vllm.lora.request import LoRARequest

        previous = self.adapter
        self.adapter = None
        if path is not None:
            self.versions += 1
            self.adapter = LoRARequest(f"actor-{self.versions}", self.versions, path)
            if not self.llm.llm_engine.add_lora(self.adapter):
                raise RuntimeError(f"vLLM could not load the adapter in {path}")
        if previous is not None:
            self.llm.llm_engine.remove_lora(previous.lora_int_id)
        return self.versions if path is not None else 0

    def sample(self, contexts: list[list[int]], max_new_tokens: int, greedy: bool, temperature: float,
               stop_ids: list[int], seed: int | None, entropy_tokens: int) -> dict:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        self.calls += 1
        keys = [f"{self.calls}:{row}" for row in range(len(contexts))]
        params = [
            SamplingParams(
                n=1, temperature=0.0 if greedy else temperature, top_p=1.0, top_k=0, min_p=0.0,
                max_tokens=max_new_tokens, stop_token_ids=list(stop_ids), ignore_eos=True, logprobs=0,
                detokenize=False, seed=None if seed is None or greedy else seed + row,
                extra_args={EXTRAS: {"key": key, "temperature": temperature, "greedy": greedy,
                                     "entropy_tokens": entropy_tokens}})
            for row, key in enumerate(keys)]
        prompts = [TokensPrompt(prompt_token_ids=list(context)) for context in contexts]
        outputs = self.llm.generate(prompts, params, use_tqdm=False, lora_request=self.adapter)
        actions, logprobs, entropies = [], [], []
        for key, output in zip(keys, outputs):
            completion = output.outputs[0]
            tokens = list(completion.token_ids)
            actions.append(tokens)
            logprobs.append([step[token].logprob for token, step in zip(tokens, completion.logprobs)])
            recorded = self.extras.entropies.pop(key, {})
            first = [recorded[step] for step in range(min(entropy_tokens, len(tokens)))]
            entropies.append(sum(first) / len(first) if first else 0.0)
        return {"actions": actions, "logprobs": logprobs,
                "entropies": entropies if entropy_tokens > 0 else None}


def sampling_extras_class() -> type:
    """``SamplingExtras``, defined when the engine starts: it derives from vLLM's
    ``LogitsProcessor``, and nothing of vLLM is imported before then."""
    import torch
    from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

    class SamplingExtras(LogitsProcessor):
        """Per row of the batch with fcenv's extras: records the normalised entropy of the
        tempered distribution while the action is within its first ``entropy_tokens`` tokens
        (keyed by the number of tokens generated so far, so a step vLLM computes twice, as a
        chunked prompt's, is recorded once), and divides greedy rows' logits by the
        temperature (the argmax is unchanged)."""

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
    # The engine's process is set up here, not by its user: vLLM in this process (see the
    # module's docstring), models from local folders only.
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ["HF_HUB_OFFLINE"] = "1"
    serve(int(sys.argv[1]))
