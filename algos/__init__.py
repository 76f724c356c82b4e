"""PPO trainers for fcenv: token-level PPO with BAD (TPPO) and action-level PPO (APPO).

Modules: ``advantages`` (pure math), ``policy`` (one base model with LoRA adapters "actor"
and "critic" and a value head), ``rollout``, ``buffer``, ``losses``, ``trainer``,
``checkpoint``, ``tiny`` (the embedded default model) and ``config`` (command-line flags).
Nothing heavy is imported here, so ``import algos`` stays cheap.
"""
