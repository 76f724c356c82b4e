"""Our Python decoder against BFCL's on thousands of generated texts (op "decode_exact").

Texts come from BFCL's own possible answers (every Python AST category, live included),
rendered as a model would write them, then mutated: formatting (brackets, fences, spaces,
newlines, quotes, comments), prose around the calls, positional and duplicate arguments,
nested calls, operator expressions, unary quirks, tuples, and a pool of exotic or hostile-ish
syntax. Agreement means: same success or failure, same failure kind
(``decoder_failed`` / ``decoder_wrong_output_format``) and the same decoded value with types,
tuples and key order. The helpers here are shared with test_handlers_parity_java_js.py.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import handlers
from handlers.base import DecodeError
from tests.oracle.typed import typed

pytestmark = pytest.mark.oracle

PYTHON_CATEGORIES = (
    "simple_python", "multiple", "parallel", "parallel_multiple",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
)
SEED = 20260323


# ---- comparing with the reference ---------------------------------------------------------


def our_answer(text: str, language: str) -> dict[str, Any]:
    """Our decoder's result in the shape of the driver's ``decode_exact`` answer."""
    try:
        calls = handlers.decode(text, language)
    except DecodeError as exc:
        return {"ok": False, "kind": exc.kind}
    return {"ok": True, "kind": None, "decoded": typed([call.to_bfcl() for call in calls])}


def disagreements(oracle, texts: list[str], language: str) -> list[tuple[str, dict, dict]]:
    """Texts on which our decoder and BFCL's differ (one oracle batch for all of them)."""
    theirs = oracle.run([{"op": "decode_exact", "text": t, "language": language} for t in texts])
    found = []
    for text, reference in zip(texts, theirs):
        reference = {k: reference[k] for k in ("ok", "kind", "decoded") if k in reference}
        ours = our_answer(text, language)
        if ours != reference:
            found.append((text, ours, reference))
    return found


def report(found: list[tuple[str, dict, dict]], total: int) -> str:
    lines = [f"{len(found)} of {total} texts decode differently:"]
    for text, ours, reference in found[:15]:
        lines.append(f"  {text[:160]!r}\n    ours: {str(ours)[:200]}\n    BFCL: {str(reference)[:200]}")
    return "\n".join(lines)


def load_answers(bfcl_dir: Path, category: str) -> list[dict[str, Any]]:
    path = Path(bfcl_dir) / "possible_answer" / f"BFCL_v4_{category}.json"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def choose(acceptable: list[Any], rng: random.Random) -> Any:
    """One acceptable value of a possible answer, with acceptable values picked inside dicts."""
    choices = [value for value in acceptable if value != ""] or [""]
    value = rng.choice(choices)
    if isinstance(value, dict):
        return {k: choose(v, rng) if isinstance(v, list) else v for k, v in value.items()}
    if isinstance(value, list):
        return [choose([v], rng) if isinstance(v, dict) else v for v in value]
    return value


