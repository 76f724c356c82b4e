"""vLLM's side of ``bench/heldout.py --engine vllm``: answers from vLLM's own API.

Run by ``bench/heldout.py`` with the interpreter of the venv that holds vLLM (``.vllm-venv``:
vLLM pins an older transformers than fcenv's); it imports vLLM and the standard library only.
vLLM's ``LLM`` loads the run's saved base in float32 with LoRA enabled, and each request names
the checkpoint whose actor adapter answers (a ``LoRARequest`` of the adapter folder as PEFT
saved it). Nothing of the trainer's engine (``algos/rollout/vllm*.py``) is used.

The settings come as the one argument (JSON: ``base``, ``max_lora_rank``, ``max_model_len``,
``seed``, ``stop_ids``); then each line on stdin is a request (``adapter``: the adapter folder,
``prompts``: token ids, ``greedy``, ``max_new_tokens``) and its answer is one line on stdout:
the generated token ids of each prompt (``{"tokens": [...]}``). vLLM prints its own messages on
stderr.
"""

from __future__ import annotations

import json
import os
import sys

# The ranks vLLM's LoRA takes as its largest (``max_lora_rank``).
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def main() -> None:
    settings = json.loads(sys.argv[1])
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever vLLM prints goes to stderr: stdout carries the answers alone
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt
    from vllm.lora.request import LoRARequest

    llm = LLM(model=settings["base"], dtype="float32", seed=settings["seed"], max_model_len=settings["max_model_len"],
              enable_lora=True, max_loras=1, max_lora_rank=next(r for r in LORA_RANKS if r >= settings["max_lora_rank"]),
              skip_tokenizer_init=True,  # prompts come as token ids, rendered by the tokenizer's chat template
              generation_config="vllm",  # the sampling settings below, not the checkpoint's defaults
              enforce_eager=True, kv_cache_memory_bytes=1 << 30, disable_log_stats=True)
    adapters: dict[str, LoRARequest] = {}
    for line in sys.stdin:
        request = json.loads(line)
        path = request["adapter"]  # None: the base alone
        adapter = None if path is None else adapters.setdefault(
            path, LoRARequest(f"actor{len(adapters) + 1}", len(adapters) + 1, path))
        # Greedy, or the request's temperature with no top-k or top-p: the distribution trained.
        params = SamplingParams(temperature=0.0 if request["greedy"] else request.get("temperature", 1.0), top_p=1.0, top_k=0,
                                max_tokens=request["max_new_tokens"], stop_token_ids=settings["stop_ids"],
                                detokenize=False)
        outputs = llm.generate([TokensPrompt(prompt_token_ids=ids) for ids in request["prompts"]], params,
                               lora_request=adapter, use_tqdm=False)
        answers.write(json.dumps({"tokens": [list(output.outputs[0].token_ids) for output in outputs]}) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
