"""``fcenv generate``: a model's answers to BFCL question files, written as BFCL result files.

    fcenv generate --model_name_or_path PATH [--adapter DIR] --dataset_path SPEC ... --out DIR
    fcenv generate --run RUN | --endpoint URL --model_name_or_path NAME ...  # a run's actor; a server

Each ``--dataset_path`` spec gives ``<out>/<stem>_result.json`` (one file per sample with ``--n``),
which ``fcenv evaluate`` scores given the same spec; multi-turn entries play on fcenv's backends
as in training. A reply with no readable answer is that entry's failed answer, recorded as BFCL
records one; a failing server ends the run with status 2. Answers go to ``<name>.partial`` as
they finish, and a run started again goes on from it (``fcenv.algos.partial_results``). Each
answer carries BFCL's ``latency``, ``input_token_count`` and ``output_token_count`` per model call.
More: docs/evaluation.md#generating-result-files (format sensitivity, the record: same page).
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

from fcenv.algos.deadline_http import read_reply
from fcenv.algos.partial_results import kept_answers, reopen, result_names, rewrite
from fcenv.algos.questions import Questions, env_questions, questions_of
from fcenv.chat_mode import ChatMode
from fcenv.result_record import with_record

ATTEMPTS = 3  # tries of one request while the server answers 5xx or 429, or cannot be reached


class BadReply(Exception):
    """A server's reply that holds no readable answer for one chat: that entry's failed answer."""


@dataclass
class Reply:
    text: str | BadReply  # the answer, or the BadReply that stands for it
    given: dict[str, Any] | None = None  # what the model was given (the input log's content)
    latency: float = 0.0  # wall seconds the model took to answer
    input_tokens: int = 0  # the tokens it read; 0: not known, as BFCL records an unknown count
    output_tokens: int = 0  # the tokens it wrote


# (chats, the id of each chat's entry) -> one reply each
Respond = Callable[[list[list[dict]], list[str]], list[Reply]]


@dataclass
class Answer:
    entry: int  # position in the question file
    sample: int
    steps: list[list[Reply]]  # the replies of each turn, one per step
    failure: str = ""  # why no answer could be had (a bad reply), recorded instead of the turns
    log: list[dict] = field(default_factory=list)  # per turn: BFCL's inference log of its steps

    @property
    def turns(self) -> list[list[str]]:
        """The step texts of each turn."""
        return self.per_step("text")

    def per_step(self, name: str) -> list[list[Any]]:
        """A ``Reply`` field of each step, turn by turn."""
        return [[getattr(reply, name) for reply in turn] for turn in self.steps]


def play_entries(envs: Sequence[gym.Env], jobs: list[tuple[int, int]], respond: Respond,
                 finished: Callable[[Answer], None] = lambda answer: None,
                 questions: Questions | None = None) -> list[Answer]:
    """Play ``(entry, sample)`` jobs on the envs in lockstep, asking ``respond`` for every live
    env's next answer at once, and handing each answer to ``finished`` as it ends. In FC mode
    each chat carries its tools (``.tools``). A ``BadReply`` ends its entry as a failure.
    ``questions``: what each entry is (the format-sensitivity set's: an entry under a prompt
    variation); default, the envs' tasks."""
    from fcenv.algos.rollout.codec import chat_of

    questions = questions or env_questions(envs[0])
    pending = list(reversed(jobs))
    live: dict[int, tuple[Answer, list[dict]]] = {}
    done: list[Answer] = []
    while pending or live:
        for slot, env in enumerate(envs):
            if slot not in live and pending:
                entry, sample = pending.pop()
                _, info = env.reset(options=questions.options(entry))
                chat = chat_of(info)
                live[slot] = (Answer(entry, sample, [[]], log=[_turn_log(chat, 0)]), chat)
        slots = sorted(live)
        replies = respond([live[s][1] for s in slots], [questions.ids[live[s][0].entry] for s in slots])
        for slot, reply in zip(slots, replies):
            answer, chat = live[slot]
            turn_log = answer.log[-1]
            step_log = turn_log.setdefault(f"step_{sum(k.startswith('step_') for k in turn_log)}", [])
            if reply.given is not None:
                step_log.append({"role": "inference_input", "content": reply.given})
            if isinstance(reply.text, BadReply):
                answer.failure = str(reply.text)
                done.append(answer)
                del live[slot]
                finished(answer)
                continue
            text = reply.text
            step_log.append({"role": "assistant", "content": text})
            _, _, terminated, truncated, info = envs[slot].step(text)
            turn = int(info.get("turn", 0))
            while len(answer.steps) <= turn:
                answer.steps.append([])
            answer.steps[turn].append(reply)
            if "conversation_ended" in info:  # a memory prerequisite's steps: not the question's answer
                answer.steps = [[]]
            if terminated or truncated:
                done.append(answer)
                del live[slot]
                finished(answer)
            else:
                following = chat_of(info)
                if "conversation_ended" in info:
                    # The next conversation is a chat of its own: the entry's log holds the
                    # question's conversation alone, as BFCL's holds each entry's own.
                    answer.log = [_turn_log(following, 0)]
                elif "turn_valid" in info:  # the turn ended; the next one opens with its query
                    answer.log.append(_turn_log(following, len(chat) + 1))
                live[slot] = (answer, following)
    return done


