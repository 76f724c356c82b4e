"""Grammar-aware hypothesis strategies: model text that is almost right, and hostile text.

Most inputs start from BFCL's own data, a possible answer or a function doc rendered in the
syntax the decoder expects (Python, Java, JavaScript, JSON, ``<tool_call>`` blocks, or a
multi-turn step built from the backends' docs and the entry's initial config). Then near
misses: a dropped or extra bracket, quote, comma or parenthesis, a cut at any point, a
duplicated span, positional arguments, nested calls, operators, huge numbers, odd Unicode,
code fences, prose around, injection attempts (``__import__``, dunder walks, refused names).
Plain random text and bytes read as text fill the rest, so the decoders also meet
characters no grammar would produce.

Injection payloads name ``MARKER`` (a relative path): a fuzz run works in an empty folder,
and finding anything there afterwards means model text ran.

Generators are plain functions ``gen(r, fuzz, ...)``; ``Fuzz.strategy(gen, ...)`` makes one a
hypothesis strategy. ``r`` (``Choices``) takes the task, the kind of text and the random text
from hypothesis, and the many small choices inside a text (which token, where, how deep)
from a ``random.Random`` seeded by hypothesis: a hypothesis draw costs tens of microseconds,
and a text takes a hundred choices, so this keeps generation at a fraction of a millisecond.
Runs stay reproducible (``derandomize=True`` fixes the seeds); a failure prints the text.
``fuzz_for(bfcl_dir)`` gives the tests and ``bench/bench_fuzz.py`` the same strategies.
"""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from fcenv.data import load_tasks
from fcenv.tasks import Task
from handlers.base import Call, DecodeError
from tests.generators import java_literal, js_literal
from tests.trajectories import keyword_call

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[Any]], Any]

MARKER = "fcenv-fuzz-marker"
AST_CATEGORIES = {
    "python": ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
               "live_parallel", "live_parallel_multiple"),
    "java": ("simple_java",),
    "javascript": ("simple_javascript",),
}
RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")
MULTI_TURN_CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")

PROSE = ["I have completed the request.", "Sure! Here you go:", "I cannot help with that.", "", " ", "\n", "Done.",
         "None of the functions can be used.", "[]", "()", "Let me think step by step.", "null", "{}",
         "The question lacks the required parameters.", "<think>calling ls</think>"]
_TOUCH = f"__import__('os').system('touch {MARKER}')"
# Payloads that would leave MARKER behind (or worse) if anything evaluated them.
INJECTIONS = [
    _TOUCH, f"open('{MARKER}', 'w')", f"exec(\"open('{MARKER}', 'w')\")", f"eval(\"{_TOUCH}\")",
    "().__class__.__bases__[0].__subclasses__()", "''.__class__.__mro__[1].__subclasses__()[0]",
    "[c for c in ().__class__.__base__.__subclasses__()]", f"(lambda: {_TOUCH})()", f"f'{{{_TOUCH}}}'",
    f"__builtins__.__dict__['eval']('{_TOUCH}')", "globals()['__builtins__']", "getattr(x, '__globals__')",
    "breakpoint()", "input()", "exit()", "quit()", "import os", "os.system('true')", "ls.__globals__",
    f"{{}}.get('x', {_TOUCH})", "type('X', (), {})", "vars()", "__import__('sys').exit(1)",
]
HOSTILE_NAMES = ["__import__", "eval", "exec", "open", "exit", "quit", "kill", "remove", "unlink", "run", "popen",
                 "Popen", "os.system", "os.remove", "subprocess.run", "sys.exit", "getattr", "setattr", "print",
                 "len", "globals", "_load_scenario", "__init__", "__class__", "__getattribute__", "__del__",
                 "ls.__globals__", "cd.__func__", "self.cd", "GorillaFileSystem.ls", "type", "compile"]
