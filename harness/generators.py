"""Deterministic model-output texts for BFCL's single-turn categories, right and wrong.

``generate(bfcl_dir, seed, per_entry)`` walks every single-turn category and, for each entry,
renders its possible answer as a model would write it (Python, Java or JavaScript syntax),
then mutates it: wrong names, missing/extra arguments, type swaps, values BFCL normalises
away and values it does not, reordered calls/kwargs/lists, dict key changes, call count
changes, formatting variants (no brackets, fences, whitespace, prose, positional args,
dotted vs underscored names). Relevance categories get calls, prose and empty answers.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcenv.tasks import Task

AST_CATEGORIES = (
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
)
RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")


@dataclass
class Sample:
    task: Task
    text: str
    mutation: str


def load_category(bfcl_dir: Path, category: str) -> list[Task]:
    answers = {}
    answer_file = Path(bfcl_dir) / "possible_answer" / f"BFCL_v4_{category}.json"
    if answer_file.exists():
        for line in answer_file.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                answers[entry["id"]] = entry["ground_truth"]
    tasks = []
    for line in (Path(bfcl_dir) / f"BFCL_v4_{category}.json").read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            tasks.append(Task(entry["id"], entry["question"], entry["function"], answers.get(entry["id"])))
    return tasks


# ---- choosing argument values from a possible answer -------------------------------------


def pick(acceptable: list, rng: random.Random, omit: bool) -> Any:
    """One acceptable value; ``_OMIT`` when "" is allowed and ``omit`` says so."""
    choices = [v for v in acceptable if v != ""]
    if not choices or ("" in acceptable and omit):
        return _OMIT
    value = rng.choice(choices)
    if isinstance(value, dict):
        return pick_dict(value, rng, omit)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [pick_dict(v, rng, omit) for v in value]
    return value


def pick_dict(answer: dict, rng: random.Random, omit: bool) -> dict:
    out = {}
    for key, acceptable in answer.items():
        value = pick(acceptable, rng, omit) if isinstance(acceptable, list) else acceptable
        if value is not _OMIT:
            out[key] = value
    return out


class _Omit:
    pass


_OMIT = _Omit()


def answer_calls(task: Task, rng: random.Random, omit: bool) -> list[tuple[str, dict]]:
    calls = []
    for call in task.ground_truth or []:
        name, params = next(iter(call.items()))
        args = {}
        for param, acceptable in params.items():
            value = pick(acceptable, rng, omit) if isinstance(acceptable, list) else _OMIT
            if value is not _OMIT:
                args[param] = value
        calls.append((name, args))
    return calls


# ---- rendering ----------------------------------------------------------------------------


def render_python(calls: list[tuple[str, dict]], positional: bool = False) -> str:
    parts = []
    for name, args in calls:
        rendered = [repr(v) if positional and i == 0 else f"{k}={v!r}" for i, (k, v) in enumerate(args.items())]
        parts.append(f"{name}({', '.join(rendered)})")
    return "[" + ", ".join(parts) + "]"


def _doc_types(task: Task, name: str) -> dict:
    for doc in task.functions:
        if doc["name"] == name:
            return doc["parameters"].get("properties", {})
    return {}


_JAVA_ELEMENT = {"integer": "int", "long": "long", "String": "String", "char": "char", "any": "Object",
                 "double": "double", "float": "float", "boolean": "boolean"}


def java_literal(value: Any, declared: str, items: str | None = None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if declared == "long" and isinstance(value, int):
        return f"{value}L"
    if declared == "float" and isinstance(value, (int, float)):
        return f"{value}f"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        if declared in ("any",) or (declared not in ("String", "char") and not value.isdigit()):
            return value  # identifiers and expressions are written raw
        if declared == "char":
            return f"'{value[:1]}'"
        return json.dumps(value)
    if isinstance(value, list):
        els = ", ".join(java_literal(v, items or "any") for v in value)
        if declared == "Array":
            return f"new {_JAVA_ELEMENT.get(items or 'any', 'Object')}[]{{{els}}}"
        return f"new ArrayList<>(Arrays.asList({els}))"
    if isinstance(value, dict):
        puts = " ".join(f"put({json.dumps(k)}, {java_literal(v, 'any')});" for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return str(value)


def js_literal(value: Any, declared: str, items: str | None = None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if declared == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value if declared == "any" else json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(js_literal(v, items or "String") for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {js_literal(v, 'String')}" for k, v in value.items()) + "}"
    return str(value)


def render(task: Task, calls: list[tuple[str, dict]], rng: random.Random) -> str:
    if task.language == "python":
        return render_python(calls)
    literal = java_literal if task.language == "java" else js_literal
    parts = []
    for name, args in calls:
        props = _doc_types(task, name)
        rendered = []
        for k, v in args.items():
            details = props.get(k, {})
            items = details.get("items", {}).get("type") if isinstance(details.get("items"), dict) else None
            rendered.append(f"{k}={literal(v, details.get('type', 'any'), items)}")
        parts.append(f"{name}({', '.join(rendered)})")
    text = ", ".join(parts)
    if task.language == "java" and rng.random() < 0.8:
        text += ";"  # BFCL's Java grammar wants a statement for a bare call
    return text


# ---- mutations ----------------------------------------------------------------------------


def _swap_type(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return rng.choice([int(value), str(value).lower(), not value])
    if isinstance(value, int):
        return rng.choice([float(value), str(value), value + 1, bool(value % 2)])
    if isinstance(value, float):
        return rng.choice([int(value), str(value), value + 0.5])
    if isinstance(value, str):
        return rng.choice([len(value), [value], value.upper(), value.replace(" ", "-"), value + "!", value + " x", ""])
    if isinstance(value, list):
        if value and rng.random() < 0.4:
            return [_swap_type(value[0], rng)] + value[1:]
        return rng.choice([tuple(value), list(reversed(value)), value[:-1], value + value[:1], str(value)])
    if isinstance(value, dict):
        keys = list(value)
        if keys and rng.random() < 0.5:
            k = rng.choice(keys)
            changed = dict(value)
            changed[k + "_x" if rng.random() < 0.5 else k] = _swap_type(changed.pop(k), rng)
            return changed
        return rng.choice([{**value, "extra": 1}, dict(list(value.items())[1:]), list(value.values())])
    return rng.choice([1, "x", None])


def _string_variant(value: str, rng: random.Random) -> str:
    return rng.choice([value.lower(), value.upper(), value.title(), value.replace(" ", ""), value + ".",
                       value.replace(" ", "_"), value.replace("-", " "), f"{value}?", value.replace("'", '"'),
                       " " + value, value[:-1] if value else "x"])


def mutate(task: Task, calls: list[tuple[str, dict]], rng: random.Random) -> tuple[str, list[tuple[str, dict]]]:
    calls = [(n, dict(a)) for n, a in calls]
    names = [doc["name"] for doc in task.functions]
    kind = rng.choice(["name", "drop", "extra", "type", "value", "string", "order", "count", "kwargs", "schema_extra"])
    if not calls:
        return "count", [(rng.choice(names), {})]
    i = rng.randrange(len(calls))
    name, args = calls[i]
    if kind == "name":
        others = [n for n in names if n != name]
        new = rng.choice(others + [name + "_v2", name.replace(".", "_"), name.split(".")[-1], name.upper()])
        calls[i] = (new, args)
    elif kind == "drop" and args:
        args.pop(rng.choice(list(args)))
    elif kind == "extra":
        args[rng.choice(["unit", "extra", "verbose", "x"])] = rng.choice([1, "a", True, [1]])
    elif kind == "schema_extra":
        props = _doc_types(task, name)
        missing = [p for p in props if p not in args]
        if missing:
            p = rng.choice(missing)
            args[p] = {"integer": 3, "float": 2.5, "boolean": True, "string": "x"}.get(props[p].get("type"), "x")
    elif kind in ("type", "value", "string") and args:
        k = rng.choice(list(args))
        if kind == "string" and isinstance(args[k], str):
            args[k] = _string_variant(args[k], rng)
        elif kind == "value" and isinstance(args[k], (int, float)) and not isinstance(args[k], bool):
            args[k] = args[k] + rng.choice([1, -1, 10])
        else:
            args[k] = _swap_type(args[k], rng)
    elif kind == "order":
        rng.shuffle(calls)
    elif kind == "count":
        if rng.random() < 0.5 or len(calls) == 1:
            calls.append(calls[rng.randrange(len(calls))])
        else:
            calls.pop(rng.randrange(len(calls)))
    elif kind == "kwargs":
        items = list(args.items())
        rng.shuffle(items)
        calls[i] = (name, dict(items))
    return kind, calls


_PROSE = ["I cannot help with that.", "None of the functions can be used here.", "Sure!", "",
          "The question lacks the required parameters.", "[]", "```\n```", "Let me think... no call needed."]


def reformat(text: str, language: str, rng: random.Random) -> tuple[str, str]:
    """Formatting variants BFCL's decoder accepts or rejects."""
    inner = text[1:-1] if language == "python" and text.startswith("[") else text
    variant = rng.choice(["plain", "nobrackets", "fence", "pyfence", "spaces", "newlines", "prose", "suffix", "quote"])
    if variant == "nobrackets":
        return variant, inner
    if variant == "fence":
        return variant, f"```\n{text}\n```"
    if variant == "pyfence":
        return variant, f"```python\n{text}\n```"
    if variant == "spaces":
        return variant, f"  {text} \n"
    if variant == "newlines":
        return variant, text.replace(", ", ",\n")
    if variant == "prose":
        return variant, f"Sure! {text}"
    if variant == "suffix":
        return variant, f"{text} Done."
    if variant == "quote":
        return variant, text.replace("'", '"') if rng.random() < 0.5 else text.replace('"', "'")
    return variant, text


