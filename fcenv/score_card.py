"""BFCL's score card from per-category accuracies.

Turns ``{category: (correct, total)}`` into the summary BFCL's leaderboard publishes (non-live,
live, irrelevance, multi-turn, agentic, overall) and the rows of the CSV files BFCL's evaluation
writes (``data_overall.csv`` and the others), averaged as bfcl-eval 2026.3.23 averages
(``eval_runner_helper.py``; ``card_from_accuracies``). A category not scored counts as 0 over its
full size and shows "N/A", as in BFCL. The Model column, cost and latency, and where the card
differs from BFCL's: docs/evaluation.md#bfcls-score-card. Pure functions, no file read; only
``write_score_csvs`` writes.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy

from fcenv.bfcl_models import bfcl_model
from fcenv.format_sensitivity import Sensitivity
from fcenv.prompt_variations import format_sensitivity_configs

NA = "N/A"

# Entries per scoring category in bfcl-eval 2026.3.23 (memory without its prereq
# conversations): what a category not scored counts as in a count-weighted average.
CATEGORY_SIZES: dict[str, int] = {
    "simple_python": 400, "simple_java": 100, "simple_javascript": 50, "multiple": 200, "parallel": 200,
    "parallel_multiple": 200, "irrelevance": 240,
    "live_simple": 258, "live_multiple": 1053, "live_parallel": 16, "live_parallel_multiple": 24,
    "live_irrelevance": 884, "live_relevance": 16,
    "multi_turn_base": 200, "multi_turn_miss_func": 200, "multi_turn_miss_param": 200, "multi_turn_long_context": 200,
    "memory_kv": 155, "memory_vector": 155, "memory_rec_sum": 155,
    "web_search_base": 100, "web_search_no_snippet": 100,
}
# Judged by ``fcenv evaluate`` like the others; a web-search run's answers come from BFCL's live
# search or, played here, from a snapshot or corpus (``fcenv.search``): said on the card.
WEB_SEARCH_CATEGORIES = ("web_search_base", "web_search_no_snippet")
OVERALL_WEIGHTS = (10, 10, 10, 30, 40)  # non-live, live, irrelevance, multi-turn, agentic


@dataclass(frozen=True)
class Score:
    """One figure of the card: the accuracy that enters averages, the entry count behind it,
    and whether BFCL shows it (``shown`` False: displayed "N/A", averaged as ``accuracy``)."""

    accuracy: float
    count: int
    shown: bool = True

    @property
    def display(self) -> float | str:
        return self.accuracy if self.shown else NA


def _shown(parts: Sequence[Score], na_if_missing: bool) -> bool:
    return not na_if_missing or all(part.shown for part in parts)


def plain_mean(parts: Sequence[Score], na_if_missing: bool = True) -> Score:
    """Each part counts once, whatever its size (BFCL's unweighted accuracy)."""
    total = 0
    for part in parts:
        total += part.accuracy
    return Score(total / len(parts), sum(part.count for part in parts), _shown(parts, na_if_missing))


def count_weighted_mean(parts: Sequence[Score], na_if_missing: bool = True) -> Score:
    """Each part weighs as many entries as it has (BFCL's weighted accuracy)."""
    total, count = 0, 0
    for part in parts:
        total += part.accuracy * part.count
        count += part.count
    if count == 0:
        raise ValueError("a count-weighted mean over no entries")
    return Score(total / count, count, _shown(parts, na_if_missing))


def fixed_weighted_mean(parts: Sequence[Score], weights: Sequence[float], na_if_missing: bool = True) -> Score:
    """Each part weighs its share of ``weights`` (BFCL's percentage-weighted accuracy)."""
    if len(parts) != len(weights) or sum(weights) <= 0:
        raise ValueError("one positive weight per part")
    shares = [weight / sum(weights) for weight in weights]
    total = 0.0
    for part, share in zip(parts, shares):
        total += part.accuracy * share
    return Score(total, sum(part.count for part in parts), _shown(parts, na_if_missing))


@dataclass(frozen=True)
class ScoreCard:
    categories: dict[str, Score]  # every scoring category; the ones not scored shown N/A
    simple: Score                 # Python, Java, JavaScript simple
    non_live_ast: Score           # BFCL's non-live "AST Summary" (N/A when a part is missing)
    non_live: Score               # non-live overall: the same mean, missing parts as 0, never N/A
    live_ast: Score               # live "AST Summary"
    live: Score                   # live overall
    irrelevance: Score            # irrelevance and live irrelevance
    relevance: Score              # live relevance (not in the overall)
    multi_turn: Score
    web_search: Score
    memory: Score
    agentic: Score
    overall: Score

    @property
    def missing(self) -> list[str]:
        return [name for name, score in self.categories.items() if not score.shown]


def score_card(counts: Mapping[str, tuple[int, int]]) -> ScoreCard:
    """The card from ``{category: (correct, total)}``, as BFCL records a category: accuracy
    ``correct / total`` over ``total`` entries. Every category must be one of BFCL's scoring
    categories (``CATEGORY_SIZES``) and hold at least one entry (BFCL cannot record an empty
    one either: its accuracy divides by the count)."""
    accuracies = {}
    for category, (correct, total) in counts.items():
        if not 0 <= correct <= total or total <= 0:
            raise ValueError(f"{category}: {correct} correct of {total} entries")
        accuracies[category] = (correct / total, total)
    return card_from_accuracies(accuracies)


def card_from_accuracies(accuracies: Mapping[str, tuple[float, int]]) -> ScoreCard:
    """The card from ``{category: (accuracy, entries)}``."""
    unknown = sorted(set(accuracies) - set(CATEGORY_SIZES))
    if unknown:
        raise ValueError(f"not BFCL scoring categories: {', '.join(unknown)}")
    c: dict[str, Score] = {}
    for category, size in CATEGORY_SIZES.items():
        if category in accuracies:
            accuracy, entries = accuracies[category]
            if entries <= 0 or not 0 <= accuracy <= 1:
                raise ValueError(f"{category}: accuracy {accuracy} over {entries} entries")
            c[category] = Score(accuracy, entries)
        else:  # as BFCL: 0 in every average, over the category's whole size, displayed N/A
            c[category] = Score(0, size, shown=False)

    # Plain means, but the live AST categories (weighted by their entries) and the overall
    # (OVERALL_WEIGHTS). A sub-summary over a category not scored is N/A too; the group scores
    # (non-live, live, multi-turn, agentic) and the overall stay numbers (na_if_missing=False).
    # Live relevance is shown, never averaged into anything; format sensitivity counts in no average.
    simple = plain_mean([c["simple_python"], c["simple_java"], c["simple_javascript"]])
    non_live_parts = [simple, c["multiple"], c["parallel"], c["parallel_multiple"]]
    live_parts = [c["live_simple"], c["live_multiple"], c["live_parallel"], c["live_parallel_multiple"]]
    web_search = plain_mean([c["web_search_base"], c["web_search_no_snippet"]])
    memory = plain_mean([c["memory_kv"], c["memory_vector"], c["memory_rec_sum"]])
    non_live = plain_mean(non_live_parts, na_if_missing=False)
    live = count_weighted_mean(live_parts, na_if_missing=False)
    irrelevance = plain_mean([c["irrelevance"], c["live_irrelevance"]])
    multi_turn = plain_mean([c["multi_turn_base"], c["multi_turn_miss_func"], c["multi_turn_miss_param"],
                             c["multi_turn_long_context"]], na_if_missing=False)
    agentic = plain_mean([web_search, memory], na_if_missing=False)
    overall = fixed_weighted_mean([non_live, live, irrelevance, multi_turn, agentic], OVERALL_WEIGHTS,
                                  na_if_missing=False)
    return ScoreCard(categories=c, simple=simple, non_live_ast=plain_mean(non_live_parts), non_live=non_live,
                     live_ast=count_weighted_mean(live_parts), live=live, irrelevance=irrelevance,
                     relevance=c["live_relevance"], multi_turn=multi_turn, web_search=web_search, memory=memory,
                     agentic=agentic, overall=overall)


# --- Cost and latency --------------------------------------------------------------------------

# What BFCL charges a locally served model (bfcl-eval 2026.3.23, constants/eval_config.py): an
# 8 x H100 node's hourly price, shared by the 100 requests its server answers at once.
GPU_PRICE_PER_HOUR = 23.92
CONCURRENT_REQUESTS = 100


@dataclass(frozen=True)
class CostLatency:
    """The overall table's cost and latency cells: numbers rounded to cents and hundredths of a
    second as BFCL rounds them, or "N/A"."""

    cost: float | str = NA
    mean: float | str = NA
    std: float | str = NA
    p95: float | str = NA


def latencies(values: Iterable[Any]) -> list[float]:
    """The latencies BFCL counts, from each result line's ``latency`` value (None: the line has
    none): a single-turn line's number, or a multi-turn or agentic line's turns of step
    numbers. Zeros, and anything not a number, are left out, as BFCL leaves them out; so is a
    value of any other shape."""
    counted = []
    for value in values:
        if isinstance(value, list) and all(isinstance(turn, list) for turn in value):
            steps = [step for turn in value for step in turn]
        else:
            steps = [value]
        counted += [step for step in steps if isinstance(step, (int, float)) and step != 0]
    return counted


def cost_latency(seconds: Sequence[float]) -> CostLatency:
    """BFCL's cost and latency figures for a locally served model: the cost of the GPU hours
    the latencies add up to, at ``GPU_PRICE_PER_HOUR`` shared by ``CONCURRENT_REQUESTS``; the
    latencies' mean, standard deviation (of a sample) and 95th percentile (numpy's, as BFCL
    takes it). "N/A" without latencies. With one latency there is no standard deviation:
    BFCL's evaluation stops there with an error, the card shows "N/A"."""
    if not seconds:
        return CostLatency()
    hours = sum(seconds) / 3600
    cost = round(hours * GPU_PRICE_PER_HOUR / CONCURRENT_REQUESTS, 2)
    std = round(statistics.stdev(seconds), 2) if len(seconds) > 1 else NA
    # numpy's round on numpy's percentile, as BFCL rounds it (it can differ from Python's round)
    p95 = float(round(numpy.percentile(seconds, 95), 2))
    return CostLatency(cost, round(statistics.mean(seconds), 2), std, p95)


# --- The CSV files -----------------------------------------------------------------------------

NON_LIVE_COLUMNS = ["Rank", "Model", "Non-Live Overall Acc", "AST Summary", "Simple AST", "Python Simple AST",
                    "Java Simple AST", "JavaScript Simple AST", "Multiple AST", "Parallel AST",
                    "Parallel Multiple AST", "Irrelevance Detection"]
LIVE_COLUMNS = ["Rank", "Model", "Live Overall Acc", "AST Summary", "Python Simple AST", "Python Multiple AST",
                "Python Parallel AST", "Python Parallel Multiple AST", "Irrelevance Detection",
                "Relevance Detection"]
MULTI_TURN_COLUMNS = ["Rank", "Model", "Multi Turn Overall Acc", "Base", "Miss Func", "Miss Param", "Long Context"]
AGENTIC_COLUMNS = ["Rank", "Model", "Agentic Overall Acc", "Web Search Summary", "Web Search Base",
                   "Web Search No Snippet", "Memory Summary", "Memory KV", "Memory Vector",
                   "Memory Recursive Summarization"]
OVERALL_COLUMNS = ["Rank", "Overall Acc", "Model", "Model Link", "Total Cost ($)", "Latency Mean (s)",
                   "Latency Standard Deviation (s)", "Latency 95th Percentile (s)", "Non-Live AST Acc",
                   "Non-Live Simple AST", "Non-Live Multiple AST", "Non-Live Parallel AST",
                   "Non-Live Parallel Multiple AST", "Live Acc", "Live Simple AST", "Live Multiple AST",
                   "Live Parallel AST", "Live Parallel Multiple AST", "Multi Turn Acc", "Multi Turn Base",
                   "Multi Turn Miss Func", "Multi Turn Miss Param", "Multi Turn Long Context", "Web Search Acc",
                   "Web Search Base", "Web Search No Snippet", "Memory Acc", "Memory KV", "Memory Vector",
                   "Memory Recursive Summarization", "Relevance Detection", "Irrelevance Detection",
                   "Format Sensitivity Max Delta", "Format Sensitivity Standard Deviation", "Organization",
                   "License"]


FORMAT_SENSITIVITY_COLUMNS = (["Rank", "Model", "Format Sensitivity Max Delta", "Format Sensitivity Standard Deviation"]
                              + [f"Config {config}" for config in format_sensitivity_configs()])


def shown_name(model: str) -> str:
    """The model as the Model column shows it: BFCL's display name where its registry lists the
    model, else the name as given."""
    listed = bfcl_model(model)
    return listed.display_name if listed else model


def csv_rows(card: ScoreCard, model: str, sensitivity: Sensitivity | None = None,
             timing: CostLatency | None = None) -> dict[str, tuple[list[str], list[float | str]]]:
    """Each CSV file's header and the model's row before formatting: accuracies as numbers,
    "N/A" where BFCL shows it. The model's name, link, organisation and licence are BFCL's
    where its registry lists the model (``shown_name``; otherwise the name as given and "N/A");
    cost and latency are ``timing``'s ("N/A" without it). The format-sensitivity cells come from
    ``sensitivity`` (the set's figures, ``fcenv.format_sensitivity``), "N/A" without it, and for
    each configuration not scored."""
    c = {name: score.display for name, score in card.categories.items()}
    rank = NA  # BFCL fills the rank in when it sorts the rows
    name = shown_name(model)
    listed = bfcl_model(model)
    link, org, licence = (listed.url, listed.org, listed.license) if listed else (NA, NA, NA)
    timing = timing or CostLatency()
    spread = [NA, NA] if sensitivity is None else [sensitivity.max_delta, sensitivity.std]
    by_config = [NA if sensitivity is None or (a := sensitivity.config_accuracy(config)) is None else a
                 for config in format_sensitivity_configs()]
    return {
        "data_overall.csv": (OVERALL_COLUMNS, [
            rank, card.overall.display, name, link, timing.cost, timing.mean, timing.std, timing.p95,
            card.non_live_ast.display, card.simple.display, c["multiple"], c["parallel"], c["parallel_multiple"],
            card.live.display, c["live_simple"], c["live_multiple"], c["live_parallel"], c["live_parallel_multiple"],
            card.multi_turn.display, c["multi_turn_base"], c["multi_turn_miss_func"], c["multi_turn_miss_param"],
            c["multi_turn_long_context"],
            card.web_search.display, c["web_search_base"], c["web_search_no_snippet"],
            card.memory.display, c["memory_kv"], c["memory_vector"], c["memory_rec_sum"],
            card.relevance.display, card.irrelevance.display, *spread, org, licence]),
        "data_non_live.csv": (NON_LIVE_COLUMNS, [
            rank, name, card.non_live.display, card.non_live_ast.display, card.simple.display,
            c["simple_python"], c["simple_java"], c["simple_javascript"], c["multiple"], c["parallel"],
            c["parallel_multiple"], c["irrelevance"]]),
        "data_live.csv": (LIVE_COLUMNS, [
            rank, name, card.live.display, card.live_ast.display, c["live_simple"], c["live_multiple"],
            c["live_parallel"], c["live_parallel_multiple"], c["live_irrelevance"], c["live_relevance"]]),
        "data_multi_turn.csv": (MULTI_TURN_COLUMNS, [
            rank, name, card.multi_turn.display, c["multi_turn_base"], c["multi_turn_miss_func"],
            c["multi_turn_miss_param"], c["multi_turn_long_context"]]),
        "data_agentic.csv": (AGENTIC_COLUMNS, [
            rank, name, card.agentic.display, card.web_search.display, c["web_search_base"],
            c["web_search_no_snippet"], card.memory.display, c["memory_kv"], c["memory_vector"],
            c["memory_rec_sum"]]),
        "data_format_sensitivity.csv": (FORMAT_SENSITIVITY_COLUMNS, [rank, name, *spread, *by_config]),
    }


def percent(value: float) -> str:
    """An accuracy as BFCL's CSV cells show it: ``0.4567`` is ``45.67%``."""
    return f"{value * 100:.2f}%"


# The numeric cells BFCL writes as they are (str), not as percentages: the cost and latency
# columns and the format-sensitivity spread (percentage points already).
PLAIN_COLUMNS = {"data_overall.csv": (4, 5, 6, 7, 32, 33), "data_format_sensitivity.csv": (2, 3)}


def csv_text(header: list[str], row: list[float | str], rank: int = 1, plain: Sequence[int] = ()) -> str:
    """A one-model CSV file as BFCL writes it: the rank filled in, accuracies as percentages
    (the ``plain`` columns' numbers as Python prints them), cells joined by commas without
    quoting, no newline after the last row."""
    cells = [str(rank)] + [cell if isinstance(cell, str) else str(cell) if index in plain else percent(cell)
                           for index, cell in enumerate(row[1:], start=1)]
    return ",".join(header) + "\n" + ",".join(cells)


def csv_files(card: ScoreCard, model: str, sensitivity: Sensitivity | None = None,
              timing: CostLatency | None = None) -> dict[str, str]:
    """Each file's name and text. BFCL joins cells with commas and never quotes: a model name
    with a comma or a line break would shift or split the row, so it is refused."""
    if any(ch in model for ch in ",\n\r") or not model:
        raise ValueError(f"model name {model!r}: BFCL's CSV files hold it unquoted; give one without commas or "
                         "line breaks")
    return {name: csv_text(header, row, plain=PLAIN_COLUMNS.get(name, ()))
            for name, (header, row) in csv_rows(card, model, sensitivity, timing).items()}


def write_score_csvs(folder: Path, card: ScoreCard, model: str, sensitivity: Sensitivity | None = None,
                     timing: CostLatency | None = None) -> list[Path]:
    """Write the six files into ``folder`` (made if needed); returns their paths."""
    files = csv_files(card, model, sensitivity, timing)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


# --- The model's name --------------------------------------------------------------------------

_GROUP_FOLDERS = ("non_live", "live", "multi_turn", "agentic", "format_sensitivity")


def model_folder(result_file: Path) -> Path:
    """The folder that names the model of a result file. BFCL keeps results in
    ``<result dir>/<model>/<group>/BFCL_v4_<category>_result.json`` (memory under
    ``agentic/memory/<backend>/``); a file in that layout is named by ``<model>``, any other
    by the folder it lies in."""
    folder = result_file.resolve().parent
    if folder.parent.name == "memory" and folder.parent.parent.name == "agentic":
        return folder.parent.parent.parent
    if folder.name in _GROUP_FOLDERS:
        return folder.parent
    return folder


def model_name_of(result_files: Sequence[Path]) -> str | None:
    """The model's name as BFCL reads it from its results folder: the folder's name with each
    ``_`` read back as ``/`` (BFCL writes ``Qwen/Qwen2.5-7B`` into ``Qwen_Qwen2.5-7B``). None
    when the files lie in different model folders."""
    folders = {model_folder(Path(file)) for file in result_files}
    if len(folders) != 1:
        return None
    return folders.pop().name.replace("_", "/")


# --- The printed card --------------------------------------------------------------------------

def _titled(model: str) -> str:
    shown = shown_name(model)
    return model if shown == model else f"{shown} (BFCL's name for {model})"


def _cell(score: Score | float | str) -> str:
    value = score.display if isinstance(score, Score) else score
    return value if isinstance(value, str) else percent(value)


def _cost_latency_rows(timing: CostLatency) -> list[tuple[str, str, str]]:
    if timing.cost == NA:
        return [("Cost and Latency", NA, "the result lines carry no latency (BFCL's generation writes it)")]
    return [
        ("Total Cost ($)", str(timing.cost), f"BFCL's for a local model: hours of latency x ${GPU_PRICE_PER_HOUR} "
                                             f"/ {CONCURRENT_REQUESTS} requests at once"),
        ("Latency Mean (s)", str(timing.mean), "over every model call the result lines time"),
        ("Latency Standard Deviation (s)", str(timing.std), "" if timing.std != NA else "one latency: none"),
        ("Latency 95th Percentile (s)", str(timing.p95), ""),
    ]


def render(card: ScoreCard, model: str | None = None, sensitivity: Sensitivity | None = None,
           timing: CostLatency | None = None) -> str:
    """The card as ``fcenv evaluate`` prints it: the groups, what each averages and how, and
    the categories behind them; with ``sensitivity`` (the format-sensitivity set was scored),
    its max delta and standard deviation, as the CSV files hold them; the cost and latency of
    ``timing``. The model is named as the Model column names it (``shown_name``)."""
    c = card.categories
    rows: list[tuple[str, str, str]] = [
        ("Overall Acc", _cell(card.overall), "non-live 10, live 10, irrelevance 10, multi-turn 30, agentic 40"),
        ("Non-Live", _cell(card.non_live), "mean of simple, multiple, parallel, parallel multiple"),
        ("  AST Summary", _cell(card.non_live_ast), "the same mean, N/A if a part is missing"),
        ("  Simple AST", _cell(card.simple), "mean of Python, Java, JavaScript"),
    ]
    rows += [(f"    {name}", _cell(c[key]), "") for name, key in (
        ("Python", "simple_python"), ("Java", "simple_java"), ("JavaScript", "simple_javascript"))]
    rows += [(f"  {name}", _cell(c[key]), "") for name, key in (
        ("Multiple AST", "multiple"), ("Parallel AST", "parallel"), ("Parallel Multiple AST", "parallel_multiple"))]
    rows += [
        ("Live", _cell(card.live), "mean of the four live AST categories, weighted by their entries"),
        ("  AST Summary", _cell(card.live_ast), "the same mean, N/A if a part is missing"),
    ]
    rows += [(f"  {name}", _cell(c[key]), f"{c[key].count} entries" if c[key].shown else "") for name, key in (
        ("Simple AST", "live_simple"), ("Multiple AST", "live_multiple"), ("Parallel AST", "live_parallel"),
        ("Parallel Multiple AST", "live_parallel_multiple"))]
    rows += [
        ("Irrelevance Detection", _cell(card.irrelevance), "mean of irrelevance, live irrelevance"),
        ("  Non-Live", _cell(c["irrelevance"]), ""),
        ("  Live", _cell(c["live_irrelevance"]), ""),
        ("Relevance Detection", _cell(card.relevance), "live relevance; not in the overall"),
        ("Multi-Turn", _cell(card.multi_turn), "mean of base, miss func, miss param, long context"),
    ]
    rows += [(f"  {name}", _cell(c[key]), "") for name, key in (
        ("Base", "multi_turn_base"), ("Miss Func", "multi_turn_miss_func"), ("Miss Param", "multi_turn_miss_param"),
        ("Long Context", "multi_turn_long_context"))]
    rows += [
        ("Agentic", _cell(card.agentic), "mean of web search, memory"),
        ("  Web Search", _cell(card.web_search), "mean of base, no snippet"),
        ("  Memory", _cell(card.memory), "mean of KV, vector, recursive summarization"),
    ]
    if sensitivity is None:
        rows.append(("Format Sensitivity", NA, "not scored (BFCL runs it for prompting models only)"))
    else:
        configs = len(sensitivity.by_config)
        whole = len(format_sensitivity_configs())
        rows += [
            ("Format Sensitivity", "", f"across {configs} of BFCL's {whole} prompt configurations; in no average"),
            ("  Max Delta", str(sensitivity.max_delta), "points: the best configuration's accuracy minus the worst's"),
            ("  Standard Deviation", str(sensitivity.std), "points, over the configurations' accuracies"),
        ]
    rows += _cost_latency_rows(timing or CostLatency())
    width = max(len(name) for name, _, _ in rows)
    values = max(len(value) for _, value, _ in rows)
    title = "BFCL score card (bfcl-eval 2026.3.23's averaging)" + (f", model {_titled(model)}" if model else "")
    lines = [title, "-" * len(title)]
    lines += [f"{name:<{width}}  {value:>{values}}" + (f"  {note}" if note else "") for name, value, note in rows]
    missing = card.missing
    if missing:
        lines.append("")
        lines.append(f"N/A: a category not scored here ({len(missing)} of BFCL's {len(c)}). BFCL shows it, and "
                     "every summary over it, as N/A, but counts it as 0 (over its full size) in the group scores "
                     "and the overall.")
        lines.append(f"  not in these results: {', '.join(missing)}")
    if any(c[name].shown for name in WEB_SEARCH_CATEGORIES):
        lines.append("Web search: answers played on fcenv's snapshot or corpus are judged as BFCL judges them, but "
                     "searched another web than BFCL's live runs do")
    partial = [f"{name} {score.count} of {CATEGORY_SIZES[name]}" for name, score in c.items()
               if score.shown and score.count != CATEGORY_SIZES[name]]
    if partial:
        lines.append("Fewer entries than BFCL's category (the card is BFCL's own only over whole categories): "
                     + ", ".join(partial))
    return "\n".join(lines)
