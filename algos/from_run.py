"""``--run``, alike in every command that takes it (``fcenv generate``, ``fcenv process-rewards``):
a training run folder stands for the flags it was trained with.

The run gives the base model and the actor adapter of its checkpoint (the latest, or
``--checkpoint``), its tool format or system prompt, context window, ``--max_new_tokens`` and
``--temperature``, and, where the command has a default dataset, its training data. A flag given
with ``--run``:

- a sampling or data flag (``--context_window``, ``--max_new_tokens``, ``--temperature``,
  ``--dataset_path``) changes what the run gives: sampling longer answers or other data from the
  same policy is a question one may ask of it;
- ``--model_name_or_path`` or ``--adapter`` is refused (``fcenv.flags.MODEL``): the run names them;
- ``--tool_format``, ``--system_prompt`` or ``--prompt_variation`` that differs from the run's
  is refused: the adapter learned to answer chats rendered one way, and the same chats rendered
  another way would be scored as if they were its answers, with no sign that anything changed.
  The same value as the run's is accepted. A run trained with a prompt variation is given it
  (``fcenv generate`` renders with it; ``random``: BFCL's default prompt, and the
  format-sensitivity set's own configurations), and no system prompt, which the variation writes.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fcenv.flags import SAMPLING, check, given

CHAT_FORMAT = ("tool_format", "system_prompt", "prompt_variation")
SAMPLED = ("context_window", "max_new_tokens", "temperature")


def apply_run(args: argparse.Namespace) -> tuple[dict[str, Any], Path]:
    """Fill ``args`` from ``args.run`` (see the module doc) and return the run's args.json and
    checkpoint folder. Raises ``ConfigError`` naming ``--run`` for a folder that is no run, and
    ``UsageError`` for a chat-format flag that contradicts it. Applying it twice changes nothing."""
    from fcenv.algos.store.checkpoint import open_run
    from fcenv.arguments import UsageError

    saved, checkpoint = open_run(args.run, args.checkpoint)
    resolved = saved["resolved"]
    tool_format = resolved.get("tool_format") or ""
    variation = "" if tool_format or saved.get("prompt_variation") in (None, "none") else saved["prompt_variation"]
    trained = {"tool_format": tool_format, "prompt_variation": variation,
               "system_prompt": "" if tool_format or variation else resolved.get("system_prompt") or "",
               "context_window": resolved.get("context_window"), "max_new_tokens": saved.get("max_new_tokens"),
               "temperature": saved.get("temperature")}
    differ = [name for name in CHAT_FORMAT if given(args, name) and _as_recorded(args, name) != trained[name]]
    if differ:
        was = f"in --tool_format {tool_format}" if tool_format else f"with --prompt_variation {variation}" \
            if variation else "in prompting with its system prompt"
        raise UsageError(f"--run {args.run} was trained {was}, and {' and '.join(f'--{n}' for n in differ)} would "
                         f"render its chats otherwise: leave {'them' if len(differ) > 1 else 'it'} out")
    args.model_name_or_path, args.adapter = resolved["base_model"], str(checkpoint / "actor")
    args.tool_format, args.system_prompt = trained["tool_format"], trained["system_prompt"]
    args.prompt_variation = trained["prompt_variation"]
    for name in SAMPLED:
        if not given(args, name) and trained[name] is not None:
            setattr(args, name, type(getattr(args, name))(trained[name]))
    if getattr(args, "dataset_path", None) == "":  # a command with a default dataset: the run's
        args.dataset_path = resolved["train_path"]
    check(args, SAMPLING)  # a flag given beside the run's own (--max_new_tokens past its window)
    return saved, checkpoint


def _as_recorded(args: argparse.Namespace, name: str) -> str:
    """A chat-format flag's value as the run records it: ``--prompt_variation none`` is none."""
    value = getattr(args, name)
    return "" if name == "prompt_variation" and value == "none" else value
