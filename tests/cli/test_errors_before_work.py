"""What a newcomer gets wrong first is named before any work, in one line with
exit status 2, naming the flag and what to do: a misspelt bundled split, a model folder
without its tokenizer or weights, and the training commands on an install without the
``[train]`` extras. The tiny model's cache is an empty folder: a command that got as far as the
model would start a build there."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, python: str = sys.executable, root: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([python, *args], cwd=root, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(root)})


def assert_one_line(done: subprocess.CompletedProcess, *expected: str) -> None:
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    for text in expected:
        assert text in done.stderr, (text, done.stderr)


def test_a_misspelt_bundled_split_gets_a_hint(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    for flag, name, meant in (("--dataset_path", "tiny_evl", "tiny_eval"),
                              ("--eval_dataset_path", "multi_turn_trian", "multi_turn_train")):
        done = run("train_fctncalling.py", "--cache_dir", str(cache), "--results_dir", str(tmp_path / "runs"),
                   flag, name)
        assert_one_line(done, f"error: {flag} {name}: ", f"no such file (did you mean the bundled split {meant}?)")
    done = run("-m", "fcenv", "evaluate", "--dataset_path", "tiny_evl", "--results", str(tmp_path / "r.jsonl"),
               "--out", str(tmp_path / "v.jsonl"))
    assert_one_line(done, "--dataset_path tiny_evl: ", "did you mean the bundled split tiny_eval?")
    assert not any(cache.iterdir()) and not (tmp_path / "runs").exists()


def test_a_model_folder_without_tokenizer_or_weights_is_named(tiny_model, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    folder = tmp_path / "model"
    folder.mkdir()
    flags = ["--cache_dir", str(cache), "--results_dir", str(tmp_path / "runs"), "--model_name_or_path", str(folder)]
    assert_one_line(run("train_fctncalling.py", *flags), f"--model_name_or_path {folder}: ", "no config.json")
    shutil.copy(tiny_model / "config.json", folder)
    assert_one_line(run("train_fctncalling.py", *flags), f"--model_name_or_path {folder}: ",
                    "without its tokenizer", "tokenizer.save_pretrained")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tiny_model / name, folder)
    assert_one_line(run("train_fctncalling.py", *flags), f"--model_name_or_path {folder}: ",
                    "without weights", "model.save_pretrained")
    assert_one_line(run("-m", "fcenv", "generate", "--model_name_or_path", str(folder), "--dataset_path", "tiny_eval",
                        "--out", str(tmp_path / "answers")), f"--model_name_or_path {folder}: ", "without weights")
    assert not any(cache.iterdir()) and not (tmp_path / "runs").exists()


def base_install(target: Path) -> Path:
    """A venv holding what `pip install .` installs, without extras: this checkout, fcenv's
    metadata (its commands' entry points) and its base requirements, linked from the test venv
    (so nothing is downloaded), and nothing of torch, transformers, peft or accelerate."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True, timeout=120)
    python = target / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "checkout.pth").write_text(f"{ROOT}\n")
    wanted, seen = ["fcenv"], set()
    while wanted:
        dist = importlib.metadata.distribution(wanted.pop())
        name = dist.metadata["Name"].lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        home = Path(dist.locate_file(""))
        for top in {f.parts[0] for f in dist.files or [] if f.parts[0] != ".."}:
            if name == "fcenv" and not top.endswith(".dist-info"):
                continue  # the editable install's finder points at another checkout
            if not (site / top).exists() and (home / top).exists():
                (site / top).symlink_to(home / top)
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(requirement.name)
    assert not {"torch", "transformers", "peft", "accelerate"} & seen
    return python


def test_training_commands_without_the_train_extras_say_what_to_install(tmp_path):
    python = str(base_install(tmp_path / "venv"))
    hint = 'pip install "fcenv[train]"'
    assert_one_line(run("-m", "fcenv", "train", python=python), "fcenv train: error: needs the training extras",
                    "no torch", hint)
    assert_one_line(run("train_fctncalling.py", "--help", python=python), hint)
    assert_one_line(run("-m", "fcenv", "generate", "--dataset_path", "tiny_eval", "--out", str(tmp_path / "a"),
                        python=python),
                    "fcenv generate: needs the training extras", hint)
    assert_one_line(run("-m", "fcenv", "process-rewards", "--out", str(tmp_path / "lpr"), python=python), hint)
    # the env, the checkers and the evaluator work without them
    evaluated = run("-m", "fcenv", "evaluate", "--dataset_path", "tiny_eval", "--results", str(tmp_path / "none.jsonl"),
                    "--out", str(tmp_path / "v.jsonl"), python=python)
    assert evaluated.returncode == 2 and "none.jsonl" in evaluated.stderr and "needs the training" not in evaluated.stderr