# Python expressions that BFCL's decoder evaluates, prints or refuses.
PY_EXPRESSIONS = [
    "1+2", "2**10", "3*'ab'", "-5", "+3", "~1", "not True", "-'x'", "1e308*10", "10**400", "9**9**9", "'a'*10**9",
    "[1]*10**9", "1/0", "1//0", "1%0", "2**-1", "(-8)**0.5", "1<<100000", "0.1+0.2", "'%s' % 1", "'a'+'b'",
    "[1]+[2]", "(1,)+(2,)", "{1: 2}|{3: 4}", "1@2", "1e999-1e999", "(1,)", "()", "{}", "set()", "{1, 2}", "x",
    "math.pi", "x[0]", "x[1:2]", "x[1, 2]", "(a+b)[0]", "f()", "g(1, 2)", "h(a=1)", "h(**k)", "lambda: 0",
    "[i for i in range(10)]", "(i for i in x)", "{**a}", "*a", "a if b else c", "a and b", "x == 1", "1 < 2 < 3",
    "(x := 1)", "...", "0x1F", "0o17", "0b101", "1_000", "1j", "3.14e-10", ".5", "5.", "'\\x00'", "'\\ud800'",
    "'\\N{BULLET}'", "b'\\xff'", "r'\\d+'", "f'{1+1}'", "'''a\nb'''", "True", "False", "None", "nan", "inf",
    "float('nan')", "[[[[]]]]", "{'a': {'b': {'c': []}}}", "{(1, 2): 3}", "{[1]: 2}", "{None: 1}", "'\\'", "u'x'",
]
JAVA_VALUES = [
    "42", "-7", "5L", "2.5f", "3.14", "1e10", "0x1F", "1_000", "'c'", "'\\n'", "\"text\"", "\"\\u0041\"", "true",
    "false", "null", "String.class", "obj.getValue()", "new Date()", "Math.PI", "x -> x + 1", "(int) 3.5",
    "a ? b : c", "1 + 2", "new int[]{1, 2}", "new int[3]", "new String[]{\"a\"}", "List.of(1, 2)", "\"a\" + \"b\"",
    "new ArrayList<>(Arrays.asList(1, 2))", "new HashMap<String, Object>() {{ put(\"a\", 1); }}", "new A(new B())",
    "this", "super.x", "x[0]", "x++", "~x", "!flag", "/* c */ 1", "new Object() { }", "Integer.MAX_VALUE",
    "\"unterminated", "'ab'", "new int[][]{{1}, {2}}", "Map.of(\"k\", 1)", "(a, b) -> a", "System.exit(0)",
    f"Runtime.getRuntime().exec(\"touch {MARKER}\")",
]
JS_VALUES = [
    "42", "-7", "10n", "3.14", "1e21", "0xff", "'s'", "\"s\"", "`t ${x}`", "`a\nb`", "true", "false", "null",
    "undefined", "NaN", "Infinity", "[1, 2]", "{a: 1, 'b': [2]}", "{}", "[]", "{x}", "() => 1", "(a, b) => a",
    "function() {}", "new Date()", "x.y", "f(1)", "a ?? b", "a?.b", "/re+/g", "...rest", "await x", "typeof x",
    "!x", "x = 1", "a = b = 2", "import.meta", "// comment", "/* c */ 1", "\"a\" + \"b\"", "new Map([[1, 2]])",
    f"require('child_process').execSync('touch {MARKER}')", "eval('1')", "'unterminated", "class {}",
]
# Tokens a near miss inserts: syntax, lookalikes, invisible and unpaired characters.
NEAR_MISS_TOKENS = [
    "[", "]", "(", ")", "{", "}", ",", "'", '"', "=", ":", ".", " ", "\n", "\\", "#", "`", "```", "*", "**",
    ";", "\x00", "\u200b", "\u202e", "\ufeff", "\uff08", "\uff09", "\u201c", "\u201d", "\ud800", "\udfff",
    "lambda ", "__", "...", "//", "/*", "*/", "<", ">", "@", "-", "+", "\t", "\r", "=>", "->", "new ", "None",
    "<tool_call>", "</tool_call>", "\u00e9", "\u4e2d", "\U0001f642", "\u0301",
]
ODD_CHARS = "\x00\x01\x7f\u200b\u200d\u202e\u2028\u2029\ufeff\ufffd\ud800\udbff\udc00\udfff\u0301\u4e2d\U0001f642\U0010ffff"
SYNTAX_SOUP = "[](){},'\"=:. \n\\#`*;_abfxyz0123456789-+<>/@!?%&|^~$"
_EDITS = ["delete", "insert", "insert", "truncate", "duplicate", "swap", "quotes", "unbracket", "replace"]
_WRAPS = ["plain"] * 14 + ["fence", "tagged_fence", "prose_before", "prose_after", "padded", "think", "twice",
                          "quoted", "deep", "chain"]
