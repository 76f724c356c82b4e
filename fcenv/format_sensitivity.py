"""BFCL v4's format-sensitivity set: 200 single-turn entries asked under each of 26 prompt variations.

BFCL's ``BFCL_v4_format_sensitivity.json`` lists entry ids per category (it holds no questions);
the set is every listed entry, in its category file's order, asked once per configuration
(``fcenv.prompt_variations``), entry by entry. Each answer's id says which:
``format_sensitivity_<n>:<config>:<entry id>``, ``n`` counting over entries and configurations.
BFCL keeps the answers in ``<results>/<model>/format_sensitivity/BFCL_v4_format_sensitivity_result.json``.

BFCL scores each configuration's accuracy and, across configurations, the largest difference and
the standard deviation (in percentage points, rounded to 2 decimals); it never counts the set in
the overall score. ``sensitivity`` computes those figures as BFCL's runner does.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fcenv.data import DatasetError, Problem
from fcenv.prompt_variations import PromptVariation, format_sensitivity_configs, reaches
from fcenv.tasks import Task

SET_NAME = "format_sensitivity"
ID_FILE_SUFFIX = f"{SET_NAME}.json"


@dataclass(frozen=True)
class VariedEntry:
    """One question of the set: an entry asked under one configuration."""

    id: str
    config: str
    task: Task

    @property
    def variation(self) -> PromptVariation:
        return PromptVariation.parse(self.config)


SET_NAMES = ("format_sensitivity", "BFCL_v4_format_sensitivity")  # the id file named without its folder


def is_set_file(spec: str | Path) -> bool:
    """Whether a --dataset_path names the set's id file: ``BFCL_v4_format_sensitivity.json`` (any
    ``*format_sensitivity.json``), or the set's name for the file in BFCL's data cache."""
    name = Path(spec).name
    return name.endswith(ID_FILE_SUFFIX) or name in SET_NAMES


def set_path(spec: str | Path) -> Path:
    """The id file a --dataset_path names: the path, or where ``fcenv data bfcl`` puts the file
    when the path is not there and names no folder (``BFCL_v4_format_sensitivity.json``,
    ``format_sensitivity``)."""
    from fcenv.bfcl_data import DEFAULT_DIR

    path = Path(spec)
    if path.exists() or len(path.parts) > 1:
        return path
    return DEFAULT_DIR / f"BFCL_v4_{ID_FILE_SUFFIX}"


def select_configs(selector: str = "") -> list[str]:
    """BFCL's configurations that a selector picks, in BFCL's order: alternatives split by
    commas, each a configuration or a part of one (``ret_fmt=json``, ``tool_call_tag=True
    &func_doc_fmt=xml``: every configuration with those settings). Empty: all 26. Raises
    ``ValueError`` naming an alternative that picks none."""
    configs = format_sensitivity_configs()
    if not selector.strip():
        return configs
    picked: set[str] = set()
    for alternative in (part.strip() for part in selector.split(",")):
        settings = set(alternative.split("&"))
        matching = {config for config in configs if settings <= set(config.split("&"))}
        if not matching:
            raise ValueError(f"{alternative!r} picks none of BFCL's configurations (settings such as "
                             f"'ret_fmt=json&tool_call_tag=True', joined by '&'; alternatives by ',')")
        picked |= matching
    return [config for config in configs if config in picked]


def slice_without_set(args) -> str | None:
    """What is wrong with --sensitivity_configs or --sensitivity_entries where no --dataset_path
    names the set: they pick part of it, and of nothing else."""
    named = [f"--{flag}" for flag in ("sensitivity_configs", "sensitivity_entries") if getattr(args, flag, None)]
    if not named:
        return None
    return (f"{' and '.join(named)} pick part of BFCL's format-sensitivity set, and no --dataset_path names its id "
            f"file (BFCL_v4_format_sensitivity.json)")


def entry_id(index: int, config: str, task_id: str) -> str:
    return f"{SET_NAME}_{index}:{config}:{task_id}"


def split_id(varied_id: str) -> tuple[str, str] | None:
    """``(config, entry id)`` of a set id, None for any other id."""
    parts = varied_id.split(":")
    if len(parts) != 3 or not parts[0].startswith(SET_NAME + "_"):
        return None
    return parts[1], parts[2]


def read_id_file(path: Path) -> dict[str, list[str]]:
    """The category -> ids map, checked: a clear error naming the file and the field."""
    file = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError([Problem(file, None, None, None, f"cannot read the format-sensitivity id file: {exc}")]) \
            from None
    if not isinstance(data, dict):
        raise DatasetError([Problem(file, None, None, None, "the format-sensitivity id file is one JSON object "
                                                            "mapping each category to a list of entry ids")])
    bad = [Problem(file, None, None, category, "must be a list of entry ids (strings)")
           for category, ids in data.items() if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)]
    if bad:
        raise DatasetError(bad)
    return data


def load_set(path: str | Path, configs: Iterable[str] | None = None, entries: int = 0) -> list[VariedEntry]:
    """The set's questions, in BFCL's order, from the id file and the category files beside it
    (``<prefix><category>.json``, their possible answers in ``possible_answer/``). ``configs``
    and ``entries`` (the first so many entries; 0: all) pick a slice; its questions keep the
    ids they have in the whole set, so a slice's answers are scored as the set's."""
    path = Path(path)
    tasks = _listed_tasks(path)[:entries or None]
    every = format_sensitivity_configs()
    wanted = set(every if configs is None else configs)
    return [VariedEntry(entry_id(position * len(every) + n, config, task.id), config, task)
            for position, task in enumerate(tasks) for n, config in enumerate(every) if config in wanted]


def _listed_tasks(path: Path) -> list[Task]:
    """The entries the id file lists, each category in its file's order."""
    from fcenv.env import dataset_tasks

    prefix = path.name[:-len(ID_FILE_SUFFIX)]
    found_tasks, problems = [], []
    for category, ids in read_id_file(path).items():
        if not ids:
            continue
        tasks = dataset_tasks(path.parent / f"{prefix}{category}.json")
        wanted = set(ids)
        found = [task for task in tasks if task.id in wanted]
        missing = sorted(wanted - {task.id for task in found})
        if missing:
            problems.append(Problem(str(path), None, missing[0], category,
                                    f"{len(missing)} listed ids are not in {prefix}{category}.json"))
        # An entry no variation reaches would be asked under BFCL's default prompt in every
        # configuration, and its verdicts counted in each configuration's accuracy.
        unvaried = [task for task in found if not reaches(task)]
        if unvaried:
            problems.append(Problem(str(path), None, unvaried[0].id, category,
                                    f"{len(unvaried)} listed entries are not varied ({unvaried[0].category}): BFCL "
                                    f"varies the prompt of single-turn Python entries only; list those alone"))
        found_tasks.extend(found)
    if problems:
        raise DatasetError(problems)
    return found_tasks