def _turn_log(chat: list[dict], start: int) -> dict[str, Any]:
    """A turn's log as BFCL opens it: the messages that begin the turn (the user's query)."""
    return {"begin_of_turn_query": [m for m in chat[start:] if m.get("role") in ("user", "system")]}


def load_local(args: argparse.Namespace):
    """The local checkpoint (and adapter) as fcenv's policy, and its loaded parts."""
    from fcenv.algos.model.loading import load_model
    from fcenv.algos.model.policy import LoraSettings, Policy
    from fcenv.algos.store.checkpoint import adapter_settings, load_adapter_weights

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loaded = load_model(args.model_name_or_path, device, system_prompt=args.system_prompt,
                        dataset_path=args.question_files[0], tool_format=args.tool_format)
    lora = adapter_settings(Path(args.adapter)) if args.adapter else LoraSettings(r=8, alpha=16,
                                                                                  target_modules=["q_proj"])
    policy = Policy(loaded.base, pad_id=loaded.pad_id, stop_ids=loaded.stop_ids, actor_lora=lora,
                    temperature=args.temperature, with_critic=False).to(device)
    if args.adapter:
        load_adapter_weights(Path(args.adapter), policy)
    policy.eval()
    return loaded, policy


def context_window(args: argparse.Namespace, loaded) -> int:
    from fcenv.algos.model.loading import max_positions

    return args.context_window or max_positions(loaded.base)


def start_engine(args: argparse.Namespace, loaded, policy):
    """The rollout engine ``--rollout_engine`` names, sampling with the policy's actor."""
    from fcenv.algos.rollout.engine import EngineSettings, make_engine

    return make_engine(args.rollout_engine, policy, EngineSettings(Path(loaded.path), context_window(args, loaded),
                                                                   args.seed, kv_cache_mib=args.kv_cache_mib))


def local_responder(args: argparse.Namespace, loaded, engine, device: torch.device,
                    render: Callable[..., str]) -> Respond:
    """Batched sampling by the rollout engine, each chat rendered as the env renders it."""
    from fcenv.algos.rollout.codec import CONTEXT_OVERFLOW, ContextTooLong, TextCodec

    codec = TextCodec(loaded.tokenizer, context_window(args, loaded) - args.max_new_tokens, render=render,
                      stop_ids=loaded.stop_ids)
    generator = torch.Generator(device=device)
    generator.manual_seed(args.seed)

    def respond(chats: list[list[dict]], ids: list[str]) -> list[Reply]:
        replies: list[Reply | None] = [None] * len(chats)
        contexts = {}
        for slot, (chat, entry) in enumerate(zip(chats, ids)):
            try:
                contexts[slot] = codec.encode_counted(codec.render_chat(chat), chat, entry)[0]
            except ContextTooLong as exc:  # this entry fails, as BFCL's inference fails it; the run goes on
                replies[slot] = Reply(BadReply(f"{CONTEXT_OVERFLOW}: {exc}"))
        if contexts:
            started = time.perf_counter()
            actions = engine.sample(list(contexts.values()), args.max_new_tokens, generator=generator,
                                    greedy=args.greedy).actions
            # Each reply's latency is the whole batched call's: every request of the batch waited
            # that long, as each request to BFCL's server, which answers many at once, waits.
            latency = time.perf_counter() - started
            for (slot, context), action in zip(contexts.items(), actions):
                given = {"formatted_prompt": loaded.tokenizer.decode(context, skip_special_tokens=False)} \
                    if args.include_input_log else None
                replies[slot] = Reply(codec.decode(action), given, latency, len(context), len(action))
        return replies

    return respond


