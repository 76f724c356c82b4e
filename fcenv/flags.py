"""The flags several commands share, declared once: ``fcenv train`` (``fcenv.algos.config.TrainConfig``),
``fcenv generate``, ``fcenv process-rewards``, ``fcenv evaluate`` and ``fcenv card`` take each of them
under the same name, with the same type, default, help and checks.

A ``Group`` is a few flags of one concern and its one ``validate`` (a list of problems, each naming
its flag): ``MODEL`` (the model, its adapter, or a training run and its checkpoint), ``DATA`` (a
dataset spec: anything ``fcenv.sources.resolve`` resolves), ``SAMPLING``, ``ENGINE``,
``TOOL_FORMAT``, ``FORMAT_SENSITIVITY`` (a slice of BFCL v4's format-sensitivity set) and
``WEB_SEARCH`` (the search source of web-search entries); ``SAMPLE`` (which of BFCL's entries
``fcenv sample`` and ``fcenv card`` draw, not in ``SHARED``: generate answers files, not
categories). A command adds the groups it needs (``add_group``) and calls ``check`` on them
before anything heavy; the trainer's dataclass takes its fields' defaults and help from the same
declarations (``fcenv.algos.config``).

The names are the trainer's (``--model_name_or_path``, ``--dataset_path``, ...). A name a command
used before (``fcenv generate --model``, ``--data``, ``--batch``; ``process-rewards --threads``;
``evaluate --data``) is still read, with one line on stderr saying the name to write instead.

A command knows which flags were given on its command line (``given``): ``--run`` fills in the
ones that were not from what the run was trained with (``fcenv.algos.from_run``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcenv.arguments import UsageError
from fcenv.bfcl_sample import CARD_CATEGORIES, CARD_K

EMBEDDED_MODEL = "tiny"  # the embedded default model, built offline
DEFAULT_DATASET = "tiny_train"  # the data of a command that has a default (train, process-rewards)
_GIVEN = "_given"  # the namespace's set of the shared flags given on the command line


@dataclass(frozen=True)
class Flag:
    name: str  # the flag is --name; its value is args.name
    help: str  # "{choices}" stands for the names ``choices`` gives
    default: Any = ""
    type: Callable[[str], Any] = str
    old: tuple[str, ...] = ()  # earlier spellings, still read, with a line naming this one
    switch: bool = False  # takes no value (store_true)
    choices: Callable[[], list[str]] | None = None  # the names it takes (a registry's), read as the parser is built
    metavar: str | None = None
    many: bool = False  # takes one value or more (its default a list)

    def help_text(self, note: str = "") -> str:
        text = self.help.replace("{choices}", ", ".join(self.choices())) if self.choices else self.help
        return f"{text}; {note}" if note else text

    def arguments(self, default: Any, note: str = "") -> dict[str, Any]:
        """``add_argument``'s keywords for a flag that takes a value (its type checks a name it
        takes first, with a message of its own; the choices let a parser be read for them)."""
        choices = None if self.choices is None else ["", *self.choices()] if default == "" else self.choices()
        return {"type": self.type, "default": default, "choices": choices, "metavar": self.metavar,
                "help": self.help_text(note)}


@dataclass(frozen=True)
class Group:
    title: str
    flags: tuple[Flag, ...]
    validate: Callable[[Any], list[str]]  # (args or a config with the flags' names) -> problems


def given(args: Any, name: str) -> bool:
    """Whether ``--name`` was on the command line (not its default)."""
    return name in getattr(args, _GIVEN, ())


class _Value(argparse.Action):
    """Stores the value as argparse does, notes that the flag was given, and says the new name
    when an old one was written."""

    def __init__(self, option_strings, dest, old=(), **kwargs):
        self.old = tuple(old)
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string in self.old:
            print(f"{parser.prog}: {option_string} is the old name of --{self.dest}: it still works, but write "
                  f"--{self.dest}", file=sys.stderr)
        setattr(namespace, self.dest, values)
        namespace.__dict__.setdefault(_GIVEN, set()).add(self.dest)


def add_group(parser: argparse.ArgumentParser, group: Group, *, skip: Collection[str] = (),
              defaults: Mapping[str, Any] | None = None, notes: Mapping[str, str] | None = None,
              several: Collection[str] = ()) -> None:
    """The group's flags on a command's parser, but those in ``skip``. ``defaults``: the
    command's own default of a flag; ``notes``: what the flag means for this command, after its
    help; ``several``: flags that take one value or more, and are required."""
    defaults, notes = defaults or {}, notes or {}
    section = parser.add_argument_group(group.title)
    for flag in group.flags:
        if flag.name in skip:
            continue
        default, note = defaults.get(flag.name, flag.default), notes.get(flag.name, "")
        if flag.switch:
            section.add_argument(f"--{flag.name}", action="store_true", default=default, help=flag.help_text(note))
            continue
        several_values = {"nargs": "+", "required": True, "default": None} if flag.name in several else \
            {"nargs": "+"} if flag.many else {}
        section.add_argument(f"--{flag.name}", *flag.old, action=_Value, old=flag.old,
                             **{**flag.arguments(default, note), **several_values})


def problems(args: Any, *groups: Group) -> list[str]:
    return [problem for group in groups for problem in group.validate(args)]


def check(args: Any, *groups: Group) -> None:
    """The groups' problems with ``args``, as one ``UsageError`` (one line: the problems joined by "; ")."""
    found = problems(args, *groups)
    if found:
        raise UsageError("; ".join(found))


