"""Train a function-calling policy: ``python train_fctncalling.py`` or ``fcenv train``.

``python train_fctncalling.py`` (or ``fcenv train``) trains the embedded default: a tiny model built offline on
the bundled dataset, in a few minutes on two CPU cores. ``--model_name_or_path`` takes any
local Hugging Face checkpoint; ``accelerate launch train_fctncalling.py ...`` runs data
parallel over several processes. ``--help`` lists every flag; results go to
``results/<experiment>/<model>/<dataset>/<algorithm>/run<k>/``.
"""

from __future__ import annotations

import sys

from algos.config import parse_config


def main(argv: list[str] | None = None, prog: str = "train_fctncalling.py") -> int:
    config = parse_config(argv, prog)  # before the heavy imports: flag errors and --help come at once
    from algos.config import ConfigError
    from algos.store.manifest import CheckpointError
    from algos.training.loop import Runner
    from fcenv.data import DatasetError, warnings_shown_as

    try:
        with warnings_shown_as(prog):
            runner = Runner(config)
    except ConfigError as exc:  # found once the model and data are known, before any training
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except (CheckpointError, DatasetError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    try:
        run_dir = runner.run()
    except (CheckpointError, DatasetError) as exc:
        # Bad input files are the user's to fix: the message names every file and problem,
        # and a traceback would only bury it.
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    runner.log(f"results in {run_dir}")
    return 0
