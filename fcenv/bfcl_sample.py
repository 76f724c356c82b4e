"""A fixed sample of BFCL's entries, written in BFCL's layout (question files, and their possible
answers in ``possible_answer/``), so that every command that takes a question file takes it
(``fcenv sample`` writes one; ``fcenv card`` answers and scores one).

The sample of a category is ``k`` entries spread evenly over its file: positions
``i * n // k`` for ``i < k`` (all ``n`` entries when ``n <= k``). BFCL's memory file is sampled
per scenario instead (``k`` questions spread over each scenario's), so that every scenario and
its prerequisite conversations are in it; each question makes an entry of each of the three
memory categories. The format-sensitivity set is a list of ids; its sample is ``k`` of them spread
over the list. A sample depends on nothing but the files, so the same command names the
same entries on every machine.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

SINGLE_TURN = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
               "irrelevance", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
               "live_irrelevance", "live_relevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
MEMORY = "memory"  # BFCL's memory file: its questions make the entries of memory_kv, memory_vector, memory_rec_sum
MEMORY_CATEGORIES = ("memory_kv", "memory_vector", "memory_rec_sum")
SENSITIVITY_FILE = "BFCL_v4_format_sensitivity.json"  # BFCL's format-sensitivity set: category -> entry ids
# The fixed held-out sample of RL on a real model (docs/benchmarks/real-model.md): BFCL's Python single-turn
# categories, HELDOUT_K entries of each (all of the smaller live ones): 304 entries.
HELDOUT = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_simple", "live_multiple",
           "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance")
HELDOUT_K = 31
# The fixed multi-turn held-out sample (multi-turn training on a real model): MULTI_TURN_K entries
# of each of BFCL's four multi-turn categories, spread over each file: 40 entries.
MULTI_TURN_K = 10
# What a card samples unless told: the categories scored offline with nothing but BFCL's files
# (memory's vector entries need a sentence encoder, web search a snapshot of the web).
CARD_CATEGORIES = SINGLE_TURN + MULTI_TURN
CARD_K = 10
SAMPLED = CARD_CATEGORIES + (MEMORY,)  # the question files a sample is drawn from
# Folders the loader looks for beside a question file (multi-turn function docs, memory's
# prerequisite conversations), linked beside a sample drawn from a BFCL folder of one's own.
SHARED_FOLDERS = ("multi_turn_func_doc", "memory_prereq_conversation")


def spread(count: int, k: int) -> list[int]:
    """``k`` positions spread evenly over ``count`` (all of them when there are no more)."""
    return list(range(count)) if count <= k else [i * count // k for i in range(k)]


def sampled_lines(bfcl_dir: Path, category: str, k: int) -> tuple[list[str], list[str] | None]:
    """The sample of ``category``: its question lines and their possible-answer lines (None
    where the category has no answer file)."""
    name = f"BFCL_v4_{category}.json"
    lines = [line for line in (Path(bfcl_dir) / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    if category == MEMORY:
        keep = [line for scenario in _by_scenario(lines).values() for line in (scenario[i] for i in spread(len(scenario), k))]
    else:
        keep = [lines[i] for i in spread(len(lines), k)]
    answer_file = Path(bfcl_dir) / "possible_answer" / name
    if not answer_file.exists():
        return keep, None
    wanted = {_id(line) for line in keep}
    return keep, [line for line in answer_file.read_text(encoding="utf-8").splitlines()
                  if line.strip() and _id(line) in wanted]


def _by_scenario(lines: list[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for line in lines:
        groups.setdefault(json.loads(line)["scenario"], []).append(line)
    return groups


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def write_sample(bfcl_dir: Path, category: str, k: int, out: Path) -> Path:
    """The sample of ``category`` as ``out/BFCL_v4_<category>.json`` (its answers beside it, where
    the category has them); returns the question file."""
    name = f"BFCL_v4_{category}.json"
    questions, answers = sampled_lines(bfcl_dir, category, k)
    out.mkdir(parents=True, exist_ok=True)
    _write_lines(out / name, questions)
    if answers is not None:
        (out / "possible_answer").mkdir(exist_ok=True)
        _write_lines(out / "possible_answer" / name, answers)
    return out / name


def write_sensitivity_sample(bfcl_dir: Path, k: int, out: Path) -> Path:
    """``k`` entries of BFCL's format-sensitivity set, spread evenly over its id list (which goes
    category by category), as ``out/BFCL_v4_format_sensitivity.json`` in the set's format, with
    links to the category files and their answers beside it, where the set's loader looks."""
    kept = sensitivity_ids(bfcl_dir, k)
    out.mkdir(parents=True, exist_ok=True)
    for name in [f"BFCL_v4_{category}.json" for category, ids in kept.items() if ids] + ["possible_answer"]:
        if not (out / name).exists():
            (out / name).symlink_to((Path(bfcl_dir) / name).resolve())
    (out / SENSITIVITY_FILE).write_text(json.dumps(kept, indent=4) + "\n", encoding="utf-8")
    return out / SENSITIVITY_FILE


