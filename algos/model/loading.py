"""Load the base model and tokenizer: the embedded tiny default or a local HF checkpoint.

Besides the weights this settles how the env renders chats for the model (the tokenizer's
chat template when it has one) and which tokens end an action.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from fcenv.algos.config import EMBEDDED_MODEL, ConfigError
from fcenv.algos.model.hub import model_folder, model_label
from fcenv.algos.tiny.build import (
    DEFAULT_CACHE_DIR,
    TINY_MODEL_NAME,
    TINY_SYSTEM_PROMPT,
    TINY_TRAIN,
    build_tiny,
    bundled_train_split,
    chat_renderer,
)
from fcenv.chat_mode import ChatMode


@dataclass
class LoadedModel:
    base: torch.nn.Module
    tokenizer: object
    renderer: Callable[[list[dict]], str] | None  # None: the env's default rendering
    system_prompt: str | None  # None: BFCL's prompting prompt
    chat_mode: ChatMode  # how every chat is shown to this model: the flags' mode with its renderer
    label: str  # the model folder in the results path (the checkpoint folder's name, or the hub name's)
    path: Path  # the folder the base model and tokenizer were loaded from (a hub name's snapshot)
    pad_id: int
    stop_ids: list[int]


def _stop_ids(tokenizer, base) -> list[int]:
    ids = set()
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    generation = getattr(base, "generation_config", None)
    configured = getattr(generation, "eos_token_id", None) if generation is not None else None
    if isinstance(configured, int):
        ids.add(configured)
    elif configured:
        ids.update(int(i) for i in configured)
    return sorted(ids)


def load_tokenizer(path: Path):
    """The checkpoint's tokenizer, exactly as saved.

    transformers 5's AutoTokenizer rebuilds a tokenizer from the recipe of the model type in
    config.json (e.g. Qwen2's pre-tokenizer), which silently replaces a custom pipeline such
    as the tiny model's; a plain ``tokenizers`` tokenizer is therefore loaded as itself.
    """
    import json

    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    config_file = Path(path) / "tokenizer_config.json"
    declared = json.loads(config_file.read_text()).get("tokenizer_class") if config_file.exists() else None
    if declared in ("TokenizersBackend", "PreTrainedTokenizerFast"):
        return PreTrainedTokenizerFast.from_pretrained(path, local_files_only=True)
    return AutoTokenizer.from_pretrained(path, local_files_only=True)


def model_dtype(device: torch.device) -> torch.dtype:
    # bf16 where the hardware does it well, fp32 on CPU (bf16 matmuls there are slow and
    # PPO's ratios want the precision).
    return torch.bfloat16 if device.type == "cuda" else torch.float32


def max_positions(model: torch.nn.Module) -> int:
    """The longest sequence the model's config supports (its text config's, for a multimodal
    model); 2048 when the config does not say."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return int(getattr(config, "max_position_embeddings", 0) or 2048)


def is_embedded(model_name_or_path: str) -> bool:
    return model_name_or_path in ("", EMBEDDED_MODEL)


def load_model(model_name_or_path: str, device: torch.device, *, cache_dir: str = "",
               system_prompt: str = "", dataset_path: str | Path = "", tool_format: str = "") -> LoadedModel:
    """The base model and tokenizer, with the chat mode the flags choose for it (``chat_mode``).
    The embedded tiny model is the one built for the bundled split being trained
    (``dataset_path``: the question file the command resolved), or for the single-turn split on
    any other data, and for the tool format (pretrained on demonstrations in that format)."""
    from transformers import AutoModelForCausalLM

    if is_embedded(model_name_or_path):
        split = bundled_train_split(dataset_path) or TINY_TRAIN
        path = build_tiny(cache_dir or DEFAULT_CACHE_DIR, dataset_path=split, tool_format=tool_format)
        label, default_prompt = TINY_MODEL_NAME, TINY_SYSTEM_PROMPT
    else:
        path = model_folder("--model_name_or_path", model_name_or_path)
        label, default_prompt = model_label(model_name_or_path, path), None
    tokenizer = load_tokenizer(path)
    # transformers' "Loading weights" bar is worth seeing for a large checkpoint; the embedded
    # model loads in a blink, and its bar would be noise in every run's output.
    with _weights_bar_hidden(is_embedded(model_name_or_path)):
        base = AutoModelForCausalLM.from_pretrained(path, dtype=model_dtype(device), local_files_only=True)
    base.to(device)
    renderer = chat_renderer(tokenizer) if getattr(tokenizer, "chat_template", None) else None
    stop_ids = _stop_ids(tokenizer, base)
    # Padding is tracked by masks, so any id will do; EOS stays a trained action token.
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stop_ids[0]
    prompt = system_prompt or default_prompt
    # FC mode: the tools go through the tokenizer's chat template; prompting: the model's renderer.
    chat_mode = ChatMode.from_flags(tool_format, prompt, fc_renderer=tokenizer, prompting_renderer=renderer)
    return LoadedModel(base=base, tokenizer=tokenizer, renderer=renderer, system_prompt=prompt, chat_mode=chat_mode,
                       label=label, path=path, pad_id=int(pad_id), stop_ids=stop_ids)


@contextlib.contextmanager
def _weights_bar_hidden(hidden: bool):
    from transformers.utils import logging

    shown = logging.is_progress_bar_enabled()
    if hidden and shown:
        logging.disable_progress_bar()
    try:
        yield
    finally:
        if hidden and shown:
            logging.enable_progress_bar()


def token_ids(tokenizer, tokens: list[str], flag: str = "--trainable_tokens") -> tuple[int, ...]:
    """Each token's id; a ``ConfigError`` naming the flag for text that is not one token."""
    ids = []
    for token in tokens:
        encoded = tokenizer(token, add_special_tokens=False).input_ids
        if len(encoded) != 1:
            raise ConfigError(f"{flag}: {token!r} is {len(encoded)} tokens for this tokenizer, not one")
        ids.append(encoded[0])
    return tuple(ids)
