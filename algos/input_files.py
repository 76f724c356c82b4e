"""The files the commands' flags name, read and checked before anything heavy starts (a model
loads, the tiny model builds): a bad file is refused at once, naming the flag, the file, and
the line and field where there is one, as the other flags are.

``check_training_files`` raises what the trainer would have raised later (``DatasetError``,
``ConfigError``, ``CheckpointError``), so the commands report it as before, only sooner. The
commands read the files again where they use them (question files from the env's cache, so
they are parsed once). Dataset specs are checked by ``fcenv.flags.dataset_problems``, for every
command alike.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from fcenv.algos.config import EMBEDDED_MODEL, RESUME_FIXED, ConfigError
from fcenv.algos.model.hub import model_folder

TOKENIZER_FILES = {"tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "spiece.model"}


def check_model_folder(flag: str, value: str) -> None:
    """A local Hugging Face checkpoint folder or a hub name (``model_folder``; or the embedded
    ``tiny``): it holds a config.json, a tokenizer and weights."""
    if value in ("", EMBEDDED_MODEL):
        return
    folder = model_folder(flag, value)
    if not (folder / "config.json").is_file():
        raise ConfigError(f"{flag} {value}: not a Hugging Face checkpoint folder (it has no config.json)")
    names = [p.name for p in folder.iterdir()]
    # Without them transformers fails deep in its loading code (a tokenizer it tries to convert
    # with sentencepiece, weights it cannot find): the folder is named here instead.
    if not set(names) & TOKENIZER_FILES:
        raise ConfigError(f"{flag} {value}: a checkpoint folder without its tokenizer (none of "
                          f"{', '.join(sorted(TOKENIZER_FILES))}); save it with tokenizer.save_pretrained")
    if not any(name.endswith((".safetensors", ".bin", ".safetensors.index.json")) for name in names):
        raise ConfigError(f"{flag} {value}: a checkpoint folder without weights (no *.safetensors or "
                          f"pytorch_model*.bin); save it with model.save_pretrained")


def read_prefix_values(path: str | Path, flag: str = "--critic_init_values",
                       with_tools: bool | None = None) -> list[tuple[list[dict], float]]:
    """The distinct (chat prefix, Monte Carlo value) pairs of a ``trajectories.jsonl`` written by
    ``fcenv process-rewards``; a prefix sampled in FC mode is a ``ToolChat`` (its row's tools).
    Raises ``ConfigError`` naming the file and line of anything unreadable, or (``with_tools``
    given: whether the run trains in FC mode) of trajectories sampled in the other mode."""
    from fcenv.algos.rollout.codec import ToolChat

    values: dict[str, tuple[list[dict], float]] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{flag} {path}: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            messages = row["messages"]
            if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
                raise TypeError("'messages' is not a list of messages")
            for index, message in enumerate(messages):
                _check_message(message, index)
            tools = row.get("tools")
            if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools)):
                raise TypeError("'tools' is not a list of tools")
            prefixes = []
            for step in row["steps"]:
                prefix = messages[: _prefix_end(step["message_index"], len(messages))]
                value = step["value"]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                    raise ValueError(f"a value of {value!r} (a Monte Carlo value is a share of valid completions)")
                prefixes.append((prefix, float(value)))
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise ConfigError(f"{flag} {path}, line {number}: not a trajectory of `fcenv process-rewards` "
                              f"({type(exc).__name__}: {exc})") from None
        if with_tools is not None and (tools is not None) != with_tools:
            sampled, run = (("FC mode (with tools)", "prompting mode") if tools is not None else
                            ("prompting mode", "FC mode (--tool_format)"))
            raise ConfigError(f"{flag} {path}, line {number}: sampled in {sampled}, but this run trains in {run}")
        for prefix, value in prefixes:
            chat = prefix if tools is None else ToolChat(prefix, tools)
            values.setdefault(json.dumps([prefix, tools], sort_keys=True), (chat, value))
    if not values:
        raise ConfigError(f"{flag} {path}: holds no trajectory steps")
    return list(values.values())


_ROLES = ("system", "user", "assistant", "tool")


def _check_message(message: dict, index: int) -> None:
    """A message as the env writes it: the chat template renders it once the model has loaded,
    so what it would choke on is named here, before that."""
    where = f"messages[{index}]"
    if message.get("role") not in _ROLES:
        raise ValueError(f"{where} has the role {message.get('role')!r}, not one of {list(_ROLES)}")
    content, calls = message.get("content"), message.get("tool_calls")
    if not isinstance(content, str) and not (content is None and calls):
        raise TypeError(f"{where}'s content is {type(content).__name__}, not text")
    if calls is not None and not (isinstance(calls, list) and all(map(_is_tool_call, calls))):
        raise TypeError(f"{where}'s tool_calls are not calls with a function name and arguments")


def _is_tool_call(call: Any) -> bool:
    function = call.get("function") if isinstance(call, dict) else None
    return isinstance(function, dict) and isinstance(function.get("name"), str) and \
        isinstance(function.get("arguments"), (dict, str))


def _prefix_end(value: Any, messages: int) -> int:
    """A step's ``message_index``: the prefix it scores ends there, after at least one message."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= messages:
        raise ValueError(f"a message_index of {value!r} (an integer from 1 to the {messages} messages)")
    return value


def check_resume(config: Any, files: Any) -> None:
    """``--resume``: a complete, intact checkpoint of a run whose args.json can be read and
    whose fixed flags are the ones given (``CheckpointError`` otherwise)."""
    from fcenv.algos.store.checkpoint import find_resume_checkpoint, run_dir_of
    from fcenv.algos.store.manifest import CheckpointError

    checkpoint = find_resume_checkpoint(config.resume, log=lambda message: None)
    try:
        saved = json.loads((run_dir_of(checkpoint) / "args.json").read_text())
    except (OSError, ValueError) as exc:
        raise CheckpointError(checkpoint, None, f"its run's args.json cannot be read ({exc})") from None
    saved.setdefault("critic_fraction", 1.0)  # runs from before the flag: a critic on every layer
    saved.setdefault("actor_fraction", 1.0)  # and an actor on every layer
    fixed = [k for k in RESUME_FIXED if k in saved and saved[k] != getattr(config, k)]
    if fixed:
        raise CheckpointError(checkpoint, None, f"--resume: these flags differ from the run's args.json and cannot "
                                                f"change within a run: {fixed} (leave them out: --resume takes "
                                                f"the run's own)")
    changed = changed_since(saved, config, files)
    if changed and not config.resume_with_changed_data:
        raise CheckpointError(checkpoint, None, f"--resume: {'; '.join(changed)}: the run would go on with other "
                                                f"data than it began with. Restore the data, or pass "
                                                f"--resume_with_changed_data to go on with it as it is now (the "
                                                f"change is recorded in the run's args.json)")


def changed_since(saved: dict, config: Any, files: Any) -> list[str]:
    """The data files whose tasks differ from those the run recorded when it began (none for
    a run from before fingerprints were kept); ``files``: the run's ``DataFiles``."""
    from fcenv.algos.store.data_fingerprint import changed_data
    from fcenv.algos.training.setup import data_record

    recorded = (saved.get("resolved") or {}).get("data")
    return changed_data(recorded, data_record(config, files)) if isinstance(recorded, dict) else []


def check_start_adapter(config: Any) -> None:
    """``--adapter``, the actor a run starts from: a LoRA adapter of the run's rank, alpha and
    target modules (its trainable tokens are compared once the tokenizer reads them)."""
    from fcenv.algos.store.checkpoint import adapter_settings

    try:
        saved = adapter_settings(Path(config.adapter))
    except RuntimeError as exc:
        raise ConfigError(str(exc)) from None
    ours = {"lora_r": config.lora_r, "lora_alpha": config.lora_alpha,
            "lora_target_modules": sorted(config.lora_target_modules)}
    theirs = {"lora_r": saved.r, "lora_alpha": saved.alpha, "lora_target_modules": saved.target_modules}
    differ = [f"--{name} {ours[name]} (the adapter's: {theirs[name]})" for name in ours if ours[name] != theirs[name]]
    if differ:
        raise ConfigError(f"--adapter {config.adapter}: the actor starts from it, so the run's adapter must have its "
                          f"shape: {'; '.join(differ)}")


def check_trainable_tokens(config: Any) -> None:
    """--trainable_tokens: each one token of the model's vocabulary, as the tokenizer writes it;
    the tokenizer alone says so, before the weights load (the embedded model's tokenizer is
    trained with it, so its tokens are checked once it is built)."""
    from fcenv.algos.model.loading import is_embedded, load_tokenizer, token_ids

    tokens = config.trainable_tokens
    if any(not token for token in tokens):
        raise ConfigError("--trainable_tokens: an empty string is no token: name tokens as the tokenizer writes them "
                          "(e.g. <tool_call>)")
    if tokens and not is_embedded(config.model_name_or_path):
        token_ids(load_tokenizer(model_folder("--model_name_or_path", config.model_name_or_path)), tokens)


def _learnable(task: Any) -> bool:
    # The tasks whose ground truth the warm-up and --sft_coef learn, as
    # fcenv.algos.model.warmup.ground_truth_examples picks them.
    return task.kind == "irrelevance" or (task.kind in ("ast", "multi_turn") and bool(task.ground_truth))


def check_ground_truth(config: Any, files: Any) -> None:
    """--sft_coef and --warmup_steps learn the training tasks' ground truth: a training file with
    none (agentic entries, a source converted without answers) is refused before the model
    loads, not after it (--sft_coef) nor skipped without a word (--warmup_steps)."""
    from fcenv.env import dataset_tasks

    flags = [f"--sft_coef {config.sft_coef}" if config.sft_coef != 0 else "",
             f"--warmup_steps {config.warmup_steps}" if config.warmup_steps > 0 and not config.resume else ""]
    flags = [flag for flag in flags if flag]
    if not flags or any(_learnable(task) for task in dataset_tasks(files.train)):
        return
    raise ConfigError(f"{' and '.join(flags)}: --dataset_path {files.train} holds no task with a ground truth to learn "
                      f"(agentic entries have none): give a file that does, or leave out {' and '.join(flags)}")


def check_prompt_variation(config: Any, files: Any) -> None:
    """--prompt_variation on a training file none of whose entries a variation reaches (BFCL
    varies single-turn Python entries only): the flag would change nothing, so it is refused."""
    from fcenv.env import dataset_tasks
    from fcenv.prompt_variations import reaches

    if config.prompt_variation in ("", "none"):
        return
    tasks = dataset_tasks(files.train)
    if tasks and not any(reaches(task) for task in tasks):
        raise ConfigError(f"--prompt_variation {config.prompt_variation}: --dataset_path {files.train} holds no entry "
                          f"a prompt variation reaches (first: {tasks[0].id}, {tasks[0].category}): BFCL varies the "
                          f"prompt of single-turn Python entries only; leave out --prompt_variation, or train on such "
                          f"entries")


def check_training_files(config: Any) -> tuple[Any, list[tuple[list[dict], float]]]:
    """Every file-valued flag of ``train_fctncalling.py`` / ``fcenv train``. Returns the run's
    data files (``fcenv.algos.training.setup.DataFiles``: the dataset specs resolved, here, once
    per run) and what ``--critic_init_values`` holds (empty without it), read here once, so that
    the run uses exactly what was checked and reads no file after the model loads."""
    from fcenv.algos.training.setup import resolve_data
    from fcenv.arguments import UsageError
    from fcenv.flags import memory_encoder_problems, open_web_search, web_search_problems

    files = resolve_data(config)  # both question files' problems at once, each under its flag
    # The search source of the web-search entries, opened once the data reads (for the run too);
    # without one, data holding such entries is refused, each file under its flag.
    if config.web_search:
        try:
            files = replace(files, web_search=open_web_search(config.web_search, [str(files.train)]))
        except UsageError as exc:
            raise ConfigError(str(exc)) from None
    else:
        wrong = web_search_problems([str(files.train)], "--dataset_path")
        if files.held_out:  # else the held-out tasks are the training file's, named above
            wrong += web_search_problems([str(files.held_out)], "--eval_dataset_path")
        if wrong:
            raise ConfigError("\n".join(wrong))
    missing = memory_encoder_problems([str(files.train)], "--dataset_path")
    if files.held_out and not missing:
        missing = memory_encoder_problems([str(files.held_out)], "--eval_dataset_path")
    if missing:
        raise ConfigError(missing[0])
    check_ground_truth(config, files)
    check_prompt_variation(config, files)
    check_model_folder("--model_name_or_path", config.model_name_or_path)
    check_trainable_tokens(config)
    if config.adapter and not config.resume:  # a resumed run's actor is its checkpoint's
        check_start_adapter(config)
    from fcenv.algos.rollout.engine import check_engine

    check_engine(config.rollout_engine)  # an engine that cannot run here is said before the model loads
    values = []
    if config.critic_init_values:
        values = read_prefix_values(config.critic_init_values, with_tools=bool(config.tool_format))
    if config.resume:
        check_resume(config, files)
    return files, values
