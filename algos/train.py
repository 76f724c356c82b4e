"""Train a function-calling policy: ``python train_fctncalling.py`` or ``fcenv train``.

``python train_fctncalling.py`` (or ``fcenv train``) trains the embedded default: a tiny model built offline on
the bundled dataset, in a few minutes on two CPU cores. ``--model_name_or_path`` takes any
local Hugging Face checkpoint; ``accelerate launch train_fctncalling.py ...`` runs data
parallel over several processes. ``--help`` lists every flag; results go to
``results/<experiment>/<model>/<dataset>/<algorithm>/run<k>/``.
"""

from __future__ import annotations

import sys

from fcenv.algos.extras import training_extras_missing
from fcenv.algos.config import parse_config


def main(argv: list[str] | None = None, prog: str = "train_fctncalling.py") -> int:
    if message := training_extras_missing():
        print(f"{prog}: error: {message}", file=sys.stderr)
        return 2
    config = parse_config(argv, prog)  # before the heavy imports: flag errors and --help come at once
    from fcenv.algos.config import ConfigError
    from fcenv.algos.store.manifest import CheckpointError
    from fcenv.algos.training.loop import Runner
    from fcenv.data import DatasetError, warnings_shown_as

    try:
        with warnings_shown_as(prog):
            runner = Runner(config)
    except (ConfigError, CheckpointError, DatasetError) as exc:
        # Found before any training (the files the flags name are checked first of all): the
        # input is the user's to fix, as a flag error is.
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted before training started; nothing to resume", file=sys.stderr)
        return INTERRUPTED
    from fcenv.algos.rollout.worker_link import EngineError

    try:
        run_dir = runner.run()
    except (CheckpointError, DatasetError, EngineError) as exc:
        # Bad input files are the user's to fix: the message names every file and problem,
        # and a traceback would only bury it. An engine that died is named with its log.
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if runner.is_main:
            print(interrupted_message(runner, prog), file=sys.stderr)
        return INTERRUPTED
    runner.log(f"results in {run_dir}")
    return 0


INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C


def interrupted_message(runner, prog: str) -> str:
    """Ctrl-C: where the run stopped, the checkpoint it continues from and the command. The
    iteration in progress is dropped (its update may be half applied); the checkpoint holds the
    complete state, so the continued run is the run this one would have been."""
    from fcenv.algos.store.checkpoint import latest_checkpoint

    command = "fcenv train" if prog == "fcenv train" else f"python {prog}"
    checkpoint = latest_checkpoint(runner.run_dir)
    if checkpoint is None:
        return f"\n{prog}: interrupted at iteration {runner.iteration}, before its first checkpoint; nothing to resume"
    saved = int(checkpoint.name.removeprefix("iter_"))
    again = f", so iterations {saved + 1}-{runner.iteration} are played again" if runner.iteration > saved else ""
    return (f"\n{prog}: interrupted after {runner.iteration} iterations; the run continues from its last "
            f"checkpoint, {checkpoint}{again}\n"
            f"continue it with: {command} --resume {runner.run_dir}")
