"""vLLM's side of ``bench/heldout.py --rollout_engine vllm``: answers from vLLM's own API.

Run by ``bench/heldout.py`` with the interpreter of the venv that holds vLLM (``.vllm-venv``:
vLLM pins an older transformers than fcenv's); it imports vLLM and the standard library only.
vLLM's ``LLM`` loads, in float32, the folder it is given: the run's saved base, or the base with
a checkpoint's actor adapter merged in by PEFT (``bench/heldout.py`` merges it). Nothing of the
trainer's engine (``algos/rollout/vllm*.py``) is used.

The settings come as the one argument (JSON: ``model``, ``max_model_len``, ``seed``,
``stop_ids``; ``kv_cache_bytes``, 1 GiB unless given; ``prefill_chunk``, vLLM's own unless given);
then each line on stdin is a request (``prompts``: token ids, ``greedy``, ``temperature``,
``max_new_tokens``) and its answer is one line on stdout: the generated token ids of each prompt
(``{"tokens": [...]}``). vLLM prints its own messages on stderr.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    settings = json.loads(sys.argv[1])
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever vLLM prints goes to stderr: stdout carries the answers alone
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    # Prompt tokens prefilled in one step (chunked prefill), where given: vLLM's working memory grows with it.
    chunk = {"max_num_batched_tokens": settings["prefill_chunk"]} if settings.get("prefill_chunk") else {}
    llm = LLM(model=settings["model"], dtype="float32", seed=settings["seed"], max_model_len=settings["max_model_len"],
              skip_tokenizer_init=True,  # prompts come as token ids, rendered by the tokenizer's chat template
              generation_config="vllm",  # the sampling settings below, not the checkpoint's defaults
              enforce_eager=True, kv_cache_memory_bytes=settings.get("kv_cache_bytes", 1 << 30), disable_log_stats=True,
              **chunk)
    for line in sys.stdin:
        request = json.loads(line)
        # Greedy, or the request's temperature with no top-k or top-p: the distribution trained.
        params = SamplingParams(temperature=0.0 if request["greedy"] else request.get("temperature", 1.0), top_p=1.0, top_k=0,
                                max_tokens=request["max_new_tokens"], stop_token_ids=settings["stop_ids"],
                                detokenize=False)
        outputs = llm.generate([TokensPrompt(prompt_token_ids=ids) for ids in request["prompts"]], params,
                               use_tqdm=False)
        answers.write(json.dumps({"tokens": [list(output.outputs[0].token_ids) for output in outputs]}) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
