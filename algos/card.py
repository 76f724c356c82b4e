"""``fcenv card RUN_OR_MODEL``: a training run's (or a model's) BFCL score card, in one command.

    fcenv card results/.../GRPO/run1 --greedy                 # the run's latest checkpoint, as trained
    fcenv card ~/.cache/fcenv/models/qwen2.5-coder-0.5b-instruct --tool_format hermes --greedy

Three steps, each the code of the command that does it alone, in this process:

1. the fixed sample of BFCL's entries (``fcenv.bfcl_sample``, as ``fcenv sample`` writes it:
   ``--per_category`` entries spread over each category's file) as ``OUT/bfcl_sample.json``,
   left untouched when OUT holds that very sample;
2. the answers (``fcenv generate``: ``--run`` for a run folder, ``--model_name_or_path``
   otherwise) in ``OUT/answers/bfcl_sample_result.json``, with generate's progress bar;
3. BFCL's verdicts and score card (``fcenv evaluate --compat bfcl --score_dir``; a run trained
   under one prompt variation: that variation's decoder): ``OUT/verdicts.jsonl``, BFCL's
   ``data_*.csv`` in ``--score_dir`` (``OUT/score``), the card printed.

Run again, the command goes on from what OUT holds, through generate's own ``.partial`` file:
answers that answer the whole sample are scored again without asking the model anything;
answers an interrupted run left are kept and only the entries they lack are asked; after the
categories or ``--per_category`` changed, the answers to the entries both samples hold are kept.
Answers made otherwise (another checkpoint, model or sampling setting, as each line's record
says) are refused, naming the setting, before any model loads: a card never mixes two models.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any

from fcenv.arguments import UsageError

SAMPLE_NAME = "bfcl_sample.json"
TARGET = "RUN_OR_MODEL"
# The record's settings that change what a model answers (fcenv.result_record); the engine and
# the batch size are left out: going on with another batch size is still the same model.
COMPARED = ("model", "adapter", "tool_format", "system_prompt", "prompt_variation", "greedy", "temperature",
            "max_new_tokens", "context_window", "seed")


def _command(args: argparse.Namespace) -> int:
    from fcenv.bfcl_data import DEFAULT_DIR
    from fcenv.bfcl_sample import holds_sample, link_shared_folders, mixed_sample_lines, sample_ids, write_sample_lines
    from fcenv.flags import ENGINE, SAMPLE, SAMPLING, TOOL_FORMAT, check

    check(args, SAMPLE, SAMPLING, ENGINE, TOOL_FORMAT)
    target = _target(args)
    out = Path(args.out) if args.out else target.default_out
    score_dir = Path(args.score_dir) if args.score_dir else out / "score"
    for flag, folder in (("--out", out), ("--score_dir", score_dir)):
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"{flag} {folder}: a file; name a folder")
    model_name = args.model_name or target.card_name
    if any(ch in model_name for ch in ",\n\r"):
        raise UsageError(f"--model_name {model_name!r}: a comma or a line break, which BFCL's CSV files cannot hold"
                         + ("" if args.model_name else f" (the name of {TARGET} {args.target}): name the model "
                                                       f"with --model_name"))
    bfcl_dir = Path(args.bfcl_dir or DEFAULT_DIR)
    questions, answers = mixed_sample_lines(bfcl_dir, args.categories, args.per_category)
    sample, ids = out / SAMPLE_NAME, sample_ids(questions)
    generate_args = _generate_args(args, target, sample, out / "answers")
    result = out / "answers" / f"{sample.stem}_result.json"
    settings = _settings(generate_args, target)
    kept = _earlier_answers(result, ids, settings)
    if holds_sample(sample, questions, answers):
        print(f"fcenv card: {sample}: the sample asked ({len(ids)} entries), reused", file=sys.stderr)
    else:
        write_sample_lines(sample, questions, answers)
        print(f"fcenv card: {sample}: {len(ids)} entries of {len(args.categories)} categories, "
              f"{args.per_category} of each", file=sys.stderr)
    link_shared_folders(bfcl_dir, args.categories, out)
    if not _answered(result, kept, ids):
        _go_on_from(result, kept, ids)
        status = generate_args.command_fn(generate_args)
        if status:
            return status
    else:
        print(f"fcenv card: {result}: every entry answered, scored again", file=sys.stderr)
    evaluate_args = _evaluate_args(sample, result, out / "verdicts.jsonl", score_dir, model_name,
                                   _decoder(settings))
    return evaluate_args.command_fn(evaluate_args)


class _Target:
    """What RUN_OR_MODEL names: a run (its checkpoint) or a model, with the card's default names."""

    def __init__(self, path: str, run: bool, checkpoint: Path | None = None, base: str = "", base_name: str = ""):
        from fcenv.algos.model.hub import model_label

        self.path, self.run, self.checkpoint = path, run, checkpoint
        if run:
            self.default_out = Path(path) / "card" / checkpoint.name
            self.card_name = f"{model_label(base_name, Path(base))}:{Path(path).resolve().name}/{checkpoint.name}"
        else:
            name = Path(path).resolve().name if Path(path).is_dir() else model_label(path)  # tiny, or a hub name
            self.default_out = Path("card") / name
            self.card_name = name