def endpoint_responder(args: argparse.Namespace, chat_mode: ChatMode) -> Respond:
    """One chat-completions request per chat to an OpenAI-compatible server (FC mode: the
    chat's tools sent with it, the calls it answers written in the mode's tool format)."""
    url = args.endpoint.rstrip("/") + "/chat/completions"
    tool_format = chat_mode.tool_format

    def ask(chat: list[dict]) -> Reply:
        body = {"model": args.model_name_or_path, "messages": chat, "max_tokens": args.max_new_tokens,
                "temperature": 0.0 if args.greedy else args.temperature, "seed": args.seed}
        if tool_format is not None:
            body["messages"], body["tools"] = api_messages(chat), [{"type": "function", "function": t} for t in chat.tools]
        given = {"message": body["messages"], **({"tools": body["tools"]} if "tools" in body else {})} \
            if args.include_input_log else None
        try:
            reply, latency = post(url, body, args.timeout)
            return Reply(reply_text(reply, tool_format), given, latency, *usage_counts(reply))
        except BadReply as bad:
            return Reply(bad, given)

    return lambda chats, ids: [ask(chat) for chat in chats]


def post(url: str, body: dict, timeout: float) -> tuple[Any, float]:
    """The server's JSON reply to one request, and the wall seconds of the try that got it (as
    BFCL times a request, its retries apart). Raises ``BadReply`` where this request alone
    failed, ``RuntimeError`` (a clean exit) where the server does."""
    data = json.dumps(body).encode()
    for attempt in range(1, ATTEMPTS + 1):
        request = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": "application/json"})
        try:
            started = time.perf_counter()
            raw = read_reply(request, timeout)  # all of it within --timeout, however slowly it trickles
            latency = time.perf_counter() - started
            break
        except urllib.error.HTTPError as exc:
            if exc.code in (400, 413, 422):  # this request refused (a chat too long, ...): this entry fails
                raise BadReply(f"HTTP {exc.code} {exc.reason}: {_error_text(exc)}") from None
            failure = f"HTTP {exc.code} {exc.reason}: {_error_text(exc)}"
            if exc.code < 500 and exc.code != 429:  # a wrong URL, model or key: no request will do better
                raise RuntimeError(f"--endpoint {url}: {failure}") from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:  # no connection, a timeout, a cut reply
            failure = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        if attempt == ATTEMPTS:
            raise RuntimeError(f"--endpoint {url}: {failure} ({ATTEMPTS} tries)") from None
        time.sleep(attempt)
    try:
        return json.loads(raw), latency
    except (ValueError, RecursionError) as exc:
        raise BadReply(f"the reply is not JSON: {exc}") from None


def usage_counts(reply: Any) -> tuple[int, int]:
    """The prompt and completion tokens a chat-completions reply's ``usage`` counts; 0 for a
    count it does not give, as BFCL records one (its cost and latency leave zeros out)."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    counts = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    return tuple(n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0 for n in counts)


def _error_text(error: urllib.error.HTTPError) -> str:
    try:
        return error.read(300).decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return ""


def reply_text(reply: Any, tool_format) -> str:
    """The answer a chat-completions reply holds: the family's text for the tool calls it
    returns parsed (FC mode), else its content. Raises ``BadReply`` when it holds none."""
    try:
        message = reply["choices"][0]["message"]
    except (TypeError, KeyError, IndexError):
        raise BadReply("the reply has no choices[0].message") from None
    if not isinstance(message, dict):
        raise BadReply(f"choices[0].message is a {type(message).__name__}, not an object")
    if tool_format is not None and message.get("tool_calls"):
        return written_calls(tool_format, message["tool_calls"])
    return content_text(message.get("content"))


def content_text(content: Any) -> str:
    """A message's content: text, or OpenAI's list of parts, whose text parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        texts = [part.get("text") for part in content if part.get("type") == "text"]
        if all(isinstance(text, str) for text in texts):
            return "".join(texts)
    raise BadReply(f"the message's content is neither text nor a list of text parts: {json.dumps(content)[:200]}")


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


