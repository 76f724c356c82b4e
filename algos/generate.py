"""``fcenv generate``: a model's answers to BFCL question files, written as BFCL result files.

    fcenv generate --model PATH [--adapter DIR] --data FILE [FILE ...] --out DIR [--n 4] [--greedy]
    fcenv generate --endpoint http://127.0.0.1:8000/v1 --model NAME --data FILE --out DIR
    fcenv generate --model PATH --tool_format hermes --data FILE --out DIR     # FC mode

The model is a local Hugging Face checkpoint (``tiny`` for the embedded default), optionally
with a PEFT LoRA adapter such as a trained run's ``checkpoints/iter_N/actor``, sampled in
batches; or an OpenAI-compatible chat-completions server the user runs (``--endpoint``), asked
one chat at a time. Either way the env plays each entry: multi-turn calls run on fcenv's
backends between steps, exactly as in training and in BFCL. Each question file gives
``<out>/<stem>_result.json`` (JSON Lines of ``{"id", "result"}``: a single-turn entry's text,
a multi-turn entry's list of turns of step texts), which ``fcenv evaluate`` scores; with
``--n`` above 1, one file per sample (``<stem>_result_sample<k>.json``).

With ``--tool_format`` (BFCL's FC mode) the tools go through the model's chat template and the
answers are read in the family's format (score them with ``fcenv evaluate --tool_format``);
an endpoint gets the tools in the request, and calls it returns parsed are written back in the
family's format.
"""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

Respond = Callable[[list[list[dict]]], list[str]]  # chats -> one answer each


@dataclass
class Answer:
    entry: int  # position in the question file
    sample: int
    turns: list[list[str]]  # the step texts of each turn


def play_entries(envs: Sequence[gym.Env], jobs: list[tuple[int, int]], respond: Respond,
                 progress: Callable[[int], None] = lambda done: None) -> list[Answer]:
    """Play ``(entry, sample)`` jobs on the envs in lockstep, asking ``respond`` for every live
    env's next answer at once. In FC mode each chat carries its tools (``.tools``)."""
    from algos.rollout.codec import chat_of

    pending = list(reversed(jobs))
    live: dict[int, tuple[Answer, list[dict]]] = {}
    done: list[Answer] = []
    while pending or live:
        for slot, env in enumerate(envs):
            if slot not in live and pending:
                entry, sample = pending.pop()
                _, info = env.reset(options={"index": entry})
                live[slot] = (Answer(entry, sample, [[]]), chat_of(info))
        slots = sorted(live)
        texts = respond([live[s][1] for s in slots])
        for slot, text in zip(slots, texts):
            answer, _ = live[slot]
            _, _, terminated, truncated, info = envs[slot].step(text)
            turn = int(info.get("turn", 0))
            while len(answer.turns) <= turn:
                answer.turns.append([])
            answer.turns[turn].append(text)
            if terminated or truncated:
                done.append(answer)
                del live[slot]
                progress(len(done))
            else:
                live[slot] = (answer, chat_of(info))
    return done


def load_local(args: argparse.Namespace):
    """The local checkpoint (and adapter) as fcenv's policy, and its loaded parts."""
    from algos.model.loading import load_model
    from algos.model.policy import LoraSettings, Policy
    from algos.store.checkpoint import load_adapter_weights

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loaded = load_model(args.model, device, system_prompt=args.system_prompt, dataset_path=args.data[0],
                        tool_format=args.tool_format)
    lora = _adapter_settings(Path(args.adapter)) if args.adapter else LoraSettings(r=8, alpha=16,
                                                                                   target_modules=["q_proj"])
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, actor_lora=lora,
                    temperature=args.temperature, with_critic=False).to(device)
    if args.adapter:
        load_adapter_weights(Path(args.adapter), policy)
    policy.eval()
    return loaded, policy


def local_responder(args: argparse.Namespace, loaded, policy, render: Callable[..., str]) -> Respond:
    """Batched sampling with fcenv's policy, each chat rendered as the env renders it."""
    from algos.model.loading import max_positions
    from algos.rollout.codec import TextCodec
    from algos.rollout.hf import HFEngine

    window = args.context_window or max_positions(loaded.base)
    codec = TextCodec(loaded.tokenizer, window - args.max_new_tokens, render=render)
    generator = torch.Generator(device=policy.device)
    generator.manual_seed(args.seed)
    engine = HFEngine(policy)

    def respond(chats: list[list[dict]]) -> list[str]:
        contexts = [codec.encode(codec.render_chat(chat), chat) for chat in chats]
        actions = engine.sample(contexts, args.max_new_tokens, generator=generator, greedy=args.greedy).actions
        return [codec.decode(a) for a in actions]

    return respond


def _adapter_settings(folder: Path):
    from algos.model.policy import LoraSettings

    try:
        config = json.loads((folder / "adapter_config.json").read_text())
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"--adapter {folder}: no readable adapter_config.json ({exc})") from None
    if config.get("peft_type") != "LORA":
        raise RuntimeError(f"--adapter {folder}: a {config.get('peft_type')} adapter; only LoRA adapters are supported")
    targets = config["target_modules"]
    return LoraSettings(r=int(config["r"]), alpha=int(config["lora_alpha"]),
                        target_modules=sorted(targets) if isinstance(targets, list) else [targets])


