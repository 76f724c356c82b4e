"""Dialogues -> BFCL question entries and possible answers, one task per assistant step.

Each assistant step of a record becomes a single-turn task: its question is the conversation
before the step, with the earlier steps' calls and the tool results the source recorded
(replayed, not run: none of these sets records an executable backend), and its answer the
calls the step made, judged by fcenv's AST checker (``simple``, ``multiple``, ``parallel`` or
``parallel_multiple`` by the number of tools and calls, as BFCL files them). A step that makes
no call becomes an ``irrelevance`` task: valid when the answer makes none.

Every task is checked before it is kept: the source's own answer, written as a model would
write it in BFCL's prompting format, must be valid by the checker. A record that cannot
become judged tasks (its answer calls a function not among its tools, gives an argument its
schema lacks, omits a required one, gives a value of another type, or does not parse) is left
out whole and reported with its file, line and field; the summary counts them by kind.

In the question, an earlier step is an assistant message whose ``content`` is the calls in
BFCL's prompting syntax and whose ``tool_calls`` holds them as OpenAI-style calls; each
result is a ``tool`` message answering its call's id. The env shows each mode its own form
(``fcenv.episode.first_turn_messages``).
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcenv.checkers import get_checker
from fcenv.multi_turn.executor import call_text
from fcenv.problems import DatasetError, Problem
from fcenv.sources import Dialogue, RecordError, SourceFormat, Turn, available_formats, detect_format
from fcenv.sources.schema import Docs, expected_call
from fcenv.tasks import Task
from fcenv.tool_formats import call_id
from fcenv.handlers import Call, DecodeError, decode

STEPS = ("all", "calls")  # every assistant step, or only the steps that call


@dataclass
class Conversion:
    """What converting one source gave: BFCL entries and answers, and the records left out."""

    file: str
    format: str
    records: int = 0
    entries: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)
    left_out: list[tuple[str, Problem]] = field(default_factory=list)  # (kind, where and why)
    dropped: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # (entry, why): decontamination

    def categories(self) -> Counter:
        return Counter(entry["id"].rsplit("_", 1)[0].removeprefix(self.format + "_") for entry in self.entries)

    def summary(self) -> str:
        counts = ", ".join(f"{category} {n}" for category, n in sorted(self.categories().items())) or "none"
        lines = [f"{self.file} ({self.format}): {plural(self.records, 'record')} -> "
                 f"{plural(len(self.entries), 'task')} ({counts})"]
        if self.left_out:
            kinds = Counter(kind for kind, _ in self.left_out)
            lines.append(f"{plural(len(self.left_out), 'record')} left out: "
                         + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())))
        if self.dropped:
            lines.append(f"{plural(len(self.dropped), 'task')} dropped as copies of BFCL's test set (--decontaminate)")
        return "\n".join(lines)

    def write(self, question_file: Path) -> list[Path]:
        """The question file and ``possible_answer/<same name>`` beside it (BFCL's layout)."""
        answer_file = question_file.parent / "possible_answer" / question_file.name
        answer_file.parent.mkdir(parents=True, exist_ok=True)
        question_file.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.entries),
                                 encoding="utf-8")
        answer_file.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in self.answers),
                               encoding="utf-8")
        return [question_file, answer_file]


def left_out_rows(left_out: list[tuple[str, Problem]]) -> list[dict[str, Any]]:
    """The records left out as JSON rows (a report file, the record a cached conversion keeps)."""
    return [{"left_out": kind, "file": p.file, "line": p.line, "record_id": p.entry_id, "field": p.field,
             "message": p.message} for kind, p in left_out]


def left_out_from_rows(rows: list[dict[str, Any]]) -> list[tuple[str, Problem]]:
    return [(row["left_out"], Problem(row["file"], row["line"], row["record_id"], row["field"], row["message"]))
            for row in rows]


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def calls_text(calls: list[Call]) -> str:
    """Calls in BFCL's prompting syntax, as a model answers: ``[f(x=1), g(y='a')]``."""
    return "[" + ", ".join(call_text(c.name, c.arguments) for c in calls) + "]"


def category_of_step(functions: int, calls: int) -> str:
    if calls == 0:
        return "irrelevance"
    if calls == 1:
        return "simple" if functions == 1 else "multiple"
    return "parallel" if functions == 1 else "parallel_multiple"


@dataclass
class Step:
    """One task of a dialogue: the chat before the step, the step's calls and their answer."""

    messages: list[dict[str, Any]]
    calls: list[Call]
    answer: list[dict[str, Any]] | None
    field: str
    index: int