def _target(args: argparse.Namespace) -> _Target:
    """RUN_OR_MODEL checked as generate's --run or --model_name_or_path would check it, with
    the errors naming RUN_OR_MODEL; a path is made absolute, so that the answers' records name
    the same folder whichever folder the command is run from."""
    from fcenv.algos.config import ConfigError
    from fcenv.algos.input_files import check_model_folder
    from fcenv.algos.model.hub import is_hub_name
    from fcenv.algos.store.checkpoint import open_run
    from fcenv.flags import EMBEDDED_MODEL

    given = args.target
    path = Path(given)
    # The embedded model, or a model by its name on the Hugging Face hub: a model, not a folder here.
    if not path.exists() and (given == EMBEDDED_MODEL or is_hub_name(given)):
        if args.checkpoint:
            raise UsageError(f"--checkpoint names a checkpoint of a training run, and {TARGET} {given} is a model")
        try:
            check_model_folder(TARGET, given)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        return _Target(given, run=False)
    if not path.is_dir():
        raise UsageError(f"{TARGET} {given}: no such folder (a training run folder, a local Hugging Face checkpoint "
                         f"folder, or '{EMBEDDED_MODEL}')")
    if (path / "args.json").is_file():
        try:
            saved, checkpoint = open_run(path.resolve(), args.checkpoint)
        except ConfigError as exc:
            raise UsageError(str(exc).replace(f"--run {path.resolve()}", f"{TARGET} {given}", 1)) from None
        return _Target(str(path.resolve()), run=True, checkpoint=checkpoint, base=saved["resolved"]["base_model"],
                       base_name=str(saved.get("model_name_or_path") or ""))
    if args.checkpoint:
        raise UsageError(f"--checkpoint names a checkpoint of a training run, and {TARGET} {given} has no args.json")
    if not (path / "config.json").is_file():
        raise UsageError(f"{TARGET} {given}: neither a training run folder (no args.json) nor a Hugging Face "
                         f"checkpoint folder (no config.json)")
    try:
        check_model_folder(TARGET, given)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return _Target(str(path.resolve()), run=False)


def _generate_args(args: argparse.Namespace, target: _Target, sample: Path, answers: Path) -> argparse.Namespace:
    """``fcenv generate``'s arguments for the card, parsed by its own parser: the model or run,
    and each flag the card was given (those not given keep generate's defaults, or the run's)."""
    from fcenv.cli import build_parser
    from fcenv.flags import ENGINE, SAMPLING, TOOL_FORMAT, given

    argv = ["generate", "--run" if target.run else "--model_name_or_path", target.path,
            "--dataset_path", str(sample), "--out", str(answers)]
    if args.checkpoint:
        argv += ["--checkpoint", args.checkpoint]
    for flag in (*SAMPLING.flags, *ENGINE.flags, *TOOL_FORMAT.flags):
        if not hasattr(args, flag.name):
            continue
        if flag.switch:
            argv += [f"--{flag.name}"] if getattr(args, flag.name) else []
        elif given(args, flag.name):
            argv += [f"--{flag.name}", str(getattr(args, flag.name))]
    if not args.progress:
        argv.append("--no-progress")
    return build_parser().parse_args(argv)


def _settings(generate_args: argparse.Namespace, target: _Target) -> dict[str, Any]:
    """What generate will record of the settings in ``COMPARED``, a run's filled in as generate
    fills them (``apply_run`` on a copy: applying it twice changes nothing)."""
    from fcenv.algos.config import ConfigError
    from fcenv.algos.from_run import apply_run

    settings = copy.copy(generate_args)
    if target.run:
        try:
            apply_run(settings)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    return {"model": settings.model_name_or_path, "adapter": settings.adapter or None,
            "tool_format": settings.tool_format or None, "system_prompt": settings.system_prompt or None,
            "prompt_variation": settings.prompt_variation or None, "greedy": settings.greedy,
            "temperature": settings.temperature, "max_new_tokens": settings.max_new_tokens,
            "context_window": settings.context_window, "seed": settings.seed}