def endpoint_responder(args: argparse.Namespace) -> Respond:
    """One chat-completions request per chat to an OpenAI-compatible server."""
    url = args.endpoint.rstrip("/") + "/chat/completions"

    tool_format = None
    if args.tool_format:
        from fcenv.tool_formats import get_tool_format

        tool_format = get_tool_format(args.tool_format)

    def ask(chat: list[dict]) -> str:
        body = {"model": args.model, "messages": chat, "max_tokens": args.max_new_tokens,
                "temperature": 0.0 if args.greedy else args.temperature, "seed": args.seed}
        if tool_format is not None:
            body["messages"], body["tools"] = api_messages(chat), [{"type": "function", "function": t} for t in chat.tools]
        request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=args.timeout) as response:
                reply = json.loads(response.read())
            message = reply["choices"][0]["message"]
            if tool_format is not None and message.get("tool_calls"):
                return written_calls(tool_format, message["tool_calls"])
            return message.get("content") or ""
        except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise RuntimeError(f"--endpoint {url}: {type(exc).__name__}: {exc}") from None

    return lambda chats: [ask(chat) for chat in chats]


def api_messages(chat: list[dict]) -> list[dict]:
    """The chat as the OpenAI API takes it: a call's arguments as a JSON string."""
    out = []
    for message in chat:
        message = dict(message)
        if message.get("tool_calls"):
            message["tool_calls"] = [{**c, "function": {**c["function"], "arguments": json.dumps(c["function"]["arguments"])}}
                                     for c in message["tool_calls"]]
        out.append(message)
    return out


def written_calls(tool_format, tool_calls: list[dict]) -> str:
    """A server's parsed tool calls, written back as the family's text, which the env reads as
    BFCL's handler would have read the model's own text."""
    from handlers import Call

    calls = []
    for call in tool_calls:
        arguments = call["function"].get("arguments") or "{}"
        calls.append(Call(call["function"]["name"], json.loads(arguments) if isinstance(arguments, str) else arguments))
    return tool_format.write(calls)


def result_line(task_id: str, answer: Answer, multi_turn: bool) -> dict[str, Any]:
    return {"id": task_id, "result": answer.turns if multi_turn else answer.turns[0][0]}


def generate(args: argparse.Namespace) -> list[Path]:
    from tqdm.auto import tqdm

    if args.endpoint:
        loaded, policy = None, None
        rendering = {"tool_format": args.tool_format} if args.tool_format else {"system_prompt": args.system_prompt or None}
        respond = endpoint_responder(args)
    else:
        loaded, policy = load_local(args)
        rendering = {"tool_format": args.tool_format, "renderer": loaded.tokenizer} if args.tool_format else \
            {"system_prompt": loaded.system_prompt, "renderer": loaded.renderer}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for data in args.data:
        envs = [gym.make("fcenv/FunctionCalling-v0", dataset_path=data, **rendering)
                for _ in range(1 if args.endpoint else args.batch)]
        if policy is not None:
            respond = local_responder(args, loaded, policy, envs[0].unwrapped.renderer)
        tasks = envs[0].unwrapped.tasks
        jobs = [(entry, sample) for entry in range(len(tasks)) for sample in range(args.n)]
        with tqdm(total=len(jobs), desc=Path(data).stem, unit="answer", disable=not args.progress) as bar:
            answers = play_entries(envs, jobs, respond, progress=lambda done: bar.update(1))
        for sample in range(args.n):
            name = f"{Path(data).stem}_result.json" if args.n == 1 else f"{Path(data).stem}_result_sample{sample}.json"
            mine = sorted((a for a in answers if a.sample == sample), key=lambda a: a.entry)
            lines = [result_line(tasks[a.entry].id, a, tasks[a.entry].is_multi_turn) for a in mine]
            partial = out / (name + ".partial")
            partial.write_text("".join(json.dumps(line) + "\n" for line in lines))
            partial.replace(out / name)
            written.append(out / name)
    return written


# ---- the command (its flags: algos/commands.py) ---------------------------------------
def _command(args: argparse.Namespace) -> int:
    from fcenv.cli import UsageError

    for name in ("n", "max_new_tokens", "batch"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be positive")
    if not args.temperature > 0 or args.context_window < 0:
        raise UsageError("--temperature must be positive and --context_window 0 or more")
    if args.tool_format and args.system_prompt:
        raise UsageError("--tool_format renders the tools through the chat template: leave --system_prompt out")
    if args.adapter and args.endpoint:
        raise UsageError("--adapter applies to a local model, not to an --endpoint")
    if args.adapter and not Path(args.adapter).is_dir():
        raise UsageError(f"--adapter {args.adapter}: no such folder")
    from fcenv.bundled import resolve

    args.data = [str(resolve(d)) for d in args.data]  # a bundled split may be named
    missing = [d for d in args.data if not Path(d).is_file()]
    if missing:
        raise UsageError(f"--data: no such file: {', '.join(missing)}")
    if Path(args.out).is_file():
        raise UsageError(f"--out {args.out} is a file; name a folder")
    if args.run:
        _take_run(args)
    from algos.config import ConfigError
    from algos.store.manifest import CheckpointError

    try:
        written = generate(args)
    except (ConfigError, CheckpointError) as exc:
        raise UsageError(str(exc)) from None
    for path in written:
        print(path)
    return 0


def _take_run(args: argparse.Namespace) -> None:
    """--run: the run's base, adapter, prompt and window, unless given."""
    from algos.config import ConfigError
    from algos.store.checkpoint import open_run
    from fcenv.cli import UsageError

    try:
        saved, checkpoint = open_run(args.run, args.checkpoint)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    resolved = saved["resolved"]
    if args.model != "tiny" or args.adapter:
        raise UsageError("--run names the model and adapter; leave out --model and --adapter")
    args.model, args.adapter = resolved["base_model"], str(checkpoint / "actor")
    args.tool_format = args.tool_format or resolved.get("tool_format") or ""
    args.system_prompt = args.system_prompt or ("" if args.tool_format else resolved.get("system_prompt") or "")
    args.context_window = args.context_window or int(resolved.get("context_window") or 0)
