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

Records a conversion leaves out are reported in one warning, in each process that uses it,
from the cache too (``fcenv data check`` lists them, a mix's among them).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import random
import re
import shutil
import tempfile
import warnings
from collections import Counter
from pathlib import Path

from fcenv.bundled import resolve as resolve_bundled
from fcenv.problems import DatasetError, DatasetWarning, Problem

CACHE_DIR = Path.home() / ".cache" / "fcenv" / "sources"
CONVERTER_VERSION = 2  # part of every cache key: a change to the conversion converts again
_BFCL_TEST_FILE = re.compile(r"^BFCL_v\d+_(?P<category>.+)\.json$")
_WEIGHT = re.compile(r"\d+(\.\d*)?|\.\d+")  # 2, 0.5, .5, 2.: no sign, no exponent


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
    """The BFCL question file converted from a source, from the cache when it is there. The
    records the conversion left out are said in a warning whether it was made now or earlier
    (the cache keeps them beside the tasks)."""
    from fcenv.sources.convert import plural
    from fcenv.sources.files import fingerprint

    key = hashlib.sha256(f"{CONVERTER_VERSION}\0{fmt}\0{steps}\0{fingerprint(path)}".encode()).hexdigest()[:24]
    target = cache_dir / key / f"{_stem(path)}.json"
    if not all(file.exists() for file in (target, target.parent / "possible_answer" / target.name,
                                          _left_out_file(target))):
        _publish(target, _conversion_writer(path, fmt, steps))
    left_out = kept_left_out(target)
    if left_out:
        kinds = Counter(kind for kind, _ in left_out)
        warnings.warn(f"{path}: {plural(len(left_out), 'record')} left out ("
                      f"{', '.join(f'{kind} {n}' for kind, n in sorted(kinds.items()))}); "
                      f"`fcenv data check {path}` lists them", DatasetWarning, stacklevel=2)
    return target


def _conversion_writer(path: Path, fmt: str | None, steps: str):
    """The source converted, as a function writing its files (the question file, its answers
    and the records left out) under a question file's name."""
    from fcenv.sources.convert import choose_format, convert_records, left_out_rows
    from fcenv.sources.files import read_source

    records, problems = read_source(path)
    conversion = convert_records(records, choose_format(records, str(path), fmt), str(path), steps=steps,
                                 problems=problems)
    if not conversion.entries:
        raise DatasetError([p for _, p in conversion.left_out] or
                           [Problem(str(path), None, None, None, "no task could be made of its records")])

    def write(question_file: Path) -> None:
        conversion.write(question_file)
        _left_out_file(question_file).write_text(
            "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in left_out_rows(conversion.left_out)),
            encoding="utf-8")

    return write


def _left_out_file(question_file: Path) -> Path:
    return question_file.with_name(f"{question_file.stem}.left_out.jsonl")


def kept_left_out(question_file: Path) -> list[tuple[str, Problem]]:
    """The records left out of a conversion in the cache (none for any other file)."""
    from fcenv.sources.convert import left_out_from_rows

    file = _left_out_file(question_file)
    if not file.exists():
        return []
    return left_out_from_rows([json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()])


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
    """``"a.jsonl:2,b.parquet"`` as [(path, weight), ...]; None when ``spec`` is no mix (one
    path without a weight). A ``DatasetError`` names every part that is no file and every
    weight that is not a number above 0, written in digits."""
    pieces = [_path_and_weight(p.strip()) for p in spec.split(",")]
    if any(not path for path, _ in pieces) or (len(pieces) == 1 and pieces[0][1] is None):
        return None
    problems = [problem for path, weight in pieces for problem in _part_problems(path, weight)]
    if problems:
        raise DatasetError(problems)
    return [(path, 1.0 if weight is None else float(weight)) for path, weight in pieces]


def _path_and_weight(piece: str) -> tuple[str, str | None]:
    """``PATH:WEIGHT`` split at its last colon, the weight as written (None when there is none).
    What follows the colon is a weight when it reads as one or when what precedes it is a file,
    so that ``a.jsonl:-1`` is a bad weight of a.jsonl, not a file named so; a piece that is a
    file itself, or that neither reading fits, is a path."""
    path, colon, weight = piece.rpartition(":")
    if not colon or resolve_bundled(piece).exists():
        return piece, None
    if _WEIGHT.fullmatch(weight) or resolve_bundled(path).exists():
        return path, weight
    return piece, None


def _part_problems(path: str, weight: str | None) -> list[Problem]:
    problems = []
    if not resolve_bundled(path).exists():
        problems.append(Problem(path, None, None, None, "no such file (in a mix of several datasets)"))
    if weight is not None and not (_WEIGHT.fullmatch(weight) and 0 < float(weight) < math.inf):
        problems.append(Problem(path, None, None, None, f"bad weight {weight!r} in the mix: a part's weight is a "
                                                        f"number above 0 written in digits, such as 2 or 0.5 "
                                                        f"(PATH:WEIGHT)"))
    return problems


def mixed(parts: list[tuple[str, float]], cache_dir: Path = CACHE_DIR) -> Path:
    """The mix of ``parts`` (as ``mix_parts`` reads them) as one BFCL file in the cache."""
    # The loader itself, not fcenv.data.load_tasks: each part is resolved above already, and
    # fcenv.data imports this module.
    from fcenv.loader import content_key, load_file

    files = [(resolve_dataset(path, cache_dir), weight) for path, weight in parts]
    for file, _ in files:
        if not file.is_file():  # a folder that is no saved dataset: the loader says what is wrong
            load_file(file)
    # The answers are part of a part's content: a BFCL file whose possible answers were edited
    # makes another mix (a new process would otherwise judge by the answers the cache holds).
    key_text = "\0".join(f"{content_key(f)}:{w}" for f, w in files)
    key = hashlib.sha256(f"mix{CONVERTER_VERSION}\0{key_text}".encode()).hexdigest()[:24]
    target = cache_dir / key / "mix.json"
    if target.exists():
        return target
    loaded = [(load_file(f), w) for f, w in files]
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


def mix_left_out(parts: list[tuple[str, float]], cache_dir: Path | None = None) -> list[tuple[str, Problem]]:
    """The records the sources of a mix leave out, as their conversions in the cache keep them."""
    return [item for path, _ in parts for item in kept_left_out(resolve_dataset(path, cache_dir))]


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
