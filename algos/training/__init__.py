"""The training run: ``loop`` (the loop, top to bottom), ``setup`` (data, envs, prompt checks,
run folder, warm-ups), ``resume`` (continuing from a checkpoint), ``evaluation`` (held-out
accuracy), ``metrics`` (the logged scalars) and ``distributed`` (several processes)."""
