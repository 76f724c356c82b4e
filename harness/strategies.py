"""Grammar-aware hypothesis strategies: model text that is almost right, and hostile text.

Most inputs start from BFCL's own data, a possible answer or a function doc rendered in the
syntax the decoder expects (Python, Java, JavaScript, JSON, ``<tool_call>`` blocks, or a
multi-turn step built from the backends' docs and the entry's initial config). Then near
misses: a dropped or extra bracket, quote, comma or parenthesis, a cut at any point, a
duplicated span, positional arguments, nested calls, operators, huge numbers, odd Unicode,
code fences, prose around, injection attempts (``__import__``, dunder walks, refused names).
Plain random text and bytes read as text fill the rest, so the decoders also meet
characters no grammar would produce. The vocabulary and ``Choices`` are in harness/fuzz_text.py.

Generators are plain functions ``gen(r, fuzz, ...)`` taking a ``Choices``;
``Fuzz.strategy(gen, ...)`` makes one a hypothesis strategy, built once. ``fuzz_for(bfcl_dir)``
gives the tests and ``bench/bench_fuzz.py`` the same strategies. Multi-turn steps and episodes
are in harness/strategies_multi_turn.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from fcenv.data import load_tasks
from fcenv.tasks import Task
from fcenv.handlers.base import Call, DecodeError
from harness.fuzz_text import (
    HOSTILE_NAMES,
    INJECTIONS,
    JAVA_VALUES,
    JS_VALUES,
    OPERATORS,
    PROSE,
    PY_EXPRESSIONS,
    Choices,
    Draw,
    T,
    json_value,
    near_miss,
    py_object,
    random_text,
    some_edits,
    wrapped,
)
from harness.generators import java_literal, js_literal

AST_CATEGORIES = {
    "python": ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
               "live_parallel", "live_parallel_multiple"),
    "java": ("simple_java",),
    "javascript": ("simple_javascript",),
}
RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")
MULTI_TURN_CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
# The kinds of text model_text mixes, Python (BFCL's format) the most.
_KINDS = ["python"] * 4 + ["java", "javascript", "json", "json", "tool_call", "tool_call", "prose", "random"]


# --------------------------------------------------------------------------- the corpus


@dataclass(frozen=True, eq=False, repr=False)
class Corpus:
    """What the strategies draw names, values and tasks from."""

    ast_tasks: dict[str, tuple[Task, ...]]  # language -> AST tasks with answers
    relevance_tasks: tuple[Task, ...]
    multi_turn_tasks: tuple[Task, ...]
    names: tuple[str, ...]  # every function name in the single-turn docs
    params: tuple[str, ...]
    strings: tuple[str, ...]  # short strings from the possible answers
    scenario_strings: dict[str, tuple[str, ...]]  # multi-turn task id -> strings in its initial config
    scenario_numbers: dict[str, tuple[Any, ...]]

    def __repr__(self) -> str:  # hypothesis prints strategies' arguments; the data is large
        return f"Corpus({len(self.names)} names)"


def _collect(value: Any, strings: set, numbers: set, limit: int = 400) -> None:
    stack = [value]
    while stack and len(strings) < limit:
        item = stack.pop()
        if isinstance(item, dict):
            strings.update(k for k in item if isinstance(k, str) and len(k) <= 60)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, str) and len(item) <= 60:
            strings.add(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            numbers.add(item)


def load_corpus(bfcl_dir: str | Path) -> Corpus:
    folder = Path(bfcl_dir)
    ast_tasks = {lang: tuple(t for c in cats for t in load_tasks(folder / f"BFCL_v4_{c}.json"))
                 for lang, cats in AST_CATEGORIES.items()}
    relevance = tuple(t for c in RELEVANCE_CATEGORIES for t in load_tasks(folder / f"BFCL_v4_{c}.json"))
    multi = tuple(t for c in MULTI_TURN_CATEGORIES for t in load_tasks(folder / f"BFCL_v4_{c}.json"))
    names, params, strings = set(), set(), set()
    for task in (t for tasks in ast_tasks.values() for t in tasks):
        for doc in task.functions:
            names.add(doc["name"])
            params.update(doc.get("parameters", {}).get("properties", {}))
        _collect(task.ground_truth, strings, set(), limit=len(strings) + 5)
    scenario_strings, scenario_numbers = {}, {}
    for task in multi:
        found, numbers = set(), set()
        _collect(task.initial_config, found, numbers)
        scenario_strings[task.id] = tuple(sorted(found)) or ("a",)
        scenario_numbers[task.id] = tuple(sorted(numbers, key=repr)[:100]) or (0,)
    return Corpus(ast_tasks, relevance, multi, tuple(sorted(names)), tuple(sorted(params)),
                  tuple(sorted(strings, key=repr)), scenario_strings, scenario_numbers)


# --------------------------------------------------------------------------- strategies


class Fuzz:
    """The strategies over one corpus; each built once."""

    def __init__(self, corpus: Corpus):
        self.corpus = corpus
        self.text_kinds = st.sampled_from(_KINDS)
        self._cache: dict[tuple, st.SearchStrategy[Any]] = {}

    def __repr__(self) -> str:
        return f"Fuzz({self.corpus!r})"

    def tasks(self, group: str) -> st.SearchStrategy[Task]:
        """Tasks for hypothesis to choose among: the AST tasks of a language, or "relevance",
        "single_turn" (all of those) or "multi_turn"."""
        key = ("tasks", group)
        if key not in self._cache:
            c = self.corpus
            single = tuple(t for tasks in c.ast_tasks.values() for t in tasks) + c.relevance_tasks
            groups = {**c.ast_tasks, "relevance": c.relevance_tasks, "single_turn": single,
                      "multi_turn": c.multi_turn_tasks}
            self._cache[key] = st.sampled_from(groups[group])
        return self._cache[key]

    def strategy(self, generator: Callable[..., T], *args: Any) -> st.SearchStrategy[T]:
        """``generator(r, self, *args)`` as a strategy (tasks in ``args`` are keyed by id)."""
        key = (generator, *(a.id if isinstance(a, Task) else a for a in args))
        if key not in self._cache:
            self._cache[key] = _generated(generator, self, *args)
        return self._cache[key]


@st.composite
def _generated(draw: Draw, generator: Callable[..., T], fuzz: Fuzz, *args: Any) -> T:
    return generator(Choices(draw), fuzz, *args)


def fuzz_settings(examples: int) -> settings:
    """The same inputs on every run, nothing written to disk, and a deadline far above any
    sane call, as a guard against hangs (per-call times are measured in bench/bench_fuzz.py)."""
    return settings(max_examples=examples, derandomize=True, database=None, deadline=timedelta(seconds=10),
                    suppress_health_check=list(HealthCheck), print_blob=False)


@lru_cache(maxsize=2)
def fuzz_for(bfcl_dir: str | Path) -> Fuzz:
    return Fuzz(load_corpus(bfcl_dir))


# --------------------------------------------------------------------------- Python


def py_value(r: Choices, f: Fuzz, depth: int = 0) -> str:
    """Python source of an argument value: literals, containers, nested calls, expressions."""
    kind = r.number(0, 12 if depth < 2 else 7)
    if kind == 0:
        return str(r.integer())
    if kind == 1:
        return repr(r.floating())
    if kind == 2:
        return repr(r.pick(f.corpus.strings))
    if kind == 3:
        return repr(r.text())
    if kind == 4:
        return json.dumps(r.text(), ensure_ascii=False)
    if kind in (5, 6):
        return r.pick(PY_EXPRESSIONS + INJECTIONS)
    if kind == 7:
        return r.pick(f.corpus.params)
    items = [py_value(r, f, depth + 1) for _ in range(r.number(0, 3))]
    if kind == 8:
        return "[" + ", ".join(items) + "]"
    if kind == 9:
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if kind == 10:
        return "{" + ", ".join(f"{py_value(r, f, depth + 1)}: {item}" for item in items) + "}"
    if kind == 11:
        return f"{r.pick(f.corpus.names)}({r.pick(f.corpus.params)}={py_value(r, f, depth + 1)})"
    return f"{py_value(r, f, depth + 1)}{r.pick(OPERATORS)}{py_value(r, f, depth + 1)}"


def py_call(r: Choices, f: Fuzz, doc: dict | None = None) -> str:
    """One Python call: a documented name and parameters, or near relatives of them."""
    c = f.corpus
    props = list(doc.get("parameters", {}).get("properties", {})) if doc else []
    if doc and not r.one_in(4):
        name = doc["name"]
    else:
        name = r.pick(r.pick((c.names, c.names, HOSTILE_NAMES, ["a.b", "f", "x[0]", "(f)", "1", "f.__class__"])))
    keys = [props or c.params, props or c.params, c.params, ["class", "lambda", "1a", "__class__", "a-b"]]
    args = []
    for _ in range(r.number(0, 4)):
        value = py_value(r, f)
        args.append(value if r.one_in(8) else f"{r.pick(r.pick(keys))}={value}")
    if r.one_in(10):
        args.append(r.pick(["**kwargs", "*args", "**{'a': 1}"]))
    separator = r.pick([", ", ",", " , ", ",\n"])
    return f"{name}({separator.join(args)})"


def _acceptable(r: Choices, acceptable: Any) -> Any:
    """One of a possible answer's acceptable values (recursing into dicts of them)."""
    if isinstance(acceptable, dict):
        return {k: _acceptable(r, v) for k, v in acceptable.items()}
    if not isinstance(acceptable, list):
        return acceptable
    choices = [v for v in acceptable if v != ""]
    if not choices:
        return ""
    value = r.pick(choices)
    if isinstance(value, dict):
        return _acceptable(r, value)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [_acceptable(r, v) for v in value]
    return value


