"""Reading a source's records: JSON Lines or a JSON array (with line numbers), a Parquet file,
or a folder written by ``datasets``' ``save_to_disk`` (rows numbered from 1, reported as lines).
Parquet and ``datasets`` folders need the ``datasets`` package (``pip install "fcenv[data]"``).

The same records give the same tasks from every form. Arrow, under Parquet and ``datasets``,
stores a column with one type: an object lacking a key its neighbours have comes back with that
key null, and a column's integers come back as floats once one of its numbers has a fraction.
Neither can be undone, so every record, whatever its form, is read as Arrow would leave it:
an object's null members are left out (a null is no value given), and a float with no fraction
is an integer.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from fcenv.loader import jsonl_lines, read_records
from fcenv.problems import DatasetError, Problem
from fcenv.sources.parsing import EXACT_INTEGERS

Records = list[tuple[int, Any]]


def is_saved_dataset(path: Path) -> bool:
    """A folder ``save_to_disk`` wrote (a Dataset, or a DatasetDict of them)."""
    return path.is_dir() and ((path / "state.json").exists() or (path / "dataset_dict.json").exists())


def _needs_datasets(path: Path, what: str):
    try:
        import datasets  # noqa: F401  (the check itself)
    except ImportError:
        raise DatasetError([Problem(str(path), None, None, None, f"reading {what} needs the `datasets` package: "
                                                                 f"pip install \"fcenv[data]\"")]) from None


def read_source(path: Path) -> tuple[Records, list[Problem]]:
    """The records of a source file or folder, and the lines that could not be read."""
    file = str(path)
    if path.is_dir():
        if not is_saved_dataset(path):
            raise DatasetError([Problem(file, None, None, None, "a folder, but not one `datasets`' save_to_disk "
                                                                "wrote (no state.json or dataset_dict.json)")])
        _needs_datasets(path, "a saved dataset")
        from datasets import DatasetDict, load_from_disk

        loaded = load_from_disk(str(path))
        if isinstance(loaded, DatasetDict):
            splits = list(loaded)
            if "train" not in loaded and len(splits) != 1:
                raise DatasetError([Problem(file, None, None, None, f"a DatasetDict without a 'train' split "
                                                                    f"(splits: {splits}); save the split to use")])
            loaded = loaded["train" if "train" in loaded else splits[0]]
        return _plain_records(list(enumerate(loaded, start=1)), file)
    if path.suffix == ".parquet":
        _needs_datasets(path, "a Parquet file")
        import pyarrow.parquet as pq

        try:
            rows = pq.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow's errors: a file that is not Parquet, a truncated one
            raise DatasetError([Problem(file, None, None, None, f"cannot read it as Parquet: {exc}")]) from None
        return _plain_records(list(enumerate(rows, start=1)), file)
    records, problems, _ = read_records(path)
    plain, deep = _plain_records([(r.line, r.value) for r in records], file)
    return plain, problems + deep


def _plain_records(records: Records, file: str) -> tuple[Records, list[Problem]]:
    """The records as every form can hold them (see the module doc); one too deeply nested to
    walk is reported, as the JSON reader reports one too deep to parse."""
    plain, problems = [], []
    for line, value in records:
        try:
            plain.append((line, plain_value(value)))
        except RecursionError:
            problems.append(Problem(file, line, None, None, "JSON nested too deeply to read"))
    return plain, problems


def plain_value(value: Any) -> Any:
    """``value`` without null object members, its floats with no fraction as integers."""
    if isinstance(value, dict):
        return {key: plain_value(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [plain_value(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < EXACT_INTEGERS:
        return int(value)
    return value


def first_record(path: Path, lines: int = 100) -> Any:
    """The first record of a JSON Lines or JSON array file, read without parsing the rest (the
    first of its first ``lines`` lines that is JSON; None when there is none to read)."""
    try:
        with path.open(encoding="utf-8") as handle:
            head = handle.read(1 << 16)
            if head.lstrip().startswith("["):
                text = head + handle.read()
                start = text.index("[") + 1
                while start < len(text) and text[start] in " \t\r\n":
                    start += 1
                return json.JSONDecoder().raw_decode(text, start)[0]
            text = head + handle.readline()
            for line in jsonl_lines(text)[:lines]:
                try:
                    return json.loads(line)
                except ValueError:
                    continue
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return None


def fingerprint(path: Path) -> str:
    """A hash of a file's or a saved dataset folder's bytes (the key of its converted copy)."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else "").encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()