def generate_for_task(task: Task, rng: random.Random, per_entry: int) -> list[Sample]:
    samples = []
    if task.kind in ("relevance", "irrelevance"):
        for _ in range(per_entry):
            roll = rng.random()
            if roll < 0.4 and task.functions:
                doc = rng.choice(task.functions)
                props = list(doc["parameters"].get("properties", {}))
                args = {p: rng.choice([1, "x", 2.5, True]) for p in props[: rng.randint(0, 2)]}
                text = render_python([(doc["name"], args)])
                variant, text = reformat(text, "python", rng)
                samples.append(Sample(task, text, f"call/{variant}"))
            elif roll < 0.8:
                samples.append(Sample(task, rng.choice(_PROSE), "prose"))
            else:
                samples.append(Sample(task, rng.choice(["[f(", "[1, 2]", "[{}]", "f()", "x = 1", "[f(a=1), 2]"]), "odd"))
        return samples
    for k in range(per_entry):
        calls = answer_calls(task, rng, omit=rng.random() < 0.5)
        if k == 0:
            samples.append(Sample(task, render(task, calls, rng), "correct"))
            continue
        roll = rng.random()
        if roll < 0.25:
            text = render(task, calls, rng)
            label = "correct"
        elif roll < 0.4 and task.language == "python":
            text = render_python(calls, positional=True)
            label = "positional"
        else:
            label, mutated = mutate(task, calls, rng)
            text = render(task, mutated, rng)
        if task.language == "python" and rng.random() < 0.35:
            variant, text = reformat(text, "python", rng)
            label += f"/{variant}"
        samples.append(Sample(task, text, label))
    return samples


def generate(bfcl_dir: Path, seed: int = 0, per_entry: int = 4, categories: tuple[str, ...] | None = None,
             max_entries: int | None = None) -> list[Sample]:
    rng = random.Random(seed)
    samples = []
    for category in categories or AST_CATEGORIES + RELEVANCE_CATEGORIES:
        tasks = load_category(bfcl_dir, category)
        if max_entries is not None and len(tasks) > max_entries:
            tasks = random.Random(f"{seed}-{category}").sample(tasks, max_entries)
        for task in tasks:
            samples.extend(generate_for_task(task, rng, per_entry))
    return samples