@dataclass(frozen=True)
class Sensitivity:
    """BFCL's format-sensitivity figures: each configuration's ``(correct, total)``, the overall
    accuracy, and across the configurations' accuracies the max delta, variance and standard
    deviation (percentage points, rounded to 2 decimals; 0.0 with a single configuration)."""

    by_config: dict[str, tuple[int | float, int]] = field(default_factory=dict)
    accuracy: float = 0.0
    max_delta: float = 0.0
    variance: float = 0.0
    std: float = 0.0

    def config_accuracy(self, config: str) -> float | None:
        if config not in self.by_config:
            return None
        correct, total = self.by_config[config]
        return correct / total


def sensitivity(outcomes: Iterable[tuple[str, bool]]) -> Sensitivity:
    """The figures from ``(config, valid)`` verdicts (several samples of an entry each count)."""
    counts: dict[str, list[int]] = {}
    for config, valid in outcomes:
        tally = counts.setdefault(config, [0, 0])
        tally[0] += bool(valid)
        tally[1] += 1
    return sensitivity_from_counts({config: (c, t) for config, (c, t) in counts.items()})


def sensitivity_from_counts(counts: Mapping[str, tuple[int, int]]) -> Sensitivity:
    accuracies = [correct / total for correct, total in counts.values()]
    correct = sum(c for c, _ in counts.values())
    total = sum(t for _, t in counts.values())
    if len(accuracies) > 1:
        # statistics computes exactly (fractions), so the order of the configurations does not matter
        variance = round(statistics.variance(accuracies) * 100 ** 2, 2)
        std = round(statistics.stdev(accuracies) * 100, 2)
        max_delta = round((max(accuracies) - min(accuracies)) * 100, 2)
    else:
        variance = std = max_delta = 0.0
    return Sensitivity(dict(counts), correct / total if total else 0.0, max_delta, variance, std)


def render(figures: Sensitivity) -> str:
    """The set's table: each configuration's accuracy, then the spread."""
    width = max(len(config) for config in figures.by_config)
    lines = [f"{'configuration':<{width}}  {'lines':>5}  {'valid':>5}  accuracy"]
    for config, (correct, total) in figures.by_config.items():
        lines.append(f"{config:<{width}}  {total:>5}  {correct:>5}  {correct / total:.4f}")
    lines.append(f"format sensitivity: max delta {figures.max_delta} points, standard deviation {figures.std} points "
                 f"(variance {figures.variance}) across {len(figures.by_config)} configurations; overall accuracy "
                 f"{figures.accuracy:.4f}")
    return "\n".join(lines)


def varied_verdicts(entries: list[VariedEntry], lines: list, settings, reward_fn) -> Iterable[dict]:
    """One verdict per result line, as ``fcenv.evaluate.verdict`` gives it, each read with its
    configuration's prompt decoder and no lenient second reading (the set measures how well
    the model keeps to the format asked for); the verdict keeps the line's id and names its
    configuration."""
    from dataclasses import replace

    from fcenv.evaluate import verdict

    by_id = {entry.id: entry for entry in entries}
    variations: dict[str, PromptVariation] = {}
    for line in lines:
        entry = by_id[line.id]
        variation = variations.setdefault(entry.config, entry.variation)
        outcome = verdict(entry.task, line.result, replace(settings, prompt_variation=variation), reward_fn)
        yield {**outcome, "id": line.id, "config": entry.config}
