"""What a command decides once, at its start, and hands down: its dataset specs resolved (each
spec once per run, however many envs, checks and records use its file) and its chat mode (every
env it makes shows the chats the same way, the way ``ChatMode`` says for the flags)."""

from __future__ import annotations

import json
import sys
import types
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("peft")
from fcenv.algos.tiny.build import TINY_EVAL, TINY_SYSTEM_PROMPT
from fcenv.chat_mode import ChatMode
from fcenv.cli import main
from fcenv.env import FunctionCallingEnv
from fcenv.sources import resolve
from tests.support.runs import tiny_flags

CHAT = [{"role": "system", "content": "You call functions."}, {"role": "user", "content": "Set an alarm at 7."}]


def _small_file(folder: Path, name: str, first: int, count: int) -> Path:
    """``count`` entries of the bundled held-out split as a BFCL question file with its answers."""
    questions = TINY_EVAL.read_text().splitlines()[first:first + count]
    answers = (TINY_EVAL.parent / "possible_answer" / TINY_EVAL.name).read_text().splitlines()[first:first + count]
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("\n".join(questions) + "\n")
    (folder / "possible_answer" / name).write_text("\n".join(answers) + "\n")
    return folder / name


class Watched:
    """The real resolver and env, wrapped to note each call and forward it unchanged."""

    def __init__(self, monkeypatch):
        self.resolved: Counter = Counter()
        self.files: set[str] = set()  # what the specs resolved to
        self.envs: list[FunctionCallingEnv] = []
        real_resolve, real_init = resolve.resolve_dataset, FunctionCallingEnv.__init__

        def resolve_dataset(spec, *args, **kwargs):
            self.resolved[str(spec)] += 1
            file = real_resolve(spec, *args, **kwargs)
            self.files |= {str(file), str(file.resolve())}
            return file

        resolve_dataset.forwards_to = real_resolve

        def init(env, *args, **kwargs):
            real_init(env, *args, **kwargs)
            self.envs.append(env)

        # Every module that imported the resolver holds its own name for it (one first imported
        # under an earlier watch holds that watch's wrapper).
        for module in list(sys.modules.values()):
            named = vars(module).get("resolve_dataset") if isinstance(module, types.ModuleType) else None
            if named is real_resolve or getattr(named, "__dict__", {}).get("forwards_to") is real_resolve:
                monkeypatch.setattr(module, "resolve_dataset", resolve_dataset)
        monkeypatch.setattr(FunctionCallingEnv, "__init__", init)

    def specs(self) -> Counter:
        """The resolutions of anything but a file a spec resolved to (which the envs read by name)."""
        return Counter({spec: n for spec, n in self.resolved.items() if spec not in self.files})

    def shown(self) -> set[tuple]:
        """How the envs made show a chat: (tool format, system prompt, a fixed chat rendered)."""
        return {(env.settings.tool_format, env.settings.system_prompt, env.renderer(CHAT)) for env in self.envs}


@pytest.fixture(scope="module")
def runs(tiny_model, tmp_path_factory):
    """One run of each command on the tiny test model, in this process, watched."""
    folder = tmp_path_factory.mktemp("edges")
    a, b = _small_file(folder, "a.json", 0, 3), _small_file(folder, "b.json", 3, 3)
    mix = f"{a}:1,{b}:2"
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(resolve, "CACHE_DIR", folder / "cache")
    watched = {}
    commands = {
        "train": ["train", *tiny_flags(tiny_model, folder / "results"), "--dataset_path", mix,
                  "--eval_dataset_path", "tiny_eval"],
        "generate": ["generate", "--model_name_or_path", str(tiny_model), "--system_prompt", TINY_SYSTEM_PROMPT,
                     "--dataset_path", mix, "tiny_eval", "--out", str(folder / "answers"), "--greedy",
                     "--max_new_tokens", "8", "--no-progress"],
        "process-rewards": ["process-rewards", "--model_name_or_path", str(tiny_model), "--system_prompt",
                            TINY_SYSTEM_PROMPT, "--tasks", "2", "--trajectories", "1", "--completions", "1",
                            "--max_new_tokens", "8", "--n_rollout_threads", "2", "--out", str(folder / "lpr")],
    }
    try:
        for command, argv in commands.items():
            with pytest.MonkeyPatch.context() as patch:
                watched[command] = Watched(patch)
                assert main(argv) == 0, command
    finally:
        monkeypatch.undo()
    return {"specs": Counter({mix: 1, "tiny_eval": 1}), "watched": watched,
            "results": folder / "results"}