def answer_calls(ground_truth: list[dict], rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for call in ground_truth:
        for name, params in call.items():
            arguments = {}
            for param, acceptable in params.items():
                if not isinstance(acceptable, list) or ("" in acceptable and rng.random() < 0.3):
                    continue
                arguments[param] = choose(acceptable, rng)
            calls.append((name, arguments))
    return calls


# ---- rendering Python ----------------------------------------------------------------------


def py_string(value: str, rng: random.Random) -> str:
    style = rng.random()
    if style < 0.5:
        return repr(value)
    if style < 0.85:
        return json.dumps(value, ensure_ascii=rng.random() < 0.3)  # JSON escapes are Python's
    if "'''" not in value and not value.endswith("'") and "\\" not in value:
        return "'''" + value + "'''"
    return repr(value)


def py_value(value: Any, rng: random.Random) -> str:
    if isinstance(value, str):
        return py_string(value, rng)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return rng.choice([str(value), str(value), f"{value:_}" if abs(value) > 9999 else str(value)])
    if isinstance(value, float):
        return rng.choice([repr(value), repr(value), f"{value:e}" if value else "0.0"])
    if isinstance(value, list):
        items = [py_value(v, rng) for v in value]
        if rng.random() < 0.15:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + rng.choice([", ", ",", " , "]).join(items) + "]"
    if isinstance(value, dict):
        pairs = [f"{py_value(k, rng)}: {py_value(v, rng)}" for k, v in value.items()]
        return "{" + ", ".join(pairs) + "}"
    return repr(value)


def py_call(name: str, arguments: dict[str, str], rng: random.Random) -> str:
    equals = rng.choice(["=", "=", "=", " = "])
    return f"{name}(" + rng.choice([", ", ","]).join(f"{k}{equals}{v}" for k, v in arguments.items()) + ")"


# Values a model may write that are not plain literals; BFCL's verdict on each differs.
EXOTIC_VALUES = [
    "+5", "-5", "not True", "~1", "--1", "-x", "-(1)", "-(1+2)", "-None", "-'a'", "-1j", "-...",
    "3+4", "2**10", "2**-1", "7//2", "7%3", "-7%3", "1<<3", "5&3", "5^3", "5|3", "1/0", "2@3",
    "'a'+'b'", "'ab'*3", "[1]+[2]", "[1]*3", "(1,)+(2,)", "{'a': 1}|{'b': 2}", "{1}|{2}",
    "True+True", "None+1", "1+x", "(1<2)+1", "[1,2][0]+1", "(1 if 0 else 2)+0", "(0 and 1/0)+1",
    "'%s-%d' % ('a', 3)", "'%5s|' % 'x'", "b'%s' % b'x'", "'abc'[::-1]+''", "1e308*10",
    "2.0**10000", "(-8)**0.5", "0**-1", "...+1", "[...]+[]", "[*'ab']+[]", "{**{'a': 1}}|{}",
    "g(1)", "g(b=1)", "g(1, b=2)", "mod.g(x='y')", "g(h(b=1))", "g(**k)", "g(*a)", "a.b(x=1).c(y=2)",
    "x[0]", "x['k']", "g(1)[0]", "x[1:2]", "[1,2][0]", "g(lambda: 1)", "g(f'{x}')", "x[1, 2]", "(a+b)[0]",
    "x[1:2, 3]", "(-x)[0]", "x[*a]", "x[:, 1]", "g(1)[2, 3]", "x[1, 2][3, 4]", "(lambda: 1)[0]", "x[(1,)]",
    "x", "None", "True", "...", "b'x'", "1j", "0x1F", "1_000", "'a' 'b'", "r'\\d'", "'\\x00'",
    "1e309", "-1e309", "(1, 2)", "()", "(1,)", "[]", "{}", "{1: 2}", "{(1, 2): 3}", "{x: 1}",
    "{1: 'a', True: 'b'}", "{[1]: 2}", "{g(b=1): 1}", "{**d}", "[*x]", "(*x,)", "{1, 2}",
    "lambda x: x", "[x for x in y]", "{k: v for k, v in y}", "f'x{y}'", "a.b", "g(1).h",
    "1<2", "True and False", "x if y else z", "(x:=1)", "await x", "not x", "'''a\nb'''",
    "[[[[[[[[[[1]]]]]]]]]]", "+".join(["1"] * 120), "9" * 4000, "0x" + "f" * 20000 + "+1",
    "'é' + 'ü'", "'\\N{BULLET}'", "\"it's\"", "'say \"hi\"'",
]


def mutate(calls: list[tuple[str, dict[str, str]]], rng: random.Random) -> str:
    """One model-like text for rendered calls, with a random formatting or content twist."""
    calls = [(name, dict(arguments)) for name, arguments in calls]
    twist = rng.randrange(18)
    if twist == 0 and calls and calls[0][1]:  # a positional argument
        name, arguments = calls[0]
        key = next(iter(arguments))
        value = arguments.pop(key)
        body = py_call(name, arguments, rng)
        calls_text = [body[:len(name) + 1] + value + (", " if arguments else "") + body[len(name) + 1:]]
        calls_text += [py_call(n, a, rng) for n, a in calls[1:]]
    else:
        if twist in (1, 2, 3) and calls:  # an exotic value in place of a real one
            name, arguments = rng.choice(calls)
            key = rng.choice(list(arguments) or ["extra"])
            arguments[key] = rng.choice(EXOTIC_VALUES)
        if twist == 4 and calls and calls[0][1]:  # a duplicated keyword
            name, arguments = calls[0]
            key = next(iter(arguments))
            calls[0] = (name, {**arguments, "__dup__": arguments[key]})
        if twist == 5 and calls:  # a second copy of a call, or a dotted name
            calls.append(calls[0] if rng.random() < 0.5 else ("pkg.mod." + calls[0][0], calls[0][1]))
        calls_text = [py_call(name, arguments, rng) for name, arguments in calls]
        if twist == 4 and "__dup__" in calls[0][1]:
            calls_text = [text.replace("__dup__", next(iter(calls[0][1])), 1) for text in calls_text]
    separator = rng.choice([", ", ",", ",\n", ", \n  ", " ,"])
    body = separator.join(calls_text)
    wrapped = "[" + body + "]"
    if twist == 6:
        wrapped = body  # no brackets
    elif twist == 7:
        wrapped = rng.choice(["```\n{}\n```", "```python\n{}\n```", "`{}`", "``{}``", "```{}```"]).format(wrapped)
    elif twist == 8:
        wrapped = rng.choice(["  {}  ", "\n\n{}\n", "\t{}", "{}\r\n", " \n{} \n ", "{}\n\n\n"]).format(wrapped)
    elif twist == 9:
        wrapped = rng.choice(["Sure! {}", "{} Done.", "Answer:\n{}", "{}\nI called it.", "'{}'"]).format(wrapped)
    elif twist == 10:
        wrapped = rng.choice(["{}  # the calls", "# plan\n{}", "{}\n# end"]).format(wrapped)
    elif twist == 11 and len(calls_text) > 1:
        wrapped = rng.choice(["\n", "; ", "\n\n"]).join(calls_text)
    elif twist == 12:
        wrapped = "(" + body + ")" if rng.random() < 0.5 else "[" + body + ",]"
    elif twist == 13:
        wrapped = rng.choice(["[{}]", "[[{}]]", "[{}], []", "[{}] + []", "{}()"]).format(body)
    return wrapped


def python_texts(bfcl_dir: Path) -> list[str]:
    rng = random.Random(SEED)
    texts: list[str] = []
    for category in PYTHON_CATEGORIES:
        for entry in load_answers(bfcl_dir, category):
            calls = answer_calls(entry["ground_truth"], rng)
            for _ in range(3):
                rendered = [(name, {k: py_value(v, rng) for k, v in args.items()}) for name, args in calls]
                texts.append(mutate(rendered, rng))
    for value in EXOTIC_VALUES:  # each exotic value once, in the simplest setting
        texts.append(f"[f(a={value})]")
    return texts


# ---- random operator expressions (what BFCL hands to eval) ---------------------------------

OPERANDS = [
    "0", "1", "2", "3", "-1", "7", "255", "10**3", "2**64", "0.5", "1.5", "-2.25", "1e300", "1e-300", "0.0", "3j",
    "True", "False", "None", "...", "'ab'", "'%s'", "'%d%%'", "''", "b'xy'", "[1, 2]", "[]", "(1,)", "()",
    "{'a': 1}", "{}", "{1, 2}", "[[1], [2]]", "'é'", '"q"', "1_0", "0x10", "0o7", "0b11", "[1, 'a', None]",
    "(1, (2, 3))", "{'k': [1]}", "'%(k)s'", "'abc'",
]
BINARY = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "@"]