def check_parsed(parser: argparse.ArgumentParser, args: Any, *groups: Group) -> None:
    """``check`` for a script with its own parser (bench/): the problems as the parser's error."""
    if found := problems(args, *groups):
        parser.error("; ".join(found))


# ---------------------------------------------------------------------------- model

def _model_problems(args: Any) -> list[str]:
    run, adapter = getattr(args, "run", "") or "", getattr(args, "adapter", "") or ""
    found = []
    if run:
        if not Path(run).is_dir():
            found.append(f"--run {run}: no such folder")
        named = [f"--{name}" for name in ("model_name_or_path", "adapter") if given(args, name)]
        if named:
            found.append(f"--run names the model and its actor adapter: leave out {' and '.join(named)}")
    elif getattr(args, "checkpoint", ""):
        found.append("--checkpoint names a checkpoint of --run: give --run too")
    if adapter and not run and not Path(adapter).is_dir():
        found.append(f"--adapter {adapter}: no such folder")
    return found


MODEL = Group("model", (
    Flag("model_name_or_path", f"a local Hugging Face checkpoint folder, a model's name on the Hugging Face hub "
                               f"(e.g. Qwen/Qwen2.5-0.5B-Instruct: downloaded into the hub's cache, or found there "
                               f"offline), or '{EMBEDDED_MODEL}' for the embedded default built offline", EMBEDDED_MODEL,
         old=("--model",)),
    Flag("adapter", "a PEFT LoRA adapter folder to apply (e.g. a run's checkpoints/iter_N/actor)"),
    Flag("run", "a training run folder: its base model and actor adapter, with its tool format, system prompt or "
                "prompt variation, context window, --max_new_tokens, --temperature and data as trained; a sampling "
                "or data flag given with it changes that, a model or chat-format flag that differs from the run's is "
                "refused"),
    Flag("checkpoint", "with --run: the checkpoint folder name (default: the latest)"),
), _model_problems)


# ---------------------------------------------------------------------------- data

def dataset_spec(value: str | None) -> str:
    """The dataset spec of a command that has a default (train, process-rewards): the one place
    ``DEFAULT_DATASET`` is filled in."""
    return value or DEFAULT_DATASET


def resolve_specs(flag: str, specs: Collection[str], answers: str | None = None) -> tuple[dict[str, Path], list[str]]:
    """Each dataset spec resolved once to its question file (``fcenv.sources.resolve``: a source
    converted, a mix mixed) and read (the env's cache keeps the parsed tasks for the command);
    and a line naming ``flag`` for each spec that cannot be: a missing file, a bad mix, a source
    that does not convert, a question file with bad entries. A command resolves its specs here,
    at its start, and hands the files down."""
    from fcenv.env import dataset_tasks
    from fcenv.problems import DatasetError
    from fcenv.sources.resolve import resolve_dataset

    files, found = {}, []
    for spec in dict.fromkeys(specs):
        try:
            file = resolve_dataset(spec)
            dataset_tasks(file, answers)
            files[spec] = file
        except DatasetError as exc:
            text = str(exc)
            for named in (f"{spec}: ", f"{Path(spec).resolve()}: "):  # the spec said once
                text = text.removeprefix(named)
            found.append(f"{flag} {spec}: {text}")
    return files, found


