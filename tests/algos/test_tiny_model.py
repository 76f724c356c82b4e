"""The embedded tiny model loads the standard way, as itself, from the folder a run saves.

transformers 5's AutoTokenizer rebuilds the tokenizer of some model types (Qwen2 among them)
from that type's recipe instead of the saved ``tokenizer.json``; a tokenizer trained with its own
pre-tokenizer then silently splits text differently, and a model measured through it looks
worse than it is. The tiny model must come back from ``AutoTokenizer`` and
``AutoModelForCausalLM`` exactly as the trainer used it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

pytest.importorskip("peft")
from transformers import AutoModelForCausalLM, AutoTokenizer

from fcenv.algos.model.loading import load_tokenizer
from fcenv.algos.tiny.build import (
    TINY_SYSTEM_PROMPT,
    TinySpec,
    cache_key,
    chat_renderer,
    tokenizer_corpus,
)


def test_auto_tokenizer_gives_the_trainers_tokens_on_every_text(tiny_model):
    ours = load_tokenizer(tiny_model)
    auto = AutoTokenizer.from_pretrained(tiny_model)
    texts = tokenizer_corpus()
    assert len(texts) > 1000
    for text in texts:
        assert auto(text, add_special_tokens=False).input_ids == ours(text, add_special_tokens=False).input_ids, text
    messages = [{"role": "system", "content": TINY_SYSTEM_PROMPT}, {"role": "user", "content": "Add 2 and 3."}]
    rendered = chat_renderer(ours)(messages)
    assert auto.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) == rendered
    assert auto.decode(auto(rendered).input_ids, skip_special_tokens=False) == rendered
    assert auto.eos_token == ours.eos_token and auto.pad_token_id == ours.pad_token_id


def test_auto_model_loads_the_same_weights(tiny_model):
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    ids = torch.tensor([[5, 6, 7, 8]])
    again = AutoModelForCausalLM.from_pretrained(tiny_model)
    assert torch.equal(model(ids).logits, again(ids).logits)
    assert model.config.vocab_size == len(AutoTokenizer.from_pretrained(tiny_model))


def test_an_embedded_run_saves_its_base_and_an_independent_client_loads_it(tiny_model, tmp_path):
    """A run on the embedded model copies the base into the run folder, where transformers'
    Auto classes and PeftModel.from_pretrained find everything, even with the cache gone."""
    from peft import PeftModel

    from fcenv.algos.config import parse_config
    from fcenv.algos.training.loop import Runner

    # The small test model stands in for the default one under the default's cache key.
    cache = tmp_path / "cache"
    shutil.copytree(tiny_model, cache / f"tiny-{cache_key(tokenizer_corpus(), TinySpec())}")
    config = parse_config(["--cache_dir", str(cache), "--results_dir", str(tmp_path / "results"),
                           "--n_rollout_threads", "2", "--num_env_steps", "2", "--max_new_tokens", "6",
                           "--lora_r", "2", "--eval_episodes", "2", "--ppo_epoch", "1", "--no-progress"])
    run_dir = Runner(config, log=lambda message: None).run()
    shutil.rmtree(cache)
    resolved = json.loads((run_dir / "args.json").read_text())["resolved"]
    assert Path(resolved["base_model"]) == (run_dir / "base").resolve()
    assert resolved["system_prompt"] == TINY_SYSTEM_PROMPT
    tokenizer = AutoTokenizer.from_pretrained(resolved["base_model"])
    base = AutoModelForCausalLM.from_pretrained(resolved["base_model"])
    model = PeftModel.from_pretrained(base, run_dir / "checkpoints" / "iter_000001" / "actor")
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Add 2 and 3."}], add_generation_prompt=True,
                                           return_tensors="pt", return_dict=True)
    out = model.generate(**prompt, max_new_tokens=4, do_sample=False, pad_token_id=tokenizer.pad_token_id)
    assert out.shape[1] > prompt["input_ids"].shape[1]