def written_calls(tool_format, tool_calls: Any) -> str:
    """A server's parsed tool calls, written back as the family's text, which the env reads as
    BFCL's handler would have read the model's own text. ``BadReply`` for calls that are not
    ``{"function": {"name", "arguments"}}`` with a string name and an object (or its JSON) as
    arguments."""
    from fcenv.handlers import Call

    if not isinstance(tool_calls, list):
        raise BadReply(f"tool_calls is a {type(tool_calls).__name__}, not a list")
    calls = []
    for call in tool_calls:
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str):
            raise BadReply(f"a tool call without a function name: {json.dumps(call)[:200]}")
        arguments = function.get("arguments") or "{}"
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                raise BadReply(f"the arguments of the tool call {name!r} are not JSON: {arguments[:200]!r}") from None
        if not isinstance(arguments, dict):
            raise BadReply(f"the arguments of the tool call {name!r} are not an object")
        calls.append(Call(name, arguments))
    return tool_format.write(calls)


def records_turns(task) -> bool:
    """BFCL records a multi-turn or agentic entry's answer as turns of step texts (an agentic
    question: its one turn), a single-turn entry's as the text."""
    return task.is_multi_turn or task.kind == "agentic"


def result_line(task_id: str, answer: Answer, multi_turn: bool, input_log: bool = False,
                record: dict[str, Any] | None = None) -> dict[str, Any]:
    """BFCL's result line for an answer; with ``record``, how it was made (``fcenv.result_record``).

    ``input_log`` adds ``inference_log`` as BFCL's ``--include-input-log`` writes it: each input is
    ``{"role": "inference_input", "content": ...}``, the content ``{"formatted_prompt": TEXT}`` (a
    local model: its context tokens decoded) or ``{"message": [...], "tools": [...]}`` (an
    endpoint: the request). A single-turn entry's log is a list of its one input; a multi-turn
    entry's one object per turn (``begin_of_turn_query``, then ``step_<k>``: the step's input and
    the model's reply); a memory entry's holds its question's conversation alone.

    An answer's line holds BFCL's ``latency`` (seconds), ``input_token_count`` and
    ``output_token_count`` of its model calls, shaped as its ``result``: a single-turn entry's
    numbers, a multi-turn entry's turns of step numbers. A failed answer's has none, as BFCL's."""
    if answer.failure:  # as BFCL records a failed inference; it scores as a failure
        line = {"id": task_id, "result": f"Error during inference: {answer.failure}"}
    else:
        line = {"id": task_id, "result": answer.turns if multi_turn else answer.turns[0][0]}
        for key, name in (("input_token_count", "input_tokens"), ("output_token_count", "output_tokens"),
                          ("latency", "latency")):
            line[key] = answer.per_step(name) if multi_turn else answer.per_step(name)[0][0]
    if input_log:  # BFCL's shape: a single-turn entry's input, a multi-turn entry's turns of steps
        line["inference_log"] = answer.log if multi_turn else [
            e for e in answer.log[0].get("step_0", []) if e["role"] == "inference_input"]
    return with_record(line, record)


def generation_record(args: argparse.Namespace, chat_mode: ChatMode, data: str | Path, sample: int) -> dict[str, Any]:
    """How the answers to one question file's sample are made, recorded in each of its result
    lines (``fcenv.result_record``; BFCL's runner ignores the key): the model, the chat mode,
    the engine and the sampling settings."""
    from fcenv import __version__
    from fcenv.format_sensitivity import is_set_file

    varied = is_set_file(data)  # each entry under each configuration: its id names it
    return {
        "fcenv": __version__,
        "model": args.model_name_or_path, "adapter": args.adapter or None, "run": args.run or None,
        "endpoint": args.endpoint or None,
        "tool_format": chat_mode.tool_format_name,  # None: prompting
        "system_prompt": None if varied else chat_mode.system_prompt,  # None: the mode's own (BFCL's in prompting)
        "prompt_variation": "each id's configuration" if varied else chat_mode.prompt_variation,
        "engine": "endpoint" if args.endpoint else args.rollout_engine,
        "n_rollout_threads": 1 if args.endpoint else args.n_rollout_threads,
        "greedy": args.greedy, "temperature": args.temperature, "max_new_tokens": args.max_new_tokens,
        "context_window": args.context_window,  # 0: the model's maximum
        "seed": args.seed, "samples": args.n, "sample": sample,
    }