def dataset_problems(flag: str, specs: Collection[str], answers: str | None = None) -> list[str]:
    """``resolve_specs``' problem lines alone (for a command that only checks the specs)."""
    return resolve_specs(flag, specs, answers)[1]


def _data_problems(args: Any) -> list[str]:
    specs = args.dataset_path if isinstance(args.dataset_path, list) else [args.dataset_path]
    return dataset_problems("--dataset_path", [s for s in specs if s], getattr(args, "answers", None))


DATA = Group("data", (
    Flag("dataset_path", "a BFCL question file (possible_answer/ beside it), a bundled split's name (tiny_train, "
                         "tiny_eval, multi_turn_train, multi_turn_eval, varied_train, varied_eval, "
                         "multi_turn_varied_train, multi_turn_varied_eval), a source converted on the fly (JSON Lines, JSON, Parquet or a save_to_disk folder in xlam, hermes, "
                         "glaive, toolace, apigen_mt or openai format), or several mixed: 'a.jsonl:2,b.parquet:1'",
         old=("--data",), metavar="SPEC"),
), _data_problems)


# ---------------------------------------------------------------------------- sampling

def _sampling_problems(args: Any) -> list[str]:
    found = []
    temperature = getattr(args, "temperature", 1.0)
    if not math.isfinite(temperature):
        found.append(f"--temperature must be finite, not {temperature}")
    elif temperature <= 0:
        found.append("--temperature must be positive")
    max_new_tokens, window = getattr(args, "max_new_tokens", 1), getattr(args, "context_window", 0)
    if max_new_tokens <= 0:
        found.append("--max_new_tokens must be positive")
    if window < 0:
        found.append("--context_window must be 0 (the model's maximum) or positive")
    elif window and window <= max_new_tokens:
        found.append("--context_window must exceed --max_new_tokens")
    return found


SAMPLING = Group("sampling", (
    Flag("temperature", "sampling temperature (training also scores every log-prob at it)", 1.0, float),
    Flag("greedy", "greedy decoding instead of sampling", False, switch=True),
    Flag("max_new_tokens", "most tokens of one action", 48, int),
    Flag("context_window", "most tokens of context plus action (0: what the model's config supports); longer chats "
                           "are cut from the middle, keeping the system prompt and the latest messages", 0, int),
    Flag("seed", "seed of everything random", 1, int),
), _sampling_problems)


# ---------------------------------------------------------------------------- engine

def _engine_problems(args: Any) -> list[str]:
    # The engine's name is checked where the engines are registered (torch code, algos): each
    # command of the training layer asks algos.rollout.engine.check_engine before its model loads.
    problems = ["--n_rollout_threads must be positive"] if getattr(args, "n_rollout_threads", 1) <= 0 else []
    return problems + (["--kv_cache_mib must be positive"] if getattr(args, "kv_cache_mib", 1) <= 0 else [])


ENGINE = Group("engine", (
    Flag("rollout_engine", "what samples the model's actions: 'hf' in this process, 'vllm' in a vLLM engine of its "
                           "own (`make vllm` installs it), or an engine a package registers", "hf", metavar="ENGINE"),
    Flag("n_rollout_threads", "environments stepped in parallel, their actions sampled together (per process)", 32,
         int, old=("--batch", "--threads")),
    Flag("kv_cache_mib", "--rollout_engine vllm: its KV cache in MiB (on a CPU, reserved up front). A multi-turn "
                         "episode's earlier steps are prefilled once only while every thread's context fits: 1,024 "
                         "MiB holds about 43,000 tokens of Qwen2.5-0.5B in float32", 1024, int),
), _engine_problems)


# ---------------------------------------------------------------------------- tool format

def _unknown_tool_format(name: str | None) -> str | None:
    from fcenv.tool_formats import available_tool_formats

    if name and name not in available_tool_formats():
        return f"unknown tool format {name!r}; known: {', '.join(available_tool_formats())}"
    return None


def _tool_format_name(text: str) -> str:
    """--tool_format's type: a registered format's name, or "" (prompting); refused as it is parsed."""
    if problem := _unknown_tool_format(text):
        raise argparse.ArgumentTypeError(problem)
    return text


