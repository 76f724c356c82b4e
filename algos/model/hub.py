"""Where a model's checkpoint folder is: ``--model_name_or_path`` names a local folder, or a model
on the Hugging Face hub by its name (``Qwen/Qwen2.5-0.5B-Instruct``), which is the folder of its
snapshot in the hub's cache. Everything past this point (the checks, the loading, the vLLM engine,
the run's record) works on that folder; the run folder and the score card are named after the
model (``model_label``), and the answers' record keeps the name as given.
"""

from __future__ import annotations

import functools
from pathlib import Path

from fcenv.algos.config import EMBEDDED_MODEL, ConfigError

# What a causal LM's checkpoint folder needs of a hub repository: its config, tokenizer and chat
# template files and its weights, at the top (no other formats' copies: GGUF, ONNX, original/).
HUB_FILES = ["*.json", "*.jinja", "*.txt", "*.model", "*.tiktoken", "*.safetensors"]
HUB_BIN_WEIGHTS = ["pytorch_model*.bin"]  # fetched only where a repository has no safetensors
HUB_SKIPPED = ["*/*", "consolidated*"]  # other folders; Mistral's copy of the weights for its own code


def is_hub_name(value: str) -> bool:
    """Whether ``value`` can be a Hugging Face hub model name (``Org/Name`` or ``Name``)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(value)
    except HFValidationError:
        return False
    return True


def model_folder(flag: str, value: str) -> Path:
    """The folder of the model ``value`` names: a local checkpoint folder as it is; else a Hugging
    Face hub name (``Qwen/Qwen2.5-0.5B-Instruct``) as its snapshot folder in the hub's cache,
    downloaded there first (its checkpoint files only, ``HUB_FILES``) unless the cache holds it
    or huggingface_hub is offline: its own settings (``HF_HOME``, ``HF_HUB_CACHE``,
    ``HF_HUB_OFFLINE``, ``HF_TOKEN``) apply. Raises ``ConfigError`` naming ``flag``."""
    path = Path(value)
    if path.is_dir():
        return path
    if path.exists() or not is_hub_name(value):
        raise ConfigError(f"{flag} {value}: no such folder (a local Hugging Face checkpoint folder, a model's "
                          f"name on the Hugging Face hub, or '{EMBEDDED_MODEL}')")
    try:
        return _hub_snapshot(value)
    except (OSError, ValueError) as exc:  # huggingface_hub's errors: not found, offline, no connection
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ConfigError(f"{flag} {value}: no such folder, and no model of that name from the Hugging Face hub "
                          f"({reason})") from None


@functools.cache
def _hub_snapshot(name: str) -> Path:
    """The hub model's snapshot folder, asked of the hub once per process: the flag checks, the
    tokenizer check and the loading all name the model, and each would otherwise ask again."""
    from huggingface_hub import snapshot_download

    folder = Path(snapshot_download(name, allow_patterns=HUB_FILES, ignore_patterns=HUB_SKIPPED))
    if not any(folder.glob("*.safetensors")):
        folder = Path(snapshot_download(name, allow_patterns=HUB_BIN_WEIGHTS, ignore_patterns=HUB_SKIPPED))
    return folder


def model_label(value: str, folder: Path | None = None) -> str:
    """The model's name in run folders and score cards: its checkpoint ``folder``'s name; for a
    hub name, whose folder is a snapshot named by its commit (or none given), the name without
    its org (``Qwen2.5-0.5B-Instruct``)."""
    if folder is not None and Path(folder).parent.name != "snapshots":
        return Path(folder).name
    return value.rstrip("/").split("/")[-1]
