"""The embedded default model, built offline: ``build`` (config, tokenizer, pretraining and the
per-user cache) and ``teacher`` (the imperfect demonstrations it is pretrained on)."""