def _earlier_answers(result: Path, ids: list[str], settings: dict[str, Any]) -> dict[str, dict]:
    """The answers OUT holds to entries of this sample (the finished file's, then those of the
    ``.partial`` file an interrupted run left), by id. ``UsageError`` when one was made with
    other settings than this card's, before anything is written."""
    from fcenv.flags import EMBEDDED_MODEL
    from fcenv.result_record import RECORD_KEY

    # The embedded model's prompt when none is given is its own short one, which the record
    # names; any other model's is BFCL's, recorded as none.
    compared = [name for name in COMPARED if not (name == "system_prompt" and settings[name] is None
                                                  and settings["model"] in ("", EMBEDDED_MODEL))]
    wanted, kept = set(ids), {}
    for path in (result, result.with_name(result.name + ".partial")):
        for number, line in _result_lines(path):
            if line["id"] not in wanted:
                continue
            record = line.get(RECORD_KEY)
            differ = [name for name in compared if isinstance(record, dict) and not _same(name, record.get(name),
                                                                                          settings[name])]
            if differ:
                said = ", ".join(f"{name} {record.get(name)!r} (this card: {settings[name]!r})" for name in differ)
                raise UsageError(f"--out {result.parent.parent}: the answers in {path} were made with {said} (fcenv "
                                 f"generate's record, line {number}): give another --out, or delete {result.parent} "
                                 f"to answer every entry again")
            kept.setdefault(line["id"], line)
    return kept


def _same(name: str, recorded: Any, asked: Any) -> bool:
    if name == "prompt_variation" and asked in ("none", "random"):
        return recorded in (None, "none")  # generate renders BFCL's default prompt for both (with_variation)
    if name == "temperature" and isinstance(recorded, (int, float)) and isinstance(asked, (int, float)):
        return float(recorded) == float(asked)
    return recorded == asked


def _result_lines(path: Path) -> list[tuple[int, dict]]:
    """A result or ``.partial`` file's lines, numbered (the card keeps those of its sample)."""
    from fcenv.algos.partial_results import PartialError, numbered_lines

    try:
        return numbered_lines(path)
    except PartialError as exc:
        raise UsageError(str(exc)) from None


def _answered(result: Path, kept: dict[str, dict], ids: list[str]) -> bool:
    """Whether the finished result file answers the sample: each entry once, nothing else."""
    partial = result.with_name(result.name + ".partial")
    return result.is_file() and not partial.exists() and len(kept) == len(ids) \
        and len(_result_lines(result)) == len(ids)


def _go_on_from(result: Path, kept: dict[str, dict], ids: list[str]) -> None:
    """The answers kept, as generate's ``.partial`` file, which generate goes on from (asking
    only the entries it lacks); the finished file, of another sample, is then done with."""
    from fcenv.algos.partial_results import rewrite

    partial = result.with_name(result.name + ".partial")
    if not kept and not partial.exists():
        return
    result.parent.mkdir(parents=True, exist_ok=True)
    order = {entry: index for index, entry in enumerate(ids)}
    rewrite(partial, sorted(kept.values(), key=lambda line: order[line["id"]]))
    if result.is_file():
        result.unlink()


def _decoder(settings: dict[str, Any]) -> list[str]:
    """How evaluate reads the answers: as BFCL does (``--compat bfcl``); a run trained under
    one prompt variation, with that variation's decoder, as generate tells a user to."""
    from fcenv.prompt_variations import PromptVariation

    if settings["prompt_variation"] not in (None, "none", "random"):
        return ["--handler", PromptVariation.parse(settings["prompt_variation"]).handler]
    return ["--compat", "bfcl"]


def _evaluate_args(sample: Path, result: Path, verdicts: Path, score_dir: Path, model_name: str,
                   decoder: list[str]) -> argparse.Namespace:
    from fcenv.cli import build_parser

    return build_parser().parse_args(["evaluate", "--dataset_path", str(sample), "--results", str(result),
                                      "--out", str(verdicts), "--score_dir", str(score_dir),
                                      "--model_name", model_name, *decoder])