def answer_calls(r: Choices, task: Task) -> list[tuple[str, dict[str, Any]]]:
    """The task's possible answer as (name, arguments), optional parameters left out at random."""
    calls = []
    for call in task.ground_truth or []:
        name, params = next(iter(call.items()))
        args = {}
        for param, acceptable in params.items():
            optional = isinstance(acceptable, list) and "" in acceptable
            if optional and r.one_in(2):
                continue
            value = _acceptable(r, acceptable)
            if value != "" or not optional:
                args[param] = value
        calls.append((name, args))
    return calls


def python_answer(r: Choices, f: Fuzz, task: Task) -> str:
    """The task's answer in BFCL's Python format, correct or one mistake away, then near misses."""
    docs = {d["name"]: d for d in task.functions}
    parts = []
    for name, args in answer_calls(r, task):
        rendered = [f"{k}={v!r}" for k, v in args.items()]
        change = r.pick(["none"] * 4 + ["value", "drop", "extra", "positional", "name", "call"])
        if change == "value" and rendered:
            i = r.number(0, len(rendered) - 1)
            rendered[i] = rendered[i].split("=", 1)[0] + "=" + py_value(r, f)
        elif change == "drop" and rendered:
            rendered.pop(r.number(0, len(rendered) - 1))
        elif change == "extra":
            rendered.append(f"{r.pick(f.corpus.params)}={py_value(r, f)}")
        elif change == "positional" and rendered:
            rendered[0] = rendered[0].split("=", 1)[1]
        elif change == "name":
            name = r.pick([name.upper(), name.replace(".", "_"), name.split(".")[-1], name + "s", *docs])
        elif change == "call":
            parts.append(py_call(r, f, docs.get(name)))
            continue
        parts.append(f"{name}({', '.join(rendered)})")
    if parts and r.one_in(5):
        parts.insert(r.number(0, len(parts)), py_call(r, f))
    text = ", ".join(parts) if r.one_in(5) else "[" + ", ".join(parts) + "]"
    return wrapped(r, some_edits(r, text), "python")