def _tool_format_problems(args: Any) -> list[str]:
    from fcenv.chat_mode import mode_conflicts
    from fcenv.prompt_variations import variation_conflicts

    # A flag not given is "" (or absent from a command's flags): None for the chat mode's check.
    tool_format, system_prompt, handler = (getattr(args, name, "") or None
                                           for name in ("tool_format", "system_prompt", "handler"))
    if problem := _unknown_tool_format(tool_format):  # a config made in code, not parsed
        return [f"--tool_format: {problem}"]
    return (mode_conflicts(tool_format, system_prompt, handler, prefix="--")
            + variation_conflicts(getattr(args, "prompt_variation", "") or "", tool_format=tool_format is not None,
                                  handler=handler is not None, system_prompt=system_prompt is not None, prefix="--"))


def _tool_format_names() -> list[str]:
    from fcenv.tool_formats import available_tool_formats

    return available_tool_formats()


TOOL_FORMAT = Group("tool format", (
    Flag("tool_format", "native tool calling (BFCL's FC mode) in a model family's format ({choices}): 'hermes' "
                        "(<tool_call> blocks, Qwen), 'llama_json' (bare JSON, Llama 3.x), 'mistral' ([TOOL_CALLS]) or "
                        "one a package registers; the tools go through the tokenizer's chat template (the family's "
                        "template from fcenv/chat_templates when it has none that renders tools); no system prompt. "
                        "Default: BFCL's prompting format", type=_tool_format_name, choices=_tool_format_names,
         metavar="FORMAT"),
    Flag("system_prompt", "system prompt template with '{functions}' (default: the short prompt for the tiny "
                          "model, BFCL's prompt otherwise)"),
    Flag("prompt_variation", "BFCL v4's format-sensitivity prompts for single-turn Python entries: 'random' (one of "
                             "its 26 configurations drawn per episode), one configuration "
                             "('ret_fmt=json&tool_call_tag=True&func_doc_fmt=xml&prompt_fmt=plaintext&style=classic') "
                             "or 'none' (BFCL's default prompt); answers are read in the configuration's format. "
                             "Default: none", metavar="VARIATION"),
), _tool_format_problems)


# ---------------------------------------------------------------------------- format sensitivity

def _format_sensitivity_problems(args: Any) -> list[str]:
    from fcenv.format_sensitivity import select_configs

    found = []
    try:
        select_configs(getattr(args, "sensitivity_configs", "") or "")
    except ValueError as exc:
        found.append(f"--sensitivity_configs: {exc}")
    if getattr(args, "sensitivity_entries", 0) < 0:
        found.append("--sensitivity_entries must be 0 (all) or positive")
    return found


FORMAT_SENSITIVITY = Group("format sensitivity", (
    Flag("sensitivity_configs", "with BFCL v4's format-sensitivity set as --dataset_path: only the configurations "
                                "with these settings, e.g. 'ret_fmt=json&tool_call_tag=True' (alternatives joined "
                                "by ','; a whole configuration picks itself). Default: all 26",
         metavar="SETTINGS"),
    Flag("sensitivity_entries", "with the format-sensitivity set: only its first N entries (0: all 200)", 0, int,
         metavar="N"),
), _format_sensitivity_problems)


# ---------------------------------------------------------------------------- web search

def web_search_problems(specs: Collection[str], flag: str = "--dataset_path") -> list[str]:
    """Without ``--web_search``: a line for each dataset spec that holds web-search entries, whose
    tools need it."""
    from fcenv.agentic.loading import WEB_SEARCH_CLASS
    from fcenv.env import dataset_tasks
    from fcenv.problems import DatasetError

    found = []
    for spec in dict.fromkeys(s for s in specs if s):
        try:
            searching = [t.id for t in dataset_tasks(spec) if WEB_SEARCH_CLASS in t.involved_classes]
        except DatasetError:  # the data flag's own check names it
            continue
        if searching:
            found.append(f"{flag} {spec} holds {len(searching)} web-search entries (first: {searching[0]}), whose "
                         f"tools need --web_search: a snapshot file recorded with `fcenv web-snapshot` or a folder "
                         f"of documents (fcenv has no live web search)")
    return found


