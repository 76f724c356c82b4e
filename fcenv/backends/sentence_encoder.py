"""all-MiniLM-L6-v2 sentence embeddings, as sentence-transformers computes them, with transformers.

BFCL's vector memory encodes every text with ``SentenceTransformer("all-MiniLM-L6-v2")`` and
``normalize_embeddings=True``. That model is a BertModel followed by sentence-transformers'
modules, listed in its ``modules.json``: mean pooling over the tokens the attention mask keeps
(``1_Pooling/config.json``), then L2 normalisation; ``normalize_embeddings`` normalises once
more. Texts are cut at 256 tokens (``sentence_bert_config.json``). This module does the same
with transformers alone, on the folder ``fcenv models all-minilm-l6-v2`` writes; the vectors
equal sentence-transformers' to float32 rounding (tests/backends/test_sentence_encoder.py).

The model loads on first use, once per process and folder; nothing happens at import. The
commands ask ``encoder_problem`` before their own model loads, when their data holds vector
memory entries: a folder missing, or whose files differ from their pins (a cut
``model.safetensors``), is said then, in one line with the command that repairs it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

MODEL_NAME = "all-minilm-l6-v2"
_BATCH = 32  # sentence-transformers' default batch size


REPAIR = f"`python -m fcenv models {MODEL_NAME}` (it checks the files on disk against their pins)"


class EncoderMissing(FileNotFoundError):
    """The encoder's folder is not there: ``fcenv models all-minilm-l6-v2`` fetches it."""


class EncoderDamaged(RuntimeError):
    """The encoder's folder is there, but its files are not the pinned ones, or do not load."""


def encoder_problem(folder: str | Path | None = None) -> str | None:
    """What keeps the encoder of ``folder`` (default: where ``fcenv models`` puts it) from
    loading, in one line naming the folder and the repair; None when its files are as pinned.
    Hashes its files (90 MB: a fraction of a second), loads nothing."""
    from fcenv.pretrained import MINILM, differs_from_pins

    path = Path(folder) if folder is not None else default_folder()
    if not (path / "model.safetensors").is_file():
        return (f"the vector memory's sentence encoder is not in {path}; fetch it with "
                f"`python -m fcenv models {MODEL_NAME}`")
    damaged = differs_from_pins(path, MINILM)
    if damaged:
        return (f"the vector memory's sentence encoder in {path} is damaged ({', '.join(damaged)} missing or not as "
                f"pinned); fetch it again with {REPAIR}")
    return None


def default_folder() -> Path:
    from fcenv.pretrained import DEFAULT_DIR

    return DEFAULT_DIR / MODEL_NAME


class SentenceEncoder:
    def __init__(self, folder: Path):
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.model = AutoModel.from_pretrained(folder, dtype=torch.float32).eval()
        settings = json.loads((folder / "sentence_bert_config.json").read_text())
        self.max_length = int(settings["max_seq_length"])
        self.dimension = int(self.model.config.hidden_size)

    def encode(self, texts: list[str]) -> np.ndarray:
        """One normalised float32 row per text."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # Longest first, in batches, as sentence-transformers batches them (padding differs
        # otherwise, and with it the last bits of a vector).
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        rows: list[np.ndarray] = [np.empty(0)] * len(texts)
        for start in range(0, len(order), _BATCH):
            chosen = order[start:start + _BATCH]
            for index, row in zip(chosen, self._batch([texts[i] for i in chosen])):
                rows[index] = row
        return np.stack(rows)

    def _batch(self, texts: list[str]) -> np.ndarray:
        torch = self.torch
        inputs = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length,
                                return_tensors="pt")
        with torch.inference_mode():
            tokens = self.model(**inputs).last_hidden_state
            mask = inputs["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            once = torch.nn.functional.normalize(pooled, p=2, dim=1)  # the model's Normalize module
            twice = torch.nn.functional.normalize(once, p=2, dim=1)  # normalize_embeddings=True
        return twice.numpy().astype(np.float32)


@lru_cache(maxsize=2)
def _load(folder: str) -> SentenceEncoder:
    path = Path(folder)
    if not (path / "model.safetensors").is_file():
        raise EncoderMissing(f"the vector memory's sentence encoder is not in {path}; fetch it with "
                             f"`python -m fcenv models {MODEL_NAME}`")
    try:
        return SentenceEncoder(path)
    except ImportError as exc:  # torch and transformers come with the trainers' extra
        raise ImportError(f"the vector memory's sentence encoder runs on torch and transformers: "
                          f"pip install \"fcenv[train]\" ({exc})") from None
    except Exception as exc:  # a cut safetensors, a broken config: named with its folder and repair
        raise EncoderDamaged(f"the vector memory's sentence encoder in {path} does not load "
                             f"({type(exc).__name__}: {exc}); fetch it again with {REPAIR}") from exc


def encoder(folder: str | Path | None = None) -> SentenceEncoder:
    """The encoder of ``folder`` (default: where ``fcenv models`` puts it), loaded once."""
    return _load(str(Path(folder) if folder is not None else default_folder()))