def test_flag_errors_are_one_line_and_flags_are_spelt_out(capsys):
    """No page of usage before the error, and no abbreviations (a misspelt
    --num_env_step would otherwise mean --num_env_steps)."""
    import pytest

    from fcenv.algos.config import parse_config
    from fcenv.cli import build_parser

    for parse, argv, expected in (
        (parse_config, ["--num_env_step", "5"], "train_fctncalling.py: error: unrecognized arguments: --num_env_step 5"),
        (parse_config, ["--lr", "nan"], "--lr must be positive and finite, not nan"),
        (build_parser().parse_args, ["evaluate", "--dat", "x", "--results", "r", "--out", "o"],
         "fcenv evaluate: error: the following arguments are required: --dataset_path"),
    ):
        with pytest.raises(SystemExit) as caught:
            parse(argv)
        err = capsys.readouterr().err
        assert caught.value.code == 2 and err.count("\n") == 1 and "usage:" not in err, err
        assert expected in err and "--help` lists the flags" in err, err


def test_a_trainable_token_that_is_not_one_token_is_named(tiny_model, tmp_path):
    """--trainable_tokens takes tokens as the tokenizer writes them; text the tokenizer splits
    is named in one line once the tokenizer is loaded, before any rollout, and no checkpoint is
    written."""
    done = run("train_fctncalling.py", "--model_name_or_path", str(tiny_model), "--results_dir", str(tmp_path / "runs"),
               "--trainable_tokens", "<tool_call> and more")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1].endswith(
        "error: --trainable_tokens: '<tool_call> and more' is 11 tokens for this tokenizer, not one")
    assert not list((tmp_path / "runs").rglob("checkpoints"))


def test_the_vllm_engine_without_vllm_is_named_before_the_model_loads(tiny_model, tmp_path):
    """--rollout_engine vllm where its interpreter has no vLLM: one line naming the engine and
    `make vllm`, before the model loads (no loading output) and before any run folder. The
    package runs as installed without `make vllm`: copied where no `.vllm-venv` lies beside it,
    so the engine's interpreter is this venv's, which has no vLLM (vLLM's pins live apart)."""
    from fcenv.algos.rollout.vllm import vllm_missing
    from fcenv.algos.tiny.build import TINY_SYSTEM_PROMPT

    assert vllm_missing(sys.executable) is not None, "the trainer's venv has vLLM: nothing would be missing"
    installed = tmp_path / "installed"
    shutil.copytree(ROOT / "fcenv", installed / "fcenv", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "train_fctncalling.py", installed)
    done = run("train_fctncalling.py", "--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT,
               "--hide_function_docs", "--results_dir", str(tmp_path / "runs"), "--rollout_engine", "vllm",
               root=installed)
    assert_one_line(done, "error: --rollout_engine vllm: vLLM is not installed for ", "`make vllm`")
    assert not (tmp_path / "runs").exists()
    done = run("-m", "fcenv", "generate", "--model_name_or_path", str(tiny_model), "--dataset_path", "tiny_eval",
               "--out", str(tmp_path / "out"), "--rollout_engine", "vllm", root=installed)
    assert_one_line(done, "--rollout_engine vllm: vLLM is not installed for ", "`make vllm`")


def memory_sample(bfcl_dir: Path, folder: Path) -> Path:
    """One question of each memory scenario and category (fcenv.bfcl_sample's), with the folders
    its loader reads beside it."""
    from fcenv.bfcl_sample import write_sample

    sample = write_sample(bfcl_dir, "memory", 1, folder)
    for name in ("multi_turn_func_doc", "memory_prereq_conversation"):
        (folder / name).symlink_to(bfcl_dir / name)
    return sample


def run_at_home(home: Path, *args: str) -> subprocess.CompletedProcess:
    """A command whose home folder is ``home``: the encoder is looked for in its
    .cache/fcenv/models, where the embedded model would be built too."""
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(home)})


