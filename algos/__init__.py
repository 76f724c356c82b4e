"""fcenv's trainers: reinforcement learning for an LLM agent on ``FunctionCallingEnv``.

The folders follow the data: ``rollout/`` plays episodes (the env steps, an engine samples),
``ppo/`` turns a played rollout into an update (scoring, advantage estimators, losses, the PPO
update, the algorithm presets), ``model/`` holds the policy (one frozen base, LoRA adapters
"actor" and "critic", a value head) and how it is loaded, ``training/`` is the run (set-up, the
loop, evaluation, resuming, several processes), ``store/`` what a run writes (results folder,
checkpoints), ``tiny/`` the embedded default model built offline.

Entry points: ``train`` (``fcenv train`` = ``python train_fctncalling.py``, flags in
``config``; ``errors``, its ``ConfigError``), ``generate`` (``fcenv generate``; its ``questions``, a file's entries or the format-sensitivity
set's, its ``partial_results`` files and ``deadline_http`` requests), ``card`` (``fcenv card``: a
run's or a model's BFCL score card, a fixed sample answered by generate's code and scored by
evaluate's), ``process_rewards`` (``fcenv process-rewards``,
LPR) and ``commands`` (their parsers, of the flag groups ``fcenv.flags`` declares; ``extras``: are the
training packages installed?; ``from_run``: ``--run``, alike in generate and process-rewards);
``input_files`` reads every file their flags name before anything heavy starts; ``progress`` (the progress bars of the long steps). ``advantages`` is
contract C4's import path for the BAD and GAE math. Nothing heavy is imported here, so
``import fcenv.algos`` stays cheap.
"""