def python_text(r: Choices, f: Fuzz) -> str:
    """Python calls for any documented function: BFCL's format and its near misses."""
    if not r.one_in(3):
        return python_answer(r, f, r.draw(f.tasks("python")))
    text = "[" + ", ".join(py_call(r, f) for _ in range(r.number(0, 3))) + "]"
    return wrapped(r, near_miss(r, text), "python")


# --------------------------------------------------------------------------- Java and JavaScript


def _properties(task: Task, name: str) -> dict:
    for doc in task.functions:
        if doc["name"] == name:
            return doc.get("parameters", {}).get("properties", {})
    return {}


def source_answer(r: Choices, f: Fuzz, task: Task) -> str:
    """A Java or JavaScript task's answer in BFCL's call syntax, with near misses."""
    java = task.language == "java"
    literal, exotic = (java_literal, JAVA_VALUES) if java else (js_literal, JS_VALUES)
    parts = []
    for name, args in answer_calls(r, task):
        props = _properties(task, name)
        rendered = []
        for key, value in args.items():
            details = props.get(key, {})
            items = details.get("items", {}).get("type") if isinstance(details.get("items"), dict) else None
            if r.one_in(6):
                source = r.pick(exotic) if r.one_in(2) else json.dumps(r.pick(f.corpus.strings))
            else:
                source = literal(value, details.get("type", "any"), items)
            rendered.append(source if r.one_in(16) else f"{key}={source}")
        if r.one_in(7):
            rendered.append(f"{r.pick(f.corpus.params)}={r.pick(exotic)}")
        parts.append(f"{name}({', '.join(rendered)})")
    text = ", ".join(parts) + (";" if java and not r.one_in(5) else "")
    return wrapped(r, some_edits(r, text), task.language)


