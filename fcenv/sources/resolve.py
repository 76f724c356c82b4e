"""What a ``dataset_path`` names, as one BFCL question file.

``dataset_path`` (the env's) and ``--dataset_path`` (the trainer's) take:

- a BFCL question file (``possible_answer/`` beside it), a file in the prior implementation's
  format, or a bundled split's name: used as they are;
- a JSON Lines or JSON file, a Parquet file or a ``datasets`` ``save_to_disk`` folder in a
  source format (``fcenv.sources``): converted on first use into
  ``~/.cache/fcenv/sources/<hash of the bytes>/``, and read from there afterwards;
- several of these mixed, ``"a.jsonl:2,b.parquet:1,tiny_train"``: each ``PATH[:WEIGHT]``
  (weight 1 when left out); the mix has as many tasks as its parts together, each part's
  share in proportion to its weight (drawn without repeats until a part runs out, then again
  in a new order), written to the cache as one BFCL file.

Records a conversion leaves out are reported in one warning (``fcenv data check`` lists them).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import re
import shutil
import tempfile
import warnings
from collections import Counter
from pathlib import Path

from fcenv.bundled import resolve as resolve_bundled
from fcenv.data import DatasetError, Problem

CACHE_DIR = Path.home() / ".cache" / "fcenv" / "sources"
CONVERTER_VERSION = 2  # part of every cache key: a change to the conversion converts again
_BFCL_TEST_FILE = re.compile(r"^BFCL_v\d+_(?P<category>.+)\.json$")
_WEIGHT = re.compile(r"^(?P<path>.+):(?P<weight>\d+(\.\d+)?|\.\d+)$")


def resolve_dataset(spec: str | Path, cache_dir: Path | None = None) -> Path:
    """The BFCL question file for ``spec`` (see the module doc); the path itself when it is
    neither a source nor a mix, so that the loader reports what is wrong with it."""
    text = str(spec)
    path = resolve_bundled(spec)
    if path.exists():
        stat = path.stat()
        return _converted_once(str(path.resolve()), stat.st_mtime_ns, stat.st_size, str(cache_dir or CACHE_DIR)) or path
    parts = mix_parts(text)
    if parts is None:
        return path
    return mixed(parts, cache_dir or CACHE_DIR)


@functools.lru_cache(maxsize=64)
def _converted_once(path: str, mtime: int, size: int, cache_dir: str) -> Path | None:
    """The converted copy of a source (None for any other file), looked up once per file
    version and process, so that a conversion's warning is said once."""
    return converted(Path(path), Path(cache_dir)) if is_source(Path(path)) else None


def is_source(path: Path) -> bool:
    """Whether a file is in a source format rather than BFCL's (or the prior implementation's)."""
    from fcenv.sources import detect_format
    from fcenv.sources.files import first_record, is_saved_dataset

    if path.is_dir():
        return is_saved_dataset(path)
    if path.suffix == ".parquet":
        return True
    record = first_record(path)
    return isinstance(record, dict) and "question" not in record and detect_format(record) is not None


def converted(path: Path, cache_dir: Path = CACHE_DIR, fmt: str | None = None, steps: str = "all") -> Path:
    """The BFCL question file converted from a source, from the cache when it is there."""
    from fcenv.sources.convert import choose_format, convert_records
    from fcenv.sources.files import fingerprint, read_source

    key = hashlib.sha256(f"{CONVERTER_VERSION}\0{fmt}\0{steps}\0{fingerprint(path)}".encode()).hexdigest()[:24]
    target = cache_dir / key / f"{_stem(path)}.json"
    if target.exists() and (target.parent / "possible_answer" / target.name).exists():
        return target
    records, problems = read_source(path)
    conversion = convert_records(records, choose_format(records, str(path), fmt), str(path), steps=steps,
                                 problems=problems)
    if not conversion.entries:
        raise DatasetError([p for _, p in conversion.left_out] or
                           [Problem(str(path), None, None, None, "no task could be made of its records")])
    if conversion.left_out:
        warnings.warn(f"{conversion.summary()}; `fcenv data check {path}` lists them", stacklevel=2)
    _publish(target, conversion.write)
    return target


def _stem(path: Path) -> str:
    return re.sub(r"[^\w.-]", "_", path.stem if path.is_file() else path.name) or "data"