_DEEP = {"[": "]", "(": ")", "{": "}", "f(": ")", "[f(a=": ")]"}
_KINDS = ["python"] * 4 + ["java", "javascript", "json", "json", "tool_call", "tool_call", "prose", "random"]
_OPERATORS = ["+", "-", "*", "/", "**", "%", "//", "<<", "|", "==", " and "]


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


# --------------------------------------------------------------------------- choices

random_text = st.one_of(
    st.text(max_size=200),
    st.text(st.characters(exclude_categories=()), max_size=80),
    st.text(st.sampled_from(SYNTAX_SOUP), max_size=120),
    st.binary(max_size=200).map(lambda b: b.decode("utf-8", "surrogateescape")),
    st.binary(max_size=120).map(lambda b: b.decode("latin-1")),
)
_SEED = st.integers(0, (1 << 64) - 1)
_ALPHABETS = ["abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789_-./:", ODD_CHARS, SYNTAX_SOUP, "\u00e9\u00df\u03bb\u4e2d\u6587\U0001f642\u00f1\u00fc"]
_SPECIAL_FLOATS = [0.0, -0.0, 0.5, 1e308, -1e308, 5e-324, 1e16, float("inf"), float("-inf"), float("nan")]
_HUGE_INT = 1 << 20_000
_SPECIAL_INTS = [0, -1, 1, 2**31, -(2**63), 2**64, 10**30, 10**400]


