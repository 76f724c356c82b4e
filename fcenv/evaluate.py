"""Score a BFCL result file offline (contract C3).

A result file has one JSON object per line, ``{"id": ..., "result": ...}``: the raw model
text for single-turn entries, and for multi-turn entries one list per turn holding the raw
text of each step. An id may appear on several lines (several samples per prompt), as long as
every id of the file appears as often (``uneven_repeats``). Each line gets one verdict line
``{"id", "valid", "error_type", "reward", "facets"}``, in order.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fcenv.data import DatasetError, Problem, read_records
from fcenv.episode import EpisodeSettings
from fcenv.rewards import RewardFn
from fcenv.tasks import Task


@dataclass(frozen=True)
class ResultLine:
    line: int
    id: str
    result: Any
    latency: Any = None  # BFCL's ``latency`` where the line has it (its generation times each call)


def read_results(path: Path, tasks: dict[str, Task]) -> list[ResultLine]:
    """Read and check a result file against the tasks; raise ``DatasetError`` with every problem."""
    records, problems, is_array = read_records(path)
    file = str(path)
    if is_array:
        problems.append(Problem(file, 1, None, None, "a result file is JSON Lines ({\"id\", \"result\"} per line), not one JSON array"))
    lines = []
    for record in records if not is_array else []:
        value = record.value
        entry_id = value.get("id") if isinstance(value, dict) else None
        if not isinstance(value, dict):
            problems.append(Problem(file, record.line, None, None, "each line must be a JSON object"))
        elif not isinstance(entry_id, str):
            problems.append(Problem(file, record.line, None, "id", "missing or not a string"))
        elif entry_id not in tasks:
            problems.append(Problem(file, record.line, entry_id, "id", "no entry with this id in the question file"))
        elif "result" not in value:
            problems.append(Problem(file, record.line, entry_id, "result", "missing"))
        else:
            issue = _result_shape_problem(value["result"], tasks[entry_id])
            if issue:
                problems.append(Problem(file, record.line, entry_id, "result", issue))
            else:
                lines.append(ResultLine(record.line, entry_id, value["result"], value.get("latency")))
    unknown = [p.entry_id for p in problems if p.field == "id" and p.entry_id is not None]
    if unknown and len(unknown) == len(records):
        raise DatasetError([_answers_another_file(file, unknown, tasks)])
    if problems:
        raise DatasetError(problems)
    if not lines:
        raise DatasetError([Problem(file, None, None, None, "the result file holds no lines")])
    return lines


def _answers_another_file(file: str, ids: list[str], tasks: dict[str, Task]) -> Problem:
    """A result file none of whose ids is an entry of the question file answers another one
    (the other bundled split, another BFCL version's file): one line that says so, not one
    per line, and no verdicts (it would score 0% against the wrong questions)."""
    from fcenv.bundled import split_holding

    questions = next(iter(tasks.values())).source if tasks else "the question file"
    shown = ", ".join(repr(i) for i in ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    split = split_holding(ids)
    other = f"the bundled split {split}'s entries (--dataset_path {split})" if split else "another question file"
    return Problem(file, None, None, "id", f"no line answers an entry of {questions} (no entry with the ids "
                                           f"{shown}): the results answer {other}")


def unanswered(tasks: Iterable[Task], lines: list[ResultLine]) -> list[str]:
    """Ids of the question file's entries that no result line answers, in the file's order.
    BFCL's runner refuses such a file unless told ``--partial-eval``: scoring only the lines
    present would report a crashed or truncated generation run's accuracy as if it were whole."""
    answered = {line.id for line in lines}
    return [task.id for task in tasks if task.id not in answered]


def unanswered_problem(results: str, questions: str, total: int, missing: list[str], shown: int = 5) -> Problem:
    """The refusal of a result file that leaves entries unanswered, naming the first few."""
    names = ", ".join(repr(i) for i in missing[:shown]) + (f" and {len(missing) - shown} more" if len(missing) > shown else "")
    return Problem(results, None, None, None,
                   f"answers {total - len(missing)} of the {total} entries of {questions}; {len(missing)} have no "
                   f"result line: {names} (--partial scores only the entries answered)")


def uneven_repeats(file: str, lines: list[ResultLine], shown: int = 5) -> Problem | None:
    """The refusal of a result file that answers some entries more often than others (one id
    three times, the rest once): accuracy would weigh those entries more, and pass@k would take
    k from the fewest. Every id of a file must have the same number of lines (its samples); the
    ids that stray from the most common count are named with their counts."""
    counts: dict[str, int] = defaultdict(int)
    for line in lines:
        counts[line.id] += 1
    tally: dict[int, int] = defaultdict(int)
    for count in counts.values():
        tally[count] += 1
    if len(tally) < 2:
        return None
    usual = max(tally, key=lambda c: (tally[c], -c))
    odd = [(entry, n) for entry, n in counts.items() if n != usual]
    named = ", ".join(f"{entry!r} {n} {'line' if n == 1 else 'lines'}" for entry, n in odd[:shown])
    more = f" and {len(odd) - shown} more" if len(odd) > shown else ""
    return Problem(file, None, None, None,
                   f"uneven repeats: {named}{more}, where the other {tally[usual]} ids have {usual} "
                   f"{'line' if usual == 1 else 'lines'} each; accuracy and pass@k need every entry of a file "
                   f"answered the same number of times (samples): give each id as many lines, or score each "
                   f"sample's file on its own")


def _result_shape_problem(result: Any, task: Task) -> str | None:
    if task.kind == "agentic":
        if isinstance(result, str) or (isinstance(result, list) and all(
                isinstance(turn, list) and all(isinstance(s, str) for s in turn) for turn in result)):
            return None  # BFCL's runner judges the number of turns (one) itself
        return "an agentic result must be a list of turns (one), each a list of step texts (strings)"
    if not task.is_multi_turn:
        return None if isinstance(result, str) else "a single-turn result must be the model's text (a string)"
    # BFCL records an inference failure as a string; its checker reports inference_error for it.
    if isinstance(result, str):
        return None
    if not isinstance(result, list) or not all(isinstance(turn, list) and all(isinstance(s, str) for s in turn) for turn in result):
        return "a multi-turn result must be a list of turns, each a list of step texts (strings)"
    return None


def verdict(task: Task, result: Any, settings: EpisodeSettings, reward_fn: RewardFn,
            lenient_handler: str | None = None) -> dict[str, Any]:
    """The verdict on one result line. With ``lenient_handler`` the answer is also decoded by
    that decoder, and it passes if either reading passes: a lenient evaluation accepts at
    least what BFCL accepts (the "auto" decoder alone reads Python syntax only, and finds
    calls in prose that BFCL's decoder, failing, would have counted as an abstention)."""
    outcome = _outcome(task, result, settings)
    if lenient_handler is not None and not outcome.valid and settings.handler is None:
        other = _outcome(task, result, replace(settings, handler=lenient_handler))
        outcome = other if other.valid else outcome
    return {
        "id": task.id,
        "valid": outcome.valid,
        "error_type": outcome.error_type,
        "reward": float(reward_fn(outcome)),
        "facets": dict(outcome.facets),
    }


def _outcome(task: Task, result: Any, settings: EpisodeSettings):
    if task.kind == "agentic":
        from fcenv.agentic.recorded import check_recorded_agentic

        return check_recorded_agentic(task, result, settings)
    if task.is_multi_turn:
        return check_multi_turn_result(task, result, settings)
    return settings.checker_for(task)(task, settings.decode(task, result))


def check_multi_turn_result(task: Task, result: Any, settings: EpisodeSettings):
    """BFCL's evaluation of a recorded multi-turn result: steps without calls are skipped."""
    from fcenv.checkers.multi_turn import INFERENCE_ERROR
    from fcenv.checkers.result import CheckResult
    from fcenv.multi_turn.executor import decode_step
    from fcenv.multi_turn.trajectory import check_recorded

    if isinstance(result, str):  # BFCL records a failed inference as its error text
        return CheckResult(False, INFERENCE_ERROR, [result[:1000]], {})
    from fcenv.handlers.native import InferenceCrash

    handler = settings.handler_for(task)
    decoded = []
    for number, turn in enumerate(result):
        decoded.append([])
        for step in turn:
            try:
                decoded[-1].append(decode_step(step, handler, settings.tool_format))
            except InferenceCrash as crash:
                if crash.fails_entry(number, len(result)):  # BFCL would have recorded an inference error
                    return CheckResult(False, INFERENCE_ERROR, [str(crash)], {})
                decoded[-1].append([])
    return check_recorded(task, decoded, settings.backend_package, settings.checker_for(task))


def evaluate(tasks: Iterable[Task], lines: list[ResultLine], settings: EpisodeSettings, reward_fn: RewardFn,
             lenient_handler: str | None = None) -> Iterator[dict[str, Any]]:
    by_id = {t.id: t for t in tasks}
    for line in lines:
        yield verdict(by_id[line.id], line.result, settings, reward_fn, lenient_handler)


def pass_at_k(samples: int, correct: int, k: int) -> float:
    """The unbiased pass@k estimate for one prompt (Chen et al., 2021)."""
    if samples - correct < k:
        return 1.0
    return 1.0 - math.comb(samples - correct, k) / math.comb(samples, k)


def accuracy_table(verdicts: list[dict[str, Any]], tasks: dict[str, Task]) -> str:
    """Per-category accuracy over all lines, plus pass@k when ids repeat."""
    per_id: dict[str, list[bool]] = defaultdict(list)
    for v in verdicts:
        per_id[v["id"]].append(bool(v["valid"]))
    k = min(len(s) for s in per_id.values())
    by_category: dict[str, list[str]] = defaultdict(list)
    for entry_id in per_id:
        by_category[tasks[entry_id].category].append(entry_id)

    header = ["category", "lines", "valid", "accuracy"] + ([f"pass@{k}"] if k > 1 else [])
    rows = []
    for category in sorted(by_category) + ["TOTAL"]:
        ids = [i for c in by_category.values() for i in c] if category == "TOTAL" else by_category[category]
        outcomes = [o for i in ids for o in per_id[i]]
        row = [category, str(len(outcomes)), str(sum(outcomes)), f"{sum(outcomes) / len(outcomes):.4f}"]
        if k > 1:
            row.append(f"{sum(pass_at_k(len(per_id[i]), sum(per_id[i]), k) for i in ids) / len(ids):.4f}")
        rows.append(row)
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" if c == 0 else f"{{:>{w}}}" for c, w in enumerate(widths))
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)


def category_accuracies(verdicts: list[dict[str, Any]], tasks: dict[str, Task]) -> dict[str, tuple[float, int]]:
    """Each category's accuracy over its lines and its number of entries, as BFCL records a
    category (one answer per entry: accuracy ``correct / entries``). With several samples per
    entry the accuracy is the mean over the samples, the count still the entries."""
    lines: dict[str, list[bool]] = defaultdict(list)
    entries: dict[str, set[str]] = defaultdict(set)
    for v in verdicts:
        category = tasks[v["id"]].category
        lines[category].append(bool(v["valid"]))
        entries[category].add(v["id"])
    return {category: (sum(outcomes) / len(outcomes), len(entries[category])) for category, outcomes in lines.items()}


def write_verdicts(path: Path, verdicts: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write atomically: a crash never leaves a half-written verdict file behind."""
    written = list(verdicts)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            for v in written:
                fh.write(json.dumps(v, ensure_ascii=False, default=repr) + "\n")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return written
