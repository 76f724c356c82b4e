"""The training run: set-up from the flags, the loop, evaluation, resuming, several processes."""