def test_a_missing_or_damaged_memory_encoder_is_named_before_the_model_loads(bfcl_dir, minilm, tmp_path):
    """Vector-memory entries need all-MiniLM-L6-v2. Without it, training
    loaded the model and failed with a traceback, and generate answered every other entry first;
    a cut model.safetensors gave a raw SafetensorError. Now both are one line naming the flag, the
    encoder's folder and the command that repairs it, before the embedded model's build (which
    would begin in the same models folder) and before any run folder."""
    data = memory_sample(bfcl_dir, tmp_path / "data")
    home = tmp_path / "home"
    models = home / ".cache" / "fcenv" / "models"
    folder = models / "all-minilm-l6-v2"
    cache = tmp_path / "cache"
    cache.mkdir()
    train = ["train_fctncalling.py", "--cache_dir", str(cache), "--results_dir", str(tmp_path / "runs"),
             "--dataset_path", str(data)]
    generate = ["-m", "fcenv", "generate", "--dataset_path", str(data), "--out", str(tmp_path / "out"),
                "--no-progress"]
    lead = f"--dataset_path {data} holds 5 vector-memory entries (first: memory_vector_0-customer-0), but "
    for command in (train, generate):
        assert_one_line(run_at_home(home, *command), lead, f"the vector memory's sentence encoder is not in {folder}",
                        "`python -m fcenv models all-minilm-l6-v2`")
        assert not models.exists()
    shutil.copytree(minilm, folder)
    with (folder / "model.safetensors").open("r+b") as handle:
        handle.truncate(1_000_000)
    for command in (train, generate):
        assert_one_line(run_at_home(home, *command), lead,
                        f"the vector memory's sentence encoder in {folder} is damaged (model.safetensors missing or "
                        f"not as pinned); fetch it again with `python -m fcenv models all-minilm-l6-v2`")
        assert sorted(p.name for p in models.iterdir()) == ["all-minilm-l6-v2"]
    assert not any(cache.iterdir()) and not (tmp_path / "runs").exists() and not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def unloadable(tiny_model, bfcl_dir, tmp_path_factory) -> dict[str, Path]:
    """The tiny model with weights that cannot load (a command that read them would end in the
    loader's error, not in one line naming the flag), and a web-search slice with its corpus."""
    from harness.agentic_slices import write_slices

    folder = tmp_path_factory.mktemp("unloadable")
    shutil.copytree(tiny_model, folder / "model")
    (folder / "model" / "model.safetensors").write_bytes(b"not weights")
    return {"model": folder / "model", **write_slices(bfcl_dir, folder / "agentic", memory=1, web=2)}


BEFORE_THE_WEIGHTS = {
    "item6-not-one-token": (["--trainable_tokens", "<tool_call> and more"],
                            ["--trainable_tokens: '<tool_call> and more' is ", " tokens for this tokenizer, not one"]),
    "item6-empty": (["--trainable_tokens", ""], ["--trainable_tokens: an empty string is no token"]),
    "item7-sft-coef": (["{web}", "--sft_coef", "1"], ["--sft_coef 1.0: --dataset_path {web_search} holds no task with a "
                                                      "ground truth to learn", "leave out --sft_coef 1.0"]),
    "item8-warmup-steps": (["{web}", "--warmup_steps", "4"], ["--warmup_steps 4: --dataset_path {web_search} holds no "
                                                              "task with a ground truth to learn"]),
    "item9-multi-turn": (["--dataset_path", "multi_turn_train", "--prompt_variation", "random"],
                         ["--prompt_variation random: --dataset_path ", "multi_turn_train.json holds no entry a prompt "
                          "variation reaches (first: ", "BFCL varies the prompt of single-turn Python entries only"]),
    "item9-java": (["--dataset_path", "{java}", "--prompt_variation", "random"],
                   ["holds no entry a prompt variation reaches (first: simple_java_0, simple_java)"]),
}


@pytest.mark.parametrize("case", list(BEFORE_THE_WEIGHTS))
def test_training_flags_the_data_or_tokenizer_cannot_serve_are_named_before_the_weights_load(unloadable, bfcl_dir,
                                                                                              tmp_path, case):
    """--trainable_tokens that are not one token (or empty), --sft_coef
    and --warmup_steps on data without a ground truth (agentic entries), and --prompt_variation
    on data no variation reaches (multi-turn, Java) were refused after the model loaded, or
    skipped without a word; the tokenizer and the data alone say so."""
    extra, expected = BEFORE_THE_WEIGHTS[case]
    places = {"web_search": str(unloadable["web_search"]), "java": str(bfcl_dir / "BFCL_v4_simple_java.json")}
    web = ["--dataset_path", places["web_search"], "--web_search", str(unloadable["corpus"])]
    given = [part for flag in extra for part in (web if flag == "{web}" else [flag.format(**places)])]
    runs = tmp_path / "runs"
    done = run("train_fctncalling.py", "--model_name_or_path", str(unloadable["model"]), "--results_dir", str(runs),
               *given)
    assert_one_line(done, *(text.format(**places) for text in expected))
    assert not runs.exists()