def logged_as_asked(path: Path, kept: dict[str, dict[str, Any]], input_log: bool) -> dict[str, dict[str, Any]]:
    """The answers a ``.partial`` file keeps, with an input log as this run is asked for one:
    without --include-input-log a kept log is left out; with it, answers an earlier run wrote
    without one (their input is not recorded) are named, taken out of the file, and asked
    again, so that the result file never mixes lines with and without logs."""
    if not input_log:
        return {key: {k: v for k, v in line.items() if k != "inference_log"} for key, line in kept.items()}
    logged = {key: line for key, line in kept.items() if "inference_log" in line}
    if len(logged) < len(kept):
        print(f"fcenv generate: --include-input-log: {len(kept) - len(logged)} answers in {path} were written without "
              f"an input log (a run without the flag); their entries are answered again", file=sys.stderr)
        rewrite(path, list(logged.values()))
    return logged


def generate(args: argparse.Namespace) -> list[Path]:
    if args.endpoint:
        # The server renders the chat: the env's own rendering is its default for the mode.
        chat_mode = ChatMode.from_flags(args.tool_format, args.system_prompt)
        respond = endpoint_responder(args, chat_mode)
        return _generate_files(args, chat_mode, lambda render: respond, threads=1)
    loaded, policy = load_local(args)
    engine = start_engine(args, loaded, policy)  # one for all the files (vLLM takes a while to start)
    try:
        return _generate_files(args, loaded.chat_mode, lambda render: local_responder(args, loaded, engine,
                                                                                       policy.device, render),
                               threads=args.n_rollout_threads)
    finally:
        engine.close()


def _generate_files(args: argparse.Namespace, chat_mode, responder: Callable[[Callable[..., str]], Respond],
                    threads: int) -> list[Path]:
    """Each question file's result files (``args.question_files``: the ``--dataset_path`` specs
    resolved); ``responder(render)``: the answers to chats rendered by the env's ``render``."""
    from tqdm.auto import tqdm

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    chat_mode = with_variation(chat_mode, getattr(args, "prompt_variation", ""))
    for data in args.question_files:
        questions = questions_of(data, args)  # a file's entries, or the format-sensitivity set's
        searching = {"web_search": args.web_search_source} if getattr(args, "web_search_source", None) else {}
        envs = [gym.make("fcenv/FunctionCalling-v0", **questions.source, **chat_mode.env_options(), **searching)
                for _ in range(threads)]
        respond = responder(envs[0].unwrapped.renderer)
        tasks, ids = questions.tasks, questions.ids
        jobs = [(entry, sample) for entry in range(len(tasks)) for sample in range(args.n)]
        if threads > 1:
            # Entries with prompts of like length are answered together: a batch is padded to its
            # longest prompt (on BFCL's single-turn files, in file order, padding is two thirds
            # of the tokens a model reads; in this order, a sixth). Files are written in file order.
            lengths = [len(envs[0].reset(options=questions.options(entry))[0]) for entry in range(len(tasks))]
            jobs.sort(key=lambda job: lengths[job[0]])
        names = result_names(data, args.n)
        # A run that ended early left its answers in the .partial files: they are kept, not asked again.
        kept = [logged_as_asked(out / (name + ".partial"), kept_answers(out / (name + ".partial"), ids),
                                args.include_input_log) for name in names]
        jobs = [(entry, sample) for entry, sample in jobs if ids[entry] not in kept[sample]]
        if any(kept):
            print(f"fcenv generate: going on from {', '.join(str(out / (n + '.partial')) for n, k in zip(names, kept) if k)}: "
                  f"{sum(map(len, kept))} answers kept, {len(jobs)} to go", file=sys.stderr)
        partials = [reopen(out / (name + ".partial")) for name in names]

        records = [generation_record(args, chat_mode, data, sample) for sample in range(len(names))]

        def keep(answer: Answer) -> None:  # as soon as it is finished: a run that ends early loses none
            line = result_line(ids[answer.entry], answer, records_turns(tasks[answer.entry]), args.include_input_log,
                               records[answer.sample])
            partials[answer.sample].write(json.dumps(line) + "\n")
            partials[answer.sample].flush()
            bar.update(1)

        try:
            with tqdm(total=len(jobs), desc=Path(data).stem, unit="answer", disable=not args.progress) as bar:
                answers = play_entries(envs, jobs, respond, keep, questions)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}; the answers finished so far are in "
                               f"{', '.join(f.name for f in partials)}") from None
        finally:
            for handle in partials:
                handle.close()
        failed = [a for a in answers if a.failure]
        if failed:
            print(f"fcenv generate: {len(failed)} of {len(answers)} answers to {data} failed, recorded as "
                  f"\"Error during inference: ...\"; the first: entry {ids[failed[0].entry]!r}: "
                  f"{failed[0].failure}", file=sys.stderr)
        order = {question: index for index, question in enumerate(ids)}
        for sample, name in enumerate(names):
            mine = {ids[a.entry]: result_line(ids[a.entry], a, records_turns(tasks[a.entry]), args.include_input_log,
                                              records[sample])
                    for a in answers if a.sample == sample}
            lines = sorted({**kept[sample], **mine}.values(), key=lambda line: order[line["id"]])
            # The whole file beside it first, then one rename: the .partial stays whole until it is done with.
            (out / (name + ".tmp")).write_text("".join(json.dumps(line) + "\n" for line in lines))
            (out / (name + ".tmp")).replace(out / name)
            (out / (name + ".partial")).unlink()
            written.append(out / name)
    return written