def dialogue_steps(dialogue: Dialogue, steps: str = "all") -> tuple[list[dict[str, Any]], list[Step]]:
    """The BFCL docs of a dialogue and its tasks; ``RecordError`` if any step cannot be judged."""
    docs = Docs(dialogue.tools, dialogue.tools_field)
    # Every call first: answers type the parameters their schemas leave untyped.
    expected: dict[int, tuple[list[Call], list[dict[str, Any]]]] = {}
    for index, turn in enumerate(dialogue.turns):
        if turn.role == "assistant" and turn.calls:
            fields = turn.call_fields or [turn.field] * len(turn.calls)
            pairs = [expected_call(docs, call, where) for call, where in zip(turn.calls, fields)]
            expected[index] = ([c for c, _ in pairs], [a for _, a in pairs])
    history: list[dict[str, Any]] = []
    out, open_calls, made = [], [], 0
    for index, turn in enumerate(dialogue.turns):
        if turn.role == "assistant":
            calls, answer = expected.get(index, ([], None))
            if history and (calls or steps == "all"):
                out.append(Step(copy.deepcopy(history), calls, answer, turn.field, index))
            history.append(_assistant_message(turn, calls, made))
            open_calls = [(call_id(made + i), c.name) for i, c in enumerate(calls)]
            made += len(calls)
        elif turn.role == "tool":
            message = {"role": "tool", "content": turn.content}
            if open_calls:  # results answer the step's calls in order
                message["tool_call_id"], message["name"] = open_calls.pop(0)
            history.append(message)
        else:
            history.append({"role": turn.role, "content": turn.content})
            open_calls = []
    return docs.finished(), out


def _assistant_message(turn: Turn, calls: list[Call], first_id: int) -> dict[str, Any]:
    if not calls:
        return {"role": "assistant", "content": turn.content}
    return {"role": "assistant", "content": calls_text(calls), "tool_calls": [
        {"id": call_id(first_id + i), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for i, c in enumerate(calls)]}


def judge_own_answer(task: Task, calls: list[Call], field: str) -> None:
    """The source's answer, written as a model writes it, must be valid by BFCL's rules."""
    text = calls_text(calls) if calls else ""
    try:
        decoded: Any = decode(text, "python") if calls else DecodeError("no call")
    except DecodeError as exc:
        decoded = exc
    result = get_checker(task.kind)(task, decoded)
    if not result.valid:
        detail = result.errors[0] if result.errors else ""
        raise RecordError(field, f"the source's own answer {text[:120]!r} fails BFCL's check: "
                                 f"{result.error_type}: {detail}", "not_bfcl_valid")


def convert_records(records: list[tuple[int, Any]], fmt: SourceFormat, file: str, *, steps: str = "all",
                    problems: list[Problem] | None = None) -> Conversion:
    """Convert a source's records; ``problems`` are the reader's own (lines that are not JSON)."""
    conversion = Conversion(file, fmt.name, records=len(records) + len(problems or []))
    conversion.left_out += [("unreadable", p) for p in problems or []]
    counters: Counter = Counter()
    for line, record in records:
        record_id = record.get("id") if isinstance(record, dict) else None
        record_id = None if record_id is None else str(record_id)
        try:
            if not isinstance(record, dict):
                raise RecordError(None, f"a record must be an object, not {type(record).__name__}")
            dialogue = fmt.read(record)
            docs, found = dialogue_steps(dialogue, steps)
            tasks, numbered = [], Counter()
            for step in found:
                category = category_of_step(len(docs), len(step.calls))
                entry_id = f"{fmt.name}_{category}_{counters[category] + numbered[category]}"
                numbered[category] += 1
                task = Task(id=entry_id, question=[step.messages], functions=docs, ground_truth=step.answer)
                judge_own_answer(task, step.calls, step.field)
                tasks.append((category, step, task))
        except RecordError as exc:
            conversion.left_out.append((exc.kind, Problem(file, line, record_id, exc.field, exc.message)))
            continue
        except Exception as exc:  # a reader of someone else's format: the record is reported, never fatal
            conversion.left_out.append(("unreadable", Problem(file, line, record_id, None,
                                                              f"{fmt.name} reader failed: {type(exc).__name__}: {exc}")))
            continue
        counters.update(numbered)
        for category, step, task in tasks:
            entry = {"id": task.id, "question": task.question, "function": task.functions,
                     "origin": {"file": file, "line": line, "step": step.index}}
            conversion.entries.append(entry)
            if step.answer is not None:
                conversion.answers.append({"id": task.id, "ground_truth": step.answer})
    conversion.left_out.sort(key=lambda item: item[1].line or 0)
    return conversion


def choose_format(records: list[tuple[int, Any]], file: str, name: str | None) -> SourceFormat:
    from fcenv.sources import get_format

    if name:
        if name not in available_formats():
            raise DatasetError([Problem(file, None, None, None, f"unknown source format {name!r}; known: "
                                                                 f"{', '.join(available_formats())}")])
        return get_format(name)
    for line, record in records[:1]:
        found = detect_format(record)
        if found is None:
            keys = sorted(record) if isinstance(record, dict) else type(record).__name__
            raise DatasetError([Problem(file, line, None, None, f"not in a known source format "
                                        f"({', '.join(available_formats())}): its first record has {keys}; "
                                        f"name one with --format")])
        return found
    raise DatasetError([Problem(file, None, None, None, "the file holds no records")])
