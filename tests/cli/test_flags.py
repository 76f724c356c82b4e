"""One flag vocabulary across `fcenv train`, `fcenv generate`,
`fcenv process-rewards`, `fcenv evaluate` and `fcenv card` (fcenv/flags.py).

A flag of the same meaning has one name in every command (the trainer's), with the same help and
the same check; the names the commands used before still parse, with one line saying the new
one; every dataset spec the trainer takes (a mix, a converted source) is taken by generate and
process-rewards too, and a bad one is refused before any model loads; ``--run`` fills in and
refuses alike in the commands that take it."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fcenv import flags

ROOT = Path(__file__).resolve().parents[2]

# Which shared flags each command takes.
EXPECTED = {
    "train": {"model_name_or_path", "adapter", "dataset_path", "temperature", "max_new_tokens", "context_window", "seed",
              "rollout_engine", "n_rollout_threads", "kv_cache_mib", "tool_format", "system_prompt", "prompt_variation",
              "web_search"},
    "generate": {f.name for g in flags.SHARED for f in g.flags},
    # Process rewards sample episodes as training plays them: never greedy, never the set.
    "process-rewards": {f.name for g in flags.SHARED for f in g.flags} - {"greedy"}
    - {f.name for f in flags.FORMAT_SENSITIVITY.flags},
    "evaluate": {"dataset_path", "tool_format", *(f.name for f in flags.FORMAT_SENSITIVITY.flags)},
    # The card answers its own sample, with a run or a model as its one argument.
    "card": {"checkpoint", "context_window", "greedy", "max_new_tokens", "n_rollout_threads", "kv_cache_mib",
             "rollout_engine", "seed", "system_prompt", "temperature", "tool_format"},
}
# Flags a command declares with help of its own: card's --checkpoint needs no --run.
OWN_HELP = {("card", "checkpoint")}
# The spellings the commands had before, and the flag each now is.
OLD = [("generate", "--model", "model_name_or_path", "m"), ("generate", "--data", "dataset_path", ["tiny_eval"]),
       ("generate", "--batch", "n_rollout_threads", 3), ("process-rewards", "--threads", "n_rollout_threads", 3),
       ("process-rewards", "--data", "dataset_path", "tiny_eval"), ("evaluate", "--data", "dataset_path", ["tiny_eval"])]
REQUIRED = {"generate": ["--out", "o"], "process-rewards": ["--out", "o"], "evaluate": ["--results", "r", "--out", "o"]}


def parsers() -> dict[str, argparse.ArgumentParser]:
    from fcenv.algos.config import build_parser as train_parser
    from fcenv.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    return {"train": train_parser(),
            **{name: commands[name] for name in ("generate", "process-rewards", "evaluate", "card")}}


def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {action.dest: action for action in parser._actions if action.option_strings}


def test_a_flag_of_one_meaning_has_one_name_and_help_in_every_command():
    pytest.importorskip("torch")  # the trainer's parser
    found = {command: options(parser) for command, parser in parsers().items()}
    for command, expected in EXPECTED.items():
        shared = {dest for dest in found[command] if dest in {f.name for g in flags.SHARED for f in g.flags}}
        assert shared == expected, (command, sorted(shared ^ expected))
        for dest in expected:
            action, flag = found[command][dest], flags.shared_flag(dest)
            assert action.option_strings[0] == f"--{dest}", (command, action.option_strings)
            assert set(action.option_strings[1:]) <= set(flag.old), (command, action.option_strings)
            assert (command, dest) in OWN_HELP or action.help.startswith(flag.help_text()), (command, dest, action.help)
    # The old spellings are nobody's own flag any more, and a flag two commands share is spelt alike.
    assert not {"model", "data", "batch", "threads"} & {dest for command in found.values() for dest in command}
    for dest in {dest for command in found.values() for dest in command}:
        spellings = {command[dest].option_strings[0] for command in found.values() if dest in command}
        assert len(spellings) == 1, (dest, spellings)


@pytest.mark.parametrize("command, old, dest, value", OLD)
def test_an_old_name_still_parses_and_says_the_new_one(command, old, dest, value, capsys):
    from fcenv.cli import build_parser

    given = [str(v) for v in value] if isinstance(value, list) else [str(value)]
    required = REQUIRED[command] + (["--dataset_path", "tiny_eval"] if command == "generate" and dest != "dataset_path"
                                    else [])
    args = build_parser().parse_args([command, old, *given, *required])
    assert getattr(args, dest) == value
    assert capsys.readouterr().err == (f"fcenv {command}: {old} is the old name of --{dest}: it still works, but "
                                       f"write --{dest}\n")
    args = build_parser().parse_args([command, f"--{dest}", *given, *required])
    assert getattr(args, dest) == value and capsys.readouterr().err == ""


def test_tool_format_with_a_system_prompt_or_a_handler_is_one_message_everywhere(capsys):
    """The rule is stated once (fcenv.tool_formats.tool_format_conflicts): the same message from
    the trainer, generate, process-rewards, evaluate and the env."""
    pytest.importorskip("torch")
    import gymnasium as gym

    from fcenv.algos.config import parse_config
    from fcenv.cli import main
    from fcenv.tool_formats import tool_format_conflicts

    expected = tool_format_conflicts(True, system_prompt=True, prefix="--")[0]
    both = ["--tool_format", "hermes", "--system_prompt", "{functions}"]
    with pytest.raises(SystemExit):
        parse_config(both)
    assert expected in capsys.readouterr().err
    for command, extra in (("generate", ["--dataset_path", "tiny_eval"]), ("process-rewards", [])):
        assert main([command, *both, *extra, "--out", "unused"]) == 2
        assert capsys.readouterr().err == f"fcenv {command}: {expected}\n"
    handler = tool_format_conflicts(True, handler=True, prefix="--")[0]
    assert main(["evaluate", "--tool_format", "hermes", "--handler", "auto", "--dataset_path", "tiny_eval",
                 "--results", "r", "--out", "v"]) == 2
    assert capsys.readouterr().err == f"fcenv evaluate: {handler}\n"
    with pytest.raises(ValueError) as caught:
        gym.make("fcenv/FunctionCalling-v0", dataset_path="tiny_eval", tool_format="hermes", system_prompt="x")
    assert str(caught.value) == tool_format_conflicts(True, system_prompt=True)[0] == expected.replace("--", "")


# ---------------------------------------------------------------- dataset specs: every command takes each one

def small_split(name: str, count: int, folder: Path) -> Path:
    """The first ``count`` entries of a bundled split, with their answers, as a question file."""
    from fcenv.bundled import BUNDLED

    source = BUNDLED[name]
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    for origin, target in ((source, folder / source.name),
                           (source.parent / "possible_answer" / source.name, folder / "possible_answer" / source.name)):
        target.write_text("".join(origin.read_text().splitlines(keepends=True)[:count]))
    return folder / source.name


def xlam_source(folder: Path) -> Path:
    from tests.support.source_samples import XLAM

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "xlam.jsonl").write_text("".join(json.dumps(record) + "\n" for record in XLAM))
    return folder / "xlam.jsonl"


def fcenv(home: Path, *args: str) -> subprocess.CompletedProcess:
    """The command with a home of its own: its conversion cache (~/.cache/fcenv/sources) is the test's."""
    return subprocess.run([sys.executable, "-m", "fcenv", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("command", ["generate", "process-rewards"])
def test_a_bad_dataset_spec_is_refused_naming_the_flag_before_any_model_loads(command, tmp_path):
    """A missing file, a mix with a missing part or a bad weight: one line naming --dataset_path,
    and no model loaded (the model folder given is one no library can load, which a command that
    got that far would fail on)."""
    from tests.cli.test_input_files import unloadable_model

    model = unloadable_model(tmp_path / "model")
    for spec, problem in (("nope.json", "no such file"),
                          ("tiny_eval:1,nope.json:2", "nope.json: no such file (in a mix of several datasets)"),
                          ("tiny_eval:x,tiny_train", "tiny_eval: bad weight 'x' in the mix")):
        done = fcenv(tmp_path / "home", command, "--model_name_or_path", str(model), "--dataset_path", spec,
                     "--out", str(tmp_path / "out"))
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-3000:]
        assert done.stderr.startswith(f"fcenv {command}: --dataset_path {spec}: ") and problem in done.stderr, done.stderr
        assert "no-such-architecture" not in done.stderr and not (tmp_path / "out").exists()


def test_generate_answers_a_mix_and_a_converted_source_that_evaluate_scores(tiny_model, tmp_path):
    """`fcenv generate --dataset_path MIX SOURCE`: each spec is answered as the question file it
    resolves to, whose stem names its result file (mix_result.json, xlam_result.json), and
    `fcenv evaluate --dataset_path MIX SOURCE` scores them."""
    pytest.importorskip("peft")
    from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT
    from tests.support.source_samples import XLAM_TASKS

    mix = f"{small_split('tiny_eval', 4, tmp_path / 'a')}:1,{small_split('tiny_train', 4, tmp_path / 'b')}:1"
    source = str(xlam_source(tmp_path / "sources"))
    home, out = tmp_path / "home", tmp_path / "answers"
    done = fcenv(home, "generate", "--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT,
                 "--dataset_path", mix, source, "--out", str(out), "--greedy", "--max_new_tokens", "8", "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    results = [out / "mix_result.json", out / "xlam_result.json"]
    assert done.stdout.split() == [str(path) for path in results]
    assert f"--dataset_path {mix} is the question file {home}" in done.stderr
    scored = fcenv(home, "evaluate", "--dataset_path", mix, source, "--results", *map(str, results),
                   "--out", str(tmp_path / "verdicts.jsonl"))
    assert scored.returncode == 0, scored.stderr[-3000:]
    assert "TOTAL" in scored.stdout and "xlam_parallel" in scored.stdout
    answered = [len(path.read_text().splitlines()) for path in results]
    assert answered == [8, len(XLAM_TASKS)]
    assert len((tmp_path / "verdicts.jsonl").read_text().splitlines()) == sum(answered)
    # The same spec twice would write one result file twice: refused before any work.
    again = fcenv(home, "generate", "--model_name_or_path", str(tiny_model), "--dataset_path", mix, mix,
                  "--out", str(tmp_path / "again"))
    assert again.returncode == 2 and "would both be answered in mix_result.json" in again.stderr
    assert not (tmp_path / "again").exists()


def test_process_rewards_samples_a_mix_and_a_converted_source(tiny_model, tmp_path):
    pytest.importorskip("peft")
    from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT

    mix = f"{small_split('tiny_train', 4, tmp_path / 'a')}:1,{small_split('tiny_eval', 4, tmp_path / 'b')}:1"
    for spec in (mix, str(xlam_source(tmp_path / "sources"))):
        out = tmp_path / "lpr"
        done = fcenv(tmp_path / "home", "process-rewards", "--model_name_or_path", str(tiny_model), "--system_prompt",
                     TINY_SYSTEM_PROMPT, "--dataset_path", spec, "--tasks", "2", "--trajectories", "1",
                     "--completions", "1", "--n_rollout_threads", "2", "--max_new_tokens", "8", "--no-progress",
                     "--out", str(out))
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout.strip().splitlines()[-1])["trajectories"] == 2


# ---------------------------------------------------------------- --run: alike in generate and process-rewards

def fake_run(folder: Path, **resolved) -> Path:
    """A run folder as `open_run` reads it: args.json and a checkpoint's actor folder."""
    (folder / "checkpoints" / "iter_1" / "actor").mkdir(parents=True)
    saved = {"max_new_tokens": 16, "temperature": 0.7,
             "resolved": {"base_model": str(folder / "base"), "tool_format": None, "system_prompt": "Mine: {functions}",
                          "context_window": 512, "train_path": "/data/train.json", "eval_path": "/data/eval.json",
                          "eval_indices": [], **resolved}}
    (folder / "args.json").write_text(json.dumps(saved))
    return folder


@pytest.mark.parametrize("command", ["generate", "process-rewards"])
def test_run_fills_in_what_was_not_given_and_refuses_a_chat_format_it_was_not_trained_in(command, tmp_path):
    pytest.importorskip("peft")
    from fcenv.algos.from_run import apply_run
    from fcenv.arguments import UsageError
    from fcenv.cli import build_parser

    run = fake_run(tmp_path / "run")
    data = ["--dataset_path", "tiny_eval"] if command == "generate" else []

    def parsed(*extra: str) -> argparse.Namespace:
        return build_parser().parse_args([command, "--run", str(run), "--checkpoint", "iter_1", "--out", "o",
                                          *data, *extra])

    args = parsed()
    apply_run(args)
    assert (args.model_name_or_path, args.adapter) == (str(run / "base"), str(run / "checkpoints" / "iter_1" / "actor"))
    assert (args.tool_format, args.system_prompt, args.context_window, args.max_new_tokens, args.temperature) == \
        ("", "Mine: {functions}", 512, 16, 0.7)
    assert args.dataset_path == (["tiny_eval"] if command == "generate" else "/data/train.json")
    # Sampling and data flags given change what the run gives; the same prompt as the run's is no contradiction.
    args = parsed("--max_new_tokens", "48", "--temperature", "1.0", "--system_prompt", "Mine: {functions}",
                  *([] if data else ["--dataset_path", "tiny_train"]))
    apply_run(args)
    assert (args.max_new_tokens, args.temperature, args.context_window) == (48, 1.0, 512)
    assert args.dataset_path == (["tiny_eval"] if data else "tiny_train")
    # A chat format the run was not trained in, and a model or adapter beside it, are refused.
    for extra in (["--tool_format", "hermes"], ["--system_prompt", "Other: {functions}"]):
        with pytest.raises(UsageError, match=re.escape(f"--run {run} was trained in prompting with its system "
                                                       f"prompt, and {extra[0]} would render its chats otherwise: "
                                                       f"leave it out")):
            apply_run(parsed(*extra))
    assert flags.problems(parsed("--model_name_or_path", "m", "--adapter", str(tmp_path)), flags.MODEL) == [
        "--run names the model and its actor adapter: leave out --model_name_or_path and --adapter"]
