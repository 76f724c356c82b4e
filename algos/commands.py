"""The ``fcenv`` subcommands of the training layer: ``train``, ``generate``, ``card`` and
``process-rewards``, registered through the ``fcenv.commands`` entry point group (fcenv never
imports algos).

Only their argument parsers live here. A command imports its module (torch, transformers and
all) when it runs, so ``fcenv evaluate`` and ``fcenv data`` start without them.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

# Re-exported: algos.commands.training_extras_missing and TRAINING_PACKAGES, as before.
from fcenv.algos.extras import TRAINING_PACKAGES as TRAINING_PACKAGES
from fcenv.algos.extras import training_extras_missing
from fcenv.flags import (DATA, DEFAULT_DATASET, ENGINE, FORMAT_SENSITIVITY, MODEL, SAMPLE, SAMPLING, TOOL_FORMAT,
                         WEB_SEARCH, add_group)

# What generate (and card, which answers with generate's code) samples unless told: answers of
# a real model run longer than a training action, and a batch that fits a CPU's memory.
ANSWERING = {"max_new_tokens": 256}
BATCH = {"n_rollout_threads": 16}


def _training_command(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def checked(args: argparse.Namespace) -> int:
        from fcenv.cli import UsageError

        if message := training_extras_missing():
            raise UsageError(message)
        return run(args)

    return checked


def _runs(module: str) -> Callable[[argparse.Namespace], int]:
    """The command function ``_command`` of ``module``, imported when the command runs."""
    return _training_command(lambda args: importlib.import_module(module)._command(args))


def train(commands) -> None:
    """``fcenv train [flags]``: the same as ``python train_fctncalling.py [flags]``; every flag,
    ``--help`` included, goes to the training parser."""
    parser = commands.add_parser("train", add_help=False, help="train a policy (flags: fcenv train --help)")
    parser.set_defaults(command_fn=lambda args: importlib.import_module("fcenv.algos.train").main(args.extra,
                                                                                            prog="fcenv train"),
                        accepts_extra=True)


def generate(commands) -> None:
    parser = commands.add_parser("generate", help="a model's answers to BFCL question files, as BFCL result files",
                                 description="A model's answers to BFCL question files, written as BFCL result "
                                             "files that `fcenv evaluate` scores (algos/generate.py).")
    add_group(parser, MODEL, notes={"model_name_or_path": "with --endpoint, the model name the server expects"})
    add_group(parser, DATA, several=["dataset_path"],
              notes={"dataset_path": "the question files to answer, each as a result file named after the "
                                     "question file it resolves to (a mix: mix_result.json); BFCL v4's "
                                     "format-sensitivity id file (BFCL_v4_format_sensitivity.json, or that name "
                                     "for the one in ~/.cache/fcenv/bfcl): each entry under each configuration, "
                                     "in BFCL_v4_format_sensitivity_result.json"})
    add_group(parser, SAMPLING, defaults=ANSWERING)
    add_group(parser, ENGINE, defaults=BATCH, notes={"n_rollout_threads": "entries answered together (a local model)"})
    add_group(parser, TOOL_FORMAT,
              notes={"tool_format": "each result line records it, and fcenv evaluate reads the answers in it",
                     "prompt_variation": "one configuration for every entry (not 'random': the result file could "
                                         "not say which prompt each answer had); score the answers with fcenv "
                                         "evaluate --handler, the configuration's decoder. The format-sensitivity "
                                         "set asks each entry under its own"})
    add_group(parser, FORMAT_SENSITIVITY)
    parser.add_argument("--out", required=True, help="folder for the result files")
    parser.add_argument("--endpoint", default="", help="an OpenAI-compatible server's base URL (…/v1) to ask instead")
    add_group(parser, WEB_SEARCH)
    parser.add_argument("--n", type=int, default=1, help="answers per entry (one result file each)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds one endpoint request may take in all, the reply read to its end (a deadline, "
                             "however slowly the server sends); a request past it is tried again")
    parser.add_argument("--include-input-log", "--include_input_log", dest="include_input_log", action="store_true",
                        help="write what the model was given at each step beside each result, as "
                             "'inference_log' (BFCL's flag of that name): the prompt text, or an endpoint's request")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    parser.set_defaults(command_fn=_runs("fcenv.algos.generate"))


def card(commands) -> None:
    parser = commands.add_parser("card", help="a training run's or a model's BFCL score card: a fixed sample of "
                                              "BFCL's entries answered, scored, and BFCL's score files written",
                                 description="A fixed sample of BFCL's entries (fcenv sample's), answered by a "
                                             "training run's actor or a model (fcenv generate's code), scored as "
                                             "BFCL scores it and summed up in BFCL's score card and CSV files "
                                             "(fcenv evaluate's); run again, it goes on from the answers written "
                                             "(algos/card.py).")
    parser.add_argument("target", metavar="RUN_OR_MODEL",
                        help="a training run folder (its latest checkpoint's actor, in the chat format and with the "
                             "sampling settings it was trained with), a local Hugging Face checkpoint folder, a "
                             "model's name on the Hugging Face hub, or 'tiny' (the embedded default)")
    parser.add_argument("--checkpoint", default="", help="when RUN_OR_MODEL is a training run: its checkpoint "
                                                         "folder's name (default: the latest)")
    add_group(parser, SAMPLE)
    add_group(parser, SAMPLING, defaults=ANSWERING)
    add_group(parser, ENGINE, defaults=BATCH, notes={"n_rollout_threads": "entries answered together"})
    add_group(parser, TOOL_FORMAT, skip=["prompt_variation"],
              notes={"tool_format": "a model's (a run answers in the format it was trained in)"})
    parser.add_argument("--out", help="folder for the sample, the answers and the verdicts (default: RUN/card/"
                                      "CHECKPOINT for a run, card/MODEL under the current folder for a model)")
    parser.add_argument("--score_dir", metavar="DIR", help="folder for BFCL's score CSV files (default: OUT/score)")
    parser.add_argument("--model_name", metavar="NAME",
                        help="the model's name on the score card (default: the model folder's name; a run's: its "
                             "base model's, run folder's and checkpoint's)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    parser.set_defaults(command_fn=_runs("fcenv.algos.card"))


def process_rewards(commands) -> None:
    parser = commands.add_parser("process-rewards", help="Monte Carlo values of trajectory prefixes and DPO pairs (LPR)",
                                 description="LPR's process rewards: the Monte Carlo value of every prefix of "
                                             "sampled trajectories, and preference pairs for DPO "
                                             "(algos/process_rewards.py).")
    add_group(parser, MODEL)
    add_group(parser, DATA, notes={"dataset_path": f"the tasks to sample (default: the run's training data, else "
                                                   f"{DEFAULT_DATASET})"})
    add_group(parser, SAMPLING, skip=["greedy"])
    add_group(parser, ENGINE)
    add_group(parser, TOOL_FORMAT)
    add_group(parser, WEB_SEARCH)
    parser.add_argument("--out", required=True, help="folder for trajectories.jsonl, pairs.jsonl and summary.json")
    parser.add_argument("--from_results", default="", help="take the trajectories from this BFCL result file "
                                                          "instead of sampling them")
    parser.add_argument("--tasks", type=int, default=0, help="tasks to sample trajectories for (0: all)")
    parser.add_argument("--trajectories", type=int, default=4, help="trajectories sampled per task")
    parser.add_argument("--completions", type=int, default=8, help="Monte Carlo continuations per prefix")
    parser.add_argument("--margin", type=float, default=0.5, help="least value difference of a preference pair")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                        help="progress bars over the trajectories and the completions")
    parser.set_defaults(command_fn=_runs("fcenv.algos.process_rewards"))
