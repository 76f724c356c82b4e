"""The ``fcenv`` subcommands of the training layer: ``train``, ``generate`` and
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
from algos.extras import TRAINING_PACKAGES as TRAINING_PACKAGES
from algos.extras import training_extras_missing
from fcenv.tool_formats import available_tool_formats

# Checked when the command runs (the engines' registry is torch code): hf, vllm or a registered one.
ENGINE_HELP = ("what samples a local model's answers: 'hf' (default) in this process, 'vllm' in a vLLM engine "
               "(`make vllm` installs it), or an engine a package registers")


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
    parser.set_defaults(command_fn=lambda args: importlib.import_module("algos.train").main(args.extra,
                                                                                            prog="fcenv train"),
                        accepts_extra=True)


def generate(commands) -> None:
    parser = commands.add_parser("generate", help="a model's answers to BFCL question files, as BFCL result files",
                                 description="A model's answers to BFCL question files, written as BFCL result "
                                             "files that `fcenv evaluate` scores (algos/generate.py).")
    parser.add_argument("--data", nargs="+", required=True, help="BFCL question files (possible answers beside "
                                                                 "them), or bundled split names")
    parser.add_argument("--out", required=True, help="folder for the result files")
    parser.add_argument("--model", default="tiny", help="a local Hugging Face checkpoint folder or 'tiny'; with "
                                                        "--endpoint, the model name the server expects")
    parser.add_argument("--adapter", default="", help="a PEFT LoRA adapter folder to apply (e.g. a run's "
                                                      "checkpoints/iter_N/actor)")
    parser.add_argument("--run", default="", help="a training run folder: its base model, actor adapter (the latest "
                                                  "checkpoint, or --checkpoint), system prompt and context window")
    parser.add_argument("--checkpoint", default="", help="with --run: the checkpoint folder name")
    parser.add_argument("--endpoint", default="", help="an OpenAI-compatible server's base URL (…/v1) to ask instead")
    parser.add_argument("--system_prompt", default="", help="system prompt template with '{functions}' (default: "
                                                            "BFCL's, or the tiny model's own)")
    parser.add_argument("--tool_format", default="", choices=["", *available_tool_formats()], metavar="FORMAT",
                        help="native tool calling (BFCL's FC mode) in this family's format: "
                             f"{', '.join(available_tool_formats())} (default: prompting)")
    parser.add_argument("--n", type=int, default=1, help="answers per entry (one result file each)")
    parser.add_argument("--greedy", action="store_true", help="greedy decoding instead of sampling")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--max_new_tokens", type=int, default=256, help="most tokens of one answer")
    parser.add_argument("--context_window", type=int, default=0, help="0: the model's maximum")
    parser.add_argument("--batch", type=int, default=16, help="entries answered together (local model)")
    parser.add_argument("--rollout_engine", default="hf", metavar="ENGINE", help=ENGINE_HELP)
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds one endpoint request may take in all, the reply read to its end (a deadline, "
                             "however slowly the server sends); a request past it is tried again")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--include-input-log", "--include_input_log", dest="include_input_log", action="store_true",
                        help="write what the model was given at each step beside each result, as "
                             "'inference_log' (BFCL's flag of that name): the prompt text, or an endpoint's request")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    parser.set_defaults(command_fn=_runs("algos.generate"))


def process_rewards(commands) -> None:
    parser = commands.add_parser("process-rewards", help="Monte Carlo values of trajectory prefixes and DPO pairs (LPR)",
                                 description="LPR's process rewards: the Monte Carlo value of every prefix of "
                                             "sampled trajectories, and preference pairs for DPO "
                                             "(algos/process_rewards.py).")
    parser.add_argument("--out", required=True, help="folder for trajectories.jsonl, pairs.jsonl and summary.json")
    parser.add_argument("--run", help="a training run folder: sample with its actor (base, prompt and data as trained)")
    parser.add_argument("--checkpoint", default="", help="with --run: the checkpoint folder name (default: the latest)")
    parser.add_argument("--model_name_or_path", default="tiny", help="without --run: a local Hugging Face checkpoint "
                                                                     "folder, or 'tiny' (the embedded default)")
    parser.add_argument("--dataset_path", default="", help="BFCL question file or bundled split name (default: the "
                                                           "run's training data, else tiny_train)")
    parser.add_argument("--system_prompt", default="", help="without --run: the system prompt template")
    parser.add_argument("--tool_format", default="", help="without --run: native tool calling (BFCL's FC mode) in "
                                                          "this family's format, the tools through the chat template "
                                                          "(default: prompting; a run samples in its own format)")
    parser.add_argument("--from_results", default="", help="take the trajectories from this BFCL result file "
                                                          "instead of sampling them")
    parser.add_argument("--tasks", type=int, default=0, help="tasks to sample trajectories for (0: all)")
    parser.add_argument("--trajectories", type=int, default=4, help="trajectories sampled per task")
    parser.add_argument("--completions", type=int, default=8, help="Monte Carlo continuations per prefix")
    parser.add_argument("--margin", type=float, default=0.5, help="least value difference of a preference pair")
    parser.add_argument("--max_new_tokens", type=int, default=48, help="without --run: most tokens of one action")
    parser.add_argument("--context_window", type=int, default=0, help="without --run: 0 = the model's maximum")
    parser.add_argument("--temperature", type=float, default=1.0, help="without --run: the sampling temperature")
    parser.add_argument("--threads", type=int, default=32, help="environments stepped in parallel")
    parser.add_argument("--rollout_engine", default="hf", metavar="ENGINE", help=ENGINE_HELP)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                        help="progress bars over the trajectories and the completions")
    parser.set_defaults(command_fn=_runs("algos.process_rewards"))
