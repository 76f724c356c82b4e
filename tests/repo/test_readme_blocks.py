"""Every code block of the documentation (README.md, BENCHMARKS.md and every page under docs/)
runs as printed, or, where running it is a training run, a GPU job or a download, has its
commands parsed, with the reason in a marker beside the block.

A marker is an HTML comment on the line before the block (invisible on the rendered page;
``readme-test:`` is read as ``docs-test:``):

    <!-- docs-test: parse: why -->        (bash) every command is parsed by its own parser, not run
    <!-- docs-test: tiny-model: why -->   (python) runs with the tests' tiny model where the block
                                          builds the embedded one (its build takes minutes to an hour)
    <!-- docs-test: tiny-model, lpr-pairs: why -->  the same, in a folder where `fcenv process-rewards`
                                          wrote lpr/pairs.jsonl

A python block without a marker runs as printed. A ``print(...)  # prints: TEXT`` comment is
checked against what the block printed (``...`` stands for anything). Each block runs in a fresh
interpreter in a folder of its own, as a reader would paste it.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"(?:^<!-- (?:docs|readme)-test: (?P<kinds>[\w, -]+): (?P<why>[^\n]*?) -->\n)?"
                   r"^```(?P<lang>\w*)\n(?P<code>.*?)^```$", re.DOTALL | re.MULTILINE)
KINDS = {"parse", "tiny-model", "lpr-pairs"}
EMBEDDED_BUILD = "build_tiny(dataset_path=MULTI_TURN_TRAIN)"


@dataclass(frozen=True)
class Block:
    file: str  # relative to the repository's root
    line: int
    lang: str
    kinds: frozenset[str]
    why: str
    code: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def blocks_of(document: Path) -> list[Block]:
    text = document.read_text()
    name = document.relative_to(ROOT).as_posix()
    return [Block(name, text.count("\n", 0, m.start("lang")) + 1, m["lang"],
                  frozenset(k.strip() for k in (m["kinds"] or "").split(",") if k.strip()), m["why"] or "", m["code"])
            for m in FENCE.finditer(text)]


def blocks() -> list[Block]:
    return [block for document in DOCUMENTS for block in blocks_of(document)]


def of(lang: str) -> list[Block]:
    return [b for b in blocks() if b.lang == lang]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.relative_to(ROOT).as_posix())
def test_every_block_is_run_or_parsed_and_a_marker_says_why(document):
    found = blocks_of(document)
    text = document.read_text()
    assert len(found) == text.count("\n```") // 2 + text.startswith("```"), f"{document.name}: a fence the test does not read"
    for block in found:
        assert block.kinds <= KINDS, f"{block}: unknown marker {sorted(block.kinds - KINDS)}"
        assert not block.kinds or block.why.strip(), f"{block}: a marker says why"
        if block.lang == "bash":
            assert block.kinds == {"parse"}, f"{block}: a bash block is parsed, with a marker saying why it is not run"
        elif block.lang == "python":
            assert "parse" not in block.kinds, f"{block}: python blocks run"
        else:  # what a command prints, a diagram, a layout, a config excerpt: nothing to run
            assert block.lang in ("", "text", "toml") and not block.kinds, f"{block}: {block.lang!r} block"


def test_readme_shows_the_env_on_its_first_screen():
    """README's first screen, beside the make targets, shows the env in a few lines of Python
    that run as printed (test_python_block_runs_as_printed runs them): gym.make, reset, step."""
    readme = blocks_of(ROOT / "README.md")
    make = next(b for b in readme if b.lang == "bash")
    first = [b for b in readme if b.lang == "python" and b.line <= 45]
    assert first, "no python block on README's first screen (its first 45 lines)"
    block = first[0]
    assert not block.kinds and make.line < block.line, f"{block}: runs as printed, after the make targets"
    assert all(part in block.code for part in ('gym.make("fcenv/FunctionCalling-v0"', ".reset(", ".step(")), block
    assert block.code.count("\n") <= 10 and expected_prints(block.code), f"{block}: a few lines, their prints checked"


@pytest.mark.parametrize("block", of("toml"), ids=str)
def test_toml_blocks_are_toml(block):
    tomllib.loads(block.code)


# ---------------------------------------------------------------- python blocks: run as printed

def lpr_pairs(folder: Path, model: Path) -> None:
    """lpr/pairs.jsonl as `fcenv process-rewards` writes it, from a result file with a right
    and a wrong answer to four tasks (the tests' tiny model samples no valid answer of its own)."""
    from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT
    from fcenv.bundled import BUNDLED
    from fcenv.data import load_tasks

    lines = []
    for task in load_tasks(BUNDLED["tiny_train"])[:4]:
        (name, args), = task.ground_truth[0].items()
        right = f"[{name}(" + ", ".join(f"{k}={v[0]!r}" for k, v in args.items()) + ")]"
        lines += [{"id": task.id, "result": right}, {"id": task.id, "result": "[wrong()]"}]
    (folder / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    subprocess.run([sys.executable, "-m", "fcenv", "process-rewards", "--model_name_or_path", str(model),
                    "--system_prompt", TINY_SYSTEM_PROMPT, "--dataset_path", "tiny_train", "--from_results",
                    "results.jsonl", "--completions", "2", "--out", "lpr/"],
                   cwd=folder, check=True, capture_output=True, timeout=300, env=environment())
    assert (folder / "lpr" / "pairs.jsonl").read_text().count("\n") == 4


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false"}


def expected_prints(code: str) -> list[re.Pattern]:
    said = re.findall(r"^\s*print\(.*\)\s*# prints: (.*)$", code, re.MULTILINE)
    return [re.compile(".*".join(re.escape(part) for part in text.strip().split("..."))) for text in said]


@pytest.mark.parametrize("block", of("python"), ids=str)
def test_python_block_runs_as_printed(block, request, tmp_path):
    code = block.code
    if "tiny-model" in block.kinds:
        model = request.getfixturevalue("tiny_model")
        assert EMBEDDED_BUILD in code, f"{block}: its marker says it builds the embedded model"
        code = code.replace(EMBEDDED_BUILD, repr(str(model)))
    if "lpr-pairs" in block.kinds:
        lpr_pairs(tmp_path, request.getfixturevalue("tiny_model"))
    script = tmp_path / "block.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env=environment(), check=False)
    assert done.returncode == 0, f"{block} failed:\n{done.stderr[-3000:]}"
    printed = [line.strip() for line in done.stdout.splitlines()]
    for pattern in expected_prints(block.code):
        assert any(pattern.fullmatch(line) for line in printed), f"{block} does not print {pattern.pattern}: {printed}"


# ---------------------------------------------------------------- bash blocks: every command parses

def commands(code: str) -> list[list[str]]:
    joined = code.replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            found.append(words[:cut])
            words = words[cut + 1:]
    return [c for c in found if c]


def parse_train(args: list[str]) -> None:
    from fcenv.algos.config import TrainConfig, build_parser

    TrainConfig(**vars(build_parser().parse_args([a for a in args if a != "..."])))


def parse_fcenv(args: list[str]) -> None:
    from fcenv.cli import build_parser

    if args[:1] == ["train"]:
        parse_train(args[1:])
    else:
        build_parser().parse_args(args)


@functools.cache
def script_help(python: str, script: tuple[str, ...]) -> str:
    """What ``--help`` prints, once per script however many blocks run it (each start imports
    torch: seconds)."""
    done = subprocess.run([python, *script, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=environment(), check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def parse_script(python: str, script: list[str], args: list[str]) -> None:
    """A script of ours (a file, or ``-m`` and a module): it starts, its --help lists every flag
    the command gives. A benchmark passes what follows ``--`` to the trainer, whose parser reads it."""
    if "--" in args:
        args, trainer = args[:args.index("--")], args[args.index("--") + 1:]
        parse_train(trainer)
    shown = script_help(python, tuple(script))
    for flag in (a.split("=")[0] for a in args if a.startswith("--")):
        assert flag in shown, f"{shlex.join(script)} has no flag {flag}"


def parse_pip(args: list[str]) -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for arg in args:
        for wanted in re.findall(r"\[([\w,]+)\]", arg):
            assert set(wanted.split(",")) <= set(extras), f"pip install {arg}: no such extra"


def parse_command(words: list[str], request) -> None:
    program, args = words[0], words[1:]
    if program.endswith("/bin/python"):  # a venv's interpreter (.venv/bin/python): as python
        program = "python"
    elif program.endswith("/bin/pip"):
        program = "pip"
    if program == "make":
        makefile = (ROOT / "Makefile").read_text()
        for target in args:
            assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), f"make {target}: no such target"
    elif program == "pip":
        parse_pip(args)
    elif program == "python" and args[:2] == ["-m", "venv"]:
        assert len(args) == 3, f"python -m venv DIR: {args}"
    elif program.startswith("bench/"):  # bench/run_all, bench/run_gpu: our shell scripts
        assert os.access(ROOT / program, os.X_OK), f"{program}: no such executable script"
    elif program == "fcenv":
        parse_fcenv(args)
    elif "train_fctncalling.py" in words:  # python, accelerate launch or torchrun
        parse_train(words[words.index("train_fctncalling.py") + 1:])
    elif program == "python" and args[:2] == ["-m", "fcenv"]:
        parse_fcenv(args[2:])
    elif program == "python" and args[:2] == ["-m", "verl.trainer.main_ppo"]:
        # verl's trainer runs in its own venv on GPUs: the recipe it is pointed at exists
        folder = args[args.index("--config-path") + 1].replace("$PWD", str(ROOT))
        assert (Path(folder) / f"{args[args.index('--config-name') + 1]}.yaml").is_file()
    elif program == "python" and args and args[0].endswith(".py"):
        # verl's scripts run in verl's venv (verl pins an older transformers)
        python = request.getfixturevalue("verl_python") if args[0].startswith("examples/verl/") else sys.executable
        parse_script(str(python), args[:1], args[1:])
    elif program == "python" and args[:1] == ["-m"] and args[1].startswith(("bench.", "harness.")):
        parse_script(sys.executable, args[:2], args[2:])
    else:
        raise AssertionError(f"no rule to parse {shlex.join(words)}: add one to tests/repo/test_readme_blocks.py")


@pytest.mark.parametrize("block", of("bash"), ids=str)
def test_bash_block_parses(block, request):
    found = commands(block.code)
    assert found, f"{block}: no command"
    for words in found:
        try:
            parse_command(words, request)
        except SystemExit as exc:
            raise AssertionError(f"{block}: {shlex.join(words)} does not parse (exit {exc.code})") from None