def with_variation(chat_mode: ChatMode, variation: str) -> ChatMode:
    """The chat mode under --prompt_variation (given, or a run's): the configuration writes the
    system prompt. A run's ``random``: BFCL's default prompt (one of the 26 it learned; a result
    file cannot say which one an answer drew), and the format-sensitivity set's entries each
    under its own configuration."""
    if variation == "random":
        return replace(chat_mode.varied(variation), prompt_variation=None)
    return chat_mode.varied(variation)


# ---- the command (its flags: algos/commands.py and fcenv/flags.py) --------------------
def _command(args: argparse.Namespace) -> int:
    from fcenv.algos.config import ConfigError
    from fcenv.algos.from_run import apply_run
    from fcenv.algos.input_files import check_model_folder
    from fcenv.algos.partial_results import PartialError
    from fcenv.algos.rollout.engine import check_engine
    from fcenv.algos.store.checkpoint import adapter_settings
    from fcenv.algos.store.manifest import CheckpointError
    from fcenv.cli import UsageError
    from fcenv.flags import (
        ENGINE,
        FORMAT_SENSITIVITY,
        MODEL,
        SAMPLING,
        TOOL_FORMAT,
        check,
        memory_encoder_problems,
        open_web_search,
    )

    check(args, MODEL, SAMPLING, ENGINE, TOOL_FORMAT, FORMAT_SENSITIVITY)
    if args.n < 1:
        raise UsageError("--n must be positive")
    if not 0 < args.timeout < float("inf"):
        raise UsageError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    if args.endpoint and (args.adapter or args.run):
        raise UsageError(f"--{'adapter' if args.adapter else 'run'} applies to a local model, not to an --endpoint")
    if args.endpoint and args.rollout_engine != "hf":
        raise UsageError("--rollout_engine applies to a local model, not to an --endpoint")
    if Path(args.out).is_file():
        raise UsageError(f"--out {args.out} is a file; name a folder")
    try:
        if args.run:
            apply_run(args)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    # Every file the flags name, read before the model loads (or the tiny model builds); each
    # spec resolved here, once, and its question file handed down.
    _check_data(args)
    args.question_files = question_files(args.dataset_path, _resolved_specs(args.dataset_path))
    _read_sets(args)
    _say_decoder(args)
    args.web_search_source = open_web_search(args.web_search, args.question_files)
    missing = memory_encoder_problems(args.question_files)
    if missing:
        raise UsageError(missing[0])
    _check_partials(args)
    try:
        if not args.endpoint:
            check_engine(args.rollout_engine)
            check_model_folder("--model_name_or_path", args.model_name_or_path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if args.adapter:
        adapter_settings(Path(args.adapter))
    try:
        written = generate(args)
    except (ConfigError, CheckpointError, PartialError) as exc:
        raise UsageError(str(exc)) from None
    for path in written:
        print(path)
    return 0


def question_files(specs: list[str], resolved: dict[str, Path]) -> list[Path]:
    """The question files the ``--dataset_path`` specs resolved to (``fcenv.flags.resolve_specs``),
    whose stems name their result files. Two that would write the same result files are refused;
    a spec that is no question file itself (a converted source, a mix) is said with the file it
    became."""
    from fcenv.bundled import resolve as resolve_bundled
    from fcenv.cli import UsageError

    files: dict[str, tuple[str, Path]] = {}
    for spec in specs:
        file = resolved[spec].resolve()
        if file.stem in files:
            raise UsageError(f"--dataset_path {files[file.stem][0]} and {spec} would both be answered in "
                             f"{result_names(file, 1)[0]}: answer them in two runs, each with its own --out")
        files[file.stem] = (spec, file)
        if resolve_bundled(spec).resolve() != file:
            print(f"fcenv generate: --dataset_path {spec} is the question file {file} (its result files are "
                  f"named after it; `fcenv evaluate --dataset_path` scores them given either)", file=sys.stderr)
    return [file for _, file in files.values()]


def _resolved_specs(specs: list[str]) -> dict[str, Path]:
    """Each ``--dataset_path`` spec's question file, resolved once (``fcenv.flags.resolve_specs``);
    the format-sensitivity set's id file is its own (its questions are other files' entries)."""
    from fcenv.cli import UsageError
    from fcenv.flags import resolve_specs
    from fcenv.format_sensitivity import is_set_file, set_path

    files, problems = resolve_specs("--dataset_path", [spec for spec in specs if not is_set_file(spec)])
    if problems:
        raise UsageError("; ".join(problems))
    return {**files, **{spec: set_path(spec) for spec in specs if is_set_file(spec)}}


def _check_partials(args: argparse.Namespace) -> None:
    """The .partial files a run that ended early left, readable, before anything heavy."""
    from fcenv.algos.partial_results import PartialError
    from fcenv.cli import UsageError

    for data in args.question_files:
        ids = questions_of(data, args).ids
        for name in result_names(data, args.n):
            try:
                kept_answers(Path(args.out) / (name + ".partial"), ids)
            except PartialError as exc:
                raise UsageError(str(exc)) from None


def _check_data(args: argparse.Namespace) -> None:
    """The question files checked as every command checks them; the format-sensitivity set's
    id file, with what the set leaves no place for: it varies the prompts of prompting models
    (no FC mode, no system prompt of one's own), each entry under each of its configurations
    (which --sensitivity_configs picks, not --prompt_variation)."""
    from fcenv.cli import UsageError
    from fcenv.flags import given
    from fcenv.format_sensitivity import is_set_file, slice_without_set

    sets = [spec for spec in args.dataset_path if is_set_file(spec)]
    if given(args, "prompt_variation") and args.prompt_variation == "random":
        raise UsageError("--prompt_variation random draws a configuration per episode, which a result file cannot "
                         "say: name one, or answer BFCL's format-sensitivity set (BFCL_v4_format_sensitivity.json as "
                         "--dataset_path), each entry under each configuration")
    if not sets and (problem := slice_without_set(args)):
        raise UsageError(problem)
    # A run's tool format is refused too (it was trained in FC mode); its prompt variation is not
    # (the set asks the variations it learned, or not, as the set asks any model).
    named = [f"--{flag}" for flag in ("tool_format", "system_prompt", "prompt_variation")
             if sets and getattr(args, flag) and (flag == "tool_format" or given(args, flag))]
    if named:
        raise UsageError(f"--dataset_path {sets[0]}: the format-sensitivity set asks each entry under each of BFCL's "
                         f"prompt variations (--sensitivity_configs picks them), in prompting mode: leave out "
                         f"{' and '.join(named)}" + (" (a run trained in FC mode cannot answer it)"
                                                     if args.run and not given(args, "tool_format") else ""))



def _read_sets(args: argparse.Namespace) -> None:
    """The format-sensitivity set's id file and the category files it lists, read and checked
    before the model loads."""
    from fcenv.cli import UsageError
    from fcenv.data import DatasetError
    from fcenv.format_sensitivity import is_set_file

    for data in args.question_files:
        if is_set_file(data):
            try:
                questions_of(data, args)
            except DatasetError as exc:
                raise UsageError(f"--dataset_path {data}: {exc}") from None


def _say_decoder(args: argparse.Namespace) -> None:
    """Answers asked under one prompt variation are read back by its decoder, which
    ``fcenv evaluate`` is told with --handler (the set's file says each answer's itself)."""
    from fcenv.format_sensitivity import is_set_file
    from fcenv.prompt_variations import PromptVariation

    if args.prompt_variation in ("", "none", "random") or all(is_set_file(data) for data in args.question_files):
        return
    handler = PromptVariation.parse(args.prompt_variation).handler
    print(f"fcenv generate: the single-turn Python entries are asked under --prompt_variation {args.prompt_variation}: "
          f"score their answers with `fcenv evaluate --handler {handler}`", file=sys.stderr)