class Choices:
    """One example's source of choices: hypothesis for the few that shape it, a seeded
    ``random.Random`` for the many small ones."""

    def __init__(self, draw: Draw):
        self.draw = draw
        self.rng = random.Random(draw(_SEED))

    def number(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def pick(self, items: Sequence[T]) -> T:
        return items[self.rng.randrange(len(items))]

    def one_in(self, n: int) -> bool:
        return self.rng.randrange(n) == 0

    def shuffled(self, items: list[T]) -> list[T]:
        items = list(items)
        self.rng.shuffle(items)
        return items

    def text(self, max_size: int = 16) -> str:
        """A short string: plain, odd Unicode (surrogates, NUL, invisible marks), or any code point."""
        size = self.number(0, max_size)
        if self.one_in(4):
            return "".join(chr(self.number(0, 0x10FFFF)) for _ in range(size))
        alphabet = self.pick(_ALPHABETS)
        return "".join(self.pick(alphabet) for _ in range(size))

    def integer(self) -> int:
        return self.pick([self.number(-10, 100), self.number(-(10**40), 10**40), self.pick(_SPECIAL_INTS)])

    def floating(self) -> float:
        if self.one_in(3):
            return self.pick(_SPECIAL_FLOATS)
        if self.one_in(2):
            return struct.unpack("<d", self.rng.getrandbits(64).to_bytes(8, "little"))[0]
        return round(self.rng.uniform(-1e6, 1e6), self.number(0, 6))


def json_value(r: Choices, depth: int = 0) -> Any:
    kind = r.number(0, 6 if depth < 2 else 4)
    if kind <= 4:
        return [None, r.one_in(2), r.integer(), r.floating(), r.text()][kind]
    children = [json_value(r, depth + 1) for _ in range(r.number(0, 3))]
    return children if kind == 5 else {r.text(): child for child in children}


def py_object(r: Choices, depth: int = 0, huge: bool = False) -> Any:
    """A value a decoder can hand a checker: constants (complex, bytes, nan too), containers,
    tuples; with ``huge``, sometimes an int too long to print (over Python's 4,300 digits)."""
    kind = r.number(0, 10 if depth < 2 else 7)
    if huge and r.one_in(20):
        return _HUGE_INT
    if kind <= 7:
        return [None, r.one_in(2), r.integer(), r.floating(), complex(r.floating(), 1), r.text(),
                r.text().encode("utf-8", "surrogatepass"), "..."][kind]
    children = [py_object(r, depth + 1, huge) for _ in range(r.number(0, 3))]
    if kind == 8:
        return children
    if kind == 9:
        return tuple(children)
    return {r.pick([None, r.integer(), r.text()]): child for child in children}


def near_miss(r: Choices, text: str, max_edits: int = 3) -> str:
    """``text`` after up to ``max_edits`` small syntax-level edits."""
    for _ in range(r.number(0, max_edits)):
        i = r.number(0, len(text))
        edit = r.pick(_EDITS)
        if edit == "delete":
            text = text[:i] + text[i + 1:]
        elif edit == "insert":
            text = text[:i] + r.pick(NEAR_MISS_TOKENS) + text[i:]
        elif edit == "truncate":
            text = text[:i]
        elif edit == "duplicate":
            j = r.number(i, min(len(text), i + 40))
            text = text[:j] + text[i:j] + text[j:]
        elif edit == "swap" and i + 1 < len(text):
            text = text[:i] + text[i + 1] + text[i] + text[i + 2:]
        elif edit == "quotes":
            text = text.replace("'", '"') if r.one_in(2) else text.replace('"', "'")
        elif edit == "unbracket":
            text = text.strip().removeprefix("[").removesuffix("]")
        elif edit == "replace" and i < len(text):
            text = text[:i] + r.pick(NEAR_MISS_TOKENS + list(ODD_CHARS)) + text[i + 1:]
    return text


def some_edits(r: Choices, text: str) -> str:
    """Mostly untouched (so valid answers stay common), sometimes a few near-miss edits."""
    return near_miss(r, text, max_edits=r.pick((0, 0, 1, 3)))


def wrapped(r: Choices, text: str, language: str = "python") -> str:
    """``text`` as a model might present it: fenced, in prose, padded, repeated, deeply nested."""
    how = r.pick(_WRAPS)
    if how == "fence":
        return f"```\n{text}\n```"
    if how == "tagged_fence":
        return f"```{r.pick([language, 'json', 'tool_code', ''])}\n{text}\n```"
    if how == "prose_before":
        return f"{r.pick(PROSE)}\n{text}"
    if how == "prose_after":
        return f"{text}\n{r.pick(PROSE)}"
    if how == "padded":
        return r.pick([" ", "\n", "\t", "  \n"]) + text + r.pick([" ", "\n", ""])
    if how == "think":
        return f"<think>{r.text()}</think>\n{text}"
    if how == "twice":
        return f"{text}\n{text}"
    if how == "quoted":
        return f"'{text}'"
    if how == "deep":  # bounded, so a call stays cheap; tests/test_handlers_hostile.py goes deeper
        opener = r.pick(list(_DEEP))
        n = r.number(1, 400)
        return opener * n + text + _DEEP[opener] * n
    if how == "chain":  # a long run of one token before the call
        return r.pick(["1+", "-", "not ", "a.", ",", "\n", "```"]) * r.number(1, 300) + text
    return text


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
    return f"{py_value(r, f, depth + 1)}{r.pick(_OPERATORS)}{py_value(r, f, depth + 1)}"


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
    """One call as a JSON-able object, in any of the shapes ``handlers.json_calls`` reads."""
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
    from handlers import decode

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


# --------------------------------------------------------------------------- multi-turn steps


def _typed_value(r: Choices, details: dict, strings: Sequence[str], numbers: Sequence[Any]) -> Any:
    """A value for a backend parameter: of its documented type (mostly), from the scenario."""
    kind = details.get("type")
    if r.one_in(6):
        return py_object(r) if r.one_in(2) else r.pick(strings)
    if kind == "string":
        return r.pick(strings) if not r.one_in(4) else r.text()
    if kind == "integer":
        ints = [n for n in numbers if isinstance(n, int)] or [0]
        return r.pick(ints) if r.one_in(2) else r.integer()
    if kind in ("float", "number"):
        return r.pick(numbers) if r.one_in(2) else r.floating()
    if kind == "boolean":
        return r.one_in(2)
    if kind in ("array", "tuple"):
        items = details["items"] if isinstance(details.get("items"), dict) else {"type": "string"}
        return [_typed_value(r, items, strings, numbers) for _ in range(r.number(0, 3))]
    if kind == "dict":
        return {r.pick(strings): r.pick(strings) for _ in range(r.number(0, 3))}
    return py_object(r)


def tool_call(r: Choices, f: Fuzz, task: Task) -> str:
    """One backend call of a multi-turn task: a documented name, typed values from its scenario."""
    if r.one_in(10):
        args = ", ".join(f"a={r.pick(INJECTIONS)}" for _ in range(r.number(0, 2)))
        return f"{r.pick(HOSTILE_NAMES)}({args})"
    doc = r.pick(list(task.functions) + [d for ds in task.missed_functions.values() for d in ds])
    strings = f.corpus.scenario_strings.get(task.id, ("a",))
    numbers = f.corpus.scenario_numbers.get(task.id, (0,))
    params = doc.get("parameters", {})
    props, required = params.get("properties", {}), set(params.get("required", []))
    rendered = [f"{k}={_typed_value(r, props[k], strings, numbers)!r}" for k in sorted(props)
                if (k in required and not r.one_in(10)) or r.one_in(3)]
    if r.one_in(8):
        rendered.append(f"{r.pick(f.corpus.params)}={py_value(r, f)}")
    return f"{doc['name']}({', '.join(rendered)})"


def step_text(r: Choices, f: Fuzz, task: Task) -> str:
    """One multi-turn step: ground-truth calls, typed backend calls, prose, or near misses."""
    how = r.pick(["truth", "truth", "calls", "calls", "prose", "mutated", "other"])
    if how == "prose":
        return r.pick(PROSE)
    if how == "other":
        return model_text(r, f)
    if how == "truth":
        texts = [c for turn in task.ground_truth for c in turn] or ["ls()"]
        calls = [keyword_call(r.pick(texts), task.involved_classes) for _ in range(r.number(1, 3))]
    else:
        calls = [tool_call(r, f, task) for _ in range(r.number(1, 3))]
    text = "[" + ", ".join(calls) + "]"
    if how == "mutated":
        text = near_miss(r, text)
    return wrapped(r, text) if r.one_in(5) else text


def multi_turn_result(r: Choices, f: Fuzz, task: Task) -> list[list[list[Call] | DecodeError]]:
    """A recorded trajectory as ``check_multi_turn`` takes it: decoded steps per turn, sometimes
    with a turn too many or too few."""
    from fcenv.multi_turn.executor import decode_step

    def step() -> list[Call] | DecodeError:
        how = r.number(0, 9)
        if how == 0:
            return DecodeError("no call")
        if how == 1:  # calls as a caller other than the env might build them: any values
            doc = r.pick(task.functions)
            params = list(doc.get("parameters", {}).get("properties", {})) or ["a"]
            name = doc["name"] if not r.one_in(10) else r.pick(HOSTILE_NAMES)
            return [Call(name, {r.pick(params): py_object(r, huge=True) for _ in range(r.number(0, 2))})]
        return decode_step(step_text(r, f, task))

    turns = len(task.ground_truth) + r.pick([0, 0, 0, 0, -1, 1])
    return [[step() for _ in range(r.number(0, 3))] for _ in range(max(turns, 0))]
