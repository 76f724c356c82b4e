"""The model: loading a base, the policy built on it, and feeding it tokens.

``hub`` (the folder a model's name stands for: a local checkpoint, or a hub name's snapshot),
``loading`` (the embedded tiny model or a checkpoint folder, its tokenizer and renderer),
``policy`` (one frozen base, the LoRA adapters "actor" and "critic", a value head; scoring),
``batching`` (token rows to padded model inputs) and ``warmup`` (supervised steps: the actor's
warm-up on ground truth and the critic's regression on Monte Carlo values).
"""