def sensitivity_ids(bfcl_dir: Path, k: int) -> dict[str, list[str]]:
    """The sample of the format-sensitivity set: ``k`` of its ids spread evenly over its list,
    by category (every category of the set, empty where none is kept)."""
    listed = json.loads((Path(bfcl_dir) / SENSITIVITY_FILE).read_text(encoding="utf-8"))
    flat = [(category, entry) for category, ids in listed.items() for entry in ids]
    kept: dict[str, list[str]] = {category: [] for category in listed}
    for i in spread(len(flat), k):
        kept[flat[i][0]].append(flat[i][1])
    return kept


def write_sensitivity_entries(bfcl_dir: Path, k: int, out_file: Path) -> Path:
    """The entries of the format-sensitivity sample (``write_sensitivity_sample``'s) as one plain
    question file, their answers in ``possible_answer/`` beside it: what a client that asks
    each prompt variation itself (``bench/heldout.py --prompt_variations``) plays."""
    questions, answers = [], []
    for category, ids in sensitivity_ids(bfcl_dir, k).items():
        wanted = set(ids)
        name = f"BFCL_v4_{category}.json"
        for folder, kept in ((Path(bfcl_dir), questions), (Path(bfcl_dir) / "possible_answer", answers)):
            kept += [line for line in (folder / name).read_text(encoding="utf-8").splitlines()
                     if line.strip() and _id(line) in wanted]
    out_file = Path(out_file)
    (out_file.parent / "possible_answer").mkdir(parents=True, exist_ok=True)
    _write_lines(out_file, questions)
    _write_lines(out_file.parent / "possible_answer" / out_file.name, answers)
    return out_file


def mixed_sample_lines(bfcl_dir: Path, categories: Collection[str], k: int) -> tuple[list[str], list[str]]:
    """The samples of several categories (``k`` each, as ``write_sample``): their question lines
    and their possible-answer lines, category after category."""
    questions, answers = [], []
    for category in categories:
        kept, kept_answers = sampled_lines(bfcl_dir, category, k)
        questions += kept
        answers += kept_answers or []
    return questions, answers


def write_mixed_sample(bfcl_dir: Path, categories: Collection[str], k: int, out_file: Path) -> Path:
    """The samples of several categories (``k`` each, as ``write_sample``) in one question file
    ``out_file``, their answers in ``possible_answer/<its name>`` beside it: one file that every
    command takes, scored per category by the entries' ids."""
    return write_sample_lines(out_file, *mixed_sample_lines(bfcl_dir, categories, k))