def test_each_command_resolves_each_dataset_spec_once(runs):
    watched = runs["watched"]
    # The mix and the bundled split once each; every other call is an env or a check reading a
    # file they resolved to (a mix's parts are such files) by its name.
    assert watched["train"].specs() == runs["specs"]
    assert watched["generate"].specs() == runs["specs"]
    # process-rewards without --dataset_path: the default, filled in once and resolved once.
    assert watched["process-rewards"].specs() == Counter({"tiny_train": 1})
    assert all(len(watched[c].envs) > 1 for c in watched)


def test_every_env_of_every_command_shows_the_chats_as_the_chat_mode_of_the_flags(runs, tiny_model):
    import torch

    from fcenv.algos.model.loading import load_model, load_tokenizer
    from fcenv.algos.tiny.build import chat_renderer

    expected = ChatMode.from_flags("", TINY_SYSTEM_PROMPT, prompting_renderer=chat_renderer(load_tokenizer(tiny_model)))
    loaded = load_model(str(tiny_model), torch.device("cpu"), system_prompt=TINY_SYSTEM_PROMPT)
    env = FunctionCallingEnv(dataset_path=str(TINY_EVAL), **expected.env_options())
    want = {(None, TINY_SYSTEM_PROMPT, env.renderer(CHAT))}
    assert loaded.chat_mode.system_prompt == TINY_SYSTEM_PROMPT and loaded.chat_mode.tool_format is None
    for command, watched in runs["watched"].items():
        assert watched.shown() == want, command
    # The run folder records the same mode.
    args = json.loads(next(runs["results"].rglob("args.json")).read_text())
    assert (args["resolved"]["tool_format"], args["resolved"]["system_prompt"]) == (None, TINY_SYSTEM_PROMPT)


def test_fc_mode_reaches_the_env_the_warm_up_and_the_trl_door_alike(tiny_model):
    import gymnasium as gym
    import torch

    import fcenv
    from fcenv.algos.model.loading import load_model
    from fcenv.algos.model.warmup import ground_truth_examples
    from fcenv.algos.rollout.codec import TextCodec
    from fcenv.trl import prompt_dataset

    loaded = load_model(str(tiny_model), torch.device("cpu"), system_prompt=TINY_SYSTEM_PROMPT, tool_format="hermes")
    mode = loaded.chat_mode
    assert mode == ChatMode(tool_format="hermes", renderer=loaded.tokenizer) and mode.system_prompt is None
    env = gym.make(fcenv.ENV_ID, dataset_path=str(TINY_EVAL), **mode.env_options())
    first, _ = env.reset(options={"index": 0})
    assert "set_alarm" in first  # the tools, through the template
    # The warm-up learns from the contexts this env shows; the TRL door prompts with them too.
    codec = TextCodec(loaded.tokenizer, 4096)
    (context, _), *_ = ground_truth_examples(TINY_EVAL, loaded.tokenizer, mode, 4096, [0])
    assert context == codec.encode(first)
    assert prompt_dataset(TINY_EVAL, tool_format="hermes", renderer=loaded.tokenizer, indices=[0])[0]["prompt"] == first


def test_a_chat_mode_takes_one_of_a_tool_format_and_a_system_prompt():
    from fcenv.tool_formats import get_tool_format, tool_format_conflicts

    hermes = get_tool_format("hermes")
    assert ChatMode.from_flags("hermes", "ignored {functions}").env_options() == {"tool_format": hermes,
                                                                                  "renderer": None}
    assert ChatMode.from_flags("", "") == ChatMode() and ChatMode().env_options() == {"system_prompt": None,
                                                                                      "renderer": None}
    assert ChatMode(system_prompt="no docs").hides_function_docs and not ChatMode(tool_format="hermes").hides_function_docs
    with pytest.raises(ValueError) as caught:
        ChatMode(tool_format="hermes", system_prompt="{functions}")
    assert str(caught.value) == tool_format_conflicts(True, system_prompt=True)[0]
    with pytest.raises(ValueError) as caught:
        ChatMode(tool_format="hermes", handler="auto")
    assert str(caught.value) == tool_format_conflicts(True, handler=True)[0]


def test_a_chat_mode_resolves_its_tool_format_once():
    """A name is looked up as the mode is made; the mode and what it hands on carry the object."""
    from fcenv.tool_formats import get_tool_format

    mode = ChatMode(tool_format="mistral")
    assert mode.tool_format is get_tool_format("mistral") and mode.tool_format_name == "mistral"
    assert ChatMode(tool_format=mode.tool_format) == mode and mode.varied("random") is mode
    assert ChatMode().tool_format is None and ChatMode().tool_format_name is None
    with pytest.raises(ValueError, match="unknown tool_format 'xml'"):
        ChatMode(tool_format="xml")
