"""Building blocks of the fuzz inputs: a vocabulary of near misses and hostile text, and the
per-example source of choices (harness/strategies.py builds the strategies from them).

``Choices`` takes the few choices that shape an example from hypothesis (``draw``) and the many
small ones inside a text (which token, where, how deep) from a ``random.Random`` seeded by
hypothesis: a hypothesis draw costs tens of microseconds and a text takes a hundred choices,
so this keeps generation at a fraction of a millisecond per input. Runs stay reproducible
(``derandomize=True`` fixes the seeds), and a failure prints the text itself.

Injection payloads name ``MARKER`` (a relative path): a fuzz run works in an empty folder,
and finding anything there afterwards means model text ran.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[Any]], Any]

MARKER = "fcenv-fuzz-marker"
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
OPERATORS = ["+", "-", "*", "/", "**", "%", "//", "<<", "|", "==", " and "]


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
HUGE_INT = 1 << 20_000  # too long to print (Python's limit is 4,300 digits)
_SPECIAL_INTS = [0, -1, 1, 2**31, -(2**63), 2**64, 10**30, 10**400, 10**4200]


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
        return HUGE_INT
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
    if how == "deep":  # bounded, so a call stays cheap; tests/handlers/test_handlers_hostile.py goes deeper
        opener = r.pick(list(_DEEP))
        n = r.number(1, 400)
        return opener * n + text + _DEEP[opener] * n
    if how == "chain":  # a long run of one token before the call
        return r.pick(["1+", "-", "not ", "a.", ",", "\n", "```"]) * r.number(1, 300) + text
    return text