def write_sample_lines(out_file: Path, questions: list[str], answers: list[str]) -> Path:
    """A sample's question lines as ``out_file``, its answer lines as ``possible_answer/<its name>``."""
    out_file = Path(out_file)
    (out_file.parent / "possible_answer").mkdir(parents=True, exist_ok=True)
    _write_lines(out_file, questions)
    _write_lines(out_file.parent / "possible_answer" / out_file.name, answers)
    return out_file


def holds_sample(out_file: Path, questions: list[str], answers: list[str]) -> bool:
    """Whether ``out_file`` and its answers beside it hold exactly these lines
    (``mixed_sample_lines``'): a command run again reuses the sample untouched."""
    out_file = Path(out_file)
    answer_file = out_file.parent / "possible_answer" / out_file.name
    return (out_file.is_file() and answer_file.is_file()
            and out_file.read_text(encoding="utf-8") == "".join(line + "\n" for line in questions)
            and answer_file.read_text(encoding="utf-8") == "".join(line + "\n" for line in answers))


def sample_ids(questions: list[str]) -> list[str]:
    """The entry ids of a sample's question lines, in order."""
    return [_id(line) for line in questions]


def link_shared_folders(bfcl_dir: Path, categories: Collection[str], folder: Path) -> None:
    """Links in ``folder`` to the folders of ``bfcl_dir`` that a sample's multi-turn and memory
    entries read (the loader looks beside the question file before the default data folder),
    so a sample drawn from a BFCL folder of one's own plays with that folder's files. A link
    that points elsewhere is pointed here; a real folder of that name is left alone."""
    if set(categories) <= set(SINGLE_TURN):  # nothing to play on the tool backends
        return
    for name in SHARED_FOLDERS:
        source, link = (Path(bfcl_dir) / name).resolve(), Path(folder) / name
        if not source.is_dir() or (link.exists() and not link.is_symlink()):
            continue
        if link.is_symlink():
            if link.resolve() == source:
                continue
            link.unlink()
        link.symlink_to(source)


def category_problem(category: str) -> str | None:
    """Why a sample cannot be drawn from ``category`` (what to ask instead), or None."""
    if category in SAMPLED:
        return None
    if category in MEMORY_CATEGORIES:
        return f"ask '{MEMORY}', whose questions make the entries of {', '.join(MEMORY_CATEGORIES)}"
    if category == "web_search":
        return ("its tools search the live web, which fcenv has not (answer it with `fcenv generate --web_search "
                "SNAPSHOT`)")
    if category == "format_sensitivity":
        return f"answer BFCL's set with `fcenv generate --dataset_path {SENSITIVITY_FILE}`"
    return f"not one of BFCL's categories here; known: {', '.join(SAMPLED)}"


def category_problems(categories: Collection[str], flag: str = "--categories") -> list[str]:
    """A line for each category a sample cannot be drawn from, naming the flag."""
    return [f"{flag} {category}: {why}" for category in dict.fromkeys(categories)
            if (why := category_problem(category))]


def bfcl_dir_problems(bfcl_dir: Path, categories: Collection[str], flag: str = "--bfcl_dir") -> list[str]:
    """A line when ``bfcl_dir`` lacks the question files of ``categories`` (or is no folder),
    naming the command that writes them."""
    from fcenv.bfcl_data import DEFAULT_DIR

    dest = "" if Path(bfcl_dir) == DEFAULT_DIR else f" --dest {bfcl_dir}"
    fetch = f"`fcenv data bfcl{dest}` writes BFCL's data there"
    if not Path(bfcl_dir).is_dir():
        return [f"{flag} {bfcl_dir}: no such folder; {fetch}"]
    missing = [f"BFCL_v4_{c}.json" for c in dict.fromkeys(categories)
               if c in SAMPLED and not (Path(bfcl_dir) / f"BFCL_v4_{c}.json").is_file()]
    if missing:
        return [f"{flag} {bfcl_dir}: no {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''} "
                f"(BFCL's question files); {fetch}"]
    return []


def _id(line: str) -> str:
    return json.loads(line)["id"]
