"""Read one question file (BFCL's, or the prior implementation's single-file format) into
``Task`` objects: ``load_file``. ``fcenv.data.load_tasks`` resolves what a ``dataset_path`` names
(a bundled split, a source, a mix: ``fcenv.sources.resolve``) and then loads the file here; the
resolver loads a mix's parts here too, so neither imports the other.

Accepted files:
- a BFCL question file (JSON Lines); its answers are read from ``possible_answer/<same name>``
  beside it (or one folder up, the layout of BFCL's ``unused_datasets/``), and multi-turn
  entries get their function docs from ``multi_turn_func_doc/`` found the same way; BFCL's
  memory file becomes the entries of its three memory categories, each with its scenario's
  prerequisite conversations from ``memory_prereq_conversation/`` (``fcenv.agentic.loading``);
- one JSON array in the prior implementation's format, whose entries carry ``ground_truth``
  (and may spell ``involved_classes`` as ``invoked_classes``, as its README does).

Every entry is validated with the JSON Schemas in ``fcenv/schemas``. All problems of a file
are collected and raised together as one ``DatasetError``, each naming the file, the line,
the entry id and the field, so a user fixes a file in one pass.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import re
import sys
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from fcenv import answerable
from fcenv.agentic.loading import (
    MEMORY_FILE_CATEGORY,
    PREREQUISITE_FOLDER,
    WEB_SEARCH_CATEGORIES,
    WEB_SEARCH_CLASS,
    WEB_SEARCH_FILE_CATEGORY,
    PrerequisiteError,
    expand_memory_entry,
    expand_web_search_entry,
    known_scenario,
    prerequisites,
    web_search_entry,
)
from fcenv.backends import FUNC_DOC_FILES, known_backends, user_backend
from fcenv.bfcl_data import DEFAULT_DIR
from fcenv.multi_turn.executor import ToolSession, parse_call_text
from fcenv.problems import DatasetError, DatasetWarning, Problem
from fcenv.tasks import Task, category_of

# Categories whose verdict needs a possible answer.
_NEEDS_ANSWER = ("ast", "multi_turn", "agentic")
# BFCL's memory sets come from BFCL's memory file, which names no backend (BFCL makes the
# categories from it); its web-search sets from its web-search file, likewise.
_UNSUPPORTED = {
    "web_search": "BFCL's web-search categories are web_search_base and web_search_no_snippet, which fcenv makes "
                  "from BFCL's web-search file (BFCL_v4_web_search.json, ids web_search_<n>) as BFCL does",
    "memory": "fcenv reads the memory categories from BFCL's memory file (BFCL_v4_memory.json, ids memory_<n>-...), "
              "which it makes into memory_kv, memory_vector and memory_rec_sum entries as BFCL does",
}
_FILE_CATEGORY = re.compile(r"^BFCL_v\d+_(?P<category>.+)\.json$")


@dataclass
class _Record:
    line: int
    value: Any


# --------------------------------------------------------------------------- reading


@lru_cache(maxsize=1)
def _validators() -> dict[str, Draft202012Validator]:
    folder = Path(__file__).with_name("schemas")
    schemas = {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}
    registry = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in schemas.values()
    )
    answer_gt = {"$ref": schemas["answer"]["$id"] + "#/$defs/ground_truth"}
    return {
        "question": Draft202012Validator(schemas["question"], registry=registry),
        "answer": Draft202012Validator(schemas["answer"], registry=registry),
        "ground_truth": Draft202012Validator(answer_gt, registry=registry),
        "function_doc": Draft202012Validator(schemas["function_doc"], registry=registry),
    }


def _field(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _schema_problems(validator, value, file, line, entry_id, prefix="") -> list[Problem]:
    problems = []
    for err in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path))):
        # anyOf failures are clearer through their best-matching branch.
        detail = err
        if err.context:
            detail = min(err.context, key=lambda e: len(list(e.absolute_path)) * -1)
        path = [*([prefix] if prefix else []), *detail.absolute_path]
        if detail.validator == "required" and isinstance(detail.instance, dict):
            # Name the missing key itself, not the object that lacks it.
            path.append(next(k for k in detail.validator_value if k not in detail.instance))
        field = _field(path)
        problems.append(Problem(file, line, entry_id, field or None, detail.message))
    return problems


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text. A line ends at "\n" (or "\r\n") only: ``str.splitlines``
    also splits at U+2028, U+0085, form feed and others, which are legal inside JSON strings
    written with ``ensure_ascii=False``."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_records(path: Path) -> tuple[list[_Record], list[Problem], bool]:
    """Entries of a JSON Lines file or of one JSON array; returns (records, problems, is_array)."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(file, None, None, None, f"cannot read the file: {exc}")], False
    stripped = text.lstrip()
    if stripped.startswith("["):
        return *_read_array(text, file), True
    records, problems = [], []
    for number, line in enumerate(jsonl_lines(text), start=1):
        if not line.strip():
            continue
        try:
            records.append(_Record(number, json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(Problem(file, number, None, None, f"invalid JSON: {exc.msg} (column {exc.colno})"))
        except RecursionError:
            problems.append(Problem(file, number, None, None, "JSON nested too deeply to read"))
    if problems and stripped.startswith("{"):
        try:
            whole = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            whole = None
        if isinstance(whole, dict):
            return [], [Problem(file, 1, None, None, "one JSON object, not JSON Lines entries "
                                "(BFCL's format_sensitivity file only lists ids of other files)")], False
    return records, problems, False


def _read_array(text: str, file: str) -> tuple[list[_Record], list[Problem]]:
    decoder = json.JSONDecoder()
    try:
        values = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [Problem(file, exc.lineno, None, None, f"invalid JSON: {exc.msg} (column {exc.colno})")]
    except RecursionError:
        return [], [Problem(file, None, None, None, "JSON nested too deeply to read")]
    # Walk the array once more to learn the line each entry starts on, for error messages.
    records, pos = [], text.index("[") + 1
    for value in values:
        while text[pos] in " \t\r\n,":
            pos += 1
        _, end = decoder.raw_decode(text, pos)
        records.append(_Record(text.count("\n", 0, pos) + 1, value))
        pos = end
    return records, []


# --------------------------------------------------------------------------- finding files


def _nearby(path: Path, relative: str) -> list[Path]:
    """BFCL's layouts: beside the question file, or one/two folders up (unused_datasets/)."""
    return [path.parent / relative, path.parent.parent / relative, path.parent.parent.parent / relative]


def answers_path_for(path: Path) -> Path | None:
    for candidate in _nearby(path, f"possible_answer/{path.name}"):
        if candidate.exists():
            return candidate
    return None


def content_key(path: Path, answers: str | Path | None = None) -> str:
    """A hash of the bytes a question file's tasks are read from: the file and its possible
    answers (``answers``, else ``possible_answer/<name>`` found beside it). Whatever keeps tasks
    for later keys on it, so that an answer edited in place is read again; a file's time and
    size miss an edit of its answers, and may miss an edit of its own."""
    answer_file = Path(answers) if answers else answers_path_for(path)
    digest = hashlib.sha256(b"question " + _bytes_digest(path))
    if answer_file is not None and answer_file.is_file():
        digest.update(b"answers " + _bytes_digest(answer_file))
    return digest.hexdigest()


def _bytes_digest(file: Path) -> bytes:
    digest = hashlib.sha256()
    with file.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.digest()


def prerequisite_dir_for(path: Path) -> Path | None:
    for candidate in [*_nearby(path, PREREQUISITE_FOLDER), DEFAULT_DIR / PREREQUISITE_FOLDER]:
        if candidate.is_dir():
            return candidate
    return None


def func_doc_dir_for(path: Path) -> Path | None:
    for candidate in [*_nearby(path, "multi_turn_func_doc"), DEFAULT_DIR / "multi_turn_func_doc"]:
        if candidate.is_dir():
            return candidate
    return None


@lru_cache(maxsize=8)
def _func_docs(folder: str) -> dict[str, list[dict[str, Any]]]:
    docs = {}
    for cls, filename in FUNC_DOC_FILES.items():
        file = Path(folder) / filename
        if file.exists():
            records, problems, _ = read_records(file)
            if problems:
                raise DatasetError(problems)
            docs[cls] = [r.value for r in records]
    return docs


# --------------------------------------------------------------------------- building tasks


def _turns(question: Any) -> list[list[dict[str, Any]]]:
    if isinstance(question, str):  # chatable: a bare question
        return [[{"role": "user", "content": question}]]
    if question and isinstance(question[0], dict):  # sql: one flat list of messages
        return [question]
    return question


def _exec_answer(calls: list[str], functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The retired executable sets give call strings; check them as exact-value AST answers."""
    from fcenv.handlers import decode

    answer = []
    for text in calls:
        (call,) = decode(f"[{text}]", "python")
        arguments = dict(call.arguments)
        node = ast.parse(text, mode="eval").body
        positional = [a for a in getattr(node, "args", [])]
        if positional:
            doc = next((f for f in functions if f["name"] == call.name), None)
            names = list(doc["parameters"]["properties"]) if doc else []
            for name, arg in zip(names, positional):
                arguments[name] = ast.literal_eval(arg)
        answer.append({call.name: {k: [v] for k, v in arguments.items()}})
    return answer


def _unreadable_call(ground_truth: list[list[Any]]) -> tuple[str, str] | None:
    """(field, message) for the first ground-truth call string the executor cannot read."""
    for turn, calls in enumerate(ground_truth):
        for index, text in enumerate(calls):
            field = f"ground_truth[{turn}][{index}]"
            if not isinstance(text, str):
                return field, f"must be a call string like \"f(x=1)\", not {type(text).__name__}"
            try:
                parse_call_text(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                return field, f"cannot read the call {text[:80]!r}: {type(exc).__name__}: {exc}"
    return None


def _unusable_scenario(involved: list[str], config: dict[str, Any], long_context: bool) -> tuple[str, str] | None:
    """(field, message) for the first class whose backend cannot start from its scenario: found
    here, not at the first reset of an episode on it."""
    for name in involved:
        try:
            ToolSession([name], config, long_context=long_context)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001  a backend's own code (SystemExit too), the built-in ones or a user's
            return f"initial_config.{name}", f"the {name} backend cannot start from it: {type(exc).__name__}: {exc}"
    return None


def _outside_loading() -> int:
    """The ``stacklevel`` that makes a warning name the code that asked for the load: the first
    frame outside this module and ``fcenv.data`` (whose ``load_tasks`` adds one when it resolves a
    spec first), counted from the function that warns."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_globals.get("__name__") in (__name__, "fcenv.data"):
        frame, level = frame.f_back, level + 1
    return level


def _answerable(findings: list[answerable.Unanswerable], file: str, line: int | None, entry_id: str,
                problems: list[Problem]) -> bool:
    """False when a finding refuses the entry (added to ``problems``); the others are reported."""
    for finding in findings:
        problem = Problem(file, line, entry_id, finding.field, f"no answer can pass: {finding.message}")
        if finding.refused:
            problems.append(problem)
        else:
            warnings.warn(str(problem), DatasetWarning, stacklevel=_outside_loading())
    return not any(finding.refused for finding in findings)


def load_file(
    path: str | Path,
    *,
    answers: str | Path | None = None,
    func_doc_dir: str | Path | None = None,
) -> list[Task]:
    """Read, validate and join one question file; raise ``DatasetError`` listing every problem.
    ``fcenv.data.load_tasks`` also takes what resolves to such a file."""
    path = Path(path)
    file = str(path)
    if not path.exists():
        from fcenv.bundled import close_split_name

        meant = close_split_name(path)
        hint = f" (did you mean the bundled split {meant}?)" if meant else ""
        raise DatasetError([Problem(file, None, None, None, f"no such file{hint}")])
    records, problems, is_array = read_records(path)
    validators = _validators()
    file_category = (m.group("category") if (m := _FILE_CATEGORY.match(path.name)) else None)

    entries: list[tuple[_Record, str, dict[str, Any]]] = []
    answer_ids: dict[str, str] = {}  # an entry made from BFCL's agentic files -> the file's id, its answer's
    agentic_entries: dict[str, list] = {}  # per made category: BFCL's categories one after the other
    seen: dict[str, int] = {}
    for index, record in enumerate(records):
        value = record.value
        entry_id = value.get("id") if isinstance(value, dict) else None
        entry_id = entry_id if isinstance(entry_id, str) else None
        found = _schema_problems(validators["question"], value, file, record.line, entry_id)
        if is_array and isinstance(value, dict):
            if "ground_truth" not in value:
                found.append(Problem(file, record.line, entry_id, "ground_truth", "missing (the single-file format carries the answer in each entry)"))
            else:
                found += _schema_problems(validators["ground_truth"], value["ground_truth"], file, record.line, entry_id, "ground_truth")
        if found:
            problems += found
            continue
        if entry_id is None:
            if file_category is None:
                problems.append(Problem(file, record.line, None, "id", "missing, and the file name does not give the category"))
                continue
            entry_id = f"{file_category}_{index}"  # BFCL's chatable file has no ids
        if entry_id in seen:
            problems.append(Problem(file, record.line, entry_id, "id", f"duplicate id (first on line {seen[entry_id]})"))
            continue
        seen[entry_id] = record.line
        category = category_of(entry_id)
        made = _agentic_expansion(category, entry_id, value)
        if made is not None:
            for made_category, new_id, new_value in made:
                agentic_entries.setdefault(made_category, []).append((record, new_id, new_value))
                answer_ids[new_id] = entry_id if category in (MEMORY_FILE_CATEGORY, WEB_SEARCH_FILE_CATEGORY) else new_id
            continue
        unsupported = next((why for key, why in _UNSUPPORTED.items() if key in category), None)
        if unsupported:
            problems.append(Problem(file, record.line, entry_id, "id", f"category {category!r} is not supported: {unsupported}"))
            continue
        entries.append((record, entry_id, value))

    for made in agentic_entries.values():
        entries += made
    answer_map, answer_file = _load_answers(path, answers, entries, is_array, problems)
    for entry_id, answer_id in answer_ids.items():
        if answer_id in answer_map:
            answer_map[entry_id] = answer_map[answer_id]
    doc_dir = Path(func_doc_dir) if func_doc_dir else func_doc_dir_for(path)

    tasks = []
    for record, entry_id, value in entries:
        if entry_id in answer_ids and WEB_SEARCH_CLASS in value["involved_classes"]:
            task = _build_web_search_task(record, entry_id, answer_ids[entry_id], value, answer_map, answer_file,
                                          doc_dir, file, problems)
        elif entry_id in answer_ids:
            task = _build_memory_task(record, entry_id, answer_ids[entry_id], value, answer_map, answer_file, doc_dir,
                                      prerequisite_dir_for(path), file, problems)
        else:
            task = _build_task(record, entry_id, value, answer_map, answer_file, doc_dir, file, problems)
        if task is not None:
            tasks.append(task)
    if problems:
        raise DatasetError(sorted(problems, key=lambda p: (p.file != file, p.file, p.line or 0)))
    if not tasks:
        raise DatasetError([Problem(file, None, None, None, "the file holds no entries")])
    return tasks


def _agentic_expansion(category: str, entry_id: str, value: dict[str, Any]) -> list | None:
    """The entries BFCL makes of an entry of its memory or web-search file (an entry already of a
    web-search category is kept as it is); None for any other entry."""
    if category == MEMORY_FILE_CATEGORY:
        return expand_memory_entry(entry_id, value)
    if category == WEB_SEARCH_FILE_CATEGORY:
        return expand_web_search_entry(entry_id, value)
    if category in WEB_SEARCH_CATEGORIES:
        return [(category, entry_id, web_search_entry(entry_id, value))]
    return None


def _load_answers(path, answers, entries, is_array, problems) -> tuple[dict[str, tuple[int, Any]], str]:
    if is_array:
        return {eid: (rec.line, v["ground_truth"]) for rec, eid, v in entries}, str(path)
    from fcenv.tasks import kind_of

    needed = any(kind_of(category_of(eid)) in _NEEDS_ANSWER for _, eid, _ in entries)
    answer_path = Path(answers) if answers else answers_path_for(path)
    if answer_path is None:
        if needed:
            problems.append(Problem(str(path), None, None, None,
                                    f"no answers found: expected possible_answer/{path.name} beside the file or one folder up"))
        return {}, ""
    records, found, _ = read_records(answer_path)
    problems += found
    out = {}
    for record in records:
        entry_id = record.value.get("id") if isinstance(record.value, dict) else None
        issues = _schema_problems(_validators()["answer"], record.value, str(answer_path), record.line, entry_id)
        if issues:
            problems += issues
            continue
        out[entry_id] = (record.line, record.value["ground_truth"])
    return out, str(answer_path)


def _build_memory_task(record, entry_id, answer_id, value, answer_map, answer_file, doc_dir, prerequisite_dir, file,
                       problems) -> Task | None:
    """One memory category's entry made from an entry of BFCL's memory file (``fcenv.agentic.loading``)."""
    (cls,) = value["involved_classes"]
    scenario = value.get("scenario")
    question = _turns(value["question"])
    ground_truth = _agentic_answer(answer_id, answer_map, answer_file, file, problems)
    if ground_truth is None:
        return None
    if len(question) != 1:
        problems.append(Problem(file, record.line, answer_id, "question",
                                f"a memory question has one turn, not {len(question)} (BFCL's runner fails any other)"))
        return None
    if not known_scenario(scenario):
        problems.append(Problem(file, record.line, answer_id, "scenario",
                                f"{scenario!r} is none of BFCL's memory scenarios"))
        return None
    if doc_dir is None or prerequisite_dir is None:
        missing = "multi_turn_func_doc/" if doc_dir is None else f"{PREREQUISITE_FOLDER}/"
        problems.append(Problem(file, record.line, answer_id, "id",
                                f"{missing} not found beside the file; run `python -m fcenv data bfcl`"))
        return None
    functions = copy.deepcopy(_func_docs(str(doc_dir)).get(cls, []))
    if not functions:
        problems.append(Problem(file, record.line, answer_id, "id",
                                f"no function docs for {cls} in {doc_dir} ({FUNC_DOC_FILES[cls]})"))
        return None
    try:
        chain = prerequisites(prerequisite_dir, cls.split("_", 1)[1], scenario)
    except PrerequisiteError as exc:
        problems.append(Problem(file, record.line, answer_id, "scenario", str(exc)))
        return None
    return Task(id=entry_id, question=question, functions=functions, ground_truth=ground_truth,
                initial_config=value["initial_config"], involved_classes=[cls], prerequisites=chain, source=file,
                line=record.line, declared_kind="agentic")


def _agentic_answer(answer_id, answer_map, answer_file, file, problems) -> list[str] | None:
    """An agentic entry's answer: a non-empty list of acceptable answer strings."""
    if answer_id not in answer_map:
        problems.append(Problem(answer_file or file, None, answer_id, "ground_truth", "no answer for this id"))
        return None
    answer_line, ground_truth = answer_map[answer_id]
    if not (isinstance(ground_truth, list) and ground_truth and all(isinstance(a, str) for a in ground_truth)):
        problems.append(Problem(answer_file, answer_line, answer_id, "ground_truth",
                                "an agentic answer must be a non-empty list of acceptable answer strings"))
        return None
    return list(ground_truth)


def _build_web_search_task(record, entry_id, answer_id, value, answer_map, answer_file, doc_dir, file,
                           problems) -> Task | None:
    """One web-search category's entry (``fcenv.agentic.loading``); its episodes need a search
    source (``fcenv.search``), which the env is given, not the file."""
    ground_truth = _agentic_answer(answer_id, answer_map, answer_file, file, problems)
    if ground_truth is None:
        return None
    question = _turns(value["question"])
    if len(question) != 1:
        problems.append(Problem(file, record.line, answer_id, "question",
                                f"a web-search question has one turn, not {len(question)} (BFCL's runner fails any other)"))
        return None
    functions = copy.deepcopy(_func_docs(str(doc_dir)).get(WEB_SEARCH_CLASS, [])) if doc_dir is not None else []
    if not functions:
        where = f"{FUNC_DOC_FILES[WEB_SEARCH_CLASS]} in {doc_dir}" if doc_dir else "multi_turn_func_doc/ beside the file"
        problems.append(Problem(file, record.line, answer_id, "id",
                                f"no function docs for {WEB_SEARCH_CLASS} ({where}); run `python -m fcenv data bfcl`"))
        return None
    return Task(id=entry_id, question=question, functions=functions, ground_truth=ground_truth,
                initial_config=value["initial_config"], involved_classes=[WEB_SEARCH_CLASS], source=file,
                line=record.line, declared_kind="agentic")


def _build_task(record, entry_id, value, answer_map, answer_file, doc_dir, file, problems) -> Task | None:
    from fcenv.tasks import kind_of

    category = category_of(entry_id)
    question = _turns(value["question"])
    if not question or not question[0]:
        problems.append(Problem(file, record.line, entry_id, "question", "the first turn holds no message"))
        return None
    # A multi-turn entry is known by its data (the classes it runs on), whatever its id says.
    multi_turn_data = "involved_classes" in value or "invoked_classes" in value
    kind = "multi_turn" if multi_turn_data else kind_of(category)
    functions = copy.deepcopy(value.get("function") or [])
    ground_truth = answer_map.get(entry_id, (None, None))[1]
    if kind in _NEEDS_ANSWER and entry_id not in answer_map:
        problems.append(Problem(answer_file or file, None, entry_id, "ground_truth", "no answer for this id"))
        return None

    involved = value.get("involved_classes", value.get("invoked_classes", []))
    missed: dict[int, list[dict[str, Any]]] = {}
    if kind == "multi_turn":
        answer_line = answer_map[entry_id][0]
        if not isinstance(ground_truth, list) or not all(isinstance(t, list) for t in ground_truth):
            problems.append(Problem(answer_file, answer_line, entry_id, "ground_truth", "a multi-turn answer must be one list of call strings per turn"))
            return None
        turns = len(question)
        if len(ground_truth) != turns:
            problems.append(Problem(answer_file, answer_line, entry_id, "ground_truth",
                                    f"{len(ground_truth)} turns of answers for {turns} turns of question "
                                    f"(each turn is judged against its own answer)"))
            return None
        unreadable = _unreadable_call(ground_truth)
        if unreadable:
            problems.append(Problem(answer_file, answer_line, entry_id, *unreadable))
            return None
        known = known_backends()
        unknown = [c for c in involved if c not in known]
        if unknown:
            problems.append(Problem(file, record.line, entry_id, "involved_classes",
                                    f"unknown classes {unknown}; known: {known} (register your own with "
                                    f"fcenv.backends.register_backend)"))
            return None
        config = value.get("initial_config", {})
        not_dicts = [c for c in involved if not isinstance(config.get(c, {}), dict)]
        if not_dicts:
            problems.append(Problem(file, record.line, entry_id, f"initial_config.{not_dicts[0]}", "must be an object (the class's scenario)"))
            return None
        unusable = _unusable_scenario(involved, config, "long_context" in category or "composite" in category)
        if unusable:
            problems.append(Problem(file, record.line, entry_id, *unusable))
            return None
        if not functions:  # the docs of each class: a registered backend's own, else BFCL's files
            builtin = [c for c in involved if user_backend(c) is None]
            if builtin and doc_dir is None:
                problems.append(Problem(file, record.line, entry_id, "involved_classes", "multi_turn_func_doc/ not found beside the file; run `python -m fcenv data bfcl`"))
                return None
            docs = _func_docs(str(doc_dir)) if builtin else {}
            for cls in involved:
                user = user_backend(cls)
                functions += copy.deepcopy(user.docs if user is not None else docs.get(cls, []))
        for turn, names in (value.get("missed_function") or {}).items():
            held = [f for f in functions if f["name"] in names]
            absent = sorted(set(names) - {f["name"] for f in held})
            if absent:  # BFCL drops such names too (two retired composite entries have one)
                warnings.warn(str(Problem(file, record.line, entry_id, f"missed_function.{turn}",
                                          f"functions {absent} are not among the involved classes' functions; ignored")),
                              DatasetWarning)
            functions = [f for f in functions if f["name"] not in names]
            missed[int(turn)] = held
        if not _answerable(answerable.multi_turn(involved, ground_truth), answer_file, answer_line, entry_id, problems):
            return None
    elif kind == "ast" and not functions:
        problems.append(Problem(file, record.line, entry_id, "function",
                                "missing or empty: an entry answered with calls must list the functions it may call"))
        return None
    elif category.startswith("exec_") and ground_truth is not None:
        try:
            ground_truth = _exec_answer(ground_truth, functions)
        except Exception as exc:
            problems.append(Problem(answer_file, answer_map[entry_id][0], entry_id, "ground_truth", f"cannot read the call strings: {exc}"))
            return None
    elif kind == "ast" and not (isinstance(ground_truth, list) and all(isinstance(c, dict) for c in ground_truth)):
        problems.append(Problem(answer_file, answer_map[entry_id][0], entry_id, "ground_truth", "a single-turn answer must be a list of {function: {parameter: [values]}}"))
        return None
    if kind == "ast" and not _answerable(answerable.single_turn(category, functions, ground_truth), answer_file,
                                         answer_map[entry_id][0], entry_id, problems):
        return None

    return Task(
        id=entry_id,
        question=question,
        functions=functions,
        ground_truth=ground_truth,
        initial_config=value.get("initial_config", {}),
        involved_classes=list(involved),
        missed_functions=missed,
        source=file,
        line=record.line,
        declared_kind=kind,
    )