def source_text(r: Choices, f: Fuzz, language: str) -> str:
    """Java or JavaScript: a task's answer, or a call with any name and exotic values."""
    if not r.one_in(3):
        return source_answer(r, f, r.draw(f.tasks(language)))
    values = JAVA_VALUES if language == "java" else JS_VALUES
    name = r.pick(f.corpus.names) if r.one_in(2) else r.pick(HOSTILE_NAMES + ["obj.m", "a.b.c", "new A"])
    args = []
    for _ in range(r.number(0, 4)):
        value = r.pick(values)
        args.append(value if r.one_in(4) else f"{r.pick(f.corpus.params)}={value}")
    return wrapped(r, near_miss(r, f"{name}({', '.join(args)})"), language)


# --------------------------------------------------------------------------- JSON and <tool_call>


def json_call_object(r: Choices, f: Fuzz) -> Any:
    """One call as a JSON-able object, in any of the shapes ``fcenv.handlers.json_calls`` reads."""
    if r.one_in(2):
        name, args = r.pick(answer_calls(r, r.pick(f.corpus.ast_tasks["python"])) or [("f", {})])
    else:
        name = r.pick(f.corpus.names) if not r.one_in(4) else r.pick([None, r.integer(), r.text()])
        keys = [f.corpus.params, f.corpus.params, [r.text()]]
        args = {r.pick(r.pick(keys)): json_value(r) for _ in range(r.number(0, 4))} if r.number(0, 5) else json_value(r)
    shape = r.pick(["openai", "openai", "bfcl", "bfcl", "string_args", "api", "no_args", "odd"])
    if shape == "openai":
        return {"name": name, "arguments": args}
    if shape == "bfcl":
        return {"function": name, "parameters": args}
    if shape == "string_args":
        return {"name": name, "arguments": near_miss(r, json.dumps(args), max_edits=1)}
    if shape == "api":
        return {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    if shape == "no_args":
        return {"name": name}
    return json_value(r)


def json_text(r: Choices, f: Fuzz) -> str:
    """JSON tool calls (a list, one object, or ``{"tool_calls": [...]}``) with near misses."""
    calls = [json_call_object(r, f) for _ in range(r.pick((1, 1, 2, 3, 0)))]
    form = r.pick(["list", "list", "single", "tool_calls"])
    data: Any = calls[0] if form == "single" and calls else {"tool_calls": calls} if form == "tool_calls" else calls
    text = json.dumps(data, ensure_ascii=r.one_in(2), indent=r.pick([None, None, 2]))
    if r.one_in(10):
        text = text.replace("0", "9" * r.number(1, 5000), 1)  # a huge number
    return wrapped(r, some_edits(r, text), "json")


def tool_call_text(r: Choices, f: Fuzz) -> str:
    """``<tool_call>`` blocks (several, unclosed, nested, with prose between) and near misses."""
    blocks = []
    for _ in range(r.number(1, 3)):
        body = json.dumps(json_call_object(r, f)) if not r.one_in(6) else python_text(r, f)
        closing = r.pick(["</tool_call>"] * 4 + ["", "<tool_call>", "</tool_call"])
        blocks.append(f"<tool_call>\n{body}\n{closing}")
    return wrapped(r, some_edits(r, r.pick(["\n", "", "\nSome prose.\n"]).join(blocks)))


# --------------------------------------------------------------------------- any text, a task's text

def model_text(r: Choices, f: Fuzz) -> str:
    """Any model text: every syntax above, prose, injections and random text or bytes."""
    kind = r.draw(f.text_kinds)
    if kind == "python":
        return python_text(r, f)
    if kind in ("java", "javascript"):
        return source_text(r, f, kind)
    if kind == "json":
        return json_text(r, f)
    if kind == "tool_call":
        return tool_call_text(r, f)
    if kind == "prose":
        return r.pick(PROSE + INJECTIONS)
    return r.draw(random_text)


def task_text(r: Choices, f: Fuzz, task: Task) -> str:
    """Text that answers ``task`` (in its language), mostly near its possible answer."""
    if r.one_in(4):
        return model_text(r, f)
    if task.kind == "ast":
        return python_answer(r, f, task) if task.language == "python" else source_answer(r, f, task)
    if task.functions and not r.one_in(3):
        return wrapped(r, some_edits(r, f"[{py_call(r, f, r.pick(task.functions))}]"))
    return r.pick(PROSE)


def decoded_calls(r: Choices, f: Fuzz, task: Task) -> list[Call] | DecodeError:
    """What a checker may receive for ``task``: a DecodeError, the decoding of fuzzed text, the
    answer's calls (valid, or with one value changed), or calls with arbitrary values."""
    from fcenv.handlers import decode

    how = r.pick(["error", "decoded", "decoded", "answer", "answer", "arbitrary"])
    if how == "error":
        return DecodeError(r.text(), r.pick(["decoder_failed", "decoder_wrong_output_format"]))
    if how == "decoded":
        try:
            return decode(task_text(r, f, task), task.language if task.kind == "ast" else "python")
        except DecodeError as exc:
            return exc
    names = [d["name"] for d in task.functions] or ["f"]
    if how == "answer":
        calls = [Call(name, args) for name, args in answer_calls(r, task)]
        if calls and r.one_in(2):
            i = r.number(0, len(calls) - 1)
            args = dict(calls[i].arguments)
            args[r.pick([*args, "extra"])] = py_object(r, huge=True)
            calls[i] = Call(calls[i].name, args)
        return r.shuffled(calls)
    keys = [f.corpus.params, f.corpus.params, [None, r.text()]]
    return [Call(r.pick(names) if not r.one_in(4) else r.text(),
                 {r.pick(r.pick(keys)): py_object(r, huge=True) for _ in range(r.number(0, 4))})
            for _ in range(r.number(0, 4))]