def _publish(target: Path, write) -> None:
    """Write the files into a fresh folder and move it into place whole, so that a reader (or
    another process converting the same source) never sees half of it."""
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=target.parent.parent))
    try:
        write(staging / target.name)
        try:
            os.replace(staging, target.parent)
        except OSError:  # another process published it first: the same bytes
            if not target.exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# --------------------------------------------------------------------------- mixes


def mix_parts(spec: str) -> list[tuple[str, float]] | None:
    """``"a.jsonl:2,b.parquet"`` as [(path, weight), ...]; None when ``spec`` is no mix."""
    pieces = [p.strip() for p in spec.split(",")]
    parts = []
    for piece in pieces:
        match = _WEIGHT.match(piece)
        path, weight = (match.group("path"), float(match.group("weight"))) if match else (piece, 1.0)
        if not path:
            return None
        parts.append((path, weight))
    if len(parts) == 1 and parts[0][0] == spec:
        return None
    return parts


def mixed(parts: list[tuple[str, float]], cache_dir: Path = CACHE_DIR) -> Path:
    from fcenv.data import content_key, load_tasks

    problems = []
    for path, weight in parts:
        if not resolve_bundled(path).exists():
            problems.append(Problem(path, None, None, None, "no such file (in a mix of several datasets)"))
        elif weight <= 0:
            problems.append(Problem(path, None, None, None, f"weight {weight:g}: a part's weight must be positive"))
    if problems:
        raise DatasetError(problems)
    files = [(resolve_dataset(path, cache_dir), weight) for path, weight in parts]
    for file, _ in files:
        if not file.is_file():  # a folder that is no saved dataset: the loader says what is wrong
            load_tasks(file)
    # The answers are part of a part's content: a BFCL file whose possible answers were edited
    # makes another mix (a new process would otherwise judge by the answers the cache holds).
    key_text = "\0".join(f"{content_key(f)}:{w}" for f, w in files)
    key = hashlib.sha256(f"mix{CONVERTER_VERSION}\0{key_text}".encode()).hexdigest()[:24]
    target = cache_dir / key / "mix.json"
    if target.exists():
        return target
    loaded = [(load_tasks(f), w) for f, w in files]
    total, weights = sum(len(t) for t, _ in loaded), sum(w for _, w in loaded)
    rng = random.Random(0)
    chosen = []
    for tasks, weight in loaded:
        count = max(1, round(total * weight / weights))
        order: list = []
        while len(order) < count:  # each task once before any twice
            again = list(tasks)
            rng.shuffle(again)
            order += again
        chosen += order[:count]
    rng.shuffle(chosen)
    _publish(target, lambda file: _write_tasks(chosen, file))
    return target


def _write_tasks(tasks: list, file: Path) -> None:
    """Tasks as a BFCL question file and its answers, ids renumbered per category."""
    numbers: Counter = Counter()
    questions, answers = [], []
    for task in tasks:
        entry_id = f"{task.category}_{numbers[task.category]}"
        numbers[task.category] += 1
        entry = {"id": entry_id, "question": task.question,
                 "function": task.functions + [doc for docs in task.missed_functions.values() for doc in docs]}
        if task.is_multi_turn:
            entry.update(involved_classes=task.involved_classes, initial_config=task.initial_config)
            if task.missed_functions:
                entry["missed_function"] = {str(turn): [d["name"] for d in docs]
                                            for turn, docs in task.missed_functions.items()}
        questions.append(entry)
        if task.ground_truth is not None:
            answers.append({"id": entry_id, "ground_truth": task.ground_truth})
    (file.parent / "possible_answer").mkdir(parents=True, exist_ok=True)
    file.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    (file.parent / "possible_answer" / file.name).write_text(
        "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8")


# --------------------------------------------------------------------------- BFCL's test files


def test_set_warnings(spec: str | Path) -> list[str]:
    """A warning for each part of ``spec`` that is one of BFCL's test files: training on it
    and reporting BFCL accuracy measures memory, not skill."""
    parts = mix_parts(str(spec)) or [(str(spec), 1.0)]
    found = []
    for path, _ in parts:
        name = Path(path).name
        match = _BFCL_TEST_FILE.match(name)
        if match and Path(path).parent.name != "unused_datasets":
            found.append(f"{path} is BFCL's test set ({match.group('category')}): a model trained on it "
                         f"is not measured by BFCL's accuracy on it, which it has seen")
    return found