def random_expression(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(OPERANDS)
    sub = lambda: random_expression(rng, depth - 1)  # noqa: E731
    kind = rng.random()
    if kind < 0.5:
        return f"({sub()} {rng.choice(BINARY)} {sub()})"
    if kind < 0.6:
        return f"({rng.choice(['-', '+', '~', 'not '])}{sub()})"
    if kind < 0.7:
        return f"({sub()} {rng.choice(['<', '<=', '>', '>=', '==', '!=', 'in', 'not in'])} {sub()})"
    if kind < 0.77:
        return f"({sub()} {rng.choice(['and', 'or'])} {sub()})"
    if kind < 0.83:
        return f"({sub()} if {sub()} else {sub()})"
    if kind < 0.9:
        return f"[{sub()}, {sub()}][{rng.choice(['0', '1', '-1', '0:1', '::-1', '5'])}]"
    if kind < 0.95:
        return f"[*{sub()}]"
    return f"{{{sub()}: {sub()}}}"


def arithmetic_texts(count: int) -> list[str]:
    """Operator expressions over literals, minus those our bounds refuse (BFCL would compute
    them, some for hours: ``1000 ** 2**64``)."""
    rng = random.Random(SEED + 1)
    texts = []
    while len(texts) < count:
        expression = random_expression(rng, rng.randrange(1, 5))
        text = f"[f(a={expression} {rng.choice(BINARY)} {random_expression(rng, 1)})]"
        try:
            handlers.decode(text, "python")
        except DecodeError as exc:
            if "too large" in str(exc) or "too costly" in str(exc):
                continue
        texts.append(text)
    return texts


def test_python_decoder_matches_bfcl(oracle, bfcl_dir):
    # No exclusions: the generators avoid the documented divergences (operator expressions
    # holding calls, names, lambdas, comprehensions or f-strings, and results beyond
    # handlers/bounded_eval.py's bounds), which test_handlers.py pins down instead.
    texts = python_texts(bfcl_dir) + arithmetic_texts(3000)
    assert len(texts) >= 8000
    found = disagreements(oracle, texts, "python")
    assert not found, report(found, len(texts))
