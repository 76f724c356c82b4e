"""The model: loading a base, the policy built on it, and feeding it tokens.

``loading`` (the embedded tiny model or a local checkpoint, its tokenizer and renderer),
``policy`` (one frozen base, the LoRA adapters "actor" and "critic", a value head; scoring),
``batching`` (token rows to padded model inputs) and ``warmup`` (supervised steps: the actor's
warm-up on ground truth and the critic's regression on Monte Carlo values).
"""
