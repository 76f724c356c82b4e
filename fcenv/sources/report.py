"""``fcenv data convert`` and ``fcenv data check``: sources to BFCL files, with what was left
out and what copies BFCL's test set said.

Either command takes anything ``dataset_path`` takes. A source (``fcenv.sources``) is converted;
a BFCL question file, a bundled split or a mix is read as BFCL entries (a mix is drawn as the
env draws it), so ``convert`` also writes a mix to one file and ``check`` looks into any file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fcenv.data import DatasetError, Problem, answers_path_for, read_records
from fcenv.sources.convert import STEPS, Conversion, choose_format, convert_records, left_out_rows

SHOWN = 20  # records left out that `convert` prints (all go to the report file)


def convert_source(spec: str, fmt: str | None = None, steps: str = "all") -> Conversion:
    """A source converted in memory, or a BFCL file's entries as they are."""
    from fcenv.bundled import resolve as resolve_bundled
    from fcenv.sources.files import read_source
    from fcenv.sources.resolve import mix_left_out, mix_parts, resolve_dataset

    path = resolve_bundled(spec)
    if path.exists() and (fmt or not _bfcl_file(path)):
        records, problems = read_source(path)
        return convert_records(records, choose_format(records, str(path), fmt), str(path), steps=steps,
                               problems=problems)
    parts = None if path.exists() else mix_parts(spec)
    if not path.exists() and parts is None:
        raise DatasetError([Problem(spec, None, None, None, "no such file")])
    conversion = _bfcl_entries(resolve_dataset(spec))
    if parts:  # a mix: what its sources left out, which its file no longer shows
        conversion.left_out = mix_left_out(parts)
    return conversion


def _bfcl_file(path: Path) -> bool:
    """A file whose entries are BFCL's (or one no reader could tell anything of)."""
    from fcenv.sources.files import first_record

    if path.is_dir() or path.suffix == ".parquet":
        return False
    record = first_record(path)
    return not isinstance(record, dict) or "question" in record


def _bfcl_entries(path: Path) -> Conversion:
    from fcenv.data import load_tasks

    load_tasks(path)  # every problem of the file, before anything is written
    records, _, _ = read_records(path)
    conversion = Conversion(str(path), "bfcl", records=len(records))
    answer_file = answers_path_for(path)
    answer_records = read_records(answer_file)[0] if answer_file else []
    by_id = {r.value.get("id"): r.value for r in answer_records if isinstance(r.value, dict)}
    for record in records:
        entry = dict(record.value, origin={"file": str(path), "line": record.line})
        conversion.entries.append(entry)
        if entry.get("id") in by_id:
            conversion.answers.append(by_id[entry["id"]])
    return conversion


def _where(entry: dict[str, Any]) -> str:
    origin = entry.get("origin") or {}
    place = f"{origin.get('file')}, line {origin.get('line')}" if origin else "?"
    step = f", step {origin['step']}" if "step" in origin else ""
    return f"{place}{step}, task {entry.get('id')!r}"


def contaminated(conversion: Conversion, index) -> list[tuple[dict[str, Any], Any]]:
    """The tasks that copy BFCL's test set, each with how."""
    found = ((entry, index.match(entry.get("question"), entry.get("function"))) for entry in conversion.entries)
    return [(entry, match) for entry, match in found if match is not None]


def drop_contaminated(conversion: Conversion, index) -> None:
    """Move the tasks that copy BFCL's test set from ``entries`` to ``dropped``."""
    conversion.dropped = [(entry, str(match)) for entry, match in contaminated(conversion, index)]
    dropped = {e["id"] for e, _ in conversion.dropped}
    kept = [e for e in conversion.entries if e["id"] not in dropped]
    conversion.entries = kept
    conversion.answers = [a for a in conversion.answers if a.get("id") not in dropped]


def _index(bfcl_dir: str | None):
    from fcenv.bfcl_data import DEFAULT_DIR
    from fcenv.sources.decontaminate import BfclIndex

    return BfclIndex.from_dir(Path(bfcl_dir) if bfcl_dir else DEFAULT_DIR)


def _check_flags(fmt: str | None, steps: str) -> None:
    from fcenv.arguments import UsageError
    from fcenv.sources import available_formats

    if fmt is not None and fmt not in available_formats():
        raise UsageError(f"--format: unknown source format {fmt!r}; known: {', '.join(available_formats())}")
    if steps not in STEPS:
        raise UsageError(f"--steps: {steps!r}; use one of {', '.join(STEPS)}")


def _name(spec: str) -> str:
    from fcenv.bundled import resolve as resolve_bundled

    path = resolve_bundled(spec)
    return (path.stem if path.is_file() else path.name) if path.exists() else "mix"


def convert_command(sources: list[str], out: Path, *, fmt: str | None = None, steps: str = "all",
                    decontaminate: bool = False, bfcl_dir: str | None = None, strict: bool = False) -> int:
    from fcenv.arguments import UsageError

    _check_flags(fmt, steps)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} is a file; name the folder to write the question files into")
    names = [_name(s) for s in sources]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"two sources would both be written as {twice[0]}.json; convert them into separate --out folders")
    index = _index(bfcl_dir) if decontaminate else None
    conversions = []
    for spec in sources:
        conversion = convert_source(spec, fmt, steps)
        if strict and conversion.left_out:
            raise DatasetError([p for _, p in conversion.left_out])
        if index is not None:
            drop_contaminated(conversion, index)
        if not conversion.entries:
            raise DatasetError([p for _, p in conversion.left_out] or
                               [Problem(spec, None, None, None, "no task is left to write")])
        conversions.append(conversion)
    out.mkdir(parents=True, exist_ok=True)
    for name, conversion in zip(names, conversions):
        question_file = out / f"{name}.json"
        conversion.write(question_file)
        report = out / f"{name}.report.jsonl"
        report.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in _report_rows(conversion)),
                          encoding="utf-8")
        print(conversion.summary())
        for kind, problem in conversion.left_out[:SHOWN]:
            print(f"  {problem} [{kind}]")
        if len(conversion.left_out) > SHOWN:
            print(f"  ... and {len(conversion.left_out) - SHOWN} more")
        for entry, why in conversion.dropped[:SHOWN]:
            print(f"  dropped {_where(entry)}: {why}")
        if len(conversion.dropped) > SHOWN:
            print(f"  ... and {len(conversion.dropped) - SHOWN} more dropped")
        print(f"wrote {question_file}, {out / 'possible_answer' / question_file.name} and {report}")
    return 0


def _report_rows(conversion: Conversion) -> list[dict[str, Any]]:
    rows = left_out_rows(conversion.left_out)
    rows += [{"dropped": entry["id"], "origin": entry.get("origin"), "why": why} for entry, why in conversion.dropped]
    return rows


def check_command(sources: list[str], *, fmt: str | None = None, bfcl_dir: str | None = None) -> int:
    from collections import Counter

    _check_flags(fmt, "all")
    index = _index(bfcl_dir)
    found = 0
    for spec in sources:
        conversion = convert_source(spec, fmt)
        matches = contaminated(conversion, index)
        print(conversion.summary())
        for kind, problem in conversion.left_out:
            print(f"  {problem} [{kind}]")
        hows = Counter(match.how for _, match in matches)
        print(f"{len(matches)} of the {len(conversion.entries)} tasks copy BFCL's test set"
              + (": " + ", ".join(f"{how} {n}" for how, n in sorted(hows.items())) if matches else ""))
        for entry, match in matches:
            print(f"  {_where(entry)}: {match}")
        found += len(conversion.left_out) + len(matches)
    return 1 if found else 0