def memory_encoder_problems(specs: Collection[str], flag: str = "--dataset_path") -> list[str]:
    """A line for each dataset spec that holds vector-memory entries, when the sentence encoder
    their tools run on (all-MiniLM-L6-v2, ``fcenv models``) is missing or damaged: said before
    any model loads, not at the first such entry, after the others were answered."""
    from fcenv.agentic.loading import memory_class
    from fcenv.backends.sentence_encoder import encoder_problem
    from fcenv.env import dataset_tasks
    from fcenv.problems import DatasetError

    vector, problem, found = memory_class("vector"), None, []
    for spec in dict.fromkeys(s for s in specs if s):
        try:
            remembering = [t.id for t in dataset_tasks(spec) if vector in t.involved_classes]
        except DatasetError:  # the data flag's own check names it
            continue
        if remembering:
            problem = problem or encoder_problem()
            if problem is None:
                return []
            found.append(f"{flag} {spec} holds {len(remembering)} vector-memory entries (first: {remembering[0]}), "
                         f"but {problem}")
    return found


def open_web_search(web_search: str, specs: Collection[str], flag: str = "--dataset_path"):
    """A command's search source, opened once before anything heavy: the source ``--web_search``
    names (a snapshot read, a corpus indexed), or None without it. ``UsageError`` for a source
    that does not open, and for data that holds web-search entries when none is given."""
    from fcenv.search import SearchSourceError, open_search_source

    if web_search:
        try:
            return open_search_source(web_search)
        except SearchSourceError as exc:
            raise UsageError(f"--web_search: {exc}") from None
    problems = web_search_problems(specs, flag)
    if problems:
        raise UsageError("; ".join(problems))
    return None


def _no_problems(args: Any) -> list[str]:
    # --web_search is checked where each command opens it, once (open_web_search): a check here
    # would open the source (read a snapshot, index a corpus) a second time.
    return []


WEB_SEARCH = Group("web search", (
    Flag("web_search", "where the web-search entries' tools get their answers: a snapshot file recorded with "
                       "`fcenv web-snapshot`, a folder of documents (searched with BM25), or KIND:PATH for a "
                       "registered kind (fcenv has no live search)", metavar="SOURCE"),
), _no_problems)

# ---------------------------------------------------------------------------- BFCL sample

def _sample_problems(args: Any) -> list[str]:
    from fcenv.bfcl_data import DEFAULT_DIR
    from fcenv.bfcl_sample import bfcl_dir_problems, category_problems

    categories = list(getattr(args, "categories", []))
    found = category_problems(categories)
    if getattr(args, "per_category", 1) <= 0:
        found.append("--per_category must be positive")
    return found + bfcl_dir_problems(Path(getattr(args, "bfcl_dir", "") or DEFAULT_DIR), categories)


def _category_name(text: str) -> str:
    """--categories' type: a category a sample is drawn from; refused as it is parsed, saying what
    to ask instead."""
    from fcenv.bfcl_sample import category_problem

    if why := category_problem(text):
        raise argparse.ArgumentTypeError(f"{text}: {why}")
    return text


def _sampled_categories() -> list[str]:
    from fcenv.bfcl_sample import SAMPLED

    return list(SAMPLED)


SAMPLE = Group("BFCL sample", (
    Flag("categories", "BFCL's categories to sample, from {choices} ('memory': BFCL's memory file, whose questions "
                       "make the memory_kv, memory_vector and memory_rec_sum entries). Default: every single-turn, "
                       "live and multi-turn category", list(CARD_CATEGORIES), _category_name, many=True, metavar="CATEGORY",
         choices=_sampled_categories),
    Flag("per_category", "entries of each category, spread evenly over its file (positions i * n // K; all of a "
                         "smaller one; memory: K questions of each scenario)", CARD_K, int, metavar="K"),
    Flag("bfcl_dir", "BFCL's data, where `fcenv data bfcl` writes it (default: ~/.cache/fcenv/bfcl)", metavar="DIR"),
), _sample_problems)

SHARED = (MODEL, DATA, SAMPLING, ENGINE, TOOL_FORMAT, FORMAT_SENSITIVITY, WEB_SEARCH)


def shared_flag(name: str) -> Flag:
    """The declaration of a shared flag, by name."""
    return next(flag for group in SHARED for flag in group.flags if flag.name == name)
